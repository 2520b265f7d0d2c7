/* scenes/rattleback.lua without friction (issue 28 item 7a): the spin start of 002 App. B.1
 * moves the centre of mass at about 9 cm/s, and without friction nothing slows it (no horizontal
 * force acts on the top). On App. B.1's 3 m floor the contact ran off the floor's edge at about
 * 17.5 s and the top fell; the scene's floor is now large enough for the time the scene is meant
 * to run (its header). This test runs the frictionless case past the old exit (it fails on the old
 * scene) and checks that the contact stays reduced on the floor and the centre inside the
 * floor's extent; since the horizontal velocity is constant (checked), it then extrapolates the
 * drift to the scene's stated run time and checks that the top would still be on the floor. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_resolver.h"
#include "issim/io.h"
#include "issim/sim.h"

/* The time scenes/rattleback.lua says it is meant to run (its header). */
#define SCENE_RUN_TIME 150.0
/* Simulated here: past the 17.5 s at which the old 3 m floor was left. */
#define RUN_TIME 25.0
/* The contact lies within the cap's half length (0.9 m) of the centre of mass. */
#define CAP_HALF_LENGTH 0.9

typedef struct Extent {
    double min_x, max_x, min_y, max_y;
} Extent;

/* The frictionless rattleback scene's things, and the floor's extent in the world (its control
 * points, scaled and offset; the floor obstacle sits at the origin, unrotated). */
static ThingDb *frictionless_scene(Extent *floor) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_file(test_source_path("scenes/rattleback.lua"), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    const char *sets[][2] = {{"rattleback_floor.friction_static", "0"},
                             {"rattleback_floor.friction_kinetic", "0"}};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (thingdb_set_text(db, sets[i][0], sets[i][1], false, &err) != ISSIM_OK)
            fail_msg("%s: %s", sets[i][0], err.message);
    ThingId id = thingdb_find(db, "floor");
    assert_false(thing_id_is_null(id));
    const PropValue *points = thing_get(db, id, "surface_points");
    assert_int_equal(points->point_count, 16);
    Vec3 scale = thing_vec3(db, id, "surface_scale"), offset = thing_vec3(db, id, "surface_offset");
    Vec3 pos = thing_vec3(db, id, "pos");
    assert_true(fabs(fabs(thing_quat(db, id, "orient").w) - 1.0) < 1e-12); /* unrotated */
    *floor = (Extent){1e30, -1e30, 1e30, -1e30};
    for (int i = 0; i < points->point_count; i++) {
        double x = pos.x + offset.x + scale.x * points->points[i].x;
        double y = pos.y + offset.y + scale.y * points->points[i].y;
        floor->min_x = fmin(floor->min_x, x);
        floor->max_x = fmax(floor->max_x, x);
        floor->min_y = fmin(floor->min_y, y);
        floor->max_y = fmax(floor->max_y, y);
    }
    return db;
}

/* How far inside the extent (x, y) lies (negative: outside). */
static double inside_by(const Extent *e, double x, double y) {
    return fmin(fmin(x - e->min_x, e->max_x - x), fmin(y - e->min_y, e->max_y - y));
}

static void test_frictionless_rattleback_stays_on_its_floor(void **state) {
    (void)state;
    Extent floor;
    ThingDb *db = frictionless_scene(&floor);
    print_message("floor: x %.2f .. %.2f m, y %.2f .. %.2f m\n", floor.min_x, floor.max_x,
                  floor.min_y, floor.max_y);
    EngineOptions o = engine_options_default();
    o.asset_dir = test_source_path("scenes");
    IssimError err = {0};
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("%s", err.message);
    EngineBodyId body = engine_body_id(e, 0);
    EngineBodyState start = engine_body_state(e, body);
    double energy_start = engine_energy(e).total;
    double least_inside = 1e30, worst_contact_z = 0.0;
    int pairs_min = 99;
    for (int i = 1; i <= (int)lround(RUN_TIME / 0.1); i++) {
        if (engine_advance(e, 0.1 * i, &err) != ISSIM_OK)
            fail_msg("%s", err.message);
        int pairs = engine_reduced_pair_count(e);
        pairs_min = pairs < pairs_min ? pairs : pairs_min;
        EngineBodyState s = engine_body_state(e, body);
        least_inside = fmin(least_inside, inside_by(&floor, s.pos.x, s.pos.y));
        ContactReport report;
        if (engine_smooth_contact_reports(e, &report, 1) == 1) {
            least_inside = fmin(least_inside, inside_by(&floor, report.point.x, report.point.y));
            worst_contact_z = fmax(worst_contact_z, fabs(report.point.z));
        }
    }
    EngineBodyState end = engine_body_state(e, body);
    double energy_end = engine_energy(e).total;
    double speed = hypot(end.vel.x, end.vel.y);
    /* no horizontal force without friction: the centre of mass moves on a straight line at its
     * start velocity, so where it will be at the scene's run time is known now */
    double dvx = end.vel.x - start.vel.x, dvy = end.vel.y - start.vel.y;
    double at_run_time_x = start.pos.x + start.vel.x * SCENE_RUN_TIME;
    double at_run_time_y = start.pos.y + start.vel.y * SCENE_RUN_TIME;
    double inside_at_run_time = inside_by(&floor, at_run_time_x, at_run_time_y);
    print_message("frictionless, %.0f s: reduced pairs >= %d, centre and contact at least %.3f m "
                  "inside the floor, contact z within %.1e m, horizontal speed %.6f m/s (changed "
                  "by %.1e), energy %.9f -> %.9f J; at %.0f s the centre would be at (%.2f, %.2f) "
                  "m, %.2f m inside\n",
                  RUN_TIME, pairs_min, least_inside, worst_contact_z, speed, hypot(dvx, dvy),
                  energy_start, energy_end, SCENE_RUN_TIME, at_run_time_x, at_run_time_y,
                  inside_at_run_time);
    assert_true(speed > 0.05); /* it does drift: the spin start's 9 cm/s */
    assert_int_equal(pairs_min, 1);
    assert_true(least_inside > 0.0);
    assert_true(worst_contact_z < 1e-9);
    assert_true(hypot(dvx, dvy) < 1e-9);
    assert_true(fabs(energy_end - energy_start) < 1e-9 * fabs(energy_start));
    assert_true(inside_at_run_time > CAP_HALF_LENGTH);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frictionless_rattleback_stays_on_its_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
