/* Device layer end to end (no threads: the test paces haptic_servo_period itself at the servo
 * rate, as the thread would): libusb bring-up without a device, the serial back-end against
 * the device simulator over a pseudo-terminal (commanded forces reach the simulated motors and
 * move the handle; motors off until enabled; closing the link gives zero force and a clear
 * error; the device watchdog), playback, late periods without force spikes, and the host
 * watchdog fading the coupling after an engine stall; protocol 2's checks: a protocol-1
 * simulator refused by name, state frames that repeat or go backwards dropped and gaps
 * counted (frames written by the test into a pty), command numbering across a reopened link. */
#define _GNU_SOURCE /* posix_openpt, grantpt, unlockpt, ptsname */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "issim/engine.h"
#include "issim/haptics.h"
#include "testutil.h"

/* The simulator of the running test: stopped by the teardown even when an assertion fails. */
static HapticSimulator sim;

static int stop_simulator(void **state) {
    haptic_simulator_stop(&sim);
    return 0;
}

static void test_usb_without_a_device(void **state) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    HapticDevice *dev = haptic_device_open("usb", &c, &err);
    assert_null(dev);
    print_message("%s\n", err.message);
    assert_non_null(strstr(err.message, "no P2 pantograph (USB 1209:7050) found"));
    assert_non_null(strstr(err.message, "USB devices enumerated"));
    assert_null(haptic_device_open("usb:zz", &c, &err));
    assert_non_null(strstr(err.message, "bad USB ids"));
    assert_null(haptic_device_open("serial:/nonexistent/tty", &c, &err));
    assert_non_null(strstr(err.message, "cannot open serial device /nonexistent/tty"));
    assert_null(haptic_device_open("serial:/dev/null", &c, &err));
    assert_non_null(strstr(err.message, "not a serial line"));
    assert_null(haptic_device_open("carrier-pigeon", &c, &err));
    assert_non_null(strstr(err.message, "unknown device"));
}

/* A constant +x force through the real protocol: nothing moves while the motors are disabled,
 * then the handle accelerates along +x once enabled, and the simulated motors report the
 * torques J^T f. Killing the simulator gives a clear error, zero force and the safe state. */
static void test_forces_reach_the_simulated_motors(void **state) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    assert_int_equal(haptic_simulator_spawn_pty(&sim, NULL, NULL, &err), ISSIM_OK);
    test_simulator_realtime(sim.pid);
    char spec[160];
    snprintf(spec, sizeof spec, "serial:%s", sim.pty);
    HapticDevice *dev = haptic_device_open(spec, &c, &err);
    if (!dev)
        fail_msg("%s", err.message);
    assert_true(haptic_device_caps(dev).has_watchdog);
    HapticServoDesc desc = haptic_servo_desc_default();
    desc.constant_force = (HapticVec2){0.3, 0.0};
    HapticServo *servo = haptic_servo_create(dev, &c, &desc, NULL, &err);
    assert_non_null(servo);
    test_servo_run_periods(servo, 0.1);
    HapticVec2 start = haptic_servo_kinematics(servo)->pos;
    assert_near(haptic_servo_force(servo).x, 0.0, 0.0); /* disabled: no force */
    test_servo_run_periods(servo, 0.1);
    HapticVec2 still = haptic_servo_kinematics(servo)->pos;
    assert_near(still.x, start.x, 1e-3);
    haptic_servo_enable(servo, true);
    test_servo_run_periods(servo, 0.12);
    const HapticKinematics *k = haptic_servo_kinematics(servo);
    print_message("handle moved %.2f mm along x, %.2f mm along y, v = (%.3f, %.3f) m/s\n",
                  1e3 * (k->pos.x - still.x), 1e3 * (k->pos.y - still.y), k->vel.x, k->vel.y);
    /* 0.3 N on 120-260 g for 0.12 s: 8-18 mm along x */
    assert_true(k->pos.x - still.x > 4e-3);
    assert_true(fabs(k->pos.y - still.y) < 0.5 * (k->pos.x - still.x));
    assert_near(haptic_servo_force(servo).x, 0.3, 1e-9);
    double j[4];
    memcpy(j, k->jacobian, sizeof j);
    /* the link goes away */
    haptic_simulator_stop(&sim);
    print_message("simulator: %s\n", sim.summary);
    double tau1 = haptic_simulator_summary_value(&sim, "max_torque1");
    assert_true(haptic_simulator_summary_value(&sim, "commands") > 250);
    assert_near(tau1, fabs(j[0] * 0.3), 0.1 * fabs(j[0] * 0.3) + 5e-4);
    assert_true(haptic_simulator_summary_value(&sim, "enabled_s") > 0.1);
    testlog_capture();
    int n = test_servo_run_periods(servo, 0.3);
    assert_true(n < 300);
    assert_int_equal(haptic_servo_state(servo), HAPTIC_SERVO_SAFE);
    print_message("servo error: %s\n", haptic_servo_error(servo));
    assert_non_null(strstr(haptic_servo_error(servo), sim.pty));
    assert_true(strstr(haptic_servo_error(servo), "closed the link") ||
                strstr(haptic_servo_error(servo), "link lost"));
    assert_near(haptic_servo_force(servo).x, 0.0, 0.0);
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "motors disabled"), 1);
    testlog_release();
    haptic_servo_destroy(servo);
}

