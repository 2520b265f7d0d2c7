/* Shared test helpers: cmocka includes, a log capture, paths to the source tree. */
#ifndef ISSIM_TESTUTIL_H
#define ISSIM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "issim/core.h"
#include "issim/collision.h"
#include "issim/math.h"
#include "issim/haptics_servo.h"
#include "issim/sim.h"

/* Installs a handler that keeps the last messages (thread-safe) instead of printing. */
void testlog_capture(void);
void testlog_release(void);
/* Number of captured messages at level >= level containing needle (NULL: any). */
int testlog_count(IssimLogLevel level, const char *needle);
void testlog_clear(void);

/* Absolute path of a file in the source tree (ISSIM_SOURCE_DIR, or the working directory).
 * Returns a static buffer per call slot (4 rotating buffers). */
const char *test_source_path(const char *relative);
/* An engine (default options) for the scene at `relative` in the source tree; fails the current
 * test with the loader's or the engine's message. engine_destroy it. */
Engine *test_engine_from_scene(const char *relative);
/* The same for a scene given as Lua source text (`name` for its messages). */
Engine *test_engine_from_source(const char *name, const char *source);
/* An interactive session (not started) on a scene given as Lua source, quiet; fails the test
 * with the message when it cannot be made. */
Sim *test_sim_from_source(const char *name, const char *source);
/* The scene files (".lua") in the source tree's scenes/, sorted by name, at most max; a scene
 * for which leave_out (may be NULL) returns true is left out. Fails the test if the folder cannot
 * be read. Returns the count. */
int test_list_scenes(char names[][256], int max, bool (*leave_out)(const char *name));
/* Runs the servo at 1 kHz, paced by the clock on absolute deadlines as its thread is, for
 * seconds * 1000 periods or until a period stops it; returns the periods run. */
int test_servo_run_periods(HapticServo *servo, double seconds);
/* Sleeps ms milliseconds: the step of a bounded wait for another thread. */
void test_nap_ms(int ms);
/* The same with these engine options (NULL: the defaults). */
Engine *test_engine_from_source_with(const char *name, const char *source,
                                     const EngineOptions *options);

/* Waits for an event another thread guarantees (a frame published, a counter reached, an edit
 * resolved): polls done(arg) every millisecond. Tests assert on the event, never on how long it
 * took; the bound is only there so that a hang fails the test with `what` instead of waiting for
 * the ctest timeout, and it is far beyond any delay a loaded machine makes (a 2-core machine at
 * load 12 under ThreadSanitizer). Returns when done holds; fails the test otherwise. */
#define TEST_WAIT_LIMIT_S 120.0
void test_wait_for(bool (*done)(void *arg), void *arg, const char *what);
/* The same, returning whether done held instead of failing. */
bool test_wait_until(bool (*done)(void *arg), void *arg);
/* Waits (test_wait_for) until the registry's newest frame is at or after t. */
void test_wait_state_time(Registry *reg, double t);
/* Waits until the engine thread's published reset count (ENGINE_STATS) reaches resets: an edit,
 * a drag or a rewind request has been applied. */
void test_wait_engine_resets(Registry *reg, double resets);
/* Runs process pid (the device simulator, issim-pantosim) under SCHED_FIFO when the system
 * permits it, below the servo's priority (80). A real pantograph's firmware keeps its 1 kHz
 * frames coming whatever the host does; the simulator, an ordinary process, was starved for 250
 * ms at load 12 and the servo rightly declared the link lost ("no frame for 251 ms"). Where
 * real-time scheduling is refused the simulator runs as before. */
void test_simulator_realtime(int pid);
/* Starts the engine thread with the display clock paused at the session's start time, so that
 * what the display shows is set by the test (sim_seek) and not by how fast a loaded machine runs
 * the engine; fails the test if it cannot start. */
void test_sim_start_paused(Sim *sim);

/* scenes/pile.lua with `count` bodies, universe.dt = dt and the Lua statements `extra` (may be
 * "") run just before its `return`, where they may append to `things`; malloc'd, free it. */
char *test_pile_source(int count, double dt, const char *extra);
/* The engine of that text, its hulls loaded from scenes/. engine_destroy it. */
Engine *test_pile_engine(int count, double dt, const char *extra);
/* The same with these options (their asset_dir replaced by scenes/). */
Engine *test_pile_engine_with(int count, double dt, const char *extra,
                              const EngineOptions *options);
/* The pile of test_pile_engine_with, `pipeline` (EngineOptions.pipeline_collision) and
 * `threads` set, the others the defaults. */
Engine *test_pile_engine_piped(int count, double dt, bool pipeline, int threads);
/* Both of the pile's pairs resolved as complementarity (an edit while running); fails the test
 * if refused. */
void test_pile_to_complementarity(Engine *engine);
/* engine_advance to t; fails the test with the engine's message otherwise. */
void test_advance(Engine *engine, double t);
/* FNV-1a of the bytes of every state variable (engine_write_vars): equal means the same bits. */
uint64_t test_engine_state_hash(const Engine *engine);
/* V12's box (VALIDATION.md): 2 kg, 10 cm, dropped flat from 2 cm on a plane, tilted slightly so
 * its corners land one after another; resolver complementarity. */
