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

#include "issim/gui.h"
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
    FILE *broken = fopen(under_root("listed/broken_drop.lua"), "w");
    assert_non_null(broken);
    fputs("return {\n  name = 'broken',\n", broken);
    fclose(broken);
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
    const char *unloadable = listed(out, under_root("listed/broken_drop.lua"));
    assert_non_null(unloadable);
    assert_int_equal(strncmp(unloadable, "(does not load: ", 16), 0);
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
    assert_int_equal(count, 5 + lua_files_in(source));
    /* Every scene that loads has its thumbnail, with the scene in it (not only background);
     * the one that does not load has none. */
    int thumbnails = 0;
    for (const char *line = out; (line = find_line(line, "thumbnail ", 0)); line++) {
        char scene[1024];
        int drawn = -2;
        assert_int_equal(sscanf(line, "thumbnail %1023s drawn=%d", scene, &drawn), 2);
        if (strstr(scene, "broken_drop.lua")) {
            assert_int_equal(drawn, -1);
            continue;
        }
        /* 0.5 % of the picture: two 8 cm spheres with no floor, framed 16 m away so that they
         * stay in view as they part (spheres_flat_map), cover about 1 % */
        if (drawn < 0.005 * GUI_THUMB_WIDTH * GUI_THUMB_HEIGHT)
            fail_msg("%s: thumbnail of %d pixels besides the background", scene, drawn);
        thumbnails++;
    }
    assert_int_equal(thumbnails, count - 1);

    snprintf(command, sizeof command, "rm -r '%s'", root);
    run_shell(command);
}

/* Light grey of the thumbnails' floor: r, g and b alike, between 110 and 220. */
static int floor_pixels(const char *png, int x0, int y0, int x1, int y1) {
    Image im = load_png(png);
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            const unsigned char *p = pixel(&im, x, y);
            n += p[0] > 110 && p[0] < 220 && abs(p[0] - p[1]) < 8 && abs(p[1] - p[2]) < 8;
        }
    stbi_image_free(im.rgb);
    return n;
}

/* Hovering a scene in the launcher shows its description and its thumbnail (the scene at its
 * start from its camera): a 192 x 120 picture of a floor appears over the left panel. */
static void test_hover_shows_the_thumbnail(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    char script[1024];
    const char *away = test_temp_path(".png"), *over = test_temp_path(".png");
    snprintf(script, sizeof script,
             "print_scenes\nmouse_move 640 400\nframes 3\nscreenshot %s\nframes 2\n"
             "mouse_move 60 184\nframes 30\nscreenshot %s\nframes 2\n",
             away, over);
    assert_int_equal(
        run_issim_script(test_source_path("scenes/point_drop.lua"), "", script, out, sizeof out),
        0);
    int before = floor_pixels(away, 40, 150, 420, 480),
        after = floor_pixels(over, 40, 150, 420, 480);
    print_message("floor pixels over the left panel: %d without, %d with the tooltip\n", before,
                  after);
    assert_true(after - before > 0.25 * GUI_THUMB_WIDTH * GUI_THUMB_HEIGHT);
    remove(away);
    remove(over);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launcher_lists_scenes_outside_the_working_directory),
        cmocka_unit_test(test_hover_shows_the_thumbnail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
