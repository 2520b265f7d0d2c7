/* Fitting contact parameters to data (`issim fit`, docs/studies.md): nonlinear least squares
 * (GSL's multifit_nlinear, trust region with a finite-difference Jacobian) over lock-step runs.
 *
 * Two kinds of data: a trajectory (first column t, the others scene variables: the residuals are
 * the run's values at those instants minus the data's), or a table of experiments (columns that
 * name study measures, restitution, v_out, duration ..., are outputs; the others are inputs, scene
 * parameters or property paths set for that row's run, as a sweep's axes). Seed 000 4.3 fits k and
 * c of a spring/damper to the trajectory of a contact-map collision this way ("least squares on the
 * computed trajectories"); 004 4.7's restitution against impact speed is the table kind.
 *
 * Bounds by transformation: a parameter in (lo, hi) is fitted as u with x = lo + (hi - lo) /
 * (1 + e^-u), in (lo, inf) as x = lo + e^u, so every trial stays in range; the covariance
 * s^2 (J^T J)^-1 (s^2 = SSR / (n - p)) is carried back by the transformation's derivative, the
 * 95% interval from Student's t with n - p degrees of freedom.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "issim/sim.h"
#include "issim/study.h"

/* ===== Data ===== */

static const char *const measures[] = {"restitution", "v_out",   "v_in",       "duration",
                                       "t_impact",    "impacts", "kinetic_end"};

static int measure_index(const char *name) {
    for (size_t i = 0; i < sizeof measures / sizeof measures[0]; i++)
        if (strcmp(measures[i], name) == 0)
            return (int)i;
    return -1;
}

static double row_measure(const StudyRow *row, int m) {
    const double v[] = {row->restitution, row->v_out,   row->v_in,       row->duration,
                        row->t_impact,    row->impacts, row->kinetic_end};
    return v[m];
}

static IssimStatus parse_header(char *line, FitData *d, const char *path, IssimError *err) {
    d->cols = 0;
    for (char *tok = strtok(line, ",\r\n"); tok; tok = strtok(NULL, ",\r\n")) {
        if (d->cols == FIT_MAX_COLUMNS)
            return issim_error_set(err, ISSIM_ERR_RANGE, "%s: more than %d columns", path,
                                   FIT_MAX_COLUMNS);
        issim_strlcpy(d->names[d->cols++], tok, sizeof d->names[0]);
    }
    if (d->cols < 2)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s: the first line must name at least two columns (t and a "
                               "variable, or inputs and a measure)",
                               path);
    d->trajectory = strcmp(d->names[0], "t") == 0;
    for (int c = 0; c < d->cols; c++)
        d->output[c] = d->trajectory ? c > 0 : measure_index(d->names[c]) >= 0;
    int outputs = 0;
    for (int c = 0; c < d->cols; c++)
        outputs += d->output[c];
    if (!outputs)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s: no column to fit: a trajectory starts with a column t; a "
                               "table needs a measure column (restitution, v_out, v_in, duration, "
                               "t_impact, impacts, kinetic_end)",
                               path);
    return ISSIM_OK;
}

void fit_data_free(FitData *d) {
    free(d->values);
    d->values = NULL;
}

IssimStatus fit_data_read(const char *path, FitData *d, IssimError *err) {
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "r");
    if (!f)
        return issim_error_set(err, ISSIM_ERR_IO, "cannot open data %s", path);
    d->values = calloc((size_t)FIT_MAX_ROWS * FIT_MAX_COLUMNS, sizeof(double));
    if (!d->values) {
        fclose(f);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory reading %s", path);
    }
    char line[4096];
    IssimStatus s = ISSIM_OK;
    bool header = false;
    int number = 0;
    while (s == ISSIM_OK && fgets(line, sizeof line, f)) {
        number++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (!header) {
            s = parse_header(line, d, path, err);
            header = true;
            continue;
        }
        if (d->rows == FIT_MAX_ROWS) {
            s = issim_error_set(err, ISSIM_ERR_RANGE, "%s: more than %d rows", path, FIT_MAX_ROWS);
            break;
        }
        char *p = line;
        for (int c = 0; c < d->cols && s == ISSIM_OK; c++) {
            char *end = NULL;
            double v = strtod(p, &end);
            if (end == p || !isfinite(v))
                s = issim_error_set(err, ISSIM_ERR_INVALID, "%s:%d: column %s: not a number", path,
                                    number, d->names[c]);
            d->values[d->rows * FIT_MAX_COLUMNS + c] = v;
            p = *end == ',' ? end + 1 : end;
        }
        d->rows++;
    }
    fclose(f);
    if (s == ISSIM_OK && d->rows == 0)
        s = issim_error_set(err, ISSIM_ERR_INVALID, "%s: no data rows", path);
    if (s != ISSIM_OK)
        fit_data_free(d);
    return s;
}

