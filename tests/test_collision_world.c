/* Collision world (src/collision/world.c) with spheres and a floor: contact geometry and
 * direction, persistent ids (kept under jiggle, ended once, new after separation), the contact
 * set against brute-force all-pairs collide_shapes over random updates, static pairs, and
 * determinism (two worlds fed the same poses give the same bytes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "issim/collision.h"
#include "testutil.h"

static Pose at(double x, double y, double z) {
    return (Pose){{x, y, z}, {1, 0, 0, 0}};
}

static CollisionWorld *world(double margin, double fat_margin) {
    CollisionDesc d = collision_desc_default();
    d.margin = margin;
    d.fat_margin = fat_margin;
    IssimError err;
    CollisionWorld *w = collision_world_create(&d, &err);
    assert_non_null(w);
    return w;
}

static void test_defaults_and_errors(void **state) {
    CollisionDesc d = collision_desc_default();
    assert_near(d.margin, 1e-3, 0.0);
    assert_near(d.fat_margin, 0.01, 0.0);
    IssimError err;
    d.margin = -1.0;
    assert_null(collision_world_create(&d, &err));
    assert_int_equal(err.status, ISSIM_ERR_RANGE);
    d = collision_desc_default();
    d.fat_margin = NAN;
    assert_null(collision_world_create(&d, &err));
    CollisionWorld *w = collision_world_create(NULL, &err); /* NULL: the defaults */
    assert_non_null(w);
    int count = -1;
    collision_world_update(w);
    collision_world_contacts(w, &count);
    assert_int_equal(count, 0);
    collision_world_destroy(w);
}

/* Two overlapping spheres: one contact, normal from B (the higher index) to A, depth. */
static void test_sphere_pair(void **state) {
    CollisionWorld *w = world(1e-3, 0.05);
    Shape s = shape_sphere(0.5);
    assert_int_equal(collision_world_add(w, &s, at(2.0, 0, 0), false), 0);
    assert_int_equal(collision_world_add(w, &s, at(1.2, 0, 0), false), 1);
    assert_int_equal(collision_world_body_count(w), 2);
    assert_near(collision_world_shape(w, 1)->radius, 0.5, 0.0);
    assert_near(collision_world_pose(w, 0).p.x, 2.0, 0.0);
    collision_world_update(w);
    int n = 0;
    const CollisionContact *c = collision_world_contacts(w, &n);
    assert_int_equal(n, 1);
    assert_int_equal(c[0].body_a, 0);
    assert_int_equal(c[0].body_b, 1);
    assert_near(c[0].normal.x, 1.0, 1e-15); /* from B (x = 1.2) to A (x = 2.0) */
    assert_near(c[0].normal.y, 0.0, 1e-15);
    assert_near(c[0].point.distance, -0.2, 1e-12);
    /* The contact frame is orthonormal and right-handed: t1 x t2 = n. */
    Vec3 frame = vec3_cross(c[0].tangent1, c[0].tangent2);
    assert_near(vec3_norm(vec3_sub(frame, c[0].normal)), 0.0, 1e-12);
    assert_near(vec3_dot(c[0].tangent1, c[0].normal), 0.0, 1e-12);
    assert_near(vec3_norm(c[0].tangent1), 1.0, 1e-12);
    assert_near(c[0].point.point_a.x, 1.5, 1e-12);
    assert_near(c[0].point.point_b.x, 1.7, 1e-12);
    assert_int_equal(c[0].age, 0);
    CollisionStats st = collision_world_stats(w);
    assert_int_equal(st.bodies, 2);
    assert_int_equal(st.broad_pairs, 1);
    assert_int_equal(st.touching_pairs, 1);
    assert_int_equal(st.contacts, 1);
    assert_int_equal(st.began, 1);
    assert_int_equal(st.ended, 0);
    assert_true(st.broad_seconds >= 0.0 && st.narrow_seconds >= 0.0);
    /* A sphere on the floor (the floor added later, so the sphere is A): normal +z. */
    Shape floor = shape_plane(vec3(0, 0, 1), 0.0);
    assert_int_equal(collision_world_add(w, &floor, pose_identity(), true), 2);
    collision_world_set_pose(w, 0, at(2.0, 0, 3.0)); /* clear of everything */
    collision_world_set_pose(w, 1, at(-3.0, 0, 0.4999));
    collision_world_update(w);
    c = collision_world_contacts(w, &n);
    assert_int_equal(n, 1);
    assert_int_equal(c[0].body_a, 1);
    assert_int_equal(c[0].body_b, 2);
    assert_near(c[0].normal.z, 1.0, 1e-15);
    assert_near(c[0].point.distance, -1e-4, 1e-12);
    collision_world_destroy(w);
}

