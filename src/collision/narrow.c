/* Narrow phase: dispatch on the kind pair, the signed minimum translation distance, and the
 * helpers the pair routines share (segment closest points, capsule normal cones, manifold
 * reduction).
 *
 * The signed MTD is 000 3.6 Definition 1: sgn(l . n) |l| for the shortest vector l joining the
 * two surfaces, i.e. the Euclidean distance while apart and minus the penetration depth (the
 * shortest translation that makes the shapes just touch) while overlapping. Pairs with an
 * analytic routine (narrow_round.c, narrow_box.c, narrow_polygon.c) compute it in closed form;
 * the other convex pairs go to GJK/EPA (gjk.c, gjk_manifold.c) and meshes to collide_mesh.
 *
 * shape_distance of two static kinds (outside its contract) returns +INFINITY with a zero normal
 * and the two poses' origins as points, matching collide_shapes' "no contact".
 *
 * The dispatch table holds each pair once, in the argument order its routine expects; the
 * other order calls the routine with the arguments exchanged and flips the result (normal,
 * points and feature halves), so every pair honours "normal from B to A".
 */
#include <math.h>
#include <string.h>

#include "collision_internal.h"

typedef int (*CollideFn)(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                         Manifold *out);

/* ===== Shared geometry ===== */

double segment_closest_parameter(Vec3 p0, Vec3 p1, Vec3 x) {
    Vec3 d = vec3_sub(p1, p0);
    double dd = vec3_dot(d, d);
    if (!(dd > 0.0))
        return 0.0;
    double t = vec3_dot(vec3_sub(x, p0), d) / dd;
    return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
}

static double clamp01(double x) {
    return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);
}

/* Ericson 5.1.9 (ClosestPtSegmentSegment), with the degenerate cases handled the same way. */
void segment_closest_points(Vec3 p0, Vec3 p1, Vec3 q0, Vec3 q1, double *s_out, double *t_out) {
    Vec3 d1 = vec3_sub(p1, p0), d2 = vec3_sub(q1, q0), r = vec3_sub(p0, q0);
    double a = vec3_dot(d1, d1), e = vec3_dot(d2, d2), f = vec3_dot(d2, r);
    double s, t;
    if (!(a > 0.0) && !(e > 0.0)) {
        s = t = 0.0;
    } else if (!(a > 0.0)) {
        s = 0.0;
        t = clamp01(f / e);
    } else {
        double c = vec3_dot(d1, r);
        if (!(e > 0.0)) {
            t = 0.0;
            s = clamp01(-c / a);
        } else {
            double b = vec3_dot(d1, d2);
            double denom = a * e - b * b;
            /* Parallel segments (denom ~ 0): any s works; take 0 and let the clamps below
             * find the matching t. */
            s = denom > 1e-14 * a * e ? clamp01((b * f - c * e) / denom) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = clamp01(-c / a);
            } else if (t > 1.0) {
                t = 1.0;
                s = clamp01((b - c) / a);
            }
        }
    }
    *s_out = s;
    *t_out = t;
}

Vec3 segment_cone_direction(Vec3 axis, double t, Vec3 d) {
    double along = vec3_dot(d, axis);
    /* At an end the cone is the half-space pointing away from the segment. */
    bool keep = (t <= 0.0 && along <= 0.0) || (t >= 1.0 && along >= 0.0);
    Vec3 u = keep ? d : vec3_mad(d, -along, axis);
    double n = vec3_norm(u);
    if (n > 1e-300 && n > 1e-12 * vec3_norm(d))
        return vec3_scale(u, 1.0 / n);
    Vec3 t1, t2;
    vec3_tangent_basis(axis, &t1, &t2);
    return t1;
}

/* ===== Manifolds ===== */

void manifold_flip(Manifold *m) {
    m->normal = vec3_neg(m->normal);
    for (int i = 0; m->mixed_normals && i < m->count; i++)
        m->point_normals[i] = vec3_neg(m->point_normals[i]);
    if (m->normal_owner != MANIFOLD_NORMAL_FREE)
        m->normal_owner =
            m->normal_owner == MANIFOLD_NORMAL_OF_A ? MANIFOLD_NORMAL_OF_B : MANIFOLD_NORMAL_OF_A;
    for (int i = 0; i < m->count; i++) {
        ContactPoint *p = &m->points[i];
        Vec3 t = p->point_a;
        p->point_a = p->point_b;
        p->point_b = t;
        p->feature = feature_swap(p->feature);
    }
}

/* Twice the signed area of (a, b, c) seen along n. */
static double area2(Vec3 a, Vec3 b, Vec3 c, Vec3 n) {
    return vec3_dot(vec3_cross(vec3_sub(b, a), vec3_sub(c, a)), n);
}

