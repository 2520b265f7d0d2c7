/* Trajectory recorder: rows (t, values...) to a CSV file from a writer thread it owns.
 *
 * Threading contract. There are three roles:
 *  - the producer (one thread: whoever calls recorder_open, recorder_push and recorder_close;
 *    in the application the engine thread) fills ring slots and advances `head`;
 *  - the writer (the pthread started by recorder_open) reads ring slots, formats them into
 *    its private text buffer, advances `tail`, and hands the text to the kernel with write(2);
 *  - observers (any thread) call recorder_stats and recorder_failed.
 * `head`, `tail`, `writer_idle` and `closing` are guarded by `mutex`. A ring slot belongs to
 * the producer until `head` passes it and to the writer until `tail` passes it; both handovers
 * go through the mutex, so the slot's contents are published with it. The writer reads slots
 * [tail, tail + batch) without the lock (the producer never touches them), and at most half the
 * ring at a time so a producer keeps room while the writer formats. The text buffer, the file
 * descriptor's offset and the writer-side counters are the writer's alone. Counters are atomics
 * written by one side each (pushed and dropped by the producer; written and bytes by the
 * writer), read by observers: each is exact, a snapshot of several is not simultaneous. The
 * failure message is written once, before `failed` is set with release order; readers load
 * `failed` with acquire order before reading the message, and nothing writes it afterwards.
 * Waits: the producer waits on `not_full` (blocking push, ring full); the writer waits on
 * `not_empty`, with a deadline only while it holds unflushed text. The producer signals the
 * writer only when it sleeps without a deadline (`writer_idle`), when the ring is half full, or
 * at close, so a 1 kHz producer wakes the writer about twice per flush interval, not per row.
 * No thread ever spins.
 *
 * File format and durability. Numbers are written with "%.17g" in the C locale (the writer
 * thread uses its own C numeric locale, so a program's setlocale cannot turn the decimal point
 * into a comma): 17 significant digits read back bit-exactly with strtod, which is what lets a
 * recorded run be compared with a reference run. Text reaches the kernel in write(2) calls that
 * each carry whole rows: when the buffer passes 64 KiB, at least every flush_interval seconds,
 * and at close. There is no fsync: "readable up to the last flush" means handed to the kernel,
 * which survives the process being killed (not a power loss). One caveat belongs to Linux, not
 * to this file: a fatal signal (SIGKILL, or SIGINT/SIGTERM left at their default action) that
 * lands inside a write(2) spanning several pages stops the copy at a page boundary
 * (generic_perform_write checks fatal_signal_pending per page), leaving an unterminated last
 * line; measured here: 7 kills in 300 at a flat-out 40 MB/s, none in about 200 at 10^4-10^5
 * rows/s (a few kB per flush). A reader should therefore ignore a last line without '\n'.
 * Rows are safe from SIGPIPE: the writer thread blocks every signal, so a closed pipe reader
 * shows up as an EPIPE write error (the header, written by recorder_open on the caller's
 * thread, is not covered).
 *
 * Failure. The first write error (ENOSPC, EIO, EPIPE, EFBIG...) sets `failed`, records
 * "recording to 'path' failed after N bytes: <strerror>", logs it once at ISSIM_LOG_ERROR and
 * stops the writing: the writer keeps draining the ring (discarding) so nothing blocks, pushes
 * return ISSIM_ERR_IO at once, and recorder_close returns the error. If a write got part of a
 * row to the file before failing, the file is truncated back to the last whole row (regular
 * files only). Counters: rows_pushed counts every push call, so once the writer has caught up
 * rows_pushed == rows_written + rows_dropped, unless the recorder failed, in which case the
 * difference is the rows lost to the failure. bytes_written includes the header: it is the
 * file's size.
 *
 * HDF5. A path ending in .h5 or .hdf5 gives the rows to an H5Sink (recorder_hdf5.c) instead of
 * the text buffer: the thread, the ring, the waits and the counters are the same; the sink
 * buffers rows until a flush (every max(flush_interval, 1 s), or at 16 MiB of buffered rows),
 * when they go to the file and the file is flushed. rows_written and bytes_written change at
 * those flushes only. Live edits (recorder_note_edit) queue under `mutex` and reach the sink at
 * its next flush.
 */
