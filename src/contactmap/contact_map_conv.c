/* The history sums of the contact_map model, y_n = sum_{m=0}^{N-1} w_m x_{n-m} (000 eq. 3.20 with
 * the quadrature's weights, contactmap.h), one new sample x_n at a time, y_n needed before the
 * next sample arrives (zero latency).
 *
 * DIRECT: a ring of the last N samples, O(N) per sample (000 3.6.2: "grows linearly").
 * FFT: a non-uniformly partitioned convolution with frequency-domain delay lines (Gardner 1995;
 * Garcia 2002): lags [0, HEAD) summed directly, then levels of blocks of S samples, S doubling
 * from HEAD up to BLOCK (contactmap_internal.h). A level owns kernel lags [a, a + P S) in P
 * partitions of S lags; when a block of S samples completes, its spectrum (one real FFT of 2S)
 * joins the level's delay line of the last P block spectra, sum_p X_{b-p} K_p (the kernels'
 * spectra precomputed per node when the map is built) goes back through one inverse FFT and is
 * added into the level's output ring at the outputs n + 1 + a - S ...; a >= S keeps every
 * output in the future (zero latency). Per sample: the head's HEAD products, per level one
 * (2 FFTs of 2S)/S and P complex multiply-adds. The sizes stop doubling at BLOCK, so for long
 * maps the cost grows only by the last level's multiply-adds (N / BLOCK per sample), not by
 * more and larger FFTs. Equal to the direct sum to rounding (tests/test_contact_map.c). A
 * level's transforms run once every S samples: the cost is an average, single samples take
 * longer (docs/performance.md gives both).
 *
 * The convolver's state is plain doubles (no pointers) so the engine's checkpoints copy it; its
 * scratch (no meaning between samples) is aligned inside it at every call, since a copy may sit
 * at another alignment.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fftw3.h>

#include "contactmap_internal.h"

/* ===== Plans: one pair per transform length, made once per process, shared by every map =====
 * FFTW's planner is not thread-safe, so plans are made under a lock; executing a made plan on
 * new arrays is. ESTIMATE, not MEASURE: a measured plan may differ between runs and processes,
 * and with it the last bits of the forces; lock-step runs must be bit-identical. Aligned plans
 * (SIMD codelets): every array they run on is aligned to SCRATCH_ALIGN bytes. The plans live as
 * long as the process (a handful of sizes). */

#define PLAN_SIZES 16
#define SCRATCH_ALIGN 64

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;
static fftw_plan forward_plans[PLAN_SIZES], inverse_plans[PLAN_SIZES];

static int plan_index(int size) {
    int i = 0;
    while ((CONTACT_MAP_FFT_HEAD << i) < size)
        i++;
    return i;
}

/* ===== FFTW wisdom: the plans of earlier processes =====
 * Planning costs milliseconds per process even with ESTIMATE (docs/performance.md, "Sweep
 * start-up"), on the critical path of a sweep's first run and of every MPI rank's. FFTW's wisdom
 * (the planner's choices, which it re-creates a plan from without planning) is kept in a
 * per-user cache file, $XDG_CACHE_HOME/issim/fftw-wisdom-ISA (default ~/.cache/issim/), read
 * once per process before the first plan and written, to a temporary file renamed over it (a
 * parallel rank never reads half a file), by a process that had to plan something the file did
 * not hold. ISA names the SIMD the CPU has (a home directory shared by unlike cluster nodes): a
 * plan chosen for AVX2 must not be taken by a node whose ESTIMATE planner would choose another.
 * An optimisation only: a missing, unreadable, corrupt or unwritable file changes nothing but
 * the time (FFTW keeps its wisdom as it was when an import fails), and a plan re-created from
 * ESTIMATE wisdom is the plan ESTIMATE would make, so the forces are bit-identical with and
 * without it (tests/test_fftw_wisdom.c). All of it runs under planner_lock. */

static bool wisdom_read, wisdom_grown;

static const char *isa_name(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f")                                 ? "avx512"
           : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "avx2"
           : __builtin_cpu_supports("avx")                                   ? "avx"
                                                                             : "sse2";
#else
    return "generic";
#endif
}

/* The cache directory (XDG base directories: $XDG_CACHE_HOME when absolute, else ~/.cache). */
static bool cache_dir(char *dir, size_t size) {
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n = xdg && xdg[0] == '/' ? snprintf(dir, size, "%s/issim", xdg)
            : home && *home      ? snprintf(dir, size, "%s/.cache/issim", home)
                                 : -1;
    return n > 0 && (size_t)n < size;
}

