/* The libusb back-end (src/haptics/usb.c) against an emulated USB pantograph: umockdev
 * (LD_PRELOAD, started through umockdev-wrapper) puts a USB device with our VID:PID in a mock
 * sysfs and udev, and answers the usbdevfs ioctls libusb sends to its device node
 * (/dev/bus/usb/001/002) from the handler below. The handler is the device's USB side only: it
 * queues the URBs libusb submits, fills IN URBs with state frames of the simulated pantograph
 * (tools/pantosim's physics, the protocol's codec) once per 1 ms frame of the device's clock,
 * and applies the command frames of OUT URBs to the simulated motors. Nothing of src/haptics is
 * replaced: discovery, descriptors, claiming, asynchronous transfers, hot-plug and errors all
 * go through libusb and usb.c as they do with a real device. `issim device usb`, started as a
 * child, inherits the preload and the testbed and reaches the same emulated device.
 *
 * Emulated like the kernel's usbfs does for a real device: an unplug completes the URBs in
 * flight with -ESHUTDOWN and fails every later call with ENODEV, and the udev "remove" event
 * reaches libusb's hot-plug monitor; a stalled endpoint completes its URBs with -EPIPE until
 * the host clears the halt. The device's frame pacing uses the monotonic clock; the tests
 * count frames and never time anything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#ifdef ISSIM_HAVE_UMOCKDEV
#include <errno.h>
#include <linux/ioctl.h>
#include <linux/usbdevice_fs.h>
#include <sys/ioctl.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <umockdev.h>

#include "issim/haptics_device.h"
#include "issim/haptics_servo.h"
#include "pantosim_model.h"

#define DEVICE_PATH "/devices/pci0000:00/0000:00:14.0/usb1/1-1"
#define SYSFS_PATH "/sys" DEVICE_PATH
#define DEV_NODE "/dev/bus/usb/001/002"
#define EP_IN 0x81
#define EP_OUT 0x02
#define MAX_URBS 16

/* Descriptors of docs/pantograph-protocol.md ("USB identity"): device 1209:7050, one
 * configuration with interface 0 (vendor class) and interrupt endpoints 0x81 IN and 0x02 OUT,
 * 64-byte packets, bInterval 1. sysfs serves them in the "descriptors" attribute, as Linux does. */
static const char *const DEVICE_DESCRIPTION =
    "P: " DEVICE_PATH "\n"
    "N: bus/usb/001/002\n"
    "E: SUBSYSTEM=usb\n"
    "E: DEVTYPE=usb_device\n"
    "E: DEVNAME=" DEV_NODE "\n"
    "E: BUSNUM=001\n"
    "E: DEVNUM=002\n"
    "E: PRODUCT=1209/7050/100\n"
    "A: busnum=1\n"
    "A: devnum=2\n"
    "A: idVendor=1209\n"
    "A: idProduct=7050\n"
    "A: speed=12\n"
    "A: bConfigurationValue=1\n"
    "A: bNumConfigurations=1\n"
    "A: manufacturer=issim\n"
    "A: product=P2 pantograph controller\n"
    "H: descriptors=1201000200000040091250700001010203010902200001010080320904000002FF000000"
    "0705810340000107050203400001\n";

typedef struct EmulatedUrb {
    UMockdevIoctlData *urb;    /* struct usbdevfs_urb in the client (libusb) */
    UMockdevIoctlData *buffer; /* its data buffer */
} EmulatedUrb;

/* The emulated pantograph. Written by the handler (umockdev's worker thread) and by the test
 * thread (reset, unplug, stall), read by both: every field under pantograph_lock (a pthread
 * mutex, which ThreadSanitizer understands). */
typedef struct UsbPantograph {
    SimPantograph sim;
    int protocol;        /* of the state frames it sends */
    bool unplugged;      /* the cable is out: URBs end with -ESHUTDOWN, calls fail ENODEV */
    bool in_halted;      /* endpoint 0x81 stalled: its URBs end with -EPIPE */
    gint64 start_us;     /* monotonic clock at the first frame */
    double t;            /* device clock, s */
    double next_frame_t; /* when the next state frame is latched */
    uint16_t seq;        /* of the next state frame */
    EmulatedUrb in[MAX_URBS], done[MAX_URBS];
    int n_in, n_done;
    HapticDecoder commands;
    HapticSeqCheck command_seq;
    /* what the host did, for the assertions */
    uint64_t frames_sent, stalls_sent, commands_applied, claims, halts_cleared;
    HapticCommand last_command;
} UsbPantograph;

