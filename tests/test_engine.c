/* Engine unit tests: free flight against closed forms, rigid-body invariants, planar mode,
 * event location, warnings, edits, failure handling and the system matrices. Scenes are built
 * in code through the thing database, so these tests do not depend on the scene loader. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/engine_resolver.h"
#include "issim/registry.h"
#include "testutil.h"

static ThingDb *make_drop(const char *integrator, bool planar, double k, double height) {
    ThingDb *db = thingdb_create();
    IssimError err;
    ThingId u = thingdb_add(db, "universe", THING_UNIVERSE, thing_id_null(), &err);
    assert_false(thing_id_is_null(u));
    thingdb_set_text(db, "universe.integrator", integrator, false, &err);
    thingdb_set_text(db, "universe.planar", planar ? "true" : "false", false, &err);
    thingdb_set_text(db, "universe.rtol", "1e-10", false, &err);
    thingdb_set_text(db, "universe.atol", "1e-12", false, &err);
    ThingId bar = thingdb_add(db, "bar", THING_RIGID_BODY, thing_id_null(), &err);
    assert_false(thing_id_is_null(bar));
    char pos[64];
    snprintf(pos, sizeof pos, "0 0 %.17g", height);
    assert_int_equal(thingdb_set_text(db, "bar.pos", pos, false, &err), ISSIM_OK);
    thingdb_set_text(db, "bar.inertia", "0.0033333 0.0033333 0.00001", false, &err);
    thingdb_set_text(db, "bar.vertices", "{{0,0,-0.1},{0,0,0.1}}", false, &err);
    thingdb_set_text(db, "bar.material", "bar", false, &err);
    ThingId floor = thingdb_add(db, "floor", THING_FIXED_OBSTACLE, thing_id_null(), &err);
    assert_false(thing_id_is_null(floor));
    thingdb_set_text(db, "floor.material", "floor", false, &err);
    ThingId pair = thingdb_add(db, "bar_floor", THING_CONTACT_PAIR, thing_id_null(), &err);
    assert_int_equal(contact_pair_add_props(db, pair, &err), ISSIM_OK);
    thingdb_set_text(db, "bar_floor.material_a", "bar", false, &err);
    thingdb_set_text(db, "bar_floor.material_b", "floor", false, &err);
    char ks[64];
    snprintf(ks, sizeof ks, "%.17g", k);
    assert_int_equal(thingdb_set_text(db, "bar_floor.stiffness", ks, false, &err), ISSIM_OK);
    return db;
}

static Engine *engine_from(ThingDb *db) {
    IssimError err = {0};
    Engine *e = engine_create(db, NULL, &err);
    if (!e)
        fail_msg("engine_create: %s", err.message);
    thingdb_destroy(db);
    return e;
}

static void free_fall_matches_closed_form(const char *integrator, double tol) {
    Engine *e = engine_from(make_drop(integrator, false, 1e5, 10.0));
    IssimError err;
    assert_int_equal(engine_advance(e, 1.0, &err), ISSIM_OK);
    EngineBodyState s = engine_body_state(e, engine_body_id(e, 0));
    assert_near(s.pos.z, 10.0 - 0.5 * 9.81, tol);
    assert_near(s.vel.z, -9.81, tol);
    assert_near(engine_time(e), 1.0, 1e-12);
    engine_destroy(e);
}

static void test_free_fall_bdf(void **state) {
    free_fall_matches_closed_form("bdf", 1e-7);
}
static void test_free_fall_adams(void **state) {
    free_fall_matches_closed_form("adams", 1e-7);
}
static void test_free_fall_rk4(void **state) {
    free_fall_matches_closed_form("rk4", 1e-9);
}

/* Output instants on RK4's own grid cost one step each, also where an ulp of t exceeds the old
 * remainder tolerance (1e-12 steps): past t = 8 s every output instant used to add a step of one
 * ulp (the rattleback took 45,120 steps for 40,000 outputs). */
