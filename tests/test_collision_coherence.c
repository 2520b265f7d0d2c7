/* Temporal coherence of the collision world (CollisionDesc.coherence_tolerance, world.c): pairs
 * that moved less than the tolerance since their last full narrow test are rebuilt from
 * body-fixed anchors. Checked against full tests (collide_shapes) at the same poses:
 * - a random cluster of boxes, spheres, capsules and octahedra on a floor, random-walking in
 *   position and orientation: each pair's depth (its smallest distance) within twice the
 *   tolerance of the full test's (the stated bound), and so each point of the same features (an
 *   observed bound: a point sliding along a feature is a different material point), no pair
 *   closer than margin - tolerance missed, no point reported beyond the margin, and both
 *   refreshed and fully tested pairs occurring;
 * - a vertex or sphere centre on the face that carries the normal (box on a plane, sphere on a
 *   box, a small box on a big one, trembling and turning): exact;
 * - after collision_world_restore_identity every pair is tested in full;
 * - the coherence state saved and restored with the identity: a replay of the same poses gives
 *   back the same contacts bit for bit;
 * - a tolerance at or above the margin is refused by name. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "issim/collision.h"
#include "testutil.h"

#define CO_MARGIN 1e-3
#define CO_TOLERANCE 1e-4

static CollisionWorld *coherent_world(double tolerance) {
    CollisionDesc d = collision_desc_default();
    d.margin = CO_MARGIN;
    d.coherence_tolerance = tolerance;
    IssimError err;
    CollisionWorld *w = collision_world_create(&d, &err);
    assert_non_null(w);
    return w;
}

/* A small random motion: a step of up to `step` per axis and a turn of up to `turn` rad. */
static Pose wander(TestRng *rng, Pose p, double step, double turn) {
    p.p = vec3_add(p.p, vec3(test_rng_range(rng, -step, step), test_rng_range(rng, -step, step),
                             test_rng_range(rng, -step, step)));
    Vec3 axis = vec3_normalize(
        vec3(test_rng_range(rng, -1, 1), test_rng_range(rng, -1, 1), test_rng_range(rng, -1, 1)));
    Quat dq = quat_from_axis_angle(axis, test_rng_range(rng, 0.0, turn));
    p.q = quat_normalize(quat_mul(dq, p.q));
    return p;
}

/* The world's contacts of pair (a, b): first index and count (contacts sorted by pair). */
static int pair_range(const CollisionContact *c, int n, int a, int b, int *first) {
    int i = 0;
    while (i < n && (c[i].body_a < a || (c[i].body_a == a && c[i].body_b < b)))
        i++;
    *first = i;
    int k = i;
    while (k < n && c[k].body_a == a && c[k].body_b == b)
        k++;
    return k - i;
}

static double smallest_distance(const ContactPoint *p, int stride_bytes, int count) {
    double d = INFINITY;
    for (int k = 0; k < count; k++)
        d = fmin(d, ((const ContactPoint *)((const char *)p + (size_t)k * stride_bytes))->distance);
    return d;
}

#define CL_SIDE 4 /* bodies per grid side */
#define CL_BODIES (CL_SIDE * CL_SIDE * CL_SIDE + 1)
#define CL_UPDATES 200

/* A random cluster of CL_BODIES - 1 boxes, spheres, capsules and octahedra on a grid above a
 * floor (body 0), turned at random: they touch their neighbours and the floor. */
static CollisionWorld *cluster_world(TestRng *rng, TestOctahedron *octa) {
    test_octahedron(octa, 0.06);
    CollisionWorld *w = coherent_world(CO_TOLERANCE);
    Shape floor = shape_plane(vec3(0, 0, 1), 0.0);
    assert_int_equal(collision_world_add(w, &floor, pose_identity(), true), 0);
    for (int i = 0; i < CL_BODIES - 1; i++) {
        Shape s;
        switch (i % 4) {
        case 0:
            s = shape_box(vec3(test_rng_range(rng, 0.02, 0.05), test_rng_range(rng, 0.02, 0.05),
                               test_rng_range(rng, 0.02, 0.05)));
            break;
        case 1: /* some larger than their neighbouring boxes: the box is the pair's moving body */
            s = shape_sphere(test_rng_range(rng, 0.035, 0.06));
            break;
        case 2:
            s = shape_capsule(0.03, 0.02);
            break;
        default:
            s = shape_hull(&octa->hull);
        }
        int ix = i % CL_SIDE, iy = (i / CL_SIDE) % CL_SIDE, iz = i / (CL_SIDE * CL_SIDE);
        Pose p = {vec3(0.085 * ix, 0.085 * iy, 0.04 + 0.085 * iz), test_rng_rotation(rng)};
        assert_int_equal(collision_world_add(w, &s, p, false), i + 1);
    }
    return w;
}

