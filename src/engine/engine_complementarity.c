/* The RESOLVE stage: islands whose contact pairs name resolver = "complementarity" advance by
 * time steps with the scheme of 001 (Hotz et al.) eqs. 1-2:
 *
 *   M (u+ - u) = h f + Jn^T lambda_n (+ Jt^T lambda_t),     q+ = q + h G(q) u+,
 *
 * where the contact impulses lambda come from a complementarity solver
 * (EngineComplementaritySolver, engine.h). The engine assembles each island's system: the block
 * diagonal M (mass, world inertia), f (gravity, the bodies' forces, applied wrenches, the
 * gyroscopic term -w x I w, and the forces of force-law contacts inside the island, evaluated at
 * the start of the step), the normal Jacobian Jn (rows: separation rates, the convention of
 * engine_contact_jacobian), the tangent rows Jt of the contact frame, and the gaps s = -depth.
 * Positions follow the new velocities (semi-implicit), the attitude by the exponential-free
 * first-order update renormalised, as 001's time-stepping does.
 *
 * Each step has a velocity pass (gaps clamped at zero) and, when a contact overlaps, a position
 * pass (split impulse: pseudo-velocities that move the bodies out of the overlap and are not
 * kept), so a contact discovered late never launches a body.
 *
 * The reference solver (engine_complementarity_reference) is projected Gauss-Seidel on the
 * velocity-level LCP 0 <= lambda_n _|_ Jn u+ + s / h >= 0: the contact distance after the step
 * is kept non-negative to first order (001 2.2's nu with the linearised s^{t+dt}). It has no
 * friction; the complementarity issue brings Lemke, Fischer-Newton, friction and PGS for piles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/* Contacts of a complementarity pair within this gap (m) take part in the solve. */
#define RESOLVE_MARGIN 2e-3

typedef struct IslandWork {
    Engine *e;
    int body_count, contact_count, force_count;
    const int *bodies;   /* engine body indices */
    const int *contacts; /* complementarity rows: engine contact indices */
    const int *forces;   /* force-law contacts acting through f */
    int *local;          /* engine body -> island velocity offset, or -1 */
    int dim;
    double h;
    double *mass, *inv_mass, *force, *velocity, *jn, *jt, *gap, *mu, *mu_static;
    double *lambda_n, *lambda_t, *u_next, *rhs;
    /* The split position correction: gaps for each pass, its impulses and pseudo-velocities. */
    double *gap_velocity, *gap_position, *lambda_p, *lambda_pt, *u_position, *zero;
} IslandWork;

static int body_dim(const Engine *e) {
    return e->planar ? 3 : 6;
}

/* Scratch for an island of nb bodies and nc rows: (n^2 x 2) + n x 4 + nc x (n x 3 + 8). */
static double *reserve_scratch(Engine *e, size_t doubles) {
    if (doubles > e->resolve_capacity) {
        size_t cap = doubles > 2 * e->resolve_capacity ? doubles : 2 * e->resolve_capacity;
        double *p = realloc(e->resolve_scratch, sizeof(double) * cap);
        if (!p)
            return NULL;
        e->resolve_scratch = p;
        e->resolve_capacity = cap;
    }
    memset(e->resolve_scratch, 0, sizeof(double) * doubles);
    return e->resolve_scratch;
}

static bool reserve_index(Engine *e, int ints) {
    if (ints <= e->resolve_index_capacity)
        return true;
    int *p = realloc(e->resolve_index, sizeof(int) * (size_t)ints);
    if (!p)
        return false;
    e->resolve_index = p;
    e->resolve_index_capacity = ints;
    return true;
}

/* Adds sign * (n, r x n) at body b's columns of the island, if b is in it (a body outside is
 * held: it adds no unknown). */
static void add_row(const IslandWork *w, double *m, int rows, int row, int b, Vec3 n, Vec3 r,
                    double sign) {
    if (w->local[b] >= 0)
        engine_add_jacobian_row(w->e, m, rows, row, w->local[b], n, r, sign);
}

