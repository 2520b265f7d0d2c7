/* The typed registry slots (sim.h: SimPointer, SimEngineStats; haptics_servo.h:
 * HapticHandleState, HapticServoStats): each struct written through the registry by its
 * writer's function and read back with its unpack function comes back field for field. Every
 * field holds a different value, so two fields packed at one index, or a layout longer than
 * what the write stores, fail here. */
#include <math.h>
#include <string.h>

#include "issim/engine_stats.h"
#include "issim/haptics_servo.h"
#include "issim/sim.h"
#include "testutil.h"

static Registry *make_registry(void) {
    IssimError err;
    RegistryDesc desc = registry_desc_default();
    Registry *reg = registry_create(&desc, &err);
    assert_non_null(reg);
    return reg;
}

static void assert_vec3_equal(Vec3 a, Vec3 b) {
    assert_true(a.x == b.x && a.y == b.y && a.z == b.z);
}

static void assert_vec2_equal(HapticVec2 a, HapticVec2 b) {
    assert_true(a.x == b.x && a.y == b.y);
}

static void test_pointer_round_trip(void **state) {
    Registry *reg = make_registry();
    SimPointer p = {.dragging = true,
                    .body = 0x123456789abcdefull,
                    .anchor = {1, 2, 3},
                    .target = {4, 5, 6},
                    .stiffness = 7,
                    .damping = 8,
                    .hold_omega = 9};
    sim_pointer_write(reg, 0.5, &p);
    RegistrySlot slot;
    registry_slot_read(reg, REGISTRY_SLOT_POINTER, &slot);
    assert_int_equal(slot.count, 1);
    assert_true(slot.t == 0.5);
    SimPointer q = sim_pointer_unpack(&slot);
    assert_true(q.dragging);
    assert_true(q.body == p.body); /* an id word, not a double: all 64 bits */
    assert_vec3_equal(q.anchor, p.anchor);
    assert_vec3_equal(q.target, p.target);
    assert_true(q.stiffness == 7 && q.damping == 8 && q.hold_omega == 9);
    /* a never-written slot unpacks to nothing dragged */
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &slot);
    assert_false(sim_pointer_unpack(&slot).dragging);
    registry_destroy(reg);
}

static void test_engine_stats_round_trip(void **state) {
    Registry *reg = make_registry();
    SimEngineStats s = {.steps = (1ull << 52) + 1, /* counts exact up to 2^53 */
                        .step_time_us = 2.5,
                        .sim_time = 3.25,
                        .realtime_factor = 4.5,
                        .resets = 5,
                        .warnings = 6,
                        .active_contacts = 7,
                        .awake_bodies = 8,
                        .bodies = 9,
                        .contact_reports = 10,
                        .contacts_published = 11,
                        .contacts_dropped = 12};
    sim_engine_stats_write(reg, 1.0, &s);
    RegistrySlot slot;
    registry_slot_read(reg, REGISTRY_SLOT_ENGINE_STATS, &slot);
    SimEngineStats r = sim_engine_stats_unpack(&slot);
    assert_true(r.steps == s.steps);
    assert_true(r.step_time_us == 2.5 && r.sim_time == 3.25 && r.realtime_factor == 4.5);
    assert_int_equal(r.resets, 5);
    assert_int_equal(r.warnings, 6);
    assert_int_equal(r.active_contacts, 7);
    assert_int_equal(r.awake_bodies, 8);
    assert_int_equal(r.bodies, 9);
    assert_int_equal(r.contact_reports, 10);
    assert_int_equal(r.contacts_published, 11);
    assert_int_equal(r.contacts_dropped, 12);
    registry_destroy(reg);
}

static void test_handle_round_trip(void **state) {
    Registry *reg = make_registry();
    HapticHandleState h = {.pos = {1, 2},
                           .vel = {3, 4},
                           .force = {5, 6},
                           .world = {7, 8, 9},
                           .world_vel = {10, 11},
                           .coupling_k = 12,
                           .coupling_b = 13,
                           .enabled = true,
                           .limits = 14,
                           .device_status = 15,
                           .q1 = 16,
                           .q5 = 17,
                           .tau1 = 18,
                           .tau5 = 19,
                           .texture_force = {20, 21},
                           .frame_t = 22,
                           .proxy_body = 0xfedcba9876543210ull};
    haptic_handle_write(reg, 2.0, &h);
    RegistrySlot slot;
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &slot);
    HapticHandleState r = haptic_handle_unpack(&slot);
    assert_vec2_equal(r.pos, h.pos);
    assert_vec2_equal(r.vel, h.vel);
    assert_vec2_equal(r.force, h.force);
    assert_vec3_equal(r.world, h.world);
    assert_vec2_equal(r.world_vel, h.world_vel);
    assert_true(r.coupling_k == 12 && r.coupling_b == 13);
    assert_true(r.enabled);
    assert_int_equal(r.limits, 14);
    assert_int_equal(r.device_status, 15);
    assert_true(r.q1 == 16 && r.q5 == 17 && r.tau1 == 18 && r.tau5 == 19);
    assert_vec2_equal(r.texture_force, h.texture_force);
    assert_true(r.frame_t == 22);
    assert_true(r.proxy_body == h.proxy_body);
    h.frame_t = NAN; /* before the first engine frame */
    haptic_handle_write(reg, 2.1, &h);
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &slot);
    assert_true(isnan(haptic_handle_unpack(&slot).frame_t));
    registry_destroy(reg);
}

