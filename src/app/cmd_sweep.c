/* `issim sweep SCENE --grid NAME=VALUES ... [--out FILE]`: a parameter study over headless
 * lock-step runs (include/issim/study.h, docs/studies.md), on every core (threads) and, started
 * under mpirun, on every rank: rank 0 writes the table, the other ranks send it their rows. Rows
 * are written as they finish (one flushed line each), so a killed sweep keeps every finished run
 * and `issim sweep` with the same arguments resumes with the rest; at the end the table is
 * rewritten in run order, the same whichever way it ran. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <mpi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "issim/contactmap.h"
#include "issim/io.h"
#include "issim/study.h"

int cmd_sweep(int argc, char **argv);

#define ROW_TEXT_MAX 4096
#define TAG_ROW 1
#define TAG_DONE 2

typedef struct SweepArgs {
    Study study;
    const char *out, *plot, *plot_out;
    int threads;
    bool force, quiet;
    long max_runs;
} SweepArgs;

static void sweep_usage(FILE *out) {
    fputs(
        "usage: issim sweep SCENE --grid NAME=VALUES [--grid ...] [--out FILE]\n"
        "                   [--random N --seed S] [--set PATH=VALUE ...] [--until T]\n"
        "                   [--at VAR@T ...] [--threads N] [--plot X:Y[:GROUP] [--plot-out PNG]]\n"
        "                   [--max-runs N | --force] [--quiet]\n"
        "  NAME: a property path (bar_floor.stiffness) or a scene parameter (angle_deg)\n"
        "  VALUES: a,b,c (numbers or words) | a:b:n (n values, ends included) | log:a:b:n;\n"
        "          with --random N: a:b or log:a:b, N runs drawn with seed S\n"
        "  --at VAR@T: the variable's value at time T (or @end) as a column\n"
        "  under mpirun (mpirun -np 4 issim sweep ...) the runs are shared by the ranks;\n"
        "  rerun the same command to resume a killed sweep (docs/studies.md)\n",
        out);
}

static int sweep_bad(const char *what, const char *arg) {
    fprintf(stderr, "issim sweep: %s%s\n", what, arg ? arg : "");
    sweep_usage(stderr);
    return 2;
}

/* ===== Phase times (ISSIM_SWEEP_TIMES=1): where a sweep's wall time goes ===== */

/* Wall-clock (epoch) seconds on stderr, so the phases line up with the launching shell's `date
 * +%s.%N` before mpirun and after it returns (tools/bench_sweep.sh --phases). */
static void phase(int rank, const char *name) {
    static int enabled = -1;
    if (enabled < 0)
        enabled = getenv("ISSIM_SWEEP_TIMES") != NULL;
    if (!enabled)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(stderr, "sweep-phase rank %d %s %.6f\n", rank, name,
            (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec);
}

/* ===== Arguments ===== */

/* A whole number in [lo, hi]: digits, or exponent notation that is whole ("1e6"). A fraction
 * ("1.5"), trailing text or a value that overflows is refused: strtol read "1e6" as 1 and atoi
 * read "1.5" as 1. */
static bool parse_count(const char *text, long lo, long hi, long *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0') {
        errno = 0;
        double d = strtod(text, &end);
        if (end == text || *end != '\0' || errno || !isfinite(d) || d != floor(d) || fabs(d) > 9e18)
            return false;
        v = (long long)d;
    } else if (errno == ERANGE) {
        return false;
    }
    if (v < lo || v > hi)
        return false;
    *out = (long)v;
    return true;
}

/* A seed is any 64-bit unsigned integer, in digits (strtoull took "-1" as 2^64 - 1). */
static bool parse_seed(const char *text, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    if (text[0] < '0' || text[0] > '9')
        return false;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return false;
    *out = (uint64_t)v;
    return true;
}

static bool parse_until(const char *text, double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno || !isfinite(v) || v <= 0.0 || v > STUDY_UNTIL_MAX)
        return false;
    *out = v;
    return true;
}

