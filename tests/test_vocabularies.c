/* The vocabularies (thing.h, "Vocabularies"): every name round-trips through its name function
 * and the one generic lookup (vocabulary_parse), every enum-valued property of the schema
 * accepts exactly its vocabulary's table in the enum's order, and an unknown name is refused
 * with a message that lists the accepted ones (the property editor's --set path and
 * `issim run --integrator`). */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/contactmap.h"
#include "issim/surface.h"
#include "issim/thing.h"

/* Every value has a distinct non-empty name that parses back to it; the table is the one the
 * name function reads; out of range and unknown or NULL text are refused. */
#define ASSERT_ROUND_TRIP(Type, prefix, count)                                                     \
    do {                                                                                           \
        for (int k_ = 0; k_ < (count); k_++) {                                                     \
            const char *name_ = prefix##_name((Type)k_);                                           \
            assert_non_null(name_);                                                                \
            assert_true(name_[0] != '\0' && strcmp(name_, "?") != 0);                              \
            assert_ptr_equal(name_, prefix##_names[k_]);                                           \
            assert_int_equal(vocabulary_parse(prefix##_names, (count), name_), k_);                \
        }                                                                                          \
        assert_int_equal(vocabulary_parse(prefix##_names, (count), "no_such_name"), -1);           \
        assert_int_equal(vocabulary_parse(prefix##_names, (count), NULL), -1);                     \
        assert_string_equal(prefix##_name((Type)(count)), "?");                                    \
        assert_string_equal(prefix##_name((Type)-1), "?");                                         \
    } while (0)

static void test_round_trips(void **state) {
    (void)state;
    ASSERT_ROUND_TRIP(BodyShape, body_shape, BODY_SHAPE_COUNT);
    ASSERT_ROUND_TRIP(ObstacleShape, obstacle_shape, OBSTACLE_SHAPE_COUNT);
    ASSERT_ROUND_TRIP(IntegratorKind, integrator, INTEGRATOR_COUNT);
    ASSERT_ROUND_TRIP(SleepPolicy, sleep_policy, SLEEP_POLICY_COUNT);
    ASSERT_ROUND_TRIP(CollisionThreadPolicy, collision_thread, COLLISION_THREAD_COUNT);
    ASSERT_ROUND_TRIP(SurfaceExtraordinary, surface_extraordinary, SURFACE_EXTRAORDINARY_COUNT);
    ASSERT_ROUND_TRIP(ContactResolverKind, contact_resolver, CONTACT_RESOLVER_COUNT);
    ASSERT_ROUND_TRIP(ContactSolverKind, contact_solver, CONTACT_SOLVER_COUNT);
    ASSERT_ROUND_TRIP(ContactDampingFrom, contact_damping_from, CONTACT_DAMPING_FROM_COUNT);
    ASSERT_ROUND_TRIP(ContactSmoothFriction, contact_smooth_friction,
                      CONTACT_SMOOTH_FRICTION_COUNT);
    ASSERT_ROUND_TRIP(ContactMapNodeChoice, contact_map_node_choice, CONTACT_MAP_NODE_COUNT);
    ASSERT_ROUND_TRIP(ContactMapRule, contact_map_rule, CONTACT_MAP_RULE_COUNT);
    ASSERT_ROUND_TRIP(ContactMapConvolution, contact_map_convolution, CONTACT_MAP_CONV_COUNT);
    /* Spot checks against what scenes spell, so a renamed value is noticed. */
    assert_string_equal(body_shape_name(BODY_SHAPE_CAPSULE), "capsule");
    assert_string_equal(obstacle_shape_name(OBSTACLE_SHAPE_PLANE), "plane");
    assert_string_equal(integrator_name(INTEGRATOR_RK4), "rk4");
    assert_string_equal(sleep_policy_name(SLEEP_POLICY_NEVER), "never");
    assert_string_equal(contact_solver_name(CONTACT_SOLVER_LEMKE), "lemke");
    assert_string_equal(contact_resolver_name(CONTACT_RESOLVER_REDUCED), "reduced");
}

/* Which vocabulary each enum-valued property of the schema takes. */
typedef struct Row {
    ThingKind kind;
    const char *prop;
    const char *const *names;
    int count;
} Row;

static const Row rows[] = {
    {THING_UNIVERSE, "integrator", integrator_names, INTEGRATOR_COUNT},
    {THING_UNIVERSE, "sleep", sleep_policy_names, SLEEP_POLICY_COUNT},
    {THING_UNIVERSE, "collision_thread", collision_thread_names, COLLISION_THREAD_COUNT},
    {THING_RIGID_BODY, "shape", body_shape_names, BODY_SHAPE_COUNT},
    {THING_RIGID_BODY, "surface_extraordinary", surface_extraordinary_names,
     SURFACE_EXTRAORDINARY_COUNT},
    {THING_FIXED_OBSTACLE, "shape", obstacle_shape_names, OBSTACLE_SHAPE_COUNT},
    {THING_FIXED_OBSTACLE, "surface_extraordinary", surface_extraordinary_names,
     SURFACE_EXTRAORDINARY_COUNT},
    {THING_CONTACT_PAIR, "resolver", contact_resolver_names, CONTACT_RESOLVER_COUNT},
    {THING_CONTACT_PAIR, "solver", contact_solver_names, CONTACT_SOLVER_COUNT},
    {THING_CONTACT_PAIR, "damping_from", contact_damping_from_names, CONTACT_DAMPING_FROM_COUNT},
    {THING_CONTACT_PAIR, "smooth_friction", contact_smooth_friction_names,
     CONTACT_SMOOTH_FRICTION_COUNT},
    {THING_CONTACT_PAIR, "map_quadrature", contact_map_rule_names, CONTACT_MAP_RULE_COUNT},
    {THING_CONTACT_PAIR, "map_node", contact_map_node_choice_names, CONTACT_MAP_NODE_COUNT},
    {THING_CONTACT_PAIR, "map_convolution", contact_map_convolution_names, CONTACT_MAP_CONV_COUNT},
    {THING_CONTACT_PAIR, "model", NULL, 0}, /* the registered models: contact_model_names */
};
enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

static const char *const thing_of_kind[THING_KIND_COUNT] = {
    [THING_UNIVERSE] = "universe",
    [THING_RIGID_BODY] = "b",
    [THING_FIXED_OBSTACLE] = "o",
    [THING_CONTACT_PAIR] = "p",
};

static ThingDb *schema_db(void) {
    ThingDb *db = thingdb_create();
    IssimError err = {0};
    for (int k = 0; k < THING_KIND_COUNT; k++)
        if (thing_of_kind[k])
            assert_false(thing_id_is_null(
                thingdb_add(db, thing_of_kind[k], (ThingKind)k, thing_id_null(), &err)));
    assert_int_equal(contact_pair_add_props(db, thingdb_find(db, "p"), &err), ISSIM_OK);
    return db;
}

static const Row *row_of(ThingKind kind, const char *prop) {
    for (int i = 0; i < ROW_COUNT; i++)
        if (rows[i].kind == kind && strcmp(rows[i].prop, prop) == 0)
            return &rows[i];
    return NULL;
}

static void row_names(const Row *row, const char *const **names, int *count) {
    *names = row->names;
    *count = row->count;
    if (!row->names)
        *names = contact_model_names(count);
}

static void test_schema_takes_the_tables(void **state) {
    (void)state;
    ThingDb *db = schema_db();
    int checked = 0;
    for (int k = 0; k < THING_KIND_COUNT; k++) {
        if (!thing_of_kind[k])
            continue;
        ThingId id = thingdb_find(db, thing_of_kind[k]);
        for (int p = 0; p < thing_prop_count(db, id); p++) {
            const PropDef *def = thing_prop_def(db, id, p);
            if (def->type != PROP_ENUM)
                continue;
            const Row *row = row_of((ThingKind)k, def->name);
            if (!row)
                fail_msg("%s.%s is an enum with no vocabulary in this test", thing_of_kind[k],
                         def->name);
            const char *const *names;
            int count;
            row_names(row, &names, &count);
            assert_int_equal(def->enum_count, count);
            for (int i = 0; i < count; i++)
                assert_string_equal(def->enum_names[i], names[i]);
            checked++;
        }
    }
    assert_int_equal(checked, ROW_COUNT);
    thingdb_destroy(db);
}

static void test_unknown_names_list_the_accepted(void **state) {
    (void)state;
    ThingDb *db = schema_db();
    for (int i = 0; i < ROW_COUNT; i++) {
        const char *const *names;
        int count;
        row_names(&rows[i], &names, &count);
        char path[128], accepted[512];
        snprintf(path, sizeof path, "%s.%s", thing_of_kind[rows[i].kind], rows[i].prop);
        vocabulary_list(names, count, accepted, sizeof accepted);
        IssimError err = {0};
        assert_int_not_equal(thingdb_set_text(db, path, "no_such_name", false, &err), ISSIM_OK);
        if (!strstr(err.message, accepted) || !strstr(err.message, "no_such_name"))
            fail_msg("%s: '%s' does not list '%s'", path, err.message, accepted);
        assert_int_equal(thingdb_set_text(db, path, names[count - 1], false, &err), ISSIM_OK);
        assert_int_equal(
            thing_enum(db, thingdb_find(db, thing_of_kind[rows[i].kind]), rows[i].prop), count - 1);
    }
    thingdb_destroy(db);
}

static void test_list_format(void **state) {
    (void)state;
    char buf[64];
    vocabulary_list(integrator_names, INTEGRATOR_COUNT, buf, sizeof buf);
    assert_string_equal(buf, "bdf, adams, rk4");
    vocabulary_list(integrator_names, INTEGRATOR_COUNT, buf, 6);
    assert_string_equal(buf, "bdf, ");
    assert_int_equal(vocabulary_parse(integrator_names, INTEGRATOR_COUNT, "adams"), 1);
    assert_int_equal(vocabulary_parse(integrator_names, INTEGRATOR_COUNT, "Adams"), -1);
}

static void test_cli_integrator(void **state) {
    (void)state;
    static char out[16384];
    assert_int_equal(
        test_run_issim("run scenes/point_drop.lua --headless --integrator euler", out, sizeof out),
        2);
    if (!strstr(out, "--integrator must be one of bdf, adams, rk4, not 'euler'"))
        fail_msg("unexpected message: %s", out);
    assert_int_equal(test_run_issim("run scenes/point_drop.lua --headless --quiet --until 0.01 "
                                    "--integrator rk4",
                                    out, sizeof out),
                     0);
    assert_non_null(strstr(out, "with rk4"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_schema_takes_the_tables),
        cmocka_unit_test(test_unknown_names_list_the_accepted),
        cmocka_unit_test(test_list_format),
        cmocka_unit_test(test_cli_integrator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
