/* Lemke on the frictional LCP of engine_solver_lemke.c (001 2.2 with the polyhedral cone of
 * Anitescu and Potra 1997, 8 directions): the LCPs it ended on a ray in the pile, and random
 * frictional islands (1-3 bodies, 1-4 contacts, mu in [0, 1], random velocities and resting
 * ones with exactly zero sliding speed), cold and warm. Anitescu and Potra show Lemke solves
 * every such LCP (contact gaps >= 0), so every solve must succeed and verify. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/lcp.h"
#include "lcp_pile_dumps.h"

enum { DIRECTIONS = 8, MAX_CONTACTS = 4, MAX_BODIES = 3, MAX_SIZE = MAX_CONTACTS * 10 };

typedef struct Lcp {
    int m, size;
    double matrix[MAX_SIZE * MAX_SIZE], q[MAX_SIZE];
} Lcp;

/* The gamma rows and columns of the engine's layout around the impulse block: rows 0..m-1
 * normals, m + 8 i + k the directions of contact i, 9 m + i its gamma. */
static void add_cone_rows(Lcp *p, double mu) {
    int m = p->m, rows = 9 * m, size = p->size;
    for (int i = 0; i < m; i++) {
        p->matrix[rows + i + (size_t)size * i] = mu;
        for (int k = 0; k < DIRECTIONS; k++) {
            int row = m + i * DIRECTIONS + k;
            p->matrix[row + (size_t)size * (rows + i)] = 1.0;
            p->matrix[rows + i + (size_t)size * row] = -1.0;
        }
    }
}

/* max(-min z, -min w, max |z_i w_i|) against 1e-9 max(1, |q|, |M| |z|) max(1, |z|). */
static void assert_solution(const Lcp *p, const double *z, const char *what) {
    int n = p->size;
    double qn = 0.0, mn = 0.0, zn = 0.0, worst = 0.0;
    for (int i = 0; i < n; i++) {
        double w = p->q[i], row = 0.0;
        for (int j = 0; j < n; j++) {
            w += p->matrix[i + (size_t)n * j] * z[j];
            row += fabs(p->matrix[i + (size_t)n * j]);
        }
        qn = fmax(qn, fabs(p->q[i]));
        mn = fmax(mn, row);
        zn = fmax(zn, fabs(z[i]));
        worst = fmax(worst, fmax(fmax(-z[i], -w), fabs(z[i] * w)));
    }
    double tol = 1e-9 * fmax(1.0, fmax(qn, mn * zn)) * fmax(1.0, zn);
    if (!(worst <= tol))
        fail_msg("%s: violation %.3g above %.3g", what, worst, tol);
}

static void solve_dump(int m, double mu, const double *block, const double *q, const char *what) {
    Lcp *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->m = m;
    p->size = 10 * m;
    int rows = 9 * m;
    for (int j = 0; j < rows; j++)
        memcpy(p->matrix + (size_t)p->size * j, block + (size_t)rows * j, sizeof(double) * rows);
    memcpy(p->q, q, sizeof(double) * (size_t)p->size);
    add_cone_rows(p, mu);
    LcpWorkspace *ws = lcp_workspace_create(p->size, NULL);
    double z[MAX_SIZE];
    LcpReport rep;
    IssimError err = {0};
    LcpProblem lcp = {.n = p->size, .matrix = p->matrix, .q = p->q};
    if (lcp_lemke(&lcp, ws, NULL, NULL, z, &rep, &err) != ISSIM_OK)
        fail_msg("%s: %s", what, err.message);
    assert_solution(p, z, what);
    printf("%s: %d pivots, %d restarts, violation %.3g\n", what, rep.pivots, rep.restarts,
           rep.max_violation);
    lcp_workspace_destroy(ws);
    free(p);
}

