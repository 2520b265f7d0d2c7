/* The haptic device in the GUI process (issue 6; docs/haptics.md, "The device in the GUI"):
 * `issim run SCENE --device DEVICE` puts the device on every scene that has a haptics table,
 * through haptic_session_open, the steps `issim device` takes. The servo runs on the session's
 * registry, so a scene change (open, reload, reset) first stops it (joined, motors disabled,
 * device closed, simulator ended) while that registry still exists, and starts it again on the
 * new one. The motors stay off until the user enables them, after every (re)start.
 *
 * A device that goes away (the simulator killed, a cable pulled, a silent link) sends the servo
 * to its safe state by itself; here it is joined, its message goes to the panel and the log, and
 * the simulation runs on without it until the user presses Reconnect or opens a scene.
 *
 * Everything here runs on the display thread. The servo hears from it only through its
 * atomics (haptic_servo_enable, haptic_servo_emergency_stop) and answers through the registry's
 * HANDLE and SERVO_STATS slots, which the panel reads without a lock. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_internal.h"
#include "issim/haptics_device.h"

#define ESTOP_KEYS "F9 / Pause"

static HapticServo *servo_of(AppDevice *d) {
    return d->session ? haptic_session_servo(d->session) : NULL;
}

static void fail(AppDevice *d, const char *spec, const char *message) {
    d->status = GUI_DEVICE_ERROR;
    issim_strlcpy(d->message, message, sizeof d->message);
    issim_log(ISSIM_LOG_ERROR, "device %s: %s", spec, message);
}

/* The opened session's name, proxy and nominal coupling, for the panel. */
static void describe_session(AppDevice *d) {
    HapticDeviceCaps caps = haptic_session_caps(d->session);
    const HapticSessionDesc *desc = haptic_session_desc(d->session);
    const HapticSimulator *sim = haptic_session_simulator(d->session);
    issim_strlcpy(d->name, caps.name, sizeof d->name);
    issim_strlcpy(d->proxy, desc->proxy, sizeof d->proxy);
    d->coupling_stiffness =
        desc->servo.coupling.proxy_body != 0 ? desc->servo.coupling.stiffness : 0.0;
    d->simulator_pid = sim ? sim->pid : -1;
}

/* What the simulated hand holds: "X Y" (device frame, m) or "free". Written whole to a
 * temporary file and renamed, so the simulator never reads half a line. */
