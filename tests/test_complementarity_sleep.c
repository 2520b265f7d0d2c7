/* Sleeping time-stepped (complementarity) islands (issue 15; seed 004 App. E and 4.8.5): a box,
 * and a two-box stack, settle and fall asleep as islands; asleep, nothing is solved, nothing
 * moves and the engine reports no awake body; a body dropped on the stack and a force applied to
 * the box wake them and the dynamics continue as before (the V12 distances and balances); a
 * rewind across the instant the box falls asleep replays bit for bit. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/engine_resolver.h"
#include "issim/io.h"
#include "issim/math.h"

#define G 9.81
#define STEP 1e-3
/* ENGINE_STEPPED_SLEEP_SPEED (engine_internal.h): the tolerance these scenes sleep under. */
#define SLEEP_SPEED 1e-3

/* ===== A solver that counts its solves and the worst distance after each ===== */

typedef struct Counter {
    const EngineComplementaritySolver *inner;
    long solves;
    double worst_distance; /* most negative contact distance after a step, m */
} Counter;

static IssimStatus counted_solve(void *user, const EngineIslandSystem *sys,
                                 EngineIslandSolution *out, IssimError *err) {
    Counter *c = user;
    IssimStatus s = c->inner->solve(NULL, sys, out, err);
    if (s != ISSIM_OK)
        return s;
    c->solves++;
    /* u+ = u + M^-1 (h f + Jn^T lambda_n + Jt^T lambda_t), then the engine's delta(s+) */
    int n = sys->dim, m = sys->contacts;
    double *g = calloc((size_t)n, sizeof(double)), *u = calloc((size_t)n, sizeof(double));
    double *moved = calloc((size_t)m + 1, sizeof(double)), *still = calloc((size_t)m + 1, 8);
    for (int r = 0; r < n; r++) {
        g[r] = sys->h * sys->force[r];
        for (int i = 0; i < m; i++)
            g[r] += sys->jn[i + m * r] * out->lambda_n[i] +
                    sys->jt[2 * i + 2 * m * r] * out->lambda_t[2 * i] +
                    sys->jt[2 * i + 1 + 2 * m * r] * out->lambda_t[2 * i + 1];
    }
    for (int r = 0; r < n; r++) {
        u[r] = sys->velocity[r];
        for (int k = 0; k < n; k++)
            u[r] += sys->inv_mass[r + n * k] * g[k];
    }
    sys->gap_after(sys->ctx, u, moved);
    memset(g, 0, sizeof(double) * (size_t)n);
    sys->gap_after(sys->ctx, g, still);
    for (int i = 0; i < m; i++)
        c->worst_distance = fmin(c->worst_distance, sys->gap[i] + moved[i] - still[i]);
    free(g);
    free(u);
    free(moved);
    free(still);
    return ISSIM_OK;
}

static const EngineComplementaritySolver counted = {.name = "counted", .solve = counted_solve};

static Engine *engine_from_source(const char *source) {
    return test_engine_from_source("csleep.lua", source);
}

/* Counts every solve of e's islands with Lemke (the direct solver: distances >= 0 exactly). */
static Counter *count_solves(Engine *e) {
    Counter *c = calloc(1, sizeof *c);
    c->inner = engine_complementarity_lemke();
    engine_set_complementarity_solver(e, &counted, c);
    return c;
}

static void advance_to(Engine *e, double t_end) {
    IssimError err = {0};
    for (long i = lround(engine_time(e) / STEP) + 1; engine_time(e) < t_end - 1e-12; i++)
        if (engine_advance(e, (double)i * STEP, &err) != ISSIM_OK)
            fail_msg("step to %g s: %s", (double)i * STEP, err.message);
}

/* Advances until no body is awake (at most until t_limit); returns the time, or -1. */
static double advance_until_asleep(Engine *e, double t_limit) {
    while (engine_time(e) < t_limit - 1e-12) {
        advance_to(e, engine_time(e) + STEP);
        if (engine_awake_body_count(e) == 0)
            return engine_time(e);
    }
    return -1.0;
}

static EngineBodyState body(const Engine *e, int index) {
    return engine_body_state(e, engine_body_id(e, index));
}

static bool same_state(EngineBodyState a, EngineBodyState b) {
    return memcmp(&a.pos, &b.pos, sizeof a.pos) == 0 &&
           memcmp(&a.orient, &b.orient, sizeof a.orient) == 0 &&
           memcmp(&a.vel, &b.vel, sizeof a.vel) == 0 &&
           memcmp(&a.angvel, &b.angvel, sizeof a.angvel) == 0;
}

/* V12's box (testutil.h), as the validation test drops it. */
static const char *box_source = test_v12_box_source;

/* The box settles on the floor and sleeps; asleep for a second, it is not solved, not moved,
 * not counted awake, and its contacts still report its weight. */
