/* The interactive application: window, session, view, GUI state, input, script. Display
 * (main) thread only, except the log ring, which any thread appends to (mutex). */
#ifndef ISSIM_APP_INTERNAL_H
#define ISSIM_APP_INTERNAL_H

#include <SDL.h>
#include <pthread.h>

#include "display_internal.h"
#include "issim/gui.h"
#include "issim/haptics_servo.h"
#include "issim/io.h"

#define APP_TRAIL_POINTS 240

typedef struct AppLog {
    pthread_mutex_t mutex;
    GuiLogLine lines[GUI_LOG_LINES];
    int start, count;
    GuiLogLine snapshot[GUI_LOG_LINES]; /* display-side copy, oldest first */
} AppLog;

typedef struct Session {
    Sim *sim;
    Registry *reg;
    ThingDb *db; /* the display's copy: the scene plus every accepted edit */
    SceneView *view;
    char path[GUI_PATH_MAX];
    int var_count;
    double *frame; /* values at display time */
    bool has_frame;
    double frame_time;
    char edited[GUI_DESCRIPTION_MAX]; /* accepted edits since the scene was opened */
    /* The contact reports of the newest publication, read once a displayed frame (app_contacts)
     * into contact_capacity places (the session's limit); `drawn` is the view's filtered copy. */
    ContactReport *contacts, *drawn;
    int contact_capacity, contact_count;
    double contact_time;
    long contacts_frame; /* app->rates.frame_count when read */
} Session;

typedef struct PendingEdit {
    uint64_t id;
    char path[REGISTRY_EDIT_PATH_MAX];
    char value[REGISTRY_EDIT_VALUE_MAX];
    double wall_submit;
    /* The key that committed it (Return, Tab) when the GUI sent it: its wall time (0: none, a
     * script's `set`) and the frame that handled it; the accepted line prints the latency. */
    double wall_key;
    long key_frame;
} PendingEdit;

typedef struct Trail {
    Vec3 points[APP_TRAIL_POINTS];
    int count;
} Trail;

typedef struct Drag {
    bool active;
    int body;
    Vec3 anchor_local; /* on the body, body frame */
    Vec3 plane_point, plane_normal;
    Vec3 target;
    bool grasp; /* Alt held at the press (or grasp_mode): the body's attitude is held too */
} Drag;

typedef struct Script Script;

/* The haptic device of --device (app_device.c): a session (simulator, device, servo) on the
 * current scene's registry while the scene has a haptics table. Display thread only; the servo
 * hears from it through atomics (enable, emergency stop) and answers through the registry. */
typedef struct AppDevice {
    HapticSession *session; /* Nullable */
    GuiDeviceStatus status;
    char name[64];
    char message[600];
    char proxy[64];
    double coupling_stiffness;
    int simulator_pid;
    bool enable_requested, emergency_stopped;
    /* --device sim without --device-hand: the mouse is the hand (Ctrl + drag in the view). The
     * simulated pantograph reads the held point from hand_file ("X Y" in the device frame, or
     * "free"): app_device_hand writes it. */
    char hand_file[GUI_PATH_MAX], hand_spec[GUI_PATH_MAX + 8];
    bool hand_dragging;
    GuiDevice gui; /* what the panel shows, rebuilt each frame from the fields above */
} AppDevice;

/* The map panel's data (app_map.c): the selected body's contact map and the normal force of its
 * contacts over the last APP_MAP_FORCE_SECONDS, APP_MAP_FORCE_SAMPLES columns. */
#define APP_MAP_FORCE_SAMPLES 400 /* columns */
#define APP_MAP_FORCE_SECONDS 2.0
#define APP_MAP_FORCE_STEPS 20000
typedef struct AppMapView {
    GuiMapView gui;
    int body; /* view body index, or -1 */
    float force[APP_MAP_FORCE_SAMPLES];
    int count;
    double seconds;                                        /* the span of the columns */
    double t[APP_MAP_FORCE_STEPS], v[APP_MAP_FORCE_STEPS]; /* the registry's steps */
} AppMapView;

/* The plots' quantities beyond the state variables (app_live.c). */
typedef enum AppLiveQuantity {
    APP_LIVE_FORCE_SUM,
    APP_LIVE_FORCE_MAX,
    APP_LIVE_DEPTH_MAX,
    APP_LIVE_CONTACTS,
    APP_LIVE_SELECTED_FORCE,
    APP_LIVE_STEP_US,
    APP_LIVE_STEPS_PER_S,
    APP_LIVE_FPS,
    APP_LIVE_LOAD,
    APP_LIVE_COUNT
} AppLiveQuantity;