typedef struct WallRun {
    double depth, sd, force, peak_force;
} WallRun;

/* Closed loop over the protocol: the scripted hand (200 N/m, 2 N s/m) pulls the handle 5 mm into
 * a PD wall of stiffness k and 3 N s/m; statistics of the last 200 ms of 0.7 s. */
static WallRun hold_against_wall(double k) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    const char *args[] = {"--hand", "hold:0.02,0.145", "--start", "0.02,0.16", NULL};
    assert_int_equal(haptic_simulator_spawn(&sim, NULL, args, &err), ISSIM_OK);
    test_simulator_realtime(sim.pid);
    char spec[160];
    snprintf(spec, sizeof spec, "%s", sim.spec);
    HapticDevice *dev = haptic_device_open(spec, &c, &err);
    if (!dev)
        fail_msg("%s", err.message);
    HapticServoDesc desc = haptic_servo_desc_default();
    desc.surface_count = 1;
    desc.surfaces[0] = (HapticSurface){.kind = HAPTIC_SURFACE_WALL,
                                       .point = {0.02, 0.15},
                                       .normal = {0, 1},
                                       .stiffness = k,
                                       .damping = 3};
    HapticServo *servo = haptic_servo_create(dev, &c, &desc, NULL, &err);
    assert_non_null(servo);
    haptic_servo_enable(servo, true);
    test_servo_run_periods(servo, 0.5);
    double sum = 0, sum2 = 0, force = 0, peak = 0;
    int n = 0;
    for (int i = 0; i < 200; i++) {
        test_servo_run_periods(servo, 1e-3);
        double y = haptic_servo_kinematics(servo)->pos.y, f = haptic_servo_force(servo).y;
        sum += y;
        sum2 += y * y;
        force += f;
        peak = fmax(peak, fabs(f));
        n++;
    }
    assert_int_equal(haptic_servo_state(servo), HAPTIC_SERVO_RUNNING);
    haptic_servo_destroy(servo);
    haptic_simulator_stop(&sim);
    double mean = sum / n;
    return (WallRun){.depth = 0.15 - mean,
                     .sd = sqrt(fmax(sum2 / n - mean * mean, 0.0)),
                     .force = force / n,
                     .peak_force = peak};
}

/* At the 1 kHz design point of docs/haptics.md (1500 N/m with 3 N s/m) the handle comes to rest
 * at the static balance 1500 d = 200 (5 mm - d), d = 0.59 mm, without sustained oscillation. */
static void test_wall_holds_the_hand(void **state) {
    WallRun r = hold_against_wall(1500);
    double expected = 200.0 * 0.005 / 1700.0;
    print_message("1500 N/m: rest depth %.3f mm (static balance %.3f mm), sd %.3f mm, force %.3f "
                  "N\n",
                  1e3 * r.depth, 1e3 * expected, 1e3 * r.sd, r.force);
    assert_near(r.depth, expected, 0.4e-3); /* about one encoder count */
    assert_true(r.sd < 0.3e-3);             /* no sustained oscillation */
    assert_near(r.force, 1500 * expected, 0.6);
}

/* Well past the limit (8000 N/m against K_max of about 2(b + B) / (3T) = 3,300 N/m with one
 * period of delay) the same wall oscillates: the stability analysis predicts what the device
 * does. The force limits keep the oscillation bounded and the servo running. */
