/* Device plausibility (issue 34 item 4; docs/haptics.md "Device plausibility"): the servo judges
 * every new reading against what the P2 can do, and counts that imply a speed or an acceleration
 * beyond it are a device fault: motors off at once, a message with the measured and allowed
 * figures, counted in SERVO_STATS, held until the motors are enabled again. Driven through the
 * simulated pantograph on a pty, whose --encoder faults jitter, jump or freeze its counts and
 * whose --amp-fault raises the protocol's FAULT status. No threads: the test paces
 * haptic_servo_period at 1 kHz as the servo thread would, and every assertion counts readings
 * (device frames the servo took), never seconds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/haptics.h"
#include "testutil.h"

/* The running test's simulator, servo and registry: the teardown frees them when an assertion
 * fails. */
typedef struct Rig {
    HapticSimulator sim;
    HapticServo *servo;
    Registry *reg;
    struct timespec next;
    double last_t; /* device time of the last reading the servo took */
} Rig;

static Rig rig;

static int rig_teardown(void **state) {
    haptic_servo_destroy(rig.servo);
    rig.servo = NULL;
    registry_destroy(rig.reg);
    rig.reg = NULL;
    haptic_simulator_stop(&rig.sim);
    return 0;
}

/* The simulator with args, the servo on it with a constant 0.5 N on the handle, motors enabled
 * (the force stays on the handle until a fault: the proof the motors were on). */
