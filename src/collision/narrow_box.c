/* Analytic contacts of polyhedra: box-plane, hull-plane and box-box.
 *
 * Against a plane every vertex below plane + margin is a contact (vertex feature against face
 * 0); more than four are reduced by contact_points_select (deepest first, then spread).
 *
 * Box-box follows the separating-axis test of Ericson, Real-Time Collision Detection, 4.4.1
 * and 5.2.1 (Gottschalk's OBB test): 15 candidate axes, the 3 face normals of each box and the
 * 9 cross products of their edge directions. The Minkowski difference of two boxes only has
 * faces with those normals, so while the boxes overlap the largest separation over the 15 axes
 * is exactly minus the penetration depth, i.e. the signed MTD (000 3.6 Definition 1); while
 * they are apart the axes only bound the distance from below (corner to corner is farther), so
 * the distance is then found exactly from the closest features: every vertex against the other
 * box (point-OBB clamping, Ericson 5.1.4) and every edge pair (segment-segment, 5.1.9).
 *
 * A face axis (or a separated vertex-face closest pair) makes a face contact: the incident
 * face (the other box's face most anti-parallel to the reference normal) is clipped against
 * the side planes of the reference face (Sutherland-Hodgman, Ericson 8.3.4; as in ODE's
 * dBoxBox and Box2D's b2ClipPolygons), points below reference + margin are kept and more than
 * four are reduced (deepest first, then the largest area). An edge axis gives one point, the
 * closest points of the two supporting edges.
 *
 * Feature ids follow the clipping: an incident vertex kept against the reference face is
 * (vertex, face); a point cut from an incident edge by a side plane is (edge, edge); a corner of
 * the reference face inside the incident face is (face, vertex). They name geometric features,
 * so they stay the same while the same features touch. Exact ties between axes (a face of A as
 * deep as a face of B, an edge axis parallel to a face normal) go to B's faces, then A's, then
 * edges: a stateless rule cannot give hysteresis between truly equivalent axes, e.g. two
 * equal boxes stacked exactly may swap the reference box as they jiggle.
 */
#include <math.h>
#include <string.h>

#include "collision_internal.h"

/* Relative tolerance for exact ties between SAT axes and between closest-feature candidates:
 * far above rounding, far below anything geometric. */
#define BOX_TIE_REL 1e-12
/* Snap radius for naming clipped points after a nearby corner, relative to the reference
 * box's smallest half extent: 2e-3 of 5 cm is 0.1 mm, ten times a resting pile's tremble. */
#define BOX_SNAP_REL 2e-3
/* A manifold's reference is an edge axis near the best face's normal (within acos BOX_EDGE_COS,
 * 26 degrees: a genuine edge-on-edge contact, two boxes crossed on their edges, has its face
 * normals far from the edge axis and keeps it) only when it overlaps less than that face by
 * BOX_EDGE_REL of the face's overlap plus BOX_EDGE_ABS of the smaller box's smallest half extent
 * (ODE's dBoxBox weighs edge axes by 1.05; Box2D v3's polygon collider keeps a face within a slop).
 * A box lying face down on another, tilted a little and turned about the normal, has an edge-pair
 * axis within a degree of the face normal that overlaps a micrometre less: it met the box below on
 * the one point where two edges cross and rocked on it from corner to corner, each new corner
 * starting deep (in scenes/pile.lua a column of boxes sank 12 mm into each other; issue 28). The
 * face clip gives the whole patch; its deepest point is then deeper than the minimum translation
 * distance by at most that preference. shape_distance (margin INFINITY) keeps the exact MTD. */
#define BOX_EDGE_COS 0.9
#define BOX_EDGE_REL 0.05
#define BOX_EDGE_ABS 0.02

/* ===== Planes ===== */

static void plane_world(const Shape *plane, Pose pose, Vec3 *n, double *offset) {
    *n = quat_rotate(pose.q, plane->normal);
    *offset = plane->offset + vec3_dot(*n, pose.p);
}

typedef struct PlaneCandidates {
    const Vec3 *local; /* body-frame vertices */
    Pose pose;
    Vec3 n;
    double offset, margin;
} PlaneCandidates;

