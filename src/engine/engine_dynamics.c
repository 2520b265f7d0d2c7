/* Equations of motion of the bodies and their contacts.
 *
 * Free bodies follow the Newton-Euler equations with the attitude as a unit quaternion
 * (000 App. B eq. B.1-B.2 with no bilateral constraints: p' = v, q' = 0.5 (0, w) q,
 * m v' = f, I_w w' = tau - w x I_w w). Planar bodies are the three-coordinate form of 004 4.2.2
 * (eq. 4.47-4.51: orientation, centre of mass in the plane, and their rates); our plane is x-z
 * with z up, so theta is a rotation about +y.
 *
 * Contact forces come from the per-contact laws (contact.h) for the contacts in the active
 * set. The active set changes only at located events (root finding on the depth), never
 * inside the right-hand side: that keeps the right-hand side smooth between events, which
 * is what lets CVODE's error control and BDF's Newton iteration work (004 4.8 integrates the
 * same bar drops with CVODE).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine_internal.h"

static Quat planar_quat(double theta) {
    return (Quat){cos(0.5 * theta), 0.0, sin(0.5 * theta), 0.0};
}

/* engine_block_state written in place: built in a local and returned, the state went through
 * the stack as scalars and was copied out in pairs, a store-forwarding stall on every read of
 * the state caches. */
static inline __attribute__((always_inline)) void block_state_into(const Engine *e, const double *y,
                                                                   int body, EngineBodyState *st) {
    const StateBlock *b = &e->model.layout.blocks[e->model.bodies[body].block];
    const double *s = y + b->offset;
    if (e->body_data[body].reduced_slot >= 0) { /* in a reduced pair: its block says where */
        engine_reduced_body_state(e, y, body, st);
        return;
    }
    if (b->kind == BLOCK_FREE_BODY) {
        st->pos = vec3(s[0], s[1], s[2]);
        st->orient = quat_normalize((Quat){s[3], s[4], s[5], s[6]});
        st->vel = vec3(s[7], s[8], s[9]);
        st->angvel = vec3(s[10], s[11], s[12]);
    } else {
        st->pos = vec3(s[0], 0.0, s[1]);
        st->orient = planar_quat(s[2]);
        st->vel = vec3(s[3], 0.0, s[4]);
        st->angvel = vec3(0.0, s[5], 0.0);
    }
}

EngineBodyState engine_block_state(const Engine *e, const double *y, int body) {
    EngineBodyState st;
    block_state_into(e, y, body, &st);
    return st;
}

void engine_block_store(const Engine *e, double *y, int body, const EngineBodyState *st) {
    const StateBlock *b = &e->model.layout.blocks[e->model.bodies[body].block];
    double *s = y + b->offset;
    if (b->kind == BLOCK_FREE_BODY) {
        Quat q = quat_normalize(st->orient);
        double v[FREE_BODY_SIZE] = {st->pos.x,    st->pos.y,    st->pos.z,   q.w,       q.x,
                                    q.y,          q.z,          st->vel.x,   st->vel.y, st->vel.z,
                                    st->angvel.x, st->angvel.y, st->angvel.z};
        memcpy(s, v, sizeof v);
    } else {
        /* Out-of-plane components are dropped: the planar block has no room for them. */
        s[0] = st->pos.x;
        s[1] = st->pos.z;
        s[2] = quat_planar_angle_y(st->orient);
        s[3] = st->vel.x;
        s[4] = st->vel.z;
        s[5] = st->angvel.y;
    }
}

/* The manifold contact's geometry from the two bodies' states (b Nullable: a static B): the
 * world normal, the two points and their arms from the centres of mass. Round shapes anchor at
 * the core point, the surface point the radius away from it along the normal (EngineContact).
 * Always inlined: called, its results went back through memory as scalars and were read as
 * pairs, a store-forwarding stall that was a third of the kinematics' time. */
static inline __attribute__((always_inline)) void
manifold_points(const EngineContact *c, const EngineBodyState *a, const EngineBodyState *b, Vec3 *n,
                Vec3 *pa, Vec3 *pb, Vec3 *ra, Vec3 *rb) {
    *n = c->normal_b;
    *pb = c->local_b;
    *rb = vec3(0, 0, 0);
    if (b) {
        *n = quat_rotate(b->orient, c->normal_b);
        *rb = vec3_mad(quat_rotate(b->orient, c->local_b), c->radius_b, *n);
        *pb = vec3_add(b->pos, *rb);
    }
    *ra = vec3_mad(quat_rotate(a->orient, c->local_a), -c->radius_a, *n);
    *pa = vec3_add(a->pos, *ra);
}

void engine_manifold_geometry(const EngineContact *c, const EngineBodyState *a,
                              const EngineBodyState *b, double *depth, Vec3 *normal, Vec3 *arm_a,
                              Vec3 *arm_b) {
    Vec3 pa, pb;
    manifold_points(c, a, b, normal, &pa, &pb, arm_a, arm_b);
    *depth = vec3_dot(vec3_sub(pb, pa), *normal);
}

/* Friction's material points (ContactHistory.friction_pin_a/b) where they are now. */
static Vec3 pinned_point(const EngineBodyState *body, Vec3 pin) {
    return body ? vec3_add(body->pos, quat_rotate(body->orient, pin)) : pin;
}

