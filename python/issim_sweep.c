/* issim.sweep: a parameter study (study.h) run as `issim sweep` runs it, on worker threads
 * without the GIL, returned as a numpy structured array with the columns of the sweep's CSV
 * table (docs/studies.md): run, one per axis, status, impacts, t_impact, v_in, v_out,
 * restitution, duration, kinetic_end, one per --at probe, wall_s; and ok (status == "ok").
 * An axis whose values are all numbers is a float64 column, else a string column. */
#include "issim_py.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "issim/contactmap.h"
#include "issim/study.h"

/* What the table keeps of a StudyRow (its axis values follow from the index). */
typedef struct SweepRow {
    bool ok;
    int impacts;
    double measures[6]; /* t_impact, v_in, v_out, restitution, duration, kinetic_end */
    double probes[STUDY_MAX_PROBES];
    double wall_seconds;
    char *message; /* a failed run's, Owned; NULL when ok */
} SweepRow;

typedef struct Pool {
    const Study *study;
    SweepRow *rows;
    long count;
    atomic_long next, done;
    atomic_bool stop; /* Ctrl-C in Python: the workers take no new run */
    pthread_mutex_t lock;
    pthread_cond_t finished;
    int running;
} Pool;

static void keep_row(const StudyRow *r, SweepRow *out) {
    out->ok = r->ok;
    out->impacts = r->impacts;
    double m[6] = {r->t_impact, r->v_in, r->v_out, r->restitution, r->duration, r->kinetic_end};
    memcpy(out->measures, m, sizeof m);
    memcpy(out->probes, r->probes, sizeof out->probes);
    out->wall_seconds = r->wall_seconds;
    out->message = r->ok ? NULL : strdup(r->message);
}

static void *worker(void *arg) {
    Pool *p = arg;
    StudyRow *row = malloc(sizeof *row);
    for (long k; row && !atomic_load(&p->stop) && (k = atomic_fetch_add(&p->next, 1)) < p->count;
         atomic_fetch_add(&p->done, 1)) {
        study_run(p->study, k, row);
        keep_row(row, &p->rows[k]);
    }
    free(row);
    pthread_mutex_lock(&p->lock);
    p->running--;
    pthread_cond_signal(&p->finished);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Waits for the workers a fifth of a second at a time with the GIL released, so Ctrl-C stops
 * the sweep (the runs under way finish; no new one starts). */
static int wait_workers(Pool *p) {
    int interrupted = 0;
    for (;;) {
        int running;
        Py_BEGIN_ALLOW_THREADS;
        pthread_mutex_lock(&p->lock);
        if (p->running > 0) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 200000000L;
            until.tv_sec += until.tv_nsec / 1000000000L;
            until.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&p->finished, &p->lock, &until);
        }
        running = p->running;
        pthread_mutex_unlock(&p->lock);
        Py_END_ALLOW_THREADS;
        if (running == 0)
            return !interrupted;
        if (!interrupted && PyErr_CheckSignals() < 0) {
            interrupted = 1;
            atomic_store(&p->stop, true);
        }
    }
}

static int run_pool(Pool *p, int threads) {
    pthread_t tid[256];
    int started = 0;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->finished, NULL);
    p->running = threads;
    for (; started < threads; started++)
        if (pthread_create(&tid[started], NULL, worker, p) != 0)
            break;
    pthread_mutex_lock(&p->lock);
    p->running -= threads - started;
    pthread_mutex_unlock(&p->lock);
    int ok = started > 0 ? wait_workers(p) : (PyErr_SetString(issim_py_error, "no thread"), 0);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    pthread_cond_destroy(&p->finished);
    pthread_mutex_destroy(&p->lock);
    return ok;
}

/* ===== Arguments: the grid, sets and probes as `issim sweep` takes them ===== */

/* "NAME=SPEC": a str is the spec as --grid takes it; a sequence is its values (a list), or with
 * random sampling a pair (lo, hi). New reference to a str. */
