/* Parameter studies (include/issim/study.h): axes, run enumeration, one lock-step run and the
 * table it adds. The measures are those of the seeds' studies: the first impact's restitution,
 * velocities and duration (000 Figs. 6.2-6.5, 004 4.7) and chosen variables at chosen instants. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "issim/io.h"
#include "issim/sim.h"
#include "issim/study.h"

static IssimStatus axis_error(IssimError *err, const char *name, const char *what) {
    return issim_error_set(err, ISSIM_ERR_INVALID, "--grid %s: %s", name, what);
}

static bool parse_number(const char *s, double *out) {
    char *end = NULL;
    *out = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(*out);
}

/* "a:b:n" or "log:a:b:n" (grid), "a:b" or "log:a:b" (random). */
static IssimStatus parse_range(StudyAxis *a, const char *spec, bool random, IssimError *err) {
    bool log_range = strncmp(spec, "log:", 4) == 0;
    const char *p = log_range ? spec + 4 : spec;
    double lo = NAN, hi = NAN;
    int n = 0, used = 0;
    int got = sscanf(p, "%lf:%lf%n", &lo, &hi, &used);
    if (got != 2 || !isfinite(lo) || !isfinite(hi))
        return axis_error(err, a->name, "a range is a:b:n or log:a:b:n (numbers)");
    if (random) {
        if (p[used] != '\0')
            return axis_error(err, a->name, "random sampling takes a range a:b or log:a:b");
    } else if (sscanf(p + used, ":%d", &n) != 1 || n < 1 || n > STUDY_MAX_VALUES) {
        return axis_error(err, a->name, "a grid range needs a count n in 1 ... 4096 (a:b:n)");
    }
    if (lo == hi && (random || n > 1))
        return axis_error(err, a->name, "the range is empty (a = b)");
    if (log_range && (lo <= 0.0 || hi <= 0.0))
        return axis_error(err, a->name, "a log range needs a > 0 and b > 0");
    a->lo = lo;
    a->hi = hi;
    a->random_log = log_range;
    if (random)
        return ISSIM_OK;
    a->values = calloc((size_t)n, sizeof *a->values);
    if (!a->values)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    a->count = n;
    for (int i = 0; i < n; i++) {
        double u = n > 1 ? (double)i / (n - 1) : 0.0;
        double v = log_range ? exp(log(lo) + u * (log(hi) - log(lo))) : lo + u * (hi - lo);
        snprintf(a->values[i], STUDY_VALUE_MAX, "%.12g", v);
    }
    return ISSIM_OK;
}

static IssimStatus parse_list(StudyAxis *a, const char *spec, IssimError *err) {
    int n = 1;
    for (const char *p = spec; *p; p++)
        n += *p == ',';
    if (n > STUDY_MAX_VALUES)
        return axis_error(err, a->name, "more than 4096 values");
    a->values = calloc((size_t)n, sizeof *a->values);
    if (!a->values)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    const char *p = spec;
    for (int i = 0; i < n; i++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0 || len >= STUDY_VALUE_MAX)
            return axis_error(err, a->name, len ? "a value is too long" : "an empty value");
        memcpy(a->values[i], p, len);
        a->values[i][len] = '\0';
        a->count++;
        p = end ? end + 1 : p + len;
    }
    return ISSIM_OK;
}

IssimStatus study_add_axis(Study *study, const char *spec, IssimError *err) {
    if (study->axis_count >= STUDY_MAX_AXES)
        return issim_error_set(err, ISSIM_ERR_RANGE, "--grid: at most %d axes", STUDY_MAX_AXES);
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1])
        return issim_error_set(err, ISSIM_ERR_INVALID, "--grid needs NAME=VALUES, not '%s'", spec);
    StudyAxis *a = &study->axes[study->axis_count];
    *a = (StudyAxis){0};
    size_t len = (size_t)(eq - spec);
    if (len >= sizeof a->name)
        return issim_error_set(err, ISSIM_ERR_INVALID, "--grid: the name is too long");
    memcpy(a->name, spec, len);
    a->is_param = memchr(spec, '.', len) == NULL;
    const char *values = eq + 1;
    bool range = strchr(values, ':') != NULL && strchr(values, ',') == NULL;
    IssimStatus s = range || study->samples > 0 ? parse_range(a, values, study->samples > 0, err)
                                                : parse_list(a, values, err);
    if (s != ISSIM_OK) {
        free(a->values);
        *a = (StudyAxis){0};
        return s;
    }
    study->axis_count++;
    return ISSIM_OK;
}

