/* Fixed-step classical Runge-Kutta (RK4) with event location.
 *
 * Each step is taken with the active set frozen, like the CVODE path. When a contact's depth
 * changes sign across a step in the direction that matters (rising for an inactive
 * candidate, falling for an active contact), the step is retaken to the crossing, found by
 * the Illinois variant of regula falsi on the step length, so contact onset and separation
 * are located to about 1e-10 of the step instead of rounded to the step grid. The step then
 * continues from the event with the new active set. Scenes with more than
 * RK4_LOCATE_MAX_CONTACTS candidates switch contacts at step ends instead (see below).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/* y_out = y + h * RK4 increment over the awake blocks (engine_sleep.c: a sleeping block is
 * neither evaluated nor written, so y_out keeps whatever it held there; the caller copies only
 * the awake ranges back). Uses scratch stages k1..k4 and a temporary. */
#define FOR_AWAKE(e, i)                                                                            \
    for (int r_ = 0; r_ < (e)->sleep.awake_range_count; r_++)                                      \
        for (int i = (e)->sleep.awake_ranges[2 * r_],                                              \
                 end_ = i + (e)->sleep.awake_ranges[2 * r_ + 1];                                   \
             i < end_; i++)

static void rk4_step(Engine *e, double t, const double *y, double h, double *y_out) {
    double *k1 = e->integration.stage[0], *k2 = e->integration.stage[1];
    double *k3 = e->integration.stage[2], *k4 = e->integration.stage[3];
    double *tmp = e->integration.stage_y;
    engine_rhs(e, t, y, k1);
    FOR_AWAKE(e, i) tmp[i] = y[i] + 0.5 * h * k1[i];
    engine_rhs(e, t + 0.5 * h, tmp, k2);
    FOR_AWAKE(e, i) tmp[i] = y[i] + 0.5 * h * k2[i];
    engine_rhs(e, t + 0.5 * h, tmp, k3);
    FOR_AWAKE(e, i) tmp[i] = y[i] + h * k3[i];
    engine_rhs(e, t + h, tmp, k4);
    FOR_AWAKE(e, i) y_out[i] = y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

/* Signed event function of contact c: > 0 once its event has happened. */
static double event_value(const Engine *e, const EngineContact *c, const double *y) {
    ContactKinematics k;
    engine_contact_kinematics(e, y, c, e->data.t, &k, NULL, NULL);
    return c->active ? -k.depth : k.depth;
}

/* Room for every body's state at a step's start and end (NULL: out of memory). */
static EngineBodyState *event_states(Engine *e) {
    if (!e->integration.event_states)
        e->integration.event_states =
            malloc(2 * sizeof *e->integration.event_states * (size_t)(e->model.body_count + 1));
    return e->integration.event_states;
}

/* The earliest contact whose event happens within (0, h], or -1. Each body's state at both
 * ends of the step is read once, not per contact end (twice per contact, each a square root
 * and a division). */
static int first_event(Engine *e, const double *y_end, double *value_end) {
    int found = -1;
    /* vertex contacts read the state vector themselves: the states serve manifold contacts */
    bool manifold = e->contact_count > e->vertex_contact_count;
    EngineBodyState *start = manifold ? event_states(e) : NULL;
    EngineBodyState *end = start ? start + e->model.body_count + 1 : NULL;
    if (start) {
        engine_fill_states(e, e->y, start);
        engine_fill_states(e, y_end, end);
    }
    for (int li = 0; li < e->sleep.live_contact_count; li++) {
        int ci = e->sleep.live_contacts[li];
        const EngineContact *c = &e->contacts[ci];
        double v, v0;
        if (start) {
            double sign = c->active ? -1.0 : 1.0;
            v = sign * engine_contact_depth(e, end, y_end, c);
            v0 = sign * engine_contact_depth(e, start, e->y, c);
        } else {
            v = event_value(e, c, y_end);
            v0 = event_value(e, c, e->y);
        }
        if (v > 0.0 && v0 <= 0.0 && (found < 0 || v > value_end[0])) {
            /* Several events in one step: the deepest crossing is a fair proxy for the
             * earliest; the others are located on the following sub-steps. */
            found = ci;
            value_end[0] = v;
        }
    }
    return found;
}

/* Finds the step length h* in (0, h] at which contact ci's event function crosses zero, and
 * leaves y_trial at the state h* later: the step taken must be the step returned. */
static double locate_event(Engine *e, int ci, double h, double *y_trial) {
    const EngineContact *c = &e->contacts[ci];
    double a = 0.0, fa = event_value(e, c, e->y);
    double b = h, fb;
    rk4_step(e, e->data.t, e->y, b, y_trial);
    fb = event_value(e, c, y_trial);
    double y_trial_at = b;
    int side = 0;
    /* Illinois converges superlinearly; 16 iterations to 1e-10 of the step are plenty, and each
     * iteration is a full RK4 step of every body, so the cap matters in crowded scenes. */
    for (int iter = 0; iter < 16 && fabs(b - a) > 1e-10 * h; iter++) {
        double m = (a * fb - b * fa) / (fb - fa);
        if (!(m > a && m < b))
            m = 0.5 * (a + b);
        rk4_step(e, e->data.t, e->y, m, y_trial);
        y_trial_at = m;
        double fm = event_value(e, c, y_trial);
        if (fm == 0.0) { /* on the crossing: the step ends here, where y_trial is */
            b = m;
            break;
        }
        if (fm > 0.0) {
            b = m;
            fb = fm;
            if (side == -1)
                fa *= 0.5;
            side = -1;
        } else {
            a = m;
            fa = fm;
            if (side == 1)
                fb *= 0.5;
            side = 1;
        }
    }
    /* The last trial may have been an a side iterate (the event not yet happened there), or
     * the cap cut the search short: the state is re-stepped to b, so the step taken is the step
     * returned. An iterate exactly on the crossing (fm = 0) ends the step there, at m: else an
     * active manifold contact at depth +0 would end the search a round-off into the step while
     * b stays the whole step, and the bodies would stand still for a step while friction
     * springs stretch (tests/test_rk4_event_clock.c; docs/performance.md, "Friction in the
     * penalty pile"). */
    if (y_trial_at != b)
        rk4_step(e, e->data.t, e->y, b, y_trial);
    return b;
}

/* Above this many contact candidates, events are handled at step ends, not located. */
#define RK4_LOCATE_MAX_CONTACTS 64

/* Zeroed per-contact direction buffer, grown with the contacts. */
static int *event_directions(Engine *e) {
    if (e->integration.event_dirs_capacity < e->contact_count) {
        int cap = issim_array_grown_capacity(e->integration.event_dirs_capacity, e->contact_count);
        if (!ISSIM_ARRAY_RESIZE(e->integration.event_dirs, cap))
            return NULL;
        memset(e->integration.event_dirs, 0, sizeof(int) * (size_t)cap);
        e->integration.event_dirs_capacity = cap;
    }
    return e->integration.event_dirs;
}

/* Did the fixed step the active contacts ask for change from `in_use` (events, commits)? */
static bool fixed_step_changed(Engine *e, double in_use) {
    if (e->integration.fixed_step_dirty)
        engine_update_fixed_step(e);
    return e->data.fixed_step != in_use;
}

/* The step to the next point of the fixed-step grid (an output instant may have cut the last
 * step short), or `step` when not on the models' fixed step. */
static double grid_step(const Engine *e, double step) {
    if (!(e->data.fixed_step > 0.0) || step != e->data.fixed_step)
        return step;
    double k = floor((e->data.t - e->data.fixed_anchor) / step + 1e-9);
    double next = e->data.fixed_anchor + (k + 1.0) * step;
    if (next - e->data.t < 1e-9 * step)
        next += step;
    return next - e->data.t;
}

IssimStatus integrator_rk4_advance(Engine *e, double t_target, double step,
                                   bool until_no_fixed_step, IssimError *err) {
    double fixed_in_use = e->data.fixed_step;
    (void)until_no_fixed_step; /* a change either way hands back to the stage */
    double *y_next = e->integration.y_next;
    if (e->integration.dirty) {
        engine_normalize_state(e, e->y);
        e->integration.dirty = false;
    }
    /* The sleeping blocks of y_next must hold the frozen state: the event tests read all of it. */
    memcpy(y_next, e->y, sizeof(double) * (size_t)e->model.layout.state_size);
    while (e->data.t < t_target) {
        if (e->model.options.should_stop &&
            e->model.options.should_stop(e->model.options.should_stop_user))
            return issim_error_set(err, ISSIM_ERR_CANCELLED, "stopped at t = %.9g s on request",
                                   e->data.t);
        if (e->sleep.dirty)
            engine_refresh_awake(e);
        if (e->sleep.awake_state_size == 0) { /* all asleep in this step: nothing to integrate */
            e->data.t = t_target;
            break;
        }
        double h = fmin(grid_step(e, step), t_target - e->data.t);
        /* A remainder within rounding of t is taken now: left for later it becomes a step of one
         * ulp of t after every output instant. */
        if (t_target - (e->data.t + h) < 1e-12 * step + 16.0 * DBL_EPSILON * fabs(t_target))
            h = t_target - e->data.t;
        rk4_step(e, e->data.t, e->y, h, y_next);
        double value = 0.0;
        int ci = first_event(e, y_next, &value);
        if (ci >= 0 && e->contact_count <= RK4_LOCATE_MAX_CONTACTS) {
            h = locate_event(e, ci, h, y_next);
        } else if (ci >= 0) {
            /* Crowded scenes (piles): each located event costs a dozen full RK4 steps of every
             * body, so the active set changes at the end of the step instead, the way fixed-
             * step penalty methods do it; the error per event is O(step). */
            ci = -2;
        }
        FOR_AWAKE(e, i) {
            if (!isfinite(y_next[i]))
                return issim_error_set(err, ISSIM_ERR_NUMERIC,
                                       "RK4 step of %g s diverged at t = %.9g s: the step is "
                                       "too coarse for the contact stiffness",
                                       h, e->data.t);
            e->y[i] = y_next[i];
        }
        e->data.t = (h == t_target - e->data.t) ? t_target : e->data.t + h;
        e->stats.steps++;
        if (ci == -2) {
            e->stats.root_events++;
            engine_update_active_set(e, e->data.t, NULL);
            engine_normalize_state(e, e->y);
        } else if (ci >= 0) {
            /* The located event, and any other contact whose crossing happened earlier in the
             * step than the located one (the proxy picked the deepest, not the earliest): all
             * are brought in line with their depth here, none is lost. */
            e->stats.root_events++;
            int *dirs = event_directions(e);
            if (dirs) {
                dirs[ci] = e->contacts[ci].active ? -1 : 1;
                engine_update_active_set(e, e->data.t, dirs);
                dirs[ci] = 0;
            } else {
                engine_update_active_set(e, e->data.t, NULL);
            }
            engine_normalize_state(e, e->y);
        }
        /* Every accepted step commits, an event step too: the friction spring's anchor
         * (000 eq. 5.22) advances over the step it was integrated across, so the elastic
         * energy it stores is counted where the work into it was done. Skipped at events, a
         * crowded pile's landing (an event at most step ends) carried the springs over several
         * steps and their energy appeared at once at the next plain step, a jump in the energy
         * balance (docs/performance.md, issue 11). */
        engine_commit_contacts(e, e->data.t);
        if (e->model.options.on_step)
            e->model.options.on_step(e, e->model.options.on_step_user);
        if (e->data.t < t_target && fixed_step_changed(e, fixed_in_use))
            break; /* the stage picks the integrator for the new active set */
    }
    return ISSIM_OK;
}