static int parse_sweep_args(int argc, char **argv, SweepArgs *a, const char **grids,
                            int *grid_count, const char **sets) {
    a->out = "study.csv";
    a->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    a->threads = a->threads < 1 ? 1 : a->threads > 256 ? 256 : a->threads;
    a->max_runs = STUDY_DEFAULT_MAX_RUNS;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool value = v != NULL;
        long n = 0;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            sweep_usage(stdout);
            return -1;
        } else if (strcmp(arg, "--grid") == 0 && value) {
            if (*grid_count == STUDY_MAX_AXES)
                return sweep_bad("at most 8 --grid axes", NULL);
            grids[(*grid_count)++] = argv[++i];
        } else if (strcmp(arg, "--set") == 0 && value) {
            if (a->study.set_count == 256)
                return sweep_bad("at most 256 --set options", NULL);
            sets[a->study.set_count++] = argv[++i];
        } else if (strcmp(arg, "--out") == 0 && value) {
            a->out = argv[++i];
        } else if (strcmp(arg, "--plot") == 0 && value) {
            a->plot = argv[++i];
        } else if (strcmp(arg, "--plot-out") == 0 && value) {
            a->plot_out = argv[++i];
        } else if (strcmp(arg, "--until") == 0 && value) {
            if (!parse_until(argv[++i], &a->study.until))
                return sweep_bad("--until needs a time in (0, 1e6] seconds, not ", argv[i]);
        } else if (strcmp(arg, "--random") == 0 && value) {
            if (!parse_count(argv[++i], 1, STUDY_MAX_RUNS, &a->study.samples))
                return sweep_bad("--random needs a whole number of runs in 1 ... 100000000, not ",
                                 argv[i]);
        } else if (strcmp(arg, "--seed") == 0 && value) {
            if (!parse_seed(argv[++i], &a->study.seed))
                return sweep_bad("--seed needs a whole number in 0 ... 18446744073709551615, not ",
                                 argv[i]);
        } else if (strcmp(arg, "--threads") == 0 && value) {
            if (!parse_count(argv[++i], 1, 256, &n))
                return sweep_bad("--threads needs a whole number in 1 ... 256, not ", argv[i]);
            a->threads = (int)n;
        } else if (strcmp(arg, "--max-runs") == 0 && value) {
            if (!parse_count(argv[++i], 1, STUDY_MAX_RUNS, &a->max_runs))
                return sweep_bad("--max-runs needs a whole number in 1 ... 100000000, not ",
                                 argv[i]);
        } else if (strcmp(arg, "--at") == 0 && value) {
            IssimError err = {0};
            if (study_add_probe(&a->study, argv[++i], &err) != ISSIM_OK)
                return sweep_bad(err.message, NULL);
        } else if (strcmp(arg, "--force") == 0) {
            a->force = true;
        } else if (strcmp(arg, "--quiet") == 0) {
            a->quiet = true;
        } else if (arg[0] != '-' && !a->study.scene[0]) {
            issim_strlcpy(a->study.scene, arg, sizeof a->study.scene);
        } else {
            return sweep_bad("unexpected or incomplete argument: ", arg);
        }
    }
    if (!a->study.scene[0] || *grid_count == 0)
        return sweep_bad("needs a scene and at least one --grid", NULL);
    return 0;
}

/* ===== The table: resume, rows, final order ===== */

static char *header_text(const Study *study) {
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    study_format_header(study, f);
    fclose(f);
    return buf;
}

/* The fields of a CSV line (no newline) as study_format_row writes them: a field is quoted
 * when it holds a comma or a quote, quotes doubled. Unquoted copies go to buf (len + 1 bytes).
 * Returns the field count, or -1 when the quoting is broken or there are more than max. */
static int csv_split(const char *line, size_t len, char *buf, char **fields, int max) {
    int count = 0;
    size_t i = 0;
    char *o = buf;
    for (;;) {
        if (count == max)
            return -1;
        fields[count++] = o;
        if (i < len && line[i] == '"') {
            for (i++;; i++) {
                if (i >= len)
                    return -1; /* no closing quote */
                if (line[i] == '"') {
                    if (i + 1 < len && line[i + 1] == '"') {
                        *o++ = '"';
                        i++;
                        continue;
                    }
                    i++;
                    break;
                }
                *o++ = line[i];
            }
            if (i < len && line[i] != ',')
                return -1; /* text after the closing quote */
        } else {
            for (; i < len && line[i] != ','; i++) {
                if (line[i] == '"')
                    return -1;
                *o++ = line[i];
            }
        }
        *o++ = '\0';
        if (i >= len)
            return count;
        i++; /* the comma */
    }
}

/* Columns of a row: run, the axes, status, impacts, six measures, the probes, wall_s. */
static int row_columns(const Study *study) {
    return 1 + study->axis_count + 1 + 7 + study->probe_count + 1;
}

static bool is_number(const char *s) {
    char *end = NULL;
    strtod(s, &end);
    return end != s && *end == '\0';
}

static bool is_whole(const char *s, long lo, long hi, long *out) {
    char *end = NULL;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || errno || v < lo || v > hi)
        return false;
    if (out)
        *out = v;
    return true;
}

/* Checks that a finished row (one line, without its newline) is a row of this study, exactly
 * as study_format_row writes it: its index, run `index`'s axis values, a status, a whole impact
 * count, numbers in every other column (nan included). On success *index and *ok (the status
 * is "ok") are set; else why says what is wrong. */
