/* Local models: the proxy's contacts rendered at the servo rate with the contact module's own
 * force laws (haptics_local.h has the scheme; docs/haptics.md "Local models" the figures).
 *
 * Geometry. The handle stands in for the proxy: moving the proxy by d = handle - proxy (in the
 * plane) and the other body by its velocity times the time since the engine state changes the
 * depth by -sign n . (d - v_other t): moving body a along the normal (from b into a) opens the
 * contact, moving b along it closes it. The relative velocity of a on b is sign (v_handle -
 * v_other); its normal part is minus the depth rate, the rest slides. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "issim/haptics_local.h"
#include "issim/haptics_servo.h"

static size_t align8(size_t n) {
    return (n + 7u) & ~(size_t)7u;
}

size_t haptic_local_pack(void *buf, size_t room, uint64_t proxy_body, Vec3 proxy_pos,
                         double t_engine, double wall, const EngineContactModelView *views, int n) {
    size_t head = align8(sizeof(HapticLocalHeader));
    if (room < head)
        return 0;
    unsigned char *b = buf;
    HapticLocalHeader h = {
        .proxy_body = proxy_body, .t_engine = t_engine, .wall = wall, .proxy_pos = proxy_pos};
    int fit = n < HAPTIC_LOCAL_MAX_MODELS ? n : HAPTIC_LOCAL_MAX_MODELS;
    size_t models = head, states = head + align8((size_t)fit * sizeof(HapticLocalModel));
    if (states > room) {
        fit = 0;
        states = head;
    }
    for (int i = 0; i < fit; i++) {
        const EngineContactModelView *v = &views[i];
        size_t bytes = v->history->state ? v->history->state_bytes : 0;
        if (states + align8(bytes) > room)
            break; /* no room for its state: left out, counted */
        HapticLocalModel m = {
            .contact_id = v->id,
            .sign = v->body_is_a ? 1.0 : -1.0,
            .params = *v->params,
            .history = *v->history,
            .kin = v->kin,
            .point = v->point,
            .other_vel = v->other_vel,
            .state_offset = states,
        };
        m.history.state = NULL;
        m.history.state_bytes = bytes;
        if (bytes)
            memcpy(b + states, v->history->state, bytes);
        memcpy(b + models, &m, sizeof m);
        models += sizeof m;
        states += align8(bytes);
        h.count++;
    }
    h.dropped = (uint32_t)(n - h.count);
    h.bytes = states;
    memcpy(b, &h, sizeof h);
    return states;
}

HapticLocalDesc haptic_local_desc_default(void) {
    return (HapticLocalDesc){.enabled = false, .hold_s = 0.004, .fade_s = 0.004, .track_hz = 50.0};
}

IssimStatus haptic_local_set_init(HapticLocalSet *s, const Registry *reg, IssimError *err) {
    *s = (HapticLocalSet){.have = false};
    s->room = registry_board_capacity(reg);
    s->block = calloc(s->room ? s->room : 1, 1);
    if (!s->block)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory (local models, %zu bytes)",
                               s->room);
    return ISSIM_OK;
}

void haptic_local_set_free(HapticLocalSet *s) {
    free(s->block);
    s->block = NULL;
}

static HapticLocalHeader *header(HapticLocalSet *s) {
    return (HapticLocalHeader *)s->block;
}

static HapticLocalModel *model(HapticLocalSet *s, int i) {
    return (HapticLocalModel *)(s->block + align8(sizeof(HapticLocalHeader))) + i;
}

/* A block is taken only when it is whole and its offsets stay inside it. */
static bool block_valid(HapticLocalSet *s, size_t bytes) {
    size_t head = align8(sizeof(HapticLocalHeader));
    if (bytes < head)
        return false;
    HapticLocalHeader *h = header(s);
    if (h->count < 0 || h->count > HAPTIC_LOCAL_MAX_MODELS || h->bytes != bytes ||
        head + (size_t)h->count * sizeof(HapticLocalModel) > bytes)
        return false;
    for (int i = 0; i < h->count; i++) {
        HapticLocalModel *m = model(s, i);
        if (m->state_offset > bytes || m->history.state_bytes > bytes - m->state_offset ||
            !contact_model_class(m->params.model))
            return false;
    }
    return true;
}

bool haptic_local_set_refresh(HapticLocalSet *s, const Registry *reg, double now) {
    uint64_t seen = s->seen;
    size_t bytes = registry_board_read(reg, &seen, NULL, s->block, s->room);
    if (bytes == 0)
        return false;
    s->seen = seen;
    s->have = block_valid(s, bytes);
    if (!s->have)
        return false;
    HapticLocalHeader *h = header(s);
    for (int i = 0; i < h->count; i++) {
        HapticLocalModel *m = model(s, i);
        m->history.state = m->history.state_bytes ? s->block + m->state_offset : NULL;
    }
    s->arrivals++;
    s->arrival_wall = now;
    s->arrival_latency = now - h->wall;
    s->latency_sum += s->arrival_latency;
    s->latency_max = fmax(s->latency_max, s->arrival_latency);
    return true;
}

