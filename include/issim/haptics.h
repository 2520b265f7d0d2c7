/* issim haptics: the P2 pantograph (seed 004 ch. 2), its device back-ends, the servo thread
 * and the haptic force models (004 ch. 3, 3.4, 4.9).
 *
 * Layers, bottom up:
 *  - kinematics: the five-bar linkage of 004 fig. 2.3 (link lengths d1..d5), forward kinematics
 *    by Newton iteration on the loop closure (2.8), velocities (2.9-2.10), Jacobians (2.18-2.26),
 *    encoders, workspace and singularity limits. Pure functions plus a small state
 *    (HapticKinematics) that carries the warm start and the velocity filter;
 *  - codec: the frames of docs/pantograph-protocol.md (state frames up, command frames down);
 *  - device: one interface (open, read, write, close, capabilities) with back-ends "usb"
 *    (libusb), "serial:PATH" (tty or pty, e.g. the simulator tools/pantosim), "playback:FILE";
 *  - force models: local surfaces (PD wall, Coulomb friction), Siira's stochastic texture,
 *    the virtual coupling to an engine proxy body;
 *  - servo: the absolute-deadline thread that reads the device, solves kinematics, computes the
 *    force, applies the safety chain and writes the D/A values, publishing the handle and its
 *    timing statistics in the registry.
 *
 * Threading: everything but the servo is single-threaded (one owner at a time). A running servo
 * owns its device, kinematics and models; other threads talk to it only through the registry
 * (REGISTRY_SLOT_HANDLE, REGISTRY_SLOT_SERVO_STATS, both written by the servo only) and through
 * haptic_servo_enable / haptic_servo_emergency_stop / haptic_servo_stop, which only store
 * atomics. The servo reads the registry (never takes a lock) and writes its own slots.
 */
#ifndef ISSIM_HAPTICS_H
#define ISSIM_HAPTICS_H

#include <stdbool.h>
#include <stdint.h>

#include "issim/core.h"
#include "issim/math.h"
#include "issim/registry.h"

typedef struct HapticVec2 {
    double x, y;
} HapticVec2;

/* ===== Device configuration and kinematics (004 ch. 2) ===== */

/* The pantograph: base joint 1 at the origin, base joint 5 at (d5, 0); proximal links d1 (chain
 * 1) and d4 (chain 2), distal links d2 and d3 meeting at the handle (004 fig. 2.3). Angles are
 * from the +x axis, counter-clockwise; the elbows point outwards (chain 1 left, chain 2 right). */
typedef struct PantographConfig {
    double d1, d2, d3, d4, d5; /* m */
    int counts_per_rev;        /* encoder counts per revolution in quadrature (2000) */
    double q1_zero, q5_zero;   /* base angle at encoder count 0, rad */
    int dac_bits;              /* 12: D/A values 0..4095, mid-scale = zero current */
    double max_joint_torque;   /* N m at full-scale D/A (motor torque constant x current x
                                  transmission ratio) */
    double max_force;          /* N, handle force limit applied before the torque mapping */
    double workspace_min_x, workspace_max_x, workspace_min_y, workspace_max_y; /* m */
    double workspace_margin;   /* m: force fades to zero over this distance outside */
    double singular_limit;     /* |sin| of the elbow / distal angles below which force fades */
    double velocity_cutoff_hz; /* first-order low-pass on the encoder-difference velocity */
    int newton_max_iter;       /* forward kinematics iterations per solve */
    double newton_tol;         /* m, loop-closure residual */
} PantographConfig;

/* The P2 defaults: d1 = d4 = 0.10 m, d2 = d3 = 0.15 m, d5 = 0.04 m, a 16 cm x 10 cm workspace
 * x in [-0.06, 0.10], y in [0.105, 0.205] where |sin| of every elbow and distal angle stays
 * above 0.69, 2000 counts/rev, 12-bit D/A, 0.5 N m full scale, 30 Hz velocity cutoff. */
