/* Tests for issim/lcp.h: Lemke against Fischer-Newton on contact-like LCPs (001 eq. 7, bodies
 * with random SPD inertia, random normals and lever arms, K up to 200), degenerate and redundant
 * PSD problems, ray termination, warm starts, 001 2.1's bilateral method and the NCP form. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "issim/lcp.h"
#include "issim/math.h"

typedef struct Problem {
    int n;
    double *matrix, *q;
    LcpProblem lcp;
} Problem;

static Problem problem_new(int n) {
    Problem p = {.n = n,
                 .matrix = calloc((size_t)n * (size_t)n, sizeof(double)),
                 .q = calloc((size_t)n, sizeof(double))};
    assert_non_null(p.matrix);
    assert_non_null(p.q);
    p.lcp = (LcpProblem){.n = n, .matrix = p.matrix, .q = p.q};
    return p;
}

static void problem_free(Problem *p) {
    free(p->matrix);
    free(p->q);
}

/* Smallest and largest eigenvalue, and the largest asymmetry |A - A^T|. */
static void spectrum(const Problem *p, double *lo, double *hi, double *asymmetry) {
    int n = p->n;
    double *a = malloc(sizeof(double) * (size_t)n * (size_t)n), *ev = malloc(sizeof(double) * n);
    assert_non_null(a);
    assert_non_null(ev);
    *asymmetry = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            *asymmetry = fmax(*asymmetry, fabs(p->matrix[i + n * j] - p->matrix[j + n * i]));
    memcpy(a, p->matrix, sizeof(double) * (size_t)n * (size_t)n);
    assert_int_equal(linalg_symmetric_eigen(n, a, ev, false), 0);
    *lo = ev[0];
    *hi = ev[n - 1];
    free(a);
    free(ev);
}

static double max_difference(int n, const double *a, const double *b) {
    double d = 0.0;
    for (int i = 0; i < n; i++)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

static LcpWorkspace *workspace(int n) {
    LcpWorkspace *ws = lcp_workspace_create(n, NULL);
    assert_non_null(ws);
    return ws;
}

/* ===== Positive definite: a unique solution, both methods agree ===== */

static void test_pd_lemke_matches_fischer_newton(void **state) {
    (void)state;
    static const int sizes[] = {10, 50, 100, 200};
    LcpWorkspace *ws = workspace(200);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            int k = sizes[s];
            Problem p = problem_new(k);
            /* 6K velocity unknowns for K contacts: generically PD */
            lcp_contact_problem(k, k, seed * 7919 + (uint64_t)k, p.matrix, p.q);
            double lo, hi, asym;
            spectrum(&p, &lo, &hi, &asym);
            assert_true(asym <= 1e-14 * hi);
            assert_true(lo > 1e-6 * hi);
            double *zl = calloc((size_t)k, sizeof(double)), *zn = calloc((size_t)k, sizeof(double));
            LcpReport rl, rn;
            IssimError err = {0};
            assert_int_equal(lcp_lemke(&p.lcp, ws, NULL, NULL, zl, &rl, &err), ISSIM_OK);
            assert_int_equal(lcp_fischer_newton(&p.lcp, ws, NULL, zn, &rn, &err), ISSIM_OK);
            double diff = max_difference(k, zl, zn);
            int active = 0;
            for (int i = 0; i < k; i++)
                active += zl[i] > 0.0;
            printf("PD K = %3d seed %d: eig [%.3g, %.3g], %d active, Lemke %d pivots (violation "
                   "%.2g), Newton %d iterations (%.2g), max |z_L - z_N| = %.3g\n",
                   k, (int)seed, lo, hi, active, rl.pivots, rl.max_violation, rn.iterations,
                   rn.max_violation, diff);
            assert_true(active > 0 && active < k); /* a real complementarity problem */
            assert_true(diff <= 1e-9);
            assert_true(rl.max_violation <= 1e-9);
            free(zl);
            free(zn);
            problem_free(&p);
        }
    }
    lcp_workspace_destroy(ws);
}

