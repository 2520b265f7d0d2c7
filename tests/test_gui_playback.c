/* Time around impacts and branches in the GUI (issue 31 items 1 and 6), driven by scripts as a
 * user would (print_playback prints the clock with the wall time it was computed for, so the
 * rate between two frames is checked whatever the machine's pace):
 *  - point_drop's impact (the bar's tip 0.5 m above the floor: sqrt(2 h / g) = 0.319275 s) with
 *    slow motion at 1/10,000 within 2 ms: between any two drawn frames inside the window the
 *    simulated time advanced at most 1/10,000 of the wall time between them; the view shows
 *    states between the 1 ms output frames (the integrator's steps); the time plots and the
 *    timeline mark the impact;
 *  - "pause at next contact" stops at the impact's instant, the bar's tip on the floor;
 *  - a branch: gravity set to -5 m/s^2 at 0.15 s, the display scrubbed back to 0.05 s, Run: asked
 *    where the edit applies from; from its own instant the bar at 0.25 s is where free fall
 *    under 9.81 then 5 m/s^2 switching at the edit puts it; from the scrubbed instant, where the
 *    switch at 0.05 s puts it; the preference answers without asking;
 *  - a video in simulated time at 100x slow motion: one frame per 1/3000 s of simulated time,
 *    each with the time written in its top left corner;
 *  - the panel's controls clicked with the mouse: the slow-motion box ticked, "Pause at next
 *    contact" pressed, the clock stops at the impact;
 *  - the branches preference is kept across sessions in the config folder (the tests' own: a
 *    user's or another test's choice never reaches them), and a file naming no policy is
 *    reported and leaves "ask". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_display_util.h"

static const double impact_time = 0.31927542840705; /* sqrt(2 * 0.5 / 9.81) */

typedef struct Playback {
    double t, clock, wall, slow_rate, window, branch;
    int armed, paused, stops, impacts, asking, edits;
} Playback;

static Playback parse_playback(const char *out, int nth) {
    const char *line = find_line(out, "playback ", nth);
    if (!line)
        fail_msg("no playback line %d in:\n%s", nth, out);
    Playback p;
    double speed;
    int n = sscanf(line,
                   "playback t=%lf clock=%lf wall=%lf speed=%lf slow_rate=%lf window=%lf armed=%d "
                   "paused=%d stops=%d impacts=%d branch=%lf asking=%d",
                   &p.t, &p.clock, &p.wall, &speed, &p.slow_rate, &p.window, &p.armed, &p.paused,
                   &p.stops, &p.impacts, &p.branch, &p.asking);
    assert_int_equal(n, 12);
    return p;
}

static int count_lines(const char *out, const char *prefix) {
    int n = 0;
    while (find_line(out, prefix, n))
        n++;
    return n;
}

static double body_z(const char *out, int nth) {
    const char *line = find_line(out, "body bar ", nth);
    assert_non_null(line);
    double x, y, z;
    assert_int_equal(sscanf(line, "body bar %lf %lf %lf", &x, &y, &z), 3);
    return z;
}