/* Every body but the floor trembles: mostly within the tolerance, now and then beyond it. */
static void tremble(TestRng *rng, CollisionWorld *w) {
    for (int i = 1; i < CL_BODIES; i++) {
        bool jump = test_rng_uniform(rng) < 0.03;
        Pose p = wander(rng, collision_world_pose(w, i), jump ? 2e-4 : 2e-5, jump ? 4e-3 : 3e-4);
        collision_world_set_pose(w, i, p);
    }
}

static void test_refresh_against_full_test(void **state) {
    TestRng rng = {0x5eed0c0e4e7ull};
    TestOctahedron octa;
    CollisionWorld *w = cluster_world(&rng, &octa);
    double worst_depth = 0.0, worst_point = 0.0;
    long refreshed = 0, narrow_full = 0, pairs_checked = 0, touching_checked = 0;
    for (int update = 0; update < CL_UPDATES; update++) {
        tremble(&rng, w);
        collision_world_update(w);
        CollisionStats st = collision_world_stats(w);
        if (update > 0) {
            refreshed += st.refreshed_pairs;
            narrow_full += st.broad_pairs; /* an upper bound on the pairs considered */
        }
        int n;
        const CollisionContact *c = collision_world_contacts(w, &n);
        for (int k = 0; k < n; k++)
            assert_true(c[k].point.distance < CO_MARGIN);
        for (int a = 0; a < CL_BODIES; a++) {
            for (int b = a + 1; b < CL_BODIES; b++) {
                Manifold m;
                int full = collide_shapes(collision_world_shape(w, a), collision_world_pose(w, a),
                                          collision_world_shape(w, b), collision_world_pose(w, b),
                                          CO_MARGIN, &m);
                int first, got = pair_range(c, n, a, b, &first);
                if (full == 0 && got == 0)
                    continue;
                pairs_checked++;
                double full_depth = smallest_distance(m.points, sizeof m.points[0], full);
                double got_depth = smallest_distance(&c[first].point, sizeof c[0], got);
                if (full > 0 && got > 0) {
                    touching_checked++;
                    worst_depth = fmax(worst_depth, fabs(full_depth - got_depth));
                    assert_true(fabs(full_depth - got_depth) <= 2 * CO_TOLERANCE + 1e-12);
                    for (int k = 0; k < got; k++)
                        for (int j = 0; j < full; j++)
                            if (m.points[j].feature == c[first + k].point.feature)
                                worst_point = fmax(worst_point, fabs(m.points[j].distance -
                                                                     c[first + k].point.distance));
                    assert_true(worst_point <= 2 * CO_TOLERANCE);
                } else if (full > 0) { /* missed: only just inside the margin */
                    assert_true(full_depth >= CO_MARGIN - CO_TOLERANCE);
                } else { /* kept while a full test drops it: only just inside the margin */
                    assert_true(got_depth >= CO_MARGIN - 2 * CO_TOLERANCE);
                }
            }
        }
    }
    print_message("%ld pairs checked (%ld touching in both), %ld refreshed of %ld broad pairs: "
                  "worst depth difference %.3g m, worst same-feature point %.3g m (bound %.3g)\n",
                  pairs_checked, touching_checked, refreshed, narrow_full, worst_depth, worst_point,
                  2 * CO_TOLERANCE);
    assert_true(touching_checked > 50 * CL_UPDATES); /* the cluster really touches */
    assert_true(refreshed > narrow_full / 10);       /* the refresh really ran */
    assert_true(worst_depth > 0.0);                  /* and really differed somewhere */
    collision_world_destroy(w);
}

