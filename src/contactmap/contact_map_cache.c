/* The process-wide cache of map files (contactmap.h, contact_map_cache_enable): a parameter study
 * builds the same scene hundreds of times, and reading a map (parsing its text, then planning and
 * transforming the FFT levels of 000 eq. 3.20's convolution) was 8.7 ms of a 9 ms bar-drop run
 * (docs/performance.md, sweeps). A ContactMap is immutable and reference counted, so one read
 * serves every later load of the same file: the cache holds one reference per file and hands out
 * more. The key is the path and the file's identity (device, inode, size, modification time): a
 * file rewritten between loads is read again. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "contactmap_internal.h"

typedef struct CachedMap {
    char *path;
    struct stat identity;
    ContactMap *map;
} CachedMap;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static bool cache_on;
static CachedMap *cache;
static int cache_count, cache_capacity;

void contact_map_cache_enable(void) {
    pthread_mutex_lock(&cache_lock);
    cache_on = true;
    pthread_mutex_unlock(&cache_lock);
}

void contact_map_cache_clear(void) {
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < cache_count; i++) {
        contact_map_release(cache[i].map);
        free(cache[i].path);
    }
    free(cache);
    cache = NULL;
    cache_count = cache_capacity = 0;
    cache_on = false;
    pthread_mutex_unlock(&cache_lock);
}

static bool same_file(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static CachedMap *entry_for(const char *path) {
    for (int i = 0; i < cache_count; i++)
        if (strcmp(cache[i].path, path) == 0)
            return &cache[i];
    if (cache_count == cache_capacity) {
        int capacity = cache_capacity ? 2 * cache_capacity : 8;
        CachedMap *grown = realloc(cache, sizeof *cache * (size_t)capacity);
        if (!grown)
            return NULL;
        cache = grown;
        cache_capacity = capacity;
    }
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    cache[cache_count] = (CachedMap){.path = copy};
    return &cache[cache_count++];
}

/* The read happens under the lock: threads starting a sweep together wait for the first one's
 * read instead of each reading the same file. */
IssimStatus contact_map_read_cached(const char *path, ContactMap **out, IssimError *err) {
    struct stat identity;
    pthread_mutex_lock(&cache_lock);
    if (!cache_on || stat(path, &identity) != 0) {
        pthread_mutex_unlock(&cache_lock);
        return contact_map_read(path, out, err); /* a missing file: the reader names it */
    }
    CachedMap *entry = entry_for(path);
    if (entry && entry->map && same_file(&entry->identity, &identity)) {
        contact_map_retain(entry->map);
        *out = entry->map;
        pthread_mutex_unlock(&cache_lock);
        return ISSIM_OK;
    }
    IssimStatus s = contact_map_read(path, out, err);
    if (entry && s == ISSIM_OK) {
        contact_map_release(entry->map); /* an older version of the file, if any */
        entry->map = *out;
        entry->identity = identity;
        contact_map_retain(*out);
    }
    pthread_mutex_unlock(&cache_lock);
    return s;
}
