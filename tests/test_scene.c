/* Scene files: loading every feature, the sandbox and its limits, error lines, writing and the
 * load -> save -> load round trip. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "issim/contact.h"
#include "issim/io.h"
#include "issim/thing.h"

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (!strstr(h_, n_))                                                                       \
            fail_msg("\"%s\" does not contain \"%s\"", h_, n_);                                    \
    } while (0)

static const char full_scene[] =
    "-- every feature of the format\n"
    "local half = 0.1\n"
    "local function v(x, y, z) return {x, y, z} end\n"
    "return {\n"
    "  name = \"full\",\n"
    "  description = \"a scene with \\\"everything\\\"\",\n"
    "  universe = { gravity = \"0 0 -1.62\", planar = true, integrator = \"rk4\", dt = 5e-4,\n"
    "               rtol = 1e-9, atol = 1e-11, max_step = 1e-3, horizon = 0.5, history = 60 },\n"
    "  camera = { eye = {1, -2, 1}, target = {0, 0, 0.3}, fov = 60 },\n"
    "  record = {\"bar.pos.z\", \"bar.vel.z\"},\n"
    "  things = {\n"
    "    { name = \"bar\", kind = \"body\", mass = 2, inertia = {1/300, 1/300, 1e-5},\n"
    "      pos = v(0, 0, 1), orient = {0, 0, 0, 2}, vel = {1, 0, 0}, angvel = {0, 3, 0},\n"
    "      vertices = {{0, 0, -half}, {0, 0, half}}, radius = 0.01, material = \"steel\",\n"
    "      color = {0.1, 0.2, 0.3}, force = {0, 0, 1}, torque = {0, 0.5, 0} },\n"
    "    { name = \"floor\", kind = \"obstacle\", shape = \"plane\", normal = {0, 0, 2},\n"
    "      offset = -0.5, material = \"floor\" },\n"
    "    { name = \"hand\", kind = \"user\", pos = {0.1, 0.2, 0.3} },\n"
    "    { name = \"arm\", kind = \"group\", things = {\n"
    "        { name = \"link1\", kind = \"body\", mass = 0.5 },\n"
    "        { name = \"bar\", kind = \"body\", mass = 0.25 },\n"
    "    } },\n"
    "  },\n"
    "  contacts = {\n"
    "    { name = \"bar_floor\", materials = {\"steel\", \"floor\"}, model = \"spring_damper\",\n"
    "      stiffness = 2e5, restitution = 0.5 },\n"
    "  },\n"
    "}\n";

static ThingDb *load_ok(const char *name, const char *text, const SceneLimits *limits) {
    ThingDb *db = NULL;
    IssimError err;
    if (scene_load_string(name, text, strlen(text), limits, &db, &err) != ISSIM_OK)
        fail_msg("%s did not load: %s", name, err.message);
    return db;
}

/* Loads text expecting failure; returns the status, err holds the message. */
static IssimStatus load_fail(const char *name, const char *text, const SceneLimits *limits,
                             IssimError *err) {
    ThingDb *db = (ThingDb *)&db; /* must be reset to NULL */
    IssimStatus status = scene_load_string(name, text, strlen(text), limits, &db, err);
    if (status == ISSIM_OK)
        fail_msg("%s loaded but should not have", name);
    assert_null(db);
    return status;
}

