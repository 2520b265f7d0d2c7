/* Broad phase (src/collision/broadphase.c): the dynamic AABB tree against brute force.
 *
 * Fat boxes depend on each proxy's history, so the reported set is not a function of the
 * current boxes alone. The test mirrors every proxy's fat box (the box grown by the margin at
 * add and whenever broadphase_move says the proxy was reinserted) and checks after every round
 * of random moves, adds and removes: no miss (every pair whose actual boxes overlap is
 * reported), no false or repeated report (every reported pair's fat boxes overlap, users
 * ascending within a pair, pairs strictly ascending), and, with the mirrored fat boxes, that the
 * reported set is exactly the brute-force set of fat-box overlaps. Rounds alternate between
 * many changes and few, so both the incremental pair update and the full rebuild run. The tree
 * height must stay within a balanced tree's bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "issim/collision.h"
#include "testutil.h"

typedef struct PairList {
    int (*v)[2];
    int count, cap;
} PairList;

static void collect(int a, int b, void *ctx) {
    PairList *l = ctx;
    if (l->count == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    l->v[l->count][0] = a;
    l->v[l->count][1] = b;
    l->count++;
}

static bool overlap(Aabb a, Aabb b) {
    return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
           a.min.z <= b.max.z && b.min.z <= a.max.z;
}

static Aabb grow_box(Aabb a, double r) {
    return (Aabb){{a.min.x - r, a.min.y - r, a.min.z - r}, {a.max.x + r, a.max.y + r, a.max.z + r}};
}

static Aabb random_box(TestRng *r, double extent, double size_lo, double size_hi) {
    Vec3 c = {test_rng_range(r, 0, extent), test_rng_range(r, 0, extent),
              test_rng_range(r, 0, extent)};
    Vec3 h = {test_rng_range(r, size_lo, size_hi), test_rng_range(r, size_lo, size_hi),
              test_rng_range(r, size_lo, size_hi)};
    return (Aabb){vec3_sub(c, h), vec3_add(c, h)};
}

static int compare_pair(const void *pa, const void *pb) {
    const int *a = pa, *b = pb;
    if (a[0] != b[0])
        return (a[0] > b[0]) - (a[0] < b[0]);
    return (a[1] > b[1]) - (a[1] < b[1]);
}

static void test_basic(void **state) {
    IssimError err;
    assert_null(broadphase_create(-1.0, &err));
    assert_int_equal(err.status, ISSIM_ERR_RANGE);
    BroadPhase *bp = broadphase_create(0.1, &err);
    assert_non_null(bp);
    PairList l = {0};
    broadphase_pairs(bp, collect, &l);
    assert_int_equal(l.count, 0);
    assert_int_equal(broadphase_height(bp), 0);
    Aabb unit = {{0, 0, 0}, {1, 1, 1}};
    int p7 = broadphase_add(bp, unit, 7);
    Aabb shifted = {{1.15, 0, 0}, {2, 1, 1}}; /* 0.15 apart: the fat boxes (0.1 each) overlap */
    int p3 = broadphase_add(bp, shifted, 3);
    assert_true(p7 >= 0 && p3 >= 0 && p7 != p3);
    assert_int_equal(broadphase_proxy_count(bp), 2);
    assert_int_equal(broadphase_height(bp), 1);
    broadphase_pairs(bp, collect, &l);
    assert_int_equal(l.count, 1);
    assert_int_equal(l.v[0][0], 3); /* user_a < user_b whatever the insertion order */
    assert_int_equal(l.v[0][1], 7);
    /* Inside the fat box: the tree is left alone. Outside: reinserted. */
    assert_false(broadphase_move(bp, p3, (Aabb){{1.2, 0.05, 0}, {2.05, 1.05, 1}}));
    assert_true(broadphase_move(bp, p3, (Aabb){{5, 5, 5}, {6, 6, 6}}));
    l.count = 0;
    broadphase_pairs(bp, collect, &l);
    assert_int_equal(l.count, 0);
    /* An unbounded box (a half-space's) pairs with everything it overlaps. */
    int floor = broadphase_add(bp, (Aabb){{-1e30, -1e30, -1e30}, {1e30, 1e30, 0.5}}, 1);
    l.count = 0;
    broadphase_pairs(bp, collect, &l);
    assert_int_equal(l.count, 1);
    assert_int_equal(l.v[0][0], 1);
    assert_int_equal(l.v[0][1], 7);
    /* A removal alone (nothing moved) drops the removed proxy's pairs. */
    broadphase_remove(bp, floor);
    l.count = 0;
    broadphase_pairs(bp, collect, &l);
    assert_int_equal(l.count, 0);
    broadphase_remove(bp, p7);
    assert_int_equal(broadphase_proxy_count(bp), 1);
    assert_int_equal(broadphase_height(bp), 0);
    broadphase_remove(bp, p3);
    assert_int_equal(broadphase_proxy_count(bp), 0);
    free(l.v);
    broadphase_destroy(bp);
}

