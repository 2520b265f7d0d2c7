/* The panels' requests of one frame (GuiRequests, gui.h) carried out as commands of the script's
 * table (app_script.c): the Pause button and a script's `pause` are one command with one
 * handler, so an action cannot behave one way from the panel and another from a script. Each
 * request becomes the words a script would write (numbers with %.17g, so they read back to the
 * same double); a request whose command cannot run now (no simulation to pause) is dropped, as
 * the panel draws it disabled. Two requests are the panels' own business, not user actions:
 * the text typed into a property that is no value of it (app_edit_invalid) and the launcher's
 * thumbnail of a hovered scene. Display thread. */
#include <stdio.h>

#include "app_internal.h"

#define REQUEST_WORDS 4
#define REQUEST_WORD_MAX 1024 /* the longest argument: GuiRequests.record_vars */

/* One command's words, copied (the handlers take the script's mutable words). */
typedef struct RequestCommand {
    char text[REQUEST_WORDS][REQUEST_WORD_MAX];
    char *words[REQUEST_WORDS];
    int n;
} RequestCommand;

static void add_word(RequestCommand *c, const char *word) {
    snprintf(c->text[c->n], sizeof c->text[0], "%s", word);
    c->words[c->n] = c->text[c->n];
    c->n++;
}

/* Runs the command `name` with up to three arguments (NULL: none from there on). */
static void command(App *app, const char *name, const char *a, const char *b, const char *c) {
    static RequestCommand cmd; /* 4 KiB, display thread only */
    cmd.n = 0;
    add_word(&cmd, name);
    const char *args[] = {a, b, c};
    for (int i = 0; i < 3 && args[i]; i++)
        add_word(&cmd, args[i]);
    app_command(app, cmd.words, cmd.n);
}

static const char *number(double x, char *buf, size_t size) {
    snprintf(buf, size, "%.17g", x);
    return buf;
}

/* Scenes, edits, the clock. */
static void session_requests(App *app, const GuiRequests *r) {
    char x[32];
    if (r->open)
        command(app, "open", r->open_path, NULL, NULL);
    if (r->reload)
        command(app, "reload", NULL, NULL, NULL);
    if (r->refresh_scenes)
        command(app, "refresh_scenes", NULL, NULL, NULL);
    if (r->edit)
        command(app, "set", r->edit_path, r->edit_value, NULL);
    if (r->edit_invalid)
        app_edit_invalid(app, r->edit_reason);
    if (r->seek)
        command(app, "seek", number(r->seek_time, x, sizeof x), NULL, NULL);
    if (r->pause)
        command(app, "pause", NULL, NULL, NULL);
    if (r->run)
        command(app, "run", NULL, NULL, NULL);
    if (r->set_speed)
        command(app, "speed", number(r->speed, x, sizeof x), NULL, NULL);
    if (r->step)
        command(app, "step", NULL, NULL, NULL);
    if (r->reset)
        command(app, "reset", NULL, NULL, NULL);
}

/* Files written: recordings, videos, the scene, screenshots. */
static void output_requests(App *app, const GuiRequests *r) {
    char slow[32];
    if (r->record_start)
        command(app, "record_start", r->record_path, r->record_vars, NULL);
    if (r->record_stop)
        command(app, "record_stop", NULL, NULL, NULL);
    if (r->video_start)
        command(app, "video_start", r->video_path, r->video_sim_time ? "sim" : "wall",
                number(r->video_slow, slow, sizeof slow));
    if (r->video_stop)
        command(app, "video_stop", NULL, NULL, NULL);
    if (r->save)
        command(app, "save", r->save_path, r->save_description, NULL);
    if (r->screenshot)
        command(app, "screenshot", r->screenshot_path, NULL, NULL);
}

/* The selection and the camera. */
static void view_requests(App *app, const GuiRequests *r) {
    if (r->select) {
        char path[256] = ""; /* "": no thing, the selection cleared */
        const ThingDb *db = app->session.db;
        if (db && thingdb_valid(db, r->select_thing))
            thing_path(db, r->select_thing, path, sizeof path);
        command(app, "select", path, NULL, NULL);
    }
    if (r->camera_preset >= 0 && r->camera_preset < CAMERA_PRESET_COUNT)
        command(app, "preset", camera_preset_name((CameraPreset)r->camera_preset), NULL, NULL);
    if (r->fit)
        command(app, "fit", NULL, NULL, NULL);
    if (r->follow_toggle)
        command(app, "follow_selected", NULL, NULL, NULL);
}

/* The haptic device panel: the emergency stop first, whatever else was asked in the frame. */
static void device_requests(App *app, const GuiRequests *r) {
    if (r->device_estop)
        command(app, "estop", NULL, NULL, NULL);
    else if (r->device_enable)
        command(app, "device_enable", NULL, NULL, NULL);
    if (r->device_disable)
        command(app, "device_disable", NULL, NULL, NULL);
    if (r->device_reconnect)
        command(app, "device_reconnect", NULL, NULL, NULL);
}

/* Playback: the branch question, slow motion, pause at the next contact, the load cycle. */
static void playback_requests(App *app, const GuiRequests *r) {
    char rate[32], window[32];
    if (r->set_branch_policy > 0 && r->set_branch_policy <= APP_BRANCH_POLICY_COUNT)
        command(app, "branch_policy", app_branch_policy_names[r->set_branch_policy - 1], NULL,
                NULL);
    if (r->set_slow_motion)
        command(app, "slow_motion", number(r->slow_rate, rate, sizeof rate),
                number(r->slow_window, window, sizeof window), NULL);
    if (r->pause_at_contact_toggle && app->session.sim)
        command(app, "pause_at_contact", sim_pause_at_contact(app->session.sim) ? "off" : NULL,
                NULL, NULL);
    if (r->branch_from_scrub)
        command(app, "branch_answer", app_branch_policy_names[APP_BRANCH_SCRUB], NULL, NULL);
    if (r->branch_from_original)
        command(app, "branch_answer", app_branch_policy_names[APP_BRANCH_ORIGINAL], NULL, NULL);
    if (r->load_cycle_toggle)
        command(app, "load_cycle_toggle", NULL, NULL, NULL);
}

void app_carry_out_requests(App *app, const GuiRequests *r) {
    session_requests(app, r);
    output_requests(app, r);
    view_requests(app, r);
    if (r->quit)
        command(app, "quit", NULL, NULL, NULL);
    device_requests(app, r);
    playback_requests(app, r);
    if (r->thumbnail_for > 0)
        app_thumbnail_request(app, r->thumbnail_for - 1);
}
