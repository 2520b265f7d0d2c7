/* The haptic part of a scene: an optional global `haptics` table that a scene file sets beside
 * the table it returns (the scene loader only reads the returned table, so scenes stay valid
 * for `issim run`). Read in its own Lua state with only the base and math libraries, the same
 * spirit as the scene sandbox. Keys (device-frame metres, N, s):
 *   haptics = {
 *     proxy = "body name",                      -- the coupled body (optional)
 *     coupling = { stiffness =, damping =, position_scale =, force_scale =, origin = {x,y,z},
 *                  stall_timeout =, fade = },
 *     surfaces = {
 *       { kind = "wall", point = {x, y}, normal = {x, y}, stiffness =, damping =, friction =,
 *         friction_speed =, texture = T },
 *       { kind = "region", min = {x, y}, max = {x, y}, texture = T },
 *     },
 *   }
 *   T = { mean = {t, n}, cov = {a, b, c, d} or sigma = {st, sn}, epsilon =, diagonal =,
 *         rate_speed_ref = }
 * and passivity, local and observer (their readers below).
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/haptics_servo.h"

typedef struct Reader {
    lua_State *L;
    const char *path;
    IssimError *err;
    IssimStatus status;
    char where[96];
} Reader;

static void fail(Reader *r, const char *key, const char *what) {
    if (r->status == ISSIM_OK)
        r->status = issim_error_set(r->err, ISSIM_ERR_INVALID, "%s: haptics.%s%s: %s", r->path,
                                    r->where, key, what);
}

/* Reads field key of the table on top of the stack as a number; absent keeps *out. */
static void get_number(Reader *r, const char *key, double *out) {
    lua_getfield(r->L, -1, key);
    if (lua_isnumber(r->L, -1)) {
        double v = lua_tonumber(r->L, -1);
        if (isfinite(v))
            *out = v;
        else
            fail(r, key, "must be finite");
    } else if (!lua_isnil(r->L, -1)) {
        fail(r, key, "must be a number");
    }
    lua_pop(r->L, 1);
}

static void get_bool(Reader *r, const char *key, bool *out) {
    lua_getfield(r->L, -1, key);
    if (lua_isboolean(r->L, -1))
        *out = lua_toboolean(r->L, -1);
    else if (!lua_isnil(r->L, -1))
        fail(r, key, "must be true or false");
    lua_pop(r->L, 1);
}

static void get_array(Reader *r, const char *key, double *out, int n) {
    lua_getfield(r->L, -1, key);
    if (lua_istable(r->L, -1)) {
        if ((int)lua_rawlen(r->L, -1) != n)
            fail(r, key,
                 n == 2   ? "needs 2 numbers"
                 : n == 3 ? "needs 3 numbers"
                          : "needs 4 numbers");
        for (int i = 0; i < n && r->status == ISSIM_OK; i++) {
            lua_rawgeti(r->L, -1, i + 1);
            if (lua_isnumber(r->L, -1))
                out[i] = lua_tonumber(r->L, -1);
            else
                fail(r, key, "entries must be numbers");
            lua_pop(r->L, 1);
        }
    } else if (!lua_isnil(r->L, -1)) {
        fail(r, key, "must be a list of numbers");
    }
    lua_pop(r->L, 1);
}

static void get_vec2(Reader *r, const char *key, HapticVec2 *v) {
    double a[2] = {v->x, v->y};
    get_array(r, key, a, 2);
    *v = (HapticVec2){a[0], a[1]};
}

static bool read_texture(Reader *r, HapticTexture *t) {
    lua_getfield(r->L, -1, "texture");
    bool present = lua_istable(r->L, -1);
    if (present) {
        *t = (HapticTexture){.epsilon = 0.005};
        get_array(r, "mean", t->mean, 2);
        double sigma[2] = {-1, -1};
        get_array(r, "sigma", sigma, 2);
        if (sigma[0] >= 0)
            t->cov[0] = sigma[0] * sigma[0], t->cov[3] = sigma[1] * sigma[1];
        get_array(r, "cov", t->cov, 4);
        get_number(r, "epsilon", &t->epsilon);
        get_bool(r, "diagonal", &t->diagonal);
        get_number(r, "rate_speed_ref", &t->rate_speed_ref);
    } else if (!lua_isnil(r->L, -1)) {
        fail(r, "texture", "must be a table");
    }
    lua_pop(r->L, 1);
    return present;
}

