/* Engine creation and destruction (the model is read from the thing database in engine_build.c),
 * state variables, edits and the public accessors. The equations are in engine_dynamics.c, the
 * integrators in engine_cvode.c and engine_rk4.c, the system matrices in engine_system.c. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

EngineOptions engine_options_default(void) {
    return (EngineOptions){.integrator = -1, .dt = 0.0, .rtol = 0.0, .atol = 0.0};
}

void engine_emit(Engine *e, const EngineEvent *event) {
    if (e->event_fn)
        e->event_fn(event, e->event_user);
}

Engine *engine_create(const ThingDb *db, const EngineOptions *options, IssimError *err) {
    ThingId universe = thingdb_find_kind(db, THING_UNIVERSE);
    if (thing_id_is_null(universe)) {
        issim_error_set(err, ISSIM_ERR_INVALID, "the scene has no universe");
        return NULL;
    }
    Engine *e = calloc(1, sizeof *e);
    if (!e || !(e->model.db = thingdb_clone(db))) {
        free(e);
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory creating the engine");
        return NULL;
    }
    e->model.options = options ? *options : engine_options_default();
    e->serial = engine_next_serial();
    IssimStatus s = engine_build_model(e, universe, err);
    s = s == ISSIM_OK ? engine_sleep_init(e, err) : s;
    s = s == ISSIM_OK ? engine_islands_init(e, err) : s;
    if (s == ISSIM_OK) {
        engine_store_scene_state(e);
        s = engine_smooth_start(e, err);
    }
    if (s == ISSIM_OK) {
        engine_check_scales(e);
        engine_update_active_set(e, 0.0, NULL);
        engine_collide(e);
        engine_refresh_awake(e);
        s = engine_create_integrator(e, err);
    }
    if (s != ISSIM_OK) {
        engine_destroy(e);
        return NULL;
    }
    return e;
}

void engine_destroy(Engine *e) {
    if (!e)
        return;
    engine_integration_free(e);
    engine_collide_free(e);
    thingdb_destroy(e->model.db);
    free(e->model.bodies);
    free(e->body_data);
    free(e->model.obstacles);
    free(e->model.pairs);
    free(e->contacts);
    free(e->model.materials);
    free(e->model.layout.blocks);
    free(e->y);
    free(e->y_saved);
    free(e->model.vars.names);
    free(e->model.vars.units);
    engine_sleep_free(e);
    engine_islands_free(e);
    engine_checkpoints_free(e);
    engine_pool_free_all(&e->pool);
    engine_param_sets_free(&e->param_sets);
    free(e);
}

const ThingDb *engine_thingdb(const Engine *e) {
    return e->model.db;
}
IntegratorKind engine_integrator(const Engine *e) {
    return e->model.integrator_kind;
}
double engine_time(const Engine *e) {
    return e->data.t;
}
double engine_dt(const Engine *e) {
    return e->model.dt;
}
EngineStats engine_stats(const Engine *e) {
    EngineStats s = e->stats;
    s.collision_reports_used = e->collide.reports_used;
    s.collision_report_waits = e->collide.report_waits;
    s.collision_reports_stale = e->collide.reports_stale;
    s.collision_pipeline_reports = e->collide.pipeline.steps;
    s.scratch_grows = e->islands.step_scratch.chunks;
    return s;
}

void engine_set_event_callback(Engine *e, EngineEventFn fn, void *user) {
    e->event_fn = fn;
    e->event_user = user;
}

void engine_set_step_observer(Engine *e, void (*fn)(const Engine *, void *), void *user) {
    e->model.options.on_step = fn;
    e->model.options.on_step_user = user;
}

void engine_set_stop_check(Engine *e, bool (*fn)(void *), void *user) {
    e->model.options.should_stop = fn;
    e->model.options.should_stop_user = user;
}

/* ===== Variables ===== */

int engine_var_count(const Engine *e) {
    return e->model.vars.count;
}
const char *engine_var_name(const Engine *e, int var) {
    return e->model.vars.names[var];
}
const char *engine_var_unit(const Engine *e, int var) {
    return e->model.vars.units[var];
}

