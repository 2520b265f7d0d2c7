/* The RESOLVE stage: islands whose contact pairs name resolver = "complementarity" advance by
 * time steps with the scheme of 001 (Hotz et al.) eqs. 1-2:
 *
 *   M (u+ - u) = h f + Jn^T lambda_n + Jt^T lambda_t,     q+ = q + h G(q) u+,
 *
 * where the contact impulses lambda come from a complementarity solver
 * (EngineComplementaritySolver, engine.h). The engine assembles each island's system: M^-1 per
 * body (mass, world inertia), f (gravity, the bodies' forces, applied wrenches, the gyroscopic
 * term -w x I w, and the forces of force-law contacts inside the island, evaluated at the start
 * of the step), per contact the Jacobian blocks of its normal row Jn (separation rate, the
 * convention of engine_contact_jacobian) and tangent rows Jt, and the gaps s = -depth. The dense
 * M and J (what Lemke and Fischer-Newton factor) are assembled only for solvers that ask for
 * them: a pile of a thousand bodies stays O(n + m) per step. Positions follow the new velocities
 * (semi-implicit), the attitude by the exponential-free first-order update renormalised, as
 * 001's time-stepping does. The assembly and the block products are in engine_island_assembly.c.
 *
 * Each step has a velocity pass (gaps clamped at zero) and, when a contact overlaps, a position
 * pass (split impulse: pseudo-velocities that move the bodies out of the overlap and are not
 * kept, frictionless), so a contact discovered late never launches a body.
 *
 * Which solver runs is the pairs' live "solver" property (engine_complementarity_for); the
 * islands are partitioned once per advance (counting sort by island), so many small islands cost
 * no more than one large one. A non-finite row (a NaN normal) or a failed solve stops the
 * advance with the island and the reason; engine_advance keeps the last good state.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "engine_island.h"
#include "issim/task_pool.h"

/* The largest dense system (doubles of M, M^-1, Jn, Jt: 400 MB) the engine assembles for a
 * dense solver; a settled pile of a thousand spheres would need about 2 GB. */
#define DENSE_LIMIT 5e7
/* Overlap an iterative (sparse) solver's island leaves in place (m): the position pass pushes out
 * only what lies deeper (Box2D's linear slop). A pile always has some contact overlapping by
 * rounding; without a slop every step solved twice. Direct solvers keep distances >= 0 exactly
 * (001 2.2, V12): no slop. */
#define PGS_POSITION_SLOP 1e-4

/* Sweeps of an iterative solver in the position pass: an overlap it leaves is pushed out at
 * the next step (a quarter of the pile benchmark's solve time went here at full budget). */
#define POSITION_PASS_SWEEPS 8

/* The gap a row of the position pass may close. With a slop (iterative solvers) every row may
 * close to -slop, a separated one by its whole gap: the pass pushes out the overlaps beyond the
 * slop and moves only the bodies that must give way. Holding every non-overlapping row at its
 * place instead (the direct solvers' rule, no slop: distances >= 0 exactly, V12) spread each
 * push through the whole pile, and the pass cost several times as much (docs/performance.md). */
static double position_gap(double gap, double slop) {
    return slop > 0.0 ? gap + slop : fmin(gap, 0.0);
}

/* ===== Islands ===== */

/* The island a contact belongs to: its first stepped body's, or -1. */
static int contact_island(const IslandIndex *x, const EngineContact *c) {
    if (x->island_of[c->body] >= 0)
        return x->island_of[c->body];
    return c->body_b >= 0 ? x->island_of[c->body_b] : -1;
}

/* Counting sort of `count` items into lists by their island (key < 0: dropped). */
static void bucket(const int *key, int count, int islands, int *start, int *out) {
    memset(start, 0, sizeof(int) * (size_t)(islands + 1));
    for (int i = 0; i < count; i++)
        if (key[i] >= 0)
            start[key[i] + 1]++;
    for (int k = 0; k < islands; k++)
        start[k + 1] += start[k];
    for (int i = 0; i < count; i++)
        if (key[i] >= 0)
            out[start[key[i]]++] = i;
    for (int k = islands; k > 0; k--)
        start[k] = start[k - 1];
    start[0] = 0;
}

