/* The script commands come from one table (src/display/app_script.c, COMMANDS): `help` prints
 * every row with its help, docs/user-guide.md lists the same commands, an unknown command names
 * the table's nearest rows, a command without its arguments fails, and the panels' requests
 * run through the same rows (`trace` shows a click on a panel control as the table's command,
 * asked by the GUI, with the effect the script's command has). */
#include "test_display_util.h"

#define MAX_COMMANDS 128

typedef struct CommandList {
    char names[MAX_COMMANDS][32];
    int count;
} CommandList;

static bool listed(const CommandList *l, const char *name) {
    for (int i = 0; i < l->count; i++)
        if (strcmp(l->names[i], name) == 0)
            return true;
    return false;
}

static void add(CommandList *l, const char *name) {
    if (listed(l, name))
        return;
    assert_true(l->count < MAX_COMMANDS);
    snprintf(l->names[l->count++], sizeof l->names[0], "%s", name);
}

/* The commands `help` printed: "command NAME [ARGS] | HELP" lines, each with its help. */
static CommandList help_commands(const char *out) {
    CommandList l = {.count = 0};
    for (int k = 0;; k++) {
        const char *line = find_line(out, "command ", k);
        if (!line)
            break;
        char name[32];
        assert_int_equal(sscanf(line, "command %31s", name), 1);
        const char *bar = strstr(line, " | ");
        const char *end = strchr(line, '\n');
        if (!bar || (end && bar > end) || bar[3] == '\n' || bar[3] == '\0')
            fail_msg("'%s' has no help", name);
        if (listed(&l, name))
            fail_msg("'%s' is in the table twice", name);
        add(&l, name);
    }
    return l;
}

/* The first words of the backticked entries in the first column of the user guide's script
 * table. */
static CommandList guide_commands(void) {
    char *text = NULL;
    size_t size = 0;
    IssimError err;
    assert_int_equal(issim_read_file(test_source_path("docs/user-guide.md"), 1 << 22, "guide",
                                     &text, &size, &err),
                     ISSIM_OK);
    const char *section = strstr(text, "## Scripts (`--script FILE`)");
    assert_non_null(section);
    const char *end = strstr(section + 1, "\n## ");
    CommandList l = {.count = 0};
    for (const char *row = strstr(section, "\n| `"); row && (!end || row < end);
         row = strstr(row + 1, "\n| `")) {
        const char *cell_end = strstr(row + 3, " | ");
        assert_non_null(cell_end);
        for (const char *tick = strchr(row + 2, '`'); tick && tick < cell_end;) {
            const char *close = strchr(tick + 1, '`');
            assert_non_null(close);
            char name[32];
            if (sscanf(tick + 1, "%31[a-z_0-9]", name) == 1)
                add(&l, name);
            tick = strchr(close + 1, '`');
        }
    }
    free(text);
    return l;
}

static void test_help_and_guide_list_the_table(void **state) {
    char out[GUI_OUTPUT_MAX];
    assert_int_equal(run_issim_script(test_source_path("scenes/point_drop.lua"), "--no-gui",
                                      "help\nquit\n", out, sizeof out),
                     0);
    CommandList table = help_commands(out);
    print_message("%d script commands\n", table.count);
    assert_true(table.count >= 60);
    CommandList guide = guide_commands();
    for (int i = 0; i < table.count; i++)
        if (!listed(&guide, table.names[i]))
            fail_msg("docs/user-guide.md does not describe the command '%s'", table.names[i]);
    for (int i = 0; i < guide.count; i++)
        if (!listed(&table, guide.names[i]))
            fail_msg("docs/user-guide.md describes '%s', which is no command", guide.names[i]);
}

