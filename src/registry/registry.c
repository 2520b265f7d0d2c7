/* State registry: creation, variables, and the frame ring (state, future states, history).
 *
 * Why the frame ring is built the way it is. The engine must never wait for a reader and the
 * 1 kHz servo must never wait for the engine, so there are no locks; instead every piece of
 * shared data is published through a sequence lock and readers validate what they copied.
 *
 * Each frame slot carries a sequence number that is odd while the engine is writing it; a reader
 * copies the slot between two reads of the sequence and keeps the copy only if both are equal and
 * even. The values are atomics, so a torn copy is a detected, harmless event rather than a data
 * race. What makes the check sound is ordering: the engine stores every word with release order
 * after making the sequence odd, and the reader loads every word with acquire order before
 * re-reading the sequence, so a reader that saw any word of a new write also sees the odd (or
 * later) sequence and discards its copy (Boehm, "Can seqlocks get along with programming language
 * memory models?", 2012, which also gives the fence formulation; fences are avoided because
 * ThreadSanitizer cannot check them, and on x86-64 both compile to plain moves).
 *
 * Which slots are held (indices [tail, head)) is not a single word, and a rewind moves head
 * backwards, so one index can name two different frames over time. The set of held frames is
 * therefore published as a view {head, tail, serial} in a latch: two copies, the engine writes
 * the idle one and then bumps view_version, a reader copies views[version & 1] and retries only
 * if the version moved. That gives every reader an atomic view without ever finding the view
 * half-written, so a reader never has to wait for the engine to finish anything. The serial
 * counts publications and is never reused; each slot records the serial that wrote it. Every
 * slot write after a reader's view carries a larger serial, so "index matches and serial <=
 * view.serial" proves the slot still holds the frame the view meant, even if a rewind and a
 * republish reused the index meanwhile. Before the engine overwrites the oldest frame it first
 * stores a view without it, so a reader's view never includes a slot being written: the newest
 * frame, in particular, is not touched again until the ring wraps or a rewind drops it. A reader
 * retries only when the engine completed work during its copy; after REGISTRY_READ_RETRIES such
 * laps in a row it gives up (practically never: the engine would have to wrap the ring each
 * time).
 *
 * The values of a frame live in one array of history_frames rows of value_stride words;
 * registry_add_var grows it geometrically (before publishing, so nothing is copied).
 */
#include "registry_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

RegistryDesc registry_desc_default(void) {
    return (RegistryDesc){
        .history_frames = 8192,
        .max_vars = 1024,
        .max_contacts = 1024,
        .edit_capacity = 256,
        .board_bytes = 256 * 1024,
    };
}

#define REGISTRY_MAX_HISTORY (1 << 24)
#define REGISTRY_MAX_VARS (1 << 20)
#define REGISTRY_MAX_CONTACTS (1 << 20)
#define REGISTRY_MAX_EDITS (1 << 20)

static size_t ring_bytes(size_t count, size_t size) {
    size_t bytes = count * size;
    bytes = (bytes + REGISTRY_CACHE_LINE - 1) / REGISTRY_CACHE_LINE * REGISTRY_CACHE_LINE;
    return bytes ? bytes : REGISTRY_CACHE_LINE;
}

/* Rings of a megabyte or more come from mmap: zeroed by the kernel page by page as they are first
 * written, where aligned_alloc + memset touched all of a 32 MiB history at every scene load
 * (most of a sweep's run of a few frames; docs/performance.md). Freed with ring_free and the same
 * byte count. */
#define REGISTRY_MMAP_BYTES ((size_t)1 << 20)

