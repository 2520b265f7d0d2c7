/* The COLLIDE stage's context: the collision world and its manager (engine_shapes.c builds them,
 * engine_collide.c runs them and merges their contacts into the engine's), and the merge's
 * per-pair energy ledger (engine_manifold_energy.c). Written and read by the thread that runs the
 * engine, except what the manager's thread reads through engine_pose_source while it runs
 * (engine_internal.h, "Threading"). */
#ifndef ISSIM_ENGINE_COLLIDE_H
#define ISSIM_ENGINE_COLLIDE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "issim/collision.h"
#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/registry.h"

typedef struct EngineContact EngineContact;

/* Threaded collision manager: the most output steps a merged report may lag behind the engine
 * before the engine waits for a newer one, and the longest wait (s, wall time). */
#define ENGINE_REPORT_MAX_LAG 2.0
#define ENGINE_REPORT_WAIT_LIMIT 0.5
/* The collision pipeline: the longest wait for the report of a fed state (s, wall time) before
 * the engine stops the pipeline and collides on its own thread (the manager ran out of memory). */
#define ENGINE_PIPELINE_WAIT_LIMIT 30.0
/* How long each side of the pipeline polls before it sleeps on a condition variable: the
 * manager's thread for the next state (collision_manager_set_spin), the engine for the report
 * it waits for. A step of the piles it is for lasts 0.1-2 ms, and a wake-up through a condition
 * variable costs both threads system calls every step (docs/performance.md). */
#define ENGINE_PIPELINE_SPIN 5e-3
/* The speculative margin (engine_collide.c reach_ahead) is this many times the distance a body's
 * farthest point covers at its present speed before an update's contacts are merged. */
#define ENGINE_REACH_AHEAD_SAFETY 2.0
/* Collision-world rest tolerance (m) used by the engine (CollisionDesc.rest_tolerance): 0. The
 * world carries the pairs of bodies whose pose did not change at all (sleeping bodies,
 * engine_sleep.c) without it; a coarser tolerance would also carry awake bodies at rest. */
#define ENGINE_REST_TOLERANCE 0.0
/* A scene whose bodies start with more elastic energy than this in their manifold contacts
 * (J) is warned about, naming the deepest pair: scenes/pile.lua once started with 39 J, an
 * explosion rather than a pour, while a 1 kg box resting on its four 1e5 N/m springs holds
 * 1.2e-4 J. */
#define ENGINE_OVERLAP_WARN_ENERGY 1e-3

/* EngineManifoldEnergy.previous_of of a new contact that is previous contact j carried over
 * frozen (< -1), and back. */
#define ENGINE_CARRIED_FROZEN(j) (-2 - (j))
#define ENGINE_FROZEN_SOURCE(previous_of) (-2 - (previous_of))

/* The per-pair energy ledger of a collision update (engine_manifold_energy.c): pairs by an
 * open-addressing index of body-pair keys; the new contacts of a pair chained from its head.
 * Written and read by the engine thread, in the merge (previous_of by engine_collide.c, the rest
 * by engine_manifold_energy.c; span by engine_advance, fresh and check_overlap by the build and
 * resets). */
typedef struct EngineManifoldEnergy {
    uint64_t *keys;     /* pair key + 1 (0: empty slot) */
    double *old_energy; /* per slot: the pair's elastic energy before the update, J */
    double *allowed;    /* per slot: what the new contacts may hold (old + what the brake took) */
    double *offset;     /* per slot: the offset that holds them to it, before healing, m */
    int *head;          /* per slot: first new contact of the pair (index past the vertex ones) */
    int slots;
    /* per new contact: the pair's next one; its previous (-1: new; ENGINE_CARRIED_FROZEN(j):
     * previous j carried over frozen) */
    int *next, *previous_of;
    /* per previous contact: the elastic energy E_old counted for it (NAN: none counted), which
     * settle takes back out for one carried over frozen (the same bits: nothing of it moved) */
    double *old_potential;
    ContactKinematics *kinematics; /* per new contact: at its geometric depth */
    int *pair_slot;                /* per new contact: its pair's slot (-1: not in the ledger) */
    int *settled; /* the slots of the pairs settled, in the order of their first contact */
    /* per body (braked_capacity): a brake of this update reached it (its rates may have
     * changed), so its contacts' kinematics are computed again; cleared after each update */
    unsigned char *braked;
    int braked_capacity;
    int capacity;
    int old_count; /* previous manifold contacts of the update under way (begin) */
    double span;   /* s: the simulated time the update's contacts serve (set by engine_advance;
                      0: the scene's dt), over which its offsets heal */
    bool fresh;    /* the next update starts the contacts (creation, a state jump): no ledger */
    bool check_overlap; /* the next update is the scene's start: warn about overlaps */
} EngineManifoldEnergy;

