/* Engine benchmarks: steps per second for the point drop with CVODE (BDF, Adams) and RK4, the
 * RK4 step overhead for one body with one active contact, and the wall time of ten bounces. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/io.h"
#include "issim/sim.h"

static const char *scene_path(const char *name) {
    static char path[1024];
    const char *root = getenv("ISSIM_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/scenes/%s", root ? root : ".", name);
    return path;
}

static ThingDb *load(const char *name) {
    ThingDb *db = NULL;
    IssimError err;
    if (scene_load_file(scene_path(name), NULL, &db, &err) != ISSIM_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        return NULL;
    }
    return db;
}

/* Whole point-drop run through the session, as `issim run --headless` does it. */
static int bench_point_drop(const ThingDb *db, int integrator, double dt, double until) {
    SimOptions o = sim_options_default();
    o.until = until;
    o.integrator = integrator;
    o.dt = dt;
    o.quiet = true;
    IssimError err;
    Sim *sim = sim_create_from_db(db, "point_drop.lua", &o, &err);
    if (!sim) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    SimSummary *s = calloc(1, sizeof *s);
    double w0 = issim_wall_time();
    IssimStatus st = sim_run_headless(sim, s, &err);
    double wall = issim_wall_time() - w0;
    if (st != ISSIM_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        free(s);
        sim_destroy(sim);
        return 1;
    }
    printf("engine  point_drop %-5s dt %-6g %5.1f s simulated in %7.3f s wall: %9.0f integrator "
           "steps/s, %8.0f output steps/s, %.0fx real time, first r = %.6f\n",
           integrator_name((IntegratorKind)integrator), dt, until, wall,
           (double)s->engine.steps / wall, (double)s->output_steps / wall, until / wall,
           s->impact_count ? s->impacts[0].restitution : NAN);
    free(s);
    sim_destroy(sim);
    return 0;
}

/* Time to simulate until the 10th impact ends. */
static int bench_ten_bounces(const ThingDb *db, int integrator, double dt) {
    SimOptions o = sim_options_default();
    o.until = 3.0;
    o.integrator = integrator;
    o.dt = dt;
    o.quiet = true;
    IssimError err;
    Sim *sim = sim_create_from_db(db, "point_drop.lua", &o, &err);
    if (!sim)
        return 1;
    SimSummary *s = calloc(1, sizeof *s);
    /* Run once to find when the 10th impact ends, then time a run to exactly that instant. */
    sim_run_headless(sim, s, &err);
    int n = s->impact_count;
    double t10 = n >= 10 ? s->impacts[9].t_end : NAN;
    sim_destroy(sim);
    if (!(t10 > 0)) {
        printf("engine  ten bounces: only %d impacts in 3 s\n", n);
        free(s);
        return 1;
    }
    o.until = t10;
    double best = INFINITY;
    for (int rep = 0; rep < 5; rep++) {
        sim = sim_create_from_db(db, "point_drop.lua", &o, &err);
        double w0 = issim_wall_time();
        sim_run_headless(sim, s, &err);
        double wall = issim_wall_time() - w0;
        best = fmin(best, wall);
        sim_destroy(sim);
    }
    printf("engine  ten bounces (%.3f s simulated) %-5s dt %-6g: %.2f ms wall (best of 5)  "
           "target < 50 ms: %s\n",
           t10, integrator_name((IntegratorKind)integrator), dt, 1e3 * best,
           best < 0.050 ? "met" : "NOT met");
    free(s);
    return 0;
}

/* One body resting on one spring/damper contact: the cost of an RK4 step with the contact
 * force evaluated four times, plus the event checks. */
static int bench_rk4_overhead(const ThingDb *db_in) {
    ThingDb *db = thingdb_clone(db_in);
    IssimError err;
    thingdb_set_text(db, "bar.pos", "0 0 0.0999", false, &err); /* tip 0.1 mm into the floor */
    thingdb_set_text(db, "universe.integrator", "rk4", false, &err);
    thingdb_set_text(db, "universe.dt", "1e-5", false, &err);
    Engine *e = engine_create(db, NULL, &err);
    thingdb_destroy(db);
    if (!e) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    int contacts = engine_active_contact_count(e);
    const int steps = 2000000;
    double w0 = issim_wall_time();
    engine_advance(e, steps * 1e-5, &err);
    double wall = issim_wall_time() - w0;
    EngineStats st = engine_stats(e);
    double per_step = wall / (double)st.steps;
    printf("engine  rk4 step, 1 body, %d active contact: %.0f ns per step (%llu steps, %.2f "
           "rhs/step)  target < 1 us: %s\n",
           contacts, 1e9 * per_step, (unsigned long long)st.steps,
           (double)st.rhs_evals / (double)st.steps, per_step < 1e-6 ? "met" : "NOT met");
    engine_destroy(e);
    return 0;
}

/* What a checkpoint adds to a published frame (the interactive engine thread: step, variables,
 * registry publication, contact reports, checkpoint). The frame is timed without the checkpoint
 * and the checkpoint call on its own, over the same run, so the ratio is not at the mercy of
 * run-to-run noise. Scenes whose models keep no state of their own. */
