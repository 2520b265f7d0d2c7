/* issim.Sim: one headless session (sim.h's sim_headless_*), its state as numpy views of the
 * session's published frame, property edits with the GUI's validation, recording, and the
 * contact and impact tables as structured arrays. The engine runs with the GIL released; a Sim
 * is used by one Python thread at a time (another gets issim.Error, never a torn state). */
#include "issim_py.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/io.h"
#include "issim/sim.h"
#include "issim/study.h"

typedef struct SimObject {
    PyObject ob_base;
    Sim *sim;
    SimSummary *summary;
    PyObject *options; /* tuple: the lists of str the Sim's options borrow (sets, params) */
    const char **sets, **params;
    PyObject *record_path, *record_vars; /* bytes the open recording borrows, or NULL */
    PyObject *scene;                     /* str: the scene's path (or source name) */
    int busy;                            /* a method is running the engine without the GIL */
    int ended;                           /* close(): the run is over, the state stays readable */
} SimObject;

/* ===== Use by one thread at a time ===== */

static int sim_usable(SimObject *self, bool running) {
    if (!self->sim) {
        PyErr_SetString(issim_py_error, "this Sim was not opened (use issim.open)");
        return 0;
    }
    if (self->busy) {
        PyErr_SetString(issim_py_error, "this Sim is running in another thread");
        return 0;
    }
    if (running && self->ended) {
        PyErr_SetString(issim_py_error, "this Sim is closed");
        return 0;
    }
    return 1;
}

static Engine *sim_engine_of(SimObject *self) {
    return sim_engine(self->sim);
}

/* ===== Opening ===== */

typedef struct OpenArgs {
    PyObject *scene, *source, *name, *params, *set, *dt, *integrator, *record, *vars;
    int every;
} OpenArgs;

static int integrator_kind(PyObject *name) {
    const char *text = name && name != Py_None ? PyUnicode_AsUTF8(name) : NULL;
    if (!text)
        return PyErr_Occurred() ? -2 : -1;
    int k = vocabulary_parse(integrator_names, INTEGRATOR_COUNT, text);
    if (k >= 0)
        return k;
    char names[64];
    vocabulary_list(integrator_names, INTEGRATOR_COUNT, names, sizeof names);
    PyErr_Format(PyExc_ValueError, "integrator must be one of %s, not '%s'", names, text);
    return -2;
}

/* The options of `issim run --headless` from open()'s arguments; the strings stay in
 * self->options. */
static int fill_options(SimObject *self, const OpenArgs *a, SimOptions *o) {
    PyObject *sets = issim_py_assignments(a->set, "set");
    PyObject *params = sets ? issim_py_assignments(a->params, "params") : NULL;
    if (!params) {
        Py_XDECREF(sets);
        return 0;
    }
    self->options = PyTuple_Pack(2, sets, params);
    Py_DECREF(sets);
    Py_DECREF(params);
    if (!self->options)
        return 0;
    self->sets = issim_py_strings(sets, &o->set_count);
    self->params = self->sets ? issim_py_strings(params, &o->param_count) : NULL;
    if (!self->params)
        return 0;
    if (o->param_count > SCENE_MAX_PARAMS) {
        PyErr_Format(issim_py_error, "too many params (at most %d)", SCENE_MAX_PARAMS);
        return 0;
    }
    o->sets = self->sets;
    o->params = self->params;
    o->quiet = true;
    o->command_line = "issim.open (Python)";
    o->dt = a->dt && a->dt != Py_None ? PyFloat_AsDouble(a->dt) : 0.0;
    if (PyErr_Occurred())
        return 0;
    if (a->dt && a->dt != Py_None && !(o->dt > 0.0 && o->dt <= 1.0)) {
        PyErr_Format(PyExc_ValueError, "dt needs a step in (0, 1] seconds, not %R", a->dt);
        return 0;
    }
    o->integrator = integrator_kind(a->integrator);
    return o->integrator != -2;
}

static Sim *create_from_source(const char *name, PyObject *source, const SimOptions *o,
                               IssimError *err) {
    Py_ssize_t size = 0;
    const char *text = PyUnicode_AsUTF8AndSize(source, &size);
    if (!text)
        return NULL;
    SceneLimits limits = scene_limits_default();
    limits.params = o->params;
    limits.param_count = o->param_count;
    Sim *sim = NULL;
    ThingDb *db = NULL;
    Py_BEGIN_ALLOW_THREADS;
    if (scene_load_string(name, text, (size_t)size, &limits, &db, err) == ISSIM_OK)
        sim = sim_create_from_db(db, name, o, err);
    thingdb_destroy(db);
    Py_END_ALLOW_THREADS;
    return sim;
}

