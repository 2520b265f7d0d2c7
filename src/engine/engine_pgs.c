/* Projected Gauss-Seidel with Coulomb friction for complementarity islands (piles): the solver
 * of engine_complementarity_pgs() (engine.h).
 *
 * It solves the velocity-level problem of 001 2.2 (eqs. 6-7: 0 <= lambda_n _|_ Jn u+ + s / h
 * >= 0 with u+ from eq. 2, the linearised distance) extended by friction on the contact frame's
 * tangent rows Jt, the friction cone of Stewart-Trinkle / Anitescu-Potra taken exactly (a disc
 * of radius mu lambda_n, not a pyramid):
 *
 *   per contact i, in turn (Gauss-Seidel), with the current velocities v = u+ (lambda):
 *     lambda_n <- max(0, lambda_n - (Jn_i v + s_i / h) / D_nn)
 *     lambda_t <- lambda_t - Jt_i v / d_t (the impulse that stops the slip), scaled back onto
 *                 the disc |lambda_t| <= mu lambda_n when it leaves it (the contact slips)
 *     v        <- v + M^-1 J_i^T (change of lambda_i)
 *
 * where D = J_i M^-1 J_i^T is the contact's 3 x 3 Delassus block, d_t the mean of its tangent
 * diagonal, and mu is mu_s for a contact
 * that was sticking at the start of the step (slip below PGS_STICK_SPEED) and mu_k for one that
 * was sliding: the static limit holds a contact still, the kinetic one acts while it slides
 * (deciding per sweep instead would drop a lightly loaded contact of a sticking box to mu_k).
 * The radial projection onto the disc is also the sliding contacts' maximum dissipation: at its
 * fixed point an impulse on the rim is opposite the slip. Setting a sliding contact's impulse
 * opposite its current slip at every sweep instead flips it whenever a sweep over-corrects the
 * slip, and a budget of sweeps ends ten times further from the solution (docs/performance.md).
 * Everything is per contact and per body block (EngineIslandSystem.blocks): a sweep costs O(m),
 * memory O(n + m), so a pile of a thousand spheres never forms an n x n or m x m matrix. The
 * previous step's impulses (warm_n, warm_t, matched by the persistent contact ids) start the
 * iteration: a resting pile needs a few sweeps, not hundreds. Small islands iterate to a tight
 * residual (the box on the incline sticks to 1e-6 m over a second); large ones stop after
 * PGS_LARGE_SWEEPS, as ODE's QuickStep does after its iteration count. */
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine_resolver.h"
#include "issim/task_pool.h"

#define PGS_TOLERANCE 1e-7  /* m/s: the largest velocity change of a sweep that counts as done */
#define PGS_SMALL_ROWS 16   /* islands up to this many contacts iterate to the tolerance */
#define PGS_SMALL_SWEEPS 50 /* ... or this many sweeps */
#define PGS_LARGE_SWEEPS 8  /* larger islands: a fixed budget, warm started (ODE: 20, cold) */
/* m/s: a contact slipping slower at the step's start sticks. Not finer than what a large
 * island's 8 sweeps leave (1e-2 m/s residuals while a heap moves): at 1e-5 m/s every contact of
 * a moving heap read as sliding, held only mu_k, slipped again, and a pile with mu_k < mu_s
 * never came to rest (tests/test_complementarity_pile_settles.c). 1 mm/s is also the sleep
 * speed (ENGINE_STEPPED_SLEEP_SPEED). */
#define PGS_STICK_SPEED 1e-3

/* The sweep's helpers, inlined into the relaxation: at -O2 GCC kept rates and apply_impulse out
 * of line (each called from several places), a call and the spilling of the row's pointers for
 * every row of every sweep (docs/performance.md, "The PGS alone, -O3, and no allocation in a
 * step"). */
#define PGS_HOT static inline __attribute__((always_inline))

typedef struct PgsRow {
    double wa[3][6], wb[3][6]; /* M^-1 J^T per body: the velocity change of a unit impulse */
    double dnn, inv_dnn;       /* D_nn and its inverse */
    double dtn[2];             /* D_tn: the tangent rates a unit normal impulse adds */
    /* The tangent block's mean diagonal: the pair of tangent rows is relaxed isotropically
     * (trial parallel to the slip). The full 2 x 2 inverse couples through the contact's lever
     * arm and builds lateral impulses that fight between the contacts of one face, eating the
     * friction disc: a box 0.01 rad below atan(mu_s) then crept instead of sticking. */
    double dtt_scale, inv_dtt;
    double bias; /* s / h */
    double mu;   /* the friction limit of this step: mu_s sticking, mu_k sliding */
} PgsRow;

