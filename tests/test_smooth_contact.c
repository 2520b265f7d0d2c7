/* Tests for issim/smooth_contact.h, Kry's contact evolution (seed 002 ch. 4): the contact matrix H
 * and its time derivative against finite differences of the body's motion (4.2.3, App. A); the
 * constraint kept to machine precision and energy conserved without friction (4.3); the
 * rattleback of 002 App. B.1 / 6.4 (V14); friction switching (4.4.4); bad input. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/smooth_contact/smooth_internal.h"
#include "issim/smooth_contact.h"
#include "issim/surface.h"

static TestRng rng = {0x5eed5eedULL};

typedef struct Pair {
    SmoothSurface *a, *b;
    SmoothContactSystem sys;
} Pair;

/* A gently curved random patch for b (so H has every term), in its own posed frame. */
static SmoothSurface *curved_floor(void) {
    BezierPatch p;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            p.control[i][j] =
                vec3(-1.5 + i + test_rng_range(&rng, -0.1, 0.1),
                     -1.5 + j + test_rng_range(&rng, -0.1, 0.1), test_rng_range(&rng, -0.2, 0.2));
    snprintf(p.name, sizeof p.name, "curved floor");
    IssimError err = {0};
    SmoothSurface *s = smooth_surface_from_bezier(&p, &err);
    assert_non_null(s);
    return s;
}

/* The rattleback of 002 App. B.1 on b (the flat floor, or `floor` when given). */
static void rattleback_pair(Pair *pair, SmoothSurface *floor) {
    BezierPatch cap, flat;
    bezier_patch_rattleback(&cap);
    bezier_patch_rattleback_floor(&flat);
    IssimError err = {0};
    pair->a = smooth_surface_from_bezier(&cap, &err);
    pair->b = floor ? floor : smooth_surface_from_bezier(&flat, &err);
    assert_non_null(pair->a);
    assert_non_null(pair->b);
    pair->sys = (SmoothContactSystem){.surface_a = pair->a,
                                      .surface_b = pair->b,
                                      .mass = 5.0,
                                      .inertia = vec3(1, 10, 10),
                                      .orient_b = quat_identity(),
                                      .friction = {.slip_tolerance = 1e-4, .spin_tolerance = 1e-4}};
}

static void pair_free(Pair *pair) {
    smooth_surface_destroy(pair->a);
    smooth_surface_destroy(pair->b);
}

