/* The launcher finds scenes wherever issim runs (issue 31 item 5). Before, it listed ./scenes
 * only, so it was empty when issim started in another folder or from an installation. Here an
 * installation is made by hand in a temporary folder (bin/issim and its display module beside
 * it, share/issim/scenes/), and issim runs from an empty folder on a scene of a third folder,
 * with a fourth in the user's list: the launcher lists the opened scene's neighbours, the user's
 * scenes, the installed ones and the source tree's, each with its own description. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_display_util.h"

static char root[256];

static const char *under_root(const char *relative) {
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", root, relative);
    return p;
}

static void make_dir(const char *relative) {
    assert_int_equal(mkdir(under_root(relative), 0755), 0);
}

static void run_shell(const char *command) {
    print_message("%s\n", command);
    assert_int_equal(system(command), 0);
}

/* point_drop.lua with another description: a scene that loads, telling where it was put. */
static void write_scene(const char *relative, const char *description) {
    FILE *in = fopen(test_source_path("scenes/point_drop.lua"), "r");
    FILE *out = fopen(under_root(relative), "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[1024];
    while (fgets(line, sizeof line, in)) {
        if (strncmp(line, "  description = ", 16) == 0)
            fprintf(out, "  description = \"%s\",\n", description);
        else
            fputs(line, out);
    }
    fclose(in);
    fclose(out);
}

/* The description the launcher printed for the scene at path, or NULL when it is not listed. */
static const char *listed(const char *out, const char *path) {
    char prefix[600];
    snprintf(prefix, sizeof prefix, "scene %s | ", path);
    const char *line = find_line(out, prefix, 0);
    return line ? line + strlen(prefix) : NULL;
}

static int position(const char *out, const char *path) {
    const char *line = listed(out, path);
    assert_non_null(line);
    return (int)(line - out);
}

static void description_is(const char *out, const char *path, const char *description) {
    const char *d = listed(out, path);
    if (!d)
        fail_msg("%s is not in the launcher's list", path);
    assert_int_equal(strncmp(d, description, strlen(description)), 0);
    assert_int_equal(d[strlen(description)], '\n');
}

static int lua_files_in(const char *folder) {
    DIR *dir = opendir(folder);
    assert_non_null(dir);
    int count = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        size_t n = strlen(e->d_name);
        count += n > 4 && strcmp(e->d_name + n - 4, ".lua") == 0;
    }
    closedir(dir);
    return count;
}

static void test_launcher_lists_scenes_outside_the_working_directory(void **state) {
    (void)state;
    snprintf(root, sizeof root, "%s", test_temp_path(".launcher"));
    assert_int_equal(mkdir(root, 0755), 0);
    const char *binary = getenv("ISSIM_BINARY");
    assert_non_null(binary);
    /* An installation: the executable is copied (not linked), as /proc/self/exe names it. */
    make_dir("prefix");
    make_dir("prefix/bin");
    make_dir("prefix/share");
    make_dir("prefix/share/issim");
    make_dir("prefix/share/issim/scenes");
    char command[2048], module[512];
    snprintf(module, sizeof module, "%.*s/libissim-display.so",
             (int)(strrchr(binary, '/') - binary), binary);
    snprintf(command, sizeof command, "cp '%s' '%s' '%s'", binary, module,
             under_root("prefix/bin/"));
    run_shell(command);
    write_scene("prefix/share/issim/scenes/installed_drop.lua", "installed with the program");
    make_dir("mine");
    write_scene("mine/opened_drop.lua", "the scene opened");
    write_scene("mine/neighbour_drop.lua", "next to the scene opened");
    make_dir("listed");
    write_scene("listed/listed_drop.lua", "in a folder of the user's list");
    make_dir("config");
    make_dir("config/issim");
    FILE *list = fopen(under_root("config/issim/scenes"), "w");
    assert_non_null(list);
    fprintf(list, "# the user's scene folders\n%s\n", under_root("listed"));
    fclose(list);
    make_dir("empty");

    char here[1024];
    assert_non_null(getcwd(here, sizeof here));
    assert_int_equal(chdir(under_root("empty")), 0);
    setenv("XDG_CONFIG_HOME", under_root("config"), 1);
    char installed_binary[512];
    snprintf(installed_binary, sizeof installed_binary, "%s", under_root("prefix/bin/issim"));
    setenv("ISSIM_BINARY", installed_binary, 1);
    static char out[GUI_OUTPUT_MAX];
    int status = run_issim_script(under_root("mine/opened_drop.lua"), "",
                                  "frames 2\nprint_scenes\n", out, sizeof out);
    setenv("ISSIM_BINARY", binary, 1);
    unsetenv("XDG_CONFIG_HOME");
    assert_int_equal(chdir(here), 0);
    assert_int_equal(status, 0);

    char real_root[1024], path[1200];
    assert_non_null(realpath(root, real_root));
    description_is(out, under_root("mine/opened_drop.lua"), "the scene opened");
    description_is(out, under_root("mine/neighbour_drop.lua"), "next to the scene opened");
    description_is(out, under_root("listed/listed_drop.lua"), "in a folder of the user's list");
    /* The data directory is canonical (realpath): /tmp may be a link. */
    snprintf(path, sizeof path, "%s/prefix/share/issim/scenes/installed_drop.lua", real_root);
    description_is(out, path, "installed with the program");
    /* The source tree the program was built from: every scene of scenes/, described. */
    char source[1024];
    assert_non_null(realpath(test_source_path("scenes"), source));
    snprintf(path, sizeof path, "%s/pile.lua", source);
    description_is(out, path, "240 mixed shapes poured into a 0.4 m box, settling");
    snprintf(path, sizeof path, "%s/point_drop.lua", source);
    description_is(out, path,
                   "Vertical bar (one contact vertex) dropped on a plane, spring/damper r = 0.8");
    /* The order of the sources: the opened folder, the user's list, the installation, the
     * source tree. */
    snprintf(path, sizeof path, "%s/prefix/share/issim/scenes/installed_drop.lua", real_root);
    int installed = position(out, path);
    snprintf(path, sizeof path, "%s/pile.lua", source);
    assert_true(position(out, under_root("mine/opened_drop.lua")) <
                position(out, under_root("listed/listed_drop.lua")));
    assert_true(position(out, under_root("listed/listed_drop.lua")) < installed);
    assert_true(installed < position(out, path));
    int count = 0;
    for (const char *line = out; (line = find_line(line, "scene ", 0)); line++)
        count++;
    print_message("%d scenes listed\n", count);
    assert_int_equal(count, 4 + lua_files_in(source));

    snprintf(command, sizeof command, "rm -r '%s'", root);
    run_shell(command);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launcher_lists_scenes_outside_the_working_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