static UMockdevTestbed *testbed;
static UsbPantograph pantograph;
static pthread_mutex_t pantograph_lock = PTHREAD_MUTEX_INITIALIZER;
static HapticServo *servo_under_test; /* destroyed by teardown */

static void pantograph_reset(UsbPantograph *p, int protocol) {
    PantographConfig c = pantograph_config_default();
    SimPantograph sim;
    assert_true(simpanto_init(&sim, &c, 0.12, 0.26, pantograph_workspace_centre(&c)));
    pthread_mutex_lock(&pantograph_lock);
    for (int i = 0; i < p->n_in; i++) {
        g_object_unref(p->in[i].urb);
        g_object_unref(p->in[i].buffer);
    }
    for (int i = 0; i < p->n_done; i++) {
        g_object_unref(p->done[i].urb);
        g_object_unref(p->done[i].buffer);
    }
    memset(p, 0, sizeof *p);
    p->sim = sim;
    /* a hand holds the handle at the centre (200 N/m): however late the host runs, a push
       of 0.3 N moves it 1.5 mm, never into the workspace's edge where the servo fades forces */
    p->sim.hand = (SimHand){.kind = HAND_HOLD,
                            .point = pantograph_workspace_centre(&c),
                            .stiffness = 200,
                            .damping = 2};
    p->sim.watchdog_s = 0.05;
    p->protocol = protocol;
    p->start_us = -1;
    haptic_decoder_init(&p->commands);
    pthread_mutex_unlock(&pantograph_lock);
}

static void complete_urb(UsbPantograph *p, EmulatedUrb u, int status) {
    struct usbdevfs_urb *urb = (struct usbdevfs_urb *)u.urb->data;
    urb->status = status;
    if (status != 0)
        urb->actual_length = 0;
    p->done[p->n_done++] = u;
}

/* The device's frame clock: every 1 ms it latches the encoders and the oldest IN URB carries
 * the state frame (a host that polls late gets the newest frame, as from a real device). */
static void fill_due_in_urbs(UsbPantograph *p) {
    gint64 now = g_get_monotonic_time();
    if (p->start_us < 0)
        p->start_us = now;
    double t = 1e-6 * (double)(now - p->start_us);
    if (p->n_in == 0 || t < p->next_frame_t)
        return;
    p->next_frame_t = (floor(t * 1e3) + 1.0) * 1e-3; /* the device's 1 ms frame grid */
    EmulatedUrb u = p->in[0];
    memmove(p->in, p->in + 1, (size_t)(--p->n_in) * sizeof p->in[0]);
    if (p->in_halted) {
        p->stalls_sent++;
        complete_urb(p, u, -EPIPE);
        return;
    }
    simpanto_advance(&p->sim, t, t - p->t);
    p->t = t;
    HapticState s = simpanto_state(&p->sim, p->seq++, t);
    uint8_t frame[HAPTIC_FRAME_MAX];
    size_t n =
        p->protocol == 1 ? haptic_encode_state_v1(&s, frame) : haptic_encode_state(&s, frame);
    struct usbdevfs_urb *urb = (struct usbdevfs_urb *)u.urb->data;
    if ((int)n > urb->buffer_length) { /* as usbfs: the frame did not fit the host's buffer */
        complete_urb(p, u, -EOVERFLOW);
        return;
    }
    umockdev_ioctl_data_update(u.buffer, 0, frame, (int)n);
    urb->actual_length = (int)n;
    p->frames_sent++;
    complete_urb(p, u, 0);
}

