/* issim state registry: the one clearing house between threads (000 App. B.4.2).
 *
 * It holds
 *  - state frames: (t, values[var_count]) published by the engine, in time order. The newest
 *    frame's time is the state time (the greatest time at which all state is known). Frames
 *    ahead of the consumers' display time are future states; the ring of frames is also the
 *    bounded trajectory history of every variable;
 *  - slots: small fixed vectors of user/external state (pointer, haptic handle), transport
 *    commands and engine statistics, each with exactly one writer; besides its values a slot
 *    has a few 64-bit id words, so object ids (a dragged body, the haptic proxy) cross threads
 *    whole, never through a double;
 *  - contact reports, published by the engine (later: the collision manager);
 *  - the edit queue: property edits submitted by any thread, applied by the engine between
 *    steps, each accepted or rejected with a reason.
 *
 * Concurrency contract (docs/architecture.md has the long form):
 *  - Frames: ONE writer (the engine thread) calls registry_publish / registry_rewind. Any number
 *    of readers call the read functions concurrently. Readers never block the writer and the
 *    writer never waits for readers: every frame slot is a sequence lock; a reader copies and
 *    retries if the writer overwrote the slot meanwhile. Values are stored as relaxed atomics so
 *    the protocol is race-free under the C11 memory model (ThreadSanitizer-clean).
 *  - Slots: one writer per slot (stated per slot below), any number of readers, same seqlock.
 *  - Contacts: one writer (engine), any readers, same seqlock over a double buffer.
 *  - Edit queue: multiple producers (GUI, scripts, devices; never the servo), one consumer (the
 *    engine). Bounded, lock-free (ticketed ring); submit fails when full instead of blocking.
 *  - No function here takes a lock. The 1 kHz servo may call every read function and
 *    registry_slot_write on its own slot.
 *  - Creation, registry_add_var and destruction happen before threads start / after they join.
 */
#ifndef ISSIM_REGISTRY_H
#define ISSIM_REGISTRY_H

#include "issim/core.h"
#include "issim/math.h"

typedef struct Registry Registry;
typedef struct RegistryBoard RegistryBoard;

typedef struct RegistryDesc {
    int history_frames; /* ring capacity in frames (>= 2); default 8192 */
    int max_vars;       /* capacity for registry_add_var; default 1024 */
    int max_contacts;   /* contact reports per publication; default 1024 */
    int edit_capacity;  /* edit queue capacity (rounded up to a power of 2); default 256 */
    size_t board_bytes; /* room of the board (below), bytes; default 256 KiB */
} RegistryDesc;

RegistryDesc registry_desc_default(void);
Registry *registry_create(const RegistryDesc *desc, IssimError *err);
void registry_destroy(Registry *reg);

/* ===== Variables (set-up only: before any frame is published) ===== */

/* Declares a state variable "bar.pos.z" with unit "m". Returns its index, or -1 (capacity,
 * duplicate name) with err filled. The name and unit are copied. */
int registry_add_var(Registry *reg, const char *name, const char *unit, IssimError *err);
int registry_var_count(const Registry *reg);
/* Borrowed, valid for the registry's lifetime. */
const char *registry_var_name(const Registry *reg, int var);
const char *registry_var_unit(const Registry *reg, int var);
/* -1 if absent. */
int registry_var_find(const Registry *reg, const char *name);

/* A variable held by another module or thread across calls: its index and the generation of
 * the registry that issued it, a process-wide serial taken at registry_create (never 0). A
 * plain index means "the i-th variable of whatever registry I am given": after a scene change
 * it names another variable, or none. A RegistryVarId is valid for its own registry only, and
 * the functions taking one check it. The zero-initialised id is the null id. Variables are
 * declared before frames are published and never removed, so an id stays valid for the
 * registry's lifetime. */
typedef struct RegistryVarId {
    int32_t index;       /* 0 .. registry_var_count - 1 of the issuing registry */
    uint32_t generation; /* the issuing registry's serial; 0: the null id */
} RegistryVarId;

static inline bool registry_var_id_is_null(RegistryVarId id) {
    return id.generation == 0;
}

/* The id of the variable called name ("box.pos.x"); the null id if absent. Thread: any. */
RegistryVarId registry_var_id(const Registry *reg, const char *name);
/* The id of the var-th variable (0 .. registry_var_count - 1); the null id out of range.
 * Thread: any. */
RegistryVarId registry_var_id_at(const Registry *reg, int var);
/* true when id is a variable of this registry (issued by it, not null). Thread: any. */
bool registry_var_valid(const Registry *reg, RegistryVarId id);
/* ISSIM_OK when id is a variable of this registry; else ISSIM_ERR_RANGE for the null id or an
 * index this registry never issued, ISSIM_ERR_STALE for an id of another registry, with a
 * message naming the id. Thread: any. */
IssimStatus registry_var_check(const Registry *reg, RegistryVarId id, IssimError *err);