static PyObject *axis_spec(PyObject *name, PyObject *values, bool random) {
    PyObject *spec = NULL;
    if (PyUnicode_Check(values)) {
        spec = Py_NewRef(values);
    } else {
        PyObject *text = issim_py_value_text(values); /* "{a, b, c}" */
        if (!text)
            return NULL;
        Py_ssize_t n = PyUnicode_GetLength(text);
        PyObject *inner = PyUnicode_Substring(text, 1, n - 1);
        Py_DECREF(text);
        if (!inner)
            return NULL;
        PyObject *from = PyUnicode_FromString(", ");
        PyObject *to = PyUnicode_FromString(random ? ":" : ",");
        spec = from && to ? PyUnicode_Replace(inner, from, to, -1) : NULL;
        Py_XDECREF(from);
        Py_XDECREF(to);
        Py_DECREF(inner);
    }
    PyObject *r = spec ? PyUnicode_FromFormat("%S=%U", name, spec) : NULL;
    Py_XDECREF(spec);
    return r;
}

static int add_axes(Study *study, PyObject *grid, bool random) {
    if (!PyDict_Check(grid)) {
        PyErr_Format(PyExc_TypeError, "grid must be a dict {name: values}, not %s",
                     Py_TYPE(grid)->tp_name);
        return 0;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(grid, &pos, &key, &value)) {
        PyObject *spec = axis_spec(key, value, random);
        const char *text = spec ? PyUnicode_AsUTF8(spec) : NULL;
        IssimError err = {0};
        IssimStatus s = text ? study_add_axis(study, text, &err) : ISSIM_ERR_INVALID;
        Py_XDECREF(spec);
        if (!text)
            return 0;
        if (s != ISSIM_OK)
            return issim_py_raise(&err), 0;
    }
    return 1;
}

static int add_probes(Study *study, PyObject *at) {
    if (!at || at == Py_None)
        return 1;
    PyObject *fast = PySequence_Fast(at, "at must be a list of 'VAR@T' or 'VAR@end'");
    if (!fast)
        return 0;
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(fast); i++) {
        const char *spec = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
        IssimError err = {0};
        ok = spec != NULL;
        if (ok && study_add_probe(study, spec, &err) != ISSIM_OK)
            ok = (issim_py_raise(&err), 0);
    }
    Py_DECREF(fast);
    return ok;
}

/* ===== The table ===== */

static bool axis_numeric(const Study *study, int axis) {
    const StudyAxis *a = &study->axes[axis];
    for (int i = 0; i < a->count; i++) {
        char *end;
        double v = strtod(a->values[i], &end);
        if (end == a->values[i] || *end || !isfinite(v))
            return false;
    }
    return true;
}

static size_t status_width(const SweepRow *rows, long n) {
    size_t width = 2; /* "ok" */
    for (long i = 0; i < n; i++)
        if (rows[i].message && strlen(rows[i].message) > width)
            width = strlen(rows[i].message);
    return width;
}

static PyObject *field(const char *name, const char *format) {
    return Py_BuildValue("(ss)", name, format);
}

/* [(name, format)] of the table, as numpy's dtype() takes it. */
static PyObject *table_fields(const Study *study, const SweepRow *rows, long n) {
    PyObject *list = PyList_New(0);
    char status[32];
    snprintf(status, sizeof status, "U%zu", status_width(rows, n));
    PyObject *items[64];
    int count = 0;
    items[count++] = field("run", "i8");
    for (int i = 0; i < study->axis_count; i++)
        items[count++] =
            field(study->axes[i].name, study->samples > 0 || axis_numeric(study, i) ? "f8" : "U96");
    items[count++] = field("status", status);
    items[count++] = field("ok", "?");
    items[count++] = field("impacts", "i4");
    const char *measures[] = {"t_impact",    "v_in",     "v_out",
                              "restitution", "duration", "kinetic_end"};
    for (int i = 0; i < 6; i++)
        items[count++] = field(measures[i], "f8");
    for (int i = 0; i < study->probe_count; i++) {
        char name[160];
        const StudyProbe *p = &study->probes[i];
        if (isinf(p->t))
            snprintf(name, sizeof name, "%s@end", p->var);
        else
            snprintf(name, sizeof name, "%s@%.17g", p->var, p->t);
        items[count++] = field(name, "f8");
    }
    items[count++] = field("wall_s", "f8");
    for (int i = 0; i < count; i++) {
        if (list && (!items[i] || PyList_Append(list, items[i]) < 0))
            Py_CLEAR(list);
        Py_XDECREF(items[i]);
    }
    return list;
}

