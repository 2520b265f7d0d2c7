/* The history sums of the contact_map model, y_n = sum_{m=0}^{N-1} w_m x_{n-m} (000 eq. 3.20 with
 * the quadrature's weights, contactmap.h), one new sample x_n at a time, y_n needed before the
 * next sample arrives (zero latency).
 *
 * DIRECT: a ring of the last N samples, O(N) per sample (000 3.6.2: "grows linearly").
 * FFT: a non-uniformly partitioned convolution (Gardner 1995): lags [0, HEAD) summed directly;
 * lags [S, 2S) for S = HEAD, 2 HEAD, 4 HEAD, ... < N by one real FFT of size 2S per S samples:
 * when a block of S samples completes, its linear convolution with w[S, 2S) (the kernel's
 * spectrum precomputed per node when the map is built) is added into an output ring of 2S
 * values that the following samples read. Cost per sample O(sum over levels of log S), i.e.
 * O(log^2 N), against O(N); equal to the direct sum to rounding (relative 1e-13 measured,
 * tests/test_contact_map.c). The FFT of the largest level runs once every N/2 samples: the cost
 * is an average, single steps take longer (docs/performance.md gives both).
 *
 * The convolver's state is plain doubles (no pointers) so the engine's checkpoints copy it.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#include "contactmap_internal.h"

/* FFTW's planner is not thread-safe; execution of a made plan on new arrays is. */
static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

static int level_count(int n) {
    int levels = 0;
    for (long s = CONTACT_MAP_FFT_HEAD; s < n; s *= 2)
        levels++;
    return levels;
}

static void destroy_level(ContactMapLevel *l) {
    if (l->forward)
        fftw_destroy_plan((fftw_plan)l->forward);
    if (l->inverse)
        fftw_destroy_plan((fftw_plan)l->inverse);
    free(l->spectra);
}

void contact_map_fft_destroy(ContactMap *map) {
    if (!map->levels)
        return;
    pthread_mutex_lock(&planner_lock);
    for (int i = 0; i < map->level_count; i++)
        destroy_level(&map->levels[i]);
    pthread_mutex_unlock(&planner_lock);
    free(map->levels);
    map->levels = NULL;
}

/* The spectrum of w[S, 2S) zero-padded to 2S, divided by 2S (FFTW's inverse is unnormalised),
 * for every node and both rules, node-major: spectra[(rule * nodes + node) * (S + 1)]. */
static bool level_spectra(ContactMap *map, ContactMapLevel *l, double *real, fftw_complex *spec) {
    size_t bins = (size_t)l->size + 1;
    l->spectra = malloc(sizeof(double) * 2 * bins * 2 * (size_t)map->node_count);
    if (!l->spectra)
        return false;
    for (int rule = 0; rule < 2; rule++)
        for (int j = 0; j < map->node_count; j++) {
            const double *w = map->weights[rule] + (size_t)j * (size_t)map->samples;
            memset(real, 0, sizeof(double) * 2 * (size_t)l->size);
            for (int m = l->size; m < 2 * l->size && m < map->samples; m++)
                real[m - l->size] = w[m] / (2.0 * l->size);
            fftw_execute_dft_r2c((fftw_plan)l->forward, real, spec);
            memcpy(l->spectra + 2 * bins * ((size_t)rule * (size_t)map->node_count + (size_t)j),
                   spec, sizeof(fftw_complex) * bins);
        }
    return true;
}

