/* VALIDATION.md V2 (004 4.8.3, eq. 4.93): the same bar dropped horizontally touches with both
 * ends; two parallel spring/dampers with the single-contact k and b give
 * zeta_2 = sqrt(2) zeta_1 and r = 0.729 (within 1e-3), and the contact is shorter by about
 * sqrt(2). Runs scenes/bar_drop_horizontal.lua and scenes/point_drop.lua through the session. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "issim/contact.h"
#include "issim/sim.h"
#include "testutil.h"

static SimSummary *run(const char *scene) {
    return test_run_summary(scene, &(TestRunOptions){.until = 0.5});
}

static void test_two_vertices_restitution(void **state) {
    SimSummary *s = run("scenes/bar_drop_horizontal.lua");
    assert_true(s->impact_count >= 1);
    assert_int_equal(s->impacts[0].contacts, 2);
    /* The closed form of eq. 4.93 for the scene's parameters. */
    double k = 1e8, m = 1.0, b = contact_damping_for_restitution(k, m, 0.8);
    double r2 = contact_restitution_of(2 * k, 2 * b, m);
    printf("V2 r = %.6f (closed form %.6f)\n", s->impacts[0].restitution, r2);
    assert_near(r2, 0.729, 1e-3);
    assert_near(s->impacts[0].restitution, 0.729, 1e-3);
    free(s);
}

static void test_contact_shorter_by_sqrt2(void **state) {
    SimSummary *one = run("scenes/point_drop.lua");
    SimSummary *two = run("scenes/bar_drop_horizontal.lua");
    double d1 = one->impacts[0].t_end - one->impacts[0].t_begin;
    double d2 = two->impacts[0].t_end - two->impacts[0].t_begin;
    printf("V2 durations: one vertex %.4f ms, two %.4f ms, ratio %.4f\n", 1e3 * d1, 1e3 * d2,
           d1 / d2);
    /* Exactly: omega_d ratio sqrt(2) sqrt(1-2 zeta^2)/sqrt(1-zeta^2) = 1.407 here. */
    assert_near(d1 / d2, sqrt(2.0), 0.02);
    free(one);
    free(two);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_vertices_restitution),
        cmocka_unit_test(test_contact_shorter_by_sqrt2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
