/* Output paths (include/issim/io.h, "Output files"): what a scene save, a sweep's table and a
 * recording do with the path they are given, so none of them destroys what is there.
 *
 * A whole output (a saved scene, a sorted table) replacing a regular file was written to
 * PATH.tmp and renamed over PATH: a device node or a symbolic link at PATH became a regular
 * file, silently, and a PATH.tmp planted as a link was written through. Here the final
 * component is never followed (O_NOFOLLOW, lstat), a character device or a FIFO is written
 * through instead of replaced, the temporary is created exclusively under a name of this
 * process, and every open is non-blocking (a FIFO without a reader hung the open): a FIFO with a
 * reader is switched back to blocking writes once open. */
#include "issim/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int output_write_all(int fd, const void *data, size_t size, size_t *done) {
    const char *p = data;
    size_t dummy;
    if (!done)
        done = &dummy;
    *done = 0;
    while (*done < size) {
        ssize_t n = write(fd, p + *done, size - *done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            return EIO; /* no progress and no reason: do not spin */
        *done += (size_t)n;
    }
    return 0;
}

/* Why an open of an output failed, in the user's terms (the errno alone says "Too many levels
 * of symbolic links" for a link and "No such device or address" for a FIFO without a reader). */
static void open_failure(const char *path, int errnum, char *buf, size_t size) {
    struct stat st;
    bool known = lstat(path, &st) == 0;
    if (known && S_ISLNK(st.st_mode) && errnum == ELOOP)
        snprintf(buf, size,
                 "it is a symbolic link (an output never follows or replaces a link to a file: "
                 "give the path it points to)");
    else if (errnum == ENXIO && stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
        snprintf(buf, size, "it is a FIFO that no process is reading (start the reader first)");
    else
        snprintf(buf, size, "%s", strerror(errnum));
}

/* Refuses what is neither a regular file, a character device nor a FIFO. */
static const char *unwritable_kind(mode_t mode) {
    return S_ISDIR(mode)    ? "a directory"
           : S_ISBLK(mode)  ? "a block device (a disk is not an output)"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISREG(mode) || S_ISCHR(mode) || S_ISFIFO(mode)
               ? NULL
               : "not a regular file, character device or FIFO";
}

/* A symbolic link to a character device or a FIFO (/dev/stdout, /dev/stderr): following it
 * writes through and replaces nothing, unlike following a link to a file. */
static bool links_to_device(const char *path) {
    struct stat link, target;
    return lstat(path, &link) == 0 && S_ISLNK(link.st_mode) && stat(path, &target) == 0 &&
           (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode));
}

int output_open_fd(const char *path, OutputOpen how, OutputKind *kind, IssimError *err) {
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    if (how == OUTPUT_APPEND)
        flags |= O_APPEND;
    int fd = open(path, flags, 0666);
    bool via_link = false;
    if (fd < 0 && errno == ELOOP && links_to_device(path)) {
        /* /dev/stdout is a link to a descriptor: written through, as the device itself */
        fd = open(path, (flags & ~(O_NOFOLLOW | O_CREAT)), 0666);
        via_link = true;
    }
    char reason[256];
    if (fd < 0) {
        open_failure(path, errno, reason, sizeof reason);
        issim_error_set(err, ISSIM_ERR_IO, "cannot open '%s' for writing: %s", path, reason);
        return -1;
    }
    struct stat st;
    const char *kind_refused = NULL;
    int errnum = 0;
    if (fstat(fd, &st) != 0)
        errnum = errno;
    else
        kind_refused = via_link && S_ISREG(st.st_mode) ? "a symbolic link to a regular file"
                                                       : unwritable_kind(st.st_mode);
    /* Truncated only once known to be a regular file: O_TRUNC at the open would have applied to
     * whatever was there. */
    if (!errnum && !kind_refused && S_ISREG(st.st_mode) && how == OUTPUT_TRUNCATE &&
        ftruncate(fd, 0) != 0)
        errnum = errno;
    int fl = errnum || kind_refused ? 0 : fcntl(fd, F_GETFL);
    if (!errnum && !kind_refused && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0))
        errnum = errno;
    if (errnum || kind_refused) {
        if (kind_refused)
            issim_error_set(err, ISSIM_ERR_IO, "cannot open '%s' for writing: it is %s", path,
                            kind_refused);
        else
            issim_error_set(err, ISSIM_ERR_IO, "cannot open '%s' for writing: %s", path,
                            strerror(errnum));
        close(fd);
        return -1;
    }
    if (kind)
        *kind = S_ISREG(st.st_mode) ? OUTPUT_REGULAR : OUTPUT_THROUGH;
    return fd;
}

