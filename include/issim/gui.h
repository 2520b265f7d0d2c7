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

#include "issim/core.h"
#include "issim/registry.h"
#include "issim/thing.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GUI_PATH_MAX 512
#define GUI_MAX_SCENES 128
#define GUI_MAX_RECENT 8
#define GUI_MAX_PLOTS 4
#define GUI_LOG_LINES 200
/* Layout in pixels: side panels, main menu bar and status bar; the 3D view is what is left. */
#define GUI_SIDE_WIDTH 340
#define GUI_MENU_HEIGHT 20
#define GUI_STATUS_HEIGHT 24

typedef struct GuiLogLine {
    IssimLogLevel level;
    char text[256];
} GuiLogLine;

typedef struct GuiToggles {
    bool grid, contacts, forces, trails;
    double force_scale; /* m per N */
} GuiToggles;

/* What the panels show. Filled by the display each frame; Borrowed by the GUI for the frame. */
typedef struct GuiState {
    int width, height;
    const ThingDb *db;   /* Nullable: the display's copy (edits accepted so far applied) */
    const Registry *reg; /* Nullable when no scene is loaded */
    const double *frame; /* values at display time (registry_var_count), Nullable */
    const char *scene_path;
    bool running; /* a session exists (fixed-during-run properties are read-only) */
    bool paused;
    double speed, display_time, state_time, history_start, dt;
    double fps, engine_step_us, realtime_factor, engine_rate; /* engine_rate: steps/s */
    int active_contacts;
    bool recording;
    const char *record_path;
    double record_elapsed;
    uint64_t record_bytes, record_rows, record_dropped;
    const char *load_error; /* "file:line: message" of the last failed load, or "" */
    const char *edit_message;
    bool edit_rejected;
    int scene_count;
    const char (*scenes)[GUI_PATH_MAX];
    int recent_count;
    const char (*recent)[GUI_PATH_MAX];
    int log_count; /* oldest first */
    const GuiLogLine *log;
    ThingId selected;
    GuiToggles *toggles; /* the GUI flips these directly */
    bool *open_dialog;   /* the Ctrl+O "Open scene" window; the GUI closes it */
} GuiState;

/* What the user asked for this frame. Cleared by the display before each frame. */
typedef struct GuiRequests {
    bool open;
    char open_path[GUI_PATH_MAX];
    bool reload, reset, step, pause, run, quit, fit, refresh_scenes;
    bool set_speed;
    double speed;
    bool seek;
    double seek_time;
    bool edit;
    char edit_path[REGISTRY_EDIT_PATH_MAX];
    char edit_value[REGISTRY_EDIT_VALUE_MAX];
    bool record_start, record_stop;
    char record_path[GUI_PATH_MAX];
    char record_vars[1024];
    bool screenshot;
    char screenshot_path[GUI_PATH_MAX];
    bool save;
    char save_path[GUI_PATH_MAX];
    bool select;
    ThingId select_thing;
    int camera_preset; /* -1: none, else the display's CameraPreset */
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
/* Builds this frame's panels from state and fills requests. */
void gui_frame(const GuiState *state, GuiRequests *requests);
/* Draws the built frame into the current framebuffer. The side panels draw no background of
 * their own: the display clears the window to gui_panel_color first (a software rasteriser
 * clears for almost nothing but blends and textures every pixel of a background it draws). */
void gui_render(void);
/* The side panels' opaque background colour (ImGui's window colour). */
void gui_panel_color(float rgb[3]);

#ifdef __cplusplus
}
#endif

#endif
