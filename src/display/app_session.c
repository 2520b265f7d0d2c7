/* The display's side of a session: opening scenes (a failed load keeps the running scene),
 * reading the state at display time, edits through the registry's queue and their results,
 * the recorder fed from the committed trajectory, the log ring, saving. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_internal.h"

/* ===== Log ring (any thread appends) ===== */

static App *log_app; /* the one App of the process, for the log handler */

static void log_handler(IssimLogLevel level, const char *message, void *user) {
    App *app = user;
    AppLog *log = &app->log;
    pthread_mutex_lock(&log->mutex);
    int slot = (log->start + log->count) % GUI_LOG_LINES;
    if (log->count == GUI_LOG_LINES)
        log->start = (log->start + 1) % GUI_LOG_LINES;
    else
        log->count++;
    log->lines[slot].level = level;
    issim_strlcpy(log->lines[slot].text, message, sizeof log->lines[slot].text);
    pthread_mutex_unlock(&log->mutex);
    if (level >= ISSIM_LOG_WARN)
        fprintf(stderr, "issim: %s: %s\n", level == ISSIM_LOG_WARN ? "warning" : "error", message);
}

void app_log_init(AppLog *log) {
    memset(log, 0, sizeof *log);
    pthread_mutex_init(&log->mutex, NULL);
}

void app_log_destroy(AppLog *log) {
    pthread_mutex_destroy(&log->mutex);
}

void app_log_install(App *app) {
    log_app = app;
    issim_log_set_handler(log_handler, app);
}

void app_log_snapshot(App *app, int *count) {
    AppLog *log = &app->log;
    pthread_mutex_lock(&log->mutex);
    for (int i = 0; i < log->count; i++)
        log->snapshot[i] = log->lines[(log->start + i) % GUI_LOG_LINES];
    *count = log->count;
    pthread_mutex_unlock(&log->mutex);
}

/* ===== Scenes ===== */

static int compare_paths(const void *a, const void *b) {
    return strcmp(a, b);
}

/* A scene whose file name is listed already is left out: the earlier folder takes its place,
 * as scene_find prefers the working directory's (the same file reached twice is one entry). */
static bool scene_listed(const App *app, const char *file) {
    for (int i = 0; i < app->launcher.scene_count; i++) {
        const char *slash = strrchr(app->launcher.scenes[i], '/');
        if (strcmp(slash ? slash + 1 : app->launcher.scenes[i], file) == 0)
            return true;
    }
    return false;
}

static bool is_lua(const char *name) {
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".lua") == 0;
}

static void add_scene(App *app, const char *path) {
    const char *slash = strrchr(path, '/');
    if (app->launcher.scene_count < GUI_MAX_SCENES && strlen(path) < GUI_PATH_MAX &&
        !scene_listed(app, slash ? slash + 1 : path))
        issim_strlcpy(app->launcher.scenes[app->launcher.scene_count++], path, GUI_PATH_MAX);
}

static void scan_folder(App *app, const char *folder) {
    DIR *dir = opendir(folder);
    if (!dir)
        return;
    char found[GUI_MAX_SCENES][GUI_PATH_MAX];
    int count = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && count < GUI_MAX_SCENES) {
        int n = snprintf(found[count], GUI_PATH_MAX, "%.*s/%s", GUI_PATH_MAX, folder, e->d_name);
        count += is_lua(e->d_name) && n > 0 && n < GUI_PATH_MAX;
    }
    closedir(dir);
    qsort(found, (size_t)count, GUI_PATH_MAX, compare_paths);
    for (int i = 0; i < count; i++)
        add_scene(app, found[i]);
}

/* The user's own scenes: $XDG_CONFIG_HOME/issim/scenes (else ~/.config/issim/scenes), one
 * scene file or folder of scenes a line, '#' comments. */
static void scan_user_list(App *app) {
    char path[GUI_PATH_MAX + 16], line[GUI_PATH_MAX];
    if (!app_config_path("scenes", path, sizeof path))
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        if (is_lua(line))
            add_scene(app, line);
        else
            scan_folder(app, line);
    }
    fclose(f);
}