/* ===== Parameters and their transformation ===== */

IssimStatus fit_param_parse(const char *spec, FitParam *p, IssimError *err) {
    *p = (FitParam){.lo = 0.0, .hi = INFINITY, .initial = NAN};
    const char *eq = strchr(spec, '=');
    size_t len = eq ? (size_t)(eq - spec) : strlen(spec);
    if (len == 0 || len >= sizeof p->path || !memchr(spec, '.', len))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "--free needs PATH[=X0[:LO:HI]] with a property path "
                               "(pair.stiffness), not '%s'",
                               spec);
    memcpy(p->path, spec, len);
    if (eq) {
        int got = sscanf(eq + 1, "%lf:%lf:%lf", &p->initial, &p->lo, &p->hi);
        if (got != 1 && got != 3)
            return issim_error_set(err, ISSIM_ERR_INVALID, "--free %s: X0 or X0:LO:HI", spec);
    }
    if (!(p->hi > p->lo))
        return issim_error_set(err, ISSIM_ERR_INVALID, "--free %s: the bounds are empty", spec);
    if (isfinite(p->initial) && !(p->initial > p->lo && p->initial < p->hi))
        return issim_error_set(err, ISSIM_ERR_RANGE, "--free %s: X0 %g is not inside (%g, %g)",
                               spec, p->initial, p->lo, p->hi);
    return ISSIM_OK;
}

static double to_value(const FitParam *p, double u) {
    return isfinite(p->hi) ? p->lo + (p->hi - p->lo) / (1.0 + exp(-u)) : p->lo + exp(u);
}

static double to_u(const FitParam *p, double x) {
    return isfinite(p->hi) ? -log((p->hi - p->lo) / (x - p->lo) - 1.0) : log(x - p->lo);
}

/* dx/du, to carry the covariance back. */
static double slope(const FitParam *p, double u) {
    if (!isfinite(p->hi))
        return exp(u);
    double e = exp(-u);
    return (p->hi - p->lo) * e / ((1.0 + e) * (1.0 + e));
}

/* ===== Residuals ===== */

typedef struct FitCtx {
    const Study *study;
    const FitData *data;
    FitParam *params;
    int count;
    long runs;
    FILE *log;
    char failure[640];
} FitCtx;

static int param_sets(const FitCtx *c, const gsl_vector *u, char (*buf)[192], const char **sets,
                      int n) {
    for (int i = 0; i < c->study->set_count && n < 200; i++)
        sets[n++] = c->study->sets[i];
    for (int i = 0; i < c->count; i++) {
        snprintf(buf[i], 192, "%s=%.17g", c->params[i].path,
                 to_value(&c->params[i], gsl_vector_get(u, (size_t)i)));
        sets[n++] = buf[i];
    }
    return n;
}