IssimStatus study_add_probe(Study *study, const char *spec, IssimError *err) {
    if (study->probe_count >= STUDY_MAX_PROBES)
        return issim_error_set(err, ISSIM_ERR_RANGE, "--at: at most %d", STUDY_MAX_PROBES);
    const char *at = strrchr(spec, '@');
    StudyProbe *p = &study->probes[study->probe_count];
    if (!at || at == spec || (size_t)(at - spec) >= sizeof p->var)
        return issim_error_set(err, ISSIM_ERR_INVALID, "--at needs VAR@T or VAR@end, not '%s'",
                               spec);
    memcpy(p->var, spec, (size_t)(at - spec));
    p->var[at - spec] = '\0';
    if (strcmp(at + 1, "end") == 0)
        p->t = INFINITY;
    else if (!parse_number(at + 1, &p->t) || p->t < 0.0)
        return issim_error_set(err, ISSIM_ERR_INVALID, "--at %s: '%s' is not a time >= 0 or end",
                               spec, at + 1);
    study->probe_count++;
    return ISSIM_OK;
}

void study_free(Study *study) {
    for (int i = 0; i < study->axis_count; i++)
        free(study->axes[i].values);
    study->axis_count = 0;
}

long study_run_count(const Study *study) {
    if (study->samples > 0)
        return study->samples;
    long n = 1;
    for (int i = 0; i < study->axis_count; i++) {
        long count = study->axes[i].count;
        if (count > 0 && n > LONG_MAX / count)
            return LONG_MAX;
        n *= count;
    }
    return n;
}

/* splitmix64: a counter-based generator, so run i's values depend on (seed, i) only. */
static uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void study_run_values(const Study *study, long index, char (*values)[STUDY_VALUE_MAX]) {
    if (study->samples > 0) {
        for (int i = 0; i < study->axis_count; i++) {
            const StudyAxis *a = &study->axes[i];
            uint64_t r = splitmix64(study->seed ^ splitmix64((uint64_t)index * 64u + (uint64_t)i));
            double u = (double)(r >> 11) * 0x1.0p-53;
            double v = a->random_log ? exp(log(a->lo) + u * (log(a->hi) - log(a->lo)))
                                     : a->lo + u * (a->hi - a->lo);
            snprintf(values[i], STUDY_VALUE_MAX, "%.12g", v);
        }
        return;
    }
    long rest = index;
    for (int i = study->axis_count - 1; i >= 0; i--) { /* the last axis fastest */
        const StudyAxis *a = &study->axes[i];
        issim_strlcpy(values[i], a->values[rest % a->count], STUDY_VALUE_MAX);
        rest /= a->count;
    }
}

static void probe_values(const Study *study, Sim *sim, StudyRow *row) {
    Registry *reg = sim_registry(sim);
    int count = registry_var_count(reg);
    double *values = calloc((size_t)(count > 0 ? count : 1), sizeof(double));
    RegistryFrame frame = {.values = values};
    for (int i = 0; i < study->probe_count; i++) {
        const StudyProbe *p = &study->probes[i];
        int var = registry_var_find(reg, p->var);
        bool ok =
            var >= 0 && values &&
            (isinf(p->t) ? registry_read_latest(reg, &frame) : registry_read_at(reg, p->t, &frame));
        row->probes[i] = ok ? values[var] : NAN;
    }
    int kinetic = registry_var_find(reg, "universe.energy.kinetic");
    row->kinetic_end =
        kinetic >= 0 && values && registry_read_latest(reg, &frame) ? values[kinetic] : NAN;
    free(values);
}

/* Every probe names a variable of the scene: checked on the first run, so a typo fails every
 * row with the same message instead of filling the column with NaN. */