static void test_load_full_scene(void **state) {
    (void)state;
    ThingDb *db = load_ok("full.lua", full_scene, NULL);
    ThingId u = thingdb_find(db, "universe");
    assert_true(thing_id_equal(u, thingdb_find_kind(db, THING_UNIVERSE)));
    assert_true(thing_id_equal(thingdb_at(db, 0), u));
    assert_string_equal(thing_string(db, u, "scene_name"), "full");
    assert_string_equal(thing_string(db, u, "description"), "a scene with \"everything\"");
    assert_near(thing_vec3(db, u, "gravity").z, -1.62, 0);
    assert_true(thing_bool(db, u, "planar"));
    assert_string_equal(thing_enum_name(db, u, "integrator"), "rk4");
    assert_near(thing_real(db, u, "dt"), 5e-4, 0);
    assert_near(thing_real(db, u, "rtol"), 1e-9, 0);
    assert_near(thing_real(db, u, "atol"), 1e-11, 0);
    assert_near(thing_real(db, u, "max_step"), 1e-3, 0);
    assert_near(thing_real(db, u, "horizon"), 0.5, 0);
    assert_near(thing_real(db, u, "history"), 60, 0);
    assert_string_equal(thing_string(db, u, "record"), "bar.pos.z,bar.vel.z");
    assert_near(thing_vec3(db, u, "camera_eye").y, -2, 0);
    assert_near(thing_vec3(db, u, "camera_target").z, 0.3, 0);
    assert_near(thing_real(db, u, "camera_fov"), 60, 0);

    ThingId bar = thingdb_find(db, "bar");
    assert_int_equal(thing_kind(db, bar), THING_RIGID_BODY);
    assert_near(thing_real(db, bar, "mass"), 2, 0);
    assert_near(thing_vec3(db, bar, "inertia").x, 1.0 / 300, 0);
    assert_near(thing_vec3(db, bar, "pos").z, 1, 0);
    Quat q = thing_quat(db, bar, "orient");
    assert_near(q.z, 1, 0); /* normalised */
    assert_near(q.w, 0, 0);
    assert_near(thing_vec3(db, bar, "vel").x, 1, 0);
    assert_near(thing_vec3(db, bar, "angvel").y, 3, 0);
    const PropValue *vertices = thing_get(db, bar, "vertices");
    assert_int_equal(vertices->point_count, 2);
    assert_near(vertices->points[0].z, -0.1, 0);
    assert_near(vertices->points[1].z, 0.1, 0);
    assert_near(thing_real(db, bar, "radius"), 0.01, 0);
    assert_string_equal(thing_string(db, bar, "material"), "steel");
    assert_near(thing_vec3(db, bar, "color").y, 0.2, 0);
    assert_near(thing_vec3(db, bar, "force").z, 1, 0);
    assert_near(thing_vec3(db, bar, "torque").y, 0.5, 0);

    ThingId floor_ = thingdb_find(db, "floor");
    assert_int_equal(thing_kind(db, floor_), THING_FIXED_OBSTACLE);
    assert_near(thing_vec3(db, floor_, "normal").z, 2, 0);
    assert_near(thing_real(db, floor_, "offset"), -0.5, 0);
    assert_string_equal(thing_enum_name(db, floor_, "shape"), "plane");
    ThingId hand = thingdb_find(db, "hand");
    assert_int_equal(thing_kind(db, hand), THING_USER);
    assert_near(thing_vec3(db, hand, "pos").y, 0.2, 0);

    ThingId arm = thingdb_find(db, "arm");
    ThingId link1 = thingdb_find(db, "arm.link1");
    ThingId arm_bar = thingdb_find(db, "arm.bar");
    assert_int_equal(thing_kind(db, arm), THING_GROUP);
    assert_true(thing_id_equal(thing_parent(db, link1), arm));
    assert_near(thing_real(db, link1, "mass"), 0.5, 0);
    assert_near(thing_real(db, arm_bar, "mass"), 0.25, 0);
    assert_false(thing_id_equal(arm_bar, bar));

    ThingId pair = thingdb_find(db, "bar_floor");
    assert_int_equal(thing_kind(db, pair), THING_CONTACT_PAIR);
    assert_string_equal(thing_string(db, pair, "material_a"), "steel");
    assert_string_equal(thing_string(db, pair, "material_b"), "floor");
    assert_string_equal(thing_enum_name(db, pair, "model"), "spring_damper");
    assert_near(thing_real(db, pair, "stiffness"), 2e5, 0);
    assert_near(thing_real(db, pair, "restitution"), 0.5, 0);

    /* Insertion order: universe, things depth-first, contacts. */
    assert_int_equal(thingdb_count(db), 8);
    assert_true(thing_id_equal(thingdb_at(db, 1), bar));
    assert_true(thing_id_equal(thingdb_at(db, 4), arm));
    assert_true(thing_id_equal(thingdb_at(db, 5), link1));
    assert_true(thing_id_equal(thingdb_at(db, 7), pair));
    thingdb_destroy(db);
}

static void test_minimal_scene_has_universe(void **state) {
    (void)state;
    ThingDb *db = load_ok("empty.lua", "return {}", NULL);
    assert_int_equal(thingdb_count(db), 1);
    ThingId u = thingdb_find_kind(db, THING_UNIVERSE);
    assert_string_equal(thing_name(db, u), "universe");
    assert_near(thing_vec3(db, u, "gravity").z, -9.81, 0);
    thingdb_destroy(db);
    /* record as a plain string; a body needs only name and kind. */
    db =
        load_ok("r.lua", "return { record = 'a.b', things = {{name = 'b', kind = 'body'}} }", NULL);
    assert_string_equal(thing_string(db, thingdb_find(db, "universe"), "record"), "a.b");
    assert_near(thing_real(db, thingdb_find(db, "b"), "mass"), 1, 0);
    thingdb_destroy(db);
}

