/* Local models (issue 30 item 1, docs/haptics.md "Local models"): the proxy's contacts evaluated
 * by the servo with the contact module's own force laws at the handle's newest position.
 *
 * - the geometry: a spring/damper contact with the proxy as body a or as body b gives the
 *   force k (depth + the handle's advance along the normal), in N, either way;
 * - internal friction (004 4.6): the handle pressing 2 mm in and back out traces the hysteresis
 *   loop; the energy given back over the energy taken is r^2 (the phase switched by the copy's
 *   own commits at the servo rate);
 * - a contact map (000 ch. 3) with a decaying transient: the force the servo renders at a held
 *   depth starts at the map's instantaneous stiffness and settles to its steady one, sample by
 *   sample at the servo rate (the map's transient felt);
 * - impulse balance: a servo at 4 kHz and an "engine" stepping 1 ms (this test, in simulated
 *   time) exchanging local models and the HANDLE slot: the impulse the engine applies to the
 *   proxy in each step is exactly minus what the servo rendered since the step before;
 * - stall: with the engine's heartbeat stopped the local model is held in full for hold (4 ms),
 *   then fades: zero force 8 ms after the last beat (under 10 ms); a beating engine that
 *   publishes nothing new (only late) keeps the model held.
 * Every time here is the test's own clock: nothing depends on the wall clock. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/contactmap.h"
#include "issim/engine.h"
#include "issim/haptics_local.h"
#include "issim/haptics_servo.h"
#include "issim/registry.h"
#include "testutil.h"

static Registry *small_registry(void) {
    RegistryDesc rd = registry_desc_default();
    rd.history_frames = 64;
    Registry *reg = registry_create(&rd, NULL);
    assert_non_null(reg);
    return reg;
}

/* Publishes the views as the engine thread does, and beats at wall. */
static void publish(Registry *reg, Vec3 proxy_pos, double t_engine, double wall,
                    const EngineContactModelView *views, int n) {
    size_t room = registry_board_capacity(reg);
    void *buf = malloc(room);
    assert_non_null(buf);
    size_t bytes =
        haptic_local_pack(buf, room, 0x100000001ull, proxy_pos, t_engine, wall, views, n);
    assert_true(bytes > 0);
    assert_true(registry_board_publish(reg, t_engine, buf, bytes));
    registry_board_beat(reg, wall);
    free(buf);
}

static ContactParams spring(double k) {
    return (ContactParams){.model = CONTACT_MODEL_SPRING_DAMPER, .stiffness = k, .damping = 0.0};
}

static EngineContactModelView view(const ContactParams *p, const ContactHistory *h, bool is_a,
                                   double depth, Vec3 normal) {
    return (EngineContactModelView){
        .id = 7,
        .body_is_a = is_a,
        .params = p,
        .history = h,
        .kin = {.depth = depth, .normal = normal, .effective_mass = 0.2},
        .point = {0, 0, 0},
        .other_vel = {0, 0, 0},
    };
}

static void test_the_handle_feels_the_contact_law(void **state) {
    Registry *reg = small_registry();
    HapticLocalSet set;
    assert_int_equal(haptic_local_set_init(&set, reg, NULL), ISSIM_OK);
    ContactParams p = spring(2e4);
    ContactHistory h = {0};
    /* a wall on the +x side of the proxy, 1 mm deep; the handle 0.5 mm further in */
    Vec3 proxy = {0.1, 0.2, 0.05}, handle = {0.1005, 0.2002, 0.0};
    for (int as_a = 0; as_a < 2; as_a++) {
        /* the normal points from b into a: into the proxy when it is a, out of it when b */
        Vec3 n = as_a ? (Vec3){-1, 0, 0} : (Vec3){1, 0, 0};
        EngineContactModelView v = view(&p, &h, as_a, 1e-3, n);
        publish(reg, proxy, 1.0, 5.0, &v, 1);
        assert_true(haptic_local_set_refresh(&set, reg, 5.0005));
        Vec3 f;
        assert_int_equal(haptic_local_force(&set, handle, (Vec3){0, 0, 0}, 5e-4, &f), 1);
        print_message("proxy as %s: force (%.9f, %.9f, %.9f) N\n", as_a ? "a" : "b", f.x, f.y, f.z);
        assert_near(f.x, -2e4 * 1.5e-3, 1e-9); /* 30 N pushing the handle out of the wall */
        assert_near(f.y, 0.0, 1e-12);
        assert_near(f.z, 0.0, 1e-12); /* the proxy's height is its own, not the handle's plane */
        assert_near(set.arrival_latency, 5e-4, 1e-12);
    }
    haptic_local_set_free(&set);
    registry_destroy(reg);
}

