/* The prescribed load cycle (issue 17): F(t) = A (1 - cos(2 pi t / T)) / 2 on one body, the
 * quasi-static cycle of seed 004 4.6.2 (Fig. 4.12; VALIDATION.md V4, the cycle
 * tests/test_validation_v4_quasi_static.c applies), drawn as an arrow on the body and plotted
 * with the contact force against depth (the hysteresis loop).
 *
 * The scene schema has no time-varying force, so the display applies the cycle once a frame,
 * at the engine's newest time, through the pointer spring the engine reads before every step
 * (write_load): the load is piecewise constant over one displayed frame (60 fps and T = 2 s:
 * 120 levels a cycle) and follows the simulated clock whatever the speed, pausing with it.
 * Property edits were not used: each accepted edit rewinds the engine to the display time, and
 * 30 rewinds a second cut the internal-friction loop's loading branch short. A scene asks for
 * the cycle with a global the scene loader ignores (as `haptics`):
 * load_cycle = { body = "block", force = {0, 0, -100}, period = 2 }.
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app_internal.h"

static Vec3 load_at(const AppLoad *l, double t) {
    return vec3_scale(l->amplitude, 0.5 * (1.0 - cos(2.0 * M_PI * t / l->period)));
}

bool app_load_start(App *app, const char *body, Vec3 amplitude, double period) {
    AppLoad *l = &app->load;
    int b = app_view_body(app, body);
    const char *name = b >= 0 ? app->session.view->bodies[b].name : "";
    const char *why = b < 0                                  ? "no body of that name"
                      : !(period > 0.0) || !isfinite(period) ? "the period must be > 0 s"
                      : !isfinite(vec3_norm(amplitude))      ? "the force must be finite"
                                                             : NULL;
    if (why) {
        issim_log(ISSIM_LOG_WARN, "load cycle on '%s': %s", body, why);
        return false;
    }
    *l = (AppLoad){
        .configured = true, .on = true, .body = b, .amplitude = amplitude, .period = period};
    snprintf(l->text, sizeof l->text,
             "load cycle on %s: (%g, %g, %g) N (1 - cos(2 pi t / %g s)) / 2", name, amplitude.x,
             amplitude.y, amplitude.z, period);
    issim_log(ISSIM_LOG_INFO, "%s", l->text);
    return true;
}

void app_load_toggle(App *app) {
    AppLoad *l = &app->load;
    if (l->on) {
        app_load_stop(app);
    } else if (l->configured) {
        l->on = true;
        l->have_sent = false;
    }
}

/* The load through the engine's pointer spring (REGISTRY_SLOT_POINTER, the path of the mouse
 * drag): a soft spring (the peak load at 0.5 m of stretch) re-aimed every frame at the body's
 * point plus load / stiffness, so the engine applies the load within (stiffness x how far the
 * body moved since the frame): 0.16 N of 100 N for quasi_static_cycle's 0.8 mm. */
static void write_load(App *app, Vec3 f, bool on) {
    const AppLoad *l = &app->load;
    Session *s = &app->session;
    const ViewBody *b = &s->view->bodies[l->body];
    double k = vec3_norm(l->amplitude) / 0.5;
    Vec3 at = b->instance >= 0 ? s->view->instances[b->instance].pose.p : (Vec3){0, 0, 0};
    Vec3 target = vec3_add(at, vec3_scale(f, 1.0 / k));
    if (!isfinite(vec3_norm(target)))
        return;
    double v[SIM_POINTER_COUNT] = {[SIM_POINTER_DRAGGING] = on,
                                   [SIM_POINTER_TARGET_X] = target.x,
                                   [SIM_POINTER_TARGET_X + 1] = target.y,
                                   [SIM_POINTER_TARGET_X + 2] = target.z,
                                   [SIM_POINTER_STIFFNESS] = k};
    uint64_t ids[SIM_POINTER_ID_COUNT] = {[SIM_POINTER_ID_BODY] = engine_body_id_pack(b->id)};
    registry_slot_write_ids(s->reg, REGISTRY_SLOT_POINTER, sim_display_time(s->sim), v,
                            SIM_POINTER_COUNT, ids, SIM_POINTER_ID_COUNT);
}