/* An OUT URB carries one command frame, applied at once (the device applies the newest). */
static void apply_out_urb(UsbPantograph *p, EmulatedUrb u) {
    struct usbdevfs_urb *urb = (struct usbdevfs_urb *)u.urb->data;
    size_t off = 0, n = (size_t)urb->buffer_length;
    while (off < n) {
        HapticFrame f;
        off += haptic_decoder_feed(&p->commands, u.buffer->data + off, n - off, &f);
        if (f.kind == HAPTIC_DECODED_COMMAND && haptic_seq_check(&p->command_seq, f.command.seq)) {
            simpanto_command(&p->sim, &f.command, p->t);
            p->last_command = f.command;
            p->commands_applied++;
        }
    }
    urb->actual_length = urb->buffer_length;
    complete_urb(p, u, 0);
}

static int submit_urb(UsbPantograph *p, UMockdevIoctlData *data) {
    if (p->unplugged)
        return ENODEV;
    struct usbdevfs_urb *urb = (struct usbdevfs_urb *)data->data;
    if (urb->type != USBDEVFS_URB_TYPE_INTERRUPT ||
        (urb->endpoint != EP_IN && urb->endpoint != EP_OUT))
        return EINVAL;
    GError *error = NULL;
    UMockdevIoctlData *buffer = umockdev_ioctl_data_resolve(
        data, offsetof(struct usbdevfs_urb, buffer), (gsize)urb->buffer_length, &error);
    if (!buffer) {
        fprintf(stderr, "emulated pantograph: cannot read the URB buffer: %s\n", error->message);
        g_error_free(error);
        return EFAULT;
    }
    if (p->n_in + p->n_done >= MAX_URBS) {
        g_object_unref(buffer);
        return ENOMEM;
    }
    EmulatedUrb u = {g_object_ref(data), buffer};
    if (urb->endpoint == EP_OUT)
        apply_out_urb(p, u);
    else
        p->in[p->n_in++] = u;
    return 0;
}

/* Hands libusb the oldest completed URB (its address written where the argument points). */
static int reap_urb(UsbPantograph *p, UMockdevIoctlData *data) {
    fill_due_in_urbs(p);
    if (p->n_done == 0)
        return p->unplugged ? ENODEV : EAGAIN;
    EmulatedUrb u = p->done[0];
    p->n_done--;
    memmove(p->done, p->done + 1, (size_t)p->n_done * sizeof p->done[0]);
    umockdev_ioctl_data_set_ptr(data, 0, u.urb);
    g_object_unref(u.urb);
    g_object_unref(u.buffer);
    return 0;
}

static int discard_urb(UsbPantograph *p, gulong client_addr) {
    for (int i = 0; i < p->n_in; i++) {
        if (p->in[i].urb->client_addr != client_addr)
            continue;
        EmulatedUrb u = p->in[i];
        memmove(p->in + i, p->in + i + 1, (size_t)(--p->n_in - i) * sizeof p->in[0]);
        complete_urb(p, u, -ENOENT);
        return 0;
    }
    return EINVAL;
}

static int handle_request(UsbPantograph *p, gulong request, UMockdevIoctlData *arg,
                          UMockdevIoctlData *data) {
    if (p->unplugged && request != USBDEVFS_REAPURBNDELAY && request != USBDEVFS_REAPURB)
        return ENODEV;
    switch (request) {
    case USBDEVFS_GET_CAPABILITIES:
        *(uint32_t *)data->data = USBDEVFS_CAP_REAP_AFTER_DISCONNECT;
        return 0;
    case USBDEVFS_DISCONNECT_CLAIM:
    case USBDEVFS_CLAIMINTERFACE:
        p->claims++;
        return 0;
    case USBDEVFS_RELEASEINTERFACE:
    case USBDEVFS_SETINTERFACE:
    case USBDEVFS_SETCONFIGURATION:
    case USBDEVFS_RESETEP:
        return 0;
    case USBDEVFS_CLEAR_HALT:
        if (*(unsigned *)data->data == EP_IN) {
            p->in_halted = false;
            p->halts_cleared++;
        }
        return 0;
    case USBDEVFS_SUBMITURB:
        return submit_urb(p, data);
    case USBDEVFS_REAPURB:
    case USBDEVFS_REAPURBNDELAY:
        return reap_urb(p, data);
    case USBDEVFS_DISCARDURB:
        return discard_urb(p, *(gulong *)arg->data);
    default:
        return ENOTTY;
    }
}