/* One pass over the stepped bodies and the contacts. Returns false when out of memory. */
static bool index_islands(Engine *e, IslandIndex *x) {
    int nb = e->model.body_count, nc = e->contact_count;
    IssimArena *a = &e->islands.step_scratch;
    x->island_of = ISSIM_ARENA_ALLOC(a, int, nb);
    x->local = ISSIM_ARENA_ALLOC(a, int, nb);
    x->bodies = ISSIM_ARENA_ALLOC(a, int, nb);
    x->body_start = ISSIM_ARENA_ALLOC(a, int, nb + 1);
    x->candidates = ISSIM_ARENA_ALLOC(a, int, nc);
    x->candidate_start = ISSIM_ARENA_ALLOC(a, int, nb + 1);
    x->forces = ISSIM_ARENA_ALLOC(a, int, nc);
    x->force_start = ISSIM_ARENA_ALLOC(a, int, nb + 1);
    x->rows = ISSIM_ARENA_ALLOC(a, int, nc);
    int *key = ISSIM_ARENA_ALLOC(a, int, nb + nc);
    if (!x->island_of || !x->local || !x->bodies || !x->body_start || !x->candidates ||
        !x->candidate_start || !x->forces || !x->force_start || !x->rows || !key)
        return false;
    x->count = 0;
    for (int b = 0; b < nb; b++)
        x->island_of[b] = x->local[b] = -1;
    for (int i = 0; i < e->islands.stepped_count; i++) { /* roots first: islands numbered by root */
        int b = e->islands.stepped_bodies[i];
        if (e->islands.island_of_body[b] == b)
            x->island_of[b] = x->count++;
    }
    for (int i = 0; i < e->islands.stepped_count; i++) {
        int b = e->islands.stepped_bodies[i];
        x->island_of[b] = x->island_of[e->islands.island_of_body[b]];
    }
    for (int b = 0; b < nb; b++)
        key[b] = x->island_of[b];
    bucket(key, nb, x->count, x->body_start, x->bodies);
    for (int pass = 0; pass < 2; pass++) { /* complementarity candidates, then force laws */
        for (int ci = 0; ci < nc; ci++) {
            const EngineContact *c = &e->contacts[ci];
            bool force_law = e->model.pairs[c->pair].params.resolver == CONTACT_RESOLVER_FORCE_LAW;
            bool wanted = pass == 0 ? !force_law : force_law && c->active;
            key[ci] = wanted ? contact_island(x, c) : -1;
        }
        if (pass == 0)
            bucket(key, nc, x->count, x->candidate_start, x->candidates);
        else
            bucket(key, nc, x->count, x->force_start, x->forces);
    }
    return true;
}

/* Island k's bodies get their velocity offsets in `local` while it is solved (bodies of other
 * islands stay -1: held), and give them back after. */
static void open_island(const Engine *e, IslandIndex *x, int k, bool open) {
    int dim = 0;
    for (int i = x->body_start[k]; i < x->body_start[k + 1]; i++) {
        x->local[x->bodies[i]] = open ? dim : -1;
        dim += e->model.planar ? 3 : 6;
    }
}

/* ===== Solver choice and the step ===== */

/* The solvers a pair's "solver" property names (ContactSolverKind order). A direct solver
 * (Lemke, Fischer-Newton) joins with its row here and its name in contact_vocabulary.c. */
static const EngineComplementaritySolver *solver_of_kind(int kind) {
    switch (kind) {
    case CONTACT_SOLVER_PGS:
        return engine_complementarity_pgs();
    case CONTACT_SOLVER_REFERENCE:
        return engine_complementarity_reference();
    case CONTACT_SOLVER_LEMKE:
        return engine_complementarity_lemke();
    case CONTACT_SOLVER_FISCHER_NEWTON:
        return engine_complementarity_fischer_newton();
    default:
        return NULL;
    }
}

/* The direct solver "auto" takes for small islands; NULL while none is built in. */
static const EngineComplementaritySolver *auto_direct_solver(void) {
    for (int k = 0; k < CONTACT_SOLVER_COUNT; k++) {
        const EngineComplementaritySolver *s = solver_of_kind(k);
        if (s && s->direct)
            return s;
    }
    return NULL;
}

const EngineComplementaritySolver *engine_complementarity_for(int solver_kind, int contacts,
                                                              bool friction) {
    if (solver_kind != CONTACT_SOLVER_AUTO)
        return solver_of_kind(solver_kind);
    const EngineComplementaritySolver *direct = auto_direct_solver();
    int limit = friction ? ENGINE_AUTO_DIRECT_FRICTION_CONTACTS : ENGINE_AUTO_DIRECT_CONTACTS;
    if (direct && contacts <= limit)
        return direct;
    return engine_complementarity_pgs();
}

/* The island's solver: the engine's override, else the first row's pair that names one. */
static const EngineComplementaritySolver *island_solver(const IslandWork *w, int *kind) {
    *kind = CONTACT_SOLVER_AUTO;
    if (w->e->islands.complementarity)
        return w->e->islands.complementarity;
    for (int i = 0; i < w->contact_count && *kind == CONTACT_SOLVER_AUTO; i++)
        *kind = (int)w->e->model.pairs[w->e->contacts[w->contacts[i]].pair].params.solver;
    bool friction = false;
    for (int i = 0; i < w->contact_count && !friction; i++)
        friction = w->rows.mu[i] > 0.0 || w->rows.mu_static[i] > 0.0;
    return engine_complementarity_for(*kind, w->contact_count, friction);
}

static const char *island_name(const IslandWork *w) {
    return w->e->model.bodies[w->bodies[0]].name;
}

/* A solver's answer is used only when every impulse is finite (a NaN would spread through
 * the island's state). */
static bool impulses_finite(int m, const EngineIslandSolution *sol) {
    double total = 0.0;
    for (int i = 0; i < m; i++)
        total += sol->lambda_n[i] + sol->lambda_t[2 * i] + sol->lambda_t[2 * i + 1];
    return isfinite(total);
}

static bool solve_once(const Engine *e, const EngineComplementaritySolver *solver,
                       const EngineIslandSystem *sys, EngineIslandSolution *sol, IssimError *why) {
    memset(sol->lambda_n, 0, sizeof(double) * (size_t)sys->contacts);
    if (sol->lambda_t)
        memset(sol->lambda_t, 0, sizeof(double) * 2 * (size_t)sys->contacts);
    if (solver->solve(e->islands.complementarity ? e->islands.complementarity_user : NULL, sys, sol,
                      why) != ISSIM_OK)
        return false;
    if (impulses_finite(sys->contacts, sol))
        return true;
    issim_error_set(why, ISSIM_ERR_NUMERIC, "it returned non-finite impulses");
    return false;
}

