/* Sleeping from physics (004 4.8.5, eq. 4.91; issue 11 part 4):
 *  - the velocity tolerance derived from the equilibrium band (contact_equilibrium_speed) for
 *    004 4.8's bar of unit mass on one and on two vertices (r = 0.8, k = 1e8 N/m as in the
 *    docs' point drop): the closed form for F = k g, and what it means, checked by integrating
 *    a contact moving out of its resting depth: under the tolerance it turns inside the band,
 *    above it it leaves the band (F = k g and F = k g^1.5);
 *  - internal friction's phase ramp (phase_ramp_time): the band's forces away from dg/dt = 0,
 *    the conservative force at it, and never a positive power;
 *  - a box landing on internal-friction contacts with the derived tolerance and the ramp goes
 *    to sleep, its total energy never rises in a step, and putting it to sleep takes away no
 *    more energy than a twin run with sleeping off still had as the box's kinetic energy there
 *    (under 1e-9 J: no velocity zeroed above the tolerance; measured 4.7e-12 J, against
 *    1.5e-7 J with the jump and the pile's old 0.05 m/s tolerance);
 *  - a ramp shorter than the RK4 step is warned about. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/io.h"
#include "testutil.h"

static const double gravity = 9.81;

static ContactParams internal_friction(double k, double r, double n, double ramp) {
    ContactParams p = {.model = CONTACT_MODEL_INTERNAL_FRICTION,
                       .stiffness = k,
                       .restitution = r,
                       .exponent = n,
                       .velocity_tolerance = 0.0,
                       .phase_ramp_time = ramp,
                       .tangent_stiffness = 1e5};
    IssimError err = {0};
    assert_int_equal(contact_params_derive(&p, &err), ISSIM_OK);
    return p;
}

/* 004 4.8.1: each of the n_v vertices of a unit-mass bar carries W = m g / n_v; a horizontal
 * bar translating on two vertices puts m / 2 behind each. Eq. 4.91's band is
 * [W / (k (1 + f)), W / (k (1 - f))] and the derived tolerance W f / (1 + f) sqrt((3 + f) /
 * (k m)): 3.168e-4 m/s on one vertex, below the 4.6e-4 m/s that crosses the whole band in one
 * oscillation (docs/contact-models.md), as 004's test needs. */
static void test_bar_numbers(void **state) {
    (void)state;
    ContactParams p = internal_friction(1e8, 0.8, 1.0, 0.0);
    double f = p.if_factor;
    assert_near(f, 0.36 / 1.64, 1e-15);
    for (int nv = 1; nv <= 2; nv++) {
        double w = gravity / nv, m = 1.0 / nv;
        double expect = w * f / (1.0 + f) * sqrt((3.0 + f) / (1e8 * m));
        assert_near(contact_equilibrium_speed(&p, w, m), expect, 1e-12 * expect);
        double crossing = w * 2.0 * f / ((1.0 - f * f) * sqrt(1e8 * m));
        assert_true(expect < crossing);
    }
    assert_near(contact_equilibrium_speed(&p, gravity, 1.0), 3.1684e-4, 1e-8);
    /* The pile's box (0.06 kg on four corners, k = 1e4 N/m, r = 0.3), taking m / 4 per corner:
     * 1.07 cm/s, under the 2.1 cm/s band-crossing speed docs/performance.md gives for it. */
    ContactParams pile = internal_friction(1e4, 0.3, 1.0, 0.0);
    double box = 1000.0 * 8 * 0.025 * 0.02 * 0.015;
    assert_near(contact_equilibrium_speed(&pile, box * gravity / 4, box / 4), 0.0107, 2e-4);
    /* A given tolerance wins; an unknown load or mass is never still */
    assert_near(contact_equilibrium_speed(&p, 0.0, 1.0), 0.0, 0.0);
    assert_near(contact_equilibrium_speed(&p, 1.0, 0.0), 0.0, 0.0);
    p.velocity_tolerance = 2e-3;
    assert_near(contact_equilibrium_speed(&p, 0.0, 0.0), 2e-3, 0.0);
}

