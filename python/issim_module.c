/* The Python module `issim`: a CPython extension over libissim (docs/python.md). This file holds
 * the module itself, issim.Error and the conversions of Python values into the texts the
 * command line takes, so that `set={'bar.mass': 2}` means exactly `--set bar.mass=2`. */
#define ISSIM_PY_MODULE_MAIN
#include "issim_py.h"

#include <limits.h>
#include <string.h>

#include "issim/io.h"

PyObject *issim_py_error;

PyObject *issim_py_raise(const IssimError *err) {
    PyObject *exc = PyObject_CallFunction(issim_py_error, "s", err->message);
    if (!exc)
        return NULL;
    /* The status lets a script tell a refused value (range) from a missing file without
     * parsing the message. */
    PyObject *status = PyUnicode_FromString(issim_status_name(err->status));
    if (status) {
        PyObject_SetAttrString(exc, "status", status);
        Py_DECREF(status);
    }
    PyErr_SetObject(issim_py_error, exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *sequence_text(PyObject *seq) {
    PyObject *fast = PySequence_Fast(seq, "a value must be a number, a string or a sequence");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject *parts = PyList_New(n);
    for (Py_ssize_t i = 0; parts && i < n; i++) {
        PyObject *text = issim_py_value_text(PySequence_Fast_GET_ITEM(fast, i));
        if (!text)
            Py_CLEAR(parts);
        else
            PyList_SET_ITEM(parts, i, text);
    }
    Py_DECREF(fast);
    if (!parts)
        return NULL;
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *joined = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(parts);
    PyObject *text = joined ? PyUnicode_FromFormat("{%U}", joined) : NULL;
    Py_XDECREF(joined);
    return text;
}

PyObject *issim_py_value_text(PyObject *value) {
    if (PyUnicode_Check(value))
        return Py_NewRef(value);
    if (PyBool_Check(value))
        return PyUnicode_FromString(value == Py_True ? "true" : "false");
    if (PyLong_Check(value))
        return PyObject_Str(value);
    /* A float (or numpy scalar) by its shortest round-trip repr: the scene gets the very
     * double the script holds. */
    if (PyFloat_Check(value) || PyArray_IsScalar(value, Number)) {
        double d = PyFloat_AsDouble(value);
        if (d == -1.0 && PyErr_Occurred())
            return NULL;
        char *s = PyOS_double_to_string(d, 'r', 0, 0, NULL);
        if (!s)
            return PyErr_NoMemory();
        PyObject *text = PyUnicode_FromString(s);
        PyMem_Free(s);
        return text;
    }
    return sequence_text(value);
}

PyObject *issim_py_assignments(PyObject *dict, const char *what) {
    PyObject *list = PyList_New(0);
    if (!list || !dict || dict == Py_None)
        return list;
    if (!PyDict_Check(dict)) {
        Py_DECREF(list);
        return PyErr_Format(PyExc_TypeError, "%s must be a dict, not %s", what,
                            Py_TYPE(dict)->tp_name);
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        PyObject *text = issim_py_value_text(value);
        PyObject *item = text ? PyUnicode_FromFormat("%S=%U", key, text) : NULL;
        Py_XDECREF(text);
        if (!item || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(item);
    }
    return list;
}

const char **issim_py_strings(PyObject *list, int *count) {
    static const char *empty[1] = {NULL};
    Py_ssize_t n = PyList_GET_SIZE(list);
    *count = 0;
    if (n == 0)
        return empty;
    if (n > INT_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "too many values");
        return NULL;
    }
    const char **strings = PyMem_Calloc((size_t)n + 1, sizeof *strings);
    if (!strings) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        strings[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(list, i));
        if (!strings[i]) {
            PyMem_Free(strings);
            return NULL;
        }
    }
    *count = (int)n;
    return strings;
}

void issim_py_strings_free(const char **strings) {
    if (strings && strings[0])
        PyMem_Free(strings);
}

int issim_py_find_scene(PyObject *name, char *out, size_t size) {
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(name, &bytes))
        return 0;
    IssimError err = {0};
    IssimStatus s = scene_find(PyBytes_AS_STRING(bytes), out, size, &err);
    Py_DECREF(bytes);
    if (s != ISSIM_OK) {
        issim_py_raise(&err);
        return 0;
    }
    return 1;
}

static PyObject *py_find_scene(PyObject *module, PyObject *name) {
    char path[PATH_MAX];
    if (!issim_py_find_scene(name, path, sizeof path))
        return NULL;
    return PyUnicode_DecodeFSDefault(path);
}

static PyObject *py_data_dir(PyObject *module, PyObject *unused) {
    char dir[PATH_MAX];
    if (!scene_data_dir(dir, sizeof dir))
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(dir);
}

static PyMethodDef module_methods[] = {
    {"open", (PyCFunction)(void (*)(void))issim_py_open, METH_VARARGS | METH_KEYWORDS,
     "open(scene=None, *, source=None, name=None, params=None, set=None, dt=None,\n"
     "     integrator=None, record=None, vars=None, every=1) -> Sim\n\n"
     "Loads a scene (a file, a bundled scene's bare name, or source=TEXT) as `issim run`\n"
     "does, with params (--param) and set (--set), and starts a headless run at t = 0."},
    {"sweep", (PyCFunction)(void (*)(void))issim_py_sweep, METH_VARARGS | METH_KEYWORDS,
     "sweep(scene, grid, *, until=None, set=None, at=None, random=None, seed=0,\n"
     "      threads=None) -> numpy structured array\n\n"
     "Runs a parameter study as `issim sweep` and returns its table, one row per run."},
    {"find_scene", py_find_scene, METH_O,
     "find_scene(name) -> str: where `issim run NAME` would look the scene up"},
    {"data_dir", py_data_dir, METH_NOARGS,
     "data_dir() -> str or None: the installed scenes, assets and docs (share/issim)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef issim_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "issim",
    .m_doc = "issim: rigid bodies in contact, scripted from Python (docs/python.md).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit_issim(void) {
    import_array();
    if (PyType_Ready(&IssimSimType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&issim_module);
    if (!m)
        return NULL;
    issim_py_error = PyErr_NewExceptionWithDoc(
        "issim.Error",
        "A scene, property, run or recording error; str() is the message the issim command line "
        "prints, .status the library's status in words ('out of range', 'read-only', ...).",
        NULL, NULL);
    if (!issim_py_error || PyModule_AddObjectRef(m, "Error", issim_py_error) < 0 ||
        PyModule_AddObjectRef(m, "Sim", (PyObject *)&IssimSimType) < 0 ||
        PyModule_AddStringConstant(m, "__version__", ISSIM_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