static bool plane_candidate(const void *ctx, int i, ContactPoint *out) {
    const PlaneCandidates *c = ctx;
    Vec3 w = pose_apply(c->pose, c->local[i]);
    double h = vec3_dot(c->n, w) - c->offset;
    if (!(h < c->margin))
        return false;
    *out = (ContactPoint){.point_a = w,
                          .point_b = vec3_mad(w, -h, c->n),
                          .distance = h,
                          .feature = feature_id(FEATURE_VERTEX, i, FEATURE_FACE, 0)};
    return true;
}

static int vertices_plane(const Vec3 *local, int count, Pose pa, const Shape *plane, Pose pb,
                          double margin, Manifold *out) {
    PlaneCandidates c = {.local = local, .pose = pa, .margin = margin};
    plane_world(plane, pb, &c.n, &c.offset);
    out->normal = c.n;
    out->normal_owner = MANIFOLD_NORMAL_OF_B;
    out->count =
        contact_points_select(count, plane_candidate, &c, c.n, MANIFOLD_FACE_POINTS, out->points);
    return out->count;
}

static void box_local_vertices(Vec3 h, Vec3 v[8]) {
    for (int i = 0; i < 8; i++)
        v[i] = vec3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z);
}

int collide_box_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                      Manifold *out) {
    Vec3 v[8];
    box_local_vertices(a->half_extents, v);
    return vertices_plane(v, 8, pa, b, pb, margin, out);
}

int collide_hull_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                       Manifold *out) {
    if (!a->hull)
        return out->count = 0;
    return vertices_plane(a->hull->vertices, a->hull->vertex_count, pa, b, pb, margin, out);
}

/* ===== Box geometry ===== */

typedef struct BoxW {
    Vec3 c;      /* world centre */
    Vec3 ax[3];  /* world unit axes */
    double h[3]; /* half extents */
} BoxW;

static BoxW box_world(const Shape *s, Pose pose) {
    Mat3 r = quat_to_mat3(pose.q);
    BoxW b = {.c = pose.p, .h = {s->half_extents.x, s->half_extents.y, s->half_extents.z}};
    for (int k = 0; k < 3; k++)
        b.ax[k] = vec3(r.m[0][k], r.m[1][k], r.m[2][k]);
    return b;
}

static Vec3 box_vertex(const BoxW *b, int v) {
    Vec3 p = b->c;
    for (int k = 0; k < 3; k++)
        p = vec3_mad(p, (v >> k) & 1 ? b->h[k] : -b->h[k], b->ax[k]);
    return p;
}

/* Edge k*4 + b1 + 2 b2 (collision_internal.h) joining vertices u and w (differing in bit k). */
static int box_edge_index(int u, int w) {
    int diff = u ^ w;
    int k = diff == 1 ? 0 : (diff == 2 ? 1 : 2);
    return k * 4 + ((u >> ((k + 1) % 3)) & 1) + 2 * ((u >> ((k + 2) % 3)) & 1);
}

/* The two vertices of edge e: bit k clear, then set. */
static void box_edge_vertices(int e, int *u, int *w) {
    int k = e / 4;
    int base = ((e & 1) << ((k + 1) % 3)) | (((e >> 1) & 1) << ((k + 2) % 3));
    *u = base;
    *w = base | (1 << k);
}

/* Face f = 2k + positive: its vertices counter-clockwise seen from outside. */
static void box_face_vertices(int f, int v[4]) {
    int k = f / 2, pos = f & 1, k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    static const int ccw[2][4][2] = {{{0, 0}, {0, 1}, {1, 1}, {1, 0}},
                                     {{0, 0}, {1, 0}, {1, 1}, {0, 1}}};
    for (int i = 0; i < 4; i++)
        v[i] = (pos << k) | (ccw[pos][i][0] << k1) | (ccw[pos][i][1] << k2);
}

/* ===== Face clipping ===== */

typedef struct BoxClip {
    Vec3 p;
    FeatureHalf inc, ref; /* features on the incident and the reference box */
    FeatureHalf carrier;  /* feature holding the segment to the next vertex */
    bool carrier_ref;     /* carrier is a reference-face edge (else an incident edge) */
} BoxClip;

enum { BOX_CLIP_MAX = 16 };

