/* Scripts of UI actions (--script FILE): what a user does, one command per line, run between
 * frames while the simulation runs. Mouse and keyboard commands are pushed as SDL events and
 * go through the same handlers as real input; the panel commands call the same functions the
 * panels' buttons call. Results are printed on stdout ("open ... ok", "edit ... accepted",
 * "select ...", "screenshot ...") for the tests to read. The command list is in
 * docs/user-guide.md. */
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

static void push_key(SDL_Keycode key, SDL_Keymod mod, bool tap) {
    SDL_Event e = {0};
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = key;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(key); /* what the GUI's key map reads */
    e.key.keysym.mod = (Uint16)mod;
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
    for (int i = 0; i < app->recent_count; i++)
        printf("recent %d %s\n", i, app->recent[i]);
    printf("gui property_table_y=%.1f keys_in_panels=%d edit_message=%s\n", gui_property_table_y(),
           app->keys_in_panels, app->edit_message);
    /* What the layout cut and the arrows drawn (issue 31 item 8). */
    printf("layout overflow_left=%.1f overflow_right=%.1f overflow_status=%.1f "
           "overflow_navigation=%.1f arrow_kinds=%u arrow_px_per_distance=%.3f\n",
           gui_layout_overflow(GUI_PANEL_LEFT), gui_layout_overflow(GUI_PANEL_RIGHT),
           gui_layout_overflow(GUI_PANEL_STATUS), gui_layout_overflow(GUI_PANEL_NAVIGATION),
           app->arrow_kinds, app_arrow_px_per_distance(app));
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
           "state_time=%.9g clock=%.9g rate=%.6g paused=%d resets=%ld panels=%d selected=%s\n",
           s->frame_time, app->view_x, app->view_y, app->view_w, app->view_h, eye.x, eye.y, eye.z,
           app->camera.target.x, app->camera.target.y, app->camera.target.z, app->camera.fov_deg,
           state_time, clock, app->sim_rate, s->sim ? (int)sim_paused(s->sim) : 1, app->resets,
           (int)app->toggles.panels, selected);
    for (int b = 0; s->view && b < s->view->body_count; b++) {
        const ViewBody *vb = &s->view->bodies[b];
        const double *p = s->frame + vb->var_pos;
        printf("body %s %.9g %.9g %.9g\n", vb->name, p[0], p[1], p[2]);
    }
    fflush(stdout);
}

static void print_bench(Script *s, App *app) {
    double wall = issim_wall_time() - s->bench_wall;
    long frames = app->frame_count - s->bench_frames;
    double cpu = display_cpu_seconds() - s->bench_cpu;
    double st = app->session.sim ? registry_state_time(app->session.reg) : 0.0;
    printf("bench fps=%.1f frames=%ld wall=%.3f display_cpu_ms_per_frame=%.2f "
           "display_cpu_share=%.3f sim_seconds_per_s=%.4f width=%d height=%d\n",
           frames / wall, frames, wall, frames > 0 ? 1e3 * cpu / frames : 0.0, cpu / wall,
           (st - s->bench_state_time) / wall, app->width, app->height);
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
                 : strcmp(what, "hand") == 0              ? &app->mouse_hand_mode
                 : strcmp(what, "grasp") == 0             ? &app->grasp_mode
                 : strcmp(what, "gui") == 0               ? &app->options.show_gui
                                                          : NULL;
    if (flag)
        *flag = on;
    return flag != NULL;
}

/* Runs one command. Returns true when the script may go on this frame; sets *failed. */
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
    }
    fflush(stdout);
}

/* plot K I NAME... (none: clear), plot_versus K 0|1, plot_band K SPAN, plot_window S, print_plots,
 * print_live NAME..., plot_budget MIB, bench_plots SERIES SECONDS DT, print_bench_plots,
 * load_cycle BODY FX FY FZ PERIOD | load_cycle off. False: not one of these. */
