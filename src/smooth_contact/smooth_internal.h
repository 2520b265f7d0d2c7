/* Private to src/smooth_contact: the contact frames of one side and the kinematics of a state. */
#ifndef ISSIM_SMOOTH_INTERNAL_H
#define ISSIM_SMOOTH_INTERNAL_H

#include "issim/smooth_contact.h"

/* One surface at its contact parameter: position derivatives, the contact frame (002 eq. 4.5:
 * x along c_s, z the normal, y = z x x) and the frame's angular velocity per unit parameter
 * rate, in the contact frame's own coordinates (App. A: R^T dR/da = [omega_a]), with their
 * parameter derivatives (for H's time derivative, eq. 4.18, A.11). Index a: 0 = s, 1 = t. */
typedef struct ContactSide {
    Vec3 p, p_a[2], p_ab[3]; /* x, x_s, x_t; x_ss, x_st, x_tt */
    Vec3 axis[3];            /* X, Y, Z in the body frame */
    Vec3 omega_a[2];         /* frame rate per unit s, t */
    Vec3 omega_ab[2][2];     /* d(omega_a)/d(b) */
} ContactSide;

IssimStatus contact_side_evaluate(const SmoothSurface *surface, int patch, int piece, double s,
                                  double t, ContactSide *out, IssimError *err);

/* Everything the dynamics and the motion read at one state (body coordinates of a unless said):
 * a's relative spatial velocity is (gw q_dot, gv q_dot) and its time derivative
 * (gw q_ddot + bw, gv q_ddot + bv). */
typedef struct SmoothKinematics {
    ContactSide side[2];
    double cos_psi, sin_psi;
    Vec3 a_omega[SMOOTH_COORDINATES]; /* contact-frame angular velocity per unit rate (A_omega) */
    Vec3 a_slip[SMOOTH_COORDINATES];  /* contact-frame slip velocity per unit rate (A_w) */
    Vec3 b_omega, b_slip;             /* their time derivatives at q_ddot = 0 */
    Vec3 gw[SMOOTH_COORDINATES], gv[SMOOTH_COORDINATES];
    Vec3 bw, bv;
    Vec3 omega_c, slip_c; /* relative angular velocity and slip, contact frame of a */
    Vec3 omega, vel;      /* relative angular velocity and centre-of-mass velocity, body */
    Mat3 rotation;        /* a's attitude in b's frame: R2 Rpsi R1^T */
} SmoothKinematics;

IssimStatus smooth_kinematics(const SmoothContactSystem *sys, const SmoothContactState *st,
                              SmoothKinematics *k, IssimError *err);

/* Contact-frame vector v of side k (k.side[i].axis) in body coordinates. */
static inline Vec3 side_to_body(const ContactSide *side, Vec3 v) {
    return vec3_add(vec3_add(vec3_scale(side->axis[0], v.x), vec3_scale(side->axis[1], v.y)),
                    vec3_scale(side->axis[2], v.z));
}
static inline Vec3 side_from_body(const ContactSide *side, Vec3 v) {
    return vec3(vec3_dot(side->axis[0], v), vec3_dot(side->axis[1], v), vec3_dot(side->axis[2], v));
}

/* Gaussian elimination with partial pivoting on a dense n x n row-major system (n <= 12); false
 * when singular. a and b are overwritten; b holds the solution. */
bool smooth_solve(int n, double *a, double *b);

/* q_dot minimising |H q_dot - phi| in the kinetic-energy metric diag(I, m) subject to the rows
 * `constraint` (count rows of SMOOTH_COORDINATES) being zero. */
bool smooth_project_rates(const SmoothContactSystem *sys, const SmoothKinematics *k, Vec3 omega,
                          Vec3 vel, const double (*constraint)[SMOOTH_COORDINATES], int count,
                          double rate[SMOOTH_COORDINATES]);

#endif
