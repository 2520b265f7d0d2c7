/* HDF5 recordings (include/issim/io.h, "Recorder"; docs/user-guide.md, "Recording to HDF5").
 *
 * Layout. `/t` and one 1-D float64 dataset per column at the root, named by the column
 * ("bar.pos.z"), all of the same length, each with a `units` attribute: h5py's f["bar.pos.z"][:]
 * and MATLAB's h5read(file, '/bar.pos.z') give a variable directly, with no column lookup. The
 * root's `columns` attribute keeps the recording's order (HDF5 lists names sorted). The group
 * `edits` holds the live edits as three datasets t, path, value.
 *
 * Crash safety. HDF5's SWMR mode keeps the file consistent for readers while it is written, but
 * it needs the 1.10 file format, whose superblock carries a "file open for writing" flag: after
 * a kill -9 the flag stays set and a plain reader (h5py, h5dump, MATLAB) refuses the file until
 * `h5clear -s` (measured here with libhdf5 1.10.8). So this writer does not use SWMR: the file
 * has the older superblock (version 2, which plain readers open whatever its flags), and the
 * library is touched only at a flush: the rows buffered since the last one are written and
 * H5Fflush follows at once, so between flushes the file on disk is the last flushed file, which
 * survives the process. Freed file space is never reused (H5F_FSPACE_STRATEGY_NONE): a chunk
 * the last flushed metadata points to is never overwritten by a later chunk, so a kill during a
 * flush leaves the earlier rows intact. The price is the space of each partial chunk rewritten
 * at a flush; chunks are sized at the first flush to about one flush interval of rows, which
 * keeps that to about one chunk per flush.
 *
 * What this does not guarantee (measured): a kill that lands inside a flush can leave a file
 * whose chunk index points past the end-of-file address the superblock records, because HDF5
 * writes the superblock last; h5py then fails reading that dataset ("addr overflow"). For
 * narrow recordings (point_drop, the pile's three universe.record variables) a flush takes well
 * under a millisecond and 10 kills in 10 left readable files; recording all 3,124 variables of
 * the pile, whose flush takes a large part of each second on a loaded 2-core machine, 10 kills
 * in 20 did not. Fixing it needs the superblock written before the metadata that points past
 * it (or SWMR plus h5clear): not done.
 *
 * File locking is off for the writer, so a reader may open the file while it grows (it sees
 * the last flush, or fails during one and retries).
 */
#include "recorder_hdf5.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    H5_CHUNK_MIN = 64,
    H5_CHUNK_MAX = 16384,
    H5_EDIT_CHUNK = 64,
    H5_SCENE_TEXT_MAX = 16 << 20,
};
/* The chunk caches of all columns together: one partial chunk per column stays cached so a
 * flush never reads a chunk back. */
#define H5_CACHE_BUDGET (32.0 * 1024 * 1024)

typedef struct H5Edit {
    double t;
    char *path, *value;
} H5Edit;

struct H5Sink {
    char *path;
    hid_t file;
    int stride; /* t + columns */
    char **names, **units;
    hid_t *dsets; /* stride datasets, 0 until created */
    hsize_t chunk;
    uint64_t rows; /* rows in the datasets */
    uint64_t bytes;
    double *buf; /* buffered rows, row-major */
    size_t buf_rows, buf_cap;
    double *column; /* one column of the buffered rows */
    size_t column_cap;
    H5Edit *edits;
    size_t edit_count, edit_cap;
    hid_t edit_t, edit_path, edit_value;
    uint64_t edits_written;
    bool failed;
};

/* The innermost message of the thread's HDF5 error stack, kept when a call fails (the next
 * call, a close, clears the stack): the library prints nothing itself (H5Eset_auto2 off), the
 * recorder reports it once. */
static _Thread_local char last_error[256];

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data) {
    if (n == 0)
        snprintf(data, sizeof last_error, "%s (in %s)", e->desc ? e->desc : "?", e->func_name);
    return 0;
}

static bool noted(bool ok) {
    if (!ok) {
        snprintf(last_error, sizeof last_error, "unknown HDF5 error");
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, last_error);
    }
    return ok;
}

static void h5_error(const H5Sink *s, const char *what, char *msg, size_t size) {
    snprintf(msg, size, "recording to '%s' failed after %llu rows: %s: %s", s->path,
             (unsigned long long)s->rows, what, last_error);
}

