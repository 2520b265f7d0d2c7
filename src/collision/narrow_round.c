/* Analytic contacts of the rounded shapes: sphere-sphere, sphere-capsule, capsule-capsule,
 * sphere-box, sphere-plane and capsule-plane.
 *
 * A sphere is a point and a capsule a segment, each swept by its radius, so every distance is
 * the distance between the cores minus the radii, from the closest points of Ericson,
 * Real-Time Collision Detection: point-segment 5.1.2, segment-segment 5.1.9, point-OBB 5.1.4
 * (clamping in the box frame; a centre inside the box leaves through the nearest face). The
 * signed MTD (000 3.6 Definition 1) of two such shapes is exact this way, overlapping or not:
 * the Minkowski difference of the shapes is the Minkowski difference of the cores swept by the
 * sum of the radii, whose boundary lies at that sum from the cores' difference.
 *
 * Each surface point is core point + radius * u with u taken in the core's normal cone
 * (segment_cone_direction): at the exact closest pair u is the contact normal itself; for the
 * extra points of capsule manifolds it is the normal projected onto the cone, so every point
 * stays on its surface and the distance reported is (point_a - point_b) . normal.
 *
 * Capsule manifolds with two points (parallel capsules, a capsule lying on a plane) make a
 * resting capsule stable without a contact that wanders along its length.
 */
#include <math.h>
#include <stdint.h>

#include "collision_internal.h"

/* Sine of the largest angle between capsule axes at which a second point is sought. Its
 * distance grows smoothly with the turn (second_point), so the point comes and goes clear of the
 * other surface while the pair overlaps less than side^2 / (2 R) at this angle (side the
 * sideways offset the turn gives its end): 0.65 mm for scenes/pile.lua's capsules, four times
 * their resting overlap. Until issue 28 it appeared only within 1e-3 rad of parallel and 1e-3 of
 * the radii sideways, already as deep as the first: two capsules lying side by side turned by a
 * hair gained or lost a whole spring at rest (depth offsets up to 0.72 mm in pile.lua). Sought at
 * every angle, the 240-body complementarity pile of test_complementarity_pile_settles no longer
 * fell asleep (239 of 240 bodies awake at 4 s, as at 0.1; this bound: asleep at 2.7 s). */
#define CAPSULE_SECOND_SIN 0.25

typedef struct Segment {
    Vec3 p0, p1; /* world ends: local z = -half_length and +half_length */
    Vec3 axis;   /* unit, from p0 to p1 */
    double length;
} Segment;

static Segment capsule_segment(const Shape *s, Pose pose) {
    Vec3 axis = quat_rotate(pose.q, vec3(0, 0, 1));
    Vec3 h = vec3_scale(axis, s->half_length);
    return (Segment){vec3_sub(pose.p, h), vec3_add(pose.p, h), axis, 2.0 * s->half_length};
}

/* Direction of a surface point from core point t: in the segment's normal cone (any direction
 * for a zero-length capsule, which is a sphere). */
static Vec3 capsule_direction(const Segment *g, double t, Vec3 d) {
    return g->length > 0.0 ? segment_cone_direction(g->axis, t, d) : vec3_normalize(d);
}

static Vec3 segment_point(const Segment *g, double t) {
    return vec3_mad(g->p0, t * g->length, g->axis);
}

/* Feature half of the capsule feature at parameter t: the ends are vertices 0 and 1. */
static FeatureHalf capsule_feature(double t) {
    if (t <= 0.0)
        return feature_half(FEATURE_VERTEX, 0);
    if (t >= 1.0)
        return feature_half(FEATURE_VERTEX, 1);
    return feature_half(FEATURE_EDGE, 0);
}

static void plane_world(const Shape *plane, Pose pose, Vec3 *n, double *offset) {
    *n = quat_rotate(pose.q, plane->normal);
    *offset = plane->offset + vec3_dot(*n, pose.p);
}

/* A unit vector perpendicular to unit axis, for cores that touch. */
static Vec3 any_perpendicular(Vec3 axis) {
    Vec3 t1, t2;
    vec3_tangent_basis(axis, &t1, &t2);
    return t1;
}

static int emit(Manifold *out, int count, Vec3 pa, Vec3 pb, uint64_t feature) {
    ContactPoint *c = &out->points[count];
    c->point_a = pa;
    c->point_b = pb;
    c->distance = vec3_dot(vec3_sub(pa, pb), out->normal);
    c->feature = feature;
    return count + 1;
}

