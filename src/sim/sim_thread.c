/* The interactive engine thread (000 App. B.4.4: "the engine should run far ahead of the users,
 * predicting the states for a significant future time ... when users perform some action ...
 * the engine must reset to that event and continue").
 *
 * The thread keeps the engine time in [display time, display time + horizon]: it steps while
 * behind the horizon and sleeps otherwise. Every step is published to the registry, so frames
 * ahead of the display time are the future states. An edit from the registry's queue is first
 * tried on a copy of the database (a refused edit costs nothing); an acceptable edit rewinds
 * the registry and the engine to the newest frame at or before the display time, is applied
 * there, and integration continues from that instant: the displayed past never changes, the
 * speculative future is recomputed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/engine_stats.h"
#include "issim/haptics_servo.h"
#include "sim_internal.h"

void sim_request_reset(Sim *sim) {
    atomic_store(&sim->reset_requested, true);
}

double sim_dt(const Sim *sim) {
    return sim->dt;
}

int sim_contact_capacity(const Sim *sim) {
    return sim->published.report_capacity;
}

static double horizon(const Sim *sim) {
    const ThingDb *db = engine_thingdb(sim->engine);
    return thing_real(db, thingdb_find_kind(db, THING_UNIVERSE), "horizon");
}

/* All the engine's contact reports in sim->published.reports (grown to hold them); returns their
 * count. */
static int gather_reports(Sim *sim) {
    Engine *e = sim->engine;
    /* smooth pairs report besides the manifold's contacts; a few spare places hold them */
    int need = engine_active_contact_count(e) + 32;
    if (need > sim->published.report_room) {
        ContactReport *grown = realloc(sim->published.reports, sizeof *grown * (size_t)need);
        if (!grown)
            return 0;
        sim->published.reports = grown;
        sim->published.report_room = need;
    }
    int n = engine_contact_reports(e, sim->published.reports, sim->published.report_room);
    return n + engine_smooth_contact_reports(e, sim->published.reports + n,
                                             sim->published.report_room - n);
}

/* Every contact is published up to the registry's limit and the rest counted, so the GUI can
 * say it shows 1,024 of 1,502 (a fixed 64 hid 438 of a pile's 502 with nothing said). */
static int publish_contacts(Sim *sim, int total) {
    int shown = total < sim->published.report_capacity ? total : sim->published.report_capacity;
    registry_publish_contacts(sim->registry, engine_time(sim->engine), sim->published.reports,
                              shown);
    sim->published.reports_dropped += (uint64_t)(total - shown);
    return shown;
}

/* EngineOptions.should_stop: sim_stop's request, read before each integrator step. */
static bool stop_asked(void *user) {
    Sim *sim = user;
    return atomic_load_explicit(&sim->stop_requested, memory_order_relaxed);
}

/* EngineOptions.on_step: the contacts after each accepted integrator step. */
static void sample_contacts(const Engine *e, void *user) {
    Sim *sim = user;
    int n = gather_reports(sim);
    sim_contacts_sample(sim, engine_time(e), sim->published.reports, n);
    sim_fine_note(sim, sim->published.reports, n);
}

/* The collision manager's poses (Sim.feed): every output step, published or not, so its reports
 * stay within ENGINE_REPORT_MAX_LAG steps of the engine whatever the frames' spacing. Bodies
 * only: the manager reads nothing else (engine_pose_source). */
static void feed_poses(Sim *sim) {
    Engine *e = sim->engine;
    if (!engine_collision_threaded(e))
        return; /* the world updates on this thread (small scenes: universe.collision_thread) */
    for (int b = 0; b < engine_body_count(e); b++) {
        EngineBodyState st = engine_body_state(e, engine_body_id(e, b));
        engine_frame_set_body(sim->feed_values, b, &st);
    }
    registry_publish(sim->feed, engine_time(e), sim->feed_values);
}

/* Both registries back to t (a reset): the frames and the manager's feed. */
static void rewind_frames(Sim *sim, double t) {
    registry_rewind(sim->registry, t);
    registry_rewind(sim->feed, t);
}

/* Values, checkpoint and registry frame of the output step just taken. steps_since: output
 * steps since the last checkpoint. A checkpoint between keys is replayed one output step from
 * the record before it (engine_checkpoint.c): after unpublished steps it must be a key. */
