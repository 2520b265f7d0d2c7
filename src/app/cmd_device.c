/* `issim device DEVICE SCENE ...`: runs a scene interactively (engine thread) with the haptic
 * servo on a device, headless, and prints the servo statistics. DEVICE is "sim" (starts the
 * simulated pantograph tools/pantosim, on a socket shared with it), "usb[:VID:PID]", "serial:PATH"
 * or "playback:FILE". Uses public headers only. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/core.h"
#include "issim/engine.h"
#include "issim/haptics_device.h"
#include "issim/haptics_servo.h"
#include "issim/io.h"
#include "issim/sim.h"

int cmd_device(int argc, char **argv);

typedef struct DeviceArgs {
    const char *device;
    const char *scene;
    double duration;
    double rate;
    bool enable;
    bool fifo;
    const char *record_handle; /* Nullable: CSV t,x,y of the handle for playback */
    const char *sim_args[16];
    int sim_argc;
} DeviceArgs;

static int device_usage(FILE *out) {
    fputs("usage: issim device DEVICE SCENE [--duration S] [--rate HZ] [--enable] [--no-fifo]\n"
          "                   [--hand free|hold:X,Y|circle:R,T] [--watchdog S]\n"
          "\n"
          "  DEVICE   sim (the simulated P2 pantograph on a pseudo-terminal), usb[:VID:PID],\n"
          "           serial:PATH or playback:FILE (CSV t,x,y of handle positions)\n"
          "  SCENE    a scene; its optional `haptics` table sets surfaces, textures and the\n"
          "           coupled proxy (scenes/pantograph_*.lua)\n"
          "  --duration S  run for S seconds of wall time (default 5)\n"
          "  --rate HZ     servo rate (default 1000; 4000 and more allowed)\n"
          "  --enable      enable the motors (always on for sim: nobody holds it)\n"
          "  --no-fifo     do not ask for SCHED_FIFO\n"
          "  --hand, --watchdog  passed to the simulated device (sim only)\n"
          "  --record-handle FILE  write the handle trajectory (CSV t,x,y, sampled every\n"
          "                millisecond) for playback:FILE\n"
          "\n"
          "Prints the servo statistics (rate, lateness percentiles, overruns, compute time).\n"
          "Exit status: 0 success, 1 device or scene error, 2 bad arguments.\n",
          out);
    return out == stderr ? 2 : 0;
}

static bool parse_number(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static int parse_device_args(int argc, char **argv, DeviceArgs *a) {
    *a = (DeviceArgs){.duration = 5.0, .rate = 1000.0, .fifo = true};
    int positional = 0;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--help") == 0)
            return device_usage(stdout) - 1;
        if (strcmp(arg, "--enable") == 0) {
            a->enable = true;
        } else if (strcmp(arg, "--no-fifo") == 0) {
            a->fifo = false;
        } else if (strcmp(arg, "--duration") == 0 || strcmp(arg, "--rate") == 0) {
            double *dst = arg[2] == 'd' ? &a->duration : &a->rate;
            if (!value || !parse_number(value, dst) || *dst <= 0) {
                fprintf(stderr, "issim: %s needs a positive number\n", arg);
                return 2;
            }
            i++;
        } else if (strcmp(arg, "--record-handle") == 0) {
            if (!value) {
                fprintf(stderr, "issim: --record-handle needs a file\n");
                return 2;
            }
            a->record_handle = argv[++i];
        } else if (strcmp(arg, "--hand") == 0 || strcmp(arg, "--watchdog") == 0) {
            if (!value || a->sim_argc > 12) {
                fprintf(stderr, "issim: %s needs a value\n", arg);
                return 2;
            }
            a->sim_args[a->sim_argc++] = arg;
            a->sim_args[a->sim_argc++] = value;
            i++;
        } else if (arg[0] == '-') {
            fprintf(stderr, "issim: unknown option '%s'\n", arg);
            return device_usage(stderr);
        } else if (positional == 0) {
            a->device = arg;
            positional++;
        } else if (positional == 1) {
            a->scene = arg;
            positional++;
        } else {
            fprintf(stderr, "issim: unexpected argument '%s'\n", arg);
            return device_usage(stderr);
        }
    }
    if (!a->device || !a->scene) {
        fprintf(stderr, "issim: device needs DEVICE and SCENE\n");
        return device_usage(stderr);
    }
    return 0;
}

