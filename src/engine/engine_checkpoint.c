/* Checkpoints: the engine's dynamic state kept with every published frame, so a rewind resumes
 * with contact memory intact (engine.h, "Checkpoints"; docs/architecture.md, "contact state").
 *
 * Every frame gets a record. A *key* record holds, in order (each part aligned to 16 bytes): a
 * header with a copy of EngineData, the raw state vector (the frames hold normalised quaternions,
 * which would change the last bits), every body's EngineBodyData, the active reduced-pair slots
 * (an inactive one holds nothing a restore needs: entering a pair fills it), the
 * contact array (each contact up to its parameters), the contact-state pool's bytes below its end,
 * and the collision world's identity (the contacts of the last merged report and the world's id
 * counter), then, with the universe's collision_coherence on and the synchronous world, the
 * world's coherence state (collision_world_save_coherence: what its choice to refresh a pair
 * from anchors instead of testing it in full reads). The frames between two keys keep only their
 * time: a restore to one of them restores the key before it and replays the output steps to it
 * (engine_advance with the synchronous collision world and no events), which in lock-step gives
 * back the same bits.
 *
 * Why keys and replays: a key costs a memcpy of its size into a ring far larger than the caches,
 * which for a large pile is a visible share of a published frame. A key every k frames, k chosen so
 * that keys average CHECKPOINT_KEY_BYTES_PER_FRAME, brings that under 1%, and a rewind then replays
 * up to k - 1 frames. Anything that changes the engine outside engine_advance (an edit, an applied
 * wrench, a restart) forces the next record to be a key, because a replay from an older key would
 * not see it. docs/performance.md has the figures.
 *
 * The key records sit in one byte ring in time order; a new key goes after the newest, wrapping
 * to the start when the end is reached, and drops the oldest records it overlaps (with the
 * replayed frames that depended on them). The ring is mapped and its first 16 MiB populated: a
 * first write into fresh pages costs a page fault per 4 kB. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine_internal.h"

typedef struct CheckpointHeader {
    EngineData data; /* whole: a field added to EngineData is rewound without a line here */
    int state_size, body_count, contact_count, identity_count;
    size_t pool_end, coherence_bytes;
    uint32_t identity_next_id;
    unsigned reduced_active; /* bit s: slot s was active, and saved */
    bool integrator_dirty;
} CheckpointHeader;

/* Keys average at most this many bytes per frame (the others replay from them). */
#define CHECKPOINT_KEY_BYTES_PER_FRAME 8192
#define CHECKPOINT_KEY_EVERY_MAX 32
/* A key at most every fourth frame even when it is small: a key is a copy into memory the caches
 * have not seen, a visible share of a frame of a few microseconds (point_drop.lua), while
 * replaying the frames between keys costs a step each, microseconds in such a scene
 * (docs/performance.md, "Engine model and data"). */
#define CHECKPOINT_KEY_EVERY_MIN 4

static size_t align16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

/* A contact is saved whole. Its parameters belong to the pair (EngineContact.param_set), so a
 * restore binds them again: a rewind across an edit of the pair keeps the edit. */
#define CONTACT_SAVED_BYTES sizeof(EngineContact)

_Static_assert(ENGINE_REDUCED_SLOTS <= 32, "CheckpointHeader.reduced_active has 32 bits");

static unsigned reduced_active(const Engine *e) {
    unsigned mask = 0;
    for (int s = 0; s < e->reduced.slot_count; s++)
        if (e->reduced.slot[s].active)
            mask |= 1u << s;
    return mask;
}

static int bit_count(unsigned mask) {
    int n = 0;
    for (; mask; mask &= mask - 1)
        n++;
    return n;
}

static size_t record_bytes(const Engine *e, int contacts, int identity, size_t coherence) {
    return align16(sizeof(CheckpointHeader)) +
           align16(sizeof(double) * (size_t)e->model.layout.state_size) +
           align16(sizeof(EngineBodyData) * (size_t)e->model.body_count) +
           align16(sizeof(EngineReducedSlot) * (size_t)bit_count(reduced_active(e))) +
           align16(CONTACT_SAVED_BYTES * (size_t)contacts) + align16(e->pool.end) +
           align16(sizeof(CollisionContact) * (size_t)identity) + align16(coherence);
}

/* The collision world's coherence state, when it is the engine's and its last update is the
 * identity kept (the synchronous world: lock-step and replays). The manager thread's world may
 * be updates ahead of the merged report and is not the engine's to read: its keys hold none, and
 * a restore from them tests every pair in full once. */