static void publish_values(Sim *sim, int steps_since) {
    Engine *e = sim->engine;
    engine_write_vars(e, sim->values);
    sim_contacts_write(sim, sim->values);
    engine_set_checkpoint_keys(e, steps_since > 1 ? 1 : 0);
    /* The frame's contact state, so a rewind to this frame resumes with it (engine.h). */
    engine_checkpoint(e);
    engine_set_checkpoint_keys(e, 0);
    registry_publish(sim->registry, engine_time(e), sim->values);
}

/* A whole frame: values, checkpoint, contact reports (total gathered at this instant, already
 * sampled) and the engine's statistics. */
static void publish_frame(Sim *sim, int total, int steps_since, double step_wall, uint64_t resets) {
    Engine *e = sim->engine;
    publish_values(sim, steps_since);
    int shown = publish_contacts(sim, total);
    EngineStats st = engine_stats(e);
    SimEngineStats stats = {
        /* an island's complementarity step is work too: a scene of such islands only counted
           0 (`--bench` printed engine_steps=0 for sphere_pile.lua) */
        .steps = st.steps + st.complementarity_steps,
        .step_time_us = 1e6 * step_wall,
        .sim_time = engine_time(e),
        .realtime_factor = step_wall > 0 ? engine_dt(e) / step_wall : 0.0,
        .resets = resets,
        .warnings = st.warnings,
        .active_contacts = engine_active_contact_count(e),
        .awake_bodies = engine_awake_body_count(e),
        .bodies = engine_body_count(e),
        .contact_reports = total,
        .contacts_published = shown,
        .contacts_dropped = sim->published.reports_dropped,
    };
    sim_engine_stats_write(sim->registry, issim_wall_time(), &stats);
}

/* The frame of a reset (or of the start): the state now, a step of its own. */
static void publish_reset_frame(Sim *sim, uint64_t resets) {
    int total = gather_reports(sim);
    sim_contacts_sample(sim, engine_time(sim->engine), sim->published.reports, total);
    publish_frame(sim, total, 1, 0.0, resets);
    feed_poses(sim);
}

/* Rewinds engine and registry to the newest frame at or before the display time. */
static void reset_to(Sim *sim, double *frame_values, double t) {
    double t_reset = fmin(t, engine_time(sim->engine));
    RegistryFrame frame = {.values = frame_values};
    if (!registry_read_at(sim->registry, t_reset, &frame))
        return;
    if (frame.t >= engine_time(sim->engine))
        return;
    IssimError err;
    if (engine_restore_vars(sim->engine, frame.t, frame.values, &err) == ISSIM_OK)
        rewind_frames(sim, frame.t);
    else
        issim_log(ISSIM_LOG_WARN, "reset to t = %g failed: %s", frame.t, err.message);
}

static void reset_to_display_time(Sim *sim, double *frame_values) {
    reset_to(sim, frame_values, sim_display_time(sim));
}

/* Stops at a stop request between edits: each costs a database clone, and a producer that keeps
 * submitting (a slider dragged in the GUI) would otherwise hold sim_stop's join for as long as it
 * goes on. Edits left in the queue are never resolved: nothing runs them once stopped. */
static bool handle_edits(Sim *sim, double *frame_values) {
    RegistryEdit edit;
    bool any = false;
    while (!atomic_load(&sim->stop_requested) && registry_edit_pop(sim->registry, &edit)) {
        IssimError err = {0};
        ThingDb *probe = thingdb_clone(engine_thingdb(sim->engine));
        IssimStatus s = probe ? thingdb_set_text(probe, edit.path, edit.value, true, &err)
                              : issim_error_set(&err, ISSIM_ERR_NOMEM, "out of memory");
        thingdb_destroy(probe);
        if (s == ISSIM_OK) {
            reset_to_display_time(sim, frame_values);
            s = engine_apply_edit(sim->engine, edit.path, edit.value, &err);
        }
        registry_edit_resolve(sim->registry, edit.id, s == ISSIM_OK, engine_time(sim->engine),
                              s == ISSIM_OK ? "" : err.message);
        any = any || s == ISSIM_OK;
    }
    return any;
}