PantographConfig pantograph_config_default(void);
/* ISSIM_ERR_RANGE naming the field for non-positive lengths, an unreachable workspace... */
IssimStatus pantograph_config_check(const PantographConfig *config, IssimError *err);
HapticVec2 pantograph_workspace_centre(const PantographConfig *config);

/* The full joint state: base angles q1, q5 and distal relative angles q2, q4 (004 2.3). */
typedef struct PantographJoints {
    double q1, q2, q4, q5;
} PantographJoints;

/* Chain end positions x1 = F1(q1, q2) and x2 = F2(q5, q4) (004 eqs. 2.1-2.2). */
HapticVec2 pantograph_chain1_end(const PantographConfig *c, double q1, double q2);
HapticVec2 pantograph_chain2_end(const PantographConfig *c, double q5, double q4);
/* Newton iteration on the loop closure x1 = x2 for (q2, q4) given q1, q5 (004 eq. 2.8), started
 * from joints->q2, q4 (the previous period's). Returns the iterations used, or -1 when it did
 * not converge (joints left unchanged). */
int pantograph_forward_newton(const PantographConfig *c, PantographJoints *joints);
/* Closed form: the intersection of the circles of radius d2 and d3 about the elbows, the branch
 * above the elbow line. false when the circles do not meet. */
bool pantograph_forward_closed(const PantographConfig *c, double q1, double q5, HapticVec2 *handle,
                               PantographJoints *joints);
/* Inverse kinematics (elbows outwards). false when the point is out of reach. */
bool pantograph_inverse(const PantographConfig *c, HapticVec2 handle, PantographJoints *joints);
/* Distal rates from base rates (004 eqs. 2.9-2.10). */
void pantograph_distal_rates(const PantographConfig *c, const PantographJoints *q, double q1_dot,
                             double q5_dot, double *q2_dot, double *q4_dot);
/* Chain Jacobians J1 = dF1/d(q1, q2), J2 = dF2/d(q5, q4) (2.18-2.19) and the closed-chain
 * J = dx/d(q1, q5) (2.25-2.26), row-major 2x2. The closed-chain one returns false (and leaves
 * j) where the chain is singular. */
void pantograph_jacobian_chain1(const PantographConfig *c, const PantographJoints *q, double j[4]);
void pantograph_jacobian_chain2(const PantographConfig *c, const PantographJoints *q, double j[4]);
bool pantograph_jacobian(const PantographConfig *c, const PantographJoints *q, double j[4]);
/* min(|sin q2|, |sin q4|, |sin(q45 - q12)|): 0 at a straight elbow or collinear distal links. */
double pantograph_singularity(const PantographJoints *q);
/* Encoder counts to base angle and back (quantised: floor). */
double pantograph_counts_to_angle(const PantographConfig *c, int32_t counts, bool joint5);
int32_t pantograph_angle_to_counts(const PantographConfig *c, double angle, bool joint5);
/* Signed D/A value for a torque: offset binary, saturated; *saturated set when clipped. */
uint16_t pantograph_torque_to_dac(const PantographConfig *c, double torque, bool *saturated);
double pantograph_dac_to_torque(const PantographConfig *c, uint16_t dac);

/* Limit flags (HapticKinematics.flags, handle slot, servo statistics). */
enum {
    HAPTIC_LIMIT_WORKSPACE = 1u << 0,   /* outside the workspace rectangle: force faded */
    HAPTIC_LIMIT_SINGULAR = 1u << 1,    /* near a singularity: force faded */
    HAPTIC_LIMIT_FORCE = 1u << 2,       /* handle force clipped at max_force */
    HAPTIC_LIMIT_TORQUE = 1u << 3,      /* joint torque clipped at max_joint_torque */
    HAPTIC_LIMIT_NONFINITE = 1u << 4,   /* a NaN/inf force was replaced by zero */
    HAPTIC_LIMIT_NO_SOLUTION = 1u << 5, /* kinematics failed: force zero */
};

