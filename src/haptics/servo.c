/* The haptic servo (seed 000 B.4.1 and B.7: haptic rendering at 300-1000 Hz; 004 ch. 2-3).
 *
 * The thread wakes at absolute deadlines (clock_nanosleep, TIMER_ABSTIME, CLOCK_MONOTONIC), so
 * a late wake-up never shifts the following ones; under SCHED_FIFO when the system permits
 * (a warning otherwise, and a 1 us timer slack instead of the default 50 us). Each period:
 * read the newest device frame -> kinematics -> passivity observer -> force (constant + local
 * surfaces + coupling) -> passivity controller (off by default) -> safety chain -> J^T -> torques
 * (+ joint-space texture) -> D/A -> write. What it publishes as the handle force is the force the
 * motors are commanded with, J^-T of the torques sent to the D/A, so the joint-space texture (004
 * eqs. 3.36-3.43) shows in the panel and the statistics like every other part of the force.
 *
 * Safety chain, in this order, the last step before the D/A being the torque limit:
 *  1. NaN guard on the force (replaced by zero, flagged);
 *  2. workspace and singularity fade (HapticKinematics.force_scale);
 *  3. handle force limit |f| <= max_force;
 *  4. slew limit |f - f_prev| <= max_force_step per period: a late period (the handle moved
 *     further than usual meanwhile) or a wall onset cannot produce a force spike;
 *  5. joint torque limit and NaN guard on the torques; then the D/A saturates anyway.
 * The motors stay disabled (enable flag off, zero D/A) until haptic_servo_enable, and after an
 * emergency stop until enabled again. A device error (unplugged, simulator gone, silent link)
 * sends the servo to its safe state: zero force, motors disabled, the message kept; the
 * device's own watchdog zeroes the motors if even the disable command cannot get through.
 *
 * Device plausibility (docs/haptics.md "Device plausibility"): before the force is computed,
 * each new reading is judged against what the mechanism can do. Two readings further apart than
 * the handle can travel between their timestamps, or three that imply a larger acceleration
 * (both bounds widened by the encoder's quantisation), mean the counts are wrong: jitter, a loose
 * connector, a miscount. The safety chain would only limit the force such readings make (an
 * encoder jittering by tens of counts held the D/A at full scale for 1,790 periods, issue 34); a
 * fault turns the motors off at once, names the figure and its bound, and holds until the user
 * enables the motors again. The device's own FAULT status latches the same way.
 *
 * Late periods: a wake-up later than one whole period is an overrun; the missed deadlines are
 * skipped (not replayed in a burst) and counted. Lateness goes into a 1 us histogram, so the
 * percentiles the registry shows cost O(bins) to compute and nothing to record.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "coupling_internal.h"
#include "issim/haptics_servo.h"

#define LATENESS_BINS 20000 /* 1 us each (20 ms); the last bin collects everything later */
#define STATS_INTERVAL_S 0.05
/* The quantisation of a reading is linearised through the Jacobian; over one count (3 mrad)
   the second-order term is below 1% of it, so 10% covers it and the solver's tolerance. */
#define QUANTUM_SLACK 1.1

/* One reading as the motion checks keep it. */
typedef struct MotionReading {
    HapticVec2 pos;
    double t;       /* device time, s */
    double quantum; /* m: how far one count of both encoders moves the handle here */
    bool free;      /* inside the force region, away from the mechanism's end stops */
} MotionReading;

/* What the servo sent last period (servo thread; read for the statistics). */
typedef struct ServoOutput {
    double force[2];         /* the models' handle force last period, after steps 1-4 */
    double tau[2];           /* joint torques sent to the D/A last period, N m */
    double motor_force[2];   /* J^-T tau: the force the motors are commanded with, N */
    double texture_force[2]; /* the texture's part of it, N */
    /* the deepest local model in contact: its depth (handle m) and normal force (N), 0 if none */
    double traced_depth, traced_force;
    bool motors_on;
    unsigned limits;
} ServoOutput;

/* Statistics (servo thread only). */
typedef struct ServoCounters {
    /* statistics (servo thread only) */
    uint64_t periods, overruns, missed_deadlines, stale_reads, device_errors, force_limited;
    uint64_t texture_periods;
    /* |motor_force| over the current statistics interval, and the last interval's figures */
    double window_sum_sq, window_peak, force_rms, force_peak;
    uint64_t window_periods;
    uint32_t lateness_hist[LATENESS_BINS];
    uint64_t lateness_samples;
    double lateness_max;
    double compute_sum, compute_max;
    /* the local models' loop: its time over the run, and the last period's models */
    double models_compute_sum, models_compute_max;
    int models, models_touching;
    double t_first, t_last, last_stats;
} ServoCounters;

/* Device plausibility (servo thread, except fault: any thread clears it by enabling). */
typedef struct ServoPlausibility {
    /* device plausibility (servo thread, except fault: any thread clears it by enabling) */
    bool judge; /* the device can actuate and the check is on */
    HapticMotionBounds bounds;
    MotionReading motion[2]; /* the newest reading judged, then the one before */
    int motion_readings;
    atomic_int fault; /* HapticFault latched until haptic_servo_enable(true) */
    bool device_fault_on;
    uint64_t motion_faults, device_fault_reports;
    double fault_measured, fault_allowed, motion_ratio;
    char fault_message[384];
} ServoPlausibility;

/* Passivity observer and controller (servo thread only). */
typedef struct ServoPassivity {
    /* passivity observer and controller (servo thread only) */
    double port_energy, port_energy_min; /* J into the environment over the run */
    double passivity_max_damping;        /* N s/m, resolved at creation */
    HapticVec2 port_pos;                 /* handle position of the last solved period */
    HapticVec2 port_dx;                  /* its displacement over this period, m */
    double port_force[2];                /* motor_force of the last period, N */
    bool have_port_pos;
} ServoPassivity;

/* Local models (servo thread only): the newest block, the gain of the engine-derived force
 * (heartbeat hold and fade), that force before the chain (handle N), and the impulse rendered on
 * the handle in world units over impulse_time of the servo's clock. */
typedef struct ServoLocal {
    /* local models (servo thread only): the newest block, the gain of the engine-derived force
       (heartbeat hold and fade), that force before the chain (handle N), and the impulse
       rendered on the handle in world units over impulse_time of the servo's clock */
    bool local_on;
    bool local_dropped_said; /* the warning about contacts left out was logged */
    HapticLocalSet local;
    double local_gain;
    uint64_t local_faded_periods; /* periods local models were faded: the engine's beat late */
    double engine_force[2];
    double impulse[2], impulse_time, last_now;
} ServoLocal;

