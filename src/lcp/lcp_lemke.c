/* Lemke's complementary pivoting for 001 eq. 7 (A f + b >= 0 compl. to f >= 0; 001 2.2: "It can
 * be solved with the classical Lemke-algorithm").
 *
 * The augmented system w - M z - d z0 = q with the covering vector d = 1 starts from the basis
 * of all w and the artificial z0 entering at max(-q_i); each pivot then brings in the complement
 * of the variable that just left, until z0 leaves (a complementary solution) or no row limits
 * the entering variable (ray termination: no solution Lemke can reach; for a PSD M the LCP is
 * infeasible). The basis inverse B^-1 is kept explicitly (revised form, O(n^2) a pivot), and the
 * ratio test breaks ties lexicographically on the rows of (B^-1 q, B^-1) / column, which rules
 * out cycling on degenerate problems (redundant contacts, q_i = 0).
 *
 * At the end, when the pivots' accumulated round-off shows in the residual (above 1e-13 of the
 * data's scale), the complementary basis is solved again directly (z_S = -M_SS^-1 q_S,
 * LAPACKE); the answer is always verified. A
 * basis kept from an earlier solve is tried first the same way: when it is still feasible the
 * solve costs one factorisation and no pivot.
 */
#include <math.h>
#include <string.h>

#include "lcp_internal.h"

#define SOLVER "Lemke"
/* The round-off accepted as zero in a basic value, relative to max(1, |q|_inf), when z0 leaves
 * on a tie: well below the verification's tolerance (1e-10), above the 1e-15 the ties of
 * friction cones show. */
#define LEMKE_FEASIBLE 1e-12

typedef struct Lemke {
    const LcpProblem *p;
    int n;
    double *binv;        /* n x n, column-major: B^-1 */
    double *x;           /* n: values of the basic variables, B^-1 q */
    double *col;         /* n: the entering column B^-1 A_e */
    const double *cover; /* n: the covering vector d (> 0) */
    double feasible;     /* a basic value above -feasible counts as non-negative (z0's leaving) */
    int *basic;          /* n: the variable basic in each row (0..n-1 w, n..2n-1 z, 2n z0) */
    double pivot_tol;
} Lemke;

LcpLemkeOptions lcp_lemke_options_default(void) {
    return (LcpLemkeOptions){.max_pivots = 0, .tolerance = 1e-10, .pivot_tol = 1e-9};
}

static LcpLemkeOptions resolve_options(const LcpLemkeOptions *o, int n) {
    LcpLemkeOptions r = o ? *o : lcp_lemke_options_default();
    if (r.max_pivots <= 0)
        r.max_pivots = 50 * n + 100;
    if (!(r.tolerance > 0.0))
        r.tolerance = 1e-10;
    if (!(r.pivot_tol > 0.0))
        r.pivot_tol = 1e-9;
    return r;
}

/* col = B^-1 A_e for the entering variable e: A_w_j = e_j, A_z_j = -M e_j, A_z0 = -d. */
static void entering_column(Lemke *l, int e) {
    int n = l->n;
    if (e < n) {
        for (int i = 0; i < n; i++)
            l->col[i] = l->binv[i + (size_t)n * e];
        return;
    }
    for (int i = 0; i < n; i++)
        l->col[i] = 0.0;
    for (int j = 0; j < n; j++) {
        double a = e == 2 * n ? -l->cover[j] : -l->p->matrix[j + (size_t)n * (e - n)];
        if (a == 0.0)
            continue;
        const double *bj = l->binv + (size_t)n * j;
        for (int i = 0; i < n; i++)
            l->col[i] += bj[i] * a;
    }
}

/* Whether row a is lexicographically smaller than row b in (x, B^-1) / col. */
static bool lex_less(const Lemke *l, int a, int b) {
    int n = l->n;
    double ca = l->col[a], cb = l->col[b];
    double va = l->x[a] / ca, vb = l->x[b] / cb;
    double scale = 1e-13 * lcp_max(fabs(va), fabs(vb));
    if (fabs(va - vb) > scale)
        return va < vb;
    for (int j = 0; j < n; j++) {
        va = l->binv[a + (size_t)n * j] / ca;
        vb = l->binv[b + (size_t)n * j] / cb;
        if (fabs(va - vb) > 1e-13 * lcp_max(1.0, lcp_max(fabs(va), fabs(vb))))
            return va < vb;
    }
    return a < b;
}

/* Whether z0 may leave from row a now: pivoting it out leaves every basic variable >= -feasible
 * (x_i - col_i x_a / col_a, O(n)), i.e. its ratio ties the smallest up to round-off. */
