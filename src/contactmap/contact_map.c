/* A contact-response map (seed 000 3.5, Definition 1): boundary nodes with their step responses
 * h_j(kT), and the impulse weights a_k = h(kT) - h((k-1)T) = T g(kT) of eq. 3.16 the convolution
 * 3.20 runs on. Synthetic maps of 000 4.2 (flat) and 4.3 (steady state plus a transient). */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contactmap_internal.h"

static IssimStatus check_spec_header(const ContactMapSpec *spec, const char *origin,
                                     IssimError *err) {
    if (spec->dimension != 2 && spec->dimension != 3)
        return issim_error_set(err, ISSIM_ERR_RANGE, "%s: dimension %d (must be 2 or 3)", origin,
                               spec->dimension);
    if (!(spec->period > 0.0) || !isfinite(spec->period))
        return issim_error_set(err, ISSIM_ERR_RANGE, "%s: period %g s (must be finite and > 0)",
                               origin, spec->period);
    if (spec->period < CONTACT_MAP_MIN_PERIOD)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "%s: period %g s is below %g s: the engine takes one step per "
                               "sample, %.3g per millisecond of simulated time",
                               origin, spec->period, CONTACT_MAP_MIN_PERIOD, 1e-3 / spec->period);
    if (spec->samples < 1 || spec->samples > CONTACT_MAP_MAX_SAMPLES)
        return issim_error_set(err, ISSIM_ERR_RANGE, "%s: %d samples (must be 1 ... %d)", origin,
                               spec->samples, CONTACT_MAP_MAX_SAMPLES);
    if (spec->node_count < 1 || spec->node_count > CONTACT_MAP_MAX_NODES)
        return issim_error_set(err, ISSIM_ERR_RANGE, "%s: %d nodes (must be 1 ... %d)", origin,
                               spec->node_count, CONTACT_MAP_MAX_NODES);
    if ((size_t)spec->samples * (size_t)spec->node_count > CONTACT_MAP_MAX_VALUES)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "%s: %d nodes x %d samples is over the %d values a map may hold",
                               origin, spec->node_count, spec->samples, CONTACT_MAP_MAX_VALUES);
    return ISSIM_OK;
}

static bool vec_finite(Vec3 v) {
    return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

static IssimStatus check_node(const ContactMapSpec *spec, const char *origin, int j,
                              ContactMapNode *node, IssimError *err) {
    *node = spec->nodes[j];
    double len = vec3_norm(node->normal);
    if (!vec_finite(node->position) || !vec_finite(node->normal))
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s: node %d: non-finite position or normal",
                               origin, j);
    if (fabs(len - 1.0) > 1e-6)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s: node %d: normal (%g, %g, %g) is not a unit vector (length %g)",
                               origin, j, node->normal.x, node->normal.y, node->normal.z, len);
    node->normal = vec3_scale(node->normal, 1.0 / len);
    const double *h = spec->step + (size_t)j * (size_t)spec->samples;
    for (int k = 0; k < spec->samples; k++)
        if (!isfinite(h[k]))
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "%s: node %d: sample %d (t = %g s) is not finite", origin, j,
                                   k + 1, (k + 1) * spec->period);
    if (h[0] < 0.0)
        issim_log(ISSIM_LOG_WARN,
                  "%s: node %d: the first impulse sample h(T) = %g N/m is negative: a collision "
                  "using this node may gain energy (000 eq. 3.36)",
                  origin, j, h[0]);
    return ISSIM_OK;
}

/* a_k of the header's formulas is a[k - 1]; beyond N the response is flat (a = 0). */
static void fill_weights(ContactMap *map, int j) {
    int n = map->samples;
    const double *a = map->increments + (size_t)j * (size_t)n;
    double *end = map->weights[CONTACT_MAP_ENDPOINT] + (size_t)j * (size_t)n;
    double *trap = map->weights[CONTACT_MAP_TRAPEZOID] + (size_t)j * (size_t)n;
    for (int m = 0; m < n; m++) {
        double next = m + 1 < n ? a[m + 1] : 0.0; /* a_{m+2} */
        end[m] = next;
        trap[m] = m == 0 ? 0.5 * next : 0.5 * (a[m] + next);
    }
}

IssimStatus contact_map_create(const ContactMapSpec *spec, const char *origin, ContactMap **out,
                               IssimError *err) {
    return contact_map_create_threads(spec, origin, 1, out, err);
}