static void rig_open(const char *const *args) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    if (haptic_simulator_spawn(&rig.sim, NULL, args, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    test_simulator_realtime(rig.sim.pid);
    RegistryDesc rd = registry_desc_default();
    rd.history_frames = 16;
    rig.reg = registry_create(&rd, NULL);
    assert_non_null(rig.reg);
    char spec[160];
    snprintf(spec, sizeof spec, "%s", rig.sim.spec);
    HapticServoDesc desc = haptic_servo_desc_default();
    desc.constant_force = (HapticVec2){0.5, 0.0};
    rig.servo = haptic_servo_create(haptic_device_open(spec, &c, &err), &c, &desc, rig.reg, &err);
    if (!rig.servo)
        fail_msg("%s", err.message);
    haptic_servo_enable(rig.servo, true);
    clock_gettime(CLOCK_MONOTONIC, &rig.next);
    rig.last_t = NAN;
}

/* One period at the next 1 ms deadline. Returns the device interval the reading spans (s), 0
 * when the servo took no new reading. */
static double rig_period(void) {
    rig.next.tv_nsec += 1000000;
    if (rig.next.tv_nsec >= 1000000000L) {
        rig.next.tv_nsec -= 1000000000L;
        rig.next.tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &rig.next, NULL);
    if (!haptic_servo_period(rig.servo, issim_wall_time()))
        fail_msg("the servo stopped: %s", haptic_servo_error(rig.servo));
    double t = haptic_servo_kinematics(rig.servo)->t;
    double span = isnan(rig.last_t) ? 0.0 : t - rig.last_t;
    rig.last_t = t;
    return span;
}

/* Runs until the servo takes a reading at device time t_device or later (the simulator counts
 * from its start), asserting that nothing faulted on the readings before it. Returns the
 * intervals the last reading and the one before it spanned (s). */
static void run_until(double t_device, double spans[2]) {
    double last[2] = {0.0, 0.0};
    for (int i = 0; haptic_servo_kinematics(rig.servo)->t < t_device; i++) {
        if (i > 5000)
            fail_msg("no reading at %.3f s after 5000 periods", t_device);
        double span = rig_period();
        if (span > 0.0) {
            last[1] = last[0];
            last[0] = span;
        }
        if (haptic_servo_kinematics(rig.servo)->t < t_device)
            assert_int_equal(haptic_servo_fault(rig.servo), HAPTIC_FAULT_NONE);
    }
    if (spans) {
        spans[0] = last[0];
        spans[1] = last[1];
    }
}

static void assert_motors_off(void) {
    assert_near(haptic_servo_force(rig.servo).x, 0.0, 0.0);
    assert_near(haptic_servo_force(rig.servo).y, 0.0, 0.0);
    assert_true(haptic_servo_limits(rig.servo) & HAPTIC_LIMIT_FAULT);
    RegistrySlot h;
    registry_slot_read(rig.reg, REGISTRY_SLOT_HANDLE, &h);
    assert_near(haptic_handle_unpack(&h).enabled, 0.0, 0.0);
    assert_near(haptic_handle_unpack(&h).tau1, 0.0, 0.0);
    assert_near(haptic_handle_unpack(&h).tau5, 0.0, 0.0);
    assert_true((unsigned)haptic_handle_unpack(&h).limits & HAPTIC_LIMIT_FAULT);
}

/* The published statistics, as the GUI reads them (the trip publishes them at once). */
static HapticServoStats published_stats(void) {
    RegistrySlot st;
    registry_slot_read(rig.reg, REGISTRY_SLOT_SERVO_STATS, &st);
    assert_true(st.count > 0);
    return haptic_servo_stats_unpack(&st);
}

static void assert_motion_message(HapticFault kind) {
    const char *m = haptic_servo_fault_message(rig.servo);
    print_message("fault: %s\n", m);
    assert_non_null(strstr(m, rig.sim.spec));
    assert_non_null(strstr(m, kind == HAPTIC_FAULT_SPEED ? "implausible handle speed"
                                                         : "implausible handle acceleration"));
    assert_non_null(strstr(m, "measured"));
    assert_non_null(strstr(m, "allowed"));
    assert_non_null(strstr(m, "motors off until enabled again"));
}

/* The figures the docs derive (docs/haptics.md "Device plausibility") for the default P2. */
static void test_bounds_of_the_default_p2(void **state) {
    PantographConfig c = pantograph_config_default();
    HapticServoDesc d = haptic_servo_desc_default();
    HapticMotionBounds b = haptic_motion_bounds(&c, &d.plausibility);
    print_message("motors %.1f m/s^2, acceleration %.1f m/s^2, travel %.3f m, speed %.2f m/s\n",
                  b.motor_accel, b.accel, b.travel, b.speed);
    /* full-scale torques at the workspace centre, J^-T tau on 120 g, are within the bound */
    PantographJoints q;
    double j[4];
    assert_true(pantograph_inverse(&c, pantograph_workspace_centre(&c), &q));
    assert_true(pantograph_jacobian(&c, &q, j));
    double det = j[0] * j[3] - j[1] * j[2], t = c.max_joint_torque;
    double f[2] = {(j[3] * t - j[2] * t) / det, (j[0] * t - j[1] * t) / det};
    assert_true(hypot(f[0], f[1]) / 0.12 <= b.motor_accel);
    assert_near(b.motor_accel, 126.7, 0.1);
    assert_near(b.accel, d.plausibility.hand_accel + b.motor_accel, 1e-9);
    assert_near(b.travel, 0.5, 1e-12);
    assert_near(b.speed, sqrt(4.0 + 2.0 * b.accel * 0.5), 1e-9);
    assert_near(b.speed, 16.7, 0.1);
}

/* Counts jittering by up to 20 counts (a loose connector) from 0.4 s: before, the handle at rest
 * under 0.5 N is judged plausible; after, the fault trips within 10 readings, the motors are off
 * at once (force, torques and the published enable all zero), the message names the figure, and
 * it is counted once however long the jitter goes on. Enabling again re-arms the check: the
 * still-jittering device trips it again. */
static void test_jitter_is_a_fault(void **state) {
    const char *args[] = {"--hand", "hold:0.02,0.155", "--encoder", "jitter:20@0.4", NULL};
    rig_open(args);
    testlog_capture();
    run_until(0.35, NULL);
    assert_near(haptic_servo_force(rig.servo).x, 0.5, 1e-9);
    run_until(0.4, NULL);
    for (int round = 1; round <= 2; round++) {
        int readings = rig.last_t >= 0.4 ? 1 : 0, periods = 0;
        while (haptic_servo_fault(rig.servo) == HAPTIC_FAULT_NONE) {
            assert_true(++periods < 2000);
            readings += rig_period() > 0.0;
        }
        print_message("round %d: tripped on the %d-th jittered reading\n", round, readings);
        assert_true(readings >= 1 && readings <= 10);
        HapticFault kind = haptic_servo_fault(rig.servo);
        assert_true(kind == HAPTIC_FAULT_ACCELERATION || kind == HAPTIC_FAULT_SPEED);
        assert_motors_off();
        assert_motion_message(kind);
        HapticServoStats st = published_stats();
        assert_near(st.motion_faults, round, 0.0);
        assert_near(st.fault, kind, 0.0);
        assert_true(st.fault_measured > st.fault_allowed);
        assert_true(st.fault_allowed > 0.0);
        assert_true(st.motion_ratio > 1.0);
        assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "device fault"), round);
        /* held: 300 more periods of jitter, the motors stay off, the fault is not recounted */
        for (int i = 0; i < 300; i++) {
            rig_period();
            assert_near(haptic_servo_force(rig.servo).x, 0.0, 0.0);
        }
        assert_int_equal(haptic_servo_fault(rig.servo), kind);
        HapticServoStats v = haptic_servo_stats(rig.servo);
        assert_near(v.motion_faults, round, 0.0);
        RegistrySlot h;
        registry_slot_read(rig.reg, REGISTRY_SLOT_HANDLE, &h);
        assert_false((unsigned)haptic_handle_unpack(&h).device_status & HAPTIC_STATUS_ENABLED);
        haptic_servo_enable(rig.servo, true); /* the user's explicit re-enable */
        assert_int_equal(haptic_servo_fault(rig.servo), HAPTIC_FAULT_NONE);
    }
    testlog_release();
}

