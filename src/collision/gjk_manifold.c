/* Contact manifolds of convex pairs without an analytic routine (capsule-box, capsule-hull,
 * sphere-hull, box-hull, hull-hull), built around the GJK/EPA normal (gjk.c).
 *
 * gjk_epa_distance gives the signed MTD (000 3.6 Definition 1), the normal and one pair of
 * closest or deepest points. A resting box needs its four corners, so when the normal is a face
 * normal of one of the shapes (within FACE_ALIGN_COS) the manifold comes from face clipping
 * (Ericson, Real-Time Collision Detection, 2005, 8.3.5 and 5.1; Catto, "Contact Manifolds", GDC
 * 2007; Gregorius, "Robust Contact Creation for Physics Simulations", GDC 2015): the face of A
 * or B best aligned with the normal is the reference, the other shape's face most opposed to it
 * (or a capsule's segment) is the incident polygon, which is clipped against the reference
 * face's side planes (Sutherland-Hodgman); the clipped points closer to the reference plane than
 * the margin are the contacts, measured along the reference normal, and at most four are kept
 * (contact_points_reduce: deepest, farthest, largest area). The reference is A's face unless
 * B's is better aligned by more than REFERENCE_BIAS, so it does not flip between two parallel
 * faces. Every other configuration (edge against edge, a vertex, a sphere, a capsule end) is
 * the single GJK/EPA point.
 *
 * Feature ids: clipped points name the incident vertex or edge and the reference face or side
 * edge that produce them (collision_internal.h), so they stay the same while a box slides on a
 * face; a single point names the features that support the two shapes along the normal.
 *
 * Thread: any (no state, no allocation). */
#include "issim/collision.h"

#include <math.h>
#include <string.h>

#include "collision_internal.h"

/* Clips the segment p0 + t (p1 - p0), t in [*t0, *t1], to the prism over the convex polygon
 * corners (counter-clockwise about n). Returns false when nothing is left; *side0 / *side1
 * receive the polygon side that cut each end (-1: not cut). Shared by the face clipping here and
 * the triangle clipping of mesh contacts. */
bool clip_segment_to_polygon(const Vec3 *corners, int count, Vec3 n, Vec3 p0, Vec3 p1, double *t0,
                             double *t1, int *side0, int *side1) {
    for (int k = 0; k < count; k++) {
        Vec3 o = corners[k];
        Vec3 side = vec3_cross(vec3_sub(corners[(k + 1) % count], o), n);
        double d0 = vec3_dot(vec3_sub(p0, o), side), d1 = vec3_dot(vec3_sub(p1, o), side);
        if (d0 > 0.0 && d1 > 0.0)
            return false;
        if (d0 > 0.0 && d1 <= 0.0) {
            double t = d0 / (d0 - d1);
            if (t > *t0) {
                *t0 = t;
                *side0 = k;
            }
        } else if (d1 > 0.0 && d0 <= 0.0) {
            double t = d0 / (d0 - d1);
            if (t < *t1) {
                *t1 = t;
                *side1 = k;
            }
        }
    }
    return *t0 <= *t1;
}

/* A face takes part in clipping when its normal is within about 1.1 degrees of the contact
 * normal. GJK and EPA return exact face normals for face contacts, so this only decides how
 * far from a face contact (an edge crossing a face almost parallel) clipping still applies. */
#define FACE_ALIGN_COS 0.9998
#define REFERENCE_BIAS 1e-6
/* Support features: vertices within this fraction of the polytope's size of the maximum. */
#define FEATURE_TOL 1e-9

/* ===== Polytope views ===== */

static const int box_face_vertices[24] = {
    0, 4, 6, 2, /* 0: -x */
    1, 3, 7, 5, /* 1: +x */
    0, 1, 5, 4, /* 2: -y */
    2, 6, 7, 3, /* 3: +y */
    0, 2, 3, 1, /* 4: -z */
    4, 5, 7, 6, /* 5: +z */
};

