/* libFuzzer harness: the contact-map reader (contact_map_read, docs/contact-map-format.md) on
 * arbitrary bytes, through an in-memory regular file (memfd) as in fuzz_obj.c. A map that loads
 * is checked for the format's promises (counts in range, unit normals, finite samples), written
 * back and read again to the same samples, and a few samples of its convolution are run, direct
 * and FFT, which must agree. Seeds: tools/fuzz/corpus/map (hand-written cases) and assets/maps. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "issim/contactmap.h"

static void check(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_map: %s\n", what);
        abort();
    }
}

static void check_map(const ContactMap *map) {
    int n = contact_map_samples(map), nodes = contact_map_node_count(map);
    check(n >= 1 && n <= CONTACT_MAP_MAX_SAMPLES, "samples out of range");
    check(nodes >= 1 && nodes <= CONTACT_MAP_MAX_NODES, "nodes out of range");
    check(contact_map_period(map) > 0.0 && isfinite(contact_map_period(map)), "bad period");
    for (int j = 0; j < nodes; j++) {
        Vec3 v = contact_map_node(map, j)->normal;
        check(fabs(vec3_norm(v) - 1.0) < 1e-9, "normal not unit");
        const double *h = contact_map_step(map, j);
        for (int k = 0; k < n; k++)
            check(isfinite(h[k]), "non-finite sample");
    }
}

static void check_round_trip(const ContactMap *map) {
    char path[] = "/tmp/fuzz-map-XXXXXX";
    int fd = mkstemp(path);
    check(fd >= 0, "mkstemp");
    close(fd);
    IssimError err = {0};
    check(contact_map_write(map, path, &err) == ISSIM_OK, "write failed");
    ContactMap *back = NULL;
    IssimStatus s = contact_map_read(path, &back, &err);
    unlink(path);
    if (s != ISSIM_OK)
        fprintf(stderr, "fuzz_map: re-read: %s\n", err.message);
    check(s == ISSIM_OK, "a written map does not read back");
    size_t bytes = sizeof(double) * (size_t)contact_map_samples(map);
    for (int j = 0; j < contact_map_node_count(map); j++)
        check(memcmp(contact_map_step(map, j), contact_map_step(back, j), bytes) == 0,
              "samples changed through write and read");
    contact_map_release(back);
}

static void check_convolution(const ContactMap *map) {
    ContactMapSource src = {.map = map, .node = 0, .second = 0, .weight = 1.0};
    size_t nd = contact_map_conv_doubles(map, CONTACT_MAP_CONV_DIRECT);
    size_t nf = contact_map_conv_doubles(map, CONTACT_MAP_CONV_FFT);
    double *sd = calloc(nd, sizeof(double)), *sf = calloc(nf, sizeof(double));
    check(sd && sf, "out of memory");
    contact_map_conv_init(map, CONTACT_MAP_CONV_DIRECT, sd);
    contact_map_conv_init(map, CONTACT_MAP_CONV_FFT, sf);
    /* Rounding of either sum is bounded by a small multiple of eps ||w||_1 max|x| (|x| <= 1). */
    const double *w = contact_map_history_weights(map, 0, CONTACT_MAP_TRAPEZOID);
    double l1 = 0.0, diff = 0.0;
    for (int m = 0; m < contact_map_samples(map); m++)
        l1 += fabs(w[m]);
    for (int k = 0; k < 300; k++) {
        double x = sin(0.37 * k);
        double yd = contact_map_conv_push(&src, CONTACT_MAP_CONV_DIRECT, sd, x);
        double yf = contact_map_conv_push(&src, CONTACT_MAP_CONV_FFT, sf, x);
        diff = fmax(diff, fabs(yd - yf));
    }
    if (isfinite(l1) && l1 < 1e290)
        check(diff <= 1e-10 * l1, "fft convolution differs from the direct sum");
    free(sd);
    free(sf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("fuzz.map", MFD_CLOEXEC);
    check(fd >= 0, "memfd_create");
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, data + done, size - done);
        check(n > 0, "write");
        done += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    IssimError err = {0};
    ContactMap *map = NULL;
    if (contact_map_read(path, &map, &err) == ISSIM_OK) {
        check_map(map);
        /* Keep each input fast: the round trip and the convolution on modest maps only. */
        if ((long)contact_map_samples(map) * contact_map_node_count(map) <= 100000) {
            check_round_trip(map);
            check_convolution(map);
        }
        contact_map_release(map);
    } else {
        check(map == NULL && err.message[0] != '\0', "failure without a message");
    }
    close(fd);
    return 0;
}
