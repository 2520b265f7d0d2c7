/* `issim fit SCENE --data FILE --free PATH[=X0[:LO:HI]] ...`: contact parameters fitted to a
 * recorded trajectory or to a table of experiments (include/issim/study.h, docs/studies.md),
 * with standard errors, 95% intervals and a plot of the data, the fit and the residuals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "issim/contactmap.h"
#include "issim/io.h"
#include "issim/study.h"

int cmd_fit(int argc, char **argv);

static void fit_usage(FILE *out) {
    fputs("usage: issim fit SCENE --data FILE --free PATH[=X0[:LO:HI]] [--free ...]\n"
          "                 [--set PATH=VALUE ...] [--until T] [--plot PNG] [--quiet]\n"
          "  FILE: a trajectory (columns t, then scene variables, e.g. an issim recording)\n"
          "        or a table of experiments (inputs such as speed, and measures such as\n"
          "        restitution, v_out, duration): one run per row\n"
          "  PATH: a property of the scene (bar_floor.stiffness); bounds LO:HI (default 0:inf)\n",
          out);
}

static int fit_bad(const char *what, const char *arg) {
    fprintf(stderr, "issim fit: %s%s\n", what, arg ? arg : "");
    fit_usage(stderr);
    return 2;
}

static int plot_fit(const FitData *d, const double *model, const char *png) {
    char path[] = "/tmp/issim-fit-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return 1;
    int x = 0; /* t, or the first input */
    for (int c = 0; c < d->cols; c++)
        if (!d->output[c]) {
            x = c;
            break;
        }
    for (int r = 0; r < d->rows; r++) {
        fprintf(f, "%.12g", d->values[r * FIT_MAX_COLUMNS + x]);
        for (int c = 0; c < d->cols; c++)
            if (d->output[c])
                fprintf(f, " %.12g %.12g", d->values[r * FIT_MAX_COLUMNS + c],
                        model[r * FIT_MAX_COLUMNS + c]);
        fputc('\n', f);
    }
    fclose(f);
    FILE *gp = popen("gnuplot", "w");
    if (!gp) {
        unlink(path);
        return 1;
    }
    fprintf(gp,
            "set terminal pngcairo size 900,800 noenhanced\nset output '%s'\nset grid\n"
            "set key outside right\nset multiplot layout 2,1\nset xlabel '%s'\nplot ",
            png, d->names[x]);
    int k = 0;
    for (int c = 0; c < d->cols; c++)
        if (d->output[c]) {
            fprintf(gp,
                    "%s'%s' using 1:%d with points title '%s (data)', '' using 1:%d with lines "
                    "title '%s (fit)'",
                    k ? ", " : "", path, 2 + 2 * k, d->names[c], 3 + 2 * k, d->names[c]);
            k++;
        }
    fprintf(gp, "\nset ylabel 'fit - data'\nplot ");
    k = 0;
    for (int c = 0; c < d->cols; c++)
        if (d->output[c]) {
            fprintf(gp, "%s'%s' using 1:($%d - $%d) with linespoints title '%s residual'",
                    k ? ", " : "", path, 3 + 2 * k, 2 + 2 * k, d->names[c]);
            k++;
        }
    fprintf(gp, "\nunset multiplot\n");
    int rc = pclose(gp);
    unlink(path);
    if (rc == 0)
        printf("plot       %s (data, fit and residuals)\n", png);
    return rc == 0 ? 0 : 1;
}

int cmd_fit(int argc, char **argv) {
    Study study = {0};
    const char *sets[256], *data_path = NULL, *png = NULL;
    FitParam params[FIT_MAX_PARAMS];
    int count = 0;
    bool quiet = false;
    study.sets = sets;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        bool value = i + 1 < argc;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fit_usage(stdout);
            return 0;
        } else if (strcmp(arg, "--data") == 0 && value) {
            data_path = argv[++i];
        } else if (strcmp(arg, "--free") == 0 && value) {
            IssimError err = {0};
            if (count == FIT_MAX_PARAMS)
                return fit_bad("too many --free parameters", NULL);
            if (fit_param_parse(argv[++i], &params[count++], &err) != ISSIM_OK)
                return fit_bad(err.message, NULL);
        } else if (strcmp(arg, "--set") == 0 && value && study.set_count < 256) {
            sets[study.set_count++] = argv[++i];
        } else if (strcmp(arg, "--until") == 0 && value) {
            char *end = NULL;
            study.until = strtod(argv[++i], &end);
            if (end == argv[i] || *end != '\0' || !(study.until > 0.0) ||
                study.until > STUDY_UNTIL_MAX)
                return fit_bad("--until needs a time in (0, 1e6] seconds, not ", argv[i]);
        } else if (strcmp(arg, "--plot") == 0 && value) {
            png = argv[++i];
        } else if (strcmp(arg, "--quiet") == 0) {
            quiet = true;
        } else if (arg[0] != '-' && !study.scene[0]) {
            issim_strlcpy(study.scene, arg, sizeof study.scene);
        } else {
            return fit_bad("unexpected or incomplete argument: ", arg);
        }
    }
    if (!study.scene[0] || !data_path || count == 0)
        return fit_bad("needs a scene, --data and at least one --free", NULL);
    IssimError err = {0};
    if (scene_find(study.scene, study.scene, sizeof study.scene, &err) != ISSIM_OK) {
        fprintf(stderr, "issim fit: %s\n", err.message);
        return 1;
    }
    FitData data;
    if (fit_data_read(data_path, &data, &err) != ISSIM_OK) {
        fprintf(stderr, "issim fit: %s\n", err.message);
        return 1;
    }
    printf("fit        %s to %s: %d rows (%s), %d parameter%s\n", study.scene, data_path, data.rows,
           data.trajectory ? "trajectory" : "table of experiments", count, count > 1 ? "s" : "");
    /* Every trial is the same scene: its contact maps are read once (contactmap.h). */
    contact_map_cache_enable();
    FitResult res;
    double start = issim_wall_time();
    int rc = 0;
    if (study_fit(&study, &data, params, count, &res, quiet ? NULL : stdout, &err) != ISSIM_OK) {
        fprintf(stderr, "issim fit: %s\n", err.message);
        rc = 1;
    } else {
        printf("converged  %d iterations, %ld runs, %.1f s; rms residual %.6g over %d residuals\n",
               res.iterations, res.runs, issim_wall_time() - start, res.rms, res.residuals);
        printf("%-32s %16s %14s %30s\n", "parameter", "estimate", "std. error",
               "95% confidence interval");
        for (int i = 0; i < count; i++)
            printf("%-32s %16.8g %14.4g %14.8g ... %-14.8g\n", params[i].path, params[i].value,
                   params[i].sigma, params[i].lo95, params[i].hi95);
        if (png) {
            double *model = malloc(sizeof(double) * (size_t)FIT_MAX_ROWS * FIT_MAX_COLUMNS);
            if (model && study_fit_model(&study, &data, params, count, model, &err) == ISSIM_OK)
                rc = plot_fit(&data, model, png);
            free(model);
        }
    }
    fit_data_free(&data);
    contact_map_cache_clear();
    return rc;
}