/* The body of a packed id another thread wrote into a slot, if this engine issued it; else the
 * null id. A refused id is logged once (*refused remembers it), not at every step. */
static EngineBodyId slot_body(Sim *sim, const char *what, uint64_t packed, uint64_t *refused) {
    EngineBodyId id = engine_body_id_unpack(packed);
    IssimError err;
    if (packed == 0 || engine_body_check(sim->engine, id, &err) == ISSIM_OK) {
        *refused = 0;
        return id;
    }
    if (*refused != packed)
        issim_log(ISSIM_LOG_WARN, "%s ignored: %s", what, err.message);
    *refused = packed;
    return engine_body_id_null();
}

/* Haptic coupling hook (issue 6, docs/haptics.md). The servo publishes the handle's world
 * point, the proxy body and the coupling gains in REGISTRY_SLOT_HANDLE; before each step the
 * engine applies the spring/damper force of that slot to the proxy (the servo renders the
 * opposite force on the handle). A slot older than 0.1 s of wall time (servo stopped), a
 * proxy id this engine did not issue or zero gains (motors off, stall fade) remove the force.
 * Returns the body that now carries a coupling force, or the null id. The force is piecewise
 * constant per step: the engine restarts its integrator when it changes
 * (engine_set_applied_wrench). */
static EngineBodyId apply_haptic_coupling(Sim *sim, EngineBodyId coupled, uint64_t *refused,
                                          HapticReaction *reaction) {
    Engine *e = sim->engine;
    RegistrySlot h;
    registry_slot_read(sim->registry, REGISTRY_SLOT_HANDLE, &h);
    EngineBodyId body =
        slot_body(sim, "haptic coupling", haptic_handle_unpack(&h).proxy_body, refused);
    Vec3 force = {0, 0, 0}, zero = {0, 0, 0};
    double now = issim_wall_time();
    if (!engine_body_id_is_null(body) && haptic_handle_unpack(&h).local_models) {
        /* local models: minus the impulse the servo rendered, spread over this step, and the
           tracking that moves the proxy to the handle (not felt by the hand) */
        if (haptic_local_engine_reaction(&h, reaction, engine_dt(e), now, 0.1, &force)) {
            EngineBodyState s = engine_body_state(e, body);
            force = vec3_add(
                force, haptic_local_engine_tracking(&h, s.pos, s.vel, engine_body_mass(e, body)));
        } else {
            body = engine_body_id_null();
        }
    } else if (!engine_body_id_is_null(body)) {
        EngineBodyState s = engine_body_state(e, body);
        if (!haptic_coupling_engine_force(&h, s.pos, s.vel, now, 0.1, &force))
            body = engine_body_id_null();
    }
    if (!engine_body_id_is_null(coupled) && !engine_body_id_equal(coupled, body))
        engine_set_applied_wrench(e, coupled, zero, zero, NULL);
    if (!engine_body_id_is_null(body) &&
        engine_set_applied_wrench(e, body, force, zero, NULL) != ISSIM_OK)
        body = engine_body_id_null();
    return body;
}

/* Local models (docs/haptics.md "Local models"): after each step, the proxy's force-law contacts
 * with their laws and histories, published whole on the registry's board for the servo. Only
 * while the servo asks for them (HANDLE slot) and for the body it couples. */
typedef struct LocalModelsOut {
    void *block; /* registry_board_capacity bytes */
    size_t room;
    EngineContactModelView views[HAPTIC_LOCAL_MAX_MODELS * 2];
} LocalModelsOut;

static void publish_local_models(Sim *sim, LocalModelsOut *out, EngineBodyId proxy) {
    if (engine_body_id_is_null(proxy) || !out->block)
        return;
    Engine *e = sim->engine;
    int max = (int)(sizeof out->views / sizeof out->views[0]);
    int n = engine_body_contact_models(e, proxy, out->views, max);
    size_t bytes = haptic_local_pack(out->block, out->room, engine_body_id_pack(proxy),
                                     engine_body_state(e, proxy).pos, engine_time(e),
                                     issim_wall_time(), out->views, n);
    if (bytes)
        registry_board_publish(sim->registry, engine_time(e), out->block, bytes);
}

