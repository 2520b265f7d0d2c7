/* Simulation sessions: scene -> engine + registry (+ recorder), headless runs and their summary.
 * The interactive engine thread is in sim_thread.c. */
#include "issim/engine_stats.h"
#include "issim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "issim/io.h"
#include "sim_internal.h"

SimOptions sim_options_default(void) {
    return (SimOptions){.until = 2.0, .dt = 0.0, .integrator = -1, .every = 1};
}

static IssimStatus apply_sets(ThingDb *db, const SimOptions *o, IssimError *err) {
    for (int i = 0; i < o->set_count; i++) {
        const char *eq = strchr(o->sets[i], '=');
        if (!eq || eq == o->sets[i])
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "--set %s: expected PATH=VALUE (for example bar.mass=2)",
                                   o->sets[i]);
        char path[256];
        size_t len = (size_t)(eq - o->sets[i]);
        if (len >= sizeof path)
            return issim_error_set(err, ISSIM_ERR_INVALID, "--set: path too long");
        memcpy(path, o->sets[i], len);
        path[len] = '\0';
        IssimError sub;
        if (thingdb_set_text(db, path, eq + 1, false, &sub) != ISSIM_OK)
            return issim_error_set(err, sub.status, "--set %s: %s", o->sets[i], sub.message);
    }
    return ISSIM_OK;
}

/* What building the engine may still allocate: the smaller of the memory the system has
 * available and what this process's address-space limit (ulimit -v) leaves; SIZE_MAX when
 * neither can be read. */
static size_t memory_left(void) {
    size_t left = SIZE_MAX;
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kb;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            left = (size_t)kb * 1024;
    if (f)
        fclose(f);
    struct rlimit as;
    unsigned long long pages = 0;
    f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%llu", &pages) == 1 && getrlimit(RLIMIT_AS, &as) == 0 &&
        as.rlim_cur != RLIM_INFINITY) {
        size_t used = (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
        size_t limit = as.rlim_cur > used ? (size_t)(as.rlim_cur - used) : 0;
        left = limit < left ? limit : left;
    }
    if (f)
        fclose(f);
    return left;
}

/* A scene too big for this machine is refused before the engine is built, with the figures
 * (issue 34 item 3b): the engine copies the database and adds its state per body, the run its
 * history and checkpoints (bounded by their budgets); 1e5 spheres from a 544-byte scene ended in
 * "out of memory" after minutes. */
static IssimStatus check_scene_size(const ThingDb *db, const char *scene_path, double limit,
                                    IssimError *err) {
    /* a sweep creates a session per run (thousands of runs of a millisecond): small scenes skip
       the count and the two /proc reads */
    if (limit <= 0.0 && thingdb_memory_bytes(db) < SIM_SMALL_SCENE_BYTES)
        return ISSIM_OK;
    int bodies = 0;
    for (int i = 0; i < thingdb_count(db); i++)
        bodies += thing_kind(db, thingdb_at(db, i)) == THING_RIGID_BODY;
    double need = (double)thingdb_memory_bytes(db) + SIM_ENGINE_BYTES_PER_BODY * bodies +
                  4.0 * SIM_HISTORY_BUDGET_BYTES + (double)SIM_CHECKPOINT_BUDGET_BYTES;
    double left = limit > 0.0 ? limit : (double)memory_left();
    if (need <= left)
        return ISSIM_OK;
    return issim_error_set(err, ISSIM_ERR_NOMEM,
                           "%s: %d things (%d bodies) need about %.2f GB more to build the "
                           "engine (its copy of the scene's %.2f GB of things and %.0f kB of "
                           "state a body, the run's history and checkpoints), and %.2f GB is "
                           "left (%s): make the scene smaller",
                           scene_path && scene_path[0] ? scene_path : "scene", thingdb_count(db),
                           bodies, need / 1e9, (double)thingdb_memory_bytes(db) / 1e9,
                           SIM_ENGINE_BYTES_PER_BODY / 1e3, left / 1e9,
                           limit > 0.0 ? "the limit given" : "memory available, ulimit -v");
}

static void on_engine_event(const EngineEvent *ev, void *user);

