/* Reduced-coordinate pairs (third kind of contact resolution; ARCHITECTURE.md, seed 002 Kry
 * ch. 4): a pair of bodies in one continuous contact integrated as one block of its own kind
 * (BLOCK_CONTACT_PAIR) instead of two free bodies, entered and left with continuous body states.
 *
 * The state vector keeps ENGINE_REDUCED_SLOTS pair blocks after the body blocks. While a pair is
 * in a slot its two bodies are "slaved": their own blocks are not integrated, and
 * engine_block_state derives their states from the pair block through the model, so frames,
 * contacts with third bodies and the collision world see them move. Contacts inside the pair
 * exert no force (the model is the contact); their depth stays what it was at entry for a model
 * that keeps the contact (the welded one exactly), and they take over again at the exit.
 *
 * The welded reference model (engine_reduced_welded): the composite of the two bodies, as one
 * rigid body whose mass, centre of mass and inertia combine theirs, with the entry conserving
 * linear and angular momentum; the pair separates when the contact force that holds the
 * composite together along the entry normal would have to pull (002 4.4.4's rule for leaving a
 * constrained contact). Against a fixed obstacle the body is held. It stands for Kry's contact
 * coordinates (the smooth-contact issue) with friction that never slips or spins. */
#include <math.h>
#include <string.h>

#include "engine_internal.h"

/* ===== The welded model ===== */

typedef struct WeldedData {
    double mass;
    Vec3 r_a, r_b; /* the bodies' centres in the composite frame (= body a's frame) */
    Quat q_rel_b;  /* b's attitude in the composite frame */
    Mat3 inertia;  /* composite inertia about its centre, composite frame */
    Mat3 inv_inertia;
    Vec3 normal; /* the entry normal, composite frame */
} WeldedData;

static Mat3 mat3_add(Mat3 a, Mat3 b) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            a.m[i][j] += b.m[i][j];
    return a;
}

/* m (|r|^2 I - r r^T): the parallel-axis term. */
static Mat3 parallel_axis(double m, Vec3 r) {
    Mat3 out = mat3_diag(vec3(1, 1, 1));
    double rr = vec3_dot(r, r);
    double rv[3] = {r.x, r.y, r.z};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out.m[i][j] = m * ((i == j ? rr : 0.0) - rv[i] * rv[j]);
    return out;
}

static Mat3 rotated_inertia(Quat q, Vec3 principal) {
    Mat3 r = quat_to_mat3(q);
    return mat3_mul(mat3_mul(r, mat3_diag(principal)), mat3_transpose(r));
}

static bool welded_enter(const EngineReducedPair *pair, void *data, const EngineBodyState *a,
                         const EngineBodyState *b, double *block) {
    WeldedData *d = data;
    Vec3 c, v, w;
    Quat q = a->orient;
    if (pair->fixed_b) {
        d->mass = pair->mass_a;
        c = a->pos;
        v = w = vec3(0, 0, 0); /* held by the obstacle */
        d->r_a = vec3(0, 0, 0);
        d->q_rel_b = quat_identity();
        d->inertia = mat3_diag(pair->inertia_a);
    } else {
        double ma = pair->mass_a, mb = pair->mass_b, m = ma + mb;
        d->mass = m;
        c = vec3_scale(vec3_add(vec3_scale(a->pos, ma), vec3_scale(b->pos, mb)), 1.0 / m);
        v = vec3_scale(vec3_add(vec3_scale(a->vel, ma), vec3_scale(b->vel, mb)), 1.0 / m);
        Vec3 ra_w = vec3_sub(a->pos, c), rb_w = vec3_sub(b->pos, c);
        d->r_a = quat_rotate_inv(q, ra_w);
        d->r_b = quat_rotate_inv(q, rb_w);
        d->q_rel_b = quat_mul(quat_conj(q), b->orient);
        d->inertia = mat3_add(
            mat3_add(mat3_diag(pair->inertia_a), parallel_axis(ma, d->r_a)),
            mat3_add(rotated_inertia(d->q_rel_b, pair->inertia_b), parallel_axis(mb, d->r_b)));
        /* Angular momentum about the composite centre, kept by the entry. */
        Vec3 l = vec3_add(mat3_mul_vec(mat3_world_inertia(a->orient, pair->inertia_a), a->angvel),
                          mat3_mul_vec(mat3_world_inertia(b->orient, pair->inertia_b), b->angvel));
        l = vec3_add(l, vec3_scale(vec3_cross(ra_w, vec3_sub(a->vel, v)), ma));
        l = vec3_add(l, vec3_scale(vec3_cross(rb_w, vec3_sub(b->vel, v)), mb));
        Mat3 inv;
        if (!mat3_inverse(d->inertia, &inv))
            return false;
        w = quat_rotate(q, mat3_mul_vec(inv, quat_rotate_inv(q, l)));
    }
    if (!mat3_inverse(d->inertia, &d->inv_inertia))
        return false;
    d->normal = quat_rotate_inv(q, pair->normal);
    double values[13] = {c.x, c.y, c.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z};
    memcpy(block, values, sizeof values);
    return true;
}