bool polytope_view(const Shape *s, PolytopeView *view) {
    if (s->kind == SHAPE_BOX) {
        Vec3 h = s->half_extents;
        view->box = true;
        for (int v = 0; v < 8; v++)
            view->box_vertices[v] =
                vec3(v & 1 ? h.x : -h.x, v & 2 ? h.y : -h.y, v & 4 ? h.z : -h.z);
        double he[3] = {h.x, h.y, h.z};
        for (int f = 0; f < 6; f++) {
            int axis = f / 2;
            double sign = f % 2 ? 1.0 : -1.0;
            Vec3 n = {0, 0, 0};
            if (axis == 0)
                n.x = sign;
            else if (axis == 1)
                n.y = sign;
            else
                n.z = sign;
            view->box_faces[f] =
                (HullFace){.normal = n, .offset = he[axis], .first = 4 * f, .count = 4};
        }
        view->vertex_count = 8;
        view->vertices = view->box_vertices;
        view->face_count = 6;
        view->faces = view->box_faces;
        view->face_vertices = box_face_vertices;
        return true;
    }
    if (s->kind == SHAPE_HULL && s->hull) {
        view->box = false;
        view->vertex_count = s->hull->vertex_count;
        view->vertices = s->hull->vertices;
        view->face_count = s->hull->face_count;
        view->faces = s->hull->faces;
        view->face_vertices = s->hull->face_vertices;
        return true;
    }
    return false;
}

int polytope_best_face(const PolytopeView *view, Vec3 d) {
    int best = 0;
    double best_dot = -INFINITY;
    for (int f = 0; f < view->face_count; f++) {
        double t = vec3_dot(view->faces[f].normal, d);
        if (t > best_dot) {
            best_dot = t;
            best = f;
        }
    }
    return best;
}

int polytope_incident_face(const PolytopeView *view, Vec3 d) {
    int v = 0;
    double best = -INFINITY;
    for (int i = 0; i < view->vertex_count; i++) {
        double t = vec3_dot(view->vertices[i], d);
        if (t > best) {
            best = t;
            v = i;
        }
    }
    int face = -1;
    best = -INFINITY;
    for (int f = 0; f < view->face_count; f++) {
        const HullFace *hf = &view->faces[f];
        for (int k = 0; k < hf->count; k++) {
            if (view->face_vertices[hf->first + k] == v) {
                double t = vec3_dot(hf->normal, d);
                if (t > best) {
                    best = t;
                    face = f;
                }
                break;
            }
        }
    }
    return face >= 0 ? face : polytope_best_face(view, d);
}

int polytope_edge_feature(const PolytopeView *view, int face, int local_edge) {
    const HullFace *f = &view->faces[face];
    if (!view->box)
        return f->first + local_edge;
    int u = view->face_vertices[f->first + local_edge];
    int v = view->face_vertices[f->first + (local_edge + 1) % f->count];
    int diff = u ^ v;
    int k = diff == 1 ? 0 : diff == 2 ? 1 : 2;
    int b1 = (u >> ((k + 1) % 3)) & 1, b2 = (u >> ((k + 2) % 3)) & 1;
    return 4 * k + b1 + 2 * b2;
}

FeatureHalf polytope_support_feature(const PolytopeView *view, Vec3 d, double rel_tol) {
    double best = -INFINITY, radius2 = 0.0;
    for (int i = 0; i < view->vertex_count; i++) {
        best = fmax(best, vec3_dot(view->vertices[i], d));
        radius2 = fmax(radius2, vec3_dot(view->vertices[i], view->vertices[i]));
    }
    /* One root for the largest |v| (the root is monotonic and correctly rounded: the same
     * value as the largest of the roots). */
    double tol = rel_tol * sqrt(radius2) * vec3_norm(d);
    int found[2] = {-1, -1}, count = 0;
    for (int i = 0; i < view->vertex_count; i++) {
        if (vec3_dot(view->vertices[i], d) >= best - tol) {
            if (count < 2)
                found[count] = i;
            count++;
        }
    }
    if (count == 1)
        return feature_half(FEATURE_VERTEX, found[0]);
    if (count == 2) {
        for (int f = 0; f < view->face_count; f++) {
            const HullFace *face = &view->faces[f];
            for (int j = 0; j < face->count; j++) {
                int u = view->face_vertices[face->first + j];
                int v = view->face_vertices[face->first + (j + 1) % face->count];
                if (u == found[0] && v == found[1])
                    return feature_half(FEATURE_EDGE, polytope_edge_feature(view, f, j));
            }
        }
    }
    return feature_half(FEATURE_FACE, polytope_best_face(view, d));
}

