/* issim gui: the Dear ImGui panels (000 App. B.6: experiment design, user view, property
 * sheet) behind a C API. The one C++ file (src/gui/gui.cpp) draws the panels from a GuiState
 * the display fills every frame and answers with GuiRequests the display carries out after the
 * frame: the GUI itself never touches the session, the engine or the registry's writers. It only
 * reads the registry (snapshots, history for the plots) and the display's copy of the thing
 * database.
 *
 * Threading: display (main) thread only. SDL types are passed as void * so this header does
 * not pull SDL into C files that do not need it.
 */
#ifndef ISSIM_GUI_H
#define ISSIM_GUI_H

#include <math.h>

#include "issim/core.h"
#include "issim/contactmap.h"
#include "issim/registry.h"
#include "issim/thing.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GUI_PATH_MAX 512
#define GUI_MAX_SCENES 128
#define GUI_MAX_RECENT 8
#define GUI_MAX_PLOTS 4
#define GUI_PLOT_SERIES 3 /* series in one plot */
#define GUI_LOG_LINES 200
#define GUI_DESCRIPTION_MAX 256 /* a string property (PROP_STRING_MAX) */
/* The launcher's thumbnails: each scene at its start, from its camera (app_thumbs.c). */
#define GUI_MAX_LABELS 16 /* bodies whose `label` the 3D view shows */
#define GUI_THUMB_WIDTH 192
#define GUI_THUMB_HEIGHT 120
/* Layout in pixels: side panels, main menu bar and status bar; the 3D view is what is left.
 * The side panels are 340 pixels wide from a 1280-pixel window up, narrower below (272 at
 * 1024), never under 250; they hide (the view takes the window) when switched off (View menu,
 * Tab) or when the window leaves the view under GUI_MIN_VIEW_WIDTH between them. */
#define GUI_SIDE_WIDTH 340
#define GUI_SIDE_MIN_WIDTH 250
#define GUI_MIN_VIEW_WIDTH 200
#define GUI_MENU_HEIGHT 20
#define GUI_STATUS_HEIGHT 24

static inline int gui_side_width(int window_width) {
    int w = window_width * GUI_SIDE_WIDTH / 1280;
    return w < GUI_SIDE_MIN_WIDTH ? GUI_SIDE_MIN_WIDTH : (w > GUI_SIDE_WIDTH ? GUI_SIDE_WIDTH : w);
}

typedef struct GuiLogLine {
    IssimLogLevel level;
    char text[256];
} GuiLogLine;

typedef struct GuiToggles {
    bool grid, contacts, forces, trails, bodies;
    bool panels;            /* the side panels (else the view takes the window's width) */
    bool selected_contacts; /* contacts and forces of the selected body only (readable in a pile) */
    bool vsync;             /* vsync and the 60 / 20 fps limiter (off: as fast as it draws) */
    bool fullscreen;
} GuiToggles;

/* ===== Force arrows (issue 31 item 8) =====
 * Every force the 3D view draws (contact forces, a prescribed load, the haptic coupling, hand and
 * wall forces) is on one logarithmic scale, so that a 0.04 N push and a 6 N impact are both seen
 * and can be compared: an arrow of F newtons is GUI_ARROW_PER_DECADE * log10(1 + F /
 * GUI_ARROW_FLOOR_N) camera distances long, whatever the zoom (0.04 N: 3.5 %, 6 N: 13.9 %,
 * 10 kN: 30 % of the distance). A linear scale made 0.04 N a speck beside a 6 N arrow. The legend
 * over the 3D view (gui.cpp) shows the colours and this scale. */
#define GUI_ARROW_FLOOR_N 0.01
#define GUI_ARROW_PER_DECADE 0.05

typedef enum GuiArrowKind {
    GUI_ARROW_CONTACT,  /* a contact's force on its first body */
    GUI_ARROW_LOAD,     /* a prescribed load cycle */
    GUI_ARROW_COUPLING, /* the haptic coupling's force on the proxy */
    GUI_ARROW_HAND,     /* the force the motors are commanded with, on the hand */
    GUI_ARROW_WALL,     /* the haptic walls' share of it */
    GUI_ARROW_KINDS
} GuiArrowKind;