#include "issim/io.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder_hdf5.h"

enum {
    RECORDER_FLUSH_BYTES = 64 * 1024, /* flush when the text buffer reaches this */
    RECORDER_NUMBER_MAX = 32,         /* "%.17g" needs at most 24 characters and a NUL */
};
#define RECORDER_HDF5_FLUSH_BYTES ((size_t)16 << 20) /* rows an HDF5 sink buffers at most */
#define RECORDER_HDF5_FLUSH_MIN 1.0                  /* seconds: a flush rewrites partial chunks */

typedef struct QueuedEdit {
    double t;
    char *path, *value;
} QueuedEdit;

struct Recorder {
    /* Set by recorder_open, then read-only. */
    char *path;
    int fd;
    bool regular_file;
    int stride;        /* doubles per row: t + column_count */
    uint64_t capacity; /* ring rows */
    uint64_t batch;    /* rows the writer takes per lock */
    uint64_t wake_at;  /* ring fill at which the producer wakes a waiting writer */
    double flush_interval;
    double *ring; /* capacity x stride */
    pthread_t thread;
    H5Sink *h5; /* Nullable: a CSV; else the writer's alone */

    /* Guarded by mutex. */
    pthread_mutex_t mutex;
    pthread_cond_t not_empty; /* writer: rows, close, or its flush deadline */
    pthread_cond_t not_full;  /* producer: a free slot or a failure */
    uint64_t head;            /* rows queued */
    uint64_t tail;            /* rows taken by the writer */
    bool writer_idle;         /* writer waits without a deadline */
    bool closing;
    QueuedEdit *edits; /* live edits for the sink */
    size_t edit_count, edit_cap;

    /* Writer thread only (and the producer before the thread starts / after it is joined). */
    char *text;
    size_t text_len;
    size_t text_cap;
    uint64_t text_rows;
    double pending_since; /* when the oldest unflushed row was formatted */
    uint64_t file_bytes;
    uint64_t file_rows;

    /* Counters and failure state: see the contract above. */
    atomic_uint_least64_t rows_pushed;
    atomic_uint_least64_t rows_written;
    atomic_uint_least64_t rows_dropped;
    atomic_uint_least64_t bytes_written;
    atomic_bool failed;
    char message[sizeof(((IssimError *)0)->message)];
};

static void describe_errno(int errnum, char *buf, size_t size) {
    if (strerror_r(errnum, buf, size) != 0)
        snprintf(buf, size, "error %d", errnum);
}

/* ===== Header ===== */

typedef struct TextBuilder {
    char *data;
    size_t len, cap;
    bool oom;
} TextBuilder;

static void tb_append(TextBuilder *tb, const char *s, size_t n) {
    if (tb->oom)
        return;
    if (tb->len + n + 1 > tb->cap) {
        size_t cap = tb->cap ? tb->cap : 256;
        while (tb->len + n + 1 > cap)
            cap *= 2;
        char *data = realloc(tb->data, cap);
        if (!data) {
            tb->oom = true;
            return;
        }
        tb->data = data;
        tb->cap = cap;
    }
    memcpy(tb->data + tb->len, s, n);
    tb->len += n;
    tb->data[tb->len] = '\0';
}

static void tb_puts(TextBuilder *tb, const char *s) {
    tb_append(tb, s, strlen(s));
}

/* A CSV field in the column or units line must not break the line structure. */
static bool field_ok(const char *s) {
    return s && !strpbrk(s, ",\r\n");
}