/* A solver the pairs chose that fails (Lemke's ray termination, a Newton stall) hands the step
 * to PGS, which always returns impulses (the fallback to the iterative solver); the
 * failure is counted and logged with the island and the reason. An engine-wide override
 * (engine_set_complementarity_solver) is used as it is: its failure stops the step. */
static IssimStatus run_solver(IslandWork *w, const EngineComplementaritySolver *solver,
                              const EngineIslandSystem *sys, EngineIslandSolution *sol,
                              IssimError *err) {
    Engine *e = w->e;
    IssimError why = {0};
    if (solve_once(e, solver, sys, sol, &why))
        return ISSIM_OK;
    w->tally->failures++;
    const EngineComplementaritySolver *pgs = engine_complementarity_pgs();
    IssimError pgs_why = {0};
    if (!e->islands.complementarity && solver != pgs && solve_once(e, pgs, sys, sol, &pgs_why)) {
        /* logged by the engine thread after the step (islands may be solved on workers) */
        w->tally->fell_back = true;
        issim_error_set(w->tally->note, ISSIM_ERR_NUMERIC,
                        "complementarity solver %s failed on the island of %s (%d bodies, %d "
                        "contacts) at t = %.9g s (%s): PGS solved this step",
                        solver->name, island_name(w), w->body_count, w->contact_count, e->data.t,
                        why.message);
        w->tally->warnings++;
        return ISSIM_OK;
    }
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "complementarity solver %s failed on the island of %s (%d bodies, %d "
                           "contacts) at t = %.9g s: %s%s%s",
                           solver->name, island_name(w), w->body_count, w->contact_count, e->data.t,
                           why.message, pgs_why.message[0] ? "; PGS too: " : "", pgs_why.message);
}

static IssimStatus bad_row(IslandWork *w, int row, IssimError *err) {
    Engine *e = w->e;
    const EngineContact *c = &e->contacts[w->contacts[row]];
    const char *other = c->body_b >= 0
                            ? e->model.bodies[c->body_b].name
                            : thing_name(e->model.db, e->model.obstacles[c->obstacle].thing);
    w->tally->failures++;
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "island of %s (%d bodies) at t = %.9g s: the contact of %s and %s has "
                           "a non-finite normal or depth; the step is refused",
                           island_name(w), w->body_count, e->data.t, e->model.bodies[c->body].name,
                           other ? other : "?");
}

static EngineIslandSystem island_system(IslandWork *w) {
    return (EngineIslandSystem){.h = w->h,
                                .dim = w->dim,
                                .contacts = w->contact_count,
                                .body_dim = w->bd,
                                .mass = w->mat.dense ? w->mat.mass : NULL,
                                .inv_mass = w->mat.dense ? w->mat.inv_mass : NULL,
                                .jn = w->mat.dense ? w->mat.jn : NULL,
                                .jt = w->mat.dense ? w->mat.jt : NULL,
                                .inv_mass_blocks = w->mat.inv_blocks,
                                .blocks = w->mat.blocks,
                                .force = w->rows.force,
                                .velocity = w->rows.velocity,
                                .gap = w->split.gap_velocity,
                                .mu = w->rows.mu,
                                .mu_static = w->rows.mu_static,
                                .contact_id = w->rows.ids,
                                .warm_n = w->rows.warm_n,
                                .warm_t = w->rows.warm_t,
                                .work = w->mat.dense ? NULL : w->mat.work,
                                .work_doubles = w->mat.dense ? 0 : w->mat.work_doubles,
                                .gap_after = island_gap_after,
                                .ctx = w,
                                .pool = w->contact_count >= ENGINE_PARALLEL_SOLVE_ROWS ? w->pool
                                                                                       : NULL};
}

/* Split impulse: pseudo-velocities u_p = M^-1 Jn^T lambda_p that close the overlaps in one step
 * without friction and without staying in the velocities. */
static IssimStatus position_pass(IslandWork *w, const EngineComplementaritySolver *solver,
                                 const EngineIslandSystem *sys, IssimError *err) {
    int n = w->dim;
    EngineIslandSystem push = *sys;
    push.force = w->split.zero;
    push.velocity = w->split.zero;
    push.gap = w->split.gap_position;
    push.mu = w->rows.no_friction;
    push.mu_static = w->rows.no_friction;
    push.warm_n = NULL;
    push.warm_t = NULL;
    push.max_sweeps = POSITION_PASS_SWEEPS;
    push.same_rows = true;
    EngineIslandSolution out = {.lambda_n = w->split.lambda_p, .lambda_t = w->split.lambda_pt};
    if (run_solver(w, solver, &push, &out, err) != ISSIM_OK)
        return ISSIM_ERR_NUMERIC;
    memset(w->rows.rhs, 0, sizeof(double) * (size_t)n);
    island_add_jacobian_transpose(w, w->split.lambda_p, NULL);
    island_apply_inv_mass(w, NULL, w->split.u_position);
    return ISSIM_OK;
}

static void count_iterations(IslandTally *tally, const EngineIslandSolution *sol) {
    tally->iterative_solves++;
    tally->team_solves += sol->threads > 1;
    tally->sweeps += (uint64_t)sol->iterations;
    tally->residual = fmax(tally->residual, sol->residual);
}

