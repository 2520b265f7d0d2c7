/* Every scene in scenes/ is worth opening (issue 17). The launcher lists every scene with its
 * description (the scene file's own), and F1 shows the help over the view, Esc closes it.
 * Each scene, opened in the GUI, run for half a second of wall time and paused, its 3D view shows
 * its bodies. The view is shot twice, with the bodies and without them (toggle bodies off): the
 * pixels that differ inside the 3D view are the bodies' on-screen area, which must be a visible
 * part of the view, not a speck or nothing (a bar that left the view, a block seen from metres
 * away). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/io.h"
#include "test_display_util.h"

#define MAX_SCENES 64

/* Share of the view the bodies must cover: 0.2 % is about 800 pixels of a 600 x 676 view. */
#define MIN_BODY_SHARE 0.002

static double differing(const char *a_path, const char *b_path, int x0, int y0, int x1, int y1);

/* The bodies' share of the 3D view: the pixels that differ with and without them. */
static double body_share(const char *with, const char *without, const ShownState *s) {
    return differing(with, without, s->view_x, s->view_y, s->view_x + s->view_w,
                     s->view_y + s->view_h);
}

static void test_every_scene_shows_its_bodies(void **state) {
    (void)state;
    static char names[MAX_SCENES][256], shots[MAX_SCENES][2][512];
    int n = test_list_scenes(names, MAX_SCENES, NULL);
    assert_true(n >= 10);
    static char script[MAX_SCENES * 2048], out[4 * GUI_OUTPUT_MAX];
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++)
            snprintf(shots[i][k], sizeof shots[i][k], "%.500s", test_temp_path(".png"));
        char path[512];
        snprintf(path, sizeof path, "scenes/%.250s", names[i]);
        used += (size_t)snprintf(script + used, sizeof script - used,
                                 "open %s\nwait 0.5\npause\nframes 2\nprint_state\n"
                                 "screenshot %s\ntoggle bodies off\nframes 1\nscreenshot %s\n"
                                 "toggle bodies on\n",
                                 test_source_path(path), shots[i][0], shots[i][1]);
    }
    int rc =
        run_issim_script(test_source_path("scenes/point_drop.lua"), "", script, out, sizeof out);
    assert_int_equal(rc, 0);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        ShownState s = parse_state(out, i);
        double share = body_share(shots[i][0], shots[i][1], &s);
        print_message("%-32s t = %8.4f s  bodies cover %6.2f %% of the view\n", names[i], s.t,
                      100.0 * share);
        failed += share < MIN_BODY_SHARE;
        remove(shots[i][0]);
        remove(shots[i][1]);
    }
    assert_int_equal(failed, 0);
}

/* Share of the pixels in the window's rectangle [x0, x1) x [y0, y1) that differ. */
static double differing(const char *a_path, const char *b_path, int x0, int y0, int x1, int y1) {
    Image a = load_png(a_path), b = load_png(b_path);
    int differ = 0, total = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            const unsigned char *p = pixel(&a, x, y), *q = pixel(&b, x, y);
            differ += abs(p[0] - q[0]) + abs(p[1] - q[1]) + abs(p[2] - q[2]) > 30;
            total++;
        }
    stbi_image_free(a.rgb);
    stbi_image_free(b.rgb);
    return (double)differ / total;
}

static void test_launcher_descriptions_and_help(void **state) {
    (void)state;
    char script[2048], out[GUI_OUTPUT_MAX];
    char shots[3][512];
    for (int k = 0; k < 3; k++)
        snprintf(shots[k], sizeof shots[k], "%s", test_temp_path(".png"));
    snprintf(script, sizeof script,
             "pause\nframes 3\nscreenshot %s\nkey f1\nframes 3\nscreenshot %s\n"
             "key escape\nframes 3\nscreenshot %s\nprint_scenes\n",
             shots[0], shots[1], shots[2]);
    /* From the source folder: the launcher lists ./scenes. */
    char cmd_scene[512];
    snprintf(cmd_scene, sizeof cmd_scene, "%s", test_source_path("scenes/point_drop.lua"));
    assert_int_equal(run_issim_script(cmd_scene, "", script, out, sizeof out), 0);
    /* The help covers the middle of the window, and goes away again. */
    double shown = differing(shots[0], shots[1], 440, 240, 840, 480);
    double closed = differing(shots[0], shots[2], 440, 240, 840, 480);
    print_message("help: %.1f %% of the middle changed; closed: %.1f %%\n", 100 * shown,
                  100 * closed);
    assert_true(shown > 0.2);
    assert_true(closed < 0.01);
    for (int k = 0; k < 3; k++)
        remove(shots[k]);
    /* Every scene, with the description its file gives. */
    static char names[MAX_SCENES][256];
    int n = test_list_scenes(names, MAX_SCENES, NULL);
    for (int i = 0; i < n; i++) {
        char prefix[300], path[300];
        snprintf(prefix, sizeof prefix, "scene scenes/%.250s | ", names[i]);
        const char *line = find_line(out, prefix, 0);
        if (!line)
            fail_msg("the launcher does not list %s:\n%s", names[i], out);
        snprintf(path, sizeof path, "scenes/%.250s", names[i]);
        ThingDb *db = NULL;
        IssimError err = {0};
        assert_int_equal(scene_load_file(test_source_path(path), NULL, &db, &err), ISSIM_OK);
        const char *d = thing_string(db, thingdb_find_kind(db, THING_UNIVERSE), "description");
        assert_true(strlen(d) > 20);
        assert_int_equal(strncmp(line + strlen(prefix), d, strlen(d)), 0);
        thingdb_destroy(db);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launcher_descriptions_and_help),
        cmocka_unit_test(test_every_scene_shows_its_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
