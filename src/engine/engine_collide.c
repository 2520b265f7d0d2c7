/* Bodies with collision shapes: building the shapes from the thing database and running the
 * collision world (the collision manager of 000 App. B.4.3) synchronously, as lock-step mode
 * does.
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
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine_internal.h"
#include "issim/task_pool.h"

/* Segments per fan triangle of a smooth surface's tessellation for collision (each patch is a
 * fan of triangles from its centre, smooth_surface_tessellate): at most 8, and fewer for surfaces
 * of many patches, so the samples stay near SMOOTH_COLLISION_SAMPLES (GJK's support search is
 * linear in the hull's vertices). The facets' gap to the surface, h^2 / 8R, is 6.5e-5 m for the
 * rattleback (h = 3.75 cm along its 2.7 m radius) and 2e-5 m for the bowl (one segment per fan
 * triangle of its 206 patches), well inside the collision margin. */
enum { SMOOTH_COLLISION_SEGMENTS = 8, SMOOTH_COLLISION_SAMPLES = 1500 };

static int collision_segments(const SmoothSurface *surface) {
    int fans = 0;
    for (int p = 0; p < smooth_surface_patch_count(surface); p++)
        fans += smooth_surface_domain(surface, p)->count;
    int k = SMOOTH_COLLISION_SEGMENTS;
    while (k > 1 && fans * (k + 1) * (k + 2) / 2 > SMOOTH_COLLISION_SAMPLES)
        k--;
    return k;
}
/* A flat smooth obstacle collides as a slab this thick below its surface (a convex hull is far
 * cheaper to test than the tessellation's triangles). */
static const double SMOOTH_SLAB_THICKNESS = 0.02;

/* A relative asset path is tried against the working directory, then the scene's folder, then
 * its parent (so "assets/x.obj" in scenes/y.lua works from anywhere). Returns the first that
 * exists, or the path as given (the loader then names it in its error). */
const char *engine_asset_path(const Engine *e, const char *path, char *buf, size_t size) {
    if (path[0] == '/' || access(path, R_OK) == 0 || !e->options.asset_dir)
        return path;
    const char *prefixes[] = {"", "/.."};
    for (int i = 0; i < 2; i++) {
        snprintf(buf, size, "%s%s/%s", e->options.asset_dir, prefixes[i], path);
        if (access(buf, R_OK) == 0)
            return buf;
    }
    return path;
}

/* The smooth surface the surface_* properties describe (002; issim/surface.h). */
static SmoothSurface *thing_surface(const Engine *e, ThingId thing, const char *name,
                                    IssimError *err) {
    const ThingDb *db = e->db;
    const PropValue *points = thing_get(db, thing, "surface_points");
    char resolved[1024];
    const char *file = thing_string(db, thing, "surface_file");
    if (file[0])
        file = engine_asset_path(e, file, resolved, sizeof resolved);
    return smooth_surface_create(
        name, points->points, points->point_count, file, thing_vec3(db, thing, "surface_scale"),
        thing_vec3(db, thing, "surface_offset"), (int)thing_int(db, thing, "surface_levels"),
        (SurfaceExtraordinary)thing_enum(db, thing, "surface_extraordinary"), err);
}

/* A smooth body collides as the convex hull of its tessellation (its vertices lie on the
 * surface), so the collision manager finds the contacts that smooth contact evolution starts
 * from. */
static IssimStatus smooth_body_shape(Engine *e, EngineBody *b, IssimError *err) {
    b->surface = thing_surface(e, b->thing, b->name, err);
    if (!b->surface)
        return err ? err->status : ISSIM_ERR_INVALID;
    SurfaceTessellation t;
    IssimStatus status =
        smooth_surface_tessellate(b->surface, collision_segments(b->surface), &t, err);
    if (status != ISSIM_OK)
        return status;
    IssimError sub = {0};
    b->hull = hull_create(t.vertices, t.vertex_count, &sub);
    surface_tessellation_free(&t);
    if (!b->hull)
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s: the hull of its surface: %s", b->name,
                               sub.message);
    b->shape = shape_hull(b->hull);
    return ISSIM_OK;
}

