/* The display's grasp (REGISTRY_SLOT_POINTER with SIM_POINTER_HOLD_OMEGA, Alt + drag in the
 * view): the drag spring pulls the grabbed point and a critically damped attitude spring holds
 * the body's attitude as it was when grabbed. A box grabbed 0.1 m off its centre and pulled up
 * by 1 m: a plain drag swings it round (the pull's torque about the centre), a grasp lifts it
 * level. Runs through the interactive engine thread, under ThreadSanitizer (label "threads"). */
#include <math.h>
#include <string.h>
#include <time.h>

#include "issim/engine.h"
#include "issim/io.h"
#include "issim/registry.h"
#include "issim/sim.h"
#include "testutil.h"

/* One free box, no gravity: it moves only when pulled. */
static const char *const free_box =
    "return {\n"
    "  universe = { gravity = {0, 0, 0}, integrator = 'rk4', dt = 1e-3, horizon = 0.05 },\n"
    "  things = {\n"
    "    { name = 'box', kind = 'body', mass = 1, inertia = {0.1, 0.1, 0.1},\n"
    "      pos = {0, 0, 1}, material = 'box' },\n"
    "  },\n"
    "}\n";

/* Pull the body point (0.1, 0, 0) toward (0.1, 0, 2) with the GUI's 3 Hz spring for 1 kg;
 * hold_omega 0 is a plain drag. */
static void write_pull(Registry *reg, double t, EngineBodyId body, double hold_omega) {
    double v[SIM_POINTER_COUNT] = {0};
    uint64_t ids[SIM_POINTER_ID_COUNT] = {[SIM_POINTER_ID_BODY] = engine_body_id_pack(body)};
    v[SIM_POINTER_DRAGGING] = 1.0;
    v[SIM_POINTER_ANCHOR_X] = 0.1;
    v[SIM_POINTER_TARGET_X] = 0.1;
    v[SIM_POINTER_TARGET_X + 2] = 2.0;
    v[SIM_POINTER_STIFFNESS] = 355.3;
    v[SIM_POINTER_DAMPING] = 37.7;
    v[SIM_POINTER_HOLD_OMEGA] = hold_omega;
    registry_slot_write_ids(reg, REGISTRY_SLOT_POINTER, t, v, SIM_POINTER_COUNT, ids,
                            SIM_POINTER_ID_COUNT);
}

/* The box's largest tilt (rad) and its height at the end, over `seconds` of simulated time
 * after the pull starts; the engine thread is waited for (bounded). */
static void pulled_box(double hold_omega, double seconds, double *largest_tilt, double *z_end) {
    Sim *sim = test_sim_from_source("grasp.lua", free_box);
    Registry *reg = sim_registry(sim);
    EngineBodyId box = engine_body_find(sim_engine(sim), "box"); /* before the thread starts */
    IssimError err;
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    double t0 = sim_display_time(sim);
    write_pull(reg, t0, box, hold_omega);
    RegistryVarId w = registry_var_id(reg, "box.orient.w"), z = registry_var_id(reg, "box.pos.z");
    double values[64];
    assert_true(registry_var_count(reg) <= 64);
    RegistryFrame frame = {.values = values};
    *largest_tilt = 0.0;
    double t = t0;
    for (int i = 0; i < 20000 && t < t0 + seconds; i++) {
        test_nap_ms(1);
        if (!registry_read_latest(reg, &frame) || frame.t <= t)
            continue;
        t = frame.t;
        double qw = fmin(1.0, fabs(registry_frame_value(reg, &frame, w)));
        *largest_tilt = fmax(*largest_tilt, 2.0 * acos(qw));
        *z_end = registry_frame_value(reg, &frame, z);
    }
    sim_stop(sim);
    sim_destroy(sim);
    assert_true(t >= t0 + seconds);
}

static void test_a_grasp_holds_the_attitude_a_drag_does_not(void **state) {
    (void)state;
    double drag_tilt, drag_z, grasp_tilt, grasp_z;
    pulled_box(0.0, 1.0, &drag_tilt, &drag_z);
    pulled_box(2.0 * M_PI * 20.0, 1.0, &grasp_tilt, &grasp_z);
    print_message("pulled 0.1 m off centre for 1 s: drag tilts %.3f rad (z %.3f m), grasp "
                  "%.4f rad (z %.3f m)\n",
                  drag_tilt, drag_z, grasp_tilt, grasp_z);
    /* The drag's first pull, 355 N at 0.1 m on I = 0.1 kg m^2, swings the box by radians;
     * the grasp's 20 Hz hold is 1579 N m/rad: 35.5 N m / 1579 = 0.022 rad at most. */
    assert_true(drag_tilt > 0.5);
    assert_true(grasp_tilt < 0.03);
    /* Both lift it: the grasp's point ends near the target, the box's centre at z = 2. */
    assert_near(grasp_z, 2.0, 0.02);
    assert_true(drag_z > 1.5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_grasp_holds_the_attitude_a_drag_does_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