/* k->slip: how far a's pinned material point moved from b's since the last commit (b NULL: an
 * obstacle, its pin in world coordinates). */
static void friction_slip(const EngineContact *c, const EngineBodyState *a,
                          const EngineBodyState *b, ContactKinematics *k) {
    k->has_slip = c->history.friction_pinned;
    if (k->has_slip)
        k->slip = vec3_sub(pinned_point(a, c->history.friction_pin_a),
                           pinned_point(b, c->history.friction_pin_b));
}

bool engine_contact_has_friction(const Engine *e, const EngineContact *c) {
    return engine_contact_params(e, c)->friction_static > 0.0;
}

void engine_pin_friction(EngineContact *c, const EngineBodyState *a, const EngineBodyState *b,
                         Vec3 point) {
    c->history.friction_pin_a = quat_rotate_inv(a->orient, vec3_sub(point, a->pos));
    c->history.friction_pin_b = b ? quat_rotate_inv(b->orient, vec3_sub(point, b->pos)) : point;
    c->history.friction_pinned = true;
}

/* Kinematics of a manifold contact: the points found by the last collision update ride on
 * their bodies; depth = (p_b - p_a) . n with n fixed in B's frame (000 3.6: minus the signed
 * MTD).
 *
 * The force acts on both bodies at p_a, A's material point whose penetration the depth
 * measures, and the relative velocity is taken there too (B's material point that coincides
 * with p_a). That is what makes the normal force the gradient of the depth (004 4.8 App. C: a
 * contact force does work only through dg/dt): with the normal turning with B,
 * dg = (dp_b - dp_a) . n + (p_b - p_a) . dn, and the second term is the torque on B of a force
 * at p_a instead of p_b. Applying B's share at p_b instead left a power f (p_b - p_a) . (w_b x n)
 * unaccounted for, which pumped energy into every sliding or spinning shaped contact.
 *
 * The depth offset is the update's energy ledger (engine_manifold_energy.c): a constant
 * between updates, so it changes nothing of the above.
 *
 * arm_a and arm_b (Nullable) receive the offsets of p_a from A's and B's centres of mass. */
static double contact_effective_mass(const Engine *e, const EngineContact *c,
                                     const EngineBodyState *a, const EngineBodyState *b, Vec3 ra,
                                     Vec3 rb, Vec3 n);

/* with_mass false: k->effective_mass is left NaN (the right-hand side of a model whose force
 * does not read it: ContactModelClass.force_ignores_effective_mass). */
static void manifold_kinematics_of(const Engine *e, const EngineContact *c,
                                   const EngineBodyState *a, const EngineBodyState *b, double t,
                                   ContactKinematics *k, Vec3 *point, Vec3 *arm_a, Vec3 *arm_b,
                                   bool with_mass) {
    Vec3 n, pa, pb, ra, rb_own;
    manifold_points(c, a, c->body_b >= 0 ? b : NULL, &n, &pa, &pb, &ra, &rb_own);
    Vec3 rb = vec3_sub(pa, b->pos); /* B's material point at p_a */
    Vec3 va = spatial_point_velocity(a->vel, a->angvel, ra);
    Vec3 vb = spatial_point_velocity(b->vel, b->angvel, rb);
    Vec3 rel = vec3_sub(va, vb); /* velocity of A's point relative to B's */
    double vn = vec3_dot(rel, n);
    k->depth = vec3_dot(vec3_sub(pb, pa), n) - c->depth_offset;
    k->depth_rate = -vn; /* = d/dt [(p_b - p_a) . n] with n turning with B */
    k->normal = n;
    k->tangent_velocity = vec3_mad(rel, -vn, n);
    k->t = t;
    k->contact_point = pa;
    friction_slip(c, a, c->body_b >= 0 ? b : NULL, k);
    k->load = c->load; /* App. C's lambda*: engine_equilibrium_loads, 0 until then */
    if (point)
        *point = vec3_scale(vec3_add(pa, pb), 0.5);
    if (arm_a)
        *arm_a = ra;
    if (arm_b) /* an obstacle takes no load */
        *arm_b = c->body_b >= 0 ? rb : (Vec3){0, 0, 0};
    k->effective_mass = with_mass ? contact_effective_mass(e, c, a, b, ra, rb, n) : NAN;
}

/* 1 / m_eff = 1/m_a + 1/m_b + (r x n)^T I^-1 (r x n) for each body, in the body frames where I
 * is diagonal. */
static double contact_effective_mass(const Engine *e, const EngineContact *c,
                                     const EngineBodyState *a, const EngineBodyState *b, Vec3 ra,
                                     Vec3 rb, Vec3 n) {
    double inv_mass = 1.0 / e->model.bodies[c->body].mass;
    if (c->body_b >= 0)
        inv_mass += 1.0 / e->model.bodies[c->body_b].mass;
    double angular = 0.0;
    const EngineBody *ba = &e->model.bodies[c->body];
    Vec3 ua = quat_rotate_inv(a->orient, vec3_cross(ra, n));
    angular +=
        ua.x * ua.x / ba->inertia.x + ua.y * ua.y / ba->inertia.y + ua.z * ua.z / ba->inertia.z;
    if (c->body_b >= 0) {
        const EngineBody *bb = &e->model.bodies[c->body_b];
        Vec3 ub = quat_rotate_inv(b->orient, vec3_cross(rb, n));
        angular +=
            ub.x * ub.x / bb->inertia.x + ub.y * ub.y / bb->inertia.y + ub.z * ub.z / bb->inertia.z;
    }
    return 1.0 / (inv_mass + angular);
}

