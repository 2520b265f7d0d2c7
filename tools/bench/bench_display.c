/* issim-bench display: the display's figures, measured on the real `issim` executable (the
 * display is linked into it only; libissim stays display-free).
 *  - frames per second at 1280x720 for 1, 100 and 1,000 bodies (generated scenes of mixed
 *    spheres, boxes, capsules and octahedra, spinning without gravity so the engine keeps up
 *    and the figure is the renderer's), under Xvfb when no display is set (Mesa llvmpipe);
 *  - engine throughput (simulated seconds per wall second with the display clock at 1000x, so
 *    the engine never waits) with the window drawing and without a window;
 *  - edit latency: wall time from the GUI's submission of a property edit to the engine
 *    applying it, against the engine's step time;
 *  - plot drawing (issue 31's target): the Plots section's CPU time per frame for 8 series of
 *    1e6 samples (10 s at 1e-5 s output steps), the window still (paused) and sliding (running
 *    past the window's length, the series growing at 1e-5 s a sample with the clock);
 *  - input latency (issue 31's target): from a key (Return in a property field, tapped from a
 *    timer at a varying point of the frame) to the engine applying the edit it commits and to
 *    the frame that shows the accepted line, at 30 fps, point_drop and the 240-body pile.
 * Usage: issim-bench display [fps | throughput | latency | plots | input] [--seconds S]. */
#include "bench.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BD_LINE 4096

static char issim_path[1100];
static char wrapper[256];

static bool find_issim(void) {
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(issim_path, sizeof issim_path, "%s/issim", self);
    return access(issim_path, X_OK) == 0;
}

/* Xvfb for a real X11 window when there is no display (the measuring condition);
 * with neither, SDL's offscreen EGL driver. */
static void choose_wrapper(void) {
    const char *display = getenv("DISPLAY");
    if (display && display[0])
        wrapper[0] = '\0';
    else if (access("/usr/bin/xvfb-run", X_OK) == 0)
        snprintf(wrapper, sizeof wrapper, "xvfb-run -a -s '-screen 0 1280x800x24' ");
    else
        snprintf(wrapper, sizeof wrapper, "SDL_VIDEODRIVER=offscreen ");
}

static const char *write_scene(int bodies) {
    static char path[256];
    snprintf(path, sizeof path, "/tmp/issim-bench-display-%d-%d.lua", (int)getpid(), bodies);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    int side = (int)ceil(cbrt((double)bodies));
    double gap = 0.12;
    fprintf(f, "local things = {\n"
               "  { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},\n"
               "    offset = -0.5, material = 'm' },\n}\n");
    fprintf(f, "local n, side, gap = %d, %d, %g\n", bodies, side, gap);
    fputs("for i = 0, n - 1 do\n"
          "  local x, y, z = i % side, (i // side) % side, i // (side * side)\n"
          "  local b = { name = 'b' .. i, kind = 'body', material = 'm', mass = 0.1,\n"
          "    inertia = {1e-4, 1e-4, 1e-4},\n"
          "    pos = {(x - side / 2) * gap, (y - side / 2) * gap, z * gap},\n"
          "    angvel = {math.sin(i), math.cos(i), 0.5},\n"
          "    color = {0.3 + 0.7 * (i % 7) / 6, 0.4, 1 - 0.7 * (i % 5) / 4} }\n"
          "  local k = i % 4\n"
          "  if k == 0 then b.shape, b.radius = 'sphere', 0.04\n"
          "  elseif k == 1 then b.shape, b.half_extents = 'box', {0.04, 0.03, 0.02}\n"
          "  elseif k == 2 then b.shape, b.radius, b.half_length = 'capsule', 0.02, 0.03\n"
          "  else b.shape, b.hull_file = 'hull', 'assets/octahedron.obj' end\n"
          "  things[#things + 1] = b\n"
          "end\n",
          f);
    fputs("return { name = 'bench_display', universe = { gravity = {0, 0, 0},\n"
          "  integrator = 'rk4', dt = 1e-3 },\n"
          "  camera = { eye = {1.6, -2.4, 1.4}, target = {0, 0, 0.3}, fov = 45 },\n"
          "  things = things,\n"
          "  contacts = { { name = 'mm', materials = {'m', 'm'}, model = 'spring_damper',\n"
          "    stiffness = 1e4, restitution = 0.5 } } }\n",
          f);
    fclose(f);
    return path;
}

