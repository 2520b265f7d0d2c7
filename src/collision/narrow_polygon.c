/* Planar contacts: polygon-polygon, polygon-sphere, polygon-capsule and polygon-plane in the
 * world x-z plane (2D scenes, collision.h).
 *
 * Every planar shape is a rounded convex polygon: a polygon (radius 0), a capsule (its axis
 * projected onto the plane: a two-vertex polygon with two opposite edges, swept by the radius)
 * or a sphere (its centre's section: one vertex, swept by the radius), as in Box2D v3's
 * b2CollidePolygons. Their signed MTD (000 3.6 Definition 1) is the cores' minus the radii:
 *  - cores overlapping: the 2D separating-axis test over the cores' edge normals (Ericson,
 *    Real-Time Collision Detection, 4.4.1; in 2D the edge normals of both are all the face
 *    normals of the Minkowski difference) gives the depth exactly;
 *  - cores apart: the closest pair of vertex against edge (Ericson 5.1.2) over both ways.
 * A reference edge (the best axis, or the edge the closest vertex faces) with the incident
 * edge of the other shape (most anti-parallel, and holding the closest vertex when apart) is
 * clipped to the reference edge's extent (Ericson 8.3.4 in 2D): up to two points. A closest
 * pair of two vertices makes one point.
 *
 * 2D frame: (u, v) = (z, x), which is right-handed about +y, so a polygon stored
 * counter-clockwise about +y is counter-clockwise in (u, v). Normals come back with y = 0 and
 * each point at its own body's world height.
 */
#include <math.h>
#include <string.h>

#include "collision_internal.h"

#define ROUND2_TIE_REL 1e-12

typedef struct V2 {
    double u, v;
} V2;

static V2 to2(Vec3 p) {
    return (V2){p.z, p.x};
}
static Vec3 to3(V2 p, double y) {
    return vec3(p.v, y, p.u);
}
static V2 v2_sub(V2 a, V2 b) {
    return (V2){a.u - b.u, a.v - b.v};
}
static V2 v2_mad(V2 a, double s, V2 b) {
    return (V2){a.u + s * b.u, a.v + s * b.v};
}
static double v2_dot(V2 a, V2 b) {
    return a.u * b.u + a.v * b.v;
}
static double v2_cross(V2 a, V2 b) {
    return a.u * b.v - a.v * b.u;
}
static double v2_norm(V2 a) {
    return sqrt(v2_dot(a, a));
}
static V2 v2_neg(V2 a) {
    return (V2){-a.u, -a.v};
}

typedef struct Round2 {
    int count;                         /* 1: circle, 2: segment, >= 3: polygon (ccw) */
    V2 v[SHAPE_POLYGON_MAX];           /* core vertices */
    V2 n[SHAPE_POLYGON_MAX];           /* outward unit normal of edge i (v[i] to v[i+1]); 0
                                          for a degenerate edge */
    FeatureHalf vf[SHAPE_POLYGON_MAX]; /* feature of vertex i */
    FeatureHalf ef[SHAPE_POLYGON_MAX]; /* feature of edge i */
    double radius, y;
} Round2;

static void round2_normals(Round2 *s) {
    for (int i = 0; i < s->count; i++) {
        V2 e = v2_sub(s->v[(i + 1) % s->count], s->v[i]);
        double len = v2_norm(e);
        s->n[i] = len > 0.0 ? (V2){e.v / len, -e.u / len} : (V2){0, 0};
    }
}

static void round2_polygon(const Shape *s, Pose pose, Round2 *r) {
    memset(r, 0, sizeof *r);
    int n = s->polygon_count;
    r->count = n;
    r->y = pose.p.y;
    double area2 = 0.0;
    for (int i = 0; i < n; i++)
        r->v[i] = to2(pose_apply(pose, s->polygon[i]));
    for (int i = 0; i < n; i++)
        area2 += v2_cross(r->v[i], r->v[(i + 1) % n]);
    bool reversed = area2 < 0.0; /* a pose turning the plane over */
    for (int i = 0; i < n; i++) {
        int src = reversed ? n - 1 - i : i;
        r->v[i] = to2(pose_apply(pose, s->polygon[src]));
        r->vf[i] = feature_half(FEATURE_VERTEX, src);
        /* edge i joins src and the next stored vertex, which is src - 1 when reversed */
        r->ef[i] = feature_half(FEATURE_EDGE, reversed ? (src - 1 + n) % n : src);
    }
    round2_normals(r);
}

static void round2_sphere(const Shape *s, Pose pose, Round2 *r) {
    memset(r, 0, sizeof *r);
    r->count = 1;
    r->v[0] = to2(pose.p);
    r->vf[0] = feature_half(FEATURE_VERTEX, 0);
    r->radius = s->radius;
    r->y = pose.p.y;
}