static IssimStatus solve_step(IslandWork *w, IssimError *err) {
    int n = w->dim, m = w->contact_count;
    const EngineComplementaritySolver *solver = NULL;
    int kind = CONTACT_SOLVER_AUTO;
    if (m > 0) {
        solver = island_solver(w, &kind);
        if (!solver)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "island of %s: solver \"%s\" is not built in", island_name(w),
                                   contact_solver_name((ContactSolverKind)kind));
        w->mat.dense = !solver->sparse;
        double dense_doubles = 2.0 * n * n + 3.0 * m * n;
        if (w->mat.dense && dense_doubles > DENSE_LIMIT)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "solver %s needs the dense system of the island of %s (%d "
                                   "bodies, %d contacts: %.3g GB); the island is too large for "
                                   "it: choose solver \"pgs\" for its pairs",
                                   solver->name, island_name(w), w->body_count, m,
                                   8e-9 * dense_doubles);
        bool room = w->mat.dense ? island_assemble_dense(w) : island_reserve_work(w);
        if (!room)
            return issim_error_set(err, ISSIM_ERR_NOMEM,
                                   "out of memory for the system of the island of %s",
                                   island_name(w));
    }
    /* (run_solver zeroes the impulses before each solve.) Velocity pass: a separated contact may
     * close by its gap in the step, an overlapping one may not deepen (gap 0). Position pass (split
     * impulse): an overlap found late (a body faster than the collision margin per step) is pushed
     * out by pseudo-velocities that move the bodies without staying in their velocities, so a late
     * discovery never launches a body, as s / h in the velocity pass did (docs/performance.md). */
    bool overlap = false;
    double slop = solver && solver->sparse ? PGS_POSITION_SLOP : 0.0;
    memset(w->split.u_position, 0, sizeof(double) * (size_t)n);
    memset(w->split.zero, 0, sizeof(double) * (size_t)n);
    for (int i = 0; i < m; i++) {
        w->split.gap_velocity[i] = fmax(w->rows.gap[i], 0.0);
        w->split.gap_position[i] = position_gap(w->rows.gap[i], slop);
        w->rows.no_friction[i] = 0.0;
        overlap = overlap || w->rows.gap[i] < -slop;
    }
    EngineIslandSystem sys = island_system(w);
    EngineIslandSolution sol = {.lambda_n = w->rows.lambda_n, .lambda_t = w->rows.lambda_t};
    if (m > 0 && run_solver(w, solver, &sys, &sol, err) != ISSIM_OK)
        return ISSIM_ERR_NUMERIC;
    if (m > 0 && solver->sparse)
        count_iterations(w->tally, &sol);
    island_velocity_after(w, w->rows.lambda_n, w->rows.lambda_t, w->rows.u_next);
    if (overlap && position_pass(w, solver, &sys, err) != ISSIM_OK)
        return ISSIM_ERR_NUMERIC;
    island_integrate_positions(w);
    return ISSIM_OK;
}

/* n doubles of the island's arena; *ok turns false when memory ran out. */
static double *scratch_doubles(IslandWork *w, size_t n, bool *ok) {
    double *p = ISSIM_ARENA_ALLOC(w->scratch, double, n);
    *ok = *ok && p;
    return p;
}

/* Scratch of one island step, from its thread's arena (released when the step ends). */
static bool carve_scratch(IslandWork *w, int max_rows) {
    size_t n = (size_t)w->dim, m = (size_t)max_rows, bd = (size_t)w->bd;
    bool ok = true;
    w->mat.mass_blocks = scratch_doubles(w, n * bd, &ok);
    w->mat.inv_blocks = scratch_doubles(w, n * bd, &ok);
    w->rows.force = scratch_doubles(w, n, &ok);
    w->rows.velocity = scratch_doubles(w, n, &ok);
    w->rows.u_next = scratch_doubles(w, n, &ok);
    w->rows.rhs = scratch_doubles(w, n, &ok);
    w->split.u_position = scratch_doubles(w, n, &ok);
    w->split.zero = scratch_doubles(w, n, &ok);
    w->pose = ISSIM_ARENA_ALLOC(w->scratch, EngineBodyState, n / bd);
    w->after = w->defer_store ? ISSIM_ARENA_ALLOC(w->scratch, EngineBodyState, n / bd) : NULL;
    w->mat.blocks = ISSIM_ARENA_ALLOC(w->scratch, EngineContactBlock, m);
    w->rows.ids = ISSIM_ARENA_ALLOC(w->scratch, uint64_t, m);
    w->rows.order = ISSIM_ARENA_ALLOC(w->scratch, int, 2 * m + 2);
    w->rows.frames = ISSIM_ARENA_ALLOC(w->scratch, Vec3, 3 * m);
    w->rows.gap = scratch_doubles(w, m, &ok);
    w->rows.mu = scratch_doubles(w, m, &ok);
    w->rows.mu_static = scratch_doubles(w, m, &ok);
    w->rows.no_friction = scratch_doubles(w, m, &ok);
    w->rows.warm_n = scratch_doubles(w, m, &ok);
    w->rows.warm_t = scratch_doubles(w, 2 * m, &ok);
    w->rows.lambda_n = scratch_doubles(w, 3 * m, &ok); /* lambda_n, lambda_t contiguous (3m) */
    w->rows.lambda_t = w->rows.lambda_n + m;
    w->split.lambda_p = scratch_doubles(w, 3 * m, &ok); /* lambda_p, lambda_pt contiguous (3m) */
    w->split.lambda_pt = w->split.lambda_p + m;
    w->split.gap_velocity = scratch_doubles(w, m, &ok);
    w->split.gap_position = scratch_doubles(w, m, &ok);
    if (!ok || !w->pose || !w->mat.blocks || !w->rows.ids || !w->rows.order || !w->rows.frames ||
        (w->defer_store && !w->after))
        return false;
    memset(w->rows.force, 0, sizeof(double) * n);
    return true;
}

