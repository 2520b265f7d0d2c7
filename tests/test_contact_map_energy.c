/* Energy of contact-map collisions reported honestly (issue 28, item 5): the total counts the
 * energy a map's transient holds, so it does not rise within a step during contact; the
 * published endpoint rule, which does gain, is measured and warned about at load; and the range
 * of transient peaks over which V9's restitution falls monotonically. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "testutil.h"

/* The largest rise of universe.energy.total in one step of T = 1e-4 s while a contact is active
 * (measured at most 8.6e-9 J, at peak 48,000 N/m; the steady-state figure alone rose by 1.4e-5,
 * 6.5e-5 and 7.3e-4 J at peaks 6,000, 12,000 and 48,000), against 1 J of motion. */
#define STEP_RISE_BOUND 2e-8

/* V9's spheres (scenes/spheres_transient_maps.lua) with the left map's transient peak, stepped
 * at the maps' period: the largest rise of the total within a step during contact, and the
 * total's largest value against its start. */
static void transient_rise(double peak, double *rise, double *above_start, double *lowest) {
    char left[128];
    snprintf(left, sizeof left, "left.contact_map=transient 1500 %g 2e-3 period 1e-4 samples 1000",
             peak);
    const char *sets[] = {left};
    TestRun *run = test_load_scene("scenes/spheres_transient_maps.lua",
                                   &(TestRunOptions){.sets = sets, .set_count = 1, .dt = 1e-4});
    Engine *e = sim_engine(run->sim);
    IssimError err = {0};
    double start = engine_energy(e).total, last = start;
    bool was_active = false, touched = false;
    *rise = -INFINITY;
    *above_start = -INFINITY;
    *lowest = INFINITY;
    while (engine_time(e) < 0.2) {
        if (engine_step(e, &err) != ISSIM_OK)
            fail_msg("step: %s", err.message);
        double total = engine_energy(e).total;
        bool active = engine_active_contact_count(e) > 0;
        if (active || was_active) {
            *rise = fmax(*rise, total - last);
            *above_start = fmax(*above_start, total - start);
            *lowest = fmin(*lowest, total);
            touched = true;
        }
        if (was_active && !active)
            break; /* one impact: what follows the separation is not this model's */
        was_active = active;
        last = total;
    }
    assert_true(touched);
    test_run_free(run);
}

static void test_total_with_transient_does_not_rise_in_a_step(void **state) {
    (void)state;
    const double peaks[] = {750, 6000, 12000, 48000};
    for (int i = 0; i < 4; i++) {
        double rise, above, lowest;
        transient_rise(peaks[i], &rise, &above, &lowest);
        printf("peak %6g N/m: largest rise in a step %.3g J, largest total - start %.3g J, "
               "lowest total %.6f J\n",
               peaks[i], rise, above, lowest);
        assert_true(rise <= STEP_RISE_BOUND);
        assert_true(above <= STEP_RISE_BOUND);
        /* the transient's loss shows in the total during the contact (it is not hidden) */
        assert_true(lowest < 1.0 - 1e-3);
    }
}

/* A flat map keeps the springs in series: the stored energy is 1/2 k e^2 with k the series
 * stiffness, so a memoryless collision's total stays at its start within RK4's error. */
static void test_flat_map_total_is_conserved(void **state) {
    (void)state;
    TestRun *run = test_load_scene("scenes/spheres_flat_map.lua", &(TestRunOptions){.dt = 1e-4});
    Engine *e = sim_engine(run->sim);
    IssimError err = {0};
    double start = engine_energy(e).total, worst = 0.0;
    while (engine_time(e) < 0.2) {
        if (engine_step(e, &err) != ISSIM_OK)
            fail_msg("step: %s", err.message);
        worst = fmax(worst, fabs(engine_energy(e).total - start));
    }
    printf("flat maps: largest |total - start| %.3g J\n", worst);
    assert_true(worst < 1e-9);
    test_run_free(run);
}

/* The restitution of the flat-map spheres (000 4.2, 4000 N/m maps in series: k = 2000 N/m,
 * m = 0.5 kg) under the endpoint rule at period T, from the session's summary. */
static double endpoint_restitution(double period, const char *rule) {
    char left[96], right[96], quad[64];
    snprintf(left, sizeof left, "left.contact_map=flat 4000 period %g", period);
    snprintf(right, sizeof right, "right.contact_map=flat 4000 period %g", period);
    snprintf(quad, sizeof quad, "spheres.map_quadrature=%s", rule);
    const char *sets[] = {left, right, quad};
    SimSummary *s = test_run_summary("scenes/spheres_flat_map.lua",
                                     &(TestRunOptions){.sets = sets, .set_count = 3, .until = 0.2});
    assert_int_equal(s->impact_count, 1);
    double r = s->impacts[0].restitution;
    free(s);
    return r;
}

