/* Video of the 3D view (issue 17): every frame written goes to an ffmpeg process (Debian's
 * ffmpeg, started through a pipe: raw RGB in, H.264 MP4 out). The video runs at
 * APP_VIDEO_FPS either in wall time (what the user saw, at the display's pace: a frame is
 * repeated when the display drew fewer) or in simulated time (one video second per simulated
 * second, whatever the display's rate: slow scenes play at their true speed). Display thread
 * only. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app_internal.h"

bool app_video_start(App *app, const char *path, bool sim_time) {
    AppVideo *v = &app->video;
    if (v->pipe || !app->window)
        return false;
    /* H.264 wants even sizes; the view's rectangle as it is now (a resize later is cropped). */
    v->width = app->view_w & ~1;
    v->height = app->view_h & ~1;
    v->x = app->view_x;
    v->y = app->height - app->view_y - app->view_h + (app->view_h & 1);
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
    v->start = sim_time ? app->session.frame_time : issim_wall_time();
    v->frames = 0;
    v->failed = false;
    issim_log(ISSIM_LOG_INFO, "video %s: %dx%d at %d fps of %s time", path, v->width, v->height,
              APP_VIDEO_FPS, sim_time ? "simulated" : "wall");
    return true;
}

static double video_clock(const App *app) {
    return app->video.sim_time ? app->session.frame_time : issim_wall_time();
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

/* After the 3D view is drawn: as many frames as the video's clock asks for by now. */
void app_video_frame(App *app) {
    AppVideo *v = &app->video;
    if (!v->pipe || v->failed)
        return;
    long due = (long)floor((video_clock(app) - v->start) * APP_VIDEO_FPS) + 1;
    if (due <= v->frames)
        return;
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(v->x, v->y, v->width, v->height, GL_RGB, GL_UNSIGNED_BYTE, v->pixels);
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
    if (v->frames > 0 && !v->failed)
        write_frames(v, (long)ceil(span * APP_VIDEO_FPS));
    int status = pclose(v->pipe);
    v->pipe = NULL;
    free(v->pixels);
    v->pixels = NULL;
    bool ok = !v->failed && status == 0;
    if (ok)
        issim_log(ISSIM_LOG_INFO, "video %s: %ld frames", v->path, v->frames);
    else
        issim_log(ISSIM_LOG_ERROR, "video %s: ffmpeg failed (status %d)", v->path, status);
    printf("video stop %s frames=%ld seconds=%.3f %s\n", v->path, v->frames, span,
           ok ? "ok" : "failed");
    fflush(stdout);
}
