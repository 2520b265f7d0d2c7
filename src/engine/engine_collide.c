/* Running the collision world (the collision manager of 000 App. B.4.3) on the bodies whose shapes
 * engine_shapes.c built, synchronously as lock-step mode does or on the manager's thread.
 *
 * After each update the manifold contacts are replaced by the world's contacts. A contact the
 * world still reports (same id: same body pair, same feature pair) keeps its engine id, activity
 * and model history, with its points and normal refreshed; a new one starts active if it already
 * overlaps (its onset happened between two updates; the margin keeps that rare for bodies
 * approaching slower than margin / dt) and otherwise waits for its depth to cross zero, which
 * the integrator locates; a vanished active one ends. The integrator restarts after any update
 * that changed the contact set or moved a contact's geometry, because the right-hand side
 * changed there.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine_internal.h"
#include "issim/task_pool.h"

static Pose body_pose(const Engine *e, int body) {
    EngineBodyState st = engine_block_state(e, e->y, body);
    return (Pose){st.pos, st.orient};
}

bool engine_reserve_contacts(Engine *e, int count) {
    if (count <= e->contact_capacity)
        return true;
    int cap = issim_array_grown_capacity(e->contact_capacity, count);
    if (!ISSIM_ARRAY_RESIZE(e->contacts, cap) || !ISSIM_ARRAY_RESIZE(e->collide.spare, cap) ||
        !ISSIM_ARRAY_RESIZE(e->sleep.live_contacts, cap)) /* engine_sleep.c */
        return false;
    e->contact_capacity = cap;
    return true;
}

/* The previous update's manifold contacts, with an open-addressing index by collision id so
 * matching costs O(contacts) per update, not O(contacts^2). */
static bool reserve_previous(Engine *e, int count) {
    if (count <= e->collide.previous_capacity)
        return true;
    /* grown geometrically: a pile gaining a contact a step would reallocate every step */
    count = issim_array_grown_capacity(e->collide.previous_capacity, count);
    int slots = 16;
    while (slots < 2 * count)
        slots *= 2;
    if (!ISSIM_ARRAY_RESIZE(e->collide.previous_kept, count) ||
        !ISSIM_ARRAY_RESIZE(e->collide.previous_index, slots))
        return false;
    e->collide.previous_capacity = count;
    e->collide.previous_slots = slots;
    return true;
}

static uint32_t slot_of_id(uint32_t id, int slots) {
    return (id * 2654435761u) & (uint32_t)(slots - 1);
}

static void build_previous_index(Engine *e, int count) {
    for (int i = 0; i < e->collide.previous_slots; i++)
        e->collide.previous_index[i] = -1;
    for (int j = 0; j < count; j++) {
        e->collide.previous_kept[j] = false;
        uint32_t s = slot_of_id(e->collide.previous[j].collision_id, e->collide.previous_slots);
        while (e->collide.previous_index[s] >= 0)
            s = (s + 1) & (uint32_t)(e->collide.previous_slots - 1);
        e->collide.previous_index[s] = j;
    }
}

static int find_previous(const Engine *e, uint32_t id) {
    if (e->collide.previous_slots == 0)
        return -1;
    uint32_t s = slot_of_id(id, e->collide.previous_slots);
    while (e->collide.previous_index[s] >= 0) {
        if (e->collide.previous[e->collide.previous_index[s]].collision_id == id)
            return e->collide.previous_index[s];
        s = (s + 1) & (uint32_t)(e->collide.previous_slots - 1);
    }
    return -1;
}

static double round_radius(const Shape *s) {
    return s->kind == SHAPE_SPHERE || s->kind == SHAPE_CAPSULE ? s->radius : 0.0;
}

/* The engine contact for a world contact: geometry in the bodies' frames, using the poses the
 * contact was computed with (a collision report may be older than the engine's state). */
