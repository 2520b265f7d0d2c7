/* The in-process simulated pantograph and the Z-width trial (pantosim_zwidth.h). */
#include "pantosim_zwidth.h"

#include <math.h>
#include <stdlib.h>

#include "../../src/haptics/device_internal.h"

/* Writer and reader: the servo's thread (the one calling haptic_servo_period). */
typedef struct Lockstep {
    SimPantograph *sim;
    double period;
    double t; /* simulated time, s */
    uint16_t seq;
    bool delayed; /* commands wait for the next read, as at a device's frame tick */
    bool have_pending;
    HapticCommand pending;
} Lockstep;

static IssimStatus lockstep_read(HapticDevice *dev, double timeout_s, IssimError *err) {
    (void)timeout_s;
    (void)err;
    Lockstep *l = dev->impl;
    simpanto_advance(l->sim, l->t, l->period);
    l->t += l->period;
    if (l->have_pending) { /* the last command reaches the motors at this frame, a period late */
        simpanto_command(l->sim, &l->pending, l->t);
        l->have_pending = false;
    }
    HapticState s = simpanto_state(l->sim, ++l->seq, l->t);
    s.protocol = HAPTIC_PROTOCOL_VERSION;
    haptic_device_accept_state(dev, &s);
    dev->got_fresh = true;
    return ISSIM_OK;
}

static IssimStatus lockstep_write(HapticDevice *dev, const HapticCommand *cmd, IssimError *err) {
    (void)err;
    Lockstep *l = dev->impl;
    if (l->delayed) {
        l->pending = *cmd;
        l->have_pending = true;
    } else {
        simpanto_command(l->sim, cmd, l->t);
    }
    return ISSIM_OK;
}

static void lockstep_close(HapticDevice *dev) {
    free(dev->impl);
}

static const HapticDeviceOps lockstep_ops = {lockstep_read, lockstep_write, lockstep_close};

HapticDevice *simpanto_lockstep_open(SimPantograph *sim, double period, IssimError *err) {
    return simpanto_lockstep_open_delayed(sim, period, false, err);
}

HapticDevice *simpanto_lockstep_open_delayed(SimPantograph *sim, double period, bool delayed,
                                             IssimError *err) {
    Lockstep *l = calloc(1, sizeof *l);
    HapticDevice *dev = l ? haptic_device_new(&lockstep_ops, &sim->config, l) : NULL;
    if (!dev) {
        free(l);
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    *l = (Lockstep){.sim = sim, .period = period, .delayed = delayed};
    issim_strlcpy(dev->caps.name, "simulated P2 (lockstep)", sizeof dev->caps.name);
    dev->caps.can_actuate = true;
    dev->caps.rate_hz = 1.0 / period;
    return dev;
}

IssimStatus zwidth_trial(const ZwidthTrial *trial, ZwidthResult *out, IssimError *err) {
    PantographConfig c = pantograph_config_default();
    HapticVec2 centre = pantograph_workspace_centre(&c);
    HapticVec2 wall = {centre.x + 0.01, centre.y};
    SimPantograph sim;
    if (!simpanto_init(&sim, &c, 0.12, 0.26, centre))
        return issim_error_set(err, ISSIM_ERR_RANGE, "the simulated pantograph cannot start");
    sim.hand = (SimHand){.kind = HAND_HOLD,
                         .point = {wall.x + 0.005, wall.y},
                         .stiffness = ZWIDTH_HAND_STIFFNESS,
                         .damping = ZWIDTH_HAND_DAMPING};
    HapticServoDesc d = haptic_servo_desc_default();
    d.rate_hz = trial->rate_hz;
    d.realtime = false;
    d.passivity.enabled = trial->passivity;
    d.subcount = trial->subcount;
    /* the observer knows the simulated device's model (a real P2's must be identified) */
    d.observer_rotor_inertia = sim.rotor_inertia;
    d.observer_handle_mass = sim.handle_mass;
    d.observer_memory_s =
        trial->observer_memory_s > 0.0 ? trial->observer_memory_s : ZWIDTH_OBSERVER_MEMORY_S;
    /* with the command a period late, the observer renders where the handle will be then */
    d.observer_lead_s = trial->delayed && trial->observer_lead ? 1.0 / trial->rate_hz : 0.0;
    d.surface_count = 1;
    d.surfaces[0] = (HapticSurface){.kind = HAPTIC_SURFACE_WALL,
                                    .point = wall,
                                    .normal = {-1, 0},
                                    .stiffness = trial->stiffness,
                                    .damping = trial->damping};
    double period = 1.0 / trial->rate_hz;
    HapticServo *servo = haptic_servo_create(
        simpanto_lockstep_open_delayed(&sim, period, trial->delayed, err), &c, &d, NULL, err);
    if (!servo)
        return ISSIM_ERR_INVALID;
    haptic_servo_enable(servo, true);
    *out = (ZwidthResult){.energy_min = 0.0};
    int32_t lo[2] = {INT32_MAX, INT32_MAX}, hi[2] = {INT32_MIN, INT32_MIN};
    long n = lround(ZWIDTH_TRIAL_S * trial->rate_hz), watch = lround(ZWIDTH_WATCH_S / period);
    double depth_sum = 0.0;
    for (long i = 0; i < n; i++) {
        if (!haptic_servo_period(servo, i * period) || haptic_servo_fault(servo)) {
            out->faulted = true;
            break;
        }
        HapticServoStats st = haptic_servo_stats(servo);
        out->energy_min = fmin(out->energy_min, st.passivity_energy);
        out->energy_final = st.passivity_energy;
        if (i >= n - watch) {
            HapticState s = simpanto_state(&sim, 0, 0.0);
            for (int k = 0; k < 2; k++) {
                lo[k] = s.counts[k] < lo[k] ? s.counts[k] : lo[k];
                hi[k] = s.counts[k] > hi[k] ? s.counts[k] : hi[k];
            }
            depth_sum += sim.handle.x - wall.x;
        }
    }
    for (int k = 0; k < 2; k++)
        out->count_span[k] = out->faulted ? -1 : (int)(hi[k] - lo[k]);
    out->penetration = depth_sum / (double)watch;
    out->stable = !out->faulted && out->count_span[0] <= 1 && out->count_span[1] <= 1;
    haptic_servo_destroy(servo);
    return ISSIM_OK;
}

double zwidth_largest_stable(double rate_hz, double damping, bool passivity, double k_min,
                             double k_max, double factor, double *energy_min) {
    ZwidthTrial base = {.rate_hz = rate_hz, .damping = damping, .passivity = passivity};
    return zwidth_largest_stable_for(&base, k_min, k_max, factor, energy_min);
}

double zwidth_largest_stable_for(const ZwidthTrial *base, double k_min, double k_max, double factor,
                                 double *energy_min) {
    double best = 0.0, emin = 0.0;
    for (double k = k_min; k <= k_max * (1 + 1e-9); k *= factor) {
        ZwidthTrial t = *base;
        t.stiffness = k;
        ZwidthResult r;
        IssimError err;
        if (zwidth_trial(&t, &r, &err) != ISSIM_OK || !r.stable)
            break;
        best = k;
        emin = fmin(emin, r.energy_min);
    }
    if (energy_min)
        *energy_min = emin;
    return best;
}
