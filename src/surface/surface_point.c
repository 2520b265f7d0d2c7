/* The unit normal, its derivatives and the principal curvatures of any evaluated surface point.
 * Seed 002: the contact frame of eqs. 4.5-4.8 and App. A (eqs. A.1-A.7) is built from x_s, x_t
 * and n; H (eq. A.10) needs the frame's first partial derivatives and its time derivative (eq.
 * A.11) the second ones, so the normal is differentiated to second order here by jets (002 5.3).
 * The curvatures (first and second fundamental forms) are not used by 002's algorithm; they
 * check the surfaces against known shapes and describe the rattleback's cap (002 6.4: spin
 * reversal comes from the principal axes of curvature misaligned with those of inertia). */
#include "surface_internal.h"

#include <math.h>
#include <stdio.h>

/* x_s x x_t below this fraction of |x_s| |x_t| (a sine of about 1e-10) is a zero normal: the
 * parameterisation is not regular there and the normal's derivatives are meaningless. */
#define SURFACE_DEGENERATE_SINE 1e-10

/* a! b! of the derivatives of order <= 2, in SurfaceDerivative order. */
static const double FACTORIAL_TO_2[SURFACE_NORMAL_DERIVATIVES] = {1, 1, 1, 2, 1, 2};

/* The jet of x_s (derivatives listed in `of`: x_s, x_ss, x_st, x_sss, x_sst, x_stt) or of x_t,
 * correct to order 2 (order-3 coefficients left zero: they would need x's fourth derivatives). */
static JetVec3 tangent_jet(const SurfacePoint *p, const int of[SURFACE_NORMAL_DERIVATIVES]) {
    JetVec3 out = {{{0}}, {{0}}, {{0}}};
    for (int k = 0; k < SURFACE_NORMAL_DERIVATIVES; k++) {
        Vec3 d = vec3_scale(p->x[of[k]], 1.0 / FACTORIAL_TO_2[k]);
        out.x.c[k] = d.x;
        out.y.c[k] = d.y;
        out.z.c[k] = d.z;
    }
    return out;
}

IssimStatus surface_point_normal(SurfacePoint *point, const char *surface, IssimError *err) {
    for (int k = 0; k < SURFACE_NORMAL_DERIVATIVES; k++)
        point->normal[k] = vec3(0, 0, 0);
    Vec3 xs = point->x[SURFACE_S], xt = point->x[SURFACE_T];
    double cross = vec3_norm(vec3_cross(xs, xt));
    if (!(cross > SURFACE_DEGENERATE_SINE * vec3_norm(xs) * vec3_norm(xt)) || !isfinite(cross))
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "surface '%s': degenerate normal at (s, t) = (%.17g, %.17g): "
                               "|x_s x x_t| = %g with |x_s| = %g, |x_t| = %g (the "
                               "parameterisation is not regular there)",
                               surface ? surface : "?", point->s, point->t, cross, vec3_norm(xs),
                               vec3_norm(xt));
    static const int OF_S[SURFACE_NORMAL_DERIVATIVES] = {SURFACE_S,   SURFACE_SS,  SURFACE_ST,
                                                         SURFACE_SSS, SURFACE_SST, SURFACE_STT};
    static const int OF_T[SURFACE_NORMAL_DERIVATIVES] = {SURFACE_T,   SURFACE_ST,  SURFACE_TT,
                                                         SURFACE_SST, SURFACE_STT, SURFACE_TTT};
    JetVec3 tangent_s = tangent_jet(point, OF_S);
    JetVec3 tangent_t = tangent_jet(point, OF_T);
    /* the tangents' jets are exact to order 2 only: so is everything built from them */
    JetVec3 normal = jetvec3_cross(&tangent_s, &tangent_t, 2);
    Jet length_squared = jetvec3_dot(&normal, &normal, 2);
    Jet inverse_length = jet_rsqrt(&length_squared, 2);
    JetVec3 unit = jetvec3_scale(&normal, &inverse_length, 2);
    for (int k = 0; k < SURFACE_NORMAL_DERIVATIVES; k++)
        point->normal[k] =
            vec3_scale(vec3(unit.x.c[k], unit.y.c[k], unit.z.c[k]), FACTORIAL_TO_2[k]);
    return ISSIM_OK;
}

/* Unit tangent of the parameter direction (a, b). */
static Vec3 parameter_direction(const SurfacePoint *p, double a, double b) {
    return vec3_normalize(vec3_add(vec3_scale(p->x[SURFACE_S], a), vec3_scale(p->x[SURFACE_T], b)));
}

void surface_curvature(const SurfacePoint *point, SurfaceCurvature *out) {
    Vec3 xs = point->x[SURFACE_S], xt = point->x[SURFACE_T], n = point->normal[SURFACE_VALUE];
    double e = vec3_dot(xs, xs), f = vec3_dot(xs, xt), g = vec3_dot(xt, xt);
    /* minus II: positive where the surface bends away from n */
    double l = -vec3_dot(point->x[SURFACE_SS], n), m = -vec3_dot(point->x[SURFACE_ST], n),
           nn = -vec3_dot(point->x[SURFACE_TT], n);
    double det = e * g - f * f;
    out->gaussian = (l * nn - m * m) / det;
    out->mean = (e * nn + g * l - 2.0 * f * m) / (2.0 * det);
    double root = sqrt(fmax(out->mean * out->mean - out->gaussian, 0.0));
    out->principal[0] = out->mean - root;
    out->principal[1] = out->mean + root;
    /* (II - k I) v = 0: two candidate rows, the better conditioned one gives v */
    for (int i = 0; i < 2; i++) {
        double k = out->principal[i];
        double a1 = m - k * f, b1 = -(l - k * e), a2 = nn - k * g, b2 = -(m - k * f);
        bool first = a1 * a1 + b1 * b1 >= a2 * a2 + b2 * b2;
        double a = first ? a1 : a2, b = first ? b1 : b2;
        out->direction[i] = a * a + b * b > 0.0 ? parameter_direction(point, a, b) : vec3(0, 0, 0);
    }
    /* umbilic (or nearly): every direction is principal; any orthogonal pair */
    if (root <= 1e-12 * fabs(out->mean) || vec3_norm(out->direction[0]) == 0.0) {
        out->direction[0] = parameter_direction(point, 1.0, 0.0);
        out->direction[1] = vec3_cross(n, out->direction[0]);
    }
}
