/* Adding a contact model touches its own file and one table row (issue 29, item 2): this file is
 * the model's file (a linear spring f = k g with one declared parameter, spring_rate), and its
 * contact_model_register call is the row. Nothing else names the model or its parameter, yet
 * - a scene selects it (model = "linear_spring") and sets spring_rate like any pair property;
 * - the value reaches the model: a bar dropped from h onto the spring reaches the depth energy
 *   conservation gives, 1/2 k d^2 = m g (h + d), for two spring rates;
 * - validation comes from the declaration: an out-of-range value is refused with the
 *   parameter's name, unit and bound; the pair property carries the declared unit, range,
 *   default and description (what the property editor shows as its tooltip); the scene writer
 *   saves it and it loads back;
 * - declarations a table could not hold are refused at registration. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/io.h"
#include "testutil.h"

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (!strstr(h_, n_))                                                                       \
            fail_msg("\"%s\" does not contain \"%s\"", h_, n_);                                    \
    } while (0)

/* ===== The model's file ===== */

enum { SPRING_RATE_SLOT = 0 };

static const ContactParamDecl spring_rate_param = {
    .prop = {.name = "spring_rate",
             .type = PROP_REAL,
             .unit = "N/m",
             .description = "linear_spring: the spring's rate k of f = k g",
             .min = 0.0,
             .max = 1e9,
             .min_exclusive = true,
             .mutability = PROP_LIVE,
             .default_value = {.type = PROP_REAL, .real = 1e4}},
    .store = CONTACT_PARAM_MODEL_VALUE,
    .index = SPRING_RATE_SLOT,
};
static const ContactParamDecl *const linear_spring_params[] = {&spring_rate_param};

static double spring_normal(const ContactParams *p, const ContactKinematics *k) {
    return k->depth > 0.0 ? p->model_values[SPRING_RATE_SLOT] * k->depth : 0.0;
}

static ContactForce spring_force(const ContactParams *p, const ContactHistory *h,
                                 const ContactKinematics *k) {
    (void)h;
    return (ContactForce){.normal = spring_normal(p, k), .tangent = {0, 0, 0}};
}

static void spring_begin(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    (void)p;
    h->t_begin = k->t;
    h->depth_max = fmax(k->depth, 0.0);
    contact_friction_begin(h, k);
}

static int spring_commit(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    (void)p;
    h->depth_max = fmax(h->depth_max, k->depth);
    return CONTACT_EVENT_NONE;
}

static double spring_fixed_step(const ContactParams *p) {
    (void)p;
    return 0.0;
}

static double spring_time_scale(const ContactParams *p, double m) {
    return 2.0 * M_PI * sqrt(m / p->model_values[SPRING_RATE_SLOT]);
}

static double spring_potential(const ContactParams *p, const ContactHistory *h,
                               const ContactKinematics *k) {
    (void)h;
    double g = fmax(k->depth, 0.0);
    return 0.5 * p->model_values[SPRING_RATE_SLOT] * g * g;
}

static const ContactModelClass linear_spring_class = {
    .name = "linear_spring",
    .description = "f = k g, k the declared spring_rate (a test's model)",
    .source = "tests/test_contact_declared_model.c",
    .params = linear_spring_params,
    .param_count = 1,
    .force = spring_force,
    .begin = spring_begin,
    .commit = spring_commit,
    .fixed_step = spring_fixed_step,
    .time_scale = spring_time_scale,
    .potential = spring_potential,
};

/* ===== The table row ===== */

static ContactModelKind linear_spring;

static int register_model(void **state) {
    (void)state;
    IssimError err = {0};
    if (contact_model_register(&linear_spring_class, &linear_spring, &err) != ISSIM_OK) {
        fprintf(stderr, "contact_model_register: %s\n", err.message);
        return -1;
    }
    return 0;
}

/* ===== Through a scene ===== */

#define MASS 1.0
#define GRAVITY 9.81
#define DROP_HEIGHT 1e-3 /* m: the bar's lower tip above the floor */

/* A vertical bar (lower tip DROP_HEIGHT above the floor) on a linear_spring pair; spring_rate
 * as given (text, so that a bad value reaches the loader). */
