/* Constrained dynamics and friction of Kry's contact evolution, seed 002 4.3-4.4.
 *
 * Body a (free) on body b (fixed). Newton-Euler in a's body frame (eq. 4.15, our spatial form):
 *     I omega_dot + omega x I omega = tau_ext + tau_c
 *     m (v_dot + omega x v)        = f_ext + f_c
 * with (omega, v) = H q_dot and its derivative H q_ddot + H_dot q_dot (eq. 4.16-4.18,
 * kinematics.c). The contact wrench acts at the contact point; in a's contact frame its force is
 * (f_x, f_y, -f_n) and its torque (r_x, r_y, r_z). Frictionless, f_x = f_y = r = 0 and the six
 * equations give the five q_ddot and f_n: the block elimination of eq. 4.19-4.23 solved as one
 * 6 x 6 system (a factorisation, as 002 4.3 says, not an inverse). Sliding (4.4.1, eq. 4.24-4.30):
 * the friction parts are f_n times directions fixed by the state, -mu slip/|slip| for the force,
 * -mu_r rho/|rho| for rolling and -mu_s sgn(omega_z) for spinning, so f_n stays the one unknown of
 * the wrench (eq. 4.31-4.34: F replaces H^T). No-slip (4.4.2) and no-spin (4.4.3) add the
 * tangential force (2 unknowns) and the spin torque (1) as unknowns, and the derivatives of
 * slip_c = 0 and omega_c.z = 0 as rows: the same motions as 4.36-4.44's reduced coordinates,
 * with the constraint force in hand for the switching test of 4.4.4. */
#include "smooth_internal.h"

#include <math.h>
#include <string.h>