static void round2_capsule(const Shape *s, Pose pose, Round2 *r) {
    memset(r, 0, sizeof *r);
    Vec3 h = quat_rotate(pose.q, vec3(0, 0, s->half_length));
    r->v[0] = to2(vec3_sub(pose.p, h));
    r->v[1] = to2(vec3_add(pose.p, h));
    r->vf[0] = feature_half(FEATURE_VERTEX, 0);
    r->vf[1] = feature_half(FEATURE_VERTEX, 1);
    r->ef[0] = r->ef[1] = feature_half(FEATURE_EDGE, 0);
    r->radius = s->radius;
    r->y = pose.p.y;
    r->count = v2_norm(v2_sub(r->v[1], r->v[0])) > 0.0 ? 2 : 1;
    if (r->count == 1)
        r->v[0] = to2(pose.p);
    round2_normals(r);
}

/* Unit direction nearest to d in the normal cone of s's core at core point w: for a segment,
 * d without its axial part unless w is an end and d points away from the segment. */
static V2 round2_cone(const Round2 *s, V2 w, V2 d) {
    if (s->count == 2) {
        V2 e = v2_sub(s->v[1], s->v[0]);
        double len = v2_norm(e);
        V2 axis = {e.u / len, e.v / len};
        double t = v2_dot(v2_sub(w, s->v[0]), axis) / len;
        double along = v2_dot(d, axis);
        bool keep = (t <= 1e-12 && along <= 0.0) || (t >= 1.0 - 1e-12 && along >= 0.0);
        if (!keep)
            d = v2_mad(d, -along, axis);
        double n = v2_norm(d);
        return n > 1e-300 ? (V2){d.u / n, d.v / n} : s->n[0];
    }
    double n = v2_norm(d);
    return n > 0.0 ? (V2){d.u / n, d.v / n} : (V2){0, 1};
}

/* Largest separation of q's core from p's edges; *edge = -1 when p has none. */
static double max_separation(const Round2 *p, const Round2 *q, int *edge) {
    double best = -INFINITY;
    *edge = -1;
    if (p->count < 2)
        return best;
    for (int i = 0; i < p->count; i++) {
        if (p->n[i].u == 0.0 && p->n[i].v == 0.0)
            continue;
        double s = INFINITY;
        for (int j = 0; j < q->count; j++)
            s = fmin(s, v2_dot(p->n[i], v2_sub(q->v[j], p->v[i])));
        if (s > best) {
            best = s;
            *edge = i;
        }
    }
    return best;
}

/* Incident edge of s against reference normal n: most anti-parallel, among the two edges at
 * vertex w if w >= 0. */
static int incident_edge(const Round2 *s, V2 n, int w) {
    int best = -1;
    double best_dot = INFINITY;
    for (int j = 0; j < s->count; j++) {
        if (w >= 0 && j != w && (j + 1) % s->count != w)
            continue;
        if (s->n[j].u == 0.0 && s->n[j].v == 0.0)
            continue;
        double d = v2_dot(s->n[j], n);
        if (d < best_dot) {
            best_dot = d;
            best = j;
        }
    }
    return best;
}

typedef struct Clip2 {
    V2 p;
    FeatureHalf inc, ref;
} Clip2;

/* Clips the incident edge (or single vertex) of shape inc against reference edge ref_edge of
 * shape ref and writes the manifold. w: the incident vertex that must be kept (apart), or -1. */
