/* Contacts between a static triangle mesh (A) and a convex shape (B: sphere, capsule, box,
 * hull, or a planar polygon for shape_distance). Normals point from B to A as everywhere in the
 * API, so here from the body towards the mesh (the reverse of the mesh's outward normal).
 *
 * Method. The body's bounds in the mesh frame, grown by the margin, select triangles from the
 * tree (trimesh.c). Each triangle is a flat convex core of three points for GJK/EPA (gjk.c), so
 * sphere and capsule distances are exact (the closest point on a triangle, as Ericson 5.1.5) and
 * box and hull penetrations are EPA's. A triangle's contacts then come from face clipping as in
 * gjk_manifold.c: the triangle is the reference when the normal is its own (the body's face or
 * segment is clipped to the triangle), a body face is the reference when the normal is that
 * face's (the triangle is clipped to it), and otherwise the single GJK/EPA point is the contact.
 * All triangles' contacts are pooled and grouped into faces, deepest first: a face is the
 * deepest point not yet taken and every point whose own normal is within 30 degrees of its
 * normal; each point becomes the body's core point on that normal (a sphere's centre, a point of
 * a capsule's axis, a polytope's own surface point), core points closer than 2% of the body's size
 * are one contact (two facets of a tessellated wall under one spot are not two springs), at most
 * MESH_FACE_POINTS are kept per face (contact_points_reduce), each measured along its face's
 * normal, and up to MESH_MAX_FACES faces make the manifold (Manifold.mixed_normals when more
 * than one).
 *
 * One-sided triangles and internal edges (the "ghost collision" problem: a box sliding on a
 * flat floor made of triangles must not catch on the floor's internal edges). A triangle is
 * ignored when the body's centre lies behind its plane (the triangle is the surface of a solid
 * behind it). When GJK/EPA's normal points behind the triangle, or the contact is on an edge
 * that is flat (coplanar neighbour) or concave, or on a corner whose two edges in this triangle
 * are, the normal is replaced by the triangle's face normal and the contact clipped to the
 * triangle: a neighbour reports the part beyond (Bullet's internal-edge utility and the smooth
 * chain shapes of Box2D solve the same problem with per-edge normal cones). Clipped points that
 * lie on a flat internal edge are dropped: they are interior to the coplanar region and would
 * otherwise crowd out its real corners (a box resting on a square of two triangles gets its four
 * corners, nothing on the diagonal).
 *
 * Limits, honestly. Only edges that are exactly flat (within 0.08 degrees) or concave are
 * smoothed: a body sliding over a slightly convex tessellated surface (a coarse sphere or
 * cylinder) still sees the convex edges as sharp, and may get a normal tilted towards the edge
 * while crossing it. A body deeper than its centre behind a triangle loses that triangle's
 * contact (the engine's speculative margin, collision_world_set_reach_ahead, reports a fast body's
 * triangles before it reaches them). A body touching more than MESH_MAX_FACES faces at large
 * angles keeps the deepest ones. The pooled candidates are capped at MESH_CANDIDATES (deepest
 * kept).
 * A planar polygon (shape_distance passes them) is treated as a flat convex in 3D: one point per
 * triangle, its support point, never clipped.
 *
 * Thread: any (reads the immutable mesh; no state). Allocation: none unless the body overlaps
 * more than MESH_QUERY_STACK triangles' bounds. */
#include "issim/collision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision_internal.h"

#define MESH_QUERY_STACK 512
#define MESH_CANDIDATES 128
/* Core points of one face closer than this fraction of the body's size are one contact: two
 * facets of a tessellated wall meeting under the body would otherwise be two springs in
 * parallel at one place, twice the stiffness the pair states. */
#define MESH_MERGE_FRACTION 0.02
/* An interior point of a capsule's axis on a face is kept when it lies deeper than the chord
 * between the face's two end points by this share of the face's deepest depth
 * (capsule_face_points). */
#define MESH_CAPSULE_BULGE 0.1
/* Faces of one manifold, each with its own normal and up to MESH_FACE_POINTS points, at most
 * MANIFOLD_MAX_POINTS in all. A face keeps more points than a convex pair's four: a body on a
 * tessellated floor has candidates where its face crosses sharp triangle edges besides its
 * corners, and a corner left out of four sinks unseen until it is the deepest (a box rocking on
 * the hole plate's top found two corners 0.9 mm deep at once). */