/* A mass m pressed by W into a contact of internal friction (the jump law), starting at the
 * resting depth F(g) = W moving out at `speed`: the depth where it first turns (RK4 at a
 * thousandth of the contact's period; the force is smooth while the contact restores). */
static double turning_depth(const ContactParams *p, double w, double m, double speed) {
    const ContactModelClass *model = contact_model_class(CONTACT_MODEL_INTERNAL_FRICTION);
    ContactHistory h = {0};
    double g = pow(w / p->stiffness, 1.0 / p->exponent), v = -speed;
    double dt = 2.0 * M_PI * sqrt(m * g / w) * 1e-3;
    for (int i = 0; i < 1000000 && v < 0.0; i++) {
        double gs[4], vs[4], as[4];
        for (int s = 0; s < 4; s++) {
            double c = s == 0 ? 0.0 : (s == 3 ? 1.0 : 0.5);
            gs[s] = s == 0 ? g : g + c * dt * vs[s - 1];
            double vv = s == 0 ? v : v + c * dt * as[s - 1];
            ContactKinematics k = {.depth = gs[s], .depth_rate = -1e-300, .effective_mass = m};
            as[s] = (w - model->force(p, &h, &k).normal) / m;
            vs[s] = vv;
        }
        g += dt / 6.0 * (vs[0] + 2 * vs[1] + 2 * vs[2] + vs[3]);
        v += dt / 6.0 * (as[0] + 2 * as[1] + 2 * as[2] + as[3]);
    }
    return g;
}

static void test_tolerance_is_the_band_edge(void **state) {
    (void)state;
    for (int i = 0; i < 2; i++) {
        double n = i == 0 ? 1.0 : 1.5, w = 0.15, m = 0.015;
        ContactParams p = internal_friction(1e4, 0.3, n, 0.0);
        double band_lo = pow(w / ((1.0 + p.if_factor) * p.stiffness), 1.0 / n);
        double tol = contact_equilibrium_speed(&p, w, m);
        assert_true(tol > 0.0);
        assert_true(turning_depth(&p, w, m, 0.99 * tol) > band_lo);
        assert_true(turning_depth(&p, w, m, 1.01 * tol) < band_lo);
    }
}

/* The ramp: (1 +- f) F(g) once |dg/dt| is well past its width 2 f F tau / m_eff, F(g) at
 * dg/dt = 0 (the resting depth F = W), and the dissipative part's power (F_normal - F) v never
 * positive (with our sign, a positive force times a positive rate is work taken out). */
static void test_phase_ramp(void **state) {
    (void)state;
    const ContactModelClass *model = contact_model_class(CONTACT_MODEL_INTERNAL_FRICTION);
    ContactParams p = internal_friction(1e4, 0.3, 1.0, 1e-4);
    ContactHistory h = {0};
    double f = p.if_factor, g = 1e-3, m = 0.02, force = 1e4 * g;
    double width = 2.0 * f * force * 1e-4 / m;
    ContactKinematics k = {.depth = g, .depth_rate = 10.0 * width, .effective_mass = m};
    assert_near(model->force(&p, &h, &k).normal, (1.0 + f) * force, 1e-6 * force);
    k.depth_rate = -10.0 * width;
    assert_near(model->force(&p, &h, &k).normal, (1.0 - f) * force, 1e-6 * force);
    k.depth_rate = 0.0;
    assert_near(model->force(&p, &h, &k).normal, force, 1e-12);
    k.depth_rate = 0.1 * width; /* a damper of rate 1 / (2 tau) near rest */
    assert_near((model->force(&p, &h, &k).normal - force) / k.depth_rate, m / 2e-4,
                1e-2 * m / 2e-4);
    for (int i = -50; i <= 50; i++) {
        k.depth_rate = width * i / 10.0;
        double excess = model->force(&p, &h, &k).normal - force;
        assert_true(excess * k.depth_rate >= 0.0);
    }
}