enum { PGS_ROW_DOUBLES = (int)((sizeof(PgsRow) + sizeof(double) - 1) / sizeof(double)) };

_Static_assert(PGS_ROW_DOUBLES + 2 <= 64, "ENGINE_SOLVER_WORK reserves 64 doubles per row");

/* w = M_b^-1 j^T for one body block. A free body's block is diag(1/m, 1/m, 1/m, I^-1) about
 * its centre of mass (engine.h): 12 products instead of 36. */
PGS_HOT void inv_mass_times(const double *inv_block, int bd, const double *j, double *w) {
    if (bd == 6) {
        for (int r = 0; r < 3; r++) {
            w[r] = inv_block[r + 6 * r] * j[r];
            w[3 + r] = inv_block[(3 + r) + 6 * 3] * j[3] + inv_block[(3 + r) + 6 * 4] * j[4] +
                       inv_block[(3 + r) + 6 * 5] * j[5];
        }
        return;
    }
    for (int r = 0; r < bd; r++) {
        double acc = 0.0;
        for (int c = 0; c < bd; c++)
            acc += inv_block[r + bd * c] * j[c];
        w[r] = acc;
    }
}

PGS_HOT double dot(const double *a, const double *b, int bd) {
    double acc = 0.0;
    for (int k = 0; k < bd; k++)
        acc += a[k] * b[k];
    return acc;
}

PGS_HOT void rates(const EngineIslandSystem *sys, int i, const double *v, double r[3]);

/* The row's M^-1 J^T and the diagonal of its Delassus block. */
static void prepare_row(const EngineIslandSystem *sys, int i, PgsRow *row) {
    const EngineContactBlock *blk = &sys->blocks[i];
    int bd = sys->body_dim;
    double d[3]; /* the Delassus diagonal */
    memset(row->wa, 0, sizeof row->wa);
    memset(row->wb, 0, sizeof row->wb);
    for (int r = 0; r < 3; r++) {
        if (blk->offset_a >= 0)
            inv_mass_times(sys->inv_mass_blocks + (size_t)blk->offset_a * bd, bd, blk->ja[r],
                           row->wa[r]);
        if (blk->offset_b >= 0)
            inv_mass_times(sys->inv_mass_blocks + (size_t)blk->offset_b * bd, bd, blk->jb[r],
                           row->wb[r]);
    }
    for (int r = 0; r < 3; r++)
        d[r] = dot(blk->ja[r], row->wa[r], bd) + dot(blk->jb[r], row->wb[r], bd);
    row->dnn = d[0];
    row->inv_dnn = d[0] > 0.0 ? 1.0 / d[0] : 0.0; /* 0: both sides held, nothing moves */
    row->dtt_scale = 0.5 * (d[1] + d[2]);
    row->inv_dtt = row->dtt_scale > 0.0 ? 1.0 / row->dtt_scale : 0.0;
    for (int r = 1; r < 3; r++)
        row->dtn[r - 1] = dot(blk->ja[r], row->wa[0], bd) + dot(blk->jb[r], row->wb[0], bd);
    row->bias = sys->gap[i] / sys->h;
}

/* mu_s while the contact sticks at the start of the step, mu_k while it slides. */
static void friction_limit(const EngineIslandSystem *sys, int i, PgsRow *row) {
    if (!(sys->mu_static[i] > 0.0 || sys->mu[i] > 0.0)) { /* frictionless: no slip to measure */
        row->mu = 0.0;
        return;
    }
    double r[3];
    rates(sys, i, sys->velocity, r);
    double slip = sqrt(r[1] * r[1] + r[2] * r[2]);
    row->mu = slip > PGS_STICK_SPEED ? sys->mu[i] : sys->mu_static[i];
}

/* v += W lambda for one body (a contact's impulse change, three components). The body
 * dimension is a constant at each call (6 or 3), so the loops unroll. */