/* The display's drag spring (REGISTRY_SLOT_POINTER), as the engine thread last read it. */
typedef struct DragState {
    uint64_t seen;    /* slot write count already handled */
    uint64_t refused; /* the body id last refused (logged once) */
    bool active;
    EngineBodyId body;
    Vec3 anchor, target;
    double stiffness, damping;
    double hold_omega; /* rad/s, 0: a plain drag; > 0: a grasp holding `held` */
    Quat held;         /* the attitude when the grasp took the body */
    bool take_hold;    /* a new grasp: hold the attitude at the next apply (after the reset) */
} DragState;

static bool read_pointer(Sim *sim, DragState *drag) {
    RegistrySlot slot;
    registry_slot_read(sim->registry, REGISTRY_SLOT_POINTER, &slot);
    if (slot.count == drag->seen)
        return false;
    drag->seen = slot.count;
    bool was_active = drag->active;
    SimPointer pointer = sim_pointer_unpack(&slot);
    EngineBodyId body = pointer.dragging ? slot_body(sim, "drag", pointer.body, &drag->refused)
                                         : engine_body_id_null();
    bool same_grasp = was_active && drag->hold_omega > 0.0 && !engine_body_id_is_null(body) &&
                      engine_body_id_equal(body, drag->body);
    drag->active = !engine_body_id_is_null(body);
    drag->body = body;
    drag->hold_omega = pointer.hold_omega > 0.0 ? pointer.hold_omega : 0.0;
    drag->take_hold = drag->active && !same_grasp;
    drag->anchor = pointer.anchor;
    drag->target = pointer.target;
    drag->stiffness = pointer.stiffness;
    drag->damping = pointer.damping;
    return drag->active || was_active;
}

/* The grasp's torque (SimPointer.hold_omega): tau = I_world (omega^2 theta - 2 omega w), theta
 * the rotation vector from the attitude now back to the held one (the short way round). */
static Vec3 grasp_torque(Sim *sim, DragState *drag, EngineBodyState st) {
    if (drag->take_hold) { /* applied first after the reset: the attitude the user sees */
        drag->held = st.orient;
        drag->take_hold = false;
    }
    Quat err = quat_mul(drag->held, quat_conj(st.orient));
    if (err.w < 0.0) /* q and -q are one attitude: take the rotation of at most pi */
        err = (Quat){-err.w, -err.x, -err.y, -err.z};
    Vec3 axis = {err.x, err.y, err.z};
    double s = vec3_norm(axis), angle = 2.0 * atan2(s, err.w);
    Vec3 theta = s > 1e-300 ? vec3_scale(axis, angle / s) : (Vec3){0, 0, 0};
    double w = drag->hold_omega;
    Vec3 accel = vec3_sub(vec3_scale(theta, w * w), vec3_scale(st.angvel, 2.0 * w));
    Vec3 inertia = engine_body_inertia(sim->engine, drag->body);
    Vec3 local = quat_rotate_inv(st.orient, accel);
    local = (Vec3){local.x * inertia.x, local.y * inertia.y, local.z * inertia.z};
    return quat_rotate(st.orient, local);
}

/* Spring and damper from the current state: re-evaluated before every step, so the pull is
 * piecewise constant over one output step only. */
static void apply_drag(Sim *sim, DragState *drag, EngineBodyId released_body) {
    IssimError err;
    Vec3 zero = {0, 0, 0};
    if (!engine_body_id_is_null(released_body))
        engine_set_applied_wrench(sim->engine, released_body, zero, zero, &err);
    if (!drag->active)
        return;
    EngineBodyState st = engine_body_state(sim->engine, drag->body);
    Vec3 arm = quat_rotate(st.orient, drag->anchor);
    Vec3 anchor_world = vec3_add(st.pos, arm);
    Vec3 anchor_vel = vec3_add(st.vel, vec3_cross(st.angvel, arm));
    Vec3 f = vec3_sub(vec3_scale(vec3_sub(drag->target, anchor_world), drag->stiffness),
                      vec3_scale(anchor_vel, drag->damping));
    Vec3 torque = vec3_cross(arm, f);
    if (drag->hold_omega > 0.0)
        torque = vec3_add(torque, grasp_torque(sim, drag, st));
    if (engine_set_applied_wrench(sim->engine, drag->body, f, torque, &err) != ISSIM_OK)
        issim_log(ISSIM_LOG_WARN, "drag: %s", err.message);
}