static void test_slow_motion_around_the_impact(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    /* from 0.1 ms before the impact at 1/10,000: the 0.3 ms contact lasts 3 s of wall, the 2 ms
     * window 20 s; 100 frames stay inside it at any frame rate over 5 fps */
    const double rate = 1e-4, window = 2e-3;
    static char script[8192];
    int used = snprintf(script, sizeof script,
                        "plot_window 0.5\nwait_sim 0.2\npause\nseek %.9f\nslow_motion %g %g\nrun\n",
                        impact_time - 1e-4, rate, window);
    for (int k = 0; k < 100; k++)
        used += snprintf(script + used, sizeof script - (size_t)used, "frames 1\nprint_playback\n");
    snprintf(script + used, sizeof script - (size_t)used, "print_plots\nscreenshot %s\nquit\n",
             test_temp_path("_slow.png"));
    assert_int_equal(run_issim_script("scenes/point_drop.lua", NULL, script, out, sizeof out), 0);
    int frames = count_lines(out, "playback ");
    assert_int_equal(frames, 100);
    int inside = 0, between = 0;
    double lo = impact_time - window, hi = impact_time + window;
    for (int k = 0; k + 1 < frames; k++) {
        Playback a = parse_playback(out, k), b = parse_playback(out, k + 1);
        assert_true(b.clock >= a.clock);
        if (a.clock >= lo && b.clock <= hi) {
            inside++;
            double advanced = b.clock - a.clock, wall = b.wall - a.wall;
            if (advanced > rate * wall * (1 + 1e-9) + 1e-12)
                fail_msg("frames %d-%d: %.3g s simulated in %.3g s of wall", k, k + 1, advanced,
                         wall);
        }
        /* the state shown lies between two output frames (1 ms apart): an integrator step */
        double from_grid = fabs(b.t * 1e3 - round(b.t * 1e3));
        between += from_grid > 1e-6;
    }
    Playback last = parse_playback(out, frames - 1);
    print_message("%d frame pairs inside the window, %d of %d frames between output frames, "
                  "clock %.6f -> %.6f s\n",
                  inside, between, frames, parse_playback(out, 0).clock, last.clock);
    assert_true(inside >= 90);
    assert_true(between >= 10);
    assert_int_equal(last.impacts, 1);
    double impact;
    assert_int_equal(sscanf(require_line(out, "impact ", 0), "impact %lf", &impact), 1);
    assert_near(impact, impact_time, 1e-5);
    /* every time plot marks it */
    for (int k = 0; k < 3; k++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "plot_markers %d ", k);
        int n;
        double first;
        assert_int_equal(
            sscanf(require_line(out, prefix, 0) + strlen(prefix), "n=%d first=%lf", &n, &first), 2);
        assert_int_equal(n, 1);
        assert_near(first, impact, 1e-9);
    }
}

static void test_pause_at_next_contact(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    char script[512];
    snprintf(script, sizeof script,
             "pause_at_contact\nwait_paused\nframes 2\nprint_playback\nprint_state\nscreenshot "
             "%s\nquit\n",
             test_temp_path("_contact.png"));
    assert_int_equal(run_issim_script("scenes/point_drop.lua", NULL, script, out, sizeof out), 0);
    Playback p = parse_playback(out, 0);
    double impact;
    assert_int_equal(sscanf(require_line(out, "impact ", 0), "impact %lf", &impact), 1);
    print_message("paused at %.9f s (impact %.9f s), showing t = %.9f, bar z %.6f m\n", p.clock,
                  impact, p.t, body_z(out, 0));
    assert_int_equal(p.paused, 1);
    assert_int_equal(p.armed, 0);
    assert_int_equal(p.stops, 1);
    assert_near(p.clock, impact, 0.0);
    assert_near(impact, impact_time, 1e-5);
    /* the state shown is the integrator's at the impact (it locates the onset): the tip, 0.1 m
     * under the centre, on the floor */
    assert_near(p.t, impact, 1e-12);
    assert_near(body_z(out, 0), 0.1, 1e-6);
}

/* Free fall from z0 = 0.6 m at rest: g1 until the switch, then g2; at t. */
static double fall(double t_switch, double t, double g1, double g2) {
    double v = g1 * t_switch, z = 0.6 - 0.5 * g1 * t_switch * t_switch;
    double d = t - t_switch;
    return z - v * d - 0.5 * g2 * d * d;
}

/* Edits gravity at 0.15 s, scrubs back to 0.05 s and runs with `policy` (ask: the script
 * answers `answer`); the bar's height at 0.25 s and the instants involved. */
typedef struct BranchRun {
    double z, t_shown, t_edit, t_branch;
    bool asked;
} BranchRun;