static int trajectory_residuals(FitCtx *c, const gsl_vector *u, gsl_vector *f) {
    const FitData *d = c->data;
    char buf[FIT_MAX_PARAMS][192], history[STUDY_HISTORY_SET_MAX];
    const char *sets[256];
    SimOptions o = sim_options_default();
    o.lockstep = true;
    o.quiet = true;
    o.until = d->values[(d->rows - 1) * FIT_MAX_COLUMNS] + 1e-12;
    o.sets = sets;
    sets[0] = study_history_set(o.until, history); /* first: a user's --set wins */
    o.set_count = param_sets(c, u, buf, sets, 1);
    IssimError err = {0};
    Sim *sim = sim_create(c->study->scene, &o, &err);
    SimSummary *sum = calloc(1, sizeof *sum);
    bool ok = sim && sum && sim_run_headless(sim, sum, &err) == ISSIM_OK;
    free(sum);
    c->runs++;
    if (!ok) {
        snprintf(c->failure, sizeof c->failure, "a run failed: %s", err.message);
        sim_destroy(sim);
        return GSL_EFAILED;
    }
    Registry *reg = sim_registry(sim);
    for (int col = 1; col < d->cols; col++)
        if (registry_var_find(reg, d->names[col]) < 0) {
            snprintf(c->failure, sizeof c->failure,
                     "data column %s is not a variable of the scene (BODY.pos.x ... "
                     "BODY.angvel.z, universe.energy.*)",
                     d->names[col]);
            sim_destroy(sim);
            return GSL_EFAILED;
        }
    int vars = registry_var_count(reg), k = 0;
    double *values = calloc((size_t)vars, sizeof(double));
    RegistryFrame frame = {.values = values};
    for (int r = 0; r < d->rows; r++) {
        double t = d->values[r * FIT_MAX_COLUMNS];
        bool have = registry_read_at(reg, t + 1e-12, &frame);
        for (int col = 1; col < d->cols; col++) {
            int var = registry_var_find(reg, d->names[col]);
            double sim_v = have && var >= 0 ? values[var] : NAN;
            gsl_vector_set(f, (size_t)k++, sim_v - d->values[r * FIT_MAX_COLUMNS + col]);
        }
    }
    free(values);
    sim_destroy(sim);
    return GSL_SUCCESS;
}

static int table_residuals(FitCtx *c, const gsl_vector *u, gsl_vector *f) {
    const FitData *d = c->data;
    char buf[FIT_MAX_PARAMS][192];
    const char *sets[256];
    int k = 0;
    for (int r = 0; r < d->rows; r++) {
        Study s = {.until = c->study->until, .sets = sets};
        issim_strlcpy(s.scene, c->study->scene, sizeof s.scene);
        s.set_count = param_sets(c, u, buf, sets, 0);
        char axis[FIT_MAX_COLUMNS][160];
        for (int col = 0; col < d->cols; col++) {
            if (d->output[col])
                continue;
            snprintf(axis[col], sizeof axis[col], "%s=%.17g", d->names[col],
                     d->values[r * FIT_MAX_COLUMNS + col]);
            IssimError err = {0};
            if (study_add_axis(&s, axis[col], &err) != ISSIM_OK) {
                snprintf(c->failure, sizeof c->failure, "%s", err.message);
                study_free(&s);
                return GSL_EFAILED;
            }
        }
        StudyRow *row = malloc(sizeof *row);
        study_run(&s, 0, row);
        c->runs++;
        study_free(&s);
        for (int col = 0; col < d->cols; col++)
            if (d->output[col])
                gsl_vector_set(f, (size_t)k++,
                               row->ok ? row_measure(row, measure_index(d->names[col])) -
                                             d->values[r * FIT_MAX_COLUMNS + col]
                                       : NAN);
        if (!row->ok)
            snprintf(c->failure, sizeof c->failure, "row %d: %s", r + 1, row->message);
        free(row);
    }
    return GSL_SUCCESS;
}

static int residuals(const gsl_vector *u, void *ctx, gsl_vector *f) {
    FitCtx *c = ctx;
    int rc = c->data->trajectory ? trajectory_residuals(c, u, f) : table_residuals(c, u, f);
    for (size_t i = 0; rc == GSL_SUCCESS && i < f->size; i++)
        if (!isfinite(gsl_vector_get(f, i))) {
            if (!c->failure[0])
                snprintf(c->failure, sizeof c->failure,
                         "a residual is not finite (a data time outside the run's history, or a "
                         "run without an impact)");
            rc = GSL_EFAILED;
        }
    return rc;
}

