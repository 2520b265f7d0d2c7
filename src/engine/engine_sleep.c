/* Equilibrium and sleeping bodies: seed 004, section 4.8.5 (the internal-friction model gives
 * the instant a body enters equilibrium, Fig. 4.14-4.15 and eq. 4.91), Appendix C (the
 * constraint forces that hold resting contacts, eq. C.153-C.158, and in equilibrium "set all of
 * its derivatives to zero") and Appendix E.3 (equilibrium lists; fixed obstacles never
 * propagate, E.3.2).
 *
 * Invariant: a sleeping body's block of the state vector is not integrated and does not change;
 * its velocities are zero. A contact between sleeping bodies, or between a sleeping body and a
 * fixed obstacle, is frozen: it is neither evaluated in the right-hand side nor tested for
 * events nor committed, so its history and activity stay as they were when the bodies fell
 * asleep. A contact between a sleeping and an awake body is live: the awake body feels it (the
 * sleeping one acts as fixed), and the sleeping one wakes as soon as the awake one moves faster
 * than the contact's velocity tolerance (wake_touched), or at once if the contact begins at such
 * a speed (engine_wake_on_contact). A slow neighbour (one settling, or trembling within the
 * tolerance) does not wake it: that is what lets a pile go to sleep from the bottom up.
 *
 * The equilibrium list of a sleeping body is read from its active body-body contacts: the ones
 * it entered equilibrium with (frozen since) plus any resting touch by a slow body since.
 *
 * Work per step scales with the awake bodies: the right-hand side, RK4 stages and the event
 * tests iterate awake_bodies, awake_ranges and live_contacts; CVODE integrates the awake blocks
 * packed into a vector of their own (engine_cvode.c). With some bodies awake the collision
 * world still runs its broad phase over every body (the narrow phase carries the pairs of
 * bodies whose poses did not change at all); with every body asleep engine_advance skips
 * the collision update as well.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

static double body_reach(const EngineBody *b) {
    double reach = 0.0;
    for (int v = 0; v < b->vertex_count; v++)
        reach = fmax(reach, vec3_norm(b->vertices[v]) + b->radius);
    if (b->shaped) {
        Aabb box = shape_aabb(&b->shape, pose_identity());
        Vec3 far =
            vec3(fmax(fabs(box.min.x), fabs(box.max.x)), fmax(fabs(box.min.y), fabs(box.max.y)),
                 fmax(fabs(box.min.z), fabs(box.max.z)));
        reach = fmax(reach, vec3_norm(far));
    }
    return reach;
}

IssimStatus engine_sleep_init(Engine *e, IssimError *err) {
    size_t n = (size_t)e->model.body_count + 1;
    e->sleep.awake_bodies = calloc(n, sizeof(int));
    e->sleep.awake_ranges = calloc(2 * (n + ENGINE_REDUCED_SLOTS), sizeof(int));
    e->sleep.scratch = calloc(3 * n, sizeof(int));
    e->sleep.load_acc = calloc(2 * n, sizeof(Vec3));
    e->sleep.speeds = calloc(n, sizeof(double));
    e->sleep.live_contacts = calloc((size_t)e->contact_capacity + 1, sizeof(int));
    if (!e->sleep.awake_bodies || !e->sleep.awake_ranges || !e->sleep.scratch ||
        !e->sleep.load_acc || !e->sleep.speeds || !e->sleep.live_contacts)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for the sleeping lists");
    for (int b = 0; b < e->model.body_count; b++) {
        e->model.bodies[b].reach = body_reach(&e->model.bodies[b]);
        e->body_data[b].sleep_t = -1.0;
        e->body_data[b].still_since = -1.0;
    }
    e->sleep.speed = e->model.options.sleep_speed > 0.0 ? e->model.options.sleep_speed : 0.0;
    e->sleep.disabled = e->model.options.sleep_disabled;
    engine_invalidate(e, ENGINE_INVALID_SLEEP);
    engine_refresh_awake(e);
    return ISSIM_OK;
}

void engine_sleep_free(Engine *e) {
    free(e->sleep.awake_bodies);
    free(e->sleep.awake_ranges);
    free(e->sleep.scratch);
    free(e->sleep.load_acc);
    free(e->sleep.speeds);
    free(e->sleep.live_contacts);
}

/* Part k (0-2) of sleep.scratch: body_count + 1 ints, free between the calls that use it. */
static int *scratch_part(const Engine *e, int k) {
    return e->sleep.scratch + (size_t)k * ((size_t)e->model.body_count + 1);
}

