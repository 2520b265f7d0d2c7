/* The complementarity solver of 001 2.2: Lemke's algorithm (src/lcp) inside the fixpoint
 * iteration that keeps the contact distances after the step non-negative.
 *
 * Per island and time step: A = N^T J^T M^-1 J N and, for the trial velocities u' (first the
 * free velocities u + h M^-1 f_ext), nu = -delta(s') + h N^T J^T u' with delta(s') from the
 * engine's gap_after (the distances after a trial step), b = N^T J^T (u + h M^-1 f_ext) - nu / h;
 * then f <- LCP(A, b) (eq. 7, impulses h f), u' <- u + h M^-1 (f_ext + J N f) (eq. 2), until
 * u' settles (001 stops on |f - f'| < eps; f need not be unique, u' is). Each LCP after the first starts from the previous one's basis (usually no pivot
 * at all). A Lemke failure (ray termination, pivot limit, a result that does not verify) or a
 * fixpoint that does not settle is ISSIM_ERR_NUMERIC: the engine keeps the last good state and
 * names the island. Without friction (lambda_t stays zero).
 *
 * Memory: one allocation per solve for the island's matrices and the LCP workspace (O(m^2 + nm)
 * doubles); Lemke itself allocates nothing.
 */
#include <math.h>
#include <string.h>

#include "engine_solver_direct.h"

#define SOLVER "lemke"

enum { FIXPOINT_MAX_ITERATIONS = 25 };
/* |u' - u'_prev| below this fraction of |u'| (plus 1e-13 m/s) ends the fixpoint iteration. */
#define FIXPOINT_TOL 1e-10
/* The V12 check after the solve: distances >= -tol, |lambda_i d_i| / max lambda <= tol, m. */
#define DISTANCE_TOL 1e-9

/* |a - b|_inf, and |a|_inf in scale. */
static double max_change(int n, const double *a, const double *b, double *scale) {
    double change = 0.0;
    *scale = 0.0;
    for (int i = 0; i < n; i++) {
        change = fmax(change, fabs(a[i] - b[i]));
        *scale = fmax(*scale, fabs(a[i]));
    }
    return change;
}

/* The iteration settles on the trial velocities u', not on the impulses f: for a PSD A the
 * LCP's solutions may form a family (a chair's four legs), all with the same A f and the same
 * M^-1 J N f, so u' is unique where f is not. */
static IssimStatus fixpoint(DirectIsland *d, LcpBasis *basis, EngineIslandSolution *out,
                            IssimError *err) {
    int m = d->m, n = d->n;
    double *lambda = out->lambda_n, *previous = d->scratch_n;
    LcpProblem lcp = {.n = m, .matrix = d->a, .q = d->b};
    direct_velocity(d, lambda);
    for (int it = 1; it <= FIXPOINT_MAX_ITERATIONS; it++) {
        direct_distances(d);
        direct_rhs(d);
        memcpy(previous, d->u_trial, sizeof(double) * (size_t)n);
        LcpReport rep;
        IssimError why = {0};
        if (lcp_lemke(&lcp, d->ws, basis, NULL, lambda, &rep, &why) != ISSIM_OK)
            return issim_error_set(err, ISSIM_ERR_NUMERIC, "fixpoint iteration %d: %s", it,
                                   why.message);
        direct_velocity(d, lambda);
        double scale, change = max_change(n, d->u_trial, previous, &scale);
        if (change <= FIXPOINT_TOL * scale + 1e-13) {
            out->iterations = it;
            return ISSIM_OK;
        }
    }
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "the fixpoint iteration of 001 2.2 did not settle in %d iterations "
                           "(%d contacts)",
                           FIXPOINT_MAX_ITERATIONS, m);
}

static IssimStatus lemke_solve(void *user, const EngineIslandSystem *sys, EngineIslandSolution *out,
                               IssimError *err) {
    (void)user;
    DirectIsland d;
    if (direct_island_init(&d, sys, SOLVER, err) != ISSIM_OK)
        return ISSIM_ERR_NOMEM;
    LcpBasis *basis = lcp_basis_create(sys->contacts, err);
    IssimStatus s = basis ? fixpoint(&d, basis, out, err) : ISSIM_ERR_NOMEM;
    if (s == ISSIM_OK) {
        out->residual = direct_violation(&d, out->lambda_n);
        if (!(out->residual <= DISTANCE_TOL))
            s = issim_error_set(err, ISSIM_ERR_NUMERIC,
                                "after the step a contact violates complementarity by %.3g m "
                                "(distance < 0 or force x distance != 0; tolerance %.3g m)",
                                out->residual, DISTANCE_TOL);
    }
    lcp_basis_destroy(basis);
    direct_island_free(&d);
    return s;
}

static const EngineComplementaritySolver lemke_solver = {.name = SOLVER, .solve = lemke_solve};

const EngineComplementaritySolver *engine_complementarity_lemke(void) {
    return &lemke_solver;
}