int engine_var_find(const Engine *e, const char *name) {
    for (int i = 0; i < e->model.vars.count; i++)
        if (strcmp(e->model.vars.names[i], name) == 0)
            return i;
    return -1;
}

IssimStatus engine_register_vars(const Engine *e, Registry *reg, IssimError *err) {
    for (int i = 0; i < e->model.vars.count; i++)
        if (registry_add_var(reg, e->model.vars.names[i], e->model.vars.units[i], err) < 0)
            return err ? err->status : ISSIM_ERR_INVALID;
    return ISSIM_OK;
}

EngineBodyState engine_frame_body(const double *values, int body) {
    const double *v = values + ENGINE_FRAME_BODY_VALUES * body;
    const double *p = v + ENGINE_FRAME_POS, *q = v + ENGINE_FRAME_ORIENT;
    const double *l = v + ENGINE_FRAME_VEL, *w = v + ENGINE_FRAME_ANGVEL;
    return (EngineBodyState){.pos = vec3(p[0], p[1], p[2]),
                             .orient = (Quat){q[0], q[1], q[2], q[3]},
                             .vel = vec3(l[0], l[1], l[2]),
                             .angvel = vec3(w[0], w[1], w[2])};
}

void engine_frame_set_body(double *values, int body, const EngineBodyState *st) {
    double *v = values + ENGINE_FRAME_BODY_VALUES * body;
    double *p = v + ENGINE_FRAME_POS, *q = v + ENGINE_FRAME_ORIENT;
    double *l = v + ENGINE_FRAME_VEL, *w = v + ENGINE_FRAME_ANGVEL;
    p[0] = st->pos.x, p[1] = st->pos.y, p[2] = st->pos.z;
    q[0] = st->orient.w, q[1] = st->orient.x, q[2] = st->orient.y, q[3] = st->orient.z;
    l[0] = st->vel.x, l[1] = st->vel.y, l[2] = st->vel.z;
    w[0] = st->angvel.x, w[1] = st->angvel.y, w[2] = st->angvel.z;
}

/* Each body's state is read once (engine_merge_states: the right-hand side's cache, free between
 * steps) for its frame values and for the energies, whose contacts read both their bodies. */
void engine_write_vars(const Engine *e, double *values) {
    const EngineBodyState *states = engine_merge_states(e);
    for (int b = 0; b < e->model.body_count; b++)
        engine_frame_set_body(values, b, &states[b]);
    EngineEnergy en = engine_energy_of_states(e, states);
    double *energies = values + ENGINE_FRAME_BODY_VALUES * e->model.body_count;
    energies[0] = en.kinetic;
    energies[1] = en.potential;
    energies[2] = en.elastic;
    energies[3] = en.total;
}

/* After the state jumped (a reset to an earlier frame, an edited position): contacts are found
 * again from the geometry, silently, because a reset is not a physical contact onset. */
static void reset_active_set(Engine *e, double t) {
    EngineEventFn fn = e->event_fn;
    e->event_fn = NULL;
    /* Frozen contacts (between sleeping bodies and obstacles) keep their activity and history:
     * nothing of them moved. The others are found again. */
    for (int ci = 0; ci < e->vertex_contact_count; ci++) {
        EngineContact *c = &e->contacts[ci];
        if (engine_contact_frozen(e, c) || !c->active)
            continue;
        ContactKinematics k;
        engine_contact_kinematics(e, e->y, c, t, &k, NULL, NULL);
        if (engine_contact_should_be_active(&k)) {
            /* Still touching after the jump: its history restarts here (the model's reset
             * hook), its id stays. */
            c->t_begin = t;
            c->equilibrium = false;
            engine_contact_reset(e, c, &k);
        } else {
            c->active = false;
            engine_contact_end(e, c);
        }
    }
    engine_update_active_set(e, t, NULL);
    int kept = e->vertex_contact_count;
    for (int ci = e->vertex_contact_count; ci < e->contact_count; ci++) {
        if (engine_contact_frozen(e, &e->contacts[ci]))
            e->contacts[kept++] = e->contacts[ci];
        else
            engine_contact_end(e, &e->contacts[ci]);
    }
    e->contact_count = kept;
    engine_invalidate(e, ENGINE_INVALID_FIXED_STEP);
    engine_collide_now(e);
    engine_refresh_awake(e);
    e->event_fn = fn;
}