IssimStatus contact_map_fft_prepare(ContactMap *map, IssimError *err) {
    int levels = level_count(map->samples);
    if (levels == 0 || map->levels)
        return ISSIM_OK;
    map->levels = calloc((size_t)levels, sizeof *map->levels);
    size_t largest = (size_t)CONTACT_MAP_FFT_HEAD << (levels - 1);
    double *real = fftw_malloc(sizeof(double) * 2 * largest);
    fftw_complex *spec = fftw_malloc(sizeof(fftw_complex) * (largest + 1));
    bool ok = map->levels && real && spec;
    map->level_count = 0;
    /* The planner under the lock, the kernels' spectra (most of the work: every node, both
     * rules) outside it, so maps loaded by several threads at once (a sweep) do not queue. */
    pthread_mutex_lock(&planner_lock);
    for (int i = 0; ok && i < levels; i++) {
        ContactMapLevel *l = &map->levels[i];
        l->size = CONTACT_MAP_FFT_HEAD << i;
        /* ESTIMATE, not MEASURE: a measured plan may differ between runs and processes, and with
         * it the last bits of the forces; lock-step runs must be bit-identical (MEASURE gained
         * 8% at N = 65,536). */
        unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
        l->forward = (void *)fftw_plan_dft_r2c_1d(2 * l->size, real, spec, flags);
        l->inverse = (void *)fftw_plan_dft_c2r_1d(2 * l->size, spec, real, flags);
        map->level_count = i + 1;
        ok = l->forward && l->inverse;
    }
    pthread_mutex_unlock(&planner_lock);
    for (int i = 0; ok && i < levels; i++)
        ok = level_spectra(map, &map->levels[i], real, spec);
    fftw_free(real);
    fftw_free(spec);
    if (!ok) {
        contact_map_fft_destroy(map);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory for the FFT convolution",
                               map->origin);
    }
    return ISSIM_OK;
}

/* ===== The convolver's state: [count][input ring R][per level: output ring 2S][scratch] ===== */

typedef struct ConvHeader {
    double count; /* samples pushed (exact in a double up to 2^53) */
    double fft;   /* 1: partitioned FFT, 0: direct */
} ConvHeader;

#define HEADER_DOUBLES (sizeof(ConvHeader) / sizeof(double))

/* The input ring holds the last `ring` samples: N for the direct sum, the largest block for the
 * FFT (which also covers the head). */
static size_t ring_length(const ContactMap *map, bool fft) {
    if (!fft)
        return (size_t)map->samples;
    size_t largest = (size_t)CONTACT_MAP_FFT_HEAD << (map->level_count - 1);
    return largest;
}

bool contact_map_conv_uses_fft(const ContactMap *map, ContactMapConvolution kind) {
    if (map->level_count == 0)
        return false;
    if (kind == CONTACT_MAP_CONV_FFT)
        return true;
    return kind == CONTACT_MAP_CONV_AUTO && map->samples > CONTACT_MAP_FFT_FROM;
}

size_t contact_map_conv_doubles(const ContactMap *map, ContactMapConvolution kind) {
    bool fft = contact_map_conv_uses_fft(map, kind);
    size_t n = HEADER_DOUBLES + ring_length(map, fft);
    if (!fft)
        return n;
    size_t largest = ring_length(map, true);
    for (int i = 0; i < map->level_count; i++)
        n += 2 * (size_t)map->levels[i].size;
    return n + 2 * largest + 2 * (largest + 1); /* scratch: real 2S, complex S + 1 */
}

void contact_map_conv_init(const ContactMap *map, ContactMapConvolution kind, double *state) {
    memset(state, 0, sizeof(double) * contact_map_conv_doubles(map, kind));
    ((ConvHeader *)state)->fft = contact_map_conv_uses_fft(map, kind) ? 1.0 : 0.0;
}

/* sum over lags [0, lags) of w_m x_{n-m}, from a ring of length `ring` whose newest sample is at
 * slot newest. */
static double direct_sum(const ContactMapSource *src, const double *x, size_t ring, size_t newest,
                         int lags) {
    const double *w1 = contact_map_history_weights(src->map, src->node, src->rule);
    bool blend = src->second != src->node && src->weight != 1.0;
    const double *w2 = blend ? contact_map_history_weights(src->map, src->second, src->rule) : w1;
    /* Two straight runs instead of a wrapping index: [newest down to 0], then from the end. */
    int first = (int)newest + 1 < lags ? (int)newest + 1 : lags;
    double s1 = 0.0, s2 = 0.0;
    for (int m = 0; m < first; m++)
        s1 += w1[m] * x[newest - (size_t)m];
    for (int m = first; m < lags; m++)
        s1 += w1[m] * x[ring - 1 - (size_t)(m - first)];
    if (!blend)
        return s1;
    for (int m = 0; m < first; m++)
        s2 += w2[m] * x[newest - (size_t)m];
    for (int m = first; m < lags; m++)
        s2 += w2[m] * x[ring - 1 - (size_t)(m - first)];
    return src->weight * s1 + (1.0 - src->weight) * s2;
}