/* Publication paced to its readers (issue 33 item 3, sim.h "Frames"). At a 20 us step
 * (bolt_and_hole.lua) writing the values, a checkpoint and a registry frame every step cost
 * more than the solve, and the display draws one frame in hundreds of steps. Every output step
 * is still sampled for the contact peaks and impulses (sim_contacts_sample: a complementarity
 * island's contacts are seen nowhere else) and its poses go to the collision manager
 * (feed_poses); a frame is published when a reader needs it (frame_due). The contact reports
 * and the engine's statistics, which only the display reads (its newest ones), go with a frame
 * once per SIM_PUBLISH_SPACING_S of wall time at most: when they go changes no state. Engine
 * thread only. */
#define SIM_PUBLISH_SPACING_S 0.004

typedef struct PublishPace {
    double last_wall; /* wall time of the last contact reports and statistics */
    double step_wall; /* wall time of the steps since, s */
    int steps;        /* steps since */
    int unpublished;  /* output steps since the last frame */
} PublishPace;

int64_t sim_output_step(const Sim *sim, double t) {
    return (int64_t)llround((t - sim->step_t0) / sim->dt);
}

/* The instant of output step n: computed from n, as a headless run's, so both step alike. */
static double output_instant(const Sim *sim, int64_t n) {
    return sim->step_t0 + (double)n * sim->dt;
}

bool sim_frame_is_recorded(const Sim *sim, double t) {
    int every = atomic_load(&((Sim *)sim)->record_every);
    return every > 0 && sim_output_step(sim, t) % every == 0;
}

void sim_record_from(Sim *sim, double t, int every) {
    atomic_store(&sim->record_every, every > 0 ? every : 0);
    if (every > 0 && isfinite(t)) {
        atomic_store(&sim->record_from, t);
        atomic_store(&sim->record_rewind, true);
    }
}

/* Output steps between frames for the display: its frames at the speed factor, at most
 * SIM_FRAME_SPACING_MAX of simulated time apart (the plots' and the scrubber's resolution). */
static int64_t display_steps(const Sim *sim) {
    double spacing = fmin(SIM_FRAME_SPACING_MAX, sim_speed(sim) / SIM_DISPLAY_FRAME_RATE);
    double k = floor(spacing / sim->dt * (1.0 + 1e-9));
    return k > 1.0 ? (int64_t)k : 1;
}

/* Whether the output step just taken is a frame a reader needs. every_step: a reader wants
 * them all (a coupled haptic proxy: the servo renders the coupling from the newest frame). */
static bool frame_due(const Sim *sim, bool every_step) {
    if (every_step || atomic_load_explicit(&sim->events.fine_on, memory_order_relaxed))
        return true;
    int64_t n = sim_output_step(sim, engine_time(sim->engine));
    return n % display_steps(sim) == 0 || sim_frame_is_recorded(sim, engine_time(sim->engine));
}

/* After an output step of step_wall seconds: sampled, fed to the manager, and published when
 * due (the reports and statistics too when their spacing passed). */
static void publish_paced(Sim *sim, PublishPace *pace, double step_wall, uint64_t resets,
                          bool every_step) {
    pace->step_wall += step_wall;
    pace->steps++;
    pace->unpublished++;
    int total = gather_reports(sim);
    sim_contacts_sample(sim, engine_time(sim->engine), sim->published.reports, total);
    feed_poses(sim);
    if (!frame_due(sim, every_step))
        return;
    double now = issim_wall_time();
    if (now - pace->last_wall < SIM_PUBLISH_SPACING_S) {
        publish_values(sim, pace->unpublished);
    } else {
        publish_frame(sim, total, pace->unpublished, pace->step_wall / pace->steps, resets);
        *pace = (PublishPace){.last_wall = now};
    }
    pace->unpublished = 0;
}

/* Paused, the display steps one output step at a time and an edit or a drag go back to the
 * instant shown: when the clock is paused, the steps after that instant, to the horizon, are
 * frames. Where they are not (computed while the clock ran) the engine goes back to the frame
 * shown and computes them again (a scene that published every step is left alone). */
