/* Private engine structures shared by engine.c (build, variables, edits), engine_dynamics.c
 * (right-hand side, contacts, energy), engine_cvode.c, engine_rk4.c and engine_system.c. */
#ifndef ISSIM_ENGINE_INTERNAL_H
#define ISSIM_ENGINE_INTERNAL_H

#include "issim/collision.h"
#include "issim/engine.h"

typedef enum BlockKind {
    BLOCK_FREE_BODY,   /* 13: p(3) q(4) v(3) w(3) */
    BLOCK_PLANAR_BODY, /* 6: x z theta vx vz omega; theta about +y */
} BlockKind;

enum { FREE_BODY_SIZE = 13, PLANAR_BODY_SIZE = 6 };

typedef struct StateBlock {
    BlockKind kind;
    int offset; /* into the state vector */
    int size;
    int body;
} StateBlock;

typedef struct EngineBody {
    ThingId thing;
    char name[64];
    double mass;
    Vec3 inertia;       /* principal moments, body frame */
    Vec3 force, torque; /* external, world (the body's properties) */
    /* Transient wrench from outside the thing database (GUI drag spring, haptic coupling):
     * world frame, torque about the centre of mass; not saved with the scene. */
    Vec3 applied_force, applied_torque;
    int material;
    int vertex_count;
    Vec3 vertices[PROP_MAX_POINTS];
    double radius;
    int block;
    int velocity_offset;
    bool shaped;        /* has a collision shape (else: contact vertices against planes) */
    Shape shape;        /* body frame, centre of mass at the origin */
    Hull *hull;         /* owned, for shape = hull */
    int world_index;    /* in the collision world, or -1 */
    double reach;       /* farthest vertex or shape point from the centre of mass, m (sleep test) */
    bool asleep;        /* in equilibrium: frozen, not integrated (engine_sleep.c) */
    double sleep_t;     /* when it entered equilibrium */
    double still_since; /* since when it has been a sleep candidate, or -1 */
} EngineBody;

typedef struct EngineObstacle {
    ThingId thing;
    Vec3 normal; /* unit (planes) */
    double offset;
    int material;
    Shape shape; /* plane, box or mesh, in the obstacle's frame */
    Pose pose;
    TriMesh *mesh;   /* owned, for shape = mesh */
    int world_index; /* in the collision world, or -1 */
} EngineObstacle;

typedef struct EnginePair {
    ThingId thing;
    int material_a, material_b;
    ContactParams params;
    const ContactModelClass *model;
} EnginePair;

typedef enum EngineContactKind {
    CONTACT_VERTEX_PLANE, /* a body vertex (sphere centre) against an obstacle plane */
    CONTACT_MANIFOLD,     /* a manifold point from the collision world */
} EngineContactKind;

/* One potential contact. Vertex-plane contacts exist for the whole run (every vertex of every
 * "points" body against every plane); manifold contacts come and go with the collision
 * world's updates. Either way the depth is a smooth function of the state between updates and
 * a root function, so onset and separation inside a step are located by the integrator.
 *
 * A manifold contact keeps its two surface points in the bodies' frames and the normal in B's
 * frame (world for a static B), as found by the last collision update; between updates the
 * depth follows the bodies' motion: depth = (p_b - p_a) . n. */
typedef struct EngineContact {
    EngineContactKind kind;
    int body, vertex, obstacle, pair;
    int body_b;                /* manifold: the second body, or -1 when B is static (obstacle) */
    Vec3 local_a;              /* manifold: point on A, A's frame */
    Vec3 local_b;              /* manifold: point on B, B's frame (world when static) */
    Vec3 normal_b;             /* manifold: normal from B to A, B's frame (world when static) */
    Vec3 source_point;         /* manifold: the world point_a the anchors were made from */
    double radius_a, radius_b; /* manifold: round shapes (spheres, capsules) anchor their point
                                  at the core (centre or axis) and reach out by the radius */
    uint32_t collision_id;     /* manifold: the collision world's contact id */
    bool active;
    bool equilibrium; /* the model reported equilibrium and it still holds */
    double load;      /* manifold: App. C constraint force holding it still, N (engine_sleep.c) */
    double load_lo, load_hi; /* manifold: the model's restitution and compression forces, N */
    uint32_t id;             /* issued at onset, persistent while active */
    double t_begin;
    ContactHistory history;
    /* The pair's parameters for this contact (damping derived with this body's mass). */
    ContactParams params;
} EngineContact;

