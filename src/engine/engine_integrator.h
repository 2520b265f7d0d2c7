/* The integrator's context: the CVODE back-end (engine_cvode.c) or fixed RK4 steps
 * (engine_rk4.c), the fixed step the active contacts ask for, and RK4's event location. Written
 * and read by the thread that runs the engine; engine_invalidate marks it dirty. */
#ifndef ISSIM_ENGINE_INTEGRATOR_H
#define ISSIM_ENGINE_INTEGRATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "issim/engine.h"

typedef struct Integrator Integrator;

typedef struct EngineIntegration {
    Integrator *cvode; /* NULL for RK4 */
    bool dirty;        /* active set or state changed outside the integrator */
    /* the fixed step and its grid are engine data (EngineData: a rewind restores them) */
    bool fixed_step_dirty;
    /* One allocation (engine_build.c, `scratch`) carved once into named parts; each is free
     * between the calls that use it. */
    double *scratch;
    double *stage[4];       /* RK4's k1..k4, state_size each; CVODE's packed state (stage[0]) and
                               derivative (stage[1]) */
    double *stage_y;        /* RK4's state between stages */
    double *y_next;         /* RK4: the state at the step's end */
    Vec3 *forces, *torques; /* the right-hand side's loads, body_count each */
    EngineBodyState *body_states; /* the right-hand side's per-body states, body_count */
    int *event_dirs;              /* RK4: located crossing per contact, all zero between events */
    int event_dirs_capacity;
    EngineBodyState *event_states; /* RK4: every body's state at a step's start and end */
    uint64_t cvode_steps_base;     /* CVODE's step counter restarts at every re-initialisation */
} EngineIntegration;

/* engine_cvode.c / engine_rk4.c: integrator back-ends */
Integrator *integrator_cvode_create(Engine *e, IssimError *err);
void integrator_cvode_destroy(Integrator *integ);
/* The whole context: CVODE, the RK4 stages and the event arrays (engine_destroy). */
void engine_integration_free(Engine *e);
/* CVODE to t_target; returns early (e->data.t < t_target) at an event after which an active contact
 * asks for a fixed step. */
IssimStatus integrator_cvode_advance(Engine *e, double t_target, IssimError *err);
/* RK4 steps of size h to t_target. With until_no_fixed_step it returns early (e->data.t < t_target)
 * once no active contact asks for a fixed step any more (the base integrator takes over). */
IssimStatus integrator_rk4_advance(Engine *e, double t_target, double h, bool until_no_fixed_step,
                                   IssimError *err);

#endif
