/* The in-process simulated pantograph and the Z-width trial (pantosim_zwidth.h). */
#include "pantosim_zwidth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../src/haptics/device_internal.h"
#include "issim/engine.h"
#include "issim/haptics_local.h"
#include "issim/io.h"
#include "issim/registry.h"
#include "issim/thing.h"

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

/* ===== The wall of a scene's contact model (ZwidthTrial.contact_scene) =====
 * The engine thread's part of local models (src/sim/sim_thread.c: apply_haptic_coupling's
 * local branch and publish_local_models), replayed step by step in the servo's simulated time:
 * before each step the proxy gets minus the impulse the servo rendered and the tracking force
 * towards the handle; after it the proxy's frame goes to the registry and its contacts, packed
 * by haptic_local_pack from engine_body_contact_models, to the board; the heartbeat beats every
 * servo period. Writer and reader: the thread running the trial (engine and servo alternate). */
typedef struct ContactWall {
    Engine *engine;
    Registry *reg;
    EngineBodyId proxy;
    HapticReaction reaction;
    void *block; /* registry_board_capacity bytes, Owned */
    size_t room;
    EngineContactModelView views[HAPTIC_LOCAL_MAX_MODELS * 2];
    int periods_per_step; /* servo periods per engine step */
} ContactWall;

static void contact_wall_close(ContactWall *w) {
    engine_destroy(w->engine);
    registry_destroy(w->reg);
    free(w->block);
    *w = (ContactWall){.engine = NULL};
}

/* The scene's thing database with the pair's law and its parameters set as --set does. */
static IssimStatus contact_wall_scene(const ZwidthTrial *t, ThingDb **db, IssimError *err) {
    IssimStatus s = scene_load_file(t->contact_scene, NULL, db, err);
    char value[64];
    if (s == ISSIM_OK && t->contact_law)
        s = thingdb_set_text(*db, ZWIDTH_CONTACT_PAIR ".model", t->contact_law, false, err);
    snprintf(value, sizeof value, "%.17g", t->contact_exponent);
    if (s == ISSIM_OK && t->contact_exponent > 0.0)
        s = thingdb_set_text(*db, ZWIDTH_CONTACT_PAIR ".exponent", value, false, err);
    snprintf(value, sizeof value, "%.17g", t->contact_alpha);
    if (s == ISSIM_OK && t->contact_alpha > 0.0)
        s = thingdb_set_text(*db, ZWIDTH_CONTACT_PAIR ".alpha", value, false, err);
    snprintf(value, sizeof value, "%.17g", t->stiffness);
    if (s == ISSIM_OK)
        s = thingdb_set_text(*db, ZWIDTH_CONTACT_PAIR ".stiffness", value, false, err);
    snprintf(value, sizeof value, "%.17g", t->damping);
    if (s == ISSIM_OK) /* the damping the trial gives, not one derived from a restitution */
        s = thingdb_set_text(*db, ZWIDTH_CONTACT_PAIR ".damping_from", "value", false, err);
    if (s == ISSIM_OK)
        s = thingdb_set_text(*db, ZWIDTH_CONTACT_PAIR ".damping", value, false, err);
    if (s != ISSIM_OK && *db && err) { /* the loader names the file itself; the edits do not */
        IssimError why = *err;
        issim_error_set(err, s, "%s: %s", t->contact_scene, why.message);
    }
    return s;
}

/* The engine of the scene, the registry the servo couples through (the proxy's frame
 * variables), and the servo description's coupling and local models from the scene's haptics
 * table; the trial's settings of the servo are the caller's to apply after. */
