/* The device interface: one table of operations per back-end (serial.c, usb.c, playback.c),
 * the spec parser, and the state bookkeeping every back-end shares (newest frame, unwrapped
 * device clock, silence detection). docs/pantograph-protocol.md defines the frames. */
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"

HapticDevice *haptic_device_new(const HapticDeviceOps *ops, const PantographConfig *config,
                                void *impl) {
    HapticDevice *dev = calloc(1, sizeof *dev);
    if (!dev)
        return NULL;
    dev->ops = ops;
    dev->config = *config;
    dev->impl = impl;
    dev->opened_at = issim_wall_time();
    dev->caps.counts_per_rev = config->counts_per_rev;
    dev->caps.dac_bits = config->dac_bits;
    dev->caps.rate_hz = 1000.0;
    return dev;
}

void haptic_device_accept_state(HapticDevice *dev, const HapticState *s) {
    if (s->protocol != HAPTIC_PROTOCOL_VERSION) {
        dev->foreign_protocol = s->protocol;
        return;
    }
    if (!haptic_seq_check(&dev->state_seq, s->seq))
        return; /* a repeat or an older frame: never applied */
    if (!dev->have_state)
        dev->command_seq = s->last_command_seq; /* continue the device's command numbering */
    if (dev->have_state)
        dev->device_time += (double)(uint32_t)(s->timestamp_us - dev->last_timestamp_us) * 1e-6;
    else
        dev->device_time = s->timestamp_us * 1e-6;
    dev->last_timestamp_us = s->timestamp_us;
    dev->last.state = *s;
    dev->last.t = dev->device_time;
    dev->last.host_t = issim_wall_time();
    dev->have_state = true;
    dev->got_fresh = true;
}

HapticDevice *haptic_device_open(const char *spec, const PantographConfig *config,
                                 IssimError *err) {
    if (pantograph_config_check(config, err) != ISSIM_OK)
        return NULL;
    if (!spec || !*spec) {
        issim_error_set(err, ISSIM_ERR_INVALID,
                        "no device given (usb, serial:PATH, playback:FILE)");
        return NULL;
    }
    if (strcmp(spec, "usb") == 0 || strncmp(spec, "usb:", 4) == 0)
        return haptic_usb_open(spec[3] ? spec + 4 : NULL, config, err);
    if (strncmp(spec, "serial:", 7) == 0)
        return haptic_serial_open(spec + 7, config, err);
    if (strncmp(spec, "link:", 5) == 0)
        return haptic_link_open(spec + 5, config, err);
    if (strncmp(spec, "playback:", 9) == 0)
        return haptic_playback_open(spec + 9, config, err);
    issim_error_set(err, ISSIM_ERR_INVALID,
                    "unknown device '%s': expected usb[:VID:PID], serial:PATH or playback:FILE",
                    spec);
    return NULL;
}

int haptic_device_foreign_protocol(const HapticDevice *dev) {
    if (dev->foreign_protocol)
        return dev->foreign_protocol;
    /* two, so that one corrupted protocol-2 frame whose bytes happen to pass the CRC-16 (one
       in 65,536 of them) cannot get a good device refused */
    if (dev->decoder && dev->decoder->v1_frames >= 2 && !dev->have_state)
        return 1;
    return 0;
}

IssimStatus haptic_device_protocol_error(const HapticDevice *dev, IssimError *err) {
    return issim_error_set(err, ISSIM_ERR_IO,
                           "%s: device speaks protocol %d, issim needs %d: update the firmware "
                           "or the simulator",
                           dev->caps.name, haptic_device_foreign_protocol(dev),
                           HAPTIC_PROTOCOL_VERSION);
}

IssimStatus haptic_device_read(HapticDevice *dev, double timeout_s, HapticSample *out,
                               IssimError *err) {
    dev->got_fresh = false;
    IssimStatus s = dev->ops->read(dev, timeout_s, err);
    if (s != ISSIM_OK)
        return s;
    if (haptic_device_foreign_protocol(dev))
        return haptic_device_protocol_error(dev, err);
    double now = issim_wall_time();
    double since = dev->have_state ? now - dev->last.host_t : now - dev->opened_at;
    if (!dev->got_fresh && since > HAPTIC_DEVICE_SILENCE_S)
        return issim_error_set(err, ISSIM_ERR_IO, "%s: no frame for %.0f ms: link lost",
                               dev->caps.name, 1e3 * since);
    if (!dev->have_state)
        return issim_error_set(err, ISSIM_ERR_STATE, "%s: no frame received yet", dev->caps.name);
    *out = dev->last;
    out->fresh = dev->got_fresh;
    if (!out->fresh)
        out->state.status |= HAPTIC_STATUS_HOST_STALE;
    return ISSIM_OK;
}

IssimStatus haptic_device_write(HapticDevice *dev, HapticCommand *cmd, IssimError *err) {
    cmd->seq = ++dev->command_seq;
    dev->commands_sent++;
    return dev->ops->write(dev, cmd, err);
}

HapticLinkStats haptic_device_link_stats(const HapticDevice *dev) {
    HapticLinkStats s = {.seq_gaps = dev->state_seq.gaps,
                         .seq_lost = dev->state_seq.lost,
                         .seq_dropped = dev->state_seq.dropped,
                         .commands_sent = dev->commands_sent};
    if (dev->decoder) {
        s.frames = dev->decoder->frames;
        s.crc_errors = dev->decoder->crc_errors;
        s.bad_length = dev->decoder->bad_length;
        s.v1_frames = dev->decoder->v1_frames;
    } else {
        s.frames = dev->state_seq.in_order;
    }
    return s;
}

HapticDeviceCaps haptic_device_caps(const HapticDevice *dev) {
    return dev->caps;
}

void haptic_device_close(HapticDevice *dev) {
    if (!dev)
        return;
    if (dev->caps.can_actuate) {
        HapticCommand off = {.seq = 0, .dac = {2048, 2048}, .enable = false};
        off.dac[0] = off.dac[1] = (uint16_t)(1u << (dev->config.dac_bits - 1));
        haptic_device_write(dev, &off, NULL);
    }
    dev->ops->close(dev);
    free(dev);
}