static void test_unknown_and_incomplete_commands_fail(void **state) {
    char out[GUI_OUTPUT_MAX];
    /* stderr with stdout: the message names the nearest rows, then the line that failed */
    assert_int_equal(run_issim_script(test_source_path("scenes/point_drop.lua"), "--no-gui 2>&1",
                                      "pasue\nquit\n", out, sizeof out),
                     1);
    assert_non_null(strstr(out, "script: unknown command 'pasue' (did you mean pause?)"));
    assert_non_null(strstr(out, ":1: script command failed: pasue"));
    assert_int_equal(run_issim_script(test_source_path("scenes/point_drop.lua"), "--no-gui 2>&1",
                                      "frobnicate\nquit\n", out, sizeof out),
                     1);
    assert_non_null(strstr(out, "script: unknown command 'frobnicate' (help lists the commands)"));
    /* a known command without the arguments its row requires */
    assert_int_equal(run_issim_script(test_source_path("scenes/point_drop.lua"), "--no-gui 2>&1",
                                      "print_state\nopen\nquit\n", out, sizeof out),
                     1);
    assert_non_null(strstr(out, "state t="));
    assert_non_null(strstr(out, ":2: script command failed: open"));
}

/* The slow-motion box and "Pause at next contact" clicked in the panel run the table's
 * slow_motion and pause_at_contact (their places read in a first run, as test_gui_playback
 * does), and the S key the table's step, traced as asked by the GUI; the script's own commands
 * are traced as the script's. */
static void test_panel_requests_run_the_table(void **state) {
    (void)state;
    static char out[GUI_OUTPUT_MAX];
    const char *scene = test_source_path("scenes/point_drop.lua");
    /* point_drop opens in slow motion: off, so the click turns it on at the panel's rate */
    const char *unticked = "--set universe.slow_motion=0";
    assert_int_equal(run_issim_script(scene, unticked, "pause\nframes 5\nprint_playback\nquit\n",
                                      out, sizeof out),
                     0);
    double p[4], b[4];
    const char *rects = require_line(out, "playback_rects ", 0);
    assert_int_equal(sscanf(rects, "playback_rects pause %lf %lf %lf %lf slow %lf %lf %lf %lf",
                            &p[0], &p[1], &p[2], &p[3], &b[0], &b[1], &b[2], &b[3]),
                     8);
    assert_true(p[2] > 0 && b[2] > 0);
    int px = (int)(p[0] + p[2] / 2), py = (int)(p[1] + p[3] / 2);
    int bx = (int)(b[0] + b[3] / 2), by = (int)(b[1] + b[3] / 2); /* the box, not its label */
    char script[1024];
    snprintf(script, sizeof script,
             "trace\npause\nframes 5\nkey s\nframes 2\n"
             "mouse_move %d %d\nframes 2\nclick %d %d\nframes 2\n"
             "mouse_move %d %d\nframes 2\nclick %d %d\nframes 2\nprint_playback\n"
             "trace off\nprint_playback\nquit\n",
             bx, by, bx, by, px, py, px, py);
    assert_int_equal(run_issim_script(scene, unticked, script, out, sizeof out), 0);
    assert_non_null(strstr(out, "\nran pause (script)\n"));
    /* the view's shortcut is the table's command too */
    assert_non_null(strstr(out, "\nran key s (script)\nran step (gui)\n"));
    const char *slow = require_line(out, "ran slow_motion ", 0);
    double rate = 0.0, window = 0.0;
    char who[16] = "";
    assert_int_equal(sscanf(slow, "ran slow_motion %lf %lf (%15[a-z])", &rate, &window, who), 3);
    assert_string_equal(who, "gui");
    assert_near(rate, 1e-3, 1e-9); /* the panel's default rate (a float) */
    assert_non_null(strstr(out, "\nran pause_at_contact (gui)\n"));
    assert_non_null(strstr(out, "\nran print_playback (script)\n"));
    assert_non_null(strstr(out, "\nran trace off (script)\n"));
    assert_null(find_line(out, "ran quit", 0)); /* traced no more */
    /* what the commands did: the rate set and the pause armed */
    const char *armed = require_line(out, "playback ", 0);
    double shown_rate = -1.0;
    int is_armed = -1;
    const char *at = strstr(armed, "slow_rate=");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "slow_rate=%lf", &shown_rate), 1);
    at = strstr(armed, "armed=");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "armed=%d", &is_armed), 1);
    print_message("clicked: ran slow_motion %g %g (gui), pause_at_contact (gui); armed=%d\n", rate,
                  window, is_armed);
    assert_near(shown_rate, rate, 1e-9); /* printed with 6 digits */
    assert_int_equal(is_armed, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_guide_list_the_table),
        cmocka_unit_test(test_unknown_and_incomplete_commands_fail),
        cmocka_unit_test(test_panel_requests_run_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
