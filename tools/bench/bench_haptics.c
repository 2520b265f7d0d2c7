/* issim-bench haptics: the haptic servo's figures (issue 6 targets).
 *
 *  1. computation per servo period (device read from a playback file, kinematics, a PD wall with
 *     friction and correlated texture, the coupling read from the registry, limits, D/A):
 *     target < 20 us;
 *  2. servo wake-up lateness at 1 kHz and 4 kHz, with and without SCHED_FIFO, while the engine
 *     thread runs pantograph_push.lua interactively, a display-like thread burns 10 ms of CPU
 *     every 16 ms, and the simulated pantograph (its own process) streams over a pty: target
 *     p99 < 150 us at 1 kHz with FIFO;
 *  3. round trip through the simulated device: command written -> a state frame echoing its
 *     sequence number read back;
 *  4. engine stall -> zero coupling force at the handle (what the servo writes to the D/A):
 *     target < 50 ms.
 * Usage: issim-bench haptics [--seconds S] (per lateness configuration, default 5).
 *
 * issim-bench haptics local [--seconds S]: the local models' targets (issue 30): a servo period
 * with 4 contacts' local models, one a 4096-sample contact map (mean < 20 us, max < 50 us; timed
 * under SCHED_FIFO when permitted, with the load, the servo's model loop alone and each law
 * alone), and the latency from a model's publication to the servo's copy (< one engine step +
 * 100 us).
 *
 * issim-bench haptics rates [--seconds S]: the servo at 4 and 10 kHz (SCHED_FIFO when permitted)
 * on pantograph_push_local.lua with its engine thread and the simulated pantograph, and no load
 * of its own: run it beside the GUI drawing a scene; /proc/loadavg is printed before and after
 * each rate.
 *
 * issim-bench haptics traces [PREFIX]: internal friction's force-depth loop and a contact map's
 * transient as the local-model path renders them, tables and plots PREFIX-if / PREFIX-map
 * (default haptics-local).
 *
 * issim-bench haptics zwidth [--png FILE] [--subcount [--memory S] [--lead]] [--delayed]: Colgate
 * and Brown's Z-width
 * on the simulated device
 * (tools/pantosim/pantosim_zwidth.h, lockstep in simulated time, so the figures do not depend
 * on the machine's load): for each wall damping, the largest PD-wall stiffness that stays
 * stable at 1, 4 and 10 kHz, with and without the passivity controller. Stable (defined
 * precisely in pantosim_zwidth.h): after the scripted hand's push into the wall, no device
 * fault, and over the last 0.5 s of a 1.5 s trial neither encoder moves by more than one count.
 * The stiffness grid is 100 N/m * 1.25^i up to 1 MN/m; a figure is the last grid point before
 * the first unstable one. The table goes to stdout, the plot to FILE (default zwidth.png, by
 * gnuplot) with the table beside it (FILE with .dat). --subcount: the servo's position and
 * velocity from the observer below one count (HapticServoDesc.subcount, memory S seconds);
 * --delayed: each command reaches the motors a period late, as over the simulator's link;
 * --lead: the observer renders where the handle will be then.
 * --contact-model [--law LAW] [--scene FILE]: the wall is the contact pair proxy_wall of FILE
 * (default scenes/pantograph_contact_wall.lua), a real Engine of the scene stepped in lockstep
 * with the servo and the contact rendered as the local model the engine publishes; one table at
 * 1 kHz, columns counts, counts + controller, observer, observer + controller, commands a period
 * late with the counts and with the observer a period ahead; rows the pair's damping (LAW
 * hunt_crossley: exponent 1 and rows of its alpha, s/m). */
#include "bench.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#include "issim/contact.h"
#include "issim/contactmap.h"
#include "issim/engine.h"
#include "issim/haptics_device.h"
#include "issim/haptics_local.h"
#include "issim/haptics_pantograph.h"
#include "issim/haptics_render.h"
#include "issim/haptics_servo.h"
#include "issim/sim.h"
#include "pantosim_zwidth.h"