typedef struct BenchLine {
    int bodies, frames;
    double fps, steps_per_s, sim_per_s;
    double cpu_ms_per_frame, cpu_share; /* the display's threads: main and rasterisers */
} BenchLine;

/* Runs issim with args and parses its "bench ..." line. */
static bool run_bench_line(const char *env, const char *args, BenchLine *out) {
    char cmd[2048], line[BD_LINE];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s %s'%s' run %s 2>/dev/null",
             getenv("ISSIM_SOURCE_DIR") ? getenv("ISSIM_SOURCE_DIR") : ".", env, wrapper,
             issim_path, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    bool found = false;
    while (fgets(line, sizeof line, p)) {
        const char *b = strstr(line, "bench paused=");
        if (!b)
            continue;
        int render, paused;
        double wall, steps;
        found =
            sscanf(
                b,
                "bench paused=%d bodies=%d render=%d frames=%d wall=%lf fps=%lf engine_steps=%lf "
                "engine_steps_per_s=%lf sim_seconds_per_s=%lf",
                &paused, &out->bodies, &render, &out->frames, &wall, &out->fps, &steps,
                &out->steps_per_s, &out->sim_per_s) == 9;
        const char *cpu = strstr(b, "display_cpu_ms_per_frame=");
        const char *share = strstr(b, "display_cpu_share=");
        out->cpu_ms_per_frame = cpu ? atof(cpu + 25) : NAN;
        out->cpu_share = share ? atof(share + 18) : NAN;
    }
    pclose(p);
    return found;
}

/* Frames per second with the engine running (the clock at 1x: what a user sees) and paused
 * (the renderer alone), with the display's CPU time per frame, which unlike the frame rate
 * does not depend on what else the shared machine runs. Run again with the rasterisers at the
 * display's own priority (ISSIM_RASTER_NICE=0). */
static void bench_fps(double seconds) {
    printf("\n## display: frames per second at 1280x720 (%s), GUI shown, no vsync\n",
           wrapper[0] == 'x' ? "Xvfb, Mesa llvmpipe"
           : wrapper[0]      ? "offscreen EGL"
                             : "$DISPLAY");
    printf("%8s %-20s %14s %18s %14s %12s %14s\n", "bodies", "rasteriser", "fps (running)",
           "engine steps/s", "cpu ms/frame", "fps (paused)", "cpu ms/frame");
    int counts[3] = {1, 100, 1000};
    const char *envs[2] = {"", "ISSIM_RASTER_NICE=0"};
    const char *env_names[2] = {"nice 10 (default)", "nice 0"};
    for (int i = 0; i < 3; i++) {
        const char *scene = write_scene(counts[i]);
        if (!scene)
            continue;
        for (int e = 0; e < (counts[i] == 1000 ? 2 : 1); e++) {
            char args[1024];
            BenchLine run, still;
            snprintf(args, sizeof args, "'%s' --no-vsync --size 1280x720 --bench %g", scene,
                     seconds);
            bool ok = run_bench_line(envs[e], args, &run);
            snprintf(args, sizeof args, "'%s' --no-vsync --size 1280x720 --bench %g --bench-paused",
                     scene, seconds);
            ok = ok && run_bench_line(envs[e], args, &still);
            if (ok)
                printf("%8d %-20s %14.1f %18.0f %14.2f %12.1f %14.2f\n", run.bodies, env_names[e],
                       run.fps, run.steps_per_s, run.cpu_ms_per_frame, still.fps,
                       still.cpu_ms_per_frame);
            else
                printf("%8d %-20s %14s\n", counts[i], env_names[e], "failed");
        }
        if (!getenv("ISSIM_BENCH_KEEP"))
            unlink(scene);
    }
}

/* The machine is shared (other builds run beside it), so the two conditions alternate,
 * five times each, and the medians are compared. */