typedef struct WeldedMotion {
    Vec3 c, v, w;
    Quat q;
    Vec3 acc, alpha; /* linear and angular accelerations, world */
} WeldedMotion;

static WeldedMotion welded_motion(const EngineReducedPair *pair, const WeldedData *d,
                                  const double *s, const EngineReducedLoads *loads) {
    WeldedMotion m = {.c = vec3(s[0], s[1], s[2]),
                      .q = quat_normalize((Quat){s[3], s[4], s[5], s[6]}),
                      .v = vec3(s[7], s[8], s[9]),
                      .w = vec3(s[10], s[11], s[12])};
    if (pair->fixed_b)
        return m; /* held: no motion */
    Vec3 ra = quat_rotate(m.q, d->r_a), rb = quat_rotate(m.q, d->r_b);
    Vec3 f = vec3_add(loads->force_a, loads->force_b);
    Vec3 tau = vec3_add(vec3_add(loads->torque_a, loads->torque_b),
                        vec3_add(vec3_cross(ra, loads->force_a), vec3_cross(rb, loads->force_b)));
    m.acc = vec3_scale(f, 1.0 / d->mass);
    /* Euler's equations in the composite frame, where the inertia is constant (not diagonal). */
    Vec3 w_b = quat_rotate_inv(m.q, m.w), tau_b = quat_rotate_inv(m.q, tau);
    Vec3 rhs = vec3_sub(tau_b, vec3_cross(w_b, mat3_mul_vec(d->inertia, w_b)));
    m.alpha = quat_rotate(m.q, mat3_mul_vec(d->inv_inertia, rhs));
    return m;
}

static void welded_derivative(const EngineReducedPair *pair, const void *data, const double *s,
                              const EngineReducedLoads *loads, double *ds) {
    WeldedMotion m = welded_motion(pair, data, s, loads);
    Quat dq = quat_derivative(m.q, m.w);
    double values[13] = {m.v.x,   m.v.y,   m.v.z,   dq.w,      dq.x,      dq.y,     dq.z,
                         m.acc.x, m.acc.y, m.acc.z, m.alpha.x, m.alpha.y, m.alpha.z};
    if (pair->fixed_b)
        memset(values, 0, sizeof values);
    memcpy(ds, values, sizeof values);
}

static void welded_bodies(const EngineReducedPair *pair, const void *data, const double *s,
                          EngineBodyState *a, EngineBodyState *b) {
    const WeldedData *d = data;
    Vec3 c = vec3(s[0], s[1], s[2]), v = vec3(s[7], s[8], s[9]), w = vec3(s[10], s[11], s[12]);
    Quat q = quat_normalize((Quat){s[3], s[4], s[5], s[6]});
    Vec3 ra = quat_rotate(q, d->r_a);
    *a = (EngineBodyState){
        .pos = vec3_add(c, ra), .orient = q, .vel = spatial_point_velocity(v, w, ra), .angvel = w};
    if (pair->fixed_b)
        return;
    Vec3 rb = quat_rotate(q, d->r_b);
    *b = (EngineBodyState){.pos = vec3_add(c, rb),
                           .orient = quat_normalize(quat_mul(q, d->q_rel_b)),
                           .vel = spatial_point_velocity(v, w, rb),
                           .angvel = w};
}