/* Corner of the reference face shared by its edges e1 and e2, or -1 for parallel edges. */
static int shared_vertex(int e1, int e2) {
    int u1, w1, u2, w2;
    box_edge_vertices(e1, &u1, &w1);
    box_edge_vertices(e2, &u2, &w2);
    if (u1 == u2 || u1 == w2)
        return u1;
    if (w1 == u2 || w1 == w2)
        return w1;
    return -1;
}

/* Clips poly against the plane m . x <= o of the reference edge side_edge. */
static int clip_side(const BoxClip *in, int n, Vec3 m, double o, int side_edge,
                     FeatureHalf inc_face, BoxClip *out) {
    int k = 0;
    for (int i = 0; i < n && k < BOX_CLIP_MAX; i++) {
        BoxClip p = in[i];
        const BoxClip *q = &in[(i + 1) % n];
        double dp = vec3_dot(m, p.p) - o, dq = vec3_dot(m, q->p) - o;
        if (dp <= 0.0) {
            if (dp == 0.0 && dq > 0.0) { /* leaves along the side plane from here */
                p.carrier = feature_half(FEATURE_EDGE, side_edge);
                p.carrier_ref = true;
            }
            out[k++] = p;
        }
        if (((dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0)) && k < BOX_CLIP_MAX) {
            BoxClip x;
            x.p = vec3_add(p.p, vec3_scale(vec3_sub(q->p, p.p), dp / (dp - dq)));
            if (p.carrier_ref) {
                int corner = shared_vertex(feature_half_index(p.carrier), side_edge);
                x.inc = inc_face;
                x.ref = corner >= 0 ? feature_half(FEATURE_VERTEX, corner)
                                    : feature_half(FEATURE_EDGE, side_edge);
            } else {
                x.inc = p.carrier;
                x.ref = feature_half(FEATURE_EDGE, side_edge);
            }
            if (dp < 0.0) { /* leaving: the next segment runs along the side plane */
                x.carrier = feature_half(FEATURE_EDGE, side_edge);
                x.carrier_ref = true;
            } else { /* entering: the rest of p-q */
                x.carrier = p.carrier;
                x.carrier_ref = p.carrier_ref;
            }
            out[k++] = x;
        }
    }
    return k;
}

/* Incident face of box inc against reference normal nr (outward from the reference box): the
 * face most anti-parallel to nr, among the faces holding vertex w if w >= 0. */
static int incident_face(const BoxW *inc, Vec3 nr, int w) {
    int best = -1;
    double best_dot = INFINITY;
    for (int f = 0; f < 6; f++) {
        int k = f / 2;
        if (w >= 0 && ((w >> k) & 1) != (f & 1))
            continue;
        double d = vec3_dot(inc->ax[k], nr) * ((f & 1) ? 1.0 : -1.0);
        if (d < best_dot) {
            best_dot = d;
            best = f;
        }
    }
    return best;
}

typedef struct FaceContact {
    int count;
    ContactPoint points[BOX_CLIP_MAX];
} FaceContact;

/* Clips the incident face of box inc against reference face ref_face of box ref and writes
 * the manifold (ref_is_b: the reference box is B, so the normal is the reference normal). */