/* Point j of m is a vertex (or round core) of one body on a face of the other that carries the
 * normal (feature halves, collision.h: kind 0 vertex, 2 face in the top two bits). */
static bool vertex_on_owner_face(const Manifold *m, int j) {
    uint32_t fa = (uint32_t)(m->points[j].feature >> 32), fb = (uint32_t)m->points[j].feature;
    return (m->normal_owner == MANIFOLD_NORMAL_OF_B && fa >> 30 == 0 && fb >> 30 == 2) ||
           (m->normal_owner == MANIFOLD_NORMAL_OF_A && fb >> 30 == 0 && fa >> 30 == 2);
}

/* A vertex (or sphere centre) on the face that carries the normal, the features kept: the
 * refreshed point is exactly the full test's. */
static void test_vertex_on_face_exact(void **state) {
    Shape box = shape_box(vec3(0.05, 0.05, 0.05)), big = shape_box(vec3(0.2, 0.2, 0.2));
    Shape small = shape_box(vec3(0.03, 0.03, 0.03)), sphere = shape_sphere(0.05);
    Shape plane = shape_plane(vec3(0, 0, 1), 0.0);
    Quat tilt = quat_from_axis_angle(vec3_normalize(vec3(1, 2, 0)), 0.01);
    struct {
        const char *name;
        const Shape *a, *b;
        Pose pa, pb;
    } cases[] = {
        {"box on plane", &box, &plane, {{0, 0, 0.0499}, {1, 0, 0, 0}}, {{0, 0, 0}, {1, 0, 0, 0}}},
        {"sphere on box",
         &sphere,
         &big,
         {{0.03, -0.05, 0.2499}, {1, 0, 0, 0}},
         {{0, 0, 0}, {1, 0, 0, 0}}},
        {"small box on big box",
         &small,
         &big,
         {{0.02, 0.05, 0.2298}, tilt},
         {{0, 0, 0}, {1, 0, 0, 0}}},
    };
    TestRng rng = {77};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CollisionWorld *w = coherent_world(CO_TOLERANCE);
        bool b_static = cases[i].b == &plane;
        collision_world_add(w, cases[i].a, cases[i].pa, false);
        collision_world_add(w, cases[i].b, cases[i].pb, b_static);
        int checked = 0, refreshed = 0, began = 0;
        double worst = 0.0;
        for (int step = 0; step < 60; step++) {
            collision_world_set_pose(w, 0, wander(&rng, cases[i].pa, 1e-5, 1e-4));
            if (!b_static)
                collision_world_set_pose(w, 1, wander(&rng, cases[i].pb, 1e-5, 1e-4));
            collision_world_update(w);
            CollisionStats st = collision_world_stats(w);
            refreshed += st.refreshed_pairs;
            began += step > 0 ? st.began : 0;
            int n;
            const CollisionContact *c = collision_world_contacts(w, &n);
            Manifold m;
            collide_shapes(collision_world_shape(w, 0), collision_world_pose(w, 0),
                           collision_world_shape(w, 1), collision_world_pose(w, 1), CO_MARGIN, &m);
            for (int j = 0; j < m.count; j++) {
                if (!vertex_on_owner_face(&m, j))
                    continue;
                for (int k = 0; k < n; k++) {
                    if (c[k].point.feature != m.points[j].feature)
                        continue;
                    double scale = 0.5; /* m: the poses' size */
                    worst = fmax(worst, fabs(c[k].point.distance - m.points[j].distance));
                    assert_near(c[k].point.distance, m.points[j].distance, 1e-14 * scale);
                    Vec3 da = vec3_sub(c[k].point.point_a, m.points[j].point_a);
                    Vec3 dn = vec3_sub(c[k].normal, m.normal);
                    assert_true(vec3_norm(da) <= 1e-14 * scale && vec3_norm(dn) <= 1e-14);
                    checked++;
                }
            }
        }
        print_message("%-22s %d points checked, %d of 60 updates refreshed, worst %.3g m\n",
                      cases[i].name, checked, refreshed, worst);
        assert_true(checked >= 50);
        assert_true(refreshed >= 30);
        assert_int_equal(began, 0);
        collision_world_destroy(w);
    }
}

