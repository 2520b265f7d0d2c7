/* Building the engine's model from the thing database (engine_create calls these in order):
 * materials, bodies and obstacles, shapes, contact pairs and their parameters, the state layout,
 * the variables, the scene's initial state, the checks of time scales against the step, and the
 * integrator. Edits re-read the live parameters through engine_refresh_params. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

static int material_index(Engine *e, const char *name) {
    for (int i = 0; i < e->model.material_count; i++)
        if (strcmp(e->model.materials[i], name) == 0)
            return i;
    issim_strlcpy(e->model.materials[e->model.material_count], name, PROP_STRING_MAX);
    return e->model.material_count++;
}

static int count_kind(const ThingDb *db, ThingKind kind) {
    int n = 0;
    for (int i = 0; i < thingdb_count(db); i++)
        if (thing_kind(db, thingdb_at(db, i)) == kind)
            n++;
    return n;
}

/* Universe properties that may change while running. */
static void read_universe_live(Engine *e, ThingId universe) {
    e->model.gravity = thing_vec3(e->model.db, universe, "gravity");
    e->sleep.policy = (SleepPolicy)thing_enum(e->model.db, universe, "sleep");
    if (e->model.planar)
        e->model.gravity.y = 0.0;
}

/* Universe properties fixed during a run (they shape the state layout and the integrator):
 * read once at build, so an edit can never swap the integrator under a running engine. */
static void read_universe(Engine *e, ThingId universe) {
    const ThingDb *db = e->model.db;
    e->model.planar = thing_bool(db, universe, "planar");
    e->model.collision_thread = (CollisionThreadPolicy)thing_enum(db, universe, "collision_thread");
    e->model.integrator_kind = e->model.options.integrator >= 0
                                   ? (IntegratorKind)e->model.options.integrator
                                   : (IntegratorKind)thing_enum(db, universe, "integrator");
    e->model.dt = e->model.options.dt > 0 ? e->model.options.dt : thing_real(db, universe, "dt");
    e->model.rtol =
        e->model.options.rtol > 0 ? e->model.options.rtol : thing_real(db, universe, "rtol");
    e->model.atol =
        e->model.options.atol > 0 ? e->model.options.atol : thing_real(db, universe, "atol");
    double max_step = thing_real(db, universe, "max_step");
    e->model.max_step = max_step > 0 ? max_step : e->model.dt;
    read_universe_live(e, universe);
}

static void read_body(Engine *e, EngineBody *b) {
    const ThingDb *db = e->model.db;
    b->mass = thing_real(db, b->thing, "mass");
    b->inertia = thing_vec3(db, b->thing, "inertia");
    b->force = thing_vec3(db, b->thing, "force");
    b->torque = thing_vec3(db, b->thing, "torque");
    b->cycle_force = thing_vec3(db, b->thing, "force_cycle");
    b->cycle_period = thing_real(db, b->thing, "force_cycle_period");
    if (e->model.planar) {
        b->cycle_force.y = 0.0;
        b->force.y = 0.0;
        b->torque = vec3(0.0, b->torque.y, 0.0);
    }
}

static IssimStatus read_obstacle(Engine *e, EngineObstacle *o, IssimError *err) {
    if (thing_enum(e->model.db, o->thing, "shape") != OBSTACLE_SHAPE_PLANE)
        return ISSIM_OK; /* boxes and meshes: engine_build_shapes */
    Vec3 n = thing_vec3(e->model.db, o->thing, "normal");
    if (!(vec3_norm(n) > 1e-12))
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s.normal must not be zero",
                               thing_name(e->model.db, o->thing));
    o->normal = vec3_normalize(n);
    o->offset = thing_real(e->model.db, o->thing, "offset");
    return ISSIM_OK;
}