bool engine_contact_frozen(const Engine *e, const EngineContact *c) {
    return e->body_data[c->body].asleep && (c->body_b < 0 || e->body_data[c->body_b].asleep);
}

static void rebuild_awake(Engine *e) {
    e->sleep.awake_count = 0;
    e->sleep.awake_range_count = 0;
    e->sleep.awake_state_size = 0;
    for (int b = 0; b < e->model.body_count; b++) {
        EngineBodyData *d = &e->body_data[b];
        d->integrated =
            !d->asleep && d->reduced_slot < 0 && d->resolver != CONTACT_RESOLVER_COMPLEMENTARITY;
        if (!d->integrated)
            continue; /* asleep, or moved by its island's resolver (engine_step.c) */
        e->sleep.awake_bodies[e->sleep.awake_count++] = b;
        const StateBlock *blk = &e->model.layout.blocks[e->model.bodies[b].block];
        int *last = e->sleep.awake_ranges + 2 * (e->sleep.awake_range_count - 1);
        if (e->sleep.awake_range_count > 0 && last[0] + last[1] == blk->offset) {
            last[1] += blk->size;
        } else {
            e->sleep.awake_ranges[2 * e->sleep.awake_range_count] = blk->offset;
            e->sleep.awake_ranges[2 * e->sleep.awake_range_count + 1] = blk->size;
            e->sleep.awake_range_count++;
        }
        e->sleep.awake_state_size += blk->size;
    }
    engine_reduced_add_ranges(e); /* pair blocks of reduced pairs (engine_reduced.c) */
    /* Awake: not asleep, whoever moves it (the integrator, a time-stepping resolver, a reduced
     * pair's block). */
    int awake = 0;
    for (int b = 0; b < e->model.body_count; b++)
        awake += !e->body_data[b].asleep;
    e->stats.awake_bodies = awake;
    e->sleep.dirty = false;
}

/* live_contacts has room for contact_capacity entries: it grows with the contact array
 * (engine_sleep_init, reserve_contacts in engine_collide.c). */
static void rebuild_live_contacts(Engine *e) {
    int n = 0;
    for (int ci = 0; ci < e->contact_count; ci++)
        if (!engine_contact_frozen(e, &e->contacts[ci]))
            e->sleep.live_contacts[n++] = ci;
    e->sleep.live_contact_count = n;
}

void engine_refresh_awake(Engine *e) {
    if (e->sleep.dirty)
        rebuild_awake(e);
    rebuild_live_contacts(e);
}

static void emit_body_event(Engine *e, EngineEventKind kind, int body, int by, double t) {
    EngineEvent ev = {.kind = kind,
                      .t = t,
                      .body = body,
                      .body_b = by,
                      .vertex = -1,
                      .obstacle = -1,
                      .normal_velocity = 0.0};
    engine_emit(e, &ev);
}

/* The speed under which a body counts as still for one of its contacts: EngineOptions
 * .sleep_speed if given, else the contact's velocity tolerance (004 Fig. 4.15): the pair's
 * velocity_tolerance, or with 0 the one its equilibrium band gives for the contact's load and
 * effective mass (contact_equilibrium_speed, kept from the last commit). */
static double still_speed(const Engine *e, const EngineContact *c) {
    if (e->sleep.speed > 0.0)
        return e->sleep.speed;
    /* A time-stepped row has no force law, and a force law without an equilibrium test
     * (spring/damper, Hertz, Hunt-Crossley, maps; slept on only under the "still" policy) no
     * band: neither internal friction's velocity_tolerance (a rate dg/dt of its equilibrium
     * test, 1e-5 m/s by default) nor a band applies to them. */
    if (engine_contact_time_stepped(e, c) ||
        (e->sleep.policy == SLEEP_POLICY_STILL && !engine_contact_tests_equilibrium(e, c)))
        return ENGINE_STEPPED_SLEEP_SPEED;
    return engine_contact_params(e, c)->velocity_tolerance > 0.0
               ? engine_contact_params(e, c)->velocity_tolerance
               : c->still_speed;
}

bool engine_contact_tests_equilibrium(const Engine *e, const EngineContact *c) {
    return engine_contact_model(e, c)->tests_equilibrium;
}

