/* issim display: the SDL2 window with an OpenGL 3.3 core context (through GLEW), the renderer of
 * every collision shape, the camera and picking, and the interactive application loop that
 * ties them to a simulation session and the Dear ImGui GUI (gui.h) (000 App. B.4.1, B.6).
 *
 * The display is the main thread. Every frame it reads the registry's state at display time
 * (registry_read_at(sim_display_time)): it never waits for the engine, and when the engine has
 * run ahead it still shows the state at display time. Everything it changes goes back through
 * the registry: property edits through the edit queue, the drag spring through
 * REGISTRY_SLOT_POINTER (sim.h), the clock through sim_set_paused / sim_set_speed / sim_seek.
 *
 * Not part of libissim: tests and tools link without SDL or OpenGL; they drive the `issim`
 * executable (--script, --screenshot, --bench) instead. Built as a module, libissim-display.so,
 * that the executable loads with dlopen only when it opens a window (src/app/display_module.c;
 * docs/architecture.md, "The display module"): display_run and display_module_matches are the
 * module's entry points, found with dlsym; the module calls libissim through the executable.
 *
 * Threading: every function here runs on the display (main) thread.
 */
#ifndef ISSIM_DISPLAY_H
#define ISSIM_DISPLAY_H

#include "issim/core.h"
#include "issim/sim.h"

typedef struct DisplayOptions {
    int width, height;           /* window size in pixels; default 1280 x 720 */
    const char *script_path;     /* Nullable: a file of UI actions run frame by frame (see
                                    docs/user-guide.md, "Scripts"); the program quits at its end */
    const char *screenshot_path; /* Nullable: write a PNG of the first settled frame and quit */
    bool show_gui;               /* draw the Dear ImGui panels (default true) */
    bool vsync;                  /* swap interval 1 (default true; benchmarks turn it off) */
    double bench_seconds;        /* > 0: measure frames per second and engine throughput for
                                    this long, print them, quit */
    bool bench_no_render;        /* with bench_seconds: run the session without drawing (the
                                    engine-throughput baseline) */
    double bench_speed;          /* with bench_seconds: display clock speed factor (default 1) */
    bool bench_paused;           /* with bench_seconds: measure with the clock paused (the
                                    engine idles once a horizon ahead: the renderer's own rate) */
    const char *device;          /* Nullable: a haptic device for scenes with a haptics table
                                    ("sim", "usb[:VID:PID]", "serial:PATH", "playback:FILE"; see
                                    docs/haptics.md); the device panel shows it */
    double device_rate;          /* servo rate, Hz (<= 0: 1000) */
    const char *device_hand;     /* Nullable: the simulated hand ("circle:R,T"...), sim only */
} DisplayOptions;

/* Inline: the executable parses the options before (and whether or not) it loads the module. */
static inline DisplayOptions display_options_default(void) {
    return (DisplayOptions){
        .width = 1280, .height = 720, .show_gui = true, .vsync = true, .bench_speed = 1.0};
}

/* True when the module was built from the same issim version and the same layout of the
 * structures display_run takes as the caller (a stale module left beside a newer executable
 * must be refused, not called with a struct of another size). */
bool display_module_matches(const char *version, size_t display_options_size,
                            size_t sim_options_size);

/* Opens the window and runs the GUI on scene_path (sim_options: --set overrides and the
 * like) until the user quits or the script ends. A scene that fails to load at start is
 * reported on stderr and in the log panel; the window then opens on an empty session so the
 * user can open another. Returns the process exit status: 0, 1 when the window or the GL
 * context cannot be created or a script command failed. */
int display_run(const char *scene_path, const SimOptions *sim_options,
                const DisplayOptions *options);

#endif