static int clip_round2(const Round2 *ref, int ref_edge, const Round2 *inc, int w, bool ref_is_b,
                       double margin, Manifold *out) {
    V2 n = ref->n[ref_edge];
    V2 r1 = ref->v[ref_edge], r2 = ref->v[(ref_edge + 1) % ref->count];
    V2 t = v2_sub(r2, r1);
    Clip2 pts[2];
    int count = 0;
    int j = inc->count >= 2 ? incident_edge(inc, n, w) : -1;
    if (j < 0) {
        int k = w >= 0 ? w : 0;
        pts[count++] = (Clip2){inc->v[k], inc->vf[k], ref->ef[ref_edge]};
    } else {
        int j2 = (j + 1) % inc->count;
        pts[0] = (Clip2){inc->v[j], inc->vf[j], ref->ef[ref_edge]};
        pts[1] = (Clip2){inc->v[j2], inc->vf[j2], ref->ef[ref_edge]};
        count = 2;
        /* side 0: t . (x - r1) >= 0 at vertex ref_edge; side 1: t . (x - r2) <= 0 */
        for (int side = 0; side < 2 && count == 2; side++) {
            double sign = side == 0 ? -1.0 : 1.0;
            V2 o = side == 0 ? r1 : r2;
            double d0 = sign * v2_dot(t, v2_sub(pts[0].p, o));
            double d1 = sign * v2_dot(t, v2_sub(pts[1].p, o));
            FeatureHalf corner = ref->vf[side == 0 ? ref_edge : (ref_edge + 1) % ref->count];
            if (d0 > 0.0 && d1 > 0.0) {
                count = 0;
            } else if (d0 > 0.0 || d1 > 0.0) {
                int out_i = d0 > 0.0 ? 0 : 1;
                double f = d0 / (d0 - d1);
                pts[out_i].p = v2_mad(pts[0].p, f, v2_sub(pts[1].p, pts[0].p));
                pts[out_i].inc = inc->ef[j];
                pts[out_i].ref = corner;
            }
        }
    }
    out->normal = to3(ref_is_b ? n : v2_neg(n), 0.0);
    int kept = 0;
    for (int i = 0; i < count; i++) {
        V2 x = pts[i].p;
        double s = v2_dot(n, v2_sub(x, r1));
        V2 on_ref = v2_mad(v2_mad(x, -s, n), ref->radius, n);
        V2 on_inc = v2_mad(x, inc->radius, round2_cone(inc, x, v2_neg(n)));
        /* distance = (point_a - point_b) . normal = (on_inc - on_ref) . n either way */
        double d = v2_dot(v2_sub(on_inc, on_ref), n);
        if (!(d < margin))
            continue;
        ContactPoint *c = &out->points[kept++];
        Vec3 pr = to3(on_ref, ref->y), pi = to3(on_inc, inc->y);
        c->point_a = ref_is_b ? pi : pr;
        c->point_b = ref_is_b ? pr : pi;
        c->distance = d;
        c->feature =
            ref_is_b ? feature_pair(pts[i].inc, pts[i].ref) : feature_pair(pts[i].ref, pts[i].inc);
    }
    return out->count = kept;
}

typedef struct Closest2 {
    double d;
    V2 ca, cb; /* core points */
    FeatureHalf fa, fb;
    int ref_edge; /* face-like: the edge the vertex faces (>= 0), on B if ref_is_b */
    bool ref_is_b;
    int vertex; /* face-like: the facing vertex */
} Closest2;

static void closest2_offer(Closest2 *best, const Closest2 *c, double tol) {
    bool face_like = c->ref_edge >= 0, best_face_like = best->ref_edge >= 0;
    if (c->d < best->d - tol || (c->d <= best->d + tol && face_like && !best_face_like))
        *best = *c;
}

/* Exact closest pair of two disjoint cores. */
static Closest2 round2_closest(const Round2 *a, const Round2 *b, double tol) {
    Closest2 best = {.d = INFINITY, .ref_edge = -1};
    for (int pass = 0; pass < 2; pass++) {
        const Round2 *p = pass == 0 ? a : b, *q = pass == 0 ? b : a;
        int edges = q->count == 1 ? 1 : (q->count == 2 ? 1 : q->count);
        for (int i = 0; i < p->count; i++) {
            V2 x = p->v[i];
            for (int e = 0; e < edges; e++) {
                V2 q0 = q->v[e], q1 = q->count == 1 ? q->v[0] : q->v[(e + 1) % q->count];
                V2 d = v2_sub(q1, q0);
                double dd = v2_dot(d, d);
                double t = dd > 0.0 ? v2_dot(v2_sub(x, q0), d) / dd : 0.0;
                t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
                V2 y = v2_mad(q0, t, d);
                Closest2 c = {
                    .d = v2_norm(v2_sub(x, y)), .ref_edge = -1, .ref_is_b = pass == 0, .vertex = i};
                FeatureHalf fq;
                if (q->count == 1 || t <= 0.0)
                    fq = q->vf[e];
                else if (t >= 1.0)
                    fq = q->vf[(e + 1) % q->count];
                else {
                    fq = q->ef[e];
                    /* a segment's two edges are its two sides: take the one facing x */
                    int side = e;
                    if (q->count == 2 && v2_dot(q->n[0], v2_sub(x, q0)) < 0.0)
                        side = 1;
                    c.ref_edge = side;
                }
                c.ca = pass == 0 ? x : y;
                c.cb = pass == 0 ? y : x;
                c.fa = pass == 0 ? p->vf[i] : fq;
                c.fb = pass == 0 ? fq : p->vf[i];
                closest2_offer(&best, &c, tol);
            }
        }
    }
    return best;
}

static double round2_scale(const Round2 *s) {
    double m = s->radius;
    for (int i = 0; i < s->count; i++)
        m = fmax(m, fmax(fabs(s->v[i].u), fabs(s->v[i].v)));
    return m;
}

