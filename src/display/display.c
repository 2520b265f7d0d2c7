/* The display thread's loop (000 App. B.4.1): poll input, read the registry at display time,
 * draw the scene and the GUI, carry out what the GUI asked, swap. It never blocks on the
 * engine: every read is a registry snapshot, every write a registry slot or an edit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <stb_image_write.h>

#include "issim/engine_stats.h"
#include "app_internal.h"

bool display_module_matches(const char *version, size_t display_options_size,
                            size_t sim_options_size) {
    return version && strcmp(version, ISSIM_VERSION) == 0 &&
           display_options_size == sizeof(DisplayOptions) && sim_options_size == sizeof(SimOptions);
}

IssimStatus display_write_png(const char *path, int width, int height, IssimError *err) {
    unsigned char *pixels = malloc((size_t)width * height * 3);
    unsigned char *flipped = malloc((size_t)width * height * 3);
    if (!pixels || !flipped) {
        free(pixels);
        free(flipped);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for the screenshot");
    }
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels);
    /* GL rows start at the bottom, PNG rows at the top. */
    for (int y = 0; y < height; y++)
        memcpy(flipped + (size_t)y * width * 3, pixels + (size_t)(height - 1 - y) * width * 3,
               (size_t)width * 3);
    int ok = stbi_write_png(path, width, height, 3, flipped, width * 3);
    free(pixels);
    free(flipped);
    if (!ok)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot write the screenshot %s", path);
    return ISSIM_OK;
}

/* Without a GPU, Mesa's llvmpipe rasterises in worker threads ("llvmpipe-N") that compete
 * with the engine for the same cores. They are lowered to nice 10 (ISSIM_RASTER_NICE), so
 * drawing yields the CPU to the engine and the frame rate drops first (raising one's own
 * threads' nice needs no privilege; the engine threads, created from the main thread, keep its
 * priority). */
static void lower_rasteriser_priority(void) {
    const char *env = getenv("ISSIM_RASTER_NICE"); /* 0 keeps them at the display's priority */
    int nice_level = env ? atoi(env) : 10;
    if (nice_level <= 0)
        return;
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return;
    struct dirent *e;
    int lowered = 0;
    while ((e = readdir(dir))) {
        char path[300], name[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(name, sizeof name, f) && strncmp(name, "llvmpipe-", 9) == 0 &&
            setpriority(PRIO_PROCESS, (id_t)atoi(e->d_name), nice_level) == 0)
            lowered++;
        fclose(f);
    }
    closedir(dir);
    if (lowered)
        issim_log(ISSIM_LOG_INFO, "%d llvmpipe threads at nice %d", lowered, nice_level);
}

static bool open_window(App *app, IssimError *err) {
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        return issim_error_set(err, ISSIM_ERR_STATE, "SDL_Init: %s", SDL_GetError()) == ISSIM_OK;
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
    app->win.window = SDL_CreateWindow("issim", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                                       app->options.width, app->options.height,
                                       SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE);
    if (!app->win.window) {
        issim_error_set(err, ISSIM_ERR_STATE, "cannot open a window: %s", SDL_GetError());
        return false;
    }
    app->win.gl = SDL_GL_CreateContext(app->win.window);
    if (!app->win.gl) {
        issim_error_set(err, ISSIM_ERR_STATE, "no OpenGL 3.3 core context: %s", SDL_GetError());
        return false;
    }
    SDL_GL_MakeCurrent(app->win.window, app->win.gl);
    SDL_GL_SetSwapInterval(app->options.vsync ? 1 : 0);
    GLenum g = glewInit();
    /* Under EGL (SDL's offscreen driver) GLEW reports GLEW_ERROR_NO_GLX_DISPLAY although every
     * GL entry point is loaded (PLATFORM.md). */
    if (g != GLEW_OK && g != GLEW_ERROR_NO_GLX_DISPLAY) {
        issim_error_set(err, ISSIM_ERR_STATE, "glewInit: %s", glewGetErrorString(g));
        return false;
    }
    SDL_GL_GetDrawableSize(app->win.window, &app->win.width, &app->win.height);
    lower_rasteriser_priority();
    app->win.renderer = renderer_create(err);
    if (!app->win.renderer)
        return false;
    app->win.gui_ready = gui_create(app->win.window, app->win.gl);
    if (!app->win.gui_ready)
        issim_log(ISSIM_LOG_WARN, "the GUI back-ends failed to start; 3D view only");
    issim_log(ISSIM_LOG_INFO, "OpenGL %s on %s (%s video driver)",
              (const char *)glGetString(GL_VERSION), (const char *)glGetString(GL_RENDERER),
              SDL_GetCurrentVideoDriver());
    return true;
}

