/* issim-bench lcp: per-solve time of our Lemke (issim/lcp.h) on the contact-like LCPs of 001
 * eq. 7 (lcp_contact_problem: K contacts on K random bodies, PD, about half the contacts
 * active) at K = 10, 50, 100, 200, and of Siconos numerics' lcp_lexicolemke on the same problems
 * when the build found it (Debian libsiconos-numerics-dev; ISSIM_HAVE_SICONOS): the medians of
 * the per-solve times over BL_PROBLEMS problems, their ratio and max |z - z_siconos|. Also
 * Fischer-Newton and a warm-started Lemke (the basis of the same problem with q perturbed by
 * 1e-7, as between two time steps). Target (issue 15): faster than Siconos at every K, same
 * solutions. Usage: issim-bench lcp. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/lcp.h"

#ifdef ISSIM_HAVE_SICONOS
#include <LCP_Solvers.h>
#include <LinearComplementarityProblem.h>
#include <NumericsMatrix.h>
#include <SolverOptions.h>
#include <lcp_cst.h>
#endif

#define BL_PROBLEMS 7
#define BL_MIN_SECONDS 0.05 /* repeat a solve until this much time has passed */

typedef struct BenchProblem {
    int k;
    double *matrix, *q, *q_next, *z, *z_other;
} BenchProblem;

typedef IssimStatus (*Solve)(BenchProblem *p, void *ctx);

typedef struct OurCtx {
    LcpWorkspace *ws;
    LcpBasis *basis;
    bool newton, warm;
} OurCtx;

static IssimStatus solve_ours(BenchProblem *p, void *ctx) {
    OurCtx *c = ctx;
    LcpProblem lcp = {.n = p->k, .matrix = p->matrix, .q = c->warm ? p->q_next : p->q};
    if (c->newton) {
        memset(p->z, 0, sizeof(double) * (size_t)p->k);
        return lcp_fischer_newton(&lcp, c->ws, NULL, p->z, NULL, NULL);
    }
    if (c->warm) {
        /* the basis of the previous step (q), then this step's problem (q_next) */
        LcpProblem before = {.n = p->k, .matrix = p->matrix, .q = p->q};
        if (lcp_basis_size(c->basis) != p->k &&
            lcp_lemke(&before, c->ws, c->basis, NULL, p->z, NULL, NULL) != ISSIM_OK)
            return ISSIM_ERR_NUMERIC;
        return lcp_lemke(&lcp, c->ws, c->basis, NULL, p->z, NULL, NULL);
    }
    return lcp_lemke(&lcp, c->ws, NULL, NULL, p->z, NULL, NULL);
}

/* Seconds per solve: repeated until BL_MIN_SECONDS; -1 on a failed solve. */
static double time_solve(Solve solve, BenchProblem *p, void *ctx) {
    int reps = 0;
    double t0 = bench_now(), t = t0;
    while (t - t0 < BL_MIN_SECONDS || reps < 3) {
        if (solve(p, ctx) != ISSIM_OK)
            return -1.0;
        reps++;
        t = bench_now();
    }
    return (t - t0) / reps;
}

#ifdef ISSIM_HAVE_SICONOS
typedef struct SiconosCtx {
    LinearComplementarityProblem lcp;
    SolverOptions *options;
    double *w;
    int info;
} SiconosCtx;

static IssimStatus solve_siconos(BenchProblem *p, void *ctx) {
    SiconosCtx *c = ctx;
    memset(p->z_other, 0, sizeof(double) * (size_t)p->k);
    lcp_lexicolemke(&c->lcp, p->z_other, c->w, &c->info, c->options);
    return c->info == 0 ? ISSIM_OK : ISSIM_ERR_NUMERIC;
}

/* Siconos' time per solve into *seconds and max |z - z_siconos| (z: ours). */
static double siconos_compare(BenchProblem *p, double *seconds) {
    SiconosCtx c = {.options = solver_options_create(SICONOS_LCP_LEMKE)};
    c.lcp.size = p->k;
    c.lcp.M = NM_create(NM_DENSE, p->k, p->k);
    memcpy(c.lcp.M->matrix0, p->matrix, sizeof(double) * (size_t)p->k * (size_t)p->k);
    c.lcp.q = p->q;
    c.w = calloc((size_t)p->k, sizeof(double));
    c.options->iparam[SICONOS_IPARAM_MAX_ITER] = 50 * p->k + 100;
    *seconds = time_solve(solve_siconos, p, &c);
    double diff = 0.0;
    for (int i = 0; i < p->k; i++)
        diff = fmax(diff, fabs(p->z[i] - p->z_other[i]));
    NM_free(c.lcp.M); /* frees the struct too, as solver_options_delete does */
    solver_options_delete(c.options);
    free(c.w);
    return *seconds < 0.0 ? INFINITY : diff;
}
#endif

