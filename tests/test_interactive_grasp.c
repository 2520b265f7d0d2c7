/* The display's grasp (REGISTRY_SLOT_POINTER with SimPointer.hold_omega, Alt + drag in the
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
    SimPointer pull = {.dragging = true,
                       .body = engine_body_id_pack(body),
                       .anchor = {0.1, 0.0, 0.0},
                       .target = {0.1, 0.0, 2.0},
                       .stiffness = 355.3,
                       .damping = 37.7,
                       .hold_omega = hold_omega};
    sim_pointer_write(reg, t, &pull);
}

/* The box's largest tilt (rad) and its height at the end, over `seconds` of simulated time
 * after the pull starts, from every frame the engine thread computed. The display clock is
 * paused at 0 when the pull is written and moved to `seconds` once the engine has taken it, so
 * the frames do not depend on how fast a loaded machine runs the engine. */
static void pulled_box(TestThreads *th, double hold_omega, double seconds, double *largest_tilt,
                       double *z_end) {
    Sim *sim = th->sim = test_sim_from_source("grasp.lua", free_box);
    Registry *reg = sim_registry(sim);
    EngineBodyId box = engine_body_find(sim_engine(sim), "box"); /* before the thread starts */
    test_sim_start_paused(sim);
    write_pull(reg, 0.0, box, hold_omega);
    test_wait_engine_resets(reg, 1.0); /* the pull applies from the display time, 0 */
    sim_seek(sim, seconds);
    test_wait_state_time(reg, seconds);
    enum { MAX_FRAMES = 8192 };
    static double times[MAX_FRAMES], w[MAX_FRAMES], z[MAX_FRAMES];
    int n = registry_history(reg, registry_var_find(reg, "box.orient.w"), 0.0, seconds, times, w,
                             MAX_FRAMES);
    int nz = registry_history(reg, registry_var_find(reg, "box.pos.z"), 0.0, seconds, NULL, z,
                              MAX_FRAMES);
    assert_int_equal(n, nz);
    assert_true(n >= (int)(seconds / 1e-3)); /* every step of dt = 1 ms */
    assert_true(times[n - 1] >= seconds - 1e-3);
    *largest_tilt = 0.0;
    for (int i = 0; i < n; i++)
        *largest_tilt = fmax(*largest_tilt, 2.0 * acos(fmin(1.0, fabs(w[i]))));
    *z_end = z[n - 1];
    sim_destroy(sim);
    th->sim = NULL;
}

static void test_a_grasp_holds_the_attitude_a_drag_does_not(void **state) {
    double drag_tilt, drag_z, grasp_tilt, grasp_z;
    pulled_box(*state, 0.0, 1.0, &drag_tilt, &drag_z);
    pulled_box(*state, 2.0 * M_PI * 20.0, 1.0, &grasp_tilt, &grasp_z);
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
        cmocka_unit_test_setup_teardown(test_a_grasp_holds_the_attitude_a_drag_does_not,
                                        test_threads_setup, test_threads_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
