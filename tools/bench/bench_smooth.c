/* issim-bench smooth: Kry's contact evolution (002 6.1, V15). Microseconds per full contact-
 * coordinate acceleration (smooth_contact_dynamics: both surfaces' ten derivatives, frames, H,
 * H_dot q_dot and the 6 x 6 solve) and per contact matrix H alone, Bezier on Bezier (the
 * rattleback cap on its floor), at states spread over the cap; and the rattleback scene run
 * headless through the session (real-time factor). Reference: 1.2 ms per acceleration and
 * 0.35 ms per H in Java on a 350 MHz Pentium II (002 6.1). Medians of repeated batches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "issim/io.h"
#include "issim/sim.h"
#include "issim/smooth_contact.h"

#define SM_STATES 256
#define SM_BATCHES 100
#define SM_REPEATS 9

static volatile double bench_smooth_sink;

typedef struct SmoothBench {
    SmoothContactSystem sys;
    SmoothContactState states[SM_STATES];
} SmoothBench;

static double time_dynamics(const SmoothBench *b, bool matrix_only) {
    double start = bench_now(), sum = 0.0;
    Vec3 gravity = vec3(0, 0, -5 * 9.81);
    for (int k = 0; k < SM_BATCHES; k++)
        for (int i = 0; i < SM_STATES; i++) {
            if (matrix_only) {
                double h[6][SMOOTH_COORDINATES];
                smooth_contact_matrix(&b->sys, &b->states[i], h, NULL);
                sum += h[5][4];
            } else {
                SmoothContactDynamics d;
                smooth_contact_dynamics(&b->sys, &b->states[i], gravity, vec3(0, 0, 0), &d, NULL);
                sum += d.accel[4];
            }
        }
    bench_smooth_sink = sum;
    return (bench_now() - start) / (SM_BATCHES * (double)SM_STATES);
}

static double median_of(const SmoothBench *b, bool matrix_only) {
    double samples[SM_REPEATS];
    for (int r = 0; r < SM_REPEATS; r++)
        samples[r] = time_dynamics(b, matrix_only);
    return bench_quantile(samples, SM_REPEATS, 0.5);
}

static int bench_rattleback_scene(void) {
    const char *root = getenv("ISSIM_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/scenes/rattleback.lua", root ? root : ".");
    ThingDb *db = NULL;
    IssimError err;
    if (scene_load_file(path, NULL, &db, &err) != ISSIM_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    SimOptions o = sim_options_default();
    o.until = 40.0;
    o.quiet = true;
    Sim *sim = sim_create_from_db(db, "rattleback.lua", &o, &err);
    thingdb_destroy(db);
    if (!sim) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    SimSummary *s = calloc(1, sizeof *s);
    double w0 = issim_wall_time();
    IssimStatus st = sim_run_headless(sim, s, &err);
    double wall = issim_wall_time() - w0;
    if (st == ISSIM_OK)
        printf("smooth  rattleback scene headless: %.0f s simulated (rk4, dt 1 ms) in %.3f s "
               "wall: %.0fx real time, %.1f us per step (target: 100x)\n",
               o.until, wall, o.until / wall, 1e6 * wall / (double)s->engine.steps);
    else
        fprintf(stderr, "bench: %s\n", err.message);
    free(s);
    sim_destroy(sim);
    return st == ISSIM_OK ? 0 : 1;
}

int bench_smooth(int argc, char **argv) {
    (void)argc;
    (void)argv;
    BezierPatch cap, floor;
    bezier_patch_rattleback(&cap);
    bezier_patch_rattleback_floor(&floor);
    SmoothBench *b = calloc(1, sizeof *b);
    b->sys = (SmoothContactSystem){
        .surface_a = smooth_surface_from_bezier(&cap, NULL),
        .surface_b = smooth_surface_from_bezier(&floor, NULL),
        .mass = 5,
        .inertia = vec3(1, 10, 10),
        .orient_b = quat_identity(),
        .friction = {.kinetic = 0.3, .slip_tolerance = 0.01, .spin_tolerance = 0.01}};
    for (int i = 0; i < SM_STATES; i++) { /* a 16 x 16 grid over the cap, turning and moving */
        double s = 0.2 + 0.6 * (i % 16) / 15.0, t = 0.2 + 0.6 * (i / 16) / 15.0;
        b->states[i] = (SmoothContactState){.q = {s, t, 0.5, 0.5, 0.1 * i},
                                            .rate = {0.1, -0.2, 0.05, 0.02, -1.0}};
    }
    double accel = median_of(b, false), h = median_of(b, true);
    printf("smooth  one contact-coordinate acceleration, Bezier on Bezier: %.3f us (target 2 us; "
           "002 6.1: 1.2 ms in Java, 350 MHz Pentium II)\n",
           1e6 * accel);
    printf("smooth  contact matrix H alone: %.3f us (002 6.1: 0.35 ms)\n", 1e6 * h);
    smooth_surface_destroy((SmoothSurface *)b->sys.surface_a);
    smooth_surface_destroy((SmoothSurface *)b->sys.surface_b);
    free(b);
    return bench_rattleback_scene();
}