static void add_wrench(const IslandWork *w, int b, Vec3 f, Vec3 tau) {
    int o = w->local[b];
    if (o < 0)
        return;
    if (w->e->planar) {
        w->force[o] += f.x;
        w->force[o + 1] += f.z;
        w->force[o + 2] += tau.y;
        return;
    }
    double v[6] = {f.x, f.y, f.z, tau.x, tau.y, tau.z};
    for (int i = 0; i < 6; i++)
        w->force[o + i] += v[i];
}

/* M, M^-1, u and the bodies' own forces. */
static void assemble_bodies(IslandWork *w) {
    const Engine *e = w->e;
    int n = w->dim;
    for (int i = 0; i < w->body_count; i++) {
        int b = w->bodies[i], o = w->local[b];
        const EngineBody *body = &e->bodies[b];
        EngineBodyState st = engine_block_state(e, e->y, b);
        Vec3 f = engine_body_own_force(e, body);
        Vec3 tau = engine_body_own_torque(body);
        if (e->planar) {
            double m3[3] = {body->mass, body->mass, body->inertia.y};
            double u3[3] = {st.vel.x, st.vel.z, st.angvel.y};
            for (int k = 0; k < 3; k++) {
                w->mass[(o + k) + n * (o + k)] = m3[k];
                w->inv_mass[(o + k) + n * (o + k)] = 1.0 / m3[k];
                w->velocity[o + k] = u3[k];
            }
        } else {
            Mat3 inertia = mat3_world_inertia(st.orient, body->inertia), inv;
            mat3_inverse(inertia, &inv);
            tau = vec3_sub(tau, vec3_cross(st.angvel, mat3_mul_vec(inertia, st.angvel)));
            double u6[6] = {st.vel.x, st.vel.y, st.vel.z, st.angvel.x, st.angvel.y, st.angvel.z};
            for (int k = 0; k < 3; k++) {
                w->mass[(o + k) + n * (o + k)] = body->mass;
                w->inv_mass[(o + k) + n * (o + k)] = 1.0 / body->mass;
                for (int j = 0; j < 3; j++) {
                    w->mass[(o + 3 + k) + n * (o + 3 + j)] = inertia.m[k][j];
                    w->inv_mass[(o + 3 + k) + n * (o + 3 + j)] = inv.m[k][j];
                }
            }
            memcpy(w->velocity + o, u6, sizeof u6);
        }
        add_wrench(w, b, f, tau);
    }
}

/* Force-law contacts inside the island act through f, at the start of the step. */
static void assemble_force_laws(IslandWork *w) {
    for (int i = 0; i < w->force_count; i++) {
        const EngineContact *c = &w->e->contacts[w->forces[i]];
        ContactKinematics k;
        Vec3 ra, rb;
        engine_contact_arms(w->e, w->e->y, c, w->e->t, &k, &ra, &rb);
        ContactForce f = engine_contact_force(w->e, c, &k);
        Vec3 total = vec3_mad(f.tangent, f.normal, k.normal);
        add_wrench(w, c->body, total, vec3_cross(ra, total));
        if (c->body_b >= 0)
            add_wrench(w, c->body_b, vec3_scale(total, -1.0),
                       vec3_scale(vec3_cross(rb, total), -1.0));
    }
}

static void assemble_contacts(IslandWork *w) {
    int m = w->contact_count;
    for (int i = 0; i < m; i++) {
        const EngineContact *c = &w->e->contacts[w->contacts[i]];
        ContactKinematics k;
        Vec3 ra, rb, t1, t2;
        engine_contact_arms(w->e, w->e->y, c, w->e->t, &k, &ra, &rb);
        vec3_tangent_basis(k.normal, &t1, &t2);
        add_row(w, w->jn, m, i, c->body, k.normal, ra, 1.0);
        add_row(w, w->jt, 2 * m, 2 * i, c->body, t1, ra, 1.0);
        add_row(w, w->jt, 2 * m, 2 * i + 1, c->body, t2, ra, 1.0);
        if (c->body_b >= 0) {
            add_row(w, w->jn, m, i, c->body_b, k.normal, rb, -1.0);
            add_row(w, w->jt, 2 * m, 2 * i, c->body_b, t1, rb, -1.0);
            add_row(w, w->jt, 2 * m, 2 * i + 1, c->body_b, t2, rb, -1.0);
        }
        w->gap[i] = -k.depth;
        w->mu[i] = c->params.friction_kinetic;
        w->mu_static[i] = c->params.friction_static;
    }
}

