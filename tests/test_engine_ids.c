/* Body ids at the engine's edge (engine.h, "Body ids"; STYLE.md points 2 and 14): an id names a
 * body of the engine that issued it and of no other. A valid id reads and pushes its body; the
 * null id, an index the engine never issued and an id of another engine (a destroyed one, or a
 * live one) are refused with a message, and the refused call touches no body. Contact reports
 * carry the same ids, packed. Scenes are built from strings (scene_load_string). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/io.h"
#include "testutil.h"

/* Two free bodies, no gravity, no contacts: a body moves only if something pushes it. */
static const char *const two_bodies =
    "return {\n"
    "  universe = { gravity = {0, 0, 0}, integrator = 'rk4', dt = 1e-3 },\n"
    "  things = {\n"
    "    { name = 'a', kind = 'body', mass = 1, inertia = {0.01, 0.01, 0.01},\n"
    "      pos = {0, 0, 1}, material = 'a' },\n"
    "    { name = 'b', kind = 'body', mass = 2, inertia = {0.01, 0.01, 0.01},\n"
    "      pos = {1, 0, 1}, material = 'b' },\n"
    "  },\n"
    "}\n";

/* A point bar dropped 1 cm onto a floor: one vertex contact after about 45 ms. */
static const char *const bar_on_floor =
    "return {\n"
    "  universe = { gravity = {0, 0, -9.81}, planar = true, integrator = 'rk4', dt = 1e-4 },\n"
    "  things = {\n"
    "    { name = 'bar', kind = 'body', mass = 1, inertia = {1/300, 1/300, 1e-5},\n"
    "      pos = {0, 0, 0.11}, vertices = {{0, 0, -0.1}}, material = 'bar' },\n"
    "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1}, offset = 0,\n"
    "      material = 'floor' },\n"
    "  },\n"
    "  contacts = {\n"
    "    { name = 'bar_floor', materials = {'bar', 'floor'}, model = 'spring_damper',\n"
    "      stiffness = 1e5, restitution = 0.5 },\n"
    "  },\n"
    "}\n";

static Engine *engine_from_string(const char *source) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string("ids.lua", source, strlen(source), NULL, &db, &err) != ISSIM_OK)
        fail_msg("scene: %s", err.message);
    Engine *e = engine_create(db, NULL, &err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("engine_create: %s", err.message);
    return e;
}

static void assert_same_state(EngineBodyState a, EngineBodyState b) {
    assert_memory_equal(&a, &b, sizeof a);
}

static void assert_nan_state(EngineBodyState s) {
    assert_true(isnan(s.pos.x) && isnan(s.pos.y) && isnan(s.pos.z));
    assert_true(isnan(s.orient.w) && isnan(s.vel.x) && isnan(s.angvel.z));
}

/* A refused id gives sentinels from every getter, never a body's data. */
static void assert_refused_by_getters(const Engine *e, EngineBodyId id) {
    assert_false(engine_body_valid(e, id));
    assert_null(engine_body_name(e, id));
    assert_true(thing_id_is_null(engine_body_thing(e, id)));
    assert_true(isnan(engine_body_mass(e, id)));
    assert_nan_state(engine_body_state(e, id));
}

/* One second of both bodies of two_bodies, from engine e and from an untouched reference: equal
 * to the bit when nothing pushed e's bodies. */
static void assert_untouched_after_a_second(Engine *e) {
    Engine *ref = engine_from_string(two_bodies);
    IssimError err;
    assert_int_equal(engine_advance(e, 1.0, &err), ISSIM_OK);
    assert_int_equal(engine_advance(ref, 1.0, &err), ISSIM_OK);
    for (int b = 0; b < 2; b++)
        assert_same_state(engine_body_state(e, engine_body_id(e, b)),
                          engine_body_state(ref, engine_body_id(ref, b)));
    engine_destroy(ref);
}