static BranchRun branch_run(const char *policy, const char *answer, char *out, size_t size) {
    char script[2048];
    snprintf(script, sizeof script,
             "wait_sim 0.16\npause\nseek 0.15\nframes 2\nset universe.gravity 0 0 -5\n"
             "wait_edits\nrun\nwait_sim 0.2\npause\nseek 0.05\nframes 2\nbranch_policy %s\n"
             "run\nframes 3\nprint_playback\n%s%s%s"
             "wait_sim 0.26\npause\nseek 0.25\nframes 3\nprint_state\nscreenshot %s\nquit\n",
             policy, answer ? "branch_answer " : "", answer ? answer : "", answer ? "\n" : "",
             test_temp_path("_branch.png"));
    assert_int_equal(run_issim_script("scenes/point_drop.lua", NULL, script, out, size), 0);
    BranchRun r = {.z = body_z(out, 0), .t_shown = parse_state(out, 0).t};
    const char *accepted = strstr(require_line(out, "edit 1 universe.gravity", 0), "accepted t=");
    assert_non_null(accepted);
    r.t_edit = atof(accepted + strlen("accepted t="));
    const char *ask = require_line(out, "branch ask ", 0);
    assert_int_equal(sscanf(ask, "branch ask t=%lf", &r.t_branch), 1);
    r.asked = parse_playback(out, 0).asking == 1;
    print_message("%s%s%s: edit at %.4f s, branch at %.4f s, bar at %.6f s: z %.6f m\n", policy,
                  answer ? " answered " : "", answer ? answer : "", r.t_edit, r.t_branch, r.t_shown,
                  r.z);
    return r;
}

static void test_branch_from_original_instant(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    BranchRun r = branch_run("original", NULL, out, sizeof out);
    assert_false(r.asked);
    assert_near(r.t_edit, 0.15, 1.5e-3);
    assert_near(r.t_branch, 0.05, 1e-9);
    require_line(out, "branch from=original ", 0);
    require_line(out, "branch replay ", 0);
    /* the edit made again where it was made first */
    assert_non_null(find_line(out, "edit 3 universe.gravity=0 0 -5 accepted", 0));
    const char *again = strstr(require_line(out, "edit 3 universe.gravity", 0), "accepted t=");
    assert_near(atof(again + strlen("accepted t=")), r.t_edit, 1e-9);
    assert_near(r.z, fall(r.t_edit, r.t_shown, 9.81, 5.0), 1e-6);
}

static void test_branch_from_scrubbed_instant(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    BranchRun r = branch_run("scrub", NULL, out, sizeof out);
    assert_false(r.asked);
    require_line(out, "branch from=scrub ", 0);
    /* the edit made again at the branch, on the newest frame at or before it (as every edit) */
    const char *again = strstr(require_line(out, "edit 2 universe.gravity", 0), "accepted t=");
    double t_switch = atof(again + strlen("accepted t="));
    assert_true(t_switch <= r.t_branch && t_switch > r.t_branch - 1.5e-3);
    /* gravity switches there: 7 cm higher than from the edit's instant */
    assert_near(r.z, fall(t_switch, r.t_shown, 9.81, 5.0), 1e-6);
    assert_true(r.z - fall(r.t_edit, r.t_shown, 9.81, 5.0) > 0.05);
}

static void test_branch_asks(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    BranchRun r = branch_run("ask", "original", out, sizeof out);
    /* Run waited for the answer: paused, asking, at the scrubbed instant */
    assert_true(r.asked);
    Playback p = parse_playback(out, 0);
    assert_int_equal(p.paused, 1);
    assert_near(p.clock, 0.05, 1e-9);
    assert_near(r.z, fall(r.t_edit, r.t_shown, 9.81, 5.0), 1e-6);
}

/* The same through the panel with the mouse: the "slow motion at impacts" box ticked and "Pause
 * at next contact" pressed by clicks (their places read in a first run, where point_drop opens
 * with the box ticked at its scene's 1/2000; the second starts it unticked, and its layout is
 * the same while paused at the start, before any impact is known). */
