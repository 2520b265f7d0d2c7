/* Status codes, error records, the swappable log handler, wall time and hashing. */
#include "issim/core.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

IssimStatus issim_error_set(IssimError *err, IssimStatus status, const char *fmt, ...) {
    if (err) {
        err->status = status;
        va_list args;
        va_start(args, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, args);
        va_end(args);
    }
    return status;
}

void issim_error_clear(IssimError *err) {
    if (err) {
        err->status = ISSIM_OK;
        err->message[0] = '\0';
    }
}

const char *issim_status_name(IssimStatus status) {
    switch (status) {
    case ISSIM_OK:
        return "ok";
    case ISSIM_ERR_INVALID:
        return "invalid input";
    case ISSIM_ERR_NOT_FOUND:
        return "not found";
    case ISSIM_ERR_RANGE:
        return "out of range";
    case ISSIM_ERR_READONLY:
        return "read-only";
    case ISSIM_ERR_IO:
        return "input/output error";
    case ISSIM_ERR_NOMEM:
        return "out of memory";
    case ISSIM_ERR_NUMERIC:
        return "numerical failure";
    case ISSIM_ERR_FULL:
        return "full";
    case ISSIM_ERR_STATE:
        return "invalid state";
    case ISSIM_ERR_STALE:
        return "stale id";
    }
    return "unknown";
}

static void default_log_handler(IssimLogLevel level, const char *message, void *user);

static IssimLogHandler log_handler = default_log_handler;
static void *log_user;
static atomic_bool log_verbose;

static void default_log_handler(IssimLogLevel level, const char *message, void *user) {
    (void)user;
    static const char *const prefix[] = {"debug", "info", "warning", "error"};
    if (level >= ISSIM_LOG_WARN || (level == ISSIM_LOG_INFO && atomic_load(&log_verbose)))
        fprintf(stderr, "issim: %s: %s\n", prefix[level], message);
}

IssimLogHandler issim_log_set_handler(IssimLogHandler handler, void *user) {
    IssimLogHandler old = log_handler;
    log_handler = handler ? handler : default_log_handler;
    log_user = handler ? user : NULL;
    return old;
}

void issim_log_set_verbose(bool verbose) {
    atomic_store(&log_verbose, verbose);
}

void issim_logv(IssimLogLevel level, const char *fmt, va_list args) {
    char message[1024];
    vsnprintf(message, sizeof message, fmt, args);
    log_handler(level, message, log_user);
}

void issim_log(IssimLogLevel level, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    issim_logv(level, fmt, args);
    va_end(args);
}

static IssimFatalHandler fatal_handler;

IssimFatalHandler issim_set_fatal_handler(IssimFatalHandler handler) {
    IssimFatalHandler old = fatal_handler;
    fatal_handler = handler;
    return old;
}

_Noreturn void issim_fatal(const char *fmt, ...) {
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    issim_log(ISSIM_LOG_ERROR, "%s", message);
    if (fatal_handler)
        fatal_handler(message);
    abort();
}

double issim_wall_time(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t issim_hash_bytes(uint64_t hash, const void *data, size_t size) {
    const unsigned char *p = data;
    for (size_t i = 0; i < size; i++) {
        hash ^= p[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

uint64_t issim_hash_doubles(uint64_t hash, const double *values, size_t count) {
    for (size_t i = 0; i < count; i++) {
        uint64_t word;
        memcpy(&word, &values[i], sizeof word);
        hash ^= word;
        hash *= 1099511628211ull;
        hash ^= hash >> 29; /* fold the high bits down: a word-wise multiply alone mixes upward */
    }
    return hash;
}

size_t issim_strlcpy(char *dst, const char *src, size_t size) {
    size_t len = strlen(src);
    if (size > 0) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}