static Sim *create_from_file(const char *path, const SimOptions *o, IssimError *err) {
    Sim *sim;
    Py_BEGIN_ALLOW_THREADS;
    sim = sim_create(path, o, err);
    Py_END_ALLOW_THREADS;
    return sim;
}

/* The scene's path or the source's name (self->scene), then the session. */
static int open_session(SimObject *self, const OpenArgs *a, SimOptions *o) {
    char path[PATH_MAX];
    IssimError err = {0};
    if (a->source) {
        self->scene = a->name ? Py_NewRef(a->name) : PyUnicode_FromString("<source>");
        const char *name = self->scene ? PyUnicode_AsUTF8(self->scene) : NULL;
        if (!name)
            return 0;
        self->sim = create_from_source(name, a->source, o, &err);
    } else {
        if (!issim_py_find_scene(a->scene, path, sizeof path))
            return 0;
        self->scene = PyUnicode_DecodeFSDefault(path);
        if (!self->scene)
            return 0;
        self->sim = create_from_file(path, o, &err);
    }
    if (!self->sim)
        return PyErr_Occurred() ? 0 : (issim_py_raise(&err), 0);
    self->summary = calloc(1, sizeof *self->summary);
    if (!self->summary)
        return PyErr_NoMemory(), 0;
    if (sim_headless_begin(self->sim, self->summary, &err) != ISSIM_OK)
        return issim_py_raise(&err), 0;
    return 1;
}

static PyObject *record_start(SimObject *self, PyObject *path, PyObject *vars, int every);

PyObject *issim_py_open(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"scene",      "source", "name", "params", "set", "dt",
                               "integrator", "record", "vars", "every",  NULL};
    OpenArgs a = {.every = 1};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$O!O!OOOOOOi", keywords, &a.scene,
                                     &PyUnicode_Type, &a.source, &PyUnicode_Type, &a.name,
                                     &a.params, &a.set, &a.dt, &a.integrator, &a.record, &a.vars,
                                     &a.every))
        return NULL;
    if (a.scene == Py_None)
        a.scene = NULL;
    if (!a.scene == !a.source)
        return PyErr_Format(PyExc_TypeError,
                            "open() takes a scene (a path or a bundled "
                            "scene's name) or source=TEXT, not %s",
                            a.scene ? "both" : "neither");
    SimObject *self = (SimObject *)IssimSimType.tp_alloc(&IssimSimType, 0);
    if (!self)
        return NULL;
    SimOptions o = sim_options_default();
    if (!fill_options(self, &a, &o) || !open_session(self, &a, &o)) {
        Py_DECREF(self);
        return NULL;
    }
    if (a.record && a.record != Py_None) {
        PyObject *r = record_start(self, a.record, a.vars, a.every);
        if (!r) {
            Py_DECREF(self);
            return NULL;
        }
        Py_DECREF(r);
    }
    return (PyObject *)self;
}

static void sim_dealloc(SimObject *self) {
    if (self->sim) {
        if (!self->ended)
            sim_headless_end(self->sim, NULL);
        sim_destroy(self->sim);
    }
    free(self->summary);
    issim_py_strings_free(self->sets);
    issim_py_strings_free(self->params);
    Py_XDECREF(self->options);
    Py_XDECREF(self->record_path);
    Py_XDECREF(self->record_vars);
    Py_XDECREF(self->scene);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ===== Running ===== */

/* Runs the engine without the GIL; self->busy keeps other threads off this Sim meanwhile. */
static PyObject *advance(SimObject *self, double until, long long steps) {
    if (!sim_usable(self, true))
        return NULL;
    IssimError err = {0};
    IssimStatus s;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS;
    s = steps >= 0 ? sim_headless_step(self->sim, (uint64_t)steps, &err)
                   : sim_headless_advance(self->sim, until, &err);
    Py_END_ALLOW_THREADS;
    self->busy = 0;
    if (s != ISSIM_OK)
        return issim_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *sim_run(SimObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"until", NULL};
    double until;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "d", keywords, &until))
        return NULL;
    /* The bound of `issim run --until`: beyond it the step count is no longer exact. */
    if (!(until >= 0.0 && until <= STUDY_UNTIL_MAX))
        return PyErr_Format(PyExc_ValueError, "until needs a time in [0, 1e6] seconds, not %R",
                            PyTuple_GET_ITEM(args, 0));
    return advance(self, until, -1);
}

