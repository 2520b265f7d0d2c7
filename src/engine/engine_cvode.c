/* CVODE back-end (SUNDIALS 6.4). BDF with Newton iteration and SUNDIALS' dense direct linear
 * solver for stiff contact; Adams-Moulton with fixed-point iteration for non-stiff scenes.
 * (Debian's SUNDIALS has no LAPACK linear-solver module: PLATFORM.md.)
 *
 * Root finding: one root function per contact candidate (its depth). Root directions are set
 * from the active set (rising for inactive candidates, falling for active ones), so CVODE
 * reports only onset and separation; at each reported root the active set changes and CVODE
 * is re-initialised there, because the right-hand side jumps (the damper term b dg/dt is not
 * zero at onset). That is how the bar drops of 004 4.8 land exactly on contact events.
 */
#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "engine_internal.h"

struct Integrator {
    int size; /* equations: the awake blocks, packed (engine_sleep.c) */
    SUNContext ctx;
    void *mem;
    N_Vector y;
    SUNMatrix a;
    SUNLinearSolver ls;
    SUNNonlinearSolver nls;
    int root_count, root_capacity;
    int *roots_found;
    int *root_dirs;
    char error[256];
};

/* CVODE's vector holds the awake blocks only, packed in block order. With every body awake it
 * is the state vector itself; otherwise the awake ranges are copied into a full-size work
 * vector whose sleeping blocks hold their frozen state (integration.stage[0]), and the derivative
 * is gathered back from integration.stage[1]. */
static bool packed(const Engine *e) {
    return e->sleep.awake_state_size != e->model.layout.state_size;
}

static void unpack(const Engine *e, const double *p, double *full) {
    for (int r = 0, k = 0; r < e->sleep.awake_range_count; r++) {
        int off = e->sleep.awake_ranges[2 * r], len = e->sleep.awake_ranges[2 * r + 1];
        memcpy(full + off, p + k, sizeof(double) * (size_t)len);
        k += len;
    }
}

static void pack(const Engine *e, const double *full, double *p) {
    for (int r = 0, k = 0; r < e->sleep.awake_range_count; r++) {
        int off = e->sleep.awake_ranges[2 * r], len = e->sleep.awake_ranges[2 * r + 1];
        memcpy(p + k, full + off, sizeof(double) * (size_t)len);
        k += len;
    }
}

/* The full state for a packed CVODE vector (the vector itself when nothing sleeps). */
static const double *full_state(Engine *e, N_Vector y) {
    if (!packed(e))
        return N_VGetArrayPointer(y);
    unpack(e, N_VGetArrayPointer(y), e->integration.stage[0]);
    return e->integration.stage[0];
}

static int cvode_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *user) {
    Engine *e = user;
    const double *full = full_state(e, y);
    double *d = packed(e) ? e->integration.stage[1] : N_VGetArrayPointer(ydot);
    engine_rhs(e, t, full, d);
    if (packed(e))
        pack(e, d, N_VGetArrayPointer(ydot));
    for (int i = 0; i < e->sleep.awake_state_size; i++)
        if (!isfinite(N_VGetArrayPointer(ydot)[i]))
            return 1; /* recoverable: CVODE retries with a smaller step */
    return 0;
}

static int cvode_roots(sunrealtype t, N_Vector y, sunrealtype *g, void *user) {
    (void)t;
    Engine *e = user;
    engine_roots(e, full_state(e, y), g);
    return 0;
}

static void cvode_error_handler(int code, const char *module, const char *function, char *msg,
                                void *user) {
    Engine *e = user;
    if (e->integration.cvode)
        snprintf(e->integration.cvode->error, sizeof e->integration.cvode->error, "%s %s: %s",
                 module, function, msg);
    (void)code;
}

void engine_integration_free(Engine *e) {
    integrator_cvode_destroy(e->integration.cvode);
    e->integration.cvode = NULL;
    free(e->integration.scratch);
    free(e->integration.event_dirs);
    free(e->integration.event_states);
    e->integration.scratch = NULL;
    e->integration.event_dirs = NULL;
    e->integration.event_states = NULL;
    e->integration.event_dirs_capacity = 0;
}

void integrator_cvode_destroy(Integrator *integ) {
    if (!integ)
        return;
    if (integ->mem)
        CVodeFree(&integ->mem);
    if (integ->ls)
        SUNLinSolFree(integ->ls);
    if (integ->nls)
        SUNNonlinSolFree(integ->nls);
    if (integ->a)
        SUNMatDestroy(integ->a);
    if (integ->y)
        N_VDestroy(integ->y);
    if (integ->ctx)
        SUNContext_Free(&integ->ctx);
    free(integ->roots_found);
    free(integ->root_dirs);
    free(integ);
}