static void test_rk4_outputs_on_the_step_grid_take_one_step_each(void **state) {
    ThingDb *db = make_drop("rk4", false, 1e3, 1e4); /* no contact: it falls for 20 s */
    IssimError err;
    assert_int_equal(thingdb_set_text(db, "universe.dt", "1e-3", false, &err), ISSIM_OK);
    Engine *e = engine_from(db);
    const int outputs = 20000;
    for (int k = 1; k <= outputs; k++)
        assert_int_equal(engine_advance(e, (double)k * 1e-3, &err), ISSIM_OK);
    EngineStats st = engine_stats(e);
    print_message("RK4 steps for %d output instants of 1 ms to 20 s: %llu\n", outputs,
                  (unsigned long long)st.steps);
    assert_int_equal(st.steps, outputs);
    assert_near(engine_time(e), 20.0, 1e-12);
    engine_destroy(e);
}

/* Torque-free asymmetric body: energy and world angular momentum are invariants. */
static void test_free_rigid_body_invariants(void **state) {
    ThingDb *db = make_drop("bdf", false, 1e5, 100.0);
    IssimError err;
    thingdb_set_text(db, "universe.gravity", "0 0 0", false, &err);
    thingdb_set_text(db, "bar.inertia", "1 2 3", false, &err);
    thingdb_set_text(db, "bar.angvel", "0.1 3 0.2", false, &err); /* near the unstable axis */
    Engine *e = engine_from(db);
    EngineBodyState s0 = engine_body_state(e, engine_body_id(e, 0));
    Mat3 i0 = mat3_world_inertia(s0.orient, vec3(1, 2, 3));
    Vec3 l0 = mat3_mul_vec(i0, s0.angvel);
    double e0 = engine_energy(e).kinetic;
    assert_int_equal(engine_advance(e, 5.0, &err), ISSIM_OK);
    EngineBodyState s = engine_body_state(e, engine_body_id(e, 0));
    Vec3 l = mat3_mul_vec(mat3_world_inertia(s.orient, vec3(1, 2, 3)), s.angvel);
    assert_near(engine_energy(e).kinetic, e0, 1e-6 * e0);
    assert_near(vec3_norm(vec3_sub(l, l0)), 0.0, 1e-6 * vec3_norm(l0));
    /* The body tumbles (intermediate axis): the attitude really moved. */
    assert_true(fabs(s.orient.w - 1.0) > 1e-3);
    engine_destroy(e);
}

static void test_planar_mode_stays_in_plane(void **state) {
    ThingDb *db = make_drop("bdf", true, 1e5, 0.3);
    IssimError err;
    thingdb_set_text(db, "bar.orient", "0.9238795 0 0.3826834 0", false, &err); /* 45 deg */
    thingdb_set_text(db, "bar.vel", "0.5 0.7 0", false, &err);                  /* y is dropped */
    Engine *e = engine_from(db);
    assert_int_equal(engine_advance(e, 1.0, &err), ISSIM_OK);
    EngineBodyState s = engine_body_state(e, engine_body_id(e, 0));
    assert_near(s.pos.y, 0.0, 0.0);
    assert_near(s.vel.y, 0.0, 0.0);
    assert_near(s.angvel.x, 0.0, 0.0);
    assert_near(s.angvel.z, 0.0, 0.0);
    assert_near(s.orient.x, 0.0, 0.0);
    assert_near(s.orient.z, 0.0, 0.0);
    /* The tilted bar hit the floor with one end and picked up spin about y. */
    assert_true(fabs(s.angvel.y) > 0.1);
    assert_int_equal(engine_velocity_dim(e), 3);
    engine_destroy(e);
}

typedef struct EventLog {
    int count;
    EngineEvent events[64];
} EventLog;

static void log_event(const EngineEvent *ev, void *user) {
    EventLog *log = user;
    if (log->count < 64)
        log->events[log->count++] = *ev;
}

/* Onset lands on the analytic instant: the tip (0.1 below the centre) reaches z = 0 after
 * sqrt(2 h / g). */