static void test_repository_scenes_load(void **state) {
    (void)state;
    const char *scenes[] = {"scenes/point_drop.lua", "scenes/bar_drop_horizontal.lua"};
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
        const char *path = test_source_path(scenes[i]);
        if (access(path, R_OK) != 0)
            continue;
        ThingDb *db = NULL;
        IssimError err;
        if (scene_load_file(path, NULL, &db, &err) != ISSIM_OK)
            fail_msg("%s", err.message);
        assert_false(thing_id_is_null(thingdb_find(db, "bar")));
        thingdb_destroy(db);
    }
}

static void test_sandbox(void **state) {
    (void)state;
    static const struct {
        const char *code, *needle;
    } cases[] = {
        {"os.exit(1)", "global 'os'"},
        {"local f = io.open('/etc/passwd')", "global 'io'"},
        {"require('os')", "global 'require'"},
        {"load('return 1')()", "global 'load'"},
        {"loadfile('/etc/passwd')", "global 'loadfile'"},
        {"dofile('/etc/passwd')", "global 'dofile'"},
        {"collectgarbage()", "global 'collectgarbage'"},
        {"print('hi')", "global 'print'"},
        {"string.dump(function() end)", "field 'dump'"},
        {"local d = ('').dump", NULL}, /* method form: nil, no error by itself */
        {"debug.getinfo(1)", "global 'debug'"},
        {"package.loadlib('x', 'y')", "global 'package'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "local x = 1\n%s\nreturn {}", cases[i].code);
        IssimError err;
        ThingDb *db = NULL;
        IssimStatus status = scene_load_string("sandbox.lua", text, strlen(text), NULL, &db, &err);
        if (!cases[i].needle) {
            assert_int_equal(status, ISSIM_OK);
            thingdb_destroy(db);
            continue;
        }
        if (status == ISSIM_OK)
            fail_msg("'%s' was allowed", cases[i].code);
        assert_null(db);
        assert_contains(err.message, "sandbox.lua:2: ");
        assert_contains(err.message, cases[i].needle);
    }
    /* Bytecode is refused (text mode only). */
    const char binary[] = "\x1bLua\x54\x00\x19\x93\r\n\x1a\n";
    IssimError err;
    ThingDb *db = NULL;
    assert_int_not_equal(scene_load_string("bin.lua", binary, sizeof binary - 1, NULL, &db, &err),
                         ISSIM_OK);
    assert_null(db);
    assert_contains(err.message, "bin.lua:1: ");
    assert_contains(err.message, "binary chunk");
    /* The safe libraries are there, and math.random is deterministic. */
    db = load_ok("libs.lua",
                 "local s = string.format('%d', math.floor(2.5)) .. table.concat({'a'}) ..\n"
                 "  utf8.char(72)\n"
                 "assert(s == '2aH')\n"
                 "return { things = {{ name = 'b', kind = 'body', mass = math.random() + 1 }} }",
                 NULL);
    double m1 = thing_real(db, thingdb_find(db, "b"), "mass");
    thingdb_destroy(db);
    db = load_ok("libs.lua",
                 "return { things = {{ name = 'b', kind = 'body', mass = math.random() + 1 }} }",
                 NULL);
    assert_near(thing_real(db, thingdb_find(db, "b"), "mass"), m1, 0);
    thingdb_destroy(db);
}

static void test_instruction_budget(void **state) {
    (void)state;
    SceneLimits limits = scene_limits_default();
    assert_int_equal(limits.max_memory, 64u << 20);
    assert_int_equal(limits.max_instructions, 100000000L);
    limits.max_instructions = 2000000;
    IssimError err;
    assert_int_equal(
        load_fail("loop.lua", "local n = 0\nwhile true do\n  n = n + 1\nend\n", &limits, &err),
        ISSIM_ERR_INVALID);
    assert_contains(err.message, "instruction budget");
    assert_true(strncmp(err.message, "loop.lua:", 9) == 0);
    /* A scene cannot swallow the budget error with pcall and carry on. */
    load_fail("pcall.lua",
              "while true do\n  pcall(function() while true do end end)\nend\nreturn {}", &limits,
              &err);
    assert_contains(err.message, "instruction budget");
    /* Finalisers run with hooks off, out of the budget's reach: refused. */
    load_fail("gc.lua",
              "setmetatable({}, {__gc = function() while true do end end})\n"
              "while true do end",
              &limits, &err);
    assert_contains(err.message, "gc.lua:1: __gc metamethods are not available in scenes");
    /* A looping __close handler, run while the budget error unwinds, is stopped too. */
    load_fail("close.lua",
              "do\n  local x <close> = setmetatable({}, {__close = function()\n"
              "    while true do end end})\n  while true do end\nend",
              &limits, &err);
    assert_contains(err.message, "instruction budget");
    /* setmetatable still works. */
    ThingDb *db = load_ok("mt.lua",
                          "local t = setmetatable({}, {__index = function() return 2 end})\n"
                          "return { things = {{ name = 'b', kind = 'body', mass = t.x }} }",
                          &limits);
    assert_near(thing_real(db, thingdb_find(db, "b"), "mass"), 2, 0);
    thingdb_destroy(db);
}

static void test_memory_limit(void **state) {
    (void)state;
    SceneLimits limits = scene_limits_default();
    limits.max_memory = 8u << 20;
    IssimError err;
    assert_int_equal(load_fail("bomb.lua",
                               "local t = {}\nfor i = 1, 1e9 do\n  t[i] = {i}\nend\nreturn {}",
                               &limits, &err),
                     ISSIM_ERR_NOMEM);
    assert_contains(err.message, "memory limit");
    assert_true(strncmp(err.message, "bomb.lua:", 9) == 0);
    load_fail("rep.lua", "local a = 1\nlocal b = 2\nlocal s = string.rep('x', 1e9)\nreturn {}",
              &limits, &err);
    assert_contains(err.message, "rep.lua:3: scene exceeded its memory limit");
    load_fail("cat.lua", "local s = 'x'\nwhile true do s = s .. s end", &limits, &err);
    assert_contains(err.message, "memory limit");
}

static void test_lua_errors(void **state) {
    (void)state;
    IssimError err;
    assert_int_equal(
        load_fail("syntax.lua", "return {\n  things = {\n    { name = }\n  }\n}", NULL, &err),
        ISSIM_ERR_INVALID);
    assert_contains(err.message, "syntax.lua:3:");
    load_fail("error.lua", "\n\nerror('boom')", NULL, &err);
    assert_string_equal(err.message, "error.lua:3: boom");
    load_fail("error0.lua", "\nerror('bare', 0)", NULL, &err);
    assert_string_equal(err.message, "error0.lua:2: bare");
    load_fail("errtab.lua", "error({})", NULL, &err);
    assert_contains(err.message, "errtab.lua:1: (error object is a table value)");
    load_fail("nil.lua", "local x = 1", NULL, &err);
    assert_contains(err.message, "nil.lua:1: the scene must return a table");
    /* A long path keeps its full name (Lua shortens chunk names to 60 characters). */
    char long_name[200];
    snprintf(long_name, sizeof long_name,
             "/some/very/long/directory/name/that/goes/on/and/on/"
             "and/on/scenes/broken_scene.lua");
    load_fail(long_name, "\nlocal x = nil + 1", NULL, &err);
    char expected[256];
    snprintf(expected, sizeof expected, "%s:2: ", long_name);
    assert_true(strncmp(err.message, expected, strlen(expected)) == 0);
    /* Missing file. */
    ThingDb *db = NULL;
    assert_int_equal(scene_load_file("/nonexistent/scene.lua", NULL, &db, &err), ISSIM_ERR_IO);
    assert_null(db);
    assert_contains(err.message, "/nonexistent/scene.lua");
}

static void test_schema_error_lines(void **state) {
    (void)state;
    IssimError err;
    const char *negative_mass = "return {\n"                                         /* 1 */
                                "  things = {\n"                                     /* 2 */
                                "    { name = \"a\", kind = \"body\", mass = 2 },\n" /* 3 */
                                "    {\n"                                            /* 4 */
                                "      name = \"bar\",\n"                            /* 5 */
                                "      kind = \"body\",\n"                           /* 6 */
                                "      pos = {0, 0, 1},\n"                           /* 7 */
                                "      mass = -1,\n"                                 /* 8 */
                                "    },\n"                                           /* 9 */
                                "  },\n"                                             /* 10 */
                                "}\n";
    assert_int_equal(load_fail("neg.lua", negative_mass, NULL, &err), ISSIM_ERR_RANGE);
    assert_string_equal(
        err.message,
        "neg.lua:8: bar.mass: -1 kg is out of range: must be >= 1e-09 (range [1e-09, 1e+09] kg)");

    /* The key before the name, a comment and a string that look like keys, nested things. */
    const char *nested = "return {\n"                                        /* 1 */
                         "  things = {\n"                                    /* 2 */
                         "    { name = 'link', kind = 'body', mass = 1 },\n" /* 3 */
                         "    { name = 'arm', kind = 'group', things = {\n"  /* 4 */
                         "      -- mass = 5\n"                               /* 5 */
                         "      { kind = 'body', material = 'mass = 1',\n"   /* 6 */
                         "        mass = 0,\n"                               /* 7 */
                         "        name = 'link' },\n"                        /* 8 */
                         "    } },\n"                                        /* 9 */
                         "  },\n"                                            /* 10 */
                         "}\n";
    load_fail("nested.lua", nested, NULL, &err);
    assert_string_equal(err.message, "nested.lua:7: arm.link.mass: 0 kg is out of range: must be "
                                     ">= 1e-09 (range [1e-09, 1e+09] kg)");

    /* Unknown key: named, with the known ones, on its line. */
    load_fail("unknown.lua",
              "return {\n  things = {\n    { name = 'bar', kind = 'body',\n      mas = 1 },\n"
              "  },\n}",
              NULL, &err);
    assert_contains(err.message, "unknown.lua:4: unknown property 'mas' of body 'bar'; known: "
                                 "mass, inertia, pos");

    /* Unknown model, from the contact module's enum. */
    load_fail("model.lua",
              "return {\n  contacts = {\n    { name = 'p', materials = {'a', 'b'},\n"
              "      model = 'magic' },\n  },\n}",
              NULL, &err);
    assert_contains(err.message, "model.lua:4: p.model: unknown choice 'magic'; one of: ");
    assert_contains(err.message, "spring_damper");

    /* Universe and camera keys. */
    load_fail("universe.lua", "return {\n  universe = {\n    dt = 0,\n  },\n}", NULL, &err);
    assert_contains(err.message,
                    "universe.lua:3: universe.dt: 0 s is out of range: must be >= 1e-09");
    load_fail("camera.lua", "return {\n  camera = {\n    fov = 1,\n  },\n}", NULL, &err);
    assert_contains(err.message, "camera.lua:3: universe.camera_fov: 1 deg is out of range");
    load_fail("camkey.lua", "return {\n  camera = {\n    zoom = 1,\n  },\n}", NULL, &err);
    assert_contains(err.message, "camkey.lua:3: unknown camera key 'zoom'");
    load_fail("twice.lua",
              "return {\n  universe = { camera_fov = 40 },\n  camera = { fov = 50 },\n}", NULL,
              &err);
    assert_contains(err.message, "twice.lua:3: camera.fov and universe.camera_fov are both given");

    /* Top level and structure. */
    load_fail("top.lua", "return {\n  name = 'x',\n  thing = {},\n}", NULL, &err);
    assert_contains(err.message, "top.lua:3: unknown top-level key 'thing'; known: name");
    load_fail("kind.lua", "return { things = {\n  { name = 'b',\n    kind = 'bdy' } } }", NULL,
              &err);
    assert_contains(err.message, "kind.lua:3: b: kind must be body, obstacle, user, group or "
                                 "contact, got 'bdy'");
    load_fail("kind3.lua", "return { things = {{ name = 'b', kind = 3 }} }", NULL, &err);
    assert_contains(err.message, "got a number");
    load_fail("nokind.lua", "return { things = {\n  { name = 'b' } } }", NULL, &err);
    assert_contains(err.message, "nokind.lua:2: b needs a kind");
    load_fail("noname.lua", "return {\n  things = {\n  { kind = 'body' } } }", NULL, &err);
    assert_contains(err.message, "noname.lua:2: things[1] needs a name");
    load_fail("dup.lua",
              "return { things = {\n  { name = 'b', kind = 'body' },\n"
              "  { name = 'b', kind = 'user' } } }",
              NULL, &err);
    assert_contains(err.message, "dup.lua:");
    assert_contains(err.message, "duplicate name 'b'");
    load_fail("badname.lua", "return { things = {{ name = 'a b', kind = 'body' }} }", NULL, &err);
    assert_contains(err.message, "invalid thing name 'a b'");
    load_fail("universe_kind.lua", "return { things = {{ name = 'u', kind = 'universe' }} }", NULL,
              &err);
    assert_contains(err.message, "kind must be");

    /* Wrong types. */
    load_fail("type1.lua", "return { things = {{ name = 'b', kind = 'body', mass = true }} }", NULL,
              &err);
    assert_contains(err.message, "b.mass: expected a number, got a boolean");
    load_fail("type2.lua", "return { things = {{ name = 'b', kind = 'body', pos = {1, 2} }} }",
              NULL, &err);
    assert_contains(err.message, "b.pos: expected a vector {x, y, z} (exactly 3 numbers)");
    load_fail("type3.lua",
              "return { things = {{ name = 'b', kind = 'body', vertices = {{1, 2, 'x'}} }} }", NULL,
              &err);
    assert_contains(err.message, "b.vertices: point 1 is not a table of 3 numbers");
    load_fail("type4.lua", "return { things = {{ name = 'b', kind = 'body', material = 5 }} }",
              NULL, &err);
    assert_contains(err.message, "b.material: expected a string, got a number");
    load_fail("type5.lua", "return { things = {{ name = 'b', kind = 'body', pos = 'up' }} }", NULL,
              &err);
    assert_contains(err.message, "b.pos: cannot read 'up'");
    load_fail("type6.lua", "return { things = {{ name = 'b', kind = 'body', 1 }} }", NULL, &err);
    assert_contains(err.message, "unexpected array (integer) key in body 'b'");
    load_fail("type7.lua", "return { things = { bar = { name = 'b', kind = 'body' } } }", NULL,
              &err);
    assert_contains(err.message, "things must be a list");
    load_fail("nan.lua", "return { things = {{ name = 'b', kind = 'body', mass = 0/0 }} }", NULL,
              &err);
    assert_contains(err.message, "not a finite number");
    load_fail("normal.lua",
              "return { things = {{ name = 'f', kind = 'obstacle', normal = {0,0,0} }} }", NULL,
              &err);
    assert_contains(err.message, "f.normal: {0, 0, 0} is a zero vector");
    load_fail("mats.lua", "return { contacts = {{ name = 'p', materials = {'a'} }} }", NULL, &err);
    assert_contains(err.message, "p.materials: expected two material names");
    load_fail("record.lua", "return { record = {'a', 3} }", NULL, &err);
    assert_contains(err.message, "record[2] must be a variable name");
}

/* Every thing of a has a thing at the same path in b with equal properties, and vice versa. */
static void assert_db_equal(const ThingDb *a, const ThingDb *b) {
    assert_int_equal(thingdb_count(a), thingdb_count(b));
    for (int i = 0; i < thingdb_count(a); i++) {
        ThingId ia = thingdb_at(a, i);
        char path[256];
        thing_path(a, ia, path, sizeof path);
        ThingId ib = thingdb_find(b, path);
        if (thing_id_is_null(ib))
            fail_msg("%s is missing after the round trip", path);
        assert_int_equal(thing_kind(a, ia), thing_kind(b, ib));
        assert_int_equal(thing_prop_count(a, ia), thing_prop_count(b, ib));
        for (int p = 0; p < thing_prop_count(a, ia); p++) {
            const PropDef *def = thing_prop_def(a, ia, p);
            int q = thing_prop_find(b, ib, def->name);
            if (q < 0)
                fail_msg("%s.%s is missing after the round trip", path, def->name);
            if (!prop_value_equal(thing_prop_value(a, ia, p), thing_prop_value(b, ib, q))) {
                char va[512], vb[512];
                prop_format(def, thing_prop_value(a, ia, p), true, va, sizeof va);
                prop_format(def, thing_prop_value(b, ib, q), true, vb, sizeof vb);
                fail_msg("%s.%s: %s became %s", path, def->name, va, vb);
            }
        }
    }
}

static void test_round_trip(void **state) {
    (void)state;
    ThingDb *a = load_ok("full.lua", full_scene, NULL);
    IssimError err;
    /* Awkward values: irrational numbers, a rotated orientation, quoting. */
    assert_int_equal(thingdb_set_text(a, "bar.mass", "0.30000000000000004", false, &err), ISSIM_OK);
    assert_int_equal(thingdb_set_text(a, "bar.orient", "0.3 0.1 -0.7 0.2", false, &err), ISSIM_OK);
    assert_int_equal(
        thingdb_set_text(a, "arm.link1.pos", "3.141592653589793 1e-300 -2e5", false, &err),
        ISSIM_OK);
    assert_int_equal(thingdb_set_text(a, "bar.material", "st\"e\\el\nx", false, &err), ISSIM_OK);
    assert_int_equal(thingdb_set_text(a, "bar.vertices", "{}", false, &err), ISSIM_OK);
    char *text = scene_save_string(a);
    assert_non_null(text);
    assert_contains(text, "-- issim scene generated by issim " ISSIM_VERSION);
    assert_contains(text, "mass = 0.30000000000000004, -- kg\n");
    assert_contains(text, "gravity = {0, 0, -1.62}, -- m/s^2\n");
    assert_contains(text, "planar = true,\n");
    assert_contains(text, "name = \"full\",\n");
    assert_contains(text, "materials = {\"steel\", \"floor\"},\n");
    assert_contains(text, "stiffness = 200000, -- N/m\n");
    ThingDb *b = load_ok("saved.lua", text, NULL);
    assert_db_equal(a, b);
    assert_db_equal(b, a);
    /* Saving again gives the same text. */
    char *again = scene_save_string(b);
    assert_string_equal(text, again);
    free(again);
    free(text);
    thingdb_destroy(b);

    /* Through a file. */
    const char *path = test_temp_path(".lua");
    assert_int_equal(scene_save_file(a, path, &err), ISSIM_OK);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_not_equal(access(tmp, F_OK), 0);
    assert_int_equal(scene_load_file(path, NULL, &b, &err), ISSIM_OK);
    assert_db_equal(a, b);
    thingdb_destroy(b);
    unlink(path);
    thingdb_destroy(a);
}

static void test_round_trip_built_db(void **state) {
    (void)state;
    /* A database built through the API, with a contact pair inside a group. */
    IssimError err;
    ThingDb *a = thingdb_create();
    thingdb_add(a, "universe", THING_UNIVERSE, thing_id_null(), &err);
    ThingId g = thingdb_add(a, "g", THING_GROUP, thing_id_null(), &err);
    ThingId pair = thingdb_add(a, "inner", THING_CONTACT_PAIR, g, &err);
    assert_false(thing_id_is_null(pair));
    assert_int_equal(contact_pair_add_props(a, pair, &err), ISSIM_OK);
    ThingId body = thingdb_add(a, "b", THING_RIGID_BODY, g, &err);
    assert_false(thing_id_is_null(body));
    char *text = scene_save_string(a);
    assert_contains(text, "kind = \"contact\"");
    ThingDb *b = load_ok("built.lua", text, NULL);
    assert_db_equal(a, b);
    free(text);
    thingdb_destroy(a);
    thingdb_destroy(b);
}

static void test_save_file_error(void **state) {
    (void)state;
    ThingDb *db = load_ok("full.lua", full_scene, NULL);
    IssimError err;
    const char *path = "/nonexistent-issim-dir/out.lua";
    assert_int_equal(scene_save_file(db, path, &err), ISSIM_ERR_IO);
    assert_contains(err.message, path);
    assert_contains(err.message, "No such file or directory");
    assert_int_not_equal(access(path, F_OK), 0);
    /* An existing file is replaced whole. */
    const char *existing = test_temp_path(".lua");
    FILE *f = fopen(existing, "w");
    assert_non_null(f);
    fputs("old", f);
    fclose(f);
    assert_int_equal(scene_save_file(db, existing, &err), ISSIM_OK);
    ThingDb *back = NULL;
    assert_int_equal(scene_load_file(existing, NULL, &back, &err), ISSIM_OK);
    thingdb_destroy(back);
    unlink(existing);
    thingdb_destroy(db);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_full_scene),
        cmocka_unit_test(test_minimal_scene_has_universe),
        cmocka_unit_test(test_repository_scenes_load),
        cmocka_unit_test(test_sandbox),
        cmocka_unit_test(test_instruction_budget),
        cmocka_unit_test(test_memory_limit),
        cmocka_unit_test(test_lua_errors),
        cmocka_unit_test(test_schema_error_lines),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_round_trip_built_db),
        cmocka_unit_test(test_save_file_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