static void close_window(App *app) {
    if (app->win.gui_ready)
        gui_destroy();
    app_thumbnails_free(app);
    renderer_destroy(app->win.renderer);
    if (app->win.gl)
        SDL_GL_DeleteContext(app->win.gl);
    if (app->win.window)
        SDL_DestroyWindow(app->win.window);
    SDL_Quit();
}

/* ===== Measured rates ===== */

static void update_rates(App *app) {
    double now = issim_wall_time();
    app->rates.fps_frames++;
    if (now - app->rates.fps_wall >= 0.5) {
        app->rates.fps = app->rates.fps_frames / (now - app->rates.fps_wall);
        app->rates.fps_frames = 0;
        app->rates.fps_wall = now;
        if (app->session.sim) {
            /* Output steps per second: how fast the state time advances, in engine steps. */
            double state = registry_state_time(app->session.reg) / sim_dt(app->session.sim);
            if (app->rates.rate_wall > 0 && state >= app->rates.rate_steps)
                app->rates.engine_rate =
                    (state - app->rates.rate_steps) / (now - app->rates.rate_wall);
            app->rates.rate_steps = state;
            double shown = app->session.frame_time;
            bool moving = !sim_paused(app->session.sim) && app->rates.rate_wall > 0 &&
                          shown >= app->rates.rate_shown_t;
            bool paused = sim_paused(app->session.sim);
            app->rates.sim_rate =
                moving   ? (shown - app->rates.rate_shown_t) / (now - app->rates.rate_wall)
                : paused ? 0.0
                         : NAN; /* not measured yet: a new scene, a first window */
            app->rates.rate_shown_t = shown;
            app->rates.rate_wall = now;
        }
    }
}

/* ===== GUI ===== */

double app_arrow_px_per_distance(const App *app) {
    return app->win.view_h / (2.0 * tan(0.5 * app->camera.fov_deg * M_PI / 180.0));
}

/* The `label` of every body that has one, at its centre's pixel (a body behind the camera or
 * outside the 3D view is not labelled). */
static int place_labels(App *app) {
    const Session *s = &app->session;
    int n = 0;
    for (int b = 0; s->view && s->db && s->has_frame && b < s->view->body_count; b++) {
        const ViewBody *vb = &s->view->bodies[b];
        const char *text = thing_string(s->db, vb->thing, "label");
        const double *p = s->frame + vb->var_pos;
        double x, y;
        if (!text || !text[0] || n == GUI_MAX_LABELS ||
            !camera_project(&app->camera, app->win.view_w, app->win.view_h,
                            (Vec3){p[0], p[1], p[2]}, &x, &y) ||
            x < 0 || y < 0 || x >= app->win.view_w || y >= app->win.view_h)
            continue;
        app->labels[n].x = (float)(app->win.view_x + x);
        app->labels[n].y = (float)(app->win.view_y + y);
        issim_strlcpy(app->labels[n].text, text, sizeof app->labels[n].text);
        n++;
    }
    return n;
}