double haptic_local_gain(const HapticLocalDesc *d, double age) {
    if (!(age <= d->hold_s))
        return isnan(age) || !(d->fade_s > 0.0) ? 0.0
                                                : fmax(1.0 - (age - d->hold_s) / d->fade_s, 0.0);
    return 1.0;
}

/* The model's kinematics with the proxy at the handle, `elapsed` s after the engine state. */
static ContactKinematics at_handle(const HapticLocalModel *m, Vec3 moved, Vec3 handle_vel,
                                   double elapsed) {
    ContactKinematics k = m->kin;
    Vec3 n = k.normal;
    Vec3 other_moved = vec3_scale(m->other_vel, elapsed);
    k.depth = m->kin.depth - m->sign * vec3_dot(n, vec3_sub(moved, other_moved));
    Vec3 rel = vec3_scale(vec3_sub(handle_vel, m->other_vel), m->sign);
    k.depth_rate = -vec3_dot(n, rel);
    k.tangent_velocity = vec3_mad(rel, -vec3_dot(rel, n), n);
    k.t = m->kin.t + elapsed;
    k.contact_point = vec3_add(m->point, moved);
    k.has_slip = false; /* the friction spring stretches by dt v_t (friction.c) */
    return k;
}

/* One contact at the handle, one period: its force on the proxy (world N, zero out of contact),
 * its depth and the law's normal force; advances its history. The law holds while the bodies
 * overlap: the handle drawn back out of the surface has left the contact (the engine evaluates
 * a contact only while it is active; a spring and damper taken past the surface pulled the
 * handle back in). */
static bool contact_step(HapticLocalModel *m, Vec3 moved, Vec3 vel, double elapsed, Vec3 *force,
                         double *depth, double *normal_force) {
    const ContactModelClass *cls = contact_model_class(m->params.model);
    ContactKinematics k = at_handle(m, moved, vel, elapsed);
    *force = (Vec3){0, 0, 0};
    *depth = k.depth;
    *normal_force = 0.0;
    bool touching = k.depth > 0.0;
    if (touching) {
        ContactForce f = cls->force(&m->params, &m->history, &k);
        Vec3 on_a = vec3_mad(f.tangent, f.normal, k.normal);
        if (isfinite(on_a.x) && isfinite(on_a.y) && isfinite(on_a.z)) { /* the finite guard */
            *force = vec3_scale(on_a, m->sign);
            *normal_force = f.normal;
        }
    } else {
        k.depth = 0.0;
    }
    /* the servo's period is the copy's step: phase, friction spring, map samples */
    cls->commit(&m->params, &m->history, &k);
    return touching;
}

/* Where the block's contacts see the handle: the proxy moved to its world point, in the plane. */
static Vec3 proxy_moved(HapticLocalSet *s, Vec3 handle_world) {
    HapticLocalHeader *h = header(s);
    return (Vec3){handle_world.x - h->proxy_pos.x, handle_world.y - h->proxy_pos.y, 0.0};
}

int haptic_local_force(HapticLocalSet *s, Vec3 handle_world, Vec3 handle_vel, double elapsed,
                       Vec3 *force) {
    *force = (Vec3){0, 0, 0};
    if (!s->have)
        return 0;
    Vec3 moved = proxy_moved(s, handle_world), vel = {handle_vel.x, handle_vel.y, 0.0};
    int n = header(s)->count;
    for (int i = 0; i < n; i++) {
        Vec3 f;
        double depth, fn;
        contact_step(model(s, i), moved, vel, elapsed, &f, &depth, &fn);
        *force = vec3_add(*force, f);
    }
    return n;
}

/* One surface at the handle, one period: adds its force and texture torques; returns whether
 * the handle touches it (a wall: inside; a region: over it). The law has its own finite guard
 * below, as the contacts' has. */
static bool surface_step(const HapticSurface *sf, const HapticModelInput *in, double force[2],
                         double tau[2], double *depth, double *normal_force) {
    const HapticKinematics *k = in->kin;
    double f[2] = {0, 0}, t[2] = {0, 0};
    double fn = haptic_surface_force(sf, k, in->rng, f, t);
    *depth = haptic_surface_depth(sf, k->pos);
    *normal_force = fn;
    bool finite = isfinite(f[0]) && isfinite(f[1]) && isfinite(t[0]) && isfinite(t[1]);
    if (finite) {
        force[0] += f[0];
        force[1] += f[1];
        tau[0] += t[0];
        tau[1] += t[1];
    } else {
        *normal_force = 0.0;
    }
    if (sf->kind == HAPTIC_SURFACE_WALL)
        return *depth > 0.0;
    *depth = 0.0;
    return k->pos.x >= sf->min.x && k->pos.x <= sf->max.x && k->pos.y >= sf->min.y &&
           k->pos.y <= sf->max.y;
}

/* The statistics' record of one model: counted, and traced when the hand can press it (its
 * normal in the device's plane: a wall, not a texture region nor the table under the proxy, whose
 * force the plane does not transmit) and it is the deepest such so far. */