static void onset_is_located(const char *integrator, double dt) {
    ThingDb *db = make_drop(integrator, true, 1e5, 0.6);
    IssimError err;
    char dts[32];
    snprintf(dts, sizeof dts, "%g", dt);
    thingdb_set_text(db, "universe.dt", dts, false, &err);
    Engine *e = engine_from(db);
    EventLog log = {0};
    engine_set_event_callback(e, log_event, &log);
    assert_int_equal(engine_advance(e, 0.4, &err), ISSIM_OK);
    assert_true(log.count >= 1);
    assert_int_equal(log.events[0].kind, ENGINE_EVENT_CONTACT_BEGIN);
    assert_int_equal(log.events[0].vertex, 0);
    double t_expected = sqrt(2.0 * 0.5 / 9.81);
    assert_near(log.events[0].t, t_expected, 1e-8);
    assert_near(log.events[0].normal_velocity, -9.81 * t_expected, 1e-6);
    engine_destroy(e);
}

static void test_onset_located_bdf(void **state) {
    onset_is_located("bdf", 1e-3);
}
static void test_onset_located_rk4(void **state) {
    onset_is_located("rk4", 1e-4);
}

/* An onset exactly at an output time (1 mm at 0.1 m/s, no gravity: t = 0.01 s, a multiple of
 * dt) is one contact of the whole damped half period, not an onset and an end 1e-16 s apart. */
static void impact_on_output_time(const char *integrator, double dt) {
    ThingDb *db = make_drop(integrator, true, 1e5, 0.101);
    IssimError err;
    char dts[32];
    snprintf(dts, sizeof dts, "%g", dt);
    thingdb_set_text(db, "universe.dt", dts, false, &err);
    thingdb_set_text(db, "universe.gravity", "0 0 0", false, &err);
    thingdb_set_text(db, "bar.vel", "0 0 -0.1", false, &err);
    Engine *e = engine_from(db);
    EventLog log = {0};
    engine_set_event_callback(e, log_event, &log);
    while (engine_time(e) < 0.02 - 1e-12) /* output step by output step, as sessions run */
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
    assert_int_equal(log.count, 2);
    assert_int_equal(log.events[0].kind, ENGINE_EVENT_CONTACT_BEGIN);
    assert_near(log.events[0].t, 0.01, 1e-9);
    assert_int_equal(log.events[1].kind, ENGINE_EVENT_CONTACT_END);
    double b = contact_damping_for_restitution(1e5, 1.0, 0.8);
    assert_near(log.events[1].duration, contact_duration_of(1e5, b, 1.0), 1e-8);
    assert_near(engine_body_state(e, engine_body_id(e, 0)).vel.z, 0.08, 1e-5);
    engine_destroy(e);
}

static void test_impact_on_output_time(void **state) {
    impact_on_output_time("bdf", 1e-3);
    impact_on_output_time("rk4", 1e-5);
}

static void test_coarse_step_warning(void **state) {
    testlog_capture();
    ThingDb *db = make_drop("rk4", true, 1e5, 0.6);
    IssimError err;
    thingdb_set_text(db, "universe.dt", "1e-3", false, &err);
    Engine *e = engine_from(db);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "too coarse"), 1);
    assert_int_equal(engine_stats(e).warnings, 1);
    engine_destroy(e);
    testlog_clear();
    db = make_drop("rk4", true, 1e5, 0.6);
    thingdb_set_text(db, "universe.dt", "1e-5", false, &err);
    e = engine_from(db);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "too coarse"), 0);
    engine_destroy(e);
    testlog_release();
}

static void test_edits(void **state) {
    Engine *e = engine_from(make_drop("bdf", true, 1e5, 10.0));
    IssimError err = {0};
    assert_int_equal(engine_apply_edit(e, "universe.planar", "false", &err), ISSIM_ERR_READONLY);
    assert_non_null(strstr(err.message, "planar"));
    assert_int_not_equal(engine_apply_edit(e, "bar.mass", "-1", &err), ISSIM_OK);
    assert_non_null(strstr(err.message, "bar.mass"));
    assert_near(engine_body_mass(e, engine_body_id(e, 0)), 1.0, 0.0);
    assert_int_equal(engine_apply_edit(e, "universe.gravity", "0 0 -1", &err), ISSIM_OK);
    assert_int_equal(engine_advance(e, 1.0, &err), ISSIM_OK);
    assert_near(engine_body_state(e, engine_body_id(e, 0)).vel.z, -1.0, 1e-7);
    assert_int_equal(engine_apply_edit(e, "bar.vel", "0 0 2", &err), ISSIM_OK);
    assert_near(engine_body_state(e, engine_body_id(e, 0)).vel.z, 2.0, 0.0);
    assert_int_equal(engine_advance(e, 2.0, &err), ISSIM_OK);
    assert_near(engine_body_state(e, engine_body_id(e, 0)).vel.z, 1.0, 1e-7);
    engine_destroy(e);
}