/* ===== Clipping ===== */

int clip_polygon(ClipVertex *poly, int count, const Vec3 *ref, int ref_count, Vec3 n,
                 const FeatureHalf *ref_edge, const FeatureHalf *ref_vertex, FeatureHalf inc_face) {
    ClipVertex scratch[CLIP_MAX];
    ClipVertex *in = poly, *out = scratch;
    for (int k = 0; k < ref_count && count > 0; k++) {
        Vec3 o = ref[k];
        Vec3 side = vec3_cross(vec3_sub(ref[(k + 1) % ref_count], o), n); /* outward */
        int m = 0;
        for (int i = 0; i < count && m < CLIP_MAX; i++) {
            const ClipVertex *cur = &in[i], *next = &in[(i + 1) % count];
            double dc = vec3_dot(vec3_sub(cur->p, o), side);
            double dn = vec3_dot(vec3_sub(next->p, o), side);
            if (dc <= 0.0) {
                out[m] = *cur;
                if (dc == 0.0 && dn > 0.0) { /* leaves right here, along side k */
                    out[m].out_kind = 1;
                    out[m].out_id = k;
                }
                m++;
            }
            if (m < CLIP_MAX && ((dc < 0.0 && dn > 0.0) || (dc > 0.0 && dn < 0.0))) {
                ClipVertex x;
                x.p = vec3_mad(cur->p, dc / (dc - dn), vec3_sub(next->p, cur->p));
                if (cur->out_kind == 0) {
                    x.inc = (FeatureHalf)cur->out_id;
                    x.ref = ref_edge[k];
                    x.side0 = k;
                    x.side1 = -1;
                } else { /* the edge ran along side k2: the point is a reference corner */
                    int k2 = cur->out_id;
                    int corner = (k2 + 1) % ref_count == k   ? k
                                 : (k + 1) % ref_count == k2 ? k2
                                                             : -1;
                    x.inc = inc_face;
                    x.ref = corner >= 0 ? ref_vertex[corner] : ref_edge[k];
                    x.side0 = k2;
                    x.side1 = k;
                }
                if (dc < 0.0) {
                    x.out_kind = 1;
                    x.out_id = k;
                } else {
                    x.out_kind = cur->out_kind;
                    x.out_id = cur->out_id;
                }
                out[m++] = x;
            }
        }
        ClipVertex *t = in;
        in = out;
        out = t;
        count = m;
    }
    if (in != poly)
        memcpy(poly, in, (size_t)count * sizeof *poly);
    return count;
}

/* ===== Manifolds ===== */

typedef struct Side {
    const Shape *shape;
    Pose pose;
    bool poly;
    PolytopeView view;
    int face;     /* polytope: face most aligned with dir */
    double align; /* its normal . dir */
    Vec3 dir;     /* world: from this shape towards the other */
} Side;

static void side_init(Side *s, const Shape *shape, Pose pose, Vec3 dir) {
    s->shape = shape;
    s->pose = pose;
    s->dir = dir;
    s->poly = polytope_view(shape, &s->view);
    s->face = -1;
    s->align = -INFINITY;
    if (s->poly) {
        Vec3 local = quat_rotate_inv(pose.q, dir);
        s->face = polytope_best_face(&s->view, local);
        s->align = vec3_dot(s->view.faces[s->face].normal, local);
    }
}

/* Feature half of a shape at its single contact point: point (world, on the surface) taken
 * with dir, the direction from this shape towards the other. */
static FeatureHalf single_feature(const Side *s, Vec3 point) {
    if (s->poly)
        return polytope_support_feature(&s->view, quat_rotate_inv(s->pose.q, s->dir), FEATURE_TOL);
    if (s->shape->kind == SHAPE_CAPSULE && s->shape->half_length > 0.0) {
        Vec3 core = vec3_mad(point, s->shape->radius, s->dir);
        double z = quat_rotate_inv(s->pose.q, vec3_sub(core, s->pose.p)).z;
        double h = s->shape->half_length;
        if (z <= -h * (1.0 - FEATURE_TOL))
            return feature_half(FEATURE_VERTEX, 0);
        if (z >= h * (1.0 - FEATURE_TOL))
            return feature_half(FEATURE_VERTEX, 1);
        return feature_half(FEATURE_EDGE, 0);
    }
    return feature_half(FEATURE_VERTEX, 0);
}

