/* A collision update never raises a pair's elastic energy; a contact patch's damping.
 *
 * Between updates a manifold contact is passive: its anchors ride on the bodies and its force
 * is the gradient of its depth (engine_manifold_kinematics), so it only stores what the bodies
 * give it and its damper dissipates (000 2.4; 004 4.8, App. C). An update re-makes the anchors
 * from the new manifold, though: the clipping moves points along edges, feature changes swap
 * one contact for another, a triangle mesh adds a contact as a body slides onto a new triangle,
 * and each of those can start a contact already deep, with elastic energy nobody paid for
 * (measured on scenes/pile.lua: total energy rose in a third of the steps, independent of dt).
 *
 * The ledger per body pair: E_old, the elastic energy the pair's contacts held just before the
 * update (old anchors, current state), against E_new(delta), the energy of the new contacts
 * with one common offset delta subtracted from their geometric depths. delta is the smallest
 * value with E_new(delta) <= E_old, found by a bracketing root search (E_new falls with delta); 0
 * whenever the new geometry holds no more energy than the old, so an offset heals as soon as the
 * geometry allows it and a pair that keeps its contacts keeps its depths. A pair touching for the
 * first time has E_old = 0: a contact that appears already overlapping starts at zero force.
 *
 * The first update after creation or a state jump is the user's initial condition and keeps
 * its geometric depths (the loader warns about an overlapping start). Models with their own
 * state block (plug-ins, ContactModelClass.state_size) cannot be evaluated before their onset,
 * so a newborn contact of such a model counts no energy. */
#include <math.h>
#include <stdlib.h>

#include "engine_internal.h"

enum { BISECTIONS = 48 };

static uint64_t pair_key(const Engine *e, const EngineContact *c) {
    uint32_t other = c->body_b >= 0 ? (uint32_t)c->body_b : (uint32_t)(e->body_count + c->obstacle);
    return ((uint64_t)(uint32_t)c->body << 32 | other) + 1;
}

/* realloc keeping the old block on failure */
static bool resize(void **array, size_t bytes) {
    void *p = realloc(*array, bytes);
    if (p)
        *array = p;
    return p != NULL;
}

static bool reserve(EngineManifoldEnergy *m, int count) {
    if (count <= m->capacity)
        return true;
    int slots = 16;
    while (slots < 2 * count)
        slots *= 2;
    size_t n = (size_t)count, s = (size_t)slots;
    bool ok = resize((void **)&m->keys, sizeof *m->keys * s);
    ok = resize((void **)&m->old_energy, sizeof *m->old_energy * s) && ok;
    ok = resize((void **)&m->head, sizeof *m->head * s) && ok;
    ok = resize((void **)&m->next, sizeof *m->next * n) && ok;
    ok = resize((void **)&m->previous_of, sizeof *m->previous_of * n) && ok;
    ok = resize((void **)&m->kinematics, sizeof *m->kinematics * n) && ok;
    if (!ok)
        return false;
    m->capacity = count;
    m->slots = slots;
    return true;
}

static int slot_of(EngineManifoldEnergy *m, uint64_t key) {
    uint32_t s = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (uint32_t)(m->slots - 1);
    while (m->keys[s] != 0 && m->keys[s] != key)
        s = (s + 1) & (uint32_t)(m->slots - 1);
    if (m->keys[s] == 0) {
        m->keys[s] = key;
        m->old_energy[s] = 0.0;
        m->head[s] = -1;
    }
    return (int)s;
}

void engine_manifold_energy_free(Engine *e) {
    EngineManifoldEnergy *m = &e->manifold_energy;
    free(m->keys);
    free(m->old_energy);
    free(m->head);
    free(m->next);
    free(m->previous_of);
    free(m->kinematics);
    *m = (EngineManifoldEnergy){.fresh = m->fresh};
}

/* Frozen contacts count too: a contact between sleeping bodies that the world re-makes (the
 * body moved in the step that put it to sleep) begins with new anchors and must not start
 * deeper than the old one held. Only what the world carried over unchanged stays out of the
 * ledger (engine_manifold_energy_settle takes its energy back out of the old side). */
static bool counts_energy(const Engine *e, const EngineContact *c) {
    return !engine_contact_time_stepped(e, c);
}

bool engine_manifold_energy_begin(Engine *e, const EngineContact *previous, int old_count,
                                  int new_count) {
    EngineManifoldEnergy *m = &e->manifold_energy;
    if (!reserve(m, old_count + new_count + 1))
        return false;
    for (int s = 0; s < m->slots; s++)
        m->keys[s] = 0;
    for (int j = 0; j < old_count && !m->fresh; j++) {
        const EngineContact *c = &previous[j];
        if (!c->active || !counts_energy(e, c))
            continue;
        ContactKinematics k;
        engine_merge_kinematics(e, e->merge_states, c, &k);
        m->old_energy[slot_of(m, pair_key(e, c))] += engine_contact_potential(e, c, &k);
    }
    return true;
}

/* The elastic energy contact c would hold with its depth lowered by delta. A contact that was
 * active keeps its history (the friction spring included); any other would begin now. */
static double energy_at(const Engine *e, const EngineContact *c, const ContactKinematics *k0,
                        bool has_history, double delta) {
    ContactKinematics k = *k0;
    k.depth -= delta;
    if (has_history)
        return engine_contact_potential(e, c, &k);
    const ContactModelClass *model = engine_contact_model(e, c);
    if (!(k.depth > 0.0))
        return 0.0;
    /* A model with its own state (a contact map's convolution) begins on a scratch copy: its
     * energy at onset counts like any other's. */
    size_t bytes = model->state_size ? model->state_size(&c->params, &k) : 0;
    ContactHistory h = {.state = bytes ? calloc(1, bytes) : NULL, .state_bytes = bytes};
    if (bytes && !h.state)
        return 0.0;
    engine_contact_local_frames(e, c, &k);
    model->begin(&c->params, &h, &k);
    double energy = model->potential(&c->params, &h, &k);
    free(h.state);
    return energy;
}

