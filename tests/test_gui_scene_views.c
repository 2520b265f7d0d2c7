/* Every scene shows its point when opened (issue 31 item 7): opened with its own camera, the
 * scene's bodies are in view at 0.5 s and at 5 s of simulated time. The check uses the
 * renderer's own projection (the camera and 3D view print_state reports): every body's centre
 * lies in front of the eye and projects inside the 3D view. The clock runs at SPEED_UP times the
 * scene's speed, slow motion at impacts off (point_drop's would add 52 s), so the 5 s are reached
 * within the test's time; the camera does not depend on the clock's rate. Each scene's window at
 * 0.5 s is saved as a PNG (its path printed) for a person to look at, and scenes whose point is in
 * the picture are checked by pixels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_display_util.h"

#define MAX_SCENES 64
#define SPEED_UP 10.0

/* Scenes left out, and why. */
static const struct {
    const char *name, *reason;
} SKIPPED[] = {
    {"pantograph_edge.lua", "drives a haptic device: its handle moves only with a device"},
    {"pantograph_push.lua", "drives a haptic device: its handle moves only with a device"},
    {"pantograph_push_local.lua", "drives a haptic device: its handle moves only with a device"},
    {"pantograph_contact_wall.lua", "drives a haptic device: its handle moves only with a device"},
    {"pantograph_internal_friction.lua",
     "drives a haptic device: its handle moves only with a device"},
    {"pantograph_ringing_bar.lua", "drives a haptic device: its handle moves only with a device"},
    {"pantograph_stiff_wall.lua", "drives a haptic device: its handle moves only with a device"},
    {"pantograph_textures.lua", "drives a haptic device: its handle moves only with a device"},
};
enum { SKIPPED_COUNT = sizeof SKIPPED / sizeof SKIPPED[0] };

/* Bodies allowed out of view before a time, and why. */
static const struct {
    const char *scene, *body;
    double until;
    const char *reason;
} LATE_ENTRIES[] = {
    {"equilibrium_lists.lua", "E", 1.0, "the ball falls from 6 m and lands on D at about 1.1 s"},
};
enum { LATE_ENTRY_COUNT = sizeof LATE_ENTRIES / sizeof LATE_ENTRIES[0] };

static bool may_be_out_of_view(const char *scene, const char *body, double t) {
    for (int i = 0; i < LATE_ENTRY_COUNT; i++)
        if (strcmp(LATE_ENTRIES[i].scene, scene) == 0 && strcmp(LATE_ENTRIES[i].body, body) == 0 &&
            t < LATE_ENTRIES[i].until) {
            print_message("%s t = %.3f s: %s may be out of view: %s\n", scene, t, body,
                          LATE_ENTRIES[i].reason);
            return true;
        }
    return false;
}

static bool skipped(const char *name) {
    for (int i = 0; i < SKIPPED_COUNT; i++)
        if (strcmp(SKIPPED[i].name, name) == 0) {
            print_message("skipped %s: %s\n", name, SKIPPED[i].reason);
            return true;
        }
    return false;
}

/* Whether p lies in front of the eye and projects inside the 3D view. */
static bool in_view(const ShownState *s, Vec3 p) {
    double depth = (p.x - s->eye[0]) * (s->target[0] - s->eye[0]) +
                   (p.y - s->eye[1]) * (s->target[1] - s->eye[1]) +
                   (p.z - s->eye[2]) * (s->target[2] - s->eye[2]);
    double px, py;
    project(s, p, &px, &py);
    return depth > 0 && px >= s->view_x && px < s->view_x + s->view_w && py >= s->view_y &&
           py < s->view_y + s->view_h;
}

/* Counts the bodies of the nth print_state (its "body" lines follow its "state" line) that are
 * out of view, naming each. */
static int bodies_out_of_view(const char *out, int nth, const char *scene) {
    ShownState s = parse_state(out, nth);
    const char *line = find_line(out, "state ", nth);
    int out_count = 0;
    for (line = strchr(line, '\n'); line && strncmp(line + 1, "body ", 5) == 0;
         line = strchr(line + 1, '\n')) {
        char name[128];
        Vec3 p;
        assert_int_equal(sscanf(line + 1, "body %127s %lf %lf %lf", name, &p.x, &p.y, &p.z), 4);
        if (!in_view(&s, p) && !may_be_out_of_view(scene, name, s.t)) {
            double px, py;
            project(&s, p, &px, &py);
            print_message("%s t = %.3f s: body %s at (%.3f %.3f %.3f) projects to (%.0f, %.0f), "
                          "outside the view %d %d %d %d\n",
                          scene, s.t, name, p.x, p.y, p.z, px, py, s.view_x, s.view_y, s.view_w,
                          s.view_h);
            out_count++;
        }
    }
    return out_count;
}

/* Where scene's screenshot at 0.5 s is written: kept after the test, for a person to look at. */
static const char *screenshot_path(const char *scene) {
    static char path[MAX_SCENES][300];
    static int next;
    char *p = path[next++ % MAX_SCENES];
    snprintf(p, sizeof path[0], "/tmp/issim-scene-view-%.200s.png", scene);
    return p;
}

