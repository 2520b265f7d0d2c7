/* `issim sweep` and `issim fit` refuse bad input before anything runs (docs/studies.md, "Bad
 * input"): axes checked against the scene (unknown paths and parameters, duplicate axes, values
 * out of a property's range, an axis that a --set also sets, probes of no variable), numbers that
 * must be whole or bounded (--threads, --random, --seed, --max-runs, --until, also for `issim
 * run`), grid sizes counted without overflow; a sweep whose every run failed exits non-zero;
 * a resumed table's malformed rows are refused; a fit that leaves no degree of freedom is
 * refused instead of printing NaN intervals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static char output[1 << 16];

static int issim(const char *args) {
    return test_run_issim(args, output, sizeof output);
}

static bool exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* The sweep with `extra` is refused with exit 2, a message containing `needle`, and no table:
 * nothing ran. */
static void refused(const char *extra, const char *needle) {
    const char *out = test_temp_path(".csv");
    char args[2048];
    snprintf(args, sizeof args,
             "sweep scenes/bar_drop_angle.lua --until 1e-4 --quiet --threads 1 --out %s %s", out,
             extra);
    int rc = issim(args);
    printf("%s\n  -> %d: %s", extra, rc, output);
    assert_int_equal(rc, 2);
    if (!strstr(output, needle))
        fail_msg("'%s' is not in the message", needle);
    assert_false(exists(out));
}

static void test_axes_checked_against_the_scene(void **state) {
    (void)state;
    refused("--grid nosuch.stiffness=1,2", "no thing named 'nosuch'");
    refused("--grid bar_foundation.stifness=1e6,2e6", "unknown property 'stifness'");
    refused("--grid nosuch=1,2", "no scene parameter for 'nosuch");
    refused("--grid angle_deg=30,x", "'x' is not a number");
    /* the same property twice: the first axis used to be silently overridden by the second */
    refused("--grid bar_foundation.stiffness=1e6,2e6 --grid bar_foundation.stiffness=3e6",
            "--grid bar_foundation.stiffness is given twice");
    refused("--grid speed=1,2 --grid angle_deg=30 --grid speed=3", "--grid speed is given twice");
    /* a value out of the property's range: the message gives the range */
    refused("--grid bar_foundation.stiffness=1e6,-5", "-5 N/m is out of range: must be >=");
    refused("--random 4 --seed 1 --grid bar_foundation.stiffness=-1e6:1e6",
            "is out of range: must be >=");
    refused("--grid bar_foundation.model=hunt_crossley,nosuch_model", "nosuch_model");
    refused("--grid bar_foundation.stiffness=1e6 --set bar_foundation.stiffness=2e6",
            "conflicts with --set bar_foundation.stiffness=2e6");
    refused("--grid angle_deg=30 --set nobody.mass=1", "--set nobody.mass=1");
    refused("--grid angle_deg=30 --at bar.vel.q@end", "the scene has no variable bar.vel.q");
}

static void test_numbers_are_checked(void **state) {
    (void)state;
    refused("--grid angle_deg=30 --until nan", "--until needs a time in (0, 1e6]");
    refused("--grid angle_deg=30 --until -1", "--until needs a time in (0, 1e6]");
    refused("--grid angle_deg=30 --until 1e20", "--until needs a time in (0, 1e6]");
    refused("--grid angle_deg=30 --threads 1.5", "--threads needs a whole number");
    refused("--grid angle_deg=30 --threads 99999999999999999999", "--threads needs a whole number");
    refused("--grid angle_deg=30 --max-runs 2.5", "--max-runs needs a whole number");
    refused("--grid angle_deg=30:90 --random 3 --seed -1", "--seed needs a whole number");
    refused("--grid angle_deg=30:90 --random 2.5", "--random needs a whole number");
    /* 1e6 is a million runs (strtol read it as 1), over the default limit */
    refused("--grid angle_deg=30:90 --random 1e6", "1000000 runs is over the limit of 100000");
    /* 4096 x 4096 x 100 runs, counted exactly (16777216 was reported), and refused even with
     * --force; eight axes of 4096 overflow a long */
    refused("--grid angle_deg=0:90:4096 --grid speed=0.5:3:4096 --grid bar.mass=1:2:100",
            "1677721600 runs is over the limit");
    refused("--force --grid angle_deg=0:90:4096 --grid speed=0.5:3:4096 --grid bar.mass=1:2:100",
            "1677721600 runs is over the limit of 100000000 runs");
    char grids[1024] = "--force";
    const char *names[] = {
        "angle_deg",       "speed",        "bar.mass",   "bar_foundation.k", "bar_foundation.alpha",
        "bar.restitution", "bar.friction", "bar.density"};
    for (int i = 0; i < 8; i++)
        snprintf(grids + strlen(grids), sizeof grids - strlen(grids), " --grid %s=1:2:4096",
                 names[i]);
    refused(grids, "more than 9223372036854775807 runs");
    /* issim run: the same bounds on --until (1e20 ran 0 steps and exited 0) */
    assert_int_equal(issim("run scenes/point_drop.lua --headless --quiet --until 1e20"), 2);
    assert_non_null(strstr(output, "--until needs a time in (0, 1e6]"));
    assert_int_equal(issim("run scenes/point_drop.lua --headless --quiet --until nan"), 2);
}