/* The arrows' colours, indexed by GuiArrowKind (the renderer's and the legend's). */
static const float gui_arrow_colors[GUI_ARROW_KINDS][3] = {{0.2f, 1.0f, 0.4f},
                                                           {1.0f, 0.6f, 0.1f},
                                                           {1.0f, 0.3f, 1.0f},
                                                           {0.2f, 0.95f, 1.0f},
                                                           {1.0f, 0.25f, 0.2f}};

/* The length, m, of the arrow of a force of `newtons` seen from `camera_distance` m. */
static inline double gui_arrow_length(double newtons, double camera_distance) {
    return newtons > 0.0
               ? camera_distance * GUI_ARROW_PER_DECADE * log10(1.0 + newtons / GUI_ARROW_FLOOR_N)
               : 0.0;
}

/* ===== Device panel (src/gui/gui_device.cpp; docs/haptics.md, docs/user-guide.md) ===== */

typedef enum GuiDeviceStatus {
    GUI_DEVICE_IDLE,    /* the scene has no haptics table: no device open, no servo */
    GUI_DEVICE_RUNNING, /* the servo runs on the device (motors on or off) */
    GUI_DEVICE_ERROR,   /* opening failed, or the device went away: `message` says why */
} GuiDeviceStatus;

/* The display's side of the device (src/display/app_device.c). */
typedef struct GuiDevice {
    const char *spec; /* --device as given */
    const char *name; /* the opened device ("serial /dev/pts/3"), or "" */
    GuiDeviceStatus status;
    const char *message;       /* why idle or in error, or "" */
    bool enable_requested;     /* the user enabled the motors (none since: an emergency stop) */
    bool emergency_stopped;    /* until the user enables again */
    double coupling_stiffness; /* the scene's coupling K_c, world N/m; 0 without a proxy */
    const char *proxy;         /* the coupled body, or "" */
    int simulator_pid;         /* the simulated pantograph's process, or -1 */
    const char *estop_key;     /* "F9 / Pause" */
    bool *mouse_hand; /* Nullable: --device sim with the mouse as the hand; true: every left
                         drag in the view moves the hand (else Ctrl + drag) */
} GuiDevice;

/* What the device panel shows, from the registry's HANDLE and SERVO_STATS slots (seqlock
 * snapshots written by the servo; the GUI never takes a lock the servo uses). */
/* The servo's rate and wake-up lateness (SERVO_STATS). */
typedef struct GuiServoTiming {
    double rate_hz, measured_hz, periods;
    double p50_us, p99_us, p999_us, max_us; /* wake-up lateness */
    double overruns, missed_deadlines;      /* late by a whole period; deadlines skipped */
    double compute_mean_us, compute_max_us; /* read to write, per period */
    bool fifo;                              /* SCHED_FIFO */
} GuiServoTiming;

/* The servo's counters (SERVO_STATS). */
typedef struct GuiServoCounts {
    double stale_reads, device_errors, force_limited, engine_stalls;
    double crc_errors, frames_lost, frames_dropped; /* link integrity (protocol 2) */
    double texture_periods;                         /* periods that commanded a texture pulse */
} GuiServoCounts;

/* The handle and its motors in the last period (HANDLE slot and SERVO_STATS). */
typedef struct GuiHandleReadout {
    double x, y, vx, vy;           /* handle, device frame: m, m/s */
    double fx, fy;                 /* the force the motors are commanded with, on the handle, N */
    double texture_fx, texture_fy; /* the texture's part of it, N */
    double tau1, tau5;             /* joint torques sent to the D/A, N m */
    double force_rms, force_peak;  /* |F| over the servo's last statistics interval, N */
    bool motors_on;                /* enabled and powered this period */
    unsigned limits;               /* HAPTIC_LIMIT_* of the last period */
    unsigned device_status;        /* HAPTIC_STATUS_* of the last frame */
} GuiHandleReadout;