/* The handle presses `steps` periods in to `deepest` and as many back out, along -normal. */
static void trace_loop(HapticLocalSet *set, Vec3 proxy, double deepest, int steps, double period,
                       double *absorbed, double *returned) {
    *absorbed = *returned = 0.0;
    double prev_depth = 0.0, prev_f = 0.0;
    for (int i = 1; i <= 2 * steps; i++) {
        double depth = deepest * (i <= steps ? (double)i / steps : (double)(2 * steps - i) / steps);
        double rate = (i <= steps ? 1.0 : -1.0) * deepest / (steps * period);
        Vec3 handle = {proxy.x + depth, proxy.y, 0}, vel = {rate, 0, 0};
        Vec3 f;
        haptic_local_force(set, handle, vel, i * period, &f);
        double fn = -f.x; /* the wall pushes the handle back along -x */
        double work = 0.5 * (fn + prev_f) * (depth - prev_depth);
        if (i <= steps)
            *absorbed += work;
        else
            *returned -= work;
        prev_depth = depth;
        prev_f = fn;
    }
}

static void test_internal_friction_hysteresis_in_the_hand(void **state) {
    Registry *reg = small_registry();
    HapticLocalSet set;
    assert_int_equal(haptic_local_set_init(&set, reg, NULL), ISSIM_OK);
    ContactParams p = {.model = CONTACT_MODEL_INTERNAL_FRICTION,
                       .stiffness = 3000.0,
                       .exponent = 1.0,
                       .restitution = 0.5};
    assert_int_equal(contact_params_derive(&p, NULL), ISSIM_OK);
    const ContactModelClass *cls = contact_model_class(p.model);
    ContactHistory h = {0};
    ContactKinematics onset = {.depth = 0.0, .normal = {-1, 0, 0}, .effective_mass = 0.2};
    cls->begin(&p, &h, &onset);
    Vec3 proxy = {0, 0, 0};
    EngineContactModelView v = view(&p, &h, true, 0.0, (Vec3){-1, 0, 0});
    publish(reg, proxy, 0.0, 1.0, &v, 1);
    assert_true(haptic_local_set_refresh(&set, reg, 1.0));
    double absorbed, returned;
    trace_loop(&set, proxy, 2e-3, 400, 2.5e-4, &absorbed, &returned);
    /* F = (1 + f) k g pressing in, (1 - f) k g coming out, f = (1 - r^2) / (1 + r^2) = 0.6:
       1.6 x 3000 x (2 mm)^2 / 2 = 9.6 mJ taken, r^2 of it = 2.4 mJ given back */
    print_message("absorbed %.6f mJ, returned %.6f mJ, ratio %.5f (r^2 = 0.25)\n", 1e3 * absorbed,
                  1e3 * returned, returned / absorbed);
    assert_near(absorbed, 9.6e-3, 0.05e-3);
    assert_near(returned / absorbed, 0.25, 0.01);
    haptic_local_set_free(&set);
    registry_destroy(reg);
}

