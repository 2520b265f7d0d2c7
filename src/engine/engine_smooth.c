/* Kry's contact coordinates as a reduced-pair model (seed 002 ch. 4; issim/smooth_contact.h
 * holds the mechanics): a smooth body on a smooth obstacle integrated as the 10 values
 * (q, q_dot) of one contact-pair block, with the friction mode, the patches and the state at the
 * last step kept in the pair's data (checkpointed with the slot). Between steps the commit hook
 * switches friction (002 4.4.4) and moves the contact across patch boundaries (4.5), re-
 * integrating the rest of a step that crossed one; the pair leaves when the normal force turns
 * negative (the engine's test, 4.4.4), the contact runs off an open edge of a surface, or the
 * equations turn singular (conforming contact, 4.2.3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "issim/smooth_contact.h"

typedef struct SmoothData {
    SmoothContactSystem sys;
    SmoothContactState state; /* patches and mode now; q and rates at the last commit */
    double t;                 /* of the last commit */
    /* The motion of the last block bodies() was asked for: the engine asks for the same state
     * several times per step (loads, collision poses, publishing). Written by bodies() through
     * the const data pointer (the slot's data is not const), engine thread only. */
    double motion_block[2 * SMOOTH_COORDINATES];
    int motion_patches[4]; /* the patches and pieces it was for */
    SmoothBodyMotion motion;
    bool motion_valid;
    /* The contact at the last commit, for the published contact reports (the commit solves the
     * dynamics there anyway). */
    Vec3 report_point, report_normal, report_force;
    double report_normal_force;
    bool report_valid;
} SmoothData;

_Static_assert(sizeof(SmoothData) <= ENGINE_REDUCED_DATA_MAX, "smooth pair data too large");
_Static_assert(2 * SMOOTH_COORDINATES <= ENGINE_REDUCED_BLOCK_MAX, "smooth pair block too large");

/* Distance tolerance of the entry (contact point to each surface, and the body's move to the
 * configuration the coordinates give): the collision shapes are tessellations within 1e-4 m of
 * the surfaces (engine_collide.c) and a resting penalty contact penetrates about a millimetre,
 * so 3 mm accepts those and refuses a contact off the surfaces' edges. The move changes the
 * potential energy by m g times it at most (docs/smooth-contact.md). */
static const double ENTRY_TOLERANCE = 3e-3;

static SmoothContactState state_of(const SmoothData *d, const double *block) {
    SmoothContactState st = d->state;
    memcpy(st.q, block, sizeof st.q);
    memcpy(st.rate, block + SMOOTH_COORDINATES, sizeof st.rate);
    return st;
}

static void store(const SmoothContactState *st, double *block) {
    memcpy(block, st->q, sizeof st->q);
    memcpy(block + SMOOTH_COORDINATES, st->rate, sizeof st->rate);
}

static SmoothFriction friction_of(const ContactParams *p) {
    return (SmoothFriction){.kinetic = p->friction_kinetic,
                            .static_slip = p->smooth_sliding_only ? 0.0 : p->friction_static,
                            .rolling = p->rolling_friction,
                            .spinning = p->spinning_friction,
                            .static_spin =
                                p->smooth_sliding_only ? 0.0 : p->spinning_friction_static,
                            .slip_tolerance = p->slip_tolerance,
                            .spin_tolerance = p->slip_tolerance};
}

/* The pair's system with the friction its properties say now (they are live). */
static SmoothContactSystem live_system(const EngineReducedPair *pair, const SmoothData *d) {
    SmoothContactSystem sys = d->sys;
    sys.friction = friction_of(pair->params);
    return sys;
}

static SmoothContactSystem system_of(const EngineReducedPair *pair, Vec3 pos_b, Quat orient_b) {
    return (SmoothContactSystem){.surface_a = pair->surface_a,
                                 .surface_b = pair->surface_b,
                                 .mass = pair->mass_a,
                                 .inertia = pair->inertia_a,
                                 .pos_b = pos_b,
                                 .orient_b = orient_b,
                                 .friction = friction_of(pair->params)};
}