/* A string into a numpy U field: UCS4, zero-padded (the array was zeroed), cut at its width. */
static int put_text(char *at, const PyArray_Descr *fd, const char *text) {
    PyObject *u = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
    if (!u)
        return 0;
    Py_ssize_t width = fd->elsize / 4, n = PyUnicode_GetLength(u);
    Py_UCS4 *buf = PyUnicode_AsUCS4Copy(u);
    Py_DECREF(u);
    if (!buf)
        return 0;
    memcpy(at, buf, (size_t)(n < width ? n : width) * sizeof(Py_UCS4));
    PyMem_Free(buf);
    return 1;
}

/* The i-th field of a table row (names as table_fields makes them): a number's double, or
 * *text for a string column. */
static double row_number(const Study *study, const SweepRow *r, Py_ssize_t i, const char *value) {
    int f = (int)i - study->axis_count - 4; /* after run, the axes, status and ok, impacts */
    if (i <= study->axis_count)
        return strtod(value, NULL);
    if (f < 6)
        return r->measures[f];
    if (f - 6 < study->probe_count)
        return r->probes[f - 6];
    return r->wall_seconds;
}

/* Writes one row at the fields' offsets: no Python object per number. */
static int fill_row(PyArrayObject *table, const Study *study, long index, const SweepRow *r) {
    PyArray_Descr *d = PyArray_DESCR(table);
    char *base = PyArray_BYTES(table) + index * PyArray_STRIDE(table, 0);
    char values[STUDY_MAX_AXES][STUDY_VALUE_MAX];
    study_run_values(study, index, values);
    int64_t run = index;
    memcpy(base, &run, sizeof run);
    for (Py_ssize_t i = 1; i < PyTuple_GET_SIZE(d->names); i++) {
        PyObject *info = PyDict_GetItem(d->fields, PyTuple_GET_ITEM(d->names, i));
        PyArray_Descr *fd = (PyArray_Descr *)PyTuple_GET_ITEM(info, 0);
        char *at = base + PyLong_AsSsize_t(PyTuple_GET_ITEM(info, 1));
        const char *axis = i <= study->axis_count ? values[i - 1] : "";
        if (i == study->axis_count + 1) {
            if (!put_text(at, fd, r->ok ? "ok" : r->message ? r->message : "failed"))
                return 0;
        } else if (i == study->axis_count + 2) {
            *at = r->ok;
        } else if (i == study->axis_count + 3) {
            int32_t impacts = r->impacts;
            memcpy(at, &impacts, sizeof impacts);
        } else if (fd->type_num == NPY_UNICODE) {
            if (!put_text(at, fd, axis))
                return 0;
        } else {
            double v = row_number(study, r, i, axis);
            memcpy(at, &v, sizeof v);
        }
    }
    return 1;
}

static PyObject *make_table(const Study *study, const SweepRow *rows, long n) {
    PyObject *fields = table_fields(study, rows, n);
    PyArray_Descr *dtype = NULL;
    if (!fields || !PyArray_DescrConverter(fields, &dtype)) {
        Py_XDECREF(fields);
        return NULL;
    }
    Py_DECREF(fields);
    npy_intp dims[1] = {n};
    PyArrayObject *table = (PyArrayObject *)PyArray_Zeros(1, dims, dtype, 0);
    for (long i = 0; table && i < n; i++)
        if (!fill_row(table, study, i, &rows[i]))
            Py_CLEAR(table);
    return (PyObject *)table;
}

/* ===== issim.sweep ===== */

