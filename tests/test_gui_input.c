/* Input that must not be lost or misread (issue 31 item 4), through the `issim` executable
 * under SDL's offscreen driver: Tab in a property field commits the typed value and moves to
 * the next field; letters typed after a click in a panel are no shortcuts; 'nan' says why it
 * (and 'inf', 'abc') is refused; the result line leaves the table where it was; the File menu's
 * Recent list outlives the session, its Save asks once, Save as and Open do what they say; two
 * clicks within one slow frame both count, and a double-click in the launcher opens its scene. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_display_util.h"

/* The layout is fixed (gui.h): the mass field is the property table's first row. */
static const char *select_bar_and_click_mass = "wait_sim 0.1\nselect bar\nframes 3\n"
                                               "mouse_move 180 508\nframes 2\nclick 180 508\n"
                                               "frames 2\n";

static double field(const char *line, const char *key) {
    const char *at = strstr(line, key);
    if (!at)
        fail_msg("no %s in: %s", key, line);
    return atof(at + strlen(key));
}

/* A config folder of the test's own: the recent list is the user's otherwise. */
static void own_config_dir(void) {
    const char *dir = test_temp_path(".config");
    assert_int_equal(mkdir(dir, 0755), 0);
    setenv("XDG_CONFIG_HOME", dir, 1);
}

static void test_tab_commits_and_moves_on(void **state) {
    (void)state;
    char out[GUI_OUTPUT_MAX], script[1024];
    const char *shot = test_temp_path(".png");
    snprintf(script, sizeof script,
             "fps 20\n%s"
             "type 2.5\nframes 1\ntap tab\nframes 3\ntype 0.01 0.01 0.001\nframes 1\n"
             "tap tab\nframes 3\nwait_edits\nprint_gui\nprint_state\nscreenshot %s\n",
             select_bar_and_click_mass, shot);
    assert_int_equal(
        run_issim_script(test_source_path("scenes/point_drop.lua"), "", script, out, sizeof out),
        0);
    /* The mass was sent by the first Tab, the inertia (the next row) by the second. */
    assert_non_null(strstr(require_line(out, "edit ", 0), "bar.mass=2.5 accepted"));
    assert_non_null(strstr(require_line(out, "edit ", 1), "bar.inertia=0.01 0.01 0.001 accepted"));
    /* Tab in a field hid nothing. */
    assert_int_equal((int)field(require_line(out, "state ", 0), " panels="), 1);
    Image im = load_png(shot);
    const unsigned char *panel = pixel(&im, 60, 300); /* the Things header, still drawn */
    assert_true(panel[0] + panel[1] + panel[2] > 60);
    stbi_image_free(im.rgb);
    remove(shot);
}

static void test_letters_after_a_panel_click_are_no_shortcuts(void **state) {
    (void)state;
    char out[GUI_OUTPUT_MAX];
    /* A click on the panel beside the fields (a missed click), then "bar.vel" and space. The
     * clock at the speed factor: point_drop's slow motion at impacts is off, or the 0.3 s
     * waited over its impact at 0.319 s would show 2 ms of it. */
    const char *script = "wait_sim 0.2\nselect bar\nframes 3\n"
                         "mouse_move 170 240\nframes 2\nclick 170 240\nframes 2\nprint_state\n"
                         "key b\nframes 1\nkey a\nframes 1\nkey r\nframes 1\nkey .\nframes 1\n"
                         "key v\nframes 1\nkey e\nframes 1\nkey l\nframes 1\nkey space\n"
                         "frames 1\nkey tab\nframes 1\nkey s\nframes 3\nwait 0.3\nprint_state\n"
                         /* a click in the view gives the shortcuts back */
                         "mouse_move 640 200\nframes 2\nclick 640 200\nframes 2\nkey r\n"
                         "frames 3\nprint_state\n";
    assert_int_equal(run_issim_script(test_source_path("scenes/point_drop.lua"),
                                      "--set universe.slow_motion=0", script, out, sizeof out),
                     0);
    const char *before = require_line(out, "state ", 0), *after = require_line(out, "state ", 1);
    print_message("t %.3f -> %.3f\n", field(before, "state t="), field(after, "state t="));
    assert_true(field(after, "state t=") > field(before, "state t=") + 0.2);
    assert_true(field(after, " state_time=") > field(before, " state_time="));
    assert_int_equal((int)field(after, " resets="), 0);
    assert_int_equal((int)field(after, " paused="), 0);
    assert_int_equal((int)field(after, " panels="), 1);
    assert_int_equal((int)field(require_line(out, "state ", 2), " resets="), 1);
}

