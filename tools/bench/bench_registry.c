/* issim-bench registry: read latency seen by a 1 kHz servo-like reader while the engine
 * publishes flat out, and the cost of a publication.
 *
 * An engine thread publishes frames of 3 bodies x 13 variables (position, quaternion, velocity,
 * angular velocity) as fast as it can, 1 ms of simulated time apart, timing every 64th
 * registry_publish. A reader thread wakes on absolute 1 ms deadlines (clock_nanosleep
 * TIMER_ABSTIME, as the haptic servo does) and times one registry_read_latest and one
 * registry_read_at 50 ms behind the copied frame with CLOCK_MONOTONIC. Usage:
 * issim-bench registry [--seconds S]. */
#include "bench.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/registry.h"

#define BR_BODIES 3
#define BR_PER_BODY 13
#define BR_VARS (BR_BODIES * BR_PER_BODY)
#define BR_DT 1e-3          /* simulated time between frames, s */
#define BR_LOOKBACK 0.050   /* read_at this far behind the newest frame, s */
#define BR_PUBLISH_EVERY 64 /* time one publication in this many */
#define BR_PUBLISH_SAMPLES (1 << 20)
#define BR_TARGET_P99_US 5.0
#define BR_TARGET_MAX_US 50.0

typedef struct BenchRegistry {
    Registry *reg;
    atomic_bool stop;
    long frames;           /* engine */
    double engine_seconds; /* engine: wall time spent publishing */
    double *publish_us;    /* engine */
    int publish_n;
    int periods;               /* reader */
    double *latest_us, *at_us; /* reader */
    int latest_n, at_n, at_missed;
} BenchRegistry;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *engine_thread(void *arg) {
    BenchRegistry *b = arg;
    double v[BR_VARS];
    long k = 0;
    int n = 0;
    double start = now_s();
    while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
        double t = (double)k * BR_DT;
        for (int i = 0; i < BR_VARS; i++)
            v[i] = t * (double)(i + 1);
        if (k % BR_PUBLISH_EVERY == 0 && n < BR_PUBLISH_SAMPLES) {
            double t0 = now_s();
            registry_publish(b->reg, t, v);
            b->publish_us[n++] = (now_s() - t0) * 1e6;
        } else {
            registry_publish(b->reg, t, v);
        }
        k++;
    }
    b->engine_seconds = now_s() - start;
    b->frames = k;
    b->publish_n = n;
    return NULL;
}

static void *reader_thread(void *arg) {
    BenchRegistry *b = arg;
    double values[BR_VARS];
    RegistryFrame f = {.values = values};
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (int p = 0; p < b->periods; p++) {
        next.tv_nsec += 1000000L;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        double t0 = now_s();
        bool ok = registry_read_latest(b->reg, &f);
        double t1 = now_s();
        if (!ok)
            continue;
        b->latest_us[b->latest_n++] = (t1 - t0) * 1e6;
        double target = f.t - BR_LOOKBACK;
        t0 = now_s();
        ok = registry_read_at(b->reg, target, &f);
        t1 = now_s();
        if (ok)
            b->at_us[b->at_n++] = (t1 - t0) * 1e6;
        else
            b->at_missed++;
    }
    return NULL;
}

/* Prints one row; returns the p99 and max through the pointers. */
static void print_row(const char *what, double *us, int n, double *p99, double *max) {
    double q50 = bench_quantile(us, n, 0.50);
    double q99 = bench_quantile(us, n, 0.99);
    double q999 = bench_quantile(us, n, 0.999);
    double qmax = n > 0 ? us[n - 1] : 0.0; /* sorted by bench_quantile */
    printf("registry  %-52s p50 %6.2f us  p99 %6.2f us  p99.9 %6.2f us  max %7.2f us  (n=%d)\n",
           what, q50, q99, q999, qmax, n);
    if (p99)
        *p99 = q99;
    if (max)
        *max = qmax;
}

int bench_registry(int argc, char **argv) {
    double seconds = 2.0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
    if (!(seconds > 0.0) || seconds > 3600.0)
        seconds = 2.0;

    IssimError err = {0};
    BenchRegistry b = {0};
    b.reg = registry_create(NULL, &err);
    if (!b.reg) {
        fprintf(stderr, "bench registry: %s\n", err.message);
        return 1;
    }
    static const char *const fields[BR_PER_BODY] = {"pos.x",  "pos.y",  "pos.z", "rot.w", "rot.x",
                                                    "rot.y",  "rot.z",  "vel.x", "vel.y", "vel.z",
                                                    "avel.x", "avel.y", "avel.z"};
    for (int body = 0; body < BR_BODIES; body++)
        for (int j = 0; j < BR_PER_BODY; j++) {
            char name[64];
            snprintf(name, sizeof name, "body%d.%s", body, fields[j]);
            if (registry_add_var(b.reg, name, "", &err) < 0) {
                fprintf(stderr, "bench registry: %s\n", err.message);
                registry_destroy(b.reg);
                return 1;
            }
        }
    b.periods = (int)(seconds * 1000.0);
    b.publish_us = malloc(sizeof *b.publish_us * BR_PUBLISH_SAMPLES);
    b.latest_us = malloc(sizeof *b.latest_us * (size_t)b.periods);
    b.at_us = malloc(sizeof *b.at_us * (size_t)b.periods);
    if (!b.publish_us || !b.latest_us || !b.at_us) {
        fprintf(stderr, "bench registry: out of memory\n");
        free(b.publish_us);
        free(b.latest_us);
        free(b.at_us);
        registry_destroy(b.reg);
        return 1;
    }

    pthread_t engine, reader;
    pthread_create(&engine, NULL, engine_thread, &b);
    /* Let the engine fill more than the look-back before the reader starts. */
    struct timespec pause = {0, 1000000L};
    while (!(registry_state_time(b.reg) > 2 * BR_LOOKBACK))
        nanosleep(&pause, NULL);
    pthread_create(&reader, NULL, reader_thread, &b);
    pthread_join(reader, NULL);
    atomic_store(&b.stop, true);
    pthread_join(engine, NULL);

    double latest_p99, latest_max, at_p99, at_max;
    print_row("read_latest (1 kHz reader, writer flat out)", b.latest_us, b.latest_n, &latest_p99,
              &latest_max);
    print_row("read_at t-50ms (1 kHz reader, writer flat out)", b.at_us, b.at_n, &at_p99, &at_max);
    char what[96];
    snprintf(what, sizeof what, "publish (%d vars, flat out, 1 in %d timed)", BR_VARS,
             BR_PUBLISH_EVERY);
    print_row(what, b.publish_us, b.publish_n, NULL, NULL);
    printf("registry  frames published: %ld in %.2f s = %.3g frames/s (history %d frames)\n",
           b.frames, b.engine_seconds, (double)b.frames / b.engine_seconds,
           registry_desc_default().history_frames);
    if (b.latest_n < b.periods || b.at_missed > 0)
        printf("registry  reader: %d of %d read_latest succeeded, %d read_at found no frame\n",
               b.latest_n, b.periods, b.at_missed);
    double p99 = fmax(latest_p99, at_p99), max = fmax(latest_max, at_max);
    printf("registry  target read p99 < %.0f us: %s (%.2f us); read max < %.0f us: %s (%.2f us)\n",
           BR_TARGET_P99_US, p99 < BR_TARGET_P99_US ? "met" : "NOT MET", p99, BR_TARGET_MAX_US,
           max < BR_TARGET_MAX_US ? "met" : "NOT MET", max);

    free(b.publish_us);
    free(b.latest_us);
    free(b.at_us);
    registry_destroy(b.reg);
    return 0;
}
