/* Model-owned contact state: the pool that holds it and the life cycle of a contact's state
 * (ARCHITECTURE.md: "a law may carry per-contact history ... convolution buffers"; STYLE.md 11:
 * the model declares its state size, the engine owns, checkpoints and restores it, as MuJoCo's
 * plug-ins declare nstate and keep their state in mjData).
 *
 * Life cycle: begin (onset: the block is allocated, zeroed, and the model's begin() initialises
 * it), commit (after every accepted step: the model may update it), checkpoint (copied with the
 * frame, engine_checkpoint.c), restore (copied back), end (the block returns to the pool).
 *
 * The pool is one arena addressed by offsets, so contacts can be copied freely (the collision
 * merge moves them every update) and the arena can move when it grows; a contact's
 * history.state pointer is re-bound from its offset before every model call. Blocks are
 * multiples of 16 bytes (aligned for doubles and vectors). */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

enum { POOL_ALIGN = 16 };

static size_t round_up(size_t bytes) {
    return (bytes + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN;
}

void engine_pool_free_all(ContactStatePool *pool) {
    free(pool->bytes);
    free(pool->free_offset);
    free(pool->free_size);
    memset(pool, 0, sizeof *pool);
}

static bool reserve_free_list(ContactStatePool *pool, int need) {
    if (need <= pool->free_capacity)
        return true;
    int cap = issim_array_grown_capacity(pool->free_capacity, need);
    if (!ISSIM_ARRAY_RESIZE(pool->free_offset, cap) || !ISSIM_ARRAY_RESIZE(pool->free_size, cap))
        return false;
    pool->free_capacity = cap;
    return true;
}

static void remove_free(ContactStatePool *pool, int i) {
    int tail = pool->free_count - i - 1;
    memmove(pool->free_offset + i, pool->free_offset + i + 1, sizeof(size_t) * (size_t)tail);
    memmove(pool->free_size + i, pool->free_size + i + 1, sizeof(size_t) * (size_t)tail);
    pool->free_count--;
}

/* Returns the offset of a zeroed block of at least bytes, or SIZE_MAX when memory ran out.
 * *grown is set when the arena moved. */
static size_t pool_alloc(ContactStatePool *pool, size_t bytes, bool *grown) {
    size_t size = round_up(bytes);
    for (int i = 0; i < pool->free_count; i++) {
        if (pool->free_size[i] < size)
            continue;
        size_t off = pool->free_offset[i];
        pool->free_offset[i] += size;
        pool->free_size[i] -= size;
        if (pool->free_size[i] == 0)
            remove_free(pool, i);
        memset(pool->bytes + off, 0, size);
        return off;
    }
    if (pool->end + size > pool->capacity) {
        size_t cap = pool->capacity > 0 ? 2 * pool->capacity : 4096;
        while (cap < pool->end + size)
            cap *= 2;
        unsigned char *p = realloc(pool->bytes, cap);
        if (!p)
            return SIZE_MAX;
        pool->bytes = p;
        pool->capacity = cap;
        *grown = true;
    }
    size_t off = pool->end;
    pool->end += size;
    memset(pool->bytes + off, 0, size);
    return off;
}

/* Returns a block, merging it with free neighbours; a block at the end lowers the end. */
static void pool_release(ContactStatePool *pool, size_t off, size_t bytes) {
    size_t size = round_up(bytes);
    if (size == 0)
        return;
    if (!reserve_free_list(pool, pool->free_count + 1)) {
        return; /* the block is lost until the next restore rebuilds the free list */
    }
    int i = 0;
    while (i < pool->free_count && pool->free_offset[i] < off)
        i++;
    memmove(pool->free_offset + i + 1, pool->free_offset + i,
            sizeof(size_t) * (size_t)(pool->free_count - i));
    memmove(pool->free_size + i + 1, pool->free_size + i,
            sizeof(size_t) * (size_t)(pool->free_count - i));
    pool->free_offset[i] = off;
    pool->free_size[i] = size;
    pool->free_count++;
    if (i + 1 < pool->free_count && off + size == pool->free_offset[i + 1]) {
        pool->free_size[i] += pool->free_size[i + 1];
        remove_free(pool, i + 1);
    }
    if (i > 0 && pool->free_offset[i - 1] + pool->free_size[i - 1] == off) {
        pool->free_size[i - 1] += pool->free_size[i];
        remove_free(pool, i);
        i--;
    }
    if (pool->free_offset[i] + pool->free_size[i] == pool->end) {
        pool->end = pool->free_offset[i];
        remove_free(pool, i);
    }
}

static int compare_offsets(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* After a restore the contacts' blocks are those of the checkpoint: the free list is the gaps
 * between them below the restored end. */
void engine_pool_rebuild(Engine *e) {
    ContactStatePool *pool = &e->pool;
    pool->free_count = 0;
    int used = 0;
    size_t *pairs =
        (size_t *)e->integration.scratch; /* scratch holds 6 * (state_size + 1) doubles */
    size_t room = 3 * ((size_t)e->model.layout.state_size + 1);
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (c->state_bytes == 0)
            continue;
        if ((size_t)used >= room) { /* more blocks than scratch: no free list (still correct) */
            return;
        }
        pairs[2 * used] = c->state_offset;
        pairs[2 * used + 1] = round_up(c->state_bytes);
        used++;
    }
    qsort(pairs, (size_t)used, 2 * sizeof(size_t), compare_offsets);
    size_t at = 0;
    for (int i = 0; i <= used; i++) {
        size_t next = i < used ? pairs[2 * i] : pool->end;
        if (next > at && reserve_free_list(pool, pool->free_count + 1)) {
            pool->free_offset[pool->free_count] = at;
            pool->free_size[pool->free_count] = next - at;
            pool->free_count++;
        }
        if (i < used)
            at = pairs[2 * i] + pairs[2 * i + 1];
    }
}

ContactHistory *engine_contact_history(const Engine *e, const EngineContact *c) {
    /* Binding the pointer is a cache refresh of the contact, not a change of its state: the
     * pool may have moved since the last call. */
    ContactHistory *h = (ContactHistory *)&c->history;
    h->state = c->state_bytes > 0 ? e->pool.bytes + c->state_offset : NULL;
    h->state_bytes = c->state_bytes;
    return h;
}

const ContactModelClass *engine_contact_model(const Engine *e, const EngineContact *c) {
    return e->model.pairs[c->pair].model;
}

void engine_contact_begin(Engine *e, EngineContact *c, const ContactKinematics *k) {
    const ContactModelClass *model = engine_contact_model(e, c);
    engine_contact_end(e, c); /* a contact that restarts gives its old block back first */
    memset(&c->history, 0, sizeof c->history);
    size_t bytes = model->state_size ? model->state_size(engine_contact_params(e, c), k) : 0;
    if (bytes > 0) {
        bool grown = false;
        size_t off = pool_alloc(&e->pool, bytes, &grown);
        if (off == SIZE_MAX) {
            issim_log(ISSIM_LOG_ERROR, "out of memory for %zu bytes of %s contact state", bytes,
                      model->name);
            e->stats.warnings++;
            bytes = 0;
        } else {
            c->state_offset = off;
            e->stats.state_pool_grows += grown;
        }
    }
    c->state_bytes = bytes;
    ContactKinematics at = *k;
    engine_contact_local_frames(e, c, &at);
    model->begin(engine_contact_params(e, c), engine_contact_history(e, c), &at);
    if (!engine_contact_has_friction(e, c))
        return; /* the history was zeroed: unpinned */
    EngineBodyState a = engine_block_state(e, e->y, c->body), b = a;
    bool with_b = c->kind == CONTACT_MANIFOLD && c->body_b >= 0;
    if (with_b)
        b = engine_block_state(e, e->y, c->body_b);
    engine_pin_friction(c, &a, with_b ? &b : NULL, k->contact_point);
}

void engine_contact_end(Engine *e, EngineContact *c) {
    if (c->state_bytes == 0)
        return;
    pool_release(&e->pool, c->state_offset, c->state_bytes);
    c->state_bytes = 0;
    c->state_offset = 0;
    c->history.state = NULL;
    c->history.state_bytes = 0;
}

void engine_contact_reset(Engine *e, EngineContact *c, const ContactKinematics *k) {
    const ContactModelClass *model = engine_contact_model(e, c);
    if (!model->reset || c->state_bytes == 0) {
        engine_contact_begin(e, c, k);
        return;
    }
    ContactHistory *h = engine_contact_history(e, c);
    model->reset(engine_contact_params(e, c), h, k);
}

ContactForce engine_contact_force(const Engine *e, const EngineContact *c,
                                  const ContactKinematics *k) {
    return engine_contact_model(e, c)->force(engine_contact_params(e, c),
                                             engine_contact_history(e, c), k);
}

int engine_contact_commit_model(Engine *e, EngineContact *c, const ContactKinematics *k) {
    return engine_contact_model(e, c)->commit(engine_contact_params(e, c),
                                              engine_contact_history(e, c), k);
}

double engine_contact_potential(const Engine *e, const EngineContact *c,
                                const ContactKinematics *k) {
    const ContactHistory *h = engine_contact_history(e, c);
    return engine_contact_model(e, c)->potential(engine_contact_params(e, c), h, k) +
           contact_friction_potential(engine_contact_params(e, c), h);
}

bool engine_models_have_copy_hooks(const Engine *e) {
    for (int i = 0; i < e->model.pair_count; i++)
        if (e->model.pairs[i].model->copy)
            return true;
    return false;
}
