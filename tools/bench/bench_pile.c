/* Pile benchmarks (issue 15): wall time and largest penetration of scenes/sphere_pile.lua in
 * complementarity mode at N = 100 and N = 1000 spheres, side by side with ODE 0.16's
 * dWorldQuickStep on the same spheres (20 iterations, ERP 0.2, CFM 1e-10, Coulomb friction
 * mu = 1 by ODE's friction pyramid, dContactApprox1), and the real-time factor of the mixed
 * 240-body scenes/pile.lua with its pairs switched to complementarity.
 *
 *   issim-bench sphere_pile [N ...] [--threads=N] [--split] [--pipeline]   (default 100 1000;
 *       --split: EngineOptions.split_large_islands, a large island's PGS on the threads;
 *       --pipeline: EngineOptions.pipeline_collision in the runs of more than one thread)
 *   issim-bench pgs [N]   (default 1000: the PGS solve of the settled pile's large island alone,
 *       the same solve repeated: ns per row and sweep of the velocity and the position pass,
 *       and a hash of the impulses, so a faster solver can be shown to give the same bits)
 *   issim-bench pile [COHERENCE ...] [--seconds=S] [--friction=MU]  (default 0 and 1e-4 m:
 *       coherence off and on; S simulated seconds, default 2; MU the pairs' Coulomb coefficient,
 *       static and kinetic, default 0: the scene's frictionless pairs)
 *
 * Both simulators advance 2000 steps of 1 ms; the wall time covers the steps only. The largest
 * penetration is measured the same way for both, from the sphere centres after every step
 * (sphere-sphere: 2 r - distance; sphere-plane: r - distance), over the whole run. ODE is a
 * benchmark-only dependency (CMake finds it; without it issim runs alone). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "issim/engine.h"
#include "issim/engine_resolver.h"
#include "issim/engine_stats.h"
#include "issim/io.h"

#ifdef ISSIM_BENCH_ODE
#include <ode/ode.h>
#endif

#define PILE_RADIUS 0.02
#define PILE_HALF_WIDTH 0.2
#define PILE_DT 1e-3
#define PILE_STEPS 2000

static const char *source_dir(void) {
    const char *root = getenv("ISSIM_SOURCE_DIR");
    return root ? root : ".";
}

/* The scene's text (malloc'd) with the rest of the first line that starts with `prefix` (NULL:
 * none) replaced by `replacement`: the loader has no scene parameters. */
static char *scene_source(const char *scene, const char *prefix, const char *replacement) {
    char path[1024];
    snprintf(path, sizeof path, "%s/scenes/%s", source_dir(), scene);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 64);
    if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(text);
        return NULL;
    }
    fclose(f);
    text[size] = '\0';
    char *line = prefix ? strstr(text, prefix) : NULL;
    if (line) {
        char *end = strchr(line, '\n');
        size_t len = strlen(replacement), tail = strlen(end);
        if (len <= 48) { /* the 64 spare bytes */
            memmove(line + len, end, tail + 1);
            memcpy(line, replacement, len);
        }
    }
    return text;
}

/* scenes/sphere_pile.lua at n spheres. */
static char *pile_source(int n) {
    char count[48];
    snprintf(count, sizeof count, "local count = %d", n);
    return scene_source("sphere_pile.lua", "local count = ", count);
}

/* EngineOptions.threads of the piles' engines: --threads=N (default 0: the engine's choice). */
static int bench_threads;
static bool bench_split;    /* --split: EngineOptions.split_large_islands */
static bool bench_pipeline; /* --pipeline: EngineOptions.pipeline_collision */

static Engine *engine_from_text(const char *name, const char *text) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string(name, text, strlen(text), NULL, &db, &err) != ISSIM_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        return NULL;
    }
    EngineOptions o = engine_options_default();
    o.profile_stages = true; /* two clock reads per stage: negligible against a pile step */
    o.threads = bench_threads;
    o.split_large_islands = bench_split;
    o.pipeline_collision = bench_pipeline && bench_threads != 1; /* the 1-thread run: serial */
    char assets[1024];
    snprintf(assets, sizeof assets, "%s", source_dir());
    o.asset_dir = assets;
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e)
        fprintf(stderr, "bench: %s\n", err.message);
    return e;
}

