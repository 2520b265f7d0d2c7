/* Interactive mode: the engine thread runs ahead of the display time by at most the horizon,
 * applies an edit by resetting to the display time (the past stays, the future is recomputed),
 * rejects a bad edit with its reason, and stops within a step when asked. Runs under
 * ThreadSanitizer (label "threads"). Every wait is for an event the engine thread guarantees
 * (a frame, an edit's result), the display clock is paused where the engine has to be ahead of
 * it, and each test's teardown stops the session, so a failed assertion leaves no thread behind:
 * the suite holds on a loaded machine (issue 34 item 1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/engine_stats.h"
#include "issim/sim.h"
#include "testutil.h"

typedef struct DisplayWait {
    Sim *sim;
    double t;
} DisplayWait;

static bool display_reached(void *arg) {
    const DisplayWait *w = arg;
    return sim_display_time(w->sim) >= w->t;
}

/* The display clock runs with the wall clock while not paused: it passes t. */
static void wait_display(Sim *sim, double t) {
    DisplayWait w = {sim, t};
    test_wait_for(display_reached, &w, "the display clock");
}

typedef struct EditWait {
    Registry *reg;
    uint64_t id;
    RegistryEditResult *res;
    RegistryEditState st;
} EditWait;

static bool edit_resolved(void *arg) {
    EditWait *w = arg;
    return (w->st = registry_edit_result(w->reg, w->id, w->res)) != REGISTRY_EDIT_PENDING;
}

/* The engine thread resolves every edit it pops, at its next loop. */
static RegistryEditState wait_edit(Registry *reg, uint64_t id, RegistryEditResult *res) {
    EditWait w = {reg, id, res, REGISTRY_EDIT_PENDING};
    test_wait_for(edit_resolved, &w, "the edit's result");
    return w.st;
}

/* Starts the engine thread with the display clock paused at 0: what the display shows is then
 * set by the test (sim_seek), not by how fast a loaded machine runs the engine. */
static void start_paused(Sim *sim) {
    IssimError err = {0};
    sim_set_paused(sim, true);
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    assert_near(sim_display_time(sim), 0.0, 0.0);
}

/* Shows t and waits until the engine has filled the horizon ahead of it, which it does whatever
 * the load: it steps while its time is below display time + horizon. */
static void show_with_the_horizon_full(Sim *sim, double t, double horizon) {
    sim_seek(sim, t);
    assert_near(sim_display_time(sim), t, 0.0);
    test_wait_state_time(sim_registry(sim), t + horizon);
}

static void test_run_ahead_and_reset_on_edit(void **state) {
    TestThreads *th = *state;
    const char *sets[] = {"universe.horizon=0.2", "bar.pos=0 0 5.1"};
    th->run =
        test_load_scene("scenes/point_drop.lua", &(TestRunOptions){.sets = sets, .set_count = 2});
    Sim *sim = th->run->sim;
    IssimError err = {0};
    Registry *reg = sim_registry(sim);
    int vz = registry_var_find(reg, "bar.vel.z");
    assert_true(vz >= 0);
    double dt = sim_dt(sim);
    start_paused(sim);

    /* Run-ahead reaches the horizon and stops there (within the step that crossed it). */
    double shown = 0.3;
    show_with_the_horizon_full(sim, shown, 0.2);
    for (int i = 0; i < 20; i++) {
        double ahead = registry_state_time(reg) - shown;
        assert_true(ahead >= 0.2 - 1e-9 && ahead < 0.2 + dt + 1e-9);
        test_nap_ms(2);
    }

    /* Switch gravity off in flight: the engine goes back to the frame shown. */
    uint64_t id = registry_edit_submit(reg, "universe.gravity", "0 0 0", &err);
    assert_true(id > 0);
    RegistryEditResult res;
    assert_int_equal(wait_edit(reg, id, &res), REGISTRY_EDIT_ACCEPTED);
    double t_edit = res.sim_time;
    assert_true(t_edit <= shown && t_edit > shown - dt - 1e-9);
    sim_set_paused(sim, false);
    test_wait_state_time(reg, t_edit + 0.25);

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
    SimEngineStats st = sim_engine_stats_unpack(&stats);
    assert_int_equal(st.resets, 1);
    assert_int_equal(st.bodies, 1);
    assert_int_equal(st.awake_bodies, 1); /* falling: integrated */
}