static bool pause_needs_steps(Sim *sim, double *frame_values) {
    double shown = sim_display_time(sim);
    RegistryFrame at = {.values = frame_values}, next = {.values = frame_values};
    if (!registry_read_at(sim->registry, shown, &at) ||
        !registry_read_after(sim->registry, at.t, &next))
        return false;
    return sim_output_step(sim, next.t) - sim_output_step(sim, at.t) > 1;
}

/* Where the engine stops stepping (its horizon, a stop request), its state is a frame: the clock's
 * limits, Pause and the scrubber see the newest state computed. */
static void publish_pending(Sim *sim, PublishPace *pace) {
    if (pace->unpublished == 0)
        return;
    publish_values(sim, pace->unpublished);
    pace->unpublished = 0;
}

static void *engine_thread(void *arg) {
    Sim *sim = arg;
    Engine *e = sim->engine;
    double *frame_values = calloc((size_t)registry_var_count(sim->registry), sizeof(double));
    uint64_t resets = 0;
    bool failed = false;
    DragState drag = {.active = false};
    bool was_paused = sim_paused(sim);
    double dense_until = -INFINITY; /* every step a frame up to here (a pause's horizon) */
    EngineBodyId coupled_body = engine_body_id_null(); /* the proxy carrying a coupling force */
    uint64_t refused_proxy = 0; /* the HANDLE slot's proxy id last refused (logged once) */
    HapticReaction reaction = {.primed = false};
    LocalModelsOut local = {.room = registry_board_capacity(sim->registry)};
    local.block = malloc(local.room ? local.room : 1);
    PublishPace pace = {.last_wall = issim_wall_time()};
    sim_contacts_restart(sim);
    publish_reset_frame(sim, resets);
    while (frame_values && !atomic_load(&sim->stop_requested)) {
        /* alive, also while waiting at the horizon: the servo holds its local models; a failed
           step is not alive (the servo fades them) */
        if (!failed)
            registry_board_beat(sim->registry, issim_wall_time());
        EngineBodyId dragged_before = drag.active ? drag.body : engine_body_id_null();
        bool pointer_changed = read_pointer(sim, &drag);
        bool edited = handle_edits(sim, frame_values);
        bool rewind = atomic_exchange(&sim->reset_requested, false);
        bool paused = sim_paused(sim);
        if (paused && !was_paused) {
            dense_until = sim_display_time(sim) + horizon(sim);
            rewind = rewind || pause_needs_steps(sim, frame_values);
        }
        was_paused = paused;
        bool recording = atomic_exchange(&sim->record_rewind, false);
        if ((pointer_changed || rewind) && !edited)
            reset_to_display_time(sim, frame_values);
        else if (recording && !edited) /* the recorder's first frame: its steps follow */
            reset_to(sim, frame_values, atomic_load(&sim->record_from));
        if (pointer_changed) {
            bool released = !engine_body_id_is_null(dragged_before) &&
                            (!drag.active || !engine_body_id_equal(dragged_before, drag.body));
            apply_drag(sim, &drag, released ? dragged_before : engine_body_id_null());
        }
        if (edited || pointer_changed || rewind || recording) {
            resets++;
            failed = false;
            /* The state at the reset instant is the edited one: it replaces the frame held
             * for that instant (publishing needs a strictly later time otherwise). */
            rewind_frames(sim, nextafter(engine_time(e), -INFINITY));
            sim_contacts_restart(sim);
            sim_impacts_rewind(sim, engine_time(e));
            publish_reset_frame(sim, resets);
            pace.unpublished = 0;
        }
        if (!failed &&
            engine_time(e) < sim_display_time(sim) + horizon(sim) + sim_clock_lead(sim)) {
            double w0 = issim_wall_time();
            IssimError err;
            /* Both set a body's applied wrench; a proxy dragged with the mouse follows the
             * mouse (the drag is applied last). */
            coupled_body = apply_haptic_coupling(sim, coupled_body, &refused_proxy, &reaction);
            if (drag.active)
                apply_drag(sim, &drag, engine_body_id_null());
            double next = output_instant(sim, sim_output_step(sim, engine_time(e)) + 1);
            if (engine_advance(e, next, &err) != ISSIM_OK) {
                if (err.status == ISSIM_ERR_CANCELLED)
                    break; /* sim_stop asked, within the step */
                /* The last good state stays published; an edit may repair the scene. */
                issim_log(ISSIM_LOG_ERROR, "%s", err.message);
                publish_pending(sim, &pace);
                failed = true;
                continue;
            }
            publish_paced(sim, &pace, issim_wall_time() - w0, resets,
                          !engine_body_id_is_null(coupled_body) || engine_time(e) <= dense_until);
            if (reaction.primed)
                publish_local_models(sim, &local, coupled_body);
        } else {
            publish_pending(sim, &pace);
            struct timespec nap = {0, 1000000};
            nanosleep(&nap, NULL);
        }
    }
    if (frame_values && !failed)
        publish_pending(sim, &pace);
    free(local.block);
    free(frame_values);
    return NULL;
}

