/* Hunt-Crossley (000 2.4.4, eqs. 2.15-2.17): f = lambda g^n dg/dt + k g^n with
 * lambda = 3/2 alpha k gives the restitution e = 1 - alpha v_i for small alpha v_i. The vertical
 * bar of scenes/point_drop.lua is thrown at the floor (no gravity) at speeds from 0.01 to 2 m/s
 * with n = 3/2, alpha = 0.2 s/m:
 *   - for alpha v <= 0.1 the measured e is within (alpha v)^2 of 1 - alpha v, and its slope at
 *     low speed is -alpha within 2%;
 *   - beyond, the linear law is only the first term: e stays above 1 - alpha v, by 0.03 at
 *     alpha v = 0.2 and 0.11 at 0.4 (printed, asserted as "above and within 0.15"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "issim/contact.h"
#include "issim/sim.h"
#include "testutil.h"

static const double alpha = 0.2;

static double restitution_at(double v) {
    const char *sets[] = {"bar_floor.model=hunt_crossley", "bar_floor.exponent=1.5",
                          "bar_floor.stiffness=1e9", "bar_floor.alpha=0.2"};
    SimSummary *s = test_thrown_bar("scenes/point_drop.lua", 0.1, v, sets, 4, 0.01);
    assert_int_equal(s->impact_count, 1);
    assert_near(s->impacts[0].v_in, -v, 1e-9 * v);
    double e = s->impacts[0].restitution;
    free(s);
    return e;
}

static void test_restitution_small_alpha_v(void **state) {
    const double speeds[] = {0.01, 0.05, 0.1, 0.25, 0.5};
    for (int i = 0; i < 5; i++) {
        double v = speeds[i], e = restitution_at(v), av = alpha * v;
        printf("Hunt-Crossley v = %.2f m/s: e = %.6f, 1 - alpha v = %.6f\n", v, e, 1 - av);
        assert_near(e, 1.0 - av, av * av);
    }
    /* The slope at low speed: (e(0.01) - e(0.02)) / 0.01 = alpha */
    double slope = (restitution_at(0.01) - restitution_at(0.02)) / 0.01;
    printf("Hunt-Crossley low-speed slope %.5f s/m (alpha %.5f)\n", slope, alpha);
    assert_near(slope, alpha, 0.02 * alpha);
}

static void test_restitution_beyond_linear_range(void **state) {
    const double speeds[] = {1.0, 2.0};
    for (int i = 0; i < 2; i++) {
        double v = speeds[i], e = restitution_at(v);
        printf("Hunt-Crossley v = %.1f m/s: e = %.6f, 1 - alpha v = %.6f\n", v, e, 1 - alpha * v);
        assert_true(e > 1.0 - alpha * v);
        assert_true(e < 1.0 - alpha * v + 0.15);
    }
}

/* The model itself: force from zero at onset (no jump), lambda = 3/2 alpha k, no pull. */
static void test_force_law(void **state) {
    const ContactModelClass *m = contact_model_class(CONTACT_MODEL_HUNT_CROSSLEY);
    ContactParams p = {.model = CONTACT_MODEL_HUNT_CROSSLEY,
                       .stiffness = 1e9,
                       .exponent = 1.5,
                       .hc_alpha = 0.2,
                       .restitution = 0.8,
                       .tangent_stiffness = 1e5};
    IssimError err = {0};
    assert_int_equal(contact_params_derive(&p, &err), ISSIM_OK);
    assert_near(p.hc_lambda, 1.5 * 0.2 * 1e9, 1e-3);
    ContactHistory h = {0};
    ContactKinematics k = {.depth = 0.0, .depth_rate = 3.0, .normal = {0, 0, 1}};
    assert_near(m->force(&p, &h, &k).normal, 0.0, 0.0);
    k.depth = 1e-4;
    double gn = pow(1e-4, 1.5);
    assert_near(m->force(&p, &h, &k).normal, p.hc_lambda * gn * 3.0 + 1e9 * gn, 1e-9);
    k.depth_rate = -10.0; /* 1 + 3/2 alpha g' < 0: would pull */
    assert_near(m->force(&p, &h, &k).normal, 0.0, 0.0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_force_law),
        cmocka_unit_test(test_restitution_small_alpha_v),
        cmocka_unit_test(test_restitution_beyond_linear_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
