/* The deformable part of a contact-response map (seed 000 3.7.2 and 4.3: a map is a transient
 * that settles to "the characteristic solution for the geometry", Fig. 4.1's steady state).
 *
 * Why: a free body's step response (000 eqs. 3.11-3.12 with every other node traction-free)
 * has no steady state. Holding one node displaced, the whole body recoils and bounces on the
 * contact: the map then carries the body's rigid-body motion, which a simulator that moves the
 * body rigidly (the engine) integrates a second time. Here the displacement is split as
 * u = rigid + w, the rigid part the mass-weighted mean motion (2 translations and a rotation in
 * plane strain, 3 and 3 in 3D) that the engine owns, w the deformation, M-orthogonal to the
 * rigid-body modes Phi (Phi^T M w = 0). The contact force F = E lambda accelerates the rigid
 * part by Phi Phi^T E lambda; the deformation obeys the inertia-relief equation
 *   M w'' + K w = P^T E lambda,   P = I - Phi Phi^T M,
 * (the force balanced by the body's own d'Alembert load, so the response settles to the
 * static solution of a body floating free under a point load). The drive holds the driven
 * dofs of w: E^T w = -D from t = 0. With a = P M^-1 (E lambda - K w) and E^T a = 0:
 *   (E^T P M^-1 E) lambda = -E^T P M^-1 (-K w),
 * an s x s system (s driven nodes) with a constant matrix. Since K Phi = 0, P M^-1 K w = M^-1 K w
 * in exact arithmetic; the projection is applied anyway so round-off never feeds the rigid
 * modes. Why not clamp the body at a far point: a support reflects the returning waves with
 * the wrong sign (a fixed end instead of the bar's free end) and its steady state depends on
 * where the support is; inertia relief changes neither the waves nor the free boundary.
 */
#include "mapgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double mass_dot(const MapgenModel *model, const double *x, const double *y) {
    double s = 0.0;
    for (int k = 0; k < model->dof_count; k++)
        s += model->mass[k] * x[k] * y[k];
    return s;
}

int mapgen_rigid_modes(const MapgenModel *model, double *modes) {
    int d = model->dimension, n = model->mesh->node_count, nd = model->dof_count;
    int count = d == 2 ? 3 : 6;
    double centre[3] = {0, 0, 0}, total = 0.0;
    for (int i = 0; i < n; i++) {
        total += model->mass[d * i];
        for (int a = 0; a < d; a++)
            centre[a] += model->mass[d * i] * model->mesh->points[d * i + a];
    }
    for (int a = 0; a < d; a++)
        centre[a] /= total;
    memset(modes, 0, (size_t)count * (size_t)nd * sizeof *modes);
    for (int i = 0; i < n; i++) {
        const double *p = model->mesh->points + d * i;
        double r[3] = {p[0] - centre[0], p[1] - centre[1], d == 3 ? p[2] - centre[2] : 0.0};
        for (int a = 0; a < d; a++)
            modes[a * nd + d * i + a] = 1.0;
        if (d == 2) { /* rotation about the out-of-plane axis: (-y, x) */
            modes[2 * nd + 2 * i] = -r[1];
            modes[2 * nd + 2 * i + 1] = r[0];
            continue;
        }
        for (int axis = 0; axis < 3; axis++) { /* e_axis x r */
            double *m = modes + (3 + axis) * nd + 3 * i;
            int b = (axis + 1) % 3, c = (axis + 2) % 3;
            m[c] = r[b];
            m[b] = -r[c];
        }
    }
    /* Gram-Schmidt in the mass inner product, twice (the rotations are far from unit size). */
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < count; j++) {
            double *mj = modes + (size_t)j * nd;
            for (int k = 0; k < j; k++) {
                double c = mass_dot(model, modes + (size_t)k * nd, mj);
                for (int e = 0; e < nd; e++)
                    mj[e] -= c * modes[(size_t)k * nd + e];
            }
            double norm = sqrt(mass_dot(model, mj, mj));
            for (int e = 0; e < nd; e++)
                mj[e] /= norm;
        }
    return count;
}

void mapgen_rigid_remove(const MapgenModel *model, const double *modes, int count, double *x) {
    int nd = model->dof_count;
    for (int j = 0; j < count; j++) {
        double c = mass_dot(model, modes + (size_t)j * nd, x);
        for (int e = 0; e < nd; e++)
            x[e] -= c * modes[(size_t)j * nd + e];
    }
}