static bool contact_from_world(Engine *e, const CollisionContact *wc, const Pose *poses,
                               EngineContact *c) {
    int a = e->collide.world_owner[wc->body_a], b = e->collide.world_owner[wc->body_b];
    if (a < 0)
        return false; /* static-static never happens; a static A would mean a bad ordering */
    int material_b = b >= 0 ? e->model.bodies[b].material : e->model.obstacles[-b - 1].material;
    int pair = engine_find_pair(e, e->model.bodies[a].material, material_b);
    if (pair < 0)
        return false; /* no contact model between these materials: they pass through */
    Pose pa = poses ? poses[wc->body_a] : body_pose(e, a);
    /* A sphere or capsule is round: its contact point must not ride on the body as it spins
     * (that would put a lever arm on a force through the axis and pump energy into the spin),
     * so the body-fixed anchor is the core point, and the surface point is the radius away from
     * it along the current normal. */
    double ra = round_radius(&e->model.bodies[a].shape);
    double rb = b >= 0 ? round_radius(&e->model.bodies[b].shape) : 0.0;
    Vec3 point_a = vec3_mad(wc->point.point_a, ra, wc->normal);
    Vec3 point_b = vec3_mad(wc->point.point_b, -rb, wc->normal);
    *c = (EngineContact){.kind = CONTACT_MANIFOLD,
                         .body = a,
                         .vertex = -1,
                         .obstacle = b >= 0 ? -1 : -b - 1,
                         .pair = pair,
                         .body_b = b >= 0 ? b : -1,
                         .local_a = pose_apply_inv(pa, point_a),
                         .radius_a = ra,
                         .radius_b = rb,
                         .source_point = wc->point.point_a,
                         .local_b = point_b,
                         .normal_b = wc->normal,
                         .collision_id = wc->id};
    if (b >= 0) {
        Pose pb = poses ? poses[wc->body_b] : body_pose(e, b);
        c->local_b = pose_apply_inv(pb, point_b);
        c->normal_b = quat_rotate_inv(pb.q, wc->normal);
    }
    return true;
}

/* A contact between two round shapes from a report older than the state (the pipeline's: one
 * step; the GUI's threaded manager's: up to two): its normal becomes the line between its two core
 * points now. The report's normal, fixed in B's frame, turns with B and drifts from that line as
 * the bodies move for the step the report is late; the rows then held resting spheres along a
 * tilted normal and they sank to the PGS's position slop (0.102 mm on the 100-sphere pile against
 * the serial path's 0.018). For two spheres the line is the exact normal; for a capsule's core
 * point, which slides along its axis a little in a step, the nearest one. */
static void refresh_round_normal(const Engine *e, EngineContact *c) {
    if (c->body_b < 0 || !(c->radius_a > 0.0) || !(c->radius_b > 0.0))
        return;
    const EngineBodyState *states = e->collide.merge_states; /* the merge's, at e->y */
    Pose pa = {states[c->body].pos, states[c->body].orient};
    Pose pb = {states[c->body_b].pos, states[c->body_b].orient};
    Vec3 line = vec3_sub(pose_apply(pa, c->local_a), pose_apply(pb, c->local_b));
    double length = vec3_norm(line);
    if (length > 1e-12 * (c->radius_a + c->radius_b))
        c->normal_b = quat_rotate_inv(pb.q, vec3_scale(line, 1.0 / length));
}

static void emit_manifold(Engine *e, const EngineContact *c, EngineEventKind kind,
                          double depth_rate) {
    EngineEvent ev = engine_contact_event(c, e->data.t, -depth_rate);
    ev.kind = kind;
    ev.vertex = -1;
    ev.duration = kind == ENGINE_EVENT_CONTACT_END ? e->data.t - c->t_begin : 0.0;
    engine_emit(e, &ev);
}

/* The manager's pose source. Synchronously (lock-step, resets) it reads the engine's own state;
 * while the manager thread runs it reads only the registry's newest frame, because the engine
 * state belongs to the engine thread. */
/* How far beyond the world's margin body b may move before the contacts of an update from this
 * state are merged: its speed at its farthest point over the updates that may pass first (one in
 * lock-step, the tolerated lag behind a threaded manager), twice over for what it gains
 * meanwhile, less the margin every pair has anyway. A body slower than that adds nothing, so the
 * contacts of an ordinary scene are those it always had. */