/* Does this contact let its bodies sleep? A model with an equilibrium test must report it. One
 * without (a spring/damper pile) never does (004 4.8.5: the spring/damper has no equilibrium,
 * V5), unless the universe's sleep policy is "still": then the verdict is the bodies'
 * stillness over ENGINE_SETTLE_TIME, the rule time-stepped islands follow: without it a settled
 * penalty pile keeps integrating every body as if it were still pouring. */
static bool contact_settled(const Engine *e, const EngineContact *c) {
    /* one hiding depth must heal first: asleep, its contacts (and the offset) are frozen */
    if (c->depth_offset > ENGINE_SLEEP_MAX_OFFSET)
        return false;
    return c->equilibrium ||
           (e->sleep.policy == SLEEP_POLICY_STILL && !engine_contact_tests_equilibrium(e, c));
}

static bool sleep_off(const Engine *e) {
    return e->sleep.disabled || e->sleep.policy == SLEEP_POLICY_NEVER;
}

/* A contact frozen while its bodies slept did not move: its friction spring resumes from the
 * wake, not from its last commit. (Friction integrates the tangential velocity from
 * friction_t, so a spring frozen for a second would stretch by a second's worth of the woken
 * body's first slip, elastic energy nobody paid for.) */
static void resume_frozen_contacts(Engine *e, int b, double t) {
    for (int ci = 0; ci < e->contact_count; ci++) {
        EngineContact *c = &e->contacts[ci];
        if (c->active && (c->body == b || c->body_b == b) && c->history.friction_t < t)
            c->history.friction_t = t;
    }
}

static void wake_one(Engine *e, int b, int by, double t) {
    resume_frozen_contacts(e, b, t);
    e->body_data[b].asleep = false;
    e->body_data[b].sleep_t = -1.0;
    e->body_data[b].still_since = -1.0;
    e->stats.wakes++;
    engine_invalidate(e, ENGINE_INVALID_SLEEP | ENGINE_INVALID_INTEGRATOR);
    emit_body_event(e, ENGINE_EVENT_WAKE, b, by, t);
}

/* A time-stepped island went to sleep as a whole and wakes as a whole: its contact impulses
 * are one coupled solution, and a body woken alone would be solved against neighbours held
 * fixed (the weight of the bodies above it lost). Flood fill over the active body-body contacts
 * between sleeping time-stepped bodies; the stack is the third part of sleep.scratch. */
static void wake_stepped_island(Engine *e, int body, double t) {
    int *stack = scratch_part(e, 2), top = 0;
    stack[top++] = body;
    while (top > 0) {
        int b = stack[--top];
        for (int ci = e->vertex_contact_count; ci < e->contact_count; ci++) {
            const EngineContact *c = &e->contacts[ci];
            if (!c->active || c->body_b < 0 || (c->body != b && c->body_b != b))
                continue;
            int other = c->body == b ? c->body_b : c->body;
            if (!e->body_data[other].asleep ||
                e->body_data[other].resolver != CONTACT_RESOLVER_COMPLEMENTARITY)
                continue;
            wake_one(e, other, b, t);
            stack[top++] = other; /* each body is pushed once: it is awake from here on */
        }
    }
}

/* Woken by an edit or a reset (by < 0): the body and the sleeping bodies on its equilibrium
 * list (App. E.3.1: "all items in C's equilibrium list are re-inserted"). Woken by a moving
 * body (by >= 0): the body alone. Farther bodies wake only if these then move (wake_touched),
 * so a re-inserted body that stays still propagates nothing, and a fixed obstacle, never on a
 * list, never propagates (App. E.3.2). A time-stepped body wakes with its whole island. */
void engine_wake_body(Engine *e, int body, int by, double t) {
    if (body < 0 || !e->body_data[body].asleep)
        return;
    wake_one(e, body, by, t);
    if (e->body_data[body].resolver == CONTACT_RESOLVER_COMPLEMENTARITY) {
        wake_stepped_island(e, body, t);
        return;
    }
    if (by >= 0)
        return;
    for (int ci = e->vertex_contact_count; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (!c->active || c->body_b < 0 || (c->body != body && c->body_b != body))
            continue;
        int other = c->body == body ? c->body_b : c->body;
        if (e->body_data[other].asleep)
            wake_one(e, other, body, t);
    }
}