struct HapticServo {
    HapticDevice *dev;
    PantographConfig config;
    HapticServoDesc desc;
    Registry *reg;
    HapticKinematics kin;
    HapticRng rng;
    CouplingState coupling;
    double period;
    pthread_t thread;
    bool thread_running;
    atomic_bool stop_requested;
    atomic_bool enable_requested;
    atomic_bool estop;
    atomic_int state;
    char error[512];
    bool fifo;
    ServoOutput out;
    ServoCounters counts;
    ServoPlausibility plausibility;
    ServoPassivity passivity;
    ServoLocal local_models;
};

HapticServoDesc haptic_servo_desc_default(void) {
    return (HapticServoDesc){
        .rate_hz = 1000.0,
        .realtime = true,
        .fifo_priority = 80,
        .max_force_step = 1.0,
        .seed = 0x5eed,
        .coupling = haptic_coupling_default(),
        .plausibility = {.enabled = true,
                         .hand_speed = 2.0,
                         .hand_accel = 150.0,
                         .handle_mass_min = 0.12},
        .passivity = {.enabled = false, .max_damping = 0.0},
        .local = haptic_local_desc_default(),
        .subcount = false,
        .observer_memory_s = 0.0095, /* 0.9 per period at 1 kHz (docs/haptics.md) */
    };
}

/* The force J^-T tau on the handle for joint torques tau. */
static bool joint_to_handle(const double j[4], const double tau[2], double out[2]);

HapticMotionBounds haptic_motion_bounds(const PantographConfig *c, const HapticPlausibility *p) {
    /* The motors push hardest where J is least well conditioned; the acceleration check only
       applies inside the force region (the workspace and its fade margin), so search there. */
    double worst = 0.0;
    const int n = 32;
    for (int i = 0; i <= n; i++)
        for (int k = 0; k <= n; k++) {
            double wx = c->workspace_max_x - c->workspace_min_x + 2 * c->workspace_margin;
            double wy = c->workspace_max_y - c->workspace_min_y + 2 * c->workspace_margin;
            HapticVec2 at = {c->workspace_min_x - c->workspace_margin + wx * i / n,
                             c->workspace_min_y - c->workspace_margin + wy * k / n};
            PantographJoints q;
            double j[4];
            if (!pantograph_inverse(c, at, &q) || !pantograph_jacobian(c, &q, j))
                continue;
            /* |J^-T tau| over the torque box peaks at a corner */
            double corners[2][2] = {{1, 1}, {1, -1}}, f[2];
            for (int m = 0; m < 2; m++) {
                double tau[2] = {corners[m][0] * c->max_joint_torque,
                                 corners[m][1] * c->max_joint_torque};
                if (joint_to_handle(j, tau, f))
                    worst = fmax(worst, hypot(f[0], f[1]));
            }
        }
    HapticMotionBounds b;
    b.motor_accel = worst / p->handle_mass_min;
    b.accel = p->hand_accel + b.motor_accel;
    b.travel = 2.0 * fmax(c->d1 + c->d2, c->d4 + c->d3);
    b.speed = sqrt(p->hand_speed * p->hand_speed + 2.0 * b.accel * b.travel);
    return b;
}

static void prepare_textures(HapticServoDesc *d, IssimError *err, IssimStatus *s) {
    for (int i = 0; i < d->surface_count && *s == ISSIM_OK; i++)
        if (d->surfaces[i].has_texture)
            *s = haptic_texture_prepare(&d->surfaces[i].texture, err);
}

/* Local models need the coupling (the proxy whose contacts they are) and the registry's board. */
static IssimStatus local_models_init(HapticServo *servo, const HapticServoDesc *desc,
                                     const Registry *reg, IssimError *err) {
    const HapticLocalDesc *l = &desc->local;
    if (!reg || !haptic_coupling_on(&desc->coupling))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "haptic local models need a coupled proxy (haptics.coupling.proxy) "
                               "and the scene's registry");
    if (!(l->hold_s >= 0.0 && l->fade_s >= 0.0 && l->hold_s + l->fade_s <= 0.01))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "local models: hold %g s and fade %g s must be >= 0 and together "
                               "at most 0.01 s (an engine stall must end the force within 10 ms)",
                               l->hold_s, l->fade_s);
    IssimStatus s = haptic_local_set_init(&servo->local_models.local, reg, err);
    servo->local_models.local_on = s == ISSIM_OK;
    return s;
}

