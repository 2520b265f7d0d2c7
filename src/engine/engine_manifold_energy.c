/* A collision update never raises a pair's elastic energy, and never hides depth for long; a
 * contact patch's damping.
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
 * update (old anchors, current state), against E_new, the energy of the new contacts at their
 * geometric depths (000 3.7.2: a collision may not gain energy). The excess E_new - E_old is paid,
 * in this order:
 * 1. by the bodies' motion relative to each other (brake_pair): an impulse at each overlapping
 *    contact along its normal while they approach there takes exactly the work its spring would
 *    have done had it begun at zero depth, then one along their relative velocity (a sliding pair
 *    pays as friction would). The contacts keep their geometric depths: nothing is hidden.
 *    EngineStats.onset_brake_energy counts it.
 * 2. what the motion cannot pay (a pair at rest whose manifold changed) by a depth offset delta
 *    common to the pair's contacts, the smallest with E_new(delta) <= E_old + paid + heal (a
 *    bracketing root search; each contact takes it up to its own depth, so one not overlapping
 *    keeps its true distance). heal is the share span / ENGINE_HEAL_TIME of what healing the
 *    pair's offset whole would add, span the simulated time the update serves: the energy an
 *    offset hides falls e-fold within ENGINE_HEAL_TIME whatever else happens, and a source that
 *    keeps adding S per update can never make it hide more than S ENGINE_HEAL_TIME / span (the
 *    hidden energy after an update is (1 - share) (hidden before + S)). E_old is measured with
 *    the old offset, so an offset the geometry or the motion does not pay is carried into the
 *    next update and heals there. Offsets up to ENGINE_HEAL_MIN_OFFSET stay; a pair carrying a
 *    larger one does not fall asleep (engine_sleep.c: a sleeping pair's contacts are carried
 *    unchanged, and its offset would wait with them). EngineStats.offset_heal_energy counts
 *    what healing added (docs/contact-models.md, "Energy at contact changes").
 * engine_penetration compares the depths the models are given with the overlap from the poses.
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
    uint32_t other =
        c->body_b >= 0 ? (uint32_t)c->body_b : (uint32_t)(e->model.body_count + c->obstacle);
    return ((uint64_t)(uint32_t)c->body << 32 | other) + 1;
}

/* realloc keeping the old block on failure */
static bool resize(void **array, size_t bytes) {
    void *p = realloc(*array, bytes);
    if (p)
        *array = p;
    return p != NULL;
}

static bool reserve(const Engine *e, EngineManifoldEnergy *m, int count) {
    if (count <= m->capacity && e->model.body_count <= m->braked_capacity)
        return true;
    /* grown geometrically: a pile gaining a contact a step would reallocate every step */
    count = issim_array_grown_capacity(m->capacity, count);
    int slots = 16;
    while (slots < 2 * count)
        slots *= 2;
    size_t n = (size_t)count, s = (size_t)slots;
    bool ok = resize((void **)&m->keys, sizeof *m->keys * s);
    ok = resize((void **)&m->old_energy, sizeof *m->old_energy * s) && ok;
    ok = resize((void **)&m->allowed, sizeof *m->allowed * s) && ok;
    ok = resize((void **)&m->offset, sizeof *m->offset * s) && ok;
    ok = resize((void **)&m->head, sizeof *m->head * s) && ok;
    ok = resize((void **)&m->next, sizeof *m->next * n) && ok;
    ok = resize((void **)&m->previous_of, sizeof *m->previous_of * n) && ok;
    ok = resize((void **)&m->kinematics, sizeof *m->kinematics * n) && ok;
    ok = resize((void **)&m->old_potential, sizeof *m->old_potential * n) && ok;
    ok = resize((void **)&m->pair_slot, sizeof *m->pair_slot * n) && ok;
    ok = resize((void **)&m->settled, sizeof *m->settled * n) && ok;
    if (e->model.body_count > m->braked_capacity) {
        unsigned char *braked = calloc((size_t)e->model.body_count, 1);
        ok = braked != NULL && ok;
        if (braked) {
            free(m->braked);
            m->braked = braked;
            m->braked_capacity = e->model.body_count;
        }
    }
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
        m->allowed[s] = NAN; /* not visited yet (engine_manifold_energy_settle) */
        m->offset[s] = 0.0;
    }
    return (int)s;
}

void engine_manifold_energy_free(Engine *e) {
    EngineManifoldEnergy *m = &e->collide.manifold_energy;
    free(m->keys);
    free(m->old_energy);
    free(m->allowed);
    free(m->offset);
    free(m->head);
    free(m->next);
    free(m->previous_of);
    free(m->kinematics);
    free(m->old_potential);
    free(m->pair_slot);
    free(m->settled);
    free(m->braked);
    *m = (EngineManifoldEnergy){.fresh = m->fresh};
}

