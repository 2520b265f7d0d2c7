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

bool obj_file_open(const char *path, ObjFile *file, IssimError *err) {
    *file = (ObjFile){0};
    char *text = NULL;
    size_t size = 0;
    if (issim_read_file(path, OBJ_FILE_MAX_BYTES, "hull or mesh file", &text, &size, err) !=
        ISSIM_OK)
        return false;
    /* The parsers read lines from a stream; an empty file is one empty "line". */
    file->f = fmemopen(text, size > 0 ? size : 1, "r");
    if (!file->f) {
        free(text);
        issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory", path);
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