static inline void add_body_impulse(const double (*w)[6], const double dl[3], double *v, int bd) {
    for (int k = 0; k < bd; k++)
        v[k] += w[0][k] * dl[0] + w[1][k] * dl[1] + w[2][k] * dl[2];
}

PGS_HOT void apply_impulse(const EngineIslandSystem *sys, int i, const PgsRow *row,
                           const double dl[3], double *v) {
    const EngineContactBlock *blk = &sys->blocks[i];
    bool full = sys->body_dim == 6;
    if (blk->offset_a >= 0) {
        if (full)
            add_body_impulse(row->wa, dl, v + blk->offset_a, 6);
        else
            add_body_impulse(row->wa, dl, v + blk->offset_a, 3);
    }
    if (blk->offset_b >= 0) {
        if (full)
            add_body_impulse(row->wb, dl, v + blk->offset_b, 6);
        else
            add_body_impulse(row->wb, dl, v + blk->offset_b, 3);
    }
}

/* r += j v for one body's three rows. */
static inline void add_body_rates(const double (*j)[6], const double *v, double r[3], int bd) {
    for (int k = 0; k < bd; k++) {
        r[0] += j[0][k] * v[k];
        r[1] += j[1][k] * v[k];
        r[2] += j[2][k] * v[k];
    }
}

/* The contact's normal and tangent rates at velocities v. */
PGS_HOT void rates(const EngineIslandSystem *sys, int i, const double *v, double r[3]) {
    const EngineContactBlock *blk = &sys->blocks[i];
    bool full = sys->body_dim == 6;
    r[0] = r[1] = r[2] = 0.0;
    if (blk->offset_a >= 0) {
        if (full)
            add_body_rates(blk->ja, v + blk->offset_a, r, 6);
        else
            add_body_rates(blk->ja, v + blk->offset_a, r, 3);
    }
    if (blk->offset_b >= 0) {
        if (full)
            add_body_rates(blk->jb, v + blk->offset_b, r, 6);
        else
            add_body_rates(blk->jb, v + blk->offset_b, r, 3);
    }
}

/* The Coulomb disc of radius mu ln: lt stays when inside, else it is scaled back along itself
 * (the radial projection). */
static inline void project_friction(double mu, double ln, double lt[2]) {
    double norm2 = lt[0] * lt[0] + lt[1] * lt[1], limit = mu * ln;
    if (norm2 <= limit * limit)
        return;
    double norm = sqrt(norm2);
    double scale = norm > 0.0 ? limit / norm : 0.0;
    lt[0] *= scale;
    lt[1] *= scale;
}

/* Jn_i v: the contact's separation rate. */
PGS_HOT double normal_rate(const EngineIslandSystem *sys, int i, const double *v) {
    const EngineContactBlock *blk = &sys->blocks[i];
    int bd = sys->body_dim;
    double rate = 0.0;
    if (blk->offset_a >= 0)
        rate += dot(blk->ja[0], v + blk->offset_a, bd);
    if (blk->offset_b >= 0)
        rate += dot(blk->jb[0], v + blk->offset_b, bd);
    return rate;
}

/* max(0, x) inline (fmax is a library call at -O2: its NaN rule keeps it out of line); a NaN
 * gives 0 as fmax(0, NaN) does. */
static inline double non_negative(double x) {
    return x > 0.0 ? x : 0.0;
}

/* The normal row alone (no friction: the position pass, frictionless pairs): a third of the
 * products of the full block. Returns the squared velocity change. */
static double relax_normal(const EngineIslandSystem *sys, int i, const PgsRow *row, double *v,
                           double *ln) {
    const EngineContactBlock *blk = &sys->blocks[i];
    int bd = sys->body_dim;
    double rate = normal_rate(sys, i, v);
    if (ln[i] == 0.0 && rate + row->bias >= 0.0)
        return 0.0; /* separating and unloaded: stays so */
    double next_n = non_negative(ln[i] - (rate + row->bias) * row->inv_dnn);
    double dl = next_n - ln[i];
    ln[i] = next_n;
    for (int k = 0; k < bd; k++) {
        if (blk->offset_a >= 0)
            v[blk->offset_a + k] += row->wa[0][k] * dl;
        if (blk->offset_b >= 0)
            v[blk->offset_b + k] += row->wb[0][k] * dl;
    }
    return dl * dl * row->dnn * row->dnn;
}