/* The reference face of side r in world: corners, their features, side features. Returns the
 * corner count, or 0 when the face has too many corners to clip. */
static int reference_face(const Side *r, Vec3 *corners, FeatureHalf *edge_features,
                          FeatureHalf *vertex_features) {
    const HullFace *f = &r->view.faces[r->face];
    if (f->count > CLIP_MAX / 2)
        return 0;
    for (int k = 0; k < f->count; k++) {
        int v = r->view.face_vertices[f->first + k];
        corners[k] = pose_apply(r->pose, r->view.vertices[v]);
        vertex_features[k] = feature_half(FEATURE_VERTEX, v);
        edge_features[k] = feature_half(FEATURE_EDGE, polytope_edge_feature(&r->view, r->face, k));
    }
    return f->count;
}

/* Adds the contact of incident point p (world) against the reference plane (normal nr out of
 * the reference shape, through o). For a capsule p is a core point at parameter t of its
 * segment (unit axis): the surface point is the one in the segment's normal cone nearest -nr
 * (an end cap faces away from the segment, the side only sideways). */
static void add_point(ContactPoint *cands, int *count, bool ref_is_a, Vec3 nr, Vec3 o, Vec3 p,
                      const Shape *capsule, Vec3 axis, double t, double margin, FeatureHalf inc,
                      FeatureHalf ref) {
    Vec3 on_inc = p;
    if (capsule)
        on_inc = vec3_mad(p, capsule->radius, segment_cone_direction(axis, t, vec3_neg(nr)));
    double s = vec3_dot(nr, vec3_sub(on_inc, o));
    if (!(s < margin) || *count >= CLIP_MAX)
        return;
    /* The reference point is below the clipped (core) point, so it stays on the face. */
    Vec3 on_ref = vec3_mad(p, -vec3_dot(nr, vec3_sub(p, o)), nr);
    ContactPoint *c = &cands[(*count)++];
    c->distance = s;
    if (ref_is_a) {
        c->point_a = on_ref;
        c->point_b = on_inc;
        c->feature = feature_pair(ref, inc);
    } else {
        c->point_a = on_inc;
        c->point_b = on_ref;
        c->feature = feature_pair(inc, ref);
    }
}

/* Face clipping with reference r and incident i; returns the number of contacts written to
 * out (0: fall back to the single point). */