static size_t coherence_size(const Engine *e) {
    if (!e->collide.world || e->collide.registry || engine_pipeline_running(e))
        return 0;
    return collision_world_coherence_size(e->collide.world);
}

static size_t record_size(const Engine *e) {
    return record_bytes(e, e->contact_count, e->checkpoints.identity_count, coherence_size(e));
}

/* The first CHECKPOINT_POPULATE_BYTES of the ring get their pages now, because a first write into
 * a fresh page costs a fault and the kernel's zeroing inside a step; the rest, only reached after
 * that many bytes of keys, as written: populating a whole 128 MiB ring would take its memory and
 * time at every scene opened (docs/performance.md, "Checkpoints"). */
#define CHECKPOINT_POPULATE_BYTES ((size_t)16 << 20)

static void populate(unsigned char *arena, size_t bytes) {
    size_t n = bytes < CHECKPOINT_POPULATE_BYTES ? bytes : CHECKPOINT_POPULATE_BYTES;
#ifdef MADV_POPULATE_WRITE
    if (madvise(arena, n, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    memset(arena, 0, n); /* kernels before 5.14 */
}

IssimStatus engine_enable_checkpoints(Engine *e, int max_frames, size_t max_bytes,
                                      IssimError *err) {
    CheckpointRing *ring = &e->checkpoints;
    if (max_frames < 1 || max_bytes < 4096)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "checkpoints need at least 1 frame and 4096 bytes (got %d, %zu)",
                               max_frames, max_bytes);
    engine_checkpoints_free(e);
    /* Sized for max_frames records of a scene with about eight contacts per body (a pile), at
     * most max_bytes. */
    int guess =
        e->contact_count > 8 * e->model.body_count ? e->contact_count : 8 * e->model.body_count;
    size_t want = (size_t)max_frames * record_bytes(e, guess, guess, 0);
    size_t bytes = want < max_bytes ? (want > 4096 ? want : 4096) : max_bytes;
    void *arena = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena != MAP_FAILED) {
        ring->arena = arena;
        ring->mapped = true;
        populate(arena, bytes);
    } else {
        ring->arena = malloc(bytes);
    }
    max_bytes = bytes;
    ring->records = calloc((size_t)max_frames, sizeof *ring->records);
    if (!ring->arena || !ring->records) {
        engine_checkpoints_free(e);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for %zu bytes of checkpoints",
                               max_bytes);
    }
    ring->capacity = max_bytes;
    ring->max_records = max_frames;
    return ISSIM_OK;
}

void engine_checkpoints_free(Engine *e) {
    if (e->checkpoints.mapped)
        munmap(e->checkpoints.arena, e->checkpoints.capacity);
    else
        free(e->checkpoints.arena);
    free(e->checkpoints.records);
    free(e->checkpoints.identity);
    e->checkpoints.identity = NULL;
    e->checkpoints.identity_count = e->checkpoints.identity_capacity = 0;
    memset(&e->checkpoints, 0, sizeof e->checkpoints);
}

void engine_keep_identity(Engine *e, const CollisionContact *contacts, int count,
                          uint32_t next_id) {
    if (!e->checkpoints.arena)
        return;
    if (!ISSIM_ARRAY_RESERVE(e->checkpoints.identity, e->checkpoints.identity_capacity, count)) {
        e->checkpoints.identity_count =
            0; /* a restore then restarts the histories of shaped contacts */
        return;
    }
    if (count > 0)
        memcpy(e->checkpoints.identity, contacts, sizeof *contacts * (size_t)count);
    e->checkpoints.identity_count = count;
    e->checkpoints.identity_next_id = next_id;
}

static CheckpointRecord *record_at(CheckpointRing *ring, int i) {
    int j = ring->first + i; /* i < max_records: no division on this per-frame path */
    return &ring->records[j >= ring->max_records ? j - ring->max_records : j];
}

/* Drops the records at time >= t (the future an edit or a republication replaces). */
static void drop_from(CheckpointRing *ring, double t) {
    while (ring->count > 0 && record_at(ring, ring->count - 1)->t >= t)
        ring->count--;
}

/* Drops the oldest record, and the replayed frames that needed it as their key. */
static void drop_oldest(CheckpointRing *ring) {
    do {
        ring->first = ring->first + 1 == ring->max_records ? 0 : ring->first + 1;
        ring->count--;
    } while (ring->count > 0 && !record_at(ring, 0)->key);
}

