/* Parameter studies (include/issim/study.h, `issim sweep`, docs/studies.md): axes and their
 * errors, run enumeration (grid order, seeded random samples independent of how runs are
 * shared), a failed run recorded with its message, one table whichever way it ran (1 or 2
 * threads, 2 MPI ranks), and a killed sweep resumed without rerunning finished runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "issim/study.h"
#include "testutil.h"

static void test_axes_and_their_errors(void **state) {
    (void)state;
    Study s = {0};
    IssimError err = {0};
    assert_int_equal(study_add_axis(&s, "angle_deg=18:90:7", &err), ISSIM_OK);
    assert_int_equal(study_add_axis(&s, "bar_floor.model=spring_damper,internal_friction", &err),
                     ISSIM_OK);
    assert_int_equal(study_add_axis(&s, "bar_floor.stiffness=log:1e4:1e8:5", &err), ISSIM_OK);
    assert_true(s.axes[0].is_param);
    assert_false(s.axes[1].is_param);
    assert_int_equal(s.axes[0].count, 7);
    assert_string_equal(s.axes[0].values[2], "42");
    assert_string_equal(s.axes[1].values[1], "internal_friction");
    assert_string_equal(s.axes[2].values[2], "1000000");
    assert_int_equal(study_run_count(&s), 7 * 2 * 5);
    char v[STUDY_MAX_AXES][STUDY_VALUE_MAX];
    study_run_values(&s, 13, v); /* the last axis fastest: 13 = (1 * 2 + 0) * 5 + 3 */
    assert_string_equal(v[0], "30");
    assert_string_equal(v[1], "spring_damper");
    assert_string_equal(v[2], "10000000");
    const char *bad[][2] = {
        {"x=1:1:3", "the range is empty"},          {"x=0:1:0", "a count n in 1 ... 4096"},
        {"x=log:0:1:3", "a log range needs a > 0"}, {"x=1,,2", "an empty value"},
        {"x", "--grid needs NAME=VALUES"},          {"x=a:b:3", "a range is a:b:n"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_not_equal(study_add_axis(&s, bad[i][0], &err), ISSIM_OK);
        printf("%s -> %s\n", bad[i][0], err.message);
        assert_non_null(strstr(err.message, bad[i][1]));
    }
    assert_int_equal(s.axis_count, 3); /* the failed ones were not added */
    assert_int_not_equal(study_add_probe(&s, "bar.vel.z@soon", &err), ISSIM_OK);
    assert_int_equal(study_add_probe(&s, "bar.vel.z@end", &err), ISSIM_OK);
    study_free(&s);
}

