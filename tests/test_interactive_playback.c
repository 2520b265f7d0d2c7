/* Time around impacts (issue 31 item 1): the display clock's law and the interactive clock.
 *  - the law (sim_clock_advance), with numbers: the speed factor outside the windows, the slow
 *    rate within `window` of an impact, overlapping windows as one, a slow rate above the speed
 *    factor changing nothing, a stop at an instant, a limit never passed;
 *  - point_drop (the bar's tip 0.5 m above the floor: first impact at sqrt(2 h / g) =
 *    0.31928 s): the engine finds the impact at that instant, and with slow motion at 1/1000
 *    every two reads of the clock inside the window are at most 1/1000 of the wall time between
 *    them apart in simulated time (each read carries the wall time it was computed for: the
 *    assertion holds however fast the machine is);
 *    the states after the integrator's steps are kept meanwhile: through the 0.3 ms contact,
 *    inside one 1 ms output step, the tip presses into the floor with a force of the bounce;
 *  - "pause at next contact" stops the clock exactly at the impact and pauses it;
 *  - a rewind (a seek back and a reset) drops the impacts after the instant and finds them
 *    again at the same times;
 *  - universe.playback_speed and slow_motion set the clock when the session starts;
 *  - the scenes whose point is an impact open with slow motion on, slow enough that their first
 *    impact's contact (measured by a headless run) lasts a quarter second or more on screen and
 *    short enough to lie within the window. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/sim.h"
#include "testutil.h"

static const double first_impact = 0.31927542840705; /* sqrt(2 * 0.5 / 9.81) */

static void test_law_outside_and_inside_windows(void **state) {
    (void)state;
    const double impacts[] = {0.1, 0.5};
    SimClockRates r = {.speed = 0.5, .slow_rate = 1e-3, .window = 0.002};
    bool stopped;
    /* no impact near: the speed factor */
    assert_near(sim_clock_advance(&r, impacts, 2, 0.0, 0.1, NAN, INFINITY, &stopped), 0.05, 1e-15);
    assert_false(stopped);
    /* 0.09 to the window's start 0.098 takes 0.016 s at 0.5; the other 0.004 s at 1/1000 */
    assert_near(sim_clock_advance(&r, impacts, 2, 0.09, 0.02, NAN, INFINITY, &stopped),
                0.098 + 4e-6, 1e-12);
    /* inside the window: 1/1000 */
    assert_near(sim_clock_advance(&r, impacts, 2, 0.0995, 1.0, NAN, INFINITY, &stopped), 0.1005,
                1e-12);
    /* through the whole window: 4 s of wall, then the speed factor to the next window (0.498,
     * 0.792 s later), then 1/1000 for the 0.208 s left */
    assert_near(sim_clock_advance(&r, impacts, 2, 0.098, 5.0, NAN, INFINITY, &stopped),
                0.498 + 0.208e-3, 1e-12);
    /* no slow motion */
    SimClockRates plain = {.speed = 0.5, .slow_rate = 0.0, .window = 0.002};
    assert_near(sim_clock_advance(&plain, impacts, 2, 0.0995, 1.0, NAN, INFINITY, &stopped), 0.5995,
                1e-12);
    /* a speed factor already below the slow rate is kept */
    SimClockRates slower = {.speed = 1e-4, .slow_rate = 1e-3, .window = 0.002};
    assert_near(sim_clock_advance(&slower, impacts, 2, 0.0995, 1.0, NAN, INFINITY, &stopped),
                0.0996, 1e-12);
}

static void test_law_overlapping_windows_stop_and_limit(void **state) {
    (void)state;
    const double impacts[] = {0.100, 0.103, 0.2};
    SimClockRates r = {.speed = 1.0, .slow_rate = 1e-3, .window = 0.002};
    bool stopped;
    /* 0.098 to 0.105 is one window: 7 s of wall */
    assert_near(sim_clock_advance(&r, impacts, 3, 0.098, 7.0, NAN, INFINITY, &stopped), 0.105,
                1e-12);
    assert_near(sim_clock_advance(&r, impacts, 3, 0.098, 6.0, NAN, INFINITY, &stopped), 0.104,
                1e-12);
    /* a stop inside the window: exactly there, flagged */
    assert_near(sim_clock_advance(&r, impacts, 3, 0.0, 10.0, 0.1, INFINITY, &stopped), 0.1, 0.0);
    assert_true(stopped);
    /* a stop not reached */
    sim_clock_advance(&r, impacts, 3, 0.0, 0.05, 0.1, INFINITY, &stopped);
    assert_false(stopped);
    /* the limit: reached, not flagged; a clock already past it stays */
    assert_near(sim_clock_advance(&r, impacts, 3, 0.0, 10.0, NAN, 0.05, &stopped), 0.05, 0.0);
    assert_false(stopped);
    assert_near(sim_clock_advance(&r, impacts, 3, 0.07, 10.0, NAN, 0.05, &stopped), 0.07, 0.0);
    /* no time, no move */
    assert_near(sim_clock_advance(&r, impacts, 3, 0.099, 0.0, NAN, INFINITY, &stopped), 0.099, 0.0);
}