static int clip_manifold(const Side *r, const Side *i, bool ref_is_a, double margin,
                         const ContactPoint *mtd, Manifold *out) {
    Vec3 corners[CLIP_MAX];
    FeatureHalf edge_features[CLIP_MAX], vertex_features[CLIP_MAX];
    int ref_count = reference_face(r, corners, edge_features, vertex_features);
    if (ref_count < 3)
        return 0;
    Vec3 nr = quat_rotate(r->pose.q, r->view.faces[r->face].normal);
    FeatureHalf ref_face = feature_half(FEATURE_FACE, r->face);
    ContactPoint cands[CLIP_MAX];
    int count = 0;
    if (i->poly) {
        int f = polytope_incident_face(&i->view, quat_rotate_inv(i->pose.q, vec3_neg(nr)));
        const HullFace *face = &i->view.faces[f];
        if (face->count > CLIP_MAX / 2)
            return 0;
        ClipVertex poly[CLIP_MAX];
        for (int k = 0; k < face->count; k++) {
            int v = i->view.face_vertices[face->first + k];
            poly[k] = (ClipVertex){
                .p = pose_apply(i->pose, i->view.vertices[v]),
                .inc = feature_half(FEATURE_VERTEX, v),
                .ref = ref_face,
                .side0 = -1,
                .side1 = -1,
                .out_kind = 0,
                .out_id = feature_half(FEATURE_EDGE, polytope_edge_feature(&i->view, f, k))};
        }
        int n = clip_polygon(poly, face->count, corners, ref_count, nr, edge_features,
                             vertex_features, feature_half(FEATURE_FACE, f));
        for (int k = 0; k < n; k++)
            add_point(cands, &count, ref_is_a, nr, corners[0], poly[k].p, NULL, nr, 0.0, margin,
                      poly[k].inc, poly[k].ref);
    } else if (i->shape->kind == SHAPE_CAPSULE) {
        ConvexCore core = convex_core(i->shape, i->pose);
        Vec3 p0 = core.points[0], p1 = core.points[1];
        double t0 = 0.0, t1 = 1.0;
        int side0 = -1, side1 = -1;
        if (!clip_segment_to_polygon(corners, ref_count, nr, p0, p1, &t0, &t1, &side0, &side1))
            return 0;
        Vec3 seg = vec3_sub(p1, p0), axis = vec3_normalize(seg);
        FeatureHalf edge = feature_half(FEATURE_EDGE, 0);
        add_point(cands, &count, ref_is_a, nr, corners[0], vec3_mad(p0, t0, seg), i->shape, axis,
                  t0, margin, side0 < 0 ? feature_half(FEATURE_VERTEX, 0) : edge,
                  side0 < 0 ? ref_face : edge_features[side0]);
        if (t1 > t0)
            add_point(cands, &count, ref_is_a, nr, corners[0], vec3_mad(p0, t1, seg), i->shape,
                      axis, t1, margin, side1 < 0 ? feature_half(FEATURE_VERTEX, 1) : edge,
                      side1 < 0 ? ref_face : edge_features[side1]);
    } else {
        return 0;
    }
    if (count == 0)
        return 0;
    out->normal = ref_is_a ? vec3_neg(nr) : nr;
    /* Deep inside, the incident shape's deepest point may lie outside the reference face's
     * prism: keep the MTD point so the manifold is never shallower than the MTD. */
    double deepest = INFINITY;
    for (int k = 0; k < count; k++)
        deepest = fmin(deepest, cands[k].distance);
    double mtd_along = vec3_dot(vec3_sub(mtd->point_a, mtd->point_b), out->normal);
    if (mtd_along < deepest - 1e-9 * (1.0 + fabs(mtd_along))) {
        int slot = count < CLIP_MAX ? count : CLIP_MAX - 1;
        for (int k = 0; k < count; k++)
            if (cands[k].feature == mtd->feature)
                slot = k; /* the same features: the MTD point replaces it */
        cands[slot] = *mtd;
        cands[slot].distance = mtd_along;
        count = slot == count ? count + 1 : count;
    }
    count = contact_points_reduce(cands, count, out->normal, MANIFOLD_FACE_POINTS);
    memcpy(out->points, cands, (size_t)count * sizeof cands[0]);
    out->count = count;
    return count;
}

int collide_convex_generic(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                           Manifold *out) {
    out->count = 0;
    out->normal = vec3(0, 0, 1);
    Vec3 qa, qb, n;
    ConvexCore ca = convex_core(a, pa), cb = convex_core(b, pb);
    double d = gjk_epa_core_within(&ca, &cb, margin, &qa, &qb, &n);
    if (!(d < margin))
        return 0;
    Side sa, sb;
    side_init(&sa, a, pa, vec3_neg(n));
    side_init(&sb, b, pb, n);
    /* Reference: the polytope face best aligned with the normal; A's unless B's is clearly
     * better. A capsule is only ever incident; a sphere never clips. */
    const Side *ref = NULL, *inc = NULL;
    if (sa.poly && sa.align >= FACE_ALIGN_COS && !(sb.align > sa.align + REFERENCE_BIAS)) {
        ref = &sa;
        inc = &sb;
    } else if (sb.poly && sb.align >= FACE_ALIGN_COS) {
        ref = &sb;
        inc = &sa;
    }
    ContactPoint single = {.point_a = qa,
                           .point_b = qb,
                           .distance = d,
                           .feature =
                               feature_pair(single_feature(&sa, qa), single_feature(&sb, qb))};
    if (ref && (inc->poly || inc->shape->kind == SHAPE_CAPSULE) &&
        clip_manifold(ref, inc, ref == &sa, margin, &single, out) > 0)
        return out->count;
    out->normal = n;
    out->count = 1;
    out->points[0] = single;
    return 1;
}
