/* Restitution per contact patch (004 4.8 eqs. 4.92-4.93; engine_manifold_energy.c): a pair's
 * restitution is the bounce of the body, whether it lands on one point or on a face. The cube
 * of scenes/box_on_plane.lua, a spring/damper pair without clamping (the closed form of V1),
 * lands flat on four points and a sphere of the same mass lands on one point;
 * each rebounds at the pair's r within 1e-2 (before the patch damping the flat cube bounced at
 * 0.229 for r = 0.5). Gravity off, so the rebound is the impact's alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "issim/sim.h"
#include "testutil.h"

static double bounce(const char *restitution, const char *orient, const char *shape, int *points) {
    char set_r[64], set_orient[80];
    snprintf(set_r, sizeof set_r, "box_floor.restitution=%s", restitution);
    snprintf(set_orient, sizeof set_orient, "box.orient=%s", orient);
    const char *sets[] = {set_r,
                          set_orient,
                          "universe.gravity=0 0 0",
                          "box.vel=0 0 -1",
                          "box.pos=0 0 0.0875",
                          "box.radius=0.05",
                          shape};
    TestRunOptions o = {.until = 0.1, .sets = sets, .set_count = 7};
    SimSummary *s = test_run_summary("scenes/box_on_plane.lua", &o);
    assert_true(s->impact_count >= 1);
    double r = s->impacts[0].restitution;
    *points = s->impacts[0].contacts;
    free(s);
    return r;
}

static void check(const char *what, const char *orient, const char *shape, int min_points,
                  int max_points) {
    const char *rs[] = {"0.3", "0.5", "0.8"};
    for (int i = 0; i < 3; i++) {
        int points = 0;
        double r = bounce(rs[i], orient, shape, &points);
        printf("%s, r = %s: rebound %.4f on %d points\n", what, rs[i], r, points);
        assert_true(points >= min_points && points <= max_points);
        assert_near(r, atof(rs[i]), 1e-2);
    }
}

static void test_flat_box_bounces_at_the_pairs_restitution(void **state) {
    (void)state;
    check("flat cube", "1 0 0 0", "box.shape=box", 4, 4);
}

static void test_sphere_bounces_at_the_pairs_restitution(void **state) {
    (void)state;
    check("sphere", "1 0 0 0", "box.shape=sphere", 1, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_box_bounces_at_the_pairs_restitution),
        cmocka_unit_test(test_sphere_bounces_at_the_pairs_restitution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
