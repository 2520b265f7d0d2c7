/* The collision manager thread follows the engine's rewinds. A drag, an edit or the scrubber
 * resets the engine to the display time, up to a horizon (0.25 s) behind the newest state the
 * manager has worked on. The manager used to take only states newer than the last it read, so
 * after every rewind it published nothing until the engine caught up again, and the engine
 * waited ENGINE_REPORT_WAIT_LIMIT (0.5 s of wall time) at each step for a report: the bolt of
 * bolt_and_hole.lua dragged in the GUI ran at 4e-5x real time. Here a box resting on a floor in
 * the interactive engine thread is dragged (a rewind); the engine then computes 0.3 s more
 * with every report fresh. Runs under ThreadSanitizer (label "threads"). */
#include <math.h>
#include <string.h>
#include <time.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/io.h"
#include "issim/registry.h"
#include "issim/sim.h"
#include "testutil.h"

static const char *const box_on_floor =
    "return {\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'rk4', dt = 1e-3, horizon = 0.25,\n"
    "               collision_thread = 'on' },\n"
    "  things = {\n"
    "    { name = 'box', kind = 'body', shape = 'box', half_extents = {0.05, 0.05, 0.05},\n"
    "      mass = 1, inertia = {0.0017, 0.0017, 0.0017}, pos = {0, 0, 0.05}, material = 'box' },\n"
    "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1}, offset = 0,\n"
    "      material = 'floor' },\n"
    "  },\n"
    "  contacts = {\n"
    "    { name = 'box_floor', materials = {'box', 'floor'}, model = 'spring_damper',\n"
    "      stiffness = 1e5, restitution = 0.5 },\n"
    "  },\n"
    "}\n";

/* The display clock is paused at 0 so that the engine fills its horizon ahead of it whatever
 * the machine's load (with the clock running, a loaded engine lags it and there is nothing ahead
 * to rewind); the drag then rewinds to 0, and the clock is moved on once the engine took it. */
static void test_reports_stay_fresh_after_a_rewind(void **state) {
    TestThreads *th = *state;
    Sim *sim = th->sim = test_sim_from_source("rewind.lua", box_on_floor);
    Registry *reg = sim_registry(sim);
    EngineBodyId box = engine_body_find(sim_engine(sim), "box");
    test_sim_start_paused(sim);
    /* The engine runs a horizon ahead of the display: the rewind goes back that far. */
    test_wait_state_time(reg, 0.2);

    SimPointer pull = {.dragging = true,
                       .body = engine_body_id_pack(box),
                       .target = {0.1, 0.0, 0.05}, /* slide it 10 cm along the floor */
                       .stiffness = 355.3,
                       .damping = 37.7};
    double rewound_to = sim_display_time(sim);
    sim_pointer_write(reg, rewound_to, &pull);
    test_wait_engine_resets(reg, 1.0);
    sim_seek(sim, rewound_to + 0.3);
    test_wait_state_time(reg, rewound_to + 0.3);
    sim_stop(sim);
    EngineStats s = engine_stats(sim_engine(sim));
    print_message("after the rewind to %.3f s: state at %.3f s; reports merged %llu, waited for "
                  "%llu, stale %llu\n",
                  rewound_to, registry_state_time(reg),
                  (unsigned long long)s.collision_reports_used,
                  (unsigned long long)s.collision_report_waits,
                  (unsigned long long)s.collision_reports_stale);
    assert_int_equal(s.collision_reports_stale, 0);
    assert_true(s.collision_reports_used > 100);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reports_stay_fresh_after_a_rewind, test_threads_setup,
                                        test_threads_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