/* One contact's update: the normal impulse, then the friction pair at the velocities the new
 * normal impulse gives (its effect on the tangent rates through D_tn, so the rates are read
 * once and the change applied once). Returns the square of its largest velocity change
 * ((m/s)^2: no square root in the sweep). */
static double relax_contact(const EngineIslandSystem *sys, int i, const PgsRow *row, double *v,
                            double *ln, double *lt) {
    if (row->inv_dnn == 0.0)
        return 0.0;
    bool friction =
        row->dtt_scale > 0.0 && (row->mu > 0.0 || lt[2 * i] != 0.0 || lt[2 * i + 1] != 0.0);
    if (!friction)
        return relax_normal(sys, i, row, v, ln);
    /* An unloaded contact that separates (most of a pile's rows within the margin) stays
     * unloaded, and its friction disc has radius 0: the normal rate alone decides it. */
    bool unloaded = ln[i] == 0.0 && lt[2 * i] == 0.0 && lt[2 * i + 1] == 0.0;
    if (unloaded && normal_rate(sys, i, v) + row->bias >= 0.0)
        return 0.0;
    double r[3];
    rates(sys, i, v, r);
    double next_n = non_negative(ln[i] - (r[0] + row->bias) * row->inv_dnn);
    double dl[3] = {next_n - ln[i], 0.0, 0.0};
    ln[i] = next_n;
    double change = dl[0] * dl[0] * row->dnn * row->dnn;
    double slip[2] = {r[1] + row->dtn[0] * dl[0], r[2] + row->dtn[1] * dl[0]};
    double trial[2] = {lt[2 * i] - slip[0] * row->inv_dtt, lt[2 * i + 1] - slip[1] * row->inv_dtt};
    project_friction(row->mu, next_n, trial);
    dl[1] = trial[0] - lt[2 * i];
    dl[2] = trial[1] - lt[2 * i + 1];
    lt[2 * i] = trial[0];
    lt[2 * i + 1] = trial[1];
    double tangent = (dl[1] * dl[1] + dl[2] * dl[2]) * row->dtt_scale * row->dtt_scale;
    apply_impulse(sys, i, row, dl, v);
    return change > tangent ? change : tangent;
}

/* The velocities with the warm-start impulses: v = u + M^-1 (h f + J^T lambda). */
static void start_velocity(const EngineIslandSystem *sys, const PgsRow *rows, double *v,
                           EngineIslandSolution *out) {
    int n = sys->dim, bd = sys->body_dim;
    for (int o = 0; o < n; o += bd) {
        double hf[6];
        for (int k = 0; k < bd; k++)
            hf[k] = sys->h * sys->force[o + k];
        inv_mass_times(sys->inv_mass_blocks + (size_t)o * bd, bd, hf, v + o);
        for (int k = 0; k < bd; k++)
            v[o + k] += sys->velocity[o + k];
    }
    if (!sys->warm_n)
        return;
    for (int i = 0; i < sys->contacts; i++) {
        out->lambda_n[i] = sys->warm_n[i];
        double lt[2] = {sys->warm_t[2 * i], sys->warm_t[2 * i + 1]};
        project_friction(rows[i].mu, out->lambda_n[i], lt);
        out->lambda_t[2 * i] = lt[0];
        out->lambda_t[2 * i + 1] = lt[1];
        double l[3] = {out->lambda_n[i], lt[0], lt[1]};
        apply_impulse(sys, i, &rows[i], l, v);
    }
}

/* Rows [first, last) for this call: prepared, or (reuse: the previous call's, same blocks) with
 * this call's gaps; and their friction limits. */
static void prepare_rows(const EngineIslandSystem *sys, PgsRow *rows, int first, int last,
                         bool reuse) {
    for (int i = first; i < last; i++) {
        if (reuse)
            rows[i].bias = sys->gap[i] / sys->h;
        else
            prepare_row(sys, i, &rows[i]);
        friction_limit(sys, i, &rows[i]);
    }
}

/* One sweep over rows[0, m) in order. Returns the square of its largest velocity change. */
static double sweep_rows(const EngineIslandSystem *sys, const PgsRow *rows, double *v,
                         EngineIslandSolution *out) {
    double worst = 0.0; /* squared */
    for (int i = 0; i < sys->contacts; i++) {
        double change = relax_contact(sys, i, &rows[i], v, out->lambda_n, out->lambda_t);
        worst = change > worst ? change : worst;
    }
    return worst;
}