static const EngineBodyState obstacle_state = {
    .pos = {0, 0, 0}, .orient = {1, 0, 0, 0}, .vel = {0, 0, 0}, .angvel = {0, 0, 0}};

void engine_manifold_kinematics(const Engine *e, const double *y, const EngineContact *c, double t,
                                ContactKinematics *k, Vec3 *point, Vec3 *arm_a, Vec3 *arm_b) {
    EngineBodyState a = engine_block_state(e, y, c->body);
    EngineBodyState b = c->body_b >= 0 ? engine_block_state(e, y, c->body_b) : obstacle_state;
    manifold_kinematics_of(e, c, &a, &b, t, k, point, arm_a, arm_b, true);
}

void engine_fill_states(const Engine *e, const double *y, EngineBodyState *states) {
    for (int b = 0; b < e->model.body_count; b++)
        block_state_into(e, y, b, &states[b]);
}

EngineBodyState *engine_merge_states(const Engine *e) {
    EngineBodyState *states = engine_rhs_body_states(e);
    engine_fill_states(e, e->y, states);
    return states;
}

double engine_contact_depth(const Engine *e, const EngineBodyState *states, const double *y,
                            const EngineContact *c) {
    if (c->kind != CONTACT_MANIFOLD) {
        ContactKinematics k;
        engine_contact_kinematics(e, y, c, e->data.t, &k, NULL, NULL);
        return k.depth;
    }
    double depth;
    Vec3 n, ra, rb;
    engine_manifold_geometry(c, &states[c->body], c->body_b >= 0 ? &states[c->body_b] : NULL,
                             &depth, &n, &ra, &rb);
    return depth - c->depth_offset; /* as manifold_kinematics_of */
}

/* Whether kinematics handed to c's model must carry the effective mass
 * (ContactModelClass.ignores_effective_mass: the right-hand side asks the force alone). */
static bool model_reads_mass(const Engine *e, const EngineContact *c) {
    return !engine_contact_model(e, c)->ignores_effective_mass;
}

void engine_merge_kinematics(const Engine *e, const EngineBodyState *states, const EngineContact *c,
                             ContactKinematics *k) {
    manifold_kinematics_of(e, c, &states[c->body],
                           c->body_b >= 0 ? &states[c->body_b] : &obstacle_state, e->data.t, k,
                           NULL, NULL, NULL, model_reads_mass(e, c));
}

/* The share f_ext / n_v of the external load (gravity, the body's force, the applied force)
 * that presses a body into a plane, n_v its active vertex contacts on that plane (004 4.8.1),
 * for the internal-friction equilibrium test. A body's vertex contacts with one plane are
 * consecutive in e->contacts (build_contacts), vertex v at v places after the first. */
static double vertex_load_share(const Engine *e, const EngineContact *c, Vec3 n) {
    const EngineBody *body = &e->model.bodies[c->body];
    Vec3 f = engine_body_own_force(e, c->body, e->data.t);
    double press = -vec3_dot(f, n);
    if (!(press > 0.0))
        return 0.0;
    uintptr_t at = (uintptr_t)c, first = (uintptr_t)e->contacts;
    if (at < first || at >= (uintptr_t)(e->contacts + e->vertex_contact_count))
        return press; /* a copy: no neighbours to count */
    const EngineContact *first_vertex = c - c->vertex;
    int sharing = 0;
    for (int v = 0; v < body->vertex_count; v++)
        sharing += first_vertex[v].active;
    return sharing > 1 ? press / sharing : press;
}