static bool wisdom_path(char *path, size_t size) {
    char dir[PATH_MAX];
    if (!cache_dir(dir, sizeof dir))
        return false;
    int n = snprintf(path, size, "%s/fftw-wisdom-%s", dir, isa_name());
    return n > 0 && (size_t)n < size;
}

static void wisdom_import(void) {
    char path[PATH_MAX];
    if (wisdom_read)
        return;
    wisdom_read = true;
    if (wisdom_path(path, sizeof path))
        fftw_import_wisdom_from_filename(path);
}

/* mkdir -p of dir's parent and dir; failures show in the write that follows. */
static void make_dirs(char *dir) {
    for (char *slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(dir, 0700);
        *slash = '/';
    }
    mkdir(dir, 0700);
}

static void wisdom_export(void) {
    char dir[PATH_MAX], path[PATH_MAX], temp[PATH_MAX + 16];
    if (!wisdom_grown || !cache_dir(dir, sizeof dir) || !wisdom_path(path, sizeof path))
        return;
    wisdom_grown = false;
    make_dirs(dir);
    snprintf(temp, sizeof temp, "%s.XXXXXX", path);
    int fd = mkstemp(temp);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(temp);
        return;
    }
    fftw_export_wisdom_to_file(f);
    bool written = !ferror(f);
    if (fclose(f) != 0 || !written || rename(temp, path) != 0)
        unlink(temp);
}

/* A plan from wisdom when the cache holds it, else planned (and the cache to be rewritten). */
static fftw_plan plan(int size, double *real, fftw_complex *spec, bool inverse) {
    for (unsigned flags = FFTW_ESTIMATE | FFTW_WISDOM_ONLY;; flags = FFTW_ESTIMATE) {
        fftw_plan p = inverse ? fftw_plan_dft_c2r_1d(2 * size, spec, real, flags)
                              : fftw_plan_dft_r2c_1d(2 * size, real, spec, flags);
        if (p || flags == FFTW_ESTIMATE)
            return p;
        wisdom_grown = true;
    }
}

/* Writes the cache when this process planned something new: once its plans are all made. */
static void save_wisdom(void) {
    pthread_mutex_lock(&planner_lock);
    wisdom_export();
    pthread_mutex_unlock(&planner_lock);
}

static bool shared_plans(int size, ContactMapLevel *l) {
    int i = plan_index(size);
    if (i >= PLAN_SIZES)
        return false;
    pthread_mutex_lock(&planner_lock);
    wisdom_import();
    if (!forward_plans[i] || !inverse_plans[i]) {
        double *real = fftw_malloc(sizeof(double) * 2 * (size_t)size);
        fftw_complex *spec = fftw_malloc(sizeof(fftw_complex) * ((size_t)size + 1));
        if (real && spec && !forward_plans[i])
            forward_plans[i] = plan(size, real, spec, false);
        if (real && spec && !inverse_plans[i])
            inverse_plans[i] = plan(size, real, spec, true);
        fftw_free(real);
        fftw_free(spec);
    }
    l->forward = (void *)forward_plans[i];
    l->inverse = (void *)inverse_plans[i];
    pthread_mutex_unlock(&planner_lock);
    return l->forward && l->inverse;
}

/* ===== The map's side: the partition schedule and the kernels' spectra ===== */

static size_t power_of_two_at_least(size_t n) {
    size_t p = 1;
    while (p < n)
        p *= 2;
    return p;
}

/* The levels covering lags [HEAD, samples); writes them to `levels` unless NULL. */
static int schedule(int samples, ContactMapLevel *levels) {
    int count = 0, size = CONTACT_MAP_FFT_HEAD;
    long long covered = CONTACT_MAP_FFT_HEAD;
    while (covered < samples) {
        int left = (int)((samples - covered + size - 1) / size);
        bool growing = size < CONTACT_MAP_FFT_BLOCK;
        int parts =
            growing && left > CONTACT_MAP_FFT_GROWING_PARTS ? CONTACT_MAP_FFT_GROWING_PARTS : left;
        if (levels)
            levels[count] = (ContactMapLevel){
                .size = size,
                .partitions = parts,
                .lag = (int)covered,
                .ring = (int)power_of_two_at_least((size_t)covered + (size_t)size)};
        count++;
        covered += (long long)parts * size;
        if (growing)
            size *= 2;
    }
    return count;
}