IssimStatus output_path_kind(const char *path, const char *what, OutputKind *kind,
                             IssimError *err) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) {
            *kind = OUTPUT_NEW;
            return ISSIM_OK;
        }
        return issim_error_set(err, ISSIM_ERR_IO, "cannot write %s %s: %s", what, path,
                               strerror(errno));
    }
    if (S_ISLNK(st.st_mode) && links_to_device(path)) {
        *kind = OUTPUT_THROUGH;
        return ISSIM_OK;
    }
    if (S_ISLNK(st.st_mode))
        return issim_error_set(err, ISSIM_ERR_IO,
                               "cannot write %s %s: it is a symbolic link (an output never follows "
                               "or replaces a link to a file: give the path it points to)",
                               what, path);
    const char *refused = unwritable_kind(st.st_mode);
    if (refused)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot write %s %s: it is %s", what, path,
                               refused);
    *kind = S_ISREG(st.st_mode) ? OUTPUT_REGULAR : OUTPUT_THROUGH;
    return ISSIM_OK;
}

IssimStatus output_begin(OutputFile *out, const char *path, const char *what, IssimError *err) {
    *out = (OutputFile){.fd = -1, .path = path, .what = what};
    OutputKind kind;
    if (output_path_kind(path, what, &kind, err) != ISSIM_OK)
        return ISSIM_ERR_IO;
    IssimError sub = {0};
    if (kind == OUTPUT_THROUGH) {
        out->fd = output_open_fd(path, OUTPUT_TRUNCATE, &kind, &sub);
        if (out->fd < 0)
            return issim_error_set(err, sub.status, "cannot write %s: %s", what, sub.message);
        out->replace = kind == OUTPUT_REGULAR; /* it became a file meanwhile: replace it */
        if (!out->replace)
            return ISSIM_OK;
        close(out->fd);
        out->fd = -1;
    }
    /* A name of this process and call beside the target (rename stays within its file system),
     * created exclusively: an existing file or link of that name is never written through. */
    static atomic_uint serial;
    size_t size = strlen(path) + 48;
    out->tmp = malloc(size);
    if (!out->tmp)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "cannot write %s %s: out of memory", what,
                               path);
    for (int attempt = 0; attempt < 16 && out->fd < 0; attempt++) {
        snprintf(out->tmp, size, "%s.%ld-%u.tmp", path, (long)getpid(),
                 atomic_fetch_add(&serial, 1));
        out->fd = open(out->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (out->fd < 0 && errno != EEXIST)
            break;
    }
    if (out->fd < 0) {
        issim_error_set(err, ISSIM_ERR_IO, "cannot write %s %s: %s", what, path, strerror(errno));
        free(out->tmp);
        out->tmp = NULL;
        return err ? err->status : ISSIM_ERR_IO;
    }
    struct stat st;
    if (kind == OUTPUT_REGULAR && stat(path, &st) == 0)
        (void)fchmod(out->fd, st.st_mode & 07777); /* the replacement keeps the file's mode */
    out->replace = true;
    return ISSIM_OK;
}

static IssimStatus output_fail(OutputFile *out, int errnum, IssimError *err) {
    issim_error_set(err, ISSIM_ERR_IO, "cannot write %s %s: %s (after %zu bytes)%s", out->what,
                    out->path, strerror(errnum), out->bytes,
                    out->replace ? "; the file there is unchanged" : "");
    output_abort(out);
    return ISSIM_ERR_IO;
}

IssimStatus output_write(OutputFile *out, const void *data, size_t size, IssimError *err) {
    if (out->fd < 0)
        return issim_error_set(err, ISSIM_ERR_STATE, "cannot write %s %s: not open", out->what,
                               out->path);
    size_t done = 0;
    int errnum = output_write_all(out->fd, data, size, &done);
    out->bytes += done;
    return errnum ? output_fail(out, errnum, err) : ISSIM_OK;
}

IssimStatus output_commit(OutputFile *out, IssimError *err) {
    if (out->fd < 0)
        return issim_error_set(err, ISSIM_ERR_STATE, "cannot write %s %s: not open", out->what,
                               out->path);
    /* fsync before the rename: a crash must leave the old file or the whole new one. A device
     * or FIFO cannot be synced (EINVAL), which says nothing about the write. */
    if (out->replace && fsync(out->fd) != 0)
        return output_fail(out, errno, err);
    int fd = out->fd;
    out->fd = -1;
    if (close(fd) != 0) {
        out->fd = -1;
        return output_fail(out, errno, err);
    }
    if (out->replace && rename(out->tmp, out->path) != 0)
        return output_fail(out, errno, err);
    free(out->tmp);
    out->tmp = NULL;
    return ISSIM_OK;
}

void output_abort(OutputFile *out) {
    if (out->fd >= 0)
        close(out->fd);
    out->fd = -1;
    if (out->tmp)
        unlink(out->tmp);
    free(out->tmp);
    out->tmp = NULL;
}