static int collide_round2(const Round2 *a, const Round2 *b, double margin, Manifold *out) {
    double radii = a->radius + b->radius;
    double tol = ROUND2_TIE_REL * (1.0 + round2_scale(a) + round2_scale(b));
    int eb, ea;
    double sb = max_separation(b, a, &eb); /* A's core against B's edges */
    double sa = max_separation(a, b, &ea);
    double sep = fmax(sa, sb);
    if (sep - radii >= margin)
        return out->count = 0;
    if (sep > 0.0) {
        Closest2 c = round2_closest(a, b, tol);
        if (!(c.d - radii < margin))
            return out->count = 0;
        if (c.ref_edge >= 0)
            return c.ref_is_b ? clip_round2(b, c.ref_edge, a, c.vertex, true, margin, out)
                              : clip_round2(a, c.ref_edge, b, c.vertex, false, margin, out);
        V2 n2 = v2_sub(c.ca, c.cb);
        double len = v2_norm(n2);
        n2 = (V2){n2.u / len, n2.v / len};
        V2 qa = v2_mad(c.ca, a->radius, round2_cone(a, c.ca, v2_neg(n2)));
        V2 qb = v2_mad(c.cb, b->radius, round2_cone(b, c.cb, n2));
        double d = v2_dot(v2_sub(qa, qb), n2);
        if (!(d < margin))
            return out->count = 0;
        out->normal = to3(n2, 0.0);
        out->points[0] = (ContactPoint){.point_a = to3(qa, a->y),
                                        .point_b = to3(qb, b->y),
                                        .distance = d,
                                        .feature = feature_pair(c.fa, c.fb)};
        return out->count = 1;
    }
    /* Cores overlap: B's edge unless A's is better beyond ties. */
    if (eb >= 0 && (ea < 0 || sb >= sa - tol))
        return clip_round2(b, eb, a, -1, true, margin, out);
    if (ea >= 0)
        return clip_round2(a, ea, b, -1, false, margin, out);
    return out->count = 0; /* two circles: not a planar pair */
}

int collide_polygon_polygon(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                            Manifold *out) {
    Round2 ra, rb;
    round2_polygon(a, pa, &ra);
    round2_polygon(b, pb, &rb);
    if (ra.count < 3 || rb.count < 3)
        return out->count = 0;
    return collide_round2(&ra, &rb, margin, out);
}

int collide_polygon_sphere(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                           Manifold *out) {
    Round2 ra, rb;
    round2_polygon(a, pa, &ra);
    round2_sphere(b, pb, &rb);
    if (ra.count < 3)
        return out->count = 0;
    return collide_round2(&ra, &rb, margin, out);
}

int collide_polygon_capsule(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                            Manifold *out) {
    Round2 ra, rb;
    round2_polygon(a, pa, &ra);
    round2_capsule(b, pb, &rb);
    if (ra.count < 3)
        return out->count = 0;
    return collide_round2(&ra, &rb, margin, out);
}

typedef struct PlaneCandidates2 {
    const Round2 *s;
    V2 n;
    double offset, margin;
} PlaneCandidates2;

static bool plane2_candidate(const void *ctx, int i, ContactPoint *out) {
    const PlaneCandidates2 *c = ctx;
    V2 w = c->s->v[i];
    double h = v2_dot(c->n, w) - c->offset;
    if (!(h < c->margin))
        return false;
    *out = (ContactPoint){.point_a = to3(w, c->s->y),
                          .point_b = to3(v2_mad(w, -h, c->n), c->s->y),
                          .distance = h,
                          .feature = feature_pair(c->s->vf[i], feature_half(FEATURE_FACE, 0))};
    return true;
}

/* The plane's section at the polygon's height: n2 . w <= offset2 in (u, v). */
int collide_polygon_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                          Manifold *out) {
    Round2 ra;
    round2_polygon(a, pa, &ra);
    Vec3 n = quat_rotate(pb.q, b->normal);
    double offset = b->offset + vec3_dot(n, pb.p);
    V2 n2 = to2(n);
    double len = v2_norm(n2);
    if (!(len > 1e-12) || ra.count < 1)
        return out->count = 0; /* a plane parallel to the x-z plane bounds nothing in it */
    PlaneCandidates2 c = {.s = &ra,
                          .n = {n2.u / len, n2.v / len},
                          .offset = (offset - n.y * ra.y) / len,
                          .margin = margin};
    out->normal = to3(c.n, 0.0);
    out->count = contact_points_select(ra.count, plane2_candidate, &c, out->normal, 2, out->points);
    return out->count;
}
