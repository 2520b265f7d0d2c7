/* Private to src/haptics: the device back-end table and shared helpers. */
#ifndef ISSIM_HAPTICS_INTERNAL_H
#define ISSIM_HAPTICS_INTERNAL_H

#include "issim/haptics.h"

typedef struct HapticDeviceOps {
    IssimStatus (*read)(HapticDevice *dev, double timeout_s, IssimError *err);
    IssimStatus (*write)(HapticDevice *dev, const HapticCommand *cmd, IssimError *err);
    void (*close)(HapticDevice *dev);
} HapticDeviceOps;

/* A silent link for this long is an error (the device streams at its frame rate; its own
 * watchdog has zeroed the motors after 50 ms of silence from us anyway). */
#define HAPTIC_DEVICE_SILENCE_S 0.25

struct HapticDevice {
    const HapticDeviceOps *ops;
    HapticDeviceCaps caps;
    PantographConfig config;
    HapticSample last; /* newest state */
    bool have_state;
    bool got_fresh; /* set by the back-end when a new state arrived during a read */
    uint32_t last_timestamp_us;
    double device_time; /* unwrapped */
    double opened_at;   /* wall */
    uint64_t dropped_commands;
    void *impl;
};

HapticDevice *haptic_device_new(const HapticDeviceOps *ops, const PantographConfig *config,
                                void *impl);
/* Back-ends call this for every state frame they decode. */
void haptic_device_accept_state(HapticDevice *dev, const HapticState *state);

HapticDevice *haptic_serial_open(const char *path, const PantographConfig *config, IssimError *err);
HapticDevice *haptic_usb_open(const char *ids, const PantographConfig *config, IssimError *err);
HapticDevice *haptic_playback_open(const char *path, const PantographConfig *config,
                                   IssimError *err);

/* USB identity of the P2 controller (docs/pantograph-protocol.md). */
#define HAPTIC_USB_VID 0x1209
#define HAPTIC_USB_PID 0x7050

#endif

/* ----- coupling.c: the servo's side of the virtual coupling ----- */

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