#define THROUGHPUT_RUNS 5
static void bench_throughput(double seconds) {
    printf("\n## display: engine throughput with and without the display (clock at 1000x; "
           "median of %d alternating runs)\n",
           THROUGHPUT_RUNS);
    printf("%-24s %16s %16s %8s %8s %10s\n", "scene", "no display", "display", "cost", "fps",
           "cpu/frame");
    const char *scenes[] = {"scenes/point_drop.lua", "scenes/pile.lua"};
    for (int i = 0; i < 2; i++) {
        double with[THROUGHPUT_RUNS], without[THROUGHPUT_RUNS], fps[THROUGHPUT_RUNS],
            cpu[THROUGHPUT_RUNS];
        bool ok = true;
        for (int k = 0; k < THROUGHPUT_RUNS && ok; k++) {
            char args[1024];
            BenchLine b;
            snprintf(args, sizeof args, "%s --bench %g --bench-speed 1000 --bench-no-render",
                     scenes[i], seconds);
            ok = run_bench_line("", args, &b);
            without[k] = b.sim_per_s;
            snprintf(args, sizeof args, "%s --bench %g --bench-speed 1000 --size 1280x720",
                     scenes[i], seconds);
            ok = ok && run_bench_line("", args, &b);
            with[k] = b.sim_per_s;
            fps[k] = b.fps;
            cpu[k] = b.cpu_ms_per_frame;
        }
        if (!ok) {
            printf("%-24s failed\n", scenes[i]);
            continue;
        }
        int n = THROUGHPUT_RUNS;
        double a = bench_quantile(without, n, 0.5), b = bench_quantile(with, n, 0.5);
        double c = bench_quantile(cpu, n, 0.5);
        /* (bench_quantile sorted them: the first and last are the extremes) */
        printf("%-24s %12.4f s/s %12.4f s/s %7.1f%% %8.1f %7.2f ms   (no display %.4g-%.4g, "
               "display %.4g-%.4g)\n",
               scenes[i], a, b, 100.0 * (1.0 - b / a), bench_quantile(fps, n, 0.5), c, without[0],
               without[n - 1], with[0], with[n - 1]);
    }
}

static void bench_edit_latency(void) {
    printf("\n## display: edit latency (GUI submit -> engine applies), point_drop\n");
    const char *script = "/tmp/issim-bench-display-edits.txt";
    FILE *f = fopen(script, "w");
    if (!f)
        return;
    fputs("wait_sim 0.05\n", f);
    for (int i = 0; i < 40; i++)
        fprintf(f, "set bar.mass %s\nwait_edits\nframes 2\n", i % 2 ? "1" : "1.5");
    fclose(f);
    char cmd[2048], line[BD_LINE];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s'%s' run scenes/point_drop.lua --script %s 2>/dev/null",
             getenv("ISSIM_SOURCE_DIR") ? getenv("ISSIM_SOURCE_DIR") : ".", wrapper, issim_path,
             script);
    FILE *p = popen(cmd, "r");
    double lat[64];
    int n = 0;
    while (p && fgets(line, sizeof line, p)) {
        const char *l = strstr(line, "latency_ms=");
        if (l && n < 64)
            lat[n++] = atof(l + 11);
    }
    if (p)
        pclose(p);
    unlink(script);
    if (n == 0) {
        printf("failed\n");
        return;
    }
    printf("edits %d: latency p50 %.3f ms, p90 %.3f ms, max %.3f ms (engine dt = 1 ms of "
           "simulated time; the engine thread naps 1 ms when it is a horizon ahead)\n",
           n, bench_quantile(lat, n, 0.5), bench_quantile(lat, n, 0.9),
           bench_quantile(lat, n, 1.0));
}

/* Runs issim on point_drop with a script (the text of a temporary file) and returns its output
 * lines that start with `prefix`, joined, in out. */
