/* Thing database: ids and generations, paths, property parsing/formatting/validation, the
 * fixed-during-run rule (000 B.3.3), clones. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/thing.h"

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (!strstr(h_, n_))                                                                       \
            fail_msg("\"%s\" does not contain \"%s\"", h_, n_);                                    \
    } while (0)

static ThingId add(ThingDb *db, const char *name, ThingKind kind, ThingId parent) {
    IssimError err;
    ThingId id = thingdb_add(db, name, kind, parent, &err);
    if (thing_id_is_null(id))
        fail_msg("thingdb_add(%s): %s", name, err.message);
    return id;
}

static void test_kind_names(void **state) {
    (void)state;
    for (int k = 0; k < THING_KIND_COUNT; k++) {
        assert_int_equal(
            vocabulary_parse(thing_kind_names, THING_KIND_COUNT, thing_kind_name((ThingKind)k)), k);
    }
    assert_int_equal(vocabulary_parse(thing_kind_names, THING_KIND_COUNT, "bdy"), -1);
    assert_int_equal(vocabulary_parse(thing_kind_names, THING_KIND_COUNT, NULL), -1);
    assert_string_equal(vocabulary_name(thing_kind_names, THING_KIND_COUNT, THING_KIND_COUNT), "?");
    assert_string_equal(thing_kind_name(THING_RIGID_BODY), "body");
}

static void test_defaults_validate(void **state) {
    (void)state;
    for (int k = 0; k < THING_KIND_COUNT; k++) {
        int count;
        const PropDef *defs = thing_kind_props((ThingKind)k, &count);
        for (int i = 0; i < count; i++) {
            IssimError err;
            if (prop_validate(&defs[i], &defs[i].default_value, &err) != ISSIM_OK)
                fail_msg("%s.%s: %s", thing_kind_name((ThingKind)k), defs[i].name, err.message);
            assert_non_null(defs[i].description);
            assert_true(strlen(defs[i].description) > 5);
            assert_non_null(defs[i].unit);
        }
    }
    int count;
    thing_kind_props(THING_GROUP, &count);
    assert_int_equal(count, 0);
}

static void test_add_find_remove_generations(void **state) {
    (void)state;
    ThingDb *db = thingdb_create();
    IssimError err;
    ThingId universe = add(db, "universe", THING_UNIVERSE, thing_id_null());
    ThingId bar = add(db, "bar", THING_RIGID_BODY, thing_id_null());
    ThingId floor_ = add(db, "floor", THING_FIXED_OBSTACLE, thing_id_null());
    assert_int_equal(thingdb_count(db), 3);
    assert_true(thing_id_equal(thingdb_at(db, 1), bar));
    assert_true(thing_id_is_null(thingdb_at(db, 3)));
    assert_true(thing_id_equal(thingdb_find(db, "floor"), floor_));
    assert_true(thing_id_equal(thingdb_find_kind(db, THING_UNIVERSE), universe));
    assert_string_equal(thing_name(db, bar), "bar");
    assert_int_equal(thing_kind(db, bar), THING_RIGID_BODY);

    /* Names: syntax, uniqueness among siblings, one universe. */
    assert_true(thing_id_is_null(thingdb_add(db, "bar", THING_USER, thing_id_null(), &err)));
    assert_contains(err.message, "duplicate name 'bar'");
    assert_true(thing_id_is_null(thingdb_add(db, "2bar", THING_USER, thing_id_null(), &err)));
    assert_contains(err.message, "invalid thing name '2bar'");
    assert_true(thing_id_is_null(thingdb_add(db, "a.b", THING_USER, thing_id_null(), &err)));
    assert_true(thing_id_is_null(thingdb_add(db, "", THING_USER, thing_id_null(), &err)));
    assert_true(thing_id_is_null(thingdb_add(db, "universe", THING_UNIVERSE, bar, &err)));
    assert_int_equal(thingdb_count(db), 3);

    /* Remove: the id goes stale, the slot is reused with a new generation. */
    assert_int_equal(thingdb_remove(db, bar, &err), ISSIM_OK);
    assert_false(thingdb_valid(db, bar));
    assert_null(thing_name(db, bar));
    assert_int_equal(thing_prop_count(db, bar), 0);
    assert_int_equal(thingdb_remove(db, bar, &err), ISSIM_ERR_NOT_FOUND);
    assert_int_equal(thing_set(db, bar, 0, &(PropValue){.type = PROP_REAL, .real = 1}, false, &err),
                     ISSIM_ERR_NOT_FOUND);
    ThingId again = add(db, "bar", THING_RIGID_BODY, thing_id_null());
    assert_int_equal(again.index, bar.index);
    assert_int_not_equal(again.generation, bar.generation);
    assert_false(thingdb_valid(db, bar));
    assert_true(thingdb_valid(db, again));
    /* Insertion order: the re-added bar is last. */
    assert_true(thing_id_equal(thingdb_at(db, 0), universe));
    assert_true(thing_id_equal(thingdb_at(db, 1), floor_));
    assert_true(thing_id_equal(thingdb_at(db, 2), again));
    assert_false(thingdb_valid(db, thing_id_null()));
    assert_false(thingdb_valid(db, (ThingId){99, 1}));
    thingdb_destroy(db);
}