/* Encoder 1 miscounts by 150 counts at 0.4 s (the handle would have moved several cm between
 * two frames). The reading that first shows it trips the fault, provided the servo read the
 * device at least every 10 ms around it (across a longer gap such a move is physically
 * possible: the run is repeated then, three times at most). */
static void test_jump_is_a_fault(void **state) {
    const char *args[] = {"--hand", "hold:0.02,0.155", "--encoder", "jump:150@0.4", NULL};
    for (int attempt = 1;; attempt++) {
        rig_open(args);
        testlog_capture();
        run_until(0.35, NULL);
        double spans[2];
        run_until(0.4, spans);
        HapticFault kind = haptic_servo_fault(rig.servo);
        print_message("attempt %d: the jump read over %.1f ms after a %.1f ms interval: %s\n",
                      attempt, 1e3 * spans[0], 1e3 * spans[1],
                      kind == HAPTIC_FAULT_NONE ? "no fault" : "fault");
        if (kind != HAPTIC_FAULT_NONE) {
            assert_motors_off();
            assert_motion_message(kind);
            assert_near(published_stats().motion_faults, 1.0, 0.0);
            assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "device fault"), 1);
            /* a jump is one event: after a re-enable the offset counts are consistent again */
            haptic_servo_enable(rig.servo, true);
            for (int i = 0; i < 200; i++)
                rig_period();
            assert_int_equal(haptic_servo_fault(rig.servo), HAPTIC_FAULT_NONE);
            assert_near(haptic_servo_force(rig.servo).x, 0.5, 1e-9);
            testlog_release();
            return;
        }
        assert_true(spans[0] > 0.01 || spans[1] > 0.01); /* missed although read closely */
        testlog_release();
        rig_teardown(NULL);
        if (attempt == 3)
            fail_msg("the jump was never read across intervals of at most 10 ms");
    }
}

/* Counts frozen from 0.4 to 0.7 s while the frames keep coming and the hand moves the handle
 * round a circle at 0.47 m/s: not a fault (a hand holding the handle still against the force
 * reads the same; docs/haptics.md), so the motors stay on with the same 0.5 N, no fault is
 * counted, and the velocity estimate settles to zero. When the counts come back they jump to
 * where the handle went meanwhile: that jump is a fault (read across at most 10 ms). */