static void test_pile_dumps_solve(void **state) {
    (void)state;
    solve_dump(ONE_BODY_TWO_CONTACTS_m, one_body_two_contacts_mu, one_body_two_contacts_a,
               one_body_two_contacts_q, "pile: 1 body, 2 contacts");
    solve_dump(THREE_BODIES_FOUR_CONTACTS_m, three_bodies_four_contacts_mu,
               three_bodies_four_contacts_a, three_bodies_four_contacts_q,
               "pile: 3 bodies, 4 contacts");
    solve_dump(RESTING_BOX_m, resting_box_mu, resting_box_a, resting_box_q, "pile: resting box");
}

/* ----- random frictional islands ----- */

typedef struct Rng {
    uint64_t s;
} Rng;

static double uniform(Rng *r, double lo, double hi) {
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(r->s >> 11) / 9007199254740992.0;
}

static void cross(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static void normalize(double *v) {
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; k++)
        v[k] /= l;
}

/* Row `row` of a Jacobian (6 bodies' columns) for direction d at lever r on body b, sign s. */
static void jacobian_row(double *jac, int row, int b, const double *d, const double *r, double s) {
    double rxd[3];
    cross(r, d, rxd);
    for (int k = 0; k < 3; k++) {
        jac[row * 6 * MAX_BODIES + 6 * b + k] += s * d[k];
        jac[row * 6 * MAX_BODIES + 6 * b + 3 + k] += s * rxd[k];
    }
}

typedef struct Island {
    int bodies, m;
    bool resting; /* on the ground, normals +z, tangents x and y: sliding speed exactly 0 */
    double inv_mass[6 * MAX_BODIES][6 * MAX_BODIES];
    double u_free[6 * MAX_BODIES];
    double gap[MAX_CONTACTS];
    double normal[MAX_CONTACTS][3], t1[MAX_CONTACTS][3], t2[MAX_CONTACTS][3];
    double lever_a[MAX_CONTACTS][3], lever_b[MAX_CONTACTS][3];
    int body_a[MAX_CONTACTS], body_b[MAX_CONTACTS]; /* body_b -1: the ground */
} Island;

