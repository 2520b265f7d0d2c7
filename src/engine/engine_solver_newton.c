/* The complementarity solver of 001 2.1: the NCP delta(sigma(f)) >= 0 compl. to f >= 0 (eq. 4)
 * on the contact distances after the step, as Phi(f) = 0 with the Fischer function (eq. 5),
 * solved by the damped semismooth Newton method of src/lcp (lcp_fischer_newton_ncp).
 *
 * sigma(f) is the step of eqs. 1-2 with impulses f: u' = u + h M^-1 (f_ext + J N f); delta is
 * the engine's gap_after for u' (the distances after the trial step). So that Phi mixes like
 * units, distances are divided by h times the mean diagonal of A = N^T J^T M^-1 J N (an
 * impulse); the Jacobian of the scaled distances is then A / mean(diag A) (exact while the
 * callback is affine in u', the linearisation otherwise). A stall or a result that does not
 * verify is ISSIM_ERR_NUMERIC. Without friction.
 *
 * Memory: one allocation per solve (the island's matrices, the workspace).
 */
#include <math.h>

#include "engine_solver_direct.h"

#define SOLVER "fischer_newton"

typedef struct DistanceMap {
    DirectIsland *d;
    double scale; /* 1 / (h mean(diag A)) */
} DistanceMap;

/* The scaled distances after the step with impulses z; a held row's is z + max(delta, 0)
 * (its solution is z = 0). */
static void distances(void *ctx, const double *z, double *w) {
    DistanceMap *map = ctx;
    DirectIsland *d = map->d;
    direct_velocity(d, z);
    direct_distances(d);
    for (int i = 0; i < d->m; i++)
        w[i] =
            d->held[i] ? z[i] + fmax(d->d_trial[i], 0.0) * map->scale : d->d_trial[i] * map->scale;
}

static IssimStatus newton_solve(void *user, const EngineIslandSystem *sys,
                                EngineIslandSolution *out, IssimError *err) {
    (void)user;
    DirectIsland d;
    if (direct_island_init(&d, sys, SOLVER, err) != ISSIM_OK)
        return ISSIM_ERR_NOMEM;
    int m = d.m;
    double mean = 0.0;
    for (int i = 0; i < m; i++)
        mean += d.a[i + (size_t)m * i] / m;
    DistanceMap map = {.d = &d, .scale = 1.0 / (sys->h * mean)};
    for (size_t i = 0; i < (size_t)m * (size_t)m; i++)
        d.a[i] /= mean; /* the Jacobian h A scale of the scaled distances */
    LcpReport rep;
    IssimError why = {0};
    IssimStatus s =
        lcp_fischer_newton_ncp(m, distances, &map, d.a, d.ws, NULL, out->lambda_n, &rep, &why);
    if (s != ISSIM_OK) {
        issim_error_set(err, ISSIM_ERR_NUMERIC, "%s", why.message);
    } else {
        out->iterations = rep.iterations;
        direct_velocity(&d, out->lambda_n);
        s = direct_check_step(&d, out->lambda_n, &out->residual, err);
    }
    direct_island_free(&d);
    return s;
}

static const EngineComplementaritySolver newton_solver = {.name = SOLVER, .solve = newton_solve};

const EngineComplementaritySolver *engine_complementarity_fischer_newton(void) {
    return &newton_solver;
}