static double reach_ahead(const Engine *e, int b, Vec3 vel, Vec3 angvel) {
    double speed = vec3_norm(vel) + vec3_norm(angvel) * e->model.bodies[b].reach;
    double updates = e->collide.registry             ? 1.0 + ENGINE_REPORT_MAX_LAG
                     : e->collide.pipeline.in_flight ? 2.0 /* fed: merged a step later */
                                                     : 1.0;
    double travel = ENGINE_REACH_AHEAD_SAFETY * speed * e->model.dt * updates;
    return fmax(0.0, travel - e->collide.margin);
}

/* The manager thread's source while the pipeline runs: the state the engine fed last, once. */
static bool pipeline_source(Engine *e, double *t, Pose *poses, double *ahead, int count) {
    EngineCollisionPipeline *pl = &e->collide.pipeline;
    uint64_t fed = atomic_load_explicit(&pl->fed, memory_order_acquire);
    if (fed == pl->read)
        return false;
    pl->read = fed;
    memcpy(poses, pl->poses, sizeof *poses * (size_t)count);
    memcpy(ahead, pl->ahead, sizeof *ahead * (size_t)count);
    *t = pl->t;
    return true;
}

/* The shaped bodies' poses and reach ahead at the engine's state, by world index (the
 * synchronous source's, and what the pipeline feeds). */
static void current_poses(const Engine *e, Pose *poses, double *ahead) {
    for (int b = 0; b < e->model.body_count; b++) {
        if (!e->model.bodies[b].shaped)
            continue;
        EngineBodyState st = engine_block_state(e, e->y, b);
        int w = e->model.bodies[b].world_index;
        poses[w] = (Pose){st.pos, st.orient};
        ahead[w] = e->body_data[b].asleep ? 0.0 : reach_ahead(e, b, st.vel, st.angvel);
    }
}

bool engine_pose_source(void *ctx, double *t, Pose *poses, double *ahead, int count) {
    Engine *e = ctx;
    if (e->collide.pipeline.running)
        return pipeline_source(e, t, poses, ahead, count);
    if (!e->collide.registry) {
        current_poses(e, poses, ahead);
        *t = e->data.t;
        return true;
    }
    /* A newest frame earlier than the last one read means the engine rewound (a drag, an edit,
     * the scrubber): it is new work too. Waiting for a time beyond the old one left the
     * engine without reports after every rewind, each step waiting ENGINE_REPORT_WAIT_LIMIT. */
    RegistryFrame frame = {.values = e->collide.frame};
    if (!registry_read_latest(e->collide.registry, &frame) || frame.t == *t)
        return false;
    for (int b = 0; b < e->model.body_count; b++) {
        if (!e->model.bodies[b].shaped)
            continue;
        EngineBodyState st = engine_frame_body(frame.values, b);
        int w = e->model.bodies[b].world_index;
        poses[w] = (Pose){st.pos, quat_normalize(st.orient)};
        ahead[w] = reach_ahead(e, b, st.vel, st.angvel);
    }
    *t = frame.t;
    (void)count;
    return true;
}

/* Threaded: the newest report if one arrived since the last step, waiting for the manager when
 * the newest one merged is more than ENGINE_REPORT_MAX_LAG output steps behind the engine and
 * the registry holds a newer state for it to work on. Without the wait a manager starved of CPU
 * (a display's rasteriser threads on two cores) let the engine run on for tens of steps without
 * discovering new contacts: a box fell 10 cm into the floor and was launched 40 m up. With it,
 * a contact is discovered at most ENGINE_REPORT_MAX_LAG steps late, whatever the load. The wait
 * gives up after ENGINE_REPORT_WAIT_LIMIT s of wall time (counted as stale) so a stopped
 * manager never hangs the engine. */
static bool take_report(Engine *e, CollisionReport *report) {
    collision_manager_notify(e->collide.manager); /* the state published after the last step */
    bool got = collision_manager_take(e->collide.manager, report);
    if (got)
        e->data.report_t = report->t;
    double oldest = e->data.t - ENGINE_REPORT_MAX_LAG * e->model.dt * (1.0 + 1e-9);
    if (e->data.report_t >= oldest)
        return got;
    e->collide.report_waits++;
    double t0 = issim_wall_time();
    while (e->data.report_t < oldest &&
           registry_state_time(e->collide.registry) > e->data.report_t &&
           issim_wall_time() - t0 < ENGINE_REPORT_WAIT_LIMIT) {
        uint64_t seen = collision_manager_published(e->collide.manager);
        if (!collision_manager_take(e->collide.manager, report)) {
            /* poked above: no state is published while this thread waits */
            collision_manager_wait_published(e->collide.manager, seen, 1e-3);
            if (!collision_manager_take(e->collide.manager, report))
                continue;
        }
        got = true;
        e->data.report_t = report->t;
    }
    if (e->data.report_t < oldest)
        e->collide.reports_stale++;
    return got;
}

