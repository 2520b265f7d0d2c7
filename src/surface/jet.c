/* Bivariate jets of total order 3: the forward-mode automatic differentiation of seed 002 5.3
 * (Fig. 5.11: every assignment also assigns the partial derivatives of its left-hand side, "u
 * and v partial derivatives in all combinations up to order three"). A jet stores the Taylor
 * coefficients instead of the derivatives, so a product is a truncated polynomial product and
 * the functions needed for a unit normal (1/sqrt) are truncated power series. */
#include "surface_internal.h"

#include <math.h>

/* Exponents (a, b) of ds^a dt^b for each coefficient, in SurfaceDerivative order. */
static const int EXP_S[SURFACE_DERIVATIVES] = {0, 1, 0, 2, 1, 0, 3, 2, 1, 0};
static const int EXP_T[SURFACE_DERIVATIVES] = {0, 0, 1, 0, 1, 2, 0, 1, 2, 3};
/* a! b! of each coefficient. */
static const double FACTORIALS[SURFACE_DERIVATIVES] = {1, 1, 1, 2, 1, 2, 6, 2, 2, 6};

/* Index of ds^a dt^b for a + b <= 3: the orders are stored one after the other, each by
 * decreasing a. */
static int monomial_index(int a, int b) {
    int order = a + b;
    return order * (order + 1) / 2 + b;
}

Jet jet_mul(const Jet *a, const Jet *b) {
    Jet out = {{0}};
    for (int i = 0; i < SURFACE_DERIVATIVES; i++) {
        if (a->c[i] == 0.0)
            continue;
        for (int j = 0; j < SURFACE_DERIVATIVES && EXP_S[i] + EXP_T[i] + EXP_S[j] + EXP_T[j] <= 3;
             j++)
            out.c[monomial_index(EXP_S[i] + EXP_S[j], EXP_T[i] + EXP_T[j])] += a->c[i] * b->c[j];
    }
    return out;
}

Jet jet_add(const Jet *a, const Jet *b) {
    Jet out;
    for (int i = 0; i < SURFACE_DERIVATIVES; i++)
        out.c[i] = a->c[i] + b->c[i];
    return out;
}

Jet jet_scale(const Jet *a, double k) {
    Jet out;
    for (int i = 0; i < SURFACE_DERIVATIVES; i++)
        out.c[i] = a->c[i] * k;
    return out;
}

/* With a = a0 (1 + e), e having no constant term and e^4 = 0 at order 3:
 * a^(-1/2) = a0^(-1/2) (1 - e/2 + 3/8 e^2 - 5/16 e^3). */
Jet jet_rsqrt(const Jet *a) {
    double a0 = a->c[0];
    Jet e = jet_scale(a, 1.0 / a0);
    e.c[0] = 0.0;
    Jet e2 = jet_mul(&e, &e);
    Jet e3 = jet_mul(&e2, &e);
    double r0 = 1.0 / sqrt(a0);
    Jet out;
    for (int i = 0; i < SURFACE_DERIVATIVES; i++)
        out.c[i] = r0 * (-0.5 * e.c[i] + 0.375 * e2.c[i] - 0.3125 * e3.c[i]);
    out.c[0] = r0;
    return out;
}

Jet jet_from_derivatives(const double d[SURFACE_DERIVATIVES]) {
    Jet out;
    for (int i = 0; i < SURFACE_DERIVATIVES; i++)
        out.c[i] = d[i] / FACTORIALS[i];
    return out;
}

void jet_to_derivatives(const Jet *a, double d[SURFACE_DERIVATIVES]) {
    for (int i = 0; i < SURFACE_DERIVATIVES; i++)
        d[i] = a->c[i] * FACTORIALS[i];
}

JetVec3 jetvec3_cross(const JetVec3 *a, const JetVec3 *b) {
    Jet yz = jet_mul(&a->y, &b->z), zy = jet_mul(&a->z, &b->y);
    Jet zx = jet_mul(&a->z, &b->x), xz = jet_mul(&a->x, &b->z);
    Jet xy = jet_mul(&a->x, &b->y), yx = jet_mul(&a->y, &b->x);
    Jet nzy = jet_scale(&zy, -1.0), nxz = jet_scale(&xz, -1.0), nyx = jet_scale(&yx, -1.0);
    return (JetVec3){jet_add(&yz, &nzy), jet_add(&zx, &nxz), jet_add(&xy, &nyx)};
}

Jet jetvec3_dot(const JetVec3 *a, const JetVec3 *b) {
    Jet xx = jet_mul(&a->x, &b->x), yy = jet_mul(&a->y, &b->y), zz = jet_mul(&a->z, &b->z);
    Jet sum = jet_add(&xx, &yy);
    return jet_add(&sum, &zz);
}

JetVec3 jetvec3_scale(const JetVec3 *a, const Jet *k) {
    return (JetVec3){jet_mul(&a->x, k), jet_mul(&a->y, k), jet_mul(&a->z, k)};
}