static IssimStatus build_things(Engine *e, IssimError *err) {
    const ThingDb *db = e->model.db;
    int things = thingdb_count(db);
    e->model.body_count = count_kind(db, THING_RIGID_BODY);
    e->model.obstacle_count = count_kind(db, THING_FIXED_OBSTACLE);
    e->model.pair_count = count_kind(db, THING_CONTACT_PAIR);
    e->model.bodies = calloc((size_t)e->model.body_count + 1, sizeof *e->model.bodies);
    e->body_data = calloc((size_t)e->model.body_count + 1, sizeof *e->body_data);
    e->model.obstacles = calloc((size_t)e->model.obstacle_count + 1, sizeof *e->model.obstacles);
    e->model.pairs = calloc((size_t)e->model.pair_count + 1, sizeof *e->model.pairs);
    e->model.materials = calloc(
        (size_t)(e->model.body_count + e->model.obstacle_count + 2 * e->model.pair_count + 1),
        sizeof *e->model.materials);
    if (!e->model.bodies || !e->body_data || !e->model.obstacles || !e->model.pairs ||
        !e->model.materials)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory building the engine");
    int nb = 0, no = 0, np = 0;
    for (int i = 0; i < things; i++) {
        ThingId id = thingdb_at(db, i);
        switch (thing_kind(db, id)) {
        case THING_RIGID_BODY: {
            EngineBody *b = &e->model.bodies[nb++];
            b->thing = id;
            thing_path(db, id, b->name, sizeof b->name);
            read_body(e, b);
            b->material = material_index(e, thing_string(db, id, "material"));
            const PropValue *v = thing_get(db, id, "vertices");
            b->vertex_count = v->point_count;
            memcpy(b->vertices, v->points, sizeof(Vec3) * (size_t)v->point_count);
            b->radius = thing_real(db, id, "radius");
            break;
        }
        case THING_FIXED_OBSTACLE: {
            EngineObstacle *o = &e->model.obstacles[no++];
            o->thing = id;
            IssimStatus s = read_obstacle(e, o, err);
            if (s != ISSIM_OK)
                return s;
            o->material = material_index(e, thing_string(db, id, "material"));
            break;
        }
        case THING_CONTACT_PAIR: {
            EnginePair *p = &e->model.pairs[np++];
            p->thing = id;
            p->material_a = material_index(e, thing_string(db, id, "material_a"));
            p->material_b = material_index(e, thing_string(db, id, "material_b"));
            break;
        }
        default:
            break;
        }
    }
    return ISSIM_OK;
}

int engine_find_pair(const Engine *e, int ma, int mb) {
    for (int i = 0; i < e->model.pair_count; i++) {
        const EnginePair *p = &e->model.pairs[i];
        if ((p->material_a == ma && p->material_b == mb) ||
            (p->material_a == mb && p->material_b == ma))
            return i;
    }
    return -1;
}

/* The parameters of one contact: the damping derived from the restitution uses the pair's
 * reduced mass (a body against a fixed obstacle: the body's mass, as V1 states it for the bar),
 * shared among the points of a shaped pair's patch. */
IssimStatus engine_contact_bind_params(Engine *e, EngineContact *c, IssimError *err) {
    double m = e->model.bodies[c->body].mass;
    if (c->kind == CONTACT_MANIFOLD && c->body_b >= 0) {
        double mb = e->model.bodies[c->body_b].mass;
        m = m * mb / (m + mb);
    }
    if (c->kind == CONTACT_MANIFOLD && c->patch_points > 1)
        m /= c->patch_points; /* restitution per patch (engine_manifold_energy.c) */
    /* From the pair's parameters (read from the database once per build or edit), not from the
     * database: the collision manager creates contacts every step in a crowded scene. */
    ContactParams p = e->model.pairs[c->pair].params;
    engine_contact_maps(e, c, &p);
    if (p.damping_from_restitution) {
        if (!(m > 0.0) || !isfinite(m))
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "cannot derive damping from restitution without a mass");
        p.damping = contact_damping_for_restitution(p.stiffness, m, p.restitution);
    }
    int set = engine_param_set_find_or_add(&e->param_sets, c->pair, &p);
    if (set < 0)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for contact parameters");
    c->param_set = set;
    return ISSIM_OK;
}

static IssimStatus build_contact_params(Engine *e, IssimError *err) {
    for (int i = 0; i < e->model.pair_count; i++) {
        EnginePair *p = &e->model.pairs[i];
        IssimStatus s = contact_params_from_thing(e->model.db, p->thing, 1.0, &p->params, err);
        if (s != ISSIM_OK)
            return s;
        p->model = contact_model_class(p->params.model);
    }
    engine_param_sets_clear(&e->param_sets);
    for (int ci = 0; ci < e->contact_count; ci++) {
        IssimStatus s = engine_contact_bind_params(e, &e->contacts[ci], err);
        if (s != ISSIM_OK)
            return s;
    }
    return ISSIM_OK;
}