/* The folder of a scene path ("" for a bare name: the working directory, listed anyway). */
static void scene_folder(const char *path, char *out, size_t size) {
    const char *slash = strrchr(path, '/');
    if (!slash)
        out[0] = '\0';
    else
        snprintf(out, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* A scene opened from another folder brings its neighbours into the launcher. */
static void rescan_for_folder(App *app) {
    char folder[GUI_PATH_MAX];
    scene_folder(app->session.path, folder, sizeof folder);
    if (strcmp(folder, app->launcher.scanned_folder) != 0)
        app_scan_scenes(app);
}

/* Wherever issim runs: ./scenes, the opened scene's folder, the user's list, the installed
 * data directory, then the source tree the program was built from. */
void app_scan_scenes(App *app) {
    app_thumbnails_free(app);
    app->launcher.scene_count = 0;
    scan_folder(app, "scenes");
    char folder[GUI_PATH_MAX + 16];
    scene_folder(app->session.path, app->launcher.scanned_folder,
                 sizeof app->launcher.scanned_folder);
    if (app->launcher.scanned_folder[0])
        scan_folder(app, app->launcher.scanned_folder);
    scan_user_list(app);
    char data[GUI_PATH_MAX];
    if (scene_data_dir(data, sizeof data)) {
        snprintf(folder, sizeof folder, "%s/scenes", data);
        scan_folder(app, folder);
    }
    if (scene_source_dir(data, sizeof data)) {
        snprintf(folder, sizeof folder, "%s/scenes", data);
        scan_folder(app, folder);
    }
    app->launcher.described = 0;
}

bool app_describe_next_scene(App *app) {
    if (app->launcher.described >= app->launcher.scene_count)
        return false;
    int i = app->launcher.described++;
    ThingDb *db = NULL;
    IssimError err = {0};
    char *out = app->launcher.scene_descriptions[i];
    if (scene_load_file(app->launcher.scenes[i], NULL, &db, &err) == ISSIM_OK) {
        const char *d = thing_string(db, thingdb_find_kind(db, THING_UNIVERSE), "description");
        issim_strlcpy(out, d[0] ? d : "(no description)", GUI_DESCRIPTION_MAX);
    } else {
        snprintf(out, GUI_DESCRIPTION_MAX, "(does not load: %.200s)", err.message);
    }
    thingdb_destroy(db);
    return true;
}

/* The config file name in the user's issim folder ($XDG_CONFIG_HOME/issim, else
 * ~/.config/issim), created when create is true; false without a home. */
static bool config_file(const char *name, bool create, char *out, size_t size) {
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    char dir[GUI_PATH_MAX];
    if (xdg && xdg[0] == '/')
        snprintf(dir, sizeof dir, "%s/issim", xdg);
    else if (home && home[0])
        snprintf(dir, sizeof dir, "%s/.config/issim", home);
    else
        return false;
    if (create) {
        char parent[GUI_PATH_MAX];
        issim_strlcpy(parent, dir, sizeof parent);
        *strrchr(parent, '/') = '\0';
        mkdir(parent, 0755);
        mkdir(dir, 0755);
    }
    return snprintf(out, size, "%s/%s", dir, name) < (int)size;
}

bool app_config_path(const char *name, char *out, size_t size) {
    return config_file(name, false, out, size);
}

bool app_config_path_to_write(const char *name, char *out, size_t size) {
    return config_file(name, true, out, size);
}

/* The recent list outlives the session: written whole to a temporary file then renamed, so
 * two windows never leave half a list. */
static void save_recent(const App *app) {
    char path[GUI_PATH_MAX + 16], tmp[GUI_PATH_MAX + 40];
    if (!config_file("recent", true, path, sizeof path))
        return;
    snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    for (int i = 0; i < app->launcher.recent_count; i++)
        fprintf(f, "%s\n", app->launcher.recent[i]);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        remove(tmp);
}

void app_load_recent(App *app) {
    char path[GUI_PATH_MAX + 16], line[GUI_PATH_MAX];
    app->launcher.recent_count = 0;
    FILE *f = config_file("recent", false, path, sizeof path) ? fopen(path, "r") : NULL;
    if (!f)
        return;
    while (app->launcher.recent_count < GUI_MAX_RECENT && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0])
            issim_strlcpy(app->launcher.recent[app->launcher.recent_count++], line, GUI_PATH_MAX);
    }
    fclose(f);
}

/* Absolute, so the list still opens its scenes from another working directory. */
static void remember_recent(App *app, const char *opened) {
    char path[PATH_MAX];
    if (!realpath(opened, path))
        issim_strlcpy(path, opened, sizeof path);
    int found = -1;
    for (int i = 0; i < app->launcher.recent_count; i++)
        if (strcmp(app->launcher.recent[i], path) == 0)
            found = i;
    int last = found >= 0
                   ? found
                   : (app->launcher.recent_count < GUI_MAX_RECENT ? app->launcher.recent_count++
                                                                  : GUI_MAX_RECENT - 1);
    for (int i = last; i > 0; i--)
        memcpy(app->launcher.recent[i], app->launcher.recent[i - 1], GUI_PATH_MAX);
    issim_strlcpy(app->launcher.recent[0], path, GUI_PATH_MAX);
    save_recent(app);
}

static void free_session(Session *s) {
    if (s->view) {
        scene_view_release_gl(s->view);
        scene_view_destroy(s->view);
    }
    sim_destroy(s->sim);
    thingdb_destroy(s->db);
    free(s->frame);
    free(s->contacts);
    free(s->drawn);
    memset(s, 0, sizeof *s);
}

