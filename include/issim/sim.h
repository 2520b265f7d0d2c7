/* issim sim: a simulation session, the one code path the CLI, the tests and (later) the GUI
 * share. It loads a scene, applies --set overrides, builds the engine and the registry, and
 * runs either headless (as fast as possible to a given time, deterministic) or interactive
 * (an engine thread running ahead of the wall clock by a bounded horizon, resetting to the
 * display time on every edit).
 *
 * Threading: sim_create/sim_run_headless/sim_destroy on one thread. In interactive mode the
 * session owns the engine thread; other threads talk to it only through sim_registry()
 * (snapshots, edit queue, transport slot) and sim_display_time().
 */
#ifndef ISSIM_SIM_H
#define ISSIM_SIM_H

#include <stdio.h>

#include "issim/core.h"
#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/registry.h"
#include "issim/thing.h"

typedef struct SimOptions {
    double until;            /* headless: end time, s (default 2) */
    double dt;               /* <= 0: the scene's universe.dt */
    int integrator;          /* IntegratorKind, or -1: the scene's */
    const char *record_path; /* Nullable: no recording */
    const char *vars;        /* Nullable: comma-separated variables; default universe.record, or
                                every variable when that is empty */
    int every;               /* record every Nth output step (>= 1) */
    bool lockstep;           /* deterministic single-thread stepping (bit-identical runs) */
    const char *const *sets; /* "path=value" overrides applied after loading */
    int set_count;
    const char *const *params; /* "name=value" scene parameters (param() in the scene) */
    int param_count;
    const char *command_line; /* Nullable: written into the recording's metadata */
    bool quiet;               /* no progress on stderr */
    /* Bytes building the engine may still take; 0: what the machine has available (and
     * ulimit -v leaves). A scene whose estimate is larger is refused before the build. */
    double memory_limit;
    /* Threads of the engine's stages (EngineOptions.threads): 0, engine_threads_auto
     * (engine_diagnostics.h; both cores for scenes of ENGINE_PARALLEL_MIN_BODIES bodies or more
     * while a core is free); 1, the serial path. */
    int threads;
    /* EngineOptions.pipeline_collision: the collision world a step ahead on its own thread
     * (headless and lock-step runs; the GUI's threaded manager overlaps already). */
    bool pipeline_collision;
} SimOptions;

SimOptions sim_options_default(void);

/* One impact of a body: from the first of its contacts beginning to the last one ending. Against
 * an obstacle the normal is the obstacle's; against another body (body_b >= 0) it is the normal
 * of the contact that began the impact, and the velocities are body's relative to body_b's. */
typedef struct SimImpact {
    int body;
    int body_b; /* the other body of a two-body impact, or -1 */
    double t_begin, t_end;
    double v_in;        /* centre-of-mass (relative) normal velocity at onset (< 0), m/s */
    double v_out;       /* at separation (> 0), m/s */
    double restitution; /* -v_out / v_in */
    double apex;        /* height of the centre of mass along the contact normal at the top of the
                           ballistic flight that follows this impact, m (NaN without gravity and
                           for a two-body impact) */
    int contacts;       /* most simultaneous contacts during the impact */
} SimImpact;

#define SIM_MAX_IMPACTS 256

typedef struct SimSummary {
    double t_end;
    uint64_t output_steps; /* the engine's time steps: one per output step */
    /* ENGINE_EVENT_CONTACT_BEGIN and _END seen, whatever resolved them (the engine's root_events
     * count only the integrator's located crossings: none for a complementarity island). */
    uint64_t contact_onsets, contact_ends;
    EngineStats engine;
    double wall_seconds;
    double drop_height; /* starting height of the first body along the first obstacle normal */
    int impact_count;
    SimImpact impacts[SIM_MAX_IMPACTS];
    uint64_t rows_recorded;
    bool recording_failed;
    char recording_error[512];
    uint64_t state_hash; /* FNV-1a of every published frame: equal runs give equal hashes */
} SimSummary;

typedef struct Sim Sim;

/* Loads scene_path and applies options->sets; builds everything. Errors name the file and
 * line, or the --set path. */
Sim *sim_create(const char *scene_path, const SimOptions *options, IssimError *err);
/* Same from an already loaded database (copied). */
Sim *sim_create_from_db(const ThingDb *db, const char *scene_path, const SimOptions *options,
                        IssimError *err);
void sim_destroy(Sim *sim);

/* Runs to options->until, recording as asked. A recording failure is reported in the summary
 * and on stderr; the simulation carries on. A numerical failure stops the run with the last
 * good state kept and returns ISSIM_ERR_NUMERIC. */
