/* Hertz (000 2.1.1): P = 4/3 E* R^(1/2) delta^(3/2) from the materials' moduli, Poisson ratios
 * and radii. The impact of the vertical bar of scenes/point_drop.lua (1 kg) with a 10 mm steel
 * tip on a steel plane (E = 2e11 Pa, nu = 0.3), thrown at 0.1 to 3 m/s without gravity, lasts
 * 2.9432 delta_max / v with delta_max = (15 m v^2 / (16 E* R^(1/2)))^(2/5) (within 0.1%), and
 * returns all its energy (the model is elastic). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/sim.h"
#include "testutil.h"

static void test_effective_modulus_and_radius(void **state) {
    double e_star = contact_hertz_modulus(2e11, 0.3, 2e11, 0.3);
    assert_near(e_star, 2e11 / (2 * (1 - 0.09)), 1.0);
    /* A rigid flat (E -> infinity) leaves the sphere's own E / (1 - nu^2) */
    assert_near(contact_hertz_modulus(7e10, 0.33, 1e13 * 1e6, 0.0), 7e10 / (1 - 0.33 * 0.33),
                1e-3 * 7e10);
    assert_near(contact_hertz_radius(0.01, 0.0), 0.01, 0.0);
    assert_near(contact_hertz_radius(0.01, 0.01), 0.005, 1e-15);
    assert_true(isinf(contact_hertz_radius(0.0, 0.0)));
    /* Both flat is refused with a message naming the radii */
    ContactParams p = {.model = CONTACT_MODEL_HERTZ,
                       .restitution = 0.8,
                       .youngs_a = 2e11,
                       .youngs_b = 2e11,
                       .poisson_a = 0.3,
                       .poisson_b = 0.3};
    IssimError err = {0};
    assert_int_equal(contact_params_derive(&p, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "radius_a"));
    p.radius_a = 0.01;
    assert_int_equal(contact_params_derive(&p, &err), ISSIM_OK);
    assert_near(p.hertz_coeff, 4.0 / 3.0 * e_star * 0.1, 1.0);
    const ContactModelClass *m = contact_model_class(CONTACT_MODEL_HERTZ);
    ContactHistory h = {0};
    ContactKinematics k = {.depth = 1e-5, .depth_rate = 0.5, .normal = {0, 0, 1}};
    assert_near(m->force(&p, &h, &k).normal, p.hertz_coeff * pow(1e-5, 1.5), 1e-9);
    k.depth_rate = -0.5; /* elastic: the same on the way out */
    assert_near(m->force(&p, &h, &k).normal, p.hertz_coeff * pow(1e-5, 1.5), 1e-9);
    assert_near(m->potential(&p, &h, &k), 0.4 * p.hertz_coeff * pow(1e-5, 2.5), 1e-18);
}

static void test_impact_duration(void **state) {
    const double speeds[] = {0.1, 1.0, 3.0};
    double e_star = contact_hertz_modulus(2e11, 0.3, 2e11, 0.3);
    double coeff = 4.0 / 3.0 * e_star * sqrt(0.01);
    for (int i = 0; i < 3; i++) {
        double v = speeds[i];
        const char *sets[] = {"bar_floor.model=hertz", "bar_floor.radius_a=0.01"};
        SimSummary *s = test_thrown_bar("scenes/point_drop.lua", 0.1, v, sets, 2, 0.01);
        assert_int_equal(s->impact_count, 1);
        double measured = s->impacts[0].t_end - s->impacts[0].t_begin;
        double delta_max = pow(15.0 * 1.0 * v * v / (16.0 * e_star * sqrt(0.01)), 0.4);
        double analytic = 2.9432 * delta_max / v;
        printf("Hertz v = %.1f m/s: duration %.6f ms, analytic %.6f ms, e = %.6f\n", v,
               1e3 * measured, 1e3 * analytic, s->impacts[0].restitution);
        assert_near(analytic, contact_hertz_duration(coeff, 1.0, v), 1e-12);
        assert_near(measured, analytic, 1e-3 * analytic);
        assert_near(s->impacts[0].restitution, 1.0, 1e-4);
        free(s);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_effective_modulus_and_radius),
        cmocka_unit_test(test_impact_duration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
