/* The simulated P2 pantograph's physics (tools/pantosim): link dynamics, motors, D/A,
 * encoders, the scripted hand and the device watchdog. */
#ifndef PANTOSIM_MODEL_H
#define PANTOSIM_MODEL_H

#include "issim/haptics_device.h"
#include "issim/haptics_pantograph.h"

typedef enum HandKind { HAND_FREE, HAND_HOLD, HAND_CIRCLE } HandKind;

typedef struct SimHand {
    HandKind kind;
    HapticVec2 point; /* HOLD: where the hand holds; CIRCLE: centre */
    double radius;    /* CIRCLE, m */
    double period;    /* CIRCLE, s */
    double ramp;      /* CIRCLE: s to reach full speed from rest (0: at once) */
    double stiffness; /* N/m between the hand target and the handle */
    double damping;   /* N s/m on the handle velocity */
} SimHand;

typedef struct SimPantograph {
    PantographConfig config;
    double rotor_inertia; /* kg m^2 per base joint (motor + proximal link) */
    double handle_mass;   /* kg at the handle (distal links lumped) */
    double joint_damping; /* N m s */
    PantographJoints q;
    double q1_dot, q5_dot;
    HapticVec2 handle;
    SimHand hand;
    double watchdog_s;
    double last_command_t;
    uint16_t last_command_seq; /* echoed in every state frame (round-trip measurement) */
    bool enabled;
    bool watchdog_tripped;
    bool saturated;
    uint16_t dac[2];
    double torque[2];     /* applied by the motors now */
    double max_torque[2]; /* largest |torque| applied so far */
    uint64_t watchdog_trips;
} SimPantograph;

/* Chooses rotor inertia and handle mass so that the effective handle mass at the workspace
 * centre spans [mass_min, mass_max] over directions. false if impossible. */
bool simpanto_init(SimPantograph *s, const PantographConfig *config, double mass_min,
                   double mass_max, HapticVec2 start);
/* Effective mass extremes at the current configuration, kg. */
void simpanto_effective_mass(const SimPantograph *s, double *mass_min, double *mass_max);
/* Applies a command received at time t (enable flag, D/A saturation). */
void simpanto_command(SimPantograph *s, const HapticCommand *cmd, double t);
/* Integrates from t to t + dt in substeps; trips the watchdog when commands stopped. */
void simpanto_advance(SimPantograph *s, double t, double dt);
HapticState simpanto_state(const SimPantograph *s, uint16_t seq, double t);

#endif
