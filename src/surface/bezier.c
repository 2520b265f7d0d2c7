/* Bicubic Bezier patches, seed 002 App. B.1 (the rattleback and its floor) and 5.3 (the ten
 * partial derivatives of Table 6.1). x(s, t) = sum_ij B_i(s) B_j(t) P_ij with the cubic
 * Bernstein polynomials B_i(s) = C(3, i) s^i (1 - s)^(3 - i); the partial derivative of order
 * (a, b) is sum_ij B_i^(a)(s) B_j^(b)(t) P_ij, exact, so the ten come from four univariate
 * derivative tables. */
#include "surface_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* b[k][i] = k-th derivative of B_i at u, k = 0..3. */
static void bernstein_cubic(double u, double b[4][4]) {
    double v = 1.0 - u;
    b[0][0] = v * v * v;
    b[0][1] = 3.0 * u * v * v;
    b[0][2] = 3.0 * u * u * v;
    b[0][3] = u * u * u;
    b[1][0] = -3.0 * v * v;
    b[1][1] = 3.0 * v * v - 6.0 * u * v;
    b[1][2] = 6.0 * u * v - 3.0 * u * u;
    b[1][3] = 3.0 * u * u;
    b[2][0] = 6.0 * v;
    b[2][1] = 18.0 * u - 12.0;
    b[2][2] = 6.0 - 18.0 * u;
    b[2][3] = 6.0 * u;
    b[3][0] = -6.0;
    b[3][1] = 18.0;
    b[3][2] = -18.0;
    b[3][3] = 6.0;
}

/* Derivative orders (in s, in t) of each SurfaceDerivative. */
static const int ORDER_S[SURFACE_DERIVATIVES] = {0, 1, 0, 2, 1, 0, 3, 2, 1, 0};
static const int ORDER_T[SURFACE_DERIVATIVES] = {0, 0, 1, 0, 1, 2, 0, 1, 2, 3};

IssimStatus bezier_patch_evaluate(const BezierPatch *patch, double s, double t, SurfacePoint *out,
                                  IssimError *err) {
    if (!isfinite(s) || !isfinite(t))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "bezier patch '%s': parameter (s, t) = (%g, %g) is not finite",
                               patch->name, s, t);
    double bs[4][4], bt[4][4];
    bernstein_cubic(s, bs);
    bernstein_cubic(t, bt);
    out->s = s;
    out->t = t;
    /* rows first: r[b][i] = sum_j B_j^(b)(t) P_ij, shared by every order in s */
    Vec3 rows[4][4];
    for (int b = 0; b < 4; b++)
        for (int i = 0; i < 4; i++) {
            Vec3 sum = vec3(0, 0, 0);
            for (int j = 0; j < 4; j++)
                sum = vec3_add(sum, vec3_scale(patch->control[i][j], bt[b][j]));
            rows[b][i] = sum;
        }
    for (int k = 0; k < SURFACE_DERIVATIVES; k++) {
        Vec3 sum = vec3(0, 0, 0);
        for (int i = 0; i < 4; i++)
            sum = vec3_add(sum, vec3_scale(rows[ORDER_T[k]][i], bs[ORDER_S[k]][i]));
        out->x[k] = sum;
    }
    return surface_point_normal(out, patch->name, err);
}

/* The control net listed in 002 App. B.1 for the rattleback, before its transform. */
static const double RATTLEBACK_NET[4][4][3] = {
    {{-1.5, -1.5, -2.0}, {-1.5, -0.5, -1.0}, {-1.5, 0.5, -1.0}, {-1.5, 1.5, -2.0}},
    {{-0.5, -1.5, -1.0}, {-0.5, -0.5, 0.0}, {-0.5, 0.5, 0.0}, {-0.5, 1.5, -1.0}},
    {{0.5, -1.5, -1.0}, {0.5, -0.5, 0.0}, {0.5, 0.5, 0.0}, {0.5, 1.5, -1.0}},
    {{1.5, -1.5, -2.0}, {1.5, -0.5, -1.0}, {1.5, 0.5, -1.0}, {1.5, 1.5, -2.0}},
};

/* 002 App. B.1: "scale = [0.6 0.2 0.2]; rotate = -0.174 [0 0 1]; offset = [0 0.0 0.2]". */
static const double RATTLEBACK_SCALE[3] = {0.6, 0.2, 0.2};
static const double RATTLEBACK_ROTATION_Z = -0.174;
static const double RATTLEBACK_OFFSET_Z = 0.2;

void bezier_patch_rattleback(BezierPatch *out) {
    double c = cos(RATTLEBACK_ROTATION_Z), sn = sin(RATTLEBACK_ROTATION_Z);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            const double *p = RATTLEBACK_NET[i][j];
            double x = p[0] * RATTLEBACK_SCALE[0], y = p[1] * RATTLEBACK_SCALE[1];
            double z = p[2] * RATTLEBACK_SCALE[2];
            out->control[i][j] = vec3(c * x - sn * y, sn * x + c * y, z + RATTLEBACK_OFFSET_Z);
        }
    snprintf(out->name, sizeof out->name, "rattleback");
}

void bezier_patch_rattleback_floor(BezierPatch *out) {
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            out->control[i][j] = vec3(-1.5 + i, -1.5 + j, 0.0);
    snprintf(out->name, sizeof out->name, "floor");
}
