/* kill -9 during HDF5 recordings (src/io/recorder_hdf5.c, "Crash safety"): the pile recorded
 * with every variable (3,124 columns besides t) at every output step by a child process, killed
 * at 20 instants: inside a flush (at the k-th write the file sees after the child reported a
 * flush), at pseudo-random offsets after one, and while the file is being created. What is
 * asserted does not depend on where the kill landed: every file opens (SWMR read, as h5py's
 * swmr=True; and plainly after `h5clear -s`), holds at least the rows the child had seen
 * flushed, every column at least as long as t, and those rows bit for bit as a complete
 * recording of the same deterministic run (8 instants under a sanitizer). A kill during the
 * creation may leave no file at the path (the file gets its name once its header is complete),
 * never an unreadable one. */
#include "testutil.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "issim/engine.h"
#include "issim/io.h"
#include "issim/sim.h"

/* Under a sanitizer the child's pile runs about 5x slower and 20 trials took 190 s (300 s, the
   ctest timeout, beside two busy loops): 8 there (2 in the creation, 3 inside flushes, 3 at
   offsets), the 20 in the release build. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
enum { TRIALS = 8, PARALLEL = 2, TRIAL_TIMEOUT_MS = 120000 };
#else
enum { TRIALS = 20, PARALLEL = 2, TRIAL_TIMEOUT_MS = 120000 };
#endif

static char g_dir[64];
/* The children running, killed when a test fails part way. */
static pid_t g_children[TRIALS + 1];

static void kill_children(void) {
    for (int i = 0; i <= TRIALS; i++)
        if (g_children[i] > 0) {
            kill(g_children[i], SIGKILL);
            waitpid(g_children[i], NULL, 0);
            g_children[i] = 0;
        }
}

static int setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/issim-h5crash-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    kill_children();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The child: records the pile, every variable, every output step (lockstep: bit-identical
 * runs), rows rows or until killed; after each push that finds the recorder's rows_written
 * changed (a flush finished) it writes the count as a line to fd report. Exit 0 after a clean
 * close. */
static _Noreturn void record_pile(const char *path, int report, uint64_t rows) {
    SimOptions o = sim_options_default();
    o.lockstep = true;
    o.quiet = true;
    o.until = 1e6;
    IssimError err = {0};
    const char *scene = test_source_path("scenes/pile.lua");
    Sim *sim = sim_create(scene, &o, &err);
    SimSummary summary;
    if (!sim || sim_headless_begin(sim, &summary, &err) != ISSIM_OK) {
        fprintf(stderr, "child: %s\n", err.message);
        _exit(2);
    }
    Engine *e = sim_engine(sim);
    int n = engine_var_count(e);
    const char **names = calloc((size_t)n, sizeof *names);
    const char **units = calloc((size_t)n, sizeof *units);
    if (!names || !units)
        _exit(3);
    for (int i = 0; i < n; i++) {
        names[i] = engine_var_name(e, i);
        units[i] = engine_var_unit(e, i);
    }
    RecorderDesc d = recorder_desc_default();
    d.path = path;
    d.column_count = n;
    d.columns = names;
    d.units = units;
    d.scene_path = scene;
    Recorder *rec = recorder_open(&d, &err);
    if (!rec) {
        fprintf(stderr, "child: %s\n", err.message);
        _exit(4);
    }
    uint64_t seen = 0;
    for (uint64_t row = 0; row < rows; row++) {
        if (row > 0 && sim_headless_step(sim, 1, &err) != ISSIM_OK)
            _exit(5);
        if (recorder_push(rec, engine_time(e), sim_values(sim), true) != ISSIM_OK)
            _exit(6);
        uint64_t written = recorder_stats(rec).rows_written;
        if (written != seen) {
            dprintf(report, "%llu\n", (unsigned long long)written);
            seen = written;
        }
    }
    _exit(recorder_close(rec, &err) == ISSIM_OK ? 0 : 7);
}

static pid_t start_child(const char *path, uint64_t rows, int *report) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        record_pile(path, fds[1], rows);
    }
    close(fds[1]);
    *report = fds[0];
    return pid;
}

typedef enum KillWhen { IN_CREATION, IN_FLUSH, AT_OFFSET } KillWhen;
static const char *const kill_names[] = {"creating", "in flush", "offset"};

typedef struct Trial {
    char path[96];
    const char *base; /* the file's name in g_dir: inotify's events name it (or its temporary) */
    KillWhen when;
    long k;             /* IN_CREATION, IN_FLUSH: the write event killed at */
    double offset;      /* AT_OFFSET: seconds after the first flush report */
    pid_t pid;          /* the child while it runs, else -1 */
    int report;         /* the child's reports */
    double start;       /* wall time the child started */
    double first_flush; /* wall time of its first flush report; < 0: none yet */
    long flushed;       /* rows the child had reported flushed */
    long events;        /* writes to the file seen (IN_FLUSH: since the first report) */
    long rows;          /* rows of t in the killed file; -1: no file at the path */
    bool in_progress;   /* the kill followed a write with no flush report since */
} Trial;

