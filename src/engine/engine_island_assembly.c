/* Assembly of one complementarity island's system and its products in block form, for the
 * RESOLVE stage (engine_complementarity.c): 001 (Hotz et al.) eqs. 1-2,
 *
 *   M (u+ - u) = h f + Jn^T lambda_n + Jt^T lambda_t,     q+ = q + h G(q) u+:
 *
 * M^-1 per body, f (gravity, applied wrenches, the gyroscopic term, force-law contacts inside the
 * island), the Jacobian blocks of each contact's normal and tangent rows, the dense M and J only
 * for solvers that ask, and the semi-implicit position update. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_island.h"
#include "issim/task_pool.h"

/* ===== Assembly ===== */

/* A candidate's height along -gravity: the mean of its island bodies' centres (a body held in
 * this solve, or an obstacle, does not count). */
static double candidate_height(const IslandWork *w, const EngineContact *c, Vec3 up) {
    int oa = offset_in(w, c->body), ob = offset_in(w, c->body_b);
    double sum = 0.0;
    int count = 0;
    if (oa >= 0)
        sum += vec3_dot(w->pose[oa / w->bd].pos, up), count++;
    if (ob >= 0)
        sum += vec3_dot(w->pose[ob / w->bd].pos, up), count++;
    return count ? sum / count : 0.0;
}

/* Orders the island's candidates from the top of the pile down, so that Gauss-Seidel relaxes its
 * rows in that order: one sweep then carries the weight each step's gravity adds through every
 * layer to the floor, where bottom-up it moves down one layer a sweep (the 240-body pile's big
 * island: 8 sweeps ending at 1e-2 m/s residual in the collision order, 1-2 sweeps at 1e-7 m/s
 * once it rests in this one). A bucket sort on the heights, O(m); keys uses the rows' gap array
 * before assembly fills it. */
void island_order_top_down(IslandWork *w, int *candidates, int count, double *keys) {
    Vec3 up = vec3_scale(w->e->model.gravity, -1.0);
    if (count < 2 || vec3_dot(up, up) == 0.0)
        return;
    double low = INFINITY, high = -INFINITY;
    for (int i = 0; i < count; i++) {
        keys[i] = candidate_height(w, &w->e->contacts[candidates[i]], up);
        low = fmin(low, keys[i]);
        high = fmax(high, keys[i]);
    }
    if (!(high > low))
        return;
    int *start = w->rows.order, *sorted = start + count + 2;
    double scale = (count - 1) / (high - low);
    memset(start, 0, sizeof(int) * (size_t)(count + 2));
    for (int i = 0; i < count; i++) /* bucket 0 the highest */
        start[(int)((high - keys[i]) * scale) + 1]++;
    for (int k = 0; k < count; k++)
        start[k + 1] += start[k];
    for (int i = 0; i < count; i++)
        sorted[start[(int)((high - keys[i]) * scale)]++] = candidates[i];
    memcpy(candidates, sorted, sizeof(int) * (size_t)count);
}

/* Body b's state at the step's start: the island's cached copy, or the engine's for a body
 * outside the island (held). */
static EngineBodyState body_state(const IslandWork *w, int b) {
    int o = offset_in(w, b);
    return o >= 0 ? w->pose[o / w->bd] : engine_block_state(w->e, w->e->y, b);
}

/* Bodies an island needs before its body loops go to the pool (w->pool). */
#define POOL_BODIES 64

static void read_poses_range(void *ctx, int begin, int end) {
    IslandWork *w = ctx;
    for (int i = begin; i < end; i++) {
        int b = w->bodies[i];
        w->pose[offset_in(w, b) / w->bd] = engine_block_state(w->e, w->e->y, b);
    }
}

/* Reads every island body's state once (engine_block_state renormalises the attitude: a tenth
 * of a small pile's step went there when each contact read its two bodies). */
void island_read_poses(IslandWork *w) {
    task_pool_for(w->body_count >= POOL_BODIES ? w->pool : NULL, w->body_count, POOL_BODIES,
                  read_poses_range, w);
}

static void add_wrench(const IslandWork *w, int b, Vec3 f, Vec3 tau) {
    int o = offset_in(w, b);
    if (o < 0)
        return;
    if (w->e->model.planar) {
        w->rows.force[o] += f.x;
        w->rows.force[o + 1] += f.z;
        w->rows.force[o + 2] += tau.y;
        return;
    }
    double v[6] = {f.x, f.y, f.z, tau.x, tau.y, tau.z};
    for (int i = 0; i < 6; i++)
        w->rows.force[o + i] += v[i];
}

