/* VALIDATION.md V5 (004 4.8.1 eq. 4.91, Fig. 4.14-4.15, 4.8.5): a body resting on
 * internal-friction contacts is declared in equilibrium at a reported instant, with every
 * contact slow (|dg/dt| below the velocity tolerance) and its penetration inside
 * [F_ext / (n k (1 + f)), F_ext / (n k (1 - f))]; it then sleeps (not integrated: no step, no
 * right-hand side, a bit-identical state) until something interacts with it, and a body that
 * hits it wakes it.
 *  - one vertex: scenes/point_drop.lua with bar_floor.model = internal_friction (CVODE BDF);
 *  - two vertices: scenes/bar_drop_horizontal.lua, the same (n = 2);
 *  - woken by a hit: scenes/equilibrium_lists.lua, the ball E landing on the box D (RK4).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/io.h"
#include "testutil.h"

enum { MAX_LOG = 4096 };

typedef struct EventLog {
    int count;
    EngineEvent events[MAX_LOG];
} EventLog;

static void log_event(const EngineEvent *ev, void *user) {
    EventLog *log = user;
    if (log->count < MAX_LOG)
        log->events[log->count++] = *ev;
}

static Engine *load_engine(const char *scene, const char *const *sets, int set_count) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_file(test_source_path(scene), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    for (int i = 0; i < set_count; i += 2)
        if (thingdb_set_text(db, sets[i], sets[i + 1], false, &err) != ISSIM_OK)
            fail_msg("%s", err.message);
    EngineOptions o = engine_options_default();
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("%s", err.message);
    return e;
}

static void advance(Engine *e, double until) {
    IssimError err = {0};
    while (engine_time(e) < until - 1e-12)
        if (engine_step(e, &err) != ISSIM_OK)
            fail_msg("%s", err.message);
}

static const EngineEvent *find_event(const EventLog *log, EngineEventKind kind, int body) {
    for (int i = 0; i < log->count; i++)
        if (log->events[i].kind == kind && log->events[i].body == body)
            return &log->events[i];
    return NULL;
}

/* Runs e to `until` logging its events (*log, the caller frees it): body 0's sleep event, which
 * must have happened, the body still asleep at the end. */
static const EngineEvent *asleep_by(Engine *e, double until, EventLog **log) {
    *log = calloc(1, sizeof **log);
    assert_non_null(*log);
    engine_set_event_callback(e, log_event, *log);
    advance(e, until);
    const EngineEvent *sleep = find_event(*log, ENGINE_EVENT_SLEEP, 0);
    assert_non_null(sleep);
    assert_true(engine_body_asleep(e, 0));
    return sleep;
}

/* The bar of the scene drops, bounces, and comes to rest on n vertices. */
static void check_equilibrium_transition(const char *scene, int vertices) {
    /* The velocity tolerance of Fig. 4.15: 1 mm/s (CVODE resolves the bar's arrest in the
     * equilibrium band to well below it). */
    static const char *const sets[] = {"bar_floor.model", "internal_friction",
                                       "bar_floor.velocity_tolerance", "1e-3"};
    Engine *e = load_engine(scene, sets, 4);
    EventLog *log = NULL;
    const EngineEvent *sleep = asleep_by(e, 4.0, &log);
    assert_near(engine_body_sleep_time(e, 0), sleep->t, 0.0);

    /* The reported instant: every contact of the bar has reported equilibrium (each contact
     * reports once, when it enters it) and the bar sleeps at the step the last one did. */
    ContactReport reports[4];
    int n = engine_contact_reports(e, reports, 4);
    assert_int_equal(n, vertices);
    double last = -1.0;
    for (int i = 0; i < n; i++) {
        const EngineEvent *latest = NULL;
        for (int j = 0; j < log->count; j++) {
            const EngineEvent *ev = &log->events[j];
            if (ev->kind == ENGINE_EVENT_EQUILIBRIUM && ev->contact_id == reports[i].id &&
                ev->t <= sleep->t)
                latest = ev;
        }
        assert_non_null(latest);
        assert_true(fabs(latest->normal_velocity) < 1e-3); /* the velocity tolerance */
        last = fmax(last, latest->t);
    }
    assert_near(last, sleep->t, 0.0);

    /* Eq. 4.91 with the scene's k and r: g in [W / (k (1 + f)), W / (k (1 - f))], W = m g / n. */
    const ThingDb *db = engine_thingdb(e);
    double k = thing_real(db, thingdb_find(db, "bar_floor"), "stiffness");
    double r = thing_real(db, thingdb_find(db, "bar_floor"), "restitution");
    double f = contact_internal_friction_factor(r);
    double load = engine_body_mass(e, engine_body_id(e, 0)) * 9.81 / vertices;
    for (int i = 0; i < n; i++) {
        double g = reports[i].depth;
        printf("V5 %s: asleep at t = %.6f s, g = %.4e m in [%.4e, %.4e]\n", scene, sleep->t, g,
               load / (k * (1 + f)), load / (k * (1 - f)));
        assert_true(g >= load / (k * (1 + f)) * (1 - 1e-9));
        assert_true(g <= load / (k * (1 - f)) * (1 + 1e-9));
    }

    /* It stays asleep, and costs nothing: no step, no right-hand side, the state bit for bit. */
    EngineStats before = engine_stats(e);
    EngineBodyState st0 = engine_body_state(e, engine_body_id(e, 0));
    advance(e, 6.0);
    EngineStats after = engine_stats(e);
    EngineBodyState st1 = engine_body_state(e, engine_body_id(e, 0));
    assert_true(engine_body_asleep(e, 0));
    assert_int_equal(after.steps, before.steps);
    assert_int_equal(after.rhs_evals, before.rhs_evals);
    assert_int_equal(after.awake_bodies, 0);
    assert_memory_equal(&st0, &st1, sizeof st0);
    assert_int_equal(after.sleeps, 1);
    free(log);
    engine_destroy(e);
}

