/* The scene view: one instance per drawn piece of every thing (a body's shape, a "points"
 * body's vertex spheres and rod, an obstacle), meshes shared between instances of the same
 * geometry, and the registry variables that pose each body. Built from the GUI's copy of the
 * thing database, so the display never touches the engine's (thing.h threading rule). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "display_internal.h"

typedef struct Builder {
    SceneView *view;
    const ThingDb *db;
    const char *scene_dir;
    IssimError *err;
} Builder;

static int find_mesh(SceneView *v, const char *key) {
    for (int i = 0; i < v->mesh_count; i++)
        if (strcmp(v->meshes[i].key, key) == 0)
            return i;
    return -1;
}

/* Adds a mesh under key (data is moved in); returns its index or -1 on out of memory. */
static int add_mesh(SceneView *v, const char *key, MeshData *data) {
    if (v->mesh_count == v->mesh_capacity) {
        int cap = v->mesh_capacity ? 2 * v->mesh_capacity : 8;
        ViewMesh *m = realloc(v->meshes, (size_t)cap * sizeof *m);
        if (!m)
            return -1;
        v->meshes = m;
        v->mesh_capacity = cap;
    }
    ViewMesh *m = &v->meshes[v->mesh_count];
    *m = (ViewMesh){.data = *data, .coarser = -1};
    issim_strlcpy(m->key, key, sizeof m->key);
    return v->mesh_count++;
}

static ViewInstance *add_instance(SceneView *v) {
    if (v->instance_count == v->instance_capacity) {
        int cap = v->instance_capacity ? 2 * v->instance_capacity : 64;
        ViewInstance *in = realloc(v->instances, (size_t)cap * sizeof *in);
        if (!in)
            return NULL;
        v->instances = in;
        v->instance_capacity = cap;
    }
    ViewInstance *in = &v->instances[v->instance_count++];
    *in = (ViewInstance){.body = -1, .scale = {1, 1, 1}, .local_q = {1, 0, 0, 0}};
    return in;
}

static Aabb mesh_bounds(const MeshData *m) {
    Aabb b = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
    for (int i = 0; i < m->vertex_count; i++) {
        const float *p = m->positions + 3 * i;
        b.min = (Vec3){fmin(b.min.x, p[0]), fmin(b.min.y, p[1]), fmin(b.min.z, p[2])};
        b.max = (Vec3){fmax(b.max.x, p[0]), fmax(b.max.y, p[1]), fmax(b.max.z, p[2])};
    }
    return b;
}

static const char *asset_path(const Builder *b, const char *path, char *buf, size_t size) {
    if (path[0] == '/' || access(path, R_OK) == 0 || !b->scene_dir)
        return path;
    const char *prefixes[] = {"", "/.."};
    for (int i = 0; i < 2; i++) {
        snprintf(buf, size, "%s%s/%s", b->scene_dir, prefixes[i], path);
        if (access(buf, R_OK) == 0)
            return buf;
    }
    return path;
}

static bool keep_hull(SceneView *v, Hull *h) {
    Hull **list = realloc(v->hulls, (size_t)(v->hull_count + 1) * sizeof *list);
    if (!list)
        return false;
    v->hulls = list;
    v->hulls[v->hull_count++] = h;
    return true;
}

static bool keep_trimesh(SceneView *v, TriMesh *m) {
    TriMesh **list = realloc(v->trimeshes, (size_t)(v->trimesh_count + 1) * sizeof *list);
    if (!list)
        return false;
    v->trimeshes = list;
    v->trimeshes[v->trimesh_count++] = m;
    return true;
}

/* Slices around the axis of each level of detail of a round shape, finest first. */
static const int lod_slices[] = {64, 48, 32, 24, 16, 12, 8};
enum { LOD_LEVELS = sizeof lod_slices / sizeof lod_slices[0] };

static bool round_mesh(MeshData *data, const char *key, int slices) {
    if (strcmp(key, "sphere") == 0)
        return mesh_unit_sphere(data, slices, slices / 2);
    double r, hl;
    return sscanf(key + 8, "%lf:%lf", &r, &hl) == 2 &&
           mesh_capsule(data, r, hl, slices, slices / 4 > 2 ? slices / 4 : 2);
}

/* A sphere's or capsule's levels of detail (the finest is returned, each linked to the next
 * coarser one); -1 on out of memory. */
