/* The contact-map model: the normal force of a contact is the convolution of each body's
 * indentation history with its contact-response map, with action and reaction balanced at every
 * sample (seed 000 3.6.1).
 *
 * Source: 000 3.5-3.7: impulse response by eq. 3.16 (contact_map_increments: a_k = T g(kT)),
 * convolution 3.19-3.20 from the contact's onset, the action-reaction split 3.21-3.27, the end of
 * the contact when the force returns to zero (end of 3.6.1); a body without a map is a flat map
 * of the pair's stiffness (000 6.5, the rigid foundation). Node chosen at onset by the contact
 * location (000 4.4; contact_map_choose). Several contacts superpose (003 5.2): each contact has
 * its own history. Coulomb friction (Goyal, 000 5.7) acts on the map's normal force.
 *
 * Discrete scheme. Sample n is taken every T (the map's period) from the onset; the engine steps
 * at T while the contact lasts (fixed_step). With A's and B's indentations dA, dB (dA + dB = e,
 * the contact's depth), current coefficients cA = h_A(T), cB = h_B(T) and histories
 * HA = sum_m wA_m dA_{n-1-m}, HB likewise (contactmap.h: the quadrature's weights), 3.22-3.25
 * read  F = HA + cA dA = HB + cB dB,  so
 *     dA = (cB e + HB - HA) / (cA + cB),   F = (cA cB e + cB HA + cA HB) / (cA + cB)   (3.26-3.27).
 * TRAPEZOID: F(e) is evaluated at the integrator's trial depths between samples, the histories
 * moving linearly from their value at the last sample to the next (second order), so a flat map
 * is exactly the linear spring cA cB / (cA + cB) (V8). ENDPOINT: the
 * published scheme: the force of the last sample is held over the step (first order, V7).
 * The force never pulls: F = max(0, F), and a sample with F <= 0 ends the contact.
 */
#include <math.h>
#include <string.h>

#include "contact_internal.h"

typedef struct MapSide {
    ContactMapSource source; /* map NULL: a flat side (no history) */
    ContactMapConvolution convolution;
    double current; /* c: the coefficient of the current indentation, N/m */
    double steady;  /* h(NT): the stiffness the response settles to, N/m */
    /* H at the last sample and at the next, N: inside the step H moves linearly between them
     * (held at `history` it would make the scheme first order). */
    double history_prev, history;
    size_t offset; /* of its convolution state, in doubles after the header */
} MapSide;

/* The state: the header, then each side's convolver state (contact_map_conv_doubles). The map
 * pointers in it are the params' own, re-set at every call (the state may be copied between
 * engines' checkpoints only within one engine, where they do not change). */
typedef struct MapState {
    MapSide a, b;
    double period;
    double next_sample; /* s */
    double force;       /* N, at the last sample */
    long long samples;  /* taken since onset */
    bool begun;         /* begin() has run (the engine hands the state over zeroed) */
} MapState;

#define STATE_HEADER_DOUBLES ((sizeof(MapState) + sizeof(double) - 1) / sizeof(double))

static double map_period(const ContactParams *p) {
    if (p->map_a)
        return contact_map_period(p->map_a);
    return p->map_b ? contact_map_period(p->map_b) : 0.0;
}

/* A side's stiffness before the contact has begun (the engine may evaluate a contact's energy
 * or force before its onset is committed): node 0's steady state, or the pair's stiffness. */
static double side_fallback(const ContactParams *p, const ContactMap *map) {
    if (!map)
        return p->stiffness;
    double steady = contact_map_step(map, 0)[contact_map_samples(map) - 1];
    return steady > 0.0 ? steady : contact_map_step(map, 0)[0];
}

static double series(double a, double b) {
    return a + b > 0.0 ? a * b / (a + b) : 0.0;
}

static size_t side_doubles(const ContactParams *p, const ContactMap *map) {
    return map ? contact_map_conv_doubles(map, p->map_convolution) : 0;
}

static size_t map_state_size(const ContactParams *p, const ContactKinematics *k) {
    (void)k;
    return sizeof(double) *
           (STATE_HEADER_DOUBLES + side_doubles(p, p->map_a) + side_doubles(p, p->map_b));
}

static double *conv_state(MapState *st, const MapSide *s) {
    return (double *)st + STATE_HEADER_DOUBLES + s->offset;
}