static Trial g_trials[TRIALS];

/* Reads the child's reports; false at end of file (the child ended). */
static bool read_reports(int fd, long *flushed) {
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n <= 0)
        return n < 0 && errno == EINTR;
    buf[n] = '\0';
    for (char *line = buf; *line;) {
        char *end = strchr(line, '\n');
        if (!end)
            break; /* the reports are short lines written whole */
        *flushed = strtol(line, NULL, 10);
        line = end + 1;
    }
    return true;
}

/* Credits the writes to files in g_dir since the last call to the running trial whose name
 * begins the file's (inotify coalesces repeats: a count of at least one per burst). */
static void count_writes(int inotify, Trial *trials, int count) {
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(inotify, buf, sizeof buf)) > 0)
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            for (int i = 0; i < count && (ev->mask & IN_MODIFY) && ev->len; i++)
                if (trials[i].pid > 0 &&
                    strncmp(ev->name, trials[i].base, strlen(trials[i].base)) == 0) {
                    trials[i].events++;
                    trials[i].in_progress = true;
                }
            p += sizeof *ev + ev->len;
        }
}

static void start_trial(Trial *t) {
    t->base = strrchr(t->path, '/') + 1;
    t->pid = start_child(t->path, UINT64_MAX, &t->report);
    g_children[t - g_trials] = t->pid;
    t->start = issim_wall_time();
    t->first_flush = -1;
}

/* Reads its reports and kills it when its instant has come; true once killed. */
static bool step_trial(Trial *t) {
    struct pollfd p = {.fd = t->report, .events = POLLIN};
    long before = t->flushed;
    if (poll(&p, 1, 0) > 0 && !read_reports(t->report, &t->flushed))
        fail_msg("%s: the child ended before the kill", t->path);
    if (t->flushed != before) {
        t->in_progress = false;
        if (t->first_flush < 0) {
            t->first_flush = issim_wall_time();
            if (t->when == IN_FLUSH)
                t->events = 0;
        }
    }
    bool now = false;
    switch (t->when) {
    case IN_CREATION:
        now = t->events >= t->k || t->flushed > 0;
        break;
    case IN_FLUSH:
        now = t->first_flush >= 0 && t->events >= t->k;
        break;
    case AT_OFFSET:
        now = t->first_flush >= 0 && issim_wall_time() >= t->first_flush + t->offset;
        break;
    }
    if (!now) {
        if (issim_wall_time() > t->start + TRIAL_TIMEOUT_MS / 1e3)
            fail_msg("%s: no kill after %d ms (%ld rows flushed)", t->path, TRIAL_TIMEOUT_MS,
                     t->flushed);
        return false;
    }
    kill(t->pid, SIGKILL);
    waitpid(t->pid, NULL, 0);
    t->pid = -1;
    g_children[t - g_trials] = 0;
    /* Reports written before the kill still count: those flushes completed. */
    while (read_reports(t->report, &t->flushed))
        ;
    close(t->report);
    return true;
}

/* Runs the trials, PARALLEL at a time (each spends most of its time waiting for a flush). */
static void run_trials(Trial *trials, int count, int inotify) {
    int next = 0, running = 0, done = 0;
    while (done < count) {
        while (running < PARALLEL && next < count) {
            start_trial(&trials[next++]);
            running++;
        }
        poll(&(struct pollfd){.fd = inotify, .events = POLLIN}, 1, 5);
        count_writes(inotify, trials, count);
        for (int i = 0; i < next; i++)
            if (trials[i].pid > 0 && step_trial(&trials[i])) {
                running--;
                done++;
            }
    }
}

/* The names of the recording's columns (the root's `columns`), t first. */
static char **read_columns(hid_t file, int *count) {
    hid_t a = H5Aopen(file, "columns", H5P_DEFAULT);
    assert_true(a >= 0);
    hid_t space = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    assert_true(n > 0);
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    char **v = calloc((size_t)n, sizeof *v);
    char **names = calloc((size_t)n + 1, sizeof *names);
    assert_true(v && names && H5Aread(a, type, v) >= 0);
    names[0] = strdup("t");
    for (hssize_t i = 0; i < n; i++)
        names[i + 1] = strdup(v[i]);
    H5Dvlen_reclaim(type, space, H5P_DEFAULT, v);
    free(v);
    H5Tclose(type);
    H5Sclose(space);
    H5Aclose(a);
    *count = (int)n + 1;
    return names;
}

