/* Large scenes (issue 34 item 3b): 1e5 spheres from a 544-byte scene took minutes (each new
 * registry variable checked against all before it) and ended in "out of memory" with no file
 * named. Variables are now indexed by name, a property definition is shared rather than copied
 * into every thing, and a scene whose estimate exceeds what is left is refused before the
 * engine is built, naming the scene and the figures. */
#include <stdio.h>
#include <string.h>

#include "issim/io.h"
#include "issim/registry.h"
#include "issim/sim.h"
#include "testutil.h"

static const char *spheres(int count) {
    static char text[1024];
    snprintf(text, sizeof text,
             "local things = { { name = 'floor', kind = 'obstacle', shape = 'plane',\n"
             "  normal = {0, 0, 1}, offset = 0, material = 'm' } }\n"
             "for i = 1, %d do\n"
             "  things[#things + 1] = { name = 'b' .. i, kind = 'body', shape = 'sphere',\n"
             "    radius = 0.01, mass = 0.01, inertia = {1e-6, 1e-6, 1e-6},\n"
             "    pos = {(i %% 100) * 0.03, math.floor(i / 100) * 0.03, 0.5}, material = 'm' }\n"
             "end\n"
             "return { universe = { dt = 1e-3, integrator = 'rk4' }, things = things,\n"
             "  contacts = { { name = 'c', materials = {'m', 'm'}, model = 'spring_damper',\n"
             "    stiffness = 1e4, damping = 1 } } }\n",
             count);
    return text;
}

static ThingDb *load(int count) {
    ThingDb *db = NULL;
    IssimError err = {0};
    const char *text = spheres(count);
    if (scene_load_string("spheres.lua", text, strlen(text), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    return db;
}

/* 2,000 spheres: about 60 MB of things, and the run's budgets (history, checkpoints) of 256 MiB:
 * refused under a 300 MB limit with the scene's name and its figures, built without one. */
static void test_scene_over_the_memory_left_is_refused(void **state) {
    (void)state;
    ThingDb *db = load(2000);
    SimOptions o = sim_options_default();
    o.quiet = true;
    o.memory_limit = 300e6;
    IssimError err = {0};
    Sim *sim = sim_create_from_db(db, "spheres.lua", &o, &err);
    print_message("%s\n", err.message);
    assert_null(sim);
    assert_int_equal(err.status, ISSIM_ERR_NOMEM);
    assert_non_null(strstr(err.message, "spheres.lua: 2003 things (2000 bodies) need about"));
    assert_non_null(strstr(err.message, "0.30 GB is left (the limit given)"));
    o.memory_limit = 0.0; /* what this machine has */
    sim = sim_create_from_db(db, "spheres.lua", &o, &err);
    if (!sim)
        fail_msg("%s", err.message);
    assert_int_equal(engine_body_count(sim_engine(sim)), 2000);
    sim_destroy(sim);
    thingdb_destroy(db);
}

/* A million variables registered one by one: with each new name checked against all the ones
 * before it this took hours (the ctest timeout fails it); indexed, a second. Every name is found
 * again at its index, and a duplicate is still refused. */
static void test_a_million_variables(void **state) {
    (void)state;
    RegistryDesc d = registry_desc_default();
    d.history_frames = 2;
    d.max_vars = 1000000;
    IssimError err = {0};
    Registry *reg = registry_create(&d, &err);
    assert_non_null(reg);
    char name[32];
    for (int i = 0; i < d.max_vars; i++) {
        snprintf(name, sizeof name, "b%d.pos.x", i);
        assert_int_equal(registry_add_var(reg, name, "m", &err), i);
    }
    for (int i = 0; i < d.max_vars; i += 997) {
        snprintf(name, sizeof name, "b%d.pos.x", i);
        assert_int_equal(registry_var_find(reg, name), i);
    }
    assert_int_equal(registry_var_find(reg, "b1000000.pos.x"), -1);
    assert_int_equal(registry_add_var(reg, "b17.pos.x", "m", &err), -1);
    assert_non_null(strstr(err.message, "duplicate variable name 'b17.pos.x'"));
    registry_destroy(reg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scene_over_the_memory_left_is_refused),
        cmocka_unit_test(test_a_million_variables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
