/* A map's sampling period is bounded where it is read (issue 34 item 3b): the engine takes one
 * fixed step per sample while a map contact lasts, so `period 1e-300` asked for 1e297 steps per
 * millisecond, t + T == t, and `issim run` (and every thread joining the engine) hung. Such a
 * period is refused by the file reader (file and line), by the body property's synthetic forms
 * (the property named), and by `issim validate` and `issim run` before anything runs. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "issim/contactmap.h"
#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "testutil.h"

static const char *write_text(const char *suffix, const char *text) {
    const char *path = test_temp_path(suffix);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static const char *map_text(const char *period) {
    static char text[512];
    snprintf(text, sizeof text,
             "issim-contact-map 1\nbody ball\ndimension 3\nperiod %s\nsamples 2\nnodes 1\n"
             "node 0 position 0 0 0 normal 0 0 1\n1 1\n",
             period);
    return text;
}

static void test_file_period_below_the_bound_names_file_and_line(void **state) {
    (void)state;
    const char *path = write_text(".map", map_text("1e-300"));
    ContactMap *map = NULL;
    IssimError err = {0};
    assert_int_equal(contact_map_read(path, &map, &err), ISSIM_ERR_RANGE);
    assert_null(map);
    print_message("%s\n", err.message);
    char where[600];
    snprintf(where, sizeof where, "%s:4: period 1e-300 s is below 1e-08 s", path);
    assert_non_null(strstr(err.message, where));
    unlink(path);

    /* the bound itself is a period a map may have */
    path = write_text(".map", map_text("1e-8"));
    assert_int_equal(contact_map_read(path, &map, &err), ISSIM_OK);
    assert_true(contact_map_period(map) == CONTACT_MAP_MIN_PERIOD);
    contact_map_release(map);
    unlink(path);
}

static void test_synthetic_period_below_the_bound(void **state) {
    (void)state;
    const char *specs[] = {"flat 4000 period 1e-300", "transient 1500 800 2e-3 period 1e-9"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        ContactMap *map = NULL;
        IssimError err = {0};
        assert_int_equal(contact_map_load(specs[i], NULL, "ball", &map, &err), ISSIM_ERR_RANGE);
        assert_null(map);
        print_message("%s\n", err.message);
        assert_non_null(strstr(err.message, "period"));
        assert_non_null(strstr(err.message, "is below 1e-08 s"));
    }
    ContactMap *map = NULL;
    IssimError err = {0};
    assert_int_equal(contact_map_load("flat 4000 period 1e-8", NULL, "ball", &map, &err), ISSIM_OK);
    contact_map_release(map);
}

/* scenes/spheres_flat_map.lua's two spheres with the left one's map at period 1e-300. */
static const char *scene_with_periods(const char *period, const char *right_period) {
    static char text[2048];
    snprintf(text, sizeof text,
             "return {\n"
             "  universe = { gravity = {0, 0, 0}, integrator = 'rk4', dt = 1e-3 },\n"
             "  things = {\n"
             "    { name = 'left', kind = 'body', shape = 'sphere', radius = 1, mass = 1,\n"
             "      inertia = {0.4, 0.4, 0.4}, pos = {-1.05, 0, 0}, vel = {1, 0, 0},\n"
             "      material = 'sphere', contact_map = 'flat 4000 period %s' },\n"
             "    { name = 'right', kind = 'body', shape = 'sphere', radius = 1, mass = 1,\n"
             "      inertia = {0.4, 0.4, 0.4}, pos = {1.05, 0, 0}, vel = {-1, 0, 0},\n"
             "      material = 'sphere', contact_map = 'flat 4000 period %s' },\n"
             "  },\n"
             "  contacts = {\n"
             "    { name = 'spheres', materials = {'sphere', 'sphere'}, model = 'contact_map',\n"
             "      stiffness = 2000, damping_from = 'value', damping = 0 },\n"
             "  },\n"
             "}\n",
             period, right_period);
    return text;
}