static void test_box_settles_and_sleeps(void **state) {
    (void)state;
    Engine *e = engine_from_source(box_source);
    Counter *c = count_solves(e);
    c->worst_distance = INFINITY;
    assert_int_equal(engine_awake_body_count(e), 1);
    double slept = advance_until_asleep(e, 1.0);
    EngineStats st = engine_stats(e);
    EngineBodyState rest = body(e, 0);
    printf("box: asleep at t = %.3f s after %ld solves (worst distance %.3g m), z = %.12f m, "
           "%.3g J zeroed by sleeping\n",
           slept, c->solves, c->worst_distance, rest.pos.z, st.sleep_energy);
    assert_true(slept > 0.0);
    assert_int_equal(st.sleeps, 1);
    assert_true(c->worst_distance >= -1e-9); /* V12 */
    assert_near(rest.pos.z, 0.05, 1e-6);     /* flat on the floor */
    assert_true(st.sleep_energy <= 0.5 * 2.0 * SLEEP_SPEED * SLEEP_SPEED);
    long solves = c->solves;
    uint64_t steps = st.complementarity_steps;
    advance_to(e, slept + 1.0);
    st = engine_stats(e);
    assert_int_equal(engine_awake_body_count(e), 0);
    assert_int_equal(c->solves, solves); /* not one solve while asleep */
    assert_true(st.complementarity_steps == steps);
    assert_true(same_state(body(e, 0), rest)); /* exactly where it fell asleep */
    ContactReport rep[8];
    int n = engine_contact_reports(e, rep, 8);
    double load = 0.0;
    for (int k = 0; k < n && k < 8; k++)
        load += rep[k].normal_force;
    assert_near(load, 2.0 * G, 1e-6 * 2.0 * G); /* its contacts still carry its weight */
    engine_destroy(e);
    free(c);
}

/* A force on the sleeping box wakes it; it slides as F / m on the frictionless floor and, with
 * the force gone, sleeps again. */
static void test_force_wakes_box(void **state) {
    (void)state;
    Engine *e = engine_from_source(box_source);
    Counter *c = count_solves(e);
    assert_true(advance_until_asleep(e, 1.0) > 0.0);
    long solves = c->solves;
    IssimError err = {0};
    const double force = 1.0, mass = 2.0, push = 0.1;
    assert_int_equal(engine_set_applied_wrench(e, engine_body_id(e, 0), vec3(force, 0.0, 0.0),
                                               vec3(0.0, 0.0, 0.0), &err),
                     ISSIM_OK);
    assert_int_equal(engine_awake_body_count(e), 1);
    double t0 = engine_time(e);
    EngineBodyState before = body(e, 0);
    advance_to(e, t0 + push);
    EngineBodyState after = body(e, 0);
    printf("pushed box: vx %.9f m/s after %.2f s (F t / m = %.9f), z %.12f m, %ld solves\n",
           after.vel.x, push, force * push / mass, after.pos.z, c->solves - solves);
    assert_true(c->solves - solves >= (long)(push / STEP) - 1);
    assert_near(after.vel.x, force * push / mass, 1e-9);
    assert_near(after.pos.x - before.pos.x, 0.5 * force / mass * push * push, 1e-4);
    assert_near(after.pos.z, before.pos.z, 1e-6);
    assert_int_equal(engine_set_applied_wrench(e, engine_body_id(e, 0), vec3(0.0, 0.0, 0.0),
                                               vec3(0.0, 0.0, 0.0), &err),
                     ISSIM_OK);
    /* frictionless: it glides on at 0.05 m/s, above the tolerance, and stays awake */
    advance_to(e, engine_time(e) + 0.2);
    assert_int_equal(engine_awake_body_count(e), 1);
    assert_near(body(e, 0).vel.x, force * push / mass, 1e-9);
    engine_destroy(e);
    free(c);
}

/* Two 1 kg boxes stacked on the floor, a third dropped from 20 cm above the stack. */
static const char *stack_source =
    "local function box(name, z) return { name = name, kind = 'body', shape = 'box',\n"
    "  half_extents = {0.05, 0.05, 0.05}, mass = 1, inertia = {1.667e-3, 1.667e-3, 1.667e-3},\n"
    "  pos = {0, 0, z}, material = 'box' } end\n"
    "return { name = 'csleep_stack',\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'bdf', dt = 1e-3 },\n"
    "  things = { box('low', 0.05), box('high', 0.15), box('drop', 0.45),\n"
    "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},\n"
    "      offset = 0, material = 'floor' } },\n"
    "  contacts = {\n"
    "    { name = 'box_floor', materials = {'box', 'floor'}, resolver = 'complementarity' },\n"
    "    { name = 'box_box', materials = {'box', 'box'}, resolver = 'complementarity' } } }\n";

/* The stack sleeps while the third box falls; the landing wakes it, and the three boxes come
 * to rest stacked (heights 0.05, 0.15, 0.25 m) and sleep again. */
