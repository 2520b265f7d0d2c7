/* GJK/EPA (src/collision/gjk.c), generic convex manifolds (gjk_manifold.c) and convex hulls
 * (hull.c) against brute force.
 *
 * References, computed here independently of the code under test: for two polytopes apart,
 * the minimum over vertex-face and edge-edge pairs of the exact feature distance; overlapping,
 * the exhaustive separating-axis minimum over both shapes' face normals and every edge-pair
 * cross product (exact for convex polytopes); sphere-hull from the point-polytope distance;
 * capsule-box from the segment's distance to the box (the point-box distance by clamping,
 * minimised along the segment by golden section) or its separating-axis depth. Each random test
 * prints its largest error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/collision.h"
#include "testutil.h"

#include "../src/collision/collision_internal.h"

static Vec3 rng_vec(TestRng *r, double h) {
    return vec3(test_rng_range(r, -h, h), test_rng_range(r, -h, h), test_rng_range(r, -h, h));
}

/* ===== Reference polytopes (world frame) ===== */

#define POLY_V 64
#define POLY_F 128
#define POLY_FV 512
#define POLY_E 256

typedef struct Poly {
    int nv, nf, ne;
    Vec3 v[POLY_V];
    Vec3 fn[POLY_F];
    double fo[POLY_F];
    int first[POLY_F], count[POLY_F];
    int fv[POLY_FV];
    int e[POLY_E][2];
} Poly;

static void poly_edges(Poly *p) {
    p->ne = 0;
    for (int f = 0; f < p->nf; f++)
        for (int k = 0; k < p->count[f]; k++) {
            int u = p->fv[p->first[f] + k], w = p->fv[p->first[f] + (k + 1) % p->count[f]];
            if (u < w) {
                p->e[p->ne][0] = u;
                p->e[p->ne][1] = w;
                p->ne++;
            }
        }
}

/* A box's faces built by sorting the four corners of each side by angle (no shared tables). */
static void poly_box(Poly *p, Vec3 h, Pose pose) {
    p->nv = 8;
    for (int i = 0; i < 8; i++)
        p->v[i] =
            pose_apply(pose, vec3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z));
    p->nf = 6;
    int at = 0;
    for (int f = 0; f < 6; f++) {
        int axis = f / 2, bit = f % 2;
        Vec3 ln = {0, 0, 0};
        double *c = axis == 0 ? &ln.x : axis == 1 ? &ln.y : &ln.z;
        *c = bit ? 1 : -1;
        Vec3 n = quat_rotate(pose.q, ln);
        int idx[4], m = 0;
        for (int i = 0; i < 8; i++)
            if (((i >> axis) & 1) == bit)
                idx[m++] = i;
        Vec3 center = {0, 0, 0};
        for (int k = 0; k < 4; k++)
            center = vec3_add(center, vec3_scale(p->v[idx[k]], 0.25));
        Vec3 t1, t2;
        vec3_tangent_basis(n, &t1, &t2);
        double ang[4];
        for (int k = 0; k < 4; k++) {
            Vec3 d = vec3_sub(p->v[idx[k]], center);
            ang[k] = atan2(vec3_dot(d, t2), vec3_dot(d, t1));
        }
        for (int a = 0; a < 4; a++) /* sort by angle: counter-clockwise about n */
            for (int b = a + 1; b < 4; b++)
                if (ang[b] < ang[a]) {
                    double t = ang[a];
                    ang[a] = ang[b];
                    ang[b] = t;
                    int ti = idx[a];
                    idx[a] = idx[b];
                    idx[b] = ti;
                }
        p->fn[f] = n;
        p->fo[f] = vec3_dot(n, p->v[idx[0]]);
        p->first[f] = at;
        p->count[f] = 4;
        for (int k = 0; k < 4; k++)
            p->fv[at++] = idx[k];
    }
    poly_edges(p);
}

static void poly_hull(Poly *p, const Hull *h, Pose pose) {
    assert_true(h->vertex_count <= POLY_V && h->face_count <= POLY_F);
    p->nv = h->vertex_count;
    for (int i = 0; i < p->nv; i++)
        p->v[i] = pose_apply(pose, h->vertices[i]);
    p->nf = h->face_count;
    int at = 0;
    for (int f = 0; f < p->nf; f++) {
        const HullFace *face = &h->faces[f];
        p->fn[f] = quat_rotate(pose.q, face->normal);
        p->fo[f] = face->offset + vec3_dot(p->fn[f], pose.p);
        p->first[f] = at;
        p->count[f] = face->count;
        for (int k = 0; k < face->count; k++)
            p->fv[at++] = h->face_vertices[face->first + k];
    }
    poly_edges(p);
}

static double point_segment_distance(Vec3 x, Vec3 a, Vec3 b) {
    Vec3 ab = vec3_sub(b, a);
    double t = vec3_dot(vec3_sub(x, a), ab) / vec3_dot(ab, ab);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return vec3_norm(vec3_sub(x, vec3_mad(a, t, ab)));
}

/* Segment-segment distance: the interior stationary point when it exists, else the four
 * endpoint-to-segment distances. */
static double segment_segment_distance(Vec3 p0, Vec3 p1, Vec3 q0, Vec3 q1) {
    double best =
        fmin(fmin(point_segment_distance(p0, q0, q1), point_segment_distance(p1, q0, q1)),
             fmin(point_segment_distance(q0, p0, p1), point_segment_distance(q1, p0, p1)));
    Vec3 d1 = vec3_sub(p1, p0), d2 = vec3_sub(q1, q0), r = vec3_sub(p0, q0);
    double a = vec3_dot(d1, d1), b = vec3_dot(d1, d2), c = vec3_dot(d2, d2);
    double d = vec3_dot(d1, r), e = vec3_dot(d2, r), den = a * c - b * b;
    if (den > 1e-14 * a * c) {
        double s = (b * e - c * d) / den, t = (a * e - b * d) / den;
        if (s > 0 && s < 1 && t > 0 && t < 1)
            best = fmin(best, vec3_norm(vec3_sub(vec3_mad(p0, s, d1), vec3_mad(q0, t, d2))));
    }
    return best;
}

static double point_face_distance(const Poly *p, int f, Vec3 x) {
    Vec3 n = p->fn[f];
    double h = vec3_dot(n, x) - p->fo[f];
    Vec3 q = vec3_mad(x, -h, n);
    bool inside = true;
    for (int k = 0; k < p->count[f] && inside; k++) {
        Vec3 a = p->v[p->fv[p->first[f] + k]], b = p->v[p->fv[p->first[f] + (k + 1) % p->count[f]]];
        if (vec3_dot(vec3_cross(vec3_sub(b, a), vec3_sub(q, a)), n) < 0)
            inside = false;
    }
    if (inside)
        return fabs(h);
    double best = INFINITY;
    for (int k = 0; k < p->count[f]; k++)
        best = fmin(best, point_segment_distance(x, p->v[p->fv[p->first[f] + k]],
                                                 p->v[p->fv[p->first[f] + (k + 1) % p->count[f]]]));
    return best;
}

/* Signed distance of a point to a polytope: exact outside, the face-plane maximum inside. */
static double point_poly_signed(const Poly *p, Vec3 x) {
    double inside = -INFINITY;
    for (int f = 0; f < p->nf; f++)
        inside = fmax(inside, vec3_dot(p->fn[f], x) - p->fo[f]);
    if (inside <= 0)
        return inside;
    double best = INFINITY;
    for (int f = 0; f < p->nf; f++)
        best = fmin(best, point_face_distance(p, f, x));
    return best;
}