static int round_mesh_levels(SceneView *v, const char *key) {
    double radius = 1.0;
    if (strncmp(key, "capsule:", 8) == 0 && sscanf(key + 8, "%lf", &radius) != 1)
        return -1;
    int finest = -1, previous = -1;
    for (int level = 0; level < LOD_LEVELS; level++) {
        MeshData data = {0};
        if (!round_mesh(&data, key, lod_slices[level]))
            return -1;
        char level_key[640];
        snprintf(level_key, sizeof level_key, level == 0 ? "%s" : "%s@%d", key, lod_slices[level]);
        int index = add_mesh(v, level_key, &data);
        if (index < 0) {
            mesh_data_free(&data);
            return -1;
        }
        v->meshes[index].closed = true;
        v->meshes[index].round_radius = radius;
        if (previous >= 0) {
            double n = lod_slices[level];
            v->meshes[previous].coarser = index;
            v->meshes[previous].coarser_below_px = MESH_LOD_ERROR_PX / (1.0 - cos(M_PI / n));
        } else {
            finest = index;
        }
        previous = index;
    }
    return finest;
}

/* A smooth surface's mesh key: things with the same surface file, scale, offset, levels and
 * extraordinary-vertex mode
 * share a mesh; a control net (surface_points) is the thing's own. */
static void smooth_key(const ThingDb *db, ThingId id, char *key, size_t size) {
    const char *file = thing_string(db, id, "surface_file");
    char path[256];
    if (thing_get(db, id, "surface_points")->point_count > 0 || !file[0]) {
        snprintf(key, size, "smooth:%s", thing_path(db, id, path, sizeof path));
        return;
    }
    Vec3 scale = thing_vec3(db, id, "surface_scale"), offset = thing_vec3(db, id, "surface_offset");
    snprintf(key, size, "smooth:%s|%.9g %.9g %.9g|%.9g %.9g %.9g|%d|%d", file, scale.x, scale.y,
             scale.z, offset.x, offset.y, offset.z, (int)thing_int(db, id, "surface_levels"),
             thing_enum(db, id, "surface_extraordinary"));
}

/* Segments per fan triangle of a patch's domain: a one-patch surface needs many to look round;
 * a subdivided Loop surface has hundreds of small patches and its own normals at every vertex. */
static int smooth_segments(const SmoothSurface *surface) {
    int patches = smooth_surface_patch_count(surface);
    return patches == 1 ? 12 : patches <= 64 ? 6 : 3;
}

static SmoothSurface *thing_surface(Builder *b, ThingId id, IssimError *err) {
    const ThingDb *db = b->db;
    const PropValue *points = thing_get(db, id, "surface_points");
    const char *file = thing_string(db, id, "surface_file");
    char buf[1024];
    return smooth_surface_create(
        thing_name(db, id), points->points, points->point_count,
        file[0] ? asset_path(b, file, buf, sizeof buf) : file, thing_vec3(db, id, "surface_scale"),
        thing_vec3(db, id, "surface_offset"), (int)thing_int(db, id, "surface_levels"),
        (SurfaceExtraordinary)thing_enum(db, id, "surface_extraordinary"), err);
}

/* The tessellated surface of a "smooth" thing, with the patch of every triangle kept for
 * drawing the patch in contact. A Loop surface is closed and wound outward (back faces culled);
 * a Bezier patch is an open sheet seen from both sides. */
static int smooth_mesh(Builder *b, const char *key, ThingId id) {
    const ThingDb *db = b->db;
    bool from_file = thing_get(db, id, "surface_points")->point_count == 0;
    IssimError sub = {0};
    SmoothSurface *surface = thing_surface(b, id, &sub);
    SurfaceTessellation t = {0};
    if (!surface ||
        smooth_surface_tessellate(surface, smooth_segments(surface), &t, &sub) != ISSIM_OK) {
        smooth_surface_destroy(surface);
        issim_error_set(b->err, ISSIM_ERR_INVALID, "%s.%s: %s", thing_name(db, id),
                        from_file ? "surface_file" : "surface_points", sub.message);
        return -1;
    }
    smooth_surface_destroy(surface);
    MeshData data;
    int index = -1;
    if (mesh_smooth_surface(&data, &t) && (index = add_mesh(b->view, key, &data)) < 0)
        mesh_data_free(&data);
    if (index >= 0) {
        b->view->meshes[index].closed = from_file;
        b->view->meshes[index].patch_of_triangle = t.patch_of_triangle;
        t.patch_of_triangle = NULL;
    } else {
        issim_error_set(b->err, ISSIM_ERR_INVALID, "%s: cannot build a mesh for its surface",
                        thing_name(db, id));
    }
    surface_tessellation_free(&t);
    return index;
}