#define APP_LIVE_SAMPLES 4096
typedef struct AppLive {
    const SceneView *view; /* the session the samples belong to */
    double t[APP_LIVE_SAMPLES];
    float v[APP_LIVE_COUNT][APP_LIVE_SAMPLES];
    int count;
    GuiSeries gui[APP_LIVE_COUNT];
} AppLive;

/* The prescribed load cycle on a body (app_load.c). */
typedef struct AppLoad {
    bool configured; /* a cycle was started on this session */
    bool on;         /* and runs */
    char text[320];  /* what the plots panel says about it */
    int body;        /* view body */
    Vec3 amplitude;  /* N: the peak load */
    double period;   /* s */
    bool have_sent;
    double sent_t; /* display time of the last pump */
    Vec3 sent;     /* the load the engine applies then */
} AppLoad;

/* Video of the 3D view through ffmpeg (app_video.c). */
#define APP_VIDEO_FPS 30
typedef struct AppVideo {
    FILE *pipe; /* ffmpeg's stdin, or NULL: not recording */
    char path[GUI_PATH_MAX];
    bool sim_time; /* the video's clock: simulated time, else wall time */
    /* Simulated time at a slow-motion factor (> 1: video seconds per simulated second): the
     * video drives the clock, which stays paused and is moved one video frame at a time once
     * the engine has computed that instant, so each frame is one picture of its own instant. */
    double slow;
    double start;
    long frames;
    bool failed;
    int x, y, width, height; /* GL rectangle read (origin bottom left) */
    unsigned char *pixels;
} AppVideo;

/* Time around impacts and branches (app_playback.c; issue 31 items 1 and 6). Display thread
 * only. */
#define APP_IMPACTS_SHOWN 4096
#define APP_EDIT_LOG 64
typedef struct AppEditRecord {
    uint64_t id;
    double t; /* the instant it took effect */
    char path[REGISTRY_EDIT_PATH_MAX];
    char value[REGISTRY_EDIT_VALUE_MAX];
    char old_value[REGISTRY_EDIT_VALUE_MAX]; /* the property's value before it */
} AppEditRecord;
typedef enum AppBranchPolicy {
    APP_BRANCH_ASK,      /* Run after scrubbing back before an edit asks where it applies from */
    APP_BRANCH_SCRUB,    /* from the scrubbed instant (the edit is in effect there) */
    APP_BRANCH_ORIGINAL, /* from its original instant: undone, then made again there */
    APP_BRANCH_POLICY_COUNT
} AppBranchPolicy;
/* "ask", "scrub", "original": the script's branch_policy and branch_answer (app_playback.c). */
extern const char *const app_branch_policy_names[];
typedef struct AppPlayback {
    const Sim *sim; /* the session these belong to: another one clears them */
    double impacts[APP_IMPACTS_SHOWN];
    int impact_count;
    AppEditRecord edits[APP_EDIT_LOG]; /* accepted edits, in time order (oldest dropped) */
    int edit_count;
    AppBranchPolicy policy;
    bool asking;        /* Run waits for the answer to the branch's question */
    double branch_time; /* where the last branch forked (the timeline's mark), NaN: none */
    int first_later;    /* asking: the first edit after branch_time */
    AppEditRecord replay[APP_EDIT_LOG]; /* edits to make again at their instants */
    int replay_count, replay_next;
    uint64_t undo_ids[APP_EDIT_LOG]; /* the branch's own edits in flight: not logged */
    int undo_count;
    uint64_t stops_seen; /* sim_clock_stops when the last hold was set */
    /* The state between output frames shown this frame (frame_count; -1: none) and its contact
     * reports, drawn instead of the newest frame's (app_contacts). */
    long fine_frame;
    double fine_time;
    ContactReport fine_contacts[SIM_FINE_CONTACTS];
    int fine_contact_count;
    bool resume_after_edits; /* paused until the edits sent are taken, then runs */
} AppPlayback;

/* The window, its GL context and renderer, and the 3D view between the panels. */
typedef struct AppWindow {
    SDL_Window *window;
    SDL_GLContext gl;
    bool gui_ready;
    Renderer *renderer;
    int width, height;                  /* window */
    int view_x, view_y, view_w, view_h; /* the 3D view: between the panels when they show */
} AppWindow;

/* The launcher: scenes found, their descriptions and thumbnails, recent files. Display thread only.
 */
