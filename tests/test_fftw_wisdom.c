/* FFTW wisdom cached between processes (src/contactmap/contact_map_conv.c): the contact-map bar
 * drop's forces are bit-identical with no cache, a fresh one, a corrupt, a truncated, an
 * unreadable or an unwritable one; a process that finds every plan in the cache leaves it
 * untouched, one that had to plan rewrites it whole (never a temporary file left behind). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static char output[65536];
static char tmp[64], cache[128], wisdom[512];

/* The data rows (no '#' header: it holds the command line) of a run's recorded trajectory. */
static char *run_bar_drop(const char *cache_home, const char *name) {
    char csv[256], args[512];
    snprintf(csv, sizeof csv, "%s/%s.csv", tmp, name);
    snprintf(args, sizeof args,
             "run scenes/bar_drop_map.lua --headless --until 2e-3 --dt 2e-5 --quiet --record %s",
             csv);
    setenv("XDG_CACHE_HOME", cache_home, 1);
    int rc = test_run_issim(args, output, sizeof output);
    unsetenv("XDG_CACHE_HOME");
    if (rc != 0)
        fail_msg("issim %s failed (%d): %s", args, rc, output);
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char *rows = calloc(1, 1 << 20), line[4096];
    size_t used = 0;
    while (fgets(line, sizeof line, f))
        if (line[0] != '#' && used + strlen(line) < (1 << 20))
            used += (size_t)sprintf(rows + used, "%s", line);
    fclose(f);
    return rows;
}

static void find_wisdom_file(void) {
    char dir[256];
    snprintf(dir, sizeof dir, "%s/issim", cache);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        files++;
        assert_int_equal(strncmp(e->d_name, "fftw-wisdom-", 12), 0); /* no temporary left */
        snprintf(wisdom, sizeof wisdom, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    assert_int_equal(files, 1);
}

static long file_text(const char *path, char *text, size_t size) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, size - 1, f);
    text[n] = '\0';
    fclose(f);
    return (long)n;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void assert_valid_wisdom(void) {
    static char text[1 << 16];
    assert_true(file_text(wisdom, text, sizeof text) > 100);
    assert_int_equal(strncmp(text, "(fftw-", 6), 0);
    assert_non_null(strstr(text, "fftw_codelet"));
}

static void test_results_identical_whatever_the_cache(void **state) {
    snprintf(tmp, sizeof tmp, "/tmp/issim-wisdom.XXXXXX");
    assert_non_null(mkdtemp(tmp));
    snprintf(cache, sizeof cache, "%s/cache", tmp);

    /* No cache directory yet: planned, then written. */
    char *fresh = run_bar_drop(cache, "fresh");
    assert_true(strlen(fresh) > 1000); /* about 100 rows of the bar's trajectory */
    find_wisdom_file();
    assert_valid_wisdom();
    struct stat before, after;
    assert_int_equal(stat(wisdom, &before), 0);

    /* Every plan from the cache: the same numbers, the file not rewritten. */
    char *cached = run_bar_drop(cache, "cached");
    assert_string_equal(cached, fresh);
    assert_int_equal(stat(wisdom, &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);

    /* Corrupt and truncated (half a file): ignored, planned again, the cache rewritten. */
    static char valid[1 << 16];
    long length = file_text(wisdom, valid, sizeof valid);
    write_text(wisdom, "(fftw-3.3.10 fftw_wisdom #x0 garbage (((");
    char *corrupt = run_bar_drop(cache, "corrupt");
    assert_string_equal(corrupt, fresh);
    assert_valid_wisdom();
    valid[length / 2] = '\0';
    write_text(wisdom, valid);
    char *truncated = run_bar_drop(cache, "truncated");
    assert_string_equal(truncated, fresh);
    assert_valid_wisdom();
    find_wisdom_file();

    /* Unreadable: a directory in the file's place (root reads any file); it stays. */
    assert_int_equal(unlink(wisdom), 0);
    assert_int_equal(mkdir(wisdom, 0700), 0);
    char *unreadable = run_bar_drop(cache, "unreadable");
    assert_string_equal(unreadable, fresh);
    struct stat st;
    assert_int_equal(stat(wisdom, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(rmdir(wisdom), 0);

    /* Unwritable: the cache home is a regular file, so no directory can be made in it. */
    char blocked[160];
    snprintf(blocked, sizeof blocked, "%s/not-a-directory", tmp);
    write_text(blocked, "x");
    char *unwritable = run_bar_drop(blocked, "unwritable");
    assert_string_equal(unwritable, fresh);

    free(fresh);
    free(cached);
    free(corrupt);
    free(truncated);
    free(unreadable);
    free(unwritable);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_results_identical_whatever_the_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
