/* The 3D view, from outside: `issim run` under SDL's offscreen driver with a script of UI
 * actions. The thing is drawn where the state says it is (its position projected with the
 * test's own camera model lands on its colour in the PNG, and moves when an edit moves it),
 * a click on it selects it, a mouse drag pulls it with the spring, and the keyboard shortcuts
 * pause, step, run and reset the clock. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_display_util.h"

/* A red box floating without gravity over a blue floor: it stays where it is put. */
static const char *floating_box =
    "--set universe.gravity='0 0 0' --set box.color='1 0 0' --set floor.color='0 0 1' "
    "--set box.pos='0 0 0.2'";

static void test_box_drawn_where_the_state_says(void **state) {
    (void)state;
    char out[GUI_OUTPUT_MAX];
    const char *shot_a = test_temp_path(".png"), *shot_b = test_temp_path(".png");
    char script[2048];
    snprintf(script, sizeof script,
             "toggle gui off\n"
             "camera 0.5 -0.8 0.4 0 0 0.1 45\n"
             "frames 3\n"
             "print_state\n"
             "screenshot %s\n"
             "set box.pos 0.12 0.1 0.05\n"
             "wait_edits\n"
             "frames 3\n"
             "print_state\n"
             "screenshot %s\n",
             shot_a, shot_b);
    int rc = run_issim_script(test_source_path("scenes/box_on_plane.lua"), floating_box, script,
                              out, sizeof out);
    assert_int_equal(rc, 0);
    assert_non_null(find_line(out, "edit ", 0));
    assert_non_null(strstr(find_line(out, "edit ", 0), "accepted"));

    ShownState sa = parse_state(out, 0), sb = parse_state(out, 1);
    Vec3 pa = parse_body(out, "box", 0), pb = parse_body(out, "box", 1);
    assert_near(pa.z, 0.2, 1e-9); /* no gravity: the box stays put */
    assert_near(pb.x, 0.12, 1e-9);
    assert_near(pb.z, 0.05, 1e-9);
    Image a = load_png(shot_a), b = load_png(shot_b);
    assert_int_equal(a.w, 1280);
    assert_int_equal(a.h, 720);

    double ax, ay, bx, by;
    project(&sa, pa, &ax, &ay);
    project(&sb, pb, &bx, &by);
    /* Before: red at the box's projected centre; after: red at the new place, not the old. */
    assert_true(is_red(pixel(&a, ax, ay)));
    assert_true(is_red(pixel(&b, bx, by)));
    assert_false(is_red(pixel(&b, ax, ay)));
    assert_false(is_red(pixel(&a, bx, by)));
    /* The floor (blue, lit) below the box and the background above the horizon. */
    const unsigned char *floor = pixel(&a, 640, 700);
    assert_true(floor[2] > floor[0] + 40 && floor[2] > floor[1] + 40);
    const unsigned char *sky = pixel(&a, 640, 5);
    assert_true(abs(sky[0] - 41) <= 3 && abs(sky[1] - 46) <= 3 && abs(sky[2] - 56) <= 3);
    stbi_image_free(a.rgb);
    stbi_image_free(b.rgb);
    remove(shot_a);
    remove(shot_b);
}

static void test_click_selects_and_drag_pulls(void **state) {
    (void)state;
    char out[GUI_OUTPUT_MAX];
    /* First pass: where is the box on screen? */
    int rc = run_issim_script(test_source_path("scenes/box_on_plane.lua"), floating_box,
                              "toggle gui off\ncamera 0.5 -0.8 0.4 0 0 0.1 45\nframes 2\n"
                              "print_state\n",
                              out, sizeof out);
    assert_int_equal(rc, 0);
    ShownState s = parse_state(out, 0);
    double x, y;
    project(&s, parse_body(out, "box", 0), &x, &y);
    int ix = (int)lround(x), iy = (int)lround(y);

    /* Second pass: click empty space (nothing selected), click the box, then drag it 120
     * pixels up and hold for a second. */
    char script[1024];
    snprintf(script, sizeof script,
             "toggle gui off\ncamera 0.5 -0.8 0.4 0 0 0.1 45\nframes 2\n"
             "click 40 40\nframes 2\n"
             "click %d %d\nframes 2\n"
             "print_state\n"
             "mouse_down %d %d\nframes 1\nmouse_move %d %d\nframes 1\nmouse_move %d %d\n"
             "wait 1.0\nprint_state\nmouse_up %d %d\nframes 2\n",
             ix, iy, ix, iy, ix, iy - 60, ix, iy - 120, ix, iy - 120);
    rc = run_issim_script(test_source_path("scenes/box_on_plane.lua"), floating_box, script, out,
                          sizeof out);
    assert_int_equal(rc, 0);
    const char *sel = find_line(out, "select ", 0);
    assert_non_null(sel);
    assert_int_equal(strncmp(sel, "select box\n", 11), 0);
    assert_null(find_line(out, "select ", 2)); /* the empty click selected nothing */
    Vec3 before = parse_body(out, "box", 0), after = parse_body(out, "box", 1);
    assert_near(before.z, 0.2, 1e-9);
    /* 120 pixels at about 0.95 m from the camera with a 45 degree view over 720 pixels is about
     * 0.13 m; the spring (3 Hz, critically damped) gets most of the way in a second. */
    assert_true(after.z - before.z > 0.06);
    assert_true(after.z - before.z < 0.25);
}