static void read_surface(Reader *r, HapticSurface *s) {
    lua_getfield(r->L, -1, "kind");
    const char *kind = lua_tostring(r->L, -1);
    bool wall = kind && strcmp(kind, "wall") == 0, region = kind && strcmp(kind, "region") == 0;
    lua_pop(r->L, 1);
    if (!wall && !region) {
        fail(r, "kind", "must be \"wall\" or \"region\"");
        return;
    }
    *s = (HapticSurface){.kind = wall ? HAPTIC_SURFACE_WALL : HAPTIC_SURFACE_REGION,
                         .normal = {0, 1},
                         .stiffness = 1000.0,
                         .damping = 2.0,
                         .friction_speed = 0.01};
    get_vec2(r, "point", &s->point);
    get_vec2(r, "normal", &s->normal);
    get_vec2(r, "min", &s->min);
    get_vec2(r, "max", &s->max);
    get_number(r, "stiffness", &s->stiffness);
    get_number(r, "damping", &s->damping);
    get_number(r, "friction", &s->friction);
    get_number(r, "friction_speed", &s->friction_speed);
    double n = hypot(s->normal.x, s->normal.y);
    if (wall && !(n > 0))
        fail(r, "normal", "must be non-zero");
    else if (wall)
        s->normal = (HapticVec2){s->normal.x / n, s->normal.y / n};
    if (s->stiffness < 0 || s->damping < 0 || s->friction < 0)
        fail(r, "stiffness", "stiffness, damping and friction must be >= 0");
    s->has_texture = read_texture(r, &s->texture);
}

static void read_coupling(Reader *r, HapticCoupling *c) {
    lua_getfield(r->L, -1, "coupling");
    if (lua_istable(r->L, -1)) {
        get_number(r, "stiffness", &c->stiffness);
        get_number(r, "damping", &c->damping);
        get_number(r, "position_scale", &c->position_scale);
        get_number(r, "force_scale", &c->force_scale);
        get_number(r, "stall_timeout", &c->stall_timeout_s);
        get_number(r, "fade", &c->fade_s);
        get_number(r, "engage", &c->engage_s);
        if (!(c->engage_s >= 0))
            fail(r, "engage", "the ramp-in time must be >= 0 s");
        double o[3] = {c->origin.x, c->origin.y, c->origin.z};
        get_array(r, "origin", o, 3);
        c->origin = (Vec3){o[0], o[1], o[2]};
        if (!(c->position_scale > 0) || !(c->force_scale > 0))
            fail(r, "coupling", "scales must be positive");
    }
    lua_pop(r->L, 1);
}

/* haptics.passivity = {enabled = true, max_damping = 0} (docs/scene-format.md) */
static void read_passivity(Reader *r, HapticPassivity *p) {
    lua_getfield(r->L, -1, "passivity");
    if (lua_istable(r->L, -1)) {
        snprintf(r->where, sizeof r->where, "passivity.");
        get_bool(r, "enabled", &p->enabled);
        get_number(r, "max_damping", &p->max_damping);
        if (!(p->max_damping >= 0))
            fail(r, "max_damping", "must be >= 0 N s/m (0: automatic)");
        r->where[0] = '\0';
    } else if (!lua_isnil(r->L, -1)) {
        fail(r, "passivity", "must be a table");
    }
    lua_pop(r->L, 1);
}

/* haptics.local = {enabled = true, hold = 0.004, fade = 0.004} (docs/haptics.md "Local
 * models"): the proxy's contacts rendered at the servo rate. */
static void read_local(Reader *r, HapticLocalDesc *l) {
    lua_getfield(r->L, -1, "local");
    if (lua_istable(r->L, -1)) {
        snprintf(r->where, sizeof r->where, "local.");
        get_bool(r, "enabled", &l->enabled);
        get_number(r, "hold", &l->hold_s);
        get_number(r, "fade", &l->fade_s);
        get_number(r, "track_hz", &l->track_hz);
        if (!(l->track_hz > 0) || l->track_hz > 1000)
            fail(r, "track_hz", "must be in (0, 1000] Hz");
        if (!(l->hold_s >= 0) || !(l->fade_s >= 0) || !(l->hold_s + l->fade_s <= 0.01))
            fail(r, "hold", "hold and fade must be >= 0 s and together at most 0.01 s");
        r->where[0] = '\0';
    } else if (!lua_isnil(r->L, -1)) {
        fail(r, "local", "must be a table");
    }
    lua_pop(r->L, 1);
}