static void quiet(void) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static hid_t string_type(void) {
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

static bool attr_string(hid_t obj, const char *name, const char *value) {
    hid_t type = string_type(), space = H5Screate(H5S_SCALAR);
    hid_t a =
        type >= 0 && space >= 0 ? H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT) : -1;
    const char *v = value ? value : "";
    bool ok = noted(a >= 0 && H5Awrite(a, type, &v) >= 0);
    if (a >= 0)
        H5Aclose(a);
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    return ok;
}

static bool attr_strings(hid_t obj, const char *name, const char *const *values, int count) {
    hsize_t n = (hsize_t)(count > 0 ? count : 0);
    const char **v = calloc(n ? n : 1, sizeof *v);
    for (hsize_t i = 0; v && i < n; i++)
        v[i] = values[i] ? values[i] : "";
    hid_t type = string_type(), space = H5Screate_simple(1, &n, NULL);
    hid_t a = v && type >= 0 && space >= 0
                  ? H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT)
                  : -1;
    bool ok = noted(a >= 0 && (n == 0 || H5Awrite(a, type, v) >= 0));
    if (a >= 0)
        H5Aclose(a);
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    free(v);
    return ok;
}

/* The scene's text as loaded (bounded: a scene is a few kB, a huge one is cut). */
static char *read_text(const char *path) {
    FILE *f = path && path[0] ? fopen(path, "rb") : NULL;
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    while (text) {
        if (len + 1 == cap) {
            if (cap >= H5_SCENE_TEXT_MAX)
                break;
            char *bigger = realloc(text, cap * 2);
            if (!bigger) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            cap *= 2;
        }
        size_t n = fread(text + len, 1, cap - 1 - len, f);
        len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    if (text)
        text[len] = '\0';
    return text;
}

static hid_t create_extendible(hid_t where, const char *name, hid_t type, hsize_t chunk,
                               bool compress, hsize_t cache_bytes) {
    hsize_t zero = 0, unlimited = H5S_UNLIMITED;
    hid_t space = H5Screate_simple(1, &zero, &unlimited);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t d = -1;
    bool ok = space >= 0 && dcpl >= 0 && dapl >= 0 && lcpl >= 0 &&
              H5Pset_chunk(dcpl, 1, &chunk) >= 0 && H5Pset_char_encoding(lcpl, H5T_CSET_UTF8) >= 0;
    if (ok && compress)
        ok = H5Pset_shuffle(dcpl) >= 0 && H5Pset_deflate(dcpl, 4) >= 0;
    if (ok && H5Tget_class(type) == H5T_FLOAT) {
        /* A row a torn flush announced but never wrote reads NaN, not a plausible 0. */
        double nan = NAN;
        ok = H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &nan) >= 0;
    }
    if (ok && cache_bytes)
        ok = H5Pset_chunk_cache(dapl, 101, cache_bytes, 1.0) >= 0;
    if (ok)
        d = H5Dcreate2(where, name, type, space, lcpl, dcpl, dapl);
    noted(d >= 0);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (dapl >= 0)
        H5Pclose(dapl);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return d;
}

/* Appends count elements of type from data to the 1-D dataset d holding `have`. */
static bool append(hid_t d, hid_t type, hsize_t have, hsize_t count, const void *data) {
    hsize_t size = have + count;
    if (!noted(H5Dset_extent(d, &size) >= 0))
        return false;
    hid_t file_space = H5Dget_space(d);
    hid_t mem_space = H5Screate_simple(1, &count, NULL);
    bool ok =
        noted(file_space >= 0 && mem_space >= 0 &&
              H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &have, NULL, &count, NULL) >= 0 &&
              H5Dwrite(d, type, mem_space, file_space, H5P_DEFAULT, data) >= 0);
    if (mem_space >= 0)
        H5Sclose(mem_space);
    if (file_space >= 0)
        H5Sclose(file_space);
    return ok;
}

static bool create_columns(H5Sink *s);

static void sink_free(H5Sink *s) {
    if (!s)
        return;
    for (int i = 0; s->names && i < s->stride; i++) {
        free(s->names[i]);
        if (s->units)
            free(s->units[i]);
    }
    for (size_t i = 0; i < s->edit_count; i++) {
        free(s->edits[i].path);
        free(s->edits[i].value);
    }
    free(s->edits);
    free(s->names);
    free(s->units);
    free(s->dsets);
    free(s->buf);
    free(s->column);
    free(s->path);
    free(s);
}