static int bench_checkpoint(const char *scene, int frames) {
    ThingDb *db = load(scene);
    if (!db)
        return 1;
    IssimError err;
    Engine *e = engine_create(db, NULL, &err);
    thingdb_destroy(db);
    if (!e) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    RegistryDesc rd = registry_desc_default();
    rd.max_vars = engine_var_count(e);
    Registry *reg = registry_create(&rd, &err);
    if (!reg || engine_register_vars(e, reg, &err) != ISSIM_OK ||
        engine_enable_checkpoints(e, rd.history_frames, (size_t)128 << 20, &err) != ISSIM_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        registry_destroy(reg);
        engine_destroy(e);
        return 1;
    }
    double *values = calloc((size_t)engine_var_count(e), sizeof(double));
    ContactReport reports[64];
    double frame_wall = 0.0, checkpoint_wall = 0.0;
    double *times = calloc((size_t)frames, sizeof(double));
    for (int i = 0; i < frames; i++) {
        double w0 = issim_wall_time();
        if (engine_step(e, &err) != ISSIM_OK)
            break;
        times[i] = engine_time(e);
        engine_write_vars(e, values);
        registry_publish(reg, engine_time(e), values);
        int n = engine_contact_reports(e, reports, 64);
        registry_publish_contacts(reg, engine_time(e), reports, n);
        double w1 = issim_wall_time();
        engine_checkpoint(e);
        double w2 = issim_wall_time();
        frame_wall += w1 - w0;
        checkpoint_wall += w2 - w1;
    }
    /* The checkpoint interval includes one clock read, about as long as a small checkpoint on
     * this VM: measure it and take it out (both figures are printed). */
    double clock_cost = 0.0;
    for (int i = 0; i < 10000; i++) {
        double a = issim_wall_time();
        clock_cost += issim_wall_time() - a;
    }
    clock_cost /= 10000.0;
    double raw_share = checkpoint_wall / frame_wall;
    checkpoint_wall = fmax(checkpoint_wall - frames * clock_cost, 0.0);
    double share = checkpoint_wall / frame_wall;
    /* Rewinds as edits do them, to each of the last 40 frames from the newest back (more than
     * one key interval): a key restored and the frames after it replayed. The slowest counts. */
    double worst = 0.0;
    uint64_t replayed = engine_stats(e).replayed_frames;
    for (int i = frames - 1; i >= frames - 40 && i >= 0; i--) {
        double w0 = issim_wall_time();
        if (engine_restore_vars(e, times[i], values, &err) != ISSIM_OK)
            break;
        worst = fmax(worst, issim_wall_time() - w0);
    }
    replayed = engine_stats(e).replayed_frames - replayed;
    printf("engine  checkpoint, %-18s %4d frames, %3d contacts: frame %8.1f us, checkpoint "
           "%6.2f us (%5.2f%%; %5.2f%% with the %.0f ns clock read), %zu kB held; rewind worst "
           "%.2f ms (%llu frames replayed in 40 rewinds)  target < 5%%: %s\n",
           scene, frames, engine_active_contact_count(e), 1e6 * frame_wall / frames,
           1e6 * checkpoint_wall / frames, 100.0 * share, 100.0 * raw_share, 1e9 * clock_cost,
           engine_checkpoint_bytes(e) / 1024, 1e3 * worst, (unsigned long long)replayed,
           share < 0.05 ? "met" : "NOT met");
    free(values);
    free(times);
    registry_destroy(reg);
    engine_destroy(e);
    return 0;
}

/* Where an advance spends its time, stage by stage (EngineOptions.profile_stages). */
static int bench_stages(const char *scene, double until) {
    ThingDb *db = load(scene);
    if (!db)
        return 1;
    IssimError err;
    EngineOptions o = engine_options_default();
    o.profile_stages = true;
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    double w0 = issim_wall_time();
    while (engine_time(e) < until && engine_step(e, &err) == ISSIM_OK) {
    }
    double wall = issim_wall_time() - w0;
    EngineStats st = engine_stats(e);
    printf("engine  stages, %-18s %.2f s simulated in %.3f s:", scene, engine_time(e), wall);
    for (int s = 0; s < ENGINE_STAGE_COUNT; s++)
        printf(" %s %.1f%%", engine_stage_name((EngineStage)s), 100.0 * st.stage_seconds[s] / wall);
    printf("\n");
    engine_destroy(e);
    return 0;
}

int bench_engine(int argc, char **argv) {
    (void)argc;
    (void)argv;
    ThingDb *db = load("point_drop.lua");
    if (!db)
        return 1;
    int rc = 0;
    rc |= bench_point_drop(db, INTEGRATOR_BDF, 1e-3, 10.0);
    rc |= bench_point_drop(db, INTEGRATOR_ADAMS, 1e-3, 10.0);
    rc |= bench_point_drop(db, INTEGRATOR_RK4, 1e-5, 10.0);
    rc |= bench_ten_bounces(db, INTEGRATOR_BDF, 1e-3);
    rc |= bench_ten_bounces(db, INTEGRATOR_RK4, 1e-5);
    rc |= bench_rk4_overhead(db);
    thingdb_destroy(db);
    rc |= bench_checkpoint("point_drop.lua", 2000);
    rc |= bench_checkpoint("box_on_plane.lua", 2000);
    rc |= bench_checkpoint("pile.lua", 300);
    rc |= bench_stages("box_on_plane.lua", 2.0);
    rc |= bench_stages("pile.lua", 0.05);
    return rc;
}