/* Inverts the s x s matrix a in place (Gauss-Jordan, partial pivoting); false when singular. */
static bool invert(int s, double *a) {
    double *b = calloc((size_t)s * (size_t)s, sizeof *b);
    bool ok = b != NULL;
    for (int i = 0; ok && i < s; i++)
        b[i * s + i] = 1.0;
    for (int c = 0; ok && c < s; c++) {
        int best = c;
        for (int r = c + 1; r < s; r++)
            if (fabs(a[r * s + c]) > fabs(a[best * s + c]))
                best = r;
        ok = a[best * s + c] != 0.0 && isfinite(a[best * s + c]);
        for (int k = 0; ok && k < s; k++) {
            double t = a[c * s + k];
            a[c * s + k] = a[best * s + k];
            a[best * s + k] = t;
            t = b[c * s + k];
            b[c * s + k] = b[best * s + k];
            b[best * s + k] = t;
        }
        for (int r = 0; ok && r < s; r++) {
            if (r == c)
                continue;
            double f = a[r * s + c] / a[c * s + c];
            for (int k = 0; k < s; k++) {
                a[r * s + k] -= f * a[c * s + k];
                b[r * s + k] -= f * b[c * s + k];
            }
        }
    }
    for (int r = 0; ok && r < s; r++) {
        double pivot = a[r * s + r];
        for (int k = 0; k < s; k++)
            a[r * s + k] = b[r * s + k] / pivot;
    }
    free(b);
    return ok;
}

/* e_j . x: the driven dof j's component of x (along the drive's direction). */
static double driven_component(const MapgenRelief *relief, int j, const double *x) {
    int d = relief->model->dimension;
    const double *xi = x + d * relief->drive->nodes[j];
    double c = 0.0;
    for (int a = 0; a < d; a++)
        c += xi[a] * relief->drive->direction[a];
    return c;
}

/* x = P e_j, scaled by the inverse mass when with_mass: P M^-1 e_j. */
static void projected_unit(const MapgenRelief *relief, int j, bool with_mass, double *x) {
    const MapgenModel *model = relief->model;
    int d = model->dimension, node = relief->drive->nodes[j];
    memset(x, 0, (size_t)model->dof_count * sizeof *x);
    for (int a = 0; a < d; a++)
        x[d * node + a] =
            relief->drive->direction[a] * (with_mass ? model->inverse_mass[d * node + a] : 1.0);
    mapgen_rigid_remove(model, relief->modes, relief->mode_count, x);
}

IssimStatus mapgen_relief_build(const MapgenModel *model, const MapgenDrive *drive,
                                MapgenRelief *relief, IssimError *err) {
    *relief = (MapgenRelief){.model = model, .drive = drive};
    if (drive->held)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "deformation only: the body has supports (held dofs), so it has no "
                               "rigid-body motion to remove");
    size_t nd = (size_t)model->dof_count, s = (size_t)drive->node_count;
    relief->modes = malloc(6 * nd * sizeof *relief->modes);
    relief->constraint = malloc(s * nd * sizeof *relief->constraint);
    relief->gain = malloc(s * s * sizeof *relief->gain);
    relief->lambda = malloc(s * sizeof *relief->lambda);
    if (!relief->modes || !relief->constraint || !relief->gain || !relief->lambda) {
        mapgen_relief_free(relief);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "deformation only: out of memory");
    }
    relief->mode_count = mapgen_rigid_modes(model, relief->modes);
    for (size_t k = 0; k < s; k++)
        projected_unit(relief, (int)k, true, relief->constraint + k * nd);
    for (size_t j = 0; j < s; j++)
        for (size_t k = 0; k < s; k++)
            relief->gain[j * s + k] = driven_component(relief, (int)j, relief->constraint + k * nd);
    if (!invert((int)s, relief->gain)) {
        mapgen_relief_free(relief);
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "deformation only: the %d driven nodes' constraints are dependent",
                               drive->node_count);
    }
    return ISSIM_OK;
}

void mapgen_relief_free(MapgenRelief *relief) {
    free(relief->modes);
    free(relief->constraint);
    free(relief->gain);
    free(relief->lambda);
    memset(relief, 0, sizeof *relief);
}

/* w = sum_k y_k c_k with C y = target, c_k the columns given (dof vectors), C_jk = e_j . c_k;
 * y (Nullable, may be target) gets the coefficients. */
