/* The collision shapes of bodies and obstacles, built from the thing database (primitives, hulls,
 * meshes, smooth surfaces tessellated for collision, height-field slabs), the collision world
 * and its manager that carry them (000 App. B.4.3), and the narrow phase's thread count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    if (path[0] == '/' || access(path, R_OK) == 0 || !e->model.options.asset_dir)
        return path;
    const char *prefixes[] = {"", "/.."};
    for (int i = 0; i < 2; i++) {
        snprintf(buf, size, "%s%s/%s", e->model.options.asset_dir, prefixes[i], path);
        if (access(buf, R_OK) == 0)
            return buf;
    }
    return path;
}

/* The smooth surface the surface_* properties describe (002; issim/surface.h). */
static SmoothSurface *thing_surface(const Engine *e, ThingId thing, const char *name,
                                    IssimError *err) {
    const ThingDb *db = e->model.db;
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
    const ThingDb *db = e->model.db;
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
    const ThingDb *db = e->model.db;
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
    return e->collide.world ? collision_world_threads(e->collide.world) : 1;
}

IssimStatus engine_build_shapes(Engine *e, IssimError *err) {
    int shaped = 0;
    for (int b = 0; b < e->model.body_count; b++) {
        e->model.bodies[b].world_index = -1;
        IssimStatus s = body_shape(e, &e->model.bodies[b], err);
        if (s != ISSIM_OK)
            return s;
        shaped += e->model.bodies[b].shaped;
    }
    IssimStatus maps = engine_load_maps(e, err);
    if (maps != ISSIM_OK)
        return maps;
    for (int o = 0; o < e->model.obstacle_count; o++) {
        e->model.obstacles[o].world_index = -1;
        IssimStatus s = obstacle_shape(e, &e->model.obstacles[o], err);
        if (s != ISSIM_OK)
            return s;
    }
    if (shaped == 0)
        return ISSIM_OK;
    e->collide.manifold_energy.fresh = true; /* the initial overlaps are the user's */
    e->collide.manifold_energy.check_overlap = true;
    CollisionDesc desc = collision_desc_default();
    e->collide.margin = desc.margin;
    /* Pairs of bodies whose poses did not change at all (sleeping bodies, engine_sleep.c) are
     * carried by the world anyway; carrying awake bodies at rest with a coarser tolerance made
     * no difference to the 240-body pile's wall time and let its settled energy creep up by
     * 5e-4, so ENGINE_REST_TOLERANCE is 0. */
    desc.rest_tolerance = ENGINE_REST_TOLERANCE;
    /* Pairs that moved less than the tolerance are refreshed from their anchors (world.c); the
     * checkpoints keep the state that choice reads, so rewinds still replay bit for bit. */
    desc.coherence_tolerance = thing_real(
        e->model.db, thingdb_find_kind(e->model.db, THING_UNIVERSE), "collision_coherence");
    desc.threads =
        e->model.options.threads > 0 ? e->model.options.threads : engine_threads_auto(shaped);
    e->collide.world = collision_world_create(&desc, err);
    e->collide.world_owner =
        calloc((size_t)(e->model.body_count + e->model.obstacle_count), sizeof(int));
    if (!e->collide.world || !e->collide.world_owner)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory creating the collision world");

    /* Dynamic bodies first, so a static one is always body B of a pair (body_a < body_b). */
    for (int b = 0; b < e->model.body_count; b++) {
        if (!e->model.bodies[b].shaped)
            continue;
        int w = collision_world_add(e->collide.world, &e->model.bodies[b].shape, pose_identity(),
                                    false);
        e->model.bodies[b].world_index = w;
        e->collide.world_owner[w] = b;
    }
    for (int o = 0; o < e->model.obstacle_count; o++) {
        EngineObstacle *ob = &e->model.obstacles[o];
        int w = collision_world_add(e->collide.world, &ob->shape, ob->pose, true);
        ob->world_index = w;
        e->collide.world_owner[w] = -(o + 1);
    }
    /* The manager sizes its buffers from the world: create it once every body is in. */
    e->collide.manager = collision_manager_create(e->collide.world, engine_pose_source, e, err);
    if (!e->collide.manager) {
        collision_world_destroy(e->collide.world);
        e->collide.world = NULL;
        return err ? err->status : ISSIM_ERR_NOMEM;
    }
    return ISSIM_OK;
}

void engine_collide_free(Engine *e) {
    engine_destroy_shapes(e);
    free(e->collide.spare);
    free(e->collide.previous_kept);
    free(e->collide.previous_index);
    e->collide.previous = e->collide.spare = NULL;
    e->collide.previous_kept = NULL;
    e->collide.previous_index = NULL;
    e->collide.previous_capacity = e->collide.previous_slots = 0;
}

void engine_destroy_shapes(Engine *e) {
    engine_pipeline_free(e); /* its thread stopped, its mailbox sized for this world */
    collision_manager_destroy(e->collide.manager); /* stops its thread, destroys the world */
    e->collide.manager = NULL;
    e->collide.world = NULL;
    free(e->collide.frame);
    e->collide.frame = NULL;
    for (int b = 0; b < e->model.body_count; b++) {
        hull_destroy(e->model.bodies[b].hull);
        e->model.bodies[b].hull = NULL;
        smooth_surface_destroy(e->model.bodies[b].surface);
        e->model.bodies[b].surface = NULL;
    }
    engine_release_maps(e);
    for (int o = 0; o < e->model.obstacle_count; o++) {
        trimesh_destroy(e->model.obstacles[o].mesh);
        e->model.obstacles[o].mesh = NULL;
        smooth_surface_destroy(e->model.obstacles[o].surface);
        e->model.obstacles[o].surface = NULL;
        hull_destroy(e->model.obstacles[o].hull);
        e->model.obstacles[o].hull = NULL;
    }
    free(e->collide.world_owner);
    e->collide.world_owner = NULL;
    engine_manifold_energy_free(e);
}
