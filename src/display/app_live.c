/* Quantities the plots can show besides the registry's state variables (issue 17): contact
 * forces and depths summed or at their largest, the selected body's contact force, the
 * engine's step time and output rate, the display's frame rate. They are sampled once per
 * displayed frame at the contact reports' time (the engine's, at most a horizon ahead of the
 * display) and kept oldest first; the plots draw what falls in their window. Display thread
 * only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app_internal.h"

static const struct {
    const char *name, *unit;
} live_names[APP_LIVE_COUNT] = {
    [APP_LIVE_FORCE_SUM] = {"contacts: summed normal force", "N"},
    [APP_LIVE_FORCE_MAX] = {"contacts: largest normal force", "N"},
    [APP_LIVE_DEPTH_MAX] = {"contacts: deepest penetration", "m"},
    [APP_LIVE_CONTACTS] = {"contacts: count", ""},
    [APP_LIVE_SELECTED_FORCE] = {"selected body: contact normal force", "N"},
    [APP_LIVE_STEP_US] = {"engine: step wall time", "us"},
    [APP_LIVE_STEPS_PER_S] = {"engine: output steps per wall second", "1/s"},
    [APP_LIVE_FPS] = {"display: frames per second", "1/s"},
    [APP_LIVE_LOAD] = {"load cycle: prescribed load", "N"},
};

/* Drops the samples after t (an edit or a seek rewound the engine: another future). */
static void rewind_to(AppLive *l, double t) {
    while (l->count > 0 && l->t[l->count - 1] > t)
        l->count--;
}

static void push(AppLive *l, double t, const double *v) {
    if (l->count == APP_LIVE_SAMPLES) { /* the older half goes: amortised, no ring */
        int half = APP_LIVE_SAMPLES / 2;
        memmove(l->t, l->t + half, sizeof(double) * (size_t)(APP_LIVE_SAMPLES - half));
        for (int k = 0; k < APP_LIVE_COUNT; k++)
            memmove(l->v[k], l->v[k] + half, sizeof(float) * (size_t)(APP_LIVE_SAMPLES - half));
        l->count -= half;
    }
    l->t[l->count] = t;
    for (int k = 0; k < APP_LIVE_COUNT; k++)
        l->v[k][l->count] = (float)v[k];
    l->count++;
}

static bool touches(const SceneView *view, int body, const ContactReport *c) {
    if (body < 0)
        return false;
    uint64_t id = engine_body_id_pack(view->bodies[body].id);
    return c->body_a == id || c->body_b == id;
}

static int selected_body(const App *app) {
    const SceneView *view = app->session.view;
    for (int b = 0; view && b < view->body_count; b++)
        if (thing_id_equal(view->bodies[b].thing, app->selected))
            return b;
    return -1;
}

void app_live_sample(App *app) {
    AppLive *l = &app->live;
    Session *s = &app->session;
    if (!s->sim || s->view != l->view) {
        l->count = 0;
        l->view = s->view;
        if (!s->sim)
            return;
    }
    const ContactReport *contacts;
    double tc = NAN;
    int n = app_contacts(app, &tc, &contacts);
    if (!isfinite(tc))
        return;
    if (l->count > 0 && tc <= l->t[l->count - 1]) {
        rewind_to(l, tc);
        if (l->count > 0 && tc == l->t[l->count - 1])
            return; /* nothing new (paused, or the engine waits) */
    }
    int body = selected_body(app);
    double v[APP_LIVE_COUNT] = {0};
    for (int i = 0; i < n; i++) {
        double f = fabs(contacts[i].normal_force);
        v[APP_LIVE_FORCE_SUM] += f;
        v[APP_LIVE_FORCE_MAX] = fmax(v[APP_LIVE_FORCE_MAX], f);
        v[APP_LIVE_DEPTH_MAX] = fmax(v[APP_LIVE_DEPTH_MAX], contacts[i].depth);
        if (touches(s->view, body, &contacts[i]))
            v[APP_LIVE_SELECTED_FORCE] += f;
    }
    v[APP_LIVE_CONTACTS] = n;
    RegistrySlot slot;
    registry_slot_read(s->reg, REGISTRY_SLOT_ENGINE_STATS, &slot);
    v[APP_LIVE_STEP_US] = sim_engine_stats_unpack(&slot).step_time_us;
    v[APP_LIVE_STEPS_PER_S] = app->rates.engine_rate;
    v[APP_LIVE_FPS] = app->rates.fps;
    v[APP_LIVE_LOAD] = app_load_magnitude(app);
    push(l, tc, v);
}

bool app_live_print(const App *app, const char *name) {
    const AppLive *l = &app->live;
    for (int k = 0; k < APP_LIVE_COUNT; k++) {
        if (strcmp(live_names[k].name, name) != 0)
            continue;
        printf("live %s: %d samples, %s\n", name, l->count, live_names[k].unit);
        for (int i = 0; i < l->count; i++)
            printf("live_sample %.9g %.9g\n", l->t[i], l->v[k][i]);
        fflush(stdout);
        return true;
    }
    return false;
}

const GuiSeries *app_live_series(App *app, int *count) {
    AppLive *l = &app->live;
    for (int k = 0; k < APP_LIVE_COUNT; k++)
        l->gui[k] = (GuiSeries){.name = live_names[k].name,
                                .unit = live_names[k].unit,
                                .t = l->t,
                                .v = l->v[k],
                                .count = l->count};
    *count = APP_LIVE_COUNT;
    return l->gui;
}
