/* issim haptics, device: the link to a P2 pantograph. The protocol codec
 * (docs/pantograph-protocol.md: state frames up, command frames down, CRC-16, a stream decoder
 * that resynchronises after garbage); one device interface (open, read, write, close,
 * capabilities) with the back-ends "usb" (libusb), "serial:PATH" (a tty or a pty, e.g. the
 * simulator tools/pantosim) and "playback:FILE" (recorded handle positions); and the simulator
 * process itself (issim-pantosim on a pseudo-terminal).
 *
 * Threading: the codec functions are pure (thread: any); a HapticDecoder belongs to its caller.
 * A HapticDevice has one owner at a time: its opener until it hands it to haptic_servo_create,
 * then the servo thread while the servo runs. haptic_simulator_spawn forks: one thread at a
 * time.
 */
#ifndef ISSIM_HAPTICS_DEVICE_H
#define ISSIM_HAPTICS_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "issim/core.h"
#include "issim/haptics_pantograph.h"

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

#endif