static int face_contact(const BoxW *ref, int ref_face, const BoxW *inc, int w, bool ref_is_b,
                        double margin, Manifold *out) {
    int k = ref_face / 2;
    double sign = (ref_face & 1) ? 1.0 : -1.0;
    Vec3 nr = vec3_scale(ref->ax[k], sign);
    double plane = vec3_dot(nr, ref->c) + ref->h[k];
    int inc_face = incident_face(inc, nr, w);
    int iv[4];
    box_face_vertices(inc_face, iv);
    BoxClip buf[2][BOX_CLIP_MAX];
    int n = 4;
    Vec3 inc_corner[4];
    for (int i = 0; i < 4; i++) {
        inc_corner[i] = box_vertex(inc, iv[i]);
        buf[0][i] =
            (BoxClip){.p = inc_corner[i],
                      .inc = feature_half(FEATURE_VERTEX, iv[i]),
                      .ref = feature_half(FEATURE_FACE, ref_face),
                      .carrier = feature_half(FEATURE_EDGE, box_edge_index(iv[i], iv[(i + 1) % 4])),
                      .carrier_ref = false};
    }
    int rv[4];
    box_face_vertices(ref_face, rv);
    int cur = 0;
    for (int i = 0; i < 4 && n > 0; i++) {
        int u = rv[i], v = rv[(i + 1) % 4];
        int edge = box_edge_index(u, v);
        /* The side plane through edge u-v: the axis along which the edge is fixed. */
        int axis = 3 - k - (edge / 4);
        double s = ((u >> axis) & 1) ? 1.0 : -1.0;
        Vec3 m = vec3_scale(ref->ax[axis], s);
        double o = vec3_dot(m, ref->c) + ref->h[axis];
        n = clip_side(buf[cur], n, m, o, edge, feature_half(FEATURE_FACE, inc_face), buf[1 - cur]);
        cur = 1 - cur;
    }
    /* Equal faces stacked corner on corner put incident vertices on the reference face's edges:
     * a tremble of 1e-5 m moves each vertex in and out, and clipping turns it into an edge-edge
     * point and back, so its feature id (and the contact's identity) would flicker. A point
     * within snap of an incident vertex (or, failing that, of a reference corner) is named
     * after that vertex, so the id stays while the same corner touches. */
    double snap = BOX_SNAP_REL * fmin(fmin(ref->h[0], ref->h[1]), ref->h[2]);
    bool named[BOX_CLIP_MAX] = {false};
    for (int j = 0; j < 8; j++) {
        /* Corners 0-3: the incident face's vertices; 4-7: the reference face's corners (their
         * lateral distance counts: the clipped point lies on the incident face). */
        bool incident = j < 4;
        Vec3 corner = incident ? inc_corner[j] : box_vertex(ref, rv[j - 4]);
        int near = -1, count = 0;
        for (int i = 0; i < n; i++) {
            Vec3 d = vec3_sub(buf[cur][i].p, corner);
            if (!incident)
                d = vec3_mad(d, -vec3_dot(d, nr), nr);
            if (vec3_dot(d, d) < snap * snap) {
                near = i;
                count++;
            }
        }
        if (count != 1 || named[near])
            continue; /* no point, or several: a tiny face, keep the clipped names */
        named[near] = true;
        buf[cur][near].inc =
            incident ? feature_half(FEATURE_VERTEX, iv[j]) : feature_half(FEATURE_FACE, inc_face);
        buf[cur][near].ref = incident ? feature_half(FEATURE_FACE, ref_face)
                                      : feature_half(FEATURE_VERTEX, rv[j - 4]);
    }
    FaceContact fc = {0};
    for (int i = 0; i < n; i++) {
        const BoxClip *c = &buf[cur][i];
        double s = vec3_dot(nr, c->p) - plane;
        if (!(s < margin))
            continue;
        Vec3 on_ref = vec3_mad(c->p, -s, nr);
        ContactPoint *p = &fc.points[fc.count++];
        p->distance = s;
        if (ref_is_b) {
            p->point_a = c->p;
            p->point_b = on_ref;
            p->feature = feature_pair(c->inc, c->ref);
        } else {
            p->point_a = on_ref;
            p->point_b = c->p;
            p->feature = feature_pair(c->ref, c->inc);
        }
    }
    out->normal = ref_is_b ? nr : vec3_neg(nr);
    out->normal_owner = ref_is_b ? MANIFOLD_NORMAL_OF_B : MANIFOLD_NORMAL_OF_A;
    fc.count = contact_points_reduce(fc.points, fc.count, out->normal, MANIFOLD_FACE_POINTS);
    memcpy(out->points, fc.points, (size_t)fc.count * sizeof fc.points[0]);
    return out->count = fc.count;
}

/* ===== Box-box ===== */

/* The feature of box b at parameter t of its edge e (ends are vertices). */
static FeatureHalf edge_feature(int e, double t) {
    int u, w;
    box_edge_vertices(e, &u, &w);
    if (t <= 0.0)
        return feature_half(FEATURE_VERTEX, u);
    if (t >= 1.0)
        return feature_half(FEATURE_VERTEX, w);
    return feature_half(FEATURE_EDGE, e);
}