static void test_the_maps_transient_at_the_servo_rate(void **state) {
    Registry *reg = small_registry();
    HapticLocalSet set;
    assert_int_equal(haptic_local_set_init(&set, reg, NULL), ISSIM_OK);
    /* h(kT) = 1500 + 6000 exp(-kT / 2 ms) N/m sampled at 10 kHz, against a flat 1e5 N/m */
    ContactMap *map = NULL;
    assert_int_equal(contact_map_transient("bar", 1500, 6000, 2e-3, 1e-4, 300, &map, NULL),
                     ISSIM_OK);
    ContactParams p = {.model = CONTACT_MODEL_CONTACT_MAP,
                       .stiffness = 1e5,
                       .map_a = map,
                       .map_rule = CONTACT_MAP_TRAPEZOID};
    assert_int_equal(contact_params_derive(&p, NULL), ISSIM_OK);
    const ContactModelClass *cls = contact_model_class(p.model);
    ContactKinematics onset = {.depth = 0.0, .normal = {-1, 0, 0}, .t = 0.0};
    size_t bytes = cls->state_size(&p, &onset);
    ContactHistory h = {.state = calloc(1, bytes), .state_bytes = bytes};
    assert_non_null(h.state);
    cls->begin(&p, &h, &onset);
    Vec3 proxy = {0, 0, 0};
    EngineContactModelView v = view(&p, &h, true, 0.0, (Vec3){-1, 0, 0});
    publish(reg, proxy, 0.0, 1.0, &v, 1);
    assert_true(haptic_local_set_refresh(&set, reg, 1.0));
    /* the handle pressed 1 mm in at once and held: a 10 kHz servo, one map sample a period */
    double first = 0.0, at_10ms = 0.0, prev = INFINITY;
    bool monotone = true;
    for (int i = 1; i <= 150; i++) {
        Vec3 f;
        haptic_local_force(&set, (Vec3){1e-3, 0, 0}, (Vec3){0, 0, 0}, i * 1e-4, &f);
        double fn = -f.x;
        if (i == 1)
            first = fn;
        if (i == 100)
            at_10ms = fn;
        if (i > 1 && fn > prev + 1e-9)
            monotone = false;
        prev = fn;
    }
    /* before the first sample the map's current coefficient h(T) = 7207 N/m in series with
       1e5: 6.72 N;
       settled (5 decay times) the map's steady 1500 in series: 1.48 N (the flat side holds
       the rest of the indentation) */
    print_message("force at the first sample %.4f N, after 10 ms %.4f N\n", first, at_10ms);
    double h1 = 1500.0 + 6000.0 * exp(-1e-4 / 2e-3); /* h(T): the current coefficient */
    assert_near(first, h1 * 1e5 / (h1 + 1e5) * 1e-3, 1e-9);
    assert_near(at_10ms, 1500.0 * 1e5 / 101500.0 * 1e-3, 0.1);
    assert_true(monotone);
    free(h.state);
    contact_map_release(map);
    haptic_local_set_free(&set);
    registry_destroy(reg);
}

/* ===== The servo and an engine in simulated time ===== */

static const uint64_t proxy_id = 0x0000000700000003ull;

typedef struct Rig {
    Registry *reg;
    HapticServo *servo;
    HapticServoDesc desc;
    char path[256];
    double values[4];
    ContactParams params;
    ContactHistory history;
} Rig;

/* A playback device: the handle from the workspace centre to `travel` m further along x over
 * `seconds` of device time (1 ms a read). */
static HapticDevice *moving_handle(const PantographConfig *c, double travel, double seconds,
                                   char *path, size_t size) {
    issim_strlcpy(path, test_temp_path(".csv"), size);
    HapticVec2 centre = pantograph_workspace_centre(c);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "0,%.17g,%.17g\n%.17g,%.17g,%.17g\n", centre.x, centre.y, seconds, centre.x + travel,
            centre.y);
    fclose(f);
    char spec[300];
    snprintf(spec, sizeof spec, "playback:%s", path);
    IssimError err = {0};
    HapticDevice *dev = haptic_device_open(spec, c, &err);
    if (!dev)
        fail_msg("%s", err.message);
    return dev;
}

static void rig_open_with(Rig *r, double travel, double seconds, double rate_hz,
                          const HapticSurface *surface);

static void rig_open(Rig *r, double travel, double seconds, double rate_hz) {
    rig_open_with(r, travel, seconds, rate_hz, NULL);
}