/* out = base + M^-1 w->rhs (base Nullable: zero). */
static void apply_inv_mass(const IslandWork *w, const double *base, double *out) {
    int n = w->dim;
    for (int r = 0; r < n; r++) {
        double acc = 0.0;
        for (int j = 0; j < n; j++)
            acc += w->inv_mass[r + n * j] * w->rhs[j];
        out[r] = (base ? base[r] : 0.0) + acc;
    }
}

/* u+ = u + M^-1 (h f + Jn^T lambda_n + Jt^T lambda_t) into out. */
static void velocity_after(const IslandWork *w, const double *ln, const double *lt, double *out) {
    int n = w->dim, m = w->contact_count;
    for (int r = 0; r < n; r++) {
        double g = w->h * w->force[r];
        for (int i = 0; i < m; i++)
            g += w->jn[i + m * r] * ln[i] + w->jt[2 * i + 2 * m * r] * lt[2 * i] +
                 w->jt[2 * i + 1 + 2 * m * r] * lt[2 * i + 1];
        w->rhs[r] = g;
    }
    apply_inv_mass(w, w->velocity, out);
}

/* 001 2.2: the contact distances after a trial step (the points moved rigidly with their
 * bodies, engine_gap_after.c). */
static void gap_after(void *ctx, const double *u_next, double *gap_out) {
    const IslandWork *w = ctx;
    engine_island_gaps_after(w->e, w->contacts, w->contact_count, w->local, w->gap, w->h, u_next,
                             gap_out);
}

/* q+ = q + h G(q) (u+ + u_p) for every body of the island: the velocities become u+, the
 * pseudo-velocities u_p of the position correction move the bodies without staying in them. */
static void integrate_positions(IslandWork *w) {
    Engine *e = w->e;
    for (int i = 0; i < w->body_count; i++) {
        int b = w->bodies[i], o = w->local[b];
        const double *u = w->u_next + o, *p = w->u_position + o;
        EngineBodyState st = engine_block_state(e, e->y, b);
        if (e->planar) {
            st.vel = vec3(u[0], 0.0, u[1]);
            st.angvel = vec3(0.0, u[2], 0.0);
            double theta = quat_planar_angle_y(st.orient) + w->h * (u[2] + p[2]);
            st.orient = (Quat){cos(0.5 * theta), 0.0, sin(0.5 * theta), 0.0};
            st.pos = vec3_add(st.pos, vec3(w->h * (u[0] + p[0]), 0.0, w->h * (u[1] + p[1])));
        } else {
            st.vel = vec3(u[0], u[1], u[2]);
            st.angvel = vec3(u[3], u[4], u[5]);
            Quat dq = quat_derivative(st.orient, vec3(u[3] + p[3], u[4] + p[4], u[5] + p[5]));
            st.orient =
                quat_normalize((Quat){st.orient.w + w->h * dq.w, st.orient.x + w->h * dq.x,
                                      st.orient.y + w->h * dq.y, st.orient.z + w->h * dq.z});
            st.pos = vec3_add(
                st.pos, vec3(w->h * (u[0] + p[0]), w->h * (u[1] + p[1]), w->h * (u[2] + p[2])));
        }
        engine_block_store(e, e->y, b, &st);
    }
}

static IssimStatus run_solver(IslandWork *w, const EngineIslandSystem *sys,
                              EngineIslandSolution *sol, IssimError *err) {
    Engine *e = w->e;
    const EngineComplementaritySolver *solver =
        e->complementarity ? e->complementarity : engine_complementarity_reference();
    IssimError why = {0};
    if (solver->solve(e->complementarity ? e->complementarity_user : NULL, sys, sol, &why) ==
        ISSIM_OK)
        return ISSIM_OK;
    e->stats.complementarity_failures++;
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "complementarity solver %s failed on the island of %s (%d bodies, %d "
                           "contacts) at t = %.9g s: %s",
                           solver->name, e->bodies[w->bodies[0]].name, w->body_count,
                           w->contact_count, e->t, why.message);
}