/* The newest key record, or NULL. */
static const CheckpointRecord *newest_key(CheckpointRing *ring) {
    for (int i = ring->count - 1; i >= 0; i--)
        if (record_at(ring, i)->key)
            return record_at(ring, i);
    return NULL;
}

/* Where a key of `bytes` goes: after the newest key, or at the start of the arena if it does not
 * fit before the end; the oldest records overlapping it are dropped. */
static size_t place_key(CheckpointRing *ring, size_t bytes) {
    size_t at = 0;
    const CheckpointRecord *newest = newest_key(ring);
    if (newest) {
        at = newest->offset + newest->bytes;
        if (at + bytes > ring->capacity)
            at = 0;
    }
    while (ring->count > 0) {
        const CheckpointRecord *oldest = record_at(ring, 0);
        bool overlaps = oldest->offset < at + bytes && at < oldest->offset + oldest->bytes;
        if (!overlaps && ring->count < ring->max_records)
            break;
        drop_oldest(ring);
    }
    return at;
}

/* Makes room for one more record (the ring of records is full). */
static void make_room(CheckpointRing *ring) {
    while (ring->count >= ring->max_records)
        drop_oldest(ring);
}

static unsigned char *put(unsigned char *at, const void *src, size_t bytes) {
    if (bytes > 0)
        memcpy(at, src, bytes);
    return at + align16(bytes);
}

static void copy_pool(const Engine *e, unsigned char *dst, const unsigned char *src) {
    if (e->pool.end == 0)
        return; /* no model-owned state (and no arena yet) */
    memcpy(dst, src, e->pool.end);
    if (!engine_models_have_copy_hooks(e))
        return;
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        const ContactModelClass *model = engine_contact_model(e, c);
        if (c->state_bytes > 0 && model->copy)
            model->copy(engine_contact_params(e, c), dst + c->state_offset, src + c->state_offset,
                        c->state_bytes);
    }
}

static void write_key(Engine *e, unsigned char *p, size_t bytes) {
    const unsigned char *start = p;
    CheckpointHeader h = {.data = e->data,
                          .state_size = e->model.layout.state_size,
                          .body_count = e->model.body_count,
                          .contact_count = e->contact_count,
                          .identity_count = e->checkpoints.identity_count,
                          .pool_end = e->pool.end,
                          .coherence_bytes = coherence_size(e),
                          .identity_next_id = e->checkpoints.identity_next_id,
                          .reduced_active = reduced_active(e),
                          .integrator_dirty = e->integration.dirty};
    p = put(p, &h, sizeof h);
    p = put(p, e->y, sizeof(double) * (size_t)e->model.layout.state_size);
    p = put(p, e->body_data, sizeof(EngineBodyData) * (size_t)e->model.body_count);
    EngineReducedSlot *slots = (EngineReducedSlot *)p;
    for (int s = 0, n = 0; s < e->reduced.slot_count; s++)
        if (h.reduced_active & 1u << s)
            slots[n++] = e->reduced.slot[s];
    p += align16(sizeof(EngineReducedSlot) * (size_t)bit_count(h.reduced_active));
    for (int ci = 0; ci < e->contact_count; ci++)
        memcpy(p + CONTACT_SAVED_BYTES * (size_t)ci, &e->contacts[ci], CONTACT_SAVED_BYTES);
    p += align16(CONTACT_SAVED_BYTES * (size_t)e->contact_count);
    copy_pool(e, p, e->pool.bytes);
    p += align16(e->pool.end);
    p = put(p, e->checkpoints.identity,
            sizeof(CollisionContact) * (size_t)e->checkpoints.identity_count);
    IssimError err;
    if (h.coherence_bytes > 0 &&
        collision_world_save_coherence(e->collide.world, p, bytes - (size_t)(p - start), &err) !=
            ISSIM_OK)
        issim_fatal("checkpoint: %s", err.message); /* record_size counted these bytes */
}

/* A key every k frames, so that keys average CHECKPOINT_KEY_BYTES_PER_FRAME bytes a frame, and
 * at most every CHECKPOINT_KEY_EVERY_MIN frames. */