typedef struct GuiDeviceReadout {
    bool have_stats, have_handle;
    int servo_state;        /* HapticServoState */
    double port_energy;     /* passivity observer: J into the scene over the run */
    double port_energy_min; /* its lowest value, J */
    /* local models' engine-to-servo latency, us (NAN without local models): the newest block's,
       the mean and largest over the run; blocks copied */
    double local_latency_us, local_latency_mean_us, local_latency_max_us, local_blocks;
    double coupling_k;    /* rendered coupling stiffness, world N/m */
    double watchdog_fade; /* coupling_k / the scene's K_c (1: live) */
    const char *watchdog; /* host watchdog: "live", "fading", "released", "motors off",
                             "no coupling" */
    double handle_age_s;  /* wall seconds since the servo last wrote the handle */
    GuiServoTiming timing;
    GuiServoCounts counts;
    GuiHandleReadout handle;
    /* the local models (scene surfaces and proxy contacts): evaluated and in contact last
       period (SERVO_STATS), and the deepest in contact: its depth (handle m) and normal force on
       the handle (N), which the panel's force-depth plot traces (HANDLE slot) */
    double models, models_touching;
    double traced_depth, traced_force;
} GuiDeviceReadout;

/* Fills out from reg (Nullable: nothing to show) for device. */
void gui_device_readout(const Registry *reg, const GuiDevice *device, GuiDeviceReadout *out);
/* The same from slots already read (REGISTRY_SLOT_SERVO_STATS, REGISTRY_SLOT_HANDLE; each
 * Nullable: nothing to show), so what else is drawn from that handle slot shows the same servo
 * period. */
void gui_device_readout_of(const RegistrySlot *stats, const RegistrySlot *handle,
                           const GuiDevice *device, GuiDeviceReadout *out);

/* What the panels show. Filled by the display each frame; Borrowed by the GUI for the frame. */
/* The selected body's contact-response map (000 ch. 3) for the map panel: its node responses,
 * the node its contact uses now and the normal force of its contacts over the last frames. */
typedef struct GuiMapView {
    const ContactMap *map; /* Borrowed */
    const char *body;
    int active_node;    /* -1: not in contact */
    const float *force; /* N, oldest first */
    int force_count;
    double force_seconds; /* simulated time the force samples span */
} GuiMapView;

/* A quantity sampled by the display (contact forces, engine statistics), oldest first. */
typedef struct GuiSeries {
    const char *name, *unit;
    const double *t; /* simulated time, s */
    const float *v;
    int count;
} GuiSeries;

/* A body's `label` (scene file) at its centre's pixel in the window, this frame. */
typedef struct GuiLabel {
    float x, y;
    char text[GUI_DESCRIPTION_MAX];
} GuiLabel;

/* The display clock and time around impacts (sim.h): slow motion's rate (0: off) and window,
 * "pause at next contact" armed, whether the clock is in a window now, and the impacts found
 * between the history's start and the newest frame (the timeline and the time plots mark them). */
typedef struct GuiClockView {
    bool paused;
    double speed, display_time, state_time, history_start, dt;
    /* Time around impacts (sim.h): slow motion's rate (0: off) and window, "pause at next
     * contact" armed, whether the clock is in a window now, and the impacts found between the
     * history's start and the newest frame (the timeline and the time plots mark them). */
    double slow_rate, slow_window;
    bool pause_at_contact, slow_now;
    const double *impacts;
    int impact_count;
} GuiClockView;

/* A branch (issue 31 item 6): an edit accepted at branch_edit_time while the display was
 * scrubbed back to branch_time (NaN: none); the GUI asks where it applies from. */
typedef struct GuiBranchView {
    /* A branch (issue 31 item 6): an edit accepted at branch_edit_time while the display was
     * scrubbed back to branch_time (NaN: none); the GUI asks where it applies from. */
    double branch_time, branch_edit_time;
    const char *branch_edit;  /* "path=value" while asking, else "" */
    const double *edit_times; /* the accepted edits' instants (the timeline marks them) */
    int edit_count;
    int branch_policy; /* 0 ask, 1 from the scrubbed instant, 2 from the original instant */
} GuiBranchView;

