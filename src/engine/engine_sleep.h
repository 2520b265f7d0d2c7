/* The SLEEP stage's context (engine_sleep.c): equilibrium and sleeping, 004 4.8.5 and App. E.
 * Written and read by the thread that runs the engine; other stages read the awake lists. */
#ifndef ISSIM_ENGINE_SLEEP_H
#define ISSIM_ENGINE_SLEEP_H

#include <stdbool.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/thing.h"

typedef struct EngineContact EngineContact;

/* awake_bodies lists the integrated bodies; live_contacts the contacts that touch an awake body
 * (the only ones whose depth or force can change); awake_ranges the state-vector spans of the
 * awake blocks, merged, as (offset, size) pairs. Rebuilt by engine_refresh_awake whenever
 * `dirty` is set (engine_invalidate's ENGINE_INVALID_SLEEP). */
typedef struct EngineSleep {
    double speed;       /* EngineOptions.sleep_speed */
    bool disabled;      /* EngineOptions.sleep_disabled */
    SleepPolicy policy; /* universe "sleep" (live) */
    bool dirty;
    int awake_count;
    int *awake_bodies;
    int live_contact_count; /* live_contacts has room for contact_capacity */
    int *live_contacts;
    int awake_range_count;
    int *awake_ranges;
    int awake_state_size; /* sum of the awake ranges */
    int *scratch;         /* 3 * (body_count + 1): union-find, verdicts / wakers, wake stack */
    Vec3 *load_acc;       /* 2 * body_count: accelerations of the App. C load solve */
    double *speeds;       /* body_count: speed under which each body counts as still */
} EngineSleep;

/* engine_sleep.c: equilibrium and sleeping (004 4.8.5, App. E) */
IssimStatus engine_sleep_init(Engine *e, IssimError *err);
void engine_sleep_free(Engine *e);
/* Rebuilds the awake lists and ranges if sleep.dirty (and the live contacts always: the
 * contact array changes with every collision update). */
void engine_refresh_awake(Engine *e);
/* After the commit of an accepted step: puts to sleep every island of awake bodies that is in
 * equilibrium, and wakes sleeping bodies an awake one touches. */
void engine_update_sleep(Engine *e, double t);
/* After the RESOLVE stage's accepted steps: wakes sleeping bodies a moving body touches and puts
 * to sleep every time-stepped island whose bodies have all been still for ENGINE_SETTLE_TIME. */
void engine_update_stepped_sleep(Engine *e, double t);
/* Wakes a body; by: the moving body that woke it, or -1 for an edit or a reset, which also wakes
 * the bodies on its equilibrium list. */
void engine_wake_body(Engine *e, int body, int by, double t);
/* A contact that begins between a sleeping and an awake body wakes the sleeping one if they
 * approach faster than the contact's velocity tolerance (an interactive collision, App. E.3.1);
 * a resting touch does not. */
void engine_wake_on_contact(Engine *e, const EngineContact *c, const ContactKinematics *k,
                            double t);
void engine_wake_all(Engine *e, double t);
/* One projected Gauss-Seidel sweep (warm-started) of 004 App. C's lambda* = the normal forces
 * that hold every live active manifold contact still under the external loads; the result is
 * each contact's `load`, which internal friction's equilibrium test compares with its
 * compression and restitution forces. */
void engine_equilibrium_loads(Engine *e);
/* A contact whose bodies are all asleep (or asleep and fixed) cannot change. */
bool engine_contact_frozen(const Engine *e, const EngineContact *c);
/* Does the contact's model report equilibrium (ContactModelClass.tests_equilibrium)? */
bool engine_contact_tests_equilibrium(const Engine *e, const EngineContact *c);

/* The rate (m/s) at which a model's restitution and compression forces are read for the App. C
 * band, and the time (s) a shaped body must stay a sleep candidate before it sleeps. */
#define ENGINE_BAND_RATE 1e-9
/* The same for a law whose phase switch is a ramp (phase_ramp_time): a rate far above any
 * ramp's width, where the forces are the band's limits. */
#define ENGINE_RAMP_BAND_RATE 1e6
#define ENGINE_SETTLE_TIME 0.02
/* The speed (m/s, linear plus angular times reach) under which a time-stepped body, or one on
 * force laws without an equilibrium test, counts as still unless EngineOptions.sleep_speed says: a
 * settled PGS pile trembles at under 1e-4 m/s (issue 15's pile with friction: 7e-5 at most), a body
 * sliding or rolling on moves at cm/s. */
#define ENGINE_STEPPED_SLEEP_SPEED 1e-3

#endif