static bool artificial_may_leave(const Lemke *l, int a) {
    double ratio = l->x[a] / l->col[a];
    for (int i = 0; i < l->n; i++)
        if (i != a && l->x[i] - l->col[i] * ratio < -l->feasible)
            return false;
    return true;
}

/* The leaving row of the ratio test, -1 when no row limits the entering variable (a ray).
 * z0 leaves whenever its ratio ties the smallest (that ends the solve): on degenerate problems
 * (a sticking contact's opposite directions, gamma's q = 0) the tie is exact, and deciding it on
 * the computed ratios follows their round-off (1e-12 relative after cancellation), which can
 * keep z0 basic and end on a ray exact arithmetic does not reach (the pile's ray terminations).
 * So the tie is judged where it matters, on the values z0's leaving would give. Other ties go
 * by the lexicographic rule. */
static int ratio_test(const Lemke *l) {
    int n = l->n, best = -1, artificial = -1;
    double cmax = 0.0;
    for (int i = 0; i < n; i++)
        cmax = lcp_max(cmax, fabs(l->col[i]));
    double tol = l->pivot_tol * lcp_max(1.0, cmax);
    for (int i = 0; i < n; i++) {
        if (l->col[i] <= tol)
            continue;
        if (l->basic[i] == 2 * n)
            artificial = i;
        if (best < 0 || lex_less(l, i, best))
            best = i;
    }
    if (artificial >= 0 && artificial != best && artificial_may_leave(l, artificial))
        return artificial;
    return best;
}

/* Column by column (B^-1 is column-major), skipping the columns whose pivot-row entry is zero:
 * B^-1 starts as the identity and keeps many unit columns while few pivots have been made. */
static void pivot(Lemke *l, int r, int e) {
    int n = l->n;
    double inv = 1.0 / l->col[r];
    l->x[r] *= inv;
    for (int i = 0; i < n; i++)
        if (i != r)
            l->x[i] -= l->col[i] * l->x[r];
    for (int j = 0; j < n; j++) {
        double *bj = l->binv + (size_t)n * j;
        double rj = bj[r];
        if (rj == 0.0)
            continue;
        rj *= inv;
        for (int i = 0; i < n; i++)
            bj[i] -= l->col[i] * rj;
        bj[r] = rj;
    }
    l->basic[r] = e;
}

/* The first pivot: z0 enters where q / d is most negative (ties: lexicographic on -e_i, the
 * last row), making every basic variable non-negative. */
static int initial_row(const Lemke *l) {
    int r = 0;
    for (int i = 1; i < l->n; i++)
        if (l->x[i] / l->cover[i] <= l->x[r] / l->cover[r])
            r = i;
    return r;
}

static int complement(int var, int n) {
    return var < n ? var + n : var - n;
}

/* Runs the pivots; on success z holds the basic values and z_basic the complementary basis. */
static IssimStatus pivot_to_solution(Lemke *l, int max_pivots, bool *z_basic, double *z,
                                     int *pivots, IssimError *err) {
    int n = l->n;
    memset(l->binv, 0, sizeof(double) * (size_t)n * (size_t)n);
    for (int i = 0; i < n; i++) {
        l->binv[i + (size_t)n * i] = 1.0;
        l->x[i] = l->p->q[i];
        l->basic[i] = i;
    }
    int e = 2 * n, r = initial_row(l);
    entering_column(l, e);
    for (*pivots = 0;; (*pivots)++) {
        if (*pivots >= max_pivots)
            return issim_error_set(err, ISSIM_ERR_NUMERIC,
                                   SOLVER ": pivot limit %d reached on a problem of size %d "
                                          "(cycling or a badly conditioned matrix)",
                                   max_pivots, n);
        int leaving = l->basic[r];
        pivot(l, r, e);
        if (leaving == 2 * n)
            break;
        e = complement(leaving, n);
        entering_column(l, e);
        r = ratio_test(l);
        if (r < 0)
            return issim_error_set(
                err, ISSIM_ERR_NUMERIC,
                SOLVER ": ray termination after %d pivots on %s %d (the LCP of size %d has no "
                       "solution Lemke can reach: infeasible, or the matrix is not "
                       "copositive-plus)",
                *pivots + 1, e < n ? "w" : "z", e % n, n);
    }
    (*pivots)++;
    for (int i = 0; i < n; i++) {
        z[i] = 0.0;
        z_basic[i] = false;
    }
    for (int i = 0; i < n; i++)
        if (l->basic[i] >= n && l->basic[i] < 2 * n) {
            z[l->basic[i] - n] = l->x[i];
            z_basic[l->basic[i] - n] = true;
        }
    return ISSIM_OK;
}