static void test_one_vertex(void **state) {
    (void)state;
    check_equilibrium_transition("scenes/point_drop.lua", 1);
}

static void test_two_vertices(void **state) {
    (void)state;
    check_equilibrium_transition("scenes/bar_drop_horizontal.lua", 2);
}

/* A spring/damper contact never reports equilibrium: the same bar never sleeps (the model
 * decides, not the engine). */
static void test_spring_damper_never_sleeps(void **state) {
    (void)state;
    Engine *e = load_engine("scenes/point_drop.lua", NULL, 0);
    advance(e, 4.0);
    assert_false(engine_body_asleep(e, 0));
    assert_int_equal(engine_stats(e).sleeps, 0);
    assert_int_equal(engine_stats(e).awake_bodies, 1);
    engine_destroy(e);
}

static int body_named(const Engine *e, const char *name) {
    for (int b = 0; b < engine_body_count(e); b++)
        if (strcmp(engine_body_name(e, engine_body_id(e, b)), name) == 0)
            return b;
    fail_msg("no body %s", name);
    return -1;
}

/* D sleeps on the floor; the ball E lands on it and wakes it: the wake event names E and comes
 * at E's contact onset on D. D falls asleep again once E's bounce has left it. */
/* The universe's sleep policy "still": the same spring/damper bar sleeps once slower than 1 mm/s
 * for 20 ms, with at most the kinetic energy such a speed carries taken away, and it stays at
 * rest where the spring holds it (depth m g / k to 1%). */
static void test_spring_damper_sleeps_when_still(void **state) {
    (void)state;
    static const char *const sets[] = {"universe.sleep", "still"};
    Engine *e = load_engine("scenes/point_drop.lua", sets, 2);
    EventLog *log = NULL;
    const EngineEvent *sleep = asleep_by(e, 4.0, &log);
    EngineStats st = engine_stats(e);
    assert_int_equal(st.sleeps, 1);
    assert_true(st.sleep_energy <= 0.5 * 1.0 * 1e-3 * 1e-3); /* unit mass under 1 mm/s */
    ContactReport reports[4];
    int n = engine_contact_reports(e, reports, 4);
    assert_int_equal(n, 1);
    double rest = 9.81 / 1e8; /* m g / k of the scene's pair */
    printf("V5 still: spring/damper bar asleep at t = %.6f s, depth %.6g m (m g / k = %.6g)\n",
           sleep->t, reports[0].depth, rest);
    assert_true(fabs(reports[0].depth - rest) < 0.01 * rest);
    free(log);
    engine_destroy(e);
}

/* "never": a complementarity box, which sleeps by default once still (time-stepped islands),
 * stays awake. */
static void test_sleep_never(void **state) {
    (void)state;
    static const char *const sets[] = {"box_floor.resolver", "complementarity", "universe.sleep",
                                       "never"};
    for (int policy = 0; policy < 2; policy++) {
        Engine *e = load_engine("scenes/box_on_plane.lua", sets, policy == 0 ? 2 : 4);
        advance(e, 1.5);
        printf("V5 box_on_plane (complementarity), sleep %s: %s at 1.5 s\n",
               policy == 0 ? "equilibrium" : "never",
               engine_body_asleep(e, 0) ? "asleep" : "awake");
        assert_int_equal(engine_body_asleep(e, 0), policy == 0);
        assert_int_equal(engine_stats(e).sleeps, policy == 0 ? 1 : 0);
        engine_destroy(e);
    }
}

static void test_woken_by_a_hit(void **state) {
    (void)state;
    Engine *e = load_engine("scenes/equilibrium_lists.lua", NULL, 0);
    int d = body_named(e, "D"), ball = body_named(e, "E");
    EventLog *log = calloc(1, sizeof *log);
    engine_set_event_callback(e, log_event, log);
    advance(e, 0.5);
    assert_true(engine_body_asleep(e, d));
    assert_false(engine_body_asleep(e, ball));
    log->count = 0;
    advance(e, 1.3);
    const EngineEvent *wake = find_event(log, ENGINE_EVENT_WAKE, d);
    assert_non_null(wake);
    assert_int_equal(wake->body_b, ball);
    const EngineEvent *hit = NULL;
    for (int i = 0; i < log->count && !hit; i++) {
        const EngineEvent *ev = &log->events[i];
        if (ev->kind == ENGINE_EVENT_CONTACT_BEGIN &&
            ((ev->body == d && ev->body_b == ball) || (ev->body == ball && ev->body_b == d)))
            hit = ev;
    }
    assert_non_null(hit);
    assert_near(wake->t, hit->t, 0.0);
    printf("V5 D woken by E at t = %.5f s (E's onset on D at %.5f s, %.3f m/s)\n", wake->t, hit->t,
           hit->normal_velocity);
    assert_true(wake->t > 1.0); /* E falls 6 m: about 1.1 s */
    advance(e, 2.5);
    assert_true(engine_body_asleep(e, d));
    free(log);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_vertex),
        cmocka_unit_test(test_two_vertices),
        cmocka_unit_test(test_spring_damper_never_sleeps),
        cmocka_unit_test(test_spring_damper_sleeps_when_still),
        cmocka_unit_test(test_sleep_never),
        cmocka_unit_test(test_woken_by_a_hit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