/* A rewind brings contacts without anchors: the next update tests every pair in full. */
static void test_restore_identity_tests_in_full(void **state) {
    Shape box = shape_box(vec3(0.05, 0.05, 0.05)), plane = shape_plane(vec3(0, 0, 1), 0.0);
    CollisionWorld *w = coherent_world(CO_TOLERANCE);
    collision_world_add(w, &box, (Pose){{0, 0, 0.0499}, {1, 0, 0, 0}}, false);
    collision_world_add(w, &box, (Pose){{0.0999, 0, 0.0499}, {1, 0, 0, 0}}, false);
    collision_world_add(w, &plane, pose_identity(), true);
    collision_world_update(w);
    int n;
    const CollisionContact *c = collision_world_contacts(w, &n);
    assert_int_equal(n, 12);
    CollisionContact saved[12];
    memcpy(saved, c, sizeof saved);
    uint32_t next = collision_world_next_id(w);
    collision_world_set_pose(w, 0, (Pose){{1e-6, 0, 0.0499}, {1, 0, 0, 0}});
    collision_world_update(w);
    assert_int_equal(collision_world_stats(w).refreshed_pairs, 2); /* box-box and box-plane */
    IssimError err;
    assert_int_equal(collision_world_restore_identity(w, saved, 12, next, &err), ISSIM_OK);
    collision_world_set_pose(w, 0, (Pose){{2e-6, 0, 0.0499}, {1, 0, 0, 0}});
    collision_world_update(w);
    assert_int_equal(collision_world_stats(w).refreshed_pairs, 0);
    assert_int_equal(collision_world_stats(w).began, 0); /* the ids came back */
    c = collision_world_contacts(w, &n);
    for (int k = 0; k < n; k++)
        assert_int_equal(c[k].id, saved[k].id);
    collision_world_destroy(w);
}

#define RS_BEFORE 40 /* updates before the save */
#define RS_AFTER 60  /* updates recorded after it, then replayed */

/* Runs RS_AFTER updates from the world's state, the poses from `poses` (recorded into it when
 * record is set), the contacts of each update appended to contacts (counts[u] each), the
 * refreshed pairs summed into *refreshed. */
static void run_recorded(CollisionWorld *w, TestRng *rng, bool record, Pose *poses,
                         CollisionContact **contacts, int *counts, long *refreshed) {
    for (int u = 0; u < RS_AFTER; u++) {
        Pose *row = &poses[(size_t)u * CL_BODIES];
        if (record) {
            tremble(rng, w);
            for (int i = 0; i < CL_BODIES; i++)
                row[i] = collision_world_pose(w, i);
        }
        for (int i = 1; i < CL_BODIES; i++)
            collision_world_set_pose(w, i, row[i]);
        collision_world_update(w);
        *refreshed += collision_world_stats(w).refreshed_pairs;
        const CollisionContact *c = collision_world_contacts(w, &counts[u]);
        contacts[u] = malloc(sizeof *c * (size_t)counts[u] + 1);
        memcpy(contacts[u], c, sizeof *c * (size_t)counts[u]);
    }
}

/* Updates u whose contacts differ bitwise between runs a and b. */
static int differing_updates(CollisionContact **a, const int *na, CollisionContact **b,
                             const int *nb) {
    int differ = 0;
    for (int u = 0; u < RS_AFTER; u++)
        differ += na[u] != nb[u] || memcmp(a[u], b[u], sizeof *a[u] * (size_t)na[u]) != 0;
    return differ;
}

/* Save after RS_BEFORE updates, run RS_AFTER more, restore identity and coherence state, replay
 * the same poses: the same contacts bit for bit (ids, points, normals, distances, ages), with
 * refreshes in both runs. Restoring the identity alone tests every pair in full at the first
 * replayed update, and its contacts differ (the comparison can fail). */