/* M and M^-1 per body, u and the bodies' own forces: each iteration writes its body's slots
 * only. */
static void assemble_bodies_range(void *ctx, int begin, int end) {
    IslandWork *w = ctx;
    const Engine *e = w->e;
    int bd = w->bd;
    for (int i = begin; i < end; i++) {
        int b = w->bodies[i], o = offset_in(w, b);
        const EngineBody *body = &e->model.bodies[b];
        EngineBodyState st = w->pose[o / bd];
        Vec3 f = engine_body_own_force(e, b, e->data.t);
        Vec3 tau = engine_body_own_torque(e, b);
        double *mb = w->mat.mass_blocks + (size_t)o * bd, *ib = w->mat.inv_blocks + (size_t)o * bd;
        memset(mb, 0, sizeof(double) * (size_t)(bd * bd));
        memset(ib, 0, sizeof(double) * (size_t)(bd * bd));
        if (e->model.planar) {
            double m3[3] = {body->mass, body->mass, body->inertia.y};
            double u3[3] = {st.vel.x, st.vel.z, st.angvel.y};
            for (int k = 0; k < 3; k++) {
                mb[k + 3 * k] = m3[k];
                ib[k + 3 * k] = 1.0 / m3[k];
                w->rows.velocity[o + k] = u3[k];
            }
        } else {
            Mat3 inertia = mat3_world_inertia(st.orient, body->inertia), inv;
            mat3_inverse(inertia, &inv);
            tau = vec3_sub(tau, vec3_cross(st.angvel, mat3_mul_vec(inertia, st.angvel)));
            double u6[6] = {st.vel.x, st.vel.y, st.vel.z, st.angvel.x, st.angvel.y, st.angvel.z};
            for (int k = 0; k < 3; k++) {
                mb[k + 6 * k] = body->mass;
                ib[k + 6 * k] = 1.0 / body->mass;
                for (int j = 0; j < 3; j++) {
                    mb[(3 + k) + 6 * (3 + j)] = inertia.m[k][j];
                    ib[(3 + k) + 6 * (3 + j)] = inv.m[k][j];
                }
            }
            memcpy(w->rows.velocity + o, u6, sizeof u6);
        }
        add_wrench(w, b, f, tau);
    }
}

void island_assemble_bodies(IslandWork *w) {
    task_pool_for(w->body_count >= POOL_BODIES ? w->pool : NULL, w->body_count, POOL_BODIES,
                  assemble_bodies_range, w);
}

/* Force-law contacts inside the island act through f, at the start of the step. */
void island_assemble_force_laws(IslandWork *w) {
    for (int i = 0; i < w->force_count; i++) {
        const EngineContact *c = &w->e->contacts[w->forces[i]];
        ContactKinematics k;
        Vec3 ra, rb;
        engine_contact_arms(w->e, w->e->y, c, w->e->data.t, &k, &ra, &rb);
        ContactForce f = engine_contact_force(w->e, c, &k);
        Vec3 total = vec3_mad(f.tangent, f.normal, k.normal);
        add_wrench(w, c->body, total, vec3_cross(ra, total));
        if (c->body_b >= 0)
            add_wrench(w, c->body_b, vec3_scale(total, -1.0),
                       vec3_scale(vec3_cross(rb, total), -1.0));
    }
}

/* One body's Jacobian block: rows (n, r x n) for the contact frame's three directions. */
static void jacobian_block(const IslandWork *w, double j[3][6], const Vec3 *frame, Vec3 r,
                           double sign) {
    for (int row = 0; row < 3; row++) {
        Vec3 n = frame[row], rxn = vec3_cross(r, n);
        if (w->e->model.planar) {
            double c3[3] = {n.x, n.z, rxn.y};
            for (int k = 0; k < 3; k++)
                j[row][k] = sign * c3[k];
        } else {
            double c6[6] = {n.x, n.y, n.z, rxn.x, rxn.y, rxn.z};
            for (int k = 0; k < 6; k++)
                j[row][k] = sign * c6[k];
        }
    }
}

/* The previous step's impulse of contact c in this step's frame (zero for a new contact). */
static void warm_start_row(IslandWork *w, int i, const EngineContact *c) {
    const Vec3 *f = w->rows.frames + 3 * i;
    w->rows.warm_n[i] = fmax(vec3_dot(c->warm_impulse, f[0]), 0.0);
    w->rows.warm_t[2 * i] = vec3_dot(c->warm_impulse, f[1]);
    w->rows.warm_t[2 * i + 1] = vec3_dot(c->warm_impulse, f[2]);
}

