/* Private: the map's storage. */
#ifndef ISSIM_CONTACTMAP_INTERNAL_H
#define ISSIM_CONTACTMAP_INTERNAL_H

#include <stdatomic.h>

#include "issim/contactmap.h"

/* All nodes' samples together: 2^26 doubles (512 MiB with the increments). */
#define CONTACT_MAP_MAX_VALUES (1 << 26)
#define CONTACT_MAP_FILE_MAX_BYTES (512ll << 20)

/* Lags [0, HEAD) of the FFT convolution are summed directly (contact_map_conv.c). */
#define CONTACT_MAP_FFT_HEAD 64

/* One level of the partitioned convolution: lags [size, 2 size). */
typedef struct ContactMapLevel {
    int size;
    void *forward, *inverse; /* fftw_plan, real 2 size <-> complex size + 1 */
    double *spectra;         /* per rule and node, size + 1 complex values */
} ContactMapLevel;

struct ContactMap {
    atomic_int refs;
    char body[CONTACT_MAP_NAME_MAX];
    char origin[CONTACT_MAP_TEXT_MAX];
    int dimension;
    double period;
    int samples, node_count;
    ContactMapNode *nodes;
    double *step;       /* node-major, samples per node */
    double *increments; /* a_k = h(kT) - h((k-1)T) */
    double *weights[2]; /* history weights per ContactMapRule, node-major */
    ContactMapProvenance provenance;
    ContactMapLevel *levels; /* the FFT convolution's (NULL: too short to need one) */
    int level_count;
};

IssimStatus contact_map_fft_prepare(ContactMap *map, IssimError *err);
void contact_map_fft_destroy(ContactMap *map);
/* contact_map_read, through the cache when contact_map_cache_enable has turned it on. */
IssimStatus contact_map_read_cached(const char *path, ContactMap **out, IssimError *err);

#endif