void engine_wake_on_contact(Engine *e, const EngineContact *c, const ContactKinematics *k,
                            double t) {
    if (c->body_b < 0 || e->body_data[c->body].asleep == e->body_data[c->body_b].asleep)
        return;
    if (fabs(k->depth_rate) < still_speed(e, c))
        return; /* a resting touch, not an interactive collision */
    if (e->body_data[c->body].asleep)
        engine_wake_body(e, c->body, c->body_b, t);
    else
        engine_wake_body(e, c->body_b, c->body, t);
}

void engine_wake_all(Engine *e, double t) {
    for (int b = 0; b < e->model.body_count; b++)
        engine_wake_body(e, b, -1, t);
}

static double body_speed(const Engine *e, int b) {
    EngineBodyState st = engine_block_state(e, e->y, b);
    return vec3_norm(st.vel) + vec3_norm(st.angvel) * e->model.bodies[b].reach;
}

/* Kinetic energy (J) of body b in the state y. */
static double kinetic_energy(const Engine *e, int b) {
    const EngineBody *body = &e->model.bodies[b];
    EngineBodyState st = engine_block_state(e, e->y, b);
    Mat3 inertia = mat3_world_inertia(st.orient, body->inertia);
    return 0.5 * body->mass * vec3_dot(st.vel, st.vel) +
           0.5 * vec3_dot(st.angvel, mat3_mul_vec(inertia, st.angvel));
}

/* Only a body slower than its tolerance sleeps, so the kinetic energy its zeroed velocities
 * remove is at most about m v_tol^2 / 2 (issue 11's rule, "a body put to sleep keeps the
 * energy it had", up to the tolerance); it is counted in stats.sleep_energy. */
static void put_to_sleep(Engine *e, int b, double t) {
    e->stats.sleep_energy += kinetic_energy(e, b);
    EngineBodyState st = engine_block_state(e, e->y, b);
    st.vel = vec3(0.0, 0.0, 0.0);
    st.angvel = vec3(0.0, 0.0, 0.0);
    engine_block_store(e, e->y, b, &st);
    e->body_data[b].asleep = true;
    e->body_data[b].sleep_t = t;
    e->stats.sleeps++;
    engine_invalidate(e, ENGINE_INVALID_SLEEP | ENGINE_INVALID_INTEGRATOR);
    emit_body_event(e, ENGINE_EVENT_SLEEP, b, -1, t);
}

/* A sleeping body touching an awake body that moves wakes (App. E.3.1: a body it shares
 * constraint forces with leaves equilibrium). An awake neighbour that is still (its speed under
 * the tolerance: settling, or chattering in its equilibrium band) does not wake it; a new
 * contact always does (engine_update_active_set, engine_merge_contacts). */
static void wake_touched(Engine *e, double t) {
    for (int i = 0; i < e->sleep.live_contact_count; i++) {
        const EngineContact *c = &e->contacts[e->sleep.live_contacts[i]];
        if (!c->active || c->body_b < 0)
            continue;
        bool sa = e->body_data[c->body].asleep, sb = e->body_data[c->body_b].asleep;
        if (sa == sb)
            continue;
        int sleeper = sa ? c->body : c->body_b, mover = sa ? c->body_b : c->body;
        if (body_speed(e, mover) >= still_speed(e, c))
            engine_wake_body(e, sleeper, mover, t);
    }
}

enum { SLEEP_NO_CONTACT = 0, SLEEP_CANDIDATE = 1, SLEEP_REFUSED = 2 };

/* An awake body enters equilibrium when it touches something, every one of its active contacts
 * reports equilibrium, and it is still (under the smallest tolerance of its contacts). Each body
 * is judged on its own: in a pile the bottom settles first, and a neighbour that is still
 * chattering within its tolerance does not keep it awake. */
