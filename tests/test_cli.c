/* The issim executable as a user runs it: exit codes, usage, recording, --set, validate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "testutil.h"

static char output[65536];

/* Runs `issim ARGS` (stdout and stderr captured together); returns the exit status. */
static int issim(const char *args) {
    return test_run_issim(args, output, sizeof output);
}

/* Restitution of impact 1 in the summary table of the last run's output. */
static double first_restitution(void) {
    const char *first = strstr(output, "    1  bar");
    assert_non_null(first);
    double t, v_in, v_out, r;
    assert_int_equal(sscanf(first, " 1 bar %lf %lf %lf %lf", &t, &v_in, &v_out, &r), 4);
    return r;
}

static void test_help_and_usage(void **state) {
    assert_int_equal(issim("--help"), 0);
    assert_non_null(strstr(output, "usage: issim run SCENE"));
    assert_int_equal(issim("run --help"), 0); /* asked for: usage on stdout, not an error */
    assert_non_null(strstr(output, "usage: issim run SCENE"));
    /* Every subcommand listed (`issim device` was missing), and each one's own help through
     * `issim help SUBCOMMAND`. */
    static const char *const subcommands[][2] = {
        {"run", "usage: issim run SCENE"},  {"validate", "usage: issim run SCENE"},
        {"map", "usage: issim map FILE"},   {"sweep", "usage: issim sweep SCENE"},
        {"fit", "usage: issim fit SCENE"},  {"device", "usage: issim device DEVICE"},
        {"help", "issim help [SUBCOMMAND]"}};
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
        char listed[64], args[64];
        assert_int_equal(issim("--help"), 0);
        snprintf(listed, sizeof listed, "\n  %-9s ", subcommands[i][0]);
        if (!strstr(output, listed))
            fail_msg("issim --help does not list '%s'", subcommands[i][0]);
        snprintf(args, sizeof args, "help %s", subcommands[i][0]);
        assert_int_equal(issim(args), 0);
        if (!strstr(output, subcommands[i][1]))
            fail_msg("issim %s printed no '%s'", args, subcommands[i][1]);
    }
    assert_int_equal(issim("help frobnicate"), 2);
    assert_non_null(strstr(output, "no subcommand 'frobnicate'; they are: run validate map"));
    assert_int_equal(issim(""), 2);
    assert_int_equal(issim("frobnicate"), 2);
    assert_non_null(strstr(output, "unknown command"));
    assert_int_equal(issim("run"), 2);
    assert_non_null(strstr(output, "needs a SCENE"));
    assert_int_equal(issim("run scenes/point_drop.lua --until -1"), 2);
    assert_non_null(strstr(output, "--until"));
    assert_int_equal(issim("run scenes/point_drop.lua --bogus"), 2);
    assert_int_equal(issim("run scenes/point_drop.lua --set nonsense"), 2);
    assert_int_equal(issim("run scenes/point_drop.lua --every 0"), 2);
    /* A scene without bodies: a message saying so, not a solver's complaint. */
    const char *empty = test_temp_path(".lua");
    FILE *f = fopen(empty, "w");
    assert_non_null(f);
    fputs("return { name = \"empty\", universe = { gravity = {0, 0, -9.81} } }\n", f);
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "run '%s' --headless", empty);
    assert_int_equal(issim(args), 1);
    assert_non_null(strstr(output, "the scene has no body"));
    remove(empty);
}

/* The options come from one table: each one the synopsis names has a line of help (and the
 * other way round), and a misspelt option names the table's nearest rows. */
