/* The engine's contacts (EngineContact: vertex-plane and manifold points) and the model-owned
 * contact state behind them (engine_contact_state.c). Written and read by the thread that runs
 * the engine. */
#ifndef ISSIM_ENGINE_CONTACT_H
#define ISSIM_ENGINE_CONTACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "issim/contact.h"
#include "issim/engine.h"

typedef enum EngineContactKind {
    CONTACT_VERTEX_PLANE, /* a body vertex (sphere centre) against an obstacle plane */
    CONTACT_MANIFOLD,     /* a manifold point from the collision world */
} EngineContactKind;

/* One potential contact. Vertex-plane contacts exist for the whole run (every vertex of every
 * "points" body against every plane); manifold contacts come and go with the collision
 * world's updates. Either way the depth is a smooth function of the state between updates and
 * a root function, so onset and separation inside a step are located by the integrator.
 *
 * A manifold contact keeps its two surface points in the bodies' frames and the normal in B's
 * frame (world for a static B), as found by the last collision update; between updates the
 * depth follows the bodies' motion: depth = (p_b - p_a) . n. */
typedef struct EngineContact {
    EngineContactKind kind;
    int body, vertex, obstacle, pair;
    int body_b;                /* manifold: the second body, or -1 when B is static (obstacle) */
    Vec3 local_a;              /* manifold: point on A, A's frame */
    Vec3 local_b;              /* manifold: point on B, B's frame (world when static) */
    Vec3 normal_b;             /* manifold: normal from B to A, B's frame (world when static) */
    Vec3 source_point;         /* manifold: the world point_a the anchors were made from */
    double radius_a, radius_b; /* manifold: round shapes (spheres, capsules) anchor their point
                                  at the core (centre or axis) and reach out by the radius */
    uint32_t collision_id;     /* manifold: the collision world's contact id */
    bool active;
    bool equilibrium; /* the model reported equilibrium and it still holds */
    /* The model ended the contact with the depth still positive (CONTACT_EVENT_SEPARATION): a
     * manifold contact stays inactive until its depth falls to zero, so it begins again only at
     * the next onset, as vertex contacts do through their roots. */
    bool released;
    double load; /* manifold: App. C constraint force holding it still, N (engine_sleep.c) */
    double load_lo, load_hi; /* manifold: the model's restitution and compression forces, N */
    /* Under this speed the contact counts as still (m/s): contact_equilibrium_speed of its load
     * and effective mass at the last commit (engine_commit_contacts); 0 before the first. */
    double still_speed;
    uint32_t id; /* issued at onset, persistent while active */
    double t_begin;
    /* history.state points at state_bytes bytes of the engine's contact-state pool at
     * state_offset (ContactModelClass.state_size, allocated at onset, freed at the end);
     * engine_contact_history() re-binds the pointer before every model call, so contacts may
     * be copied and the pool may move between calls. */
    ContactHistory history;
    size_t state_offset, state_bytes;
    /* manifold: subtracted from the geometric depth (m, >= 0), so that a collision update that
     * re-makes the anchors never raises the pair's elastic energy (engine_manifold_energy.c) */
    double depth_offset;
    /* manifold: the points of its pair's patch, which share the pair's mass for the damping
     * derived from the restitution (engine_contact_bind_params; 0 or 1: one point) */
    int patch_points;
    /* Complementarity rows: the normal force of the last time step (lambda_n / h, N), which the
     * contact reports show; the solver, not the geometry, decides their activity. */
    double resolved_force;
    Vec3 resolved_friction; /* and its friction force (world, N) */
    /* Complementarity rows: the contact's total impulse of its last time step (world, N s,
     * normal and friction), the warm start of the next solve (engine_complementarity.c). */
    Vec3 warm_impulse;
    /* Its parameters: the index of its pair's parameter set for its bodies (Engine.param_sets,
     * engine_param_sets.c; read through engine_contact_params). Bound by
     * engine_contact_bind_params; a restore binds it again, so a rewind across an edit of the
     * pair keeps the edit. */
    int param_set;
} EngineContact;

/* One pair's parameters as some of its contacts use them: the pair's ContactParams with the
 * damping derived for those contacts' mass share and their bodies' contact maps. */
typedef struct ContactParamSet {
    ContactParams params;
    int pair;
} ContactParamSet;

/* The parameter sets of the engine's contacts (engine_param_sets.c), indexed by a hash of
 * (pair, damping, maps). Written and read by the engine's thread; sets are added only in the
 * collision stage and by edits and restores, never while islands are solved in parallel. */
typedef struct ContactParamSets {
    ContactParamSet *sets;
    int count, capacity;
    int *index; /* slot_count (a power of two) slots: a set, or -1 */
    int slot_count;
} ContactParamSets;

/* Model-owned contact state (engine_contact_state.c): one byte arena, blocks of 16-byte
 * multiples, a first-fit free list sorted by offset. It grows (doubling) only at a contact onset
 * that finds it full, never inside a right-hand side; growth is counted. */
typedef struct ContactStatePool {
    unsigned char *bytes;
    size_t capacity;
    size_t end; /* every allocated block lies below end */
    size_t *free_offset, *free_size;
    int free_count, free_capacity;
} ContactStatePool;

/* engine_param_sets.c: the set with this pair and p's damping and maps, added when there is none
 * yet; -1 when out of memory. */
int engine_param_set_find_or_add(ContactParamSets *s, int pair, const ContactParams *p);
void engine_param_sets_clear(ContactParamSets *s);
void engine_param_sets_free(ContactParamSets *s);

/* engine_contact_state.c: model-owned contact state and the calls into the models */
void engine_pool_free_all(ContactStatePool *pool);
void engine_pool_rebuild(Engine *e);
/* The contact's history with history.state bound to its pool block (NULL without one). */
ContactHistory *engine_contact_history(const Engine *e, const EngineContact *c);
const ContactModelClass *engine_contact_model(const Engine *e, const EngineContact *c);
/* Onset: allocates the model's state (state_size), zeroes the history, calls begin(). */
void engine_contact_begin(Engine *e, EngineContact *c, const ContactKinematics *k);
/* End: the state block goes back to the pool. Idempotent. */
void engine_contact_end(Engine *e, EngineContact *c);
/* A restart without a checkpoint: the model's reset hook, or begin again. */
void engine_contact_reset(Engine *e, EngineContact *c, const ContactKinematics *k);
ContactForce engine_contact_force(const Engine *e, const EngineContact *c,
                                  const ContactKinematics *k);
int engine_contact_commit_model(Engine *e, EngineContact *c, const ContactKinematics *k);
double engine_contact_potential(const Engine *e, const EngineContact *c,
                                const ContactKinematics *k);
bool engine_models_have_copy_hooks(const Engine *e);

#endif