static void project(const Poly *p, Vec3 u, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int i = 0; i < p->nv; i++) {
        double t = vec3_dot(p->v[i], u);
        *lo = fmin(*lo, t);
        *hi = fmax(*hi, t);
    }
}

/* Exhaustive separating-axis depth (> 0 overlapping; <= 0 a separating axis exists). */
static double sat_depth(const Poly *a, const Poly *b) {
    double depth = INFINITY;
    for (int pass = 0; pass < 3; pass++) {
        int n = pass == 0 ? a->nf : pass == 1 ? b->nf : a->ne * b->ne;
        for (int i = 0; i < n; i++) {
            Vec3 u;
            if (pass == 0)
                u = a->fn[i];
            else if (pass == 1)
                u = b->fn[i];
            else {
                int ia = i / b->ne, ib = i % b->ne;
                Vec3 ea = vec3_sub(a->v[a->e[ia][1]], a->v[a->e[ia][0]]);
                Vec3 eb = vec3_sub(b->v[b->e[ib][1]], b->v[b->e[ib][0]]);
                u = vec3_cross(ea, eb);
                double len = vec3_norm(u);
                if (len < 1e-9 * vec3_norm(ea) * vec3_norm(eb))
                    continue;
                u = vec3_scale(u, 1.0 / len);
            }
            double alo, ahi, blo, bhi;
            project(a, u, &alo, &ahi);
            project(b, u, &blo, &bhi);
            depth = fmin(depth, fmin(ahi - blo, bhi - alo));
        }
    }
    return depth;
}

/* Brute-force signed MTD of two polytopes. */
static double poly_signed_distance(const Poly *a, const Poly *b) {
    double depth = sat_depth(a, b);
    if (depth > 0)
        return -depth;
    double best = INFINITY;
    for (int i = 0; i < a->nv; i++)
        for (int f = 0; f < b->nf; f++)
            best = fmin(best, point_face_distance(b, f, a->v[i]));
    for (int i = 0; i < b->nv; i++)
        for (int f = 0; f < a->nf; f++)
            best = fmin(best, point_face_distance(a, f, b->v[i]));
    for (int i = 0; i < a->ne; i++)
        for (int j = 0; j < b->ne; j++)
            best = fmin(best, segment_segment_distance(a->v[a->e[i][0]], a->v[a->e[i][1]],
                                                       b->v[b->e[j][0]], b->v[b->e[j][1]]));
    return best;
}

static void poly_translate(Poly *p, Vec3 t) {
    for (int i = 0; i < p->nv; i++)
        p->v[i] = vec3_add(p->v[i], t);
    for (int f = 0; f < p->nf; f++)
        p->fo[f] += vec3_dot(p->fn[f], t);
}

static Hull *random_hull(TestRng *r, int n, double size) {
    Vec3 pts[64];
    Vec3 axes =
        vec3(test_rng_range(r, 0.3, 1.0), test_rng_range(r, 0.3, 1.0), test_rng_range(r, 0.3, 1.0));
    for (int i = 0; i < n; i++)
        pts[i] = vec3_hadamard(rng_vec(r, size), axes);
    IssimError err;
    Hull *h = hull_create(pts, n, &err);
    assert_non_null(h);
    return h;
}

typedef struct ErrStats {
    double apart, overlap, normal, witness;
    int n_apart, n_overlap;
} ErrStats;

/* GJK/EPA of two polytopes against brute force, including the MTD property: moving A by -d n
 * makes them touch. */
static void check_pair(const Shape *sa, Pose pa, const Poly *a, const Shape *sb, Pose pb,
                       const Poly *b, ErrStats *st, double tol) {
    Vec3 qa, qb, n;
    double d = gjk_epa_distance(sa, pa, sb, pb, &qa, &qb, &n);
    double ref = poly_signed_distance(a, b);
    double err = fabs(d - ref);
    if (ref > 0) {
        st->apart = fmax(st->apart, err / fmax(ref, 1.0));
        st->n_apart++;
    } else {
        st->overlap = fmax(st->overlap, err);
        st->n_overlap++;
    }
    if (!(err <= tol))
        fail_msg("gjk %.15g, brute force %.15g (error %.3g)", d, ref, err);
    assert_near(vec3_norm(n), 1.0, 1e-12);
    Poly moved = *a;
    poly_translate(&moved, vec3_scale(n, -d));
    double touch = poly_signed_distance(&moved, b);
    st->normal = fmax(st->normal, fabs(touch));
    if (!(fabs(touch) <= tol))
        fail_msg("after moving A by the MTD the distance is %.3g (d %.6g)", touch, d);
    double wa = fabs(point_poly_signed(a, qa)), wb = fabs(point_poly_signed(b, qb));
    double wd = fabs(vec3_dot(vec3_sub(qa, qb), n) - d);
    st->witness = fmax(st->witness, fmax(fmax(wa, wb), wd));
    if (!(wa <= tol && wb <= tol && wd <= tol))
        fail_msg("witness points off the surfaces: %.3g %.3g %.3g", wa, wb, wd);
}

static void print_stats(const char *what, int n, const ErrStats *st) {
    print_message("%s: %d poses (%d apart, %d overlapping): max relative error apart %.2e, "
                  "max depth error %.2e, MTD check %.2e, witness %.2e\n",
                  what, n, st->n_apart, st->n_overlap, st->apart, st->overlap, st->normal,
                  st->witness);
}

/* ===== GJK / EPA ===== */

static void test_box_hull_random(void **state) {
    TestRng r = {0x9E3779B97F4A7C15ull};
    ErrStats st = {0};
    int poses = 2000;
    for (int i = 0; i < poses; i++) {
        Vec3 h = vec3(test_rng_range(&r, 0.05, 0.5), test_rng_range(&r, 0.05, 0.5),
                      test_rng_range(&r, 0.05, 0.5));
        Hull *hull = random_hull(&r, 6 + i % 10, 0.5);
        Shape box = shape_box(h), hs = shape_hull(hull);
        Pose pa = {rng_vec(&r, 0.6), test_rng_rotation(&r)};
        Pose pb = {rng_vec(&r, 0.6), test_rng_rotation(&r)};
        Poly a, b;
        poly_box(&a, h, pa);
        poly_hull(&b, hull, pb);
        check_pair(&box, pa, &a, &hs, pb, &b, &st, 1e-6);
        hull_destroy(hull);
    }
    print_stats("box-hull", poses, &st);
    assert_true(st.n_apart > poses / 5 && st.n_overlap > poses / 5);
    assert_true(st.apart < 1e-9);
}