/* The proxy's position in the newest frame, from its variables by name. */
static void print_proxy(const Registry *reg, const char *proxy) {
    const char *axes[3] = {"pos.x", "pos.y", "pos.z"};
    RegistryVarId pos[3];
    for (int i = 0; i < 3; i++) {
        char var[128];
        snprintf(var, sizeof var, "%s.%s", proxy, axes[i]);
        pos[i] = registry_var_id(reg, var);
    }
    double *values = calloc((size_t)registry_var_count(reg) + 1, sizeof(double));
    RegistryFrame f = {.values = values};
    if (values && registry_read_latest(reg, &f))
        printf("proxy %s: (%.4f, %.4f, %.4f) m at t = %.3f s\n", proxy,
               registry_frame_value(reg, &f, pos[0]), registry_frame_value(reg, &f, pos[1]),
               registry_frame_value(reg, &f, pos[2]), f.t);
    free(values);
}

static void print_stats(const HapticServo *servo, Sim *sim, const char *proxy) {
    HapticServoStats st = haptic_servo_stats(servo);
    printf("servo: %" PRIu64 " periods at %.1f Hz (configured %.0f Hz), %s scheduling\n",
           st.periods, st.measured_hz, st.rate_hz, st.fifo ? "SCHED_FIFO" : "normal");
    printf("lateness: p50 %.0f us, p99 %.0f us, p99.9 %.0f us, max %.0f us; %" PRIu64 " overruns\n",
           st.lateness_p50_us, st.lateness_p99_us, st.lateness_p999_us, st.lateness_max_us,
           st.overruns);
    printf("compute per period: mean %.1f us, max %.1f us; stale device reads %" PRIu64 "; "
           "force-limited periods %" PRIu64 "; engine stalls %" PRIu64 "\n",
           st.compute_mean_us, st.compute_max_us, st.stale_reads, st.force_limited,
           st.engine_stalls);
    printf("link (protocol %d): %" PRIu64 " CRC errors, %" PRIu64 " state frames lost, %" PRIu64
           " repeated or out of order (dropped)\n",
           HAPTIC_PROTOCOL_VERSION, st.crc_errors, st.frames_lost, st.frames_dropped);
    printf("device faults: %" PRIu64 " implausible handle motions (largest measured/allowed "
           "%.2f), %" PRIu64 " FAULT reports from the device\n",
           st.motion_faults, st.motion_ratio, st.device_fault_reports);
    if (haptic_servo_fault(servo) != HAPTIC_FAULT_NONE)
        printf("motors held off by a device fault: %s\n", haptic_servo_fault_message(servo));
    RegistrySlot slot;
    registry_slot_read(sim_registry(sim), REGISTRY_SLOT_HANDLE, &slot);
    HapticHandleState h = haptic_handle_unpack(&slot);
    printf("handle: (%.4f, %.4f) m, force (%.3f, %.3f) N, motors %s\n", h.pos.x, h.pos.y, h.force.x,
           h.force.y, h.enabled ? "enabled" : "disabled");
    if (proxy[0])
        print_proxy(sim_registry(sim), proxy);
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
    interrupted = sig;
}

/* Waits for the duration (or Ctrl-C), writing the handle slot's new samples to the recording. */
static void watch(Sim *sim, double duration, FILE *record) {
    double t0 = issim_wall_time();
    uint64_t last_count = 0;
    while (!interrupted && issim_wall_time() - t0 < duration) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        if (!record)
            continue;
        RegistrySlot h;
        registry_slot_read(sim_registry(sim), REGISTRY_SLOT_HANDLE, &h);
        if (h.count != last_count && h.count > 0) {
            HapticHandleState state = haptic_handle_unpack(&h);
            fprintf(record, "%.6f,%.9f,%.9f\n", h.t - t0, state.pos.x, state.pos.y);
            last_count = h.count;
        }
    }
}

