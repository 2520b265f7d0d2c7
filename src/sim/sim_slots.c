/* The layouts of the registry slots the session defines (POINTER, ENGINE_STATS): where each
 * field of SimPointer and SimEngineStats sits in a slot's values and id words. Only this file
 * indexes them; writers pack, readers unpack (sim.h). */
#include <string.h>

#include "issim/engine_stats.h"
#include "issim/sim.h"

/* ENGINE_STATS: counts travel as doubles, exact up to 2^53. */
enum {
    STAT_STEPS,
    STAT_STEP_TIME_US,
    STAT_SIM_TIME,
    STAT_REALTIME_FACTOR,
    STAT_RESETS,
    STAT_WARNINGS,
    STAT_ACTIVE_CONTACTS,
    STAT_AWAKE_BODIES,
    STAT_BODIES,
    STAT_CONTACT_REPORTS,
    STAT_CONTACTS_PUBLISHED,
    STAT_CONTACTS_DROPPED,
    STAT_COUNT
};
_Static_assert(STAT_COUNT <= REGISTRY_SLOT_VALUES, "the engine statistics fit their slot");

/* POINTER: a vector takes three consecutive values (x, y, z). */
enum {
    POINTER_DRAGGING,
    POINTER_ANCHOR_X,
    POINTER_TARGET_X = POINTER_ANCHOR_X + 3,
    POINTER_STIFFNESS = POINTER_TARGET_X + 3,
    POINTER_DAMPING,
    POINTER_HOLD_OMEGA,
    POINTER_COUNT
};
enum { POINTER_ID_BODY, POINTER_ID_COUNT };
_Static_assert(POINTER_COUNT <= REGISTRY_SLOT_VALUES, "the pointer fits its slot");
_Static_assert(POINTER_ID_COUNT <= REGISTRY_SLOT_IDS, "the pointer's ids fit its slot");

static void put_vec3(double *v, int at, Vec3 x) {
    v[at] = x.x;
    v[at + 1] = x.y;
    v[at + 2] = x.z;
}

static Vec3 get_vec3(const double *v, int at) {
    return (Vec3){v[at], v[at + 1], v[at + 2]};
}

/* A packed slot holds zeros past its layout, as registry_slot_write stores them. */
static void clear_values(RegistrySlot *slot) {
    memset(slot->v, 0, sizeof slot->v);
    memset(slot->ids, 0, sizeof slot->ids);
}

void sim_engine_stats_pack(const SimEngineStats *s, RegistrySlot *slot) {
    clear_values(slot);
    double *v = slot->v;
    v[STAT_STEPS] = (double)s->steps;
    v[STAT_STEP_TIME_US] = s->step_time_us;
    v[STAT_SIM_TIME] = s->sim_time;
    v[STAT_REALTIME_FACTOR] = s->realtime_factor;
    v[STAT_RESETS] = (double)s->resets;
    v[STAT_WARNINGS] = (double)s->warnings;
    v[STAT_ACTIVE_CONTACTS] = s->active_contacts;
    v[STAT_AWAKE_BODIES] = s->awake_bodies;
    v[STAT_BODIES] = s->bodies;
    v[STAT_CONTACT_REPORTS] = s->contact_reports;
    v[STAT_CONTACTS_PUBLISHED] = s->contacts_published;
    v[STAT_CONTACTS_DROPPED] = (double)s->contacts_dropped;
}

SimEngineStats sim_engine_stats_unpack(const RegistrySlot *slot) {
    const double *v = slot->v;
    return (SimEngineStats){
        .steps = (uint64_t)v[STAT_STEPS],
        .step_time_us = v[STAT_STEP_TIME_US],
        .sim_time = v[STAT_SIM_TIME],
        .realtime_factor = v[STAT_REALTIME_FACTOR],
        .resets = (uint64_t)v[STAT_RESETS],
        .warnings = (uint64_t)v[STAT_WARNINGS],
        .active_contacts = (int)v[STAT_ACTIVE_CONTACTS],
        .awake_bodies = (int)v[STAT_AWAKE_BODIES],
        .bodies = (int)v[STAT_BODIES],
        .contact_reports = (int)v[STAT_CONTACT_REPORTS],
        .contacts_published = (int)v[STAT_CONTACTS_PUBLISHED],
        .contacts_dropped = (uint64_t)v[STAT_CONTACTS_DROPPED],
    };
}

void sim_engine_stats_write(Registry *reg, double t, const SimEngineStats *stats) {
    RegistrySlot slot;
    sim_engine_stats_pack(stats, &slot);
    registry_slot_write(reg, REGISTRY_SLOT_ENGINE_STATS, t, slot.v, STAT_COUNT);
}

void sim_pointer_pack(const SimPointer *p, RegistrySlot *slot) {
    clear_values(slot);
    double *v = slot->v;
    v[POINTER_DRAGGING] = p->dragging ? 1.0 : 0.0;
    put_vec3(v, POINTER_ANCHOR_X, p->anchor);
    put_vec3(v, POINTER_TARGET_X, p->target);
    v[POINTER_STIFFNESS] = p->stiffness;
    v[POINTER_DAMPING] = p->damping;
    v[POINTER_HOLD_OMEGA] = p->hold_omega;
    slot->ids[POINTER_ID_BODY] = p->body;
}

SimPointer sim_pointer_unpack(const RegistrySlot *slot) {
    const double *v = slot->v;
    return (SimPointer){
        .dragging = v[POINTER_DRAGGING] > 0.5,
        .body = slot->ids[POINTER_ID_BODY],
        .anchor = get_vec3(v, POINTER_ANCHOR_X),
        .target = get_vec3(v, POINTER_TARGET_X),
        .stiffness = v[POINTER_STIFFNESS],
        .damping = v[POINTER_DAMPING],
        .hold_omega = v[POINTER_HOLD_OMEGA],
    };
}

void sim_pointer_write(Registry *reg, double t, const SimPointer *pointer) {
    RegistrySlot slot;
    sim_pointer_pack(pointer, &slot);
    registry_slot_write_ids(reg, REGISTRY_SLOT_POINTER, t, slot.v, POINTER_COUNT, slot.ids,
                            POINTER_ID_COUNT);
}