static bool allocate_trails(App *app, int bodies) {
    free(app->trails_state.trails);
    free(app->trails_state.render_trails);
    app->trails_state.trails =
        calloc((size_t)(bodies > 0 ? bodies : 1), sizeof *app->trails_state.trails);
    app->trails_state.render_trails =
        calloc((size_t)(bodies > 0 ? bodies : 1), sizeof *app->trails_state.render_trails);
    app->trails_state.trail_last_t = NAN;
    return app->trails_state.trails && app->trails_state.render_trails;
}

/* Builds a session from a loaded database; the engine thread is started last. */
static bool build_session(App *app, Session *s, const ThingDb *db, const char *path,
                          const SimOptions *options, IssimError *err) {
    s->sim = sim_create_from_db(db, path, options, err);
    if (!s->sim)
        return false;
    Engine *e = sim_engine(s->sim); /* the engine thread has not started: ours to read */
    s->db = thingdb_clone(engine_thingdb(e));
    s->reg = sim_registry(s->sim);
    s->var_count = registry_var_count(s->reg);
    s->frame = calloc((size_t)s->var_count, sizeof(double));
    s->contact_capacity = sim_contact_capacity(s->sim);
    s->contacts = calloc((size_t)s->contact_capacity + 1, sizeof *s->contacts);
    s->drawn = calloc((size_t)s->contact_capacity + 1, sizeof *s->drawn);
    s->contacts_frame = -1;
    int bodies = engine_body_count(e);
    const char **names = calloc((size_t)(bodies > 0 ? bodies : 1), sizeof *names);
    if (!s->db || !s->frame || !s->contacts || !s->drawn || !names) {
        free(names);
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return false;
    }
    for (int b = 0; b < bodies; b++)
        names[b] = engine_body_name(e, engine_body_id(e, b));
    char dir[GUI_PATH_MAX];
    issim_strlcpy(dir, path, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        issim_strlcpy(dir, ".", sizeof dir);
    s->view = scene_view_create(s->db, s->reg, names, bodies, dir, err);
    free(names);
    if (!s->view)
        return false;
    for (int b = 0; b < bodies; b++) /* view body b is engine body b (engine order) */
        s->view->bodies[b].id = engine_body_id(e, b);
    if (app->win.renderer) /* none in the engine-throughput baseline (--bench-no-render) */
        renderer_prepare_view(app->win.renderer, s->view);
    issim_strlcpy(s->path, path, sizeof s->path);
    return sim_start(s->sim, err) == ISSIM_OK;
}

int app_contacts(App *app, double *t, const ContactReport **out) {
    Session *s = &app->session;
    *out = s->contacts;
    if (!s->sim) {
        *t = NAN;
        return 0;
    }
    int fine_n;
    if (app_playback_contacts(app, &fine_n, t, out)) /* between output frames (slow motion) */
        return fine_n;
    if (s->contacts_frame != app->rates.frame_count) {
        s->contact_time = NAN;
        s->contact_count =
            registry_read_contacts(s->reg, &s->contact_time, s->contacts, s->contact_capacity);
        s->contacts_frame = app->rates.frame_count;
    }
    *t = s->contact_time;
    return s->contact_count;
}

static void initial_camera(App *app) {
    const ThingDb *db = app->session.db;
    ThingId u = thingdb_find_kind(db, THING_UNIVERSE);
    app->camera =
        camera_from_eye(thing_vec3(db, u, "camera_eye"), thing_vec3(db, u, "camera_target"),
                        thing_real(db, u, "camera_fov"), thing_vec3(db, u, "camera_up"));
    /* as the camera: each scene opens with its own (box_on_plane's point is its contacts);
     * Reset and Reload keep what the user chose */
    app->toggles.contacts = thing_bool(db, u, "show_contacts");
    app->toggles.forces = thing_bool(db, u, "show_forces");
    const char *follow = thing_string(db, u, "camera_follow");
    app->follow_body = follow[0] ? app_view_body(app, follow) : -1;
    if (follow[0] && app->follow_body < 0)
        issim_log(ISSIM_LOG_WARN, "camera.follow: no body named '%s'", follow);
}

int app_view_body(const App *app, const char *name) {
    const SceneView *v = app->session.view;
    for (int b = 0; v && b < v->body_count; b++)
        if (strcmp(v->bodies[b].name, name) == 0)
            return b;
    return -1;
}

bool app_follow(App *app, int body) {
    const SceneView *v = app->session.view;
    bool known = v && body >= 0 && body < v->body_count;
    app->follow_body = known ? body : -1;
    return known || body < 0;
}

/* A followed body keeps its place on screen: the camera's target is its centre, the eye keeps
 * its offset (orbit and zoom still work about it). */
static void follow_camera(App *app) {
    const Session *s = &app->session;
    if (app->follow_body < 0 || !s->view || app->follow_body >= s->view->body_count)
        return;
    const double *p = s->frame + s->view->bodies[app->follow_body].var_pos;
    app->camera.target = (Vec3){p[0], p[1], p[2]};
}

/* Replaces the session by one built from db; on failure the old one keeps running. */
static bool replace_session(App *app, const ThingDb *db, const char *path,
                            const SimOptions *options, bool keep_camera, IssimError *err) {
    Session fresh = {0};
    if (!build_session(app, &fresh, db, path, options, err)) {
        free_session(&fresh);
        return false;
    }
    /* Reset and reload keep the view as the user left it: camera and selection (by path, the
     * new database's ids are its own). */
    char selected[256] = "";
    if (keep_camera && app->session.db && thingdb_valid(app->session.db, app->selected))
        thing_path(app->session.db, app->selected, selected, sizeof selected);
    app_record_stop(app);
    app_device_detach(app); /* the servo writes into the old registry: stop it first */
    free_session(&app->session);
    app->session = fresh;
    app->selected = selected[0] ? thingdb_find(fresh.db, selected) : thing_id_null();
    app->pointer.drag.active = false;
    app->edits.pending_count = 0;
    app->edits.edit_message[0] = '\0';
    allocate_trails(app, fresh.view->body_count);
    if (!keep_camera)
        initial_camera(app);
    else if (app->follow_body >= fresh.view->body_count)
        app->follow_body = -1; /* a reload that lost bodies */
    app_device_attach(app);    /* --device: on the new scene if it has a haptics table */
    app_load_from_scene(app);  /* a body's load cycle, if any */
    return true;
}

bool app_open_scene(App *app, const char *path, bool keep_camera) {
    IssimError err = {0};
    ThingDb *db = NULL;
    SimOptions options = sim_options_default();
    options.quiet = true;
    if (!app->first_scene_done) {
        options = app->sim_options; /* the command line's --set overrides, first scene only */
        options.quiet = true;
    }
    SceneLimits limits = scene_limits_default();
    limits.params = options.params; /* --param: the first scene only, as --set */
    limits.param_count = options.param_count;
    bool ok = scene_load_file(path, &limits, &db, &err) == ISSIM_OK &&
              replace_session(app, db, path, &options, keep_camera, &err);
    thingdb_destroy(db);
    app->first_scene_done = true;
    if (!ok) {
        issim_strlcpy(app->edits.load_error, err.message, sizeof app->edits.load_error);
        issim_log(ISSIM_LOG_ERROR, "%s", err.message);
        printf("open %s failed: %s\n", path, err.message);
        fflush(stdout);
        return false;
    }
    app->edits.load_error[0] = '\0';
    remember_recent(app, path);
    rescan_for_folder(app);
    issim_log(ISSIM_LOG_INFO, "opened %s", path);
    printf("open %s ok\n", path);
    fflush(stdout);
    return true;
}

void app_close_session(App *app) {
    app->load.on = app->load.configured = false;
    app_record_stop(app);
    app_device_detach(app);
    free_session(&app->session);
}

/* Reset: the scene as edited (the display's copy), from its initial state. */
void app_reset(App *app) {
    if (!app->session.sim)
        return;
    app->resets++;
    IssimError err = {0};
    SimOptions options = sim_options_default();
    options.quiet = true;
    ThingDb *db = thingdb_clone(app->session.db);
    char path[GUI_PATH_MAX];
    issim_strlcpy(path, app->session.path, sizeof path);
    bool paused = sim_paused(app->session.sim);
    double speed = sim_speed(app->session.sim), slow_rate, slow_window;
    sim_slow_motion(app->session.sim, &slow_rate, &slow_window);
    if (!db || !replace_session(app, db, path, &options, true, &err))
        issim_log(ISSIM_LOG_ERROR, "reset failed: %s", db ? err.message : "out of memory");
    thingdb_destroy(db);
    sim_set_paused(app->session.sim, paused);
    sim_set_speed(app->session.sim, speed);
    sim_set_slow_motion(app->session.sim, slow_rate, slow_window);
}

void app_step(App *app) {
    Sim *sim = app->session.sim;
    if (!sim)
        return;
    sim_set_paused(sim, true);
    sim_seek(sim, sim_display_time(sim) + sim_dt(sim));
}

void app_seek(App *app, double t) {
    if (!app->session.sim)
        return;
    sim_seek(app->session.sim, t);
    app->seeked = true;
}

/* Run; after scrubbing back, from that instant: the engine discards the old future. */
void app_run(App *app) {
    Sim *sim = app->session.sim;
    if (!sim || !app_playback_run(app)) /* a branch asks, or resumes its own way */
        return;
    if (app->seeked)
        sim_request_reset(sim);
    app->seeked = false;
    sim_set_paused(sim, false);
}

/* ===== State at display time ===== */

static void push_trails(App *app) {
    Session *s = &app->session;
    if (!app->toggles.trails) {
        app->trails_state.trail_last_t = NAN; /* trails start when they are switched on */
        for (int b = 0; b < s->view->body_count; b++)
            app->trails_state.trails[b].count = app->trails_state.render_trails[b].count = 0;
        return;
    }
    double t = s->frame_time;
    if (isfinite(app->trails_state.trail_last_t) && t < app->trails_state.trail_last_t) {
        for (int b = 0; b < s->view->body_count; b++) /* back in time: another past */
            app->trails_state.trails[b].count = app->trails_state.render_trails[b].count = 0;
    }
    if (isfinite(app->trails_state.trail_last_t) && t <= app->trails_state.trail_last_t)
        return;
    app->trails_state.trail_last_t = t;
    for (int b = 0; b < s->view->body_count; b++) {
        const ViewBody *vb = &s->view->bodies[b];
        Trail *tr = &app->trails_state.trails[b];
        Vec3 p = {s->frame[vb->var_pos], s->frame[vb->var_pos + 1], s->frame[vb->var_pos + 2]};
        if (tr->count == APP_TRAIL_POINTS) {
            memmove(tr->points, tr->points + 1, (APP_TRAIL_POINTS - 1) * sizeof(Vec3));
            tr->count--;
        }
        tr->points[tr->count++] = p;
        app->trails_state.render_trails[b] = (RenderTrail){tr->count, tr->points};
    }
}

void app_read_frame(App *app) {
    Session *s = &app->session;
    if (!s->sim)
        return;
    RegistryFrame f = {.values = s->frame};
    double t = sim_display_time(s->sim);
    /* Never waits for the engine: before its first frame (or past the history) the last good
     * frame stays on screen. */
    if (registry_read_at(s->reg, t, &f) || registry_read_latest(s->reg, &f)) {
        s->has_frame = true;
        s->frame_time = f.t;
        app_playback_fine_frame(app, t); /* slow motion: a state between output frames */
        scene_view_set_frame(s->view, s->frame);
        push_trails(app);
        follow_camera(app);
    }
    app_device_poll(app);
}

/* ===== Edits ===== */

static bool track_edit(App *app, uint64_t id, const char *path, const char *value) {
    if (app->edits.pending_count == app->edits.pending_capacity) {
        int cap = app->edits.pending_capacity > 0 ? 2 * app->edits.pending_capacity : 32;
        PendingEdit *grown = realloc(app->edits.pending, sizeof *grown * (size_t)cap);
        if (!grown)
            return false;
        app->edits.pending = grown;
        app->edits.pending_capacity = cap;
    }
    PendingEdit *p = &app->edits.pending[app->edits.pending_count++];
    p->id = id;
    issim_strlcpy(p->path, path, sizeof p->path);
    issim_strlcpy(p->value, value, sizeof p->value);
    p->wall_submit = issim_wall_time();
    /* A key handled in this frame or the last committed it (the GUI sends on Return or Tab, or
     * when the field reports its deactivation, a GUI frame later) */
    p->wall_key = app->key_frame >= app->rates.frame_count - 1 ? app->key_wall : 0.0;
    p->key_frame = app->key_frame;
    app->key_wall = 0.0;
    return true;
}

uint64_t app_submit_edit(App *app, const char *path, const char *value) {
    Session *s = &app->session;
    if (!s->sim)
        return 0;
    IssimError err = {0};
    uint64_t id = registry_edit_submit(s->reg, path, value, &err);
    if (id == 0) {
        snprintf(app->edits.edit_message, sizeof app->edits.edit_message, "%s not sent: %s", path,
                 err.message);
        app->edits.edit_rejected = true;
        issim_log(ISSIM_LOG_WARN, "%s", app->edits.edit_message);
        return 0;
    }
    if (!track_edit(app, id, path, value)) {
        /* Sent but not tracked: say so, so nobody takes the sheet for the engine's state. */
        snprintf(app->edits.edit_message, sizeof app->edits.edit_message,
                 "%s = %s sent, but out of memory to follow it: the property sheet may not show "
                 "it",
                 path, value);
        app->edits.edit_rejected = true;
        issim_log(ISSIM_LOG_WARN, "%s", app->edits.edit_message);
        return id;
    }
    snprintf(app->edits.edit_message, sizeof app->edits.edit_message, "%s = %s: pending", path,
             value);
    app->edits.edit_rejected = false;
    return id;
}

void app_edit_invalid(App *app, const char *reason) {
    issim_strlcpy(app->edits.edit_message, reason, sizeof app->edits.edit_message);
    app->edits.edit_rejected = true;
    issim_log(ISSIM_LOG_WARN, "%s", reason);
    printf("edit invalid: %s\n", reason);
    fflush(stdout);
}

/* A colour is the display's alone (the engine ignores it): an accepted "<thing>.color" is drawn
 * from the next frame, not only after a Reset rebuilds the view. */
static void redraw_color(Session *s, const char *path) {
    const char *dot = strrchr(path, '.');
    if (!dot || strcmp(dot, ".color") != 0 || (size_t)(dot - path) >= REGISTRY_EDIT_PATH_MAX)
        return;
    char thing[REGISTRY_EDIT_PATH_MAX];
    memcpy(thing, path, (size_t)(dot - path));
    thing[dot - path] = '\0';
    scene_view_refresh_color(s->view, s->db, thingdb_find(s->db, thing));
}

/* The accepted edits, "path=value; ..." (for the saved description), and a colour is drawn. */
static void note_edit(Session *s, const char *path, const char *value) {
    size_t used = strlen(s->edited);
    snprintf(s->edited + used, sizeof s->edited - used, "%s%.60s=%.60s", used ? "; " : "", path,
             value);
    redraw_color(s, path);
}

static void resolve_edit(App *app, const PendingEdit *p, const RegistryEditResult *res) {
    Session *s = &app->session;
    if (res->state == REGISTRY_EDIT_ACCEPTED) {
        IssimError err = {0};
        app_playback_note_edit(app, p->id, p->path, p->value, res->sim_time);
        /* Mirror the engine's database: the property sheet shows and a save writes it. */
        if (thingdb_set_text(s->db, p->path, p->value, true, &err) != ISSIM_OK)
            issim_log(ISSIM_LOG_WARN, "display copy of %s: %s", p->path, err.message);
        else
            note_edit(s, p->path, p->value);
        /* An HDF5 recording keeps the edit with its instant (a CSV ignores it). */
        if (app->rec.recorder)
            recorder_note_edit(app->rec.recorder, res->sim_time, p->path, p->value);
        /* The message line is bounded; a long value (a list of points) is cut there. */
        snprintf(app->edits.edit_message, sizeof app->edits.edit_message,
                 "%.120s = %.300s: accepted at t = %.4f s", p->path, p->value, res->sim_time);
        app->edits.edit_rejected = false;
        issim_log(ISSIM_LOG_INFO, "%s", app->edits.edit_message);
        printf("edit %llu %s=%s accepted t=%.9g latency_ms=%.3f", (unsigned long long)p->id,
               p->path, p->value, res->sim_time, 1e3 * (res->wall_apply - p->wall_submit));
        /* From the key that committed it: to the engine applying it, to the frame that shows
         * the accepted line (drawn now), and the frames between. */
        if (p->wall_key > 0.0)
            printf(" key_to_apply_ms=%.3f key_to_shown_ms=%.3f frames_after_key=%ld",
                   1e3 * (res->wall_apply - p->wall_key), 1e3 * (issim_wall_time() - p->wall_key),
                   app->rates.frame_count - p->key_frame);
        printf("\n");
    } else {
        snprintf(app->edits.edit_message, sizeof app->edits.edit_message,
                 "%.120s = %.160s rejected: %.250s", p->path, p->value, res->reason);
        app->edits.edit_rejected = true;
        issim_log(ISSIM_LOG_WARN, "%s", app->edits.edit_message);
        printf("edit %llu %s=%s rejected: %s\n", (unsigned long long)p->id, p->path, p->value,
               res->reason);
    }
    fflush(stdout);
}

void app_poll_edits(App *app) {
    Session *s = &app->session;
    int kept = 0;
    for (int i = 0; i < app->edits.pending_count; i++) {
        RegistryEditResult res;
        RegistryEditState st = s->sim ? registry_edit_result(s->reg, app->edits.pending[i].id, &res)
                                      : REGISTRY_EDIT_UNKNOWN;
        if (st == REGISTRY_EDIT_PENDING)
            app->edits.pending[kept++] = app->edits.pending[i];
        else if (st == REGISTRY_EDIT_ACCEPTED || st == REGISTRY_EDIT_REJECTED)
            resolve_edit(app, &app->edits.pending[i], &res);
    }
    app->edits.pending_count = kept;
}

/* ===== Recording: the committed trajectory (frames at or before display time) ===== */

static int parse_vars(const Registry *reg, const char *list, int *out, int max, IssimError *err) {
    int n = 0;
    char buf[1024];
    issim_strlcpy(buf, list, sizeof buf);
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok;
         tok = strtok_r(NULL, ", ", &save)) {
        int v = registry_var_find(reg, tok);
        if (v < 0) {
            issim_error_set(err, ISSIM_ERR_NOT_FOUND, "no state variable named '%s'", tok);
            return -1;
        }
        if (n < max)
            out[n++] = v;
    }
    return n;
}

