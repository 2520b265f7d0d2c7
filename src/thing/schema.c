/* The standard property schema of each thing kind (docs/scene-format.md lists the same tables).
 *
 * Mutability follows 000 B.3.3: the laws of physics and everything the engine compiles into its
 * model at (re)start (integrator, tolerances, planar mode, geometry, materials) are fixed during
 * a run; state (positions, velocities), loads, masses and display settings are live.
 */
#include "thing_internal.h"

#include "issim/surface.h"

#include <string.h>

#define REAL(x)                                                                                    \
    { .type = PROP_REAL, .real = (x) }
#define BOOLV(b)                                                                                   \
    { .type = PROP_BOOL, .boolean = (b) }
#define ENUMV(i)                                                                                   \
    { .type = PROP_ENUM, .integer = (i) }
#define STR(s)                                                                                     \
    { .type = PROP_STRING, .string = s }
#define VEC(x, y, z)                                                                               \
    {                                                                                              \
        .type = PROP_VEC3, .vec = {(x), (y), (z) }                                                 \
    }

#define SURFACE_PROPS(frame)                                                                       \
    {.name = "surface_points",                                                                     \
     .type = PROP_POINTS,                                                                          \
     .unit = "m",                                                                                  \
     .description = "smooth: the 16 control points of a bicubic Bezier patch, P_ij at 4 i + j "    \
                    "(i along s), in the " frame " (002 App. B.1)",                                \
     .min = -1e3,                                                                                  \
     .max = 1e3,                                                                                   \
     .mutability = PROP_FIXED_DURING_RUN,                                                          \
     .default_value = {.type = PROP_POINTS}},                                                      \
        {.name = "surface_file",                                                                   \
         .type = PROP_STRING,                                                                      \
         .unit = "",                                                                               \
         .description = "smooth: a Loop subdivision surface, Wavefront .obj control mesh (002 "    \
                        "App. B.2; path as for hull_file); used when surface_points is empty",     \
         .mutability = PROP_FIXED_DURING_RUN,                                                      \
         .default_value = {.type = PROP_STRING}},                                                  \
        {.name = "surface_scale",                                                                  \
         .type = PROP_VEC3,                                                                        \
         .unit = "",                                                                               \
         .description = "smooth: each control point p becomes scale * p + offset",                 \
         .min = -1e3,                                                                              \
         .max = 1e3,                                                                               \
         .mutability = PROP_FIXED_DURING_RUN,                                                      \
         .default_value = VEC(1, 1, 1)},                                                           \
        {.name = "surface_offset",                                                                 \
         .type = PROP_VEC3,                                                                        \
         .unit = "m",                                                                              \
         .description = "smooth: added to every scaled control point (the " frame " origin)",      \
         .min = -1e3,                                                                              \
         .max = 1e3,                                                                               \
         .mutability = PROP_FIXED_DURING_RUN,                                                      \
         .default_value = VEC(0, 0, 0)},                                                           \
        {.name = "surface_levels",                                                                 \
         .type = PROP_INT,                                                                         \
         .unit = "",                                                                               \
         .description = "smooth: Loop subdivision steps before evaluation (extraordinary "         \
                        "vertices isolated, 002 5.2)",                                             \
         .min = 0,                                                                                 \
         .max = 6,                                                                                 \
         .mutability = PROP_FIXED_DURING_RUN,                                                      \
         .default_value = {.type = PROP_INT, .integer = 2}},                                       \
    {                                                                                              \
        .name = "surface_extraordinary", .type = PROP_ENUM, .unit = "",                            \
        .description = "smooth: a Loop surface at its extraordinary vertices: exact (Stam's "      \
                       "evaluation, C2 up to the vertex) or spatch (002 5.2's S-patches)",         \
        .mutability = PROP_FIXED_DURING_RUN, .enum_names = surface_extraordinary_names,            \
        .enum_count = SURFACE_EXTRAORDINARY_COUNT,                                                 \
        .default_value = ENUMV(SURFACE_EXTRAORDINARY_EXACT)                                        \
    }

