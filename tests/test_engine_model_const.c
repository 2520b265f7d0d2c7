/* The engine's model is const during a step (issue 29 item 1): for every scene in scenes/, and
 * for the piles and the bolt under the complementarity resolver, the model's digest
 * (engine_model_digest: EngineModel and every array it owns, byte for byte) is the same after each
 * of its steps (to 0.5 s simulated, at most 20,000 steps) as it was before it, and the scenes
 * reach their contacts in that time (onsets counted). An edit is what changes the model: a mass
 * edit changes the digest, so the measure sees a write. */
#include <stdio.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_diagnostics.h"
#include "testutil.h"

#define UNTIL 0.5
#define MAX_STEPS 20000

static void count_onsets(const EngineEvent *event, void *user) {
    if (event->kind == ENGINE_EVENT_CONTACT_BEGIN)
        ++*(int *)user;
}

/* Steps the engine, checking the digest around every step; returns the contact onsets. */
static int steps_keep_the_model(Engine *e, const char *what) {
    IssimError err = {0};
    int onsets = 0;
    engine_set_event_callback(e, count_onsets, &onsets);
    for (int steps = 0; steps < MAX_STEPS && engine_time(e) < UNTIL; steps++) {
        uint64_t before = engine_model_digest(e);
        if (engine_step(e, &err) != ISSIM_OK)
            fail_msg("%s: step %d: %s", what, steps, err.message);
        if (engine_model_digest(e) != before)
            fail_msg("%s: step %d (t = %.6g s) changed the model", what, steps, engine_time(e));
    }
    engine_set_event_callback(e, NULL, NULL);
    return onsets;
}

static void test_no_step_changes_the_model(void **state) {
    (void)state;
    static char names[64][256];
    int n = test_list_scenes(names, 64, NULL), with_contact = 0;
    assert_true(n >= 20);
    for (int i = 0; i < n; i++) {
        char path[320];
        snprintf(path, sizeof path, "scenes/%.255s", names[i]);
        Engine *e = test_engine_from_scene(path);
        int onsets = steps_keep_the_model(e, names[i]);
        printf("  %-34s to t = %.4g s, %d contact onsets, model unchanged\n", names[i],
               engine_time(e), onsets);
        with_contact += onsets > 0;
        engine_destroy(e);
    }
    assert_true(with_contact >= n - 3); /* haptic scenes may wait for the hand */
}

static void under_complementarity(const char *scene, const char *const *pairs, int pair_count) {
    Engine *e = test_engine_from_scene(scene);
    IssimError err = {0};
    for (int p = 0; p < pair_count; p++) {
        char path[128];
        snprintf(path, sizeof path, "%s.resolver", pairs[p]);
        assert_int_equal(engine_apply_edit(e, path, "complementarity", &err), ISSIM_OK);
    }
    assert_true(steps_keep_the_model(e, scene) > 0);
    engine_destroy(e);
}

static void test_complementarity_steps_keep_the_model(void **state) {
    (void)state;
    static const char *const pile[] = {"pile_pile", "pile_wall"};
    under_complementarity("scenes/pile.lua", pile, 2);
    static const char *const bolt[] = {"bolt_plate"};
    under_complementarity("scenes/bolt_and_hole.lua", bolt, 1);
}

static void test_an_edit_changes_the_digest(void **state) {
    (void)state;
    Engine *e = test_engine_from_scene("scenes/point_drop.lua");
    IssimError err = {0};
    uint64_t before = engine_model_digest(e);
    const char *body = engine_body_name(e, engine_body_id(e, 0));
    char path[128];
    snprintf(path, sizeof path, "%s.mass", body);
    assert_int_equal(engine_apply_edit(e, path, "2.5", &err), ISSIM_OK);
    assert_true(engine_model_digest(e) != before);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_step_changes_the_model),
        cmocka_unit_test(test_complementarity_steps_keep_the_model),
        cmocka_unit_test(test_an_edit_changes_the_digest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