static bool probes_known(const Study *study, Sim *sim, StudyRow *row) {
    Registry *reg = sim_registry(sim);
    for (int i = 0; i < study->probe_count; i++)
        if (registry_var_find(reg, study->probes[i].var) < 0) {
            snprintf(row->message, sizeof row->message,
                     "--at %s: the scene has no variable %s (variables: BODY.pos.x ... "
                     "BODY.angvel.z, universe.energy.kinetic ...; docs/scene-format.md)",
                     study->probes[i].var, study->probes[i].var);
            return false;
        }
    return true;
}

static void fill_impact(const SimSummary *sum, StudyRow *row) {
    row->impacts = sum->impact_count;
    row->t_impact = row->v_in = row->v_out = row->restitution = row->duration = NAN;
    if (sum->impact_count > 0) {
        const SimImpact *im = &sum->impacts[0];
        row->t_impact = im->t_begin;
        row->v_in = im->v_in;
        row->v_out = im->v_out;
        row->restitution = im->restitution;
        row->duration = im->t_end - im->t_begin;
    }
}

const char *study_history_set(double until, char *buf) {
    /* The property's range is (0, 3600] s; a longer run's ring is capped by the registry's
     * memory budget anyway (sim.c). */
    snprintf(buf, STUDY_HISTORY_SET_MAX, "universe.history=%.17g", fmin(until, 3600.0));
    return buf;
}

void study_run(const Study *study, long index, StudyRow *row) {
    memset(row, 0, sizeof *row);
    row->index = index;
    for (int i = 0; i < STUDY_MAX_PROBES; i++)
        row->probes[i] = NAN;
    row->t_impact = row->v_in = row->v_out = row->restitution = row->duration = NAN;
    row->kinetic_end = NAN;
    study_run_values(study, index, row->values);
    SimOptions o = sim_options_default();
    o.until = study->until > 0.0 ? study->until : o.until;
    char buffers[STUDY_MAX_AXES][STUDY_VALUE_MAX + 130], history[STUDY_HISTORY_SET_MAX];
    const char *sets[1 + 256 + STUDY_MAX_AXES], *params[STUDY_MAX_AXES];
    int set_count = 0, param_count = 0;
    sets[set_count++] = study_history_set(o.until, history); /* first: a user's --set wins */
    for (int i = 0; i < study->set_count && i < 256; i++)
        sets[set_count++] = study->sets[i];
    for (int i = 0; i < study->axis_count; i++) {
        snprintf(buffers[i], sizeof buffers[i], "%s=%s", study->axes[i].name, row->values[i]);
        if (study->axes[i].is_param)
            params[param_count++] = buffers[i];
        else
            sets[set_count++] = buffers[i];
    }
    o.lockstep = true;
    o.quiet = true;
    o.sets = sets;
    o.set_count = set_count;
    o.params = params;
    o.param_count = param_count;
    double start = issim_wall_time();
    IssimError err = {0};
    Sim *sim = sim_create(study->scene, &o, &err);
    SimSummary *sum = sim ? calloc(1, sizeof *sum) : NULL;
    if (sim && !sum)
        issim_error_set(&err, ISSIM_ERR_NOMEM, "out of memory");
    if (sum && probes_known(study, sim, row) && sim_run_headless(sim, sum, &err) == ISSIM_OK) {
        row->ok = true;
        fill_impact(sum, row);
        probe_values(study, sim, row);
    } else if (!row->message[0]) {
        issim_strlcpy(row->message, err.message, sizeof row->message);
    }
    free(sum);
    sim_destroy(sim);
    row->wall_seconds = issim_wall_time() - start;
}

/* ===== Checks before the first run ===== */

/* The values study_check tries on an axis: every grid value; for random sampling both ends and
 * run 0's draw (an integer property refuses a fractional draw). Returns the count. */
static int check_values(const Study *study, int axis, char (*out)[STUDY_VALUE_MAX], int max) {
    const StudyAxis *a = &study->axes[axis];
    if (study->samples <= 0) {
        int n = a->count < max ? a->count : max;
        for (int i = 0; i < n; i++)
            issim_strlcpy(out[i], a->values[i], STUDY_VALUE_MAX);
        return n;
    }
    char run0[STUDY_MAX_AXES][STUDY_VALUE_MAX];
    study_run_values(study, 0, run0);
    snprintf(out[0], STUDY_VALUE_MAX, "%.12g", a->lo);
    snprintf(out[1], STUDY_VALUE_MAX, "%.12g", a->hi);
    issim_strlcpy(out[2], run0[axis], STUDY_VALUE_MAX);
    return 3;
}