/* Near-contacts within the margin are reported even with no broad-phase fattening: the proxy
 * boxes include the margin. */
static void test_margin_reaches_broad_phase(void **state) {
    CollisionWorld *w = world(1e-3, 0.0);
    Shape s = shape_sphere(0.1);
    collision_world_add(w, &s, at(0, 0, 0), false);
    collision_world_add(w, &s, at(0.2 + 0.6e-3, 0, 0), false); /* gap 0.6 mm < 1 mm margin */
    collision_world_add(w, &s, at(0, 0.2 + 1.5e-3, 0), false); /* gap 1.5 mm: no contact */
    collision_world_update(w);
    int n = 0;
    const CollisionContact *c = collision_world_contacts(w, &n);
    assert_int_equal(n, 1);
    assert_int_equal(c[0].body_b, 1);
    assert_near(c[0].point.distance, 0.6e-3, 1e-12);
    collision_world_destroy(w);
}

static bool id_in(const uint32_t *ids, int n, uint32_t id) {
    int hits = 0;
    for (int i = 0; i < n; i++)
        hits += ids[i] == id;
    assert_true(hits <= 1);
    return hits == 1;
}

/* A sphere resting on another keeps its contact id under jiggle; separation ends it once;
 * coming back gives a new id. */
static void test_persistent_ids(void **state) {
    CollisionWorld *w = world(1e-3, 0.05);
    Shape s = shape_sphere(0.05);
    collision_world_add(w, &s, at(0, 0, 0.05), false);
    collision_world_add(w, &s, at(0, 0, 0.15 - 1e-4), false);
    collision_world_update(w);
    int n = 0, ne = 0;
    const CollisionContact *c = collision_world_contacts(w, &n);
    assert_int_equal(n, 1);
    uint32_t id = c[0].id;
    assert_true(id != 0);
    TestRng rng = {12345};
    for (int k = 1; k <= 100; k++) {
        Vec3 j = {test_rng_range(&rng, -1e-5, 1e-5), test_rng_range(&rng, -1e-5, 1e-5),
                  test_rng_range(&rng, -1e-5, 1e-5)};
        collision_world_set_pose(w, 1, at(j.x, j.y, 0.15 - 1e-4 + j.z));
        collision_world_update(w);
        c = collision_world_contacts(w, &n);
        assert_int_equal(n, 1);
        assert_int_equal(c[0].id, id);
        assert_int_equal(c[0].age, (uint32_t)k);
        collision_world_ended(w, &ne);
        assert_int_equal(ne, 0);
        assert_int_equal(collision_world_stats(w).began, 0);
    }
    /* Apart beyond the margin (2 mm gap): the contact ends, listed once. */
    collision_world_set_pose(w, 1, at(0, 0, 0.152));
    collision_world_update(w);
    collision_world_contacts(w, &n);
    assert_int_equal(n, 0);
    const uint32_t *ended = collision_world_ended(w, &ne);
    assert_int_equal(ne, 1);
    assert_true(id_in(ended, ne, id));
    assert_int_equal(collision_world_stats(w).ended, 1);
    collision_world_update(w); /* still apart: nothing ends twice */
    collision_world_ended(w, &ne);
    assert_int_equal(ne, 0);
    /* Back in contact: a new id. */
    collision_world_set_pose(w, 1, at(0, 0, 0.15 - 1e-4));
    collision_world_update(w);
    c = collision_world_contacts(w, &n);
    assert_int_equal(n, 1);
    assert_true(c[0].id != id && c[0].id > id);
    assert_int_equal(c[0].age, 0);
    /* Far away (outside the fat box, so the pair leaves the broad phase): ended once too. */
    id = c[0].id;
    collision_world_set_pose(w, 1, at(5, 5, 5));
    collision_world_update(w);
    ended = collision_world_ended(w, &ne);
    assert_int_equal(ne, 1);
    assert_true(id_in(ended, ne, id));
    collision_world_destroy(w);
}

