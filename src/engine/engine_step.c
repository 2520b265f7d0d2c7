/* The staged step (STYLE.md 12; MuJoCo's mj_step stages, Box2D v3's b2SolverStage): what
 * engine_advance does, in the order it does it.
 *
 *   COLLIDE    the collision world's update (lock-step) or its newest report (threaded), merged
 *              into the engine's contacts (engine_collide.c)
 *   ISLANDS    awake bodies joined by active contacts (and by near contacts of pairs whose
 *              resolver is not the force law: a time-stepping solver needs them before they
 *              touch); each island takes the resolver its pairs name, the strongest when they
 *              differ (reduced > complementarity > force_law)
 *   REDUCE     pairs of reduced islands enter their pair blocks, and pairs a third body joined
 *              leave them (engine_reduced.c); the awake set is rebuilt after both stages
 *   RESOLVE    complementarity islands: per time step, assembly of M, J and the solve, then the
 *              velocity and position update (engine_complementarity.c)
 *   INTEGRATE  force-law islands: CVODE or RK4 with the laws in the right-hand side, events at
 *              every onset and separation; while an active contact's model asks for a fixed
 *              step (a contact map's sampling period) RK4 takes that step, and the base
 *              integrator takes over again when no such contact is left
 *   COMMIT     a non-finite state or a failed stage puts the last good state back
 *
 * Islands of different resolvers reach the same output instant t_target. Bodies of one
 * resolver's islands are held still while another resolver's stage runs; islands that come into
 * contact during an advance are merged at the next one (one output step of latency, the same
 * as the threaded collision manager's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_internal.h"

/* Near contacts of non-force-law pairs join islands within this distance (m): the collision
 * world reports contacts within its 1 mm margin, and a time-stepping solver must see a contact
 * one step before it closes. */
#define ENGINE_SPECULATIVE_MARGIN 2e-3

static const char *const stage_names[ENGINE_STAGE_COUNT] = {
    [ENGINE_STAGE_COLLIDE] = "collide",     [ENGINE_STAGE_ISLANDS] = "islands",
    [ENGINE_STAGE_REDUCE] = "reduce",       [ENGINE_STAGE_RESOLVE] = "resolve",
    [ENGINE_STAGE_INTEGRATE] = "integrate", [ENGINE_STAGE_COMMIT] = "commit"};
_Static_assert(ENGINE_STAGE_COUNT == 6, "a new stage needs its name above");

const char *engine_stage_name(EngineStage stage) {
    return (int)stage >= 0 && stage < ENGINE_STAGE_COUNT ? stage_names[stage] : "?";
}

IssimStatus engine_islands_init(Engine *e, IssimError *err) {
    size_t n = (size_t)e->model.body_count + 1;
    e->islands.stepped_bodies = calloc(n, sizeof *e->islands.stepped_bodies);
    e->islands.island_of_body = calloc(n, sizeof *e->islands.island_of_body);
    e->islands.scratch = calloc(2 * n, sizeof *e->islands.scratch);
    issim_arena_init(&e->islands.step_scratch);
    if (!e->islands.stepped_bodies || !e->islands.island_of_body || !e->islands.scratch)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for islands");
    return ISSIM_OK;
}

void engine_islands_free(Engine *e) {
    issim_arena_free(&e->islands.step_scratch);
    engine_resolve_pool_free(e);
    free(e->islands.stepped_bodies);
    free(e->islands.island_of_body);
    free(e->islands.scratch);
}

static void join(int *parent, int a, int b) {
    int ra = engine_find_root(parent, a), rb = engine_find_root(parent, b);
    if (ra != rb)
        parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
}

/* Does contact c tie its bodies into one island, and with which resolver? states: every body's
 * state at e->y (engine_fill_states), filled by the first manifold contact that needs it
 * (*filled): a pile asks for thousands of contacts' depths, two body states each. */
static bool contact_joins(const Engine *e, const EngineContact *c, ContactResolverKind *resolver,
                          EngineBodyState *states, bool *filled) {
    *resolver = e->model.pairs[c->pair].params.resolver;
    if (c->active)
        return true;
    if (*resolver == CONTACT_RESOLVER_FORCE_LAW)
        return false;
    ContactKinematics k;
    if (c->kind == CONTACT_MANIFOLD) {
        if (!*filled)
            engine_fill_states(e, e->y, states);
        *filled = true;
        engine_merge_kinematics(e, states, c, &k);
    } else
        engine_contact_kinematics(e, e->y, c, e->data.t, &k, NULL, NULL);
    return k.depth > -engine_speculative_reach(e, &k, ENGINE_SPECULATIVE_MARGIN);
}

/* Reduced pairs need 3D bodies (the pair blocks hold free-body motion): a planar scene
 * resolves such islands by the force laws, once said. */