/* ===== Frames: state, future states, history ===== */

/* Publishes the state at time t (values has var_count entries). t must be greater than the
 * previous frame's time (after a rewind: greater than the rewind time). Never blocks; the
 * oldest frame is overwritten when the ring is full. Thread: engine (single writer). */
void registry_publish(Registry *reg, double t, const double *values);
/* Discards every frame with time > t (future states invalidated by an edit or reset). The
 * frame at time <= t, if any, stays the newest. Thread: engine (single writer). */
void registry_rewind(Registry *reg, double t);
/* Discards all frames. Thread: engine (single writer). */
void registry_clear(Registry *reg);

/* A frame copy. values must point to var_count doubles owned by the caller. */
typedef struct RegistryFrame {
    double t;
    uint64_t index; /* monotonically increasing publication index (rewinds reuse indices) */
    double *values;
} RegistryFrame;

/* State time: time of the newest frame, or NAN when none. Thread: any. */
double registry_state_time(const Registry *reg);
/* Time of the oldest frame still held, or NAN. Thread: any. */
double registry_history_start(const Registry *reg);
/* Copies the newest frame. false when there is none. Thread: any; lock-free, bounded retries
 * (returns false only if the registry is empty). */
bool registry_read_latest(const Registry *reg, RegistryFrame *out);
/* Copies the newest frame with time <= t (the state at display time t). false when no such
 * frame is held (t before the history start, or empty). Thread: any. */
bool registry_read_at(const Registry *reg, double t, RegistryFrame *out);
/* Copies the oldest frame with time > t (walking the committed trajectory frame by frame: the
 * GUI's recorder). false when no such frame is held. Thread: any. */
bool registry_read_after(const Registry *reg, double t, RegistryFrame *out);
/* Copies up to max samples of one variable with t0 <= time <= t1, oldest first, into times
 * and values (either may be NULL). Returns the count. Thread: any. */
int registry_history(const Registry *reg, int var, double t0, double t1, double *times,
                     double *values, int max);
/* The value of var in frame, a copy read from this registry: NAN when var is not a variable
 * of this registry (registry_var_valid), so a stale id never reads another variable.
 * Thread: any. */
double registry_frame_value(const Registry *reg, const RegistryFrame *frame, RegistryVarId var);

/* ===== Slots: user/external state, transport, statistics ===== */

typedef enum RegistrySlotId {
    REGISTRY_SLOT_POINTER,      /* writer: display. mouse ray, picked thing, drag target */
    REGISTRY_SLOT_HANDLE,       /* writer: haptic servo. handle position, velocity, force */
    REGISTRY_SLOT_TRANSPORT,    /* writer: display/CLI. paused, speed factor, step requests */
    REGISTRY_SLOT_ENGINE_STATS, /* writer: engine thread. steps, step time, rates, warnings */
    REGISTRY_SLOT_SERVO_STATS,  /* writer: haptic servo. rate and lateness percentiles */
    REGISTRY_SLOT_COUNT
} RegistrySlotId;

#define REGISTRY_SLOT_VALUES 40 /* the servo statistics: 40 */
#define REGISTRY_SLOT_IDS 4

/* A slot's contents. Values are doubles; ids are whole 64-bit words for what must not go
 * through a double: packed object ids (an EngineBodyId by engine_body_id_pack), 0 for none.
 * Both are written and read together, under the slot's latch. */
typedef struct RegistrySlot {
    double t;       /* writer's time stamp (simulated or wall, per slot) */
    uint64_t count; /* number of writes so far; 0 = never written */
    double v[REGISTRY_SLOT_VALUES];
    uint64_t ids[REGISTRY_SLOT_IDS];
} RegistrySlot;

/* Stores t and v, and zeroes the id words (count is set by the registry). Thread: the slot's
 * single writer. */
void registry_slot_write(Registry *reg, RegistrySlotId slot, double t, const double *v, int n);
/* Stores t, v and the id words ids[0 .. n_ids) (the rest zero) as one write: a reader sees the
 * ids and values of the same write. Thread: the slot's single writer. */
void registry_slot_write_ids(Registry *reg, RegistrySlotId slot, double t, const double *v, int n,
                             const uint64_t *ids, int n_ids);
/* Copies the slot. Thread: any; never blocks. */
void registry_slot_read(const Registry *reg, RegistrySlotId slot, RegistrySlot *out);

/* The registry carries slots as opaque values: each slot's layout is private to its writer's
 * module, which gives it a typed struct with pack and unpack functions (no other file indexes
 * v[] or ids[]). POINTER and ENGINE_STATS: sim.h (SimPointer, SimEngineStats); HANDLE and
 * SERVO_STATS: haptics_servo.h (HapticHandleState, HapticServoStats). */

/* ===== Contact reports ===== */

