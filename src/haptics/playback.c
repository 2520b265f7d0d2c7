/* Playback back-end: replays a recorded handle trajectory (CSV "t,x,y": s, m, m) as if a
 * pantograph streamed it, for regression tests and for running haptic scenes without hardware.
 * Each read advances the device clock by one frame (1 ms, the device frame rate), so a replay
 * is deterministic whatever the host's timing: positions are interpolated linearly, mapped
 * through the inverse kinematics and quantised by the encoders exactly as on the device.
 * Commands are accepted and ignored (can_actuate = false). At the end of the file the replay
 * stops with a message, or starts over with the ":loop" suffix.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"

typedef struct Playback {
    double *t, *x, *y;
    int n, cap;
    int cursor;
    bool loop;
    uint32_t frame;
    char path[256];
} Playback;

static void playback_free(Playback *p) {
    free(p->t);
    free(p->x);
    free(p->y);
    free(p);
}

static bool push(Playback *p, double t, double x, double y) {
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 1024;
        double *nt = realloc(p->t, (size_t)cap * sizeof(double));
        if (nt)
            p->t = nt;
        double *nx = realloc(p->x, (size_t)cap * sizeof(double));
        if (nx)
            p->x = nx;
        double *ny = realloc(p->y, (size_t)cap * sizeof(double));
        if (ny)
            p->y = ny;
        if (!nt || !nx || !ny)
            return false;
        p->cap = cap;
    }
    p->t[p->n] = t;
    p->x[p->n] = x;
    p->y[p->n] = y;
    p->n++;
    return true;
}

static IssimStatus load(Playback *p, const char *path, IssimError *err) {
    FILE *f = fopen(path, "r");
    if (!f)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot open playback file %s", path);
    char line[256];
    int lineno = 0;
    IssimStatus s = ISSIM_OK;
    while (s == ISSIM_OK && fgets(line, sizeof line, f)) {
        lineno++;
        double t, x, y;
        if (sscanf(line, "%lf,%lf,%lf", &t, &x, &y) != 3) {
            if (lineno == 1 || line[0] == '#' || line[0] == '\n')
                continue; /* header or comment */
            s = issim_error_set(err, ISSIM_ERR_INVALID, "%s:%d: expected t,x,y", path, lineno);
        } else if (!isfinite(t) || !isfinite(x) || !isfinite(y) ||
                   (p->n > 0 && !(t > p->t[p->n - 1]))) {
            s = issim_error_set(err, ISSIM_ERR_INVALID,
                                "%s:%d: times must increase and values be finite", path, lineno);
        } else if (!push(p, t, x, y)) {
            s = issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        }
    }
    fclose(f);
    if (s == ISSIM_OK && p->n < 2)
        s = issim_error_set(err, ISSIM_ERR_INVALID, "%s: fewer than two samples", path);
    return s;
}

static IssimStatus playback_read(HapticDevice *dev, double timeout_s, IssimError *err) {
    (void)timeout_s;
    Playback *p = dev->impl;
    double t = p->t[0] + p->frame * 1e-3;
    double span = p->t[p->n - 1] - p->t[0];
    if (t > p->t[p->n - 1]) {
        if (!p->loop)
            return issim_error_set(err, ISSIM_ERR_IO, "%s: playback ended at t = %g s",
                                   dev->caps.name, p->t[p->n - 1]);
        t = p->t[0] + fmod(t - p->t[0], span);
        if (t < p->t[p->cursor])
            p->cursor = 0;
    }
    while (p->cursor + 2 < p->n && p->t[p->cursor + 1] <= t)
        p->cursor++;
    int i = p->cursor;
    double w = (t - p->t[i]) / (p->t[i + 1] - p->t[i]);
    w = fmin(fmax(w, 0.0), 1.0);
    HapticVec2 pos = {p->x[i] + w * (p->x[i + 1] - p->x[i]), p->y[i] + w * (p->y[i + 1] - p->y[i])};
    PantographJoints q;
    if (!pantograph_inverse(&dev->config, pos, &q))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "%s: recorded point (%g, %g) m at t = %g s is out of reach",
                               dev->caps.name, pos.x, pos.y, t);
    HapticState s = {.seq = (uint16_t)p->frame,
                     .timestamp_us = p->frame * 1000u,
                     .counts = {pantograph_angle_to_counts(&dev->config, q.q1, false),
                                pantograph_angle_to_counts(&dev->config, q.q5, true)},
                     .protocol = HAPTIC_PROTOCOL_VERSION};
    p->frame++;
    haptic_device_accept_state(dev, &s);
    return ISSIM_OK;
}

static IssimStatus playback_write(HapticDevice *dev, const HapticCommand *cmd, IssimError *err) {
    (void)dev;
    (void)cmd;
    (void)err;
    return ISSIM_OK;
}

static void playback_close(HapticDevice *dev) {
    playback_free(dev->impl);
}

static const HapticDeviceOps playback_ops = {playback_read, playback_write, playback_close};

HapticDevice *haptic_playback_open(const char *spec, const PantographConfig *config,
                                   IssimError *err) {
    Playback *p = calloc(1, sizeof *p);
    if (!p) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    issim_strlcpy(p->path, spec, sizeof p->path);
    size_t len = strlen(p->path);
    if (len > 5 && strcmp(p->path + len - 5, ":loop") == 0) {
        p->path[len - 5] = '\0';
        p->loop = true;
    }
    HapticDevice *dev = NULL;
    if (load(p, p->path, err) == ISSIM_OK &&
        (dev = haptic_device_new(&playback_ops, config, p)) != NULL) {
        snprintf(dev->caps.name, sizeof dev->caps.name, "playback %.50s", p->path);
        dev->caps.can_actuate = false;
        return dev;
    }
    playback_free(p);
    return NULL;
}

IssimStatus haptic_playback_write_circle(const char *path, const PantographConfig *config,
                                         double radius, double period_s, double duration_s,
                                         IssimError *err) {
    FILE *f = fopen(path, "w");
    if (!f)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot write %s", path);
    HapticVec2 c = pantograph_workspace_centre(config);
    fprintf(f, "t,x,y\n");
    for (double t = 0.0; t <= duration_s + 1e-12; t += 1e-3)
        fprintf(f, "%.6f,%.9f,%.9f\n", t, c.x + radius * cos(2 * M_PI * t / period_s),
                c.y + radius * sin(2 * M_PI * t / period_s));
    return fclose(f) == 0 ? ISSIM_OK : issim_error_set(err, ISSIM_ERR_IO, "cannot write %s", path);
}