static IssimStatus build_header(const RecorderDesc *desc, TextBuilder *tb, IssimError *err) {
    for (int i = 0; i < desc->metadata_count; i++) {
        const char *line = desc->metadata[i] ? desc->metadata[i] : "";
        tb_puts(tb, "# ");
        /* An embedded line break continues the comment on a new "# " line. */
        for (const char *p = line; *p; p++) {
            if (*p == '\n')
                tb_puts(tb, "\n# ");
            else if (*p != '\r')
                tb_append(tb, p, 1);
        }
        tb_puts(tb, "\n");
    }
    tb_puts(tb, "t");
    for (int i = 0; i < desc->column_count; i++) {
        if (!desc->columns[i])
            return issim_error_set(err, ISSIM_ERR_INVALID, "recorder '%s': column %d has no name",
                                   desc->path, i);
        if (!field_ok(desc->columns[i]) || !desc->columns[i][0])
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "recorder '%s': column name '%s' is empty or contains a comma "
                                   "or line break",
                                   desc->path, desc->columns[i]);
        tb_puts(tb, ",");
        tb_puts(tb, desc->columns[i]);
    }
    tb_puts(tb, "\n");
    if (desc->units) {
        tb_puts(tb, "# units: s");
        for (int i = 0; i < desc->column_count; i++) {
            const char *unit = desc->units[i] ? desc->units[i] : "";
            if (!field_ok(unit))
                return issim_error_set(err, ISSIM_ERR_INVALID,
                                       "recorder '%s': unit '%s' of column '%s' contains a "
                                       "comma or line break",
                                       desc->path, unit, desc->columns[i]);
            tb_puts(tb, ",");
            tb_puts(tb, unit);
        }
        tb_puts(tb, "\n");
    }
    if (tb->oom)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "recorder: out of memory");
    return ISSIM_OK;
}

/* Writes all of data, retrying short writes and EINTR. Returns 0 or the errno of the failure
 * (EIO when write(2) makes no progress); *done receives the bytes the kernel accepted. */
static int write_all(int fd, const char *data, size_t size, size_t *done) {
    *done = 0;
    while (*done < size) {
        ssize_t n = write(fd, data + *done, size - *done);
        if (n > 0)
            *done += (size_t)n;
        else if (n < 0 && errno == EINTR)
            continue;
        else
            return n < 0 ? errno : EIO;
    }
    return 0;
}

/* ===== Writer thread ===== */

static void fail(Recorder *rec, int errnum) {
    char reason[256];
    describe_errno(errnum, reason, sizeof reason);
    snprintf(rec->message, sizeof rec->message, "recording to '%s' failed after %llu bytes: %s",
             rec->path, (unsigned long long)rec->file_bytes, reason);
    atomic_store_explicit(&rec->failed, true, memory_order_release);
    issim_log(ISSIM_LOG_ERROR, "%s", rec->message);
    /* Wake a producer blocked on a full ring: it returns ISSIM_ERR_IO. */
    pthread_mutex_lock(&rec->mutex);
    pthread_cond_signal(&rec->not_full);
    pthread_mutex_unlock(&rec->mutex);
}

static void fail_message(Recorder *rec, const char *message) {
    issim_strlcpy(rec->message, message, sizeof rec->message);
    atomic_store_explicit(&rec->failed, true, memory_order_release);
    issim_log(ISSIM_LOG_ERROR, "%s", rec->message);
    pthread_mutex_lock(&rec->mutex);
    pthread_cond_signal(&rec->not_full);
    pthread_mutex_unlock(&rec->mutex);
}

/* The HDF5 flush: the queued edits, then the rows, then H5Fflush (recorder_hdf5.c). */
static void writer_flush_hdf5(Recorder *rec) {
    pthread_mutex_lock(&rec->mutex);
    bool edit_oom = false;
    for (size_t i = 0; i < rec->edit_count; i++) {
        QueuedEdit *e = &rec->edits[i];
        edit_oom |= !h5sink_add_edit(rec->h5, e->t, e->path, e->value);
        free(e->path);
        free(e->value);
    }
    rec->edit_count = 0;
    pthread_mutex_unlock(&rec->mutex);
    if (edit_oom)
        issim_log(ISSIM_LOG_WARN, "recording to '%s': out of memory for a live edit", rec->path);
    char message[sizeof rec->message];
    bool ok = h5sink_flush(rec->h5, message, sizeof message);
    if (!atomic_load_explicit(&rec->failed, memory_order_relaxed)) {
        rec->file_rows = h5sink_rows(rec->h5);
        rec->file_bytes = h5sink_bytes(rec->h5);
        atomic_store_explicit(&rec->rows_written, rec->file_rows, memory_order_relaxed);
        atomic_store_explicit(&rec->bytes_written, rec->file_bytes, memory_order_relaxed);
        if (!ok)
            fail_message(rec, message);
    }
    rec->text_rows = 0;
}

