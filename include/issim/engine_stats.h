/* issim engine statistics: counters and timings of a run (steps, events, sleeps, restores,
 * complementarity solves, stage times, collision reports), for the headless summary, the GUI's
 * status, the registry's ENGINE_STATS slot, benchmarks and tests. Apart from engine.h because
 * most of the engine's users never read them. Thread: as engine.h (the thread that runs the
 * engine); the registry slot is how other threads see them. */
#ifndef ISSIM_ENGINE_STATS_H
#define ISSIM_ENGINE_STATS_H

#include <stdint.h>

#include "issim/engine.h"

typedef struct EngineStats {
    uint64_t steps; /* integrator steps (CVODE internal or RK4) */
    uint64_t rhs_evals;
    uint64_t root_events;
    uint64_t reinits;
    uint64_t warnings;
    int awake_bodies;     /* bodies not asleep: integrated, time-stepped or in a pair */
    uint64_t sleeps;      /* ENGINE_EVENT_SLEEP so far */
    uint64_t wakes;       /* ENGINE_EVENT_WAKE so far */
    double sleep_energy;  /* J: kinetic energy removed by putting bodies to sleep (each was slower
                             than its tolerance), so far */
    uint64_t fixed_steps; /* RK4 steps taken because an active contact asked for them */
    uint64_t checkpoints; /* key checkpoints written (the whole state) */
    uint64_t replayed_frames;  /* output steps replayed by restores between keys */
    uint64_t restores;         /* restores from a checkpoint (exact) */
    uint64_t restarts;         /* restores without one (contact histories restarted) */
    uint64_t state_pool_grows; /* the contact-state pool grew (at an onset) */
    uint64_t scratch_grows;    /* the per-step scratch took memory (a larger island than before) */
    uint64_t complementarity_steps; /* time steps of complementarity islands */
    /* of which solved on the RESOLVE stage's pool, beside other islands (issue 33) */
    uint64_t complementarity_parallel_islands;
    /* J, so far: kinetic energy the contact energy ledger took out of the bodies' relative motion
     * so that contacts found overlapping begin at their geometric depth, and elastic energy it let
     * collision updates add while depth offsets healed (docs/contact-models.md). */
    double onset_brake_energy, offset_heal_energy;
    uint64_t complementarity_failures; /* solves the solver reported as failed */
    /* Velocity passes solved by an iterative (sparse) solver, their iterations (PGS sweeps), and
     * the largest residual one ended with during the last advance (the solver's own measure:
     * m/s for PGS; 0 when none ran). */
    uint64_t complementarity_iterative_solves, complementarity_sweeps;
    double complementarity_residual;
    /* of the iterative solves, those whose sweeps ran on the RESOLVE pool's threads (a large
     * island on several threads: engine_pgs.c) */
    uint64_t complementarity_team_solves;
    uint64_t reduced_entries, reduced_exits; /* pairs that entered / left reduced form */
    int islands;                             /* islands of awake bodies at the last advance */
    int islands_by_resolver[CONTACT_RESOLVER_COUNT];
    double stage_seconds[ENGINE_STAGE_COUNT]; /* wall time per stage (profile_stages) */
    /* The collision manager thread's reports (interactive runs): merged, waited for (the
     * newest merged one was too far behind), and stale (the wait gave up). */
    uint64_t collision_reports_used, collision_report_waits, collision_reports_stale;
    /* Reports merged through the collision pipeline (EngineOptions.pipeline_collision). */
    uint64_t collision_pipeline_reports;
} EngineStats;

EngineStats engine_stats(const Engine *engine);

#endif
