/* P2 pantograph kinematics (004 ch. 2; VALIDATION.md V16): Jacobians against finite
 * differences, forward/inverse round trips over the workspace, the Newton iteration against
 * the closed form, encoder resolution, limits, the velocity filter and the D/A mapping. */
#include <math.h>
#include <string.h>

#include "issim/haptics.h"
#include "testutil.h"

static PantographConfig cfg(void) {
    return pantograph_config_default();
}

/* grid over the workspace rectangle, n x n */
static HapticVec2 grid_point(const PantographConfig *c, int i, int k, int n) {
    return (HapticVec2){
        c->workspace_min_x + i * (c->workspace_max_x - c->workspace_min_x) / (n - 1),
        c->workspace_min_y + k * (c->workspace_max_y - c->workspace_min_y) / (n - 1)};
}

static void test_defaults_cover_the_p2_workspace(void **state) {
    PantographConfig c = cfg();
    assert_int_equal(pantograph_config_check(&c, NULL), ISSIM_OK);
    assert_near(c.workspace_max_x - c.workspace_min_x, 0.16, 1e-12);
    assert_near(c.workspace_max_y - c.workspace_min_y, 0.10, 1e-12);
    assert_int_equal(c.counts_per_rev, 2000);
    assert_int_equal(c.dac_bits, 12);
    double worst = 1.0;
    for (int i = 0; i < 17; i++)
        for (int k = 0; k < 17; k++) {
            PantographJoints q;
            assert_true(pantograph_inverse(&c, grid_point(&c, i, k, 17), &q));
            worst = fmin(worst, pantograph_singularity(&q));
        }
    assert_true(worst > c.singular_limit); /* no force fading inside the workspace */
    IssimError err;
    c.d3 = -0.1;
    assert_int_equal(pantograph_config_check(&c, &err), ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "d3"));
    c = cfg();
    c.workspace_max_y = 0.5;
    assert_int_equal(pantograph_config_check(&c, &err), ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "out of the linkage's reach"));
}

/* eqs. 2.18-2.19 against central differences of eqs. 2.1-2.2 */
static void test_chain_jacobians_match_finite_differences(void **state) {
    PantographConfig c = cfg();
    const double h = 1e-6;
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 5; k++) {
            PantographJoints q;
            assert_true(pantograph_inverse(&c, grid_point(&c, i, k, 5), &q));
            double j1[4], j2[4];
            pantograph_jacobian_chain1(&c, &q, j1);
            pantograph_jacobian_chain2(&c, &q, j2);
            HapticVec2 a = pantograph_chain1_end(&c, q.q1 + h, q.q2),
                       b = pantograph_chain1_end(&c, q.q1 - h, q.q2);
            assert_near(j1[0], (a.x - b.x) / (2 * h), 1e-8);
            assert_near(j1[2], (a.y - b.y) / (2 * h), 1e-8);
            a = pantograph_chain1_end(&c, q.q1, q.q2 + h);
            b = pantograph_chain1_end(&c, q.q1, q.q2 - h);
            assert_near(j1[1], (a.x - b.x) / (2 * h), 1e-8);
            assert_near(j1[3], (a.y - b.y) / (2 * h), 1e-8);
            a = pantograph_chain2_end(&c, q.q5 + h, q.q4);
            b = pantograph_chain2_end(&c, q.q5 - h, q.q4);
            assert_near(j2[0], (a.x - b.x) / (2 * h), 1e-8);
            assert_near(j2[2], (a.y - b.y) / (2 * h), 1e-8);
            a = pantograph_chain2_end(&c, q.q5, q.q4 + h);
            b = pantograph_chain2_end(&c, q.q5, q.q4 - h);
            assert_near(j2[1], (a.x - b.x) / (2 * h), 1e-8);
            assert_near(j2[3], (a.y - b.y) / (2 * h), 1e-8);
        }
}

static HapticVec2 forward(const PantographConfig *c, double q1, double q5) {
    HapticVec2 p;
    assert_true(pantograph_forward_closed(c, q1, q5, &p, NULL));
    return p;
}