static bool plot_command(App *app, char *const *words, int n, bool *failed) {
    const char *cmd = words[0];
    char name[160];
    if (strcmp(cmd, "plot") == 0 && n > 3) {
        join_words(words, 3, n, name, sizeof name);
        gui_plot_set(atoi(words[1]), atoi(words[2]), strcmp(name, "none") == 0 ? "" : name, -1,
                     -1.0);
    } else if (strcmp(cmd, "plot_versus") == 0 && n > 2) {
        gui_plot_set(atoi(words[1]), 0, NULL, atoi(words[2]) != 0, -1.0);
    } else if (strcmp(cmd, "plot_window") == 0 && n > 1) {
        gui_plot_window(atof(words[1]));
    } else if (strcmp(cmd, "plot_band") == 0 && n > 2) {
        gui_plot_set(atoi(words[1]), 0, NULL, -1, atof(words[2]));
    } else if (strcmp(cmd, "plot_budget") == 0 && n > 1) {
        gui_plot_budget(atof(words[1]));
    } else if (strcmp(cmd, "bench_plots") == 0 && n > 3) { /* SERIES SECONDS DT */
        gui_plot_bench(atoi(words[1]), atof(words[2]), atof(words[3]));
    } else if (strcmp(cmd, "print_bench_plots") == 0) {
        double mean = 0.0, most = 0.0;
        int frames = gui_plot_bench_report(&mean, &most);
        printf("bench_plots frames=%d mean_ms=%.3f max_ms=%.3f\n", frames, 1e3 * mean, 1e3 * most);
        fflush(stdout);
    } else if (strcmp(cmd, "print_plots") == 0) {
        print_plots();
    } else if (strcmp(cmd, "print_live") == 0 && n > 1) {
        join_words(words, 1, n, name, sizeof name);
        *failed = !app_live_print(app, name);
    } else if (strcmp(cmd, "load_cycle") == 0 && n == 2 && strcmp(words[1], "off") == 0) {
        app_load_stop(app);
    } else if (strcmp(cmd, "load_cycle") == 0 && n == 6) {
        Vec3 a = {atof(words[2]), atof(words[3]), atof(words[4])};
        *failed = !app_load_start(app, words[1], a, atof(words[5]));
    } else {
        return false;
    }
    return true;
}