/* The force the contact must put on a for a to follow the composite: m_a a_a - F_a, along the
 * normal (from b to a). Against an obstacle: what holds the body still, -F_a. */
static double welded_normal_force(const EngineReducedPair *pair, const void *data, const double *s,
                                  const EngineReducedLoads *loads) {
    const WeldedData *d = data;
    WeldedMotion m = welded_motion(pair, d, s, loads);
    Vec3 n = quat_rotate(m.q, d->normal);
    if (pair->fixed_b)
        return -vec3_dot(loads->force_a, n);
    Vec3 ra = quat_rotate(m.q, d->r_a);
    Vec3 acc_a =
        vec3_add(vec3_add(m.acc, vec3_cross(m.alpha, ra)), vec3_cross(m.w, vec3_cross(m.w, ra)));
    Vec3 needed = vec3_sub(vec3_scale(acc_a, pair->mass_a), loads->force_a);
    return vec3_dot(needed, n);
}

static const EngineReducedModel welded_model = {.name = "welded",
                                                .block_size = 13,
                                                .enter = welded_enter,
                                                .derivative = welded_derivative,
                                                .bodies = welded_bodies,
                                                .normal_force = welded_normal_force};

const EngineReducedModel *engine_reduced_welded(void) {
    return &welded_model;
}

/* ===== Pairs in the engine ===== */

/* The model a slot was entered with. */
static const EngineReducedModel *model_of(const EngineReducedSlot *slot) {
    return slot->model ? slot->model : &welded_model;
}

/* The model for a new pair: the engine's override, else Kry's contact coordinates for a smooth
 * body on a smooth obstacle, else the welded reference. */
static const EngineReducedModel *model_for(const Engine *e, int body, int partner, int obstacle) {
    if (e->reduced.model)
        return e->reduced.model;
    if (partner < 0 && obstacle >= 0 && e->model.bodies[body].surface &&
        e->model.obstacles[obstacle].surface)
        return engine_reduced_smooth();
    return &welded_model;
}

void engine_set_reduced_model(Engine *e, const EngineReducedModel *model) {
    e->reduced.model = model;
    engine_invalidate(e, ENGINE_INVALID_REPLAY);
}

int engine_reduced_pair_count(const Engine *e) {
    int n = 0;
    for (int s = 0; s < ENGINE_REDUCED_SLOTS; s++)
        n += e->reduced.slot[s].active;
    return n;
}

void engine_reduced_body_state(const Engine *e, const double *y, int body, EngineBodyState *out) {
    const EngineReducedSlot *slot = &e->reduced.slot[e->body_data[body].reduced_slot];
    EngineBodyState a, b = {0};
    model_of(slot)->bodies(&slot->pair, slot->data, y + e->model.layout.blocks[slot->block].offset,
                           &a, &b);
    *out = body == slot->body_a ? a : b;
}

bool engine_contact_inside_pair(const Engine *e, const EngineContact *c) {
    int s = e->body_data[c->body].reduced_slot;
    if (s < 0)
        return false;
    const EngineReducedSlot *slot = &e->reduced.slot[s];
    if (c->body_b >= 0)
        return e->body_data[c->body_b].reduced_slot == s;
    return slot->body_b < 0 && c->obstacle == slot->obstacle;
}

/* Hands the pair back to two free bodies with the states its block gives now. */
void engine_reduced_leave(Engine *e, int s, double t) {
    EngineReducedSlot *slot = &e->reduced.slot[s];
    if (!slot->active)
        return;
    EngineBodyState a, b = {0};
    model_of(slot)->bodies(&slot->pair, slot->data,
                           e->y + e->model.layout.blocks[slot->block].offset, &a, &b);
    slot->active = false;
    e->body_data[slot->body_a].reduced_slot = -1;
    engine_block_store(e, e->y, slot->body_a, &a);
    if (slot->body_b >= 0) {
        e->body_data[slot->body_b].reduced_slot = -1;
        engine_block_store(e, e->y, slot->body_b, &b);
    }
    e->stats.reduced_exits++;
    engine_invalidate(e, ENGINE_INVALID_SLEEP | ENGINE_INVALID_INTEGRATOR);
    (void)t;
    /* A model that kept the contact itself moved the bodies relative to each other while the
     * collision world carried the pair's contacts unchanged (engine_collide.c holds the pair):
     * their anchors are stale, so the contacts are found again now, before any force law reads
     * them. */
    if (model_of(slot)->keeps_contact)
        engine_collide_now(e);
}