static void sleep_bodies(Engine *e, double t) {
    int *verdict = scratch_part(e, 0);
    double *still = e->sleep.speeds;
    /* by body: judged by stillness over ENGINE_SETTLE_TIME, not at the instant */
    int *by_stillness = scratch_part(e, 2);
    for (int i = 0; i < e->sleep.awake_count; i++) {
        int b = e->sleep.awake_bodies[i];
        verdict[b] = SLEEP_NO_CONTACT;
        still[b] = INFINITY;
        by_stillness[b] = e->model.bodies[b].shaped;
    }
    for (int i = 0; i < e->sleep.live_contact_count; i++) {
        const EngineContact *c = &e->contacts[e->sleep.live_contacts[i]];
        if (!c->active)
            continue;
        int sides[2] = {c->body, c->body_b};
        for (int s = 0; s < 2; s++) {
            int b = sides[s];
            if (b < 0 || e->body_data[b].asleep)
                continue;
            still[b] = fmin(still[b], still_speed(e, c));
            if (!engine_contact_tests_equilibrium(e, c))
                by_stillness[b] = 1;
            if (!contact_settled(e, c))
                verdict[b] = SLEEP_REFUSED;
            else if (verdict[b] == SLEEP_NO_CONTACT)
                verdict[b] = SLEEP_CANDIDATE;
        }
    }
    /* Decide first, then freeze: freezing one body must not change its neighbours' verdicts
     * within the same step. */
    int n = 0;
    int *sleepers = scratch_part(e, 1);
    for (int i = 0; i < e->sleep.awake_count; i++) {
        int b = e->sleep.awake_bodies[i];
        /* a body under a load cycle is never in equilibrium for long: it stays awake */
        if (verdict[b] != SLEEP_CANDIDATE || body_speed(e, b) >= still[b] ||
            e->model.bodies[b].cycle_period > 0.0) {
            e->body_data[b].still_since = -1.0;
            continue;
        }
        if (e->body_data[b].still_since < 0.0)
            e->body_data[b].still_since = t;
        /* Shaped bodies, and bodies on contacts without an equilibrium test, must stay still
         * for a while (see the App. C section); vertex bodies on internal friction are judged
         * at the instant by eq. 4.91 (V5). */
        if (by_stillness[b] && t - e->body_data[b].still_since < ENGINE_SETTLE_TIME)
            continue;
        sleepers[n++] = b;
    }
    for (int i = 0; i < n; i++)
        put_to_sleep(e, sleepers[i], t);
}

void engine_update_sleep(Engine *e, double t) {
    wake_touched(e, t);
    if (!sleep_off(e) && !e->sleep.dirty)
        sleep_bodies(e, t);
    if (e->sleep.dirty)
        engine_refresh_awake(e);
}

/* ===== Time-stepped (complementarity) islands =====
 *
 * A time-stepped island has no force law to report equilibrium: its contact impulses hold
 * every body exactly (001 eqs. 1-2), so being in equilibrium is being still. The island sleeps
 * as a whole (004 App. E: its bodies share constraint forces, each on the others' equilibrium
 * lists) once each of its bodies touches something and has been slower than its tolerance
 * (still_speed: EngineOptions.sleep_speed, else ENGINE_STEPPED_SLEEP_SPEED) for ENGINE_SETTLE_TIME.
 * A sleeping island is neither solved nor moved (engine_step.c leaves its bodies out of the stepped
 * list), its contacts are frozen, and with every body asleep engine_advance skips the collision
 * update. */

/* Is time-stepped body b still at t? Its timer (still_since) starts or restarts here. */
static bool stepped_body_still(Engine *e, int b, double t, const double *tolerance) {
    EngineBodyData *d = &e->body_data[b];
    if (!(body_speed(e, b) < tolerance[b]) || e->model.bodies[b].cycle_period > 0.0) {
        d->still_since = -1.0;
        return false;
    }
    if (d->still_since < 0.0)
        d->still_since = t;
    return t - d->still_since >= ENGINE_SETTLE_TIME;
}

static void sleep_stepped_islands(Engine *e, double t) {
    double *tolerance = e->sleep.speeds;
    int *island_still = scratch_part(e, 0); /* by island root */
    for (int i = 0; i < e->islands.stepped_count; i++) {
        int b = e->islands.stepped_bodies[i];
        tolerance[b] = INFINITY;
        island_still[e->islands.island_of_body[b]] = 1;
    }
    int *touching = scratch_part(e, 1); /* by body: has an active contact */
    for (int i = 0; i < e->islands.stepped_count; i++)
        touching[e->islands.stepped_bodies[i]] = 0;
    for (int i = 0; i < e->sleep.live_contact_count; i++) {
        const EngineContact *c = &e->contacts[e->sleep.live_contacts[i]];
        if (!c->active)
            continue;
        /* a force-law contact inside the island must be in equilibrium by its model */
        bool settled = engine_contact_time_stepped(e, c) || contact_settled(e, c);
        int sides[2] = {c->body, c->body_b};
        for (int s = 0; s < 2; s++) {
            int b = sides[s];
            if (b < 0 || e->body_data[b].asleep || e->body_data[b].integrated ||
                e->body_data[b].resolver != CONTACT_RESOLVER_COMPLEMENTARITY)
                continue;
            tolerance[b] = fmin(tolerance[b], still_speed(e, c));
            touching[b] = 1;
            if (!settled)
                island_still[e->islands.island_of_body[b]] = 0;
        }
    }
    for (int i = 0; i < e->islands.stepped_count; i++) {
        int b = e->islands.stepped_bodies[i];
        bool still = stepped_body_still(e, b, t, tolerance); /* every body's timer runs */
        if (!still || !touching[b])
            island_still[e->islands.island_of_body[b]] = 0;
    }
    for (int i = 0; i < e->islands.stepped_count; i++) {
        int b = e->islands.stepped_bodies[i];
        if (island_still[e->islands.island_of_body[b]] && !e->body_data[b].asleep)
            put_to_sleep(e, b, t);
    }
}