static bool row_valid(const Study *study, const char *line, size_t len, long runs, long *index,
                      bool *ok, char *status, size_t status_size, char *why, size_t why_size) {
    enum { MAX_COLUMNS = 1 + STUDY_MAX_AXES + 1 + 7 + STUDY_MAX_PROBES + 1 };
    char *fields[MAX_COLUMNS];
    char *buf = malloc(len + 1);
    int want = row_columns(study);
    int got = buf ? csv_split(line, len, buf, fields, MAX_COLUMNS) : -1;
    bool valid = false;
    if (got < 0) {
        snprintf(why, why_size, "broken quoting, or more columns than the table's %d", want);
    } else if (got != want) {
        snprintf(why, why_size, "%d columns, the table has %d", got, want);
    } else if (!is_whole(fields[0], 0, runs - 1, index)) {
        snprintf(why, why_size, "run '%.40s' is not a run number in 0 ... %ld", fields[0],
                 runs - 1);
    } else {
        char values[STUDY_MAX_AXES][STUDY_VALUE_MAX];
        study_run_values(study, *index, values);
        valid = true;
        for (int i = 0; i < study->axis_count && valid; i++)
            if (strcmp(fields[1 + i], values[i]) != 0) {
                snprintf(why, why_size, "run %ld has %s = '%.40s', this study's run %ld has '%s'",
                         *index, study->axes[i].name, fields[1 + i], *index, values[i]);
                valid = false;
            }
        int first = 1 + study->axis_count;
        if (valid && (!fields[first][0] || !is_whole(fields[first + 1], 0, INT_MAX, NULL))) {
            snprintf(why, why_size,
                     "run %ld: an empty status or an impact count that is not a "
                     "whole number",
                     *index);
            valid = false;
        }
        for (int c = first + 2; c < want && valid; c++)
            if (!is_number(fields[c])) {
                snprintf(why, why_size, "run %ld: column %d holds '%.40s', not a number", *index,
                         c + 1, fields[c]);
                valid = false;
            }
        if (valid) {
            *ok = strcmp(fields[first], "ok") == 0;
            if (status)
                issim_strlcpy(status, fields[first], status_size);
        }
    }
    free(buf);
    return valid;
}

/* Reads the runs an earlier sweep of the same study finished (whole lines only: a line cut by a
 * kill is dropped and the file truncated after the last whole one). -1 with why: the file has
 * another header, or a whole line that is not a row of this study (another study's values, or
 * malformed: it would be kept as a finished run). Regular files only (the caller checked; the
 * open neither follows a link nor blocks, in case that changed). */
static long read_done(const Study *study, const char *path, const char *header, bool *done,
                      long runs, bool truncate_cut, char *why, size_t why_size) {
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 0;
    struct stat st;
    FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
    if (!f) {
        snprintf(why, why_size, "%s: cannot read it back (%s)", path,
                 fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    if (n <= 0 || strncmp(line, header, strlen(header)) != 0 || line[strlen(header)] != '\n') {
        free(line);
        fclose(f);
        snprintf(why, why_size, "%s holds another study's table (other columns)", path);
        return n <= 0 ? 0 : -1;
    }
    long count = 0, number = 1;
    off_t whole = (off_t)n;
    while ((n = getline(&line, &cap, f)) > 0) {
        number++;
        if (line[n - 1] != '\n')
            break;
        long index = -1;
        bool ok = false;
        char reason[300];
        if (!row_valid(study, line, (size_t)n - 1, runs, &index, &ok, NULL, 0, reason,
                       sizeof reason)) {
            snprintf(why, why_size, "%s, line %ld: not a row of this study: %s", path, number,
                     reason);
            free(line);
            fclose(f);
            return -1;
        }
        if (!done[index]) {
            done[index] = true;
            count++;
        }
        whole += n;
    }
    free(line);
    int rc = truncate_cut && whole < st.st_size ? ftruncate(fileno(f), whole) : 0;
    if (rc != 0)
        snprintf(why, why_size, "%s: cannot drop its cut last line: %s", path, strerror(errno));
    fclose(f);
    return rc == 0 ? count : -1;
}

typedef struct Line {
    long index;
    char *text;
} Line;

static int by_index(const void *a, const void *b) {
    long x = ((const Line *)a)->index, y = ((const Line *)b)->index;
    return (x > y) - (x < y);
}

/* What the final table holds. */
typedef struct TableCount {
    long rows, ok;
    long first_failed; /* -1: none */
    char first_failure[256];
} TableCount;

/* Rewrites the table in run order (a row twice, from a resumed run: the last kept), through a
 * temporary and a rename (output_begin): a failed write leaves the table as it was. Counts its
 * rows and the ok ones. */
static IssimStatus sort_table(const Study *study, const char *path, long runs, TableCount *count,
                              IssimError *err) {
    *count = (TableCount){.first_failed = -1};
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return issim_error_set(err, ISSIM_ERR_IO, "cannot read %s back", path);
    }
    char *line = NULL, *header = NULL;
    size_t cap = 0;
    Line *lines = NULL;
    long n_lines = 0, capacity = 0;
    IssimStatus s = ISSIM_OK;
    ssize_t n = getline(&header, &cap, f);
    cap = 0;
    while (n > 0 && s == ISSIM_OK && (n = getline(&line, &cap, f)) > 0) {
        if (n_lines == capacity) {
            capacity = capacity ? 2 * capacity : 256;
            Line *grown = realloc(lines, sizeof *lines * (size_t)capacity);
            if (!grown) {
                s = issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory sorting %s", path);
                break;
            }
            lines = grown;
        }
        lines[n_lines] = (Line){strtol(line, NULL, 10), strdup(line)};
        if (!lines[n_lines++].text)
            s = issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory sorting %s", path);
    }
    free(line);
    fclose(f);
    if (s == ISSIM_OK && !header)
        s = issim_error_set(err, ISSIM_ERR_IO, "%s has no header", path);
    if (s == ISSIM_OK)
        qsort(lines, (size_t)n_lines, sizeof *lines, by_index);
    OutputFile out = {.fd = -1};
    if (s == ISSIM_OK && (s = output_begin(&out, path, "table", err)) == ISSIM_OK)
        s = output_write(&out, header, strlen(header), err);
    for (long i = 0; i < n_lines; i++) {
        bool last = i + 1 == n_lines || lines[i + 1].index != lines[i].index;
        if (s == ISSIM_OK && last) {
            size_t len = strlen(lines[i].text);
            long index = -1;
            bool ok = false;
            char status[256], why[300];
            if (row_valid(study, lines[i].text, len - (len && lines[i].text[len - 1] == '\n'), runs,
                          &index, &ok, status, sizeof status, why, sizeof why)) {
                count->rows++;
                count->ok += ok;
                if (!ok && count->first_failed < 0) {
                    count->first_failed = index;
                    issim_strlcpy(count->first_failure, status, sizeof count->first_failure);
                }
            }
            s = output_write(&out, lines[i].text, len, err);
        }
        free(lines[i].text);
    }
    free(lines);
    free(header);
    if (s == ISSIM_OK)
        s = output_commit(&out, err);
    else
        output_abort(&out);
    return s;
}

/* ===== Workers: threads take runs, the main thread writes (or sends) the rows ===== */

typedef struct Queue {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    char **rows; /* formatted rows waiting for the main thread */
    int count, capacity;
    int running; /* workers not finished */
} Queue;

typedef struct Pool {
    const Study *study;
    const long *todo; /* this rank's runs */
    long todo_count;
    atomic_long next;
    atomic_bool stop; /* the table cannot be written: no more runs */
    Queue *queue;
    int rank;
} Pool;

static void queue_push(Queue *q, char *text) {
    pthread_mutex_lock(&q->lock);
    if (q->count == q->capacity) {
        q->capacity = q->capacity ? 2 * q->capacity : 64;
        q->rows = realloc(q->rows, sizeof *q->rows * (size_t)q->capacity);
    }
    q->rows[q->count++] = text; /* no signal: the main thread polls (take_row) */
    pthread_mutex_unlock(&q->lock);
}

/* With ISSIM_SWEEP_TIMES, where a worker's wall time went (the kernel's /proc/thread-self/
 * schedstat: time on a core, time runnable but waiting for one): the rest it was blocked, on a
 * lock or the kernel, the serialisation inside the process that other processes' load cannot
 * explain (docs/performance.md, Studies). */
static void worker_times(int rank, double wall_start, long runs) {
    if (!getenv("ISSIM_SWEEP_TIMES"))
        return;
    double wall = issim_wall_time() - wall_start, on_cpu = NAN, waiting = NAN;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f && fscanf(f, "%lf %lf", &on_cpu, &waiting) == 2) {
        on_cpu *= 1e-9;
        waiting *= 1e-9;
    }
    if (f)
        fclose(f);
    fprintf(stderr,
            "sweep-worker rank %d runs %ld wall %.3f s on-cpu %.3f runnable-waiting %.3f "
            "blocked %.3f\n",
            rank, runs, wall, on_cpu, waiting, wall - on_cpu - waiting);
}

