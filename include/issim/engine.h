/* issim engine: the numerical core (000 App. B.4.4). It collects the equations of every thing
 * in a thing database and integrates them: 3D rigid bodies (quaternion attitude, inertia
 * tensor, gravity, external forces) or planar bodies (x-z plane, rotation about y), with
 * per-contact force laws (contact.h), using SUNDIALS CVODE (BDF + dense direct solver for stiff
 * contact, Adams for non-stiff) with root finding to land on contact onset and separation, or a
 * fixed-step RK4 with event location.
 *
 * State layout: a list of blocks, one per representation: a free body (13: position, attitude
 * quaternion, linear velocity, world angular velocity), a planar body (6: x, z, theta, vx, vz,
 * omega), a reduced pair (engine_resolver.h, with every resolver's extension points); rebuilt
 * with the integrator when a pair changes representation (docs/architecture.md).
 *
 * Threading: an Engine is used by one thread at a time (the engine thread in interactive runs,
 * the caller in headless runs). It owns a private copy of the thing database; other threads
 * change it only through edits (engine_apply_edit, fed from the registry's edit queue by the
 * session). The engine's own state takes no lock; with the collision manager on its thread
 * (engine_start_collision_thread), a step waits on the manager's published report when the newest
 * one it merged lags too far behind (engine_collide.c, take_report), and pokes the manager after
 * each published state.
 */
#ifndef ISSIM_ENGINE_H
#define ISSIM_ENGINE_H

#include "issim/contact.h"
#include "issim/surface.h"
#include "issim/core.h"
#include "issim/math.h"
#include "issim/registry.h"
#include "issim/thing.h"

struct Engine;

typedef struct EngineOptions {
    int integrator;        /* IntegratorKind, or -1: the universe's "integrator" property */
    double dt;             /* output interval (CVODE) / step (RK4); <= 0: universe "dt" */
    double rtol;           /* <= 0: universe "rtol" */
    double atol;           /* <= 0: universe "atol" */
    const char *asset_dir; /* Nullable: the scene's folder, for relative hull and mesh files
                              (Borrowed during engine_create) */
    /* Sleeping (004 4.8.5, App. E): a body whose contacts all report equilibrium sleeps only if
     * its speed (linear, plus angular times its reach) is below this, m/s; <= 0: the smallest
     * velocity_tolerance of its contact pairs. The contact models judge the normal direction;
     * this catches a body sliding or spinning on contacts that are at rest. */
    double sleep_speed;
    bool sleep_disabled; /* never put a body to sleep (for comparisons and benchmarks) */
    /* Measure the wall time of every stage of engine_advance into EngineStats.stage_seconds
     * (two clock reads per stage: off by default, so the hot fixed-step path pays nothing). */
    bool profile_stages;
    /* Nullable: called on the engine thread after every accepted integrator step (each CVODE
     * internal step, root steps included, and each RK4 step) with the engine at that instant,
     * for what changes faster than the output step: a 0.3 ms impact lies between two 1 ms
     * frames (the session's contact peaks and impulses, sim.h). It may read the engine. */
    void (*on_step)(const struct Engine *engine, void *user);
    void *on_step_user;
    /* Nullable: asked before every integrator step; true ends engine_advance with
     * ISSIM_ERR_CANCELLED and the bodies' state it started from, so a stop request is honoured
     * within one step, not one output step (a finely sampled map takes many steps per frame).
     * Called on the engine thread; it reads the requester's flag. */
    bool (*should_stop)(void *user);
    void *should_stop_user;
    /* Threads the engine's stages may use: 1, the engine's (or the collision manager's) thread
     * alone; n > 1, a pool of n for the narrow phase and one of n for the complementarity
     * islands (RESOLVE); 0 (the default), engine_threads_auto (engine_diagnostics.h) for both.
     * Results are the same bits for every count. */
    int threads;
    /* With threads > 1 given above: a complementarity island of ENGINE_PARALLEL_SOLVE_ROWS
     * rows or more is assembled on the RESOLVE pool and its PGS sweeps split over the threads
     * (docs/complementarity-pgs.md); its results then depend on `threads` (the same bits for a
     * given count). Off by default: on the project's 2-core VM it made the 1,000-sphere pile
     * slower, not faster (docs/performance.md). */
    bool split_large_islands;
    /* Runs the collision world one step ahead on its manager's thread while the engine resolves
     * and integrates (a pipeline): step n then merges the contacts found on the state at the
     * start of step n - 1 (the margin and the reach ahead cover the one step's motion, as for the
     * GUI's threaded manager), and the update of step n's state overlaps step n's solve. Results
     * are deterministic (every step waits for exactly the update it merges) but not those of the
     * serial path. Off by default; unused while the GUI's threaded manager runs (it already
     * overlaps) and during a checkpoint's replay. */
    bool pipeline_collision;
} EngineOptions;