static void test_controls_clicked(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    assert_int_equal(run_issim_script("scenes/point_drop.lua", NULL,
                                      "pause\nframes 5\nprint_playback\nquit\n", out, sizeof out),
                     0);
    Playback opened = parse_playback(out, 0);
    assert_near(opened.slow_rate, 5e-4, 1e-12); /* universe.slow_motion of point_drop.lua */
    assert_near(opened.window, 5e-4, 1e-12);
    double p[4], b[4];
    const char *rects = require_line(out, "playback_rects ", 0);
    char measured[256], clicked[256];
    snprintf(measured, sizeof measured, "%.*s", (int)strcspn(rects, "\n"), rects);
    assert_int_equal(sscanf(rects, "playback_rects pause %lf %lf %lf %lf slow %lf %lf %lf %lf",
                            &p[0], &p[1], &p[2], &p[3], &b[0], &b[1], &b[2], &b[3]),
                     8);
    assert_true(p[2] > 0 && b[2] > 0);
    int px = (int)(p[0] + p[2] / 2), py = (int)(p[1] + p[3] / 2);
    int bx = (int)(b[0] + b[3] / 2), by = (int)(b[1] + b[3] / 2); /* the box, not its label */
    char script[1024];
    snprintf(script, sizeof script,
             "pause\nframes 5\nprint_playback\n"
             "mouse_move %d %d\nframes 2\nclick %d %d\nframes 2\n"
             "mouse_move %d %d\nframes 2\nclick %d %d\nframes 2\nprint_playback\n"
             "run\nwait_paused\nframes 2\nprint_playback\nquit\n",
             bx, by, bx, by, px, py, px, py);
    assert_int_equal(run_issim_script("scenes/point_drop.lua", "--set universe.slow_motion=0",
                                      script, out, sizeof out),
                     0);
    /* the layout clicked is the one measured */
    const char *now = require_line(out, "playback_rects ", 0);
    snprintf(clicked, sizeof clicked, "%.*s", (int)strcspn(now, "\n"), now);
    assert_string_equal(clicked, measured);
    Playback before = parse_playback(out, 0), armed = parse_playback(out, 1),
             stopped = parse_playback(out, 2);
    print_message("clicked: slow_rate %g -> %g, armed %d; stopped at %.9f s\n", before.slow_rate,
                  armed.slow_rate, armed.armed, stopped.clock);
    assert_near(before.slow_rate, 0.0, 0.0);
    assert_near(armed.slow_rate, 1e-3, 1e-9); /* the panel's default rate */
    assert_int_equal(armed.armed, 1);
    assert_int_equal(stopped.paused, 1);
    assert_int_equal(stopped.stops, 1);
    assert_near(stopped.clock, impact_time, 1e-5);
}

typedef struct Probe {
    int frames;
    double duration;
} Probe;

static Probe probe(const char *path) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
             "stream=nb_read_frames:format=duration -of default=noprint_wrappers=1 '%s'",
             path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    Probe r = {0};
    char line[256];
    while (fgets(line, sizeof line, p)) {
        sscanf(line, "nb_read_frames=%d", &r.frames);
        sscanf(line, "duration=%lf", &r.duration);
    }
    assert_int_equal(pclose(p), 0);
    return r;
}

