/* No contact between shaped bodies gains energy (000 2.4: a passive contact law only stores or
 * dissipates; 004 4.8: the contact force acts through the penetration it measures). For every
 * shape pair the collision manager supports (bodies: sphere, capsule, box, hull; obstacles:
 * plane, box, mesh; every body-body and body-obstacle combination), every contact model and
 * both integrator families (RK4 and BDF), a seeded random pose, spin and sliding velocity bring
 * the two together; the total energy (kinetic + potential + elastic, the friction spring
 * included) is sampled at every output step and may never rise by more than the integrator's
 * local error over a step.
 *
 * The error bound, relative to the run's initial energy: BDF at rtol 1e-9, and RK4 at
 * omega dt <= 0.1 on a law smooth in g and dg/dt (spring/damper, Hunt-Crossley), change a
 * passive system's energy by far less than PASSIVITY_TOLERANCE per output step. A fixed RK4
 * step across a point where the force law is not smooth is first-order there: the turning
 * point of the bilinear and internal-friction laws (a jump or a kink at dg/dt = 0, not located
 * as an event) and Hertz's onset (g^1.5: infinite curvature at g = 0). Its energy error is
 * about the slope change times (v dt)^2, below KINK_TOLERANCE for these draws (measured
 * worst: 9e-5, C0 internal friction). main's formulation gained 1e-3 to 0.15 in one step. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/engine_diagnostics.h"
#include "issim/io.h"
#include "testutil.h"

#define PASSIVITY_TOLERANCE 1e-6
#define KINK_TOLERANCE 2e-4
#define OUTPUT_STEP 5e-4
#define OUTPUT_STEPS 300

enum { SPHERE, CAPSULE, BOX, HULL, BODY_SHAPES };
enum { PLANE = BODY_SHAPES, OBSTACLE_BOX, MESH, SHAPE_COUNT };

static const char *const shape_names[SHAPE_COUNT] = {"sphere", "capsule",      "box", "hull",
                                                     "plane",  "box obstacle", "mesh"};

/* A body of the pile's sizes (scenes/pile.lua) as a Lua table constructor; its bounding
 * radius in *reach. The octahedron asset has circumradius 0.05 m. */
static void body_source(int shape, const char *name, Vec3 pos, Quat q, Vec3 v, Vec3 w,
                        const char *material, char *out, size_t size, double *reach) {
    const double m = 0.1, i = 2e-5;
    char geometry[160];
    switch (shape) {
    case SPHERE:
        snprintf(geometry, sizeof geometry, "shape = \"sphere\", radius = 0.025");
        *reach = 0.025;
        break;
    case CAPSULE:
        snprintf(geometry, sizeof geometry,
                 "shape = \"capsule\", radius = 0.015, half_length = 0.025");
        *reach = 0.04;
        break;
    case BOX:
        snprintf(geometry, sizeof geometry, "shape = \"box\", half_extents = {0.025, 0.02, 0.015}");
        *reach = sqrt(0.025 * 0.025 + 0.02 * 0.02 + 0.015 * 0.015);
        break;
    default:
        snprintf(geometry, sizeof geometry,
                 "shape = \"hull\", hull_file = \"assets/octahedron.obj\"");
        *reach = 0.05;
        break;
    }
    snprintf(out, size,
             "{ name = \"%s\", kind = \"body\", %s, mass = %g, inertia = {%g, %g, %g},"
             " pos = {%.17g, %.17g, %.17g}, orient = {%.17g, %.17g, %.17g, %.17g},"
             " vel = {%.17g, %.17g, %.17g}, angvel = {%.17g, %.17g, %.17g},"
             " material = \"%s\" },\n",
             name, geometry, m, i, i, i, pos.x, pos.y, pos.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z,
             w.x, w.y, w.z, material);
}

/* The static partner: its top at z = 0, centred on the origin. */
static void obstacle_source(int shape, char *out, size_t size) {
    if (shape == PLANE)
        snprintf(out, size,
                 "{ name = \"b\", kind = \"obstacle\", shape = \"plane\", normal = {0, 0, 1},"
                 " offset = 0, material = \"b\" },\n");
    else if (shape == OBSTACLE_BOX)
        snprintf(out, size,
                 "{ name = \"b\", kind = \"obstacle\", shape = \"box\", half_extents = {0.1, 0.1, "
                 "0.02}, pos = {0, 0, -0.02}, material = \"b\" },\n");
    else
        snprintf(out, size,
                 "{ name = \"b\", kind = \"obstacle\", shape = \"mesh\","
                 " mesh_file = \"assets/plate_chamfered_hole.obj\", pos = {0.05, 0.05, 0},"
                 " material = \"b\" },\n");
}

static Vec3 random_vec(TestRng *rng, double scale) {
    return vec3(test_rng_range(rng, -scale, scale), test_rng_range(rng, -scale, scale),
                test_rng_range(rng, -scale, scale));
}

