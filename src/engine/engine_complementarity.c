/* The RESOLVE stage: islands whose contact pairs name resolver = "complementarity" advance by
 * time steps with the scheme of 001 (Hotz et al.) eqs. 1-2:
 *
 *   M (u+ - u) = h f + Jn^T lambda_n + Jt^T lambda_t,     q+ = q + h G(q) u+,
 *
 * where the contact impulses lambda come from a complementarity solver
 * (EngineComplementaritySolver, engine.h). The engine assembles each island's system: M^-1 per
 * body (mass, world inertia), f (gravity, the bodies' forces, applied wrenches, the gyroscopic
 * term -w x I w, and the forces of force-law contacts inside the island, evaluated at the start
 * of the step), per contact the Jacobian blocks of its normal row Jn (separation rate, the
 * convention of engine_contact_jacobian) and tangent rows Jt, and the gaps s = -depth. The dense
 * M and J (what Lemke and Fischer-Newton factor) are assembled only for solvers that ask for
 * them: a pile of a thousand bodies stays O(n + m) per step. Positions follow the new velocities
 * (semi-implicit), the attitude by the exponential-free first-order update renormalised, as
 * 001's time-stepping does.
 *
 * Each step has a velocity pass (gaps clamped at zero) and, when a contact overlaps, a position
 * pass (split impulse: pseudo-velocities that move the bodies out of the overlap and are not
 * kept, frictionless), so a contact discovered late never launches a body.
 *
 * Which solver runs is the pairs' live "solver" property (engine_complementarity_for); the
 * islands are partitioned once per advance (counting sort by island), so many small islands cost
 * no more than one large one. A non-finite row (a NaN normal) or a failed solve stops the
 * advance with the island and the reason; engine_advance keeps the last good state.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/* Contacts of a complementarity pair within this gap (m) take part in the solve. */
#define RESOLVE_MARGIN 2e-3
/* The largest dense system (doubles of M, M^-1, Jn, Jt: 400 MB) the engine assembles for a
 * dense solver; a settled pile of a thousand spheres would need about 2 GB. */
#define DENSE_LIMIT 5e7
/* Overlap an iterative (sparse) solver's island leaves in place (m): the position pass pushes out
 * only what lies deeper (Box2D's linear slop). A pile always has some contact overlapping by
 * rounding; without a slop every step solved twice. Direct solvers keep distances >= 0 exactly
 * (001 2.2, V12): no slop. */
#define PGS_POSITION_SLOP 1e-4

/* Sweeps of an iterative solver in the position pass: an overlap it leaves is pushed out at
 * the next step (a quarter of the pile benchmark's solve time went here at full budget). */
#define POSITION_PASS_SWEEPS 8

/* The gap a row of the position pass may close. With a slop (iterative solvers) every row may
 * close to -slop, a separated one by its whole gap: the pass pushes out the overlaps beyond the
 * slop and moves only the bodies that must give way. Holding every non-overlapping row at its
 * place instead (the direct solvers' rule, no slop: distances >= 0 exactly, V12) spread each
 * push through the whole pile, and the pass cost several times as much (docs/performance.md). */
static double position_gap(double gap, double slop) {
    return slop > 0.0 ? gap + slop : fmin(gap, 0.0);
}

/* The islands of one advance: stepped bodies and candidate contacts sorted by island
 * (compressed rows: island k owns [start[k], start[k + 1]) of each list). */
typedef struct IslandIndex {
    int count;
    int *island_of; /* engine body -> island number, or -1 (not stepped) */
    int *local;     /* engine body -> velocity offset in the island being solved, or -1 */
    int *bodies, *body_start;
    int *candidates, *candidate_start; /* complementarity contacts touching the island */
    int *forces, *force_start;         /* active force-law contacts touching it */
    int *rows;                         /* scratch: this step's rows (engine contact indices) */
    int *order;                        /* scratch: the bucket sort of order_top_down */
} IslandIndex;

typedef struct IslandWork {
    Engine *e;
    const IslandIndex *index;
    int body_count, contact_count, force_count;
    const int *bodies;   /* engine body indices */
    const int *contacts; /* complementarity rows: engine contact indices */
    const int *forces;   /* force-law contacts acting through f */
    int dim, bd;
    double h;
    bool dense;
    double *mass, *inv_mass, *jn, *jt; /* dense, when the solver asks for it */
    double *work;                      /* else the sparse solver's workspace */
    size_t work_doubles;
    double *mass_blocks, *inv_blocks; /* per body bd x bd */
    EngineContactBlock *blocks;
    uint64_t *ids;
    Vec3 *frames;          /* per row: normal, t1, t2 */
    EngineBodyState *pose; /* per island body (by offset / bd): its state at the step's start */
    double *force, *velocity, *gap, *mu, *mu_static, *no_friction, *warm_n, *warm_t;
    double *lambda_n, *lambda_t, *u_next, *rhs;
    /* The split position correction: gaps for each pass, its impulses and pseudo-velocities. */
    double *gap_velocity, *gap_position, *lambda_p, *lambda_pt, *u_position, *zero;
} IslandWork;