static const char box_scene[] =
    "return { universe = { gravity = {0, 0, -9.81}, integrator = 'rk4', dt = 2e-4 },"
    " things = {"
    "  { name = 'box', kind = 'body', shape = 'box', half_extents = {0.025, 0.02, 0.015},"
    "    mass = 0.06, inertia = {1.25e-5, 1.7e-5, 2.05e-5}, pos = {0, 0, 0.035},"
    "    orient = {0.9998, 0.02, 0.01, 0}, material = 'box' },"
    "  { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1}, offset = 0,"
    "    material = 'floor' } },"
    " contacts = { { name = 'box_floor', materials = {'box', 'floor'},"
    "   model = 'internal_friction', stiffness = 1e4, restitution = 0.3, friction_static = 0.5,"
    "   friction_kinetic = 0.4, tangent_stiffness = 1e4, tangent_damping = 10,"
    "   velocity_tolerance = 0, phase_ramp_time = 2e-4 } } }";

static Engine *make_box(bool sleep_disabled) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string("box.lua", box_scene, strlen(box_scene), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    EngineOptions o = engine_options_default();
    o.sleep_disabled = sleep_disabled;
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("%s", err.message);
    return e;
}

static void test_box_sleeps_keeping_its_energy(void **state) {
    (void)state;
    Engine *e = make_box(false), *twin = make_box(true);
    IssimError err = {0};
    assert_int_equal(engine_stats(e).warnings, 0); /* a ramp of one step: no warning */
    double before = engine_energy(e).total, start = before, largest_rise = -INFINITY;
    while (!engine_body_asleep(e, 0) && engine_time(e) < 2.0) {
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
        assert_int_equal(engine_step(twin, &err), ISSIM_OK);
        double now = engine_energy(e).total;
        largest_rise = fmax(largest_rise, now - before);
        before = now;
    }
    printf("box asleep at t = %.4f s; total energy %.9g -> %.9g J, largest rise in a step "
           "%.3g J\n",
           engine_time(e), start, before, largest_rise);
    assert_true(engine_body_asleep(e, 0));
    assert_true(largest_rise <= 1e-9);
    /* The step that put it to sleep: the twin (sleeping off) took the same step; what sleeping
     * took away is the twin's kinetic energy there. */
    EngineEnergy asleep = engine_energy(e), awake = engine_energy(twin);
    printf("taken at sleep: %.3g J (the twin's kinetic energy %.3g J)\n",
           awake.total - asleep.total, awake.kinetic);
    assert_near(awake.total - asleep.total, awake.kinetic, 1e-12);
    assert_true(awake.kinetic < 1e-9);
    /* and it rests at the depth its load gives, inside the band of eq. 4.91 */
    EngineBodyState st = engine_body_state(e, engine_body_id(e, 0));
    assert_true(vec3_norm(st.vel) == 0.0 && vec3_norm(st.angvel) == 0.0);
    engine_destroy(e);
    engine_destroy(twin);
}

/* A ramp under the RK4 step is warned about, naming the pair (it makes piles tremble). */
static void test_short_ramp_warned(void **state) {
    (void)state;
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string("box.lua", box_scene, strlen(box_scene), NULL, &db, &err) != ISSIM_OK ||
        thingdb_set_text(db, "box_floor.phase_ramp_time", "5e-5", false, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    EngineOptions o = engine_options_default();
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("%s", err.message);
    assert_int_equal(engine_stats(e).warnings, 1);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bar_numbers),
        cmocka_unit_test(test_tolerance_is_the_band_edge),
        cmocka_unit_test(test_phase_ramp),
        cmocka_unit_test(test_box_sleeps_keeping_its_energy),
        cmocka_unit_test(test_short_ramp_warned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