static void write_hand(const AppDevice *d, const char *text) {
    char tmp[GUI_PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.new", d->hand_file);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fputs(text, f);
    if (fclose(f) == 0)
        rename(tmp, d->hand_file);
}

static HapticSessionDesc session_desc(App *app) {
    const DisplayOptions *o = &app->options;
    AppDevice *d = &app->device;
    HapticSessionDesc desc = haptic_session_desc_default(o->device);
    desc.servo.rate_hz = o->device_rate > 0 ? o->device_rate : 1000.0;
    d->hand_file[0] = '\0';
    if (!o->device_hand && strcmp(o->device, "sim") == 0) {
        /* No scripted hand: the mouse is the hand (as CHAI3D's virtual device). */
        snprintf(d->hand_file, sizeof d->hand_file, "/tmp/issim-hand-%d", (int)getpid());
        snprintf(d->hand_spec, sizeof d->hand_spec, "file:%s", d->hand_file);
        write_hand(d, "free\n");
        desc.simulator_args[0] = "--hand";
        desc.simulator_args[1] = d->hand_spec;
    } else if (o->device_hand && strcmp(o->device, "sim") == 0) {
        desc.simulator_args[0] = "--hand";
        desc.simulator_args[1] = o->device_hand;
    } else if (o->device_hand) {
        issim_log(ISSIM_LOG_WARN, "--device-hand moves the simulated pantograph only (sim)");
    }
    return desc;
}

/* The servo on the session's registry; the engine's body names and ids from the scene view
 * (taken before the engine thread started). */
static void open_session(App *app, HapticSessionDesc *desc) {
    AppDevice *d = &app->device;
    const SceneView *view = app->session.view;
    HapticSceneBody *bodies =
        calloc((size_t)(view->body_count > 0 ? view->body_count : 1), sizeof *bodies);
    if (!bodies) {
        fail(d, desc->device, "out of memory");
        return;
    }
    for (int b = 0; b < view->body_count; b++)
        bodies[b] =
            (HapticSceneBody){view->bodies[b].name, engine_body_id_pack(view->bodies[b].id)};
    IssimError err = {0};
    d->session = haptic_session_open(desc, bodies, view->body_count, app->session.reg, &err);
    free(bodies);
    if (d->session && haptic_session_start(d->session, &err) != ISSIM_OK) {
        haptic_session_destroy(d->session);
        d->session = NULL;
    }
    if (!d->session) {
        fail(d, desc->device, err.message);
        return;
    }
    describe_session(d);
    d->status = GUI_DEVICE_RUNNING;
    d->message[0] = '\0';
    issim_log(ISSIM_LOG_INFO, "haptics: %s on %s at %.0f Hz; motors off until enabled", d->name,
              app->session.path, desc->servo.rate_hz);
}

void app_device_attach(App *app) {
    AppDevice *d = &app->device;
    if (!app->options.device || !app->session.sim || d->session)
        return;
    d->enable_requested = d->emergency_stopped = false;
    d->name[0] = d->proxy[0] = '\0';
    d->coupling_stiffness = 0.0;
    d->simulator_pid = -1;
    HapticSessionDesc desc = session_desc(app);
    IssimError err = {0};
    if (haptic_session_desc_load(&desc, app->session.path, &err) != ISSIM_OK) {
        fail(d, desc.device, err.message);
        return;
    }
    if (!desc.has_table) {
        d->status = GUI_DEVICE_IDLE;
        snprintf(d->message, sizeof d->message, "%s has no haptics table", app->session.path);
        issim_log(ISSIM_LOG_INFO, "haptics: %s: the device stays closed", d->message);
        return;
    }
    open_session(app, &desc);
}

void app_device_detach(App *app) {
    AppDevice *d = &app->device;
    if (app->session.view)
        app->session.view->handle.shown = false;
    if (!d->session)
        return;
    haptic_session_destroy(d->session); /* joins the servo, motors off, device closed */
    d->session = NULL;
    if (d->hand_file[0])
        remove(d->hand_file);
    d->hand_dragging = false;
    d->status = GUI_DEVICE_IDLE;
    d->enable_requested = false;
    d->simulator_pid = -1;
    issim_strlcpy(d->message, "closed with its scene", sizeof d->message);
    issim_log(ISSIM_LOG_INFO, "haptics: %s closed", d->name);
}

void app_device_reconnect(App *app) {
    app_device_detach(app);
    app_device_attach(app);
}

/* The servo left its loop in its safe state (device gone): join it, keep its message. */
static void take_device_error(AppDevice *d) {
    HapticServo *servo = servo_of(d);
    haptic_servo_stop(servo);
    d->status = GUI_DEVICE_ERROR; /* the servo logged the error itself */
    issim_strlcpy(d->message, haptic_servo_error(servo), sizeof d->message);
    issim_log(ISSIM_LOG_WARN,
              "haptics: the simulation runs on without the device; Reconnect in the device panel");
    haptic_session_destroy(d->session);
    d->session = NULL;
    d->enable_requested = false;
    d->simulator_pid = -1;
}

static void add_segment(ViewHandle *vh, Vec3 a, Vec3 b, const float color[4]) {
    if (vh->segment_count == VIEW_SURFACE_SEGMENTS)
        return;
    vh->segments[vh->segment_count][0] = a;
    vh->segments[vh->segment_count][1] = b;
    memcpy(vh->segment_colors[vh->segment_count], color, 4 * sizeof(float));
    vh->segment_count++;
}

/* The scene's haptic walls and texture regions (device frame) drawn in the world plane of the
 * coupling: world = handle_world + scale (device - handle), the coupling's own map
 * (coupling.c) taken through the handle's published pair of points. */
typedef struct DeviceToWorld {
    double hx, hy, scale; /* the handle's device point, world m per device m */
    Vec3 hw;              /* the handle's world point */
} DeviceToWorld;

static Vec3 to_world(const DeviceToWorld *m, double x, double y) {
    return (Vec3){m->hw.x + m->scale * (x - m->hx), m->hw.y + m->scale * (y - m->hy), m->hw.z};
}

static void surface_segments(App *app, const RegistrySlot *h) {
    ViewHandle *vh = &app->session.view->handle;
    vh->segment_count = 0;
    const HapticServoDesc *servo = &haptic_session_desc(app->device.session)->servo;
    double scale = servo->coupling.position_scale;
    if (!(scale > 0))
        return;
    HapticHandleState reading = haptic_handle_unpack(h);
    DeviceToWorld m = {reading.pos.x, reading.pos.y, scale, reading.world};
    static const float wall[4] = {1.0f, 0.35f, 0.35f, 1}, smooth[4] = {0.6f, 0.6f, 0.6f, 1};
    for (int i = 0; i < servo->surface_count; i++) {
        const HapticSurface *s = &servo->surfaces[i];
        if (s->kind == HAPTIC_SURFACE_WALL) {
            double tx = -s->normal.y, ty = s->normal.x, l = 0.1, tick = 0.005;
            add_segment(vh, to_world(&m, s->point.x - l * tx, s->point.y - l * ty),
                        to_world(&m, s->point.x + l * tx, s->point.y + l * ty), wall);
            add_segment(
                vh, to_world(&m, s->point.x, s->point.y),
                to_world(&m, s->point.x - tick * s->normal.x, s->point.y - tick * s->normal.y),
                wall);
            continue;
        }
        /* Rougher textures brighter: the lateral standard deviation, 0.7 N at full colour. */
        double sigma = s->has_texture ? sqrt(fmax(s->texture.cov[0], 0.0)) : 0.0;
        float k = (float)fmin(1.0, sigma / 0.7);
        float c[4] = {0.5f + 0.5f * k, 0.5f + 0.2f * k, 0.5f - 0.3f * k, 1};
        const float *col = s->has_texture ? c : smooth;
        double x0 = s->min.x, y0 = s->min.y, x1 = s->max.x, y1 = s->max.y;
        add_segment(vh, to_world(&m, x0, y0), to_world(&m, x1, y0), col);
        add_segment(vh, to_world(&m, x1, y0), to_world(&m, x1, y1), col);
        add_segment(vh, to_world(&m, x1, y1), to_world(&m, x0, y1), col);
        add_segment(vh, to_world(&m, x0, y1), to_world(&m, x0, y0), col);
        if (s->has_texture) /* a textured region is crossed */
            add_segment(vh, to_world(&m, x0, y0), to_world(&m, x1, y1), col);
    }
}

static void update_handle_marker(App *app) {
    Session *s = &app->session;
    ViewHandle *vh = &s->view->handle;
    RegistrySlot h;
    registry_slot_read(s->reg, REGISTRY_SLOT_HANDLE, &h);
    vh->shown = h.count > 0 && s->has_frame;
    if (!vh->shown)
        return;
    HapticHandleState reading = haptic_handle_unpack(&h);
    vh->point = reading.world;
    int body = scene_view_body_of(s->view, engine_body_id_unpack(reading.proxy_body));
    vh->coupled = body >= 0;
    if (vh->coupled) {
        const double *p = s->frame + s->view->bodies[body].var_pos;
        vh->proxy = (Vec3){p[0], p[1], p[2]};
    }
    vh->active = reading.enabled && reading.coupling_k > 0;
    vh->size = 0.06 * s->view->radius;
    surface_segments(app, &h);
}

/* The haptic walls' reaction on the handle, device N: the servo's own PD and friction law
 * (haptic_surface_force) at the published handle state, before the safety chain's limits. */
static HapticVec2 wall_reaction(const HapticServoDesc *servo, const RegistrySlot *h) {
    HapticHandleState reading = haptic_handle_unpack(h);
    HapticKinematics k = {.pos = reading.pos, .vel = reading.vel};
    HapticRng rng;
    haptic_rng_seed(&rng, 1);
    double f[2] = {0, 0}, tau[2] = {0, 0}; /* the texture's torques are not a reaction */
    for (int i = 0; i < servo->surface_count; i++)
        if (servo->surfaces[i].kind == HAPTIC_SURFACE_WALL)
            haptic_surface_force(&servo->surfaces[i], &k, &rng, f, tau);
    return (HapticVec2){f[0], f[1]};
}

/* A body's position and velocity in the engine frame at frame_t, the one the servo computed
 * the hand's force against, so the spring's two ends are drawn from one state (the engine's
 * newest frame when that one is gone or unknown: the engine's coupling hook evaluates the
 * spring against it, and the display's own frame lags it by up to the horizon, which at the
 * proxy's speed changed the damper's part several-fold). */
static bool rendered_state(const Session *s, const ViewBody *vb, double frame_t, Vec3 *pos,
                           Vec3 *vel) {
    double *values = calloc((size_t)registry_var_count(s->reg) + 1, sizeof(double));
    RegistryFrame f = {.values = values};
    bool ok =
        values && isfinite(frame_t) && registry_read_at(s->reg, frame_t, &f) && f.t == frame_t;
    if (!ok)
        ok = values && registry_read_latest(s->reg, &f);
    if (ok) {
        const double *p = values + vb->var_pos, *v = values + vb->var_vel;
        *pos = (Vec3){p[0], p[1], p[2]};
        *vel = (Vec3){v[0], v[1], v[2]};
    }
    free(values);
    return ok;
}

/* An arrow of a world force (N) from `from`, on the 3D view's one scale (gui_arrow_length). */
static RenderArrow device_arrow(const App *app, Vec3 from, Vec3 force, GuiArrowKind kind,
                                const char *label) {
    return (RenderArrow){from, vec3_add(from, render_force_arrow(force, app->camera.distance)),
                         kind, label};
}

/* The forces of the haptic scene as arrows, in world newtons on the view's one logarithmic
 * scale (gui.h; a handle newton is force_scale world newtons): the coupling force the engine
 * applies to the proxy (magenta, from the top of the proxy; against the frame the servo computed
 * against, so it is the hand's force reversed until a limit acts), the force the motors are
 * commanded with on the hand (cyan, from the diamond atop the handle's stem: the handle's point
 * lies inside the proxy while the coupling holds it) and the haptic walls' reaction in it (red,
 * same place). forces (nullable) receives each arrow's world force, N. */
int app_device_arrows(const App *app, const RegistrySlot *handle, RenderArrow *out, Vec3 *forces) {
    const Session *s = &app->session;
    if (!app->device.session || !s->view || !s->view->handle.shown)
        return 0;
    const HapticServoDesc *servo = &haptic_session_desc(app->device.session)->servo;
    RegistrySlot h;
    if (handle)
        h = *handle;
    else
        registry_slot_read(s->reg, REGISTRY_SLOT_HANDLE, &h);
    HapticHandleState reading = haptic_handle_unpack(&h);
    double world_per_device = servo->coupling.force_scale > 0 ? servo->coupling.force_scale : 1.0;
    Vec3 force[APP_DEVICE_ARROWS];
    const ViewHandle *vh = &s->view->handle;
    Vec3 hand_at = vec3_add(vh->point, (Vec3){0, 0, 4 * vh->size});
    int n = 0;
    int body = scene_view_body_of(s->view, engine_body_id_unpack(reading.proxy_body));
    Vec3 coupling;
    Vec3 proxy_pos, proxy_vel;
    if (body >= 0 &&
        rendered_state(s, &s->view->bodies[body], reading.frame_t, &proxy_pos, &proxy_vel)) {
        const ViewBody *vb = &s->view->bodies[body];
        double top = vb->instance >= 0 ? s->view->instances[vb->instance].local_box.max.z : 0.0;
        Vec3 at = vec3_add(vh->proxy, (Vec3){0, 0, top});
        if (haptic_coupling_engine_force(&h, proxy_pos, proxy_vel, h.t, 1.0, &coupling)) {
            force[n] = coupling;
            out[n++] = device_arrow(app, at, coupling, GUI_ARROW_COUPLING, "coupling");
        }
    }
    force[n] = vec3_scale((Vec3){reading.force.x, reading.force.y, 0}, world_per_device);
    out[n] = device_arrow(app, hand_at, force[n], GUI_ARROW_HAND, "hand");
    n++;
    HapticVec2 w = wall_reaction(servo, &h);
    if (w.x != 0.0 || w.y != 0.0) {
        force[n] = vec3_scale((Vec3){w.x, w.y, 0}, world_per_device);
        out[n] = device_arrow(app, hand_at, force[n], GUI_ARROW_WALL, "wall");
        n++;
    }
    for (int i = 0; forces && i < n; i++)
        forces[i] = force[i];
    return n;
}

bool app_device_mouse_hand(const App *app) {
    const AppDevice *d = &app->device;
    return d->session && d->hand_file[0] && d->status == GUI_DEVICE_RUNNING;
}

void app_device_hand(App *app, bool hold, int x, int y) {
    AppDevice *d = &app->device;
    if (!app_device_mouse_hand(app))
        return;
    d->hand_dragging = hold;
    RegistrySlot h;
    registry_slot_read(app->session.reg, REGISTRY_SLOT_HANDLE, &h);
    double scale = haptic_session_desc(d->session)->servo.coupling.position_scale;
    if (!hold || h.count == 0 || !(scale > 0)) {
        write_hand(d, "free\n");
        return;
    }
    /* The mouse ray meets the horizontal plane of the handle's world point; the coupling maps
     * device to world as world = origin + scale (device - centre) (coupling.c), so the device
     * point is the handle's own plus the world offset over the scale. */
    Vec3 o, dir;
    camera_ray(&app->camera, app->win.view_w, app->win.view_h, x - app->win.view_x,
               y - app->win.view_y, &o, &dir);
    HapticHandleState reading = haptic_handle_unpack(&h);
    double z = reading.world.z;
    if (fabs(dir.z) < 1e-9 || (z - o.z) / dir.z <= 0)
        return;
    double t = (z - o.z) / dir.z;
    double wx = o.x + t * dir.x, wy = o.y + t * dir.y;
    char text[96];
    snprintf(text, sizeof text, "%.9g %.9g\n", reading.pos.x + (wx - reading.world.x) / scale,
             reading.pos.y + (wy - reading.world.y) / scale);
    write_hand(d, text);
}

void app_device_poll(App *app) {
    AppDevice *d = &app->device;
    if (!d->session)
        return;
    if (haptic_servo_state(servo_of(d)) == HAPTIC_SERVO_SAFE) {
        take_device_error(d);
        if (app->session.view)
            app->session.view->handle.shown = false;
        return;
    }
    if (app->session.view)
        update_handle_marker(app);
}

void app_device_enable(App *app, bool enable) {
    AppDevice *d = &app->device;
    HapticServo *servo = servo_of(d);
    if (!servo)
        return;
    haptic_servo_enable(servo, enable);
    d->enable_requested = enable;
    if (enable)
        d->emergency_stopped = false;
    issim_log(ISSIM_LOG_INFO, "haptics: motors %s", enable ? "enabled" : "disabled");
}

void app_device_emergency_stop(App *app) {
    AppDevice *d = &app->device;
    HapticServo *servo = servo_of(d);
    if (servo)
        haptic_servo_emergency_stop(servo);
    d->emergency_stopped = true;
    d->enable_requested = false;
    issim_log(ISSIM_LOG_WARN, "haptics: EMERGENCY STOP: force zero, motors off until enabled");
}

bool app_device_key(App *app, const SDL_KeyboardEvent *key) {
    if (!app->options.device || key->type != SDL_KEYDOWN)
        return false;
    if (key->keysym.sym != SDLK_F9 && key->keysym.sym != SDLK_PAUSE)
        return false;
    app_device_emergency_stop(app);
    return true;
}

const GuiDevice *app_device_gui(App *app) {
    AppDevice *d = &app->device;
    if (!app->options.device)
        return NULL;
    /* A device fault turned the motors off: the panel offers Enable again, which is how the user
     * acknowledges it (haptic_servo_enable clears the fault). */
    if (d->enable_requested && servo_of(d) && haptic_servo_fault(servo_of(d)) != HAPTIC_FAULT_NONE)
        d->enable_requested = false;
    d->gui = (GuiDevice){.spec = app->options.device,
                         .name = d->name,
                         .status = d->status,
                         .message = d->message,
                         .enable_requested = d->enable_requested,
                         .emergency_stopped = d->emergency_stopped,
                         .coupling_stiffness = d->coupling_stiffness,
                         .proxy = d->proxy,
                         .simulator_pid = d->simulator_pid,
                         .estop_key = ESTOP_KEYS,
                         .mouse_hand =
                             app_device_mouse_hand(app) ? &app->pointer.mouse_hand_mode : NULL};
    return &d->gui;
}

static const char *status_name(GuiDeviceStatus s) {
    return s == GUI_DEVICE_RUNNING ? "running" : s == GUI_DEVICE_ERROR ? "error" : "idle";
}

void app_device_print(App *app) {
    const GuiDevice *g = app_device_gui(app);
    if (!g) {
        printf("device none\n");
        fflush(stdout);
        return;
    }
    /* One read of the handle slot for the readout and the arrows: a frame preempted between two
     * reads would print a force and an arrow of different servo periods. */
    GuiDeviceReadout ro;
    RegistrySlot stats, handle;
    bool live = app->session.sim != NULL;
    if (live) {
        registry_slot_read(app->session.reg, REGISTRY_SLOT_SERVO_STATS, &stats);
        registry_slot_read(app->session.reg, REGISTRY_SLOT_HANDLE, &handle);
    }
    gui_device_readout_of(live ? &stats : NULL, live ? &handle : NULL, g, &ro);
    char watchdog[32];
    issim_strlcpy(watchdog, ro.watchdog[0] ? ro.watchdog : "-", sizeof watchdog);
    for (char *c = watchdog; *c; c++)
        *c = *c == ' ' ? '_' : *c;
    printf("device status=%s enable=%d estop=%d motors_on=%d periods=%.0f rate_hz=%.1f "
           "measured_hz=%.1f p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f overruns=%.0f "
           "missed=%.0f compute_mean_us=%.2f compute_max_us=%.1f fifo=%d x=%.6f y=%.6f vx=%.6f "
           "vy=%.6f fx=%.6f fy=%.6f texture_fx=%.6f texture_fy=%.6f tau1=%.6f tau5=%.6f "
           "force_rms=%.6f force_peak=%.6f texture_periods=%.0f limits=%u device_status=%u "
           "watchdog=%s fade=%.3f stalls=%.0f age_s=%.3f port_energy=%.6g "
           "local_latency_us=%.1f local_latency_mean_us=%.1f local_latency_max_us=%.1f "
           "local_blocks=%.0f models=%.0f models_touching=%.0f traced_depth=%.6g "
           "traced_force=%.6g servo_state=%d pid=%d\n",
           status_name(g->status), g->enable_requested, g->emergency_stopped, ro.handle.motors_on,
           ro.timing.periods, ro.timing.rate_hz, ro.timing.measured_hz, ro.timing.p50_us,
           ro.timing.p99_us, ro.timing.p999_us, ro.timing.max_us, ro.timing.overruns,
           ro.timing.missed_deadlines, ro.timing.compute_mean_us, ro.timing.compute_max_us,
           ro.timing.fifo, ro.handle.x, ro.handle.y, ro.handle.vx, ro.handle.vy, ro.handle.fx,
           ro.handle.fy, ro.handle.texture_fx, ro.handle.texture_fy, ro.handle.tau1, ro.handle.tau5,
           ro.handle.force_rms, ro.handle.force_peak, ro.counts.texture_periods, ro.handle.limits,
           ro.handle.device_status, watchdog, ro.watchdog_fade, ro.counts.engine_stalls,
           ro.handle_age_s, ro.port_energy, ro.local_latency_us, ro.local_latency_mean_us,
           ro.local_latency_max_us, ro.local_blocks, ro.models, ro.models_touching, ro.traced_depth,
           ro.traced_force, ro.servo_state, g->simulator_pid);
    RenderArrow arrows[APP_DEVICE_ARROWS]; /* as drawn, with the forces they show */
    Vec3 forces[APP_DEVICE_ARROWS];
    int arrow_count = app_device_arrows(app, live ? &handle : NULL, arrows, forces);
    for (int i = 0; i < arrow_count; i++) {
        Vec3 d = vec3_sub(arrows[i].to, arrows[i].from);
        printf("device_arrow %s from %.6f %.6f %.6f vector %.6f %.6f %.6f force %.6f %.6f %.6f "
               "distance=%.6f\n",
               arrows[i].label, arrows[i].from.x, arrows[i].from.y, arrows[i].from.z, d.x, d.y, d.z,
               forces[i].x, forces[i].y, forces[i].z, app->camera.distance);
    }
    const ViewHandle *vh = app->session.view ? &app->session.view->handle : NULL;
    if (vh && vh->shown) /* the 3D view's marker, as drawn this frame */
        printf("device_marker %.6f %.6f %.6f size=%.6f active=%d\n", vh->point.x, vh->point.y,
               vh->point.z, vh->size, vh->active);
    printf("device_name %s\ndevice_message %s\n", g->name[0] ? g->name : "-",
           g->message[0] ? g->message : "-");
    fflush(stdout);
}

int app_device_condition(App *app, const char *what, const char *value) {
    const GuiDevice *g = app_device_gui(app);
    if (!what || !g)
        return -1;
    GuiDeviceReadout ro;
    gui_device_readout(app->session.sim ? app->session.reg : NULL, g, &ro);
    if (strcmp(what, "periods") == 0 && value)
        return g->status == GUI_DEVICE_RUNNING && ro.timing.periods >= atof(value);
    if (strcmp(what, "error") == 0)
        return g->status == GUI_DEVICE_ERROR;
    if (strcmp(what, "motors_on") == 0)
        return ro.handle.motors_on && ro.handle_age_s < 0.1;
    if (strcmp(what, "motors_off") == 0)
        return !ro.handle.motors_on && ro.handle_age_s < 0.1;
    /* A position condition, so tests wait for the handle rather than for wall-clock time. */
    if (strcmp(what, "y_below") == 0 && value)
        return ro.have_handle && ro.handle_age_s < 0.1 && ro.handle.y < atof(value);
    if (strcmp(what, "y_above") == 0 && value)
        return ro.have_handle && ro.handle_age_s < 0.1 && ro.handle.y > atof(value);
    /* At rest: the force the motors are commanded with has caught up with the surfaces' law
     * (max_force_step slews it) only once the handle stops. */
    if (strcmp(what, "still") == 0 && value)
        return ro.have_handle && ro.handle_age_s < 0.1 &&
               hypot(ro.handle.vx, ro.handle.vy) < atof(value);
    /* A period whose force no limit of the safety chain changed: a starved engine's proxy lags
       the hand until the coupling force is clipped, for as long as the engine is behind. */
    if (strcmp(what, "unlimited") == 0)
        return ro.handle.motors_on && ro.handle_age_s < 0.1 && ro.handle.limits == 0;
    return -1;
}