void engine_update_stepped_sleep(Engine *e, double t) {
    if (e->sleep.dirty)
        engine_refresh_awake(e);
    wake_touched(e, t);
    if (!sleep_off(e))
        sleep_stepped_islands(e, t);
    if (e->sleep.dirty)
        engine_refresh_awake(e);
}

/* ===== App. C: the constraint forces that hold the contacts still =====
 *
 * 004 App. C: lambda* = (G M^-1 G^T)^-1 (G M^-1 f + h) are the constraint forces that keep every
 * penetration where it is, and the contact force applied is lambda* kept between the contact's
 * restitution and compression forces, (1 - f) F(g) and (1 + f) F(g) for internal friction
 * (eq. C.158). For one body on a plane the load is f_ext / n_v (4.8.1), which the vertex
 * kinematics give directly and the model's eq. 4.91 test judges. For bodies with collision
 * shapes (resting on each other: piles, App. E's A, B and C) it is a coupled problem with
 * redundant supports (a box on four corners): projected Gauss-Seidel on the normal forces, each
 * kept inside its contact's band [F_r, F_c] (the model's forces for dg/dt just below and just
 * above zero), one sweep per accepted step, warm-started from the previous one. Each contact's
 * `load` is that force. Since it lies in the band by construction, the model's test of such a
 * contact reduces to its rate; whether the forces in the bands balance the body is judged by
 * the body staying still (sleep_bodies: ENGINE_SETTLE_TIME), because a single sweep against the
 * penalty friction forces of a trembling pile is not an accurate enough balance to decide on.
 * The velocity-product term h is left out: only nearly resting bodies are judged. */

static Vec3 apply_inv_inertia(const Engine *e, int b, Vec3 torque) {
    const EngineBody *body = &e->model.bodies[b];
    if (e->model.planar)
        return vec3(0.0, torque.y / body->inertia.y, 0.0);
    Quat q = engine_block_state(e, e->y, b).orient;
    Vec3 tb = quat_rotate_inv(q, torque);
    return quat_rotate(
        q, vec3(tb.x / body->inertia.x, tb.y / body->inertia.y, tb.z / body->inertia.z));
}

/* Adds the acceleration of a force at arm r to body b's accumulators. */
static void push_force(const Engine *e, int b, Vec3 force, Vec3 r) {
    if (b < 0 || e->body_data[b].asleep)
        return;
    Vec3 *acc = e->sleep.load_acc + 2 * b;
    acc[0] = vec3_mad(acc[0], 1.0 / e->model.bodies[b].mass, force);
    acc[1] = vec3_add(acc[1], apply_inv_inertia(e, b, vec3_cross(r, force)));
}

static double point_normal_acc(const Engine *e, int b, Vec3 n, Vec3 r) {
    if (b < 0 || e->body_data[b].asleep)
        return 0.0;
    const Vec3 *acc = e->sleep.load_acc + 2 * b;
    return vec3_dot(n, vec3_add(acc[0], vec3_cross(acc[1], r)));
}

