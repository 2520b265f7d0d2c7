/* issim haptics, servo: the absolute-deadline thread that reads the device, solves the
 * kinematics, computes the force (constant + local surfaces + the virtual coupling to an engine
 * proxy), applies the safety chain and writes the D/A values (000 B.4.1, B.7; 004 ch. 2-3); the
 * layouts of the registry slots it writes (HANDLE, SERVO_STATS); the engine side of the
 * coupling; a scene's `haptics` table; and sessions, which put a device, its servo and a
 * scene's table together for `issim device` and the GUI.
 *
 * Threading: a running servo owns its device, kinematics and force models; other threads talk
 * to it only through the registry (REGISTRY_SLOT_HANDLE and REGISTRY_SLOT_SERVO_STATS, written by
 * the servo only) and through haptic_servo_enable / haptic_servo_emergency_stop /
 * haptic_servo_stop, which only store atomics. The servo reads the registry (never takes a
 * lock) and writes its own slots. Everything else is single-threaded (one owner at a time); a
 * session has one controlling thread (the CLI's main thread, or the display).
 */
#ifndef ISSIM_HAPTICS_SERVO_H
#define ISSIM_HAPTICS_SERVO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "issim/core.h"
#include "issim/haptics_device.h"
#include "issim/haptics_local.h"
#include "issim/haptics_pantograph.h"
#include "issim/haptics_render.h"
#include "issim/math.h"
#include "issim/registry.h"

/* ===== Servo ===== */

typedef enum HapticServoState {
    HAPTIC_SERVO_IDLE,    /* not started */
    HAPTIC_SERVO_RUNNING, /* motors may be enabled */
    HAPTIC_SERVO_SAFE,    /* device error or emergency stop: zero force, motors disabled */
    HAPTIC_SERVO_STOPPED,
} HapticServoState;

#define HAPTIC_MAX_SURFACES 16

/* Device plausibility (docs/haptics.md "Device plausibility"): what a hand and the motors can do
 * to the handle. The servo derives from these, the link lengths, the motors' full-scale torque
 * and the encoder resolution the largest handle speed and acceleration a measurement may imply;
 * beyond them the encoder counts are wrong (jitter, a loose connector, a miscount), not the
 * handle, and the servo turns the motors off until the user enables them again. */
typedef struct HapticPlausibility {
    bool enabled;           /* judge devices that can actuate (playback never is) */
    double hand_speed;      /* m/s: the fastest stroke a hand makes on the handle (2) */
    double hand_accel;      /* m/s^2: the hand's largest acceleration of the handle (150) */
    double handle_mass_min; /* kg: the lightest effective handle mass (004 2.4: 0.12) */
} HapticPlausibility;

/* The bounds derived from a configuration and those limits (constant over the workspace). */
typedef struct HapticMotionBounds {
    double motor_accel; /* m/s^2: full-scale torques on the lightest handle, worst posture */
    double accel;       /* m/s^2: hand_accel + motor_accel */
    double travel;      /* m: the diameter of the circle holding every reachable point */
    double speed;       /* m/s: sqrt(hand_speed^2 + 2 accel travel) */
} HapticMotionBounds;

HapticMotionBounds haptic_motion_bounds(const PantographConfig *config,
                                        const HapticPlausibility *p);

/* Why the servo holds the motors off until re-enabled (HapticServoStats.fault). */
typedef enum HapticFault {
    HAPTIC_FAULT_NONE,
    HAPTIC_FAULT_SPEED,        /* two readings further apart than the mechanism can move */
    HAPTIC_FAULT_ACCELERATION, /* three readings the mechanism cannot pass through */
    HAPTIC_FAULT_DEVICE,       /* the device reported FAULT (amplifier fault, hardware e-stop) */
} HapticFault;

/* ===== Registry slots written by the servo (servo_slots.c) =====
 * The typed form of the HANDLE and SERVO_STATS slots: the servo packs, readers unpack; nothing
 * else knows where a field sits in a slot's values. */

