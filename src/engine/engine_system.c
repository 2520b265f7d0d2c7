/* System matrices for joint solvers over islands (ARCHITECTURE.md, second kind of contact
 * resolution): the assembled mass matrix M and the normal contact Jacobian, in the form the
 * complementarity scheme of 001 (eqs. 1-2: M v' = f + J^T N lambda) and Siira's multiple-contact
 * algorithm (004 App. C, with the gradient columns of 004 eq. 4.53) consume them.
 *
 * Generalized velocity per free body: (v, omega_world), 6; per planar body: (vx, vz, omega_y),
 * 3, as in 004 eq. 4.47 but with linear terms first, matching the free body.
 */
#include <string.h>

#include "engine_internal.h"

int engine_velocity_dim(const Engine *e) {
    return e->model.layout.velocity_dim;
}

int engine_body_velocity_offset(const Engine *e, int body) {
    return e->model.bodies[body].velocity_offset;
}

int engine_islands(const Engine *e, int *island_of_body) {
    int n = e->model.body_count;
    int *parent = island_of_body; /* union-find in place, relabelled below */
    for (int i = 0; i < n; i++)
        parent[i] = i;
    /* Only body-body contacts join islands; fixed obstacles never do (004 App. E: obstacles
     * do not propagate). */
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (!c->active || c->body_b < 0)
            continue;
        int ra = engine_find_root(parent, c->body), rb = engine_find_root(parent, c->body_b);
        if (ra != rb)
            parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
    }
    int label_count = 0;
    int *labels =
        (int *)e->integration.scratch; /* scratch is at least 6 * (state_size + 1) doubles */
    for (int i = 0; i < n; i++)
        labels[i] = -1;
    for (int i = 0; i < n; i++) {
        int r = engine_find_root(parent, i);
        if (labels[r] < 0)
            labels[r] = label_count++;
    }
    for (int i = 0; i < n; i++)
        island_of_body[i] = labels[engine_find_root(parent, i)];
    return label_count;
}

void engine_mass_matrix(const Engine *e, double *m) {
    int n = e->model.layout.velocity_dim;
    memset(m, 0, sizeof(double) * (size_t)n * (size_t)n);
    for (int b = 0; b < e->model.body_count; b++) {
        const EngineBody *body = &e->model.bodies[b];
        int o = body->velocity_offset;
        if (e->model.planar) {
            m[o + n * o] = body->mass;
            m[(o + 1) + n * (o + 1)] = body->mass;
            m[(o + 2) + n * (o + 2)] = body->inertia.y;
            continue;
        }
        EngineBodyState st = engine_block_state(e, e->y, b);
        Mat3 inertia = mat3_world_inertia(st.orient, body->inertia);
        for (int i = 0; i < 3; i++) {
            m[(o + i) + n * (o + i)] = body->mass;
            for (int j = 0; j < 3; j++)
                m[(o + 3 + i) + n * (o + 3 + j)] = inertia.m[i][j];
        }
    }
}

void engine_add_jacobian_row(const Engine *e, double *j, int rows, int row, int o, Vec3 n, Vec3 arm,
                             double sign) {
    Vec3 rxn = vec3_cross(arm, n);
    if (e->model.planar) {
        j[row + rows * o] += sign * n.x;
        j[row + rows * (o + 1)] += sign * n.z;
        j[row + rows * (o + 2)] += sign * rxn.y;
        return;
    }
    double coeffs[6] = {n.x, n.y, n.z, rxn.x, rxn.y, rxn.z};
    for (int i = 0; i < 6; i++)
        j[row + rows * (o + i)] += sign * coeffs[i];
}

int engine_contact_jacobian(const Engine *e, double *j, int max_rows) {
    int n = e->model.layout.velocity_dim;
    int rows = 0;
    for (int ci = 0; ci < e->contact_count && rows < max_rows; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (!c->active)
            continue;
        rows++;
    }
    memset(j, 0, sizeof(double) * (size_t)rows * (size_t)n);
    int row = 0;
    for (int ci = 0; ci < e->contact_count && row < rows; ci++) {
        const EngineContact *c = &e->contacts[ci];
        if (!c->active)
            continue;
        ContactKinematics k;
        Vec3 arm_a, arm_b;
        engine_contact_arms(e, e->y, c, e->data.t, &k, &arm_a, &arm_b);
        /* separation rate = n . (v_a + w_a x r_a) - n . (v_b + w_b x r_b)
         *                 = n . v_a + (r_a x n) . w_a - n . v_b - (r_b x n) . w_b */
        engine_add_jacobian_row(e, j, rows, row, e->model.bodies[c->body].velocity_offset, k.normal,
                                arm_a, 1.0);
        if (c->body_b >= 0)
            engine_add_jacobian_row(e, j, rows, row, e->model.bodies[c->body_b].velocity_offset,
                                    k.normal, arm_b, -1.0);
        row++;
    }
    return rows;
}