/* The block of the last S samples through level l: its convolution with w[S, 2S) added into
 * the level's output ring at the outputs n + 1 ... n + 2S - 1. */
static void level_block(const ContactMapSource *src, const ContactMapLevel *l, const double *x,
                        size_t ring, size_t newest, double *out, long long n, double *real,
                        fftw_complex *spec) {
    int s = l->size;
    size_t first = (newest + ring - (size_t)s + 1) % ring;
    for (int i = 0; i < s; i++)
        real[i] = x[(first + (size_t)i) % ring];
    memset(real + s, 0, sizeof(double) * (size_t)s);
    fftw_execute_dft_r2c((fftw_plan)l->forward, real, spec);
    size_t bins = (size_t)s + 1, nodes = (size_t)src->map->node_count;
    const double *k1 = l->spectra + 2 * bins * ((size_t)src->rule * nodes + (size_t)src->node);
    const double *k2 = l->spectra + 2 * bins * ((size_t)src->rule * nodes + (size_t)src->second);
    double wa = src->weight, wb = 1.0 - src->weight;
    for (size_t b = 0; b < bins; b++) {
        double kr = wa * k1[2 * b] + wb * k2[2 * b], ki = wa * k1[2 * b + 1] + wb * k2[2 * b + 1];
        double xr = spec[b][0], xi = spec[b][1];
        spec[b][0] = xr * kr - xi * ki;
        spec[b][1] = xr * ki + xi * kr;
    }
    fftw_execute_dft_c2r((fftw_plan)l->inverse, spec, real);
    /* block samples x_{n-S+1..n}: result j goes to output n + 1 + j (lag S + (a + b)) */
    for (int j = 0; j < 2 * s - 1; j++)
        out[(size_t)((n + 1 + j) % (2 * s))] += real[j];
}

double contact_map_conv_push(const ContactMapSource *src, ContactMapConvolution kind, double *state,
                             double x) {
    const ContactMap *map = src->map;
    ConvHeader *h = (ConvHeader *)state;
    bool fft = h->fft != 0.0;
    size_t ring = ring_length(map, fft);
    double *input = state + HEADER_DOUBLES;
    long long n = (long long)h->count;
    size_t newest = (size_t)(n % (long long)ring);
    input[newest] = x;
    h->count += 1.0;
    long long pushed = n + 1;
    if (!fft) {
        int lags = pushed < map->samples ? (int)pushed : map->samples;
        return direct_sum(src, input, ring, newest, lags);
    }
    (void)kind;
    int head = pushed < CONTACT_MAP_FFT_HEAD ? (int)pushed : CONTACT_MAP_FFT_HEAD;
    if (head > map->samples)
        head = map->samples;
    double y = direct_sum(src, input, ring, newest, head);
    double *out = input + ring;
    size_t largest = ring;
    double *real = out;
    for (int i = 0; i < map->level_count; i++)
        real += 2 * (size_t)map->levels[i].size;
    fftw_complex *spec = (fftw_complex *)(real + 2 * largest);
    for (int i = 0; i < map->level_count; i++) {
        const ContactMapLevel *l = &map->levels[i];
        size_t span = 2 * (size_t)l->size;
        if (pushed % l->size == 0)
            level_block(src, l, input, ring, newest, out, n, real, spec);
        /* y_n's share of this level was added by earlier blocks; read and clear it */
        double *slot = &out[(size_t)(n % (long long)span)];
        y += *slot;
        *slot = 0.0;
        out += span;
    }
    return y;
}