/* REGISTRY_SLOT_HANDLE (writer: the servo, every period; t = wall time). */
typedef struct HapticHandleState {
    HapticVec2 pos; /* device frame, m */
    HapticVec2 vel; /* m/s */
    /* the force the motors are commanded with, on the handle, N: J^-T of the joint torques sent
       to the D/A (coupling + local surfaces + joint-space texture, after every limit) */
    HapticVec2 force;
    Vec3 world;           /* handle mapped to the world (coupling), m */
    HapticVec2 world_vel; /* its x and y velocity, m/s */
    double coupling_k;    /* world N/m, already multiplied by the stall fade */
    double coupling_b;    /* world N s/m, same */
    bool enabled;         /* the motors are enabled and powered */
    unsigned limits;      /* HAPTIC_LIMIT_* of this period */
    unsigned device_status;
    double q1, q5;            /* joint angles, rad */
    double tau1, tau5;        /* joint torques sent to the D/A, N m (0 with the motors off) */
    HapticVec2 texture_force; /* the texture's part of `force`, N on the handle */
    /* the time of the engine frame the coupling's force was computed against, s (NAN before
       the first): the view draws the proxy's end of the spring from the same frame */
    double frame_t;
    uint64_t proxy_body; /* the coupled proxy: packed EngineBodyId, 0 when none (an id word) */
    /* local models (haptics_local.h): on, and the impulse the servo has rendered on the handle
       since it started in world units (force_scale x the handle force after the safety chain,
       without the texture), N s, over impulse_time s of its clock; the engine applies minus
       it to the proxy, each step's share at most reaction_limit N (the servo's largest world
       force) */
    bool local_models;
    double track_omega; /* rad/s: the engine's tracking of the proxy (HapticLocalDesc.track_hz),
                           already multiplied by the fade and ramp-in; 0 with the motors off */
    HapticVec2 impulse;
    double impulse_time;
    double reaction_limit;
    /* the deepest local model in contact this period whose normal lies in the device's plane
       (a scene wall or a proxy contact, haptic_models_evaluate): its depth in handle m and its
       normal force on the handle in N (0 and 0 when none is, or the motors are off): the device
       panel's force-depth plot */
    double traced_depth, traced_force;
} HapticHandleState;

void haptic_handle_pack(const HapticHandleState *handle, RegistrySlot *slot);
HapticHandleState haptic_handle_unpack(const RegistrySlot *slot);
/* Packs and writes the HANDLE slot at wall time t. Thread: the servo (the slot's one writer). */
void haptic_handle_write(Registry *reg, double t, const HapticHandleState *handle);