static void test_slow_motion_video_with_time(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    const char *video = test_temp_path("_slow.mp4");
    const char *still = test_temp_path("_slow_frame.png");
    char script[1024];
    snprintf(script, sizeof script,
             "wait_sim 0.3\nvideo_start %s sim 100\nframes 61\n"
             "video_stop\nprint_playback\nquit\n",
             video);
    assert_int_equal(run_issim_script("scenes/point_drop.lua", NULL, script, out, sizeof out), 0);
    const char *stop = require_line(out, "video stop ", 0);
    long frames = 0;
    double seconds = 0;
    const char *at = strstr(stop, "frames=");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "frames=%ld seconds=%lf", &frames, &seconds), 2);
    print_message("%ld frames, %.6f s of simulated time\n", frames, seconds);
    /* each frame 1 / (30 x 100) s of simulated time; the engine keeps up at 0.3 ms a frame */
    assert_true(frames >= 20);
    assert_near(seconds, frames / 3000.0, 1e-9);
    Probe pr = probe(video);
    assert_int_equal(pr.frames, frames);
    /* the overlay: white text on black at the top left of a frame */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ffmpeg -loglevel error -y -i '%s' -vf 'select=eq(n\\,5)' -frames:v 1 '%s'", video,
             still);
    assert_int_equal(system(cmd), 0);
    int w, h, c;
    unsigned char *px = stbi_load(still, &w, &h, &c, 3);
    assert_non_null(px);
    int white = 0, black = 0;
    for (int y = 8; y < 8 + 21; y++) /* the text's band: 7 font rows at scale 3 */
        for (int x = 8; x < 8 + 20 * 18; x++) {
            const unsigned char *p = px + ((size_t)y * w + x) * 3;
            white += p[0] > 200 && p[1] > 200 && p[2] > 200;
            black += p[0] < 40 && p[1] < 40 && p[2] < 40;
        }
    stbi_image_free(px);
    print_message("overlay band: %d white, %d black pixels\n", white, black);
    assert_true(white > 300);
    assert_true(black > 1000);
}

static const char *policy_of(const char *out, int nth) {
    const char *line = find_line(out, "playback ", nth);
    assert_non_null(line);
    const char *at = strstr(line, " policy=");
    assert_non_null(at);
    return at + strlen(" policy=");
}

static void test_branch_preference_kept(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    char path[1024];
    snprintf(path, sizeof path, "%s/issim/branches", getenv("XDG_CONFIG_HOME"));
    remove(path);
    /* never chosen: ask; chosen in one session... */
    assert_int_equal(run_issim_script("scenes/point_drop.lua", NULL,
                                      "print_playback\nbranch_policy original\nquit\n", out,
                                      sizeof out),
                     0);
    assert_int_equal(strncmp(policy_of(out, 0), "ask ", 4), 0);
    /* ...the next starts with it, and answers a branch without asking */
    assert_int_equal(run_issim_script("scenes/point_drop.lua", NULL,
                                      "print_playback\nwait_sim 0.16\npause\nseek 0.15\nframes 2\n"
                                      "set universe.gravity 0 0 -5\nwait_edits\nseek 0.05\n"
                                      "frames 2\nrun\nframes 3\nprint_playback\nquit\n",
                                      out, sizeof out),
                     0);
    assert_int_equal(strncmp(policy_of(out, 0), "original ", 9), 0);
    assert_non_null(require_line(out, "branch ask ", 0));
    assert_non_null(require_line(out, "branch from=original", 0));
    assert_int_equal(parse_playback(out, 1).asking, 0);
    /* a file naming no policy: said, and asking */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("sideways\n", f);
    fclose(f);
    assert_int_equal(run_issim_script("scenes/point_drop.lua", "2>&1", "print_playback\nquit\n",
                                      out, sizeof out),
                     0);
    assert_int_equal(strncmp(policy_of(out, 0), "ask ", 4), 0);
    assert_non_null(strstr(out, "'sideways' is not a branches preference (ask, scrub, original)"));
    remove(path);
}

int main(void) {
    /* the preference scripts set (branch_policy) is kept in this folder, not the user's */
    const char *config = test_temp_path(".config");
    if (mkdir(config, 0755) != 0) {
        perror(config);
        return 1;
    }
    setenv("XDG_CONFIG_HOME", config, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_motion_around_the_impact),
        cmocka_unit_test(test_pause_at_next_contact),
        cmocka_unit_test(test_branch_from_original_instant),
        cmocka_unit_test(test_branch_from_scrubbed_instant),
        cmocka_unit_test(test_branch_asks),
        cmocka_unit_test(test_slow_motion_video_with_time),
        cmocka_unit_test(test_controls_clicked),
        cmocka_unit_test(test_branch_preference_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
