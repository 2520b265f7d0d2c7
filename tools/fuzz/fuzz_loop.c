/* libFuzzer harness: Loop subdivision surfaces from .obj bytes (loop_mesh_load, then
 * smooth_surface_from_loop with the S-patch corners: src/surface/loop_surface.c), through an
 * in-memory regular file (memfd) as in fuzz_obj.c. The first byte chooses the subdivision levels
 * (0 to 2: deeper levels only multiply the work). A surface that builds has patches, and each
 * patch's centre evaluates to finite points or is refused with a message. The topology checks
 * (closed, 2-manifold, outward, extraordinary vertices apart) must refuse everything else without
 * a crash. Seeds: tools/fuzz/corpus/loop and assets/ (the shipped Loop meshes). */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "issim/surface.h"

static void check(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_loop: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    int levels = data[0] % 3;
    int fd = memfd_create("fuzz.obj", MFD_CLOEXEC);
    if (fd < 0) {
        perror("memfd_create");
        abort();
    }
    for (size_t done = 1; done < size;) {
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
    LoopMesh *mesh = loop_mesh_load(path, &err);
    if (mesh) {
        SmoothSurface *s =
            smooth_surface_from_loop(mesh, levels, SURFACE_EXTRAORDINARY_SPATCH, &err);
        if (s) {
            int patches = smooth_surface_patch_count(s);
            check(patches > 0, "a surface without patches");
            for (int p = 0; p < patches && p < 64; p++) {
                SurfacePoint point;
                IssimError e2 = {0};
                if (smooth_surface_evaluate(s, p, 1.0 / 3.0, 1.0 / 3.0, &point, &e2) == ISSIM_OK)
                    for (int k = 0; k < SURFACE_DERIVATIVES; k++)
                        check(isfinite(point.x[k].x) && isfinite(point.x[k].y) &&
                                  isfinite(point.x[k].z),
                              "a patch evaluates to a non-finite point");
            }
            smooth_surface_destroy(s);
        }
        loop_mesh_destroy(mesh);
    }
    check(memchr(err.message, '\0', sizeof err.message) != NULL, "message unterminated");
    close(fd);
    return 0;
}
