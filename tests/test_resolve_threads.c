/* Complementarity islands solved on several threads (issue 33 item 1b), under ThreadSanitizer
 * (label threads):
 * - task_pool_for_workers runs every iteration once and names each range's thread in
 *   [0, threads), the caller 0;
 * - the 100-sphere pile (scenes/sphere_pile.lua, many islands while it falls) stepped one time
 *   step per advance, as the interactive engine and the headless runs do, gives the same state
 *   (every variable, to the bit) and the same contact events (kind, time, contact id, bodies)
 *   after every step on 1, 2 and 3 threads, and twice on 2 threads, and the same state when
 *   each event is emitted (what a listener reads); with more than one thread
 *   the pool did solve islands, with one it solved none;
 * - the mixed 240-body pile (scenes/pile.lua) in complementarity the same on 2 threads, twice,
 *   as on 1;
 * - a solver set by engine_set_complementarity_solver (the caller's code) is called on the
 *   engine's thread only, whatever the thread count;
 * - a packed pile of 320 spheres (one island of about 1,000 rows once they land), with
 *   EngineOptions.split_large_islands: on 2 and
 *   on 3 threads the PGS sweeps run split over the pool's threads (engine_pgs.c), the same to
 *   the bit run after run for a thread count, and close to the serial sweep's (every centre
 *   within PACKED_CENTRE_TOLERANCE after PACKED_STEPS); on 1 thread, on `auto` and on 2 threads
 *   without the option none is split
 *   and the run is the serial solver's to the bit (the same PGS set as the engine's solver,
 *   which never gets the pool). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_resolver.h"
#include "issim/engine_stats.h"
#include "issim/task_pool.h"
#include "testutil.h"

/* ===== task_pool_for_workers ===== */

enum { LOOP_COUNT = 5003, MAX_THREADS = 4 };

typedef struct Visits {
    int *owner; /* per iteration: the thread that ran it, + 1 */
    atomic_int per_thread[MAX_THREADS];
    int threads;
    atomic_int out_of_range;
} Visits;

static void visit_range(void *ctx, int begin, int end, int worker) {
    Visits *v = ctx;
    if (worker < 0 || worker >= v->threads) {
        atomic_fetch_add(&v->out_of_range, 1);
        return;
    }
    atomic_fetch_add(&v->per_thread[worker], end - begin);
    for (int i = begin; i < end; i++)
        v->owner[i] += worker + 1;
}

static void test_workers_named_and_each_iteration_once(void **state) {
    (void)state;
    for (int threads = 1; threads <= MAX_THREADS; threads++) {
        TaskPool *pool = task_pool_create(threads, NULL);
        assert_non_null(pool);
        Visits v = {.owner = calloc(LOOP_COUNT, sizeof(int)), .threads = threads};
        assert_non_null(v.owner);
        for (int loop = 0; loop < 50; loop++) {
            memset(v.owner, 0, sizeof(int) * LOOP_COUNT);
            task_pool_for_workers(pool, LOOP_COUNT, 7, visit_range, &v);
            for (int i = 0; i < LOOP_COUNT; i++) /* once: one owner's number, 1..threads */
                assert_true(v.owner[i] >= 1 && v.owner[i] <= threads);
        }
        int total = 0;
        for (int t = 0; t < threads; t++)
            total += atomic_load(&v.per_thread[t]);
        assert_int_equal(total, 50 * LOOP_COUNT);
        assert_int_equal(atomic_load(&v.out_of_range), 0);
        if (threads == 1)
            assert_int_equal(atomic_load(&v.per_thread[0]), 50 * LOOP_COUNT);
        free(v.owner);
        task_pool_destroy(pool);
    }
    Visits v = {.owner = calloc(16, sizeof(int)), .threads = 1};
    task_pool_for_workers(NULL, 16, 4, visit_range, &v); /* no pool: the caller, worker 0 */
    assert_int_equal(atomic_load(&v.per_thread[0]), 16);
    free(v.owner);
}

/* ===== The engine ===== */

/* A run's trace: after every step, a hash of every state variable and of the events so far. */
typedef struct Trace {
    const Engine *engine;
    uint64_t *after_step;
    /* FNV-1a over each event's kind, time, contact id and bodies and the engine's whole state
     * as a listener sees it then (islands solved ahead must not show before their turn) */
    uint64_t events;
    int event_count;
    uint64_t pool_islands, island_steps;
} Trace;