static void test_keyboard_transport(void **state) {
    (void)state;
    char out[GUI_OUTPUT_MAX];
    /* the transport at the speed factor: point_drop's slow motion at impacts is off, or the
     * 0.3 s run over the impact at 0.319 s would last 2 s longer */
    int rc = run_issim_script(
        test_source_path("scenes/point_drop.lua"), "--no-gui --set universe.slow_motion=0",
        "wait_sim 0.1\n"
        "key space\nframes 2\nprint_state\n"              /* 0: paused */
        "wait 0.3\nprint_state\n"                         /* 1: still there */
        "key s\nframes 2\nprint_state\n"                  /* 2: one step on */
        "key space\nwait 0.3\nprint_state\n"              /* 3: running again */
        "key r\nframes 3\nprint_state\n"                  /* 4: reset to the start */
        "pause\nframes 2\nkey f\nframes 2\nprint_state\n" /* 5: fitted camera */
        "key ctrl+l\nframes 2\n",
        out, sizeof out);
    assert_int_equal(rc, 0);
    double t0 = parse_state(out, 0).t, t1 = parse_state(out, 1).t, t2 = parse_state(out, 2).t;
    double t3 = parse_state(out, 3).t, t4 = parse_state(out, 4).t;
    assert_true(t0 >= 0.1);
    assert_near(t1, t0, 1e-12);
    assert_near(t2, t0 + 0.001, 1e-9); /* S: exactly one output step (dt = 1 ms) */
    assert_true(t3 > t2 + 0.2);
    assert_true(t4 < 0.1);
    /* F: the camera looks at the bar (the only body; the floor is unbounded) from a distance
     * that frames it, instead of the scene's camera (target 0 0 0.3, 1.87 m away). */
    ShownState fitted = parse_state(out, 5);
    Vec3 bar = parse_body(out, "bar", 5);
    assert_near(fitted.target[0], bar.x, 1e-6);
    assert_near(fitted.target[1], bar.y, 1e-6);
    assert_near(fitted.target[2], bar.z, 1e-3);
    double dx = fitted.eye[0] - fitted.target[0], dy = fitted.eye[1] - fitted.target[1];
    double dz = fitted.eye[2] - fitted.target[2];
    double distance = sqrt(dx * dx + dy * dy + dz * dz);
    assert_true(distance > 0.2 && distance < 1.0);
    /* Ctrl+L reloads the scene from disk: a second "open ... ok". */
    assert_non_null(find_line(out, "open ", 1));
    assert_non_null(strstr(find_line(out, "open ", 1), "point_drop.lua ok"));
}

/* Half-diameters of the red disc through (cx, cy) along 32 directions (walking out both ways
 * in quarter-pixel steps until the colour leaves red): half the sum of opposite radii, so a
 * centre off by a fraction of a pixel does not count as an outline error. */
static void outline_radii(const Image *im, double cx, double cy, double *lo, double *hi,
                          double *mean) {
    double r[64];
    for (int k = 0; k < 64; k++) {
        double a = 2 * M_PI * (k + 0.5) / 64;
        r[k] = 0;
        while (r[k] < 400 && is_red(pixel(im, cx + r[k] * cos(a), cy + r[k] * sin(a))))
            r[k] += 0.25;
    }
    *lo = INFINITY, *hi = 0, *mean = 0;
    for (int k = 0; k < 32; k++) {
        double half = 0.5 * (r[k] + r[k + 32]);
        *lo = fmin(*lo, half), *hi = fmax(*hi, half), *mean += half / 32;
    }
}