typedef struct Integrator Integrator;

struct Engine {
    ThingDb *db;
    EngineOptions options;
    IntegratorKind integrator_kind;
    double dt, rtol, atol, max_step;
    bool planar;
    Vec3 gravity;

    int body_count;
    EngineBody *bodies;
    int obstacle_count;
    EngineObstacle *obstacles;
    int pair_count;
    EnginePair *pairs;
    int contact_count; /* vertex-plane contacts first, then manifold contacts */
    int vertex_contact_count;
    int contact_capacity;
    EngineContact *contacts;
    CollisionWorld *collision;    /* NULL when no body has a shape; owned by `manager` */
    CollisionManager *manager;    /* runs the world: synchronously, or on its own thread */
    Registry *collision_registry; /* non-NULL while the manager thread runs: its pose source */
    double *collision_frame;      /* registry frame buffer of the manager thread */
    uint64_t reports_used, reports_stale, report_waits;
    double report_t; /* state time of the newest collision report merged (-inf before any) */
    int *event_dirs; /* RK4: located crossing per contact, all zero between events */
    int event_dirs_capacity;
    int *world_owner;        /* world index -> body index (>= 0) or -(obstacle + 1) */
    EngineContact *previous; /* scratch for matching manifold contacts across updates */
    bool *previous_kept;
    int *previous_index; /* open addressing by collision id, previous_slots entries */
    int previous_capacity, previous_slots;
    char (*materials)[PROP_STRING_MAX];
    int material_count;

    int block_count;
    StateBlock *blocks;
    int state_size;
    int velocity_dim;
    /* Sleeping (engine_sleep.c). awake_bodies lists the integrated bodies; live_contacts the
     * contacts that touch an awake body (the only ones whose depth or force can change);
     * awake_ranges the state-vector spans of the awake blocks, merged, as (offset, size) pairs.
     * Rebuilt by engine_refresh_awake whenever sleep_dirty is set. */
    double sleep_speed;
    bool sleep_disabled;
    bool sleep_dirty;
    int awake_count;
    int *awake_bodies;
    int live_contact_count; /* live_contacts has room for contact_capacity */
    int *live_contacts;
    int awake_range_count;
    int *awake_ranges;
    int awake_state_size; /* sum of the awake ranges */
    bool collision_stale; /* bodies moved since the last collision update */
    int *sleep_scratch;   /* 3 * (body_count + 1): union-find, verdicts / wakers, wake stack */
    Vec3 *load_acc;       /* 2 * body_count: accelerations of the App. C load solve */
    double *sleep_speeds; /* body_count: speed under which each body counts as still */

    double t;
    double *y;       /* state at t */
    double *y_saved; /* state before the current advance (restored on failure) */
    double *scratch; /* RK4 stages and event location */

    Integrator *integ;
    bool integrator_dirty; /* active set or state changed outside the integrator */

    int var_count;
    char (*var_names)[80];
    const char **var_units;

    uint32_t next_contact_id;
    EngineEventFn event_fn;
    void *event_user;
    EngineStats stats;
    uint64_t cvode_steps_base; /* CVODE's step counter restarts at every re-initialisation */
    uint32_t serial; /* this instance's serial: the generation of its EngineBodyIds (never 0) */
};

/* engine.c: the next instance serial, process-wide, never 0 (engine_create takes one). */
uint32_t engine_next_serial(void);

/* engine_dynamics.c */
EngineBodyState engine_block_state(const Engine *e, const double *y, int body);
void engine_block_store(const Engine *e, double *y, int body, const EngineBodyState *s);
/* Kinematics of contact c in state y; point (Nullable) receives the world contact point, arm
 * (Nullable) its offset from the centre of mass. */
void engine_contact_kinematics(const Engine *e, const double *y, const EngineContact *c, double t,
                               ContactKinematics *k, Vec3 *point, Vec3 *arm);
void engine_manifold_kinematics(const Engine *e, const double *y, const EngineContact *c, double t,
                                ContactKinematics *k, Vec3 *point, Vec3 *arm_a, Vec3 *arm_b);
