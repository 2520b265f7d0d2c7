/* Body ids through the registry's slots, read by the interactive engine thread: the display's
 * drag (REGISTRY_SLOT_POINTER) and the servo's coupling (REGISTRY_SLOT_HANDLE) name their body
 * by a packed EngineBodyId in the slot's id words. The engine thread checks it: a body id of
 * another engine (the previous scene's) is ignored with one warning and moves nothing; this
 * engine's id moves its body. Runs under ThreadSanitizer (label "threads"). */
#include <math.h>
#include <string.h>
#include <time.h>

#include "issim/engine.h"
#include "issim/haptics_servo.h"
#include "issim/io.h"
#include "issim/registry.h"
#include "issim/sim.h"
#include "testutil.h"

/* One free box, no gravity: it moves only when pulled. */
static const char *const free_box =
    "return {\n"
    "  universe = { gravity = {0, 0, 0}, integrator = 'rk4', dt = 1e-3, horizon = 0.05 },\n"
    "  things = {\n"
    "    { name = 'box', kind = 'body', mass = 1, inertia = {0.01, 0.01, 0.01},\n"
    "      pos = {0, 0, 1}, material = 'box' },\n"
    "  },\n"
    "}\n";

/* The id of the box in a session that is gone: what a display or servo still holding the
 * previous scene's ids would write. */
static EngineBodyId previous_scenes_box(void) {
    Sim *old = test_sim_from_source("ids.lua", free_box);
    EngineBodyId id = engine_body_find(sim_engine(old), "box");
    sim_destroy(old);
    return id;
}

/* box.pos.x in the newest frame once the engine has computed past t (bounded wait). */
static double box_x_after(Registry *reg, double t) {
    RegistryVarId x = registry_var_id(reg, "box.pos.x");
    double values[64];
    assert_true(registry_var_count(reg) <= 64);
    RegistryFrame frame = {.values = values};
    for (int i = 0; i < 10000 && !(registry_state_time(reg) >= t); i++)
        test_nap_ms(1);
    assert_true(registry_read_latest(reg, &frame));
    assert_true(frame.t >= t);
    return registry_frame_value(reg, &frame, x);
}

/* The display's drag: pull the box's centre toward (1, 0, 1) with a 3 Hz spring. */
static void write_drag(Registry *reg, double t, EngineBodyId body) {
    double v[SIM_POINTER_COUNT] = {0};
    uint64_t ids[SIM_POINTER_ID_COUNT] = {[SIM_POINTER_ID_BODY] = engine_body_id_pack(body)};
    v[SIM_POINTER_DRAGGING] = 1.0;
    v[SIM_POINTER_TARGET_X] = 1.0;
    v[SIM_POINTER_TARGET_X + 2] = 1.0;
    v[SIM_POINTER_STIFFNESS] = 355.0;
    v[SIM_POINTER_DAMPING] = 37.7;
    registry_slot_write_ids(reg, REGISTRY_SLOT_POINTER, t, v, SIM_POINTER_COUNT, ids,
                            SIM_POINTER_ID_COUNT);
}

static void test_a_drag_of_a_stale_body_is_ignored(void **state) {
    EngineBodyId stale = previous_scenes_box();
    Sim *sim = test_sim_from_source("ids.lua", free_box);
    Registry *reg = sim_registry(sim);
    EngineBodyId box = engine_body_find(sim_engine(sim), "box"); /* before the thread starts */
    assert_int_equal(stale.index, box.index);
    testlog_capture();
    IssimError err;
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);

    write_drag(reg, sim_display_time(sim), stale);
    double t = sim_display_time(sim) + 0.2;
    for (int i = 0; i < 5000 && sim_display_time(sim) < t; i++)
        test_nap_ms(1);
    assert_near(box_x_after(reg, t), 0.0, 0.0); /* nothing pulled it */
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "drag ignored"), 1);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "stale"), 1);

    write_drag(reg, sim_display_time(sim), box);
    double x = 0.0;
    for (int i = 0; i < 5000 && !(x > 0.1); i++) {
        test_nap_ms(1);
        x = box_x_after(reg, 0.0);
    }
    print_message("pulled by this engine's id: box.pos.x = %.3f m\n", x);
    assert_true(x > 0.1);
    sim_stop(sim);
    testlog_release();
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "drag ignored"), 1); /* said once */
    sim_destroy(sim);
}

/* The servo's side, played by this thread: the handle 1 m away in x, 100 N/m, fresh every
 * millisecond (the engine drops a slot older than 0.1 s). */
static void write_handle_for(Registry *reg, EngineBodyId proxy, double seconds) {
    double t0 = issim_wall_time();
    while (issim_wall_time() - t0 < seconds) {
        double v[HAPTIC_HANDLE_COUNT] = {0};
        v[HAPTIC_HANDLE_WORLD_X] = 1.0;
        v[HAPTIC_HANDLE_WORLD_Z] = 1.0;
        v[HAPTIC_HANDLE_COUPLING_K] = 100.0;
        v[HAPTIC_HANDLE_ENABLED] = 1.0;
        uint64_t ids[HAPTIC_HANDLE_ID_COUNT] = {[HAPTIC_HANDLE_ID_PROXY_BODY] =
                                                    engine_body_id_pack(proxy)};
        registry_slot_write_ids(reg, REGISTRY_SLOT_HANDLE, issim_wall_time(), v,
                                HAPTIC_HANDLE_COUNT, ids, HAPTIC_HANDLE_ID_COUNT);
        test_nap_ms(1);
    }
}

static void test_a_coupling_to_a_stale_proxy_is_ignored(void **state) {
    EngineBodyId stale = previous_scenes_box();
    Sim *sim = test_sim_from_source("ids.lua", free_box);
    Registry *reg = sim_registry(sim);
    EngineBodyId box = engine_body_find(sim_engine(sim), "box");
    testlog_capture();
    IssimError err;
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);

    write_handle_for(reg, stale, 0.2);
    assert_near(box_x_after(reg, 0.1), 0.0, 0.0);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "haptic coupling ignored"), 1);

    double x = 0.0;
    for (int i = 0; i < 50 && !(x > 0.01); i++) {
        write_handle_for(reg, box, 0.05);
        x = box_x_after(reg, 0.0);
    }
    print_message("coupled through this engine's id: box.pos.x = %.4f m\n", x);
    assert_true(x > 0.01);
    sim_stop(sim);
    testlog_release();
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "haptic coupling ignored"), 1);
    sim_destroy(sim);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_drag_of_a_stale_body_is_ignored),
        cmocka_unit_test(test_a_coupling_to_a_stale_proxy_is_ignored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