static void test_pause_freezes_display_time(void **state) {
    TestThreads *th = *state;
    th->run = test_load_scene("scenes/point_drop.lua", NULL);
    Sim *sim = th->run->sim;
    IssimError err = {0};
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    wait_display(sim, 0.05);
    sim_set_paused(sim, true);
    double t0 = sim_display_time(sim);
    test_nap_ms(50);
    assert_near(sim_display_time(sim), t0, 0.0);
    sim_set_speed(sim, 4.0);
    /* The clock restarts from t0 at 4x during the call: any later reading lies between 4x the
       wall time since the call returned and 4x the wall time since it began. */
    double w_before = issim_wall_time();
    sim_set_paused(sim, false);
    double w_after = issim_wall_time();
    wait_display(sim, t0 + 0.2);
    double w_a = issim_wall_time();
    double shown = sim_display_time(sim);
    double w_b = issim_wall_time();
    assert_true(shown >= t0 + 4.0 * (w_a - w_after) - 1e-9);
    assert_true(shown <= t0 + 4.0 * (w_b - w_before) + 1e-9);
}

/* With the clock far ahead of the engine (speed 1e4), Pause stops the display at the newest
 * computed frame instead of at the clock's instant, which the engine would go on chasing. */
static bool clock_seconds_ahead(void *arg) {
    Sim *sim = arg;
    return sim_display_time(sim) > registry_state_time(sim_registry(sim)) + 1.0;
}

static void test_pause_stops_at_the_newest_frame_when_the_engine_lags(void **state) {
    TestThreads *th = *state;
    /* point_drop slows at its impacts by default, and slow motion keeps the clock a window
     * behind the newest frame, so it can never lag: this is the true-speed transport */
    const char *sets[] = {"universe.slow_motion=0"};
    th->run =
        test_load_scene("scenes/point_drop.lua", &(TestRunOptions){.sets = sets, .set_count = 1});
    Sim *sim = th->run->sim;
    IssimError err = {0};
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    wait_display(sim, 0.05);
    sim_set_speed(sim, 1e4);
    /* the engine computes point_drop at hundreds of times real time, not 1e4 */
    test_wait_for(clock_seconds_ahead, sim, "the clock to run a second ahead of the engine");
    sim_set_paused(sim, true);
    double shown = sim_display_time(sim), newest = registry_state_time(sim_registry(sim));
    assert_true(shown <= newest);
    test_nap_ms(50);
    assert_near(sim_display_time(sim), shown, 0.0);
}

/* An edit rewinds to the display time through the checkpoint of that frame (contact state kept
 * with the data, engine.h): the restore is exact, nothing restarts. The display shows an instant
 * the engine has passed, so that there is a frame to go back to: with the clock running, a
 * loaded machine's engine lagged it, had nothing to rewind (the edit applied at its newest
 * frame), and this test saw 0 restores at load 12. */
static void test_edit_rewinds_through_checkpoints(void **state) {
    TestThreads *th = *state;
    const char *sets[] = {"universe.horizon=0.2", "bar.pos=0 0 5.1"};
    th->run =
        test_load_scene("scenes/point_drop.lua", &(TestRunOptions){.sets = sets, .set_count = 2});
    Sim *sim = th->run->sim;
    IssimError err = {0};
    Registry *reg = sim_registry(sim);
    start_paused(sim);
    double shown = 0.2;
    show_with_the_horizon_full(sim, shown, 0.2);
    uint64_t id = registry_edit_submit(reg, "universe.gravity", "0 0 -5", &err);
    RegistryEditResult res;
    assert_int_equal(wait_edit(reg, id, &res), REGISTRY_EDIT_ACCEPTED);
    assert_true(res.sim_time <= shown);
    sim_stop(sim);
    EngineStats st = engine_stats(sim_engine(sim));
    printf("interactive: %llu checkpoints, %llu exact restores, %llu restarts\n",
           (unsigned long long)st.checkpoints, (unsigned long long)st.restores,
           (unsigned long long)st.restarts);
    assert_true(st.checkpoints > 10);
    assert_true(st.restores >= 1);
    assert_int_equal(st.restarts, 0);
}