typedef struct AppLauncher {
    char scenes[GUI_MAX_SCENES][GUI_PATH_MAX];
    int scene_count;
    /* The launcher's descriptions, read from the scene files one per frame (a scene file is a
     * Lua program: reading all at start would delay the first frame). */
    char scene_descriptions[GUI_MAX_SCENES][GUI_DESCRIPTION_MAX];
    int described;
    /* Their thumbnails (textures; 0: none), each drawn the first time the launcher shows it,
     * through one off-screen framebuffer (app_thumbs.c); thumb_tried: drawn or failed, not
     * tried again. Display thread only. */
    GLuint scene_thumbs[GUI_MAX_SCENES];
    bool thumb_tried[GUI_MAX_SCENES];
    GLuint thumb_fbo, thumb_depth;
    char recent[GUI_MAX_RECENT][GUI_PATH_MAX];
    int recent_count;
    char scanned_folder[GUI_PATH_MAX]; /* the opened scene's folder the launcher lists */
} AppLauncher;

/* Recording from the GUI (CSV/HDF5 rows of the chosen variables). Display thread only. */
typedef struct AppRecording {
    Recorder *recorder;
    char record_path[GUI_PATH_MAX];
    int *record_vars;
    int record_count;
    double record_last_t, record_wall_start;
    double *record_row, *record_frame;
} AppRecording;

/* Mouse and keyboard state, and the drag in progress. Display thread only. */
typedef struct AppPointer {
    Drag drag;
    bool mouse_left, mouse_right, mouse_moved;
    bool mouse_hand_mode; /* --device sim: every left drag in the view moves the hand */
    bool grasp_mode;      /* every body drag is a grasp (script: toggle grasp) */
    int mouse_x, mouse_y;
    SDL_Keymod mods;
} AppPointer;

/* Frame and engine rates for the status bar, and the frame limiter. Display thread only. */
typedef struct AppRates {
    double fps, fps_wall, engine_rate, rate_wall;
    /* Simulated seconds shown per wall second over the last half second (0 while paused):
     * what the status bar calls the rate, the clock's real progress. */
    double sim_rate, rate_shown_t;
    int max_fps;       /* > 0: the frame limiter's rate (script command "fps"), else DISPLAY_FPS */
    double last_swap;  /* wall time the frame limiter paced the last frame to */
    bool engine_bound; /* the engine lags the clock: the limiter halves the frame rate */
    int fps_frames;
    double rate_steps;
    long frame_count; /* frames drawn since start (the script's bench command) */
} AppRates;

/* Body trails: sampled positions and their GPU buffers. Display thread only. */
typedef struct AppTrails {
    Trail *trails;
    RenderTrail *render_trails;
    double trail_last_t;
} AppTrails;

/* Edits sent and their answers: the result line, and the edits not yet answered (grows as
 * needed: a fixed 32 left later edits untracked, so an accepted one never reached the display's
 * database and a save lost it). Display thread only. */
typedef struct AppEdits {
    char load_error[600];
    char edit_message[600];
    bool edit_rejected;
    /* Edits sent and not yet answered: grows as needed (a fixed 32 left later edits untracked,
     * so an accepted one never reached the display's database and a save lost it). */
    PendingEdit *pending;
    int pending_count, pending_capacity;
} AppEdits;

typedef struct App {
    DisplayOptions options;
    SimOptions sim_options; /* for the first scene (its --set overrides) */
    bool first_scene_done;
    bool quit;
    int exit_status;

    Session session; /* session.sim == NULL: nothing loaded */
    Camera camera;
    int follow_body; /* view body the camera's target stays on, or -1 */
    GuiToggles toggles;
    ThingId selected;
    bool open_dialog;
    bool seeked;         /* the clock was moved by the scrubber: Run rewinds the engine to it */
    long resets;         /* Resets since start (the script's print_state) */
    bool keys_in_panels; /* the last click was in a panel: no letter shortcuts (gui.h) */
    /* The force arrows the last frame drew (bit 1 << GuiArrowKind): written by draw_scene,
     * read by fill_gui_state for the legend (display thread only). */
    unsigned arrow_kinds;
    /* The bodies' labels at their pixels this frame: written by fill_gui_state, read by the
     * GUI in the same frame (display thread only). */
    GuiLabel labels[GUI_MAX_LABELS];

    bool show_help; /* F1: the keys and mouse actions */

    char screenshot_path[GUI_PATH_MAX]; /* pending: written after this frame's GUI */
    Script *script;
    AppLog log;
    AppDevice device;
    AppMapView map_view;
    AppLive live;
    AppLoad load;
    /* The newest key press: its wall time (from SDL's timestamp, 1 ms steps; 0 once an edit
     * took it) and app->rates.frame_count when handled. Written by app_handle_event, read by
     * app_submit_edit: the input-latency figure (key to applied edit). Main thread only. */
    double key_wall;
    long key_frame;
    AppVideo video;
    AppPlayback playback;
    AppWindow win;
    AppLauncher launcher;
    AppRecording rec;
    AppPointer pointer;
    AppRates rates;
    AppTrails trails_state;
    AppEdits edits;
} App;