/* ===== Islands ===== */

/* The island a contact belongs to: its first stepped body's, or -1. */
static int contact_island(const IslandIndex *x, const EngineContact *c) {
    if (x->island_of[c->body] >= 0)
        return x->island_of[c->body];
    return c->body_b >= 0 ? x->island_of[c->body_b] : -1;
}

/* Counting sort of `count` items into lists by their island (key < 0: dropped). */
static void bucket(const int *key, int count, int islands, int *start, int *out) {
    memset(start, 0, sizeof(int) * (size_t)(islands + 1));
    for (int i = 0; i < count; i++)
        if (key[i] >= 0)
            start[key[i] + 1]++;
    for (int k = 0; k < islands; k++)
        start[k + 1] += start[k];
    for (int i = 0; i < count; i++)
        if (key[i] >= 0)
            out[start[key[i]]++] = i;
    for (int k = islands; k > 0; k--)
        start[k] = start[k - 1];
    start[0] = 0;
}

/* One pass over the stepped bodies and the contacts. Returns false when out of memory. */
static bool index_islands(Engine *e, IslandIndex *x) {
    int nb = e->body_count, nc = e->contact_count;
    IssimArena *a = &e->step_scratch;
    x->island_of = ISSIM_ARENA_ALLOC(a, int, nb);
    x->local = ISSIM_ARENA_ALLOC(a, int, nb);
    x->bodies = ISSIM_ARENA_ALLOC(a, int, nb);
    x->body_start = ISSIM_ARENA_ALLOC(a, int, nb + 1);
    x->candidates = ISSIM_ARENA_ALLOC(a, int, nc);
    x->candidate_start = ISSIM_ARENA_ALLOC(a, int, nb + 1);
    x->forces = ISSIM_ARENA_ALLOC(a, int, nc);
    x->force_start = ISSIM_ARENA_ALLOC(a, int, nb + 1);
    x->rows = ISSIM_ARENA_ALLOC(a, int, nc);
    x->order = ISSIM_ARENA_ALLOC(a, int, 2 * nc + 2);
    int *key = ISSIM_ARENA_ALLOC(a, int, nb + nc);
    if (!x->island_of || !x->local || !x->bodies || !x->body_start || !x->candidates ||
        !x->candidate_start || !x->forces || !x->force_start || !x->rows || !x->order || !key)
        return false;
    x->count = 0;
    for (int b = 0; b < nb; b++)
        x->island_of[b] = x->local[b] = -1;
    for (int i = 0; i < e->stepped_count; i++) { /* roots first: islands numbered by root */
        int b = e->stepped_bodies[i];
        if (e->island_of_body[b] == b)
            x->island_of[b] = x->count++;
    }
    for (int i = 0; i < e->stepped_count; i++) {
        int b = e->stepped_bodies[i];
        x->island_of[b] = x->island_of[e->island_of_body[b]];
    }
    for (int b = 0; b < nb; b++)
        key[b] = x->island_of[b];
    bucket(key, nb, x->count, x->body_start, x->bodies);
    for (int pass = 0; pass < 2; pass++) { /* complementarity candidates, then force laws */
        for (int ci = 0; ci < nc; ci++) {
            const EngineContact *c = &e->contacts[ci];
            bool force_law = e->pairs[c->pair].params.resolver == CONTACT_RESOLVER_FORCE_LAW;
            bool wanted = pass == 0 ? !force_law : force_law && c->active;
            key[ci] = wanted ? contact_island(x, c) : -1;
        }
        if (pass == 0)
            bucket(key, nc, x->count, x->candidate_start, x->candidates);
        else
            bucket(key, nc, x->count, x->force_start, x->forces);
    }
    return true;
}

/* Island k's bodies get their velocity offsets in `local` while it is solved (bodies of other
 * islands stay -1: held), and give them back after. */
static void open_island(const Engine *e, IslandIndex *x, int k, bool open) {
    int dim = 0;
    for (int i = x->body_start[k]; i < x->body_start[k + 1]; i++) {
        x->local[x->bodies[i]] = open ? dim : -1;
        dim += e->planar ? 3 : 6;
    }
}