static void *worker(void *arg) {
    Pool *p = arg;
    StudyRow *row = malloc(sizeof *row);
    double start = issim_wall_time();
    long runs = 0;
    for (long k;
         row && !atomic_load(&p->stop) && (k = atomic_fetch_add(&p->next, 1)) < p->todo_count;
         runs++) {
        study_run(p->study, p->todo[k], row);
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (f) {
            study_format_row(p->study, row, f);
            fputc('\n', f);
            fclose(f);
            queue_push(p->queue, text);
        }
    }
    free(row);
    worker_times(p->rank, start, runs);
    pthread_mutex_lock(&p->queue->lock);
    p->queue->running--;
    pthread_cond_signal(&p->queue->ready);
    pthread_mutex_unlock(&p->queue->lock);
    return NULL;
}

typedef struct Progress {
    long total, done, failed;
    double start;
    bool quiet;
} Progress;

static void progress_row(Progress *p, bool ok) {
    p->done++;
    p->failed += !ok;
    if (p->quiet)
        return;
    double elapsed = issim_wall_time() - p->start;
    double eta = p->done > 0 ? elapsed / p->done * (p->total - p->done) : 0.0;
    int filled = p->total > 0 ? (int)(30 * p->done / p->total) : 30;
    fprintf(stderr, "\r[%.*s%*s] %ld/%ld runs, %ld failed, %.1f s, ETA %.1f s ", filled,
            "##############################", 30 - filled, "", p->done, p->total, p->failed,
            elapsed, eta);
    if (p->done == p->total)
        fputc('\n', stderr);
}

/* Rank 0's table while rows come in. */
typedef struct Table {
    const Study *study;
    long runs;
    int fd;
    bool through; /* a device or FIFO: written as rows come, never read back nor sorted */
    off_t whole;  /* bytes of whole lines in the file (a regular file) */
    long written; /* rows written this time */
    long ok;      /* of which ok */
    long lost;    /* rows that could not be written */
    int errnum;   /* the first write error: no row is written after it */
    atomic_bool *stop;
    long first_failed; /* this time's first failed run (-1: none) */
    char first_failure[256];
} Table;

/* Rank 0: its own rows and the other ranks' into the table, one write(2) per line. A write that
 * fails (a full disk) stops the sweep: the file is cut back to its whole lines (a rerun resumes
 * from them) and the runs not yet started are not started. */
