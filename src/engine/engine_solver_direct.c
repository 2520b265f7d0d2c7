/* The island data of 001 2.2 for the direct complementarity solvers: A = N^T J^T M^-1 J N (the
 * engine's Jn is 001's N^T J^T), u' = u + h M^-1 (f_ext + Jn^T f) (eq. 2, impulses h f), and
 * delta(s') of the trial step from the engine's gap_after callback. */
#include "engine_solver_direct.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "issim/arena.h"

/* ===== Per-thread memory ===== */

static pthread_key_t memory_key;
static pthread_once_t memory_once = PTHREAD_ONCE_INIT;
static bool memory_key_made;

static void memory_free(void *p) {
    DirectMemory *mem = p;
    free(mem->island);
    free(mem->step);
    lcp_workspace_destroy(mem->island_ws);
    lcp_workspace_destroy(mem->step_ws);
    lcp_basis_destroy(mem->basis);
    free(mem);
}

static void make_memory_key(void) {
    memory_key_made = pthread_key_create(&memory_key, memory_free) == 0;
}

DirectMemory *direct_memory(void) {
    pthread_once(&memory_once, make_memory_key);
    if (!memory_key_made)
        return NULL;
    DirectMemory *mem = pthread_getspecific(memory_key);
    if (!mem) {
        mem = calloc(1, sizeof *mem);
        if (mem && pthread_setspecific(memory_key, mem) != 0) {
            free(mem);
            mem = NULL;
        }
    }
    return mem;
}

void *direct_memory_block(void **block, size_t *have, size_t bytes) {
    if (*have >= bytes)
        return *block;
    size_t grown = *have * 2 > bytes ? *have * 2 : bytes;
    void *p = malloc(grown);
    if (!p)
        return NULL;
    free(*block);
    *block = p;
    *have = grown;
    return p;
}

/* At least n, doubled from the last size: an island one contact larger than any before does not
 * cost a new workspace each time. */
static int grown_size(int have, int n) {
    int size = issim_array_grown_capacity(have, n);
    return size < 4096 ? size : n > 4096 ? n : 4096; /* the LCP module's largest problem */
}

LcpWorkspace *direct_memory_workspace(LcpWorkspace **ws, int n, IssimError *err) {
    int have = *ws ? lcp_workspace_max_n(*ws) : 0;
    if (have >= n)
        return *ws;
    LcpWorkspace *grown = lcp_workspace_create(grown_size(have, n), err);
    if (!grown)
        return NULL;
    lcp_workspace_destroy(*ws);
    *ws = grown;
    return grown;
}

LcpBasis *direct_memory_basis(LcpBasis **basis, int n, IssimError *err) {
    int have = *basis ? lcp_basis_max_n(*basis) : 0;
    if (have >= n) {
        lcp_basis_reset(*basis);
        return *basis;
    }
    LcpBasis *grown = lcp_basis_create(grown_size(have, n), err);
    if (!grown)
        return NULL;
    lcp_basis_destroy(*basis);
    *basis = grown;
    return grown;
}

/* ===== The island's LCP data ===== */