void contact_map_fft_destroy(ContactMap *map) {
    if (!map->levels)
        return;
    for (int i = 0; i < map->level_count; i++)
        free(map->levels[i].spectra);
    free(map->levels);
    map->levels = NULL;
    map->level_count = 0;
}

static size_t spectrum_doubles(const ContactMapLevel *l) {
    return 2 * ((size_t)l->size + 1);
}

/* The kernel spectrum of partition p of rule `rule`, node `node`. */
static const double *kernel_spectrum(const ContactMap *map, const ContactMapLevel *l, int rule,
                                     int node, int p) {
    size_t index =
        ((size_t)rule * (size_t)map->node_count + (size_t)node) * (size_t)l->partitions + (size_t)p;
    return l->spectra + index * spectrum_doubles(l);
}

/* The spectra of w[a + p S, a + (p + 1) S) zero-padded to 2S, divided by 2S (FFTW's inverse is
 * unnormalised), of nodes [first_node, end_node), both rules and every partition. */
static void level_spectra(ContactMap *map, ContactMapLevel *l, int first_node, int end_node,
                          double *real, fftw_complex *spec) {
    for (int j = first_node; j < end_node; j++)
        for (int rule = 0; rule < CONTACT_MAP_RULE_COUNT; rule++)
            for (int p = 0; p < l->partitions; p++) {
                const double *w = map->weights[rule] + (size_t)j * (size_t)map->samples;
                int first = l->lag + p * l->size;
                memset(real, 0, sizeof(double) * 2 * (size_t)l->size);
                for (int m = 0; m < l->size && first + m < map->samples; m++)
                    real[m] = w[first + m] / (2.0 * l->size);
                fftw_execute_dft_r2c((fftw_plan)l->forward, real, spec);
                memcpy((double *)kernel_spectrum(map, l, rule, j, p), spec,
                       sizeof(double) * spectrum_doubles(l));
            }
}

/* The kernels' spectra (most of the work: every node, both rules) are computed outside the
 * planner's lock, so maps loaded by several threads at once (a sweep) do not queue, and in
 * tasks of a few nodes each, so that one read can share them among threads. */
typedef struct SpectraJob {
    ContactMap *map;
    int chunks;
    atomic_bool failed;
} SpectraJob;

static void spectra_task(void *context, int task) {
    SpectraJob *job = context;
    ContactMap *map = job->map;
    int first = (int)((long long)task * map->node_count / job->chunks);
    int end = (int)((long long)(task + 1) * map->node_count / job->chunks);
    size_t largest = (size_t)map->levels[map->level_count - 1].size;
    double *real = fftw_malloc(sizeof(double) * 2 * largest);
    fftw_complex *spec = fftw_malloc(sizeof(fftw_complex) * (largest + 1));
    if (real && spec)
        for (int i = 0; i < map->level_count; i++)
            level_spectra(map, &map->levels[i], first, end, real, spec);
    else
        atomic_store(&job->failed, true);
    fftw_free(real);
    fftw_free(spec);
}

void contact_map_fft_plan(int samples) {
    int count = schedule(samples, NULL);
    ContactMapLevel *levels = count > 0 ? calloc((size_t)count, sizeof *levels) : NULL;
    if (!levels)
        return;
    schedule(samples, levels);
    for (int i = 0; i < count; i++)
        shared_plans(levels[i].size, &levels[i]);
    free(levels);
    save_wisdom();
}

IssimStatus contact_map_fft_prepare(ContactMap *map, int threads, IssimError *err) {
    int levels = schedule(map->samples, NULL);
    if (levels == 0 || map->levels)
        return ISSIM_OK;
    map->levels = calloc((size_t)levels, sizeof *map->levels);
    bool ok = map->levels != NULL;
    if (ok)
        map->level_count = schedule(map->samples, map->levels);
    for (int i = 0; ok && i < levels; i++) {
        ContactMapLevel *l = &map->levels[i];
        size_t count = 2 * (size_t)map->node_count * (size_t)l->partitions;
        l->spectra = malloc(sizeof(double) * spectrum_doubles(l) * count);
        ok = l->spectra && shared_plans(l->size, l);
    }
    save_wisdom();
    if (ok) {
        int chunks = threads > 1 ? 4 * threads : 1;
        SpectraJob job = {.map = map,
                          .chunks = chunks < map->node_count ? chunks : map->node_count};
        atomic_init(&job.failed, false);
        contact_map_parallel(threads, job.chunks, spectra_task, &job);
        ok = !atomic_load(&job.failed);
    }
    if (!ok) {
        contact_map_fft_destroy(map);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory for the FFT convolution",
                               map->origin);
    }
    return ISSIM_OK;
}