static uint64_t fnv(uint64_t h, const void *bytes, size_t n) {
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static uint64_t state_hash(const Engine *e);

static void on_event(const EngineEvent *ev, void *user) {
    Trace *tr = user;
    int kind = (int)ev->kind;
    tr->events = fnv(tr->events, &kind, sizeof kind);
    tr->events = fnv(tr->events, &ev->t, sizeof ev->t);
    tr->events = fnv(tr->events, &ev->contact_id, sizeof ev->contact_id);
    tr->events = fnv(tr->events, &ev->body, sizeof ev->body);
    tr->events = fnv(tr->events, &ev->body_b, sizeof ev->body_b);
    uint64_t seen = state_hash(tr->engine);
    tr->events = fnv(tr->events, &seen, sizeof seen);
    tr->event_count++;
}

static uint64_t state_hash(const Engine *e) {
    int n = engine_var_count(e);
    double *v = calloc((size_t)n, sizeof *v);
    assert_non_null(v);
    engine_write_vars(e, v);
    uint64_t h = fnv(1469598103934665603ULL, v, sizeof *v * (size_t)n);
    free(v);
    return h;
}

/* Steps the engine `steps` time steps of dt, one per advance (each a single-step resolve). */
static Trace run_steps(Engine *e, int steps, double dt) {
    Trace tr = {.engine = e,
                .after_step = calloc((size_t)steps, sizeof(uint64_t)),
                .events = 1469598103934665603ULL};
    assert_non_null(tr.after_step);
    engine_set_event_callback(e, on_event, &tr);
    IssimError err = {0};
    for (int s = 0; s < steps; s++) {
        if (engine_advance(e, (s + 1) * dt, &err) != ISSIM_OK)
            fail_msg("step %d: %s", s, err.message);
        tr.after_step[s] = state_hash(e);
    }
    EngineStats st = engine_stats(e);
    tr.pool_islands = st.complementarity_parallel_islands;
    tr.island_steps = st.complementarity_steps;
    engine_set_event_callback(e, NULL, NULL);
    return tr;
}

enum { SPHERE_STEPS = 150, MIXED_STEPS = 200 };

/* The whole of a file under the source tree (malloc'd). */
static char *read_source(const char *relative) {
    FILE *f = fopen(test_source_path(relative), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    text[size] = '\0';
    return text;
}

static Trace sphere_pile(int threads) {
    char *text = read_source("scenes/sphere_pile.lua");
    EngineOptions o = engine_options_default();
    o.threads = threads;
    Engine *e = test_engine_from_source_with("sphere_pile.lua", text, &o);
    free(text);
    Trace tr = run_steps(e, SPHERE_STEPS, 1e-3);
    engine_destroy(e);
    return tr;
}

static Trace mixed_pile(int threads) {
    char *text = test_pile_source(240, 1e-3, "");
    EngineOptions o = engine_options_default();
    o.asset_dir = test_source_path("scenes/");
    o.threads = threads;
    Engine *e = test_engine_from_source_with("pile.lua", text, &o);
    free(text);
    IssimError err = {0};
    assert_int_equal(engine_apply_edit(e, "pile_pile.resolver", "complementarity", &err), ISSIM_OK);
    assert_int_equal(engine_apply_edit(e, "pile_wall.resolver", "complementarity", &err), ISSIM_OK);
    Trace tr = run_steps(e, MIXED_STEPS, 1e-3);
    engine_destroy(e);
    return tr;
}

/* The first step at which b's state differs from a's, or -1. */
static int first_difference(const Trace *a, const Trace *b, int steps) {
    for (int s = 0; s < steps; s++)
        if (a->after_step[s] != b->after_step[s])
            return s;
    return -1;
}

static void check_same(const char *what, const Trace *serial, const Trace *other, int threads,
                       int steps) {
    print_message("%s, %d thread(s): %llu of %llu island steps on the pool, %d events, "
                  "state %016llx (1 thread %016llx), first differing step %d\n",
                  what, threads, (unsigned long long)other->pool_islands,
                  (unsigned long long)other->island_steps, other->event_count,
                  (unsigned long long)other->after_step[steps - 1],
                  (unsigned long long)serial->after_step[steps - 1],
                  first_difference(serial, other, steps));
    assert_int_equal(first_difference(serial, other, steps), -1);
    assert_int_equal(other->event_count, serial->event_count);
    assert_true(other->events == serial->events);
    assert_true(other->island_steps == serial->island_steps);
}

static void test_sphere_pile_same_on_any_thread_count(void **state) {
    (void)state;
    Trace one = sphere_pile(1);
    assert_true(one.pool_islands == 0);
    assert_true(one.island_steps > 10 * SPHERE_STEPS); /* many islands: the pool has work */
    assert_true(one.event_count > 100);
    const int threads[] = {2, 2, 3};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        Trace many = sphere_pile(threads[t]);
        check_same("sphere pile", &one, &many, threads[t], SPHERE_STEPS);
        assert_true(many.pool_islands > one.island_steps / 2);
        free(many.after_step);
    }
    free(one.after_step);
}

static void test_mixed_pile_same_on_two_threads(void **state) {
    (void)state;
    Trace one = mixed_pile(1);
    assert_true(one.pool_islands == 0);
    for (int run = 0; run < 2; run++) {
        Trace two = mixed_pile(2);
        check_same("mixed pile", &one, &two, 2, MIXED_STEPS);
        assert_true(two.pool_islands > 0);
        free(two.after_step);
    }
    free(one.after_step);
}

/* A caller's solver: PGS, counting the calls made on another thread than the test's. */
typedef struct CallerSolver {
    pthread_t owner;
    int calls, foreign_calls;
} CallerSolver;

static IssimStatus caller_solve(void *user, const EngineIslandSystem *sys,
                                EngineIslandSolution *out, IssimError *err) {
    CallerSolver *cs = user;
    cs->calls++;
    if (!pthread_equal(pthread_self(), cs->owner))
        cs->foreign_calls++; /* (a race on the counters too: TSan would say so) */
    return engine_complementarity_pgs()->solve(NULL, sys, out, err);
}

static void test_caller_solver_on_engine_thread(void **state) {
    (void)state;
    char *text = read_source("scenes/sphere_pile.lua");
    EngineOptions o = engine_options_default();
    o.threads = 2;
    Engine *e = test_engine_from_source_with("sphere_pile.lua", text, &o);
    free(text);
    static const EngineComplementaritySolver solver = {
        .name = "caller_pgs", .solve = caller_solve, .sparse = true};
    CallerSolver cs = {.owner = pthread_self()};
    engine_set_complementarity_solver(e, &solver, &cs);
    Trace tr = run_steps(e, SPHERE_STEPS, 1e-3);
    print_message("caller's solver: %d calls, %d on another thread, %llu islands on the pool\n",
                  cs.calls, cs.foreign_calls, (unsigned long long)tr.pool_islands);
    assert_true(cs.calls > 1000); /* many islands: the pool would have had work */
    assert_int_equal(cs.foreign_calls, 0);
    assert_true(tr.pool_islands == 0);
    free(tr.after_step);
    engine_destroy(e);
}

/* ===== One large island: PGS sweeps split over the threads ===== */

enum { PACKED_STEPS = 60, PACKED_SPHERES = 320 };
/* m: after 60 steps the split sweep's centres stay this close to the serial sweep's (the
 * spheres fall 1 mm and settle; 0.026 mm apart at most on 2 and 3 threads) */
#define PACKED_CENTRE_TOLERANCE 5e-4

/* 5 layers of 8 x 8 steel spheres (r 20 mm) 1 mm apart in a box they fill, jittered by at most
 * 0.5 mm: every sphere within the solve's margin of its neighbours from the start, one island
 * once they have fallen the millimetre. */
static const char packed_pile[] =
    "local r, density = 0.02, 7850\n"
    "local m = density * 4 / 3 * math.pi * r ^ 3\n"
    "local inertia = 0.4 * m * r ^ 2\n"
    "local half = 8 * (r + 0.0005) + 0.0005\n"
    "local things = {\n"
    "  { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1}, offset = 0,\n"
    "    material = 'wall' },\n"
    "  { name = 'xp', kind = 'obstacle', shape = 'plane', normal = {-1, 0, 0}, offset = -half,\n"
    "    material = 'wall' },\n"
    "  { name = 'xn', kind = 'obstacle', shape = 'plane', normal = {1, 0, 0}, offset = -half,\n"
    "    material = 'wall' },\n"
    "  { name = 'yp', kind = 'obstacle', shape = 'plane', normal = {0, -1, 0}, offset = -half,\n"
    "    material = 'wall' },\n"
    "  { name = 'yn', kind = 'obstacle', shape = 'plane', normal = {0, 1, 0}, offset = -half,\n"
    "    material = 'wall' },\n"
    "}\n"
    "for n = 0, 319 do\n"
    "  local i, j, k = n % 8, (n // 8) % 8, n // 64\n"
    "  local pitch = 2 * r + 0.001\n"
    "  things[#things + 1] = { name = 's' .. n, kind = 'body', shape = 'sphere', radius = r,\n"
    "    mass = m, inertia = {inertia, inertia, inertia}, material = 'steel',\n"
    "    pos = {-half + 0.001 + r + i * pitch + 0.0005 * math.sin(7 * n),\n"
    "           -half + 0.001 + r + j * pitch + 0.0005 * math.cos(5 * n),\n"
    "           r + 0.001 + k * pitch} }\n"
    "end\n"
    "return { name = 'packed_pile',\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'rk4', dt = 1e-3 },\n"
    "  things = things,\n"
    "  contacts = {\n"
    "    { name = 'sphere_sphere', materials = {'steel', 'steel'}, resolver = 'complementarity',\n"
    "      solver = 'pgs', friction_static = 1, friction_kinetic = 1 },\n"
    "    { name = 'sphere_wall', materials = {'steel', 'wall'}, resolver = 'complementarity',\n"
    "      solver = 'pgs', friction_static = 1, friction_kinetic = 1 },\n"
    "  },\n"
    "}\n";

typedef struct PackedRun {
    Trace trace;
    uint64_t team_solves, iterative_solves;
    Vec3 centre[PACKED_SPHERES];
} PackedRun;

/* The packed pile on `threads` threads; serial_solver: the built-in PGS set as the engine's
 * solver (engine_set_complementarity_solver), which is always solved on the engine thread
 * alone. */
static PackedRun packed_run(int threads, bool serial_solver, bool split) {
    EngineOptions o = engine_options_default();
    o.threads = threads;
    o.split_large_islands = split;
    Engine *e = test_engine_from_source_with("packed_pile.lua", packed_pile, &o);
    assert_int_equal(engine_body_count(e), PACKED_SPHERES);
    if (serial_solver)
        engine_set_complementarity_solver(e, engine_complementarity_pgs(), NULL);
    PackedRun run = {.trace = run_steps(e, PACKED_STEPS, 1e-3)};
    EngineStats st = engine_stats(e);
    run.team_solves = st.complementarity_team_solves;
    run.iterative_solves = st.complementarity_iterative_solves;
    for (int i = 0; i < PACKED_SPHERES; i++)
        run.centre[i] = engine_body_state(e, engine_body_id(e, i)).pos;
    engine_destroy(e);
    return run;
}

static double largest_centre_distance(const PackedRun *a, const PackedRun *b) {
    double largest = 0.0;
    for (int i = 0; i < PACKED_SPHERES; i++)
        largest = fmax(largest, vec3_norm(vec3_sub(a->centre[i], b->centre[i])));
    return largest;
}

static void test_large_island_split_and_deterministic(void **state) {
    (void)state;
    PackedRun *serial = malloc(sizeof *serial), *run = malloc(sizeof *run);
    assert_non_null(serial);
    assert_non_null(run);
    *serial = packed_run(1, false, true);
    print_message("packed pile, 1 thread: %llu of %llu iterative solves split\n",
                  (unsigned long long)serial->team_solves,
                  (unsigned long long)serial->iterative_solves);
    assert_true(serial->team_solves == 0);
    assert_true(serial->iterative_solves >= PACKED_STEPS); /* the island was solved each step */
    /* auto (0) picks its count from the machine's load: it never splits, so the load never
     * changes a result */
    *run = packed_run(0, false, true);
    check_same("packed pile, auto threads", &serial->trace, &run->trace, 0, PACKED_STEPS);
    assert_true(run->team_solves == 0);
    free(run->trace.after_step);
    *run = packed_run(2, false, false); /* not asked: the serial sweep on any thread count */
    check_same("packed pile, 2 threads, split_large_islands off", &serial->trace, &run->trace, 2,
               PACKED_STEPS);
    assert_true(run->team_solves == 0);
    free(run->trace.after_step);
    *run = packed_run(2, true, true); /* one thread's sweep is the serial solver's, to the bit */
    check_same("packed pile, the engine's solver set to PGS", &serial->trace, &run->trace, 2,
               PACKED_STEPS);
    assert_true(run->team_solves == 0);
    free(run->trace.after_step);
    for (int threads = 2; threads <= 3; threads++) {
        PackedRun *first = malloc(sizeof *first);
        assert_non_null(first);
        *first = packed_run(threads, false, true);
        double apart = largest_centre_distance(first, serial);
        print_message("packed pile, %d threads: %llu of %llu iterative solves split; centres "
                      "%.3g m from the serial sweep's at most\n",
                      threads, (unsigned long long)first->team_solves,
                      (unsigned long long)first->iterative_solves, apart);
        /* the landing joins the columns into one island within 25 steps; from then on every
         * step's velocity pass is split */
        assert_true(first->team_solves >= PACKED_STEPS - 25);
        assert_true(apart < PACKED_CENTRE_TOLERANCE);
        assert_true(apart > 0.0); /* split sweeps ran: another order than the serial one */
        *run = packed_run(threads, false, true);
        check_same("packed pile, split sweeps run twice", &first->trace, &run->trace, threads,
                   PACKED_STEPS);
        assert_memory_equal(first->centre, run->centre, sizeof first->centre);
        free(run->trace.after_step);
        free(first->trace.after_step);
        free(first);
    }
    free(serial->trace.after_step);
    free(serial);
    free(run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workers_named_and_each_iteration_once),
        cmocka_unit_test(test_sphere_pile_same_on_any_thread_count),
        cmocka_unit_test(test_mixed_pile_same_on_two_threads),
        cmocka_unit_test(test_caller_solver_on_engine_thread),
        cmocka_unit_test(test_large_island_split_and_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