static gboolean on_ioctl(UMockdevIoctlBase *handler, UMockdevIoctlClient *client, gpointer user) {
    (void)handler;
    UsbPantograph *p = user;
    gulong request = umockdev_ioctl_client_get_request(client);
    UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(client);
    GError *error = NULL;
    UMockdevIoctlData *data = NULL;
    if (request != USBDEVFS_DISCARDURB && _IOC_SIZE(request) > 0) {
        data = umockdev_ioctl_data_resolve(arg, 0, _IOC_SIZE(request), &error);
        if (!data) {
            fprintf(stderr, "emulated pantograph: bad ioctl argument: %s\n", error->message);
            g_error_free(error);
            umockdev_ioctl_client_complete(client, -1, EFAULT);
            return TRUE;
        }
    }
    pthread_mutex_lock(&pantograph_lock);
    int errno_code = handle_request(p, request, arg, data);
    pthread_mutex_unlock(&pantograph_lock);
    umockdev_ioctl_client_complete(client, errno_code ? -1 : 0, errno_code);
    if (data)
        g_object_unref(data);
    return TRUE;
}

static int setup(void **state) {
    (void)state;
    testbed = umockdev_testbed_new();
    GError *error = NULL;
    if (!umockdev_testbed_add_from_string(testbed, DEVICE_DESCRIPTION, &error))
        fail_msg("umockdev: cannot add the device: %s", error->message);
    UMockdevIoctlBase *handler = umockdev_ioctl_base_new();
    g_signal_connect(handler, "handle-ioctl", G_CALLBACK(on_ioctl), &pantograph);
    if (!umockdev_testbed_attach_ioctl(testbed, DEV_NODE, handler, &error))
        fail_msg("umockdev: cannot attach the usbdevfs handler: %s", error->message);
    g_object_unref(handler);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    haptic_servo_destroy(servo_under_test); /* also after a failed assertion: libusb closed */
    servo_under_test = NULL;
    pantograph_reset(&pantograph, 2);
    g_object_unref(testbed);
    return 0;
}

static uint64_t locked_u64(const uint64_t *field) {
    pthread_mutex_lock(&pantograph_lock);
    uint64_t v = *field;
    pthread_mutex_unlock(&pantograph_lock);
    return v;
}

typedef enum UnplugSignal {
    UNPLUG_URBS_END = 1,   /* the kernel ends the URBs in flight, later calls fail ENODEV */
    UNPLUG_UDEV_EVENT = 2, /* udev's "remove" reaches libusb's hot-plug monitor */
} UnplugSignal;

static void pull_the_cable(unsigned signals) {
    if (signals & UNPLUG_URBS_END) {
        pthread_mutex_lock(&pantograph_lock);
        pantograph.unplugged = true;
        for (int i = 0; i < pantograph.n_in; i++)
            complete_urb(&pantograph, pantograph.in[i], -ESHUTDOWN);
        pantograph.n_in = 0;
        pthread_mutex_unlock(&pantograph_lock);
    }
    if (signals & UNPLUG_UDEV_EVENT)
        umockdev_testbed_uevent(testbed, SYSFS_PATH, "remove");
}

/* Opens the emulated device and runs the servo with a constant 0.3 N for 100 periods. */
static HapticServo *open_and_push(HapticDevice **opened) {
    PantographConfig c = pantograph_config_default();
    IssimError err;
    HapticDevice *dev = haptic_device_open("usb", &c, &err);
    if (!dev)
        fail_msg("%s", err.message);
    print_message("opened %s\n", haptic_device_caps(dev).name);
    assert_non_null(strstr(haptic_device_caps(dev).name, "usb 1209:7050 bus 1 addr 2"));
    assert_int_equal(locked_u64(&pantograph.claims), 1);
    HapticServoDesc desc = haptic_servo_desc_default();
    desc.constant_force = (HapticVec2){0.3, 0.0};
    servo_under_test = haptic_servo_create(dev, &c, &desc, NULL, &err);
    if (!servo_under_test)
        fail_msg("%s", err.message);
    *opened = dev;
    haptic_servo_enable(servo_under_test, true);
    assert_true(test_servo_run_periods(servo_under_test, 0.1) == 100);
    assert_int_equal(haptic_servo_state(servo_under_test), HAPTIC_SERVO_RUNNING);
    return servo_under_test;
}