Integrator *integrator_cvode_create(Engine *e, IssimError *err) {
    Integrator *integ = calloc(1, sizeof *integ);
    if (!integ) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory creating the integrator");
        return NULL;
    }
    int n = e->sleep.awake_state_size;
    integ->size = n;
    bool ok = SUNContext_Create(NULL, &integ->ctx) == 0;
    ok = ok && (integ->y = N_VNew_Serial(n, integ->ctx)) != NULL;
    ok = ok &&
         (integ->mem = CVodeCreate(e->model.integrator_kind == INTEGRATOR_BDF ? CV_BDF : CV_ADAMS,
                                   integ->ctx)) != NULL;
    if (ok) {
        memcpy(e->integration.stage[0], e->y, sizeof(double) * (size_t)e->model.layout.state_size);
        pack(e, e->y, N_VGetArrayPointer(integ->y));
    }
    ok = ok && CVodeInit(integ->mem, cvode_rhs, e->data.t, integ->y) == CV_SUCCESS;
    ok = ok && CVodeSetUserData(integ->mem, e) == CV_SUCCESS;
    ok = ok && CVodeSetErrHandlerFn(integ->mem, cvode_error_handler, e) == CV_SUCCESS;
    ok = ok && CVodeSStolerances(integ->mem, e->model.rtol, e->model.atol) == CV_SUCCESS;
    ok = ok && CVodeSetMaxStep(integ->mem, e->model.max_step) == CV_SUCCESS;
    ok = ok && CVodeSetMaxNumSteps(integ->mem, 1000000) == CV_SUCCESS;
    if (ok && e->model.integrator_kind == INTEGRATOR_BDF) {
        ok = (integ->a = SUNDenseMatrix(n, n, integ->ctx)) != NULL;
        ok = ok && (integ->ls = SUNLinSol_Dense(integ->y, integ->a, integ->ctx)) != NULL;
        ok = ok && CVodeSetLinearSolver(integ->mem, integ->ls, integ->a) == CV_SUCCESS;
    } else if (ok) {
        ok = (integ->nls = SUNNonlinSol_FixedPoint(integ->y, 0, integ->ctx)) != NULL;
        ok = ok && CVodeSetNonlinearSolver(integ->mem, integ->nls) == CV_SUCCESS;
    }
    integ->root_count = e->contact_count;
    integ->root_capacity = integ->root_count + 16;
    if (ok) {
        integ->roots_found = calloc((size_t)integ->root_capacity, sizeof(int));
        integ->root_dirs = calloc((size_t)integ->root_capacity, sizeof(int));
        ok = integ->roots_found && integ->root_dirs;
    }
    if (ok && integ->root_count > 0)
        ok = CVodeRootInit(integ->mem, integ->root_count, cvode_roots) == CV_SUCCESS;
    if (!ok) {
        issim_error_set(err, ISSIM_ERR_NUMERIC, "cannot set up CVODE (%d equations)", n);
        integrator_cvode_destroy(integ);
        return NULL;
    }
    return integ;
}

/* The collision world adds and removes contacts, and every contact is a root function: the
 * root count follows the contact count at each re-initialisation. */
static IssimStatus resize_roots(Engine *e, IssimError *err) {
    Integrator *integ = e->integration.cvode;
    int n = e->contact_count;
    if (n == integ->root_count)
        return ISSIM_OK;
    if (n > integ->root_capacity) {
        int cap = issim_array_grown_capacity(integ->root_capacity, n);
        if (!ISSIM_ARRAY_RESIZE(integ->roots_found, cap) ||
            !ISSIM_ARRAY_RESIZE(integ->root_dirs, cap))
            return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for %d root functions", n);
        integ->root_capacity = cap;
    }
    if (CVodeRootInit(integ->mem, n, n > 0 ? cvode_roots : NULL) != CV_SUCCESS)
        return issim_error_set(err, ISSIM_ERR_NUMERIC, "CVODE root set-up failed (%d roots)", n);
    integ->root_count = n;
    return ISSIM_OK;
}

static void set_root_directions(Engine *e) {
    Integrator *integ = e->integration.cvode;
    if (integ->root_count == 0)
        return;
    for (int i = 0; i < integ->root_count; i++)
        integ->root_dirs[i] = e->contacts[i].active ? -1 : 1;
    CVodeSetRootDirection(integ->mem, integ->root_dirs);
}

static IssimStatus reinit(Engine *e, IssimError *err) {
    Integrator *integ = e->integration.cvode;
    /* CVODE counts its steps from each (re)initialisation; the engine's count goes on from where it
     * is now, RK4's fixed steps included (adding CVODE's old count instead made the total go
     * back after a stretch of fixed steps). */
    e->integration.cvode_steps_base = e->stats.steps;
    engine_normalize_state(e, e->y);
    if (integ->size != e->sleep.awake_state_size) {
        /* Bodies fell asleep or woke: a vector of another length, so a new CVODE (allocation on
         * a layout change only, as docs/architecture.md allows). */
        integrator_cvode_destroy(integ);
        e->integration.cvode = integrator_cvode_create(e, err);
        if (!e->integration.cvode)
            return err ? err->status : ISSIM_ERR_NUMERIC;
        integ = e->integration.cvode;
    }
    memcpy(e->integration.stage[0], e->y, sizeof(double) * (size_t)e->model.layout.state_size);
    pack(e, e->y, N_VGetArrayPointer(integ->y));
    if (CVodeReInit(integ->mem, e->data.t, integ->y) != CV_SUCCESS)
        return issim_error_set(err, ISSIM_ERR_NUMERIC, "CVODE re-initialisation failed at t = %g",
                               e->data.t);
    IssimStatus rs = resize_roots(e, err);
    if (rs != ISSIM_OK)
        return rs;
    set_root_directions(e);
    e->stats.reinits++;
    e->integration.dirty = false;
    return ISSIM_OK;
}