/* The endpoint rule gains energy in proportion to the period: r - 1 = 0.79 omega T
 * (pi / 4 to the figures measured at T = 2e-4 ... 1e-5 s), the figure its warning and
 * docs/contact-models.md give; the trapezoid rule returns the speed whole. */
static void test_endpoint_rule_gains_in_proportion_to_the_period(void **state) {
    (void)state;
    const double omega = sqrt(2000.0 / 0.5);
    const double periods[] = {2e-4, 1e-4, 5e-5, 2e-5};
    testlog_capture(); /* each run's load warns (test_endpoint_rule_warns_at_load) */
    for (int i = 0; i < 4; i++) {
        double r = endpoint_restitution(periods[i], "endpoint");
        double slope = (r - 1.0) / (omega * periods[i]);
        printf("endpoint, T = %g s: restitution %.6f, (r - 1) / (omega T) = %.4f\n", periods[i], r,
               slope);
        assert_true(r > 1.0);
        assert_near(slope, M_PI / 4.0, 0.01);
    }
    assert_near(endpoint_restitution(1e-4, "trapezoid"), 1.0, 1e-6);
    testlog_release();
}

/* A scene choosing the endpoint rule is warned at load, once per contact pair, through the
 * engine's warnings; the default (trapezoid) is not. */
static void test_endpoint_rule_warns_at_load(void **state) {
    (void)state;
    const char *endpoint[] = {"spheres.map_quadrature=endpoint"};
    testlog_capture();
    TestRun *run = test_load_scene("scenes/spheres_flat_map.lua",
                                   &(TestRunOptions){.sets = endpoint, .set_count = 1});
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "map_quadrature = \"endpoint\""), 1);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "contact spheres"), 1);
    assert_true(engine_stats(sim_engine(run->sim)).warnings >= 1);
    test_run_free(run);
    testlog_clear();
    run = test_load_scene("scenes/spheres_flat_map.lua", NULL);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "endpoint"), 0);
    assert_int_equal(engine_stats(sim_engine(run->sim)).warnings, 0);
    test_run_free(run);
    testlog_release();
}

/* V9's family (a 1500 N/m steady state plus a 2 ms transient of peak P on one sphere, a flat
 * 1500 N/m map on the other), restitution from the summary at the contact's end. */
static double v9_restitution(double peak) {
    char left[128];
    snprintf(left, sizeof left, "left.contact_map=transient 1500 %g 2e-3 period 1e-4 samples 1000",
             peak);
    const char *sets[] = {left, "right.contact_map=flat 1500 period 1e-4"};
    SimSummary *s =
        test_run_summary("scenes/spheres_flat_map.lua",
                         &(TestRunOptions){.sets = sets, .set_count = 2, .until = 0.2, .dt = 1e-4});
    assert_int_equal(s->impact_count, 1);
    double r = s->impacts[0].restitution;
    free(s);
    return r;
}

/* The monotone fall holds from 0 to 22,000 N/m (15 times the steady state; restitution 1 down to
 * 0.7025); past it the transient side is so stiff that the flat side takes the indentation and
 * the restitution climbs back towards 1 (0.753 at 48,000, 0.986 at 1.5e6 N/m). */
static void test_v9_monotone_range(void **state) {
    (void)state;
    const double falling[] = {0, 750, 1500, 3000, 6000, 12000, 18000, 22000};
    double last = INFINITY;
    for (size_t i = 0; i < sizeof falling / sizeof falling[0]; i++) {
        double r = v9_restitution(falling[i]);
        printf("V9 peak %6g N/m: restitution %.6f\n", falling[i], r);
        assert_true(r < last);
        assert_true(r <= 1.0 + 1e-9); /* V9: no collision gains energy */
        last = r;
    }
    assert_near(last, 0.7025, 0.001);
    const double rising[] = {26000, 48000, 1.5e6};
    for (size_t i = 0; i < sizeof rising / sizeof rising[0]; i++) {
        double r = v9_restitution(rising[i]);
        printf("V9 peak %6g N/m: restitution %.6f\n", rising[i], r);
        assert_true(r > last);
        assert_true(r <= 1.0 + 1e-9);
        last = r;
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_total_with_transient_does_not_rise_in_a_step),
        cmocka_unit_test(test_flat_map_total_is_conserved),
        cmocka_unit_test(test_endpoint_rule_gains_in_proportion_to_the_period),
        cmocka_unit_test(test_endpoint_rule_warns_at_load),
        cmocka_unit_test(test_v9_monotone_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