static void test_hull_hull_random(void **state) {
    TestRng r = {12345};
    ErrStats st = {0};
    int poses = 2000;
    for (int i = 0; i < poses; i++) {
        Hull *ha = random_hull(&r, 5 + i % 11, 0.4), *hb = random_hull(&r, 5 + (i / 11) % 11, 0.4);
        Shape sa = shape_hull(ha), sb = shape_hull(hb);
        /* Far and near: a range of scales. */
        double spread = i % 4 == 0 ? 3.0 : 0.3;
        Pose pa = {rng_vec(&r, spread), test_rng_rotation(&r)};
        Pose pb = {rng_vec(&r, spread), test_rng_rotation(&r)};
        Poly a, b;
        poly_hull(&a, ha, pa);
        poly_hull(&b, hb, pb);
        check_pair(&sa, pa, &a, &sb, pb, &b, &st, 1e-6);
        hull_destroy(ha);
        hull_destroy(hb);
    }
    print_stats("hull-hull", poses, &st);
    assert_true(st.n_apart > poses / 5 && st.n_overlap > poses / 5);
    assert_true(st.apart < 1e-9);
}

static void test_sphere_hull_random(void **state) {
    TestRng r = {777};
    double worst_apart = 0, worst_in = 0;
    int apart = 0, overlap = 0, poses = 4000;
    for (int i = 0; i < poses; i++) {
        Hull *hull = random_hull(&r, 6 + i % 12, 0.5);
        Shape hs = shape_hull(hull);
        double radius = test_rng_range(&r, 0.01, 0.4);
        Shape sp = shape_sphere(radius);
        Pose ph = {rng_vec(&r, 0.3), test_rng_rotation(&r)};
        Pose ps = {rng_vec(&r, 0.6), test_rng_rotation(&r)};
        Poly p;
        poly_hull(&p, hull, ph);
        double ref = point_poly_signed(&p, ps.p) - radius;
        Vec3 qa, qb, n;
        double d = gjk_epa_distance(&sp, ps, &hs, ph, &qa, &qb, &n);
        if (!(fabs(d - ref) <= 1e-6))
            fail_msg("sphere-hull: gjk %.15g, exact %.15g", d, ref);
        /* The sphere's point is on the sphere, the hull's on the hull. */
        assert_near(vec3_norm(vec3_sub(qa, ps.p)), radius, 1e-9);
        assert_true(fabs(point_poly_signed(&p, qb)) <= 1e-9);
        if (ref > 0) {
            worst_apart = fmax(worst_apart, fabs(d - ref));
            apart++;
        } else {
            worst_in = fmax(worst_in, fabs(d - ref));
            overlap++;
        }
        hull_destroy(hull);
    }
    print_message("sphere-hull: %d poses (%d apart, %d overlapping): max error apart %.2e, "
                  "overlapping %.2e\n",
                  poses, apart, overlap, worst_apart, worst_in);
    assert_true(apart > poses / 5 && overlap > poses / 5);
    assert_true(worst_apart < 1e-12);
}

/* Distance from a point to a box (box frame) by clamping. */
static double point_box_distance(Vec3 x, Vec3 h) {
    Vec3 c =
        vec3(fmin(fmax(x.x, -h.x), h.x), fmin(fmax(x.y, -h.y), h.y), fmin(fmax(x.z, -h.z), h.z));
    return vec3_norm(vec3_sub(x, c));
}

/* Exact signed distance of a capsule (segment p0-p1, radius) to a box at the origin. */
static double capsule_box_exact(Vec3 p0, Vec3 p1, double radius, Vec3 h) {
    /* Separating axes of a segment and a box: the box axes and segment x box axes. */
    Vec3 d = vec3_sub(p1, p0);
    Vec3 axes[6] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    int na = 3;
    for (int k = 0; k < 3; k++) {
        Vec3 c = vec3_cross(d, axes[k]);
        if (vec3_norm(c) > 1e-9 * vec3_norm(d))
            axes[na++] = vec3_normalize(c);
    }
    double depth = INFINITY;
    for (int k = 0; k < na; k++) {
        Vec3 u = axes[k];
        double e = fabs(u.x) * h.x + fabs(u.y) * h.y + fabs(u.z) * h.z;
        double s0 = vec3_dot(p0, u), s1 = vec3_dot(p1, u);
        depth = fmin(depth, fmin(e - fmin(s0, s1), fmax(s0, s1) + e));
    }
    if (depth > 0)
        return -depth - radius;
    /* Golden section on the convex distance along the segment. */
    double lo = 0, hi = 1, g = (sqrt(5.0) - 1) / 2;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = point_box_distance(vec3_mad(p0, x1, d), h),
           f2 = point_box_distance(vec3_mad(p0, x2, d), h);
    for (int it = 0; it < 200; it++) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = point_box_distance(vec3_mad(p0, x1, d), h);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = point_box_distance(vec3_mad(p0, x2, d), h);
        }
    }
    double best = fmin(fmin(f1, f2), fmin(point_box_distance(p0, h), point_box_distance(p1, h)));
    return best - radius;
}

static void test_capsule_box_random(void **state) {
    TestRng r = {4242};
    double worst_apart = 0, worst_in = 0;
    int apart = 0, overlap = 0, poses = 4000;
    for (int i = 0; i < poses; i++) {
        Vec3 h = vec3(test_rng_range(&r, 0.05, 0.5), test_rng_range(&r, 0.05, 0.5),
                      test_rng_range(&r, 0.05, 0.5));
        double radius = test_rng_range(&r, 0.01, 0.2), half = test_rng_range(&r, 0.0, 0.5);
        Shape box = shape_box(h), cap = shape_capsule(radius, half);
        Pose pb = {rng_vec(&r, 0.5), test_rng_rotation(&r)};
        Pose pc = {rng_vec(&r, 0.6), test_rng_rotation(&r)};
        Vec3 axis = quat_rotate(pc.q, vec3(0, 0, half));
        Vec3 p0 = pose_apply_inv(pb, vec3_sub(pc.p, axis)),
             p1 = pose_apply_inv(pb, vec3_add(pc.p, axis));
        double ref = capsule_box_exact(p0, p1, radius, h);
        Vec3 qa, qb, n;
        double d = gjk_epa_distance(&cap, pc, &box, pb, &qa, &qb, &n);
        if (!(fabs(d - ref) <= 1e-6))
            fail_msg("capsule-box: gjk %.15g, exact %.15g", d, ref);
        /* The box point is on the box. */
        Vec3 lb = pose_apply_inv(pb, qb);
        double on_box = fmax(fmax(fabs(lb.x) - h.x, fabs(lb.y) - h.y), fabs(lb.z) - h.z);
        assert_true(fabs(on_box) <= 1e-9 || point_box_distance(lb, h) <= 1e-9);
        if (ref > 0) {
            worst_apart = fmax(worst_apart, fabs(d - ref));
            apart++;
        } else {
            worst_in = fmax(worst_in, fabs(d - ref));
            overlap++;
        }
    }
    print_message("capsule-box: %d poses (%d apart, %d overlapping): max error apart %.2e, "
                  "overlapping %.2e\n",
                  poses, apart, overlap, worst_apart, worst_in);
    assert_true(apart > poses / 5 && overlap > poses / 5);
}