EngineOptions engine_options_default(void);

typedef struct Engine Engine;

/* Builds the engine from db (copied: the engine owns its copy). Fails with a message naming the
 * thing for invalid set-ups (no universe, zero normal, missing contact model...). */
Engine *engine_create(const ThingDb *db, const EngineOptions *options, IssimError *err);
void engine_destroy(Engine *engine);

/* The narrow phase's threads of this engine (1 without a collision world); the RESOLVE stage
 * uses EngineOptions.threads when set, else this count. */
int engine_threads(const Engine *engine);

/* Borrowed: the engine's own database (edits applied). Thread: engine. */
const ThingDb *engine_thingdb(const Engine *engine);
IntegratorKind engine_integrator(const Engine *engine);
double engine_time(const Engine *engine);
double engine_dt(const Engine *engine);

/* Integrates to t_target (> engine_time) in named stages (EngineStage, docs/architecture.md):
 * the collision update, the island partition (each island gets the resolver its contact pairs
 * name), reduced pairs' entries and exits, then each resolver advances its islands to t_target:
 * per-contact force laws inside
 * CVODE / RK4 (stopping at every contact onset and separation, located by root finding),
 * complementarity islands by time steps of their solver, and the commit. Every island reaches
 * t_target. On numerical failure the state is put back to what it was before the call and
 * ISSIM_ERR_NUMERIC is returned with a message. The collision update runs once per call, at its
 * start: advance by one output step (engine_dt, or engine_step) per call, as the headless run,
 * the GUI and the tests do; over a longer interval the contacts that begin inside it are found
 * only at the next call (time-stepped islands step through it with the contacts of its start). */
IssimStatus engine_advance(Engine *engine, double t_target, IssimError *err);
/* engine_advance(engine, engine_time + engine_dt). */
IssimStatus engine_step(Engine *engine, IssimError *err);

/* The stages of engine_advance, in order (STYLE.md 12: the step's order in one place). */
typedef enum EngineStage {
    ENGINE_STAGE_COLLIDE,   /* collision world update (or the newest report), contact merge */
    ENGINE_STAGE_ISLANDS,   /* islands of awake bodies and the resolver of each */
    ENGINE_STAGE_REDUCE,    /* reduced pairs enter and leave their blocks (engine_resolver.h) */
    ENGINE_STAGE_RESOLVE,   /* complementarity islands: a solve per time step (their integrate
                               follows each solve inside the stage) */
    ENGINE_STAGE_INTEGRATE, /* force-law islands: CVODE / RK4 with the laws in the right-hand
                               side, fixed steps while a contact asks for one */
    ENGINE_STAGE_COMMIT,    /* finiteness check, or the last good state back */
    ENGINE_STAGE_COUNT
} EngineStage;

const char *engine_stage_name(EngineStage stage);

/* ===== Checkpoints: contact state kept with the data =====
 *
 * A contact model may keep memory (friction springs, hysteresis, a convolution buffer:
 * ContactModelClass.state_size). So that a rewind (every live edit, the history scrubber)
 * resumes with that memory, the engine takes a checkpoint where a frame is published: the raw
 * state vector, every contact (activity, ids, history, the model-owned bytes), the bodies'
 * sleep state and the collision world's contact identity. engine_restore_vars at the time of a
 * checkpoint restores all of it; with the fixed-step integrator and the synchronous collision
 * world the run that follows is bit-identical to the uninterrupted one (CVODE restarts its
 * multistep history at a restore, so it agrees to its tolerances only). Checkpoints live in a
 * ring of at most max_frames records and max_bytes bytes; the oldest are dropped first, and a
 * restore to a frame whose checkpoint was dropped restarts contact histories there (counted in
 * EngineStats.restarts, logged once). Thread: engine. */
