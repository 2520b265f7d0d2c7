/* The engine with the collision manager in lock-step (synchronous) mode: bodies with shapes
 * against planes, meshes and each other, through the same session code path the CLI uses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/sim.h"
#include "testutil.h"

static Sim *load(const char *scene, const char *const *sets, int set_count, double until) {
    SimOptions o = sim_options_default();
    o.until = until;
    o.quiet = true;
    o.lockstep = true;
    o.sets = sets;
    o.set_count = set_count;
    IssimError err = {0};
    Sim *sim = sim_create(test_source_path(scene), &o, &err);
    if (!sim)
        fail_msg("%s", err.message);
    return sim;
}

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
    Sim *sim = load("scenes/box_on_plane.lua", NULL, 0, 1.5);
    SimSummary *s = calloc(1, sizeof *s);
    IssimError err = {0};
    assert_int_equal(sim_run_headless(sim, s, &err), ISSIM_OK);
    Engine *e = sim_engine(sim);
    assert_int_equal(engine_active_contact_count(e), 4);
    assert_near(var(sim, "box.pos.z"), 0.05 - 9.81 / 4e5, 1e-6);
    assert_near(var(sim, "box.vel.z"), 0.0, 1e-5);
    assert_near(var(sim, "box.orient.w"), 1.0, 1e-9);
    assert_true(s->impact_count >= 1);
    assert_int_equal(s->impacts[0].contacts, 4);
    free(s);
    sim_destroy(sim);
}

/* The bolt lands on the chamfer off-centre and slides into the hole (001's set-up). */
static void test_bolt_slides_into_hole(void **state) {
    Sim *sim = load("scenes/bolt_and_hole.lua", NULL, 0, 0.6);
    SimSummary *s = calloc(1, sizeof *s);
    IssimError err = {0};
    assert_int_equal(sim_run_headless(sim, s, &err), ISSIM_OK);
    double x = var(sim, "bolt.pos.x"), z = var(sim, "bolt.pos.z");
    printf("bolt at x = %.4f m, z = %.4f m after 0.6 s\n", x, z);
    /* It went down the 25 mm deep, 11 mm hole: its centre (30 mm above its lower tip) is less
     * than 10 mm above the plate's top face, which a 10 mm shaft can only reach inside the
     * hole, and the centre is over the hole. */
    assert_true(z < 0.01);
    assert_true(z > 0.0);
    assert_true(fabs(x) < 0.011);
    free(s);
    sim_destroy(sim);
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
    const char *path = test_temp_path(".lua");
    FILE *f = fopen(path, "w");
    fputs(scene, f);
    fclose(f);
    SimOptions o = sim_options_default();
    o.until = 0.5;
    o.quiet = true;
    IssimError err = {0};
    Sim *sim = sim_create(path, &o, &err);
    if (!sim)
        fail_msg("%s", err.message);
    SimSummary *s = calloc(1, sizeof *s);
    assert_int_equal(sim_run_headless(sim, s, &err), ISSIM_OK);
    double va = var(sim, "a.vel.x"), vb = var(sim, "b.vel.x");
    /* p = 1 kg m/s before; after: 1 va + 3 vb */
    assert_near(1.0 * va + 3.0 * vb, 1.0, 1e-9);
    /* separation speed / approach speed = r */
    assert_near((vb - va) / 1.0, 0.6, 2e-3);
    free(s);
    sim_destroy(sim);
    remove(path);
}

/* A small pile settles: no contact ever adds energy (total mechanical energy, springs included,
 * never rises over the run), the motion dies down, and nothing leaves the box. Frictionless
 * (Coulomb friction comes with the contact-model family), so bodies may still slide slowly. */
static void test_small_pile_settles(void **state) {
    const char *src = test_source_path("scenes/pile.lua");
    FILE *in = fopen(src, "r");
    assert_non_null(in);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, in);
    text[n] = '\0';
    fclose(in);
    /* The full pile (240 bodies) is a demo; the test takes its first 24 by editing `count`,
     * and points the copy's hull file (it lives in /tmp) at the source tree. */
    char *count = strstr(text, "local count = 240");
    assert_non_null(count);
    memcpy(count, "local count =  24", 17);
    char *hull = strstr(text, "\"assets/octahedron.obj\"");
    assert_non_null(hull);
    static char patched[1 << 16];
    snprintf(patched, sizeof patched, "%.*s\"%s\"%s", (int)(hull - text), text,
             test_source_path("assets/octahedron.obj"), hull + strlen("\"assets/octahedron.obj\""));
    const char *path = test_temp_path(".lua");
    FILE *out = fopen(path, "w");
    fputs(patched, out);
    fclose(out);
    const char *csv = test_temp_path(".csv");
    SimOptions o = sim_options_default();
    o.until = 1.5;
    o.quiet = true;
    o.record_path = csv;
    o.vars = "universe.energy.kinetic,universe.energy.total";
    o.every = 50;
    IssimError err = {0};
    Sim *sim = sim_create(path, &o, &err);
    if (!sim)
        fail_msg("%s", err.message);
    SimSummary *s = calloc(1, sizeof *s);
    assert_int_equal(sim_run_headless(sim, s, &err), ISSIM_OK);
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
    free(s);
    sim_destroy(sim);
    remove(path);
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
