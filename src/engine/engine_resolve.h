/* The islands and the RESOLVE stage's context: which bodies are time-stepped (engine_step.c
 * partitions them by island and resolver) and what the complementarity islands are solved with
 * and in (engine_complementarity.c, engine_island_assembly.c, engine_gap_after.c). Written and read
 * by the thread that runs the engine. */
#ifndef ISSIM_ENGINE_RESOLVE_H
#define ISSIM_ENGINE_RESOLVE_H

#include <stdbool.h>

#include "issim/arena.h"
#include "issim/engine.h"
#include "issim/engine_resolver.h"

typedef struct EngineContact EngineContact;

/* Per body its island's resolver, the bodies of time-stepped islands, and scratch for the
 * island partition; the complementarity solver and the per-step scratch of its islands. */
typedef struct EngineIslands {
    int stepped_count;
    int *stepped_bodies;
    int *island_of_body;
    int *scratch; /* 2 * (body_count + 1) */
    const EngineComplementaritySolver *complementarity;
    void *complementarity_user;
    /* Per-step scratch (issim/arena.h), written and read by the engine thread inside one
     * advance and empty between advances: the RESOLVE stage's island index and each island
     * step's rows, blocks and dense matrices (engine_complementarity.c). It grows with the
     * largest island seen, never inside a step once islands stop growing. */
    IssimArena step_scratch;
    /* Islands solved in parallel (engine_complementarity.c, issue 33): a pool of
     * resolve_threads threads made at the first advance that can use it, and one arena per
     * thread for the island steps that thread solves. The engine thread creates, resets and
     * frees them between advances; inside one, pool thread i alone writes thread_scratch[i]. */
    struct TaskPool *pool;
    int resolve_threads;
    IssimArena *thread_scratch;
} EngineIslands;

/* The most threads the RESOLVE stage uses (the --threads option's limit). */
#define ENGINE_MAX_THREADS 64

/* The bodies of time-stepped (complementarity) islands are neither integrated nor asleep. */
void engine_islands_free(Engine *e);
IssimStatus engine_islands_init(Engine *e, IssimError *err);
/* engine_complementarity.c: the RESOLVE stage */
/* A contact of a complementarity pair on a time-stepped body: its activity and force come from
 * the solver. */
bool engine_contact_time_stepped(const Engine *e, const EngineContact *c);
IssimStatus engine_resolve_complementarity(Engine *e, double t_start, double t_target,
                                           IssimError *err);
/* engine_gap_after.c: 001 2.2's delta(s^{t+dt}) for the island's contact rows (engine contact
 * indices) after a trial step of h with island velocities u_next (local: engine body -> velocity
 * offset in its island; island_of: engine body -> island; bodies of other islands are held);
 * gap: the rows' distances at the start. */
void engine_island_gaps_after(const Engine *e, const int *rows, int m, const int *local,
                              const int *island_of, int island, const double *gap, double h,
                              const double *u_next, double *gap_out);
/* Frees the RESOLVE stage's pool and per-thread arenas (engine_islands_free). */
void engine_resolve_pool_free(Engine *e);

#endif