static int key_interval(const CheckpointRing *ring, size_t bytes) {
    if (ring->key_every > 0)
        return ring->key_every;
    size_t k = (bytes + CHECKPOINT_KEY_BYTES_PER_FRAME - 1) / CHECKPOINT_KEY_BYTES_PER_FRAME;
    return k < CHECKPOINT_KEY_EVERY_MIN   ? CHECKPOINT_KEY_EVERY_MIN
           : k > CHECKPOINT_KEY_EVERY_MAX ? CHECKPOINT_KEY_EVERY_MAX
                                          : (int)k;
}

void engine_checkpoint(Engine *e) {
    CheckpointRing *ring = &e->checkpoints;
    if (!ring->arena)
        return;
    drop_from(ring, e->data.t);
    /* The spacing comes from the newest key's size, so a frame between keys costs no more than
     * its record: measuring the record here would cost a frame of a small scene as much again. */
    bool key = ring->count == 0 || e->checkpoints.replay_broken || !newest_key(ring) ||
               ring->since_key + 1 >= ring->interval;
    e->checkpoints.replay_broken = false;
    CheckpointRecord r = {.t = e->data.t, .model_generation = e->model.generation, .key = key};
    if (key) {
        size_t bytes = record_size(e);
        ring->interval = key_interval(ring, bytes);
        if (bytes > ring->capacity) {
            if (!ring->full_warned)
                issim_log(ISSIM_LOG_WARN,
                          "a checkpoint needs %zu bytes, more than the %zu of the ring: rewinds "
                          "restart contact histories",
                          bytes, ring->capacity);
            ring->full_warned = true;
            ring->count = 0; /* nothing older may be replayed across this frame */
            return;
        }
        r.offset = place_key(ring, bytes);
        r.bytes = bytes;
        write_key(e, ring->arena + r.offset, bytes);
        ring->since_key = 0;
        e->stats.checkpoints++;
    } else {
        ring->since_key++;
    }
    make_room(ring);
    ring->count++;
    *record_at(ring, ring->count - 1) = r;
}

void engine_set_checkpoint_keys(Engine *e, int every) {
    e->checkpoints.key_every = every > 0 ? every : 0;
    e->checkpoints.interval = e->checkpoints.key_every; /* 0: the next frame is a key */
}

/* Index of the record at time t, or -1. */
static int find_record(CheckpointRing *ring, double t) {
    for (int i = ring->count - 1; i >= 0; i--) {
        const CheckpointRecord *r = record_at(ring, i);
        if (r->t == t)
            return i;
        if (r->t < t)
            break;
    }
    return -1;
}

bool engine_has_checkpoint(const Engine *e, double t) {
    CheckpointRing *ring = (CheckpointRing *)&e->checkpoints; /* read only */
    return ring->arena && find_record(ring, t) >= 0;
}

size_t engine_checkpoint_bytes(const Engine *e) {
    size_t total = 0;
    for (int i = 0; i < e->checkpoints.count; i++)
        total +=
            e->checkpoints.records[(e->checkpoints.first + i) % e->checkpoints.max_records].bytes;
    return total;
}

static bool reserve_pool(Engine *e, size_t end) {
    if (end <= e->pool.capacity)
        return true;
    unsigned char *p = realloc(e->pool.bytes, end);
    if (!p)
        return false;
    e->pool.bytes = p;
    e->pool.capacity = end;
    return true;
}

