/* Scripts of UI actions (--script FILE): what a user does, one command per line, run between
 * frames while the simulation runs. Mouse and keyboard commands are pushed as SDL events and
 * go through the same handlers as real input. The commands are the rows of COMMANDS below (the
 * script command `help` prints them; docs/user-guide.md describes each), and the panels' own
 * requests run through the same rows (app_command, from app_requests.c), so an action has one
 * path whoever asks. Results are printed on stdout ("open ... ok", "edit ... accepted",
 * "select ...", "screenshot ...") for the tests to read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_internal.h"

#define SCRIPT_MAX_LINES 512
#define SCRIPT_WAIT_LIMIT 60.0 /* wall seconds any wait may last before the script fails */

typedef enum WaitKind { WAIT_NONE, WAIT_WALL, WAIT_FRAMES, WAIT_CONDITION } WaitKind;

struct Script {
    char lines[SCRIPT_MAX_LINES][640];
    int line_numbers[SCRIPT_MAX_LINES];
    int count, next;
    char path[GUI_PATH_MAX];
    WaitKind wait;
    /* "bench S": frames, wall and display CPU at its start (wall < 0: none running) */
    double bench_wall, bench_cpu, bench_state_time;
    long bench_frames;
    double wait_until; /* WAIT_WALL: wall time; WAIT_CONDITION: the deadline */
    int wait_frames;
};

