/* State registry: the edit queue and the record of edit outcomes.
 *
 * The queue is Vyukov's bounded multi-producer queue, used with a single consumer (the engine).
 * A producer claims a ticket by compare-and-swap on enqueue_pos, but only after checking that
 * the ticket's cell is free (cell seq == ticket); a cell still holding an unconsumed edit from
 * the previous lap (seq < ticket) means the queue is full, and the submission fails instead of
 * waiting. The edit is then written into the cell as plain data and published by storing
 * seq = ticket + 1 with release order; the consumer acquires that before copying, and frees the
 * cell for the next lap by storing seq = ticket + capacity with release order after copying, so
 * a producer reusing the cell cannot overwrite data the consumer is still reading. The ticket
 * is the edit's id minus one: ids are therefore unique, start at 1, increase in queue order,
 * and failed submissions consume none.
 *
 * Outcomes go to a ring of edit_capacity entries in resolution order, each a sequence lock
 * written by the engine. A lookup scans the ring newest first; an id not found is PENDING if it
 * was issued and is newer than every evicted result, which is exact as long as the engine
 * resolves edits in the order it pops them (the intended use). Before an entry is overwritten
 * the engine raises evicted_max, ahead of the entry's (release) sequence and data stores, so a
 * reader that saw (with acquire loads) the entry change also sees the id counted as evicted.
 */
#include "registry_internal.h"

#include <stdio.h>
#include <stdlib.h>

bool registry_edit_init(Registry *reg) {
    size_t cap = (size_t)reg->desc.edit_capacity;
    reg->edit_mask = cap - 1;
    reg->cells = calloc(cap, sizeof *reg->cells);
    reg->results = calloc(cap, sizeof *reg->results);
    if (!reg->cells || !reg->results)
        return false;
    for (size_t i = 0; i < cap; i++)
        atomic_init(&reg->cells[i].seq, (uint64_t)i);
    return true;
}

void registry_edit_free(Registry *reg) {
    free(reg->cells);
    free(reg->results);
    reg->cells = NULL;
    reg->results = NULL;
}

/* ===== Queue ===== */

uint64_t registry_edit_submit(Registry *reg, const char *path, const char *value, IssimError *err) {
    if (!path || !path[0]) {
        issim_error_set(err, ISSIM_ERR_INVALID, "edit refused: empty property path");
        return 0;
    }
    if (!value)
        value = "";
    size_t path_len = strlen(path), value_len = strlen(value);
    if (path_len >= REGISTRY_EDIT_PATH_MAX) {
        issim_error_set(err, ISSIM_ERR_INVALID,
                        "edit refused: property path too long (%zu bytes, at most %d)", path_len,
                        REGISTRY_EDIT_PATH_MAX - 1);
        return 0;
    }
    if (value_len >= REGISTRY_EDIT_VALUE_MAX) {
        issim_error_set(err, ISSIM_ERR_INVALID,
                        "edit of '%s' refused: value too long (%zu bytes, at most %d)", path,
                        value_len, REGISTRY_EDIT_VALUE_MAX - 1);
        return 0;
    }

    uint64_t pos = atomic_load_explicit(&reg->enqueue_pos, memory_order_relaxed);
    EditCell *cell;
    for (;;) {
        cell = &reg->cells[pos & reg->edit_mask];
        uint64_t seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&reg->enqueue_pos, &pos, pos + 1,
                                                      memory_order_relaxed, memory_order_relaxed))
                break;
            /* pos now holds the current ticket; try it */
        } else if (dif < 0) {
            issim_error_set(err, ISSIM_ERR_FULL,
                            "edit of '%s' refused: edit queue full (%d edits waiting)", path,
                            reg->desc.edit_capacity);
            return 0;
        } else {
            pos = atomic_load_explicit(&reg->enqueue_pos, memory_order_relaxed);
        }
    }
    RegistryEdit *e = &cell->edit;
    e->id = pos + 1;
    e->wall_submit = issim_wall_time();
    memcpy(e->path, path, path_len + 1);
    memcpy(e->value, value, value_len + 1);
    atomic_store_explicit(&cell->seq, pos + 1, memory_order_release);
    return pos + 1;
}

bool registry_edit_pop(Registry *reg, RegistryEdit *out) {
    uint64_t pos = atomic_load_explicit(&reg->dequeue_pos, memory_order_relaxed);
    EditCell *cell = &reg->cells[pos & reg->edit_mask];
    if (atomic_load_explicit(&cell->seq, memory_order_acquire) != pos + 1)
        return false; /* empty, or the oldest ticket's producer is still writing */
    const RegistryEdit *e = &cell->edit;
    out->id = e->id;
    out->wall_submit = e->wall_submit;
    issim_strlcpy(out->path, e->path, sizeof out->path);
    issim_strlcpy(out->value, e->value, sizeof out->value);
    atomic_store_explicit(&cell->seq, pos + reg->edit_mask + 1, memory_order_release);
    atomic_store_explicit(&reg->dequeue_pos, pos + 1, memory_order_release);
    return true;
}