static IssimStatus body_shape(Engine *e, EngineBody *b, IssimError *err) {
    const ThingDb *db = e->db;
    BodyShape kind = (BodyShape)thing_enum(db, b->thing, "shape");
    double radius = thing_real(db, b->thing, "radius");
    b->shaped = kind != BODY_SHAPE_POINTS;
    switch (kind) {
    case BODY_SHAPE_POINTS:
        return ISSIM_OK;
    case BODY_SHAPE_SPHERE:
    case BODY_SHAPE_CAPSULE:
        if (!(radius > 0))
            return issim_error_set(err, ISSIM_ERR_INVALID, "%s: a %s needs radius > 0", b->name,
                                   body_shape_name(kind));
        b->shape = kind == BODY_SHAPE_SPHERE
                       ? shape_sphere(radius)
                       : shape_capsule(radius, thing_real(db, b->thing, "half_length"));
        return ISSIM_OK;
    case BODY_SHAPE_BOX:
        b->shape = shape_box(thing_vec3(db, b->thing, "half_extents"));
        return ISSIM_OK;
    case BODY_SHAPE_HULL: {
        const char *path = thing_string(db, b->thing, "hull_file");
        /* An empty path would resolve to the asset folder itself and fail as a read error. */
        if (!path[0])
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "%s: hull_file is required for shape \"%s\"", b->name,
                                   body_shape_name(BODY_SHAPE_HULL));
        IssimError sub = {0};
        char resolved[1024];
        b->hull = hull_load_obj(engine_asset_path(e, path, resolved, sizeof resolved), &sub);
        if (!b->hull)
            return issim_error_set(err, ISSIM_ERR_INVALID, "%s.hull_file: %s", b->name,
                                   sub.message);
        b->shape = shape_hull(b->hull);
        return ISSIM_OK;
    }
    case BODY_SHAPE_SMOOTH:
        return smooth_body_shape(e, b, err);
    case BODY_SHAPE_POLYGON: {
        const PropValue *v = thing_get(db, b->thing, "polygon");
        if (v->point_count < 3 || v->point_count > SHAPE_POLYGON_MAX)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "%s.polygon needs 3 to %d points, not %d", b->name,
                                   SHAPE_POLYGON_MAX, v->point_count);
        b->shape = shape_polygon(v->points, v->point_count);
        return ISSIM_OK;
    }
    case BODY_SHAPE_COUNT:
        break;
    }
    return issim_error_set(err, ISSIM_ERR_INVALID, "%s: unknown shape", b->name);
}

/* Every vertex of the tessellation on the plane of its first vertex and normal. */
static bool flat_tessellation(const SurfaceTessellation *t) {
    Vec3 n = t->normals[0], p = t->vertices[0];
    for (int i = 1; i < t->vertex_count; i++)
        if (fabs(vec3_dot(vec3_sub(t->vertices[i], p), n)) > 1e-12 ||
            vec3_norm(vec3_sub(t->normals[i], n)) > 1e-12)
            return false;
    return true;
}

static Hull *slab_hull(const SurfaceTessellation *t, IssimError *err) {
    Vec3 *points = malloc(sizeof *points * 2 * (size_t)t->vertex_count);
    if (!points) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < t->vertex_count; i++) {
        points[2 * i] = t->vertices[i];
        points[2 * i + 1] = vec3_mad(t->vertices[i], -SMOOTH_SLAB_THICKNESS, t->normals[0]);
    }
    Hull *hull = hull_create(points, 2 * t->vertex_count, err);
    free(points);
    return hull;
}

