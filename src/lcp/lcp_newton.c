/* 001 2.1: the complementarity condition (4), delta(sigma(f)) >= 0 compl. to f >= 0, as the
 * equation system Phi(f) = 0 (eq. 5) of the Fischer function phi(a, b) = sqrt(a^2 + b^2) - a - b,
 * "solved by the Newton-Raphson method": here a damped semismooth Newton method. Each iteration
 * takes an element of the generalised Jacobian, H = D_a + D_b dw/dz with
 * D_a = z_i / r_i - 1, D_b = w_i / r_i - 1 (r_i = |(z_i, w_i)|; at r_i = 0 the element
 * 1 / sqrt(2) - 1 of the subdifferential), solves H dz = -Phi with LAPACKE and takes the longest
 * step 2^-k with Armijo decrease of Psi = |Phi|^2 / 2 (De Luca, Facchinei and Kanzow's scheme);
 * when H is singular or dz is no descent direction, the steepest descent direction -H^T Phi.
 * Psi has no local minima other than solutions for a P_0 matrix, so for 001's PSD matrices a
 * stall means a singular or infeasible problem; it is reported, never returned as a solution.
 *
 * For an LCP the converged active set {z_i > w_i} is finally solved exactly (z_S = -M_SS^-1 q_S)
 * and kept when it verifies, so the result is as accurate as the data allow.
 *
 * The bilateral option is 001 2.1's first method: every contact is an equality w_i = 0 (eq. 3)
 * and a contact whose force turns negative is released; a released contact whose distance turns
 * negative comes back (an active-set method; its iterations are the set changes).
 */
#include <math.h>
#include <string.h>

#include "issim/math.h"
#include "lcp_internal.h"

#define SOLVER "Fischer-Newton"

LcpNewtonOptions lcp_newton_options_default(void) {
    return (LcpNewtonOptions){.max_iterations = 100, .tolerance = 1e-12, .bilateral = false};
}

static LcpNewtonOptions resolve_options(const LcpNewtonOptions *o) {
    LcpNewtonOptions r = o ? *o : lcp_newton_options_default();
    if (r.max_iterations <= 0)
        r.max_iterations = 100;
    if (!(r.tolerance > 0.0))
        r.tolerance = 1e-12;
    return r;
}

static double fischer(double a, double b) {
    return hypot(a, b) - a - b;
}

/* Phi into phi, returns Psi = |Phi|^2 / 2. */
static double merit(int n, const double *z, const double *w, double *phi) {
    double psi = 0.0;
    for (int i = 0; i < n; i++) {
        phi[i] = fischer(z[i], w[i]);
        psi += 0.5 * phi[i] * phi[i];
    }
    return isfinite(psi) ? psi : INFINITY;
}

static double inf_norm(int n, const double *v) {
    double m = 0.0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(v[i]));
    return m;
}

typedef struct Newton {
    int n;
    LcpMap map;
    void *ctx;
    const double *jacobian;
    LcpWorkspace *ws;
    double *z, *w, *phi, *step, *trial, *trial_w, *grad, *h;
} Newton;

/* H = D_a + D_b J into h, grad = H^T Phi. */
static void generalised_jacobian(Newton *s) {
    int n = s->n;
    for (int i = 0; i < n; i++) {
        double r = hypot(s->z[i], s->w[i]), da, db;
        if (r > 1e-300) {
            da = s->z[i] / r - 1.0;
            db = s->w[i] / r - 1.0;
        } else {
            da = db = sqrt(0.5) - 1.0;
        }
        for (int j = 0; j < n; j++)
            s->h[i + (size_t)n * j] = db * s->jacobian[i + (size_t)n * j];
        s->h[i + (size_t)n * i] += da;
    }
    for (int j = 0; j < n; j++) {
        double g = 0.0;
        for (int i = 0; i < n; i++)
            g += s->h[i + (size_t)n * j] * s->phi[i];
        s->grad[j] = g;
    }
}

/* The Newton direction into step, or -grad when H is singular or it does not descend. Returns
 * grad . step. */
static double direction(Newton *s) {
    int n = s->n;
    for (int i = 0; i < n; i++)
        s->step[i] = -s->phi[i];
    bool ok = linalg_solve(n, 1, s->h, s->ws->ipiv, s->step) == 0;
    double slope = 0.0, norm2 = 0.0;
    for (int i = 0; i < n && ok; i++) {
        ok = isfinite(s->step[i]);
        slope += s->grad[i] * s->step[i];
        norm2 += s->step[i] * s->step[i];
    }
    if (ok && slope < -1e-12 * sqrt(norm2) * inf_norm(n, s->grad))
        return slope;
    slope = 0.0;
    for (int i = 0; i < n; i++) {
        s->step[i] = -s->grad[i];
        slope -= s->grad[i] * s->grad[i];
    }
    return slope;
}