static void test_groups_and_paths(void **state) {
    (void)state;
    ThingDb *db = thingdb_create();
    IssimError err;
    ThingId arm = add(db, "arm", THING_GROUP, thing_id_null());
    ThingId link1 = add(db, "link1", THING_RIGID_BODY, arm);
    ThingId link2 = add(db, "link2", THING_RIGID_BODY, arm);
    ThingId other =
        add(db, "link1", THING_RIGID_BODY, thing_id_null()); /* same name, other parent */
    ThingId pair = add(db, "bar_floor", THING_CONTACT_PAIR, thing_id_null());
    assert_true(thing_id_equal(thingdb_find(db, "arm.link1"), link1));
    assert_true(thing_id_equal(thingdb_find(db, "link1"), other));
    assert_true(thing_id_is_null(thingdb_find(db, "arm.link3")));
    assert_true(thing_id_is_null(thingdb_find(db, "arm.")));
    assert_true(thing_id_equal(thing_parent(db, link2), arm));
    char path[64];
    assert_string_equal(thing_path(db, link2, path, sizeof path), "arm.link2");
    assert_int_equal(thing_prop_count(db, arm), 0);

    ThingId id;
    int prop;
    assert_int_equal(thingdb_resolve(db, "arm.link1.mass", &id, &prop, &err), ISSIM_OK);
    assert_true(thing_id_equal(id, link1));
    assert_string_equal(thing_prop_def(db, id, prop)->name, "mass");
    assert_int_equal(thingdb_resolve(db, "link1.pos", &id, &prop, &err), ISSIM_OK);
    assert_true(thing_id_equal(id, other));

    /* Dotted property names (contact models add "contact.model"-style names). */
    PropDef dotted = {.name = "contact.model",
                      .type = PROP_REAL,
                      .unit = "N/m",
                      .description = "a dotted name",
                      .min = 0,
                      .max = 10,
                      .mutability = PROP_LIVE,
                      .default_value = {.type = PROP_REAL, .real = 1}};
    assert_int_equal(thing_add_prop(db, pair, &dotted, &err), ISSIM_OK);
    assert_int_equal(thing_add_prop(db, pair, &dotted, &err), ISSIM_ERR_INVALID);
    assert_contains(err.message, "already has a property 'contact.model'");
    assert_int_equal(thingdb_resolve(db, "bar_floor.contact.model", &id, &prop, &err), ISSIM_OK);
    assert_true(thing_id_equal(id, pair));
    assert_string_equal(thing_prop_def(db, id, prop)->name, "contact.model");
    assert_int_equal(thingdb_set_text(db, "bar_floor.contact.model", "2.5", true, &err), ISSIM_OK);
    assert_near(thing_real(db, pair, "contact.model"), 2.5, 0);

    /* Errors name the path and list the known properties. */
    assert_int_equal(thingdb_resolve(db, "arm.link1.mas", &id, &prop, &err), ISSIM_ERR_NOT_FOUND);
    assert_contains(err.message,
                    "unknown property 'mas' of body 'arm.link1'; known: mass, inertia");
    assert_int_equal(thingdb_resolve(db, "nothing.mass", &id, &prop, &err), ISSIM_ERR_NOT_FOUND);
    assert_contains(err.message, "no thing named 'nothing'");
    assert_int_equal(thingdb_resolve(db, "arm", &id, &prop, &err), ISSIM_ERR_NOT_FOUND);

    /* Removing a group removes its children. */
    assert_int_equal(thingdb_remove(db, arm, &err), ISSIM_OK);
    assert_false(thingdb_valid(db, link1));
    assert_false(thingdb_valid(db, link2));
    assert_true(thingdb_valid(db, other));
    assert_int_equal(thingdb_count(db), 2);
    thingdb_destroy(db);
}