/* A smooth obstacle collides as its tessellation, a static triangle mesh, or a slab when flat. */
static IssimStatus smooth_obstacle_shape(Engine *e, EngineObstacle *o, const char *name,
                                         IssimError *err) {
    o->surface = thing_surface(e, o->thing, name, err);
    if (!o->surface)
        return err ? err->status : ISSIM_ERR_INVALID;
    SurfaceTessellation t;
    IssimStatus status =
        smooth_surface_tessellate(o->surface, collision_segments(o->surface), &t, err);
    if (status != ISSIM_OK)
        return status;
    IssimError sub = {0};
    if (flat_tessellation(&t)) {
        o->hull = slab_hull(&t, &sub);
        surface_tessellation_free(&t);
        if (!o->hull)
            return issim_error_set(err, ISSIM_ERR_INVALID, "%s: the slab under its surface: %s",
                                   name, sub.message);
        o->shape = shape_hull(o->hull);
        return ISSIM_OK;
    }
    o->mesh = trimesh_create(t.vertices, t.vertex_count, (const int(*)[3])t.triangles,
                             t.triangle_count, &sub);
    surface_tessellation_free(&t);
    if (!o->mesh)
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s: the mesh of its surface: %s", name,
                               sub.message);
    o->shape = shape_mesh(o->mesh);
    return ISSIM_OK;
}

static IssimStatus obstacle_shape(Engine *e, EngineObstacle *o, IssimError *err) {
    const ThingDb *db = e->db;
    const char *name = thing_name(db, o->thing);
    ObstacleShape kind = (ObstacleShape)thing_enum(db, o->thing, "shape");
    o->pose = pose_identity();
    if (kind == OBSTACLE_SHAPE_PLANE) {
        o->shape = shape_plane(o->normal, o->offset);
        return ISSIM_OK;
    }
    o->pose = (Pose){thing_vec3(db, o->thing, "pos"), thing_quat(db, o->thing, "orient")};
    if (kind == OBSTACLE_SHAPE_BOX) {
        o->shape = shape_box(thing_vec3(db, o->thing, "half_extents"));
        return ISSIM_OK;
    }
    if (kind == OBSTACLE_SHAPE_SMOOTH)
        return smooth_obstacle_shape(e, o, name, err);
    const char *path = thing_string(db, o->thing, "mesh_file");
    if (!path[0])
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s: mesh_file is required for shape \"%s\"",
                               name, obstacle_shape_name(OBSTACLE_SHAPE_MESH));
    IssimError sub = {0};
    char resolved[1024];
    o->mesh = trimesh_load_obj(engine_asset_path(e, path, resolved, sizeof resolved), &sub);
    if (!o->mesh)
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s.mesh_file: %s", name, sub.message);
    o->shape = shape_mesh(o->mesh);
    return ISSIM_OK;
}

static bool engine_pose_source(void *ctx, double *t, Pose *poses, double *ahead, int count);

static Pose body_pose(const Engine *e, int body) {
    EngineBodyState st = engine_block_state(e, e->y, body);
    return (Pose){st.pos, st.orient};
}

int engine_threads_for(int shaped_bodies, int processors, double load) {
    if (shaped_bodies < ENGINE_PARALLEL_MIN_BODIES || processors < 2 || !(load <= processors - 1))
        return 1;
    return 2;
}

int engine_threads_auto(int shaped_bodies) {
    double load = 0.0;
    if (getloadavg(&load, 1) != 1)
        load = 0.0; /* unknown: as if idle */
    return engine_threads_for(shaped_bodies, task_pool_processors(), load);
}

int engine_threads(const Engine *e) {
    return e->collision ? collision_world_threads(e->collision) : 1;
}

