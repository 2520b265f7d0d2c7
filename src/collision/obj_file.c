/* Opening .obj assets (hull_file, mesh_file) named by a scene, which may name anything: a device
 * that never ends (/dev/zero) would grow memory without bound and a FIFO nobody writes would
 * block forever. Only regular files of known, bounded size are read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collision_internal.h"

/* Reads exactly size bytes (fewer if the file shrank meanwhile); returns the count, -1 on error. */
static long long read_known_size(int fd, char *buf, size_t size) {
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (long long)got;
}

static bool check_regular(int fd, const char *path, off_t *size, IssimError *err) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
        issim_error_set(err, ISSIM_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        issim_error_set(err, ISSIM_ERR_IO,
                        "%s: not a regular file (hull and mesh files must be regular files, not "
                        "devices, FIFOs or directories)",
                        path);
        return false;
    }
    if (st.st_size > OBJ_FILE_MAX_BYTES) {
        issim_error_set(err, ISSIM_ERR_IO,
                        "%s: %lld bytes is over the %d MiB limit of hull and mesh files "
                        "(OBJ_FILE_MAX_BYTES)",
                        path, (long long)st.st_size, OBJ_FILE_MAX_BYTES >> 20);
        return false;
    }
    *size = st.st_size;
    return true;
}

bool obj_file_open(const char *path, ObjFile *file, IssimError *err) {
    *file = (ObjFile){0};
    /* O_NONBLOCK: opening a FIFO for reading must not wait for a writer before fstat sees it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        issim_error_set(err, ISSIM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    off_t size = 0;
    bool ok = check_regular(fd, path, &size, err);
    char *text = ok ? malloc((size_t)size + 1) : NULL;
    if (ok && !text) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory", path);
        ok = false;
    }
    long long got = ok ? read_known_size(fd, text, (size_t)size) : 0;
    if (ok && got < 0) {
        issim_error_set(err, ISSIM_ERR_IO, "%s: read error: %s", path, strerror(errno));
        ok = false;
    }
    close(fd);
    if (ok) {
        text[got] = '\0';
        /* The parsers read lines from a stream; an empty file is one empty "line". */
        file->f = fmemopen(text, got > 0 ? (size_t)got : 1, "r");
        if (!file->f) {
            issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory", path);
            ok = false;
        }
    }
    if (!ok) {
        free(text);
        return false;
    }
    file->text = text;
    return true;
}

void obj_file_close(ObjFile *file) {
    if (file->f)
        fclose(file->f);
    free(file->text);
    *file = (ObjFile){0};
}