/* The mesh for a geometry key, generated on first use. */
static int mesh_for(Builder *b, const char *key, const ThingDb *db, ThingId id) {
    SceneView *v = b->view;
    int found = find_mesh(v, key);
    if (found >= 0)
        return found;
    if (strncmp(key, "smooth:", 7) == 0)
        return smooth_mesh(b, key, id);
    if (strcmp(key, "sphere") == 0 || strncmp(key, "capsule:", 8) == 0) {
        int finest = round_mesh_levels(v, key);
        if (finest < 0)
            issim_error_set(b->err, ISSIM_ERR_INVALID, "%s: cannot build a mesh for %s",
                            thing_name(db, id), key);
        return finest;
    }
    MeshData data = {0};
    bool ok = false;
    bool closed = false;
    char buf[1024];
    if (strcmp(key, "box") == 0) {
        ok = mesh_unit_box(&data);
        closed = true;
    } else if (strcmp(key, "quad") == 0) {
        ok = mesh_unit_quad(&data);
    } else if (strncmp(key, "hull:", 5) == 0) {
        IssimError sub = {0};
        Hull *h = hull_load_obj(asset_path(b, key + 5, buf, sizeof buf), &sub);
        if (!h) {
            issim_error_set(b->err, ISSIM_ERR_INVALID, "%s.hull_file: %s", thing_name(db, id),
                            sub.message);
            return -1;
        }
        ok = keep_hull(v, h) && mesh_hull(&data, h);
        closed = true;
    } else if (strncmp(key, "mesh:", 5) == 0) {
        IssimError sub = {0};
        TriMesh *m = trimesh_load_obj(asset_path(b, key + 5, buf, sizeof buf), &sub);
        if (!m) {
            issim_error_set(b->err, ISSIM_ERR_INVALID, "%s.mesh_file: %s", thing_name(db, id),
                            sub.message);
            return -1;
        }
        ok = keep_trimesh(v, m) && mesh_trimesh(&data, m);
    } else if (strncmp(key, "polygon:", 8) == 0) {
        const PropValue *p = thing_get(db, id, "polygon");
        ok = mesh_polygon_prism(&data, p->points, p->point_count, 0.05);
    }
    if (!ok) {
        issim_error_set(b->err, ISSIM_ERR_INVALID, "%s: cannot build a mesh for %s",
                        thing_name(db, id), key);
        return -1;
    }
    int index = add_mesh(v, key, &data);
    if (index < 0)
        mesh_data_free(&data);
    else
        v->meshes[index].closed = closed;
    return index;
}

/* Bodies left at the schema's default colour get one of a palette by body index, so the
 * bodies of a pile, a chair's legs or two spheres are told apart; the first is the default
 * itself (a one-body scene looks as before). A colour the scene gives is kept. */
static const Vec3 body_palette[] = {{0.85, 0.55, 0.25}, {0.30, 0.60, 0.85}, {0.45, 0.75, 0.35},
                                    {0.85, 0.35, 0.35}, {0.65, 0.45, 0.80}, {0.60, 0.45, 0.30},
                                    {0.90, 0.55, 0.75}, {0.75, 0.75, 0.35}, {0.35, 0.75, 0.75},
                                    {0.95, 0.80, 0.35}};

static Vec3 shown_color(const ThingDb *db, ThingId id, int body) {
    Vec3 c = thing_vec3(db, id, "color");
    if (body < 0 || thing_kind(db, id) != THING_RIGID_BODY)
        return c;
    int n = 0;
    const PropDef *defs = thing_kind_props(THING_RIGID_BODY, &n);
    for (int i = 0; i < n; i++)
        if (strcmp(defs[i].name, "color") == 0) {
            const double *d = defs[i].default_value.vec;
            if (c.x == d[0] && c.y == d[1] && c.z == d[2])
                return body_palette[body % (int)(sizeof body_palette / sizeof body_palette[0])];
        }
    return c;
}

static void set_color(ViewInstance *in, Vec3 c, float alpha) {
    in->color[0] = (float)c.x, in->color[1] = (float)c.y, in->color[2] = (float)c.z;
    in->color[3] = alpha;
}

/* Colour edits are live: the instances of `thing` take its colour from db again (a plane's wall
 * patch keeps its translucency), so the next frame draws it. */
void scene_view_refresh_color(SceneView *view, const ThingDb *db, ThingId thing) {
    if (!thingdb_valid(db, thing) || thing_prop_find(db, thing, "color") < 0)
        return;
    for (int i = 0; i < view->instance_count; i++) {
        ViewInstance *in = &view->instances[i];
        if (thing_id_equal(in->thing, thing))
            set_color(in, shown_color(db, thing, in->body), in->color[3]);
    }
}