/* ===== The convolver's state =====
 * [header][input ring][per level: output ring, delay line of P spectra][scratch + alignment] */

typedef struct ConvHeader {
    double count; /* samples pushed (exact in a double up to 2^53) */
    double fft;   /* 1: partitioned FFT, 0: direct */
} ConvHeader;

#define HEADER_DOUBLES (sizeof(ConvHeader) / sizeof(double))

static size_t largest_block(const ContactMap *map) {
    return (size_t)map->levels[map->level_count - 1].size;
}

/* The input ring holds the last `ring` samples: N for the direct sum, the largest block for the
 * FFT (a power of two >= HEAD: blocks are contiguous in it). */
static size_t ring_length(const ContactMap *map, bool fft) {
    return fft ? largest_block(map) : (size_t)map->samples;
}

/* A level with many partitions (the tail of long maps) spreads its multiply-adds: partitions
 * p >= 1 of the next block need only spectra that exist already, so each sample of a block
 * period adds its share of bins into the level's pending sum, and the block itself does only
 * p = 0 and the transforms (the slowest single step is then a few transforms, not P spectra). */
static bool level_spreads(const ContactMapLevel *l) {
    return l->partitions > CONTACT_MAP_FFT_GROWING_PARTS;
}

/* A level's state: its output ring, the delay line of its last P block spectra and (when it
 * spreads its multiply-adds, fft_push) the next block's pending sum. */
static size_t level_doubles(const ContactMapLevel *l) {
    return (size_t)l->ring + ((size_t)l->partitions + level_spreads(l)) * spectrum_doubles(l);
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
    for (int i = 0; i < map->level_count; i++)
        n += level_doubles(&map->levels[i]);
    size_t largest = largest_block(map);
    /* scratch: real 2S, complex S + 1 */
    return n + 2 * largest + 2 * (largest + 1) + SCRATCH_ALIGN / sizeof(double);
}

void contact_map_conv_init(const ContactMap *map, ContactMapConvolution kind, double *state) {
    memset(state, 0, sizeof(double) * contact_map_conv_doubles(map, kind));
    ((ConvHeader *)state)->fft = contact_map_conv_uses_fft(map, kind) ? 1.0 : 0.0;
}

/* sum over m < count of w_m x_last[-m], in four partial sums: one chain of dependent additions
 * would wait on the adder's latency at every product. */
static double dot_backwards(const double *w, const double *x_last, int count) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int m = 0;
    for (; m + 4 <= count; m += 4) {
        s0 += w[m] * x_last[-m];
        s1 += w[m + 1] * x_last[-m - 1];
        s2 += w[m + 2] * x_last[-m - 2];
        s3 += w[m + 3] * x_last[-m - 3];
    }
    for (; m < count; m++)
        s0 += w[m] * x_last[-m];
    return (s0 + s1) + (s2 + s3);
}

/* sum over lags [0, lags) of w_m x_{n-m}, from a ring of length `ring` whose newest sample is at
 * slot newest: two straight runs instead of a wrapping index, [newest down to 0], then from the
 * end. */
static double ring_dot(const double *w, const double *x, size_t ring, size_t newest, int lags) {
    int first = (int)newest + 1 < lags ? (int)newest + 1 : lags;
    double s = dot_backwards(w, x + newest, first);
    return first < lags ? s + dot_backwards(w + first, x + ring - 1, lags - first) : s;
}

static double direct_sum(const ContactMapSource *src, const double *x, size_t ring, size_t newest,
                         int lags) {
    const double *w1 = contact_map_history_weights(src->map, src->node, src->rule);
    double s1 = ring_dot(w1, x, ring, newest, lags);
    if (src->second == src->node || src->weight == 1.0)
        return s1;
    const double *w2 = contact_map_history_weights(src->map, src->second, src->rule);
    return src->weight * s1 + (1.0 - src->weight) * ring_dot(w2, x, ring, newest, lags);
}

