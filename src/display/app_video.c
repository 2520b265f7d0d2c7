/* Video of the 3D view (issue 17): every frame written goes to an ffmpeg process (Debian's
 * ffmpeg, started through a pipe: raw RGB in, H.264 MP4 out). The video runs at
 * APP_VIDEO_FPS either in wall time (what the user saw, at the display's pace: a frame is
 * repeated when the display drew fewer) or in simulated time (one video second per simulated
 * second, whatever the display's rate: slow scenes play at their true speed).
 *
 * In simulated time at a slow-motion factor S > 1 (issue 31 item 1) the video drives the clock:
 * it stays paused and moves 1 / (30 S) s a frame once the engine has computed that instant, so
 * a 0.3 ms impact recorded at S = 1000 lasts 9 frames, each its own instant (the engine's states
 * between output steps are kept for it, sim_set_keep_steps). Every frame of a simulated-time
 * video carries the time it shows and the factor, drawn into its pixels (the ImGui panels are
 * not in the video). Display thread only. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app_internal.h"

bool app_video_start(App *app, const char *path, bool sim_time, double slow) {
    AppVideo *v = &app->video;
    if (v->pipe || !app->win.window)
        return false;
    /* H.264 wants even sizes; the view's rectangle as it is now (a resize later is cropped). */
    v->width = app->win.view_w & ~1;
    v->height = app->win.view_h & ~1;
    v->x = app->win.view_x;
    v->y = app->win.height - app->win.view_y - app->win.view_h + (app->win.view_h & 1);
    v->pixels = malloc((size_t)v->width * v->height * 3);
    if (!v->pixels || v->width < 2 || v->height < 2) {
        free(v->pixels);
        v->pixels = NULL;
        issim_log(ISSIM_LOG_ERROR, "video %s: no view to record", path);
        return false;
    }
    /* A dead ffmpeg must not take the window with it: writes then fail with EPIPE. */
    signal(SIGPIPE, SIG_IGN);
    char cmd[GUI_PATH_MAX + 300];
    snprintf(cmd, sizeof cmd,
             "ffmpeg -hide_banner -loglevel error -y -f rawvideo -pix_fmt rgb24 -s %dx%d -r %d "
             "-i - -vf vflip -c:v libx264 -preset veryfast -pix_fmt yuv420p '%s'",
             v->width, v->height, APP_VIDEO_FPS, path);
    v->pipe = popen(cmd, "w");
    if (!v->pipe) {
        issim_log(ISSIM_LOG_ERROR, "video %s: cannot start ffmpeg: %s", path, strerror(errno));
        free(v->pixels);
        v->pixels = NULL;
        return false;
    }
    issim_strlcpy(v->path, path, sizeof v->path);
    v->sim_time = sim_time;
    v->slow = sim_time && slow > 1.0 && app->session.sim ? slow : 1.0;
    v->start = sim_time ? app->session.frame_time : issim_wall_time();
    if (v->slow > 1.0) { /* the clock is the video's from here */
        v->start = sim_display_time(app->session.sim);
        sim_set_paused(app->session.sim, true);
        sim_set_keep_steps(app->session.sim, true);
    }
    v->frames = 0;
    v->failed = false;
    issim_log(ISSIM_LOG_INFO, "video %s: %dx%d at %d fps of %s time (slow motion %gx)", path,
              v->width, v->height, APP_VIDEO_FPS, sim_time ? "simulated" : "wall", v->slow);
    return true;
}

static double video_clock(const App *app) {
    const AppVideo *v = &app->video;
    if (v->slow > 1.0) /* the span recorded, in simulated time */
        return v->start + (double)v->frames / (APP_VIDEO_FPS * v->slow);
    return v->sim_time ? app->session.frame_time : issim_wall_time();
}

/* ===== The time overlay: a 5 x 7 pixel font, drawn into the frame's pixels ===== */

static const char overlay_chars[] = "0123456789.=ts/x -";
static const unsigned char overlay_font[][7] = {
    {14, 17, 19, 21, 25, 17, 14}, {4, 12, 4, 4, 4, 4, 14},   {14, 17, 1, 2, 4, 8, 31},
    {31, 2, 4, 2, 1, 17, 14},     {2, 6, 10, 18, 31, 2, 2},  {31, 16, 30, 1, 1, 17, 14},
    {6, 8, 16, 30, 17, 17, 14},   {31, 1, 2, 4, 8, 8, 8},    {14, 17, 17, 14, 17, 17, 14},
    {14, 17, 17, 15, 1, 2, 12},   {0, 0, 0, 0, 0, 12, 12},   {0, 0, 31, 0, 31, 0, 0},
    {8, 8, 28, 8, 8, 9, 6},       {0, 0, 14, 16, 14, 1, 30}, {1, 1, 2, 4, 8, 16, 16},
    {0, 0, 17, 10, 4, 10, 17},    {0, 0, 0, 0, 0, 0, 0},     {0, 0, 0, 31, 0, 0, 0}};

