/* issim-pantosim: a simulated P2 pantograph controller on a pseudo-terminal (or, started by
 * issim with --link-fd FD, on the stream socket it inherited as FD: a pty's data waits for the
 * kernel's flush work, which a busy machine delays by hundreds of ms; src/haptics/serial.c).
 *
 * It speaks docs/pantograph-protocol.md exactly as a CDC-ACM controller would: a state frame
 * every 1/rate s (encoder counts, device clock, status), command frames applied as they
 * arrive, the device watchdog. The physics is pantosim_model.c. The first line on stdout is
 * "PTY <path>" (the host opens it as serial:<path>), or "LINK <fd>" with --link-fd; on exit
 * (SIGTERM, SIGINT, --duration) a "SUMMARY key=value ..." line reports what the motors did, so
 * tests can check that commanded forces reached them.
 *
 * It speaks protocol 2 (CRC-32C, the version in the state frames' status bits 12-15, command
 * sequence numbers checked: a command that repeats or goes backwards is dropped and counted,
 * except that one turning the motors off is still obeyed). --protocol 1 makes it an old
 * protocol-1 controller (CRC-16 state frames) for testing the host's refusal.
 *
 * Faults, for the host's device-plausibility tests (docs/haptics.md "Device plausibility"):
 * --encoder jitter:A@T adds independent uniform noise of up to A counts to both encoders of
 * every frame from device time T on (a loose connector, electrical noise); jump:N@T offsets
 * encoder 1 by N counts from T on (a burst of miscounts); freeze:T0[:T1] repeats the counts
 * latched at T0 until T1 (for ever without T1) while frames keep coming (a dead encoder).
 * --amp-fault T0[:T1] sets the FAULT status and holds the motors off from T0 to T1 (an
 * amplifier fault or a hardware emergency stop).
 *
 * usage: issim-pantosim [--rate HZ] [--watchdog S] [--mass-min KG] [--mass-max KG]
 *                       [--start X,Y] [--hand free|hold:X,Y|circle:R,T[,RAMP[,X,Y]]|file:PATH]
 *                       [--hand-stiffness K]
 *                       [--hand-damping B] [--duration S] [--protocol 1|2] [--describe]
 *                       [--encoder jitter:A@T|jump:N@T|freeze:T0[:T1]] [--amp-fault T0[:T1]]
 *                       [--link-fd FD]
 */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "pantosim_model.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) {
    stop_signal = sig;
}

typedef enum EncoderFaultKind { ENC_OK, ENC_JITTER, ENC_JUMP, ENC_FREEZE } EncoderFaultKind;

typedef struct EncoderFault {
    EncoderFaultKind kind;
    int counts;    /* JITTER: amplitude; JUMP: offset of encoder 1 */
    double t0, t1; /* device time, s: from t0 (to t1 for FREEZE) */
    int32_t frozen[2];
    bool have_frozen;
    uint64_t rng;
    uint64_t frames; /* frames whose counts were altered */
} EncoderFault;

typedef struct Options {
    double rate, watchdog, mass_min, mass_max, duration;
    int protocol;
    HapticVec2 start;
    SimHand hand;
    bool describe;
    EncoderFault encoder;
    double amp_fault_t0, amp_fault_t1; /* FAULT status from t0 to t1; t0 < 0: none */
    int link_fd;                       /* an inherited stream socket instead of a pty; -1 */
} Options;

static int usage(void) {
    fputs("usage: issim-pantosim [--rate HZ] [--watchdog S] [--mass-min KG] [--mass-max KG]\n"
          "         [--start X,Y] [--hand free|hold:X,Y|circle:R,T[,RAMP[,X,Y]]|file:PATH]\n"
          "         [--hand-stiffness K] [--hand-damping B] [--duration S] [--protocol 1|2]\n"
          "         [--encoder jitter:A@T|jump:N@T|freeze:T0[:T1]] [--amp-fault T0[:T1]]\n"
          "         [--describe] [--link-fd FD]\n",
          stderr);
    return 2;
}

/* "file:PATH": the hand follows what the host writes to PATH ("X Y": hold that point, m in the
 * device frame; anything else: let go), read every HAND_FILE_PERIOD. The display writes it from
 * the mouse (`issim run --device sim`, Ctrl + drag in the 3D view: docs/user-guide.md). */
#define HAND_FILE_PERIOD 0.01
static char hand_file[512];

