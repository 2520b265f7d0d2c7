/* The GUI's contact-map panel (seed 000 ch. 3): the selected body's map, the node its contact
 * uses now (chosen from the contact reports the way the contact_map model chooses it) and the
 * normal force of the body's contacts over the last seconds. Display thread only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app_internal.h"

static int selected_view_body(const App *app) {
    const SceneView *view = app->session.view;
    for (int b = 0; view && b < view->body_count; b++)
        if (thing_id_equal(view->bodies[b].thing, app->selected))
            return view->bodies[b].map ? b : -1;
    return -1;
}

/* The body's contact force as the engine thread publishes it (sim_contacts.c: the peak of each
 * output step, so an impact between two frames shows), over the last APP_MAP_FORCE_SECONDS
 * (at most APP_MAP_FORCE_STEPS steps), the largest per column. */
static void read_force(AppMapView *m, const Session *s, const char *body) {
    char name[300];
    snprintf(name, sizeof name, "%s.contact_force.peak", body);
    int var = registry_var_find(s->reg, name);
    m->count = 0;
    double dt = sim_dt(s->sim), t1 = s->frame_time;
    double t0 = t1 - fmin(APP_MAP_FORCE_SECONDS, APP_MAP_FORCE_STEPS * dt);
    int n = var < 0 ? 0 : registry_history(s->reg, var, t0, t1, m->t, m->v, APP_MAP_FORCE_STEPS);
    if (n == 0)
        return;
    double span = fmax(m->t[n - 1] - m->t[0], dt);
    for (int i = 0; i < n; i++) {
        int column = (int)((m->t[i] - m->t[0]) / span * (APP_MAP_FORCE_SAMPLES - 1));
        for (; m->count <= column; m->count++)
            m->force[m->count] = -INFINITY;
        m->force[column] = fmaxf(m->force[column], (float)m->v[i]);
    }
    m->seconds = m->t[n - 1] - m->t[0];
}

const GuiMapView *app_map_view(App *app) {
    AppMapView *m = &app->map_view;
    const SceneView *view = app->session.view;
    int body = selected_view_body(app);
    m->body = body;
    if (body < 0 || !app->session.sim)
        return NULL;
    const ContactReport *contacts;
    double tc;
    int n = app_contacts(app, &tc, &contacts);
    int active = -1;
    for (int i = 0; i < n; i++) {
        int node = scene_view_map_node(view, body, &contacts[i]);
        if (node >= 0)
            active = node;
    }
    read_force(m, &app->session, view->bodies[body].name);
    m->gui = (GuiMapView){.map = view->bodies[body].map,
                          .body = view->bodies[body].name,
                          .active_node = active,
                          .force = m->force,
                          .force_count = m->count,
                          .force_seconds = m->seconds};
    return &m->gui;
}