static void test_frozen_counts(void **state) {
    const char *args[] = {"--start",   "0.05,0.155",     "--hand", "circle:0.03,0.4,0.2",
                          "--encoder", "freeze:0.4:0.7", NULL};
    rig_open(args);
    testlog_capture();
    run_until(0.4, NULL);
    HapticVec2 frozen = haptic_servo_kinematics(rig.servo)->pos;
    int readings = 0;
    double spans[2] = {0.0, 0.0};
    while (haptic_servo_kinematics(rig.servo)->t < 0.69) {
        double span = rig_period();
        readings += span > 0.0;
        if (span > 0.0) {
            spans[1] = spans[0];
            spans[0] = span;
        }
        const HapticKinematics *k = haptic_servo_kinematics(rig.servo);
        if (k->t >= 0.7)
            break; /* frames delivered late in a burst: the newest is already thawed */
        assert_int_equal(haptic_servo_fault(rig.servo), HAPTIC_FAULT_NONE);
        assert_near(k->pos.x, frozen.x, 1e-12);
        assert_near(k->pos.y, frozen.y, 1e-12);
        assert_near(haptic_servo_force(rig.servo).x, 0.5, 1e-9);
    }
    const HapticKinematics *k = haptic_servo_kinematics(rig.servo);
    print_message("%d frozen readings, velocity estimate (%.2g, %.2g) m/s\n", readings, k->vel.x,
                  k->vel.y);
    assert_true(readings > 100);
    if (k->t < 0.7) { /* still frozen: the estimate has settled, nothing counted */
        assert_true(hypot(k->vel.x, k->vel.y) < 1e-3);
        assert_near(published_stats().motion_faults, 0.0, 0.0);
        run_until(0.7, spans);
    }
    k = haptic_servo_kinematics(rig.servo);
    double moved = hypot(k->pos.x - frozen.x, k->pos.y - frozen.y);
    HapticFault kind = haptic_servo_fault(rig.servo);
    print_message("thawed: %.1f mm from the frozen reading, read over %.1f ms: %s\n", 1e3 * moved,
                  1e3 * spans[0], kind == HAPTIC_FAULT_NONE ? "no fault" : "fault");
    assert_true(moved > 0.02);
    if (spans[0] <= 0.01 && spans[1] <= 0.01) {
        assert_int_not_equal(kind, HAPTIC_FAULT_NONE);
        assert_motors_off();
        assert_motion_message(kind);
    }
    testlog_release();
}

/* No false positive at the mechanism's realistic top speed: a stiff hand (5000 N/m, 40 N s/m)
 * drives the handle round a 4 cm circle in 0.125 s (2.0 m/s, 100 m/s^2 centripetal) for 2,000
 * periods with the motors on. Nothing trips, and the run really reached that speed. */
static void test_fast_circle_is_plausible(void **state) {
    const char *args[] = {"--start",
                          "0.06,0.155",
                          "--hand",
                          "circle:0.04,0.125,0.3",
                          "--hand-stiffness",
                          "5000",
                          "--hand-damping",
                          "40",
                          NULL};
    rig_open(args);
    double peak = 0.0;
    int readings = 0;
    for (int i = 0; i < 2000; i++) {
        readings += rig_period() > 0.0;
        const HapticKinematics *k = haptic_servo_kinematics(rig.servo);
        peak = fmax(peak, hypot(k->vel.x, k->vel.y));
        if (haptic_servo_fault(rig.servo) != HAPTIC_FAULT_NONE)
            fail_msg("false positive after %d periods: %s", i,
                     haptic_servo_fault_message(rig.servo));
    }
    HapticServoStats v = haptic_servo_stats(rig.servo);
    print_message("%d readings, peak speed %.2f m/s, largest measured/allowed %.2f\n", readings,
                  peak, v.motion_ratio);
    assert_true(readings > 1000);
    assert_true(peak > 1.8);
    assert_true(v.motion_ratio < 1.0);
    assert_near(v.motion_faults, 0.0, 0.0);
    assert_near(haptic_servo_force(rig.servo).x, 0.5, 1e-9); /* the motors stayed on */
}

/* The protocol's FAULT status (amplifier fault, hardware emergency stop) from 0.4 to 0.6 s: the
 * reading that carries it turns the motors off with a message, counted once; when the device
 * clears it the motors stay off until enabled again. */
static void test_device_fault_status(void **state) {
    const char *args[] = {"--hand", "hold:0.02,0.155", "--amp-fault", "0.4:0.6", NULL};
    rig_open(args);
    testlog_capture();
    run_until(0.4, NULL);
    assert_int_equal(haptic_servo_fault(rig.servo), HAPTIC_FAULT_DEVICE);
    assert_motors_off();
    const char *m = haptic_servo_fault_message(rig.servo);
    print_message("fault: %s\n", m);
    assert_non_null(strstr(m, rig.sim.spec));
    assert_non_null(strstr(m, "reports FAULT"));
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "reports FAULT"), 1);
    HapticServoStats st = published_stats();
    assert_near(st.device_fault_reports, 1.0, 0.0);
    assert_near(st.fault, HAPTIC_FAULT_DEVICE, 0.0);
    assert_near(st.motion_faults, 0.0, 0.0);
    while (haptic_servo_kinematics(rig.servo)->t < 0.65) {
        rig_period();
        assert_near(haptic_servo_force(rig.servo).x, 0.0, 0.0);
    }
    for (int i = 0; i < 50; i++) { /* cleared on the device, still off here */
        rig_period();
        assert_near(haptic_servo_force(rig.servo).x, 0.0, 0.0);
    }
    haptic_servo_enable(rig.servo, true);
    for (int i = 0; i < 50; i++)
        rig_period();
    assert_near(haptic_servo_force(rig.servo).x, 0.5, 1e-9);
    HapticServoStats v = haptic_servo_stats(rig.servo);
    assert_near(v.device_fault_reports, 1.0, 0.0);
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "reports FAULT"), 1);
    testlog_release();
    haptic_simulator_stop(&rig.sim);
    assert_true(haptic_simulator_summary_value(&rig.sim, "amp_fault_frames") > 100);
}

