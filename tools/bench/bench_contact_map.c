/* issim-bench contact_map: the CPU cost of one contact step of the contact_map model (four force
 * evaluations of an RK4 step and the sample's commit) against the map's length N, for the direct
 * convolution sum and the partitioned FFT (issue targets: the fast path under 1 us per step at
 * N = 4096 and within 2x over N = 64 ... 65536; the direct sum linear in N). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "issim/contact.h"
#include "issim/contactmap.h"

#define BCM_PERIOD 1e-6

#define BCM_REPEATS 15

typedef struct BenchContact {
    const ContactModelClass *model;
    ContactParams params;
    ContactHistory history;
    long long step;
    double sink;
} BenchContact;

/* One contact step: the four force evaluations of an RK4 step, then the sample's commit. */
static void contact_step(BenchContact *b) {
    double t = (double)++b->step * BCM_PERIOD;
    for (int s = 0; s < 4; s++) {
        ContactKinematics ks = {.depth = 1e-4 * (1.5 + sin(3e3 * (t - 0.25 * s * BCM_PERIOD))),
                                .t = t - 0.25 * s * BCM_PERIOD};
        b->sink += b->model->force(&b->params, &b->history, &ks).normal;
    }
    ContactKinematics kc = {.depth = 1e-4 * (1.5 + sin(3e3 * t)), .t = t};
    b->model->commit(&b->params, &b->history, &kc);
}

/* The thread's CPU time, s: on a machine shared with other processes, wall time would count the
 * time the thread waits for a core. */
static double cpu_time(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The slowest single contact step, ns: partitioned convolutions do a level's transforms once per
 * block, all levels together at multiples of the largest block (at most 4096 samples, so a
 * window of 8192 steps holds one). Each step timed by the wall clock, the window's slowest kept;
 * the smallest of BCM_REPEATS windows' (a window's maximum also catches a preemption). */
static double slowest_step_ns(BenchContact *b) {
    double best = INFINITY;
    for (int r = 0; r < BCM_REPEATS; r++) {
        double worst = 0.0;
        for (int n = 0; n < 8192; n++) {
            double start = issim_wall_time();
            contact_step(b);
            worst = fmax(worst, issim_wall_time() - start);
        }
        best = fmin(best, worst * 1e9);
    }
    return best;
}

/* CPU ns per contact step after N steps of warm-up (the sum then runs over the whole map): the
 * fastest of BCM_REPEATS runs of `steps` steps, since other processes on the machine can only
 * add time (through the caches and the shared core). `slowest` (unless NULL): the slowest single
 * step's wall ns. */
static double ns_per_step(ContactMap *map, ContactMapConvolution kind, int steps, double *slowest) {
    BenchContact b = {.model = contact_model_class(CONTACT_MODEL_CONTACT_MAP),
                      .params = {.model = CONTACT_MODEL_CONTACT_MAP,
                                 .stiffness = 1e7,
                                 .map_a = map,
                                 .map_rule = CONTACT_MAP_TRAPEZOID,
                                 .map_convolution = kind}};
    ContactKinematics k = {.depth = 0.0, .normal = {0, 0, 1}, .effective_mass = 1.0};
    size_t bytes = b.model->state_size(&b.params, &k);
    b.history = (ContactHistory){.state = calloc(1, bytes), .state_bytes = bytes};
    b.model->begin(&b.params, &b.history, &k);
    for (int n = 0; n < contact_map_samples(map); n++)
        contact_step(&b);
    double best = INFINITY;
    for (int r = 0; r < BCM_REPEATS; r++) {
        double start = cpu_time();
        for (int n = 0; n < steps; n++)
            contact_step(&b);
        best = fmin(best, (cpu_time() - start) / steps * 1e9);
    }
    if (slowest)
        *slowest = slowest_step_ns(&b);
    free(b.history.state);
    if (b.sink == 12345.678) /* keeps the loop */
        printf("?");
    return best;
}

/* `issim-bench contact_map [N [fft]]`: one map length only, or only its fast path (for a
 * profiler); without arguments the whole table. */
int bench_contact_map(int argc, char **argv) {
    int only = argc > 1 ? atoi(argv[1]) : 0;
    bool fft_only = argc > 2 && strcmp(argv[2], "fft") == 0;
    printf("\n## contact_map: one contact step (4 force evaluations + the sample) against the "
           "map's length N\n");
    printf("%8s %14s %14s %10s %16s\n", "N", "direct ns", "fft ns", "fft/direct", "fft slowest ns");
    double fft_min = INFINITY, fft_max = 0.0, fft_4096 = 0.0;
    int crossover = 0;
    for (int n = only > 0 ? only : 64; n <= (only > 0 ? only : 65536); n *= 2) {
        ContactMap *map = NULL;
        IssimError err = {0};
        if (contact_map_transient("bench", 1e7, 5e7, 2e-5, BCM_PERIOD, n, &map, &err) != ISSIM_OK) {
            fprintf(stderr, "contact_map: %s\n", err.message);
            return 1;
        }
        int steps = n >= 16384 ? 4000 : 20000;
        double direct = fft_only ? NAN : ns_per_step(map, CONTACT_MAP_CONV_DIRECT, steps, NULL);
        double slowest = NAN;
        double fft =
            ns_per_step(map, CONTACT_MAP_CONV_FFT, 4 * n > steps ? 4 * n : steps, &slowest);
        fft_min = fmin(fft_min, fft);
        fft_max = fmax(fft_max, fft);
        if (n == 4096)
            fft_4096 = fft;
        if (!crossover && fft < direct && contact_map_conv_uses_fft(map, CONTACT_MAP_CONV_FFT))
            crossover = n;
        printf("%8d %14.1f %14.1f %10.3f %16.0f\n", n, direct, fft, fft / direct, slowest);
        contact_map_release(map);
    }
    if (only > 0) /* the verdicts need the whole table */
        return 0;
    printf("fft: %.1f ns at N = 4096 (target < 1000: %s); largest / smallest over N = 64 ... "
           "65536: %.2f (target < 2: %s); first N where fft beats direct: %d (auto switches "
           "above %d)\n",
           fft_4096, fft_4096 < 1000 ? "met" : "MISSED", fft_max / fft_min,
           fft_max / fft_min < 2 ? "met" : "MISSED", crossover, CONTACT_MAP_FFT_FROM);
    return 0;
}
