/* A device on a scene: the steps `issim device` (src/app/cmd_device.c) and the GUI's device
 * panel (src/display/app_device.c) share, so both put a pantograph on a scene the same way:
 * the scene's haptics table, the proxy bound to the engine body of its name (its id, and the
 * name by which the servo finds its registry variables), the simulated pantograph for "sim",
 * the device opened with its motors disabled, and the servo on the session's registry
 * (docs/haptics.md, "Scenes and the command line"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/haptics_servo.h"

struct HapticSession {
    HapticSessionDesc desc;
    HapticSimulator simulator;
    bool simulated;
    HapticDeviceCaps caps;
    HapticServo *servo;
};

HapticSessionDesc haptic_session_desc_default(const char *device) {
    return (HapticSessionDesc){.device = device, .servo = haptic_servo_desc_default()};
}

IssimStatus haptic_session_desc_load(HapticSessionDesc *d, const char *scene_path,
                                     IssimError *err) {
    return haptic_scene_read(scene_path, &d->servo, d->proxy, sizeof d->proxy, &d->has_table, err);
}

/* The proxy named in the haptics table: its name and body id into the coupling; the servo
 * finds its registry variables by that name. */
static IssimStatus bind_proxy(HapticSessionDesc *d, const HapticSceneBody *bodies, int body_count,
                              IssimError *err) {
    if (!d->proxy[0])
        return ISSIM_OK;
    for (int b = 0; b < body_count; b++)
        if (strcmp(bodies[b].name, d->proxy) == 0) {
            HapticCoupling *c = &d->servo.coupling;
            issim_strlcpy(c->proxy, d->proxy, sizeof c->proxy);
            c->proxy_body = bodies[b].id;
            return ISSIM_OK;
        }
    return issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                           "the haptic proxy '%s' is not a body of the scene", d->proxy);
}

HapticSession *haptic_session_open(const HapticSessionDesc *d, const HapticSceneBody *bodies,
                                   int body_count, Registry *reg, IssimError *err) {
    HapticSession *s = calloc(1, sizeof *s);
    if (!s) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    s->desc = *d;
    s->simulator = (HapticSimulator){.pid = -1, .stdout_fd = -1};
    if (bind_proxy(&s->desc, bodies, body_count, err) != ISSIM_OK) {
        free(s);
        return NULL;
    }
    char spec[300];
    s->simulated = strcmp(d->device, "sim") == 0;
    if (s->simulated) {
        if (haptic_simulator_spawn(&s->simulator, NULL, d->simulator_args, err) != ISSIM_OK) {
            free(s);
            return NULL;
        }
        snprintf(spec, sizeof spec, "%s", s->simulator.spec);
    } else {
        issim_strlcpy(spec, d->device, sizeof spec);
    }
    PantographConfig config = pantograph_config_default();
    HapticDevice *dev = haptic_device_open(spec, &config, err);
    if (dev)
        s->caps = haptic_device_caps(dev);
    /* haptic_servo_create takes the device (and closes it when it fails) */
    s->servo = haptic_servo_create(dev, &config, &s->desc.servo, reg, err);
    if (!s->servo) {
        haptic_session_destroy(s);
        return NULL;
    }
    return s;
}

IssimStatus haptic_session_start(HapticSession *s, IssimError *err) {
    return haptic_servo_start(s->servo, err);
}

void haptic_session_stop(HapticSession *s) {
    if (s->servo)
        haptic_servo_stop(s->servo);
    if (s->simulated)
        haptic_simulator_stop(&s->simulator);
}

void haptic_session_destroy(HapticSession *s) {
    if (!s)
        return;
    /* the servo first: its device sends the last disable command while the simulator still
       listens */
    haptic_servo_destroy(s->servo);
    if (s->simulated)
        haptic_simulator_stop(&s->simulator);
    free(s);
}

HapticServo *haptic_session_servo(HapticSession *s) {
    return s->servo;
}

HapticDeviceCaps haptic_session_caps(const HapticSession *s) {
    return s->caps;
}

const HapticSimulator *haptic_session_simulator(const HapticSession *s) {
    return s->simulated ? &s->simulator : NULL;
}

const HapticSessionDesc *haptic_session_desc(const HapticSession *s) {
    return &s->desc;
}