bool engine_contact_time_stepped(const Engine *e, const EngineContact *c) {
    if (e->model.pairs[c->pair].params.resolver != CONTACT_RESOLVER_COMPLEMENTARITY)
        return false;
    bool a = e->body_data[c->body].resolver == CONTACT_RESOLVER_COMPLEMENTARITY;
    bool b = c->body_b >= 0 && e->body_data[c->body_b].resolver == CONTACT_RESOLVER_COMPLEMENTARITY;
    return a || b;
}

/* A row is active while it carries force or overlaps after the step; onset and end are events
 * as for force laws, and the model's history (friction state, model-owned state) begins and ends
 * with them. Each row keeps its impulse (world) as the next step's warm start. */
static void update_row_activity(IslandWork *w, double t) {
    Engine *e = w->e;
    for (int i = 0; i < w->contact_count; i++) {
        EngineContact *c = &e->contacts[w->contacts[i]];
        const Vec3 *f = w->rows.frames + 3 * i;
        Vec3 friction = vec3_add(vec3_scale(f[1], w->rows.lambda_t[2 * i]),
                                 vec3_scale(f[2], w->rows.lambda_t[2 * i + 1]));
        c->warm_impulse = vec3_mad(friction, w->rows.lambda_n[i], f[0]);
        c->resolved_force = w->rows.lambda_n[i] / w->h;
        c->resolved_friction = vec3_scale(friction, 1.0 / w->h);
        /* The depth after the step, linearised (the solve's own model of it); the exact
         * kinematics only when the activity changes and an event needs them. */
        double depth = -(w->rows.gap[i] + w->h * (island_normal_rate(w, i, w->rows.u_next) +
                                                  island_normal_rate(w, i, w->split.u_position)));
        bool want = w->rows.lambda_n[i] > 0.0 || depth > 0.0;
        if (want == c->active)
            continue;
        ContactKinematics k;
        engine_contact_kinematics(e, e->y, c, t, &k, NULL, NULL);
        EngineEvent ev = engine_contact_event(c, t, -k.depth_rate);
        c->active = want;
        if (want) {
            c->id = ++e->data.next_contact_id;
            c->t_begin = t;
            engine_contact_begin(e, c, &k);
            ev.kind = ENGINE_EVENT_CONTACT_BEGIN;
            /* Against a sleeping body (held in this solve): a landing wakes its island (004
             * App. E.3.1), judged by the approach speed before this step's impulse stopped it. */
            ContactKinematics landing = k;
            landing.depth_rate = -island_normal_rate(w, i, w->rows.velocity);
            engine_wake_on_contact(e, c, &landing, t);
        } else {
            engine_contact_end(e, c);
            c->resolved_force = 0.0;
            c->resolved_friction = vec3(0.0, 0.0, 0.0);
            c->warm_impulse = vec3(0.0, 0.0, 0.0);
            ev.kind = ENGINE_EVENT_CONTACT_END;
            ev.duration = t - c->t_begin;
        }
        ev.contact_id = c->id;
        engine_emit(e, &ev);
    }
}

/* Island k's work record for a step of h, its scratch from `scratch`. */
static IslandWork island_work(Engine *e, const IslandIndex *x, int k, double h, IssimArena *scratch,
                              IslandTally *tally) {
    IslandWork w = {.e = e,
                    .index = x,
                    .island = k,
                    .scratch = scratch,
                    .tally = tally,
                    .body_count = x->body_start[k + 1] - x->body_start[k],
                    .bodies = x->bodies + x->body_start[k],
                    .force_count = x->force_start[k + 1] - x->force_start[k],
                    .forces = x->forces + x->force_start[k],
                    .contacts = x->rows + x->candidate_start[k],
                    .bd = e->model.planar ? 3 : 6,
                    .h = h};
    w.dim = w.body_count * w.bd;
    return w;
}

/* The solve of one time step of an island, at e->data.t, up to its new positions and
 * velocities; its scratch (carved from w->scratch) holds the impulses update_row_activity reads.
 * Writes only the island's bodies' state, its candidate and row lists and its tally, so islands
 * that share no body (island_independent) may run on any threads. */
static IssimStatus island_solve(IslandWork *w, IssimError *err) {
    Engine *e = w->e;
    const IslandIndex *x = w->index;
    int c0 = x->candidate_start[w->island], nc = x->candidate_start[w->island + 1] - c0;
    if (!carve_scratch(w, nc))
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for the island of %s",
                               e->model.bodies[w->bodies[0]].name);
    island_read_poses(w);
    island_order_top_down(w, x->candidates + c0, nc, w->rows.gap);
    int bad = island_assemble_contacts(w, x->rows + c0, x->candidates + c0, nc);
    if (bad == ISLAND_ROWS_NO_MEMORY)
        return issim_error_set(err, ISSIM_ERR_NOMEM,
                               "out of memory for the rows of the island of %s",
                               e->model.bodies[w->bodies[0]].name);
    if (bad >= 0)
        return bad_row(w, bad, err);
    island_assemble_bodies(w);
    island_assemble_force_laws(w);
    IssimStatus s = solve_step(w, err);
    if (s == ISSIM_OK)
        w->tally->steps++;
    return s;
}