static ContactResolverKind available(Engine *e, ContactResolverKind r) {
    if (r != CONTACT_RESOLVER_REDUCED || e->reduced.slot_count > 0)
        return r;
    if (!e->reduced.planar_warned) { /* once per engine, not per body and advance */
        issim_log(ISSIM_LOG_WARN, "reduced pairs need a 3D scene: in a planar one the force "
                                  "laws resolve them");
        e->stats.warnings++;
        e->reduced.planar_warned = true;
    }
    return CONTACT_RESOLVER_FORCE_LAW;
}

/* ISLANDS: union-find over the awake bodies, then each island's resolver. */
static void stage_islands(Engine *e) {
    int n = e->model.body_count;
    int *parent = e->islands.scratch, *strongest = e->islands.scratch + n + 1;
    for (int b = 0; b < n; b++) {
        parent[b] = b;
        strongest[b] = CONTACT_RESOLVER_FORCE_LAW;
    }
    EngineBodyState *states = engine_rhs_body_states(e);
    bool states_filled = false;
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        ContactResolverKind r;
        if (engine_contact_frozen(e, c) || !contact_joins(e, c, &r, states, &states_filled))
            continue;
        /* Fixed obstacles never join islands (004 App. E), nor do sleeping bodies: an awake
         * body solves against them held, and their own island stays whole and asleep. */
        bool awake_a = !e->body_data[c->body].asleep;
        bool awake_b = c->body_b >= 0 && !e->body_data[c->body_b].asleep;
        if (awake_a && awake_b)
            join(parent, c->body, c->body_b);
        if (awake_a && (int)r > strongest[c->body])
            strongest[c->body] = (int)r;
        if (awake_b && (int)r > strongest[c->body_b])
            strongest[c->body_b] = (int)r;
    }
    for (int b = 0; b < n; b++) { /* an island's resolver: the strongest of its bodies' */
        int root = engine_find_root(parent, b);
        if (strongest[b] > strongest[root])
            strongest[root] = strongest[b];
    }
    memset(e->stats.islands_by_resolver, 0, sizeof e->stats.islands_by_resolver);
    e->stats.islands = 0;
    e->islands.stepped_count = 0;
    bool changed = false;
    for (int b = 0; b < n; b++) {
        int root = engine_find_root(parent, b);
        ContactResolverKind r = available(e, (ContactResolverKind)strongest[root]);
        e->islands.island_of_body[b] = root;
        if (e->body_data[b].asleep)
            continue; /* keeps the resolver it fell asleep with: it wakes into it */
        if (e->body_data[b].resolver != r) {
            e->body_data[b].resolver = r;
            changed = true;
        }
        if (root == b) {
            e->stats.islands++;
            e->stats.islands_by_resolver[r]++;
        }
        if (r == CONTACT_RESOLVER_COMPLEMENTARITY)
            e->islands.stepped_bodies[e->islands.stepped_count++] = b;
    }
    if (changed) {
        /* Bodies move between the integrator and a time-stepping stage: the integrated vector
         * changes (the same path as bodies falling asleep). */
        engine_invalidate(e, ENGINE_INVALID_SLEEP | ENGINE_INVALID_INTEGRATOR);
    }
}

/* REDUCE: pairs enter and leave their blocks by the resolvers ISLANDS chose; then the awake set
 * and live contacts follow what both stages changed (one rebuild). */
static void stage_reduce(Engine *e) {
    engine_reduced_islands(e);
    engine_refresh_awake(e);
}

void engine_update_fixed_step(Engine *e) {
    double h = 0.0;
    for (int li = 0; li < e->sleep.live_contact_count; li++) {
        const EngineContact *c = &e->contacts[e->sleep.live_contacts[li]];
        if (!c->active || !e->body_data[c->body].integrated)
            continue;
        double fixed = engine_contact_model(e, c)->fixed_step(engine_contact_params(e, c));
        if (fixed > 0.0 && (h == 0.0 || fixed < h))
            h = fixed;
    }
    if (h > 0.0 && h != e->data.fixed_step)
        e->data.fixed_anchor = e->data.t;
    e->data.fixed_step = h;
    e->integration.fixed_step_dirty = false;
}

/* INTEGRATE: the base integrator, and RK4 at the models' step while they ask for one. */
static IssimStatus stage_integrate(Engine *e, double t_target, IssimError *err) {
    while (e->data.t < t_target) {
        if (e->integration.fixed_step_dirty)
            engine_update_fixed_step(e);
        IssimStatus s;
        if (e->data.fixed_step > 0.0) {
            uint64_t before = e->stats.steps;
            bool base_rk4 = e->model.integrator_kind == INTEGRATOR_RK4;
            s = integrator_rk4_advance(e, t_target, e->data.fixed_step, !base_rk4, err);
            e->stats.fixed_steps += e->stats.steps - before;
            if (!base_rk4)
                /* CVODE restarts where the fixed steps stopped */
                engine_invalidate(e, ENGINE_INVALID_INTEGRATOR);
        } else if (e->model.integrator_kind == INTEGRATOR_RK4) {
            s = integrator_rk4_advance(e, t_target, e->model.dt, false, err);
        } else {
            s = integrator_cvode_advance(e, t_target, err);
        }
        if (s != ISSIM_OK)
            return s;
        if (e->sleep.awake_state_size == 0)
            break; /* everything fell asleep */
    }
    e->data.t = t_target;
    return ISSIM_OK;
}