IssimStatus contact_map_create_threads(const ContactMapSpec *spec, const char *origin, int threads,
                                       ContactMap **out, IssimError *err) {
    *out = NULL;
    origin = origin ? origin : "contact map";
    IssimStatus s = check_spec_header(spec, origin, err);
    if (s != ISSIM_OK)
        return s;
    size_t values = (size_t)spec->samples * (size_t)spec->node_count;
    ContactMap *map = calloc(1, sizeof *map);
    if (map) {
        atomic_init(&map->refs, 1);
        map->nodes = calloc((size_t)spec->node_count, sizeof *map->nodes);
        map->step = malloc(values * sizeof *map->step);
        map->increments = malloc(values * sizeof *map->increments);
        map->weights[0] = malloc(values * sizeof(double));
        map->weights[1] = malloc(values * sizeof(double));
    }
    if (!map || !map->nodes || !map->step || !map->increments || !map->weights[0] ||
        !map->weights[1]) {
        contact_map_release(map);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory for %zu samples", origin,
                               values);
    }
    issim_strlcpy(map->body, spec->body, sizeof map->body);
    issim_strlcpy(map->origin, origin, sizeof map->origin);
    map->dimension = spec->dimension;
    map->period = spec->period;
    map->samples = spec->samples;
    map->node_count = spec->node_count;
    map->provenance = spec->provenance;
    for (int j = 0; j < spec->node_count; j++) {
        s = check_node(spec, origin, j, &map->nodes[j], err);
        if (s != ISSIM_OK) {
            contact_map_release(map);
            return s;
        }
    }
    memcpy(map->step, spec->step, values * sizeof *map->step);
    for (int j = 0; j < spec->node_count; j++) {
        const double *h = map->step + (size_t)j * (size_t)map->samples;
        double *a = map->increments + (size_t)j * (size_t)map->samples;
        a[0] = h[0]; /* h(0) = 0: the response is undefined at t = 0 (000 4.4) */
        for (int k = 1; k < map->samples; k++)
            a[k] = h[k] - h[k - 1];
        fill_weights(map, j);
    }
    s = contact_map_fft_prepare(map, threads, err);
    if (s != ISSIM_OK) {
        contact_map_release(map);
        return s;
    }
    *out = map;
    return ISSIM_OK;
}

void contact_map_retain(ContactMap *map) {
    if (map)
        atomic_fetch_add_explicit(&map->refs, 1, memory_order_relaxed);
}

void contact_map_release(ContactMap *map) {
    if (!map || atomic_fetch_sub_explicit(&map->refs, 1, memory_order_acq_rel) != 1)
        return;
    contact_map_fft_destroy(map);
    free(map->nodes);
    free(map->step);
    free(map->increments);
    free(map->weights[0]);
    free(map->weights[1]);
    free(map);
}

const char *contact_map_body(const ContactMap *map) {
    return map->body;
}
const char *contact_map_origin(const ContactMap *map) {
    return map->origin;
}
int contact_map_dimension(const ContactMap *map) {
    return map->dimension;
}
double contact_map_period(const ContactMap *map) {
    return map->period;
}
int contact_map_samples(const ContactMap *map) {
    return map->samples;
}
int contact_map_node_count(const ContactMap *map) {
    return map->node_count;
}
const ContactMapProvenance *contact_map_provenance(const ContactMap *map) {
    return &map->provenance;
}

const ContactMapNode *contact_map_node(const ContactMap *map, int node) {
    return node >= 0 && node < map->node_count ? &map->nodes[node] : NULL;
}

const double *contact_map_step(const ContactMap *map, int node) {
    return node >= 0 && node < map->node_count ? map->step + (size_t)node * (size_t)map->samples
                                               : NULL;
}

const double *contact_map_increments(const ContactMap *map, int node) {
    return node >= 0 && node < map->node_count
               ? map->increments + (size_t)node * (size_t)map->samples
               : NULL;
}

const double *contact_map_history_weights(const ContactMap *map, int node, ContactMapRule rule) {
    if (node < 0 || node >= map->node_count ||
        (rule != CONTACT_MAP_TRAPEZOID && rule != CONTACT_MAP_ENDPOINT))
        return NULL;
    return map->weights[rule] + (size_t)node * (size_t)map->samples;
}