/* haptics.observer = {enabled = true, rotor_inertia =, handle_mass =, memory = 0.0095}
 * (docs/haptics.md "Below one count"): the position and velocity below one count, on the
 * device's model, which the scene must give (the simulated P2's: issim-pantosim --describe). */
static void read_observer(Reader *r, HapticServoDesc *d) {
    lua_getfield(r->L, -1, "observer");
    if (lua_istable(r->L, -1)) {
        snprintf(r->where, sizeof r->where, "observer.");
        get_bool(r, "enabled", &d->subcount);
        get_number(r, "rotor_inertia", &d->observer_rotor_inertia);
        get_number(r, "handle_mass", &d->observer_handle_mass);
        get_number(r, "memory", &d->observer_memory_s);
        get_number(r, "lead", &d->observer_lead_s);
        if (!(d->observer_lead_s >= 0) || d->observer_lead_s > 0.01)
            fail(r, "lead", "must be in [0, 0.01] s");
        if (d->subcount && !(d->observer_rotor_inertia > 0 && d->observer_handle_mass > 0))
            fail(r, "rotor_inertia",
                 "the observer needs the device's rotor_inertia (kg m^2) and handle_mass (kg), "
                 "both > 0");
        if (!(d->observer_memory_s > 0) || d->observer_memory_s > 1.0)
            fail(r, "memory", "must be in (0, 1] s");
        r->where[0] = '\0';
    } else if (!lua_isnil(r->L, -1)) {
        fail(r, "observer", "must be a table");
    }
    lua_pop(r->L, 1);
}

static void read_haptics(Reader *r, HapticServoDesc *desc, char *proxy, size_t proxy_size) {
    lua_getfield(r->L, -1, "proxy");
    if (lua_isstring(r->L, -1))
        issim_strlcpy(proxy, lua_tostring(r->L, -1), proxy_size);
    lua_pop(r->L, 1);
    read_coupling(r, &desc->coupling);
    read_passivity(r, &desc->passivity);
    read_local(r, &desc->local);
    read_observer(r, desc);
    lua_getfield(r->L, -1, "surfaces");
    if (lua_istable(r->L, -1)) {
        int n = (int)lua_rawlen(r->L, -1);
        if (n > HAPTIC_MAX_SURFACES)
            fail(r, "surfaces", "too many (at most 16)");
        for (int i = 0; i < n && r->status == ISSIM_OK; i++) {
            lua_rawgeti(r->L, -1, i + 1);
            snprintf(r->where, sizeof r->where, "surfaces[%d].", i + 1);
            if (lua_istable(r->L, -1))
                read_surface(r, &desc->surfaces[i]);
            else
                fail(r, "", "must be a table");
            lua_pop(r->L, 1);
        }
        r->where[0] = '\0';
        if (r->status == ISSIM_OK)
            desc->surface_count = n;
    }
    lua_pop(r->L, 1);
}

IssimStatus haptic_scene_load(const char *path, HapticServoDesc *desc, char *proxy,
                              size_t proxy_size, IssimError *err) {
    return haptic_scene_read(path, desc, proxy, proxy_size, NULL, err);
}

IssimStatus haptic_scene_read(const char *path, HapticServoDesc *desc, char *proxy,
                              size_t proxy_size, bool *found, IssimError *err) {
    if (proxy_size)
        proxy[0] = '\0';
    if (found)
        *found = false;
    lua_State *L = luaL_newstate();
    if (!L)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
    lua_settop(L, 0);
    lua_pushnil(L);
    lua_setglobal(L, "dofile");
    lua_pushnil(L);
    lua_setglobal(L, "loadfile");
    Reader r = {.L = L, .path = path, .err = err, .status = ISSIM_OK};
    if (luaL_loadfile(L, path) != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
        r.status = issim_error_set(err, ISSIM_ERR_INVALID, "%s", lua_tostring(L, -1));
    } else {
        lua_getglobal(L, "haptics");
        if (lua_istable(L, -1)) {
            if (found)
                *found = true;
            HapticServoDesc copy = *desc;
            read_haptics(&r, &copy, proxy, proxy_size);
            if (r.status == ISSIM_OK)
                *desc = copy;
        } else if (!lua_isnil(L, -1)) {
            r.status = issim_error_set(err, ISSIM_ERR_INVALID, "%s: haptics must be a table", path);
        }
    }
    lua_close(L);
    return r.status;
}