/* The bilateral method of 001 2.1 reaches the same unique solution. */
static void test_bilateral_matches_lemke(void **state) {
    (void)state;
    LcpWorkspace *ws = workspace(60);
    for (uint64_t seed = 11; seed <= 15; seed++) {
        Problem p = problem_new(60);
        lcp_contact_problem(20, 60, seed, p.matrix, p.q);
        double zl[60] = {0}, zb[60] = {0};
        LcpNewtonOptions o = lcp_newton_options_default();
        o.bilateral = true;
        LcpReport rb;
        IssimError err = {0};
        assert_int_equal(lcp_lemke(&p.lcp, ws, NULL, NULL, zl, NULL, &err), ISSIM_OK);
        assert_int_equal(lcp_fischer_newton(&p.lcp, ws, &o, zb, &rb, &err), ISSIM_OK);
        printf("bilateral seed %d: %d set changes, max |z_L - z_B| = %.3g\n", (int)seed,
               rb.iterations, max_difference(60, zl, zb));
        assert_true(max_difference(60, zl, zb) <= 1e-9);
        problem_free(&p);
    }
    lcp_workspace_destroy(ws);
}

/* ===== Positive semidefinite, singular, redundant ===== */

/* q = -A z* + w* for a complementary pair (z*, w*) >= 0: feasible by construction. */
static void feasible_q(Problem *p, uint64_t seed) {
    TestRng rng = {seed};
    int n = p->n;
    double *zs = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; i++) {
        bool z_side = test_rng_uniform(&rng) < 0.5;
        double v = test_rng_range(&rng, 0.0, 1.0);
        zs[i] = z_side ? v : 0.0;
        p->q[i] = z_side ? 0.0 : v;
        if (i % 7 == 3)
            zs[i] = p->q[i] = 0.0; /* degenerate: both zero */
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            p->q[i] -= p->matrix[i + n * j] * zs[j];
    free(zs);
}

static void check_solution(const Problem *p, const double *z, const char *what) {
    double *w = malloc(sizeof(double) * p->n);
    double v = lcp_violation(&p->lcp, z, w);
    double zmax = 0.0;
    for (int i = 0; i < p->n; i++)
        zmax = fmax(zmax, z[i]);
    printf("%s: violation %.3g, max z %.3g\n", what, v, zmax);
    assert_true(v <= 1e-8 * fmax(1.0, zmax));
    free(w);
}

static void test_psd_singular_solved(void **state) {
    (void)state;
    /* 60 contacts on 3 bodies: 18 velocity unknowns, A has rank 18 */
    LcpWorkspace *ws = workspace(60);
    for (uint64_t seed = 21; seed <= 24; seed++) {
        Problem p = problem_new(60);
        lcp_contact_problem(3, 60, seed, p.matrix, NULL);
        feasible_q(&p, seed);
        double lo, hi, asym;
        spectrum(&p, &lo, &hi, &asym);
        printf("PSD seed %d: eig [%.3g, %.3g]\n", (int)seed, lo, hi);
        assert_true(lo > -1e-12 * hi && lo < 1e-10 * hi); /* singular PSD */
        double z[60] = {0};
        LcpReport r;
        IssimError err = {0};
        assert_int_equal(lcp_lemke(&p.lcp, ws, NULL, NULL, z, &r, &err), ISSIM_OK);
        check_solution(&p, z, "PSD Lemke");
        memset(z, 0, sizeof z);
        IssimStatus s = lcp_fischer_newton(&p.lcp, ws, NULL, z, &r, &err);
        /* Newton on a singular problem may stall; if it returns success the answer is valid */
        if (s == ISSIM_OK)
            check_solution(&p, z, "PSD Fischer-Newton");
        else
            printf("PSD Fischer-Newton reported: %s\n", err.message);
        problem_free(&p);
    }
    lcp_workspace_destroy(ws);
}