/* Takes db (Owned: destroyed here whatever happens): a scene loaded for this run is not copied
 * once more, so a run holds two databases at its peak (this one and the engine's), not three. */
static Sim *create_owning(ThingDb *db, const char *scene_path, const SimOptions *options,
                          IssimError *err) {
    Sim *sim = calloc(1, sizeof *sim);
    if (!sim) {
        thingdb_destroy(db);
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    sim->options = options ? *options : sim_options_default();
    if (sim->options.every < 1)
        sim->options.every = 1;
    issim_strlcpy(sim->scene_path, scene_path ? scene_path : "", sizeof sim->scene_path);
    pthread_mutex_init(&sim->clock.clock_mutex, NULL);
    pthread_mutex_init(&sim->events.impacts_mutex, NULL);
    sim->clock.speed = 1.0;
    sim->clock.slow_window = 0.002;
    sim->clock.hold_at = NAN;
    if (!db) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        sim_destroy(sim);
        return NULL;
    }
    IssimStatus s = check_scene_size(db, scene_path, sim->options.memory_limit, err);
    if (s == ISSIM_OK)
        s = apply_sets(db, &sim->options, err);
    if (s == ISSIM_OK) {
        EngineOptions eo = engine_options_default();
        eo.dt = sim->options.dt;
        eo.integrator = sim->options.integrator;
        eo.threads = sim->options.threads;
        eo.pipeline_collision = sim->options.pipeline_collision;
        char scene_dir[512];
        issim_strlcpy(scene_dir, sim->scene_path[0] ? sim->scene_path : ".", sizeof scene_dir);
        char *slash = strrchr(scene_dir, '/');
        if (slash)
            *slash = '\0';
        else
            issim_strlcpy(scene_dir, ".", sizeof scene_dir);
        eo.asset_dir = scene_dir;
        sim->engine = engine_create(db, &eo, err);
        s = sim->engine ? ISSIM_OK : (err ? err->status : ISSIM_ERR_INVALID);
    }
    thingdb_destroy(db);
    if (s == ISSIM_OK) {
        ThingId universe = thingdb_find_kind(engine_thingdb(sim->engine), THING_UNIVERSE);
        double history = thing_real(engine_thingdb(sim->engine), universe, "history");
        RegistryDesc rd = registry_desc_default();
        /* universe.history is honoured up to a memory budget, so a tiny step (RK4 at 1e-5 s)
         * does not turn 20 s of history into hundreds of megabytes. */
        double frames = ceil(history / engine_dt(sim->engine)) + 2;
        double budget = SIM_HISTORY_BUDGET_BYTES / (8.0 * engine_var_count(sim->engine));
        /* at least 1024 frames while they cost at most 4 budgets (scenes up to ~1,200 bodies);
           a floor of 1024 whatever the size gave 1e5 bodies 10.6 GB of history */
        frames = fmin(frames, fmax(budget, fmin(1024.0, 4.0 * budget)));
        frames = fmax(frames, 2.0);
        rd.history_frames = (int)frames;
        rd.max_vars = engine_var_count(sim->engine) + sim_contacts_var_count(sim->engine);
        sim->published.report_capacity = rd.max_contacts;
        sim->history_frames = rd.history_frames;
        sim->registry = registry_create(&rd, err);
        if (!sim->registry && err) { /* the figures are the scene's: say which */
            char why[sizeof err->message];
            issim_strlcpy(why, err->message, sizeof why);
            issim_error_set(err, err->status, "%s: %d bodies: %s", sim->scene_path,
                            engine_body_count(sim->engine), why);
        }
        s = sim->registry ? engine_register_vars(sim->engine, sim->registry, err) : ISSIM_ERR_NOMEM;
        if (s == ISSIM_OK)
            s = sim_contacts_declare(sim, err);
    }
    if (s != ISSIM_OK) {
        sim_destroy(sim);
        return NULL;
    }
    int var_count = registry_var_count(sim->registry);
    sim->values = calloc((size_t)var_count, sizeof(double));
    /* the contact quantities are measured by interactive runs only (sim_contacts.c) */
    for (int i = engine_var_count(sim->engine); sim->values && i < var_count; i++)
        sim->values[i] = NAN;
    sim->dt = engine_dt(sim->engine);
    engine_set_event_callback(sim->engine, on_engine_event, sim);
    sim_playback_from_scene(sim); /* before any sim_set_speed of the caller's */
    return sim;
}