/* The engine's rates and counts for the status bar. */
typedef struct GuiEngineView {
    double fps, engine_step_us, engine_rate; /* engine_rate: output steps/s */
    double sim_rate;        /* simulated seconds shown per wall second (0 while paused) */
    double engine_headroom; /* dt over the wall time of the last step: spare capacity, not the
                               rate (the engine idles once a horizon ahead) */
    int active_contacts;
    /* Contact reports at the newest frame, and of them those published (the registry's limit:
     * markers, forces and contact plots see these); reports left out of frames so far. */
    int contacts_total, contacts_shown;
    double contacts_dropped;
    double engine_resets;     /* rewinds so far (edits, drags, Run after a seek): plots reread */
    int awake_bodies, bodies; /* integrated / all (sleeping bodies are not integrated) */
} GuiEngineView;

/* Recording (rows) and video in progress. */
typedef struct GuiCaptureView {
    bool recording;
    const char *record_path;
    double record_elapsed;
    uint64_t record_bytes, record_rows, record_dropped; /* record_rows: whole rows in the file */
    bool record_failed; /* a write failed (disk full): record_rows is what the file holds */
    bool video_recording, video_failed;
    const char *video_path;
    long video_frames;
    long long video_bytes;
} GuiCaptureView;

/* The launcher's scenes, descriptions and thumbnails, and the recent files. */
typedef struct GuiLauncherView {
    int scene_count;
    const char (*scenes)[GUI_PATH_MAX];
    const char (*scene_descriptions)[GUI_DESCRIPTION_MAX];
    int described; /* scenes whose description is read (the first ones) */
    /* Per scene the OpenGL texture of its thumbnail (GUI_THUMB_WIDTH x GUI_THUMB_HEIGHT, rows
     * bottom up), 0: none (not drawn yet, or the scene does not load). */
    const unsigned *scene_thumbnails;
    int recent_count;
    const char (*recent)[GUI_PATH_MAX];
} GuiLauncherView;

typedef struct GuiState {
    int width, height;
    int side_width;      /* the side panels' width, 0: hidden */
    const ThingDb *db;   /* Nullable: the display's copy (edits accepted so far applied) */
    const Registry *reg; /* Nullable when no scene is loaded */
    const double *frame; /* values at display time (registry_var_count), Nullable */
    const char *scene_path;
    bool running;           /* a session exists (fixed-during-run properties are read-only) */
    const char *load_error; /* "file:line: message" of the last failed load, or "" */
    const char *edit_message;
    bool edit_rejected;
    int log_count; /* oldest first */
    const GuiLogLine *log;
    ThingId selected;
    GuiToggles *toggles;        /* the GUI flips these directly */
    bool *open_dialog;          /* the Ctrl+O "Open scene" window; the GUI closes it */
    bool *show_help;            /* F1: the help overlay; the GUI closes it */
    const GuiDevice *device;    /* Nullable: no --device, no device panel */
    const GuiMapView *map_view; /* Nullable: the selected body has no contact map */
    const char *following;      /* the body the camera follows, or "" */
    const GuiSeries *live;      /* plottable besides the registry's variables */
    int live_count;
    const char *load_cycle; /* the prescribed load cycle ("block.force = ..."), or "" */
    bool load_cycle_on;
    /* The last click was in a panel: letters, space and Tab are not shortcuts until the next
     * click in the 3D view (a missed click then typing must not reset the run). */
    bool keys_in_panels;
    /* The force arrows drawn in the 3D view this frame (bit 1 << GuiArrowKind; the legend shows
     * these) and the pixels one camera distance spans at the camera's target: an arrow across
     * the line of sight there is gui_arrow_length(F, 1) * arrow_px_per_distance pixels long. */
    unsigned arrow_kinds;
    double arrow_px_per_distance;
    /* The labels of the bodies in front of the camera (written by the display each frame) */
    const GuiLabel *labels;
    int label_count;
    GuiClockView clock;
    GuiBranchView branch;
    GuiEngineView engine;
    GuiCaptureView capture;
    GuiLauncherView launcher;
} GuiState;

