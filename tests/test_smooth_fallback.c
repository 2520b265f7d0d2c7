/* Smooth contact handing over to the penalty path (issue 16, "bad input"): a smooth body dropped
 * onto a smooth floor enters its reduced pair from the collision manager's contact; a contact
 * that runs off the floor's open edge leaves the pair with a message naming the surface, patch
 * and edge, and the body carries on (and falls) on the penalty path; a contact point off both
 * surfaces is refused at entry naming the surface. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_resolver.h"
#include "issim/io.h"
#include "issim/smooth_contact.h"
#include "issim/surface.h"

/* The rattleback scene without its start in contact, with the overrides applied. */
static Engine *rattleback_with(const char *const *sets, int count) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_file(test_source_path("scenes/rattleback.lua"), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    const char *base[] = {"rattleback_floor.start_coords=", "rattleback_floor.start_rates="};
    for (int i = 0; i < 2 + count; i++) {
        const char *set = i < 2 ? base[i] : sets[i - 2];
        const char *eq = strchr(set, '=');
        char path[256];
        snprintf(path, sizeof path, "%.*s", (int)(eq - set), set);
        if (thingdb_set_text(db, path, eq + 1, false, &err) != ISSIM_OK)
            fail_msg("%s: %s", set, err.message);
    }
    EngineOptions o = engine_options_default();
    o.asset_dir = test_source_path("scenes");
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("%s", err.message);
    return e;
}

typedef struct Track {
    double entered_at, left_at, z_end, x_end;
    int reduced_end;
} Track;

static Track run(Engine *e, double until) {
    Track tr = {.entered_at = -1, .left_at = -1};
    EngineBodyId body = engine_body_id(e, 0);
    IssimError err = {0};
    int was = engine_reduced_pair_count(e);
    for (double t = 1e-3; t <= until + 1e-9; t += 1e-3) {
        if (engine_advance(e, t, &err) != ISSIM_OK)
            fail_msg("t = %g: %s", t, err.message);
        int now = engine_reduced_pair_count(e);
        if (now > was && tr.entered_at < 0)
            tr.entered_at = t;
        if (now < was && tr.left_at < 0)
            tr.left_at = t;
        was = now;
        EngineBodyState s = engine_body_state(e, body);
        assert_true(isfinite(s.pos.x) && isfinite(s.pos.z) && isfinite(s.angvel.z));
    }
    EngineBodyState s = engine_body_state(e, body);
    tr.z_end = s.pos.z;
    tr.x_end = s.pos.x;
    tr.reduced_end = engine_reduced_pair_count(e);
    return tr;
}

static void test_dropped_body_enters_the_reduced_pair(void **state) {
    (void)state;
    const char *sets[] = {"rattleback.pos=0 0 0.106", "rattleback.orient=0 1 0 0"};
    Engine *e = rattleback_with(sets, 2);
    assert_int_equal(engine_reduced_pair_count(e), 0);
    Track tr = run(e, 1.0);
    print_message("dropped 3.6 mm: entered at %.3f s, left at %.3f s, z %.6f m at 1 s\n",
                  tr.entered_at, tr.left_at, tr.z_end);
    assert_true(tr.entered_at > 0.0 && tr.entered_at < 0.5);
    assert_true(tr.left_at < 0.0);
    assert_int_equal(tr.reduced_end, 1);
    assert_near(tr.z_end, 0.1, 1e-3); /* at rest on the cap's lowest point */
    engine_destroy(e);
}

/* The floor's patch cut down to 0.6 m x 0.6 m (its slab shrinks with it), the rattleback dropped
 * on it sliding at 1.5 m/s: the contact runs off the patch's open edge. */