/* A run's random values depend on (seed, index) only: the same whichever order runs come in. */
static void test_random_samples_keyed_by_index(void **state) {
    (void)state;
    Study s = {.samples = 50, .seed = 7};
    IssimError err = {0};
    assert_int_equal(study_add_axis(&s, "speed=0.5:3", &err), ISSIM_OK);
    assert_int_equal(study_add_axis(&s, "k=log:1e3:1e6", &err), ISSIM_OK);
    assert_int_equal(study_run_count(&s), 50);
    char a[STUDY_MAX_AXES][STUDY_VALUE_MAX] = {{0}}, b[STUDY_MAX_AXES][STUDY_VALUE_MAX] = {{0}};
    double lo = INFINITY, hi = -INFINITY;
    for (long i = 49; i >= 0; i--) {
        study_run_values(&s, i, a);
        double v = strtod(a[0], NULL), k = strtod(a[1], NULL);
        assert_true(v >= 0.5 && v <= 3 && k >= 1e3 && k <= 1e6);
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    study_run_values(&s, 17, a);
    study_run_values(&s, 3, b);
    study_run_values(&s, 17, b);
    assert_memory_equal(a, b, sizeof a);
    assert_true(hi - lo > 1.5); /* spread over the range */
    s.seed = 8;
    study_run_values(&s, 17, b);
    assert_string_not_equal(a[0], b[0]);
    study_free(&s);
}

/* One run through the library: a scene parameter and a property; a bad property path is a row
 * with its message, not a failure of the study. */
static void test_one_run_and_a_failed_one(void **state) {
    (void)state;
    Study s = {.until = 3e-4};
    issim_strlcpy(s.scene, test_source_path("scenes/bar_drop_angle.lua"), sizeof s.scene);
    IssimError err = {0};
    assert_int_equal(study_add_axis(&s, "angle_deg=90", &err), ISSIM_OK);
    assert_int_equal(study_add_axis(&s, "bar_foundation.friction_static=0.1,2", &err), ISSIM_OK);
    assert_int_equal(study_add_probe(&s, "bar.vel.z@end", &err), ISSIM_OK);
    StudyRow row;
    study_run(&s, 0, &row);
    assert_true(row.ok);
    assert_int_equal(row.impacts, 1);
    assert_near(row.v_in, -3.0, 1e-9);
    assert_near(row.probes[0], row.v_out, 1e-3); /* vertical drop: the normal is z */
    printf("vertical drop at 3 m/s: v_out %.4f m/s, restitution %.4f, %.1f us\n", row.v_out,
           row.restitution, row.duration * 1e6);
    study_free(&s);
    assert_int_equal(study_add_axis(&s, "bar_foundation.stifness=1e6", &err), ISSIM_OK);
    study_run(&s, 0, &row);
    assert_false(row.ok);
    printf("bad path: %s\n", row.message);
    assert_non_null(strstr(row.message, "stifness"));
    study_free(&s);
}

/* A study run's registry keeps its whole trajectory and no more (study_history_set): run to U
 * with the set, the history starts at 0; run to 3 U with the same set, it starts after U
 * (the scene's own 20 s history would have kept everything, in a 32 MiB ring per run). */
static double history_start_after(const char *history_set, double until) {
    const char *sets[] = {history_set};
    SimOptions o = sim_options_default();
    o.until = until;
    o.quiet = true;
    o.lockstep = true;
    o.sets = sets;
    o.set_count = 1;
    IssimError err = {0};
    Sim *sim = sim_create(test_source_path("scenes/bar_drop_angle.lua"), &o, &err);
    assert_non_null(sim);
    SimSummary *sum = calloc(1, sizeof *sum);
    assert_int_equal(sim_run_headless(sim, sum, &err), ISSIM_OK);
    double start = registry_history_start(sim_registry(sim));
    free(sum);
    sim_destroy(sim);
    return start;
}

static void test_run_history_sized_to_the_run(void **state) {
    (void)state;
    const double until = 3e-3;
    char set[STUDY_HISTORY_SET_MAX];
    study_history_set(until, set);
    double whole = history_start_after(set, until), longer = history_start_after(set, 3 * until);
    printf("%s: history from %g s after a %g s run, from %g s after a %g s run\n", set, whole,
           until, longer, 3 * until);
    assert_true(whole == 0.0);
    assert_true(longer > until && longer < 2 * until + 1e-12);
}

/* The sweep's table without its wall-time column (the last): the part that must not depend on
 * threads or ranks. */
static char *table_without_wall(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = 0;
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        char *last = strrchr(line, ',');
        if (last)
            *last = '\0';
        n += (size_t)snprintf(text + n, sizeof text - n, "%s\n", line);
    }
    fclose(f);
    return strdup(text);
}

static const char *sweep_args =
    "sweep scenes/bar_drop_angle.lua --grid angle_deg=30:90:3 --grid speed=0.5,3 "
    "--until 2e-4 --at bar.angvel.y@end --quiet";
/* The map bar drop: the threads share the map the process read first (contactmap.h's cache). */
static const char *map_sweep_args = "sweep scenes/bar_drop_map.lua --grid angle_deg=18,54,90 "
                                    "--grid speed=3 --until 3e-4 --at bar.angvel.y@end --quiet";

