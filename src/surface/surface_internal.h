/* Private to src/surface: bivariate jets (truncated Taylor series in (ds, dt) of total order 3),
 * the forward-mode automatic differentiation of 002 5.3 (Fig. 5.11 propagates each partial
 * derivative through every assignment; a jet carries all of them at once). */
#ifndef ISSIM_SURFACE_INTERNAL_H
#define ISSIM_SURFACE_INTERNAL_H

#include "issim/surface.h"

/* f(s0 + ds, t0 + dt) = sum c[k] ds^a dt^b over the monomials of SurfaceDerivative order
 * (1, ds, dt, ds^2, ds dt, dt^2, ds^3, ds^2 dt, ds dt^2, dt^3): c[k] is the partial derivative
 * of index k divided by a! b!. A coefficient of order k of any result depends only on the
 * coefficients of order <= k of the operands, so a jet known to order 2 gives results correct to
 * order 2. */
typedef struct Jet {
    double c[SURFACE_DERIVATIVES];
} Jet;

typedef struct JetVec3 {
    Jet x, y, z;
} JetVec3;

Jet jet_mul(const Jet *a, const Jet *b);
Jet jet_add(const Jet *a, const Jet *b);
Jet jet_scale(const Jet *a, double k);
/* 1 / sqrt(a); a->c[0] must be positive. */
Jet jet_rsqrt(const Jet *a);

/* Taylor coefficients from partial derivatives (divides by a! b!) and back. */
Jet jet_from_derivatives(const double d[SURFACE_DERIVATIVES]);
void jet_to_derivatives(const Jet *a, double d[SURFACE_DERIVATIVES]);

JetVec3 jetvec3_cross(const JetVec3 *a, const JetVec3 *b);
Jet jetvec3_dot(const JetVec3 *a, const JetVec3 *b);
JetVec3 jetvec3_scale(const JetVec3 *a, const Jet *k);

#endif