/* A ball resting on the floor through a contact map sampled every 1e-7 s: each 10 ms output
 * step is 1e5 fixed engine steps, a slow step. */
static const char *const slow_steps =
    "return {\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'rk4', dt = 1e-2, horizon = 10 },\n"
    "  things = {\n"
    "    { name = 'ball', kind = 'body', shape = 'sphere', radius = 0.1, mass = 1,\n"
    "      inertia = {0.004, 0.004, 0.004}, pos = {0, 0, 0.097}, material = 'ball',\n"
    "      contact_map = 'flat 4000 period 1e-7' },\n"
    "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1}, offset = 0,\n"
    "      material = 'floor' },\n"
    "  },\n"
    "  contacts = {\n"
    "    { name = 'ball_floor', materials = {'ball', 'floor'}, model = 'contact_map',\n"
    "      stiffness = 1e6, damping_from = 'value', damping = 0 },\n"
    "  },\n"
    "}\n";

/* Stop is a request the engine honours before each integrator step (issue 34 item 3b): sim_stop
 * returns within one fixed step of the output step under way, which is given up (the state stays
 * at its last output instant: as many fixed steps were counted as the output steps reached,
 * plus the part of the cancelled one), never after the horizon's worth of steps the thread would
 * otherwise still take. Before, the whole output step under way (1e5 fixed steps) was taken. */
static void test_stop_during_a_slow_step_returns_within_a_step(void **state) {
    TestThreads *th = *state;
    testlog_capture(); /* the ball starts in its contact: the overlap warning is expected */
    th->sim = test_sim_from_source("slow_steps.lua", slow_steps);
    Sim *sim = th->sim;
    Registry *reg = sim_registry(sim);
    double dt = sim_dt(sim);
    IssimError err = {0};
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    test_wait_state_time(reg, dt); /* stepping, in contact from the start */
    double t_request = registry_state_time(reg);
    /* busy: far behind its horizon (10 s ahead of the clock), so it would go on stepping */
    assert_true(t_request < sim_display_time(sim) + 10.0 - dt);
    sim_stop(sim);
    double t_stopped = engine_time(sim_engine(sim));
    EngineStats st = engine_stats(sim_engine(sim));
    print_message("stopped at t = %g s, frame at the request %g s (dt %g s); %llu fixed steps\n",
                  t_stopped, t_request, dt, (unsigned long long)st.fixed_steps);
    assert_true(st.fixed_steps >= 50000); /* the steps were slow ones */
    assert_true(t_stopped <= t_request + 2.0 * dt + 1e-9);
    /* the output steps reached took 1e5 fixed steps each (dt 1e-2 s / period 1e-7 s); a request
       inside the next ends it there: its part is counted (0 when the request came between two
       output steps; the engine-level test in test_contact_map_period makes it land inside) */
    double reached = round(t_stopped / dt) * 1e5;
    print_message("fixed steps beyond the output steps reached: %.0f of 1e5\n",
                  (double)st.fixed_steps - reached);
    assert_true((double)st.fixed_steps >= reached);
    assert_true((double)st.fixed_steps < reached + 1e5);
    assert_int_equal(engine_active_contact_count(sim_engine(sim)), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_edit_rewinds_through_checkpoints, test_threads_setup,
                                        test_threads_teardown),
        cmocka_unit_test_setup_teardown(test_run_ahead_and_reset_on_edit, test_threads_setup,
                                        test_threads_teardown),
        cmocka_unit_test_setup_teardown(test_pause_freezes_display_time, test_threads_setup,
                                        test_threads_teardown),
        cmocka_unit_test_setup_teardown(test_pause_stops_at_the_newest_frame_when_the_engine_lags,
                                        test_threads_setup, test_threads_teardown),
        cmocka_unit_test_setup_teardown(test_stop_during_a_slow_step_returns_within_a_step,
                                        test_threads_setup, test_threads_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