HapticServo *haptic_servo_create(HapticDevice *dev, const PantographConfig *config,
                                 const HapticServoDesc *desc, Registry *reg, IssimError *err) {
    if (!dev)
        return NULL; /* the failed haptic_device_open already said why in err */
    IssimStatus s = pantograph_config_check(config, err);
    if (s == ISSIM_OK && (!(desc->rate_hz >= 100.0) || desc->rate_hz > 20000.0))
        s = issim_error_set(err, ISSIM_ERR_RANGE, "servo rate %g Hz outside 100..20000",
                            desc->rate_hz);
    const HapticPlausibility *pl = &desc->plausibility;
    if (s == ISSIM_OK && pl->enabled &&
        !(pl->hand_speed > 0.0 && pl->hand_accel > 0.0 && pl->handle_mass_min > 0.0))
        s = issim_error_set(err, ISSIM_ERR_RANGE,
                            "plausibility limits must be positive (hand %g m/s, %g m/s^2, handle "
                            "mass %g kg)",
                            pl->hand_speed, pl->hand_accel, pl->handle_mass_min);
    if (s == ISSIM_OK && !(desc->passivity.max_damping >= 0.0))
        s = issim_error_set(err, ISSIM_ERR_RANGE,
                            "passivity max_damping %g N s/m must be >= 0 (0: automatic)",
                            desc->passivity.max_damping);
    if (s == ISSIM_OK && desc->subcount &&
        !(desc->observer_rotor_inertia > 0.0 && desc->observer_handle_mass > 0.0 &&
          desc->observer_memory_s > 0.0))
        s = issim_error_set(err, ISSIM_ERR_RANGE,
                            "the observer below one count needs the device's rotor inertia (%g kg "
                            "m^2), handle mass (%g kg) and a memory (%g s), all > 0",
                            desc->observer_rotor_inertia, desc->observer_handle_mass,
                            desc->observer_memory_s);
    if (s == ISSIM_OK && (desc->surface_count < 0 || desc->surface_count > HAPTIC_MAX_SURFACES))
        s = issim_error_set(err, ISSIM_ERR_RANGE, "%d surfaces (at most %d)", desc->surface_count,
                            HAPTIC_MAX_SURFACES);
    HapticServo *servo = s == ISSIM_OK ? calloc(1, sizeof *servo) : NULL;
    if (s == ISSIM_OK && !servo)
        s = issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    if (s == ISSIM_OK) {
        servo->desc = *desc;
        prepare_textures(&servo->desc, err, &s);
    }
    if (s == ISSIM_OK)
        s = haptic_coupling_bind(&desc->coupling, &servo->coupling, reg, err);
    if (s == ISSIM_OK && desc->local.enabled)
        s = local_models_init(servo, desc, reg, err);
    if (s != ISSIM_OK) {
        if (servo)
            haptic_coupling_unbind(&servo->coupling);
        free(servo);
        haptic_device_close(dev);
        return NULL;
    }
    servo->dev = dev;
    servo->config = *config;
    servo->reg = reg;
    servo->period = 1.0 / desc->rate_hz;
    haptic_kinematics_init(&servo->kin, config);
    servo->kin.subcount = desc->subcount;
    servo->kin.observer = (HapticObserver){.rotor_inertia = desc->observer_rotor_inertia,
                                           .handle_mass = desc->observer_handle_mass,
                                           .theta = exp(-servo->period / desc->observer_memory_s),
                                           .lead_s = desc->observer_lead_s};
    haptic_rng_seed(&servo->rng, desc->seed);
    atomic_init(&servo->state, HAPTIC_SERVO_RUNNING);
    atomic_init(&servo->stop_requested, false);
    atomic_init(&servo->enable_requested, false);
    atomic_init(&servo->estop, false);
    atomic_init(&servo->plausibility.fault, HAPTIC_FAULT_NONE);
    /* playback replays positions, with no motors to turn off */
    servo->plausibility.judge = desc->plausibility.enabled && haptic_device_caps(dev).can_actuate;
    servo->passivity.passivity_max_damping =
        desc->passivity.max_damping > 0.0 ? desc->passivity.max_damping
                                          : desc->plausibility.handle_mass_min / servo->period;
    if (servo->plausibility.judge)
        servo->plausibility.bounds = haptic_motion_bounds(config, &desc->plausibility);
    servo->local_models.local_gain =
        1.0; /* the coupling's engage ramps the motors in at the start */
    return servo;
}

void haptic_servo_destroy(HapticServo *servo) {
    if (!servo)
        return;
    haptic_servo_stop(servo);
    haptic_device_close(servo->dev);
    haptic_coupling_unbind(&servo->coupling);
    haptic_local_set_free(&servo->local_models.local);
    free(servo);
}

static void go_safe(HapticServo *servo, const char *message) {
    if (atomic_load(&servo->state) == HAPTIC_SERVO_SAFE)
        return;
    issim_strlcpy(servo->error, message, sizeof servo->error);
    atomic_store(&servo->state, HAPTIC_SERVO_SAFE);
    servo->counts.device_errors++;
    servo->out.force[0] = servo->out.force[1] = 0.0;
    servo->out.tau[0] = servo->out.tau[1] = 0.0;
    servo->out.motor_force[0] = servo->out.motor_force[1] = 0.0;
    servo->out.texture_force[0] = servo->out.texture_force[1] = 0.0;
    servo->out.motors_on = false;
    uint16_t mid = (uint16_t)(1u << (servo->config.dac_bits - 1));
    HapticCommand off = {.dac = {mid, mid}, .enable = false};
    haptic_device_write(servo->dev, &off, NULL);
    issim_log(ISSIM_LOG_ERROR, "haptics: %s; motors disabled, force zero", message);
}

static double vec_norm(const double v[2]) {
    return hypot(v[0], v[1]);
}

/* ===== Device plausibility ===== */

/* How far one count of each encoder moves the handle at the posture just solved. */
static double reading_quantum(const HapticKinematics *k) {
    const double *j = k->jacobian;
    double count = 2.0 * M_PI / k->config.counts_per_rev;
    return QUANTUM_SLACK * count * (hypot(j[0], j[2]) + hypot(j[1], j[3]));
}

/* Latches a fault (the first one holds until re-enabled), says why, and shows it at once. */
static bool trip(HapticServo *servo, HapticFault kind, double measured, double allowed,
                 const char *message, double now) {
    int none = HAPTIC_FAULT_NONE;
    if (!atomic_compare_exchange_strong(&servo->plausibility.fault, &none, (int)kind))
        return false;
    if (kind != HAPTIC_FAULT_DEVICE)
        servo->plausibility.motion_faults++;
    servo->plausibility.fault_measured = measured;
    servo->plausibility.fault_allowed = allowed;
    if (snprintf(servo->plausibility.fault_message, sizeof servo->plausibility.fault_message,
                 "%s: %s", haptic_device_caps(servo->dev).name,
                 message) >= (int)sizeof servo->plausibility.fault_message)
        servo->plausibility.fault_message[sizeof servo->plausibility.fault_message - 2] =
            '~'; /* cut: say so */
    issim_log(ISSIM_LOG_ERROR, "haptics: device fault: %s", servo->plausibility.fault_message);
    /* publish the count with this period (now - (now - STATS_INTERVAL_S) may round below it) */
    servo->counts.last_stats = -INFINITY;
    return true;
}

/* Judges a new reading against the two before it (docs/haptics.md "Device plausibility").
 * Quantisation: a count is decoded at its middle, so each base angle is off by less than half a
 * count; a difference of two readings is then off by less than q = count (|J col 1| + |J col 5|)
 * on the handle, a change of two consecutive mean velocities by less than q (1/dt + 1/dt1). */