bool smooth_solve(int n, double *a, double *b) {
    for (int col = 0; col < n; col++) {
        int pivot = col;
        for (int r = col + 1; r < n; r++)
            if (fabs(a[r * n + col]) > fabs(a[pivot * n + col]))
                pivot = r;
        if (!(fabs(a[pivot * n + col]) > 1e-300))
            return false;
        if (pivot != col) {
            for (int c = 0; c < n; c++) {
                double tmp = a[col * n + c];
                a[col * n + c] = a[pivot * n + c];
                a[pivot * n + c] = tmp;
            }
            double tmp = b[col];
            b[col] = b[pivot];
            b[pivot] = tmp;
        }
        for (int r = col + 1; r < n; r++) {
            double f = a[r * n + col] / a[col * n + col];
            if (f == 0.0)
                continue;
            for (int c = col; c < n; c++)
                a[r * n + c] -= f * a[col * n + c];
            b[r] -= f * b[col];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        double sum = b[r];
        for (int c = r + 1; c < n; c++)
            sum -= a[r * n + c] * b[c];
        b[r] = sum / a[r * n + r];
    }
    return true;
}

/* v / max(|v|, tolerance): the unit direction above the tolerance, scaled down linearly below
 * it (the regularised sign of a Coulomb law). */
static double soft_sign(double v, double tolerance) {
    double m = fabs(v) > tolerance ? fabs(v) : tolerance;
    return m > 0.0 ? v / m : 0.0;
}

static Vec3 soft_direction2(Vec3 v, double tolerance) {
    double n = hypot(v.x, v.y), m = n > tolerance ? n : tolerance;
    return m > 0.0 ? vec3(v.x / m, v.y / m, 0.0) : vec3(0, 0, 0);
}

enum { MAX_UNKNOWNS = SMOOTH_COORDINATES + 4 };

/* Writes column `col` of the Newton-Euler rows for a contact-frame force f and torque r acting
 * at the contact point (they enter with a minus sign: the rows read M a - wrench = rhs). */
static void wrench_column(const SmoothKinematics *k, Vec3 f, Vec3 r, double *a, int n, int col) {
    Vec3 force = side_to_body(&k->side[0], f);
    Vec3 torque = vec3_add(vec3_cross(k->side[0].p, force), side_to_body(&k->side[0], r));
    double v[6] = {torque.x, torque.y, torque.z, force.x, force.y, force.z};
    for (int i = 0; i < 6; i++)
        a[i * n + col] = -v[i];
}

IssimStatus smooth_contact_dynamics(const SmoothContactSystem *sys, const SmoothContactState *st,
                                    Vec3 force, Vec3 torque, SmoothContactDynamics *out,
                                    IssimError *err) {
    SmoothKinematics k;
    IssimStatus status = smooth_kinematics(sys, st, &k, err);
    if (status != ISSIM_OK)
        return status;
    const SmoothFriction *fr = &sys->friction;
    bool no_slip = st->mode != SMOOTH_SLIDING, no_spin = st->mode == SMOOTH_NO_SLIP_NO_SPIN;
    int n = SMOOTH_COORDINATES + 1 + (no_slip ? 2 : 0) + (no_spin ? 1 : 0);
    double a[MAX_UNKNOWNS * MAX_UNKNOWNS] = {0}, x[MAX_UNKNOWNS] = {0};

    Mat3 rb = quat_to_mat3(sys->orient_b), ra = mat3_mul(rb, k.rotation);
    Vec3 f_ext = mat3_mul_vec(mat3_transpose(ra), force);
    Vec3 t_ext = mat3_mul_vec(mat3_transpose(ra), torque);
    Vec3 iw = vec3_hadamard(sys->inertia, k.omega);
    Vec3 rhs_t =
        vec3_sub(vec3_sub(t_ext, vec3_cross(k.omega, iw)), vec3_hadamard(sys->inertia, k.bw));
    Vec3 rhs_f = vec3_sub(f_ext, vec3_scale(vec3_add(vec3_cross(k.omega, k.vel), k.bv), sys->mass));
    double rhs[6] = {rhs_t.x, rhs_t.y, rhs_t.z, rhs_f.x, rhs_f.y, rhs_f.z};
    for (int j = 0; j < SMOOTH_COORDINATES; j++) {
        Vec3 tw = vec3_hadamard(sys->inertia, k.gw[j]), fv = vec3_scale(k.gv[j], sys->mass);
        double col[6] = {tw.x, tw.y, tw.z, fv.x, fv.y, fv.z};
        for (int i = 0; i < 6; i++)
            a[i * n + j] = col[i];
    }
    memcpy(x, rhs, sizeof rhs);

    /* the normal force's column, with the friction that scales with it */
    Vec3 slip_dir = soft_direction2(k.slip_c, fr->slip_tolerance);
    Vec3 roll_dir = soft_direction2(k.omega_c, fr->spin_tolerance);
    double spin_sign = soft_sign(k.omega_c.z, fr->spin_tolerance);
    Vec3 fn_force = vec3(0, 0, -1), fn_torque = vec3_scale(roll_dir, -fr->rolling);
    if (!no_slip)
        fn_force = vec3_mad(fn_force, -fr->kinetic, slip_dir);
    if (!no_spin)
        fn_torque.z = -fr->spinning * spin_sign;
    int col_fn = SMOOTH_COORDINATES;
    wrench_column(&k, fn_force, fn_torque, a, n, col_fn);
    int row = 6, col = col_fn + 1;
    if (no_slip) { /* tangential force unknowns, d(slip_c)/dt = 0 rows */
        wrench_column(&k, vec3(1, 0, 0), vec3(0, 0, 0), a, n, col);
        wrench_column(&k, vec3(0, 1, 0), vec3(0, 0, 0), a, n, col + 1);
        for (int j = 0; j < SMOOTH_COORDINATES; j++) {
            a[row * n + j] = k.a_slip[j].x;
            a[(row + 1) * n + j] = k.a_slip[j].y;
        }
        x[row] = -k.b_slip.x;
        x[row + 1] = -k.b_slip.y;
        row += 2;
        col += 2;
    }
    if (no_spin) { /* spin torque unknown, d(omega_c.z)/dt = 0 row */
        wrench_column(&k, vec3(0, 0, 0), vec3(0, 0, 1), a, n, col);
        for (int j = 0; j < SMOOTH_COORDINATES; j++)
            a[row * n + j] = k.a_omega[j].z;
        x[row] = -k.b_omega.z;
    }
    if (!smooth_solve(n, a, x))
        return issim_error_set(
            err, ISSIM_ERR_NUMERIC,
            "smooth contact '%s' on '%s': the contact equations are singular "
            "at (s, t, u, v) = (%g, %g, %g, %g) (conforming surfaces, 002 4.2.3)",
            smooth_surface_name(sys->surface_a), smooth_surface_name(sys->surface_b), st->q[0],
            st->q[1], st->q[2], st->q[3]);
    memcpy(out->accel, x, sizeof out->accel);
    double fn = x[col_fn];
    out->normal_force = fn;
    out->friction_force =
        no_slip ? vec3(x[col_fn + 1], x[col_fn + 2], 0) : vec3_scale(slip_dir, -fr->kinetic * fn);
    out->friction_torque = vec3_scale(fn_torque, fn);
    if (no_spin)
        out->friction_torque.z = x[n - 1];
    out->slip = k.slip_c;
    out->spin = k.omega_c;
    out->point = vec3_add(sys->pos_b, mat3_mul_vec(rb, k.side[1].p));
    Vec3 contact_force = vec3_add(out->friction_force, vec3(0, 0, -fn)); /* a's contact frame */
    out->force = mat3_mul_vec(ra, side_to_body(&k.side[0], contact_force));
    out->normal = mat3_mul_vec(rb, k.side[1].axis[2]);
    return ISSIM_OK;
}

bool smooth_project_rates(const SmoothContactSystem *sys, const SmoothKinematics *k, Vec3 omega,
                          Vec3 vel, const double (*constraint)[SMOOTH_COORDINATES], int count,
                          double rate[SMOOTH_COORDINATES]) {
    /* KKT of min (H r - phi)^T M (H r - phi) s.t. C r = 0: [H^T M H, C^T; C, 0] */
    enum { N = SMOOTH_COORDINATES };
    int n = N + count;
    double a[(N + 3) * (N + 3)] = {0}, b[N + 3] = {0};
    for (int i = 0; i < N; i++) {
        Vec3 mi_w = vec3_hadamard(sys->inertia, k->gw[i]);
        Vec3 mi_v = vec3_scale(k->gv[i], sys->mass);
        for (int j = 0; j < N; j++)
            a[i * n + j] = vec3_dot(mi_w, k->gw[j]) + vec3_dot(mi_v, k->gv[j]);
        b[i] = vec3_dot(mi_w, omega) + vec3_dot(mi_v, vel);
        for (int c = 0; c < count; c++) {
            a[i * n + N + c] = constraint[c][i];
            a[(N + c) * n + i] = constraint[c][i];
        }
    }
    if (!smooth_solve(n, a, b))
        return false;
    memcpy(rate, b, sizeof(double) * N);
    return true;
}

/* The attitude change an entry may make (about 1 degree). */
static const double ENTRY_ANGLE_TOLERANCE = 0.02;

IssimStatus smooth_contact_enter(const SmoothContactSystem *sys, const SmoothBodyMotion *a,
                                 Vec3 point, double tolerance, SmoothContactState *out,
                                 IssimError *err) {
    memset(out, 0, sizeof *out);
    Vec3 in_a = quat_rotate_inv(a->orient, vec3_sub(point, a->pos));
    Vec3 in_b = quat_rotate_inv(sys->orient_b, vec3_sub(point, sys->pos_b));
    double dist_a, dist_b;
    IssimStatus status = smooth_surface_closest(sys->surface_a, in_a, &out->patch_a, &out->q[0],
                                                &out->q[1], &dist_a, err);
    if (status == ISSIM_OK)
        status = smooth_surface_closest(sys->surface_b, in_b, &out->patch_b, &out->q[2], &out->q[3],
                                        &dist_b, err);
    if (status != ISSIM_OK)
        return status;
    if (dist_a > tolerance || dist_b > tolerance) {
        bool off_a = dist_a > tolerance;
        return issim_error_set(
            err, ISSIM_ERR_RANGE,
            "smooth contact: the contact point is %.3g m from surface '%s' (more than %.3g m; its "
            "nearest point: patch %d at (%.4g, %.4g)): a contact started off the surfaces",
            off_a ? dist_a : dist_b, smooth_surface_name(off_a ? sys->surface_a : sys->surface_b),
            tolerance, off_a ? out->patch_a : out->patch_b, off_a ? out->q[0] : out->q[2],
            off_a ? out->q[1] : out->q[3]);
    }
    ContactSide s1, s2;
    status = contact_side_evaluate(sys->surface_a, out->patch_a, 0, out->q[0], out->q[1], &s1, err);
    if (status == ISSIM_OK)
        status =
            contact_side_evaluate(sys->surface_b, out->patch_b, 0, out->q[2], out->q[3], &s2, err);
    if (status != ISSIM_OK)
        return status;
    /* a's contact frame seen in b's: Rpsi's first row is (cos psi, -sin psi, 0) */
    Vec3 x1 = quat_rotate_inv(sys->orient_b, quat_rotate(a->orient, s1.axis[0]));
    out->q[4] = atan2(-vec3_dot(s2.axis[1], x1), vec3_dot(s2.axis[0], x1));
    out->mode = SMOOTH_SLIDING;
    SmoothKinematics k;
    status = smooth_kinematics(sys, out, &k, err);
    if (status != ISSIM_OK)
        return status;
    /* The configuration the coordinates give must be the body's (to the tolerance): a contact
     * point clamped to a surface's edge, or far from where the bodies touch, would move it. */
    SmoothBodyMotion at;
    status = smooth_contact_motion(sys, out, &at, err);
    if (status != ISSIM_OK)
        return status;
    Quat turn = quat_mul(at.orient, quat_conj(a->orient));
    double angle = 2.0 * asin(fmin(1.0, sqrt(turn.x * turn.x + turn.y * turn.y + turn.z * turn.z)));
    double moved = vec3_norm(vec3_sub(at.pos, a->pos));
    if (moved > tolerance || angle > ENTRY_ANGLE_TOLERANCE)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "smooth contact '%s' on '%s': the contact coordinates would move "
                               "the body by %.3g m and %.3g rad (more than %.3g m, %.3g rad): the "
                               "bodies do not touch at one point of both surfaces",
                               smooth_surface_name(sys->surface_a),
                               smooth_surface_name(sys->surface_b), moved, angle, tolerance,
                               ENTRY_ANGLE_TOLERANCE);
    Mat3 ra_t = mat3_transpose(mat3_mul(quat_to_mat3(sys->orient_b), k.rotation));
    if (!smooth_project_rates(sys, &k, mat3_mul_vec(ra_t, a->angvel), mat3_mul_vec(ra_t, a->vel),
                              NULL, 0, out->rate))
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "smooth contact '%s' on '%s': conforming surfaces at the contact "
                               "(H^T M H singular, 002 4.2.3)",
                               smooth_surface_name(sys->surface_a),
                               smooth_surface_name(sys->surface_b));
    smooth_contact_locate_pieces(sys, out);
    return ISSIM_OK;
}

