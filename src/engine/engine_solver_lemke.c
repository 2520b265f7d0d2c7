/* The complementarity solver of 001 2.2: Lemke's algorithm (src/lcp) inside the fixpoint
 * iteration that keeps the contact distances after the step non-negative, with Coulomb
 * friction by a polyhedral cone (Stewart and Trinkle 1996; Anitescu and Potra 1997; 001 ref. [5]).
 *
 * Per island and time step: A = N^T J^T M^-1 J N and, for the trial velocities u' (first the
 * free velocities u + h M^-1 f_ext), nu = -delta(s') + h N^T J^T u' with delta(s') from the
 * engine's gap_after (the distances after a trial step), b = N^T J^T (u + h M^-1 f_ext) - nu / h;
 * then f <- LCP(A, b) (eq. 7, impulses h f), u' <- u + h M^-1 (f_ext + J N f) (eq. 2), until
 * b settles (001 stops on |f - f'| < eps; f need not be unique, b is). Each LCP after the
 * first starts from the previous one's basis (usually no pivot at all).
 *
 * With friction (a contact whose pair has mu > 0) the LCP grows, per contact, the impulses
 * beta_k >= 0 along d = 8 tangent directions D_k and the sliding speed gamma:
 *
 *   0 <= lambda_n _|_ Jn u' + b_n               >= 0    (the normal rows above)
 *   0 <= beta      _|_ D^T Jt u' + e gamma       >= 0    (sliding opposes the friction)
 *   0 <= gamma     _|_ mu lambda_n - e^T beta    >= 0    (inside the cone, or sliding)
 *
 * with u' = u + M^-1 (h f_ext + Jn^T lambda_n + Jt^T D beta): Anitescu and Potra show Lemke
 * solves it. The directions start at the contact's free sliding direction, so a sliding
 * contact's friction is exactly opposite its velocity (the pyramid's error only narrows the
 * sticking region, by at most 1 - cos(pi / 8) = 8%). mu is the static coefficient while the
 * contact's tangential speed at the start of the step is below STICK_SPEED, the kinetic one
 * above.
 *
 * A Lemke failure (ray termination, pivot limit, a result that does not verify) or a fixpoint
 * that does not settle is ISSIM_ERR_NUMERIC: the engine keeps the last good state and names the
 * island. Memory: one allocation per solve for the island's matrices and the LCP workspace
 * (O(N^2 + n N) doubles, N = m or 10 m with friction); Lemke itself allocates nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_solver_direct.h"

#define SOLVER "lemke"

enum { FIXPOINT_MAX_ITERATIONS = 25, FRICTION_DIRECTIONS = 8 };
/* |b - b_prev| below FIXPOINT_TOL |b| + FIXPOINT_FLOOR ends the fixpoint iteration (b in m/s;
 * the floor is round-off: 1e-15 m of distance in a 1 ms step). */
#define FIXPOINT_TOL 1e-10
#define FIXPOINT_FLOOR 1e-12
/* Tangential speed (m/s) at the start of a step below which a contact uses the static
 * coefficient. */
#define STICK_SPEED 1e-4

/* The LCP of one step: the normal rows only, or the friction cone's rows too. */
typedef struct StepLcp {
    int rows;         /* impulse unknowns: m, or m (1 + d) with friction */
    int size;         /* rows, or rows + m (the gammas) */
    double *g;        /* rows x n, column-major: Jn, then the direction rows D_k^T Jt */
    double *mob;      /* n x rows: M^-1 G^T (the normal part is DirectIsland.mobility) */
    double *matrix;   /* size x size */
    double *q;        /* size */
    double *z;        /* size */
    double *dir;      /* 2 m d: cos, sin of each contact's directions in its (t1, t2) frame */
    LcpWorkspace *ws; /* the thread's DirectMemory's, as the arrays */
    LcpBasis *basis;
    bool *warm; /* size: the basis handed to Lemke, for the failure dump */
} StepLcp;

static bool has_friction(const EngineIslandSystem *sys) {
    for (int i = 0; i < sys->contacts; i++)
        if (sys->mu[i] > 0.0 || sys->mu_static[i] > 0.0)
            return true;
    return false;
}