static IssimStatus solve_step(IslandWork *w, int island, IssimError *err) {
    int n = w->dim, m = w->contact_count;
    memset(w->force, 0, sizeof(double) * (size_t)n);
    memset(w->mass, 0, sizeof(double) * (size_t)n * (size_t)n);
    memset(w->inv_mass, 0, sizeof(double) * (size_t)n * (size_t)n);
    memset(w->jn, 0, sizeof(double) * (size_t)m * (size_t)n);
    memset(w->jt, 0, sizeof(double) * 2 * (size_t)m * (size_t)n);
    memset(w->lambda_n, 0, sizeof(double) * (size_t)m);
    memset(w->lambda_t, 0, sizeof(double) * 2 * (size_t)m);
    assemble_bodies(w);
    assemble_force_laws(w);
    assemble_contacts(w);
    /* Velocity pass: a separated contact may close by its gap in the step, an overlapping one
     * may not deepen (gap 0). Position pass (split impulse): an overlap found late (a body
     * faster than the collision margin per step) is pushed out by pseudo-velocities that move
     * the bodies without staying in their velocities, so a late discovery never launches a body
     * (with s / h in the velocity pass a box landing at 2.2 m/s bounced at 0.52 m/s). */
    bool overlap = false;
    memset(w->u_position, 0, sizeof(double) * (size_t)n);
    memset(w->zero, 0, sizeof(double) * (size_t)n);
    for (int i = 0; i < m; i++) {
        w->gap_velocity[i] = fmax(w->gap[i], 0.0);
        w->gap_position[i] = fmin(w->gap[i], 0.0);
        overlap = overlap || w->gap[i] < 0.0;
    }
    EngineIslandSystem sys = {.h = w->h,
                              .dim = n,
                              .contacts = m,
                              .mass = w->mass,
                              .inv_mass = w->inv_mass,
                              .force = w->force,
                              .velocity = w->velocity,
                              .jn = w->jn,
                              .jt = w->jt,
                              .gap = w->gap_velocity,
                              .mu = w->mu,
                              .mu_static = w->mu_static,
                              .gap_after = gap_after,
                              .ctx = w};
    EngineIslandSolution sol = {.lambda_n = w->lambda_n, .lambda_t = w->lambda_t};
    if (m > 0 && run_solver(w, &sys, &sol, err) != ISSIM_OK)
        return ISSIM_ERR_NUMERIC;
    (void)island;
    velocity_after(w, w->lambda_n, w->lambda_t, w->u_next);
    if (overlap) {
        EngineIslandSystem push = sys;
        push.force = w->zero;
        push.velocity = w->zero;
        push.gap = w->gap_position;
        memset(w->lambda_p, 0, sizeof(double) * 3 * (size_t)m);
        EngineIslandSolution out = {.lambda_n = w->lambda_p, .lambda_t = w->lambda_pt};
        if (run_solver(w, &push, &out, err) != ISSIM_OK)
            return ISSIM_ERR_NUMERIC;
        /* u_p = M^-1 Jn^T lambda_p: the pseudo-velocity that closes the overlap in one step
         * (Jn^T lambda_p into rhs first, then one product) */
        for (int c = 0; c < n; c++) {
            double g = 0.0;
            for (int i = 0; i < m; i++)
                g += w->jn[i + m * c] * w->lambda_p[i];
            w->rhs[c] = g;
        }
        apply_inv_mass(w, NULL, w->u_position);
    }
    integrate_positions(w);
    return ISSIM_OK;
}

/* The island's bodies (ascending) and its contacts: rows of complementarity pairs within the
 * margin, and active force-law contacts. Returns false when out of memory. */
