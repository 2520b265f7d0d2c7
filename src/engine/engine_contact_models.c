/* The force-law contacts of one body, with their model's parameters and per-contact history, for
 * a reader that evaluates the contact's force law itself between engine steps: the haptic local
 * models (docs/haptics.md "Local models"). Read-only: nothing of the engine changes. */
#include "engine_internal.h"

/* The velocity of body `body`'s material point at world point p (0 for an obstacle: -1). */
static Vec3 material_velocity(const Engine *e, int body, Vec3 p) {
    if (body < 0)
        return (Vec3){0, 0, 0};
    EngineBodyState s = engine_block_state(e, e->y, body);
    return vec3_add(s.vel, vec3_cross(s.angvel, vec3_sub(p, s.pos)));
}

int engine_body_contact_models(const Engine *e, EngineBodyId body, EngineContactModelView *out,
                               int max) {
    if (!engine_body_valid(e, body))
        return 0;
    int n = 0;
    for (int ci = 0; ci < e->contact_count && n < max; ci++) {
        const EngineContact *c = &e->contacts[ci];
        bool is_a = c->body == body.index, is_b = c->body_b == body.index;
        /* a complementarity row has no force law to evaluate: its solver decides the force */
        if (!c->active || !(is_a || is_b) || engine_contact_time_stepped(e, c))
            continue;
        EngineContactModelView *v = &out[n++];
        Vec3 point;
        engine_contact_kinematics(e, e->y, c, e->data.t, &v->kin, &point, NULL);
        v->id = c->id;
        v->body_is_a = is_a;
        v->params = engine_contact_params(e, c);
        v->history = engine_contact_history(e, c);
        v->point = point;
        v->other_vel = material_velocity(e, is_a ? c->body_b : c->body, point);
    }
    return n;
}