static PyObject *sim_step(SimObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"n", NULL};
    long long n = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|L", keywords, &n))
        return NULL;
    if (n < 0)
        return PyErr_Format(PyExc_ValueError, "step(n) needs n >= 0, not %lld", n);
    return advance(self, 0.0, n);
}

static PyObject *sim_close(SimObject *self, PyObject *unused) {
    if (self->sim && !self->ended && sim_usable(self, false)) {
        sim_headless_end(self->sim, NULL);
        self->ended = 1;
        Py_CLEAR(self->record_path);
        Py_CLEAR(self->record_vars);
    }
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *sim_enter(SimObject *self, PyObject *unused) {
    return Py_NewRef(self);
}

static PyObject *sim_exit(SimObject *self, PyObject *args) {
    return sim_close(self, NULL);
}

/* ===== Reading ===== */

/* A read-only view of n rows of `cols` doubles of the published frame, from value `first`: it
 * keeps the Sim alive and shows every later step (the frame is rewritten in place). */
static PyObject *frame_view(SimObject *self, int first, npy_intp rows, npy_intp cols) {
    if (!sim_usable(self, false))
        return NULL;
    double *data = (double *)sim_values(self->sim) + first;
    npy_intp dims[2] = {rows, cols};
    npy_intp strides[2] = {ENGINE_FRAME_BODY_VALUES * sizeof(double), sizeof(double)};
    int nd = rows < 0 ? 1 : 2;
    if (nd == 1) {
        dims[0] = cols;
        strides[0] = sizeof(double);
    }
    PyObject *view =
        PyArray_New(&PyArray_Type, nd, dims, NPY_DOUBLE, strides, data, 0, NPY_ARRAY_ALIGNED, NULL);
    if (!view)
        return NULL;
    if (PyArray_SetBaseObject((PyArrayObject *)view, Py_NewRef(self)) < 0) {
        Py_DECREF(view);
        return NULL;
    }
    return view;
}

static npy_intp body_count(SimObject *self) {
    return engine_body_count(sim_engine_of(self));
}

static PyObject *get_bodies(SimObject *self, void *closure) {
    if (!sim_usable(self, false))
        return NULL;
    return frame_view(self, 0, body_count(self), ENGINE_FRAME_BODY_VALUES);
}

/* pos, orient, vel, angvel: columns of the bodies' rows, as closure "offset:width". */
static PyObject *get_body_columns(SimObject *self, void *closure) {
    int first = (int)((intptr_t)closure >> 8), width = (int)((intptr_t)closure & 0xff);
    if (!sim_usable(self, false))
        return NULL;
    return frame_view(self, first, body_count(self), width);
}

static PyObject *get_energy(SimObject *self, void *closure) {
    if (!sim_usable(self, false))
        return NULL;
    return frame_view(self, (int)body_count(self) * ENGINE_FRAME_BODY_VALUES, -1,
                      ENGINE_FRAME_ENERGY_VALUES);
}

static PyObject *get_values(SimObject *self, void *closure) {
    if (!sim_usable(self, false))
        return NULL;
    return frame_view(self, 0, -1, engine_var_count(sim_engine_of(self)));
}

static PyObject *get_t(SimObject *self, void *closure) {
    if (!sim_usable(self, false))
        return NULL;
    return PyFloat_FromDouble(engine_time(sim_engine_of(self)));
}

static PyObject *get_dt(SimObject *self, void *closure) {
    if (!sim_usable(self, false))
        return NULL;
    return PyFloat_FromDouble(engine_dt(sim_engine_of(self)));
}

static PyObject *get_scene(SimObject *self, void *closure) {
    return Py_NewRef(self->scene ? self->scene : Py_None);
}

/* Names of the state variables (kind 0), their units (1) or the bodies (2). */
static PyObject *name_list(SimObject *self, int kind) {
    if (!sim_usable(self, false))
        return NULL;
    const Engine *e = sim_engine_of(self);
    int n = kind == 2 ? engine_body_count(e) : engine_var_count(e);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        const char *s = kind == 0   ? engine_var_name(e, i)
                        : kind == 1 ? engine_var_unit(e, i)
                                    : engine_body_name(e, engine_body_id(e, i));
        PyObject *item = PyUnicode_FromString(s ? s : "");
        if (!item)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *get_variables(SimObject *self, void *closure) {
    return name_list(self, 0);
}
static PyObject *get_units(SimObject *self, void *closure) {
    return name_list(self, 1);
}
static PyObject *get_body_names(SimObject *self, void *closure) {
    return name_list(self, 2);
}

static PyObject *vector(const double *v, npy_intp n) {
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (a)
        memcpy(PyArray_DATA((PyArrayObject *)a), v, (size_t)n * sizeof(double));
    return a;
}

static PyObject *points(const PropValue *v) {
    npy_intp dims[2] = {v->point_count, 3};
    PyObject *a = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    double *out = a ? PyArray_DATA((PyArrayObject *)a) : NULL;
    for (int i = 0; out && i < v->point_count; i++) {
        out[3 * i] = v->points[i].x;
        out[3 * i + 1] = v->points[i].y;
        out[3 * i + 2] = v->points[i].z;
    }
    return a;
}

static PyObject *property_value(const PropDef *def, const PropValue *v) {
    switch (def->type) {
    case PROP_REAL:
        return PyFloat_FromDouble(v->real);
    case PROP_INT:
        return PyLong_FromLongLong((long long)v->integer);
    case PROP_BOOL:
        return PyBool_FromLong(v->boolean);
    case PROP_ENUM:
        return PyUnicode_FromString(
            v->integer >= 0 && v->integer < def->enum_count ? def->enum_names[v->integer] : "");
    case PROP_STRING:
        return PyUnicode_FromString(v->string);
    case PROP_VEC3:
        return vector(v->vec, 3);
    case PROP_QUAT:
        return vector(v->vec, 4);
    case PROP_POINTS:
        return points(v);
    }
    return PyErr_Format(issim_py_error, "property of unknown type %d", (int)def->type);
}

static PyObject *sim_get(SimObject *self, PyObject *name) {
    if (!sim_usable(self, false))
        return NULL;
    const char *text = PyUnicode_AsUTF8(name);
    if (!text)
        return NULL;
    const Engine *e = sim_engine_of(self);
    int var = engine_var_find(e, text);
    if (var >= 0)
        return PyFloat_FromDouble(sim_values(self->sim)[var]);
    const ThingDb *db = engine_thingdb(e);
    ThingId thing;
    int prop;
    IssimError err = {0};
    if (thingdb_resolve(db, text, &thing, &prop, &err) != ISSIM_OK)
        return PyErr_Format(issim_py_error,
                            "'%s' is neither a state variable (they look like %s) nor a "
                            "property: %s",
                            text, engine_var_count(e) > 2 ? engine_var_name(e, 2) : "bar.pos.z",
                            err.message);
    return property_value(thing_prop_def(db, thing, prop), thing_prop_value(db, thing, prop));
}

/* ===== Editing and recording ===== */

static PyObject *sim_set(SimObject *self, PyObject *args) {
    const char *path;
    PyObject *value;
    if (!PyArg_ParseTuple(args, "sO:set", &path, &value) || !sim_usable(self, true))
        return NULL;
    PyObject *text = issim_py_value_text(value);
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
    if (!utf8) {
        Py_XDECREF(text);
        return NULL;
    }
    IssimError err = {0};
    IssimStatus s = sim_headless_edit(self->sim, path, utf8, &err);
    Py_DECREF(text);
    if (s != ISSIM_OK)
        return issim_py_raise(&err);
    Py_RETURN_NONE;
}

/* vars: None, "a,b" or a sequence of names: the --vars list. New reference to bytes or None. */
static PyObject *vars_text(PyObject *vars) {
    if (!vars || vars == Py_None)
        Py_RETURN_NONE;
    PyObject *joined = NULL;
    if (PyUnicode_Check(vars)) {
        joined = Py_NewRef(vars);
    } else {
        PyObject *sep = PyUnicode_FromString(",");
        joined = sep ? PyUnicode_Join(sep, vars) : NULL;
        Py_XDECREF(sep);
    }
    PyObject *bytes = joined ? PyUnicode_AsUTF8String(joined) : NULL;
    Py_XDECREF(joined);
    return bytes;
}

static PyObject *record_start(SimObject *self, PyObject *path, PyObject *vars, int every) {
    if (!sim_usable(self, true))
        return NULL;
    if (every < 1)
        return PyErr_Format(PyExc_ValueError, "every needs a positive integer, not %d", every);
    PyObject *path_bytes = NULL;
    if (!PyUnicode_FSConverter(path, &path_bytes))
        return NULL;
    PyObject *vars_bytes = vars_text(vars);
    if (!vars_bytes) {
        Py_DECREF(path_bytes);
        return NULL;
    }
    IssimError err = {0};
    IssimStatus s = sim_headless_record(
        self->sim, PyBytes_AS_STRING(path_bytes),
        vars_bytes == Py_None ? NULL : PyBytes_AS_STRING(vars_bytes), every, &err);
    /* The session borrows both until the recording ends. */
    Py_XSETREF(self->record_path, path_bytes);
    Py_XSETREF(self->record_vars, vars_bytes);
    if (s != ISSIM_OK)
        return issim_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *sim_record(SimObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"path", "vars", "every", NULL};
    PyObject *path, *vars = NULL;
    int every = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O$i", keywords, &path, &vars, &every))
        return NULL;
    return record_start(self, path, vars, every);
}

static PyObject *sim_stop_recording(SimObject *self, PyObject *unused) {
    if (!sim_usable(self, false))
        return NULL;
    IssimError err = {0};
    IssimStatus s = sim_headless_record_end(self->sim, &err);
    Py_CLEAR(self->record_path);
    Py_CLEAR(self->record_vars);
    if (s != ISSIM_OK)
        return issim_py_raise(&err);
    return PyLong_FromUnsignedLongLong(self->summary->rows_recorded);
}

/* ===== Contacts and impacts: structured arrays of the C records ===== */

/* A numpy dtype over a C struct: names, numpy formats and offsetof()s, itemsize sizeof. */
static PyArray_Descr *struct_dtype(PyObject *names, PyObject *formats, PyObject *offsets,
                                   size_t size) {
    PyArray_Descr *descr = NULL;
    PyObject *spec = names && formats && offsets
                         ? Py_BuildValue("{sOsOsOsn}", "names", names, "formats", formats,
                                         "offsets", offsets, "itemsize", (Py_ssize_t)size)
                         : NULL;
    if (spec)
        PyArray_DescrConverter(spec, &descr);
    Py_XDECREF(spec);
    Py_XDECREF(names);
    Py_XDECREF(formats);
    Py_XDECREF(offsets);
    return descr;
}

static PyArray_Descr *contact_dtype(void) {
    static PyArray_Descr *dtype;
    if (dtype)
        return dtype;
    /* body_a, body_b are rewritten from packed ids into body indices (-1: an obstacle). */
    dtype = struct_dtype(
        Py_BuildValue("[sssssssssss]", "id", "obstacle", "body_a", "body_b", "point", "normal",
                      "depth", "depth_rate", "normal_force", "force", "patch"),
        Py_BuildValue("[sssssssssss]", "u4", "i4", "i8", "i8", "(3,)f8", "(3,)f8", "f8", "f8", "f8",
                      "(3,)f8", "i4"),
        Py_BuildValue("[nnnnnnnnnnn]", offsetof(ContactReport, id),
                      offsetof(ContactReport, obstacle), offsetof(ContactReport, body_a),
                      offsetof(ContactReport, body_b), offsetof(ContactReport, point),
                      offsetof(ContactReport, normal), offsetof(ContactReport, depth),
                      offsetof(ContactReport, depth_rate), offsetof(ContactReport, normal_force),
                      offsetof(ContactReport, force), offsetof(ContactReport, patch)),
        sizeof(ContactReport));
    return dtype;
}

static PyArray_Descr *impact_dtype(void) {
    static PyArray_Descr *dtype;
    if (dtype)
        return dtype;
    dtype = struct_dtype(
        Py_BuildValue("[sssssssss]", "body", "body_b", "t_begin", "t_end", "v_in", "v_out",
                      "restitution", "apex", "contacts"),
        Py_BuildValue("[sssssssss]", "i4", "i4", "f8", "f8", "f8", "f8", "f8", "f8", "i4"),
        Py_BuildValue("[nnnnnnnnn]", offsetof(SimImpact, body), offsetof(SimImpact, body_b),
                      offsetof(SimImpact, t_begin), offsetof(SimImpact, t_end),
                      offsetof(SimImpact, v_in), offsetof(SimImpact, v_out),
                      offsetof(SimImpact, restitution), offsetof(SimImpact, apex),
                      offsetof(SimImpact, contacts)),
        sizeof(SimImpact));
    return dtype;
}

static PyObject *record_array(PyArray_Descr *dtype, npy_intp n) {
    if (!dtype)
        return NULL;
    Py_INCREF(dtype); /* PyArray_Zeros steals it; the cache keeps its own */
    return PyArray_Zeros(1, &n, dtype, 0);
}

static int reports(const Engine *e, ContactReport *out, int max) {
    int n = engine_contact_reports(e, out, max);
    return n + engine_smooth_contact_reports(e, out + n, max - n);
}

/* The engine writes its reports straight into the array's buffer: one copy, no other. */
static PyObject *sim_contacts(SimObject *self, PyObject *unused) {
    if (!sim_usable(self, false))
        return NULL;
    const Engine *e = sim_engine_of(self);
    int max = engine_active_contact_count(e) + engine_reduced_pair_count(e) + 8;
    for (;;) {
        PyObject *a = record_array(contact_dtype(), max);
        if (!a)
            return NULL;
        ContactReport *c = PyArray_DATA((PyArrayObject *)a);
        int n = reports(e, c, max);
        if (n == max) { /* perhaps more than counted: try again larger */
            Py_DECREF(a);
            max *= 2;
            continue;
        }
        for (int i = 0; i < n; i++) {
            int64_t a_index = c[i].body_a ? engine_body_id_unpack(c[i].body_a).index : -1;
            int64_t b_index = c[i].body_b ? engine_body_id_unpack(c[i].body_b).index : -1;
            memcpy(&c[i].body_a, &a_index, sizeof a_index);
            memcpy(&c[i].body_b, &b_index, sizeof b_index);
        }
        npy_intp dims[1] = {n};
        PyArray_Dims shape = {dims, 1};
        PyObject *r = PyArray_Resize((PyArrayObject *)a, &shape, 0, NPY_CORDER);
        if (!r) {
            Py_DECREF(a);
            return NULL;
        }
        Py_DECREF(r);
        return a;
    }
}

/* A copy: the impacts of the run so far (the last one may still be open: t_end 0). */
static PyObject *get_impacts(SimObject *self, void *closure) {
    if (!sim_usable(self, false))
        return NULL;
    int n = self->summary->impact_count;
    PyObject *a = record_array(impact_dtype(), n);
    if (a)
        memcpy(PyArray_DATA((PyArrayObject *)a), self->summary->impacts,
               (size_t)n * sizeof(SimImpact));
    return a;
}

static PyObject *sim_summary(SimObject *self, PyObject *unused) {
    if (!sim_usable(self, false))
        return NULL;
    const SimSummary *s = self->summary;
    PyObject *impacts = get_impacts(self, NULL);
    if (!impacts)
        return NULL;
    return Py_BuildValue("{sdsKsKsKsKsKsdsdsNsKsOsssK}", "t_end", s->t_end, "output_steps",
                         (unsigned long long)s->output_steps, "contact_onsets",
                         (unsigned long long)s->contact_onsets, "contact_ends",
                         (unsigned long long)s->contact_ends, "integrator_steps",
                         (unsigned long long)s->engine.steps, "complementarity_steps",
                         (unsigned long long)s->engine.complementarity_steps, "wall_seconds",
                         s->wall_seconds, "drop_height", s->drop_height, "impacts", impacts,
                         "rows_recorded", (unsigned long long)s->rows_recorded, "recording_failed",
                         s->recording_failed ? Py_True : Py_False, "recording_error",
                         s->recording_error, "state_hash", (unsigned long long)s->state_hash);
}

/* The text `issim run --headless` prints after its run (sim_print_summary). */
static PyObject *sim_report(SimObject *self, PyObject *unused) {
    if (!sim_usable(self, false))
        return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return PyErr_NoMemory();
    sim_print_summary(self->sim, self->summary, f);
    fclose(f);
    PyObject *r = PyUnicode_DecodeUTF8(text, (Py_ssize_t)size, "replace");
    free(text);
    return r;
}

static PyObject *sim_repr(SimObject *self) {
    if (!self->sim)
        return PyUnicode_FromString("<issim.Sim (not opened)>");
    char *t = PyOS_double_to_string(engine_time(sim_engine_of(self)), 'r', 0, 0, NULL);
    PyObject *r = t ? PyUnicode_FromFormat("<issim.Sim %R t=%s%s>", self->scene, t,
                                           self->ended ? " closed" : "")
                    : PyErr_NoMemory();
    PyMem_Free(t);
    return r;
}

static PyMethodDef sim_methods[] = {
    {"run", (PyCFunction)(void (*)(void))sim_run, METH_VARARGS | METH_KEYWORDS,
     "run(until): advance to time `until` (s) on the scene's output instants"},
    {"step", (PyCFunction)(void (*)(void))sim_step, METH_VARARGS | METH_KEYWORDS,
     "step(n=1): advance n output steps (dt each)"},
    {"get", (PyCFunction)sim_get, METH_O,
     "get(name): a state variable now ('bar.pos.z', float) or a property ('bar.mass')"},
    {"set", (PyCFunction)sim_set, METH_VARARGS,
     "set(path, value): edit a property now, validated as the GUI's edits"},
    {"record", (PyCFunction)(void (*)(void))sim_record, METH_VARARGS | METH_KEYWORDS,
     "record(path, vars=None, *, every=1): record from now to .csv or .h5 (as --record)"},
    {"stop_recording", (PyCFunction)sim_stop_recording, METH_NOARGS,
     "stop_recording() -> rows written"},
    {"contacts", (PyCFunction)sim_contacts, METH_NOARGS,
     "contacts() -> structured array of the active contacts (a fresh array)"},
    {"summary", (PyCFunction)sim_summary, METH_NOARGS,
     "summary() -> dict: the run's counts, impacts, recording"},
    {"report", (PyCFunction)sim_report, METH_NOARGS,
     "report() -> str: the summary `issim run --headless` prints"},
    {"close", (PyCFunction)sim_close, METH_NOARGS,
     "close(): end the run and its recording (the state stays readable)"},
    {"__enter__", (PyCFunction)sim_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)sim_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

#define COLUMNS(first, width) ((void *)(intptr_t)((first) << 8 | (width)))

static PyGetSetDef sim_getset[] = {
    {"t", (getter)get_t, NULL, "simulated time, s", NULL},
    {"dt", (getter)get_dt, NULL, "output step, s", NULL},
    {"scene", (getter)get_scene, NULL, "the scene's path (or source name)", NULL},
    {"bodies", (getter)get_bodies, NULL,
     "(bodies, 13) view: pos xyz, orient wxyz, vel xyz, angvel xyz (no copy, live)", NULL},
    {"pos", (getter)get_body_columns, NULL, "(bodies, 3) view, m", COLUMNS(ENGINE_FRAME_POS, 3)},
    {"orient", (getter)get_body_columns, NULL, "(bodies, 4) view, w x y z",
     COLUMNS(ENGINE_FRAME_ORIENT, 4)},
    {"vel", (getter)get_body_columns, NULL, "(bodies, 3) view, m/s", COLUMNS(ENGINE_FRAME_VEL, 3)},
    {"angvel", (getter)get_body_columns, NULL, "(bodies, 3) view, rad/s (world)",
     COLUMNS(ENGINE_FRAME_ANGVEL, 3)},
    {"energy", (getter)get_energy, NULL, "view: kinetic, potential, elastic, total (J)", NULL},
    {"values", (getter)get_values, NULL, "view of every state variable (see variables)", NULL},
    {"variables", (getter)get_variables, NULL, "names of the state variables", NULL},
    {"units", (getter)get_units, NULL, "units of the state variables", NULL},
    {"body_names", (getter)get_body_names, NULL, "the bodies, in engine order", NULL},
    {"impacts", (getter)get_impacts, NULL, "structured array of the impacts so far (a copy)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject IssimSimType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "issim.Sim",
    .tp_doc = "A headless simulation session: issim.open(...) makes one.",
    .tp_basicsize = sizeof(SimObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)sim_dealloc,
    .tp_repr = (reprfunc)sim_repr,
    .tp_methods = sim_methods,
    .tp_getset = sim_getset,
};
