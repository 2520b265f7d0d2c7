/* The panels' requests of one frame (GuiRequests, gui.h) carried out as commands of the script's
 * table (app_script.c), as the view's keyboard shortcuts are (app_input.c): the Pause button,
 * the space key and a script's `pause` are one command with one handler, so an action cannot behave
 * one way from the panel and another from a script. Each request becomes the words a script would
 * write (numbers with %.17g, so they read back to the same double); a request whose command cannot
 * run now (no simulation to pause) is dropped, as the panel draws it disabled. Two requests are the
 * panels' own business, not user actions: the text typed into a property that is no value of it
 * (app_edit_invalid) and the launcher's thumbnail of a hovered scene. Display thread. */
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

bool app_ask(App *app, const char *name, const char *a, const char *b, const char *c) {
    static RequestCommand cmd; /* 4 KiB, display thread only */
    cmd.n = 0;
    add_word(&cmd, name);
    const char *args[] = {a, b, c};
    for (int i = 0; i < 3 && args[i]; i++)
        add_word(&cmd, args[i]);
    return app_command(app, cmd.words, cmd.n);
}

void app_ask_select(App *app, ThingId thing) {
    char path[256] = ""; /* "": no thing, the selection cleared */
    const ThingDb *db = app->session.db;
    if (db && thingdb_valid(db, thing))
        thing_path(db, thing, path, sizeof path);
    app_ask(app, "select", path, NULL, NULL);
}

static const char *number(double x, char *buf, size_t size) {
    snprintf(buf, size, "%.17g", x);
    return buf;
}

/* Scenes, edits, the clock. */
static void session_requests(App *app, const GuiRequests *r) {
    char x[32];
    if (r->file.open)
        app_ask(app, "open", r->file.open_path, NULL, NULL);
    if (r->file.reload)
        app_ask(app, "reload", NULL, NULL, NULL);
    if (r->file.refresh_scenes)
        app_ask(app, "refresh_scenes", NULL, NULL, NULL);
    if (r->editing.edit)
        app_ask(app, "set", r->editing.edit_path, r->editing.edit_value, NULL);
    if (r->editing.edit_invalid)
        app_edit_invalid(app, r->editing.edit_reason);
    if (r->time.seek)
        app_ask(app, "seek", number(r->time.seek_time, x, sizeof x), NULL, NULL);
    if (r->time.pause)
        app_ask(app, "pause", NULL, NULL, NULL);
    if (r->time.run)
        app_ask(app, "run", NULL, NULL, NULL);
    if (r->time.set_speed)
        app_ask(app, "speed", number(r->time.speed, x, sizeof x), NULL, NULL);
    if (r->time.step)
        app_ask(app, "step", NULL, NULL, NULL);
    if (r->time.reset)
        app_ask(app, "reset", NULL, NULL, NULL);
}

/* Files written: recordings, videos, the scene, screenshots. */
static void output_requests(App *app, const GuiRequests *r) {
    char slow[32];
    if (r->capture.record_start)
        app_ask(app, "record_start", r->capture.record_path, r->capture.record_vars, NULL);
    if (r->capture.record_stop)
        app_ask(app, "record_stop", NULL, NULL, NULL);
    if (r->capture.video_start)
        app_ask(app, "video_start", r->capture.video_path,
                r->capture.video_sim_time ? "sim" : "wall",
                number(r->capture.video_slow, slow, sizeof slow));
    if (r->capture.video_stop)
        app_ask(app, "video_stop", NULL, NULL, NULL);
    if (r->file.save)
        app_ask(app, "save", r->file.save_path, r->file.save_description, NULL);
    if (r->capture.screenshot)
        app_ask(app, "screenshot", r->capture.screenshot_path, NULL, NULL);
}

/* The selection and the camera. */
static void view_requests(App *app, const GuiRequests *r) {
    if (r->select)
        app_ask_select(app, r->select_thing);
    if (r->camera_preset >= 0 && r->camera_preset < CAMERA_PRESET_COUNT)
        app_ask(app, "preset", camera_preset_name((CameraPreset)r->camera_preset), NULL, NULL);
    if (r->fit)
        app_ask(app, "fit", NULL, NULL, NULL);
    if (r->follow_toggle)
        app_ask(app, "follow_selected", NULL, NULL, NULL);
}

/* The haptic device panel: the emergency stop first, whatever else was asked in the frame. */
static void device_requests(App *app, const GuiRequests *r) {
    if (r->device.device_estop)
        app_ask(app, "estop", NULL, NULL, NULL);
    else if (r->device.device_enable)
        app_ask(app, "device_enable", NULL, NULL, NULL);
    if (r->device.device_disable)
        app_ask(app, "device_disable", NULL, NULL, NULL);
    if (r->device.device_reconnect)
        app_ask(app, "device_reconnect", NULL, NULL, NULL);
}

/* Playback: the branch question, slow motion, pause at the next contact, the load cycle. */
static void playback_requests(App *app, const GuiRequests *r) {
    char rate[32], window[32];
    if (r->time.set_branch_policy > 0 && r->time.set_branch_policy <= APP_BRANCH_POLICY_COUNT)
        app_ask(app, "branch_policy", app_branch_policy_names[r->time.set_branch_policy - 1], NULL,
                NULL);
    if (r->time.set_slow_motion)
        app_ask(app, "slow_motion", number(r->time.slow_rate, rate, sizeof rate),
                number(r->time.slow_window, window, sizeof window), NULL);
    if (r->time.pause_at_contact_toggle && app->session.sim)
        app_ask(app, "pause_at_contact", sim_pause_at_contact(app->session.sim) ? "off" : NULL,
                NULL, NULL);
    if (r->time.branch_from_scrub)
        app_ask(app, "branch_answer", app_branch_policy_names[APP_BRANCH_SCRUB], NULL, NULL);
    if (r->time.branch_from_original)
        app_ask(app, "branch_answer", app_branch_policy_names[APP_BRANCH_ORIGINAL], NULL, NULL);
    if (r->load_cycle_toggle)
        app_ask(app, "load_cycle_toggle", NULL, NULL, NULL);
}

void app_carry_out_requests(App *app, const GuiRequests *r) {
    session_requests(app, r);
    output_requests(app, r);
    view_requests(app, r);
    if (r->file.quit)
        app_ask(app, "quit", NULL, NULL, NULL);
    device_requests(app, r);
    playback_requests(app, r);
    if (r->file.thumbnail_for > 0)
        app_thumbnail_request(app, r->file.thumbnail_for - 1);
}