static void test_nan_says_why_and_the_table_stays(void **state) {
    (void)state;
    char out[GUI_OUTPUT_MAX], script[1024];
    const char *before = test_temp_path(".png"), *after = test_temp_path(".png");
    snprintf(script, sizeof script,
             "%sprint_gui\nscreenshot %s\ntype nan\nframes 1\nkey return\nframes 3\n"
             "print_gui\nscreenshot %s\nmouse_move 180 508\nframes 2\nclick 180 508\nframes 2\n"
             "type abc\nframes 1\nkey return\nframes 3\nmouse_move 180 508\nframes 2\n"
             "click 180 508\nframes 2\ntype inf\nframes 1\nkey return\nframes 3\n",
             select_bar_and_click_mass, before, after);
    assert_int_equal(
        run_issim_script(test_source_path("scenes/point_drop.lua"), "", script, out, sizeof out),
        0);
    assert_non_null(
        strstr(require_line(out, "edit invalid: ", 0), "bar.mass: 'nan' is not a finite number"));
    assert_non_null(
        strstr(require_line(out, "edit invalid: ", 1), "bar.mass: 'abc' is not a number"));
    assert_non_null(
        strstr(require_line(out, "edit invalid: ", 2), "bar.mass: 'inf' is not a finite number"));
    assert_null(find_line(out, "edit 1 ", 0)); /* nothing was sent */
    double y0 = field(require_line(out, "gui ", 0), "property_table_y=");
    double y1 = field(require_line(out, "gui ", 1), "property_table_y=");
    assert_true(y0 > 0);
    assert_true(y0 == y1);
    /* The property names' column, pixel for pixel, from the table's top down. */
    Image a = load_png(before), b = load_png(after);
    int differ = 0;
    for (int y = (int)y0; y < 680; y++)
        for (int x = 4; x < 100; x++)
            differ += memcmp(pixel(&a, x, y), pixel(&b, x, y), 3) != 0;
    assert_int_equal(differ, 0);
    stbi_image_free(a.rgb);
    stbi_image_free(b.rgb);
    remove(before);
    remove(after);
}

static void test_recent_persists(void **state) {
    (void)state;
    own_config_dir();
    char out[GUI_OUTPUT_MAX], script[2048];
    snprintf(script, sizeof script, "open %s\nframes 2\nopen %s\nframes 2\n",
             test_source_path("scenes/point_drop.lua"),
             test_source_path("scenes/box_on_plane.lua"));
    assert_int_equal(
        run_issim_script(test_source_path("scenes/chair.lua"), "", script, out, sizeof out), 0);
    assert_non_null(strstr(require_line(out, "open ", 2), "box_on_plane.lua ok"));
    /* A new session: File > Recent lists them, newest first; its second entry opens. */
    const char *again = "frames 2\nprint_gui\nmouse_move 25 10\nframes 2\nclick 25 10\nframes 3\n"
                        "mouse_move 60 52\nframes 3\nmouse_move 300 68\nframes 3\n"
                        "click 300 68\nframes 3\n";
    assert_int_equal(
        run_issim_script(test_source_path("scenes/point_drop.lua"), "", again, out, sizeof out), 0);
    assert_non_null(strstr(require_line(out, "recent 0 ", 0), "/scenes/point_drop.lua"));
    assert_non_null(strstr(require_line(out, "recent 1 ", 0), "/scenes/box_on_plane.lua"));
    assert_non_null(strstr(require_line(out, "recent 2 ", 0), "/scenes/chair.lua"));
    const char *opened = require_line(out, "open ", 1);
    assert_true(opened[5] == '/'); /* the absolute path the list keeps */
    assert_non_null(strstr(opened, "box_on_plane.lua ok"));
    unsetenv("XDG_CONFIG_HOME");
}

/* Ctrl+O opens the path field holding the current scene's path, wholly selected: what is typed
 * replaces it. Before, the typed path was appended to the old one ("...point_drop.luascenes/..."),
 * so a second Ctrl+O always failed. */
static void test_ctrl_o_replaces_the_path(void **state) {
    (void)state;
    char out[GUI_OUTPUT_MAX];
    const char *script = "frames 3\nkey ctrl+o\nframes 3\ntype scenes/box_on_plane.lua\nframes 1\n"
                         "key return\nframes 4\nkey ctrl+o\nframes 3\ntype scenes/chair.lua\n"
                         "frames 1\nkey return\nframes 4\n";
    assert_int_equal(
        run_issim_script(test_source_path("scenes/point_drop.lua"), "", script, out, sizeof out),
        0);
    const char *first = "open scenes/box_on_plane.lua ok\n", *second = "open scenes/chair.lua ok\n";
    assert_int_equal(strncmp(require_line(out, "open ", 1), first, strlen(first)), 0);
    assert_int_equal(strncmp(require_line(out, "open ", 2), second, strlen(second)), 0);
    assert_null(find_line(out, "open ", 3));
}