static ViewInstance *body_piece(Builder *b, ThingId id, int body, const char *key) {
    int mesh = mesh_for(b, key, b->db, id);
    if (mesh < 0)
        return NULL;
    ViewInstance *in = add_instance(b->view);
    if (!in)
        return NULL;
    in->thing = id;
    in->body = body;
    in->mesh = mesh;
    set_color(in, shown_color(b->db, id, body), 1.0f);
    return in;
}

/* The rotation whose columns are the orthonormal right-handed axes x, y, z (Shepperd). */
static Quat quat_from_basis(Vec3 x, Vec3 y, Vec3 z) {
    double tr = x.x + y.y + z.z;
    Quat q;
    if (tr > 0) {
        double s = 2.0 * sqrt(1.0 + tr);
        q = (Quat){0.25 * s, (y.z - z.y) / s, (z.x - x.z) / s, (x.y - y.x) / s};
    } else if (x.x > y.y && x.x > z.z) {
        double s = 2.0 * sqrt(1.0 + x.x - y.y - z.z);
        q = (Quat){(y.z - z.y) / s, 0.25 * s, (y.x + x.y) / s, (z.x + x.z) / s};
    } else if (y.y > z.z) {
        double s = 2.0 * sqrt(1.0 + y.y - x.x - z.z);
        q = (Quat){(z.x - x.z) / s, (y.x + x.y) / s, 0.25 * s, (z.y + y.z) / s};
    } else {
        double s = 2.0 * sqrt(1.0 + z.z - x.x - y.y);
        q = (Quat){(x.y - y.x) / s, (z.x + x.z) / s, (z.y + y.z) / s, 0.25 * s};
    }
    return quat_normalize(q);
}

/* Rotation taking local z to direction d (unit). */
static Quat z_to(Vec3 d) {
    Vec3 z = {0, 0, 1};
    double c = vec3_dot(z, d);
    if (c < -0.999999)
        return (Quat){0, 1, 0, 0};
    Vec3 axis = vec3_cross(z, d);
    return quat_normalize((Quat){1 + c, axis.x, axis.y, axis.z});
}

/* A rod of radius rod from p to q in the body frame; nothing for a zero length. */
static bool add_rod(Builder *b, ThingId id, int body, Vec3 p, Vec3 q, double rod) {
    double len = vec3_norm(vec3_sub(q, p));
    if (len < 1e-9)
        return true;
    char key[64];
    snprintf(key, sizeof key, "capsule:%.6g:%.6g", rod, 0.5 * len);
    ViewInstance *in = body_piece(b, id, body, key);
    if (!in)
        return false;
    in->offset = vec3_scale(vec3_add(p, q), 0.5);
    in->local_q = z_to(vec3_scale(vec3_sub(q, p), 1.0 / len));
    return true;
}

static ViewInstance *add_box_piece(Builder *b, ThingId id, int body, Vec3 centre, Vec3 half) {
    ViewInstance *in = body_piece(b, id, body, "box");
    if (in) {
        in->offset = centre;
        in->scale = half;
    }
    return in;
}

/* display_seat: the chair scene's body is its four feet (its contact vertices); a seat over
 * them, a leg to each and a backrest where the centre of mass leans make it read as a chair.
 * The centre of mass lies behind the seat's middle because of the backrest, so the backrest
 * goes on that side (none when the centre of mass is over the middle). */
static bool add_chair(Builder *b, ThingId id, int body, const PropValue *verts, Vec3 seat,
                      double rod) {
    Vec3 mid = {0, 0, 0};
    for (int k = 0; k < verts->point_count; k++)
        mid = vec3_add(mid, verts->points[k]);
    mid = vec3_scale(mid, 1.0 / verts->point_count);
    if (!add_box_piece(b, id, body, (Vec3){mid.x, mid.y, 0.0}, seat))
        return false;
    for (int k = 0; k < verts->point_count; k++) {
        Vec3 foot = verts->points[k];
        if (!add_rod(b, id, body, (Vec3){foot.x, foot.y, -seat.z}, foot, rod))
            return false;
    }
    double lean = hypot(mid.x, mid.y);
    if (lean < 1e-9)
        return true;
    Vec3 back = {-mid.x / lean, -mid.y / lean, 0.0}; /* from the seat's middle towards the mass */
    double reach = fabs(back.x) * seat.x + fabs(back.y) * seat.y, height = fmax(seat.x, seat.y);
    Vec3 centre = {mid.x + back.x * (reach - seat.z), mid.y + back.y * (reach - seat.z),
                   seat.z + height};
    Vec3 half = fabs(back.x) > fabs(back.y) ? (Vec3){seat.z, seat.y, height}
                                            : (Vec3){seat.x, seat.z, height};
    return add_box_piece(b, id, body, centre, half) != NULL;
}

