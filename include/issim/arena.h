/* issim memory helpers for hot paths: an arena for per-step scratch and one growable-array
 * helper (issue 29 item 6).
 *
 * The arena hands out aligned blocks from a stack and gives them all back at once: take a mark,
 * allocate what a step needs, reset to the mark (MuJoCo's mj_markStack / mj_stackAllocNum /
 * mj_freeStack). Blocks stay where they are while later ones are taken: when the current chunk
 * is full a new chunk is chained on, never moved, so pointers handed out stay valid until the
 * reset that covers them. A reset to the empty mark joins the chunks into one chunk as large as
 * the most the arena ever held, so after a warm-up step a step takes no memory from the system.
 * Memory handed out is not cleared (as malloc): callers write before they read.
 *
 * The growable array: a pointer, a count the owner keeps and an int capacity, grown by
 * issim_array_reserve (doubling, at least 16) or set by issim_array_resize; on failure the
 * array and its capacity are unchanged, so nothing held is lost.
 *
 * Threading: an arena or an array belongs to one thread at a time (its owner writes and reads
 * it: the engine thread for the engine's); nothing here takes a lock.
 */
#ifndef ISSIM_ARENA_H
#define ISSIM_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct IssimArenaChunk IssimArenaChunk;

typedef struct IssimArena {
    IssimArenaChunk *top; /* Owned: the chunk allocations come from; earlier ones chained */
    size_t used;          /* bytes from the start of the stack to the next free byte */
    size_t peak;          /* the most `used` has been since creation */
    uint64_t chunks;      /* chunks taken from the system so far (warm-up, then none) */
    /* Owned, nullable: the largest chunk a reset released, given to the next overflow, so a
     * stack reset to a mark above zero every step does not malloc and free a chunk every step. */
    IssimArenaChunk *spare;
    /* The top chunk's bytes and the stack offsets it covers, [top_start, top_end), kept here so
     * that an allocation that fits is inline (NULL, 0, 0 without a chunk). */
    unsigned char *top_bytes;
    size_t top_start, top_end;
} IssimArena;

/* A point to return to: everything allocated after it is released by issim_arena_reset. */
typedef size_t IssimArenaMark;

void issim_arena_init(IssimArena *arena);
void issim_arena_free(IssimArena *arena);
IssimArenaMark issim_arena_mark(const IssimArena *arena);
void issim_arena_reset(IssimArena *arena, IssimArenaMark mark);
/* issim_arena_alloc when the top chunk has no room: chains a new chunk. */
void *issim_arena_alloc_chunk(IssimArena *arena, size_t count, size_t size);

#define ISSIM_ARENA_ALIGN 16

/* count items of size bytes, 16-byte aligned; NULL when out of memory (or on overflow). Inline:
 * the RESOLVE stage takes some twenty blocks per island step. */
static inline void *issim_arena_alloc(IssimArena *arena, size_t count, size_t size) {
    if (size != 0 && count > (SIZE_MAX - ISSIM_ARENA_ALIGN) / size)
        return NULL;
    size_t bytes = (count * size + ISSIM_ARENA_ALIGN - 1) & ~(size_t)(ISSIM_ARENA_ALIGN - 1);
    size_t at = (arena->used + ISSIM_ARENA_ALIGN - 1) & ~(size_t)(ISSIM_ARENA_ALIGN - 1);
    if (!arena->top_bytes || at + bytes > arena->top_end)
        return issim_arena_alloc_chunk(arena, count, size);
    arena->used = at + bytes;
    if (arena->used > arena->peak)
        arena->peak = arena->used;
    return arena->top_bytes + (at - arena->top_start);
}
#define ISSIM_ARENA_ALLOC(arena, type, count)                                                      \
    ((type *)issim_arena_alloc((arena), (size_t)(count), sizeof(type)))

/* Sets the array at array_address (the address of a T * variable) to hold capacity items of
 * item_size bytes; false (array unchanged) when out of memory. Items beyond the old capacity
 * are not cleared. */
bool issim_array_resize(void *array_address, int capacity, size_t item_size);
/* The capacity to grow `capacity` to so that it holds need items: doubled, at least 16. */
int issim_array_grown_capacity(int capacity, int need);
/* Grows the array so that it holds need items (issim_array_grown_capacity); *capacity follows.
 * true when it already did. */
bool issim_array_reserve(void *array_address, int *capacity, int need, size_t item_size);
#define ISSIM_ARRAY_RESERVE(array, capacity, need)                                                 \
    issim_array_reserve(&(array), &(capacity), (need), sizeof *(array))
#define ISSIM_ARRAY_RESIZE(array, capacity)                                                        \
    issim_array_resize(&(array), (capacity), sizeof *(array))

#endif