/* The transient wrench (GUI drag, haptic coupling) adds to gravity from the instant it is set,
 * turns the body about its centre of mass, and is refused when not finite. */
static void test_applied_wrench(void **state) {
    Engine *e = engine_from(make_drop("bdf", false, 1e5, 10.0));
    IssimError err = {0};
    assert_int_equal(engine_advance(e, 0.5, &err), ISSIM_OK);
    /* 19.62 N up on 1 kg cancels gravity and adds +9.81 m/s^2; 0.0033333 kg m^2 about x. */
    assert_int_equal(engine_set_applied_wrench(e, engine_body_id(e, 0), vec3(0, 0, 2 * 9.81),
                                               vec3(0.0033333, 0, 0), &err),
                     ISSIM_OK);
    assert_int_equal(engine_advance(e, 1.5, &err), ISSIM_OK);
    EngineBodyState s = engine_body_state(e, engine_body_id(e, 0));
    assert_near(s.vel.z, -9.81 * 0.5 + 9.81 * 1.0, 1e-6);
    assert_near(s.angvel.x, 1.0, 1e-6);
    Vec3 nan3 = vec3(NAN, 0, 0);
    assert_int_equal(engine_set_applied_wrench(e, engine_body_id(e, 0), nan3, vec3(0, 0, 0), &err),
                     ISSIM_ERR_RANGE);
    assert_int_equal(
        engine_set_applied_wrench(e, engine_body_id(e, 7), vec3(0, 0, 0), vec3(0, 0, 0), &err),
        ISSIM_ERR_RANGE);
    assert_int_equal(
        engine_set_applied_wrench(e, engine_body_id(e, 0), vec3(0, 0, 0), vec3(0, 0, 0), &err),
        ISSIM_OK);
    assert_int_equal(engine_advance(e, 2.5, &err), ISSIM_OK);
    assert_near(engine_body_state(e, engine_body_id(e, 0)).vel.z, 4.905 - 9.81, 1e-6);
    engine_destroy(e);
}

/* A diverging fixed step (a spin far too fast for RK4's step) reports the failure and keeps the
 * last good state. */
static void test_failure_keeps_last_good_state(void **state) {
    ThingDb *db = make_drop("rk4", false, 1e5, 100.0);
    IssimError err;
    thingdb_set_text(db, "universe.dt", "1e-3", false, &err);
    thingdb_set_text(db, "bar.inertia", "1 2 3", false, &err);
    thingdb_set_text(db, "bar.angvel", "3e3 3e3 3e3", false, &err);
    Engine *e = engine_from(db);
    IssimStatus s = ISSIM_OK;
    double t_good = 0;
    EngineBodyState good = engine_body_state(e, engine_body_id(e, 0));
    int steps = 0;
    for (; steps < 200 && s == ISSIM_OK; steps++) {
        t_good = engine_time(e);
        good = engine_body_state(e, engine_body_id(e, 0));
        s = engine_step(e, &err);
    }
    assert_int_equal(s, ISSIM_ERR_NUMERIC);
    assert_true(steps > 1);
    assert_non_null(strstr(err.message, "t = "));
    assert_near(engine_time(e), t_good, 0.0);
    EngineBodyState now = engine_body_state(e, engine_body_id(e, 0));
    assert_true(isfinite(now.pos.z) && isfinite(now.orient.w));
    assert_near(now.pos.z, good.pos.z, 0.0);
    engine_destroy(e);
}

