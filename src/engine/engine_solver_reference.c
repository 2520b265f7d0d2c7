/* The reference complementarity solver (engine_complementarity_reference, engine_resolver.h):
 * projected Gauss-Seidel on the normal rows only, with the Delassus matrix A = Jn M^-1 Jn^T
 * formed whole, for the velocity-level problem of 001 2.2 (eqs. 6-7). Frictionless and O(m^2)
 * in memory: it defines what a solver must satisfy (tests/test_engine_stages.c,
 * test_validation_v12_complementarity.c); piles use engine_pgs.c. */
#include <math.h>
#include <stdlib.h>

#include "issim/engine_resolver.h"

static IssimStatus pgs_solve(void *user, const EngineIslandSystem *sys, EngineIslandSolution *out,
                             IssimError *err) {
    (void)user;
    int n = sys->dim, m = sys->contacts;
    /* A = Jn M^-1 Jn^T and b = Jn (u + h M^-1 f) + s / h, formed once per solve: the free
     * velocity once, each row w_i = Jn_i M^-1 once (O(m n^2 + m^2 n)). */
    enum { PGS_MAX_SWEEPS = 500, STACK_ROWS = 64, STACK_DIM = 384 };
    double residual = 0.0;
    int sweep = 0;
    double stack_a[STACK_ROWS * STACK_ROWS + STACK_ROWS], stack_v[2 * STACK_DIM];
    double *amat = stack_a, *vfree = stack_v;
    double *heap = NULL;
    if (m > STACK_ROWS || n > STACK_DIM) {
        heap = malloc(sizeof(double) * ((size_t)m * (size_t)m + (size_t)m + 2 * (size_t)n));
        if (!heap)
            return issim_error_set(err, ISSIM_ERR_NOMEM, "PGS: out of memory for %d rows", m);
        amat = heap;
        vfree = heap + (size_t)m * (size_t)m + (size_t)m;
    }
    double *bvec = amat + (size_t)m * (size_t)m, *wrow = vfree + n;
    for (int r = 0; r < n; r++) {
        double minv_f = 0.0;
        for (int c = 0; c < n; c++)
            minv_f += sys->inv_mass[r + n * c] * sys->force[c];
        vfree[r] = sys->velocity[r] + sys->h * minv_f;
    }
    for (int i = 0; i < m; i++) {
        double free_rate = 0.0;
        for (int r = 0; r < n; r++) {
            double w = 0.0;
            for (int c = 0; c < n; c++)
                w += sys->jn[i + m * c] * sys->inv_mass[c + n * r];
            wrow[r] = w;
            free_rate += sys->jn[i + m * r] * vfree[r];
        }
        bvec[i] = free_rate + sys->gap[i] / sys->h;
        for (int j = 0; j < m; j++) {
            double acc = 0.0;
            for (int r = 0; r < n; r++)
                acc += wrow[r] * sys->jn[j + m * r];
            amat[i + m * j] = acc;
        }
    }
    for (sweep = 0; sweep < PGS_MAX_SWEEPS; sweep++) {
        residual = 0.0;
        for (int i = 0; i < m; i++) {
            if (!(amat[i + m * i] > 0.0))
                continue; /* a row that moves nothing (both sides held) */
            double wi = bvec[i];
            for (int j = 0; j < m; j++)
                wi += amat[i + m * j] * out->lambda_n[j];
            double next = fmax(0.0, out->lambda_n[i] - wi / amat[i + m * i]);
            residual = fmax(residual, fabs(next - out->lambda_n[i]) * amat[i + m * i]);
            out->lambda_n[i] = next;
        }
        if (residual < 1e-12)
            break;
    }
    free(heap);
    out->iterations = sweep;
    out->residual = residual;
    if (!isfinite(residual))
        return issim_error_set(err, ISSIM_ERR_NUMERIC, "PGS diverged (residual %g)", residual);
    return ISSIM_OK;
}

static const EngineComplementaritySolver reference_solver = {.name = "reference_pgs",
                                                             .solve = pgs_solve};

const EngineComplementaritySolver *engine_complementarity_reference(void) {
    return &reference_solver;
}