static int edge_contact(const BoxW *a, int ea, const BoxW *b, int eb, Vec3 n, Manifold *out) {
    int ua, wa, ub, wb;
    box_edge_vertices(ea, &ua, &wa);
    box_edge_vertices(eb, &ub, &wb);
    double s, t;
    Vec3 a0 = box_vertex(a, ua), a1 = box_vertex(a, wa);
    Vec3 b0 = box_vertex(b, ub), b1 = box_vertex(b, wb);
    segment_closest_points(a0, a1, b0, b1, &s, &t);
    ContactPoint *p = &out->points[0];
    p->point_a = vec3_add(a0, vec3_scale(vec3_sub(a1, a0), s));
    p->point_b = vec3_add(b0, vec3_scale(vec3_sub(b1, b0), t));
    out->normal = n;
    p->distance = vec3_dot(vec3_sub(p->point_a, p->point_b), n);
    p->feature = feature_pair(edge_feature(ea, s), edge_feature(eb, t));
    return out->count = 1;
}

/* Edge of box b along axis k that is extreme in direction d. */
static int support_edge(const BoxW *b, int k, Vec3 d) {
    int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    return k * 4 + (vec3_dot(b->ax[k1], d) >= 0.0) + 2 * (vec3_dot(b->ax[k2], d) >= 0.0);
}

typedef struct Closest {
    double d;
    Vec3 pa, pb;
    FeatureHalf fa, fb;
    int ref_face; /* face-like: the face (of B if ref_is_b, else of A) the vertex faces */
    bool ref_is_b;
    int vertex; /* face-like: the vertex of the other box */
} Closest;

/* Closest point of box b to x, with the feature it lies on and, for a face, the face. */
static double box_closest(const BoxW *b, Vec3 x, Vec3 *q, FeatureHalf *feature, int *face) {
    Vec3 r = vec3_sub(x, b->c);
    double l[3], c[3];
    int clamped = 0, bits = 0, free_axis = 0, face_axis = 0;
    for (int k = 0; k < 3; k++) {
        l[k] = vec3_dot(r, b->ax[k]);
        c[k] = fmax(-b->h[k], fmin(b->h[k], l[k]));
        if (c[k] != l[k]) {
            clamped++;
            face_axis = k;
        } else {
            free_axis = k;
        }
        if (c[k] >= 0.0)
            bits |= 1 << k;
    }
    *q = b->c;
    for (int k = 0; k < 3; k++)
        *q = vec3_mad(*q, c[k], b->ax[k]);
    *face = -1;
    if (clamped <= 1) {
        *face = 2 * face_axis + (l[face_axis] > 0.0);
        *feature = feature_half(FEATURE_FACE, *face);
    } else if (clamped == 2) {
        int k1 = (free_axis + 1) % 3, k2 = (free_axis + 2) % 3;
        *feature =
            feature_half(FEATURE_EDGE, free_axis * 4 + ((bits >> k1) & 1) + 2 * ((bits >> k2) & 1));
    } else {
        *feature = feature_half(FEATURE_VERTEX, bits);
    }
    return vec3_norm(vec3_sub(x, *q));
}

static void closest_offer(Closest *best, const Closest *c, double tol) {
    bool face_like = c->ref_face >= 0, best_face_like = best->ref_face >= 0;
    if (c->d < best->d - tol || (c->d <= best->d + tol && face_like && !best_face_like))
        *best = *c;
}

/* Exact closest features of two disjoint boxes; sep (the largest SAT separation) bounds their
 * distance from below. */