static void nap(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static Registry *proxy_registry(void) {
    RegistryDesc rd = registry_desc_default();
    rd.history_frames = 256;
    Registry *reg = registry_create(&rd, NULL);
    const char *names[10] = {"p.pos.x",    "p.pos.y",    "p.pos.z", "p.orient.w", "p.orient.x",
                             "p.orient.y", "p.orient.z", "p.vel.x", "p.vel.y",    "p.vel.z"};
    for (int i = 0; i < 10; i++)
        registry_add_var(reg, names[i], "", NULL);
    return reg;
}

/* Couples d to the proxy "p" of proxy_registry(). No engine reads the HANDLE slot here, so the
 * body id only has to be non-null. */
static void couple_to_p(HapticServoDesc *d) {
    issim_strlcpy(d->coupling.proxy, "p", sizeof d->coupling.proxy);
    d->coupling.proxy_body = engine_body_id_pack((EngineBodyId){0, 1});
}

static HapticServoDesc edge_desc(const PantographConfig *c) {
    HapticServoDesc d = haptic_servo_desc_default();
    HapticVec2 centre = pantograph_workspace_centre(c);
    d.surface_count = 1;
    d.surfaces[0] =
        (HapticSurface){.kind = HAPTIC_SURFACE_WALL,
                        .point = {centre.x, centre.y + 0.01},
                        .normal = {0, 1},
                        .stiffness = 1500,
                        .damping = 3,
                        .friction = 0.3,
                        .friction_speed = 0.01,
                        .has_texture = true,
                        .texture = {.cov = {0.0625, 0.012, 0.012, 0.0144}, .epsilon = 0.005}};
    couple_to_p(&d);
    return d;
}

static int bench_compute(void) {
    PantographConfig c = pantograph_config_default();
    const char *path = "/tmp/issim-bench-haptics.csv";
    IssimError err;
    if (haptic_playback_write_circle(path, &c, 0.03, 0.5, 30.0, &err) != ISSIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    Registry *reg = proxy_registry();
    double proxy[10] = {0.01, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    HapticServoDesc d = edge_desc(&c);
    HapticServo *servo = haptic_servo_create(
        haptic_device_open("playback:/tmp/issim-bench-haptics.csv", &c, &err), &c, &d, reg, &err);
    if (!servo) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    haptic_servo_enable(servo, true);
    enum { N = 20000 };
    static double us[N];
    double sum = 0.0;
    for (int i = 0; i < N; i++) {
        registry_publish(reg, i * 1e-3, proxy);
        double t0 = issim_wall_time();
        haptic_servo_period(servo, 100.0 + i * 1e-3);
        us[i] = 1e6 * (issim_wall_time() - t0);
        sum += us[i];
    }
    printf("haptics.compute_us: mean %.2f p50 %.2f p99 %.2f max %.2f (target < 20; %d periods: "
           "playback read, kinematics, wall + friction + correlated texture, coupling, limits)\n",
           sum / N, bench_quantile(us, N, 0.5), bench_quantile(us, N, 0.99),
           bench_quantile(us, N, 1.0), N);
    haptic_servo_destroy(servo);
    registry_destroy(reg);
    remove(path);
    return 0;
}

/* ===== Local models (issue 30 targets) ===== */

typedef struct LocalBench {
    ContactParams params[4];
    ContactHistory history[4];
    ContactMap *map;
    EngineContactModelView views[4];
    void *block;
    size_t room;
} LocalBench;

/* Four contacts of the kinds the issue names: spring/damper, Hunt-Crossley, internal friction,
 * and a contact map of 4096 samples (steady 1500 N/m plus a 2 ms transient, against a flat
 * 1e5 N/m side, direct convolution), begun at t = 0, each 1 mm deep along -x. */
static int local_bench_init(LocalBench *b, const Registry *reg) {
    *b = (LocalBench){.room = registry_board_capacity(reg)};
    IssimError err;
    if (contact_map_transient("bar", 1500, 6000, 2e-3, 1e-4, 4096, &b->map, &err) != ISSIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    b->params[0] = (ContactParams){
        .model = CONTACT_MODEL_SPRING_DAMPER, .stiffness = 2e4, .damping = 20, .exponent = 1};
    b->params[1] = (ContactParams){
        .model = CONTACT_MODEL_HUNT_CROSSLEY, .stiffness = 2e4, .exponent = 1.5, .hc_alpha = 0.2};
    b->params[2] = (ContactParams){.model = CONTACT_MODEL_INTERNAL_FRICTION,
                                   .stiffness = 1e4,
                                   .exponent = 1,
                                   .restitution = 0.5};
    b->params[3] = (ContactParams){.model = CONTACT_MODEL_CONTACT_MAP,
                                   .stiffness = 1e5,
                                   .map_a = b->map,
                                   .map_rule = CONTACT_MAP_TRAPEZOID,
                                   /* the direct sum: its state is the 4096 inputs (32 KiB);
                                      the FFT's partitioned state (300 KiB) would be copied
                                      whole at every engine step */
                                   .map_convolution = CONTACT_MAP_CONV_DIRECT};
    ContactKinematics onset = {.depth = 0.0, .normal = {-1, 0, 0}, .effective_mass = 0.2};
    for (int i = 0; i < 4; i++) {
        if (contact_params_derive(&b->params[i], &err) != ISSIM_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        const ContactModelClass *cls = contact_model_class(b->params[i].model);
        size_t bytes = cls->state_size ? cls->state_size(&b->params[i], &onset) : 0;
        b->history[i] =
            (ContactHistory){.state = bytes ? calloc(1, bytes) : NULL, .state_bytes = bytes};
        cls->begin(&b->params[i], &b->history[i], &onset);
        /* a contact that has lasted longer than the map (5000 samples at 10 kHz): the map's
           convolution sums over all its 4096 samples at every step */
        for (int k = 1; k <= 5000; k++) {
            ContactKinematics at = {
                .depth = 1e-3, .normal = {-1, 0, 0}, .effective_mass = 0.2, .t = 1e-4 * k};
            cls->commit(&b->params[i], &b->history[i], &at);
        }
        b->views[i] = (EngineContactModelView){
            .id = (uint32_t)i + 1,
            .body_is_a = true,
            .params = &b->params[i],
            .history = &b->history[i],
            .kin = {.depth = 1e-3, .normal = {-1, 0, 0}, .effective_mass = 0.2, .t = 0.5},
        };
    }
    b->block = malloc(b->room);
    return b->block ? 0 : 1;
}

static void local_bench_free(LocalBench *b) {
    for (int i = 0; i < 4; i++)
        free(b->history[i].state);
    contact_map_release(b->map);
    free(b->block);
}

/* The engine's publication: the proxy where the handle is (the models stay 1 mm deep). */
static void local_bench_publish(LocalBench *b, Registry *reg, double t, double wall) {
    RegistrySlot slot;
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &slot);
    Vec3 at = slot.count ? haptic_handle_unpack(&slot).world : (Vec3){0, 0, 0};
    size_t bytes = haptic_local_pack(b->block, b->room, 1, at, t, wall, b->views, 4);
    registry_board_publish(reg, t, b->block, bytes);
    registry_board_beat(reg, wall);
}

static HapticServo *local_servo(Registry *reg, double rate, const char *csv) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    if (haptic_playback_write_circle(csv, &c, 0.03, 0.5, 30.0, &err) != ISSIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return NULL;
    }
    HapticServoDesc d = haptic_servo_desc_default();
    couple_to_p(&d);
    d.local.enabled = true;
    d.rate_hz = rate;
    char spec[300];
    snprintf(spec, sizeof spec, "playback:%s", csv);
    HapticServo *servo = haptic_servo_create(haptic_device_open(spec, &c, &err), &c, &d, reg, &err);
    if (!servo)
        fprintf(stderr, "%s\n", err.message);
    return servo;
}

static void print_load(const char *when);

/* The calling thread under SCHED_FIFO at the servo's priority, as the servo runs; false when the
 * system refuses (the figures then include preemption by every other thread). */
static bool bench_fifo(bool on) {
    struct sched_param p = {.sched_priority = on ? haptic_servo_desc_default().fifo_priority : 0};
    return pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER, &p) == 0;
}

/* Each law's force and commit alone, once per 4 kHz period, on the bench's contact 1 mm deep:
 * where the local models' time goes. */
static void bench_local_laws(LocalBench *b) {
    static const char *names[4] = {"spring_damper", "hunt_crossley", "internal_friction",
                                   "map_4096_direct"};
    enum { N = 20000 };
    static double us[N];
    for (int i = 0; i < 4; i++) {
        const ContactModelClass *cls = contact_model_class(b->params[i].model);
        double sum = 0.0;
        volatile double sink = 0.0;
        for (int n = 0; n < N; n++) {
            ContactKinematics k = {.depth = 1e-3 + 1e-5 * sin(n * 0.01),
                                   .normal = {-1, 0, 0},
                                   .effective_mass = 0.2,
                                   .t = 0.5 + n * 2.5e-4};
            double t0 = issim_wall_time();
            ContactForce f = cls->force(&b->params[i], &b->history[i], &k);
            cls->commit(&b->params[i], &b->history[i], &k);
            us[n] = 1e6 * (issim_wall_time() - t0);
            sum += us[n];
            sink += f.normal; /* the force is used: the call is not elided */
        }
        printf("haptics.local_law_us.%s: mean %.3f p99 %.3f max %.2f (force + commit per 4 kHz "
               "period)\n",
               names[i], sum / N, bench_quantile(us, N, 0.99), bench_quantile(us, N, 1.0));
    }
}

/* Target: a servo period with local models of 4 contacts (one a 4096-sample map) under 20 us
 * mean, 50 us max. The bench publishes new models every 4 periods (a 1 ms engine step at 4 kHz),
 * outside the timed period; the period copies them when they are new. The timed loop runs under
 * SCHED_FIFO when permitted, as the servo does; the servo's own figures for its model loop
 * (SERVO_STATS models_compute_*) are printed beside the whole period's. */
static int bench_local_compute(void) {
    Registry *reg = proxy_registry();
    const char *csv = "/tmp/issim-bench-haptics-local.csv";
    HapticServo *servo = local_servo(reg, 4000.0, csv);
    LocalBench b;
    if (!servo || local_bench_init(&b, reg) != 0)
        return 1;
    haptic_servo_enable(servo, true);
    enum { N = 20000 };
    static double us[N];
    double sum = 0.0, proxy[10] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    print_load("before");
    bool fifo = bench_fifo(true);
    for (int i = 0; i < N; i++) {
        double now = 100.0 + i * 2.5e-4;
        if (i % 4 == 0) {
            registry_publish(reg, i * 2.5e-4, proxy);
            local_bench_publish(&b, reg, i * 2.5e-4, now);
        }
        double t0 = issim_wall_time();
        haptic_servo_period(servo, now);
        us[i] = 1e6 * (issim_wall_time() - t0);
        sum += us[i];
    }
    bench_fifo(false);
    int over = 0;
    for (int i = 0; i < N; i++)
        over += us[i] > 50.0;
    const HapticLocalSet *set = haptic_servo_local_models(servo);
    HapticServoStats st = haptic_servo_stats(servo);
    printf("haptics.local_compute_us: mean %.2f p50 %.2f p99 %.2f max %.2f (target mean < 20, max "
           "< 50; %d periods at 4 kHz with %d local models: spring/damper, Hunt-Crossley, internal "
           "friction, a 4096-sample contact map; %" PRIu64 " blocks of %zu bytes copied; %s)\n",
           sum / N, bench_quantile(us, N, 0.5), bench_quantile(us, N, 0.99),
           bench_quantile(us, N, 1.0), N, set ? ((const HapticLocalHeader *)set->block)->count : 0,
           set ? set->arrivals : 0,
           set ? (size_t)((const HapticLocalHeader *)set->block)->bytes : (size_t)0,
           fifo ? "SCHED_FIFO" : "normal scheduling: SCHED_FIFO refused");
    printf("haptics.local_compute_over_50us: %d of %d periods (p99.9 %.2f us)\n", over, N,
           bench_quantile(us, N, 0.999));
    printf("haptics.local_models_loop_us: mean %.2f max %.2f (the servo's model loop alone: the "
           "four laws at the handle, SERVO_STATS models_compute_*)\n",
           st.models_compute_mean_us, st.models_compute_max_us);
    print_load("after");
    bench_local_laws(&b);
    haptic_servo_destroy(servo);
    local_bench_free(&b);
    registry_destroy(reg);
    remove(csv);
    return 0;
}

typedef struct LocalPublisher {
    LocalBench *bench;
    Registry *reg;
    atomic_bool stop;
    uint64_t published;
} LocalPublisher;

/* An engine stepping 1 ms: publishes the frame, the models and the heartbeat, then sleeps. */
static void *local_publisher(void *arg) {
    LocalPublisher *p = arg;
    double proxy[10] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    while (!atomic_load(&p->stop)) {
        double t = 1e-3 * (double)p->published;
        registry_publish(p->reg, t, proxy);
        local_bench_publish(p->bench, p->reg, t, issim_wall_time());
        p->published++;
        nap(1e-3);
    }
    return NULL;
}

/* Target: a new local model reaches the servo within one engine step + 100 us of its
 * publication. Measured: publication (after the engine step) to the servo's copy of it, with
 * the servo thread at 4 kHz (SCHED_FIFO when permitted) and a publisher every 1 ms. */
static int bench_local_latency(double seconds) {
    Registry *reg = proxy_registry();
    const char *csv = "/tmp/issim-bench-haptics-local2.csv";
    HapticServo *servo = local_servo(reg, 4000.0, csv);
    LocalBench b;
    if (!servo || local_bench_init(&b, reg) != 0)
        return 1;
    LocalPublisher p = {.bench = &b, .reg = reg};
    atomic_init(&p.stop, false);
    IssimError err;
    pthread_t thread;
    pthread_create(&thread, NULL, local_publisher, &p);
    int rc = 0;
    if (haptic_servo_start(servo, &err) == ISSIM_OK) {
        haptic_servo_enable(servo, true);
        nap(seconds);
        haptic_servo_stop(servo);
        const HapticLocalSet *set = haptic_servo_local_models(servo);
        HapticServoStats st = haptic_servo_stats(servo);
        printf("haptics.local_latency_us: mean %.0f max %.0f over %" PRIu64 " of %" PRIu64
               " blocks (target < 1 engine step + 100 us = 1100 us; servo 4 kHz %s, lateness "
               "p99 %.0f us)\n",
               set && set->arrivals ? 1e6 * set->latency_sum / (double)set->arrivals : NAN,
               set ? 1e6 * set->latency_max : NAN, set ? set->arrivals : 0, p.published,
               st.fifo ? "SCHED_FIFO" : "normal scheduling", st.lateness_p99_us);
    } else {
        fprintf(stderr, "%s\n", err.message);
        rc = 1;
    }
    atomic_store(&p.stop, true);
    pthread_join(thread, NULL);
    haptic_servo_destroy(servo);
    local_bench_free(&b);
    registry_destroy(reg);
    remove(csv);
    return rc;
}

/* One contact's local model on a fresh board, for the traces below. */
static int trace_set(HapticLocalSet *set, Registry *reg, ContactParams *p, ContactHistory *h) {
    if (haptic_local_set_init(set, reg, NULL) != ISSIM_OK)
        return 1;
    EngineContactModelView v = {.id = 1,
                                .body_is_a = true,
                                .params = p,
                                .history = h,
                                .kin = {.depth = 0.0, .normal = {-1, 0, 0}, .effective_mass = 0.2}};
    void *block = malloc(set->room);
    size_t bytes = block ? haptic_local_pack(block, set->room, 1, (Vec3){0, 0, 0}, 0, 1, &v, 1) : 0;
    bool ok = bytes && registry_board_publish(reg, 0, block, bytes);
    free(block);
    return ok && haptic_local_set_refresh(set, reg, 1.0) ? 0 : 1;
}

static int plot_trace(const char *png, const char *dat, const char *xlabel, const char *title) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "gnuplot -e \"set terminal pngcairo size 900,600 noenhanced; set output '%s'; set "
             "xlabel '%s'; set ylabel 'force on the handle, N (world / force_scale 1)'; set title "
             "'%s'; plot '%s' using 1:2 with lines notitle\"",
             png, xlabel, title, dat);
    if (system(cmd) != 0)
        return fprintf(stderr, "issim-bench haptics traces: gnuplot failed writing %s\n", png), 1;
    printf("plot     %s\n", png);
    return 0;
}

