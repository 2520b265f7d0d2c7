/* issim studies: parameter sweeps over headless runs (`issim sweep`, docs/studies.md).
 *
 * A study is a scene, a list of axes and what to measure. An axis names a property path
 * ("bar_floor.stiffness", applied as --set) or a scene parameter ("angle_deg", param() in the
 * scene, docs/scene-format.md) and its values: a list ("0.5,1,2,3", strings allowed), a linear
 * range "a:b:n" (n values from a to b inclusive) or a log range "log:a:b:n". A grid runs every
 * combination (the last axis fastest); random sampling draws `samples` runs with each axis a
 * range "a:b" (uniform) or "log:a:b" (log-uniform), from a counter-based generator keyed by the
 * seed and the run's index, so a run's values do not depend on how the runs are shared out.
 *
 * study_run executes one run in lock-step (bit-identical whichever thread or process runs it)
 * and fills a StudyRow; study_format_* write the table (CSV, docs/studies.md lists the columns).
 * Threading: a Study is read-only once parsed; study_run may be called from several threads at
 * once (each run owns its session).
 */
#ifndef ISSIM_STUDY_H
#define ISSIM_STUDY_H

#include <stdint.h>
#include <stdio.h>

#include "issim/core.h"

#define STUDY_MAX_AXES 8
#define STUDY_MAX_VALUES 4096
#define STUDY_MAX_PROBES 16
#define STUDY_VALUE_MAX 96
#define STUDY_DEFAULT_MAX_RUNS 100000
/* No study is larger, --force or not: a sweep keeps 9 bytes of bookkeeping per run (which are
 * done, which to run), 900 MB at this size. */
#define STUDY_MAX_RUNS 100000000L
/* The longest simulated time a run (`issim run`, a sweep's or a fit's) accepts, s: about 11.6
 * days, far beyond any contact study, and small enough that until / dt steps of the finest
 * step stays an exact count (1e20 s overflowed it into a run of 0 steps that "succeeded"). */
#define STUDY_UNTIL_MAX 1.0e6

typedef struct StudyAxis {
    char name[128];
    bool is_param; /* a scene parameter (no '.' in the name), else a property path */
    bool random_log;
    double lo, hi; /* random sampling: the range */
    int count;     /* grid values */
    char (*values)[STUDY_VALUE_MAX];
} StudyAxis;

/* A variable at an instant: "bar.vel.z@0.001" (the newest frame at or before t) or
 * "bar.vel.z@end". */
typedef struct StudyProbe {
    char var[128];
    double t; /* INFINITY: the end */
} StudyProbe;

typedef struct Study {
    char scene[1024];
    int axis_count;
    StudyAxis axes[STUDY_MAX_AXES];
    long samples; /* > 0: random sampling of this many runs; 0: the grid */
    uint64_t seed;
    double until;            /* s, <= 0: the session default */
    const char *const *sets; /* fixed --set overrides for every run (Borrowed) */
    int set_count;
    int probe_count;
    StudyProbe probes[STUDY_MAX_PROBES];
} Study;

/* Parses "NAME=SPEC" into the next axis of study. Messages name the axis and what is wrong
 * (an empty range, n < 1, a log range through zero, more than STUDY_MAX_VALUES values). */
IssimStatus study_add_axis(Study *study, const char *spec, IssimError *err);
/* Parses "VAR@T" or "VAR@end". */
IssimStatus study_add_probe(Study *study, const char *spec, IssimError *err);
void study_free(Study *study);

/* Runs in the study: the grid's product or the samples; LONG_MAX when the product does not fit
 * in a long (8 axes of 4096 values are 2^96 runs). */
long study_run_count(const Study *study);
/* Checks the study against its scene before anything runs, so a typo is one message instead
 * of a table of failed runs: the scene loads with every parameter axis at its first value and
 * the fixed sets applied (each set must apply); each axis names a parameter the scene declares
 * (every grid value a finite number) or a property it has, whose range accepts every grid value
 * (a random axis: both ends and run 0's draw); no two axes, nor an axis and a set, name the same
 * property or parameter; every probe names a variable of run 0's scene (when run 0's scene
 * builds: a run that cannot be built is that run's failure, not the study's). Messages name the
 * axis, the value and the accepted range or names. */