/* The world updated on this thread, on the current state. */
static bool collide_here(Engine *e, CollisionReport *report) {
    engine_reduced_hold_pairs(e); /* engine_reduced.c */
    collision_manager_step(e->collide.manager);
    if (!collision_manager_take(e->collide.manager, report))
        return false;
    e->data.report_t = report->t;
    return true;
}

/* ===== The collision pipeline (EngineOptions.pipeline_collision) =====
 *
 * Step n takes the report of the state fed at step n - 1, feeds its own state and merges the
 * report while the manager thread updates the world on the new state: the update overlaps the
 * solve and the integration. Every take waits for exactly the update of the state fed before
 * it (the manager updates only on a fed state, one report each), so the contacts a step merges
 * do not depend on timing. The first step after a start feeds and waits for its own state (the
 * serial path's contacts), the next one feeds without merging (its contacts are then one step
 * old), and from there each step merges the previous one's. */

static void pipeline_free_mailbox(EngineCollisionPipeline *pl) {
    free(pl->poses);
    free(pl->ahead);
    pl->poses = NULL;
    pl->ahead = NULL;
}

void engine_pipeline_free(Engine *e) {
    if (e->collide.manager)
        engine_pipeline_stop(e);
    pipeline_free_mailbox(&e->collide.pipeline);
}

static bool pipeline_start(Engine *e) {
    EngineCollisionPipeline *pl = &e->collide.pipeline;
    int count = collision_world_body_count(e->collide.world);
    if (!pl->poses) {
        pl->poses = calloc((size_t)count + 1, sizeof *pl->poses);
        pl->ahead = calloc((size_t)count + 1, sizeof *pl->ahead);
        if (!pl->poses || !pl->ahead) {
            pipeline_free_mailbox(pl);
            return false;
        }
    }
    for (int w = 0; w < count; w++) /* obstacles keep theirs; bodies are fed */
        pl->poses[w] = collision_world_pose(e->collide.world, w);
    pl->read = atomic_load_explicit(&pl->fed, memory_order_relaxed);
    /* Before the thread starts: its first look at the source must see the mailbox. */
    pl->running = true;
    pl->in_flight = false;
    pl->primed = false;
    IssimError err;
    collision_manager_set_spin(e->collide.manager, ENGINE_PIPELINE_SPIN);
    if (collision_manager_start(e->collide.manager, &err) != ISSIM_OK) {
        collision_manager_set_spin(e->collide.manager, 0.0);
        pl->running = false;
        issim_log(ISSIM_LOG_WARN, "collision pipeline: %s; colliding on the engine's thread",
                  err.message);
        return false;
    }
    return true;
}

void engine_pipeline_stop(Engine *e) {
    EngineCollisionPipeline *pl = &e->collide.pipeline;
    if (!pl->running)
        return;
    collision_manager_stop(e->collide.manager);
    collision_manager_set_spin(e->collide.manager, 0.0); /* the GUI's manager sleeps when idle */
    CollisionReport dropped; /* an update of a state no step will merge */
    (void)collision_manager_take(e->collide.manager, &dropped);
    pl->running = false;
    pl->in_flight = false;
    pl->primed = false;
}

bool engine_pipeline_running(const Engine *e) {
    return e->collide.pipeline.running;
}

static void pipeline_feed(Engine *e) {
    EngineCollisionPipeline *pl = &e->collide.pipeline;
    pl->in_flight = true; /* reach_ahead: merged a step later */
    current_poses(e, pl->poses, pl->ahead);
    pl->t = e->data.t;
    pl->published_expected = collision_manager_published(e->collide.manager) + 1;
    atomic_fetch_add_explicit(&pl->fed, 1, memory_order_release);
    collision_manager_notify(e->collide.manager);
}