static bool run_script_lines(const char *script, const char *args, const char *prefix, char *out,
                             size_t size) {
    char path[256], cmd[2048], line[BD_LINE];
    snprintf(path, sizeof path, "/tmp/issim-bench-display-script-%d.txt", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs(script, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s'%s' run %s --script %s 2>/dev/null",
             getenv("ISSIM_SOURCE_DIR") ? getenv("ISSIM_SOURCE_DIR") : ".", wrapper, issim_path,
             args, path);
    FILE *p = popen(cmd, "r");
    size_t used = 0;
    out[0] = '\0';
    while (p && fgets(line, sizeof line, p))
        if (strncmp(line, prefix, strlen(prefix)) == 0 && used + strlen(line) < size) {
            memcpy(out + used, line, strlen(line) + 1);
            used += strlen(line);
        }
    if (p)
        pclose(p);
    unlink(path);
    return used > 0;
}

/* The plots on screen at 1280x800: Transport, Universe and Recording collapsed (their headers'
 * rows, each moving up as the one above closes). */
static const char *const collapse_panels = "mouse_move 1000 57\nframes 2\nclick 1000 57\nframes 2\n"
                                           "mouse_move 1000 80\nframes 2\nclick 1000 80\nframes 2\n"
                                           "mouse_move 1000 103\nframes 2\nclick 1000 103\n"
                                           "frames 2\n";

/* The plot target: 8 series over 10 s at 1e-5 s output steps, the Plots section's CPU time per
 * frame (the display thread's; llvmpipe rasterises on threads of its own), still and sliding.
 * The sliding run first takes point_drop past 10.5 s at 10x, so the window has filled and the
 * axis moves every frame. */
static void bench_plots(double seconds) {
    printf("\n## display: plot drawing, 8 series x 1e6 samples (10 s at 1e-5 s), 1280x800 (%s)\n",
           wrapper[0] == 'x' ? "Xvfb, Mesa llvmpipe"
           : wrapper[0]      ? "offscreen EGL"
                             : "$DISPLAY");
    printf("%-10s %8s %14s %14s %14s %12s %8s\n", "window", "frames", "plots ms mean",
           "plots ms max", "feed ms mean", "frame cpu ms", "fps");
    const char *modes[2] = {"still", "sliding"};
    for (int m = 0; m < 2; m++) {
        char script[2048], out[BD_LINE];
        snprintf(script, sizeof script,
                 "speed 10\nwait_sim 10.5\nspeed 1\n%s%sbench_plots 8 10 1e-5\nframes 3\n"
                 "bench %g\nprint_bench_plots\n",
                 collapse_panels, m == 0 ? "pause\n" : "", seconds);
        int frames = 0;
        double mean = NAN, most = NAN, feed = NAN, fps = NAN, cpu = NAN;
        if (run_script_lines(script, "scenes/point_drop.lua --size 1280x800", "bench", out,
                             sizeof out)) {
            const char *b = strstr(out, "bench_plots frames=");
            if (b)
                sscanf(b, "bench_plots frames=%d mean_ms=%lf max_ms=%lf feed_ms=%lf", &frames,
                       &mean, &most, &feed);
            const char *f = strstr(out, "bench fps=");
            const char *c = strstr(out, "display_cpu_ms_per_frame=");
            fps = f ? atof(f + 10) : NAN;
            cpu = c ? atof(c + 25) : NAN;
        }
        if (frames > 0)
            printf("%-10s %8d %14.3f %14.3f %14.3f %12.2f %8.1f   (target < 2 ms: %s)\n", modes[m],
                   frames, mean, most, feed, cpu, fps, mean < 2.0 ? "met" : "NOT met");
        else
            printf("%-10s failed\n", modes[m]);
    }
    printf("(plots: building the Plots section, display thread CPU; feed: appending the "
           "synthetic samples, the benchmark's own cost, not drawing)\n");
}

/* The values after `key` on every line of out, into v (at most max); returns how many. */
static int collect(const char *out, const char *key, double *v, int max) {
    int n = 0;
    for (const char *at = strstr(out, key); at && n < max; at = strstr(at + 1, key))
        v[n++] = atof(at + strlen(key));
    return n;
}

/* Key to applied edit at 30 fps: the first body's mass typed into its field (the property
 * table's first row, fixed by the layout), Return tapped by a timer 1-33 ms after the script's
 * command (so at every point of a frame: drawing, or waiting for the next), 18 times. */
#define INPUT_EDITS 18
static void bench_input_latency(void) {
    printf("\n## display: input latency at 30 fps (Return in a property field -> the engine "
           "applies the edit; -> the frame showing 'accepted'), %d edits\n",
           INPUT_EDITS);
    printf("%-22s %6s %24s %24s %12s %8s\n", "scene", "edits", "key->apply ms p50/p90/max",
           "key->shown ms p50/p90/max", "frames max", "fps");
    const char *scenes[2][2] = {{"scenes/point_drop.lua", "bar"}, {"scenes/pile.lua", "b0"}};
    for (int i = 0; i < 2; i++) {
        char script[8192], out[16384];
        int used = snprintf(script, sizeof script, "fps 30\nwait_sim 0.05\nselect %s\nframes 3\n",
                            scenes[i][1]);
        for (int k = 0; k < INPUT_EDITS && used < (int)sizeof script - 200; k++)
            used += snprintf(script + used, sizeof script - used,
                             "mouse_move 180 508\nframes 2\nclick 180 508\nframes 2\ntype %s\n"
                             "frames 1\nkey_after %d return\nframes 3\nwait_edits\n",
                             k % 2 ? "0.02" : "0.03", 1 + (k * 2) % 33);
        snprintf(script + used, sizeof script - used, "bench 3\n");
        double apply[INPUT_EDITS], shown[INPUT_EDITS], frames[INPUT_EDITS], engine[INPUT_EDITS],
            display[INPUT_EDITS], fps = NAN;
        int n = 0, n_engine = 0;
        if (run_script_lines(script, scenes[i][0], "", out, sizeof out)) {
            n = collect(out, "key_to_apply_ms=", apply, INPUT_EDITS);
            n_engine = collect(out, "latency_ms=", engine, INPUT_EDITS);
            for (int k = 0; k < n && n_engine == n; k++) /* before the quantiles sort them */
                display[k] = apply[k] - engine[k];
            collect(out, "key_to_shown_ms=", shown, INPUT_EDITS);
            collect(out, "frames_after_key=", frames, INPUT_EDITS);
            const char *f = strstr(out, "bench fps=");
            fps = f ? atof(f + 10) : NAN;
        }
        if (n == 0) {
            printf("%-22s failed\n", scenes[i][0]);
            continue;
        }
        double most_frames = bench_quantile(frames, n, 1.0);
        printf("%-22s %6d %10.1f %6.1f %6.1f %10.1f %6.1f %6.1f %12.0f %8.1f   (target < 33.3 "
               "ms: %s)\n",
               scenes[i][0], n, bench_quantile(apply, n, 0.5), bench_quantile(apply, n, 0.9),
               bench_quantile(apply, n, 1.0), bench_quantile(shown, n, 0.5),
               bench_quantile(shown, n, 0.9), bench_quantile(shown, n, 1.0), most_frames, fps,
               bench_quantile(apply, n, 1.0) < 1e3 / 30 ? "met" : "NOT met");
        /* Where the time goes: the display taking the key to submitting the edit, the engine
         * taking the submitted edit to applying it (each edit's line has both). */
        if (n_engine == n) {
            printf("%-22s %6s %10.1f %6.1f %6.1f   (display: key->submit)\n", "", "",
                   bench_quantile(display, n, 0.5), bench_quantile(display, n, 0.9),
                   bench_quantile(display, n, 1.0));
            printf("%-22s %6s %10.1f %6.1f %6.1f   (engine: submit->apply)\n", "", "",
                   bench_quantile(engine, n, 0.5), bench_quantile(engine, n, 0.9),
                   bench_quantile(engine, n, 1.0));
        }
    }
    printf("(key times from SDL's event timestamps, 1 ms steps; frames: the accepted line appears "
           "that many frames after the one that handled the key; key->apply is key->submit plus "
           "submit->apply per edit)\n");
}

int bench_display(int argc, char **argv) {
    double seconds = 5.0;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
    if (!find_issim()) {
        fprintf(stderr, "issim-bench display: no issim executable next to issim-bench\n");
        return 1;
    }
    choose_wrapper();
    /* One part only: issim-bench display fps | throughput | latency | plots | input */
    const char *only = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
    if (!only[0] || strcmp(only, "fps") == 0)
        bench_fps(seconds);
    if (!only[0] || strcmp(only, "throughput") == 0)
        bench_throughput(seconds);
    if (!only[0] || strcmp(only, "latency") == 0)
        bench_edit_latency();
    if (!only[0] || strcmp(only, "plots") == 0)
        bench_plots(seconds);
    if (!only[0] || strcmp(only, "input") == 0)
        bench_input_latency();
    return 0;
}