IssimStatus engine_build_shapes(Engine *e, IssimError *err) {
    int shaped = 0;
    for (int b = 0; b < e->body_count; b++) {
        e->bodies[b].world_index = -1;
        IssimStatus s = body_shape(e, &e->bodies[b], err);
        if (s != ISSIM_OK)
            return s;
        shaped += e->bodies[b].shaped;
    }
    IssimStatus maps = engine_load_maps(e, err);
    if (maps != ISSIM_OK)
        return maps;
    for (int o = 0; o < e->obstacle_count; o++) {
        e->obstacles[o].world_index = -1;
        IssimStatus s = obstacle_shape(e, &e->obstacles[o], err);
        if (s != ISSIM_OK)
            return s;
    }
    if (shaped == 0)
        return ISSIM_OK;
    e->manifold_energy.fresh = true; /* the initial overlaps are the user's */
    e->manifold_energy.check_overlap = true;
    CollisionDesc desc = collision_desc_default();
    e->collision_margin = desc.margin;
    /* Pairs of bodies whose poses did not change at all (sleeping bodies, engine_sleep.c) are
     * carried by the world anyway; carrying awake bodies at rest with a coarser tolerance made
     * no difference to the 240-body pile's wall time and let its settled energy creep up by
     * 5e-4, so ENGINE_REST_TOLERANCE is 0. */
    desc.rest_tolerance = ENGINE_REST_TOLERANCE;
    /* Pairs that moved less than the tolerance are refreshed from their anchors (world.c); the
     * checkpoints keep the state that choice reads, so rewinds still replay bit for bit. */
    desc.coherence_tolerance =
        thing_real(e->db, thingdb_find_kind(e->db, THING_UNIVERSE), "collision_coherence");
    desc.threads = e->options.threads > 0 ? e->options.threads : engine_threads_auto(shaped);
    e->collision = collision_world_create(&desc, err);
    e->world_owner = calloc((size_t)(e->body_count + e->obstacle_count), sizeof(int));
    if (!e->collision || !e->world_owner)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory creating the collision world");

    /* Dynamic bodies first, so a static one is always body B of a pair (body_a < body_b). */
    for (int b = 0; b < e->body_count; b++) {
        if (!e->bodies[b].shaped)
            continue;
        int w = collision_world_add(e->collision, &e->bodies[b].shape, pose_identity(), false);
        e->bodies[b].world_index = w;
        e->world_owner[w] = b;
    }
    for (int o = 0; o < e->obstacle_count; o++) {
        EngineObstacle *ob = &e->obstacles[o];
        int w = collision_world_add(e->collision, &ob->shape, ob->pose, true);
        ob->world_index = w;
        e->world_owner[w] = -(o + 1);
    }
    /* The manager sizes its buffers from the world: create it once every body is in. */
    e->manager = collision_manager_create(e->collision, engine_pose_source, e, err);
    if (!e->manager) {
        collision_world_destroy(e->collision);
        e->collision = NULL;
        return err ? err->status : ISSIM_ERR_NOMEM;
    }
    return ISSIM_OK;
}

void engine_destroy_shapes(Engine *e) {
    collision_manager_destroy(e->manager); /* stops its thread, destroys the world */
    e->manager = NULL;
    e->collision = NULL;
    free(e->collision_frame);
    e->collision_frame = NULL;
    for (int b = 0; b < e->body_count; b++) {
        hull_destroy(e->bodies[b].hull);
        e->bodies[b].hull = NULL;
        smooth_surface_destroy(e->bodies[b].surface);
        e->bodies[b].surface = NULL;
    }
    engine_release_maps(e);
    for (int o = 0; o < e->obstacle_count; o++) {
        trimesh_destroy(e->obstacles[o].mesh);
        e->obstacles[o].mesh = NULL;
        smooth_surface_destroy(e->obstacles[o].surface);
        e->obstacles[o].surface = NULL;
        hull_destroy(e->obstacles[o].hull);
        e->obstacles[o].hull = NULL;
    }
    free(e->world_owner);
    e->world_owner = NULL;
    engine_manifold_energy_free(e);
}

bool engine_reserve_contacts(Engine *e, int count) {
    if (count <= e->contact_capacity)
        return true;
    int cap = issim_array_grown_capacity(e->contact_capacity, count);
    if (!ISSIM_ARRAY_RESIZE(e->contacts, cap) ||
        !ISSIM_ARRAY_RESIZE(e->live_contacts, cap)) /* engine_sleep.c */
        return false;
    e->contact_capacity = cap;
    return true;
}

/* The previous update's manifold contacts, with an open-addressing index by collision id so
 * matching costs O(contacts) per update, not O(contacts^2). */
