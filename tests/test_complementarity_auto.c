/* The "auto" solver choice of complementarity islands (issue 15, engine_complementarity_for):
 * the direct solver (Lemke, 001 2.2) for small islands, where "small" counts the unknowns of its
 * LCP (a frictional contact makes 10 with the 8-direction cone), PGS above; a named solver is
 * used at any size. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/engine_resolver.h"

static void test_auto_takes_lemke_for_small_islands_only(void **state) {
    (void)state;
    const EngineComplementaritySolver *lemke = engine_complementarity_lemke();
    const EngineComplementaritySolver *pgs = engine_complementarity_pgs();
    int friction_limit = ENGINE_AUTO_DIRECT_FRICTION_CONTACTS, limit = ENGINE_AUTO_DIRECT_CONTACTS;
    assert_ptr_equal(engine_complementarity_for(CONTACT_SOLVER_AUTO, friction_limit, true), lemke);
    assert_ptr_equal(engine_complementarity_for(CONTACT_SOLVER_AUTO, friction_limit + 1, true),
                     pgs);
    assert_ptr_equal(engine_complementarity_for(CONTACT_SOLVER_AUTO, limit, false), lemke);
    assert_ptr_equal(engine_complementarity_for(CONTACT_SOLVER_AUTO, limit + 1, false), pgs);
}

static void test_named_solver_at_any_size(void **state) {
    (void)state;
    assert_ptr_equal(engine_complementarity_for(CONTACT_SOLVER_LEMKE, 200, true),
                     engine_complementarity_lemke());
    assert_ptr_equal(engine_complementarity_for(CONTACT_SOLVER_PGS, 1, false),
                     engine_complementarity_pgs());
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_takes_lemke_for_small_islands_only),
        cmocka_unit_test(test_named_solver_at_any_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
