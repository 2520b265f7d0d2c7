/* A map run: the step response (000 3.5) at each map node. Nodes are independent, so they
 * are spread over threads here and over MPI ranks by mapgen_main.c (node j on rank
 * j % ranks). Each finished node is written to its own partial file (write to a temporary
 * name, then rename: a killed run leaves whole files only), so a run started again over the
 * same inputs reads finished nodes instead of recomputing them. The partial files carry a key
 * of every input that changes a response; files of other inputs are ignored.
 */
#include "mapgen.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PARTIAL_MAGIC "issim-mapgen-partial"

typedef struct RunShared {
    const MapgenJob *job;
    double *h;
    int *todo; /* map node indices still to solve */
    int todo_count, next, done;
    double *fraction; /* per worker: of its current node */
    double *started;  /* per worker: when its current node started, s */
    int *current;     /* per worker: its node, -1 when idle */
    double start, last_print;
    IssimStatus status;
    IssimError error;
    pthread_mutex_t lock;
} RunShared;

typedef struct Worker {
    RunShared *shared;
    int id;
} Worker;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int mapgen_segment_nodes(const MapgenMesh *mesh, int b, double segment, int *nodes) {
    int count = 0;
    nodes[count++] = mesh->boundary[b];
    double half = 0.5 * segment;
    for (int i = 0; i < mesh->boundary_count; i++) {
        if (i == b)
            continue;
        double d = 0.0;
        if (mesh->dimension == 2) {
            d = fabs(mesh->arclength[i] - mesh->arclength[b]);
            d = fmin(d, mesh->perimeter - d);
        } else {
            const double *p = mesh->points + 3 * mesh->boundary[i];
            const double *q = mesh->points + 3 * mesh->boundary[b];
            d = sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                     (p[2] - q[2]) * (p[2] - q[2]));
        }
        if (d <= half * (1.0 + 1e-9))
            nodes[count++] = mesh->boundary[i];
    }
    return count;
}

static void partial_path(const MapgenJob *job, int node, char *path, size_t size) {
    snprintf(path, size, "%s/node_%05d.txt", job->partial_dir, node);
}

/* A finished node's response from its partial file, when the file is whole and of this job. */
static bool partial_read(const MapgenJob *job, int node, double *h) {
    char path[4096];
    partial_path(job, node, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char magic[64];
    unsigned long long key = 0;
    int samples = 0, index = -1;
    bool ok = fscanf(f, "%63s %llx %d %d", magic, &key, &index, &samples) == 4 &&
              strcmp(magic, PARTIAL_MAGIC) == 0 && key == job->key && index == node &&
              samples == job->samples;
    for (int k = 0; ok && k < samples; k++)
        ok = fscanf(f, "%lf", h + k) == 1 && isfinite(h[k]);
    char end[8];
    ok = ok && fscanf(f, "%7s", end) == 1 && strcmp(end, "end") == 0;
    fclose(f);
    return ok;
}

static IssimStatus partial_write(const MapgenJob *job, int node, const double *h, IssimError *err) {
    char path[4096], temporary[4200];
    partial_path(job, node, path, sizeof path);
    snprintf(temporary, sizeof temporary, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(temporary, "w");
    if (!f)
        return issim_error_set(err, ISSIM_ERR_IO, "partial file %s: %s", temporary,
                               strerror(errno));
    fprintf(f, "%s %llx %d %d\n", PARTIAL_MAGIC, job->key, node, job->samples);
    for (int k = 0; k < job->samples; k++)
        fprintf(f, "%.17g\n", h[k]);
    fprintf(f, "end\n");
    bool ok = fflush(f) == 0 && !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(temporary, path) != 0) {
        remove(temporary);
        return issim_error_set(err, ISSIM_ERR_IO, "partial file %s: cannot write", path);
    }
    return ISSIM_OK;
}

static void print_progress(RunShared *s, bool force) {
    double t = now_seconds();
    if (s->job->quiet || (!force && t - s->last_print < 1.0))
        return;
    s->last_print = t;
    double sum = s->done;
    char nodes[512] = "";
    size_t used = 0;
    for (int w = 0; w < s->job->threads; w++) {
        if (s->current[w] < 0)
            continue;
        double f = s->fraction[w], spent = t - s->started[w];
        sum += f;
        if (used < sizeof nodes - 48 && f > 1e-6)
            used +=
                (size_t)snprintf(nodes + used, sizeof nodes - used, " node %d %3.0f%% ETA %.0f s",
                                 s->current[w], 100.0 * f, spent * (1.0 - f) / f);
        else if (used < sizeof nodes - 48)
            used += (size_t)snprintf(nodes + used, sizeof nodes - used, " node %d starting",
                                     s->current[w]);
    }
    double overall = s->todo_count ? sum / s->todo_count : 1.0, elapsed = t - s->start;
    double eta = overall > 1e-6 ? elapsed * (1.0 - overall) / overall : NAN;
    fprintf(stderr, "mapgen[%d]: %d/%d nodes done%s | overall %3.0f%% [", s->job->rank, s->done,
            s->todo_count, nodes, 100.0 * overall);
    for (int i = 0; i < 20; i++)
        fputc(i < (int)(20 * overall) ? '#' : '.', stderr);
    fprintf(stderr, "] %.0f s elapsed, ETA %.0f s\n", elapsed, eta);
}

static void on_progress(void *user, double fraction) {
    Worker *w = user;
    pthread_mutex_lock(&w->shared->lock);
    w->shared->fraction[w->id] = fraction;
    print_progress(w->shared, false);
    pthread_mutex_unlock(&w->shared->lock);
}

static IssimStatus solve_node(const MapgenJob *job, int node, double *h, Worker *w, int *driven,
                              IssimError *err) {
    const MapgenMesh *mesh = job->model->mesh;
    int b = job->boundary_index[node];
    MapgenDrive drive = {.nodes = driven, .held = NULL, .deformation_only = job->deformation_only};
    drive.node_count = mapgen_segment_nodes(mesh, b, job->segment, driven);
    int d = mesh->dimension;
    const double *n = job->directions ? job->directions + d * node : mesh->normals + d * b;
    for (int a = 0; a < d; a++)
        drive.direction[a] = n[a];
    IssimStatus st = mapgen_step_response(job->model, &drive, job->period, job->samples,
                                          job->safety, h, on_progress, w, err);
    if (st == ISSIM_OK && job->partial_dir)
        st = partial_write(job, node, h, err);
    return st;
}

static void *worker_main(void *arg) {
    Worker *w = arg;
    RunShared *s = w->shared;
    const MapgenJob *job = s->job;
    int *driven = malloc((size_t)job->model->mesh->boundary_count * sizeof *driven);
    for (;;) {
        pthread_mutex_lock(&s->lock);
        if (!driven && s->status == ISSIM_OK)
            s->status = issim_error_set(&s->error, ISSIM_ERR_NOMEM, "worker: out of memory");
        int slot = s->status == ISSIM_OK && s->next < s->todo_count ? s->next++ : -1;
        int node = slot >= 0 ? s->todo[slot] : -1;
        s->current[w->id] = node;
        s->fraction[w->id] = 0.0;
        s->started[w->id] = now_seconds();
        pthread_mutex_unlock(&s->lock);
        if (node < 0)
            break;
        IssimError err = {0};
        IssimStatus st = solve_node(job, node, s->h + (size_t)node * job->samples, w, driven, &err);
        pthread_mutex_lock(&s->lock);
        if (st != ISSIM_OK && s->status == ISSIM_OK) {
            s->status = st;
            s->error = err;
        }
        s->done += st == ISSIM_OK;
        s->current[w->id] = -1;
        print_progress(s, true);
        pthread_mutex_unlock(&s->lock);
    }
    free(driven);
    return NULL;
}

bool mapgen_partial_remove(const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT;
    const struct dirent *entry;
    char path[4400];
    while ((entry = readdir(d)) != NULL) {
        const char *name = entry->d_name;
        size_t len = strlen(name);
        bool ours =
            strncmp(name, "node_", 5) == 0 && ((len > 4 && strcmp(name + len - 4, ".txt") == 0) ||
                                               (len > 4 && strcmp(name + len - 4, ".tmp") == 0));
        if (!ours)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        remove(path); /* another rank may have removed it first */
    }
    closedir(d);
    return rmdir(dir) == 0 || errno == ENOENT;
}

static IssimStatus make_partial_dir(const char *dir, IssimError *err) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return issim_error_set(err, ISSIM_ERR_IO, "resume directory %s: %s", dir, strerror(errno));
    return ISSIM_OK;
}

