/* issim math: 3-vectors, quaternions (w, x, y, z), 3x3 matrices, spatial helpers, and dense
 * linear algebra through LAPACKE.
 *
 * Threading: pure functions, callable from any thread. The inline helpers never allocate.
 * Conventions: right-handed frames; a quaternion q maps body to world (v_w = q v_b q*);
 * Mat3 is row-major, m[row][col].
 */
#ifndef ISSIM_MATH_H
#define ISSIM_MATH_H

#include <math.h>
#include <stdbool.h>

typedef struct Vec3 {
    double x, y, z;
} Vec3;

typedef struct Quat {
    double w, x, y, z;
} Quat;

typedef struct Mat3 {
    double m[3][3];
} Mat3;

/* ===== Vec3 ===== */

static inline Vec3 vec3(double x, double y, double z) {
    return (Vec3){x, y, z};
}
static inline Vec3 vec3_add(Vec3 a, Vec3 b) {
    return (Vec3){a.x + b.x, a.y + b.y, a.z + b.z};
}
static inline Vec3 vec3_sub(Vec3 a, Vec3 b) {
    return (Vec3){a.x - b.x, a.y - b.y, a.z - b.z};
}
static inline Vec3 vec3_scale(Vec3 a, double s) {
    return (Vec3){a.x * s, a.y * s, a.z * s};
}
static inline Vec3 vec3_neg(Vec3 a) {
    return (Vec3){-a.x, -a.y, -a.z};
}
/* a + s b */
static inline Vec3 vec3_mad(Vec3 a, double s, Vec3 b) {
    return (Vec3){a.x + s * b.x, a.y + s * b.y, a.z + s * b.z};
}
static inline double vec3_dot(Vec3 a, Vec3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline Vec3 vec3_cross(Vec3 a, Vec3 b) {
    return (Vec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static inline double vec3_norm(Vec3 a) {
    return sqrt(vec3_dot(a, a));
}
/* Returns a unit vector, or the zero vector when |a| is zero. */
static inline Vec3 vec3_normalize(Vec3 a) {
    double n = vec3_norm(a);
    return n > 0.0 ? vec3_scale(a, 1.0 / n) : (Vec3){0, 0, 0};
}
static inline Vec3 vec3_hadamard(Vec3 a, Vec3 b) {
    return (Vec3){a.x * b.x, a.y * b.y, a.z * b.z};
}

/* Builds an orthonormal tangent basis (t1, t2) for unit normal n, so that (t1, t2, n) is
 * right-handed. Continuous except near n = -z. */
void vec3_tangent_basis(Vec3 n, Vec3 *t1, Vec3 *t2);

/* ===== Quat ===== */

static inline Quat quat_identity(void) {
    return (Quat){1, 0, 0, 0};
}
static inline Quat quat_mul(Quat a, Quat b) {
    return (Quat){a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                  a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                  a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                  a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
static inline Quat quat_conj(Quat q) {
    return (Quat){q.w, -q.x, -q.y, -q.z};
}
static inline double quat_norm(Quat q) {
    return sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
}
/* Returns q / |q|, or the identity when |q| is zero. Inline with the rotations below: the
 * contact kinematics call them for every contact end of every right-hand side. */
static inline Quat quat_normalize(Quat q) {
    double n = quat_norm(q);
    if (!(n > 0.0) || !isfinite(n))
        return quat_identity();
    double s = 1.0 / n;
    return (Quat){q.w * s, q.x * s, q.y * s, q.z * s};
}
/* Rotation of angle (rad) about axis (need not be unit; zero axis gives identity). */
Quat quat_from_axis_angle(Vec3 axis, double angle);
/* v_world = q v q*, in the expanded form v' = v + w t + u x t with u = (x, y, z), t = 2 u x v
 * (Rodrigues): 15 multiplies instead of the 32 of two quaternion products, and equal to
 * quat_to_mat3's rotation to rounding. */
static inline Vec3 quat_rotate(Quat q, Vec3 v) {
    Vec3 u = {q.x, q.y, q.z};
    Vec3 t = vec3_scale(vec3_cross(u, v), 2.0);
    return vec3_add(vec3_mad(v, q.w, t), vec3_cross(u, t));
}
/* v_body = q* v q */
static inline Vec3 quat_rotate_inv(Quat q, Vec3 v) {
    return quat_rotate(quat_conj(q), v);
}
Mat3 quat_to_mat3(Quat q);
/* The unit quaternion (w >= 0) of a rotation matrix (orthonormal, det +1). */
Quat quat_from_mat3(Mat3 r);
/* dq/dt for world-frame angular velocity w: 0.5 (0, w) q. */
Quat quat_derivative(Quat q, Vec3 w_world);
/* Rotation angle about the world y axis of a planar attitude (rotation about y only). */
double quat_planar_angle_y(Quat q);

/* ===== Mat3 ===== */

Mat3 mat3_identity(void);
Mat3 mat3_diag(Vec3 d);
Mat3 mat3_mul(Mat3 a, Mat3 b);
Vec3 mat3_mul_vec(Mat3 a, Vec3 v);
Mat3 mat3_transpose(Mat3 a);
double mat3_det(Mat3 a);
/* Returns false (and leaves *out untouched) when |det| is below 1e-300. */
bool mat3_inverse(Mat3 a, Mat3 *out);
/* [v]x such that skew(v) w = v x w */
Mat3 mat3_skew(Vec3 v);
/* R diag(I) R^T: a body inertia (principal moments) expressed in the world frame. */
Mat3 mat3_world_inertia(Quat q, Vec3 principal);

/* ===== Spatial helpers ===== */

/* Velocity of a body point at world offset r from the centre of mass. */
static inline Vec3 spatial_point_velocity(Vec3 v, Vec3 w, Vec3 r) {
    return vec3_add(v, vec3_cross(w, r));
}
/* Effective mass along unit direction n of a point at offset r on a body of mass m and
 * world inverse inertia Iinv: 1 / (1/m + (r x n) . Iinv (r x n)). */
double spatial_effective_mass(double mass, Mat3 inv_inertia_world, Vec3 r, Vec3 n);

/* ===== Dense linear algebra (LAPACKE; column-major, caller-owned arrays) ===== */

/* Solves A X = B for general square A (n x n, lda = n), B (n x nrhs). A is overwritten by
 * its LU factors, B by X. ipiv needs n ints. Returns 0, or the LAPACK info code (> 0:
 * singular). Thread: any (call linalg_init once first, from any thread). */
int linalg_solve(int n, int nrhs, double *a, int *ipiv, double *b);
/* Solves A X = B for symmetric positive definite A (Cholesky). Returns LAPACK info. */
int linalg_solve_spd(int n, int nrhs, double *a, double *b);
/* Eigenvalues (ascending) of symmetric A; vectors in A's columns when want_vectors. */
int linalg_symmetric_eigen(int n, double *a, double *eigenvalues, bool want_vectors);
/* Pins OpenBLAS to one thread so it never competes with the servo and engine threads
 * (PLATFORM.md). Idempotent. */
void linalg_init(void);

#endif