static IssimStatus step_lcp_alloc(StepLcp *s, const DirectIsland *d, bool friction,
                                  IssimError *err) {
    size_t n = (size_t)d->n, m = (size_t)d->m, dd = friction ? FRICTION_DIRECTIONS : 0;
    *s = (StepLcp){.rows = (int)(m * (1 + dd)), .size = (int)(m * (1 + dd) + (friction ? m : 0))};
    size_t rows = (size_t)s->rows, size = (size_t)s->size;
    size_t doubles = 2 * rows * n + size * size + 2 * size + 2 * m * dd + 1;
    DirectMemory *mem = direct_memory();
    double *p = mem ? direct_memory_block(&mem->step, &mem->step_bytes,
                                          sizeof(double) * doubles + size * sizeof(bool))
                    : NULL;
    s->ws = mem ? direct_memory_workspace(&mem->step_ws, s->size, err) : NULL;
    s->basis = mem ? direct_memory_basis(&mem->basis, s->size, err) : NULL;
    if (!p || !s->ws || !s->basis)
        return issim_error_set(err, ISSIM_ERR_NOMEM, SOLVER ": out of memory for %d unknowns",
                               s->size);
    memset(p, 0, sizeof(double) * doubles + size * sizeof(bool)); /* as a fresh calloc */
    s->warm = (bool *)(p + doubles);
    s->g = p;
    s->mob = s->g + rows * n;
    s->matrix = s->mob + rows * n;
    s->q = s->matrix + size * size;
    s->z = s->q + size;
    s->dir = s->z + size;
    return ISSIM_OK;
}

/* The tangential velocity of contact i, (t1, t2) components, for the island velocity u. */
static double tangential(const DirectIsland *d, int i, const double *u, double *vt) {
    const EngineIslandSystem *sys = d->sys;
    vt[0] = vt[1] = 0.0;
    for (int r = 0; r < d->n; r++)
        for (int k = 0; k < 2; k++)
            vt[k] += sys->jt[2 * i + k + (size_t)2 * d->m * r] * u[r];
    return hypot(vt[0], vt[1]);
}

/* Directions of contact i: evenly spaced from the direction opposing its free sliding velocity
 * (u + h M^-1 f) in the (t1, t2) frame of the engine's Jt rows. */
static void contact_directions(const DirectIsland *d, StepLcp *s, int i) {
    double vt[2];
    double speed = tangential(d, i, d->u_free, vt);
    double start = speed > 0.0 ? atan2(-vt[1], -vt[0]) : 0.0;
    for (int k = 0; k < FRICTION_DIRECTIONS; k++) {
        double theta = start + 2.0 * 3.14159265358979323846 * k / FRICTION_DIRECTIONS;
        s->dir[2 * (i * FRICTION_DIRECTIONS + k)] = cos(theta);
        s->dir[2 * (i * FRICTION_DIRECTIONS + k) + 1] = sin(theta);
    }
}

/* G, M^-1 G^T and the constant part of the matrix. */
static void step_lcp_build(const DirectIsland *d, StepLcp *s) {
    const EngineIslandSystem *sys = d->sys;
    int n = d->n, m = d->m, rows = s->rows, size = s->size;
    bool friction = rows > m;
    for (int r = 0; r < n; r++)
        for (int i = 0; i < m; i++)
            s->g[i + (size_t)rows * r] = sys->jn[i + (size_t)m * r];
    memcpy(s->mob, d->mobility, sizeof(double) * (size_t)n * (size_t)m);
    for (int i = 0; friction && i < m; i++) {
        double vt[2];
        contact_directions(d, s, i);
        double mu =
            tangential(d, i, sys->velocity, vt) < STICK_SPEED ? sys->mu_static[i] : sys->mu[i];
        int gamma = rows + i;
        s->matrix[gamma + (size_t)size * i] = mu;
        for (int k = 0; k < FRICTION_DIRECTIONS; k++) {
            int row = m + i * FRICTION_DIRECTIONS + k;
            const double *c = s->dir + 2 * (i * FRICTION_DIRECTIONS + k);
            for (int r = 0; r < n; r++)
                s->g[row + (size_t)rows * r] = c[0] * sys->jt[2 * i + (size_t)2 * m * r] +
                                               c[1] * sys->jt[2 * i + 1 + (size_t)2 * m * r];
            double *mob = s->mob + (size_t)n * row;
            for (int r = 0; r < n; r++) {
                double acc = 0.0;
                for (int k2 = 0; k2 < n; k2++)
                    acc += sys->inv_mass[r + (size_t)n * k2] * s->g[row + (size_t)rows * k2];
                mob[r] = acc;
            }
            s->matrix[row + (size_t)size * gamma] = 1.0;  /* e gamma */
            s->matrix[gamma + (size_t)size * row] = -1.0; /* -e^T beta */
        }
    }
    for (int b = 0; b < rows; b++)
        for (int a = 0; a < rows; a++) {
            if (a < m && b < m) {
                s->matrix[a + (size_t)size * b] = d->a[a + (size_t)m * b];
                continue;
            }
            double acc = 0.0;
            for (int r = 0; r < n; r++)
                acc += s->g[a + (size_t)rows * r] * s->mob[r + (size_t)n * b];
            s->matrix[a + (size_t)size * b] = acc;
        }
    /* the direction rows' right-hand side: the free sliding velocity along each D_k */
    for (int a = m; a < rows; a++) {
        double acc = 0.0;
        for (int r = 0; r < n; r++)
            acc += s->g[a + (size_t)rows * r] * d->u_free[r];
        s->q[a] = acc;
    }
}

