/* Interactive mode: the engine thread runs ahead of the display time by at most the horizon,
 * applies an edit by resetting to the display time (the past stays, the future is recomputed),
 * and rejects a bad edit with its reason. Runs under ThreadSanitizer (label "threads"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/sim.h"
#include "testutil.h"

static void nap_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Polls (bounded) until the display time passes t. */
static void wait_display(Sim *sim, double t) {
    for (int i = 0; i < 5000 && sim_display_time(sim) < t; i++)
        nap_ms(1);
    assert_true(sim_display_time(sim) >= t);
}

static RegistryEditState wait_edit(Registry *reg, uint64_t id, RegistryEditResult *res) {
    RegistryEditState st = REGISTRY_EDIT_PENDING;
    for (int i = 0; i < 5000 && (st = registry_edit_result(reg, id, res)) == REGISTRY_EDIT_PENDING;
         i++)
        nap_ms(1);
    return st;
}

static void test_run_ahead_and_reset_on_edit(void **state) {
    const char *sets[] = {"universe.horizon=0.2", "bar.pos=0 0 5.1"};
    TestRun *run =
        test_load_scene("scenes/point_drop.lua", &(TestRunOptions){.sets = sets, .set_count = 2});
    Sim *sim = run->sim;
    IssimError err = {0};
    Registry *reg = sim_registry(sim);
    int vz = registry_var_find(reg, "bar.vel.z");
    assert_true(vz >= 0);
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);

    /* Run-ahead stays bounded by the horizon (one output step of slack). */
    double max_ahead = -1;
    for (int i = 0; i < 100; i++) {
        double shown = sim_display_time(sim);
        double ahead = registry_state_time(reg) - shown;
        if (ahead > max_ahead)
            max_ahead = ahead;
        nap_ms(2);
    }
    assert_true(max_ahead <= 0.2 + 0.001 + 0.05); /* 50 ms: the reading is not atomic */
    assert_true(max_ahead > 0.1);                 /* and it does run ahead */

    /* Switch gravity off in flight. */
    wait_display(sim, 0.3);
    uint64_t id = registry_edit_submit(reg, "universe.gravity", "0 0 0", &err);
    assert_true(id > 0);
    RegistryEditResult res;
    assert_int_equal(wait_edit(reg, id, &res), REGISTRY_EDIT_ACCEPTED);
    double t_edit = res.sim_time;
    assert_true(t_edit >= 0.3 - 0.05 && t_edit <= 0.3 + 0.2);
    wait_display(sim, t_edit + 0.3);

    /* Before the edit: free fall. After: constant velocity. */
    double times[4096], v[4096];
    int n = registry_history(reg, vz, 0.0, t_edit + 0.25, times, v, 4096);
    assert_true(n > 100);
    int before = 0, after = 0;
    double v_edit = NAN;
    for (int i = 0; i < n; i++) {
        if (times[i] <= t_edit + 1e-12) {
            assert_near(v[i], -9.81 * times[i], 1e-6);
            v_edit = v[i];
            before++;
        }
    }
    for (int i = 0; i < n; i++) {
        if (times[i] > t_edit + 1e-12) {
            assert_near(v[i], v_edit, 1e-9);
            after++;
        }
    }
    assert_true(before > 50 && after > 50);

    /* A bad edit is refused with its reason, and changes nothing. */
    id = registry_edit_submit(reg, "bar.mass", "-1", &err);
    assert_int_equal(wait_edit(reg, id, &res), REGISTRY_EDIT_REJECTED);
    assert_non_null(strstr(res.reason, "bar.mass"));
    id = registry_edit_submit(reg, "universe.planar", "false", &err);
    assert_int_equal(wait_edit(reg, id, &res), REGISTRY_EDIT_REJECTED);
    assert_non_null(strstr(res.reason, "fixed during a run"));

    RegistrySlot stats;
    registry_slot_read(reg, REGISTRY_SLOT_ENGINE_STATS, &stats);
    assert_true(stats.count > 0);
    assert_near(stats.v[ENGINE_STAT_RESETS], 1.0, 0.0);
    assert_near(stats.v[ENGINE_STAT_BODIES], 1.0, 0.0);
    assert_near(stats.v[ENGINE_STAT_AWAKE_BODIES], 1.0, 0.0); /* falling: integrated */
    sim_stop(sim);
    test_run_free(run);
}

static void test_pause_freezes_display_time(void **state) {
    TestRun *run = test_load_scene("scenes/point_drop.lua", NULL);
    Sim *sim = run->sim;
    IssimError err = {0};
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    wait_display(sim, 0.05);
    sim_set_paused(sim, true);
    double t0 = sim_display_time(sim);
    nap_ms(50);
    assert_near(sim_display_time(sim), t0, 0.0);
    sim_set_speed(sim, 4.0);
    sim_set_paused(sim, false);
    double w0 = issim_wall_time();
    wait_display(sim, t0 + 0.2);
    /* At 4x, 0.2 s of simulated time takes about 50 ms of wall time. */
    assert_true(issim_wall_time() - w0 < 0.15);
    sim_stop(sim);
    test_run_free(run);
}

/* With the clock far ahead of the engine (speed 1e4), Pause stops the display at the newest
 * computed frame instead of at the clock's instant, which the engine would go on chasing. */
static void test_pause_stops_at_the_newest_frame_when_the_engine_lags(void **state) {
    (void)state;
    TestRun *run = test_load_scene("scenes/point_drop.lua", NULL);
    Sim *sim = run->sim;
    IssimError err = {0};
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    wait_display(sim, 0.05);
    sim_set_speed(sim, 1e4);
    nap_ms(20);
    double clock_before = sim_display_time(sim);
    sim_set_paused(sim, true);
    double shown = sim_display_time(sim), newest = registry_state_time(sim_registry(sim));
    assert_true(clock_before > newest + 1.0); /* the clock ran seconds ahead of the engine */
    assert_true(shown <= newest);
    nap_ms(50);
    assert_near(sim_display_time(sim), shown, 0.0);
    sim_stop(sim);
    test_run_free(run);
}

/* An edit rewinds to the display time through the checkpoint of that frame (contact state kept
 * with the data, engine.h): the restore is exact, nothing restarts. */
static void test_edit_rewinds_through_checkpoints(void **state) {
    (void)state;
    const char *sets[] = {"universe.horizon=0.2", "bar.pos=0 0 5.1"};
    TestRun *run =
        test_load_scene("scenes/point_drop.lua", &(TestRunOptions){.sets = sets, .set_count = 2});
    Sim *sim = run->sim;
    IssimError err = {0};
    Registry *reg = sim_registry(sim);
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    wait_display(sim, 0.2);
    uint64_t id = registry_edit_submit(reg, "universe.gravity", "0 0 -5", &err);
    RegistryEditResult res;
    assert_int_equal(wait_edit(reg, id, &res), REGISTRY_EDIT_ACCEPTED);
    sim_stop(sim);
    EngineStats st = engine_stats(sim_engine(sim));
    printf("interactive: %llu checkpoints, %llu exact restores, %llu restarts\n",
           (unsigned long long)st.checkpoints, (unsigned long long)st.restores,
           (unsigned long long)st.restarts);
    assert_true(st.checkpoints > 10);
    assert_true(st.restores >= 1);
    assert_int_equal(st.restarts, 0);
    test_run_free(run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edit_rewinds_through_checkpoints),
        cmocka_unit_test(test_run_ahead_and_reset_on_edit),
        cmocka_unit_test(test_pause_freezes_display_time),
        cmocka_unit_test(test_pause_stops_at_the_newest_frame_when_the_engine_lags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