/* Frozen contacts count too: a contact between sleeping bodies that the world re-makes (the
 * body moved in the step that put it to sleep) begins with new anchors and must not start
 * deeper than the old one held. Only what the world carried over unchanged stays out of the
 * ledger (engine_manifold_energy_settle takes its energy back out of the old side). */
static bool counts_energy(const Engine *e, const EngineContact *c) {
    return !engine_contact_time_stepped(e, c);
}

bool engine_manifold_energy_begin(Engine *e, int old_count, int new_count) {
    EngineManifoldEnergy *m = &e->collide.manifold_energy;
    if (!reserve(e, m, old_count + new_count + 1))
        return false;
    for (int s = 0; s < m->slots; s++)
        m->keys[s] = 0;
    m->old_count = old_count;
    return true;
}

/* The slot of a pair key, or -1 when no new contact of the update put it in the table. */
static int find_slot(const EngineManifoldEnergy *m, uint64_t key) {
    uint32_t s = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (uint32_t)(m->slots - 1);
    while (m->keys[s] != 0 && m->keys[s] != key)
        s = (s + 1) & (uint32_t)(m->slots - 1);
    return m->keys[s] == key ? (int)s : -1;
}

/* E_old per pair: the elastic energy each previous contact holds now, summed per pair in the
 * previous contacts' order, only for the pairs a new contact of the update re-made (a pair whose
 * contacts were all carried over frozen, or that ended, is never settled: its sum is read by
 * nobody). Each counted one's energy is kept for a frozen carried-over contact to take back out
 * (frozen_potential). */
static void count_old_energy(Engine *e) {
    EngineManifoldEnergy *m = &e->collide.manifold_energy;
    const EngineContact *previous = e->collide.previous;
    for (int j = 0; j < m->old_count; j++) {
        const EngineContact *c = &previous[j];
        m->old_potential[j] = NAN;
        if (m->fresh || !c->active || !counts_energy(e, c))
            continue;
        int s = find_slot(m, pair_key(e, c));
        if (s < 0 || m->head[s] < 0)
            continue; /* no re-made contact in its pair */
        ContactKinematics k;
        engine_merge_kinematics(e, e->collide.merge_states, c, &k);
        m->old_potential[j] = engine_contact_potential(e, c, &k);
        m->old_energy[s] += m->old_potential[j];
    }
}

/* The elastic energy contact c would hold with its depth lowered by delta. A contact that was
 * active keeps its history (the friction spring included); any other would begin now. */
static double energy_at(const Engine *e, const EngineContact *c, const ContactKinematics *k0,
                        bool has_history, double delta) {
    ContactKinematics k = *k0;
    k.depth -= delta;
    if (c->released)
        return 0.0; /* its model ended it while the bodies still overlap: nothing until they part */
    if (has_history)
        return engine_contact_potential(e, c, &k);
    const ContactModelClass *model = engine_contact_model(e, c);
    if (!(k.depth > 0.0))
        return 0.0;
    /* A model with its own state (a contact map's convolution) begins on a scratch copy: its
     * energy at onset counts like any other's. */
    size_t bytes = model->state_size ? model->state_size(engine_contact_params(e, c), &k) : 0;
    ContactHistory h = {.state = bytes ? calloc(1, bytes) : NULL, .state_bytes = bytes};
    if (bytes && !h.state)
        return 0.0;
    engine_contact_local_frames(e, c, &k);
    model->begin(engine_contact_params(e, c), &h, &k);
    double energy = model->potential(engine_contact_params(e, c), &h, &k);
    free(h.state);
    return energy;
}

static double pair_energy(const Engine *e, int head, double delta) {
    const EngineManifoldEnergy *m = &e->collide.manifold_energy;
    double sum = 0.0;
    for (int i = head; i >= 0; i = m->next[i]) {
        int j = m->previous_of[i];
        sum += energy_at(e, &e->contacts[e->vertex_contact_count + i], &m->kinematics[i],
                         j >= 0 && e->collide.previous[j].active, delta);
    }
    return sum;
}

/* delta with E_new(delta) <= allowed, within hi * 2^-BISECTIONS of the smallest such delta.
 * Bisection took BISECTIONS energy sums per pair that gained energy, a large share of the penalty
 * pile's time (issue 15; docs/performance.md). The Illinois variant of regula falsi keeps the same
 * bracket (f(hi) <= 0 at every iterate, so the pair never ends with more energy than it had) and
 * reaches the same width in about ten sums on these smooth, monotone E_new; a bisection step every
 * fourth iteration bounds the count by the bisection's own if it ever stalls. */
