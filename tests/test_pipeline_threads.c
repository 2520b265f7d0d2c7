/* The collision pipeline (EngineOptions.pipeline_collision, issue 33: the collision world a step
 * ahead on the manager's thread while the engine solves), under ThreadSanitizer (label threads):
 * - deterministic: the 240-body pile (penalty and complementarity) ends in the same state to the
 *   bit in two pipelined runs and with 1, 2 and 4 threads, every step after the first merged
 *   through the pipeline; and not the serial path's state (the pipeline was in use);
 * - a state restored, a mass edited and a resolver switched while an update is in flight: the
 *   engine carries on (finite state, reports merged through the pipeline again), and two runs
 *   from the same restored state end in the same bits;
 * - rewound through the checkpoint ring twice to the same frame: the same bits after both.
 * Its physics (energy, overlaps from the poses) is tests/test_pipeline_physics.c: no hand-over
 * there that these do not make, and too long a run for the ThreadSanitizer build. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_diagnostics.h"
#include "issim/engine_stats.h"
#include "testutil.h"

/* The pile stepped to `until`, one output step at a time; its state's hash. */
static uint64_t pile_hash(bool complementarity, double dt, double until, bool pipeline, int threads,
                          uint64_t *pipeline_reports, int *steps) {
    Engine *e = test_pile_engine_piped(240, dt, pipeline, threads);
    if (complementarity)
        test_pile_to_complementarity(e);
    *steps = 0;
    while (engine_time(e) < until - 0.5 * dt) {
        test_advance(e, engine_time(e) + dt);
        (*steps)++;
    }
    *pipeline_reports = engine_stats(e).collision_pipeline_reports;
    uint64_t h = test_engine_state_hash(e);
    engine_destroy(e);
    return h;
}

static void check_deterministic(bool complementarity, double dt, double until) {
    uint64_t reports, serial_reports;
    int steps;
    uint64_t serial = pile_hash(complementarity, dt, until, false, 1, &serial_reports, &steps);
    assert_int_equal(serial_reports, 0);
    uint64_t first = pile_hash(complementarity, dt, until, true, 1, &reports, &steps);
    /* the engine's first collide (at creation) and every step's but the one that only fed */
    assert_true(reports >= (uint64_t)steps - 1);
    printf("  %s pile to %g s: pipelined %016llx (%llu reports in %d steps), serial %016llx\n",
           complementarity ? "complementarity" : "penalty", until, (unsigned long long)first,
           (unsigned long long)reports, steps, (unsigned long long)serial);
    assert_true(first != serial); /* the contacts a step late: another trajectory */
    const int threads[] = {1, 2, 4};
    for (size_t t = 0; t < 3; t++) {
        uint64_t again = pile_hash(complementarity, dt, until, true, threads[t], &reports, &steps);
        assert_true(again == first);
    }
}

static void test_pipeline_deterministic_penalty(void **state) {
    (void)state;
    check_deterministic(false, 5e-4, 0.15);
}

static void test_pipeline_deterministic_complementarity(void **state) {
    (void)state;
    check_deterministic(true, 1e-3, 0.25);
}

/* Restored, edited and switched while an update is in flight. */
static void test_pipeline_survives_resets(void **state) {
    (void)state;
    Engine *e = test_pile_engine_piped(240, 5e-4, true, 2);
    int n = engine_var_count(e);
    double *at = calloc((size_t)n, sizeof *at), *end = calloc((size_t)n, sizeof *end);
    assert_non_null(at);
    assert_non_null(end);
    test_advance(e, 0.05);
    engine_write_vars(e, at);
    test_advance(e, 0.1);
    uint64_t original = test_engine_state_hash(e);
    IssimError err = {0};
    /* From the state at 0.05 s again, with the pipeline started afresh as at 0.05 s... */
    assert_int_equal(engine_restore_vars(e, 0.05, at, &err), ISSIM_OK);
    test_advance(e, 0.1);
    uint64_t first_replay = test_engine_state_hash(e);
    assert_int_equal(engine_restore_vars(e, 0.05, at, &err), ISSIM_OK);
    test_advance(e, 0.1);
    /* ...the run from a restore repeats itself to the bit (the original ran on through 0.05 s
     * with its contacts a step late, so it need not be the same) */
    assert_true(test_engine_state_hash(e) == first_replay);
    printf("  restored at 0.05 s: %016llx twice (the original %016llx)\n",
           (unsigned long long)first_replay, (unsigned long long)original);
    /* a property edited and a resolver switched mid-run */
    IssimStatus edited = engine_apply_edit(e, "b0.mass", "0.1", &err);
    if (edited != ISSIM_OK)
        fail_msg("edit: %s", err.message);
    test_advance(e, 0.12);
    test_pile_to_complementarity(e);
    uint64_t before = engine_stats(e).collision_pipeline_reports;
    test_advance(e, 0.2);
    assert_true(engine_stats(e).collision_pipeline_reports > before);
    engine_write_vars(e, end);
    for (int i = 0; i < n; i++)
        assert_true(isfinite(end[i]));
    free(at);
    free(end);
    engine_destroy(e);
}

/* Rewound through the checkpoint ring (the GUI's edits and scrubber): the update in flight is
 * dropped, the key restored and the frames after it replayed on the engine thread, and the
 * pipeline starts again; two rewinds to the same frame continue to the same bits. */
static void test_pipeline_checkpoint_rewind(void **state) {
    (void)state;
    Engine *e = test_pile_engine_piped(240, 5e-4, true, 2);
    IssimError err = {0};
    assert_int_equal(engine_enable_checkpoints(e, 400, 64u << 20, &err), ISSIM_OK);
    int n = engine_var_count(e);
    double *at = calloc((size_t)n, sizeof *at);
    assert_non_null(at);
    double t_at = 0.0;
    for (int frame = 1; frame <= 120; frame++) {
        test_advance(e, frame * 5e-4);
        engine_checkpoint(e);
        if (frame == 77) {
            engine_write_vars(e, at);
            t_at = engine_time(e);
        }
    }
    uint64_t hashes[2];
    for (int k = 0; k < 2; k++) {
        assert_true(engine_has_checkpoint(e, t_at));
        assert_int_equal(engine_restore_vars(e, t_at, at, &err), ISSIM_OK);
        uint64_t before = engine_stats(e).collision_pipeline_reports;
        for (int frame = 78; frame <= 100; frame++) {
            test_advance(e, frame * 5e-4);
            engine_checkpoint(e);
        }
        assert_true(engine_stats(e).collision_pipeline_reports > before);
        hashes[k] = test_engine_state_hash(e);
    }
    printf("  rewound to %.4f s twice: %016llx, %016llx (%llu frames replayed)\n", t_at,
           (unsigned long long)hashes[0], (unsigned long long)hashes[1],
           (unsigned long long)engine_stats(e).replayed_frames);
    assert_true(hashes[0] == hashes[1]);
    free(at);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_deterministic_penalty),
        cmocka_unit_test(test_pipeline_deterministic_complementarity),
        cmocka_unit_test(test_pipeline_survives_resets),
        cmocka_unit_test(test_pipeline_checkpoint_rewind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