static void random_island(Rng *r, Island *is) {
    memset(is, 0, sizeof *is);
    is->bodies = 1 + (int)uniform(r, 0, MAX_BODIES);
    is->m = 1 + (int)uniform(r, 0, MAX_CONTACTS);
    is->resting = uniform(r, 0, 1) < 0.4;
    for (int b = 0; b < is->bodies; b++) {
        double mass = uniform(r, 0.05, 5.0), a[3][3], inertia[3][3];
        for (int k = 0; k < 3; k++)
            is->inv_mass[6 * b + k][6 * b + k] = 1.0 / mass;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a[i][j] = uniform(r, -1, 1) * 0.01 * mass;
        for (int i = 0; i < 3; i++) /* SPD: a a^T + epsilon; its inverse by Cramer */
            for (int j = 0; j < 3; j++) {
                inertia[i][j] = i == j ? 1e-4 * mass : 0.0;
                for (int k = 0; k < 3; k++)
                    inertia[i][j] += a[i][k] * a[j][k];
            }
        double c[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                c[j][i] = inertia[(i + 1) % 3][(j + 1) % 3] * inertia[(i + 2) % 3][(j + 2) % 3] -
                          inertia[(i + 1) % 3][(j + 2) % 3] * inertia[(i + 2) % 3][(j + 1) % 3];
        double det = inertia[0][0] * c[0][0] + inertia[0][1] * c[1][0] + inertia[0][2] * c[2][0];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                is->inv_mass[6 * b + 3 + i][6 * b + 3 + j] = c[i][j] / det;
        /* resting: at rest, or with the round-off of a resting body in the engine (1e-12 m/s) */
        double noise = uniform(r, 0, 1) < 0.5 ? 0.0 : 1e-12;
        for (int k = 0; k < 6; k++)
            is->u_free[6 * b + k] = is->resting ? uniform(r, -noise, noise) : uniform(r, -0.5, 0.5);
        is->u_free[6 * b + 2] += -9.81e-3; /* gravity over a 1 ms step */
    }
    for (int i = 0; i < is->m; i++) {
        is->body_a[i] = (int)uniform(r, 0, is->bodies);
        is->body_b[i] = is->resting ? -1 : (int)uniform(r, -1, is->bodies);
        if (is->body_b[i] == is->body_a[i])
            is->body_b[i] = -1;
        is->gap[i] = uniform(r, 0, 1) < 0.5 ? 0.0 : uniform(r, 0, 1e-3);
        for (int k = 0; k < 3; k++) {
            is->lever_a[i][k] = uniform(r, -0.05, 0.05);
            is->lever_b[i][k] = uniform(r, -0.05, 0.05);
        }
        if (is->resting) { /* a face's corners on the ground: coplanar, as a box at rest */
            double corner[2] = {i & 1 ? 0.03 : -0.03, i & 2 ? 0.02 : -0.02};
            is->lever_a[i][0] = corner[0];
            is->lever_a[i][1] = corner[1];
            is->lever_a[i][2] = -0.01;
            is->normal[i][2] = 1.0;
            is->t1[i][0] = 1.0;
            is->t2[i][1] = 1.0;
            continue;
        }
        for (int k = 0; k < 3; k++)
            is->normal[i][k] = uniform(r, -1, 1);
        is->normal[i][2] = fabs(is->normal[i][2]) + 0.2;
        normalize(is->normal[i]);
        double any[3] = {1, 0, 0};
        if (fabs(is->normal[i][0]) > 0.8)
            any[0] = 0, any[1] = 1;
        cross(is->normal[i], any, is->t1[i]);
        normalize(is->t1[i]);
        cross(is->normal[i], is->t1[i], is->t2[i]);
    }
}

/* The engine's LCP (engine_solver_lemke.c): G = [Jn; D^T Jt], A = G M^-1 G^T, q_n = Jn u +
 * gap / h, q_beta = D^T Jt u, directions from the one opposing the free sliding velocity. */
static void island_lcp(const Island *is, double mu, Lcp *p) {
    int m = is->m, rows = 9 * m, dim = 6 * MAX_BODIES;
    static double g[9 * MAX_CONTACTS * 6 * MAX_BODIES];
    memset(g, 0, sizeof g);
    memset(p, 0, sizeof *p);
    p->m = m;
    p->size = 10 * m;
    for (int i = 0; i < m; i++) {
        double jt[2][6 * MAX_BODIES], vt[2] = {0, 0};
        double tn[2][3];
        memcpy(tn[0], is->t1[i], sizeof tn[0]);
        memcpy(tn[1], is->t2[i], sizeof tn[1]);
        jacobian_row(g, i, is->body_a[i], is->normal[i], is->lever_a[i], 1.0);
        if (is->body_b[i] >= 0)
            jacobian_row(g, i, is->body_b[i], is->normal[i], is->lever_b[i], -1.0);
        for (int t = 0; t < 2; t++) {
            double row[9 * MAX_CONTACTS * 6 * MAX_BODIES] = {0};
            jacobian_row(row, 0, is->body_a[i], tn[t], is->lever_a[i], 1.0);
            if (is->body_b[i] >= 0)
                jacobian_row(row, 0, is->body_b[i], tn[t], is->lever_b[i], -1.0);
            memcpy(jt[t], row, sizeof jt[t]);
            for (int c = 0; c < dim; c++)
                vt[t] += jt[t][c] * is->u_free[c];
        }
        double start = hypot(vt[0], vt[1]) > 0.0 ? atan2(-vt[1], -vt[0]) : 0.0;
        for (int k = 0; k < DIRECTIONS; k++) {
            double th = start + 2.0 * 3.14159265358979323846 * k / DIRECTIONS;
            for (int c = 0; c < dim; c++)
                g[(m + i * DIRECTIONS + k) * dim + c] = cos(th) * jt[0][c] + sin(th) * jt[1][c];
        }
    }
    for (int a = 0; a < rows; a++) {
        for (int c = 0; c < dim; c++)
            p->q[a] += g[a * dim + c] * is->u_free[c];
        if (a < m)
            p->q[a] += is->gap[a] / 1e-3;
        for (int b = 0; b < rows; b++) {
            double acc = 0.0;
            for (int c = 0; c < dim; c++)
                for (int e = 0; e < dim; e++)
                    acc += g[a * dim + c] * is->inv_mass[c][e] * g[b * dim + e];
            p->matrix[a + (size_t)p->size * b] = acc;
        }
    }
    add_cone_rows(p, mu);
}

/* Lemke on p from basis (cold when empty), its solution verified; what names the solve. */
static void solve_island(const Lcp *p, LcpWorkspace *ws, LcpBasis *basis, const char *what,
                         LcpReport *rep) {
    double z[MAX_SIZE];
    IssimError err = {0};
    LcpProblem lcp = {.n = p->size, .matrix = (double *)p->matrix, .q = (double *)p->q};
    if (lcp_lemke(&lcp, ws, basis, NULL, z, rep, &err) != ISSIM_OK)
        fail_msg("%s: %s", what, err.message);
    assert_solution(p, z, what);
}

static void test_random_frictional_islands(void **state) {
    (void)state;
    enum { ISLANDS = 5000 };
    Rng r = {.s = 20261123};
    Island is;
    Lcp *p = calloc(1, sizeof *p), *next = calloc(1, sizeof *next);
    assert_non_null(p);
    assert_non_null(next);
    LcpWorkspace *ws = lcp_workspace_create(MAX_SIZE, NULL);
    LcpBasis *basis = lcp_basis_create(MAX_SIZE, NULL);
    int solves = 0, warm = 0, rejected = 0, restarts = 0, resting = 0, pivots = 0;
    for (int k = 0; k < ISLANDS; k++) {
        random_island(&r, &is);
        double mu = k % 10 == 0 ? 0.0 : uniform(&r, 0, 1);
        resting += is.resting;
        island_lcp(&is, mu, p);
        LcpReport rep;
        char what[96];
        snprintf(what, sizeof what, "island %d (%d bodies, %d contacts, mu %.3f%s) cold", k,
                 is.bodies, is.m, mu, is.resting ? ", resting" : "");
        lcp_basis_reset(basis);
        solve_island(p, ws, basis, what, &rep);
        solves++;
        restarts += rep.restarts;
        pivots += rep.pivots;
        /* warm: the same island a step later (velocities and gaps moved a little), from this
         * basis; feasible or not, the solve must succeed */
        for (int b = 0; b < 6 * is.bodies; b++)
            is.u_free[b] += k % 2 ? 0.0 : uniform(&r, -1e-3, 1e-3);
        for (int i = 0; i < is.m; i++)
            is.gap[i] = fmax(0.0, is.gap[i] + uniform(&r, -1e-5, 1e-5));
        island_lcp(&is, mu, next);
        snprintf(what, sizeof what, "island %d (%d bodies, %d contacts, mu %.3f%s) warm", k,
                 is.bodies, is.m, mu, is.resting ? ", resting" : "");
        solve_island(next, ws, basis, what, &rep);
        solves++;
        warm += rep.warm_started;
        rejected += rep.warm_rejected;
        restarts += rep.restarts;
        assert_true(rep.warm_started != rep.warm_rejected);
    }
    printf("%d frictional LCPs (%d islands, %d resting with zero sliding speed): all solved; "
           "%d cold solves took %d pivots; warm: %d from the basis, %d fell back to a cold start; "
           "%d second covering vectors\n",
           solves, ISLANDS, resting, ISLANDS, pivots, warm, rejected, restarts);
    assert_true(warm > 0 && rejected > 0);
    lcp_basis_destroy(basis);
    lcp_workspace_destroy(ws);
    free(p);
    free(next);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pile_dumps_solve),
        cmocka_unit_test(test_random_frictional_islands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
