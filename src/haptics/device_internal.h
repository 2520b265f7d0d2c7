/* Private to src/haptics: the device back-end table (device.c, serial.c, usb.c, playback.c). */
#ifndef ISSIM_HAPTICS_DEVICE_INTERNAL_H
#define ISSIM_HAPTICS_DEVICE_INTERNAL_H

#include "issim/haptics_device.h"

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
    HapticSeqCheck state_seq;     /* sequence check of the state frames */
    uint16_t command_seq;         /* number of the last command sent */
    uint64_t commands_sent;       /* commands numbered by haptic_device_write */
    int foreign_protocol;         /* version of a state frame not of our protocol (0: none) */
    const HapticDecoder *decoder; /* the back-end's decoder (NULL: playback), for statistics */
    void *impl;
};

HapticDevice *haptic_device_new(const HapticDeviceOps *ops, const PantographConfig *config,
                                void *impl);
/* Back-ends call this for every state frame they decode. Frames of another protocol version
 * and frames whose sequence number repeats or goes backwards are counted and not applied. */
void haptic_device_accept_state(HapticDevice *dev, const HapticState *state);
/* The protocol version the device speaks when it is not ours (1: at least two CRC-16 frames
 * seen and no protocol-2 frame taken), else 0. */
int haptic_device_foreign_protocol(const HapticDevice *dev);
/* "device speaks protocol N, issim needs 2: update the firmware or the simulator" */
IssimStatus haptic_device_protocol_error(const HapticDevice *dev, IssimError *err);

HapticDevice *haptic_serial_open(const char *path, const PantographConfig *config, IssimError *err);
/* "link:FD": the stream socket shared with a simulator issim started (serial.c). */
HapticDevice *haptic_link_open(const char *fd_text, const PantographConfig *config,
                               IssimError *err);
HapticDevice *haptic_usb_open(const char *ids, const PantographConfig *config, IssimError *err);
HapticDevice *haptic_playback_open(const char *path, const PantographConfig *config,
                                   IssimError *err);

/* USB identity of the P2 controller (docs/pantograph-protocol.md). */
#define HAPTIC_USB_VID 0x1209
#define HAPTIC_USB_PID 0x7050

#endif