static void close_handles(H5Sink *s) {
    for (int i = 0; s->dsets && i < s->stride; i++)
        if (s->dsets[i] > 0)
            H5Dclose(s->dsets[i]);
    if (s->edit_t > 0)
        H5Dclose(s->edit_t);
    if (s->edit_path > 0)
        H5Dclose(s->edit_path);
    if (s->edit_value > 0)
        H5Dclose(s->edit_value);
    if (s->file > 0)
        H5Fclose(s->file);
    s->file = 0;
}

static bool write_root(H5Sink *s, const RecorderDesc *desc) {
    hid_t root = s->file;
    char *text = desc->scene_text ? NULL : read_text(desc->scene_path);
    const char *scene = desc->scene_text ? desc->scene_text : text ? text : "";
    bool ok =
        attr_string(root, "format", "issim recording 1") &&
        attr_string(root, "layout",
                    "t: output instants (s); one 1-D float64 dataset per recorded variable, named "
                    "by it, as long as t, with a units attribute; columns: the recording's order; "
                    "edits/t, edits/path, edits/value: live edits accepted at t") &&
        attr_string(root, "issim_version", ISSIM_VERSION) &&
        attr_string(root, "scene_path", desc->scene_path) && attr_string(root, "scene", scene) &&
        attr_strings(root, "params", desc->params, desc->param_count) &&
        attr_strings(root, "sets", desc->sets, desc->set_count) &&
        attr_string(root, "command_line", desc->command_line ? desc->command_line : "(library)") &&
        attr_strings(root, "metadata", desc->metadata, desc->metadata_count) &&
        attr_strings(root, "columns", (const char *const *)s->names + 1, s->stride - 1);
    free(text);
    return ok;
}

H5Sink *h5sink_open(const RecorderDesc *desc, IssimError *err) {
    quiet();
    H5Sink *s = calloc(1, sizeof *s);
    if (!s) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "recorder: out of memory");
        return NULL;
    }
    s->stride = 1 + desc->column_count;
    s->path = strdup(desc->path);
    s->names = calloc((size_t)s->stride, sizeof *s->names);
    s->units = calloc((size_t)s->stride, sizeof *s->units);
    s->dsets = calloc((size_t)s->stride, sizeof *s->dsets);
    bool ok = s->path && s->names && s->units && s->dsets;
    for (int i = 0; ok && i < s->stride; i++) {
        const char *name = i == 0 ? "t" : desc->columns[i - 1];
        const char *unit = i == 0                              ? "s"
                           : desc->units && desc->units[i - 1] ? desc->units[i - 1]
                                                               : "";
        s->names[i] = strdup(name);
        s->units[i] = strdup(unit);
        ok = s->names[i] && s->units[i];
    }
    if (!ok) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "recorder '%s': out of memory", desc->path);
        sink_free(s);
        return NULL;
    }
    /* A link name is a path inside the file: '/' would make groups, "." and ".." refer to
     * groups that exist; "t" and "edits" are taken. */
    for (int i = 1; i < s->stride; i++) {
        const char *n = s->names[i];
        bool taken = strcmp(n, "t") == 0 || strcmp(n, "edits") == 0;
        for (int j = 1; j < i && !taken; j++)
            taken = strcmp(n, s->names[j]) == 0;
        if (strchr(n, '/') || strcmp(n, ".") == 0 || strcmp(n, "..") == 0 || taken) {
            issim_error_set(err, ISSIM_ERR_INVALID,
                            "recorder '%s': column '%s' cannot name an HDF5 dataset (a '/', '.', "
                            "'..', a repeat, or one of t and edits)",
                            desc->path, n);
            sink_free(s);
            return NULL;
        }
    }

    /* The path as every output (io.h, "Output files"): a link, a directory, a FIFO are refused;
     * HDF5 seeks, so only a regular file will do. */
    OutputKind kind;
    if (output_path_kind(desc->path, "the recording", &kind, err) != ISSIM_OK) {
        sink_free(s);
        return NULL;
    }
    if (kind == OUTPUT_THROUGH) {
        issim_error_set(err, ISSIM_ERR_IO,
                        "cannot write the recording %s: it is a device or FIFO, and an HDF5 file "
                        "must be a regular file (record to a .csv path to write through it)",
                        desc->path);
        sink_free(s);
        return NULL;
    }
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
    ok = fcpl >= 0 && fapl >= 0 &&
         H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, 0, (hsize_t)1) >= 0 &&
         H5Pset_file_locking(fapl, false, true) >= 0;
    s->file = ok ? H5Fcreate(desc->path, H5F_ACC_TRUNC, fcpl, fapl) : -1;
    noted(s->file >= 0);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (fapl >= 0)
        H5Pclose(fapl);
    char msg[512];
    if (s->file < 0) {
        h5_error(s, "cannot create the file", msg, sizeof msg);
        issim_error_set(err, ISSIM_ERR_IO, "cannot open '%s' for writing: %s", desc->path,
                        strchr(msg, ':') ? strchr(msg, ':') + 2 : msg);
        s->file = 0;
        sink_free(s);
        return NULL;
    }
    hid_t string = string_type();
    hid_t edits = H5Gcreate2(s->file, "edits", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ok = write_root(s, desc) && noted(edits >= 0 && string >= 0);
    if (ok) {
        s->edit_t = create_extendible(edits, "t", H5T_IEEE_F64LE, H5_EDIT_CHUNK, false, 0);
        s->edit_path = create_extendible(edits, "path", string, H5_EDIT_CHUNK, false, 0);
        s->edit_value = create_extendible(edits, "value", string, H5_EDIT_CHUNK, false, 0);
        ok = s->edit_t >= 0 && s->edit_path >= 0 && s->edit_value >= 0 &&
             attr_string(s->edit_t, "units", "s") && create_columns(s) &&
             noted(H5Fflush(s->file, H5F_SCOPE_GLOBAL) >= 0);
    }
    if (edits >= 0)
        H5Gclose(edits);
    if (string >= 0)
        H5Tclose(string);
    if (!ok) {
        h5_error(s, "cannot write the header", msg, sizeof msg);
        issim_error_set(err, ISSIM_ERR_IO, "%s", msg);
        close_handles(s);
        sink_free(s);
        return NULL;
    }
    hsize_t size = 0;
    if (H5Fget_filesize(s->file, &size) >= 0)
        s->bytes = size;
    return s;
}