#define RB_SLOTS 3000
#define RB_ROUNDS 30
#define RB_EXTENT 8.0
#define RB_FAT 0.1

typedef struct Slot {
    bool alive;
    int proxy;
    Aabb box, fat;
} Slot;

static void slot_add(BroadPhase *bp, Slot *s, int user, Aabb box) {
    s->alive = true;
    s->box = box;
    s->fat = grow_box(box, RB_FAT);
    s->proxy = broadphase_add(bp, box, user);
    assert_true(s->proxy >= 0);
}

static void slot_move(BroadPhase *bp, Slot *s, Aabb box) {
    s->box = box;
    if (broadphase_move(bp, s->proxy, box))
        s->fat = grow_box(box, RB_FAT);
    else /* not reinserted: the box must still be inside its fat box */
        assert_true(s->fat.min.x <= box.min.x && s->fat.min.y <= box.min.y &&
                    s->fat.min.z <= box.min.z && box.max.x <= s->fat.max.x &&
                    box.max.y <= s->fat.max.y && box.max.z <= s->fat.max.z);
}

static void check_round(BroadPhase *bp, const Slot *slots, PairList *l, PairList *fat, int round) {
    l->count = 0;
    broadphase_pairs(bp, collect, l);
    int alive = 0;
    for (int i = 0; i < RB_SLOTS; i++)
        alive += slots[i].alive;
    assert_int_equal(broadphase_proxy_count(bp), alive);
    /* No false or repeated report. */
    for (int k = 0; k < l->count; k++) {
        int a = l->v[k][0], b = l->v[k][1];
        assert_true(a >= 0 && a < b && b < RB_SLOTS);
        assert_true(slots[a].alive && slots[b].alive);
        if (!overlap(slots[a].fat, slots[b].fat))
            fail_msg("round %d: pair (%d, %d) reported without overlapping fat boxes", round, a, b);
        if (k > 0)
            assert_true(compare_pair(l->v[k - 1], l->v[k]) < 0);
    }
    /* No miss; and exactly the fat-box overlaps. */
    int actual = 0;
    fat->count = 0;
    for (int a = 0; a < RB_SLOTS; a++) {
        if (!slots[a].alive)
            continue;
        for (int b = a + 1; b < RB_SLOTS; b++) {
            if (!slots[b].alive)
                continue;
            if (overlap(slots[a].fat, slots[b].fat))
                collect(a, b, fat);
            if (!overlap(slots[a].box, slots[b].box))
                continue;
            actual++;
            int key[2] = {a, b};
            if (!bsearch(key, l->v, (size_t)l->count, sizeof *l->v, compare_pair))
                fail_msg("round %d: overlapping pair (%d, %d) missed", round, a, b);
        }
    }
    assert_true(actual > 0 && l->count >= actual);
    for (int k = 0; k < fat->count && k < l->count; k++) {
        if (compare_pair(fat->v[k], l->v[k]) != 0)
            fail_msg("round %d: reported (%d, %d) where the fat boxes give (%d, %d)", round,
                     l->v[k][0], l->v[k][1], fat->v[k][0], fat->v[k][1]);
    }
    assert_int_equal(l->count, fat->count);
    /* Balanced: an AVL tree of n leaves is at most 1.44 log2(n) high. */
    int height = broadphase_height(bp);
    int bound = (int)ceil(2.0 * log2((double)alive)) + 2;
    if (height > bound)
        fail_msg("round %d: height %d above %d for %d proxies", round, height, bound, alive);
}