/* The lit floor, told from the dark sky and from the orange box. */
static bool is_floor(const unsigned char *p) {
    return p[0] > 90 && abs((int)p[0] - (int)p[2]) < 30 && abs((int)p[0] - (int)p[1]) < 30;
}

/* The first floor row of column x in the 3D view, below the view bar's overlay. */
static double floor_edge_row(const Image *im, const ShownState *s, double x) {
    for (double y = s->view_y + s->view_h / 6.0; y < s->view_y + s->view_h; y++)
        if (is_floor(pixel(im, x, y)))
            return y;
    fail_msg("no floor in column %.0f of the incline's view", x);
    return -1;
}

/* The incline's gravity is tilted 20 degrees about y; its camera draws "up" against gravity, so
 * the floor's far edge (where floor meets sky) falls to the right, downhill (+x), by the slope
 * as seen from nearly side on. With world z drawn up the edge is level (0 degrees). */
static void check_incline_floor_drawn_tilted(const ShownState *s) {
    Image im = load_png(screenshot_path("incline.lua"));
    double x0 = s->view_x + 0.1 * s->view_w, x1 = s->view_x + 0.9 * s->view_w;
    double y0 = floor_edge_row(&im, s, x0), y1 = floor_edge_row(&im, s, x1);
    double slope_deg = atan2(y1 - y0, x1 - x0) * 180.0 / M_PI;
    print_message("incline: the floor's far edge falls %.1f degrees to the right (rows %.0f, "
                  "%.0f)\n",
                  slope_deg, y0, y1);
    stbi_image_free(im.rgb);
    assert_true(slope_deg > 10.0 && slope_deg < 30.0);
}

/* The default body colour {0.85, 0.55, 0.25} under the renderer's lighting. */
static bool is_orange(const unsigned char *p) {
    return p[0] > 100 && p[0] > p[1] + 20 && p[1] > p[2] + 20;
}

/* The chair's body is its four feet: drawn as a seat on legs with a backrest (display_seat) it
 * covers 6.5 % of the view; as the rods between its feet it covered 0.17 %. */
static void check_chair_drawn_as_a_chair(const ShownState *s) {
    Image im = load_png(screenshot_path("chair.lua"));
    long orange = 0;
    for (int y = s->view_y; y < s->view_y + s->view_h; y++)
        for (int x = s->view_x; x < s->view_x + s->view_w; x++)
            orange += is_orange(pixel(&im, x, y));
    double share = (double)orange / ((double)s->view_w * s->view_h);
    print_message("chair: %.2f %% of the view\n", 100.0 * share);
    stbi_image_free(im.rgb);
    assert_true(share > 0.03);
}

/* box_on_plane opens with its contacts and their forces shown (show_contacts, show_forces):
 * the four manifold points' red crosses, drawn over the box, 93 px (60 px depth-tested under
 * the box, 0 with show_contacts false). */
static void check_box_on_plane_contacts_shown(const ShownState *s) {
    Image im = load_png(screenshot_path("box_on_plane.lua"));
    long red = 0;
    for (int y = s->view_y; y < s->view_y + s->view_h; y++)
        for (int x = s->view_x; x < s->view_x + s->view_w; x++)
            red += is_red(pixel(&im, x, y));
    print_message("box_on_plane: %ld red contact-cross pixels\n", red);
    stbi_image_free(im.rgb);
    assert_true(red > 40);
}

/* Position of body name among the "body" lines of the nth print_state. */
static Vec3 body_of_state(const char *out, int nth, const char *name) {
    const char *line = find_line(out, "state ", nth);
    size_t len = strlen(name);
    for (line = strchr(line, '\n'); line && strncmp(line + 1, "body ", 5) == 0;
         line = strchr(line + 1, '\n'))
        if (strncmp(line + 6, name, len) == 0 && line[6 + len] == ' ') {
            Vec3 p;
            assert_int_equal(sscanf(line + 7 + len, "%lf %lf %lf", &p.x, &p.y, &p.z), 3);
            return p;
        }
    fail_msg("no body %s in print_state %d", name, nth);
    return (Vec3){0, 0, 0};
}

/* three_resolvers' bodies carry a `label` naming their resolver: white text on a dark plate
 * above each body's centre (40 px up). Counted in a box above each centre: without labels it
 * holds the grey floor and the dark sky only, no white. */
static void check_three_resolvers_labelled(const char *out, int nth, const ShownState *s) {
    Image im = load_png(screenshot_path("three_resolvers.lua"));
    const char *bodies[] = {"box", "ball", "bottom", "top"};
    for (int b = 0; b < 4; b++) {
        double px, py;
        project(s, body_of_state(out, nth, bodies[b]), &px, &py);
        int white = 0;
        for (double y = py - 90; y < py - 30; y++)
            for (double x = px - 60; x < px + 60; x++) {
                const unsigned char *p = pixel(&im, x, y);
                white += p[0] > 220 && p[1] > 220 && p[2] > 220;
            }
        print_message("three_resolvers: %d white pixels above %s\n", white, bodies[b]);
        assert_true(white > 40);
    }
    stbi_image_free(im.rgb);
}