/* app_playback.c */
void app_playback_fill(App *app, GuiState *g);
/* Each frame after the clock is read: a branch's edits made again at their instants. */
void app_playback_update(App *app);
/* Run: false when it waits for the branch's question (or a branch took it over). */
bool app_playback_run(App *app);
/* An accepted edit (before the display's copy takes it: the old value is read there). */
void app_playback_note_edit(App *app, uint64_t id, const char *path, const char *value, double t);
/* The state between output frames (slow motion) over the frame read: updates s->frame and
 * frame_time. */
void app_playback_fine_frame(App *app, double t);
/* The contacts of the state between output frames shown this frame: true and *n, *t, *out set;
 * false when the frame shown is an output frame. */
bool app_playback_contacts(const App *app, int *n, double *t, const ContactReport **out);
/* Script commands slow_motion, pause_at_contact, branch_policy, branch_answer, print_playback;
 * false: not one of these. */
bool app_playback_command(App *app, char *const *words, int n, bool *failed);
/* The branches preference of earlier sessions (the config folder's "branches"); a file that
 * names no policy is reported and leaves "ask". */
void app_playback_load_preference(App *app);

/* app_video.c */
bool app_video_start(App *app, const char *path, bool sim_time, double slow);
void app_video_frame(App *app);
long long app_video_bytes(const App *app);
void app_video_stop(App *app);

/* display.c: CPU seconds of the display's threads (main thread and llvmpipe's rasterisers). */
double display_cpu_seconds(void);

/* app_session.c: the newest contact reports (*t their time), read once per displayed frame;
 * Borrowed until the next frame. */
int app_contacts(App *app, double *t, const ContactReport **out);
/* app_live.c: one sample of the live quantities per displayed frame; the series for the GUI. */
void app_live_sample(App *app);
const GuiSeries *app_live_series(App *app, int *count);
/* Prints the samples of the quantity named name (script print_live); false: no such name. */
bool app_live_print(const App *app, const char *name);

/* app_device.c: the haptic scene's forces as arrows (coupling on the proxy, the commanded force
 * on the hand, the walls' reaction) from handle (Nullable: read the registry now); returns how
 * many were written. forces (Nullable) receives the world force each arrow shows, N. */
#define APP_DEVICE_ARROWS 3
int app_device_arrows(const App *app, const RegistrySlot *handle, RenderArrow *out, Vec3 *forces);
/* display.c: the pixels one camera distance spans at the camera's target in the 3D view (the
 * force arrows' legend draws gui_arrow_length(F, 1) times this). */
double app_arrow_px_per_distance(const App *app);

/* app_load.c: the prescribed load cycle */
bool app_load_start(App *app, const char *body, Vec3 amplitude, double period);
void app_load_stop(App *app);
/* The plots panel's button: stops a running cycle, or starts the configured one again. */
void app_load_toggle(App *app);
/* Shows the cycle of the scene's first body with force_cycle_period > 0 (the engine runs it). */
void app_load_from_scene(App *app);
/* Every frame: the load the engine applies at the display time. */
void app_load_pump(App *app);
/* |the load at the display time|, N (0: no cycle). */
double app_load_magnitude(const App *app);
/* The load's arrow (at most one); returns how many were written. */
int app_load_arrows(const App *app, RenderArrow *out);

/* app_map.c: the map panel's data for this frame, or NULL (the selection has no map) */
const GuiMapView *app_map_view(App *app);