/* The report of the state in flight; false when the manager gave none in
 * ENGINE_PIPELINE_WAIT_LIMIT s of wall time (out of memory: it logged why). */
static bool pipeline_take(Engine *e, CollisionReport *report) {
    EngineCollisionPipeline *pl = &e->collide.pipeline;
    CollisionManager *m = e->collide.manager;
    double t0 = issim_wall_time();
    uint64_t seen;
    while ((seen = collision_manager_published(m)) < pl->published_expected) {
        double waited = issim_wall_time() - t0;
        if (waited > ENGINE_PIPELINE_WAIT_LIMIT)
            return false;
        if (waited < ENGINE_PIPELINE_SPIN)
            continue; /* polling: the report of a pile's step comes within a millisecond */
        collision_manager_wait_published(m, seen, 1e-3);
    }
    pl->in_flight = false;
    if (!collision_manager_take(m, report))
        return false;
    e->data.report_t = report->t;
    return true;
}

/* Returns whether *report is to be merged now. */
static bool pipeline_collide(Engine *e, CollisionReport *report) {
    EngineCollisionPipeline *pl = &e->collide.pipeline;
    if (!pl->running && !pipeline_start(e))
        return collide_here(e, report);
    bool taken = false;
    if (pl->in_flight && !(taken = pipeline_take(e, report))) {
        issim_log(ISSIM_LOG_ERROR,
                  "collision pipeline: no report in %.0f s; colliding on the "
                  "engine's thread from now",
                  ENGINE_PIPELINE_WAIT_LIMIT);
        e->stats.warnings++;
        engine_pipeline_stop(e);
        e->model.options.pipeline_collision = false;
        return collide_here(e, report);
    }
    engine_reduced_hold_pairs(e); /* the world is idle: nothing in flight */
    pipeline_feed(e);
    if (taken)
        return true;
    if (pl->primed)
        return false; /* the contacts of the state before: merged last step */
    pl->primed = true;
    return pipeline_take(e, report);
}

void engine_collide(Engine *e) {
    if (!e->collide.manager)
        return;
    CollisionReport report;
    if (e->collide.registry) {
        if (!take_report(e, &report))
            return;
        e->collide.reports_used++;
    } else if (e->model.options.pipeline_collision && !e->collide.pipeline.paused) {
        if (!pipeline_collide(e, &report))
            return;
        e->collide.pipeline.steps++;
    } else if (!collide_here(e, &report))
        return;
    /* the pipeline's report, a step old, or the GUI's threaded manager's, up to two */
    e->collide.pipeline.merging_late =
        (e->collide.pipeline.running || e->collide.registry) && report.t < e->data.t;
    engine_merge_contacts(e, report.contacts, report.contact_count, report.poses);
    e->collide.pipeline.merging_late = false;
    engine_keep_identity(e, report.contacts, report.contact_count, report.next_id);
}

static bool wants_collision_thread(const Engine *e) {
    if (e->model.collision_thread != COLLISION_THREAD_AUTO)
        return e->model.collision_thread == COLLISION_THREAD_ON;
    int shaped = 0;
    for (int b = 0; b < e->model.body_count; b++)
        shaped += e->model.bodies[b].shaped;
    return shaped >= ENGINE_COLLISION_THREAD_MIN_BODIES;
}

bool engine_collision_threaded(const Engine *e) {
    return e->collide.registry != NULL;
}

IssimStatus engine_start_collision_thread(Engine *e, Registry *reg, IssimError *err) {
    if (!e->collide.manager || e->collide.registry || !wants_collision_thread(e))
        return ISSIM_OK;
    engine_pipeline_stop(e); /* the thread now reads the registry instead */
    if (registry_var_count(reg) < engine_var_count(e) ||
        registry_var_find(reg, engine_var_name(e, 0)) != 0)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "the registry does not hold this engine's variables");
    free(e->collide.frame);
    e->collide.frame = calloc((size_t)registry_var_count(reg), sizeof(double));
    if (!e->collide.frame)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    e->collide.registry = reg;
    IssimStatus s = collision_manager_start(e->collide.manager, err);
    if (s != ISSIM_OK)
        e->collide.registry = NULL;
    return s;
}

