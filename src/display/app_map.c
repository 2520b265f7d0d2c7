/* The GUI's contact-map panel (seed 000 ch. 3): the selected body's map, the node its contact
 * uses now (chosen from the contact reports the way the contact_map model chooses it) and the
 * normal force of the body's contacts over the last frames. Display thread only. */
#include <math.h>
#include <string.h>

#include "app_internal.h"

static int selected_view_body(const App *app) {
    const SceneView *view = app->session.view;
    for (int b = 0; view && b < view->body_count; b++)
        if (thing_id_equal(view->bodies[b].thing, app->selected))
            return view->bodies[b].map ? b : -1;
    return -1;
}

static void push_force(AppMapView *m, double t, float force) {
    if (m->count > 0 && t <= m->t[m->count - 1]) {
        if (t < m->t[m->count - 1]) /* rewound: start over */
            m->count = 0;
        else
            return; /* the same frame again (paused) */
    }
    if (m->count == APP_MAP_FORCE_SAMPLES) {
        memmove(m->force, m->force + 1, sizeof(float) * (APP_MAP_FORCE_SAMPLES - 1));
        memmove(m->t, m->t + 1, sizeof(double) * (APP_MAP_FORCE_SAMPLES - 1));
        m->count--;
    }
    m->force[m->count] = force;
    m->t[m->count] = t;
    m->count++;
}

const GuiMapView *app_map_view(App *app) {
    AppMapView *m = &app->map_view;
    const SceneView *view = app->session.view;
    int body = selected_view_body(app);
    if (body != m->body || view != m->view) {
        m->count = 0;
        m->body = body;
        m->view = view;
    }
    if (body < 0 || !app->session.sim)
        return NULL;
    const ContactReport *contacts;
    double tc;
    int n = app_contacts(app, &tc, &contacts);
    int active = -1;
    double force = 0.0;
    for (int i = 0; i < n; i++) {
        int node = scene_view_map_node(view, body, &contacts[i]);
        if (node < 0)
            continue;
        active = node;
        force += fabs(contacts[i].normal_force);
    }
    push_force(m, tc, (float)force);
    m->gui = (GuiMapView){.map = view->bodies[body].map,
                          .body = view->bodies[body].name,
                          .active_node = active,
                          .force = m->force,
                          .force_count = m->count,
                          .force_seconds = m->count > 1 ? m->t[m->count - 1] - m->t[0] : 0.0};
    return &m->gui;
}