/* A "points" body: a sphere at every contact vertex (its contact radius, or a small marker)
 * and a rod between consecutive vertices, so the seeds' bar looks like a bar; a chair instead
 * of the rods when display_seat is set. */
static bool add_points_body(Builder *b, ThingId id, int body) {
    const PropValue *verts = thing_get(b->db, id, "vertices");
    double radius = thing_real(b->db, id, "radius");
    double marker = radius > 0 ? radius : 0.008;
    for (int k = 0; k < verts->point_count; k++) {
        ViewInstance *in = body_piece(b, id, body, "sphere");
        if (!in)
            return false;
        in->offset = verts->points[k];
        in->scale = (Vec3){marker, marker, marker};
    }
    Vec3 box = thing_vec3(b->db, id, "display_box");
    if (box.x > 0.0 && box.y > 0.0 && box.z > 0.0 && verts->point_count > 0) {
        double lowest = verts->points[0].z;
        for (int k = 1; k < verts->point_count; k++)
            lowest = fmin(lowest, verts->points[k].z);
        if (!add_box_piece(b, id, body, (Vec3){0.0, 0.0, lowest + box.z}, box))
            return false;
    }
    Vec3 seat = thing_vec3(b->db, id, "display_seat");
    if (seat.x > 0.0 && seat.y > 0.0 && seat.z > 0.0 && verts->point_count > 0)
        return add_chair(b, id, body, verts, seat, 1.5 * marker);
    for (int k = 0; k + 1 < verts->point_count; k++)
        if (!add_rod(b, id, body, verts->points[k], verts->points[k + 1], 0.6 * marker))
            return false;
    return true;
}

static bool add_body(Builder *b, ThingId id, int body) {
    const ThingDb *db = b->db;
    ViewInstance *in = NULL;
    char key[600];
    switch ((BodyShape)thing_enum(db, id, "shape")) {
    case BODY_SHAPE_POINTS:
        return add_points_body(b, id, body);
    case BODY_SHAPE_SPHERE: {
        double r = thing_real(db, id, "radius");
        in = body_piece(b, id, body, "sphere");
        if (in)
            in->scale = (Vec3){r, r, r};
        break;
    }
    case BODY_SHAPE_CAPSULE:
        snprintf(key, sizeof key, "capsule:%.9g:%.9g", thing_real(db, id, "radius"),
                 thing_real(db, id, "half_length"));
        in = body_piece(b, id, body, key);
        break;
    case BODY_SHAPE_BOX:
        in = body_piece(b, id, body, "box");
        if (in)
            in->scale = thing_vec3(db, id, "half_extents");
        break;
    case BODY_SHAPE_HULL:
        snprintf(key, sizeof key, "hull:%s", thing_string(db, id, "hull_file"));
        in = body_piece(b, id, body, key);
        break;
    case BODY_SHAPE_POLYGON: {
        char path[256];
        snprintf(key, sizeof key, "polygon:%s", thing_path(db, id, path, sizeof path));
        in = body_piece(b, id, body, key);
        break;
    }
    case BODY_SHAPE_SMOOTH:
        smooth_key(db, id, key, sizeof key);
        in = body_piece(b, id, body, key);
        break;
    case BODY_SHAPE_COUNT:
        break;
    }
    return in != NULL;
}

static bool add_obstacle(Builder *b, ThingId id) {
    const ThingDb *db = b->db;
    ObstacleShape kind = (ObstacleShape)thing_enum(db, id, "shape");
    if (kind == OBSTACLE_SHAPE_PLANE)
        return true; /* second pass, once the scene's size is known */
    char key[600];
    if (kind == OBSTACLE_SHAPE_BOX)
        issim_strlcpy(key, "box", sizeof key);
    else if (kind == OBSTACLE_SHAPE_SMOOTH)
        smooth_key(db, id, key, sizeof key);
    else
        snprintf(key, sizeof key, "mesh:%s", thing_string(db, id, "mesh_file"));
    int mesh = mesh_for(b, key, db, id);
    if (mesh < 0)
        return false;
    ViewInstance *in = add_instance(b->view);
    if (!in)
        return false;
    in->thing = id;
    in->mesh = mesh;
    in->pose = (Pose){thing_vec3(db, id, "pos"), thing_quat(db, id, "orient")};
    if (kind == OBSTACLE_SHAPE_BOX)
        in->scale = thing_vec3(db, id, "half_extents");
    set_color(in, thing_vec3(db, id, "color"), 1.0f);
    return true;
}