static void iteration_log(const size_t iter, void *ctx, const gsl_multifit_nlinear_workspace *w) {
    FitCtx *c = ctx;
    if (!c->log)
        return;
    const gsl_vector *u = gsl_multifit_nlinear_position(w);
    double ssr = 0.0;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &ssr);
    fprintf(c->log, "iteration %2zu: SSR %.6g", iter, ssr);
    for (int i = 0; i < c->count; i++)
        fprintf(c->log, "  %s %.6g", c->params[i].path,
                to_value(&c->params[i], gsl_vector_get(u, (size_t)i)));
    fprintf(c->log, "  (%ld runs)\n", c->runs);
}

/* ===== The fit ===== */

static size_t residual_count(const FitData *d) {
    size_t outputs = 0;
    for (int c = 0; c < d->cols; c++)
        outputs += d->output[c];
    return (size_t)d->rows * outputs;
}

/* Parameters the data cannot identify: a Jacobian column that is (nearly) zero, or two columns
 * (nearly) parallel. */
static IssimStatus check_identifiable(const gsl_matrix *J, const FitParam *p, int count,
                                      IssimError *err) {
    double norm[FIT_MAX_PARAMS], largest = 0.0;
    for (int i = 0; i < count; i++) {
        gsl_vector_const_view col = gsl_matrix_const_column(J, (size_t)i);
        norm[i] = gsl_blas_dnrm2(&col.vector);
        largest = fmax(largest, norm[i]);
    }
    for (int i = 0; i < count; i++) {
        if (!(norm[i] > 1e-10 * largest))
            return issim_error_set(err, ISSIM_ERR_NUMERIC,
                                   "the data cannot identify %s: the residuals do not change with "
                                   "it (does the run use it?)",
                                   p[i].path);
        for (int j = 0; j < i; j++) {
            gsl_vector_const_view a = gsl_matrix_const_column(J, (size_t)i);
            gsl_vector_const_view b = gsl_matrix_const_column(J, (size_t)j);
            double dot = 0.0;
            gsl_blas_ddot(&a.vector, &b.vector, &dot);
            if (fabs(dot) > (1.0 - 1e-9) * norm[i] * norm[j])
                return issim_error_set(err, ISSIM_ERR_NUMERIC,
                                       "the data cannot separate %s from %s: they change the "
                                       "residuals the same way",
                                       p[i].path, p[j].path);
        }
    }
    return ISSIM_OK;
}

static void fill_intervals(gsl_multifit_nlinear_workspace *w, FitParam *p, int count, size_t n,
                           FitResult *res) {
    gsl_matrix *covar = gsl_matrix_alloc((size_t)count, (size_t)count);
    gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, covar);
    double ssr = 0.0;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &ssr);
    double dof = (double)n - count;
    double s2 = dof > 0 ? ssr / dof : NAN;
    double tq = dof > 0 ? gsl_cdf_tdist_Pinv(0.975, dof) : NAN;
    const gsl_vector *u = gsl_multifit_nlinear_position(w);
    for (int i = 0; i < count; i++) {
        double ui = gsl_vector_get(u, (size_t)i);
        p[i].value = to_value(&p[i], ui);
        double su = sqrt(s2 * gsl_matrix_get(covar, (size_t)i, (size_t)i));
        p[i].sigma = slope(&p[i], ui) * su;
        /* the interval in u mapped back (asymmetric through the transformation) */
        p[i].lo95 = to_value(&p[i], ui - tq * su);
        p[i].hi95 = to_value(&p[i], ui + tq * su);
    }
    res->ssr = ssr;
    res->rms = sqrt(ssr / (double)n);
    gsl_matrix_free(covar);
}

