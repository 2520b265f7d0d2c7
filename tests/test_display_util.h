/* Helpers shared by the GUI tests (test_display.c, test_gui.c): run the `issim` executable on a
 * scene with a script of UI actions under SDL's offscreen video driver (headless EGL, no X
 * server), capture what it prints, read the PNGs it writes, and project world points with a
 * pinhole camera written here independently of the display's own camera code. */
#ifndef ISSIM_TEST_DISPLAY_UTIL_H
#define ISSIM_TEST_DISPLAY_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>

#include "testutil.h"

#define GUI_OUTPUT_MAX 65536

/* Runs `issim run scene extra --script <script>`; stdout goes into out. Returns the exit
 * status. */
static inline int run_issim_script(const char *scene, const char *extra, const char *script,
                                   char *out, size_t out_size) {
    const char *script_path = test_temp_path(".script");
    FILE *f = fopen(script_path, "w");
    assert_non_null(f);
    fputs(script, f);
    fclose(f);
    const char *binary = getenv("ISSIM_BINARY");
    if (!binary)
        binary = "build/issim";
    char cmd[2048];
    /* Leak checking is off in the child only: Mesa's llvmpipe driver leaves allocations from
     * modules it unloads at exit, which LeakSanitizer cannot attribute or suppress by name. */
    snprintf(cmd, sizeof cmd,
             "SDL_VIDEODRIVER=offscreen ASAN_OPTIONS=\"${ASAN_OPTIONS}:detect_leaks=0\" '%s' run "
             "'%s' %s --script '%s'",
             binary, scene, extra ? extra : "", script_path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t used = 0;
    size_t n;
    while (used + 1 < out_size && (n = fread(out + used, 1, out_size - 1 - used, p)) > 0)
        used += n;
    out[used] = '\0';
    int status = pclose(p);
    remove(script_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The n-th (0-based) line of out that starts with prefix, or NULL. */
static inline const char *find_line(const char *out, const char *prefix, int nth) {
    size_t len = strlen(prefix);
    for (const char *line = out; line && *line;) {
        if (strncmp(line, prefix, len) == 0 && nth-- == 0)
            return line;
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return NULL;
}

typedef struct ShownState {
    double t;
    int view_x, view_y, view_w, view_h;
    double eye[3], target[3], fov;
    double up[3]; /* the world direction drawn upward (the scene's camera_up) */
} ShownState;

/* Parses the n-th "state ..." line printed by the script command print_state. */
static inline ShownState parse_state(const char *out, int nth) {
    ShownState s = {0};
    const char *line = find_line(out, "state ", nth);
    if (!line)
        fail_msg("no state line %d in the output:\n%s", nth, out);
    int n = sscanf(line, "state t=%lf view %d %d %d %d camera %lf %lf %lf %lf %lf %lf %lf", &s.t,
                   &s.view_x, &s.view_y, &s.view_w, &s.view_h, &s.eye[0], &s.eye[1], &s.eye[2],
                   &s.target[0], &s.target[1], &s.target[2], &s.fov);
    assert_int_equal(n, 12);
    const char *end = strchr(line, '\n'), *up = strstr(line, " up=");
    s.up[0] = 0, s.up[1] = 0, s.up[2] = 1;
    if (up && (!end || up < end))
        assert_int_equal(sscanf(up, " up=%lf,%lf,%lf", &s.up[0], &s.up[1], &s.up[2]), 3);
    return s;
}

/* The n-th line starting with prefix; the test fails (showing out) when there is none. */
static inline const char *require_line(const char *out, const char *prefix, int nth) {
    const char *line = find_line(out, prefix, nth);
    if (!line)
        fail_msg("no '%s' line %d in the output:\n%s", prefix, nth, out);
    return line;
}

/* Position of body `name` from the n-th print_state. */
static inline Vec3 parse_body(const char *out, const char *name, int nth) {
    char prefix[128];
    snprintf(prefix, sizeof prefix, "body %s ", name);
    const char *line = require_line(out, prefix, nth);
    Vec3 p;
    assert_int_equal(sscanf(line + strlen(prefix), "%lf %lf %lf", &p.x, &p.y, &p.z), 3);
    return p;
}

/* Pinhole projection: look-at camera with s->up drawn upward, vertical field of view fov; pixel
 * coordinates in the window (origin top left). */
static inline void project(const ShownState *s, Vec3 p, double *px, double *py) {
    double f[3], r[3], u[3], d[3];
    for (int i = 0; i < 3; i++)
        f[i] = s->target[i] - s->eye[i];
    double fn = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int i = 0; i < 3; i++)
        f[i] /= fn;
    r[0] = f[1] * s->up[2] - f[2] * s->up[1]; /* f x up */
    r[1] = f[2] * s->up[0] - f[0] * s->up[2];
    r[2] = f[0] * s->up[1] - f[1] * s->up[0];
    double rn = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    r[0] /= rn, r[1] /= rn, r[2] /= rn;
    u[0] = r[1] * f[2] - r[2] * f[1];
    u[1] = r[2] * f[0] - r[0] * f[2];
    u[2] = r[0] * f[1] - r[1] * f[0];
    double pp[3] = {p.x, p.y, p.z};
    for (int i = 0; i < 3; i++)
        d[i] = pp[i] - s->eye[i];
    double z = d[0] * f[0] + d[1] * f[1] + d[2] * f[2];
    double t = tan(0.5 * s->fov * M_PI / 180.0), aspect = (double)s->view_w / s->view_h;
    double nx = (d[0] * r[0] + d[1] * r[1] + d[2] * r[2]) / (z * t * aspect);
    double ny = (d[0] * u[0] + d[1] * u[1] + d[2] * u[2]) / (z * t);
    *px = s->view_x + (nx + 1.0) * 0.5 * s->view_w;
    *py = s->view_y + (1.0 - ny) * 0.5 * s->view_h;
}

typedef struct Image {
    int w, h;
    unsigned char *rgb;
} Image;

static inline Image load_png(const char *path) {
    Image im = {0};
    int n;
    im.rgb = stbi_load(path, &im.w, &im.h, &n, 3);
    if (!im.rgb)
        fail_msg("cannot read the screenshot %s", path);
    return im;
}

static inline const unsigned char *pixel(const Image *im, double x, double y) {
    int ix = (int)lround(x), iy = (int)lround(y);
    if (ix < 0 || iy < 0 || ix >= im->w || iy >= im->h)
        fail_msg("pixel (%d, %d) outside the %d x %d screenshot", ix, iy, im->w, im->h);
    return im->rgb + ((size_t)iy * im->w + ix) * 3;
}

/* Red-dominant: the colour {1, 0, 0} under any of the renderer's lighting. */
static inline bool is_red(const unsigned char *p) {
    return p[0] > 80 && p[0] > 2 * p[1] && p[0] > 2 * p[2];
}

#endif
