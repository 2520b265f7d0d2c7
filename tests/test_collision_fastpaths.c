/* The collision stage's fast paths (issue 15, branch collfast) against the exact computations
 * they replace or shortcut:
 * - GJK's supports through a rotation matrix per core (convex_core_support) against
 *   shape_support's quaternion rotations: the same support value h(d) = d . s within 1e-12 m;
 * - GJK's early out beyond a limit (gjk_epa_core_within) against the full gjk_epa_core: bit
 *   for bit below the limit, a lower bound of the distance at least the limit above it;
 * - the generic GJK/EPA path of a box given as a hull against the closed-form box-box routine:
 *   the same touching decision, the signed MTD within 1e-9 m, the normal an MTD direction;
 * - box-box's shortcut past the edge pairs (a vertex at the SAT bound) on nearly resting boxes
 *   against the GJK distance: within 1e-10 m.
 * Random poses around contact (TestRng, fixed seeds), 5 cm shapes, 1 mm margin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/collision.h"
#include "testutil.h"

#include "../src/collision/collision_internal.h"

#define FP_SIZE 0.05
#define FP_MARGIN 1e-3

static Vec3 random_vec(TestRng *r, double h) {
    return vec3(test_rng_range(r, -h, h), test_rng_range(r, -h, h), test_rng_range(r, -h, h));
}

static Hull *octahedron(void) {
    Vec3 pts[6] = {{FP_SIZE, 0, 0},  {-FP_SIZE, 0, 0}, {0, FP_SIZE, 0},
                   {0, -FP_SIZE, 0}, {0, 0, FP_SIZE},  {0, 0, -FP_SIZE}};
    IssimError err;
    Hull *h = hull_create(pts, 6, &err);
    assert_non_null(h);
    return h;
}

/* A pose of B at distance about FP_SIZE * spread of A's (at the origin), random attitude. */
static Pose near_pose(TestRng *r, double reach) {
    Vec3 dir = vec3_normalize(random_vec(r, 1.0));
    return (Pose){vec3_scale(dir, reach * test_rng_range(r, 0.9, 1.1)), test_rng_rotation(r)};
}

static void test_matrix_support_matches_quaternion(void **state) {
    (void)state;
    TestRng r = {12345};
    Hull *oct = octahedron();
    Shape shapes[4] = {shape_box(vec3(FP_SIZE, 0.6 * FP_SIZE, 0.3 * FP_SIZE)), shape_hull(oct),
                       shape_sphere(FP_SIZE), shape_capsule(FP_SIZE, 0.5 * FP_SIZE)};
    for (int i = 0; i < 4000; i++) {
        const Shape *s = &shapes[i % 2]; /* the polytope cores (spheres, capsules: points) */
        Pose p = {random_vec(&r, 1.0), test_rng_rotation(&r)};
        Vec3 d = random_vec(&r, 1.0);
        ConvexCore c = convex_core(s, p);
        double h_matrix = vec3_dot(d, convex_core_support(&c, d));
        double h_quat = vec3_dot(d, shape_support(s, p, d));
        assert_true(fabs(h_matrix - h_quat) <= 1e-12);
    }
    hull_destroy(oct);
}

static void test_early_out_matches_full_gjk(void **state) {
    (void)state;
    TestRng r = {777};
    Hull *oct = octahedron();
    Shape shapes[4] = {shape_box(vec3(FP_SIZE, 0.7 * FP_SIZE, 0.4 * FP_SIZE)), shape_hull(oct),
                       shape_capsule(0.5 * FP_SIZE, FP_SIZE), shape_sphere(0.6 * FP_SIZE)};
    int below = 0, beyond = 0;
    for (int i = 0; i < 6000; i++) {
        const Shape *a = &shapes[i % 4], *b = &shapes[(i / 4) % 4];
        Pose pa = {vec3(0, 0, 0), test_rng_rotation(&r)}, pb = near_pose(&r, 1.5 * FP_SIZE);
        ConvexCore ca = convex_core(a, pa), cb = convex_core(b, pb);
        Vec3 qa, qb, n, wa, wb, wn;
        double full = gjk_epa_core(&ca, &cb, &qa, &qb, &n);
        double within = gjk_epa_core_within(&ca, &cb, FP_MARGIN, &wa, &wb, &wn);
        if (full < FP_MARGIN - 1e-12) {
            below++;
            assert_true(within == full); /* bit for bit */
            assert_memory_equal(&qa, &wa, sizeof qa);
            assert_memory_equal(&qb, &wb, sizeof qb);
            assert_memory_equal(&n, &wn, sizeof n);
        } else if (full > FP_MARGIN + 1e-12) {
            beyond++;
            assert_true(within >= FP_MARGIN - 1e-12); /* reported as no contact */
            assert_true(within <= full + 1e-12);      /* a lower bound of the distance */
        }
    }
    printf("early out: %d pairs within the margin, %d beyond\n", below, beyond);
    assert_true(below > 500 && beyond > 500);
    hull_destroy(oct);
}