extern const char test_v12_box_source[];
/* Runs the issim executable ($ISSIM_BINARY, else build/issim) with args (shell words) from the
 * source directory, stdout and stderr into out (NUL-terminated, truncated to size). Returns its
 * exit status, -1 when it did not exit. */
int test_run_issim(const char *args, char *out, size_t size);

/* Loading a scene into a session and running it headless, the set-up most scene tests share.
 * Zeroed fields keep the scene's or the session's defaults, so a compound literal naming the
 * fields a test cares about is a complete set of options. Strings are borrowed until
 * test_run_free. Sessions always run quiet: progress lines would break into the tests' output. */
typedef struct TestRunOptions {
    const char *const *sets; /* "path=value" overrides (--set), applied after loading */
    int set_count;
    double until;            /* headless end time, s; 0: the session's default (2 s) */
    double dt;               /* 0: the scene's universe.dt */
    const char *integrator;  /* an integrator_name ("rk4"); NULL: the scene's */
    bool lockstep;           /* deterministic single-thread stepping */
    const char *record_path; /* NULL: no recording */
    const char *vars;        /* variables recorded; NULL: the scene's universe.record */
    int every;               /* record every Nth output step; 0: every step */
} TestRunOptions;

typedef struct TestRun {
    Sim *sim;           /* the session (sim_engine, sim_registry, sim_start) */
    SimSummary summary; /* of the headless run; zero after test_load_scene */
} TestRun;

/* Runs scene, a path relative to the source tree ("scenes/point_drop.lua"), headless to
 * options->until. options is Nullable. Fails the current test with the loader's message when
 * the scene or an override does not load, with the run's when the run fails. */
TestRun *test_run_scene(const char *scene, const TestRunOptions *options);
/* The same for a scene written in the test: name stands for its file in messages, as if it lay
 * at the root of the source tree (relative asset paths such as "assets/x.obj" resolve there). */
TestRun *test_run_source(const char *name, const char *source, const TestRunOptions *options);
/* Only creates the session, for tests that start it themselves (interactive mode). */
TestRun *test_load_scene(const char *scene, const TestRunOptions *options);
/* test_run_scene for tests that read only the summary: returns it (free it), the session gone. */
SimSummary *test_run_summary(const char *scene, const TestRunOptions *options);
/* Destroys the session (stopping its engine thread if started) and frees run. NULL is a no-op. */
void test_run_free(TestRun *run);

/* cmocka fixtures for tests that start threads (cmocka_unit_test_setup_teardown(test,
 * test_threads_setup, test_threads_teardown)): *state is a TestThreads the test records what it
 * starts in; the teardown stops and frees it (and puts the default log handler back), so a failed
 * assertion, which leaves the test function at once, still joins the engine and collision
 * threads. */
typedef struct TestThreads {
    TestRun *run; /* test_run_free'd */
    Sim *sim;     /* sim_destroy'ed */
    Sim *sims[4]; /* more sessions, each sim_destroy'ed */
} TestThreads;
int test_threads_setup(void **state);
int test_threads_teardown(void **state);

/* The seeds' bar thrown at the floor: scene (point_drop.lua or bar_drop_horizontal.lua) run
 * headless without gravity, the bar's lowest point TEST_THROW_GAP above the floor (tip_offset:
 * centre to lowest point) moving down at v, with the --set overrides in sets[0..set_count)
 * (the model and its parameters) applied first; the run lasts until the impact plus tail
 * seconds. Returns the summary (free it). */
#define TEST_THROW_GAP 1.0137e-3
SimSummary *test_thrown_bar(const char *scene, double tip_offset, double v, const char *const *sets,
                            int set_count, double tail);
/* Path of a fresh temporary file name under /tmp (not created). Rotating static buffers. */
const char *test_temp_path(const char *suffix);

/* Seeded xorshift64* generator: deterministic random tests. Seed with a non-zero value. */
typedef struct TestRng {
    uint64_t s;
} TestRng;
double test_rng_uniform(TestRng *r);                     /* [0, 1) */
double test_rng_range(TestRng *r, double lo, double hi); /* [lo, hi) */
Quat test_rng_rotation(TestRng *r);                      /* uniform on SO(3) (Shoemake) */

/* The octahedron |x| + |y| + |z| <= s as a Hull built by hand (no hull_create needed). */
typedef struct TestOctahedron {
    Hull hull;
    Vec3 v[6];
    HullFace f[8];
    int fv[24];
} TestOctahedron;
void test_octahedron(TestOctahedron *o, double s);
/* The box of half extents h as a Hull (hull_create; the caller destroys it), for tests that run
 * a box through the generic hull paths. Fails the test when it cannot be made. */
Hull *test_box_hull(Vec3 h);

#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(fabs(a_ - b_) <= t_))                                                                \
            fail_msg("%s = %.12g, expected %.12g within %.3g", #a, a_, b_, t_);                    \
    } while (0)

#endif