/* u_trial = u_free + M^-1 G^T z. */
static void trial_velocity(DirectIsland *d, const StepLcp *s) {
    int n = d->n;
    memcpy(d->u_trial, d->u_free, sizeof(double) * (size_t)n);
    for (int a = 0; a < s->rows; a++) {
        if (s->z[a] == 0.0)
            continue;
        const double *col = s->mob + (size_t)n * a;
        for (int r = 0; r < n; r++)
            d->u_trial[r] += col[r] * s->z[a];
    }
}

/* |a - b|_inf, and |a|_inf in scale. */
static double max_change(int n, const double *a, const double *b, double *scale) {
    double change = 0.0;
    *scale = 0.0;
    for (int i = 0; i < n; i++) {
        change = fmax(change, fabs(a[i] - b[i]));
        *scale = fmax(*scale, fabs(a[i]));
    }
    return change;
}

/* Diagnostics: with ISSIM_LEMKE_DUMP=<file> set, every LCP Lemke fails on is appended to the
 * file (size, the warm basis it was given, q, the matrix column-major, the island's gaps,
 * Jn u_free and mu), for replaying it outside the engine. */
static void dump_failed_lcp(const DirectIsland *d, const StepLcp *s, const bool *warm, int warm_n,
                            int iteration, const char *why) {
    const char *path = getenv("ISSIM_LEMKE_DUMP");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    fprintf(f, "lcp %d contacts %d dim %d iteration %d h %.17g\n# %s\nwarm %d", s->size, d->m, d->n,
            iteration, d->sys->h, why, warm_n);
    for (int i = 0; i < warm_n; i++)
        fprintf(f, " %d", warm[i] ? 1 : 0);
    fprintf(f, "\nq");
    for (int i = 0; i < s->size; i++)
        fprintf(f, " %.17g", s->q[i]);
    fprintf(f, "\nmatrix");
    for (size_t i = 0; i < (size_t)s->size * (size_t)s->size; i++)
        fprintf(f, " %.17g", s->matrix[i]);
    fprintf(f, "\ngap");
    for (int i = 0; i < d->m; i++)
        fprintf(f, " %.17g", d->sys->gap[i]);
    fprintf(f, "\nb_free");
    for (int i = 0; i < d->m; i++)
        fprintf(f, " %.17g", d->b_free[i]);
    fprintf(f, "\nmu");
    for (int i = 0; i < d->m; i++)
        fprintf(f, " %.17g %.17g", d->sys->mu[i], d->sys->mu_static[i]);
    fprintf(f, "\n");
    fclose(f);
}

/* The iteration settles when the LCP's right-hand side b (the only part that moves: 001's nu)
 * stops changing, not on |f - f'|: for a PSD A the forces may form a family (a chair's four
 * legs) while b, A f and u' are unique. It may also end in a round-off cycle (a deep overlap
 * pushed out by a large rotation of a light body alternates b in its seventh digit): then the
 * last iterate stands if the step check (distances >= 0, force x distance = 0) passes, and
 * *settled tells the caller. */