Sim *sim_create(const char *scene_path, const SimOptions *options, IssimError *err) {
    ThingDb *db = NULL;
    SceneLimits limits = scene_limits_default();
    if (options) {
        limits.params = options->params;
        limits.param_count = options->param_count;
    }
    if (scene_load_file(scene_path, &limits, &db, err) != ISSIM_OK)
        return NULL;
    return create_owning(db, scene_path, options, err);
}

Sim *sim_create_from_db(const ThingDb *db, const char *scene_path, const SimOptions *options,
                        IssimError *err) {
    return create_owning(thingdb_clone(db), scene_path, options, err);
}

void sim_destroy(Sim *sim) {
    if (!sim)
        return;
    sim_stop(sim);
    engine_destroy(sim->engine);
    registry_destroy(sim->registry);
    registry_destroy(sim->feed);
    free(sim->feed_values);
    free(sim->values);
    free(sim->published.reports);
    sim_contacts_free(&sim->contacts);
    free(sim->headless.record_vars);
    free(sim->headless.record_row);
    if (sim->headless.recorder)
        recorder_close(sim->headless.recorder, NULL);
    pthread_mutex_destroy(&sim->clock.clock_mutex);
    pthread_mutex_destroy(&sim->events.impacts_mutex);
    free(sim->events.impacts);
    free(sim->events.fine);
    free(sim->events.fine_contacts);
    free(sim->events.fine_contact_count);
    free(sim);
}

Registry *sim_registry(Sim *sim) {
    return sim->registry;
}
Engine *sim_engine(Sim *sim) {
    return sim->engine;
}

/* ===== Impacts from contact events ===== */

/* Events and impacts number bodies by the engine's own index; the session owns its engine, so
 * it turns such an index into the engine's id here. */
static EngineBodyState body_state(const Sim *sim, int body) {
    return engine_body_state(sim->engine, engine_body_id(sim->engine, body));
}
static const char *body_name(const Sim *sim, int body) {
    return engine_body_name(sim->engine, engine_body_id(sim->engine, body));
}

/* body's centre-of-mass velocity along the normal, relative to body_b's when body_b >= 0. */
static double normal_velocity(const Sim *sim, int body, int body_b, Vec3 normal) {
    Vec3 v = body_state(sim, body).vel;
    if (body_b >= 0)
        v = vec3_sub(v, body_state(sim, body_b).vel);
    return vec3_dot(v, normal);
}

static int obstacle_count(const Sim *sim) {
    const ThingDb *db = engine_thingdb(sim->engine);
    int n = 0;
    for (int i = 0; i < thingdb_count(db); i++)
        n += thing_kind(db, thingdb_at(db, i)) == THING_FIXED_OBSTACLE;
    return n;
}

static Vec3 obstacle_normal(const Sim *sim, int obstacle) {
    const ThingDb *db = engine_thingdb(sim->engine);
    int seen = 0;
    for (int i = 0; i < thingdb_count(db); i++) {
        ThingId id = thingdb_at(db, i);
        if (thing_kind(db, id) == THING_FIXED_OBSTACLE && seen++ == obstacle)
            return vec3_normalize(thing_vec3(db, id, "normal"));
    }
    return vec3(0, 0, 1);
}

/* The centre of mass leaves the contact at height h with normal speed v; in free flight under
 * gravity g_n = -g.n it rises to h + v^2 / (2 g_n). Exact for ballistic flight, and independent
 * of the output step (a sampled maximum would miss short hops). */
static double ballistic_apex(const Sim *sim, int body, Vec3 normal, double v_out) {
    const ThingDb *db = engine_thingdb(sim->engine);
    Vec3 g = thing_vec3(db, thingdb_find_kind(db, THING_UNIVERSE), "gravity");
    double g_n = -vec3_dot(g, normal);
    double h = vec3_dot(body_state(sim, body).pos, normal);
    if (!(g_n > 0.0))
        return NAN;
    return h + (v_out > 0.0 ? v_out * v_out / (2.0 * g_n) : 0.0);
}

