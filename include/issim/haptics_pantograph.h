/* issim haptics, pantograph: the P2's five-bar linkage (seed 004 ch. 2, fig. 2.3; link lengths
 * d1..d5) as pure geometry: forward kinematics by Newton iteration on the loop closure (2.8) with
 * a closed-form fallback, inverse kinematics, velocities (2.9-2.10), Jacobians (2.18-2.26),
 * encoders and D/A values, workspace and singularity limits; and the small state the servo keeps
 * from period to period (HapticKinematics: warm start, velocity filter, limit flags).
 *
 * Threading: the pantograph_* functions are pure (thread: any). A HapticKinematics has one owner
 * at a time: the servo thread while a servo runs (haptic_servo_kinematics hands it out read-only
 * after the servo stopped), the device simulator (tools/pantosim) in its own process.
 */
#ifndef ISSIM_HAPTICS_PANTOGRAPH_H
#define ISSIM_HAPTICS_PANTOGRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "issim/core.h"

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
    HAPTIC_LIMIT_SLEW = 1u << 6,        /* force change held to max_force_step this period */
    /* a device fault holds the motors off until the user enables them again: handle motion the
       mechanism cannot make (HAPTIC_FAULT_SPEED, _ACCELERATION) or the device's FAULT status
       (haptics_servo.h, HapticFault) */
    HAPTIC_LIMIT_FAULT = 1u << 7,
};

/* The joints' angles and rates below one encoder count (docs/haptics.md "Below one count"): an
 * observer on the mechanism's model, M(q) q'' = tau + d, M = I Id + m J^T J (rotor inertia I,
 * handle mass m), driven by the torques the motors were commanded with, its disturbance d (the
 * hand, friction, model error) estimated as a per-joint acceleration; corrected each period by
 * the count's middle with the gains of a fading-memory alpha-beta-gamma filter (memory theta). */
typedef struct HapticObserver {
    double rotor_inertia; /* kg m^2 per base joint */
    double handle_mass;   /* kg at the handle */
    double theta;         /* fading memory per period, 0..1: larger is smoother and slower */
    double lead_s;        /* the angles rendered are predicted this far ahead at the rates, s:
                             a device that applies a command at its next frame acts on the
                             handle one period after the reading */
    double tau[2];        /* torques applied over the period now ending, N m (the servo's) */
    double angle[2], rate[2], disturbance[2]; /* rad, rad/s, rad/s^2 */
    bool have;
} HapticObserver;

/* Kinematic state tracked by the servo: warm start and velocity filter. */
typedef struct HapticKinematics {
    PantographConfig config;
    PantographJoints joints;
    HapticVec2 pos; /* handle, m */
    HapticVec2 vel; /* filtered handle velocity, m/s */
    double q1_dot, q5_dot;
    double jacobian[4];
    bool jacobian_current; /* jacobian is J at joints (the last update computed it there) */
    double singularity;
    double force_scale; /* 0..1 from the workspace and singularity limits */
    unsigned flags;
    double t;                 /* device time of the last update, s */
    int newton_iterations;    /* of the last update */
    uint64_t newton_failures; /* fell back to the closed form */
    double closed_form_error; /* |Newton - closed form| of the last update, m */
    bool have_previous;
    /* below one count: the angles (and so pos) and rates (and so vel) from the observer
       instead of the count's middle and the 30 Hz filtered difference; off unless the servo
       asks (HapticServoDesc.subcount) */
    bool subcount;
    HapticObserver observer;
    /* the handle where the counts' middles put it, m: pos itself without the observer; with it,
       pos + J (middles - observed angles). The device's reading, for the checks that reason
       about the encoders' quantum (plausibility) */
    HapticVec2 measured;
} HapticKinematics;

/* Starts at the workspace centre's joint angles. */
void haptic_kinematics_init(HapticKinematics *k, const PantographConfig *config);
/* Updates from encoder counts at device time t: angles, forward kinematics (warm-started Newton,
 * closed-form fallback and cross-check), filtered velocities (dt from the timestamps, so a
 * late period does not spike the estimate), Jacobian and the force scale of the limits.
 * Returns false when no solution exists (the force must then be zero). */
bool haptic_kinematics_update(HapticKinematics *k, int32_t count1, int32_t count5, double t);

#endif