IssimStatus sim_run_headless(Sim *sim, SimSummary *summary, IssimError *err);

/* ===== Headless runs in pieces (the Python module: python/) =====
 * sim_run_headless is sim_headless_begin, sim_headless_advance(options.until) and
 * sim_headless_end; a caller that reads or edits the state between advances calls them itself.
 * The output instants are t0 + k dt (t0: the time at begin) however the advances are cut, so a
 * run in pieces publishes the frames of the run made at once (an advance ending between two
 * instants stops there; the next resumes on them). The summary fills in until end and must
 * live until then. Thread: the creator's. */
IssimStatus sim_headless_begin(Sim *sim, SimSummary *summary, IssimError *err);
/* Advances to `until` (>= now; nothing happens at or before now). A numerical failure stops
 * with the last good state, ISSIM_ERR_NUMERIC. */
IssimStatus sim_headless_advance(Sim *sim, double until, IssimError *err);
/* Advances n output steps, to the n-th output instant after the last one reached. */
IssimStatus sim_headless_step(Sim *sim, uint64_t n, IssimError *err);
/* A property edit now, validated as the GUI's (a property fixed during a run is refused): on
 * failure nothing changes and err holds the reason the GUI shows. An accepted edit is noted in
 * an HDF5 recording and replaces the frame published now. */
IssimStatus sim_headless_edit(Sim *sim, const char *path, const char *value, IssimError *err);
/* Records from now (the current frame is the first row) to path, as --record, --vars (NULL:
 * universe.record, else everything) and --every; an open recording is closed first. path and
 * vars are Borrowed until sim_headless_record_end or sim_headless_end. */
IssimStatus sim_headless_record(Sim *sim, const char *path, const char *vars, int every,
                                IssimError *err);
/* Closes the recording (the summary's rows_recorded, recording_failed); ISSIM_OK without one. */
IssimStatus sim_headless_record_end(Sim *sim, IssimError *err);
/* Closes any recording and completes the summary. err is Nullable. */
IssimStatus sim_headless_end(Sim *sim, IssimError *err);
/* The newest published frame: engine_var_count values in engine order (engine.h:
 * ENGINE_FRAME_BODY_VALUES per body, engine_frame_body, then the energies). Borrowed; rewritten in
 * place by every advance and edit. */
const double *sim_values(const Sim *sim);

/* Prints the summary a user reads after `issim run --headless`: impacts with restitution,
 * contact durations and apex heights. */
void sim_print_summary(const Sim *sim, const SimSummary *summary, FILE *out);

Registry *sim_registry(Sim *sim);
/* Borrowed. Thread: the caller of sim_run_headless, or (interactive) nobody but the engine
 * thread while it runs. */
Engine *sim_engine(Sim *sim);

/* ===== Interactive mode ===== */

/* Starts the engine thread: it keeps the engine between the display time and display time +
 * universe.horizon, publishes frames to the registry (below), and applies edits from the
 * registry's queue by resetting to the display time. */
IssimStatus sim_start(Sim *sim, IssimError *err);
/* Stops and joins the engine thread. Idempotent. */
void sim_stop(Sim *sim);
/* Simulated time shown now: (wall time since start) x speed, frozen while paused.
 * Thread: any. */
double sim_display_time(const Sim *sim);
/* Transport. Thread: any (one controller at a time). */
void sim_set_paused(Sim *sim, bool paused);
void sim_set_speed(Sim *sim, double speed);
bool sim_paused(const Sim *sim);
double sim_speed(const Sim *sim);
/* Moves the display clock to t (paused or not): the GUI's single step (t = display time + dt)
 * and its history scrubber. Frames already computed stay valid (the trajectory from t is the
 * one shown before); the next edit, drag or sim_request_reset resets the engine to the new
 * display time, which is how a user resumes from a past instant (rewind). t before the
 * registry's history start is clamped to it. Thread: any (one controller at a time). */
void sim_seek(Sim *sim, double t);
/* Frames (issue 33 item 3). The engine thread steps on the output grid t0 + n dt (t0: the
 * engine's time at the first sim_start, as a headless run's) and publishes a frame (values,
 * checkpoint, registry) at the output steps its readers need, not at every one: every step
 * while slow motion, "pause at next contact" or kept steps are on, or a haptic proxy is coupled;
 * else every k-th, k dt the largest multiple of dt within SIM_FRAME_SPACING_MAX and within what
 * the display draws at the speed factor (speed / SIM_DISPLAY_FRAME_RATE); besides, every
 * `every`-th output step while a recorder asks for them (sim_record_from), every step to the
 * horizon after the instant shown when the clock is paused (the engine goes back to the frame
 * shown and computes them again if they were not frames: the GUI's single step), the state
 * where the engine stops (its horizon, a stop request) and the state after every reset. The physics
 * is the same whatever is published: the contact peaks and impulses of a frame cover every output
 * step since the frame before, and a rewind goes back to a frame exactly (each frame after
 * unpublished steps is a checkpoint key). */