/* The normal an impact is measured along: the obstacle's, or between two bodies the normal of
 * the contact that begins it (from body_b to body), so that the relative velocity is the closing
 * speed (the obstacle's normal, or (0, 0, 1) for no obstacle, measured one body's own velocity
 * along an axis that had nothing to do with the collision). */
static Vec3 impact_normal(const Sim *sim, const EngineEvent *ev) {
    if (ev->body_b < 0)
        return obstacle_normal(sim, ev->obstacle);
    Vec3 n;
    if (engine_contact_normal(sim->engine, ev->contact_id, &n))
        return n;
    return vec3_normalize(vec3_sub(body_state(sim, ev->body).pos, body_state(sim, ev->body_b).pos));
}

static void on_engine_event(const EngineEvent *ev, void *user) {
    Sim *sim = user;
    SimSummary *sum = sim->headless.summary;
    if (!sum) { /* an interactive run: its impacts for the display clock */
        sim_impacts_note(sim, ev);
        return;
    }
    sum->contact_onsets += ev->kind == ENGINE_EVENT_CONTACT_BEGIN;
    sum->contact_ends += ev->kind == ENGINE_EVENT_CONTACT_END;
    if (ev->body >= SIM_MAX_BODIES)
        return;
    SimBodyTrack *track = &sim->headless.tracks[ev->body];
    if (ev->kind == ENGINE_EVENT_CONTACT_BEGIN) {
        if (track->active_contacts++ == 0 && sum->impact_count < SIM_MAX_IMPACTS) {
            track->impact = sum->impact_count++;
            SimImpact *im = &sum->impacts[track->impact];
            int other =
                ev->body_b >= 0 && ev->body_b < engine_body_count(sim->engine) ? ev->body_b : -1;
            Vec3 n = impact_normal(sim, ev);
            *im = (SimImpact){.body = ev->body,
                              .body_b = other,
                              .t_begin = ev->t,
                              .v_in = normal_velocity(sim, ev->body, other, n),
                              .apex = -INFINITY};
            track->normal = n;
        }
        if (track->impact >= 0 && track->active_contacts > sum->impacts[track->impact].contacts)
            sum->impacts[track->impact].contacts = track->active_contacts;
    } else if (ev->kind == ENGINE_EVENT_CONTACT_END && track->active_contacts > 0) {
        if (--track->active_contacts == 0 && track->impact >= 0) {
            SimImpact *im = &sum->impacts[track->impact];
            im->t_end = ev->t;
            im->v_out = normal_velocity(sim, ev->body, im->body_b, track->normal);
            im->restitution = im->v_in < 0 ? -im->v_out / im->v_in : NAN;
            im->apex =
                im->body_b < 0 ? ballistic_apex(sim, ev->body, track->normal, im->v_out) : NAN;
        }
    }
}

/* ===== Recording ===== */

static IssimStatus parse_record_vars(Sim *sim, char *list, IssimError *err);

static IssimStatus choose_record_vars(Sim *sim, IssimError *err) {
    const Engine *e = sim->engine;
    ThingId universe = thingdb_find_kind(engine_thingdb(e), THING_UNIVERSE);
    /* The whole list, however long (a fixed buffer cut --vars at 1,023 characters silently). */
    char *list = strdup(sim->options.vars ? sim->options.vars
                                          : thing_string(engine_thingdb(e), universe, "record"));
    sim->headless.record_vars = calloc((size_t)engine_var_count(e), sizeof(int));
    sim->headless.record_row = calloc((size_t)engine_var_count(e) + 1, sizeof(double));
    if (!list || !sim->headless.record_vars || !sim->headless.record_row) {
        free(list);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    }
    IssimStatus s = parse_record_vars(sim, list, err);
    free(list);
    return s;
}

