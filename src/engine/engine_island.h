/* The RESOLVE stage's island work (engine_complementarity.c steps it, engine_island_assembly.c
 * assembles its system and applies its block products): private to those two files. The engine
 * thread alone writes and reads these, inside one advance. */
#ifndef ISSIM_ENGINE_ISLAND_H
#define ISSIM_ENGINE_ISLAND_H

#include "engine_internal.h"

/* Contacts of a complementarity pair within this gap (m) take part in the solve. */
#define RESOLVE_MARGIN 2e-3

/* The islands of one advance: stepped bodies and candidate contacts sorted by island
 * (compressed rows: island k owns [start[k], start[k + 1]) of each list). */
typedef struct IslandIndex {
    int count;
    int *island_of; /* engine body -> island number, or -1 (not stepped) */
    int *local;     /* engine body -> velocity offset in its island (while open), or -1 */
    int *bodies, *body_start;
    int *candidates, *candidate_start; /* complementarity contacts touching the island */
    int *forces, *force_start;         /* active force-law contacts touching it */
    int *rows;                         /* scratch: this step's rows (engine contact indices) */
} IslandIndex;

/* The split position correction: gaps for each pass, its impulses and pseudo-velocities. */
typedef struct IslandSplit {
    double *gap_velocity, *gap_position, *lambda_p, *lambda_pt, *u_position, *zero;
} IslandSplit;

/* What one island step adds to EngineStats, kept apart while islands are solved in parallel
 * and added in island order after (engine_complementarity.c). */
typedef struct IslandTally {
    uint64_t steps, failures, warnings, iterative_solves, sweeps;
    uint64_t team_solves; /* solves whose sweeps ran on the pool's threads */
    double residual;
    bool fell_back;   /* a solver failed and PGS took the step: */
    IssimError *note; /* the warning, logged by the engine thread after the step */
} IslandTally;

/* The island's mass and contact Jacobians: dense when the solver asks for them, else per-body
 * blocks and the sparse solver's workspace. */
typedef struct IslandMatrices {
    bool dense;
    double *mass, *inv_mass, *jn, *jt; /* dense, when the solver asks for it */
    double *work;                      /* else the sparse solver's workspace */
    size_t work_doubles;
    double *mass_blocks, *inv_blocks; /* per body bd x bd */
    EngineContactBlock *blocks;
} IslandMatrices;

/* Per complementarity row: its order, frame, forces, velocities, gaps, friction and solution. */
typedef struct IslandRows {
    uint64_t *ids;
    int *order;   /* 2 * rows + 2: the bucket sort of island_order_top_down */
    Vec3 *frames; /* per row: normal, t1, t2 */
    double *force, *velocity, *gap, *mu, *mu_static, *no_friction, *warm_n, *warm_t;
    double *lambda_n, *lambda_t, *u_next, *rhs;
} IslandRows;

typedef struct IslandWork {
    Engine *e;
    const IslandIndex *index;
    int island;          /* its number in index */
    IssimArena *scratch; /* the arena of the thread that solves it */
    /* The RESOLVE pool lent to a large island's solver (engine thread, nothing else on the
     * pool: EngineIslandSystem.pool), or NULL. */
    struct TaskPool *pool;
    IslandTally *tally;
    int body_count, contact_count, force_count;
    const int *bodies;   /* engine body indices */
    const int *contacts; /* complementarity rows: engine contact indices */
    const int *forces;   /* force-law contacts acting through f */
    int dim, bd;
    double h;
    EngineBodyState *pose; /* per island body (by offset / bd): its state at the step's start */
    /* Per island body, its state after the step, kept here (not yet in the engine's state) when
     * the island is solved ahead of the serial order; NULL: written at once. */
    EngineBodyState *after;
    bool defer_store; /* carve `after` */
    IslandSplit split;
    IslandMatrices mat;
    IslandRows rows;
} IslandWork;

/* Body b's velocity offset in the island being solved, or -1 (held: no unknown). */
static inline int offset_in(const IslandWork *w, int b) {
    return b < 0 || w->index->island_of[b] != w->island ? -1 : w->index->local[b];
}

void island_order_top_down(IslandWork *w, int *candidates, int count, double *keys);
void island_read_poses(IslandWork *w);
void island_assemble_bodies(IslandWork *w);
void island_assemble_force_laws(IslandWork *w);
/* island_assemble_contacts: the scratch of its candidates did not fit in memory. */
#define ISLAND_ROWS_NO_MEMORY (-2)
int island_assemble_contacts(IslandWork *w, int *rows, const int *candidates, int count);
bool island_assemble_dense(IslandWork *w);
bool island_reserve_work(IslandWork *w);
void island_add_jacobian_transpose(const IslandWork *w, const double *ln, const double *lt);
void island_apply_inv_mass(const IslandWork *w, const double *base, double *out);
void island_velocity_after(const IslandWork *w, const double *ln, const double *lt, double *out);
double island_normal_rate(const IslandWork *w, int i, const double *u);
void island_gap_after(void *ctx, const double *u_next, double *gap_out);
void island_integrate_positions(IslandWork *w);
/* The states island_integrate_positions kept in w->after into the engine's state. */
void island_store_positions(const IslandWork *w);

#endif