static IssimStatus build_contacts(Engine *e, IssimError *err) {
    int n = 0;
    for (int b = 0; b < e->model.body_count; b++)
        n += e->model.bodies[b].vertex_count * e->model.obstacle_count;
    e->contact_capacity = n + 16;
    e->contacts = calloc((size_t)e->contact_capacity, sizeof *e->contacts);
    e->collide.spare = calloc((size_t)e->contact_capacity, sizeof *e->contacts); /* the merge's */
    if (!e->contacts || !e->collide.spare)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory building contacts");
    for (int b = 0; b < e->model.body_count; b++) {
        if (e->model.bodies[b].shaped)
            continue;
        for (int o = 0; o < e->model.obstacle_count; o++) {
            if (e->model.obstacles[o].shape.kind != SHAPE_PLANE)
                continue; /* contact vertices meet planes only */
            int pair =
                engine_find_pair(e, e->model.bodies[b].material, e->model.obstacles[o].material);
            if (pair < 0) {
                issim_log(ISSIM_LOG_WARN,
                          "no contact model between materials '%s' (%s) and '%s' (%s): they "
                          "pass through each other",
                          e->model.materials[e->model.bodies[b].material], e->model.bodies[b].name,
                          e->model.materials[e->model.obstacles[o].material],
                          thing_name(e->model.db, e->model.obstacles[o].thing));
                e->stats.warnings++;
                continue;
            }
            for (int v = 0; v < e->model.bodies[b].vertex_count; v++)
                e->contacts[e->contact_count++] = (EngineContact){.kind = CONTACT_VERTEX_PLANE,
                                                                  .body = b,
                                                                  .vertex = v,
                                                                  .obstacle = o,
                                                                  .pair = pair,
                                                                  .body_b = -1};
        }
    }
    e->vertex_contact_count = e->contact_count;
    return build_contact_params(e, err);
}

/* The integration scratch's named parts (EngineIntegration), in allocation order. */
static void carve_integration_scratch(EngineIntegration *in, int state_size, int body_count) {
    double *at = in->scratch;
    for (int k = 0; k < 4; k++, at += state_size)
        in->stage[k] = at;
    in->stage_y = at;
    in->y_next = at + state_size;
    in->forces = (Vec3 *)(at + 2 * (size_t)state_size);
    in->torques = in->forces + body_count;
    in->body_states = (EngineBodyState *)(in->torques + body_count);
}

static IssimStatus build_layout(Engine *e, IssimError *err) {
    e->reduced.slot_count = e->model.planar ? 0 : ENGINE_REDUCED_SLOTS;
    e->model.layout.blocks = calloc((size_t)(e->model.body_count + e->reduced.slot_count) + 1,
                                    sizeof *e->model.layout.blocks);
    if (!e->model.layout.blocks)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    int offset = 0, voffset = 0;
    for (int b = 0; b < e->model.body_count; b++) {
        StateBlock *blk = &e->model.layout.blocks[e->model.layout.block_count];
        blk->kind = e->model.planar ? BLOCK_PLANAR_BODY : BLOCK_FREE_BODY;
        blk->size = e->model.planar ? PLANAR_BODY_SIZE : FREE_BODY_SIZE;
        blk->offset = offset;
        blk->body = b;
        e->model.bodies[b].block = e->model.layout.block_count++;
        e->model.bodies[b].velocity_offset = voffset;
        e->body_data[b].reduced_slot = -1;
        offset += blk->size;
        voffset += e->model.planar ? 3 : 6;
    }
    for (int s = 0; s < e->reduced.slot_count; s++) { /* reserved for reduced pairs */
        StateBlock *blk = &e->model.layout.blocks[e->model.layout.block_count];
        *blk = (StateBlock){.kind = BLOCK_CONTACT_PAIR,
                            .offset = offset,
                            .size = ENGINE_REDUCED_BLOCK_MAX,
                            .body = -1};
        e->reduced.slot[s].block = e->model.layout.block_count++;
        offset += ENGINE_REDUCED_BLOCK_MAX;
    }
    e->model.layout.state_size = offset;
    e->model.layout.velocity_dim = voffset;
    size_t n = (size_t)offset + 1;
    e->y = calloc(n, sizeof(double));
    e->y_saved = calloc(n, sizeof(double));
    /* RK4 stages and y_next (6n), the loads (6 per body), the right-hand side's body states */
    e->integration.scratch = calloc(
        6 * n + (6 + ENGINE_BODY_STATE_DOUBLES) * (size_t)e->model.body_count + 6, sizeof(double));
    if (!e->y || !e->y_saved || !e->integration.scratch)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    carve_integration_scratch(&e->integration, offset, e->model.body_count);
    return ISSIM_OK;
}

static EngineBodyState body_state_from_thing(const ThingDb *db, ThingId id) {
    return (EngineBodyState){.pos = thing_vec3(db, id, "pos"),
                             .orient = thing_quat(db, id, "orient"),
                             .vel = thing_vec3(db, id, "vel"),
                             .angvel = thing_vec3(db, id, "angvel")};
}