/* The scratch of an FFT convolver: a real array of 2S and a complex one of S + 1 (S the largest
 * block), aligned for the plans. */
typedef struct Scratch {
    double *real;
    fftw_complex *spec;
} Scratch;

static Scratch scratch_of(const ContactMap *map, double *region) {
    uintptr_t at = ((uintptr_t)region + SCRATCH_ALIGN - 1) & ~(uintptr_t)(SCRATCH_ALIGN - 1);
    double *real = (double *)at;
    return (Scratch){.real = real, .spec = (fftw_complex *)(real + 2 * largest_block(map))};
}

/* acc = (first ? 0 : acc) + x k over `bins` complex values (interleaved re, im). */
static void multiply_add(double *restrict acc, const double *restrict x, const double *restrict k,
                         size_t bins, bool first) {
    if (first)
        memset(acc, 0, sizeof(double) * 2 * bins);
    for (size_t b = 0; b < 2 * bins; b += 2) {
        acc[b] += x[b] * k[b] - x[b + 1] * k[b + 1];
        acc[b + 1] += x[b] * k[b + 1] + x[b + 1] * k[b];
    }
}

/* The same with the blend wa k1 + wb k2 of two nodes' kernels. */
static void multiply_add_blend(double *restrict acc, const double *restrict x,
                               const double *restrict k1, const double *restrict k2, double wa,
                               double wb, size_t bins, bool first) {
    if (first)
        memset(acc, 0, sizeof(double) * 2 * bins);
    for (size_t b = 0; b < 2 * bins; b += 2) {
        double kr = wa * k1[b] + wb * k2[b], ki = wa * k1[b + 1] + wb * k2[b + 1];
        acc[b] += x[b] * kr - x[b + 1] * ki;
        acc[b + 1] += x[b] * ki + x[b + 1] * kr;
    }
}

/* values[0 .. count) added into the ring (a power of two) from position `from` on. */
static void ring_add(double *ring, size_t length, size_t from, const double *values, size_t count) {
    size_t at = from & (length - 1);
    size_t first = length - at < count ? length - at : count;
    for (size_t j = 0; j < first; j++)
        ring[at + j] += values[j];
    for (size_t j = first; j < count; j++)
        ring[j - first] += values[j];
}

/* acc[lo, hi) (= or +=) sum over partitions p in [from, to) of X_{block-p} K_p on bins [lo, hi),
 * the blocks' spectra from the level's delay line. */
static void partitions_mac(const ContactMapSource *src, const ContactMapLevel *l,
                           const double *delay, long long block, int from, int to, size_t lo,
                           size_t hi, double *acc, bool first) {
    size_t doubles = spectrum_doubles(l);
    bool blend = src->second != src->node && src->weight != 1.0;
    for (int p = from; p < to; p++) {
        const double *x = delay + doubles * (size_t)((block - p) % l->partitions) + 2 * lo;
        const double *k1 = kernel_spectrum(src->map, l, src->rule, src->node, p) + 2 * lo;
        bool set = first && p == from;
        if (blend)
            multiply_add_blend(acc + 2 * lo, x, k1,
                               kernel_spectrum(src->map, l, src->rule, src->second, p) + 2 * lo,
                               src->weight, 1.0 - src->weight, hi - lo, set);
        else
            multiply_add(acc + 2 * lo, x, k1, hi - lo, set);
    }
}

/* The share of the next block's sum over p >= 1 due at sample `pushed`, into pending: the
 * (P - 1)(S + 1) products in partition-major order, 1/S of them per sample of the block period,
 * done every SPREAD_EVERY samples: long contiguous runs stream from memory well, where a few
 * bins of every partition at every sample jump between partitions (bench_contact_map compares
 * the two). */
#define SPREAD_EVERY 32

static void spread_share(const ContactMapSource *src, const ContactMapLevel *l, const double *delay,
                         double *pending, long long pushed) {
    size_t s = (size_t)l->size, bins = s + 1;
    long long next = (pushed - 1) / (long long)s + 1;            /* blocks 1 ... next - 1 exist */
    size_t phase = (size_t)(pushed - (next - 1) * (long long)s); /* 1 ... S */
    size_t every = s < SPREAD_EVERY ? s : SPREAD_EVERY;
    if (phase % every != 0)
        return;
    size_t work = (size_t)(l->partitions - 1) * bins;
    size_t from = (phase - every) * work / s, to = phase * work / s;
    while (from < to) {
        int p = 1 + (int)(from / bins);
        size_t lo = from % bins, hi = lo + (to - from) < bins ? lo + (to - from) : bins;
        if (p < next)
            partitions_mac(src, l, delay, next, p, p + 1, lo, hi, pending, false);
        from += hi - lo;
    }
}

