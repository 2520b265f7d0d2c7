/* Linear complementarity problems: find z with
 *
 *   w = M z + q >= 0,   z >= 0,   z . w = 0          (001 eq. 7: A f + b >= 0 compl. to f >= 0)
 *
 * Pure numerics, no engine dependency. Two direct methods:
 *   - lcp_lemke: Lemke's complementary pivoting with the covering vector d = 1 and lexicographic
 *     degeneracy resolution; warm start from the basis of an earlier solve (LcpBasis).
 *   - lcp_fischer_newton: 001 2.1's reformulation Phi(z) = 0 by the Fischer function
 *     phi(a, b) = sqrt(a^2 + b^2) - a - b, solved by a damped semismooth Newton method (Armijo
 *     line search, LAPACKE for the linear systems); lcp_fischer_newton_ncp takes a nonlinear
 *     w(z) (001 eq. 5: contact distances after the step) with a Jacobian approximation. Its
 *     bilateral option is 001 2.1's first method: contacts as equalities w = 0, released while
 *     their force turns negative.
 *
 * Every solver verifies its answer (w >= -tol, z >= -tol, |z_i w_i| <= tol, tol scaled by the
 * data, LcpReport) before it returns ISSIM_OK; anything else (ray termination, pivot limit,
 * Newton stall, a singular system) is ISSIM_ERR_NUMERIC with a message: never a silent wrong
 * answer.
 *
 * Memory: a solve allocates nothing. It uses a caller-owned LcpWorkspace created for a largest
 * size; a problem larger than that is refused (ISSIM_ERR_INVALID). Thread: any (one workspace and
 * one basis per thread at a time).
 */
#ifndef ISSIM_LCP_H
#define ISSIM_LCP_H

#include <stdbool.h>
#include <stdint.h>

#include "issim/core.h"

/* ===== Problem, workspace, basis ===== */

typedef struct LcpProblem {
    int n;
    const double *matrix; /* n x n, column-major: M (Borrowed) */
    const double *q;      /* n (Borrowed) */
} LcpProblem;

/* Caller-owned scratch for problems of size <= max_n (about 3 max_n^2 doubles). */
typedef struct LcpWorkspace LcpWorkspace;
LcpWorkspace *lcp_workspace_create(int max_n, IssimError *err);
void lcp_workspace_destroy(LcpWorkspace *ws); /* NULL: no-op */
int lcp_workspace_max_n(const LcpWorkspace *ws);

/* The complementary basis of a solution: for each i, whether z_i (true) or w_i (false) is
 * basic. Kept by the caller between solves of similar problems (successive time steps, the
 * fixpoint iteration of 001 2.2) to start Lemke from it. */
typedef struct LcpBasis LcpBasis;
LcpBasis *lcp_basis_create(int max_n, IssimError *err);
void lcp_basis_destroy(LcpBasis *basis); /* NULL: no-op */
/* Forgets the basis (the next solve starts cold). */
void lcp_basis_reset(LcpBasis *basis);
/* The largest problem the basis was made for. */
int lcp_basis_max_n(const LcpBasis *basis);
/* Size of the stored basis, 0 when empty. */
int lcp_basis_size(const LcpBasis *basis);
/* Whether z_i is basic (i < lcp_basis_size). */
bool lcp_basis_z_basic(const LcpBasis *basis, int i);

/* What a solve did. */
typedef struct LcpReport {
    int pivots;           /* Lemke: pivots (0 when the warm-start basis solved it) */
    int iterations;       /* Newton: iterations; bilateral: active-set changes */
    bool warm_started;    /* Lemke: the given basis was complementary feasible */
    bool warm_rejected;   /* Lemke: a basis of this size was given but is not feasible for this
                           * q, so Lemke started cold */
    int restarts;         /* Lemke: 1 when the first covering vector's path failed (a ray, the
                           * pivot limit or a result that does not verify) and a second ran */
    double max_violation; /* max(-min w, -min z, max |z_i w_i|) of the returned z */
    double tolerance;     /* the violation accepted (scaled by the data) */
} LcpReport;