/* The first n values of a column (all of them when n < 0, their count in *have). */
static double *read_column(hid_t file, const char *name, long n, long *have) {
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0)
        fail_msg("cannot open dataset %s", name);
    hid_t space = H5Dget_space(d);
    *have = (long)H5Sget_simple_extent_npoints(space);
    long want = n < 0 ? *have : n;
    double *v = malloc(((size_t)want + 1) * sizeof *v);
    assert_non_null(v);
    if (want > 0 && want <= *have) {
        hsize_t zero = 0, count = (hsize_t)want;
        hid_t mem = H5Screate_simple(1, &count, NULL);
        bool ok = H5Sselect_hyperslab(space, H5S_SELECT_SET, &zero, NULL, &count, NULL) >= 0 &&
                  H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, v) >= 0;
        H5Sclose(mem);
        if (!ok)
            fail_msg("cannot read %ld rows of %s", want, name);
    }
    H5Sclose(space);
    H5Dclose(d);
    return v;
}

typedef struct Reference {
    int columns; /* with t */
    char **names;
    double **values;
    long rows;
} Reference;

/* A complete recording of the same run (closed cleanly: a plain open reads it). */
static void make_reference(Reference *ref, long rows) {
    char path[96];
    snprintf(path, sizeof path, "%s/reference.h5", g_dir);
    int report;
    pid_t pid = g_children[TRIALS] = start_child(path, (uint64_t)rows, &report);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    g_children[TRIALS] = 0;
    close(report);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    ref->names = read_columns(f, &ref->columns);
    ref->values = calloc((size_t)ref->columns, sizeof *ref->values);
    assert_non_null(ref->values);
    for (int c = 0; c < ref->columns; c++) {
        long have;
        ref->values[c] = read_column(f, ref->names[c], -1, &have);
        assert_int_equal(have, rows);
    }
    ref->rows = rows;
    H5Fclose(f);
}

/* The killed file against the reference: t's rows complete in every column, to the bit. */
static void check_file(const Trial *t, hid_t f, const Reference *ref) {
    int columns;
    char **names = read_columns(f, &columns);
    assert_int_equal(columns, ref->columns);
    for (int c = 0; c < columns; c++) {
        assert_string_equal(names[c], ref->names[c]);
        long have;
        double *v = read_column(f, names[c], t->rows, &have);
        if (have < t->rows)
            fail_msg("%s: %s holds %ld rows, t %ld", t->path, names[c], have, t->rows);
        for (long r = 0; r < t->rows; r++)
            if (!isfinite(v[r]) || memcmp(&v[r], &ref->values[c][r], sizeof v[r]) != 0)
                fail_msg("%s: %s row %ld is %.17g, the complete recording's %.17g", t->path,
                         names[c], r, v[r], ref->values[c][r]);
        free(v);
        free(names[c]);
    }
    free(names);
}

static long rows_of_t(hid_t f) {
    long have;
    free(read_column(f, "t", 0, &have));
    return have;
}

static bool have_program(const char *name) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

/* The first python3 with h5py: Debian's python3-h5py is in /usr/bin's, which a python3 earlier
 * on PATH (pyenv) does not see. */
static const char *python_with_h5py(void) {
    static const char *candidates[] = {"/usr/bin/python3", "python3"};
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "%s -c 'import h5py' >/dev/null 2>&1", candidates[i]);
        if (system(cmd) == 0)
            return candidates[i];
    }
    return NULL;
}