/* The servo thread: jitter from 0.3 s trips the fault on the thread, the main thread sees it as
 * the GUI does (the HANDLE and SERVO_STATS slots, haptic_servo_fault), and its re-enable clears
 * the fault, which the still-jittering device trips again. Bounded by the servo's own period
 * count (SERVO_STATS), not by time; the teardown stops the thread when an assertion fails. */
static void test_fault_on_the_servo_thread(void **state) {
    const char *args[] = {"--hand", "hold:0.02,0.155", "--encoder", "jitter:20@0.3", NULL};
    rig_open(args);
    testlog_capture();
    IssimError err;
    assert_int_equal(haptic_servo_start(rig.servo, &err), ISSIM_OK);
    for (int round = 1; round <= 2; round++) {
        RegistrySlot h, st;
        double periods_at_start = -1.0;
        for (;;) {
            struct timespec nap = {0, 2000000};
            nanosleep(&nap, NULL);
            registry_slot_read(rig.reg, REGISTRY_SLOT_HANDLE, &h);
            registry_slot_read(rig.reg, REGISTRY_SLOT_SERVO_STATS, &st);
            if (st.count == 0)
                continue;
            if (periods_at_start < 0.0)
                periods_at_start = haptic_servo_stats_unpack(&st).periods;
            if (haptic_servo_stats_unpack(&st).motion_faults >= (uint64_t)round &&
                ((unsigned)haptic_handle_unpack(&h).limits & HAPTIC_LIMIT_FAULT))
                break;
            if (haptic_servo_stats_unpack(&st).periods > periods_at_start + 3000)
                fail_msg("round %d: no fault after 3000 periods of the servo", round);
            if (haptic_servo_state(rig.servo) != HAPTIC_SERVO_RUNNING) /* no more periods */
                fail_msg("round %d: the servo went to its safe state", round);
        }
        assert_int_equal(haptic_servo_state(rig.servo), HAPTIC_SERVO_RUNNING);
        HapticFault kind = haptic_servo_fault(rig.servo);
        assert_true(kind == HAPTIC_FAULT_ACCELERATION || kind == HAPTIC_FAULT_SPEED);
        assert_near(haptic_servo_stats_unpack(&st).motion_faults, round, 0.0);
        assert_near(haptic_handle_unpack(&h).enabled, 0.0, 0.0);
        assert_near(haptic_handle_unpack(&h).force.x, 0.0, 0.0);
        assert_near(haptic_handle_unpack(&h).tau1, 0.0, 0.0);
        print_message("round %d: fault seen %.0f periods after the round began\n", round,
                      (double)haptic_servo_stats_unpack(&st).periods - periods_at_start);
        if (round == 1) {
            haptic_servo_enable(rig.servo, true);
            assert_int_equal(haptic_servo_fault(rig.servo), HAPTIC_FAULT_NONE);
        }
    }
    haptic_servo_stop(rig.servo);
    /* latched since the second trip: one message each, whatever the jitter did meanwhile */
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "device fault"), 2);
    HapticServoStats v = haptic_servo_stats(rig.servo);
    assert_near(v.motion_faults, 2.0, 0.0);
    testlog_release();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds_of_the_default_p2),
        cmocka_unit_test_teardown(test_jitter_is_a_fault, rig_teardown),
        cmocka_unit_test_teardown(test_jump_is_a_fault, rig_teardown),
        cmocka_unit_test_teardown(test_frozen_counts, rig_teardown),
        cmocka_unit_test_teardown(test_fast_circle_is_plausible, rig_teardown),
        cmocka_unit_test_teardown(test_device_fault_status, rig_teardown),
        cmocka_unit_test_teardown(test_fault_on_the_servo_thread, rig_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
