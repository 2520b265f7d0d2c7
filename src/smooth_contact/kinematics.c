/* Contact kinematics of Kry's contact evolution, seed 002 4.2 (contact coordinates, eq. 4.5-4.8)
 * and App. A (the contact matrix H, eq. A.1-A.10, and its time derivative, eq. 4.18 / A.11).
 *
 * Our derivation, equivalent to App. A's but written for the product it ends in. With R1 = [X Y
 * Z](s, t) the contact frame of body a in its body frame (eq. 4.5-4.6), R2(u, v) body b's, and
 * Rpsi = Rz(-psi) diag(1, -1, -1) the alignment of eq. 4.7, a's attitude in b's frame is
 * R = R2 Rpsi R1^T and its origin p2 - R p1 (eq. 4.9). Differentiating (App. A's route): with
 * [Omega_k] = R_k^T dR_k/dt the frame rates (A.4-A.5 per parameter), a's angular velocity
 * relative to b in its contact frame is
 *     omega_c = Rpsi Omega2 + psi_dot z - Omega1                          (A.7-A.10)
 * and the velocity of a's material point at the contact, relative to b,
 *     slip_c = Rpsi R2^T p2_dot - R1^T p1_dot                             (tangent: z = 0)
 * so no parameter rate can move the bodies along the normal (H's sixth row in the contact frame
 * is zero, 002 4.2.3). In a's body coordinates omega = R1 omega_c and the centre of mass moves at
 * R1 slip_c - omega x p1. Their time derivatives are linear in q_ddot with the same matrix, plus
 * the terms of H_dot q_dot (eq. 4.17-4.18), which need the frames' second parameter derivatives:
 * third derivatives of x and second of n, the ten derivatives of 002 5.3. */
#include "smooth_internal.h"

#include <math.h>

/* X = c_s / |c_s| and its first and second parameter derivatives; with g_a = d(c_s)/da,
 * X_a = P g_a / L (P = I - X X^T, L = |c_s|), differentiated once more. */
static void frame_x(const SurfacePoint *sp, Vec3 *x, Vec3 x_a[2], Vec3 x_ab[2][2]) {
    Vec3 cs = sp->x[SURFACE_S];
    double len = vec3_norm(cs);
    *x = vec3_scale(cs, 1.0 / len);
    Vec3 g[2] = {sp->x[SURFACE_SS], sp->x[SURFACE_ST]};
    Vec3 gg[2][2] = {{sp->x[SURFACE_SSS], sp->x[SURFACE_SST]},
                     {sp->x[SURFACE_SST], sp->x[SURFACE_STT]}};
    double len_a[2];
    for (int a = 0; a < 2; a++) {
        len_a[a] = vec3_dot(*x, g[a]);
        x_a[a] = vec3_scale(vec3_mad(g[a], -len_a[a], *x), 1.0 / len);
    }
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            Vec3 sum = gg[a][b];
            sum = vec3_mad(sum, -len_a[a], x_a[b]);
            sum = vec3_mad(sum, -(vec3_dot(x_a[b], g[a]) + vec3_dot(*x, gg[a][b])), *x);
            sum = vec3_mad(sum, -len_a[b], x_a[a]);
            x_ab[a][b] = vec3_scale(sum, 1.0 / len);
        }
}