void engine_stop_collision_thread(Engine *e) {
    if (!e->collide.manager || !e->collide.registry)
        return;
    collision_manager_stop(e->collide.manager);
    e->collide.registry = NULL;
}

/* A reset while the thread runs: stop it, recompute the contacts of the new state on this
 * thread, start it again, so no report from the discarded future is ever used. */
void engine_collide_now(Engine *e) {
    if (!e->collide.manager)
        return;
    engine_pipeline_stop(e); /* an update in flight is of the state before the reset */
    Registry *reg = e->collide.registry;
    if (reg)
        engine_stop_collision_thread(e);
    e->collide.manifold_energy.fresh = true; /* a state jump: its overlaps are the user's */
    engine_collide(e);
    if (reg) {
        IssimError err;
        if (engine_start_collision_thread(e, reg, &err) != ISSIM_OK)
            issim_log(ISSIM_LOG_ERROR, "collision manager: %s", err.message);
    }
}

/* The world's contact for a previous one of the same id, keeping its identity and history;
 * anchors carried over by the world (bodies at rest: the same geometry) stay where they are
 * on the bodies instead of being re-made from stale poses. */
static void persist(EngineContact *c, const EngineContact *old) {
    if (memcmp(&old->source_point, &c->source_point, sizeof c->source_point) == 0) {
        c->local_a = old->local_a;
        c->local_b = old->local_b;
        c->normal_b = old->normal_b;
    }
    c->id = old->id;
    c->t_begin = old->t_begin;
    c->history = old->history;
    c->state_offset = old->state_offset;
    c->state_bytes = old->state_bytes;
    c->equilibrium = old->equilibrium;
    c->load = old->load;
    c->resolved_force = old->resolved_force;
    c->warm_impulse = old->warm_impulse;
    c->resolved_friction = old->resolved_friction;
    c->released = old->released;
}

static void begin_manifold(Engine *e, EngineContact *c, const ContactKinematics *k) {
    c->id = ++e->data.next_contact_id;
    c->t_begin = e->data.t;
    engine_contact_begin(e, c, k);
    c->equilibrium = false;
    c->load = 0.0;
    c->still_speed = 0.0;
    emit_manifold(e, c, ENGINE_EVENT_CONTACT_BEGIN, k->depth_rate);
    engine_wake_on_contact(e, c, k, e->data.t);
}

/* Activity of a refreshed or new contact; returns whether the contact set changed. ledger: its
 * kinematics as the energy ledger computed them (engine_manifold_energy_settle, before it set the
 * depth offset). */
static bool settle_activity(Engine *e, EngineContact *c, const EngineContact *old,
                            const ContactKinematics *ledger) {
    bool stepped = engine_contact_time_stepped(e, c);
    /* A time-stepped row (a complementarity island's) keeps the activity its solver gave it: no
     * kinematics to compute (a pile's every contact, every step). */
    if (stepped) {
        c->active = old ? old->active : false;
        c->released = false;
        if (!old)
            return true;
        if (!c->active && old->active) {
            engine_contact_end(e, c);
            emit_manifold(e, old, ENGINE_EVENT_CONTACT_END, 0.0);
            return true;
        }
        return false;
    }
    /* The ledger's depth is the geometric one (a refreshed contact starts at offset 0): with
     * the offset subtracted it is what engine_merge_kinematics would give, to the last bit. */
    ContactKinematics k = *ledger;
    k.depth -= c->depth_offset;
    if (!old) {
        c->active = engine_contact_should_be_active(&k);
        if (c->active)
            begin_manifold(e, c, &k);
        return true;
    }
    /* Persisting: the refreshed geometry decides activity, since a refresh can move the depth
     * across zero without any root to report it. A time-stepped row keeps the activity its
     * solver gave it. */
    c->released = old->released && k.depth > 0.0; /* the model ended it: until they part */
    c->active = c->released ? false : engine_contact_should_be_active(&k);
    if (c->active && !old->active) {
        begin_manifold(e, c, &k);
        return true;
    }
    if (!c->active && old->active) {
        engine_contact_end(e, c);
        emit_manifold(e, old, ENGINE_EVENT_CONTACT_END, k.depth_rate);
        return true;
    }
    return false;
}