/* How fast c's bodies approach along n at their points ra, rb (m/s, > 0 closing). */
static double closing_speed(const IslandWork *w, const EngineContact *c, Vec3 n, Vec3 ra, Vec3 rb) {
    EngineBodyState a = body_state(w, c->body);
    Vec3 va = spatial_point_velocity(a.vel, a.angvel, ra), vb = {0, 0, 0};
    if (c->body_b >= 0) {
        EngineBodyState b = body_state(w, c->body_b);
        vb = spatial_point_velocity(b.vel, b.angvel, rb);
    }
    return -vec3_dot(vec3_sub(va, vb), n);
}

/* A candidate's geometry at the step's start and whether it becomes a row. */
typedef enum { CANDIDATE_DROPPED, CANDIDATE_KEPT, CANDIDATE_NOT_FINITE } CandidateFate;

typedef struct CandidateGeometry {
    double depth;
    Vec3 normal, ra, rb;
    CandidateFate fate;
} CandidateGeometry;

static void candidate_geometry(const IslandWork *w, const EngineContact *c, CandidateGeometry *g) {
    const Engine *e = w->e;
    ContactKinematics k;
    Vec3 ra, rb;
    if (c->kind == CONTACT_MANIFOLD) { /* the geometry only: a pile has thousands */
        EngineBodyState a = body_state(w, c->body), b;
        if (c->body_b >= 0)
            b = body_state(w, c->body_b);
        engine_manifold_geometry(c, &a, c->body_b >= 0 ? &b : NULL, &k.depth, &k.normal, &ra, &rb);
    } else
        engine_contact_arms(e, e->y, c, e->data.t, &k, &ra, &rb);
    bool finite =
        isfinite(k.depth) && isfinite(k.normal.x) && isfinite(k.normal.y) && isfinite(k.normal.z);
    k.depth_rate = finite ? closing_speed(w, c, k.normal, ra, rb) : 0.0;
    g->fate = !finite                                                      ? CANDIDATE_NOT_FINITE
              : k.depth > -engine_speculative_reach(e, &k, RESOLVE_MARGIN) ? CANDIDATE_KEPT
                                                                           : CANDIDATE_DROPPED;
    g->depth = k.depth;
    g->normal = k.normal;
    g->ra = ra;
    g->rb = rb;
}

/* Row m from its candidate's geometry: frame, Jacobian blocks, gap, friction, id, warm start. */
static void fill_row(IslandWork *w, int m, const EngineContact *c, int candidate,
                     const CandidateGeometry *g) {
    Vec3 *f = w->rows.frames + 3 * m;
    f[0] = g->normal;
    vec3_tangent_basis(g->normal, &f[1], &f[2]);
    EngineContactBlock *blk = &w->mat.blocks[m];
    blk->offset_a = offset_in(w, c->body);
    blk->offset_b = offset_in(w, c->body_b);
    memset(blk->ja, 0, sizeof blk->ja);
    memset(blk->jb, 0, sizeof blk->jb);
    if (blk->offset_a >= 0)
        jacobian_block(w, blk->ja, f, g->ra, 1.0);
    if (blk->offset_b >= 0)
        jacobian_block(w, blk->jb, f, g->rb, -1.0);
    w->rows.gap[m] = -g->depth;
    const ContactParams *params = engine_contact_params(w->e, c);
    w->rows.mu[m] = params->friction_kinetic;
    w->rows.mu_static[m] = fmax(params->friction_static, params->friction_kinetic);
    w->rows.ids[m] =
        c->kind == CONTACT_MANIFOLD ? ((uint64_t)1 << 32) | c->collision_id : (uint64_t)candidate;
    warm_start_row(w, m, c);
}

/* The two loops of island_assemble_contacts, over candidates then rows: each iteration writes
 * its own slot only and reads the step's start, so they may run on the pool (w->pool). */
typedef struct RowAssembly {
    IslandWork *w;
    const int *candidates, *rows, *row_candidate;
    CandidateGeometry *geometry; /* per candidate */
} RowAssembly;

static void geometry_range(void *ctx, int begin, int end) {
    RowAssembly *ra = ctx;
    for (int ci = begin; ci < end; ci++) {
        const EngineContact *c = &ra->w->e->contacts[ra->candidates[ci]];
        /* Other kinds evaluate contact models' code, which was never asked to run on two
         * threads: on the engine thread, after this loop. */
        if (c->kind == CONTACT_MANIFOLD)
            candidate_geometry(ra->w, c, &ra->geometry[ci]);
    }
}