/* Hands the text buffer (whole rows) to the kernel, or discards it once failed. */
static void writer_flush(Recorder *rec) {
    if (rec->h5) {
        writer_flush_hdf5(rec);
        return;
    }
    if (rec->text_len == 0)
        return;
    if (!atomic_load_explicit(&rec->failed, memory_order_relaxed)) {
        size_t done;
        int errnum = write_all(rec->fd, rec->text, rec->text_len, &done);
        if (errnum == 0) {
            rec->file_rows += rec->text_rows;
            rec->file_bytes += done;
        } else {
            /* Count the rows that got through whole; cut a partial one off the file. */
            size_t whole = 0;
            for (size_t i = 0; i < done; i++)
                if (rec->text[i] == '\n') {
                    rec->file_rows++;
                    whole = i + 1;
                }
            rec->file_bytes += done;
            if (whole < done && rec->regular_file &&
                ftruncate(rec->fd, (off_t)(rec->file_bytes - (done - whole))) == 0)
                rec->file_bytes -= done - whole;
        }
        atomic_store_explicit(&rec->rows_written, rec->file_rows, memory_order_relaxed);
        atomic_store_explicit(&rec->bytes_written, rec->file_bytes, memory_order_relaxed);
        if (errnum != 0)
            fail(rec, errnum);
    }
    rec->text_len = 0;
    rec->text_rows = 0;
}

static size_t format_number(char *out, double v) {
    return (size_t)snprintf(out, RECORDER_NUMBER_MAX, "%.17g", v);
}

/* Appends one row; flushes when the buffer reaches RECORDER_FLUSH_BYTES. The buffer holds
 * RECORDER_FLUSH_BYTES plus one maximal row, so an append always fits. */
static void writer_format_row(Recorder *rec, const double *row) {
    if (atomic_load_explicit(&rec->failed, memory_order_relaxed))
        return;
    if (rec->text_rows == 0)
        rec->pending_since = issim_wall_time();
    if (rec->h5) {
        rec->text_rows++;
        if (h5sink_append(rec->h5, row) >= RECORDER_HDF5_FLUSH_BYTES)
            writer_flush(rec);
        return;
    }
    char *p = rec->text + rec->text_len;
    p += format_number(p, row[0]);
    for (int i = 1; i < rec->stride; i++) {
        *p++ = ',';
        p += format_number(p, row[i]);
    }
    *p++ = '\n';
    rec->text_len = (size_t)(p - rec->text);
    rec->text_rows++;
    if (rec->text_len >= RECORDER_FLUSH_BYTES)
        writer_flush(rec);
}

static bool flush_due(const Recorder *rec) {
    return rec->text_rows > 0 && issim_wall_time() >= rec->pending_since + rec->flush_interval;
}

static struct timespec deadline_timespec(double t) {
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static void *writer_main(void *arg) {
    Recorder *rec = arg;
    /* The C numeric locale for this thread only: '.' as decimal point whatever the program's
     * global locale. */
    locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c_locale)
        uselocale(c_locale);