/* ===== Sweeps split over threads by parts of the island (issue 33) =====
 *
 * Gauss-Seidel is sequential only through the bodies: a row reads and writes the velocities of
 * its two bodies and nothing else. With a pool of T threads the island's moving bodies are cut
 * into T parts of neighbouring bodies (breadth-first over the contact graph from a body at its
 * edge, so each part is a slab of the pile and few rows cross a cut); each sweep relaxes every
 * part's inner rows on its own thread, in the sweep's order, then the rows that cross a cut on
 * the driver. This is Box2D v3's graph colouring (constraint_graph.c) with whole parts for
 * colours: a part's rows share no moving body with another part's, so the parts may run in any
 * order on any thread, and the sweep depends on T, not on the schedule. Colouring single rows
 * (about 15 colours of 200 rows here) loses the top-down order of a pile
 * (island_order_top_down) that carries its weight to the floor in one sweep; each part keeps it,
 * and one synchronisation per sweep is cheap next to a part's hundreds of rows. The parallel
 * sweep is not the serial one (the crossing rows come last), so one thread keeps the serial path.
 * (Levels instead, each row one above the earlier rows of its bodies, would keep the serial sweep
 * to the bit; the 1,000-sphere pile has about 100 levels of 26 rows, a synchronisation every 13
 * rows, which costs more than the rows: docs/performance.md.)
 *
 * The solve runs as one task_pool_for_workers loop of T iterations: iteration 0 drives (the
 * warm start, the sweeps, the crossing rows, the convergence test), the others help. Each stage
 * (the rows' preparation in T ranges, then each sweep's parts) is published in `stage`; member
 * i claims part i first and then any part left (a helper that took every part while the driver
 * published left the driver waiting idle), and the driver waits for the
 * parts the helpers took (`finished`), spinning as Box2D's b2ExecuteMainStage does: a sweep lasts
 * tens of microseconds, a condition variable's wake-up about as long. A helper the scheduler
 * starts late joins the sweep the driver has reached or finds the solve over; the driver never
 * waits for a helper to arrive, only for parts a helper claimed, so a busy machine costs the
 * parallelism, never a deadlock. */

#define PGS_MAX_PARTS 16
#define PGS_SPINS_BEFORE_YIELD 2000 /* a waiting thread's busy polls before it yields the core */
#define PGS_TEAM_DONE UINT32_MAX    /* stage: the solve is over, helpers leave */
#define PGS_STAGE_PREPARE 1u        /* the stage of the rows' preparation (0: none yet) */

typedef struct PgsPlan {
    int parts;
    /* m: part 0's inner rows, ..., part parts-1's, then the rows crossing a cut, each group in
     * the sweep's order; part p is order[start[p], start[p + 1]), the crossing rows
     * order[start[parts], m) */
    int *order;
    int start[PGS_MAX_PARTS + 1];
} PgsPlan;

/* The moving body (index by velocity offset) on one side of a row, or -1. */
static int body_of(int offset, int bd) {
    return offset >= 0 ? offset / bd : -1;
}

/* The bodies' contact graph (rows between two moving bodies) as adjacency lists:
 * adj[adj_start[b], adj_start[b + 1]). */
static void contact_graph(const EngineIslandSystem *sys, int bodies, int *adj_start, int *adj) {
    int bd = sys->body_dim;
    memset(adj_start, 0, sizeof(int) * (size_t)(bodies + 1));
    for (int i = 0; i < sys->contacts; i++) {
        int a = body_of(sys->blocks[i].offset_a, bd), b = body_of(sys->blocks[i].offset_b, bd);
        if (a >= 0 && b >= 0)
            adj_start[a + 1]++, adj_start[b + 1]++;
    }
    for (int k = 0; k < bodies; k++)
        adj_start[k + 1] += adj_start[k];
    int *fill = adj_start + bodies + 1; /* scratch: bodies ints past the starts */
    memcpy(fill, adj_start, sizeof(int) * (size_t)bodies);
    for (int i = 0; i < sys->contacts; i++) {
        int a = body_of(sys->blocks[i].offset_a, bd), b = body_of(sys->blocks[i].offset_b, bd);
        if (a >= 0 && b >= 0)
            adj[fill[a]++] = b, adj[fill[b]++] = a;
    }
}