/* Every contact twice (identical rows and columns): redundant contacts of a face manifold. */
static void test_redundant_contacts(void **state) {
    (void)state;
    enum { K = 20 };
    Problem base = problem_new(K), p = problem_new(2 * K);
    lcp_contact_problem(10, K, 31, base.matrix, base.q);
    for (int i = 0; i < 2 * K; i++) {
        p.q[i] = base.q[i % K];
        for (int j = 0; j < 2 * K; j++)
            p.matrix[i + 2 * K * j] = base.matrix[i % K + K * (j % K)];
    }
    LcpWorkspace *ws = workspace(2 * K);
    double z[2 * K] = {0}, zb[K] = {0};
    IssimError err = {0};
    assert_int_equal(lcp_lemke(&p.lcp, ws, NULL, NULL, z, NULL, &err), ISSIM_OK);
    check_solution(&p, z, "redundant Lemke");
    assert_int_equal(lcp_lemke(&base.lcp, ws, NULL, NULL, zb, NULL, &err), ISSIM_OK);
    /* the pair's total is the single contact's (unique), however it is shared */
    for (int i = 0; i < K; i++)
        assert_near(z[i] + z[i + K], zb[i], 1e-9);
    lcp_workspace_destroy(ws);
    problem_free(&base);
    problem_free(&p);
}

/* ===== No solution ===== */

static void test_ray_termination_reported(void **state) {
    (void)state;
    /* PSD, infeasible: w1 + w2 = -2 for every z */
    double m[4] = {1, -1, -1, 1}, q[2] = {-1, -1}, z[2] = {0};
    LcpProblem p = {.n = 2, .matrix = m, .q = q};
    LcpWorkspace *ws = workspace(2);
    IssimError err = {0};
    assert_int_equal(lcp_lemke(&p, ws, NULL, NULL, z, NULL, &err), ISSIM_ERR_NUMERIC);
    printf("Lemke: %s\n", err.message);
    assert_non_null(strstr(err.message, "ray termination"));
    assert_int_equal(lcp_fischer_newton(&p, ws, NULL, z, NULL, &err), ISSIM_ERR_NUMERIC);
    printf("Fischer-Newton: %s\n", err.message);
    LcpNewtonOptions o = lcp_newton_options_default();
    o.bilateral = true;
    assert_int_equal(lcp_fischer_newton(&p, ws, &o, z, NULL, &err), ISSIM_ERR_NUMERIC);
    printf("bilateral: %s\n", err.message);
    /* negative definite, q < 0: no solution either */
    double neg[1] = {-1}, qn[1] = {-1};
    LcpProblem p1 = {.n = 1, .matrix = neg, .q = qn};
    assert_int_equal(lcp_lemke(&p1, ws, NULL, NULL, z, NULL, &err), ISSIM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "ray termination"));
    lcp_workspace_destroy(ws);
}

static void test_bad_input_refused(void **state) {
    (void)state;
    double m[4] = {2, 0, 0, 2}, q[2] = {NAN, -1}, z[2] = {0};
    LcpProblem p = {.n = 2, .matrix = m, .q = q};
    LcpWorkspace *ws = workspace(2);
    IssimError err = {0};
    assert_int_equal(lcp_lemke(&p, ws, NULL, NULL, z, NULL, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "q[0]"));
    q[0] = 1.0;
    p.n = 3;
    assert_int_equal(lcp_fischer_newton(&p, ws, NULL, z, NULL, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "size 3"));
    assert_null(lcp_workspace_create(0, &err));
    /* q >= 0: z = 0 */
    p.n = 2;
    z[0] = z[1] = 5.0;
    q[1] = 0.5;
    assert_int_equal(lcp_lemke(&p, ws, NULL, NULL, z, NULL, &err), ISSIM_OK);
    assert_true(z[0] == 0.0 && z[1] == 0.0);
    lcp_workspace_destroy(ws);
}

/* ===== Warm start ===== */