    pthread_mutex_lock(&rec->mutex);
    for (;;) {
        uint64_t available = rec->head - rec->tail;
        if (available > 0) {
            uint64_t first = rec->tail;
            uint64_t count = available < rec->batch ? available : rec->batch;
            pthread_mutex_unlock(&rec->mutex);
            for (uint64_t i = 0; i < count; i++)
                writer_format_row(rec, rec->ring + ((first + i) % rec->capacity) * rec->stride);
            if (flush_due(rec))
                writer_flush(rec);
            pthread_mutex_lock(&rec->mutex);
            rec->tail = first + count;
            pthread_cond_signal(&rec->not_full);
            continue;
        }
        if (rec->closing)
            break;
        if (rec->text_rows > 0) {
            double now = issim_wall_time();
            double deadline = rec->pending_since + rec->flush_interval;
            if (now >= deadline) {
                pthread_mutex_unlock(&rec->mutex);
                writer_flush(rec);
                pthread_mutex_lock(&rec->mutex);
            } else {
                /* A huge flush_interval must not overflow time_t: re-check hourly. */
                struct timespec ts = deadline_timespec(fmin(deadline, now + 3600.0));
                pthread_cond_timedwait(&rec->not_empty, &rec->mutex, &ts);
            }
            continue;
        }
        rec->writer_idle = true;
        pthread_cond_wait(&rec->not_empty, &rec->mutex);
        rec->writer_idle = false;
    }
    pthread_mutex_unlock(&rec->mutex);
    writer_flush(rec);

    if (c_locale) {
        uselocale(LC_GLOBAL_LOCALE);
        freelocale(c_locale);
    }
    return NULL;
}

/* ===== Public API ===== */

RecorderDesc recorder_desc_default(void) {
    return (RecorderDesc){
        .path = NULL,
        .column_count = 0,
        .columns = NULL,
        .units = NULL,
        .metadata = NULL,
        .metadata_count = 0,
        .buffer_rows = 4096,
        .flush_interval = 0.1,
    };
}

static void recorder_free(Recorder *rec) {
    if (!rec)
        return;
    for (size_t i = 0; i < rec->edit_count; i++) {
        free(rec->edits[i].path);
        free(rec->edits[i].value);
    }
    free(rec->edits);
    free(rec->ring);
    free(rec->text);
    free(rec->path);
    free(rec);
}

static IssimStatus validate_desc(const RecorderDesc *desc, IssimError *err) {
    if (!desc || !desc->path || !desc->path[0])
        return issim_error_set(err, ISSIM_ERR_INVALID, "cannot open recorder: no file path given");
    if (desc->column_count < 0 || (desc->column_count > 0 && !desc->columns))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "recorder '%s': column_count %d without column names", desc->path,
                               desc->column_count);
    if (desc->metadata_count < 0 || (desc->metadata_count > 0 && !desc->metadata))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "recorder '%s': metadata_count %d without metadata lines",
                               desc->path, desc->metadata_count);
    if (desc->buffer_rows < 1)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "recorder '%s': buffer_rows must be at least 1 (got %d)", desc->path,
                               desc->buffer_rows);
    if (!(desc->flush_interval >= 0.0) || !isfinite(desc->flush_interval))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "recorder '%s': flush_interval must be a finite number of seconds "
                               ">= 0 (got %g)",
                               desc->path, desc->flush_interval);
    return ISSIM_OK;
}

/* Everything but the file and the thread. */
static Recorder *recorder_alloc(const RecorderDesc *desc, IssimError *err) {
    Recorder *rec = calloc(1, sizeof *rec);
    if (!rec) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "recorder: out of memory");
        return NULL;
    }
    rec->fd = -1;
    rec->stride = 1 + desc->column_count;
    rec->capacity = (uint64_t)desc->buffer_rows;
    rec->batch = rec->capacity > 1 ? rec->capacity / 2 : 1;
    rec->wake_at = rec->batch;
    rec->flush_interval = desc->flush_interval;
    rec->path = strdup(desc->path);
    size_t max_row = (size_t)rec->stride * (RECORDER_NUMBER_MAX + 1) + 1;
    rec->text_cap = RECORDER_FLUSH_BYTES + max_row;
    rec->text = malloc(rec->text_cap);
    if ((size_t)rec->stride <= SIZE_MAX / sizeof(double) / rec->capacity)
        rec->ring = malloc(rec->capacity * (size_t)rec->stride * sizeof(double));
    if (!rec->path || !rec->text || !rec->ring) {
        issim_error_set(err, ISSIM_ERR_NOMEM,
                        "recorder '%s': out of memory for %d rows of %d values", desc->path,
                        desc->buffer_rows, rec->stride);
        recorder_free(rec);
        return NULL;
    }
    atomic_init(&rec->rows_pushed, 0);
    atomic_init(&rec->rows_written, 0);
    atomic_init(&rec->rows_dropped, 0);
    atomic_init(&rec->bytes_written, 0);
    atomic_init(&rec->failed, false);
    return rec;
}