/* ===== Lemke ===== */

typedef struct LcpLemkeOptions {
    int max_pivots;   /* 0: 50 n + 100 */
    double tolerance; /* relative complementarity tolerance; 0: 1e-10 */
    double pivot_tol; /* smallest entry accepted as a pivot, relative to the column's largest;
                         0: 1e-9 (a round-off zero taken as a pivot ruins B^-1) */
} LcpLemkeOptions;

LcpLemkeOptions lcp_lemke_options_default(void);

/* Solves the LCP into z (n). basis is Nullable: when it holds a basis of size n, that basis is
 * tried first (one linear solve); on success it is replaced by the solution's basis. options
 * Nullable (defaults). Errors: ISSIM_ERR_INVALID (n out of range, NULL data, non-finite data),
 * ISSIM_ERR_NUMERIC ("ray termination": the LCP has no solution Lemke can reach, e.g. an
 * infeasible PSD problem; "pivot limit"; a result that fails verification). report Nullable. */
IssimStatus lcp_lemke(const LcpProblem *problem, LcpWorkspace *ws, LcpBasis *basis,
                      const LcpLemkeOptions *options, double *z, LcpReport *report,
                      IssimError *err);

/* ===== Fischer-Newton (001 2.1) ===== */

typedef struct LcpNewtonOptions {
    int max_iterations; /* 0: 100 */
    double tolerance;   /* on |Phi|_inf, relative; 0: 1e-12 */
    bool bilateral;     /* 001 2.1's first method instead of the Fischer function */
} LcpNewtonOptions;

LcpNewtonOptions lcp_newton_options_default(void);

/* Solves the LCP into z (n); z holds the starting point on entry (zeros are fine). Errors:
 * ISSIM_ERR_INVALID as for Lemke; ISSIM_ERR_NUMERIC when Newton stalls (the line search finds no
 * decrease, the iteration limit) or the result fails verification. */
IssimStatus lcp_fischer_newton(const LcpProblem *problem, LcpWorkspace *ws,
                               const LcpNewtonOptions *options, double *z, LcpReport *report,
                               IssimError *err);

/* w(z) of a nonlinear complementarity problem 0 <= z _|_ w(z) >= 0 (n values into w). */
typedef void (*LcpMap)(void *ctx, const double *z, double *w);

/* The NCP 0 <= z _|_ w(z) >= 0 by the Fischer function (001 eq. 5). jacobian (n x n,
 * column-major, Borrowed) approximates dw/dz (exact for an affine map); residuals and the line
 * search use map itself. Same errors as lcp_fischer_newton; bilateral is not available here. */
IssimStatus lcp_fischer_newton_ncp(int n, LcpMap map, void *ctx, const double *jacobian,
                                   LcpWorkspace *ws, const LcpNewtonOptions *options, double *z,
                                   LcpReport *report, IssimError *err);

/* ===== Checks and test problems ===== */

/* max(-min w, -min z, max |z_i w_i|) for w = M z + q (w into w_out, Nullable). */
double lcp_violation(const LcpProblem *problem, const double *z, double *w_out);

/* A contact-like LCP for tests and benchmarks (001 eq. 7): `bodies` free bodies with random
 * masses in [0.5, 2] kg and random SPD inertia, `contacts` contacts each between a random body
 * and the ground or two random bodies, with random unit normals and lever arms up to 0.5 m:
 * matrix = Jn M^-1 Jn^T (contacts^2, column-major), q random in [-1, 1] (when q is not NULL).
 * Deterministic in seed (non-zero). PD when contacts <= 6 bodies (generically), PSD otherwise. */
void lcp_contact_problem(int bodies, int contacts, uint64_t seed, double *matrix, double *q);

#endif