/* The property a "path=value" names, resolved in db (so two spellings of one property meet). */
static IssimStatus resolve_set(ThingDb *db, const char *set, ThingId *thing, int *prop,
                               IssimError *err) {
    const char *eq = strchr(set, '=');
    char path[256];
    size_t len = eq ? (size_t)(eq - set) : strlen(set);
    if (!eq || len == 0 || len >= sizeof path)
        return issim_error_set(err, ISSIM_ERR_INVALID, "--set %s: expected PATH=VALUE", set);
    memcpy(path, set, len);
    path[len] = '\0';
    IssimError sub = {0};
    if (thingdb_resolve(db, path, thing, prop, &sub) != ISSIM_OK ||
        thingdb_set_text(db, path, eq + 1, false, &sub) != ISSIM_OK)
        return issim_error_set(err, sub.status, "--set %s: %s", set, sub.message);
    return ISSIM_OK;
}

/* Every probe is a variable of run 0's scene (db with run 0's values). A scene that does not
 * build is left to the run, which reports why. */
static IssimStatus check_probes(const Study *study, const ThingDb *db, IssimError *err) {
    if (study->probe_count == 0)
        return ISSIM_OK;
    SimOptions o = sim_options_default();
    o.until = study->until > 0.0 ? study->until : o.until;
    o.lockstep = true;
    o.quiet = true;
    IssimError sub = {0};
    Sim *sim = sim_create_from_db(db, study->scene, &o, &sub);
    if (!sim)
        return ISSIM_OK;
    IssimStatus s = ISSIM_OK;
    Registry *reg = sim_registry(sim);
    for (int i = 0; i < study->probe_count && s == ISSIM_OK; i++)
        if (registry_var_find(reg, study->probes[i].var) < 0)
            s = issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                                "--at %s: the scene has no variable %s (variables: BODY.pos.x ... "
                                "BODY.angvel.z, universe.energy.kinetic ...; docs/scene-format.md)",
                                study->probes[i].var, study->probes[i].var);
    sim_destroy(sim);
    return s;
}

static IssimStatus check_with_values(const Study *study, char (*values)[STUDY_VALUE_MAX],
                                     IssimError *err);

IssimStatus study_check(const Study *study, IssimError *err) {
    char(*values)[STUDY_VALUE_MAX] = malloc(sizeof *values * STUDY_MAX_VALUES);
    if (!values)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    IssimStatus s = check_with_values(study, values, err);
    free(values);
    return s;
}

