/* issim task pool: a fixed set of worker threads that share the iterations of a loop with the
 * thread that asks (issue 33: the narrow phase over pairs on both cores).
 *
 * Determinism. task_pool_for hands out index ranges in any order to any thread, so a loop body
 * must write only to places owned by its indices (slot i of an output array) and read only what
 * no iteration writes. Then the results are the same bits whatever the thread count and the
 * schedule; the caller combines them afterwards in index order.
 *
 * Threading: one thread at a time calls task_pool_for on a pool (its owner: the thread that runs
 * the stage). The workers wait on a condition variable between loops (no spinning: the machine's
 * cores are shared with the display, the haptic servo and other programs).
 */
#ifndef ISSIM_TASK_POOL_H
#define ISSIM_TASK_POOL_H

#include "issim/core.h"

typedef struct TaskPool TaskPool;

/* Iterations [begin, end) of the loop; ctx is task_pool_for's. */
typedef void (*TaskRangeFn)(void *ctx, int begin, int end);

/* A pool of `threads` threads in all: the caller of task_pool_for and threads - 1 workers
 * (threads >= 1; 1 starts none and runs every loop on the caller). */
TaskPool *task_pool_create(int threads, IssimError *err);
void task_pool_destroy(TaskPool *pool);
int task_pool_threads(const TaskPool *pool);

/* Runs fn over [0, count) in ranges of at most `grain` iterations (>= 1) on the pool's threads,
 * the caller's included, and returns once every range is done. A NULL pool, a one-thread pool or
 * count <= grain runs fn(ctx, 0, count) on the caller. */
void task_pool_for(TaskPool *pool, int count, int grain, TaskRangeFn fn, void *ctx);

/* Iterations [begin, end) run by the pool's thread `worker`: 0 the caller, 1 .. threads - 1 the
 * workers. One thread runs as one worker at a time, so per-worker scratch (an arena each) needs
 * no lock. */
typedef void (*TaskWorkerRangeFn)(void *ctx, int begin, int end, int worker);

/* task_pool_for, telling each range which thread runs it (a NULL pool: worker 0). */
void task_pool_for_workers(TaskPool *pool, int count, int grain, TaskWorkerRangeFn fn, void *ctx);

/* The number of processors online (at least 1): what "as many threads as cores" means. */
int task_pool_processors(void);

#endif
