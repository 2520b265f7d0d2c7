/* The installed program (issue 32): `cmake --install` of this build into a temporary prefix,
 * then `issim run point_drop` from a directory outside the source tree finds the installed
 * scene and its assets; the prefix moved elsewhere still works (the data directory and the
 * display module are found from the executable, not from the configured prefix); a scene that
 * is nowhere names the directories looked in; the GUI's launcher lists the installed scenes,
 * a local scenes/ file of the same name in their place. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "issim/io.h"
#include "testutil.h"

#ifndef ISSIM_CMAKE
#define ISSIM_CMAKE "cmake"
#endif

/* Short paths under /tmp: the buffers below hold any command made of them. */
static char root[256];   /* the temporary directory holding everything below */
static char prefix[300]; /* the installation, where it is now */
static char work[300];   /* an empty working directory outside the source tree */

/* Runs a shell command, its stdout and stderr into out; the exit status, -1 on a signal. */
static int run(const char *cmd, char *out, size_t size) {
    char full[8192];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        fail_msg("cannot run %s", cmd);
    size_t used = 0, n;
    while (used + 1 < size && (n = fread(out + used, 1, size - 1 - used, p)) > 0)
        used += n;
    out[used] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The installed issim with args, from the working directory. */
static int issim(const char *args, char *out, size_t size) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/bin/issim' %s", work, prefix, args);
    return run(cmd, out, size);
}

