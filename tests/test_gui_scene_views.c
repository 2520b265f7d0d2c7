/* Every scene shows its point when opened (issue 31 item 7): opened with its own camera, the
 * scene's bodies are in view at 0.5 s and at 5 s of simulated time. The check uses the
 * renderer's own projection (the camera and 3D view print_state reports): every body's centre
 * lies in front of the eye and projects inside the 3D view. The clock runs at SPEED_UP times the
 * scene's speed so the 5 s are reached within the test's time; the camera does not depend on
 * the speed. */
#include <dirent.h>
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
    {"pantograph_textures.lua", "drives a haptic device: its handle moves only with a device"},
    /* CI's ASan run beside a busy loop took over the script's 60 s wait to reach 5 s */
    {"pile.lua", "240 bodies: 5 s simulated take over a minute under sanitizers"},
    {"pile_internal_friction.lua", "240 bodies: 5 s simulated take over a minute under "
                                   "sanitizers"},
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

static int compare_names(const void *a, const void *b) {
    return strcmp(a, b);
}

static int list_scenes(char names[][256]) {
    DIR *dir = opendir(test_source_path("scenes"));
    assert_non_null(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && n < MAX_SCENES) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".lua") == 0 && !skipped(e->d_name))
            snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    return n;
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

static void test_every_scene_keeps_its_bodies_in_view(void **state) {
    (void)state;
    static char names[MAX_SCENES][256];
    int n = list_scenes(names);
    assert_true(n >= 10);
    static char script[MAX_SCENES * 1024], out[8 * GUI_OUTPUT_MAX];
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "scenes/%.250s", names[i]);
        used += (size_t)snprintf(script + used, sizeof script - used,
                                 "open %s\nspeed %g\npause_at 0.5\nwait_sim 0.49\npause\n"
                                 "frames 1\nprint_state\npause_at 5\nrun\nwait_sim 4.99\npause\n"
                                 "frames 1\nprint_state\n",
                                 test_source_path(path), SPEED_UP);
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
    }
    print_message("%d of %d scene views have a body out of view\n", failed, 2 * n);
    assert_int_equal(failed, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_scene_keeps_its_bodies_in_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