static void read_hand_file(SimHand *h) {
    FILE *f = fopen(hand_file, "r");
    if (!f)
        return;
    double x, y;
    if (fscanf(f, "%lf %lf", &x, &y) == 2 && isfinite(x) && isfinite(y)) {
        h->kind = HAND_HOLD;
        h->point = (HapticVec2){x, y};
    } else {
        h->kind = HAND_FREE;
    }
    fclose(f);
}

static bool parse_hand(const char *s, SimHand *h, HapticVec2 centre) {
    if (strncmp(s, "file:", 5) == 0 && s[5] && strlen(s + 5) < sizeof hand_file) {
        snprintf(hand_file, sizeof hand_file, "%s", s + 5);
        h->kind = HAND_FREE;
        return true;
    }
    if (strcmp(s, "free") == 0) {
        h->kind = HAND_FREE;
        return true;
    }
    if (strncmp(s, "hold:", 5) == 0 && sscanf(s + 5, "%lf,%lf", &h->point.x, &h->point.y) == 2) {
        h->kind = HAND_HOLD;
        return true;
    }
    h->ramp = 0.0;
    h->point = centre;
    /* circle:R,T[,RAMP[,X,Y]]: round the workspace centre, or round (X, Y) */
    int n = strncmp(s, "circle:", 7) == 0 ? sscanf(s + 7, "%lf,%lf,%lf,%lf,%lf", &h->radius,
                                                   &h->period, &h->ramp, &h->point.x, &h->point.y)
                                          : 0;
    if ((n == 2 || n == 3 || n == 5) && h->period > 0 && h->ramp >= 0) {
        h->kind = HAND_CIRCLE;
        return true;
    }
    return false;
}

/* "T0" or "T0:T1" (T1 absent: for ever). */
static bool parse_window(const char *s, double *t0, double *t1) {
    *t1 = INFINITY;
    int n = sscanf(s, "%lf:%lf", t0, t1);
    return n >= 1 && *t0 >= 0 && *t1 > *t0;
}

static bool parse_encoder(const char *s, EncoderFault *e) {
    *e = (EncoderFault){.rng = 0x9e3779b97f4a7c15ull, .t1 = INFINITY};
    if (sscanf(s, "jitter:%d@%lf", &e->counts, &e->t0) == 2 && e->counts > 0 && e->t0 >= 0) {
        e->kind = ENC_JITTER;
        return true;
    }
    if (sscanf(s, "jump:%d@%lf", &e->counts, &e->t0) == 2 && e->counts != 0 && e->t0 >= 0) {
        e->kind = ENC_JUMP;
        return true;
    }
    if (strncmp(s, "freeze:", 7) == 0 && parse_window(s + 7, &e->t0, &e->t1)) {
        e->kind = ENC_FREEZE;
        return true;
    }
    return false;
}

static int jitter_counts(EncoderFault *e) {
    e->rng ^= e->rng << 13; /* xorshift64: reproducible, no libc state */
    e->rng ^= e->rng >> 7;
    e->rng ^= e->rng << 17;
    return (int)(e->rng % (uint64_t)(2 * e->counts + 1)) - e->counts;
}

static void apply_encoder_fault(EncoderFault *e, HapticState *s, double t) {
    if (e->kind == ENC_OK || t < e->t0 || t >= e->t1)
        return;
    e->frames++;
    switch (e->kind) {
    case ENC_JITTER:
        s->counts[0] += jitter_counts(e);
        s->counts[1] += jitter_counts(e);
        break;
    case ENC_JUMP:
        s->counts[0] += e->counts;
        break;
    case ENC_FREEZE:
        if (!e->have_frozen) {
            e->frozen[0] = s->counts[0];
            e->frozen[1] = s->counts[1];
            e->have_frozen = true;
        }
        s->counts[0] = e->frozen[0];
        s->counts[1] = e->frozen[1];
        break;
    case ENC_OK:
        break;
    }
}

