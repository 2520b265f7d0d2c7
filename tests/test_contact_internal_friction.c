/* Siira's internal friction model (004 4.6, eqs. 4.77-4.87) and its equilibrium report
 * (004 4.8.1 eq. 4.91, 4.8.5): the phase forces, f(r), the hysteresis loop area of a
 * quasi-static cycle, and the CONTACT_EVENT_EQUILIBRIUM reported once when a contact holds its
 * load share at rest. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/io.h"
#include "testutil.h"

static ContactParams internal_friction(double k, double r, double n) {
    ContactParams p = {.model = CONTACT_MODEL_INTERNAL_FRICTION,
                       .stiffness = k,
                       .restitution = r,
                       .exponent = n,
                       .velocity_tolerance = 1e-3,
                       .tangent_stiffness = 1e5};
    IssimError err = {0};
    assert_int_equal(contact_params_derive(&p, &err), ISSIM_OK);
    return p;
}

static void test_factor_and_phase_forces(void **state) {
    const ContactModelClass *m = contact_model_class(CONTACT_MODEL_INTERNAL_FRICTION);
    assert_string_equal(m->name, "internal_friction");
    ContactParams p = internal_friction(1e8, 0.8, 1.0);
    double f = (1 - 0.64) / (1 + 0.64); /* eq. 4.83 */
    assert_near(p.if_factor, f, 1e-15);
    /* eq. 4.84-4.85 imply r^2 = (1 - f) / (1 + f) */
    assert_near((1 - f) / (1 + f), 0.64, 1e-15);
    ContactHistory h = {0};
    ContactKinematics k = {.depth = 2e-6, .depth_rate = 0.3, .normal = {0, 0, 1}};
    assert_near(m->force(&p, &h, &k).normal, (1 + f) * 1e8 * 2e-6, 1e-9);
    k.depth_rate = -0.3;
    assert_near(m->force(&p, &h, &k).normal, (1 - f) * 1e8 * 2e-6, 1e-9);
    /* A turning point (dg/dt = 0) is restitution, as in Fig. 4.15 */
    k.depth_rate = 0.0;
    assert_near(m->force(&p, &h, &k).normal, (1 - f) * 1e8 * 2e-6, 1e-9);
    /* F = k g^n (eq. 4.87) */
    ContactParams q = internal_friction(1e9, 0.8, 1.5);
    k.depth_rate = 1.0;
    assert_near(m->force(&q, &h, &k).normal, (1 + f) * 1e9 * pow(2e-6, 1.5), 1e-12);
    /* No force outside the contact, and the stored energy is the conservative part only */
    k.depth = -1e-6;
    assert_near(m->force(&p, &h, &k).normal, 0.0, 0.0);
    k.depth = 1e-3;
    assert_near(m->potential(&p, &h, &k), 0.5 * 1e8 * 1e-6, 1e-9);
    assert_near(m->potential(&q, &h, &k), 1e9 * pow(1e-3, 2.5) / 2.5, 1e-12);
}

/* Work done by the contact over a slow load cycle to g_max and back (the model is rate
 * independent, so "slow" is any speed): f k g_max^2 for F = k g (VALIDATION.md V4 at the model
 * level), against zero for an undamped spring. Trapezoid rule on 20000 steps each way. */
static void test_quasi_static_loop_area(void **state) {
    const ContactModelClass *m = contact_model_class(CONTACT_MODEL_INTERNAL_FRICTION);
    ContactParams p = internal_friction(1e5, 0.8, 1.0);
    ContactHistory h = {0};
    double g_max = 1e-3, work = 0.0;
    const int steps = 20000;
    for (int dir = 1; dir >= -1; dir -= 2) {
        for (int i = 0; i < steps; i++) {
            double g0 = dir > 0 ? g_max * i / steps : g_max * (steps - i) / steps;
            double g1 = g0 + dir * g_max / steps;
            ContactKinematics k0 = {.depth = g0, .depth_rate = dir * 1e-6, .normal = {0, 0, 1}};
            ContactKinematics k1 = {.depth = g1, .depth_rate = dir * 1e-6, .normal = {0, 0, 1}};
            double f0 = m->force(&p, &h, &k0).normal, f1 = m->force(&p, &h, &k1).normal;
            work += 0.5 * (f0 + f1) * (g1 - g0); /* work done on the contact */
        }
    }
    double expected = p.if_factor * 1e5 * g_max * g_max;
    assert_near(work, expected, 1e-9 * expected + 1e-15);
}