/* After the unplug the servo stops within max_periods naming it; it is safe and pushes
 * nothing. */
static void assert_unplug_reported(HapticServo *servo, int max_periods) {
    testlog_capture();
    int n = test_servo_run_periods(servo, 0.3);
    print_message("after the unplug: %d periods; servo error: %s\n", n, haptic_servo_error(servo));
    assert_true(n <= max_periods);
    assert_int_equal(haptic_servo_state(servo), HAPTIC_SERVO_SAFE);
    assert_non_null(strstr(haptic_servo_error(servo), "the pantograph was unplugged"));
    assert_non_null(strstr(haptic_servo_error(servo), "usb 1209:7050"));
    assert_near(haptic_servo_force(servo).x, 0.0, 0.0);
    assert_near(haptic_servo_force(servo).y, 0.0, 0.0);
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "motors disabled"), 1);
    testlog_release();
}

/* Open, frames both ways: the servo's constant force reaches the emulated motors as the D/A
 * values of J^T f, the host's samples are the frames the device sent; then the cable is pulled
 * (URBs ended and the udev event, as Linux does). */
static void test_frames_then_unplug(void **state) {
    (void)state;
    pantograph_reset(&pantograph, 2);
    HapticDevice *dev;
    HapticServo *servo = open_and_push(&dev);
    HapticLinkStats link = haptic_device_link_stats(dev);
    pthread_mutex_lock(&pantograph_lock);
    uint64_t sent = pantograph.frames_sent, applied = pantograph.commands_applied;
    HapticCommand cmd = pantograph.last_command;
    double torque1 = pantograph.sim.torque[0], torque5 = pantograph.sim.torque[1];
    pthread_mutex_unlock(&pantograph_lock);
    const HapticKinematics *k = haptic_servo_kinematics(servo);
    print_message("device sent %llu frames, host took %llu (crc errors %llu, lost %llu); "
                  "%llu commands applied, last dac %u %u enable %d; torques %.4f %.4f N m\n",
                  (unsigned long long)sent, (unsigned long long)link.frames,
                  (unsigned long long)link.crc_errors, (unsigned long long)link.seq_lost,
                  (unsigned long long)applied, cmd.dac[0], cmd.dac[1], cmd.enable, torque1,
                  torque5);
    /* frames streamed (one per 1 ms frame the host polled in) and every one decoded */
    assert_true(sent >= 25);
    assert_true(link.frames >= sent - 2 && link.frames <= sent);
    assert_int_equal(link.crc_errors, 0);
    assert_true(applied >= 75);
    assert_true(cmd.enable);
    /* the motors carry J^T f for f = (0.3, 0) N */
    assert_near(torque1, k->jacobian[0] * 0.3, 0.02 * fabs(k->jacobian[0] * 0.3) + 5e-4);
    assert_near(torque5, k->jacobian[1] * 0.3, 0.02 * fabs(k->jacobian[1] * 0.3) + 5e-4);
    assert_near(haptic_servo_force(servo).x, 0.3, 1e-9);
    pull_the_cable(UNPLUG_URBS_END | UNPLUG_UDEV_EVENT);
    assert_unplug_reported(servo, 1); /* the next read reaps the ended transfers */
}

/* Each of the two signals alone is enough: the transfers ending with NO_DEVICE (udev's event
 * late or lost), and the hot-plug callback (transfers not yet reaped). */
/* max_periods: the transfers end before the next read; udev's event goes through libusb's
 * monitor thread first, which a loaded machine may delay by a few periods. */
static void pull_the_cable_then_check(unsigned signals, int max_periods) {
    HapticDevice *dev;
    HapticServo *servo = open_and_push(&dev);
    pull_the_cable(signals);
    assert_unplug_reported(servo, max_periods);
}

static void test_unplug_seen_by_the_transfers_alone(void **state) {
    (void)state;
    pantograph_reset(&pantograph, 2);
    pull_the_cable_then_check(UNPLUG_URBS_END, 1);
}