static char *sweep_table(const char *prefix, const char *command, const char *extra) {
    static char out[1 << 14];
    const char *path = test_temp_path(".csv");
    char args[1024];
    snprintf(args, sizeof args, "%s --out %s %s", command, path, extra);
    char cmd[2048];
    if (prefix) { /* mpirun: through a shell, the binary named the way test_run_issim does */
        const char *bin = getenv("ISSIM_BINARY") ? getenv("ISSIM_BINARY") : "build/issim";
        snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s 2>&1", test_source_path(""), prefix, bin,
                 args);
        FILE *p = popen(cmd, "r");
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = '\0';
        int status = pclose(p);
        if (status != 0)
            fail_msg("%s failed:\n%s", cmd, out);
    } else if (test_run_issim(args, out, sizeof out) != 0) {
        fail_msg("issim %s failed:\n%s", args, out);
    }
    char *t = table_without_wall(path);
    unlink(path);
    return t;
}

static void same_table_on_threads_and_ranks(const char *command) {
    char *one = sweep_table(NULL, command, "--threads 1");
    char *two = sweep_table(NULL, command, "--threads 2");
    printf("%s", one);
    assert_string_equal(one, two);
    assert_int_equal((int)(strchr(one, '\n') - one) > 0, 1);
    /* 2 MPI ranks (OpenMPI; as root it asks for the two variables; its own allocations at exit
     * are not ours to leak-check). */
    if (system("command -v mpirun >/dev/null 2>&1") == 0) {
        char *mpi = sweep_table("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                                "ASAN_OPTIONS=detect_leaks=0 mpirun -np 2 --oversubscribe",
                                command, "--threads 1");
        assert_string_equal(one, mpi);
        printf("1 thread, 2 threads and 2 MPI ranks: the same table\n");
        free(mpi);
    } else {
        fail_msg("mpirun not found (tools/bootstrap.sh installs openmpi-bin)");
    }
    free(one);
    free(two);
}

static void test_same_table_on_threads_and_ranks(void **state) {
    (void)state;
    same_table_on_threads_and_ranks(sweep_args);
    same_table_on_threads_and_ranks(map_sweep_args);
}

/* A sweep killed after some runs (its table: the header, finished rows, a row cut mid-line)
 * resumes: only the missing runs run, the cut line is dropped, the table ends complete. */
static void test_killed_sweep_resumes(void **state) {
    (void)state;
    char *fresh = sweep_table(NULL, sweep_args, "--threads 1");
    /* What a kill leaves: the header, two finished rows, half of a third row. */
    const char *path = test_temp_path(".csv");
    FILE *f = fopen(path, "w");
    const char *p = fresh;
    for (int line = 0; line < 3; line++) {
        const char *end = strchr(p, '\n');
        fprintf(f, "%.*s,%s\n", (int)(end - p), p, line == 0 ? "wall_s" : "0.1");
        p = end + 1;
    }
    fprintf(f, "%.20s", p);
    fclose(f);
    char out[1 << 14], args[1024];
    snprintf(args, sizeof args, "%s --out %s --threads 1", sweep_args, path);
    assert_int_equal(test_run_issim(args, out, sizeof out), 0);
    printf("%s", out);
    assert_non_null(strstr(out, "6 runs (2 done before, 4 to run)"));
    char *resumed = table_without_wall(path);
    assert_string_equal(resumed, fresh);
    free(resumed);
    free(fresh);
    unlink(path);
}