bool app_record_start(App *app, const char *path, const char *vars) {
    Session *s = &app->session;
    if (!s->sim || app->rec.recorder)
        return false;
    IssimError err = {0};
    int max = s->var_count;
    int *idx = calloc((size_t)max, sizeof *idx);
    const char **names = calloc((size_t)max, sizeof *names);
    const char **units = calloc((size_t)max, sizeof *units);
    double *row = calloc((size_t)max, sizeof *row);
    double *frame = calloc((size_t)max, sizeof *frame);
    int n = -1;
    if (idx && names && units && row && frame) {
        ThingId u = thingdb_find_kind(s->db, THING_UNIVERSE);
        const char *list = vars && vars[0] ? vars : thing_string(s->db, u, "record");
        n = list[0] ? parse_vars(s->reg, list, idx, max, &err) : max;
        if (n >= 0 && !list[0])
            for (int i = 0; i < max; i++)
                idx[i] = i;
    }
    Recorder *rec = NULL;
    if (n > 0) {
        for (int i = 0; i < n; i++) {
            names[i] = registry_var_name(s->reg, idx[i]);
            units[i] = registry_var_unit(s->reg, idx[i]);
        }
        char meta0[700], meta1[64];
        snprintf(meta0, sizeof meta0, "scene: %s (recorded from the GUI)", s->path);
        snprintf(meta1, sizeof meta1, "issim %s", ISSIM_VERSION);
        const char *meta[] = {meta1, meta0};
        RecorderDesc d = recorder_desc_default();
        d.path = path;
        d.column_count = n;
        d.columns = names;
        d.units = units;
        d.metadata = meta;
        d.metadata_count = 2;
        d.buffer_rows = 65536;
        d.scene_path = s->path;
        d.command_line = "(recorded from the GUI)";
        rec = recorder_open(&d, &err);
    } else if (n == 0) {
        issim_error_set(&err, ISSIM_ERR_INVALID, "no variables to record");
    }
    free(names);
    free(units);
    if (!rec) {
        free(idx);
        free(row);
        free(frame);
        issim_log(ISSIM_LOG_ERROR, "recording: %s", err.message);
        return false;
    }
    app->rec.recorder = rec;
    app->rec.record_vars = idx;
    app->rec.record_count = n;
    app->rec.record_row = row;
    app->rec.record_frame = frame;
    /* From the instant on screen: nothing of the past before the user pressed the button. */
    app->rec.record_last_t = nextafter(s->frame_time, -INFINITY);
    app->rec.record_wall_start = issim_wall_time();
    /* Every output step from the frame shown on (the engine publishes fewer for the display
     * alone: it computes them again from here). */
    sim_record_from(s->sim, s->frame_time, 1);
    issim_strlcpy(app->rec.record_path, path, sizeof app->rec.record_path);
    issim_log(ISSIM_LOG_INFO, "recording %d variables to %s", n, path);
    return true;
}