/* Breadth-first order of every body from `first` (disconnected bodies after, from the lowest
 * unvisited); seen: bodies ints, overwritten. Returns the last body visited. */
static int breadth_first(int bodies, const int *adj_start, const int *adj, int first, int *queue,
                         int *seen) {
    memset(seen, 0, sizeof(int) * (size_t)bodies);
    int head = 0, tail = 0, unvisited = 0;
    seen[first] = 1;
    queue[tail++] = first;
    while (head < bodies) {
        if (head == tail) { /* the next component, from its lowest body */
            while (seen[unvisited])
                unvisited++;
            seen[unvisited] = 1;
            queue[tail++] = unvisited;
        }
        int b = queue[head++];
        for (int k = adj_start[b]; k < adj_start[b + 1]; k++)
            if (!seen[adj[k]]) {
                seen[adj[k]] = 1;
                queue[tail++] = adj[k];
            }
    }
    return queue[bodies - 1];
}

/* Doubles of work past the rows and v that planning a split solve uses (ints, rounded up). */
static size_t plan_doubles(const EngineIslandSystem *sys) {
    size_t m = (size_t)sys->contacts, bodies = (size_t)(sys->dim / sys->body_dim);
    /* order m, adj_start 2 bodies + 1, adj 2m, queue bodies, part_of bodies, row part m */
    return (5 * m + 4 * bodies + 2) / 2 + 1;
}

/* The parts and the rows' order for `parts` threads, in ints (plan_doubles). */
static void plan_parts(const EngineIslandSystem *sys, int parts, int *ints, PgsPlan *plan) {
    int m = sys->contacts, bodies = sys->dim / sys->body_dim, bd = sys->body_dim;
    plan->parts = parts;
    plan->order = ints;
    int *adj_start = ints + m, *adj = adj_start + 2 * bodies + 1, *queue = adj + 2 * m;
    int *part_of = queue + bodies, *row_part = part_of + bodies;
    contact_graph(sys, bodies, adj_start, adj);
    /* from a body at the graph's edge (the last one reached from body 0), the parts are slabs */
    int edge = breadth_first(bodies, adj_start, adj, 0, queue, part_of);
    breadth_first(bodies, adj_start, adj, edge, queue, part_of);
    for (int k = 0; k < bodies; k++)
        part_of[queue[k]] = (int)((long long)k * parts / bodies);
    int count[PGS_MAX_PARTS + 1] = {0};
    for (int i = 0; i < m; i++) {
        int a = body_of(sys->blocks[i].offset_a, bd), b = body_of(sys->blocks[i].offset_b, bd);
        int pa = a >= 0 ? part_of[a] : -1, pb = b >= 0 ? part_of[b] : -1;
        int p = pa < 0 ? pb : pb < 0 || pb == pa ? pa : parts; /* parts: crossing */
        row_part[i] = p < 0 ? 0 : p;                           /* no moving body: any part */
        count[row_part[i]]++;
    }
    plan->start[0] = 0;
    for (int p = 0; p < parts; p++)
        plan->start[p + 1] = plan->start[p] + count[p];
    int fill[PGS_MAX_PARTS + 1];
    memcpy(fill, plan->start, sizeof(int) * (size_t)(parts + 1));
    for (int i = 0; i < m; i++) /* stable: the sweep's order within each group */
        plan->order[fill[row_part[i]]++] = i;
}

/* The team of one split solve. The driver writes everything but stage, taken, finished and
 * part_worst before the loop starts (the pool's lock orders it before the helpers read it)
 * and reads the impulses and velocities after it ends. During a sweep a part's impulses and
 * velocities are written by the thread that claimed it, and read after `finished` (acquire, by
 * the driver) and the next sweep's `stage` (release by the driver, acquire by the helpers).
 * part_worst[p] is written by the thread that runs part p and read by the driver after it. */
