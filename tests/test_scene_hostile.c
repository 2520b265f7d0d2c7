/* Hostile scenes (issue 12): input built to exhaust the loader's stack, time or memory, or to
 * hang it, must end promptly with a message that names the limit. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "issim/engine.h"
#include "issim/io.h"
#include "issim/thing.h"

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (!strstr(h_, n_))                                                                       \
            fail_msg("\"%s\" does not contain \"%s\"", h_, n_);                                    \
    } while (0)

/* Loads text expecting failure; err holds the message. */
static void load_fail(const char *name, const char *text, IssimError *err) {
    ThingDb *db = NULL;
    if (scene_load_string(name, text, strlen(text), NULL, &db, err) == ISSIM_OK) {
        thingdb_destroy(db);
        fail_msg("%s loaded but should not have", name);
    }
    assert_null(db);
}

static ThingDb *load_ok(const char *name, const char *text) {
    ThingDb *db = NULL;
    IssimError err;
    if (scene_load_string(name, text, strlen(text), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s did not load: %s", name, err.message);
    return db;
}

/* A chain of groups `depth` levels deep (the top one included), built in a loop. */
static char *nested_groups_scene(int depth) {
    static const char format[] = "local root = {name = 'g1', kind = 'group'}\n"
                                 "local t = root\n"
                                 "for i = 2, %d do\n"
                                 "  local child = {name = 'g' .. i, kind = 'group'}\n"
                                 "  t.things = {child}\n"
                                 "  t = child\n"
                                 "end\n"
                                 "return {things = {root}}\n";
    char *text = malloc(sizeof format + 16);
    assert_non_null(text);
    snprintf(text, sizeof format + 16, format, depth);
    return text;
}

static void test_nesting_at_the_limit_loads(void **state) {
    (void)state;
    char *text = nested_groups_scene(64);
    ThingDb *db = load_ok("deep.lua", text);
    assert_int_equal(thingdb_count(db), 65); /* the universe and 64 groups */
    thingdb_destroy(db);
    free(text);
}

static void test_nesting_beyond_the_limit_is_refused(void **state) {
    (void)state;
    const int depths[] = {65, 300, 5000};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        char *text = nested_groups_scene(depths[i]);
        IssimError err;
        load_fail("deep.lua", text, &err);
        assert_contains(err.message, "deep.lua:");
        assert_contains(err.message, "more than 64 levels deep; the limit is fixed");
        assert_contains(err.message, "g1.g2.g3");
        free(text);
    }
}

/* An argument runs only the tests matching it (cmocka's filter): one hostile input at a time. */
int main(int argc, char **argv) {
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting_at_the_limit_loads),
        cmocka_unit_test(test_nesting_beyond_the_limit_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
