/* issim-bench: `issim-bench all | engine | registry | collision | contact | contact_map | dynamics
 * | lcp | surface | display | haptics | mapgen`. Run by `make bench` (`all` leaves out haptics,
 * which starts the device simulator and runs about 30 s, and mapgen, about a minute of finite
 * elements). */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/core.h"
#include "issim/math.h"

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_quantile(double *samples, int n, double q) {
    if (n <= 0)
        return 0.0;
    qsort(samples, (size_t)n, sizeof *samples, compare_double);
    int k = (int)(q * (double)n);
    if (k >= n)
        k = n - 1;
    return samples[k];
}

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    linalg_init(); /* one BLAS thread, OpenBLAS's pool stopped (src/math/linalg.c) */
    const char *which = argc > 1 ? argv[1] : "all";
    printf("# issim-bench %s\n", ISSIM_VERSION);
    if (strcmp(which, "engine") == 0)
        return bench_engine(argc - 1, argv + 1);
    if (strcmp(which, "registry") == 0)
        return bench_registry(argc - 1, argv + 1);
    if (strcmp(which, "collision") == 0)
        return bench_collision(argc - 1, argv + 1);
    if (strcmp(which, "dynamics") == 0)
        return bench_dynamics(argc - 1, argv + 1);
    if (strcmp(which, "contact") == 0)
        return bench_contact(argc - 1, argv + 1);
    if (strcmp(which, "contact_map") == 0)
        return bench_contact_map(argc - 1, argv + 1);
    if (strcmp(which, "haptics") == 0)
        return bench_haptics(argc - 1, argv + 1);
    if (strcmp(which, "lcp") == 0)
        return bench_lcp(argc - 1, argv + 1);
    if (strcmp(which, "surface") == 0)
        return bench_surface(argc - 1, argv + 1);
    if (strcmp(which, "smooth") == 0)
        return bench_smooth(argc - 1, argv + 1);
    if (strcmp(which, "display") == 0)
        return bench_display(argc - 1, argv + 1);
    if (strcmp(which, "mapgen") == 0)
        return bench_mapgen(argc - 1, argv + 1);
    if (strcmp(which, "python") == 0)
        return bench_python(argc - 1, argv + 1); /* a minute of Python: not part of "all" */
    if (strcmp(which, "sphere_pile") == 0 || strcmp(which, "pile") == 0 ||
        strcmp(which, "pgs") == 0)
        return bench_piles(argc - 1, argv + 1); /* long: not part of "all" */
    if (strcmp(which, "all") == 0) {
        int rc = bench_engine(argc - 1, argv + 1);
        rc |= bench_registry(argc - 1, argv + 1);
        rc |= bench_collision(argc - 1, argv + 1);
        rc |= bench_contact(argc - 1, argv + 1);
        rc |= bench_contact_map(argc - 1, argv + 1);
        rc |= bench_dynamics(argc - 1, argv + 1);
        rc |= bench_lcp(argc - 1, argv + 1);
        rc |= bench_surface(argc - 1, argv + 1);
        rc |= bench_smooth(argc - 1, argv + 1);
        return rc | bench_display(argc - 1, argv + 1);
    }
    fprintf(
        stderr,
        "usage: issim-bench "
        "[all|engine|registry|collision|contact|contact_map|dynamics|lcp|surface|smooth|display|"
        "haptics|mapgen|python [STEPS [RUNS]]|sphere_pile [N ...]|pgs [N]|pile [COHERENCE ...] "
        "[--seconds=S] [--friction=MU]]\n");
    return 2;
}