static IssimStatus build_vars(Engine *e, IssimError *err) {
    static const char *const body_vars[] = {
        "pos.x", "pos.y", "pos.z", "orient.w", "orient.x", "orient.y", "orient.z",
        "vel.x", "vel.y", "vel.z", "angvel.x", "angvel.y", "angvel.z"};
    static const char *const body_units[] = {"m",   "m",   "m",   "",      "",      "",     "",
                                             "m/s", "m/s", "m/s", "rad/s", "rad/s", "rad/s"};
    static const char *const energy_vars[] = {"kinetic", "potential", "elastic", "total"};
    _Static_assert(sizeof body_vars / sizeof body_vars[0] == ENGINE_FRAME_BODY_VALUES,
                   "a name for every value of a body's frame");
    _Static_assert(sizeof energy_vars / sizeof energy_vars[0] == ENGINE_FRAME_ENERGY_VALUES,
                   "a name for every energy of a frame");
    e->model.vars.count =
        ENGINE_FRAME_BODY_VALUES * e->model.body_count + ENGINE_FRAME_ENERGY_VALUES;
    e->model.vars.names = calloc((size_t)e->model.vars.count, sizeof *e->model.vars.names);
    e->model.vars.units = calloc((size_t)e->model.vars.count, sizeof *e->model.vars.units);
    if (!e->model.vars.names || !e->model.vars.units)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    int v = 0;
    for (int b = 0; b < e->model.body_count; b++) {
        for (int i = 0; i < ENGINE_FRAME_BODY_VALUES; i++, v++) {
            snprintf(e->model.vars.names[v], sizeof e->model.vars.names[v], "%s.%s",
                     e->model.bodies[b].name, body_vars[i]);
            e->model.vars.units[v] = body_units[i];
        }
    }
    for (int i = 0; i < ENGINE_FRAME_ENERGY_VALUES; i++, v++) {
        snprintf(e->model.vars.names[v], sizeof e->model.vars.names[v], "universe.energy.%s",
                 energy_vars[i]);
        e->model.vars.units[v] = "J";
    }
    return ISSIM_OK;
}

/* Warns when a fixed step is too coarse for a contact's time scale sqrt(m/k): RK4 needs about
 * ten steps per 1/omega to resolve a contact's half period (pi/omega) with a few percent
 * error in the restitution. A model that needs a fixed step no longer switches the whole run
 * to RK4: the force-law stage takes that step only while such a contact is active
 * (engine_step.c), and the base integrator the rest of the time. */
/* Internal friction's phase ramp is a damper of rate 1 / (2 tau) per contact near rest
 * (internal_friction.c): under one RK4 step, a body pressed by a few contacts trembles in a
 * damped limit cycle instead of coming to rest (docs/performance.md, the internal-friction
 * pile: half a step kept 37 of 200 bodies awake). */
static void check_phase_ramps(Engine *e) {
    for (int i = 0; i < e->model.pair_count; i++) {
        const ContactParams *cp = &e->model.pairs[i].params;
        if (cp->model != CONTACT_MODEL_INTERNAL_FRICTION || !(cp->phase_ramp_time > 0.0) ||
            cp->phase_ramp_time >= e->model.dt)
            continue;
        issim_log(ISSIM_LOG_WARN,
                  "phase_ramp_time %g s of contact %s is under the RK4 step %g s: bodies on "
                  "several contacts will tremble; use phase_ramp_time >= %g s",
                  cp->phase_ramp_time, thing_name(e->model.db, e->model.pairs[i].thing),
                  e->model.dt, e->model.dt);
        e->stats.warnings++;
    }
}

/* The published endpoint rule (000 eq. 3.20) holds each sample's force over the next step, so it
 * lags the indentation and the bounce gains energy: a flat map's restitution is about
 * 1 + 0.79 omega T (docs/contact-models.md, "Quadrature"). A user choosing it for the seed's
 * comparison must know, since the README's promise that maps never gain holds for the trapezoid
 * rule only. */
static void check_map_quadrature(Engine *e) {
    for (int i = 0; i < e->model.pair_count; i++) {
        const ContactParams *cp = &e->model.pairs[i].params;
        if (cp->model != CONTACT_MODEL_CONTACT_MAP || cp->map_rule != CONTACT_MAP_ENDPOINT)
            continue;
        issim_log(ISSIM_LOG_WARN,
                  "contact %s uses map_quadrature = \"endpoint\": the published first-order rule "
                  "gains energy (a flat map's restitution is about 1 + 0.79 sqrt(k / m) T, 1.005 "
                  "for 000 4.2's spheres at T = 1e-4 s); use \"trapezoid\" for a passive contact",
                  thing_name(e->model.db, e->model.pairs[i].thing));
        e->stats.warnings++;
    }
}