void smooth_contact_locate_pieces(const SmoothContactSystem *sys, SmoothContactState *st) {
    st->piece_a = smooth_surface_piece(sys->surface_a, st->patch_a, st->q[0], st->q[1], st->rate[0],
                                       st->rate[1]);
    st->piece_b = smooth_surface_piece(sys->surface_b, st->patch_b, st->q[2], st->q[3], st->rate[2],
                                       st->rate[3]);
}

/* The velocity constraints of a friction mode: the slip rows (no-slip), then the spin row. */
static int mode_constraints(const SmoothKinematics *k, SmoothFrictionMode mode,
                            double rows[3][SMOOTH_COORDINATES]) {
    int count = 0;
    if (mode != SMOOTH_SLIDING) {
        for (int j = 0; j < SMOOTH_COORDINATES; j++) {
            rows[0][j] = k->a_slip[j].x;
            rows[1][j] = k->a_slip[j].y;
        }
        count = 2;
    }
    if (mode == SMOOTH_NO_SLIP_NO_SPIN) {
        for (int j = 0; j < SMOOTH_COORDINATES; j++)
            rows[count][j] = k->a_omega[j].z;
        count++;
    }
    return count;
}

bool smooth_contact_switch_friction(const SmoothContactSystem *sys, SmoothContactState *st,
                                    const SmoothContactDynamics *now) {
    const SmoothFriction *fr = &sys->friction;
    SmoothFrictionMode mode = st->mode;
    double fn = now->normal_force;
    double ft = hypot(now->friction_force.x, now->friction_force.y);
    double slip = hypot(now->slip.x, now->slip.y);
    if (mode != SMOOTH_SLIDING && (fn <= 0.0 || ft > fr->static_slip * fn))
        mode = SMOOTH_SLIDING; /* 4.45 violated */
    else if (mode == SMOOTH_NO_SLIP_NO_SPIN && fabs(now->friction_torque.z) > fr->static_spin * fn)
        mode = SMOOTH_NO_SLIP; /* 4.46 violated */
    else if (mode == SMOOTH_SLIDING && fr->static_slip > 0.0 && slip < fr->slip_tolerance)
        mode = SMOOTH_NO_SLIP;
    if (mode == SMOOTH_NO_SLIP && fr->static_spin > 0.0 && st->mode != SMOOTH_NO_SLIP_NO_SPIN &&
        fabs(now->spin.z) < fr->spin_tolerance)
        mode = SMOOTH_NO_SLIP_NO_SPIN;
    bool changed = mode != st->mode;
    st->mode = mode;
    if (mode == SMOOTH_SLIDING)
        return changed;
    /* Sticking: keep the velocities on the constraint (entering it, and against drift). */
    SmoothKinematics k;
    if (smooth_kinematics(sys, st, &k, NULL) != ISSIM_OK)
        return changed;
    double rows[3][SMOOTH_COORDINATES];
    int count = mode_constraints(&k, mode, rows);
    double rate[SMOOTH_COORDINATES];
    if (smooth_project_rates(sys, &k, k.omega, k.vel, (const double(*)[SMOOTH_COORDINATES])rows,
                             count, rate)) {
        for (int j = 0; j < SMOOTH_COORDINATES; j++)
            changed |= rate[j] != st->rate[j];
        memcpy(st->rate, rate, sizeof rate);
    }
    return changed;
}