static void test_a_valid_id_reads_and_pushes_its_body(void **state) {
    Engine *e = engine_from_string(two_bodies);
    EngineBodyId a = engine_body_find(e, "a"), b = engine_body_find(e, "b");
    assert_true(engine_body_id_equal(a, engine_body_id(e, 0)));
    assert_true(engine_body_id_equal(b, engine_body_id(e, 1)));
    assert_true(engine_body_valid(e, a) && engine_body_valid(e, b));
    assert_int_equal(engine_body_check(e, b, NULL), ISSIM_OK);
    assert_string_equal(engine_body_name(e, b), "b");
    assert_near(engine_body_mass(e, b), 2.0, 0.0);
    assert_true(thing_id_equal(engine_body_thing(e, b), thingdb_find(engine_thingdb(e), "b")));
    assert_near(engine_body_state(e, b).pos.x, 1.0, 0.0);

    IssimError err;
    assert_int_equal(engine_set_applied_wrench(e, b, vec3(4, 0, 0), vec3(0, 0, 0), &err), ISSIM_OK);
    assert_int_equal(engine_advance(e, 1.0, &err), ISSIM_OK);
    assert_near(engine_body_state(e, b).vel.x, 2.0, 1e-9); /* F / m */
    assert_near(engine_body_state(e, b).pos.x, 2.0, 1e-9); /* 1 + F t^2 / 2m */
    assert_near(engine_body_state(e, a).vel.x, 0.0, 0.0);  /* only b was pushed */
    engine_destroy(e);
}

static void test_the_null_id_is_refused(void **state) {
    Engine *e = engine_from_string(two_bodies);
    EngineBodyId null = {0};
    assert_true(engine_body_id_is_null(null));
    IssimError err = {0};
    assert_int_equal(engine_body_check(e, null, &err), ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "null body id"));
    err = (IssimError){0};
    assert_int_equal(engine_set_applied_wrench(e, null, vec3(4, 0, 0), vec3(0, 0, 0), &err),
                     ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "null body id"));
    assert_refused_by_getters(e, null);
    /* lookups that find nothing answer the null id */
    assert_true(engine_body_id_is_null(engine_body_id(e, 2)));
    assert_true(engine_body_id_is_null(engine_body_id(e, -1)));
    assert_true(engine_body_id_is_null(engine_body_find(e, "nobody")));
    assert_true(engine_body_id_is_null(engine_body_find(e, NULL)));
    assert_untouched_after_a_second(e);
    engine_destroy(e);
}

/* An index this engine never issued, with its own generation: a forged id, refused as out of
 * range rather than read past the body table. */
static void test_an_index_out_of_range_is_refused(void **state) {
    Engine *e = engine_from_string(two_bodies);
    EngineBodyId forged = engine_body_id(e, 1);
    forged.index = 2;
    IssimError err = {0};
    assert_int_equal(engine_set_applied_wrench(e, forged, vec3(4, 0, 0), vec3(0, 0, 0), &err),
                     ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "has 2 bodies"));
    assert_refused_by_getters(e, forged);
    forged.index = -1;
    assert_int_equal(engine_body_check(e, forged, NULL), ISSIM_ERR_RANGE);
    assert_untouched_after_a_second(e);
    engine_destroy(e);
}

/* The scene-change case: an id kept from the previous scene's engine. Same scene, same index,
 * possibly the same address: a plain index would push the new engine's body. */
static void test_an_id_from_a_destroyed_engine_is_stale(void **state) {
    Engine *old = engine_from_string(two_bodies);
    EngineBodyId kept = engine_body_find(old, "b");
    engine_destroy(old);
    Engine *e = engine_from_string(two_bodies);
    assert_int_equal(kept.index, engine_body_find(e, "b").index);
    assert_false(engine_body_id_equal(kept, engine_body_find(e, "b")));
    IssimError err = {0};
    assert_int_equal(engine_set_applied_wrench(e, kept, vec3(4, 0, 0), vec3(0, 0, 0), &err),
                     ISSIM_ERR_STALE);
    print_message("refused: %s\n", err.message);
    assert_non_null(strstr(err.message, "stale"));
    assert_non_null(strstr(err.message, "another engine"));
    assert_string_equal(issim_status_name(err.status), "stale id");
    assert_refused_by_getters(e, kept);
    assert_untouched_after_a_second(e);
    engine_destroy(e);
}