static void test_static_pairs_never_reported(void **state) {
    CollisionWorld *w = world(1e-3, 0.05);
    Shape s = shape_sphere(0.5);
    Shape floor = shape_plane(vec3(0, 0, 1), 0.0);
    collision_world_add(w, &s, at(0, 0, 0), true);
    collision_world_add(w, &s, at(0.5, 0, 0), true); /* overlaps the first and the floor */
    collision_world_add(w, &floor, pose_identity(), true);
    collision_world_update(w);
    int n = -1;
    collision_world_contacts(w, &n);
    assert_int_equal(n, 0);
    assert_int_equal(collision_world_stats(w).broad_pairs, 0);
    /* A dynamic sphere touching both static ones and the floor: three contacts. */
    collision_world_add(w, &s, at(0.25, 0.8, 0.2), false);
    collision_world_update(w);
    const CollisionContact *c = collision_world_contacts(w, &n);
    assert_int_equal(n, 3);
    for (int i = 0; i < n; i++)
        assert_false(c[i].body_a < 3 && c[i].body_b < 3);
    collision_world_destroy(w);
}

/* ===== Random scenes against brute force ===== */

#define RS_BODIES 300
#define RS_STATIC 40
#define RS_UPDATES 60
#define RS_EXTENT 2.0

typedef struct Expected {
    int a, b;
    uint64_t feature;
    double distance;
} Expected;

static int compare_expected(const void *pa, const void *pb) {
    const Expected *x = pa, *y = pb;
    if (x->a != y->a)
        return (x->a > y->a) - (x->a < y->a);
    if (x->b != y->b)
        return (x->b > y->b) - (x->b < y->b);
    if (x->feature != y->feature)
        return (x->feature > y->feature) - (x->feature < y->feature);
    return (x->distance > y->distance) - (x->distance < y->distance);
}

static void random_step(TestRng *rng, CollisionWorld *w, int first_dynamic, int count) {
    for (int i = first_dynamic; i < count; i++) {
        Pose p = collision_world_pose(w, i);
        double u = test_rng_uniform(rng);
        if (u < 0.05) { /* teleport */
            p.p = vec3(test_rng_range(rng, 0, RS_EXTENT), test_rng_range(rng, 0, RS_EXTENT),
                       test_rng_range(rng, -0.1, RS_EXTENT));
        } else if (u < 0.8) { /* drift */
            p.p = vec3_add(p.p,
                           vec3(test_rng_range(rng, -0.02, 0.02), test_rng_range(rng, -0.02, 0.02),
                                test_rng_range(rng, -0.02, 0.02)));
        } else {
            continue; /* not set this update */
        }
        collision_world_set_pose(w, i, p);
    }
}