/* A scene that loads but never builds (its hull file is missing): every run fails, and the
 * sweep says so with a non-zero exit (it exited 0). */
static void test_every_run_failed_exits_nonzero(void **state) {
    (void)state;
    const char *scene = test_temp_path(".lua");
    FILE *f = fopen(scene, "w");
    assert_non_null(f);
    fprintf(f, "local m = param('m', 1)\n"
               "return {things = {{name = 'rock', kind = 'body', mass = m, shape = 'hull', "
               "hull_file = '/nonexistent/rock.obj'}}}\n");
    fclose(f);
    const char *out = test_temp_path(".csv");
    char args[1024];
    snprintf(args, sizeof args, "sweep %s --grid m=1,2 --until 1e-3 --quiet --threads 1 --out %s",
             scene, out);
    int rc = issim(args);
    printf("%s", output);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(output, "every run failed (run 0: "));
    assert_non_null(strstr(output, "rock.obj"));
    assert_non_null(strstr(output, "2 rows in the table"));
    unlink(out);
    unlink(scene);
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 14];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A resumed table's whole rows must be rows of this study, not only in their run number and
 * axis values (a row "1,60,ok" was kept as run 1 finished). */
static void test_resume_refuses_malformed_rows(void **state) {
    (void)state;
    const char *out = test_temp_path(".csv");
    char args[1024];
    snprintf(args, sizeof args,
             "sweep scenes/bar_drop_angle.lua --grid angle_deg=30:90:3 --until 1e-4 --quiet "
             "--threads 1 --out %s",
             out);
    assert_int_equal(issim(args), 0);
    char good[1 << 14];
    issim_strlcpy(good, read_text(out), sizeof good);
    char *row1 = strstr(good, "\n1,60,");
    assert_non_null(row1);
    const char *row2 = strstr(row1 + 1, "\n2,");
    assert_non_null(row2);
    const char *bad_rows[] = {
        "1,60,ok\n",                                    /* too few columns */
        "1,60,ok,1,0.001,-3,1,0.3,0.0001,junk,0.01\n",  /* not a number */
        "1,60,ok,1.5,0.001,-3,1,0.3,0.0001,0.2,0.01\n", /* impacts not whole */
        "1,60,\"ok,1,0.001,-3,1,0.3,0.0001,0.2,0.01\n", /* an open quote */
        "1,60,ok,1,0.001,-3,1,0.3,0.0001,0.2,0.01,7\n", /* one column too many */
        "01x,60,ok,1,0.001,-3,1,0.3,0.0001,0.2,0.01\n", /* not a run number */
    };
    for (size_t i = 0; i < sizeof bad_rows / sizeof bad_rows[0]; i++) {
        char table[1 << 14];
        snprintf(table, sizeof table, "%.*s\n%s%s", (int)(row1 - good), good, bad_rows[i],
                 row2 + 1);
        write_text(out, table);
        int rc = issim(args);
        printf("%s  -> %d: %s", bad_rows[i], rc, output);
        assert_int_equal(rc, 1);
        assert_non_null(strstr(output, "line 3: not a row of this study"));
        assert_string_equal(read_text(out), table); /* left as it was */
    }
    /* the whole table resumes with nothing to run */
    write_text(out, good);
    assert_int_equal(issim(args), 0);
    assert_non_null(strstr(output, "3 runs (3 done before, 0 to run)"));
    unlink(out);
}

/* One experiment and one free parameter: an exact fit with no degree of freedom left, whose
 * intervals were NaN with exit 0. */
static void test_fit_without_degrees_of_freedom_refused(void **state) {
    (void)state;
    const char *data = test_temp_path(".csv");
    write_text(data, "angle_deg,speed,restitution\n90,3,0.5\n");
    char args[1024];
    snprintf(args, sizeof args,
             "fit scenes/bar_drop_angle.lua --data %s --free bar_foundation.alpha=0.1:0:10 "
             "--until 3e-4 --quiet",
             data);
    int rc = issim(args);
    printf("%s", output);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(output, "1 residual cannot fit 1 parameter with confidence intervals"));
    assert_null(strstr(output, "nan"));
    snprintf(args, sizeof args,
             "fit scenes/bar_drop_angle.lua --data %s --free bar_foundation.alpha --until 1e20",
             data);
    assert_int_equal(issim(args), 2);
    assert_non_null(strstr(output, "--until needs a time in (0, 1e6]"));
    unlink(data);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axes_checked_against_the_scene),
        cmocka_unit_test(test_numbers_are_checked),
        cmocka_unit_test(test_every_run_failed_exits_nonzero),
        cmocka_unit_test(test_resume_refuses_malformed_rows),
        cmocka_unit_test(test_fit_without_degrees_of_freedom_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
