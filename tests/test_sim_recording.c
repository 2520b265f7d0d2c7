/* Recording hostile cases (issue 12): every variable of a scene with more than 1,024 of them,
 * a list of variables longer than 1,023 characters, and a write failure part way (the file size
 * limit standing in for a full disk): the summary says how many rows the file really holds. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "issim/engine.h"
#include "testutil.h"

/* n free spheres on a grid, no contacts: 13 n + 4 variables. */
static const char *many_bodies_source(int n) {
    static char text[1 << 16];
    size_t at = (size_t)snprintf(text, sizeof text,
                                 "local things = {}\n"
                                 "for i = 1, %d do\n"
                                 "  things[#things + 1] = { name = 'b' .. i, kind = 'body',\n"
                                 "    mass = 1, inertia = {1, 1, 1}, pos = {i, 0, 1},\n"
                                 "    vel = {0, 0, i / 100} }\n"
                                 "end\n"
                                 "return { universe = { gravity = {0, 0, -9.81}, "
                                 "integrator = 'rk4', dt = 1e-3 }, things = things }\n",
                                 n);
    assert_true(at < sizeof text);
    return text;
}

/* The last line of a CSV file, split into doubles; returns the column count. */
static int last_row(const char *path, double *out, int max) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char line[1 << 18], last[1 << 18];
    last[0] = '\0';
    while (fgets(line, sizeof line, f))
        if (line[0] != '#' && line[0] != 't')
            memcpy(last, line, strlen(line) + 1);
    fclose(f);
    int n = 0;
    for (char *p = last; *p && n < max;) {
        char *end;
        out[n++] = strtod(p, &end);
        p = *end == ',' ? end + 1 : end + strlen(end);
    }
    return n;
}

static int data_rows(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char line[1 << 18];
    int rows = 0;
    while (fgets(line, sizeof line, f))
        rows += line[0] != '#' && line[0] != 't' && strchr(line, '\n') != NULL;
    fclose(f);
    return rows;
}

static void test_record_every_variable_of_100_bodies(void **state) {
    (void)state;
    const char *path = test_temp_path(".csv");
    TestRun *run =
        test_run_source("many.lua", many_bodies_source(100),
                        &(TestRunOptions){.until = 0.01, .record_path = path, .vars = ""});
    Engine *e = sim_engine(run->sim);
    int vars = engine_var_count(e);
    assert_true(vars > 1024); /* past the old fixed row */
    static double row[2048];
    int columns = last_row(path, row, 2048);
    assert_int_equal(columns, vars + 1); /* t and every variable */
    /* The last body's height and vertical speed, far past column 1,024, are its state. */
    EngineBodyState last = engine_body_state(e, engine_body_find(e, "b100"));
    int z = engine_var_find(e, "b100.pos.z"), vz = engine_var_find(e, "b100.vel.z");
    assert_true(z > 1024 && vz > 1024);
    assert_near(row[1 + z], last.pos.z, 1e-12);
    assert_near(row[1 + vz], last.vel.z, 1e-12);
    test_run_free(run);
    remove(path);
}

static void test_long_variable_list(void **state) {
    (void)state;
    /* 100 bodies' pos.z and vel.z: about 2,000 characters, past the old 1,023 cut. */
    static char vars[4096];
    size_t at = 0;
    for (int i = 1; i <= 100; i++)
        at += (size_t)snprintf(vars + at, sizeof vars - at, "%sb%d.pos.z,b%d.vel.z",
                               i > 1 ? "," : "", i, i);
    assert_true(at > 1023);
    const char *path = test_temp_path(".csv");
    TestRun *run =
        test_run_source("many.lua", many_bodies_source(100),
                        &(TestRunOptions){.until = 0.005, .record_path = path, .vars = vars});
    static double row[256];
    assert_int_equal(last_row(path, row, 256), 201);
    test_run_free(run);
    remove(path);
}

/* A full disk, made by the file size limit (RLIMIT_FSIZE: writes past it fail with EFBIG). */
static void test_failed_write_reports_rows_in_file(void **state) {
    (void)state;
    const char *path = test_temp_path(".csv");
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*previous)(int) = signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = {64 * 1024, old.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    TestRun *run = test_load_scene(
        "scenes/point_drop.lua",
        &(TestRunOptions){.until = 2.0, .integrator = "rk4", .dt = 1e-4, .record_path = path});
    IssimError err = {0};
    IssimStatus s = sim_run_headless(run->sim, &run->summary, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, previous);
    assert_int_equal(s, ISSIM_OK); /* the simulation carries on */
    int in_file = data_rows(path);
    printf("disk full: %llu rows reported, %d whole rows in the file, failed = %d (%s)\n",
           (unsigned long long)run->summary.rows_recorded, in_file, run->summary.recording_failed,
           run->summary.recording_error);
    assert_true(run->summary.recording_failed);
    assert_true(in_file > 100 && in_file < 20000); /* it failed part way */
    assert_int_equal(run->summary.rows_recorded, (uint64_t)in_file);
    test_run_free(run);
    remove(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_every_variable_of_100_bodies),
        cmocka_unit_test(test_long_variable_list),
        cmocka_unit_test(test_failed_write_reports_rows_in_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
