/* The prescribed load cycle (issue 17): F(t) = A (1 - cos(2 pi t / T)) / 2 on one body, the
 * quasi-static cycle of seed 004 4.6.2 (Fig. 4.12; VALIDATION.md V4), drawn as an arrow on the
 * body and plotted with the contact force against depth (the hysteresis loop).
 *
 * The engine applies the cycle itself, at every integrator stage (the body's `force_cycle` and
 * `force_cycle_period` properties): a scene that sets them opens with the cycle running, and
 * Start / Stop / the script's `load_cycle` are edits of those two properties. Until then the
 * display wrote the load once a frame through the pointer spring: piecewise constant over a
 * frame, so each frame's step of up to 6 N rang the block's 20 ms contact oscillation and the
 * plotted loop was jagged.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app_internal.h"

static Vec3 load_at(const AppLoad *l, double t) {
    return vec3_scale(l->amplitude, 0.5 * (1.0 - cos(2.0 * M_PI * t / l->period)));
}

static void describe(AppLoad *l, const char *name) {
    snprintf(l->text, sizeof l->text,
             "load cycle on %s: (%g, %g, %g) N (1 - cos(2 pi t / %g s)) / 2", name, l->amplitude.x,
             l->amplitude.y, l->amplitude.z, l->period);
}

/* Sends the cycle's period (0: stopped) to the engine, and the peak when starting. */
static void send_cycle(App *app, bool with_peak, double period) {
    const AppLoad *l = &app->load;
    const char *name = app->session.view->bodies[l->body].name;
    char path[200], value[96];
    if (with_peak) {
        snprintf(path, sizeof path, "%s.force_cycle", name);
        snprintf(value, sizeof value, "%.17g %.17g %.17g", l->amplitude.x, l->amplitude.y,
                 l->amplitude.z);
        app_submit_edit(app, path, value);
    }
    snprintf(path, sizeof path, "%s.force_cycle_period", name);
    snprintf(value, sizeof value, "%.17g", period);
    app_submit_edit(app, path, value);
}

bool app_load_start(App *app, const char *body, Vec3 amplitude, double period) {
    AppLoad *l = &app->load;
    int b = app_view_body(app, body);
    const char *name = b >= 0 ? app->session.view->bodies[b].name : "";
    const char *why = b < 0                                  ? "no body of that name"
                      : !(period > 0.0) || !isfinite(period) ? "the period must be > 0 s"
                      : !isfinite(vec3_norm(amplitude))      ? "the force must be finite"
                                                             : NULL;
    if (why) {
        issim_log(ISSIM_LOG_WARN, "load cycle on '%s': %s", body, why);
        return false;
    }
    *l = (AppLoad){
        .configured = true, .on = true, .body = b, .amplitude = amplitude, .period = period};
    describe(l, name);
    issim_log(ISSIM_LOG_INFO, "%s", l->text);
    send_cycle(app, true, period);
    return true;
}

void app_load_toggle(App *app) {
    AppLoad *l = &app->load;
    if (l->on) {
        app_load_stop(app);
    } else if (l->configured) {
        l->on = true;
        send_cycle(app, false, l->period);
    }
}

void app_load_stop(App *app) {
    AppLoad *l = &app->load;
    if (l->on && app->session.sim && app->session.view)
        send_cycle(app, false, 0.0);
    l->on = false;
}

/* The first body the scene gives a load cycle (force_cycle_period > 0), shown as running. */
void app_load_from_scene(App *app) {
    AppLoad *l = &app->load;
    *l = (AppLoad){0};
    const Session *s = &app->session;
    for (int b = 0; s->view && b < s->view->body_count; b++) {
        ThingId id = thingdb_find(s->db, s->view->bodies[b].name);
        if (thing_id_is_null(id) || !(thing_real(s->db, id, "force_cycle_period") > 0.0))
            continue;
        *l = (AppLoad){.configured = true,
                       .on = true,
                       .body = b,
                       .amplitude = thing_vec3(s->db, id, "force_cycle"),
                       .period = thing_real(s->db, id, "force_cycle_period")};
        describe(l, s->view->bodies[b].name);
        return;
    }
}

/* Every frame: the load the engine applies at the display time (for the arrow and the plot). */
void app_load_pump(App *app) {
    AppLoad *l = &app->load;
    Session *s = &app->session;
    if (!l->on || !s->sim || !s->has_frame)
        return;
    l->sent_t = registry_state_time(s->reg);
    l->sent = load_at(l, l->sent_t);
    l->have_sent = true;
}

double app_load_magnitude(const App *app) {
    return app->load.on ? vec3_norm(app->load.sent) : 0.0;
}

/* The load as an arrow whose tip presses on the body, on the view's one force scale (gui.h). */
int app_load_arrows(const App *app, RenderArrow *out) {
    const AppLoad *l = &app->load;
    const SceneView *v = app->session.view;
    double peak = vec3_norm(l->amplitude);
    if (!l->on || !v || l->body >= v->body_count || v->bodies[l->body].instance < 0 ||
        !(peak > 0.0))
        return 0;
    const ViewInstance *in = &v->instances[v->bodies[l->body].instance];
    /* the tip on the body's bounds, on the side the load comes from: not hidden inside it */
    double size = 0.5 * vec3_norm(vec3_sub(in->local_box.max, in->local_box.min));
    Vec3 towards = vec3_scale(l->amplitude, 1.0 / peak);
    /* and a little aside, so the contact force arrow through the body does not cover it */
    Vec3 aside, unused;
    vec3_tangent_basis(towards, &aside, &unused);
    Vec3 tip =
        vec3_add(vec3_sub(in->pose.p, vec3_scale(towards, size)), vec3_scale(aside, 0.25 * size));
    Vec3 length = render_force_arrow(l->sent, app->camera.distance);
    *out = (RenderArrow){
        .from = vec3_sub(tip, length), .to = tip, .kind = GUI_ARROW_LOAD, .label = "load"};
    return 1;
}
