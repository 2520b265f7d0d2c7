/* libusb back-end: the P2 controller as a USB device (docs/pantograph-protocol.md): vendor
 * 0x1209 product 0x7050, interface 0, interrupt IN endpoint 0x81 (state frames, 1 ms interval),
 * interrupt OUT endpoint 0x02 (command frames).
 *
 * Timing: two IN and two OUT transfers are kept in flight (pipelined asynchronous transfers),
 * so every 1 ms USB frame carries one exchange while the servo never blocks on the bus: a read
 * runs libusb's event handling for at most the caller's timeout and takes the newest state
 * the completion callbacks decoded; a write fills whichever OUT transfer is free (both busy:
 * the command is dropped and counted; the device's watchdog covers a stuck bus).
 *
 * Hot-plug: a LEFT callback marks the device gone, so the next read reports the unplug and the
 * servo goes to its safe state. This VM has no USB at all (PLATFORM.md): tests/test_haptics_usb.c
 * runs this back-end against a device emulated with umockdev (docs/haptics.md).
 */
#include <libusb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"

#define USB_EP_IN 0x81
#define USB_EP_OUT 0x02
#define USB_PIPELINE 2
#define USB_PACKET 64 /* wMaxPacketSize of both endpoints: one frame (<= 26 bytes) per packet */
_Static_assert(HAPTIC_FRAME_MAX <= USB_PACKET, "a protocol frame must fit one USB packet");

typedef struct UsbLink {
    libusb_context *ctx;
    libusb_device_handle *handle;
    libusb_hotplug_callback_handle hotplug;
    bool hotplug_registered;
    bool unplugged;
    int transfer_error;
    HapticDevice *dev;
    HapticDecoder decoder;
    struct libusb_transfer *in[USB_PIPELINE];
    struct libusb_transfer *out[USB_PIPELINE];
    bool out_busy[USB_PIPELINE];
    int in_flight;
    uint8_t in_buf[USB_PIPELINE][USB_PACKET];
    uint8_t out_buf[USB_PIPELINE][USB_PACKET];
    uint16_t vid, pid;
} UsbLink;

static void LIBUSB_CALL on_in(struct libusb_transfer *t) {
    UsbLink *link = t->user_data;
    link->in_flight--;
    if (t->status == LIBUSB_TRANSFER_COMPLETED) {
        size_t off = 0, n = (size_t)t->actual_length;
        while (off < n) {
            HapticFrame frame;
            off += haptic_decoder_feed(&link->decoder, t->buffer + off, n - off, &frame);
            if (frame.kind == HAPTIC_DECODED_STATE)
                haptic_device_accept_state(link->dev, &frame.state);
        }
    } else if (t->status == LIBUSB_TRANSFER_NO_DEVICE) {
        link->unplugged = true;
        return;
    } else if (t->status != LIBUSB_TRANSFER_CANCELLED && t->status != LIBUSB_TRANSFER_TIMED_OUT) {
        link->transfer_error = (int)t->status;
    }
    if (!link->unplugged && t->status != LIBUSB_TRANSFER_CANCELLED &&
        libusb_submit_transfer(t) == 0)
        link->in_flight++;
}

static void LIBUSB_CALL on_out(struct libusb_transfer *t) {
    UsbLink *link = t->user_data;
    for (int i = 0; i < USB_PIPELINE; i++)
        if (link->out[i] == t)
            link->out_busy[i] = false;
    if (t->status == LIBUSB_TRANSFER_NO_DEVICE)
        link->unplugged = true;
}

static int LIBUSB_CALL on_hotplug(libusb_context *ctx, libusb_device *device,
                                  libusb_hotplug_event event, void *user) {
    (void)ctx;
    (void)device;
    UsbLink *link = user;
    if (event == LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT)
        link->unplugged = true;
    return 0;
}