static bool kept_already(const int *keep, int kept, int i) {
    for (int k = 0; k < kept; k++)
        if (keep[k] == i)
            return true;
    return false;
}

int contact_points_select(int count, ContactCandidateFn get, const void *ctx, Vec3 normal,
                          int max_keep, ContactPoint *out) {
    ISSIM_ASSERT(max_keep >= 1 && max_keep <= MANIFOLD_MAX_POINTS);
    ContactPoint c;
    int keep[MANIFOLD_MAX_POINTS];
    int kept = 0, candidates = 0, deepest = -1;
    double deepest_distance = INFINITY;
    for (int i = 0; i < count; i++) {
        if (!get(ctx, i, &c))
            continue;
        if (candidates < max_keep)
            out[candidates] = c;
        candidates++;
        if (deepest < 0 || c.distance < deepest_distance) {
            deepest = i;
            deepest_distance = c.distance;
        }
    }
    if (candidates <= max_keep)
        return candidates;

    keep[kept++] = deepest;
    get(ctx, deepest, &out[0]);
    Vec3 p0 = out[0].point_a;
    if (kept < max_keep) {
        int far = -1;
        double best = -1.0;
        for (int i = 0; i < count; i++) {
            if (kept_already(keep, kept, i) || !get(ctx, i, &c))
                continue;
            Vec3 d = vec3_sub(c.point_a, p0);
            d = vec3_mad(d, -vec3_dot(d, normal), normal);
            if (vec3_dot(d, d) > best) {
                best = vec3_dot(d, d);
                far = i;
            }
        }
        get(ctx, far, &out[kept]);
        keep[kept++] = far;
    }
    double sign = 1.0;
    if (kept < max_keep) {
        Vec3 p1 = out[1].point_a;
        int third = -1;
        double best = -1.0;
        for (int i = 0; i < count; i++) {
            if (kept_already(keep, kept, i) || !get(ctx, i, &c))
                continue;
            double a = area2(p0, p1, c.point_a, normal);
            if (fabs(a) > best) {
                best = fabs(a);
                third = i;
                sign = a < 0.0 ? -1.0 : 1.0;
            }
        }
        get(ctx, third, &out[kept]);
        keep[kept++] = third;
    }
    if (kept < max_keep) {
        /* The point farthest outside the triangle (p0, p1, p2) oriented by sign: the largest
         * area added beyond one of its edges; none when every point is inside. */
        Vec3 t[3] = {out[0].point_a, out[1].point_a, out[2].point_a};
        int fourth = -1;
        double best = 0.0;
        for (int i = 0; i < count; i++) {
            if (kept_already(keep, kept, i) || !get(ctx, i, &c))
                continue;
            for (int e = 0; e < 3; e++) {
                double a = -sign * area2(t[e], t[(e + 1) % 3], c.point_a, normal);
                if (a > best) {
                    best = a;
                    fourth = i;
                }
            }
        }
        if (fourth >= 0) {
            get(ctx, fourth, &out[kept]);
            keep[kept++] = fourth;
        }
    }
    return kept;
}

static bool array_candidate(const void *ctx, int i, ContactPoint *out) {
    *out = ((const ContactPoint *)ctx)[i];
    return true;
}

int contact_points_reduce(ContactPoint *points, int count, Vec3 normal, int max_keep) {
    if (count <= max_keep)
        return count;
    ContactPoint out[MANIFOLD_MAX_POINTS];
    int n = contact_points_select(count, array_candidate, points, normal, max_keep, out);
    memcpy(points, out, (size_t)n * sizeof out[0]);
    return n;
}

/* ===== Dispatch ===== */

static int collide_mesh_convex(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                               Manifold *out) {
    return collide_mesh(a, pa, b, pb, margin, out);
}

/* COLLIDE_TABLE[a][b] handles (a, b) in that order; a pair is stored once (collide_dispatch tries
 * (b, a) and flips). Empty: no contacts (two static kinds; polygons collide in their plane only,
 * so with no box, hull or mesh). Adding a shape kind adds a row and a column here. */