#define MESH_MAX_FACES 4
#define MESH_FACE_POINTS 8
/* As in gjk_manifold.c: faces within about 1.1 degrees of the normal are clipped. */
#define FACE_ALIGN_COS 0.9998
/* Points whose normal is within 30 degrees of the deepest one's share its manifold. */
#define MESH_NORMAL_COS 0.8660254037844386
/* Barycentric weights below this are zero: the point is on an edge or a corner. */
#define MESH_FEATURE_TOL 1e-9

typedef struct MeshCandidate {
    ContactPoint c; /* mesh frame */
    Vec3 m;         /* unit normal from the triangle to the body (mesh frame) */
} MeshCandidate;

typedef struct MeshCtx {
    const TriMesh *mesh;
    const Shape *body;
    Pose rel; /* body in the mesh frame */
    ConvexCore core;
    bool poly;
    PolytopeView view;
    Vec3 centre; /* body centre (mesh frame) */
    double margin;
    double dedupe; /* distance under which two body points are the same */
    double merge;  /* distance under which two core points of one face are one contact */
    int count;
    MeshCandidate cand[MESH_CANDIDATES];
} MeshCtx;

static void add_candidate(MeshCtx *c, Vec3 on_mesh, Vec3 on_body, double distance, Vec3 m,
                          FeatureHalf mesh_feature, FeatureHalf body_feature) {
    if (!(distance < c->margin))
        return;
    MeshCandidate k = {{.point_a = on_mesh,
                        .point_b = on_body,
                        .distance = distance,
                        .feature = feature_pair(mesh_feature, body_feature)},
                       m};
    if (c->count < MESH_CANDIDATES) {
        c->cand[c->count++] = k;
        return;
    }
    int worst = 0; /* full: replace the shallowest if this one is deeper */
    for (int i = 1; i < c->count; i++)
        if (c->cand[i].c.distance > c->cand[worst].c.distance)
            worst = i;
    if (distance < c->cand[worst].c.distance)
        c->cand[worst] = k;
}

/* Vertex of a planar polygon farthest along local direction d. */
static int polygon_support(const Shape *s, Vec3 d) {
    int best = 0;
    for (int i = 1; i < s->polygon_count; i++)
        if (vec3_dot(s->polygon[i], d) > vec3_dot(s->polygon[best], d))
            best = i;
    return best;
}

/* Body feature at a single contact point on_body, seen along dir (from body to mesh). */
static FeatureHalf body_feature(const MeshCtx *c, Vec3 on_body, Vec3 dir) {
    if (c->body->kind == SHAPE_POLYGON)
        return feature_half(FEATURE_VERTEX,
                            polygon_support(c->body, quat_rotate_inv(c->rel.q, dir)));
    if (c->poly)
        return polytope_support_feature(&c->view, quat_rotate_inv(c->rel.q, dir), 1e-9);
    if (c->body->kind == SHAPE_CAPSULE && c->body->half_length > 0.0) {
        Vec3 core = vec3_mad(on_body, -c->body->radius, dir);
        double z = quat_rotate_inv(c->rel.q, vec3_sub(core, c->rel.p)).z;
        double h = c->body->half_length;
        if (z <= -h * (1.0 - 1e-9))
            return feature_half(FEATURE_VERTEX, 0);
        if (z >= h * (1.0 - 1e-9))
            return feature_half(FEATURE_VERTEX, 1);
        return feature_half(FEATURE_EDGE, 0);
    }
    return feature_half(FEATURE_VERTEX, 0);
}

typedef struct Tri {
    int t;
    Vec3 p[3];
    int v[3];
    unsigned flags;
    Vec3 n;
} Tri;

static bool edge_smooth(const Tri *tri, int j) {
    return trimesh_edge_class(tri->flags, j) != 0;
}

static bool edge_flat(const Tri *tri, int j) {
    return trimesh_edge_class(tri->flags, j) == TRIMESH_EDGE_FLAT;
}

/* Feature of the triangle at point q (on it): face, edge j (3 t + j) or corner (vertex index);
 * *smooth tells whether that feature may not push sideways. */