static ContactKinematics at_rest(double g, double rate, double load) {
    return (ContactKinematics){
        .depth = g, .depth_rate = rate, .normal = {0, 0, 1}, .load = load, .t = 1.0};
}

/* Eq. 4.91: W / (k (1+f)) <= g <= W / (k (1-f)) with |dg/dt| < tolerance. */
static void test_equilibrium_event(void **state) {
    const ContactModelClass *m = contact_model_class(CONTACT_MODEL_INTERNAL_FRICTION);
    ContactParams p = internal_friction(1e8, 0.8, 1.0);
    double f = p.if_factor, W = 9.81;
    double g_lo = W / (1e8 * (1 + f)), g_hi = W / (1e8 * (1 - f));
    ContactHistory h = {0};
    ContactKinematics k = at_rest(0.5 * (g_lo + g_hi), 0.0, W);
    m->begin(&p, &h, &k);
    /* Reported at the first commit that holds, not again while it keeps holding */
    assert_int_equal(m->commit(&p, &h, &k), CONTACT_EVENT_EQUILIBRIUM);
    assert_int_equal(m->commit(&p, &h, &k), CONTACT_EVENT_NONE);
    /* Moving faster than the tolerance ends the equilibrium state; settling again reports */
    k.depth_rate = 2e-3;
    assert_int_equal(m->commit(&p, &h, &k), CONTACT_EVENT_NONE);
    k.depth_rate = -5e-4;
    assert_int_equal(m->commit(&p, &h, &k), CONTACT_EVENT_EQUILIBRIUM);
    /* The bounds themselves (just inside, just outside) */
    const double inside[] = {g_lo * (1 + 1e-9), g_hi * (1 - 1e-9)};
    const double outside[] = {g_lo * (1 - 1e-6), g_hi * (1 + 1e-6)};
    for (int i = 0; i < 2; i++) {
        ContactHistory hi = {0}, ho = {0};
        ContactKinematics ki = at_rest(inside[i], 0.0, W), ko = at_rest(outside[i], 0.0, W);
        m->begin(&p, &hi, &ki);
        m->begin(&p, &ho, &ko);
        assert_int_equal(m->commit(&p, &hi, &ki), CONTACT_EVENT_EQUILIBRIUM);
        assert_int_equal(m->commit(&p, &ho, &ko), CONTACT_EVENT_NONE);
    }
    /* Two vertices share the load: the engine passes W / 2 and the band halves */
    ContactHistory h2 = {0};
    ContactKinematics k2 = at_rest(0.5 * (g_lo + g_hi), 0.0, W / 2);
    m->begin(&p, &h2, &k2);
    assert_int_equal(m->commit(&p, &h2, &k2), CONTACT_EVENT_NONE);
    k2.depth = 0.25 * (g_lo + g_hi);
    assert_int_equal(m->commit(&p, &h2, &k2), CONTACT_EVENT_EQUILIBRIUM);
    /* Unknown load (0) or nothing pressing: never */
    ContactHistory h0 = {0};
    ContactKinematics k0 = at_rest(0.5 * (g_lo + g_hi), 0.0, 0.0);
    m->begin(&p, &h0, &k0);
    assert_int_equal(m->commit(&p, &h0, &k0), CONTACT_EVENT_NONE);
}

/* A contact that bounces never reports: at the deepest point of an impact dg/dt is 0 but g is
 * far beyond the band (the restitution force exceeds the load). */