IssimStatus engine_restore_vars(Engine *e, double t, const double *values, IssimError *err) {
    if (engine_checkpoint_restore(e, t))
        return ISSIM_OK;
    for (int i = 0; i < ENGINE_FRAME_BODY_VALUES * e->model.body_count; i++)
        if (!isfinite(values[i]))
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "cannot restore a frame with non-finite %s",
                                   e->model.vars.names[i]);
    for (int r = 0; r < e->reduced.slot_count; r++) /* the frame gives every body its own state */
        engine_reduced_leave(e, r, t);
    for (int b = 0; b < e->model.body_count; b++) {
        EngineBodyState st = engine_frame_body(values, b);
        engine_block_store(e, e->y, b, &st);
    }
    e->data.t = t;
    /* Equilibrium belongs to a trajectory, not to a frame: every body is integrated again from
     * the restored state (silently, like the contacts: a reset is not a physical event). */
    EngineEventFn fn = e->event_fn;
    e->event_fn = NULL;
    engine_wake_all(e, t);
    e->event_fn = fn;
    reset_active_set(e, t);
    engine_invalidate(e, ENGINE_INVALID_REPLAY | ENGINE_INVALID_INTEGRATOR);
    if (e->checkpoints.arena) {
        /* Checkpoints were on but this frame's is gone (past the ring's budget): say so once. */
        if (e->stats.restarts == 0)
            issim_log(ISSIM_LOG_INFO,
                      "no checkpoint at t = %.9g s (the ring keeps the newest ones): contact "
                      "histories restart there",
                      t);
        e->stats.restarts++;
    }
    return ISSIM_OK;
}

/* ===== Edits ===== */

static bool is_state_prop(const char *name) {
    return strcmp(name, "pos") == 0 || strcmp(name, "orient") == 0 || strcmp(name, "vel") == 0 ||
           strcmp(name, "angvel") == 0;
}

static int body_of_thing(const Engine *e, ThingId id) {
    for (int b = 0; b < e->model.body_count; b++)
        if (thing_id_equal(e->model.bodies[b].thing, id))
            return b;
    return -1;
}

/* Properties that change how a scene is shown or recorded, never its dynamics: editing them
 * wakes nobody. */
