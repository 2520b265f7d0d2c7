/* The REDUCE stage's context (engine_reduced.c, engine_smooth.c): pairs of bodies integrated in
 * reduced coordinates, each in a slot whose BLOCK_CONTACT_PAIR block follows the body blocks.
 * Written and read by the thread that runs the engine. */
#ifndef ISSIM_ENGINE_REDUCED_H
#define ISSIM_ENGINE_REDUCED_H

#include <stdbool.h>
#include <stddef.h>

#include "issim/engine.h"
#include "issim/engine_resolver.h"

typedef struct EngineContact EngineContact;

/* Pair blocks reserved after the body blocks (3D scenes). */
#define ENGINE_REDUCED_SLOTS 2

typedef struct EngineReducedSlot {
    bool active;
    int block;                    /* its BLOCK_CONTACT_PAIR block */
    int body_a, body_b, obstacle; /* body_b -1: against the obstacle */
    EngineReducedPair pair;
    const EngineReducedModel *model; /* chosen at entry (engine_reduced.c) */
    _Alignas(16) unsigned char data[ENGINE_REDUCED_DATA_MAX]; /* the model's constants */
} EngineReducedSlot;

typedef struct EngineReduced {
    EngineReducedSlot slot[ENGINE_REDUCED_SLOTS];
    int slot_count; /* slots with a block (0 in planar scenes) */
    bool planar_warned;
    const EngineReducedModel *model; /* engine_set_reduced_model's override, or NULL */
} EngineReduced;

/* engine_reduced.c: reduced-coordinate pairs */
void engine_reduced_body_state(const Engine *e, const double *y, int body, EngineBodyState *out);
/* A contact between the two bodies of a reduced pair (or its body and its obstacle). */
bool engine_contact_inside_pair(const Engine *e, const EngineContact *c);
/* Pair blocks' derivatives from the accumulated body loads (engine_rhs). */
void engine_reduced_rhs(Engine *e, const double *y, const Vec3 *force, const Vec3 *torque,
                        double *ydot);
/* After an accepted step: pairs whose contact would pull separate. */
void engine_reduced_commit(Engine *e, double t);
/* REDUCE stage: pairs leave when a third body joins, islands of two enter when slow. */
void engine_reduced_islands(Engine *e);
/* Before a synchronous collision update: pairs whose model keeps the contact skip the narrow
 * phase (engine_collide). */
void engine_reduced_hold_pairs(Engine *e);
/* Appends the active pairs' blocks to the integrated ranges (engine_sleep's rebuild). */
void engine_reduced_add_ranges(Engine *e);
void engine_reduced_leave(Engine *e, int slot, double t);
/* Puts body and obstacle into a free slot as a pair of `model` with the given data (copied) and
 * block (engine_smooth.c's start_coords). Errors: no free slot. */
IssimStatus engine_reduced_start_pair(Engine *e, int body, int obstacle,
                                      const EngineReducedPair *pair,
                                      const EngineReducedModel *model, const void *data,
                                      size_t size, const double *block, IssimError *err);
/* engine_smooth.c: the pairs whose start_coords put them in contact at the start. */
IssimStatus engine_smooth_start(Engine *e, IssimError *err);

#endif
