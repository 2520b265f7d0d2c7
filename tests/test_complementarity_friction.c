/* Coulomb friction in the complementarity resolver (issue 15, VALIDATION.md V12): the box of
 * scenes/incline.lua sticks below atan(mu_s) and slides with a = g (sin th - mu_k cos th)
 * above it (PGS on the friction disc, src/engine/engine_pgs.c); the pair's solver is a live
 * property; bad input stops the step with the island and the reason and keeps the last good
 * state. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/engine_resolver.h"
#include "issim/io.h"
#include "testutil.h"

#define G 9.81
#define MU_S 0.5
#define MU_K 0.4

/* scenes/incline.lua with the slope at th (rad): gravity tilted about y. */
static Engine *incline(double th) {
    Engine *e = test_engine_from_scene("scenes/incline.lua");
    IssimError err = {0};
    char gravity[128];
    snprintf(gravity, sizeof gravity, "%.17g 0 %.17g", G * sin(th), -G * cos(th));
    if (engine_apply_edit(e, "universe.gravity", gravity, &err) != ISSIM_OK)
        fail_msg("gravity: %s", err.message);
    return e;
}

static EngineBodyState box_state(const Engine *e) {
    return engine_body_state(e, engine_body_find(e, "box"));
}

static void advance_to(Engine *e, double t_end) {
    IssimError err = {0};
    while (engine_time(e) < t_end - 1e-9)
        if (engine_advance(e, engine_time(e) + 1e-3, &err) != ISSIM_OK)
            fail_msg("advance: %s", err.message);
}

/* The acceleration along x between t0 and t1 from the velocities. */
static double acceleration(Engine *e, double t0, double t1) {
    advance_to(e, t0);
    double v0 = box_state(e).vel.x;
    advance_to(e, t1);
    return (box_state(e).vel.x - v0) / (t1 - t0);
}

static void test_sticks_below_the_friction_angle(void **state) {
    (void)state;
    double limit = atan(MU_S);
    const double below[] = {0.2, limit - 0.05, limit - 0.01};
    for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
        Engine *e = incline(below[i]);
        EngineBodyState start = box_state(e);
        advance_to(e, 1.0);
        EngineBodyState end = box_state(e);
        double moved = vec3_norm(vec3_sub(end.pos, start.pos));
        printf("incline %.4f rad (atan mu_s %.4f): moved %.3g m in 1 s\n", below[i], limit, moved);
        assert_true(moved < 1e-6);
        engine_destroy(e);
    }
}

static void test_slides_with_kinetic_friction(void **state) {
    (void)state;
    double limit = atan(MU_S);
    const double above[] = {limit + 0.01, limit + 0.1, 0.8};
    for (size_t i = 0; i < sizeof above / sizeof above[0]; i++) {
        Engine *e = incline(above[i]);
        double expected = G * (sin(above[i]) - MU_K * cos(above[i]));
        double a = acceleration(e, 0.1, 1.0);
        printf("incline %.4f rad: a = %.6f m/s^2, g (sin - mu_k cos) = %.6f (%.3g%%)\n", above[i],
               a, expected, 100.0 * (a - expected) / expected);
        assert_true(fabs(a - expected) < 0.01 * expected);
        /* it slides on its face: no lift-off, no tipping */
        assert_true(fabs(box_state(e).pos.z - 0.05) < 1e-4);
        engine_destroy(e);
    }
}

/* The pair's solver changes while the box slides: the frictionless reference solver lets it
 * accelerate at g sin th, PGS brings kinetic friction back; a solver this build lacks is
 * refused with the names it knows. */
static void test_solver_switches_live(void **state) {
    (void)state;
    double th = 0.6;
    Engine *e = incline(th);
    IssimError err = {0};
    double with_friction = acceleration(e, 0.05, 0.3);
    assert_int_equal(engine_apply_edit(e, "box_floor.solver", "reference", &err), ISSIM_OK);
    double t = engine_time(e);
    double frictionless = acceleration(e, t + 0.01, t + 0.25);
    assert_int_equal(engine_apply_edit(e, "box_floor.solver", "pgs", &err), ISSIM_OK);
    t = engine_time(e);
    double again = acceleration(e, t + 0.01, t + 0.25);
    printf("live switch: pgs %.6f, reference %.6f, pgs %.6f m/s^2\n", with_friction, frictionless,
           again);
    assert_true(fabs(with_friction - G * (sin(th) - MU_K * cos(th))) < 1e-2 * with_friction);
    assert_true(fabs(frictionless - G * sin(th)) < 1e-2 * G * sin(th));
    assert_true(fabs(again - with_friction) < 1e-2 * with_friction);
    assert_int_not_equal(engine_apply_edit(e, "box_floor.solver", "simplex", &err), ISSIM_OK);
    printf("refused: %s\n", err.message);
    assert_non_null(strstr(err.message, "pgs"));
    engine_destroy(e);
}

/* ===== Bad input: the step is refused with the island and the reason, the state kept ===== */

static IssimStatus poisoned_solve(void *user, const EngineIslandSystem *sys,
                                  EngineIslandSolution *out, IssimError *err) {
    (void)user;
    IssimStatus s = engine_complementarity_pgs()->solve(NULL, sys, out, err);
    out->lambda_n[0] = NAN;
    return s;
}

static IssimStatus stalled_solve(void *user, const EngineIslandSystem *sys,
                                 EngineIslandSolution *out, IssimError *err) {
    (void)user;
    (void)out;
    return issim_error_set(err, ISSIM_ERR_NUMERIC, "no convergence in %d sweeps (test)",
                           sys->contacts);
}

static void refused_step(Engine *e, const EngineComplementaritySolver *solver, const char *reason) {
    IssimError err = {0};
    engine_set_complementarity_solver(e, solver, NULL);
    EngineBodyState before = box_state(e);
    double t = engine_time(e);
    EngineStats stats = engine_stats(e);
    assert_int_equal(engine_advance(e, t + 1e-3, &err), ISSIM_ERR_NUMERIC);
    printf("refused: %s\n", err.message);
    assert_non_null(strstr(err.message, "island of box"));
    assert_non_null(strstr(err.message, reason));
    assert_true(engine_time(e) == t);
    EngineBodyState after = box_state(e);
    assert_memory_equal(&before, &after, sizeof before);
    assert_true(engine_stats(e).complementarity_failures == stats.complementarity_failures + 1);
    engine_set_complementarity_solver(e, NULL, NULL); /* the pair's own solver carries on */
    assert_int_equal(engine_advance(e, t + 1e-3, &err), ISSIM_OK);
}

static void test_bad_solves_keep_the_last_good_state(void **state) {
    (void)state;
    Engine *e = incline(0.6);
    advance_to(e, 0.1);
    static const EngineComplementaritySolver poisoned = {
        .name = "poisoned", .solve = poisoned_solve, .sparse = true};
    static const EngineComplementaritySolver stalled = {.name = "stalled", .solve = stalled_solve};
    refused_step(e, &poisoned, "non-finite impulses");
    refused_step(e, &stalled, "no convergence in 4 sweeps");
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sticks_below_the_friction_angle),
        cmocka_unit_test(test_slides_with_kinetic_friction),
        cmocka_unit_test(test_solver_switches_live),
        cmocka_unit_test(test_bad_solves_keep_the_last_good_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