static IssimStatus usb_read(HapticDevice *dev, double timeout_s, IssimError *err) {
    UsbLink *link = dev->impl;
    double deadline = issim_wall_time() + timeout_s;
    do {
        double left = deadline - issim_wall_time();
        struct timeval tv = {0, left > 0 ? (suseconds_t)(left * 1e6) : 0};
        libusb_handle_events_timeout_completed(link->ctx, &tv, NULL);
        if (link->unplugged)
            return issim_error_set(err, ISSIM_ERR_IO, "%s: the pantograph was unplugged",
                                   dev->caps.name);
        if (link->transfer_error)
            return issim_error_set(err, ISSIM_ERR_IO, "%s: USB transfer failed: %s", dev->caps.name,
                                   libusb_error_name(link->transfer_error));
    } while (!dev->got_fresh && issim_wall_time() < deadline);
    return ISSIM_OK;
}

static IssimStatus usb_write(HapticDevice *dev, const HapticCommand *cmd, IssimError *err) {
    UsbLink *link = dev->impl;
    if (link->unplugged)
        return issim_error_set(err, ISSIM_ERR_IO, "%s: the pantograph was unplugged",
                               dev->caps.name);
    for (int i = 0; i < USB_PIPELINE; i++) {
        if (link->out_busy[i])
            continue;
        size_t n = haptic_encode_command(cmd, link->out_buf[i]);
        libusb_fill_interrupt_transfer(link->out[i], link->handle, USB_EP_OUT, link->out_buf[i],
                                       (int)n, on_out, link, 10);
        int rc = libusb_submit_transfer(link->out[i]);
        if (rc != 0)
            return issim_error_set(err, ISSIM_ERR_IO, "%s: cannot send a command: %s",
                                   dev->caps.name, libusb_error_name(rc));
        link->out_busy[i] = true;
        return ISSIM_OK;
    }
    dev->dropped_commands++;
    return ISSIM_OK;
}

static void usb_release(UsbLink *link) {
    if (link->handle) {
        for (int i = 0; i < USB_PIPELINE; i++) {
            if (link->in[i])
                libusb_cancel_transfer(link->in[i]);
            if (link->out[i] && link->out_busy[i])
                libusb_cancel_transfer(link->out[i]);
        }
        /* let the cancellations complete before freeing */
        for (int tries = 0;
             tries < 50 && (link->in_flight > 0 || link->out_busy[0] || link->out_busy[1]);
             tries++) {
            struct timeval tv = {0, 2000};
            libusb_handle_events_timeout_completed(link->ctx, &tv, NULL);
        }
        libusb_release_interface(link->handle, 0);
        libusb_close(link->handle);
    }
    for (int i = 0; i < USB_PIPELINE; i++) {
        libusb_free_transfer(link->in[i]);
        libusb_free_transfer(link->out[i]);
    }
    if (link->hotplug_registered)
        libusb_hotplug_deregister_callback(link->ctx, link->hotplug);
    if (link->ctx)
        libusb_exit(link->ctx);
    free(link);
}

static void usb_close(HapticDevice *dev) {
    usb_release(dev->impl);
}

static const HapticDeviceOps usb_ops = {usb_read, usb_write, usb_close};

static bool parse_ids(const char *ids, uint16_t *vid, uint16_t *pid) {
    *vid = HAPTIC_USB_VID;
    *pid = HAPTIC_USB_PID;
    if (!ids)
        return true;
    unsigned v, p;
    char tail;
    if (sscanf(ids, "%x:%x%c", &v, &p, &tail) != 2 || v > 0xFFFF || p > 0xFFFF)
        return false;
    *vid = (uint16_t)v;
    *pid = (uint16_t)p;
    return true;
}

