/* Bad input: a scene whose bodies start overlapping is loaded, with a warning that names the
 * deepest pair and its depth (engine_collide.c, warn_initial_overlap), never a silent
 * explosion; a scene that starts apart, or resting on its springs, is not warned about. The
 * old scenes/pile.lua layout started 16.9 mm deep with 39 J of elastic energy. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/io.h"
#include "testutil.h"

static const char *scene(double gap) {
    static char src[2048];
    snprintf(src, sizeof src,
             "return { name = \"overlap\", universe = { gravity = {0, 0, -9.81},"
             " integrator = \"rk4\", dt = 1e-4 },\n"
             "things = {\n"
             "{ name = \"floor\", kind = \"obstacle\", shape = \"plane\", normal = {0, 0, 1},"
             " offset = 0, material = \"m\" },\n"
             "{ name = \"low\", kind = \"body\", shape = \"box\", half_extents = {0.05, 0.05, "
             "0.05}, mass = 1, inertia = {0.002, 0.002, 0.002}, pos = {0, 0, 0.05},"
             " material = \"m\" },\n"
             "{ name = \"high\", kind = \"body\", shape = \"sphere\", radius = 0.05, mass = 1,"
             " inertia = {0.001, 0.001, 0.001}, pos = {0.01, 0, %.17g}, material = \"m\" } },\n"
             "contacts = { { name = \"mm\", materials = {\"m\", \"m\"}, model = \"spring_damper\","
             " stiffness = 1e5, restitution = 0.5 } } }\n",
             0.15 + gap);
    return src;
}

static int warnings_for(double gap) {
    const char *src = scene(gap);
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_equal(scene_load_string("overlap", src, strlen(src), NULL, &db, &err), ISSIM_OK);
    testlog_clear();
    Engine *e = engine_create(db, NULL, &err);
    if (!e)
        fail_msg("%s", err.message);
    int n = testlog_count(ISSIM_LOG_WARN, "the scene starts overlapping");
    engine_destroy(e);
    thingdb_destroy(db);
    return n;
}

static void test_overlapping_start_is_warned_about(void **state) {
    (void)state;
    testlog_capture();
    assert_int_equal(warnings_for(-0.02), 1); /* the sphere 20 mm into the box: 20 J */
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "low on high, 20 mm"), 1);
    assert_int_equal(warnings_for(0.001), 0); /* 1 mm apart; the box rests on the floor */
    testlog_release();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlapping_start_is_warned_about),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