static IssimStatus check_with_values(const Study *study, char (*values)[STUDY_VALUE_MAX],
                                     IssimError *err) {
    for (int i = 0; i < study->axis_count; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(study->axes[i].name, study->axes[j].name) == 0)
                return issim_error_set(err, ISSIM_ERR_INVALID,
                                       "--grid %s is given twice: one axis per property or "
                                       "parameter (list every value in one --grid)",
                                       study->axes[i].name);
    char params_text[STUDY_MAX_AXES][STUDY_VALUE_MAX + 130];
    const char *params[STUDY_MAX_AXES];
    int param_count = 0;
    for (int i = 0; i < study->axis_count; i++) {
        const StudyAxis *a = &study->axes[i];
        if (!a->is_param)
            continue;
        int n = check_values(study, i, values, STUDY_MAX_VALUES);
        for (int k = 0; k < n; k++) {
            double v;
            if (!parse_number(values[k], &v))
                return issim_error_set(err, ISSIM_ERR_INVALID,
                                       "--grid %s: '%s' is not a number (a scene parameter takes "
                                       "finite numbers; a property path has a dot: thing.property)",
                                       a->name, values[k]);
        }
        snprintf(params_text[param_count], sizeof params_text[0], "%s=%s", a->name, values[0]);
        params[param_count] = params_text[param_count];
        param_count++;
    }
    SceneLimits limits = scene_limits_default();
    limits.params = params;
    limits.param_count = param_count;
    ThingDb *db = NULL;
    IssimError sub = {0};
    if (scene_load_file(study->scene, &limits, &db, &sub) != ISSIM_OK)
        return issim_error_set(err, sub.status, "%s", sub.message);
    ThingId set_thing[256], axis_thing[STUDY_MAX_AXES];
    int set_prop[256], axis_prop[STUDY_MAX_AXES];
    int sets = study->set_count < 256 ? study->set_count : 256;
    IssimStatus s = ISSIM_OK;
    for (int i = 0; i < sets && s == ISSIM_OK; i++)
        s = resolve_set(db, study->sets[i], &set_thing[i], &set_prop[i], err);
    for (int i = 0; i < study->axis_count && s == ISSIM_OK; i++) {
        const StudyAxis *a = &study->axes[i];
        axis_prop[i] = -1;
        if (a->is_param)
            continue;
        if (thingdb_resolve(db, a->name, &axis_thing[i], &axis_prop[i], &sub) != ISSIM_OK) {
            s = issim_error_set(err, sub.status, "--grid %s", sub.message);
            break;
        }
        for (int j = 0; j < i && s == ISSIM_OK; j++)
            if (axis_prop[j] == axis_prop[i] && thing_id_equal(axis_thing[j], axis_thing[i]))
                s = issim_error_set(err, ISSIM_ERR_INVALID,
                                    "--grid %s and --grid %s name the same property: one axis "
                                    "per property",
                                    study->axes[j].name, a->name);
        for (int j = 0; j < sets && s == ISSIM_OK; j++)
            if (set_prop[j] == axis_prop[i] && thing_id_equal(set_thing[j], axis_thing[i]))
                s = issim_error_set(err, ISSIM_ERR_INVALID,
                                    "--grid %s conflicts with --set %s: the axis would override "
                                    "it in every run; drop one of them",
                                    a->name, study->sets[j]);
        int n = s == ISSIM_OK ? check_values(study, i, values, STUDY_MAX_VALUES) : 0;
        for (int k = 0; k < n && s == ISSIM_OK; k++)
            if (thingdb_set_text(db, a->name, values[k], false, &sub) != ISSIM_OK)
                s = issim_error_set(err, sub.status, "--grid %s=%s: %s", a->name, values[k],
                                    sub.message);
    }
    if (s == ISSIM_OK && study->probe_count > 0) {
        char run0[STUDY_MAX_AXES][STUDY_VALUE_MAX];
        study_run_values(study, 0, run0);
        for (int i = 0; i < study->axis_count; i++)
            if (!study->axes[i].is_param)
                thingdb_set_text(db, study->axes[i].name, run0[i], false, &sub);
        s = check_probes(study, db, err);
    }
    thingdb_destroy(db);
    return s;
}

void study_format_header(const Study *study, FILE *out) {
    fprintf(out, "run");
    for (int i = 0; i < study->axis_count; i++)
        fprintf(out, ",%s", study->axes[i].name);
    fprintf(out, ",status,impacts,t_impact,v_in,v_out,restitution,duration,kinetic_end");
    for (int i = 0; i < study->probe_count; i++)
        fprintf(out, ",%s@%s", study->probes[i].var, isinf(study->probes[i].t) ? "end" : "t");
    fprintf(out, ",wall_s");
}

/* A CSV field: quoted when it holds a comma or a quote (quotes doubled). */
static void csv_text(FILE *out, const char *s) {
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s == '\n' ? ' ' : *s, out);
    }
    fputc('"', out);
}

void study_format_row(const Study *study, const StudyRow *row, FILE *out) {
    fprintf(out, "%ld", row->index);
    for (int i = 0; i < study->axis_count; i++) {
        fputc(',', out);
        csv_text(out, row->values[i]);
    }
    fputc(',', out);
    csv_text(out, row->ok ? "ok" : row->message);
    fprintf(out, ",%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g", row->impacts, row->t_impact, row->v_in,
            row->v_out, row->restitution, row->duration, row->kinetic_end);
    for (int i = 0; i < study->probe_count; i++)
        fprintf(out, ",%.10g", row->probes[i]);
    fprintf(out, ",%.4f", row->wall_seconds);
}
