/* Equilibrium lists (004 App. E, Fig. E.24-E.25) on scenes/equilibrium_lists.lua: A and B rest
 * on the plank C, C on the floor G (a fixed obstacle), D on G apart from C, and a ball E falls.
 *  - Once settled, A, B, C and D sleep; the lists are A = {C}, B = {C}, C = {A, B}, D = {}: the
 *    floor is on nobody's list (E.3.2). Only E is integrated.
 *  - An edit to C (a kick upwards) wakes C, and through C's list A and B (each wake event names
 *    the body that woke it); D stays asleep, since it touches C only through G. They sleep again.
 *  - Edits that change everything (gravity) wake every body; a reset (engine_restore_vars) too.
 *  - The work follows the awake bodies: while only E moves, a step evaluates one body. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/engine_diagnostics.h"
#include "issim/io.h"
#include "testutil.h"

enum { MAX_LOG = 4096 };

typedef struct EventLog {
    int count;
    EngineEvent events[MAX_LOG];
} EventLog;

static void log_event(const EngineEvent *ev, void *user) {
    EventLog *log = user;
    if (log->count < MAX_LOG && (ev->kind == ENGINE_EVENT_SLEEP || ev->kind == ENGINE_EVENT_WAKE))
        log->events[log->count++] = *ev;
}

typedef struct Scenario {
    Engine *e;
    EventLog log;
    int a, b, c, d, ball;
} Scenario;

static int body_named(const Engine *e, const char *name) {
    for (int b = 0; b < engine_body_count(e); b++)
        if (strcmp(engine_body_name(e, engine_body_id(e, b)), name) == 0)
            return b;
    fail_msg("no body %s", name);
    return -1;
}

static Scenario *scenario_create(void) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_file(test_source_path("scenes/equilibrium_lists.lua"), NULL, &db, &err) !=
        ISSIM_OK)
        fail_msg("%s", err.message);
    Scenario *s = calloc(1, sizeof *s);
    s->e = engine_create(db, NULL, &err);
    thingdb_destroy(db);
    if (!s->e)
        fail_msg("%s", err.message);
    s->a = body_named(s->e, "A");
    s->b = body_named(s->e, "B");
    s->c = body_named(s->e, "C");
    s->d = body_named(s->e, "D");
    s->ball = body_named(s->e, "E");
    engine_set_event_callback(s->e, log_event, &s->log);
    return s;
}

static void scenario_destroy(Scenario *s) {
    engine_destroy(s->e);
    free(s);
}

static void advance(Engine *e, double until) {
    IssimError err = {0};
    while (engine_time(e) < until - 1e-12)
        if (engine_step(e, &err) != ISSIM_OK)
            fail_msg("%s", err.message);
}

static void assert_list(const Engine *e, int body, const int *expected, int count) {
    int got[8];
    int n = engine_body_equilibrium_list(e, body, got, 8);
    printf("  %s list = {", engine_body_name(e, engine_body_id(e, body)));
    for (int i = 0; i < n && i < 8; i++)
        printf("%s%s", i ? ", " : "", engine_body_name(e, engine_body_id(e, got[i])));
    printf("}\n");
    assert_int_equal(n, count);
    for (int i = 0; i < count; i++)
        assert_int_equal(got[i], expected[i]);
}

static const EngineEvent *wake_of(const Scenario *s, int body) {
    for (int i = 0; i < s->log.count; i++)
        if (s->log.events[i].kind == ENGINE_EVENT_WAKE && s->log.events[i].body == body)
            return &s->log.events[i];
    return NULL;
}

static void test_settled_lists(void **state) {
    (void)state;
    Scenario *s = scenario_create();
    advance(s->e, 0.5);
    int bodies[] = {s->a, s->b, s->c, s->d};
    for (int i = 0; i < 4; i++)
        assert_true(engine_body_asleep(s->e, bodies[i]));
    assert_false(engine_body_asleep(s->e, s->ball));
    assert_int_equal(engine_awake_body_count(s->e), 1);
    assert_int_equal(engine_stats(s->e).awake_bodies, 1);
    /* Bodies ordered C, A, B, D, E in the scene. */
    int c_only[] = {s->c};
    int a_and_b[] = {s->a, s->b};
    assert_list(s->e, s->a, c_only, 1);
    assert_list(s->e, s->b, c_only, 1);
    assert_list(s->e, s->c, a_and_b, 2);
    assert_list(s->e, s->d, NULL, 0);
    assert_list(s->e, s->ball, NULL, 0); /* awake: no list */
    printf("  asleep at: C %.4f s, A %.4f s, B %.4f s, D %.4f s\n",
           engine_body_sleep_time(s->e, s->c), engine_body_sleep_time(s->e, s->a),
           engine_body_sleep_time(s->e, s->b), engine_body_sleep_time(s->e, s->d));

    /* The work follows the awake bodies: one body's right-hand side per evaluation. */
    EngineStats before = engine_stats(s->e);
    EngineBodyState c0 = engine_body_state(s->e, engine_body_id(s->e, s->c));
    advance(s->e, 0.9);
    EngineStats after = engine_stats(s->e);
    EngineBodyState c1 = engine_body_state(s->e, engine_body_id(s->e, s->c));
    assert_memory_equal(&c0, &c1, sizeof c0);
    assert_true(after.steps > before.steps); /* E falls */
    assert_int_equal(after.wakes, before.wakes);
    scenario_destroy(s);
}