static IssimStatus fixpoint(DirectIsland *d, StepLcp *s, EngineIslandSolution *out, bool *settled,
                            IssimError *err) {
    int m = d->m;
    double *previous = d->scratch;
    LcpProblem lcp = {.n = s->size, .matrix = s->matrix, .q = s->q};
    trial_velocity(d, s);
    *settled = false;
    for (int it = 1; it <= FIXPOINT_MAX_ITERATIONS + 1; it++) {
        direct_distances(d);
        direct_rhs(d);
        double scale, change = max_change(m, d->b, previous, &scale);
        out->iterations = it - 1;
        if (it > 1 && change <= FIXPOINT_TOL * scale + FIXPOINT_FLOOR) {
            *settled = true;
            return ISSIM_OK;
        }
        if (it > FIXPOINT_MAX_ITERATIONS)
            break;
        memcpy(previous, d->b, sizeof(double) * (size_t)m);
        memcpy(s->q, d->b, sizeof(double) * (size_t)m);
        LcpReport rep;
        IssimError why = {0};
        int warm_n = lcp_basis_size(s->basis);
        for (int i = 0; i < warm_n; i++)
            s->warm[i] = lcp_basis_z_basic(s->basis, i);
        if (lcp_lemke(&lcp, s->ws, s->basis, NULL, s->z, &rep, &why) != ISSIM_OK) {
            dump_failed_lcp(d, s, s->warm, warm_n, it, why.message);
            return issim_error_set(err, ISSIM_ERR_NUMERIC, "fixpoint iteration %d: %s", it,
                                   why.message);
        }
        trial_velocity(d, s);
    }
    trial_velocity(d, s); /* the velocities of the last LCP's impulses, for the step check */
    return ISSIM_OK;
}

/* lambda_n, and lambda_t = sum_k beta_k (cos, sin)_k in the (t1, t2) frame. */
static void store_solution(const DirectIsland *d, const StepLcp *s, EngineIslandSolution *out) {
    int m = d->m;
    memcpy(out->lambda_n, s->z, sizeof(double) * (size_t)m);
    for (int i = 0; m < s->rows && i < m; i++) {
        double t[2] = {0.0, 0.0};
        for (int k = 0; k < FRICTION_DIRECTIONS; k++) {
            double beta = s->z[m + i * FRICTION_DIRECTIONS + k];
            t[0] += beta * s->dir[2 * (i * FRICTION_DIRECTIONS + k)];
            t[1] += beta * s->dir[2 * (i * FRICTION_DIRECTIONS + k) + 1];
        }
        out->lambda_t[2 * i] = t[0];
        out->lambda_t[2 * i + 1] = t[1];
    }
}

static IssimStatus lemke_solve(void *user, const EngineIslandSystem *sys, EngineIslandSolution *out,
                               IssimError *err) {
    (void)user;
    DirectIsland d;
    if (direct_island_init(&d, sys, SOLVER, err) != ISSIM_OK)
        return ISSIM_ERR_NOMEM;
    StepLcp s;
    bool settled = false;
    IssimStatus st = step_lcp_alloc(&s, &d, has_friction(sys), err);
    if (st == ISSIM_OK) {
        step_lcp_build(&d, &s);
        st = fixpoint(&d, &s, out, &settled, err);
        if (st == ISSIM_OK) {
            store_solution(&d, &s, out);
            IssimError why = {0};
            st = direct_check_step(&d, out->lambda_n, &out->residual, &why);
            if (st != ISSIM_OK && !settled)
                issim_error_set(err, ISSIM_ERR_NUMERIC,
                                "the fixpoint iteration of 001 2.2 did not settle in %d iterations "
                                "(%d contacts), and its last iterate fails: %s",
                                FIXPOINT_MAX_ITERATIONS, d.m, why.message);
            else if (st != ISSIM_OK)
                issim_error_set(err, ISSIM_ERR_NUMERIC, "%s", why.message);
        }
    }
    direct_island_free(&d);
    return st;
}

static const EngineComplementaritySolver lemke_solver = {
    .name = SOLVER, .solve = lemke_solve, .direct = true};

const EngineComplementaritySolver *engine_complementarity_lemke(void) {
    return &lemke_solver;
}
