/* Dynamics benchmarks (issue 3, part B):
 *   sweep  the rigid bar drop of 000 ch. 6 (bar_drop_run) over 7 angles x 3 speeds: wall time of
 *          the 21 runs on one core (target < 2 s) and the table of results;
 *   pile   a pile of bodies with internal-friction contacts coming to rest: the wall time of a
 *          step with every body awake against a step once they sleep (target < 5%); `pile TOL`
 *          with the pairs' velocity tolerance set to TOL m/s (0: derived from each contact's
 *          equilibrium band, the scene's own setting).
 *   energy the largest rise of a pile's total energy in one step (issue 11).
 *   penalty the mixed pile on its force laws in several integrator configurations side by side
 *          (issue 15).
 *   restitution the pile's impacts, one per shape, against the time step (bench_restitution.c).
 * `issim-bench dynamics [sweep|table|pile|energy|penalty]`; tools/bar_drop_sweep.sh prints the
 * table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "issim/bar_drop.h"
#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/io.h"

static const double sweep_angles[] = {18, 30, 42, 54, 66, 78, 90}; /* 000 6.5's angles, deg */
static const double sweep_speeds[] = {2.5, 3.0, 3.5};              /* m/s, as V11's test */
enum { SWEEP_ANGLES = 7, SWEEP_SPEEDS = 3 };

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

/* The 21 runs; results in out[speed][angle]. Returns the wall time, or -1 on failure. */
static double run_sweep(const BarDropParams *base, BarDropResult out[SWEEP_SPEEDS][SWEEP_ANGLES]) {
    double w0 = issim_wall_time();
    for (int s = 0; s < SWEEP_SPEEDS; s++) {
        for (int a = 0; a < SWEEP_ANGLES; a++) {
            BarDropParams p = *base;
            p.speed = sweep_speeds[s];
            p.angle = sweep_angles[a] * M_PI / 180.0;
            IssimError err;
            if (bar_drop_run(&p, &out[s][a], &err) != ISSIM_OK) {
                fprintf(stderr, "bench: %s\n", err.message);
                return -1.0;
            }
        }
    }
    return issim_wall_time() - w0;
}

static void print_table(const BarDropParams *base, BarDropResult r[SWEEP_SPEEDS][SWEEP_ANGLES]) {
    printf("# rigid bar drop, 000 ch. 6 / Table 6.1: L %.3g m, m %.4g kg, K %.3g N/m, B %.3g "
           "N s/m^2, mu_s %.3g, mu_k %.3g, RK4 dt %.3g s\n",
           base->length, base->mass, base->stiffness, base->damping, base->mu_static,
           base->mu_kinetic, base->dt);
    printf("# speed  angle  tip_vn_out  tip_vt_out  com_vn_out  omega_out  energy_out/in  "
           "impulse_ratio  duration_us\n");
    for (int s = 0; s < SWEEP_SPEEDS; s++)
        for (int a = 0; a < SWEEP_ANGLES; a++) {
            const BarDropResult *x = &r[s][a];
            printf("%7.2f %6.0f %11.4f %11.4f %11.4f %10.3f %14.4f %14.4f %12.1f\n",
                   sweep_speeds[s], sweep_angles[a], x->tip_normal_velocity,
                   x->tip_tangential_velocity, x->com_normal_velocity, x->angular_velocity,
                   x->energy_ratio, x->impulse_ratio, 1e6 * x->duration);
        }
    for (int s = 0; s < SWEEP_SPEEDS; s++) {
        BarDropParams p = *base;
        p.speed = sweep_speeds[s];
        double critical = NAN;
        IssimError err;
        bar_drop_critical_angle(&p, M_PI / 6, 89 * M_PI / 180, 1e-4, &critical, &err);
        printf("# critical angle at %.2f m/s: %.2f deg\n", sweep_speeds[s], critical * 180 / M_PI);
    }
}