static void test_too_stiff_wall_oscillates(void **state) {
    WallRun r = hold_against_wall(8000);
    print_message("8000 N/m: mean depth %.3f mm, sd %.3f mm, peak force %.2f N\n", 1e3 * r.depth,
                  1e3 * r.sd, r.peak_force);
    assert_true(r.sd > 0.5e-3);
    assert_true(r.peak_force <= pantograph_config_default().max_force + 1e-9);
}

/* The device watchdog: commands stop while enabled -> the simulator zeroes its motors within
 * its timeout and says so in the status flags. */
static void test_device_watchdog(void **state) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    const char *args[] = {"--watchdog", "0.03", NULL};
    assert_int_equal(haptic_simulator_spawn(&sim, NULL, args, &err), ISSIM_OK);
    test_simulator_realtime(sim.pid);
    char spec[160];
    snprintf(spec, sizeof spec, "%s", sim.spec);
    HapticDevice *dev = haptic_device_open(spec, &c, &err);
    if (!dev)
        fail_msg("%s", err.message);
    HapticCommand on = {.seq = 1, .dac = {2100, 2000}, .enable = true};
    HapticSample s;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(haptic_device_write(dev, &on, &err), ISSIM_OK);
        assert_int_equal(haptic_device_read(dev, 0.002, &s, &err), ISSIM_OK);
    }
    assert_true(s.state.status & HAPTIC_STATUS_ENABLED);
    assert_false(s.state.status & HAPTIC_STATUS_WATCHDOG);
    /* silence: keep reading, send nothing, until the simulator says its watchdog tripped (the
       bound is only against a hang: a loaded machine may run the simulator late) */
    double t_last_command = issim_wall_time(), t_tripped = NAN;
    while (issim_wall_time() - t_last_command < TEST_WAIT_LIMIT_S) {
        assert_int_equal(haptic_device_read(dev, 0.002, &s, &err), ISSIM_OK);
        if (s.fresh && (s.state.status & HAPTIC_STATUS_WATCHDOG)) {
            t_tripped = s.host_t;
            break;
        }
    }
    assert_false(isnan(t_tripped));
    assert_false(s.state.status & HAPTIC_STATUS_ENABLED);
    print_message("device watchdog reported %.1f ms after the last command (timeout 30 ms)\n",
                  1e3 * (t_tripped - t_last_command));
    assert_true(t_tripped - t_last_command >= 0.03 - 2e-3);
    haptic_device_close(dev);
    haptic_simulator_stop(&sim);
    assert_true(haptic_simulator_summary_value(&sim, "watchdog_trips") >= 1);
    assert_true(haptic_simulator_summary_value(&sim, "commands_dropped") == 0);
}

/* A simulator speaking protocol 1 (CRC-16 frames) is refused with a message that says what
 * to do. */
static void test_protocol1_device_refused(void **state) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    const char *args[] = {"--protocol", "1", NULL};
    assert_int_equal(haptic_simulator_spawn(&sim, NULL, args, &err), ISSIM_OK);
    test_simulator_realtime(sim.pid);
    char spec[160];
    snprintf(spec, sizeof spec, "%s", sim.spec);
    HapticDevice *dev = haptic_device_open(spec, &c, &err);
    assert_null(dev);
    print_message("%s\n", err.message);
    assert_non_null(strstr(err.message, "device speaks protocol 1, issim needs 2: update the "
                                        "firmware or the simulator"));
    haptic_simulator_stop(&sim);
    assert_true(haptic_simulator_summary_value(&sim, "protocol") == 1);
}

/* The host continues the command numbering from the device's last_command_seq: after a close
 * and a reopen the simulator still takes every command (none counts as a repeat) and enables
 * its motors. */
