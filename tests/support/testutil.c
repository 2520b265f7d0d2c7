#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "issim/io.h"

#define TESTLOG_MAX 256

static pthread_mutex_t testlog_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
    IssimLogLevel level;
    char text[512];
} testlog_entries[TESTLOG_MAX];
static int testlog_n;

static void testlog_handler(IssimLogLevel level, const char *message, void *user) {
    (void)user;
    pthread_mutex_lock(&testlog_mutex);
    if (testlog_n < TESTLOG_MAX) {
        testlog_entries[testlog_n].level = level;
        snprintf(testlog_entries[testlog_n].text, sizeof testlog_entries[0].text, "%s", message);
        testlog_n++;
    }
    pthread_mutex_unlock(&testlog_mutex);
}

void testlog_capture(void) {
    testlog_clear();
    issim_log_set_handler(testlog_handler, NULL);
}

void testlog_release(void) {
    issim_log_set_handler(NULL, NULL);
}

void testlog_clear(void) {
    pthread_mutex_lock(&testlog_mutex);
    testlog_n = 0;
    pthread_mutex_unlock(&testlog_mutex);
}

int testlog_count(IssimLogLevel level, const char *needle) {
    int count = 0;
    pthread_mutex_lock(&testlog_mutex);
    for (int i = 0; i < testlog_n; i++)
        if (testlog_entries[i].level >= level &&
            (!needle || strstr(testlog_entries[i].text, needle)))
            count++;
    pthread_mutex_unlock(&testlog_mutex);
    return count;
}

const char *test_source_path(const char *relative) {
    static char buffers[4][1024];
    static int next;
    char *buf = buffers[next++ % 4];
    const char *root = getenv("ISSIM_SOURCE_DIR");
    int n = snprintf(buf, sizeof buffers[0], "%s/%s", root ? root : ".", relative);
    if (n < 0 || (size_t)n >= sizeof buffers[0])
        fail_msg("source path too long: %s/%s", root ? root : ".", relative);
    return buf;
}

static Engine *engine_from_db(ThingDb *db, const EngineOptions *options) {
    IssimError err = {0};
    EngineOptions o = options ? *options : engine_options_default();
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("engine: %s", err.message);
    return e;
}

Engine *test_engine_from_scene(const char *relative) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_file(test_source_path(relative), NULL, &db, &err) != ISSIM_OK)
        fail_msg("scene: %s", err.message);
    return engine_from_db(db, NULL);
}

Engine *test_engine_from_source_with(const char *name, const char *source,
                                     const EngineOptions *options) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string(name, source, strlen(source), NULL, &db, &err) != ISSIM_OK)
        fail_msg("scene: %s", err.message);
    return engine_from_db(db, options);
}

Engine *test_engine_from_source(const char *name, const char *source) {
    return test_engine_from_source_with(name, source, NULL);
}

/* The text after `key` up to the first of `stops` is replaced by `value`. */
static void replace_after(char *text, size_t size, const char *key, const char *stops,
                          const char *value) {
    char *at = strstr(text, key);
    if (!at)
        fail_msg("scenes/pile.lua: '%s' not found", key);
    at += strlen(key);
    size_t old = strcspn(at, stops), add = strlen(value), len = strlen(text);
    if (len - old + add >= size)
        fail_msg("scenes/pile.lua: no room to set '%s'", key);
    memmove(at + add, at + old, len - (size_t)(at - text) - old + 1);
    memcpy(at, value, add);
}

char *test_pile_source(int count, double dt, const char *extra) {
    FILE *f = fopen(test_source_path("scenes/pile.lua"), "rb");
    if (!f)
        fail_msg("cannot open scenes/pile.lua");
    size_t size = 32768 + strlen(extra);
    char *text = malloc(size);
    if (!text)
        fail_msg("out of memory");
    size_t n = fread(text, 1, 16384, f);
    fclose(f);
    text[n] = '\0';
    char value[64];
    snprintf(value, sizeof value, "%d ", count);
    replace_after(text, size, "local count = ", " \n", value);
    snprintf(value, sizeof value, "%.17g", dt);
    replace_after(text, size, "\n    dt = ", ",", value);
    char *ret = strstr(text, "\nreturn {");
    if (!ret)
        fail_msg("scenes/pile.lua: no 'return {'");
    size_t add = strlen(extra), tail = strlen(ret) + 1;
    memmove(ret + 1 + add, ret + 1, tail - 1);
    memcpy(ret + 1, extra, add);
    return text;
}

