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

typedef struct CouplingState {
    double *frame_values; /* registry_var_count doubles, allocated at servo creation */
    uint64_t last_index;
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

/* Ramp-in of the coupling after the motors are asked on (wanted: enabled and no emergency
 * stop); the servo calls it every period before haptic_coupling_servo_force. */
void haptic_coupling_engage(const HapticCoupling *c, CouplingState *cs, bool wanted, double now);
/* Force on the handle (device frame, N) from the coupling spring to the newest proxy state;
 * updates the stall watchdog. */
void haptic_coupling_servo_force(const HapticCoupling *c, CouplingState *cs, const Registry *reg,
                                 const HapticKinematics *k, double now, double force[2]);

#endif
