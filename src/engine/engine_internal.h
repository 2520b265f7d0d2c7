/* Private engine structures shared by the engine's files (the .c files of src/engine; outside
 * the engine only tests/test_complementarity_sleep.c includes this). Where each part lives:
 * engine.c (create, variables, edits, getters), engine_build.c (the model from the scene),
 * engine_step.c (engine_advance: the stages in order, islands), engine_shapes.c (shapes, the
 * collision world), engine_collide.c (running it, the merge) with engine_manifold_energy.c (the
 * merge's energy ledger), engine_dynamics.c (right-hand side, contact kinematics, the active set),
 * the integrators (engine_cvode.c, engine_rk4.c), the resolvers (engine_complementarity.c,
 * engine_island_assembly.c with engine_gap_after.c and the solvers engine_pgs.c, engine_solver_*.c;
 * engine_reduced.c with engine_smooth.c), sleeping (engine_sleep.c, its context in engine_sleep.h),
 * checkpoints (engine_checkpoint.c), model-owned contact state (engine_contact_state.c), maps
 * (engine_maps.c) and system matrices (engine_system.c). bar_drop.c is the V1 reference solution,
 * not part of a step.
 *
 * Threading: everything here is written and read by the thread that runs the engine (engine.h).
 * The one exception is the collision manager (CollisionManager, collision.h): while its thread
 * runs, it reads poses from collision_registry's frames and hands reports over through its own
 * locks; the engine's fields are never touched by it. */
#ifndef ISSIM_ENGINE_INTERNAL_H
#define ISSIM_ENGINE_INTERNAL_H

#include "issim/arena.h"
#include "issim/collision.h"
#include "issim/engine.h"
#include "issim/engine_diagnostics.h"
#include "issim/engine_resolver.h"
#include "issim/surface.h"

#include "engine_collide.h"
#include "engine_sleep.h"
#include "engine_resolve.h"
#include "engine_checkpoint.h"
#include "engine_reduced.h"
#include "engine_integrator.h"

typedef enum BlockKind {
    BLOCK_FREE_BODY,    /* 13: p(3) q(4) v(3) w(3) */
    BLOCK_PLANAR_BODY,  /* 6: x z theta vx vz omega; theta about +y */
    BLOCK_CONTACT_PAIR, /* a pair of bodies in reduced coordinates (engine_reduced.c): the
                           model's block_size values, ENGINE_REDUCED_BLOCK_MAX reserved */
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
    Vec3 inertia;        /* principal moments, body frame */
    Vec3 force, torque;  /* external, world (the body's properties) */
    Vec3 cycle_force;    /* force_cycle: peak of the load cycle, world */
    double cycle_period; /* force_cycle_period, s; 0: none */
    /* Transient wrench from outside the thing database (GUI drag spring, haptic coupling):
     * world frame, torque about the centre of mass; not saved with the scene. */
    Vec3 applied_force, applied_torque;
    int material;
    int vertex_count;
    Vec3 vertices[PROP_MAX_POINTS];
    double radius;
    int block;
    int velocity_offset;
    bool shaped;             /* has a collision shape (else: contact vertices against planes) */
    Shape shape;             /* body frame, centre of mass at the origin */
    Hull *hull;              /* owned, for shape = hull and smooth (its tessellation's hull) */
    SmoothSurface *surface;  /* owned, for shape = smooth (smooth contact, 002) */
    ContactMap *contact_map; /* owned reference, or NULL (engine_maps.c) */
    int world_index;         /* in the collision world, or -1 */
    double reach; /* farthest vertex or shape point from the centre of mass, m (sleep test) */
    bool asleep;  /* in equilibrium: frozen, not integrated (engine_sleep.c) */
    /* The resolver of the body's island this advance (engine_step.c): force-law bodies are
     * integrated by CVODE / RK4 (awake_bodies), the others by their resolver's stage. */
    ContactResolverKind resolver;
    bool integrated;    /* in awake_bodies: awake and resolved by force laws */
    int reduced_slot;   /* the reduced pair it belongs to (its state derives from the pair's
                           block), or -1 */
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
    TriMesh *mesh;          /* owned, for shape = mesh and smooth (its tessellation) */
    SmoothSurface *surface; /* owned, for shape = smooth */
    Hull *hull;             /* owned, for a flat smooth surface: the slab under it */
    int world_index;        /* in the collision world, or -1 */
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
    /* The model ended the contact with the depth still positive (CONTACT_EVENT_SEPARATION): a
     * manifold contact stays inactive until its depth falls to zero, so it begins again only at
     * the next onset, as vertex contacts do through their roots. */
    bool released;
    double load; /* manifold: App. C constraint force holding it still, N (engine_sleep.c) */
    double load_lo, load_hi; /* manifold: the model's restitution and compression forces, N */
    /* Under this speed the contact counts as still (m/s): contact_equilibrium_speed of its load
     * and effective mass at the last commit (engine_commit_contacts); 0 before the first. */
    double still_speed;
    uint32_t id; /* issued at onset, persistent while active */
    double t_begin;
    /* history.state points at state_bytes bytes of the engine's contact-state pool at
     * state_offset (ContactModelClass.state_size, allocated at onset, freed at the end);
     * engine_contact_history() re-binds the pointer before every model call, so contacts may
     * be copied and the pool may move between calls. */
    ContactHistory history;
    size_t state_offset, state_bytes;
    /* manifold: subtracted from the geometric depth (m, >= 0), so that a collision update that
     * re-makes the anchors never raises the pair's elastic energy (engine_manifold_energy.c) */
    double depth_offset;
    /* manifold: the points of its pair's patch, which share the pair's mass for the damping
     * derived from the restitution (engine_contact_params; 0 or 1: one point) */
    int patch_points;
    /* Complementarity rows: the normal force of the last time step (lambda_n / h, N), which the
     * contact reports show; the solver, not the geometry, decides their activity. */
    double resolved_force;
    Vec3 resolved_friction; /* and its friction force (world, N) */
    /* Complementarity rows: the contact's total impulse of its last time step (world, N s,
     * normal and friction), the warm start of the next solve (engine_complementarity.c). */
    Vec3 warm_impulse;
    /* The pair's parameters for this contact (damping derived with this body's mass). Last:
     * checkpoints save a contact up to here and take the pair's current parameters back. */
    ContactParams params;
} EngineContact;