static void row_range(void *ctx, int begin, int end) {
    RowAssembly *ra = ctx;
    for (int m = begin; m < end; m++) {
        int ci = ra->row_candidate[m];
        fill_row(ra->w, m, &ra->w->e->contacts[ra->rows[m]], ra->candidates[ci], &ra->geometry[ci]);
    }
}

/* Iterations of an assembly loop a thread takes at a time. */
#define ASSEMBLY_GRAIN 128

/* This step's rows: the island's candidates within the margin (grown by what they close in the
 * step: engine_speculative_reach), their blocks and gaps. Returns the index of a non-finite
 * row, -1, or ISLAND_ROWS_NO_MEMORY. Every row's numbers are computed alike on any thread, so
 * the pool changes no bit. */
int island_assemble_contacts(IslandWork *w, int *rows, const int *candidates, int count) {
    RowAssembly ra = {.w = w,
                      .candidates = candidates,
                      .rows = rows,
                      .geometry = ISSIM_ARENA_ALLOC(w->scratch, CandidateGeometry, count),
                      .row_candidate = NULL};
    int *row_candidate = ISSIM_ARENA_ALLOC(w->scratch, int, count);
    if (count > 0 && (!ra.geometry || !row_candidate))
        return ISLAND_ROWS_NO_MEMORY;
    ra.row_candidate = row_candidate;
    TaskPool *pool = count >= ENGINE_PARALLEL_SOLVE_ROWS ? w->pool : NULL;
    task_pool_for(pool, count, ASSEMBLY_GRAIN, geometry_range, &ra);
    for (int ci = 0; ci < count; ci++)
        if (w->e->contacts[candidates[ci]].kind != CONTACT_MANIFOLD)
            candidate_geometry(w, &w->e->contacts[candidates[ci]], &ra.geometry[ci]);
    int m = 0, bad = -1;
    for (int ci = 0; ci < count && bad < 0; ci++) {
        if (ra.geometry[ci].fate == CANDIDATE_DROPPED)
            continue;
        if (ra.geometry[ci].fate == CANDIDATE_NOT_FINITE)
            bad = m;
        rows[m] = candidates[ci];
        row_candidate[m++] = ci;
    }
    w->contact_count = m;
    task_pool_for(pool, bad < 0 ? m : bad, ASSEMBLY_GRAIN, row_range, &ra);
    return bad;
}

/* The dense M, M^-1, Jn, Jt from the blocks, for solvers that factor them. */
bool island_assemble_dense(IslandWork *w) {
    int n = w->dim, m = w->contact_count, bd = w->bd;
    IssimArena *a = w->scratch;
    w->mat.mass = ISSIM_ARENA_ALLOC(a, double, (size_t)n *(size_t)n);
    w->mat.inv_mass = ISSIM_ARENA_ALLOC(a, double, (size_t)n *(size_t)n);
    w->mat.jn = ISSIM_ARENA_ALLOC(a, double, (size_t)m *(size_t)n);
    w->mat.jt = ISSIM_ARENA_ALLOC(a, double, 2 * (size_t)m * (size_t)n);
    if (!w->mat.mass || !w->mat.inv_mass || !w->mat.jn || !w->mat.jt)
        return false;
    memset(w->mat.mass, 0, sizeof(double) * (size_t)n * (size_t)n);
    memset(w->mat.inv_mass, 0, sizeof(double) * (size_t)n * (size_t)n);
    memset(w->mat.jn, 0, sizeof(double) * (size_t)m * (size_t)n);
    memset(w->mat.jt, 0, sizeof(double) * 2 * (size_t)m * (size_t)n);
    for (int o = 0; o < n; o += bd)
        for (int c = 0; c < bd; c++)
            for (int r = 0; r < bd; r++) {
                w->mat.mass[(o + r) + n * (o + c)] =
                    w->mat.mass_blocks[(size_t)o * bd + r + bd * c];
                w->mat.inv_mass[(o + r) + n * (o + c)] =
                    w->mat.inv_blocks[(size_t)o * bd + r + bd * c];
            }
    for (int i = 0; i < m; i++) {
        const EngineContactBlock *blk = &w->mat.blocks[i];
        for (int side = 0; side < 2; side++) {
            int o = side ? blk->offset_b : blk->offset_a;
            const double(*j)[6] = side ? blk->jb : blk->ja;
            if (o < 0)
                continue;
            for (int k = 0; k < bd; k++) {
                w->mat.jn[i + m * (o + k)] += j[0][k];
                w->mat.jt[2 * i + 2 * m * (o + k)] += j[1][k];
                w->mat.jt[2 * i + 1 + 2 * m * (o + k)] += j[2][k];
            }
        }
    }
    return true;
}