Engine *test_pile_engine_with(int count, double dt, const char *extra,
                              const EngineOptions *options) {
    char *text = test_pile_source(count, dt, extra);
    EngineOptions o = *options;
    o.asset_dir = test_source_path("scenes/");
    Engine *e = test_engine_from_source_with("pile.lua", text, &o);
    free(text);
    return e;
}

Engine *test_pile_engine(int count, double dt, const char *extra) {
    EngineOptions o = engine_options_default();
    return test_pile_engine_with(count, dt, extra, &o);
}

Engine *test_pile_engine_piped(int count, double dt, bool pipeline, int threads) {
    EngineOptions o = engine_options_default();
    o.pipeline_collision = pipeline;
    o.threads = threads;
    return test_pile_engine_with(count, dt, "", &o);
}

void test_pile_to_complementarity(Engine *e) {
    IssimError err = {0};
    if (engine_apply_edit(e, "pile_pile.resolver", "complementarity", &err) != ISSIM_OK ||
        engine_apply_edit(e, "pile_wall.resolver", "complementarity", &err) != ISSIM_OK)
        fail_msg("pile to complementarity: %s", err.message);
}

void test_advance(Engine *e, double t) {
    IssimError err = {0};
    if (engine_advance(e, t, &err) != ISSIM_OK)
        fail_msg("advance to %g s: %s", t, err.message);
}

uint64_t test_engine_state_hash(const Engine *e) {
    int n = engine_var_count(e);
    double *v = calloc((size_t)n, sizeof *v);
    if (!v)
        fail_msg("out of memory");
    engine_write_vars(e, v);
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof *v * (size_t)n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    free(v);
    return h;
}

const char test_v12_box_source[] =
    "return { name = 'v12_box',\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'bdf', dt = 1e-3 },\n"
    "  things = {\n"
    "    { name = 'box', kind = 'body', shape = 'box', half_extents = {0.05, 0.05, 0.05},\n"
    "      mass = 2, inertia = {3.333e-3, 3.333e-3, 3.333e-3}, pos = {0, 0, 0.07},\n"
    "      orient = {0.99995, 0.00707, 0.00707, 0}, material = 'box' },\n"
    "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},\n"
    "      offset = 0, material = 'floor' } },\n"
    "  contacts = {\n"
    "    { name = 'box_floor', materials = {'box', 'floor'}, resolver = 'complementarity' } } }\n";

const char *test_temp_path(const char *suffix) {
    static char buffers[4][256];
    static int next, serial;
    char *buf = buffers[next++ % 4];
    int n = snprintf(buf, sizeof buffers[0], "/tmp/issim-test-%d-%d%s", (int)getpid(), serial++,
                     suffix);
    if (n < 0 || (size_t)n >= sizeof buffers[0])
        fail_msg("temporary path too long for suffix '%s'", suffix);
    return buf;
}