static const PropDef *def_of(ThingKind kind, const char *name) {
    int count;
    const PropDef *defs = thing_kind_props(kind, &count);
    for (int i = 0; i < count; i++)
        if (strcmp(defs[i].name, name) == 0)
            return &defs[i];
    fail_msg("no property %s", name);
    return NULL;
}

/* Parses text, formats it both ways, parses the formats back: equal each time. */
static void round_trip(const PropDef *def, const char *text) {
    IssimError err;
    PropValue v, back;
    char buf[4096];
    if (prop_parse(def, text, &v, &err) != ISSIM_OK)
        fail_msg("parse %s '%s': %s", def->name, text, err.message);
    /* Strings are read verbatim, so only their plain format reads back. */
    for (int lua = 0; lua < (def->type == PROP_STRING ? 1 : 2); lua++) {
        prop_format(def, &v, lua, buf, sizeof buf);
        if (prop_parse(def, buf, &back, &err) != ISSIM_OK)
            fail_msg("re-parse %s '%s': %s", def->name, buf, err.message);
        if (!prop_value_equal(&v, &back))
            fail_msg("%s: '%s' -> '%s' is not the same value", def->name, text, buf);
    }
}

static void test_parse_format_round_trip(void **state) {
    (void)state;
    PropDef int_def = {.name = "count",
                       .type = PROP_INT,
                       .unit = "",
                       .description = "n",
                       .min = -5,
                       .max = 1000,
                       .default_value = {.type = PROP_INT}};
    round_trip(def_of(THING_RIGID_BODY, "mass"), "2.5");
    round_trip(def_of(THING_RIGID_BODY, "mass"), "0.1");
    round_trip(def_of(THING_RIGID_BODY, "pos"), "1e-300 0 0"); /* tiny numbers keep their bits */
    round_trip(def_of(THING_UNIVERSE, "dt"), "0.30000000000000004");
    round_trip(&int_def, "-3");
    round_trip(def_of(THING_UNIVERSE, "planar"), "true");
    round_trip(def_of(THING_UNIVERSE, "planar"), "off");
    round_trip(def_of(THING_UNIVERSE, "integrator"), "rk4");
    round_trip(def_of(THING_RIGID_BODY, "material"), "steel \"quoted\"\\");
    round_trip(def_of(THING_RIGID_BODY, "material"), "");
    round_trip(def_of(THING_UNIVERSE, "gravity"), "0 0 -1.62");
    round_trip(def_of(THING_UNIVERSE, "gravity"), "{0, 0.1, -9.81}");
    round_trip(def_of(THING_RIGID_BODY, "orient"), "{1, 2, 3, 4}");
    round_trip(def_of(THING_RIGID_BODY, "vertices"), "{{0,0,0.1},{0,0,-0.1}}");
    round_trip(def_of(THING_RIGID_BODY, "vertices"), "0 0 1; 1 2 3");
    round_trip(def_of(THING_RIGID_BODY, "vertices"), "{}");

    IssimError err;
    PropValue v;
    char buf[256];
    const PropDef *gravity = def_of(THING_UNIVERSE, "gravity");
    assert_int_equal(prop_parse(gravity, "{0, 0, -9.81}", &v, &err), ISSIM_OK);
    assert_near(v.vec[2], -9.81, 0);
    prop_format(gravity, &v, true, buf, sizeof buf);
    assert_string_equal(buf, "{0, 0, -9.81}");
    const PropDef *integrator = def_of(THING_UNIVERSE, "integrator");
    assert_int_equal(prop_parse(integrator, "adams", &v, &err), ISSIM_OK);
    assert_int_equal(v.integer, 1);
    prop_format(integrator, &v, true, buf, sizeof buf);
    assert_string_equal(buf, "\"adams\"");
    prop_format(integrator, &v, false, buf, sizeof buf);
    assert_string_equal(buf, "adams");
    const PropDef *mass = def_of(THING_RIGID_BODY, "mass");
    assert_int_equal(prop_parse(mass, "0.1", &v, &err), ISSIM_OK);
    prop_format(mass, &v, true, buf, sizeof buf);
    assert_string_equal(buf, "0.1");

    /* Quaternions are normalised, and normalising is idempotent. */
    const PropDef *orient = def_of(THING_RIGID_BODY, "orient");
    assert_int_equal(prop_parse(orient, "2 0 0 0", &v, &err), ISSIM_OK);
    assert_near(v.vec[0], 1, 0);
    assert_int_equal(prop_parse(orient, "1 1 1 1", &v, &err), ISSIM_OK);
    assert_near(v.vec[3], 0.5, 1e-16);

    /* Malformed texts. */
    assert_int_equal(prop_parse(mass, "heavy", &v, &err), ISSIM_ERR_INVALID);
    assert_contains(err.message, "mass: cannot read 'heavy' as a number (kg)");
    assert_int_equal(prop_parse(gravity, "1 2", &v, &err), ISSIM_ERR_INVALID);
    assert_int_equal(prop_parse(gravity, "1 2 3 4", &v, &err), ISSIM_ERR_INVALID);
    assert_int_equal(prop_parse(gravity, "{1 2 3", &v, &err), ISSIM_ERR_INVALID);
    assert_int_equal(prop_parse(gravity, "1 2 3x", &v, &err), ISSIM_ERR_INVALID);
    assert_int_equal(prop_parse(def_of(THING_UNIVERSE, "planar"), "maybe", &v, &err),
                     ISSIM_ERR_INVALID);
    assert_int_equal(prop_parse(&int_def, "1.5", &v, &err), ISSIM_ERR_INVALID);
    assert_int_equal(prop_parse(integrator, "euler", &v, &err), ISSIM_ERR_INVALID);
    assert_contains(err.message, "unknown choice 'euler'; one of: bdf, adams, rk4");
    assert_int_equal(prop_parse(def_of(THING_RIGID_BODY, "vertices"), "{{0,0}}", &v, &err),
                     ISSIM_ERR_INVALID);
}