/* Angle between two unit vectors, robust near 0 and pi. */
static double angle_between(Vec3 a, Vec3 b) {
    return atan2(vec3_norm(vec3_cross(a, b)), vec3_dot(a, b));
}

/* Nodes whose normals differ by less than this (rad) face the same way: a flat face. */
#define SAME_NORMAL 1e-6

ContactMapChoice contact_map_choose(const ContactMap *map, Vec3 point, Vec3 normal,
                                    bool interpolate) {
    /* Ranked by the angle between the contact's outward normal and the node's, then (among
     * nodes facing the same way) by distance. */
    int best = 0, second = -1;
    double a_best = INFINITY, d_best = INFINITY, a_second = INFINITY, d_second = INFINITY;
    for (int j = 0; j < map->node_count; j++) {
        double a = angle_between(normal, map->nodes[j].normal);
        double d = vec3_norm(vec3_sub(point, map->nodes[j].position));
        bool beats_best = a < a_best - SAME_NORMAL || (a < a_best + SAME_NORMAL && d < d_best);
        bool beats_second =
            a < a_second - SAME_NORMAL || (a < a_second + SAME_NORMAL && d < d_second);
        if (beats_best) {
            second = best;
            a_second = a_best;
            d_second = d_best;
            best = j;
            a_best = a;
            d_best = d;
        } else if (beats_second) {
            second = j;
            a_second = a;
            d_second = d;
        }
    }
    ContactMapChoice c = {.node = best, .second = best, .weight = 1.0};
    if (!interpolate || second < 0 || second == best)
        return c;
    /* Between two normals (a curved end, 000 4.4 interpolates between impact angles) by angle;
     * on a flat face by distance. */
    double ab = angle_between(map->nodes[best].normal, map->nodes[second].normal);
    double wa = ab > SAME_NORMAL ? a_best : d_best, wb = ab > SAME_NORMAL ? a_second : d_second;
    c.second = second;
    c.weight = wa + wb > 0.0 ? wb / (wa + wb) : 1.0;
    return c;
}

static IssimStatus make_one_node_map(const char *body, const char *origin, double period,
                                     int samples, const double *step, ContactMap **out,
                                     IssimError *err) {
    ContactMapNode node = {.position = {0, 0, 0}, .normal = {0, 0, -1}, .angle = NAN};
    ContactMapSpec spec = {
        .dimension = 3,
        .period = period,
        .samples = samples,
        .node_count = 1,
        .nodes = &node,
        .step = step,
        .provenance = {
            .youngs = NAN, .poisson = NAN, .density = NAN, .mesh_size = NAN, .thickness = NAN}};
    issim_strlcpy(spec.body, body ? body : "", sizeof spec.body);
    snprintf(spec.provenance.generator, sizeof spec.provenance.generator, "issim synthetic %s",
             origin);
    return contact_map_create(&spec, origin, out, err);
}

IssimStatus contact_map_flat(const char *body, double stiffness, double period, ContactMap **out,
                             IssimError *err) {
    *out = NULL;
    if (!(stiffness > 0.0) || !isfinite(stiffness))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "flat contact map: stiffness %g N/m (must be finite and > 0)",
                               stiffness);
    return make_one_node_map(body, "flat map", period, 1, &stiffness, out, err);
}

IssimStatus contact_map_transient(const char *body, double stiffness, double peak, double decay,
                                  double period, int samples, ContactMap **out, IssimError *err) {
    *out = NULL;
    if (!(stiffness > 0.0) || !isfinite(stiffness) || !isfinite(peak))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "transient contact map: stiffness %g N/m must be finite and > 0, "
                               "peak %g N/m finite",
                               stiffness, peak);
    if (!(decay > 0.0) || !isfinite(decay))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "transient contact map: decay %g s (must be finite and > 0)", decay);
    if (samples < 1 || samples > CONTACT_MAP_MAX_SAMPLES)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "transient contact map: %d samples (must be 1 ... %d)", samples,
                               CONTACT_MAP_MAX_SAMPLES);
    double *h = malloc((size_t)samples * sizeof *h);
    if (!h)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "transient contact map: out of memory");
    for (int k = 0; k < samples; k++)
        h[k] = stiffness + peak * exp(-(k + 1) * period / decay);
    /* The memory ends at the last sample: end on the steady state so it is the level kept. */
    if (samples > 1)
        h[samples - 1] = stiffness;
    IssimStatus s = make_one_node_map(body, "transient map", period, samples, h, out, err);
    free(h);
    return s;
}