static IssimStatus load_drop(const char *spring_rate, ThingDb **db, IssimError *err) {
    char scene[2048];
    snprintf(scene, sizeof scene,
             "return {\n"
             "  universe = { gravity = {0, 0, -%g}, planar = true, integrator = \"bdf\",\n"
             "               dt = 1e-4, rtol = 1e-10, atol = 1e-12 },\n"
             "  things = {\n"
             "    { name = \"bar\", kind = \"body\", mass = %g, inertia = {1/300, 1/300, 1e-5},\n"
             "      pos = {0, 0, %.17g}, vertices = {{0, 0, -0.1}, {0, 0, 0.1}},\n"
             "      material = \"bar\" },\n"
             "    { name = \"floor\", kind = \"obstacle\", shape = \"plane\",\n"
             "      normal = {0, 0, 1}, offset = 0, material = \"floor\" },\n"
             "  },\n"
             "  contacts = {\n"
             "    { name = \"bar_floor\", materials = {\"bar\", \"floor\"},\n"
             "      model = \"linear_spring\", spring_rate = %s },\n"
             "  },\n"
             "}\n",
             GRAVITY, MASS, DROP_HEIGHT + 0.1, spring_rate);
    return scene_load_string("drop.lua", scene, strlen(scene), NULL, db, err);
}

/* The deepest the lower tip goes in the first 0.4 s (several periods). */
static double deepest(ThingDb *db) {
    IssimError err = {0};
    Engine *e = engine_create(db, NULL, &err);
    if (!e)
        fail_msg("engine_create: %s", err.message);
    double depth = 0.0;
    for (int i = 1; i <= 4000; i++) {
        assert_int_equal(engine_advance(e, i * 1e-4, &err), ISSIM_OK);
        double tip = engine_body_state(e, engine_body_id(e, 0)).pos.z - 0.1;
        depth = fmax(depth, -tip);
    }
    engine_destroy(e);
    return depth;
}

/* 1/2 k d^2 = m g (h + d). */
static double energy_depth(double k) {
    double w = MASS * GRAVITY;
    return (w + sqrt(w * w + 2.0 * k * w * DROP_HEIGHT)) / k;
}

static void test_scene_runs_the_declared_parameter(void **state) {
    (void)state;
    const double rates[] = {2000.0, 8000.0};
    for (int i = 0; i < 2; i++) {
        char text[32];
        snprintf(text, sizeof text, "%g", rates[i]);
        ThingDb *db = NULL;
        IssimError err = {0};
        if (load_drop(text, &db, &err) != ISSIM_OK)
            fail_msg("load: %s", err.message);
        assert_int_equal(thing_enum(db, thingdb_find(db, "bar_floor"), "model"), linear_spring);
        double expected = energy_depth(rates[i]);
        double got = deepest(db);
        printf("spring_rate %g N/m: deepest %.6g m, energy gives %.6g m\n", rates[i], got,
               expected);
        assert_near(got, expected, 1e-4 * expected);
        thingdb_destroy(db);
    }
}