static Closest box_box_closest(const BoxW *a, const BoxW *b, double sep, double tol) {
    Closest best = {.d = INFINITY, .ref_face = -1};
    for (int pass = 0; pass < 2; pass++) {
        const BoxW *p = pass == 0 ? a : b, *q = pass == 0 ? b : a;
        for (int v = 0; v < 8; v++) {
            Closest c = {.ref_is_b = pass == 0, .vertex = v};
            Vec3 x = box_vertex(p, v), y;
            FeatureHalf fq;
            c.d = box_closest(q, x, &y, &fq, &c.ref_face);
            if (pass == 0) {
                c.pa = x, c.pb = y, c.fa = feature_half(FEATURE_VERTEX, v), c.fb = fq;
            } else {
                c.pa = y, c.pb = x, c.fa = fq, c.fb = feature_half(FEATURE_VERTEX, v);
            }
            closest_offer(&best, &c, tol);
        }
    }
    /* A vertex at the SAT bound is closest: an edge pair can at best tie, and a tie never
     * replaces it (closest_offer), so the edge pairs are skipped (a box resting on a face). */
    if (best.d <= sep + tol)
        return best;
    /* Edge pairs, skipping those whose bounding spheres are already farther than the best
     * (the vertex checks above make that bound tight quickly); compared squared, no root. */
    Vec3 e0[2][12], e1[2][12], mid[2][12];
    double half[2][12];
    for (int k = 0; k < 2; k++) {
        const BoxW *x = k == 0 ? a : b;
        for (int e = 0; e < 12; e++) {
            int u, w;
            box_edge_vertices(e, &u, &w);
            e0[k][e] = box_vertex(x, u);
            e1[k][e] = box_vertex(x, w);
            mid[k][e] = vec3_scale(vec3_add(e0[k][e], e1[k][e]), 0.5);
            half[k][e] = x->h[e / 4];
        }
    }
    for (int ea = 0; ea < 12; ea++) {
        for (int eb = 0; eb < 12; eb++) {
            Vec3 gap = vec3_sub(mid[0][ea], mid[1][eb]);
            double reach = best.d + tol + half[0][ea] + half[1][eb];
            if (vec3_dot(gap, gap) > reach * reach)
                continue;
            double s, t;
            segment_closest_points(e0[0][ea], e1[0][ea], e0[1][eb], e1[1][eb], &s, &t);
            Closest c = {.ref_face = -1};
            c.pa = vec3_add(e0[0][ea], vec3_scale(vec3_sub(e1[0][ea], e0[0][ea]), s));
            c.pb = vec3_add(e0[1][eb], vec3_scale(vec3_sub(e1[1][eb], e0[1][eb]), t));
            c.d = vec3_norm(vec3_sub(c.pa, c.pb));
            c.fa = edge_feature(ea, s);
            c.fb = edge_feature(eb, t);
            closest_offer(&best, &c, tol);
        }
    }
    return best;
}

static double smallest_half_extent(Vec3 half_a, Vec3 half_b) {
    return fmin(fmin(fmin(half_a.x, half_a.y), half_a.z), fmin(fmin(half_b.x, half_b.y), half_b.z));
}

/* The face wins when its overlap f <= e + REL f + ABS s, e the edge axis' (>= the MTD's): so
 * f - e <= (REL e + ABS s) / (1 - REL). */
double box_box_face_allowance(Vec3 half_a, Vec3 half_b, double overlap) {
    return (BOX_EDGE_REL * fmax(overlap, 0.0) +
            BOX_EDGE_ABS * smallest_half_extent(half_a, half_b)) /
           (1.0 - BOX_EDGE_REL);
}

/* How much less an edge axis must overlap than the best face to be an overlapping pair's
 * reference (BOX_EDGE_COS above); 0 for a distance query (margin INFINITY). */
static double face_preference(const BoxW *a, const BoxW *b, double face_sep, Vec3 face_n,
                              Vec3 edge_n, double margin) {
    if (!isfinite(margin) || fabs(vec3_dot(face_n, edge_n)) < BOX_EDGE_COS)
        return 0.0;
    Vec3 ha = vec3(a->h[0], a->h[1], a->h[2]), hb = vec3(b->h[0], b->h[1], b->h[2]);
    return BOX_EDGE_REL * -face_sep + BOX_EDGE_ABS * smallest_half_extent(ha, hb);
}