/* Body b's velocity offset in the island being solved, or -1 (held: no unknown). */
static int offset_in(const IslandWork *w, int b) {
    return b < 0 ? -1 : w->index->local[b];
}

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
static void order_top_down(IslandWork *w, int *candidates, int count, double *keys) {
    Vec3 up = vec3_scale(w->e->gravity, -1.0);
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
    int *start = w->index->order, *sorted = start + count + 2;
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

/* Reads every island body's state once (engine_block_state renormalises the attitude: a tenth
 * of a small pile's step went there when each contact read its two bodies). */
static void read_poses(IslandWork *w) {
    for (int i = 0; i < w->body_count; i++) {
        int b = w->bodies[i];
        w->pose[offset_in(w, b) / w->bd] = engine_block_state(w->e, w->e->y, b);
    }
}

static void add_wrench(const IslandWork *w, int b, Vec3 f, Vec3 tau) {
    int o = offset_in(w, b);
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

/* M and M^-1 per body, u and the bodies' own forces. */
static void assemble_bodies(IslandWork *w) {
    const Engine *e = w->e;
    int bd = w->bd;
    for (int i = 0; i < w->body_count; i++) {
        int b = w->bodies[i], o = offset_in(w, b);
        const EngineBody *body = &e->bodies[b];
        EngineBodyState st = w->pose[o / bd];
        Vec3 f = engine_body_own_force(e, body, e->t);
        Vec3 tau = engine_body_own_torque(body);
        double *mb = w->mass_blocks + (size_t)o * bd, *ib = w->inv_blocks + (size_t)o * bd;
        memset(mb, 0, sizeof(double) * (size_t)(bd * bd));
        memset(ib, 0, sizeof(double) * (size_t)(bd * bd));
        if (e->planar) {
            double m3[3] = {body->mass, body->mass, body->inertia.y};
            double u3[3] = {st.vel.x, st.vel.z, st.angvel.y};
            for (int k = 0; k < 3; k++) {
                mb[k + 3 * k] = m3[k];
                ib[k + 3 * k] = 1.0 / m3[k];
                w->velocity[o + k] = u3[k];
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

/* One body's Jacobian block: rows (n, r x n) for the contact frame's three directions. */
static void jacobian_block(const IslandWork *w, double j[3][6], const Vec3 *frame, Vec3 r,
                           double sign) {
    for (int row = 0; row < 3; row++) {
        Vec3 n = frame[row], rxn = vec3_cross(r, n);
        if (w->e->planar) {
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
    const Vec3 *f = w->frames + 3 * i;
    w->warm_n[i] = fmax(vec3_dot(c->warm_impulse, f[0]), 0.0);
    w->warm_t[2 * i] = vec3_dot(c->warm_impulse, f[1]);
    w->warm_t[2 * i + 1] = vec3_dot(c->warm_impulse, f[2]);
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

/* This step's rows: the island's candidates within the margin (grown by what they close in the
 * step: engine_speculative_reach), their blocks and gaps. Returns
 * the index of a non-finite row, or -1. */
static int assemble_contacts(IslandWork *w, int *rows, const int *candidates, int count) {
    Engine *e = w->e;
    int m = 0;
    for (int ci = 0; ci < count; ci++) {
        const EngineContact *c = &e->contacts[candidates[ci]];
        ContactKinematics k;
        Vec3 ra, rb;
        if (c->kind == CONTACT_MANIFOLD) { /* the geometry only: a pile has thousands */
            EngineBodyState a = body_state(w, c->body), b;
            if (c->body_b >= 0)
                b = body_state(w, c->body_b);
            engine_manifold_geometry(c, &a, c->body_b >= 0 ? &b : NULL, &k.depth, &k.normal, &ra,
                                     &rb);
        } else
            engine_contact_arms(e, e->y, c, e->t, &k, &ra, &rb);
        bool finite = isfinite(k.depth) && isfinite(k.normal.x) && isfinite(k.normal.y) &&
                      isfinite(k.normal.z);
        k.depth_rate = finite ? closing_speed(w, c, k.normal, ra, rb) : 0.0;
        if (finite && !(k.depth > -engine_speculative_reach(e, &k, RESOLVE_MARGIN)))
            continue;
        rows[m] = candidates[ci];
        if (!finite) {
            w->contact_count = m + 1;
            return m;
        }
        Vec3 *f = w->frames + 3 * m;
        f[0] = k.normal;
        vec3_tangent_basis(k.normal, &f[1], &f[2]);
        EngineContactBlock *blk = &w->blocks[m];
        blk->offset_a = offset_in(w, c->body);
        blk->offset_b = offset_in(w, c->body_b);
        memset(blk->ja, 0, sizeof blk->ja);
        memset(blk->jb, 0, sizeof blk->jb);
        if (blk->offset_a >= 0)
            jacobian_block(w, blk->ja, f, ra, 1.0);
        if (blk->offset_b >= 0)
            jacobian_block(w, blk->jb, f, rb, -1.0);
        w->gap[m] = -k.depth;
        w->mu[m] = c->params.friction_kinetic;
        w->mu_static[m] = fmax(c->params.friction_static, c->params.friction_kinetic);
        w->ids[m] = c->kind == CONTACT_MANIFOLD ? ((uint64_t)1 << 32) | c->collision_id
                                                : (uint64_t)candidates[ci];
        warm_start_row(w, m, c);
        m++;
    }
    w->contact_count = m;
    return -1;
}

/* The dense M, M^-1, Jn, Jt from the blocks, for solvers that factor them. */
static bool assemble_dense(IslandWork *w) {
    int n = w->dim, m = w->contact_count, bd = w->bd;
    IssimArena *a = &w->e->step_scratch;
    w->mass = ISSIM_ARENA_ALLOC(a, double, (size_t)n *(size_t)n);
    w->inv_mass = ISSIM_ARENA_ALLOC(a, double, (size_t)n *(size_t)n);
    w->jn = ISSIM_ARENA_ALLOC(a, double, (size_t)m *(size_t)n);
    w->jt = ISSIM_ARENA_ALLOC(a, double, 2 * (size_t)m * (size_t)n);
    if (!w->mass || !w->inv_mass || !w->jn || !w->jt)
        return false;
    memset(w->mass, 0, sizeof(double) * (size_t)n * (size_t)n);
    memset(w->inv_mass, 0, sizeof(double) * (size_t)n * (size_t)n);
    memset(w->jn, 0, sizeof(double) * (size_t)m * (size_t)n);
    memset(w->jt, 0, sizeof(double) * 2 * (size_t)m * (size_t)n);
    for (int o = 0; o < n; o += bd)
        for (int c = 0; c < bd; c++)
            for (int r = 0; r < bd; r++) {
                w->mass[(o + r) + n * (o + c)] = w->mass_blocks[(size_t)o * bd + r + bd * c];
                w->inv_mass[(o + r) + n * (o + c)] = w->inv_blocks[(size_t)o * bd + r + bd * c];
            }
    for (int i = 0; i < m; i++) {
        const EngineContactBlock *blk = &w->blocks[i];
        for (int side = 0; side < 2; side++) {
            int o = side ? blk->offset_b : blk->offset_a;
            const double(*j)[6] = side ? blk->jb : blk->ja;
            if (o < 0)
                continue;
            for (int k = 0; k < bd; k++) {
                w->jn[i + m * (o + k)] += j[0][k];
                w->jt[2 * i + 2 * m * (o + k)] += j[1][k];
                w->jt[2 * i + 1 + 2 * m * (o + k)] += j[2][k];
            }
        }
    }
    return true;
}

/* A sparse solver's workspace. */
static bool reserve_work(IslandWork *w) {
    size_t need = ENGINE_SOLVER_WORK(w->contact_count, w->dim);
    w->work = ISSIM_ARENA_ALLOC(&w->e->step_scratch, double, need);
    w->work_doubles = need;
    return w->work != NULL;
}

/* ===== Products in block form ===== */

/* rhs += J^T (lambda_n, lambda_t) (lt Nullable: normal rows only). */
static void add_jacobian_transpose(const IslandWork *w, const double *ln, const double *lt) {
    for (int i = 0; i < w->contact_count; i++) {
        const EngineContactBlock *blk = &w->blocks[i];
        double l[3] = {ln[i], lt ? lt[2 * i] : 0.0, lt ? lt[2 * i + 1] : 0.0};
        for (int side = 0; side < 2; side++) {
            int o = side ? blk->offset_b : blk->offset_a;
            const double(*j)[6] = side ? blk->jb : blk->ja;
            if (o < 0)
                continue;
            for (int k = 0; k < w->bd; k++)
                w->rhs[o + k] += j[0][k] * l[0] + j[1][k] * l[1] + j[2][k] * l[2];
        }
    }
}

/* out = base + M^-1 w->rhs, block by block (base Nullable: zero). */
static void apply_inv_mass(const IslandWork *w, const double *base, double *out) {
    int bd = w->bd;
    for (int o = 0; o < w->dim; o += bd) {
        const double *ib = w->inv_blocks + (size_t)o * bd;
        for (int r = 0; r < bd; r++) {
            double acc = 0.0;
            for (int c = 0; c < bd; c++)
                acc += ib[r + bd * c] * w->rhs[o + c];
            out[o + r] = (base ? base[o + r] : 0.0) + acc;
        }
    }
}

/* u+ = u + M^-1 (h f + Jn^T lambda_n + Jt^T lambda_t) into out. */
static void velocity_after(const IslandWork *w, const double *ln, const double *lt, double *out) {
    for (int r = 0; r < w->dim; r++)
        w->rhs[r] = w->h * w->force[r];
    add_jacobian_transpose(w, ln, lt);
    apply_inv_mass(w, w->velocity, out);
}

/* Jn_i u: contact i's separation rate at velocities u. */
static double normal_rate(const IslandWork *w, int i, const double *u) {
    const EngineContactBlock *blk = &w->blocks[i];
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
static void gap_after(void *ctx, const double *u_next, double *gap_out) {
    const IslandWork *w = ctx;
    engine_island_gaps_after(w->e, w->contacts, w->contact_count, w->index->local, w->gap, w->h,
                             u_next, gap_out);
}

/* q+ = q + h G(q) (u+ + u_p) for every body of the island: the velocities become u+, the
 * pseudo-velocities u_p of the position correction move the bodies without staying in them. */
static void integrate_positions(IslandWork *w) {
    Engine *e = w->e;
    for (int i = 0; i < w->body_count; i++) {
        int b = w->bodies[i], o = offset_in(w, b);
        const double *u = w->u_next + o, *p = w->u_position + o;
        EngineBodyState st = w->pose[o / w->bd];
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

/* ===== Solver choice and the step ===== */

/* The solvers a pair's "solver" property names (ContactSolverKind order). A direct solver
 * (Lemke, Fischer-Newton) joins with its row here and its name in contact_vocabulary.c. */
static const EngineComplementaritySolver *solver_of_kind(int kind) {
    switch (kind) {
    case CONTACT_SOLVER_PGS:
        return engine_complementarity_pgs();
    case CONTACT_SOLVER_REFERENCE:
        return engine_complementarity_reference();
    case CONTACT_SOLVER_LEMKE:
        return engine_complementarity_lemke();
    case CONTACT_SOLVER_FISCHER_NEWTON:
        return engine_complementarity_fischer_newton();
    default:
        return NULL;
    }
}

/* The direct solver "auto" takes for small islands; NULL while none is built in. */
static const EngineComplementaritySolver *auto_direct_solver(void) {
    for (int k = 0; k < CONTACT_SOLVER_COUNT; k++) {
        const EngineComplementaritySolver *s = solver_of_kind(k);
        if (s && s->direct)
            return s;
    }
    return NULL;
}

const EngineComplementaritySolver *engine_complementarity_for(int solver_kind, int contacts,
                                                              bool friction) {
    if (solver_kind != CONTACT_SOLVER_AUTO)
        return solver_of_kind(solver_kind);
    const EngineComplementaritySolver *direct = auto_direct_solver();
    int limit = friction ? ENGINE_AUTO_DIRECT_FRICTION_CONTACTS : ENGINE_AUTO_DIRECT_CONTACTS;
    if (direct && contacts <= limit)
        return direct;
    return engine_complementarity_pgs();
}

/* The island's solver: the engine's override, else the first row's pair that names one. */
static const EngineComplementaritySolver *island_solver(const IslandWork *w, int *kind) {
    *kind = CONTACT_SOLVER_AUTO;
    if (w->e->complementarity)
        return w->e->complementarity;
    for (int i = 0; i < w->contact_count && *kind == CONTACT_SOLVER_AUTO; i++)
        *kind = (int)w->e->pairs[w->e->contacts[w->contacts[i]].pair].params.solver;
    bool friction = false;
    for (int i = 0; i < w->contact_count && !friction; i++)
        friction = w->mu[i] > 0.0 || w->mu_static[i] > 0.0;
    return engine_complementarity_for(*kind, w->contact_count, friction);
}

static const char *island_name(const IslandWork *w) {
    return w->e->bodies[w->bodies[0]].name;
}

/* A solver's answer is used only when every impulse is finite (a NaN would spread through
 * the island's state). */
static bool impulses_finite(int m, const EngineIslandSolution *sol) {
    double total = 0.0;
    for (int i = 0; i < m; i++)
        total += sol->lambda_n[i] + sol->lambda_t[2 * i] + sol->lambda_t[2 * i + 1];
    return isfinite(total);
}

static bool solve_once(const Engine *e, const EngineComplementaritySolver *solver,
                       const EngineIslandSystem *sys, EngineIslandSolution *sol, IssimError *why) {
    memset(sol->lambda_n, 0, sizeof(double) * (size_t)sys->contacts);
    if (sol->lambda_t)
        memset(sol->lambda_t, 0, sizeof(double) * 2 * (size_t)sys->contacts);
    if (solver->solve(e->complementarity ? e->complementarity_user : NULL, sys, sol, why) !=
        ISSIM_OK)
        return false;
    if (impulses_finite(sys->contacts, sol))
        return true;
    issim_error_set(why, ISSIM_ERR_NUMERIC, "it returned non-finite impulses");
    return false;
}

/* A solver the pairs chose that fails (Lemke's ray termination, a Newton stall) hands the step
 * to PGS, which always returns impulses (the fallback to the iterative solver); the
 * failure is counted and logged with the island and the reason. An engine-wide override
 * (engine_set_complementarity_solver) is used as it is: its failure stops the step. */
static IssimStatus run_solver(IslandWork *w, const EngineComplementaritySolver *solver,
                              const EngineIslandSystem *sys, EngineIslandSolution *sol,
                              IssimError *err) {
    Engine *e = w->e;
    IssimError why = {0};
    if (solve_once(e, solver, sys, sol, &why))
        return ISSIM_OK;
    e->stats.complementarity_failures++;
    const EngineComplementaritySolver *pgs = engine_complementarity_pgs();
    IssimError pgs_why = {0};
    if (!e->complementarity && solver != pgs && solve_once(e, pgs, sys, sol, &pgs_why)) {
        issim_log(ISSIM_LOG_WARN,
                  "complementarity solver %s failed on the island of %s (%d bodies, %d contacts) "
                  "at t = %.9g s (%s): PGS solved this step",
                  solver->name, island_name(w), w->body_count, w->contact_count, e->t, why.message);
        e->stats.warnings++;
        return ISSIM_OK;
    }
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "complementarity solver %s failed on the island of %s (%d bodies, %d "
                           "contacts) at t = %.9g s: %s%s%s",
                           solver->name, island_name(w), w->body_count, w->contact_count, e->t,
                           why.message, pgs_why.message[0] ? "; PGS too: " : "", pgs_why.message);
}

static IssimStatus bad_row(IslandWork *w, int row, IssimError *err) {
    Engine *e = w->e;
    const EngineContact *c = &e->contacts[w->contacts[row]];
    const char *other = c->body_b >= 0 ? e->bodies[c->body_b].name
                                       : thing_name(e->db, e->obstacles[c->obstacle].thing);
    e->stats.complementarity_failures++;
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "island of %s (%d bodies) at t = %.9g s: the contact of %s and %s has "
                           "a non-finite normal or depth; the step is refused",
                           island_name(w), w->body_count, e->t, e->bodies[c->body].name,
                           other ? other : "?");
}

static EngineIslandSystem island_system(IslandWork *w) {
    return (EngineIslandSystem){.h = w->h,
                                .dim = w->dim,
                                .contacts = w->contact_count,
                                .body_dim = w->bd,
                                .mass = w->dense ? w->mass : NULL,
                                .inv_mass = w->dense ? w->inv_mass : NULL,
                                .jn = w->dense ? w->jn : NULL,
                                .jt = w->dense ? w->jt : NULL,
                                .inv_mass_blocks = w->inv_blocks,
                                .blocks = w->blocks,
                                .force = w->force,
                                .velocity = w->velocity,
                                .gap = w->gap_velocity,
                                .mu = w->mu,
                                .mu_static = w->mu_static,
                                .contact_id = w->ids,
                                .warm_n = w->warm_n,
                                .warm_t = w->warm_t,
                                .work = w->dense ? NULL : w->work,
                                .work_doubles = w->dense ? 0 : w->work_doubles,
                                .gap_after = gap_after,
                                .ctx = w};
}

/* Split impulse: pseudo-velocities u_p = M^-1 Jn^T lambda_p that close the overlaps in one step
 * without friction and without staying in the velocities. */
static IssimStatus position_pass(IslandWork *w, const EngineComplementaritySolver *solver,
                                 const EngineIslandSystem *sys, IssimError *err) {
    int n = w->dim;
    EngineIslandSystem push = *sys;
    push.force = w->zero;
    push.velocity = w->zero;
    push.gap = w->gap_position;
    push.mu = w->no_friction;
    push.mu_static = w->no_friction;
    push.warm_n = NULL;
    push.warm_t = NULL;
    push.max_sweeps = POSITION_PASS_SWEEPS;
    push.same_rows = true;
    EngineIslandSolution out = {.lambda_n = w->lambda_p, .lambda_t = w->lambda_pt};
    if (run_solver(w, solver, &push, &out, err) != ISSIM_OK)
        return ISSIM_ERR_NUMERIC;
    memset(w->rhs, 0, sizeof(double) * (size_t)n);
    add_jacobian_transpose(w, w->lambda_p, NULL);
    apply_inv_mass(w, NULL, w->u_position);
    return ISSIM_OK;
}

static void count_iterations(EngineStats *stats, const EngineIslandSolution *sol) {
    stats->complementarity_iterative_solves++;
    stats->complementarity_sweeps += (uint64_t)sol->iterations;
    stats->complementarity_residual = fmax(stats->complementarity_residual, sol->residual);
}

static IssimStatus solve_step(IslandWork *w, IssimError *err) {
    int n = w->dim, m = w->contact_count;
    const EngineComplementaritySolver *solver = NULL;
    int kind = CONTACT_SOLVER_AUTO;
    if (m > 0) {
        solver = island_solver(w, &kind);
        if (!solver)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "island of %s: solver \"%s\" is not built in", island_name(w),
                                   contact_solver_name((ContactSolverKind)kind));
        w->dense = !solver->sparse;
        double dense_doubles = 2.0 * n * n + 3.0 * m * n;
        if (w->dense && dense_doubles > DENSE_LIMIT)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "solver %s needs the dense system of the island of %s (%d "
                                   "bodies, %d contacts: %.3g GB); the island is too large for "
                                   "it: choose solver \"pgs\" for its pairs",
                                   solver->name, island_name(w), w->body_count, m,
                                   8e-9 * dense_doubles);
        bool room = w->dense ? assemble_dense(w) : reserve_work(w);
        if (!room)
            return issim_error_set(err, ISSIM_ERR_NOMEM,
                                   "out of memory for the system of the island of %s",
                                   island_name(w));
    }
    /* (run_solver zeroes the impulses before each solve.) Velocity pass: a separated contact may
     * close by its gap in the step, an overlapping one may not deepen (gap 0). Position pass (split
     * impulse): an overlap found late (a body faster than the collision margin per step) is pushed
     * out by pseudo-velocities that move the bodies without staying in their velocities, so a late
     * discovery never launches a body, as s / h in the velocity pass did (docs/performance.md). */
    bool overlap = false;
    double slop = solver && solver->sparse ? PGS_POSITION_SLOP : 0.0;
    memset(w->u_position, 0, sizeof(double) * (size_t)n);
    memset(w->zero, 0, sizeof(double) * (size_t)n);
    for (int i = 0; i < m; i++) {
        w->gap_velocity[i] = fmax(w->gap[i], 0.0);
        w->gap_position[i] = position_gap(w->gap[i], slop);
        w->no_friction[i] = 0.0;
        overlap = overlap || w->gap[i] < -slop;
    }
    EngineIslandSystem sys = island_system(w);
    EngineIslandSolution sol = {.lambda_n = w->lambda_n, .lambda_t = w->lambda_t};
    if (m > 0 && run_solver(w, solver, &sys, &sol, err) != ISSIM_OK)
        return ISSIM_ERR_NUMERIC;
    if (m > 0 && solver->sparse)
        count_iterations(&w->e->stats, &sol);
    velocity_after(w, w->lambda_n, w->lambda_t, w->u_next);
    if (overlap && position_pass(w, solver, &sys, err) != ISSIM_OK)
        return ISSIM_ERR_NUMERIC;
    integrate_positions(w);
    return ISSIM_OK;
}

/* n doubles of the per-step arena; *ok turns false when memory ran out. */
static double *scratch_doubles(Engine *e, size_t n, bool *ok) {
    double *p = ISSIM_ARENA_ALLOC(&e->step_scratch, double, n);
    *ok = *ok && p;
    return p;
}

/* Scratch of one island step, from the per-step arena (released when the step ends). */
static bool carve_scratch(Engine *e, IslandWork *w, int max_rows) {
    size_t n = (size_t)w->dim, m = (size_t)max_rows, bd = (size_t)w->bd;
    bool ok = true;
    w->mass_blocks = scratch_doubles(e, n * bd, &ok);
    w->inv_blocks = scratch_doubles(e, n * bd, &ok);
    w->force = scratch_doubles(e, n, &ok);
    w->velocity = scratch_doubles(e, n, &ok);
    w->u_next = scratch_doubles(e, n, &ok);
    w->rhs = scratch_doubles(e, n, &ok);
    w->u_position = scratch_doubles(e, n, &ok);
    w->zero = scratch_doubles(e, n, &ok);
    w->pose = ISSIM_ARENA_ALLOC(&e->step_scratch, EngineBodyState, n / bd);
    w->blocks = ISSIM_ARENA_ALLOC(&e->step_scratch, EngineContactBlock, m);
    w->ids = ISSIM_ARENA_ALLOC(&e->step_scratch, uint64_t, m);
    w->frames = ISSIM_ARENA_ALLOC(&e->step_scratch, Vec3, 3 * m);
    w->gap = scratch_doubles(e, m, &ok);
    w->mu = scratch_doubles(e, m, &ok);
    w->mu_static = scratch_doubles(e, m, &ok);
    w->no_friction = scratch_doubles(e, m, &ok);
    w->warm_n = scratch_doubles(e, m, &ok);
    w->warm_t = scratch_doubles(e, 2 * m, &ok);
    w->lambda_n = scratch_doubles(e, 3 * m, &ok); /* lambda_n, lambda_t contiguous (3m) */
    w->lambda_t = w->lambda_n + m;
    w->lambda_p = scratch_doubles(e, 3 * m, &ok); /* lambda_p, lambda_pt contiguous (3m) */
    w->lambda_pt = w->lambda_p + m;
    w->gap_velocity = scratch_doubles(e, m, &ok);
    w->gap_position = scratch_doubles(e, m, &ok);
    if (!ok || !w->pose || !w->blocks || !w->ids || !w->frames)
        return false;
    memset(w->force, 0, sizeof(double) * n);
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
 * with them. Each row keeps its impulse (world) as the next step's warm start. */
static void update_row_activity(IslandWork *w, double t) {
    Engine *e = w->e;
    for (int i = 0; i < w->contact_count; i++) {
        EngineContact *c = &e->contacts[w->contacts[i]];
        const Vec3 *f = w->frames + 3 * i;
        Vec3 friction = vec3_add(vec3_scale(f[1], w->lambda_t[2 * i]),
                                 vec3_scale(f[2], w->lambda_t[2 * i + 1]));
        c->warm_impulse = vec3_mad(friction, w->lambda_n[i], f[0]);
        c->resolved_force = w->lambda_n[i] / w->h;
        c->resolved_friction = vec3_scale(friction, 1.0 / w->h);
        /* The depth after the step, linearised (the solve's own model of it); the exact
         * kinematics only when the activity changes and an event needs them. */
        double depth =
            -(w->gap[i] + w->h * (normal_rate(w, i, w->u_next) + normal_rate(w, i, w->u_position)));
        bool want = w->lambda_n[i] > 0.0 || depth > 0.0;
        if (want == c->active)
            continue;
        ContactKinematics k;
        engine_contact_kinematics(e, e->y, c, t, &k, NULL, NULL);
        EngineEvent ev = engine_contact_event(c, t, -k.depth_rate);
        c->active = want;
        if (want) {
            c->id = ++e->next_contact_id;
            c->t_begin = t;
            engine_contact_begin(e, c, &k);
            ev.kind = ENGINE_EVENT_CONTACT_BEGIN;
            /* Against a sleeping body (held in this solve): a landing wakes its island (004
             * App. E.3.1), judged by the approach speed before this step's impulse stopped it. */
            ContactKinematics landing = k;
            landing.depth_rate = -normal_rate(w, i, w->velocity);
            engine_wake_on_contact(e, c, &landing, t);
        } else {
            engine_contact_end(e, c);
            c->resolved_force = 0.0;
            c->resolved_friction = vec3(0.0, 0.0, 0.0);
            c->warm_impulse = vec3(0.0, 0.0, 0.0);
            ev.kind = ENGINE_EVENT_CONTACT_END;
            ev.duration = t - c->t_begin;
        }
        ev.contact_id = c->id;
        engine_emit(e, &ev);
    }
}

/* One time step of island k at time t, its scratch carved from the per-step arena (the caller
 * releases it). */
static IssimStatus island_step_in(IslandWork *w, const IslandIndex *x, int k, double t, double h,
                                  IssimError *err) {
    Engine *e = w->e;
    int c0 = x->candidate_start[k], nc = x->candidate_start[k + 1] - c0;
    if (!carve_scratch(e, w, nc))
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for the island of %s",
                               e->bodies[w->bodies[0]].name);
    e->t = t; /* contact kinematics are evaluated at the island's own time */
    read_poses(w);
    order_top_down(w, x->candidates + c0, nc, w->gap);
    int bad = assemble_contacts(w, x->rows + c0, x->candidates + c0, nc);
    if (bad >= 0)
        return bad_row(w, bad, err);
    assemble_bodies(w);
    assemble_force_laws(w);
    IssimStatus s = solve_step(w, err);
    if (s != ISSIM_OK)
        return s;
    e->stats.complementarity_steps++;
    update_row_activity(w, t + h);
    return ISSIM_OK;
}

/* One time step of island k at time t; its scratch is released when the step ends. */
static IssimStatus island_step(Engine *e, const IslandIndex *x, int k, double t, double h,
                               IssimError *err) {
    IslandWork w = {.e = e,
                    .index = x,
                    .body_count = x->body_start[k + 1] - x->body_start[k],
                    .bodies = x->bodies + x->body_start[k],
                    .force_count = x->force_start[k + 1] - x->force_start[k],
                    .forces = x->forces + x->force_start[k],
                    .contacts = x->rows + x->candidate_start[k],
                    .bd = e->planar ? 3 : 6,
                    .h = h};
    w.dim = w.body_count * w.bd;
    IssimArenaMark mark = issim_arena_mark(&e->step_scratch);
    IssimStatus s = island_step_in(&w, x, k, t, h, err);
    issim_arena_reset(&e->step_scratch, mark);
    return s;
}

/* Every complementarity island from t_start to t_target by time steps; the index lives in the
 * per-step arena. */
static IssimStatus resolve_islands(Engine *e, double t_start, double t_target, IssimError *err) {
    IslandIndex x;
    if (!index_islands(e, &x))
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory for islands");
    for (int k = 0; k < x.count; k++) {
        open_island(e, &x, k, true);
        for (double t = t_start; t < t_target;) {
            double h = fmin(e->dt, t_target - t);
            if (t_target - (t + h) < 1e-12 * e->dt)
                h = t_target - t;
            IssimStatus s = island_step(e, &x, k, t, h, err);
            if (s != ISSIM_OK)
                return s;
            t = (h == t_target - t) ? t_target : t + h;
        }
        open_island(e, &x, k, false);
    }
    return ISSIM_OK;
}

IssimStatus engine_resolve_complementarity(Engine *e, double t_start, double t_target,
                                           IssimError *err) {
    double t_saved = e->t;
    e->stats.complementarity_residual = 0.0;
    IssimArenaMark mark = issim_arena_mark(&e->step_scratch);
    IssimStatus s = resolve_islands(e, t_start, t_target, err);
    issim_arena_reset(&e->step_scratch, mark);
    e->t = t_saved;
    return s;
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