/* The pair's loads from the per-body loads engine_accumulate_loads fills. */
static EngineReducedLoads slot_loads(const EngineReducedSlot *slot, const Vec3 *force,
                                     const Vec3 *torque) {
    EngineReducedLoads loads = {.force_a = force[slot->body_a], .torque_a = torque[slot->body_a]};
    if (slot->body_b >= 0) {
        loads.force_b = force[slot->body_b];
        loads.torque_b = torque[slot->body_b];
    }
    return loads;
}

void engine_reduced_rhs(Engine *e, const double *y, const Vec3 *force, const Vec3 *torque,
                        double *ydot) {
    for (int s = 0; s < e->reduced.slot_count; s++) {
        const EngineReducedSlot *slot = &e->reduced.slot[s];
        if (!slot->active)
            continue;
        EngineReducedLoads loads = slot_loads(slot, force, torque);
        int off = e->model.layout.blocks[slot->block].offset;
        model_of(slot)->derivative(&slot->pair, slot->data, y + off, &loads, ydot + off);
    }
}

void engine_reduced_commit(Engine *e, double t) {
    if (engine_reduced_pair_count(e) == 0)
        return;
    /* The right-hand side's load arrays: free between steps. */
    Vec3 *force = e->integration.forces, *torque = e->integration.torques;
    engine_accumulate_loads(e, t, e->y, force, torque);
    for (int s = 0; s < ENGINE_REDUCED_SLOTS; s++) {
        EngineReducedSlot *slot = &e->reduced.slot[s];
        if (!slot->active)
            continue;
        EngineReducedLoads loads = slot_loads(slot, force, torque);
        const EngineReducedModel *model = model_of(slot);
        double *block = e->y + e->model.layout.blocks[slot->block].offset;
        int decision = ENGINE_REDUCED_KEEP;
        IssimError why = {0};
        if (model->commit)
            decision = model->commit(&slot->pair, slot->data, block, &loads, t, &why);
        if (decision == ENGINE_REDUCED_CHANGED)
            engine_invalidate(e, ENGINE_INVALID_INTEGRATOR);
        if (decision == ENGINE_REDUCED_LEAVE)
            issim_log(ISSIM_LOG_INFO, "reduced pair %s leaves at t = %.9g s: %s",
                      e->model.bodies[slot->body_a].name, t, why.message);
        /* a model with a commit hook decides separation there */
        if (decision == ENGINE_REDUCED_LEAVE ||
            (!model->commit && model->normal_force(&slot->pair, slot->data, block, &loads) < 0.0)) {
            engine_reduced_leave(e, s, t); /* the contact would have to pull: it separates */
            engine_refresh_awake(e);       /* the integrated vector changes from here */
        }
    }
}

/* The reduced pair `body` heads: its partner body (both in one island of two, joined by their
 * contacts) or, alone in its island, the one obstacle it touches through reduced-pair contacts.
 * Other contacts of the pair's bodies with obstacles are loads (force laws). false when the
 * island holds a third body, or the pair is not clear-cut. */
static bool pair_of_island(const Engine *e, int body, int *partner, int *obstacle, int *contact) {
    *partner = -1;
    *obstacle = -1;
    *contact = -1;
    int root = e->islands.island_of_body[body], obstacle_contact = -1;
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (!c->active || e->islands.island_of_body[c->body] != root)
            continue;
        if (c->body_b >= 0) {
            int other = c->body == body ? c->body_b : c->body_b == body ? c->body : -2;
            if (other == -2 || (*partner >= 0 && other != *partner))
                return false; /* a third body */
            *partner = other;
            if (*contact < 0)
                *contact = ci;
            continue;
        }
        if (e->model.pairs[c->pair].params.resolver != CONTACT_RESOLVER_REDUCED)
            continue; /* a force law against an obstacle: a load */
        if (c->body != body || (*obstacle >= 0 && c->obstacle != *obstacle))
            return false;
        *obstacle = c->obstacle;
        if (obstacle_contact < 0)
            obstacle_contact = ci;
    }
    if (*partner >= 0) {
        *obstacle = -1; /* the body pair; obstacle contacts are loads */
        return e->model.pairs[e->contacts[*contact].pair].params.resolver ==
               CONTACT_RESOLVER_REDUCED;
    }
    *contact = obstacle_contact;
    return *contact >= 0;
}