/* Touching, deep, parallel and coincident configurations with known answers. */
static void test_degenerate_configurations(void **state) {
    Vec3 h = {0.5, 0.5, 0.5};
    Shape box = shape_box(h);
    Hull *cube = test_box_hull(h);
    Shape hc = shape_hull(cube);
    Vec3 qa, qb, n;
    /* Identical poses: depth 1 (a full side) along some axis. */
    Pose o = pose_identity();
    double d = gjk_epa_distance(&box, o, &hc, o, &qa, &qb, &n);
    assert_near(d, -1.0, 1e-9);
    assert_near(fabs(n.x) + fabs(n.y) + fabs(n.z), 1.0, 1e-9); /* an axis */
    /* Face on face, exactly touching, apart and slightly in, rotated about the normal. */
    double gaps[] = {0.0, 0.1, -1e-4, 1e-9, -0.3};
    for (int k = 0; k < 5; k++) {
        Pose top = {{0.2, -0.1, 1.0 + gaps[k]}, quat_from_axis_angle(vec3(0, 0, 1), 0.3 * k)};
        d = gjk_epa_distance(&box, top, &hc, o, &qa, &qb, &n);
        assert_near(d, gaps[k], 1e-12);
        assert_near(n.z, 1.0, 1e-9); /* from B (below) to A */
        assert_near(qa.z - qb.z, gaps[k], 1e-12);
    }
    /* Vertex on vertex: a cube corner on another's corner along the diagonal. */
    for (int k = 0; k < 3; k++) {
        double gap = k == 0 ? 0.0 : k == 1 ? 0.05 : -0.01;
        Vec3 dir = vec3_normalize(vec3(1, 1, 1));
        Pose corner = {vec3_scale(vec3(1, 1, 1), 1.0 + gap / sqrt(3.0)), quat_identity()};
        d = gjk_epa_distance(&box, corner, &hc, o, &qa, &qb, &n);
        if (gap >= 0) {
            assert_near(d, gap, 1e-12);
            if (gap > 0)
                assert_near(vec3_dot(n, dir), 1.0, 1e-9);
        } else {
            /* Overlapping corners: depth is the smallest axis overlap. */
            assert_near(d, gap / sqrt(3.0), 1e-9);
        }
    }
    /* Sphere centred inside a box, off-centre: depth to the nearest face plus the radius. */
    Shape sp = shape_sphere(0.1);
    Pose ps = {{0.3, 0.1, -0.05}, quat_identity()};
    d = gjk_epa_distance(&sp, ps, &box, o, &qa, &qb, &n);
    assert_near(d, -(0.2 + 0.1), 1e-12);
    assert_near(n.x, 1.0, 1e-12);
    /* Concentric spheres via a hull: a sphere at a hull's vertex. */
    ps.p = vec3(0.5, 0.5, 0.5);
    d = gjk_epa_distance(&sp, ps, &hc, o, &qa, &qb, &n);
    assert_near(d, -0.1, 1e-12);
    /* Capsule axis crossing a box edge exactly, and lying flat on its top face. */
    Shape cap = shape_capsule(0.05, 0.3);
    Pose pc = {{0.0, 0.0, 0.55}, quat_from_axis_angle(vec3(0, 1, 0), M_PI / 2)};
    d = gjk_epa_distance(&cap, pc, &box, o, &qa, &qb, &n);
    assert_near(d, 0.0, 1e-12);
    assert_near(n.z, 1.0, 1e-9);
    pc.p = vec3(0.5, 0.2, 0.5); /* axis along y, lying on the top-right edge */
    pc.q = quat_from_axis_angle(vec3(1, 0, 0), M_PI / 2);
    d = gjk_epa_distance(&cap, pc, &box, o, &qa, &qb, &n);
    assert_near(d, -0.05, 1e-12);
    /* Two capsules whose axes cross: a flat difference (depth = sum of radii). */
    Shape c2 = shape_capsule(0.02, 0.3);
    Pose px = {{0, 0, 0}, quat_from_axis_angle(vec3(0, 1, 0), M_PI / 2)};
    Pose py = {{0, 0, 0}, quat_from_axis_angle(vec3(1, 0, 0), M_PI / 2)};
    d = gjk_epa_distance(&cap, px, &c2, py, &qa, &qb, &n);
    assert_near(d, -0.07, 1e-12);
    assert_near(fabs(n.z), 1.0, 1e-9);
    /* Two coincident spheres: depth = the sum of radii in some direction. */
    d = gjk_epa_distance(&sp, o, &sp, o, &qa, &qb, &n);
    assert_near(d, -0.2, 1e-12);
    assert_near(vec3_norm(n), 1.0, 1e-12);
    /* Far apart: relative accuracy at a large distance. */
    Pose far = {{1000.0, 0.0, 0.0}, quat_identity()};
    d = gjk_epa_distance(&box, far, &hc, o, &qa, &qb, &n);
    assert_near(d, 999.0, 1e-9);
    hull_destroy(cube);
}

/* A planar polygon (x-z plane of its body) as a flat polytope with two opposite faces. */
static void poly_polygon(Poly *p, const Shape *s, Pose pose) {
    int n = s->polygon_count;
    p->nv = n;
    for (int i = 0; i < n; i++)
        p->v[i] = pose_apply(pose, s->polygon[i]);
    /* Counter-clockwise about +y in the body: the face normal is +y, the back face -y. */
    Vec3 up = quat_rotate(pose.q, vec3(0, 1, 0));
    Vec3 area = {0, 0, 0};
    for (int i = 0; i < n; i++)
        area = vec3_add(area, vec3_cross(p->v[i], p->v[(i + 1) % n]));
    bool ccw = vec3_dot(area, up) > 0;
    p->nf = 2;
    for (int f = 0; f < 2; f++) {
        p->fn[f] = (f == 0) == ccw ? up : vec3_neg(up);
        p->fo[f] = vec3_dot(p->fn[f], p->v[0]);
        p->first[f] = f * n;
        p->count[f] = n;
        for (int k = 0; k < n; k++)
            p->fv[f * n + k] = f == 0 ? k : n - 1 - k;
    }
    poly_edges(p);
}

/* Polygons are allowed for distances: against boxes (brute force) and spheres (exact). */
static void test_polygon_distance(void **state) {
    TestRng r = {606};
    ErrStats st = {0};
    int poses = 1500;
    for (int i = 0; i < poses; i++) {
        Vec3 pts[8];
        int n = 3 + i % 6;
        for (int k = 0; k < n; k++) { /* a convex polygon: points on an ellipse in order */
            double a = 2 * M_PI * (k + test_rng_range(&r, 0.0, 0.8)) / n;
            pts[k] = vec3(0.4 * cos(a), 0, 0.25 * sin(a));
        }
        Shape poly = shape_polygon(pts, n);
        Vec3 h = vec3(test_rng_range(&r, 0.05, 0.3), test_rng_range(&r, 0.05, 0.3),
                      test_rng_range(&r, 0.05, 0.3));
        Shape box = shape_box(h);
        Pose pp = {rng_vec(&r, 0.4), test_rng_rotation(&r)};
        Pose pb = {rng_vec(&r, 0.4), test_rng_rotation(&r)};
        Poly a, b;
        poly_polygon(&a, &poly, pp);
        poly_box(&b, h, pb);
        check_pair(&poly, pp, &a, &box, pb, &b, &st, 1e-6);
        /* A sphere: the exact distance to the flat polygon. */
        Shape sp = shape_sphere(test_rng_range(&r, 0.01, 0.2));
        Pose ps = {rng_vec(&r, 0.5), quat_identity()};
        double exact = INFINITY;
        for (int f = 0; f < 2; f++)
            exact = fmin(exact, point_face_distance(&a, f, ps.p));
        Vec3 qa, qb, nn;
        double d = gjk_epa_distance(&sp, ps, &poly, pp, &qa, &qb, &nn);
        assert_near(d, exact - sp.radius, 1e-12);
    }
    print_stats("polygon-box", poses, &st);
    assert_true(st.n_apart > poses / 5 && st.n_overlap > poses / 10);
    /* A sphere centred on the polygon: the flat difference, depth = radius along its normal. */
    Vec3 sq[4] = {{-1, 0, -1}, {1, 0, -1}, {1, 0, 1}, {-1, 0, 1}};
    Shape poly = shape_polygon(sq, 4);
    Shape sp = shape_sphere(0.1);
    Vec3 qa, qb, nn;
    double d = gjk_epa_distance(&sp, pose_identity(), &poly, pose_identity(), &qa, &qb, &nn);
    assert_near(d, -0.1, 1e-12);
    assert_near(fabs(nn.y), 1.0, 1e-12);
}