void engine_contact_kinematics(const Engine *e, const double *y, const EngineContact *c, double t,
                               ContactKinematics *k, Vec3 *point, Vec3 *arm) {
    if (c->kind == CONTACT_MANIFOLD) {
        engine_manifold_kinematics(e, y, c, t, k, point, arm, NULL);
        return;
    }
    const EngineBody *body = &e->model.bodies[c->body];
    const EngineObstacle *ob = &e->model.obstacles[c->obstacle];
    const StateBlock *blk = &e->model.layout.blocks[body->block];
    EngineBodyState st;
    Vec3 r, v = body->vertices[c->vertex];
    bool planar = blk->kind == BLOCK_PLANAR_BODY;
    double sn = 0.0, cs = 1.0; /* the planar rotation, kept for the friction pin below */
    if (planar) {
        /* Rotation about y by theta, without going through a quaternion: this is the hot
         * path of every planar right-hand side. */
        const double *s = y + blk->offset;
        sn = sin(s[2]);
        cs = cos(s[2]);
        st.pos = vec3(s[0], 0.0, s[1]);
        st.vel = vec3(s[3], 0.0, s[4]);
        st.angvel = vec3(0.0, s[5], 0.0);
        st.orient = quat_identity(); /* unused on this path */
        r = vec3(cs * v.x + sn * v.z, v.y, -sn * v.x + cs * v.z);
    } else {
        st = engine_block_state(e, y, c->body);
        r = quat_rotate(st.orient, v);
    }
    Vec3 centre = vec3_add(st.pos, r);
    Vec3 n = ob->normal;
    /* The vertex is the centre of a sphere of the body's radius; the contact point is the
     * sphere's point nearest the plane. */
    Vec3 r_point = vec3_mad(r, -body->radius, n);
    Vec3 v_point = spatial_point_velocity(st.vel, st.angvel, r_point);
    double vn = vec3_dot(v_point, n);
    k->depth = ob->offset + body->radius - vec3_dot(centre, n);
    k->depth_rate = -vn;
    k->normal = n;
    k->tangent_velocity = vec3_mad(v_point, -vn, n);
    k->t = t;
    k->contact_point = vec3_add(st.pos, r_point);
    k->has_slip = c->history.friction_pinned;
    if (k->has_slip) { /* the planar path leaves st.orient unset: its pin is rotated here */
        Vec3 pin = c->history.friction_pin_a;
        Vec3 pinned_arm = planar ? vec3(cs * pin.x + sn * pin.z, pin.y, -sn * pin.x + cs * pin.z)
                                 : quat_rotate(st.orient, pin);
        k->slip = vec3_sub(vec3_add(st.pos, pinned_arm), c->history.friction_pin_b);
    }
    /* 1/m_eff = 1/m + (r x n)^T I_w^-1 (r x n), evaluated in the body frame where I is
     * diagonal: no world inertia matrix is formed on this hot path. */
    Vec3 rxn = vec3_cross(r_point, n);
    double angular;
    if (e->model.planar) {
        angular = rxn.y * rxn.y / body->inertia.y; /* only rotation about y exists */
    } else {
        Vec3 u = quat_rotate_inv(st.orient, rxn);
        angular =
            u.x * u.x / body->inertia.x + u.y * u.y / body->inertia.y + u.z * u.z / body->inertia.z;
    }
    k->effective_mass = 1.0 / (1.0 / body->mass + angular);
    k->load = vertex_load_share(e, c, n);
    if (point)
        *point = vec3_add(st.pos, r_point);
    if (arm)
        *arm = r_point;
}

static void body_derivative(const Engine *e, int bi, const double *y, Vec3 force, Vec3 torque,
                            double *ydot) {
    const EngineBody *body = &e->model.bodies[bi];
    const StateBlock *b = &e->model.layout.blocks[body->block];
    const double *s = y + b->offset;
    double *d = ydot + b->offset;
    if (b->kind == BLOCK_PLANAR_BODY) {
        d[0] = s[3];
        d[1] = s[4];
        d[2] = s[5];
        d[3] = force.x / body->mass;
        d[4] = force.z / body->mass;
        d[5] = torque.y / body->inertia.y;
        return;
    }
    Quat q = quat_normalize((Quat){s[3], s[4], s[5], s[6]});
    Vec3 w = vec3(s[10], s[11], s[12]);
    Quat dq = quat_derivative(q, w);
    /* Euler's equations in the body frame, where the inertia is diagonal:
     * I dw_b = tau_b - w_b x (I w_b), then back to the world. */
    Vec3 w_b = quat_rotate_inv(q, w);
    Vec3 tau_b = quat_rotate_inv(q, torque);
    Vec3 l_b = vec3_hadamard(body->inertia, w_b);
    Vec3 rhs_b = vec3_sub(tau_b, vec3_cross(w_b, l_b));
    Vec3 dw = quat_rotate(
        q, vec3(rhs_b.x / body->inertia.x, rhs_b.y / body->inertia.y, rhs_b.z / body->inertia.z));

    d[0] = s[7];
    d[1] = s[8];
    d[2] = s[9];
    d[3] = dq.w;
    d[4] = dq.x;
    d[5] = dq.y;
    d[6] = dq.z;
    d[7] = force.x / body->mass;
    d[8] = force.y / body->mass;
    d[9] = force.z / body->mass;
    d[10] = dw.x;
    d[11] = dw.y;
    d[12] = dw.z;
}

void engine_contact_arms(const Engine *e, const double *y, const EngineContact *c, double t,
                         ContactKinematics *k, Vec3 *arm_a, Vec3 *arm_b) {
    *arm_b = (Vec3){0, 0, 0};
    if (c->kind == CONTACT_MANIFOLD)
        engine_manifold_kinematics(e, y, c, t, k, NULL, arm_a, arm_b);
    else
        engine_contact_kinematics(e, y, c, t, k, NULL, arm_a);
}

static bool takes_loads(const EngineBodyData *d) {
    return d->integrated || d->reduced_slot >= 0;
}

static void own_loads(const Engine *e, int b, double t, Vec3 *force, Vec3 *torque) {
    force[b] = engine_body_own_force(e, b, t);
    torque[b] = engine_body_own_torque(e, b);
}

/* The right-hand side reads each awake body's state once (engine_block_state renormalises the
 * attitude: a square root and a division) instead of once per contact end: in a pile every body
 * has about eight contact ends, so reading per end would repeat that work eight times. The
 * states live in the scratch area past the load arrays (engine_rhs_body_states). A body's state:
 * the cache's entry when it is integrated (awake), else read into *held; by pointer, as a copy
 * per contact end cost more than reading it. */