static void test_out_of_range_names_parameter_unit_range(void **state) {
    (void)state;
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_equal(load_drop("-5", &db, &err), ISSIM_ERR_RANGE);
    assert_null(db);
    assert_contains(err.message, "bar_floor.spring_rate");
    assert_contains(err.message, "-5 N/m is out of range: must be > 0 (range (0, 1e+09] N/m)");
    assert_int_equal(load_drop("2e9", &db, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message,
                    "2e+09 N/m is out of range: must be <= 1e+09 (range (0, 1e+09] N/m)");
}

/* What the property editor and the scene docs read: the pair property is the declaration. */
static void test_pair_property_is_the_declaration(void **state) {
    (void)state;
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_equal(load_drop("3000", &db, &err), ISSIM_OK);
    ThingId pair = thingdb_find(db, "bar_floor");
    int i = thing_prop_find(db, pair, "spring_rate");
    assert_true(i >= 0);
    const PropDef *d = thing_prop_def(db, pair, i);
    assert_string_equal(d->unit, "N/m");
    assert_string_equal(d->description, spring_rate_param.prop.description);
    assert_true(d->min == 0.0 && d->max == 1e9 && d->min_exclusive);
    assert_int_equal(d->mutability, PROP_LIVE);
    assert_ptr_equal(contact_param_decl("spring_rate"), &spring_rate_param);
    /* read into the model's slot for its own pairs, not for another model's */
    ContactParams p;
    assert_int_equal(contact_params_from_thing(db, pair, MASS, &p, &err), ISSIM_OK);
    assert_true(p.model_values[SPRING_RATE_SLOT] == 3000.0);
    assert_int_equal(thingdb_set_text(db, "bar_floor.model", "spring_damper", false, &err),
                     ISSIM_OK);
    assert_int_equal(contact_params_from_thing(db, pair, MASS, &p, &err), ISSIM_OK);
    assert_true(p.model_values[SPRING_RATE_SLOT] == 0.0);
    thingdb_destroy(db);
}

/* The scene writer saves the declared parameter like any pair property, and it loads back. */
static void test_saved_scene_keeps_the_parameter(void **state) {
    (void)state;
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_equal(load_drop("4321.5", &db, &err), ISSIM_OK);
    char *text = scene_save_string(db);
    assert_non_null(text);
    assert_non_null(strstr(text, "spring_rate"));
    ThingDb *back = NULL;
    if (scene_load_string("saved.lua", text, strlen(text), NULL, &back, &err) != ISSIM_OK)
        fail_msg("saved scene: %s", err.message);
    ThingId pair = thingdb_find(back, "bar_floor");
    assert_true(thing_real(back, pair, "spring_rate") == 4321.5);
    assert_int_equal(thing_enum(back, pair, "model"), linear_spring);
    free(text);
    thingdb_destroy(back);
    thingdb_destroy(db);
}

static ContactModelClass variant(const char *name, const ContactParamDecl *const *params) {
    ContactModelClass c = linear_spring_class;
    c.name = name;
    c.params = params;
    return c;
}

static void test_unusable_declarations_refused(void **state) {
    (void)state;
    ContactModelKind kind;
    IssimError err = {0};
    /* a default outside its range */
    ContactParamDecl bad_default = spring_rate_param;
    bad_default.prop.name = "bad_rate";
    bad_default.prop.default_value.real = -1.0;
    const ContactParamDecl *const list1[] = {&bad_default};
    ContactModelClass c1 = variant("bad_default", list1);
    assert_int_equal(contact_model_register(&c1, &kind, &err), ISSIM_ERR_INVALID);
    assert_contains(err.message, "bad_rate");
    /* a name a built-in already declares, in a new declaration */
    ContactParamDecl clash = spring_rate_param;
    clash.prop.name = "stiffness";
    const ContactParamDecl *const list2[] = {&clash};
    ContactModelClass c2 = variant("clash", list2);
    assert_int_equal(contact_model_register(&c2, &kind, &err), ISSIM_ERR_INVALID);
    assert_contains(err.message, "'stiffness' is already declared");
    /* a slot the params cannot hold */
    ContactParamDecl far = spring_rate_param;
    far.prop.name = "far_rate";
    far.index = CONTACT_MODEL_VALUES_MAX;
    const ContactParamDecl *const list3[] = {&far};
    ContactModelClass c3 = variant("far", list3);
    assert_int_equal(contact_model_register(&c3, &kind, &err), ISSIM_ERR_INVALID);
    assert_contains(err.message, "model_values");
    /* sharing a declaration is fine: the built-in's, by pointer */
    const ContactParamDecl *const list4[] = {contact_param_decl("exponent"), &spring_rate_param};
    ContactModelClass c4 = variant("sharing", list4);
    c4.param_count = 2;
    assert_int_equal(contact_model_register(&c4, &kind, &err), ISSIM_OK);
    int count;
    const char *const *names = contact_model_names(&count);
    assert_int_equal(count, (int)kind + 1);
    assert_string_equal(names[kind], "sharing");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scene_runs_the_declared_parameter),
        cmocka_unit_test(test_out_of_range_names_parameter_unit_range),
        cmocka_unit_test(test_pair_property_is_the_declaration),
        cmocka_unit_test(test_saved_scene_keeps_the_parameter),
        cmocka_unit_test(test_unusable_declarations_refused),
    };
    return cmocka_run_group_tests(tests, register_model, NULL);
}