/* A quaternion of any finite non-zero norm is stored normalised: a huge one was stored as
 * (0, 0, 0, 0), which the saved scene could not load back, and a tiny one unnormalised. */
static void test_quaternions_of_any_norm(void **state) {
    (void)state;
    const char *texts[] = {"1e300 1e300 0 0", "1e-300 0 1e-300 0", "2 0 0 0", "1e-200 0 0 0",
                           "1.7e308 0 0 -1.7e308"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        ThingDb *db = thingdb_create();
        IssimError err = {0};
        ThingId b = thingdb_add(db, "b", THING_RIGID_BODY, thing_id_null(), &err);
        assert_int_equal(thingdb_set_text(db, "b.orient", texts[i], false, &err), ISSIM_OK);
        Quat q = thing_quat(db, b, "orient");
        double n = sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
        if (!(fabs(n - 1.0) < 1e-15))
            fail_msg("orient %s stored with norm %.17g", texts[i], n);
        thingdb_destroy(db);
    }
}

static void test_validation_messages(void **state) {
    (void)state;
    IssimError err;
    const PropDef *mass = def_of(THING_RIGID_BODY, "mass");
    PropValue v = prop_real(-1);
    assert_int_equal(prop_validate(mass, &v, &err), ISSIM_ERR_RANGE);
    assert_string_equal(err.message,
                        "mass = -1 kg is out of range: must be >= 1e-09 (range [1e-09, 1e+09] kg)");
    v = prop_real(0);
    assert_int_equal(prop_validate(mass, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "must be >= 1e-09");
    v = prop_real(4.9e-324); /* a denormal mass: CVODE failed at the first contact with it */
    assert_int_equal(prop_validate(mass, &v, &err), ISSIM_ERR_RANGE);
    const PropDef *dt = def_of(THING_UNIVERSE, "dt");
    v = prop_real(1e-300); /* accepted before: a run "succeeded" having simulated nothing */
    assert_int_equal(prop_validate(dt, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "must be >= 1e-09");
    v = prop_real(2e9);
    assert_int_equal(prop_validate(mass, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "must be <= 1e+09");
    v = prop_real(1e9); /* inclusive maximum */
    assert_int_equal(prop_validate(mass, &v, &err), ISSIM_OK);
    v = prop_real(NAN);
    assert_int_equal(prop_validate(mass, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "is not a finite number");
    v = prop_real(INFINITY);
    assert_int_equal(prop_validate(mass, &v, &err), ISSIM_ERR_RANGE);
    v = prop_vec3(vec3(0, 0, 1));
    assert_int_equal(prop_validate(mass, &v, &err), ISSIM_ERR_INVALID);
    assert_contains(err.message, "wrong type");

    const PropDef *radius = def_of(THING_RIGID_BODY, "radius"); /* inclusive minimum 0 */
    v = prop_real(0);
    assert_int_equal(prop_validate(radius, &v, &err), ISSIM_OK);
    v = prop_real(-1e-9);
    assert_int_equal(prop_validate(radius, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "must be >= 0");

    const PropDef *inertia = def_of(THING_RIGID_BODY, "inertia");
    v = prop_vec3(vec3(0.1, 0, 0.1));
    assert_int_equal(prop_validate(inertia, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "{0.1, 0, 0.1} kg m^2 is out of range: y must be >= 1e-15");
    v = prop_vec3(vec3(0.1, NAN, 0.1));
    assert_int_equal(prop_validate(inertia, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "not finite");

    const PropDef *integrator = def_of(THING_UNIVERSE, "integrator");
    v = prop_enum(3);
    assert_int_equal(prop_validate(integrator, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "must be one of bdf, adams, rk4");
    v = prop_enum(-1);
    assert_int_equal(prop_validate(integrator, &v, &err), ISSIM_ERR_RANGE);

    const PropDef *normal = def_of(THING_FIXED_OBSTACLE, "normal");
    v = prop_vec3(vec3(0, 0, 0));
    assert_int_equal(prop_validate(normal, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "zero vector");
    v = prop_vec3(vec3(0, 0, 5)); /* not unit: the engine normalises */
    assert_int_equal(prop_validate(normal, &v, &err), ISSIM_OK);

    const PropDef *orient = def_of(THING_RIGID_BODY, "orient");
    v = prop_quat((Quat){0, 0, 0, 0});
    assert_int_equal(prop_validate(orient, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "zero quaternion");

    const PropDef *vertices = def_of(THING_RIGID_BODY, "vertices");
    Vec3 pts[2] = {{0, 0, 0}, {0, 0, 2000}};
    v = prop_points(pts, 2);
    assert_int_equal(prop_validate(vertices, &v, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "point 2 {0, 0, 2000} m is out of range: z must be <= 1000");

    /* Through the database: messages name the path. */
    ThingDb *db = thingdb_create();
    ThingId bar = add(db, "bar", THING_RIGID_BODY, thing_id_null());
    add(db, "floor", THING_FIXED_OBSTACLE, thing_id_null());
    assert_int_equal(thingdb_set_text(db, "bar.mass", "-1", false, &err), ISSIM_ERR_RANGE);
    assert_string_equal(
        err.message, "bar.mass: -1 kg is out of range: must be >= 1e-09 (range [1e-09, 1e+09] kg)");
    assert_near(thing_real(db, bar, "mass"), 1, 0); /* old value kept */
    assert_int_equal(thingdb_set_text(db, "bar.mass", "nan", false, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "bar.mass: nan kg is not a finite number");
    assert_int_equal(thingdb_set_text(db, "bar.mass", "inf", false, &err), ISSIM_ERR_RANGE);
    assert_int_equal(thingdb_set_text(db, "floor.normal", "0 0 0", false, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "floor.normal: {0, 0, 0} is a zero vector");
    assert_int_equal(thingdb_set_text(db, "bar.orient", "0 0 0 0", false, &err), ISSIM_ERR_RANGE);
    assert_int_equal(thingdb_set_text(db, "bar.mass", "x", false, &err), ISSIM_ERR_INVALID);
    assert_contains(err.message, "bar.mass: cannot read 'x' as a number");
    assert_int_equal(thingdb_set_text(db, "bar.orient", "0 0 0 3", false, &err), ISSIM_OK);
    Quat q = thing_quat(db, bar, "orient");
    assert_near(q.z, 1, 0);
    assert_near(q.w, 0, 0);
    thingdb_destroy(db);
}

static void test_fixed_during_run(void **state) {
    (void)state;
    ThingDb *db = thingdb_create();
    IssimError err;
    ThingId universe = add(db, "universe", THING_UNIVERSE, thing_id_null());
    ThingId bar = add(db, "bar", THING_RIGID_BODY, thing_id_null());
    assert_int_equal(thingdb_set_text(db, "bar.material", "steel", true, &err), ISSIM_ERR_READONLY);
    assert_string_equal(err.message,
                        "bar.material is fixed during a run; stop the simulation to change it");
    assert_string_equal(thing_string(db, bar, "material"), "default");
    int prop = thing_prop_find(db, bar, "material");
    PropValue v = prop_string("steel");
    assert_int_equal(thing_set(db, bar, prop, &v, true, &err), ISSIM_ERR_READONLY);
    assert_contains(err.message, "bar.material is fixed during a run");
    assert_int_equal(thingdb_set_text(db, "universe.integrator", "rk4", true, &err),
                     ISSIM_ERR_READONLY);
    assert_int_equal(thingdb_set_text(db, "universe.dt", "1e-4", true, &err), ISSIM_ERR_READONLY);

    /* Live properties change while running; fixed ones when stopped. */
    assert_int_equal(thingdb_set_text(db, "bar.mass", "2", true, &err), ISSIM_OK);
    assert_int_equal(thingdb_set_text(db, "universe.gravity", "0 0 -1.62", true, &err), ISSIM_OK);
    assert_near(thing_vec3(db, universe, "gravity").z, -1.62, 0);
    assert_int_equal(thing_set(db, bar, prop, &v, false, &err), ISSIM_OK);
    assert_string_equal(thing_string(db, bar, "material"), "steel");
    assert_int_equal(thingdb_set_text(db, "universe.integrator", "rk4", false, &err), ISSIM_OK);
    assert_int_equal(thing_enum(db, universe, "integrator"), 2);
    assert_string_equal(thing_enum_name(db, universe, "integrator"), "rk4");
    assert_int_equal(thingdb_set_text(db, "universe.planar", "true", false, &err), ISSIM_OK);
    assert_true(thing_bool(db, universe, "planar"));
    thingdb_destroy(db);
}

static void test_typed_getters_and_defaults(void **state) {
    (void)state;
    ThingDb *db = thingdb_create();
    ThingId universe = add(db, "universe", THING_UNIVERSE, thing_id_null());
    ThingId bar = add(db, "bar", THING_RIGID_BODY, thing_id_null());
    ThingId floor_ = add(db, "floor", THING_FIXED_OBSTACLE, thing_id_null());
    ThingId user = add(db, "hand", THING_USER, thing_id_null());
    ThingId pair = add(db, "pair", THING_CONTACT_PAIR, thing_id_null());
    assert_near(thing_vec3(db, universe, "gravity").z, -9.81, 0);
    assert_string_equal(thing_enum_name(db, universe, "integrator"), "bdf");
    assert_near(thing_real(db, universe, "dt"), 1e-3, 0);
    assert_near(thing_real(db, universe, "horizon"), 0.25, 0);
    assert_near(thing_real(db, universe, "camera_fov"), 45, 0);
    assert_string_equal(thing_string(db, universe, "record"), "");
    assert_near(thing_real(db, bar, "mass"), 1, 0);
    assert_near(thing_vec3(db, bar, "inertia").y, 0.01, 0);
    assert_near(thing_quat(db, bar, "orient").w, 1, 0);
    assert_int_equal(thing_get(db, bar, "vertices")->point_count, 1);
    assert_string_equal(thing_string(db, bar, "material"), "default");
    assert_near(thing_vec3(db, floor_, "normal").z, 1, 0);
    assert_string_equal(thing_enum_name(db, floor_, "shape"), "plane");
    assert_near(thing_vec3(db, user, "force").x, 0, 0);
    assert_string_equal(thing_string(db, pair, "material_b"), "default");
    const PropDef *def = thing_prop_def(db, bar, thing_prop_find(db, bar, "material"));
    assert_int_equal(def->mutability, PROP_FIXED_DURING_RUN);
    def = thing_prop_def(db, bar, thing_prop_find(db, bar, "pos"));
    assert_int_equal(def->mutability, PROP_LIVE);
    assert_string_equal(def->unit, "m");
    assert_int_equal(thing_prop_find(db, bar, "nope"), -1);
    assert_null(thing_prop_def(db, bar, 99));
    thingdb_destroy(db);
}

static void test_clone_independent(void **state) {
    (void)state;
    ThingDb *db = thingdb_create();
    IssimError err;
    add(db, "universe", THING_UNIVERSE, thing_id_null());
    ThingId arm = add(db, "arm", THING_GROUP, thing_id_null());
    ThingId link = add(db, "link", THING_RIGID_BODY, arm);
    ThingId gone = add(db, "gone", THING_USER, thing_id_null());
    assert_int_equal(thingdb_remove(db, gone, &err), ISSIM_OK);
    assert_int_equal(thingdb_set_text(db, "arm.link.mass", "3", false, &err), ISSIM_OK);

    ThingDb *copy = thingdb_clone(db);
    assert_non_null(copy);
    assert_int_equal(thingdb_count(copy), 3);
    assert_true(thingdb_valid(copy, link)); /* ids preserved */
    assert_false(thingdb_valid(copy, gone));
    assert_near(thing_real(copy, link, "mass"), 3, 0);
    /* The freed slot is reused identically in both. */
    ThingId a = add(db, "new", THING_USER, thing_id_null());
    ThingId b = add(copy, "new", THING_USER, thing_id_null());
    assert_int_equal(a.index, gone.index);
    assert_true(thing_id_equal(a, b));
    assert_int_equal(thingdb_set_text(copy, "arm.link.mass", "5", false, &err), ISSIM_OK);
    assert_near(thing_real(db, link, "mass"), 3, 0);
    assert_int_equal(thingdb_remove(db, arm, &err), ISSIM_OK);
    assert_true(thingdb_valid(copy, link));
    assert_near(thing_real(copy, link, "mass"), 5, 0);
    assert_int_equal(thingdb_count(copy), 4);
    thingdb_destroy(db);
    thingdb_destroy(copy);
}

static void test_add_prop_validates_default(void **state) {
    (void)state;
    ThingDb *db = thingdb_create();
    IssimError err;
    ThingId pair = add(db, "pair", THING_CONTACT_PAIR, thing_id_null());
    PropDef bad = {.name = "stiffness",
                   .type = PROP_REAL,
                   .unit = "N/m",
                   .description = "k",
                   .min = 0,
                   .max = 1,
                   .min_exclusive = true,
                   .default_value = {.type = PROP_REAL, .real = 0}};
    assert_int_equal(thing_add_prop(db, pair, &bad, &err), ISSIM_ERR_RANGE);
    assert_contains(err.message, "pair.stiffness: invalid default");
    assert_int_equal(thing_prop_count(db, pair), 2);
    thingdb_destroy(db);
}

/* "%g" without the exponent's plus sign and leading zero: 1e+09 -> 1e9. */
static const char *doc_number(double x, char *buf, size_t size) {
    snprintf(buf, size, "%g", x);
    char *e = strchr(buf, 'e');
    if (e && e[1] == '+')
        memmove(e + 1, e + 2, strlen(e + 2) + 1);
    if (e && e[1] == '-' && e[2] == '0')
        memmove(e + 2, e + 3, strlen(e + 3) + 1);
    else if (e && e[1] == '0')
        memmove(e + 1, e + 2, strlen(e + 2) + 1);
    return buf;
}

/* The row of docs/scene-format.md's property tables for def. */
static void doc_row(const PropDef *d, char *row, size_t size) {
    static const char *const types[] = {"real",   "int",  "bool", "enum",
                                        "string", "vec3", "quat", "points"};
    char type[512], range[128], def[512], lo[32], hi[32];
    if (d->type == PROP_ENUM) {
        size_t used = (size_t)snprintf(type, sizeof type, "enum: ");
        for (int k = 0; k < d->enum_count; k++)
            used += (size_t)snprintf(type + used, sizeof type - used, "%s`%s`", k ? ", " : "",
                                     d->enum_names[k]);
    } else {
        snprintf(type, sizeof type, "%s", types[d->type]);
    }
    if (d->min < d->max)
        snprintf(range, sizeof range, "%s%s%s, %s]",
                 d->type == PROP_VEC3 || d->type == PROP_POINTS ? "each " : "",
                 d->min_exclusive ? "(" : "[", doc_number(d->min, lo, sizeof lo),
                 doc_number(d->max, hi, sizeof hi));
    else
        snprintf(range, sizeof range, "%s", d->type == PROP_QUAT ? "non-zero; normalised" : "—");
    if (strcmp(d->name, "normal") == 0)
        strcat(range, "; not zero");
    if (d->type == PROP_POINTS)
        strcat(range, "; at most 32 points");
    prop_format(d, &d->default_value, true, def, sizeof def);
    snprintf(row, size, "| `%s` | %s | %s | %s | `%s` | %s | %s |", d->name, type,
             d->unit[0] ? d->unit : "—", range, def, d->mutability == PROP_LIVE ? "live" : "fixed",
             d->description);
}

/* docs/scene-format.md, whole (static storage). */
static const char *scene_format_text(void) {
    const char *path = test_source_path("docs/scene-format.md");
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void test_docs_match_schema(void **state) {
    (void)state;
    const char *text = scene_format_text();
    for (int k = 0; k < THING_KIND_COUNT; k++) {
        int count;
        const PropDef *defs = thing_kind_props((ThingKind)k, &count);
        for (int i = 0; i < count; i++) {
            char row[1024];
            doc_row(&defs[i], row, sizeof row);
            if (!strstr(text, row))
                fail_msg("docs/scene-format.md lacks the row of %s.%s; expected:\n%s",
                         thing_kind_name((ThingKind)k), defs[i].name, row);
        }
    }
}

/* The rows of docs/scene-format.md's contact table, up to its blank line: the text after the
 * header that follows `intro` (static storage). */
static const char *doc_table_rows(const char *text, const char *intro, size_t *length) {
    static const char header_rule[] = "|---|---|---|---|---|---|---|\n";
    const char *at = strstr(text, intro);
    if (!at)
        fail_msg("docs/scene-format.md lacks \"%s\"", intro);
    const char *rows = strstr(at, header_rule);
    if (!rows)
        fail_msg("docs/scene-format.md: no table after \"%s\"", intro);
    rows += strlen(header_rule);
    const char *end = strstr(rows, "\n\n");
    *length = end ? (size_t)(end + 1 - rows) : strlen(rows);
    return rows;
}

/* The contact module's pair properties (contact_pair_add_props, from the models' declarations)
 * are exactly the rows of their table, in the same format and order: a declaration without its
 * row and a row without its declaration both fail. With ISSIM_PRINT_DOC_ROWS=1 in the
 * environment the expected rows are printed instead (to regenerate the table). */
static void test_docs_match_contact_pair_props(void **state) {
    (void)state;
    ThingDb *db = thingdb_create();
    IssimError err = {0};
    ThingId pair = thingdb_add(db, "pair", THING_CONTACT_PAIR, thing_id_null(), &err);
    assert_int_equal(contact_pair_add_props(db, pair, &err), ISSIM_OK);
    static char expected[1 << 16];
    size_t used = 0;
    int checked = 0;
    for (int i = 0; i < thing_prop_count(db, pair); i++) {
        const PropDef *d = thing_prop_def(db, pair, i);
        if (strcmp(d->name, "material_a") == 0 || strcmp(d->name, "material_b") == 0)
            continue; /* the standard schema's rows, checked above */
        assert_non_null(contact_param_decl(d->name));
        char row[1536];
        doc_row(d, row, sizeof row);
        used += (size_t)snprintf(expected + used, sizeof expected - used, "%s\n", row);
        checked++;
    }
    assert_true(used < sizeof expected);
    thingdb_destroy(db);
    assert_true(checked >= 20);
    if (getenv("ISSIM_PRINT_DOC_ROWS")) {
        fputs(expected, stdout);
        return;
    }
    size_t length;
    const char *rows = doc_table_rows(
        scene_format_text(), "The contact module's properties of a contact pair,", &length);
    if (length != used || memcmp(rows, expected, used) != 0) {
        size_t same = 0;
        while (same < used && same < length && rows[same] == expected[same])
            same++;
        while (same > 0 && expected[same - 1] != '\n')
            same--;
        fail_msg("docs/scene-format.md's contact table differs from the declarations at:\n"
                 "%.300s\nexpected:\n%.300s",
                 rows + same, expected + same);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_defaults_validate),
        cmocka_unit_test(test_add_find_remove_generations),
        cmocka_unit_test(test_groups_and_paths),
        cmocka_unit_test(test_parse_format_round_trip),
        cmocka_unit_test(test_validation_messages),
        cmocka_unit_test(test_quaternions_of_any_norm),
        cmocka_unit_test(test_fixed_during_run),
        cmocka_unit_test(test_typed_getters_and_defaults),
        cmocka_unit_test(test_clone_independent),
        cmocka_unit_test(test_add_prop_validates_default),
        cmocka_unit_test(test_docs_match_schema),
        cmocka_unit_test(test_docs_match_contact_pair_props),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
