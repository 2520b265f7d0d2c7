/* The LCP module's shared parts: workspace and basis lifetimes, verification of a solution
 * against 001 eq. 7 (A f + b >= 0 compl. to f >= 0), the exact solve of a complementary basis
 * (Lemke's warm start and final refinement, the bilateral method's active set), and the
 * contact-like test problems A = N^T J^T M^-1 J N of 001 2.2. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "issim/math.h"
#include "lcp_internal.h"

/* Largest problem a workspace may be made for (a dense n^2 tableau: 8 x 4096^2 bytes). */
#define LCP_MAX_N 4096

LcpWorkspace *lcp_workspace_create(int max_n, IssimError *err) {
    if (max_n < 1 || max_n > LCP_MAX_N) {
        issim_error_set(err, ISSIM_ERR_INVALID, "LCP workspace: size %d is outside [1, %d]", max_n,
                        LCP_MAX_N);
        return NULL;
    }
    size_t n = (size_t)max_n;
    LcpWorkspace *ws = calloc(1, sizeof *ws);
    double *d = malloc(sizeof(double) * (2 * n * n + LCP_VEC_COUNT * n));
    int *i = malloc(sizeof(int) * 3 * n);
    bool *flags = malloc(sizeof(bool) * n);
    if (!ws || !d || !i || !flags) {
        free(ws);
        free(d);
        free(i);
        free(flags);
        issim_error_set(err, ISSIM_ERR_NOMEM, "LCP workspace: out of memory for size %d", max_n);
        return NULL;
    }
    *ws = (LcpWorkspace){.max_n = max_n,
                         .square_a = d,
                         .square_b = d + n * n,
                         .vec = d + 2 * n * n,
                         .ipiv = i,
                         .index = i + n,
                         .flags = flags};
    return ws;
}

void lcp_workspace_destroy(LcpWorkspace *ws) {
    if (!ws)
        return;
    free(ws->square_a);
    free(ws->ipiv);
    free(ws->flags);
    free(ws);
}

int lcp_workspace_max_n(const LcpWorkspace *ws) {
    return ws->max_n;
}

LcpBasis *lcp_basis_create(int max_n, IssimError *err) {
    if (max_n < 1 || max_n > LCP_MAX_N) {
        issim_error_set(err, ISSIM_ERR_INVALID, "LCP basis: size %d is outside [1, %d]", max_n,
                        LCP_MAX_N);
        return NULL;
    }
    LcpBasis *b = calloc(1, sizeof *b);
    bool *flags = calloc((size_t)max_n, sizeof *flags);
    if (!b || !flags) {
        free(b);
        free(flags);
        issim_error_set(err, ISSIM_ERR_NOMEM, "LCP basis: out of memory for size %d", max_n);
        return NULL;
    }
    *b = (LcpBasis){.max_n = max_n, .z_basic = flags};
    return b;
}

void lcp_basis_destroy(LcpBasis *basis) {
    if (!basis)
        return;
    free(basis->z_basic);
    free(basis);
}

void lcp_basis_reset(LcpBasis *basis) {
    basis->n = 0;
}

int lcp_basis_max_n(const LcpBasis *basis) {
    return basis->max_n;
}

int lcp_basis_size(const LcpBasis *basis) {
    return basis->n;
}

bool lcp_basis_z_basic(const LcpBasis *basis, int i) {
    return i >= 0 && i < basis->n && basis->z_basic[i];
}

