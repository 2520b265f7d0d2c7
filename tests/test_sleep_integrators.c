/* Sleeping with each integrator (004 4.8.5): two bars with one contact vertex each, in one
 * planar scene on internal-friction contacts; A starts just above the floor, B 0.3 m higher.
 * A comes to rest and sleeps while B still falls, so the integrator carries B alone (CVODE: a
 * vector of B's block only; RK4: B's range only). Asserted, for CVODE BDF, CVODE Adams and RK4:
 *  - A sleeps before B lands, and its state then stays bit for bit;
 *  - B's free fall matches z0 - g t^2 / 2 to 1e-9 m;
 *  - B's bounce while A sleeps is B's bounce in a run where A is still in the air far above (no
 *    sleeping body, full vector), to the integrators' accuracy: 1e-5 m and 2e-3 m/s (CVODE's
 *    error norm runs over a shorter vector; RK4's step grid was shifted by A's located events,
 *    and the internal-friction force jumps at B's turning point);
 * (A reference with sleeping off cannot be run with CVODE: internal friction's force jump at
 * dg/dt = 0 holds a resting bar in a sliding mode that the variable step integrators grind
 * through at ever smaller steps; going to sleep is what ends it, App. C's "stabilizing step".)
 *  - both end asleep, and then no step is taken. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/io.h"
#include "testutil.h"

static const char scene[] =
    "return { universe = { gravity = {0, 0, -9.81}, planar = true, dt = 1e-3, rtol = 1e-10,"
    "  atol = 1e-12 },"
    " things = {"
    "  { name = 'A', kind = 'body', mass = 1, inertia = {1/300, 1/300, 1e-5},"
    "    pos = {0, 0, 0.1001}, vertices = {{0, 0, -0.1}}, material = 'bar' },"
    "  { name = 'B', kind = 'body', mass = 1, inertia = {1/300, 1/300, 1e-5},"
    "    pos = {1, 0, 0.4}, vertices = {{0, 0, -0.1}}, material = 'bar' },"
    "  { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1}, offset = 0,"
    "    material = 'floor' } },"
    " contacts = { { name = 'bar_floor', materials = {'bar', 'floor'},"
    "   model = 'internal_friction', stiffness = 1e6, restitution = 0.5,"
    "   velocity_tolerance = 1e-3 } } }";

/* a_high: A starts 100 m up, so it falls through the whole test without touching anything. */
static Engine *make(IntegratorKind kind, bool a_high) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string("two_bars.lua", scene, strlen(scene), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    if (a_high && thingdb_set_text(db, "A.pos", "0 0 100", false, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    EngineOptions o = engine_options_default();
    o.integrator = kind;
    o.dt = kind == INTEGRATOR_RK4 ? 1e-5 : 1e-3;
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("%s", err.message);
    return e;
}

static void step_to(Engine *e, double t) {
    IssimError err = {0};
    if (engine_advance(e, t, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
}

static void check_integrator(IntegratorKind kind) {
    Engine *e = make(kind, false), *ref = make(kind, true);
    /* B's tip reaches the floor at sqrt(2 * 0.3 / 9.81) = 0.2473 s. */
    double t = 0.0, t_asleep = -1.0;
    EngineBodyState a_asleep = {0};
    while (t < 0.24 - 1e-12) {
        t += 1e-3;
        step_to(e, t);
        step_to(ref, t);
        if (engine_body_asleep(e, 0) && t_asleep < 0.0) {
            t_asleep = t;
            a_asleep = engine_body_state(e, engine_body_id(e, 0));
        }
        EngineBodyState b = engine_body_state(e, engine_body_id(e, 1)),
                        b_ref = engine_body_state(ref, engine_body_id(ref, 1));
        assert_near(b.pos.z, b_ref.pos.z, 1e-9);
        assert_near(b.pos.z, 0.4 - 0.5 * 9.81 * t * t, 1e-9);
        assert_int_equal(engine_awake_body_count(ref), 2);
    }
    printf("%s: A asleep at %.3f s while B falls (%d awake)\n", integrator_name(kind), t_asleep,
           engine_awake_body_count(e));
    assert_true(t_asleep > 0.0);
    assert_true(engine_body_asleep(e, 0));
    assert_false(engine_body_asleep(e, 1));
    assert_int_equal(engine_awake_body_count(e), 1);
    EngineBodyState a_now = engine_body_state(e, engine_body_id(e, 0));
    assert_memory_equal(&a_now, &a_asleep, sizeof a_now);
    /* B's bounce, A asleep, against B's bounce with A in the air. */
    while (t < 0.6 - 1e-12) {
        t += 1e-3;
        step_to(e, t);
        step_to(ref, t);
        assert_true(engine_body_asleep(e, 0));
        assert_near(engine_body_state(e, engine_body_id(e, 1)).pos.z,
                    engine_body_state(ref, engine_body_id(ref, 1)).pos.z, 1e-5);
        assert_near(engine_body_state(e, engine_body_id(e, 1)).vel.z,
                    engine_body_state(ref, engine_body_id(ref, 1)).vel.z, 2e-3);
    }
    /* B comes to rest too; then nothing is integrated. */
    step_to(e, 2.0);
    assert_true(engine_body_asleep(e, 1));
    uint64_t steps = engine_stats(e).steps;
    step_to(e, 2.5);
    assert_int_equal(engine_stats(e).steps, steps);
    engine_destroy(e);
    engine_destroy(ref);
}

static void test_bdf(void **state) {
    (void)state;
    check_integrator(INTEGRATOR_BDF);
}

static void test_adams(void **state) {
    (void)state;
    check_integrator(INTEGRATOR_ADAMS);
}

static void test_rk4(void **state) {
    (void)state;
    check_integrator(INTEGRATOR_RK4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bdf),
        cmocka_unit_test(test_adams),
        cmocka_unit_test(test_rk4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