static bool parse(int argc, char **argv, Options *o, HapticVec2 centre) {
    *o = (Options){.rate = 1000,
                   .watchdog = 0.05,
                   .mass_min = 0.12,
                   .mass_max = 0.26,
                   .protocol = HAPTIC_PROTOCOL_VERSION,
                   .start = centre,
                   .hand = {.kind = HAND_FREE, .stiffness = 200, .damping = 2},
                   .amp_fault_t0 = -1.0,
                   .link_fd = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--describe") == 0) {
            o->describe = true;
            continue;
        }
        if (!v)
            return false;
        i++;
        bool ok = true;
        if (strcmp(a, "--rate") == 0)
            o->rate = atof(v);
        else if (strcmp(a, "--watchdog") == 0)
            o->watchdog = atof(v);
        else if (strcmp(a, "--mass-min") == 0)
            o->mass_min = atof(v);
        else if (strcmp(a, "--mass-max") == 0)
            o->mass_max = atof(v);
        else if (strcmp(a, "--duration") == 0)
            o->duration = atof(v);
        else if (strcmp(a, "--protocol") == 0)
            o->protocol = atoi(v);
        else if (strcmp(a, "--hand-stiffness") == 0)
            o->hand.stiffness = atof(v);
        else if (strcmp(a, "--hand-damping") == 0)
            o->hand.damping = atof(v);
        else if (strcmp(a, "--start") == 0)
            ok = sscanf(v, "%lf,%lf", &o->start.x, &o->start.y) == 2;
        else if (strcmp(a, "--hand") == 0)
            ok = parse_hand(v, &o->hand, centre);
        else if (strcmp(a, "--encoder") == 0)
            ok = parse_encoder(v, &o->encoder);
        else if (strcmp(a, "--amp-fault") == 0)
            ok = parse_window(v, &o->amp_fault_t0, &o->amp_fault_t1);
        else if (strcmp(a, "--link-fd") == 0)
            ok = sscanf(v, "%d", &o->link_fd) == 1 && o->link_fd >= 0;
        else
            ok = false;
        if (!ok)
            return false;
    }
    return o->rate >= 100 && o->rate <= 20000 && o->watchdog > 0 && o->mass_min > 0 &&
           o->mass_max > o->mass_min &&
           (o->protocol == 1 || o->protocol == HAPTIC_PROTOCOL_VERSION);
}

/* Opens a pty whose slave is raw (no echo, no line editing) and stays open here, so the
 * settings hold while the host opens and closes its side. */
static int open_pty(char *slave_path, size_t size, int *slave_fd) {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
        return -1;
    const char *name = ptsname(master);
    if (!name)
        return -1;
    snprintf(slave_path, size, "%s", name);
    *slave_fd = open(slave_path, O_RDWR | O_NOCTTY);
    struct termios tio;
    if (*slave_fd < 0 || tcgetattr(*slave_fd, &tio) != 0)
        return -1;
    cfmakeraw(&tio);
    tcsetattr(*slave_fd, TCSANOW, &tio);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    return master;
}

typedef struct Counters {
    uint64_t frames, commands, dropped_frames, amp_fault_frames;
    double enabled_time;
    HapticSeqCheck command_seq; /* the host's command numbering */
} Counters;