/* Levels of detail: a sphere is drawn round at any size. Looked at head on, its outline is a
 * circle of radius f R / sqrt(d^2 - R^2) pixels (f = (H / 2) / tan(fov / 2)); the renderer
 * picks the coarsest mesh whose polygon stays within 0.75 px of it, so the measured radii
 * spread by that plus a pixel of rasterisation. The same sphere close (radius about 200 px:
 * 16 segments, the old fixed mesh, would be 3.8 px off) and far (about 22 px: 12 segments). */
static void test_spheres_round_at_every_size(void **state) {
    (void)state;
    const char *scene = test_temp_path(".lua");
    FILE *f = fopen(scene, "w");
    assert_non_null(f);
    fputs("return { name = 'lod', universe = { gravity = {0, 0, 0}, integrator = 'rk4',\n"
          "  dt = 1e-3 },\n"
          "  things = { { name = 'ball', kind = 'body', shape = 'sphere', radius = 0.05,\n"
          "    mass = 1, inertia = {1e-3, 1e-3, 1e-3}, pos = {0, 0, 0.2}, color = {1, 0, 0},\n"
          "    material = 'm' } } }\n",
          f);
    fclose(f);
    const double R = 0.05, distances[2] = {0.2231, 2.0};
    const char *shots[2] = {test_temp_path(".png"), test_temp_path(".png")};
    char script[2048], out[GUI_OUTPUT_MAX];
    snprintf(script, sizeof script,
             "pause\ntoggle gui off\ntoggle grid off\n"
             "camera 0 %.9g 0.2 0 0 0.2 45\nframes 3\nprint_state\nscreenshot %s\n"
             "camera 0 %.9g 0.2 0 0 0.2 45\nframes 3\nprint_state\nscreenshot %s\n",
             -distances[0], shots[0], -distances[1], shots[1]);
    int rc = run_issim_script(scene, "", script, out, sizeof out);
    assert_int_equal(rc, 0);
    for (int i = 0; i < 2; i++) {
        ShownState s = parse_state(out, i);
        double focal = 0.5 * s.view_h / tan(0.5 * s.fov * M_PI / 180.0);
        double d = distances[i], expected = focal * R / sqrt(d * d - R * R);
        double cx, cy, lo, hi, mean;
        project(&s, parse_body(out, "ball", i), &cx, &cy);
        Image im = load_png(shots[i]);
        outline_radii(&im, cx, cy, &lo, &hi, &mean);
        printf("sphere at %.2f m: expected radius %.1f px, measured %.2f-%.2f (mean %.2f)\n", d,
               expected, lo, hi, mean);
        assert_true(hi - lo < 0.75 + 1.0);
        assert_near(mean, expected, 1.5);
        stbi_image_free(im.rgb);
        remove(shots[i]);
    }
    remove(scene);
}

/* Forty edits in one burst, more than the 32 the display once tracked: every one is answered and
 * mirrored into the display's database, so the saved scene holds the last (issue 12). */
static void test_burst_of_edits_all_tracked(void **state) {
    (void)state;
    char script[8192], out[GUI_OUTPUT_MAX];
    const char *saved = test_temp_path(".lua");
    size_t at = (size_t)snprintf(script, sizeof script, "pause\n");
    for (int i = 1; i <= 40; i++)
        at += (size_t)snprintf(script + at, sizeof script - at, "set box.mass %.2f\n",
                               1.0 + 0.01 * i);
    snprintf(script + at, sizeof script - at, "wait_edits\nsave %s\n", saved);
    int rc = run_issim_script(test_source_path("scenes/box_on_plane.lua"), "--no-gui", script, out,
                              sizeof out);
    assert_int_equal(rc, 0);
    int answered = 0;
    for (const char *p = out; (p = strstr(p, "edit ")) != NULL; p++)
        answered += strstr(p, "accepted") != NULL && strchr(p, '\n') > strstr(p, "accepted");
    assert_int_equal(answered, 40);
    FILE *f = fopen(saved, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    remove(saved);
    assert_non_null(strstr(text, "mass = 1.4,"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_drawn_where_the_state_says),
        cmocka_unit_test(test_click_selects_and_drag_pulls),
        cmocka_unit_test(test_keyboard_transport),
        cmocka_unit_test(test_spheres_round_at_every_size),
        cmocka_unit_test(test_burst_of_edits_all_tracked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