static void check_time_scales(Engine *e) {
    if (e->model.integrator_kind != INTEGRATOR_RK4)
        return;
    check_phase_ramps(e);
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        const EnginePair *p = &e->model.pairs[c->pair];
        double fixed = p->model->fixed_step(engine_contact_params(e, c));
        double h = fixed > 0.0 ? fixed : e->model.dt;
        double tau =
            p->model->time_scale(engine_contact_params(e, c), e->model.bodies[c->body].mass);
        if (h > 0.1 * tau) {
            issim_log(ISSIM_LOG_WARN,
                      "fixed step %g s is too coarse for contact %s on %s (time scale "
                      "sqrt(m/k) = %.3g s): use dt <= %.2g s",
                      h, thing_name(e->model.db, p->thing), e->model.bodies[c->body].name, tau,
                      0.1 * tau);
            e->stats.warnings++;
            return; /* once per build */
        }
    }
}

IssimStatus engine_create_integrator(Engine *e, IssimError *err) {
    if (e->integration.cvode) {
        integrator_cvode_destroy(e->integration.cvode);
        e->integration.cvode = NULL;
    }
    if (e->model.body_count == 0)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "the scene has no body: nothing to simulate (add a thing of kind "
                               "\"body\", docs/scene-format.md)");
    if (e->model.integrator_kind != INTEGRATOR_RK4) {
        e->integration.cvode = integrator_cvode_create(e, err);
        if (!e->integration.cvode)
            return err ? err->status : ISSIM_ERR_NUMERIC;
    }
    engine_invalidate(e, ENGINE_INVALID_INTEGRATOR);
    return ISSIM_OK;
}

/* Reads the scene into e: the universe, things, shapes, contact pairs, layout and variables. */
IssimStatus engine_build_model(Engine *e, ThingId universe, IssimError *err) {
    read_universe(e, universe);
    IssimStatus s = build_things(e, err);
    s = s == ISSIM_OK ? engine_build_shapes(e, err) : s;
    s = s == ISSIM_OK ? build_contacts(e, err) : s;
    s = s == ISSIM_OK ? build_layout(e, err) : s;
    return s == ISSIM_OK ? build_vars(e, err) : s;
}

/* The bodies' poses and velocities as the scene gives them, into the state vector. */
void engine_store_scene_state(Engine *e) {
    for (int b = 0; b < e->model.body_count; b++) {
        EngineBodyState st = body_state_from_thing(e->model.db, e->model.bodies[b].thing);
        engine_block_store(e, e->y, b, &st);
    }
}

/* Warnings for a step too coarse for the scene's contact time scales and map quadratures. */
void engine_check_scales(Engine *e) {
    check_time_scales(e);
    check_map_quadrature(e);
}

/* Re-reads every parameter that may change while running. */
IssimStatus engine_refresh_params(Engine *e, IssimError *err) {
    read_universe_live(e, thingdb_find_kind(e->model.db, THING_UNIVERSE));
    for (int b = 0; b < e->model.body_count; b++)
        read_body(e, &e->model.bodies[b]);
    for (int o = 0; o < e->model.obstacle_count; o++) {
        IssimStatus s = read_obstacle(e, &e->model.obstacles[o], err);
        if (s != ISSIM_OK)
            return s;
    }
    return build_contact_params(e, err);
}

static uint64_t digest_bytes(uint64_t h, const void *bytes, size_t n) {
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3u; /* FNV-1a */
    return h;
}

uint64_t engine_model_digest(const Engine *e) {
    const EngineModel *m = &e->model;
    uint64_t h = digest_bytes(0xcbf29ce484222325u, m, sizeof *m);
    h = digest_bytes(h, m->bodies, sizeof *m->bodies * (size_t)m->body_count);
    h = digest_bytes(h, m->obstacles, sizeof *m->obstacles * (size_t)m->obstacle_count);
    h = digest_bytes(h, m->pairs, sizeof *m->pairs * (size_t)m->pair_count);
    h = digest_bytes(h, m->materials, sizeof *m->materials * (size_t)m->material_count);
    h = digest_bytes(h, m->layout.blocks, sizeof *m->layout.blocks * (size_t)m->layout.block_count);
    return digest_bytes(h, m->vars.names, sizeof *m->vars.names * (size_t)m->vars.count);
}