/* REGISTRY_SLOT_SERVO_STATS (writer: the servo, every statistics interval; t = wall time). */
typedef struct HapticServoStats {
    double rate_hz;     /* configured rate */
    double measured_hz; /* periods per wall second over the run */
    uint64_t periods;
    double lateness_p50_us; /* wake-up lateness after the absolute deadline */
    double lateness_p99_us;
    double lateness_p999_us;
    double lateness_max_us;
    uint64_t overruns;      /* periods whose deadline was missed by a whole period */
    double compute_mean_us; /* read to write, us */
    double compute_max_us;
    bool fifo;            /* running SCHED_FIFO */
    uint64_t stale_reads; /* periods without a new device frame */
    uint64_t device_errors;
    HapticServoState state;
    uint64_t engine_stalls;    /* host watchdog trips */
    uint64_t force_limited;    /* periods with a force/torque/workspace limit active */
    uint64_t missed_deadlines; /* deadlines skipped by overruns (periods + missed = elapsed
                                  deadlines) */
    uint64_t crc_errors;       /* device frames dropped for a bad CRC-32C */
    uint64_t frames_lost;      /* state frames missing (jumps in the sequence number) */
    uint64_t frames_dropped;   /* state frames repeated or out of order: not applied */
    double force_rms;          /* RMS of |force| over the last statistics interval, N */
    double force_peak;         /* largest |force| over that interval, N */
    uint64_t texture_periods;  /* periods that commanded a texture pulse, over the run */
    /* device faults (docs/haptics.md "Device plausibility"), over the run: */
    uint64_t motion_faults;        /* trips on handle motion the mechanism cannot make */
    uint64_t device_fault_reports; /* times the device's FAULT status came on */
    HapticFault fault;             /* the fault holding the motors off now, or none */
    /* the last trip's figure and its bound: m/s for HAPTIC_FAULT_SPEED, m/s^2 for
       HAPTIC_FAULT_ACCELERATION, 0 otherwise */
    double fault_measured, fault_allowed;
    /* the largest measured / allowed of either motion check over the run (1 or more: a trip) */
    double motion_ratio;
    /* time-domain passivity observer on the device port (docs/haptics.md "Passivity"): the
       energy that flowed into the rendered environment through the handle over the run, J
       (negative: the device put out energy the environment never received), and its lowest
       value over the run */
    double passivity_energy, passivity_energy_min;
    /* local models: the newest block's engine-to-servo latency, publication to copy, us (NAN
       before the first), its mean and largest over the run, and the blocks copied */
    double local_latency_us, local_latency_mean_us, local_latency_max_us;
    uint64_t local_blocks;
    /* periods the local models' force was faded (the engine's heartbeat older than `hold`) */
    uint64_t local_faded_periods;
    /* the local models (scene surfaces and proxy contacts, evaluated by one loop): how many the
       last period evaluated and how many of them were in contact, and the loop's time per
       period over the run, us (mean and largest) */
    int models, models_touching;
    double models_compute_mean_us, models_compute_max_us;
} HapticServoStats;

void haptic_servo_stats_pack(const HapticServoStats *stats, RegistrySlot *slot);
HapticServoStats haptic_servo_stats_unpack(const RegistrySlot *slot);
/* Packs and writes the SERVO_STATS slot at wall time t. Thread: the servo. */
void haptic_servo_stats_write(Registry *reg, double t, const HapticServoStats *stats);

/* Hannaford and Ryu's time-domain passivity controller on the device port (docs/haptics.md
 * "Passivity"): while the observed energy is negative it adds a damping force -alpha v, with
 * alpha just large enough to dissipate the deficit over the next period. */
typedef struct HapticPassivity {
    bool enabled;       /* off by default (docs/haptics.md "Passivity": on the simulated device it
                           does not raise the stable stiffness yet); the observer runs always */
    double max_damping; /* N s/m ceiling of alpha; 0: handle_mass_min / period (a damper the
                           handle's lightest direction can take at this rate without itself
                           oscillating) */
} HapticPassivity;

typedef struct HapticServoDesc {
    double rate_hz;        /* 1000 default; 4000+ allowed */
    bool realtime;         /* try SCHED_FIFO (warning when refused) */
    int fifo_priority;     /* 80 */
    double max_force_step; /* N per period: larger jumps are slewed (late periods, onsets) */
    uint64_t seed;         /* texture random source */
    int surface_count;
    HapticSurface surfaces[HAPTIC_MAX_SURFACES];
    HapticCoupling coupling;
    HapticVec2 constant_force; /* N on the handle (tests, bench) */
    HapticPlausibility plausibility;
    HapticPassivity passivity;
    HapticLocalDesc local; /* the proxy's contacts as local models (off by default) */
    /* the handle's position and velocity below one encoder count (HapticObserver,
       docs/haptics.md "Below one count") instead of the count's middle and the 30 Hz filter;
       off by default. The observer's model: the device's rotor inertia (kg m^2) and handle
       mass (kg); its memory (s: the fading memory per period is exp(-period / memory)) */
    bool subcount;
    double observer_rotor_inertia, observer_handle_mass, observer_memory_s;
    double observer_lead_s; /* render the position predicted this far ahead, s (0: none) */
} HapticServoDesc;

HapticServoDesc haptic_servo_desc_default(void);

typedef struct HapticServo HapticServo;