int collide_sphere_sphere(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                          Manifold *out) {
    Vec3 v = vec3_sub(pa.p, pb.p);
    double d = vec3_norm(v);
    if (d - a->radius - b->radius >= margin)
        return out->count = 0;
    /* Concentric spheres: every direction is an MTD direction; take +z. */
    Vec3 n = d > 0.0 ? vec3_scale(v, 1.0 / d) : vec3(0, 0, 1);
    out->normal = n;
    out->count = emit(out, 0, vec3_mad(pa.p, -a->radius, n), vec3_mad(pb.p, b->radius, n),
                      feature_id(FEATURE_VERTEX, 0, FEATURE_VERTEX, 0));
    return out->count;
}

int collide_sphere_capsule(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                           Manifold *out) {
    Segment g = capsule_segment(b, pb);
    double t = segment_closest_parameter(g.p0, g.p1, pa.p);
    Vec3 q = segment_point(&g, t);
    Vec3 v = vec3_sub(pa.p, q);
    double d = vec3_norm(v);
    if (d - a->radius - b->radius >= margin)
        return out->count = 0;
    Vec3 n = d > 0.0 ? vec3_scale(v, 1.0 / d) : any_perpendicular(g.axis);
    out->normal = n;
    Vec3 qa = vec3_mad(pa.p, -a->radius, n);
    Vec3 qb = vec3_mad(q, b->radius, capsule_direction(&g, t, n));
    out->count =
        emit(out, 0, qa, qb, feature_pair(feature_half(FEATURE_VERTEX, 0), capsule_feature(t)));
    return out->count;
}

/* The unit normal from segment b to segment a when their closest points coincide: the
 * common perpendicular, or for collinear cores any perpendicular, oriented from b's centre to
 * a's. */
static Vec3 touching_normal(const Segment *ga, const Segment *gb) {
    Vec3 c = vec3_cross(ga->axis, gb->axis);
    double cn = vec3_norm(c);
    Vec3 n;
    Vec3 centres = vec3_sub(vec3_scale(vec3_add(ga->p0, ga->p1), 0.5),
                            vec3_scale(vec3_add(gb->p0, gb->p1), 0.5));
    if (cn > 1e-9) {
        n = vec3_scale(c, 1.0 / cn);
    } else {
        Vec3 side = vec3_mad(centres, -vec3_dot(centres, ga->axis), ga->axis);
        double sn = vec3_norm(side);
        n = sn > 1e-12 ? vec3_scale(side, 1.0 / sn) : any_perpendicular(ga->axis);
    }
    return vec3_dot(n, centres) < 0.0 ? vec3_neg(n) : n;
}

/* The second point of nearly parallel capsules, at core points s2 of a and t2 of b, measured
 * along the manifold's normal n between the two surfaces where they come closest along n: in
 * the section across the axes the cores lie g apart along n and side apart across it, and two
 * circles of radii r_a, r_b (sum R) are nearest along n where their tangents are parallel, at
 * g - R sqrt(1 - (side / R)^2). So the distance rises smoothly from g - R as the capsules turn
 * about n (a point at the first one's depth at any offset below the cut it had before), and the
 * points stay on the surfaces. By convexity g is no less than the first point's core distance,
 * so the second point is never deeper than the first. */
static int second_point(Manifold *out, int count, const Segment *ga, double s2, double ra,
                        const Segment *gb, double t2, double rb, Vec3 n, double margin,
                        uint64_t feature) {
    Vec3 ca = segment_point(ga, s2), cb = segment_point(gb, t2);
    Vec3 v = vec3_sub(ca, cb);
    Vec3 side = vec3_mad(v, -vec3_dot(v, n), n);
    double radii = ra + rb, offset = vec3_norm(side);
    if (!(offset < radii))
        return count; /* the sections do not face each other along n */
    double q = offset / radii, c = sqrt(1.0 - q * q);
    Vec3 across = offset > 0.0 ? vec3_scale(side, 1.0 / offset) : vec3(0, 0, 0);
    Vec3 ua = vec3_sub(vec3_scale(across, -q), vec3_scale(n, c)); /* a's surface, facing b */
    Vec3 ub = vec3_add(vec3_scale(across, q), vec3_scale(n, c));
    Vec3 qa = vec3_mad(ca, ra, capsule_direction(ga, s2, ua));
    Vec3 qb = vec3_mad(cb, rb, capsule_direction(gb, t2, ub));
    if (vec3_dot(vec3_sub(qa, qb), n) < margin)
        count = emit(out, count, qa, qb, feature);
    return count;
}