static const char *scene_with_period(const char *period) {
    return scene_with_periods(period, "1e-4");
}

static void test_validate_and_run_refuse_the_scene(void **state) {
    (void)state;
    const char *path = write_text(".lua", scene_with_period("1e-300"));
    const char *commands[] = {"validate", "run"};
    for (size_t i = 0; i < 2; i++) {
        char args[700], out[4096];
        /* `run` is headless and short: were the period accepted, the first contact would never
           end (the ctest timeout would report it) */
        snprintf(args, sizeof args, "%s %s%s", commands[i], path,
                 i == 1 ? " --headless --until 0.2" : "");
        int status = test_run_issim(args, out, sizeof out);
        print_message("issim %s: exit %d: %s", commands[i], status, out);
        assert_true(status > 0);
        assert_non_null(strstr(out, "left.contact_map"));
        assert_non_null(strstr(out, "period 1e-300 s is below 1e-08 s"));
    }
    unlink(path);

    /* the same scene at the seeds' period runs: the refusal is the period's */
    path = write_text(".lua", scene_with_period("1e-4"));
    char args[700], out[4096];
    snprintf(args, sizeof args, "run %s --headless --until 0.2", path);
    assert_int_equal(test_run_issim(args, out, sizeof out), 0);
    unlink(path);
}

/* A stop asked for while one output step takes many fixed steps (issue 34 item 3b): the map at
 * the bound, 1e-8 s, makes the first 1 ms output step after the spheres touch 1e5 steps. The
 * request is honoured at the next step: engine_advance returns ISSIM_ERR_CANCELLED with the
 * bodies where the advance began, after as many steps as were taken before the request. */
typedef struct StopAfter {
    long asked, limit;
} StopAfter;

static bool stop_after(void *user) {
    StopAfter *s = user;
    return ++s->asked > s->limit;
}

static void test_stop_request_within_an_output_step(void **state) {
    (void)state;
    StopAfter stop = {.limit = -1}; /* never, until armed below */
    EngineOptions o = engine_options_default();
    o.should_stop = stop_after;
    o.should_stop_user = &stop;
    stop.limit = 1L << 40;
    Engine *e = test_engine_from_source_with("stop.lua", scene_with_periods("1e-8", "1e-8"), &o);
    /* the spheres (gap 0.1 m, closing at 2 m/s) touch at 0.05 s */
    IssimError err = {0};
    while (engine_time(e) < 0.0495)
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
    uint64_t warnings = engine_stats(e).warnings;
    double t0 = engine_time(e);
    stop.asked = 0;
    stop.limit = 2000;
    uint64_t steps0 = engine_stats(e).steps;
    assert_int_equal(engine_advance(e, t0 + 0.002, &err), ISSIM_ERR_CANCELLED);
    uint64_t taken = engine_stats(e).steps - steps0;
    print_message("%s; %llu steps taken, %ld asks\n", err.message, (unsigned long long)taken,
                  stop.asked);
    assert_non_null(strstr(err.message, "on request"));
    assert_true(taken <= 2000);        /* not the 2e5 the advance needed */
    assert_true(engine_time(e) == t0); /* the advance's start, as after any failure */
    assert_true(engine_stats(e).warnings == warnings); /* asked for: no warning */
    /* and the engine carries on when nothing asks it to stop */
    stop.limit = 1L << 40;
    assert_int_equal(engine_advance(e, t0 + 1e-4, &err), ISSIM_OK);
    assert_true(engine_stats(e).steps - steps0 > 9000); /* 1e-4 s at 1e-8 s, in contact */
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_period_below_the_bound_names_file_and_line),
        cmocka_unit_test(test_synthetic_period_below_the_bound),
        cmocka_unit_test(test_validate_and_run_refuse_the_scene),
        cmocka_unit_test(test_stop_request_within_an_output_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