static const EngineBodyState *cached_state(const Engine *e, const EngineBodyState *states,
                                           const double *y, int body, EngineBodyState *held) {
    if (body < 0)
        return &obstacle_state;
    if (e->body_data[body].integrated)
        return &states[body];
    *held = engine_block_state(e, y, body);
    return held;
}

EngineBodyState *engine_rhs_body_states(const Engine *e) {
    return e->integration.body_states;
}

/* Fills the state cache for y's awake bodies (engine_rhs_body_states). */
static EngineBodyState *cache_awake_states(const Engine *e, const double *y) {
    EngineBodyState *states = engine_rhs_body_states(e);
    for (int i = 0; i < e->sleep.awake_count; i++)
        block_state_into(e, y, e->sleep.awake_bodies[i], &states[e->sleep.awake_bodies[i]]);
    return states;
}

/* engine_contact_kinematics through the state cache: the step-end passes (the active set, the
 * commit) visit every contact too, and every RK4 step commits, so they would repeat the
 * right-hand side's per-end reads. */
static void cached_kinematics(const Engine *e, const EngineBodyState *states, const double *y,
                              const EngineContact *c, double t, ContactKinematics *k) {
    EngineBodyState held_a, held_b; /* a body the cache does not hold */
    if (c->kind == CONTACT_MANIFOLD)
        manifold_kinematics_of(e, c, cached_state(e, states, y, c->body, &held_a),
                               cached_state(e, states, y, c->body_b, &held_b), t, k, NULL, NULL,
                               NULL, model_reads_mass(e, c));
    else
        engine_contact_kinematics(e, y, c, t, k, NULL, NULL);
}

void engine_accumulate_loads(const Engine *e, double t, const double *y, Vec3 *force,
                             Vec3 *torque) {
    for (int i = 0; i < e->sleep.awake_count; i++)
        own_loads(e, e->sleep.awake_bodies[i], t, force, torque);
    for (int s = 0; s < e->reduced.slot_count; s++) { /* the bodies of reduced pairs */
        const EngineReducedSlot *slot = &e->reduced.slot[s];
        if (slot->active)
            own_loads(e, slot->body_a, t, force, torque);
        if (slot->active && slot->body_b >= 0)
            own_loads(e, slot->body_b, t, force, torque);
    }
    EngineBodyState *states = cache_awake_states(e, y);
    for (int li = 0; li < e->sleep.live_contact_count; li++) {
        const EngineContact *c = &e->contacts[e->sleep.live_contacts[li]];
        if (!c->active || engine_contact_inside_pair(e, c))
            continue; /* inside a reduced pair the model is the contact */
        ContactKinematics k;
        Vec3 arm, arm_b;
        EngineBodyState held_a, held_b; /* a body the cache does not hold */
        if (c->kind == CONTACT_MANIFOLD)
            manifold_kinematics_of(e, c, cached_state(e, states, y, c->body, &held_a),
                                   cached_state(e, states, y, c->body_b, &held_b), t, &k, NULL,
                                   &arm, &arm_b,
                                   !engine_contact_model(e, c)->force_ignores_effective_mass);
        else
            engine_contact_arms(e, y, c, t, &k, &arm, &arm_b);
        ContactForce f = engine_contact_force(e, c, &k);
        Vec3 total = vec3_mad(f.tangent, f.normal, k.normal);
        /* A sleeping side is woken at the next commit (engine_update_sleep); until then it is
         * held, like an obstacle. So is a body of another resolver's island: it moves in its
         * own stage, and the islands merge at the next advance. */
        if (takes_loads(&e->body_data[c->body])) {
            force[c->body] = vec3_add(force[c->body], total);
            torque[c->body] = vec3_add(torque[c->body], vec3_cross(arm, total));
        }
        if (c->body_b >= 0 && takes_loads(&e->body_data[c->body_b])) {
            force[c->body_b] = vec3_sub(force[c->body_b], total);
            torque[c->body_b] = vec3_sub(torque[c->body_b], vec3_cross(arm_b, total));
        }
    }
}

/* Forces and torques are accumulated per body in the scratch area after the RK4 stages. Only
 * awake bodies and live contacts (engine_sleep.c) are evaluated: a sleeping body's derivative
 * is not written, its block is not integrated. */
void engine_rhs(Engine *e, double t, const double *y, double *ydot) {
    e->stats.rhs_evals++;
    enum { MAX_STACK_BODIES = 64 };
    Vec3 force_stack[MAX_STACK_BODIES], torque_stack[MAX_STACK_BODIES];
    Vec3 *force = force_stack, *torque = torque_stack;
    if (e->model.body_count > MAX_STACK_BODIES) {
        force = e->integration.forces;
        torque = e->integration.torques;
    }
    engine_accumulate_loads(e, t, y, force, torque);
    for (int i = 0; i < e->sleep.awake_count; i++) {
        int b = e->sleep.awake_bodies[i];
        body_derivative(e, b, y, force[b], torque[b], ydot);
    }
    engine_reduced_rhs(e, y, force, torque, ydot);
}

void engine_roots(const Engine *e, const double *y, double *g) {
    for (int ci = 0; ci < e->contact_count; ci++) {
        ContactKinematics k;
        engine_contact_kinematics(e, y, &e->contacts[ci], e->data.t, &k, NULL, NULL);
        g[ci] = k.depth;
    }
}

