/* Serial back-end: a tty (a CDC-ACM pantograph controller), a pseudo-terminal (the device
 * simulator tools/pantosim run on its own), or the stream socket issim shares with a simulator
 * it started itself ("link:FD"), carrying the frames of docs/pantograph-protocol.md unchanged.
 *
 * Why a socket for the simulator issim starts: a pty delivers nothing until the kernel's
 * buffer-flush work has run in an ordinary kworker, which a busy machine delays by up to 250 ms
 * (the servo then declares the link lost); a real controller's frames come through the USB
 * host's interrupt path. A UNIX socket hands the bytes to the reader at write(), as a device
 * would (docs/haptics.md, "The simulated device").
 *
 * The line is raw and non-blocking. A read drains everything the device streamed since the
 * last period and keeps the newest state frame (older ones are history the servo does not
 * need); when nothing new has arrived it waits with select() (microsecond timeout) for at
 * most the given time. End of file, EIO or a hang-up on the line mean the other end is gone.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "device_internal.h"

typedef struct SerialLink {
    int fd;
    bool socket; /* a stream socket: read until EAGAIN; send() without SIGPIPE */
    HapticDecoder decoder;
    char path[256];
} SerialLink;

static IssimStatus link_gone(HapticDevice *dev, const char *why, IssimError *err) {
    return issim_error_set(err, ISSIM_ERR_IO, "%s: %s (device closed the link or was unplugged)",
                           dev->caps.name, why);
}

/* Reads what is there. Returns ISSIM_OK, or an error when the link is gone.
 *
 * Only what the line discipline already holds is read (FIONREAD): a read() that finds nothing
 * makes the kernel wait for the tty's buffer-flush work (n_tty_read -> tty_buffer_flush_work),
 * which runs in an ordinary kworker, so a SCHED_FIFO servo was blocked behind every busy thread
 * of the machine, for tens of milliseconds with the GUI drawing (docs/performance.md). A frame
 * still in the flip buffer is taken next period instead. A closed link (the other end gone, a
 * hangup) makes FIONREAD fail; the read() that follows then returns end of file or the error. */
static IssimStatus drain(HapticDevice *dev, IssimError *err) {
    SerialLink *link = dev->impl;
    uint8_t bytes[512];
    for (;;) {
        int pending = 0;
        if (!link->socket && ioctl(link->fd, FIONREAD, &pending) == 0 && pending <= 0)
            return ISSIM_OK;
        size_t want =
            pending > 0 && (size_t)pending < sizeof bytes ? (size_t)pending : sizeof bytes;
        ssize_t n = read(link->fd, bytes, want);
        if (n == 0)
            return link_gone(dev, "end of file", err);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return ISSIM_OK;
            if (errno == EINTR)
                continue;
            return link_gone(dev, strerror(errno), err);
        }
        size_t off = 0;
        while (off < (size_t)n) {
            HapticFrame frame;
            off += haptic_decoder_feed(&link->decoder, bytes + off, (size_t)n - off, &frame);
            if (frame.kind == HAPTIC_DECODED_STATE)
                haptic_device_accept_state(dev, &frame.state);
        }
    }
}

static IssimStatus serial_read(HapticDevice *dev, double timeout_s, IssimError *err) {
    SerialLink *link = dev->impl;
    double deadline = issim_wall_time() + timeout_s;
    for (;;) {
        IssimStatus s = drain(dev, err);
        if (s != ISSIM_OK || dev->got_fresh)
            return s;
        double left = deadline - issim_wall_time();
        if (left <= 0.0)
            return ISSIM_OK;
        fd_set in;
        FD_ZERO(&in);
        FD_SET(link->fd, &in);
        struct timeval tv = {.tv_sec = (time_t)left,
                             .tv_usec = (suseconds_t)((left - (double)(time_t)left) * 1e6)};
        if (select(link->fd + 1, &in, NULL, NULL, &tv) < 0 && errno != EINTR)
            return link_gone(dev, strerror(errno), err);
    }
}