static void side_begin(const ContactParams *p, MapState *st, const ContactMap *map, Vec3 point,
                       Vec3 normal, size_t offset, MapSide *s) {
    *s = (MapSide){.convolution = p->map_convolution, .offset = offset};
    if (!map) {
        s->current = s->steady = p->stiffness;
        return;
    }
    ContactMapChoice c = contact_map_choose(map, point, normal, p->map_interpolate);
    s->source = (ContactMapSource){
        .map = map, .node = c.node, .second = c.second, .weight = c.weight, .rule = p->map_rule};
    int last = contact_map_samples(map) - 1;
    s->current = c.weight * contact_map_step(map, c.node)[0] +
                 (1.0 - c.weight) * contact_map_step(map, c.second)[0];
    s->steady = c.weight * contact_map_step(map, c.node)[last] +
                (1.0 - c.weight) * contact_map_step(map, c.second)[last];
    /* A free body's map has no steady state (its response ends oscillating about zero, the
     * steel bar's): its energy is counted at the instantaneous stiffness h(T). */
    if (!(s->steady > 0.0))
        s->steady = s->current;
    contact_map_conv_init(map, p->map_convolution, conv_state(st, s));
}

/* Pushes a side's indentation at this sample; returns its history for the next. */
static double side_push(const ContactMap *map, MapState *st, MapSide *s, double d) {
    if (!map)
        return 0.0;
    s->source.map = map;
    return contact_map_conv_push(&s->source, s->convolution, conv_state(st, s), d);
}

/* The force and A's indentation for the contact's total depth e (3.26-3.27), the histories
 * ha, hb. */
static double balanced_force(const MapState *st, double e, double ha, double hb, double *da) {
    double ca = st->a.current, cb = st->b.current;
    double sum = ca + cb;
    if (!(sum > 0.0)) {
        *da = 0.0;
        return 0.0;
    }
    *da = (cb * e + hb - ha) / sum;
    return (ca * cb * e + cb * ha + ca * hb) / sum;
}

/* A side's history at time t inside the step that ends at the next sample. */
static double history_at(const MapState *st, const MapSide *s, double t) {
    double u = 1.0 - (st->next_sample - t) / st->period;
    u = u < 0.0 ? 0.0 : (u > 1.0 ? 1.0 : u);
    return s->history_prev + u * (s->history - s->history_prev);
}

static double map_normal(const ContactParams *p, const ContactHistory *h,
                         const ContactKinematics *k) {
    const MapState *st = h->state;
    if (!st || !st->begun) /* no state (out of memory at onset) or not begun: the flat springs */
        return k->depth > 0.0
                   ? series(side_fallback(p, p->map_a), side_fallback(p, p->map_b)) * k->depth
                   : 0.0;
    double f;
    if (p->map_rule == CONTACT_MAP_ENDPOINT) {
        f = st->force;
    } else {
        double da;
        f = balanced_force(st, k->depth, history_at(st, &st->a, k->t), history_at(st, &st->b, k->t),
                           &da);
    }
    return f > 0.0 ? f : 0.0;
}

static ContactForce map_force(const ContactParams *p, const ContactHistory *h,
                              const ContactKinematics *k) {
    return contact_force_with_friction(p, h, k, map_normal(p, h, k));
}

static void map_begin(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    contact_begin_common(h, k);
    MapState *st = h->state;
    if (!st)
        return;
    side_begin(p, st, p->map_a, k->point_in_a, k->normal_in_a, 0, &st->a);
    side_begin(p, st, p->map_b, k->point_in_b, k->normal_in_b, side_doubles(p, p->map_a), &st->b);
    st->period = map_period(p);
    st->next_sample = k->t + st->period;
    st->begun = true;
    h->phase = st->a.source.node; /* shown in contact reports: the node in use */
}

/* Takes sample n at the depth e: the balanced force, both indentations into the convolutions,
 * and the histories of sample n + 1. */
static void take_sample(const ContactParams *p, MapState *st, double e) {
    double da;
    st->force = balanced_force(st, e, st->a.history, st->b.history, &da);
    st->samples++;
    st->a.history_prev = st->a.history;
    st->b.history_prev = st->b.history;
    st->a.history = side_push(p->map_a, st, &st->a, da);
    st->b.history = side_push(p->map_b, st, &st->b, e - da);
}

static int map_commit(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    if (k->depth > h->depth_max)
        h->depth_max = k->depth;
    MapState *st = h->state;
    int events = CONTACT_EVENT_NONE;
    if (st && st->period > 0.0 && k->t >= st->next_sample - 1e-6 * st->period) {
        take_sample(p, st, k->depth);
        st->next_sample += st->period;
        if (st->force <= 0.0) /* the force returned to zero: the contact ends (000 3.6.1) */
            events |= CONTACT_EVENT_SEPARATION;
    }
    contact_friction_commit(p, h, k, map_normal(p, h, k));
    return events;
}

static double map_fixed_step(const ContactParams *p) {
    return map_period(p);
}

static double map_time_scale(const ContactParams *p, double effective_mass) {
    double ca =
        p->map_a ? contact_map_step(p->map_a, 0)[contact_map_samples(p->map_a) - 1] : p->stiffness;
    double cb =
        p->map_b ? contact_map_step(p->map_b, 0)[contact_map_samples(p->map_b) - 1] : p->stiffness;
    double k = ca * cb / (ca + cb);
    return k > 0.0 ? sqrt(effective_mass / k) : INFINITY;
}