/* eqs. 2.25-2.26 and the distal rates 2.9-2.10 against differences of the forward kinematics */
static void test_closed_chain_jacobian_and_rates(void **state) {
    PantographConfig c = cfg();
    const double h = 1e-6;
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 5; k++) {
            PantographJoints q;
            assert_true(pantograph_inverse(&c, grid_point(&c, i, k, 5), &q));
            double j[4];
            assert_true(pantograph_jacobian(&c, &q, j));
            HapticVec2 a = forward(&c, q.q1 + h, q.q5), b = forward(&c, q.q1 - h, q.q5);
            assert_near(j[0], (a.x - b.x) / (2 * h), 1e-7);
            assert_near(j[2], (a.y - b.y) / (2 * h), 1e-7);
            a = forward(&c, q.q1, q.q5 + h);
            b = forward(&c, q.q1, q.q5 - h);
            assert_near(j[1], (a.x - b.x) / (2 * h), 1e-7);
            assert_near(j[3], (a.y - b.y) / (2 * h), 1e-7);
            /* distal rates for base rates (0.7, -1.3) rad/s */
            double w1 = 0.7, w5 = -1.3, q2d, q4d;
            pantograph_distal_rates(&c, &q, w1, w5, &q2d, &q4d);
            PantographJoints qp, qm;
            assert_true(pantograph_forward_closed(&c, q.q1 + h * w1, q.q5 + h * w5, NULL, &qp));
            assert_true(pantograph_forward_closed(&c, q.q1 - h * w1, q.q5 - h * w5, NULL, &qm));
            assert_near(q2d, (qp.q2 - qm.q2) / (2 * h), 1e-6);
            assert_near(q4d, (qp.q4 - qm.q4) / (2 * h), 1e-6);
        }
}

/* inverse -> forward (Newton, cold and warm) -> the same point, over a 21 x 21 grid */
static void test_round_trips_over_the_workspace(void **state) {
    PantographConfig c = cfg();
    int max_warm_iterations = 0;
    for (int i = 0; i < 21; i++)
        for (int k = 0; k < 21; k++) {
            HapticVec2 p = grid_point(&c, i, k, 21);
            PantographJoints q;
            assert_true(pantograph_inverse(&c, p, &q));
            HapticVec2 closed;
            PantographJoints qc;
            assert_true(pantograph_forward_closed(&c, q.q1, q.q5, &closed, &qc));
            assert_near(closed.x, p.x, 1e-12);
            assert_near(closed.y, p.y, 1e-12);
            /* Newton from a start 0.1 rad off (a cold start) */
            PantographJoints qn = q;
            qn.q2 += 0.1;
            qn.q4 -= 0.1;
            assert_true(pantograph_forward_newton(&c, &qn) >= 0);
            HapticVec2 pn = pantograph_chain1_end(&c, qn.q1, qn.q2);
            assert_near(pn.x, p.x, 1e-10);
            assert_near(pn.y, p.y, 1e-10);
            /* warm start: the handle moved 1 mm since the last period (1 m/s at 1 kHz) */
            PantographJoints moved;
            assert_true(pantograph_inverse(&c, (HapticVec2){p.x + 7e-4, p.y + 7e-4}, &moved));
            PantographJoints warm = q;
            warm.q1 = moved.q1;
            warm.q5 = moved.q5;
            int it = pantograph_forward_newton(&c, &warm);
            assert_true(it >= 0);
            max_warm_iterations = it > max_warm_iterations ? it : max_warm_iterations;
            assert_near(warm.q2, moved.q2, 1e-9);
            assert_near(warm.q4, moved.q4, 1e-9);
        }
    assert_true(max_warm_iterations <= 4);
}