/* Depth (m) within which a contact counts as touching at a restart. */
#define ENGINE_TOUCH_TOLERANCE 1e-12
/* Collision-world rest tolerance (m) used by the engine (CollisionDesc.rest_tolerance): 0. The
 * world carries the pairs of bodies whose pose did not change at all (sleeping bodies,
 * engine_sleep.c) without it; a coarser tolerance would also carry awake bodies at rest. */
/* Threaded collision manager: the most output steps a merged report may lag behind the engine
 * before the engine waits for a newer one, and the longest wait (s, wall time). */
#define ENGINE_REPORT_MAX_LAG 2.0
#define ENGINE_REPORT_WAIT_LIMIT 0.5
#define ENGINE_REST_TOLERANCE 0.0
bool engine_contact_should_be_active(const ContactKinematics *k);
/* dy/dt at (t, y) with the current active set. */
void engine_rhs(Engine *e, double t, const double *y, double *ydot);
/* Root functions: depth of every contact candidate. */
void engine_roots(const Engine *e, const double *y, double *g);
/* Toggles contacts whose depth sign disagrees with their active flag; emits events. Returns the
 * number of changes. */
int engine_update_active_set(Engine *e, double t, const int *directions);
void engine_commit_contacts(Engine *e, double t);
void engine_normalize_state(Engine *e, double *y);

/* engine_sleep.c: equilibrium and sleeping (004 4.8.5, App. E) */
IssimStatus engine_sleep_init(Engine *e, IssimError *err);
void engine_sleep_free(Engine *e);
/* Rebuilds the awake lists and ranges if sleep_dirty (and the live contacts always: the
 * contact array changes with every collision update). */
void engine_refresh_awake(Engine *e);
/* After the commit of an accepted step: puts to sleep every island of awake bodies that is in
 * equilibrium, and wakes sleeping bodies an awake one touches. */
void engine_update_sleep(Engine *e, double t);
/* Wakes a body; by: the moving body that woke it, or -1 for an edit or a reset, which also wakes
 * the bodies on its equilibrium list. */
void engine_wake_body(Engine *e, int body, int by, double t);
/* A contact that begins between a sleeping and an awake body wakes the sleeping one if they
 * approach faster than the contact's velocity tolerance (an interactive collision, App. E.3.1);
 * a resting touch does not. */
void engine_wake_on_contact(Engine *e, const EngineContact *c, const ContactKinematics *k,
                            double t);
void engine_wake_all(Engine *e, double t);
/* One projected Gauss-Seidel sweep (warm-started) of 004 App. C's lambda* = the normal forces
 * that hold every live active manifold contact still under the external loads; the result is
 * each contact's `load`, which internal friction's equilibrium test compares with its
 * compression and restitution forces. */
void engine_equilibrium_loads(Engine *e);
/* A contact whose bodies are all asleep (or asleep and fixed) cannot change. */
bool engine_contact_frozen(const Engine *e, const EngineContact *c);

/* The rate (m/s) at which a model's restitution and compression forces are read for the App. C
 * band, and the time (s) a shaped body must stay a sleep candidate before it sleeps. */
#define ENGINE_BAND_RATE 1e-9
#define ENGINE_SETTLE_TIME 0.02

/* engine_cvode.c / engine_rk4.c: integrator back-ends */
Integrator *integrator_cvode_create(Engine *e, IssimError *err);
void integrator_cvode_destroy(Integrator *integ);
IssimStatus integrator_cvode_advance(Engine *e, double t_target, IssimError *err);
IssimStatus integrator_rk4_advance(Engine *e, double t_target, IssimError *err);

/* engine.c */
void engine_emit(Engine *e, const EngineEvent *event);
int engine_find_pair(const Engine *e, int material_a, int material_b);
IssimStatus engine_contact_params(const Engine *e, EngineContact *c, IssimError *err);

/* engine_collide.c: shapes and the collision world */
IssimStatus engine_build_shapes(Engine *e, IssimError *err);
void engine_destroy_shapes(Engine *e);
/* Runs the collision world on the current state and replaces the manifold contacts, keeping
 * the activity and history of contacts that persist. */
void engine_collide(Engine *e);
/* engine_collide on this thread even while the manager thread runs (resets). */
void engine_collide_now(Engine *e);
/* Replaces the manifold contacts by world contacts computed with poses (Nullable: the current
 * state's), keeping what persists. */
void engine_merge_contacts(Engine *e, const CollisionContact *world, int count, const Pose *poses);

#endif