/* The model's normal forces just restoring and just compressing at this depth. */
static void contact_band(const Engine *e, const EngineContact *c, const ContactKinematics *k,
                         double *lo, double *hi) {
    ContactKinematics side = *k;
    side.depth_rate = engine_contact_params(e, c)->phase_ramp_time > 0.0 ? ENGINE_RAMP_BAND_RATE
                                                                         : ENGINE_BAND_RATE;
    double rate = side.depth_rate;
    ContactForce up = engine_contact_force(e, c, &side);
    side.depth_rate = -rate;
    ContactForce down = engine_contact_force(e, c, &side);
    *lo = fmax(0.0, fmin(up.normal, down.normal));
    *hi = fmax(0.0, fmax(up.normal, down.normal));
}

/* Does any contact pair use a model with an equilibrium test? */
static bool models_test_equilibrium(const Engine *e) {
    for (int i = 0; i < e->model.pair_count; i++)
        if (e->model.pairs[i].model->tests_equilibrium)
            return true;
    return false;
}

void engine_equilibrium_loads(Engine *e) {
    if (e->contact_count == e->vertex_contact_count)
        return; /* vertex bodies only: their loads come with the kinematics */
    /* Only equilibrium tests read the loads: without one the sweep below would be work for
     * nothing. */
    if (!models_test_equilibrium(e))
        return;
    for (int i = 0; i < e->sleep.awake_count; i++) {
        int b = e->sleep.awake_bodies[i];
        const EngineBody *body = &e->model.bodies[b];
        Vec3 f = engine_body_own_force(e, b, e->data.t);
        e->sleep.load_acc[2 * b] = vec3_scale(f, 1.0 / body->mass);
        e->sleep.load_acc[2 * b + 1] = apply_inv_inertia(e, b, engine_body_own_torque(e, b));
    }
    /* The previous normal forces (the warm start)... */
    for (int li = 0; li < e->sleep.live_contact_count; li++) {
        EngineContact *c = &e->contacts[e->sleep.live_contacts[li]];
        if (!c->active || c->kind != CONTACT_MANIFOLD)
            continue;
        ContactKinematics k;
        Vec3 ra, rb;
        engine_manifold_kinematics(e, e->y, c, e->data.t, &k, NULL, &ra, &rb);
        contact_band(e, c, &k, &c->load_lo, &c->load_hi);
        c->load = fmin(c->load_hi, fmax(c->load_lo, c->load));
        push_force(e, c->body, vec3_scale(k.normal, c->load), ra);
        push_force(e, c->body_b, vec3_scale(k.normal, -c->load), rb);
    }
    /* ...then one sweep: each contact's force set, inside its band, so that its relative normal
     * acceleration vanishes given the others. */
    for (int li = 0; li < e->sleep.live_contact_count; li++) {
        EngineContact *c = &e->contacts[e->sleep.live_contacts[li]];
        if (!c->active || c->kind != CONTACT_MANIFOLD)
            continue;
        ContactKinematics k;
        Vec3 ra, rb;
        engine_manifold_kinematics(e, e->y, c, e->data.t, &k, NULL, &ra, &rb);
        double acc = point_normal_acc(e, c->body, k.normal, ra) -
                     point_normal_acc(e, c->body_b, k.normal, rb);
        double lambda = fmin(c->load_hi, fmax(c->load_lo, c->load - acc * k.effective_mass));
        double delta = lambda - c->load;
        c->load = lambda;
        push_force(e, c->body, vec3_scale(k.normal, delta), ra);
        push_force(e, c->body_b, vec3_scale(k.normal, -delta), rb);
    }
}

/* ===== Public accessors ===== */

bool engine_body_asleep(const Engine *e, int body) {
    return body >= 0 && body < e->model.body_count && e->body_data[body].asleep;
}

double engine_body_sleep_time(const Engine *e, int body) {
    return engine_body_asleep(e, body) ? e->body_data[body].sleep_t : -1.0;
}

int engine_body_equilibrium_list(const Engine *e, int body, int *out, int max) {
    if (!engine_body_asleep(e, body))
        return 0;
    int n = 0;
    for (int other = 0; other < e->model.body_count; other++) {
        if (other == body)
            continue;
        bool shared = false;
        for (int ci = e->vertex_contact_count; ci < e->contact_count && !shared; ci++) {
            const EngineContact *c = &e->contacts[ci];
            shared = c->active && c->body_b >= 0 &&
                     ((c->body == body && c->body_b == other) ||
                      (c->body == other && c->body_b == body));
        }
        if (!shared)
            continue;
        if (n < max)
            out[n] = other;
        n++;
    }
    return n;
}

int engine_awake_body_count(const Engine *e) {
    return e->stats.awake_bodies;
}