static int setup(void **state) {
    (void)state;
    const char *binary = getenv("ISSIM_BINARY");
    if (!binary)
        fail_msg("ISSIM_BINARY is not set (run through ctest)");
    char build[PATH_MAX];
    issim_strlcpy(build, binary, sizeof build);
    char *slash = strrchr(build, '/');
    if (!slash)
        fail_msg("ISSIM_BINARY '%s' has no directory", binary);
    *slash = '\0';
    char tmpl[] = "/tmp/issim-install-XXXXXX", real[PATH_MAX];
    if (!mkdtemp(tmpl) || !realpath(tmpl, real) || strlen(real) >= sizeof root)
        fail_msg("cannot make a temporary directory");
    issim_strlcpy(root, real, sizeof root);
    snprintf(prefix, sizeof prefix, "%s/prefix", root);
    snprintf(work, sizeof work, "%s/work", root);
    if (mkdir(work, 0755) != 0)
        fail_msg("cannot make %s", work);
    char cmd[2 * PATH_MAX], out[16384];
    snprintf(cmd, sizeof cmd, "'%s' --install '%s' --prefix '%s'", ISSIM_CMAKE, build, prefix);
    if (run(cmd, out, sizeof out) != 0)
        fail_msg("%s failed:\n%s", cmd, out);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[300], out[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    run(cmd, out, sizeof out);
    return 0;
}

/* The summary names the scene it ran: the installed one, in the prefix as it is now (not the
 * source tree, the build's fallback). */
static void assert_ran_installed(int rc, const char *out) {
    if (rc != 0)
        fail_msg("exit %d:\n%s", rc, out);
    char scene_line[400];
    snprintf(scene_line, sizeof scene_line, "scene      %s/share/issim/scenes/point_drop.lua\n",
             prefix);
    if (!strstr(out, scene_line))
        fail_msg("no line '%s' in:\n%s", scene_line, out);
    assert_non_null(strstr(out, "simulated  0.2 s"));
    assert_non_null(strstr(out, "impacts "));
}

static void test_installed_scene_runs_from_anywhere(void **state) {
    (void)state;
    char out[16384];
    assert_ran_installed(issim("run point_drop --headless --until 0.2", out, sizeof out), out);
    assert_ran_installed(issim("run point_drop.lua --headless --until 0.2", out, sizeof out), out);
    /* The scenes' relative asset paths resolve in the installation: a triangle mesh, a
     * contact map, Loop surfaces (a missing one fails the build of the engine). */
    const char *with_assets[] = {"bolt_and_hole", "scenes/bar_drop_map.lua", "marble_in_bowl"};
    for (int i = 0; i < 3; i++) {
        char args[256];
        snprintf(args, sizeof args, "validate %s", with_assets[i]);
        int rc = issim(args, out, sizeof out);
        if (rc != 0 || !strstr(out, ": ok ("))
            fail_msg("issim %s: exit %d:\n%s", args, rc, out);
    }
    /* What the package ships beside the program. */
    const char *files[] = {"share/man/man1/issim.1",
                           "share/man/man1/issim-mapgen.1",
                           "share/man/man1/issim-pantosim.1",
                           "share/applications/org.issim.issim.desktop",
                           "share/metainfo/org.issim.issim.metainfo.xml",
                           "share/icons/hicolor/scalable/apps/issim.svg",
                           "share/issim/docs/user-guide.md",
                           "share/issim/assets/maps/steel_bar.map",
                           "bin/issim-pantosim",
                           "lib/issim/libissim-display.so"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/%s", prefix, files[i]);
        if (access(path, R_OK) != 0)
            fail_msg("not installed: %s", path);
    }
}

static void test_missing_scene_says_where_it_looked(void **state) {
    (void)state;
    char out[16384], data[320];
    assert_int_equal(issim("run nosuch --headless", out, sizeof out), 1);
    assert_non_null(strstr(out, "cannot find scene 'nosuch'"));
    assert_non_null(strstr(out, work));
    snprintf(data, sizeof data, "%s/share/issim", prefix);
    assert_non_null(strstr(out, data));
}

/* The launcher (print_scenes: its list) shows the installed scenes; ./scenes/point_drop.lua
 * takes the place of the installed one, as `issim run point_drop` would choose it. */
static void assert_launcher_lists(const char *out) {
    char installed[400];
    snprintf(installed, sizeof installed, "scene %s/share/issim/scenes/pile.lua |", prefix);
    if (!strstr(out, installed))
        fail_msg("no '%s' in:\n%s", installed, out);
    snprintf(installed, sizeof installed, "scene %s/share/issim/scenes/point_drop.lua |", prefix);
    if (strstr(out, installed))
        fail_msg("the installed point_drop listed beside the local one:\n%s", out);
    assert_non_null(strstr(out, "scene scenes/point_drop.lua |"));
}

static void test_moved_prefix_still_works(void **state) {
    (void)state;
    char moved[300], out[65536];
    snprintf(moved, sizeof moved, "%s/moved", root);
    if (rename(prefix, moved) != 0)
        fail_msg("cannot rename %s", prefix);
    issim_strlcpy(prefix, moved, sizeof prefix);
    assert_ran_installed(issim("run point_drop --headless --until 0.2", out, sizeof out), out);

    /* The window: the display module from the moved lib/issim, the launcher's list. */
    char local[320], cmd[2048];
    snprintf(local, sizeof local, "%s/scenes", work);
    if (mkdir(local, 0755) != 0)
        fail_msg("cannot make %s", local);
    snprintf(cmd, sizeof cmd, "cp '%s/share/issim/scenes/point_drop.lua' '%s/'", prefix, local);
    assert_int_equal(run(cmd, out, sizeof out), 0);
    char script[300], shot[300];
    snprintf(script, sizeof script, "%s/launcher.script", root);
    snprintf(shot, sizeof shot, "%s/shot.png", root);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f, "print_scenes\nframes 2\nscreenshot %s\n", shot);
    fclose(f);
    /* Leak checking off in the child, as the GUI tests do: Mesa's llvmpipe leaves allocations
     * LeakSanitizer cannot attribute. */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && SDL_VIDEODRIVER=offscreen ASAN_OPTIONS=\"${ASAN_OPTIONS}:detect_leaks=0\" "
             "'%s/bin/issim' run box_on_plane --script '%s'",
             work, prefix, script);
    int rc = run(cmd, out, sizeof out);
    if (rc != 0)
        fail_msg("%s: exit %d:\n%s", cmd, rc, out);
    assert_launcher_lists(out);
    struct stat st;
    assert_int_equal(stat(shot, &st), 0);
    assert_true(st.st_size > 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_installed_scene_runs_from_anywhere),
        cmocka_unit_test(test_missing_scene_says_where_it_looked),
        cmocka_unit_test(test_moved_prefix_still_works),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