/* Separating-axis depth of a large hull (world vertices hv) and a box polytope: the hull's
 * faces, the box's and every hull edge x box edge. */
static double large_sat_depth(const Hull *hull, Pose ph, const Vec3 *hv, const Poly *b) {
    double depth = INFINITY;
    int nv = hull->vertex_count;
    for (int axis = 0; axis < hull->face_count + 6 + hull->face_count * 16 * b->ne; axis++) {
        Vec3 u;
        if (axis < hull->face_count) {
            u = quat_rotate(ph.q, hull->faces[axis].normal);
        } else if (axis < hull->face_count + 6) {
            u = b->fn[axis - hull->face_count];
        } else {
            int k = axis - hull->face_count - 6;
            int f = k / (16 * b->ne), e = (k / b->ne) % 16, j = k % b->ne;
            const HullFace *face = &hull->faces[f];
            if (e >= face->count)
                continue;
            Vec3 e0 = hv[hull->face_vertices[face->first + e]];
            Vec3 e1 = hv[hull->face_vertices[face->first + (e + 1) % face->count]];
            u = vec3_cross(vec3_sub(e1, e0), vec3_sub(b->v[b->e[j][1]], b->v[b->e[j][0]]));
            if (vec3_norm(u) < 1e-12)
                continue;
            u = vec3_normalize(u);
        }
        double alo = INFINITY, ahi = -INFINITY, blo, bhi;
        for (int m = 0; m < nv; m++) {
            alo = fmin(alo, vec3_dot(hv[m], u));
            ahi = fmax(ahi, vec3_dot(hv[m], u));
        }
        project(b, u, &blo, &bhi);
        depth = fmin(depth, fmin(ahi - blo, bhi - alo));
    }
    return depth;
}

/* Hulls with hundreds of vertices: EPA expands far more faces. */
static void test_large_hull(void **state) {
    TestRng r = {1001};
    Vec3 pts[150];
    for (int i = 0; i < 150; i++) {
        Vec3 u = vec3_normalize(rng_vec(&r, 1.0));
        pts[i] = vec3(0.5 * u.x, 0.3 * u.y, 0.4 * u.z);
    }
    IssimError err;
    Hull *hull = hull_create(pts, 150, &err);
    assert_non_null(hull);
    assert_int_equal(hull->vertex_count, 150);
    for (int f = 0; f < hull->face_count; f++)
        assert_true(hull->faces[f].count <= 16);
    Shape hs = shape_hull(hull);
    int poses = 40, apart = 0, overlap = 0;
    double worst_depth = 0, worst_touch = 0;
    for (int i = 0; i < poses; i++) {
        Vec3 h = vec3(test_rng_range(&r, 0.05, 0.3), test_rng_range(&r, 0.05, 0.3),
                      test_rng_range(&r, 0.05, 0.3));
        Shape box = shape_box(h);
        Pose ph = {rng_vec(&r, 0.2), test_rng_rotation(&r)};
        Pose pb = {rng_vec(&r, 0.6), test_rng_rotation(&r)};
        Poly b;
        poly_box(&b, h, pb);
        Vec3 hv[150];
        for (int k = 0; k < hull->vertex_count; k++)
            hv[k] = pose_apply(ph, hull->vertices[k]);
        Vec3 qa, qb, n;
        double d = gjk_epa_distance(&hs, ph, &box, pb, &qa, &qb, &n);
        double depth = large_sat_depth(hull, ph, hv, &b);
        if (depth > 0) {
            overlap++;
            worst_depth = fmax(worst_depth, fabs(d + depth));
            if (!(fabs(d + depth) <= 1e-6))
                fail_msg("large hull: EPA %.12g, SAT %.12g", d, -depth);
        } else {
            apart++;
            assert_true(d > 0);
        }
        /* The MTD property: moving the box by d along the normal (towards A when apart, out
         * of it when overlapping) leaves the two just touching. */
        poly_translate(&b, vec3_scale(n, d));
        double touch = large_sat_depth(hull, ph, hv, &b);
        worst_touch = fmax(worst_touch, fabs(touch));
        if (!(fabs(touch) <= 1e-6))
            fail_msg("large hull: after the MTD move the depth is %.3g", touch);
    }
    print_message("large hull (150 vertices) vs box: %d poses (%d apart, %d overlapping), max "
                  "depth error %.2e, MTD check %.2e\n",
                  poses, apart, overlap, worst_depth, worst_touch);
    assert_true(overlap > poses / 4 && apart > poses / 10);
    hull_destroy(hull);
}

/* ===== Manifolds ===== */

static void check_manifold_surfaces(const Manifold *m, const Poly *a, const Poly *b, double tol) {
    assert_near(vec3_norm(m->normal), 1.0, 1e-12);
    for (int k = 0; k < m->count; k++) {
        const ContactPoint *c = &m->points[k];
        if (a)
            assert_true(fabs(point_poly_signed(a, c->point_a)) <= tol);
        if (b)
            assert_true(fabs(point_poly_signed(b, c->point_b)) <= tol);
        assert_near(vec3_dot(vec3_sub(c->point_a, c->point_b), m->normal), c->distance, 1e-9);
        for (int j = 0; j < k; j++) {
            assert_true(vec3_norm(vec3_sub(c->point_b, m->points[j].point_b)) > 1e-9);
            assert_true(c->feature != m->points[j].feature);
        }
    }
}

