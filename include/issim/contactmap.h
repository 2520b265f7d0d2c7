/* issim contact-response maps (seed 000 ch. 3-4): the data of a map, its file format
 * (docs/contact-map-format.md), synthetic maps, and the discrete convolution the contact_map
 * contact model runs (000 eqs. 3.16-3.27).
 *
 * A ContactMap is immutable once built: the loader, the synthetic builders and the generator make
 * one, bodies share it read-only (reference counted), and the engine thread reads it while
 * contacts last. Threading: a map may be read from any thread; contact_map_retain/release are
 * atomic.
 */
#ifndef ISSIM_CONTACTMAP_H
#define ISSIM_CONTACTMAP_H

#include <stddef.h>

#include "issim/core.h"
#include "issim/math.h"

#define CONTACT_MAP_FORMAT_VERSION 1
#define CONTACT_MAP_MAX_SAMPLES (1 << 20)
/* s: the shortest sampling period a map may have. While a map contact lasts the engine takes one
 * fixed step per sample, so this bounds the work of one millisecond of simulated time to 1e5
 * steps; a period of 1e-300 s asked for 1e297 (t + T == t: the step never ended, and neither did
 * the thread waiting for it). The maps of 000 and issim-mapgen sample at 1e-4 to 1e-6 s. */
#define CONTACT_MAP_MIN_PERIOD 1e-8
#define CONTACT_MAP_MAX_NODES 65536
#define CONTACT_MAP_NAME_MAX 128
#define CONTACT_MAP_TEXT_MAX 256

typedef struct ContactMapNode {
    Vec3 position; /* m, body frame */
    Vec3 normal;   /* outward unit normal, body frame */
    double angle;  /* surface parameter, degrees (NAN when the file gives none) */
} ContactMapNode;

/* Provenance: what made the map (all optional; empty strings / NAN when unknown). */
typedef struct ContactMapProvenance {
    char generator[CONTACT_MAP_TEXT_MAX]; /* "issim-mapgen 1 fem" */
    double youngs, poisson, density;      /* Pa, -, kg/m^3 */
    double mesh_size;                     /* m */
    double thickness;                     /* m (2D maps) */
    char created[64];                     /* ISO 8601 */
    char note[CONTACT_MAP_TEXT_MAX];
} ContactMapProvenance;

typedef struct ContactMap ContactMap;

/* The description a map is built from (the loader fills one; so do the generator and the
 * synthetic builders). step holds node_count x samples values, node-major: node j's
 * h_j(T), ..., h_j(NT) at step[j * samples] (N/m). */
typedef struct ContactMapSpec {
    char body[CONTACT_MAP_NAME_MAX];
    int dimension; /* 2 or 3 */
    double period; /* T, s */
    int samples;   /* N */
    int node_count;
    const ContactMapNode *nodes;
    const double *step;
    ContactMapProvenance provenance;
} ContactMapSpec;

/* Builds a map from spec (copied). `origin` names it in messages (a file name, "flat map").
 * Checks everything docs/contact-map-format.md lists; ISSIM_ERR_INVALID / ISSIM_ERR_RANGE with
 * a message naming origin and node. Owned: release with contact_map_release. */
IssimStatus contact_map_create(const ContactMapSpec *spec, const char *origin, ContactMap **out,
                               IssimError *err);
/* Reads a map file (docs/contact-map-format.md). Messages name the file, line and node. */
IssimStatus contact_map_read(const char *path, ContactMap **out, IssimError *err);
/* Writes a map in format version 1 (%.17g: a read gives back the same doubles). */
IssimStatus contact_map_write(const ContactMap *map, const char *path, IssimError *err);

/* Synthetic maps (000 4.2-4.3). flat: h(kT) = stiffness for every k (one sample): the linear
 * spring of that stiffness (V8). transient: the steady state `stiffness` plus a transient that
 * decays as peak * exp(-kT / decay) (Fig. 4.1's family), `samples` long. Both have one node (at
 * the body frame's origin, normal -z): every contact uses it. */
IssimStatus contact_map_flat(const char *body, double stiffness, double period, ContactMap **out,
                             IssimError *err);
IssimStatus contact_map_transient(const char *body, double stiffness, double peak, double decay,
                                  double period, int samples, ContactMap **out, IssimError *err);

/* The body property contact_map (docs/scene-format.md): "flat K [period T]", "transient K PEAK
 * DECAY [period T] [samples N]" (defaults T = 1e-4 s, N = 1000) or a map file. */
bool contact_map_is_synthetic(const char *spec);
/* Builds the map `spec` names for the body `body`: a synthetic map, or the file at `path` (spec
 * resolved by the caller against its asset folders), whose `body` line must name `body`. */
IssimStatus contact_map_load(const char *spec, const char *path, const char *body, ContactMap **out,
                             IssimError *err);

void contact_map_retain(ContactMap *map);
void contact_map_release(ContactMap *map);

/* A process-wide cache of map files for programs that build the same scenes again and again (a
 * parameter study: reading a map is most of a short run's cost). Off by default. Once enabled,
 * contact_map_load hands out the map it read before from the same path while the file is
 * unchanged (device, inode, size, modification time), retained: the same immutable data a new
 * read would give, so results do not change. Threading: loads from any thread; enable and clear
 * may be called at any time, clear releases the cache's references (maps in use stay alive). */
