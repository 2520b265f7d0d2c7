/* The per-step arena and the growable array (issim/arena.h): blocks are aligned and never move
 * while later ones are taken, a reset to a mark releases what came after it, a step that
 * overflowed makes the next step allocate nothing, and a failed resize loses nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "issim/arena.h"

static void test_blocks_aligned_and_kept(void **state) {
    (void)state;
    IssimArena arena;
    issim_arena_init(&arena);
    double *first = ISSIM_ARENA_ALLOC(&arena, double, 100);
    assert_non_null(first);
    for (int i = 0; i < 100; i++)
        first[i] = i;
    /* far more than the first chunk: a new chunk is chained, the first block stays put */
    char *big = ISSIM_ARENA_ALLOC(&arena, char, 1 << 20);
    assert_non_null(big);
    memset(big, 0xab, 1 << 20);
    int *odd = ISSIM_ARENA_ALLOC(&arena, int, 3);
    assert_non_null(odd);
    assert_int_equal((uintptr_t)first % 16, 0);
    assert_int_equal((uintptr_t)big % 16, 0);
    assert_int_equal((uintptr_t)odd % 16, 0);
    for (int i = 0; i < 100; i++)
        assert_true(first[i] == i);
    assert_int_equal(arena.chunks, 3); /* 4 kB, one exactly the 1 MB block, one for odd */
    issim_arena_free(&arena);
}

static void test_reset_to_mark_reuses(void **state) {
    (void)state;
    IssimArena arena;
    issim_arena_init(&arena);
    int *kept = ISSIM_ARENA_ALLOC(&arena, int, 10);
    IssimArenaMark mark = issim_arena_mark(&arena);
    int *scratch = ISSIM_ARENA_ALLOC(&arena, int, 10);
    issim_arena_reset(&arena, mark);
    assert_int_equal(issim_arena_mark(&arena), mark);
    int *again = ISSIM_ARENA_ALLOC(&arena, int, 10);
    assert_ptr_equal(again, scratch); /* the released block is handed out again */
    assert_true(kept != again);
    issim_arena_free(&arena);
}

/* A step that needs more than the first chunk chains chunks once; after the reset to empty the
 * arena is one chunk of the peak, and the same step takes no new chunk, however often. */
static void test_no_allocation_after_warm_up(void **state) {
    (void)state;
    IssimArena arena;
    issim_arena_init(&arena);
    for (int step = 0; step < 5; step++) {
        IssimArenaMark mark = issim_arena_mark(&arena);
        for (int k = 1; k <= 8; k++)
            assert_non_null(ISSIM_ARENA_ALLOC(&arena, double, 1000 * k));
        issim_arena_reset(&arena, mark);
        if (step == 0)
            assert_true(arena.chunks > 1);
    }
    uint64_t warm = arena.chunks;
    for (int step = 0; step < 5; step++) {
        for (int k = 1; k <= 8; k++)
            assert_non_null(ISSIM_ARENA_ALLOC(&arena, double, 1000 * k));
        issim_arena_reset(&arena, 0);
    }
    assert_int_equal(arena.chunks, warm);
    assert_true(arena.peak >= sizeof(double) * 36000);
    issim_arena_free(&arena);
}

static void test_overflowing_request_refused(void **state) {
    (void)state;
    IssimArena arena;
    issim_arena_init(&arena);
    assert_null(issim_arena_alloc(&arena, SIZE_MAX / 2, 4));
    assert_int_equal(issim_arena_mark(&arena), 0);
    issim_arena_free(&arena);
}

static void test_array_reserve_keeps_items(void **state) {
    (void)state;
    int *items = NULL, capacity = 0;
    assert_true(ISSIM_ARRAY_RESERVE(items, capacity, 5));
    assert_int_equal(capacity, 16);
    for (int i = 0; i < 5; i++)
        items[i] = 7 * i;
    assert_true(ISSIM_ARRAY_RESERVE(items, capacity, 40));
    assert_int_equal(capacity, 64);
    for (int i = 0; i < 5; i++)
        assert_int_equal(items[i], 7 * i);
    int *before = items;
    assert_true(ISSIM_ARRAY_RESERVE(items, capacity, 64)); /* fits: untouched */
    assert_ptr_equal(items, before);
    assert_int_equal(issim_array_grown_capacity(16, 17), 32);
    assert_true(ISSIM_ARRAY_RESIZE(items, 0));
    assert_null(items);
}

static void test_array_failure_loses_nothing(void **state) {
    (void)state;
    double *items = NULL;
    int capacity = 0;
    assert_true(ISSIM_ARRAY_RESERVE(items, capacity, 3));
    items[2] = 2.5;
    /* a size that cannot be represented: refused before any allocation */
    assert_false(issim_array_reserve(&items, &capacity, INT32_MAX, SIZE_MAX / 4));
    assert_int_equal(capacity, 16);
    assert_true(items[2] == 2.5);
    assert_true(ISSIM_ARRAY_RESIZE(items, 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_aligned_and_kept),
        cmocka_unit_test(test_reset_to_mark_reuses),
        cmocka_unit_test(test_no_allocation_after_warm_up),
        cmocka_unit_test(test_overflowing_request_refused),
        cmocka_unit_test(test_array_reserve_keeps_items),
        cmocka_unit_test(test_array_failure_loses_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