/* The variables of a comma or space separated list (empty: every variable). */
static IssimStatus parse_record_vars(Sim *sim, char *list, IssimError *err) {
    const Engine *e = sim->engine;
    sim->headless.record_count = 0;
    if (list[0] == '\0') {
        for (int i = 0; i < engine_var_count(e); i++)
            sim->headless.record_vars[sim->headless.record_count++] = i;
        return ISSIM_OK;
    }
    for (char *save = NULL, *tok = strtok_r(list, ", ", &save); tok;
         tok = strtok_r(NULL, ", ", &save)) {
        int v = engine_var_find(e, tok);
        if (v < 0)
            return issim_error_set(err, ISSIM_ERR_NOT_FOUND,
                                   "unknown variable '%s' to record (variables look like %s)", tok,
                                   engine_var_count(e) > 2 ? engine_var_name(e, 2) : "?");
        if (sim->headless.record_count < engine_var_count(e))
            sim->headless.record_vars[sim->headless.record_count++] = v;
    }
    return ISSIM_OK;
}

static Recorder *open_recorder(Sim *sim, IssimError *err) {
    const Engine *e = sim->engine;
    const char **names = calloc((size_t)sim->headless.record_count + 1, sizeof *names);
    const char **units = calloc((size_t)sim->headless.record_count + 1, sizeof *units);
    char meta[4][600];
    const char *metadata[4] = {meta[0], meta[1], meta[2], meta[3]};
    if (!names || !units) {
        free(names);
        free(units);
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < sim->headless.record_count; i++) {
        names[i] = engine_var_name(e, sim->headless.record_vars[i]);
        units[i] = engine_var_unit(e, sim->headless.record_vars[i]);
    }
    snprintf(meta[0], sizeof meta[0], "issim %s", ISSIM_VERSION);
    snprintf(meta[1], sizeof meta[1], "scene: %s", sim->scene_path);
    snprintf(meta[2], sizeof meta[2], "options: integrator=%s dt=%.9g every=%d lockstep=%s",
             integrator_name(engine_integrator(e)), engine_dt(e), sim->options.every,
             sim->options.lockstep ? "yes" : "no");
    snprintf(meta[3], sizeof meta[3], "command: %s",
             sim->options.command_line ? sim->options.command_line : "(library)");
    RecorderDesc rd = recorder_desc_default();
    rd.path = sim->options.record_path;
    rd.column_count = sim->headless.record_count;
    rd.columns = names;
    rd.units = units;
    rd.metadata = metadata;
    rd.metadata_count = 4;
    rd.scene_path = sim->scene_path;
    rd.params = sim->options.params;
    rd.param_count = sim->options.param_count;
    rd.sets = sim->options.sets;
    rd.set_count = sim->options.set_count;
    rd.command_line = sim->options.command_line;
    Recorder *rec = recorder_open(&rd, err);
    free(names);
    free(units);
    return rec;
}

/* The row has room for every variable (record_row: var_count): a fixed stack buffer of 1,024
 * was over-read by scenes of about 80 bodies recording everything. */
static void record_row(Sim *sim, Recorder *rec) {
    for (int i = 0; i < sim->headless.record_count; i++)
        sim->headless.record_row[i] = sim->values[sim->headless.record_vars[i]];
    recorder_push(rec, engine_time(sim->engine), sim->headless.record_row, true);
}

/* ===== Headless runs ===== */

static void publish(Sim *sim, SimSummary *sum) {
    Engine *e = sim->engine;
    double t = engine_time(e);
    engine_write_vars(e, sim->values);
    registry_publish(sim->registry, t, sim->values);
    if (sum) {
        sum->state_hash = issim_hash_doubles(sum->state_hash, &t, 1);
        sum->state_hash =
            issim_hash_doubles(sum->state_hash, sim->values, (size_t)engine_var_count(e));
    }
}

static void progress(const Sim *sim, double t, double until, double wall_start) {
    if (sim->options.quiet)
        return;
    fprintf(stderr, "\rissim: t = %.3f / %.3f s (%3.0f%%), %.1f s wall", t, until,
            100.0 * t / until, issim_wall_time() - wall_start);
}

/* The recording of the session's options (path, vars, every); its first row is the caller's. */
static IssimStatus record_open(Sim *sim, IssimError *err) {
    IssimStatus s = sim->headless.record_vars ? ISSIM_OK : choose_record_vars(sim, err);
    if (s != ISSIM_OK)
        return s;
    sim->headless.recorder = open_recorder(sim, err);
    return sim->headless.recorder ? ISSIM_OK : err ? err->status : ISSIM_ERR_IO;
}

