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
    return e->velocity_dim;
}

int engine_body_velocity_offset(const Engine *e, int body) {
    return e->bodies[body].velocity_offset;
}

static int find_root(int *parent, int i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

int engine_islands(const Engine *e, int *island_of_body) {
    int n = e->body_count;
    int *parent = island_of_body; /* union-find in place, relabelled below */
    for (int i = 0; i < n; i++)
        parent[i] = i;
    /* Only body-body contacts join islands; fixed obstacles never do (004 App. E: obstacles
     * do not propagate). This contacts are all body-obstacle, so each body is its own
     * island until the collision manager adds body-body contacts. */
    int label_count = 0;
    int *labels = (int *)e->scratch; /* scratch is at least 6 * (state_size + 1) doubles */
    for (int i = 0; i < n; i++)
        labels[i] = -1;
    for (int i = 0; i < n; i++) {
        int r = find_root(parent, i);
        if (labels[r] < 0)
            labels[r] = label_count++;
    }
    for (int i = 0; i < n; i++)
        island_of_body[i] = labels[find_root(parent, i)];
    return label_count;
}

void engine_mass_matrix(const Engine *e, double *m) {
    int n = e->velocity_dim;
    memset(m, 0, sizeof(double) * (size_t)n * (size_t)n);
    for (int b = 0; b < e->body_count; b++) {
        const EngineBody *body = &e->bodies[b];
        int o = body->velocity_offset;
        if (e->planar) {
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

int engine_contact_jacobian(const Engine *e, double *j, int max_rows) {
    int n = e->velocity_dim;
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
        Vec3 point;
        engine_contact_kinematics(e, e->y, c, e->t, &k, &point, NULL);
        EngineBodyState st = engine_block_state(e, e->y, c->body);
        Vec3 r = vec3_sub(point, st.pos);
        Vec3 rxn = vec3_cross(r, k.normal);
        int o = e->bodies[c->body].velocity_offset;
        /* separation rate = n . (v + w x r) = n . v + (r x n) . w */
        if (e->planar) {
            j[row + rows * o] = k.normal.x;
            j[row + rows * (o + 1)] = k.normal.z;
            j[row + rows * (o + 2)] = rxn.y;
        } else {
            double coeffs[6] = {k.normal.x, k.normal.y, k.normal.z, rxn.x, rxn.y, rxn.z};
            for (int i = 0; i < 6; i++)
                j[row + rows * (o + i)] = coeffs[i];
        }
        row++;
    }
    return rows;
}