static void write_row(Table *t, Progress *progress, const char *text) {
    long index = -1;
    bool ok = false;
    char status[256], why[300];
    size_t len = strlen(text);
    if (!row_valid(t->study, text, len - (len && text[len - 1] == '\n'), t->runs, &index, &ok,
                   status, sizeof status, why, sizeof why))
        ok = false; /* cannot happen: rows are formatted here */
    progress_row(progress, ok);
    if (t->errnum) {
        t->lost++;
        return;
    }
    size_t done = 0;
    int errnum = output_write_all(t->fd, text, len, &done);
    if (errnum) {
        t->errnum = errnum;
        t->lost++;
        if (done > 0 && !t->through && ftruncate(t->fd, t->whole) != 0) {
            /* the cut line stays; a resume drops a last line without its newline anyway */
        }
        if (t->stop)
            atomic_store(t->stop, true);
        return;
    }
    t->whole += (off_t)len;
    t->written++;
    t->ok += ok;
    if (!ok && t->first_failed < 0) {
        t->first_failed = index;
        issim_strlcpy(t->first_failure, status, sizeof t->first_failure);
    }
}

/* The main thread collects the rows every poll_ns (it waits only when the queue is empty; the
 * last worker to finish wakes it), not at every row: waking it for each row (a futex wake, then the
 * main thread preempting the worker that woke it) costs context switches on cores the workers
 * need. */
static bool take_row(Queue *q, char **text, bool *workers_done, long poll_ns) {
    pthread_mutex_lock(&q->lock);
    if (poll_ns > 0 && q->count == 0 && q->running > 0) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += poll_ns;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&q->ready, &q->lock, &until);
    }
    bool got = q->count > 0;
    if (got) {
        *text = q->rows[0];
        memmove(q->rows, q->rows + 1, sizeof *q->rows * (size_t)(q->count - 1));
        q->count--;
    }
    *workers_done = q->running == 0 && q->count == 0;
    pthread_mutex_unlock(&q->lock);
    return got;
}

/* Receives whatever the other ranks sent; counts their "done" messages. */
static void receive_rows(Table *out, Progress *progress, int *ranks_done) {
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag)
            return;
        static char text[ROW_TEXT_MAX];
        MPI_Recv(text, ROW_TEXT_MAX, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == TAG_DONE)
            (*ranks_done)++;
        else
            write_row(out, progress, text);
    }
}

/* ===== The plot ===== */

static int column_of(const char *header, const char *name) {
    int col = 1;
    for (const char *p = header; p && *p; col++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strcspn(p, "\n");
        if (len == strlen(name) && strncmp(p, name, len) == 0)
            return col;
        p = end ? end + 1 : NULL;
    }
    return -1;
}

/* Field `col` (1-based) of a CSV line into out (quotes kept: the plotted columns are numbers
 * or plain words). */
static void csv_field(const char *line, int col, char *out, size_t size) {
    const char *p = line;
    for (int c = 1; c < col && p; c++) {
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    size_t len = p ? strcspn(p, ",\n") : 0;
    len = len < size - 1 ? len : size - 1;
    memcpy(out, p ? p : "", len);
    out[len] = '\0';
}

typedef struct Point {
    char group[STUDY_VALUE_MAX];
    double x, y;
} Point;

static int by_group_then_x(const void *a, const void *b) {
    const Point *p = a, *q = b;
    int g = strcmp(p->group, q->group);
    double gx = strtod(p->group, NULL), gy = strtod(q->group, NULL);
    if (g != 0)
        return gx != gy ? (gx > gy) - (gx < gy) : g;
    return (p->x > q->x) - (p->x < q->x);
}

/* The points of the plot, grouped and sorted, into a gnuplot data file (blocks separated by two
 * blank lines: one `index` per group). Returns the number of groups. */
static int plot_data(const char *table, int cx, int cy, int cg, FILE *dat, char (*names)[64],
                     int max_groups) {
    FILE *f = fopen(table, "r");
    char *line = NULL;
    size_t cap = 0;
    Point *pts = NULL;
    long n = 0, capacity = 0;
    for (bool first = true; f && getline(&line, &cap, f) > 0; first = false) {
        if (first)
            continue;
        if (n == capacity)
            pts = realloc(pts, sizeof *pts * (size_t)(capacity = capacity ? 2 * capacity : 256));
        char x[64], y[64];
        csv_field(line, cx, x, sizeof x);
        csv_field(line, cy, y, sizeof y);
        pts[n] = (Point){.x = strtod(x, NULL), .y = strtod(y, NULL)};
        if (cg > 0)
            csv_field(line, cg, pts[n].group, sizeof pts[n].group);
        n++;
    }
    free(line);
    if (f)
        fclose(f);
    qsort(pts, (size_t)n, sizeof *pts, by_group_then_x);
    int groups = 0;
    for (long i = 0; i < n && groups <= max_groups; i++) {
        if (i == 0 || strcmp(pts[i].group, pts[i - 1].group) != 0) {
            if (groups == max_groups)
                break;
            if (i > 0)
                fprintf(dat, "\n\n");
            issim_strlcpy(names[groups++], pts[i].group, 64);
        }
        fprintf(dat, "%.12g %.12g\n", pts[i].x, pts[i].y);
    }
    free(pts);
    return groups;
}

static int plot_table(const char *table, const char *header, const char *spec, const char *png) {
    char x[128] = "", y[128] = "", group[128] = "";
    if (sscanf(spec, "%127[^:]:%127[^:]:%127s", x, y, group) < 2)
        return fprintf(stderr, "issim sweep: --plot needs X:Y[:GROUP], not '%s'\n", spec), 2;
    int cx = column_of(header, x), cy = column_of(header, y);
    int cg = group[0] ? column_of(header, group) : 0;
    if (cx < 0 || cy < 0 || cg < 0)
        return fprintf(stderr, "issim sweep: --plot %s: no such column in %s (columns: %s)\n", spec,
                       table, header),
               2;
    char data[] = "/tmp/issim-sweep-XXXXXX";
    int fd = mkstemp(data);
    FILE *dat = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!dat)
        return fprintf(stderr, "issim sweep: cannot write a temporary file\n"), 1;
    static char names[32][64];
    int groups = plot_data(table, cx, cy, cg, dat, names, 32);
    fclose(dat);
    FILE *gp = popen("gnuplot", "w");
    if (!gp) {
        unlink(data);
        return fprintf(stderr, "issim sweep: cannot start gnuplot\n"), 1;
    }
    fprintf(gp,
            "set terminal pngcairo size 900,600 noenhanced\nset output '%s'\n"
            "set key below\nset grid\nset xlabel '%s'\nset ylabel '%s'\nset title '%s'\n"
            "plot ",
            png, x, y, table);
    for (int g = 0; g < groups; g++)
        fprintf(gp, "%s'%s' index %d using 1:2 with linespoints title '%s%s%s'", g ? ", " : "",
                data, g, cg > 0 ? group : y, cg > 0 ? " = " : "", cg > 0 ? names[g] : "");
    fputc('\n', gp);
    int rc = pclose(gp);
    unlink(data);
    if (rc != 0)
        return fprintf(stderr, "issim sweep: gnuplot failed writing %s\n", png), 1;
    printf("plot     %s (%s against %s%s%s)\n", png, y, x, cg > 0 ? " by " : "", group);
    return 0;
}

