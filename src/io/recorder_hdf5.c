/* HDF5 recordings (include/issim/io.h, "Recorder"; docs/user-guide.md, "Recording to HDF5").
 *
 * Layout. `/t` and one 1-D float64 dataset per column at the root, named by the column
 * ("bar.pos.z"), all as long as t (after a crash, at least as long), each with a `units` attribute:
 * h5py's f["bar.pos.z"][:] and MATLAB's h5read(file, '/bar.pos.z') give a variable directly, with
 * no column lookup. The root's `columns` attribute keeps the recording's order (HDF5 lists names
 * sorted). The group `edits` holds the live edits as three datasets t, path, value.
 *
 * Crash safety. The file is written in HDF5's SWMR mode (single writer, multiple readers;
 * H5Fstart_swmr_write once every dataset exists): the library then orders its metadata writes
 * so that the file on disk is consistent at every instant (a chunk before the index entry that
 * points to it, the index before the extent that reveals it), which is what a process killed
 * mid-flush leaves behind. Within a flush t is written after everything else and after a flush
 * of its own, so t is the recording's commit mark: every column is at least as long as t and
 * its first len(t) rows are the recorded ones, and the edits up to t's last instant are
 * complete (their strings live in HDF5's global heap, which SWMR does not order). The alternatives:
 * the older file format with plain H5Fflush is not consistent during a flush (HDF5 writes the index
 * nodes in address order and the superblock, with the end-of-file address readers check, last, so a
 * kill inside the flush of a wide recording left a file whose datasets pointed past its recorded
 * end); writing each flush to a new file renamed over the last copies the whole file every second.
 *
 * The price of SWMR: its superblock (format 1.10) records "open for writing" until a clean
 * close, so the file left by a killed writer is refused by a plain reader ("file is already
 * open for write") until `h5clear -s FILE`; a SWMR reader (h5py's swmr=True, MATLAB's
 * H5F.open with H5F_ACC_SWMR_READ) opens it as it is, and also opens a recording that is still
 * being written. A cleanly closed recording is a plain file. SWMR cannot add objects to the
 * file, so every dataset and attribute is made before the switch, at the first flush (when the
 * chunk size can be fitted to the rows of a flush); the file gets its name (a rename from a
 * temporary beside it) only then, so a kill before it leaves at the path what was there before
 * (and a stray temporary), never a torn file.
 *
 * Freed file space is never reused (H5F_FSPACE_STRATEGY_NONE): each flush rewrites the partial
 * last chunk of every column elsewhere, and a chunk the last consistent state points to must
 * not be overwritten. The price is the space of those rewritten partial chunks; chunks are
 * sized at the first flush to its rows (create_columns).
 *
 * File locking is off for the writer, so a SWMR reader may open the file while it grows.
 */
#include "recorder_hdf5.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdatomic.h>
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
    char *tmp; /* the file's name until its header is complete (Nullable) */
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
    if (s->tmp)
        unlink(s->tmp);
    free(s->tmp);
    free(s->path);
    free(s);
}

/* A new file beside the recording's path (a rename stays within its file system), created
 * exclusively so an existing file or link of that name is never written through: HDF5 then
 * truncates it. 0, or the errno. */