static void test_manifold_resting_box(void **state) {
    Hull *big = test_box_hull(vec3(2, 2, 0.5));
    Shape ground = shape_hull(big), box = shape_box(vec3(0.2, 0.1, 0.05));
    Pose pg = pose_identity();
    Poly g;
    poly_hull(&g, big, pg);
    Manifold m;
    for (int k = 0; k < 8; k++) {
        double gap = k % 2 ? -1e-4 : 5e-4; /* in, and a near-contact within the margin */
        Pose pb = {{0.3 * k - 1.0, 0.1, 0.55 + gap}, quat_from_axis_angle(vec3(0, 0, 1), 0.4 * k)};
        int n = collide_convex_generic(&box, pb, &ground, pg, 1e-3, &m);
        assert_int_equal(n, 4);
        assert_int_equal(m.count, 4);
        assert_near(m.normal.z, 1.0, 1e-12);
        Poly pbox;
        poly_box(&pbox, vec3(0.2, 0.1, 0.05), pb);
        check_manifold_surfaces(&m, &pbox, &g, 1e-9);
        for (int i = 0; i < 4; i++)
            assert_near(m.points[i].distance, gap, 1e-12);
        /* The four points are the four bottom corners. */
        for (int i = 0; i < 4; i++) {
            Vec3 l = pose_apply_inv(pb, m.points[i].point_a);
            assert_near(fabs(l.x), 0.2, 1e-9);
            assert_near(fabs(l.y), 0.1, 1e-9);
            assert_near(l.z, -0.05, 1e-9);
        }
        /* Swapped roles: the normal flips. */
        n = collide_convex_generic(&ground, pg, &box, pb, 1e-3, &m);
        assert_int_equal(n, 4);
        assert_near(m.normal.z, -1.0, 1e-12);
    }
    /* Lifted beyond the margin: nothing. */
    Pose high = {{0, 0, 0.55 + 2e-3}, quat_identity()};
    assert_int_equal(collide_convex_generic(&box, high, &ground, pg, 1e-3, &m), 0);
    /* On an edge (rotated 45 degrees about x): two points; on a corner: one. */
    Shape cube = shape_box(vec3(0.1, 0.1, 0.1));
    Pose edge = {{0, 0, 0.5 + 0.1 * sqrt(2.0) - 1e-4},
                 quat_from_axis_angle(vec3(1, 0, 0), M_PI / 4)};
    assert_int_equal(collide_convex_generic(&cube, edge, &ground, pg, 1e-3, &m), 2);
    assert_near(m.points[0].distance, -1e-4, 1e-12);
    assert_near(m.points[1].distance, -1e-4, 1e-12);
    assert_near(fabs(m.points[0].point_a.x - m.points[1].point_a.x), 0.2, 1e-9);
    Quat corner_q = quat_mul(quat_from_axis_angle(vec3(1, 0, 0), atan(1 / sqrt(2.0))),
                             quat_from_axis_angle(vec3(0, 1, 0), M_PI / 4));
    Pose corner = {{0, 0, 0.5 + 0.1 * sqrt(3.0) - 1e-4}, corner_q};
    assert_int_equal(collide_convex_generic(&cube, corner, &ground, pg, 1e-3, &m), 1);
    assert_near(m.points[0].distance, -1e-4, 1e-9);
    assert_near(m.normal.z, 1.0, 1e-9);
    /* A capsule lying on the box: two points (its ends); standing: one. */
    Shape cap = shape_capsule(0.05, 0.3);
    Pose lying = {{0.1, 0.2, 0.55 - 1e-4}, quat_from_axis_angle(vec3(1, 1, 0), M_PI / 2)};
    assert_int_equal(collide_convex_generic(&cap, lying, &ground, pg, 1e-3, &m), 2);
    for (int i = 0; i < 2; i++) {
        assert_near(m.points[i].distance, -1e-4, 1e-12);
        assert_near(m.points[i].point_b.z, 0.5, 1e-12);
    }
    assert_near(vec3_norm(vec3_sub(m.points[0].point_a, m.points[1].point_a)), 0.6, 1e-9);
    Pose standing = {{0.1, 0.2, 0.85 - 1e-4}, quat_identity()};
    assert_int_equal(collide_convex_generic(&cap, standing, &ground, pg, 1e-3, &m), 1);
    assert_near(m.points[0].distance, -1e-4, 1e-12);
    hull_destroy(big);
}

/* Random convex pairs: every point on both surfaces, no duplicates, nothing missed, and the
 * deepest point's distance equal to the brute-force MTD. */
static void test_manifold_random(void **state) {
    TestRng r = {99};
    int poses = 2000, contacts = 0, multi = 0, exact = 0;
    double worst = 0;
    double margin = 0.02;
    for (int i = 0; i < poses; i++) {
        Hull *ha = random_hull(&r, 5 + i % 9, 0.4);
        Vec3 h = vec3(test_rng_range(&r, 0.05, 0.4), test_rng_range(&r, 0.05, 0.4),
                      test_rng_range(&r, 0.05, 0.4));
        Shape sa = i % 2 ? shape_hull(ha) : shape_box(h);
        Hull *hb = random_hull(&r, 5 + i % 7, 0.4);
        Shape sb = shape_hull(hb);
        Pose pa = {rng_vec(&r, 0.45), test_rng_rotation(&r)};
        Pose pb = {rng_vec(&r, 0.45), test_rng_rotation(&r)};
        Poly a, b;
        if (i % 2)
            poly_hull(&a, ha, pa);
        else
            poly_box(&a, h, pa);
        poly_hull(&b, hb, pb);
        double ref = poly_signed_distance(&a, &b);
        Manifold m;
        int n = collide_convex_generic(&sa, pa, &sb, pb, margin, &m);
        if (ref < margin - 1e-9)
            assert_true(n >= 1);
        if (ref > margin + 1e-9)
            assert_int_equal(n, 0);
        if (n > 0) {
            contacts++;
            multi += n > 1;
            check_manifold_surfaces(&m, &a, &b, 1e-7);
            double dmin = INFINITY;
            for (int k = 0; k < n; k++) {
                dmin = fmin(dmin, m.points[k].distance);
                assert_true(m.points[k].distance < margin);
            }
            /* Exact when the normal is a face normal; a face within 1.1 degrees of the MTD
             * normal measures along itself: off by at most |d| (1 - cos 1.1 deg). */
            worst = fmax(worst, fabs(dmin - ref));
            exact += fabs(dmin - ref) <= 1e-9;
            if (!(fabs(dmin - ref) <= 1e-6 + 2e-4 * fabs(ref)))
                fail_msg("deepest point %.12g, MTD %.12g", dmin, ref);
        }
        hull_destroy(ha);
        hull_destroy(hb);
    }
    print_message("manifold box/hull-hull: %d poses, %d with contacts (%d with several points, "
                  "%d deepest = MTD within 1e-9), max |deepest - MTD| %.2e\n",
                  poses, contacts, multi, exact, worst);
    assert_true(contacts > poses / 4);
    assert_true(exact > contacts * 9 / 10);
}

