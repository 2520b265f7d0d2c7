/* VALIDATION.md V6 (004 App. D, eqs. D.159-D.170, Fig. D.23): the C0 internal friction model,
 * the compression-to-restitution jump replaced by a line tilted over h g_max, with
 * f = (1 - r^2)/(1 + r^2 - 2h). The force is a monotonic, continuous function of g for any
 * deepest point, and the bar of scenes/point_drop.lua / bar_drop_horizontal.lua thrown at the
 * floor (no gravity) measures r within 2% of the configured 0.8 for h = 0.1 and 0.3, one and two
 * vertices, 0.1 to 3 m/s. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/sim.h"
#include "testutil.h"

static ContactParams c0(double h, double n) {
    ContactParams p = {.model = CONTACT_MODEL_INTERNAL_FRICTION_C0,
                       .stiffness = 1e8,
                       .exponent = n,
                       .restitution = 0.8,
                       .tilt = h,
                       .tangent_stiffness = 1e5};
    IssimError err = {0};
    assert_int_equal(contact_params_derive(&p, &err), ISSIM_OK);
    return p;
}

/* Load to g_max, then sweep g from 0 to 1.5 g_max: the force never decreases and never jumps by
 * more than the slope times the sample spacing. */
static void test_force_monotonic_and_continuous(void **state) {
    const ContactModelClass *m = contact_model_class(CONTACT_MODEL_INTERNAL_FRICTION_C0);
    const double tilts[] = {0.05, 0.1, 0.3, 0.6};
    for (int i = 0; i < 4; i++) {
        for (int n = 1; n <= 2; n++) {
            ContactParams p = c0(tilts[i], n == 1 ? 1.0 : 1.5);
            double g_max = 1e-5;
            ContactHistory h = {.depth_max = g_max};
            double prev = 0.0, max_jump = 0.0;
            const int samples = 30000;
            for (int s = 1; s <= samples; s++) {
                ContactKinematics k = {.depth = 1.5 * g_max * s / samples, .normal = {0, 0, 1}};
                /* the direction of motion must not matter: a position-only law */
                k.depth_rate = 1.0;
                double up = m->force(&p, &h, &k).normal;
                k.depth_rate = -1.0;
                double down = m->force(&p, &h, &k).normal;
                assert_near(up, down, 0.0);
                assert_true(up >= prev);
                if (up - prev > max_jump)
                    max_jump = up - prev;
                prev = up;
            }
            /* The steepest part is the tilted line: about k (2f/h + 1 - f) per metre */
            double slope = p.stiffness * (2 * p.if_factor / tilts[i] + 2.0) * 1.5 *
                           (n == 1 ? 1.0 : sqrt(1.5 * g_max));
            assert_true(max_jump <= slope * 1.5 * g_max / samples);
        }
    }
    /* f of eq. D.170, and h >= r^2 refused */
    ContactParams p = c0(0.1, 1.0);
    assert_near(p.if_factor, (1 - 0.64) / (1 + 0.64 - 0.2), 1e-15);
    p.tilt = 0.7;
    IssimError err = {0};
    assert_int_equal(contact_params_derive(&p, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "tilt"));
}

static double thrown(const char *scene, double tip, double v, const char *tilt) {
    char h[64];
    snprintf(h, sizeof h, "bar_floor.tilt=%s", tilt);
    const char *sets[] = {"bar_floor.model=internal_friction_c0", h};
    SimSummary *s = test_thrown_bar(scene, tip, v, sets, 2, 2e-3);
    assert_int_equal(s->impact_count, 1);
    double r = s->impacts[0].restitution;
    free(s);
    return r;
}

static void test_restitution(void **state) {
    const char *tilts[] = {"0.1", "0.3"};
    const double speeds[] = {0.1, 3.0};
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            double r1 = thrown("scenes/point_drop.lua", 0.1, speeds[j], tilts[i]);
            double r2 = thrown("scenes/bar_drop_horizontal.lua", 0.0, speeds[j], tilts[i]);
            printf("V6 h = %s, v = %.1f m/s: r = %.6f (one vertex), %.6f (two)\n", tilts[i],
                   speeds[j], r1, r2);
            assert_near(r1, 0.8, 0.02 * 0.8);
            assert_near(r2, 0.8, 0.02 * 0.8);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_force_monotonic_and_continuous),
        cmocka_unit_test(test_restitution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