/* What the local-model path puts in the hand, in simulated time (the servo's own evaluation, a
 * 4 kHz or 10 kHz period, the handle moved by the bench): internal friction's force-depth loop
 * (k 3000 N/m, r = 0.5: the handle 2 mm in and out) and a contact map's transient (h = 1500 +
 * 6000 exp(-t / 2 ms) at 10 kHz against a flat 1e5 N/m, the handle pressed 1 mm at once and
 * held). Tables PREFIX-if.dat and PREFIX-map.dat, plots PREFIX-if.png and PREFIX-map.png. */
static int bench_traces(const char *prefix) {
    Registry *reg = proxy_registry();
    char dat[2][512], png[2][512];
    for (int i = 0; i < 2; i++) {
        snprintf(dat[i], sizeof dat[i], "%s-%s.dat", prefix, i ? "map" : "if");
        snprintf(png[i], sizeof png[i], "%s-%s.png", prefix, i ? "map" : "if");
    }
    ContactParams ifp = {.model = CONTACT_MODEL_INTERNAL_FRICTION,
                         .stiffness = 3000,
                         .exponent = 1,
                         .restitution = 0.5};
    contact_params_derive(&ifp, NULL);
    ContactHistory ifh = {0};
    ContactKinematics onset = {.depth = 0.0, .normal = {-1, 0, 0}, .effective_mass = 0.2};
    contact_model_class(ifp.model)->begin(&ifp, &ifh, &onset);
    HapticLocalSet set;
    FILE *f = fopen(dat[0], "w");
    if (!f || trace_set(&set, reg, &ifp, &ifh) != 0)
        return fprintf(stderr, "issim-bench haptics traces: cannot write %s\n", dat[0]), 1;
    fprintf(f, "depth_mm force_N\n");
    const int steps = 400;
    const double deepest = 2e-3, period = 2.5e-4;
    double absorbed = 0, returned = 0, prev_d = 0, prev_f = 0;
    for (int i = 1; i <= 2 * steps; i++) {
        double d = deepest * (i <= steps ? (double)i / steps : (double)(2 * steps - i) / steps);
        double rate = (i <= steps ? 1.0 : -1.0) * deepest / (steps * period);
        Vec3 force;
        haptic_local_force(&set, (Vec3){d, 0, 0}, (Vec3){rate, 0, 0}, i * period, &force);
        fprintf(f, "%.6f %.6f\n", 1e3 * d, -force.x);
        double work = 0.5 * (-force.x + prev_f) * (d - prev_d);
        if (i <= steps)
            absorbed += work;
        else
            returned -= work;
        prev_d = d;
        prev_f = -force.x;
    }
    fclose(f);
    haptic_local_set_free(&set);
    printf("haptics.trace_internal_friction: 2 mm in and out at 4 kHz: %.3f mJ taken, %.3f mJ "
           "given back, ratio %.4f (r^2 = 0.25)\n",
           1e3 * absorbed, 1e3 * returned, returned / absorbed);
    int rc = plot_trace(png[0], dat[0], "depth, mm",
                        "internal friction (004 4.6) through the local model: k 3000 N/m, r 0.5");

    ContactMap *map = NULL;
    if (contact_map_transient("bar", 1500, 6000, 2e-3, 1e-4, 300, &map, NULL) != ISSIM_OK)
        return 1;
    ContactParams mp = {.model = CONTACT_MODEL_CONTACT_MAP,
                        .stiffness = 1e5,
                        .map_a = map,
                        .map_rule = CONTACT_MAP_TRAPEZOID,
                        .map_convolution = CONTACT_MAP_CONV_DIRECT};
    contact_params_derive(&mp, NULL);
    const ContactModelClass *cls = contact_model_class(mp.model);
    size_t bytes = cls->state_size(&mp, &onset);
    ContactHistory mh = {.state = calloc(1, bytes), .state_bytes = bytes};
    cls->begin(&mp, &mh, &onset);
    f = fopen(dat[1], "w");
    if (!f || trace_set(&set, reg, &mp, &mh) != 0)
        return fprintf(stderr, "issim-bench haptics traces: cannot write %s\n", dat[1]), 1;
    fprintf(f, "t_ms force_N\n");
    double first = NAN, last = NAN;
    for (int i = 1; i <= 150; i++) {
        Vec3 force;
        haptic_local_force(&set, (Vec3){1e-3, 0, 0}, (Vec3){0, 0, 0}, i * 1e-4, &force);
        fprintf(f, "%.4f %.6f\n", 0.1 * i, -force.x);
        first = i == 1 ? -force.x : first;
        last = -force.x;
    }
    fclose(f);
    haptic_local_set_free(&set);
    printf("haptics.trace_map: held 1 mm at 10 kHz: %.3f N at the first sample, %.3f N after 15 "
           "ms\n",
           first, last);
    rc |= plot_trace(png[1], dat[1], "time since the press, ms",
                     "the transient of a contact map through the local model (10 kHz servo)");
    free(mh.state);
    contact_map_release(map);
    registry_destroy(reg);
    return rc;
}