/* The bilinear laws (000 2.4.2, Fig. 2.2) and C1 internal friction (004 eq. 4.83) switch
 * between a loading and an unloading force at dg/dt = 0: resting under gravity the force
 * chatters there, and BDF's Newton iteration cannot step across it (CVODE makes no progress;
 * the switch is not located as an event). Under BDF they are thrown without gravity (an
 * impact, not a resting run); RK4 rests them. */
static bool jumps_at_rest(ContactModelKind model) {
    return model == CONTACT_MODEL_BILINEAR || model == CONTACT_MODEL_BILINEAR_ORIGIN ||
           model == CONTACT_MODEL_INTERNAL_FRICTION;
}

/* One draw: A above B (a body at the origin, or an obstacle whose top is z = 0), just clear
 * of it, moving down onto it with a random slide and spin; gravity only with an obstacle, so
 * the body comes to rest on it. */
static char *scene_source(TestRng *rng, int shape_a, int shape_b, ContactModelKind model,
                          bool bdf) {
    static char src[8192];
    char a[1024], b[1024];
    double reach_a, reach_b = 0.0;
    bool obstacle = shape_b >= BODY_SHAPES;
    if (obstacle)
        obstacle_source(shape_b, b, sizeof b);
    else
        body_source(shape_b, "b", vec3(0, 0, 0), test_rng_rotation(rng), random_vec(rng, 0.05),
                    random_vec(rng, 3.0), "b", b, sizeof b, &reach_b);
    Vec3 pos = vec3(test_rng_range(rng, -0.01, 0.01), test_rng_range(rng, -0.01, 0.01), 0.0);
    Vec3 vel = vec3(test_rng_range(rng, -0.2, 0.2), test_rng_range(rng, -0.2, 0.2),
                    -test_rng_range(rng, 0.1, 0.5));
    body_source(shape_a, "a", pos, test_rng_rotation(rng), vel, random_vec(rng, 10.0), "a", a,
                sizeof a, &reach_a);
    /* the bounding spheres 1 mm apart: A's true lowest point is somewhere above that */
    char *at = strstr(a, "pos = {");
    char shifted[1024];
    snprintf(shifted, sizeof shifted, "%.*spos = {%.17g, %.17g, %.17g%s", (int)(at - a), a, pos.x,
             pos.y, reach_a + reach_b + 1e-3, strchr(at, '}'));
    double r = test_rng_range(rng, 0.3, 0.95);
    double mu = test_rng_uniform(rng) < 0.5 ? test_rng_range(rng, 0.1, 0.8) : 0.0;
    snprintf(src, sizeof src,
             "return { name = \"passivity\", universe = { gravity = {0, 0, %g},"
             " integrator = \"%s\", dt = %g, rtol = 1e-9, atol = 1e-12 },\n"
             "things = {\n%s%s},\n"
             "contacts = { { name = \"ab\", materials = {\"a\", \"b\"}, model = \"%s\","
             " stiffness = %.6g, restitution = %.6g, tilt = %.6g, youngs_modulus_a = 1e7,"
             " youngs_modulus_b = 1e7, radius_a = 0.02, friction_static = %.6g,"
             " friction_kinetic = %.6g, tangent_stiffness = 1e4, tangent_damping = 1 } } }\n",
             obstacle && !(bdf && jumps_at_rest(model)) ? -9.81 : 0.0, bdf ? "bdf" : "rk4",
             bdf ? 1e-3 : 1e-4, shifted, b, contact_model_class(model)->name,
             pow(10.0, test_rng_range(rng, 3.5, 4.5)), r, 0.5 * r * r, mu, 0.8 * mu);
    return src;
}

/* How far the deepest depth a model is given may lie from the deepest overlap measured from the
 * poses (engine_penetration; these draws reach 1 to 6 mm): the anchors of a manifold contact ride
 * on the bodies between collision updates, so a pair with a round core (its anchor is the core)
 * stays within a few um; two polytopes' clipped points drift from the signed MTD as the pair
 * turns (measured up to 78 um, hull on hull), and a polytope whose manifold on a triangle mesh
 * changes while it barely moves keeps a depth offset its motion could not pay for up to
 * ENGINE_HEAL_TIME (measured: hull 80 um, box 2.4 um on the plate's flat top). A capsule on the
 * mesh is held by its axis's two end points per face (mesh_collide.c capsule_face_points): the
 * interior points where its axis crossed the fan's edges came and went at full depth, and left
 * offsets of 274 um (docs/contact-models.md, "Energy at contact changes"). */
static double depth_tolerance(int shape_a, int shape_b) {
    bool round = shape_a == SPHERE || shape_a == CAPSULE || shape_b == SPHERE ||
                 shape_b == CAPSULE || shape_b == PLANE;
    return round ? 1e-5 : 1e-4;
}

typedef struct Outcome {
    double e0, worst_rise, worst_t;
    int contacts;
    /* The depth the models were given against the overlap from the poses (engine_penetration),
     * largest difference over the output steps, and the largest depth offset, m. */
    double depth_error, offset, pose_depth;
} Outcome;

static void on_event(const EngineEvent *ev, void *user) {
    if (ev->kind == ENGINE_EVENT_CONTACT_BEGIN)
        ((Outcome *)user)->contacts++;
}