static bool init_sync(Recorder *rec) {
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return false;
    /* Deadlines come from issim_wall_time, which reads CLOCK_MONOTONIC. */
    bool ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0;
    ok = ok && pthread_cond_init(&rec->not_empty, &attr) == 0;
    if (ok && pthread_cond_init(&rec->not_full, NULL) != 0) {
        pthread_cond_destroy(&rec->not_empty);
        ok = false;
    }
    if (ok && pthread_mutex_init(&rec->mutex, NULL) != 0) {
        pthread_cond_destroy(&rec->not_empty);
        pthread_cond_destroy(&rec->not_full);
        ok = false;
    }
    pthread_condattr_destroy(&attr);
    return ok;
}

static void destroy_sync(Recorder *rec) {
    pthread_mutex_destroy(&rec->mutex);
    pthread_cond_destroy(&rec->not_empty);
    pthread_cond_destroy(&rec->not_full);
}

bool recorder_path_is_hdf5(const char *path) {
    size_t n = path ? strlen(path) : 0;
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot || (size_t)(dot - path) + 1 >= n)
        return false;
    char ext[8];
    size_t len = n - (size_t)(dot - path) - 1;
    if (len >= sizeof ext)
        return false;
    for (size_t i = 0; i <= len; i++)
        ext[i] = (char)tolower((unsigned char)dot[1 + i]);
    return strcmp(ext, "h5") == 0 || strcmp(ext, "hdf5") == 0;
}

static bool start_writer(Recorder *rec, IssimError *err);

static Recorder *recorder_open_hdf5(const RecorderDesc *desc, IssimError *err) {
    Recorder *rec = recorder_alloc(desc, err);
    if (!rec)
        return NULL;
    rec->flush_interval = fmax(desc->flush_interval, RECORDER_HDF5_FLUSH_MIN);
    rec->h5 = h5sink_open(desc, err);
    if (!rec->h5) {
        recorder_free(rec);
        return NULL;
    }
    rec->file_bytes = h5sink_bytes(rec->h5);
    atomic_store_explicit(&rec->bytes_written, rec->file_bytes, memory_order_relaxed);
    if (!start_writer(rec, err)) {
        h5sink_close(rec->h5, NULL, rec->message, sizeof rec->message);
        recorder_free(rec);
        return NULL;
    }
    return rec;
}