static void test_unplug_seen_by_hotplug_alone(void **state) {
    (void)state;
    pantograph_reset(&pantograph, 2);
    pull_the_cable_then_check(UNPLUG_UDEV_EVENT, 250);
}

/* The state endpoint stalls: the read fails naming the stall (no state is taken from it), and
 * closing still turns the motors off through the command endpoint, which did not stall. */
static void test_stall(void **state) {
    (void)state;
    pantograph_reset(&pantograph, 2);
    PantographConfig c = pantograph_config_default();
    IssimError err;
    HapticDevice *dev = haptic_device_open("usb", &c, &err);
    if (!dev)
        fail_msg("%s", err.message);
    HapticSample sample;
    assert_int_equal(haptic_device_read(dev, 0.1, &sample, &err), ISSIM_OK);
    HapticCommand on = {.dac = {2100, 2000}, .enable = true};
    assert_int_equal(haptic_device_write(dev, &on, &err), ISSIM_OK);
    assert_int_equal(haptic_device_read(dev, 0.1, &sample, &err), ISSIM_OK);
    /* the command reached the device (its watchdog may since have turned the motors off: a
       loaded machine can leave it 50 ms without a command here) */
    pthread_mutex_lock(&pantograph_lock);
    pantograph.in_halted = true;
    HapticCommand applied = pantograph.last_command;
    pthread_mutex_unlock(&pantograph_lock);
    assert_true(applied.enable);
    assert_int_equal(applied.dac[0], 2100);
    assert_int_equal(applied.dac[1], 2000);
    IssimStatus s = ISSIM_OK;
    for (int i = 0; i < 10 && s == ISSIM_OK; i++)
        s = haptic_device_read(dev, 0.01, &sample, &err);
    print_message("after the stall: %s\n", err.message);
    assert_int_not_equal(s, ISSIM_OK);
    assert_non_null(strstr(err.message, "USB transfer failed: LIBUSB_TRANSFER_STALL"));
    assert_true(locked_u64(&pantograph.stalls_sent) >= 1);
    assert_int_equal(locked_u64(&pantograph.halts_cleared), 0); /* usb.c reports, never clears */
    haptic_device_close(dev);
    pthread_mutex_lock(&pantograph_lock);
    HapticCommand last = pantograph.last_command;
    uint64_t commands = pantograph.commands_applied;
    bool enabled = pantograph.sim.enabled;
    pthread_mutex_unlock(&pantograph_lock);
    assert_int_equal(commands, 2); /* "on", then the motors-off of the close */
    assert_false(last.enable);
    assert_false(enabled);
    assert_int_equal(last.dac[0], 2048);
    assert_int_equal(last.dac[1], 2048);
}

/* The same stall under the servo pushing 0.3 N: the next period goes to the safe state naming
 * the stall, and its motors-off command reaches the device through the command endpoint while
 * the servo still holds the link. */
static void test_stall_under_the_servo(void **state) {
    (void)state;
    pantograph_reset(&pantograph, 2);
    HapticDevice *dev;
    HapticServo *servo = open_and_push(&dev);
    assert_true(locked_u64(&pantograph.commands_applied) >= 75);
    pthread_mutex_lock(&pantograph_lock);
    pantograph.in_halted = true;
    pthread_mutex_unlock(&pantograph_lock);
    testlog_capture();
    int n = test_servo_run_periods(servo, 0.3);
    print_message("after the stall: %d periods; servo error: %s\n", n, haptic_servo_error(servo));
    assert_true(n <= 1);
    assert_int_equal(haptic_servo_state(servo), HAPTIC_SERVO_SAFE);
    assert_non_null(strstr(haptic_servo_error(servo), "LIBUSB_TRANSFER_STALL"));
    assert_near(haptic_servo_force(servo).x, 0.0, 0.0);
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "motors disabled"), 1);
    testlog_release();
    pthread_mutex_lock(&pantograph_lock);
    HapticCommand last = pantograph.last_command;
    bool enabled = pantograph.sim.enabled;
    pthread_mutex_unlock(&pantograph_lock);
    assert_false(last.enable); /* motors off, zero current */
    assert_int_equal(last.dac[0], 2048);
    assert_int_equal(last.dac[1], 2048);
    assert_false(enabled);
}