/* A sparse solver's workspace. */
bool island_reserve_work(IslandWork *w) {
    size_t need = ENGINE_SOLVER_WORK(w->contact_count, w->dim);
    w->mat.work = ISSIM_ARENA_ALLOC(w->scratch, double, need);
    w->mat.work_doubles = need;
    return w->mat.work != NULL;
}

/* ===== Products in block form ===== */

/* rhs += J^T (lambda_n, lambda_t) (lt Nullable: normal rows only). */
void island_add_jacobian_transpose(const IslandWork *w, const double *ln, const double *lt) {
    for (int i = 0; i < w->contact_count; i++) {
        const EngineContactBlock *blk = &w->mat.blocks[i];
        double l[3] = {ln[i], lt ? lt[2 * i] : 0.0, lt ? lt[2 * i + 1] : 0.0};
        for (int side = 0; side < 2; side++) {
            int o = side ? blk->offset_b : blk->offset_a;
            const double(*j)[6] = side ? blk->jb : blk->ja;
            if (o < 0)
                continue;
            for (int k = 0; k < w->bd; k++)
                w->rows.rhs[o + k] += j[0][k] * l[0] + j[1][k] * l[1] + j[2][k] * l[2];
        }
    }
}

/* out = base + M^-1 w->rows.rhs, block by block (base Nullable: zero). */
void island_apply_inv_mass(const IslandWork *w, const double *base, double *out) {
    int bd = w->bd;
    for (int o = 0; o < w->dim; o += bd) {
        const double *ib = w->mat.inv_blocks + (size_t)o * bd;
        for (int r = 0; r < bd; r++) {
            double acc = 0.0;
            for (int c = 0; c < bd; c++)
                acc += ib[r + bd * c] * w->rows.rhs[o + c];
            out[o + r] = (base ? base[o + r] : 0.0) + acc;
        }
    }
}

/* u+ = u + M^-1 (h f + Jn^T lambda_n + Jt^T lambda_t) into out. */
void island_velocity_after(const IslandWork *w, const double *ln, const double *lt, double *out) {
    for (int r = 0; r < w->dim; r++)
        w->rows.rhs[r] = w->h * w->rows.force[r];
    island_add_jacobian_transpose(w, ln, lt);
    island_apply_inv_mass(w, w->rows.velocity, out);
}

/* Jn_i u: contact i's separation rate at velocities u. */
double island_normal_rate(const IslandWork *w, int i, const double *u) {
    const EngineContactBlock *blk = &w->mat.blocks[i];
    double rate = 0.0;
    for (int k = 0; k < w->bd; k++) {
        if (blk->offset_a >= 0)
            rate += blk->ja[0][k] * u[blk->offset_a + k];
        if (blk->offset_b >= 0)
            rate += blk->jb[0][k] * u[blk->offset_b + k];
    }
    return rate;
}

/* 001 2.2: the contact distances after a trial step (the points moved rigidly with their
 * bodies, engine_gap_after.c). */
void island_gap_after(void *ctx, const double *u_next, double *gap_out) {
    const IslandWork *w = ctx;
    engine_island_gaps_after(w->e, w->contacts, w->contact_count, w->index->local,
                             w->index->island_of, w->island, w->rows.gap, w->h, u_next, gap_out);
}

/* q+ = q + h G(q) (u+ + u_p) for every body of the island: the velocities become u+, the
 * pseudo-velocities u_p of the position correction move the bodies without staying in them. */
void island_integrate_positions(IslandWork *w) {
    Engine *e = w->e;
    for (int i = 0; i < w->body_count; i++) {
        int b = w->bodies[i], o = offset_in(w, b);
        const double *u = w->rows.u_next + o, *p = w->split.u_position + o;
        EngineBodyState st = w->pose[o / w->bd];
        if (e->model.planar) {
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
        if (w->after)
            w->after[i] = st;
        else
            engine_block_store(e, e->y, b, &st);
    }
}

void island_store_positions(const IslandWork *w) {
    for (int i = 0; i < w->body_count; i++)
        engine_block_store(w->e, w->e->y, w->bodies[i], &w->after[i]);
}