static void test_command_numbering_across_reopen(void **state) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    assert_int_equal(haptic_simulator_spawn(&sim, NULL, NULL, &err), ISSIM_OK);
    test_simulator_realtime(sim.pid);
    char spec[160];
    snprintf(spec, sizeof spec, "%s", sim.spec);
    uint16_t first_seq[2] = {0, 0};
    for (int round = 0; round < 2; round++) {
        HapticDevice *dev = haptic_device_open(spec, &c, &err);
        if (!dev)
            fail_msg("%s", err.message);
        HapticCommand on = {.dac = {2048, 2048}, .enable = true};
        HapticSample s = {0};
        for (int i = 0; i < 30; i++) {
            assert_int_equal(haptic_device_write(dev, &on, &err), ISSIM_OK);
            if (i == 0)
                first_seq[round] = on.seq;
            assert_int_equal(haptic_device_read(dev, 0.002, &s, &err), ISSIM_OK);
        }
        /* until the simulator has taken the last command, however late it runs */
        double give_up = issim_wall_time() + TEST_WAIT_LIMIT_S;
        while (!(s.fresh && s.state.last_command_seq == on.seq) && issim_wall_time() < give_up)
            assert_int_equal(haptic_device_read(dev, 0.005, &s, &err), ISSIM_OK);
        assert_true(s.state.status & HAPTIC_STATUS_ENABLED);
        assert_int_equal(haptic_device_link_stats(dev).commands_sent, 30);
        haptic_device_close(dev);
    }
    print_message("first command numbers: %u, then %u after the reopen\n", first_seq[0],
                  first_seq[1]);
    assert_true(first_seq[1] > first_seq[0] + 29);
    haptic_simulator_stop(&sim);
    assert_true(haptic_simulator_summary_value(&sim, "commands_dropped") == 0);
    assert_true(haptic_simulator_summary_value(&sim, "commands") >= 60);
}

static void write_state(int fd, uint16_t seq, int32_t count, uint8_t protocol) {
    HapticState st = {.seq = seq,
                      .timestamp_us = 1000u * seq,
                      .counts = {count, -count},
                      .last_command_seq = 500,
                      .protocol = protocol};
    uint8_t frame[HAPTIC_FRAME_MAX];
    size_t n = haptic_encode_state(&st, frame);
    assert_int_equal(write(fd, frame, n), (ssize_t)n);
}

/* Frames written by hand into a pty: in order, a repeat, one from the past, a jump of 3 (2
 * lost), then a frame of protocol 3. Repeats and old frames are dropped, never applied; the
 * counts reach the link statistics; commands continue from the device's last_command_seq. */
static void test_sequence_checked_on_the_host(void **state) {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    char path[128];
    snprintf(path, sizeof path, "%s", ptsname(master));
    int slave = open(path, O_RDWR | O_NOCTTY);
    assert_true(slave >= 0);
    struct termios tio;
    tcgetattr(slave, &tio);
    cfmakeraw(&tio);
    tcsetattr(slave, TCSANOW, &tio);
    pid_t child = fork(); /* the first frame arrives while the host waits in its open */
    if (child == 0) {
        usleep(100000);
        write_state(master, 10, 100, HAPTIC_PROTOCOL_VERSION);
        _exit(0);
    }
    PantographConfig c = pantograph_config_default();
    IssimError err;
    char spec[160];
    snprintf(spec, sizeof spec, "serial:%s", path);
    HapticDevice *dev = haptic_device_open(spec, &c, &err);
    waitpid(child, NULL, 0);
    if (!dev)
        fail_msg("%s", err.message);
    HapticSample s;
    struct {
        uint16_t seq;
        int32_t count;
        bool applied;
    } script[] = {
        {11, 110, true}, {11, 666, false}, {9, 777, false}, {14, 140, true}, {15, 150, true}};
    int32_t applied = 100;
    for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) {
        write_state(master, script[i].seq, script[i].count, HAPTIC_PROTOCOL_VERSION);
        /* read until the frame is decoded (the open's frame and i before it): a pty hands bytes
           over through the kernel's flush work, which a loaded machine runs late */
        uint64_t want = 2 + i;
        double give_up = issim_wall_time() + TEST_WAIT_LIMIT_S;
        do
            assert_int_equal(haptic_device_read(dev, 0.01, &s, &err), ISSIM_OK);
        while (haptic_device_link_stats(dev).frames < want && issim_wall_time() < give_up);
        assert_int_equal(haptic_device_link_stats(dev).frames, want);
        assert_int_equal(s.fresh, script[i].applied);
        if (script[i].applied)
            applied = script[i].count;
        assert_int_equal(s.state.counts[0], applied); /* a dropped frame is never applied */
    }
    HapticLinkStats ls = haptic_device_link_stats(dev);
    assert_int_equal(ls.frames, 6);
    assert_int_equal(ls.seq_gaps, 1);
    assert_int_equal(ls.seq_lost, 2);
    assert_int_equal(ls.seq_dropped, 2);
    assert_int_equal(ls.crc_errors, 0);
    /* commands continue from the device's last_command_seq (500) */
    HapticCommand cmd = {.dac = {2048, 2048}};
    assert_int_equal(haptic_device_write(dev, &cmd, &err), ISSIM_OK);
    assert_int_equal(cmd.seq, 501);
    uint8_t bytes[64];
    ssize_t got = 0;
    struct pollfd pfd = {.fd = master, .events = POLLIN};
    while (got < HAPTIC_COMMAND_FRAME_SIZE && poll(&pfd, 1, (int)(1e3 * TEST_WAIT_LIMIT_S)) == 1) {
        ssize_t n = read(master, bytes + got, sizeof bytes - (size_t)got);
        if (n <= 0)
            break;
        got += n;
    }
    assert_int_equal(got, HAPTIC_COMMAND_FRAME_SIZE);
    HapticDecoder d;
    haptic_decoder_init(&d);
    HapticFrame f;
    haptic_decoder_feed(&d, bytes, (size_t)got, &f);
    assert_int_equal(f.kind, HAPTIC_DECODED_COMMAND);
    assert_int_equal(f.command.seq, 501);
    /* a frame of another protocol version is refused */
    write_state(master, 16, 160, 3);
    assert_int_equal(haptic_device_read(dev, 0.05, &s, &err), ISSIM_ERR_IO);
    print_message("%s\n", err.message);
    assert_non_null(strstr(err.message, "device speaks protocol 3, issim needs 2"));
    haptic_device_close(dev);
    close(slave);
    close(master);
}