static void judge_motion(HapticServo *servo, double now) {
    const HapticKinematics *k = &servo->kin;
    MotionReading r = {k->measured, k->t, reading_quantum(k), k->force_scale > 0.0};
    const MotionReading *a = &servo->plausibility.motion[0], *b = &servo->plausibility.motion[1];
    double dt = servo->plausibility.motion_readings >= 1 ? r.t - a->t : 0.0;
    if (servo->plausibility.motion_readings >= 1 && !(dt > 0.0))
        return; /* no new device time: nothing to judge, keep the older reading */
    char msg[320];
    bool tripped = false;
    if (servo->plausibility.motion_readings >= 1) {
        double q = fmax(r.quantum, a->quantum);
        double speed = hypot(r.pos.x - a->pos.x, r.pos.y - a->pos.y) / dt;
        double allowed = servo->plausibility.bounds.speed + q / dt;
        servo->plausibility.motion_ratio = fmax(servo->plausibility.motion_ratio, speed / allowed);
        if (speed > allowed) {
            snprintf(msg, sizeof msg,
                     "implausible handle speed: %.3g m/s measured, %.3g m/s allowed (%.3g for the "
                     "mechanism + %.3g for one count of each encoder in %.3g ms): the encoder "
                     "counts jumped (loose connector, noise, miscount); motors off until enabled "
                     "again",
                     speed, allowed, servo->plausibility.bounds.speed, q / dt, 1e3 * dt);
            tripped = trip(servo, HAPTIC_FAULT_SPEED, speed, allowed, msg, now);
        }
    }
    double dt1 = servo->plausibility.motion_readings >= 2 ? a->t - b->t : 0.0;
    /* the end stops stop the handle harder than any bound: judge acceleration only away from
       them, where the two older readings lie in the force region */
    if (!tripped && servo->plausibility.motion_readings >= 2 && dt1 > 0.0 && a->free && b->free) {
        double q = fmax(r.quantum, fmax(a->quantum, b->quantum));
        double mid = 0.5 * (dt + dt1); /* between the two intervals' middles */
        double dv = hypot((r.pos.x - a->pos.x) / dt - (a->pos.x - b->pos.x) / dt1,
                          (r.pos.y - a->pos.y) / dt - (a->pos.y - b->pos.y) / dt1);
        double accel = dv / mid, quantised = q * (1.0 / dt + 1.0 / dt1) / mid;
        double allowed = servo->plausibility.bounds.accel + quantised;
        servo->plausibility.motion_ratio = fmax(servo->plausibility.motion_ratio, accel / allowed);
        if (accel > allowed) {
            snprintf(msg, sizeof msg,
                     "implausible handle acceleration: %.4g m/s^2 measured, %.4g m/s^2 allowed "
                     "(%.4g for the hand and motors + %.4g for the encoder resolution over %.3g "
                     "and %.3g ms): the encoder counts jitter (loose connector, noise); motors "
                     "off until enabled again",
                     accel, allowed, servo->plausibility.bounds.accel, quantised, 1e3 * dt1,
                     1e3 * dt);
            tripped = trip(servo, HAPTIC_FAULT_ACCELERATION, accel, allowed, msg, now);
        }
    }
    /* A trip says the readings disagree; judging the next ones against those before it would
       report the same event again (a jump, then the "stop" after it) once re-enabled. */
    if (tripped)
        servo->plausibility.motion_readings = 0;
    servo->plausibility.motion[1] = servo->plausibility.motion[0];
    servo->plausibility.motion[0] = r;
    servo->plausibility.motion_readings =
        servo->plausibility.motion_readings < 2 ? servo->plausibility.motion_readings + 1 : 2;
}

/* The device's FAULT status, on its rising edge: until now it only kept the motors off while
   set, silently, and they came back by themselves when it cleared. */
static void judge_status(HapticServo *servo, const HapticSample *sample, double now) {
    bool on = (sample->state.status & HAPTIC_STATUS_FAULT) != 0;
    if (on && !servo->plausibility.device_fault_on) {
        servo->plausibility.device_fault_reports++;
        char msg[200];
        snprintf(msg, sizeof msg,
                 "the device reports FAULT (amplifier fault or hardware emergency stop); motors "
                 "off until it clears and they are enabled again");
        if (atomic_load(&servo->plausibility.fault) !=
            HAPTIC_FAULT_NONE) /* already latched: say it anyway */
            issim_log(ISSIM_LOG_ERROR, "haptics: device fault: %s: %s",
                      haptic_device_caps(servo->dev).name, msg);
        trip(servo, HAPTIC_FAULT_DEVICE, 0.0, 0.0, msg, now);
    }
    servo->plausibility.device_fault_on = on;
}

/* Steps 1-4 of the safety chain on the handle force. */
static void limit_force(HapticServo *servo, double f[2]) {
    if (!isfinite(f[0]) || !isfinite(f[1])) {
        f[0] = f[1] = 0.0;
        servo->out.limits |= HAPTIC_LIMIT_NONFINITE;
    }
    f[0] *= servo->kin.force_scale;
    f[1] *= servo->kin.force_scale;
    double n = vec_norm(f);
    if (n > servo->config.max_force) {
        f[0] *= servo->config.max_force / n;
        f[1] *= servo->config.max_force / n;
        servo->out.limits |= HAPTIC_LIMIT_FORCE;
    }
    double d[2] = {f[0] - servo->out.force[0], f[1] - servo->out.force[1]};
    double step = vec_norm(d);
    if (step > servo->desc.max_force_step) {
        double s = servo->desc.max_force_step / step;
        f[0] = servo->out.force[0] + s * d[0];
        f[1] = servo->out.force[1] + s * d[1];
        servo->out.limits |= HAPTIC_LIMIT_SLEW;
    }
}

/* ===== Passivity (Hannaford and Ryu 2002, docs/haptics.md "Passivity") =====
 * The port is the handle: the environment (every model the servo renders) takes the handle's
 * motion and answers with a force. Over period n the observer adds the work the handle did
 * against the motors' force along its displacement, -(F(n-1) + F(n)) / 2 . (x(n) - x(n-1)),
 * F the force the motors were commanded with (after the whole safety chain). The mean of the
 * two forces rather than the held F(n-1) alone: the displacement is read from encoders, and a
 * position-dependent force changes exactly when a count flips, so with F(n-1) alone each flip
 * outwards was charged one count further out than inwards, k q^2 of phantom output per flip
 * (1.6 mJ per bounce on a 2 kN/m wall at 10 kHz) that the controller then fought; with the mean
 * a staircase force comes back to zero over a closed path, as it does in the mechanism. */
static void observe_port(HapticServo *servo) {
    const HapticKinematics *k = &servo->kin;
    servo->passivity.port_dx = (HapticVec2){0, 0};
    /* with the observer (HapticServoDesc.subcount) its estimate below the count now (pos less
       its lead), closer to the handle's true path than the counts' middles, whose whole-count
       steps would charge a smooth force's changes at the wrong places */
    double lead = k->subcount ? k->observer.lead_s : 0.0; /* the estimate now, not ahead */
    HapticVec2 at = {k->pos.x - lead * k->vel.x, k->pos.y - lead * k->vel.y};
    if (servo->passivity.have_port_pos)
        servo->passivity.port_dx =
            (HapticVec2){at.x - servo->passivity.port_pos.x, at.y - servo->passivity.port_pos.y};
    servo->passivity.port_pos = at;
    servo->passivity.have_port_pos = true;
}