static void fill_gui_state(App *app, GuiState *g) {
    Session *s = &app->session;
    memset(g, 0, sizeof *g);
    g->width = app->win.width;
    g->height = app->win.height;
    g->side_width = app->win.view_x;
    g->db = s->db;
    g->reg = s->sim ? s->reg : NULL;
    g->frame = s->has_frame ? s->frame : NULL;
    g->scene_path = s->path;
    g->running = s->sim != NULL;
    g->toggles = &app->toggles;
    g->open_dialog = &app->open_dialog;
    g->selected = app->selected;
    g->load_error = app->edits.load_error;
    g->edit_message = app->edits.edit_message;
    g->edit_rejected = app->edits.edit_rejected;
    g->launcher.scene_count = app->launcher.scene_count;
    g->launcher.scenes = (const char(*)[GUI_PATH_MAX])app->launcher.scenes;
    g->launcher.scene_descriptions =
        (const char(*)[GUI_DESCRIPTION_MAX])app->launcher.scene_descriptions;
    g->launcher.described = app->launcher.described;
    g->launcher.scene_thumbnails = app->launcher.scene_thumbs;
    g->show_help = &app->show_help;
    g->launcher.recent_count = app->launcher.recent_count;
    g->launcher.recent = (const char(*)[GUI_PATH_MAX])app->launcher.recent;
    app_log_snapshot(app, &g->log_count);
    g->log = app->log.snapshot;
    g->engine.fps = app->rates.fps;
    g->engine.engine_rate = app->rates.engine_rate;
    g->device = app_device_gui(app);
    g->map_view = app_map_view(app);
    g->live = app_live_series(app, &g->live_count);
    g->load_cycle = app->load.configured ? app->load.text : "";
    g->load_cycle_on = app->load.on;
    g->keys_in_panels = app->keys_in_panels;
    g->arrow_kinds = app->arrow_kinds;
    g->arrow_px_per_distance = app_arrow_px_per_distance(app);
    g->label_count = place_labels(app);
    g->labels = app->labels;
    g->following = app->follow_body >= 0 && s->view ? s->view->bodies[app->follow_body].name : "";
    if (s->sim) {
        g->clock.paused = sim_paused(s->sim);
        g->clock.speed = sim_speed(s->sim);
        g->clock.display_time = s->frame_time;
        g->clock.state_time = registry_state_time(s->reg);
        g->clock.history_start = registry_history_start(s->reg);
        g->clock.dt = sim_dt(s->sim);
        RegistrySlot slot;
        registry_slot_read(s->reg, REGISTRY_SLOT_ENGINE_STATS, &slot);
        SimEngineStats st = sim_engine_stats_unpack(&slot);
        g->engine.engine_step_us = st.step_time_us;
        g->engine.engine_headroom = st.realtime_factor;
        g->engine.sim_rate = app->rates.sim_rate;
        g->engine.active_contacts = st.active_contacts;
        g->engine.contacts_total = st.contact_reports;
        g->engine.contacts_shown = st.contacts_published;
        g->engine.contacts_dropped = (double)st.contacts_dropped;
        g->engine.engine_resets = (double)st.resets;
        g->engine.awake_bodies = st.awake_bodies;
        g->engine.bodies = st.bodies;
    }
    if (app->video.pipe) {
        g->capture.video_recording = true;
        g->capture.video_path = app->video.path;
        g->capture.video_frames = app->video.frames;
        g->capture.video_bytes = app_video_bytes(app);
        g->capture.video_failed = app->video.failed;
    }
    if (app->rec.recorder) {
        RecorderStats rs = recorder_stats(app->rec.recorder);
        g->capture.recording = true;
        g->capture.record_path = app->rec.record_path;
        g->capture.record_elapsed = issim_wall_time() - app->rec.record_wall_start;
        g->capture.record_bytes = rs.bytes_written;
        g->capture.record_rows = rs.rows_written; /* in the file, not merely queued */
        g->capture.record_dropped = rs.rows_dropped;
        g->capture.record_failed = rs.failed;
    }
    app_playback_fill(app, g);
}

/* ===== One frame ===== */

/* Inside a pile every contact's cross and arrow hide each other: with the toggle on, only the
 * selected body's are drawn (none while nothing is selected). */
static int keep_selected_contacts(const App *app, ContactReport *c, int n) {
    const SceneView *v = app->session.view;
    uint64_t id = 0;
    for (int b = 0; b < v->body_count; b++)
        if (thing_id_equal(v->bodies[b].thing, app->selected))
            id = engine_body_id_pack(v->bodies[b].id);
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (id != 0 && (c[i].body_a == id || c[i].body_b == id))
            c[kept++] = c[i];
    return kept;
}