static const PropDef universe_props[] = {
    {.name = "gravity",
     .type = PROP_VEC3,
     .unit = "m/s^2",
     .description = "gravitational acceleration, world frame",
     .min = -1e4,
     .max = 1e4,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, -9.81)},
    {.name = "planar",
     .type = PROP_BOOL,
     .unit = "",
     .description = "constrain every body to the x-z plane: translation in x and z, rotation "
                    "about y",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = BOOLV(false)},
    {.name = "integrator",
     .type = PROP_ENUM,
     .unit = "",
     .description = "time integrator: CVODE BDF (stiff), CVODE Adams (non-stiff) or fixed-step "
                    "RK4",
     .mutability = PROP_FIXED_DURING_RUN,
     .enum_names = integrator_names,
     .enum_count = INTEGRATOR_COUNT,
     .default_value = ENUMV(INTEGRATOR_BDF)},
    {.name = "dt",
     .type = PROP_REAL,
     .unit = "s",
     .description = "output interval for CVODE, step for RK4",
     .min = 1e-9, /* a nanosecond: below it a run simulates nothing in any wall time */
     .max = 1,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = REAL(1e-3)},
    {.name = "rtol",
     .type = PROP_REAL,
     .unit = "",
     .description = "CVODE relative tolerance",
     .min = 1e-14, /* below double rounding the integrator only fails */
     .max = 1e-2,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = REAL(1e-8)},
    {.name = "atol",
     .type = PROP_REAL,
     .unit = "",
     .description = "CVODE absolute tolerance on every state component",
     .min = 1e-20,
     .max = 1,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = REAL(1e-10)},
    {.name = "max_step",
     .type = PROP_REAL,
     .unit = "s",
     .description = "CVODE maximum internal step; 0 = dt",
     .min = 0,
     .max = 1,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = REAL(0)},
    {.name = "sleep",
     .type = PROP_ENUM,
     .unit = "",
     .description = "when a body at rest leaves the integration: equilibrium (every contact's "
                    "model reports it, 004 4.8.5; a spring/damper never does), still (also on "
                    "force laws without an equilibrium test, once slower than 1 mm/s for 20 "
                    "ms), never",
     .mutability = PROP_LIVE,
     .enum_names = sleep_policy_names,
     .enum_count = SLEEP_POLICY_COUNT,
     .default_value = ENUMV(SLEEP_POLICY_EQUILIBRIUM)},
    {.name = "collision_coherence",
     .type = PROP_REAL,
     .unit = "m",
     .description = "temporal coherence of the collision world: a pair that moved less than this "
                    "since its last full narrow test keeps its contacts, refreshed from "
                    "body-fixed anchors (each depth within twice this of a full test's); 0 = "
                    "every moving pair tested in full; below the 1 mm contact margin",
     .min = 0,
     .max = 5e-4,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = REAL(1e-4)},
    {.name = "collision_thread",
     .type = PROP_ENUM,
     .unit = "",
     .description = "where an interactive run updates its collision world: on (the collision "
                    "manager's own thread, overlapping the engine's step), off (the engine's "
                    "thread, as headless runs: deterministic, and faster where the hand-over "
                    "costs more than the update), auto (on from 64 bodies with shapes)",
     .mutability = PROP_FIXED_DURING_RUN,
     .enum_names = collision_thread_names,
     .enum_count = COLLISION_THREAD_COUNT,
     .default_value = ENUMV(COLLISION_THREAD_AUTO)},
    {.name = "horizon",
     .type = PROP_REAL,
     .unit = "s",
     .description = "how far the interactive engine runs ahead of wall time",
     .min = 0,
     .max = 10,
     .mutability = PROP_LIVE,
     .default_value = REAL(0.25)},
    {.name = "playback_speed",
     .type = PROP_REAL,
     .unit = "",
     .description = "the GUI's speed factor when the scene opens: simulated seconds shown per "
                    "wall second (0.01 shows a 10 ms impact in 1 s)",
     .min = 0.001,
     .max = 10,
     .mutability = PROP_LIVE,
     .default_value = REAL(1)},
    {.name = "slow_motion",
     .type = PROP_REAL,
     .unit = "",
     .description = "simulated seconds shown per wall second within slow_motion_window of an "
                    "impact (a contact beginning at over 1 cm/s), when slower than the speed "
                    "factor; 0: off",
     .min = 0,
     .max = 1,
     .mutability = PROP_LIVE,
     .default_value = REAL(0)},
    {.name = "slow_motion_window",
     .type = PROP_REAL,
     .unit = "s",
     .description = "how long before and after an impact the GUI shows slow motion",
     .min = 0,
     .max = 1,
     .mutability = PROP_LIVE,
     .default_value = REAL(0.002)},
    {.name = "history",
     .type = PROP_REAL,
     .unit = "s",
     .description =
         "length of the trajectory history kept in the registry (at most 32 MiB of frames)",
     .min = 0,
     .max = 3600,
     .min_exclusive = true,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = REAL(20)},
    {.name = "record",
     .type = PROP_STRING,
     .unit = "",
     .description = "comma-separated variables recorded by default, e.g. bar.pos.z,bar.vel.z",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("")},
    {.name = "camera_eye",
     .type = PROP_VEC3,
     .unit = "m",
     .description = "initial camera position, world frame",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = VEC(1.5, -2.5, 1.2)},
    {.name = "camera_target",
     .type = PROP_VEC3,
     .unit = "m",
     .description = "point the initial camera looks at, world frame",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0.2)},
    {.name = "camera_fov",
     .type = PROP_REAL,
     .unit = "deg",
     .description = "vertical field of view of the camera",
     .min = 5,
     .max = 170,
     .mutability = PROP_LIVE,
     .default_value = REAL(45)},
    {.name = "camera_up",
     .type = PROP_VEC3,
     .unit = "",
     .description = "world direction the display draws upward (a scene with tilted gravity "
                    "gives minus its gravity, so its floor is drawn tilted); scaled to unit "
                    "length; {0, 0, 0}, or looking along it, draws world z up",
     .min = -1,
     .max = 1,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 1)},
    {.name = "camera_follow",
     .type = PROP_STRING,
     .unit = "",
     .description = "body the display's camera follows from the start (\"\": none); the user "
                    "can stop or change it (Follow in the view bar)",
     .mutability = PROP_LIVE,
     .default_value = STR("")},
    {.name = "plots",
     .type = PROP_STRING,
     .unit = "",
     .description = "the GUI's plots (\"\": its defaults): plots separated by ';', series by "
                    "',', '@' before a plot's first series: the others against it",
     .mutability = PROP_LIVE,
     .default_value = STR("")},
    {.name = "show_contacts",
     .type = PROP_BOOL,
     .unit = "",
     .description = "the GUI's contact points (Contacts in the view bar) on when the scene "
                    "opens",
     .mutability = PROP_LIVE,
     .default_value = BOOLV(false)},
    {.name = "show_forces",
     .type = PROP_BOOL,
     .unit = "",
     .description = "the GUI's contact force arrows (Forces in the view bar) on when the scene "
                    "opens",
     .mutability = PROP_LIVE,
     .default_value = BOOLV(false)},
    {.name = "plot_window",
     .type = PROP_REAL,
     .unit = "s",
     .description = "the GUI plots' time window when the scene opens",
     .min = 0.01,
     .max = 20,
     .mutability = PROP_LIVE,
     .default_value = REAL(5)},
    {.name = "scene_name",
     .type = PROP_STRING,
     .unit = "",
     .description = "name of the scene (the scene file's top-level name)",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("")},
    {.name = "description",
     .type = PROP_STRING,
     .unit = "",
     .description = "one-paragraph description of the scene (top-level description)",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("")},
};