double test_rng_uniform(TestRng *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (double)((r->s * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

double test_rng_range(TestRng *r, double lo, double hi) {
    return lo + (hi - lo) * test_rng_uniform(r);
}

Quat test_rng_rotation(TestRng *r) {
    double u1 = test_rng_uniform(r), u2 = 2 * M_PI * test_rng_uniform(r);
    double u3 = 2 * M_PI * test_rng_uniform(r);
    return (Quat){sqrt(u1) * cos(u3), sqrt(1 - u1) * sin(u2), sqrt(1 - u1) * cos(u2),
                  sqrt(u1) * sin(u3)};
}

void test_octahedron(TestOctahedron *o, double s) {
    Vec3 v[6] = {{s, 0, 0}, {-s, 0, 0}, {0, s, 0}, {0, -s, 0}, {0, 0, s}, {0, 0, -s}};
    memcpy(o->v, v, sizeof v);
    for (int f = 0; f < 8; f++) {
        int sx = f & 1 ? -1 : 1, sy = f & 2 ? -1 : 1, sz = f & 4 ? -1 : 1;
        int a = sx > 0 ? 0 : 1, b = sy > 0 ? 2 : 3, c = sz > 0 ? 4 : 5;
        bool ccw = sx * sy * sz > 0;
        o->fv[3 * f] = a;
        o->fv[3 * f + 1] = ccw ? b : c;
        o->fv[3 * f + 2] = ccw ? c : b;
        o->f[f] = (HullFace){vec3_normalize(vec3(sx, sy, sz)), s / sqrt(3.0), 3 * f, 3};
    }
    o->hull = (Hull){6, o->v, 8, o->f, o->fv, {0, 0, 0}, {0, 0, 0}, {s, s, s}};
}

int test_run_issim(const char *args, char *out, size_t size) {
    const char *bin = getenv("ISSIM_BINARY");
    if (!bin)
        bin = "build/issim";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>&1", test_source_path(""), bin, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        fail_msg("cannot run %s", cmd);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int integrator_named(const char *name) {
    if (!name)
        return -1;
    for (int k = 0; k < INTEGRATOR_COUNT; k++)
        if (strcmp(integrator_name((IntegratorKind)k), name) == 0)
            return k;
    fail_msg("no integrator named '%s'", name);
    return -1;
}

static SimOptions sim_options_for(const TestRunOptions *o) {
    static const TestRunOptions defaults;
    if (!o)
        o = &defaults;
    SimOptions so = sim_options_default();
    if (o->until > 0)
        so.until = o->until;
    so.dt = o->dt;
    so.integrator = integrator_named(o->integrator);
    so.lockstep = o->lockstep;
    so.record_path = o->record_path;
    so.vars = o->vars;
    if (o->every > 0)
        so.every = o->every;
    so.sets = o->sets;
    so.set_count = o->set_count;
    so.quiet = true;
    return so;
}

static TestRun *session_of(Sim *sim) {
    TestRun *run = calloc(1, sizeof *run);
    if (!run)
        fail_msg("out of memory");
    run->sim = sim;
    return run;
}

static void run_headless(TestRun *run, const char *scene) {
    IssimError err = {0};
    if (sim_run_headless(run->sim, &run->summary, &err) != ISSIM_OK)
        fail_msg("%s: %s", scene, err.message);
}

TestRun *test_load_scene(const char *scene, const TestRunOptions *options) {
    SimOptions so = sim_options_for(options);
    IssimError err = {0};
    Sim *sim = sim_create(test_source_path(scene), &so, &err);
    if (!sim)
        fail_msg("%s", err.message);
    return session_of(sim);
}

TestRun *test_run_scene(const char *scene, const TestRunOptions *options) {
    TestRun *run = test_load_scene(scene, options);
    run_headless(run, scene);
    return run;
}

TestRun *test_run_source(const char *name, const char *source, const TestRunOptions *options) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string(name, source, strlen(source), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    SimOptions so = sim_options_for(options);
    Sim *sim = sim_create_from_db(db, test_source_path(name), &so, &err);
    thingdb_destroy(db);
    if (!sim)
        fail_msg("%s: %s", name, err.message);
    TestRun *run = session_of(sim);
    run_headless(run, name);
    return run;
}

void test_run_free(TestRun *run) {
    if (!run)
        return;
    sim_destroy(run->sim);
    free(run);
}

SimSummary *test_run_summary(const char *scene, const TestRunOptions *options) {
    TestRun *run = test_run_scene(scene, options);
    SimSummary *summary = malloc(sizeof *summary);
    if (!summary)
        fail_msg("out of memory");
    *summary = run->summary;
    test_run_free(run);
    return summary;
}

SimSummary *test_thrown_bar(const char *scene, double tip_offset, double v, const char *const *sets,
                            int set_count, double tail) {
    enum { MAX_SETS = 16 };
    if (set_count > MAX_SETS - 3)
        fail_msg("test_thrown_bar: too many overrides (%d)", set_count);
    char vel[64], pos[64];
    snprintf(vel, sizeof vel, "bar.vel=0 0 %.17g", -v);
    snprintf(pos, sizeof pos, "bar.pos=0 0 %.17g", tip_offset + TEST_THROW_GAP);
    const char *all[MAX_SETS];
    for (int i = 0; i < set_count; i++)
        all[i] = sets[i];
    all[set_count] = "universe.gravity=0 0 0";
    all[set_count + 1] = vel;
    all[set_count + 2] = pos;
    TestRunOptions o = {
        .sets = all, .set_count = set_count + 3, .until = TEST_THROW_GAP / v + tail};
    return test_run_summary(scene, &o);
}

Hull *test_box_hull(Vec3 h) {
    Vec3 pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = vec3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z);
    IssimError err;
    Hull *hull = hull_create(pts, 8, &err);
    assert_non_null(hull);
    return hull;
}

Sim *test_sim_from_source(const char *name, const char *source) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string(name, source, strlen(source), NULL, &db, &err) != ISSIM_OK)
        fail_msg("scene %s: %s", name, err.message);
    SimOptions o = sim_options_default();
    o.quiet = true;
    Sim *sim = sim_create_from_db(db, name, &o, &err);
    thingdb_destroy(db);
    if (!sim)
        fail_msg("sim_create %s: %s", name, err.message);
    return sim;
}