/* The View menu's window switches: vsync (and the limiter) and fullscreen. */
static void apply_window_toggles(App *app) {
    if (app->toggles.vsync != app->options.vsync) {
        app->options.vsync = app->toggles.vsync;
        SDL_GL_SetSwapInterval(app->options.vsync ? 1 : 0);
    }
    bool full = (SDL_GetWindowFlags(app->win.window) & SDL_WINDOW_FULLSCREEN_DESKTOP) ==
                SDL_WINDOW_FULLSCREEN_DESKTOP;
    if (app->toggles.fullscreen != full &&
        SDL_SetWindowFullscreen(app->win.window,
                                app->toggles.fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0) != 0) {
        issim_log(ISSIM_LOG_WARN, "fullscreen: %s", SDL_GetError());
        app->toggles.fullscreen = full;
    }
}

/* A view with smooth surfaces draws their contacts always (the renderer's smooth contacts). */
static bool view_has_patches(const SceneView *view) {
    for (int m = 0; m < view->mesh_count; m++)
        if (view->meshes[m].patch_of_triangle)
            return true;
    return false;
}

static void draw_scene(App *app) {
    Session *s = &app->session;
    glViewport(0, 0, app->win.width, app->win.height);
    /* The side panels draw no background (gui.h): the clear paints it. */
    float panel[3] = {0.16f, 0.18f, 0.22f};
    if (app->win.gui_ready && app->options.show_gui)
        gui_panel_color(panel);
    glClearColor(panel[0], panel[1], panel[2], 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    app->arrow_kinds = 0u;
    if (!s->view)
        return;
    ContactReport *contacts = s->drawn;
    double tc;
    const ContactReport *read = NULL;
    int n = (app->toggles.contacts || app->toggles.forces || view_has_patches(s->view))
                ? app_contacts(app, &tc, &read)
                : 0;
    if (n > 0)
        memcpy(contacts, read, sizeof *contacts * (size_t)n);
    if (app->toggles.selected_contacts)
        n = keep_selected_contacts(app, contacts, n);
    int selected = -1;
    for (int i = 0; i < s->view->instance_count; i++)
        if (thing_id_equal(s->view->instances[i].thing, app->selected))
            selected = i;
    Vec3 from = {0, 0, 0};
    if (app->pointer.drag.active && app->pointer.drag.body >= 0)
        for (int i = 0; i < s->view->instance_count; i++)
            if (s->view->instances[i].body == app->pointer.drag.body) {
                from = pose_apply(s->view->instances[i].pose, app->pointer.drag.anchor_local);
                break;
            }
    RenderArrow arrows[1 + APP_DEVICE_ARROWS];
    int arrow_count = app_load_arrows(app, arrows);
    arrow_count += app_device_arrows(app, NULL, arrows + arrow_count, NULL);
    app->arrow_kinds = app->toggles.forces && n > 0 ? 1u << GUI_ARROW_CONTACT : 0u;
    for (int i = 0; i < arrow_count; i++)
        app->arrow_kinds |= 1u << arrows[i].kind;
    RenderFrame f = {.view = s->view,
                     .camera = &app->camera,
                     .toggles = {.grid = app->toggles.grid,
                                 .contacts = app->toggles.contacts,
                                 .forces = app->toggles.forces,
                                 .trails = app->toggles.trails,
                                 .bodies = app->toggles.bodies},
                     .selected_instance = selected,
                     .selected_thing = app->selected,
                     .contacts = contacts,
                     .contact_count = n,
                     .trails = app->trails_state.render_trails,
                     .drag_active = app->pointer.drag.active,
                     .drag_from = from,
                     .drag_to = app->pointer.drag.target,
                     .arrows = arrows,
                     .arrow_count = arrow_count,
                     .x = app->win.view_x,
                     .y = app->win.view_y,
                     .width = app->win.view_w,
                     .height = app->win.view_h,
                     .window_height = app->win.height};
    renderer_draw(app->win.renderer, &f);
}

static void take_screenshot(App *app) {
    if (!app->screenshot_path[0])
        return;
    IssimError err = {0};
    if (display_write_png(app->screenshot_path, app->win.width, app->win.height, &err) ==
        ISSIM_OK) {
        issim_log(ISSIM_LOG_INFO, "screenshot %s", app->screenshot_path);
        printf("screenshot %s t=%.9g\n", app->screenshot_path, app->session.frame_time);
    } else {
        issim_log(ISSIM_LOG_ERROR, "%s", err.message);
        app->exit_status = 1;
    }
    fflush(stdout);
    app->screenshot_path[0] = '\0';
}

/* The 3D view's rectangle: the window between the GUI's side panels, menu and status bar
 * (gui.cpp's layout), or the whole window without the GUI. */
static void layout_view(App *app) {
    int side = gui_side_width(app->win.width);
    bool panels = app->win.gui_ready && app->options.show_gui && app->toggles.panels &&
                  app->win.width >= 2 * side + GUI_MIN_VIEW_WIDTH;
    app->win.view_x = panels ? side : 0;
    app->win.view_y = panels ? GUI_MENU_HEIGHT : 0;
    app->win.view_w = app->win.width - 2 * app->win.view_x;
    app->win.view_h = app->win.height - (panels ? GUI_MENU_HEIGHT + GUI_STATUS_HEIGHT : 0);
}

/* Wall seconds the engine may trail the clock before the display counts it as lagging, and
 * when it counts as caught up again (hysteresis, so the rate does not flap). */
#define ENGINE_LAG_ON 0.1
#define ENGINE_LAG_OFF 0.02
/* Frame rates: normal, and while the engine lags. 30 is what a user needs to follow a pile
 * (issue 17's target); the display's cost to the lagging engine at that rate is measured by
 * the script's bench / bench_idle pairs (docs/performance.md, "the pile at 30 fps"). */
#define DISPLAY_FPS 60.0
#define DISPLAY_FPS_ENGINE_BOUND 30.0

static void update_engine_bound(App *app) {
    Sim *sim = app->session.sim;
    if (!sim || sim_paused(sim)) {
        app->rates.engine_bound = false;
        return;
    }
    double lag = (sim_display_time(sim) - registry_state_time(app->session.reg)) / sim_speed(sim);
    if (lag > ENGINE_LAG_ON)
        app->rates.engine_bound = true;
    else if (lag < ENGINE_LAG_OFF)
        app->rates.engine_bound = false;
}

/* A key press, typed text or a click: input the GUI may act on at once. */
static bool is_gui_input(const SDL_Event *e) {
    return e->type == SDL_KEYDOWN || e->type == SDL_TEXTINPUT || e->type == SDL_MOUSEBUTTONDOWN ||
           e->type == SDL_MOUSEBUTTONUP;
}

/* The events waiting, each to its handler; true when one was GUI input. */
static bool handle_events(App *app) {
    bool input = false;
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
        input = input || is_gui_input(&e);
        app_handle_event(app, &e);
    }
    return input;
}

