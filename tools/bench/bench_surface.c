/* issim-bench surface: nanoseconds per full evaluation of a bicubic Bezier patch (position, its
 * nine partial derivatives, the unit normal and its five derivatives: bezier_patch_evaluate) at
 * points spread over the rattleback cap of 002 App. B.1, and of the normal part alone
 * (surface_point_normal, the jets of 002 5.3). Medians of BS_REPEATS timed batches. Reference: 002
 * Table 6.1, 0.0801 ms for a bicubic Bezier patch's ten derivatives in Java on a 350 MHz
 * Pentium II. Usage: issim-bench surface. */
#include "bench.h"

#include <stdio.h>

#include "issim/surface.h"

#define BS_POINTS 1024
#define BS_BATCHES 200 /* evaluations of all points per timed repeat */
#define BS_REPEATS 9

/* A sink so the compiler keeps every evaluation. */
static volatile double bench_surface_sink;

static double time_full(const BezierPatch *patch, const double (*params)[2]) {
    double start = bench_now(), sum = 0.0;
    for (int b = 0; b < BS_BATCHES; b++)
        for (int k = 0; k < BS_POINTS; k++) {
            SurfacePoint p;
            bezier_patch_evaluate(patch, params[k][0], params[k][1], &p, NULL);
            sum += p.normal[SURFACE_TT].x;
        }
    bench_surface_sink = sum;
    return (bench_now() - start) / (BS_BATCHES * (double)BS_POINTS);
}

static double time_normal(SurfacePoint *points) {
    double start = bench_now(), sum = 0.0;
    for (int b = 0; b < BS_BATCHES; b++)
        for (int k = 0; k < BS_POINTS; k++) {
            surface_point_normal(&points[k], "bench", NULL);
            sum += points[k].normal[SURFACE_TT].x;
        }
    bench_surface_sink = sum;
    return (bench_now() - start) / (BS_BATCHES * (double)BS_POINTS);
}

int bench_surface(int argc, char **argv) {
    (void)argc;
    (void)argv;
    BezierPatch cap;
    bezier_patch_rattleback(&cap);
    static double params[BS_POINTS][2];
    static SurfacePoint points[BS_POINTS];
    for (int k = 0; k < BS_POINTS; k++) {
        /* a low-discrepancy spread over [0.05, 0.95]^2 */
        params[k][0] = 0.05 + 0.9 * ((double)k + 0.5) / BS_POINTS;
        params[k][1] = 0.05 + 0.9 * (double)((k * 618) % BS_POINTS) / BS_POINTS;
        bezier_patch_evaluate(&cap, params[k][0], params[k][1], &points[k], NULL);
    }
    double full[BS_REPEATS], normal[BS_REPEATS];
    for (int r = 0; r < BS_REPEATS; r++) {
        full[r] = time_full(&cap, params);
        normal[r] = time_normal(points);
    }
    printf("surface  bezier_patch_evaluate (x + 9 derivatives + n + 5 derivatives): %.1f ns "
           "median, %.1f ns min\n",
           1e9 * bench_quantile(full, BS_REPEATS, 0.5),
           1e9 * bench_quantile(full, BS_REPEATS, 0.0));
    printf("surface  of which surface_point_normal (jets): %.1f ns median\n",
           1e9 * bench_quantile(normal, BS_REPEATS, 0.5));
    return 0;
}
