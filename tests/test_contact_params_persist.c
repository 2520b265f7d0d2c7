/* A manifold contact that persists across collision updates keeps its previous one's parameter
 * set instead of deriving it again (engine_collide.c, the merge): that holds only because an edit
 * binds every contact again. The pile's pair restitution is edited while contacts rest and
 * slide; every active contact of the pair must then carry the damping the new restitution gives
 * its mass share (contact_damping_for_restitution of k, the pair's reduced mass over its patch
 * points), through the persisting contacts of the updates that follow, and not the old one. */
#include <math.h>

#include "../src/engine/engine_internal.h"
#include "testutil.h"

/* The active manifold contacts of pair `pair` whose damping is the one restitution r gives them;
 * *checked counts the contacts looked at. */
static int contacts_damped_for(const Engine *e, int pair, double r, int *checked) {
    int matching = 0;
    *checked = 0;
    for (int i = e->vertex_contact_count; i < e->contact_count; i++) {
        const EngineContact *c = &e->contacts[i];
        if (!c->active || c->pair != pair)
            continue;
        double ma = e->model.bodies[c->body].mass, m = ma;
        if (c->body_b >= 0) {
            double mb = e->model.bodies[c->body_b].mass;
            m = ma * mb / (ma + mb);
        }
        if (c->patch_points > 1)
            m /= c->patch_points;
        const ContactParams *p = engine_contact_params(e, c);
        (*checked)++;
        matching += p->damping == contact_damping_for_restitution(p->stiffness, m, r) &&
                    p->restitution == r;
    }
    return matching;
}

/* Output steps (one collision update each) up to t. */
static void step_to(Engine *e, double t) {
    IssimError err = {0};
    while (engine_time(e) < t - 1e-9)
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
}

static void test_an_edit_reaches_persisting_contacts(void **state) {
    (void)state;
    Engine *e = test_pile_engine(32, 5e-4, "");
    int pair = -1;
    for (int i = 0; i < e->model.pair_count; i++)
        if (e->model.pairs[i].material_a == e->model.pairs[i].material_b)
            pair = i; /* pile_pile */
    assert_true(pair >= 0);
    step_to(e, 0.4); /* the pour has landed: contacts persist from update to update */
    int checked = 0;
    int before = contacts_damped_for(e, pair, 0.3, &checked);
    assert_true(checked >= 10);
    assert_int_equal(before, checked);
    IssimError err = {0};
    assert_int_equal(engine_apply_edit(e, "pile_pile.restitution", "0.8", &err), ISSIM_OK);
    step_to(e, 0.41); /* 20 collision updates after the edit */
    int after = contacts_damped_for(e, pair, 0.8, &checked);
    assert_true(checked >= 10);
    assert_int_equal(after, checked);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_edit_reaches_persisting_contacts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