/* Model-owned contact state (engine_contact_state.c): one byte arena, blocks of 16-byte
 * multiples, a first-fit free list sorted by offset. It grows (doubling) only at a contact onset
 * that finds it full, never inside a right-hand side; growth is counted. */
typedef struct ContactStatePool {
    unsigned char *bytes;
    size_t capacity;
    size_t end; /* every allocated block lies below end */
    size_t *free_offset, *free_size;
    int free_count, free_capacity;
} ContactStatePool;

/* The time in which a depth offset's energy falls e-fold while its bodies are awake (s): at each
 * collision update every offset heals by the share dt / ENGINE_HEAL_TIME of what healing it whole
 * would add (engine_manifold_energy.c), so an offset can neither last nor build up, and what
 * healing adds in a step is that share of the offsets' energy (docs/contact-models.md, "Energy at
 * contact changes"). */
#define ENGINE_HEAL_TIME 0.5
/* A contact carrying a larger offset (m) keeps its bodies awake until it heals. */
#define ENGINE_SLEEP_MAX_OFFSET 5e-6
/* Offsets up to this (m) do not heal: the geometry or the motion pays them. Healing every such
 * offset of a resting pile kept it trembling and awake; this is the most depth a body at rest
 * hides. */
#define ENGINE_HEAL_MIN_OFFSET 5e-7

/* The state vector's layout: one block per body (then the reduced pairs' blocks). */
typedef struct EngineLayout {
    int block_count;
    StateBlock *blocks;
    int state_size;
    int velocity_dim;
} EngineLayout;

/* The engine's named variables (engine_register_vars): names and units, in frame order. */
typedef struct EngineVars {
    int count;
    char (*names)[80];
    const char **units;
} EngineVars;

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
    EngineCollide collide; /* engine_collide.h */
    char (*materials)[PROP_STRING_MAX];
    int material_count;

    EngineLayout layout;
    EngineSleep sleep;    /* engine_sleep.h */
    bool collision_stale; /* bodies moved since the last collision update */

    double t;
    double *y;       /* state at t */
    double *y_saved; /* state before the current advance (restored on failure) */

    EngineIntegration integration; /* engine_integrator.h */

    ContactStatePool pool;
    CheckpointRing checkpoints; /* engine_checkpoint.h */

    EngineIslands islands; /* engine_resolve.h */

    EngineReduced reduced; /* engine_reduced.h */

    EngineVars vars;

    uint32_t next_contact_id;
    EngineEventFn event_fn;
    void *event_user;
    EngineStats stats;
    uint32_t serial; /* this instance's serial: the generation of its EngineBodyIds (never 0) */
};