/* app_session.c */
bool app_open_scene(App *app, const char *path, bool keep_camera);
void app_close_session(App *app);
void app_reset(App *app);
void app_read_frame(App *app);
uint64_t app_submit_edit(App *app, const char *path, const char *value);
void app_poll_edits(App *app);
/* Typed text that is no value: the result line says why (reason), nothing is sent. */
void app_edit_invalid(App *app, const char *reason);
bool app_record_start(App *app, const char *path, const char *vars);
void app_record_stop(App *app);
void app_record_pump(App *app);
void app_scan_scenes(App *app);
/* name in the user's config folder ($XDG_CONFIG_HOME/issim); false without a home. */
bool app_config_path(const char *name, char *out, size_t size);
/* The same with the folder created, for a file about to be written. */
bool app_config_path_to_write(const char *name, char *out, size_t size);
/* The recent scenes of earlier sessions (the config folder's "recent"). */
void app_load_recent(App *app);
/* Reads the next scene's description for the launcher; false when all are read. */
bool app_describe_next_scene(App *app);
/* app_thumbs.c: draws scene's thumbnail (the scene at its start, from its camera) unless it was
 * tried already: the launcher asks when it shows one, so a folder of large scenes costs nothing
 * until hovered. The pixels of a thumbnail that are not background (-1: none drawn), for the
 * tests; every thumbnail's GL objects freed (a rescan, closing the window). */
void app_thumbnail_request(App *app, int scene);
int app_thumbnail_coverage(const App *app, int scene);
void app_thumbnails_free(App *app);
void app_fit(App *app);
void app_step(App *app);
void app_seek(App *app, double t);
void app_run(App *app);
/* description: Nullable; see set_saved_view. */
bool app_save_scene(App *app, const char *path, const char *description);
void app_log_init(AppLog *log);
void app_log_destroy(AppLog *log);
void app_log_install(App *app);
void app_log_snapshot(App *app, int *count);

/* The camera follows view body `body` (-1: stops); returns false for an unknown body. */
bool app_follow(App *app, int body);
/* The view body of a thing (name or path), or -1. */
int app_view_body(const App *app, const char *name);

/* app_input.c */
void app_handle_event(App *app, const SDL_Event *e);
void app_select(App *app, ThingId thing);
/* T: follow the selected body, or stop following. */
void app_toggle_follow(App *app);

/* app_device.c: --device (issue 6) */
/* Opens the device on the current scene if it has a haptics table (motors off). */
void app_device_attach(App *app);
/* Stops the servo and closes the device: before the current scene's registry is freed. */
void app_device_detach(App *app);
/* Every frame: a servo that went to its safe state is joined and its message shown; the handle
 * marker of the 3D view is updated. */
void app_device_poll(App *app);
void app_device_enable(App *app, bool enable);
void app_device_emergency_stop(App *app);
void app_device_reconnect(App *app);
/* The emergency-stop keys (F9, Pause), taken before the GUI sees the key. */
bool app_device_key(App *app, const SDL_KeyboardEvent *key);
const GuiDevice *app_device_gui(App *app); /* NULL without --device */
/* The mouse as the simulated hand: true when --device sim runs with the file hand. */
bool app_device_mouse_hand(const App *app);
/* Ctrl + left press / motion / release in the view at window pixel (x, y): the hand holds the
 * device point under the mouse (in the plane of the handle's world height), or lets go. */
void app_device_hand(App *app, bool hold, int x, int y);
/* The script's print_device: the panel's readout as key=value. */
void app_device_print(App *app);
/* The script's wait_device conditions: 1 met, 0 not yet, -1 unknown condition. */
int app_device_condition(App *app, const char *what, const char *value);

/* app_script.c: UI actions from a file, one command per line, run frame by frame. */
Script *script_load(const char *path, IssimError *err);
void script_destroy(Script *s);
/* Runs commands until one waits; returns false at the end of the script or on failure
 * (app->exit_status set to 1 on failure). */
bool script_tick(Script *s, App *app);
/* Runs one command of the script's table for the panels (words[0] its name, then its
 * arguments as the script writes them; the handlers only read them). False when the command is
 * unknown, lacks arguments or what it needs (a simulation, a scene; the waits need a script),
 * or failed. */
bool app_command(App *app, char **words, int n);

/* app_requests.c: the panels' requests of a frame (GuiRequests), carried out as the script
 * table's commands, in a fixed order. */
void app_carry_out_requests(App *app, const GuiRequests *r);
/* Runs the table's command `name` with up to three arguments (NULL: none from there on), as
 * the panels and the keyboard ask: app_command with the words copied. */
bool app_ask(App *app, const char *name, const char *a, const char *b, const char *c);
/* The table's `select` of thing by its path (a null or stale id: the selection cleared). */
void app_ask_select(App *app, ThingId thing);

#endif