size_t h5sink_append(H5Sink *s, const double *row) {
    if (s->failed)
        return 0;
    if (s->buf_rows == s->buf_cap) {
        size_t cap = s->buf_cap ? s->buf_cap * 2 : 1024;
        double *bigger = realloc(s->buf, cap * (size_t)s->stride * sizeof *bigger);
        if (!bigger)
            return SIZE_MAX; /* flush now: the buffer is emptied */
        s->buf = bigger;
        s->buf_cap = cap;
    }
    memcpy(s->buf + s->buf_rows * (size_t)s->stride, row, (size_t)s->stride * sizeof *row);
    s->buf_rows++;
    return s->buf_rows * (size_t)s->stride * sizeof(double);
}

bool h5sink_add_edit(H5Sink *s, double t, const char *path, const char *value) {
    if (s->edit_count == s->edit_cap) {
        size_t cap = s->edit_cap ? s->edit_cap * 2 : 16;
        H5Edit *bigger = realloc(s->edits, cap * sizeof *bigger);
        if (!bigger)
            return false;
        s->edits = bigger;
        s->edit_cap = cap;
    }
    H5Edit *e = &s->edits[s->edit_count];
    e->t = t;
    e->path = strdup(path ? path : "");
    e->value = strdup(value ? value : "");
    if (!e->path || !e->value) {
        free(e->path);
        free(e->value);
        return false;
    }
    s->edit_count++;
    return true;
}

/* Chunks of about a quarter of a flush of rows (a power of two): each flush rewrites the
 * partial last chunk of every column and its old space is never reused, so a chunk much longer
 * than a flush would be written (and its space lost) many times over; much shorter ones
 * compress worse. Measured on the pile (3,124 columns, 800 rows a flush): chunks of one flush
 * lost a third of the file to rewrites. The rows a flush carries are guessed from the width: a
 * wide scene steps slowly (the pile: 256 rows a chunk), a narrow one fast (16,384). The
 * datasets are made at the open, not at the first flush: creating thousands of them is the
 * longest write of the file, and a kill during it left a file whose root pointed past its end
 * (4 kills in 20). */