/* What a change made outside the integrator's own step invalidates. Every such change goes
 * through engine_invalidate, so the four flags are set in one place and a new kind of change
 * names what it breaks. */
typedef enum EngineInvalid {
    ENGINE_INVALID_INTEGRATOR = 1 << 0, /* the state or right-hand side jumped: restart CVODE */
    ENGINE_INVALID_SLEEP = 1 << 1,      /* the awake lists must be rebuilt (engine_refresh_awake) */
    ENGINE_INVALID_FIXED_STEP = 1 << 2, /* the active contacts' fixed step must be recomputed */
    ENGINE_INVALID_REPLAY = 1 << 3, /* the next checkpoint must be a key (engine_checkpoint.c) */
} EngineInvalid;

static inline void engine_invalidate(Engine *e, unsigned what) {
    if (what & ENGINE_INVALID_INTEGRATOR)
        e->integration.dirty = true;
    if (what & ENGINE_INVALID_SLEEP)
        e->sleep.dirty = true;
    if (what & ENGINE_INVALID_FIXED_STEP)
        e->integration.fixed_step_dirty = true;
    if (what & ENGINE_INVALID_REPLAY)
        e->checkpoints.replay_broken = true;
}

/* engine.c: the next instance serial, process-wide, never 0 (engine_create takes one). */
uint32_t engine_next_serial(void);

/* A body's own loads (world) at time t: gravity, its force and torque properties, its load
 * cycle, the applied wrench. */
static inline Vec3 engine_body_own_force(const Engine *e, const EngineBody *b, double t) {
    Vec3 f = vec3_add(vec3_mad(b->force, b->mass, e->gravity), b->applied_force);
    if (b->cycle_period > 0.0)
        f = vec3_mad(f, 0.5 * (1.0 - cos(2.0 * M_PI * t / b->cycle_period)), b->cycle_force);
    return f;
}
static inline Vec3 engine_body_own_torque(const EngineBody *b) {
    return vec3_add(b->torque, b->applied_torque);
}