static void test_manifold_sphere_capsule_hull(void **state) {
    TestRng r = {5150};
    int poses = 2000, contacts = 0;
    double margin = 0.01, worst = 0;
    for (int i = 0; i < poses; i++) {
        Hull *hull = random_hull(&r, 6 + i % 10, 0.5);
        Shape hs = shape_hull(hull);
        Pose ph = {rng_vec(&r, 0.2), test_rng_rotation(&r)};
        Poly p;
        poly_hull(&p, hull, ph);
        double radius = test_rng_range(&r, 0.02, 0.2), half = test_rng_range(&r, 0.05, 0.3);
        Shape s = i % 2 ? shape_sphere(radius) : shape_capsule(radius, half);
        Pose ps = {rng_vec(&r, 0.5), test_rng_rotation(&r)};
        Vec3 ax = quat_rotate(ps.q, vec3(0, 0, s.kind == SHAPE_CAPSULE ? half : 0));
        /* Reference: exact distance of the core (a point, or a segment by golden section) */
        Vec3 c0 = vec3_sub(ps.p, ax), c1 = vec3_add(ps.p, ax);
        double lo = 0, hi = 1;
        for (int it = 0; it < 100; it++) { /* (2/3)^100: below rounding */
            double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
            if (point_poly_signed(&p, vec3_mad(c0, m1, vec3_sub(c1, c0))) <=
                point_poly_signed(&p, vec3_mad(c0, m2, vec3_sub(c1, c0))))
                hi = m2;
            else
                lo = m1;
        }
        double core = fmin(point_poly_signed(&p, vec3_mad(c0, lo, vec3_sub(c1, c0))),
                           fmin(point_poly_signed(&p, c0), point_poly_signed(&p, c1)));
        Manifold m;
        int n = collide_convex_generic(&s, ps, &hs, ph, margin, &m);
        if (core > 0) { /* exact when the core is outside */
            double ref = core - radius;
            if (ref < margin - 1e-9)
                assert_true(n >= 1);
            if (ref > margin + 1e-9)
                assert_int_equal(n, 0);
            if (n > 0) {
                double dmin = INFINITY;
                for (int k = 0; k < n; k++)
                    dmin = fmin(dmin, m.points[k].distance);
                worst = fmax(worst, fabs(dmin - ref));
                assert_true(fabs(dmin - ref) <= 1e-6);
            }
        } else {
            assert_true(n >= 1);
        }
        if (n > 0) {
            contacts++;
            check_manifold_surfaces(&m, NULL, &p, 1e-7);
            for (int k = 0; k < n; k++) { /* on the rounded surface */
                Vec3 x = m.points[k].point_a;
                double t = vec3_dot(vec3_sub(x, c0), vec3_sub(c1, c0)) /
                           fmax(vec3_dot(vec3_sub(c1, c0), vec3_sub(c1, c0)), 1e-300);
                t = t < 0 ? 0 : t > 1 ? 1 : t;
                assert_near(vec3_norm(vec3_sub(x, vec3_mad(c0, t, vec3_sub(c1, c0)))), radius,
                            1e-9);
            }
        }
        hull_destroy(hull);
    }
    print_message("manifold sphere/capsule-hull: %d poses, %d with contacts, max |deepest - "
                  "exact| %.2e\n",
                  poses, contacts, worst);
    assert_true(contacts > poses / 5);
}

/* ===== Hulls ===== */

static void check_hull(const Hull *h, const Vec3 *pts, int n, double *worst_out,
                       double *worst_planar) {
    double size = 0;
    for (int i = 0; i < n; i++)
        size = fmax(size, vec3_norm(pts[i]));
    /* Euler with merged faces; every edge used once in each direction. */
    int half_edges = 0;
    for (int f = 0; f < h->face_count; f++) {
        assert_true(h->faces[f].count >= 3);
        half_edges += h->faces[f].count;
    }
    assert_int_equal(half_edges % 2, 0);
    assert_int_equal(h->vertex_count - half_edges / 2 + h->face_count, 2);
    for (int f = 0; f < h->face_count; f++) {
        const HullFace *a = &h->faces[f];
        for (int k = 0; k < a->count; k++) {
            int u = h->face_vertices[a->first + k],
                v = h->face_vertices[a->first + (k + 1) % a->count];
            int twins = 0;
            for (int g = 0; g < h->face_count; g++) {
                const HullFace *b = &h->faces[g];
                for (int j = 0; j < b->count; j++)
                    twins += h->face_vertices[b->first + j] == v &&
                             h->face_vertices[b->first + (j + 1) % b->count] == u;
            }
            assert_int_equal(twins, 1);
        }
        /* Counter-clockwise from outside: the polygon's area vector along the normal. */
        Vec3 area = {0, 0, 0}, o = h->vertices[h->face_vertices[a->first]];
        for (int k = 0; k < a->count; k++) { /* relative to a corner: no cancellation */
            Vec3 u = vec3_sub(h->vertices[h->face_vertices[a->first + k]], o);
            Vec3 w = vec3_sub(h->vertices[h->face_vertices[a->first + (k + 1) % a->count]], o);
            area = vec3_add(area, vec3_cross(u, w));
        }
        assert_true(vec3_dot(area, a->normal) > 0);
        assert_near(vec3_norm(a->normal), 1.0, 1e-12);
        for (int k = 0; k < a->count; k++) {
            double off =
                vec3_dot(a->normal, h->vertices[h->face_vertices[a->first + k]]) - a->offset;
            *worst_planar = fmax(*worst_planar, fabs(off) / size);
        }
    }
    /* Every input point inside or on. Every vertex is an input point. */
    for (int i = 0; i < n; i++)
        for (int f = 0; f < h->face_count; f++)
            *worst_out = fmax(*worst_out,
                              (vec3_dot(h->faces[f].normal, pts[i]) - h->faces[f].offset) / size);
    for (int v = 0; v < h->vertex_count; v++) {
        bool found = false;
        for (int i = 0; i < n && !found; i++)
            found = h->vertices[v].x == pts[i].x && h->vertices[v].y == pts[i].y &&
                    h->vertices[v].z == pts[i].z;
        assert_true(found);
    }
}

static void test_hull_cube_and_interior(void **state) {
    TestRng r = {31337};
    Vec3 pts[300];
    int n = 0;
    for (int i = 0; i < 8; i++)
        pts[n++] = vec3(i & 1 ? 1 : -1, i & 2 ? 2 : -2, i & 4 ? 0.5 : -0.5);
    for (int i = 0; i < 200; i++)
        pts[n++] = vec3(test_rng_range(&r, -0.999, 0.999), test_rng_range(&r, -1.999, 1.999),
                        test_rng_range(&r, -0.499, 0.499));
    /* Points on faces and edges are not corners. */
    pts[n++] = vec3(1, 0.3, 0.1);
    pts[n++] = vec3(0, 2, 0.5);
    pts[n++] = vec3(-1, -2, 0);
    pts[n++] = vec3(0.25, -2, -0.5);
    IssimError err;
    Hull *h = hull_create(pts, n, &err);
    assert_non_null(h);
    assert_int_equal(h->vertex_count, 8);
    assert_int_equal(h->face_count, 6);
    double out = 0, planar = 0;
    check_hull(h, pts, n, &out, &planar);
    assert_true(out <= 1e-12);
    assert_true(planar <= 1e-12);
    for (int f = 0; f < 6; f++)
        assert_int_equal(h->faces[f].count, 4);
    assert_near(h->centroid.x, 0, 1e-12);
    assert_near(h->centroid.y, 0, 1e-12);
    assert_near(h->centroid.z, 0, 1e-12);
    hull_destroy(h);
    /* Centroids of a tetrahedron (corner average) and a square pyramid (a quarter up). */
    Vec3 tet[4] = {{0, 0, 0}, {1, 0, 0}, {0, 2, 0}, {0, 0, 3}};
    h = hull_create(tet, 4, &err);
    assert_non_null(h);
    assert_int_equal(h->face_count, 4);
    assert_near(h->centroid.x, 0.25, 1e-12);
    assert_near(h->centroid.y, 0.5, 1e-12);
    assert_near(h->centroid.z, 0.75, 1e-12);
    hull_destroy(h);
    Vec3 pyr[6] = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}, {0, 0, 2}, {0.2, 0.1, 0}};
    h = hull_create(pyr, 6, &err);
    assert_non_null(h);
    assert_int_equal(h->vertex_count, 5);
    assert_int_equal(h->face_count, 5);
    assert_near(h->centroid.z, 0.5, 1e-12);
    assert_near(h->centroid.x, 0.0, 1e-12);
    hull_destroy(h);
}