/* Kinematic state tracked by the servo: warm start and velocity filter. */
typedef struct HapticKinematics {
    PantographConfig config;
    PantographJoints joints;
    HapticVec2 pos; /* handle, m */
    HapticVec2 vel; /* filtered handle velocity, m/s */
    double q1_dot, q5_dot;
    double jacobian[4];
    double singularity;
    double force_scale; /* 0..1 from the workspace and singularity limits */
    unsigned flags;
    double t;                 /* device time of the last update, s */
    int newton_iterations;    /* of the last update */
    uint64_t newton_failures; /* fell back to the closed form */
    double closed_form_error; /* |Newton - closed form| of the last update, m */
    bool have_previous;
} HapticKinematics;

/* Starts at the workspace centre's joint angles. */
void haptic_kinematics_init(HapticKinematics *k, const PantographConfig *config);
/* Updates from encoder counts at device time t: angles, forward kinematics (warm-started Newton,
 * closed-form fallback and cross-check), filtered velocities (dt from the timestamps, so a
 * late period does not spike the estimate), Jacobian and the force scale of the limits.
 * Returns false when no solution exists (the force must then be zero). */
bool haptic_kinematics_update(HapticKinematics *k, int32_t count1, int32_t count5, double t);

/* ===== Protocol codec (docs/pantograph-protocol.md) ===== */

#define HAPTIC_FRAME_SYNC0 0xA5
#define HAPTIC_FRAME_SYNC1 0x5A
#define HAPTIC_FRAME_STATE 0x01
#define HAPTIC_FRAME_COMMAND 0x02
#define HAPTIC_STATE_FRAME_SIZE 24   /* bytes on the wire */
#define HAPTIC_COMMAND_FRAME_SIZE 13 /* bytes on the wire */
#define HAPTIC_FRAME_MAX 32

/* Status flags of a state frame. */
enum {
    HAPTIC_STATUS_ENABLED = 1u << 0,     /* motors powered (an enable command was accepted) */
    HAPTIC_STATUS_WATCHDOG = 1u << 1,    /* device watchdog tripped: motors zeroed */
    HAPTIC_STATUS_SATURATED = 1u << 2,   /* a D/A command was clipped by the device */
    HAPTIC_STATUS_BAD_COMMAND = 1u << 3, /* the device dropped a command frame (checksum) */
    HAPTIC_STATUS_FAULT = 1u << 4,       /* amplifier fault / hardware e-stop pressed */
    HAPTIC_STATUS_HOST_STALE = 1u << 8,  /* host-side: no new frame this period (not on wire) */
};

typedef struct HapticState {
    uint16_t seq;          /* device frame counter, wraps */
    uint32_t timestamp_us; /* device clock, wraps after ~71 min */
    int32_t counts[2];     /* encoder of joint 1 and joint 5 */
    uint16_t status;       /* HAPTIC_STATUS_* */
    uint16_t last_command_seq;
} HapticState;

typedef struct HapticCommand {
    uint16_t seq;
    uint16_t dac[2]; /* 12-bit offset binary: 2048 = zero torque */
    bool enable;     /* false: motors off whatever dac says */
} HapticCommand;

/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of bytes. */
uint16_t haptic_crc16(const uint8_t *bytes, size_t n);
/* Encoders return the frame size written into out (>= HAPTIC_FRAME_MAX bytes). */
size_t haptic_encode_state(const HapticState *s, uint8_t *out);
size_t haptic_encode_command(const HapticCommand *c, uint8_t *out);

/* Stream decoder: feed any byte chunks; it finds the sync pattern, checks length and CRC, and
 * resynchronises after garbage by scanning from the byte after a false sync. */
