/* The task pool (issim/task_pool.h).
 *
 * Shared state and who touches it. `lock` guards `generation`, `job`, `open`, `stop` and
 * `busy`: the caller publishes a loop by writing `job`, setting `open` and bumping `generation`
 * under the lock and broadcasting `start`. A worker that wakes while the loop is open joins it
 * (busy++), runs ranges, and leaves it (busy--, signalling `done` on the last). Ranges are
 * claimed with an atomic counter (`next`), so no lock is held while a range runs. When the
 * caller finds no range left it closes the loop and waits only for the workers that joined: on
 * a loaded machine a worker the scheduler has not run yet costs the caller nothing (waiting for
 * every worker made the caller wait for the scheduler at every step). A worker that wakes after
 * the close skips the loop, so no worker reads a job that is replaced.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "issim/task_pool.h"

typedef struct TaskJob {
    TaskRangeFn fn;              /* one of fn, */
    TaskWorkerRangeFn worker_fn; /* worker_fn is set */
    void *ctx;
    int count, grain;
} TaskJob;

typedef struct TaskWorker {
    TaskPool *pool;
    int index; /* 1 .. threads - 1: the caller is 0 */
} TaskWorker;

struct TaskPool {
    int threads;
    pthread_t *workers;     /* threads - 1 */
    TaskWorker *worker_ids; /* threads - 1: each worker's pool and index */
    int started;            /* workers created */
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    uint64_t generation; /* under lock: bumped for each loop */
    TaskJob job;         /* under lock: written by the caller before bumping generation */
    bool stop;           /* under lock */
    bool open;           /* under lock: the current loop still takes workers */
    int busy;            /* under lock: workers that joined the current loop and run it */
    atomic_int next;     /* the next unclaimed iteration of the current loop */
};

static void run_ranges(TaskPool *p, const TaskJob *job, int worker) {
    for (;;) {
        int begin = atomic_fetch_add_explicit(&p->next, job->grain, memory_order_relaxed);
        if (begin >= job->count)
            return;
        int end = begin + job->grain < job->count ? begin + job->grain : job->count;
        if (job->worker_fn)
            job->worker_fn(job->ctx, begin, end, worker);
        else
            job->fn(job->ctx, begin, end);
    }
}

static void *worker_main(void *arg) {
    TaskWorker *self = arg;
    TaskPool *p = self->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->start, &p->lock);
        if (p->stop)
            break;
        seen = p->generation;
        if (!p->open)
            continue; /* woke after the caller finished the loop alone */
        TaskJob job = p->job;
        p->busy++;
        pthread_mutex_unlock(&p->lock);
        run_ranges(p, &job, self->index);
        pthread_mutex_lock(&p->lock);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int task_pool_processors(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}

TaskPool *task_pool_create(int threads, IssimError *err) {
    if (threads < 1) {
        issim_error_set(err, ISSIM_ERR_INVALID, "a task pool needs at least 1 thread, not %d",
                        threads);
        return NULL;
    }
    TaskPool *p = calloc(1, sizeof *p);
    if (!p ||
        (threads > 1 && (!(p->workers = calloc((size_t)threads - 1, sizeof *p->workers)) ||
                         !(p->worker_ids = calloc((size_t)threads - 1, sizeof *p->worker_ids))))) {
        if (p) {
            free(p->workers);
            free(p->worker_ids);
        }
        free(p);
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for a pool of %d threads", threads);
        return NULL;
    }
    p->threads = threads;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    for (; p->started < threads - 1; p->started++) {
        p->worker_ids[p->started] = (TaskWorker){.pool = p, .index = p->started + 1};
        if (pthread_create(&p->workers[p->started], NULL, worker_main,
                           &p->worker_ids[p->started]) != 0) {
            task_pool_destroy(p);
            issim_error_set(err, ISSIM_ERR_STATE, "cannot start worker %d of %d threads",
                            p->started + 1, threads);
            return NULL;
        }
    }
    return p;
}

void task_pool_destroy(TaskPool *p) {
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->workers[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->start);
    pthread_mutex_destroy(&p->lock);
    free(p->workers);
    free(p->worker_ids);
    free(p);
}

int task_pool_threads(const TaskPool *p) {
    return p ? p->threads : 1;
}

static void run_job(TaskPool *p, TaskJob job) {
    if (job.grain < 1)
        job.grain = 1;
    if (job.count <= 0)
        return;
    if (!p || p->started == 0 || job.count <= job.grain) {
        if (job.worker_fn)
            job.worker_fn(job.ctx, 0, job.count, 0);
        else
            job.fn(job.ctx, 0, job.count);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->job = job;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->open = true;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->lock);
    run_ranges(p, &job, 0);
    pthread_mutex_lock(&p->lock);
    p->open = false;
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

void task_pool_for(TaskPool *p, int count, int grain, TaskRangeFn fn, void *ctx) {
    run_job(p, (TaskJob){.fn = fn, .ctx = ctx, .count = count, .grain = grain});
}

void task_pool_for_workers(TaskPool *p, int count, int grain, TaskWorkerRangeFn fn, void *ctx) {
    run_job(p, (TaskJob){.worker_fn = fn, .ctx = ctx, .count = count, .grain = grain});
}