static FeatureHalf triangle_feature(const Tri *tri, Vec3 q, bool *smooth) {
    double w[3], sum = 0.0;
    for (int k = 0; k < 3; k++) {
        Vec3 a = tri->p[(k + 1) % 3], b = tri->p[(k + 2) % 3];
        w[k] = fmax(vec3_dot(vec3_cross(vec3_sub(a, q), vec3_sub(b, q)), tri->n), 0.0);
        sum += w[k];
    }
    int zero[3], nz = 0;
    for (int k = 0; k < 3; k++)
        if (!(sum > 0.0) || w[k] <= MESH_FEATURE_TOL * sum)
            zero[nz++] = k;
    if (nz == 0) {
        *smooth = true;
        return feature_half(FEATURE_FACE, tri->t);
    }
    if (nz == 1) { /* on the edge opposite corner zero[0]: from corner k+1 to k+2 */
        int j = (zero[0] + 1) % 3;
        *smooth = edge_smooth(tri, j);
        return feature_half(FEATURE_EDGE, 3 * tri->t + j);
    }
    int corner = nz == 2 ? 3 - zero[0] - zero[1] : 0;
    *smooth = edge_smooth(tri, corner) && edge_smooth(tri, (corner + 2) % 3);
    return feature_half(FEATURE_VERTEX, tri->v[corner]);
}

/* Clipped points on flat edges are interior to a coplanar region. */
static bool on_flat_edge(const Tri *tri, int side0, int side1) {
    if (side0 < 0)
        return false;
    return edge_flat(tri, side0) && (side1 < 0 || edge_flat(tri, side1));
}

/* The triangle as reference: the body's incident face or segment (or centre) clipped to it.
 * Returns the number of candidates added. */
static int triangle_reference(MeshCtx *c, const Tri *tri) {
    Vec3 n = tri->n;
    FeatureHalf ref_edge[3], ref_vertex[3];
    for (int k = 0; k < 3; k++) {
        ref_edge[k] = feature_half(FEATURE_EDGE, 3 * tri->t + k);
        ref_vertex[k] = feature_half(FEATURE_VERTEX, tri->v[k]);
    }
    FeatureHalf ref_face = feature_half(FEATURE_FACE, tri->t);
    int before = c->count;
    if (c->poly) {
        int f = polytope_incident_face(&c->view, quat_rotate_inv(c->rel.q, vec3_neg(n)));
        const HullFace *face = &c->view.faces[f];
        if (face->count > CLIP_MAX - 3)
            return 0;
        ClipVertex poly[CLIP_MAX];
        for (int k = 0; k < face->count; k++) {
            int v = c->view.face_vertices[face->first + k];
            poly[k] = (ClipVertex){
                .p = pose_apply(c->rel, c->view.vertices[v]),
                .inc = feature_half(FEATURE_VERTEX, v),
                .ref = ref_face,
                .side0 = -1,
                .side1 = -1,
                .out_kind = 0,
                .out_id = feature_half(FEATURE_EDGE, polytope_edge_feature(&c->view, f, k))};
        }
        int count = clip_polygon(poly, face->count, tri->p, 3, n, ref_edge, ref_vertex,
                                 feature_half(FEATURE_FACE, f));
        for (int k = 0; k < count; k++) {
            if (on_flat_edge(tri, poly[k].side0, poly[k].side1))
                continue;
            double s = vec3_dot(n, vec3_sub(poly[k].p, tri->p[0]));
            add_candidate(c, vec3_mad(poly[k].p, -s, n), poly[k].p, s, n, poly[k].ref, poly[k].inc);
        }
        return c->count - before;
    }
    if (c->body->kind == SHAPE_POLYGON) { /* its support point, if over the triangle */
        Vec3 sp = convex_core_support(&c->core, vec3_neg(n));
        for (int k = 0; k < 3; k++) {
            Vec3 side = vec3_cross(vec3_sub(tri->p[(k + 1) % 3], tri->p[k]), n);
            if (vec3_dot(vec3_sub(sp, tri->p[k]), side) > 0.0)
                return 0;
        }
        double s = vec3_dot(n, vec3_sub(sp, tri->p[0]));
        add_candidate(c, vec3_mad(sp, -s, n), sp, s, n, ref_face, body_feature(c, sp, vec3_neg(n)));
        return c->count - before;
    }
    /* Sphere (a one-point segment) or capsule: clip the core segment to the triangle's prism. */
    Vec3 p0 = c->core.points[0], p1 = c->core.points[c->core.point_count - 1];
    double t0 = 0.0, t1 = 1.0;
    int side0 = -1, side1 = -1;
    if (!clip_segment_to_polygon(tri->p, 3, n, p0, p1, &t0, &t1, &side0, &side1))
        return 0;
    bool capsule = c->core.point_count == 2;
    Vec3 seg = vec3_sub(p1, p0), axis = vec3_normalize(seg);
    for (int e = 0; e < (capsule && t1 > t0 ? 2 : 1); e++) {
        double t = e ? t1 : t0;
        int side = e ? side1 : side0;
        if (side >= 0 && edge_flat(tri, side))
            continue;
        Vec3 core = vec3_mad(p0, t, seg);
        Vec3 dir = capsule ? segment_cone_direction(axis, t, vec3_neg(n)) : vec3_neg(n);
        Vec3 on_body = vec3_mad(core, c->core.radius, dir);
        double s = vec3_dot(n, vec3_sub(on_body, tri->p[0]));
        Vec3 on_mesh = vec3_mad(core, -vec3_dot(n, vec3_sub(core, tri->p[0])), n);
        FeatureHalf bf = !capsule    ? feature_half(FEATURE_VERTEX, 0)
                         : side >= 0 ? feature_half(FEATURE_EDGE, 0)
                                     : feature_half(FEATURE_VERTEX, e);
        add_candidate(c, on_mesh, on_body, s, n, side >= 0 ? ref_edge[side] : ref_face, bf);
    }
    return c->count - before;
}