typedef struct HapticDecoder {
    uint8_t buf[HAPTIC_FRAME_MAX];
    int len;
    uint64_t frames;     /* good frames */
    uint64_t crc_errors; /* frames dropped for a bad checksum */
    uint64_t bad_length; /* frames dropped for an impossible type/length */
    uint64_t bytes_skipped;
} HapticDecoder;

typedef enum HapticFrameKind {
    HAPTIC_DECODED_NONE,
    HAPTIC_DECODED_STATE,
    HAPTIC_DECODED_COMMAND,
} HapticFrameKind;

typedef struct HapticFrame {
    HapticFrameKind kind;
    HapticState state;
    HapticCommand command;
} HapticFrame;

void haptic_decoder_init(HapticDecoder *d);
/* Consumes bytes until one frame completes; returns how many bytes were consumed and fills
 * frame (kind NONE when the bytes ran out first). Call again with the rest. */
size_t haptic_decoder_feed(HapticDecoder *d, const uint8_t *bytes, size_t n, HapticFrame *frame);

/* ===== Device interface ===== */

typedef struct HapticDeviceCaps {
    char name[64];  /* "serial /dev/pts/3", "usb 1209:7050 bus 1 addr 4", "playback f.csv" */
    double rate_hz; /* frame rate the device streams at */
    int counts_per_rev;
    int dac_bits;
    bool has_watchdog; /* the device zeroes its motors on its own when commands stop */
    bool can_actuate;  /* false for playback */
    double watchdog_s; /* device watchdog timeout, s */
} HapticDeviceCaps;

typedef struct HapticSample {
    HapticState state;
    double t;      /* device time, s, unwrapped */
    double host_t; /* issim_wall_time() when the frame was taken */
    bool fresh;    /* a new frame since the previous read */
} HapticSample;

typedef struct HapticDevice HapticDevice;

/* spec: "usb" or "usb:VID:PID", "serial:PATH", "playback:FILE[:loop]". The device starts with
 * its motors disabled. Errors name the device and what failed ("no P2 pantograph (1209:7050)
 * found on USB: 0 USB devices enumerated..."). */
HapticDevice *haptic_device_open(const char *spec, const PantographConfig *config, IssimError *err);
/* Newest state; waits at most timeout_s for a first new frame, otherwise returns the previous
 * one with fresh = false and HAPTIC_STATUS_HOST_STALE. ISSIM_ERR_IO with a message when the
 * link is gone (unplugged, the simulator exited) or silent for longer than 0.25 s. */
IssimStatus haptic_device_read(HapticDevice *dev, double timeout_s, HapticSample *out,
                               IssimError *err);
/* Sends a command (non-blocking; a full pipe drops the frame and counts it). */
IssimStatus haptic_device_write(HapticDevice *dev, const HapticCommand *cmd, IssimError *err);
HapticDeviceCaps haptic_device_caps(const HapticDevice *dev);
/* Best effort: sends a disable command, then releases everything. NULL is fine. */
void haptic_device_close(HapticDevice *dev);

/* Playback files: CSV "t,x,y" (s, m, m; header line optional) of handle positions, replayed
 * through the inverse kinematics and the encoders at the recorded times. */
IssimStatus haptic_playback_write_circle(const char *path, const PantographConfig *config,
                                         double radius, double period_s, double duration_s,
                                         IssimError *err);

/* ===== The device simulator process (tools/pantosim) ===== */

typedef struct HapticSimulator {
    int pid;
    int stdout_fd;
    char pty[128];     /* open it as "serial:" + pty */
    char summary[512]; /* its SUMMARY line after haptic_simulator_stop */
} HapticSimulator;

/* Starts issim-pantosim (found next to the running executable, or at exe when non-NULL) with
 * the extra arguments (NULL-terminated list, Nullable) and waits up to 2 s for its "PTY" line.
 * Thread: one thread at a time (fork). */
IssimStatus haptic_simulator_spawn(HapticSimulator *sim, const char *exe, const char *const *args,
                                   IssimError *err);
