/* Linear elastodynamics (seed 000 eq. 3.4; seed 003 eq. 1) by explicit finite elements: plane
 * strain on linear triangles (the seeds' 2D setting) or linear tetrahedra (3D), row-sum lumped
 * mass, central differences.
 *
 * Why this scheme: the step response of 000 3.5 is a wave problem (the answer is the arrival of
 * reflections), and central differences with a lumped mass are second order, non-dissipative
 * and need no linear solve per step; the stable step is set from the mesh's largest
 * eigenvalue of M^-1 K (2 / sqrt(lambda_max), power iteration), times a safety factor.
 * The boundary conditions are 000 eqs. 3.11-3.12: the driven nodes' normal displacement is
 * held at -D n from t = 0 (tangential motion free, a frictionless indenter), every other
 * boundary node is traction-free, which in a displacement FEM is the natural condition.
 * The reaction at the driven nodes is the nodal force n . (K u) the indenter must supply
 * (the lumped mass has no normal acceleration there): the traction of eq. 3.10 integrated
 * against the node's hat function, i.e. spread over its boundary segment. Each map sample is
 * the reaction's impulse over its interval divided by T (mapgen.h says why).
 */
#include "mapgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

MapgenMaterial mapgen_material_steel_bar(void) {
    const double rho = 7876.74, c2 = 5163.0, nu = 0.3;
    double shear = rho * c2 * c2;
    return (MapgenMaterial){.youngs = 2.0 * shear * (1.0 + nu), .poisson = nu, .density = rho};
}

IssimStatus mapgen_material_check(const MapgenMaterial *m, IssimError *err) {
    if (!(m->youngs > 0.0) || !isfinite(m->youngs))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "Young's modulus E = %g Pa: must be in (0, inf)", m->youngs);
    if (!(m->poisson > -1.0 && m->poisson < 0.5))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "Poisson's ratio nu = %g: must be in (-1, 0.5)", m->poisson);
    if (!(m->density > 0.0) || !isfinite(m->density))
        return issim_error_set(err, ISSIM_ERR_RANGE, "density rho = %g kg/m^3: must be in (0, inf)",
                               m->density);
    return ISSIM_OK;
}

static double lame_mu(const MapgenMaterial *m) {
    return m->youngs / (2.0 * (1.0 + m->poisson));
}
static double lame_lambda(const MapgenMaterial *m) {
    return m->youngs * m->poisson / ((1.0 + m->poisson) * (1.0 - 2.0 * m->poisson));
}

double mapgen_c1(const MapgenMaterial *m) {
    return sqrt((lame_lambda(m) + 2.0 * lame_mu(m)) / m->density);
}
double mapgen_c2(const MapgenMaterial *m) {
    return sqrt(lame_mu(m) / m->density);
}

static int compare_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Node-level sparsity: every node with itself and its triangle neighbours. */
static IssimStatus model_pattern(MapgenModel *model, IssimError *err) {
    const MapgenMesh *mesh = model->mesh;
    int n = mesh->node_count, nt = mesh->cell_count, corners = mesh->dimension + 1;
    int *degree = calloc((size_t)n + 1, sizeof *degree);
    model->row_start = calloc((size_t)n + 1, sizeof *model->row_start);
    if (!degree || !model->row_start) {
        free(degree);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "stiffness of %d nodes: out of memory", n);
    }
    for (int t = 0; t < nt; t++)
        for (int k = 0; k < corners; k++)
            degree[mesh->cells[corners * t + k]] += corners;
    for (int i = 0; i < n; i++)
        model->row_start[i + 1] = model->row_start[i] + degree[i];
    int *fill = degree; /* reused as the per-row cursor */
    memset(fill, 0, (size_t)n * sizeof *fill);
    model->columns = malloc((size_t)model->row_start[n] * sizeof *model->columns);
    if (!model->columns) {
        free(degree);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "stiffness of %d nodes: out of memory", n);
    }
    for (int t = 0; t < nt; t++)
        for (int a = 0; a < corners; a++) {
            int i = mesh->cells[corners * t + a];
            for (int b = 0; b < corners; b++)
                model->columns[model->row_start[i] + fill[i]++] = mesh->cells[corners * t + b];
        }
    /* Sort and deduplicate each row, then compact. */
    int out = 0;
    for (int i = 0; i < n; i++) {
        int *row = model->columns + model->row_start[i];
        int len = model->row_start[i + 1] - model->row_start[i];
        qsort(row, (size_t)len, sizeof *row, compare_int);
        int start = out;
        for (int k = 0; k < len; k++)
            if (k == 0 || row[k] != row[k - 1])
                model->columns[out++] = row[k];
        model->row_start[i] = start;
    }
    model->row_start[n] = out;
    free(degree);
    int block = mesh->dimension * mesh->dimension;
    model->values = calloc((size_t)out * (size_t)block, sizeof *model->values);
    if (!model->values)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "stiffness of %d nodes: out of memory", n);
    return ISSIM_OK;
}