static void test_options_table(void **state) {
    assert_int_equal(issim("--help"), 0);
    const char *list = strstr(output, "\n  --headless ");
    assert_non_null(list);
    const char *list_end = strstr(list, "\nExit status");
    assert_non_null(list_end);
    int described = 0;
    for (const char *line = list + 1; line < list_end; line = strchr(line, '\n') + 1) {
        if (strncmp(line, "  --", 4) != 0)
            continue;
        char name[64], rest[256];
        assert_int_equal(sscanf(line, " %63s %255[^\n]", name, rest), 2);
        char bracketed[80];
        snprintf(bracketed, sizeof bracketed, "[%s", name);
        if (!strstr(output, bracketed) && strcmp(name, "--save") != 0)
            fail_msg("%s is described but not in the synopsis", name);
        described++;
    }
    int in_synopsis = 0;
    const char *end = strstr(output, "issim validate SCENE");
    assert_non_null(end);
    for (const char *p = strstr(output, "[--"); p && p < end; p = strstr(p + 1, "[--")) {
        char name[64], described_line[80];
        assert_int_equal(sscanf(p + 1, "%63[^] ]", name), 1);
        snprintf(described_line, sizeof described_line, "\n  %s ", name);
        if (!strstr(output, described_line))
            fail_msg("%s is in the synopsis but has no help", name);
        in_synopsis++;
    }
    assert_true(in_synopsis >= 23);
    assert_int_equal(described, in_synopsis + 1); /* --save: validate's, not in run's synopsis */
    /* The integrator's help lists the vocabulary's names (thing.h), not a copy. */
    assert_non_null(strstr(output, "override the scene's integrator: bdf, adams, rk4"));

    assert_int_equal(issim("run scenes/point_drop.lua --untl 3"), 2);
    assert_non_null(strstr(output, "unknown option '--untl' (did you mean --until?)"));
    assert_int_equal(issim("run scenes/point_drop.lua --bench-sped 3"), 2);
    assert_non_null(strstr(output, "(did you mean --bench-speed?)"));
    assert_int_equal(issim("run scenes/point_drop.lua --frobnicate"), 2);
    assert_non_null(strstr(output, "unknown option '--frobnicate'\n"));
    assert_int_equal(issim("run scenes/point_drop.lua --until"), 2);
    assert_non_null(strstr(output, "--until needs a value"));
}

/* The command of the issue: a trajectory file with t first, named columns, units, metadata. */
static void test_run_records_trajectory(void **state) {
    const char *csv = test_temp_path(".csv");
    char args[512];
    snprintf(args, sizeof args, "run scenes/point_drop.lua --headless --until 2 --record %s", csv);
    assert_int_equal(issim(args), 0);
    /* The summary's first impact: restitution 0.7999.. of the r = 0.8 spring/damper. */
    assert_near(first_restitution(), 0.8, 1e-3);
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char line[4096];
    int rows = 0, metadata = 0;
    bool header = false, units = false;
    double t_last = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "# units:", 8) == 0) {
            units = true;
            assert_non_null(strstr(line, "s,m,m/s,J"));
        } else if (line[0] == '#') {
            metadata++;
        } else if (!header) {
            header = true;
            assert_string_equal(line, "t,bar.pos.z,bar.vel.z,universe.energy.total\n");
        } else {
            double t, z, v, en;
            assert_int_equal(sscanf(line, "%lf,%lf,%lf,%lf", &t, &z, &v, &en), 4);
            assert_true(t > t_last);
            t_last = t;
            rows++;
        }
    }
    fclose(f);
    assert_true(header && units);
    assert_true(metadata >= 3);
    assert_int_equal(rows, 2001); /* t = 0, 0.001, ..., 2 */
    assert_near(t_last, 2.0, 1e-12);
    /* --every and --vars */
    snprintf(args, sizeof args,
             "run scenes/point_drop.lua --headless --until 1 --every 10 --vars bar.pos.x,bar.pos.z "
             "--record %s --quiet",
             csv);
    assert_int_equal(issim(args), 0);
    f = fopen(csv, "r");
    rows = 0;
    while (fgets(line, sizeof line, f))
        if (line[0] != '#' && line[0] != 't')
            rows++;
    fclose(f);
    assert_int_equal(rows, 101);
    remove(csv);
}