/* SIGTERM, reads the SUMMARY line, reaps the process. Idempotent. */
void haptic_simulator_stop(HapticSimulator *sim);
/* Value of key=... in the summary, NAN if absent. */
double haptic_simulator_summary_value(const HapticSimulator *sim, const char *key);

/* ===== Force models (004 3.4, 3.5, 4.9, App. D) ===== */

/* Siira's stochastic texture (004 eqs. 3.29-3.43): F_texture ~ u Normal(mu, Sigma) with u = 0
 * while the lateral speed is below epsilon. Statistics are given in surface space (tangent,
 * normal), mapped to world by R and to joint space by J^T. */
typedef struct HapticTexture {
    double mean[2];        /* surface space (tangent, normal), N */
    double cov[4];         /* surface-space covariance, row-major, N^2 */
    bool diagonal;         /* ignore the off-diagonal terms (004 3.6: not perceptibly different) */
    double epsilon;        /* m/s: dead band on the lateral speed (eq. 3.31) */
    double rate_speed_ref; /* m/s; > 0: pulses are drawn with probability min(1, v / ref) per
                              period (rate modulation by sliding speed, 004 ch. 6); 0: every
                              period */
    /* derived by haptic_texture_prepare: */
    double chol[4]; /* lower Cholesky factor of the (diagonal or full) covariance */
    bool prepared;
} HapticTexture;

/* Factorises the covariance (LAPACKE_dpotrf). ISSIM_ERR_RANGE when it is not positive
 * semi-definite (a zero covariance is allowed: deterministic texture). */
IssimStatus haptic_texture_prepare(HapticTexture *tex, IssimError *err);
/* World statistics for a surface whose tangent is t (unit, world): R = [t n] with n the left
 * normal (eqs. 3.32-3.35). */
void haptic_texture_world_stats(const HapticTexture *tex, HapticVec2 tangent, double mean_w[2],
                                double cov_w[4]);
/* Joint statistics: mu_tau = J^T mu_w, Sigma_tau = J^T Sigma_w J (eqs. 3.36-3.43). */
void haptic_texture_joint_stats(const double jacobian[4], const double mean_w[2],
                                const double cov_w[4], double mean_tau[2], double cov_tau[4]);

/* The servo's random source (xoshiro256**; Gaussian by the polar method). */
typedef struct HapticRng {
    uint64_t s[4];
    bool have_spare;
    double spare;
} HapticRng;
void haptic_rng_seed(HapticRng *r, uint64_t seed);
double haptic_rng_uniform(HapticRng *r); /* [0, 1) */
double haptic_rng_gauss(HapticRng *r);   /* standard normal */

/* One texture draw in joint space: zero inside the dead band (|lateral speed| < epsilon) or
 * when the rate modulation skips this period; else mu_tau + L_tau n with L_tau = J^T R L_s. */
void haptic_texture_sample_joint(const HapticTexture *tex, HapticRng *rng, HapticVec2 tangent,
                                 double lateral_speed, const double jacobian[4], double tau[2]);
/* The same draw in world space (mu_w + R L_s n), for tests and world-space users. */
void haptic_texture_sample_world(const HapticTexture *tex, HapticRng *rng, HapticVec2 tangent,
                                 double lateral_speed, double f[2]);

/* A local surface the servo renders itself (no engine round trip). */
typedef enum HapticSurfaceKind {
    HAPTIC_SURFACE_WALL,   /* half-plane: inside where (x - point) . normal < 0 */
    HAPTIC_SURFACE_REGION, /* texture region (axis-aligned rectangle, no wall): the handle
                              slides on the device's table (004 3.6, four quadrants) */
} HapticSurfaceKind;