static IssimStatus contact_wall_open(const ZwidthTrial *t, double period, HapticServoDesc *d,
                                     ContactWall *w, IssimError *err) {
    *w = (ContactWall){.reaction = {.primed = false}};
    ThingDb *db = NULL;
    IssimStatus s = contact_wall_scene(t, &db, err);
    if (s != ISSIM_OK) {
        thingdb_destroy(db);
        return s;
    }
    EngineOptions options = engine_options_default();
    options.threads = 1; /* the same bits every run, no pool beside the servo */
    w->engine = engine_create(db, &options, err);
    thingdb_destroy(db);
    if (!w->engine)
        return ISSIM_ERR_INVALID;
    char proxy[64];
    s = haptic_scene_load(t->contact_scene, d, proxy, sizeof proxy, err);
    RegistryDesc rd = registry_desc_default();
    rd.history_frames = 64;
    if (s != ISSIM_OK || !(w->reg = registry_create(&rd, err))) {
        contact_wall_close(w);
        return s != ISSIM_OK ? s : ISSIM_ERR_NOMEM;
    }
    /* the tables report the pair's stiffness as the handle's: no scaling between them */
    if (!d->local.enabled || d->coupling.position_scale != 1.0 || d->coupling.force_scale != 1.0) {
        contact_wall_close(w);
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s: the contact wall needs haptics.local enabled and the "
                               "coupling's position_scale and force_scale 1 (local %s, %g, %g)",
                               t->contact_scene, d->local.enabled ? "on" : "off",
                               d->coupling.position_scale, d->coupling.force_scale);
    }
    w->proxy = engine_body_find(w->engine, proxy);
    /* added first, in this order: the frame's values in contact_wall_step */
    const char *suffix[] = {"pos.x", "pos.y", "vel.x", "vel.y"};
    for (int i = 0; i < 4; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s.%s", proxy, suffix[i]);
        registry_add_var(w->reg, name, "", NULL);
    }
    w->room = registry_board_capacity(w->reg);
    w->block = malloc(w->room ? w->room : 1);
    w->periods_per_step = (int)lround(engine_dt(w->engine) / period);
    if (engine_body_id_is_null(w->proxy) || !w->block || w->periods_per_step < 1) {
        contact_wall_close(w);
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s: needs a proxy body and an engine step of whole servo periods",
                               t->contact_scene);
    }
    issim_strlcpy(d->coupling.proxy, proxy, sizeof d->coupling.proxy);
    d->coupling.proxy_body = engine_body_id_pack(w->proxy);
    return ISSIM_OK;
}

/* One engine step at the servo's time now, as the engine thread takes it. */
static IssimStatus contact_wall_step(ContactWall *w, double now, IssimError *err) {
    Engine *e = w->engine;
    RegistrySlot h;
    registry_slot_read(w->reg, REGISTRY_SLOT_HANDLE, &h);
    Vec3 force = {0, 0, 0}, zero = {0, 0, 0};
    if (haptic_handle_unpack(&h).local_models &&
        haptic_local_engine_reaction(&h, &w->reaction, engine_dt(e), now, 0.1, &force)) {
        EngineBodyState st = engine_body_state(e, w->proxy);
        force = vec3_add(
            force, haptic_local_engine_tracking(&h, st.pos, st.vel, engine_body_mass(e, w->proxy)));
    }
    IssimStatus s = engine_set_applied_wrench(e, w->proxy, force, zero, err);
    if (s == ISSIM_OK)
        s = engine_advance(e, engine_time(e) + engine_dt(e), err);
    if (s != ISSIM_OK)
        return s;
    EngineBodyState st = engine_body_state(e, w->proxy);
    double values[4] = {st.pos.x, st.pos.y, st.vel.x, st.vel.y};
    registry_publish(w->reg, engine_time(e), values);
    if (w->reaction.primed) {
        int n = engine_body_contact_models(e, w->proxy, w->views,
                                           (int)(sizeof w->views / sizeof w->views[0]));
        size_t bytes = haptic_local_pack(w->block, w->room, engine_body_id_pack(w->proxy), st.pos,
                                         engine_time(e), now, w->views, n);
        if (bytes)
            registry_board_publish(w->reg, engine_time(e), w->block, bytes);
    }
    return ISSIM_OK;
}

/* The law of the first contact whose normal lies in the device's plane (the wall, not a table
 * under the proxy) in the servo's copy of the engine's newest block, when it has one (a block
 * without it keeps the last law seen). */
static void note_published_law(const HapticServo *servo, ZwidthResult *out) {
    const HapticLocalSet *set = haptic_servo_local_models(servo);
    if (!set || !set->have)
        return;
    const HapticLocalHeader *h = (const HapticLocalHeader *)set->block;
    size_t head = (sizeof(HapticLocalHeader) + 7u) & ~(size_t)7u;
    const HapticLocalModel *models = (const HapticLocalModel *)(set->block + head), *m = NULL;
    for (int i = 0; i < h->count && !m; i++) {
        Vec3 n = models[i].kin.normal;
        if (hypot(n.x, n.y) >= 0.5 * vec3_norm(n))
            m = &models[i];
    }
    if (!m)
        return;
    out->published_stiffness = m->params.stiffness;
    out->published_damping = m->params.damping;
    out->published_alpha = m->params.hc_alpha;
    const ContactModelClass *cls = contact_model_class(m->params.model);
    out->published_law = cls ? cls->name : NULL;
}