static IssimStatus record_close(Sim *sim, IssimError *err) {
    if (!sim->headless.recorder)
        return ISSIM_OK;
    SimSummary *sum = sim->headless.summary;
    IssimError rerr = {0};
    RecorderStats rs;
    IssimStatus s = recorder_close_with_stats(sim->headless.recorder, &rs, &rerr);
    sim->headless.recorder = NULL;
    if (s != ISSIM_OK && sum) {
        sum->recording_failed = true;
        issim_strlcpy(sum->recording_error, rerr.message, sizeof sum->recording_error);
    }
    /* The rows in the file: after a failed write (disk full) fewer than were pushed. */
    if (sum)
        sum->rows_recorded = rs.rows_written;
    if (s != ISSIM_OK)
        issim_error_set(err, s, "%s", rerr.message);
    return s;
}

IssimStatus sim_headless_begin(Sim *sim, SimSummary *sum, IssimError *err) {
    Engine *e = sim->engine;
    memset(sum, 0, sizeof *sum);
    sum->state_hash = ISSIM_HASH_INIT;
    sim->headless.summary = sum;
    for (int b = 0; b < SIM_MAX_BODIES; b++)
        sim->headless.tracks[b] = (SimBodyTrack){.impact = -1};
    if (engine_body_count(e) > 0) {
        sum->drop_height = vec3_dot(body_state(sim, 0).pos, obstacle_normal(sim, 0));
    }
    sim->headless.wall_start = issim_wall_time();
    sim->headless.last_progress = sim->headless.wall_start;
    sim->headless.grid_t0 = engine_time(e);
    sim->headless.grid_k = 0;
    if (sim->options.record_path) {
        IssimStatus s = record_open(sim, err);
        if (s != ISSIM_OK) {
            sim->headless.summary = NULL;
            return s;
        }
    }
    publish(sim, sum);
    if (sim->headless.recorder)
        record_row(sim, sim->headless.recorder);
    return ISSIM_OK;
}

/* Output instants are t0 + k dt, computed from k rather than accumulated, so a run to T has
 * exactly ceil(T / dt) output steps and ends on T; a run in pieces stops on each piece's end
 * and resumes on the same instants. */
static IssimStatus advance_to(Sim *sim, uint64_t last_k, double until, IssimError *err) {
    Engine *e = sim->engine;
    SimSummary *sum = sim->headless.summary;
    if (!sum)
        return issim_error_set(err, ISSIM_ERR_STATE, "no headless run under way");
    const double dt = engine_dt(e), t0 = sim->headless.grid_t0;
    IssimStatus status = ISSIM_OK;
    while (sim->headless.grid_k < last_k || engine_time(e) < until) {
        uint64_t k = sim->headless.grid_k + 1;
        double grid = t0 + (double)k * dt;
        double target = k >= last_k ? until : grid;
        if (!(target > engine_time(e)))
            break;
        status = engine_advance(e, target, err);
        if (status != ISSIM_OK)
            break;
        if (target == grid || k < last_k)
            sim->headless.grid_k = k;
        sum->output_steps++;
        publish(sim, sum);
        if (sim->headless.recorder && sum->output_steps % (uint64_t)sim->options.every == 0)
            record_row(sim, sim->headless.recorder);
        if ((sum->output_steps & 255) != 0)
            continue; /* the clock is read every 256 steps only: it is not free */
        double now = issim_wall_time();
        if (now - sim->headless.last_progress > 0.5) {
            progress(sim, engine_time(e), until, sim->headless.wall_start);
            sim->headless.last_progress = now;
        }
    }
    sum->t_end = engine_time(e);
    sum->engine = engine_stats(e);
    sum->wall_seconds = issim_wall_time() - sim->headless.wall_start;
    return status;
}

IssimStatus sim_headless_advance(Sim *sim, double until, IssimError *err) {
    double steps = ceil((until - sim->headless.grid_t0) / engine_dt(sim->engine) - 1e-9);
    return advance_to(sim, steps > 0 ? (uint64_t)steps : 0, until, err);
}