/* What the user asked for this frame. Cleared by the display before each frame. */
/* Scenes: open, reload, save, the launcher's list and thumbnails, quit. */
typedef struct GuiFileRequests {
    bool open;
    char open_path[GUI_PATH_MAX];
    bool reload, quit, refresh_scenes;
    bool save;
    char save_path[GUI_PATH_MAX];
    char save_description[GUI_DESCRIPTION_MAX]; /* "": the scene's, with the edits noted */
    int thumbnail_for; /* 1 + the scene whose thumbnail the launcher shows (drawn if missing) */
} GuiFileRequests;

/* The clock: run, pause, step, reset, speed, slow motion, seeking and branches. */
typedef struct GuiTimeRequests {
    bool reset, step, pause, run;
    bool set_speed;
    double speed;
    bool set_slow_motion; /* slow_rate 0: off */
    double slow_rate, slow_window;
    bool pause_at_contact_toggle;
    bool branch_from_scrub, branch_from_original; /* the answer to a branch's question */
    int set_branch_policy; /* 0: unchanged, else 1 + the branch_policy chosen */
    bool seek;
    double seek_time;
} GuiTimeRequests;

/* A property edit typed in the editor (or refused there, with the reason). */
typedef struct GuiEditRequest {
    bool edit;
    char edit_path[REGISTRY_EDIT_PATH_MAX];
    char edit_value[REGISTRY_EDIT_VALUE_MAX];
    bool edit_invalid; /* typed text that is no value of the property: edit_reason says why */
    char edit_reason[GUI_DESCRIPTION_MAX];
} GuiEditRequest;

/* Recording (CSV/HDF5 rows), video and screenshots. */
typedef struct GuiCaptureRequests {
    bool record_start, record_stop;
    char record_path[GUI_PATH_MAX];
    char record_vars[1024];
    bool video_start, video_stop;
    char video_path[GUI_PATH_MAX];
    bool video_sim_time; /* one video second per simulated second (else per wall second) */
    double video_slow;   /* simulated time: video seconds per simulated second (> 1: slow) */
    bool screenshot;
    char screenshot_path[GUI_PATH_MAX];
} GuiCaptureRequests;

/* The haptic device panel's buttons. */
typedef struct GuiDeviceRequests {
    bool device_enable, device_disable, device_estop, device_reconnect;
} GuiDeviceRequests;

typedef struct GuiRequests {
    bool fit;
    bool select;
    ThingId select_thing;
    int camera_preset;      /* -1: none, else the display's CameraPreset */
    bool follow_toggle;     /* follow the selected body, or stop following */
    bool load_cycle_toggle; /* stop the prescribed load cycle, or start the scene's again */
    GuiFileRequests file;
    GuiTimeRequests time;
    GuiEditRequest editing;
    GuiCaptureRequests capture;
    GuiDeviceRequests device;
} GuiRequests;

/* Creates the ImGui context and its SDL2 + OpenGL3 back-ends for window (SDL_Window *) and
 * gl_context (SDL_GLContext). false if a back-end fails to initialise. */
bool gui_create(void *window, void *gl_context);
void gui_destroy(void);
/* Feeds one SDL_Event; returns true when the GUI consumed it (the mouse is over a panel, or a
 * text field has the keyboard). */
bool gui_process_event(const void *sdl_event);
bool gui_wants_mouse(void);
bool gui_wants_keyboard(void);
/* Mouse button changes queued beyond one per button and frame: the display runs GUI frames
 * without drawing until none is left, so a click or double-click within one slow frame counts. */
bool gui_input_pending(void);
/* Window y of the property table's first row as last drawn (-1: none), for the tests. */
double gui_property_table_y(void);
/* Whether the last frame told the user to start a haptic device (a scene with a handle opened
 * without --device), for the tests. */
bool gui_device_hint_shown(void);
/* The reach (s) the scrubber's note gave last frame, when the registry's history held less than
 * universe.history asked; NaN: no note. For the tests. */
double gui_scrubber_note(void);
/* Window rectangles (x, y, w, h) of the "Pause at next contact" button and the "slow motion at
 * impacts" box as last drawn (w 0: not drawn), for the tests' clicks. */