/* A scene that starts overlapping explodes instead of settling: say so, with the deepest pair
 * (the bad-input rule: loaded, never a silent explosion). */
static void warn_initial_overlap(Engine *e) {
    double elastic = 0.0, deepest = 0.0;
    const EngineContact *worst = NULL;
    int overlapping = 0;
    for (int i = e->vertex_contact_count; i < e->contact_count; i++) {
        const EngineContact *c = &e->contacts[i];
        if (!c->active)
            continue;
        ContactKinematics k;
        engine_manifold_kinematics(e, e->y, c, e->data.t, &k, NULL, NULL, NULL);
        elastic += engine_contact_potential(e, c, &k);
        overlapping += k.depth > 0.0;
        if (k.depth > deepest) {
            deepest = k.depth;
            worst = c;
        }
    }
    if (!worst || !(elastic > ENGINE_OVERLAP_WARN_ENERGY))
        return;
    issim_log(ISSIM_LOG_WARN,
              "the scene starts overlapping: %d contacts hold %.3g J of elastic energy; the "
              "deepest is %s on %s, %.3g mm (move the bodies apart, or they will be thrown)",
              overlapping, elastic, e->model.bodies[worst->body].name,
              engine_contact_partner(e, worst), deepest * 1e3);
    e->stats.warnings++;
}

/* The merge's new contacts go to the spare buffer, which becomes Engine.contacts: the vertex
 * contacts are copied over and the previous manifold ones stay where they are, read through
 * collide.previous, until the next merge (a copy of every contact, hundreds of bytes each, was
 * most of the merge's memory traffic in a pile). */
static void swap_contact_buffers(Engine *e) {
    EngineContact *old = e->contacts;
    memcpy(e->collide.spare, old, sizeof *old * (size_t)e->vertex_contact_count);
    e->contacts = e->collide.spare;
    e->collide.spare = old;
    e->collide.previous = old + e->vertex_contact_count;
}

