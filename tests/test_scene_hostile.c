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

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static void test_backtracking_pattern_ends_promptly(void **state) {
    (void)state;
    static const char *const calls[] = {"string.find", "string.match", "string.gmatch",
                                        "string.gsub"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "local s = string.rep('a', 40) .. 'b'\n"
                 "local r = %s(s, ('a*'):rep(20) .. 'c', %s)\n"
                 "return {}\n",
                 calls[i], strcmp(calls[i], "string.gsub") == 0 ? "''" : "nil");
        double start = now_seconds();
        IssimError err;
        load_fail("regex.lua", text, &err);
        printf("%s: %.3f s: %s\n", calls[i], now_seconds() - start, err.message);
        assert_contains(err.message, "regex.lua:2:");
        assert_contains(err.message, "pattern");
    }
}

static void test_method_call_patterns_are_bounded_too(void **state) {
    (void)state;
    IssimError err;
    load_fail("regex.lua",
              "local s = ('a'):rep(40) .. 'b'\n"
              "return {name = tostring(s:find(('a-'):rep(20) .. 'c'))}\n",
              &err);
    assert_contains(err.message, "regex.lua:2:");
    assert_contains(err.message, "pattern");
}

static void test_ordinary_patterns_work(void **state) {
    (void)state;
    ThingDb *db = load_ok("patterns.lua",
                          "local words = {}\n"
                          "for w in ('bar floor wall'):gmatch('%a+') do words[#words + 1] = w end\n"
                          "local name = ('  ' .. words[2] .. '  '):match('^%s*(.-)%s*$')\n"
                          "name = name:gsub('o', 'O', 1) .. (('x=1'):find('=', 1, true))\n"
                          "return {name = name}\n");
    assert_string_equal(thing_string(db, thingdb_find(db, "universe"), "scene_name"), "flOor2");
    thingdb_destroy(db);
}

/* Builds an engine from a scene expecting failure; err holds the message. */
static void engine_fail(const char *source, IssimError *err) {
    ThingDb *db = load_ok("shape.lua", source);
    Engine *engine = engine_create(db, NULL, err);
    thingdb_destroy(db);
    if (engine) {
        engine_destroy(engine);
        fail_msg("the engine was built but should not have been");
    }
}

static char *hull_scene(const char *hull_file) {
    static const char format[] =
        "return {things = {{name = 'rock', kind = 'body', shape = 'hull'%s%s%s}}}\n";
    size_t size = sizeof format + (hull_file ? strlen(hull_file) : 0) + 32;
    char *text = malloc(size);
    assert_non_null(text);
    snprintf(text, size, format, hull_file ? ", hull_file = '" : "", hull_file ? hull_file : "",
             hull_file ? "'" : "");
    return text;
}

static char *mesh_scene(const char *mesh_file) {
    static const char format[] =
        "return {things = {{name = 'plate', kind = 'obstacle', shape = 'mesh'%s%s%s}}}\n";
    size_t size = sizeof format + (mesh_file ? strlen(mesh_file) : 0) + 32;
    char *text = malloc(size);
    assert_non_null(text);
    snprintf(text, size, format, mesh_file ? ", mesh_file = '" : "", mesh_file ? mesh_file : "",
             mesh_file ? "'" : "");
    return text;
}

/* Both the hull of a body and the mesh of an obstacle refuse `path` with a message containing
 * `needle`, promptly. */
static void assert_shape_files_refused(const char *path, const char *needle) {
    char *(*scenes[])(const char *) = {hull_scene, mesh_scene};
    for (size_t i = 0; i < 2; i++) {
        char *text = scenes[i](path);
        double start = now_seconds();
        IssimError err;
        engine_fail(text, &err);
        printf("%.3f s: %s\n", now_seconds() - start, err.message);
        assert_contains(err.message, needle);
        assert_contains(err.message, i == 0 ? "rock.hull_file" : "plate.mesh_file");
        if (path)
            assert_contains(err.message, path);
        free(text);
    }
}

static void test_shape_file_that_never_ends_is_refused(void **state) {
    (void)state;
    assert_shape_files_refused("/dev/zero", "not a regular file");
}

static void test_shape_file_that_blocks_is_refused(void **state) {
    (void)state;
    const char *dir = test_temp_path("-fifo");
    assert_int_equal(mkdir(dir, 0700), 0);
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/hull.obj", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_shape_files_refused(fifo, "not a regular file");
    unlink(fifo);
    rmdir(dir);
}

static void test_shape_file_too_large_is_refused(void **state) {
    (void)state;
    const char *path = test_temp_path(".obj");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* A sparse file: large without writing 64 MiB. */
    assert_int_equal(ftruncate(fileno(f), (64L << 20) + 1), 0);
    fclose(f);
    assert_shape_files_refused(path, "64 MiB");
    unlink(path);
}

static void test_shape_without_its_file_says_it_is_required(void **state) {
    (void)state;
    IssimError err;
    char *text = hull_scene(NULL);
    engine_fail(text, &err);
    assert_string_equal(err.message, "rock: hull_file is required for shape \"hull\"");
    free(text);
    text = mesh_scene(NULL);
    engine_fail(text, &err);
    assert_string_equal(err.message, "plate: mesh_file is required for shape \"mesh\"");
    free(text);
}