static double pair_energy(const Engine *e, int head, double delta) {
    const EngineManifoldEnergy *m = &e->manifold_energy;
    double sum = 0.0;
    for (int i = head; i >= 0; i = m->next[i]) {
        int j = m->previous_of[i];
        sum += energy_at(e, &e->contacts[e->vertex_contact_count + i], &m->kinematics[i],
                         j >= 0 && e->previous[j].active, delta);
    }
    return sum;
}

/* delta with E_new(delta) <= allowed, within hi * 2^-BISECTIONS of the smallest such delta.
 * Bisection took BISECTIONS energy sums per pair that gained energy: 16% of the penalty pile's
 * time (issue 15). The Illinois variant of regula falsi keeps the same bracket (f(hi) <= 0 at
 * every iterate, so the pair never ends with more energy than it had) and reaches the same
 * width in about ten sums on these smooth, monotone E_new; a bisection step every fourth
 * iteration bounds the count by the bisection's own if it ever stalls. */
static double smallest_offset(const Engine *e, int head, double old_energy) {
    const EngineManifoldEnergy *m = &e->manifold_energy;
    /* a relative slack of round-off: a pair that kept its geometry must keep delta = 0 */
    double allowed = old_energy * (1.0 + 1e-12) + 1e-300;
    double f_lo = pair_energy(e, head, 0.0) - allowed;
    if (f_lo <= 0.0)
        return 0.0;
    double lo = 0.0, hi = 0.0;
    for (int i = head; i >= 0; i = m->next[i])
        hi = m->kinematics[i].depth > hi ? m->kinematics[i].depth : hi;
    double f_hi = pair_energy(e, head, hi) - allowed;
    if (f_hi > 0.0)
        return hi; /* the friction springs alone hold more: no normal force at all */
    double width = ldexp(hi, -BISECTIONS);
    int kept = 0; /* +1: lo kept its end last time, -1: hi did */
    for (int it = 0; it < 4 * BISECTIONS && hi - lo > width; it++) {
        double mid = it % 4 == 3 ? 0.5 * (lo + hi) : (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
        if (!(mid > lo && mid < hi))
            mid = 0.5 * (lo + hi);
        double f = pair_energy(e, head, mid) - allowed;
        if (f <= 0.0) {
            hi = mid;
            f_hi = f;
            if (kept == 1)
                f_lo *= 0.5;
            kept = 1;
        } else {
            lo = mid;
            f_lo = f;
            if (kept == -1)
                f_hi *= 0.5;
            kept = -1;
        }
    }
    return hi;
}

/* Restitution per contact patch (004 4.8 eqs. 4.92-4.93): n points of one pair in parallel,
 * each damped for the whole pair's mass, damp the patch sqrt(n) times too much (a flat box set
 * to r = 0.5 bounced at 0.223 on four points). Each point takes the damping of its share m / n
 * of the reduced mass (EngineContact.patch_points, read by engine_contact_params, so a
 * re-derivation after an edit or a restore keeps it): b(k, m / n) = b(k, m) / sqrt(n), and the
 * patch, stiffness n k and damping n b(k, m / n), has the damping ratio a single point would
 * have on m: a body bounces with the restitution its pair states whether it touches at one
 * point or on a face. n counts the points the manifold reports for the pair (within the
 * margin), not only the active ones, so a face landing flat has its damping from the start. */
static void share_patch_damping(Engine *e, int head) {
    const EngineManifoldEnergy *m = &e->manifold_energy;
    int n = 0;
    for (int i = head; i >= 0; i = m->next[i])
        n++;
    for (int i = head; i >= 0; i = m->next[i]) {
        EngineContact *c = &e->contacts[e->vertex_contact_count + i];
        /* the merge derived it with the count the contact had: again only if that changed */
        if (c->patch_points == n)
            continue;
        c->patch_points = n;
        engine_contact_params(e, c, NULL); /* it was derived once already: it cannot fail */
    }
}

void engine_manifold_energy_settle(Engine *e, int new_count) {
    EngineManifoldEnergy *m = &e->manifold_energy;
    for (int i = 0; i < new_count; i++) {
        EngineContact *c = &e->contacts[e->vertex_contact_count + i];
        m->next[i] = -1;
        if (!counts_energy(e, c))
            continue; /* a time-stepped row */
        int s = slot_of(m, pair_key(e, c));
        engine_merge_kinematics(e, e->merge_states, c, &m->kinematics[i]);
        if (m->previous_of[i] < -1) { /* carried over frozen: the same energy on both sides */
            if (c->active)
                m->old_energy[s] -= engine_contact_potential(e, c, &m->kinematics[i]);
            continue;
        }
        m->next[i] = m->head[s];
        m->head[s] = i;
    }
    bool fresh = m->fresh;
    m->fresh = false;
    for (int s = 0; s < m->slots; s++) {
        if (m->keys[s] == 0 || m->head[s] < 0)
            continue;
        share_patch_damping(e, m->head[s]);
        double delta = fresh ? 0.0 : smallest_offset(e, m->head[s], m->old_energy[s]);
        for (int i = m->head[s]; i >= 0; i = m->next[i])
            e->contacts[e->vertex_contact_count + i].depth_offset = delta;
    }
}