/* An island step's counts into the engine's statistics (sums and a maximum: the same whatever
 * the order), and its solver fallback's warning to the log. */
static void add_tally(Engine *e, const IslandTally *t) {
    e->stats.complementarity_steps += t->steps;
    e->stats.complementarity_failures += t->failures;
    e->stats.warnings += t->warnings;
    e->stats.complementarity_iterative_solves += t->iterative_solves;
    e->stats.complementarity_sweeps += t->sweeps;
    e->stats.complementarity_team_solves += t->team_solves;
    e->stats.complementarity_residual = fmax(e->stats.complementarity_residual, t->residual);
    if (t->fell_back)
        issim_log(ISSIM_LOG_WARN, "%s", t->note->message);
}

/* One time step of island k at time t on the engine thread: solve, then the rows' activity
 * (events, contact ids, the contact-state pool, waking: engine-wide, so always here, in island
 * order). Its scratch is released when the step ends. pool (Nullable): lent to the solver of a
 * large island. */
static IssimStatus island_step(Engine *e, const IslandIndex *x, int k, double t, double h,
                               TaskPool *pool, IssimError *err) {
    IssimError note = {0};
    IslandTally tally = {.note = &note};
    IslandWork w = island_work(e, x, k, h, &e->islands.step_scratch, &tally);
    w.pool = pool;
    IssimArenaMark mark = issim_arena_mark(&e->islands.step_scratch);
    e->data.t = t; /* contact kinematics are evaluated at the island's own time */
    IssimStatus s = island_solve(&w, err);
    add_tally(e, &tally);
    if (s == ISSIM_OK)
        update_row_activity(&w, t + h);
    issim_arena_reset(&e->islands.step_scratch, mark);
    return s;
}

/* The length of the first step from t to t_target (the last one ends exactly there). */
static double first_step(const Engine *e, double t, double t_target) {
    double h = fmin(e->model.dt, t_target - t);
    if (t_target - (t + h) < 1e-12 * e->model.dt)
        h = t_target - t;
    return h;
}

/* Every island from t_start to t_target, one island after the other (the serial path). */
static IssimStatus resolve_serial(Engine *e, IslandIndex *x, double t_start, double t_target,
                                  TaskPool *pool, IssimError *err) {
    for (int k = 0; k < x->count; k++) {
        open_island(e, x, k, true);
        for (double t = t_start; t < t_target;) {
            double h = first_step(e, t, t_target);
            IssimStatus s = island_step(e, x, k, t, h, pool, err);
            if (s != ISSIM_OK)
                return s;
            t = (h == t_target - t) ? t_target : t + h;
        }
        open_island(e, x, k, false);
    }
    return ISSIM_OK;
}

/* ===== Islands on several threads (issue 33) =====
 *
 * An advance of one time step solves the independent islands on the pool first, each on one
 * thread into its own scratch (new states included), then walks every island in island order on
 * the engine thread: an independent island's new states go into the engine's state and its rows
 * update their activity, any other island is solved and updated there as on the serial path. So
 * the engine's state at each event is the serial path's too (a listener reads it: sim.c's
 * impacts). An island is independent when its rows and force-law contacts
 * touch only its own bodies, fixed obstacles and awake bodies that no island steps (whose state
 * the RESOLVE stage does not change), and it has no force-law contact inside: then its solve reads
 * nothing another island's step or activity writes, and writes nothing they read, so solving it
 * early changes no bit. An island whose rows reach a body of another island (a candidate the
 * islands' union did not join) or a sleeping body (one a landing may wake) stays in the serial
 * order, and so does the island it reaches. The results are the serial path's to the bit, on any
 * number of threads. */

/* The engine body's island k may read from its rows without ordering: its own, none (an
 * obstacle), or an awake body that no island steps. */
static bool reads_freely(const Engine *e, const IslandIndex *x, int k, int b) {
    if (b < 0 || x->island_of[b] == k)
        return true;
    return x->island_of[b] < 0 && !e->body_data[b].asleep;
}

/* Marks island k and any island its contacts list[0, count) reach as ordered (1). */
static void mark_reach(const Engine *e, const IslandIndex *x, int k, const int *list, int count,
                       unsigned char *ordered) {
    for (int i = 0; i < count; i++) {
        const EngineContact *c = &e->contacts[list[i]];
        int body[2] = {c->body, c->body_b};
        for (int side = 0; side < 2; side++) {
            if (reads_freely(e, x, k, body[side]))
                continue;
            ordered[k] = 1;
            if (x->island_of[body[side]] >= 0)
                ordered[x->island_of[body[side]]] = 1;
        }
    }
}

typedef struct ParallelIslands {
    Engine *e;
    const IslandIndex *x;
    const int *independent; /* island numbers, ascending */
    IslandWork *work;       /* per island: slot k written by the thread that solves k */
    IslandTally *tally;     /* per island, as work */
    IssimError *error;      /* per island: read only where status is not ISSIM_OK */
    IssimStatus *status;    /* per island */
    double h;
} ParallelIslands;

