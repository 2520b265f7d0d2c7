/* libFuzzer harness: the Wavefront .obj readers, hull_load_obj (vertices -> quickhull) and
 * trimesh_load_obj (vertices and faces -> triangle mesh and its bounding-volume tree), on the
 * same arbitrary bytes. They only read files, so the input goes into an in-memory file
 * (memfd) opened by its /proc/self/fd path: a regular file, as obj_file_open requires. What
 * loads is checked for consistency (indices in range, every triangle found by a query over the
 * mesh bounds). Seeds: tools/fuzz/corpus/obj (the .obj files of assets/ and small
 * hand-written cases). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collision/collision_internal.h"
#include "issim/collision.h"

static void check(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_obj: %s\n", what);
        abort();
    }
}

static void check_hull(const Hull *h) {
    check(h->vertex_count >= 4 && h->face_count >= 4, "hull with fewer than 4 vertices/faces");
    for (int i = 0; i < h->face_count; i++) {
        const HullFace *f = &h->faces[i];
        check(f->count >= 3 && f->first >= 0, "hull face with fewer than 3 vertices");
        for (int k = 0; k < f->count; k++) {
            int v = h->face_vertices[f->first + k];
            check(v >= 0 && v < h->vertex_count, "hull face vertex index out of range");
        }
    }
}

static void check_mesh(const TriMesh *m) {
    int n = trimesh_triangle_count(m);
    check(n > 0, "mesh without triangles");
    for (int i = 0; i < n; i++) {
        Vec3 c[3];
        trimesh_triangle(m, i, c);
    }
    int *found = malloc((size_t)n * sizeof *found);
    check(found != NULL, "out of memory");
    int total = trimesh_query(m, trimesh_bounds(m), found, n);
    check(total == n, "a query over the mesh bounds misses triangles");
    for (int i = 0; i < n; i++)
        check(found[i] >= 0 && found[i] < n, "query returned a triangle index out of range");
    free(found);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("fuzz.obj", MFD_CLOEXEC);
    if (fd < 0) {
        perror("memfd_create");
        abort();
    }
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            perror("write");
            abort();
        }
        done += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

    IssimError err = {0};
    Hull *hull = hull_load_obj(path, &err);
    if (hull) {
        check_hull(hull);
        hull_destroy(hull);
    }
    TriMesh *mesh = trimesh_load_obj(path, &err);
    if (mesh) {
        check_mesh(mesh);
        trimesh_destroy(mesh);
    }
    close(fd);
    return 0;
}