static void test_random_against_brute_force(void **state) {
    TestRng rng = {0xdeadbeefcafef00dull};
    CollisionWorld *w = world(2e-3, 0.05);
    CollisionWorld *twin = world(2e-3, 0.05);
    Shape floor = shape_plane(vec3(0, 0, 1), 0.0);
    collision_world_add(w, &floor, pose_identity(), true);
    collision_world_add(twin, &floor, pose_identity(), true);
    for (int i = 1; i < RS_BODIES; i++) {
        Shape s = shape_sphere(test_rng_range(&rng, 0.03, 0.12));
        Pose p = at(test_rng_range(&rng, 0, RS_EXTENT), test_rng_range(&rng, 0, RS_EXTENT),
                    test_rng_range(&rng, -0.1, RS_EXTENT));
        bool is_static = i < RS_STATIC; /* some of these overlap each other and the floor */
        assert_int_equal(collision_world_add(w, &s, p, is_static), i);
        assert_int_equal(collision_world_add(twin, &s, p, is_static), i);
    }
    Expected *expected = malloc(RS_BODIES * RS_BODIES * sizeof *expected);
    Expected *got = malloc(RS_BODIES * RS_BODIES * sizeof *got);
    uint32_t *previous_ids = malloc(RS_BODIES * RS_BODIES * sizeof *previous_ids);
    assert_true(expected && got && previous_ids);
    int previous_count = 0, total_contacts = 0, total_ended = 0, total_kept = 0;
    uint32_t max_id = 0;
    for (int update = 0; update < RS_UPDATES; update++) {
        collision_world_update(w);
        collision_world_update(twin);
        int n = 0, ne = 0;
        const CollisionContact *c = collision_world_contacts(w, &n);
        const uint32_t *ended = collision_world_ended(w, &ne);
        /* Brute force: every pair that is not static-static. */
        int m = 0;
        for (int a = 0; a < RS_BODIES; a++) {
            for (int b = a + 1; b < RS_BODIES; b++) {
                if (a < RS_STATIC && b < RS_STATIC)
                    continue;
                Manifold mf;
                int k = collide_shapes(collision_world_shape(w, a), collision_world_pose(w, a),
                                       collision_world_shape(w, b), collision_world_pose(w, b),
                                       2e-3, &mf);
                for (int j = 0; j < k; j++)
                    expected[m++] = (Expected){a, b, mf.points[j].feature, mf.points[j].distance};
            }
        }
        assert_int_equal(n, m);
        for (int i = 0; i < n; i++) {
            assert_true(c[i].body_a < c[i].body_b);
            assert_false(c[i].body_a < RS_STATIC && c[i].body_b < RS_STATIC);
            assert_near(vec3_norm(c[i].normal), 1.0, 1e-12);
            /* sorted by (body_a, body_b, id), ids distinct */
            if (i > 0) {
                const CollisionContact *p = &c[i - 1];
                assert_true(
                    p->body_a < c[i].body_a ||
                    (p->body_a == c[i].body_a &&
                     (p->body_b < c[i].body_b || (p->body_b == c[i].body_b && p->id < c[i].id))));
            }
            got[i] = (Expected){c[i].body_a, c[i].body_b, c[i].point.feature, c[i].point.distance};
        }
        qsort(expected, (size_t)m, sizeof *expected, compare_expected);
        qsort(got, (size_t)n, sizeof *got, compare_expected);
        for (int i = 0; i < n; i++) {
            if (compare_expected(&expected[i], &got[i]) != 0)
                fail_msg("update %d: contact (%d, %d) where brute force has (%d, %d)", update,
                         got[i].a, got[i].b, expected[i].a, expected[i].b);
        }
        /* Identity: a kept id was there before; a new one was never used; the previous ids
         * are exactly the kept ones plus the ended ones. */
        int kept = 0, began = 0;
        for (int i = 0; i < n; i++) {
            if (c[i].age > 0) {
                assert_true(id_in(previous_ids, previous_count, c[i].id));
                kept++;
            } else {
                assert_true(c[i].id > max_id);
                began++;
            }
        }
        for (int i = 0; i < ne; i++) {
            assert_true(id_in(previous_ids, previous_count, ended[i]));
            for (int k = 0; k < n; k++)
                assert_true(c[k].id != ended[i]);
        }
        assert_int_equal(kept + ne, previous_count);
        CollisionStats st = collision_world_stats(w);
        assert_int_equal(st.began, began);
        assert_int_equal(st.ended, ne);
        assert_int_equal(st.contacts, n);
        for (int i = 0; i < n; i++)
            max_id = c[i].id > max_id ? c[i].id : max_id;
        previous_count = n;
        for (int i = 0; i < n; i++)
            previous_ids[i] = c[i].id;
        total_contacts += n;
        total_ended += ne;
        total_kept += kept;
        /* Determinism: the twin, fed the same poses in the same order, has the same bytes. */
        int n2 = 0, ne2 = 0;
        const CollisionContact *c2 = collision_world_contacts(twin, &n2);
        const uint32_t *ended2 = collision_world_ended(twin, &ne2);
        assert_int_equal(n2, n);
        assert_int_equal(ne2, ne);
        if (n > 0)
            assert_memory_equal(c2, c, (size_t)n * sizeof *c);
        if (ne > 0)
            assert_memory_equal(ended2, ended, (size_t)ne * sizeof *ended);
        TestRng twin_rng = rng;
        random_step(&rng, w, RS_STATIC, RS_BODIES);
        random_step(&twin_rng, twin, RS_STATIC, RS_BODIES);
    }
    /* The scene exercised what it was meant to. */
    assert_true(total_contacts > 20 * RS_UPDATES);
    assert_true(total_ended > RS_UPDATES && total_kept > 10 * RS_UPDATES);
    free(expected);
    free(got);
    free(previous_ids);
    collision_world_destroy(w);
    collision_world_destroy(twin);
}

