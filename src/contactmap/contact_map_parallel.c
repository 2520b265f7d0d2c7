/* One map read's work shared by threads (contact_map_read_threads, contactmap.h). A sweep's
 * first run reads the map while its other workers wait for the cache (docs/performance.md,
 * "Sweep start-up"): the read's independent parts (planning the FFTs of 000 eq. 3.20's
 * convolution, parsing the node records, transforming their kernels) run as tasks on the reading
 * thread and on helpers it starts for the read, on the cores the waiting workers leave free. */
#include <pthread.h>
#include <stdatomic.h>

#include "contactmap_internal.h"

static atomic_int read_threads = 1;

void contact_map_read_threads(int threads) {
    if (threads < 1)
        threads = 1;
    if (threads > CONTACT_MAP_MAX_READ_THREADS)
        threads = CONTACT_MAP_MAX_READ_THREADS;
    atomic_store(&read_threads, threads);
}

int contact_map_read_thread_count(void) {
    return atomic_load(&read_threads);
}

typedef struct Job {
    void (*run)(void *context, int task);
    void *context;
    int tasks;
    atomic_int next;
} Job;

static void *take_tasks(void *arg) {
    Job *job = arg;
    for (int task; (task = atomic_fetch_add(&job->next, 1)) < job->tasks;)
        job->run(job->context, task);
    return NULL;
}

void contact_map_parallel(int threads, int tasks, void (*run)(void *context, int task),
                          void *context) {
    Job job = {.run = run, .context = context, .tasks = tasks};
    atomic_init(&job.next, 0);
    pthread_t helpers[CONTACT_MAP_MAX_READ_THREADS];
    int started = 0;
    /* A helper that cannot start leaves its tasks to the others: slower, never wrong. */
    for (int i = 1; i < threads && i < tasks && i < CONTACT_MAP_MAX_READ_THREADS; i++)
        if (pthread_create(&helpers[started], NULL, take_tasks, &job) == 0)
            started++;
    take_tasks(&job);
    for (int i = 0; i < started; i++)
        pthread_join(helpers[i], NULL);
}
