/* The window from 1024 x 600 up (issue 31 item 8): nothing cut in the panels, the status bar
 * or the navigation bar (before, at 1024 x 600 the Reload button ran past the right panel's
 * edge, the plots' labels and the edit hint were cut, property names broke mid-word); every
 * force arrow on one logarithmic scale, so that a 0.04 N push and a 6 N contact are both seen;
 * and a legend of the arrows' colours and scale over the 3D view. The GUI measures how far each
 * panel's widest item reached past its edge (print_gui's "layout" line): 0 means nothing cut. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/gui.h"
#include "test_display_util.h"

typedef struct Layout {
    double overflow[GUI_PANELS];
    unsigned arrow_kinds;
    double px_per_distance;
} Layout;

static Layout parse_layout(const char *out, int nth) {
    Layout l = {0};
    const char *line = find_line(out, "layout ", nth);
    if (!line)
        fail_msg("no layout line %d in:\n%s", nth, out);
    assert_int_equal(sscanf(line,
                            "layout overflow_left=%lf overflow_right=%lf overflow_status=%lf "
                            "overflow_navigation=%lf arrow_kinds=%u arrow_px_per_distance=%lf",
                            &l.overflow[GUI_PANEL_LEFT], &l.overflow[GUI_PANEL_RIGHT],
                            &l.overflow[GUI_PANEL_STATUS], &l.overflow[GUI_PANEL_NAVIGATION],
                            &l.arrow_kinds, &l.px_per_distance),
                     6);
    return l;
}

static void nothing_cut(const Layout *l, const char *what) {
    print_message("%s: overflow left %.1f right %.1f status %.1f navigation %.1f px\n", what,
                  l->overflow[0], l->overflow[1], l->overflow[2], l->overflow[3]);
    for (int p = 0; p < GUI_PANELS; p++)
        assert_true(l->overflow[p] <= 0.5);
}

/* Runs scene with extra options at width x height and the script; returns the output. */
static const char *run_at(const char *scene, const char *extra, int width, int height,
                          const char *script) {
    static char out[GUI_OUTPUT_MAX];
    char options[256];
    snprintf(options, sizeof options, "%s --size %dx%d", extra, width, height);
    assert_int_equal(run_issim_script(test_source_path(scene), options, script, out, sizeof out),
                     0);
    return out;
}

/* The bar selected (its 30-odd properties), Forces on, the scene's three plots; the device
 * panel with the motors on; the load cycle with its arrow and the plots' load line. */
static void check_size(int width, int height) {
    char what[96];
    const char *out = run_at("scenes/point_drop.lua", "", width, height,
                             "wait_sim 0.3\nselect bar\ntoggle forces\nframes 3\nprint_gui\n");
    snprintf(what, sizeof what, "point_drop %dx%d", width, height);
    Layout l = parse_layout(out, 0);
    nothing_cut(&l, what);
    out = run_at("scenes/pantograph_push.lua",
                 "--device sim --device-rate 500 --device-hand circle:0.04,2", width, height,
                 "wait_device periods 100\ndevice_enable\nwait_device motors_on\nframes 3\n"
                 "print_gui\n");
    snprintf(what, sizeof what, "pantograph_push %dx%d", width, height);
    l = parse_layout(out, 0);
    nothing_cut(&l, what);
    out = run_at("scenes/quasi_static_cycle.lua", "", width, height,
                 "wait_sim 0.5\nselect block\nframes 3\nprint_gui\n");
    snprintf(what, sizeof what, "quasi_static_cycle %dx%d", width, height);
    l = parse_layout(out, 0);
    nothing_cut(&l, what);
    assert_true(l.arrow_kinds & (1u << GUI_ARROW_LOAD));
}

static void test_nothing_cut_at_1024x600(void **state) {
    (void)state;
    check_size(1024, 600);
}

static void test_nothing_cut_at_1280x720(void **state) {
    (void)state;
    check_size(1280, 720);
}

/* The scale at 1024 x 600: a 0.04 N arrow across the line of sight at the camera's target is
 * long enough to see, a 6 N one still well inside the view (and both are what the legend says). */
static void test_small_and_large_forces_both_visible(void **state) {
    (void)state;
    const char *out = run_at("scenes/box_on_plane.lua", "", 1024, 600,
                             "wait_sim 1\ntoggle forces\nframes 3\nprint_gui\nprint_state\n");
    Layout l = parse_layout(out, 0);
    ShownState s = parse_state(out, 0);
    double small = gui_arrow_length(0.04, 1.0) * l.px_per_distance;
    double large = gui_arrow_length(6.0, 1.0) * l.px_per_distance;
    print_message("at 1024x600: 0.04 N %.1f px, 6 N %.1f px, view %d px high\n", small, large,
                  s.view_h);
    assert_true(small >= 15.0);
    assert_true(large <= s.view_h / 3.0);
    /* the same pixels the test's own pinhole camera gives */
    double distance = sqrt(pow(s.eye[0] - s.target[0], 2) + pow(s.eye[1] - s.target[1], 2) +
                           pow(s.eye[2] - s.target[2], 2));
    double px0, py0, px1, py1;
    Vec3 target = {s.target[0], s.target[1], s.target[2]};
    Vec3 ahead = vec3_sub(target, (Vec3){s.eye[0], s.eye[1], s.eye[2]});
    Vec3 side = vec3_normalize(vec3_cross(ahead, (Vec3){0, 0, 1}));
    project(&s, target, &px0, &py0);
    project(&s, vec3_add(target, vec3_scale(side, gui_arrow_length(0.04, distance))), &px1, &py1);
    assert_near(hypot(px1 - px0, py1 - py0), small, 0.5);
    assert_true(l.arrow_kinds == 1u << GUI_ARROW_CONTACT);
}