static void test_dropped_box_wakes_stack(void **state) {
    (void)state;
    Engine *e = engine_from_source(stack_source);
    Counter *c = count_solves(e);
    c->worst_distance = INFINITY;
    advance_to(e, 0.15); /* the drop lands at about 0.25 s */
    EngineStats st = engine_stats(e);
    printf("stack at 0.15 s: low %s, high %s, drop %s; %d awake\n",
           engine_body_asleep(e, 0) ? "asleep" : "awake",
           engine_body_asleep(e, 1) ? "asleep" : "awake",
           engine_body_asleep(e, 2) ? "asleep" : "awake", engine_awake_body_count(e));
    assert_true(engine_body_asleep(e, 0) && engine_body_asleep(e, 1));
    assert_false(engine_body_asleep(e, 2));
    assert_int_equal(engine_awake_body_count(e), 1);
    uint64_t wakes = st.wakes;
    double slept = advance_until_asleep(e, 2.0);
    st = engine_stats(e);
    printf("stack: %llu wakes after the drop, all asleep again at t = %.3f s; z = %.9f %.9f "
           "%.9f m; worst distance %.3g m\n",
           (unsigned long long)(st.wakes - wakes), slept, body(e, 0).pos.z, body(e, 1).pos.z,
           body(e, 2).pos.z, c->worst_distance);
    assert_true(st.wakes - wakes >= 2); /* the stack, as a whole */
    assert_true(slept > 0.2);           /* after the landing */
    /* solved with the stack awake: the floor now carries all three boxes (held asleep, the
     * stack's floor contacts would have kept the two boxes' weight) */
    ContactReport rep[16];
    int n = engine_contact_reports(e, rep, 16);
    double floor_load = 0.0;
    for (int k = 0; k < n && k < 16; k++)
        if (rep[k].body_b == 0)
            floor_load += rep[k].normal_force;
    printf("stack: the floor carries %.9f N (3 m g = %.9f N)\n", floor_load, 3.0 * G);
    assert_near(floor_load, 3.0 * G, 1e-6 * 3.0 * G);
    assert_true(c->worst_distance >= -1e-9);
    for (int i = 0; i < 3; i++) {
        assert_near(body(e, i).pos.z, 0.05 + 0.1 * i, 1e-6);
        assert_near(body(e, i).pos.x, 0.0, 1e-6);
    }
    engine_destroy(e);
    free(c);
}

/* A rewind to a frame before the box fell asleep replays the frames after it bit for bit, sleep
 * included; a rewind to a sleeping frame comes back asleep. */
static void test_rewind_replays_sleep(void **state) {
    (void)state;
    Engine *e = engine_from_source(box_source);
    IssimError err = {0};
    assert_int_equal(engine_enable_checkpoints(e, 4096, 64 << 20, &err), ISSIM_OK);
    enum { FRAMES = 400 };
    int vars = engine_var_count(e);
    double *straight = calloc((size_t)(FRAMES + 1) * (size_t)vars, sizeof(double));
    bool asleep[FRAMES + 1];
    engine_checkpoint(e);
    engine_write_vars(e, straight);
    asleep[0] = false;
    for (int f = 1; f <= FRAMES; f++) {
        advance_to(e, f * STEP);
        engine_checkpoint(e);
        engine_write_vars(e, straight + (size_t)f * vars);
        asleep[f] = engine_body_asleep(e, 0);
    }
    int first_asleep = 0;
    while (first_asleep <= FRAMES && !asleep[first_asleep])
        first_asleep++;
    assert_true(first_asleep > 20 && first_asleep < FRAMES - 50);
    double slept_at = engine_body_sleep_time(e, 0);
    /* back to a sleeping frame: asleep, and nothing moves */
    int sleeping = first_asleep + 20;
    assert_int_equal(
        engine_restore_vars(e, sleeping * STEP, straight + (size_t)sleeping * vars, &err),
        ISSIM_OK);
    assert_true(engine_body_asleep(e, 0));
    assert_int_equal(engine_awake_body_count(e), 0);
    /* back to 20 frames before the sleep: the same frames again, bit for bit */
    int awake = first_asleep - 20;
    assert_int_equal(engine_restore_vars(e, awake * STEP, straight + (size_t)awake * vars, &err),
                     ISSIM_OK);
    assert_false(engine_body_asleep(e, 0));
    double *row = calloc((size_t)vars, sizeof(double));
    int differ = 0, sleep_differ = 0;
    for (int f = awake + 1; f <= FRAMES; f++) {
        advance_to(e, f * STEP);
        engine_write_vars(e, row);
        differ += memcmp(row, straight + (size_t)f * vars, sizeof(double) * (size_t)vars) != 0;
        sleep_differ += engine_body_asleep(e, 0) != asleep[f];
    }
    printf("rewind: asleep from frame %d (t %.3f s); %d of %d replayed frames differ, %d in "
           "sleep state\n",
           first_asleep, slept_at, differ, FRAMES - awake, sleep_differ);
    assert_int_equal(differ, 0);
    assert_int_equal(sleep_differ, 0);
    assert_true(engine_body_sleep_time(e, 0) == slept_at);
    free(row);
    free(straight);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_settles_and_sleeps),
        cmocka_unit_test(test_force_wakes_box),
        cmocka_unit_test(test_dropped_box_wakes_stack),
        cmocka_unit_test(test_rewind_replays_sleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
