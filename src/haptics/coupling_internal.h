/* Private to src/haptics: the servo's side of the virtual coupling (coupling.c), used by the
 * servo (servo.c). Thread: servo (or the creator before the servo starts, after it stops). */
#ifndef ISSIM_HAPTICS_COUPLING_INTERNAL_H
#define ISSIM_HAPTICS_COUPLING_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "issim/haptics_pantograph.h"
#include "issim/haptics_render.h"
#include "issim/math.h"
#include "issim/registry.h"

/* The proxy's registry variables, found by name at set-up (haptic_coupling_bind). */
typedef struct CouplingVars {
    RegistryVarId pos_x, pos_y, vel_x, vel_y;
} CouplingVars;

typedef struct CouplingState {
    CouplingVars vars;
    double *frame_values; /* registry_var_count doubles, allocated by haptic_coupling_bind */
    uint64_t last_index;
    double frame_t; /* time of the frame in frame_values, once have_frame */
    double last_change_wall;
    bool have_frame;
    bool stalled;
    uint64_t stalls;
    double fade; /* 1 live, ramps to 0 after a stall */
    /* 0 with the motors off, ramps to 1 over engage_s once they are asked on */
    double engage, engaged_since;
    bool engaging;
    Vec3 handle_world, handle_world_vel;
} CouplingState;

/* true when c names both its proxy's variables and its body. */
bool haptic_coupling_on(const HapticCoupling *c);
/* Set-up for a servo on reg (Nullable: no coupling): checks the coupling names both or neither
 * of proxy and proxy_body (ISSIM_ERR_INVALID), finds the proxy's variables by name
 * (ISSIM_ERR_NOT_FOUND naming a missing one) and allocates the frame buffer. On failure cs owns
 * nothing. */
IssimStatus haptic_coupling_bind(const HapticCoupling *c, CouplingState *cs, const Registry *reg,
                                 IssimError *err);
/* Frees what haptic_coupling_bind allocated. */
void haptic_coupling_unbind(CouplingState *cs);
/* Ramp-in of the coupling after the motors are asked on (wanted: enabled and no emergency
 * stop); the servo calls it every period before haptic_coupling_servo_force. */
void haptic_coupling_engage(const HapticCoupling *c, CouplingState *cs, bool wanted, double now);
/* Force on the handle (device frame, N) from the coupling spring to the newest proxy state;
 * updates the stall watchdog. */
void haptic_coupling_servo_force(const HapticCoupling *c, CouplingState *cs, const Registry *reg,
                                 const HapticKinematics *k, double now, double force[2]);

#endif
