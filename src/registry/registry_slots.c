/* State registry: slots (user/external state, transport, statistics) and contact reports.
 *
 * Both are single-writer latches rather than plain sequence locks: two copies, the writer fills
 * the idle copy and then publishes it by bumping a version with release order; a reader copies
 * copy[version & 1] and keeps it if the version is unchanged afterwards. A reader therefore never
 * finds the copy it is reading half-written unless the writer finished a whole update meanwhile,
 * so even a servo reading the engine's statistics cannot be held up by an engine thread
 * preempted in the middle of a write. The words of a copy are stored with release order, so
 * each is ordered after the previous version bump; a reader still holding the version before
 * that, who loads (with acquire order) a word of the copy being refilled, then sees the version
 * move and retries.
 */
#include "registry_internal.h"

#include <math.h>
#include <stdlib.h>

/* ===== Slots ===== */

void registry_slot_write_ids(Registry *reg, RegistrySlotId slot, double t, const double *v, int n,
                             const uint64_t *ids, int n_ids) {
    if ((int)slot < 0 || slot >= REGISTRY_SLOT_COUNT) {
        issim_log(ISSIM_LOG_ERROR, "registry_slot_write: no slot %d", (int)slot);
        return;
    }
    if (n < 0 || !v)
        n = 0;
    if (n > REGISTRY_SLOT_VALUES)
        n = REGISTRY_SLOT_VALUES;
    if (n_ids < 0 || !ids)
        n_ids = 0;
    if (n_ids > REGISTRY_SLOT_IDS)
        n_ids = REGISTRY_SLOT_IDS;
    SlotLatch *latch = &reg->slots[slot];
    uint64_t version = atomic_load_explicit(&latch->version, memory_order_relaxed) + 1;
    SlotCopy *c = &latch->copy[version & 1];
    registry_store_f64(&c->t, t);
    registry_put(&c->count, version);
    for (int i = 0; i < REGISTRY_SLOT_VALUES; i++)
        registry_store_f64(&c->v[i], i < n ? v[i] : 0.0);
    for (int i = 0; i < REGISTRY_SLOT_IDS; i++)
        registry_put(&c->ids[i], i < n_ids ? ids[i] : 0);
    atomic_store_explicit(&latch->version, version, memory_order_release);
}

void registry_slot_write(Registry *reg, RegistrySlotId slot, double t, const double *v, int n) {
    registry_slot_write_ids(reg, slot, t, v, n, NULL, 0);
}

void registry_slot_read(const Registry *reg, RegistrySlotId slot, RegistrySlot *out) {
    memset(out, 0, sizeof *out);
    if ((int)slot < 0 || slot >= REGISTRY_SLOT_COUNT)
        return;
    const SlotLatch *latch = &reg->slots[slot];
    for (int attempt = 0; attempt < REGISTRY_READ_RETRIES; attempt++) {
        uint64_t version = atomic_load_explicit(&latch->version, memory_order_acquire);
        if (version == 0)
            return; /* never written */
        const SlotCopy *c = &latch->copy[version & 1];
        out->t = registry_load_f64(&c->t);
        out->count = registry_get(&c->count);
        for (int i = 0; i < REGISTRY_SLOT_VALUES; i++)
            out->v[i] = registry_load_f64(&c->v[i]);
        for (int i = 0; i < REGISTRY_SLOT_IDS; i++)
            out->ids[i] = registry_get(&c->ids[i]);
        if (atomic_load_explicit(&latch->version, memory_order_relaxed) == version)
            return;
    }
    memset(out, 0, sizeof *out); /* lapped every time: report "no data" rather than a mix */
}

/* ===== Contact reports ===== */

_Static_assert(sizeof(ContactReport) % sizeof(uint64_t) == 0, "ContactReport is whole words");

bool registry_contacts_init(Registry *reg) {
    size_t words = (size_t)reg->desc.max_contacts * REGISTRY_CONTACT_WORDS;
    for (int b = 0; b < 2; b++) {
        reg->contacts[b].words = calloc(words ? words : 1, sizeof(uint64_t));
        if (!reg->contacts[b].words)
            return false;
    }
    return true;
}

void registry_contacts_free(Registry *reg) {
    for (int b = 0; b < 2; b++) {
        free(reg->contacts[b].words);
        reg->contacts[b].words = NULL;
    }
}

void registry_publish_contacts(Registry *reg, double t, const ContactReport *contacts, int n) {
    if (n < 0 || !contacts)
        n = 0;
    if (n > reg->desc.max_contacts) {
        uint64_t before = reg->w_contacts_dropped;
        reg->w_contacts_dropped += (uint64_t)(n - reg->desc.max_contacts);
        if (before == 0)
            issim_log(ISSIM_LOG_WARN,
                      "registry: %d contact reports at t=%g exceed max_contacts (%d); extra "
                      "reports dropped",
                      n, t, reg->desc.max_contacts);
        n = reg->desc.max_contacts;
    }
    uint64_t version = atomic_load_explicit(&reg->contact_version, memory_order_relaxed) + 1;
    ContactCopy *c = &reg->contacts[version & 1];
    registry_store_f64(&c->t, t);
    registry_put(&c->n, (uint64_t)n);
    for (int k = 0; k < n; k++) {
        uint64_t w[REGISTRY_CONTACT_WORDS];
        memcpy(w, &contacts[k], sizeof w);
        _Atomic uint64_t *dst = c->words + (size_t)k * REGISTRY_CONTACT_WORDS;
        for (size_t j = 0; j < REGISTRY_CONTACT_WORDS; j++)
            registry_put(&dst[j], w[j]);
    }
    atomic_store_explicit(&reg->contact_version, version, memory_order_release);
}

int registry_read_contacts(const Registry *reg, double *t, ContactReport *out, int max) {
    if (max < 0 || !out)
        max = 0;
    for (int attempt = 0; attempt < REGISTRY_READ_RETRIES; attempt++) {
        uint64_t version = atomic_load_explicit(&reg->contact_version, memory_order_acquire);
        if (version == 0)
            break; /* never published */
        const ContactCopy *c = &reg->contacts[version & 1];
        double ct = registry_load_f64(&c->t);
        uint64_t n = registry_get(&c->n);
        /* n is only trusted after validation; clamp so a torn value cannot overrun. */
        int count = n < (uint64_t)max ? (int)n : max;
        for (int k = 0; k < count; k++) {
            uint64_t w[REGISTRY_CONTACT_WORDS];
            const _Atomic uint64_t *src = c->words + (size_t)k * REGISTRY_CONTACT_WORDS;
            for (size_t j = 0; j < REGISTRY_CONTACT_WORDS; j++)
                w[j] = registry_get(&src[j]);
            memcpy(&out[k], w, sizeof w);
        }
        if (atomic_load_explicit(&reg->contact_version, memory_order_relaxed) == version) {
            if (t)
                *t = ct;
            return count;
        }
    }
    if (t)
        *t = NAN;
    return 0;
}