/* One character at (x, y) (top left, image rows from the top), `scale` pixels a font pixel,
 * white on a black box. pixels are GL's: bottom row first. */
static void overlay_char(AppVideo *v, char c, int x, int y, int scale) {
    const char *at = strchr(overlay_chars, c);
    if (!at || !c)
        return;
    const unsigned char *rows = overlay_font[at - overlay_chars];
    for (int fy = -1; fy < 8; fy++)
        for (int fx = -1; fx < 6; fx++) {
            bool on = fy >= 0 && fy < 7 && fx >= 0 && fx < 5 && (rows[fy] >> (4 - fx)) & 1;
            for (int sy = 0; sy < scale; sy++)
                for (int sx = 0; sx < scale; sx++) {
                    int px = x + fx * scale + sx, py = y + fy * scale + sy;
                    if (px < 0 || py < 0 || px >= v->width || py >= v->height)
                        continue;
                    unsigned char *p =
                        v->pixels + ((size_t)(v->height - 1 - py) * v->width + px) * 3;
                    p[0] = p[1] = p[2] = on ? 255 : 0;
                }
        }
}

/* "t=0.319275 s 1/1000x" at the top left of the frame. */
static void overlay_time(AppVideo *v, double t) {
    char text[64];
    if (v->slow > 1.0)
        snprintf(text, sizeof text, "t=%.6f s 1/%gx", t, v->slow);
    else
        snprintf(text, sizeof text, "t=%.6f s", t);
    int scale = v->height >= 480 ? 3 : 2;
    for (int k = 0; text[k]; k++)
        overlay_char(v, text[k], 8 + k * 6 * scale, 8, scale);
}

/* The picture in v->pixels until the video holds `due` frames. */
static void write_frames(AppVideo *v, long due) {
    size_t bytes = (size_t)v->width * v->height * 3;
    for (; v->frames < due; v->frames++)
        if (fwrite(v->pixels, 1, bytes, v->pipe) != bytes) {
            v->failed = true;
            issim_log(ISSIM_LOG_ERROR, "video %s: ffmpeg stopped taking frames", v->path);
            return;
        }
}

static void read_view(App *app) {
    AppVideo *v = &app->video;
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(v->x, v->y, v->width, v->height, GL_RGB, GL_UNSIGNED_BYTE, v->pixels);
    if (v->sim_time)
        overlay_time(v, app->session.frame_time);
}

/* Slow motion: the view shows the frame's instant once the engine has computed it (the clock
 * stands there, paused); it is written and the clock moves to the next frame's instant. */
static void drive_slow_motion(App *app) {
    AppVideo *v = &app->video;
    Sim *sim = app->session.sim;
    if (!sim)
        return;
    double due = video_clock(app);
    if (sim_display_time(sim) == due && registry_state_time(app->session.reg) >= due) {
        read_view(app);
        write_frames(v, v->frames + 1);
        due = video_clock(app);
    }
    if (sim_display_time(sim) != due) {
        sim_set_paused(sim, true);
        sim_seek(sim, due);
    }
}

/* After the 3D view is drawn: as many frames as the video's clock asks for by now. */
void app_video_frame(App *app) {
    AppVideo *v = &app->video;
    if (!v->pipe || v->failed)
        return;
    if (v->slow > 1.0) {
        drive_slow_motion(app);
        return;
    }
    long due = (long)floor((video_clock(app) - v->start) * APP_VIDEO_FPS) + 1;
    if (due <= v->frames)
        return;
    read_view(app);
    write_frames(v, due);
}

/* The file's size so far (the panel shows it while recording). */
long long app_video_bytes(const App *app) {
    struct stat st;
    return app->video.pipe && stat(app->video.path, &st) == 0 ? (long long)st.st_size : 0;
}

void app_video_stop(App *app) {
    AppVideo *v = &app->video;
    if (!v->pipe)
        return;
    /* The last picture held to the stop instant: a slow last frame (100 ms and more under load)
     * would otherwise cut the video short of the time it recorded. */
    double span = video_clock(app) - v->start;
    if (v->frames > 0 && !v->failed && v->slow <= 1.0)
        write_frames(v, (long)ceil(span * APP_VIDEO_FPS));
    if (v->slow > 1.0 && app->session.sim)
        sim_set_keep_steps(app->session.sim, false);
    int status = pclose(v->pipe);
    v->pipe = NULL;
    free(v->pixels);
    v->pixels = NULL;
    bool ok = !v->failed && status == 0;
    if (ok)
        issim_log(ISSIM_LOG_INFO, "video %s: %ld frames", v->path, v->frames);
    else
        issim_log(ISSIM_LOG_ERROR, "video %s: ffmpeg failed (status %d)", v->path, status);
    /* nine decimals: a slow-motion video spans microseconds (12 frames at 1000x: 0.4 ms) */
    printf("video stop %s frames=%ld seconds=%.9f %s\n", v->path, v->frames, span,
           ok ? "ok" : "failed");
    fflush(stdout);
}