/* ===== Vocabularies ===== */

const char *const contact_map_rule_names[] = {
    [CONTACT_MAP_TRAPEZOID] = "trapezoid",
    [CONTACT_MAP_ENDPOINT] = "endpoint",
};
_Static_assert(sizeof contact_map_rule_names / sizeof contact_map_rule_names[0] ==
                   CONTACT_MAP_RULE_COUNT,
               "a name for every ContactMapRule");

const char *const contact_map_convolution_names[] = {
    [CONTACT_MAP_CONV_AUTO] = "auto",
    [CONTACT_MAP_CONV_DIRECT] = "direct",
    [CONTACT_MAP_CONV_FFT] = "fft",
};
_Static_assert(sizeof contact_map_convolution_names / sizeof contact_map_convolution_names[0] ==
                   CONTACT_MAP_CONV_COUNT,
               "a name for every ContactMapConvolution");

const char *contact_map_rule_name(ContactMapRule rule) {
    return vocabulary_name(contact_map_rule_names, CONTACT_MAP_RULE_COUNT, (int)rule);
}

const char *contact_map_convolution_name(ContactMapConvolution kind) {
    return vocabulary_name(contact_map_convolution_names, CONTACT_MAP_CONV_COUNT, (int)kind);
}

/* ===== The body property's forms ===== */

#define SYNTHETIC_DEFAULT_PERIOD 1e-4  /* s: the step of 000 4.2-4.3 */
#define SYNTHETIC_DEFAULT_SAMPLES 1000 /* 0.1 s of memory at the default period */

bool contact_map_is_synthetic(const char *spec) {
    return strncmp(spec, "flat ", 5) == 0 || strncmp(spec, "transient ", 10) == 0;
}

/* The optional "period T" and "samples N" after the numbers. */
static IssimStatus synthetic_options(const char *spec, const char *p, bool flat, double *period,
                                     int *samples, IssimError *err) {
    char key[16];
    int used = 0;
    while (sscanf(p, "%15s%n", key, &used) == 1) {
        p += used;
        bool ok = false;
        if (strcmp(key, "period") == 0)
            ok = sscanf(p, "%lf%n", period, &used) == 1;
        else if (strcmp(key, "samples") == 0 && !flat)
            ok = sscanf(p, "%d%n", samples, &used) == 1;
        if (!ok)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "contact_map \"%s\": unexpected '%s' (known: period%s)", spec,
                                   key, flat ? "" : ", samples");
        p += used;
    }
    return ISSIM_OK;
}

static IssimStatus make_synthetic(const char *spec, const char *body, ContactMap **out,
                                  IssimError *err) {
    double k = NAN, peak = NAN, decay = NAN, period = SYNTHETIC_DEFAULT_PERIOD;
    int samples = SYNTHETIC_DEFAULT_SAMPLES, used = 0;
    bool flat = strncmp(spec, "flat ", 5) == 0;
    bool ok = flat ? sscanf(spec, "flat %lf%n", &k, &used) == 1
                   : sscanf(spec, "transient %lf %lf %lf%n", &k, &peak, &decay, &used) == 3;
    if (!ok)
        return issim_error_set(err, ISSIM_ERR_INVALID, "contact_map \"%s\": expected %s", spec,
                               flat ? "\"flat K [period T]\""
                                    : "\"transient K PEAK DECAY [period T] [samples N]\"");
    IssimStatus s = synthetic_options(spec, spec + used, flat, &period, &samples, err);
    if (s != ISSIM_OK)
        return s;
    return flat ? contact_map_flat(body, k, period, out, err)
                : contact_map_transient(body, k, peak, decay, period, samples, out, err);
}

IssimStatus contact_map_load(const char *spec, const char *path, const char *body, ContactMap **out,
                             IssimError *err) {
    *out = NULL;
    if (contact_map_is_synthetic(spec))
        return make_synthetic(spec, body, out, err);
    IssimStatus s = contact_map_read_cached(path, out, err);
    if (s == ISSIM_OK && strcmp(contact_map_body(*out), body) != 0) {
        s = issim_error_set(err, ISSIM_ERR_INVALID,
                            "%s: the map is for body \"%s\", not \"%s\" (its 'body' line)", spec,
                            contact_map_body(*out), body);
        contact_map_release(*out);
        *out = NULL;
    }
    return s;
}