static bool gather_island(Engine *e, int root, IslandWork *w) {
    int need = 2 * e->body_count + 2 * e->contact_count + 4;
    if (!reserve_index(e, need))
        return false;
    int *bodies = e->resolve_index, *local = bodies + e->body_count;
    int *rows = local + e->body_count, *forces = rows + e->contact_count;
    int nb = 0, dim = 0;
    for (int i = 0; i < e->body_count; i++)
        local[i] = -1;
    for (int i = 0; i < e->stepped_count; i++) {
        int b = e->stepped_bodies[i];
        if (e->island_of_body[b] != root)
            continue;
        bodies[nb++] = b;
        local[b] = dim;
        dim += body_dim(e);
    }
    int nr = 0, nf = 0;
    for (int ci = 0; ci < e->contact_count; ci++) {
        const EngineContact *c = &e->contacts[ci];
        bool mine = local[c->body] >= 0 || (c->body_b >= 0 && local[c->body_b] >= 0);
        if (!mine)
            continue;
        if (e->pairs[c->pair].params.resolver == CONTACT_RESOLVER_FORCE_LAW) {
            if (c->active)
                forces[nf++] = ci;
            continue;
        }
        ContactKinematics k;
        engine_contact_kinematics(e, e->y, c, e->t, &k, NULL, NULL);
        if (k.depth > -RESOLVE_MARGIN)
            rows[nr++] = ci;
    }
    *w = (IslandWork){.e = e,
                      .body_count = nb,
                      .contact_count = nr,
                      .force_count = nf,
                      .bodies = bodies,
                      .contacts = rows,
                      .forces = forces,
                      .local = local,
                      .dim = dim};
    return true;
}

static bool carve_scratch(Engine *e, IslandWork *w) {
    size_t n = (size_t)w->dim, m = (size_t)w->contact_count;
    size_t total = 2 * n * n + 6 * n + 3 * m * n + 13 * m + 8;
    double *p = reserve_scratch(e, total);
    if (!p)
        return false;
    w->mass = p;
    w->inv_mass = w->mass + n * n;
    w->force = w->inv_mass + n * n;
    w->velocity = w->force + n;
    w->u_next = w->velocity + n;
    w->rhs = w->u_next + n;
    w->jn = w->rhs + n;
    w->jt = w->jn + m * n;
    w->gap = w->jt + 2 * m * n;
    w->mu = w->gap + m;
    w->mu_static = w->mu + m;
    w->lambda_n = w->mu_static + m;
    w->lambda_t = w->lambda_n + m;
    w->gap_velocity = w->lambda_t + 2 * m;
    w->gap_position = w->gap_velocity + m;
    w->lambda_p = w->gap_position + m;
    w->lambda_pt = w->lambda_p + m;
    w->u_position = w->lambda_pt + 2 * m;
    w->zero = w->u_position + n;
    return true;
}

bool engine_contact_time_stepped(const Engine *e, const EngineContact *c) {
    if (e->pairs[c->pair].params.resolver != CONTACT_RESOLVER_COMPLEMENTARITY)
        return false;
    bool a = e->bodies[c->body].resolver == CONTACT_RESOLVER_COMPLEMENTARITY;
    bool b = c->body_b >= 0 && e->bodies[c->body_b].resolver == CONTACT_RESOLVER_COMPLEMENTARITY;
    return a || b;
}

/* A row is active while it carries force or overlaps after the step; onset and end are events
 * as for force laws, and the model's history (friction state, model-owned state) begins and ends
 * with them. */
static void update_row_activity(IslandWork *w, double t) {
    Engine *e = w->e;
    for (int i = 0; i < w->contact_count; i++) {
        EngineContact *c = &e->contacts[w->contacts[i]];
        ContactKinematics k;
        engine_contact_kinematics(e, e->y, c, t, &k, NULL, NULL);
        c->resolved_force = w->lambda_n[i] / w->h;
        bool want = w->lambda_n[i] > 0.0 || k.depth > 0.0;
        if (want == c->active)
            continue;
        EngineEvent ev = engine_contact_event(c, t, -k.depth_rate);
        c->active = want;
        if (want) {
            c->id = ++e->next_contact_id;
            c->t_begin = t;
            engine_contact_begin(e, c, &k);
            ev.kind = ENGINE_EVENT_CONTACT_BEGIN;
        } else {
            engine_contact_end(e, c);
            c->resolved_force = 0.0;
            ev.kind = ENGINE_EVENT_CONTACT_END;
            ev.duration = t - c->t_begin;
        }
        ev.contact_id = c->id;
        engine_emit(e, &ev);
    }
}

