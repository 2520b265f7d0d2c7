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
#include <stdlib.h>
#include <string.h>

#include "issim/engine_resolver.h"

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
static void inv_mass_times(const double *inv_block, int bd, const double *j, double *w) {
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

static double dot(const double *a, const double *b, int bd) {
    double acc = 0.0;
    for (int k = 0; k < bd; k++)
        acc += a[k] * b[k];
    return acc;
}

static void rates(const EngineIslandSystem *sys, int i, const double *v, double r[3]);

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

static void apply_impulse(const EngineIslandSystem *sys, int i, const PgsRow *row,
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
static void rates(const EngineIslandSystem *sys, int i, const double *v, double r[3]) {
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
static double normal_rate(const EngineIslandSystem *sys, int i, const double *v) {
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
    for (int i = 0; i < m; i++) {
        if (reuse)
            rows[i].bias = sys->gap[i] / sys->h;
        else
            prepare_row(sys, i, &rows[i]);
        friction_limit(sys, i, &rows[i]);
    }
    start_velocity(sys, rows, v, out);
    int max_sweeps = m <= PGS_SMALL_ROWS ? PGS_SMALL_SWEEPS : PGS_LARGE_SWEEPS;
    if (sys->max_sweeps > 0)
        max_sweeps = sys->max_sweeps;
    double residual = 0.0;
    int sweep = 0;
    while (sweep < max_sweeps) {
        double worst = 0.0; /* squared */
        for (int i = 0; i < m; i++) {
            double change = relax_contact(sys, i, &rows[i], v, out->lambda_n, out->lambda_t);
            worst = change > worst ? change : worst;
        }
        residual = sqrt(worst);
        sweep++;
        if (!(residual > PGS_TOLERANCE))
            break;
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