static void test_edit_wakes_through_lists_not_through_floor(void **state) {
    (void)state;
    Scenario *s = scenario_create();
    advance(s->e, 0.5);
    s->log.count = 0;
    IssimError err = {0};
    assert_int_equal(engine_apply_edit(s->e, "C.vel", "0 0 0.05", &err), ISSIM_OK);
    const EngineEvent *wc = wake_of(s, s->c), *wa = wake_of(s, s->a), *wb = wake_of(s, s->b);
    assert_non_null(wc);
    assert_non_null(wa);
    assert_non_null(wb);
    assert_int_equal(wc->body_b, -1); /* the edit */
    assert_int_equal(wa->body_b, s->c);
    assert_int_equal(wb->body_b, s->c);
    assert_null(wake_of(s, s->d));
    assert_true(engine_body_asleep(s->e, s->d));
    assert_int_equal(engine_awake_body_count(s->e), 4);
    /* C hops 0.13 mm and lands; all three settle again before E lands on D (about 1.09 s). */
    advance(s->e, 1.0);
    assert_true(engine_body_asleep(s->e, s->a));
    assert_true(engine_body_asleep(s->e, s->b));
    assert_true(engine_body_asleep(s->e, s->c));
    assert_true(engine_body_asleep(s->e, s->d));
    assert_null(wake_of(s, s->d));
    printf("  after the kick: A, B, C asleep again at %.4f s\n",
           engine_body_sleep_time(s->e, s->c));
    scenario_destroy(s);
}

static void test_global_edits_and_resets_wake_everything(void **state) {
    (void)state;
    Scenario *s = scenario_create();
    advance(s->e, 0.5);
    IssimError err = {0};
    assert_int_equal(engine_apply_edit(s->e, "universe.gravity", "0 0 -9.8", &err), ISSIM_OK);
    assert_int_equal(engine_awake_body_count(s->e), 5);
    advance(s->e, 0.9);
    assert_int_equal(engine_awake_body_count(s->e), 1); /* settled again */
    /* A refused edit changes nothing, and wakes nobody. */
    assert_int_not_equal(engine_apply_edit(s->e, "C.mass", "-1", &err), ISSIM_OK);
    assert_int_equal(engine_awake_body_count(s->e), 1);
    /* Presentation edits (the camera, a colour) wake nobody either. */
    assert_int_equal(engine_apply_edit(s->e, "universe.camera_fov", "30", &err), ISSIM_OK);
    assert_int_equal(engine_apply_edit(s->e, "C.color", "0.2 0.4 0.6", &err), ISSIM_OK);
    assert_int_equal(engine_awake_body_count(s->e), 1);
    /* nor the display keys a scene opens with (issue 31 item 7) */
    assert_int_equal(engine_apply_edit(s->e, "universe.camera_up", "0 1 0", &err), ISSIM_OK);
    assert_int_equal(engine_apply_edit(s->e, "universe.show_contacts", "true", &err), ISSIM_OK);
    assert_int_equal(engine_apply_edit(s->e, "universe.plot_window", "10", &err), ISSIM_OK);
    assert_int_equal(engine_apply_edit(s->e, "C.label", "resting", &err), ISSIM_OK);
    assert_int_equal(engine_awake_body_count(s->e), 1);
    /* Restoring a frame: every body is integrated again from it. */
    double *frame = calloc((size_t)engine_var_count(s->e), sizeof(double));
    engine_write_vars(s->e, frame);
    assert_int_equal(engine_restore_vars(s->e, engine_time(s->e), frame, &err), ISSIM_OK);
    assert_int_equal(engine_awake_body_count(s->e), 5);
    advance(s->e, 1.0);
    assert_true(engine_body_asleep(s->e, s->a));
    /* The applied wrench (drag spring, haptic coupling) wakes its body, and its list. */
    assert_int_equal(engine_set_applied_wrench(s->e, engine_body_id(s->e, s->a), vec3(0, 0, -1),
                                               vec3(0, 0, 0), &err),
                     ISSIM_OK);
    assert_false(engine_body_asleep(s->e, s->a));
    assert_false(engine_body_asleep(s->e, s->c)); /* on A's list */
    free(frame);
    scenario_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settled_lists),
        cmocka_unit_test(test_edit_wakes_through_lists_not_through_floor),
        cmocka_unit_test(test_global_edits_and_resets_wake_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