static bool reserve_previous(Engine *e, int count) {
    if (count <= e->previous_capacity)
        return true;
    int slots = 16;
    while (slots < 2 * count)
        slots *= 2;
    if (!ISSIM_ARRAY_RESIZE(e->previous, count) || !ISSIM_ARRAY_RESIZE(e->previous_kept, count) ||
        !ISSIM_ARRAY_RESIZE(e->previous_index, slots))
        return false;
    e->previous_capacity = count;
    e->previous_slots = slots;
    return true;
}

static uint32_t slot_of_id(uint32_t id, int slots) {
    return (id * 2654435761u) & (uint32_t)(slots - 1);
}

static void build_previous_index(Engine *e, int count) {
    for (int i = 0; i < e->previous_slots; i++)
        e->previous_index[i] = -1;
    for (int j = 0; j < count; j++) {
        e->previous_kept[j] = false;
        uint32_t s = slot_of_id(e->previous[j].collision_id, e->previous_slots);
        while (e->previous_index[s] >= 0)
            s = (s + 1) & (uint32_t)(e->previous_slots - 1);
        e->previous_index[s] = j;
    }
}

static int find_previous(const Engine *e, uint32_t id) {
    if (e->previous_slots == 0)
        return -1;
    uint32_t s = slot_of_id(id, e->previous_slots);
    while (e->previous_index[s] >= 0) {
        if (e->previous[e->previous_index[s]].collision_id == id)
            return e->previous_index[s];
        s = (s + 1) & (uint32_t)(e->previous_slots - 1);
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
    int a = e->world_owner[wc->body_a], b = e->world_owner[wc->body_b];
    if (a < 0)
        return false; /* static-static never happens; a static A would mean a bad ordering */
    int material_b = b >= 0 ? e->bodies[b].material : e->obstacles[-b - 1].material;
    int pair = engine_find_pair(e, e->bodies[a].material, material_b);
    if (pair < 0)
        return false; /* no contact model between these materials: they pass through */
    Pose pa = poses ? poses[wc->body_a] : body_pose(e, a);
    /* A sphere or capsule is round: its contact point must not ride on the body as it spins
     * (that would put a lever arm on a force through the axis and pump energy into the spin),
     * so the body-fixed anchor is the core point, and the surface point is the radius away from
     * it along the current normal. */
    double ra = round_radius(&e->bodies[a].shape);
    double rb = b >= 0 ? round_radius(&e->bodies[b].shape) : 0.0;
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

static void emit_manifold(Engine *e, const EngineContact *c, EngineEventKind kind,
                          double depth_rate) {
    EngineEvent ev = engine_contact_event(c, e->t, -depth_rate);
    ev.kind = kind;
    ev.vertex = -1;
    ev.duration = kind == ENGINE_EVENT_CONTACT_END ? e->t - c->t_begin : 0.0;
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
    double speed = vec3_norm(vel) + vec3_norm(angvel) * e->bodies[b].reach;
    double updates = e->collision_registry ? 1.0 + ENGINE_REPORT_MAX_LAG : 1.0;
    double travel = ENGINE_REACH_AHEAD_SAFETY * speed * e->dt * updates;
    return fmax(0.0, travel - e->collision_margin);
}

static bool engine_pose_source(void *ctx, double *t, Pose *poses, double *ahead, int count) {
    Engine *e = ctx;
    if (!e->collision_registry) {
        for (int b = 0; b < e->body_count; b++) {
            if (!e->bodies[b].shaped)
                continue;
            EngineBodyState st = engine_block_state(e, e->y, b);
            int w = e->bodies[b].world_index;
            poses[w] = (Pose){st.pos, st.orient};
            ahead[w] = e->bodies[b].asleep ? 0.0 : reach_ahead(e, b, st.vel, st.angvel);
        }
        *t = e->t;
        return true;
    }
    /* A newest frame earlier than the last one read means the engine rewound (a drag, an edit,
     * the scrubber): it is new work too. Waiting for a time beyond the old one left the
     * engine without reports after every rewind, each step waiting ENGINE_REPORT_WAIT_LIMIT. */
    RegistryFrame frame = {.values = e->collision_frame};
    if (!registry_read_latest(e->collision_registry, &frame) || frame.t == *t)
        return false;
    for (int b = 0; b < e->body_count; b++) {
        if (!e->bodies[b].shaped)
            continue;
        EngineBodyState st = engine_frame_body(frame.values, b);
        int w = e->bodies[b].world_index;
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
    collision_manager_notify(e->manager); /* the state published after the last step */
    bool got = collision_manager_take(e->manager, report);
    if (got)
        e->report_t = report->t;
    double oldest = e->t - ENGINE_REPORT_MAX_LAG * e->dt * (1.0 + 1e-9);
    if (e->report_t >= oldest)
        return got;
    e->report_waits++;
    double t0 = issim_wall_time();
    while (e->report_t < oldest && registry_state_time(e->collision_registry) > e->report_t &&
           issim_wall_time() - t0 < ENGINE_REPORT_WAIT_LIMIT) {
        uint64_t seen = collision_manager_published(e->manager);
        if (!collision_manager_take(e->manager, report)) {
            /* poked above: no state is published while this thread waits */
            collision_manager_wait_published(e->manager, seen, 1e-3);
            if (!collision_manager_take(e->manager, report))
                continue;
        }
        got = true;
        e->report_t = report->t;
    }
    if (e->report_t < oldest)
        e->reports_stale++;
    return got;
}

void engine_collide(Engine *e) {
    if (!e->manager)
        return;
    CollisionReport report;
    if (e->collision_registry) {
        if (!take_report(e, &report))
            return;
        e->reports_used++;
    } else {
        engine_reduced_hold_pairs(e); /* engine_reduced.c */
        collision_manager_step(e->manager);
        if (!collision_manager_take(e->manager, &report))
            return;
        e->report_t = report.t;
    }
    engine_merge_contacts(e, report.contacts, report.contact_count, report.poses);
    engine_keep_identity(e, report.contacts, report.contact_count, report.next_id);
}

IssimStatus engine_start_collision_thread(Engine *e, Registry *reg, IssimError *err) {
    if (!e->manager || e->collision_registry)
        return ISSIM_OK;
    if (registry_var_count(reg) < engine_var_count(e) ||
        registry_var_find(reg, engine_var_name(e, 0)) != 0)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "the registry does not hold this engine's variables");
    free(e->collision_frame);
    e->collision_frame = calloc((size_t)registry_var_count(reg), sizeof(double));
    if (!e->collision_frame)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    e->collision_registry = reg;
    IssimStatus s = collision_manager_start(e->manager, err);
    if (s != ISSIM_OK)
        e->collision_registry = NULL;
    return s;
}

void engine_stop_collision_thread(Engine *e) {
    if (!e->manager || !e->collision_registry)
        return;
    collision_manager_stop(e->manager);
    e->collision_registry = NULL;
}

/* A reset while the thread runs: stop it, recompute the contacts of the new state on this
 * thread, start it again, so no report from the discarded future is ever used. */
void engine_collide_now(Engine *e) {
    if (!e->manager)
        return;
    Registry *reg = e->collision_registry;
    if (reg)
        engine_stop_collision_thread(e);
    e->manifold_energy.fresh = true; /* a state jump: its overlaps are the user's */
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
    c->id = ++e->next_contact_id;
    c->t_begin = e->t;
    engine_contact_begin(e, c, k);
    c->equilibrium = false;
    c->load = 0.0;
    c->still_speed = 0.0;
    emit_manifold(e, c, ENGINE_EVENT_CONTACT_BEGIN, k->depth_rate);
    engine_wake_on_contact(e, c, k, e->t);
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
        engine_manifold_kinematics(e, e->y, c, e->t, &k, NULL, NULL, NULL);
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
              overlapping, elastic, e->bodies[worst->body].name, engine_contact_partner(e, worst),
              deepest * 1e3);
    e->stats.warnings++;
}

void engine_merge_contacts(Engine *e, const CollisionContact *world, int count, const Pose *poses) {
    /* Previous manifold contacts, sorted by collision id (the world issues increasing ids). */
    int old_count = e->contact_count - e->vertex_contact_count;
    e->merge_states = engine_merge_states(e);
    if (!reserve_previous(e, old_count + 1) ||
        !engine_reserve_contacts(e, e->vertex_contact_count + count + 1) ||
        !engine_manifold_energy_begin(e, e->contacts + e->vertex_contact_count, old_count, count)) {
        issim_log(ISSIM_LOG_ERROR, "out of memory for %d contacts: contacts dropped", count);
        e->stats.warnings++;
        e->merge_states = NULL;
        return;
    }
    memcpy(e->previous, e->contacts + e->vertex_contact_count,
           sizeof *e->previous * (size_t)old_count);
    bool changed = old_count != count;
    bool any_active = false;
    build_previous_index(e, old_count);
    int first = e->vertex_contact_count, n = first;
    int *previous_of = e->manifold_energy.previous_of;
    for (int i = 0; i < count; i++) {
        int j = find_previous(e, world[i].id);
        if (j >= 0 && engine_contact_frozen(e, &e->previous[j]) &&
            memcmp(&e->previous[j].source_point, &world[i].point.point_a, sizeof(Vec3)) == 0) {
            /* Carried over by the world between sleeping bodies (or a sleeping body and an
             * obstacle): nothing of it can have changed (engine_sleep.c). */
            e->previous_kept[j] = true;
            previous_of[n - first] = -2;
            e->contacts[n++] = e->previous[j];
            continue;
        }
        /* Built in its slot (a contact is large: no copy through the stack); a contact that
         * fails is overwritten by the next. */
        EngineContact *c = &e->contacts[n];
        if (!contact_from_world(e, &world[i], poses, c))
            continue;
        IssimError err;
        /* The patch's point count of the last update (engine_manifold_energy.c shares the
         * damping among a pair's points): the damping is derived once unless it changed. */
        if (j >= 0)
            c->patch_points = e->previous[j].patch_points;
        if (engine_contact_params(e, c, &err) != ISSIM_OK)
            continue;
        if (j >= 0) {
            e->previous_kept[j] = true;
            persist(c, &e->previous[j]);
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
        changed = settle_activity(e, c, j >= 0 ? &e->previous[j] : NULL,
                                  &e->manifold_energy.kinematics[i - first]) ||
                  changed;
        any_active = any_active || (c->active && !engine_contact_frozen(e, c));
    }
    /* Active contacts the world no longer reports have ended. */
    for (int j = 0; j < old_count; j++) {
        if (e->previous_kept[j])
            continue;
        changed = true;
        engine_contact_end(e, &e->previous[j]);
        if (e->previous[j].active)
            emit_manifold(e, &e->previous[j], ENGINE_EVENT_CONTACT_END, 0.0);
    }
    if (changed || any_active)
        e->integrator_dirty = true;
    if (changed)
        e->fixed_step_dirty = true;
    if (e->manifold_energy.check_overlap) {
        e->manifold_energy.check_overlap = false;
        warn_initial_overlap(e);
    }
    e->merge_states = NULL;
}

/* The two shapes of c's pair at the current poses. */
static double pose_distance(const Engine *e, const EngineContact *c) {
    Pose pa = body_pose(e, c->body), pb;
    const Shape *sb;
    if (c->body_b >= 0) {
        sb = &e->bodies[c->body_b].shape;
        pb = body_pose(e, c->body_b);
    } else {
        sb = &e->obstacles[c->obstacle].shape;
        pb = e->obstacles[c->obstacle].pose;
    }
    Vec3 qa, qb, n;
    return shape_distance(&e->bodies[c->body].shape, pa, sb, pb, &qa, &qb, &n);
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
            engine_manifold_kinematics(e, e->y, c, e->t, &k, NULL, NULL, NULL);
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
