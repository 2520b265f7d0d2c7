/* The servo's side of the virtual coupling reads its proxy by name: the registry variables
 * "<proxy>.pos.x", ".pos.y", ".vel.x", ".vel.y", found when the servo is created, whatever
 * their order. The registry here lays them out in an order no engine writes, with decoys where
 * an offset from "<proxy>.pos.x" in the engine's order (pos, orient, vel) would land: the force
 * is right only if the named variables are read. Also: a proxy without variables, or a
 * coupling with a name but no body id, is refused at creation; the HANDLE slot carries the
 * proxy's body id in its id words. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/haptics_device.h"
#include "issim/haptics_pantograph.h"
#include "issim/haptics_servo.h"
#include "issim/registry.h"
#include "testutil.h"

#define DECOY 100.0 /* m, m/s: a force read from a decoy is thousands of newtons off */

/* pos.x first, as in the engine's layout; then decoys at pos.x + 1 (where pos.y would be) and
 * pos.x + 7, + 8 (vel.x, vel.y after pos(3) and orient(4)). */
static const char *const shuffled[] = {
    "proxy.pos.x", "decoy.a",     "proxy.vel.y", "proxy.orient.w", "decoy.b",
    "proxy.pos.y", "proxy.vel.x", "decoy.c",     "decoy.d",        "proxy.pos.z",
};
enum { VAR_COUNT = sizeof shuffled / sizeof shuffled[0] };

static const uint64_t proxy_id = 0x0000000700000003ull; /* engine 7's body 3: no engine here */

typedef struct Coupled {
    Registry *reg;
    HapticServo *servo;
    HapticServoDesc desc;
    char path[256];
} Coupled;

static Registry *shuffled_registry(void) {
    RegistryDesc rd = registry_desc_default();
    rd.history_frames = 64;
    Registry *reg = registry_create(&rd, NULL);
    assert_non_null(reg);
    for (int i = 0; i < VAR_COUNT; i++)
        assert_int_equal(registry_add_var(reg, shuffled[i], "", NULL), i);
    return reg;
}

/* A playback device holding the handle at the workspace centre. */
static HapticDevice *held_handle(const PantographConfig *c, char *path, size_t size) {
    issim_strlcpy(path, test_temp_path(".csv"), size);
    HapticVec2 centre = pantograph_workspace_centre(c);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "0,%.17g,%.17g\n1,%.17g,%.17g\n", centre.x, centre.y, centre.x, centre.y);
    fclose(f);
    char spec[300];
    snprintf(spec, sizeof spec, "playback:%s", path);
    IssimError err = {0};
    HapticDevice *dev = haptic_device_open(spec, c, &err);
    if (!dev)
        fail_msg("%s", err.message);
    return dev;
}

static HapticServoDesc coupling_to(const char *proxy, uint64_t body) {
    HapticServoDesc d = haptic_servo_desc_default();
    issim_strlcpy(d.coupling.proxy, proxy, sizeof d.coupling.proxy);
    d.coupling.proxy_body = body;
    d.coupling.stiffness = 400; /* world N/m */
    d.coupling.damping = 20;    /* world N s/m */
    d.coupling.engage_s = 0.0;  /* full gains at once */
    d.max_force_step = 100;     /* keep the slew limit out of the way */
    return d;
}

