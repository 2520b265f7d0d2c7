/* The engine with the collision manager in lock-step (synchronous) mode: bodies with shapes
 * against planes, meshes and each other, through the same session code path the CLI uses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "issim/sim.h"
#include "testutil.h"

static double var(Sim *sim, const char *name) {
    Engine *e = sim_engine(sim);
    double *values = calloc((size_t)engine_var_count(e), sizeof(double));
    engine_write_vars(e, values);
    int i = engine_var_find(e, name);
    if (i < 0)
        fail_msg("no variable %s", name);
    double v = values[i];
    free(values);
    return v;
}

/* A box dropped flat comes to rest on four contacts, each spring carrying a quarter of m g. */
static void test_box_rests_on_four_contacts(void **state) {
    TestRun *run = test_run_scene("scenes/box_on_plane.lua",
                                  &(TestRunOptions){.until = 1.5, .lockstep = true});
    Sim *sim = run->sim;
    const SimSummary *s = &run->summary;
    Engine *e = sim_engine(sim);
    assert_int_equal(engine_active_contact_count(e), 4);
    assert_near(var(sim, "box.pos.z"), 0.05 - 9.81 / 4e5, 1e-6);
    assert_near(var(sim, "box.vel.z"), 0.0, 1e-5);
    assert_near(var(sim, "box.orient.w"), 1.0, 1e-9);
    assert_true(s->impact_count >= 1);
    assert_int_equal(s->impacts[0].contacts, 4);
    test_run_free(run);
}

/* The bolt lands on the chamfer off-centre and slides into the hole (001's set-up). */
static void test_bolt_slides_into_hole(void **state) {
    TestRun *run = test_run_scene("scenes/bolt_and_hole.lua",
                                  &(TestRunOptions){.until = 0.6, .lockstep = true});
    Sim *sim = run->sim;
    double x = var(sim, "bolt.pos.x"), z = var(sim, "bolt.pos.z");
    printf("bolt at x = %.4f m, z = %.4f m after 0.6 s\n", x, z);
    /* It went down the 25 mm deep, 11 mm hole: its centre (30 mm above its lower tip) is less
     * than 10 mm above the plate's top face, which a 10 mm shaft can only reach inside the
     * hole, and the centre is over the hole. */
    assert_true(z < 0.01);
    assert_true(z > 0.0);
    assert_true(fabs(x) < 0.011);
    test_run_free(run);
}

/* Two spheres colliding head-on without gravity: momentum is conserved and the restitution of
 * the pair is the configured one (damping derived with the reduced mass). */
static void test_sphere_sphere_momentum_and_restitution(void **state) {
    const char *scene = "return { universe = { gravity = {0, 0, 0}, dt = 1e-3, rtol = 1e-10, "
                        "atol = 1e-12 }, things = {"
                        "{ name = 'a', kind = 'body', shape = 'sphere', radius = 0.05, mass = 1, "
                        "inertia = {1e-3, 1e-3, 1e-3}, pos = {-0.2, 0, 0}, vel = {1, 0, 0}, "
                        "material = 'm' },"
                        "{ name = 'b', kind = 'body', shape = 'sphere', radius = 0.05, mass = 3, "
                        "inertia = {3e-3, 3e-3, 3e-3}, pos = {0.2, 0, 0}, material = 'm' } },"
                        "contacts = { { name = 'mm', materials = {'m', 'm'}, "
                        "model = 'spring_damper', stiffness = 1e6, restitution = 0.6 } } }";
    TestRun *run = test_run_source("two_spheres.lua", scene, &(TestRunOptions){.until = 0.5});
    Sim *sim = run->sim;
    double va = var(sim, "a.vel.x"), vb = var(sim, "b.vel.x");
    /* p = 1 kg m/s before; after: 1 va + 3 vb */
    assert_near(1.0 * va + 3.0 * vb, 1.0, 1e-9);
    /* separation speed / approach speed = r */
    assert_near((vb - va) / 1.0, 0.6, 2e-3);
    test_run_free(run);
}

/* The first 24 bodies of scenes/pile.lua (its full 240 are a demo): one layer of its 6 x 6
 * grid, the same shapes, materials, contact pairs and integrator. */
