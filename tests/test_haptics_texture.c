/* Haptic surface models (VALIDATION.md V17; 004 eqs. 3.29-3.43): texture statistics in world
 * and joint space, the dead band, the diagonal option, rate modulation, the PD wall and
 * Coulomb friction. Statistical tolerances are several standard errors of the estimates for
 * the sample counts used, with fixed seeds. */
#include <math.h>
#include <string.h>

#include "issim/haptics.h"
#include "testutil.h"

#define SAMPLES 200000

static HapticTexture texture(double s_t, double s_n, double rho, double mt, double mn) {
    HapticTexture t = {.mean = {mt, mn},
                       .cov = {s_t * s_t, rho * s_t * s_n, rho * s_t * s_n, s_n * s_n},
                       .epsilon = 0.01};
    assert_int_equal(haptic_texture_prepare(&t, NULL), ISSIM_OK);
    return t;
}

typedef struct Moments {
    double mean[2], cov[4];
} Moments;

static void accumulate(Moments *m, const double *x, int n) {
    double s[2] = {0, 0}, ss[4] = {0, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        s[0] += x[2 * i];
        s[1] += x[2 * i + 1];
    }
    m->mean[0] = s[0] / n;
    m->mean[1] = s[1] / n;
    for (int i = 0; i < n; i++) {
        double a = x[2 * i] - m->mean[0], b = x[2 * i + 1] - m->mean[1];
        ss[0] += a * a;
        ss[1] += a * b;
        ss[3] += b * b;
    }
    m->cov[0] = ss[0] / (n - 1);
    m->cov[1] = m->cov[2] = ss[1] / (n - 1);
    m->cov[3] = ss[3] / (n - 1);
}

/* |estimate - expected| within k standard errors of a sample mean / covariance */
static void assert_moments(const Moments *m, const double mean[2], const double cov[4], int n) {
    const double k = 5.0;
    for (int i = 0; i < 2; i++)
        assert_near(m->mean[i], mean[i], k * sqrt(cov[3 * i] / n) + 1e-15);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double se = sqrt((cov[3 * i] * cov[3 * j] + cov[2 * i + j] * cov[2 * i + j]) / n);
            assert_near(m->cov[2 * i + j], cov[2 * i + j], k * se + 1e-15);
        }
}

static double samples[2 * SAMPLES];

/* world statistics = R Sigma_s R^T, R mu_s (eqs. 3.34-3.35), for a correlated texture on a
 * surface tilted 30 degrees */
static void test_world_statistics(void **state) {
    HapticTexture t = texture(0.3, 0.1, 0.6, 0.05, -0.02);
    HapticVec2 tangent = {cos(M_PI / 6), sin(M_PI / 6)};
    double mean_w[2], cov_w[4];
    haptic_texture_world_stats(&t, tangent, mean_w, cov_w);
    /* the closed form of R C R^T for this R */
    double c = cos(M_PI / 6), s = sin(M_PI / 6), a = t.cov[0], b = t.cov[1], d = t.cov[3];
    assert_near(cov_w[0], c * c * a - 2 * c * s * b + s * s * d, 1e-15);
    assert_near(cov_w[3], s * s * a + 2 * c * s * b + c * c * d, 1e-15);
    assert_near(mean_w[0], c * 0.05 + s * 0.02, 1e-15);
    HapticRng rng;
    haptic_rng_seed(&rng, 7);
    for (int i = 0; i < SAMPLES; i++)
        haptic_texture_sample_world(&t, &rng, tangent, 0.05, samples + 2 * i);
    Moments m;
    accumulate(&m, samples, SAMPLES);
    print_message("world mean (%.4f %.4f) expected (%.4f %.4f); cov (%.5f %.5f %.5f) expected "
                  "(%.5f %.5f %.5f)\n",
                  m.mean[0], m.mean[1], mean_w[0], mean_w[1], m.cov[0], m.cov[1], m.cov[3],
                  cov_w[0], cov_w[1], cov_w[3]);
    assert_moments(&m, mean_w, cov_w, SAMPLES);
}

/* joint statistics = J^T Sigma_w J, J^T mu_w (eqs. 3.41-3.43) at an off-centre posture */
static void test_joint_statistics(void **state) {
    PantographConfig c = pantograph_config_default();
    PantographJoints q;
    assert_true(pantograph_inverse(&c, (HapticVec2){0.07, 0.19}, &q));
    double j[4];
    assert_true(pantograph_jacobian(&c, &q, j));
    HapticTexture t = texture(0.5, 0.2, -0.4, 0.1, 0.0);
    HapticVec2 tangent = {0.0, 1.0};
    double mean_w[2], cov_w[4], mean_tau[2], cov_tau[4];
    haptic_texture_world_stats(&t, tangent, mean_w, cov_w);
    haptic_texture_joint_stats(j, mean_w, cov_w, mean_tau, cov_tau);
    /* J^T Sigma J by hand for the (0,0) entry */
    double e00 =
        j[0] * (cov_w[0] * j[0] + cov_w[1] * j[2]) + j[2] * (cov_w[2] * j[0] + cov_w[3] * j[2]);
    assert_near(cov_tau[0], e00, 1e-15);
    HapticRng rng;
    haptic_rng_seed(&rng, 11);
    for (int i = 0; i < SAMPLES; i++)
        haptic_texture_sample_joint(&t, &rng, tangent, -0.2, j, samples + 2 * i);
    Moments m;
    accumulate(&m, samples, SAMPLES);
    print_message("joint mean (%.5f %.5f) expected (%.5f %.5f); cov (%.3g %.3g %.3g) expected "
                  "(%.3g %.3g %.3g)\n",
                  m.mean[0], m.mean[1], mean_tau[0], mean_tau[1], m.cov[0], m.cov[1], m.cov[3],
                  cov_tau[0], cov_tau[1], cov_tau[3]);
    assert_moments(&m, mean_tau, cov_tau, SAMPLES);
}