/* The scrubber's note at 5 s (the nth scene's print_gui): the 240-body piles' history is cut by
 * the registry's 32 MiB to 0.67 s of the 2 s they ask, and the note says how far back the
 * slider reaches; point_drop holds all 5 s, and says nothing. */
static void check_scrubber_note(const char *out, int nth, const char *scene) {
    double reach = 0;
    assert_int_equal(sscanf(require_line(out, "scrubber ", nth), "scrubber note=%lf", &reach), 1);
    print_message("%s at 5 s: scrubber note %g s\n", scene, reach);
    if (strncmp(scene, "pile", 4) == 0)
        assert_true(reach > 0.1 && reach < 2.0);
    if (strcmp(scene, "point_drop.lua") == 0)
        assert_true(isnan(reach));
}

static void test_every_scene_keeps_its_bodies_in_view(void **state) {
    (void)state;
    static char names[MAX_SCENES][256];
    int n = test_list_scenes(names, MAX_SCENES, skipped);
    assert_true(n >= 10);
    static char script[MAX_SCENES * 1024], out[8 * GUI_OUTPUT_MAX];
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "scenes/%.250s", names[i]);
        used += (size_t)snprintf(script + used, sizeof script - used,
                                 "open %s\nspeed %g\nslow_motion off\npause_at 0.5\nwait_sim 0.49\n"
                                 "pause\n"
                                 "frames 1\nprint_state\nscreenshot %s\npause_at 5\nrun\n",
                                 test_source_path(path), SPEED_UP, screenshot_path(names[i]));
        /* One wait per half second: a wait fails after 60 wall seconds, and the 240-body piles
         * in an ASan build on a loaded machine compute 5 s in several minutes (each half second
         * within one wait). */
        for (int k = 2; k <= 10; k++)
            used += (size_t)snprintf(script + used, sizeof script - used, "wait_sim %g\n",
                                     k < 10 ? 0.5 * k : 4.99);
        used += (size_t)snprintf(script + used, sizeof script - used,
                                 "pause\nframes 1\nprint_state\nprint_gui\n");
    }
    int rc =
        run_issim_script(test_source_path("scenes/point_drop.lua"), "", script, out, sizeof out);
    assert_int_equal(rc, 0);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        ShownState early = parse_state(out, 2 * i), late = parse_state(out, 2 * i + 1);
        /* pause_at holds the clock at 0.5 s and 5 s however late a loaded machine polls it
         * (wait_sim alone, at SPEED_UP, overshot 5 s to 15.6 s); the state shown is the output
         * frame at or before the clock (output steps up to 10 ms) */
        assert_true(early.t > 0.49 - 0.0101 && early.t <= 0.5 + 1e-9);
        assert_true(late.t > 4.99 - 0.0101 && late.t <= 5.0 + 1e-9);
        failed += bodies_out_of_view(out, 2 * i, names[i]) > 0;
        failed += bodies_out_of_view(out, 2 * i + 1, names[i]) > 0;
        print_message("%s at 0.5 s: %s\n", names[i], screenshot_path(names[i]));
        if (strcmp(names[i], "incline.lua") == 0)
            check_incline_floor_drawn_tilted(&early);
        if (strcmp(names[i], "chair.lua") == 0)
            check_chair_drawn_as_a_chair(&early);
        if (strcmp(names[i], "box_on_plane.lua") == 0)
            check_box_on_plane_contacts_shown(&early);
        if (strcmp(names[i], "three_resolvers.lua") == 0)
            check_three_resolvers_labelled(out, 2 * i, &early);
        check_scrubber_note(out, i, names[i]);
    }
    print_message("%d of %d scene views have a body out of view\n", failed, 2 * n);
    assert_int_equal(failed, 0);
}

/* The pantograph scenes, opened without --device, say how to start one (their handle moves
 * with a device only); a scene without a handle says nothing. */
static void test_device_scene_without_device_says_so(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    char script[1024];
    snprintf(script, sizeof script,
             "frames 2\nprint_gui\nscreenshot %s\nopen %s\nframes 2\nprint_gui\n",
             screenshot_path("pantograph_edge.lua"), test_source_path("scenes/point_drop.lua"));
    int rc = run_issim_script(test_source_path("scenes/pantograph_edge.lua"), "", script, out,
                              sizeof out);
    assert_int_equal(rc, 0);
    print_message("pantograph_edge without a device: %s\n", screenshot_path("pantograph_edge.lua"));
    assert_non_null(strstr(require_line(out, "gui ", 0), " device_hint=1 "));
    assert_non_null(strstr(require_line(out, "gui ", 1), " device_hint=0 "));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_scene_without_device_says_so),
        cmocka_unit_test(test_every_scene_keeps_its_bodies_in_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