/* The servo's description for a trial: its rate, controller and estimate, and the wall (a PD
 * surface unless the trial's wall is a scene's contact, set by contact_wall_open). */
static void trial_servo_desc(const ZwidthTrial *trial, const SimPantograph *sim, HapticVec2 wall,
                             HapticServoDesc *d) {
    d->rate_hz = trial->rate_hz;
    d->realtime = false;
    d->passivity.enabled = trial->passivity;
    d->subcount = trial->subcount;
    /* the observer knows the simulated device's model (a real P2's must be identified) */
    d->observer_rotor_inertia = sim->rotor_inertia;
    d->observer_handle_mass = sim->handle_mass;
    d->observer_memory_s =
        trial->observer_memory_s > 0.0 ? trial->observer_memory_s : ZWIDTH_OBSERVER_MEMORY_S;
    /* with the command a period late, the observer renders where the handle will be then */
    d->observer_lead_s = trial->delayed && trial->observer_lead ? 1.0 / trial->rate_hz : 0.0;
    if (trial->contact_scene) {
        d->surface_count = 0;
        /* the whole force from the first period, as the PD wall's (the proxy starts at the
           handle, so nothing is snapped) */
        d->coupling.engage_s = 0.0;
        return;
    }
    d->surface_count = 1;
    d->surfaces[0] = (HapticSurface){.kind = HAPTIC_SURFACE_WALL,
                                     .point = wall,
                                     .normal = {-1, 0},
                                     .stiffness = trial->stiffness,
                                     .damping = trial->damping};
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
    double period = 1.0 / trial->rate_hz;
    HapticServoDesc d = haptic_servo_desc_default();
    ContactWall cw = {.engine = NULL};
    IssimStatus status =
        trial->contact_scene ? contact_wall_open(trial, period, &d, &cw, err) : ISSIM_OK;
    if (status != ISSIM_OK)
        return status;
    trial_servo_desc(trial, &sim, wall, &d);
    HapticServo *servo = haptic_servo_create(
        simpanto_lockstep_open_delayed(&sim, period, trial->delayed, err), &c, &d, cw.reg, err);
    if (!servo) {
        contact_wall_close(&cw);
        return ISSIM_ERR_INVALID;
    }
    haptic_servo_enable(servo, true);
    *out = (ZwidthResult){.energy_min = 0.0};
    int32_t lo[2] = {INT32_MAX, INT32_MAX}, hi[2] = {INT32_MIN, INT32_MIN};
    long n = lround(ZWIDTH_TRIAL_S * trial->rate_hz), watch = lround(ZWIDTH_WATCH_S / period);
    double depth_sum = 0.0, x_lo = INFINITY, x_hi = -INFINITY;
    for (long i = 0; i < n; i++) {
        double now = i * period;
        if (cw.engine) {
            registry_board_beat(cw.reg, now);
            if (i % cw.periods_per_step == 0)
                status = contact_wall_step(&cw, now, err);
            if (status != ISSIM_OK)
                break;
        }
        if (!haptic_servo_period(servo, now) || haptic_servo_fault(servo)) {
            out->faulted = true;
            break;
        }
        note_published_law(servo, out);
        HapticServoStats st = haptic_servo_stats(servo);
        out->energy_min = fmin(out->energy_min, st.passivity_energy);
        out->energy_final = st.passivity_energy;
        out->local_blocks = (unsigned long)st.local_blocks;
        out->deepest = fmax(out->deepest, sim.handle.x - wall.x);
        if (i >= n - watch) {
            HapticState s = simpanto_state(&sim, 0, 0.0);
            for (int k = 0; k < 2; k++) {
                lo[k] = s.counts[k] < lo[k] ? s.counts[k] : lo[k];
                hi[k] = s.counts[k] > hi[k] ? s.counts[k] : hi[k];
            }
            depth_sum += sim.handle.x - wall.x;
            x_lo = fmin(x_lo, sim.handle.x);
            x_hi = fmax(x_hi, sim.handle.x);
            out->touching_periods += st.models_touching > 0;
        }
    }
    for (int k = 0; k < 2; k++)
        out->count_span[k] = out->faulted ? -1 : (int)(hi[k] - lo[k]);
    out->penetration = depth_sum / (double)watch;
    out->motion_span = out->faulted ? NAN : x_hi - x_lo;
    out->stable = !out->faulted && out->count_span[0] <= 1 && out->count_span[1] <= 1;
    haptic_servo_destroy(servo);
    contact_wall_close(&cw);
    return status;
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