static void test_saved_coherence_replays_bit_identical(void **state) {
    TestRng rng = {0xc0de5a7eull};
    TestOctahedron octa;
    CollisionWorld *w = cluster_world(&rng, &octa);
    for (int u = 0; u < RS_BEFORE; u++) {
        tremble(&rng, w);
        collision_world_update(w);
    }
    int n;
    const CollisionContact *c = collision_world_contacts(w, &n);
    CollisionContact *identity = malloc(sizeof *c * (size_t)n + 1);
    memcpy(identity, c, sizeof *c * (size_t)n);
    uint32_t next_id = collision_world_next_id(w);
    size_t size = collision_world_coherence_size(w);
    assert_true(size > sizeof(CollisionContact) * (size_t)n); /* anchors, frames, rest poses */
    unsigned char *saved = malloc(size);
    IssimError err;
    assert_int_equal(collision_world_save_coherence(w, saved, size - 1, &err), ISSIM_ERR_RANGE);
    assert_int_equal(collision_world_save_coherence(w, saved, size, &err), ISSIM_OK);
    Pose start[CL_BODIES];
    for (int i = 0; i < CL_BODIES; i++)
        start[i] = collision_world_pose(w, i);

    Pose *poses = malloc(sizeof *poses * RS_AFTER * CL_BODIES);
    CollisionContact *first[RS_AFTER], *again[RS_AFTER], *identity_only[RS_AFTER];
    int first_n[RS_AFTER], again_n[RS_AFTER], identity_only_n[RS_AFTER];
    long refreshed_first = 0, refreshed_again = 0, refreshed_identity_only = 0;
    run_recorded(w, &rng, true, poses, first, first_n, &refreshed_first);

    /* A state that does not fit (the contacts of another update) is refused by name. */
    assert_int_equal(collision_world_restore_coherence(w, saved, size, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "coherence state"));

    assert_int_equal(collision_world_restore_identity(w, identity, n, next_id, &err), ISSIM_OK);
    assert_int_equal(collision_world_restore_coherence(w, saved, size, &err), ISSIM_OK);
    for (int i = 1; i < CL_BODIES; i++)
        collision_world_set_pose(w, i, start[i]);
    run_recorded(w, &rng, false, poses, again, again_n, &refreshed_again);

    assert_int_equal(collision_world_restore_identity(w, identity, n, next_id, &err), ISSIM_OK);
    for (int i = 1; i < CL_BODIES; i++)
        collision_world_set_pose(w, i, start[i]);
    run_recorded(w, &rng, false, poses, identity_only, identity_only_n, &refreshed_identity_only);

    int differ = differing_updates(first, first_n, again, again_n);
    int differ_identity_only = differing_updates(first, first_n, identity_only, identity_only_n);
    print_message("%d contacts and %zu bytes of coherence state saved; %ld / %ld pairs refreshed "
                  "in the run / its replay: %d of %d updates differ (identity alone: %d)\n",
                  n, size, refreshed_first, refreshed_again, differ, RS_AFTER,
                  differ_identity_only);
    assert_true(refreshed_first > 50 * RS_AFTER); /* most pairs refresh */
    assert_int_equal(refreshed_again, refreshed_first);
    assert_int_equal(differ, 0);
    assert_true(differ_identity_only > 0);
    for (int u = 0; u < RS_AFTER; u++) {
        free(first[u]);
        free(again[u]);
        free(identity_only[u]);
    }
    free(poses);
    free(saved);
    free(identity);
    collision_world_destroy(w);
}

static void test_tolerance_checked(void **state) {
    CollisionDesc d = collision_desc_default();
    IssimError err;
    assert_near(d.coherence_tolerance, 0.0, 0.0); /* off by default: exact and rewindable */
    d.coherence_tolerance = d.margin;
    assert_null(collision_world_create(&d, &err));
    assert_int_equal(err.status, ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "coherence_tolerance"));
    d.coherence_tolerance = -1e-6;
    assert_null(collision_world_create(&d, &err));
    d.coherence_tolerance = NAN;
    assert_null(collision_world_create(&d, &err));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refresh_against_full_test),
        cmocka_unit_test(test_vertex_on_face_exact),
        cmocka_unit_test(test_restore_identity_tests_in_full),
        cmocka_unit_test(test_saved_coherence_replays_bit_identical),
        cmocka_unit_test(test_tolerance_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