static void test_random_against_brute_force(void **state) {
    TestRng rng = {0x9e3779b97f4a7c15ull};
    BroadPhase *bp = broadphase_create(RB_FAT, NULL);
    assert_non_null(bp);
    Slot *slots = calloc(RB_SLOTS, sizeof *slots);
    assert_non_null(slots);
    /* Users are slot indices, so proxy ids and users differ. Start with most slots filled, a few
     * unbounded (half-space-like) proxies among them. */
    for (int i = 0; i < RB_SLOTS; i++) {
        if (test_rng_uniform(&rng) < 0.85)
            slot_add(bp, &slots[i], i, random_box(&rng, RB_EXTENT, 0.02, 0.3));
    }
    for (int i = 17; i < RB_SLOTS; i += 997) {
        if (!slots[i].alive)
            slot_add(bp, &slots[i], i, random_box(&rng, RB_EXTENT, 0.02, 0.3));
    }
    slot_move(bp, &slots[17], (Aabb){{-1e30, -1e30, -1e30}, {1e30, 1e30, 1.0}});
    slot_move(bp, &slots[1014], (Aabb){{-1e30, 7.0, -1e30}, {1e30, 1e30, 1e30}});
    PairList l = {0}, fat = {0};
    check_round(bp, slots, &l, &fat, -1);
    int reinserted = 0, small_moves = 0;
    for (int round = 0; round < RB_ROUNDS; round++) {
        /* Busy, quiet and in-between rounds: many proxies, a few or a handful change. */
        double activity = round % 3 == 0 ? 1.0 : round % 3 == 1 ? 0.01 : 0.2;
        for (int i = 0; i < RB_SLOTS; i++) {
            Slot *s = &slots[i];
            double u = test_rng_uniform(&rng) / activity;
            if (!s->alive) {
                if (u < 0.1)
                    slot_add(bp, s, i, random_box(&rng, RB_EXTENT, 0.02, 0.3));
                continue;
            }
            if (u < 0.03) {
                broadphase_remove(bp, s->proxy);
                s->alive = false;
            } else if (u < 0.10) { /* large: anywhere, any size */
                slot_move(bp, s, random_box(&rng, RB_EXTENT, 0.02, 0.5));
                reinserted++;
            } else if (u < 0.70) { /* small: a jiggle, mostly inside the fat box */
                Vec3 d = {test_rng_range(&rng, -0.06, 0.06), test_rng_range(&rng, -0.06, 0.06),
                          test_rng_range(&rng, -0.06, 0.06)};
                if (s->box.max.x - s->box.min.x < 1e3) {
                    slot_move(bp, s, (Aabb){vec3_add(s->box.min, d), vec3_add(s->box.max, d)});
                    small_moves++;
                }
            }
        }
        /* Now and then a proxy becomes unbounded (leaves the tree for the side list); large
         * moves bring such proxies back. */
        if (round % 4 == 1) {
            int i = (int)(test_rng_uniform(&rng) * RB_SLOTS);
            if (slots[i].alive)
                slot_move(bp, &slots[i], (Aabb){{-1e30, -1e30, -1e30}, {1e30, 1e30, 2.0}});
        }
        /* A sweep along x: many proxies leave their fat boxes in the same direction. */
        if (round % 10 == 9) {
            for (int i = 0; i < RB_SLOTS; i += 3) {
                Slot *s = &slots[i];
                if (s->alive && s->box.max.x - s->box.min.x < 1e3) {
                    Vec3 d = {0.25, 0, 0};
                    slot_move(bp, s, (Aabb){vec3_add(s->box.min, d), vec3_add(s->box.max, d)});
                }
            }
        }
        check_round(bp, slots, &l, &fat, round);
    }
    assert_true(reinserted > 1000 && small_moves > 10000);
    free(fat.v);
    free(l.v);
    free(slots);
    broadphase_destroy(bp);
}

/* Sorted insertion (a worst case for a naive tree: it degenerates into a list) stays balanced,
 * and removing every other proxy keeps it so. */
static void test_balance_sorted_insertion(void **state) {
    BroadPhase *bp = broadphase_create(0.0, NULL);
    assert_non_null(bp);
    enum { N = 4096 };
    static int proxies[N];
    for (int i = 0; i < N; i++) {
        double x = (double)i;
        proxies[i] = broadphase_add(bp, (Aabb){{x, 0, 0}, {x + 0.5, 0.5, 0.5}}, i);
    }
    assert_true(broadphase_height(bp) <= (int)ceil(1.44 * log2((double)N)) + 1);
    for (int i = 0; i < N; i += 2)
        broadphase_remove(bp, proxies[i]);
    assert_true(broadphase_height(bp) <= (int)ceil(1.44 * log2((double)N / 2)) + 2);
    PairList l = {0};
    broadphase_pairs(bp, collect, &l);
    assert_int_equal(l.count, 0); /* 1.5 apart, no margin */
    free(l.v);
    broadphase_destroy(bp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_random_against_brute_force),
        cmocka_unit_test(test_balance_sorted_insertion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