/* A contact is active when the bodies overlap, or touch to within round-off while approaching:
 * the integrator's root finding cannot report a crossing that starts exactly at a restart
 * (CVODE ignores a root function that is zero at the initial time until it has moved away, and
 * then sees no sign change), so a contact found touching at a restart must start active. */
bool engine_contact_should_be_active(const ContactKinematics *k) {
    return k->depth > 0.0 || (k->depth > -ENGINE_TOUCH_TOLERANCE && k->depth_rate > 0.0);
}

static bool same_touch(const EngineContact *a, const EngineContact *b) {
    return a->body == b->body && a->body_b == b->body_b && a->obstacle == b->obstacle &&
           a->pair == b->pair;
}

/* Points of the same two things through the same pair, counted from the first of them. */
static int touch_points(const Engine *e, int first) {
    int n = 0;
    for (int ci = first; ci < e->contact_count; ci++)
        n += e->contacts[ci].active && same_touch(&e->contacts[ci], &e->contacts[first]);
    return n;
}

static bool touch_seen(const Engine *e, int ci) {
    for (int j = 0; j < ci; j++)
        if (e->contacts[j].active && same_touch(&e->contacts[j], &e->contacts[ci]))
            return true;
    return false;
}

const char *engine_contact_partner(const Engine *e, const EngineContact *c) {
    return c->body_b >= 0 ? e->model.bodies[c->body_b].name
                          : thing_name(e->model.db, e->model.obstacles[c->obstacle].thing);
}

void engine_describe_active(const Engine *e, char *buf, size_t size) {
    enum { SHOWN = 6 };
    int shown = 0, more = 0;
    size_t at = 0;
    buf[0] = '\0';
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (!c->active || touch_seen(e, ci))
            continue;
        if (shown == SHOWN || at >= size) {
            more++;
            continue;
        }
        at += (size_t)snprintf(buf + at, size - at, "%s%s on %s (%s, %d points)",
                               shown ? ", " : "; active contacts: ", e->model.bodies[c->body].name,
                               engine_contact_partner(e, c),
                               thing_name(e->model.db, e->model.pairs[c->pair].thing),
                               touch_points(e, ci));
        shown++;
    }
    if (more > 0 && at < size)
        snprintf(buf + at, size - at, " and %d more", more);
}

EngineEvent engine_contact_event(const EngineContact *c, double t, double normal_velocity) {
    return (EngineEvent){.t = t,
                         .body = c->body,
                         .body_b = c->body_b,
                         .vertex = c->vertex,
                         .obstacle = c->obstacle,
                         .contact_id = c->id,
                         .normal_velocity = normal_velocity};
}

/* directions (Nullable): the integrator's located crossing per contact (+1 depth rising: begin,
 * -1 falling: end, 0 none). A contact without a located crossing is brought in line with its
 * depth (engine_contact_should_be_active), so a crossing the integrator did not single out is
 * never lost. */
int engine_update_active_set(Engine *e, double t, const int *directions) {
    int changes = 0;
    EngineBodyState *states = cache_awake_states(e, e->y);
    for (int ci = 0; ci < e->contact_count; ci++) {
        EngineContact *c = &e->contacts[ci];
        if (engine_contact_frozen(e, c) || engine_contact_time_stepped(e, c))
            continue; /* nothing of it moves, or its solver decides (RESOLVE stage) */
        ContactKinematics k;
        cached_kinematics(e, states, e->y, c, t, &k);
        if (c->released) { /* the model ended it: it may begin again only once they part */
            c->released = k.depth > 0.0;
            continue;
        }
        bool want = engine_contact_should_be_active(&k);
        /* A located crossing decides, unless the depth rate contradicts it: an onset located
         * exactly at an output time (CVODE's stop time) was followed by a "separation" root
         * 1e-16 s later while the body still approached, which ended the contact after
         * 1e-16 s with r = -1. A real end has the depth falling, a real onset rising. */
        bool onset_located = false;
        if (directions && directions[ci] != 0) {
            bool located = directions[ci] > 0;
            bool contradicted = located ? k.depth_rate < 0.0 : k.depth_rate > 0.0;
            if (!contradicted)
                want = located;
            onset_located = located && !contradicted;
        }
        if (want == c->active)
            continue;
        if (want && !onset_located && c->kind == CONTACT_MANIFOLD && k.depth > 0.0) {
            /* An onset found already overlapping (RK4 in a crowded scene switches contacts at
             * step ends): starting at that depth would hand the contact elastic energy nobody
             * paid for, up to k (v dt)^2 / 2 per onset. The approach pays it, as the spring would
             * have had it begun at zero depth: an impulse along the normal takes exactly that
             * energy out of the bodies' closing motion, and the contact keeps its geometric
             * depth. Only what the approach cannot pay becomes a depth offset, sized for a
             * quadratic potential (a stiffer-than-quadratic law such as Hertz's then holds less
             * than it was paid), and the next collision update heals it
             * (engine_manifold_energy.c). */
            double excess = engine_contact_potential(e, c, &k);
            double paid = engine_contact_brake(e, states, c, k.contact_point,
                                               vec3_scale(k.normal, -1.0), excess);
            e->stats.onset_brake_energy += paid;
            if (paid > 0.0) /* the bodies' rates changed */
                engine_invalidate(e, ENGINE_INVALID_INTEGRATOR);
            if (paid < excess)
                c->depth_offset += k.depth * (1.0 - sqrt(paid / excess));
            engine_contact_kinematics(e, e->y, c, t, &k, NULL, NULL);
        }
        changes++;
        EngineEvent ev = engine_contact_event(c, t, -k.depth_rate);
        engine_invalidate(e, ENGINE_INVALID_FIXED_STEP);
        if (want) {
            c->active = true;
            c->id = ++e->data.next_contact_id;
            c->t_begin = t;
            engine_contact_begin(e, c, &k);
            ev.kind = ENGINE_EVENT_CONTACT_BEGIN;
            ev.contact_id = c->id;
            c->equilibrium = false;
            c->load = 0.0;
            c->still_speed = 0.0;
        } else {
            c->active = false;
            engine_contact_end(e, c);
            ev.kind = ENGINE_EVENT_CONTACT_END;
            ev.contact_id = c->id;
            ev.duration = t - c->t_begin;
        }
        engine_emit(e, &ev);
        if (want)
            engine_wake_on_contact(e, c, &k, t);
    }
    return changes;
}

