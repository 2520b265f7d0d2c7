/* `issim-bench python [STEPS] [RUNS]`: the costs of scripting issim from Python (issue 32's
 * targets, docs/performance.md). (a) The 240 bodies of scenes/pile.lua read at every output step:
 * here the C loop (sim_headless_step, then the frame copied out), then the same loop in Python
 * (tools/bench/bench_python.py: sim.step(), then sim.bodies copied into a numpy history), each
 * timing its steps and its reads apart in CPU time; target: the Python read under 10 % of the
 * step.
 * (b) RUNS (default 10,000) short bar_drop_angle runs from a Python loop (issim.open, run,
 * the first impact) against `issim sweep --threads 1` over the same angles; target within
 * 1.3x. The script runs with the build's module (PYTHONPATH) and interpreter. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "issim/engine.h"
#include "issim/sim.h"

#define PILE_STEPS 1000

/* CPU time of this thread, s: the VM is shared, and wall-clock steps of one computation varied
 * by half from one loop to the next at a load of 7 (bench_python.py times its loop the same
 * way). */
static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Mean CPU time per step of the engine and of the copy of every body's state, us. */
static int c_loop(const char *scene, int steps, double *step_us, double *read_us) {
    IssimError err = {0};
    SimOptions o = sim_options_default();
    o.quiet = true;
    Sim *sim = sim_create(scene, &o, &err);
    SimSummary *sum = calloc(1, sizeof *sum);
    if (!sim || !sum || sim_headless_begin(sim, sum, &err) != ISSIM_OK) {
        fprintf(stderr, "issim-bench python: %s\n", err.message);
        sim_destroy(sim);
        free(sum);
        return 1;
    }
    int n = engine_var_count(sim_engine(sim));
    double *history = malloc(sizeof(double) * (size_t)n * (size_t)steps);
    if (history) /* faulted in first: the read measured is the copy */
        memset(history, 0, sizeof(double) * (size_t)n * (size_t)steps);
    double stepping = 0.0, reading = 0.0;
    for (int k = 0; history && k < steps; k++) {
        double t0 = thread_cpu();
        sim_headless_step(sim, 1, &err);
        double t1 = thread_cpu();
        memcpy(history + (size_t)k * (size_t)n, sim_values(sim), sizeof(double) * (size_t)n);
        reading += thread_cpu() - t1;
        stepping += t1 - t0;
    }
    *step_us = 1e6 * stepping / steps;
    *read_us = 1e6 * reading / steps;
    printf("python (a) C loop: %d bodies, %d steps: step %.1f us, read %.3f us (%.4f %% of the "
           "step)\n",
           engine_body_count(sim_engine(sim)), steps, *step_us, *read_us,
           100.0 * *read_us / *step_us);
    free(history);
    sim_headless_end(sim, NULL);
    sim_destroy(sim);
    free(sum);
    return 0;
}

int bench_python(int argc, char **argv) {
#ifndef ISSIM_BENCH_PYTHON
    (void)argc;
    (void)argv;
    printf("python: built without the Python module (ISSIM_PYTHON off)\n");
    return 0;
#else
    int steps = argc > 1 ? atoi(argv[1]) : PILE_STEPS;
    const char *runs = argc > 2 ? argv[2] : "10000";
    const char *source =
        getenv("ISSIM_SOURCE_DIR") ? getenv("ISSIM_SOURCE_DIR") : ISSIM_BENCH_SOURCE;
    char scene[4096], script[4096], c_step[64];
    snprintf(scene, sizeof scene, "%s/scenes/pile.lua", source);
    snprintf(script, sizeof script, "%s/tools/bench/bench_python.py", source);
    double step_us = 0.0, read_us = 0.0;
    if (c_loop(scene, steps > 0 ? steps : PILE_STEPS, &step_us, &read_us) != 0)
        return 1;
    snprintf(c_step, sizeof c_step, "%.3f", step_us);
    char steps_text[32];
    snprintf(steps_text, sizeof steps_text, "%d", steps > 0 ? steps : PILE_STEPS);
    fflush(stdout);
    setenv("PYTHONPATH", ISSIM_BENCH_PYTHON_DIR, 1);
    setenv("ISSIM_BINARY", ISSIM_BENCH_ISSIM, 0);
    setenv("ISSIM_SOURCE_DIR", source, 0);
    char *args[] = {ISSIM_BENCH_PYTHON, script,        "--steps", steps_text, "--runs",
                    (char *)runs,       "--c-step-us", c_step,    NULL};
    execv(ISSIM_BENCH_PYTHON, args);
    perror("issim-bench python: " ISSIM_BENCH_PYTHON);
    return 1;
#endif
}
