/* The complementarity solver of 001 2.1: the NCP delta(sigma(f)) >= 0 compl. to f >= 0 (eq. 4)
 * on the contact distances after the step, as Phi(f) = 0 with the Fischer function (eq. 5),
 * solved by the damped semismooth Newton method of src/lcp (lcp_fischer_newton_ncp).
 *
 * sigma(f) is the step of eqs. 1-2 with impulses f: u' = u + h M^-1 (f_ext + J N f); delta is
 * the engine's gap_after for u' (the distances after the trial step). So that Phi mixes like
 * units, distances are divided by h times the mean diagonal of A = N^T J^T M^-1 J N (an
 * impulse); the Jacobian of the scaled distances is then A / mean(diag A) (exact while the
 * callback is affine in u', the linearisation otherwise). When Newton fails on the true
 * distances, the linearised distances are tried (solve_linearised); a failure of both, or a
 * result whose true distances do not verify, is ISSIM_ERR_NUMERIC. Without friction.
 *
 * Memory: one allocation per solve (the island's matrices, the workspace).
 */
#include <math.h>
#include <string.h>

#include "engine_solver_direct.h"

#define SOLVER "fischer_newton"

/* Tikhonov regularisation of the scaled map, w + eps z: redundant contacts (a capsule tip on
 * two triangles of a mesh, a chair's four legs) make A singular, and the Fischer-Newton method
 * converges only linearly, if at all, at such degenerate solutions; with eps the NCP is
 * strongly monotone, its solution unique (the least-norm member of the family as eps -> 0) and
 * Newton's convergence quadratic. It moves an active contact's distance by
 * -eps lambda h mean(diag A) (1e-12 m for 1 N s on a unit mass at h = 1 ms) and the impulses by
 * about eps relative; the step check measures the true distances. */
#define TIKHONOV 1e-9

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
        w[i] = d->held[i] ? z[i] + fmax(d->d_trial[i], 0.0) * map->scale
                          : d->d_trial[i] * map->scale + TIKHONOV * z[i];
}

/* The fallback when Newton on the true distances fails (the Jacobian is the linearisation; a
 * large rotation in the step, as when a deep overlap is pushed out of a light body, can leave its
 * directions too poor for the line search): the NCP with the distances linearised,
 * gap + h Jn u', an LCP with the same matrix. Its answer still faces the step check on the true
 * distances. */
static IssimStatus solve_linearised(DirectIsland *d, double scale, double *lambda, LcpReport *rep,
                                    IssimError *why) {
    const EngineIslandSystem *sys = d->sys;
    for (int i = 0; i < d->m; i++) {
        d->b[i] = d->held[i] ? fmax(sys->gap[i], 0.0) * scale
                             : (sys->gap[i] + sys->h * d->b_free[i]) * scale;
        lambda[i] = 0.0;
    }
    IssimError second = {0};
    LcpProblem lcp = {.n = d->m, .matrix = d->a, .q = d->b};
    if (lcp_fischer_newton(&lcp, d->ws, NULL, lambda, rep, &second) == ISSIM_OK)
        return ISSIM_OK;
    char first[sizeof why->message];
    memcpy(first, why->message, sizeof first);
    return issim_error_set(why, ISSIM_ERR_NUMERIC, "%.240s; linearised: %.240s", first,
                           second.message);
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
    for (int i = 0; i < m; i++)
        d.a[i + (size_t)m * i] += d.held[i] ? 0.0 : TIKHONOV;
    LcpReport rep;
    IssimError why = {0};
    IssimStatus s =
        lcp_fischer_newton_ncp(m, distances, &map, d.a, d.ws, NULL, out->lambda_n, &rep, &why);
    if (s != ISSIM_OK)
        s = solve_linearised(&d, map.scale, out->lambda_n, &rep, &why);
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

static const EngineComplementaritySolver newton_solver = {
    .name = SOLVER, .solve = newton_solve, .direct = true};

const EngineComplementaritySolver *engine_complementarity_fischer_newton(void) {
    return &newton_solver;
}