/* u = 0 while |lateral speed| < epsilon (eq. 3.31), whatever the statistics */
static void test_dead_band(void **state) {
    HapticTexture t = texture(1.0, 1.0, 0.0, 0.5, 0.5);
    HapticRng rng;
    haptic_rng_seed(&rng, 3);
    double j[4] = {0.1, 0.02, -0.03, 0.09}, f[2], tau[2];
    for (double v = -0.0099; v < 0.01; v += 0.0003) {
        haptic_texture_sample_world(&t, &rng, (HapticVec2){1, 0}, v, f);
        haptic_texture_sample_joint(&t, &rng, (HapticVec2){1, 0}, v, j, tau);
        assert_true(f[0] == 0.0 && f[1] == 0.0 && tau[0] == 0.0 && tau[1] == 0.0);
    }
    int nonzero = 0;
    for (int i = 0; i < 100; i++) {
        haptic_texture_sample_world(&t, &rng, (HapticVec2){1, 0}, 0.0101, f);
        nonzero += f[0] != 0.0;
    }
    assert_int_equal(nonzero, 100);
}

/* the diagonal option drops the correlation (surface space: tangent x, normal y) */
static void test_diagonal_option(void **state) {
    HapticTexture t = {.mean = {0, 0}, .cov = {0.04, 0.018, 0.018, 0.01}, .diagonal = true};
    assert_int_equal(haptic_texture_prepare(&t, NULL), ISSIM_OK);
    HapticRng rng;
    haptic_rng_seed(&rng, 5);
    for (int i = 0; i < SAMPLES; i++)
        haptic_texture_sample_world(&t, &rng, (HapticVec2){1, 0}, 1.0, samples + 2 * i);
    Moments m;
    accumulate(&m, samples, SAMPLES);
    double expect_cov[4] = {0.04, 0, 0, 0.01}, zero[2] = {0, 0};
    assert_moments(&m, zero, expect_cov, SAMPLES);
    /* the full matrix must be positive definite */
    HapticTexture bad = {.cov = {0.01, 0.02, 0.02, 0.01}};
    IssimError err;
    assert_int_equal(haptic_texture_prepare(&bad, &err), ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "not positive definite"));
}

/* rate modulation: a pulse with probability v / ref per period */
static void test_rate_modulation(void **state) {
    HapticTexture t = texture(0.2, 0.2, 0.0, 0.0, 0.0);
    t.rate_speed_ref = 0.2;
    HapticRng rng;
    haptic_rng_seed(&rng, 9);
    const double speeds[3] = {0.02, 0.1, 0.4};
    for (int s = 0; s < 3; s++) {
        int pulses = 0, n = 50000;
        for (int i = 0; i < n; i++) {
            double f[2];
            haptic_texture_sample_world(&t, &rng, (HapticVec2){1, 0}, speeds[s], f);
            pulses += f[0] != 0.0;
        }
        double p = fmin(speeds[s] / t.rate_speed_ref, 1.0);
        assert_near((double)pulses / n, p, 5 * sqrt(p * (1 - p) / n) + 1e-12);
    }
}

/* PD wall: f_n = k depth + b depth_rate along the normal, friction mu f_n against sliding */
static void test_wall_and_friction(void **state) {
    PantographConfig c = pantograph_config_default();
    HapticKinematics k;
    haptic_kinematics_init(&k, &c);
    assert_true(pantograph_jacobian(&c, &k.joints, k.jacobian));
    HapticSurface wall = {.kind = HAPTIC_SURFACE_WALL,
                          .point = {0, 0.15},
                          .normal = {0, 1},
                          .stiffness = 2000,
                          .damping = 5,
                          .friction = 0.4,
                          .friction_speed = 0.01};
    HapticRng rng;
    haptic_rng_seed(&rng, 1);
    k.pos = (HapticVec2){0.02, 0.148}; /* 2 mm in */
    k.vel = (HapticVec2){0.05, -0.01}; /* sliding +x, pressing in */
    double f[2] = {0, 0}, tau[2] = {0, 0};
    haptic_surface_force(&wall, &k, &rng, f, tau);
    double fn = 2000 * 0.002 + 5 * 0.01;
    assert_near(f[1], fn, 1e-12);
    assert_near(f[0], -0.4 * fn, 1e-12);
    assert_true(tau[0] == 0.0 && tau[1] == 0.0);
    /* outside: nothing */
    k.pos.y = 0.151;
    f[0] = f[1] = 0;
    haptic_surface_force(&wall, &k, &rng, f, tau);
    assert_true(f[0] == 0.0 && f[1] == 0.0);
    /* leaving fast: the damper never pulls */
    k.pos.y = 0.1499;
    k.vel.y = 1.0;
    haptic_surface_force(&wall, &k, &rng, f, tau);
    assert_true(f[1] == 0.0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_world_statistics), cmocka_unit_test(test_joint_statistics),
        cmocka_unit_test(test_dead_band),        cmocka_unit_test(test_diagonal_option),
        cmocka_unit_test(test_rate_modulation),  cmocka_unit_test(test_wall_and_friction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