/* Finds and opens the device; the message says how many USB devices were seen. */
static IssimStatus find_device(UsbLink *link, char *name, size_t name_size, IssimError *err) {
    libusb_device **list;
    ssize_t count = libusb_get_device_list(link->ctx, &list);
    if (count < 0)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot list USB devices: %s",
                               libusb_error_name((int)count));
    libusb_device *found = NULL;
    for (ssize_t i = 0; i < count && !found; i++) {
        struct libusb_device_descriptor d;
        if (libusb_get_device_descriptor(list[i], &d) == 0 && d.idVendor == link->vid &&
            d.idProduct == link->pid)
            found = list[i];
    }
    int rc = found ? libusb_open(found, &link->handle) : LIBUSB_ERROR_NOT_FOUND;
    if (found)
        snprintf(name, name_size, "usb %04x:%04x bus %d addr %d", link->vid, link->pid,
                 libusb_get_bus_number(found), libusb_get_device_address(found));
    libusb_free_device_list(list, 1);
    if (!found)
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                               "no P2 pantograph (USB %04x:%04x) found: %zd USB devices "
                               "enumerated%s; plug it in, or use --device sim or serial:PATH",
                               link->vid, link->pid, count,
                               count == 0 ? " (this machine may have no USB support)" : "");
    if (rc != 0)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot open the pantograph %s: %s", name,
                               libusb_error_name(rc));
    libusb_set_auto_detach_kernel_driver(link->handle, 1);
    rc = libusb_claim_interface(link->handle, 0);
    if (rc != 0)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot claim interface 0 of %s: %s", name,
                               libusb_error_name(rc));
    return ISSIM_OK;
}

static IssimStatus start_transfers(UsbLink *link, IssimError *err) {
    for (int i = 0; i < USB_PIPELINE; i++) {
        link->in[i] = libusb_alloc_transfer(0);
        link->out[i] = libusb_alloc_transfer(0);
        if (!link->in[i] || !link->out[i])
            return issim_error_set(err, ISSIM_ERR_NOMEM, "cannot allocate USB transfers");
        libusb_fill_interrupt_transfer(link->in[i], link->handle, USB_EP_IN, link->in_buf[i],
                                       USB_PACKET, on_in, link, 0);
        int rc = libusb_submit_transfer(link->in[i]);
        if (rc != 0)
            return issim_error_set(err, ISSIM_ERR_IO, "cannot start USB reads: %s",
                                   libusb_error_name(rc));
        link->in_flight++;
    }
    return ISSIM_OK;
}

HapticDevice *haptic_usb_open(const char *ids, const PantographConfig *config, IssimError *err) {
    UsbLink *link = calloc(1, sizeof *link);
    if (!link) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (!parse_ids(ids, &link->vid, &link->pid)) {
        issim_error_set(err, ISSIM_ERR_INVALID, "bad USB ids '%s': expected VID:PID in hex", ids);
        free(link);
        return NULL;
    }
    int rc = libusb_init(&link->ctx);
    if (rc != 0) {
        issim_error_set(err, ISSIM_ERR_IO, "cannot initialise libusb: %s", libusb_error_name(rc));
        link->ctx = NULL;
        usb_release(link);
        return NULL;
    }
    haptic_decoder_init(&link->decoder);
    if (libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG) &&
        libusb_hotplug_register_callback(link->ctx, LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT, 0, link->vid,
                                         link->pid, LIBUSB_HOTPLUG_MATCH_ANY, on_hotplug, link,
                                         &link->hotplug) == 0)
        link->hotplug_registered = true;
    char name[64] = "usb";
    HapticDevice *dev = NULL;
    if (find_device(link, name, sizeof name, err) == ISSIM_OK &&
        (dev = haptic_device_new(&usb_ops, config, link)) != NULL) {
        link->dev = dev;
        dev->decoder = &link->decoder;
        issim_strlcpy(dev->caps.name, name, sizeof dev->caps.name);
        dev->caps.has_watchdog = true;
        dev->caps.can_actuate = true;
        dev->caps.watchdog_s = 0.05;
        HapticSample first;
        IssimError read_err = {0};
        if (start_transfers(link, err) == ISSIM_OK &&
            haptic_device_read(dev, 0.5, &first, &read_err) == ISSIM_OK)
            return dev;
        if (haptic_device_foreign_protocol(dev))
            haptic_device_protocol_error(dev, err);
        else if (link->in_flight > 0)
            issim_error_set(err, ISSIM_ERR_IO, "%s: no frames within 0.5 s (%s)", name,
                            read_err.message);
        free(dev);
    }
    usb_release(link);
    return NULL;
}