static void set_state(SmoothContactState *st, const double y[2 * SMOOTH_COORDINATES]) {
    memcpy(st->q, y, sizeof st->q);
    memcpy(st->rate, y + SMOOTH_COORDINATES, sizeof st->rate);
}

IssimStatus smooth_contact_rk4(const SmoothContactSystem *sys, SmoothContactState *st, double h,
                               Vec3 force, Vec3 torque, IssimError *err) {
    enum { N = 2 * SMOOTH_COORDINATES };
    double y0[N], y[N], k[4][N];
    memcpy(y0, st->q, sizeof st->q);
    memcpy(y0 + SMOOTH_COORDINATES, st->rate, sizeof st->rate);
    SmoothContactState trial = *st;
    static const double stage[4] = {0.0, 0.5, 0.5, 1.0};
    for (int s = 0; s < 4; s++) {
        for (int i = 0; i < N; i++)
            y[i] = s == 0 ? y0[i] : y0[i] + stage[s] * h * k[s - 1][i];
        set_state(&trial, y);
        SmoothContactDynamics d;
        IssimStatus status = smooth_contact_dynamics(sys, &trial, force, torque, &d, err);
        if (status != ISSIM_OK)
            return status;
        memcpy(k[s], trial.rate, sizeof trial.rate);
        memcpy(k[s] + SMOOTH_COORDINATES, d.accel, sizeof d.accel);
    }
    for (int i = 0; i < N; i++)
        y[i] = y0[i] + h / 6.0 * (k[0][i] + 2.0 * k[1][i] + 2.0 * k[2][i] + k[3][i]);
    set_state(st, y);
    return ISSIM_OK;
}

double smooth_contact_kinetic_energy(const SmoothContactSystem *sys, const SmoothBodyMotion *a) {
    Vec3 w = quat_rotate_inv(a->orient, a->angvel);
    return 0.5 * sys->mass * vec3_dot(a->vel, a->vel) +
           0.5 * vec3_dot(vec3_hadamard(sys->inertia, w), w);
}