/* The colours of the kind in the legend's corner of the view (its bottom left). */
static int legend_pixels(const Image *im, const ShownState *s, GuiArrowKind kind) {
    const float *c = gui_arrow_colors[kind];
    int n = 0;
    for (int y = s->view_y + s->view_h - 110; y < s->view_y + s->view_h; y++)
        for (int x = s->view_x; x < s->view_x + 320; x++) {
            const unsigned char *p = pixel(im, x, y);
            n += abs(p[0] - (int)(255 * c[0])) < 30 && abs(p[1] - (int)(255 * c[1])) < 30 &&
                 abs(p[2] - (int)(255 * c[2])) < 30;
        }
    return n;
}

/* The pantograph pushing the box (forces of a few tenths of a newton): the coupling and hand
 * arrows are drawn on the scale (print_device's vectors), tens of pixels long, and the legend
 * shows their two colours; box_on_plane's contacts (2.5 N each) show the contact colour. */
static void test_device_arrows_and_legend(void **state) {
    (void)state;
    const char *png = test_temp_path(".png");
    char script[512];
    snprintf(script, sizeof script,
             "wait_device periods 100\ndevice_enable\nwait_device motors_on\nwait 1\nframes 2\n"
             "print_device\nprint_gui\nprint_state\nscreenshot %s\nframes 2\n",
             png);
    const char *out =
        run_at("scenes/pantograph_push.lua",
               "--device sim --device-rate 500 --device-hand circle:0.04,2", 1024, 600, script);
    ShownState s = parse_state(out, 0);
    Layout l = parse_layout(out, 0);
    assert_true(l.arrow_kinds & (1u << GUI_ARROW_HAND));
    const char *line = find_line(out, "device_arrow hand ", 0);
    assert_non_null(line);
    Vec3 from, vector, force;
    assert_int_equal(sscanf(line,
                            "device_arrow hand from %lf %lf %lf vector %lf %lf %lf force %lf %lf "
                            "%lf",
                            &from.x, &from.y, &from.z, &vector.x, &vector.y, &vector.z, &force.x,
                            &force.y, &force.z),
                     9);
    double px0, py0, px1, py1;
    project(&s, from, &px0, &py0);
    project(&s, vec3_add(from, vector), &px1, &py1);
    double length = hypot(px1 - px0, py1 - py0);
    print_message("hand force %.3f N: arrow %.1f px on screen\n", vec3_norm(force), length);
    if (vec3_norm(force) >= 0.04)
        assert_true(length >= 10.0);
    Image im = load_png(png);
    int magenta = legend_pixels(&im, &s, GUI_ARROW_COUPLING);
    int cyan = legend_pixels(&im, &s, GUI_ARROW_HAND);
    print_message("legend: %d coupling, %d hand pixels\n", magenta, cyan);
    assert_true(magenta >= 20 && cyan >= 20);
    stbi_image_free(im.rgb);

    snprintf(script, sizeof script,
             "wait_sim 1\ntoggle forces\nframes 3\nprint_state\n"
             "screenshot %s\nframes 2\n",
             png);
    out = run_at("scenes/box_on_plane.lua", "", 1024, 600, script);
    s = parse_state(out, 0);
    im = load_png(png);
    int green = legend_pixels(&im, &s, GUI_ARROW_CONTACT);
    int hand = legend_pixels(&im, &s, GUI_ARROW_HAND);
    print_message("box_on_plane legend: %d contact, %d hand pixels\n", green, hand);
    assert_true(green >= 20);
    assert_int_equal(hand, 0);
    stbi_image_free(im.rgb);
    remove(png);
}

/* Without arrows there is no legend: point_drop with Forces off. */
static void test_no_arrows_no_legend(void **state) {
    (void)state;
    const char *out =
        run_at("scenes/point_drop.lua", "", 1024, 600, "wait_sim 0.3\nframes 2\nprint_gui\n");
    assert_int_equal(parse_layout(out, 0).arrow_kinds, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_cut_at_1024x600),
        cmocka_unit_test(test_nothing_cut_at_1280x720),
        cmocka_unit_test(test_small_and_large_forces_both_visible),
        cmocka_unit_test(test_device_arrows_and_legend),
        cmocka_unit_test(test_no_arrows_no_legend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