/* A welded pair enters once the contact is still; a model that keeps the contact itself
 * (sliding and rolling included) once the normal approach has stopped. */
static bool slow_enough(const Engine *e, const EngineContact *c, const EngineReducedModel *model) {
    ContactKinematics k;
    engine_contact_kinematics(e, e->y, c, e->data.t, &k, NULL, NULL);
    if (model->keeps_contact)
        return fabs(k.depth_rate) < engine_contact_params(e, c)->slip_tolerance;
    double speed =
        sqrt(k.depth_rate * k.depth_rate + vec3_dot(k.tangent_velocity, k.tangent_velocity));
    return speed < contact_equilibrium_speed(engine_contact_params(e, c), k.load, k.effective_mass);
}

static int free_slot(const Engine *e) {
    int s = 0;
    while (s < ENGINE_REDUCED_SLOTS && e->reduced.slot[s].active)
        s++;
    return s < e->reduced.slot_count ? s : -1;
}

static void occupy(Engine *e, int s, int body, int partner, int obstacle,
                   const EngineReducedModel *model) {
    EngineReducedSlot *slot = &e->reduced.slot[s];
    slot->active = true;
    slot->model = model;
    slot->body_a = body;
    slot->body_b = partner;
    slot->obstacle = obstacle;
    e->body_data[body].reduced_slot = s;
    if (partner >= 0)
        e->body_data[partner].reduced_slot = s;
    e->stats.reduced_entries++;
    engine_invalidate(e, ENGINE_INVALID_SLEEP | ENGINE_INVALID_INTEGRATOR);
}

IssimStatus engine_reduced_start_pair(Engine *e, int body, int obstacle,
                                      const EngineReducedPair *pair,
                                      const EngineReducedModel *model, const void *data,
                                      size_t size, const double *block, IssimError *err) {
    int s = free_slot(e);
    if (s < 0 || size > ENGINE_REDUCED_DATA_MAX)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s: no free reduced-pair slot (at most %d pairs%s)",
                               e->model.bodies[body].name, ENGINE_REDUCED_SLOTS,
                               e->model.planar ? "; none in a planar scene" : "");
    EngineReducedSlot *slot = &e->reduced.slot[s];
    slot->pair = *pair;
    memset(slot->data, 0, sizeof slot->data);
    memcpy(slot->data, data, size);
    memcpy(e->y + e->model.layout.blocks[slot->block].offset, block,
           sizeof(double) * model->block_size);
    occupy(e, s, body, -1, obstacle, model);
    return ISSIM_OK;
}

static void try_enter(Engine *e, int body) {
    int partner, obstacle, ci;
    if (!pair_of_island(e, body, &partner, &obstacle, &ci) || (partner >= 0 && partner < body))
        return; /* not a pair, or handled at its lower body */
    const EngineContact *c = &e->contacts[ci];
    const EngineReducedModel *model = model_for(e, body, partner, obstacle);
    if (!slow_enough(e, c, model))
        return;
    int s = free_slot(e);
    if (s < 0)
        return; /* every slot taken: the force law carries on */
    EngineReducedSlot *slot = &e->reduced.slot[s];
    const EngineBody *a = &e->model.bodies[body];
    ContactKinematics k;
    Vec3 point;
    engine_contact_kinematics(e, e->y, c, e->data.t, &k, &point, NULL);
    /* The normal from b to a: a contact stores it for its own body order. */
    Vec3 normal = c->body == body ? k.normal : vec3_scale(k.normal, -1.0);
    slot->pair = (EngineReducedPair){.mass_a = a->mass,
                                     .inertia_a = a->inertia,
                                     .point = point,
                                     .normal = normal,
                                     .fixed_b = partner < 0,
                                     .t = e->data.t};
    slot->pair.surface_a = a->surface;
    slot->pair.params = &e->model.pairs[c->pair].params;
    if (partner >= 0) {
        slot->pair.mass_b = e->model.bodies[partner].mass;
        slot->pair.inertia_b = e->model.bodies[partner].inertia;
        slot->pair.surface_b = e->model.bodies[partner].surface;
    } else if (obstacle >= 0) {
        slot->pair.surface_b = e->model.obstacles[obstacle].surface;
    }
    memset(slot->data, 0, sizeof slot->data);
    EngineBodyState sa = engine_block_state(e, e->y, body), sb = {.orient = quat_identity()};
    if (partner >= 0)
        sb = engine_block_state(e, e->y, partner);
    else if (obstacle >= 0)
        sb = (EngineBodyState){.pos = e->model.obstacles[obstacle].pose.p,
                               .orient = e->model.obstacles[obstacle].pose.q};
    double *block = e->y + e->model.layout.blocks[slot->block].offset;
    if (!model->enter(&slot->pair, slot->data, &sa, &sb, block))
        return;
    occupy(e, s, body, partner, obstacle, model);
}