static void keep_basis(LcpBasis *basis, const bool *z_basic, int n) {
    if (!basis || n > basis->max_n)
        return;
    memcpy(basis->z_basic, z_basic, sizeof(bool) * (size_t)n);
    basis->n = n;
}

/* Lemke's pivots from the all-w basis with covering vector `cover`, the refinement and the
 * verification; the complementary basis into ws->flags. */
static IssimStatus solve_cold(const LcpProblem *p, LcpWorkspace *ws, LcpNorms norms,
                              const LcpLemkeOptions *o, const double *cover, double *z,
                              LcpReport *rep, IssimError *err) {
    int n = p->n;
    bool *z_basic = ws->flags;
    Lemke l = {.p = p,
               .n = n,
               .binv = ws->square_a,
               .x = lcp_vec(ws, LCP_VEC_TRIAL),
               .col = lcp_vec(ws, LCP_VEC_COLUMN),
               .basic = ws->index,
               .cover = cover,
               .pivot_tol = o->pivot_tol,
               .feasible = LEMKE_FEASIBLE * lcp_max(1.0, norms.q)};
    bool trivial = true;
    for (int i = 0; i < n; i++)
        trivial = trivial && p->q[i] >= 0.0;
    if (trivial) {
        memset(z, 0, sizeof(double) * (size_t)n);
        memset(z_basic, 0, sizeof(bool) * (size_t)n);
    } else if (pivot_to_solution(&l, o->max_pivots, z_basic, z, &rep->pivots, err) != ISSIM_OK) {
        return ISSIM_ERR_NUMERIC;
    }
    /* Refine when the pivots' round-off shows: the same basis solved directly, kept only if it
     * verifies at least as well. */
    double *refined = lcp_vec(ws, LCP_VEC_STEP);
    double pivoted = trivial ? 0.0 : lcp_violation(p, z, NULL);
    double scale = lcp_scaled_tolerance(norms, n, z, 1.0);
    if (pivoted > 1e-13 * scale && lcp_solve_basis(p, ws, z_basic, refined) &&
        lcp_violation(p, refined, NULL) <= pivoted)
        memcpy(z, refined, sizeof(double) * (size_t)n);
    return lcp_verify(SOLVER, p, ws, z, o->tolerance * scale, rep, err);
}

/* The warm start: the kept basis solved exactly, accepted only when it verifies. */
static bool try_basis(const LcpProblem *p, LcpWorkspace *ws, const LcpBasis *basis, LcpNorms norms,
                      double tol, double *z, LcpReport *report) {
    if (!basis || basis->n != p->n || !lcp_solve_basis(p, ws, basis->z_basic, z))
        return false;
    return lcp_verify(SOLVER, p, ws, z, lcp_scaled_tolerance(norms, p->n, z, tol), report, NULL) ==
           ISSIM_OK;
}

IssimStatus lcp_lemke(const LcpProblem *p, LcpWorkspace *ws, LcpBasis *basis,
                      const LcpLemkeOptions *options, double *z, LcpReport *report,
                      IssimError *err) {
    LcpNorms norms;
    if (lcp_check_problem(SOLVER, p, ws, &norms, err) != ISSIM_OK)
        return err ? err->status : ISSIM_ERR_INVALID;
    int n = p->n;
    LcpLemkeOptions o = resolve_options(options, n);
    LcpReport local = {0};
    LcpReport *rep = report ? report : &local;
    *rep = (LcpReport){0};
    if (try_basis(p, ws, basis, norms, o.tolerance, z, rep)) {
        rep->warm_started = true;
        return ISSIM_OK;
    }
    if (basis && basis->n == n)
        rep->warm_rejected = true;
    double *cover = lcp_vec(ws, LCP_VEC_GRAD);
    for (int i = 0; i < n; i++)
        cover[i] = 1.0;
    IssimStatus s = solve_cold(p, ws, norms, &o, cover, z, rep, err);
    if (s == ISSIM_ERR_NUMERIC) {
        /* a second path from another covering vector (Lemke's theory holds for any d > 0): on
         * degenerate, badly conditioned problems (friction cones of several contacts on few
         * bodies: B^-1 entries of 1e-18 that are zeros) round-off can still turn the lexicographic
         * path onto a ray; another path usually avoids it. */
        for (int i = 0; i < n; i++)
            cover[i] = 1.0 + (double)i / n;
        int first_pivots = rep->pivots;
        rep->restarts = 1;
        s = solve_cold(p, ws, norms, &o, cover, z, rep, err);
        rep->pivots += first_pivots;
    }
    if (s == ISSIM_OK)
        keep_basis(basis, ws->flags, n);
    else if (basis)
        lcp_basis_reset(basis);
    return s;
}
