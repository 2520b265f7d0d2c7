/* The engine's model: what the scene says (bodies, obstacles, contact pairs, materials, options,
 * the state vector's layout and the variables it publishes), built from the thing database by
 * engine_build.c and rebuilt or refreshed only by edits (engine_apply_edit, engine_refresh_params),
 * never by a step, as MuJoCo's mjModel stands apart from mjData. What a step changes is the
 * engine's data (engine_internal.h: EngineData, EngineBodyData, the state vector, the contacts).
 * Written by the thread that runs the engine (at creation and edits), read by its stages. */
#ifndef ISSIM_ENGINE_MODEL_H
#define ISSIM_ENGINE_MODEL_H

#include <stdbool.h>

#include "issim/collision.h"
#include "issim/contact.h"
#include "issim/contactmap.h"
#include "issim/engine.h"
#include "issim/surface.h"
#include "issim/thing.h"

#include "engine_contact.h"

typedef enum BlockKind {
    BLOCK_FREE_BODY,    /* 13: p(3) q(4) v(3) w(3) */
    BLOCK_PLANAR_BODY,  /* 6: x z theta vx vz omega; theta about +y */
    BLOCK_CONTACT_PAIR, /* a pair of bodies in reduced coordinates (engine_reduced.c): the
                           model's block_size values, ENGINE_REDUCED_BLOCK_MAX reserved */
} BlockKind;

enum { FREE_BODY_SIZE = 13, PLANAR_BODY_SIZE = 6 };

typedef struct StateBlock {
    BlockKind kind;
    int offset; /* into the state vector */
    int size;
    int body;
} StateBlock;

typedef struct EngineBody {
    ThingId thing;
    char name[64];
    double mass;
    Vec3 inertia;        /* principal moments, body frame */
    Vec3 force, torque;  /* external, world (the body's properties) */
    Vec3 cycle_force;    /* force_cycle: peak of the load cycle, world */
    double cycle_period; /* force_cycle_period, s; 0: none */
    int material;
    int vertex_count;
    Vec3 vertices[PROP_MAX_POINTS];
    double radius;
    int block;
    int velocity_offset;
    bool shaped;             /* has a collision shape (else: contact vertices against planes) */
    Shape shape;             /* body frame, centre of mass at the origin */
    Hull *hull;              /* owned, for shape = hull and smooth (its tessellation's hull) */
    SmoothSurface *surface;  /* owned, for shape = smooth (smooth contact, 002) */
    ContactMap *contact_map; /* owned reference, or NULL (engine_maps.c) */
    int world_index;         /* in the collision world, or -1 */
    double reach; /* farthest vertex or shape point from the centre of mass, m (sleep test) */
} EngineBody;

typedef struct EngineObstacle {
    ThingId thing;
    Vec3 normal; /* unit (planes) */
    double offset;
    int material;
    Shape shape; /* plane, box or mesh, in the obstacle's frame */
    Pose pose;
    TriMesh *mesh;          /* owned, for shape = mesh and smooth (its tessellation) */
    SmoothSurface *surface; /* owned, for shape = smooth */
    Hull *hull;             /* owned, for a flat smooth surface: the slab under it */
    int world_index;        /* in the collision world, or -1 */
} EngineObstacle;

typedef struct EnginePair {
    ThingId thing;
    int material_a, material_b;
    ContactParams params;
    const ContactModelClass *model;
} EnginePair;

/* The state vector's layout: one block per body (then the reduced pairs' blocks). */
typedef struct EngineLayout {
    int block_count;
    StateBlock *blocks;
    int state_size;
    int velocity_dim;
} EngineLayout;

/* The engine's named variables (engine_register_vars): names and units, in frame order. */
typedef struct EngineVars {
    int count;
    char (*names)[80];
    const char **units;
} EngineVars;

typedef struct EngineModel {
    ThingDb *db;
    EngineOptions options;
    IntegratorKind integrator_kind;
    double dt, rtol, atol, max_step;
    bool planar;
    Vec3 gravity;
    int body_count;
    EngineBody *bodies; /* body_count; their data: Engine.body_data */
    int obstacle_count;
    EngineObstacle *obstacles;
    int pair_count;
    EnginePair *pairs;
    char (*materials)[PROP_STRING_MAX];
    int material_count;
    EngineLayout layout;
    EngineVars vars;
    /* Counts the edits applied (engine_apply_edit): a checkpoint's frames replay only under the
     * model they were stepped with (engine_checkpoint.c). */
    uint64_t generation;
    CollisionThreadPolicy collision_thread; /* the universe's, fixed during a run */
} EngineModel;

/* engine_build.c: the model from the thing database (engine_create's order) */
IssimStatus engine_build_model(Engine *e, ThingId universe, IssimError *err);
void engine_store_scene_state(Engine *e);
void engine_check_scales(Engine *e);
IssimStatus engine_create_integrator(Engine *e, IssimError *err);
/* Re-reads every parameter that may change while running (after an edit). */
IssimStatus engine_refresh_params(Engine *e, IssimError *err);
int engine_find_pair(const Engine *e, int material_a, int material_b);
/* Binds the contact to its parameter set (EngineContact.param_set): its pair's parameters with
 * the damping derived for its mass share and its bodies' maps. */
IssimStatus engine_contact_bind_params(Engine *e, EngineContact *c, IssimError *err);

#endif