void gui_playback_rects(double pause[4], double slow[4]);
/* The windows whose layout is checked: content reaching past a panel's right edge is cut. */
enum { GUI_PANEL_LEFT, GUI_PANEL_RIGHT, GUI_PANEL_STATUS, GUI_PANEL_NAVIGATION, GUI_PANELS };
/* Pixels the widest item of the panel reached past its content region in the last frame (0:
 * nothing cut), for the tests. */
double gui_layout_overflow(int panel);
/* Builds this frame's panels from state and fills requests. */
void gui_frame(const GuiState *state, GuiRequests *requests);
/* Draws the built frame into the current framebuffer. The side panels draw no background of
 * their own: the display clears the window to gui_panel_color first (a software rasteriser
 * clears for almost nothing but blends and textures every pixel of a background it draws). */
void gui_render(void);
/* The device panel (a section of the right panel), called by gui_frame. */
void gui_device_panel(const GuiState *state, GuiRequests *requests);
/* The side panels' opaque background colour (ImGui's window colour). */
void gui_panel_color(float rgb[3]);

/* What a plot drew in the last frame (the script's print_plots; tests). */
typedef struct GuiPlotInfo {
    int series;                       /* series set */
    char names[GUI_PLOT_SERIES][160]; /* "(none)" when unset */
    char units[GUI_PLOT_SERIES][16];
    int samples[GUI_PLOT_SERIES];        /* drawn */
    bool versus;                         /* y against the first series, not time */
    double t0, t1;                       /* the time axis (or the samples' span) */
    double x0, x1;                       /* versus: the x axis */
    double y0, y1;                       /* the y axis as drawn */
    double data_lo, data_hi;             /* the y data's own range */
    double band;                         /* the dead band used (minimum y span) */
    char x_label[2][48], y_label[2][48]; /* the axis labels drawn */
    int markers;                         /* impact markers drawn (time plots) */
    double first_marker;                 /* the first one's time, NaN: none */
    float area[4];       /* the curves' rectangle in window pixels: left, top, right, bottom */
    double history_from; /* the "history from T s only" note's T; NaN: no note drawn */
} GuiPlotInfo;
/* The number of plots shown; fills out for plot k (0-based) when k is one. */
int gui_plot_info(int k, GuiPlotInfo *out);
/* Sets plot k's series i to the registry variable or display quantity named name ("" clears
 * it), at the next frame; adds plots up to k. versus: -1 unchanged, else x = the first series.
 * band: < 0 unchanged, else the dead band (0: automatic). */
void gui_plot_set(int k, int i, const char *name, int versus, double band);
/* The plots' time window, s (clamped to the slider's 0.01 .. 20 s). */
void gui_plot_window(double seconds);
/* The plots' time window now, s (what Save scene writes into universe.plot_window). */
double gui_plot_window_seconds(void);
/* The memory the plotted series' histories may take together, MiB (1 .. 4096; default 64). */
void gui_plot_budget(double mib);
/* What the plotted series' histories hold together: bytes, the budget (MiB), the most times
 * one merged its samples pairwise to fit it (0: every sample as published) and the oldest
 * sample's time (NaN: none); returns the samples held. */
long gui_plot_held(size_t *bytes, double *budget_mib, int *halvings, double *oldest);
/* The plots shown, as universe.plots spells them ("a, b; @x, y": plots separated by ';',
 * series by ','; '@': the others against the first), whole plots up to size - 1 characters. */
void gui_plots_spec(char *out, size_t size);
/* The plot benchmark (the script's bench_plots): at the next frame the plots show `series`
 * synthetic series of seconds / dt samples each over a window of `seconds`, which go on
 * growing by one sample per dt of display time while the clock runs (the window slides over
 * them once the display time passes `seconds`); then each frame's plot building time is
 * counted: gui_plot_bench_report gives the frames, their mean and largest time and the mean
 * time a frame spent appending the new samples, s. */
void gui_plot_bench(int series, double seconds, double dt);
int gui_plot_bench_report(double *mean_s, double *max_s, double *feed_s);
/* The pixel columns the time plots keep between frames, each read again from its history:
 * returns the columns compared, *differ those whose extremes differ (0: the kept ones are
 * right; the script's print_plot_columns). */
int gui_plot_columns_check(int *differ);

#ifdef __cplusplus
}
#endif

#endif