void app_record_pump(App *app) {
    Session *s = &app->session;
    if (!app->rec.recorder || !s->sim)
        return;
    double shown = s->frame_time;
    RegistryFrame f = {.values = app->rec.record_frame};
    /* Frames at or before the display time are the committed past: an edit rewinds only
     * what lies after the display time, so a recorded row is never contradicted. */
    for (int k = 0; k < 100000 && registry_read_after(s->reg, app->rec.record_last_t, &f); k++) {
        if (f.t > shown)
            break;
        app->rec.record_last_t = f.t;
        if (!sim_frame_is_recorded(s->sim, f.t))
            continue; /* a frame published before the recording's steps, or for the display */
        for (int i = 0; i < app->rec.record_count; i++)
            app->rec.record_row[i] = f.values[app->rec.record_vars[i]];
        recorder_push(app->rec.recorder, f.t, app->rec.record_row, false);
    }
}

void app_record_stop(App *app) {
    if (!app->rec.recorder)
        return;
    app_record_pump(app);
    IssimError err = {0};
    RecorderStats st;
    if (recorder_close_with_stats(app->rec.recorder, &st, &err) != ISSIM_OK)
        issim_log(ISSIM_LOG_ERROR, "recording: %s (the file holds %llu whole rows)", err.message,
                  (unsigned long long)st.rows_written);
    else
        issim_log(ISSIM_LOG_INFO, "recorded %llu rows to %s", (unsigned long long)st.rows_written,
                  app->rec.record_path);
    /* rows: whole rows in the file (after a failed write, fewer than were queued) */
    printf("record stop %s rows=%llu dropped=%llu\n", app->rec.record_path,
           (unsigned long long)st.rows_written, (unsigned long long)st.rows_dropped);
    fflush(stdout);
    app->rec.recorder = NULL;
    if (app->session.sim)
        sim_record_from(app->session.sim, NAN, 0);
    free(app->rec.record_vars);
    free(app->rec.record_row);
    free(app->rec.record_frame);
    app->rec.record_vars = NULL;
    app->rec.record_row = app->rec.record_frame = NULL;
}

