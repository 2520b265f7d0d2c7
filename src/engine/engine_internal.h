/* Private engine structures shared by the engine's files (the .c files of src/engine; outside
 * the engine only tests/test_complementarity_sleep.c includes this). struct Engine is three
 * parts, as MuJoCo splits mjModel from mjData: the model (EngineModel, engine_model.h: the scene's
 * bodies, obstacles, pairs, options and layout, built by engine_build.c and changed only by
 * edits), the data (EngineData, EngineBodyData, the state vector, the contacts and their
 * model-owned state: what a step changes and a checkpoint copies), and the stages' contexts, each
 * declared with its stage's functions in its own private header: engine_contact.h (contacts and
 * their model-owned state), engine_dynamics.h (equations of motion), engine_collide.h (collision
 * world, merge, energy ledger), engine_sleep.h, engine_resolve.h (islands, complementarity),
 * engine_reduced.h, engine_integrator.h and engine_checkpoint.h; engine_island.h is private to
 * the RESOLVE stage's two files.
 *
 * Where each part lives: engine.c (create, variables, edits, getters), engine_build.c (the model
 * from the scene), engine_step.c (engine_advance: the stages in order, islands), engine_shapes.c
 * (shapes, the collision world), engine_collide.c (running it, the merge) with
 * engine_manifold_energy.c (the merge's energy ledger), engine_dynamics.c (right-hand side,
 * contact kinematics, the active set), the integrators (engine_cvode.c, engine_rk4.c), the
 * resolvers (engine_complementarity.c, engine_island_assembly.c with engine_gap_after.c and the
 * solvers engine_pgs.c, engine_solver_*.c; engine_reduced.c with engine_smooth.c), sleeping
 * (engine_sleep.c), checkpoints (engine_checkpoint.c), model-owned contact state
 * (engine_contact_state.c), maps (engine_maps.c) and system matrices (engine_system.c).
 * bar_drop.c is the V1 reference solution, not part of a step.
 *
 * Threading: everything here is written and read by the thread that runs the engine (engine.h).
 * The one exception is the collision manager (CollisionManager, collision.h): while its thread
 * runs, it reads poses from collide.registry's frames and hands reports over through its own
 * locks; the engine's fields are never touched by it. */
#ifndef ISSIM_ENGINE_INTERNAL_H
#define ISSIM_ENGINE_INTERNAL_H

#include "issim/arena.h"
#include "issim/collision.h"
#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/engine_diagnostics.h"
#include "issim/engine_resolver.h"
#include "issim/surface.h"

#include "engine_model.h"
#include "engine_contact.h"
#include "engine_dynamics.h"
#include "engine_collide.h"
#include "engine_sleep.h"
#include "engine_resolve.h"
#include "engine_checkpoint.h"
#include "engine_reduced.h"
#include "engine_integrator.h"

/* A body's part of the engine's data (Engine.body_data[b], beside the model's bodies[b]): what
 * changes while it runs and a rewind restores. Checkpoints copy the array whole
 * (engine_checkpoint.c), so a field added here is rewound with the rest; EngineBody is the
 * model (the scene's, rebuilt by edits, not changed by a step). */
typedef struct EngineBodyData {
    bool asleep; /* in equilibrium: frozen, not integrated (engine_sleep.c) */
    /* The resolver of the body's island this advance (engine_step.c): force-law bodies are
     * integrated by CVODE / RK4 (awake_bodies), the others by their resolver's stage. */
    ContactResolverKind resolver;
    int reduced_slot;   /* the reduced pair it belongs to (its state derives from the pair's
                           block), or -1 */
    double sleep_t;     /* when it entered equilibrium */
    double still_since; /* since when it has been a sleep candidate, or -1 */
    /* Transient wrench from outside the thing database (GUI drag spring, haptic coupling):
     * world frame, torque about the centre of mass; not saved with the scene, but rewound (a
     * replay steps with the wrench of its key). */
    Vec3 applied_force, applied_torque;
    /* In awake_bodies: awake and resolved by force laws. Derived from the fields above by
     * engine_refresh_awake (after a restore too). */
    bool integrated;
} EngineBodyData;

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

/* The engine's data beside its bodies' (EngineBodyData) and its arrays: the scalars that change
 * while it runs and a rewind restores, as MuJoCo's mjData holds them apart from mjModel. A
 * checkpoint's key holds a copy of it whole (engine_checkpoint.c), so a field added here is
 * rewound with the rest. The arrays a key copies beside it: the state vector y, every body's
 * EngineBodyData, the reduced pairs' slots, the contacts (each up to its parameters), the
 * contact-state pool and the collision world's identity. */