int collide_box_box(const Shape *sa, Pose pa, const Shape *sb, Pose pb, double margin,
                    Manifold *out) {
    BoxW a = box_world(sa, pa), b = box_world(sb, pb);
    Vec3 t = vec3_sub(a.c, b.c); /* from B to A */
    double scale = a.h[0] + a.h[1] + a.h[2] + b.h[0] + b.h[1] + b.h[2];
    double tol = BOX_TIE_REL * (scale + vec3_norm(t));

    /* Separating axes (Gottschalk's OBB test, Ericson 4.4.1): with R = A^T B every projected
     * radius is a sum of half extents times |R| entries, so no axis needs a box_radius call. */
    double r[3][3], abs_r[3][3], ta[3], tb[3];
    for (int i = 0; i < 3; i++) {
        ta[i] = vec3_dot(t, a.ax[i]);
        tb[i] = vec3_dot(t, b.ax[i]);
        for (int j = 0; j < 3; j++) {
            r[i][j] = vec3_dot(a.ax[i], b.ax[j]);
            abs_r[i][j] = fabs(r[i][j]);
        }
    }
    /* Face axes: B's first, then A's (a tie keeps B's). */
    double face_sep = -INFINITY;
    int face = -1; /* 0..2: B's axis k; 3..5: A's axis k-3 */
    for (int i = 0; i < 6; i++) {
        double tl, ra, rb;
        if (i < 3) {
            tl = tb[i];
            ra = a.h[0] * abs_r[0][i] + a.h[1] * abs_r[1][i] + a.h[2] * abs_r[2][i];
            rb = b.h[i];
        } else {
            int k = i - 3;
            tl = ta[k];
            ra = a.h[k];
            rb = b.h[0] * abs_r[k][0] + b.h[1] * abs_r[k][1] + b.h[2] * abs_r[k][2];
        }
        double sep = fabs(tl) - ra - rb;
        if (sep > face_sep + (face >= 0 ? tol : 0.0)) {
            face_sep = sep;
            face = i;
        }
    }
    Vec3 face_n = face < 3 ? b.ax[face] : a.ax[face - 3];
    if ((face < 3 ? tb[face] : ta[face - 3]) < 0.0)
        face_n = vec3_neg(face_n);
    double edge_sep = -INFINITY;
    int edge_i = -1, edge_j = -1;
    for (int i = 0; i < 3; i++) {
        int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        for (int j = 0; j < 3; j++) {
            int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            double len = vec3_norm(vec3_cross(a.ax[i], b.ax[j]));
            if (len < 1e-12) /* parallel edges: the face axes cover them */
                continue;
            /* t . (a_i x b_j) and the radii along a_i x b_j, unnormalised. */
            double tl = ta[i2] * r[i1][j] - ta[i1] * r[i2][j];
            double ra = a.h[i1] * abs_r[i2][j] + a.h[i2] * abs_r[i1][j];
            double rb = b.h[j1] * abs_r[i][j2] + b.h[j2] * abs_r[i][j1];
            double sep = (fabs(tl) - ra - rb) / len;
            if (sep > edge_sep) {
                edge_sep = sep;
                edge_i = i;
                edge_j = j;
            }
        }
    }
    Vec3 edge_n = {0, 0, 0};
    if (edge_i >= 0) {
        edge_n = vec3_normalize(vec3_cross(a.ax[edge_i], b.ax[edge_j]));
        if (vec3_dot(t, edge_n) < 0.0)
            edge_n = vec3_neg(edge_n);
    }
    double sep_max = fmax(face_sep, edge_sep);
    if (sep_max >= margin) /* every axis bounds the distance from below */
        return out->count = 0;

    if (sep_max > 0.0) {
        Closest c = box_box_closest(&a, &b, sep_max, tol);
        if (!(c.d < margin))
            return out->count = 0;
        if (c.ref_face >= 0)
            return c.ref_is_b ? face_contact(&b, c.ref_face, &a, c.vertex, true, margin, out)
                              : face_contact(&a, c.ref_face, &b, c.vertex, false, margin, out);
        out->normal = vec3_scale(vec3_sub(c.pa, c.pb), 1.0 / c.d);
        out->points[0] = (ContactPoint){
            .point_a = c.pa, .point_b = c.pb, .distance = c.d, .feature = feature_pair(c.fa, c.fb)};
        return out->count = 1;
    }

    if (edge_i >= 0 && edge_sep > face_sep + fmax(tol, face_preference(&a, &b, face_sep, face_n,
                                                                       edge_n, margin))) {
        int ea = support_edge(&a, edge_i, vec3_neg(edge_n));
        int eb = support_edge(&b, edge_j, edge_n);
        return edge_contact(&a, ea, &b, eb, edge_n, out);
    }
    if (face < 3) {
        int k = face;
        int f = 2 * k + (vec3_dot(b.ax[k], face_n) > 0.0);
        return face_contact(&b, f, &a, -1, true, margin, out);
    }
    int k = face - 3;
    int f = 2 * k + (vec3_dot(a.ax[k], face_n) < 0.0); /* A's face points to B: -face_n */
    return face_contact(&a, f, &b, -1, false, margin, out);
}