/* Armijo backtracking from psi along step; on success z, w, phi hold the new point. */
static bool line_search(Newton *s, double *psi, double slope) {
    int n = s->n;
    for (double t = 1.0; t > 1e-14; t *= 0.5) {
        for (int i = 0; i < n; i++)
            s->trial[i] = s->z[i] + t * s->step[i];
        s->map(s->ctx, s->trial, s->trial_w);
        double next = 0.0;
        for (int i = 0; i < n; i++) {
            double f = fischer(s->trial[i], s->trial_w[i]);
            next += 0.5 * f * f;
        }
        if (isfinite(next) && next <= *psi + 1e-4 * t * slope) {
            memcpy(s->z, s->trial, sizeof(double) * (size_t)n);
            memcpy(s->w, s->trial_w, sizeof(double) * (size_t)n);
            *psi = merit(n, s->z, s->w, s->phi);
            return true;
        }
    }
    return false;
}

/* Iterates to |Phi|_inf <= tol_abs. */
static IssimStatus iterate(Newton *s, int max_iterations, double tol_abs, int *iterations,
                           IssimError *err) {
    int n = s->n;
    s->map(s->ctx, s->z, s->w);
    double psi = merit(n, s->z, s->w, s->phi);
    for (*iterations = 0; *iterations < max_iterations; (*iterations)++) {
        double res = inf_norm(n, s->phi);
        if (!isfinite(psi))
            return issim_error_set(err, ISSIM_ERR_NUMERIC,
                                   SOLVER ": the residual is not finite at iteration %d (size %d)",
                                   *iterations, n);
        if (res <= tol_abs)
            return ISSIM_OK;
        generalised_jacobian(s);
        double slope = direction(s);
        if (!line_search(s, &psi, slope))
            return issim_error_set(err, ISSIM_ERR_NUMERIC,
                                   SOLVER ": stalled at iteration %d with |Phi| = %.3g (tolerance "
                                          "%.3g, size %d): no decrease along the Newton or "
                                          "gradient direction (singular or infeasible problem)",
                                   *iterations, res, tol_abs, n);
    }
    if (inf_norm(n, s->phi) <= tol_abs)
        return ISSIM_OK;
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           SOLVER ": %d iterations without convergence, |Phi| = %.3g (tolerance "
                                  "%.3g, size %d)",
                           max_iterations, inf_norm(n, s->phi), tol_abs, n);
}

static Newton newton_setup(int n, LcpMap map, void *ctx, const double *jacobian, LcpWorkspace *ws,
                           double *z) {
    return (Newton){.n = n,
                    .map = map,
                    .ctx = ctx,
                    .jacobian = jacobian,
                    .ws = ws,
                    .z = z,
                    .w = lcp_vec(ws, LCP_VEC_W),
                    .phi = lcp_vec(ws, LCP_VEC_PHI),
                    .step = lcp_vec(ws, LCP_VEC_STEP),
                    .trial = lcp_vec(ws, LCP_VEC_TRIAL),
                    .trial_w = lcp_vec(ws, LCP_VEC_TRIAL_W),
                    .grad = lcp_vec(ws, LCP_VEC_GRAD),
                    .h = ws->square_a};
}

static void affine_map(void *ctx, const double *z, double *w) {
    const LcpProblem *p = ctx;
    int n = p->n;
    for (int i = 0; i < n; i++)
        w[i] = p->q[i];
    for (int j = 0; j < n; j++) {
        const double *col = p->matrix + (size_t)n * j;
        for (int i = 0; i < n; i++)
            w[i] += col[i] * z[j];
    }
}

/* ===== 001 2.1's bilateral method ===== */

static IssimStatus bilateral(const LcpProblem *p, LcpWorkspace *ws, LcpNorms norms,
                             int max_iterations, double tol, double *z, LcpReport *rep,
                             IssimError *err) {
    int n = p->n;
    bool *active = ws->flags;
    double *w = lcp_vec(ws, LCP_VEC_W);
    for (int i = 0; i < n; i++)
        active[i] = true;
    for (rep->iterations = 0; rep->iterations < max_iterations; rep->iterations++) {
        if (!lcp_solve_basis(p, ws, active, z))
            return issim_error_set(err, ISSIM_ERR_NUMERIC,
                                   SOLVER " (bilateral): the system of the %d contacts held as "
                                          "equalities is singular at iteration %d (redundant "
                                          "contacts)",
                                   n, rep->iterations);
        affine_map((void *)p, z, w);
        double scale = lcp_scaled_tolerance(norms, n, z, tol);
        int released = 0, worst = -1;
        for (int i = 0; i < n; i++)
            if (active[i] && z[i] < -scale) {
                active[i] = false; /* 001: "we release the k-th contact if f_k becomes negative" */
                released++;
            }
        if (released)
            continue;
        for (int i = 0; i < n; i++)
            if (!active[i] && w[i] < -scale && (worst < 0 || w[i] < w[worst]))
                worst = i;
        if (worst < 0)
            return ISSIM_OK;
        active[worst] = true; /* a released contact that would penetrate comes back */
    }
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           SOLVER " (bilateral): no consistent set of held contacts after %d "
                                  "changes (size %d)",
                           max_iterations, n);
}