typedef struct PgsTeam {
    const EngineIslandSystem *sys;
    PgsRow *rows; /* prepared by the first stage, read by the sweeps */
    bool reuse;   /* prepare_rows' */
    double *v;
    EngineIslandSolution *out;
    PgsPlan plan;
    int max_sweeps;
    int sweeps;      /* driver: sweeps done */
    double residual; /* driver: the last sweep's, m/s */
    /* The running stage: PGS_STAGE_PREPARE prepares the rows, sweep s is PGS_STAGE_PREPARE + s,
     * PGS_TEAM_DONE ends. Stored by the driver (release), read by everyone (acquire). */
    atomic_uint stage;
    /* Per part, the last stage it was claimed for: a thread claims part p of stage s by
     * compare-and-swap from a smaller number, so a part runs once per stage and a thread that
     * read an older stage claims nothing. */
    atomic_uint taken[PGS_MAX_PARTS];
    atomic_int finished; /* parts of the running sweep the helpers finished (release) */
    double part_worst[PGS_MAX_PARTS];
} PgsTeam;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* A wait's poll: busy for a while, then giving the core away (the machine is shared). */
static void spin_wait(int *polls) {
    if (++*polls < PGS_SPINS_BEFORE_YIELD) {
        cpu_relax();
        return;
    }
    *polls = 0;
    sched_yield();
}

/* Relaxes order[first, last); returns the square of its largest velocity change. */
static double relax_rows(PgsTeam *t, int first, int last) {
    double worst = 0.0;
    for (int r = first; r < last; r++) {
        int i = t->plan.order[r];
        double change =
            relax_contact(t->sys, i, &t->rows[i], t->v, t->out->lambda_n, t->out->lambda_t);
        worst = change > worst ? change : worst;
    }
    return worst;
}

/* Part p of a stage: a range of rows prepared, or a part's rows relaxed. */
static void run_part(PgsTeam *t, uint32_t stage, int p) {
    if (stage == PGS_STAGE_PREPARE) {
        long long m = t->sys->contacts, parts = t->plan.parts;
        prepare_rows(t->sys, t->rows, (int)(m * p / parts), (int)(m * (p + 1) / parts), t->reuse);
        return;
    }
    t->part_worst[p] = relax_rows(t, t->plan.start[p], t->plan.start[p + 1]);
}

/* Claims and runs the parts of `stage` still free, member's own first; returns how many this
 * thread ran. */
static int claim_parts(PgsTeam *t, unsigned stage, int member) {
    int ran = 0, parts = t->plan.parts;
    for (int k = 0; k < parts; k++) {
        int p = (member + k) % parts;
        unsigned old = atomic_load_explicit(&t->taken[p], memory_order_relaxed);
        if (old < stage &&
            atomic_compare_exchange_strong_explicit(&t->taken[p], &old, stage, memory_order_relaxed,
                                                    memory_order_relaxed)) {
            run_part(t, stage, p);
            ran++;
        }
    }
    return ran;
}

/* A stage's parts by the driver with the helpers; returns once every part is done. */
static void drive_stage(PgsTeam *t, uint32_t stage) {
    int polls = 0;
    atomic_store_explicit(&t->finished, 0, memory_order_relaxed);
    atomic_store_explicit(&t->stage, stage, memory_order_release);
    int mine = claim_parts(t, stage, 0);
    while (atomic_load_explicit(&t->finished, memory_order_acquire) != t->plan.parts - mine)
        spin_wait(&polls);
}

/* One sweep by the driver: the parts with the helpers, then the crossing rows. Returns its
 * squared largest change. */
static double drive_sweep(PgsTeam *t, uint32_t sweep) {
    int parts = t->plan.parts;
    drive_stage(t, PGS_STAGE_PREPARE + sweep);
    double worst = relax_rows(t, t->plan.start[parts], t->sys->contacts);
    for (int p = 0; p < parts; p++) /* a maximum: the same in any order */
        worst = t->part_worst[p] > worst ? t->part_worst[p] : worst;
    return worst;
}

static void drive_solve(PgsTeam *t) {
    drive_stage(t, PGS_STAGE_PREPARE);
    start_velocity(t->sys, t->rows, t->v, t->out);
    t->sweeps = 0;
    t->residual = 0.0;
    while (t->sweeps < t->max_sweeps) {
        t->residual = sqrt(drive_sweep(t, (uint32_t)t->sweeps + 1));
        t->sweeps++;
        if (!(t->residual > PGS_TOLERANCE))
            break;
    }
    atomic_store_explicit(&t->stage, PGS_TEAM_DONE, memory_order_release);
}