IssimStatus study_fit(const Study *study, const FitData *data, FitParam *params, int count,
                      FitResult *res, FILE *log, IssimError *err) {
    memset(res, 0, sizeof *res);
    size_t n = residual_count(data);
    if (count < 1 || count > FIT_MAX_PARAMS)
        return issim_error_set(err, ISSIM_ERR_RANGE, "1 ... %d free parameters", FIT_MAX_PARAMS);
    /* n = p fits exactly and leaves no degree of freedom for s^2: the intervals would be NaN. */
    if (n <= (size_t)count)
        return issim_error_set(
            err, ISSIM_ERR_INVALID,
            "%zu residual%s cannot fit %d parameter%s with confidence intervals: "
            "give more data (at least %d residuals: data rows x compared "
            "columns)",
            n, n == 1 ? "" : "s", count, count == 1 ? "" : "s", count + 1);
    FitCtx ctx = {.study = study, .data = data, .params = params, .count = count, .log = log};
    gsl_vector *u0 = gsl_vector_alloc((size_t)count);
    for (int i = 0; i < count; i++) {
        double x0 = isfinite(params[i].initial)
                        ? params[i].initial
                        : (isfinite(params[i].hi) ? 0.5 * (params[i].lo + params[i].hi)
                                                  : params[i].lo + 1.0);
        gsl_vector_set(u0, (size_t)i, to_u(&params[i], x0));
    }
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    /* Forward differences of 1e-6 relative (GSL's default is sqrt(eps) = 1.5e-8): a run's
     * measures are smooth in the parameters only down to its event and tolerance errors. */
    fp.h_df = 1e-6;
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, (size_t)count);
    gsl_multifit_nlinear_fdf fdf = {
        .f = residuals, .df = NULL, .fvv = NULL, .n = n, .p = (size_t)count, .params = &ctx};
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    IssimStatus s = ISSIM_OK;
    int status = gsl_multifit_nlinear_init(u0, &fdf, w);
    if (status == GSL_SUCCESS)
        s = check_identifiable(gsl_multifit_nlinear_jac(w), params, count, err);
    int info = 0;
    if (status == GSL_SUCCESS && s == ISSIM_OK)
        status =
            gsl_multifit_nlinear_driver(100, 1e-10, 1e-10, 1e-12, iteration_log, &ctx, &info, w);
    if (s == ISSIM_OK && status != GSL_SUCCESS)
        s = issim_error_set(err, ISSIM_ERR_NUMERIC, "the fit did not converge (%s)%s%s",
                            gsl_strerror(status), ctx.failure[0] ? ": " : "", ctx.failure);
    res->iterations = (int)gsl_multifit_nlinear_niter(w);
    res->runs = ctx.runs;
    res->residuals = (int)n;
    if (s == ISSIM_OK)
        fill_intervals(w, params, count, n, res);
    /* An estimate without a finite interval is not a result (exit 0 with NaN intervals was). */
    for (int i = 0; i < count && s == ISSIM_OK; i++)
        if (!isfinite(params[i].value) || !isfinite(params[i].sigma) || !isfinite(params[i].lo95) ||
            !isfinite(params[i].hi95))
            s = issim_error_set(err, ISSIM_ERR_NUMERIC,
                                "no finite confidence interval for %s (estimate %g, standard "
                                "error %g): the data does not determine it",
                                params[i].path, params[i].value, params[i].sigma);
    gsl_set_error_handler(old);
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(u0);
    return s;
}

IssimStatus study_fit_model(const Study *study, const FitData *data, const FitParam *params,
                            int count, double *model, IssimError *err) {
    size_t n = residual_count(data);
    FitCtx ctx = {.study = study, .data = data, .params = (FitParam *)params, .count = count};
    gsl_vector *u = gsl_vector_alloc((size_t)count), *f = gsl_vector_alloc(n);
    for (int i = 0; i < count; i++)
        gsl_vector_set(u, (size_t)i, to_u(&params[i], params[i].value));
    int rc = residuals(u, &ctx, f);
    size_t k = 0;
    for (int r = 0; r < data->rows; r++)
        for (int c = 0; c < data->cols; c++)
            model[r * FIT_MAX_COLUMNS + c] =
                data->output[c] && rc == GSL_SUCCESS
                    ? gsl_vector_get(f, k++) + data->values[r * FIT_MAX_COLUMNS + c]
                    : data->values[r * FIT_MAX_COLUMNS + c];
    gsl_vector_free(u);
    gsl_vector_free(f);
    return rc == GSL_SUCCESS ? ISSIM_OK
                             : issim_error_set(err, ISSIM_ERR_NUMERIC, "%s", ctx.failure);
}