/* The energy a side holds at indentation d under the force f: its steady spring, plus what its
 * transient holds read as one Maxwell branch (a spring of the transient's first-sample stiffness
 * c - K in series with a dashpot: a step response K + P exp(-t / tau)), whose spring carries the
 * force above the steady one. Exact for such a map, the `transient` family of 000 4.3; for other
 * shapes of memory an estimate, and nothing for a side whose first sample is not above its
 * steady state (a flat map, a free body's map). */
static double side_energy(const MapSide *s, double d, double f) {
    double energy = 0.5 * s->steady * d * d;
    double branch = s->current - s->steady;
    if (branch > 0.0) {
        double held = f - s->steady * d;
        energy += 0.5 * held * held / branch;
    }
    return energy;
}

/* The elastic energy the contact holds: each side's steady spring at its own indentation and the
 * energy held in its transient (side_energy), so that the memory's energy is counted while it is
 * stored and only its loss (000 3.7.2: into the body's internal waves) leaves the total. Flat
 * sides reduce to the two springs in series. */
static double map_potential(const ContactParams *p, const ContactHistory *h,
                            const ContactKinematics *k) {
    const MapState *st = h->state;
    if (k->depth <= 0.0)
        return 0.0;
    bool begun = st && st->begun;
    if (!begun || (st->a.current <= st->a.steady && st->b.current <= st->b.steady)) {
        double ka = begun ? st->a.steady : side_fallback(p, p->map_a);
        double kb = begun ? st->b.steady : side_fallback(p, p->map_b);
        return 0.5 * series(ka, kb) * k->depth * k->depth;
    }
    double da;
    double f = balanced_force(st, k->depth, history_at(st, &st->a, k->t),
                              history_at(st, &st->b, k->t), &da);
    return side_energy(&st->a, da, f) + side_energy(&st->b, k->depth - da, f);
}

/* A contact that cannot be restored from a checkpoint restarts its history at k: the
 * indentation so far is lost (the engine logs the reset). */
static void map_reset(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    memset(h->state, 0, h->state_bytes);
    map_begin(p, h, k);
}

static const ContactParamDecl param_map_quadrature = CONTACT_ENUM_PARAM(
    "map_quadrature",
    "contact_map: quadrature of the convolution, trapezoid (second order, a flat map is exactly "
    "a spring) or endpoint (000 eq. 3.20 with the force held over each step, first order)",
    contact_map_rule_names, CONTACT_MAP_RULE_COUNT, CONTACT_MAP_TRAPEZOID, map_rule);
static const ContactParamDecl param_map_node = {
    .prop = {.name = "map_node",
             .type = PROP_ENUM,
             .unit = "",
             .description = "contact_map: the response of the node nearest the contact, or "
                            "interpolated between the two nearest (000 4.4)",
             .mutability = PROP_LIVE,
             .enum_names = contact_map_node_choice_names,
             .enum_count = CONTACT_MAP_NODE_COUNT,
             .default_value = {.type = PROP_ENUM, .integer = CONTACT_MAP_NODE_NEAREST}},
    .store = CONTACT_PARAM_FLAG,
    .offset = offsetof(ContactParams, map_interpolate),
    .index = CONTACT_MAP_NODE_INTERPOLATE};
static const ContactParamDecl param_map_convolution = CONTACT_ENUM_PARAM(
    "map_convolution",
    "contact_map: how the convolution sum is computed: direct (O(N) per step), fft (partitioned "
    "FFT: about 0.2-0.3 us per step from N = 64 to 65,536) or auto (fft for maps longer than 256 "
    "samples); the same force to rounding",
    contact_map_convolution_names, CONTACT_MAP_CONV_COUNT, CONTACT_MAP_CONV_AUTO, map_convolution);
static const ContactParamDecl *const contact_map_params[] = {&param_map_quadrature, &param_map_node,
                                                             &param_map_convolution};

const ContactModelClass contact_map_class = {
    .name = "contact_map",
    .description = "convolution of the indentation history with the bodies' contact-response "
                   "maps, action and reaction balanced at every sample",
    .source = "000 3.5-3.7 eqs. 3.16-3.27, 4.4, 6.5",
    .params = contact_map_params,
    .param_count = 3,
    .force = map_force,
    .begin = map_begin,
    .commit = map_commit,
    .fixed_step = map_fixed_step,
    .time_scale = map_time_scale,
    .force_ignores_effective_mass = true,
    .ignores_effective_mass = true,
    .potential = map_potential,
    .state_size = map_state_size,
    .reset = map_reset,
};