void test_nap_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

bool test_wait_until(bool (*done)(void *arg), void *arg) {
    double limit = issim_wall_time() + TEST_WAIT_LIMIT_S;
    while (!done(arg)) {
        if (issim_wall_time() > limit)
            return done(arg);
        test_nap_ms(1);
    }
    return true;
}

void test_wait_for(bool (*done)(void *arg), void *arg, const char *what) {
    if (!test_wait_until(done, arg))
        fail_msg("waited %.0f s for %s", TEST_WAIT_LIMIT_S, what);
}

typedef struct RegistryWait {
    Registry *reg;
    double value; /* the time or the count waited for */
} RegistryWait;

static bool state_time_reached(void *arg) {
    const RegistryWait *w = arg;
    return registry_state_time(w->reg) >= w->value;
}

void test_wait_state_time(Registry *reg, double t) {
    RegistryWait w = {reg, t};
    char what[96];
    snprintf(what, sizeof what, "the engine's frame at t = %g s", t);
    test_wait_for(state_time_reached, &w, what);
}

static bool resets_reached(void *arg) {
    const RegistryWait *w = arg;
    RegistrySlot stats;
    registry_slot_read(w->reg, REGISTRY_SLOT_ENGINE_STATS, &stats);
    return stats.count > 0 && (double)sim_engine_stats_unpack(&stats).resets >= w->value;
}

void test_wait_engine_resets(Registry *reg, double resets) {
    RegistryWait w = {reg, resets};
    char what[96];
    snprintf(what, sizeof what, "the engine thread's reset %g", resets);
    test_wait_for(resets_reached, &w, what);
}

void test_simulator_realtime(int pid) {
    struct sched_param p = {.sched_priority = 70};
    sched_setscheduler((pid_t)pid, SCHED_FIFO, &p); /* refused: as before, see testutil.h */
}

void test_sim_start_paused(Sim *sim) {
    IssimError err = {0};
    sim_set_paused(sim, true);
    if (sim_start(sim, &err) != ISSIM_OK)
        fail_msg("sim_start: %s", err.message);
}

int test_threads_setup(void **state) {
    TestThreads *threads = calloc(1, sizeof *threads);
    *state = threads;
    return threads ? 0 : -1;
}

int test_threads_teardown(void **state) {
    TestThreads *threads = *state;
    if (!threads)
        return 0;
    test_run_free(threads->run);
    sim_destroy(threads->sim);
    for (size_t i = 0; i < sizeof threads->sims / sizeof threads->sims[0]; i++)
        sim_destroy(threads->sims[i]);
    testlog_release(); /* after the joins: the engine thread logs through the capture */
    free(threads);
    *state = NULL;
    return 0;
}

static int compare_scene_names(const void *a, const void *b) {
    return strcmp(a, b);
}

int test_list_scenes(char names[][256], int max, bool (*leave_out)(const char *name)) {
    DIR *dir = opendir(test_source_path("scenes"));
    assert_non_null(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".lua") == 0 &&
            !(leave_out && leave_out(e->d_name)))
            snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)n, sizeof names[0], compare_scene_names);
    return n;
}

int test_servo_run_periods(HapticServo *servo, double seconds) {
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    int n = 0;
    for (int i = 0; i < (int)(seconds * 1000); i++) {
        next.tv_nsec += 1000000L;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        if (!haptic_servo_period(servo, issim_wall_time()))
            break;
        n++;
    }
    return n;
}