/* Puts the engine back into the state of key record r. */
static bool restore_key(Engine *e, const CheckpointRecord *r) {
    const unsigned char *p = e->checkpoints.arena + r->offset;
    CheckpointHeader h;
    memcpy(&h, p, sizeof h);
    if (h.state_size != e->model.layout.state_size || h.body_count != e->model.body_count ||
        !engine_reserve_contacts(e, h.contact_count + 1) || !reserve_pool(e, h.pool_end))
        return false;
    p += align16(sizeof h);
    memcpy(e->y, p, sizeof(double) * (size_t)e->model.layout.state_size);
    p += align16(sizeof(double) * (size_t)e->model.layout.state_size);
    memcpy(e->body_data, p, sizeof(EngineBodyData) * (size_t)e->model.body_count);
    p += align16(sizeof(EngineBodyData) * (size_t)e->model.body_count);
    const EngineReducedSlot *slots = (const EngineReducedSlot *)p;
    for (int s = 0, n = 0; s < e->reduced.slot_count; s++) {
        if (h.reduced_active & 1u << s)
            e->reduced.slot[s] = slots[n++];
        else
            e->reduced.slot[s].active = false;
    }
    p += align16(sizeof(EngineReducedSlot) * (size_t)bit_count(h.reduced_active));
    for (int ci = 0; ci < h.contact_count; ci++) {
        EngineContact *c = &e->contacts[ci];
        memcpy(c, p + CONTACT_SAVED_BYTES * (size_t)ci, CONTACT_SAVED_BYTES);
        if (engine_contact_bind_params(e, c, NULL) != ISSIM_OK)
            return false; /* out of memory: the masses were checked when the pair was built */
    }
    e->contact_count = h.contact_count;
    p += align16(CONTACT_SAVED_BYTES * (size_t)h.contact_count);
    e->pool.end = h.pool_end;
    copy_pool(e, e->pool.bytes, p);
    p += align16(h.pool_end);
    engine_pool_rebuild(e);
    if (e->collide.world) {
        IssimError err;
        if (collision_world_restore_identity(e->collide.world, (const CollisionContact *)p,
                                             h.identity_count, h.identity_next_id,
                                             &err) != ISSIM_OK)
            issim_log(ISSIM_LOG_WARN, "restore: %s", err.message);
        engine_keep_identity(e, (const CollisionContact *)p, h.identity_count, h.identity_next_id);
        p += align16(sizeof(CollisionContact) * (size_t)h.identity_count);
        /* After the identity: the same update's coherence state, so the replay refreshes the
         * pairs the original refreshed (a key without it: every pair tested in full once). */
        if (collision_world_restore_coherence(e->collide.world, p, h.coherence_bytes, &err) !=
            ISSIM_OK)
            issim_log(ISSIM_LOG_WARN, "restore: %s", err.message);
    }
    e->data = h.data; /* its fixed step is recomputed (fixed_step_dirty) on the same grid */
    e->integration.dirty = h.integrator_dirty || e->model.integrator_kind != INTEGRATOR_RK4;
    engine_invalidate(e, ENGINE_INVALID_SLEEP | ENGINE_INVALID_FIXED_STEP);
    engine_refresh_awake(e);
    return true;
}

/* From the key at index `from` to the frame at index `to`: the output steps again, with the
 * synchronous collision world and without events (they happened already). */
static bool replay(Engine *e, int from, int to) {
    CheckpointRing *ring = &e->checkpoints;
    EngineEventFn fn = e->event_fn;
    e->event_fn = NULL;
    bool ok = true;
    for (int i = from + 1; i <= to && ok; i++) {
        IssimError err;
        ok = engine_advance(e, record_at(ring, i)->t, &err) == ISSIM_OK;
        if (!ok)
            issim_log(ISSIM_LOG_WARN, "replay to t = %.9g s failed: %s", record_at(ring, i)->t,
                      err.message);
        e->stats.replayed_frames++;
    }
    e->event_fn = fn;
    return ok;
}

bool engine_checkpoint_restore(Engine *e, double t) {
    CheckpointRing *ring = &e->checkpoints;
    if (!ring->arena)
        return false;
    int target = find_record(ring, t);
    int key = target;
    while (key >= 0 && !record_at(ring, key)->key)
        key--;
    if (target < 0 || key < 0)
        return false;
    /* The frames after the key were stepped under the model of the key's time; an edit since
     * (a rewind across it: undoing a branch's edit) would replay them under another, giving a
     * state that was never published. Then the frame's own values restart it instead
     * (engine_restore_vars). */
    if (target != key && record_at(ring, key)->model_generation != e->model.generation)
        return false;
    /* The world is the engine's own while it restores and replays (the manager thread would
     * work on frames of the discarded future). */
    Registry *reg = e->collide.registry;
    if (reg)
        engine_stop_collision_thread(e);
    engine_pipeline_stop(e);
    /* The replay collides on this thread: its frames may differ from pipelined originals by
     * the contacts' one-step lag, as they do after the GUI's threaded manager. */
    e->collide.pipeline.paused = true;
    bool ok = restore_key(e, record_at(ring, key)) && replay(e, key, target);
    e->collide.pipeline.paused = false;
    if (reg) {
        IssimError err;
        if (engine_start_collision_thread(e, reg, &err) != ISSIM_OK)
            issim_log(ISSIM_LOG_ERROR, "collision manager: %s", err.message);
    }
    if (!ok)
        return false;
    drop_from(ring, nextafter(t, INFINITY));
    ring->since_key = target - key;
    e->stats.restores++;
    return true;
}