/* Planes become square patches sized to the scene: the floor (normal near +z) solid, walls as
 * outlines so they do not hide what they contain. */
static bool add_planes(Builder *b) {
    const ThingDb *db = b->db;
    SceneView *v = b->view;
    double half = fmax(1.0, 1.5 * v->radius);
    for (int i = 0; i < thingdb_count(db); i++) {
        ThingId id = thingdb_at(db, i);
        if (thing_kind(db, id) != THING_FIXED_OBSTACLE ||
            thing_enum(db, id, "shape") != OBSTACLE_SHAPE_PLANE)
            continue;
        Vec3 n = vec3_normalize(thing_vec3(db, id, "normal"));
        double offset = thing_real(db, id, "offset");
        int mesh = mesh_for(b, "quad", db, id);
        ViewInstance *in = mesh >= 0 ? add_instance(v) : NULL;
        if (!in)
            return false;
        Vec3 u, w;
        vec3_tangent_basis(n, &u, &w);
        /* The patch is centred on the point of the plane nearest the scene's centre. */
        Vec3 c = vec3_sub(v->centre, vec3_scale(n, vec3_dot(n, v->centre) - offset));
        bool floor = n.z > 0.9;
        if (floor) {
            v->floor_z = c.z;
            u = (Vec3){1, 0, 0};
            w = vec3_normalize(vec3_cross(n, u));
        }
        w = vec3_normalize(vec3_cross(n, u)); /* right-handed (u, w, n) */
        in->thing = id;
        in->mesh = mesh;
        in->pose = (Pose){c, quat_from_basis(u, w, n)};
        in->plane_u = vec3_scale(u, half);
        in->plane_v = vec3_scale(w, half);
        in->scale = (Vec3){half, half, 1};
        in->wire = !floor;
        set_color(in, thing_vec3(db, id, "color"), floor ? 1.0f : 0.6f);
    }
    return true;
}

static void initial_bounds(SceneView *v, const ThingDb *db) {
    Vec3 lo = {INFINITY, INFINITY, INFINITY}, hi = {-INFINITY, -INFINITY, -INFINITY};
    int n = 0;
    for (int i = 0; i < thingdb_count(db); i++) {
        ThingId id = thingdb_at(db, i);
        ThingKind k = thing_kind(db, id);
        bool placed =
            k == THING_RIGID_BODY ||
            (k == THING_FIXED_OBSTACLE && thing_enum(db, id, "shape") != OBSTACLE_SHAPE_PLANE);
        if (!placed)
            continue;
        Vec3 p = thing_vec3(db, id, "pos");
        lo = (Vec3){fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z)};
        hi = (Vec3){fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z)};
        n++;
    }
    if (n == 0) {
        v->centre = (Vec3){0, 0, 0};
        v->radius = 1.0;
        return;
    }
    v->centre = vec3_scale(vec3_add(lo, hi), 0.5);
    v->radius = fmax(0.25, 0.5 * vec3_norm(vec3_sub(hi, lo)) + 0.1);
}

static bool name_matches(const ThingDb *db, ThingId id, const char *name) {
    char path[256];
    return strcmp(thing_path(db, id, path, sizeof path), name) == 0 ||
           strcmp(thing_name(db, id), name) == 0;
}

/* The body's contact map, for drawing its nodes and the GUI's map panel. The engine has
 * checked it already; a failure here only leaves the view without it. */
static void load_map(const Builder *b, ViewBody *vb) {
    const char *spec = thing_string(b->db, vb->thing, "contact_map");
    if (!spec || !spec[0])
        return;
    char resolved[1024];
    const char *path =
        contact_map_is_synthetic(spec) ? spec : asset_path(b, spec, resolved, sizeof resolved);
    IssimError err = {0};
    if (contact_map_load(spec, path, vb->name, &vb->map, &err) != ISSIM_OK)
        issim_log(ISSIM_LOG_WARN, "display: %s.contact_map: %s", vb->name, err.message);
}