IssimStatus engine_resolve_complementarity(Engine *e, double t_start, double t_target,
                                           IssimError *err) {
    double t_saved = e->t;
    for (int i = 0; i < e->stepped_count; i++) {
        int root = e->island_of_body[e->stepped_bodies[i]];
        if (root != e->stepped_bodies[i])
            continue; /* an island is advanced once, at its root (its smallest body index) */
        for (double t = t_start; t < t_target;) {
            double h = fmin(e->dt, t_target - t);
            if (t_target - (t + h) < 1e-12 * e->dt)
                h = t_target - t;
            e->t = t; /* contact kinematics are evaluated at the island's own time */
            IslandWork w;
            if (!gather_island(e, root, &w) || !carve_scratch(e, &w)) {
                e->t = t_saved;
                return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for an island");
            }
            w.h = h;
            IssimStatus s = solve_step(&w, root, err);
            if (s != ISSIM_OK) {
                e->t = t_saved;
                return s;
            }
            e->stats.complementarity_steps++;
            t = (h == t_target - t) ? t_target : t + h;
            update_row_activity(&w, t);
        }
    }
    e->t = t_saved;
    return ISSIM_OK;
}

/* ===== The reference solver: projected Gauss-Seidel ===== */

static IssimStatus pgs_solve(void *user, const EngineIslandSystem *sys, EngineIslandSolution *out,
                             IssimError *err) {
    (void)user;
    int n = sys->dim, m = sys->contacts;
    /* A = Jn M^-1 Jn^T and b = Jn (u + h M^-1 f) + s / h, formed once per solve: the free
     * velocity once, each row w_i = Jn_i M^-1 once (O(m n^2 + m^2 n)). */
    enum { PGS_MAX_SWEEPS = 500, STACK_ROWS = 64, STACK_DIM = 384 };
    double residual = 0.0;
    int sweep = 0;
    double stack_a[STACK_ROWS * STACK_ROWS + STACK_ROWS], stack_v[2 * STACK_DIM];
    double *amat = stack_a, *vfree = stack_v;
    double *heap = NULL;
    if (m > STACK_ROWS || n > STACK_DIM) {
        heap = malloc(sizeof(double) * ((size_t)m * (size_t)m + (size_t)m + 2 * (size_t)n));
        if (!heap)
            return issim_error_set(err, ISSIM_ERR_NOMEM, "PGS: out of memory for %d rows", m);
        amat = heap;
        vfree = heap + (size_t)m * (size_t)m + (size_t)m;
    }
    double *bvec = amat + (size_t)m * (size_t)m, *wrow = vfree + n;
    for (int r = 0; r < n; r++) {
        double minv_f = 0.0;
        for (int c = 0; c < n; c++)
            minv_f += sys->inv_mass[r + n * c] * sys->force[c];
        vfree[r] = sys->velocity[r] + sys->h * minv_f;
    }
    for (int i = 0; i < m; i++) {
        double free_rate = 0.0;
        for (int r = 0; r < n; r++) {
            double w = 0.0;
            for (int c = 0; c < n; c++)
                w += sys->jn[i + m * c] * sys->inv_mass[c + n * r];
            wrow[r] = w;
            free_rate += sys->jn[i + m * r] * vfree[r];
        }
        bvec[i] = free_rate + sys->gap[i] / sys->h;
        for (int j = 0; j < m; j++) {
            double acc = 0.0;
            for (int r = 0; r < n; r++)
                acc += wrow[r] * sys->jn[j + m * r];
            amat[i + m * j] = acc;
        }
    }
    for (sweep = 0; sweep < PGS_MAX_SWEEPS; sweep++) {
        residual = 0.0;
        for (int i = 0; i < m; i++) {
            if (!(amat[i + m * i] > 0.0))
                continue; /* a row that moves nothing (both sides held) */
            double wi = bvec[i];
            for (int j = 0; j < m; j++)
                wi += amat[i + m * j] * out->lambda_n[j];
            double next = fmax(0.0, out->lambda_n[i] - wi / amat[i + m * i]);
            residual = fmax(residual, fabs(next - out->lambda_n[i]) * amat[i + m * i]);
            out->lambda_n[i] = next;
        }
        if (residual < 1e-12)
            break;
    }
    free(heap);
    out->iterations = sweep;
    out->residual = residual;
    if (!isfinite(residual))
        return issim_error_set(err, ISSIM_ERR_NUMERIC, "PGS diverged (residual %g)", residual);
    return ISSIM_OK;
}

static const EngineComplementaritySolver reference_solver = {.name = "reference_pgs",
                                                             .solve = pgs_solve};

const EngineComplementaritySolver *engine_complementarity_reference(void) {
    return &reference_solver;
}
