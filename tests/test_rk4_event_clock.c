/* RK4's located events move the bodies with the clock (engine_rk4.c, locate_event): a step
 * retaken to an event's crossing must leave the state at the instant the clock says.
 *
 * A witness sphere falls freely high above a 32-body cut of scenes/pile.lua (with its friction)
 * while the pile is poured at the scene's RK4 step. Gravity is constant and RK4 integrates it
 * exactly, so after every step the witness's vertical velocity is -g t to round-off, whatever
 * the pile's events did. Before the fix an event iterate that landed exactly on its crossing
 * (an active contact at depth +0, the offset of a step-end onset) ended the search with the
 * state at that iterate, about 1e-12 of the step, while the clock took the whole step: every
 * awake body stood still for 0.2 ms (at t = 0.1746 and 0.1748 s) while the friction springs
 * stretched by v dt, +2.0e-6 J of elastic energy from nothing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "support/testutil.h"

static const char witness[] =
    "things[#things + 1] = { name = 'witness', kind = 'body', shape = 'sphere', radius = 0.01,\n"
    "  pos = {0, 0, 50}, material = 'pile', mass = 0.01, inertia = {4e-7, 4e-7, 4e-7} }\n";

static void test_events_keep_the_state_on_the_clock(void **state) {
    (void)state;
    const double dt = 2e-4, g = 9.81;
    Engine *e = test_pile_engine(32, dt, witness);
    EngineBodyId w = engine_body_find(e, "witness");
    assert_false(engine_body_id_is_null(w));
    IssimError err = {0};
    double worst_lag = 0.0, worst_t = 0.0;
    uint64_t events_before = engine_stats(e).root_events;
    while (engine_time(e) < 0.2 - 0.5 * dt) {
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
        double lag = fabs(engine_body_state(e, w).vel.z + g * engine_time(e));
        if (lag > worst_lag) {
            worst_lag = lag;
            worst_t = engine_time(e);
        }
    }
    uint64_t events = engine_stats(e).root_events - events_before;
    printf("  %llu events in 0.2 s; witness's velocity off -g t by at most %.3g m/s (t = %.4f s)\n",
           (unsigned long long)events, worst_lag, worst_t);
    assert_true(events > 100); /* the pile's landing was stepped through its events */
    /* one step lost would be g dt = 2e-3 m/s; round-off over 1,000 steps is about 1e-15 */
    assert_true(worst_lag < 1e-9);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_events_keep_the_state_on_the_clock)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