/* The energy after this period if the motors are commanded with f. */
static double port_energy_with(const HapticServo *servo, const double f[2]) {
    HapticVec2 d = servo->passivity.port_dx;
    return servo->passivity.port_energy - 0.5 * ((servo->passivity.port_force[0] + f[0]) * d.x +
                                                 (servo->passivity.port_force[1] + f[1]) * d.y);
}

/* Closes the period's account with the force actually commanded. */
static void commit_port_energy(HapticServo *servo) {
    servo->passivity.port_energy = port_energy_with(servo, servo->out.motor_force);
    servo->passivity.port_energy_min =
        fmin(servo->passivity.port_energy_min, servo->passivity.port_energy);
    servo->passivity.port_force[0] = servo->out.motor_force[0];
    servo->passivity.port_force[1] = servo->out.motor_force[1];
}

/* The controller: while the energy the observer expects at the end of this period (with the
 * environment's force f) is negative, a damping force -alpha v whose work over the next period
 * returns the deficit, alpha = -E / (dT |v|^2), no more, capped by the damping ceiling. v is
 * the last displacement over the period, not the kinematics' 30 Hz filtered velocity: that one
 * lags by 5 ms, and a damper on it pulled the handle into a 1 kN/m wall at 4-6 N at 1 kHz. And
 * the controller only takes away the part of the environment's force that does work along the
 * motion: the force along v ends between zero and what the environment asked for, never
 * reversed and never larger, and nothing changes while the environment absorbs energy
 * (F . v <= 0). It acts before the safety chain, so every limit still applies after it. */
static void passivity_control(HapticServo *servo, double f[2]) {
    HapticVec2 v = {servo->passivity.port_dx.x / servo->period,
                    servo->passivity.port_dx.y / servo->period};
    double speed = hypot(v.x, v.y), energy = port_energy_with(servo, f);
    if (!servo->desc.passivity.enabled || !(energy < 0.0) || !(speed > 0.0))
        return;
    double u[2] = {v.x / speed, v.y / speed};
    double along = f[0] * u[0] + f[1] * u[1]; /* > 0: the environment pushes along the motion */
    if (!(along > 0.0))
        return;
    double alpha =
        fmin(-energy / (servo->period * speed * speed), servo->passivity.passivity_max_damping);
    double cut = fmin(alpha * speed, along);
    f[0] -= cut * u[0];
    f[1] -= cut * u[1];
}

/* The gain of the local models' force: faded at once when the engine's beat is late, but back
 * only over `fade`: after a fade the handle may be deep in a surface it did not feel, and a full
 * model at once there pushed it out with the force limit (8 mJ out of the port in one press
 * under load). Refreshes the servo's copy of the newest block first. */
static double local_models_gain(HapticServo *servo, double now) {
    ServoLocal *l = &servo->local_models;
    haptic_local_set_refresh(&l->local, servo->reg, now);
    double beat_gain =
        haptic_local_gain(&servo->desc.local, now - registry_board_heartbeat(servo->reg));
    double ramp = servo->desc.local.fade_s > 0.0 ? servo->period / servo->desc.local.fade_s : 1.0;
    l->local_gain = fmin(beat_gain, l->local_gain + ramp);
    l->local_faded_periods += l->local_gain < 1.0;
    if (l->local.have) {
        const HapticLocalHeader *h = (const HapticLocalHeader *)l->local.block;
        if (h->dropped > 0 && !l->local_dropped_said) {
            l->local_dropped_said = true;
            issim_log(ISSIM_LOG_WARN,
                      "haptics: %u of the proxy's contacts are not rendered as local models (more "
                      "than %d, or their state does not fit the registry's board of %zu bytes: a "
                      "contact map's FFT convolution state; map_convolution = \"direct\" fits)",
                      h->dropped, HAPTIC_LOCAL_MAX_MODELS, l->local.room);
        }
    }
    return l->local_gain * servo->coupling.engage;
}

/* Every local model of the period, in one loop (haptic_models_evaluate): the scene's surfaces
 * and, with local models on, the proxy's contacts. */
static void evaluate_models(HapticServo *servo, double now, HapticModelOutput *out) {
    ServoLocal *l = &servo->local_models;
    const HapticCoupling *c = &servo->desc.coupling;
    HapticModelInput in = {
        .kin = &servo->kin,
        .rng = &servo->rng,
        .world = servo->coupling.handle_world,
        .world_vel = servo->coupling.handle_world_vel,
        .position_scale = c->position_scale > 0.0 ? c->position_scale : 1.0,
        .force_scale = c->force_scale > 0.0 ? c->force_scale : 1.0,
    };
    if (l->local_on) {
        in.contact_gain = local_models_gain(servo, now);
        if (l->local.have)
            in.elapsed = now - ((const HapticLocalHeader *)l->local.block)->wall;
    }
    double t0 = issim_wall_time();
    haptic_models_evaluate(servo->desc.surfaces, servo->desc.surface_count,
                           l->local_on ? &l->local : NULL, &in, out);
    double spent = issim_wall_time() - t0;
    servo->counts.models_compute_sum += spent;
    servo->counts.models_compute_max = fmax(servo->counts.models_compute_max, spent);
    servo->counts.models = out->evaluated;
    servo->counts.models_touching = out->touching;
}

/* The force before the chain: constant + engine-derived (the coupling's spring, or with local
 * models on the proxy's contacts: the engine moves the proxy to the handle itself,
 * HapticLocalDesc.track_hz, as a god object follows the device in free space, so the spring is
 * not rendered) + the scene's surfaces. */
static void compute_force(HapticServo *servo, double now, double f[2], double tau_texture[2]) {
    double engine[2] = {0, 0};
    haptic_coupling_servo_force(&servo->desc.coupling, &servo->coupling, servo->reg, &servo->kin,
                                now, engine);
    HapticModelOutput models;
    evaluate_models(servo, now, &models);
    if (servo->local_models.local_on) {
        engine[0] = models.contact_force[0];
        engine[1] = models.contact_force[1];
    }
    servo->local_models.engine_force[0] = engine[0];
    servo->local_models.engine_force[1] = engine[1];
    f[0] = servo->desc.constant_force.x + engine[0] + models.surface_force[0];
    f[1] = servo->desc.constant_force.y + engine[1] + models.surface_force[1];
    tau_texture[0] = models.tau_texture[0];
    tau_texture[1] = models.tau_texture[1];
    servo->out.traced_depth = models.traced_depth;
    servo->out.traced_force = models.traced_force;
}