/* On the instants themselves: t0 + k dt for a time computed by the caller could fall an ulp
 * beside one and leave a step of 1e-16 s for the next call. */
IssimStatus sim_headless_step(Sim *sim, uint64_t n, IssimError *err) {
    uint64_t last_k = sim->headless.grid_k + n;
    return advance_to(sim, last_k, sim->headless.grid_t0 + (double)last_k * engine_dt(sim->engine),
                      err);
}

IssimStatus sim_headless_edit(Sim *sim, const char *path, const char *value, IssimError *err) {
    Engine *e = sim->engine;
    /* As the interactive engine thread (sim_thread.c, handle_edits): tried on a copy as a
     * running edit first, so a refused edit changes nothing and says what the GUI says. */
    ThingDb *probe = thingdb_clone(engine_thingdb(e));
    IssimStatus s = probe ? thingdb_set_text(probe, path, value, true, err)
                          : issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    thingdb_destroy(probe);
    if (s == ISSIM_OK)
        s = engine_apply_edit(e, path, value, err);
    if (s != ISSIM_OK)
        return s;
    double t = engine_time(e);
    if (sim->headless.recorder)
        recorder_note_edit(sim->headless.recorder, t, path, value);
    /* The edited state replaces the frame published at t. */
    registry_rewind(sim->registry, nextafter(t, -INFINITY));
    engine_write_vars(e, sim->values);
    registry_publish(sim->registry, t, sim->values);
    return ISSIM_OK;
}

IssimStatus sim_headless_record(Sim *sim, const char *path, const char *vars, int every,
                                IssimError *err) {
    if (!sim->headless.summary)
        return issim_error_set(err, ISSIM_ERR_INVALID, "record: no run under way");
    IssimStatus s = record_close(sim, err);
    if (s != ISSIM_OK)
        return s;
    free(sim->headless.record_vars);
    free(sim->headless.record_row);
    sim->headless.record_vars = NULL;
    sim->headless.record_row = NULL;
    sim->options.record_path = path;
    sim->options.vars = vars;
    sim->options.every = every < 1 ? 1 : every;
    s = record_open(sim, err);
    if (s == ISSIM_OK)
        record_row(sim, sim->headless.recorder);
    else
        sim->options.record_path = NULL;
    return s;
}

IssimStatus sim_headless_record_end(Sim *sim, IssimError *err) {
    IssimStatus s = record_close(sim, err);
    sim->options.record_path = NULL; /* the caller's path: Borrowed until here */
    return s;
}

IssimStatus sim_headless_end(Sim *sim, IssimError *err) {
    if (!sim->headless.summary)
        return ISSIM_OK;
    if (!sim->options.quiet && sim->headless.last_progress != sim->headless.wall_start)
        fputc('\n', stderr);
    SimSummary *sum = sim->headless.summary;
    sum->t_end = engine_time(sim->engine);
    sum->engine = engine_stats(sim->engine);
    sum->wall_seconds = issim_wall_time() - sim->headless.wall_start;
    IssimError rerr = {0};
    record_close(sim, &rerr);
    sim->headless.summary = NULL;
    return ISSIM_OK;
}

const double *sim_values(const Sim *sim) {
    return sim->values;
}

IssimStatus sim_run_headless(Sim *sim, SimSummary *sum, IssimError *err) {
    IssimStatus status = sim_headless_begin(sim, sum, err);
    if (status != ISSIM_OK)
        return status;
    status = sim_headless_advance(sim, sim->options.until, err);
    sim_headless_end(sim, NULL);
    return status;
}

static void print_impact(const Sim *sim, int i, const SimImpact *im, FILE *out) {
    char who[160];
    if (im->body_b >= 0)
        snprintf(who, sizeof who, "%s/%s", body_name(sim, im->body), body_name(sim, im->body_b));
    else
        snprintf(who, sizeof who, "%s", body_name(sim, im->body));
    if (im->t_end > 0 && isfinite(im->apex))
        fprintf(out, "  %3d  %-14s %10.6f %10.4f %11.6f %11.6f %11.6f %12.4f %8d\n", i + 1, who,
                im->t_begin, im->v_in, im->v_out, im->restitution, im->apex,
                1e3 * (im->t_end - im->t_begin), im->contacts);
    else if (im->t_end > 0)
        fprintf(out, "  %3d  %-14s %10.6f %10.4f %11.6f %11.6f %11s %12.4f %8d\n", i + 1, who,
                im->t_begin, im->v_in, im->v_out, im->restitution, "-",
                1e3 * (im->t_end - im->t_begin), im->contacts);
    else
        fprintf(out, "  %3d  %-14s %10.6f %10.4f   (still in contact at the end)\n", i + 1, who,
                im->t_begin, im->v_in);
}

