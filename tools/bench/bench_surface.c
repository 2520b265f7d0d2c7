/* issim-bench surface: nanoseconds per full evaluation of a bicubic Bezier patch (position, its
 * nine partial derivatives, the unit normal and its five derivatives: bezier_patch_evaluate) at
 * points spread over the rattleback cap of 002 App. B.1, and of the normal part alone
 * (surface_point_normal, the jets of 002 5.3), and of a regular Loop patch (loop_patch_evaluate:
 * Stam's box-spline basis through jets, same outputs). Medians of BS_REPEATS timed batches.
 * Reference: 002 Table 6.1, 0.0801 ms for a bicubic Bezier patch's ten derivatives in Java on a 350
 * MHz Pentium II. Usage: issim-bench surface. */
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

/* A regular Loop patch: the 12 vertices of Stam's layout on a unit triangular lattice, lifted. */
static void lattice_patch(Vec3 control[LOOP_PATCH_VERTICES]) {
    static const double AXIAL[LOOP_PATCH_VERTICES][2] = {
        {-0.5, 1},  {0.5, 1},  {-1, 0},   {0, 0},   {1, 0},  {-1.5, -1},
        {-0.5, -1}, {0.5, -1}, {1.5, -1}, {-1, -2}, {0, -2}, {1, -2}};
    for (int i = 0; i < LOOP_PATCH_VERTICES; i++) {
        double x = AXIAL[i][0], y = 0.8660254037844386 * AXIAL[i][1];
        control[i] = vec3(x, y, -0.1 * (x * x + 2.0 * y * y));
    }
}

static double time_loop(const Vec3 *control, const double (*params)[2]) {
    double start = bench_now(), sum = 0.0;
    for (int b = 0; b < BS_BATCHES; b++)
        for (int k = 0; k < BS_POINTS; k++) {
            SurfacePoint p;
            /* fold the square's points into the triangle s + t <= 1 */
            double s = params[k][0], t = params[k][1];
            if (s + t > 1.0)
                s = 1.0 - s, t = 1.0 - t;
            loop_patch_evaluate(control, s, t, "bench", &p, NULL);
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
    Vec3 lattice[LOOP_PATCH_VERTICES];
    lattice_patch(lattice);
    double full[BS_REPEATS], normal[BS_REPEATS], loop[BS_REPEATS];
    for (int r = 0; r < BS_REPEATS; r++) {
        full[r] = time_full(&cap, params);
        normal[r] = time_normal(points);
        loop[r] = time_loop(lattice, params);
    }
    printf("surface  bezier_patch_evaluate (x + 9 derivatives + n + 5 derivatives): %.1f ns "
           "median, %.1f ns min\n",
           1e9 * bench_quantile(full, BS_REPEATS, 0.5),
           1e9 * bench_quantile(full, BS_REPEATS, 0.0));
    printf("surface  of which surface_point_normal (jets): %.1f ns median\n",
           1e9 * bench_quantile(normal, BS_REPEATS, 0.5));
    printf("surface  loop_patch_evaluate (regular Loop patch, same outputs): %.1f ns median\n",
           1e9 * bench_quantile(loop, BS_REPEATS, 0.5));
    return 0;
}