/* rest_tolerance: a box resting on a box, trembling by 1e-5 m, has its contacts carried over
 * (no narrow phase), with the same ids and distances within the tolerance; a move beyond the
 * tolerance tests the pair again; with the tolerance 0 nothing is carried. */
static void test_rest_tolerance(void **state) {
    IssimError err = {0};
    CollisionDesc d = collision_desc_default();
    d.rest_tolerance = 1e-4;
    CollisionWorld *w = collision_world_create(&d, &err);
    assert_non_null(w);
    Shape box = shape_box(vec3(0.05, 0.05, 0.05));
    Pose low = {vec3(0, 0, 0), quat_identity()}, high = {vec3(0, 0, 0.0999), quat_identity()};
    collision_world_add(w, &box, low, false);
    collision_world_add(w, &box, high, false);
    collision_world_update(w);
    int n = 0;
    const CollisionContact *c = collision_world_contacts(w, &n);
    assert_int_equal(n, 4);
    uint32_t ids[4];
    for (int k = 0; k < 4; k++)
        ids[k] = c[k].id;
    TestRng rng = {77};
    for (int step = 0; step < 20; step++) {
        Pose p = high;
        p.p.x += test_rng_range(&rng, -1e-5, 1e-5);
        p.p.z += test_rng_range(&rng, -1e-5, 1e-5);
        collision_world_set_pose(w, 1, p);
        collision_world_update(w);
        c = collision_world_contacts(w, &n);
        assert_int_equal(n, 4);
        assert_int_equal(collision_world_stats(w).carried_pairs, 1);
        Manifold m;
        collide_shapes(&box, low, &box, p, 1e-3, &m);
        for (int k = 0; k < 4; k++) {
            assert_true(c[k].id == ids[k]);
            assert_near(c[k].point.distance, m.points[0].distance, 2 * d.rest_tolerance);
        }
    }
    /* A move beyond the tolerance: tested again, distances exact. */
    Pose moved = high;
    moved.p.z -= 5e-4;
    collision_world_set_pose(w, 1, moved);
    collision_world_update(w);
    c = collision_world_contacts(w, &n);
    assert_int_equal(collision_world_stats(w).carried_pairs, 0);
    assert_near(c[0].point.distance, -1e-4 - 5e-4, 1e-12);
    collision_world_destroy(w);

    /* Default (tolerance 0): only exactly unchanged poses (sleeping bodies) are carried; the
     * smallest move is tested again. */
    w = collision_world_create(NULL, &err);
    collision_world_add(w, &box, low, false);
    collision_world_add(w, &box, high, false);
    collision_world_update(w);
    int n0 = 0;
    const CollisionContact *c0 = collision_world_contacts(w, &n0);
    CollisionContact before[MANIFOLD_MAX_POINTS];
    memcpy(before, c0, sizeof(CollisionContact) * (size_t)n0);
    for (int k = 1; k <= 3; k++) { /* set, but the same pose: everything carried, ages grow */
        collision_world_set_pose(w, 1, high);
        collision_world_update(w);
        assert_int_equal(collision_world_stats(w).carried_pairs, 1);
        c = collision_world_contacts(w, &n);
        assert_int_equal(n, n0);
        for (int i = 0; i < n; i++) {
            assert_int_equal(c[i].id, before[i].id);
            assert_int_equal(c[i].age, before[i].age + (uint32_t)k);
            assert_true(c[i].point.distance == before[i].point.distance);
        }
    }
    Pose nudged = high;
    nudged.p.z = nextafter(nudged.p.z, 1.0);
    collision_world_set_pose(w, 1, nudged);
    collision_world_update(w);
    assert_int_equal(collision_world_stats(w).carried_pairs, 0);
    c = collision_world_contacts(w, &n);
    Manifold exact;
    collide_shapes(&box, low, &box, nudged, 1e-3, &exact);
    assert_int_equal(n, exact.count);
    assert_true(c[0].point.distance == exact.points[0].distance ||
                c[0].point.distance == exact.points[1].distance ||
                c[0].point.distance == exact.points[2].distance ||
                c[0].point.distance == exact.points[3].distance);
    collision_world_destroy(w);
}