static const CollideFn COLLIDE_TABLE[SHAPE_KIND_COUNT][SHAPE_KIND_COUNT] = {
    [SHAPE_SPHERE] = {[SHAPE_SPHERE] = collide_sphere_sphere,
                      [SHAPE_CAPSULE] = collide_sphere_capsule,
                      [SHAPE_BOX] = collide_sphere_box,
                      [SHAPE_PLANE] = collide_sphere_plane,
                      [SHAPE_HULL] = collide_convex_generic},
    [SHAPE_CAPSULE] = {[SHAPE_CAPSULE] = collide_capsule_capsule,
                       [SHAPE_PLANE] = collide_capsule_plane,
                       [SHAPE_BOX] = collide_convex_generic,
                       [SHAPE_HULL] = collide_convex_generic},
    [SHAPE_BOX] = {[SHAPE_BOX] = collide_box_box,
                   [SHAPE_PLANE] = collide_box_plane,
                   [SHAPE_HULL] = collide_convex_generic},
    [SHAPE_HULL] = {[SHAPE_PLANE] = collide_hull_plane, [SHAPE_HULL] = collide_convex_generic},
    [SHAPE_POLYGON] = {[SHAPE_POLYGON] = collide_polygon_polygon,
                       [SHAPE_SPHERE] = collide_polygon_sphere,
                       [SHAPE_CAPSULE] = collide_polygon_capsule,
                       [SHAPE_PLANE] = collide_polygon_plane},
    [SHAPE_MESH] = {[SHAPE_SPHERE] = collide_mesh_convex,
                    [SHAPE_CAPSULE] = collide_mesh_convex,
                    [SHAPE_BOX] = collide_mesh_convex,
                    [SHAPE_HULL] = collide_mesh_convex},
};

/* Pinned so that a new shape kind (collision.h) stops the build here until its row and column
 * are written: an empty entry would silently mean "never collides". */
_Static_assert(SHAPE_KIND_COUNT == 7, "COLLIDE_TABLE: give the new shape kind its row and column");

static bool kind_valid(ShapeKind k) {
    return (int)k >= 0 && k < SHAPE_KIND_COUNT;
}

static CollideFn collide_table(ShapeKind a, ShapeKind b) {
    return kind_valid(a) && kind_valid(b) ? COLLIDE_TABLE[a][b] : NULL;
}

static int collide_dispatch(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                            Manifold *out) {
    memset(out, 0, sizeof *out);
    if (!kind_valid(a->kind) || !kind_valid(b->kind))
        return -1;
    CollideFn fn = collide_table(a->kind, b->kind);
    if (fn) {
        int n = fn(a, pa, b, pb, margin, out);
        out->count = n;
        return n;
    }
    fn = collide_table(b->kind, a->kind);
    if (!fn)
        return -1;
    int n = fn(b, pb, a, pa, margin, out);
    out->count = n;
    manifold_flip(out);
    return n;
}

int collide_shapes(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin, Manifold *out) {
    int n = collide_dispatch(a, pa, b, pb, margin, out);
    if (n <= 0) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    return n;
}

static bool is_static_kind(ShapeKind k) {
    return k == SHAPE_PLANE || k == SHAPE_MESH;
}

/* Pairs whose collide routine is a closed form valid with an infinite margin; the other convex
 * pairs use GJK/EPA. */
static bool distance_by_manifold(ShapeKind a, ShapeKind b) {
    CollideFn fn = collide_table(a, b);
    if (!fn)
        fn = collide_table(b, a);
    return fn && fn != collide_convex_generic;
}

static double manifold_min(const Manifold *m, Vec3 *qa, Vec3 *qb, Vec3 *n) {
    if (m->count <= 0)
        return INFINITY;
    int best = 0;
    for (int i = 1; i < m->count; i++)
        if (m->points[i].distance < m->points[best].distance)
            best = i;
    *qa = m->points[best].point_a;
    *qb = m->points[best].point_b;
    *n = manifold_point_normal(m, best);
    return m->points[best].distance;
}

double shape_distance(const Shape *a, Pose pa, const Shape *b, Pose pb, Vec3 *point_a,
                      Vec3 *point_b, Vec3 *normal) {
    Vec3 qa = pa.p, qb = pb.p, n = {0, 0, 0};
    double d = INFINITY;
    Manifold m;
    if (!kind_valid(a->kind) || !kind_valid(b->kind) ||
        (is_static_kind(a->kind) && is_static_kind(b->kind))) {
        /* Outside the contract (two static kinds): no distance. */
    } else if (a->kind == SHAPE_MESH || b->kind == SHAPE_MESH) {
        /* Any convex shape against a mesh, polygons included (collide_shapes leaves those
         * out because polygons collide in their plane only). */
        bool mesh_a = a->kind == SHAPE_MESH;
        memset(&m, 0, sizeof m);
        m.count = mesh_a ? collide_mesh(a, pa, b, pb, INFINITY, &m)
                         : collide_mesh(b, pb, a, pa, INFINITY, &m);
        if (!mesh_a)
            manifold_flip(&m);
        d = manifold_min(&m, &qa, &qb, &n);
    } else if (distance_by_manifold(a->kind, b->kind)) {
        if (collide_dispatch(a, pa, b, pb, INFINITY, &m) > 0)
            d = manifold_min(&m, &qa, &qb, &n);
    } else {
        d = gjk_epa_distance(a, pa, b, pb, &qa, &qb, &n);
    }
    if (point_a)
        *point_a = qa;
    if (point_b)
        *point_b = qb;
    if (normal)
        *normal = n;
    return d;
}