int registry_edit_pending(const Registry *reg) {
    uint64_t out = atomic_load_explicit(&reg->dequeue_pos, memory_order_acquire);
    uint64_t in = atomic_load_explicit(&reg->enqueue_pos, memory_order_acquire);
    if (in <= out)
        return 0;
    uint64_t n = in - out;
    return n > (uint64_t)reg->desc.edit_capacity ? reg->desc.edit_capacity : (int)n;
}

/* ===== Outcomes ===== */

void registry_edit_resolve(Registry *reg, uint64_t id, bool accepted, double sim_time,
                           const char *reason) {
    if (id == 0 || id > atomic_load_explicit(&reg->enqueue_pos, memory_order_relaxed)) {
        issim_log(ISSIM_LOG_ERROR, "registry_edit_resolve: edit id %llu was never issued",
                  (unsigned long long)id);
        return;
    }
    uint64_t cap = (uint64_t)reg->desc.edit_capacity;
    uint64_t k = atomic_load_explicit(&reg->results_count, memory_order_relaxed);
    ResultEntry *e = &reg->results[k % cap];
    if (k >= cap) {
        uint64_t old = atomic_load_explicit(&e->id, memory_order_relaxed);
        if (old > atomic_load_explicit(&reg->evicted_max, memory_order_relaxed))
            atomic_store_explicit(&reg->evicted_max, old, memory_order_relaxed);
    }
    char text[sizeof(((RegistryEditResult *)0)->reason)] = {0};
    issim_strlcpy(text, reason ? reason : "", sizeof text);
    uint64_t words[REGISTRY_REASON_WORDS];
    memcpy(words, text, sizeof words);

    uint64_t s = registry_seq_begin_write(&e->seq); /* release: evicted_max goes first */
    registry_put(&e->id, id);
    registry_put(&e->state, accepted ? REGISTRY_EDIT_ACCEPTED : REGISTRY_EDIT_REJECTED);
    registry_store_f64(&e->sim_time, sim_time);
    registry_store_f64(&e->wall_apply, issim_wall_time());
    for (size_t j = 0; j < REGISTRY_REASON_WORDS; j++)
        registry_put(&e->reason[j], words[j]);
    registry_seq_end_write(&e->seq, s);
    atomic_store_explicit(&reg->results_count, k + 1, memory_order_release);
}

/* Copies entry e if it is a stable record of id. */
static bool read_result(const ResultEntry *e, uint64_t id, RegistryEditResult *out) {
    uint64_t s0 = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (s0 & 1 || registry_get(&e->id) != id)
        return false;
    RegistryEditResult r;
    r.id = id;
    r.state = (RegistryEditState)registry_get(&e->state);
    r.sim_time = registry_load_f64(&e->sim_time);
    r.wall_apply = registry_load_f64(&e->wall_apply);
    uint64_t words[REGISTRY_REASON_WORDS];
    for (size_t j = 0; j < REGISTRY_REASON_WORDS; j++)
        words[j] = registry_get(&e->reason[j]);
    if (atomic_load_explicit(&e->seq, memory_order_acquire) != s0)
        return false;
    memcpy(r.reason, words, sizeof r.reason);
    r.reason[sizeof r.reason - 1] = '\0';
    if (out)
        *out = r;
    return true;
}

RegistryEditState registry_edit_result(const Registry *reg, uint64_t id, RegistryEditResult *out) {
    if (out) {
        memset(out, 0, sizeof *out);
        out->id = id;
    }
    if (id == 0 || id > atomic_load_explicit(&reg->enqueue_pos, memory_order_acquire))
        return REGISTRY_EDIT_UNKNOWN;
    uint64_t cap = (uint64_t)reg->desc.edit_capacity;
    uint64_t count = atomic_load_explicit(&reg->results_count, memory_order_acquire);
    uint64_t oldest = count > cap ? count - cap : 0;
    for (uint64_t k = count; k > oldest; k--) {
        RegistryEditResult r;
        if (read_result(&reg->results[(k - 1) % cap], id, &r)) {
            if (out)
                *out = r;
            return r.state;
        }
    }
    /* Any entry seen changing above (acquire loads) makes its eviction visible here. */
    if (id <= atomic_load_explicit(&reg->evicted_max, memory_order_relaxed))
        return REGISTRY_EDIT_UNKNOWN;
    if (out)
        out->state = REGISTRY_EDIT_PENDING;
    return REGISTRY_EDIT_PENDING;
}