typedef struct SweepArgs {
    PyObject *scene, *grid, *until, *set, *at, *random;
    unsigned long long seed;
    int threads;
    long max_runs;
} SweepArgs;

static int prepare(Study *study, const SweepArgs *a, PyObject **sets_list, const char ***sets) {
    if (!issim_py_find_scene(a->scene, study->scene, sizeof study->scene))
        return 0;
    if (a->random && a->random != Py_None) {
        study->samples = PyLong_AsLong(a->random);
        if (study->samples < 1)
            return PyErr_Occurred() ? 0
                                    : (PyErr_SetString(PyExc_ValueError, "random needs N >= 1"), 0);
        study->seed = a->seed;
    }
    if (a->until && a->until != Py_None) {
        study->until = PyFloat_AsDouble(a->until);
        if (!(study->until > 0 && study->until <= STUDY_UNTIL_MAX))
            return PyErr_Occurred() ? 0
                                    : (PyErr_SetString(PyExc_ValueError,
                                                       "until needs a time in (0, 1e6] seconds"),
                                       0);
    }
    *sets_list = issim_py_assignments(a->set, "set");
    *sets = *sets_list ? issim_py_strings(*sets_list, &study->set_count) : NULL;
    if (!*sets)
        return 0;
    study->sets = *sets;
    return add_axes(study, a->grid, study->samples > 0) && add_probes(study, a->at);
}

static int check(Study *study, long max_runs) {
    long runs = study_run_count(study);
    if (runs > max_runs) {
        PyErr_Format(issim_py_error, "%s%ld runs is over the limit of %ld (max_runs=N to raise it)",
                     runs == LONG_MAX ? "more than " : "", runs, max_runs);
        return 0;
    }
    IssimError err = {0};
    IssimStatus s;
    Py_BEGIN_ALLOW_THREADS;
    s = study_check(study, &err);
    Py_END_ALLOW_THREADS;
    if (s != ISSIM_OK)
        return issim_py_raise(&err), 0;
    return 1;
}

/* The runs, as cmd_sweep.c runs them: contact maps read once and shared by the threads. */
static PyObject *run_study(const Study *study, int threads) {
    long n = study_run_count(study);
    SweepRow *rows = calloc((size_t)(n > 0 ? n : 1), sizeof *rows);
    if (!rows)
        return PyErr_NoMemory();
    Pool pool = {.study = study, .rows = rows, .count = n};
    if (threads > n)
        threads = (int)(n > 0 ? n : 1);
    contact_map_cache_enable();
    contact_map_read_threads(threads);
    int ok = run_pool(&pool, threads);
    contact_map_read_threads(1);
    contact_map_cache_clear();
    PyObject *table = ok ? make_table(study, rows, n) : NULL;
    for (long i = 0; i < n; i++)
        free(rows[i].message);
    free(rows);
    return table;
}

PyObject *issim_py_sweep(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"scene",  "grid", "until",   "set",      "at",
                               "random", "seed", "threads", "max_runs", NULL};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    SweepArgs a = {.threads = cores < 1     ? 1
                              : cores > 256 ? 256
                                            : (int)cores,
                   .max_runs = STUDY_DEFAULT_MAX_RUNS};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$OOOOKil", keywords, &a.scene, &a.grid,
                                     &a.until, &a.set, &a.at, &a.random, &a.seed, &a.threads,
                                     &a.max_runs))
        return NULL;
    if (a.threads < 1 || a.threads > 256)
        return PyErr_Format(PyExc_ValueError, "threads needs 1 ... 256, not %d", a.threads);
    if (a.max_runs > STUDY_MAX_RUNS)
        a.max_runs = STUDY_MAX_RUNS;
    Study study = {0};
    PyObject *sets_list = NULL;
    const char **sets = NULL;
    PyObject *table = NULL;
    if (prepare(&study, &a, &sets_list, &sets) && check(&study, a.max_runs))
        table = run_study(&study, a.threads);
    study_free(&study);
    issim_py_strings_free(sets);
    Py_XDECREF(sets_list);
    return table;
}