static void *ring_alloc(size_t bytes) {
    if (bytes >= REGISTRY_MMAP_BYTES) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    void *p = aligned_alloc(REGISTRY_CACHE_LINE, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

static void ring_free(void *p, size_t bytes) {
    if (p && bytes >= REGISTRY_MMAP_BYTES)
        munmap(p, bytes);
    else
        free(p);
}

static void *aligned_calloc(size_t count, size_t size) {
    return ring_alloc(ring_bytes(count, size));
}

static size_t frames_bytes(const Registry *reg) {
    return ring_bytes((size_t)reg->desc.history_frames, sizeof *reg->frames);
}

static size_t values_bytes(const Registry *reg, int stride) {
    return ring_bytes((size_t)reg->desc.history_frames * (size_t)stride, sizeof(uint64_t));
}

/* Process-wide; starts at 1 and skips 0 when it wraps, so no registry issues the null
 * generation. */
static atomic_uint_fast32_t registry_serials;

static uint32_t next_serial(void) {
    uint32_t serial;
    do
        serial = (uint32_t)(atomic_fetch_add(&registry_serials, 1) + 1);
    while (serial == 0);
    return serial;
}

Registry *registry_create(const RegistryDesc *desc, IssimError *err) {
    RegistryDesc d = desc ? *desc : registry_desc_default();
    if (d.history_frames < 2 || d.history_frames > REGISTRY_MAX_HISTORY) {
        issim_error_set(err, ISSIM_ERR_INVALID, "registry: history_frames %d not in [2, %d]",
                        d.history_frames, REGISTRY_MAX_HISTORY);
        return NULL;
    }
    if (d.max_vars < 0 || d.max_vars > REGISTRY_MAX_VARS) {
        issim_error_set(err, ISSIM_ERR_INVALID, "registry: max_vars %d not in [0, %d]", d.max_vars,
                        REGISTRY_MAX_VARS);
        return NULL;
    }
    if (d.max_contacts < 0 || d.max_contacts > REGISTRY_MAX_CONTACTS) {
        issim_error_set(err, ISSIM_ERR_INVALID, "registry: max_contacts %d not in [0, %d]",
                        d.max_contacts, REGISTRY_MAX_CONTACTS);
        return NULL;
    }
    if (d.edit_capacity < 1 || d.edit_capacity > REGISTRY_MAX_EDITS) {
        issim_error_set(err, ISSIM_ERR_INVALID, "registry: edit_capacity %d not in [1, %d]",
                        d.edit_capacity, REGISTRY_MAX_EDITS);
        return NULL;
    }
    int cap = 1;
    while (cap < d.edit_capacity)
        cap *= 2;
    d.edit_capacity = cap;

    Registry *reg = aligned_calloc(1, sizeof *reg);
    if (!reg)
        goto nomem;
    reg->desc = d;
    reg->serial = next_serial();
    reg->w_last_t = -INFINITY;
    reg->var_names = calloc((size_t)d.max_vars + 1, sizeof *reg->var_names);
    reg->var_units = calloc((size_t)d.max_vars + 1, sizeof *reg->var_units);
    reg->frames = aligned_calloc((size_t)d.history_frames, sizeof *reg->frames);
    if (!reg->var_names || !reg->var_units || !reg->frames || !registry_contacts_init(reg) ||
        !registry_edit_init(reg) || !registry_board_init(reg))
        goto nomem;
    return reg;

nomem:
    registry_destroy(reg);
    issim_error_set(err, ISSIM_ERR_NOMEM, "registry: out of memory (history_frames %d)",
                    d.history_frames);
    return NULL;
}

void registry_destroy(Registry *reg) {
    if (!reg)
        return;
    for (int i = 0; i < reg->var_count; i++) {
        free(reg->var_names[i]);
        free(reg->var_units[i]);
    }
    free(reg->var_names);
    free(reg->var_units);
    free(reg->name_slots);
    ring_free(reg->frames, frames_bytes(reg));
    ring_free(reg->values, values_bytes(reg, reg->value_stride));
    registry_contacts_free(reg);
    registry_edit_free(reg);
    registry_board_free(reg);
    ring_free(reg, ring_bytes(1, sizeof *reg));
}

/* ===== Variables ===== */

static char *copy_string(const char *s) {
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot holding name, or the empty slot where it would go. */
static size_t name_slot(const Registry *reg, const char *name) {
    size_t mask = reg->name_slot_count - 1;
    size_t i = (size_t)name_hash(name) & mask;
    while (reg->name_slots[i] && strcmp(reg->var_names[reg->name_slots[i] - 1], name) != 0)
        i = (i + 1) & mask;
    return i;
}

/* Room for one more name, the index kept at most half full. */
static bool name_index_reserve(Registry *reg) {
    if (2 * ((size_t)reg->var_count + 1) <= reg->name_slot_count)
        return true;
    size_t count = reg->name_slot_count ? 2 * reg->name_slot_count : 64;
    int *slots = calloc(count, sizeof *slots);
    if (!slots)
        return false;
    free(reg->name_slots);
    reg->name_slots = slots;
    reg->name_slot_count = count;
    for (int v = 0; v < reg->var_count; v++)
        reg->name_slots[name_slot(reg, reg->var_names[v])] = v + 1;
    return true;
}

int registry_add_var(Registry *reg, const char *name, const char *unit, IssimError *err) {
    if (!name || !name[0]) {
        issim_error_set(err, ISSIM_ERR_INVALID, "registry: variable name is empty");
        return -1;
    }
    if (reg->published) {
        issim_error_set(err, ISSIM_ERR_STATE,
                        "registry: cannot add variable '%s' after frames were published", name);
        return -1;
    }
    if (registry_var_find(reg, name) >= 0) {
        issim_error_set(err, ISSIM_ERR_INVALID, "registry: duplicate variable name '%s'", name);
        return -1;
    }
    if (reg->var_count >= reg->desc.max_vars) {
        issim_error_set(err, ISSIM_ERR_FULL,
                        "registry: cannot add variable '%s': max_vars (%d) reached", name,
                        reg->desc.max_vars);
        return -1;
    }
    if (reg->var_count >= reg->value_stride) {
        int stride = reg->value_stride ? reg->value_stride * 2 : 16;
        if (stride > reg->desc.max_vars)
            stride = reg->desc.max_vars;
        _Atomic uint64_t *values =
            aligned_calloc((size_t)reg->desc.history_frames * (size_t)stride, sizeof *values);
        if (!values) {
            issim_error_set(err, ISSIM_ERR_NOMEM, "registry: out of memory adding '%s'", name);
            return -1;
        }
        ring_free(reg->values, values_bytes(reg, reg->value_stride)); /* nothing published yet */
        reg->values = values;
        reg->value_stride = stride;
    }
    char *name_copy = copy_string(name);
    char *unit_copy = copy_string(unit ? unit : "");
    if (!name_copy || !unit_copy || !name_index_reserve(reg)) {
        free(name_copy);
        free(unit_copy);
        issim_error_set(err, ISSIM_ERR_NOMEM, "registry: out of memory adding '%s'", name);
        return -1;
    }
    reg->var_names[reg->var_count] = name_copy;
    reg->var_units[reg->var_count] = unit_copy;
    reg->name_slots[name_slot(reg, name)] = reg->var_count + 1;
    return reg->var_count++;
}

int registry_var_count(const Registry *reg) {
    return reg->var_count;
}

const char *registry_var_name(const Registry *reg, int var) {
    return var >= 0 && var < reg->var_count ? reg->var_names[var] : NULL;
}

const char *registry_var_unit(const Registry *reg, int var) {
    return var >= 0 && var < reg->var_count ? reg->var_units[var] : NULL;
}

int registry_var_find(const Registry *reg, const char *name) {
    if (!name || reg->name_slot_count == 0)
        return -1;
    return reg->name_slots[name_slot(reg, name)] - 1;
}

RegistryVarId registry_var_id_at(const Registry *reg, int var) {
    return var >= 0 && var < reg->var_count ? (RegistryVarId){var, reg->serial}
                                            : (RegistryVarId){0, 0};
}

RegistryVarId registry_var_id(const Registry *reg, const char *name) {
    return registry_var_id_at(reg, registry_var_find(reg, name));
}

IssimStatus registry_var_check(const Registry *reg, RegistryVarId id, IssimError *err) {
    if (registry_var_id_is_null(id))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "registry: the null variable id names no "
                               "variable");
    if (id.generation != reg->serial)
        return issim_error_set(err, ISSIM_ERR_STALE,
                               "registry: variable id {index %d, registry %u} is stale: it is from "
                               "another registry (this is registry %u)",
                               (int)id.index, (unsigned)id.generation, (unsigned)reg->serial);
    if (id.index < 0 || id.index >= reg->var_count)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "registry: variable id {index %d, registry %u}: registry %u has %d "
                               "variables",
                               (int)id.index, (unsigned)id.generation, (unsigned)reg->serial,
                               reg->var_count);
    return ISSIM_OK;
}

bool registry_var_valid(const Registry *reg, RegistryVarId id) {
    return registry_var_check(reg, id, NULL) == ISSIM_OK;
}

double registry_frame_value(const Registry *reg, const RegistryFrame *frame, RegistryVarId var) {
    return registry_var_valid(reg, var) && frame->values ? frame->values[var.index] : NAN;
}

/* ===== Frames: writer side (engine thread) ===== */

static inline FrameHeader *frame_header(const Registry *reg, uint64_t index) {
    return &reg->frames[index % (uint64_t)reg->desc.history_frames];
}

/* NULL while no variable exists. */
static inline _Atomic uint64_t *frame_values(const Registry *reg, uint64_t index) {
    if (!reg->values)
        return NULL;
    return reg->values +
           (size_t)(index % (uint64_t)reg->desc.history_frames) * (size_t)reg->value_stride;
}

/* Stores the writer's view into the idle copy of the latch, then makes it current. The stores
 * are releases, so each is ordered after the previous version bump: a reader still holding the
 * version before that, who sees one of them, also sees the version moved. */
static void store_view(Registry *reg) {
    uint64_t v = atomic_load_explicit(&reg->view_version, memory_order_relaxed) + 1;
    FrameView *view = &reg->views[v & 1];
    registry_put(&view->head, reg->w_head);
    registry_put(&view->tail, reg->w_tail);
    registry_put(&view->serial, reg->w_serial);
    atomic_store_explicit(&reg->view_version, v, memory_order_release);
}

/* The writer reads its own slots; its own stores need no validation. */
static double writer_frame_time(const Registry *reg, uint64_t index) {
    return registry_load_f64(&frame_header(reg, index)->t);
}

void registry_publish(Registry *reg, double t, const double *values) {
    if (!(t > reg->w_last_t)) {
        uint64_t n = ++reg->w_rejected;
        if ((n & (n - 1)) == 0) /* first, second, fourth... */
            issim_log(ISSIM_LOG_ERROR,
                      "registry_publish: time %.17g is not after the newest frame's %.17g; "
                      "frame dropped (%llu so far)",
                      t, reg->w_last_t, (unsigned long long)n);
        return;
    }
    reg->published = true;
    uint64_t index = reg->w_head;
    if (reg->w_head - reg->w_tail == (uint64_t)reg->desc.history_frames) {
        reg->w_tail++; /* the slot about to be overwritten leaves the view first */
        store_view(reg);
    }
    FrameHeader *h = frame_header(reg, index);
    _Atomic uint64_t *row = frame_values(reg, index);
    uint64_t serial = reg->w_serial + 1;
    uint64_t s = registry_seq_begin_write(&h->seq);
    registry_put(&h->serial, serial);
    registry_put(&h->index, index);
    registry_store_f64(&h->t, t);
    for (int i = 0; i < reg->var_count; i++)
        registry_store_f64(&row[i], values ? values[i] : 0.0);
    registry_seq_end_write(&h->seq, s);

    reg->w_serial = serial;
    reg->w_head = index + 1;
    reg->w_last_t = t;
    store_view(reg);
}

void registry_rewind(Registry *reg, double t) {
    if (isnan(t) || reg->w_head == reg->w_tail || !(t < reg->w_last_t))
        return; /* nothing newer than t */
    /* Newest held frame with time <= t; none keeps the ring empty. */
    uint64_t lo = reg->w_tail, hi = reg->w_head; /* answer in [lo - 1, hi - 1] */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (writer_frame_time(reg, mid) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    reg->w_head = lo;
    reg->w_last_t = lo > reg->w_tail ? writer_frame_time(reg, lo - 1) : -INFINITY;
    store_view(reg);
}

void registry_clear(Registry *reg) {
    if (reg->w_head == reg->w_tail)
        return;
    reg->w_tail = reg->w_head;
    reg->w_last_t = -INFINITY;
    store_view(reg);
}

/* ===== Frames: reader side (any thread) ===== */

typedef struct ViewSnap {
    uint64_t head, tail, serial;
} ViewSnap;

static bool read_view(const Registry *reg, ViewSnap *snap) {
    uint64_t v = atomic_load_explicit(&reg->view_version, memory_order_acquire);
    const FrameView *view = &reg->views[v & 1];
    snap->head = registry_get(&view->head);
    snap->tail = registry_get(&view->tail);
    snap->serial = registry_get(&view->serial);
    return atomic_load_explicit(&reg->view_version, memory_order_relaxed) == v;
}

/* Copies frame `index` of the view: its time, and when var >= 0 that variable into *value, and
 * when all is non-NULL every value. false if the slot no longer holds that frame. */
static bool read_frame(const Registry *reg, const ViewSnap *snap, uint64_t index, double *t,
                       int var, double *value, double *all) {
    const FrameHeader *h = frame_header(reg, index);
    const _Atomic uint64_t *row = frame_values(reg, index);
    uint64_t s0 = atomic_load_explicit(&h->seq, memory_order_acquire);
    if (s0 & 1)
        return false;
    uint64_t serial = registry_get(&h->serial);
    uint64_t stored = registry_get(&h->index);
    *t = registry_load_f64(&h->t);
    if (var >= 0)
        *value = registry_load_f64(&row[var]);
    if (all)
        for (int i = 0; i < reg->var_count; i++)
            all[i] = registry_load_f64(&row[i]);
    uint64_t s1 = atomic_load_explicit(&h->seq, memory_order_relaxed);
    return s0 == s1 && stored == index && serial <= snap->serial;
}

static bool frame_time(const Registry *reg, const ViewSnap *snap, uint64_t index, double *t) {
    return read_frame(reg, snap, index, t, -1, NULL, NULL);
}

typedef enum Lookup { LOOKUP_FOUND, LOOKUP_NONE, LOOKUP_RETRY } Lookup;

/* Newest frame of the view with time <= t. */
static Lookup find_at(const Registry *reg, const ViewSnap *snap, double t, uint64_t *found) {
    if (snap->head == snap->tail || isnan(t))
        return LOOKUP_NONE;
    double tt;
    if (!frame_time(reg, snap, snap->tail, &tt))
        return LOOKUP_RETRY;
    if (tt > t)
        return LOOKUP_NONE;
    uint64_t good = snap->tail, bad = snap->head; /* time(good) <= t < time(bad) */
    while (bad - good > 1) {
        uint64_t mid = good + (bad - good) / 2;
        if (!frame_time(reg, snap, mid, &tt))
            return LOOKUP_RETRY;
        if (tt <= t)
            good = mid;
        else
            bad = mid;
    }
    *found = good;
    return LOOKUP_FOUND;
}

/* Oldest frame of the view with time >= t (head if none). */
static Lookup find_from(const Registry *reg, const ViewSnap *snap, double t, uint64_t *found) {
    uint64_t lo = snap->tail, hi = snap->head;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        double tt;
        if (!frame_time(reg, snap, mid, &tt))
            return LOOKUP_RETRY;
        if (tt < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo;
    return LOOKUP_FOUND;
}

/* Time of the newest (newest = true) or oldest frame, NAN when empty. */
static double edge_time(const Registry *reg, bool newest) {
    for (int attempt = 0; attempt < REGISTRY_READ_RETRIES; attempt++) {
        ViewSnap snap;
        if (!read_view(reg, &snap))
            continue;
        if (snap.head == snap.tail)
            return NAN;
        double t;
        if (frame_time(reg, &snap, newest ? snap.head - 1 : snap.tail, &t))
            return t;
    }
    return NAN;
}

double registry_state_time(const Registry *reg) {
    return edge_time(reg, true);
}

double registry_history_start(const Registry *reg) {
    return edge_time(reg, false);
}

bool registry_read_latest(const Registry *reg, RegistryFrame *out) {
    for (int attempt = 0; attempt < REGISTRY_READ_RETRIES; attempt++) {
        ViewSnap snap;
        if (!read_view(reg, &snap))
            continue;
        if (snap.head == snap.tail)
            return false;
        uint64_t index = snap.head - 1;
        double t;
        if (read_frame(reg, &snap, index, &t, -1, NULL, out->values)) {
            out->t = t;
            out->index = index;
            return true;
        }
    }
    return false;
}

bool registry_read_at(const Registry *reg, double t, RegistryFrame *out) {
    for (int attempt = 0; attempt < REGISTRY_READ_RETRIES; attempt++) {
        ViewSnap snap;
        if (!read_view(reg, &snap))
            continue;
        uint64_t index;
        Lookup r = find_at(reg, &snap, t, &index);
        if (r == LOOKUP_NONE)
            return false;
        double ft;
        if (r == LOOKUP_FOUND && read_frame(reg, &snap, index, &ft, -1, NULL, out->values)) {
            out->t = ft;
            out->index = index;
            return true;
        }
    }
    return false;
}

bool registry_read_after(const Registry *reg, double t, RegistryFrame *out) {
    for (int attempt = 0; attempt < REGISTRY_READ_RETRIES; attempt++) {
        ViewSnap snap;
        if (!read_view(reg, &snap))
            continue;
        if (snap.head == snap.tail)
            return false;
        uint64_t index;
        if (find_from(reg, &snap, nextafter(t, INFINITY), &index) != LOOKUP_FOUND)
            continue;
        double ft;
        if (index >= snap.head)
            return false;
        if (read_frame(reg, &snap, index, &ft, -1, NULL, out->values) && ft > t) {
            out->t = ft;
            out->index = index;
            return true;
        }
    }
    return false;
}

int registry_history(const Registry *reg, int var, double t0, double t1, double *times,
                     double *values, int max) {
    if (var < 0 || var >= reg->var_count || max <= 0 || !(t0 <= t1))
        return 0;
    for (int attempt = 0; attempt < REGISTRY_READ_RETRIES; attempt++) {
        ViewSnap snap;
        if (!read_view(reg, &snap))
            continue;
        uint64_t first;
        if (find_from(reg, &snap, t0, &first) != LOOKUP_FOUND)
            continue;
        int n = 0;
        bool torn = false;
        for (uint64_t i = first; i < snap.head && n < max; i++) {
            double t, v;
            if (!read_frame(reg, &snap, i, &t, var, &v, NULL)) {
                torn = true;
                break;
            }
            if (t > t1)
                break;
            if (times)
                times[n] = t;
            if (values)
                values[n] = v;
            n++;
        }
        if (!torn)
            return n;
    }
    return 0;
}