#define SIM_FRAME_SPACING_MAX 1e-3 /* s of simulated time */
#define SIM_DISPLAY_FRAME_RATE 120.0
/* The output step of frame time t: n for t0 + n dt. Thread: any. */
int64_t sim_output_step(const Sim *sim, double t);
/* A recorder (the GUI's CSV) wants every `every`-th output step as a frame from the frame at t
 * on (at or before the display time: the one shown): the engine rewinds to that frame and
 * computes its future again, publishing them. every 0: nobody records (t ignored, no rewind).
 * Thread: any (one controller at a time). */
void sim_record_from(Sim *sim, double t, int every);
/* True when frame time t is an output step the recorder asked for (sim_record_from; false when
 * nobody records): the frames published for the display between them are not rows. Thread:
 * any. */
bool sim_frame_is_recorded(const Sim *sim, double t);
/* Asks the engine thread to reset to the display time at its next loop: the frames after it
 * are discarded and integrated again from that instant (the GUI's "resume from here" after
 * scrubbing back: a rewind, not a replay of the old future). Thread: any. */
void sim_request_reset(Sim *sim);
/* ===== Time around impacts (sim_playback.c) =====
 * The display clock runs at the speed factor, and at `slow_rate` simulated seconds per wall
 * second (when slower) within `window` seconds before and after each impact the engine found:
 * a contact beginning at over SIM_IMPACT_MIN_SPEED, onsets within SIM_IMPACT_MERGE of the one
 * before counting as one impact. While slow motion or "pause at next contact" is on, the clock
 * stays `window` behind the newest computed frame (the engine runs that far ahead besides its
 * horizon), so no impact is found after the display has passed its window. sim_create takes the
 * speed and slow motion from universe.playback_speed, slow_motion and slow_motion_window. */
#define SIM_IMPACT_MIN_SPEED 0.01 /* m/s of approach */
#define SIM_IMPACT_MERGE 1e-4     /* s */

typedef struct SimClockRates {
    double speed;     /* simulated s per wall s outside the windows (> 0) */
    double slow_rate; /* within a window, when below speed; 0: no slow motion */
    double window;    /* s before and after each impact */
} SimClockRates;

/* The display clock's law, pure: the simulated time `wall` wall seconds after t, with impacts
 * (sorted) at the given instants; it stops at `stop` when it reaches it (*stopped true; NaN: no
 * stop) and at `limit` (no flag; +INFINITY: none; never behind t). */
double sim_clock_advance(const SimClockRates *rates, const double *impacts, int impact_count,
                         double t, double wall, double stop, double limit, bool *stopped);
/* slow_rate 0 switches slow motion off; invalid values are ignored. Thread: any. */
void sim_set_slow_motion(Sim *sim, double slow_rate, double window);
void sim_slow_motion(const Sim *sim, double *slow_rate, double *window);
/* Armed: the clock stops and pauses at the next impact after the display time, and disarms.
 * Thread: any. */
void sim_set_pause_at_contact(Sim *sim, bool armed);
bool sim_pause_at_contact(const Sim *sim);
/* The clock stops and pauses when it reaches t (NaN: no hold): a branch's edit waits there
 * (the GUI's "apply at its original instant"). Cleared when reached. Thread: any. */
void sim_set_hold(Sim *sim, double t);
double sim_hold(const Sim *sim);
/* Times the clock stopped by itself (an impact or a hold) since sim_create. Thread: any. */
uint64_t sim_clock_stops(const Sim *sim);
/* The display time and the wall time (issim_wall_time) it was computed for: a test compares
 * the simulated time advanced between two reads with the wall time between them. */
double sim_display_clock(const Sim *sim, double *wall);
/* The impacts found in [t0, t1], sorted, up to max into out; returns how many there are.
 * Thread: any. */
int sim_impacts_between(const Sim *sim, double t0, double t1, double *out, int max);

/* While slow motion (or a stop at the next impact) is on, the engine thread also keeps its state
 * after every integrator step with up to SIM_FINE_CONTACTS of its contact reports (up to
 * SIM_FINE_BUDGET_BYTES, the newest; a rewind drops those after it): an output step of 1 ms holds
 * a 0.3 ms impact whole, and the display shows these states, their contact points and forces,
 * between frames. The newest kept at or before t and after `after` (the frame shown) into values
 * (engine_var_count: the frame's first values), its time into *t_out and its contacts into
 * contacts (up to max; *contact_count: how many); false when there is none. Thread: any. */