static double *block_at(MapgenModel *model, int i, int j) {
    for (int e = model->row_start[i]; e < model->row_start[i + 1]; e++)
        if (model->columns[e] == j)
            return model->values + model->dimension * model->dimension * e;
    return NULL;
}

/* Gradients of the linear shape functions of cell t (grad[p * d + i] = d N_p / d x_i) and the
 * cell's area or volume. */
static double cell_gradients(const MapgenMesh *mesh, int t, double *grad) {
    const int *v = mesh->cells + (mesh->dimension + 1) * t;
    if (mesh->dimension == 2) {
        const double *p0 = mesh->points + 2 * v[0], *p1 = mesh->points + 2 * v[1],
                     *p2 = mesh->points + 2 * v[2];
        double det = (p1[0] - p0[0]) * (p2[1] - p0[1]) - (p2[0] - p0[0]) * (p1[1] - p0[1]);
        const double *p[3] = {p0, p1, p2};
        for (int k = 0; k < 3; k++) {
            const double *pj = p[(k + 1) % 3], *pl = p[(k + 2) % 3];
            grad[2 * k] = (pj[1] - pl[1]) / det;
            grad[2 * k + 1] = (pl[0] - pj[0]) / det;
        }
        return 0.5 * det;
    }
    double j[3][3], inv[3][3];
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++)
            j[r][c] = mesh->points[3 * v[c + 1] + r] - mesh->points[3 * v[0] + r];
    double det = j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1]) -
                 j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0]) +
                 j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
            inv[r][c] = (j[r1][c1] * j[r2][c2] - j[r1][c2] * j[r2][c1]) / det;
        }
    /* N_k = (J^-1 (x - x0))_k for k = 1..3: its gradient is row k of J^-1; N_0 = 1 - sum. */
    for (int i = 0; i < 3; i++) {
        grad[i] = 0.0;
        for (int k = 1; k < 4; k++) {
            grad[3 * k + i] = inv[k - 1][i];
            grad[i] -= inv[k - 1][i];
        }
    }
    return det / 6.0;
}

/* Linear simplices: K_e = V B^T D B, written per pair of corners p, q as the d x d block
 * V (lambda g_p g_q^T + mu g_q g_p^T + mu (g_p . g_q) I) (isotropic D; plane strain in 2D:
 * the same lambda and mu, out-of-plane strain zero); lumped mass rho V / (d + 1) per corner. */