IssimStatus lcp_check_problem(const char *solver, const LcpProblem *p, const LcpWorkspace *ws,
                              LcpNorms *norms, IssimError *err) {
    if (!p || !ws || !p->matrix || !p->q)
        return issim_error_set(err, ISSIM_ERR_INVALID, "%s: NULL problem, data or workspace",
                               solver);
    if (p->n < 1 || p->n > ws->max_n)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "%s: problem size %d is outside the workspace's [1, %d]", solver,
                               p->n, ws->max_n);
    size_t n = (size_t)p->n;
    double *row_sum = lcp_vec(ws, LCP_VEC_RHS);
    *norms = (LcpNorms){0};
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(p->q[i]))
            return issim_error_set(err, ISSIM_ERR_INVALID, "%s: q[%zu] is not finite (%g)", solver,
                                   i, p->q[i]);
        norms->q = lcp_max(norms->q, fabs(p->q[i]));
        row_sum[i] = 0.0;
    }
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            double a = p->matrix[i + n * j];
            if (!isfinite(a))
                return issim_error_set(err, ISSIM_ERR_INVALID,
                                       "%s: matrix entry (%zu, %zu) is not finite (%g)", solver, i,
                                       j, a);
            row_sum[i] += fabs(a);
        }
    for (size_t i = 0; i < n; i++)
        norms->m = lcp_max(norms->m, row_sum[i]);
    return ISSIM_OK;
}

double lcp_violation(const LcpProblem *p, const double *z, double *w_out) {
    int n = p->n;
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        double w = p->q[i];
        for (int j = 0; j < n; j++)
            w += p->matrix[i + (size_t)n * j] * z[j];
        if (w_out)
            w_out[i] = w;
        if (!isfinite(w) || !isfinite(z[i]))
            return INFINITY;
        worst = lcp_max(worst, lcp_max(lcp_max(-w, -z[i]), fabs(w * z[i])));
    }
    return worst;
}

double lcp_scaled_tolerance(LcpNorms norms, int n, const double *z, double tolerance) {
    double zmax = 0.0;
    for (int i = 0; i < n; i++)
        zmax = lcp_max(zmax, fabs(z[i]));
    double scale = lcp_max(1.0, lcp_max(norms.q, norms.m * zmax));
    return tolerance * scale * lcp_max(1.0, zmax);
}

bool lcp_solve_basis(const LcpProblem *p, LcpWorkspace *ws, const bool *z_basic, double *z) {
    int n = p->n, k = 0;
    int *rows = ws->index + n; /* the second half of index: Lemke keeps its rows in the first */
    for (int i = 0; i < n; i++) {
        z[i] = 0.0;
        if (z_basic[i])
            rows[k++] = i;
    }
    if (k == 0)
        return true;
    double *a = ws->square_b, *rhs = lcp_vec(ws, LCP_VEC_RHS);
    for (int c = 0; c < k; c++) {
        for (int r = 0; r < k; r++)
            a[r + (size_t)k * c] = p->matrix[rows[r] + (size_t)n * rows[c]];
        rhs[c] = -p->q[rows[c]];
    }
    if (linalg_solve(k, 1, a, ws->ipiv, rhs) != 0)
        return false;
    for (int r = 0; r < k; r++) {
        if (!isfinite(rhs[r]))
            return false;
        z[rows[r]] = rhs[r];
    }
    return true;
}

IssimStatus lcp_verify(const char *solver, const LcpProblem *p, LcpWorkspace *ws, double *z,
                       double tol, LcpReport *report, IssimError *err) {
    for (int i = 0; i < p->n; i++)
        if (z[i] < 0.0 && z[i] > -tol)
            z[i] = 0.0;
    double violation = lcp_violation(p, z, lcp_vec(ws, LCP_VEC_W));
    if (report) {
        report->max_violation = violation;
        report->tolerance = tol;
    }
    if (violation <= tol)
        return ISSIM_OK;
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "%s: the result violates complementarity by %.3g (tolerance %.3g) on "
                           "a problem of size %d",
                           solver, violation, tol, p->n);
}

/* ===== Contact-like test problems ===== */