static void test_bad_input_named(void **state) {
    (void)state;
    char out[4096];
    assert_int_equal(
        test_run_issim("sweep scenes/bar_drop_angle.lua --grid angle_deg=1:1:2", out, sizeof out),
        2);
    assert_non_null(strstr(out, "the range is empty"));
    assert_int_equal(test_run_issim("sweep scenes/bar_drop_angle.lua --grid angle_deg=0:90:400 "
                                    "--grid speed=0:1:400 --quiet --out /tmp/never.csv",
                                    out, sizeof out),
                     2);
    assert_non_null(strstr(out, "160000 runs is over the limit of 100000"));
    const char *path = test_temp_path(".csv");
    char args[512];
    snprintf(args, sizeof args,
             "sweep scenes/bar_drop_angle.lua --grid angle_deg=90 --until 1e-4 --quiet "
             "--at bar.vel.q@end --out %s",
             path);
    /* refused before any run (it used to fail every row: tests/test_sweep_inputs.c) */
    assert_int_equal(test_run_issim(args, out, sizeof out), 2);
    printf("%s", out);
    assert_non_null(strstr(out, "the scene has no variable bar.vel.q"));
    assert_int_not_equal(access(path, F_OK), 0);
}

/* ===== Fits ===== */

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A trajectory made by a spring/damper of known k and b (the flat-map spheres switched to
 * spring_damper): the fit from far-off starting values finds them, inside its 95% intervals. */