void engine_merge_contacts(Engine *e, const CollisionContact *world, int count, const Pose *poses) {
    /* Previous manifold contacts, sorted by collision id (the world issues increasing ids). */
    int old_count = e->contact_count - e->vertex_contact_count;
    e->collide.merge_states = engine_merge_states(e);
    if (!reserve_previous(e, old_count + 1) ||
        !engine_reserve_contacts(e, e->vertex_contact_count + count + 1) ||
        !engine_manifold_energy_begin(e, old_count, count)) {
        issim_log(ISSIM_LOG_ERROR, "out of memory for %d contacts: contacts dropped", count);
        e->stats.warnings++;
        e->collide.merge_states = NULL;
        return;
    }
    swap_contact_buffers(e);
    bool changed = old_count != count;
    bool any_active = false;
    build_previous_index(e, old_count);
    int first = e->vertex_contact_count, n = first;
    int *previous_of = e->collide.manifold_energy.previous_of;
    for (int i = 0; i < count; i++) {
        int j = find_previous(e, world[i].id);
        if (j >= 0 && engine_contact_frozen(e, &e->collide.previous[j]) &&
            memcmp(&e->collide.previous[j].source_point, &world[i].point.point_a, sizeof(Vec3)) ==
                0) {
            /* Carried over by the world between sleeping bodies (or a sleeping body and an
             * obstacle): nothing of it can have changed (engine_sleep.c). */
            e->collide.previous_kept[j] = true;
            previous_of[n - first] = ENGINE_CARRIED_FROZEN(j);
            e->contacts[n++] = e->collide.previous[j];
            continue;
        }
        /* Built in its slot (a contact is large: no copy through the stack); a contact that
         * fails is overwritten by the next. */
        EngineContact *c = &e->contacts[n];
        if (!contact_from_world(e, &world[i], poses, c))
            continue;
        if (e->collide.pipeline.merging_late)
            refresh_round_normal(e, c);
        IssimError err;
        /* The patch's point count of the last update (engine_manifold_energy.c shares the
         * damping among a pair's points): the damping is derived once unless it changed. */
        if (j >= 0)
            c->patch_points = e->collide.previous[j].patch_points;
        /* A contact that persists has the same bodies, pair and point count as its previous
         * one, which was bound to the parameters as they are now (an edit or a restore binds
         * every contact again): the same set, without deriving the damping again. */
        if (j >= 0 && c->pair == e->collide.previous[j].pair)
            c->param_set = e->collide.previous[j].param_set;
        else if (engine_contact_bind_params(e, c, &err) != ISSIM_OK)
            continue;
        if (j >= 0) {
            e->collide.previous_kept[j] = true;
            persist(c, &e->collide.previous[j]);
        }
        previous_of[n - first] = j;
        n++;
    }
    e->contact_count = n;
    engine_manifold_energy_settle(e, n - first);
    for (int i = first; i < n; i++) {
        int j = previous_of[i - first];
        if (j < -1)
            continue; /* frozen */
        EngineContact *c = &e->contacts[i];
        changed = settle_activity(e, c, j >= 0 ? &e->collide.previous[j] : NULL,
                                  &e->collide.manifold_energy.kinematics[i - first]) ||
                  changed;
        any_active = any_active || (c->active && !engine_contact_frozen(e, c));
    }
    /* Active contacts the world no longer reports have ended. */
    for (int j = 0; j < old_count; j++) {
        if (e->collide.previous_kept[j])
            continue;
        changed = true;
        engine_contact_end(e, &e->collide.previous[j]);
        if (e->collide.previous[j].active)
            emit_manifold(e, &e->collide.previous[j], ENGINE_EVENT_CONTACT_END, 0.0);
    }
    if (changed || any_active)
        engine_invalidate(e, ENGINE_INVALID_INTEGRATOR);
    if (changed)
        engine_invalidate(e, ENGINE_INVALID_FIXED_STEP);
    if (e->collide.manifold_energy.check_overlap) {
        e->collide.manifold_energy.check_overlap = false;
        warn_initial_overlap(e);
    }
    e->collide.merge_states = NULL;
}

/* The two shapes of c's pair at the current poses. */
static double pose_distance(const Engine *e, const EngineContact *c) {
    Pose pa = body_pose(e, c->body), pb;
    const Shape *sb;
    if (c->body_b >= 0) {
        sb = &e->model.bodies[c->body_b].shape;
        pb = body_pose(e, c->body_b);
    } else {
        sb = &e->model.obstacles[c->obstacle].shape;
        pb = e->model.obstacles[c->obstacle].pose;
    }
    Vec3 qa, qb, n;
    return shape_distance(&e->model.bodies[c->body].shape, pa, sb, pb, &qa, &qb, &n);
}

/* The pair of c's contacts: its pose overlap, and the deepest depth its active contacts' models
 * are given, folded into p. A pair's contacts are consecutive. Returns the first contact past it.
 */
static int measure_pair(const Engine *e, int first, EnginePenetration *p) {
    const EngineContact *c0 = &e->contacts[first];
    double model = 0.0;
    bool active = false;
    int i = first;
    for (; i < e->contact_count; i++) {
        const EngineContact *c = &e->contacts[i];
        if (c->body != c0->body || c->body_b != c0->body_b || c->obstacle != c0->obstacle)
            break;
        if (c->depth_offset > 0.0) {
            p->offset_contacts++;
            p->largest_offset = fmax(p->largest_offset, c->depth_offset);
        }
        if (c->active) {
            ContactKinematics k;
            engine_manifold_kinematics(e, e->y, c, e->data.t, &k, NULL, NULL, NULL);
            model = fmax(model, k.depth);
            active = true;
        }
    }
    double overlap = -pose_distance(e, c0);
    p->pose_depth = fmax(p->pose_depth, overlap);
    if (active)
        p->model_depth = fmax(p->model_depth, model);
    p->hidden_depth = fmax(p->hidden_depth, overlap - model);
    return i;
}

EnginePenetration engine_penetration(const Engine *e) {
    EnginePenetration p = {0};
    for (int i = e->vertex_contact_count; i < e->contact_count;)
        i = measure_pair(e, i, &p);
    return p;
}