static void model_assemble(MapgenModel *model) {
    const MapgenMesh *mesh = model->mesh;
    int d = mesh->dimension, corners = d + 1;
    double lambda = lame_lambda(&model->material), mu = lame_mu(&model->material);
    double grad[12];
    for (int t = 0; t < mesh->cell_count; t++) {
        const int *v = mesh->cells + corners * t;
        double volume = cell_gradients(mesh, t, grad);
        for (int p = 0; p < corners; p++) {
            const double *gp = grad + d * p;
            for (int q = 0; q < corners; q++) {
                const double *gq = grad + d * q;
                double dot = 0.0;
                for (int i = 0; i < d; i++)
                    dot += gp[i] * gq[i];
                double *blk = block_at(model, v[p], v[q]);
                for (int i = 0; i < d; i++)
                    for (int j = 0; j < d; j++)
                        blk[d * i + j] += volume * (lambda * gp[i] * gq[j] + mu * gp[j] * gq[i] +
                                                    (i == j ? mu * dot : 0.0));
            }
            double m = model->material.density * volume / corners;
            for (int i = 0; i < d; i++)
                model->mass[d * v[p] + i] += m;
        }
    }
    for (int k = 0; k < model->dof_count; k++)
        model->inverse_mass[k] = 1.0 / model->mass[k];
}

static void apply_3d(const MapgenModel *model, const double *x, double *y) {
    int n = model->mesh->node_count;
    for (int i = 0; i < n; i++) {
        double yi[3] = {0, 0, 0};
        for (int e = model->row_start[i]; e < model->row_start[i + 1]; e++) {
            const double *blk = model->values + 9 * e, *xj = x + 3 * model->columns[e];
            for (int r = 0; r < 3; r++)
                yi[r] += blk[3 * r] * xj[0] + blk[3 * r + 1] * xj[1] + blk[3 * r + 2] * xj[2];
        }
        for (int r = 0; r < 3; r++)
            y[3 * i + r] = yi[r];
    }
}

void mapgen_model_apply(const MapgenModel *model, const double *x, double *y) {
    if (model->dimension == 3) {
        apply_3d(model, x, y);
        return;
    }
    int n = model->mesh->node_count;
    for (int i = 0; i < n; i++) {
        double yx = 0.0, yy = 0.0;
        for (int e = model->row_start[i]; e < model->row_start[i + 1]; e++) {
            const double *blk = model->values + 4 * e;
            int j = model->columns[e];
            yx += blk[0] * x[2 * j] + blk[1] * x[2 * j + 1];
            yy += blk[2] * x[2 * j] + blk[3] * x[2 * j + 1];
        }
        y[2 * i] = yx;
        y[2 * i + 1] = yy;
    }
}

