/* The board: one block of bytes, published whole by a single writer (the engine thread: the
 * haptic local models of the proxy's contacts, docs/haptics.md "Local models") and copied whole
 * by any reader (the servo), lock-free. Two buffers under a latch like the slots': the writer
 * fills the buffer readers are not directed to, then flips `version`; a reader copies the
 * current buffer and retries if its sequence word changed meanwhile, which needs the writer to
 * publish twice during one copy. The heartbeat is a separate word the writer may store between
 * publications (the engine thread alive while it waits at its horizon). */
#include <math.h>
#include <stdlib.h>

#include "registry_internal.h"

typedef struct BoardCopy {
    alignas(REGISTRY_CACHE_LINE) _Atomic uint64_t seq; /* odd while being written */
    _Atomic uint64_t t;                                /* double bits */
    _Atomic uint64_t bytes;
    _Atomic uint64_t *words;
} BoardCopy;

struct RegistryBoard {
    size_t capacity_words;
    alignas(REGISTRY_CACHE_LINE) _Atomic uint64_t version; /* publications; copy[version & 1] */
    _Atomic uint64_t heartbeat;                            /* double bits */
    BoardCopy copy[2];
};

bool registry_board_init(Registry *reg) {
    size_t words = (reg->desc.board_bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    RegistryBoard *b = calloc(1, sizeof *b);
    if (!b)
        return false;
    reg->board = b;
    b->capacity_words = words;
    registry_store_f64(&b->heartbeat, NAN);
    for (int i = 0; i < 2; i++) {
        b->copy[i].words = calloc(words ? words : 1, sizeof(uint64_t));
        if (!b->copy[i].words)
            return false;
    }
    return true;
}

void registry_board_free(Registry *reg) {
    if (!reg->board)
        return;
    for (int i = 0; i < 2; i++)
        free(reg->board->copy[i].words);
    free(reg->board);
    reg->board = NULL;
}

size_t registry_board_capacity(const Registry *reg) {
    return reg->board->capacity_words * sizeof(uint64_t);
}

bool registry_board_publish(Registry *reg, double t, const void *data, size_t bytes) {
    RegistryBoard *b = reg->board;
    if (bytes > b->capacity_words * sizeof(uint64_t))
        return false;
    uint64_t v = atomic_load_explicit(&b->version, memory_order_relaxed);
    BoardCopy *c = &b->copy[(v + 1) & 1];
    uint64_t s = registry_seq_begin_write(&c->seq);
    const unsigned char *src = data;
    size_t words = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    for (size_t i = 0; i < words; i++) {
        uint64_t w = 0;
        size_t left = bytes - i * sizeof w;
        memcpy(&w, src + i * sizeof w, left < sizeof w ? left : sizeof w);
        atomic_store_explicit(&c->words[i], w, memory_order_relaxed);
    }
    registry_store_f64(&c->t, t);
    registry_put(&c->bytes, bytes);
    registry_seq_end_write(&c->seq, s);
    registry_put(&b->version, v + 1);
    return true;
}

size_t registry_board_read(const Registry *reg, uint64_t *seen, double *t, void *out, size_t max) {
    const RegistryBoard *b = reg->board;
    for (int attempt = 0; attempt < REGISTRY_READ_RETRIES; attempt++) {
        uint64_t v = registry_get(&b->version);
        if (v == 0 || v == *seen)
            return 0;
        const BoardCopy *c = &b->copy[v & 1];
        uint64_t s1 = registry_get(&c->seq);
        if (s1 & 1)
            continue;
        size_t bytes = (size_t)registry_get(&c->bytes);
        if (bytes > max)
            bytes = max; /* the caller's room: a truncated copy is still consistent */
        unsigned char *dst = out;
        size_t words = bytes / sizeof(uint64_t);
        for (size_t i = 0; i < words; i++) {
            uint64_t w = atomic_load_explicit(&c->words[i], memory_order_relaxed);
            memcpy(dst + i * sizeof w, &w, sizeof w);
        }
        if (bytes % sizeof(uint64_t)) {
            uint64_t w = atomic_load_explicit(&c->words[words], memory_order_relaxed);
            memcpy(dst + words * sizeof w, &w, bytes % sizeof w);
        }
        double tc = registry_load_f64(&c->t);
        atomic_thread_fence(memory_order_acquire);
        if (registry_get(&c->seq) != s1)
            continue;
        *seen = v;
        if (t)
            *t = tc;
        return bytes;
    }
    return 0;
}

void registry_board_beat(Registry *reg, double wall) {
    registry_store_f64(&reg->board->heartbeat, wall);
}

double registry_board_heartbeat(const Registry *reg) {
    return registry_load_f64(&reg->board->heartbeat);
}