static void test_an_id_from_another_live_engine_is_stale(void **state) {
    Engine *e = engine_from_string(two_bodies), *other = engine_from_string(two_bodies);
    EngineBodyId theirs = engine_body_id(other, 0);
    assert_true(engine_body_valid(other, theirs));
    assert_int_equal(engine_body_check(e, theirs, NULL), ISSIM_ERR_STALE);
    assert_int_equal(engine_set_applied_wrench(e, theirs, vec3(4, 0, 0), vec3(1, 0, 0), NULL),
                     ISSIM_ERR_STALE);
    assert_refused_by_getters(e, theirs);
    assert_untouched_after_a_second(e);
    engine_destroy(other);
    engine_destroy(e);
}

/* Every engine has its own non-zero generation, so its ids differ from every other's. */
static void test_engines_have_distinct_generations(void **state) {
    uint32_t seen[8];
    for (int i = 0; i < 8; i++) {
        Engine *e = engine_from_string(two_bodies);
        seen[i] = engine_body_id(e, 0).generation;
        engine_destroy(e);
        assert_true(seen[i] != 0);
        for (int j = 0; j < i; j++)
            assert_true(seen[i] != seen[j]);
    }
}

/* The registry word: generation high, index low, the null id 0; unpacking gives the id back. */
static void test_ids_pack_into_one_word(void **state) {
    EngineBodyId id = {7, 0x12345678u};
    uint64_t packed = engine_body_id_pack(id);
    assert_int_equal(packed, 0x1234567800000007ull);
    assert_true(engine_body_id_equal(engine_body_id_unpack(packed), id));
    assert_int_equal(engine_body_id_pack(engine_body_id_null()), 0);
    assert_int_equal(engine_body_id_pack((EngineBodyId){5, 0}), 0); /* any null id */
    assert_true(engine_body_id_is_null(engine_body_id_unpack(0)));
    Engine *e = engine_from_string(two_bodies);
    EngineBodyId b = engine_body_id(e, 1);
    assert_true(engine_body_valid(e, engine_body_id_unpack(engine_body_id_pack(b))));
    engine_destroy(e);
}

/* Contact reports name their bodies by packed ids: the bar's id, and 0 for the floor. */
static void test_contact_reports_carry_body_ids(void **state) {
    Engine *e = engine_from_string(bar_on_floor);
    IssimError err;
    ContactReport r[2];
    int n = 0;
    while (n == 0 && engine_time(e) < 0.2) {
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
        n = engine_contact_reports(e, r, 2);
    }
    assert_int_equal(n, 1);
    assert_true(r[0].id > 0);
    EngineBodyId bar = engine_body_id_unpack(r[0].body_a);
    assert_true(engine_body_valid(e, bar));
    assert_true(engine_body_id_equal(bar, engine_body_find(e, "bar")));
    assert_int_equal(r[0].body_b, 0); /* the floor is an obstacle */
    assert_int_equal(r[0].obstacle, 0);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_valid_id_reads_and_pushes_its_body),
        cmocka_unit_test(test_the_null_id_is_refused),
        cmocka_unit_test(test_an_index_out_of_range_is_refused),
        cmocka_unit_test(test_an_id_from_a_destroyed_engine_is_stale),
        cmocka_unit_test(test_an_id_from_another_live_engine_is_stale),
        cmocka_unit_test(test_engines_have_distinct_generations),
        cmocka_unit_test(test_ids_pack_into_one_word),
        cmocka_unit_test(test_contact_reports_carry_body_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