/* GUI frames built and not drawn, so that input acts before the next frame is drawn (a heavy
 * scene's 3D view takes most of a frame on llvmpipe): one for the keys and text, then one per
 * queued click change (gui_input_pending): a slow frame loses no click and no double-click. */
static void gui_input_frames(App *app, bool input) {
    for (int k = 0; k < 16 && app->win.gui_ready && app->options.show_gui && !app->quit &&
                    (input || gui_input_pending());
         k++, input = false) {
        GuiState state;
        GuiRequests req = {.camera_preset = -1};
        fill_gui_state(app, &state);
        gui_frame(&state, &req);
        app_carry_out_requests(app, &req);
    }
}

/* The frame limiter's wait, spent waiting for input: a key or a click that arrives between two
 * frames is handled when it comes, in a GUI frame that is built and not drawn (gui_input_frames),
 * so an edit its Return commits goes to the engine now rather than at the next frame, up to a
 * period later (33 ms at 30 fps). What is drawn still changes at the next frame only. */
static void wait_for_input(App *app, double until) {
    for (double left = until - issim_wall_time(); left > 0; left = until - issim_wall_time()) {
        if (left < 1e-3 || !SDL_WaitEventTimeout(NULL, (int)(left * 1e3))) {
            double rest = until - issim_wall_time();
            if (rest > 0 && rest < 1e-3)
                nanosleep(&(struct timespec){0, (long)(rest * 1e9)}, NULL);
            continue;
        }
        gui_input_frames(app, handle_events(app));
    }
}