/* An old controller answering in protocol 1 is refused at the open, naming both versions, and
 * no command reaches it. */
static void test_old_protocol_refused(void **state) {
    (void)state;
    pantograph_reset(&pantograph, 1);
    PantographConfig c = pantograph_config_default();
    IssimError err;
    HapticDevice *dev = haptic_device_open("usb", &c, &err);
    assert_null(dev);
    print_message("%s\n", err.message);
    assert_non_null(strstr(err.message, "usb 1209:7050"));
    assert_non_null(strstr(err.message, "device speaks protocol 1, issim needs 2"));
    assert_true(locked_u64(&pantograph.frames_sent) >= 2);
    assert_int_equal(locked_u64(&pantograph.commands_applied), 0);
}

/* `issim device usb` as a user runs it, a child process whose libusb reaches the same emulated
 * device (it inherits umockdev's preload and testbed): the servo thread pushes the scene's proxy
 * with the motors enabled, and the command's exit turns them off. */
static void test_issim_device_usb(void **state) {
    (void)state;
    pantograph_reset(&pantograph, 2);
    static char output[8192];
    int rc = test_run_issim("device usb scenes/pantograph_push.lua --duration 0.5 --enable "
                            "--no-fifo",
                            output, sizeof output);
    print_message("%s", output);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(output, "link (protocol 2): 0 CRC errors"));
    assert_non_null(strstr(output, "motors enabled"));
    const char *s = strstr(output, "servo: ");
    assert_non_null(s);
    double periods, hz;
    assert_int_equal(sscanf(s, "servo: %lf periods at %lf Hz", &periods, &hz), 2);
    assert_true(periods > 0);
    pthread_mutex_lock(&pantograph_lock);
    uint64_t sent = pantograph.frames_sent, applied = pantograph.commands_applied;
    HapticCommand last = pantograph.last_command;
    bool enabled = pantograph.sim.enabled;
    pthread_mutex_unlock(&pantograph_lock);
    print_message("device: %llu frames sent, %llu commands applied\n", (unsigned long long)sent,
                  (unsigned long long)applied);
    assert_true(sent >= 25);
    assert_true(applied >= 25);
    assert_false(last.enable);
    assert_false(enabled);
}

/* The command refuses an old controller with the same message and exit status 1. */
static void test_issim_device_usb_old_protocol(void **state) {
    (void)state;
    pantograph_reset(&pantograph, 1);
    static char output[8192];
    int rc = test_run_issim("device usb scenes/pantograph_push.lua --duration 0.5 --enable "
                            "--no-fifo",
                            output, sizeof output);
    print_message("%s", output);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(output, "device speaks protocol 1, issim needs 2"));
    assert_int_equal(locked_u64(&pantograph.commands_applied), 0);
}

int main(int argc, char **argv) {
    (void)argc;
    const char *preload = getenv("LD_PRELOAD");
    if (!preload || !strstr(preload, "libumockdev-preload")) {
        /* umockdev's preload library must be loaded before libusb opens anything; ASan would
           refuse a library ahead of its runtime, hence verify_asan_link_order=0 */
        const char *asan = getenv("ASAN_OPTIONS");
        char options[512];
        snprintf(options, sizeof options, "%s%sverify_asan_link_order=0", asan ? asan : "",
                 asan && *asan ? ":" : "");
        setenv("ASAN_OPTIONS", options, 1);
        char *args[] = {"umockdev-wrapper", argv[0], NULL};
        execvp(args[0], args);
        fprintf(stderr,
                "SKIP: cannot run umockdev-wrapper (%s): install the Debian package "
                "umockdev (tools/bootstrap.sh does)\n",
                strerror(errno));
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_frames_then_unplug, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unplug_seen_by_the_transfers_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unplug_seen_by_hotplug_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stall, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stall_under_the_servo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_protocol_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_issim_device_usb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_issim_device_usb_old_protocol, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

int main(void) {
    fprintf(stderr, "SKIP: built without libumockdev-dev (umockdev-1.0 not found by pkg-config): "
                    "install the Debian packages umockdev and libumockdev-dev "
                    "(tools/bootstrap.sh does)\n");
    return 77;
}

#endif
