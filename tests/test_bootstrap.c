/* tools/bootstrap.sh, run against stand-in dpkg-query and apt-get on PATH: silent when every
 * package is present, a clear message and a non-zero exit when apt fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char output[16384];

static void write_script(const char *dir, const char *name, const char *body) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
}

static int run_bootstrap(const char *fake_dir) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "PATH='%s':\"$PATH\" '%s' 2>&1", fake_dir,
             test_source_path("tools/bootstrap.sh"));
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void remove_dir(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_silent_when_installed(void **state) {
    char dir[] = "/tmp/issim-bootstrap-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_script(dir, "dpkg-query", "printf 'install ok installed'");
    write_script(dir, "apt-get", "echo apt-get must not run; exit 1");
    assert_int_equal(run_bootstrap(dir), 0);
    assert_string_equal(output, "");
    remove_dir(dir);
}

static void test_clear_message_when_apt_fails(void **state) {
    char dir[] = "/tmp/issim-bootstrap-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_script(dir, "dpkg-query", "exit 1");
    write_script(dir, "id", "echo 0");
    write_script(dir, "apt-get", "echo 'E: Could not resolve the mirror' >&2; exit 100");
    int rc = run_bootstrap(dir);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(output, "bootstrap: installing"));
    assert_non_null(strstr(output, "libsundials-dev"));
    assert_non_null(strstr(output, "bootstrap: error: 'apt-get update' failed"));
    assert_non_null(strstr(output, "Could not resolve the mirror"));
    /* update works, install fails */
    write_script(dir, "apt-get",
                 "[ \"$1\" = update ] && exit 0; echo 'E: Unable to locate package x' >&2; "
                 "exit 100");
    rc = run_bootstrap(dir);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(output, "bootstrap: error: 'apt-get install' failed"));
    assert_non_null(strstr(output, "Unable to locate package"));
    remove_dir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silent_when_installed),
        cmocka_unit_test(test_clear_message_when_apt_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