void contact_map_cache_enable(void);
void contact_map_cache_clear(void);
/* Map files read from now on use up to `threads` threads (1, the default: the reading thread
 * alone): the reading thread and helpers it starts for the read share planning the FFTs,
 * parsing the nodes and transforming their kernels. For programs whose other threads would wait
 * for the read (a sweep's workers, all waiting for its first run's map); the map is the same
 * whatever the count. Clamped to 1 ... 64. Threading: any thread, any time. */
void contact_map_read_threads(int threads);

/* Read-only views (Borrowed while the map is retained). */
const char *contact_map_body(const ContactMap *map);
const char *contact_map_origin(const ContactMap *map);
int contact_map_dimension(const ContactMap *map);
double contact_map_period(const ContactMap *map);
int contact_map_samples(const ContactMap *map);
int contact_map_node_count(const ContactMap *map);
const ContactMapNode *contact_map_node(const ContactMap *map, int node);
const ContactMapProvenance *contact_map_provenance(const ContactMap *map);
/* h_j(T) ... h_j(NT), N values. */
const double *contact_map_step(const ContactMap *map, int node);
/* The force increments a_k = h(kT) - h((k-1)T), k = 1..N (h(0) = 0): T g(kT) of eq. 3.16, the
 * weights of the convolution sum (3.20 with the factor T folded in). N values. */
const double *contact_map_increments(const ContactMap *map, int node);

/* Quadrature of the convolution integral 3.19 (000 3.7 asks for better than the endpoint rule).
 * With a_k = h(kT) - h((k-1)T) and the body's indentation delta sampled every T since onset,
 * the force at sample n is F_n = a_1 delta_n + sum_m w_m delta_{n-1-m}:
 * - ENDPOINT (the published 3.20): each increment a_k weighs the sample at the start of its
 *   interval, w_m = a_{m+2}; with the published time stepping the force is held over each step.
 * - TRAPEZOID: the step response piecewise linear between samples (its jump h(T) at 0+), the
 *   integral exact for a piecewise-linear delta: w_0 = a_2 / 2, w_m = (a_{m+1} + a_{m+2}) / 2;
 *   the current term is evaluated inside the integrator. A flat map is exactly a spring (V8). */
typedef enum ContactMapRule {
    CONTACT_MAP_TRAPEZOID,
    CONTACT_MAP_ENDPOINT,
    CONTACT_MAP_RULE_COUNT
} ContactMapRule;
/* "trapezoid", "endpoint": a contact pair's map_quadrature (thing.h, "Vocabularies"). */
extern const char *const contact_map_rule_names[];
const char *contact_map_rule_name(ContactMapRule rule);
/* w_0 ... w_{N-1} of node for rule (N values; Borrowed). */
const double *contact_map_history_weights(const ContactMap *map, int node, ContactMapRule rule);

/* ===== The convolution (000 eq. 3.20) one sample at a time =====
 * y_n = sum_{m=0}^{N-1} w_m x_{n-m} over the samples pushed so far, with the weights of a node
 * (or a blend of two) for a quadrature. DIRECT: the sum itself, O(N) per sample. FFT: a
 * zero-latency partitioned FFT convolution: per sample on average O(log^2 N) up to N = 4096,
 * then one complex multiply-add more per 2048 samples of the map (a contact step 1.8x dearer at
 * N = 65,536 than at 64); equal to the direct sum to rounding. AUTO: FFT above
 * CONTACT_MAP_FFT_FROM samples (the fast path wins from 128 on, by 17% at 256,
 * docs/performance.md). The state is caller-owned plain doubles (checkpoints copy it, to any
 * alignment). */
typedef enum ContactMapConvolution {
    CONTACT_MAP_CONV_AUTO,
    CONTACT_MAP_CONV_DIRECT,
    CONTACT_MAP_CONV_FFT,
    CONTACT_MAP_CONV_COUNT
} ContactMapConvolution;
/* "auto", "direct", "fft": a contact pair's map_convolution. */
extern const char *const contact_map_convolution_names[];
const char *contact_map_convolution_name(ContactMapConvolution kind);
#define CONTACT_MAP_FFT_FROM 256

typedef struct ContactMapSource {
    const ContactMap *map;
    int node, second;
    double weight; /* of node; 1 - weight of second */
    ContactMapRule rule;
} ContactMapSource;

bool contact_map_conv_uses_fft(const ContactMap *map, ContactMapConvolution kind);
/* Doubles of state a convolution of this map needs. */
size_t contact_map_conv_doubles(const ContactMap *map, ContactMapConvolution kind);
void contact_map_conv_init(const ContactMap *map, ContactMapConvolution kind, double *state);
/* Pushes x_n and returns y_n. */
double contact_map_conv_push(const ContactMapSource *src, ContactMapConvolution kind, double *state,
                             double x);

/* The node for a contact at body-frame point p with outward normal n (000 4.4): the node whose
 * outward normal is closest to n (on a rounded end the contact lies where the surface faces the
 * other body, so the normal locates it even when the body touches through a vertex), the nearest
 * by position among nodes facing the same way (a flat face). interpolate: also the second node
 * and the weight of the first (the response used is w a_first + (1 - w) a_second), by the angles
 * between the normals (by distance on a flat face). */
typedef struct ContactMapChoice {
    int node, second;
    double weight; /* of node; 1 without interpolation */
} ContactMapChoice;
ContactMapChoice contact_map_choose(const ContactMap *map, Vec3 point, Vec3 normal,
                                    bool interpolate);

#endif