static void test_contact_off_the_open_edge_carries_on_on_the_penalty_path(void **state) {
    (void)state;
    char floor[512] = "floor.surface_points={";
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            char p[48];
            snprintf(p, sizeof p, "{%g,%g,0}%s", -0.3 + 0.2 * i, -0.3 + 0.2 * j,
                     i == 3 && j == 3 ? "}" : ",");
            strcat(floor, p);
        }
    const char *sets[] = {floor, "rattleback.pos=0 0 0.106", "rattleback.orient=0 1 0 0",
                          "rattleback.vel=1.5 0 0"};
    testlog_capture();
    Engine *e = rattleback_with(sets, 4);
    Track tr = run(e, 2.0);
    print_message("sliding off a 0.6 m floor: entered at %.3f s, left at %.3f s, at 2 s x %.3f m "
                  "z %.3f m, reduced pairs %d, messages naming the edge %d\n",
                  tr.entered_at, tr.left_at, tr.x_end, tr.z_end, tr.reduced_end,
                  testlog_count(ISSIM_LOG_INFO, "open edge"));
    assert_true(tr.entered_at > 0.0 && tr.left_at > tr.entered_at);
    assert_true(testlog_count(ISSIM_LOG_INFO, "left surface 'floor' across the open edge") >= 1);
    assert_int_equal(tr.reduced_end, 0);
    assert_true(tr.x_end > 0.3 && tr.z_end < -0.1); /* past the edge, fallen below the floor */
    engine_destroy(e);
    testlog_release();
}

/* Entry (002 4.2): the rattleback resting on its floor at coordinates (0.45, 0.45, 0.5, 0.5, 0)
 * enters at the floor point under it; a point 5 cm above it, or the body lifted by 1 cm, is
 * refused naming the surface and its nearest point. */
static void test_entry_off_the_surfaces_is_refused_by_name(void **state) {
    (void)state;
    BezierPatch cap, flat;
    bezier_patch_rattleback(&cap);
    bezier_patch_rattleback_floor(&flat);
    IssimError err = {0};
    SmoothSurface *a = smooth_surface_from_bezier(&cap, &err);
    SmoothSurface *b = smooth_surface_from_bezier(&flat, &err);
    assert_non_null(a);
    assert_non_null(b);
    SmoothContactSystem sys = {.surface_a = a,
                               .surface_b = b,
                               .mass = 5.0,
                               .inertia = vec3(1, 10, 10),
                               .orient_b = quat_identity()};
    SmoothContactState at = {.q = {0.45, 0.45, 0.5, 0.5, 0.0}};
    SmoothBodyMotion m;
    assert_int_equal(smooth_contact_motion(&sys, &at, &m, &err), ISSIM_OK);
    Vec3 under = vec3(0, 0, 0); /* the flat floor at (0.5, 0.5) */
    SmoothContactState st;
    assert_int_equal(smooth_contact_enter(&sys, &m, under, 3e-3, &st, &err), ISSIM_OK);
    for (int i = 0; i < 4; i++)
        assert_near(st.q[i], at.q[i], 1e-6);
    assert_int_equal(smooth_contact_enter(&sys, &m, vec3(0, 0, 0.05), 3e-3, &st, &err),
                     ISSIM_ERR_RANGE);
    print_message("5 cm above: %s\n", err.message);
    assert_non_null(strstr(err.message, "started off the surfaces"));
    assert_non_null(strstr(err.message, "surface 'rattleback'"));
    assert_non_null(strstr(err.message, "patch 0 at (0.45, 0.45)"));
    SmoothBodyMotion lifted = m;
    lifted.pos.z += 0.01;
    assert_int_equal(smooth_contact_enter(&sys, &lifted, under, 3e-3, &st, &err), ISSIM_ERR_RANGE);
    print_message("lifted 1 cm: %s\n", err.message);
    assert_non_null(strstr(err.message, "rattleback"));
    smooth_surface_destroy(a);
    smooth_surface_destroy(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_off_the_surfaces_is_refused_by_name),
        cmocka_unit_test(test_dropped_body_enters_the_reduced_pair),
        cmocka_unit_test(test_contact_off_the_open_edge_carries_on_on_the_penalty_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
