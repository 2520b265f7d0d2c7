/* 001 2.2's delta(s^{t+dt}): the contact distances of an island after a trial step with
 * velocities u' (EngineIslandSystem.gap_after), for the fixpoint iteration that keeps them >= 0
 * "exactly" rather than to first order. Each contact point moves rigidly with its body by the
 * position update the RESOLVE stage applies (engine_complementarity.c: p+ = p + h v', the
 * attitude q+ = normalize(q + h q'(w')), in the plane theta+ = theta + h w'), and the distance
 * changes by the normal component of the two points' relative displacement, the normal held at
 * the start of the step. For a vertex on a plane (a box corner, a chair leg) this is the exact
 * distance of the configuration s'; its first-order part is gap + h Jn u'. */
#include "engine_internal.h"

#include <math.h>

/* Displacement of the point at arm r of body b in the trial step (zero for a held body). */
static Vec3 point_motion(const Engine *e, int b, const int *local, const int *island_of, int island,
                         double h, const double *u, Vec3 r) {
    if (b < 0 || island_of[b] != island || local[b] < 0)
        return vec3(0.0, 0.0, 0.0);
    const double *v = u + local[b];
    if (e->model.planar) {
        double theta = h * v[2], c = cos(theta), s = sin(theta);
        Vec3 turned = vec3(c * r.x + s * r.z, r.y, -s * r.x + c * r.z);
        return vec3_add(vec3(h * v[0], 0.0, h * v[1]), vec3_sub(turned, r));
    }
    Quat q = engine_block_state(e, e->y, b).orient;
    Quat dq = quat_derivative(q, vec3(v[3], v[4], v[5]));
    Quat next =
        quat_normalize((Quat){q.w + h * dq.w, q.x + h * dq.x, q.y + h * dq.y, q.z + h * dq.z});
    Vec3 turned = quat_rotate(quat_mul(next, quat_conj(q)), r);
    return vec3_add(vec3(h * v[0], h * v[1], h * v[2]), vec3_sub(turned, r));
}

void engine_island_gaps_after(const Engine *e, const int *rows, int m, const int *local,
                              const int *island_of, int island, const double *gap, double h,
                              const double *u_next, double *gap_out) {
    for (int i = 0; i < m; i++) {
        const EngineContact *c = &e->contacts[rows[i]];
        ContactKinematics k;
        Vec3 ra, rb;
        engine_contact_arms(e, e->y, c, e->data.t, &k, &ra, &rb);
        Vec3 da = point_motion(e, c->body, local, island_of, island, h, u_next, ra);
        Vec3 db = point_motion(e, c->body_b, local, island_of, island, h, u_next, rb);
        gap_out[i] = gap[i] + vec3_dot(k.normal, vec3_sub(da, db));
    }
}