static void test_the_coupling_reads_the_proxy_by_name(void **state) {
    PantographConfig c = pantograph_config_default();
    Coupled t = {.reg = shuffled_registry(), .desc = coupling_to("proxy", proxy_id)};
    IssimError err = {0};
    t.servo = haptic_servo_create(held_handle(&c, t.path, sizeof t.path), &c, &t.desc, t.reg, &err);
    if (!t.servo)
        fail_msg("%s", err.message);
    haptic_servo_enable(t.servo, true);

    double frame[VAR_COUNT];
    for (int i = 0; i < VAR_COUNT; i++)
        frame[i] = DECOY;
    const double px = 0.02, py = -0.01, vx = -0.1, vy = 0.05;
    frame[registry_var_find(t.reg, "proxy.pos.x")] = px;
    frame[registry_var_find(t.reg, "proxy.pos.y")] = py;
    frame[registry_var_find(t.reg, "proxy.vel.x")] = vx;
    frame[registry_var_find(t.reg, "proxy.vel.y")] = vy;
    for (int i = 0; i < 5; i++) {
        registry_publish(t.reg, i * 1e-3, frame);
        assert_true(haptic_servo_period(t.servo, 10.0 + i * 1e-3));
    }

    /* The spring/damper between the handle's world point and the proxy, pulled back onto the
     * handle: minus the force on the proxy, over force_scale. */
    const HapticKinematics *k = haptic_servo_kinematics(t.servo);
    const HapticCoupling *cp = &t.desc.coupling;
    HapticVec2 centre = pantograph_workspace_centre(&c);
    double hx = cp->origin.x + cp->position_scale * (k->pos.x - centre.x);
    double hy = cp->origin.y + cp->position_scale * (k->pos.y - centre.y);
    double hvx = cp->position_scale * k->vel.x, hvy = cp->position_scale * k->vel.y;
    double fx = cp->stiffness * (hx - px) + cp->damping * (hvx - vx);
    double fy = cp->stiffness * (hy - py) + cp->damping * (hvy - vy);
    HapticVec2 f = haptic_servo_force(t.servo);
    print_message("handle force (%.6f, %.6f) N, expected (%.6f, %.6f) N\n", f.x, f.y,
                  -k->force_scale * fx / cp->force_scale, -k->force_scale * fy / cp->force_scale);
    assert_near(k->force_scale, 1.0, 0.0); /* the centre: no workspace fade */
    assert_near(f.x, -fx / cp->force_scale, 1e-9);
    assert_near(f.y, -fy / cp->force_scale, 1e-9);
    /* (8 N - 2 N) / 5 and (-4 N + 1 N) / 5 with the handle exactly at the centre; the encoders
     * put it within tens of microns */
    assert_near(f.x, 1.2, 0.05);
    assert_near(f.y, -0.6, 0.05);

    /* the engine's side gets the proxy's body id in the slot's id words, not in a double */
    RegistrySlot h;
    registry_slot_read(t.reg, REGISTRY_SLOT_HANDLE, &h);
    assert_int_equal(haptic_handle_unpack(&h).proxy_body, proxy_id);
    assert_near(haptic_handle_unpack(&h).coupling_k, 400, 0.0);

    haptic_servo_destroy(t.servo);
    registry_destroy(t.reg);
    remove(t.path);
}

static void test_a_proxy_without_variables_is_refused(void **state) {
    PantographConfig c = pantograph_config_default();
    Coupled t = {.reg = shuffled_registry(), .desc = coupling_to("ghost", proxy_id)};
    IssimError err = {0};
    t.servo = haptic_servo_create(held_handle(&c, t.path, sizeof t.path), &c, &t.desc, t.reg, &err);
    remove(t.path);
    assert_null(t.servo);
    assert_int_equal(err.status, ISSIM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "ghost.pos.x"));
    /* one missing variable is enough: vel.y removed from an otherwise complete proxy */
    const char *names[3] = {"p.pos.x", "p.pos.y", "p.vel.x"};
    Registry *partial = registry_create(NULL, NULL);
    for (int i = 0; i < 3; i++)
        registry_add_var(partial, names[i], "", NULL);
    HapticServoDesc d = coupling_to("p", proxy_id);
    assert_null(haptic_servo_create(held_handle(&c, t.path, sizeof t.path), &c, &d, partial, &err));
    remove(t.path);
    assert_non_null(strstr(err.message, "p.vel.y"));
    registry_destroy(partial);
    registry_destroy(t.reg);
}

/* Both halves or neither: a name alone would render a force the engine never applies. */
static void test_a_coupling_needs_its_name_and_its_body(void **state) {
    PantographConfig c = pantograph_config_default();
    Registry *reg = shuffled_registry();
    char path[256];
    IssimError err = {0};
    HapticServoDesc d = coupling_to("proxy", 0);
    assert_null(haptic_servo_create(held_handle(&c, path, sizeof path), &c, &d, reg, &err));
    remove(path);
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "body id"));
    d = coupling_to("", proxy_id);
    assert_null(haptic_servo_create(held_handle(&c, path, sizeof path), &c, &d, reg, &err));
    remove(path);
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    /* neither: a servo without coupling, whose slot names no proxy */
    d = coupling_to("", 0);
    HapticServo *servo = haptic_servo_create(held_handle(&c, path, sizeof path), &c, &d, reg, &err);
    assert_non_null(servo);
    assert_true(haptic_servo_period(servo, 1.0));
    RegistrySlot h;
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &h);
    assert_int_equal(h.count, 1);
    assert_int_equal(haptic_handle_unpack(&h).proxy_body, 0);
    haptic_servo_destroy(servo);
    registry_destroy(reg);
    remove(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_coupling_reads_the_proxy_by_name),
        cmocka_unit_test(test_a_proxy_without_variables_is_refused),
        cmocka_unit_test(test_a_coupling_needs_its_name_and_its_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