/* Takes ownership of dev (closed by haptic_servo_destroy, or at once when creation fails). A NULL
 * dev returns NULL with err untouched, so haptic_servo_create(haptic_device_open(...), ...)
 * reports the open's error. reg is Nullable and Borrowed: the servo then reads the proxy from
 * its frames and writes the HANDLE and SERVO_STATS slots. The coupling's proxy variables are
 * looked up in reg here, once (ISSIM_ERR_NOT_FOUND naming a missing one; ISSIM_ERR_INVALID for
 * a coupling with a proxy name but no body id, or the reverse). Thread: the creator. */
HapticServo *haptic_servo_create(HapticDevice *dev, const PantographConfig *config,
                                 const HapticServoDesc *desc, Registry *reg, IssimError *err);
void haptic_servo_destroy(HapticServo *servo);
/* One servo period at wall time now (the thread calls this at each deadline; tests may call it
 * directly without a thread). Returns false once the servo went to its safe state. */
bool haptic_servo_period(HapticServo *servo, double now);
/* Starts the absolute-deadline thread. */
IssimStatus haptic_servo_start(HapticServo *servo, IssimError *err);
/* Stops and joins it; the last command sent has the motors disabled. Idempotent. */
void haptic_servo_stop(HapticServo *servo);
/* Thread: any. Motors stay disabled until enabled (and after an emergency stop or a device fault
 * until re-enabled: enable(true) clears both). */
void haptic_servo_enable(HapticServo *servo, bool enable);
void haptic_servo_emergency_stop(HapticServo *servo);
HapticServoState haptic_servo_state(const HapticServo *servo);
/* Thread: servo or after stop. Borrowed. */
const HapticKinematics *haptic_servo_kinematics(const HapticServo *servo);
/* The message of the error that sent the servo to its safe state ("" if none). Thread: after
 * haptic_servo_stop or from the servo. */
const char *haptic_servo_error(const HapticServo *servo);
/* The device fault holding the motors off (HAPTIC_FAULT_NONE when none). Thread: any. */
HapticFault haptic_servo_fault(const HapticServo *servo);
/* The message of the last device fault, naming it with the measured and allowed figures ("" if
 * none; kept after a re-enable). Thread: servo, or after stop. */
const char *haptic_servo_fault_message(const HapticServo *servo);
/* The current statistics (what SERVO_STATS holds). Thread: after stop, or the servo. */
HapticServoStats haptic_servo_stats(const HapticServo *servo);
/* The handle force of the last period's models after steps 1-4 of the safety chain (coupling +
 * constant + local surfaces, without the joint-space texture; HapticHandleState.force has the force
 * the motors are commanded with), N. Thread: servo, or after stop. */
HapticVec2 haptic_servo_force(const HapticServo *servo);
/* The servo's copy of the local models (arrivals, latencies), or NULL when they are off.
 * Borrowed. Thread: servo, or after stop. */
const HapticLocalSet *haptic_servo_local_models(const HapticServo *servo);
/* HAPTIC_LIMIT_* of the last period (HapticHandleState.limits). Thread: servo, or after stop. */
unsigned haptic_servo_limits(const HapticServo *servo);

/* ===== Engine side of the coupling (engine thread) ===== */

/* The hook sim_thread.c calls before each engine step: from the HANDLE slot (if written in the
 * last max_age_s of wall time and coupling is on) the spring/damper force between the handle's
 * world point and the proxy, in x and y, as a world force on the proxy. Returns false (force
 * zero) when there is no live coupling (no proxy id, zero gains, an old slot). The caller has
 * checked the slot's proxy id against its engine (engine_body_valid) and passes that body's
 * state. Thread: engine. */
bool haptic_coupling_engine_force(const RegistrySlot *handle, Vec3 proxy_pos, Vec3 proxy_vel,
                                  double now_wall, double max_age_s, Vec3 *force);

/* ===== Scenes ===== */