static bool smooth_enter(const EngineReducedPair *pair, void *data, const EngineBodyState *a,
                         const EngineBodyState *b, double *block) {
    if (!pair->fixed_b || !pair->surface_a || !pair->surface_b || !pair->params)
        return false;
    SmoothData *d = data;
    d->sys = system_of(pair, b->pos, b->orient);
    d->t = pair->t; /* the first commit's step starts here */
    SmoothBodyMotion m = {a->pos, a->orient, a->vel, a->angvel};
    IssimError err = {0};
    if (smooth_contact_enter(&d->sys, &m, pair->point, ENTRY_TOLERANCE, &d->state, &err) !=
        ISSIM_OK) {
        issim_log(ISSIM_LOG_INFO, "smooth contact not entered: %s", err.message);
        return false;
    }
    store(&d->state, block);
    return true;
}

static void smooth_derivative(const EngineReducedPair *pair, const void *data, const double *block,
                              const EngineReducedLoads *loads, double *dblock) {
    const SmoothData *d = data;
    SmoothContactSystem sys = live_system(pair, d);
    SmoothContactState st = state_of(d, block);
    SmoothContactDynamics dyn;
    if (smooth_contact_dynamics(&sys, &st, loads->force_a, loads->torque_a, &dyn, NULL) !=
        ISSIM_OK) {
        for (int i = 0; i < 2 * SMOOTH_COORDINATES; i++)
            dblock[i] = NAN; /* the integrator reports the failed step */
        return;
    }
    memcpy(dblock, st.rate, sizeof st.rate);
    memcpy(dblock + SMOOTH_COORDINATES, dyn.accel, sizeof dyn.accel);
}

static void smooth_bodies(const EngineReducedPair *pair, const void *data, const double *block,
                          EngineBodyState *a, EngineBodyState *b) {
    (void)pair;
    (void)b;
    SmoothData *d = (SmoothData *)data;
    const int patches[4] = {d->state.patch_a, d->state.patch_b, d->state.piece_a, d->state.piece_b};
    bool cached = d->motion_valid && memcmp(d->motion_patches, patches, sizeof patches) == 0 &&
                  memcmp(d->motion_block, block, sizeof d->motion_block) == 0;
    if (!cached) {
        SmoothContactState st = state_of(d, block);
        if (smooth_contact_motion(&d->sys, &st, &d->motion, NULL) != ISSIM_OK)
            return; /* a degenerate point: the derivative already made the step fail */
        memcpy(d->motion_block, block, sizeof d->motion_block);
        memcpy(d->motion_patches, patches, sizeof patches);
        d->motion_valid = true;
    }
    const SmoothBodyMotion *m = &d->motion;
    *a = (EngineBodyState){.pos = m->pos, .orient = m->orient, .vel = m->vel, .angvel = m->angvel};
}

static double smooth_normal_force(const EngineReducedPair *pair, const void *data,
                                  const double *block, const EngineReducedLoads *loads) {
    const SmoothData *d = data;
    SmoothContactSystem sys = live_system(pair, d);
    SmoothContactState st = state_of(d, block);
    SmoothContactDynamics dyn;
    if (smooth_contact_dynamics(&sys, &st, loads->force_a, loads->torque_a, &dyn, NULL) != ISSIM_OK)
        return -1.0; /* singular: hand the bodies back */
    return dyn.normal_force;
}

static int smooth_commit(const EngineReducedPair *pair, void *data, double *block,
                         const EngineReducedLoads *loads, double t, IssimError *err) {
    SmoothData *d = data;
    d->sys.friction = friction_of(pair->params);
    SmoothContactState st = state_of(d, block);
    int result = ENGINE_REDUCED_KEEP, crossed = 0;
    if (t > d->t) {
        IssimStatus status = smooth_contact_traverse(
            &d->sys, &d->state, &st, t - d->t, loads->force_a, loads->torque_a, &crossed, err);
        if (status != ISSIM_OK)
            return ENGINE_REDUCED_LEAVE;
    }
    SmoothContactDynamics dyn;
    if (smooth_contact_dynamics(&d->sys, &st, loads->force_a, loads->torque_a, &dyn, err) !=
        ISSIM_OK)
        return ENGINE_REDUCED_LEAVE;
    if (dyn.normal_force < 0.0) {
        issim_error_set(err, ISSIM_ERR_RANGE,
                        "the normal force turned negative (%.3g N): the "
                        "surfaces separate (002 4.4.4)",
                        dyn.normal_force);
        return ENGINE_REDUCED_LEAVE;
    }
    if (smooth_contact_switch_friction(&d->sys, &st, &dyn) || crossed > 0)
        result = ENGINE_REDUCED_CHANGED;
    d->report_point = dyn.point;
    d->report_normal = dyn.normal;
    d->report_force = dyn.force;
    d->report_normal_force = dyn.normal_force;
    d->report_valid = true;
    d->state = st;
    d->t = t;
    store(&st, block);
    return result;
}