static void read_commands(int master, HapticDecoder *dec, SimPantograph *sim, double t,
                          Counters *c) {
    uint8_t buf[512];
    ssize_t n;
    while ((n = read(master, buf, sizeof buf)) > 0) {
        size_t off = 0;
        while (off < (size_t)n) {
            HapticFrame f;
            off += haptic_decoder_feed(dec, buf + off, (size_t)n - off, &f);
            if (f.kind != HAPTIC_DECODED_COMMAND)
                continue;
            if (haptic_seq_check(&c->command_seq, f.command.seq)) {
                simpanto_command(sim, &f.command, t);
                c->commands++;
            } else if (!f.command.enable && sim->enabled) {
                /* a stale or repeated command is never applied, but "motors off" is always
                   safe to obey: zero current, disabled */
                HapticCommand stop = {
                    .seq = sim->last_command_seq, .dac = {2048, 2048}, .enable = false};
                stop.dac[0] = stop.dac[1] = (uint16_t)(1u << (sim->config.dac_bits - 1));
                simpanto_command(sim, &stop, t);
            }
        }
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run(int master, SimPantograph *sim, Options *o, Counters *c, HapticDecoder *dec) {
    double t0 = now_s(), t_prev = 0.0;
    long period_ns = (long)llround(1e9 / o->rate);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    uint16_t seq = 0;
    double hand_read_at = 0.0;
    while (!stop_signal && (o->duration <= 0 || t_prev < o->duration)) {
        deadline.tv_nsec += period_ns;
        while (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_nsec -= 1000000000L;
            deadline.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
        double t = now_s() - t0;
        if (hand_file[0] && t >= hand_read_at) {
            read_hand_file(&sim->hand);
            hand_read_at = t + HAND_FILE_PERIOD;
        }
        read_commands(master, dec, sim, t, c);
        bool amp_fault = o->amp_fault_t0 >= 0 && t >= o->amp_fault_t0 && t < o->amp_fault_t1;
        if (amp_fault) /* the amplifier cuts the current whatever the host commands */
            sim->enabled = false;
        if (sim->enabled)
            c->enabled_time += t - t_prev;
        simpanto_advance(sim, t, t - t_prev);
        t_prev = t;
        HapticState s = simpanto_state(sim, seq++, t);
        s.status |= dec->crc_errors ? HAPTIC_STATUS_BAD_COMMAND : 0;
        if (amp_fault) {
            s.status |= HAPTIC_STATUS_FAULT;
            c->amp_fault_frames++;
        }
        apply_encoder_fault(&o->encoder, &s, t);
        uint8_t frame[HAPTIC_FRAME_MAX];
        size_t len =
            o->protocol == 1 ? haptic_encode_state_v1(&s, frame) : haptic_encode_state(&s, frame);
        if (write(master, frame, len) == (ssize_t)len)
            c->frames++;
        else
            c->dropped_frames++; /* nobody reading: the pty buffer is full */
    }
}

int main(int argc, char **argv) {
    PantographConfig config = pantograph_config_default();
    Options o;
    if (!parse(argc, argv, &o, pantograph_workspace_centre(&config)))
        return usage();
    SimPantograph sim;
    if (!simpanto_init(&sim, &config, o.mass_min, o.mass_max, o.start)) {
        fprintf(stderr, "issim-pantosim: start point or mass range impossible for the linkage\n");
        return 1;
    }
    sim.hand = o.hand;
    sim.watchdog_s = o.watchdog;
    if (o.describe) {
        double lo, hi;
        simpanto_effective_mass(&sim, &lo, &hi);
        printf("effective_mass_min=%.4f effective_mass_max=%.4f rotor_inertia=%.6g "
               "handle_mass=%.4f\n",
               lo, hi, sim.rotor_inertia, sim.handle_mass);
        return 0;
    }
    char path[128];
    int slave = -1, master = o.link_fd >= 0 ? o.link_fd : open_pty(path, sizeof path, &slave);
    if (o.link_fd >= 0 && fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK) != 0) {
        fprintf(stderr, "issim-pantosim: --link-fd %d: %s\n", o.link_fd, strerror(errno));
        return 1;
    }
    if (master < 0) {
        fprintf(stderr, "issim-pantosim: cannot create a pseudo-terminal: %s\n", strerror(errno));
        return 1;
    }
    /* The simulator stands for the controller's own hardware: it should not stall because the
       host is busy. SCHED_FIFO below the servo's priority when permitted, else as is. */
    struct sched_param rt = {.sched_priority = 70};
    sched_setscheduler(0, SCHED_FIFO, &rt);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    if (o.link_fd >= 0)
        printf("LINK %d\n", o.link_fd);
    else
        printf("PTY %s\n", path);
    fflush(stdout);
    Counters c = {0};
    HapticDecoder dec;
    haptic_decoder_init(&dec);
    run(master, &sim, &o, &c, &dec);
    printf("SUMMARY frames=%llu commands=%llu bad_commands=%llu commands_lost=%llu "
           "commands_dropped=%llu protocol=%d watchdog_trips=%llu "
           "max_torque1=%.6f max_torque5=%.6f enabled_s=%.4f x=%.6f y=%.6f "
           "encoder_fault_frames=%llu amp_fault_frames=%llu\n",
           (unsigned long long)c.frames, (unsigned long long)c.commands,
           (unsigned long long)dec.crc_errors, (unsigned long long)c.command_seq.lost,
           (unsigned long long)c.command_seq.dropped, o.protocol,
           (unsigned long long)sim.watchdog_trips, sim.max_torque[0], sim.max_torque[1],
           c.enabled_time, sim.handle.x, sim.handle.y, (unsigned long long)o.encoder.frames,
           (unsigned long long)c.amp_fault_frames);
    fflush(stdout);
    if (slave >= 0)
        close(slave);
    close(master);
    return 0;
}