/* The collision pipeline (EngineOptions.pipeline_collision): the engine thread feeds the
 * manager thread a state through this mailbox and takes its report a step later. The engine
 * thread writes the mailbox only while no update is in flight (fed and not taken) and publishes
 * it by incrementing `fed` (release); the manager thread reads it in engine_pose_source after
 * seeing `fed` change (acquire) and alone writes `read`. */
typedef struct EngineCollisionPipeline {
    bool running;      /* the manager thread runs for the pipeline (engine thread) */
    bool in_flight;    /* a state was fed whose report is not taken yet (engine thread) */
    bool primed;       /* the contacts merged are the fed state's: the next step feeds only */
    bool paused;       /* a checkpoint's replay: the synchronous path (engine thread) */
    bool merging_late; /* the merge under way is of a state before the engine's (engine thread) */
    Pose *poses;       /* the mailbox: world index -> pose, per-body reach ahead, time */
    double *ahead;
    double t;
    _Atomic uint64_t fed;        /* states fed so far */
    uint64_t read;               /* manager thread: the last `fed` it took a state for */
    uint64_t published_expected; /* the manager's report count once the fed state is done */
    uint64_t steps;              /* reports merged through the pipeline (statistics) */
} EngineCollisionPipeline;

typedef struct EngineCollide {
    CollisionWorld *world;     /* NULL when no body has a shape; owned by `manager` */
    CollisionManager *manager; /* runs the world: synchronously, or on its own thread */
    Registry *registry;        /* non-NULL while the manager thread runs: its pose source */
    double *frame;             /* registry frame buffer of the manager thread */
    uint64_t reports_used, reports_stale, report_waits;
    int *world_owner; /* world index -> body index (>= 0) or -(obstacle + 1) */
    /* The previous update's manifold contacts while a merge runs: they stay where they were
     * (in `spare` after the merge swaps the buffers) instead of being copied out. Not owned. */
    EngineContact *previous;
    /* The contact buffer the next merge builds into (contact_capacity entries): the merge
     * writes the new contacts there and swaps it with Engine.contacts. */
    EngineContact *spare;
    bool *previous_kept;
    int *previous_index; /* open addressing by collision id, previous_slots entries */
    int previous_capacity, previous_slots;
    double margin; /* the collision world's margin (CollisionDesc.margin), m */
    /* engine_merge_contacts: every body's state at y during the merge (the ledger's brake
     * changes their rates); NULL outside it */
    EngineBodyState *merge_states;
    EngineManifoldEnergy manifold_energy; /* engine_manifold_energy.c */
    EngineCollisionPipeline pipeline;     /* engine_collide.c */
} EngineCollide;

/* engine_shapes.c: the shapes, the collision world and its manager */
IssimStatus engine_build_shapes(Engine *e, IssimError *err);
void engine_destroy_shapes(Engine *e);
/* The whole context: shapes, world, manager and the merge's scratch (engine_destroy). */
void engine_collide_free(Engine *e);

/* engine_collide.c: running the collision world, the merge */
/* Room for count contacts (and as many live-contact entries); false when memory ran out. */
bool engine_reserve_contacts(Engine *e, int count);
/* CollisionPoseSource for the manager: the bodies' poses at the engine's time. */
bool engine_pose_source(void *ctx, double *t, Pose *poses, double *ahead, int count);
/* Runs the collision world on the current state and replaces the manifold contacts, keeping
 * the activity and history of contacts that persist. */
void engine_collide(Engine *e);
/* engine_collide on this thread even while the manager thread runs (resets). */
void engine_collide_now(Engine *e);
/* Stops the collision pipeline's thread, dropping an update in flight: the world is then the
 * engine thread's alone (a restore, a shape rebuild, the GUI's threaded manager). The next
 * engine_collide starts it again when the options ask for it. */
void engine_pipeline_stop(Engine *e);
/* engine_pipeline_stop, and its mailbox freed (a world rebuilt or destroyed). */
void engine_pipeline_free(Engine *e);
/* Whether the collision pipeline's thread runs (the world is not the engine thread's). */
bool engine_pipeline_running(const Engine *e);
/* The name of the body or obstacle contact c touches its body with. */
const char *engine_contact_partner(const Engine *e, const EngineContact *c);
/* Replaces the manifold contacts by world contacts computed with poses (Nullable: the current
 * state's), keeping what persists. */
void engine_merge_contacts(Engine *e, const CollisionContact *world, int count, const Pose *poses);
/* engine_manifold_energy.c: a collision update never raises a pair's elastic energy. begin
 * makes room for the update; the merge then records in manifold_energy.previous_of the previous
 * index of each new contact (-1 new, ENGINE_CARRIED_FROZEN(j) carried over frozen) and calls
 * settle, which reads the pairs' energies from the previous contacts (Engine.collide.previous,
 * where the merge leaves them, at the merge's states) and sets the depth offsets. */
bool engine_manifold_energy_begin(Engine *e, int old_count, int new_count);
void engine_manifold_energy_settle(Engine *e, int new_count);
void engine_manifold_energy_free(Engine *e);

#endif