typedef struct HapticSurface {
    HapticSurfaceKind kind;
    HapticVec2 point, normal; /* WALL: a point on the surface and its outward unit normal */
    HapticVec2 min, max;      /* REGION: rectangle */
    double stiffness;         /* N/m, PD spring (004 3.4: PD control for the constraint) */
    double damping;           /* N s/m, on the penetration rate only */
    double friction;          /* Coulomb coefficient on the PD normal force */
    double friction_speed;    /* m/s: friction ramps linearly up to this sliding speed */
    bool has_texture;
    HapticTexture texture;
} HapticSurface;

/* Forces of one surface on the handle (world/device frame, N); joint-space texture torques are
 * added to tau. */
void haptic_surface_force(const HapticSurface *s, const HapticKinematics *k, HapticRng *rng,
                          double force[2], double tau[2]);

/* ===== Virtual coupling to an engine proxy body ===== */

/* The device plane maps to the world plane z = origin.z: world = origin + scale (x - centre)
 * along world x and y. Forces scale back by 1 / force_scale (world N -> handle N). */
typedef struct HapticCoupling {
    int proxy_body;         /* engine body index, or -1: no coupling */
    int proxy_var;          /* registry index of "<proxy>.pos.x" (then y, z; vel at +7) */
    Vec3 origin;            /* world point under the workspace centre */
    double position_scale;  /* world m per device m */
    double force_scale;     /* world N per handle N */
    double stiffness;       /* world N/m */
    double damping;         /* world N s/m */
    double stall_timeout_s; /* no new engine frame for this long: the engine stalled */
    double fade_s;          /* then the coupling force ramps to zero over this time */
    double engage_s;        /* when the motors come on the gains ramp from 0 to full over this
                               time, so a handle away from its proxy does not snap it (a full
                               2000 N/m spring at once knocked the pushed box away) */
} HapticCoupling;

HapticCoupling haptic_coupling_default(void);

/* ===== Registry slots written by the servo ===== */

/* Indices into REGISTRY_SLOT_HANDLE.v (writer: servo; t = wall time). */
enum {
    HAPTIC_HANDLE_X, /* device frame, m */
    HAPTIC_HANDLE_Y,
    HAPTIC_HANDLE_VX, /* m/s */
    HAPTIC_HANDLE_VY,
    HAPTIC_HANDLE_FX, /* force rendered on the handle, N (after every limit) */
    HAPTIC_HANDLE_FY,
    HAPTIC_HANDLE_WORLD_X, /* handle mapped to the world (coupling), m */
    HAPTIC_HANDLE_WORLD_Y,
    HAPTIC_HANDLE_WORLD_Z,
    HAPTIC_HANDLE_WORLD_VX,
    HAPTIC_HANDLE_WORLD_VY,
    HAPTIC_HANDLE_PROXY_BODY, /* engine body index of the proxy, or -1 */
    HAPTIC_HANDLE_COUPLING_K, /* world N/m, already multiplied by the stall fade */
    HAPTIC_HANDLE_COUPLING_B, /* world N s/m, same */
    HAPTIC_HANDLE_ENABLED,    /* 1 when the motors are enabled and powered */
    HAPTIC_HANDLE_LIMITS,     /* HAPTIC_LIMIT_* of this period */
    HAPTIC_HANDLE_DEVICE_STATUS,
    HAPTIC_HANDLE_Q1,
    HAPTIC_HANDLE_Q5,
    HAPTIC_HANDLE_COUNT
};