static void test_set_overrides_and_errors(void **state) {
    assert_int_equal(issim("run scenes/point_drop.lua --headless --until 0.5 --quiet --set "
                           "universe.gravity='0 0 -1.62'"),
                     0);
    /* On the Moon the bar has not landed after 0.5 s (it needs 0.79 s). */
    assert_non_null(strstr(output, "impacts    none"));
    assert_int_equal(issim("run scenes/point_drop.lua --headless --set bar.mass=-1"), 1);
    assert_non_null(strstr(output, "bar.mass"));
    assert_int_equal(issim("run scenes/point_drop.lua --headless --set nobody.mass=1"), 1);
    assert_non_null(strstr(output, "nobody"));
    assert_int_equal(issim("run scenes/no_such_scene.lua --headless"), 1);
    assert_non_null(strstr(output, "no_such_scene.lua"));
    assert_int_equal(issim("run scenes/point_drop.lua --headless --vars bar.nothing --record "
                           "/tmp/x.csv"),
                     1);
    assert_non_null(strstr(output, "bar.nothing"));
}

/* A full disk at the start is a clear error; a disk filling up during the run (a 16 KiB file
 * size limit) stops the recording with a message while the simulation completes, and the rows
 * written so far stay readable. */
static void test_full_disk(void **state) {
    int rc = issim("run scenes/point_drop.lua --headless --until 1 --record /dev/full --quiet");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(output, "No space left on device"));
    rc = issim("run scenes/point_drop.lua --headless --record /nonexistent/dir/out.csv");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(output, "/nonexistent/dir/out.csv"));

    const char *csv = test_temp_path(".csv");
    const char *bin = getenv("ISSIM_BINARY");
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && (ulimit -f 16; exec '%s' run scenes/point_drop.lua --headless --until 2 "
             "--quiet --record %s) 2>&1",
             test_source_path(""), bin ? bin : "build/issim", csv);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int status = pclose(p);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    assert_non_null(strstr(output, "File too large"));
    /* The simulation carried on to t = 2 and made its five impacts. */
    const char *impacts = strstr(output, "impacts    ");
    assert_non_null(impacts);
    assert_true(atoi(impacts + 11) >= 5);
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char line[4096];
    int rows = 0;
    long size = 0;
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        size += (long)len;
        assert_int_equal(line[len - 1], '\n'); /* no partial row */
        if (line[0] != '#' && line[0] != 't') {
            double t, z, v, en;
            assert_int_equal(sscanf(line, "%lf,%lf,%lf,%lf", &t, &z, &v, &en), 4);
            rows++;
        }
    }
    fclose(f);
    assert_true(size <= 16 * 1024);
    assert_true(rows > 50);
    remove(csv);
}

static void test_validate(void **state) {
    assert_int_equal(issim("validate scenes/point_drop.lua"), 0);
    assert_non_null(strstr(output, "ok"));
    assert_int_equal(issim("validate scenes/bar_drop_horizontal.lua"), 0);
    /* --save writes the scene with its overrides; the saved scene runs with them. */
    const char *saved = test_temp_path(".lua");
    char args[512];
    snprintf(args, sizeof args,
             "validate scenes/point_drop.lua --set bar_floor.restitution=0.5 --save %s", saved);
    assert_int_equal(issim(args), 0);
    snprintf(args, sizeof args, "run %s --headless --until 0.5 --quiet", saved);
    assert_int_equal(issim(args), 0);
    assert_near(first_restitution(), 0.5, 1e-3);
    remove(saved);
    assert_int_equal(issim("validate scenes/point_drop.lua --save /nonexistent/x.lua"), 1);
    assert_non_null(strstr(output, "/nonexistent/x.lua"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_usage),
        cmocka_unit_test(test_options_table),
        cmocka_unit_test(test_run_records_trajectory),
        cmocka_unit_test(test_set_overrides_and_errors),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