/* Runs that stalled at a law's jump under BDF (jumps_at_rest: the engine's progress guard stops
 * them with its message, the energy checked up to there). The jump located as an event is the
 * fix (issue 11, item 4, open); until then they are counted, not hidden. */
static int stalled_runs;

static Outcome run_draw(const char *src, bool bdf, bool may_stall) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string("passivity", src, strlen(src), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s\n%s", err.message, src);
    EngineOptions o = engine_options_default();
    o.asset_dir = test_source_path(".");
    Engine *e = engine_create(db, &o, &err);
    if (!e)
        fail_msg("%s", err.message);
    Outcome out = {.e0 = engine_energy(e).total, .worst_rise = -INFINITY};
    engine_set_event_callback(e, on_event, &out);
    double before = out.e0;
    for (int i = 1; i <= OUTPUT_STEPS; i++) {
        if (engine_advance(e, i * OUTPUT_STEP, &err) != ISSIM_OK) {
            if (may_stall && strstr(err.message, "makes no progress")) {
                stalled_runs++;
                break;
            }
            fail_msg("%s\n%s", err.message, src);
        }
        EnginePenetration p = engine_penetration(e);
        /* and per pair: the poses' overlap no deeper than the pair's deepest model depth */
        out.depth_error = fmax(out.depth_error, fabs(p.model_depth - p.pose_depth));
        out.depth_error = fmax(out.depth_error, p.hidden_depth);
        out.offset = fmax(out.offset, p.largest_offset);
        out.pose_depth = fmax(out.pose_depth, p.pose_depth);
        double now = engine_energy(e).total;
        if (now - before > out.worst_rise) {
            out.worst_rise = now - before;
            out.worst_t = i * OUTPUT_STEP;
        }
        before = now;
    }
    engine_destroy(e);
    thingdb_destroy(db);
    return out;
}

static void test_no_shape_pair_gains_energy(void **state) {
    (void)state;
    int failures = 0, runs = 0;
    for (int sa = 0; sa < BODY_SHAPES; sa++) {
        for (int sb = sa; sb < SHAPE_COUNT; sb++) {
            double worst = 0.0, depth_error = 0.0, offset = 0.0, pose = 0.0;
            for (int m = 0; m < CONTACT_MODEL_COUNT; m++) {
                for (int integrator = 0; integrator < 2; integrator++) {
                    bool bdf = integrator == 1;
                    /* A generator per case: a model added later changes no other case's draw. */
                    TestRng rng = {
                        .s = 20261123u +
                             7919u *
                                 (uint64_t)(((sa * SHAPE_COUNT + sb) * CONTACT_MODEL_MAX + m) * 2 +
                                            integrator)};
                    const char *src = scene_source(&rng, sa, sb, (ContactModelKind)m, bdf);
                    Outcome out = run_draw(src, bdf, bdf && jumps_at_rest((ContactModelKind)m));
                    runs++;
                    if (out.depth_error > depth_tolerance(sa, sb)) {
                        failures++;
                        print_message("%s on %s, %s, %s: the models' depth %.3g um from the "
                                      "poses' (tolerance %.3g um)\n",
                                      shape_names[sa], shape_names[sb],
                                      contact_model_class((ContactModelKind)m)->name,
                                      bdf ? "bdf" : "rk4", 1e6 * out.depth_error,
                                      1e6 * depth_tolerance(sa, sb));
                    }
                    depth_error = fmax(depth_error, out.depth_error);
                    offset = fmax(offset, out.offset);
                    pose = fmax(pose, out.pose_depth);
                    double rise = out.worst_rise / out.e0;
                    worst = fmax(worst, rise);
                    bool kink = !bdf && m != CONTACT_MODEL_SPRING_DAMPER &&
                                m != CONTACT_MODEL_HUNT_CROSSLEY;
                    if (rise > (kink ? KINK_TOLERANCE : PASSIVITY_TOLERANCE)) {
                        failures++;
                        print_message("%s on %s, %s, %s: energy rose by %.3g of %.4g J in one "
                                      "step (t = %.4f s, %d contacts)\n",
                                      shape_names[sa], shape_names[sb],
                                      contact_model_class((ContactModelKind)m)->name,
                                      bdf ? "bdf" : "rk4", out.worst_rise, out.e0, out.worst_t,
                                      out.contacts);
                    }
                }
            }
            printf("%s on %s: largest rise per step %.3g of the initial energy; depths %.3g um "
                   "from the poses at most, the models' %.3g um from them, offsets %.3g um\n",
                   shape_names[sa], shape_names[sb], worst, 1e6 * pose, 1e6 * depth_error,
                   1e6 * offset);
        }
    }
    printf("%d of %d runs stalled at a law's jump under BDF (bilinear, internal friction: the "
           "progress guard's error; issue 11 item 4)\n",
           stalled_runs, runs);
    if (failures > 0)
        fail_msg("%d of %d runs gained energy", failures, runs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_shape_pair_gains_energy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