/* ===== The sweep ===== */

static int run_rank(SweepArgs *a, int rank, int ranks, const long *todo, long todo_count,
                    Table *out, Progress *progress) {
    /* This rank's share: every ranks-th run of the list (the same list on every rank). */
    long mine = 0;
    long *share = malloc(sizeof *share * (size_t)(todo_count + 1));
    for (long k = rank; share && k < todo_count; k += ranks)
        share[mine++] = todo[k];
    Queue q = {.lock = PTHREAD_MUTEX_INITIALIZER};
    /* take_row's poll deadline on the monotonic clock: a wall-clock step must not stall it */
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&q.ready, &monotonic);
    pthread_condattr_destroy(&monotonic);
    Pool pool = {.study = &a->study, .todo = share, .todo_count = mine, .queue = &q, .rank = rank};
    atomic_init(&pool.next, 0);
    atomic_init(&pool.stop, false);
    if (out)
        out->stop = &pool.stop;
    int threads = a->threads < mine ? a->threads : (int)(mine > 0 ? mine : 1);
    pthread_t tid[256];
    q.running = threads;
    for (int i = 0; i < threads; i++)
        pthread_create(&tid[i], NULL, worker, &pool);
    int ranks_done = 1; /* this one, when its workers finish */
    bool workers_done = false;
    /* Alone: a row every 20 ms is soon enough for the table and the progress bar; with other
     * ranks rank 0 also polls their rows (2 ms). */
    long poll_ns = ranks > 1 ? 2000000 : 20000000;
    while (!workers_done || (rank == 0 && ranks_done < ranks)) {
        char *text = NULL;
        if (take_row(&q, &text, &workers_done, poll_ns)) {
            if (rank == 0)
                write_row(out, progress, text);
            else
                MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, 0, TAG_ROW, MPI_COMM_WORLD);
            free(text);
        }
        if (rank == 0 && ranks > 1)
            receive_rows(out, progress, &ranks_done);
        if (workers_done && rank == 0 && ranks_done < ranks)
            nanosleep(&(struct timespec){0, 1000000}, NULL); /* waiting for other ranks */
    }
    if (out)
        out->stop = NULL;
    phase(rank, "own-runs-done");
    if (rank > 0)
        MPI_Send("", 1, MPI_CHAR, 0, TAG_DONE, MPI_COMM_WORLD);
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    pthread_cond_destroy(&q.ready);
    free(q.rows);
    free(share);
    return 0;
}