typedef struct Centre {
    double x, y, z;
} Centre;

static int by_x(const void *a, const void *b) {
    double d = ((const Centre *)a)->x - ((const Centre *)b)->x;
    return (d > 0) - (d < 0);
}

/* Deepest overlap of n spheres of radius r with each other and with the box (sorted sweep on
 * x: O(n log n)). Reorders c. */
static double deepest_overlap(Centre *c, int n, double r) {
    double deepest = 0.0;
    qsort(c, (size_t)n, sizeof *c, by_x);
    for (int i = 0; i < n; i++) {
        double walls[5] = {r - c[i].z, r - (PILE_HALF_WIDTH - c[i].x),
                           r - (PILE_HALF_WIDTH + c[i].x), r - (PILE_HALF_WIDTH - c[i].y),
                           r - (PILE_HALF_WIDTH + c[i].y)};
        for (int k = 0; k < 5; k++)
            deepest = fmax(deepest, walls[k]);
        for (int j = i + 1; j < n && c[j].x - c[i].x < 2 * r; j++) {
            double dx = c[j].x - c[i].x, dy = c[j].y - c[i].y, dz = c[j].z - c[i].z;
            deepest = fmax(deepest, 2 * r - sqrt(dx * dx + dy * dy + dz * dz));
        }
    }
    return deepest;
}

/* CPU time of this thread, s: the figure that survives a machine shared with other jobs (the
 * wall time is printed too). Both simulators step on this thread; the process clock would also
 * count library threads (OpenBLAS starts its pool before main can limit it). */