/* The friction spring's material points, pinned where the force acts now (its bodies' states
 * read only for a contact with friction: the commit visits every contact at every step). */
static void pin_at_commit(const Engine *e, const EngineBodyState *states, EngineContact *c,
                          Vec3 point) {
    if (!engine_contact_has_friction(e, c)) {
        c->history.friction_pinned = false;
        return;
    }
    EngineBodyState held_a, held_b; /* a body the cache does not hold */
    bool with_b = c->kind == CONTACT_MANIFOLD && c->body_b >= 0;
    engine_pin_friction(c, cached_state(e, states, e->y, c->body, &held_a),
                        with_b ? cached_state(e, states, e->y, c->body_b, &held_b) : NULL, point);
}

/* contact_equilibrium_speed of c's load and effective mass; the kinematics of a model that
 * ignores the mass (cached_kinematics) leave it NaN, and it is computed here only where the
 * speed reads it (a load carried; else the speed is the tolerance or 0 whatever the mass). */
static double still_speed_at_commit(const Engine *e, const EngineBodyState *states,
                                    const EngineContact *c, const ContactKinematics *k) {
    const ContactParams *p = engine_contact_params(e, c);
    double mass = k->effective_mass;
    if (isnan(mass) && k->load > 0.0 && c->kind == CONTACT_MANIFOLD) {
        EngineBodyState held_a, held_b;
        ContactKinematics with_mass;
        manifold_kinematics_of(e, c, cached_state(e, states, e->y, c->body, &held_a),
                               cached_state(e, states, e->y, c->body_b, &held_b), k->t, &with_mass,
                               NULL, NULL, NULL, true);
        mass = with_mass.effective_mass;
    }
    return contact_equilibrium_speed(p, k->load, mass);
}

void engine_commit_contacts(Engine *e, double t) {
    engine_equilibrium_loads(e);
    const EngineBodyState *states = cache_awake_states(e, e->y);
    for (int li = 0; li < e->sleep.live_contact_count; li++) {
        EngineContact *c = &e->contacts[e->sleep.live_contacts[li]];
        if (!c->active)
            continue;
        ContactKinematics k;
        cached_kinematics(e, states, e->y, c, t, &k);
        int events = engine_contact_commit_model(e, c, &k);
        pin_at_commit(e, states, c, k.contact_point);
        c->still_speed = still_speed_at_commit(e, states, c, &k);
        /* A model reports the instant equilibrium begins (internal friction: once, then keeps
         * history.in_equilibrium while it holds); the flag lasts while either says so. */
        c->equilibrium = (events & CONTACT_EVENT_EQUILIBRIUM) != 0 ||
                         (c->equilibrium && c->history.in_equilibrium);
        EngineEvent ev = engine_contact_event(c, t, -k.depth_rate);
        if (events & CONTACT_EVENT_EQUILIBRIUM) {
            ev.kind = ENGINE_EVENT_EQUILIBRIUM;
            engine_emit(e, &ev);
        }
        if (events & CONTACT_EVENT_SEPARATION) {
            /* The model ended the contact with the depth still positive: the force law
             * changes, so the integrator restarts here; the root direction of an inactive
             * contact is "rising", so it begins again only at the next onset. */
            c->active = false;
            c->equilibrium = false;
            c->released = true;
            engine_contact_end(e, c);
            ev.kind = ENGINE_EVENT_CONTACT_END;
            ev.duration = t - c->t_begin;
            engine_emit(e, &ev);
            engine_invalidate(e, ENGINE_INVALID_INTEGRATOR | ENGINE_INVALID_FIXED_STEP);
        }
    }
    engine_update_sleep(e, t);
    engine_reduced_commit(e, t);
}

void engine_normalize_state(Engine *e, double *y) {
    for (int i = 0; i < e->sleep.awake_count; i++) { /* sleeping blocks do not change */
        const StateBlock *b =
            &e->model.layout.blocks[e->model.bodies[e->sleep.awake_bodies[i]].block];
        if (b->kind != BLOCK_FREE_BODY)
            continue;
        double *s = y + b->offset;
        Quat q = quat_normalize((Quat){s[3], s[4], s[5], s[6]});
        s[3] = q.w;
        s[4] = q.x;
        s[5] = q.y;
        s[6] = q.z;
    }
}

