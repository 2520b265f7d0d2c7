/* A frictional pile in complementarity mode comes to rest and sleeps (issue 15; PGS with
 * friction, src/engine/engine_pgs.c). scenes/pile.lua's pairs have mu_s 0.5 > mu_k 0.4: a
 * contact that slips faster than PGS_STICK_SPEED at a step's start gets the kinetic limit.
 * PGS stops a large island after its sweep budget with velocity residuals of 1e-2 m/s while
 * the heap is moving; with a stick speed of 1e-5 m/s every contact of that heap read as
 * sliding, held only mu_k of friction, slipped, and read as sliding again: the pile crept for
 * ever (4 s, never asleep). The whole scene: smaller cuts keep a capsule rolling on the heap
 * (rigid contact has no rolling resistance), which keeps them awake either way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "support/testutil.h"

#define STEP 1e-3

static void test_pile_with_kinetic_below_static_sleeps(void **state) {
    (void)state;
    Engine *e = test_pile_engine(240, STEP, "resolver = \"complementarity\"\n");
    IssimError err = {0};
    double asleep_at = -1.0;
    for (int i = 1; i <= 3000 && asleep_at < 0.0; i++) {
        if (engine_advance(e, i * STEP, &err) != ISSIM_OK)
            fail_msg("step %d: %s", i, err.message);
        if (engine_awake_body_count(e) == 0)
            asleep_at = i * STEP;
    }
    EngineStats st = engine_stats(e);
    printf("240-body frictional pile (mu_s 0.5, mu_k 0.4), complementarity: every body asleep "
           "at t = %.3f s (%llu sleeps, %d awake at the end)\n",
           asleep_at, (unsigned long long)st.sleeps, engine_awake_body_count(e));
    assert_true(asleep_at > 0.0);
    assert_true(asleep_at < 3.0);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pile_with_kinetic_below_static_sleeps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
