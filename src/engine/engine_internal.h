/* Private engine structures shared by engine.c (build, variables, edits), engine_dynamics.c
 * (right-hand side, contacts, energy), engine_cvode.c, engine_rk4.c and engine_system.c. */
#ifndef ISSIM_ENGINE_INTERNAL_H
#define ISSIM_ENGINE_INTERNAL_H

#include "issim/engine.h"

typedef enum BlockKind {
    BLOCK_FREE_BODY,   /* 13: p(3) q(4) v(3) w(3) */
    BLOCK_PLANAR_BODY, /* 6: x z theta vx vz omega; theta about +y */
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
    Vec3 inertia;       /* principal moments, body frame */
    Vec3 force, torque; /* external, world */
    int material;
    int vertex_count;
    Vec3 vertices[PROP_MAX_POINTS];
    double radius;
    int block;
    int velocity_offset;
} EngineBody;

typedef struct EngineObstacle {
    ThingId thing;
    Vec3 normal; /* unit */
    double offset;
    int material;
} EngineObstacle;

typedef struct EnginePair {
    ThingId thing;
    int material_a, material_b;
    ContactParams params;
    const ContactModelClass *model;
} EnginePair;

/* One potential contact: a body vertex against an obstacle plane. Its depth is a root
 * function, so onset and separation are located by the integrator. */
typedef struct EngineContact {
    int body, vertex, obstacle, pair;
    bool active;
    uint32_t id; /* issued at onset, persistent while active */
    double t_begin;
    ContactHistory history;
    /* The pair's parameters for this contact (damping derived with this body's mass). */
    ContactParams params;
} EngineContact;

typedef struct Integrator Integrator;

struct Engine {
    ThingDb *db;
    EngineOptions options;
    IntegratorKind integrator_kind;
    double dt, rtol, atol, max_step;
    bool planar;
    Vec3 gravity;

    int body_count;
    EngineBody *bodies;
    int obstacle_count;
    EngineObstacle *obstacles;
    int pair_count;
    EnginePair *pairs;
    int contact_count;
    EngineContact *contacts;
    char (*materials)[PROP_STRING_MAX];
    int material_count;

    int block_count;
    StateBlock *blocks;
    int state_size;
    int velocity_dim;
    double t;
    double *y;       /* state at t */
    double *y_saved; /* state before the current advance (restored on failure) */
    double *scratch; /* RK4 stages and event location */

    Integrator *integ;
    bool integrator_dirty; /* active set or state changed outside the integrator */

    int var_count;
    char (*var_names)[80];
    const char **var_units;

    uint32_t next_contact_id;
    EngineEventFn event_fn;
    void *event_user;
    EngineStats stats;
    uint64_t cvode_steps_base; /* CVODE's step counter restarts at every re-initialisation */
};

/* engine_dynamics.c */
EngineBodyState engine_block_state(const Engine *e, const double *y, int body);
void engine_block_store(const Engine *e, double *y, int body, const EngineBodyState *s);
/* Kinematics of contact c in state y; point (Nullable) receives the world contact point, arm
 * (Nullable) its offset from the centre of mass. */
void engine_contact_kinematics(const Engine *e, const double *y, const EngineContact *c, double t,
                               ContactKinematics *k, Vec3 *point, Vec3 *arm);
/* dy/dt at (t, y) with the current active set. */
void engine_rhs(Engine *e, double t, const double *y, double *ydot);
/* Root functions: depth of every contact candidate. */
void engine_roots(const Engine *e, const double *y, double *g);
/* Toggles contacts whose depth sign disagrees with their active flag; emits events. Returns the
 * number of changes. */
int engine_update_active_set(Engine *e, double t, const int *directions);
void engine_commit_contacts(Engine *e, double t);
void engine_normalize_state(Engine *e, double *y);

/* engine_cvode.c / engine_rk4.c: integrator back-ends */
Integrator *integrator_cvode_create(Engine *e, IssimError *err);
void integrator_cvode_destroy(Integrator *integ);
IssimStatus integrator_cvode_advance(Engine *e, double t_target, IssimError *err);
IssimStatus integrator_rk4_advance(Engine *e, double t_target, IssimError *err);

/* engine.c */
void engine_emit(Engine *e, const EngineEvent *event);

#endif