/* Contact ids stay put under small motions (a resting pile's tremble of 1e-5 m) for the pairs a
 * pile is made of, including equal boxes stacked corner on corner. */
static void test_ids_stable_under_tremble(void **state) {
    Shape sphere = shape_sphere(0.05), box = shape_box(vec3(0.05, 0.05, 0.05));
    Shape plane = shape_plane(vec3(0, 0, 1), 0.0);
    struct {
        const char *name;
        const Shape *a, *b;
        Vec3 pa, pb;
        int contacts;
    } cases[] = {
        {"sphere on sphere", &sphere, &sphere, {0, 0, 0.0999}, {0, 0, 0}, 1},
        {"sphere on box", &sphere, &box, {0, 0, 0.0999}, {0, 0, 0}, 1},
        {"box on box", &box, &box, {0, 0, 0.0999}, {0, 0, 0}, 4},
        {"box beside box", &box, &box, {0.0999, 0, 0}, {0, 0, 0}, 4},
        {"box on offset box", &box, &box, {0.05, 0.05, 0.0999}, {0, 0, 0}, 4},
        {"box on plane", &box, &plane, {0, 0, 0.0499}, {0, 0, 0}, 4},
        /* Two equal face axes tie: the reference face flips, the region stays (matched by
         * position). */
        {"box edge on edge", &box, &box, {0.0999, 0.0999, 0}, {0, 0, 0}, 4},
    };
    TestRng rng = {4242};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        IssimError err;
        CollisionWorld *w = collision_world_create(NULL, &err);
        bool b_static = cases[i].b == &plane;
        collision_world_add(w, cases[i].a, (Pose){cases[i].pa, quat_identity()}, false);
        collision_world_add(w, cases[i].b, (Pose){cases[i].pb, quat_identity()}, b_static);
        int began = 0, n = 0;
        for (int step = 0; step < 50; step++) {
            Vec3 ja = {test_rng_range(&rng, -1e-5, 1e-5), test_rng_range(&rng, -1e-5, 1e-5),
                       test_rng_range(&rng, -1e-5, 1e-5)};
            collision_world_set_pose(w, 0, (Pose){vec3_add(cases[i].pa, ja), quat_identity()});
            if (!b_static) {
                Vec3 jb = {test_rng_range(&rng, -1e-5, 1e-5), test_rng_range(&rng, -1e-5, 1e-5),
                           test_rng_range(&rng, -1e-5, 1e-5)};
                collision_world_set_pose(w, 1, (Pose){vec3_add(cases[i].pb, jb), quat_identity()});
            }
            collision_world_update(w);
            if (step > 0)
                began += collision_world_stats(w).began;
            collision_world_contacts(w, &n);
        }
        print_message("%-18s %d contacts, %d begun over 49 trembling updates\n", cases[i].name, n,
                      began);
        assert_int_equal(n, cases[i].contacts);
        assert_int_equal(began, 0);
        collision_world_destroy(w);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_errors),
        cmocka_unit_test(test_sphere_pair),
        cmocka_unit_test(test_margin_reaches_broad_phase),
        cmocka_unit_test(test_persistent_ids),
        cmocka_unit_test(test_static_pairs_never_reported),
        cmocka_unit_test(test_random_against_brute_force),
        cmocka_unit_test(test_rest_tolerance),
        cmocka_unit_test(test_ids_stable_under_tremble),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
