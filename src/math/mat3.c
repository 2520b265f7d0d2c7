/* 3x3 matrices (row-major, m[row][col]) and the spatial effective-mass helper. */
#include "issim/math.h"

Mat3 mat3_identity(void) {
    return (Mat3){{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
}

Mat3 mat3_diag(Vec3 d) {
    return (Mat3){{{d.x, 0, 0}, {0, d.y, 0}, {0, 0, d.z}}};
}

Mat3 mat3_mul(Mat3 a, Mat3 b) {
    Mat3 c;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            c.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return c;
}

Vec3 mat3_mul_vec(Mat3 a, Vec3 v) {
    return (Vec3){a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
                  a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
                  a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z};
}

Mat3 mat3_transpose(Mat3 a) {
    Mat3 t;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t.m[i][j] = a.m[j][i];
    return t;
}

double mat3_det(Mat3 a) {
    return a.m[0][0] * (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) -
           a.m[0][1] * (a.m[1][0] * a.m[2][2] - a.m[1][2] * a.m[2][0]) +
           a.m[0][2] * (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]);
}

/* Adjugate over determinant: exact enough for the well-conditioned inertia tensors it serves;
 * ill-conditioned systems go through linalg_solve. */
bool mat3_inverse(Mat3 a, Mat3 *out) {
    double c00 = a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1];
    double c01 = a.m[1][2] * a.m[2][0] - a.m[1][0] * a.m[2][2];
    double c02 = a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0];
    double det = a.m[0][0] * c00 + a.m[0][1] * c01 + a.m[0][2] * c02;
    if (!(fabs(det) >= 1e-300))
        return false;
    double s = 1.0 / det;
    *out = (Mat3){{
        {c00 * s, (a.m[0][2] * a.m[2][1] - a.m[0][1] * a.m[2][2]) * s,
         (a.m[0][1] * a.m[1][2] - a.m[0][2] * a.m[1][1]) * s},
        {c01 * s, (a.m[0][0] * a.m[2][2] - a.m[0][2] * a.m[2][0]) * s,
         (a.m[0][2] * a.m[1][0] - a.m[0][0] * a.m[1][2]) * s},
        {c02 * s, (a.m[0][1] * a.m[2][0] - a.m[0][0] * a.m[2][1]) * s,
         (a.m[0][0] * a.m[1][1] - a.m[0][1] * a.m[1][0]) * s},
    }};
    return true;
}

Mat3 mat3_skew(Vec3 v) {
    return (Mat3){{{0, -v.z, v.y}, {v.z, 0, -v.x}, {-v.y, v.x, 0}}};
}

/* R diag(I) R^T. The upper triangle is computed and mirrored so the result is exactly
 * symmetric (solvers and Cholesky factorisations rely on it). */
Mat3 mat3_world_inertia(Quat q, Vec3 principal) {
    Mat3 r = quat_to_mat3(q);
    double d[3] = {principal.x, principal.y, principal.z};
    Mat3 out;
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) {
            double sum = 0.0;
            for (int k = 0; k < 3; k++)
                sum += r.m[i][k] * d[k] * r.m[j][k];
            out.m[i][j] = sum;
            out.m[j][i] = sum;
        }
    return out;
}

/* An impulse p along n applied at r changes the point's velocity along n by
 * p (1/m + (r x n) . Iinv (r x n)) (linear term plus the angular term from dw = Iinv (r x p)),
 * so the effective mass is the reciprocal. An infinite mass with zero inverse inertia gives
 * +infinity. */
double spatial_effective_mass(double mass, Mat3 inv_inertia_world, Vec3 r, Vec3 n) {
    Vec3 rn = vec3_cross(r, n);
    double k = 1.0 / mass + vec3_dot(rn, mat3_mul_vec(inv_inertia_world, rn));
    return 1.0 / k;
}