typedef struct EngineData {
    double t; /* the state's time */
    /* Fixed step (s) that the active contacts' models ask for, 0 when none: while > 0 the
     * force-law stage takes RK4 steps of this size instead of the base integrator
     * (engine_step.c). Recomputed whenever the active set changes. */
    double fixed_step;
    /* Fixed steps run on the grid fixed_anchor + k fixed_step (a contact map samples at its
     * period from the onset): set when the fixed step starts or changes. */
    double fixed_anchor;
    double report_t; /* state time of the newest collision report merged (-inf before any) */
    uint32_t next_contact_id;
    bool collision_stale; /* bodies moved since the last collision update */
} EngineData;

struct Engine {
    /* The model: the scene's, changed only by edits (engine_model.h). */
    EngineModel model;

    /* The data: what a step changes and a rewind restores (a checkpoint key copies each). */
    EngineData data;
    EngineBodyData *body_data; /* model.body_count, beside model.bodies */
    double *y;                 /* state at data.t, model.layout.state_size */
    int contact_count;         /* vertex-plane contacts first, then manifold contacts */
    int vertex_contact_count;
    int contact_capacity;
    EngineContact *contacts;
    ContactStatePool pool; /* the contacts' model-owned state */

    /* The stages' contexts: caches, scratch and plumbing, rebuilt from the model and the data. */
    EngineCollide collide;         /* engine_collide.h */
    EngineSleep sleep;             /* engine_sleep.h */
    EngineIntegration integration; /* engine_integrator.h */
    EngineIslands islands;         /* engine_resolve.h */
    EngineReduced reduced;         /* engine_reduced.h */
    CheckpointRing checkpoints;    /* engine_checkpoint.h */
    ContactParamSets param_sets;   /* engine_contact.h: the contacts' parameters */
    double *y_saved;               /* state before the current advance (restored on failure) */

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

/* The parameters a contact's model is called with (its set, engine_param_sets.c). The pointer
 * lasts until the next contact is bound (a new set may move the table). */
static inline const ContactParams *engine_contact_params(const Engine *e, const EngineContact *c) {
    return &e->param_sets.sets[c->param_set].params;
}

/* engine.c: the next instance serial, process-wide, never 0 (engine_create takes one). */
uint32_t engine_next_serial(void);

/* A body's own loads (world) at time t: gravity, its force and torque properties, its load
 * cycle, the applied wrench. */
static inline Vec3 engine_body_own_force(const Engine *e, int body, double t) {
    const EngineBody *b = &e->model.bodies[body];
    Vec3 f =
        vec3_add(vec3_mad(b->force, b->mass, e->model.gravity), e->body_data[body].applied_force);
    if (b->cycle_period > 0.0)
        f = vec3_mad(f, 0.5 * (1.0 - cos(2.0 * M_PI * t / b->cycle_period)), b->cycle_force);
    return f;
}
static inline Vec3 engine_body_own_torque(const Engine *e, int body) {
    return vec3_add(e->model.bodies[body].torque, e->body_data[body].applied_torque);
}

/* Union-find root with path halving (islands: engine_system.c, engine_step.c). */
static inline int engine_find_root(int *parent, int i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* engine.c */
void engine_emit(Engine *e, const EngineEvent *event);

/* engine_system.c: adds sign * (n, arm x n) to row `row` of a (rows x columns) column-major
 * matrix at velocity offset o (3 columns for a planar body, 6 for a free one). */
void engine_add_jacobian_row(const Engine *e, double *j, int rows, int row, int o, Vec3 n, Vec3 arm,
                             double sign);

/* engine_step.c: the staged step */
/* Recomputes the fixed step the active contacts ask for (engine_step.c). */
void engine_update_fixed_step(Engine *e);

/* ===== Contact-response maps (engine_maps.c) ===== */
/* Loads every body's contact_map (a file, or "flat K ..." / "transient K PEAK DECAY ...") and
 * checks that the maps a contact_map pair may bring together share one period. */
IssimStatus engine_load_maps(Engine *e, IssimError *err);
void engine_release_maps(Engine *e);
/* The contact's maps into its parameters (a: the contact's body, b: its second body). */
void engine_contact_maps(const Engine *e, const EngineContact *c, ContactParams *p);
/* Fills the body-frame points and normals of k (ContactKinematics.point_in_a ...) from the
 * engine's current state, for the model's begin(). */
void engine_contact_local_frames(const Engine *e, const EngineContact *c, ContactKinematics *k);
/* A relative asset path tried against the working directory, the scene's folder and its
 * parent (engine_shapes.c). */
const char *engine_asset_path(const Engine *e, const char *path, char *buf, size_t size);

#endif