/* Bodies are packed EngineBodyIds (engine.h: engine_body_id_unpack, then engine_body_valid on
 * the engine thread, or a comparison with ids taken before it started): a report read on
 * another thread, or after its scene was replaced, can never name another engine's body. */
typedef struct ContactReport {
    uint32_t id;         /* issued by the engine at onset and kept while the contact lasts; never
                            reused by that engine (a run), so it names one contact of the run */
    int32_t obstacle;    /* obstacle index when body_b is 0, else -1 */
    uint64_t body_a;     /* packed EngineBodyId */
    uint64_t body_b;     /* packed EngineBodyId, or 0 for a fixed obstacle */
    Vec3 point;          /* world */
    Vec3 normal;         /* world, from b to a */
    double depth;        /* penetration, m (> 0 when interpenetrating) */
    double depth_rate;   /* d(depth)/dt, m/s */
    double normal_force; /* N, on a along normal */
    Vec3 force;          /* N, total contact force on a, world */
    int32_t patch;       /* smooth contact (engine_smooth_contact_reports): the patch of a's
                            surface holding it; -1 for every other contact */
    int32_t stepped;     /* 1: resolved by a time-stepping solver (complementarity): the forces
                            are the last time step's impulse over its length, constant over that
                            step; 0: a force law's at the report's instant */
} ContactReport;

/* Publishes the contacts at time t (n <= max_contacts; extra are dropped and counted).
 * Thread: engine (single writer). */
void registry_publish_contacts(Registry *reg, double t, const ContactReport *contacts, int n);
/* Copies up to max reports; returns their number and the time they belong to. Thread: any. */
int registry_read_contacts(const Registry *reg, double *t, ContactReport *out, int max);

/* ===== Board: one block of bytes published whole =====
 * Writer: the engine thread (sim_thread.c: the haptic local models of the proxy's contacts,
 * haptics_local.h, which owns the layout). Readers: any (the servo), lock-free; the block is
 * plain data (no pointers a reader may follow unless its layout says they outlive the board). */

/* Room for one block, bytes (RegistryDesc.board_bytes). Thread: any. */
size_t registry_board_capacity(const Registry *reg);
/* Publishes bytes of data at time t; false (nothing published) when it exceeds the room.
 * Thread: the board's single writer. */
bool registry_board_publish(Registry *reg, double t, const void *data, size_t bytes);
/* Copies the newest block into out (at most max bytes) if it is not publication *seen, which it
 * then becomes; returns the bytes copied, 0 when nothing new (or nothing published), and its
 * time in *t (Nullable). Thread: any; never blocks. */
size_t registry_board_read(const Registry *reg, uint64_t *seen, double *t, void *out, size_t max);
/* The writer's heartbeat (a wall time it stores while alive, also between publications), NAN
 * before the first. Thread: beat by the single writer, read by any. */
void registry_board_beat(Registry *reg, double wall);
double registry_board_heartbeat(const Registry *reg);

/* ===== Edit queue ===== */

#define REGISTRY_EDIT_PATH_MAX 128
#define REGISTRY_EDIT_VALUE_MAX 512

typedef struct RegistryEdit {
    uint64_t id;                         /* > 0, unique per registry */
    double wall_submit;                  /* issim_wall_time() at submission */
    char path[REGISTRY_EDIT_PATH_MAX];   /* "bar.mass" */
    char value[REGISTRY_EDIT_VALUE_MAX]; /* text, parsed by the thing database */
} RegistryEdit;

typedef enum RegistryEditState {
    REGISTRY_EDIT_UNKNOWN, /* id never issued, or its result was evicted */
    REGISTRY_EDIT_PENDING, /* queued, not yet applied */
    REGISTRY_EDIT_ACCEPTED,
    REGISTRY_EDIT_REJECTED,
} RegistryEditState;

typedef struct RegistryEditResult {
    uint64_t id;
    RegistryEditState state;
    double sim_time;   /* engine time at which the edit took effect (accepted) */
    double wall_apply; /* wall time when the engine resolved it */
    char reason[256];  /* rejection reason, or empty */
} RegistryEditResult;

/* Queues an edit. Returns its id (> 0), or 0 when the queue is full or the strings are too
 * long (err says which). Thread: any producer except the servo. Lock-free. */
uint64_t registry_edit_submit(Registry *reg, const char *path, const char *value, IssimError *err);
/* Pops the oldest edit. false when empty. Thread: engine (single consumer). */
bool registry_edit_pop(Registry *reg, RegistryEdit *out);
/* Records the outcome of an edit. Thread: engine. */
void registry_edit_resolve(Registry *reg, uint64_t id, bool accepted, double sim_time,
                           const char *reason);
/* Reads the outcome of an edit. Results of the last edit_capacity resolutions are kept.
 * Thread: any. */
RegistryEditState registry_edit_result(const Registry *reg, uint64_t id, RegistryEditResult *out);
/* Number of edits waiting. Thread: any (approximate while producers run). */
int registry_edit_pending(const Registry *reg);

#endif