/* Playback replays a recorded circle through the inverse kinematics and the encoders; the
 * servo's kinematics recover it within the encoder resolution. */
static void test_playback(void **state) {
    PantographConfig c = pantograph_config_default();
    const char *path = test_temp_path(".csv");
    IssimError err;
    assert_int_equal(haptic_playback_write_circle(path, &c, 0.03, 0.5, 0.6, &err), ISSIM_OK);
    char spec[300];
    snprintf(spec, sizeof spec, "playback:%s", path);
    HapticDevice *dev = haptic_device_open(spec, &c, &err);
    if (!dev)
        fail_msg("%s", err.message);
    assert_false(haptic_device_caps(dev).can_actuate);
    HapticServoDesc desc = haptic_servo_desc_default();
    HapticServo *servo = haptic_servo_create(dev, &c, &desc, NULL, &err);
    assert_non_null(servo);
    HapticVec2 centre = pantograph_workspace_centre(&c);
    double worst = 0.0;
    for (int i = 0; i < 600; i++) {
        assert_true(haptic_servo_period(servo, i * 1e-3));
        double t = i * 1e-3;
        const HapticKinematics *k = haptic_servo_kinematics(servo);
        double ex = k->pos.x - (centre.x + 0.03 * cos(2 * M_PI * t / 0.5));
        double ey = k->pos.y - (centre.y + 0.03 * sin(2 * M_PI * t / 0.5));
        worst = fmax(worst, hypot(ex, ey));
    }
    print_message("playback tracking error %.3f mm\n", 1e3 * worst);
    assert_true(worst < 0.7e-3); /* two encoder counts at most */
    testlog_capture();
    for (int i = 0; i < 10; i++)
        haptic_servo_period(servo, 0.6 + i * 1e-3);
    assert_int_equal(haptic_servo_state(servo), HAPTIC_SERVO_SAFE);
    assert_non_null(strstr(haptic_servo_error(servo), "playback ended"));
    testlog_release();
    haptic_servo_destroy(servo);
    remove(path);
}

/* A late period: the recorded handle jumps 6 mm into a stiff wall between two frames (what a
 * 6 ms stall at 1 m/s looks like). The force rises to its limit in steps of at most
 * max_force_step, never in one jump, and a step held to it is flagged (HAPTIC_LIMIT_SLEW, the
 * panel's "slew limit"). */