static double deepest(const Manifold *m) {
    double d = INFINITY;
    for (int k = 0; k < m->count; k++)
        d = fmin(d, m->points[k].distance);
    return d;
}

/* Separation of A and B along unit n (from B to A): a lower bound of their signed distance,
 * equal to it along the MTD normal. */
static double separation_along(const Shape *a, Pose pa, const Shape *b, Pose pb, Vec3 n) {
    return vec3_dot(n, shape_support(a, pa, vec3_neg(n))) - vec3_dot(n, shape_support(b, pb, n));
}

static void test_generic_matches_box_box(void **state) {
    (void)state;
    TestRng r = {4242};
    Vec3 ha = vec3(FP_SIZE, 0.7 * FP_SIZE, 0.5 * FP_SIZE);
    Vec3 hb = vec3(0.8 * FP_SIZE, FP_SIZE, 0.4 * FP_SIZE);
    Hull *hull_a = test_box_hull(ha);
    Shape box_a = shape_box(ha), as_hull = shape_hull(hull_a), box_b = shape_box(hb);
    int touching = 0;
    for (int i = 0; i < 4000; i++) {
        Pose pa = {random_vec(&r, 0.01), test_rng_rotation(&r)};
        Pose pb = near_pose(&r, 1.3 * FP_SIZE);
        pb.p = vec3_add(pb.p, pa.p);
        Manifold exact, generic;
        int ne = collide_shapes(&box_a, pa, &box_b, pb, FP_MARGIN, &exact);
        int ng = collide_shapes(&as_hull, pa, &box_b, pb, FP_MARGIN, &generic);
        Vec3 n;
        double dg = gjk_epa_distance(&as_hull, pa, &box_b, pb, NULL, NULL, &n);
        double de = deepest(&exact);
        if (ne > 0) { /* the closed form's deepest point is the signed MTD (or, overlapping,
                       * a face's within box_box_face_allowance of it) */
            touching++;
            assert_true(de - dg <= 1e-9);
            assert_true(dg - de <= 1e-9 + box_box_face_allowance(ha, hb, -dg));
            /* The GJK/EPA normal is an MTD direction (tie-robust: two equally deep axes are
             * both right). */
            double along = separation_along(&as_hull, pa, &box_b, pb, n);
            assert_true(fabs(along - dg) <= 1e-9);
        }
        /* The same touching decision, except within rounding of the margin. */
        if ((ne > 0) != (ng > 0))
            assert_true(fabs(dg - FP_MARGIN) <= 1e-9);
    }
    printf("box as hull against box-box: %d touching\n", touching);
    assert_true(touching > 500);
    hull_destroy(hull_a);
}

static void test_resting_box_box_distance(void **state) {
    (void)state;
    TestRng r = {99};
    Vec3 h = vec3(FP_SIZE, FP_SIZE, FP_SIZE);
    Shape box = shape_box(h);
    int separated = 0;
    for (int i = 0; i < 3000; i++) {
        /* B resting on A's top face, slightly tilted and shifted, gap -1e-4 .. 8e-4 m. */
        Vec3 axis = random_vec(&r, 1.0);
        double tilt = test_rng_range(&r, 0.0, 0.02);
        Quat q = quat_from_axis_angle(axis, tilt);
        double gap = test_rng_range(&r, -1e-4, 8e-4);
        Pose pa = {vec3(0, 0, 0), quat_identity()};
        Pose pb = {vec3(test_rng_range(&r, -0.5, 0.5) * FP_SIZE,
                        test_rng_range(&r, -0.5, 0.5) * FP_SIZE, 2.0 * FP_SIZE + gap),
                   q};
        /* Lift B so its lowest corner is gap above A's top face. */
        double low = INFINITY;
        for (int v = 0; v < 8; v++)
            low = fmin(
                low,
                pose_apply(pb, vec3(v & 1 ? h.x : -h.x, v & 2 ? h.y : -h.y, v & 4 ? h.z : -h.z)).z);
        pb.p.z += FP_SIZE + gap - low;
        Manifold m;
        int n = collide_shapes(&box, pa, &box, pb, FP_MARGIN, &m);
        double reference = gjk_epa_distance(&box, pa, &box, pb, NULL, NULL, NULL);
        if (reference < FP_MARGIN - 1e-9) {
            assert_true(n > 0);
            /* a face patch overlapping an edge pair's MTD by a hair (box_box_face_allowance) */
            assert_true(deepest(&m) - reference <= 1e-10);
            assert_true(reference - deepest(&m) <=
                        1e-10 + box_box_face_allowance(h, h, -reference));
            separated += reference > 0.0;
        }
    }
    printf("resting boxes: %d separated configurations checked\n", separated);
    assert_true(separated > 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix_support_matches_quaternion),
        cmocka_unit_test(test_early_out_matches_full_gjk),
        cmocka_unit_test(test_generic_matches_box_box),
        cmocka_unit_test(test_resting_box_box_distance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
