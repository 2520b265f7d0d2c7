/* Private session state shared by sim.c (headless) and sim_thread.c (interactive). */
#ifndef ISSIM_SIM_INTERNAL_H
#define ISSIM_SIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "issim/io.h"
#include "issim/sim.h"

#define SIM_MAX_BODIES 256
#define SIM_HISTORY_BUDGET_BYTES (32.0 * 1024 * 1024)
/* Checkpoints of contact state for rewinds (engine_enable_checkpoints): the newest frames that
 * fit; a rewind further back restarts contact histories. */
#define SIM_CHECKPOINT_BUDGET_BYTES ((size_t)128 * 1024 * 1024)
/* What the engine adds per body beyond its copy of the scene's things (state, collision shapes,
 * contacts' share), for the estimate before a build; measured with 1e4-2e4 spheres. */
#define SIM_ENGINE_BYTES_PER_BODY 4096.0
/* Below this database size (about 2,000 bodies) no machine issim runs on is short of memory for
 * the build: the estimate is not made. */
#define SIM_SMALL_SCENE_BYTES ((size_t)64 * 1024 * 1024)

typedef struct SimBodyTrack {
    int active_contacts;
    int impact; /* index into summary->impacts, or -1 */
    Vec3 normal;
} SimBodyTrack;

/* The contact quantities' peaks and impulses per output step (sim_contacts.c). */
typedef struct SimContacts {
    int var0;       /* the first of the session's 2 * quantities variables (peak, impulse) */
    int quantities; /* summed force, largest force, then one per contact-map body */
    uint64_t *body; /* [quantities]: the packed body id of a body's quantity */
    /* [quantities] each, one allocation: now, old and prev hold the force laws' forces,
     * stepped the time-stepped ones (ContactReport.stepped) */
    double *now, *old, *stepped, *peak, *impulse, *prev;
    uint32_t *ids, *ids_prev; /* contact ids now and at the last sample, sorted */
    int ids_room, ids_prev_count;
    double t_prev;
    bool have_prev;
} SimContacts;

/* Impact bookkeeping (sim_playback.c). Engine thread: an event of the interactive run; the
 * impacts after t dropped (a rewind to t). */
void sim_impacts_note(Sim *sim, const EngineEvent *ev);
void sim_impacts_rewind(Sim *sim, double t);
/* Engine thread, after each accepted integrator step: its state, while slow motion is on. */
void sim_fine_note(Sim *sim, const ContactReport *reports, int n);
/* How far beyond its horizon the engine runs for the clock (the slow-motion window). Thread:
 * any. */
double sim_clock_lead(const Sim *sim);
/* sim_create: the scene's playback settings (universe.playback_speed, slow_motion, ...). */
void sim_playback_from_scene(Sim *sim);

/* Variables the session adds after the engine's (2 per quantity). */
int sim_contacts_var_count(const Engine *e);
IssimStatus sim_contacts_declare(Sim *sim, IssimError *err);
void sim_contacts_free(SimContacts *c);
/* The next sample begins a step (a reset changed the state under the last one). */
void sim_contacts_restart(Sim *sim);
/* The contacts at engine time t (reports: all of them). */
void sim_contacts_sample(Sim *sim, double t, const ContactReport *reports, int n);
/* The step's peaks and impulses into a frame's values; the next step begins. */
void sim_contacts_write(Sim *sim, double *values);

/* A headless run (sim_headless_*): its recording, output instants grid_t0 + k dt (grid_k: the
 * last one reached), progress clock, summary and body tracks. Only the caller's thread. */
typedef struct SimHeadless {
    int *record_vars;
    double *record_row; /* var_count + 1: one recorded row */
    int record_count;
    SimSummary *summary; /* non-null during a headless run */
    /* A headless run (sim_headless_*): its recording, output instants grid_t0 + k dt (grid_k:
     * the last one reached) and progress clock. */
    Recorder *recorder;
    double grid_t0;
    uint64_t grid_k;
    double wall_start, last_progress;
    SimBodyTrack tracks[SIM_MAX_BODIES];
} SimHeadless;

/* The interactive thread's contact reports (sim_thread.c): as many as the registry takes, the
 * rest counted so the GUI can say how many it does not show. Engine thread only. */
typedef struct SimReports {
    /* The interactive thread's contact reports (sim_thread.c): as many as the registry takes,
     * the rest counted so the GUI can say how many it does not show. */
    ContactReport *reports; /* report_room places, grown by the engine thread */
    int report_room, report_capacity;
    uint64_t reports_dropped;
} SimReports;

/* Display clock, shared by the display/controller and the engine thread: guarded by mutex
 * (never taken by the servo, which reads only the registry). Every read advances the origin to
 * the wall time of the read (sim_playback.c): the rate depends on impacts found meanwhile, so the
 * clock is integrated, never recomputed from its start. */
typedef struct SimClock {
    pthread_mutex_t clock_mutex;
    double clock_wall_origin, clock_sim_origin, speed;
    double slow_rate, slow_window; /* sim_set_slow_motion */
    double hold_at;                /* sim_set_hold; NaN: none */
    bool pause_at_contact;         /* sim_set_pause_at_contact */
    uint64_t clock_stops;          /* sim_clock_stops */
    bool paused;
    bool keep_steps; /* sim_set_keep_steps (clock_mutex) */
} SimClock;

/* Impact instants of the interactive run, sorted: the engine thread appends (its event
 * callback) and drops those after a rewind; the clock and the GUI read. And the states at the
 * integrator's steps between output steps while slow motion is on (sim_fine_state): a ring of
 * `fine_room` rows, each t then engine_var_count values, oldest at fine_head; the engine thread
 * writes (sim_fine_note, rewinds), the display reads. Both guarded by impacts_mutex, taken after
 * the clock's mutex when both are held. fine_on: slow motion is on (set by the clock's
 * controller). */
typedef struct SimImpacts {
    pthread_mutex_t impacts_mutex;
    double *impacts;
    int impact_count, impact_room;
    double *fine;
    ContactReport *fine_contacts; /* SIM_FINE_CONTACTS a row */
    int *fine_contact_count;      /* a row's */
    int fine_stride, fine_room, fine_head, fine_count;
    atomic_bool fine_on;
} SimImpacts;

struct Sim {
    SimOptions options;
    char scene_path[512];
    Engine *engine;
    int history_frames; /* the registry's ring: checkpoints cover the same frames (budget
                           permitting) */
    Registry *registry;
    double *values; /* engine_var_count: the frame being published */
    SimContacts contacts;

    double dt; /* engine_dt, cached at creation: readable from any thread */

    /* Publication paced to its readers (sim_thread.c, issue 33 item 3). step_t0: the instant
     * output steps are counted from (the engine's time at the first sim_start; set before the
     * thread starts, then read only). record_every: a recorder wants every Nth output step as
     * a frame (0: nobody records); record_from: the frame a recorder starts at, which the
     * engine rewinds to when record_rewind is set (any thread writes them, the engine thread
     * reads and clears record_rewind). feed: the collision manager's poses, every output step,
     * whether or not a frame is published (the engine thread writes, the manager reads). */
    double step_t0;
    bool step_t0_set;
    atomic_int record_every;
    _Atomic double record_from;
    atomic_bool record_rewind;
    Registry *feed;
    double *feed_values; /* engine_var_count: the feed's frame (bodies written, energies 0) */

    pthread_t thread;
    bool thread_running;
    atomic_bool stop_requested;
    atomic_bool reset_requested; /* sim_request_reset: any thread sets, the engine clears */
    SimHeadless headless;
    SimReports published;
    SimClock clock;
    SimImpacts events;
};

#endif
