/* The narrow phase on several threads (issue 33 item 1), under ThreadSanitizer (label threads):
 * - the task pool runs every iteration exactly once, on 1, 2 and 4 threads, loop after loop,
 *   and a loop no larger than its grain runs on the caller;
 * - a collision world of 400 overlapping boxes and spheres moved over 20 updates gives the same
 *   contacts (every byte: ids, points, normals, distances), the same ended ids and the same
 *   statistics on 2 and 4 threads as on 1, and the parallel path did test the pairs;
 * - the 240-body pile (scenes/pile.lua) advanced by the engine, penalty and complementarity,
 *   ends in the same state to the bit (every state variable) with EngineOptions.threads 1, 2
 *   and 4; threads 0 picks 2 for a scene that large with a core free, 1 for a scene of 2
 *   bodies, a busy machine or a single core. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "issim/collision.h"
#include "issim/engine.h"
#include "issim/engine_diagnostics.h"
#include "issim/task_pool.h"
#include "testutil.h"

/* ===== The task pool ===== */

enum { LOOP_COUNT = 10007 };

typedef struct Squares {
    long long *slot;
    atomic_int calls;
} Squares;

static void square_range(void *ctx, int begin, int end) {
    Squares *sq = ctx;
    atomic_fetch_add(&sq->calls, 1);
    for (int i = begin; i < end; i++)
        sq->slot[i] += (long long)i * i;
}

static void test_pool_runs_each_iteration_once(void **state) {
    (void)state;
    long long *slot = calloc(LOOP_COUNT, sizeof *slot);
    assert_non_null(slot);
    const int threads[] = {1, 2, 4};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        TaskPool *pool = task_pool_create(threads[t], NULL);
        assert_non_null(pool);
        assert_int_equal(task_pool_threads(pool), threads[t]);
        memset(slot, 0, sizeof *slot * LOOP_COUNT);
        Squares sq = {.slot = slot};
        for (int loop = 0; loop < 200; loop++)
            task_pool_for(pool, LOOP_COUNT, 64, square_range, &sq);
        for (int i = 0; i < LOOP_COUNT; i++)
            assert_true(slot[i] == 200LL * i * i);
        /* one thread: the whole loop in one call; else ranges of at most 64, 157 a loop */
        assert_int_equal(atomic_load(&sq.calls), threads[t] == 1 ? 200 : 200 * 157);
        task_pool_destroy(pool);
    }
    free(slot);
}

static void test_pool_small_loop_on_caller(void **state) {
    (void)state;
    TaskPool *pool = task_pool_create(2, NULL);
    assert_non_null(pool);
    long long slot[16] = {0};
    Squares sq = {.slot = slot};
    task_pool_for(pool, 16, 16, square_range, &sq); /* one range: the caller's */
    assert_int_equal(atomic_load(&sq.calls), 1);
    assert_true(slot[15] == 225);
    task_pool_for(NULL, 16, 4, square_range, &sq); /* no pool: the caller, in one call */
    assert_int_equal(atomic_load(&sq.calls), 2);
    assert_true(slot[15] == 450);
    task_pool_destroy(pool);
    IssimError err = {0};
    assert_null(task_pool_create(0, &err));
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "at least 1 thread"));
}

/* ===== The collision world ===== */

enum { WORLD_BODIES = 400, WORLD_UPDATES = 20 };

static Pose body_pose_at(int i, int update) {
    double a = 0.37 * i + 0.05 * update;
    Vec3 p = vec3(0.09 * (i % 20) + 0.004 * sin(a), 0.09 * (i / 20) + 0.004 * cos(a),
                  0.05 + 0.003 * sin(2.0 * a));
    Quat q = quat_normalize((Quat){1.0, 0.1 * sin(a), 0.1 * cos(a), 0.05 * (i % 3)});
    return (Pose){p, q};
}

typedef struct WorldRun {
    CollisionContact *contacts; /* every update's, concatenated */
    uint32_t *ended;
    int contact_count, ended_count, parallel_pairs, touching_pairs;
} WorldRun;

static WorldRun run_world(int threads) {
    CollisionDesc desc = collision_desc_default();
    desc.threads = threads;
    CollisionWorld *w = collision_world_create(&desc, NULL);
    assert_non_null(w);
    assert_int_equal(collision_world_threads(w), threads);
    Shape floor = shape_box(vec3(5.0, 5.0, 0.05));
    Shape ball = shape_sphere(0.05), box = shape_box(vec3(0.045, 0.04, 0.035));
    for (int i = 0; i < WORLD_BODIES; i++)
        collision_world_add(w, i % 2 ? &ball : &box, body_pose_at(i, 0), false);
    collision_world_add(w, &floor, (Pose){vec3(0.9, 0.9, -0.04), quat_identity()}, true);
    WorldRun run = {0};
    for (int u = 0; u < WORLD_UPDATES; u++) {
        for (int i = 0; i < WORLD_BODIES; i++)
            collision_world_set_pose(w, i, body_pose_at(i, u));
        collision_world_update(w);
        int n, ne;
        const CollisionContact *c = collision_world_contacts(w, &n);
        const uint32_t *ended = collision_world_ended(w, &ne);
        run.contacts = realloc(run.contacts, sizeof *c * (size_t)(run.contact_count + n));
        run.ended = realloc(run.ended, sizeof *ended * (size_t)(run.ended_count + ne + 1));
        assert_non_null(run.contacts);
        assert_non_null(run.ended);
        memcpy(run.contacts + run.contact_count, c, sizeof *c * (size_t)n);
        if (ne > 0)
            memcpy(run.ended + run.ended_count, ended, sizeof *ended * (size_t)ne);
        run.contact_count += n;
        run.ended_count += ne;
        CollisionStats st = collision_world_stats(w);
        run.parallel_pairs += st.parallel_pairs;
        run.touching_pairs += st.touching_pairs;
    }
    collision_world_destroy(w);
    return run;
}