/* Whether (a, b) is the order the capsule pair is computed in: the second point is sought
 * along the first capsule's axis, so the two argument orders would differ; the longer capsule
 * (then the larger radius, then the shape stored first, then the lower position) goes first in
 * both. Equal capsules are ordered by their shapes' addresses, which a world keeps for a body's
 * life: ordered by position, two capsules side by side swapped roles as they jiggled, and the
 * second point jumped from one axis to the other. */
static bool capsule_order(const Shape *a, Pose pa, const Shape *b, Pose pb) {
    if (a->half_length != b->half_length)
        return a->half_length > b->half_length;
    if (a->radius != b->radius)
        return a->radius > b->radius;
    if (a != b)
        return (uintptr_t)a < (uintptr_t)b;
    if (pa.p.x != pb.p.x)
        return pa.p.x < pb.p.x;
    if (pa.p.y != pb.p.y)
        return pa.p.y < pb.p.y;
    return pa.p.z <= pb.p.z;
}

static int capsule_pair(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                        Manifold *out);

int collide_capsule_capsule(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                            Manifold *out) {
    if (capsule_order(a, pa, b, pb))
        return capsule_pair(a, pa, b, pb, margin, out);
    capsule_pair(b, pb, a, pa, margin, out);
    manifold_flip(out);
    return out->count;
}

static int capsule_pair(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                        Manifold *out) {
    Segment ga = capsule_segment(a, pa), gb = capsule_segment(b, pb);
    double s, t;
    segment_closest_points(ga.p0, ga.p1, gb.p0, gb.p1, &s, &t);
    Vec3 ca = segment_point(&ga, s), cb = segment_point(&gb, t);
    Vec3 v = vec3_sub(ca, cb);
    double d = vec3_norm(v);
    double radii = a->radius + b->radius;
    if (d - radii >= margin)
        return out->count = 0;
    Vec3 n = d > 1e-12 * (1.0 + radii) ? vec3_scale(v, 1.0 / d) : touching_normal(&ga, &gb);
    out->normal = n;
    int count = emit(out, 0, vec3_mad(ca, a->radius, capsule_direction(&ga, s, vec3_neg(n))),
                     vec3_mad(cb, b->radius, capsule_direction(&gb, t, n)),
                     feature_pair(capsule_feature(s), capsule_feature(t)));

    /* A second point at the other end of their common stretch (the part of a's axis b's axis
     * projects onto). The first point is the closest pair, so by convexity the second one's
     * distance along n is never below it (the linear function (x_a - x_b) . n is minimal at the
     * closest pair over both segments). Its distance grows continuously as the capsules turn
     * (second_point) up to CAPSULE_SECOND_SIN. */
    double sin_angle = vec3_norm(vec3_cross(ga.axis, gb.axis));
    if (ga.length > 0.0 && gb.length > 0.0 && sin_angle <= CAPSULE_SECOND_SIN) {
        double tq0 = vec3_dot(vec3_sub(gb.p0, ga.p0), ga.axis);
        double tq1 = vec3_dot(vec3_sub(gb.p1, ga.p0), ga.axis);
        double lo = fmax(0.0, fmin(tq0, tq1)), hi = fmin(ga.length, fmax(tq0, tq1));
        double here = s * ga.length;
        double end = fabs(lo - here) > fabs(hi - here) ? lo : hi;
        if (hi > lo && fabs(end - here) > 1e-6 * ga.length) {
            double s2, t2;
            if (end <= 0.0 || end >= ga.length) { /* an end of a, against b */
                s2 = end <= 0.0 ? 0.0 : 1.0;
                t2 = segment_closest_parameter(gb.p0, gb.p1, segment_point(&ga, s2));
            } else { /* an end of b, against a: the one at the lower or upper projection */
                bool lower_end = end == fmin(tq0, tq1);
                t2 = lower_end == (tq0 <= tq1) ? 0.0 : 1.0;
                s2 = segment_closest_parameter(ga.p0, ga.p1, segment_point(&gb, t2));
            }
            uint64_t f2 = feature_pair(capsule_feature(s2), capsule_feature(t2));
            if (f2 != out->points[0].feature)
                count =
                    second_point(out, count, &ga, s2, a->radius, &gb, t2, b->radius, n, margin, f2);
        }
    }
    return out->count = count;
}

