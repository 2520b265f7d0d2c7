/* Bivariate jets of total order 3: the forward-mode automatic differentiation of seed 002 5.3
 * (Fig. 5.11: every assignment also assigns the partial derivatives of its left-hand side, "u
 * and v partial derivatives in all combinations up to order three"). A jet stores the Taylor
 * coefficients instead of the derivatives, so a product is a truncated polynomial product and
 * the functions needed for a unit normal (1/sqrt) are truncated power series. */
#include "surface_internal.h"

#include <math.h>

/* Coefficients of order <= k. */
static const int COEFFICIENTS[4] = {1, 3, 6, 10};
/* a! b! of each coefficient. */
static const double FACTORIALS[SURFACE_DERIVATIVES] = {1, 1, 1, 2, 1, 2, 6, 2, 2, 6};

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
Jet jet_rsqrt(const Jet *a, int order) {
    double a0 = a->c[0];
    Jet e = jet_scale(a, 1.0 / a0);
    e.c[0] = 0.0;
    Jet e2 = jet_mul(&e, &e, order);
    Jet e3 = order >= 3 ? jet_mul(&e2, &e, order) : (Jet){{0}};
    double r0 = 1.0 / sqrt(a0);
    Jet out = {{0}};
    for (int i = 0; i < COEFFICIENTS[order]; i++)
        out.c[i] = r0 * (-0.5 * e.c[i] + 0.375 * e2.c[i] - 0.3125 * e3.c[i]);
    out.c[0] = r0;
    return out;
}

void jet_to_derivatives(const Jet *a, double d[SURFACE_DERIVATIVES]) {
    for (int i = 0; i < SURFACE_DERIVATIVES; i++)
        d[i] = a->c[i] * FACTORIALS[i];
}
