/* issim haptics, device: the link to a P2 pantograph. The protocol codec
 * (docs/pantograph-protocol.md, protocol 2: state frames up, command frames down, CRC-32C,
 * sequence numbers checked, a stream decoder that resynchronises after garbage); one device
 * interface (open, read, write, close, capabilities) with the back-ends "usb" (libusb),
 * "serial:PATH" (a tty or a pty, e.g. the simulator tools/pantosim) and "playback:FILE" (recorded
 * handle positions); and the simulator process itself (issim-pantosim on a pseudo-terminal).
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
#define HAPTIC_STATE_FRAME_SIZE 26   /* bytes on the wire (protocol 1: 24) */
#define HAPTIC_COMMAND_FRAME_SIZE 15 /* bytes on the wire (protocol 1: 13) */
#define HAPTIC_FRAME_MAX 32          /* the largest frame fits one 64-byte USB packet */

/* Protocol version (docs/pantograph-protocol.md "Versions"): 2 = CRC-32C, sequence numbers
 * checked. A state frame carries it in status bits 12-15; protocol-1 devices (CRC-16 frames)
 * are recognised by their frames and refused. */
#define HAPTIC_PROTOCOL_VERSION 2
#define HAPTIC_STATUS_VERSION_SHIFT 12
#define HAPTIC_STATUS_VERSION_MASK 0xF000u
#define HAPTIC_STATE_FRAME_SIZE_V1 24

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
    /* protocol version, status bits 12-15 on the wire (the decoder moves it here and clears
       it from status); the encoder writes HAPTIC_PROTOCOL_VERSION when this is 0 */
    uint8_t protocol;
} HapticState;

typedef struct HapticCommand {
    uint16_t seq;    /* +1 per command; haptic_device_write numbers commands itself */
    uint16_t dac[2]; /* 12-bit offset binary: 2048 = zero torque */
    bool enable;     /* false: motors off whatever dac says */
} HapticCommand;

/* CRC-32C (Castagnoli: reflected poly 0x82F63B78, init and final xor 0xFFFFFFFF; check value
 * 0xE3069283 for "123456789"), table-driven: the frame checksum of protocol 2. */
uint32_t haptic_crc32c(const uint8_t *bytes, size_t n);
/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF): protocol 1's checksum, kept to recognise (and
 * refuse) protocol-1 devices and for the simulator's --protocol 1. */
uint16_t haptic_crc16(const uint8_t *bytes, size_t n);
/* Encoders return the frame size written into out (>= HAPTIC_FRAME_MAX bytes). */
size_t haptic_encode_state(const HapticState *s, uint8_t *out);
size_t haptic_encode_command(const HapticCommand *c, uint8_t *out);
/* A protocol-1 state frame (CRC-16, 24 bytes, no version field): what an old device sends. */
size_t haptic_encode_state_v1(const HapticState *s, uint8_t *out);

/* Sequence check of one direction of the link (state frames on the host, commands on the
 * device). The first frame is taken whatever its number; after that a frame numbered
 * last + 1 (mod 65536) is in order, last + 2 ... last + 32768 means frames were lost (counted,
 * the frame is taken), and a frame that repeats the last number or goes backwards (last - 1 ...
 * last - 32767) is dropped and counted, never applied. */
typedef struct HapticSeqCheck {
    bool started;
    uint16_t last;
    uint64_t in_order; /* frames taken */
    uint64_t gaps;     /* frames taken after a jump forward */
    uint64_t lost;     /* frames missing in those jumps */
    uint64_t dropped;  /* frames repeated or going backwards: not applied */
} HapticSeqCheck;

/* true: apply the frame; false: drop it (repeat or backwards). */
bool haptic_seq_check(HapticSeqCheck *c, uint16_t seq);

/* Stream decoder: feed any byte chunks; it finds the sync pattern, checks length and CRC, and
 * resynchronises after garbage by scanning from the byte after a false sync. */
typedef struct HapticDecoder {
    uint8_t buf[HAPTIC_FRAME_MAX];
    int len;
    uint64_t frames;     /* good frames */
    uint64_t crc_errors; /* frames dropped for a bad checksum */
    uint64_t bad_length; /* frames dropped for an impossible type/length */
    uint64_t bytes_skipped;
    uint64_t v1_frames; /* well-formed protocol-1 (CRC-16) frames: dropped, an old device */
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
/* Sends a command (non-blocking; a full pipe drops the frame and counts it). The device layer
 * numbers commands: cmd->seq is set to the next number (continuing from the last_command_seq
 * the device reported when the link opened, so a reopened link still counts upwards). */
IssimStatus haptic_device_write(HapticDevice *dev, HapticCommand *cmd, IssimError *err);
HapticDeviceCaps haptic_device_caps(const HapticDevice *dev);

/* Link integrity counters (thread: the device's owner). */
typedef struct HapticLinkStats {
    uint64_t frames;        /* state frames that passed the checksum */
    uint64_t crc_errors;    /* frames dropped for a bad checksum */
    uint64_t bad_length;    /* impossible type/length */
    uint64_t v1_frames;     /* protocol-1 frames seen (refused) */
    uint64_t seq_gaps;      /* state frames that arrived after a jump in the sequence */
    uint64_t seq_lost;      /* state frames missing in those jumps */
    uint64_t seq_dropped;   /* state frames repeated or out of order: dropped, not applied */
    uint64_t commands_sent; /* command frames numbered and handed to the link */
} HapticLinkStats;
HapticLinkStats haptic_device_link_stats(const HapticDevice *dev);
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
    int link_fd;       /* our end of the socket link, -1 with a pty */
    char spec[160];    /* open it with haptic_device_open(spec): "link:FD" or "serial:PTY" */
    char pty[128];     /* the pty's path (haptic_simulator_spawn_pty), else "" */
    char summary[512]; /* its SUMMARY line after haptic_simulator_stop */
} HapticSimulator;

/* Starts issim-pantosim (found next to the running executable, or at exe when non-NULL) with
 * the extra arguments (NULL-terminated list, Nullable), linked to this process by a UNIX stream
 * socket (no kernel flush work between its writes and our reads: a busy machine cannot starve
 * the link; serial.c), and waits up to 2 s for its "LINK" line.
 * Thread: one thread at a time (fork). */
IssimStatus haptic_simulator_spawn(HapticSimulator *sim, const char *exe, const char *const *args,
                                   IssimError *err);
/* The same over a pseudo-terminal, as a user runs the simulator on its own ("PTY" line): the
 * tests of the serial line's own path. */
IssimStatus haptic_simulator_spawn_pty(HapticSimulator *sim, const char *exe,
                                       const char *const *args, IssimError *err);
/* SIGTERM, reads the SUMMARY line, reaps the process. Idempotent. */
void haptic_simulator_stop(HapticSimulator *sim);
/* Value of key=... in the summary, NAN if absent. */
double haptic_simulator_summary_value(const HapticSimulator *sim, const char *key);

#endif