/* A body face as reference: the triangle clipped to it. */
static int body_reference(MeshCtx *c, const Tri *tri, int f) {
    const HullFace *face = &c->view.faces[f];
    if (face->count > CLIP_MAX / 2)
        return 0;
    Vec3 corners[CLIP_MAX];
    FeatureHalf ref_edge[CLIP_MAX], ref_vertex[CLIP_MAX];
    for (int k = 0; k < face->count; k++) {
        int v = c->view.face_vertices[face->first + k];
        corners[k] = pose_apply(c->rel, c->view.vertices[v]);
        ref_vertex[k] = feature_half(FEATURE_VERTEX, v);
        ref_edge[k] = feature_half(FEATURE_EDGE, polytope_edge_feature(&c->view, f, k));
    }
    Vec3 fn = quat_rotate(c->rel.q, face->normal);
    ClipVertex poly[CLIP_MAX];
    for (int k = 0; k < 3; k++)
        poly[k] = (ClipVertex){.p = tri->p[k],
                               .inc = feature_half(FEATURE_VERTEX, tri->v[k]),
                               .ref = feature_half(FEATURE_FACE, f),
                               .side0 = -1,
                               .side1 = -1,
                               .out_kind = 0,
                               .out_id = feature_half(FEATURE_EDGE, 3 * tri->t + k)};
    int count = clip_polygon(poly, 3, corners, face->count, fn, ref_edge, ref_vertex,
                             feature_half(FEATURE_FACE, tri->t));
    int before = c->count;
    for (int k = 0; k < count; k++) {
        double s = vec3_dot(fn, vec3_sub(poly[k].p, corners[0]));
        add_candidate(c, poly[k].p, vec3_mad(poly[k].p, -s, fn), s, vec3_neg(fn), poly[k].inc,
                      poly[k].ref);
    }
    return c->count - before;
}

static void triangle_contacts(MeshCtx *c, int t) {
    Tri tri;
    tri.t = t;
    trimesh_triangle(c->mesh, t, tri.p);
    trimesh_triangle_indices(c->mesh, t, tri.v);
    tri.flags = trimesh_edge_flags(c->mesh, t);
    Vec3 e1 = vec3_sub(tri.p[1], tri.p[0]), e2 = vec3_sub(tri.p[2], tri.p[0]);
    Vec3 n = vec3_cross(e1, e2);
    double len = vec3_norm(n);
    if (!(len > 1e-12 * vec3_norm(e1) * vec3_norm(e2)))
        return; /* degenerate */
    tri.n = vec3_scale(n, 1.0 / len);
    if (vec3_dot(tri.n, vec3_sub(c->centre, tri.p[0])) < 0.0)
        return; /* the body's centre is behind: one-sided */
    ConvexCore core = {.shape = NULL, .point_count = 3, .radius = 0.0};
    for (int k = 0; k < 3; k++)
        core.points[k] = tri.p[k];
    Vec3 qa, qb, nrm;
    double d = gjk_epa_core_within(&core, &c->core, c->margin, &qa, &qb, &nrm);
    if (!(d < c->margin))
        return;
    Vec3 m = vec3_neg(nrm); /* triangle to body */
    bool smooth;
    FeatureHalf tf = triangle_feature(&tri, qa, &smooth);
    double along = vec3_dot(m, tri.n);
    bool snapped = false;
    if (along < 0.0 || (smooth && along < FACE_ALIGN_COS)) {
        m = tri.n;
        along = 1.0;
        snapped = true;
    }
    if (along >= FACE_ALIGN_COS) {
        if (triangle_reference(c, &tri) > 0 || snapped)
            return;
    } else if (c->poly) {
        int f = polytope_best_face(&c->view, quat_rotate_inv(c->rel.q, vec3_neg(m)));
        Vec3 fn = quat_rotate(c->rel.q, c->view.faces[f].normal);
        if (-vec3_dot(fn, m) >= FACE_ALIGN_COS && body_reference(c, &tri, f) > 0)
            return;
    }
    add_candidate(c, qa, qb, d, m, tf, body_feature(c, qb, vec3_neg(m)));
}