static void test_kill9_at_20_instants(void **state) {
    (void)state;
    int inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    assert_true(inotify >= 0);
    assert_true(inotify_add_watch(inotify, g_dir, IN_MODIFY) >= 0);
    static const long in_creation[] = {1, 40, 400};
    static const long in_flush[] = {1, 3, 10, 30, 100, 300, 1000, 3000, 6000};
    TestRng rng = {0x5eed32ull};
    Trial *trials = g_trials;
    int creations = 0, flushes = 0;
    double t0 = issim_wall_time();
    for (int i = 0; i < TRIALS; i++) {
        Trial *t = &trials[i];
        snprintf(t->path, sizeof t->path, "%s/k%02d.h5", g_dir, i);
        t->pid = -1;
        if (i % 7 == 0) {
            t->when = IN_CREATION;
            t->k = in_creation[creations++ % 3];
        } else if (i % 2 == 0) {
            t->when = IN_FLUSH;
            t->k = in_flush[flushes++ % 9];
        } else {
            t->when = AT_OFFSET;
            t->offset = test_rng_range(&rng, 0.0, 1.5);
        }
    }
    run_trials(trials, TRIALS, inotify);
    close(inotify);
    double t_kills = issim_wall_time() - t0;

    /* Every file opens as a SWMR reader opens it; it holds what was flushed. */
    long most = 1;
    for (int i = 0; i < TRIALS; i++) {
        Trial *t = &trials[i];
        struct stat st;
        if (lstat(t->path, &st) != 0) {
            if (t->flushed > 0)
                fail_msg("%s: no file after %ld rows flushed", t->path, t->flushed);
            t->rows = -1;
            continue;
        }
        hid_t f = H5Fopen(t->path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
        if (f < 0)
            fail_msg("%s (killed %s, %ld rows flushed): SWMR open fails", t->path,
                     kill_names[t->when], t->flushed);
        t->rows = rows_of_t(f);
        H5Fclose(f);
        if (t->rows < t->flushed)
            fail_msg("%s: %ld rows, %ld were flushed", t->path, t->rows, t->flushed);
        if (t->rows > most)
            most = t->rows;
    }
    double t_ref = issim_wall_time();
    Reference ref = {0};
    make_reference(&ref, most);
    t_ref = issim_wall_time() - t_ref;
    double t_check = issim_wall_time();
    int absent = 0, torn = 0;
    for (int i = 0; i < TRIALS; i++) {
        Trial *t = &trials[i];
        absent += t->rows < 0;
        torn += t->in_progress && t->rows >= 0;
        printf("trial %2d: killed %-8s %6.3g  %5ld writes, %4ld rows flushed, file: %ld rows%s\n",
               i, kill_names[t->when], t->when == AT_OFFSET ? t->offset : (double)t->k, t->events,
               t->flushed, t->rows, t->in_progress ? " (inside a flush)" : "");
        if (t->rows < 0)
            continue;
        hid_t f = H5Fopen(t->path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
        assert_true(f >= 0);
        check_file(t, f, &ref);
        H5Fclose(f);
    }
    printf("%d kills in %.1f s: %d inside a flush, %d before the file had its name; every file "
           "readable, its rows those of a complete recording (%ld rows, %d columns: made in "
           "%.1f s, compared in %.1f s)\n",
           TRIALS, t_kills, torn, absent, ref.rows, ref.columns, t_ref,
           issim_wall_time() - t_check);

    const char *python = python_with_h5py();
    if (python) {
        /* h5py as a user reads a file left by a crash (docs/user-guide.md). */
        char cmd[8192];
        int at = snprintf(cmd, sizeof cmd,
                          "%s -c 'import sys, h5py, numpy as np\n"
                          "for p, n in zip(sys.argv[1::2], sys.argv[2::2]):\n"
                          "    with h5py.File(p, \"r\", swmr=True) as f:\n"
                          "        t = f[\"t\"][:]\n"
                          "        assert len(t) == int(n) and np.all(np.diff(t) > 0), p\n"
                          "        assert all(len(f[c]) >= len(t) for c in f.attrs[\"columns\"])\n"
                          "        c = f.attrs[\"columns\"][-1]\n"
                          "        assert np.all(np.isfinite(f[c][: len(t)])), p\n"
                          "' ",
                          python);
        for (int i = 0; i < TRIALS; i++)
            if (trials[i].rows >= 0)
                at += snprintf(cmd + at, sizeof cmd - (size_t)at, " %s %ld", trials[i].path,
                               trials[i].rows);
        assert_true(at < (int)sizeof cmd);
        assert_int_equal(system(cmd), 0);
        printf("h5py (swmr=True) reads the %d files\n", TRIALS - absent);
    } else {
        printf("h5py check skipped: no python3 with h5py (Debian: python3-h5py)\n");
    }
    if (have_program("h5clear")) {
        /* After `h5clear -s` (hdf5-tools) any reader opens it: h5dump, MATLAB's h5read. */
        for (int i = 0; i < TRIALS; i++) {
            const Trial *t = &trials[i];
            if (t->rows < 0)
                continue;
            char cmd[256];
            snprintf(cmd, sizeof cmd, "h5clear -s '%.96s'", t->path);
            assert_int_equal(system(cmd), 0);
            hid_t f = H5Fopen(t->path, H5F_ACC_RDONLY, H5P_DEFAULT);
            if (f < 0)
                fail_msg("%s: a plain open fails after h5clear -s", t->path);
            assert_int_equal(rows_of_t(f), t->rows);
            H5Fclose(f);
        }
        printf("after h5clear -s a plain open reads each\n");
    } else {
        printf("h5clear check skipped: no h5clear (Debian: hdf5-tools)\n");
    }
    for (int c = 0; c < ref.columns; c++) {
        free(ref.names[c]);
        free(ref.values[c]);
    }
    free(ref.names);
    free(ref.values);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_at_20_instants),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    kill_children();
    return failed;
}