/* The impulse the servo rendered on the handle through the engine's part of the force this
 * period, world N s (the engine applies minus it to the proxy). The part after the safety chain
 * is the force commanded less the other models' part (constant force, local surfaces), exact
 * when the engine's part is all there is. */
static void account_impulse(HapticServo *servo, double now, const double before[2],
                            const double after[2]) {
    double dt = servo->local_models.impulse_time > 0.0 || servo->local_models.last_now != 0.0
                    ? now - servo->local_models.last_now
                    : servo->period;
    servo->local_models.last_now = now;
    if (!(dt > 0.0) || dt > 0.1) /* a first period, or a clock jump: no time to account */
        return;
    double scale = servo->desc.coupling.force_scale;
    for (int i = 0; i < 2; i++) {
        double others = before[i] - servo->kin.force_scale * servo->local_models.engine_force[i];
        double engine = after[i] == 0.0 && before[i] == 0.0 ? 0.0 : after[i] - others;
        servo->local_models.impulse[i] += scale * engine * dt;
    }
    servo->local_models.impulse_time += dt;
}

/* The handle force equivalent to joint torques tau: J^T f = tau solved for f. Returns false
 * (out untouched) at a singular Jacobian, where the force fade has already zeroed the motors. */
static bool joint_to_handle(const double j[4], const double tau[2], double out[2]) {
    double det = j[0] * j[3] - j[1] * j[2];
    if (!(fabs(det) > 1e-12))
        return false;
    out[0] = (j[3] * tau[0] - j[2] * tau[1]) / det;
    out[1] = (j[0] * tau[1] - j[1] * tau[0]) / det;
    return true;
}

/* What the motors are commanded with, seen on the handle, and the texture's part of it. */
static void record_motor_force(HapticServo *servo, const double f[2], const double tex[2]) {
    const double *j = servo->kin.jacobian;
    double scaled_tex[2] = {servo->kin.force_scale * tex[0], servo->kin.force_scale * tex[1]};
    servo->out.motor_force[0] = f[0];
    servo->out.motor_force[1] = f[1];
    servo->out.texture_force[0] = servo->out.texture_force[1] = 0.0;
    joint_to_handle(j, servo->out.tau, servo->out.motor_force);
    joint_to_handle(j, scaled_tex, servo->out.texture_force);
    if (servo->out.tau[0] == 0.0 && servo->out.tau[1] == 0.0) /* off, or nothing to render */
        servo->out.motor_force[0] = servo->out.motor_force[1] = 0.0;
    if (tex[0] != 0.0 || tex[1] != 0.0)
        servo->counts.texture_periods++;
    double n = vec_norm(servo->out.motor_force);
    servo->counts.window_sum_sq += n * n;
    servo->counts.window_peak = fmax(servo->counts.window_peak, n);
    servo->counts.window_periods++;
}

/* Step 5 and the D/A. */
static HapticCommand to_command(HapticServo *servo, const double f[2], const double tex[2],
                                bool enable) {
    const double *j = servo->kin.jacobian;
    double s = servo->kin.force_scale;
    double tau[2] = {j[0] * f[0] + j[2] * f[1] + s * tex[0],
                     j[1] * f[0] + j[3] * f[1] + s * tex[1]};
    uint16_t mid = (uint16_t)(1u << (servo->config.dac_bits - 1));
    HapticCommand cmd = {.dac = {mid, mid}, .enable = enable};
    for (int i = 0; i < 2; i++) {
        if (!isfinite(tau[i])) {
            tau[i] = 0.0;
            servo->out.limits |= HAPTIC_LIMIT_NONFINITE;
        }
        if (fabs(tau[i]) > servo->config.max_joint_torque) {
            tau[i] = copysign(servo->config.max_joint_torque, tau[i]);
            servo->out.limits |= HAPTIC_LIMIT_TORQUE;
        }
        if (enable)
            cmd.dac[i] = pantograph_torque_to_dac(&servo->config, tau[i], NULL);
        servo->out.tau[i] = enable ? tau[i] : 0.0;
    }
    return cmd;
}

static void publish_handle(HapticServo *servo, const HapticSample *sample, double now) {
    const HapticKinematics *k = &servo->kin;
    const HapticCoupling *c = &servo->desc.coupling;
    double fade = servo->coupling.fade * servo->coupling.engage;
    HapticHandleState h = {
        .pos = k->pos,
        .vel = k->vel,
        .force = {servo->out.motor_force[0], servo->out.motor_force[1]},
        .world = servo->coupling.handle_world,
        .world_vel = {servo->coupling.handle_world_vel.x, servo->coupling.handle_world_vel.y},
        /* the engine applies exactly the gains the servo renders (faded after a stall, ramped in
           after the motors come on, zero while they are off: the handle is not held then) */
        .coupling_k = servo->out.motors_on ? fade * c->stiffness : 0.0,
        .coupling_b = servo->out.motors_on ? fade * c->damping : 0.0,
        .enabled = servo->out.motors_on,
        .limits = servo->out.limits,
        .device_status = sample ? sample->state.status : 0,
        .q1 = k->joints.q1,
        .q5 = k->joints.q5,
        .tau1 = servo->out.tau[0],
        .tau5 = servo->out.tau[1],
        .texture_force = {servo->out.texture_force[0], servo->out.texture_force[1]},
        .frame_t = servo->coupling.have_frame ? servo->coupling.frame_t : NAN,
        .proxy_body = haptic_coupling_on(c) ? c->proxy_body : 0,
        .local_models = servo->local_models.local_on,
        .track_omega = servo->local_models.local_on && servo->out.motors_on
                           ? 2.0 * M_PI * servo->desc.local.track_hz *
                                 servo->local_models.local_gain * servo->coupling.engage
                           : 0.0,
        .impulse = {servo->local_models.impulse[0], servo->local_models.impulse[1]},
        .impulse_time = servo->local_models.impulse_time,
        .reaction_limit = c->force_scale * servo->config.max_force,
        .traced_depth = servo->out.traced_depth,
        .traced_force = servo->out.traced_force,
    };
    haptic_handle_write(servo->reg, now, &h);
}

/* Closes the statistics interval's force figures (a single period's random texture pulse says
 * little to someone reading a panel at 60 fps; the RMS and peak over 50 ms do). */