/* J M^-1 J^T of one contact is the inverse effective mass 1/m + (r x n)^2 / I. */
static void test_system_matrices(void **state) {
    ThingDb *db = make_drop("bdf", false, 1e5, 0.0);
    IssimError err;
    /* Bar tilted 30 degrees about y, lower tip just touching. */
    double a = M_PI / 6;
    char q[96], p[96];
    snprintf(q, sizeof q, "%.17g 0 %.17g 0", cos(a / 2), sin(a / 2));
    snprintf(p, sizeof p, "0 0 %.17g", 0.1 * cos(a) - 1e-4);
    thingdb_set_text(db, "bar.orient", q, false, &err);
    thingdb_set_text(db, "bar.pos", p, false, &err);
    thingdb_set_text(db, "bar.inertia", "0.5 0.25 0.125", false, &err);
    thingdb_set_text(db, "bar.mass", "2", false, &err);
    Engine *e = engine_from(db);
    assert_int_equal(engine_active_contact_count(e), 1);
    int n = engine_velocity_dim(e);
    assert_int_equal(n, 6);
    double m[36], j[6], minv_jt[6];
    engine_mass_matrix(e, m);
    assert_int_equal(engine_contact_jacobian(e, j, 1), 1);
    memcpy(minv_jt, j, sizeof j);
    int ipiv[6];
    linalg_init();
    assert_int_equal(linalg_solve(6, 1, m, ipiv, minv_jt), 0);
    double jmj = 0;
    for (int i = 0; i < 6; i++)
        jmj += j[i] * minv_jt[i];
    /* r from the centre to the tip: (-0.1 sin a, 0, -0.1 cos a); (r x n).y = 0.1 sin a */
    double rxn = 0.1 * sin(a);
    assert_near(jmj, 1.0 / 2.0 + rxn * rxn / 0.25, 1e-12);
    int islands[1];
    assert_int_equal(engine_islands(e, islands), 1);
    assert_int_equal(islands[0], 0);
    engine_destroy(e);
}

/* A frame written and restored gives back the same state, and the active set is rebuilt. */
static void test_restore_vars(void **state) {
    Engine *e = engine_from(make_drop("bdf", true, 1e5, 0.6));
    IssimError err;
    int nv = engine_var_count(e);
    assert_int_equal(nv, 13 + 4);
    assert_string_equal(engine_var_name(e, 2), "bar.pos.z");
    double *frame = calloc((size_t)nv, sizeof(double));
    assert_int_equal(engine_advance(e, 0.3208, &err), ISSIM_OK); /* just after onset */
    engine_write_vars(e, frame);
    int active = engine_active_contact_count(e);
    assert_int_equal(active, 1);
    assert_int_equal(engine_advance(e, 1.0, &err), ISSIM_OK);
    assert_int_equal(engine_restore_vars(e, 0.3208, frame, &err), ISSIM_OK);
    assert_int_equal(engine_active_contact_count(e), 1);
    assert_near(engine_body_state(e, engine_body_id(e, 0)).pos.z, frame[2], 0.0);
    assert_near(engine_time(e), 0.3208, 0.0);
    frame[2] = NAN;
    assert_int_equal(engine_restore_vars(e, 0.5, frame, &err), ISSIM_ERR_INVALID);
    free(frame);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_fall_bdf),
        cmocka_unit_test(test_free_fall_adams),
        cmocka_unit_test(test_free_fall_rk4),
        cmocka_unit_test(test_rk4_outputs_on_the_step_grid_take_one_step_each),
        cmocka_unit_test(test_free_rigid_body_invariants),
        cmocka_unit_test(test_planar_mode_stays_in_plane),
        cmocka_unit_test(test_onset_located_bdf),
        cmocka_unit_test(test_onset_located_rk4),
        cmocka_unit_test(test_impact_on_output_time),
        cmocka_unit_test(test_coarse_step_warning),
        cmocka_unit_test(test_edits),
        cmocka_unit_test(test_applied_wrench),
        cmocka_unit_test(test_failure_keeps_last_good_state),
        cmocka_unit_test(test_system_matrices),
        cmocka_unit_test(test_restore_vars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