static SmoothBodyMotion motion_of(const SmoothContactSystem *sys, const SmoothContactState *st) {
    SmoothBodyMotion m;
    IssimError err = {0};
    if (smooth_contact_motion(sys, st, &m, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    return m;
}

static SmoothKinematics kinematics_of(const SmoothContactSystem *sys,
                                      const SmoothContactState *st) {
    SmoothKinematics k;
    IssimError err = {0};
    if (smooth_kinematics(sys, st, &k, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    return k;
}

/* World angular velocity taking attitude r0 to r1 in time dt (small rotation). */
static Vec3 rotation_rate(Quat q0, Quat q1, double dt) {
    Quat d = quat_mul(q1, quat_conj(q0));
    if (d.w < 0)
        d = (Quat){-d.w, -d.x, -d.y, -d.z};
    return vec3_scale(vec3(d.x, d.y, d.z), 2.0 / dt);
}

static SmoothContactState random_state(void) {
    SmoothContactState st = {.patch_a = 0, .patch_b = 0, .mode = SMOOTH_SLIDING};
    st.q[0] = test_rng_range(&rng, 0.2, 0.8);
    st.q[1] = test_rng_range(&rng, 0.2, 0.8);
    st.q[2] = test_rng_range(&rng, 0.3, 0.7);
    st.q[3] = test_rng_range(&rng, 0.3, 0.7);
    st.q[4] = test_rng_range(&rng, -3.0, 3.0);
    for (int i = 0; i < SMOOTH_COORDINATES; i++)
        st.rate[i] = test_rng_range(&rng, -1.0, 1.0);
    return st;
}

static double relative_error(Vec3 got, Vec3 want) {
    double scale = fmax(vec3_norm(want), 1e-3);
    return vec3_norm(vec3_sub(got, want)) / scale;
}

/* H's columns are the body-frame spatial velocity per unit rate (002 eq. 4.14): compare with the
 * central difference of the pose along each coordinate, on a curved posed b. */
static void test_matrix_matches_pose_differences(void **state) {
    (void)state;
    Pair pair;
    rattleback_pair(&pair, curved_floor());
    pair.sys.pos_b = vec3(0.3, -0.2, 0.1);
    pair.sys.orient_b = quat_normalize((Quat){0.9, 0.2, -0.3, 0.1});
    const double eps = 1e-6;
    double worst = 0.0;
    for (int trial = 0; trial < 50; trial++) {
        SmoothContactState st = random_state();
        double h[6][SMOOTH_COORDINATES];
        IssimError err = {0};
        assert_int_equal(smooth_contact_matrix(&pair.sys, &st, h, &err), ISSIM_OK);
        SmoothBodyMotion m = motion_of(&pair.sys, &st);
        for (int j = 0; j < SMOOTH_COORDINATES; j++) {
            SmoothContactState plus = st, minus = st;
            plus.q[j] += eps;
            minus.q[j] -= eps;
            SmoothBodyMotion mp = motion_of(&pair.sys, &plus), mm = motion_of(&pair.sys, &minus);
            Vec3 w = quat_rotate_inv(m.orient, rotation_rate(mm.orient, mp.orient, 2 * eps));
            Vec3 v = quat_rotate_inv(m.orient, vec3_scale(vec3_sub(mp.pos, mm.pos), 0.5 / eps));
            worst = fmax(worst, relative_error(vec3(h[0][j], h[1][j], h[2][j]), w));
            worst = fmax(worst, relative_error(vec3(h[3][j], h[4][j], h[5][j]), v));
        }
    }
    print_message("H vs pose differences: worst relative error %.2e over 50 states\n", worst);
    assert_true(worst < 1e-7);
    pair_free(&pair);
}

/* The time derivative (eq. 4.17-4.18): along q(tau) = q + tau q_dot + tau^2/2 q_ddot the body
 * velocities change at G q_ddot + b (kinematics.c's H_dot q_dot). */
static void test_acceleration_matches_velocity_differences(void **state) {
    (void)state;
    Pair pair;
    rattleback_pair(&pair, curved_floor());
    pair.sys.orient_b = quat_normalize((Quat){0.8, -0.1, 0.4, 0.2});
    const double eps = 1e-5;
    double worst = 0.0;
    for (int trial = 0; trial < 50; trial++) {
        SmoothContactState st = random_state();
        double accel[SMOOTH_COORDINATES];
        for (int i = 0; i < SMOOTH_COORDINATES; i++)
            accel[i] = test_rng_range(&rng, -2.0, 2.0);
        SmoothKinematics k = kinematics_of(&pair.sys, &st);
        Vec3 dw = k.bw, dv = k.bv;
        for (int j = 0; j < SMOOTH_COORDINATES; j++) {
            dw = vec3_mad(dw, accel[j], k.gw[j]);
            dv = vec3_mad(dv, accel[j], k.gv[j]);
        }
        SmoothContactState at[2];
        for (int side = 0; side < 2; side++) {
            double tau = side ? eps : -eps;
            at[side] = st;
            for (int i = 0; i < SMOOTH_COORDINATES; i++) {
                at[side].q[i] += tau * st.rate[i] + 0.5 * tau * tau * accel[i];
                at[side].rate[i] += tau * accel[i];
            }
        }
        SmoothKinematics kp = kinematics_of(&pair.sys, &at[1]),
                         km = kinematics_of(&pair.sys, &at[0]);
        Vec3 fw = vec3_scale(vec3_sub(kp.omega, km.omega), 0.5 / eps);
        Vec3 fv = vec3_scale(vec3_sub(kp.vel, km.vel), 0.5 / eps);
        worst = fmax(worst, fmax(relative_error(dw, fw), relative_error(dv, fv)));
    }
    print_message("H q_ddot + H_dot q_dot vs velocity differences: worst %.2e\n", worst);
    assert_true(worst < 1e-6);
    pair_free(&pair);
}

/* ===== The rattleback (002 App. B.1, 6.4; V14) ===== */

static const double GRAVITY = 9.81;

typedef struct RattlebackRun {
    double spin_min, spin_max; /* world angular velocity z seen */
    double reversal_time[4];   /* times the world spin changed sign after settling */
    int reversals;
    double energy_start, energy_max, energy_end;
    double constraint_gap; /* worst distance between the two contact points */
    double normal_min;     /* least normal force */
} RattlebackRun;

static double total_energy(const SmoothContactSystem *sys, const SmoothContactState *st) {
    SmoothBodyMotion m = motion_of(sys, st);
    return smooth_contact_kinetic_energy(sys, &m) + sys->mass * GRAVITY * m.pos.z;
}

/* Spin start of App. B.1: q = (0.45, 0.45, 0.5, 0.5, 0), psi_dot = -1; RK4 at dt for `seconds`,
 * friction switching at each step as the engine does. */
static RattlebackRun run_rattleback(SmoothContactSystem *sys, double dt, double seconds) {
    SmoothContactState st = {.q = {0.45, 0.45, 0.5, 0.5, 0.0}, .rate = {0, 0, 0, 0, -1.0}};
    RattlebackRun run = {.spin_min = 1e9, .spin_max = -1e9, .normal_min = 1e9};
    Vec3 gravity = vec3(0, 0, -sys->mass * GRAVITY);
    run.energy_start = run.energy_max = total_energy(sys, &st);
    double last_sign = 0.0;
    long steps = lround(seconds / dt);
    IssimError err = {0};
    for (long i = 0; i < steps; i++) {
        if (smooth_contact_rk4(sys, &st, dt, gravity, vec3(0, 0, 0), &err) != ISSIM_OK)
            fail_msg("%s", err.message);
        SmoothContactDynamics d;
        if (smooth_contact_dynamics(sys, &st, gravity, vec3(0, 0, 0), &d, &err) != ISSIM_OK)
            fail_msg("%s", err.message);
        smooth_contact_switch_friction(sys, &st, &d);
        run.normal_min = fmin(run.normal_min, d.normal_force);
        SmoothBodyMotion m = motion_of(sys, &st);
        SmoothKinematics k = kinematics_of(sys, &st);
        Vec3 on_a = vec3_add(m.pos, quat_rotate(m.orient, k.side[0].p));
        Vec3 on_b = vec3_add(sys->pos_b, quat_rotate(sys->orient_b, k.side[1].p));
        run.constraint_gap = fmax(run.constraint_gap, vec3_norm(vec3_sub(on_a, on_b)));
        double e = smooth_contact_kinetic_energy(sys, &m) + sys->mass * GRAVITY * m.pos.z;
        run.energy_max = fmax(run.energy_max, e);
        run.energy_end = e;
        double spin = m.angvel.z;
        run.spin_min = fmin(run.spin_min, spin);
        run.spin_max = fmax(run.spin_max, spin);
        /* a reversal: the spin reaches 0.3 rad/s the other way (rocking makes it hover around
         * zero for a while, so a bare sign change would count the wobbles) */
        double sign = fabs(spin) > 0.3 ? copysign(1.0, spin) : 0.0;
        if (sign != 0.0 && last_sign != 0.0 && sign != last_sign && run.reversals < 4)
            run.reversal_time[run.reversals++] = (i + 1) * dt;
        if (sign != 0.0)
            last_sign = sign;
    }
    return run;
}

static void print_run(const char *what, const RattlebackRun *r) {
    print_message("%s: spin %.3f .. %.3f rad/s, %d reversals (%.2f, %.2f s), energy %.6f -> "
                  "max %.6f -> %.6f J, gap %.1e m, min normal %.2f N\n",
                  what, r->spin_min, r->spin_max, r->reversals, r->reversal_time[0],
                  r->reversal_time[1], r->energy_start, r->energy_max, r->energy_end,
                  r->constraint_gap, r->normal_min);
}

static void test_rattleback_without_friction_keeps_energy_and_never_reverses(void **state) {
    (void)state;
    Pair pair;
    rattleback_pair(&pair, NULL);
    RattlebackRun r = run_rattleback(&pair.sys, 1e-3, 20.0);
    print_run("frictionless", &r);
    assert_int_equal(r.reversals, 0);
    assert_true(r.energy_max - r.energy_start < 1e-9 * fabs(r.energy_start) + 1e-9);
    assert_true(r.constraint_gap < 1e-12);
    pair_free(&pair);
}

/* V14: sliding friction 0.3 (002 6.4's coefficients: mu = 0.3, no rolling or spinning friction)
 * turns the counter-clockwise spin start clockwise, and a second reversal follows; friction only
 * takes energy. The Coulomb law is regularised below slip_tolerance (smooth_contact.h): 1 cm/s
 * keeps the viscous slope mu f_n / tol well inside RK4's stability at 1 ms. */
static void test_rattleback_with_sliding_friction_reverses_twice(void **state) {
    (void)state;
    Pair pair;
    rattleback_pair(&pair, NULL);
    pair.sys.friction.kinetic = 0.3;
    pair.sys.friction.slip_tolerance = 0.01;
    RattlebackRun r = run_rattleback(&pair.sys, 1e-3, 130.0);
    print_run("sliding friction 0.3", &r);
    assert_true(r.reversals >= 2);
    assert_true(r.spin_max > 0.9 && r.spin_min < -0.9);
    assert_true(r.energy_max <= r.energy_start + 1e-9 * r.energy_start);
    assert_true(r.energy_end < r.energy_start - 0.1);
    assert_true(r.constraint_gap < 1e-12);
    pair_free(&pair);
}

/* No-slip (002 4.4.2) with switching (4.4.4, mu_static 0.3): the classic non-holonomic
 * rattleback. Rolling without slip does no work, so the energy stays (to RK4's error) while the
 * spin still reverses. */
static void test_rattleback_rolling_without_slip_reverses_and_keeps_energy(void **state) {
    (void)state;
    Pair pair;
    rattleback_pair(&pair, NULL);
    pair.sys.friction.kinetic = 0.3;
    pair.sys.friction.static_slip = 0.3;
    pair.sys.friction.slip_tolerance = 1e-3;
    RattlebackRun r = run_rattleback(&pair.sys, 1e-3, 40.0);
    print_run("no-slip, mu_static 0.3", &r);
    assert_true(r.reversals >= 1);
    assert_true(fabs(r.energy_max - r.energy_start) < 1e-8 * r.energy_start);
    assert_true(fabs(r.energy_end - r.energy_start) < 1e-8 * r.energy_start);
    assert_true(r.constraint_gap < 1e-12);
    pair_free(&pair);
}

/* ===== Steps across the breaks of a surface at an extraordinary vertex ===== */

/* V13's mechanism, at the model: scenes/bowl_on_plane.lua's bowl (its faces at extraordinary
 * vertices evaluated exactly, Stam) released on a frictionless flat floor on one of those faces,
 * RK4 at 0.5 ms with traversal for 1 s. No horizontal force acts, so from step to step the
 * centre of mass's horizontal velocity may change only by the rounding and the integration
 * error. Returns the largest change in one step; `by_location`: every step evaluates the
 * sub-triangle each point lies in (the piece forgotten before each step), as before pieces. */
static double bowl_largest_horizontal_kick(bool by_location, int *breaks_crossed) {
    IssimError err = {0};
    SmoothSurface *bowl = smooth_surface_create(
        "bowl", NULL, 0, test_source_path("assets/loop_bowl.obj"), vec3(0.05, 0.05, 0.05),
        vec3(0, 0, 0.025), 2, SURFACE_EXTRAORDINARY_EXACT, &err);
    BezierPatch flat;
    bezier_patch_rattleback_floor(&flat);
    SmoothSurface *floor = smooth_surface_from_bezier(&flat, &err);
    if (!bowl || !floor)
        fail_msg("%s", err.message);
    SmoothContactSystem sys = {.surface_a = bowl,
                               .surface_b = floor,
                               .mass = 0.2,
                               .inertia = vec3(9.2e-5, 9.2e-5, 1.07e-4),
                               .orient_b = quat_identity()};
    SmoothContactState st = {.patch_a = 213, .q = {0.25, 0.25, 0.5, 0.5, 0}};
    smooth_contact_locate_pieces(&sys, &st);
    Vec3 weight = vec3(0, 0, -GRAVITY * sys.mass), previous = motion_of(&sys, &st).vel;
    double largest = 0.0;
    *breaks_crossed = 0;
    for (int step = 0; step < 2000; step++) {
        if (by_location)
            st.piece_a = 0;
        SmoothContactState before = st;
        int crossed = 0;
        assert_int_equal(smooth_contact_rk4(&sys, &st, 5e-4, weight, vec3(0, 0, 0), &err),
                         ISSIM_OK);
        assert_int_equal(smooth_contact_traverse(&sys, &before, &st, 5e-4, weight, vec3(0, 0, 0),
                                                 &crossed, &err),
                         ISSIM_OK);
        double line[3], beta;
        if (crossed == 0 && st.patch_a == before.patch_a &&
            smooth_surface_first_break(bowl, st.patch_a, before.q, st.q, line, &beta))
            (*breaks_crossed)++;
        Vec3 vel = motion_of(&sys, &st).vel;
        largest = fmax(largest, hypot(vel.x - previous.x, vel.y - previous.y));
        previous = vel;
    }
    smooth_surface_destroy(bowl);
    smooth_surface_destroy(floor);
    return largest;
}

/* A step that crosses a break is cut there (smooth_contact_traverse) and each part keeps one
 * piece: the horizontal velocity never jumps. Evaluating by location instead, the last RK4 stage
 * of the part before the break lands past it about half the time (the crossing is found to
 * 1e-14) and takes the next sub-triangle's q'' (which jumps with the third derivatives), a
 * velocity error of the part's length / 6 times that jump: kicks of 1e-5 m/s. */
static void test_bowl_keeps_momentum_across_sub_triangle_breaks(void **state) {
    (void)state;
    int breaks = 0, breaks_by_location = 0;
    double kick = bowl_largest_horizontal_kick(false, &breaks);
    double kick_by_location = bowl_largest_horizontal_kick(true, &breaks_by_location);
    print_message("bowl on an EV face, 1 s: %d steps across sub-triangle breaks (not counting "
                  "those that also cross a patch edge); largest "
                  "horizontal velocity change in a step %.2e m/s keeping pieces, %.2e m/s "
                  "evaluating by location\n",
                  breaks, kick, kick_by_location);
    assert_true(breaks >= 3);
    assert_true(kick < 1e-8); /* RK4's own error in the horizontal velocity (measured 8e-10) */
    assert_true(kick_by_location > 1e-6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix_matches_pose_differences),
        cmocka_unit_test(test_acceleration_matches_velocity_differences),
        cmocka_unit_test(test_rattleback_without_friction_keeps_energy_and_never_reverses),
        cmocka_unit_test(test_rattleback_with_sliding_friction_reverses_twice),
        cmocka_unit_test(test_rattleback_rolling_without_slip_reverses_and_keeps_energy),
        cmocka_unit_test(test_bowl_keeps_momentum_across_sub_triangle_breaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