static int sweep(SweepArgs *a, OutputKind kind, int rank, int ranks) {
    long runs = study_run_count(&a->study); /* within STUDY_MAX_RUNS: check_sweep */
    char *header = header_text(&a->study);
    bool *done = calloc((size_t)runs, sizeof *done);
    long *todo = malloc(sizeof *todo * (size_t)runs);
    if (!header || !done || !todo) {
        fprintf(stderr, "issim sweep: out of memory for %ld runs\n", runs);
        free(header);
        free(done);
        free(todo);
        return 1;
    }
    /* Every rank reads which runs are finished: they share the list to split. A device or FIFO
     * is never read back (/dev/zero was read until memory ran out). */
    char why[1600] = "";
    long finished = kind == OUTPUT_REGULAR ? read_done(&a->study, a->out, header, done, runs,
                                                       rank == 0, why, sizeof why)
                                           : 0;
    if (finished < 0) {
        if (rank == 0)
            fprintf(stderr, "issim sweep: %s; give another --out or remove it\n", why);
        free(header);
        free(done);
        free(todo);
        return 1;
    }
    if (ranks > 1)
        MPI_Barrier(MPI_COMM_WORLD); /* rank 0 truncates a cut line before anyone reads on */
    long todo_count = 0;
    for (long i = 0; i < runs; i++)
        if (!done[i])
            todo[todo_count++] = i;
    Table table = {.study = &a->study, .runs = runs, .fd = -1, .first_failed = -1};
    int rc = 0;
    if (rank == 0) {
        bool fresh = finished == 0;
        IssimError err = {0};
        OutputKind opened = OUTPUT_NEW;
        table.fd = output_open_fd(a->out, fresh ? OUTPUT_TRUNCATE : OUTPUT_APPEND, &opened, &err);
        table.through = opened == OUTPUT_THROUGH;
        struct stat st;
        table.whole = table.fd >= 0 && !table.through && fstat(table.fd, &st) == 0 ? st.st_size : 0;
        int errnum = 0;
        if (table.fd >= 0 && fresh) {
            size_t len = strlen(header);
            header[len] = '\n'; /* written with its newline, restored after */
            errnum = output_write_all(table.fd, header, len + 1, NULL);
            header[len] = '\0';
            table.whole = (off_t)len + 1;
        }
        if (table.fd < 0 || errnum) {
            if (table.fd < 0)
                fprintf(stderr, "issim sweep: %s\n", err.message);
            else
                fprintf(stderr, "issim sweep: cannot write %s: %s\n", a->out, strerror(errnum));
            if (table.fd >= 0)
                close(table.fd);
            free(header);
            free(done);
            free(todo);
            return 1;
        }
        printf("sweep    %s: %ld runs (%ld done before, %ld to run) on %d rank%s x %d "
               "thread%s\n",
               a->study.scene, runs, finished, todo_count, ranks, ranks > 1 ? "s" : "", a->threads,
               a->threads > 1 ? "s" : "");
        fflush(stdout);
    }
    Progress progress = {.total = todo_count, .start = issim_wall_time(), .quiet = a->quiet};
    phase(rank, "runs-start");
    run_rank(a, rank, ranks, todo, todo_count, rank == 0 ? &table : NULL, &progress);
    phase(rank, "rows-gathered");
    if (rank == 0) {
        if (close(table.fd) != 0 && !table.errnum)
            table.errnum = errno;
        if (!a->quiet && progress.done < progress.total)
            fputc('\n', stderr);
        TableCount count = {.rows = table.written + (table.through ? 0 : finished),
                            .ok = table.ok,
                            .first_failed = table.first_failed};
        issim_strlcpy(count.first_failure, table.first_failure, sizeof count.first_failure);
        bool counted = table.through; /* a resumed table's earlier rows are counted when sorted */
        IssimError err = {0};
        if (table.errnum) {
            fprintf(stderr,
                    "issim sweep: writing %s failed: %s; this sweep wrote %ld rows and lost %ld, "
                    "%ld runs were not started; %s\n",
                    a->out, strerror(table.errnum), table.written, table.lost,
                    todo_count - progress.done,
                    table.through ? "the rows written are all there is"
                                  : "the table keeps its whole rows: the same command resumes "
                                    "once there is room");
            rc = 1;
        } else if (!table.through) {
            if (sort_table(&a->study, a->out, runs, &count, &err) != ISSIM_OK) {
                fprintf(stderr,
                        "issim sweep: could not sort %s: %s (its rows are there, in the order "
                        "the runs finished)\n",
                        a->out, err.message);
                rc = 1;
            } else {
                counted = true;
                if (count.rows != runs) {
                    fprintf(stderr, "issim sweep: %s holds %ld of the %ld runs\n", a->out,
                            count.rows, runs);
                    rc = 1;
                }
            }
        }
        printf("table    %s: %ld runs, %ld rows in the table (%ld written this time), %ld failed "
               "this time, %.2f s wall\n",
               a->out, runs, count.rows, table.written, progress.failed,
               issim_wall_time() - progress.start);
        phase(rank, "table-sorted");
        /* A study whose every run failed (a scene that does not build at any value) has no
         * result: it must not look like one to a script. */
        if (rc == 0 && counted && count.rows > 0 && count.ok == 0) {
            fprintf(stderr, "issim sweep: every run failed (run %ld: %s)\n", count.first_failed,
                    count.first_failure);
            rc = 1;
        }
        if (rc == 0 && a->plot)
            rc = plot_table(a->out, header, a->plot, a->plot_out ? a->plot_out : "study.png");
    }
    free(header);
    free(done);
    free(todo);
    return rc;
}

/* Everything that can be known wrong before a run starts (docs/studies.md, "Bad input"): the
 * study's size, the axes against the scene (study_check), what is at --out. Refused with exit
 * 2 and the reason, before any run: a typo used to cost every run of the study. */