static double rng_uniform(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

static double rng_range(uint64_t *s, double lo, double hi) {
    return lo + (hi - lo) * rng_uniform(s);
}

static Vec3 rng_unit(uint64_t *s) {
    for (;;) {
        Vec3 v = vec3(rng_range(s, -1, 1), rng_range(s, -1, 1), rng_range(s, -1, 1));
        double len = vec3_norm(v);
        if (len > 0.1 && len <= 1.0)
            return vec3_scale(v, 1.0 / len);
    }
}

/* The world inverse inertia R diag(1 / I) R^T of a random SPD inertia. */
static Mat3 random_inverse_inertia(uint64_t *s) {
    Vec3 axis = rng_unit(s);
    double angle = rng_range(s, 0.0, 3.14159265358979);
    Quat r = quat_from_axis_angle(axis, angle);
    Vec3 principal =
        vec3(rng_range(s, 0.02, 0.2), rng_range(s, 0.02, 0.2), rng_range(s, 0.02, 0.2));
    Mat3 inv;
    mat3_inverse(mat3_world_inertia(r, principal), &inv);
    return inv;
}

typedef struct ContactRow {
    int body_a, body_b; /* b: -1 for the ground */
    double ja[6], jb[6];
} ContactRow;

/* W J_k^T restricted to one body: (n / m, Iinv (r x n)). */
static void mobility(const double *row, double inv_mass, Mat3 inv_inertia, double *out) {
    Vec3 ang = mat3_mul_vec(inv_inertia, vec3(row[3], row[4], row[5]));
    for (int i = 0; i < 3; i++)
        out[i] = row[i] * inv_mass;
    out[3] = ang.x;
    out[4] = ang.y;
    out[5] = ang.z;
}

static double dot6(const double *a, const double *b) {
    double s = 0.0;
    for (int i = 0; i < 6; i++)
        s += a[i] * b[i];
    return s;
}

static void fill_row(uint64_t *s, double *row, Vec3 n, double sign) {
    Vec3 r = vec3_scale(rng_unit(s), rng_range(s, 0.05, 0.5));
    Vec3 rxn = vec3_cross(r, n);
    double v[6] = {n.x, n.y, n.z, rxn.x, rxn.y, rxn.z};
    for (int i = 0; i < 6; i++)
        row[i] = sign * v[i];
}

void lcp_contact_problem(int bodies, int contacts, uint64_t seed, double *matrix, double *q) {
    uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ULL;
    double *inv_mass = malloc(sizeof(double) * (size_t)bodies);
    Mat3 *inv_inertia = malloc(sizeof(Mat3) * (size_t)bodies);
    ContactRow *rows = malloc(sizeof(ContactRow) * (size_t)contacts);
    if (!inv_mass || !inv_inertia || !rows) {
        free(inv_mass);
        free(inv_inertia);
        free(rows);
        memset(matrix, 0, sizeof(double) * (size_t)contacts * (size_t)contacts);
        return;
    }
    for (int b = 0; b < bodies; b++) {
        inv_mass[b] = 1.0 / rng_range(&s, 0.5, 2.0);
        inv_inertia[b] = random_inverse_inertia(&s);
    }
    for (int k = 0; k < contacts; k++) {
        ContactRow *c = &rows[k];
        Vec3 n = rng_unit(&s);
        c->body_a = (int)(rng_uniform(&s) * bodies) % bodies;
        c->body_b = -1;
        if (bodies > 1 && rng_uniform(&s) < 0.5)
            c->body_b = (c->body_a + 1 + (int)(rng_uniform(&s) * (bodies - 1))) % bodies;
        fill_row(&s, c->ja, n, 1.0);
        fill_row(&s, c->jb, n, -1.0);
        if (q)
            q[k] = rng_range(&s, -1.0, 1.0);
    }
    /* A_kl = sum over shared bodies of J_k W_b J_l^T (001 2.2: N^T J^T M^-1 J N). */
    for (int k = 0; k < contacts; k++)
        for (int l = 0; l < contacts; l++) {
            const ContactRow *a = &rows[k], *b = &rows[l];
            const double *ka[2] = {a->ja, a->jb}, *lb[2] = {b->ja, b->jb};
            int kb[2] = {a->body_a, a->body_b}, lbody[2] = {b->body_a, b->body_b};
            double sum = 0.0, mob[6];
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++) {
                    if (kb[i] < 0 || kb[i] != lbody[j])
                        continue;
                    mobility(lb[j], inv_mass[kb[i]], inv_inertia[kb[i]], mob);
                    sum += dot6(ka[i], mob);
                }
            matrix[k + (size_t)contacts * l] = sum;
        }
    free(inv_mass);
    free(inv_inertia);
    free(rows);
}