/* ===== Camera and saving ===== */

void app_fit(App *app) {
    if (!app->session.view)
        return;
    Vec3 c;
    double r;
    scene_view_bounds(app->session.view, &c, &r);
    /* With a device, its walls and texture regions are the scene (pantograph_textures' four
     * quadrants around a 2 cm puck): the sphere grows to hold them too. */
    const ViewHandle *vh = &app->session.view->handle;
    for (int i = 0; vh->shown && i < vh->segment_count; i++)
        for (int e = 0; e < 2; e++) {
            Vec3 d = vec3_sub(vh->segments[i][e], c);
            double dist = vec3_norm(d);
            if (dist > r) { /* the smallest sphere holding the old one and the point */
                double grown = 0.5 * (r + dist);
                c = vec3_add(c, vec3_scale(d, (grown - r) / dist));
                r = grown;
            }
        }
    camera_fit(&app->camera, c, r);
}

/* The speed factor and the slow motion as the panel left them. A speed outside the scene key's
 * range (the transport's 0.0001x) is saved at the nearest value the key accepts. */
static IssimStatus set_saved_playback(const Sim *sim, ThingDb *db, IssimError *err) {
    char text[64];
    double rate, window;
    sim_slow_motion(sim, &rate, &window);
    snprintf(text, sizeof text, "%.17g", fmin(10.0, fmax(0.001, sim_speed(sim))));
    if (thingdb_set_text(db, "universe.playback_speed", text, false, err) != ISSIM_OK)
        return err->status;
    snprintf(text, sizeof text, "%.17g", rate);
    if (thingdb_set_text(db, "universe.slow_motion", text, false, err) != ISSIM_OK)
        return err->status;
    snprintf(text, sizeof text, "%.17g", window);
    return thingdb_set_text(db, "universe.slow_motion_window", text, false, err);
}