static void test_hull_random_clouds(void **state) {
    TestRng r = {2718};
    double out = 0, planar = 0;
    int clouds = 500;
    for (int c = 0; c < clouds; c++) {
        Vec3 pts[200];
        int n = 4 + (int)(test_rng_uniform(&r) * 150);
        int kind = c % 5;
        for (int i = 0; i < n; i++) {
            if (kind == 0) /* uniform in a box */
                pts[i] = rng_vec(&r, 1.0);
            else if (kind == 1) /* on a sphere: every point a vertex */
                pts[i] = vec3_normalize(rng_vec(&r, 1.0));
            else if (kind == 2) /* clustered near a plane, far from the origin */
                pts[i] = vec3_add(vec3(100, -50, 20),
                                  vec3(test_rng_range(&r, -1, 1), test_rng_range(&r, -1, 1),
                                       test_rng_range(&r, -0.01, 0.01)));
            else if (kind == 3) /* on a grid: many coplanar and collinear points */
                pts[i] = vec3(floor(test_rng_range(&r, 0, 4)), floor(test_rng_range(&r, 0, 3)),
                              floor(test_rng_range(&r, 0, 3)));
            else /* on a sphere a million radii from the origin */
                pts[i] = vec3_add(vec3(1e6, 1e6, 1e6), vec3_normalize(rng_vec(&r, 1.0)));
        }
        IssimError err;
        Hull *h = hull_create(pts, n, &err);
        if (!h) { /* only a flat grid sample may fail */
            assert_int_equal(kind, 3);
            assert_non_null(strstr(err.message, "coplanar") ? err.message
                                                            : strstr(err.message, "collinear"));
            continue;
        }
        check_hull(h, pts, n, &out, &planar);
        if (kind == 1) {
            assert_int_equal(h->vertex_count, n);
        }
        if (kind == 3) { /* grid hulls have no vertex inside a face or an edge */
            for (int f = 0; f < h->face_count; f++) {
                const HullFace *face = &h->faces[f];
                for (int k = 0; k < face->count; k++) {
                    Vec3 a = h->vertices[h->face_vertices[face->first + k]];
                    Vec3 b = h->vertices[h->face_vertices[face->first + (k + 1) % face->count]];
                    Vec3 cc = h->vertices[h->face_vertices[face->first + (k + 2) % face->count]];
                    assert_true(vec3_norm(vec3_cross(vec3_sub(b, a), vec3_sub(cc, b))) > 1e-9);
                }
            }
        }
        hull_destroy(h);
    }
    /* A large cloud: 3000 points on a sphere far from the origin, every one a vertex. */
    static Vec3 big[3000];
    for (int i = 0; i < 3000; i++)
        big[i] = vec3_add(vec3(-3e5, 2e5, 1e5), vec3_normalize(rng_vec(&r, 1.0)));
    IssimError err;
    Hull *h = hull_create(big, 3000, &err);
    assert_non_null(h);
    assert_int_equal(h->vertex_count, 3000);
    int half_edges = 0;
    for (int f = 0; f < h->face_count; f++) {
        half_edges += h->faces[f].count;
        for (int i = 0; i < 3000; i++)
            out = fmax(out, (vec3_dot(h->faces[f].normal, big[i]) - h->faces[f].offset) / 3.7e5);
    }
    assert_int_equal(h->vertex_count - half_edges / 2 + h->face_count, 2);
    hull_destroy(h);
    print_message("hull: %d clouds and one of 3000 points: max point outside %.2e, max face "
                  "non-planarity %.2e (relative to size)\n",
                  clouds, out, planar);
    /* Points within the thick-plane tolerance (1e-11 of the coordinates' size) are dropped;
     * merged faces are flat to twice HULL_PLANAR_TOL of the bounding box. */
    assert_true(out <= 2e-11);
    assert_true(planar <= 2e-6 * sqrt(3.0));
}

static void test_hull_errors_and_obj(void **state) {
    IssimError err;
    Vec3 three[3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    assert_null(hull_create(three, 3, &err));
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    Vec3 flat[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0.5, 0.2, 0}};
    assert_null(hull_create(flat, 5, &err));
    assert_non_null(strstr(err.message, "coplanar"));
    Vec3 line[4] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}};
    assert_null(hull_create(line, 4, &err));
    assert_non_null(strstr(err.message, "collinear"));
    Vec3 nan_pts[4] = {{0, 0, 0}, {1, 0, 0}, {0, NAN, 0}, {0, 0, 1}};
    assert_null(hull_create(nan_pts, 4, &err));

    const char *tet = test_temp_path(".obj");
    FILE *f = fopen(tet, "w");
    assert_non_null(f);
    fprintf(f, "# tetrahedron\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nvn 0 0 1\nf 1 2 3\nf 1 2 4\n");
    fclose(f);
    Hull *h = hull_load_obj(tet, &err);
    assert_non_null(h);
    assert_int_equal(h->vertex_count, 4);
    assert_int_equal(h->face_count, 4);
    hull_destroy(h);
    remove(tet);

    const char *cube = test_temp_path(".obj");
    f = fopen(cube, "w");
    assert_non_null(f);
    for (int i = 0; i < 8; i++)
        fprintf(f, "v %g %g %g\n", i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
    fprintf(f, "v 0.1 0.1 0.1\n\tv  0.5 0 0 \r\n");
    fclose(f);
    h = hull_load_obj(cube, &err);
    assert_non_null(h);
    assert_int_equal(h->vertex_count, 8);
    assert_int_equal(h->face_count, 6);
    hull_destroy(h);
    remove(cube);

    const char *bad = test_temp_path(".obj");
    f = fopen(bad, "w");
    fprintf(f, "v 0 0 0\nv 1 0 0\nv 1.0 abc 2\nv 0 0 1\n");
    fclose(f);
    assert_null(hull_load_obj(bad, &err));
    char expect[300];
    snprintf(expect, sizeof expect, "%s:3:", bad);
    assert_non_null(strstr(err.message, expect));
    f = fopen(bad, "w");
    fprintf(f, "v 0 0 0\nv 1 0 0\n# two numbers below\nv 0 1\n");
    fclose(f);
    assert_null(hull_load_obj(bad, &err));
    snprintf(expect, sizeof expect, "%s:4:", bad);
    assert_non_null(strstr(err.message, expect));
    f = fopen(bad, "w");
    fprintf(f, "v 0 0 0\nv 1 0 0\nv 0 1 0\n");
    fclose(f);
    assert_null(hull_load_obj(bad, &err)); /* three points: named with the path */
    assert_non_null(strstr(err.message, bad));
    remove(bad);
    assert_null(hull_load_obj("/nonexistent/issim/hull.obj", &err));
    assert_int_equal(err.status, ISSIM_ERR_IO);
    assert_non_null(strstr(err.message, "/nonexistent/issim/hull.obj"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_hull_random),
        cmocka_unit_test(test_hull_hull_random),
        cmocka_unit_test(test_sphere_hull_random),
        cmocka_unit_test(test_capsule_box_random),
        cmocka_unit_test(test_degenerate_configurations),
        cmocka_unit_test(test_polygon_distance),
        cmocka_unit_test(test_large_hull),
        cmocka_unit_test(test_manifold_resting_box),
        cmocka_unit_test(test_manifold_random),
        cmocka_unit_test(test_manifold_sphere_capsule_hull),
        cmocka_unit_test(test_hull_cube_and_interior),
        cmocka_unit_test(test_hull_random_clouds),
        cmocka_unit_test(test_hull_errors_and_obj),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