/* The elastic energy of the contacts at e->y, states being every body's (engine_fill_states):
 * a manifold contact reads its two bodies there instead of two engine_block_state calls, the
 * same numbers (a publication of the pile visits about 600 active contacts). */
static double contacts_elastic_energy(const Engine *e, const EngineBodyState *states) {
    double elastic = 0.0;
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        /* A complementarity contact is rigid (001 2.2): it stores no elastic energy, whatever
         * its pair's force law would say of its (slop-sized) depth. */
        if (!c->active || engine_contact_time_stepped(e, c))
            continue;
        ContactKinematics k;
        if (c->kind == CONTACT_MANIFOLD)
            engine_merge_kinematics(e, states, c, &k);
        else
            engine_contact_kinematics(e, e->y, c, e->data.t, &k, NULL, NULL);
        elastic += engine_contact_potential(e, c, &k);
    }
    return elastic;
}

EngineEnergy engine_energy_of_states(const Engine *e, const EngineBodyState *states) {
    EngineEnergy en = {0};
    for (int i = 0; i < e->model.body_count; i++) {
        const EngineBody *body = &e->model.bodies[i];
        const EngineBodyState *st = &states[i];
        Mat3 inertia = mat3_world_inertia(st->orient, body->inertia);
        en.kinetic += 0.5 * body->mass * vec3_dot(st->vel, st->vel) +
                      0.5 * vec3_dot(st->angvel, mat3_mul_vec(inertia, st->angvel));
        en.potential -= body->mass * vec3_dot(e->model.gravity, st->pos);
    }
    en.elastic = contacts_elastic_energy(e, states);
    en.total = en.kinetic + en.potential + en.elastic;
    return en;
}

EngineEnergy engine_energy(const Engine *e) {
    return engine_energy_of_states(e, engine_merge_states(e));
}

/* A body whose velocity an impulse may change here: integrated by the force laws (awake, not in
 * a reduced pair or a time-stepped island) and free (a planar body's block has no out-of-plane
 * rates to take the impulse's other components). */
static bool brakeable(const Engine *e, int body) {
    return e->body_data[body].integrated &&
           e->model.layout.blocks[e->model.bodies[body].block].kind == BLOCK_FREE_BODY;
}

static void apply_point_impulse(Engine *e, EngineBodyState *states, int body, Vec3 arm,
                                Vec3 impulse) {
    const EngineBody *b = &e->model.bodies[body];
    EngineBodyState *s = &states[body];
    s->vel = vec3_mad(s->vel, 1.0 / b->mass, impulse);
    Vec3 torque = quat_rotate_inv(s->orient, vec3_cross(arm, impulse));
    Vec3 dw = {torque.x / b->inertia.x, torque.y / b->inertia.y, torque.z / b->inertia.z};
    s->angvel = vec3_add(s->angvel, quat_rotate(s->orient, dw));
    double *y = e->y + e->model.layout.blocks[b->block].offset;
    double rates[6] = {s->vel.x, s->vel.y, s->vel.z, s->angvel.x, s->angvel.y, s->angvel.z};
    memcpy(y + 7, rates, sizeof rates); /* only the rates: the pose keeps its every bit */
}

double engine_contact_brake(Engine *e, EngineBodyState *states, const EngineContact *c, Vec3 point,
                            Vec3 dir, double energy) {
    bool has_b = c->body_b >= 0;
    if (!(energy > 0.0) || !brakeable(e, c->body) || (has_b && !brakeable(e, c->body_b)))
        return 0.0;
    EngineBodyState a = states[c->body], b = has_b ? states[c->body_b] : obstacle_state;
    Vec3 ra = vec3_sub(point, a.pos), rb = vec3_sub(point, b.pos);
    Vec3 rel = vec3_sub(spatial_point_velocity(a.vel, a.angvel, ra),
                        spatial_point_velocity(b.vel, b.angvel, rb));
    if (vec3_dot(dir, dir) == 0.0) /* along the relative velocity */
        dir = vec3_scale(rel, 1.0 / fmax(vec3_norm(rel), 1e-300));
    double speed = vec3_dot(rel, dir);
    if (!(speed > 0.0))
        return 0.0;
    double mass = contact_effective_mass(e, c, &a, &b, ra, rb, dir);
    double taken = fmin(energy, 0.5 * mass * speed * speed);
    double after = sqrt(fmax(0.0, speed * speed - 2.0 * taken / mass));
    Vec3 impulse = vec3_scale(dir, -mass * (speed - after)); /* on A; B takes its opposite */
    apply_point_impulse(e, states, c->body, ra, impulse);
    if (has_b)
        apply_point_impulse(e, states, c->body_b, rb, vec3_scale(impulse, -1.0));
    return taken;
}

double engine_speculative_reach(const Engine *e, const ContactKinematics *k, double margin) {
    double closing = k->depth_rate > 0.0 ? k->depth_rate : 0.0;
    return fmax(margin, ENGINE_REACH_AHEAD_SAFETY * closing * e->model.dt);
}