static void test_world_same_contacts_on_any_thread_count(void **state) {
    (void)state;
    WorldRun one = run_world(1);
    assert_int_equal(one.parallel_pairs, 0);
    assert_true(one.touching_pairs > 20 * WORLD_UPDATES); /* a real workload */
    assert_true(one.contact_count > 100 * WORLD_UPDATES);
    const int threads[] = {2, 4};
    for (size_t t = 0; t < 2; t++) {
        WorldRun many = run_world(threads[t]);
        print_message("%d threads: %d contacts over %d updates, %d pairs tested in parallel\n",
                      threads[t], many.contact_count, WORLD_UPDATES, many.parallel_pairs);
        assert_true(many.parallel_pairs > 100 * WORLD_UPDATES);
        assert_int_equal(many.contact_count, one.contact_count);
        assert_int_equal(many.ended_count, one.ended_count);
        assert_int_equal(many.touching_pairs, one.touching_pairs);
        assert_memory_equal(many.contacts, one.contacts,
                            sizeof *one.contacts * (size_t)one.contact_count);
        if (one.ended_count > 0)
            assert_memory_equal(many.ended, one.ended, sizeof *one.ended * (size_t)one.ended_count);
        free(many.contacts);
        free(many.ended);
    }
    free(one.contacts);
    free(one.ended);
}

/* ===== The engine ===== */

static uint64_t pile_hash(int threads, bool complementarity, double until, int *used) {
    char *text = test_pile_source(240, complementarity ? 1e-3 : 5e-4, "");
    EngineOptions o = engine_options_default();
    o.asset_dir = test_source_path("scenes/");
    o.threads = threads;
    Engine *e = test_engine_from_source_with("pile.lua", text, &o);
    free(text);
    IssimError err = {0};
    if (complementarity) {
        assert_int_equal(engine_apply_edit(e, "pile_pile.resolver", "complementarity", &err),
                         ISSIM_OK);
        assert_int_equal(engine_apply_edit(e, "pile_wall.resolver", "complementarity", &err),
                         ISSIM_OK);
    }
    IssimStatus s = engine_advance(e, until, &err);
    if (s != ISSIM_OK)
        fail_msg("pile: %s", err.message);
    *used = engine_threads(e);
    uint64_t h = test_engine_state_hash(e);
    engine_destroy(e);
    return h;
}

static void check_pile(bool complementarity, double until) {
    int used;
    uint64_t serial = pile_hash(1, complementarity, until, &used);
    assert_int_equal(used, 1);
    const int threads[] = {2, 4};
    for (size_t t = 0; t < 2; t++) {
        uint64_t h = pile_hash(threads[t], complementarity, until, &used);
        print_message("%s pile to %g s: %d threads %016llx, 1 thread %016llx\n",
                      complementarity ? "complementarity" : "penalty", until, threads[t],
                      (unsigned long long)h, (unsigned long long)serial);
        assert_int_equal(used, threads[t]);
        assert_true(h == serial);
    }
}

static void test_pile_penalty_same_state(void **state) {
    (void)state;
    check_pile(false, 0.05);
}

static void test_pile_complementarity_same_state(void **state) {
    (void)state;
    check_pile(true, 0.1);
}

static void test_threads_auto(void **state) {
    (void)state;
    const int big = ENGINE_PARALLEL_MIN_BODIES;
    assert_int_equal(engine_threads_for(big - 1, 2, 0.0), 1); /* too small to pay */
    assert_int_equal(engine_threads_for(big, 2, 0.0), 2);
    assert_int_equal(engine_threads_for(240, 2, 1.0), 2); /* one core free */
    assert_int_equal(engine_threads_for(240, 2, 1.5), 1); /* none free */
    assert_int_equal(engine_threads_for(240, 8, 3.0), 2); /* two, even with more */
    assert_int_equal(engine_threads_for(240, 1, 0.0), 1); /* one core */
    assert_int_equal(engine_threads_for(240, 2, NAN), 1); /* a load that is no number */
    int used;
    (void)pile_hash(0, false, 1e-3, &used);
    assert_true(used == 1 || used == 2); /* 240 bodies: 2 unless the machine is busy */
    Engine *e = test_engine_from_scene("scenes/bolt_and_hole.lua");
    assert_int_equal(engine_threads(e), 1);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_runs_each_iteration_once),
        cmocka_unit_test(test_pool_small_loop_on_caller),
        cmocka_unit_test(test_world_same_contacts_on_any_thread_count),
        cmocka_unit_test(test_pile_penalty_same_state),
        cmocka_unit_test(test_pile_complementarity_same_state),
        cmocka_unit_test(test_threads_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