/* The rig, with a scene surface beside the proxy's contacts when surface is not NULL. */
static void rig_open_with(Rig *r, double travel, double seconds, double rate_hz,
                          const HapticSurface *surface) {
    r->reg = small_registry();
    const char *names[] = {"proxy.pos.x", "proxy.pos.y", "proxy.vel.x", "proxy.vel.y"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(registry_add_var(r->reg, names[i], "", NULL), i);
    r->desc = haptic_servo_desc_default();
    r->desc.rate_hz = rate_hz;
    issim_strlcpy(r->desc.coupling.proxy, "proxy", sizeof r->desc.coupling.proxy);
    r->desc.coupling.proxy_body = proxy_id;
    r->desc.coupling.stiffness = 400;
    r->desc.coupling.damping = 0;
    r->desc.coupling.engage_s = 0.0;
    r->desc.local.enabled = true;
    r->desc.max_force_step = 100; /* the slew limit is tested elsewhere */
    if (surface) {
        r->desc.surface_count = 1;
        r->desc.surfaces[0] = *surface;
    }
    PantographConfig c = pantograph_config_default();
    IssimError err = {0};
    r->servo = haptic_servo_create(moving_handle(&c, travel, seconds, r->path, sizeof r->path), &c,
                                   &r->desc, r->reg, &err);
    if (!r->servo)
        fail_msg("%s", err.message);
    haptic_servo_enable(r->servo, true);
    /* a wall at the world origin's +x side, 0.5 mm into the proxy: 2000 N/m world */
    r->params = spring(2000.0);
    r->history = (ContactHistory){0};
}

static void rig_close(Rig *r) {
    haptic_servo_destroy(r->servo);
    registry_destroy(r->reg);
    remove(r->path);
}

/* One engine step's publication: the proxy (held at the world origin) in a frame, its contact
 * on the board, a heartbeat. */
static void rig_engine_publish(Rig *r, double t_engine, double wall) {
    registry_publish(r->reg, t_engine, r->values);
    EngineContactModelView v = view(&r->params, &r->history, true, 5e-4, (Vec3){-1, 0, 0});
    publish(r->reg, (Vec3){0, 0, 0}, t_engine, wall, &v, 1);
}

static HapticHandleState rig_handle(const Rig *r) {
    RegistrySlot slot;
    registry_slot_read(r->reg, REGISTRY_SLOT_HANDLE, &slot);
    return haptic_handle_unpack(&slot);
}

static void test_impulse_balance_over_each_engine_step(void **state) {
    Rig r;
    rig_open(&r, 0.002, 0.3, 4000.0);
    HapticReaction reaction = {.primed = false};
    const double dt = 1e-3, period = 2.5e-4, t0 = 10.0, scale = r.desc.coupling.force_scale;
    double rendered = 0.0; /* x impulse, world N s, from the servo's own force each period */
    double last_impulse = 0.0, first_impulse = NAN, worst = 0.0, biggest_step = 0.0;
    int steps = 60;
    for (int s = 0; s < steps; s++) {
        double now = t0 + s * dt;
        RegistrySlot slot;
        registry_slot_read(r.reg, REGISTRY_SLOT_HANDLE, &slot);
        Vec3 f;
        double applied_before = reaction.applied[0];
        if (s > 1) {
            assert_true(haptic_local_engine_reaction(&slot, &reaction, dt, now, 0.1, &f));
            HapticHandleState h = haptic_handle_unpack(&slot);
            /* this step's share: minus what was rendered since the last step */
            double step = reaction.applied[0] - applied_before;
            double owed = -(h.impulse.x - last_impulse);
            worst = fmax(worst, fabs(step - owed));
            biggest_step = fmax(biggest_step, fabs(step));
            assert_near(f.x * dt, step, 1e-15);
            last_impulse = h.impulse.x;
        } else {
            /* the first read only primes: what the servo rendered before the engine listened
               is not owed (step 0 finds the slot empty) */
            assert_true(haptic_local_engine_reaction(&slot, &reaction, dt, now, 0.1, &f) ==
                        (s > 0));
            assert_near(f.x, 0.0, 0.0);
            last_impulse = first_impulse = haptic_handle_unpack(&slot).impulse.x;
        }
        rig_engine_publish(&r, s * dt, now);
        for (int i = 0; i < 4; i++) {
            assert_true(haptic_servo_period(r.servo, now + (i + 1) * period));
            rendered += scale * haptic_servo_force(r.servo).x * period;
        }
    }
    HapticHandleState h = rig_handle(&r);
    print_message("rendered %.9f N s (slot %.9f N s over %.4f s), applied %.9f N s up to the last "
                  "step, largest step %.6f N s, worst step mismatch %.3g N s\n",
                  rendered, h.impulse.x, h.impulse_time, reaction.applied[0], biggest_step, worst);
    assert_near(h.impulse.x, rendered, 1e-12);
    assert_near(h.impulse_time, steps * 4 * period, 1e-9);
    assert_true(biggest_step > 1e-3); /* the handle pressed: 5 N and more in world units */
    assert_true(worst < 1e-12);       /* rounding of the servo clock's sums */
    assert_near(reaction.applied[0], -(last_impulse - first_impulse), 1e-12);
    rig_close(&r);
}

static void test_a_stalled_engine_fades_within_10_ms(void **state) {
    Rig r;
    rig_open(&r, 0.0, 1.0, 4000.0); /* the handle held at the centre */
    const double period = 2.5e-4, t0 = 20.0;
    rig_engine_publish(&r, 0.0, t0);
    double held = 0.0;
    for (int i = 1; i <= 8; i++) /* the engine publishes every ms: the model is fresh */
        assert_true(haptic_servo_period(r.servo, t0 + i * period));
    held = haptic_servo_force(r.servo).x;
    print_message("force with a fresh model %.6f N\n", held);
    assert_true(held < -0.1); /* 0.5 mm x 2000 N/m / 5 + the coupling: pushes the handle out */
    /* Only late: the engine beats (it is alive, waiting at its horizon) but publishes nothing
       new for 50 ms. The model is held: the same force. */
    double now = t0 + 8 * period;
    for (int i = 1; i <= 200; i++) {
        now += period;
        registry_board_beat(r.reg, now - 1e-3);
        registry_publish(r.reg, 1e-3 * i, r.values); /* and its frames keep the coupling live */
        assert_true(haptic_servo_period(r.servo, now));
        assert_near(haptic_servo_force(r.servo).x, held, 1e-12);
    }
    /* Stalled: no beat from last_beat on. Full force while the beat is < 4 ms old, then a fade,
       zero from 8 ms. */
    double last_beat = now;
    registry_board_beat(r.reg, last_beat);
    double zero_at = NAN;
    for (int i = 1; i <= 60; i++) {
        now = last_beat + i * period;
        assert_true(haptic_servo_period(r.servo, now));
        double f = haptic_servo_force(r.servo).x;
        double age = now - last_beat;
        if (age <= 0.004 + 1e-12)
            assert_near(f, held, 1e-12);
        else if (age < 0.008 - 1e-12)
            assert_true(fabs(f) < fabs(held) && fabs(f) > 0.0);
        if (isnan(zero_at) && f == 0.0)
            zero_at = age;
        if (age >= 0.008 - 1e-12) /* the fade's end (the test clock's rounding: 1e-13 N) */
            assert_true(fabs(f) < 1e-9);
        if (age >= 0.008 + 1e-9)
            assert_true(f == 0.0);
    }
    print_message("stall to zero force: %.2f ms after the engine's last beat\n", 1e3 * zero_at);
    assert_true(zero_at <= 0.008 + period + 1e-9);
    /* The engine beats again: the model comes back over the 4 ms fade, a sixteenth a period, not
       at once (the handle may be deep in a surface it did not feel meanwhile). Without the ramp
       the first period had the whole force. */
    for (int i = 1; i <= 20; i++) {
        now += period;
        registry_board_beat(r.reg, now);
        assert_true(haptic_servo_period(r.servo, now));
        assert_near(haptic_servo_force(r.servo).x, held * fmin(i / 16.0, 1.0), 1e-9);
    }
    rig_close(&r);
}

/* Issue 30 item 1: a scene surface and a proxy contact in one servo go through the one model
 * loop: both counted and in contact, the force their sum (each law exactly), the deeper one
 * traced; when the engine stalls the contact fades and the surface, which does not come from the
 * engine, stays. */
static void test_surfaces_and_contacts_in_one_loop(void **state) {
    PantographConfig c = pantograph_config_default();
    HapticVec2 centre = pantograph_workspace_centre(&c);
    /* a PD wall the held handle is 1 mm into, pushing it along -x */
    HapticSurface wall = {.kind = HAPTIC_SURFACE_WALL,
                          .point = {centre.x - 0.001, centre.y},
                          .normal = {-1, 0},
                          .stiffness = 1000};
    Rig r;
    rig_open_with(&r, 0.0, 1.0, 4000.0, &wall);
    const double period = 2.5e-4, t0 = 30.0;
    double now = t0;
    for (int s = 0; s < 20; s++) {
        rig_engine_publish(&r, s * 1e-3, now);
        for (int i = 0; i < 4; i++)
            assert_true(haptic_servo_period(r.servo, now += period));
    }
    HapticHandleState h = rig_handle(&r);
    HapticServoStats st = haptic_servo_stats(r.servo);
    double wall_depth = h.pos.x - wall.point.x;
    double contact_world = 5e-4 + h.world.x; /* the proxy at the origin, normal -x */
    double expected = -1000.0 * wall_depth - 2000.0 * contact_world / r.desc.coupling.force_scale;
    print_message("models %d (%d touching); force %.9f N, wall %.9f + contact %.9f; traced "
                  "%.6f mm %.6f N\n",
                  st.models, st.models_touching, haptic_servo_force(r.servo).x,
                  -1000.0 * wall_depth, -2000.0 * contact_world / r.desc.coupling.force_scale,
                  1e3 * h.traced_depth, h.traced_force);
    assert_int_equal(st.models, 2);
    assert_int_equal(st.models_touching, 2);
    assert_near(haptic_servo_force(r.servo).x, expected, 1e-9);
    /* the wall is 1 mm in, the contact 0.1 mm at the handle's scale: the wall is traced */
    assert_near(h.traced_depth, wall_depth, 1e-12);
    assert_near(h.traced_force, 1000.0 * wall_depth, 1e-9);
    /* the engine stalls: 10 ms without a beat, past hold + fade */
    for (int i = 0; i < 40; i++)
        assert_true(haptic_servo_period(r.servo, now += period));
    h = rig_handle(&r);
    print_message("stalled: force %.9f N, the wall's %.9f N\n", haptic_servo_force(r.servo).x,
                  -1000.0 * (h.pos.x - wall.point.x));
    assert_near(haptic_servo_force(r.servo).x, -1000.0 * (h.pos.x - wall.point.x), 1e-9);
    rig_close(&r);
}

static void test_local_models_need_a_coupled_proxy(void **state) {
    Registry *reg = small_registry();
    HapticServoDesc d = haptic_servo_desc_default();
    d.local.enabled = true;
    PantographConfig c = pantograph_config_default();
    char path[256];
    IssimError err = {0};
    HapticServo *s =
        haptic_servo_create(moving_handle(&c, 0, 1, path, sizeof path), &c, &d, reg, &err);
    assert_null(s);
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "coupled proxy"));
    remove(path);
    registry_destroy(reg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_handle_feels_the_contact_law),
        cmocka_unit_test(test_internal_friction_hysteresis_in_the_hand),
        cmocka_unit_test(test_the_maps_transient_at_the_servo_rate),
        cmocka_unit_test(test_impulse_balance_over_each_engine_step),
        cmocka_unit_test(test_a_stalled_engine_fades_within_10_ms),
        cmocka_unit_test(test_surfaces_and_contacts_in_one_loop),
        cmocka_unit_test(test_local_models_need_a_coupled_proxy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