#define SIM_FINE_BUDGET_BYTES ((size_t)16 * 1024 * 1024)
#define SIM_FINE_CONTACTS 16
bool sim_fine_state(const Sim *sim, double after, double t, double *values, double *t_out,
                    ContactReport *contacts, int max, int *contact_count);
/* The steps' states are kept also without slow motion (a slow-motion video). Thread: any. */
void sim_set_keep_steps(Sim *sim, bool keep);
/* Slow motion is on or sim_set_keep_steps asked: sim_fine_state has states. Thread: any. */
bool sim_keeps_steps(const Sim *sim);

/* Contact reports an interactive run publishes per frame at most (the registry's max_contacts);
 * the others are counted (SimEngineStats.contacts_dropped). Thread: any. */
int sim_contact_capacity(const Sim *sim);
/* The engine's output interval, s (fixed for the session). Thread: any. */
double sim_dt(const Sim *sim);

/* ===== Registry slots the session defines (sim_slots.c) =====
 * A slot is a vector of doubles in the registry (registry.h); these structs are its typed form.
 * The writer packs, readers unpack: nothing else knows where a field sits in the vector. */

/* REGISTRY_SLOT_ENGINE_STATS: what the interactive engine thread publishes with every frame
 * (t = wall time) for the GUI's status bar and universe panel. Writer: the engine thread
 * (sim_thread.c); readers: any thread. */
typedef struct SimEngineStats {
    uint64_t steps;         /* integrator steps since start, plus complementarity island steps
                               (one per island per time step) */
    double step_time_us;    /* mean wall time of a step over the last publication, us */
    double sim_time;        /* engine (state) time, s */
    double realtime_factor; /* output interval over the wall time of its step */
    uint64_t resets;        /* resets caused by edits */
    uint64_t warnings;
    int active_contacts;
    int awake_bodies; /* bodies being integrated (the others sleep, 004 App. E) */
    int bodies;
    int contact_reports;       /* contacts at the frame, published or not */
    int contacts_published;    /* of them, in the frame's contact reports */
    uint64_t contacts_dropped; /* reports left out of frames since the thread started */
} SimEngineStats;

void sim_engine_stats_pack(const SimEngineStats *stats, RegistrySlot *slot);
/* Zeroes for a slot never written (slot->count 0). */
SimEngineStats sim_engine_stats_unpack(const RegistrySlot *slot);
/* Packs and writes the ENGINE_STATS slot at wall time t. Thread: the engine thread. */
void sim_engine_stats_write(Registry *reg, double t, const SimEngineStats *stats);

/* REGISTRY_SLOT_POINTER: the pointer drag. Writer: the display (app_input.c); reader: the engine
 * thread (sim_thread.c).
 * While `dragging`, the engine thread pulls the point `anchor` (body frame) of `body` toward
 * `target` (world) with a spring and a damper on the anchor's velocity:
 * F = k (target - anchor_world) - c v_anchor, applied as a transient wrench
 * (engine_set_applied_wrench). The body is a packed EngineBodyId the display took from the
 * session's engine before its thread started; the engine thread checks it (engine_body_check)
 * and ignores a drag of a body it did not issue, with a warning. Every new write resets the
 * engine to the display time, so the perturbation acts on the state the user sees, not on the
 * speculative future. With hold_omega > 0 the drag is a grasp: the body is also held at the
 * attitude it had when the drag took it, by a critically damped attitude spring of that angular
 * frequency for the body's own inertia, tau = I (omega^2 theta - 2 omega w), theta the rotation
 * back to the grasped attitude, as a hand holds a bolt upright while pushing it. */
typedef struct SimPointer {
    bool dragging;
    uint64_t body;     /* the dragged body, engine_body_id_pack; 0 when none (an id word) */
    Vec3 anchor;       /* body frame, m */
    Vec3 target;       /* world, m */
    double stiffness;  /* N/m */
    double damping;    /* N s/m */
    double hold_omega; /* rad/s; 0: no attitude hold */
} SimPointer;

void sim_pointer_pack(const SimPointer *pointer, RegistrySlot *slot);
SimPointer sim_pointer_unpack(const RegistrySlot *slot);
/* Packs and writes the POINTER slot at time t. Thread: the display (the slot's one writer). */
void sim_pointer_write(Registry *reg, double t, const SimPointer *pointer);

#endif