static bool is_presentation_prop(const char *name) {
    static const char *const names[] = {
        "horizon",     "history",     "record",         "camera_eye",   "camera_target",
        "camera_fov",  "camera_up",   "camera_follow",  "scene_name",   "description",
        "color",       "label",       "display_box",    "display_seat", "show_contacts",
        "show_forces", "plot_window", "playback_speed", "slow_motion",  "slow_motion_window"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

IssimStatus engine_apply_edit(Engine *e, const char *path, const char *value, IssimError *err) {
    ThingId id;
    int prop;
    IssimStatus s = thingdb_resolve(e->model.db, path, &id, &prop, err);
    if (s != ISSIM_OK)
        return s;
    PropValue old = *thing_prop_value(e->model.db, id, prop);
    s = thingdb_set_text(e->model.db, path, value, true, err);
    if (s != ISSIM_OK)
        return s;
    s = engine_refresh_params(e, err);
    if (s != ISSIM_OK) {
        /* Cross-property validation failed (a zero normal): put the old value back. */
        thing_set(e->model.db, id, prop, &old, false, NULL);
        engine_refresh_params(e, NULL);
        return s;
    }
    const char *name = thing_prop_def(e->model.db, id, prop)->name;
    int body = body_of_thing(e, id);
    if (!is_presentation_prop(name))
        e->model.generation++; /* a colour changes no step: replays across it stay exact */
    /* An edit is an interaction (App. E.3.1): the edited body wakes with its equilibrium list;
     * an edit of the universe (gravity), an obstacle or a contact pair may change every
     * equilibrium, so every body wakes; a presentation property wakes nobody. */
    if (is_presentation_prop(name))
        ; /* a colour, the camera, the description: nothing moves */
    else if (body >= 0)
        engine_wake_body(e, body, -1, e->data.t);
    else
        engine_wake_all(e, e->data.t);
    engine_refresh_awake(e);
    if (body >= 0 && is_state_prop(name)) {
        if (e->body_data[body].reduced_slot >= 0) /* a moved body leaves its reduced pair */
            engine_reduced_leave(e, e->body_data[body].reduced_slot, e->data.t);
        EngineBodyState st = engine_block_state(e, e->y, body);
        const PropValue *v = thing_prop_value(e->model.db, id, prop);
        if (strcmp(name, "pos") == 0)
            st.pos = vec3(v->vec[0], v->vec[1], v->vec[2]);
        else if (strcmp(name, "vel") == 0)
            st.vel = vec3(v->vec[0], v->vec[1], v->vec[2]);
        else if (strcmp(name, "angvel") == 0)
            st.angvel = vec3(v->vec[0], v->vec[1], v->vec[2]);
        else
            st.orient = (Quat){v->vec[0], v->vec[1], v->vec[2], v->vec[3]};
        engine_block_store(e, e->y, body, &st);
        reset_active_set(e, e->data.t);
    }
    engine_invalidate(e, ENGINE_INVALID_INTEGRATOR | ENGINE_INVALID_REPLAY);
    return ISSIM_OK;
}

/* ===== Bodies and contacts ===== */

int engine_body_count(const Engine *e) {
    return e->model.body_count;
}

/* ===== Body ids ===== */

/* Starts at 1 and skips 0 when it wraps, so no engine issues the null generation. */
static atomic_uint_fast32_t engine_serials;

uint32_t engine_next_serial(void) {
    uint32_t serial;
    do
        serial = (uint32_t)(atomic_fetch_add(&engine_serials, 1) + 1);
    while (serial == 0);
    return serial;
}

EngineBodyId engine_body_id(const Engine *e, int index) {
    if (index < 0 || index >= e->model.body_count)
        return engine_body_id_null();
    return (EngineBodyId){index, e->serial};
}

EngineBodyId engine_body_find(const Engine *e, const char *name) {
    for (int b = 0; name && b < e->model.body_count; b++)
        if (strcmp(e->model.bodies[b].name, name) == 0)
            return engine_body_id(e, b);
    return engine_body_id_null();
}

IssimStatus engine_body_check(const Engine *e, EngineBodyId id, IssimError *err) {
    if (engine_body_id_is_null(id))
        return issim_error_set(err, ISSIM_ERR_RANGE, "the null body id names no body");
    if (id.generation != e->serial)
        return issim_error_set(err, ISSIM_ERR_STALE,
                               "body id {index %d, engine %u} is stale: it is from another engine "
                               "(this is engine %u; a previous scene's, or a destroyed one)",
                               (int)id.index, (unsigned)id.generation, (unsigned)e->serial);
    if (id.index < 0 || id.index >= e->model.body_count)
        return issim_error_set(
            err, ISSIM_ERR_RANGE, "body id {index %d, engine %u}: engine %u has %d bodies",
            (int)id.index, (unsigned)id.generation, (unsigned)e->serial, e->model.body_count);
    return ISSIM_OK;
}

bool engine_body_valid(const Engine *e, EngineBodyId id) {
    return engine_body_check(e, id, NULL) == ISSIM_OK;
}

const char *engine_body_name(const Engine *e, EngineBodyId body) {
    return engine_body_valid(e, body) ? e->model.bodies[body.index].name : NULL;
}
ThingId engine_body_thing(const Engine *e, EngineBodyId body) {
    return engine_body_valid(e, body) ? e->model.bodies[body.index].thing : thing_id_null();
}
double engine_body_mass(const Engine *e, EngineBodyId body) {
    return engine_body_valid(e, body) ? e->model.bodies[body.index].mass : NAN;
}

Vec3 engine_body_inertia(const Engine *e, EngineBodyId body) {
    return engine_body_valid(e, body) ? e->model.bodies[body.index].inertia : (Vec3){NAN, NAN, NAN};
}

EngineBodyState engine_body_state(const Engine *e, EngineBodyId body) {
    if (!engine_body_valid(e, body)) {
        Vec3 nan3 = {NAN, NAN, NAN};
        return (EngineBodyState){nan3, (Quat){NAN, NAN, NAN, NAN}, nan3, nan3};
    }
    return engine_block_state(e, e->y, body.index);
}

static bool vec3_same(Vec3 a, Vec3 b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
}

static bool vec3_is_finite(Vec3 v) {
    return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

IssimStatus engine_set_applied_wrench(Engine *e, EngineBodyId id, Vec3 force, Vec3 torque,
                                      IssimError *err) {
    IssimStatus s = engine_body_check(e, id, err);
    if (s != ISSIM_OK)
        return s;
    EngineBody *b = &e->model.bodies[id.index];
    if (!vec3_is_finite(force) || !vec3_is_finite(torque))
        return issim_error_set(err, ISSIM_ERR_RANGE, "applied wrench on %s is not finite", b->name);
    if (e->model.planar) { /* the planar block moves in x-z and turns about y only */
        force.y = 0.0;
        torque = vec3(0.0, torque.y, 0.0);
    }
    EngineBodyData *d = &e->body_data[id.index];
    if (vec3_same(d->applied_force, force) && vec3_same(d->applied_torque, torque))
        return ISSIM_OK;
    d->applied_force = force;
    d->applied_torque = torque;
    engine_wake_body(e, id.index, -1, e->data.t); /* a change in its force field (004 4.8.5) */
    engine_refresh_awake(e);
    /* a jump in the right-hand side, and a replay would not know this wrench */
    engine_invalidate(e, ENGINE_INVALID_INTEGRATOR | ENGINE_INVALID_REPLAY);
    return ISSIM_OK;
}

int engine_active_contact_count(const Engine *e) {
    int n = 0;
    for (int ci = 0; ci < e->contact_count; ci++)
        n += e->contacts[ci].active;
    return n;
}

bool engine_contact_normal(const Engine *e, uint32_t id, Vec3 *normal) {
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (!c->active || c->id != id)
            continue;
        ContactKinematics k;
        engine_contact_kinematics(e, e->y, c, e->data.t, &k, NULL, NULL);
        *normal = k.normal;
        return true;
    }
    return false;
}

int engine_contact_reports(const Engine *e, ContactReport *out, int max) {
    int n = 0;
    for (int ci = 0; ci < e->contact_count && n < max; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (!c->active)
            continue;
        ContactKinematics k;
        Vec3 point;
        engine_contact_kinematics(e, e->y, c, e->data.t, &k, &point, NULL);
        ContactForce f = engine_contact_force(e, c, &k);
        bool stepped = engine_contact_time_stepped(e, c);
        if (stepped)
            f = (ContactForce){.normal = c->resolved_force, .tangent = c->resolved_friction};
        out[n++] = (ContactReport){.id = c->id,
                                   .patch = -1,
                                   .stepped = stepped,
                                   .body_a = engine_body_id_pack(engine_body_id(e, c->body)),
                                   .body_b = engine_body_id_pack(engine_body_id(e, c->body_b)),
                                   .obstacle = c->obstacle,
                                   .point = point,
                                   .normal = k.normal,
                                   .depth = k.depth,
                                   .depth_rate = k.depth_rate,
                                   .normal_force = f.normal,
                                   .force = vec3_mad(f.tangent, f.normal, k.normal)};
    }
    return n;
}