static void test_no_equilibrium_during_impact(void **state) {
    const ContactModelClass *m = contact_model_class(CONTACT_MODEL_INTERNAL_FRICTION);
    ContactParams p = internal_friction(1e8, 0.8, 1.0);
    double W = 9.81, v = 0.44;
    double g_deepest = v * sqrt(1.0 / ((1 + p.if_factor) * 1e8)); /* unit mass, no gravity */
    ContactHistory h = {0};
    ContactKinematics k = at_rest(0.0, v, W);
    m->begin(&p, &h, &k);
    for (int i = 0; i <= 100; i++) {
        double phase = M_PI / 2 * i / 100;
        k = at_rest(g_deepest * sin(phase), v * cos(phase), W);
        assert_int_equal(m->commit(&p, &h, &k), CONTACT_EVENT_NONE);
    }
}

typedef struct EquilibriumSeen {
    const Engine *engine;
    int count;
    double t;
    EngineBodyState state; /* at the report */
} EquilibriumSeen;

static void on_event(const EngineEvent *ev, void *user) {
    EquilibriumSeen *seen = user;
    if (ev->kind == ENGINE_EVENT_EQUILIBRIUM && seen->count++ == 0) {
        seen->t = ev->t;
        seen->state = engine_body_state(seen->engine, engine_body_id(seen->engine, ev->body));
    }
}

/* Through the engine: the vertical bar of scenes/point_drop.lua dropped from 1 mm with internal
 * friction bounces down and is reported in equilibrium, resting inside the band of eq. 4.91
 * with the vertex kinematics' load share m g. */
static void test_engine_reports_equilibrium(void **state) {
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_equal(scene_load_file(test_source_path("scenes/point_drop.lua"), NULL, &db, &err),
                     ISSIM_OK);
    assert_int_equal(thingdb_set_text(db, "bar_floor.model", "internal_friction", false, &err),
                     ISSIM_OK);
    assert_int_equal(thingdb_set_text(db, "bar.pos", "0 0 0.101", false, &err), ISSIM_OK);
    /* RK4 with a fixed step: at rest the contact switches phase every step (a sliding mode at
     * dg/dt = 0) and BDF's error control crawls through it with nanosecond steps, while the
     * fixed step just carries on; 1 us keeps the step-to-step velocity jitter (|a| dt) under
     * the 1e-5 m/s tolerance. */
    assert_int_equal(thingdb_set_text(db, "universe.integrator", "rk4", false, &err), ISSIM_OK);
    assert_int_equal(thingdb_set_text(db, "universe.dt", "1e-6", false, &err), ISSIM_OK);
    EngineOptions o = engine_options_default();
    Engine *e = engine_create(db, &o, &err);
    if (!e)
        fail_msg("%s", err.message);
    EquilibriumSeen seen = {.engine = e};
    engine_set_event_callback(e, on_event, &seen);
    for (double t = 1e-3; t <= 0.3 && seen.count == 0; t += 1e-3)
        assert_int_equal(engine_advance(e, t, &err), ISSIM_OK);
    assert_true(seen.count >= 1);
    EngineBodyState st = seen.state;
    double g = 0.1 - st.pos.z, f = contact_internal_friction_factor(0.8), W = 9.81;
    printf("equilibrium reported at t = %.6f s, g = %.4g m, band [%.4g, %.4g]\n", seen.t, g,
           W / (1e8 * (1 + f)), W / (1e8 * (1 - f)));
    assert_true(g >= W / (1e8 * (1 + f)) * (1 - 1e-6) && g <= W / (1e8 * (1 - f)) * (1 + 1e-6));
    assert_true(fabs(st.vel.z) < 1e-5); /* the pair's default velocity tolerance */
    engine_destroy(e);
    thingdb_destroy(db);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factor_and_phase_forces),
        cmocka_unit_test(test_quasi_static_loop_area),
        cmocka_unit_test(test_equilibrium_event),
        cmocka_unit_test(test_no_equilibrium_during_impact),
        cmocka_unit_test(test_engine_reports_equilibrium),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