static bool state_finite(const Engine *e) {
    for (int i = 0; i < e->model.layout.state_size; i++)
        if (!isfinite(e->y[i]))
            return false;
    return true;
}

static double stage_clock(const Engine *e) {
    if (!e->model.options.profile_stages)
        return 0.0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void stage_done(Engine *e, EngineStage stage, double *since) {
    if (!e->model.options.profile_stages)
        return;
    double now = stage_clock(e);
    e->stats.stage_seconds[stage] += now - *since;
    *since = now;
}

IssimStatus engine_advance(Engine *e, double t_target, IssimError *err) {
    if (!(t_target > e->data.t))
        return issim_error_set(err, ISSIM_ERR_STATE, "cannot advance from t = %g to t = %g",
                               e->data.t, t_target);
    double clock = stage_clock(e);
    /* COLLIDE. With every body asleep and the world updated since the last motion, nothing can
     * touch anything new: the update is skipped too. (Asked of the bodies, not of the last
     * advance's stepped list, which a checkpoint does not carry.) */
    if (e->sleep.awake_state_size > 0 || e->stats.awake_bodies > 0 || e->data.collision_stale) {
        e->collide.manifold_energy.span = t_target - e->data.t;
        engine_collide(e);
        e->data.collision_stale = false;
    }
    stage_done(e, ENGINE_STAGE_COLLIDE, &clock);
    stage_islands(e);
    stage_done(e, ENGINE_STAGE_ISLANDS, &clock);
    stage_reduce(e);
    stage_done(e, ENGINE_STAGE_REDUCE, &clock);
    if (e->sleep.awake_state_size == 0 && e->islands.stepped_count == 0) {
        /* Everything is in equilibrium: nothing moves until an edit wakes a body. */
        e->data.t = t_target;
        return ISSIM_OK;
    }
    e->data.collision_stale = true; /* bodies move in this advance */
    double t_start = e->data.t;
    memcpy(e->y_saved, e->y, sizeof(double) * (size_t)e->model.layout.state_size);
    IssimStatus s = ISSIM_OK;
    if (e->islands.stepped_count > 0)
        s = engine_resolve_complementarity(e, t_start, t_target, err);
    stage_done(e, ENGINE_STAGE_RESOLVE, &clock);
    if (s == ISSIM_OK && e->sleep.awake_state_size > 0)
        s = stage_integrate(e, t_target, err);
    else if (s == ISSIM_OK)
        e->data.t = t_target;
    stage_done(e, ENGINE_STAGE_INTEGRATE, &clock);
    if (s == ISSIM_OK && e->islands.stepped_count > 0) {
        /* The time-stepped islands' contacts begin and end where their solver left them. */
        engine_update_active_set(e, e->data.t, NULL);
    }
    if (s == ISSIM_OK && !state_finite(e))
        s = issim_error_set(err, ISSIM_ERR_NUMERIC, "state became non-finite at t = %.9g s",
                            e->data.t);
    if (s != ISSIM_OK) {
        /* Keep the last good state: the caller may edit and carry on. */
        e->data.t = t_start;
        memcpy(e->y, e->y_saved, sizeof(double) * (size_t)e->model.layout.state_size);
        engine_invalidate(e, ENGINE_INVALID_INTEGRATOR);
        e->stats.warnings += s != ISSIM_ERR_CANCELLED; /* a stop asked for is no warning */
    } else if (e->islands.stepped_count > 0)
        engine_update_stepped_sleep(e, e->data.t); /* time-stepped islands settle and sleep */
    stage_done(e, ENGINE_STAGE_COMMIT, &clock);
    return s;
}

IssimStatus engine_step(Engine *e, IssimError *err) {
    return engine_advance(e, e->data.t + e->model.dt, err);
}

void engine_set_complementarity_solver(Engine *e, const EngineComplementaritySolver *solver,
                                       void *user) {
    e->islands.complementarity = solver;
    e->islands.complementarity_user = user;
    engine_invalidate(e, ENGINE_INVALID_REPLAY);
    /* another solver, other impulses: as an edit of the pairs' solver, every body wakes */
    engine_wake_all(e, e->data.t);
    engine_refresh_awake(e);
}