/* The progress guard: CVODE whose step size collapsed (a force law that switches at every step,
 * 004's internal friction chattering about dg/dt = 0 under BDF: steps between 2e-12 and 2e-10 s,
 * 100,000 of them in 23 s without reaching the next output instant) stops with the active
 * contacts named, and the caller keeps the last good state. Two signs: over a window of
 * ENGINE_GUARD_WINDOW steps the mean step is below ENGINE_TINY_STEP of the output step, or one
 * output step has taken ENGINE_MAX_STEPS_PER_OUTPUT steps. */
typedef struct ProgressGuard {
    uint64_t steps_at_start, window_steps;
    double window_t;
} ProgressGuard;

static IssimStatus progress_guard(Engine *e, double t_target, ProgressGuard *g, IssimError *err) {
    uint64_t steps = e->stats.steps - g->steps_at_start;
    bool stalled = steps >= ENGINE_MAX_STEPS_PER_OUTPUT;
    if (steps - g->window_steps >= ENGINE_GUARD_WINDOW) {
        double mean = (e->data.t - g->window_t) / (double)(steps - g->window_steps);
        stalled = stalled || mean < ENGINE_TINY_STEP * e->model.dt;
        g->window_steps = steps;
        g->window_t = e->data.t;
    }
    if (!stalled)
        return ISSIM_OK;
    double h = 0.0;
    CVodeGetLastStep(e->integration.cvode->mem, &h);
    char what[640];
    engine_describe_active(e, what, sizeof what);
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "integration makes no progress at t = %.9g s: %llu steps toward t = "
                           "%.9g s, the last %.3g s long%s; try universe.integrator = \"rk4\" "
                           "(a fixed step) or looser tolerances",
                           e->data.t, (unsigned long long)steps, t_target, h, what);
}

IssimStatus integrator_cvode_advance(Engine *e, double t_target, IssimError *err) {
    if (e->integration.dirty) {
        IssimStatus s = reinit(e, err);
        if (s != ISSIM_OK)
            return s;
    }
    Integrator *integ = e->integration.cvode;
    /* One internal step per call, so models with per-contact history are committed after
     * every accepted step; the stop time keeps CVODE from stepping past the output time. */
    CVodeSetStopTime(integ->mem, t_target);
    ProgressGuard guard_state = {.steps_at_start = e->stats.steps, .window_t = e->data.t};
    while (e->data.t < t_target) {
        if (e->model.options.should_stop &&
            e->model.options.should_stop(e->model.options.should_stop_user))
            return issim_error_set(err, ISSIM_ERR_CANCELLED, "stopped at t = %.9g s on request",
                                   e->data.t);
        IssimStatus guard = progress_guard(e, t_target, &guard_state, err);
        if (guard != ISSIM_OK)
            return guard;
        sunrealtype t_reached = e->data.t;
        integ->error[0] = '\0';
        int flag = CVode(integ->mem, t_target, integ->y, &t_reached, CV_ONE_STEP);
        if (flag < 0)
            return issim_error_set(err, ISSIM_ERR_NUMERIC,
                                   "integration failed at t = %.9g s (CVODE flag %d)%s%s",
                                   e->data.t, flag, integ->error[0] ? ": " : "", integ->error);
        unpack(e, N_VGetArrayPointer(integ->y), e->y);
        e->data.t = flag == CV_TSTOP_RETURN ? t_target : t_reached;
        long steps = 0;
        CVodeGetNumSteps(integ->mem, &steps);
        e->stats.steps = e->integration.cvode_steps_base + (uint64_t)steps;
        if (flag == CV_ROOT_RETURN) {
            e->stats.root_events++;
            CVodeGetRootInfo(integ->mem, integ->roots_found);
            engine_update_active_set(e, e->data.t, integ->roots_found);
            engine_invalidate(e, ENGINE_INVALID_INTEGRATOR);
        } else {
            engine_commit_contacts(e, e->data.t); /* may end a contact: dirty again */
        }
        if (e->model.options.on_step)
            e->model.options.on_step(e, e->model.options.on_step_user);
        if (e->sleep.awake_state_size == 0) { /* everything fell asleep: nothing to integrate */
            e->data.t = t_target;
            break;
        }
        if (e->integration.fixed_step_dirty && e->data.t < t_target) {
            engine_update_fixed_step(e);
            if (e->data.fixed_step > 0.0) { /* a contact asks for fixed steps from here */
                engine_invalidate(e, ENGINE_INVALID_INTEGRATOR);
                break;
            }
        }
        if (e->integration.dirty && e->data.t < t_target) {
            IssimStatus s = reinit(e, err);
            if (s != ISSIM_OK)
                return s;
            integ = e->integration.cvode;
            CVodeSetStopTime(integ->mem, t_target);
        }
    }
    return ISSIM_OK;
}