int collide_sphere_box(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                       Manifold *out) {
    Vec3 c = pose_apply_inv(pb, pa.p);
    double cv[3] = {c.x, c.y, c.z};
    double h[3] = {b->half_extents.x, b->half_extents.y, b->half_extents.z};
    double q[3];
    int clamped = 0, bits = 0, free_axis = 0;
    for (int k = 0; k < 3; k++) {
        q[k] = cv[k];
        if (cv[k] > h[k]) {
            q[k] = h[k];
            clamped++;
        } else if (cv[k] < -h[k]) {
            q[k] = -h[k];
            clamped++;
        } else {
            free_axis = k;
        }
        if (q[k] >= 0.0)
            bits |= 1 << k;
    }
    Vec3 nl;
    double core; /* signed distance from the centre to the box surface */
    FeatureHalf fb;
    if (clamped > 0) {
        Vec3 v = vec3(cv[0] - q[0], cv[1] - q[1], cv[2] - q[2]);
        core = vec3_norm(v);
        nl = vec3_scale(v, 1.0 / core);
        if (clamped == 1) {
            int k = 0;
            while (cv[k] >= -h[k] && cv[k] <= h[k])
                k++;
            fb = feature_half(FEATURE_FACE, 2 * k + (cv[k] > 0.0));
        } else if (clamped == 2) {
            int k1 = (free_axis + 1) % 3, k2 = (free_axis + 2) % 3;
            fb = feature_half(FEATURE_EDGE,
                              free_axis * 4 + ((bits >> k1) & 1) + 2 * ((bits >> k2) & 1));
        } else {
            fb = feature_half(FEATURE_VERTEX, bits);
        }
    } else {
        /* Inside (or on) the box: out through the nearest face; ties go to the lower axis. */
        int k = 0;
        for (int j = 1; j < 3; j++)
            if (h[j] - fabs(cv[j]) < h[k] - fabs(cv[k]))
                k = j;
        double sign = cv[k] >= 0.0 ? 1.0 : -1.0;
        core = -(h[k] - fabs(cv[k]));
        q[k] = sign * h[k];
        double nv[3] = {0, 0, 0};
        nv[k] = sign;
        nl = vec3(nv[0], nv[1], nv[2]);
        fb = feature_half(FEATURE_FACE, 2 * k + (sign > 0.0));
    }
    if (core - a->radius >= margin)
        return out->count = 0;
    Vec3 n = quat_rotate(pb.q, nl);
    out->normal = n;
    if (feature_half_kind(fb) == FEATURE_FACE)
        out->normal_owner = MANIFOLD_NORMAL_OF_B;
    Vec3 qb = pose_apply(pb, vec3(q[0], q[1], q[2]));
    out->count = emit(out, 0, vec3_mad(pa.p, -a->radius, n), qb,
                      feature_pair(feature_half(FEATURE_VERTEX, 0), fb));
    return out->count;
}

int collide_sphere_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                         Manifold *out) {
    Vec3 n;
    double offset;
    plane_world(b, pb, &n, &offset);
    double h = vec3_dot(n, pa.p) - offset;
    if (h - a->radius >= margin)
        return out->count = 0;
    out->normal = n;
    out->normal_owner = MANIFOLD_NORMAL_OF_B;
    out->count = emit(out, 0, vec3_mad(pa.p, -a->radius, n), vec3_mad(pa.p, -h, n),
                      feature_id(FEATURE_VERTEX, 0, FEATURE_FACE, 0));
    return out->count;
}

int collide_capsule_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                          Manifold *out) {
    Vec3 n;
    double offset;
    plane_world(b, pb, &n, &offset);
    Segment g = capsule_segment(a, pa);
    out->normal = n;
    out->normal_owner = MANIFOLD_NORMAL_OF_B;
    int count = 0;
    int ends = g.length > 0.0 ? 2 : 1;
    for (int e = 0; e < ends; e++) {
        /* An end whose axis leans away from the plane touches through the cylinder side,
         * not the cap: the cone projection puts the point on the surface either way. */
        Vec3 c = e == 0 ? g.p0 : g.p1;
        Vec3 qa = vec3_mad(c, a->radius, capsule_direction(&g, (double)e, vec3_neg(n)));
        double h = vec3_dot(n, qa) - offset;
        if (h < margin)
            count = emit(out, count, qa, vec3_mad(qa, -h, n),
                         feature_id(FEATURE_VERTEX, e, FEATURE_FACE, 0));
    }
    return out->count = count;
}
