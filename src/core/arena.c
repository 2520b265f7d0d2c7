/* The per-step scratch arena and the growable-array helper (issim/arena.h). */
#include "issim/arena.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN ISSIM_ARENA_ALIGN
#define ARENA_MIN_CHUNK 4096

/* A chunk covers the stack bytes [start, start + size); the chunk before it covers those below
 * start (its unused tail counts as taken, so a mark is one number). */
struct IssimArenaChunk {
    IssimArenaChunk *prev;
    size_t start, size;
    _Alignas(ARENA_ALIGN) unsigned char bytes[];
};

void issim_arena_init(IssimArena *arena) {
    memset(arena, 0, sizeof *arena);
}

/* The inline path's copy of the top chunk's place. */
static void cache_top(IssimArena *arena) {
    IssimArenaChunk *top = arena->top;
    arena->top_bytes = top ? top->bytes : NULL;
    arena->top_start = top ? top->start : 0;
    arena->top_end = top ? top->start + top->size : 0;
}

static void free_chunks(IssimArena *arena) {
    while (arena->top) {
        IssimArenaChunk *prev = arena->top->prev;
        free(arena->top);
        arena->top = prev;
    }
}

void issim_arena_free(IssimArena *arena) {
    free_chunks(arena);
    free(arena->spare);
    memset(arena, 0, sizeof *arena);
}

IssimArenaMark issim_arena_mark(const IssimArena *arena) {
    return arena->used;
}

static IssimArenaChunk *new_chunk(IssimArena *arena, size_t start, size_t size) {
    IssimArenaChunk *chunk = arena->spare;
    if (chunk && chunk->size >= size) {
        arena->spare = NULL;
        size = chunk->size;
    } else {
        chunk = malloc(sizeof *chunk + size);
        if (!chunk)
            return NULL;
        arena->chunks++;
    }
    chunk->prev = arena->top;
    chunk->start = start;
    chunk->size = size;
    arena->top = chunk;
    cache_top(arena);
    return chunk;
}

/* The largest released chunk stays for the next overflow; smaller ones go back. */
static void keep_spare(IssimArena *arena, IssimArenaChunk *chunk) {
    if (arena->spare && arena->spare->size >= chunk->size) {
        free(chunk);
        return;
    }
    free(arena->spare);
    arena->spare = chunk;
}

void issim_arena_reset(IssimArena *arena, IssimArenaMark mark) {
    if (mark > arena->used)
        return; /* a mark from after a reset: nothing of it is held */
    while (arena->top && arena->top->prev && arena->top->start > mark) {
        IssimArenaChunk *prev = arena->top->prev;
        keep_spare(arena, arena->top);
        arena->top = prev;
    }
    arena->used = mark;
    if (mark == 0 && arena->top && arena->top->size < arena->peak) {
        /* Empty again after a step that overflowed: one chunk for the most it held, so the
         * next step allocates nothing. Without memory the next step chains chunks again. */
        free_chunks(arena);
        new_chunk(arena, 0, arena->peak);
    }
    cache_top(arena);
}

void *issim_arena_alloc_chunk(IssimArena *arena, size_t count, size_t size) {
    if (size != 0 && count > (SIZE_MAX - ARENA_ALIGN) / size)
        return NULL;
    size_t bytes = (count * size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    size_t at = (arena->used + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    IssimArenaChunk *top = arena->top;
    if (!top || at < top->start || at + bytes > top->start + top->size) {
        size_t start = top ? top->start + top->size : 0;
        size_t want = top ? 2 * top->size : ARENA_MIN_CHUNK;
        top = new_chunk(arena, start, want > bytes ? want : bytes);
        if (!top)
            return NULL;
        at = start;
    }
    arena->used = at + bytes;
    if (arena->used > arena->peak)
        arena->peak = arena->used;
    return top->bytes + (at - top->start);
}

bool issim_array_resize(void *array_address, int capacity, size_t item_size) {
    if (capacity < 0 || (item_size != 0 && (size_t)capacity > SIZE_MAX / item_size))
        return false;
    void *old;
    memcpy(&old, array_address, sizeof old); /* the caller's T *, whatever T */
    void *grown = NULL;
    if (capacity == 0)
        free(old); /* realloc to 0 bytes may or may not free */
    else if (!(grown = realloc(old, (size_t)capacity * item_size)))
        return false;
    memcpy(array_address, &grown, sizeof grown);
    return true;
}

int issim_array_grown_capacity(int capacity, int need) {
    int cap = capacity >= 16 ? capacity : 16;
    while (cap < need)
        cap = cap <= INT32_MAX / 2 ? 2 * cap : need;
    return cap;
}

bool issim_array_reserve(void *array_address, int *capacity, int need, size_t item_size) {
    if (need <= *capacity)
        return true;
    int cap = issim_array_grown_capacity(*capacity, need);
    if (!issim_array_resize(array_address, cap, item_size))
        return false;
    *capacity = cap;
    return true;
}
