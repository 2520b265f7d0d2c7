/* Bodies' contact-response maps (seed 000 ch. 3; include/issim/contactmap.h): loaded once per
 * engine from the body property contact_map, handed to the contact_map model through each
 * contact's parameters, and the body-frame contact geometry the model picks its node from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

static IssimStatus load_body_map(Engine *e, EngineBody *b, IssimError *err) {
    const char *spec = thing_string(e->model.db, b->thing, "contact_map");
    if (!spec || !spec[0])
        return ISSIM_OK;
    char resolved[1024];
    const char *path = contact_map_is_synthetic(spec)
                           ? spec
                           : engine_asset_path(e, spec, resolved, sizeof resolved);
    IssimError sub = {0};
    IssimStatus s = contact_map_load(spec, path, b->name, &b->contact_map, &sub);
    if (s != ISSIM_OK)
        return issim_error_set(err, s, "%s.contact_map: %s", b->name, sub.message);
    return ISSIM_OK;
}

static bool body_in_pair(const EngineBody *b, const EnginePair *p) {
    return b->material == p->material_a || b->material == p->material_b;
}

/* Two bodies a pair may bring together must sample at one period (000 3.7: the step must match
 * the maps' T). Checked per pair over the bodies of its materials, whatever the pair's model now:
 * the model is live, a user may switch it to contact_map while running. */
static IssimStatus check_periods(const Engine *e, IssimError *err) {
    for (int i = 0; i < e->model.pair_count; i++) {
        const EnginePair *p = &e->model.pairs[i];
        const EngineBody *first = NULL;
        for (int b = 0; b < e->model.body_count; b++) {
            const EngineBody *body = &e->model.bodies[b];
            if (!body->contact_map || !body_in_pair(body, p))
                continue;
            if (!first) {
                first = body;
                continue;
            }
            double t1 = contact_map_period(first->contact_map);
            double t2 = contact_map_period(body->contact_map);
            if (fabs(t1 - t2) > 1e-12 * fmax(t1, t2))
                return issim_error_set(
                    err, ISSIM_ERR_INVALID,
                    "%s: contact maps with different periods meet in pair %s: %s has T = %g s "
                    "(%s), %s has T = %g s (%s); the convolution needs one sampling period",
                    body->name, thing_name(e->model.db, p->thing), first->name, t1,
                    contact_map_origin(first->contact_map), body->name, t2,
                    contact_map_origin(body->contact_map));
        }
    }
    return ISSIM_OK;
}

IssimStatus engine_load_maps(Engine *e, IssimError *err) {
    for (int b = 0; b < e->model.body_count; b++) {
        IssimStatus s = load_body_map(e, &e->model.bodies[b], err);
        if (s != ISSIM_OK)
            return s;
    }
    return check_periods(e, err);
}

void engine_release_maps(Engine *e) {
    for (int b = 0; b < e->model.body_count; b++) {
        contact_map_release(e->model.bodies[b].contact_map);
        e->model.bodies[b].contact_map = NULL;
    }
}

void engine_contact_maps(const Engine *e, const EngineContact *c, ContactParams *p) {
    p->map_a = c->body >= 0 ? e->model.bodies[c->body].contact_map : NULL;
    p->map_b = c->kind == CONTACT_MANIFOLD && c->body_b >= 0
                   ? e->model.bodies[c->body_b].contact_map
                   : NULL;
}

void engine_contact_local_frames(const Engine *e, const EngineContact *c, ContactKinematics *k) {
    EngineBodyState a = engine_block_state(e, e->y, c->body);
    Vec3 n = k->normal; /* from b into a: a's outward normal is -n, b's is n */
    k->normal_in_a = quat_rotate_inv(a.orient, vec3_scale(n, -1.0));
    k->normal_in_b = n;
    if (c->kind != CONTACT_MANIFOLD) { /* a body vertex on an obstacle */
        k->point_in_a = e->model.bodies[c->body].vertices[c->vertex];
        Vec3 world = vec3_add(a.pos, quat_rotate(a.orient, k->point_in_a));
        k->point_in_b = world;
        return;
    }
    /* Round shapes anchor at their core; the surface point is the radius out along the
     * outward normal. */
    k->point_in_a = vec3_mad(c->local_a, c->radius_a, k->normal_in_a);
    if (c->body_b >= 0) {
        EngineBodyState b = engine_block_state(e, e->y, c->body_b);
        k->normal_in_b = quat_rotate_inv(b.orient, n);
        k->point_in_b = vec3_mad(c->local_b, c->radius_b, k->normal_in_b);
    } else {
        k->point_in_b = vec3_mad(c->local_b, c->radius_b, n);
    }
}