IssimStatus contact_side_evaluate(const SmoothSurface *surface, int patch, int piece, double s,
                                  double t, ContactSide *out, IssimError *err) {
    SurfacePoint sp;
    IssimStatus status = smooth_surface_evaluate_piece(surface, patch, piece, s, t, &sp, err);
    if (status != ISSIM_OK)
        return status;
    out->p = sp.x[SURFACE_VALUE];
    out->p_a[0] = sp.x[SURFACE_S];
    out->p_a[1] = sp.x[SURFACE_T];
    out->p_ab[0] = sp.x[SURFACE_SS];
    out->p_ab[1] = sp.x[SURFACE_ST];
    out->p_ab[2] = sp.x[SURFACE_TT];
    Vec3 x, x_a[2], x_ab[2][2];
    frame_x(&sp, &x, x_a, x_ab);
    Vec3 z = sp.normal[SURFACE_VALUE];
    Vec3 z_a[2] = {sp.normal[SURFACE_S], sp.normal[SURFACE_T]};
    Vec3 z_ab[2][2] = {{sp.normal[SURFACE_SS], sp.normal[SURFACE_ST]},
                       {sp.normal[SURFACE_ST], sp.normal[SURFACE_TT]}};
    Vec3 y = vec3_cross(z, x), y_a[2];
    for (int a = 0; a < 2; a++)
        y_a[a] = vec3_add(vec3_cross(z_a[a], x), vec3_cross(z, x_a[a]));
    out->axis[0] = x;
    out->axis[1] = y;
    out->axis[2] = z;
    /* [Omega_a] = R^T dR/da: (z . y_a, x . z_a, y . x_a) */
    for (int a = 0; a < 2; a++) {
        out->omega_a[a] = vec3(vec3_dot(z, y_a[a]), vec3_dot(x, z_a[a]), vec3_dot(y, x_a[a]));
        for (int b = 0; b < 2; b++) {
            Vec3 y_ab = vec3_add(vec3_add(vec3_cross(z_ab[a][b], x), vec3_cross(z_a[a], x_a[b])),
                                 vec3_add(vec3_cross(z_a[b], x_a[a]), vec3_cross(z, x_ab[a][b])));
            out->omega_ab[a][b] = vec3(vec3_dot(z_a[b], y_a[a]) + vec3_dot(z, y_ab),
                                       vec3_dot(x_a[b], z_a[a]) + vec3_dot(x, z_ab[a][b]),
                                       vec3_dot(y_a[b], x_a[a]) + vec3_dot(y, x_ab[a][b]));
        }
    }
    return ISSIM_OK;
}

/* Rpsi v and dRpsi/dpsi v (eq. 4.7). */
static Vec3 rot_psi(double c, double s, Vec3 v) {
    return vec3(c * v.x - s * v.y, -s * v.x - c * v.y, -v.z);
}
static Vec3 rot_psi_prime(double c, double s, Vec3 v) {
    return vec3(-s * v.x - c * v.y, -c * v.x + s * v.y, 0.0);
}

/* sum_ab omega_ab[a][b] r_a r_b: the frame rate's own time derivative at fixed rates. */
static Vec3 frame_rate_derivative(const ContactSide *side, const double r[2]) {
    Vec3 sum = vec3(0, 0, 0);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            sum = vec3_mad(sum, r[a] * r[b], side->omega_ab[a][b]);
    return sum;
}

static Vec3 frame_rate(const ContactSide *side, const double r[2]) {
    return vec3_add(vec3_scale(side->omega_a[0], r[0]), vec3_scale(side->omega_a[1], r[1]));
}

static Vec3 point_rate(const ContactSide *side, const double r[2]) {
    return vec3_add(vec3_scale(side->p_a[0], r[0]), vec3_scale(side->p_a[1], r[1]));
}

static Vec3 point_accel(const ContactSide *side, const double r[2]) {
    Vec3 sum = vec3_scale(side->p_ab[0], r[0] * r[0]);
    sum = vec3_mad(sum, 2.0 * r[0] * r[1], side->p_ab[1]);
    return vec3_mad(sum, r[1] * r[1], side->p_ab[2]);
}

static Mat3 columns(const Vec3 axis[3]) {
    Mat3 m;
    for (int i = 0; i < 3; i++) {
        m.m[0][i] = axis[i].x;
        m.m[1][i] = axis[i].y;
        m.m[2][i] = axis[i].z;
    }
    return m;
}