/* The saved scene opens as the user left it: the camera of the view, and a description that
 * says what was changed (the one the user typed, else the scene's own followed by the edits
 * accepted since it was opened, so it no longer describes the scene as loaded). */
static IssimStatus set_saved_view(App *app, ThingDb *db, const char *description, IssimError *err) {
    const Camera *c = &app->camera;
    Vec3 eye = camera_eye(c);
    char text[GUI_DESCRIPTION_MAX];
    snprintf(text, sizeof text, "%.17g %.17g %.17g", eye.x, eye.y, eye.z);
    if (thingdb_set_text(db, "universe.camera_eye", text, false, err) != ISSIM_OK)
        return err->status;
    snprintf(text, sizeof text, "%.17g %.17g %.17g", c->target.x, c->target.y, c->target.z);
    if (thingdb_set_text(db, "universe.camera_target", text, false, err) != ISSIM_OK)
        return err->status;
    snprintf(text, sizeof text, "%.17g", c->fov_deg);
    if (thingdb_set_text(db, "universe.camera_fov", text, false, err) != ISSIM_OK)
        return err->status;
    snprintf(text, sizeof text, "%.17g %.17g %.17g", c->up.x, c->up.y, c->up.z);
    if (thingdb_set_text(db, "universe.camera_up", text, false, err) != ISSIM_OK)
        return err->status;
    if (app->session.sim && set_saved_playback(app->session.sim, db, err) != ISSIM_OK)
        return err->status;
    snprintf(text, sizeof text, "%.9g", gui_plot_window_seconds());
    if (app->win.gui_ready &&
        thingdb_set_text(db, "universe.plot_window", text, false, err) != ISSIM_OK)
        return err->status;
    gui_plots_spec(text, sizeof text);
    if (app->win.gui_ready && thingdb_set_text(db, "universe.plots", text, false, err) != ISSIM_OK)
        return err->status;
    if (description && description[0])
        issim_strlcpy(text, description, sizeof text);
    else if (app->session.edited[0])
        snprintf(text, sizeof text, "%.120s (edited in the GUI: %.100s)",
                 thing_string(db, thingdb_find_kind(db, THING_UNIVERSE), "description"),
                 app->session.edited);
    else
        return ISSIM_OK;
    return thingdb_set_text(db, "universe.description", text, false, err);
}

bool app_save_scene(App *app, const char *path, const char *description) {
    if (!app->session.db)
        return false;
    IssimError err = {0};
    ThingDb *db = thingdb_clone(app->session.db);
    if (!db)
        issim_error_set(&err, ISSIM_ERR_NOMEM, "out of memory");
    bool ok = db && set_saved_view(app, db, description, &err) == ISSIM_OK &&
              scene_save_file(db, path, &err) == ISSIM_OK;
    thingdb_destroy(db);
    if (!ok) {
        issim_log(ISSIM_LOG_ERROR, "save %s: %s", path, err.message);
        return false;
    }
    issim_log(ISSIM_LOG_INFO, "saved the scene to %s", path);
    return true;
}