typedef struct Busy {
    atomic_bool stop;
} Busy;

/* A display-like load: 10 ms of arithmetic every 16 ms. */
static void *display_load(void *arg) {
    Busy *b = arg;
    volatile double x = 0.0;
    while (!atomic_load(&b->stop)) {
        double t0 = issim_wall_time();
        while (issim_wall_time() - t0 < 0.010)
            for (int i = 0; i < 1000; i++)
                x += sin((double)i) * 1e-9;
        nap(0.006);
    }
    return NULL;
}

/* The machine's load as /proc/loadavg has it ("0.52 0.61 0.70 2/345 6789"), for the figures. */
static void print_load(const char *when) {
    char line[128] = "unknown";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            snprintf(line, sizeof line, "unknown");
        fclose(f);
    }
    line[strcspn(line, "\n")] = '\0';
    printf("haptics.load_%s: %s (1, 5, 15 min; runnable/threads; %ld CPUs)\n", when, line,
           sysconf(_SC_NPROCESSORS_ONLN));
}

static int bench_lateness_on(const char *scene, double rate, bool fifo, double seconds,
                             bool busy_thread);

static int bench_lateness(double rate, bool fifo, double seconds) {
    return bench_lateness_on("scenes/pantograph_push.lua", rate, fifo, seconds, true);
}

