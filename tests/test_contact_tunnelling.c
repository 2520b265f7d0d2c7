/* No tunnelling (issue 28): a sphere, a capsule and a box dropped or thrown at 10 m/s, spinning,
 * onto a plate mesh 1 mm thick (assets/thin_plate.obj, top face at z = 0) never pass through it,
 * under the force law (RK4 2e-5 s, k 1e8 N/m: the impact itself is 0.2 mm deep) and under
 * complementarity at 1 ms, where a step carries the body 10 mm, ten times the plate.
 *
 * The measure is the body's lowest point from its pose (not a contact depth): under the force
 * law it stays above the plate's bottom face with room to spare (never below -0.5 mm); under
 * complementarity every step ends with it above the top face within 10 um (V12: distances >= 0
 * after every step, the landing step included). Every body ends above the plate.
 * Without speculative contacts (the collision margin grown by each body's reach ahead, the
 * complementarity rows taken within what the bodies close in the step) the box went through
 * the plate under complementarity (z = -1.0 m after 0.1 s); the capsule, found 10 mm deep by a
 * force law of 1e8 N/m at 1 ms, was thrown at 9,000 m/s. */
#include <math.h>
#include <stdio.h>

#include "issim/engine.h"
#include "testutil.h"

enum { SPHERE, CAPSULE, BOX, SHAPES };

static const char *const shape_names[SHAPES] = {"sphere", "capsule", "box"};
static const char *const shape_props[SHAPES] = {
    "shape = 'sphere', radius = 0.01", "shape = 'capsule', radius = 0.008, half_length = 0.015",
    "shape = 'box', half_extents = {0.01, 0.012, 0.008}"};

/* Height of the body's lowest point. */
static double lowest_point(int shape, const EngineBodyState *s) {
    Vec3 ex = quat_rotate(s->orient, vec3(1, 0, 0)), ey = quat_rotate(s->orient, vec3(0, 1, 0));
    Vec3 ez = quat_rotate(s->orient, vec3(0, 0, 1));
    switch (shape) {
    case SPHERE:
        return s->pos.z - 0.01;
    case CAPSULE:
        return s->pos.z - 0.015 * fabs(ez.z) - 0.008;
    default:
        return s->pos.z - 0.01 * fabs(ex.z) - 0.012 * fabs(ey.z) - 0.008 * fabs(ez.z);
    }
}

/* The lowest the body's lowest point went over 0.1 s (every step), and where it ended, while
 * the body was over the plate. */
static double throw_body(int shape, bool complementarity, bool oblique, double *end) {
    char text[2048];
    snprintf(text, sizeof text,
             "return { name = 'tunnel', universe = { gravity = {0, 0, -9.81}, integrator = "
             "'rk4', dt = %g },\n things = {\n"
             "{ name = 'b', kind = 'body', %s, mass = 0.05, inertia = {1e-5, 1e-5, 1e-5},\n"
             "  pos = {%s, 0, 0.05}, vel = {%s}, angvel = {3, -5, 7}, material = 'steel' },\n"
             "{ name = 'plate', kind = 'obstacle', shape = 'mesh', mesh_file = "
             "'assets/thin_plate.obj', material = 'steel' } },\n"
             "contacts = { { name = 'bp', materials = {'steel', 'steel'}, model = "
             "'spring_damper', stiffness = 1e8, restitution = 0.3, resolver = '%s' } } }\n",
             complementarity ? 1e-3 : 2e-5, shape_props[shape], oblique ? "-0.08" : "0",
             oblique ? "7.07, 1, -7.07" : "0, 0, -10",
             complementarity ? "complementarity" : "force_law");
    EngineOptions o = engine_options_default();
    o.asset_dir = test_source_path("");
    Engine *e = test_engine_from_source_with("tunnel.lua", text, &o);
    EngineBodyId body = engine_body_id(e, 0);
    IssimError err = {0};
    double lowest = INFINITY;
    *end = INFINITY;
    while (engine_time(e) < 0.1 - 1e-9) {
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
        EngineBodyState s = engine_body_state(e, body);
        if (fabs(s.pos.x) > 0.08 || fabs(s.pos.y) > 0.08)
            break; /* a frictionless thrown body slides off the plate's edge */
        lowest = fmin(lowest, lowest_point(shape, &s));
        *end = lowest_point(shape, &s);
    }
    engine_destroy(e);
    return lowest;
}

static void test_nothing_passes_a_thin_plate(void **state) {
    (void)state;
    for (int resolver = 0; resolver < 2; resolver++)
        for (int shape = 0; shape < SHAPES; shape++)
            for (int oblique = 0; oblique < 2; oblique++) {
                double end, lowest = throw_body(shape, resolver, oblique, &end);
                printf("  %s, %s, %s at 10 m/s: lowest point %.4f mm, at the end over the plate "
                       "%.4f mm\n",
                       shape_names[shape], resolver ? "complementarity 1 ms" : "force law",
                       oblique ? "thrown at 45 degrees" : "dropped", 1e3 * lowest, 1e3 * end);
                assert_true(lowest > (resolver ? -1e-5 : -5e-4));
                assert_true(end > -1e-4); /* above the plate (rebounding or resting on it) */
            }
}

/* A 5 mm ball shot down at 10 m/s onto a box of the 32-body cut of scenes/pile.lua (b22, top
 * layer, falling with the pour), resolved by complementarity at the scene's 5e-4 s: 5 mm a step, a
 * sixth of the box's height. The ball stops on the box (complementarity contact is inelastic):
 * its centre never comes nearer the box's than the box's half height, and it ends moving with
 * the box: it does not pass through. A guard more than a test of the fix: at 5 mm a step the
 * ball could not cross a 30 mm box without the speculative rows either (measured); the thin
 * plate above is what fails without them. */
static void test_a_fast_ball_stops_on_a_pile_box(void **state) {
    (void)state;
    const char *extra = "resolver = 'complementarity'\n"
                        "things[#things + 1] = { name = 'ball', kind = 'body', shape = 'sphere',\n"
                        "  radius = 0.005, mass = 0.004, inertia = {1e-8, 1e-8, 1e-8},\n"
                        "  pos = {0.045 + 0.004 * math.sin(22), -0.045 + 0.004 * math.cos(22),\n"
                        "         0.35}, vel = {0, 0, -10}, material = 'pile' }\n";
    Engine *e = test_pile_engine(32, 5e-4, extra);
    EngineBodyId ball = engine_body_id(e, engine_body_count(e) - 1), box = engine_body_id(e, 22);
    IssimError err = {0};
    double closest = INFINITY; /* the ball's centre above the box's, at its lowest */
    while (engine_time(e) < 0.1 - 1e-9) {
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
        EngineBodyState b = engine_body_state(e, ball), x = engine_body_state(e, box);
        closest = fmin(closest, b.pos.z - x.pos.z);
    }
    EngineBodyState b = engine_body_state(e, ball), x = engine_body_state(e, box);
    printf("  ball onto a falling box of the pile: its centre at least %.2f mm above the box's "
           "(half height 15 mm plus the ball's 5); at 0.1 s %.2f mm above, closing at %.3f m/s\n",
           1e3 * closest, 1e3 * (b.pos.z - x.pos.z), x.vel.z - b.vel.z);
    /* Stopped on the box: never nearer its centre than its half height plus the ball's radius
     * allow (a tilted box's corner reaches up to its half diagonal, 35 mm), and moving with it. */
    assert_true(closest > 0.015);
    assert_true(fabs(b.vel.z - x.vel.z) < 0.5);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_passes_a_thin_plate),
        cmocka_unit_test(test_a_fast_ball_stops_on_a_pile_box),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
