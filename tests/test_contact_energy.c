/* No passive contact model gains energy (000 2.4, 004 4.6): for every model, over randomised
 * parameters (stiffness, restitution, exponent, alpha, tilt, moduli and radii, friction) and
 * impact speeds, the vertical bar of scenes/point_drop.lua thrown at the floor (no gravity,
 * with a sliding velocity in half the draws) never has more mechanical energy (kinetic plus the
 * model's stored energy) than it started with, at any output step of the impact, and leaves with
 * at most its incoming kinetic energy. Seeded RNG: the same draws every run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/io.h"
#include "testutil.h"

typedef struct Draw {
    char sets[16][64];
    int count;
    double v_normal, v_tangent;
} Draw;

static void add(Draw *d, const char *fmt, double x) {
    snprintf(d->sets[d->count++], sizeof d->sets[0], fmt, x);
}

static Draw draw(TestRng *rng, ContactModelKind model) {
    Draw d = {0};
    double r = test_rng_range(rng, 0.3, 0.95);
    add(&d, "bar_floor.stiffness=%.6g", pow(10.0, test_rng_range(rng, 4.0, 8.0)));
    add(&d, "bar_floor.restitution=%.6g", r);
    add(&d, "bar_floor.exponent=%.6g", test_rng_range(rng, 1.0, 2.0));
    add(&d, "bar_floor.alpha=%.6g", test_rng_range(rng, 0.0, 1.0));
    add(&d, "bar_floor.tilt=%.6g", test_rng_range(rng, 0.0, 0.9) * r * r);
    add(&d, "bar_floor.youngs_modulus_a=%.6g", pow(10.0, test_rng_range(rng, 9.0, 11.5)));
    add(&d, "bar_floor.radius_a=%.6g", test_rng_range(rng, 1e-3, 0.1));
    double mu = test_rng_uniform(rng) < 0.5 ? test_rng_range(rng, 0.05, 1.0) : 0.0;
    add(&d, "bar_floor.friction_static=%.6g", mu);
    add(&d, "bar_floor.friction_kinetic=%.6g", mu * test_rng_range(rng, 0.5, 1.0));
    add(&d, "bar_floor.tangent_stiffness=%.6g", pow(10.0, test_rng_range(rng, 3.0, 6.0)));
    add(&d, "bar_floor.tangent_damping=%.6g", test_rng_range(rng, 0.0, 50.0));
    snprintf(d.sets[d.count++], sizeof d.sets[0], "bar_floor.model=%s",
             contact_model_class(model)->name);
    d.v_normal = test_rng_range(rng, 0.05, 3.0);
    d.v_tangent = mu > 0.0 ? test_rng_range(rng, -1.0, 1.0) : 0.0;
    return d;
}

typedef struct Ended {
    bool ended;
} Ended;

static void on_event(const EngineEvent *ev, void *user) {
    if (ev->kind == ENGINE_EVENT_CONTACT_END)
        ((Ended *)user)->ended = true;
}

static void check_no_gain(ContactModelKind model, const Draw *d) {
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_equal(scene_load_file(test_source_path("scenes/point_drop.lua"), NULL, &db, &err),
                     ISSIM_OK);
    for (int i = 0; i < d->count; i++) {
        char path[64];
        const char *eq = strchr(d->sets[i], '=');
        snprintf(path, sizeof path, "%.*s", (int)(eq - d->sets[i]), d->sets[i]);
        if (thingdb_set_text(db, path, eq + 1, false, &err) != ISSIM_OK)
            fail_msg("%s", err.message);
    }
    char vel[96];
    snprintf(vel, sizeof vel, "%.17g 0 %.17g", d->v_tangent, -d->v_normal);
    assert_int_equal(thingdb_set_text(db, "universe.gravity", "0 0 0", false, &err), ISSIM_OK);
    assert_int_equal(thingdb_set_text(db, "bar.vel", vel, false, &err), ISSIM_OK);
    assert_int_equal(thingdb_set_text(db, "bar.pos", "0 0 0.1001", false, &err), ISSIM_OK);
    EngineOptions o = engine_options_default();
    Engine *e = engine_create(db, &o, &err);
    if (!e)
        fail_msg("%s", err.message);
    Ended ended = {false};
    engine_set_event_callback(e, on_event, &ended);
    double e0 = engine_energy(e).total, worst = -INFINITY;
    double t = 1e-4 / d->v_normal;
    for (int i = 0; i < 4000 && !ended.ended; i++) {
        t += 5e-5;
        assert_int_equal(engine_advance(e, t, &err), ISSIM_OK);
        double gain = (engine_energy(e).total - e0) / e0;
        if (gain > worst)
            worst = gain;
    }
    if (!ended.ended)
        fail_msg("%s: the impact did not end within %g s", contact_model_class(model)->name, t);
    if (worst > 1e-6) {
        for (int i = 0; i < d->count; i++)
            print_message("  %s\n", d->sets[i]);
        fail_msg("%s gained energy: %.3g of %.6g J (v = %.3f, %.3f m/s)",
                 contact_model_class(model)->name, worst, e0, d->v_normal, d->v_tangent);
    }
    engine_destroy(e);
    thingdb_destroy(db);
}

static void test_no_model_gains_energy(void **state) {
    TestRng rng = {.s = 20261121};
    for (int m = 0; m < CONTACT_MODEL_COUNT; m++) {
        for (int i = 0; i < 6; i++) {
            Draw d = draw(&rng, (ContactModelKind)m);
            check_no_gain((ContactModelKind)m, &d);
        }
        printf("%s: 6 randomised impacts, no energy gained\n",
               contact_model_class((ContactModelKind)m)->name);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_model_gains_energy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