static void help_solve(PgsTeam *t, int member) {
    int polls = 0;
    for (;;) {
        unsigned stage = atomic_load_explicit(&t->stage, memory_order_acquire);
        if (stage == PGS_TEAM_DONE)
            return;
        int ran = stage == 0 ? 0 : claim_parts(t, stage, member);
        if (ran > 0) {
            atomic_fetch_add_explicit(&t->finished, ran, memory_order_release);
            polls = 0;
        } else {
            spin_wait(&polls);
        }
    }
}

static void team_member(void *ctx, int begin, int end, int worker) {
    (void)worker;
    for (int r = begin; r < end; r++) {
        if (r == 0)
            drive_solve(ctx);
        else
            help_solve(ctx, r);
    }
}

/* The pool's threads (at most PGS_MAX_PARTS) when the solve is large enough to share, else 1. */
static int team_threads(const EngineIslandSystem *sys) {
    int threads = task_pool_threads(sys->pool);
    if (!sys->pool || threads < 2 || sys->contacts < ENGINE_PARALLEL_SOLVE_ROWS)
        return 1;
    return threads < PGS_MAX_PARTS ? threads : PGS_MAX_PARTS;
}

/* The solve from the rows' preparation on `threads` threads of the pool; false when spare has
 * no room (the serial solve then). */
static bool team_solve(const EngineIslandSystem *sys, int threads, PgsRow *rows, bool reuse,
                       double *v, EngineIslandSolution *out, double *spare, size_t spare_doubles,
                       int max_sweeps, int *sweeps, double *residual) {
    if (spare_doubles < plan_doubles(sys))
        return false;
    PgsTeam t = {
        .sys = sys, .rows = rows, .reuse = reuse, .v = v, .out = out, .max_sweeps = max_sweeps};
    plan_parts(sys, threads, (int *)spare, &t.plan);
    atomic_init(&t.stage, 0); /* a helper that comes first waits */
    for (int p = 0; p < PGS_MAX_PARTS; p++)
        atomic_init(&t.taken[p], 0);
    atomic_init(&t.finished, 0);
    task_pool_for_workers(sys->pool, threads, 1, team_member, &t);
    *sweeps = t.sweeps;
    *residual = t.residual;
    return true;
}

static IssimStatus pgs_friction_solve(void *user, const EngineIslandSystem *sys,
                                      EngineIslandSolution *out, IssimError *err) {
    (void)user;
    int m = sys->contacts;
    size_t need = (size_t)m * PGS_ROW_DOUBLES + (size_t)sys->dim;
    double *heap = NULL, *work = sys->work;
    if (!work || sys->work_doubles < need) {
        work = heap = malloc(sizeof(double) * need);
        if (!heap)
            return issim_error_set(err, ISSIM_ERR_NOMEM, "PGS: out of memory for %d rows", m);
    }
    PgsRow *rows = (PgsRow *)work;
    double *v = work + (size_t)m * PGS_ROW_DOUBLES;
    bool reuse = sys->same_rows && !heap; /* the rows of the previous call are in work */
    int max_sweeps = m <= PGS_SMALL_ROWS ? PGS_SMALL_SWEEPS : PGS_LARGE_SWEEPS;
    if (sys->max_sweeps > 0)
        max_sweeps = sys->max_sweeps;
    double residual = 0.0;
    int sweep = 0;
    int threads = heap ? 1 : team_threads(sys);
    out->threads = 1;
    if (threads > 1 && team_solve(sys, threads, rows, reuse, v, out, v + sys->dim,
                                  sys->work_doubles - need, max_sweeps, &sweep, &residual)) {
        out->threads = threads;
    } else {
        prepare_rows(sys, rows, 0, m, reuse);
        start_velocity(sys, rows, v, out);
        while (sweep < max_sweeps) {
            residual = sqrt(sweep_rows(sys, rows, v, out));
            sweep++;
            if (!(residual > PGS_TOLERANCE))
                break;
        }
    }
    free(heap);
    out->iterations = sweep;
    out->residual = residual;
    if (!isfinite(residual)) /* NaN impulses the engine refuses itself (run_solver) */
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "PGS diverged after %d sweeps (residual %g m/s)", sweep, residual);
    return ISSIM_OK;
}

static const EngineComplementaritySolver pgs_solver = {
    .name = "pgs", .solve = pgs_friction_solve, .sparse = true};

const EngineComplementaritySolver *engine_complementarity_pgs(void) {
    return &pgs_solver;
}