/* ===== Entry points ===== */

/* The exact solve of the active set {z_i > w_i}, kept when it verifies better. */
static void polish(const LcpProblem *p, LcpWorkspace *ws, double *z) {
    int n = p->n;
    double *w = lcp_vec(ws, LCP_VEC_W), *exact = lcp_vec(ws, LCP_VEC_STEP);
    affine_map((void *)p, z, w);
    for (int i = 0; i < n; i++)
        ws->flags[i] = z[i] > w[i];
    if (lcp_solve_basis(p, ws, ws->flags, exact) &&
        lcp_violation(p, exact, NULL) <= lcp_violation(p, z, NULL))
        memcpy(z, exact, sizeof(double) * (size_t)n);
}

IssimStatus lcp_fischer_newton(const LcpProblem *p, LcpWorkspace *ws,
                               const LcpNewtonOptions *options, double *z, LcpReport *report,
                               IssimError *err) {
    LcpNorms norms;
    if (lcp_check_problem(SOLVER, p, ws, &norms, err) != ISSIM_OK)
        return err ? err->status : ISSIM_ERR_INVALID;
    LcpNewtonOptions o = resolve_options(options);
    LcpReport local = {0};
    LcpReport *rep = report ? report : &local;
    *rep = (LcpReport){0};
    /* the acceptance tolerance of the verification: the Newton tolerance, loosened for the
     * conditioning the polish cannot remove */
    double accept = fmax(1e3 * o.tolerance, 1e-10);
    if (o.bilateral) {
        if (bilateral(p, ws, norms, o.max_iterations > 100 ? o.max_iterations : 4 * p->n + 100,
                      o.tolerance * 1e2, z, rep, err) != ISSIM_OK)
            return ISSIM_ERR_NUMERIC;
    } else {
        for (int i = 0; i < p->n; i++)
            if (!isfinite(z[i]))
                z[i] = 0.0;
        Newton s = newton_setup(p->n, affine_map, (void *)p, p->matrix, ws, z);
        double tol_abs = o.tolerance * fmax(1.0, inf_norm(p->n, p->q));
        if (iterate(&s, o.max_iterations, tol_abs, &rep->iterations, err) != ISSIM_OK)
            return ISSIM_ERR_NUMERIC;
        polish(p, ws, z);
    }
    return lcp_verify(o.bilateral ? SOLVER " (bilateral)" : SOLVER, p, ws, z,
                      lcp_scaled_tolerance(norms, p->n, z, accept), rep, err);
}

IssimStatus lcp_fischer_newton_ncp(int n, LcpMap map, void *ctx, const double *jacobian,
                                   LcpWorkspace *ws, const LcpNewtonOptions *options, double *z,
                                   LcpReport *report, IssimError *err) {
    if (!map || !jacobian || !ws || !z || n < 1 || n > ws->max_n)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               SOLVER ": bad NCP (size %d, workspace %d, or NULL data)", n,
                               ws ? ws->max_n : 0);
    LcpNewtonOptions o = resolve_options(options);
    LcpReport local = {0};
    LcpReport *rep = report ? report : &local;
    *rep = (LcpReport){0};
    double *w = lcp_vec(ws, LCP_VEC_W);
    for (int i = 0; i < n; i++)
        z[i] = isfinite(z[i]) ? z[i] : 0.0;
    map(ctx, z, w);
    double tol_abs = o.tolerance * fmax(1.0, inf_norm(n, w));
    Newton s = newton_setup(n, map, ctx, jacobian, ws, z);
    if (iterate(&s, o.max_iterations, tol_abs, &rep->iterations, err) != ISSIM_OK)
        return ISSIM_ERR_NUMERIC;
    /* verification on the map itself: clamp round-off negatives, then the three conditions */
    double zmax = inf_norm(n, z), worst = 0.0;
    for (int i = 0; i < n; i++)
        z[i] = fmax(z[i], 0.0);
    map(ctx, z, w);
    for (int i = 0; i < n; i++)
        worst = fmax(worst, fmax(-w[i], fabs(z[i] * w[i])));
    rep->max_violation = worst;
    rep->tolerance =
        fmax(1e3 * o.tolerance, 1e-10) * fmax(1.0, tol_abs / o.tolerance) * fmax(1.0, zmax);
    if (worst <= rep->tolerance && isfinite(worst))
        return ISSIM_OK;
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           SOLVER ": the NCP result violates complementarity by %.3g (tolerance "
                                  "%.3g, size %d)",
                           worst, rep->tolerance, n);
}