/* The machine's own scheduling latency, without our code (cyclictest's measurement): a thread at
 * the servo's SCHED_FIFO priority (80) sleeps to absolute deadlines every period with
 * clock_nanosleep and records how late it woke; nothing else. What the servo's lateness shows
 * beyond these figures is ours. */
typedef struct BareLoop {
    double period, seconds;
    double p50_us, p99_us, p999_us, max_us;
    uint64_t periods, overruns;
    bool fifo;
    double work_mean_us, work_max_us; /* a fixed 1,000-step arithmetic loop each period */
} BareLoop;

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *bare_loop(void *arg) {
    BareLoop *b = arg;
    struct sched_param p = {.sched_priority = 80};
    b->fifo = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0;
    size_t n = (size_t)(b->seconds / b->period);
    double *late = malloc(n * sizeof(double));
    if (!late)
        return NULL;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    long period_ns = (long)(b->period * 1e9);
    for (size_t i = 0; i < n; i++) {
        next.tv_nsec += period_ns;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        late[i] = (double)(now.tv_sec - next.tv_sec) * 1e6 + (now.tv_nsec - next.tv_nsec) * 1e-3;
        b->overruns += late[i] > 1e6 * b->period;
        /* the same work every period: its longest run is how long the thread lost the CPU
           mid-period, as the servo's compute max */
        volatile double x = 1.0;
        for (int k = 0; k < 1000; k++)
            x = x * 1.0000001 + 1e-9;
        struct timespec done;
        clock_gettime(CLOCK_MONOTONIC, &done);
        double work =
            (double)(done.tv_sec - now.tv_sec) * 1e6 + (done.tv_nsec - now.tv_nsec) * 1e-3;
        b->work_mean_us += work / (double)n;
        b->work_max_us = fmax(b->work_max_us, work);
    }
    qsort(late, n, sizeof(double), by_double);
    b->periods = n;
    b->p50_us = late[n / 2];
    b->p99_us = late[(size_t)(0.99 * (double)(n - 1))];
    b->p999_us = late[(size_t)(0.999 * (double)(n - 1))];
    b->max_us = late[n - 1];
    free(late);
    return NULL;
}

static void bench_bare_loop(double rate, double seconds) {
    BareLoop b = {.period = 1.0 / rate, .seconds = seconds};
    pthread_t t;
    if (pthread_create(&t, NULL, bare_loop, &b) != 0)
        return;
    pthread_join(t, NULL);
    printf("haptics.bare_loop_%.0fhz_%s_us: p50 %.0f p99 %.0f p99.9 %.0f max %.0f; late by a "
           "period %" PRIu64 " of %" PRIu64 "; fixed work mean %.1f max %.1f us (clock_nanosleep "
           "and a fixed loop, no servo)\n",
           rate, b.fifo ? "fifo" : "normal", b.p50_us, b.p99_us, b.p999_us, b.max_us, b.overruns,
           b.periods, b.work_mean_us, b.work_max_us);
}

/* The servo on pantograph_push_local.lua (its proxy's contacts as local models), at `rate`,
 * SCHED_FIFO when permitted, with no load of its own: run it while the GUI draws a scene (the
 * issue's figures: docs/haptics.md "Local models"); the load is printed before and after. */
static int bench_rates(double seconds) {
    int rc = 0;
    const double rates[2] = {4000.0, 10000.0};
    for (int r = 0; r < 2; r++) {
        print_load("before");
        rc |= bench_lateness_on("scenes/pantograph_push_local.lua", rates[r], true, seconds, false);
        bench_bare_loop(rates[r], seconds);
        print_load("after");
    }
    return rc;
}