IssimStatus engine_enable_checkpoints(Engine *engine, int max_frames, size_t max_bytes,
                                      IssimError *err);
/* Saves a checkpoint at engine_time, replacing any at that time or later (a frame republished
 * after an edit). No-op until checkpoints are enabled. Most records are light: a *key* (the whole
 * state) is written every few frames, chosen so keys average 8 kB a frame, and whenever something
 * changed the engine outside engine_advance (an edit, an applied wrench); a restore to a frame
 * between keys restores the key before it and replays the output steps to it (synchronous
 * collision world, no events; EngineStats.replayed_frames). */
void engine_checkpoint(Engine *engine);
/* A key every `every` frames (1: every frame); 0: chosen from the record size (the default). */
void engine_set_checkpoint_keys(Engine *engine, int every);
bool engine_has_checkpoint(const Engine *engine, double t);
/* Bytes the checkpoint ring holds now. */
size_t engine_checkpoint_bytes(const Engine *engine);

/* ===== State variables (the registry's frame layout) ===== */

/* Per body: <name>.pos.{x,y,z} m, .orient.{w,x,y,z}, .vel.{x,y,z} m/s, .angvel.{x,y,z} rad/s,
 * then universe.energy.{kinetic,potential,elastic,total} J. A frame (engine_write_vars) holds
 * body b's values from ENGINE_FRAME_BODY_VALUES * b, at these offsets, and the energies after
 * the last body; engine_frame_body and engine_frame_set_body read and write them. */
enum {
    ENGINE_FRAME_POS = 0,     /* x, y, z */
    ENGINE_FRAME_ORIENT = 3,  /* w, x, y, z */
    ENGINE_FRAME_VEL = 7,     /* x, y, z */
    ENGINE_FRAME_ANGVEL = 10, /* x, y, z */
    ENGINE_FRAME_BODY_VALUES = 13,
    ENGINE_FRAME_ENERGY_VALUES = 4 /* kinetic, potential, elastic, total */
};
int engine_var_count(const Engine *engine);
const char *engine_var_name(const Engine *engine, int var);
const char *engine_var_unit(const Engine *engine, int var);
/* -1 if absent. */
int engine_var_find(const Engine *engine, const char *name);
/* Declares every variable in the registry, in engine order (set-up only). */
IssimStatus engine_register_vars(const Engine *engine, Registry *reg, IssimError *err);
/* Writes the current values (engine_var_count doubles). Thread: engine (it fills the engine's
 * per-body state cache, as engine_energy does). */
void engine_write_vars(const Engine *engine, double *values);
/* Restores the state of a frame written by engine_write_vars at time t (reset to an earlier
 * instant). With a checkpoint at t (engine_checkpoint) everything comes back exactly: contact
 * histories and model-owned state continue, and checkpoints after t are dropped. Without one the
 * bodies come from values, contacts are found again from the geometry and their histories
 * restart at t (models' reset hooks), and every body wakes. */
IssimStatus engine_restore_vars(Engine *engine, double t, const double *values, IssimError *err);

/* ===== Edits ===== */

/* Applies a property edit while running (fixed-during-run properties are refused). State
 * properties (pos, orient, vel, angvel) set the body's current state; others rebuild the model
 * parameters. The integrator restarts at the current time. On failure nothing changes. */
IssimStatus engine_apply_edit(Engine *engine, const char *path, const char *value, IssimError *err);

/* ===== Bodies, contacts, events ===== */

typedef struct EngineBodyState {
    Vec3 pos;
    Quat orient;
    Vec3 vel;
    Vec3 angvel; /* world */
} EngineBodyState;

/* Body `body`'s state in a frame's values (engine_write_vars' layout, ENGINE_FRAME_*), and the
 * other way round. Thread: any (pure). */