/* With vsync asked for, at most 60 frames per second even where swapping does not wait (Xvfb,
 * offscreen): frames nobody can see would only take CPU from the engine. While the engine
 * cannot keep up with the clock (a heavy scene, or a speed factor beyond it) the display
 * draws 30: every frame's CPU then comes out of the simulation's progress on a machine without
 * a spare core (docs/performance.md, the display's cost to the engine). */
static void limit_frame_rate(App *app) {
    if (!app->options.vsync)
        return;
    update_engine_bound(app);
    double fps = app->rates.engine_bound ? DISPLAY_FPS_ENGINE_BOUND : DISPLAY_FPS;
    if (app->rates.max_fps > 0)
        fps = fmin(fps, app->rates.max_fps);
    double period = 1.0 / fps;
    double next = app->rates.last_swap + period;
    wait_for_input(app, next);
    app->rates.last_swap = fmax(next, issim_wall_time() - period);
}

static void frame(App *app) {
    app->rates.frame_count++;
    apply_window_toggles(app);
    layout_view(app);
    gui_input_frames(app, handle_events(app));
    app_poll_edits(app);
    app_playback_update(app);
    app_load_pump(app);
    if (app->options.show_gui) {
        app_describe_next_scene(app);
        app_live_sample(app);
    }
    app_read_frame(app);
    app_record_pump(app);
    update_rates(app);
    draw_scene(app);
    /* Input that came while the 3D view was drawn acts before the panels are built and drawn:
     * on a loaded machine each part can take tens of milliseconds. */
    gui_input_frames(app, handle_events(app));
    app_video_frame(app); /* the 3D view, before the panels are drawn over the window */
    if (app->win.gui_ready && app->options.show_gui) {
        GuiState state;
        GuiRequests req = {.camera_preset = -1};
        fill_gui_state(app, &state);
        gui_frame(&state, &req);
        gui_render();
        app_carry_out_requests(app, &req);
    }
    take_screenshot(app);
    /* Input that came while this frame was drawn acts now, not after the swap (which waits for
     * llvmpipe's rasterisers) and the next frame's start. */
    gui_input_frames(app, handle_events(app));
    SDL_GL_SwapWindow(app->win.window);
    limit_frame_rate(app);
}

/* ===== Benchmarks (--bench) ===== */

static double engine_steps(const App *app) {
    RegistrySlot slot;
    registry_slot_read(app->session.reg, REGISTRY_SLOT_ENGINE_STATS, &slot);
    return (double)sim_engine_stats_unpack(&slot).steps;
}

/* CPU time (s) of the display's own threads: the main thread and llvmpipe's rasterisers. Under
 * load from other processes the frame rate says little about the display's cost; its CPU time
 * per frame does. */
double display_cpu_seconds(void) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return 0.0;
    double ticks = 0.0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        char path[300], stat[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = '\0';
        /* pid (comm) state ...: utime and stime are fields 14 and 15, the 12th and 13th after
         * the closing parenthesis of comm. */
        char *open = strchr(stat, '('), *close = strrchr(stat, ')');
        if (!open || !close)
            continue;
        bool main_thread = atoi(e->d_name) == (int)getpid();
        bool rasteriser = strncmp(open + 1, "llvmpipe-", 9) == 0;
        unsigned long utime = 0, stime = 0;
        if ((main_thread || rasteriser) &&
            sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                   &stime) == 2)
            ticks += (double)(utime + stime);
    }
    closedir(dir);
    return ticks / (double)sysconf(_SC_CLK_TCK);
}

/* Frames per second and engine throughput over options.bench_seconds. Without rendering the
 * main thread only sleeps: the baseline the display's cost is measured against. */