static int create_temporary(H5Sink *s) {
    static atomic_uint serial;
    size_t size = strlen(s->path) + 48;
    s->tmp = malloc(size);
    if (!s->tmp)
        return ENOMEM;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        snprintf(s->tmp, size, "%s.%ld-%u.tmp", s->path, (long)getpid(),
                 atomic_fetch_add(&serial, 1));
        fd = open(s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    int errnum = fd < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    else {
        free(s->tmp);
        s->tmp = NULL;
    }
    return errnum;
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
         H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0 &&
         H5Pset_file_locking(fapl, false, true) >= 0;
    char msg[512];
    int errnum = ok ? create_temporary(s) : 0;
    if (!errnum) {
        s->file = ok ? H5Fcreate(s->tmp, H5F_ACC_TRUNC, fcpl, fapl) : -1;
        ok = noted(s->file >= 0);
    }
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (errnum || !ok) {
        h5_error(s, "cannot create the file", msg, sizeof msg);
        issim_error_set(err, ISSIM_ERR_IO, "cannot open '%s' for writing: %s", desc->path,
                        errnum             ? strerror(errnum)
                        : strchr(msg, ':') ? strchr(msg, ':') + 2
                                           : msg);
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
             attr_string(s->edit_t, "units", "s");
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

/* Chunks of between half and all of the first flush's rows (a power of two): each flush
 * rewrites the partial last chunk of every column and its old space is never reused, so a
 * chunk much longer than a flush multiplies the file; shorter ones compress worse and cost the
 * writer more calls into HDF5 per row (on the pile, chunks of an eighth of a flush took half
 * as much CPU again as chunks of one flush, for a file no smaller). The rows of a flush, the
 * rows of a second, are known only at the first flush, which is why the columns are made
 * then. */
static bool create_columns(H5Sink *s, size_t rows) {
    hsize_t chunk = H5_CHUNK_MIN;
    while (chunk < H5_CHUNK_MAX && 2 * chunk <= rows)
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

/* Completes the file at its first flush: the columns, then SWMR writing (it cannot add objects
 * later), then its name. Until then the file is a temporary: a kill leaves the path as it was. */
static bool name_file(H5Sink *s, size_t rows, const char **what) {
    *what = "cannot create the datasets";
    if (!create_columns(s, rows) || !noted(H5Fflush(s->file, H5F_SCOPE_GLOBAL) >= 0))
        return false;
    *what = "cannot start SWMR writing";
    if (!noted(H5Fstart_swmr_write(s->file) >= 0))
        return false;
    if (rename(s->tmp, s->path) != 0) {
        *what = "cannot name the file";
        snprintf(last_error, sizeof last_error, "rename from %s: %s", s->tmp, strerror(errno));
        return false;
    }
    free(s->tmp);
    s->tmp = NULL;
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

/* Appends column c of the buffered rows to its dataset. */
static bool append_column(H5Sink *s, int c) {
    for (size_t r = 0; r < s->buf_rows; r++)
        s->column[r] = s->buf[r * (size_t)s->stride + (size_t)c];
    return append(s->dsets[c], H5T_NATIVE_DOUBLE, s->rows, s->buf_rows, s->column);
}

static void discard(H5Sink *s) {
    s->buf_rows = 0;
    for (size_t i = 0; i < s->edit_count; i++) {
        free(s->edits[i].path);
        free(s->edits[i].value);
    }
    s->edit_count = 0;
}

static bool flush(H5Sink *s, bool closing, char *msg, size_t size) {
    if (s->failed) {
        discard(s);
        return true;
    }
    if (s->buf_rows == 0 && s->edit_count == 0 && !(closing && s->tmp))
        return true;
    quiet();
    const char *what = "out of memory";
    bool ok = !s->tmp || name_file(s, s->buf_rows, &what);
    if (ok && s->buf_rows > 0 && s->column_cap < s->buf_rows) {
        what = "out of memory";
        free(s->column);
        s->column = malloc(s->buf_rows * sizeof *s->column);
        s->column_cap = s->column ? s->buf_rows : 0;
        ok = s->column != NULL;
    }
    if (ok)
        what = "cannot write the rows";
    for (int c = 1; ok && s->buf_rows > 0 && c < s->stride; c++)
        ok = append_column(s, c);
    if (ok) {
        what = "cannot write the edits";
        ok = write_edits(s);
    }
    /* t goes last, once the columns and edits are in the file: a reader of a file whose writer
     * died inside a flush finds every column at least as long as t and its rows complete. */
    if (ok && s->buf_rows > 0) {
        what = "cannot flush the file";
        ok = noted(H5Fflush(s->file, H5F_SCOPE_GLOBAL) >= 0);
        if (ok) {
            what = "cannot write the rows";
            ok = append_column(s, 0);
        }
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

bool h5sink_flush(H5Sink *s, char *msg, size_t size) {
    return flush(s, false, msg, size);
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
    bool ok = flush(s, true, msg, size) && !s->failed;
    close_handles(s);
    struct stat st;
    if (stat(s->path, &st) == 0 && S_ISREG(st.st_mode))
        s->bytes = (uint64_t)st.st_size;
    if (bytes)
        *bytes = s->bytes;
    sink_free(s);
    return ok;
}
