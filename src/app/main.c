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

static int bad_usage(const char *fmt, const char *arg);

static bool parse_double(const char *text, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* ===== Options of run and validate: one row each ===== */

/* Applies an option to the arguments; value is NULL for a flag. Returns 0, or EXIT_USAGE after
 * saying why (bad_usage). */
typedef int (*OptionFn)(CliArgs *a, const char *value);

typedef struct CliOption {
    const char *name;           /* "--until" */
    const char *value;          /* the value's name in the help ("T"), NULL for a flag */
    OptionFn apply;             /* value checked and stored */
    const char *help;           /* lines after the first are indented under it */
    const char *section;        /* a heading printed before this option, or NULL */
    bool repeatable;            /* "..." in the synopsis */
    const char *const *choices; /* the vocabulary a value is one of (listed in the help), or NULL */
    int choice_count;
} CliOption;

static int opt_headless(CliArgs *a, const char *value) {
    (void)value;
    a->headless = true;
    return 0;
}

static int opt_lockstep(CliArgs *a, const char *value) {
    (void)value;
    a->options.lockstep = true;
    return 0;
}

static int opt_pipeline(CliArgs *a, const char *value) {
    (void)value;
    a->options.pipeline_collision = true;
    return 0;
}

static int opt_quiet(CliArgs *a, const char *value) {
    (void)value;
    a->options.quiet = true;
    return 0;
}

static int opt_until(CliArgs *a, const char *value) {
    double d;
    /* Bounded: 1e20 s overflowed the step count into a run of 0 steps, exit 0. */
    if (!parse_double(value, &d) || d <= 0 || d > STUDY_UNTIL_MAX)
        return bad_usage("--until needs a time in (0, 1e6] seconds, not '%s'", value);
    a->options.until = d;
    return 0;
}

static int opt_dt(CliArgs *a, const char *value) {
    double d;
    if (!parse_double(value, &d) || d <= 0 || d > 1)
        return bad_usage("--dt needs a step in (0, 1] seconds, not '%s'", value);
    a->options.dt = d;
    return 0;
}

static int opt_threads(CliArgs *a, const char *value) {
    double d;
    if (strcmp(value, "auto") == 0) {
        a->options.threads = 0;
        return 0;
    }
    if (!parse_double(value, &d) || d < 1 || d > 64 || d != floor(d))
        return bad_usage("--threads needs 'auto' or a thread count in [1, 64], not '%s'", value);
    a->options.threads = (int)d;
    return 0;
}

static int opt_every(CliArgs *a, const char *value) {
    double d;
    if (!parse_double(value, &d) || d < 1 || d != floor(d) || d > 1e9)
        return bad_usage("--every needs a positive integer, not '%s'", value);
    a->options.every = (int)d;
    return 0;
}

static int opt_integrator(CliArgs *a, const char *value) {
    int k = vocabulary_parse(integrator_names, INTEGRATOR_COUNT, value);
    if (k < 0) {
        char names[64];
        vocabulary_list(integrator_names, INTEGRATOR_COUNT, names, sizeof names);
        char msg[256];
        snprintf(msg, sizeof msg, "--integrator must be one of %s, not '%.64s'", names, value);
        return bad_usage("%s", msg);
    }
    a->options.integrator = (IntegratorKind)k;
    return 0;
}

static int opt_record(CliArgs *a, const char *value) {
    a->options.record_path = value;
    return 0;
}

static int opt_save(CliArgs *a, const char *value) {
    a->save_path = value;
    return 0;
}

static int opt_vars(CliArgs *a, const char *value) {
    a->options.vars = value;
    return 0;
}

static int opt_set(CliArgs *a, const char *value) {
    if (a->options.set_count >= 256)
        return bad_usage("too many --set options%s", "");
    if (!strchr(value, '='))
        return bad_usage("--set needs PATH=VALUE, not '%s'", value);
    a->sets[a->options.set_count++] = value;
    return 0;
}

static int opt_param(CliArgs *a, const char *value) {
    if (a->options.param_count >= SCENE_MAX_PARAMS)
        return bad_usage("too many --param options (at most %s)", "32");
    if (!strchr(value, '='))
        return bad_usage("--param needs NAME=VALUE, not '%s'", value);
    a->params[a->options.param_count++] = value;
    return 0;
}

static int opt_script(CliArgs *a, const char *value) {
    a->display.script_path = value;
    return 0;
}

static int opt_screenshot(CliArgs *a, const char *value) {
    a->display.screenshot_path = value;
    return 0;
}

static int opt_no_gui(CliArgs *a, const char *value) {
    (void)value;
    a->display.show_gui = false;
    return 0;
}

static int opt_no_vsync(CliArgs *a, const char *value) {
    (void)value;
    a->display.vsync = false;
    return 0;
}

static int opt_bench_paused(CliArgs *a, const char *value) {
    (void)value;
    a->display.bench_paused = true;
    return 0;
}

static int opt_bench_no_render(CliArgs *a, const char *value) {
    (void)value;
    a->display.bench_no_render = true;
    return 0;
}

static int opt_size(CliArgs *a, const char *value) {
    int w = 0, h = 0;
    if (sscanf(value, "%dx%d", &w, &h) != 2 || w < 64 || h < 64 || w > 8192 || h > 8192)
        return bad_usage("--size needs WIDTHxHEIGHT (64 to 8192), not '%s'", value);
    a->display.width = w;
    a->display.height = h;
    return 0;
}

static int opt_bench(CliArgs *a, const char *value) {
    double d;
    if (!parse_double(value, &d) || d <= 0 || d > 3600)
        return bad_usage("--bench needs a duration in (0, 3600] seconds, not '%s'", value);
    a->display.bench_seconds = d;
    return 0;
}

static int opt_bench_speed(CliArgs *a, const char *value) {
    double d;
    if (!parse_double(value, &d) || d <= 0 || d > 1e6)
        return bad_usage("--bench-speed needs a positive factor, not '%s'", value);
    a->display.bench_speed = d;
    return 0;
}

static int opt_device(CliArgs *a, const char *value) {
    a->display.device = value;
    return 0;
}

static int opt_device_rate(CliArgs *a, const char *value) {
    double d;
    if (!parse_double(value, &d) || d < 100 || d > 20000)
        return bad_usage("--device-rate needs a rate in [100, 20000] Hz, not '%s'", value);
    a->display.device_rate = d;
    return 0;
}

static int opt_device_hand(CliArgs *a, const char *value) {
    a->display.device_hand = value;
    return 0;
}

/* The parser, the synopsis and the option list of `issim --help` come from this table. run and
 * validate accept every row; --save is validate's only (run ignores it). */
static const CliOption OPTIONS[] = {
    {.name = "--headless",
     .apply = opt_headless,
     .help = "no window: run to --until as fast as possible, print a summary"},
    {.name = "--until",
     .value = "T",
     .apply = opt_until,
     .help = "simulated end time in seconds (default 2, at most 1e6)"},
    {.name = "--dt",
     .value = "DT",
     .apply = opt_dt,
     .help = "output interval (CVODE) or fixed step (RK4), seconds"},
    {.name = "--integrator",
     .value = "K",
     .apply = opt_integrator,
     .help = "override the scene's integrator",
     .choices = integrator_names,
     .choice_count = INTEGRATOR_COUNT},
    {.name = "--threads",
     .value = "N",
     .apply = opt_threads,
     .help = "threads of the engine's narrow phase and complementarity islands\n"
             "(default auto: 2 for scenes of 64 shaped bodies or more while a\n"
             "core is free, else 1); results are the same for every N"},
    {.name = "--pipeline",
     .apply = opt_pipeline,
     .help = "collide one step ahead on a thread of its own while the engine\n"
             "solves (a 1,000-sphere pile uses both cores); deterministic, but\n"
             "new contacts are merged a step later than without it"},
    {.name = "--record",
     .value = "FILE",
     .apply = opt_record,
     .help = "write a CSV trajectory (first column t)"},
    {.name = "--vars",
     .value = "LIST",
     .apply = opt_vars,
     .help = "comma-separated variables to record, e.g. bar.pos.z,bar.vel.z\n"
             "(default: the scene's universe.record, else every variable)"},
    {.name = "--every",
     .value = "N",
     .apply = opt_every,
     .help = "record every Nth output step (default 1)"},
    {.name = "--set",
     .value = "PATH=VALUE",
     .apply = opt_set,
     .help = "override a property, e.g. --set bar.mass=2 --set\n"
             "universe.gravity='0 0 -1.62' (repeatable)",
     .repeatable = true},
    {.name = "--param",
     .value = "NAME=VALUE",
     .apply = opt_param,
     .help = "a scene parameter (param(NAME, default) in the scene), e.g.\n"
             "--param angle_deg=30 on bar_drop_angle.lua (repeatable)",
     .repeatable = true},
    {.name = "--lockstep",
     .apply = opt_lockstep,
     .help = "deterministic single-thread stepping: bit-identical output"},
    {.name = "--quiet", .apply = opt_quiet, .help = "no progress line on stderr"},
    {.name = "--save",
     .value = "FILE",
     .apply = opt_save,
     .help = "validate: write the scene with the --set overrides applied"},
    {.name = "--script",
     .value = "FILE",
     .apply = opt_script,
     .help = "run the UI actions in FILE (open, set, click, key, screenshot...)\n"
             "then quit",
     .section = "GUI (without --headless; docs/user-guide.md):"},
    {.name = "--screenshot",
     .value = "FILE",
     .apply = opt_screenshot,
     .help = "write a PNG of the window after one second, then quit"},
    {.name = "--no-gui", .apply = opt_no_gui, .help = "the 3D view only, no panels"},
    {.name = "--size",
     .value = "WxH",
     .apply = opt_size,
     .help = "window size in pixels (default 1280x720)"},
    {.name = "--bench",
     .value = "SECONDS",
     .apply = opt_bench,
     .help = "print frames per second and engine throughput, then quit"},
    {.name = "--bench-no-render",
     .apply = opt_bench_no_render,
     .help = "with --bench: no window (the engine-only baseline)"},
    {.name = "--bench-speed",
     .value = "X",
     .apply = opt_bench_speed,
     .help = "with --bench: display clock speed factor"},
    {.name = "--bench-paused",
     .apply = opt_bench_paused,
     .help = "with --bench: the clock paused (the renderer's own rate)"},
    {.name = "--no-vsync", .apply = opt_no_vsync, .help = "do not wait for the display's refresh"},
    {.name = "--device",
     .value = "DEVICE",
     .apply = opt_device,
     .help = "a haptic device on scenes with a haptics table, shown in the\n"
             "device panel: sim (the simulated pantograph), usb[:VID:PID],\n"
             "serial:PATH or playback:FILE; motors off until enabled, F9 or\n"
             "Pause is the emergency stop (docs/haptics.md)"},
    {.name = "--device-rate",
     .value = "HZ",
     .apply = opt_device_rate,
     .help = "servo rate (default 1000)"},
    {.name = "--device-hand",
     .value = "H",
     .apply = opt_device_hand,
     .help = "the simulated hand: free, hold:X,Y or circle:R,T (sim only)"},
};
enum { OPTION_COUNT = sizeof OPTIONS / sizeof OPTIONS[0] };

static const CliOption *find_option(const char *name) {
    for (int i = 0; i < OPTION_COUNT; i++)
        if (strcmp(OPTIONS[i].name, name) == 0)
            return &OPTIONS[i];
    return NULL;
}

/* "[--until T]" or "[--set PATH=VALUE ...]". */
static int option_synopsis(const CliOption *o, char *out, size_t size) {
    return snprintf(out, size, "[%s%s%s%s]", o->name, o->value ? " " : "", o->value ? o->value : "",
                    o->repeatable ? " ..." : "");
}

enum { USAGE_WIDTH = 96, HELP_COLUMN = 20 };

/* The run synopsis: every option of the table, wrapped under "issim run SCENE". */
static void print_run_synopsis(FILE *out) {
    static const char lead[] = "usage: issim run SCENE";
    int column = fprintf(out, "%s", lead);
    for (int i = 0; i < OPTION_COUNT; i++) {
        if (OPTIONS[i].apply == opt_save)
            continue; /* validate's */
        char item[64];
        int len = option_synopsis(&OPTIONS[i], item, sizeof item);
        if (column + 1 + len > USAGE_WIDTH)
            column = fprintf(out, "\n%*s", (int)sizeof "usage: issim run" - 1, "") - 1;
        column += fprintf(out, " %s", item);
    }
    fputc('\n', out);
}

static void print_option_help(FILE *out, const CliOption *o) {
    if (o->section)
        fprintf(out, "\n%s\n", o->section);
    char left[64];
    int len = snprintf(left, sizeof left, "  %s%s%s", o->name, o->value ? " " : "",
                       o->value ? o->value : "");
    fprintf(out, "%-*s", HELP_COLUMN - 1, left);
    fputs(len >= HELP_COLUMN - 1 ? "  " : " ", out);
    for (const char *line = o->help; *line;) {
        const char *end = strchr(line, '\n');
        int n = end ? (int)(end - line) : (int)strlen(line);
        fprintf(out, "%.*s", n, line);
        line += n + (end != NULL);
        if (!*line && o->choices) {
            char names[256];
            vocabulary_list(o->choices, o->choice_count, names, sizeof names);
            fprintf(out, ": %s", names);
        }
        fputc('\n', out);
        if (*line)
            fprintf(out, "%*s", HELP_COLUMN, "");
    }
}

static void usage(FILE *out) {
    print_run_synopsis(out);
    fputs("       issim validate SCENE [--set PATH=VALUE ...] [--save FILE]\n"
          "       issim map FILE [--plot PNG] [--nodes LIST] [--until T]\n"
          "       issim sweep SCENE --grid NAME=VALUES ... [--out FILE] (issim sweep --help)\n"
          "       issim fit SCENE --data FILE --free PATH ... (issim fit --help)\n"
          "       issim device DEVICE SCENE [--duration S] ... (issim device --help)\n"
          "       issim help [SUBCOMMAND] | --help | --version\n"
          "\n",
          out);
    for (const Command *c = COMMANDS; c->name; c++)
        fprintf(out, "  %-9s %s\n", c->name, c->summary);
    fputc('\n', out);
    for (int i = 0; i < OPTION_COUNT; i++)
        print_option_help(out, &OPTIONS[i]);
    fputs("\nExit status: 0 success, 1 simulation or scene error, 2 bad arguments.\n", out);
}

static int bad_usage(const char *fmt, const char *arg) {
    fprintf(stderr, "issim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return EXIT_USAGE;
}

/* An unknown option, with the table's nearest names when there are any. */
static int unknown_option(const char *arg) {
    IssimNearest nearest = issim_nearest_start(arg);
    for (int i = 0; i < OPTION_COUNT; i++)
        issim_nearest_offer(&nearest, OPTIONS[i].name);
    char names[256], msg[512];
    if (issim_nearest_format(&nearest, names, sizeof names) > 0)
        snprintf(msg, sizeof msg, "unknown option '%.200s' (did you mean %s?)", arg, names);
    else
        snprintf(msg, sizeof msg, "unknown option '%.200s'", arg);
    return bad_usage("%s", msg);
}

static int parse_args(int argc, char **argv, CliArgs *a) {
    a->options = sim_options_default();
    a->options.sets = a->sets;
    a->options.params = a->params;
    a->display = display_options_default();
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        const CliOption *option = find_option(arg);
        if (option) {
            const char *value = NULL;
            if (option->value) {
                if (i + 1 >= argc)
                    return bad_usage("%s needs a value", arg);
                value = argv[++i];
            }
            int rc = option->apply(a, value);
            if (rc)
                return rc;
        } else if (arg[0] == '-') {
            return unknown_option(arg);
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
