/* What the direct complementarity solvers (engine_solver_lemke.c, engine_solver_newton.c)
 * share: an island's LCP data of 001 2.2 formed once per solve from an EngineIslandSystem. */
#ifndef ISSIM_ENGINE_SOLVER_DIRECT_H
#define ISSIM_ENGINE_SOLVER_DIRECT_H

#include "issim/engine_resolver.h"
#include "issim/lcp.h"

typedef struct DirectIsland {
    const EngineIslandSystem *sys;
    int n, m;          /* velocity unknowns, contact rows */
    double *a;         /* m x m: A = Jn M^-1 Jn^T (001: N^T J^T M^-1 J N) */
    double *mobility;  /* n x m: W = M^-1 Jn^T, column i the velocity change of a unit impulse */
    double *u_free;    /* n: u + h M^-1 f, the velocity without contact impulses */
    double *b_free;    /* m: Jn u_free */
    double *gap_start; /* m: gap_after(u = 0), the callback's distance before any motion */
    double *u_trial;   /* n: u' of the fixpoint iteration */
    double *d_trial;   /* m: delta(s') for u' */
    double *b;         /* m: the LCP's right-hand side */
    double *scratch;   /* m */
    double *scratch_n; /* n */
    bool *held;        /* m: rows no impulse moves (A_ii = 0: both sides held); lambda 0 there */
    LcpWorkspace *ws;  /* for m rows or more (the thread's DirectMemory) */
} DirectIsland;

/* A thread's memory for direct solves (issue 33: no allocation in a step). A solve borrows its
 * arrays and LCP workspaces from the DirectMemory of the thread it runs on, which grows to the
 * largest island that thread has solved and lives until the thread ends (a pthread key's
 * destructor frees it). The islands of a pile are solved every step: a malloc and free of each
 * island's arrays were most of a complementarity step's allocations. Writer and reader: the one
 * thread it belongs to; a thread runs one solve at a time. */
typedef struct DirectMemory {
    void *island; /* DirectIsland's arrays */
    size_t island_bytes;
    LcpWorkspace *island_ws;
    void *step; /* a solver's own arrays (Lemke's StepLcp) */
    size_t step_bytes;
    LcpWorkspace *step_ws;
    LcpBasis *basis;
} DirectMemory;

/* This thread's memory; NULL when out of memory. */
DirectMemory *direct_memory(void);
/* *block with at least `bytes` (grown, contents not kept); NULL when out of memory. */
void *direct_memory_block(void **block, size_t *have, size_t bytes);
/* *ws for problems of at least n unknowns (grown); NULL with err set when out of memory. */
LcpWorkspace *direct_memory_workspace(LcpWorkspace **ws, int n, IssimError *err);
/* *basis for n unknowns, empty (a cold start, as a new one); NULL with err set. */
LcpBasis *direct_memory_basis(LcpBasis **basis, int n, IssimError *err);

/* Forms A, W, u_free and b_free in the thread's DirectMemory. */
IssimStatus direct_island_init(DirectIsland *d, const EngineIslandSystem *sys, const char *solver,
                               IssimError *err);
/* Ends the island's use of the thread's memory (which stays for the next solve). */
void direct_island_free(DirectIsland *d);

/* The LCP right-hand side of 001 2.2 for the current u_trial / d_trial into b:
 * b = Jn u_free - nu / h with nu = -delta(s') + h Jn u'. */
void direct_rhs(DirectIsland *d);

/* u_trial = u_free + W lambda. */
void direct_velocity(DirectIsland *d, const double *lambda);

/* 001 2.2's delta(s^{t+dt}) for u_trial into d_trial: the pass's gaps sys->gap moved by what
 * the callback says the trial step does, gap_after(u') - gap_after(0). (The engine sets sys->gap
 * per pass: clamped at zero in the velocity pass, the overlaps in the position pass; the
 * callback measures from the unclamped gaps, so only its motion term is used.) */
void direct_distances(DirectIsland *d);

/* The V12 check of a solve with normal impulses lambda and the velocities already in u_trial:
 * the distances after the step (d_trial, updated) >= -tol, lambda >= 0, |lambda_i d_i| / max
 * lambda <= tol, tol = 1e-9 m. The violation (m) into *residual; ISSIM_ERR_NUMERIC beyond tol. */
IssimStatus direct_check_step(DirectIsland *d, const double *lambda, double *residual,
                              IssimError *err);

#endif