/* Reads the optional global `haptics` table a scene file sets (scenes/pantograph_*.lua; the
 * scene loader ignores globals): surfaces, textures, coupling. Missing table: desc unchanged.
 * Errors name the file and the key. */
IssimStatus haptic_scene_load(const char *scene_path, HapticServoDesc *desc, char *proxy_name,
                              size_t proxy_name_size, IssimError *err);
/* The same, and *found tells whether the scene sets a `haptics` table at all (Nullable). */
IssimStatus haptic_scene_read(const char *scene_path, HapticServoDesc *desc, char *proxy_name,
                              size_t proxy_name_size, bool *found, IssimError *err);

/* ===== Sessions: a device, its servo and a scene's haptics table =====
 * What `issim device` and the GUI (`issim run SCENE --device ...`) both do to put a device on
 * a scene: read the scene's haptics table, bind its proxy to an engine body, start the simulated
 * pantograph for "sim", open the device, create the servo on the session's registry.
 * Thread: one controlling thread (CLI main, or the display); the servo runs in its own thread
 * between haptic_session_start and haptic_session_stop. */

#define HAPTIC_SESSION_MAX_SIM_ARGS 16

typedef struct HapticSessionDesc {
    const char *device; /* Borrowed: "sim", "usb[:VID:PID]", "serial:PATH", "playback:FILE" */
    const char *simulator_args[HAPTIC_SESSION_MAX_SIM_ARGS + 1]; /* Borrowed, NULL-terminated:
                                                   extra issim-pantosim arguments (sim only) */
    HapticServoDesc servo; /* rate, realtime, plus what the scene's haptics table sets */
    char proxy[64];        /* the coupled body the table names, or "" */
    bool has_table;        /* the scene sets a haptics table */
} HapticSessionDesc;

/* device, the default servo description, no simulator arguments. */
HapticSessionDesc haptic_session_desc_default(const char *device);
/* Reads scene_path's haptics table into d (servo surfaces and coupling, proxy, has_table);
 * errors name the file and the key. */
IssimStatus haptic_session_desc_load(HapticSessionDesc *d, const char *scene_path, IssimError *err);

typedef struct HapticSession HapticSession;

/* An engine body a session may couple to, as the caller took it from the session's engine
 * before the engine thread started (engine_body_id, engine_body_name). */
typedef struct HapticSceneBody {
    const char *name; /* its thing path; Borrowed during haptic_session_open */
    uint64_t id;      /* its packed EngineBodyId (engine_body_id_pack) */
} HapticSceneBody;

/* Binds d->proxy to the body of that name among bodies[0 .. body_count) (the coupling's proxy
 * and proxy_body), starts the simulator for "sim", opens the device (motors disabled) and
 * creates the servo on reg (Borrowed: it must outlive the session). Does not start the servo.
 * NULL with err set on any failure (ISSIM_ERR_NOT_FOUND naming a proxy that is not a body of
 * the scene), everything already started undone. */
HapticSession *haptic_session_open(const HapticSessionDesc *d, const HapticSceneBody *bodies,
                                   int body_count, Registry *reg, IssimError *err);
/* Starts the servo thread. */
IssimStatus haptic_session_start(HapticSession *s, IssimError *err);
/* Stops and joins the servo (motors disabled), then stops the simulator (its summary is kept).
 * Idempotent. */
void haptic_session_stop(HapticSession *s);
/* Stops and frees everything; NULL is fine. */
void haptic_session_destroy(HapticSession *s);
/* Borrowed, valid until destroy. */
HapticServo *haptic_session_servo(HapticSession *s);
/* The device's capabilities, taken at open ("serial /dev/pts/3", rate, watchdog...). */
HapticDeviceCaps haptic_session_caps(const HapticSession *s);
/* The simulator process of a "sim" session, else NULL. Borrowed. */
const HapticSimulator *haptic_session_simulator(const HapticSession *s);
/* The description the session was opened with (proxy bound: coupling.proxy, proxy_body). */
const HapticSessionDesc *haptic_session_desc(const HapticSession *s);

#endif
