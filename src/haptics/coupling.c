/* The virtual coupling between the handle and a proxy body the engine simulates (the handle is
 * a user thing; the proxy meets the scene through the engine's own contact models).
 *
 * A spring/damper joins the handle's point mapped into the world (origin + scale (x - centre),
 * z = origin.z) to the proxy's centre, in world x and y. Each side evaluates it from its own
 * newest data without waiting for the other: the servo at its rate from the newest frame in the
 * registry (registry_read_latest, lock-free), the engine before each step from the newest
 * HANDLE slot (sim_thread.c). Their forces are equal and opposite up to the age of that data
 * (about one engine step); docs/haptics.md gives the stability limits this sets on K and B.
 *
 * Host watchdog: when the engine publishes no new frame for stall_timeout_s (an engine or
 * display stall), the servo fades the coupling gains linearly to zero over fade_s and publishes
 * the faded gains, so both sides let go together; a new frame restores them at once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "coupling_internal.h"
#include "issim/haptics_servo.h"

HapticCoupling haptic_coupling_default(void) {
    return (HapticCoupling){
        .proxy = "",
        .proxy_body = 0,
        .origin = {0, 0, 0},
        .position_scale = 5.0,
        .force_scale = 5.0,
        .stiffness = 2000.0,
        .damping = 20.0,
        .stall_timeout_s = 0.02,
        .fade_s = 0.02,
        .engage_s = 0.25,
    };
}

bool haptic_coupling_on(const HapticCoupling *c) {
    return c->proxy[0] != '\0' && c->proxy_body != 0;
}

static IssimStatus find_var(const Registry *reg, const char *proxy, const char *suffix,
                            RegistryVarId *out, IssimError *err) {
    char name[128];
    snprintf(name, sizeof name, "%s.%s", proxy, suffix);
    *out = registry_var_id(reg, name);
    if (registry_var_id_is_null(*out))
        return issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                               "the haptic proxy '%s' has no state variable %s", proxy, name);
    return ISSIM_OK;
}

IssimStatus haptic_coupling_bind(const HapticCoupling *c, CouplingState *cs, const Registry *reg,
                                 IssimError *err) {
    bool named = c->proxy[0] != '\0', identified = c->proxy_body != 0;
    if (named != identified)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "the haptic coupling needs both its proxy's name and its body id "
                               "(proxy '%s', body id %s)",
                               c->proxy, identified ? "set" : "none");
    if (!named || !reg)
        return ISSIM_OK;
    CouplingVars v;
    IssimStatus s = find_var(reg, c->proxy, "pos.x", &v.pos_x, err);
    s = s == ISSIM_OK ? find_var(reg, c->proxy, "pos.y", &v.pos_y, err) : s;
    s = s == ISSIM_OK ? find_var(reg, c->proxy, "vel.x", &v.vel_x, err) : s;
    s = s == ISSIM_OK ? find_var(reg, c->proxy, "vel.y", &v.vel_y, err) : s;
    if (s != ISSIM_OK)
        return s;
    cs->frame_values = calloc((size_t)registry_var_count(reg) + 1, sizeof(double));
    if (!cs->frame_values)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    cs->vars = v;
    return ISSIM_OK;
}

void haptic_coupling_unbind(CouplingState *cs) {
    free(cs->frame_values);
    cs->frame_values = NULL;
}

static void update_watchdog(const HapticCoupling *c, CouplingState *cs, const Registry *reg,
                            double now) {
    RegistryFrame frame = {.values = cs->frame_values};
    bool have = registry_read_latest(reg, &frame);
    if (have)
        cs->frame_t = frame.t;
    if (have && (!cs->have_frame || frame.index != cs->last_index)) {
        cs->last_index = frame.index;
        cs->last_change_wall = now;
        cs->have_frame = true;
        cs->stalled = false;
    }
    double silent = now - cs->last_change_wall;
    if (!cs->have_frame) {
        cs->fade = 0.0;
        return;
    }
    if (silent > c->stall_timeout_s && !cs->stalled) {
        cs->stalled = true;
        cs->stalls++;
        issim_log(ISSIM_LOG_WARN, "haptics: no engine frame for %.0f ms: fading the coupling",
                  1e3 * silent);
    }
    double over = silent - c->stall_timeout_s;
    cs->fade = over <= 0.0 ? 1.0 : c->fade_s > 0.0 ? fmax(1.0 - over / c->fade_s, 0.0) : 0.0;
}

void haptic_coupling_servo_force(const HapticCoupling *c, CouplingState *cs, const Registry *reg,
                                 const HapticKinematics *k, double now, double force[2]) {
    HapticVec2 centre = pantograph_workspace_centre(&k->config);
    cs->handle_world = (Vec3){c->origin.x + c->position_scale * (k->pos.x - centre.x),
                              c->origin.y + c->position_scale * (k->pos.y - centre.y), c->origin.z};
    cs->handle_world_vel = (Vec3){c->position_scale * k->vel.x, c->position_scale * k->vel.y, 0.0};
    if (!haptic_coupling_on(c) || !reg || !cs->frame_values) {
        cs->fade = 0.0;
        return;
    }
    update_watchdog(c, cs, reg, now);
    if (cs->fade <= 0.0)
        return;
    /* the newest frame update_watchdog copied (values persist if none came this period) */
    const RegistryFrame frame = {.values = cs->frame_values};
    const CouplingVars *vars = &cs->vars;
    double fx =
        c->stiffness * (cs->handle_world.x - registry_frame_value(reg, &frame, vars->pos_x)) +
        c->damping * (cs->handle_world_vel.x - registry_frame_value(reg, &frame, vars->vel_x));
    double fy =
        c->stiffness * (cs->handle_world.y - registry_frame_value(reg, &frame, vars->pos_y)) +
        c->damping * (cs->handle_world_vel.y - registry_frame_value(reg, &frame, vars->vel_y));
    /* the proxy pulls the handle back: minus the force on the proxy, scaled to the device */
    double gain = cs->fade * cs->engage;
    force[0] -= gain * fx / c->force_scale;
    force[1] -= gain * fy / c->force_scale;
}

void haptic_coupling_engage(const HapticCoupling *c, CouplingState *cs, bool wanted, double now) {
    if (!wanted) {
        cs->engaging = false;
        cs->engage = 0.0;
        return;
    }
    if (!cs->engaging) {
        cs->engaging = true;
        cs->engaged_since = now;
    }
    double ramp = c->engage_s > 0.0 ? (now - cs->engaged_since) / c->engage_s : 1.0;
    cs->engage = fmin(fmax(ramp, 0.0), 1.0);
}

bool haptic_coupling_engine_force(const RegistrySlot *slot, Vec3 proxy_pos, Vec3 proxy_vel,
                                  double now_wall, double max_age_s, Vec3 *force) {
    *force = (Vec3){0, 0, 0};
    if (slot->count == 0 || now_wall - slot->t > max_age_s)
        return false;
    HapticHandleState h = haptic_handle_unpack(slot);
    if (h.proxy_body == 0)
        return false;
    double k = h.coupling_k, b = h.coupling_b;
    if (!(k > 0.0 || b > 0.0) || !isfinite(k) || !isfinite(b))
        return false;
    double fx = k * (h.world.x - proxy_pos.x) + b * (h.world_vel.x - proxy_vel.x);
    double fy = k * (h.world.y - proxy_pos.y) + b * (h.world_vel.y - proxy_vel.y);
    if (!isfinite(fx) || !isfinite(fy))
        return false;
    *force = (Vec3){fx, fy, 0.0};
    return true;
}