static void free_run(RunShared *s, pthread_t *ids, Worker *workers) {
    free(s->todo);
    free(s->fraction);
    free(s->started);
    free(s->current);
    free(ids);
    free(workers);
}

IssimStatus mapgen_run(const MapgenJob *job, double *h, int *computed, IssimError *err) {
    if (job->partial_dir) {
        IssimStatus st = make_partial_dir(job->partial_dir, err);
        if (st != ISSIM_OK)
            return st;
    }
    int threads = job->threads < 1 ? 1 : job->threads;
    RunShared s = {.job = job, .h = h, .status = ISSIM_OK};
    s.todo = malloc((size_t)job->node_count * sizeof *s.todo);
    s.fraction = calloc((size_t)threads, sizeof *s.fraction);
    s.started = calloc((size_t)threads, sizeof *s.started);
    s.current = malloc((size_t)threads * sizeof *s.current);
    pthread_t *ids = malloc((size_t)threads * sizeof *ids);
    Worker *workers = malloc((size_t)threads * sizeof *workers);
    if (!s.todo || !s.fraction || !s.started || !s.current || !ids || !workers) {
        free_run(&s, ids, workers);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "run: out of memory");
    }
    int resumed = 0;
    for (int j = job->rank; j < job->node_count; j += job->rank_count) {
        if (job->partial_dir && partial_read(job, j, h + (size_t)j * job->samples))
            resumed++;
        else
            s.todo[s.todo_count++] = j;
    }
    if (!job->quiet && resumed > 0)
        fprintf(stderr, "mapgen[%d]: resumed %d finished node(s) from %s\n", job->rank, resumed,
                job->partial_dir);
    pthread_mutex_init(&s.lock, NULL);
    s.start = s.last_print = now_seconds();
    MapgenJob local = *job;
    local.threads = threads;
    s.job = &local;
    int started = 0;
    for (int w = 0; w < threads; w++) {
        s.current[w] = -1;
        workers[w] = (Worker){.shared = &s, .id = w};
    }
    for (int w = 0; w < threads && w < s.todo_count; w++)
        started += pthread_create(ids + w, NULL, worker_main, workers + w) == 0;
    if (started == 0 && s.todo_count > 0)
        worker_main(workers);
    for (int w = 0; w < started; w++)
        pthread_join(ids[w], NULL);
    pthread_mutex_destroy(&s.lock);
    if (computed)
        *computed = s.done;
    if (s.status != ISSIM_OK && err)
        *err = s.error;
    free_run(&s, ids, workers);
    return s.status;
}