EngineBodyState engine_frame_body(const double *values, int body);
void engine_frame_set_body(double *values, int body, const EngineBodyState *state);

/* Bodies are numbered 0 .. engine_body_count - 1 in thing-database order (their registry
 * variables' order). Other modules and threads use an EngineBodyId (below); the event, sleep
 * and system-matrix functions, which report on this engine's internals, use the index. */
int engine_body_count(const Engine *engine);

/* ===== Body ids =====
 *
 * A body seen from outside the engine (the sim thread, the display, the haptic servo, the GUI)
 * is an EngineBodyId: its index and the generation of the engine that issued it, a
 * process-wide serial taken at engine_create and never 0. An id is valid for that engine only:
 * one kept from a previous scene's engine, or one that crossed threads and outlived its engine,
 * is stale, and every function below that takes an id checks it before it touches a body, so a
 * stale id is refused (ISSIM_ERR_STALE, or a sentinel from a getter), never read as another
 * engine's body. The zero-initialised id is the null id. An engine's bodies are fixed for its
 * lifetime (edits change properties, never the set of bodies), so an id it issued stays valid
 * until engine_destroy.
 *
 * Ids cross threads through the registry packed in one 64-bit word (engine_body_id_pack: slot
 * id words, contact reports), never as a double. The reader validates before use: the engine
 * thread with engine_body_valid; the display against the ids it took before the engine thread
 * started. */
typedef struct EngineBodyId {
    int32_t index;       /* 0 .. engine_body_count - 1 of the issuing engine */
    uint32_t generation; /* the issuing engine's serial; 0: the null id */
} EngineBodyId;

static inline EngineBodyId engine_body_id_null(void) {
    return (EngineBodyId){0, 0};
}
static inline bool engine_body_id_is_null(EngineBodyId id) {
    return id.generation == 0;
}
static inline bool engine_body_id_equal(EngineBodyId a, EngineBodyId b) {
    return a.index == b.index && a.generation == b.generation;
}
/* One registry word: generation in the high half, index in the low half; the null id is 0. */
static inline uint64_t engine_body_id_pack(EngineBodyId id) {
    return id.generation == 0 ? 0 : (uint64_t)id.generation << 32 | (uint32_t)id.index;
}
static inline EngineBodyId engine_body_id_unpack(uint64_t packed) {
    return (EngineBodyId){(int32_t)(uint32_t)packed, (uint32_t)(packed >> 32)};
}

/* The id of body index (0 .. engine_body_count - 1); the null id out of range. Thread: engine
 * (or the creator before the engine thread starts, like every engine function). */
EngineBodyId engine_body_id(const Engine *engine, int index);
/* The id of the body whose thing path is name ("box", "arm.link1"); the null id if there is
 * none. Thread: engine (or the creator before the engine thread starts). */
EngineBodyId engine_body_find(const Engine *engine, const char *name);
/* true when id is a body of this engine (issued by it, not null). Thread: engine. */
bool engine_body_valid(const Engine *engine, EngineBodyId id);
/* ISSIM_OK when id is a body of this engine; else ISSIM_ERR_RANGE for the null id or an index
 * this engine never issued, ISSIM_ERR_STALE for an id of another engine (a destroyed one, a
 * previous scene's), with a message naming the id. Thread: engine. */
IssimStatus engine_body_check(const Engine *engine, EngineBodyId id, IssimError *err);

/* Getters by id. An invalid id (engine_body_check fails) gives a sentinel, never another body:
 * NULL name, null ThingId, NAN mass, a state of NANs; callers holding ids from elsewhere check
 * them first. The name is Borrowed for the engine's lifetime. Thread: engine. */
