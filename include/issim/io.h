/* issim io: scene files (Lua 5.4, sandboxed) and the trajectory recorder (CSV).
 *
 * Scenes: a scene file is a Lua chunk returning a table (docs/scene-format.md). It runs in a
 * sandbox: no os, io, require, load, dofile, debug, collectgarbage, string.dump; only the
 * base functions that cannot reach the system, math, string, table and utf8; text chunks
 * only (no bytecode); an instruction budget and a memory cap stop runaway scenes. Errors
 * come back as "file:line: message" and nothing half-loaded escapes: on failure *out is NULL.
 * Threading: scene functions are reentrant (no globals); call them from any one thread per
 * database.
 *
 * Recorder: writes rows (t, values...) to a CSV file from its own thread, through a bounded
 * buffer. Header: '#' metadata lines (program version, scene, options), then the column line
 * "t,bar.pos.z,...", then a units line beginning with '#' ("# units: s,m,..."). Rows are
 * written with whole-row write(2) calls, so a killed process leaves a file readable up to the
 * last flush (at most an unterminated last line, when a kill lands inside a multi-page write;
 * readers skip it). A write error (full disk, revoked path) is reported once with
 * a message naming the file and errno; the recorder then stops writing and the simulation
 * carries on.
 *
 * A path ending in .h5 or .hdf5 records to HDF5 instead (src/io/recorder_hdf5.c,
 * docs/user-guide.md "Recording to HDF5"): a `t` dataset and one 1-D dataset per column, named
 * by the column, each with a `units` attribute, chunked and compressed (shuffle + deflate); the
 * run's description as root attributes; live edits (recorder_note_edit) in the group `edits`.
 * It is flushed every max(flush_interval, 1 s), in HDF5's SWMR mode: a process killed at any
 * instant leaves a consistent file holding at least the rows up to the last flush, which a
 * SWMR reader opens as it is and any reader after `h5clear -s` (recorder_hdf5.c). It needs a
 * regular file: a device or FIFO is refused.
 */
#ifndef ISSIM_IO_H
#define ISSIM_IO_H

#include "issim/core.h"
#include "issim/thing.h"

/* ===== Scenes ===== */

/* The limits of a load, and its inputs: values for the scene's parameters. A scene declares a
 * parameter by calling param(name, default) (docs/scene-format.md, "Scene parameters"); params
 * holds "name=value" overrides (numbers). A given parameter the scene never declares fails the
 * load, naming the parameters it does declare. */
typedef struct SceneLimits {
    size_t max_memory;         /* bytes the scene's Lua state may allocate; default 64 MiB */
    long max_instructions;     /* VM instructions before the scene is stopped; default 1e8 */
    const char *const *params; /* Nullable: param_count "name=value" strings (Borrowed) */
    int param_count;
} SceneLimits;

#define SCENE_MAX_PARAMS 32

SceneLimits scene_limits_default(void);

/* Loads a scene file into a new thing database (Owned by the caller). On error returns the
 * status, fills err with "path:line: message", and sets *out to NULL. limits is Nullable. */
IssimStatus scene_load_file(const char *path, const SceneLimits *limits, ThingDb **out,
                            IssimError *err);
/* Same from memory; chunkname is used in messages ("scenes/x.lua"). */
IssimStatus scene_load_string(const char *chunkname, const char *source, size_t size,
                              const SceneLimits *limits, ThingDb **out, IssimError *err);
/* Writes db as a scene file that loads back to the same database (every property of every
 * thing, with units in comments). As every whole output (output_begin below): a regular file is
 * replaced through a temporary beside it and a rename, so a failure never destroys it; a
 * character device or FIFO with a reader is written through; a symbolic link, a FIFO without a
 * reader, a directory or block device is refused. Every write is checked (a full disk is an
 * error, the old file kept). */
IssimStatus scene_save_file(const ThingDb *db, const char *path, IssimError *err);
/* Returns a malloc'd scene text (Owned by the caller), or NULL on out of memory. */
char *scene_save_string(const ThingDb *db);

/* The data directory (scenes/, assets/, docs/) of the running program: ../share/issim beside the
 * bin/ holding the executable (/proc/self/exe, so a moved installation still finds its own),
 * else the source tree it was built from (a build-tree run). Canonical (realpath) in out; false,
 * out empty, when neither holds a scenes/ folder. Thread: any. */
bool scene_data_dir(char *out, size_t size);
/* The source tree the program was built from, when it still holds scenes/ (the launcher lists
 * it besides an installation's); false otherwise. */
bool scene_source_dir(char *out, size_t size);
/* Where a scene named on the command line or in the GUI is: NAME itself when it exists or is
 * absolute; else the first regular file of NAME, NAME.lua, scenes/NAME, scenes/NAME.lua in the
 * working directory (a relative path in out), then in scene_data_dir (an absolute one), so
 * `issim run point_drop` works from anywhere. Not found: ISSIM_ERR_NOT_FOUND, the message naming
 * the directories looked in. out may be name itself. Thread: any. */
IssimStatus scene_find(const char *name, char *out, size_t size, IssimError *err);

/* ===== Output files =====
 * What the writers of outputs (scene saves, a sweep's table, recordings) do with the path they
 * are given, so none destroys what is there: a regular file (or nothing) is written; a
 * character device (/dev/stdout, /dev/null, a terminal) or a FIFO with a reader is written
 * through, never replaced by a file; a symbolic link (the last component: a link is never
 * followed nor replaced), a FIFO without a reader, a directory, a block device or a socket is
 * refused with a message saying which. No open blocks. Thread: any. */