/* The device on the scene (haptic_session_open: the same steps as the GUI's --device), the
 * engine thread, the servo; then the statistics. */
static int run_device(const DeviceArgs *a, Sim *sim, const HapticSessionDesc *desc) {
    Engine *e = sim_engine(sim); /* the engine thread has not started: ours to read */
    int count = engine_body_count(e);
    HapticSceneBody *bodies = calloc((size_t)(count > 0 ? count : 1), sizeof *bodies);
    if (!bodies) {
        fprintf(stderr, "issim: out of memory\n");
        return 1;
    }
    for (int b = 0; b < count; b++) {
        EngineBodyId id = engine_body_id(e, b);
        bodies[b] = (HapticSceneBody){engine_body_name(e, id), engine_body_id_pack(id)};
    }
    IssimError err = {0};
    HapticSession *session = haptic_session_open(desc, bodies, count, sim_registry(sim), &err);
    free(bodies);
    if (!session) {
        fprintf(stderr, "issim: %s\n", err.message);
        return 1;
    }
    const HapticSimulator *simulator = haptic_session_simulator(session);
    if (simulator)
        printf("simulated pantograph (pid %d) on %s\n", simulator->pid, simulator->spec);
    HapticServo *servo = haptic_session_servo(session);
    int rc = 1;
    bool started = false;
    if (sim_start(sim, &err) == ISSIM_OK) {
        if (haptic_session_start(session, &err) == ISSIM_OK) {
            started = true;
            haptic_servo_enable(servo, a->enable || simulator);
            FILE *record = a->record_handle ? fopen(a->record_handle, "w") : NULL;
            if (a->record_handle && !record)
                fprintf(stderr, "issim: cannot write %s: %s\n", a->record_handle, strerror(errno));
            if (record)
                fprintf(record, "t,x,y\n");
            watch(sim, a->duration, record);
            if (record && fclose(record) != 0)
                fprintf(stderr, "issim: writing %s failed\n", a->record_handle);
            haptic_servo_stop(servo);
            rc = haptic_servo_state(servo) == HAPTIC_SERVO_SAFE ? 1 : 0;
            print_stats(servo, sim, desc->proxy);
            if (rc)
                fprintf(stderr, "issim: %s\n", haptic_servo_error(servo));
        }
        sim_stop(sim);
    }
    if (!started)
        fprintf(stderr, "issim: %s\n", err.message);
    haptic_session_stop(session);
    if (simulator)
        printf("simulated device: %s\n", simulator->summary);
    haptic_session_destroy(session);
    return rc;
}

int cmd_device(int argc, char **argv) {
    DeviceArgs a;
    int rc = parse_device_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    char scene[PATH_MAX];
    IssimError err;
    if (scene_find(a.scene, scene, sizeof scene, &err) != ISSIM_OK) {
        fprintf(stderr, "issim: %s\n", err.message);
        return 1;
    }
    a.scene = scene;
    /* Ctrl-C ends the run through the normal path: motors disabled, statistics printed */
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    HapticSessionDesc desc = haptic_session_desc_default(a.device);
    desc.servo.rate_hz = a.rate;
    desc.servo.realtime = a.fifo;
    for (int i = 0; i < a.sim_argc; i++)
        desc.simulator_args[i] = a.sim_args[i];
    if (haptic_session_desc_load(&desc, a.scene, &err) != ISSIM_OK) {
        fprintf(stderr, "issim: %s\n", err.message);
        return 1;
    }
    SimOptions options = sim_options_default();
    options.quiet = true;
    Sim *sim = sim_create(a.scene, &options, &err);
    if (!sim) {
        fprintf(stderr, "issim: %s\n", err.message);
        return 1;
    }
    rc = run_device(&a, sim, &desc);
    sim_destroy(sim);
    return rc;
}