static double cpu_time(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct PileResult {
    double wall;        /* s, the steps only */
    double cpu;         /* s, the steps only */
    double penetration; /* m, largest over the run */
    double settled_top; /* m, the highest centre at the end */
    int threads;        /* the engine's narrow-phase threads */
    bool ok;
} PileResult;

static double top_of(const Centre *c, int n) {
    double top = 0.0;
    for (int i = 0; i < n; i++)
        top = fmax(top, c[i].z);
    return top;
}

static PileResult run_issim(int n, Centre *c) {
    PileResult res = {0};
    char *text = pile_source(n);
    Engine *e = text ? engine_from_text("sphere_pile.lua", text) : NULL;
    free(text);
    if (!e)
        return res;
    IssimError err = {0};
    res.threads = engine_threads(e);
    for (int s = 1; s <= PILE_STEPS; s++) {
        double w0 = issim_wall_time(), c0 = cpu_time();
        IssimStatus st = engine_advance(e, s * PILE_DT, &err);
        res.cpu += cpu_time() - c0;
        res.wall += issim_wall_time() - w0;
        if (st != ISSIM_OK) {
            fprintf(stderr, "bench: issim step %d: %s\n", s, err.message);
            engine_destroy(e);
            return res;
        }
        for (int i = 0; i < n; i++) {
            Vec3 p = engine_body_state(e, engine_body_id(e, i)).pos;
            c[i] = (Centre){p.x, p.y, p.z};
        }
        res.penetration = fmax(res.penetration, deepest_overlap(c, n, PILE_RADIUS));
    }
    res.settled_top = top_of(c, n);
    EngineStats st = engine_stats(e);
    printf("  issim: %llu complementarity island steps (%llu on the pool, %llu swept on the pool's "
           "threads), %.2f PGS sweeps a velocity pass, %llu failures; stages (s): collide %.3f, "
           "islands %.3f, resolve %.3f, commit %.3f\n",
           (unsigned long long)st.complementarity_steps,
           (unsigned long long)st.complementarity_parallel_islands,
           (unsigned long long)st.complementarity_team_solves,
           st.complementarity_iterative_solves
               ? (double)st.complementarity_sweeps / (double)st.complementarity_iterative_solves
               : 0.0,
           (unsigned long long)st.complementarity_failures, st.stage_seconds[ENGINE_STAGE_COLLIDE],
           st.stage_seconds[ENGINE_STAGE_ISLANDS], st.stage_seconds[ENGINE_STAGE_RESOLVE],
           st.stage_seconds[ENGINE_STAGE_COMMIT]);
    engine_destroy(e);
    res.ok = true;
    return res;
}

#ifdef ISSIM_BENCH_ODE
typedef struct OdeWorld {
    dWorldID world;
    dJointGroupID contacts;
} OdeWorld;

static void near_callback(void *data, dGeomID a, dGeomID b) {
    const OdeWorld *w = data;
    dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
    dContact contact[4];
    int k = dCollide(a, b, 4, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < k; i++) {
        contact[i].surface.mode = dContactApprox1; /* Coulomb: friction <= mu x normal force */
        contact[i].surface.mu = 1.0;
        dJointID j = dJointCreateContact(w->world, w->contacts, &contact[i]);
        dJointAttach(j, ba, bb);
    }
}

/* The same spheres (positions from the issim scene) in ODE. */
static PileResult run_ode(int n, const Centre *start, Centre *c) {
    PileResult res = {0};
    dInitODE2(0);
    OdeWorld w = {.world = dWorldCreate(), .contacts = dJointGroupCreate(0)};
    dWorldSetGravity(w.world, 0, 0, -9.81);
    dWorldSetERP(w.world, 0.2);
    dWorldSetCFM(w.world, 1e-10);
    dWorldSetQuickStepNumIterations(w.world, 20);
    dSpaceID space = dHashSpaceCreate(0);
    dCreatePlane(space, 0, 0, 1, 0);
    dCreatePlane(space, -1, 0, 0, -PILE_HALF_WIDTH);
    dCreatePlane(space, 1, 0, 0, -PILE_HALF_WIDTH);
    dCreatePlane(space, 0, -1, 0, -PILE_HALF_WIDTH);
    dCreatePlane(space, 0, 1, 0, -PILE_HALF_WIDTH);
    dBodyID *bodies = malloc(sizeof *bodies * (size_t)n);
    double mass = 7850.0 * 4.0 / 3.0 * M_PI * pow(PILE_RADIUS, 3);
    for (int i = 0; i < n; i++) {
        bodies[i] = dBodyCreate(w.world);
        dMass m;
        dMassSetSphereTotal(&m, mass, PILE_RADIUS);
        dBodySetMass(bodies[i], &m);
        dBodySetPosition(bodies[i], start[i].x, start[i].y, start[i].z);
        dGeomSetBody(dCreateSphere(space, PILE_RADIUS), bodies[i]);
    }
    for (int s = 1; s <= PILE_STEPS; s++) {
        double w0 = issim_wall_time(), c0 = cpu_time();
        dSpaceCollide(space, &w, near_callback);
        dWorldQuickStep(w.world, PILE_DT);
        dJointGroupEmpty(w.contacts);
        res.cpu += cpu_time() - c0;
        res.wall += issim_wall_time() - w0;
        for (int i = 0; i < n; i++) {
            const dReal *p = dBodyGetPosition(bodies[i]);
            c[i] = (Centre){p[0], p[1], p[2]};
        }
        res.penetration = fmax(res.penetration, deepest_overlap(c, n, PILE_RADIUS));
    }
    res.settled_top = top_of(c, n);
    free(bodies);
    dJointGroupDestroy(w.contacts);
    dSpaceDestroy(space);
    dWorldDestroy(w.world);
    dCloseODE();
    res.ok = true;
    return res;
}
#endif

/* The starting centres of the issim scene at n spheres. */
static bool start_positions(int n, Centre *c) {
    char *text = pile_source(n);
    Engine *e = text ? engine_from_text("sphere_pile.lua", text) : NULL;
    free(text);
    if (!e)
        return false;
    for (int i = 0; i < n; i++) {
        Vec3 p = engine_body_state(e, engine_body_id(e, i)).pos;
        c[i] = (Centre){p.x, p.y, p.z};
    }
    engine_destroy(e);
    return true;
}

static int bench_sphere_pile(int n) {
    Centre *start = malloc(sizeof *start * (size_t)n), *c = malloc(sizeof *c * (size_t)n);
    if (!start || !c || !start_positions(n, start)) {
        free(start);
        free(c);
        return 1;
    }
    /* --threads=N: that count alone; else 1 thread, then 2 (the final centres compared) */
    int given = bench_threads, counts[2] = {given > 0 ? given : 1, 2};
    PileResult mine = {0};
    Centre *first = malloc(sizeof *first * (size_t)n);
    for (int k = 0; k < (given > 0 ? 1 : 2) && first; k++) {
        bench_threads = counts[k];
        PileResult r = run_issim(n, c);
        printf("sphere_pile N %4d issim  complementarity (pgs)   %8.3f s wall (%.3f s CPU) for "
               "2 s (%.2fx real time), largest penetration %.3g m, top centre %.4f m, %d "
               "thread(s)%s\n",
               n, r.wall, r.cpu, 2.0 / r.wall, r.penetration, r.settled_top, r.threads,
               k == 0           ? ""
               : bench_pipeline ? ", collision pipelined (centres not the serial path's)"
               : memcmp(first, c, sizeof *c * (size_t)n) == 0 ? ", final centres identical to 1 "
                                                                "thread's"
                                                              : ", final centres DIFFER");
        if (k == 0)
            memcpy(first, c, sizeof *c * (size_t)n);
        else
            printf("sphere_pile N %4d threads 2 / 1: wall %.3f\n", n, r.wall / mine.wall);
        if (k == 0 || r.wall < mine.wall)
            mine = r; /* ODE is compared with the faster */
    }
    bench_threads = given;
    free(first);
#ifdef ISSIM_BENCH_ODE
    if (getenv("ISSIM_BENCH_NO_ODE")) { /* profiling issim alone */
        free(start);
        free(c);
        return mine.ok ? 0 : 1;
    }
    PileResult ode = run_ode(n, start, c);
    printf("sphere_pile N %4d ODE    dWorldQuickStep (20 it) %8.3f s wall (%.3f s CPU) for 2 s "
           "(%.2fx real time), largest penetration %.3g m, top centre %.4f m\n",
           n, ode.wall, ode.cpu, 2.0 / ode.wall, ode.penetration, ode.settled_top);
    printf("sphere_pile N %4d ratio  issim / ODE: wall %.3f, CPU %.3f, largest penetration "
           "%.3f\n",
           n, mine.wall / ode.wall, mine.cpu / ode.cpu, mine.penetration / ode.penetration);
#else
    printf("sphere_pile N %4d ODE not found at build time (libode-dev): no comparison\n", n);
#endif
    free(start);
    free(c);
    return mine.ok ? 0 : 1;
}

/* Rewinds of the settled pile to each of its last 40 frames, newest first (a scrubber dragged
 * back), as the interactive engine's edits do: the slowest, and what the keys held. */
static void report_rewinds(Engine *e, int steps) {
    EngineStats before = engine_stats(e);
    size_t held = engine_checkpoint_bytes(e);
    double *values = calloc((size_t)engine_var_count(e), sizeof(double));
    engine_write_vars(e, values); /* used only if a frame had no checkpoint */
    double worst = 0.0;
    IssimError err = {0};
    for (int k = 0; k < 40 && values; k++) {
        double w0 = issim_wall_time();
        if (engine_restore_vars(e, (steps - k) * PILE_DT, values, &err) != ISSIM_OK)
            fprintf(stderr, "bench: rewind: %s\n", err.message);
        worst = fmax(worst, issim_wall_time() - w0);
    }
    free(values);
    EngineStats st = engine_stats(e);
    printf("  checkpoints: %llu keys, %.1f kB a key on average, %.0f kB held for %d frames; 40 "
           "rewinds: worst %.2f ms, %llu frames replayed, %llu restored from a key or replay, %llu "
           "restarted\n",
           (unsigned long long)st.checkpoints, held / 1024.0 / (double)st.checkpoints,
           held / 1024.0, steps, 1e3 * worst,
           (unsigned long long)(st.replayed_frames - before.replayed_frames),
           (unsigned long long)(st.restores - before.restores),
           (unsigned long long)(st.restarts - before.restarts));
}

/* Every PILE_REPORT_STEPS of the mixed pile: the awake bodies, the CPU time of the interval
 * (complementarity islands sleep once settled, issue 15), PGS's sweeps per velocity pass and
 * the largest residual a pass ended with (m/s). */
#define PILE_REPORT_STEPS 250

/* The mixed 240-body pile with every pair switched to complementarity: real-time factor over
 * `seconds` simulated, with the collision world's temporal coherence tolerance `coherence` (m,
 * 0: off). */
static int bench_mixed_pile(double coherence, double seconds, double friction) {
    /* 1 ms steps for the complementarity islands (the scene's 0.2 ms is RK4's for its stiff
     * penalty contacts; universe.dt is fixed during a run: --set universe.dt=1e-3 at start). */
    char universe[64];
    snprintf(universe, sizeof universe, "    dt = 1e-3, collision_coherence = %.3g,", coherence);
    char *text = scene_source("pile.lua", "    dt = ", universe);
    Engine *e = text ? engine_from_text("pile.lua", text) : NULL;
    free(text);
    if (!e)
        return 1;
    IssimError err = {0};
    char mu[32];
    snprintf(mu, sizeof mu, "%.17g", friction);
    const char *edits[][2] = {
        {"pile_pile.resolver", "complementarity"}, {"pile_wall.resolver", "complementarity"},
        {"pile_pile.friction_static", mu},         {"pile_pile.friction_kinetic", mu},
        {"pile_wall.friction_static", mu},         {"pile_wall.friction_kinetic", mu}};
    for (int i = 0; i < (friction > 0.0 ? 6 : 2); i++)
        if (engine_apply_edit(e, edits[i][0], edits[i][1], &err) != ISSIM_OK) {
            fprintf(stderr, "bench: %s\n", err.message);
            engine_destroy(e);
            return 1;
        }
    /* A checkpoint every frame, as the interactive engine keeps them (outside the timing). */
    if (engine_enable_checkpoints(e, 4096, (size_t)128 << 20, &err) != ISSIM_OK)
        fprintf(stderr, "bench: %s\n", err.message);
    int steps = (int)lround(seconds / PILE_DT);
    double wall = 0.0, cpu = 0.0, interval_cpu = 0.0, residual = 0.0;
    EngineStats mark = engine_stats(e);
    uint64_t solves_before = mark.complementarity_iterative_solves;
    /* --friction=MU overrides both coefficients of both pairs; without it, the scene's own */
    char friction_label[48] = "the scene's friction";
    if (friction > 0.0)
        snprintf(friction_label, sizeof friction_label, "friction %g", friction);
    printf("pile (240 mixed bodies) complementarity, coherence %.3g m, %s: awake bodies "
           "/ CPU s / PGS sweeps per solve / largest PGS residual (m/s) of the last %d steps:",
           coherence, friction_label, PILE_REPORT_STEPS);
    for (int s = 1; s <= steps; s++) {
        double w0 = issim_wall_time(), c0 = cpu_time();
        IssimStatus st = engine_advance(e, s * PILE_DT, &err);
        interval_cpu += cpu_time() - c0;
        wall += issim_wall_time() - w0;
        engine_checkpoint(e);
        if (st != ISSIM_OK) {
            fprintf(stderr, "bench: pile step %d: %s\n", s, err.message);
            engine_destroy(e);
            return 1;
        }
        EngineStats now = engine_stats(e);
        if (now.complementarity_iterative_solves > solves_before) /* else a stale residual */
            residual = fmax(residual, now.complementarity_residual);
        solves_before = now.complementarity_iterative_solves;
        if (s % PILE_REPORT_STEPS == 0) {
            uint64_t solves =
                now.complementarity_iterative_solves - mark.complementarity_iterative_solves;
            double sweeps = (double)(now.complementarity_sweeps - mark.complementarity_sweeps);
            printf(" t %.2f: %d / %.3f / %.1f / %.1e;", s * PILE_DT, engine_awake_body_count(e),
                   interval_cpu, solves ? sweeps / (double)solves : 0.0, residual);
            mark = now;
            residual = 0.0;
            cpu += interval_cpu;
            interval_cpu = 0.0;
        }
    }
    cpu += interval_cpu;
    EngineStats st = engine_stats(e);
    printf("\npile (240 mixed bodies) complementarity, dt 1 ms, coherence %.3g m, %s: %.3g s "
           "simulated "
           "in %.3f s wall (%.3f s CPU), %.2fx real time (%.2fx by CPU); stages (s): collide %.3f, "
           "islands %.3f, resolve %.3f, integrate %.3f; %llu sleeps, %llu wakes, %.3g J of "
           "kinetic energy zeroed by sleeping\n",
           coherence, friction_label, seconds, wall, cpu, seconds / wall, seconds / cpu,
           st.stage_seconds[ENGINE_STAGE_COLLIDE], st.stage_seconds[ENGINE_STAGE_ISLANDS],
           st.stage_seconds[ENGINE_STAGE_RESOLVE], st.stage_seconds[ENGINE_STAGE_INTEGRATE],
           (unsigned long long)st.sleeps, (unsigned long long)st.wakes, st.sleep_energy);
    report_rewinds(e, steps);
    engine_destroy(e);
    return 0;
}

/* ===== The PGS solve alone (issue 33 item 2) =====
 *
 * The sphere pile is settled for PGS_SETTLE_STEPS; for the next PGS_TIMED_STEPS steps every
 * solve of an island of PGS_TIMED_ROWS rows or more is repeated PGS_REPEATS times on the same
 * system (the solver keeps nothing between calls but its workspace, which each repeat refills)
 * and timed; the engine gets the first solve's impulses as it would have. */
#define PGS_SETTLE_STEPS 500
#define PGS_TIMED_STEPS 50
#define PGS_TIMED_ROWS 256
#define PGS_REPEATS 10

typedef struct PgsPassTally {
    double seconds;    /* of the timed repeats */
    double row_sweeps; /* rows x sweeps of the timed repeats */
    long long solves, rows;
    int sweeps; /* of the last solve */
} PgsPassTally;

typedef struct PgsTiming {
    PgsPassTally pass[2]; /* 0: velocity (warm started), 1: position */
    uint64_t hash;        /* of every solve's impulses, in order */
    double *scratch;      /* 3 m doubles for the repeats' impulses */
    int scratch_rows;
} PgsTiming;

static IssimStatus timed_pgs(void *user, const EngineIslandSystem *sys, EngineIslandSolution *out,
                             IssimError *err) {
    PgsTiming *t = user;
    const EngineComplementaritySolver *pgs = engine_complementarity_pgs();
    IssimStatus s = pgs->solve(NULL, sys, out, err);
    int m = sys->contacts;
    if (s != ISSIM_OK || m < PGS_TIMED_ROWS)
        return s;
    t->hash = issim_hash_doubles(t->hash, out->lambda_n, (size_t)m);
    t->hash = issim_hash_doubles(t->hash, out->lambda_t, 2 * (size_t)m);
    if (t->scratch_rows < m) {
        free(t->scratch);
        t->scratch = malloc(sizeof(double) * 3 * (size_t)m);
        t->scratch_rows = t->scratch ? m : 0;
        if (!t->scratch)
            return s;
    }
    PgsPassTally *pass = &t->pass[sys->warm_n ? 0 : 1];
    EngineIslandSolution again = {.lambda_n = t->scratch, .lambda_t = t->scratch + m};
    double c0 = cpu_time();
    for (int r = 0; r < PGS_REPEATS; r++) {
        memset(t->scratch, 0, sizeof(double) * 3 * (size_t)m);
        pgs->solve(NULL, sys, &again, err);
    }
    pass->seconds += cpu_time() - c0;
    pass->row_sweeps += (double)PGS_REPEATS * m * again.iterations;
    pass->solves++;
    pass->rows += m;
    pass->sweeps = again.iterations;
    return s;
}

static int bench_pgs(int n) {
    char *text = pile_source(n);
    Engine *e = text ? engine_from_text("sphere_pile.lua", text) : NULL;
    free(text);
    if (!e)
        return 1;
    IssimError err = {0};
    int s = 1;
    for (; s <= PGS_SETTLE_STEPS; s++)
        if (engine_advance(e, s * PILE_DT, &err) != ISSIM_OK)
            break;
    PgsTiming t = {.hash = 1469598103934665603ull};
    static const EngineComplementaritySolver timed = {
        .name = "pgs", .solve = timed_pgs, .sparse = true};
    engine_set_complementarity_solver(e, &timed, &t);
    for (; !err.message[0] && s <= PGS_SETTLE_STEPS + PGS_TIMED_STEPS; s++)
        engine_advance(e, s * PILE_DT, &err);
    engine_destroy(e);
    free(t.scratch);
    if (err.message[0]) {
        fprintf(stderr, "bench: pgs step %d: %s\n", s, err.message);
        return 1;
    }
    static const char *names[2] = {"velocity", "position"};
    for (int p = 0; p < 2; p++) {
        const PgsPassTally *x = &t.pass[p];
        if (x->solves == 0) {
            printf("pgs N %4d %s pass: no island of %d rows or more\n", n, names[p],
                   PGS_TIMED_ROWS);
            continue;
        }
        printf("pgs N %4d %s pass: %lld solves of %.0f rows on average, %.2f ns a row and sweep, "
               "%.1f us a solve (%.2f sweeps)\n",
               n, names[p], x->solves, (double)x->rows / (double)x->solves,
               1e9 * x->seconds / x->row_sweeps, 1e6 * x->seconds / (PGS_REPEATS * x->solves),
               x->row_sweeps / (PGS_REPEATS * (double)x->rows));
    }
    printf("pgs N %4d impulses' hash %016llx\n", n, (unsigned long long)t.hash);
    return 0;
}

int bench_piles(int argc, char **argv) {
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--threads=", 10) == 0)
            bench_threads = atoi(argv[i] + 10);
        else if (strcmp(argv[i], "--split") == 0)
            bench_split = true;
        else if (strcmp(argv[i], "--pipeline") == 0)
            bench_pipeline = true;
    if (strcmp(argv[0], "pile") == 0) { /* pile [COHERENCE...] [--seconds=S] [--threads=N] */
        double seconds = 2.0, friction = 0.0;
        int runs = 0;
        for (int i = 1; i < argc; i++) {
            if (strncmp(argv[i], "--seconds=", 10) == 0)
                seconds = atof(argv[i] + 10);
            if (strncmp(argv[i], "--friction=", 11) == 0)
                friction = atof(argv[i] + 11);
        }
        if (!(seconds > 0.0)) {
            fprintf(stderr, "bench: pile --seconds must be > 0\n");
            return 2;
        }
        for (int i = 1; i < argc; i++)
            if (strncmp(argv[i], "--", 2) != 0) {
                rc |= bench_mixed_pile(atof(argv[i]), seconds, friction);
                runs++;
            }
        /* default: coherence off and 1e-4 m */
        return runs > 0 ? rc
                        : bench_mixed_pile(0.0, seconds, friction) |
                              bench_mixed_pile(1e-4, seconds, friction);
    }
    if (strcmp(argv[0], "pgs") == 0) {
        for (int i = 1; i < argc; i++)
            if (strncmp(argv[i], "--", 2) != 0)
                return bench_pgs(atoi(argv[i]));
        return bench_pgs(1000);
    }
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (strncmp(argv[i], "--", 2) != 0)
                rc |= bench_sphere_pile(atoi(argv[i]));
        return rc;
    }
    rc |= bench_sphere_pile(100);
    return rc | bench_sphere_pile(1000);
}