static void solve_independent(void *ctx, int begin, int end, int thread) {
    ParallelIslands *p = ctx;
    for (int i = begin; i < end; i++) {
        int k = p->independent[i];
        p->work[k] =
            island_work(p->e, p->x, k, p->h, &p->e->islands.thread_scratch[thread], &p->tally[k]);
        p->work[k].defer_store = true; /* into the engine's state in island order */
        p->status[k] = island_solve(&p->work[k], &p->error[k]);
    }
}

/* The pool for `threads` threads and its arenas, made once (false: out of memory or threads). */
static bool resolve_pool(Engine *e, int threads) {
    if (e->islands.pool && e->islands.resolve_threads == threads)
        return true;
    engine_resolve_pool_free(e);
    e->islands.thread_scratch = calloc((size_t)threads, sizeof *e->islands.thread_scratch);
    if (!e->islands.thread_scratch)
        return false;
    for (int i = 0; i < threads; i++)
        issim_arena_init(&e->islands.thread_scratch[i]);
    e->islands.resolve_threads = threads;
    e->islands.pool = task_pool_create(threads, NULL);
    return e->islands.pool != NULL;
}

void engine_resolve_pool_free(Engine *e) {
    task_pool_destroy(e->islands.pool);
    for (int i = 0; e->islands.thread_scratch && i < e->islands.resolve_threads; i++)
        issim_arena_free(&e->islands.thread_scratch[i]);
    free(e->islands.thread_scratch);
    e->islands.pool = NULL;
    e->islands.thread_scratch = NULL;
    e->islands.resolve_threads = 0;
}

/* The pool lent to a large island's solver (EngineIslandSystem.pool), or NULL: only when the
 * caller asked for it (EngineOptions.split_large_islands) and chose the thread count. Split
 * sweeps depend on the thread count, and `auto` picks it from the machine's load when the
 * engine is made: lending the pool then would make a scene's results depend on what else ran
 * at the time. */
static TaskPool *solver_pool(const Engine *e) {
    const EngineOptions *o = &e->model.options;
    return o->split_large_islands && o->threads > 1 ? e->islands.pool : NULL;
}

/* The islands' one step of h from t, the independent ones on the pool. */
static IssimStatus resolve_parallel(Engine *e, IslandIndex *x, double t, double h,
                                    IssimError *err) {
    IssimArena *a = &e->islands.step_scratch;
    int n = x->count;
    unsigned char *ordered = ISSIM_ARENA_ALLOC(a, unsigned char, n);
    int *independent = ISSIM_ARENA_ALLOC(a, int, n);
    ParallelIslands p = {.e = e,
                         .x = x,
                         .independent = independent,
                         .work = ISSIM_ARENA_ALLOC(a, IslandWork, n),
                         .tally = ISSIM_ARENA_ALLOC(a, IslandTally, n),
                         .error = ISSIM_ARENA_ALLOC(a, IssimError, n),
                         .status = ISSIM_ARENA_ALLOC(a, IssimStatus, n),
                         .h = h};
    if (!ordered || !independent || !p.work || !p.tally || !p.error || !p.status)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for islands");
    memset(ordered, 0, (size_t)n);
    for (int k = 0; k < n; k++) {
        mark_reach(e, x, k, x->candidates + x->candidate_start[k],
                   x->candidate_start[k + 1] - x->candidate_start[k], ordered);
        mark_reach(e, x, k, x->forces + x->force_start[k],
                   x->force_start[k + 1] - x->force_start[k], ordered);
        /* A force law inside the island is a contact model's code (a plugin, a contact map
         * with its caches) that was never asked to run on two threads at once. */
        if (x->force_start[k + 1] > x->force_start[k])
            ordered[k] = 1;
        /* A large island is solved on the engine thread with the whole pool (its sweeps split
         * over the threads: engine_pgs.c), after the others. */
        if (solver_pool(e) &&
            x->candidate_start[k + 1] - x->candidate_start[k] >= ENGINE_PARALLEL_SOLVE_ROWS)
            ordered[k] = 1;
    }
    int count = 0;
    for (int k = 0; k < n; k++) {
        open_island(e, x, k, true); /* offsets of every island at once: offset_in asks whose */
        p.tally[k] = (IslandTally){.note = &p.error[k]};
        if (!ordered[k])
            independent[count++] = k;
    }
    e->data.t = t; /* contact kinematics are evaluated at the islands' time */
    IssimArenaMark marks[ENGINE_MAX_THREADS];
    for (int i = 0; i < e->islands.resolve_threads; i++)
        marks[i] = issim_arena_mark(&e->islands.thread_scratch[i]);
    task_pool_for_workers(e->islands.pool, count, 1, solve_independent, &p);
    e->stats.complementarity_parallel_islands += (uint64_t)count;
    IssimStatus s = ISSIM_OK;
    for (int k = 0, next = 0; k < n && s == ISSIM_OK; k++) {
        if (next < count && independent[next] == k) {
            next++;
            add_tally(e, &p.tally[k]);
            if ((s = p.status[k]) != ISSIM_OK) {
                *err = p.error[k];
            } else {
                island_store_positions(&p.work[k]);
                update_row_activity(&p.work[k], t + h);
            }
        } else {
            s = island_step(e, x, k, t, h, solver_pool(e), err);
        }
    }
    for (int i = 0; i < e->islands.resolve_threads; i++)
        issim_arena_reset(&e->islands.thread_scratch[i], marks[i]);
    for (int k = 0; k < n; k++)
        open_island(e, x, k, false);
    return s;
}