static void test_warm_start_from_basis(void **state) {
    (void)state;
    enum { K = 100 };
    Problem p = problem_new(K);
    lcp_contact_problem(40, K, 77, p.matrix, p.q);
    LcpWorkspace *ws = workspace(K);
    LcpBasis *basis = lcp_basis_create(K, NULL);
    assert_non_null(basis);
    double z[K], zc[K];
    LcpReport cold, warm;
    IssimError err = {0};
    assert_int_equal(lcp_lemke(&p.lcp, ws, basis, NULL, z, &cold, &err), ISSIM_OK);
    assert_int_equal(lcp_basis_size(basis), K);
    assert_false(cold.warm_started);
    /* the next time step: slightly different q, same active set */
    for (int i = 0; i < K; i++)
        p.q[i] += 1e-7 * sin(i);
    assert_int_equal(lcp_lemke(&p.lcp, ws, basis, NULL, z, &warm, &err), ISSIM_OK);
    assert_int_equal(lcp_lemke(&p.lcp, ws, NULL, NULL, zc, NULL, &err), ISSIM_OK);
    printf("warm start: cold %d pivots, warm %d pivots, |z_warm - z_cold| = %.3g\n", cold.pivots,
           warm.pivots, max_difference(K, z, zc));
    assert_true(warm.warm_started);
    assert_int_equal(warm.pivots, 0);
    assert_true(cold.pivots > 10);
    assert_true(max_difference(K, z, zc) <= 1e-9);
    /* a basis that no longer fits falls back to pivoting, still right */
    for (int i = 0; i < K; i++)
        p.q[i] = -p.q[i];
    assert_int_equal(lcp_lemke(&p.lcp, ws, basis, NULL, z, &warm, &err), ISSIM_OK);
    assert_false(warm.warm_started);
    check_solution(&p, z, "after a stale basis");
    lcp_basis_destroy(basis);
    lcp_workspace_destroy(ws);
    problem_free(&p);
}

/* ===== NCP (001 eq. 5 with a nonlinear distance) ===== */

typedef struct Cubic {
    const Problem *p;
} Cubic;

/* w = A z + q + 0.1 z^3 (componentwise): a monotone nonlinear map. */
static void cubic_map(void *ctx, const double *z, double *w) {
    const Problem *p = ((const Cubic *)ctx)->p;
    for (int i = 0; i < p->n; i++) {
        w[i] = p->q[i] + 0.1 * z[i] * z[i] * z[i];
        for (int j = 0; j < p->n; j++)
            w[i] += p->matrix[i + p->n * j] * z[j];
    }
}

static void test_ncp_nonlinear_map(void **state) {
    (void)state;
    enum { K = 30 };
    Problem p = problem_new(K);
    lcp_contact_problem(10, K, 5, p.matrix, p.q);
    for (int i = 0; i < K; i++)
        p.q[i] *= 3.0;
    LcpWorkspace *ws = workspace(K);
    Cubic c = {&p};
    double z[K] = {0}, w[K];
    LcpReport r;
    IssimError err = {0};
    /* the Jacobian at z = 0 only: the line search on the true map does the rest */
    assert_int_equal(lcp_fischer_newton_ncp(K, cubic_map, &c, p.matrix, ws, NULL, z, &r, &err),
                     ISSIM_OK);
    cubic_map(&c, z, w);
    double worst = 0.0;
    for (int i = 0; i < K; i++)
        worst = fmax(worst, fmax(fmax(-z[i], -w[i]), fabs(z[i] * w[i])));
    printf("NCP: %d iterations, violation %.3g\n", r.iterations, worst);
    assert_true(worst <= 1e-9);
    lcp_workspace_destroy(ws);
    problem_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pd_lemke_matches_fischer_newton),
        cmocka_unit_test(test_bilateral_matches_lemke),
        cmocka_unit_test(test_psd_singular_solved),
        cmocka_unit_test(test_redundant_contacts),
        cmocka_unit_test(test_ray_termination_reported),
        cmocka_unit_test(test_bad_input_refused),
        cmocka_unit_test(test_warm_start_from_basis),
        cmocka_unit_test(test_ncp_nonlinear_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