void sim_print_summary(const Sim *sim, const SimSummary *sum, FILE *out) {
    const Engine *e = sim->engine;
    fprintf(out, "scene      %s\n", sim->scene_path);
    /* Time steps and onsets from the session's own count: a complementarity island is time-stepped
     * by its solver, so the integrator's steps and located roots leave it out. */
    char island_steps[128] = "";
    if (sum->engine.complementarity_steps > 0)
        snprintf(island_steps, sizeof island_steps, " (%llu complementarity island steps)",
                 (unsigned long long)sum->engine.complementarity_steps);
    if (sum->engine.complementarity_parallel_islands > 0) /* --threads: islands side by side */
        snprintf(island_steps + strlen(island_steps), sizeof island_steps - strlen(island_steps),
                 " (%llu solved in parallel)",
                 (unsigned long long)sum->engine.complementarity_parallel_islands);
    fprintf(out,
            "simulated  %.6g s with %s, dt %.3g s: %llu time steps%s, %llu integrator steps, "
            "%llu contact onsets, %llu contact ends, %.3f s wall (%.3gx real time)\n",
            sum->t_end, integrator_name(engine_integrator(e)), engine_dt(e),
            (unsigned long long)sum->output_steps, island_steps,
            (unsigned long long)sum->engine.steps, (unsigned long long)sum->contact_onsets,
            (unsigned long long)sum->contact_ends, sum->wall_seconds,
            sum->wall_seconds > 0 ? sum->t_end / sum->wall_seconds : 0.0);
    if (obstacle_count(sim) > 0)
        fprintf(out, "start      height %.6g m (first body, along the first obstacle's normal)\n",
                sum->drop_height);
    else
        fprintf(out, "start      no obstacle: impacts between bodies are measured along the "
                     "contact normal, relative to the other body\n");
    if (sum->impact_count == 0) {
        fprintf(out, "impacts    none\n");
    } else {
        /* A bouncing body makes many ever-smaller impacts; the first ones carry the figures a
         * user compares with the model, the rest are summarised. */
        enum { SHOWN = 10 };
        fprintf(out,
                "impacts    %d (restitution = -v_out / v_in of the centre of mass, relative for "
                "a/b; apex = top of the following flight)\n",
                sum->impact_count);
        fprintf(out, "  %3s  %-14s %10s %10s %10s %11s %11s %12s %8s\n", "#", "body", "t [s]",
                "v_in [m/s]", "v_out [m/s]", "restitution", "apex [m]", "contact [ms]", "vertices");
        for (int i = 0; i < sum->impact_count && i < SHOWN; i++)
            print_impact(sim, i, &sum->impacts[i], out);
        if (sum->impact_count > SHOWN) {
            double r_min = INFINITY, r_max = -INFINITY;
            for (int i = SHOWN; i < sum->impact_count; i++) {
                double r = sum->impacts[i].restitution;
                if (sum->impacts[i].t_end > 0 && isfinite(r)) {
                    r_min = fmin(r_min, r);
                    r_max = fmax(r_max, r);
                }
            }
            fprintf(out, "  ... %d more, restitution %.4f to %.4f; last:\n",
                    sum->impact_count - SHOWN, r_min, r_max);
            print_impact(sim, sum->impact_count - 1, &sum->impacts[sum->impact_count - 1], out);
        }
    }
    if (sim->options.record_path)
        fprintf(out, "recorded   %llu rows to %s\n", (unsigned long long)sum->rows_recorded,
                sim->options.record_path);
    if (sum->recording_failed)
        fprintf(out, "recording  FAILED: %s (rows before the failure are readable)\n",
                sum->recording_error);
}