static double smallest_offset(const Engine *e, int head, double allowed_energy) {
    const EngineManifoldEnergy *m = &e->collide.manifold_energy;
    /* a relative slack of round-off: a pair that kept its geometry must keep delta = 0 */
    double allowed = allowed_energy * (1.0 + 1e-12) + 1e-300;
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
 * point or on a face. n counts the points the manifold reports for the pair within the collision
 * margin, not only the active ones, so a face landing flat has its damping from the start. */
static void share_patch_damping(Engine *e, int head) {
    const EngineManifoldEnergy *m = &e->collide.manifold_energy;
    /* The world's own margin, not the speculative one a fast body's pairs are tested with: the
     * count must not change with the step. */
    double margin = collision_desc_default().margin;
    int n = 0;
    for (int i = head; i >= 0; i = m->next[i])
        n += m->kinematics[i].depth > -margin;
    n = n > 0 ? n : 1;
    for (int i = head; i >= 0; i = m->next[i]) {
        EngineContact *c = &e->contacts[e->vertex_contact_count + i];
        /* the merge derived it with the count the contact had: again only if that changed */
        if (c->patch_points == n)
            continue;
        c->patch_points = n;
        engine_contact_bind_params(e, c, NULL); /* derived once already: only memory can fail */
    }
}

/* The pair's excess elastic energy taken out of its bodies' motion relative to each other: at
 * each overlapping contact, deepest first, along its normal while the bodies approach there (the
 * work that contact's spring would have done had it begun at zero depth: a box whose face slaps
 * down pivots about its deepest corner, and it is the far corners that approach), then, in the
 * same order, along their relative velocity there (a sliding pair pays as friction would). Returns
 * what was taken; what the bodies' motion cannot pay (a pair at rest) is left to the depth offset.
 * The points are visited in a fixed order (depth, then position in the list), so a replay brakes
 * the same way. */
static double brake_pair(Engine *e, int head, double excess) {
    const EngineManifoldEnergy *m = &e->collide.manifold_energy;
    double taken = 0.0;
    for (int along_normal = 1; along_normal >= 0; along_normal--) {
        double below = INFINITY;
        for (int pass = 0; pass < MANIFOLD_MAX_POINTS && taken < excess; pass++) {
            int next = -1; /* the deepest contact shallower than the last one braked */
            for (int i = head; i >= 0; i = m->next[i]) {
                double d = m->kinematics[i].depth;
                if (d > 0.0 && d < below && (next < 0 || d > m->kinematics[next].depth))
                    next = i;
            }
            if (next < 0)
                break;
            below = m->kinematics[next].depth;
            const ContactKinematics *k = &m->kinematics[next];
            const EngineContact *c = &e->contacts[e->vertex_contact_count + next];
            Vec3 dir = along_normal ? vec3_scale(k->normal, -1.0) : (Vec3){0, 0, 0};
            /* every brake tried, paid or not: a superset of the bodies whose rates changed */
            m->braked[c->body] = 1;
            if (c->body_b >= 0)
                m->braked[c->body_b] = 1;
            taken += engine_contact_brake(e, e->collide.merge_states, c, k->contact_point, dir,
                                          excess - taken);
        }
    }
    return taken;
}

/* The elastic energy of c, carried over frozen from the previous contact previous_of names:
 * what count_old_energy counted for it, the same bits (its bodies and history did not move),
 * else computed (a fresh update counts none). */
static double frozen_potential(const Engine *e, const EngineContact *c, int previous_of) {
    double counted = e->collide.manifold_energy.old_potential[ENGINE_FROZEN_SOURCE(previous_of)];
    if (!isnan(counted))
        return counted;
    ContactKinematics k;
    engine_merge_kinematics(e, e->collide.merge_states, c, &k);
    return engine_contact_potential(e, c, &k);
}

/* The rates changed: the kinematics the activity and the models' onsets read follow, computed
 * again for the contacts of a braked body. The others' inputs did not change: their depth is
 * rounded as a computed one's is (the geometric depth less the offset, then plus it), the same
 * bits as computing them again (their first depth was taken at offset 0). */
static void follow_brakes(Engine *e, int new_count) {
    EngineManifoldEnergy *m = &e->collide.manifold_energy;
    for (int i = 0; i < new_count; i++) {
        const EngineContact *c = &e->contacts[e->vertex_contact_count + i];
        if (!counts_energy(e, c) || m->previous_of[i] < -1)
            continue;
        bool moved = m->braked[c->body] || (c->body_b >= 0 && m->braked[c->body_b]);
        if (moved)
            engine_merge_kinematics(e, e->collide.merge_states, c, &m->kinematics[i]);
        else
            m->kinematics[i].depth -= c->depth_offset;
        m->kinematics[i].depth += c->depth_offset; /* the ledger's depth is the geometric one */
    }
}

void engine_manifold_energy_settle(Engine *e, int new_count) {
    EngineManifoldEnergy *m = &e->collide.manifold_energy;
    /* The pairs the update re-made, each with its chain of new contacts, then their old
     * energies, less what a frozen contact carried over holds on both sides. */
    for (int i = 0; i < new_count; i++) {
        EngineContact *c = &e->contacts[e->vertex_contact_count + i];
        m->next[i] = -1;
        m->pair_slot[i] = -1;
        if (!counts_energy(e, c) || m->previous_of[i] < -1)
            continue; /* a time-stepped row, or carried over frozen */
        int s = slot_of(m, pair_key(e, c));
        m->pair_slot[i] = s;
        engine_merge_kinematics(e, e->collide.merge_states, c, &m->kinematics[i]);
        m->next[i] = m->head[s];
        m->head[s] = i;
    }
    count_old_energy(e);
    for (int i = 0; i < new_count; i++) {
        EngineContact *c = &e->contacts[e->vertex_contact_count + i];
        if (m->previous_of[i] >= -1 || !c->active || !counts_energy(e, c))
            continue;
        int s = find_slot(m, pair_key(e, c));
        if (s >= 0 && m->head[s] >= 0) /* a pair re-made in part: it is settled */
            m->old_energy[s] -= frozen_potential(e, c, m->previous_of[i]);
    }
    bool fresh = m->fresh;
    m->fresh = false;
    bool braked = false;
    /* The pairs in the order of their contacts, not of their hash slots: a brake changes the
     * rates the next pair's brake reads, and the slots' order depends on the table's size, which
     * a rewound engine need not share with the run it replays. */
    int settled = 0;
    for (int i = 0; i < new_count; i++) {
        int s = m->pair_slot[i];
        if (s < 0 || !isnan(m->allowed[s]))
            continue;
        m->settled[settled++] = s;
        m->allowed[s] = m->old_energy[s] * (1.0 + 1e-12);
        share_patch_damping(e, m->head[s]);
        double excess = fresh ? 0.0 : pair_energy(e, m->head[s], 0.0) - m->allowed[s];
        if (!(excess > 0.0))
            continue;
        double paid = brake_pair(e, m->head[s], excess);
        e->stats.onset_brake_energy += paid;
        braked = braked || paid > 0.0;
        m->allowed[s] += paid;
        if (paid < excess) {
            m->offset[s] = smallest_offset(e, m->head[s], m->allowed[s]);
        }
    }
    /* Every offset heals by the same share of its energy per update, whatever else happens: its
     * energy falls e-fold within ENGINE_HEAL_TIME of simulated time while its bodies are awake. */
    double share = fmin(1.0, (m->span > 0.0 ? m->span : e->model.dt) / ENGINE_HEAL_TIME);
    m->span = 0.0;
    for (int p = 0; p < settled; p++) { /* each pair settled above, none twice */
        int s = m->settled[p];
        double delta = m->offset[s];
        if (delta > ENGINE_HEAL_MIN_OFFSET) {
            double whole = pair_energy(e, m->head[s], 0.0) - m->allowed[s];
            delta = smallest_offset(e, m->head[s], m->allowed[s] + share * whole);
            double gained = pair_energy(e, m->head[s], delta) - m->allowed[s];
            e->stats.offset_heal_energy += gained > 0.0 ? gained : 0.0;
        }
        /* Each contact takes the offset up to its own geometric depth: the pair's energy is the
         * same (a contact no deeper than delta holds nothing either way), and one that is not
         * overlapping keeps its true distance, so it begins when the bodies touch, not delta
         * later. */
        for (int i = m->head[s]; i >= 0; i = m->next[i]) {
            /* fmin(delta, fmax(depth, 0)) without the two library calls per contact */
            double depth = m->kinematics[i].depth > 0.0 ? m->kinematics[i].depth : 0.0;
            e->contacts[e->vertex_contact_count + i].depth_offset = delta < depth ? delta : depth;
        }
    }
    if (braked) {
        /* the bodies' rates changed under the integrator */
        engine_invalidate(e, ENGINE_INVALID_INTEGRATOR);
        follow_brakes(e, new_count);
    }
    for (int i = 0; i < new_count; i++) {
        const EngineContact *c = &e->contacts[e->vertex_contact_count + i];
        m->braked[c->body] = 0;
        if (c->body_b >= 0)
            m->braked[c->body_b] = 0;
    }
}
