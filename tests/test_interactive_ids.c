/* Body ids through the registry's slots, read by the interactive engine thread: the display's
 * drag (REGISTRY_SLOT_POINTER) and the servo's coupling (REGISTRY_SLOT_HANDLE) name their body
 * by a packed EngineBodyId in the slot's id words. The engine thread checks it: a body id of
 * another engine (the previous scene's) is ignored with one warning and moves nothing; this
 * engine's id moves its body. Runs under ThreadSanitizer (label "threads"); every wait is for
 * the engine thread's event (a warning, a frame, a moved box), each test's teardown stops it. */
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

/* box.pos.x in the newest frame. */
static double box_x(Registry *reg) {
    RegistryVarId x = registry_var_id(reg, "box.pos.x");
    double values[64];
    assert_true(registry_var_count(reg) <= 64);
    RegistryFrame frame = {.values = values};
    assert_true(registry_read_latest(reg, &frame));
    return registry_frame_value(reg, &frame, x);
}

/* box.pos.x in the newest frame once the engine has computed past t. */
static double box_x_after(Registry *reg, double t) {
    test_wait_state_time(reg, t);
    return box_x(reg);
}

/* The display's drag: pull the box's centre toward (1, 0, 1) with a 3 Hz spring. */
static void write_drag(Registry *reg, double t, EngineBodyId body) {
    SimPointer pull = {.dragging = true,
                       .body = engine_body_id_pack(body),
                       .target = {1.0, 0.0, 1.0},
                       .stiffness = 355.0,
                       .damping = 37.7};
    sim_pointer_write(reg, t, &pull);
}

static bool warned(void *needle) {
    return testlog_count(ISSIM_LOG_WARN, needle) > 0;
}

static bool box_moved(void *reg) {
    return box_x(reg) > 0.1;
}

static void test_a_drag_of_a_stale_body_is_ignored(void **state) {
    TestThreads *th = *state;
    EngineBodyId stale = previous_scenes_box();
    Sim *sim = th->sim = test_sim_from_source("ids.lua", free_box);
    Registry *reg = sim_registry(sim);
    EngineBodyId box = engine_body_find(sim_engine(sim), "box"); /* before the thread starts */
    assert_int_equal(stale.index, box.index);
    testlog_capture();
    IssimError err;
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);

    /* the engine thread reads the pointer slot at every turn of its loop */
    write_drag(reg, sim_display_time(sim), stale);
    test_wait_for(warned, "drag ignored", "the engine thread to refuse the stale drag");
    assert_near(box_x_after(reg, registry_state_time(reg) + 0.2), 0.0, 0.0); /* nothing pulled */
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "drag ignored"), 1);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "stale"), 1);

    write_drag(reg, sim_display_time(sim), box);
    test_wait_for(box_moved, reg, "the box pulled 0.1 m by this engine's id");
    print_message("pulled by this engine's id: box.pos.x = %.3f m\n", box_x(reg));
    sim_stop(sim);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "drag ignored"), 1); /* said once */
}

/* The servo's side, played by this thread: the handle 1 m away in x, 100 N/m, written fresh at
 * every poll (the engine drops a slot older than 0.1 s of wall time). */
static void write_handle(Registry *reg, EngineBodyId proxy) {
    HapticHandleState handle = {.world = {1.0, 0.0, 1.0},
                                .coupling_k = 100.0,
                                .enabled = true,
                                .proxy_body = engine_body_id_pack(proxy)};
    haptic_handle_write(reg, issim_wall_time(), &handle);
}

typedef struct Handle {
    Registry *reg;
    EngineBodyId proxy;
} Handle;

/* The engine reads the HANDLE slot before each step: it steps as the display clock moves. */
static bool coupling_refused(void *arg) {
    Handle *h = arg;
    write_handle(h->reg, h->proxy);
    return testlog_count(ISSIM_LOG_WARN, "haptic coupling ignored") > 0;
}

static bool box_coupled(void *arg) {
    Handle *h = arg;
    write_handle(h->reg, h->proxy);
    return box_x(h->reg) > 0.01;
}

static void test_a_coupling_to_a_stale_proxy_is_ignored(void **state) {
    TestThreads *th = *state;
    EngineBodyId stale = previous_scenes_box();
    Sim *sim = th->sim = test_sim_from_source("ids.lua", free_box);
    Registry *reg = sim_registry(sim);
    EngineBodyId box = engine_body_find(sim_engine(sim), "box");
    testlog_capture();
    IssimError err;
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);

    Handle h = {reg, stale};
    test_wait_for(coupling_refused, &h, "the engine thread to refuse the stale proxy");
    assert_near(box_x_after(reg, registry_state_time(reg) + 0.1), 0.0, 0.0);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "haptic coupling ignored"), 1);

    h.proxy = box;
    test_wait_for(box_coupled, &h, "the box pulled 1 cm through this engine's id");
    print_message("coupled through this engine's id: box.pos.x = %.4f m\n", box_x(reg));
    sim_stop(sim);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "haptic coupling ignored"), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_drag_of_a_stale_body_is_ignored, test_threads_setup,
                                        test_threads_teardown),
        cmocka_unit_test_setup_teardown(test_a_coupling_to_a_stale_proxy_is_ignored,
                                        test_threads_setup, test_threads_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