typedef enum OutputKind {
    OUTPUT_NEW,     /* nothing at the path */
    OUTPUT_REGULAR, /* a regular file */
    OUTPUT_THROUGH  /* a character device or a FIFO: written through */
} OutputKind;

/* What is at path now (lstat: a link is refused, not followed); messages begin "cannot write
 * WHAT PATH: it is ...". */
IssimStatus output_path_kind(const char *path, const char *what, OutputKind *kind, IssimError *err);

typedef enum OutputOpen { OUTPUT_TRUNCATE, OUTPUT_APPEND } OutputOpen;
/* Opens path for writing in place (a regular file, created if missing, truncated or appended
 * to) or through (a character device, a FIFO with a reader): a blocking, close-on-exec
 * descriptor, *kind (Nullable) saying which; -1 with err ("cannot open 'PATH' for writing: it is
 * a FIFO that no process is reading ...") otherwise. */
int output_open_fd(const char *path, OutputOpen how, OutputKind *kind, IssimError *err);
/* Writes all of data (short writes and EINTR retried): 0, or the errno of the failure (EIO when
 * write(2) makes no progress); *done (Nullable) receives the bytes the kernel accepted. */
int output_write_all(int fd, const void *data, size_t size, size_t *done);

/* A whole output: written to a new temporary beside a regular file (or none) and renamed over
 * it at output_commit (fsynced first), written straight to a device or FIFO. A failure at any
 * step (output_write, output_commit) removes the temporary, leaves what was at the path as it
 * was (a device or FIFO has what was written) and returns ISSIM_ERR_IO with "cannot write WHAT
 * PATH: REASON (after N bytes)"; the OutputFile is then closed. */
typedef struct OutputFile {
    int fd;
    bool replace; /* through a temporary and a rename */
    const char *path, *what;
    char *tmp;    /* Owned */
    size_t bytes; /* written so far */
} OutputFile;

IssimStatus output_begin(OutputFile *out, const char *path, const char *what, IssimError *err);
IssimStatus output_write(OutputFile *out, const void *data, size_t size, IssimError *err);
IssimStatus output_commit(OutputFile *out, IssimError *err);
/* Closes and removes the temporary; idempotent. */
void output_abort(OutputFile *out);

/* ===== Recorder ===== */

typedef struct RecorderDesc {
    const char *path;
    int column_count;            /* value columns, not counting t */
    const char *const *columns;  /* column_count names: "bar.pos.z" */
    const char *const *units;    /* column_count units: "m" (Nullable: no units line) */
    const char *const *metadata; /* metadata_count lines written as "# line" (Nullable) */
    int metadata_count;
    int buffer_rows;       /* bounded buffer capacity in rows; default 4096 */
    double flush_interval; /* seconds between forced flushes to the file; default 0.1 */
    /* The run, for an HDF5 recording's root attributes (a CSV has the metadata lines). All
     * Nullable; scene_text NULL: the file at scene_path is read. */
    const char *scene_path;
    const char *scene_text;
    const char *const *params; /* param_count "name=value" (--param) */
    int param_count;
    const char *const *sets; /* set_count "path=value" (--set) */
    int set_count;
    const char *command_line;
} RecorderDesc;

typedef struct RecorderStats {
    uint64_t rows_pushed;
    uint64_t rows_written; /* rows handed to the kernel */
    uint64_t rows_dropped; /* refused because the buffer was full (non-blocking push) */
    uint64_t bytes_written;
    bool failed;
} RecorderStats;

typedef struct Recorder Recorder;

RecorderDesc recorder_desc_default(void);
/* Creates the file (output_open_fd: a device or a FIFO with a reader is written through; a
 * symbolic link or a FIFO without a reader is refused), writes the header and starts the writer
 * thread. Returns NULL with err filled ("cannot open out.csv for writing: Permission denied")
 * on failure. */
Recorder *recorder_open(const RecorderDesc *desc, IssimError *err);
/* Queues one row (column_count values). With block true the call waits while the buffer is
 * full (headless runs: nothing is lost); with block false a full buffer drops the row and
 * returns ISSIM_ERR_FULL (interactive runs: the engine never waits). Returns ISSIM_ERR_IO
 * once the recorder has failed. Thread: one producer thread. */
IssimStatus recorder_push(Recorder *rec, double t, const double *values, bool block);
/* A live edit accepted at simulated time t, kept with the recording: an HDF5 recording's
 * `edits` group (t, path, value); a CSV ignores it (its format is unchanged). ISSIM_ERR_NOMEM
 * or ISSIM_ERR_IO (failed) otherwise ISSIM_OK. Thread: the producer thread. */
IssimStatus recorder_note_edit(Recorder *rec, double t, const char *path, const char *value);
/* true for a path recorded to HDF5 (.h5, .hdf5, any case). */
bool recorder_path_is_hdf5(const char *path);
/* Snapshot of the counters. Thread: any. */
RecorderStats recorder_stats(const Recorder *rec);
/* true once a write failed; err (Nullable) receives the message. Thread: any. */
bool recorder_failed(const Recorder *rec, IssimError *err);
/* Writes what is buffered, stops the thread, closes the file and frees rec. Returns the first
 * error seen (ISSIM_OK if none). Thread: the producer thread. */
IssimStatus recorder_close(Recorder *rec, IssimError *err);
/* recorder_close, and the final counters in *final (Nullable): rows_written is then the number
 * of whole rows in the file, also after a failed write (disk full). */
IssimStatus recorder_close_with_stats(Recorder *rec, RecorderStats *final, IssimError *err);

#endif