static int check_sweep(SweepArgs *a, bool speak, OutputKind *kind) {
    long runs = study_run_count(&a->study);
    if (runs > STUDY_MAX_RUNS) {
        if (speak)
            fprintf(stderr,
                    "issim sweep: %s%ld runs is over the limit of %ld runs (--max-runs and --force "
                    "cannot pass it: a sweep keeps 9 bytes per run)\n",
                    runs == LONG_MAX ? "more than " : "", runs, STUDY_MAX_RUNS);
        return 2;
    }
    if (runs > a->max_runs && !a->force) {
        if (speak)
            fprintf(stderr,
                    "issim sweep: %ld runs is over the limit of %ld (--max-runs N to raise it, "
                    "or --force)\n",
                    runs, a->max_runs);
        return 2;
    }
    IssimError err = {0};
    if (study_check(&a->study, &err) != ISSIM_OK) {
        if (speak)
            fprintf(stderr, "issim sweep: %s (nothing was run)\n", err.message);
        return 2;
    }
    if (output_path_kind(a->out, "table", kind, &err) != ISSIM_OK) {
        if (speak)
            fprintf(stderr, "issim sweep: --out: %s\n", err.message);
        return 2;
    }
    if (*kind == OUTPUT_THROUGH && a->plot) {
        if (speak)
            fprintf(stderr,
                    "issim sweep: --plot reads the table back: --out %s must be a regular file, "
                    "not a device or FIFO\n",
                    a->out);
        return 2;
    }
    return 0;
}

/* OpenMPI 4.1 talks to its launcher (PMIx 4.2) over loopback TCP without TCP_NODELAY: at
 * MPI_Finalize the client's small messages wait for the launcher's delayed acknowledgement (Nagle),
 * 40 ms of a sweep's teardown (strace). Latency is all that matters on these sockets: every TCP
 * socket the process holds after MPI_Init is set to send at once. */
static void tcp_send_at_once(void) {
    DIR *dir = opendir("/proc/self/fd");
    for (struct dirent *d; dir && (d = readdir(dir)) != NULL;) {
        int fd = atoi(d->d_name), type = 0, one = 1;
        struct sockaddr_storage addr;
        socklen_t len = sizeof type, alen = sizeof addr;
        if (d->d_name[0] != '.' && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
            type == SOCK_STREAM && getsockname(fd, (struct sockaddr *)&addr, &alen) == 0 &&
            (addr.ss_family == AF_INET || addr.ss_family == AF_INET6))
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (dir)
        closedir(dir);
}

/* Under mpirun (OpenMPI sets OMPI_COMM_WORLD_SIZE): one study shared by the ranks. */
static bool under_mpi(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMI_SIZE") != NULL;
}

int cmd_sweep(int argc, char **argv) {
    SweepArgs a = {0};
    const char *grids[STUDY_MAX_AXES], *sets[256];
    int grid_count = 0;
    a.study.sets = sets;
    int rc = parse_sweep_args(argc, argv, &a, grids, &grid_count, sets);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    IssimError found = {0};
    if (scene_find(a.study.scene, a.study.scene, sizeof a.study.scene, &found) != ISSIM_OK) {
        fprintf(stderr, "issim sweep: %s (nothing was run)\n", found.message);
        return 2;
    }
    for (int i = 0; i < grid_count; i++) {
        IssimError err = {0};
        if (study_add_axis(&a.study, grids[i], &err) != ISSIM_OK) {
            study_free(&a.study);
            return sweep_bad(err.message, NULL);
        }
    }
    int rank = 0, ranks = 1;
    bool mpi = under_mpi();
    int launch_rank =
        mpi ? atoi(getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK") : "0") : 0;
    phase(launch_rank, "main");
    /* Before MPI_Init: a refused study costs no rank a start-up, and only the first says why. */
    OutputKind kind = OUTPUT_NEW;
    rc = check_sweep(&a, launch_rank == 0, &kind);
    if (rc != 0) {
        study_free(&a.study);
        return rc;
    }
    if (mpi) {
        /* A sweep's ranks exchange only table rows: OpenMPI's ob1 point-to-point layer starts in
         * a tenth of the time UCX takes here (0.13 against 0.36 s for a one-run sweep); a user's
         * OMPI_MCA_pml wins. */
        setenv("OMPI_MCA_pml", "ob1", 0);
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
        tcp_send_at_once();
        phase(rank, "mpi-init-done");
    }
    /* Every run allocates and frees the same few hundred kilobytes (the registry's rings, the
     * engine): glibc gave them back to the kernel between runs whenever a free left the top of
     * the heap above its trim threshold, and each run faulted them in again, about half of a
     * small run's time (docs/performance.md). Kept for reuse. */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    /* Every run builds the same scene: its contact maps are read once per process, shared
     * read-only by the threads (contactmap.h): reading them was most of a bar-drop run
     * (docs/performance.md). */
    contact_map_cache_enable();
    /* ... and the first run's read is shared with the threads that wait for it (its FFT plans,
     * node records and kernel spectra: docs/performance.md, "Sweep start-up"). */
    contact_map_read_threads(a.threads);
    rc = sweep(&a, kind, rank, ranks);
    contact_map_read_threads(1);
    contact_map_cache_clear();
    if (mpi) {
        MPI_Finalize();
        phase(rank, "mpi-finalize-done");
    }
    study_free(&a.study);
    return rc;
}
