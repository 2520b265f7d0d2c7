/* The display module loaded on demand (src/app/display_module.c): the executable does not link
 * SDL2, OpenGL, GLEW or Dear ImGui; when the module is missing or broken, `issim run` names the
 * file and the reason, a plain run simulates headless with the same results as --headless, and
 * the options that need a window fail. The GUI itself is exercised by the test_gui and
 * test_display tests (which load the module). */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char output[65536];

static int issim_with_module(const char *module, const char *args) {
    setenv("ISSIM_DISPLAY_MODULE", module, 1);
    int rc = test_run_issim(args, output, sizeof output);
    unsetenv("ISSIM_DISPLAY_MODULE");
    return rc;
}

/* The output without the lines that differ between runs (wall time) or name the module. */
static void stable_lines(const char *text, char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line + 1) : strlen(line);
        bool varies = memmem(line, length, "wall", 4) || memmem(line, length, "module", 6);
        if (!varies && used + length < size) {
            memcpy(out + used, line, length);
            used += length;
            out[used] = '\0';
        }
        line += length;
    }
}

static void test_executable_links_no_gui_library(void **state) {
    const char *bin = getenv("ISSIM_BINARY");
    char cmd[4200], line[512];
    snprintf(cmd, sizeof cmd, "ldd '%s'", bin ? bin : "build/issim");
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int libraries = 0;
    while (fgets(line, sizeof line, p)) {
        libraries++;
        const char *gui[] = {"libSDL2", "libGL.", "libGLEW", "libimgui", "libX11", "libpulse"};
        for (size_t i = 0; i < sizeof gui / sizeof *gui; i++)
            if (strstr(line, gui[i]))
                fail_msg("issim links %s: %s", gui[i], line);
    }
    assert_int_equal(pclose(p), 0);
    assert_true(libraries > 5); /* ldd did list the libraries */
}

static void test_missing_module_runs_headless(void **state) {
    char headless[8192], fallback[8192];
    const char *run = "run scenes/point_drop.lua --until 1 --quiet";
    char args[256];
    snprintf(args, sizeof args, "%s --headless", run);
    assert_int_equal(test_run_issim(args, output, sizeof output), 0);
    stable_lines(output, headless, sizeof headless);
    assert_non_null(strstr(headless, "impacts")); /* the point lands within the second */

    assert_int_equal(issim_with_module("/nonexistent/libissim-display.so", run), 0);
    assert_non_null(strstr(output, "cannot load the display module "
                                   "/nonexistent/libissim-display.so"));
    assert_non_null(strstr(output, "No such file"));
    assert_non_null(strstr(output, "running scenes/point_drop.lua headless"));
    stable_lines(output, fallback, sizeof fallback);
    assert_string_equal(fallback, headless); /* the same simulation, number for number */
}

static void test_broken_module_named_with_reason(void **state) {
    /* A file that is no shared object: dlopen's reason, with the file's name. */
    assert_int_equal(
        issim_with_module("scenes/point_drop.lua", "run scenes/point_drop.lua --until 0.1 --quiet"),
        0);
    assert_non_null(strstr(output, "cannot load the display module scenes/point_drop.lua"));
    assert_non_null(strstr(output, "ELF"));
    /* Options that only mean something in a window fail instead of running headless. */
    const char *window_only[] = {"--screenshot /tmp/never.png", "--script scripts/none.txt",
                                 "--bench 1"};
    for (size_t i = 0; i < sizeof window_only / sizeof *window_only; i++) {
        char args[256];
        snprintf(args, sizeof args, "run scenes/point_drop.lua %s", window_only[i]);
        assert_int_equal(issim_with_module("/nonexistent/libissim-display.so", args), 1);
        char option[32];
        sscanf(window_only[i], "%31s", option);
        char expected[64];
        snprintf(expected, sizeof expected, "%s needs the GUI", option);
        assert_non_null(strstr(output, expected));
        assert_null(strstr(output, "simulated"));
    }
}

int main(void) {
    /* Should a run load a module after all, SDL's dummy driver has no OpenGL: it fails at once
     * instead of opening a window that would wait for a user. */
    setenv("SDL_VIDEODRIVER", "dummy", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_executable_links_no_gui_library),
        cmocka_unit_test(test_missing_module_runs_headless),
        cmocka_unit_test(test_broken_module_named_with_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