static void close_force_window(HapticServo *servo) {
    servo->counts.force_rms =
        servo->counts.window_periods
            ? sqrt(servo->counts.window_sum_sq / (double)servo->counts.window_periods)
            : 0.0;
    servo->counts.force_peak = servo->counts.window_peak;
    servo->counts.window_sum_sq = servo->counts.window_peak = 0.0;
    servo->counts.window_periods = 0;
}

static void publish_stats(HapticServo *servo, double now) {
    close_force_window(servo);
    HapticServoStats stats = haptic_servo_stats(servo);
    haptic_servo_stats_write(servo->reg, now, &stats);
    servo->counts.last_stats = now;
}

/* The GUI learns of the safe state at once, not at the next statistics interval. */
static void publish_safe_state(HapticServo *servo, double now) {
    if (!servo->reg)
        return;
    publish_handle(servo, NULL, now);
    publish_stats(servo, now);
}

bool haptic_servo_period(HapticServo *servo, double now) {
    if (atomic_load(&servo->state) != HAPTIC_SERVO_RUNNING)
        return false;
    double t0 = issim_wall_time();
    if (servo->counts.periods == 0)
        servo->counts.t_first = now;
    servo->counts.t_last = now;
    servo->counts.periods++;
    HapticSample sample;
    IssimError err;
    if (haptic_device_read(servo->dev, 0.0, &sample, &err) != ISSIM_OK) {
        go_safe(servo, err.message);
        publish_safe_state(servo, now);
        return false;
    }
    if (!sample.fresh)
        servo->counts.stale_reads++;
    servo->out.limits = 0;
    /* the observer's model is driven by the torques applied over the period now ending */
    servo->kin.observer.tau[0] = servo->out.tau[0];
    servo->kin.observer.tau[1] = servo->out.tau[1];
    bool solved = haptic_kinematics_update(&servo->kin, sample.state.counts[0],
                                           sample.state.counts[1], sample.t);
    servo->out.limits |= servo->kin.flags;
    judge_status(servo, &sample, now);
    if (servo->plausibility.judge && sample.fresh) {
        if (solved)
            judge_motion(servo, now);
        else
            servo->plausibility.motion_readings = 0; /* no position to judge against */
    }
    bool fault = atomic_load(&servo->plausibility.fault) != HAPTIC_FAULT_NONE;
    if (fault)
        servo->out.limits |= HAPTIC_LIMIT_FAULT;
    bool want = atomic_load(&servo->enable_requested) && !atomic_load(&servo->estop) && !fault;
    double f[2] = {0, 0}, tex[2] = {0, 0};
    haptic_coupling_engage(&servo->desc.coupling, &servo->coupling, want, now);
    if (solved) {
        observe_port(servo);
        compute_force(servo, now, f, tex);
        passivity_control(servo, f);
    } else {
        servo->passivity.have_port_pos = false; /* no displacement across a lost posture */
        servo->passivity.port_dx = (HapticVec2){0, 0};
    }
    bool enable = solved && want && !(sample.state.status & HAPTIC_STATUS_FAULT);
    if (!enable)
        f[0] = f[1] = tex[0] = tex[1] = servo->local_models.engine_force[0] =
            servo->local_models.engine_force[1] = servo->out.traced_force = 0.0;
    if (!solved)
        servo->out.traced_depth = servo->out.traced_force = 0.0;
    double before[2] = {f[0] * servo->kin.force_scale, f[1] * servo->kin.force_scale};
    limit_force(servo, f);
    if (!enable) /* off means off: no slew tail */
        f[0] = f[1] = 0.0;
    if (servo->local_models.local_on)
        account_impulse(servo, now, before, f);
    HapticCommand cmd = to_command(servo, f, tex, enable);
    servo->out.force[0] = f[0];
    servo->out.force[1] = f[1];
    record_motor_force(servo, f, tex); /* tex is zero with the motors off */
    commit_port_energy(servo);
    servo->out.motors_on = enable;
    if (servo->out.limits &
        (HAPTIC_LIMIT_FORCE | HAPTIC_LIMIT_TORQUE | HAPTIC_LIMIT_WORKSPACE | HAPTIC_LIMIT_SINGULAR))
        servo->counts.force_limited++;
    if (haptic_device_write(servo->dev, &cmd, &err) != ISSIM_OK) {
        go_safe(servo, err.message);
        publish_safe_state(servo, now);
        return false;
    }
    double compute = issim_wall_time() - t0;
    servo->counts.compute_sum += compute;
    servo->counts.compute_max = fmax(servo->counts.compute_max, compute);
    if (servo->reg) {
        publish_handle(servo, &sample, now);
        if (now - servo->counts.last_stats >= STATS_INTERVAL_S)
            publish_stats(servo, now);
    }
    return true;
}

static double hist_quantile(const HapticServo *servo, double q) {
    if (servo->counts.lateness_samples == 0)
        return 0.0;
    uint64_t rank = (uint64_t)ceil(q * (double)servo->counts.lateness_samples), seen = 0;
    for (int i = 0; i < LATENESS_BINS; i++) {
        seen += servo->counts.lateness_hist[i];
        if (seen >= rank && seen > 0)
            return i + 0.5;
    }
    return LATENESS_BINS;
}

