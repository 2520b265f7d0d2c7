/* Private: the map's storage. */
#ifndef ISSIM_CONTACTMAP_INTERNAL_H
#define ISSIM_CONTACTMAP_INTERNAL_H

#include <stdatomic.h>

#include "issim/contactmap.h"

/* All nodes' samples together: 2^26 doubles (512 MiB with the increments). */
#define CONTACT_MAP_MAX_VALUES (1 << 26)
#define CONTACT_MAP_FILE_MAX_BYTES (512ll << 20)

/* The FFT convolution's partitions (contact_map_conv.c; sizes chosen by measurement,
 * docs/performance.md): lags [0, HEAD) summed directly; then blocks of S = HEAD, 2 HEAD, ...
 * doubling up to BLOCK, GROWING_PARTS partitions of S lags per size below BLOCK, as many
 * partitions of BLOCK lags as the map needs after that. All powers of two. */
#ifndef CONTACT_MAP_FFT_HEAD
#define CONTACT_MAP_FFT_HEAD 64
#endif
#ifndef CONTACT_MAP_FFT_BLOCK
#define CONTACT_MAP_FFT_BLOCK 2048
#endif
#ifndef CONTACT_MAP_FFT_GROWING_PARTS
#define CONTACT_MAP_FFT_GROWING_PARTS 2
#endif

/* One level of the partitioned convolution: blocks of `size` samples, kernel lags
 * [lag, lag + partitions * size) in partitions of `size` lags. */
typedef struct ContactMapLevel {
    int size, partitions, lag;
    int ring;                /* its output ring: a power of two >= lag + size */
    void *forward, *inverse; /* fftw_plan, real 2 size <-> complex size + 1 (shared) */
    double *spectra;         /* per rule, node and partition, size + 1 complex values */
} ContactMapLevel;

struct ContactMap {
    atomic_int refs;
    char body[CONTACT_MAP_NAME_MAX];
    char origin[CONTACT_MAP_TEXT_MAX];
    int dimension;
    double period;
    int samples, node_count;
    ContactMapNode *nodes;
    double *step;                            /* node-major, samples per node */
    double *increments;                      /* a_k = h(kT) - h((k-1)T) */
    double *weights[CONTACT_MAP_RULE_COUNT]; /* history weights per rule, node-major */
    ContactMapProvenance provenance;
    ContactMapLevel *levels; /* the FFT convolution's (NULL: too short to need one) */
    int level_count;
};

/* The FFT levels and kernel spectra of map, the spectra's work spread over `threads` threads. */
IssimStatus contact_map_fft_prepare(ContactMap *map, int threads, IssimError *err);
/* Makes the process-wide FFT plans a map of `samples` samples will need (the slow part of a
 * first read), so that another thread can make them while the map is
 * parsed. Failures are left for contact_map_fft_prepare to report. */
void contact_map_fft_plan(int samples);
/* contact_map_create with the FFT spectra computed on `threads` threads (the same result). */
IssimStatus contact_map_create_threads(const ContactMapSpec *spec, const char *origin, int threads,
                                       ContactMap **out, IssimError *err);

/* Runs run(context, task) for task = 0 ... tasks - 1 on the calling thread and up to threads - 1
 * helpers started for the call; returns when all are done. Tasks are taken in order. */
#define CONTACT_MAP_MAX_READ_THREADS 64
void contact_map_parallel(int threads, int tasks, void (*run)(void *context, int task),
                          void *context);
int contact_map_read_thread_count(void);
void contact_map_fft_destroy(ContactMap *map);
/* contact_map_read, through the cache when contact_map_cache_enable has turned it on. */
IssimStatus contact_map_read_cached(const char *path, ContactMap **out, IssimError *err);

#endif