IssimStatus study_check(const Study *study, IssimError *err);
/* The values of run `index` (axis_count strings of STUDY_VALUE_MAX). */
void study_run_values(const Study *study, long index, char (*values)[STUDY_VALUE_MAX]);

typedef struct StudyRow {
    long index;
    char values[STUDY_MAX_AXES][STUDY_VALUE_MAX];
    bool ok;
    char message[512]; /* the run's error when !ok */
    double wall_seconds;
    /* The first impact of the summary (NAN without one): time, incoming and outgoing normal
     * velocity of the centre of mass, restitution, duration; and the impact count. */
    int impacts;
    double t_impact, v_in, v_out, restitution, duration;
    double kinetic_end; /* universe.energy.kinetic at the end, J */
    double probes[STUDY_MAX_PROBES];
} StudyRow;

/* Runs `index` headless in lock-step. Never fails: a run that fails is a row with ok = false and
 * its message. */
void study_run(const Study *study, long index, StudyRow *row);

/* The `--set` a headless study run starts with: universe.history = the run's length, so the
 * registry keeps the whole trajectory and no more (written into buf, returned). A sweep run of
 * a few frames in a ring sized for the scene's 20 s history mapped and unmapped 32 MiB at every
 * run, and the threads of one process queued on the kernel's lock of their shared memory map
 * (docs/performance.md, Studies). A presentation property: the dynamics never read it. */
#define STUDY_HISTORY_SET_MAX 64
const char *study_history_set(double until, char *buf);

/* The table's header line (no newline) and a row (no newline), CSV; strings quoted. */
void study_format_header(const Study *study, FILE *out);
void study_format_row(const Study *study, const StudyRow *row, FILE *out);

/* ===== Fits (`issim fit`, docs/studies.md) =====
 * Free contact parameters fitted by nonlinear least squares to a trajectory (first column t,
 * the others scene variables) or to a table of experiments (columns named after the measures,
 * restitution, v_out, v_in, duration, t_impact, impacts, kinetic_end, are outputs; the others
 * inputs, scene parameters or property paths, one run per row). */
#define FIT_MAX_COLUMNS 16
#define FIT_MAX_ROWS 20000
#define FIT_MAX_PARAMS 8

typedef struct FitData {
    int rows, cols;
    char names[FIT_MAX_COLUMNS][128];
    bool output[FIT_MAX_COLUMNS]; /* compared with the run (else an input) */
    bool trajectory;
    double *values; /* rows x FIT_MAX_COLUMNS, Owned (fit_data_free) */
} FitData;

/* Reads a CSV with a header line ('#' lines skipped). Messages name the file, line, column. */
IssimStatus fit_data_read(const char *path, FitData *data, IssimError *err);
void fit_data_free(FitData *data);

typedef struct FitParam {
    char path[128];
    double initial, lo, hi; /* from "PATH[=X0[:LO:HI]]"; default (0, inf), X0 = lo + 1 */
    double value, sigma;    /* the fit: estimate and standard error */
    double lo95, hi95;      /* its 95% confidence interval */
} FitParam;

IssimStatus fit_param_parse(const char *spec, FitParam *param, IssimError *err);

typedef struct FitResult {
    int iterations, residuals;
    long runs;
    double ssr, rms;
} FitResult;

/* Fits params (their estimates and intervals filled on success) with the study's scene, fixed
 * sets and end time; log (Nullable) receives a line per iteration. ISSIM_ERR_NUMERIC when the
 * data cannot identify a parameter (named) or the fit does not converge (with the last run's
 * failure). */
IssimStatus study_fit(const Study *study, const FitData *data, FitParam *params, int count,
                      FitResult *result, FILE *log, IssimError *err);
/* The run's values at the data's points with the parameters at their `value`s: model has the
 * data's layout (rows x FIT_MAX_COLUMNS; inputs copied). */
IssimStatus study_fit_model(const Study *study, const FitData *data, const FitParam *params,
                            int count, double *model, IssimError *err);

#endif
