/* The headless run's summary (issue 28, item 6): two bodies colliding with no obstacle are
 * measured by their relative velocity along the contact normal, and a run whose contacts a
 * complementarity solver time-steps reports its time steps and contact onsets, which the
 * integrator's own counts (steps, located roots) leave out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "testutil.h"

/* The printed summary of a finished run, NUL-terminated (static buffer). */
static const char *printed(TestRun *run) {
    static char text[16384];
    FILE *f = fmemopen(text, sizeof text, "w");
    assert_non_null(f);
    sim_print_summary(run->sim, &run->summary, f);
    fclose(f);
    text[sizeof text - 1] = '\0';
    return text;
}

/* 000 4.2's spheres: flat 4000 N/m maps, 1 m/s each, head-on. A flat map is the undamped spring
 * (V8), so the relative speed comes back whole: restitution 1. */
static void test_two_spheres_with_flat_maps(void **state) {
    (void)state;
    TestRun *run = test_run_scene("scenes/spheres_flat_map.lua",
                                  &(TestRunOptions){.until = 0.2, .lockstep = true});
    const SimSummary *s = &run->summary;
    assert_int_equal(s->impact_count, 1);
    const SimImpact *im = &s->impacts[0];
    Engine *e = sim_engine(run->sim);
    int left = engine_body_find(e, "left").index;
    int right = engine_body_find(e, "right").index;
    assert_true((im->body == left && im->body_b == right) ||
                (im->body == right && im->body_b == left));
    printf("flat maps: v_in %.9f, v_out %.9f, restitution %.9f\n", im->v_in, im->v_out,
           im->restitution);
    assert_near(im->v_in, -2.0, 1e-9); /* the closing speed: +1 and -1 m/s along x */
    assert_near(im->restitution, 1.0, 1e-6);
    assert_true(isnan(im->apex)); /* no ballistic apex between two bodies */
    assert_int_equal(s->contact_onsets, 1);
    assert_int_equal(s->contact_ends, 1);
    const char *text = printed(run);
    assert_non_null(strstr(text, "left/right"));
    assert_non_null(strstr(text, "no obstacle"));
    assert_null(strstr(text, " nan "));
    test_run_free(run);
}

/* Unequal spheres meeting along a diagonal line of centres while both drift the same way
 * across it (so the line of centres keeps its direction), through a spring/damper of
 * restitution 0.6: v_in is the closing speed 1.8 m/s from the initial velocities, whichever body
 * the engine names first, and the restitution is the pair's. */
static const char diagonal_source[] =
    "local u = {1 / math.sqrt(3), 1 / math.sqrt(3), 1 / math.sqrt(3)}\n"
    "local w = {0.3, -0.3, 0}\n"
    "local function at(s, drift) return {s * u[1] + drift[1], s * u[2] + drift[2],\n"
    "  s * u[3] + drift[3]} end\n"
    "return { name = 'diagonal',\n"
    "  universe = { gravity = {0, 0, 0}, integrator = 'rk4', dt = 1e-4 },\n"
    "  things = {\n"
    "    { name = 'heavy', kind = 'body', shape = 'sphere', radius = 0.1, mass = 2,\n"
    "      inertia = {0.008, 0.008, 0.008}, pos = at(-0.12, {0, 0, 0}),\n"
    "      vel = at(1.2, w), material = 'ball' },\n"
    "    { name = 'light', kind = 'body', shape = 'sphere', radius = 0.1, mass = 1,\n"
    "      inertia = {0.004, 0.004, 0.004}, pos = at(0.12, {0, 0, 0}),\n"
    "      vel = at(-0.6, w), material = 'ball' } },\n"
    "  contacts = {\n"
    "    { name = 'balls', materials = {'ball', 'ball'}, model = 'spring_damper',\n"
    "      stiffness = 1e5, restitution = 0.6 } } }\n";

