/* The contacts' parameter sets (engine_contact.h, ContactParamSets): a pair's parameters as its
 * contacts use them. A contact differs from its pair in what depends on its bodies (the damping
 * derived from the restitution for its mass share, the two bodies' contact maps), so contacts
 * with the same pair, damping and maps share one set and hold its index instead of a copy.
 *
 * Sets are only added while the engine runs, never changed or removed, so an index stays valid
 * through rewinds and in the collision merge's copy of the previous contacts; an edit rebuilds
 * them all (engine_refresh_params) and re-binds every contact, and a restore re-binds the contacts
 * it brings back (engine_checkpoint.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    return h;
}

static uint64_t key_hash(int pair, const ContactParams *p) {
    uint64_t damping;
    memcpy(&damping, &p->damping, sizeof damping);
    uint64_t h = mix(0, (uint64_t)(unsigned)pair);
    h = mix(h, damping);
    h = mix(h, (uint64_t)(uintptr_t)p->map_a);
    return mix(h, (uint64_t)(uintptr_t)p->map_b);
}

/* The bytes of the damping, not its value: sets differ where the force laws would. */
static bool same_key(const ContactParamSets *s, int set, int pair, const ContactParams *p) {
    const ContactParams *q = &s->sets[set].params;
    return s->sets[set].pair == pair && memcmp(&q->damping, &p->damping, sizeof p->damping) == 0 &&
           q->map_a == p->map_a && q->map_b == p->map_b;
}

static bool rehash(ContactParamSets *s, int slots) {
    int *index = malloc(sizeof *index * (size_t)slots);
    if (!index)
        return false;
    for (int i = 0; i < slots; i++)
        index[i] = -1;
    for (int set = 0; set < s->count; set++) {
        uint64_t h = key_hash(s->sets[set].pair, &s->sets[set].params);
        int at = (int)(h & (uint64_t)(slots - 1));
        while (index[at] >= 0)
            at = (at + 1) & (slots - 1);
        index[at] = set;
    }
    free(s->index);
    s->index = index;
    s->slot_count = slots;
    return true;
}

static int add_set(ContactParamSets *s, int pair, const ContactParams *p) {
    /* the index at most half full, so a probe ends soon */
    if (2 * (s->count + 1) > s->slot_count && !rehash(s, s->slot_count ? 2 * s->slot_count : 64))
        return -1;
    if (!ISSIM_ARRAY_RESERVE(s->sets, s->capacity, s->count + 1))
        return -1;
    s->sets[s->count] = (ContactParamSet){.params = *p, .pair = pair};
    uint64_t h = key_hash(pair, p);
    int at = (int)(h & (uint64_t)(s->slot_count - 1));
    while (s->index[at] >= 0)
        at = (at + 1) & (s->slot_count - 1);
    s->index[at] = s->count;
    return s->count++;
}

int engine_param_set_find_or_add(ContactParamSets *s, int pair, const ContactParams *p) {
    if (s->slot_count > 0) {
        uint64_t h = key_hash(pair, p);
        for (int at = (int)(h & (uint64_t)(s->slot_count - 1)); s->index[at] >= 0;
             at = (at + 1) & (s->slot_count - 1))
            if (same_key(s, s->index[at], pair, p))
                return s->index[at];
    }
    return add_set(s, pair, p);
}

void engine_param_sets_clear(ContactParamSets *s) {
    s->count = 0;
    for (int i = 0; i < s->slot_count; i++)
        s->index[i] = -1;
}

void engine_param_sets_free(ContactParamSets *s) {
    free(s->sets);
    free(s->index);
    *s = (ContactParamSets){0};
}