static IssimStatus serial_write(HapticDevice *dev, const HapticCommand *cmd, IssimError *err) {
    SerialLink *link = dev->impl;
    uint8_t frame[HAPTIC_FRAME_MAX];
    size_t n = haptic_encode_command(cmd, frame);
    ssize_t w = link->socket ? send(link->fd, frame, n, MSG_NOSIGNAL) : write(link->fd, frame, n);
    if (w == (ssize_t)n)
        return ISSIM_OK;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        dev->dropped_commands++; /* the device's watchdog covers a stuck line */
        return ISSIM_OK;
    }
    if (w >= 0) {
        dev->dropped_commands++; /* partial: the decoder on the device resynchronises */
        return ISSIM_OK;
    }
    return link_gone(dev, strerror(errno), err);
}

static void serial_close(HapticDevice *dev) {
    SerialLink *link = dev->impl;
    close(link->fd);
    free(link);
}

static const HapticDeviceOps serial_ops = {serial_read, serial_write, serial_close};

/* The device on an open, non-blocking line; takes fd (closed on failure). */
static HapticDevice *serial_attach(int fd, bool socket, const char *name,
                                   const PantographConfig *config, IssimError *err) {
    SerialLink *link = calloc(1, sizeof *link);
    HapticDevice *dev = link ? haptic_device_new(&serial_ops, config, link) : NULL;
    if (!dev) {
        free(link);
        close(fd);
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    link->fd = fd;
    link->socket = socket;
    haptic_decoder_init(&link->decoder);
    dev->decoder = &link->decoder;
    issim_strlcpy(link->path, name, sizeof link->path);
    snprintf(dev->caps.name, sizeof dev->caps.name, "serial %s", name);
    dev->caps.has_watchdog = true;
    dev->caps.can_actuate = true;
    dev->caps.watchdog_s = 0.05;
    /* The first frame proves a pantograph is on the line. */
    HapticSample first;
    IssimError read_err;
    if (haptic_device_read(dev, 0.5, &first, &read_err) != ISSIM_OK) {
        if (haptic_device_foreign_protocol(dev))
            haptic_device_protocol_error(dev, err);
        else
            issim_error_set(err, ISSIM_ERR_IO, "%s: no pantograph frames within 0.5 s (%s)",
                            dev->caps.name, read_err.message);
        serial_close(dev);
        free(dev);
        return NULL;
    }
    return dev;
}

HapticDevice *haptic_serial_open(const char *path, const PantographConfig *config,
                                 IssimError *err) {
    int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        issim_error_set(err, ISSIM_ERR_IO, "cannot open serial device %s: %s", path,
                        strerror(errno));
        return NULL;
    }
    struct termios tio;
    if (!isatty(fd) || tcgetattr(fd, &tio) != 0) {
        issim_error_set(err, ISSIM_ERR_IO, "%s is not a serial line (tty or pty)", path);
        close(fd);
        return NULL;
    }
    cfmakeraw(&tio);
    cfsetispeed(&tio, B921600);
    cfsetospeed(&tio, B921600);
    /* VMIN = 1: with O_NONBLOCK an empty line gives EAGAIN, so a 0 return really is the end
       of the file (VMIN = 0 would return 0 whenever nothing is waiting) */
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    tcsetattr(fd, TCSANOW, &tio);
    tcflush(fd, TCIOFLUSH);
    return serial_attach(fd, false, path, config, err);
}

HapticDevice *haptic_link_open(const char *fd_text, const PantographConfig *config,
                               IssimError *err) {
    char *end = NULL;
    long fd = strtol(fd_text, &end, 10);
    int type = 0;
    socklen_t len = sizeof type;
    if (end == fd_text || *end != '\0' || fd < 0 || fd > 65535 ||
        getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) {
        issim_error_set(err, ISSIM_ERR_INVALID,
                        "link:%s is not an open stream socket (link:FD is the descriptor of "
                        "a simulator issim started)",
                        fd_text);
        return NULL;
    }
    /* the device owns a copy: closing it leaves the simulator's end to its owner */
    int own = fcntl((int)fd, F_DUPFD_CLOEXEC, 3);
    if (own < 0 || fcntl(own, F_SETFL, fcntl(own, F_GETFL) | O_NONBLOCK) != 0) {
        issim_error_set(err, ISSIM_ERR_IO, "link:%s: %s", fd_text, strerror(errno));
        if (own >= 0)
            close(own);
        return NULL;
    }
    char name[32];
    snprintf(name, sizeof name, "link:%ld", fd);
    return serial_attach(own, true, name, config, err);
}