static Sim *start_point_drop(TestThreads *th, const char *extra_set) {
    const char *sets[] = {"universe.horizon=0.5", extra_set};
    th->run = test_load_scene("scenes/point_drop.lua",
                              &(TestRunOptions){.sets = sets, .set_count = extra_set ? 2 : 1});
    IssimError err = {0};
    assert_int_equal(sim_start(th->run->sim, &err), ISSIM_OK);
    return th->run->sim;
}

static void nap_ms(int ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Reads the clock until it passes t_end (or 120 s of wall: a failure); counts the pairs of reads
 * inside [lo, hi] and checks each advanced at most rate times the wall time between them. */
static int check_rate_between(Sim *sim, double lo, double hi, double rate, double t_end) {
    double wall0, t0 = sim_display_clock(sim, &wall0);
    double start = wall0;
    int inside = 0;
    while (t0 < t_end) {
        nap_ms(2);
        double wall1, t1 = sim_display_clock(sim, &wall1);
        assert_true(t1 >= t0);
        if (t0 >= lo && t1 <= hi) {
            inside++;
            if (t1 - t0 > rate * (wall1 - wall0) * (1 + 1e-9) + 1e-15)
                fail_msg("at t = %.9f: %.3g s simulated in %.3g s of wall", t0, t1 - t0,
                         wall1 - wall0);
        }
        t0 = t1;
        wall0 = wall1;
        if (wall1 - start > 120.0)
            fail_msg("the clock reached only t = %.6f in 120 s", t1);
    }
    return inside;
}

static void test_slow_motion_at_point_drop_impact(void **state) {
    TestThreads *th = *state;
    Sim *sim = start_point_drop(th, NULL);
    const double window = 5e-4, rate = 1e-3;
    sim_set_slow_motion(sim, rate, window);
    double t_end = first_impact + window + 1e-3;
    int inside = check_rate_between(sim, first_impact - window, first_impact + window, rate, t_end);
    double found[4];
    int n = sim_impacts_between(sim, 0.0, t_end, found, 4);
    print_message("impacts to %.4f s: %d, the first at %.8f s; %d reads inside its window\n", t_end,
                  n, n > 0 ? found[0] : NAN, inside);
    assert_int_equal(n, 1);
    assert_near(found[0], first_impact, 1e-5);
    /* a 1 ms window at 1/1000 lasts 1 s: hundreds of reads at 2 ms naps */
    assert_true(inside >= 10);
    /* the integrator's states through the 0.3 ms contact, inside one 1 ms output step, with
     * their contact: the tip pressed into the floor, the force of the bounce */
    int z = registry_var_find(sim_registry(sim), "bar.pos.z");
    assert_true(z >= 0);
    double values[64], shown = -1.0, deepest = 1.0, strongest = 0.0;
    assert_true(registry_var_count(sim_registry(sim)) <= 64);
    int states = 0;
    for (double t = found[0]; t < found[0] + 3e-4; t += 1e-5) {
        double t_state;
        ContactReport contacts[SIM_FINE_CONTACTS];
        int kept = 0;
        if (!sim_fine_state(sim, 0.319, t, values, &t_state, contacts, SIM_FINE_CONTACTS, &kept))
            continue;
        states += t_state != shown;
        shown = t_state;
        deepest = fmin(deepest, values[z]);
        for (int k = 0; k < kept; k++)
            strongest = fmax(strongest, contacts[k].normal_force);
    }
    print_message("%d states in the contact's 0.3 ms: tip %.3f mm into the floor, %.0f N\n", states,
                  1e3 * (0.1 - deepest), strongest);
    assert_true(states >= 10);
    assert_true(deepest < 0.1 - 1e-4);
    assert_true(strongest > 100.0);
}

static void test_pause_at_next_contact(void **state) {
    TestThreads *th = *state;
    Sim *sim = start_point_drop(th, NULL);
    sim_set_pause_at_contact(sim, true);
    assert_true(sim_pause_at_contact(sim));
    double wall0;
    sim_display_clock(sim, &wall0);
    while (!sim_paused(sim)) {
        nap_ms(5);
        double wall;
        double t = sim_display_clock(sim, &wall);
        if (wall - wall0 > 120.0)
            fail_msg("no stop by t = %.6f after 120 s", t);
    }
    double t = sim_display_time(sim);
    double found[2];
    assert_int_equal(sim_impacts_between(sim, 0.0, t, found, 2), 1);
    assert_near(t, found[0], 0.0); /* exactly at the impact */
    assert_near(t, first_impact, 1e-5);
    assert_false(sim_pause_at_contact(sim)); /* disarmed */
    assert_int_equal((int)sim_clock_stops(sim), 1);
    /* paused: the clock stays */
    nap_ms(20);
    assert_near(sim_display_time(sim), t, 0.0);
}

static void test_rewind_finds_impacts_again(void **state) {
    TestThreads *th = *state;
    Sim *sim = start_point_drop(th, NULL);
    sim_set_paused(sim, true);
    /* the paused engine fills its horizon: 0.5 s holds the first impact */
    test_wait_state_time(sim_registry(sim), 0.45);
    double before[4];
    assert_int_equal(sim_impacts_between(sim, 0.0, 0.45, before, 4), 1);
    sim_seek(sim, 0.2);
    sim_request_reset(sim);
    /* the impacts after 0.2 s go with the discarded future, then come back */
    test_wait_state_time(sim_registry(sim), 0.45);
    double after[4];
    assert_int_equal(sim_impacts_between(sim, 0.0, 0.45, after, 4), 1);
    assert_near(after[0], before[0], 1e-9);
}

static void test_scene_playback_settings(void **state) {
    TestThreads *th = *state;
    const char *sets[] = {"universe.playback_speed=0.05", "universe.slow_motion=0.002",
                          "universe.slow_motion_window=0.003"};
    th->run =
        test_load_scene("scenes/point_drop.lua", &(TestRunOptions){.sets = sets, .set_count = 3});
    Sim *sim = th->run->sim;
    IssimError err = {0};
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    assert_near(sim_speed(sim), 0.05, 0.0);
    double rate, window;
    sim_slow_motion(sim, &rate, &window);
    assert_near(rate, 0.002, 0.0);
    assert_near(window, 0.003, 0.0);
    /* out of range: refused, naming the property and its range */
    const char *bad[] = {"universe.slow_motion=2"};
    SimOptions options = sim_options_default();
    options.sets = bad;
    options.set_count = 1;
    options.quiet = true;
    Sim *refused = sim_create(test_source_path("scenes/point_drop.lua"), &options, &err);
    assert_null(refused);
    print_message("refused: %s\n", err.message);
    assert_non_null(strstr(err.message, "slow_motion"));
    assert_non_null(strstr(err.message, "1"));
}

static void test_impact_scenes_open_in_slow_motion(void **state) {
    (void)state;
    static const struct {
        const char *scene;
        double until; /* s: past the first impact's end */
    } scenes[] = {{"scenes/point_drop.lua", 0.4},       {"scenes/bar_drop_horizontal.lua", 0.4},
                  {"scenes/bar_drop_angle.lua", 0.01},  {"scenes/bar_drop_map.lua", 0.01},
                  {"scenes/spheres_flat_map.lua", 0.2}, {"scenes/spheres_transient_maps.lua", 0.2}};
    for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; k++) {
        TestRun *run = test_run_scene(scenes[k].scene, &(TestRunOptions){.until = scenes[k].until});
        double rate, window;
        sim_slow_motion(run->sim, &rate, &window);
        const SimImpact *first = &run->summary.impacts[0];
        double contact = first->t_end - first->t_begin;
        print_message("%s: speed %g, slow motion %g within %g s; first impact at %.6f s, "
                      "contact %.4g ms, %.2f s on screen\n",
                      scenes[k].scene, sim_speed(run->sim), rate, window, first->t_begin,
                      1e3 * contact, contact / rate);
        assert_true(run->summary.impact_count >= 1);
        assert_true(rate > 0.0 && rate < sim_speed(run->sim));
        assert_true(contact <= window);
        assert_true(contact / rate >= 0.25);
        test_run_free(run);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_law_outside_and_inside_windows),
        cmocka_unit_test(test_law_overlapping_windows_stop_and_limit),
        cmocka_unit_test_setup_teardown(test_slow_motion_at_point_drop_impact, test_threads_setup,
                                        test_threads_teardown),
        cmocka_unit_test_setup_teardown(test_pause_at_next_contact, test_threads_setup,
                                        test_threads_teardown),
        cmocka_unit_test_setup_teardown(test_rewind_finds_impacts_again, test_threads_setup,
                                        test_threads_teardown),
        cmocka_unit_test_setup_teardown(test_scene_playback_settings, test_threads_setup,
                                        test_threads_teardown),
        cmocka_unit_test(test_impact_scenes_open_in_slow_motion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