static bool add_bodies(Builder *b, const Registry *reg, const char *const *body_names,
                       int body_count) {
    const ThingDb *db = b->db;
    SceneView *v = b->view;
    v->bodies = calloc((size_t)(body_count > 0 ? body_count : 1), sizeof *v->bodies);
    if (!v->bodies)
        return false;
    v->body_count = body_count;
    for (int body = 0; body < body_count; body++) {
        ViewBody *vb = &v->bodies[body];
        issim_strlcpy(vb->name, body_names[body], sizeof vb->name);
        char var[200];
        snprintf(var, sizeof var, "%s.pos.x", vb->name);
        vb->var_pos = reg ? registry_var_find(reg, var) : -1;
        snprintf(var, sizeof var, "%s.orient.w", vb->name);
        vb->var_orient = reg ? registry_var_find(reg, var) : -1;
        snprintf(var, sizeof var, "%s.vel.x", vb->name);
        vb->var_vel = reg ? registry_var_find(reg, var) : -1;
        for (int i = 0; i < thingdb_count(db); i++) {
            ThingId id = thingdb_at(db, i);
            if (thing_kind(db, id) == THING_RIGID_BODY && name_matches(db, id, vb->name)) {
                vb->thing = id;
                break;
            }
        }
        if (thing_id_is_null(vb->thing) || (reg && (vb->var_pos < 0 || vb->var_orient < 0))) {
            issim_error_set(b->err, ISSIM_ERR_NOT_FOUND, "display: no thing or state for body %s",
                            vb->name);
            return false;
        }
        vb->mass = thing_real(db, vb->thing, "mass");
        load_map(b, vb);
        if (!add_body(b, vb->thing, body))
            return false;
        /* Until the first frame: the scene's initial pose. */
        vb->instance = -1;
        for (int k = 0; k < v->instance_count; k++)
            if (v->instances[k].body == body && vb->instance < 0)
                vb->instance = k;
        for (int k = 0; k < v->instance_count; k++)
            if (v->instances[k].body == body)
                v->instances[k].pose =
                    (Pose){thing_vec3(db, vb->thing, "pos"), thing_quat(db, vb->thing, "orient")};
    }
    return true;
}

SceneView *scene_view_create(const ThingDb *db, const Registry *reg, const char *const *body_names,
                             int body_count, const char *scene_dir, IssimError *err) {
    SceneView *v = calloc(1, sizeof *v);
    if (!v) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    IssimError local = {0};
    Builder b = {.view = v, .db = db, .scene_dir = scene_dir, .err = err ? err : &local};
    initial_bounds(v, db);
    bool ok = add_bodies(&b, reg, body_names, body_count);
    for (int i = 0; ok && i < thingdb_count(db); i++) {
        ThingId id = thingdb_at(db, i);
        if (thing_kind(db, id) == THING_FIXED_OBSTACLE)
            ok = add_obstacle(&b, id);
    }
    ok = ok && add_planes(&b);
    if (!ok) {
        if (b.err->status == ISSIM_OK)
            issim_error_set(b.err, ISSIM_ERR_NOMEM, "out of memory building the scene view");
        scene_view_destroy(v);
        return NULL;
    }
    for (int i = 0; i < v->instance_count; i++) {
        ViewInstance *in = &v->instances[i];
        Aabb mb = mesh_bounds(&v->meshes[in->mesh].data);
        in->local_box = (Aabb){vec3_hadamard(mb.min, in->scale), vec3_hadamard(mb.max, in->scale)};
    }
    return v;
}

void scene_view_destroy(SceneView *v) {
    if (!v)
        return;
    for (int i = 0; i < v->mesh_count; i++) {
        mesh_data_free(&v->meshes[i].data);
        free(v->meshes[i].patch_of_triangle);
    }
    for (int i = 0; i < v->hull_count; i++)
        hull_destroy(v->hulls[i]);
    for (int i = 0; i < v->trimesh_count; i++)
        trimesh_destroy(v->trimeshes[i]);
    free(v->hulls);
    free(v->trimeshes);
    free(v->meshes);
    free(v->instances);
    for (int b = 0; v->bodies && b < v->body_count; b++)
        contact_map_release(v->bodies[b].map);
    free(v->bodies);
    free(v);
}

void scene_view_set_frame(SceneView *v, const double *values) {
    for (int i = 0; i < v->instance_count; i++) {
        ViewInstance *in = &v->instances[i];
        if (in->body < 0)
            continue;
        const ViewBody *vb = &v->bodies[in->body];
        const double *p = values + vb->var_pos, *q = values + vb->var_orient;
        in->pose = (Pose){{p[0], p[1], p[2]}, quat_normalize((Quat){q[0], q[1], q[2], q[3]})};
    }
}