static int bench_lateness_on(const char *scene, double rate, bool fifo, double seconds,
                             bool busy_thread) {
    PantographConfig c = pantograph_config_default();
    HapticSimulator simulator;
    IssimError err;
    const char *args[] = {"--hand", "circle:0.04,2", NULL};
    if (haptic_simulator_spawn(&simulator, NULL, args, &err) != ISSIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    SimOptions o = sim_options_default();
    o.quiet = true;
    Sim *sim = sim_create(scene, &o, &err);
    if (!sim) {
        fprintf(stderr, "%s (run from the source folder)\n", err.message);
        haptic_simulator_stop(&simulator);
        return 1;
    }
    HapticServoDesc d = haptic_servo_desc_default();
    char proxy[64];
    haptic_scene_load(scene, &d, proxy, sizeof proxy, &err);
    issim_strlcpy(d.coupling.proxy, proxy, sizeof d.coupling.proxy);
    d.coupling.proxy_body = engine_body_id_pack(engine_body_find(sim_engine(sim), proxy));
    d.rate_hz = rate;
    d.realtime = fifo;
    char spec[200];
    snprintf(spec, sizeof spec, "%s", simulator.spec);
    HapticServo *servo =
        haptic_servo_create(haptic_device_open(spec, &c, &err), &c, &d, sim_registry(sim), &err);
    Busy busy;
    atomic_init(&busy.stop, false);
    pthread_t display;
    int rc = 1;
    if (servo && sim_start(sim, &err) == ISSIM_OK) {
        if (busy_thread)
            pthread_create(&display, NULL, display_load, &busy);
        if (haptic_servo_start(servo, &err) == ISSIM_OK) {
            haptic_servo_enable(servo, true);
            nap(seconds);
            haptic_servo_stop(servo);
            HapticServoStats st = haptic_servo_stats(servo);
            printf("haptics.lateness_%.0fhz_%s%s_us: p50 %.0f p99 %.0f p99.9 %.0f max %.0f; "
                   "overruns %" PRIu64 " of %" PRIu64 " periods; measured %.1f Hz; compute mean "
                   "%.1f max %.1f us; stale reads %" PRIu64 "; %s\n",
                   rate, fifo ? "fifo" : "normal", busy_thread ? "" : "_local", st.lateness_p50_us,
                   st.lateness_p99_us, st.lateness_p999_us, st.lateness_max_us, st.overruns,
                   st.periods, st.measured_hz, st.compute_mean_us, st.compute_max_us,
                   st.stale_reads,
                   haptic_servo_state(servo) == HAPTIC_SERVO_RUNNING ? "ok" : "SAFE STATE");
            rc = 0;
        }
        atomic_store(&busy.stop, true);
        if (busy_thread)
            pthread_join(display, NULL);
        sim_stop(sim);
    }
    if (rc)
        fprintf(stderr, "%s\n", err.message);
    haptic_servo_destroy(servo);
    sim_destroy(sim);
    haptic_simulator_stop(&simulator);
    return rc;
}

static int bench_round_trip(void) {
    PantographConfig c = pantograph_config_default();
    HapticSimulator simulator;
    IssimError err;
    if (haptic_simulator_spawn(&simulator, NULL, NULL, &err) != ISSIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    char spec[200];
    snprintf(spec, sizeof spec, "%s", simulator.spec);
    HapticDevice *dev = haptic_device_open(spec, &c, &err);
    if (!dev) {
        fprintf(stderr, "%s\n", err.message);
        haptic_simulator_stop(&simulator);
        return 1;
    }
    enum { N = 2000 };
    static double us[N];
    int n = 0, lost = 0;
    for (int i = 1; i <= N; i++) {
        HapticCommand cmd = {.seq = (uint16_t)i, .dac = {2048, 2048}, .enable = false};
        double t0 = issim_wall_time();
        haptic_device_write(dev, &cmd, &err);
        HapticSample s = {0};
        while (issim_wall_time() - t0 < 0.02) {
            if (haptic_device_read(dev, 0.005, &s, &err) != ISSIM_OK)
                break;
            if (s.fresh && s.state.last_command_seq == cmd.seq)
                break;
        }
        if (s.state.last_command_seq == cmd.seq)
            us[n++] = 1e6 * (s.host_t - t0);
        else
            lost++;
    }
    printf("haptics.round_trip_us: p50 %.0f p99 %.0f max %.0f (%d exchanges, %d lost; the "
           "simulated device applies commands at its 1 kHz frame tick)\n",
           bench_quantile(us, n, 0.5), bench_quantile(us, n, 0.99), bench_quantile(us, n, 1.0), n,
           lost);
    haptic_device_close(dev);
    haptic_simulator_stop(&simulator);
    return 0;
}

typedef struct StallRun {
    Registry *reg;
    atomic_bool stop;
    atomic_bool stall;
    _Atomic double last_publish; /* wall time of the engine's last frame */
} StallRun;

static void *fake_engine(void *arg) {
    StallRun *r = arg;
    double t = 0.0, proxy[10] = {0.02, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    while (!atomic_load(&r->stop)) {
        if (!atomic_load(&r->stall)) {
            t += 1e-3;
            registry_publish(r->reg, t, proxy);
            atomic_store(&r->last_publish, issim_wall_time());
        }
        nap(1e-3);
    }
    return NULL;
}

static int bench_stall(void) {
    PantographConfig c = pantograph_config_default();
    HapticSimulator simulator;
    IssimError err;
    if (haptic_simulator_spawn(&simulator, NULL, NULL, &err) != ISSIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    char spec[200];
    snprintf(spec, sizeof spec, "%s", simulator.spec);
    enum { RUNS = 10 };
    double ms[RUNS];
    int n = 0;
    for (int run = 0; run < RUNS; run++) {
        Registry *reg = proxy_registry();
        HapticServoDesc d = haptic_servo_desc_default();
        couple_to_p(&d);
        d.coupling.stiffness = 100;
        HapticServo *servo =
            haptic_servo_create(haptic_device_open(spec, &c, &err), &c, &d, reg, &err);
        if (!servo)
            break;
        StallRun r = {.reg = reg};
        atomic_init(&r.last_publish, 0.0);
        atomic_init(&r.stop, false);
        atomic_init(&r.stall, false);
        pthread_t engine;
        pthread_create(&engine, NULL, fake_engine, &r);
        haptic_servo_start(servo, &err);
        haptic_servo_enable(servo, true);
        nap(0.2);
        atomic_store(&r.stall, true);
        nap(0.002); /* let the engine thread see it; last_publish is final after this */
        double stalled_at = atomic_load(&r.last_publish), zero_at = NAN;
        while (issim_wall_time() - stalled_at < 0.3) {
            RegistrySlot h;
            registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &h);
            HapticHandleState state = haptic_handle_unpack(&h);
            if (state.force.x == 0.0 && state.force.y == 0.0) {
                zero_at = h.t;
                break;
            }
            nap(2e-4);
        }
        haptic_servo_stop(servo);
        atomic_store(&r.stop, true);
        pthread_join(engine, NULL);
        if (!isnan(zero_at))
            ms[n++] = 1e3 * (zero_at - stalled_at);
        haptic_servo_destroy(servo);
        registry_destroy(reg);
    }
    haptic_simulator_stop(&simulator);
    if (n == 0) {
        fprintf(stderr, "stall benchmark failed: %s\n", err.message);
        return 1;
    }
    double worst = bench_quantile(ms, n, 1.0);
    printf("haptics.stall_to_zero_force_ms: median %.1f max %.1f over %d stalls (target < 50; "
           "stall timeout 20 ms + fade 20 ms)\n",
           bench_quantile(ms, n, 0.5), worst, n);
    return 0;
}

#define ZW_RATES 3
#define ZW_DAMPINGS 8

/* Columns 2 .. last of table against its first (the damping), titled from its header. */
static int plot_zwidth_columns(const char *png, const char *table, const char *what,
                               const char *xlabel, int last) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "gnuplot -e \"set terminal pngcairo size 900,600 noenhanced; set output '%s'; "
             "set logscale y; set xlabel '%s'; set ylabel 'largest stable "
             "stiffness, N/m'; set key top left; set title 'Z-width, simulated P2 pantograph%s'; "
             "plot for [c=2:%d] '%s' using 1:c with linespoints title columnhead(c)\"",
             png, xlabel ? xlabel : "wall damping, N s/m", what, last, table);
    if (system(cmd) != 0) {
        fprintf(stderr, "issim-bench haptics zwidth: gnuplot failed writing %s\n", png);
        return 1;
    }
    printf("plot     %s\n", png);
    return 0;
}

static int plot_zwidth(const char *png, const char *table, bool subcount) {
    return plot_zwidth_columns(
        png, table,
        subcount ? ", PD wall, position and velocity from the observer below one count"
                 : ", PD wall",
        NULL, 7);
}

static int bench_zwidth_contact(const char *scene, const char *law, const char *png);

/* The plot's data file, PNG.dat (its name in table); NULL, said on stderr, if it cannot be
 * written. */
static FILE *open_table(const char *png, char *table, size_t size) {
    snprintf(table, size, "%s.dat", png);
    FILE *f = fopen(table, "w");
    if (!f)
        fprintf(stderr, "issim-bench haptics zwidth: cannot write %s\n", table);
    return f;
}

static int bench_zwidth(int argc, char **argv) {
    const char *png = "zwidth.png";
    bool subcount = false;
    double memory = 0.0; /* the observer's memory, s (0: pantosim_zwidth's default) */
    bool delayed = false, lead = false, contact = false;
    const char *law = NULL, *scene = "scenes/pantograph_contact_wall.lua";
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--png") == 0 && i + 1 < argc)
            png = argv[++i];
        else if (strcmp(argv[i], "--subcount") == 0)
            subcount = true;
        else if (strcmp(argv[i], "--memory") == 0 && i + 1 < argc)
            memory = atof(argv[++i]);
        else if (strcmp(argv[i], "--delayed") == 0)
            delayed = true;
        else if (strcmp(argv[i], "--lead") == 0)
            lead = true;
        else if (strcmp(argv[i], "--contact-model") == 0)
            contact = true;
        else if (strcmp(argv[i], "--law") == 0 && i + 1 < argc)
            law = argv[++i];
        else if (strcmp(argv[i], "--scene") == 0 && i + 1 < argc)
            scene = argv[++i];
    if (contact)
        return bench_zwidth_contact(scene, law, png);
    const double rates[ZW_RATES] = {1000.0, 4000.0, 10000.0};
    const double dampings[ZW_DAMPINGS] = {0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0};
    double k[ZW_DAMPINGS][ZW_RATES][2], worst_energy = 0.0;
    printf("haptics.zwidth%s%s: largest stable PD-wall stiffness, N/m (grid 100 * 1.25^i)%s%s\n",
           subcount ? ".subcount" : "", delayed ? ".delayed" : "",
           subcount ? ", position and velocity below one count (HapticServoDesc.subcount)" : "",
           delayed ? (lead && subcount ? ", commands a period late, the observer a period ahead"
                                       : ", commands a period late")
                   : "");
    printf("%8s", "b N s/m");
    for (int r = 0; r < ZW_RATES; r++)
        printf("  %5.0f Hz off  %5.0f Hz PC ", rates[r], rates[r]);
    printf("\n");
    for (int b = 0; b < ZW_DAMPINGS; b++) {
        printf("%8.1f", dampings[b]);
        for (int r = 0; r < ZW_RATES; r++)
            for (int pc = 0; pc < 2; pc++) {
                double e;
                ZwidthTrial base = {.rate_hz = rates[r],
                                    .damping = dampings[b],
                                    .passivity = pc,
                                    .subcount = subcount,
                                    .observer_memory_s = memory,
                                    .delayed = delayed,
                                    .observer_lead = lead};
                k[b][r][pc] = zwidth_largest_stable_for(&base, 100.0, 1e6, 1.25, &e);
                worst_energy = fmin(worst_energy, e);
                printf("  %12.0f", k[b][r][pc]);
                fflush(stdout);
            }
        printf("\n");
    }
    printf("haptics.zwidth.energy_min_J: %.3g (lowest observer energy over every stable trial)\n",
           worst_energy);
    char table[1024];
    FILE *f = open_table(png, table, sizeof table);
    if (!f)
        return 1;
    fprintf(f, "b");
    for (int r = 0; r < ZW_RATES; r++)
        fprintf(f, " %gkHz-off %gkHz-PC", rates[r] / 1000, rates[r] / 1000);
    fprintf(f, "\n");
    for (int b = 0; b < ZW_DAMPINGS; b++) {
        fprintf(f, "%g", dampings[b]);
        for (int r = 0; r < ZW_RATES; r++)
            fprintf(f, " %g %g", k[b][r][0], k[b][r][1]);
        fprintf(f, "\n");
    }
    if (fclose(f) != 0)
        return fprintf(stderr, "issim-bench haptics zwidth: cannot write %s\n", table), 1;
    return plot_zwidth(png, table, subcount);
}

/* The contact-model wall's columns at 1 kHz: the servo's estimate, the controller, and the
 * command a period late (with the observer rendering a period ahead). */
#define ZWC_COLUMNS 6
#define ZWC_DAMPINGS 6

static const struct {
    const char *title;
    bool passivity, subcount, delayed, lead;
} zwc_columns[ZWC_COLUMNS] = {
    {"counts", false, false, false, false},     {"counts+PC", true, false, false, false},
    {"observer", false, true, false, false},    {"observer+PC", true, true, false, false},
    {"late:counts", false, false, true, false}, {"late:observer+lead", false, true, true, true},
};

/* --contact-model: the wall is the scene's contact pair (ZWIDTH_CONTACT_PAIR of scene, law
 * `law` or the scene's own), its stiffness swept as --set would, reaching the servo as the
 * engine's published local model (pantosim_zwidth.h). */
static int bench_zwidth_contact(const char *scene, const char *law, const char *png) {
    /* the rows: the pair's damping, N s/m; for hunt_crossley (exponent 1, so k is in N/m) its
       alpha, s/m, whose damping 3/2 alpha k g grows with the depth g */
    bool hc = law && strcmp(law, "hunt_crossley") == 0;
    const double dampings[ZWC_DAMPINGS] = {0.0, 2.0, 5.0, 10.0, 20.0, 30.0};
    const double alphas[ZWC_DAMPINGS] = {0.2, 2.0, 5.0, 10.0, 20.0, 50.0};
    const double *rows = hc ? alphas : dampings;
    double k[ZWC_DAMPINGS][ZWC_COLUMNS], worst_energy = 0.0;
    printf("haptics.zwidth.contact: largest stable stiffness of %s's pair %s (law %s), N/m, at "
           "1 kHz (grid 100 * 1.25^i); the servo renders the engine's published contact\n",
           scene, ZWIDTH_CONTACT_PAIR, law ? law : "the scene's");
    printf("%8s", hc ? "alpha" : "b N s/m");
    for (int c = 0; c < ZWC_COLUMNS; c++)
        printf(" %19s", zwc_columns[c].title);
    printf("\n");
    for (int b = 0; b < ZWC_DAMPINGS; b++) {
        printf("%8.1f", rows[b]);
        for (int c = 0; c < ZWC_COLUMNS; c++) {
            ZwidthTrial base = {.rate_hz = 1000.0,
                                .damping = hc ? 0.0 : dampings[b],
                                .contact_exponent = hc ? 1.0 : 0.0,
                                .contact_alpha = hc ? alphas[b] : 0.0,
                                .passivity = zwc_columns[c].passivity,
                                .subcount = zwc_columns[c].subcount,
                                .delayed = zwc_columns[c].delayed,
                                .observer_lead = zwc_columns[c].lead,
                                .contact_scene = scene,
                                .contact_law = law};
            double e;
            k[b][c] = zwidth_largest_stable_for(&base, 100.0, 1e6, 1.25, &e);
            worst_energy = fmin(worst_energy, e);
            printf(" %19.0f", k[b][c]);
            fflush(stdout);
        }
        printf("\n");
    }
    printf("haptics.zwidth.contact.energy_min_J: %.3g (lowest observer energy over every stable "
           "trial)\n",
           worst_energy);
    char table[1024];
    FILE *f = open_table(png, table, sizeof table);
    if (!f)
        return 1;
    fprintf(f, "b");
    for (int c = 0; c < ZWC_COLUMNS; c++)
        fprintf(f, " %s", zwc_columns[c].title);
    fprintf(f, "\n");
    for (int b = 0; b < ZWC_DAMPINGS; b++) {
        fprintf(f, "%g", rows[b]);
        for (int c = 0; c < ZWC_COLUMNS; c++)
            fprintf(f, " %g", k[b][c]);
        fprintf(f, "\n");
    }
    if (fclose(f) != 0)
        return fprintf(stderr, "issim-bench haptics zwidth: cannot write %s\n", table), 1;
    char what[256];
    snprintf(what, sizeof what, ", contact pair %s (%s) at 1 kHz", ZWIDTH_CONTACT_PAIR,
             law ? law : "spring_damper");
    return plot_zwidth_columns(png, table, what, hc ? "Hunt-Crossley alpha, s/m" : NULL,
                               ZWC_COLUMNS + 1);
}

int bench_haptics(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "zwidth") == 0)
        return bench_zwidth(argc - 1, argv + 1);
    double seconds = 5.0;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[++i]);
    if (argc > 1 && strcmp(argv[1], "local") == 0)
        return bench_local_compute() | bench_local_latency(seconds);
    if (argc > 1 && strcmp(argv[1], "rates") == 0)
        return bench_rates(seconds);
    if (argc > 1 && strcmp(argv[1], "traces") == 0)
        return bench_traces(argc > 2 ? argv[2] : "haptics-local");
    int rc = bench_compute();
    rc |= bench_round_trip();
    rc |= bench_stall();
    const double rates[2] = {1000.0, 4000.0};
    for (int r = 0; r < 2; r++)
        for (int fifo = 1; fifo >= 0; fifo--)
            rc |= bench_lateness(rates[r], fifo, seconds);
    return rc;
}