static bool create_columns(H5Sink *s) {
    hsize_t chunk = H5_CHUNK_MIN;
    while (chunk < H5_CHUNK_MAX && (double)(2 * chunk) * s->stride * 8.0 <= 16.0 * 1024 * 1024)
        chunk *= 2;
    while (chunk > H5_CHUNK_MIN && (double)chunk * 8.0 * 2.0 * s->stride > H5_CACHE_BUDGET)
        chunk /= 2;
    s->chunk = chunk;
    hsize_t cache = 2 * chunk * sizeof(double);
    for (int i = 0; i < s->stride; i++) {
        s->dsets[i] = create_extendible(s->file, s->names[i], H5T_IEEE_F64LE, chunk, true, cache);
        if (s->dsets[i] < 0 || !attr_string(s->dsets[i], "units", s->units[i])) {
            if (s->dsets[i] < 0)
                s->dsets[i] = 0;
            return false;
        }
    }
    return true;
}

static bool write_edits(H5Sink *s) {
    size_t n = s->edit_count;
    if (n == 0)
        return true;
    double *t = malloc(n * sizeof *t);
    const char **path = malloc(n * sizeof *path), **value = malloc(n * sizeof *value);
    hid_t string = string_type();
    bool ok = t && path && value && string >= 0;
    for (size_t i = 0; ok && i < n; i++) {
        t[i] = s->edits[i].t;
        path[i] = s->edits[i].path;
        value[i] = s->edits[i].value;
    }
    hsize_t have = s->edits_written;
    ok = ok && append(s->edit_t, H5T_NATIVE_DOUBLE, have, n, t) &&
         append(s->edit_path, string, have, n, path) &&
         append(s->edit_value, string, have, n, value);
    if (string >= 0)
        H5Tclose(string);
    free(t);
    free(path);
    free(value);
    if (ok)
        s->edits_written += n;
    return ok;
}

static void discard(H5Sink *s) {
    s->buf_rows = 0;
    for (size_t i = 0; i < s->edit_count; i++) {
        free(s->edits[i].path);
        free(s->edits[i].value);
    }
    s->edit_count = 0;
}

bool h5sink_flush(H5Sink *s, char *msg, size_t size) {
    if (s->failed) {
        discard(s);
        return true;
    }
    if (s->buf_rows == 0 && s->edit_count == 0)
        return true;
    quiet();
    const char *what = "cannot create the datasets";
    bool ok = true;
    if (ok && s->buf_rows > 0 && s->column_cap < s->buf_rows) {
        free(s->column);
        s->column = malloc(s->buf_rows * sizeof *s->column);
        s->column_cap = s->column ? s->buf_rows : 0;
        ok = s->column != NULL;
    }
    if (ok && s->buf_rows > 0)
        what = "cannot write the rows";
    for (int c = 0; ok && s->buf_rows > 0 && c < s->stride; c++) {
        for (size_t r = 0; r < s->buf_rows; r++)
            s->column[r] = s->buf[r * (size_t)s->stride + (size_t)c];
        ok = append(s->dsets[c], H5T_NATIVE_DOUBLE, s->rows, s->buf_rows, s->column);
    }
    if (ok) {
        what = "cannot write the edits";
        ok = write_edits(s);
    }
    if (ok) {
        what = "cannot flush the file";
        ok = noted(H5Fflush(s->file, H5F_SCOPE_GLOBAL) >= 0);
    }
    if (!ok) {
        h5_error(s, what, msg, size);
        s->failed = true;
        discard(s);
        return false;
    }
    s->rows += s->buf_rows;
    hsize_t bytes = 0;
    if (H5Fget_filesize(s->file, &bytes) >= 0)
        s->bytes = bytes;
    discard(s);
    return true;
}

uint64_t h5sink_rows(const H5Sink *s) {
    return s->rows;
}

uint64_t h5sink_bytes(const H5Sink *s) {
    return s->bytes;
}

bool h5sink_close(H5Sink *s, uint64_t *bytes, char *msg, size_t size) {
    if (!s)
        return true;
    quiet();
    bool ok = h5sink_flush(s, msg, size) && !s->failed;
    close_handles(s);
    struct stat st;
    if (stat(s->path, &st) == 0 && S_ISREG(st.st_mode))
        s->bytes = (uint64_t)st.st_size;
    if (bytes)
        *bytes = s->bytes;
    sink_free(s);
    return ok;
}