static const PropDef body_props[] = {
    {.name = "mass",
     .type = PROP_REAL,
     .unit = "kg",
     .description = "mass of the body",
     .min = 1e-9, /* a microgram: lighter bodies made CVODE fail at their first contact */
     .max = 1e9,
     .mutability = PROP_LIVE,
     .default_value = REAL(1)},
    {.name = "inertia",
     .type = PROP_VEC3,
     .unit = "kg m^2",
     .description = "principal moments of inertia about the centre of mass, body frame",
     .min = 1e-15, /* a microgram at a millimetre */
     .max = 1e9,
     .mutability = PROP_LIVE,
     .default_value = VEC(0.01, 0.01, 0.01)},
    {.name = "pos",
     .type = PROP_VEC3,
     .unit = "m",
     .description = "position of the centre of mass, world frame",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0)},
    {.name = "orient",
     .type = PROP_QUAT,
     .unit = "",
     .description = "orientation quaternion {w, x, y, z} mapping body to world; normalised",
     .mutability = PROP_LIVE,
     .default_value = {.type = PROP_QUAT, .vec = {1, 0, 0, 0}}},
    {.name = "vel",
     .type = PROP_VEC3,
     .unit = "m/s",
     .description = "velocity of the centre of mass, world frame",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0)},
    {.name = "angvel",
     .type = PROP_VEC3,
     .unit = "rad/s",
     .description = "angular velocity, world frame",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0)},
    {.name = "material",
     .type = PROP_STRING,
     .unit = "",
     .description = "material name; contact pairs choose the contact model by material",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("default")},
    {.name = "vertices",
     .type = PROP_POINTS,
     .unit = "m",
     .description = "contact vertices in the body frame; each is a sphere centre of radius "
                    "`radius`",
     .min = -1e3,
     .max = 1e3,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = {.type = PROP_POINTS, .point_count = 1, .points = {{0, 0, 0}}}},
    {.name = "radius",
     .type = PROP_REAL,
     .unit = "m",
     .description =
         "radius of the sphere around every contact vertex (0: points); sphere and capsule radius",
     .min = 0,
     .max = 1e3,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = REAL(0)},
    {.name = "shape",
     .type = PROP_ENUM,
     .unit = "",
     .description = "collision geometry: contact vertices (`vertices`, `radius`) against "
                    "obstacles, or a shape the collision manager tests against everything",
     .mutability = PROP_FIXED_DURING_RUN,
     .enum_names = body_shape_names,
     .enum_count = BODY_SHAPE_COUNT,
     .default_value = ENUMV(BODY_SHAPE_POINTS)},
    {.name = "half_extents",
     .type = PROP_VEC3,
     .unit = "m",
     .description = "box: half of the side lengths along the body axes",
     .min = 0,
     .max = 1e3,
     .min_exclusive = true,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = VEC(0.05, 0.05, 0.05)},
    {.name = "display_box",
     .type = PROP_VEC3,
     .unit = "m",
     .description = "points: also draw a box of these half extents standing on the lowest "
                    "contact vertex (body z), for a body that is one contact point (the "
                    "quasi_static_cycle block); {0, 0, 0}: none; drawing only",
     .min = 0,
     .max = 1e3,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = VEC(0, 0, 0)},
    {.name = "label",
     .type = PROP_STRING,
     .unit = "",
     .description = "text the GUI's 3D view shows beside the body (e.g. which resolver moves "
                    "it); \"\": none; drawing only",
     .mutability = PROP_LIVE,
     .default_value = STR("")},
    {.name = "display_seat",
     .type = PROP_VEC3,
     .unit = "m",
     .description = "points: draw the body as a chair: a seat of these half extents at body "
                    "z = 0 over the middle of the contact vertices, a leg down to every vertex "
                    "and a backrest on the seat's edge nearest the centre of mass; {0, 0, 0}: "
                    "none; drawing only",
     .min = 0,
     .max = 1e3,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = VEC(0, 0, 0)},
    {.name = "half_length",
     .type = PROP_REAL,
     .unit = "m",
     .description = "capsule: half the length of its axis segment (body z); the seeds' bar is a "
                    "capsule",
     .min = 0,
     .max = 1e3,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = REAL(0.05)},
    {.name = "hull_file",
     .type = PROP_STRING,
     .unit = "",
     .description = "hull: Wavefront .obj whose vertices' convex hull is the shape (path "
                    "relative to the working directory)",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("")},
    {.name = "contact_map",
     .type = PROP_STRING,
     .unit = "",
     .description = "contact-response map for the contact_map model: a .map file "
                    "(docs/contact-map-format.md; path as for hull_file), \"flat K [period T]\" "
                    "or \"transient K PEAK DECAY [period T] [samples N]\" (N/m, N/m, s); empty: "
                    "none (a flat map of the pair's stiffness)",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("")},
    SURFACE_PROPS("body frame, centre of mass at the origin"),
    {.name = "polygon",
     .type = PROP_POINTS,
     .unit = "m",
     .description = "polygon: convex outline in the body's x-z plane (planar scenes)",
     .min = -1e3,
     .max = 1e3,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value =
         {.type = PROP_POINTS,
          .point_count = 4,
          .points = {{-0.05, 0, -0.05}, {0.05, 0, -0.05}, {0.05, 0, 0.05}, {-0.05, 0, 0.05}}}},
    {.name = "color",
     .type = PROP_VEC3,
     .unit = "",
     .description = "display colour {r, g, b}",
     .min = 0,
     .max = 1,
     .mutability = PROP_LIVE,
     .default_value = VEC(0.85, 0.55, 0.25)},
    {.name = "force",
     .type = PROP_VEC3,
     .unit = "N",
     .description = "external force applied at the centre of mass, world frame",
     .min = -1e9,
     .max = 1e9,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0)},
    {.name = "torque",
     .type = PROP_VEC3,
     .unit = "N m",
     .description = "external torque about the centre of mass, world frame",
     .min = -1e9,
     .max = 1e9,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0)},
    {.name = "force_cycle",
     .type = PROP_VEC3,
     .unit = "N",
     .description = "peak of a load cycle at the centre of mass, world frame: force_cycle (1 - "
                    "cos(2 pi t / force_cycle_period)) / 2 added to `force` at every step (004 "
                    "4.6.2's quasi-static cycle)",
     .min = -1e9,
     .max = 1e9,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0)},
    {.name = "force_cycle_period",
     .type = PROP_REAL,
     .unit = "s",
     .description = "period of the load cycle (simulated time t from 0); 0: no cycle; a body "
                    "under a cycle never sleeps",
     .min = 0,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = REAL(0)},
};

