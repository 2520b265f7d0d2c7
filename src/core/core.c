/* Status codes, error records, the swappable log handler, wall time and hashing. */
#include "issim/core.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
    case ISSIM_ERR_CANCELLED:
        return "cancelled";
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

int issim_edit_distance(const char *a, const char *b) {
    enum { LONGEST = 63 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > LONGEST || lb > LONGEST)
        return strcmp(a, b) == 0 ? 0 : INT_MAX;
    int row[LONGEST + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diagonal = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int above = row[j];
            int substitute = diagonal + (a[i - 1] != b[j - 1]);
            int shortest = above + 1 < row[j - 1] + 1 ? above + 1 : row[j - 1] + 1;
            row[j] = substitute < shortest ? substitute : shortest;
            diagonal = above;
        }
    }
    return row[lb];
}

IssimNearest issim_nearest_start(const char *word) {
    return (IssimNearest){.word = word};
}

void issim_nearest_offer(IssimNearest *n, const char *name) {
    int len = (int)strlen(n->word);
    int limit = len / 3 > 2 ? len / 3 : 2;
    int d = issim_edit_distance(n->word, name);
    if (d > limit || (n->count > 0 && d > n->distance))
        return;
    if (n->count == 0 || d < n->distance) {
        n->count = 0;
        n->distance = d;
    }
    if (n->count < ISSIM_NEAREST_MAX)
        n->names[n->count++] = name;
}

int issim_nearest_format(const IssimNearest *n, char *out, size_t size) {
    size_t used = 0;
    if (size > 0)
        out[0] = '\0';
    for (int i = 0; i < n->count && used < size; i++) {
        const char *sep = i == 0 ? "" : (i == n->count - 1 ? " or " : ", ");
        int w = snprintf(out + used, size - used, "%s%s", sep, n->names[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    return n->count;
}

IssimStatus issim_read_file(const char *path, long long max_bytes, const char *what, char **text,
                            size_t *size, IssimError *err) {
    *text = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot open %s %s: %s", what, path,
                               strerror(errno));
    struct stat st;
    IssimStatus s = ISSIM_OK;
    if (fstat(fd, &st) != 0)
        s = issim_error_set(err, ISSIM_ERR_IO, "cannot read %s %s: %s", what, path,
                            strerror(errno));
    else if (!S_ISREG(st.st_mode))
        s = issim_error_set(err, ISSIM_ERR_INVALID,
                            "%s: not a regular file (a %s must be a regular file, not a device, "
                            "FIFO or directory)",
                            path, what);
    else if (st.st_size > max_bytes)
        s = issim_error_set(err, ISSIM_ERR_RANGE,
                            "%s: %lld bytes is over the %lld MiB limit of a %s", path,
                            (long long)st.st_size, max_bytes >> 20, what);
    char *buf = s == ISSIM_OK ? malloc((size_t)st.st_size + 1) : NULL;
    if (s == ISSIM_OK && !buf)
        s = issim_error_set(err, ISSIM_ERR_NOMEM, "cannot read %s %s: out of memory", what, path);
    size_t got = 0;
    while (s == ISSIM_OK && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) { /* 0: the file shrank while we read it; the rest is not there */
            if (n < 0)
                s = issim_error_set(err, ISSIM_ERR_IO, "cannot read %s %s: %s", what, path,
                                    strerror(errno));
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    if (s != ISSIM_OK) {
        free(buf);
        return s;
    }
    buf[got] = '\0';
    *text = buf;
    *size = got;
    return ISSIM_OK;
}

/* ===== Vocabularies ===== */

int vocabulary_parse(const char *const *table, int count, const char *name) {
    for (int i = 0; name && i < count; i++)
        if (strcmp(name, table[i]) == 0)
            return i;
    return -1;
}

const char *vocabulary_name(const char *const *table, int count, int value) {
    return value >= 0 && value < count ? table[value] : "?";
}

void vocabulary_list(const char *const *table, int count, char *buf, size_t size) {
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", table[i]);
}