static void note_model(HapticModelOutput *out, HapticModelKind kind, bool touching, bool in_plane,
                       double depth, double normal_force) {
    out->evaluated++;
    if (!touching)
        return;
    out->touching++;
    if (in_plane && (!out->traced || depth > out->traced_depth)) {
        out->traced = true;
        out->traced_kind = kind;
        out->traced_depth = depth;
        out->traced_force = normal_force;
    }
}

/* A contact normal the handle can press along: at least half of it in the plane. */
static bool normal_in_plane(Vec3 n) {
    return hypot(n.x, n.y) >= 0.5 * vec3_norm(n);
}

void haptic_models_evaluate(const HapticSurface *surfaces, int surface_count,
                            HapticLocalSet *contacts, const HapticModelInput *in,
                            HapticModelOutput *out) {
    *out = (HapticModelOutput){.traced_kind = HAPTIC_MODEL_SURFACE};
    for (int i = 0; i < surface_count; i++) {
        double depth, fn;
        bool touching =
            surface_step(&surfaces[i], in, out->surface_force, out->tau_texture, &depth, &fn);
        note_model(out, HAPTIC_MODEL_SURFACE, touching, surfaces[i].kind == HAPTIC_SURFACE_WALL,
                   depth, fn);
    }
    if (!contacts || !contacts->have)
        return;
    Vec3 moved = proxy_moved(contacts, in->world), vel = {in->world_vel.x, in->world_vel.y, 0.0};
    Vec3 sum = {0, 0, 0};
    /* contacts act on the proxy; the handle stands in for it and feels them, in handle units */
    double to_handle = in->contact_gain / in->force_scale;
    int n = header(contacts)->count;
    for (int i = 0; i < n; i++) {
        Vec3 f;
        double depth, fn;
        HapticLocalModel *m = model(contacts, i);
        bool touching = contact_step(m, moved, vel, in->elapsed, &f, &depth, &fn);
        sum = vec3_add(sum, f);
        note_model(out, HAPTIC_MODEL_CONTACT, touching, normal_in_plane(m->kin.normal),
                   depth / in->position_scale, to_handle * fn);
    }
    out->contact_force[0] = in->contact_gain * sum.x / in->force_scale;
    out->contact_force[1] = in->contact_gain * sum.y / in->force_scale;
}

bool haptic_local_engine_reaction(const RegistrySlot *slot, HapticReaction *r, double dt,
                                  double now_wall, double max_age_s, Vec3 *force) {
    *force = (Vec3){0, 0, 0};
    HapticHandleState h = haptic_handle_unpack(slot);
    if (slot->count == 0 || now_wall - slot->t > max_age_s || !h.local_models || !(dt > 0.0)) {
        *r = (HapticReaction){.applied = {r->applied[0], r->applied[1]}};
        return false;
    }
    if (!r->primed || h.impulse_time < r->impulse_time) { /* first reading, or a new servo */
        *r = (HapticReaction){.applied = {r->applied[0], r->applied[1]},
                              .impulse = {h.impulse.x, h.impulse.y},
                              .impulse_time = h.impulse_time,
                              .primed = true};
        return true; /* what was rendered before the engine listened is not owed */
    }
    double span = h.impulse_time - r->impulse_time;
    /* a new mean once a window of the servo's time has passed; the steps of a burst (the
       engine catching up its horizon) between them apply the same mean */
    if (span >= HAPTIC_REACTION_WINDOW_S * (1.0 - 1e-9)) {
        double f[2] = {-(h.impulse.x - r->impulse[0]) / span,
                       -(h.impulse.y - r->impulse[1]) / span};
        double n = hypot(f[0], f[1]), limit = h.reaction_limit;
        if (!isfinite(n))
            f[0] = f[1] = 0.0;
        else if (n > limit)
            f[0] *= limit / n, f[1] *= limit / n;
        r->force[0] = f[0];
        r->force[1] = f[1];
        r->impulse[0] = h.impulse.x;
        r->impulse[1] = h.impulse.y;
        r->impulse_time = h.impulse_time;
    }
    r->count = slot->count;
    r->applied[0] += r->force[0] * dt;
    r->applied[1] += r->force[1] * dt;
    *force = (Vec3){r->force[0], r->force[1], 0.0};
    return true;
}

Vec3 haptic_local_engine_tracking(const RegistrySlot *slot, Vec3 pos, Vec3 vel, double mass) {
    HapticHandleState h = haptic_handle_unpack(slot);
    double w = h.track_omega;
    if (slot->count == 0 || !h.local_models || !(w > 0.0) || !(mass > 0.0) || !isfinite(w))
        return (Vec3){0, 0, 0};
    double k = mass * w * w, b = 2.0 * mass * w;
    Vec3 f = {k * (h.world.x - pos.x) + b * (h.world_vel.x - vel.x),
              k * (h.world.y - pos.y) + b * (h.world_vel.y - vel.y), 0.0};
    return isfinite(f.x) && isfinite(f.y) ? f : (Vec3){0, 0, 0};
}