static bool run_command(Script *s, App *app, char *line, bool *failed) {
    char *words[32] = {0};
    int n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \t", &save); w && n < 32;
         w = strtok_r(NULL, " \t", &save))
        words[n++] = w;
    const char *cmd = words[0];
    Session *ses = &app->session;
    double x = n > 1 ? atof(words[1]) : 0;
    if (strcmp(cmd, "wait") == 0) {
        s->wait = WAIT_WALL;
        s->wait_until = issim_wall_time() + x;
        return false;
    }
    if (strcmp(cmd, "fps") == 0) { /* the frame limiter's rate: a slow display */
        app->max_fps = (int)x;
        return true;
    }
    if (strcmp(cmd, "bench") == 0 && n > 1) { /* frames per second over S wall seconds */
        s->bench_wall = issim_wall_time();
        s->bench_cpu = display_cpu_seconds();
        s->bench_frames = app->frame_count;
        s->bench_state_time = ses->sim ? registry_state_time(ses->reg) : 0.0;
        s->wait = WAIT_WALL;
        s->wait_until = s->bench_wall + x;
        return false;
    }
    if (strcmp(cmd, "bench_idle") == 0 && n > 1 && x > 0.0) {
        bench_idle(app, x);
        return true;
    }
    if (strcmp(cmd, "frames") == 0) {
        s->wait = WAIT_FRAMES;
        s->wait_frames = (int)x;
        return false;
    }
    if (strcmp(cmd, "wait_sim") == 0 || strcmp(cmd, "wait_edits") == 0 ||
        strcmp(cmd, "wait_device") == 0 || strcmp(cmd, "wait_paused") == 0) {
        int device =
            strcmp(cmd, "wait_device") == 0 ? app_device_condition(app, words[1], words[2]) : 0;
        if (device < 0) {
            *failed = true;
            return false;
        }
        bool done = strcmp(cmd, "wait_sim") == 0      ? (ses->sim && ses->frame_time >= x)
                    : strcmp(cmd, "wait_edits") == 0  ? app->pending_count == 0
                    : strcmp(cmd, "wait_paused") == 0 ? (ses->sim && sim_paused(ses->sim))
                                                      : device == 1;
        if (done) {
            s->wait = WAIT_NONE;
            return true;
        }
        if (s->wait != WAIT_CONDITION) {
            s->wait = WAIT_CONDITION;
            s->wait_until = issim_wall_time() + SCRIPT_WAIT_LIMIT;
        } else if (issim_wall_time() > s->wait_until) {
            fprintf(stderr, "script: %s timed out\n", cmd);
            *failed = true;
        }
        s->next--; /* the same command again next frame */
        return false;
    }
    if (strcmp(cmd, "open") == 0 && n > 1) {
        app_open_scene(app, words[1], false);
    } else if (strcmp(cmd, "drop") == 0 && n > 1) {
        SDL_Event e = {0};
        e.type = SDL_DROPFILE;
        e.drop.file = SDL_strdup(words[1]);
        SDL_PushEvent(&e);
    } else if (strcmp(cmd, "set") == 0 && n > 2) {
        /* the words after the path are the value ("0 0 -1.62") */
        char value[REGISTRY_EDIT_VALUE_MAX] = "";
        for (int k = 2; k < n; k++) {
            strncat(value, words[k], sizeof value - strlen(value) - 1);
            if (k + 1 < n)
                strncat(value, " ", sizeof value - strlen(value) - 1);
        }
        app_submit_edit(app, words[1], value);
    } else if (plot_command(app, words, n, failed)) {
        /* plot, print_plots, load_cycle */
    } else if (app_playback_command(app, words, n, failed)) {
        /* slow_motion, pause_at_contact, branch_policy, branch_answer, print_playback */
    } else if (strcmp(cmd, "pause") == 0 && ses->sim) {
        sim_set_paused(ses->sim, true);
    } else if (strcmp(cmd, "run") == 0 && ses->sim) {
        app_run(app);
    } else if (strcmp(cmd, "step") == 0) {
        app_step(app);
    } else if (strcmp(cmd, "reset") == 0) {
        app_reset(app);
    } else if (strcmp(cmd, "reload") == 0 && ses->path[0]) {
        char path[GUI_PATH_MAX];
        issim_strlcpy(path, ses->path, sizeof path);
        app_open_scene(app, path, true);
    } else if (strcmp(cmd, "speed") == 0 && ses->sim) {
        sim_set_speed(ses->sim, x);
    } else if (strcmp(cmd, "seek") == 0 && ses->sim) {
        app_seek(app, x);
    } else if (strcmp(cmd, "record_start") == 0 && n > 1) {
        if (!app_record_start(app, words[1], n > 2 ? words[2] : ""))
            *failed = true;
    } else if (strcmp(cmd, "record_stop") == 0) {
        app_record_stop(app);
    } else if (strcmp(cmd, "video_start") == 0 && n > 1) { /* FILE [sim [SLOW]|wall] */
        if (!app_video_start(app, words[1], n > 2 && strcmp(words[2], "sim") == 0,
                             n > 3 ? atof(words[3]) : 1.0))
            *failed = true;
    } else if (strcmp(cmd, "video_stop") == 0) {
        app_video_stop(app);
    } else if (strcmp(cmd, "screenshot") == 0 && n > 1) {
        issim_strlcpy(app->screenshot_path, words[1], sizeof app->screenshot_path);
        return false; /* written at the end of this frame */
    } else if (strcmp(cmd, "type") == 0 && n > 1) {
        /* text typed into the focused field, as SDL delivers it: in pieces of at most 31
         * bytes (SDL's text event size), never inside a UTF-8 sequence */
        char typed[600];
        join_words(words, 1, n, typed, sizeof typed); /* "type 0 0 0.7" types the spaces too */
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
    } else if ((strcmp(cmd, "key") == 0 || strcmp(cmd, "tap") == 0) && n > 1) {
        if (!key_command(words[1], strcmp(cmd, "tap") == 0))
            *failed = true;
        return false; /* handled at the next frame's events */
    } else if ((strcmp(cmd, "click") == 0 || strcmp(cmd, "mouse_down") == 0 ||
                strcmp(cmd, "mouse_move") == 0 || strcmp(cmd, "mouse_up") == 0) &&
               n > 2) {
        int mx = atoi(words[1]), my = atoi(words[2]);
        if (strcmp(cmd, "mouse_move") == 0) {
            push_mouse(SDL_MOUSEMOTION, mx, my);
        } else {
            last_mouse_x = mx;
            last_mouse_y = my;
            if (strcmp(cmd, "mouse_up") != 0)
                push_mouse(SDL_MOUSEBUTTONDOWN, mx, my);
            if (strcmp(cmd, "mouse_down") != 0)
                push_mouse(SDL_MOUSEBUTTONUP, mx, my);
        }
        return false;
    } else if (strcmp(cmd, "clicks") == 0 && n > 3) {
        push_clicks(atoi(words[1]), atoi(words[2]), atoi(words[3]));
        return false;
    } else if (strcmp(cmd, "print_gui") == 0) {
        print_gui(app);
    } else if (strcmp(cmd, "select") == 0 && n > 1 && ses->db) {
        app_select(app, thingdb_find(ses->db, words[1]));
    } else if (strcmp(cmd, "camera") == 0 && n > 7) {
        Vec3 eye = {atof(words[1]), atof(words[2]), atof(words[3])};
        Vec3 target = {atof(words[4]), atof(words[5]), atof(words[6])};
        app->camera = camera_from_eye(eye, target, atof(words[7]));
    } else if (strcmp(cmd, "preset") == 0 && n > 1) {
        for (int p = 0; p < CAMERA_PRESET_COUNT; p++)
            if (strcmp(words[1], camera_preset_name(p)) == 0)
                camera_set_preset(&app->camera, p);
    } else if (strcmp(cmd, "follow") == 0 && n > 1) { /* follow BODY | follow off */
        if (!app_follow(app, strcmp(words[1], "off") == 0 ? -1 : app_view_body(app, words[1])))
            *failed = true;
    } else if (strcmp(cmd, "fit") == 0) {
        app_fit(app);
    } else if (strcmp(cmd, "toggle") == 0 && n > 1) {
        if (!toggle(app, words[1], n > 2 ? words[2] : NULL))
            *failed = true;
    } else if (strcmp(cmd, "print_state") == 0) {
        print_state(app);
    } else if (strcmp(cmd, "print_scenes") == 0) { /* the launcher's list, once described */
        while (app_describe_next_scene(app))
            ;
        for (int i = 0; i < app->scene_count; i++)
            printf("scene %s | %s\n", app->scenes[i], app->scene_descriptions[i]);
        for (int i = 0; i < app->scene_count; i++) { /* each drawn, as a hover would */
            app_thumbnail_request(app, i);
            printf("thumbnail %s drawn=%d\n", app->scenes[i], app_thumbnail_coverage(app, i));
        }
        fflush(stdout);
    } else if (strcmp(cmd, "print_device") == 0) {
        app_device_print(app);
    } else if (strcmp(cmd, "device_enable") == 0 || strcmp(cmd, "device_disable") == 0) {
        app_device_enable(app, strcmp(cmd, "device_enable") == 0);
    } else if (strcmp(cmd, "estop") == 0) {
        app_device_emergency_stop(app);
    } else if (strcmp(cmd, "device_reconnect") == 0) {
        app_device_reconnect(app);
    } else if (strcmp(cmd, "save") == 0 && n > 1) {
        /* save FILE [description words...] */
        char description[GUI_DESCRIPTION_MAX] = "";
        for (int k = 2; k < n; k++)
            snprintf(description + strlen(description), sizeof description - strlen(description),
                     "%s%s", k > 2 ? " " : "", words[k]);
        if (!app_save_scene(app, words[1], description))
            *failed = true;
    } else if (strcmp(cmd, "quit") == 0) {
        app->quit = true;
        return false;
    } else {
        *failed = true;
    }
    return !*failed;
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
