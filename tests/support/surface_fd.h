/* Central differences of a surface's derivatives (issim/surface.h), shared by the surface tests:
 * every position derivative of SurfacePoint.x as the difference of a lower one along s or t
 * (the mixed ones by both routes), the normal's likewise. Header-only. */
#ifndef ISSIM_TEST_SURFACE_FD_H
#define ISSIM_TEST_SURFACE_FD_H

#include <math.h>
#include <stdbool.h>

#include "issim/surface.h"
#include "testutil.h"

/* Parameter step: the truncation error h^2/6 f''' and the rounding error eps |f| / h both stay
 * near 1e-10 of the derivatives' size (surfaces about 1 across). */
#define SURFACE_FD_STEP 1e-5
/* Derivatives smaller than this are compared absolutely. */
#define SURFACE_FD_FLOOR 1e-2

/* Evaluates the surface under test at (s, t) (failing the test on an error). */
typedef SurfacePoint (*SurfaceFdEvaluate)(const void *surface, double s, double t);

/* A derivative checked as the central difference of a lower one along s or t. */
typedef struct SurfaceFdCase {
    int derivative, of;
    bool along_t;
} SurfaceFdCase;

/* Largest relative error over the cases at (s, t); normals when `normal`. */
static inline double surface_fd_error(SurfaceFdEvaluate evaluate, const void *surface, double s,
                                      double t, const SurfaceFdCase *cases, int count,
                                      bool normal) {
    SurfacePoint at = evaluate(surface, s, t);
    double worst = 0.0;
    for (int c = 0; c < count; c++) {
        double h = SURFACE_FD_STEP;
        double ds = cases[c].along_t ? 0.0 : h, dt = cases[c].along_t ? h : 0.0;
        SurfacePoint plus = evaluate(surface, s + ds, t + dt);
        SurfacePoint minus = evaluate(surface, s - ds, t - dt);
        const Vec3 *hi = normal ? plus.normal : plus.x, *lo = normal ? minus.normal : minus.x;
        Vec3 analytic = (normal ? at.normal : at.x)[cases[c].derivative];
        Vec3 fd = vec3_scale(vec3_sub(hi[cases[c].of], lo[cases[c].of]), 0.5 / h);
        worst = fmax(worst, vec3_norm(vec3_sub(analytic, fd)) /
                                fmax(vec3_norm(analytic), SURFACE_FD_FLOOR));
    }
    return worst;
}

/* Every position derivative from a lower one (the first 6 rows serve the normal's too). */
static const SurfaceFdCase SURFACE_FD_POSITION[12] = {
    {SURFACE_S, SURFACE_VALUE, false}, {SURFACE_T, SURFACE_VALUE, true},
    {SURFACE_SS, SURFACE_S, false},    {SURFACE_ST, SURFACE_S, true},
    {SURFACE_ST, SURFACE_T, false},    {SURFACE_TT, SURFACE_T, true},
    {SURFACE_SSS, SURFACE_SS, false},  {SURFACE_SST, SURFACE_SS, true},
    {SURFACE_SST, SURFACE_ST, false},  {SURFACE_STT, SURFACE_ST, true},
    {SURFACE_STT, SURFACE_TT, false},  {SURFACE_TTT, SURFACE_TT, true},
};

/* Worst errors of the position and the normal derivatives at (s, t), folded into worst[2]. */
static inline void surface_fd_check(SurfaceFdEvaluate evaluate, const void *surface, double s,
                                    double t, double worst[2]) {
    const SurfaceFdCase *POSITION = SURFACE_FD_POSITION;
    static const SurfaceFdCase NORMAL[] = {
        {SURFACE_S, SURFACE_VALUE, false}, {SURFACE_T, SURFACE_VALUE, true},
        {SURFACE_SS, SURFACE_S, false},    {SURFACE_ST, SURFACE_S, true},
        {SURFACE_ST, SURFACE_T, false},    {SURFACE_TT, SURFACE_T, true},
    };
    worst[0] = fmax(worst[0], surface_fd_error(evaluate, surface, s, t, POSITION, 12, false));
    worst[1] = fmax(worst[1], surface_fd_error(evaluate, surface, s, t, NORMAL,
                                               (int)(sizeof NORMAL / sizeof *NORMAL), true));
}

/* The patch at (s, t), failing the current test with the surface's message when it cannot be
 * evaluated. */
static inline SurfacePoint surface_point_at(const SmoothSurface *surface, int patch, double s,
                                            double t) {
    SurfacePoint p;
    IssimError err = {0};
    if (smooth_surface_evaluate(surface, patch, s, t, &p, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    return p;
}

#endif