static const PropDef obstacle_props[] = {
    {.name = "shape",
     .type = PROP_ENUM,
     .unit = "",
     .description = "geometry of the obstacle",
     .mutability = PROP_FIXED_DURING_RUN,
     .enum_names = obstacle_shape_names,
     .enum_count = OBSTACLE_SHAPE_COUNT,
     .default_value = ENUMV(OBSTACLE_SHAPE_PLANE)},
    {.name = "normal",
     .type = PROP_VEC3,
     .unit = "",
     .description = "outward normal of the plane (normalised by the engine; not zero)",
     .min = -1e3,
     .max = 1e3,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 1)},
    {.name = "offset",
     .type = PROP_REAL,
     .unit = "m",
     .description = "plane offset along the normal: points x with n.x = offset lie on it",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = REAL(0)},
    {.name = "pos",
     .type = PROP_VEC3,
     .unit = "m",
     .description = "box, mesh: position of the obstacle's frame, world",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = VEC(0, 0, 0)},
    {.name = "orient",
     .type = PROP_QUAT,
     .unit = "",
     .description = "box, mesh: orientation quaternion {w, x, y, z} of the obstacle's frame",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = {.type = PROP_QUAT, .vec = {1, 0, 0, 0}}},
    {.name = "half_extents",
     .type = PROP_VEC3,
     .unit = "m",
     .description = "box: half of the side lengths along the obstacle's axes",
     .min = 0,
     .max = 1e6,
     .min_exclusive = true,
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = VEC(0.5, 0.5, 0.5)},
    SURFACE_PROPS("obstacle's frame"),
    {.name = "mesh_file",
     .type = PROP_STRING,
     .unit = "",
     .description = "mesh: Wavefront .obj triangle mesh in the obstacle's frame (path relative "
                    "to the working directory)",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("")},
    {.name = "material",
     .type = PROP_STRING,
     .unit = "",
     .description = "material name; contact pairs choose the contact model by material",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("default")},
    {.name = "color",
     .type = PROP_VEC3,
     .unit = "",
     .description = "display colour {r, g, b}",
     .min = 0,
     .max = 1,
     .mutability = PROP_LIVE,
     .default_value = VEC(0.6, 0.6, 0.6)},
};