/* The locks and the writer thread; false with err filled (nothing else is released). */
static bool start_writer(Recorder *rec, IssimError *err) {
    if (!init_sync(rec)) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "recorder '%s': cannot create its locks", rec->path);
        return false;
    }
    /* The writer thread starts with every signal blocked: the program's handlers run on its
     * own threads, and a broken pipe becomes an EPIPE write error instead of a SIGPIPE. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int errnum = pthread_create(&rec->thread, NULL, writer_main, rec);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (errnum != 0) {
        char reason[256];
        describe_errno(errnum, reason, sizeof reason);
        issim_error_set(err, ISSIM_ERR_NOMEM, "recorder '%s': cannot start its thread: %s",
                        rec->path, reason);
        destroy_sync(rec);
        return false;
    }
    return true;
}

Recorder *recorder_open(const RecorderDesc *desc, IssimError *err) {
    if (validate_desc(desc, err) != ISSIM_OK)
        return NULL;
    if (recorder_path_is_hdf5(desc->path))
        return recorder_open_hdf5(desc, err);
    TextBuilder header = {0};
    if (build_header(desc, &header, err) != ISSIM_OK) {
        free(header.data);
        return NULL;
    }
    Recorder *rec = recorder_alloc(desc, err);
    if (!rec) {
        free(header.data);
        return NULL;
    }
    char reason[256];

    /* Never blocks (a FIFO without a reader hung the open) and never follows a link; a device
     * or a FIFO with a reader is written through (output_open_fd). */
    OutputKind kind;
    rec->fd = output_open_fd(desc->path, OUTPUT_TRUNCATE, &kind, err);
    if (rec->fd < 0) {
        free(header.data);
        recorder_free(rec);
        return NULL;
    }
    rec->regular_file = kind == OUTPUT_REGULAR;

    /* The header goes out synchronously, so a file that cannot be written at all is reported
     * here rather than later from the writer thread. */
    size_t done;
    int errnum = write_all(rec->fd, header.data, header.len, &done);
    free(header.data);
    if (errnum != 0) {
        describe_errno(errnum, reason, sizeof reason);
        issim_error_set(err, ISSIM_ERR_IO, "cannot write the header of '%s': %s", desc->path,
                        reason);
        close(rec->fd);
        recorder_free(rec);
        return NULL;
    }
    rec->file_bytes = done;
    atomic_store_explicit(&rec->bytes_written, done, memory_order_relaxed);

    if (!init_sync(rec)) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "recorder '%s': cannot create its locks", desc->path);
        close(rec->fd);
        recorder_free(rec);
        return NULL;
    }
    /* The writer thread starts with every signal blocked: the program's handlers run on its
     * own threads, and a broken pipe becomes an EPIPE write error instead of a SIGPIPE. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    errnum = pthread_create(&rec->thread, NULL, writer_main, rec);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (errnum != 0) {
        describe_errno(errnum, reason, sizeof reason);
        issim_error_set(err, ISSIM_ERR_NOMEM, "recorder '%s': cannot start its thread: %s",
                        desc->path, reason);
        destroy_sync(rec);
        close(rec->fd);
        recorder_free(rec);
        return NULL;
    }
    return rec;
}

IssimStatus recorder_push(Recorder *rec, double t, const double *values, bool block) {
    if (rec->stride > 1 && !values)
        return ISSIM_ERR_INVALID;
    atomic_fetch_add_explicit(&rec->rows_pushed, 1, memory_order_relaxed);
    if (atomic_load_explicit(&rec->failed, memory_order_relaxed))
        return ISSIM_ERR_IO;

    pthread_mutex_lock(&rec->mutex);
    while (rec->head - rec->tail == rec->capacity) {
        if (atomic_load_explicit(&rec->failed, memory_order_relaxed)) {
            pthread_mutex_unlock(&rec->mutex);
            return ISSIM_ERR_IO;
        }
        if (!block) {
            pthread_mutex_unlock(&rec->mutex);
            atomic_fetch_add_explicit(&rec->rows_dropped, 1, memory_order_relaxed);
            return ISSIM_ERR_FULL;
        }
        pthread_cond_wait(&rec->not_full, &rec->mutex);
    }
    double *slot = rec->ring + (rec->head % rec->capacity) * rec->stride;
    slot[0] = t;
    if (rec->stride > 1)
        memcpy(slot + 1, values, (size_t)(rec->stride - 1) * sizeof(double));
    rec->head++;
    if (rec->writer_idle || rec->head - rec->tail >= rec->wake_at)
        pthread_cond_signal(&rec->not_empty);
    pthread_mutex_unlock(&rec->mutex);
    return ISSIM_OK;
}

RecorderStats recorder_stats(const Recorder *rec) {
    return (RecorderStats){
        .rows_pushed = atomic_load_explicit(&rec->rows_pushed, memory_order_relaxed),
        .rows_written = atomic_load_explicit(&rec->rows_written, memory_order_relaxed),
        .rows_dropped = atomic_load_explicit(&rec->rows_dropped, memory_order_relaxed),
        .bytes_written = atomic_load_explicit(&rec->bytes_written, memory_order_relaxed),
        .failed = atomic_load_explicit(&rec->failed, memory_order_relaxed),
    };
}

bool recorder_failed(const Recorder *rec, IssimError *err) {
    if (!atomic_load_explicit(&rec->failed, memory_order_acquire))
        return false;
    issim_error_set(err, ISSIM_ERR_IO, "%s", rec->message);
    return true;
}

IssimStatus recorder_note_edit(Recorder *rec, double t, const char *path, const char *value) {
    if (!rec->h5)
        return ISSIM_OK;
    if (atomic_load_explicit(&rec->failed, memory_order_relaxed))
        return ISSIM_ERR_IO;
    QueuedEdit e = {.t = t, .path = strdup(path ? path : ""), .value = strdup(value ? value : "")};
    pthread_mutex_lock(&rec->mutex);
    bool ok = e.path && e.value;
    if (ok && rec->edit_count == rec->edit_cap) {
        size_t cap = rec->edit_cap ? 2 * rec->edit_cap : 16;
        QueuedEdit *bigger = realloc(rec->edits, cap * sizeof *bigger);
        ok = bigger != NULL;
        if (ok) {
            rec->edits = bigger;
            rec->edit_cap = cap;
        }
    }
    if (ok)
        rec->edits[rec->edit_count++] = e;
    pthread_mutex_unlock(&rec->mutex);
    if (!ok) {
        free(e.path);
        free(e.value);
        return ISSIM_ERR_NOMEM;
    }
    return ISSIM_OK;
}

IssimStatus recorder_close(Recorder *rec, IssimError *err) {
    return recorder_close_with_stats(rec, NULL, err);
}

IssimStatus recorder_close_with_stats(Recorder *rec, RecorderStats *final, IssimError *err) {
    if (final)
        *final = (RecorderStats){0};
    if (!rec)
        return ISSIM_OK;
    pthread_mutex_lock(&rec->mutex);
    rec->closing = true;
    pthread_cond_signal(&rec->not_empty);
    pthread_mutex_unlock(&rec->mutex);
    pthread_join(rec->thread, NULL);
    destroy_sync(rec);

    if (rec->h5) {
        char message[sizeof rec->message];
        uint64_t bytes = rec->file_bytes;
        bool ok = h5sink_close(rec->h5, &bytes, message, sizeof message);
        rec->h5 = NULL;
        atomic_store_explicit(&rec->bytes_written, bytes, memory_order_relaxed);
        if (!ok && !atomic_load_explicit(&rec->failed, memory_order_relaxed)) {
            issim_strlcpy(rec->message, message, sizeof rec->message);
            atomic_store_explicit(&rec->failed, true, memory_order_release);
            issim_log(ISSIM_LOG_ERROR, "%s", rec->message);
        }
        IssimStatus status = atomic_load_explicit(&rec->failed, memory_order_acquire)
                                 ? issim_error_set(err, ISSIM_ERR_IO, "%s", rec->message)
                                 : ISSIM_OK;
        if (final)
            *final = recorder_stats(rec);
        recorder_free(rec);
        return status;
    }

    /* close(2) can report a deferred write error (NFS, some FUSE file systems). On Linux the
     * descriptor is released even on EINTR, so it is never retried. */
    int close_errno = close(rec->fd) == 0 ? 0 : errno;
    if (close_errno != 0 && close_errno != EINTR &&
        !atomic_load_explicit(&rec->failed, memory_order_relaxed)) {
        char reason[256];
        describe_errno(close_errno, reason, sizeof reason);
        snprintf(rec->message, sizeof rec->message, "recording to '%s' failed after %llu bytes: %s",
                 rec->path, (unsigned long long)rec->file_bytes, reason);
        atomic_store_explicit(&rec->failed, true, memory_order_release);
        issim_log(ISSIM_LOG_ERROR, "%s", rec->message);
    }
    IssimStatus status = ISSIM_OK;
    if (atomic_load_explicit(&rec->failed, memory_order_acquire))
        status = issim_error_set(err, ISSIM_ERR_IO, "%s", rec->message);
    if (final)
        *final = recorder_stats(rec);
    recorder_free(rec);
    return status;
}
