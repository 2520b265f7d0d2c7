/* issim core: status codes, error messages, logging, ids.
 *
 * Threading: every function here may be called from any thread. The log handler is
 * process-global; installing one is not synchronised with concurrent logging, so install
 * it before starting threads (tests do it in their setup).
 */
#ifndef ISSIM_CORE_H
#define ISSIM_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISSIM_VERSION "0.1.0"

/* ===== Status and errors ===== */

typedef enum IssimStatus {
    ISSIM_OK = 0,
    ISSIM_ERR_INVALID, /* malformed input: syntax, wrong type */
    ISSIM_ERR_NOT_FOUND,
    ISSIM_ERR_RANGE,    /* value outside the property's range */
    ISSIM_ERR_READONLY, /* property fixed during a run, or derived */
    ISSIM_ERR_IO,
    ISSIM_ERR_NOMEM,
    ISSIM_ERR_NUMERIC,   /* integrator failure, NaN */
    ISSIM_ERR_FULL,      /* a bounded queue is full */
    ISSIM_ERR_STATE,     /* call not valid in the object's current state */
    ISSIM_ERR_STALE,     /* an id whose object is gone: from a destroyed or another instance
                            (an engine of a previous scene, another registry) */
    ISSIM_ERR_CANCELLED, /* stopped on request before it finished (EngineOptions.should_stop) */
} IssimStatus;

/* Caller-owned error record. Every fallible call takes a Nullable IssimError *; on failure it
 * fills status and a human-readable message naming the problem (file:line: for scenes). */
typedef struct IssimError {
    IssimStatus status;
    char message[512];
} IssimError;

/* Fills err (if non-null) and returns status. */
IssimStatus issim_error_set(IssimError *err, IssimStatus status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void issim_error_clear(IssimError *err);
const char *issim_status_name(IssimStatus status);

/* ===== Logging ===== */

typedef enum IssimLogLevel {
    ISSIM_LOG_DEBUG,
    ISSIM_LOG_INFO,
    ISSIM_LOG_WARN,
    ISSIM_LOG_ERROR,
} IssimLogLevel;

/* A handler receives one complete message (no trailing newline). It may be called from any
 * thread, concurrently; it must be thread-safe. */
typedef void (*IssimLogHandler)(IssimLogLevel level, const char *message, void *user);

/* Installs handler (NULL restores the default, which writes "issim: warning: ..." to stderr
 * for WARN and above, and INFO when verbose). Returns the previous handler. */
IssimLogHandler issim_log_set_handler(IssimLogHandler handler, void *user);
void issim_log_set_verbose(bool verbose);
void issim_log(IssimLogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void issim_logv(IssimLogLevel level, const char *fmt, va_list args);

/* ===== Programming errors ===== */

/* Called on a programming error (a broken invariant, a wrong property name in engine code),
 * never on user input. The default logs at ERROR and the process aborts. A handler may longjmp
 * away (tests do); if it returns, the process aborts. Install before starting threads. */
typedef void (*IssimFatalHandler)(const char *message);
IssimFatalHandler issim_set_fatal_handler(IssimFatalHandler handler);
_Noreturn void issim_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define ISSIM_ASSERT(cond)                                                                         \
    ((cond) ? (void)0 : issim_fatal("%s:%d: assertion failed: %s", __FILE__, __LINE__, #cond))

/* ===== Time ===== */

/* Monotonic wall clock in seconds. Thread: any. */
double issim_wall_time(void);

/* ===== Utilities ===== */

/* FNV-1a 64-bit over bytes; used to hash lock-step runs for determinism checks. */
uint64_t issim_hash_bytes(uint64_t hash, const void *data, size_t size);
#define ISSIM_HASH_INIT 14695981039346656037ull
/* FNV-1a over 64-bit words (the bit patterns of the doubles): a word at a time, so hashing every
 * published frame costs a few nanoseconds. Not the same value as issim_hash_bytes. */
uint64_t issim_hash_doubles(uint64_t hash, const double *values, size_t count);

/* Reads a whole file named by user input (a scene, an .obj asset, a contact map), which may name
 * anything: only a regular file of at most max_bytes is read, opened without blocking (a device
 * such as /dev/zero would grow memory without bound, a FIFO nobody writes would hang). `what`
 * names the kind of file in messages ("scene", "contact map"). *text is NUL-terminated, Owned
 * (free()); *size excludes the NUL (less than the size stat gave if the file shrank meanwhile).
 * ISSIM_ERR_IO (cannot open / read), ISSIM_ERR_INVALID (not a regular file), ISSIM_ERR_RANGE
 * (too big), ISSIM_ERR_NOMEM. */
IssimStatus issim_read_file(const char *path, long long max_bytes, const char *what, char **text,
                            size_t *size, IssimError *err);

/* Copies at most size-1 bytes and always terminates. Returns strlen(src). */
size_t issim_strlcpy(char *dst, const char *src, size_t size);

/* Levenshtein distance (insertions, deletions, substitutions of bytes); words longer than 63
 * bytes count as different from everything but themselves. */
int issim_edit_distance(const char *a, const char *b);

/* "Did you mean": the entries of a table nearest a misspelt word. Offer every entry's name;
 * the first ISSIM_NEAREST_MAX of those at the smallest distance, if it is at most
 * max(2, strlen(word) / 3) edits, are kept in table order. Names are Borrowed (they must outlive
 * the struct). Thread: any (one struct per caller). */
#define ISSIM_NEAREST_MAX 3
typedef struct IssimNearest {
    const char *word;
    const char *names[ISSIM_NEAREST_MAX];
    int distance; /* of the kept names */
    int count;
} IssimNearest;
IssimNearest issim_nearest_start(const char *word);
void issim_nearest_offer(IssimNearest *nearest, const char *name);
/* Writes "a, b or c" (the kept names), "" when none; returns how many were kept. */
int issim_nearest_format(const IssimNearest *nearest, char *out, size_t size);

/* ===== Vocabularies =====
 * Every enum-valued setting has a name table indexed by its enum (what scenes and the command
 * line spell; thing.h, "Vocabularies"). These three serve every table, whatever module owns it.
 * Thread: any (the tables are constant). */

/* The index of name among table[0 .. count-1], or -1 (unknown or NULL name). */
int vocabulary_parse(const char *const *table, int count, const char *name);
/* table[value], or "?" for a value out of range. */
const char *vocabulary_name(const char *const *table, int count, int value);
/* The names comma-separated ("bdf, adams, rk4") into buf, truncated to size, for messages
 * that list what is accepted. */
void vocabulary_list(const char *const *table, int count, char *buf, size_t size);

#endif
