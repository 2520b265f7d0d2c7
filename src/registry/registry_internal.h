/* Private layout of the state registry, shared by registry.c (variables, frames),
 * registry_slots.c (slots, contacts) and registry_edit.c (edit queue, results).
 *
 * Every field that one thread writes while another reads is an atomic, accessed as the
 * sequence-lock protocol in registry.c requires; fields marked
 * "writer-private" are touched only by the single writer of that part (engine, or the slot's
 * owner), and fields marked "set-up" only before threads start.
 */
#ifndef ISSIM_REGISTRY_INTERNAL_H
#define ISSIM_REGISTRY_INTERNAL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

#include "issim/registry.h"

#define REGISTRY_CACHE_LINE 64
/* A read gives up after this many inconsistent copies. Each retry means the writer completed
 * an update meanwhile (readers never wait for a half-done write), so this bound is reached
 * only if the writer laps a reader a thousand times in a row. */
#define REGISTRY_READ_RETRIES 1000

/* Words inside a sequence lock or latch are stored with release order and loaded with acquire
 * order, rather than relaxed accesses bracketed by fences. That is exactly what the protocol
 * needs (a reader that sees any word of a new write also sees the version/sequence change that
 * preceded it, see registry.c), it compiles to plain moves on x86-64, and ThreadSanitizer
 * models it, whereas it does not model atomic_thread_fence (gcc rejects fences under
 * -fsanitize=thread -Werror). */
static inline void registry_put(_Atomic uint64_t *p, uint64_t x) {
    atomic_store_explicit(p, x, memory_order_release);
}
static inline uint64_t registry_get(const _Atomic uint64_t *p) {
    return atomic_load_explicit(p, memory_order_acquire);
}

/* Doubles travel as their bit patterns in _Atomic uint64_t words. */
static inline uint64_t registry_f64_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline double registry_bits_f64(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}
static inline void registry_store_f64(_Atomic uint64_t *p, double x) {
    registry_put(p, registry_f64_bits(x));
}
static inline double registry_load_f64(const _Atomic uint64_t *p) {
    return registry_bits_f64(registry_get(p));
}

/* Opens a write on a sequence lock owned by the calling writer (seq becomes odd). The data
 * stores that follow are releases, so each is ordered after this one; this store is a release
 * too, which orders whatever the writer stored before it (e.g. evicted_max) ahead of it. */
static inline uint64_t registry_seq_begin_write(_Atomic uint64_t *seq) {
    uint64_t s = atomic_load_explicit(seq, memory_order_relaxed);
    atomic_store_explicit(seq, s + 1, memory_order_release);
    return s;
}
static inline void registry_seq_end_write(_Atomic uint64_t *seq, uint64_t s) {
    atomic_store_explicit(seq, s + 2, memory_order_release);
}

/* One frame slot's header: padded to a cache line so that the writer filling the next slot
 * does not disturb readers of the newest one. */
typedef struct FrameHeader {
    alignas(REGISTRY_CACHE_LINE) _Atomic uint64_t seq; /* odd while being written */
    _Atomic uint64_t serial; /* publication serial, never reused (unlike index) */
    _Atomic uint64_t index;  /* public frame index */
    _Atomic uint64_t t;      /* double bits */
} FrameHeader;

/* Which frames are held: indices [tail, head); serial = serial of the newest publication at
 * the time this view was stored. Double-buffered (a latch): see registry.c. */
typedef struct FrameView {
    _Atomic uint64_t head, tail, serial;
} FrameView;

/* One copy of a slot's contents. */
typedef struct SlotCopy {
    _Atomic uint64_t t;
    _Atomic uint64_t count;
    _Atomic uint64_t v[REGISTRY_SLOT_VALUES];
    _Atomic uint64_t ids[REGISTRY_SLOT_IDS];
} SlotCopy;

/* A slot: latch of two copies; version = number of writes, copy[version & 1] is current. */
typedef struct SlotLatch {
    alignas(REGISTRY_CACHE_LINE) _Atomic uint64_t version;
    SlotCopy copy[2];
} SlotLatch;