/* Union-find root with path halving (islands: engine_system.c, engine_step.c). */
static inline int engine_find_root(int *parent, int i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* engine_dynamics.c */
EngineBodyState engine_block_state(const Engine *e, const double *y, int body);
void engine_block_store(const Engine *e, double *y, int body, const EngineBodyState *s);
/* Kinematics of contact c in state y; point (Nullable) receives the world contact point, arm
 * (Nullable) its offset from the centre of mass. */
void engine_contact_kinematics(const Engine *e, const double *y, const EngineContact *c, double t,
                               ContactKinematics *k, Vec3 *point, Vec3 *arm);
/* Per-body states of one right-hand side evaluation (scratch past the load arrays). */
#define ENGINE_BODY_STATE_DOUBLES (sizeof(EngineBodyState) / sizeof(double))
_Static_assert(sizeof(EngineBodyState) % sizeof(double) == 0, "body states tile the scratch");
EngineBodyState *engine_rhs_body_states(const Engine *e);
void engine_manifold_kinematics(const Engine *e, const double *y, const EngineContact *c, double t,
                                ContactKinematics *k, Vec3 *point, Vec3 *arm_a, Vec3 *arm_b);
/* The collision update's passes over every contact (the merge, its energy ledger, the activity
 * of each contact) read every body's state at e->y once: engine_merge_states fills the cache
 * (the right-hand side's, free outside an evaluation) and engine_merge_kinematics reads it, the
 * same numbers as engine_manifold_kinematics at (e->y, e->t). */
EngineBodyState *engine_merge_states(const Engine *e);
/* Pins contact c's friction spring (ContactHistory.friction_pin_a/b) at the world point where
 * its force acts, on a and b (NULL: an obstacle) as they are now. For contacts with friction
 * (engine_contact_has_friction) only. */
void engine_pin_friction(EngineContact *c, const EngineBodyState *a, const EngineBodyState *b,
                         Vec3 point);
bool engine_contact_has_friction(const EngineContact *c);
/* Every body's state in y (engine_block_state), into states[body_count]. */
void engine_fill_states(const Engine *e, const double *y, EngineBodyState *states);
/* The depth of contact c in y, states being y's (engine_fill_states): k.depth of
 * engine_contact_kinematics, for the event tests that need no more. */
double engine_contact_depth(const Engine *e, const EngineBodyState *states, const double *y,
                            const EngineContact *c);
/* How far apart a time-stepped contact's bodies may be and still take part in this step: margin,
 * or what they close at their present approach speed (k->depth_rate) over the step twice over
 * (ENGINE_REACH_AHEAD_SAFETY) if that is more: a body thrown at a thin plate joins its island,
 * and gets its speculative row, before a step can carry it through. */
double engine_speculative_reach(const Engine *e, const ContactKinematics *k, double margin);
/* Takes up to energy (J) of kinetic energy out of the motion of c's bodies relative to each other
 * at point along dir, by an impulse along dir at point (equal and opposite on B): the kinetic
 * energy falls by exactly the amount returned; 0 when the bodies are not moving along dir there
 * or a body cannot take an impulse (asleep, planar, in a reduced pair or a time-stepped island).
 * A zero dir means along the bodies' relative velocity at point.
 * The bodies' rates in e->y and states change together. */
double engine_contact_brake(Engine *e, EngineBodyState *states, const EngineContact *c, Vec3 point,
                            Vec3 dir, double energy);
void engine_merge_kinematics(const Engine *e, const EngineBodyState *states, const EngineContact *c,
                             ContactKinematics *k);
/* The geometry of manifold contact c from its bodies' states (b NULL: a static B) only (what a
 * time-stepping solver needs): depth, world normal (from B into A), the points' offsets from
 * the two centres of mass. */
void engine_manifold_geometry(const EngineContact *c, const EngineBodyState *a,
                              const EngineBodyState *b, double *depth, Vec3 *normal, Vec3 *arm_a,
                              Vec3 *arm_b);
/* Kinematics of contact c in state y with the offsets of its points from the two centres of
 * mass (arm_b zero for a vertex contact or a fixed B). */
void engine_contact_arms(const Engine *e, const double *y, const EngineContact *c, double t,
                         ContactKinematics *k, Vec3 *arm_a, Vec3 *arm_b);
/* Every body's load at (t, y) into force and torque (body_count each): its own loads plus the
 * forces of the active force-law contacts, for the integrated bodies and those of reduced pairs
 * (contacts inside a pair excluded); other entries are left alone. */
void engine_accumulate_loads(const Engine *e, double t, const double *y, Vec3 *force, Vec3 *torque);
/* Depth (m) within which a contact counts as touching at a restart. */
#define ENGINE_TOUCH_TOLERANCE 1e-12
/* Collision-world rest tolerance (m) used by the engine (CollisionDesc.rest_tolerance): 0. The
 * world carries the pairs of bodies whose pose did not change at all (sleeping bodies,
 * engine_sleep.c) without it; a coarser tolerance would also carry awake bodies at rest. */
/* Threaded collision manager: the most output steps a merged report may lag behind the engine
 * before the engine waits for a newer one, and the longest wait (s, wall time). */
#define ENGINE_REPORT_MAX_LAG 2.0
/* The speculative margin (engine_collide.c reach_ahead) is this many times the distance a body's
 * farthest point covers at its present speed before an update's contacts are merged. */
#define ENGINE_REACH_AHEAD_SAFETY 2.0
#define ENGINE_REPORT_WAIT_LIMIT 0.5
#define ENGINE_REST_TOLERANCE 0.0
/* A scene whose bodies start with more elastic energy than this in their manifold contacts
 * (J) is warned about, naming the deepest pair: scenes/pile.lua once started with 39 J, an
 * explosion rather than a pour, while a 1 kg box resting on its four 1e5 N/m springs holds
 * 1.2e-4 J. */
#define ENGINE_OVERLAP_WARN_ENERGY 1e-3
/* The progress guard (engine_cvode.c): a mean step below ENGINE_TINY_STEP of the output step over
 * ENGINE_GUARD_WINDOW steps, or ENGINE_MAX_STEPS_PER_OUTPUT steps in one output step, stops a run
 * with the active contacts named. A stiff contact resolved properly takes steps of about 1e-3 of
 * the output step (the point drop at k = 1e8 N/m). */
#define ENGINE_TINY_STEP 1e-6
#define ENGINE_GUARD_WINDOW 2000
#define ENGINE_MAX_STEPS_PER_OUTPUT 1000000
/* ": active contacts A on floor (floor_contact), ..." for error messages (empty if none). */
void engine_describe_active(const Engine *e, char *buf, size_t size);
bool engine_contact_should_be_active(const ContactKinematics *k);
/* An event about contact c at t (kind and duration left for the caller). */
EngineEvent engine_contact_event(const EngineContact *c, double t, double normal_velocity);
/* dy/dt at (t, y) with the current active set. */
void engine_rhs(Engine *e, double t, const double *y, double *ydot);
/* Root functions: depth of every contact candidate. */
void engine_roots(const Engine *e, const double *y, double *g);
/* Toggles contacts whose depth sign disagrees with their active flag; emits events. Returns the
 * number of changes. */
int engine_update_active_set(Engine *e, double t, const int *directions);
void engine_commit_contacts(Engine *e, double t);
void engine_normalize_state(Engine *e, double *y);

/* engine.c */
void engine_emit(Engine *e, const EngineEvent *event);

/* engine_build.c: the model from the thing database (engine_create's order) */
IssimStatus engine_build_model(Engine *e, ThingId universe, IssimError *err);
void engine_store_scene_state(Engine *e);
void engine_check_scales(Engine *e);
IssimStatus engine_create_integrator(Engine *e, IssimError *err);
/* Re-reads every parameter that may change while running (after an edit). */
IssimStatus engine_refresh_params(Engine *e, IssimError *err);
int engine_find_pair(const Engine *e, int material_a, int material_b);
IssimStatus engine_contact_params(const Engine *e, EngineContact *c, IssimError *err);

/* engine_system.c: adds sign * (n, arm x n) to row `row` of a (rows x columns) column-major
 * matrix at velocity offset o (3 columns for a planar body, 6 for a free one). */
void engine_add_jacobian_row(const Engine *e, double *j, int rows, int row, int o, Vec3 n, Vec3 arm,
                             double sign);

/* engine_contact_state.c: model-owned contact state and the calls into the models */
void engine_pool_free_all(ContactStatePool *pool);
void engine_pool_rebuild(Engine *e);
/* The contact's history with history.state bound to its pool block (NULL without one). */
ContactHistory *engine_contact_history(const Engine *e, const EngineContact *c);
const ContactModelClass *engine_contact_model(const Engine *e, const EngineContact *c);
/* Onset: allocates the model's state (state_size), zeroes the history, calls begin(). */
void engine_contact_begin(Engine *e, EngineContact *c, const ContactKinematics *k);
/* End: the state block goes back to the pool. Idempotent. */
void engine_contact_end(Engine *e, EngineContact *c);
/* A restart without a checkpoint: the model's reset hook, or begin again. */
void engine_contact_reset(Engine *e, EngineContact *c, const ContactKinematics *k);
ContactForce engine_contact_force(const Engine *e, const EngineContact *c,
                                  const ContactKinematics *k);
int engine_contact_commit_model(Engine *e, EngineContact *c, const ContactKinematics *k);
double engine_contact_potential(const Engine *e, const EngineContact *c,
                                const ContactKinematics *k);
bool engine_models_have_copy_hooks(const Engine *e);

/* engine_step.c: the staged step */
/* Recomputes the fixed step the active contacts ask for (engine_step.c). */
void engine_update_fixed_step(Engine *e);

/* ===== Contact-response maps (engine_maps.c) ===== */
/* Loads every body's contact_map (a file, or "flat K ..." / "transient K PEAK DECAY ...") and
 * checks that the maps a contact_map pair may bring together share one period. */
IssimStatus engine_load_maps(Engine *e, IssimError *err);
void engine_release_maps(Engine *e);
/* The contact's maps into its parameters (a: the contact's body, b: its second body). */
void engine_contact_maps(const Engine *e, EngineContact *c);
/* Fills the body-frame points and normals of k (ContactKinematics.point_in_a ...) from the
 * engine's current state, for the model's begin(). */
void engine_contact_local_frames(const Engine *e, const EngineContact *c, ContactKinematics *k);
/* A relative asset path tried against the working directory, the scene's folder and its
 * parent (engine_shapes.c). */
const char *engine_asset_path(const Engine *e, const char *path, char *buf, size_t size);

#endif