const char *engine_body_name(const Engine *engine, EngineBodyId body);
ThingId engine_body_thing(const Engine *engine, EngineBodyId body);
EngineBodyState engine_body_state(const Engine *engine, EngineBodyId body);
double engine_body_mass(const Engine *engine, EngineBodyId body);
/* Principal moments of inertia, body frame, kg m^2 (NaN for an invalid id). */
Vec3 engine_body_inertia(const Engine *engine, EngineBodyId body);
/* Sets a transient wrench on a body (world frame, N and N m about its centre of mass), added to
 * its force/torque properties until set again; not part of the thing database or saved scenes.
 * For interaction: the GUI's drag spring, the haptic proxy's virtual coupling. A changed value
 * restarts the integrator at the current time (the force is piecewise constant per advance).
 * Thread: engine. Errors as engine_body_check (nothing changes for an invalid id), and
 * ISSIM_ERR_RANGE for a non-finite value. */
IssimStatus engine_set_applied_wrench(Engine *engine, EngineBodyId body, Vec3 force, Vec3 torque,
                                      IssimError *err);

/* Active contacts now. Returns the count written (<= max). */
int engine_contact_reports(const Engine *engine, ContactReport *out, int max);

/* One active force-law contact of a body with its model's parameters and history
 * (engine_contact_models.c): what a reader needs to evaluate the contact's force law itself
 * between engine steps (the haptic local models, docs/haptics.md). */
typedef struct EngineContactModelView {
    uint32_t id;                   /* the contact's id (ContactReport.id) */
    bool body_is_a;                /* the body asked for is the contact's body a (else b) */
    const ContactParams *params;   /* Borrowed until the engine's next step or edit */
    const ContactHistory *history; /* Borrowed as params; history->state: the model's state */
    ContactKinematics kin;         /* at the engine's time; normal from b into a */
    Vec3 point;                    /* world contact point */
    Vec3 other_vel;                /* velocity of the other body's material point at `point` */
} EngineContactModelView;

/* The active force-law contacts of body (complementarity rows have no force law and are left
 * out), up to max. Returns the count written; 0 for an invalid id. Thread: engine. */
int engine_body_contact_models(const Engine *engine, EngineBodyId body, EngineContactModelView *out,
                               int max);
/* The world normal (from b to a, as in ContactReport) of the active contact issued `id`; false
 * when no active contact has it. Callable from an event callback: at CONTACT_BEGIN the contact is
 * already active. Thread: engine. */
bool engine_contact_normal(const Engine *engine, uint32_t id, Vec3 *normal);
/* One report per smooth pair in reduced form (Kry's contact coordinates, engine_reduced_smooth),
 * which has no collision contact while reduced: the contact point, the obstacle's normal, the
 * normal force and the contact force on a (friction included), depth 0, id 0, and patch = the
 * patch of a's surface holding the contact (002 6.2 draws it). Returns the count written
 * (<= max). Thread: engine. */
int engine_smooth_contact_reports(const Engine *engine, ContactReport *out, int max);
int engine_active_contact_count(const Engine *engine);
/* Pairs in reduced form now (reduced-coordinate resolvers, engine_resolver.h). */
int engine_reduced_pair_count(const Engine *engine);

typedef enum EngineEventKind {
    ENGINE_EVENT_CONTACT_BEGIN,
    ENGINE_EVENT_CONTACT_END,
    ENGINE_EVENT_EQUILIBRIUM, /* a contact entered equilibrium (its model reported it) */
    ENGINE_EVENT_SLEEP,       /* body entered equilibrium: frozen, no longer integrated */
    ENGINE_EVENT_WAKE,        /* body left equilibrium: integrated again (body_b: the body that
                                 woke it, or -1 for an edit, a reset or a force change) */
} EngineEventKind;

typedef struct EngineEvent {
    EngineEventKind kind;
    double t;
    int body;
    int body_b;   /* the other body of a body-body contact, or -1 */
    int vertex;   /* contact vertex of a "points" body, or -1 */
    int obstacle; /* obstacle of a body-obstacle contact, or -1 */
    uint32_t contact_id;
    double normal_velocity; /* relative normal velocity of the vertex, m/s (< 0 approaching) */
    double duration;        /* CONTACT_END: time since the matching CONTACT_BEGIN, s */
} EngineEvent;