static int bench_sweep(bool table) {
    ThingDb *db = load("bar_drop_angle.lua");
    if (!db)
        return 1;
    BarDropParams base;
    IssimError err;
    IssimStatus st = bar_drop_params_from_scene(db, &base, &err);
    thingdb_destroy(db);
    if (st != ISSIM_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    static BarDropResult results[SWEEP_SPEEDS][SWEEP_ANGLES];
    double best = INFINITY;
    int steps = 0;
    for (int rep = 0; rep < 5; rep++) {
        double wall = run_sweep(&base, results);
        if (wall < 0)
            return 1;
        best = fmin(best, wall);
    }
    for (int s = 0; s < SWEEP_SPEEDS; s++)
        for (int a = 0; a < SWEEP_ANGLES; a++)
            steps += results[s][a].steps;
    if (table)
        print_table(&base, results);
    printf("dynamics  bar-drop sweep, 7 angles x 3 speeds, one core: %.1f ms wall (best of 5, "
           "%d RK4 steps)  target < 2 s: %s\n",
           1e3 * best, steps, best < 2.0 ? "met" : "NOT met");
    return 0;
}

/* Mean wall time of `steps` engine steps, s. */
static double time_steps(Engine *e, int steps) {
    IssimError err;
    double w0 = issim_wall_time();
    for (int i = 0; i < steps; i++)
        if (engine_step(e, &err) != ISSIM_OK) {
            fprintf(stderr, "bench: %s\n", err.message);
            return NAN;
        }
    return (issim_wall_time() - w0) / steps;
}

/* The pile settles until every body sleeps; then a step of the sleeping pile is timed against a
 * step of the same pile, same state, with every body awake (a second engine with sleeping off,
 * restored from the first one's frame). */
static int bench_pile(int argc, char **argv) {
    ThingDb *db = load("pile_internal_friction.lua");
    if (!db)
        return 1;
    IssimError err;
    /* `pile TOLERANCE`: the pairs' velocity tolerance instead of the scene's */
    for (int i = 0; argc > 2 && i < 2; i++) {
        const char *pair[] = {"pile_pile.velocity_tolerance", "pile_wall.velocity_tolerance"};
        if (thingdb_set_text(db, pair[i], argv[2], false, &err) != ISSIM_OK) {
            fprintf(stderr, "bench: %s\n", err.message);
            thingdb_destroy(db);
            return 1;
        }
    }
    EngineOptions o = engine_options_default();
    o.asset_dir = scene_path("");
    Engine *e = engine_create(db, &o, &err);
    o.sleep_disabled = true;
    Engine *awake = e ? engine_create(db, &o, &err) : NULL;
    thingdb_destroy(db);
    if (!e || !awake) {
        fprintf(stderr, "bench: %s\n", err.message);
        engine_destroy(e);
        return 1;
    }
    double w0 = issim_wall_time(), t_rest = -1.0;
    while (engine_time(e) < 10.0) {
        if (engine_step(e, &err) != ISSIM_OK) {
            fprintf(stderr, "bench: %s\n", err.message);
            break;
        }
        if (engine_awake_body_count(e) == 0 && t_rest < 0.0)
            t_rest = engine_time(e);
        if (engine_awake_body_count(e) > 0)
            t_rest = -1.0;
        if (t_rest >= 0.0 && engine_time(e) > t_rest + 0.2)
            break; /* asleep and staying asleep */
    }
    double settle_wall = issim_wall_time() - w0;
    EngineStats st = engine_stats(e);
    int n = engine_body_count(e);
    printf("dynamics  pile: %d bodies, internal friction; all asleep at t = %.3f s (%llu sleeps, "
           "%llu wakes on the way), %.1f s wall to settle, %d active contacts\n",
           n, t_rest, (unsigned long long)st.sleeps, (unsigned long long)st.wakes, settle_wall,
           engine_active_contact_count(e));
    if (t_rest < 0.0) {
        printf("dynamics  pile: NOT all asleep by t = %.2f s (%d awake): no sleeping figure\n",
               engine_time(e), engine_awake_body_count(e));
        engine_destroy(e);
        engine_destroy(awake);
        return 1;
    }
    double asleep_step = time_steps(e, 2000);
    double *frame = calloc((size_t)engine_var_count(e), sizeof(double));
    engine_write_vars(e, frame);
    engine_restore_vars(awake, engine_time(e), frame, &err);
    free(frame);
    double awake_step = time_steps(awake, 200);
    printf("dynamics  pile step: %.1f us with every body asleep, %.1f us with every body awake "
           "(same state, %d awake): %.2f%%  target < 5%%: %s\n",
           1e6 * asleep_step, 1e6 * awake_step, engine_awake_body_count(awake),
           100.0 * asleep_step / awake_step, asleep_step < 0.05 * awake_step ? "met" : "NOT met");
    engine_destroy(e);
    engine_destroy(awake);
    return 0;
}

/* Passivity of a pile (issue 11): the scene run step by step (lock-step collision updates),
 * the total energy (kinetic + potential + elastic, friction springs included) read after every
 * step. Prints the largest rise in one step over the whole run and after the pour (from the
 * kinetic energy's peak on), how many steps rose by more than 1e-6 J, and the kinetic energy
 * along the way. `issim-bench dynamics energy [SCENE [DT [SECONDS [CSV]]]]`: CSV (optional)
 * receives t, kinetic, potential, elastic and total energy every 10 steps, for plotting. */
static int bench_energy(int argc, char **argv) {
    const char *name = argc > 2 ? argv[2] : "pile.lua";
    double dt = argc > 3 ? atof(argv[3]) : 2e-4, until = argc > 4 ? atof(argv[4]) : 10.0;
    ThingDb *db = load(name);
    if (!db)
        return 1;
    IssimError err;
    char value[32];
    snprintf(value, sizeof value, "%.17g", dt);
    EngineOptions o = engine_options_default();
    o.asset_dir = scene_path("");
    Engine *e = thingdb_set_text(db, "universe.dt", value, false, &err) == ISSIM_OK
                    ? engine_create(db, &o, &err)
                    : NULL;
    thingdb_destroy(db);
    if (!e) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    FILE *csv = argc > 5 ? fopen(argv[5], "w") : NULL;
    if (csv)
        fprintf(csv, "t,kinetic,potential,elastic,total\n");
    EngineEnergy before = engine_energy(e);
    double worst = 0.0, worst_t = 0.0, worst_after = 0.0, worst_after_t = 0.0;
    double peak_kinetic = before.kinetic, peak_t = 0.0, next_print = 0.5, w0 = issim_wall_time();
    long rises = 0, rises_after = 0, steps = 0, rises_at_wake = 0, rises_at_sleep = 0;
    EngineEnergy worst_from = before, worst_to = before;
    EngineStats stats = engine_stats(e);
    while (engine_time(e) < until - 0.5 * dt) {
        if (engine_step(e, &err) != ISSIM_OK) {
            fprintf(stderr, "bench: %s\n", err.message);
            break;
        }
        EngineEnergy now = engine_energy(e);
        EngineStats st = engine_stats(e);
        double rise = now.total - before.total, t = engine_time(e);
        rises_at_wake += rise > 1e-6 && st.wakes > stats.wakes;
        rises_at_sleep += rise > 1e-6 && st.sleeps > stats.sleeps;
        stats = st;
        if (rise > worst) {
            worst_from = before;
            worst_to = now;
        }
        before = now;
        if (csv && steps % 10 == 0)
            fprintf(csv, "%.6f,%.9g,%.9g,%.9g,%.9g\n", t, now.kinetic, now.potential, now.elastic,
                    now.total);
        steps++;
        if (now.kinetic > peak_kinetic) {
            peak_kinetic = now.kinetic;
            peak_t = t;
            worst_after = 0.0;
            worst_after_t = t;
            rises_after = 0;
        }
        rises += rise > 1e-6;
        rises_after += rise > 1e-6;
        if (rise > worst) {
            worst = rise;
            worst_t = t;
        }
        if (rise > worst_after) {
            worst_after = rise;
            worst_after_t = t;
        }
        if (t >= next_print - 0.5 * dt) {
            printf("dynamics  energy %s t = %4.1f s: kinetic %.4g J, total %.6g J, %d awake\n",
                   name, t, now.kinetic, now.total, engine_awake_body_count(e));
            next_print += 0.5;
        }
    }
    printf("dynamics  energy %s, dt %g s, %g s (%ld steps, %.0f s wall): largest rise in one step "
           "%.3g J (t = %.4f s), %ld steps rose > 1e-6 J; after the pour (kinetic peak %.3g J at "
           "t = %.3f s): largest rise %.3g J (t = %.4f s), %ld steps rose > 1e-6 J  target "
           "<= 1e-6 J: %s\n",
           name, dt, engine_time(e), steps, issim_wall_time() - w0, worst, worst_t, rises,
           peak_kinetic, peak_t, worst_after, worst_after_t, rises_after,
           worst <= 1e-6 ? "met" : "NOT met");
    printf("dynamics  energy %s: largest rise: kinetic %+.3g J, potential %+.3g J, elastic %+.3g "
           "J; %ld of the rising steps woke a body, %ld put one to sleep; %llu sleeps, %llu "
           "wakes, %d awake at the end\n",
           name, worst_to.kinetic - worst_from.kinetic, worst_to.potential - worst_from.potential,
           worst_to.elastic - worst_from.elastic, rises_at_wake, rises_at_sleep,
           (unsigned long long)stats.sleeps, (unsigned long long)stats.wakes,
           engine_awake_body_count(e));
    if (csv)
        fclose(csv);
    engine_destroy(e);
    return 0;
}

/* One configuration of the penalty pile: what it cost and what the physics did. */
typedef struct PenaltyRun {
    double cpu, wall;        /* s, engine_step only (energy and contact reads excluded) */
    double penetration;      /* largest contact depth after any step, m */
    double peak_kinetic;     /* J: the pour's end */
    double worst_rise_after; /* largest one-step rise of the total energy after the peak, J */
    long rises_after;        /* steps after the peak whose total energy rose > 1e-6 J */
    double kinetic_end;      /* J, at the end */
    double first_sleep;      /* s: when the first body fell asleep (-1: none did) */
    double half_asleep;      /* s: when half the bodies were asleep (-1: never) */
    int bodies;
    EngineStats stats;
} PenaltyRun;

static double process_cpu_time(void) {
    return (double)clock() / CLOCKS_PER_SEC; /* the process's CPU time on POSIX */
}

static double deepest_contact(const Engine *e) {
    enum { MAX_REPORTS = 16384 };
    static ContactReport reports[MAX_REPORTS];
    int n = engine_contact_reports(e, reports, MAX_REPORTS);
    double deepest = 0.0;
    for (int i = 0; i < n; i++)
        deepest = fmax(deepest, reports[i].depth);
    return deepest;
}

/* scenes/pile.lua with universe.integrator and universe.dt set from "INTEGRATOR:DT". */
static Engine *penalty_engine(const char *config, IssimError *err) {
    char integrator[32] = "", dt[32] = "";
    if (sscanf(config, "%31[^:]:%31s", integrator, dt) != 2) {
        fprintf(stderr, "bench: configuration \"%s\" is not INTEGRATOR:DT (rk4:2e-4)\n", config);
        return NULL;
    }
    ThingDb *db = load("pile.lua");
    if (!db)
        return NULL;
    EngineOptions o = engine_options_default();
    o.asset_dir = scene_path("");
    o.profile_stages = true; /* two clock reads per stage: nothing against a pile step */
    Engine *e = NULL;
    if (thingdb_set_text(db, "universe.integrator", integrator, false, err) == ISSIM_OK &&
        thingdb_set_text(db, "universe.dt", dt, false, err) == ISSIM_OK)
        e = engine_create(db, &o, err);
    thingdb_destroy(db);
    return e;
}

static int run_penalty(const char *config, double until, PenaltyRun *run) {
    IssimError err = {0};
    Engine *e = penalty_engine(config, &err);
    if (!e) {
        fprintf(stderr, "bench: %s: %s\n", config, err.message);
        return 1;
    }
    *run = (PenaltyRun){.first_sleep = -1.0, .half_asleep = -1.0};
    run->bodies = engine_body_count(e);
    EngineEnergy before = engine_energy(e);
    run->peak_kinetic = before.kinetic;
    while (engine_time(e) < until - 1e-9) {
        double w0 = issim_wall_time(), c0 = process_cpu_time();
        IssimStatus s = engine_step(e, &err);
        run->cpu += process_cpu_time() - c0;
        run->wall += issim_wall_time() - w0;
        if (s != ISSIM_OK) {
            fprintf(stderr, "bench: %s at t = %g s: %s\n", config, engine_time(e), err.message);
            engine_destroy(e);
            return 1;
        }
        EngineEnergy now = engine_energy(e);
        double rise = now.total - before.total;
        before = now;
        if (now.kinetic > run->peak_kinetic) { /* still pouring: the verdict starts later */
            run->peak_kinetic = now.kinetic;
            run->worst_rise_after = 0.0;
            run->rises_after = 0;
        }
        run->worst_rise_after = fmax(run->worst_rise_after, rise);
        run->rises_after += rise > 1e-6;
        run->penetration = fmax(run->penetration, deepest_contact(e));
        int asleep = run->bodies - engine_stats(e).awake_bodies;
        if (asleep > 0 && run->first_sleep < 0.0)
            run->first_sleep = engine_time(e);
        if (2 * asleep >= run->bodies && run->half_asleep < 0.0)
            run->half_asleep = engine_time(e);
    }
    run->kinetic_end = before.kinetic;
    run->stats = engine_stats(e);
    engine_destroy(e);
    return 0;
}

/* The penalty path of the mixed 240-body pile (issue 15), configurations side by side on the
 * same scene and simulated time. `issim-bench dynamics penalty [SECONDS [INTEGRATOR:DT ...]]`;
 * the first configuration is the reference the others' speed-ups are taken against. */
static int bench_penalty(int argc, char **argv) {
    double until = argc > 2 ? atof(argv[2]) : 2.5;
    const char *defaults[] = {"rk4:5e-4", "rk4:2e-4", "rk4:1e-3"};
    const char **configs = argc > 3 ? (const char **)argv + 3 : defaults;
    int count = argc > 3 ? argc - 3 : 3;
    double reference_cpu = 0.0;
    int rc = 0;
    for (int i = 0; i < count; i++) {
        PenaltyRun r;
        if (run_penalty(configs[i], until, &r) != 0) {
            rc = 1;
            continue;
        }
        if (i == 0)
            reference_cpu = r.cpu;
        const EngineStats *st = &r.stats;
        printf("dynamics  penalty pile %-14s %.2f s simulated: %.2f s CPU (%.3fx real time, "
               "%.2fx the first), %.2f s wall; stages (s): collide %.2f, islands %.2f, "
               "integrate %.2f; %llu steps, %llu RHS evaluations, %llu events\n",
               configs[i], until, r.cpu, until / r.cpu, reference_cpu / r.cpu, r.wall,
               st->stage_seconds[ENGINE_STAGE_COLLIDE], st->stage_seconds[ENGINE_STAGE_ISLANDS],
               st->stage_seconds[ENGINE_STAGE_INTEGRATE], (unsigned long long)st->steps,
               (unsigned long long)st->rhs_evals, (unsigned long long)st->root_events);
        printf("dynamics  penalty pile %-14s largest penetration %.3g mm; kinetic energy peak "
               "%.3g J, at the end %.3g J (settles: %s); after the pour the total energy rose "
               "at most %.3g J in one step, %ld steps > 1e-6 J (issue 11 verdict: %s)\n",
               configs[i], 1e3 * r.penetration, r.peak_kinetic, r.kinetic_end,
               r.kinetic_end < 1e-3 * r.peak_kinetic ? "yes" : "NO", r.worst_rise_after,
               r.rises_after, r.rises_after == 0 ? "met" : "NOT met");
        printf("dynamics  penalty pile %-14s asleep: first at %.3g s, half at %.3g s, %d of %d at "
               "the end (-1: never)\n",
               configs[i], r.first_sleep, r.half_asleep, r.bodies - st->awake_bodies, r.bodies);
    }
    return rc;
}

/* The same 21 impacts through the engine (the scene's Hunt-Crossley pair with Goyal friction,
 * CVODE BDF): engine creation included, 1 ms simulated each. */
static int bench_engine_sweep(void) {
    ThingDb *base = load("bar_drop_angle.lua");
    if (!base)
        return 1;
    double w0 = issim_wall_time();
    for (int s = 0; s < SWEEP_SPEEDS; s++) {
        for (int a = 0; a < SWEEP_ANGLES; a++) {
            ThingDb *db = thingdb_clone(base);
            double ang = sweep_angles[a] * M_PI / 180.0;
            char orient[128], pos[64], vel[64];
            snprintf(orient, sizeof orient, "%.17g 0 %.17g 0", cos(0.5 * ang), sin(0.5 * ang));
            snprintf(pos, sizeof pos, "0 0 %.17g", 0.1 * sin(ang) + 1e-6);
            snprintf(vel, sizeof vel, "0 0 %.17g", -sweep_speeds[s]);
            IssimError err;
            thingdb_set_text(db, "bar.orient", orient, false, &err);
            thingdb_set_text(db, "bar.pos", pos, false, &err);
            thingdb_set_text(db, "bar.vel", vel, false, &err);
            Engine *e = engine_create(db, NULL, &err);
            thingdb_destroy(db);
            IssimStatus st = e ? engine_advance(e, 1e-3, &err) : ISSIM_ERR_INVALID;
            engine_destroy(e);
            if (st != ISSIM_OK) {
                fprintf(stderr, "bench: %s\n", err.message);
                thingdb_destroy(base);
                return 1;
            }
        }
    }
    double wall = issim_wall_time() - w0;
    thingdb_destroy(base);
    printf("dynamics  bar-drop sweep through the engine (Hunt-Crossley + Goyal friction, BDF): "
           "%.1f ms wall for the 21 impacts\n",
           1e3 * wall);
    return 0;
}

int bench_dynamics(int argc, char **argv) {
    const char *which = argc > 1 ? argv[1] : "all";
    int rc = 0;
    if (strcmp(which, "all") == 0 || strcmp(which, "sweep") == 0) {
        rc |= bench_sweep(false);
        rc |= bench_engine_sweep();
    }
    if (strcmp(which, "table") == 0)
        rc |= bench_sweep(true);
    if (strcmp(which, "all") == 0 || strcmp(which, "pile") == 0)
        rc |= bench_pile(argc, argv);
    if (strcmp(which, "energy") == 0)
        rc |= bench_energy(argc, argv);
    if (strcmp(which, "penalty") == 0)
        rc |= bench_penalty(argc, argv);
    if (strcmp(which, "restitution") == 0)
        rc |= bench_restitution(argc - 2, argv + 2);
    return rc;
}
