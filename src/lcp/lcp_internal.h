/* Shared internals of the LCP solvers: the workspace layout, the basis record, verification. */
#ifndef ISSIM_LCP_INTERNAL_H
#define ISSIM_LCP_INTERNAL_H

#include "issim/lcp.h"

struct LcpWorkspace {
    int max_n;
    double *square_a; /* max_n^2: Lemke's B^-1, Newton's Jacobian */
    double *square_b; /* max_n^2: the basis / active-set system factorised by LAPACKE */
    double *vec;      /* 8 max_n: named below */
    int *ipiv;        /* max_n */
    int *index;       /* 2 max_n: Lemke's basic variable per row, the active set */
    bool *flags;      /* max_n: a complementary basis (z_i basic) */
};

/* The vectors of a workspace, each max_n long. */
enum {
    LCP_VEC_RHS,
    LCP_VEC_COLUMN,
    LCP_VEC_W,
    LCP_VEC_PHI,
    LCP_VEC_STEP,
    LCP_VEC_TRIAL,
    LCP_VEC_TRIAL_W,
    LCP_VEC_GRAD,
    LCP_VEC_COUNT
};

static inline double *lcp_vec(const LcpWorkspace *ws, int which) {
    return ws->vec + (size_t)which * (size_t)ws->max_n;
}

struct LcpBasis {
    int max_n, n; /* n: size of the stored basis, 0 when empty */
    bool *z_basic;
};

/* max without a libm call (fmax is not inlined without -ffast-math; NaN never reaches here:
 * lcp_check_problem refuses it). */
static inline double lcp_max(double a, double b) {
    return a > b ? a : b;
}

/* The data's scale: |q|_inf and |M|_inf (the largest absolute row sum). */
typedef struct LcpNorms {
    double q, m;
} LcpNorms;

/* Checks the problem against the workspace (finite data, size) and measures it. */
IssimStatus lcp_check_problem(const char *solver, const LcpProblem *p, const LcpWorkspace *ws,
                              LcpNorms *norms, IssimError *err);

/* The violation accepted for a problem of norms at solution z (n): tolerance times
 * max(1, |q|_inf, |M|_inf |z|_inf) times max(1, |z|_inf) (the product z_i w_i). */
double lcp_scaled_tolerance(LcpNorms norms, int n, const double *z, double tolerance);

/* Solves the complementary basis `z_basic` (n flags) exactly: z_S = -M_SS^-1 q_S, z = 0 off S.
 * Returns false when M_SS is singular or the result is not finite. Uses square_b and ipiv. */
bool lcp_solve_basis(const LcpProblem *p, LcpWorkspace *ws, const bool *z_basic, double *z);

/* Verifies z for p to tol (after clamping tiny negative z to zero); fills report's violation
 * fields. Returns ISSIM_OK or ISSIM_ERR_NUMERIC naming solver. */
IssimStatus lcp_verify(const char *solver, const LcpProblem *p, LcpWorkspace *ws, double *z,
                       double tol, LcpReport *report, IssimError *err);

#endif
