/* issim-bench surface: nanoseconds per full evaluation of a bicubic Bezier patch (position, its
 * nine partial derivatives, the unit normal and its five derivatives: bezier_patch_evaluate) at
 * points spread over the rattleback cap of 002 App. B.1, and of the normal part alone
 * (surface_point_normal, the jets of 002 5.3), and of a regular Loop patch (loop_patch_evaluate:
 * Stam's box-spline basis through jets, same outputs). Medians of BS_REPEATS timed batches.
 * Reference: 002 Table 6.1, 0.0801 ms for a bicubic Bezier patch's ten derivatives in Java on a 350
 * MHz Pentium II. Then S-patches of 3 to 7 sides and of 10 (002 Table 6.1's largest) (002 5.2;
 * smooth_surface_evaluate on the S-patch replacing a bipyramid's apex, or an octahedron's vertex
 * for 4 sides, after 2 levels of subdivision; same outputs), and a regular patch of such a surface
 * (its power-basis form). Usage: issim-bench surface. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* Median nanoseconds per smooth_surface_evaluate of `patch` at the points `params`. */
static double time_surface_patch(const SmoothSurface *surface, int patch,
                                 const double (*params)[2]) {
    double times[BS_REPEATS];
    for (int r = 0; r < BS_REPEATS; r++) {
        double start = bench_now(), sum = 0.0;
        for (int b = 0; b < BS_BATCHES / 4; b++)
            for (int k = 0; k < BS_POINTS; k++) {
                SurfacePoint p;
                smooth_surface_evaluate(surface, patch, params[k][0], params[k][1], &p, NULL);
                sum += p.normal[SURFACE_TT].x;
            }
        bench_surface_sink = sum;
        times[r] = (bench_now() - start) / (BS_BATCHES / 4 * (double)BS_POINTS);
    }
    return 1e9 * bench_quantile(times, BS_REPEATS, 0.5);
}

/* Nanoseconds per evaluation of an S-patch of `sides` sides at points spread over its domain
 * (NAN when there is none), and of the surface's regular patch 0 (*regular, Nullable). */
static double time_spatch(int sides, double *regular) {
    LoopMesh *mesh = loop_mesh_bipyramid(sides, NULL);
    SmoothSurface *surface =
        mesh ? smooth_surface_from_loop(mesh, 2, SURFACE_EXTRAORDINARY_SPATCH, NULL) : NULL;
    loop_mesh_destroy(mesh);
    int patch = -1;
    for (int p = 0; surface && p < smooth_surface_patch_count(surface) && patch < 0; p++) {
        const SurfaceDomain *d = smooth_surface_domain(surface, p);
        if (d->count == sides && fabs(d->corner[0][1]) < 1e-12 && d->corner[0][0] > 0.0)
            patch = p; /* an S-patch: corner 0 on the +s axis */
    }
    if (patch < 0) {
        smooth_surface_destroy(surface);
        return NAN;
    }
    static double params[BS_POINTS][2];
    const SurfaceDomain *d = smooth_surface_domain(surface, patch);
    for (int k = 0; k < BS_POINTS; k++) { /* 0.9 of the way to the corners, spread in angle */
        double radius = 0.9 * d->corner[0][0] * sqrt((k + 0.5) / BS_POINTS);
        double angle = 2.0 * M_PI * (double)((k * 618) % BS_POINTS) / BS_POINTS;
        params[k][0] = radius * cos(angle) * cos(M_PI / sides);
        params[k][1] = radius * sin(angle) * cos(M_PI / sides);
    }
    double ns = time_surface_patch(surface, patch, (const double(*)[2])params);
    if (regular) { /* patch 0 is a regular face: points of its triangle */
        for (int k = 0; k < BS_POINTS; k++) {
            params[k][0] = 0.9 * ((double)k + 0.5) / BS_POINTS;
            params[k][1] = (0.9 - params[k][0]) * (double)((k * 618) % BS_POINTS) / BS_POINTS;
        }
        *regular = time_surface_patch(surface, 0, (const double(*)[2])params);
    }
    smooth_surface_destroy(surface);
    return ns;
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
    double regular = NAN;
    for (int sides = 3; sides <= 10; sides += sides < 7 ? 1 : 3) { /* 3 .. 7, and 002's 10 */
        double ns = time_spatch(sides, sides == 3 ? &regular : NULL);
        if (isnan(ns)) /* valence 6 is regular: no 6-sided S-patch arises */
            printf("surface  S-patch of %d sides: none (valence %d is regular)\n", sides, sides);
        else
            printf("surface  S-patch of %d sides (smooth_surface_evaluate, same outputs): %.1f ns "
                   "median\n",
                   sides, ns);
    }
    printf("surface  regular patch of a Loop surface (smooth_surface_evaluate: power basis cached "
           "per face, same outputs): %.1f ns median\n",
           regular);
    return 0;
}