/* Radius of the body's round core (a sphere's centre, a capsule's axis): its contact points are
 * that far out along the normal from a core point. */
static double core_radius_of(const Shape *s) {
    return s->kind == SHAPE_SPHERE || s->kind == SHAPE_CAPSULE ? s->radius : 0.0;
}

/* Candidate indices by depth, deepest first (insertion sort: at most MESH_CANDIDATES). */
static void depth_order(const MeshCtx *c, int *order) {
    for (int i = 0; i < c->count; i++) {
        int j = i;
        while (j > 0 && c->cand[order[j - 1]].c.distance > c->cand[i].c.distance) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
}

/* A capsule's points on one face lie on its axis: its two extreme ones, and an interior one only
 * where it is deeper than the chord between them by MESH_CAPSULE_BULGE of the deepest depth (a
 * convex ridge under the capsule's middle). A capsule lying on a flat fan of triangles is held by
 * its ends: the points where its axis crosses the fan's edges lie on the chord, and as the
 * capsule rolls they came and went at full depth, each a spring begun deep (a rolling capsule on
 * the bolt's plate rocked in a 10 ms cycle, each cycle adding a point 40 um deep). Compacts
 * pts and cores; returns the count kept. */
static int capsule_face_points(const MeshCtx *c, Vec3 *cores, ContactPoint *pts, int count) {
    if (count <= 2)
        return count;
    Vec3 p0 = c->core.points[0], axis = vec3_sub(c->core.points[c->core.point_count - 1], p0);
    double along[MESH_CANDIDATES], deepest = 0.0;
    int first = 0, last = 0;
    for (int i = 0; i < count; i++) {
        along[i] = vec3_dot(vec3_sub(cores[i], p0), axis);
        first = along[i] < along[first] ? i : first;
        last = along[i] > along[last] ? i : last;
        deepest = fmax(deepest, -pts[i].distance);
    }
    double span = along[last] - along[first];
    int kept = 0;
    for (int i = 0; i < count; i++) {
        bool end = i == first || i == last;
        double w = span > 0.0 ? (along[i] - along[first]) / span : 0.0;
        double chord = (1.0 - w) * -pts[first].distance + w * -pts[last].distance;
        if (!end && !(-pts[i].distance > chord + MESH_CAPSULE_BULGE * deepest))
            continue;
        cores[kept] = cores[i];
        pts[kept++] = pts[i];
    }
    return kept;
}

/* One face of the manifold: the candidates within 30 degrees of its deepest one's normal m, each
 * made a point of the body's core on that normal (a round core's surface point is the radius out
 * along m; a polytope's is its own), duplicates of one core point merged (two triangles seeing one
 * sphere: one contact, not two springs in parallel), at most max_keep kept. Writes the points
 * (world) to pts and returns their count. */
static int mesh_face(const MeshCtx *c, Pose pm, const int *order, bool *used, Vec3 m, int max_keep,
                     ContactPoint *pts) {
    double r = core_radius_of(c->body);
    Vec3 normal = quat_rotate(pm.q, vec3_neg(m));
    Vec3 cores[MESH_CANDIDATES];
    int kept = 0;
    for (int o = 0; o < c->count; o++) {
        int i = order[o];
        const MeshCandidate *k = &c->cand[i];
        if (used[i] || vec3_dot(k->m, m) < MESH_NORMAL_COS)
            continue;
        used[i] = true;
        Vec3 core = vec3_mad(k->c.point_b, r, k->m);
        bool dup = false;
        for (int j = 0; j < kept && !dup; j++)
            dup = vec3_norm(vec3_sub(cores[j], core)) <= c->merge;
        if (dup)
            continue;
        cores[kept] = core;
        ContactPoint p = k->c;
        p.point_b = vec3_mad(core, -r, m);
        p.point_a = pose_apply(pm, p.point_a);
        p.point_b = pose_apply(pm, p.point_b);
        p.distance = vec3_dot(vec3_sub(p.point_a, p.point_b), normal);
        pts[kept++] = p;
    }
    if (c->body->kind == SHAPE_CAPSULE)
        kept = capsule_face_points(c, cores, pts, kept);
    return contact_points_reduce(pts, kept, normal, max_keep);
}

/* The pooled candidates as a manifold of up to MESH_MAX_FACES faces, the deepest first: a body
 * touching two faces at a large angle (a bolt on a hole's floor and against its wall) keeps the
 * contacts of both, each measured along its own face's normal, so neither face lets it sink. */
static int mesh_manifold(const MeshCtx *c, Pose pm, Manifold *out) {
    int order[MESH_CANDIDATES];
    bool used[MESH_CANDIDATES] = {false};
    depth_order(c, order);
    out->count = 0;
    int faces = 0;
    for (int o = 0; o < c->count && faces < MESH_MAX_FACES && out->count < MANIFOLD_MAX_POINTS;
         o++) {
        int i = order[o];
        if (used[i])
            continue;
        Vec3 m = c->cand[i].m;
        Vec3 normal = quat_rotate(pm.q, vec3_neg(m));
        ContactPoint pts[MESH_CANDIDATES];
        int room = MANIFOLD_MAX_POINTS - out->count;
        int n = mesh_face(c, pm, order, used, m, room < MESH_FACE_POINTS ? room : MESH_FACE_POINTS,
                          pts);
        if (faces == 0)
            out->normal = normal;
        for (int k = 0; k < n; k++) {
            out->points[out->count] = pts[k];
            out->point_normals[out->count] = normal;
            out->count++;
        }
        faces++;
    }
    out->mixed_normals = faces > 1;
    return out->count;
}

int collide_mesh(const Shape *mesh, Pose pm, const Shape *other, Pose po, double margin,
                 Manifold *out) {
    out->count = 0;
    out->normal = vec3(0, 0, 1);
    if (mesh->kind != SHAPE_MESH || !mesh->mesh)
        return 0;
    if (other->kind != SHAPE_SPHERE && other->kind != SHAPE_CAPSULE && other->kind != SHAPE_BOX &&
        other->kind != SHAPE_HULL && other->kind != SHAPE_POLYGON)
        return 0;
    MeshCtx ctx;
    memset(&ctx, 0, sizeof ctx);
    MeshCtx *c = &ctx;
    c->mesh = mesh->mesh;
    c->body = other;
    c->rel = (Pose){quat_rotate_inv(pm.q, vec3_sub(po.p, pm.p)), quat_mul(quat_conj(pm.q), po.q)};
    c->core = convex_core(other, c->rel);
    c->poly = polytope_view(other, &c->view);
    c->centre = other->kind == SHAPE_HULL ? pose_apply(c->rel, other->hull->centroid) : c->rel.p;
    c->margin = margin;
    Aabb box = shape_aabb(other, c->rel);
    c->dedupe = 1e-9 * (1.0 + vec3_norm(vec3_sub(box.max, box.min)));
    c->merge = MESH_MERGE_FRACTION * vec3_norm(vec3_sub(box.max, box.min));
    double grow = margin > 0.0 ? margin : 0.0;
    box.min = vec3_sub(box.min, vec3(grow, grow, grow));
    box.max = vec3_add(box.max, vec3(grow, grow, grow));
    int local[MESH_QUERY_STACK];
    int *tris = local;
    int total = trimesh_query(c->mesh, box, local, MESH_QUERY_STACK);
    if (total > MESH_QUERY_STACK) {
        tris = malloc((size_t)total * sizeof *tris);
        if (!tris)
            return 0;
        trimesh_query(c->mesh, box, tris, total);
    }
    for (int i = 0; i < total; i++)
        triangle_contacts(c, tris[i]);
    if (tris != local)
        free(tris);
    if (c->count == 0)
        return 0;
    int kept = mesh_manifold(c, pm, out);
    return kept;
}