/* Reads a whole (small) file into buf; false when it cannot be read. */
static bool read_text(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return true;
}

/* The File menu's rows (gui.cpp menu_bar), under "File" at (25, 10). */
#define FILE_MENU "mouse_move 25 10\nframes 2\nclick 25 10\nframes 3\n"
#define MENU_ROW(y) "mouse_move 40 " #y "\nframes 3\nclick 40 " #y "\nframes 3\n"

/* File > Save asks where the first time, then writes there without asking; Save as writes
 * elsewhere; Open opens what is typed into its field (the old path selected, so replaced). */
static void test_file_menu_open_save_save_as(void **state) {
    (void)state;
    own_config_dir();
    char out[GUI_OUTPUT_MAX], script[4096], first[256], second[256], text[8192];
    snprintf(first, sizeof first, "%s", test_temp_path(".lua"));
    snprintf(second, sizeof second, "%s", test_temp_path(".lua"));
    snprintf(script, sizeof script,
             "wait_sim 0.05\nset bar.mass 2\nwait_edits\n" FILE_MENU MENU_ROW(
                 67) "type %s\nframes 1\nkey return\nframes 4\n"
                     /* the second Save: no question, the same file, the new mass */
                     "set bar.mass 3\nwait_edits\n" FILE_MENU MENU_ROW(
                         67) "type %s\nframes 1\n"
                             "frames 3\n" FILE_MENU MENU_ROW(
                                 84) "type %s\nframes 1\nkey return\nframes 4\n" FILE_MENU
                                 MENU_ROW(33) "type %s\nframes 1\nkey return\nframes 4\n",
             first, second, second, test_source_path("scenes/chair.lua"));
    assert_int_equal(
        run_issim_script(test_source_path("scenes/point_drop.lua"), "", script, out, sizeof out),
        0);
    /* Save wrote the first file with the mass of the second Save (3 kg): it did not ask again
     * (the path typed then went nowhere, so the second file is Save as's). */
    assert_true(read_text(first, text, sizeof text));
    assert_non_null(strstr(text, "mass = 3,"));
    assert_true(read_text(second, text, sizeof text));
    assert_non_null(strstr(text, "mass = 3,"));
    assert_non_null(strstr(text, "edited in the GUI: bar.mass=2; bar.mass=3"));
    assert_non_null(strstr(require_line(out, "open ", 1), "chair.lua ok"));
    assert_null(find_line(out, "open ", 2));
    remove(first);
    remove(second);
    unsetenv("XDG_CONFIG_HOME");
}

static void test_clicks_within_one_slow_frame(void **state) {
    (void)state;
    char out[GUI_OUTPUT_MAX];
    /* Step (S) twice in one frame at 5 fps: two output steps; then a double-click on
     * box_on_plane (the launcher's sixth name) within one frame opens it. Slow motion off:
     * point_drop's first impact falls at 0.32 s, and a pause inside its window stops the
     * display between output steps, so the first step only reaches the next one. */
    const char *script = "wait_sim 0.1\npause\nframes 2\nprint_state\nfps 5\n"
                         "mouse_move 1067 80\nframes 2\nclicks 2 1067 80\nframes 4\nprint_state\n"
                         "mouse_move 60 184\nframes 2\nclicks 2 60 184\nframes 4\n";
    assert_int_equal(run_issim_script(test_source_path("scenes/point_drop.lua"),
                                      "--set universe.slow_motion=0", script, out, sizeof out),
                     0);
    double t0 = field(require_line(out, "state ", 0), "state t=");
    double t1 = field(require_line(out, "state ", 1), "state t=");
    print_message("two steps: %.4f -> %.4f\n", t0, t1);
    assert_near(t1 - t0, 2 * 0.001, 1e-9); /* point_drop's output step: 1 ms */
    assert_non_null(strstr(require_line(out, "open ", 1), "box_on_plane.lua ok"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tab_commits_and_moves_on),
        cmocka_unit_test(test_letters_after_a_panel_click_are_no_shortcuts),
        cmocka_unit_test(test_nan_says_why_and_the_table_stays),
        cmocka_unit_test(test_recent_persists),
        cmocka_unit_test(test_ctrl_o_replaces_the_path),
        cmocka_unit_test(test_file_menu_open_save_save_as),
        cmocka_unit_test(test_clicks_within_one_slow_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