/* Indices into REGISTRY_SLOT_SERVO_STATS.v (writer: servo; t = wall time). */
enum {
    HAPTIC_STAT_RATE_HZ,     /* configured rate */
    HAPTIC_STAT_MEASURED_HZ, /* periods per wall second over the run */
    HAPTIC_STAT_PERIODS,
    HAPTIC_STAT_LATENESS_P50_US, /* wake-up lateness after the absolute deadline */
    HAPTIC_STAT_LATENESS_P99_US,
    HAPTIC_STAT_LATENESS_P999_US,
    HAPTIC_STAT_LATENESS_MAX_US,
    HAPTIC_STAT_OVERRUNS,        /* periods whose deadline was missed by a whole period */
    HAPTIC_STAT_COMPUTE_MEAN_US, /* read to write, us */
    HAPTIC_STAT_COMPUTE_MAX_US,
    HAPTIC_STAT_FIFO,        /* 1 when running SCHED_FIFO */
    HAPTIC_STAT_STALE_READS, /* periods without a new device frame */
    HAPTIC_STAT_DEVICE_ERRORS,
    HAPTIC_STAT_STATE,            /* HapticServoState */
    HAPTIC_STAT_ENGINE_STALLS,    /* host watchdog trips */
    HAPTIC_STAT_FORCE_LIMITED,    /* periods with a force/torque/workspace limit active */
    HAPTIC_STAT_MISSED_DEADLINES, /* deadlines skipped by overruns (periods + missed = elapsed
                                     deadlines) */
    HAPTIC_STAT_COUNT
};

/* ===== Servo ===== */

typedef enum HapticServoState {
    HAPTIC_SERVO_IDLE,    /* not started */
    HAPTIC_SERVO_RUNNING, /* motors may be enabled */
    HAPTIC_SERVO_SAFE,    /* device error or emergency stop: zero force, motors disabled */
    HAPTIC_SERVO_STOPPED,
} HapticServoState;

#define HAPTIC_MAX_SURFACES 16

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
} HapticServoDesc;

HapticServoDesc haptic_servo_desc_default(void);

typedef struct HapticServo HapticServo;

/* Takes ownership of dev (closed by haptic_servo_destroy, or at once when creation fails). A NULL
 * dev returns NULL with err untouched, so haptic_servo_create(haptic_device_open(...), ...)
 * reports the open's error. reg is Nullable and Borrowed: the servo then reads the proxy from
 * its frames and writes the HANDLE and SERVO_STATS slots. */
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
/* Thread: any. Motors stay disabled until enabled (and after an emergency stop until
 * re-enabled). */
void haptic_servo_enable(HapticServo *servo, bool enable);
void haptic_servo_emergency_stop(HapticServo *servo);
HapticServoState haptic_servo_state(const HapticServo *servo);
/* Thread: servo or after stop. Borrowed. */
const HapticKinematics *haptic_servo_kinematics(const HapticServo *servo);
/* The message of the error that sent the servo to its safe state ("" if none). Thread: after
 * haptic_servo_stop or from the servo. */
const char *haptic_servo_error(const HapticServo *servo);
/* Fills v[HAPTIC_STAT_COUNT] with the current statistics (what SERVO_STATS holds). Thread:
 * after stop, or the servo. */
void haptic_servo_stats(const HapticServo *servo, double v[HAPTIC_STAT_COUNT]);
/* The handle force rendered by the last period (after every limit), N. Thread: servo, or after
 * stop. */
HapticVec2 haptic_servo_force(const HapticServo *servo);

/* ===== Engine side of the coupling (engine thread) ===== */

/* The hook sim_thread.c calls before each engine step: from the HANDLE slot (if written in the
 * last max_age_s of wall time and coupling is on) the spring/damper force between the handle's
 * world point and the proxy, in x and y, as a world force on the proxy. Returns false (force
 * zero) when there is no live coupling. Thread: engine. */
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

/* Binds d->proxy to the body of that name (body_names: the engine's body names in engine order,
 * Borrowed during the call), starts the simulator for "sim", opens the device (motors disabled)
 * and creates the servo on reg (Borrowed: it must outlive the session). Does not start the
 * servo. NULL with err set on any failure, everything already started undone. */
HapticSession *haptic_session_open(const HapticSessionDesc *d, const char *const *body_names,
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
/* The description the session was opened with (proxy bound: coupling.proxy_body, proxy_var). */
const HapticSessionDesc *haptic_session_desc(const HapticSession *s);

#endif
