/* The threaded servo (TSan label "threads"): the absolute-deadline thread drives the simulated
 * pantograph over a pty while other threads read the HANDLE and SERVO_STATS slots and an
 * "engine" thread publishes proxy frames and applies the engine side of the coupling; then the
 * engine stalls and the coupling fades. Asserts the published rate and statistics, that the
 * handle slot is written at the servo rate and read consistently, and that both sides of the
 * coupling let go after the stall. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "issim/engine.h"
#include "issim/haptics.h"
#include "testutil.h"

static HapticSimulator sim;

static int stop_simulator(void **state) {
    haptic_simulator_stop(&sim);
    return 0;
}

typedef struct Shared {
    Registry *reg;
    atomic_bool stop_reader;
    atomic_bool stall_engine;
    atomic_bool stop_engine;
    uint64_t reader_inconsistent;
    uint64_t reader_reads;
    double engine_force_while_live;
    double engine_force_after_stall;
} Shared;

static void nap(double s) {
    struct timespec ts = {0, (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

/* A GUI-like reader: every slot copy must be internally consistent (the enabled flag and the
 * coupling gains agree, the force is finite). */
static void *reader(void *arg) {
    Shared *sh = arg;
    while (!atomic_load(&sh->stop_reader)) {
        RegistrySlot h, s;
        registry_slot_read(sh->reg, REGISTRY_SLOT_HANDLE, &h);
        registry_slot_read(sh->reg, REGISTRY_SLOT_SERVO_STATS, &s);
        if (h.count > 0) {
            sh->reader_reads++;
            bool off = h.v[HAPTIC_HANDLE_ENABLED] == 0.0;
            if (!isfinite(h.v[HAPTIC_HANDLE_FX]) || (off && h.v[HAPTIC_HANDLE_COUPLING_K] != 0.0))
                sh->reader_inconsistent++;
        }
        nap(2e-4);
    }
    return NULL;
}

/* An engine-like thread: publishes a proxy held 1 cm (world) off the handle's world point and
 * evaluates the engine side of the coupling from the HANDLE slot. */
static void *engine(void *arg) {
    Shared *sh = arg;
    double t = 0.0;
    while (!atomic_load(&sh->stop_engine)) {
        RegistrySlot h;
        registry_slot_read(sh->reg, REGISTRY_SLOT_HANDLE, &h);
        Vec3 hp = {h.v[HAPTIC_HANDLE_WORLD_X], h.v[HAPTIC_HANDLE_WORLD_Y], 0};
        Vec3 force;
        bool live = haptic_coupling_engine_force(&h, (Vec3){hp.x - 0.01, hp.y, 0}, (Vec3){0, 0, 0},
                                                 issim_wall_time(), 0.1, &force);
        if (!atomic_load(&sh->stall_engine)) {
            if (live)
                sh->engine_force_while_live = force.x;
            double v[10] = {hp.x - 0.01, hp.y, 0, 1, 0, 0, 0, 0, 0, 0};
            t += 1e-3;
            registry_publish(sh->reg, t, v);
        } else {
            sh->engine_force_after_stall = live ? force.x : 0.0;
        }
        nap(1e-3);
    }
    return NULL;
}

