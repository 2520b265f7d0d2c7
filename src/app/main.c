/* issim command line: run, validate, help. Uses public headers only. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>

#include "issim/core.h"
#include "issim/display.h"
#include "issim/engine.h"
#include "issim/io.h"
#include "issim/math.h"
#include "issim/sim.h"
#include "issim/study.h"

#include "display_module.h"

#define EXIT_USAGE 2

typedef struct Command {
    const char *name;
    int (*run)(int argc, char **argv); /* NULL: run and validate, parsed here */
    const char *summary;
} Command;

int cmd_device(int argc, char **argv);
int cmd_map(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_fit(int argc, char **argv);

/* Every subcommand: the dispatch, `issim help` and the usage's list come from this table. */
static const Command COMMANDS[] = {
    {"run", NULL, "simulate SCENE (a Lua scene file, see docs/scene-format.md)"},
    {"validate", NULL,
     "load SCENE and build its engine; report problems, simulate nothing;\n"
     "            --save FILE writes the scene with the --set overrides applied"},
    {"map", cmd_map, "print a contact-response map (docs/contact-map-format.md), plot it"},
    {"sweep", cmd_sweep, "run a parameter study: a grid or random draws (docs/studies.md)"},
    {"fit", cmd_fit, "fit scene parameters to measured data (docs/studies.md)"},
    {"device", cmd_device,
     "run the haptic servo headless on a device (docs/haptics.md, pantograph-protocol.md)"},
    {"help", NULL, "this text, or a subcommand's own: issim help SUBCOMMAND"},
    {NULL, NULL, NULL},
};

static const Command *find_command(const char *name) {
    for (const Command *c = COMMANDS; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static void usage(FILE *out) {
    fputs("usage: issim run SCENE [--headless] [--until T] [--dt DT] [--integrator bdf|adams|rk4]\n"
          "                 [--record FILE] [--vars LIST] [--every N] [--set PATH=VALUE ...]\n"
          "                 [--param NAME=VALUE ...]\n"
          "                 [--lockstep] [--quiet]\n"
          "                 [--script FILE] [--screenshot FILE] [--no-gui] [--size WxH]\n"
          "                 [--bench SECONDS [--bench-no-render] [--bench-speed X] "
          "[--bench-paused]]\n"
          "                 [--no-vsync] [--device DEVICE [--device-rate HZ] [--device-hand H]]\n"
          "       issim validate SCENE [--set PATH=VALUE ...] [--save FILE]\n"
          "       issim map FILE [--plot PNG] [--nodes LIST] [--until T]\n"
          "       issim sweep SCENE --grid NAME=VALUES ... [--out FILE] (issim sweep --help)\n"
          "       issim fit SCENE --data FILE --free PATH ... (issim fit --help)\n"
          "       issim device DEVICE SCENE [--duration S] ... (issim device --help)\n"
          "       issim help [SUBCOMMAND] | --help | --version\n"
          "\n",
          out);
    for (const Command *c = COMMANDS; c->name; c++)
        fprintf(out, "  %-9s %s\n", c->name, c->summary);
    fputs("\n"
          "  --headless        no window: run to --until as fast as possible, print a summary\n"
          "  --until T         simulated end time in seconds (default 2, at most 1e6)\n"
          "  --dt DT           output interval (CVODE) or fixed step (RK4), seconds\n"
          "  --integrator K    override the scene's integrator\n"
          "  --record FILE     write a CSV trajectory (first column t)\n"
          "  --vars LIST       comma-separated variables to record, e.g. bar.pos.z,bar.vel.z\n"
          "                    (default: the scene's universe.record, else every variable)\n"
          "  --every N         record every Nth output step (default 1)\n"
          "  --param NAME=VALUE  a scene parameter (param(NAME, default) in the scene), e.g.\n"
          "                    --param angle_deg=30 on bar_drop_angle.lua (repeatable)\n"
          "  --set PATH=VALUE  override a property, e.g. --set bar.mass=2 --set\n"
          "                    universe.gravity='0 0 -1.62' (repeatable)\n"
          "  --lockstep        deterministic single-thread stepping: bit-identical output\n"
          "  --quiet           no progress line on stderr\n"
          "\n"
          "GUI (without --headless; docs/user-guide.md):\n"
          "  --script FILE     run the UI actions in FILE (open, set, click, key, screenshot...)\n"
          "                    then quit\n"
          "  --screenshot FILE write a PNG of the window after one second, then quit\n"
          "  --no-gui          the 3D view only, no panels\n"
          "  --size WxH        window size in pixels (default 1280x720)\n"
          "  --bench SECONDS   print frames per second and engine throughput, then quit;\n"
          "                    --bench-no-render: no window (the engine-only baseline);\n"
          "                    --bench-speed X: display clock speed factor;\n"
          "                    --bench-paused: the clock paused (the renderer's own rate)\n"
          "  --no-vsync        do not wait for the display's refresh\n"
          "  --device DEVICE   a haptic device on scenes with a haptics table, shown in the\n"
          "                    device panel: sim (the simulated pantograph), usb[:VID:PID],\n"
          "                    serial:PATH or playback:FILE; motors off until enabled, F9 or\n"
          "                    Pause is the emergency stop (docs/haptics.md)\n"
          "  --device-rate HZ  servo rate (default 1000)\n"
          "  --device-hand H   the simulated hand: free, hold:X,Y or circle:R,T (sim only)\n"
          "\n"
          "Exit status: 0 success, 1 simulation or scene error, 2 bad arguments.\n",
          out);
}

static int bad_usage(const char *fmt, const char *arg) {
    fprintf(stderr, "issim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return EXIT_USAGE;
}

static bool parse_double(const char *text, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

typedef struct CliArgs {
    const char *command;
    const char *scene;
    bool headless;
    SimOptions options;
    const char *sets[256];
    const char *params[SCENE_MAX_PARAMS];
    const char *save_path; /* validate --save */
    DisplayOptions display;
} CliArgs;

static int parse_args(int argc, char **argv, CliArgs *a) {
    a->options = sim_options_default();
    a->options.sets = a->sets;
    a->options.params = a->params;
    a->display = display_options_default();
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes_value = strcmp(arg, "--until") == 0 || strcmp(arg, "--dt") == 0 ||
                           strcmp(arg, "--record") == 0 || strcmp(arg, "--vars") == 0 ||
                           strcmp(arg, "--every") == 0 || strcmp(arg, "--set") == 0 ||
                           strcmp(arg, "--param") == 0 || strcmp(arg, "--integrator") == 0 ||
                           strcmp(arg, "--save") == 0 || strcmp(arg, "--script") == 0 ||
                           strcmp(arg, "--screenshot") == 0 || strcmp(arg, "--size") == 0 ||
                           strcmp(arg, "--bench") == 0 || strcmp(arg, "--bench-speed") == 0 ||
                           strcmp(arg, "--device") == 0 || strcmp(arg, "--device-rate") == 0 ||
                           strcmp(arg, "--device-hand") == 0;
        if (takes_value && !value)
            return bad_usage("%s needs a value", arg);
        double d;
        if (strcmp(arg, "--headless") == 0) {
            a->headless = true;
        } else if (strcmp(arg, "--lockstep") == 0) {
            a->options.lockstep = true;
        } else if (strcmp(arg, "--quiet") == 0) {
            a->options.quiet = true;
        } else if (strcmp(arg, "--until") == 0) {
            /* Bounded: 1e20 s overflowed the step count into a run of 0 steps, exit 0. */
            if (!parse_double(value, &d) || d <= 0 || d > STUDY_UNTIL_MAX)
                return bad_usage("--until needs a time in (0, 1e6] seconds, not '%s'", value);
            a->options.until = d;
            i++;
        } else if (strcmp(arg, "--dt") == 0) {
            if (!parse_double(value, &d) || d <= 0 || d > 1)
                return bad_usage("--dt needs a step in (0, 1] seconds, not '%s'", value);
            a->options.dt = d;
            i++;
        } else if (strcmp(arg, "--every") == 0) {
            if (!parse_double(value, &d) || d < 1 || d != floor(d) || d > 1e9)
                return bad_usage("--every needs a positive integer, not '%s'", value);
            a->options.every = (int)d;
            i++;
        } else if (strcmp(arg, "--integrator") == 0) {
            IntegratorKind k;
            if (!integrator_parse(value, &k)) {
                char names[64];
                thing_vocabulary_list(integrator_names, INTEGRATOR_COUNT, names, sizeof names);
                char msg[256];
                snprintf(msg, sizeof msg, "--integrator must be one of %s, not '%.64s'", names,
                         value);
                return bad_usage("%s", msg);
            }
            a->options.integrator = k;
            i++;
        } else if (strcmp(arg, "--record") == 0) {
            a->options.record_path = value;
            i++;
        } else if (strcmp(arg, "--save") == 0) {
            a->save_path = value;
            i++;
        } else if (strcmp(arg, "--vars") == 0) {
            a->options.vars = value;
            i++;
        } else if (strcmp(arg, "--set") == 0) {
            if (a->options.set_count >= 256)
                return bad_usage("too many --set options%s", "");
            if (!strchr(value, '='))
                return bad_usage("--set needs PATH=VALUE, not '%s'", value);
            a->sets[a->options.set_count++] = value;
            i++;
        } else if (strcmp(arg, "--param") == 0) {
            if (a->options.param_count >= SCENE_MAX_PARAMS)
                return bad_usage("too many --param options (at most %s)", "32");
            if (!strchr(value, '='))
                return bad_usage("--param needs NAME=VALUE, not '%s'", value);
            a->params[a->options.param_count++] = value;
            i++;
        } else if (strcmp(arg, "--script") == 0) {
            a->display.script_path = value;
            i++;
        } else if (strcmp(arg, "--screenshot") == 0) {
            a->display.screenshot_path = value;
            i++;
        } else if (strcmp(arg, "--no-gui") == 0) {
            a->display.show_gui = false;
        } else if (strcmp(arg, "--no-vsync") == 0) {
            a->display.vsync = false;
        } else if (strcmp(arg, "--bench-paused") == 0) {
            a->display.bench_paused = true;
        } else if (strcmp(arg, "--bench-no-render") == 0) {
            a->display.bench_no_render = true;
        } else if (strcmp(arg, "--size") == 0) {
            int w = 0, h = 0;
            if (sscanf(value, "%dx%d", &w, &h) != 2 || w < 64 || h < 64 || w > 8192 || h > 8192)
                return bad_usage("--size needs WIDTHxHEIGHT (64 to 8192), not '%s'", value);
            a->display.width = w;
            a->display.height = h;
            i++;
        } else if (strcmp(arg, "--bench") == 0) {
            if (!parse_double(value, &d) || d <= 0 || d > 3600)
                return bad_usage("--bench needs a duration in (0, 3600] seconds, not '%s'", value);
            a->display.bench_seconds = d;
            i++;
        } else if (strcmp(arg, "--bench-speed") == 0) {
            if (!parse_double(value, &d) || d <= 0 || d > 1e6)
                return bad_usage("--bench-speed needs a positive factor, not '%s'", value);
            a->display.bench_speed = d;
            i++;
        } else if (strcmp(arg, "--device") == 0) {
            a->display.device = value;
            i++;
        } else if (strcmp(arg, "--device-rate") == 0) {
            if (!parse_double(value, &d) || d < 100 || d > 20000)
                return bad_usage("--device-rate needs a rate in [100, 20000] Hz, not '%s'", value);
            a->display.device_rate = d;
            i++;
        } else if (strcmp(arg, "--device-hand") == 0) {
            a->display.device_hand = value;
            i++;
        } else if (arg[0] == '-') {
            return bad_usage("unknown option '%s'", arg);
        } else if (!a->scene) {
            a->scene = arg;
        } else {
            return bad_usage("unexpected argument '%s'", arg);
        }
    }
    if (!a->scene)
        return bad_usage("%s needs a SCENE file", a->command);
    if (a->display.device && (a->headless || strcmp(a->command, "run") != 0))
        return bad_usage("--device needs the GUI (%s); headless: issim device DEVICE SCENE",
                         a->headless ? "not --headless" : "issim run");
    return 0;
}

static char *join_command_line(int argc, char **argv) {
    static char line[2048];
    size_t used = 0;
    for (int i = 0; i < argc && used < sizeof line - 1; i++)
        used += (size_t)snprintf(line + used, sizeof line - used, "%s%s", i ? " " : "", argv[i]);
    return line;
}

static int cmd_validate(CliArgs *a) {
    IssimError err = {0};
    Sim *sim = sim_create(a->scene, &a->options, &err);
    if (!sim) {
        fprintf(stderr, "issim: %s\n", err.message);
        return 1;
    }
    Engine *e = sim_engine(sim);
    printf("%s: ok (%d bodies, %d state variables, integrator %s, dt %g s)\n", a->scene,
           engine_body_count(e), engine_var_count(e), integrator_name(engine_integrator(e)),
           engine_dt(e));
    int rc = 0;
    if (a->save_path) {
        if (scene_save_file(engine_thingdb(e), a->save_path, &err) == ISSIM_OK) {
            printf("saved %s\n", a->save_path);
        } else {
            fprintf(stderr, "issim: %s\n", err.message);
            rc = 1;
        }
    }
    sim_destroy(sim);
    return rc;
}

/* The options that only mean something in a window: without the display module they are an
 * error, while a plain `issim run SCENE` still simulates, headless. */
static const char *window_only_option(const DisplayOptions *d) {
    return d->script_path       ? "--script"
           : d->screenshot_path ? "--screenshot"
           : d->bench_seconds   ? "--bench"
           : d->device          ? "--device"
                                : NULL;
}

static int cmd_run(CliArgs *a, int argc, char **argv) {
    a->options.command_line = join_command_line(argc, argv);
    if (!a->headless) {
        char why[4608];
        DisplayRunFn run_window = display_module_load(why, sizeof why);
        if (run_window)
            return run_window(a->scene, &a->options, &a->display);
        const char *option = window_only_option(&a->display);
        if (option) {
            fprintf(stderr, "issim: %s needs the GUI: %s\n", option, why);
            return 1;
        }
        fprintf(stderr, "issim: %s; running %s headless\n", why, a->scene);
    }
    IssimError err = {0};
    Sim *sim = sim_create(a->scene, &a->options, &err);
    if (!sim) {
        fprintf(stderr, "issim: %s\n", err.message);
        return 1;
    }
    SimSummary *summary = calloc(1, sizeof *summary);
    IssimStatus s = summary ? sim_run_headless(sim, summary, &err) : ISSIM_ERR_NOMEM;
    if (summary)
        sim_print_summary(sim, summary, stdout);
    int rc = 0;
    if (s != ISSIM_OK) {
        fprintf(stderr, "issim: %s\n", err.message);
        rc = 1;
    } else if (summary->recording_failed) {
        rc = 1;
    }
    free(summary);
    sim_destroy(sim);
    return rc;
}

/* `issim help [SUBCOMMAND]`: a subcommand's own help is what `issim SUBCOMMAND --help` prints. */
static int help(int argc, char **argv) {
    if (argc < 3) {
        usage(stdout);
        return 0;
    }
    const Command *command = find_command(argv[2]);
    if (!command) {
        fprintf(stderr, "issim: no subcommand '%s'; they are:", argv[2]);
        for (const Command *c = COMMANDS; c->name; c++)
            fprintf(stderr, " %s", c->name);
        fputc('\n', stderr);
        return EXIT_USAGE;
    }
    if (!command->run) {
        usage(stdout);
        return 0;
    }
    char *args[] = {argv[0], argv[2], "--help", NULL};
    return command->run(3, args);
}

/* BLAS pinned to one thread and OpenBLAS's spinning pool stopped before anything else runs
 * (linalg_init: why, in src/math/linalg.c). */
int main(int argc, char **argv) {
    linalg_init();
    /* A file-size limit reached while recording must be an EFBIG write error the recorder
     * reports, not a signal that kills the simulation. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("issim %s\n", ISSIM_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "help") == 0)
        return help(argc, argv);
    const Command *command = find_command(argv[1]);
    if (command && command->run)
        return command->run(argc, argv);
    CliArgs a = {.command = argv[1]};
    if (strcmp(a.command, "run") != 0 && strcmp(a.command, "validate") != 0)
        return bad_usage("unknown command '%s'", argv[1]);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout); /* `issim run --help`: asked for, not an error */
            return 0;
        }
    }
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    char scene[PATH_MAX];
    IssimError err = {0};
    if (scene_find(a.scene, scene, sizeof scene, &err) != ISSIM_OK) {
        fprintf(stderr, "issim: %s\n", err.message);
        return 1;
    }
    a.scene = scene;
    return strcmp(a.command, "run") == 0 ? cmd_run(&a, argc, argv) : cmd_validate(&a);
}