#define REGISTRY_CONTACT_WORDS (sizeof(ContactReport) / sizeof(uint64_t))

/* One buffer of contact reports. */
typedef struct ContactCopy {
    _Atomic uint64_t t;
    _Atomic uint64_t n;
    _Atomic uint64_t *words; /* max_contacts * REGISTRY_CONTACT_WORDS */
} ContactCopy;

/* A cell of the edit ring (Vyukov's bounded queue): seq == position when free for the
 * producer holding that ticket, position + 1 when filled, position + capacity when consumed. */
typedef struct EditCell {
    _Atomic uint64_t seq;
    RegistryEdit edit; /* plain data, ordered by seq's release/acquire */
} EditCell;

#define REGISTRY_REASON_WORDS (sizeof(((RegistryEditResult *)0)->reason) / sizeof(uint64_t))

/* One recorded resolution, a sequence lock written by the engine only. */
typedef struct ResultEntry {
    _Atomic uint64_t seq;
    _Atomic uint64_t id;
    _Atomic uint64_t state;
    _Atomic uint64_t sim_time;   /* double bits */
    _Atomic uint64_t wall_apply; /* double bits */
    _Atomic uint64_t reason[REGISTRY_REASON_WORDS];
} ResultEntry;

struct Registry {
    RegistryDesc desc; /* set-up; edit_capacity already rounded to a power of 2 */
    uint32_t serial;   /* set-up: this instance's serial, the generation of its RegistryVarIds */

    /* Variables (set-up). name_slots: an open-addressing index of var_names (var + 1, 0 empty;
     * a power-of-2 size at most half full), so that adding n variables costs O(n), not the
     * O(n^2) of checking each new name against all (1e5 bodies took minutes). */
    int var_count;
    char **var_names;
    char **var_units;
    int *name_slots;
    size_t name_slot_count;

    /* Frames. values holds history_frames rows of value_stride words. */
    FrameHeader *frames;
    _Atomic uint64_t *values;
    int value_stride; /* set-up: grows with registry_add_var */
    alignas(REGISTRY_CACHE_LINE) _Atomic uint64_t view_version;
    FrameView views[2];
    /* Frames, writer-private (engine). */
    alignas(REGISTRY_CACHE_LINE) uint64_t w_head, w_tail, w_serial;
    double w_last_t; /* time of the newest held frame, -INFINITY when none */
    bool published;  /* a frame was ever published: variables are frozen */
    uint64_t w_rejected;

    /* Slots. */
    SlotLatch slots[REGISTRY_SLOT_COUNT];

    /* Contacts: latch of two buffers. */
    alignas(REGISTRY_CACHE_LINE) _Atomic uint64_t contact_version;
    ContactCopy contacts[2];
    uint64_t w_contacts_dropped; /* writer-private */

    /* Edit queue: producers claim tickets from enqueue_pos, the engine advances dequeue_pos. */
    EditCell *cells;
    uint64_t edit_mask;
    alignas(REGISTRY_CACHE_LINE) _Atomic uint64_t enqueue_pos;
    alignas(REGISTRY_CACHE_LINE) _Atomic uint64_t dequeue_pos;

    /* Edit results: ring of edit_capacity entries in resolution order. */
    alignas(REGISTRY_CACHE_LINE) _Atomic uint64_t results_count;
    _Atomic uint64_t evicted_max; /* greatest id whose result was overwritten */
    ResultEntry *results;

    /* The board (registry_board.c): one writer, any readers. */
    RegistryBoard *board;
};

/* registry_slots.c / registry_edit.c set-up helpers (called by registry_create/destroy). */
bool registry_contacts_init(Registry *reg);
void registry_contacts_free(Registry *reg);
bool registry_edit_init(Registry *reg);
void registry_edit_free(Registry *reg);
bool registry_board_init(Registry *reg);
void registry_board_free(Registry *reg);

#endif