HapticServoStats haptic_servo_stats(const HapticServo *servo) {
    double span = servo->counts.t_last - servo->counts.t_first;
    HapticLinkStats link = haptic_device_link_stats(servo->dev);
    return (HapticServoStats){
        .rate_hz = servo->desc.rate_hz,
        .measured_hz = span > 0 ? (double)(servo->counts.periods - 1) / span : 0.0,
        .periods = servo->counts.periods,
        .lateness_p50_us = hist_quantile(servo, 0.5),
        .lateness_p99_us = hist_quantile(servo, 0.99),
        .lateness_p999_us = hist_quantile(servo, 0.999),
        .lateness_max_us = 1e6 * servo->counts.lateness_max,
        .overruns = servo->counts.overruns,
        .compute_mean_us = servo->counts.periods
                               ? 1e6 * servo->counts.compute_sum / (double)servo->counts.periods
                               : 0.0,
        .compute_max_us = 1e6 * servo->counts.compute_max,
        .fifo = servo->fifo,
        .stale_reads = servo->counts.stale_reads,
        .device_errors = servo->counts.device_errors,
        .state = atomic_load(&servo->state),
        .engine_stalls = servo->coupling.stalls,
        .force_limited = servo->counts.force_limited,
        .missed_deadlines = servo->counts.missed_deadlines,
        .crc_errors = link.crc_errors,
        .frames_lost = link.seq_lost,
        .frames_dropped = link.seq_dropped,
        .force_rms = servo->counts.force_rms,
        .force_peak = servo->counts.force_peak,
        .texture_periods = servo->counts.texture_periods,
        .motion_faults = servo->plausibility.motion_faults,
        .device_fault_reports = servo->plausibility.device_fault_reports,
        .fault = atomic_load(&((HapticServo *)servo)->plausibility.fault),
        .fault_measured = servo->plausibility.fault_measured,
        .fault_allowed = servo->plausibility.fault_allowed,
        .motion_ratio = servo->plausibility.motion_ratio,
        .passivity_energy = servo->passivity.port_energy,
        .passivity_energy_min = servo->passivity.port_energy_min,
        .local_latency_us =
            servo->local_models.local.have ? 1e6 * servo->local_models.local.arrival_latency : NAN,
        .local_latency_mean_us = servo->local_models.local.arrivals > 0
                                     ? 1e6 * servo->local_models.local.latency_sum /
                                           (double)servo->local_models.local.arrivals
                                     : NAN,
        .local_latency_max_us = servo->local_models.local.arrivals > 0
                                    ? 1e6 * servo->local_models.local.latency_max
                                    : NAN,
        .local_blocks = servo->local_models.local.arrivals,
        .local_faded_periods = servo->local_models.local_faded_periods,
        .models = servo->counts.models,
        .models_touching = servo->counts.models_touching,
        .models_compute_mean_us = servo->counts.periods ? 1e6 * servo->counts.models_compute_sum /
                                                              (double)servo->counts.periods
                                                        : 0.0,
        .models_compute_max_us = 1e6 * servo->counts.models_compute_max,
    };
}

static void record_lateness(HapticServo *servo, double lateness) {
    int bin = (int)(lateness * 1e6);
    bin = bin < 0 ? 0 : bin >= LATENESS_BINS ? LATENESS_BINS - 1 : bin;
    servo->counts.lateness_hist[bin]++;
    servo->counts.lateness_samples++;
    servo->counts.lateness_max = fmax(servo->counts.lateness_max, lateness);
}

static void timespec_add(struct timespec *t, long ns) {
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec++;
    }
}

static double timespec_diff(const struct timespec *a, const struct timespec *b) {
    return (double)(a->tv_sec - b->tv_sec) + 1e-9 * (double)(a->tv_nsec - b->tv_nsec);
}

static void try_realtime(HapticServo *servo) {
    if (servo->desc.realtime) {
        struct sched_param p = {.sched_priority = servo->desc.fifo_priority};
        int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
        if (rc == 0) {
            servo->fifo = true;
            return;
        }
        issim_log(ISSIM_LOG_WARN,
                  "haptics: SCHED_FIFO refused (%s): the servo runs with normal scheduling and "
                  "will be late more often",
                  strerror(rc));
    }
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

static void *servo_thread(void *arg) {
    HapticServo *servo = arg;
    try_realtime(servo);
    long period_ns = (long)llround(servo->period * 1e9);
    struct timespec deadline, now;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    while (!atomic_load(&servo->stop_requested)) {
        timespec_add(&deadline, period_ns);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR)
            ;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double late = timespec_diff(&now, &deadline);
        record_lateness(servo, late);
        if (late >= servo->period) {
            /* skip the missed deadlines instead of running them back to back */
            long skipped = (long)floor(late / servo->period);
            servo->counts.overruns++;
            servo->counts.missed_deadlines += (uint64_t)skipped;
            timespec_add(&deadline, skipped * period_ns);
        }
        if (!haptic_servo_period(servo, issim_wall_time()))
            break;
    }
    /* leave the motors off whatever happened */
    uint16_t mid = (uint16_t)(1u << (servo->config.dac_bits - 1));
    HapticCommand off = {.dac = {mid, mid}, .enable = false};
    if (atomic_load(&servo->state) == HAPTIC_SERVO_RUNNING)
        haptic_device_write(servo->dev, &off, NULL);
    return NULL;
}

IssimStatus haptic_servo_start(HapticServo *servo, IssimError *err) {
    if (servo->thread_running)
        return issim_error_set(err, ISSIM_ERR_STATE, "the servo is already running");
    if (atomic_load(&servo->state) != HAPTIC_SERVO_RUNNING)
        return issim_error_set(err, ISSIM_ERR_STATE, "the servo is in its safe state: %s",
                               servo->error);
    atomic_store(&servo->stop_requested, false);
    if (pthread_create(&servo->thread, NULL, servo_thread, servo) != 0)
        return issim_error_set(err, ISSIM_ERR_STATE, "cannot start the servo thread");
    servo->thread_running = true;
    return ISSIM_OK;
}

void haptic_servo_stop(HapticServo *servo) {
    if (!servo->thread_running)
        return;
    atomic_store(&servo->stop_requested, true);
    pthread_join(servo->thread, NULL);
    servo->thread_running = false;
}

void haptic_servo_enable(HapticServo *servo, bool enable) {
    if (enable) {
        atomic_store(&servo->estop, false);
        atomic_store(&servo->plausibility.fault, HAPTIC_FAULT_NONE);
    }
    atomic_store(&servo->enable_requested, enable);
}

void haptic_servo_emergency_stop(HapticServo *servo) {
    atomic_store(&servo->estop, true);
    atomic_store(&servo->enable_requested, false);
}

HapticServoState haptic_servo_state(const HapticServo *servo) {
    return (HapticServoState)atomic_load(&((HapticServo *)servo)->state);
}

const HapticKinematics *haptic_servo_kinematics(const HapticServo *servo) {
    return &servo->kin;
}

const char *haptic_servo_error(const HapticServo *servo) {
    return servo->error;
}

HapticFault haptic_servo_fault(const HapticServo *servo) {
    return (HapticFault)atomic_load(&((HapticServo *)servo)->plausibility.fault);
}

const char *haptic_servo_fault_message(const HapticServo *servo) {
    return servo->plausibility.fault_message;
}

HapticVec2 haptic_servo_force(const HapticServo *servo) {
    return (HapticVec2){servo->out.force[0], servo->out.force[1]};
}

unsigned haptic_servo_limits(const HapticServo *servo) {
    return servo->out.limits;
}

const HapticLocalSet *haptic_servo_local_models(const HapticServo *servo) {
    return servo->local_models.local_on ? &servo->local_models.local : NULL;
}