static void test_threaded_servo(void **state) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    const char *args[] = {"--hand", "hold:0.02,0.155", NULL};
    assert_int_equal(haptic_simulator_spawn(&sim, NULL, args, &err), ISSIM_OK);
    RegistryDesc rd = registry_desc_default();
    rd.history_frames = 256;
    Registry *reg = registry_create(&rd, NULL);
    const char *names[10] = {"proxy.pos.x",    "proxy.pos.y",    "proxy.pos.z",    "proxy.orient.w",
                             "proxy.orient.x", "proxy.orient.y", "proxy.orient.z", "proxy.vel.x",
                             "proxy.vel.y",    "proxy.vel.z"};
    for (int i = 0; i < 10; i++)
        assert_int_equal(registry_add_var(reg, names[i], "", NULL), i);
    char spec[160];
    snprintf(spec, sizeof spec, "serial:%s", sim.pty);
    HapticDevice *dev = haptic_device_open(spec, &c, &err);
    if (!dev)
        fail_msg("%s", err.message);
    HapticServoDesc desc = haptic_servo_desc_default();
    issim_strlcpy(desc.coupling.proxy, "proxy", sizeof desc.coupling.proxy);
    /* no engine reads the HANDLE slot here: any non-null body id */
    desc.coupling.proxy_body = engine_body_id_pack((EngineBodyId){0, 1});
    desc.coupling.stiffness = 200;
    desc.coupling.damping = 0;
    /* a loaded CI machine can starve the test's "engine" thread for tens of ms: only a long
       silence counts as the stall this test makes on purpose */
    desc.coupling.stall_timeout_s = 0.25;
    HapticServo *servo = haptic_servo_create(dev, &c, &desc, reg, &err);
    assert_non_null(servo);
    Shared sh = {.reg = reg};
    atomic_init(&sh.stop_reader, false);
    atomic_init(&sh.stall_engine, false);
    atomic_init(&sh.stop_engine, false);
    testlog_capture();
    pthread_t r, e;
    assert_int_equal(pthread_create(&r, NULL, reader, &sh), 0);
    assert_int_equal(pthread_create(&e, NULL, engine, &sh), 0);
    assert_int_equal(haptic_servo_start(servo, &err), ISSIM_OK);
    haptic_servo_enable(servo, true);
    nap(0.4);
    RegistrySlot h;
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &h);
    assert_true(h.v[HAPTIC_HANDLE_ENABLED] == 1.0);
    assert_near(h.v[HAPTIC_HANDLE_COUPLING_K], 200.0, 0.0);
    double live_handle_fx = h.v[HAPTIC_HANDLE_FX];
    atomic_store(&sh.stall_engine, true);
    nap(0.5);
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &h);
    haptic_servo_stop(servo);
    atomic_store(&sh.stop_reader, true);
    atomic_store(&sh.stop_engine, true);
    pthread_join(r, NULL);
    pthread_join(e, NULL);
    double v[HAPTIC_STAT_COUNT];
    haptic_servo_stats(servo, v);
    print_message("servo: %.0f periods at %.1f Hz, lateness p50 %.0f p99 %.0f p99.9 %.0f max %.0f "
                  "us, %.0f overruns, compute %.1f us mean, FIFO %s, stale reads %.0f\n",
                  v[HAPTIC_STAT_PERIODS], v[HAPTIC_STAT_MEASURED_HZ],
                  v[HAPTIC_STAT_LATENESS_P50_US], v[HAPTIC_STAT_LATENESS_P99_US],
                  v[HAPTIC_STAT_LATENESS_P999_US], v[HAPTIC_STAT_LATENESS_MAX_US],
                  v[HAPTIC_STAT_OVERRUNS], v[HAPTIC_STAT_COMPUTE_MEAN_US],
                  v[HAPTIC_STAT_FIFO] ? "yes" : "no", v[HAPTIC_STAT_STALE_READS]);
    print_message("coupling: engine %.3f N, handle %.3f N while live; after the stall handle "
                  "%.3f N, engine %.3f N\n",
                  sh.engine_force_while_live, live_handle_fx, h.v[HAPTIC_HANDLE_FX],
                  sh.engine_force_after_stall);
    /* absolute deadlines: every deadline between the first and the last period was either
       served or counted as skipped (periods - 1 + missed = span x rate, within rounding) */
    assert_true(v[HAPTIC_STAT_PERIODS] > 10);
    double span = (v[HAPTIC_STAT_PERIODS] - 1) / v[HAPTIC_STAT_MEASURED_HZ];
    assert_near(v[HAPTIC_STAT_PERIODS] - 1 + v[HAPTIC_STAT_MISSED_DEADLINES], span * 1000.0,
                2.0 + 0.002 * span * 1000.0);
    assert_true(v[HAPTIC_STAT_LATENESS_P50_US] <= v[HAPTIC_STAT_LATENESS_P99_US]);
    assert_true(v[HAPTIC_STAT_LATENESS_P99_US] <= v[HAPTIC_STAT_LATENESS_MAX_US] + 1.0);
    RegistrySlot stats;
    registry_slot_read(reg, REGISTRY_SLOT_SERVO_STATS, &stats);
    assert_true(stats.count >= 5); /* every 50 ms */
    assert_near(stats.v[HAPTIC_STAT_RATE_HZ], 1000.0, 0.0);
    /* live coupling: the engine pulls the proxy toward the handle (+x, 200 N/m x 1 cm) and the
       handle feels the opposite, scaled by 1 / force_scale */
    assert_near(sh.engine_force_while_live, 2.0, 0.05);
    assert_near(live_handle_fx, -2.0 / desc.coupling.force_scale, 0.05);
    /* after the stall both sides let go */
    assert_near(h.v[HAPTIC_HANDLE_COUPLING_K], 0.0, 0.0);
    assert_near(h.v[HAPTIC_HANDLE_FX], 0.0, 1e-12);
    assert_near(sh.engine_force_after_stall, 0.0, 0.0);
    assert_true(sh.reader_reads > 100);
    assert_int_equal(sh.reader_inconsistent, 0);
    testlog_release();
    haptic_servo_destroy(servo);
    registry_destroy(reg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_threaded_servo, stop_simulator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