/* V16: 2000 counts/rev give a worst-case handle resolution of about 1 mm */
static void test_encoder_resolution(void **state) {
    PantographConfig c = cfg();
    double worst = 0.0, best = 1.0;
    for (int i = 0; i < 9; i++)
        for (int k = 0; k < 9; k++) {
            PantographJoints q;
            assert_true(pantograph_inverse(&c, grid_point(&c, i, k, 9), &q));
            double j[4];
            assert_true(pantograph_jacobian(&c, &q, j));
            double step = 2 * M_PI / c.counts_per_rev;
            double col1 = hypot(j[0], j[2]) * step, col2 = hypot(j[1], j[3]) * step;
            worst = fmax(worst, fmax(col1, col2));
            best = fmin(best, fmin(col1, col2));
        }
    print_message("one encoder count moves the handle %.3f..%.3f mm\n", 1e3 * best, 1e3 * worst);
    assert_true(worst < 1.0e-3 && worst > 0.2e-3);
    /* quantisation: decode(encode(angle)) is within half a count */
    for (double a = -3.0; a < 3.0; a += 0.0137) {
        int32_t n = pantograph_angle_to_counts(&c, a, false);
        assert_near(pantograph_counts_to_angle(&c, n, false), a, M_PI / c.counts_per_rev + 1e-12);
    }
}

static void test_limits_fade_the_force(void **state) {
    PantographConfig c = cfg();
    HapticKinematics k;
    haptic_kinematics_init(&k, &c);
    PantographJoints q;
    HapticVec2 centre = pantograph_workspace_centre(&c);
    assert_true(pantograph_inverse(&c, centre, &q));
    assert_true(haptic_kinematics_update(&k, pantograph_angle_to_counts(&c, q.q1, false),
                                         pantograph_angle_to_counts(&c, q.q5, true), 0.0));
    assert_near(k.force_scale, 1.0, 0.0);
    assert_int_equal(k.flags & (HAPTIC_LIMIT_WORKSPACE | HAPTIC_LIMIT_SINGULAR), 0);
    assert_true(k.closed_form_error < 1e-9);
    /* half the margin outside the workspace: half the force */
    HapticVec2 out = {centre.x, c.workspace_max_y + 0.5 * c.workspace_margin};
    assert_true(pantograph_inverse(&c, out, &q));
    haptic_kinematics_init(&k, &c);
    haptic_kinematics_update(&k, pantograph_angle_to_counts(&c, q.q1, false),
                             pantograph_angle_to_counts(&c, q.q5, true), 0.0);
    assert_true(k.flags & HAPTIC_LIMIT_WORKSPACE);
    assert_near(k.force_scale, 0.5, 0.1);
    /* chain 1 nearly straight (|sin q2| < singular_limit / 2): no force, reported */
    PantographJoints s = {.q1 = 1.2, .q5 = 0.2};
    HapticVec2 p;
    for (s.q5 = 0.2; s.q5 < 1.6; s.q5 += 0.001) {
        PantographJoints t;
        if (pantograph_forward_closed(&c, s.q1, s.q5, &p, &t) && fabs(sin(t.q2)) < 0.1)
            break;
    }
    haptic_kinematics_init(&k, &c);
    assert_true(haptic_kinematics_update(&k, pantograph_angle_to_counts(&c, s.q1, false),
                                         pantograph_angle_to_counts(&c, s.q5, true), 0.0));
    assert_true(k.flags & HAPTIC_LIMIT_SINGULAR);
    assert_near(k.force_scale, 0.0, 0.0);
}

/* The velocity estimate from quantised encoders follows a constant handle speed within the
 * quantisation bound of a first-order filter (alpha * one count / period per joint), and a late
 * period (5 ms without frames) does not spike it: the difference is taken over the real
 * interval between device timestamps. */