/* Transient: the event is valid during the call. Called on the engine thread. */
typedef void (*EngineEventFn)(const EngineEvent *event, void *user);
void engine_set_event_callback(Engine *engine, EngineEventFn fn, void *user);
/* Sets EngineOptions.on_step and its user pointer (fn NULL: none). Thread: engine. */
void engine_set_step_observer(Engine *engine, void (*fn)(const Engine *, void *), void *user);
/* Sets EngineOptions.should_stop and its user pointer (fn NULL: none). Thread: engine, or
 * while no thread runs the engine. */
void engine_set_stop_check(Engine *engine, bool (*fn)(void *), void *user);

typedef struct EngineEnergy {
    double kinetic, potential, elastic, total; /* J; elastic: stored in contact springs */
} EngineEnergy;

/* The energies at the current state. Thread: engine (it fills the engine's per-body state
 * cache, the right-hand side's, which is free between steps). */
EngineEnergy engine_energy(const Engine *engine);

/* ===== Equilibrium and sleeping (004 4.8.5, App. C, App. E) =====
 *
 * A body enters equilibrium at the end of an accepted step when it touches something, every one
 * of its active contacts is in equilibrium by its model (CONTACT_EVENT_EQUILIBRIUM from commit(),
 * held while the model's history says so: 004 Fig. 4.15, slow and inside the band of eq. 4.91),
 * and its own speed (linear, plus angular times its reach) is below EngineOptions.sleep_speed
 * (default: the smallest velocity_tolerance of its contacts). A body with a collision shape must
 * also have stayed so for ENGINE_SETTLE_TIME (0.02 s): its contacts' loads come from App. C's
 * constraint forces kept in each contact's band, and only its staying still shows that they
 * balance it. Its velocities are then set to zero (App. C: "set all of its derivatives to
 * zero") and it leaves the integrated system: no right-hand side, no state in the integrator,
 * no evaluation of its contacts with obstacles and other sleeping bodies. A model that never
 * reports equilibrium (spring/damper) never lets a body sleep, unless the universe's "sleep"
 * property is "still": then a body on such contacts sleeps once slower than 1 mm/s (or
 * sleep_speed) for ENGINE_SETTLE_TIME, as time-stepped islands do; "never" turns sleeping off.
 *
 * Its equilibrium list is the bodies it shares constraint forces with (active contacts); fixed
 * obstacles are never on a list and never propagate (App. E.3.2). A sleeping body wakes when
 *   - a touching awake body moves faster than their contact's velocity tolerance, or a contact
 *     begins at such a speed (an interactive collision): that body alone;
 *   - an edit changes it (any property, its applied wrench): it and the bodies on its list;
 *   - an edit changes the universe, an obstacle or a contact pair: every body;
 *   - the state is restored (engine_restore_vars): every body.
 * A woken body that then moves wakes its own neighbours the same way. Sleep and wake are
 * reported as events (ENGINE_EVENT_SLEEP, ENGINE_EVENT_WAKE) and counted in EngineStats. */

bool engine_body_asleep(const Engine *engine, int body);
/* Time the body entered equilibrium, or -1 when awake. */
double engine_body_sleep_time(const Engine *engine, int body);
int engine_awake_body_count(const Engine *engine);

/* ===== Collision manager thread ===== */

/* Moves the collision world of the shaped bodies to its own thread (000 App. B.4.3): the thread
 * reads poses from reg's newest frame (the frames this engine publishes) and publishes
 * contacts; engine_advance then uses the newest report instead of updating the world itself.
 * Without it (headless, lock-step) the engine runs the world before every step, synchronously.
 * No-op without shaped bodies, and when the universe's collision_thread says the engine's own
 * thread (off; auto below ENGINE_COLLISION_THREAD_MIN_BODIES shaped bodies: there the hand-over
 * of poses and reports costs more than the update it overlaps). Timing contract:
 * docs/architecture.md. */
#define ENGINE_COLLISION_THREAD_MIN_BODIES 64
IssimStatus engine_start_collision_thread(Engine *engine, Registry *reg, IssimError *err);
/* Whether the collision world runs on the manager's own thread now. */
bool engine_collision_threaded(const Engine *engine);
/* Stops the thread and returns to synchronous updates. Idempotent. */
void engine_stop_collision_thread(Engine *engine);

#endif