static void run_bench(App *app) {
    Session *s = &app->session;
    sim_set_speed(s->sim, app->options.bench_speed);
    /* throughput at the bench's speed: slow motion at impacts would hold the clock, and the
     * engine with it, in each impact's window (point_drop's 26 windows last 52 s) */
    double rate, window;
    sim_slow_motion(s->sim, &rate, &window);
    sim_set_slow_motion(s->sim, 0.0, window);
    double warm = issim_wall_time() + 0.5;
    while (issim_wall_time() < warm && !app->quit) {
        if (app->win.window)
            frame(app);
        else
            nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    if (app->options.bench_paused)
        sim_set_paused(s->sim, true);
    double w0 = issim_wall_time(), st0 = registry_state_time(s->reg), steps0 = engine_steps(app);
    double cpu0 = display_cpu_seconds();
    int frames = 0;
    while (issim_wall_time() - w0 < app->options.bench_seconds && !app->quit) {
        if (app->win.window) {
            frame(app);
            frames++;
        } else {
            nanosleep(&(struct timespec){0, 5000000}, NULL);
        }
    }
    double wall = issim_wall_time() - w0;
    double sim_seconds = registry_state_time(s->reg) - st0;
    double cpu = display_cpu_seconds() - cpu0;
    printf("bench paused=%d bodies=%d render=%d frames=%d wall=%.3f fps=%.1f engine_steps=%.0f "
           "engine_steps_per_s=%.1f sim_seconds_per_s=%.4f width=%d height=%d "
           "display_cpu_ms_per_frame=%.2f display_cpu_share=%.3f collision_thread=%d "
           "sim_from=%.6f sim_to=%.6f\n",
           app->options.bench_paused, s->view ? s->view->body_count : 0, app->win.window != NULL,
           frames, wall, frames / wall, engine_steps(app) - steps0,
           (engine_steps(app) - steps0) / wall, sim_seconds / wall, app->win.width, app->win.height,
           frames > 0 ? 1e3 * cpu / frames : 0.0, cpu / wall,
           engine_collision_threaded(sim_engine(s->sim)), st0, st0 + sim_seconds);
    fflush(stdout);
}

/* ===== Entry ===== */

static int run_loop(App *app, const char *scene_path) {
    layout_view(app);
    if (scene_path)
        app_open_scene(app, scene_path, false); /* a failure is logged (stderr, log panel) */
    if (app->options.bench_seconds > 0) {
        if (!app->session.sim)
            return 1;
        run_bench(app);
        return app->exit_status;
    }
    double shot_at = issim_wall_time() + 1.0;
    while (!app->quit) {
        if (app->script && !script_tick(app->script, app))
            break;
        if (app->options.screenshot_path && !app->script && issim_wall_time() >= shot_at) {
            issim_strlcpy(app->screenshot_path, app->options.screenshot_path,
                          sizeof app->screenshot_path);
            frame(app);
            break;
        }
        frame(app);
    }
    return app->exit_status;
}

int display_run(const char *scene_path, const SimOptions *sim_options,
                const DisplayOptions *options) {
    App *app = calloc(1, sizeof *app);
    if (!app) {
        fprintf(stderr, "issim: out of memory\n");
        return 1;
    }
    app->options = options ? *options : display_options_default();
    app->sim_options = sim_options ? *sim_options : sim_options_default();
    app->toggles =
        (GuiToggles){.grid = true, .bodies = true, .panels = true, .vsync = app->options.vsync};
    app->selected = thing_id_null();
    app->follow_body = -1;
    app->rates.sim_rate = NAN;
    app->rates.fps_wall = issim_wall_time();
    app_log_init(&app->log);
    app_log_install(app);
    app_load_recent(app);
    app_playback_load_preference(app);
    app_scan_scenes(app);
    IssimError err = {0};
    if (app->options.script_path) {
        app->script = script_load(app->options.script_path, &err);
        if (!app->script) {
            fprintf(stderr, "issim: %s\n", err.message);
            issim_log_set_handler(NULL, NULL);
            app_log_destroy(&app->log);
            free(app);
            return 1;
        }
    }
    bool windowed = !(app->options.bench_seconds > 0 && app->options.bench_no_render);
    int rc = 1;
    if (windowed && !open_window(app, &err)) {
        fprintf(stderr, "issim: %s\n", err.message);
    } else {
        rc = run_loop(app, scene_path);
    }
    app_video_stop(app);
    app_close_session(app);
    free(app->trails_state.trails);
    free(app->edits.pending);
    free(app->trails_state.render_trails);
    if (windowed)
        close_window(app);
    script_destroy(app->script);
    issim_log_set_handler(NULL, NULL);
    app_log_destroy(&app->log);
    free(app);
    return rc;
}