static void test_velocity_filter(void **state) {
    PantographConfig c = cfg();
    HapticKinematics k;
    haptic_kinematics_init(&k, &c);
    HapticVec2 centre = pantograph_workspace_centre(&c);
    const double speed = 0.1, dt = 1e-3; /* m/s along x, s */
    double before_gap = 0.0, after_gap = 0.0, count_move = 0.0;
    for (int n = 0; n <= 700; n++) {
        double t = n * dt;
        if (n >= 400 && n < 405)
            continue; /* a late period: five frames never seen */
        PantographJoints q;
        assert_true(
            pantograph_inverse(&c, (HapticVec2){centre.x - 0.035 + speed * t, centre.y}, &q));
        assert_true(haptic_kinematics_update(&k, pantograph_angle_to_counts(&c, q.q1, false),
                                             pantograph_angle_to_counts(&c, q.q5, true), t));
        double step = 2 * M_PI / c.counts_per_rev;
        count_move = fmax(
            count_move,
            fmax(hypot(k.jacobian[0], k.jacobian[2]), hypot(k.jacobian[1], k.jacobian[3])) * step);
        double e = hypot(k.vel.x - speed, k.vel.y);
        if (n > 150 && n < 400)
            before_gap = fmax(before_gap, e);
        if (n >= 405)
            after_gap = fmax(after_gap, e);
    }
    double alpha = 1.0 - exp(-2 * M_PI * c.velocity_cutoff_hz * dt);
    double bound = 2.0 * alpha * count_move / dt; /* both joints one count off at once */
    print_message(
        "velocity error: %.4f m/s before, %.4f after a 5 ms gap (bound %.4f) at %.2f m/s\n",
        before_gap, after_gap, bound, speed);
    assert_true(before_gap < bound);
    assert_true(after_gap < bound);
}

/* With the observer, the update takes the mass matrix's J at the last posture from the last
 * update instead of computing it again: that J must be exactly J at the joints (bit for bit),
 * and none before the first update. */
static void test_the_kept_jacobian_is_the_joints(void **state) {
    PantographConfig c = cfg();
    HapticKinematics k;
    haptic_kinematics_init(&k, &c);
    k.subcount = true;
    k.observer = (HapticObserver){.rotor_inertia = 7.4e-4, .handle_mass = 0.0765, .theta = 0.9};
    assert_false(k.jacobian_current);
    HapticVec2 centre = pantograph_workspace_centre(&c);
    int checked = 0;
    for (int n = 0; n <= 300; n++) {
        PantographJoints q;
        assert_true(pantograph_inverse(&c, (HapticVec2){centre.x + 1e-4 * n, centre.y}, &q));
        assert_true(haptic_kinematics_update(&k, pantograph_angle_to_counts(&c, q.q1, false),
                                             pantograph_angle_to_counts(&c, q.q5, true), 1e-3 * n));
        double j[4];
        assert_true(pantograph_jacobian(&c, &k.joints, j));
        assert_true(k.jacobian_current);
        assert_memory_equal(j, k.jacobian, sizeof j);
        checked++;
    }
    assert_int_equal(checked, 301);
}

static void test_dac_mapping(void **state) {
    PantographConfig c = cfg();
    bool sat;
    assert_int_equal(pantograph_torque_to_dac(&c, 0.0, &sat), 2048);
    assert_false(sat);
    assert_int_equal(pantograph_torque_to_dac(&c, c.max_joint_torque, &sat), 4095);
    assert_int_equal(pantograph_torque_to_dac(&c, -c.max_joint_torque, &sat), 1);
    assert_false(sat);
    assert_int_equal(pantograph_torque_to_dac(&c, 3 * c.max_joint_torque, &sat), 4095);
    assert_true(sat);
    assert_int_equal(pantograph_torque_to_dac(&c, NAN, &sat), 2048);
    for (double tau = -0.5; tau <= 0.5; tau += 0.01)
        assert_near(pantograph_dac_to_torque(&c, pantograph_torque_to_dac(&c, tau, NULL)), tau,
                    0.5 * c.max_joint_torque / 2047 + 1e-12);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_cover_the_p2_workspace),
        cmocka_unit_test(test_chain_jacobians_match_finite_differences),
        cmocka_unit_test(test_closed_chain_jacobian_and_rates),
        cmocka_unit_test(test_round_trips_over_the_workspace),
        cmocka_unit_test(test_encoder_resolution),
        cmocka_unit_test(test_limits_fade_the_force),
        cmocka_unit_test(test_velocity_filter),
        cmocka_unit_test(test_the_kept_jacobian_is_the_joints),
        cmocka_unit_test(test_dac_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