static const EngineReducedModel smooth_model = {.name = "smooth",
                                                .block_size = 2 * SMOOTH_COORDINATES,
                                                .enter = smooth_enter,
                                                .derivative = smooth_derivative,
                                                .bodies = smooth_bodies,
                                                .normal_force = smooth_normal_force,
                                                .commit = smooth_commit,
                                                .keeps_contact = true};

const EngineReducedModel *engine_reduced_smooth(void) {
    return &smooth_model;
}

/* ===== Starting in contact (the pair's start_coords, 002 App. B.1's coords / dcoords) ===== */

/* Reads "s t u v psi" or "pa s t pb u v psi" into st (patches 0 in the first form). */
static IssimStatus parse_coords(const char *text, bool with_patches_allowed, SmoothContactState *st,
                                double *values, const char *what, const char *pair,
                                IssimError *err) {
    double v[7];
    int n = 0;
    const char *p = text;
    while (n < 7) {
        char *end;
        double x = strtod(p, &end);
        if (end == p)
            break;
        if (!isfinite(x))
            return issim_error_set(err, ISSIM_ERR_INVALID, "%s.%s: '%s' has a non-finite number",
                                   pair, what, text);
        v[n++] = x;
        p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == ',')
        p++;
    bool ok = *p == '\0' && (n == 5 || (with_patches_allowed && n == 7));
    if (!ok)
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s.%s: '%s' is not %s", pair, what, text,
                               with_patches_allowed ? "five numbers \"s t u v psi\" or seven "
                                                      "\"pa s t pb u v psi\""
                                                    : "five numbers");
    if (n == 7) {
        st->patch_a = (int)v[0];
        st->patch_b = (int)v[3];
        double q[5] = {v[1], v[2], v[4], v[5], v[6]};
        memcpy(values, q, sizeof q);
    } else {
        memcpy(values, v, 5 * sizeof(double));
    }
    return ISSIM_OK;
}

static IssimStatus check_patch(const SmoothSurface *s, int patch, const char *pair,
                               IssimError *err) {
    if (patch < 0 || patch >= smooth_surface_patch_count(s))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s.start_coords: surface '%s' has no patch %d (it has %d)", pair,
                               smooth_surface_name(s), patch, smooth_surface_patch_count(s));
    return ISSIM_OK;
}

/* The one body of material ma and the one obstacle of material mb the pair starts with. */
static IssimStatus start_bodies(const Engine *e, const EnginePair *pair, const char *name,
                                int *body, int *obstacle, IssimError *err) {
    *body = *obstacle = -1;
    int bodies = 0, obstacles = 0;
    for (int b = 0; b < e->model.body_count; b++)
        if (e->model.bodies[b].material == pair->material_a && bodies++ == 0)
            *body = b;
    for (int o = 0; o < e->model.obstacle_count; o++)
        if (e->model.obstacles[o].material == pair->material_b && obstacles++ == 0)
            *obstacle = o;
    if (bodies != 1 || obstacles != 1)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s.start_coords: needs exactly one body of its first material and "
                               "one obstacle of its second (found %d and %d)",
                               name, bodies, obstacles);
    if (!e->model.bodies[*body].surface || !e->model.obstacles[*obstacle].surface)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s.start_coords: both sides need shape \"smooth\" (%s and %s)",
                               name, e->model.bodies[*body].name,
                               thing_name(e->model.db, e->model.obstacles[*obstacle].thing));
    return ISSIM_OK;
}