IssimStatus smooth_kinematics(const SmoothContactSystem *sys, const SmoothContactState *st,
                              SmoothKinematics *k, IssimError *err) {
    IssimStatus status = contact_side_evaluate(sys->surface_a, st->patch_a, st->piece_a, st->q[0],
                                               st->q[1], &k->side[0], err);
    if (status == ISSIM_OK)
        status = contact_side_evaluate(sys->surface_b, st->patch_b, st->piece_b, st->q[2], st->q[3],
                                       &k->side[1], err);
    if (status != ISSIM_OK)
        return status;
    const ContactSide *s1 = &k->side[0], *s2 = &k->side[1];
    double c = cos(st->q[4]), s = sin(st->q[4]);
    k->cos_psi = c;
    k->sin_psi = s;
    const double *r1 = st->rate, *r2 = st->rate + 2, psi_dot = st->rate[4];

    for (int a = 0; a < 2; a++) {
        k->a_omega[a] = vec3_neg(s1->omega_a[a]);
        k->a_omega[2 + a] = rot_psi(c, s, s2->omega_a[a]);
        k->a_slip[a] = vec3_neg(side_from_body(s1, s1->p_a[a]));
        k->a_slip[2 + a] = rot_psi(c, s, side_from_body(s2, s2->p_a[a]));
    }
    k->a_omega[4] = vec3(0, 0, 1);
    k->a_slip[4] = vec3(0, 0, 0);

    Vec3 omega1 = frame_rate(s1, r1), omega2 = frame_rate(s2, r2);
    Vec3 e1 = side_from_body(s1, point_rate(s1, r1)), e2 = side_from_body(s2, point_rate(s2, r2));
    k->omega_c = vec3_sub(vec3_add(rot_psi(c, s, omega2), vec3(0, 0, psi_dot)), omega1);
    k->slip_c = vec3_sub(rot_psi(c, s, e2), e1);

    /* H_dot q_dot in the contact frame (eq. 4.18, A.11) */
    k->b_omega = vec3_add(vec3_scale(rot_psi_prime(c, s, omega2), psi_dot),
                          rot_psi(c, s, frame_rate_derivative(s2, r2)));
    k->b_omega = vec3_sub(k->b_omega, frame_rate_derivative(s1, r1));
    Vec3 first = vec3_add(vec3_scale(rot_psi_prime(c, s, e2), psi_dot),
                          rot_psi(c, s, vec3_neg(vec3_cross(omega2, e2))));
    first = vec3_add(first, rot_psi(c, s, side_from_body(s2, point_accel(s2, r2))));
    Vec3 second = vec3_sub(side_from_body(s1, point_accel(s1, r1)), vec3_cross(omega1, e1));
    k->b_slip = vec3_sub(first, second);

    /* body coordinates of a */
    k->omega = side_to_body(s1, k->omega_c);
    Vec3 p1_dot = point_rate(s1, r1);
    k->vel = vec3_sub(side_to_body(s1, k->slip_c), vec3_cross(k->omega, s1->p));
    for (int j = 0; j < SMOOTH_COORDINATES; j++) {
        k->gw[j] = side_to_body(s1, k->a_omega[j]);
        k->gv[j] = vec3_add(side_to_body(s1, k->a_slip[j]), vec3_cross(s1->p, k->gw[j]));
    }
    k->bw = side_to_body(s1, vec3_add(vec3_cross(omega1, k->omega_c), k->b_omega));
    k->bv = vec3_add(side_to_body(s1, vec3_add(vec3_cross(omega1, k->slip_c), k->b_slip)),
                     vec3_sub(vec3_cross(s1->p, k->bw), vec3_cross(k->omega, p1_dot)));

    Mat3 rpsi = {{{c, -s, 0}, {-s, -c, 0}, {0, 0, -1}}};
    k->rotation = mat3_mul(mat3_mul(columns(s2->axis), rpsi), mat3_transpose(columns(s1->axis)));
    return ISSIM_OK;
}

IssimStatus smooth_contact_matrix(const SmoothContactSystem *sys, const SmoothContactState *st,
                                  double h[6][SMOOTH_COORDINATES], IssimError *err) {
    SmoothKinematics k;
    IssimStatus status = smooth_kinematics(sys, st, &k, err);
    if (status != ISSIM_OK)
        return status;
    for (int j = 0; j < SMOOTH_COORDINATES; j++) {
        double col[6] = {k.gw[j].x, k.gw[j].y, k.gw[j].z, k.gv[j].x, k.gv[j].y, k.gv[j].z};
        for (int i = 0; i < 6; i++)
            h[i][j] = col[i];
    }
    return ISSIM_OK;
}

IssimStatus smooth_contact_motion(const SmoothContactSystem *sys, const SmoothContactState *st,
                                  SmoothBodyMotion *out, IssimError *err) {
    SmoothKinematics k;
    IssimStatus status = smooth_kinematics(sys, st, &k, err);
    if (status != ISSIM_OK)
        return status;
    Mat3 rb = quat_to_mat3(sys->orient_b);
    Mat3 ra = mat3_mul(rb, k.rotation);
    Vec3 origin = vec3_sub(k.side[1].p, mat3_mul_vec(k.rotation, k.side[0].p));
    out->pos = vec3_add(sys->pos_b, mat3_mul_vec(rb, origin));
    out->orient = quat_from_mat3(ra);
    out->vel = mat3_mul_vec(ra, k.vel);
    out->angvel = mat3_mul_vec(ra, k.omega);
    return ISSIM_OK;
}