IssimStatus direct_island_init(DirectIsland *d, const EngineIslandSystem *sys, const char *solver,
                               IssimError *err) {
    size_t n = (size_t)sys->dim, m = (size_t)sys->contacts;
    *d = (DirectIsland){.sys = sys, .n = sys->dim, .m = sys->contacts};
    size_t doubles = m * m + n * m + 3 * n + 5 * m; /* the arrays below */
    DirectMemory *mem = direct_memory();
    double *p = mem ? direct_memory_block(&mem->island, &mem->island_bytes,
                                          sizeof(double) * doubles + m * sizeof(bool))
                    : NULL;
    d->ws = mem ? direct_memory_workspace(&mem->island_ws, sys->contacts, err) : NULL;
    if (!p || !d->ws)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory for %zu contacts", solver,
                               m);
    double *arrays[] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t sizes[] = {m * m, n * m, n, n, m, m, m, m, m, n};
    for (size_t i = 0, at = 0; i < sizeof sizes / sizeof *sizes; at += sizes[i], i++)
        arrays[i] = p + at;
    d->a = arrays[0];
    d->mobility = arrays[1];
    d->u_free = arrays[2];
    d->u_trial = arrays[3];
    d->b_free = arrays[4];
    d->gap_start = arrays[5];
    d->d_trial = arrays[6];
    d->b = arrays[7];
    d->scratch = arrays[8];
    d->scratch_n = arrays[9];
    d->held = (bool *)(p + doubles);
    double *zero = d->u_trial; /* the callback's distances before any motion: u = 0 */
    for (size_t r = 0; r < n; r++) {
        double minv_f = 0.0;
        for (size_t c = 0; c < n; c++)
            minv_f += sys->inv_mass[r + n * c] * sys->force[c];
        d->u_free[r] = sys->velocity[r] + sys->h * minv_f;
        zero[r] = 0.0;
    }
    sys->gap_after(sys->ctx, zero, d->gap_start);
    for (size_t i = 0; i < m; i++) {
        double *w = d->mobility + n * i, rate = 0.0;
        for (size_t r = 0; r < n; r++) {
            double acc = 0.0;
            for (size_t c = 0; c < n; c++)
                acc += sys->inv_mass[r + n * c] * sys->jn[i + m * c];
            w[r] = acc;
            rate += sys->jn[i + m * r] * d->u_free[r];
        }
        d->b_free[i] = rate;
    }
    for (size_t j = 0; j < m; j++)
        for (size_t i = 0; i < m; i++) {
            double acc = 0.0;
            for (size_t r = 0; r < n; r++)
                acc += sys->jn[i + m * r] * d->mobility[r + n * j];
            d->a[i + m * j] = acc;
        }
    /* symmetric by construction; make it exactly so (round-off in the two products differs) */
    for (size_t j = 0; j < m; j++)
        for (size_t i = j + 1; i < m; i++)
            d->a[i + m * j] = d->a[j + m * i] = 0.5 * (d->a[i + m * j] + d->a[j + m * i]);
    /* A row no impulse moves (both bodies held) gets A_ii = 1 and b_i >= 0 (direct_rhs): its
     * impulse is zero, as in the reference solver; its off-diagonal entries are zero already
     * (W is SPD, so Jn_i W Jn_i^T = 0 gives Jn_i W = 0). */
    double diag = 0.0;
    for (size_t i = 0; i < m; i++)
        diag = fmax(diag, d->a[i + m * i]);
    for (size_t i = 0; i < m; i++) {
        d->held[i] = !(d->a[i + m * i] > 1e-12 * diag);
        if (d->held[i])
            d->a[i + m * i] = 1.0;
    }
    return ISSIM_OK;
}

void direct_rhs(DirectIsland *d) {
    const EngineIslandSystem *sys = d->sys;
    int n = d->n, m = d->m;
    for (int i = 0; i < m; i++) {
        double rate = 0.0;
        for (int r = 0; r < n; r++)
            rate += sys->jn[i + (size_t)m * r] * d->u_trial[r];
        double nu = -d->d_trial[i] + sys->h * rate;
        d->b[i] = d->b_free[i] - nu / sys->h;
        if (d->held[i])
            d->b[i] = fmax(d->b[i], 0.0);
    }
}

void direct_island_free(DirectIsland *d) {
    *d = (DirectIsland){0};
}

void direct_velocity(DirectIsland *d, const double *lambda) {
    int n = d->n, m = d->m;
    memcpy(d->u_trial, d->u_free, sizeof(double) * (size_t)n);
    for (int i = 0; i < m; i++) {
        if (lambda[i] == 0.0)
            continue;
        const double *w = d->mobility + (size_t)n * i;
        for (int r = 0; r < n; r++)
            d->u_trial[r] += w[r] * lambda[i];
    }
}

void direct_distances(DirectIsland *d) {
    const EngineIslandSystem *sys = d->sys;
    sys->gap_after(sys->ctx, d->u_trial, d->d_trial);
    for (int i = 0; i < d->m; i++)
        d->d_trial[i] = sys->gap[i] + (d->d_trial[i] - d->gap_start[i]);
}

IssimStatus direct_check_step(DirectIsland *d, const double *lambda, double *residual,
                              IssimError *err) {
    const double tol = 1e-9;
    direct_distances(d);
    double worst = 0.0, lmax = 0.0;
    for (int i = 0; i < d->m; i++)
        lmax = fmax(lmax, lambda[i]);
    for (int i = 0; i < d->m; i++) {
        if (d->held[i])
            continue;
        /* the product in length units: the impulse relative to the largest */
        double product = lmax > 0.0 ? fabs(lambda[i] * d->d_trial[i]) / lmax : 0.0;
        worst = fmax(worst, fmax(fmax(-d->d_trial[i], -lambda[i] / fmax(lmax, 1e-300)), product));
    }
    *residual = worst;
    if (worst <= tol)
        return ISSIM_OK;
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "after the step a contact violates complementarity by %.3g m "
                           "(distance < 0, force < 0 or force x distance != 0; tolerance %.3g m)",
                           worst, tol);
}