/* lambda_max of M^-1 K by power iteration on M^-1/2 K M^-1/2 (Rayleigh quotient). */
static double largest_eigenvalue(const MapgenModel *model, double *x, double *y) {
    int nd = model->dof_count;
    unsigned long long s = 0x9E3779B97F4A7C15ull;
    for (int d = 0; d < nd; d++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[d] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
    double lambda = 0.0;
    for (int it = 0; it < 200; it++) {
        double norm = 0.0;
        for (int d = 0; d < nd; d++)
            norm += x[d] * x[d];
        norm = sqrt(norm);
        for (int d = 0; d < nd; d++)
            y[d] = x[d] / norm * sqrt(model->inverse_mass[d]);
        mapgen_model_apply(model, y, x);
        double rayleigh = 0.0;
        for (int d = 0; d < nd; d++) {
            x[d] *= sqrt(model->inverse_mass[d]);
            rayleigh += x[d] * y[d] / sqrt(model->inverse_mass[d]);
        }
        lambda = rayleigh;
    }
    return lambda;
}

IssimStatus mapgen_model_build(const MapgenMesh *mesh, const MapgenMaterial *material,
                               MapgenModel *model, IssimError *err) {
    memset(model, 0, sizeof *model);
    IssimStatus st = mapgen_material_check(material, err);
    if (st != ISSIM_OK)
        return st;
    model->mesh = mesh;
    model->material = *material;
    model->dimension = mesh->dimension;
    model->dof_count = mesh->dimension * mesh->node_count;
    model->mass = calloc((size_t)model->dof_count, sizeof *model->mass);
    model->inverse_mass = calloc((size_t)model->dof_count, sizeof *model->inverse_mass);
    double *x = malloc((size_t)model->dof_count * sizeof *x);
    double *y = calloc((size_t)model->dof_count, sizeof *y);
    st = !model->mass || !model->inverse_mass || !x || !y
             ? issim_error_set(err, ISSIM_ERR_NOMEM, "model: out of memory")
             : model_pattern(model, err);
    if (st == ISSIM_OK) {
        model_assemble(model);
        /* The Rayleigh quotient approaches lambda_max from below: 2 % margin. */
        model->dt_cfl = 2.0 / sqrt(1.02 * largest_eigenvalue(model, x, y));
    }
    free(x);
    free(y);
    if (st != ISSIM_OK)
        mapgen_model_free(model);
    return st;
}

void mapgen_model_free(MapgenModel *model) {
    free(model->row_start);
    free(model->columns);
    free(model->values);
    free(model->mass);
    free(model->inverse_mass);
    memset(model, 0, sizeof *model);
}

double mapgen_time_step(const MapgenModel *model, double period, double safety) {
    double limit = safety * model->dt_cfl;
    double substeps = ceil(period / limit - 1e-9);
    return period / fmax(substeps, 1.0);
}

/* Removes the driven nodes' normal component from a dof vector. */
static void project(const MapgenDrive *drive, int d, double *x) {
    for (int k = 0; k < drive->node_count; k++) {
        double *xi = x + d * drive->nodes[k], dot = 0.0;
        for (int a = 0; a < d; a++)
            dot += xi[a] * drive->direction[a];
        for (int a = 0; a < d; a++)
            xi[a] -= dot * drive->direction[a];
    }
}

/* Removes what the drive forbids from a dof vector: also the held dofs. */
static void project_held(const MapgenModel *model, const MapgenDrive *drive, double *x) {
    project(drive, model->dimension, x);
    if (!drive->held)
        return;
    for (int k = 0; k < model->dof_count; k++)
        if (drive->held[k])
            x[k] = 0.0;
}

/* The force the body pushes the indenter back with: -sum n . (K u) over the driven nodes. */
static double drive_reaction(const MapgenDrive *drive, int d, const double *force) {
    double r = 0.0;
    for (int k = 0; k < drive->node_count; k++)
        for (int a = 0; a < d; a++)
            r -= force[d * drive->nodes[k] + a] * drive->direction[a];
    return r;
}

/* u = -D n at the driven nodes (D = 1, eq. 3.11), 0 elsewhere. */
static void drive_displacement(const MapgenModel *model, const MapgenDrive *drive, double *u) {
    int d = model->dimension;
    memset(u, 0, (size_t)model->dof_count * sizeof *u);
    for (int k = 0; k < drive->node_count; k++)
        for (int a = 0; a < d; a++)
            u[d * drive->nodes[k] + a] = -drive->direction[a];
}

/* The acceleration of u: M^-1 (-K u) with the drive's constraints; returns the reaction. With a
 * relief (deformation only) the constraint forces also drive the rigid-body modes' removal. */
static double accelerate(const MapgenModel *model, const MapgenDrive *drive,
                         const MapgenRelief *relief, const double *u, double *a) {
    mapgen_model_apply(model, u, a);
    double reaction = relief ? 0.0 : drive_reaction(drive, model->dimension, a);
    for (int d = 0; d < model->dof_count; d++)
        a[d] = -a[d] * model->inverse_mass[d];
    if (relief)
        return mapgen_relief_accelerate(relief, a);
    project_held(model, drive, a);
    return reaction;
}

IssimStatus mapgen_step_response(const MapgenModel *model, const MapgenDrive *drive, double period,
                                 int samples, double safety, double *h, MapgenProgress progress,
                                 void *user, IssimError *err) {
    int nd = model->dof_count;
    double dt = mapgen_time_step(model, period, safety);
    long substeps = lround(period / dt);
    MapgenRelief relief = {0};
    double *u = malloc((size_t)nd * sizeof *u), *v = calloc((size_t)nd, sizeof *v),
           *f = malloc((size_t)nd * sizeof *f);
    IssimStatus st = !u || !v || !f
                         ? issim_error_set(err, ISSIM_ERR_NOMEM, "step response: out of memory")
                         : ISSIM_OK;
    if (st == ISSIM_OK && drive->deformation_only)
        st = mapgen_relief_build(model, drive, &relief, err);
    if (st == ISSIM_OK && drive->deformation_only)
        st = mapgen_relief_start(&relief, u, err);
    else if (st == ISSIM_OK)
        drive_displacement(model, drive, u);
    const MapgenRelief *r = drive->deformation_only ? &relief : NULL;
    long total = substeps * samples;
    /* Step n's reaction R_n changes the momentum by dt R_n between the half steps n - 1/2 and
     * n + 1/2, so the impulse up to a sample boundary kT counts R_kT with weight 1/2 on each
     * side. Step 0 is the exception: its whole impulse, the jump's (the largest of all: about
     * the Courant number times rho c w per unit displacement), acts after t = 0 and belongs to
     * the first sample. */
    double sum = 0.0;
    for (long step = 0; step <= total && st == ISSIM_OK; step++) {
        double reaction = accelerate(model, drive, r, u, f);
        bool boundary = step > 0 && step % substeps == 0;
        sum += boundary ? 0.5 * reaction : reaction;
        if (boundary) {
            long k = step / substeps - 1;
            h[k] = sum / (double)substeps;
            sum = 0.5 * reaction;
            if (!isfinite(h[k]))
                st = issim_error_set(err, ISSIM_ERR_NUMERIC,
                                     "step response diverged at t = %g s (time step %g s)",
                                     (double)(k + 1) * period, dt);
        }
        if (step == total)
            break;
        for (int d = 0; d < nd; d++) {
            v[d] += dt * f[d];
            u[d] += dt * v[d];
        }
        if (progress && step % 1000 == 0)
            progress(user, (double)step / (double)total);
    }
    if (progress)
        progress(user, 1.0);
    mapgen_relief_free(&relief);
    free(u);
    free(v);
    free(f);
    return st;
}

IssimStatus mapgen_conjugate_gradients(const MapgenModel *model, double *u, double *r,
                                       MapgenConstrain constrain, const void *user,
                                       IssimError *err) {
    int nd = model->dof_count, dim = model->dimension;
    double *z = malloc((size_t)nd * sizeof *z), *p = malloc((size_t)nd * sizeof *p),
           *q = malloc((size_t)nd * sizeof *q), *diag = malloc((size_t)nd * sizeof *diag);
    IssimStatus st = ISSIM_OK;
    if (!z || !p || !q || !diag) {
        st = issim_error_set(err, ISSIM_ERR_NOMEM, "static solve: out of memory");
        goto done;
    }
    for (int i = 0; i < model->mesh->node_count; i++) {
        const double *blk = model->values + dim * dim * model->row_start[i];
        for (int e = model->row_start[i]; e < model->row_start[i + 1]; e++)
            if (model->columns[e] == i)
                blk = model->values + dim * dim * e;
        for (int a = 0; a < dim; a++)
            diag[dim * i + a] = 1.0 / blk[(dim + 1) * a];
    }
    double rz = 0.0, r0 = 0.0;
    if (constrain)
        constrain(user, r);
    for (int d = 0; d < nd; d++) {
        z[d] = diag[d] * r[d];
        r0 += r[d] * r[d];
    }
    if (constrain)
        constrain(user, z);
    for (int d = 0; d < nd; d++) {
        p[d] = z[d];
        rz += r[d] * z[d];
    }
    int iterations = 0;
    for (; iterations < 20 * nd; iterations++) {
        double rr = 0.0;
        for (int d = 0; d < nd; d++)
            rr += r[d] * r[d];
        if (rr <= 1e-24 * r0 || r0 == 0.0)
            break;
        mapgen_model_apply(model, p, q);
        if (constrain)
            constrain(user, q);
        double pq = 0.0;
        for (int d = 0; d < nd; d++)
            pq += p[d] * q[d];
        double alpha = rz / pq;
        for (int d = 0; d < nd; d++) {
            u[d] += alpha * p[d];
            r[d] -= alpha * q[d];
            z[d] = diag[d] * r[d];
        }
        if (constrain)
            constrain(user, z);
        double rz_next = 0.0;
        for (int d = 0; d < nd; d++)
            rz_next += r[d] * z[d];
        for (int d = 0; d < nd; d++)
            p[d] = z[d] + rz_next / rz * p[d];
        rz = rz_next;
    }
    if (iterations >= 20 * nd)
        st = issim_error_set(err, ISSIM_ERR_NUMERIC,
                             "static solve did not converge: is the body supported?");
done:
    free(z);
    free(p);
    free(q);
    free(diag);
    return st;
}

static void constrain_drive(const void *user, double *x) {
    const MapgenModel *model = ((const void *const *)user)[0];
    project_held(model, ((const void *const *)user)[1], x);
}

/* K u = 0 on the unconstrained subspace, the drive prescribed. */
IssimStatus mapgen_static_response(const MapgenModel *model, const MapgenDrive *drive,
                                   double *reaction, IssimError *err) {
    if (drive->deformation_only)
        return mapgen_relief_static(model, drive, reaction, err);
    int nd = model->dof_count;
    double *u = malloc((size_t)nd * sizeof *u), *r = malloc((size_t)nd * sizeof *r);
    IssimStatus st = ISSIM_OK;
    if (!u || !r)
        st = issim_error_set(err, ISSIM_ERR_NOMEM, "static solve: out of memory");
    if (st == ISSIM_OK) {
        drive_displacement(model, drive, u);
        mapgen_model_apply(model, u, r);
        for (int d = 0; d < nd; d++)
            r[d] = -r[d];
        const void *user[2] = {model, drive};
        st = mapgen_conjugate_gradients(model, u, r, constrain_drive, user, err);
    }
    if (st == ISSIM_OK) {
        mapgen_model_apply(model, u, r);
        *reaction = drive_reaction(drive, model->dimension, r);
    }
    free(u);
    free(r);
    return st;
}

static double energy_of(const MapgenModel *model, const double *u, const double *ku,
                        const double *v_before, const double *v_after) {
    double e = 0.0;
    for (int d = 0; d < model->dof_count; d++) {
        double v = 0.5 * (v_before[d] + v_after[d]);
        e += 0.5 * model->mass[d] * v * v + 0.5 * u[d] * ku[d];
    }
    return e;
}

void mapgen_free_run(const MapgenModel *model, const double *velocity0, double dt, int steps,
                     double *energy) {
    int nd = model->dof_count;
    double *u = calloc((size_t)nd, sizeof *u), *v = malloc((size_t)nd * sizeof *v),
           *v_next = malloc((size_t)nd * sizeof *v_next), *ku = malloc((size_t)nd * sizeof *ku);
    if (!u || !v || !v_next || !ku)
        goto done;
    memcpy(v, velocity0, (size_t)nd * sizeof *v); /* v(-1/2) = v(0): u(0) = 0, a(0) = 0 */
    for (int n = 0; n <= steps; n++) {
        mapgen_model_apply(model, u, ku);
        for (int d = 0; d < nd; d++)
            v_next[d] = v[d] - dt * ku[d] * model->inverse_mass[d];
        energy[n] = energy_of(model, u, ku, v, v_next);
        for (int d = 0; d < nd; d++) {
            v[d] = v_next[d];
            u[d] += dt * v[d];
        }
    }
done:
    free(u);
    free(v);
    free(v_next);
    free(ku);
}
