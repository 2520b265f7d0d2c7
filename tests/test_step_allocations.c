/* Issue 33 item 2: no allocation in a step. Once a scene's buffers have grown to its contacts,
 * engine_advance allocates nothing: every malloc, calloc, realloc and aligned allocation of the
 * process (every thread: the engine's pool and the collision pipeline too) is counted over the
 * steps of a settled run.
 *
 * The count comes from the allocator itself, not from the engine: in a plain build this file
 * defines malloc and its kin over glibc's (__libc_malloc, ...), which the linker gives every
 * caller in the process; under AddressSanitizer, which owns malloc, from its allocation hook
 * (__sanitizer_malloc_hook, which this file defines over the runtime's weak one). Under
 * ThreadSanitizer the test is skipped. */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "issim/engine.h"
#include "testutil.h"

static atomic_long allocations;

#if defined(__SANITIZE_ADDRESS__)
#define COUNTS_ALLOCATIONS 1
/* AddressSanitizer calls this (a weak symbol of its runtime) after every allocation. */
void __sanitizer_malloc_hook(const volatile void *p, size_t size);
void __sanitizer_malloc_hook(const volatile void *p, size_t size) {
    (void)p;
    (void)size;
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}
static void install_counter(void) {}
#elif defined(__SANITIZE_THREAD__)
#define COUNTS_ALLOCATIONS 0
static void install_counter(void) {}
#else
#define COUNTS_ALLOCATIONS 1
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t alignment, size_t size);

void *malloc(size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_malloc(size);
}
void *calloc(size_t count, size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_calloc(count, size);
}
void *realloc(void *p, size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_realloc(p, size);
}
void *aligned_alloc(size_t alignment, size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_memalign(alignment, size);
}
int posix_memalign(void **out, size_t alignment, size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    void *p = __libc_memalign(alignment, size);
    if (!p)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}
static void install_counter(void) {}
#endif

/* Advances from the engine's time to t one output step per call, as the interactive engine and
 * the headless run call it (a complementarity island steps by the call's interval). */
static void advance_by_steps(Engine *e, double t) {
    double dt = engine_dt(e);
    for (long k = lround(engine_time(e) / dt) + 1; k * dt <= t + 1e-12; k++)
        test_advance(e, k * dt);
}

/* Allocations while the engine advances to t. */
static long allocations_over(Engine *e, double t) {
    long before = atomic_load(&allocations);
    advance_by_steps(e, t);
    return atomic_load(&allocations) - before;
}

/* Settles for `settle` s, then counts the allocations of the next `counted` s. */
static long settled_allocations(Engine *e, double settle, double counted) {
    double dt = engine_dt(e);
    advance_by_steps(e, settle);
    long count = allocations_over(e, settle + counted);
    printf("  %ld allocations over %.0f steps after %.2f s\n", count, counted / dt, settle);
    return count;
}

static void test_the_sphere_pile_steps_allocate_nothing(void **state) {
    (void)state;
    if (!COUNTS_ALLOCATIONS)
        skip();
    install_counter();
    Engine *e = test_engine_from_scene("scenes/sphere_pile.lua");
    assert_int_equal(settled_allocations(e, 2.0, 0.2), 0);
    engine_destroy(e);
}

static void test_the_penalty_pile_steps_allocate_nothing(void **state) {
    (void)state;
    if (!COUNTS_ALLOCATIONS)
        skip();
    install_counter();
    Engine *e = test_pile_engine(60, 5e-4, "");
    assert_int_equal(settled_allocations(e, 1.5, 0.05), 0);
    engine_destroy(e);
}

static void test_the_complementarity_pile_steps_allocate_nothing(void **state) {
    (void)state;
    if (!COUNTS_ALLOCATIONS)
        skip();
    install_counter();
    Engine *e = test_pile_engine(60, 1e-3, "");
    test_pile_to_complementarity(e);
    assert_int_equal(settled_allocations(e, 1.5, 0.1), 0);
    engine_destroy(e);
}

static void test_the_pipelined_pile_steps_allocate_nothing(void **state) {
    (void)state;
    if (!COUNTS_ALLOCATIONS)
        skip();
    install_counter();
    Engine *e = test_pile_engine_piped(60, 1e-3, true, 2);
    test_pile_to_complementarity(e);
    assert_int_equal(settled_allocations(e, 1.5, 0.1), 0);
    engine_destroy(e);
}

/* The counter counts: a step that must grow its buffers (the first steps of a pour, contacts
 * appearing) is seen allocating, so a zero above is not a counter that never runs. */
static void test_the_counter_sees_the_first_steps_grow(void **state) {
    (void)state;
    if (!COUNTS_ALLOCATIONS)
        skip();
    install_counter();
    long before = atomic_load(&allocations);
    Engine *e = test_pile_engine(60, 1e-3, "");
    assert_true(atomic_load(&allocations) - before > 0);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_counter_sees_the_first_steps_grow),
        cmocka_unit_test(test_the_sphere_pile_steps_allocate_nothing),
        cmocka_unit_test(test_the_penalty_pile_steps_allocate_nothing),
        cmocka_unit_test(test_the_complementarity_pile_steps_allocate_nothing),
        cmocka_unit_test(test_the_pipelined_pile_steps_allocate_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
