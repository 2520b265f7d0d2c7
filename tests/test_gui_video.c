/* Video of the 3D view (issue 17): `video_start` pipes frames to Debian's ffmpeg, which writes
 * H.264 in MP4. Two seconds recorded at the display's pace make a two-second video of 30
 * frames per second at the view's size; in simulated time at speed 0.5, one simulated second
 * (two wall seconds) makes a one-second video. ffprobe reads the files back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_display_util.h"

typedef struct Probe {
    char codec[32];
    int width, height, frames;
    double duration;
} Probe;

static Probe probe(const char *path) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
             "stream=codec_name,width,height,nb_read_frames:format=duration -of "
             "default=noprint_wrappers=1 '%s'",
             path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    Probe r = {0};
    char line[256];
    while (fgets(line, sizeof line, p)) {
        sscanf(line, "codec_name=%31s", r.codec);
        sscanf(line, "width=%d", &r.width);
        sscanf(line, "height=%d", &r.height);
        sscanf(line, "nb_read_frames=%d", &r.frames);
        sscanf(line, "duration=%lf", &r.duration);
    }
    if (pclose(p) != 0)
        fail_msg("ffprobe failed on %s (is ffmpeg installed? tools/bootstrap.sh)", path);
    return r;
}

static void test_two_seconds_to_mp4(void **state) {
    (void)state;
    char out[GUI_OUTPUT_MAX], script[1024];
    const char *wall = test_temp_path(".mp4"), *sim = test_temp_path(".mp4");
    snprintf(script, sizeof script,
             "frames 2\nprint_state\nvideo_start %s\nwait 2\nvideo_stop\n"
             "speed 0.5\nframes 2\nprint_state\nvideo_start %s sim\nwait 2.0\nvideo_stop\n"
             "print_state\n",
             wall, sim);
    /* at the speed factor: point_drop's slow motion at impacts is off (a slow-motion video is
     * test_gui_playback's) */
    assert_int_equal(run_issim_script(test_source_path("scenes/point_drop.lua"),
                                      "--set universe.slow_motion=0", script, out, sizeof out),
                     0);
    assert_non_null(find_line(out, "video stop ", 0));
    assert_non_null(strstr(find_line(out, "video stop ", 0), " ok"));
    assert_non_null(strstr(find_line(out, "video stop ", 1), " ok"));
    ShownState view = parse_state(out, 0);
    Probe a = probe(wall);
    print_message("wall: %s %dx%d, %d frames, %.3f s\n", a.codec, a.width, a.height, a.frames,
                  a.duration);
    assert_string_equal(a.codec, "h264");
    assert_int_equal(a.width, view.view_w & ~1);
    assert_int_equal(a.height, view.view_h & ~1);
    /* 30 per second of wall time: the span between the script's video_start and video_stop,
     * at least the 2 s it waited and more by the last frame's time (0.13 s beside a busy loop) */
    double span = atof(strstr(find_line(out, "video stop ", 0), "seconds=") + 8);
    print_message("wall span %.3f s\n", span);
    assert_true(span > 1.95 && span < 3.0);
    assert_true(abs(a.frames - (int)ceil(span * 30)) <= 1);
    assert_true(fabs(a.duration - span) < 0.07);
    /* Simulated time: the clock at 0.5x for 2 wall seconds is about 1 simulated second. */
    double t0 = parse_state(out, 1).t, t1 = parse_state(out, 2).t;
    Probe b = probe(sim);
    print_message("sim: %d frames, %.3f s of video for %.3f simulated s\n", b.frames, b.duration,
                  t1 - t0);
    assert_true(t1 - t0 > 0.7 && t1 - t0 < 1.3);
    assert_true(b.frames >= (int)((t1 - t0) * 30) - 3 && b.frames <= (int)((t1 - t0) * 30) + 3);
    remove(wall);
    remove(sim);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_seconds_to_mp4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