static const char pile_of_24[] =
    "local r, density = 0.025, 1000\n"
    "local things = {\n"
    "  { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1}, offset = 0,\n"
    "    material = 'wall' },\n"
    "  { name = 'wall_xp', kind = 'obstacle', shape = 'plane', normal = {-1, 0, 0},\n"
    "    offset = -0.2, material = 'wall' },\n"
    "  { name = 'wall_xn', kind = 'obstacle', shape = 'plane', normal = {1, 0, 0},\n"
    "    offset = -0.2, material = 'wall' },\n"
    "  { name = 'wall_yp', kind = 'obstacle', shape = 'plane', normal = {0, -1, 0},\n"
    "    offset = -0.2, material = 'wall' },\n"
    "  { name = 'wall_yn', kind = 'obstacle', shape = 'plane', normal = {0, 1, 0},\n"
    "    offset = -0.2, material = 'wall' },\n"
    "}\n"
    "for n = 0, 23 do\n"
    "  local x = -0.15 + 0.06 * (n % 6) + 0.004 * math.sin(n)\n"
    "  local y = -0.15 + 0.06 * (n // 6) + 0.004 * math.cos(n)\n"
    "  local body = { name = 'b' .. n, kind = 'body', pos = {x, y, 0.05}, material = 'pile',\n"
    "                 orient = {math.cos(n), math.sin(n) * 0.6, math.sin(n) * 0.8, 0} }\n"
    "  local kind = n % 4\n"
    "  if kind == 0 then\n"
    "    body.shape, body.radius = 'sphere', r\n"
    "    local m = density * 4 / 3 * math.pi * r ^ 3\n"
    "    body.mass, body.inertia = m, {0.4 * m * r ^ 2, 0.4 * m * r ^ 2, 0.4 * m * r ^ 2}\n"
    "  elseif kind == 1 then\n"
    "    body.shape, body.radius, body.half_length = 'capsule', 0.6 * r, r\n"
    "    local m = density * (math.pi * (0.6 * r) ^ 2 * 2 * r + 4 / 3 * math.pi * (0.6 * r) ^ 3)\n"
    "    local ia = 0.5 * m * (0.6 * r) ^ 2\n"
    "    local it = m * ((2 * r) ^ 2 / 12 + (0.6 * r) ^ 2 / 4) + m * (r / 2) ^ 2\n"
    "    body.mass, body.inertia = m, {it, it, ia}\n"
    "  elseif kind == 2 then\n"
    "    body.shape, body.half_extents = 'box', {r, 0.8 * r, 0.6 * r}\n"
    "    local m = density * 8 * r * 0.8 * r * 0.6 * r\n"
    "    local a, b, c = 2 * r, 1.6 * r, 1.2 * r\n"
    "    body.mass = m\n"
    "    body.inertia = {m * (b * b + c * c) / 12, m * (a * a + c * c) / 12,\n"
    "                    m * (a * a + b * b) / 12}\n"
    "  else\n"
    "    body.shape, body.hull_file = 'hull', 'assets/octahedron.obj'\n"
    "    local m = density * 4 / 3 * 0.05 ^ 3\n"
    "    local i = m * 0.05 ^ 2 / 5\n"
    "    body.mass, body.inertia = m, {i, i, i}\n"
    "  end\n"
    "  things[#things + 1] = body\n"
    "end\n"
    "return {\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'rk4', dt = 2e-4, history = 2 },\n"
    "  things = things,\n"
    "  contacts = {\n"
    "    { name = 'pile_pile', materials = {'pile', 'pile'}, model = 'spring_damper',\n"
    "      stiffness = 1e4, restitution = 0.3, clamp_attraction = true },\n"
    "    { name = 'pile_wall', materials = {'pile', 'wall'}, model = 'spring_damper',\n"
    "      stiffness = 1e4, restitution = 0.3, clamp_attraction = true },\n"
    "  },\n"
    "}\n";

/* A small pile settles: no contact ever adds energy (total mechanical energy, springs included,
 * never rises over the run), the motion dies down, and nothing leaves the box. Frictionless
 * (Coulomb friction comes with the contact-model family), so bodies may still slide slowly. */
static void test_small_pile_settles(void **state) {
    const char *csv = test_temp_path(".csv");
    TestRunOptions o = {.until = 1.5, .record_path = csv, .every = 50};
    o.vars = "universe.energy.kinetic,universe.energy.total";
    TestRun *run = test_run_source("pile_of_24.lua", pile_of_24, &o);
    Sim *sim = run->sim;
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char line[256];
    double t, kinetic = 0, total, previous = INFINITY, peak_kinetic = 0, rise = 0;
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lf,%lf,%lf", &t, &kinetic, &total) != 3)
            continue;
        if (total - previous > rise)
            rise = total - previous;
        previous = total;
        peak_kinetic = fmax(peak_kinetic, kinetic);
        rows++;
    }
    fclose(f);
    Engine *e = sim_engine(sim);
    printf("pile of 24: peak kinetic %.3g J, %.3g J at t = 1.5 s, largest energy rise %.2g J, "
           "%d active contacts\n",
           peak_kinetic, kinetic, rise, engine_active_contact_count(e));
    assert_true(rows > 100);
    assert_true(rise < 1e-4);                   /* passive contacts never add energy */
    assert_true(kinetic < 0.05 * peak_kinetic); /* the motion dies down */
    for (int b = 0; b < engine_body_count(e); b++) {
        EngineBodyState st = engine_body_state(e, engine_body_id(e, b));
        assert_true(st.pos.z > 0.0 && st.pos.z < 0.5);
        assert_true(fabs(st.pos.x) < 0.2 && fabs(st.pos.y) < 0.2);
    }
    test_run_free(run);
    remove(csv);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_rests_on_four_contacts),
        cmocka_unit_test(test_bolt_slides_into_hole),
        cmocka_unit_test(test_sphere_sphere_momentum_and_restitution),
        cmocka_unit_test(test_small_pile_settles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