/* The collision manager's feed (Sim.feed): a few frames of the engine's variables, emptied at
 * each start. */
static IssimStatus open_feed(Sim *sim, IssimError *err) {
    if (!sim->feed) {
        RegistryDesc d = registry_desc_default();
        d.history_frames = 4;
        d.max_vars = engine_var_count(sim->engine);
        d.max_contacts = 1;
        d.edit_capacity = 2;
        d.board_bytes = 16;
        sim->feed = registry_create(&d, err);
        if (!sim->feed)
            return err ? err->status : ISSIM_ERR_NOMEM;
        sim->feed_values = calloc((size_t)d.max_vars, sizeof(double));
        if (!sim->feed_values || engine_register_vars(sim->engine, sim->feed, err) != ISSIM_OK) {
            registry_destroy(sim->feed);
            free(sim->feed_values);
            sim->feed = NULL;
            sim->feed_values = NULL;
            return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        }
    }
    registry_clear(sim->feed);
    return ISSIM_OK;
}

IssimStatus sim_start(Sim *sim, IssimError *err) {
    if (sim->thread_running)
        return issim_error_set(err, ISSIM_ERR_STATE, "the engine thread is already running");
    /* Rewinds (edits, the scrubber) restore the contact state of the frame they go back to.
     * Before the clock starts: setting up the ring takes a moment. */
    IssimStatus s = engine_enable_checkpoints(sim->engine, sim->history_frames,
                                              SIM_CHECKPOINT_BUDGET_BYTES, err);
    if (s != ISSIM_OK)
        return s;
    pthread_mutex_lock(&sim->clock.clock_mutex);
    sim->clock.clock_wall_origin = issim_wall_time();
    sim->clock.clock_sim_origin = engine_time(sim->engine);
    pthread_mutex_unlock(&sim->clock.clock_mutex);
    s = open_feed(sim, err);
    if (s != ISSIM_OK)
        return s;
    if (!sim->step_t0_set) {
        sim->step_t0 = engine_time(sim->engine);
        sim->step_t0_set = true;
    }
    atomic_store(&sim->stop_requested, false);
    engine_set_step_observer(sim->engine, sample_contacts, sim);
    engine_set_stop_check(sim->engine, stop_asked, sim);
    /* The collision manager gets its own thread beside the engine's (000 App. B.4.3), and its
     * poses from the feed, every output step. */
    s = engine_start_collision_thread(sim->engine, sim->feed, err);
    if (s != ISSIM_OK)
        return s;
    if (pthread_create(&sim->thread, NULL, engine_thread, sim) != 0) {
        engine_stop_collision_thread(sim->engine);
        return issim_error_set(err, ISSIM_ERR_STATE, "cannot start the engine thread");
    }
    sim->thread_running = true;
    return ISSIM_OK;
}

/* The join is bounded by one integrator step: the thread checks the request between output
 * steps and between edits, and the engine before each integrator step (stop_asked), so an
 * output step of 1e6 fixed steps (a map sampled at CONTACT_MAP_MIN_PERIOD) ends at once. */
void sim_stop(Sim *sim) {
    if (!sim->thread_running)
        return;
    atomic_store(&sim->stop_requested, true);
    pthread_join(sim->thread, NULL);
    engine_set_step_observer(sim->engine, NULL, NULL);
    engine_set_stop_check(sim->engine, NULL, NULL);
    engine_stop_collision_thread(sim->engine);
    sim->thread_running = false;
}