Script *script_load(const char *path, IssimError *err) {
    FILE *f = fopen(path, "r");
    if (!f) {
        issim_error_set(err, ISSIM_ERR_IO, "cannot open script %s", path);
        return NULL;
    }
    Script *s = calloc(1, sizeof *s);
    if (!s) {
        fclose(f);
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    issim_strlcpy(s->path, path, sizeof s->path);
    s->bench_wall = -1.0;
    char line[640];
    int number = 0;
    while (fgets(line, sizeof line, f)) {
        number++;
        line[strcspn(line, "\r\n")] = '\0';
        char *p = line + strspn(line, " \t");
        if (*p == '\0' || *p == '#')
            continue;
        if (s->count == SCRIPT_MAX_LINES) {
            issim_error_set(err, ISSIM_ERR_INVALID, "%s:%d: more than %d commands", path, number,
                            SCRIPT_MAX_LINES);
            free(s);
            fclose(f);
            return NULL;
        }
        issim_strlcpy(s->lines[s->count], p, sizeof s->lines[0]);
        s->line_numbers[s->count++] = number;
    }
    fclose(f);
    return s;
}

void script_destroy(Script *s) {
    free(s);
}

/* "key": the release is pushed one frame after the press, as a hand holds a key. "tap": press
 * and release in the same frame, as a quick tap between two frames arrives (the GUI holds the
 * release back for a frame: gui.cpp). */
static SDL_Event pending_key_up;
/* "key_after": the press and release are kept for the timer instead of pushed (key_after) */
static SDL_Event delayed_key[2];
static bool delaying;

static void push_key(SDL_Keycode key, SDL_Keymod mod, bool tap) {
    SDL_Event e = {0};
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = key;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(key); /* what the GUI's key map reads */
    e.key.keysym.mod = (Uint16)mod;
    if (delaying) {
        delayed_key[0] = e;
        delayed_key[1] = e;
        delayed_key[1].type = SDL_KEYUP;
        delayed_key[1].key.state = SDL_RELEASED;
        return;
    }
    SDL_PushEvent(&e);
    e.type = SDL_KEYUP;
    e.key.state = SDL_RELEASED;
    if (tap)
        SDL_PushEvent(&e);
    else
        pending_key_up = e;
}

static bool key_command(const char *name, bool tap) {
    static const struct {
        const char *name;
        SDL_Keycode key;
        SDL_Keymod mod;
    } keys[] = {{"space", SDLK_SPACE, KMOD_NONE},   {"s", SDLK_s, KMOD_NONE},
                {"r", SDLK_r, KMOD_NONE},           {"f", SDLK_f, KMOD_NONE},
                {"ctrl+o", SDLK_o, KMOD_LCTRL},     {"ctrl+l", SDLK_l, KMOD_LCTRL},
                {"f12", SDLK_F12, KMOD_NONE},       {"escape", SDLK_ESCAPE, KMOD_NONE},
                {"return", SDLK_RETURN, KMOD_NONE}, {"backspace", SDLK_BACKSPACE, KMOD_NONE},
                {"ctrl+a", SDLK_a, KMOD_LCTRL},     {"f9", SDLK_F9, KMOD_NONE},
                {"pause", SDLK_PAUSE, KMOD_NONE},   {"ctrl+q", SDLK_q, KMOD_LCTRL},
                {"f1", SDLK_F1, KMOD_NONE},         {"tab", SDLK_TAB, KMOD_NONE}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(name, keys[i].name) == 0) {
            push_key(keys[i].key, keys[i].mod, tap);
            return true;
        }
    /* Any other single character (a letter, a digit, '.'): its key, as typing presses it. */
    if (strlen(name) == 1 && name[0] > ' ' && name[0] < 127) {
        push_key((SDL_Keycode)name[0], KMOD_NONE, tap);
        return true;
    }
    return false;
}

/* "key_after MS NAME": the key tapped MS milliseconds later from SDL's timer thread, so it
 * arrives wherever the display is in its frame (drawing, or waiting for the next), as a hand's
 * key does. One at a time: the events wait in delayed_key for the timer. */
static Uint32 push_delayed_key(Uint32 interval, void *unused) {
    (void)interval, (void)unused;
    SDL_PushEvent(&delayed_key[0]);
    SDL_PushEvent(&delayed_key[1]);
    return 0; /* once */
}

static bool key_after(int ms, const char *name) {
    delaying = true;
    bool known = key_command(name, true);
    delaying = false;
    return known && SDL_AddTimer((Uint32)(ms > 0 ? ms : 1), push_delayed_key, NULL) != 0;
}

static int last_mouse_x, last_mouse_y;

static void push_mouse(Uint32 type, int x, int y) {
    /* SDL's own mouse state too (what the GUI polls for the pointer position): a warp moves it
     * where no window system does it for us (the offscreen driver). */
    SDL_Window *window = SDL_GL_GetCurrentWindow();
    if (window)
        SDL_WarpMouseInWindow(window, x, y);
    SDL_Event e = {0};
    e.type = type;
    if (type == SDL_MOUSEMOTION) {
        e.motion.x = x;
        e.motion.y = y;
        e.motion.xrel = x - last_mouse_x;
        e.motion.yrel = y - last_mouse_y;
    } else {
        e.button.button = SDL_BUTTON_LEFT;
        e.button.state = type == SDL_MOUSEBUTTONDOWN ? SDL_PRESSED : SDL_RELEASED;
        e.button.clicks = 1;
        e.button.x = x;
        e.button.y = y;
    }
    last_mouse_x = x;
    last_mouse_y = y;
    SDL_PushEvent(&e);
}

/* "clicks N X Y": N presses and releases pushed at once, as a fast double-click arrives within
 * one slow frame (the second counts as a double-click, as SDL reports it). */
static void push_clicks(int n, int x, int y) {
    push_mouse(SDL_MOUSEMOTION, x, y);
    for (int k = 1; k <= n; k++)
        for (int up = 0; up < 2; up++) {
            SDL_Event e = {0};
            e.type = up ? SDL_MOUSEBUTTONUP : SDL_MOUSEBUTTONDOWN;
            e.button.button = SDL_BUTTON_LEFT;
            e.button.state = up ? SDL_RELEASED : SDL_PRESSED;
            e.button.clicks = (Uint8)k;
            e.button.x = x;
            e.button.y = y;
            SDL_PushEvent(&e);
        }
}

/* The recent scenes as the File menu lists them, and the property table's place. */
static void print_gui(const App *app) {
    for (int i = 0; i < app->launcher.recent_count; i++)
        printf("recent %d %s\n", i, app->launcher.recent[i]);
    printf("gui property_table_y=%.1f keys_in_panels=%d device_hint=%d edit_message=%s\n",
           gui_property_table_y(), app->keys_in_panels, (int)gui_device_hint_shown(),
           app->edits.edit_message);
    /* What the layout cut and the arrows drawn (issue 31 item 8). */
    printf("layout overflow_left=%.1f overflow_right=%.1f overflow_status=%.1f "
           "overflow_navigation=%.1f arrow_kinds=%u arrow_px_per_distance=%.3f\n",
           gui_layout_overflow(GUI_PANEL_LEFT), gui_layout_overflow(GUI_PANEL_RIGHT),
           gui_layout_overflow(GUI_PANEL_STATUS), gui_layout_overflow(GUI_PANEL_NAVIGATION),
           app->arrow_kinds, app_arrow_px_per_distance(app));
    printf("scrubber note=%.9g\n", gui_scrubber_note());
    fflush(stdout);
}

static void print_state(App *app) {
    Session *s = &app->session;
    Vec3 eye = camera_eye(&app->camera);
    char selected[256] = "-";
    if (s->db && thingdb_valid(s->db, app->selected))
        thing_path(s->db, app->selected, selected, sizeof selected);
    /* The newest state first, the clock after it: the engine never steps past the clock plus
     * the horizon, so state_time <= clock + horizon + one step holds between the two reads. */
    double state_time = s->sim ? registry_state_time(s->reg) : NAN;
    double clock = s->sim ? sim_display_time(s->sim) : NAN;
    printf("state t=%.9g view %d %d %d %d camera %.9g %.9g %.9g %.9g %.9g %.9g %.9g "
           "state_time=%.9g clock=%.9g rate=%.6g paused=%d resets=%ld panels=%d "
           "up=%.9g,%.9g,%.9g selected=%s\n",
           s->frame_time, app->win.view_x, app->win.view_y, app->win.view_w, app->win.view_h, eye.x,
           eye.y, eye.z, app->camera.target.x, app->camera.target.y, app->camera.target.z,
           app->camera.fov_deg, state_time, clock, app->rates.sim_rate,
           s->sim ? (int)sim_paused(s->sim) : 1, app->resets, (int)app->toggles.panels,
           app->camera.up.x, app->camera.up.y, app->camera.up.z, selected);
    for (int b = 0; s->view && b < s->view->body_count; b++) {
        const ViewBody *vb = &s->view->bodies[b];
        const double *p = s->frame + vb->var_pos;
        printf("body %s %.9g %.9g %.9g\n", vb->name, p[0], p[1], p[2]);
    }
    fflush(stdout);
}

static void print_bench(Script *s, App *app) {
    double wall = issim_wall_time() - s->bench_wall;
    long frames = app->rates.frame_count - s->bench_frames;
    double cpu = display_cpu_seconds() - s->bench_cpu;
    double st = app->session.sim ? registry_state_time(app->session.reg) : 0.0;
    printf("bench fps=%.1f frames=%ld wall=%.3f display_cpu_ms_per_frame=%.2f "
           "display_cpu_share=%.3f sim_seconds_per_s=%.4f width=%d height=%d\n",
           frames / wall, frames, wall, frames > 0 ? 1e3 * cpu / frames : 0.0, cpu / wall,
           (st - s->bench_state_time) / wall, app->win.width, app->win.height);
    fflush(stdout);
    s->bench_wall = -1.0;
}

/* "bench_idle S": the engine's throughput over S wall seconds with the display drawing nothing
 * (the main thread sleeps), in the same session and at the same point of the scene as a "bench"
 * around it: the baseline the display's cost to the engine is measured against. */
static void bench_idle(App *app, double seconds) {
    Session *ses = &app->session;
    double w0 = issim_wall_time(), st0 = ses->sim ? registry_state_time(ses->reg) : 0.0;
    while (issim_wall_time() - w0 < seconds)
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    double wall = issim_wall_time() - w0;
    double st = ses->sim ? registry_state_time(ses->reg) : 0.0;
    printf("bench_idle wall=%.3f sim_seconds_per_s=%.4f\n", wall, (st - st0) / wall);
    fflush(stdout);
}

static bool toggle(App *app, const char *what, const char *onoff) {
    bool on = !onoff || strcmp(onoff, "off") != 0;
    bool *flag = strcmp(what, "grid") == 0                ? &app->toggles.grid
                 : strcmp(what, "contacts") == 0          ? &app->toggles.contacts
                 : strcmp(what, "forces") == 0            ? &app->toggles.forces
                 : strcmp(what, "trails") == 0            ? &app->toggles.trails
                 : strcmp(what, "bodies") == 0            ? &app->toggles.bodies
                 : strcmp(what, "panels") == 0            ? &app->toggles.panels
                 : strcmp(what, "selected_contacts") == 0 ? &app->toggles.selected_contacts
                 : strcmp(what, "hand") == 0              ? &app->pointer.mouse_hand_mode
                 : strcmp(what, "grasp") == 0             ? &app->pointer.grasp_mode
                 : strcmp(what, "gui") == 0               ? &app->options.show_gui
                                                          : NULL;
    if (flag)
        *flag = on;
    return flag != NULL;
}

/* The words from the k-th on, joined by single spaces. */
static void join_words(char *const *words, int k, int n, char *out, size_t size) {
    out[0] = '\0';
    for (; k < n; k++) {
        strncat(out, words[k], size - strlen(out) - 1);
        if (k + 1 < n)
            strncat(out, " ", size - strlen(out) - 1);
    }
}

/* What each plot drew last frame: its series, samples, axes and labels. */
static void print_plots(void) {
    GuiPlotInfo p;
    int count = gui_plot_info(0, &p);
    for (int k = 0; k < count; k++) {
        gui_plot_info(k, &p);
        printf("plot %d versus=%d series=%d t0=%.9g t1=%.9g x0=%.9g x1=%.9g y0=%.9g y1=%.9g "
               "lo=%.9g hi=%.9g band=%.9g\n",
               k, p.versus, p.series, p.t0, p.t1, p.x0, p.x1, p.y0, p.y1, p.data_lo, p.data_hi,
               p.band);
        for (int i = 0; i < GUI_PLOT_SERIES; i++)
            printf("plot_series %d %d samples=%d unit=%s name=%s\n", k, i, p.samples[i],
                   p.units[i][0] ? p.units[i] : "-", p.names[i]);
        printf("plot_labels %d x=[%s|%s] y=[%s|%s]\n", k, p.x_label[0], p.x_label[1], p.y_label[0],
               p.y_label[1]);
        printf("plot_markers %d n=%d first=%.9g\n", k, p.markers, p.first_marker);
        printf("plot_area %d %.0f %.0f %.0f %.0f\n", k, p.area[0], p.area[1], p.area[2], p.area[3]);
        printf("plot_history %d from=%.9g\n", k, p.history_from);
    }
    size_t bytes;
    double budget_mib;
    int halvings;
    double oldest;
    long samples = gui_plot_held(&bytes, &budget_mib, &halvings, &oldest);
    printf("plots_held samples=%ld bytes=%zu budget_mib=%g halvings=%d oldest=%.9g\n", samples,
           bytes, budget_mib, halvings, oldest);
    fflush(stdout);
}

/* ===== The command table =====
 * One row per command (Lua's luaL_Reg): script_tick dispatches through it, `help` prints it and
 * docs/user-guide.md lists the same rows (test_gui_script checks both). */

/* One command as the table's handler sees it. */
typedef struct ScriptCall {
    Script *script;
    App *app;
    char **words; /* words[0] is the command's name */
    int n;        /* words, the name included */
    double x;     /* words[1] as a number, 0 without it */
    bool failed;  /* set by the handler: the script stops with an error */
} ScriptCall;

/* Returns true when the next command may run in the same frame; false lets a frame pass first
 * (input pushed as events, a wait, a screenshot taken at the frame's end). */
typedef bool (*ScriptFn)(ScriptCall *call);

/* What a command needs besides its arguments; without it the command fails. NEED_SCRIPT: the
 * waits and benches keep their state in the script, so the panels cannot ask for them. */
typedef enum ScriptNeed {
    NEED_NOTHING,
    NEED_SIM,
    NEED_SCENE,
    NEED_SCENE_PATH,
    NEED_SCRIPT
} ScriptNeed;

typedef struct ScriptCommand {
    const char *name;
    const char *args; /* as the user guide writes them, "" for none */
    int min_args;     /* words after the name, at least */
    ScriptNeed need;
    ScriptFn run;
    const char *help;
} ScriptCommand;

static bool run_wait(ScriptCall *c) {
    c->script->wait = WAIT_WALL;
    c->script->wait_until = issim_wall_time() + c->x;
    return false;
}

static bool run_frames(ScriptCall *c) {
    c->script->wait = WAIT_FRAMES;
    c->script->wait_frames = (int)c->x;
    return false;
}

static bool run_fps(ScriptCall *c) { /* the frame limiter's rate: a slow display */
    c->app->rates.max_fps = (int)c->x;
    return true;
}

static bool run_bench(ScriptCall *c) { /* frames per second over S wall seconds */
    Script *s = c->script;
    Session *ses = &c->app->session;
    s->bench_wall = issim_wall_time();
    s->bench_cpu = display_cpu_seconds();
    s->bench_frames = c->app->rates.frame_count;
    s->bench_state_time = ses->sim ? registry_state_time(ses->reg) : 0.0;
    s->wait = WAIT_WALL;
    s->wait_until = s->bench_wall + c->x;
    return false;
}

static bool run_bench_idle(ScriptCall *c) {
    if (!(c->x > 0.0)) {
        c->failed = true;
        return false;
    }
    bench_idle(c->app, c->x);
    return true;
}

/* The wait_* commands: true once the condition holds; until then the same command runs again
 * next frame, for at most SCRIPT_WAIT_LIMIT wall seconds. */
static bool wait_condition(ScriptCall *c, bool done) {
    Script *s = c->script;
    if (done) {
        s->wait = WAIT_NONE;
        return true;
    }
    if (s->wait != WAIT_CONDITION) {
        s->wait = WAIT_CONDITION;
        s->wait_until = issim_wall_time() + SCRIPT_WAIT_LIMIT;
    } else if (issim_wall_time() > s->wait_until) {
        fprintf(stderr, "script: %s timed out\n", c->words[0]);
        c->failed = true;
    }
    s->next--; /* the same command again next frame */
    return false;
}

static bool run_wait_sim(ScriptCall *c) {
    const Session *ses = &c->app->session;
    return wait_condition(c, ses->sim && ses->frame_time >= c->x);
}

static bool run_wait_edits(ScriptCall *c) {
    return wait_condition(c, c->app->edits.pending_count == 0);
}

static bool run_wait_paused(ScriptCall *c) {
    const Session *ses = &c->app->session;
    return wait_condition(c, ses->sim && sim_paused(ses->sim));
}

static bool run_wait_device(ScriptCall *c) {
    int device = app_device_condition(c->app, c->words[1], c->words[2]);
    if (device < 0) {
        c->failed = true;
        return false;
    }
    return wait_condition(c, device == 1);
}

static bool run_open(ScriptCall *c) {
    app_open_scene(c->app, c->words[1], false);
    return true;
}

static bool run_drop(ScriptCall *c) {
    SDL_Event e = {0};
    e.type = SDL_DROPFILE;
    e.drop.file = SDL_strdup(c->words[1]);
    SDL_PushEvent(&e);
    return true;
}

static bool run_set(ScriptCall *c) {
    char value[REGISTRY_EDIT_VALUE_MAX]; /* the words after the path ("0 0 -1.62") */
    join_words(c->words, 2, c->n, value, sizeof value);
    if (c->script)
        c->app->key_wall = 0.0; /* a script's line, not a key, sent it: no key-to-edit latency */
    app_submit_edit(c->app, c->words[1], value);
    return true;
}

static bool run_plot(ScriptCall *c) {
    char name[160];
    join_words(c->words, 3, c->n, name, sizeof name);
    gui_plot_set(atoi(c->words[1]), atoi(c->words[2]), strcmp(name, "none") == 0 ? "" : name, -1,
                 -1.0);
    return true;
}

static bool run_plot_versus(ScriptCall *c) {
    gui_plot_set(atoi(c->words[1]), 0, NULL, atoi(c->words[2]) != 0, -1.0);
    return true;
}

static bool run_plot_window(ScriptCall *c) {
    gui_plot_window(c->x);
    return true;
}

static bool run_plot_band(ScriptCall *c) {
    gui_plot_set(atoi(c->words[1]), 0, NULL, -1, atof(c->words[2]));
    return true;
}

static bool run_plot_budget(ScriptCall *c) {
    gui_plot_budget(c->x);
    return true;
}

static bool run_bench_plots(ScriptCall *c) {
    gui_plot_bench(atoi(c->words[1]), atof(c->words[2]), atof(c->words[3]));
    return true;
}

static bool run_print_plot_columns(ScriptCall *c) {
    (void)c;
    int differ = 0;
    int checked = gui_plot_columns_check(&differ);
    printf("plot_columns checked=%d differ=%d\n", checked, differ);
    fflush(stdout);
    return true;
}

static bool run_print_bench_plots(ScriptCall *c) {
    (void)c;
    double mean = 0.0, most = 0.0, feed = 0.0;
    int frames = gui_plot_bench_report(&mean, &most, &feed);
    printf("bench_plots frames=%d mean_ms=%.3f max_ms=%.3f feed_ms=%.3f\n", frames, 1e3 * mean,
           1e3 * most, 1e3 * feed);
    fflush(stdout);
    return true;
}

static bool run_print_plots(ScriptCall *c) {
    (void)c;
    print_plots();
    return true;
}

static bool run_print_live(ScriptCall *c) {
    char name[160];
    join_words(c->words, 1, c->n, name, sizeof name);
    c->failed = !app_live_print(c->app, name);
    return !c->failed;
}

static bool run_load_cycle(ScriptCall *c) {
    if (c->n == 2 && strcmp(c->words[1], "off") == 0) {
        app_load_stop(c->app);
    } else if (c->n == 6) {
        Vec3 a = {atof(c->words[2]), atof(c->words[3]), atof(c->words[4])};
        c->failed = !app_load_start(c->app, c->words[1], a, atof(c->words[5]));
    } else {
        c->failed = true;
    }
    return !c->failed;
}

/* slow_motion, pause_at_contact, branch_policy, branch_answer, print_playback: their arguments
 * are app_playback.c's to read. */
static bool run_playback(ScriptCall *c) {
    if (!app_playback_command(c->app, c->words, c->n, &c->failed))
        c->failed = true;
    return !c->failed;
}

static bool run_pause(ScriptCall *c) {
    sim_set_paused(c->app->session.sim, true);
    return true;
}

static bool run_run(ScriptCall *c) {
    app_run(c->app);
    return true;
}

static bool run_step(ScriptCall *c) {
    app_step(c->app);
    return true;
}

static bool run_reset(ScriptCall *c) {
    app_reset(c->app);
    return true;
}

static bool run_reload(ScriptCall *c) {
    char path[GUI_PATH_MAX];
    issim_strlcpy(path, c->app->session.path, sizeof path);
    app_open_scene(c->app, path, true);
    return true;
}

static bool run_speed(ScriptCall *c) {
    sim_set_speed(c->app->session.sim, c->x);
    return true;
}

static bool run_seek(ScriptCall *c) {
    app_seek(c->app, c->x);
    return true;
}

/* The clock stops exactly at T, whatever the frame rate: a wait_sim polled once a frame
 * overshoots by the speed times a frame's wall time (15.6 s for 5 s at 10x under load). */
static bool run_pause_at(ScriptCall *c) {
    sim_set_hold(c->app->session.sim, c->x);
    return true;
}

static bool run_record_start(ScriptCall *c) {
    c->failed = !app_record_start(c->app, c->words[1], c->n > 2 ? c->words[2] : "");
    return !c->failed;
}

static bool run_record_stop(ScriptCall *c) {
    app_record_stop(c->app);
    return true;
}

static bool run_video_start(ScriptCall *c) {
    c->failed = !app_video_start(c->app, c->words[1], c->n > 2 && strcmp(c->words[2], "sim") == 0,
                                 c->n > 3 ? atof(c->words[3]) : 1.0);
    return !c->failed;
}

static bool run_video_stop(ScriptCall *c) {
    app_video_stop(c->app);
    return true;
}

static bool run_screenshot(ScriptCall *c) {
    issim_strlcpy(c->app->screenshot_path, c->words[1], sizeof c->app->screenshot_path);
    return false; /* written at the end of this frame */
}

/* Text typed into the focused field, as SDL delivers it: in pieces of at most 31 bytes (SDL's
 * text event size), never inside a UTF-8 sequence. */
static bool run_type(ScriptCall *c) {
    char typed[600];
    join_words(c->words, 1, c->n, typed, sizeof typed); /* "type 0 0 0.7" types the spaces too */
    const char *text = typed;
    while (*text) {
        size_t piece = strlen(text) < 24 ? strlen(text) : 24;
        while (piece < strlen(text) && ((unsigned char)text[piece] & 0xC0) == 0x80)
            piece++;
        SDL_Event e = {0};
        e.type = SDL_TEXTINPUT;
        memcpy(e.text.text, text, piece);
        e.text.text[piece] = '\0';
        SDL_PushEvent(&e);
        text += piece;
    }
    return false;
}

static bool run_key(ScriptCall *c) {
    c->failed = !key_command(c->words[1], strcmp(c->words[0], "tap") == 0);
    return false; /* handled at the next frame's events */
}

static bool run_key_after(ScriptCall *c) {
    c->failed = !key_after(atoi(c->words[1]), c->words[2]);
    return false;
}

static bool run_mouse(ScriptCall *c) {
    const char *cmd = c->words[0];
    int mx = atoi(c->words[1]), my = atoi(c->words[2]);
    if (strcmp(cmd, "mouse_move") == 0) {
        push_mouse(SDL_MOUSEMOTION, mx, my);
        return false;
    }
    last_mouse_x = mx;
    last_mouse_y = my;
    if (strcmp(cmd, "mouse_up") != 0)
        push_mouse(SDL_MOUSEBUTTONDOWN, mx, my);
    if (strcmp(cmd, "mouse_down") != 0)
        push_mouse(SDL_MOUSEBUTTONUP, mx, my);
    return false;
}

static bool run_clicks(ScriptCall *c) {
    push_clicks(atoi(c->words[1]), atoi(c->words[2]), atoi(c->words[3]));
    return false;
}

static bool run_print_gui(ScriptCall *c) {
    print_gui(c->app);
    return true;
}

/* The contact-map panel as drawn last frame: its body, the node in contact and the live force
 * plot's columns (each the largest output-step peak it covers). */
static bool run_print_map(ScriptCall *c) {
    const AppMapView *m = &c->app->map_view;
    if (m->body < 0 || !m->gui.map) {
        printf("map none\n");
    } else {
        float most = -INFINITY;
        for (int i = 0; i < m->count; i++)
            most = fmaxf(most, m->force[i]);
        printf("map body=%s active=%d columns=%d force_max=%.9g seconds=%.9g\n", m->gui.body,
               m->gui.active_node, m->count, most, m->seconds);
    }
    fflush(stdout);
    return true;
}

static bool run_select(ScriptCall *c) {
    app_select(c->app, thingdb_find(c->app->session.db, c->words[1]));
    return true;
}

static bool run_camera(ScriptCall *c) {
    char **w = c->words;
    Vec3 eye = {atof(w[1]), atof(w[2]), atof(w[3])};
    Vec3 target = {atof(w[4]), atof(w[5]), atof(w[6])};
    c->app->camera = camera_from_eye(eye, target, atof(w[7]), c->app->camera.up);
    return true;
}

static bool run_preset(ScriptCall *c) {
    for (int p = 0; p < CAMERA_PRESET_COUNT; p++)
        if (strcmp(c->words[1], camera_preset_name(p)) == 0)
            camera_set_preset(&c->app->camera, p);
    return true;
}

static bool run_follow(ScriptCall *c) {
    const char *body = c->words[1];
    c->failed = !app_follow(c->app, strcmp(body, "off") == 0 ? -1 : app_view_body(c->app, body));
    return !c->failed;
}

static bool run_fit(ScriptCall *c) {
    app_fit(c->app);
    return true;
}

static bool run_toggle(ScriptCall *c) {
    c->failed = !toggle(c->app, c->words[1], c->n > 2 ? c->words[2] : NULL);
    return !c->failed;
}

static bool run_print_state(ScriptCall *c) {
    print_state(c->app);
    return true;
}

static bool run_print_scenes(ScriptCall *c) { /* the launcher's list, once described */
    App *app = c->app;
    while (app_describe_next_scene(app))
        ;
    for (int i = 0; i < app->launcher.scene_count; i++)
        printf("scene %s | %s\n", app->launcher.scenes[i], app->launcher.scene_descriptions[i]);
    for (int i = 0; i < app->launcher.scene_count; i++) { /* each drawn, as a hover would */
        app_thumbnail_request(app, i);
        printf("thumbnail %s drawn=%d\n", app->launcher.scenes[i], app_thumbnail_coverage(app, i));
    }
    fflush(stdout);
    return true;
}

static bool run_print_device(ScriptCall *c) {
    app_device_print(c->app);
    return true;
}

static bool run_device_enable(ScriptCall *c) {
    app_device_enable(c->app, strcmp(c->words[0], "device_enable") == 0);
    return true;
}

static bool run_estop(ScriptCall *c) {
    app_device_emergency_stop(c->app);
    return true;
}

static bool run_device_reconnect(ScriptCall *c) {
    app_device_reconnect(c->app);
    return true;
}

static bool run_save(ScriptCall *c) {
    char description[GUI_DESCRIPTION_MAX];
    join_words(c->words, 2, c->n, description, sizeof description);
    c->failed = !app_save_scene(c->app, c->words[1], description);
    return !c->failed;
}

static bool run_quit(ScriptCall *c) {
    c->app->quit = true;
    return false;
}

static bool run_refresh_scenes(ScriptCall *c) {
    app_scan_scenes(c->app);
    return true;
}

static bool run_follow_selected(ScriptCall *c) {
    app_toggle_follow(c->app);
    return true;
}

static bool run_load_cycle_toggle(ScriptCall *c) {
    app_load_toggle(c->app);
    return true;
}

/* "trace": every command run afterwards is printed with who asked, "ran NAME ARGS (gui)" or
 * "(script)": the panels' requests are the table's commands too. Display thread only. */
static bool tracing;

static bool run_trace(ScriptCall *c) {
    tracing = !(c->n > 1 && strcmp(c->words[1], "off") == 0);
    return true;
}

static bool run_help(ScriptCall *c);

static const ScriptCommand COMMANDS[] = {
    {"wait", "S", 0, NEED_SCRIPT, run_wait, "let S wall seconds pass"},
    {"frames", "N", 0, NEED_SCRIPT, run_frames, "let N frames pass"},
    {"wait_sim", "T", 0, NEED_SCRIPT, run_wait_sim, "wait until the display time reaches T"},
    {"wait_edits", "", 0, NEED_SCRIPT, run_wait_edits,
     "wait until every submitted edit is accepted or rejected"},
    {"wait_paused", "", 0, NEED_SCRIPT, run_wait_paused, "wait until the clock is paused"},
    {"wait_device", "CONDITION [VALUE]", 0, NEED_SCRIPT, run_wait_device,
     "wait until the device's condition holds: periods N, motors_on, motors_off, error, "
     "y_below Y, y_above Y, still V, unlimited"},
    {"open", "PATH", 1, NEED_NOTHING, run_open, "open a scene through the launcher"},
    {"drop", "PATH", 1, NEED_NOTHING, run_drop, "drop a file on the window"},
    {"reload", "", 0, NEED_SCENE_PATH, run_reload, "reload the scene (Ctrl+L)"},
    {"refresh_scenes", "", 0, NEED_NOTHING, run_refresh_scenes,
     "scan scenes/ again for the launcher (File > Rescan scenes)"},
    {"set", "PATH VALUE...", 2, NEED_NOTHING, run_set,
     "a property edit (set universe.gravity 0 0 -1.62)"},
    {"select", "PATH", 1, NEED_SCENE, run_select, "select a thing"},
    {"pause", "", 0, NEED_SIM, run_pause, "pause the clock"},
    {"run", "", 0, NEED_SIM, run_run, "run the clock"},
    {"step", "", 0, NEED_NOTHING, run_step, "one output step"},
    {"reset", "", 0, NEED_NOTHING, run_reset, "back to the scene's start"},
    {"speed", "X", 0, NEED_SIM, run_speed, "the clock's speed factor"},
    {"seek", "T", 0, NEED_SIM, run_seek, "move the clock to T (the history scrubber)"},
    {"pause_at", "T", 0, NEED_SIM, run_pause_at, "pause the clock exactly when it reaches T"},
    {"slow_motion", "RATE [WINDOW] | off", 0, NEED_NOTHING, run_playback,
     "slow motion at impacts (simulated s per wall s, window in s)"},
    {"pause_at_contact", "[off]", 0, NEED_NOTHING, run_playback, "stop at the next impact"},
    {"branch_policy", "ask|scrub|original", 0, NEED_NOTHING, run_playback,
     "the branches preference"},
    {"branch_answer", "scrub|original", 0, NEED_NOTHING, run_playback,
     "the answer to a branch's question"},
    {"print_playback", "", 0, NEED_NOTHING, run_playback,
     "print the clock, slow motion, impacts, branch and edit log"},
    {"record_start", "FILE [VARS]", 1, NEED_NOTHING, run_record_start, "start recording"},
    {"record_stop", "", 0, NEED_NOTHING, run_record_stop, "stop recording"},
    {"video_start", "FILE [sim [SLOW]|wall]", 1, NEED_NOTHING, run_video_start,
     "video of the 3D view (SLOW: the slow-motion factor of a simulated-time video)"},
    {"video_stop", "", 0, NEED_NOTHING, run_video_stop, "stop the video"},
    {"screenshot", "FILE", 1, NEED_NOTHING, run_screenshot, "PNG of the window"},
    {"save", "FILE [DESCRIPTION...]", 1, NEED_NOTHING, run_save,
     "save the scene (camera and description as Save scene)"},
    {"key", "NAME", 1, NEED_NOTHING, run_key, "press a key (released one frame later)"},
    {"tap", "NAME", 1, NEED_NOTHING, run_key, "press and release a key in the same frame"},
    {"key_after", "MS NAME", 2, NEED_NOTHING, run_key_after,
     "tap a key MS milliseconds from now, from a timer (wherever the frame is)"},
    {"type", "TEXT", 1, NEED_NOTHING, run_type, "text typed into the focused field"},
    {"click", "X Y", 2, NEED_NOTHING, run_mouse, "left mouse button down and up (window pixels)"},
    {"mouse_down", "X Y", 2, NEED_NOTHING, run_mouse, "left mouse button down"},
    {"mouse_move", "X Y", 2, NEED_NOTHING, run_mouse, "move the mouse"},
    {"mouse_up", "X Y", 2, NEED_NOTHING, run_mouse, "left mouse button up"},
    {"clicks", "N X Y", 3, NEED_NOTHING, run_clicks, "N clicks within one frame"},
    {"fps", "N", 0, NEED_NOTHING, run_fps, "the frame limiter's rate (a slow display)"},
    {"bench", "S", 1, NEED_SCRIPT, run_bench, "print the frame rate and costs over S wall seconds"},
    {"bench_idle", "S", 1, NEED_NOTHING, run_bench_idle,
     "draw nothing for S wall seconds and print the engine's rate meanwhile"},
    {"camera", "EX EY EZ TX TY TZ FOV", 7, NEED_NOTHING, run_camera, "place the camera"},
    {"preset", "NAME", 1, NEED_NOTHING, run_preset, "a camera preset"},
    {"fit", "", 0, NEED_NOTHING, run_fit, "fit the camera to the scene"},
    {"follow", "NAME|off", 1, NEED_NOTHING, run_follow, "the camera follows a body / stops"},
    {"follow_selected", "", 0, NEED_NOTHING, run_follow_selected,
     "follow the selected body, or stop following (the view bar's Follow)"},
    {"toggle", "WHAT [off]", 1, NEED_NOTHING, run_toggle,
     "a view toggle: grid, contacts, forces, trails, bodies, panels, selected_contacts, hand, "
     "grasp, gui"},
    {"print_state", "", 0, NEED_NOTHING, run_print_state,
     "print the time, view, camera, clock and bodies"},
    {"print_scenes", "", 0, NEED_NOTHING, run_print_scenes, "print the launcher's list"},
    {"print_map", "", 0, NEED_NOTHING, run_print_map,
     "print the contact-map panel as drawn last frame"},
    {"print_gui", "", 0, NEED_NOTHING, run_print_gui,
     "print the recent scenes, the property table's place and the layout"},
    {"device_enable", "", 0, NEED_NOTHING, run_device_enable, "the device panel's Enable"},
    {"device_disable", "", 0, NEED_NOTHING, run_device_enable, "the device panel's Disable"},
    {"estop", "", 0, NEED_NOTHING, run_estop, "the device panel's EMERGENCY STOP"},
    {"device_reconnect", "", 0, NEED_NOTHING, run_device_reconnect, "the device panel's Reconnect"},
    {"print_device", "", 0, NEED_NOTHING, run_print_device, "print the device panel's readout"},
    {"load_cycle", "BODY FX FY FZ T | off", 1, NEED_NOTHING, run_load_cycle,
     "a prescribed load cycle on a body (N, s) / stop it"},
    {"plot", "K I NAME...|none", 3, NEED_NOTHING, run_plot,
     "plot K's series I is the variable or display quantity NAME / none"},
    {"plot_versus", "K 0|1", 2, NEED_NOTHING, run_plot_versus,
     "plot K against its first series / in time"},
    {"plot_band", "K SPAN", 2, NEED_NOTHING, run_plot_band, "plot K's dead band (0: automatic)"},
    {"plot_window", "S", 1, NEED_NOTHING, run_plot_window, "the plots' window"},
    {"plot_budget", "MIB", 1, NEED_NOTHING, run_plot_budget, "the plots' history budget"},
    {"bench_plots", "SERIES SECONDS DT", 3, NEED_NOTHING, run_bench_plots,
     "the plot benchmark's synthetic series"},
    {"print_plot_columns", "", 0, NEED_NOTHING, run_print_plot_columns,
     "read the plots' kept pixel columns again from their histories and print how many differ"},
    {"print_bench_plots", "", 0, NEED_NOTHING, run_print_bench_plots,
     "print the plot benchmark's frames and CPU times"},
    {"print_plots", "", 0, NEED_NOTHING, run_print_plots, "print each plot as drawn last frame"},
    {"print_live", "NAME...", 1, NEED_NOTHING, run_print_live,
     "print the samples of a display quantity"},
    {"load_cycle_toggle", "", 0, NEED_NOTHING, run_load_cycle_toggle,
     "stop the load cycle, or start the scene's again (the plot panel's button)"},
    {"trace", "[off]", 0, NEED_NOTHING, run_trace,
     "print every command run afterwards, with who asked: (gui) or (script)"},
    {"help", "", 0, NEED_NOTHING, run_help, "print this table"},
    {"quit", "", 0, NEED_NOTHING, run_quit, "quit now"},
};
enum { COMMAND_COUNT = sizeof COMMANDS / sizeof COMMANDS[0] };

/* `help`: one line a command, "command NAME ARGS | HELP", in the table's order. */
static bool run_help(ScriptCall *c) {
    (void)c;
    for (int i = 0; i < COMMAND_COUNT; i++)
        printf("command %s%s%s | %s\n", COMMANDS[i].name, COMMANDS[i].args[0] ? " " : "",
               COMMANDS[i].args, COMMANDS[i].help);
    fflush(stdout);
    return true;
}

static const ScriptCommand *find_command(const char *name) {
    for (int i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(COMMANDS[i].name, name) == 0)
            return &COMMANDS[i];
    return NULL;
}

static bool need_met(const App *app, const Script *script, ScriptNeed need) {
    const Session *ses = &app->session;
    switch (need) {
    case NEED_SIM:
        return ses->sim != NULL;
    case NEED_SCENE:
        return ses->db != NULL;
    case NEED_SCENE_PATH:
        return ses->path[0] != '\0';
    case NEED_SCRIPT:
        return script != NULL;
    case NEED_NOTHING:
        break;
    }
    return true;
}

/* An unknown command says so on stderr with the table's nearest names. */
static void unknown_command(const char *name) {
    IssimNearest nearest = issim_nearest_start(name);
    for (int i = 0; i < COMMAND_COUNT; i++)
        issim_nearest_offer(&nearest, COMMANDS[i].name);
    char names[256];
    if (issim_nearest_format(&nearest, names, sizeof names) > 0)
        fprintf(stderr, "script: unknown command '%s' (did you mean %s?)\n", name, names);
    else
        fprintf(stderr, "script: unknown command '%s' (help lists the commands)\n", name);
}

static void trace(char **words, int n, bool from_gui) {
    printf("ran");
    for (int i = 0; i < n; i++)
        printf(" %s", words[i]);
    printf(" (%s)\n", from_gui ? "gui" : "script");
    fflush(stdout);
}

/* Runs words (words[0] the command's name) through its row, for the script s or, with s NULL,
 * for the panels. Returns true when a script may go on this frame; sets *failed. */
static bool dispatch(Script *s, App *app, char **words, int n, bool *failed) {
    const ScriptCommand *command = find_command(words[0]);
    if (!command) {
        unknown_command(words[0]);
        *failed = true;
        return false;
    }
    if (n - 1 < command->min_args || !need_met(app, s, command->need)) {
        *failed = true;
        return false;
    }
    if (tracing)
        trace(words, n, s == NULL);
    ScriptCall call = {
        .script = s, .app = app, .words = words, .n = n, .x = n > 1 ? atof(words[1]) : 0.0};
    bool go_on = command->run(&call);
    *failed = call.failed;
    return go_on && !call.failed;
}

/* Runs one line of the script. */
static bool run_command(Script *s, App *app, char *line, bool *failed) {
    char *words[32] = {0};
    int n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \t", &save); w && n < 32;
         w = strtok_r(NULL, " \t", &save))
        words[n++] = w;
    if (n == 0) {
        *failed = true;
        return false;
    }
    return dispatch(s, app, words, n, failed);
}

bool app_command(App *app, char **words, int n) {
    bool failed = false;
    dispatch(NULL, app, words, n, &failed);
    return !failed;
}

bool script_tick(Script *s, App *app) {
    if (pending_key_up.type == SDL_KEYUP) {
        SDL_PushEvent(&pending_key_up);
        pending_key_up.type = 0;
    }
    if (s->wait == WAIT_WALL && issim_wall_time() < s->wait_until)
        return true;
    if (s->bench_wall > 0)
        print_bench(s, app);
    if (s->wait == WAIT_FRAMES && s->wait_frames-- > 0)
        return true;
    if (s->wait != WAIT_CONDITION)
        s->wait = WAIT_NONE;
    while (s->next < s->count) {
        int index = s->next++;
        char line[640];
        issim_strlcpy(line, s->lines[index], sizeof line);
        bool failed = false;
        bool go_on = run_command(s, app, line, &failed);
        if (failed) {
            fprintf(stderr, "%s:%d: script command failed: %s\n", s->path, s->line_numbers[index],
                    s->lines[index]);
            app->exit_status = 1;
            return false;
        }
        if (!go_on)
            return true;
    }
    return false;
}