static void test_two_spheres_along_a_diagonal(void **state) {
    (void)state;
    TestRun *run = test_run_source("diagonal.lua", diagonal_source,
                                   &(TestRunOptions){.until = 0.05, .lockstep = true});
    const SimSummary *s = &run->summary;
    assert_int_equal(s->impact_count, 1);
    const SimImpact *im = &s->impacts[0];
    assert_true(im->body_b >= 0);
    assert_true(im->t_end > im->t_begin);
    printf("diagonal: v_in %.9f, v_out %.9f, restitution %.6f\n", im->v_in, im->v_out,
           im->restitution);
    assert_near(im->v_in, -1.8, 1e-6);
    /* the relative normal velocity after the impact, from the bodies' final states */
    Engine *e = sim_engine(run->sim);
    EngineBodyState a = engine_body_state(e, engine_body_id(e, im->body));
    EngineBodyState b = engine_body_state(e, engine_body_id(e, im->body_b));
    Vec3 n = vec3_normalize(vec3_sub(a.pos, b.pos));
    assert_near(im->v_out, vec3_dot(vec3_sub(a.vel, b.vel), n), 1e-9);
    assert_near(im->restitution, 0.6, 0.01);
    test_run_free(run);
}

/* VALIDATION.md V12's box through the complementarity resolver: the solver time-steps it, so the
 * integrator locates no root and takes no step for it. The summary still counts every time step
 * and the corners' onsets. */
static void test_complementarity_run_reports_steps_and_onsets(void **state) {
    (void)state;
    const double until = 0.5, dt = 1e-3;
    TestRun *run = test_run_source("v12_box.lua", test_v12_box_source,
                                   &(TestRunOptions){.until = until, .lockstep = true});
    const SimSummary *s = &run->summary;
    printf("complementarity: %llu time steps, %llu island steps, %llu integrator steps, %llu "
           "onsets, %llu ends, %llu located roots\n",
           (unsigned long long)s->output_steps, (unsigned long long)s->engine.complementarity_steps,
           (unsigned long long)s->engine.steps, (unsigned long long)s->contact_onsets,
           (unsigned long long)s->contact_ends, (unsigned long long)s->engine.root_events);
    assert_true(fabs((double)s->output_steps - until / dt) <= 1.0);
    assert_int_equal(s->engine.root_events, 0);
    assert_true(s->contact_onsets >= 4); /* the tilted box lands on its four corners */
    assert_true(s->engine.complementarity_steps >= 1);
    assert_true(s->engine.complementarity_steps <= s->output_steps);
    assert_true(s->impact_count >= 1);
    const char *text = printed(run);
    char expect[128];
    snprintf(expect, sizeof expect, "%llu time steps (%llu complementarity island steps)",
             (unsigned long long)s->output_steps,
             (unsigned long long)s->engine.complementarity_steps);
    assert_non_null(strstr(text, expect));
    snprintf(expect, sizeof expect, "%llu contact onsets", (unsigned long long)s->contact_onsets);
    assert_non_null(strstr(text, expect));
    test_run_free(run);
}

/* The issue's own case: scenes/three_resolvers.lua, whose box lands through the complementarity
 * resolver next to a force-law ball: every time step counted, onsets from both resolvers. */
static void test_three_resolvers_counts(void **state) {
    (void)state;
    TestRun *run = test_run_scene("scenes/three_resolvers.lua",
                                  &(TestRunOptions){.until = 0.5, .lockstep = true});
    const SimSummary *s = &run->summary;
    double dt = engine_dt(sim_engine(run->sim));
    printf("three_resolvers: %llu time steps, %llu island steps, %llu onsets, %llu roots\n",
           (unsigned long long)s->output_steps, (unsigned long long)s->engine.complementarity_steps,
           (unsigned long long)s->contact_onsets, (unsigned long long)s->engine.root_events);
    assert_true(fabs((double)s->output_steps - 0.5 / dt) <= 1.0);
    assert_true(s->engine.complementarity_steps >= 1);
    /* the located roots are the force-law ball's; the box's onsets come on top of them */
    assert_true(s->contact_onsets > s->engine.root_events / 2);
    test_run_free(run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_spheres_with_flat_maps),
        cmocka_unit_test(test_two_spheres_along_a_diagonal),
        cmocka_unit_test(test_complementarity_run_reports_steps_and_onsets),
        cmocka_unit_test(test_three_resolvers_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