static void test_servo_stats_round_trip(void **state) {
    Registry *reg = make_registry();
    HapticServoStats s = {.rate_hz = 1,
                          .measured_hz = 2,
                          .periods = 3,
                          .lateness_p50_us = 4,
                          .lateness_p99_us = 5,
                          .lateness_p999_us = 6,
                          .lateness_max_us = 7,
                          .overruns = 8,
                          .compute_mean_us = 9,
                          .compute_max_us = 10,
                          .fifo = true,
                          .stale_reads = 11,
                          .device_errors = 12,
                          .state = HAPTIC_SERVO_SAFE,
                          .engine_stalls = 13,
                          .force_limited = 14,
                          .missed_deadlines = 15,
                          .crc_errors = 16,
                          .frames_lost = 17,
                          .frames_dropped = 18,
                          .force_rms = 19,
                          .force_peak = 20,
                          .texture_periods = 21,
                          .motion_faults = 22,
                          .device_fault_reports = 23,
                          .fault = HAPTIC_FAULT_ACCELERATION,
                          .fault_measured = 24,
                          .fault_allowed = 25,
                          .motion_ratio = 26,
                          .passivity_energy = -27,
                          .passivity_energy_min = -28};
    haptic_servo_stats_write(reg, 3.0, &s);
    RegistrySlot slot;
    registry_slot_read(reg, REGISTRY_SLOT_SERVO_STATS, &slot);
    HapticServoStats r = haptic_servo_stats_unpack(&slot);
    assert_true(r.rate_hz == 1 && r.measured_hz == 2);
    assert_int_equal(r.periods, 3);
    assert_true(r.lateness_p50_us == 4 && r.lateness_p99_us == 5 && r.lateness_p999_us == 6 &&
                r.lateness_max_us == 7);
    assert_int_equal(r.overruns, 8);
    assert_true(r.compute_mean_us == 9 && r.compute_max_us == 10);
    assert_true(r.fifo);
    assert_int_equal(r.stale_reads, 11);
    assert_int_equal(r.device_errors, 12);
    assert_int_equal(r.state, HAPTIC_SERVO_SAFE);
    assert_int_equal(r.engine_stalls, 13);
    assert_int_equal(r.force_limited, 14);
    assert_int_equal(r.missed_deadlines, 15);
    assert_int_equal(r.crc_errors, 16);
    assert_int_equal(r.frames_lost, 17);
    assert_int_equal(r.frames_dropped, 18);
    assert_true(r.force_rms == 19 && r.force_peak == 20);
    assert_int_equal(r.texture_periods, 21);
    assert_int_equal(r.motion_faults, 22);
    assert_int_equal(r.device_fault_reports, 23);
    assert_int_equal(r.fault, HAPTIC_FAULT_ACCELERATION);
    assert_true(r.fault_measured == 24 && r.fault_allowed == 25 && r.motion_ratio == 26);
    assert_true(r.passivity_energy == -27 && r.passivity_energy_min == -28);
    registry_destroy(reg);
}

/* The frame's per-body layout (engine.h): a body's state written at its place and read back,
 * its neighbours untouched. */
static void test_frame_body_layout(void **state) {
    double values[3 * ENGINE_FRAME_BODY_VALUES + ENGINE_FRAME_ENERGY_VALUES];
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        values[i] = -1.0;
    EngineBodyState st = {
        .pos = {1, 2, 3}, .orient = {0.5, 0.5, -0.5, 0.5}, .vel = {4, 5, 6}, .angvel = {7, 8, 9}};
    engine_frame_set_body(values, 1, &st);
    for (int i = 0; i < ENGINE_FRAME_BODY_VALUES; i++) {
        assert_true(values[i] == -1.0);
        assert_true(values[2 * ENGINE_FRAME_BODY_VALUES + i] == -1.0);
    }
    const double *b1 = values + ENGINE_FRAME_BODY_VALUES;
    assert_true(b1[ENGINE_FRAME_POS + 2] == 3 && b1[ENGINE_FRAME_ORIENT] == 0.5 &&
                b1[ENGINE_FRAME_VEL] == 4 && b1[ENGINE_FRAME_ANGVEL + 2] == 9);
    EngineBodyState r = engine_frame_body(values, 1);
    assert_vec3_equal(r.pos, st.pos);
    assert_true(r.orient.w == 0.5 && r.orient.x == 0.5 && r.orient.y == -0.5 && r.orient.z == 0.5);
    assert_vec3_equal(r.vel, st.vel);
    assert_vec3_equal(r.angvel, st.angvel);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pointer_round_trip), cmocka_unit_test(test_engine_stats_round_trip),
        cmocka_unit_test(test_handle_round_trip),  cmocka_unit_test(test_servo_stats_round_trip),
        cmocka_unit_test(test_frame_body_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