static void test_fit_recovers_a_spring_damper(void **state) {
    (void)state;
    const char *sets[] = {"spheres.model=spring_damper", "spheres.damping_from=value",
                          "spheres.stiffness=2000", "spheres.damping=3"};
    const char *csv = test_temp_path(".csv");
    TestRunOptions o = {.sets = sets,
                        .set_count = 4,
                        .until = 0.12,
                        .lockstep = true,
                        .record_path = csv,
                        .vars = "left.vel.x"};
    test_run_free(test_run_scene("scenes/spheres_flat_map.lua", &o));
    FitData data;
    IssimError err = {0};
    assert_int_equal(fit_data_read(csv, &data, &err), ISSIM_OK);
    assert_true(data.trajectory);
    Study study = {.sets = sets, .set_count = 2};
    issim_strlcpy(study.scene, test_source_path("scenes/spheres_flat_map.lua"), sizeof study.scene);
    FitParam p[2];
    assert_int_equal(fit_param_parse("spheres.stiffness=800", &p[0], &err), ISSIM_OK);
    assert_int_equal(fit_param_parse("spheres.damping=0.5:0:100", &p[1], &err), ISSIM_OK);
    FitResult res;
    if (study_fit(&study, &data, p, 2, &res, NULL, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    printf("k = %.6f (%.6f ... %.6f), b = %.6f (%.6f ... %.6f), rms %.3g, %d iterations, %ld "
           "runs\n",
           p[0].value, p[0].lo95, p[0].hi95, p[1].value, p[1].lo95, p[1].hi95, res.rms,
           res.iterations, res.runs);
    assert_near(p[0].value, 2000.0, 2000.0 * 1e-5);
    assert_near(p[1].value, 3.0, 3.0 * 1e-4);
    assert_true(p[0].lo95 <= 2000.0 + 1e-6 && p[0].hi95 >= 2000.0 - 1e-6);
    /* A parameter the run never uses cannot be identified: named, not a wrong answer. */
    assert_int_equal(fit_param_parse("spheres.alpha=0.3", &p[1], &err), ISSIM_OK);
    assert_int_equal(study_fit(&study, &data, p, 2, &res, NULL, &err), ISSIM_ERR_NUMERIC);
    printf("%s\n", err.message);
    assert_non_null(strstr(err.message, "cannot identify spheres.alpha"));
    /* data columns that are not the scene's variables: named */
    issim_strlcpy(data.names[1], "left.velocity.x", sizeof data.names[1]);
    assert_int_equal(fit_param_parse("spheres.damping=0.5:0:100", &p[1], &err), ISSIM_OK);
    assert_int_equal(study_fit(&study, &data, p, 2, &res, NULL, &err), ISSIM_ERR_NUMERIC);
    printf("%s\n", err.message);
    assert_non_null(strstr(err.message, "data column left.velocity.x is not a variable"));
    fit_data_free(&data);
    unlink(csv);
}

/* A table of experiments (004 4.7's kind): restitution at three impact speeds of the bar on the
 * Hunt-Crossley foundation, made with alpha = 0.3; the fit of alpha from 0.05 finds it. */
static void test_fit_alpha_to_restitution_data(void **state) {
    (void)state;
    Study make = {.until = 3e-4};
    issim_strlcpy(make.scene, test_source_path("scenes/bar_drop_angle.lua"), sizeof make.scene);
    const char *sets[] = {"bar_foundation.alpha=0.3", "bar_foundation.friction_static=0",
                          "bar_foundation.friction_kinetic=0"};
    make.sets = sets;
    make.set_count = 3;
    IssimError err = {0};
    assert_int_equal(study_add_axis(&make, "angle_deg=90", &err), ISSIM_OK);
    assert_int_equal(study_add_axis(&make, "speed=0.5,1.5,3", &err), ISSIM_OK);
    char table[1024];
    int n = snprintf(table, sizeof table, "angle_deg,speed,restitution\n");
    for (long i = 0; i < 3; i++) {
        StudyRow row;
        study_run(&make, i, &row);
        assert_true(row.ok);
        n += snprintf(table + n, sizeof table - n, "%s,%s,%.12g\n", row.values[0], row.values[1],
                      row.restitution);
    }
    study_free(&make);
    printf("%s", table);
    const char *path = test_temp_path(".csv");
    write_file(path, table);
    FitData data;
    assert_int_equal(fit_data_read(path, &data, &err), ISSIM_OK);
    assert_false(data.trajectory);
    Study study = {.until = 3e-4, .sets = sets + 1, .set_count = 2};
    issim_strlcpy(study.scene, make.scene, sizeof study.scene);
    FitParam p;
    assert_int_equal(fit_param_parse("bar_foundation.alpha=0.05:0:10", &p, &err), ISSIM_OK);
    FitResult res;
    if (study_fit(&study, &data, &p, 1, &res, NULL, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    printf("alpha = %.8f (%.8f ... %.8f), %d iterations, %ld runs\n", p.value, p.lo95, p.hi95,
           res.iterations, res.runs);
    assert_near(p.value, 0.3, 1e-5);
    fit_data_free(&data);
    unlink(path);
}

static void test_fit_data_errors(void **state) {
    (void)state;
    const char *path = test_temp_path(".csv");
    FitData data;
    IssimError err = {0};
    write_file(path, "speed,height\n1,2\n");
    assert_int_not_equal(fit_data_read(path, &data, &err), ISSIM_OK);
    assert_non_null(strstr(err.message, "no column to fit"));
    write_file(path, "t,bar.pos.z\n0,1\n0.1,x\n");
    assert_int_not_equal(fit_data_read(path, &data, &err), ISSIM_OK);
    printf("%s\n", err.message);
    assert_non_null(strstr(err.message, ":3: column bar.pos.z: not a number"));
    FitParam p;
    assert_int_not_equal(fit_param_parse("stiffness=3", &p, &err), ISSIM_OK);
    assert_int_not_equal(fit_param_parse("a.k=5:0:1", &p, &err), ISSIM_OK);
    assert_non_null(strstr(err.message, "is not inside"));
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axes_and_their_errors),
        cmocka_unit_test(test_random_samples_keyed_by_index),
        cmocka_unit_test(test_one_run_and_a_failed_one),
        cmocka_unit_test(test_run_history_sized_to_the_run),
        cmocka_unit_test(test_same_table_on_threads_and_ranks),
        cmocka_unit_test(test_killed_sweep_resumes),
        cmocka_unit_test(test_bad_input_named),
        cmocka_unit_test(test_fit_recovers_a_spring_damper),
        cmocka_unit_test(test_fit_alpha_to_restitution_data),
        cmocka_unit_test(test_fit_data_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