/* The pose of an instance's mesh: the thing's pose composed with the piece's offset. */
Pose view_instance_mesh_pose(const ViewInstance *in) {
    return (Pose){pose_apply(in->pose, in->offset), quat_mul(in->pose.q, in->local_q)};
}

void scene_view_bounds(const SceneView *v, Vec3 *centre, double *radius) {
    Vec3 lo = {INFINITY, INFINITY, INFINITY}, hi = {-INFINITY, -INFINITY, -INFINITY};
    int n = 0;
    for (int i = 0; i < v->instance_count; i++) {
        const ViewInstance *in = &v->instances[i];
        if (in->body < 0 && v->meshes[in->mesh].key[0] == 'q')
            continue; /* planes are unbounded */
        Pose pose = view_instance_mesh_pose(in);
        double ext = vec3_norm(vec3_sub(in->local_box.max, in->local_box.min)) * 0.5;
        Vec3 p = pose.p;
        lo = (Vec3){fmin(lo.x, p.x - ext), fmin(lo.y, p.y - ext), fmin(lo.z, p.z - ext)};
        hi = (Vec3){fmax(hi.x, p.x + ext), fmax(hi.y, p.y + ext), fmax(hi.z, p.z + ext)};
        n++;
    }
    if (n == 0) {
        *centre = v->centre;
        *radius = v->radius;
        return;
    }
    *centre = vec3_scale(vec3_add(lo, hi), 0.5);
    *radius = fmax(0.05, 0.5 * vec3_norm(vec3_sub(hi, lo)));
}

/* Slab test of a ray against a box in the box's frame; the entry distance or -1. */
static double ray_box(Vec3 o, Vec3 d, Aabb box) {
    double t0 = 0.0, t1 = INFINITY;
    double oo[3] = {o.x, o.y, o.z}, dd[3] = {d.x, d.y, d.z};
    double lo[3] = {box.min.x, box.min.y, box.min.z}, hi[3] = {box.max.x, box.max.y, box.max.z};
    for (int a = 0; a < 3; a++) {
        if (fabs(dd[a]) < 1e-15) {
            if (oo[a] < lo[a] || oo[a] > hi[a])
                return -1;
            continue;
        }
        double ta = (lo[a] - oo[a]) / dd[a], tb = (hi[a] - oo[a]) / dd[a];
        if (ta > tb) {
            double s = ta;
            ta = tb;
            tb = s;
        }
        t0 = fmax(t0, ta);
        t1 = fmin(t1, tb);
        if (t0 > t1)
            return -1;
    }
    return t0;
}

int scene_view_body_of(const SceneView *view, EngineBodyId id) {
    for (int b = 0; !engine_body_id_is_null(id) && b < view->body_count; b++)
        if (engine_body_id_equal(view->bodies[b].id, id))
            return b;
    return -1;
}

int scene_view_pick(const SceneView *v, Vec3 origin, Vec3 dir, Vec3 *hit) {
    int best = -1;
    double best_t = INFINITY;
    for (int i = 0; i < v->instance_count; i++) {
        const ViewInstance *in = &v->instances[i];
        if (in->body < 0)
            continue;
        Pose pose = view_instance_mesh_pose(in);
        Vec3 lo = pose_apply_inv(pose, origin);
        Vec3 ld = quat_rotate_inv(pose.q, dir);
        double t = ray_box(lo, ld, in->local_box);
        if (t >= 0 && t < best_t) {
            best_t = t;
            best = i;
        }
    }
    if (best >= 0 && hit)
        *hit = vec3_add(origin, vec3_scale(dir, best_t));
    return best;
}

int scene_view_map_node(const SceneView *view, int body, const ContactReport *c) {
    if (body < 0 || body >= view->body_count || !view->bodies[body].map ||
        view->bodies[body].instance < 0)
        return -1;
    int a = scene_view_body_of(view, engine_body_id_unpack(c->body_a));
    int b = c->body_b ? scene_view_body_of(view, engine_body_id_unpack(c->body_b)) : -1;
    if (a != body && b != body)
        return -1;
    /* The report's normal points from b into a: a's outward normal is its negative. */
    Vec3 outward = a == body ? vec3_scale(c->normal, -1.0) : c->normal;
    Pose pose = view->instances[view->bodies[body].instance].pose;
    Vec3 point = quat_rotate_inv(pose.q, vec3_sub(c->point, pose.p));
    Vec3 normal = quat_rotate_inv(pose.q, outward);
    return contact_map_choose(view->bodies[body].map, point, normal, false).node;
}