static void test_late_period_without_force_spike(void **state) {
    PantographConfig c = pantograph_config_default();
    HapticVec2 centre = pantograph_workspace_centre(&c);
    const char *path = test_temp_path(".csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "t,x,y\n0,%g,%g\n0.02,%g,%g\n0.021,%g,%g\n0.2,%g,%g\n", centre.x, centre.y, centre.x,
            centre.y, centre.x, centre.y - 0.006, centre.x, centre.y - 0.006);
    fclose(f);
    char spec[300];
    snprintf(spec, sizeof spec, "playback:%s", path);
    IssimError err;
    HapticServoDesc desc = haptic_servo_desc_default();
    desc.surface_count = 1;
    desc.surfaces[0] = (HapticSurface){.kind = HAPTIC_SURFACE_WALL,
                                       .point = {centre.x, centre.y - 0.0005},
                                       .normal = {0, 1},
                                       .stiffness = 3000,
                                       .damping = 0};
    HapticServo *servo =
        haptic_servo_create(haptic_device_open(spec, &c, &err), &c, &desc, NULL, &err);
    assert_non_null(servo);
    haptic_servo_enable(servo, true);
    double prev = 0.0, biggest_step = 0.0, peak = 0.0;
    int slewed = 0;
    for (int i = 0; i < 150; i++) {
        assert_true(haptic_servo_period(servo, i * 1e-3));
        double fy = haptic_servo_force(servo).y;
        bool held = (haptic_servo_limits(servo) & HAPTIC_LIMIT_SLEW) != 0;
        if (held) /* (an unflagged step may equal it too: the force limit's last step) */
            assert_near(fabs(fy - prev), desc.max_force_step, 1e-9);
        slewed += held;
        biggest_step = fmax(biggest_step, fabs(fy - prev));
        peak = fmax(peak, fy);
        prev = fy;
    }
    print_message("force reached %.2f N in steps of at most %.2f N (%d periods slewed)\n", peak,
                  biggest_step, slewed);
    assert_true(slewed >= 2);
    assert_true(biggest_step <= desc.max_force_step + 1e-9);
    assert_near(peak, fmin(3000 * 0.0055, c.max_force), 0.3); /* encoder-quantised depth */
    haptic_servo_destroy(servo);
    remove(path);
}

/* Host watchdog (servo side, deterministic clock): the "engine" publishes proxy frames, then
 * stops. The coupling force fades to zero, reaching it less than 50 ms after the last frame,
 * without a jump larger than one fade step. */
/* A servo coupled to a proxy (registry variables proxy.pos.x ... proxy.vel.z) with the handle
 * held at the workspace centre by a playback device, coupling stiffness 400 world N/m, the slew
 * limit out of the way, ramp-in engage_s. The caller frees servo, registry and file. */
typedef struct CoupledServo {
    Registry *reg;
    HapticServo *servo;
    HapticServoDesc desc;
    const char *path;
} CoupledServo;

static CoupledServo coupled_servo(double engage_s) {
    CoupledServo cs = {0};
    PantographConfig c = pantograph_config_default();
    RegistryDesc rd = registry_desc_default();
    rd.history_frames = 64;
    cs.reg = registry_create(&rd, NULL);
    const char *names[10] = {"proxy.pos.x",    "proxy.pos.y",    "proxy.pos.z",    "proxy.orient.w",
                             "proxy.orient.x", "proxy.orient.y", "proxy.orient.z", "proxy.vel.x",
                             "proxy.vel.y",    "proxy.vel.z"};
    for (int i = 0; i < 10; i++)
        assert_int_equal(registry_add_var(cs.reg, names[i], "", NULL), i);
    cs.path = test_temp_path(".csv");
    HapticVec2 centre = pantograph_workspace_centre(&c);
    FILE *f = fopen(cs.path, "w");
    assert_non_null(f);
    fprintf(f, "0,%g,%g\n1,%g,%g\n", centre.x, centre.y, centre.x, centre.y);
    fclose(f);
    char spec[300];
    snprintf(spec, sizeof spec, "playback:%s", cs.path);
    IssimError err;
    cs.desc = haptic_servo_desc_default();
    issim_strlcpy(cs.desc.coupling.proxy, "proxy", sizeof cs.desc.coupling.proxy);
    /* no engine reads the HANDLE slot here: any non-null body id */
    cs.desc.coupling.proxy_body = engine_body_id_pack((EngineBodyId){0, 1});
    cs.desc.coupling.stiffness = 400; /* world N/m */
    cs.desc.coupling.engage_s = engage_s;
    cs.desc.max_force_step = 100; /* keep the slew limit out of the way */
    cs.servo = haptic_servo_create(haptic_device_open(spec, &c, &err), &c, &cs.desc, cs.reg, &err);
    assert_non_null(cs.servo);
    return cs;
}