static IssimStatus start_pair(Engine *e, int pair_index, IssimError *err) {
    const EnginePair *pair = &e->model.pairs[pair_index];
    const char *name = thing_name(e->model.db, pair->thing);
    const char *coords = thing_string(e->model.db, pair->thing, "start_coords");
    const char *rates = thing_string(e->model.db, pair->thing, "start_rates");
    int body, obstacle;
    IssimStatus s = start_bodies(e, pair, name, &body, &obstacle, err);
    if (s != ISSIM_OK)
        return s;
    const EngineObstacle *ob = &e->model.obstacles[obstacle];
    EngineReducedPair rp = {.mass_a = e->model.bodies[body].mass,
                            .inertia_a = e->model.bodies[body].inertia,
                            .fixed_b = true,
                            .surface_a = e->model.bodies[body].surface,
                            .surface_b = ob->surface,
                            .params = &pair->params};
    SmoothContactState st = {0};
    s = parse_coords(coords, true, &st, st.q, "start_coords", name, err);
    if (s == ISSIM_OK && rates[0]) {
        SmoothContactState ignored = {0};
        s = parse_coords(rates, false, &ignored, st.rate, "start_rates", name, err);
    }
    s = s == ISSIM_OK ? check_patch(rp.surface_a, st.patch_a, name, err) : s;
    s = s == ISSIM_OK ? check_patch(rp.surface_b, st.patch_b, name, err) : s;
    if (s != ISSIM_OK)
        return s;
    SmoothContactSystem sys = system_of(&rp, ob->pose.p, ob->pose.q);
    smooth_contact_locate_pieces(&sys, &st);
    SmoothBodyMotion m;
    IssimError sub = {0};
    if (smooth_contact_motion(&sys, &st, &m, &sub) != ISSIM_OK)
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s.start_coords: %s", name, sub.message);
    EngineBodyState bs = {.pos = m.pos, .orient = m.orient, .vel = m.vel, .angvel = m.angvel};
    engine_block_store(e, e->y, body, &bs);
    if (pair->params.resolver != CONTACT_RESOLVER_REDUCED)
        return ISSIM_OK; /* the same start for a force law: the body placed, free */
    SmoothData data = {.sys = sys, .state = st, .t = e->data.t};
    double block[2 * SMOOTH_COORDINATES];
    store(&st, block);
    return engine_reduced_start_pair(e, body, obstacle, &rp, &smooth_model, &data, sizeof data,
                                     block, err);
}

IssimStatus engine_smooth_start(Engine *e, IssimError *err) {
    for (int p = 0; p < e->model.pair_count; p++) {
        if (!thing_string(e->model.db, e->model.pairs[p].thing, "start_coords")[0])
            continue;
        IssimStatus s = start_pair(e, p, err);
        if (s != ISSIM_OK)
            return s;
    }
    return ISSIM_OK;
}

/* ===== Publishing the contact (002 6.2: the contact point and the patch in contact drawn) ===== */

/* One pair's report: the contact point, b's outward normal there, the normal force and the whole
 * force of b on a, friction included, turned from a's contact frame (x along x_s, z a's outward
 * normal: smooth_contact.h) into the world. false: a degenerate point (nothing to report). */
int engine_smooth_contact_reports(const Engine *e, ContactReport *out, int max) {
    int n = 0;
    for (int s = 0; s < e->reduced.slot_count && n < max; s++) {
        const EngineReducedSlot *slot = &e->reduced.slot[s];
        const SmoothData *d = (const SmoothData *)slot->data;
        if (!slot->active || slot->model != &smooth_model || slot->obstacle < 0 || !d->report_valid)
            continue;
        out[n++] = (ContactReport){.id = 0,
                                   .obstacle = slot->obstacle,
                                   .body_a = engine_body_id_pack(engine_body_id(e, slot->body_a)),
                                   .body_b = 0,
                                   .point = d->report_point,
                                   .normal = d->report_normal,
                                   .normal_force = d->report_normal_force,
                                   .force = d->report_force,
                                   .patch = d->state.patch_a};
    }
    return n;
}