/* The RESOLVE stage's threads: the engine's option, else the narrow phase's choice. */
static int resolve_threads(const Engine *e) {
    int threads = e->model.options.threads > 0 ? e->model.options.threads : engine_threads(e);
    return threads < ENGINE_MAX_THREADS ? threads : ENGINE_MAX_THREADS;
}

/* Every complementarity island from t_start to t_target by time steps; the index lives in the
 * per-step arena. An advance of one step with two islands or more and more than one thread
 * solves them in parallel; anything else (several steps, whose activity updates interleave
 * with the next step's solves in the serial order; a solver set by the caller) one after the
 * other. */
static IssimStatus resolve_islands(Engine *e, double t_start, double t_target, IssimError *err) {
    IslandIndex x;
    if (!index_islands(e, &x))
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for islands");
    double h = first_step(e, t_start, t_target);
    int threads = resolve_threads(e);
    /* An engine-wide solver (engine_set_complementarity_solver) is the caller's code with the
     * caller's user pointer: it is called from the engine thread only. */
    bool own_solvers = !e->islands.complementarity;
    bool pool = threads > 1 && own_solvers && resolve_pool(e, threads);
    if (h == t_target - t_start && x.count > 1 && pool)
        return resolve_parallel(e, &x, t_start, h, err);
    return resolve_serial(e, &x, t_start, t_target, pool ? solver_pool(e) : NULL, err);
}

IssimStatus engine_resolve_complementarity(Engine *e, double t_start, double t_target,
                                           IssimError *err) {
    double t_saved = e->data.t;
    e->stats.complementarity_residual = 0.0;
    IssimArenaMark mark = issim_arena_mark(&e->islands.step_scratch);
    IssimStatus s = resolve_islands(e, t_start, t_target, err);
    issim_arena_reset(&e->islands.step_scratch, mark);
    e->data.t = t_saved;
    return s;
}

/* ===== The reference solver: projected Gauss-Seidel ===== */

static IssimStatus pgs_solve(void *user, const EngineIslandSystem *sys, EngineIslandSolution *out,
                             IssimError *err) {
    (void)user;
    int n = sys->dim, m = sys->contacts;
    /* A = Jn M^-1 Jn^T and b = Jn (u + h M^-1 f) + s / h, formed once per solve: the free
     * velocity once, each row w_i = Jn_i M^-1 once (O(m n^2 + m^2 n)). */
    enum { PGS_MAX_SWEEPS = 500, STACK_ROWS = 64, STACK_DIM = 384 };
    double residual = 0.0;
    int sweep = 0;
    double stack_a[STACK_ROWS * STACK_ROWS + STACK_ROWS], stack_v[2 * STACK_DIM];
    double *amat = stack_a, *vfree = stack_v;
    double *heap = NULL;
    if (m > STACK_ROWS || n > STACK_DIM) {
        heap = malloc(sizeof(double) * ((size_t)m * (size_t)m + (size_t)m + 2 * (size_t)n));
        if (!heap)
            return issim_error_set(err, ISSIM_ERR_NOMEM, "PGS: out of memory for %d rows", m);
        amat = heap;
        vfree = heap + (size_t)m * (size_t)m + (size_t)m;
    }
    double *bvec = amat + (size_t)m * (size_t)m, *wrow = vfree + n;
    for (int r = 0; r < n; r++) {
        double minv_f = 0.0;
        for (int c = 0; c < n; c++)
            minv_f += sys->inv_mass[r + n * c] * sys->force[c];
        vfree[r] = sys->velocity[r] + sys->h * minv_f;
    }
    for (int i = 0; i < m; i++) {
        double free_rate = 0.0;
        for (int r = 0; r < n; r++) {
            double w = 0.0;
            for (int c = 0; c < n; c++)
                w += sys->jn[i + m * c] * sys->inv_mass[c + n * r];
            wrow[r] = w;
            free_rate += sys->jn[i + m * r] * vfree[r];
        }
        bvec[i] = free_rate + sys->gap[i] / sys->h;
        for (int j = 0; j < m; j++) {
            double acc = 0.0;
            for (int r = 0; r < n; r++)
                acc += wrow[r] * sys->jn[j + m * r];
            amat[i + m * j] = acc;
        }
    }
    for (sweep = 0; sweep < PGS_MAX_SWEEPS; sweep++) {
        residual = 0.0;
        for (int i = 0; i < m; i++) {
            if (!(amat[i + m * i] > 0.0))
                continue; /* a row that moves nothing (both sides held) */
            double wi = bvec[i];
            for (int j = 0; j < m; j++)
                wi += amat[i + m * j] * out->lambda_n[j];
            double next = fmax(0.0, out->lambda_n[i] - wi / amat[i + m * i]);
            residual = fmax(residual, fabs(next - out->lambda_n[i]) * amat[i + m * i]);
            out->lambda_n[i] = next;
        }
        if (residual < 1e-12)
            break;
    }
    free(heap);
    out->iterations = sweep;
    out->residual = residual;
    if (!isfinite(residual))
        return issim_error_set(err, ISSIM_ERR_NUMERIC, "PGS diverged (residual %g)", residual);
    return ISSIM_OK;
}

static const EngineComplementaritySolver reference_solver = {.name = "reference_pgs",
                                                             .solve = pgs_solve};

const EngineComplementaritySolver *engine_complementarity_reference(void) {
    return &reference_solver;
}