static void coupled_servo_destroy(CoupledServo *cs) {
    haptic_servo_destroy(cs->servo);
    registry_destroy(cs->reg);
    remove(cs->path);
}

static void test_engine_stall_fades_the_coupling(void **state) {
    /* the proxy sits 2 cm off in world x; the fade alone (no slew limit, no ramp-in) */
    CoupledServo cs = coupled_servo(0.0);
    Registry *reg = cs.reg;
    HapticServo *servo = cs.servo;
    const HapticServoDesc desc = cs.desc;
    haptic_servo_enable(servo, true);
    testlog_capture();
    double proxy[10] = {0.02, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    double t_last_frame = 0.0, t_zero = NAN, prev = 0.0, biggest_step = 0.0;
    for (int i = 0; i < 200; i++) {
        double now = 10.0 + i * 1e-3;
        if (i < 100) {
            registry_publish(reg, i * 1e-3, proxy);
            t_last_frame = now;
        }
        assert_true(haptic_servo_period(servo, now));
        RegistrySlot h;
        registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &h);
        double fx = haptic_servo_force(servo).x;
        if (i > 5)
            biggest_step = fmax(biggest_step, fabs(fx - prev));
        prev = fx;
        if (i < 100)
            assert_near(fx, 400 * 0.02 / desc.coupling.force_scale, 1e-9);
        if (i >= 100 && fx == 0.0 && isnan(t_zero)) {
            t_zero = now;
            assert_near(haptic_handle_unpack(&h).coupling_k, 0.0, 0.0); /* the engine lets go too */
        }
    }
    print_message("stall to zero coupling force: %.1f ms (largest step %.3f N)\n",
                  1e3 * (t_zero - t_last_frame), biggest_step);
    assert_false(isnan(t_zero));
    assert_true(t_zero - t_last_frame < 0.05);
    assert_true(biggest_step < 0.1 * 400 * 0.02 / desc.coupling.force_scale);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "no engine frame"), 1);
    testlog_release();
    HapticServoStats v = haptic_servo_stats(servo);
    assert_near(v.engine_stalls, 1.0, 0.0);
    coupled_servo_destroy(&cs);
}

/* Ramp-in: after the motors are asked on, the coupling force (servo side) and the gains the
 * engine applies (HANDLE slot) rise linearly from zero to full over engage_s, and restart from
 * zero after an emergency stop and re-enable. */
static void test_coupling_ramps_in(void **state) {
    /* the proxy sits 2 cm off in world x: 8 N, 1.6 N on the handle */
    CoupledServo cs = coupled_servo(0.1);
    Registry *reg = cs.reg;
    HapticServo *servo = cs.servo;
    const HapticServoDesc desc = cs.desc;
    double proxy[10] = {0.02, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    double full = 400 * 0.02 / desc.coupling.force_scale;
    for (int round = 0; round < 2; round++) {
        haptic_servo_enable(servo, true);
        for (int i = 0; i <= 150; i++) {
            double now = 10.0 + round + i * 1e-3;
            registry_publish(reg, round + i * 1e-3, proxy);
            assert_true(haptic_servo_period(servo, now));
            double expect = fmin(i * 1e-3 / 0.1, 1.0);
            assert_near(haptic_servo_force(servo).x, expect * full, 1e-9);
            RegistrySlot h;
            registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &h);
            assert_near(haptic_handle_unpack(&h).coupling_k, expect * 400, 1e-9);
        }
        haptic_servo_emergency_stop(servo);
        assert_true(haptic_servo_period(servo, 10.0 + round + 0.2));
        assert_near(haptic_servo_force(servo).x, 0.0, 0.0);
    }
    coupled_servo_destroy(&cs);
}

