/* The Python module `issim` (docs/python.md): shared declarations of its three files,
 * issim_module.c (the module, issim.Error, value formatting), issim_sim.c (issim.Sim) and
 * issim_sweep.c (issim.sweep). libissim is reached through its public headers only. */
#ifndef ISSIM_PY_H
#define ISSIM_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* numpy's C API table lives in issim_module.c (import_array there); the other files see it
 * through NO_IMPORT_ARRAY. */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL issim_numpy_api
#ifndef ISSIM_PY_MODULE_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "issim/core.h"

/* issim.Error: every failure of libissim, with the message the command line prints. */
extern PyObject *issim_py_error;
/* Sets issim.Error from err and returns NULL. */
PyObject *issim_py_raise(const IssimError *err);

/* A Python value as the text --set and --param take: numbers round-trip ("%r"), booleans
 * "true"/"false", strings as given, sequences as "{a, b, c}" (nested for point lists). New
 * reference to a str, or NULL with an exception. */
PyObject *issim_py_value_text(PyObject *value);

/* "key=value" strings of a dict (or None: an empty list), for --set and --param; a new list of
 * str, or NULL with an exception. what names the argument in messages. */
PyObject *issim_py_assignments(PyObject *dict, const char *what);

/* A list of str as a C array of its UTF-8 buffers (Borrowed from the list, which the caller keeps
 * alive); NULL with an exception, or with *count 0 for an empty list (then the result is a
 * non-NULL static empty array). */
const char **issim_py_strings(PyObject *list, int *count);
void issim_py_strings_free(const char **strings);

/* Resolves a scene name as `issim run` does (scene_find: a path, a bare name, scenes/NAME.lua
 * here or in the installed data directory) into out. false with issim.Error set. */
int issim_py_find_scene(PyObject *name, char *out, size_t size);

extern PyTypeObject IssimSimType;
/* issim.open(scene=None, *, source=None, name=None, params=None, set=None, ...). */
PyObject *issim_py_open(PyObject *module, PyObject *args, PyObject *kwargs);
/* issim.sweep(scene, grid, *, until=None, set=None, at=None, random=None, seed=0,
 * threads=None). */
PyObject *issim_py_sweep(PyObject *module, PyObject *args, PyObject *kwargs);

#endif