/* 16,000 bodies, one of them with a negative mass: the message names its line. */
static void test_error_line_in_a_large_scene(void **state) {
    (void)state;
    enum { THINGS = 16000, BAD = 12345 };
    size_t cap = (size_t)THINGS * 96 + 64, used = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    used += (size_t)snprintf(text + used, cap - used, "return {\n  things = {\n");
    for (int i = 0; i < THINGS; i++)
        used += (size_t)snprintf(text + used, cap - used,
                                 "    { name = \"b%d\", kind = \"body\", mass = %d },\n", i,
                                 i == BAD ? -1 : 1);
    snprintf(text + used, cap - used, "  },\n}\n");
    double start = now_seconds();
    IssimError err;
    load_fail("big.lua", text, &err);
    printf("error line in %d things: %.3f s\n", THINGS, now_seconds() - start);
    char expected[64];
    snprintf(expected, sizeof expected, "big.lua:%d: b%d.mass", BAD + 3, BAD);
    assert_contains(err.message, expected);
    free(text);
}

/* Errors raised inside metamethods, while the chunk runs (the loader itself reads the returned
 * table raw, so none of its metamethods run then), are reported with the file's name. */
static void test_metamethod_errors_name_the_file(void **state) {
    (void)state;
    static const char *const sources[] = {
        "local t = setmetatable({}, {__index = function() error('boom', 2) end,\n"
        "                            __len = function() return 1 end})\n"
        "return {name = table.concat(t)}\n",
        "local t = setmetatable({}, {__close = function() error('boom') end})\n"
        "do local x <close> = t end\n"
        "return {}\n",
        "local t = setmetatable({}, {__lt = function() error({}) end})\n"
        "table.sort({t, t, t})\n"
        "return {}\n",
    };
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        IssimError err;
        load_fail("meta.lua", sources[i], &err);
        assert_contains(err.message, "meta.lua:1: ");
    }
    /* Metamethods of the returned table never run: the scene loads as if they were absent. */
    ThingDb *db = load_ok("meta.lua", "return setmetatable({name = 'm'}, {__index = error,\n"
                                      "  __pairs = error, __len = error})\n");
    assert_string_equal(thing_string(db, thingdb_find(db, "universe"), "scene_name"), "m");
    thingdb_destroy(db);
}

static void test_every_repository_scene_loads(void **state) {
    (void)state;
    char pattern[1024];
    snprintf(pattern, sizeof pattern, "ls %s/*.lua", test_source_path("scenes"));
    FILE *list = popen(pattern, "r");
    assert_non_null(list);
    char path[1024];
    int loaded = 0;
    while (fgets(path, sizeof path, list)) {
        path[strcspn(path, "\n")] = '\0';
        ThingDb *db = NULL;
        IssimError err;
        if (scene_load_file(path, NULL, &db, &err) != ISSIM_OK)
            fail_msg("%s", err.message);
        thingdb_destroy(db);
        loaded++;
    }
    pclose(list);
    assert_true(loaded >= 10);
}

/* An argument runs only the tests matching it (cmocka's filter): one hostile input at a time. */
/* The scene file itself: a device or a FIFO given as the scene is refused at once (reading
 * /dev/zero grew memory without bound, a FIFO nobody writes hung `issim validate`). */
static void test_scene_file_must_be_regular(void **state) {
    (void)state;
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_not_equal(scene_load_file("/dev/zero", NULL, &db, &err), ISSIM_OK);
    assert_null(db);
    assert_non_null(strstr(err.message, "not a regular file"));
    char dir[256];
    snprintf(dir, sizeof dir, "%s.d", test_temp_path(""));
    assert_int_equal(mkdir(dir, 0700), 0);
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/scene.lua", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_not_equal(scene_load_file(fifo, NULL, &db, &err), ISSIM_OK);
    assert_non_null(strstr(err.message, "not a regular file"));
    unlink(fifo);
    rmdir(dir);
}

int main(int argc, char **argv) {
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scene_file_must_be_regular),
        cmocka_unit_test(test_nesting_at_the_limit_loads),
        cmocka_unit_test(test_nesting_beyond_the_limit_is_refused),
        cmocka_unit_test(test_backtracking_pattern_ends_promptly),
        cmocka_unit_test(test_method_call_patterns_are_bounded_too),
        cmocka_unit_test(test_ordinary_patterns_work),
        cmocka_unit_test(test_shape_file_that_never_ends_is_refused),
        cmocka_unit_test(test_shape_file_that_blocks_is_refused),
        cmocka_unit_test(test_shape_file_too_large_is_refused),
        cmocka_unit_test(test_shape_without_its_file_says_it_is_required),
        cmocka_unit_test(test_error_line_in_a_large_scene),
        cmocka_unit_test(test_metamethod_errors_name_the_file),
        cmocka_unit_test(test_every_repository_scene_loads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