void app_load_stop(App *app) {
    AppLoad *l = &app->load;
    if (l->on && app->session.sim && app->session.view && !app->drag.active)
        write_load(app, (Vec3){0, 0, 0}, false);
    l->on = false;
}

static double field_number(lua_State *L, const char *key, double fallback) {
    lua_getfield(L, -1, key);
    double v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : fallback;
    lua_pop(L, 1);
    return v;
}

/* The scene file's `load_cycle` global, run in a bare Lua state as src/haptics/scene.c reads
 * `haptics`. A malformed table is logged and ignored: the scene still opens. */
void app_load_from_scene(App *app, const char *path) {
    app->load.on = app->load.configured = false;
    lua_State *L = luaL_newstate();
    if (!L)
        return;
    luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
    lua_settop(L, 0);
    if (luaL_loadfile(L, path) == LUA_OK && lua_pcall(L, 0, 0, 0) == LUA_OK &&
        lua_getglobal(L, "load_cycle") == LUA_TTABLE) {
        char body[160] = "";
        lua_getfield(L, -1, "body");
        if (lua_isstring(L, -1))
            snprintf(body, sizeof body, "%s", lua_tostring(L, -1));
        lua_pop(L, 1);
        double a[3] = {NAN, NAN, NAN};
        if (lua_getfield(L, -1, "force") == LUA_TTABLE)
            for (int i = 0; i < 3; i++) {
                lua_rawgeti(L, -1, i + 1);
                a[i] = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : NAN;
                lua_pop(L, 1);
            }
        lua_pop(L, 1);
        double period = field_number(L, "period", NAN);
        if (!app_load_start(app, body, (Vec3){a[0], a[1], a[2]}, period))
            issim_log(ISSIM_LOG_WARN, "%s: load_cycle needs body, force = {x, y, z} and period",
                      path);
    }
    lua_close(L);
}

void app_load_pump(App *app) {
    AppLoad *l = &app->load;
    Session *s = &app->session;
    if (!l->on || !s->sim || !s->has_frame || l->body >= s->view->body_count || app->drag.active)
        return; /* a mouse drag takes the pointer spring while it lasts */
    /* at the engine's time: the load applies from there on, as the formula says */
    double t = registry_state_time(s->reg);
    if (l->have_sent && t == l->sent_t)
        return; /* paused: the load stays */
    l->sent = load_at(l, t);
    l->sent_t = t;
    l->have_sent = true;
    write_load(app, l->sent, true);
}

double app_load_magnitude(const App *app) {
    return app->load.on ? vec3_norm(app->load.sent) : 0.0;
}

/* The load as an arrow whose tip presses on the body, a fifth of the camera's distance long at
 * the cycle's peak. */
int app_load_arrows(const App *app, RenderArrow *out) {
    const AppLoad *l = &app->load;
    const SceneView *v = app->session.view;
    double peak = vec3_norm(l->amplitude);
    if (!l->on || !v || l->body >= v->body_count || v->bodies[l->body].instance < 0 ||
        !(peak > 0.0))
        return 0;
    const ViewInstance *in = &v->instances[v->bodies[l->body].instance];
    /* the tip on the body's bounds, on the side the load comes from: not hidden inside it */
    double size = 0.5 * vec3_norm(vec3_sub(in->local_box.max, in->local_box.min));
    double reach = 0.2 * app->camera.distance;
    Vec3 towards = vec3_scale(l->amplitude, 1.0 / peak);
    /* and a little aside, so the contact force arrow through the body does not cover it */
    Vec3 aside, unused;
    vec3_tangent_basis(towards, &aside, &unused);
    Vec3 tip =
        vec3_add(vec3_sub(in->pose.p, vec3_scale(towards, size)), vec3_scale(aside, 0.25 * size));
    Vec3 length = vec3_scale(l->sent, reach / peak);
    *out = (RenderArrow){
        .from = vec3_sub(tip, length), .to = tip, .color = {1.0f, 0.6f, 0.1f, 1}, .label = "load"};
    return 1;
}