/* The block of the last S samples x_{n-S+1..n} through level l: its spectrum into the delay line,
 * sum_p X_{b-p} K_p back to the time domain and added at the outputs n + 1 + a - S ... */
static void level_block(const ContactMapSource *src, const ContactMapLevel *l, const double *input,
                        size_t newest, double *level_state, long long n, Scratch sc) {
    size_t s = (size_t)l->size, bins = s + 1, doubles = spectrum_doubles(l);
    double *out = level_state, *delay = out + l->ring, *pending = delay + l->partitions * doubles;
    memcpy(sc.real, input + newest + 1 - s, sizeof(double) * s);
    memset(sc.real + s, 0, sizeof(double) * s);
    fftw_execute_dft_r2c((fftw_plan)l->forward, sc.real, sc.spec);
    long long block = (n + 1) / (long long)s;
    memcpy(delay + doubles * (size_t)(block % l->partitions), sc.spec, sizeof(double) * doubles);
    double *acc = (double *)sc.spec;
    if (level_spreads(l)) {
        partitions_mac(src, l, delay, block, 0, 1, 0, bins, acc, true);
        for (size_t b = 0; b < 2 * bins; b++)
            acc[b] += pending[b];
        memset(pending, 0, sizeof(double) * 2 * bins);
    } else {
        long long filled = block < l->partitions ? block : l->partitions; /* blocks 1 ... block */
        partitions_mac(src, l, delay, block, 0, (int)filled, 0, bins, acc, true);
    }
    fftw_execute_dft_c2r((fftw_plan)l->inverse, sc.spec, sc.real);
    /* result j is output n - S + 1 + a + j (lag a + j - i for block sample i) */
    ring_add(out, (size_t)l->ring, (size_t)(n + 1 + l->lag) - s, sc.real, 2 * s - 1);
}

static double fft_push(const ContactMapSource *src, double *state, double x) {
    const ContactMap *map = src->map;
    ConvHeader *h = (ConvHeader *)state;
    size_t ring = ring_length(map, true);
    double *input = state + HEADER_DOUBLES;
    long long n = (long long)h->count, pushed = n + 1;
    size_t newest = (size_t)n & (ring - 1);
    input[newest] = x;
    h->count += 1.0;
    int head = pushed < CONTACT_MAP_FFT_HEAD ? (int)pushed : CONTACT_MAP_FFT_HEAD;
    double y = direct_sum(src, input, ring, newest, head);
    double *level_state = input + ring, *scratch = level_state;
    for (int i = 0; i < map->level_count; i++)
        scratch += level_doubles(&map->levels[i]);
    Scratch sc = scratch_of(map, scratch);
    for (int i = 0; i < map->level_count; i++) {
        const ContactMapLevel *l = &map->levels[i];
        double *out = level_state, *delay = out + l->ring;
        if (level_spreads(l))
            spread_share(src, l, delay, delay + l->partitions * spectrum_doubles(l), pushed);
        if ((pushed & (l->size - 1)) == 0)
            level_block(src, l, input, newest, level_state, n, sc);
        /* y_n's share of this level was added by earlier blocks; read and clear it */
        double *slot = &out[(size_t)n & ((size_t)l->ring - 1)];
        y += *slot;
        *slot = 0.0;
        level_state += level_doubles(l);
    }
    return y;
}

double contact_map_conv_push(const ContactMapSource *src, ContactMapConvolution kind, double *state,
                             double x) {
    (void)kind;
    const ContactMap *map = src->map;
    ConvHeader *h = (ConvHeader *)state;
    if (h->fft != 0.0)
        return fft_push(src, state, x);
    size_t ring = ring_length(map, false);
    long long n = (long long)h->count;
    size_t newest = (size_t)(n % (long long)ring);
    double *input = state + HEADER_DOUBLES;
    input[newest] = x;
    h->count += 1.0;
    int lags = n + 1 < map->samples ? (int)(n + 1) : map->samples;
    return direct_sum(src, input, ring, newest, lags);
}
