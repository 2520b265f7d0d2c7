/* Lock-step determinism: the same scene and options give bit-identical runs (hash of every
 * published frame, and byte-identical recordings). A different option gives a different hash,
 * so the hash is not vacuous. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/sim.h"
#include "testutil.h"

static uint64_t hash_of_run(const char *scene, double until, const char *record, const char *set) {
    const char *sets[] = {set};
    TestRunOptions o = {.until = until, .lockstep = true, .record_path = record};
    o.sets = sets;
    o.set_count = set ? 1 : 0;
    TestRun *run = test_run_scene(scene, &o);
    uint64_t h = run->summary.state_hash;
    test_run_free(run);
    return h;
}

static char *slurp(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)*size + 1);
    assert_int_equal(fread(buf, 1, (size_t)*size, f), (size_t)*size);
    fclose(f);
    return buf;
}

static void test_lockstep_bit_identical(void **state) {
    /* Vertex-plane contacts, and the collision manager's contacts (box faces, a mesh). */
    const char *scenes[] = {"scenes/point_drop.lua", "scenes/bar_drop_horizontal.lua",
                            "scenes/box_on_plane.lua", "scenes/bolt_and_hole.lua"};
    const double until[] = {1.5, 1.5, 0.6, 0.15};
    const char *perturb[] = {"bar_floor.stiffness=100000000.1", "bar_floor.stiffness=100000000.1",
                             "box_floor.stiffness=100000.0001", "bolt_plate.stiffness=100000.0001"};
    for (int i = 0; i < 4; i++) {
        char a[256], b[256];
        snprintf(a, sizeof a, "%s", test_temp_path("-a.csv"));
        snprintf(b, sizeof b, "%s", test_temp_path("-b.csv"));
        uint64_t h1 = hash_of_run(scenes[i], until[i], a, NULL);
        uint64_t h2 = hash_of_run(scenes[i], until[i], b, NULL);
        assert_true(h1 == h2);
        long na, nb;
        char *ca = slurp(a, &na), *cb = slurp(b, &nb);
        assert_int_equal(na, nb);
        assert_true(na > 500);
        assert_int_equal(memcmp(ca, cb, (size_t)na), 0);
        free(ca);
        free(cb);
        remove(a);
        remove(b);
        /* A one-part-in-1e9 change of stiffness changes the hash. */
        uint64_t h3 = hash_of_run(scenes[i], until[i], NULL, perturb[i]);
        assert_true(h3 != h1);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lockstep_bit_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