static BenchProblem problem_make(int k, uint64_t seed) {
    BenchProblem p = {.k = k,
                      .matrix = malloc(sizeof(double) * (size_t)k * (size_t)k),
                      .q = malloc(sizeof(double) * (size_t)k),
                      .q_next = malloc(sizeof(double) * (size_t)k),
                      .z = calloc((size_t)k, sizeof(double)),
                      .z_other = calloc((size_t)k, sizeof(double))};
    lcp_contact_problem(k, k, seed, p.matrix, p.q);
    for (int i = 0; i < k; i++)
        p.q_next[i] = p.q[i] + 1e-7 * sin(i);
    return p;
}

static void problem_free(BenchProblem *p) {
    free(p->matrix);
    free(p->q);
    free(p->q_next);
    free(p->z);
    free(p->z_other);
}

int bench_lcp(int argc, char **argv) {
    (void)argc;
    (void)argv;
    static const int sizes[] = {10, 50, 100, 200};
    printf("# lcp: contact-like LCPs (K contacts on K bodies, PD), median over %d problems of the "
           "time per solve\n",
           BL_PROBLEMS);
    printf("# %4s %12s %12s %12s %14s %10s %14s\n", "K", "lemke_us", "warm_us", "newton_us",
           "siconos_us", "ratio", "max_dz");
    int rc = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int k = sizes[s];
        double t_lemke[BL_PROBLEMS], t_warm[BL_PROBLEMS], t_newton[BL_PROBLEMS];
        double t_siconos[BL_PROBLEMS], max_dz = 0.0;
        LcpWorkspace *ws = lcp_workspace_create(k, NULL);
        LcpBasis *basis = lcp_basis_create(k, NULL);
        for (int j = 0; j < BL_PROBLEMS; j++) {
            BenchProblem p = problem_make(k, 1000u * (uint64_t)k + (uint64_t)j + 1u);
            OurCtx cold = {.ws = ws}, newton = {.ws = ws, .newton = true},
                   warm = {.ws = ws, .basis = basis, .warm = true};
            lcp_basis_reset(basis);
            t_warm[j] = time_solve(solve_ours, &p, &warm);
            t_newton[j] = time_solve(solve_ours, &p, &newton);
            t_lemke[j] = time_solve(solve_ours, &p, &cold); /* last: p.z is the cold answer */
            t_siconos[j] = 0.0;
#ifdef ISSIM_HAVE_SICONOS
            max_dz = fmax(max_dz, siconos_compare(&p, &t_siconos[j]));
#endif
            if (t_lemke[j] < 0 || t_warm[j] < 0 || t_newton[j] < 0 || t_siconos[j] < 0)
                rc = 1;
            problem_free(&p);
        }
        double lemke = bench_quantile(t_lemke, BL_PROBLEMS, 0.5);
        double warm = bench_quantile(t_warm, BL_PROBLEMS, 0.5);
        double newton = bench_quantile(t_newton, BL_PROBLEMS, 0.5);
        double siconos = bench_quantile(t_siconos, BL_PROBLEMS, 0.5);
#ifdef ISSIM_HAVE_SICONOS
        printf("  %4d %12.2f %12.2f %12.2f %14.2f %10.2f %14.3g\n", k, 1e6 * lemke, 1e6 * warm,
               1e6 * newton, 1e6 * siconos, siconos / lemke, max_dz);
#else
        printf("  %4d %12.2f %12.2f %12.2f %14s %10s %14s\n", k, 1e6 * lemke, 1e6 * warm,
               1e6 * newton, "n/a", "n/a", "n/a");
#endif
        lcp_basis_destroy(basis);
        lcp_workspace_destroy(ws);
    }
#ifndef ISSIM_HAVE_SICONOS
    printf("# Siconos numerics not found at configure time: no comparison "
           "(apt-get install libsiconos-numerics-dev, then reconfigure)\n");
#endif
    printf("# ratio = siconos / lemke (> 1: ours faster); max_dz = max |z - z_siconos|\n");
    if (rc)
        fprintf(stderr, "lcp: a solve failed\n");
    return rc;
}