/* Motors stay off until enabled, and an emergency stop turns them off until re-enabled. */
static void test_enable_and_emergency_stop(void **state) {
    PantographConfig c = pantograph_config_default();
    const char *path = test_temp_path(".csv");
    IssimError err;
    assert_int_equal(haptic_playback_write_circle(path, &c, 0.01, 1.0, 1.0, &err), ISSIM_OK);
    char spec[300];
    snprintf(spec, sizeof spec, "playback:%s", path);
    HapticServoDesc desc = haptic_servo_desc_default();
    desc.constant_force = (HapticVec2){0.5, 0.5};
    HapticServo *servo =
        haptic_servo_create(haptic_device_open(spec, &c, &err), &c, &desc, NULL, &err);
    assert_non_null(servo);
    int i = 0;
    for (; i < 10; i++)
        haptic_servo_period(servo, i * 1e-3);
    assert_near(haptic_servo_force(servo).x, 0.0, 0.0);
    haptic_servo_enable(servo, true);
    for (; i < 20; i++)
        haptic_servo_period(servo, i * 1e-3);
    assert_near(haptic_servo_force(servo).x, 0.5, 1e-12);
    haptic_servo_emergency_stop(servo);
    haptic_servo_period(servo, i++ * 1e-3);
    assert_near(haptic_servo_force(servo).x, 0.0, 0.0); /* at once, no slew tail */
    haptic_servo_enable(servo, true);
    haptic_servo_period(servo, i++ * 1e-3);
    assert_true(haptic_servo_force(servo).x > 0.0);
    haptic_servo_destroy(servo);
    remove(path);
}

/* The engine side of the coupling: the spring/damper of the slot's gains between the handle's
 * world point and the proxy, in x and y; nothing from a stale slot, zero gains or no proxy. */
static void test_engine_side_coupling(void **state) {
    HapticHandleState handle = {.world = {0.3, -0.1, 0.0},
                                .world_vel = {0.5, 0.0},
                                .proxy_body = engine_body_id_pack((EngineBodyId){1, 1}),
                                .coupling_k = 200,
                                .coupling_b = 4};
    RegistrySlot h = {.t = 5.0, .count = 1};
    haptic_handle_pack(&handle, &h);
    Vec3 f;
    assert_true(haptic_coupling_engine_force(&h, (Vec3){0.25, -0.1, 0.03}, (Vec3){0.1, 0.2, -1},
                                             5.01, 0.1, &f));
    assert_near(f.x, 200 * 0.05 + 4 * 0.4, 1e-12);
    assert_near(f.y, 4 * -0.2, 1e-12);
    assert_near(f.z, 0.0, 0.0); /* the table carries the proxy: no vertical coupling */
    assert_false(haptic_coupling_engine_force(&h, (Vec3){0, 0, 0}, (Vec3){0, 0, 0}, 5.2, 0.1, &f));
    assert_near(f.x, 0.0, 0.0);
    handle.coupling_k = handle.coupling_b = 0; /* faded or disabled */
    haptic_handle_pack(&handle, &h);
    assert_false(haptic_coupling_engine_force(&h, (Vec3){0, 0, 0}, (Vec3){0, 0, 0}, 5.0, 0.1, &f));
    handle.coupling_k = 200;
    handle.proxy_body = 0;
    haptic_handle_pack(&handle, &h);
    assert_false(haptic_coupling_engine_force(&h, (Vec3){0, 0, 0}, (Vec3){0, 0, 0}, 5.0, 0.1, &f));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usb_without_a_device),
        cmocka_unit_test_teardown(test_forces_reach_the_simulated_motors, stop_simulator),
        cmocka_unit_test_teardown(test_device_watchdog, stop_simulator),
        cmocka_unit_test_teardown(test_protocol1_device_refused, stop_simulator),
        cmocka_unit_test_teardown(test_command_numbering_across_reopen, stop_simulator),
        cmocka_unit_test(test_sequence_checked_on_the_host),
        cmocka_unit_test_teardown(test_wall_holds_the_hand, stop_simulator),
        cmocka_unit_test_teardown(test_too_stiff_wall_oscillates, stop_simulator),
        cmocka_unit_test(test_playback),
        cmocka_unit_test(test_late_period_without_force_spike),
        cmocka_unit_test(test_engine_stall_fades_the_coupling),
        cmocka_unit_test(test_coupling_ramps_in),
        cmocka_unit_test(test_enable_and_emergency_stop),
        cmocka_unit_test(test_engine_side_coupling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