static bool combine(const MapgenRelief *relief, const double *columns, const double *target,
                    double *w, double *y_out) {
    int s = relief->drive->node_count, nd = relief->model->dof_count;
    double *c = malloc((size_t)s * (size_t)s * sizeof *c);
    bool ok = c != NULL;
    for (int j = 0; ok && j < s; j++)
        for (int k = 0; k < s; k++)
            c[j * s + k] = driven_component(relief, j, columns + (size_t)k * nd);
    ok = ok && invert(s, c);
    double *y = malloc((size_t)s * sizeof *y);
    ok = ok && y;
    memset(w, 0, (size_t)nd * sizeof *w);
    for (int k = 0; ok && k < s; k++) {
        y[k] = 0.0;
        for (int j = 0; j < s; j++)
            y[k] += c[k * s + j] * target[j];
        for (int e = 0; e < nd; e++)
            w[e] += y[k] * columns[(size_t)k * nd + e];
    }
    if (ok && y_out)
        memcpy(y_out, y, (size_t)s * sizeof *y);
    free(y);
    free(c);
    return ok;
}

IssimStatus mapgen_relief_start(const MapgenRelief *relief, double *w, IssimError *err) {
    int s = relief->drive->node_count, nd = relief->model->dof_count;
    double *columns = malloc((size_t)s * (size_t)nd * sizeof *columns),
           *target = malloc((size_t)s * sizeof *target);
    bool ok = columns && target;
    for (int k = 0; ok && k < s; k++) {
        projected_unit(relief, k, false, columns + (size_t)k * nd);
        target[k] = -1.0; /* D = 1 m into the body (eq. 3.11) */
    }
    ok = ok && combine(relief, columns, target, w, NULL);
    free(columns);
    free(target);
    return ok ? ISSIM_OK
              : issim_error_set(err, ISSIM_ERR_NUMERIC,
                                "deformation only: cannot place the %d driven nodes", s);
}

double mapgen_relief_accelerate(const MapgenRelief *relief, double *a) {
    int s = relief->drive->node_count, nd = relief->model->dof_count;
    mapgen_rigid_remove(relief->model, relief->modes, relief->mode_count, a);
    for (int k = 0; k < s; k++)
        relief->lambda[k] = driven_component(relief, k, a);
    double reaction = 0.0;
    for (int j = 0; j < s; j++) {
        double lambda = 0.0;
        for (int k = 0; k < s; k++)
            lambda -= relief->gain[j * s + k] * relief->lambda[k];
        const double *c = relief->constraint + (size_t)j * nd;
        for (int e = 0; e < nd; e++)
            a[e] += lambda * c[e];
        reaction -= lambda;
    }
    return reaction;
}

static void remove_rigid(const void *user, double *x) {
    const MapgenRelief *relief = user;
    mapgen_rigid_remove(relief->model, relief->modes, relief->mode_count, x);
}

/* For each driven dof k: K x_k = P^T e_k, the unit force balanced by the body's inertia,
 * solved by conjugate gradients (K is singular, the right side orthogonal to its null space,
 * the rigid-body modes: a consistent system), then the compliance C_jk = e_j . x_k and the
 * reaction of E^T w = -D. */
IssimStatus mapgen_relief_static(const MapgenModel *model, const MapgenDrive *drive,
                                 double *reaction, IssimError *err) {
    MapgenRelief relief;
    IssimStatus st = mapgen_relief_build(model, drive, &relief, err);
    if (st != ISSIM_OK)
        return st;
    int s = drive->node_count, nd = model->dof_count;
    double *x = calloc((size_t)s * (size_t)nd, sizeof *x), *r = malloc((size_t)nd * sizeof *r),
           *w = malloc((size_t)nd * sizeof *w), *lambda = calloc((size_t)s, sizeof *lambda);
    if (!x || !r || !w || !lambda)
        st = issim_error_set(err, ISSIM_ERR_NOMEM, "deformation only, static: out of memory");
    for (int k = 0; st == ISSIM_OK && k < s; k++) {
        double *xk = x + (size_t)k * nd;
        /* P^T e_k = M (P M^-1 e_k): the constraint column times the mass. */
        for (int e = 0; e < nd; e++)
            r[e] = model->mass[e] * relief.constraint[(size_t)k * nd + e];
        st = mapgen_conjugate_gradients(model, xk, r, remove_rigid, &relief, err);
        mapgen_rigid_remove(model, relief.modes, relief.mode_count, xk);
        lambda[k] = -1.0; /* the target first: D = 1 m into the body at each driven node */
    }
    if (st == ISSIM_OK && !combine(&relief, x, lambda, w, lambda))
        st = issim_error_set(err, ISSIM_ERR_NUMERIC, "deformation only, static: singular");
    /* w = sum_k lambda_k x_k: the reaction is -sum lambda_k (the indenter pushes inward). */
    *reaction = 0.0;
    for (int k = 0; st == ISSIM_OK && k < s; k++)
        *reaction -= lambda[k];
    free(x);
    free(r);
    free(w);
    free(lambda);
    mapgen_relief_free(&relief);
    return st;
}
