/* The contact-map cache a sweep turns on (contact_map_cache_enable, include/issim/contactmap.h):
 * one read per file while it is unchanged, a rewritten file read again, the body check kept, and
 * runs of the map bar drop (000 6.5) bit-identical with and without it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "issim/contactmap.h"
#include "issim/study.h"
#include "testutil.h"

static void write_flat_map(const char *path, double stiffness) {
    ContactMap *map = NULL;
    IssimError err = {0};
    assert_int_equal(contact_map_flat("bar", stiffness, 1e-4, &map, &err), ISSIM_OK);
    assert_int_equal(contact_map_write(map, path, &err), ISSIM_OK);
    contact_map_release(map);
}

static ContactMap *load(const char *path, const char *body, IssimStatus expected) {
    ContactMap *map = NULL;
    IssimError err = {0};
    assert_int_equal(contact_map_load(path, path, body, &map, &err), expected);
    if (expected != ISSIM_OK)
        printf("%s\n", err.message);
    return map;
}

static void test_one_read_per_unchanged_file(void **state) {
    (void)state;
    const char *path = test_temp_path(".map");
    write_flat_map(path, 1000.0);
    ContactMap *uncached = load(path, "bar", ISSIM_OK);
    ContactMap *again = load(path, "bar", ISSIM_OK);
    assert_ptr_not_equal(uncached, again); /* off by default: every load reads */
    contact_map_release(again);

    contact_map_cache_enable();
    ContactMap *first = load(path, "bar", ISSIM_OK);
    ContactMap *second = load(path, "bar", ISSIM_OK);
    assert_ptr_equal(first, second);
    assert_ptr_not_equal(first, uncached);
    assert_true(memcmp(contact_map_step(first, 0), contact_map_step(uncached, 0),
                       sizeof(double) * (size_t)contact_map_samples(first)) == 0);
    /* The body check still applies to a map from the cache. */
    assert_null(load(path, "ball", ISSIM_ERR_INVALID));

    /* The file rewritten (another size): read again, the new stiffness. */
    write_flat_map(path, 2000.5);
    ContactMap *rewritten = load(path, "bar", ISSIM_OK);
    assert_ptr_not_equal(rewritten, first);
    assert_true(contact_map_step(rewritten, 0)[0] == 2000.5);
    assert_true(contact_map_step(first, 0)[0] == 1000.0); /* still alive, unchanged */

    /* Cleared: the cache lets go, the maps in use stay valid, loads read again. */
    contact_map_cache_clear();
    ContactMap *after = load(path, "bar", ISSIM_OK);
    assert_ptr_not_equal(after, rewritten);
    assert_true(contact_map_step(rewritten, 0)[0] == 2000.5);
    contact_map_release(after);
    contact_map_release(rewritten);
    contact_map_release(second);
    contact_map_release(first);
    contact_map_release(uncached);
    unlink(path);
}

/* Every result column of a row, bit for bit (not the wall time). */
static void assert_same_row(const Study *s, const StudyRow *a, const StudyRow *b) {
    assert_true(a->ok && b->ok);
    assert_int_equal(a->impacts, b->impacts);
    const double x[] = {a->t_impact,    a->v_in,     a->v_out,
                        a->restitution, a->duration, a->kinetic_end};
    const double y[] = {b->t_impact,    b->v_in,     b->v_out,
                        b->restitution, b->duration, b->kinetic_end};
    assert_true(memcmp(x, y, sizeof x) == 0);
    assert_true(memcmp(a->probes, b->probes, sizeof(double) * (size_t)s->probe_count) == 0);
}

static void test_map_runs_identical_with_the_cache(void **state) {
    (void)state;
    Study s = {.until = 3e-4};
    issim_strlcpy(s.scene, test_source_path("scenes/bar_drop_map.lua"), sizeof s.scene);
    IssimError err = {0};
    assert_int_equal(study_add_axis(&s, "angle_deg=18,66", &err), ISSIM_OK);
    assert_int_equal(study_add_axis(&s, "speed=3", &err), ISSIM_OK);
    assert_int_equal(study_add_probe(&s, "bar.angvel.y@end", &err), ISSIM_OK);
    StudyRow *read = calloc(4, sizeof *read);
    assert_non_null(read);
    for (long i = 0; i < 2; i++)
        study_run(&s, i, &read[i]);
    contact_map_cache_enable();
    for (long i = 0; i < 2; i++) { /* the first run reads the map, the second reuses it */
        study_run(&s, i, &read[2 + i]);
        assert_same_row(&s, &read[i], &read[2 + i]);
        printf("angle %s: v_out %.6f m/s, angvel %.4f rad/s; %.1f ms read each run, %.1f ms "
               "cached\n",
               read[i].values[0], read[i].v_out, read[i].probes[0], 1e3 * read[i].wall_seconds,
               1e3 * read[2 + i].wall_seconds);
    }
    assert_true(read[1].v_out != read[0].v_out); /* the two angles are different impacts */
    contact_map_cache_clear();
    free(read);
    study_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_read_per_unchanged_file),
        cmocka_unit_test(test_map_runs_identical_with_the_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