static const PropDef user_props[] = {
    {.name = "pos",
     .type = PROP_VEC3,
     .unit = "m",
     .description = "position of the user's handle, world frame",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0)},
    {.name = "vel",
     .type = PROP_VEC3,
     .unit = "m/s",
     .description = "velocity of the user's handle, world frame",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0)},
    {.name = "force",
     .type = PROP_VEC3,
     .unit = "N",
     .description = "force the user applies through the handle, world frame",
     .min = -1e6,
     .max = 1e6,
     .mutability = PROP_LIVE,
     .default_value = VEC(0, 0, 0)},
};

static const PropDef contact_pair_props[] = {
    {.name = "material_a",
     .type = PROP_STRING,
     .unit = "",
     .description = "first material of the pair",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("default")},
    {.name = "material_b",
     .type = PROP_STRING,
     .unit = "",
     .description = "second material of the pair (may equal the first)",
     .mutability = PROP_FIXED_DURING_RUN,
     .default_value = STR("default")},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const PropDef *thing_kind_props(ThingKind kind, int *count) {
    switch (kind) {
    case THING_UNIVERSE:
        *count = COUNT(universe_props);
        return universe_props;
    case THING_RIGID_BODY:
        *count = COUNT(body_props);
        return body_props;
    case THING_FIXED_OBSTACLE:
        *count = COUNT(obstacle_props);
        return obstacle_props;
    case THING_USER:
        *count = COUNT(user_props);
        return user_props;
    case THING_CONTACT_PAIR:
        *count = COUNT(contact_pair_props);
        return contact_pair_props;
    case THING_GROUP:
    case THING_KIND_COUNT:
        break;
    }
    *count = 0;
    return NULL;
}