/* A body other than the pair's partner touches one of the pair's bodies. */
static bool third_body_touches(const Engine *e, const EngineReducedSlot *slot) {
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (!c->active || c->body_b < 0 || engine_contact_inside_pair(e, c))
            continue;
        if (c->body == slot->body_a || c->body_b == slot->body_a ||
            (slot->body_b >= 0 && (c->body == slot->body_b || c->body_b == slot->body_b)))
            return true;
    }
    return false;
}

void engine_reduced_islands(Engine *e) {
    if (e->model.planar)
        return;
    for (int s = 0; s < ENGINE_REDUCED_SLOTS; s++) { /* a third body joined: leave */
        EngineReducedSlot *slot = &e->reduced.slot[s];
        int partner, obstacle, ci;
        if (!slot->active)
            continue;
        if (model_of(slot)->keeps_contact) {
            if (third_body_touches(e, slot))
                engine_reduced_leave(e, s, e->data.t);
            continue;
        }
        if (!pair_of_island(e, slot->body_a, &partner, &obstacle, &ci) || partner != slot->body_b ||
            obstacle != slot->obstacle)
            engine_reduced_leave(e, s, e->data.t);
    }
    for (int b = 0; b < e->model.body_count; b++) {
        const EngineBodyData *d = &e->body_data[b];
        if (d->resolver == CONTACT_RESOLVER_REDUCED && d->reduced_slot < 0 && !d->asleep)
            try_enter(e, b);
    }
}

/* Pairs in a reduced slot whose model keeps the contact itself need no narrow phase. */
void engine_reduced_hold_pairs(Engine *e) {
    int pairs[ENGINE_REDUCED_SLOTS][2], count = 0;
    for (int s = 0; s < e->reduced.slot_count; s++) {
        const EngineReducedSlot *slot = &e->reduced.slot[s];
        if (!slot->active || !slot->model || !slot->model->keeps_contact || slot->body_b >= 0 ||
            slot->obstacle < 0)
            continue;
        pairs[count][0] = e->model.bodies[slot->body_a].world_index;
        pairs[count][1] = e->model.obstacles[slot->obstacle].world_index;
        count += pairs[count][0] >= 0 && pairs[count][1] >= 0;
    }
    collision_world_hold_pairs(e->collide.world, (const int(*)[2])pairs, count);
}

/* The integrated state's ranges get every active pair's block (after the free bodies'). */
void engine_reduced_add_ranges(Engine *e) {
    for (int s = 0; s < e->reduced.slot_count; s++) {
        const EngineReducedSlot *slot = &e->reduced.slot[s];
        if (!slot->active)
            continue;
        const StateBlock *blk = &e->model.layout.blocks[slot->block];
        int size =
            e->reduced.model ? e->reduced.model->block_size : engine_reduced_welded()->block_size;
        e->sleep.awake_ranges[2 * e->sleep.awake_range_count] = blk->offset;
        e->sleep.awake_ranges[2 * e->sleep.awake_range_count + 1] = size;
        e->sleep.awake_range_count++;
        e->sleep.awake_state_size += size;
    }
}
