/* issim engine resolvers: the extension points behind engine_advance's islands (engine.h) that
 * only the engine, the solvers and the tests that plug their own in need. The system matrices
 * of joint solvers over islands, the complementarity resolvers (001) and the reduced-coordinate
 * resolvers (002). Every other module includes engine.h alone: what an island is solved with
 * is chosen by the contact pairs' "resolver" and "solver" properties, not by callers.
 *
 * Threading: as engine.h; every function here runs on the engine thread (set-up calls before
 * it starts). */
#ifndef ISSIM_ENGINE_RESOLVER_H
#define ISSIM_ENGINE_RESOLVER_H

#include "issim/engine.h"

/* ===== System matrices (for joint solvers over islands: 001, 004 App. C) ===== */

/* Dimension of the generalized velocity: 6 per free body (v, omega), 3 per planar body
 * (vx, vz, omega). */
int engine_velocity_dim(const Engine *engine);
/* Offset of a body's generalized velocity. */
int engine_body_velocity_offset(const Engine *engine, int body);
/* Islands: bodies connected by active contacts (fixed obstacles never connect). Writes
 * island_of_body[engine_body_count] and returns the number of islands. */
int engine_islands(const Engine *engine, int *island_of_body);
/* Assembled mass matrix M (velocity_dim^2, column-major, caller-owned). */
void engine_mass_matrix(const Engine *engine, double *m);
/* Normal-direction contact Jacobian of the active contacts: row i maps generalized velocity
 * to the separation rate of contact i (-d(depth)/dt). J is rows x velocity_dim, column-major,
 * caller-owned with room for max_rows rows. Returns the number of rows. */
int engine_contact_jacobian(const Engine *engine, double *j, int max_rows);

/* ===== Complementarity resolvers (second kind of contact resolution: 001) =====
 *
 * An island whose contact pairs name resolver = "complementarity" leaves the integrator: the
 * engine advances it by time steps h (the engine's output step, or the solver's own, smaller)
 * with the scheme of 001 eqs. 1-2: it assembles the island's system below, the solver returns
 * the contact impulses lambda (normal, and tangential when it models friction), and the engine
 * sets u+ = u + M^-1 (h f + Jn^T lambda_n + Jt^T lambda_t) and q+ = q + h G(q) u+ (positions
 * from the new velocities). Force-law contacts inside the island act through f, evaluated at
 * the start of the step. The real solvers (Lemke in a fixpoint iteration, Fischer-Newton, PGS
 * for piles) plug in here; engine_complementarity_reference() is a small projected
 * Gauss-Seidel solver that defines what a solver must satisfy (tests/test_engine_stages.c). */

/* One contact row's Jacobian in block form (per contact, per body): the rows normal, t1, t2 of
 * the contact frame (rates of separation and of sliding), bd = 6 (3 planar) entries each used. */
typedef struct EngineContactBlock {
    int offset_a, offset_b; /* island velocity offsets of the two bodies; -1: held or fixed */
    double ja[3][6], jb[3][6];
} EngineContactBlock;

#define ENGINE_SOLVER_WORK(m, n) (64 * (size_t)(m) + 2 * (size_t)(n) + 8)

/* Islands with at least this many contact rows get the RESOLVE stage's pool (sys->pool) when
 * EngineOptions.split_large_islands and threads > 1: the built-in PGS splits their sweeps. */
#define ENGINE_PARALLEL_SOLVE_ROWS 256

struct TaskPool;

typedef struct EngineIslandSystem {
    double h;     /* time step, s */
    int dim;      /* n: generalized velocity of the island (6 per free body, 3 planar) */
    int contacts; /* m: contact rows */
    int body_dim; /* bd: 6 per free body, 3 planar; n = bodies x bd */
    /* Dense form, NULL for a solver that declares itself sparse (large islands stay O(n + m)). */
    const double *mass;     /* n x n, column-major: M */
    const double *inv_mass; /* n x n, column-major: M^-1 (block diagonal) */
    const double *jn;       /* m x n, column-major: separation rate = Jn u */
    const double *jt;       /* 2m x n, column-major: rows 2i, 2i+1 the tangent rates of contact i */
    /* Block form, always present: M^-1 as n / bd blocks of bd x bd (column-major, the block of
     * the body at velocity offset o starts at o * bd; a free body's is diag(1/m, 1/m, 1/m,
     * I_world^-1): no linear-angular coupling about the centre of mass), and each contact's
     * Jacobian blocks. */
    const double *inv_mass_blocks;
    const EngineContactBlock *blocks; /* m */
    const double *force;     /* n: external and gyroscopic forces, force-law contacts included */
    const double *velocity;  /* n: u at the start of the step */
    const double *gap;       /* m: signed distance s = -depth at the start of the step, m */
    const double *mu;        /* m: Coulomb coefficient of each contact's pair (kinetic) */
    const double *mu_static; /* m */
    /* m: persistent contact ids (the collision manager's manifold ids; vertex contacts by
     * index), stable while a contact lasts: solvers with memory of their own match by them. */
    const uint64_t *contact_id;
    /* Nullable, m and 2m: the impulses of the contacts' previous step expressed in this step's
     * frames (zero for new contacts): a warm start for iterative solvers. */
    const double *warm_n, *warm_t;
    /* Engine-owned workspace for sparse solvers (NULL, 0 for dense ones): at least
     * ENGINE_SOLVER_WORK(m, n) doubles, so a solve allocates nothing. */
    double *work;
    size_t work_doubles;
    /* Iteration budget for iterative solvers (sweeps), 0: their own. The split-impulse
     * position pass, which the next step corrects anyway, runs on a small one. */
    int max_sweeps;
    /* true: blocks, M^-1 and work are those of the solver's previous call (the position pass
     * after the velocity pass of the same step): what it derived from them in work still
     * holds. */
    bool same_rows;
    /* Contact distances after a trial step with velocities u_next (n) into gap_out (m): the
     * fixpoint iteration of 001 2.2 re-evaluates s^{t+dt} with it. */
    void (*gap_after)(void *ctx, const double *u_next, double *gap_out);
    void *ctx;
    /* Nullable: the RESOLVE stage's task pool, lent to the solve of an island of at least
     * ENGINE_PARALLEL_SOLVE_ROWS rows on the engine thread while nothing else uses it
     * (issue 33: EngineOptions.split_large_islands with threads > 1); NULL otherwise. A solver
     * may run one loop at a time on it (task_pool_for); its results may depend on the pool's
     * thread count (the built-in PGS's split sweep does), never on the schedule. */
    struct TaskPool *pool;
} EngineIslandSystem;

typedef struct EngineIslandSolution {
    double *lambda_n; /* m: normal impulses, N s (>= 0) */
    double *lambda_t; /* 2m: tangential impulses, N s (zero without friction) */
    int iterations;
    double residual; /* the solver's own measure of its complementarity error */
    int threads;     /* threads the solve ran on (set by solvers that use sys->pool; else 0) */
} EngineIslandSolution;

typedef struct EngineComplementaritySolver {
    const char *name;
    /* Solves one step. Fill lambda_n, lambda_t (zeroed on entry). Return ISSIM_ERR_NUMERIC with
     * a message when no solution was found (the engine keeps the last good state and reports the
     * island). Thread: engine for a solver set by engine_set_complementarity_solver; the
     * built-in solvers also run on the RESOLVE stage's pool threads, one island per call, so they
     * keep no state outside sys and out. */
    IssimStatus (*solve)(void *user, const EngineIslandSystem *sys, EngineIslandSolution *out,
                         IssimError *err);
    /* true: the solver reads only the block form (the engine does not assemble dense M, J). */
    bool sparse;
    /* true: a direct solver, which the "auto" choice takes for small islands. */
    bool direct;
} EngineComplementaritySolver;

/* The reference solver: projected Gauss-Seidel on the velocity-level LCP
 * 0 <= lambda_n  _|_  Jn u+ + s / h >= 0 (no friction), to a residual of 1e-12 or 500 sweeps. */
const EngineComplementaritySolver *engine_complementarity_reference(void);
/* 001 2.2: Lemke's algorithm (issim/lcp.h) in the fixpoint iteration on
 * nu = -delta(s^{t+dt}) + h Jn u^{t+dt} (delta from gap_after), warm started from the previous
 * iteration's basis; Coulomb friction (mu, mu_static) by the Anitescu-Potra polyhedral cone of 8
 * directions; ray termination, pivot limits and a fixpoint that does not settle are reported.
 * docs/complementarity.md. */
const EngineComplementaritySolver *engine_complementarity_lemke(void);
/* 001 2.1: the NCP on the contact distances after the step (gap_after) by the Fischer function
 * and a damped Newton method; a stall is reported. No friction. */
const EngineComplementaritySolver *engine_complementarity_fischer_newton(void);
/* Projected Gauss-Seidel with Coulomb friction for piles (engine_pgs.c): per contact a block
 * update of the normal impulse and of the tangential pair projected onto the friction disc
 * (static mu_s while sticking, kinetic mu_k while sliding), warm started, over the block form
 * only (O(n + m) per sweep). Its residual: the largest impulse change of the last sweep times
 * the row's effective inverse mass (m/s). */
const EngineComplementaritySolver *engine_complementarity_pgs(void);
/* The solver a contact pair's "solver" property names (ContactSolverKind, contact.h), for an
 * island of `contacts` rows, `friction` when any of them has a Coulomb coefficient: "auto" takes
 * a direct solver when one is built in up to ENGINE_AUTO_DIRECT_CONTACTS frictionless rows or
 * ENGINE_AUTO_DIRECT_FRICTION_CONTACTS frictional ones (Lemke's friction cone makes 10
 * unknowns of a contact and its cost grows with their cube, docs/performance.md), PGS above.
 * NULL when the name has no solver in this build. */
#define ENGINE_AUTO_DIRECT_CONTACTS 24
#define ENGINE_AUTO_DIRECT_FRICTION_CONTACTS 4
const EngineComplementaritySolver *engine_complementarity_for(int solver_kind, int contacts,
                                                              bool friction);
/* Overrides the pairs' "solver" choice for every complementarity island (Borrowed; user is
 * passed to solve). NULL restores the pairs' choice. Thread: engine (set-up). */
void engine_set_complementarity_solver(Engine *engine, const EngineComplementaritySolver *solver,
                                       void *user);

/* ===== Reduced-coordinate resolvers (third kind of contact resolution: 002) =====
 *
 * An island of two bodies in one continuous contact (or one body against one fixed obstacle)
 * whose pair names resolver = "reduced" can leave the free-body representation: the engine gives
 * the pair a block of its own in the state vector (a "contact pair" block, the block kind that
 * holds two bodies), integrates that block by the model's derivative inside CVODE / RK4, and
 * derives the two bodies' states from it wherever they are needed (frames, collision, contacts
 * with third bodies). The pair enters when its relative speed at the contact is below the pair's
 * velocity_tolerance (the model's enter may refuse) and leaves, with continuous body states,
 * when the model's normal force turns negative (separation, 002 4.4.4) or a third body joins the
 * island. Kry's contact coordinates (s, t, u, v, psi) are such a model (the smooth-contact
 * issue); engine_reduced_welded() is the reference one: the two bodies move as one rigid body
 * (a sticking, no-slip no-spin contact) while the contact presses. 3D scenes only. */

#define ENGINE_REDUCED_BLOCK_MAX 32 /* values of a pair block */
#define ENGINE_REDUCED_DATA_MAX 640 /* bytes of constants a model keeps per pair */

typedef struct EngineReducedPair {
    double mass_a, mass_b;     /* kg (mass_b 0: a fixed obstacle) */
    Vec3 inertia_a, inertia_b; /* principal moments, body frames */
    Vec3 point, normal;        /* the contact at entry: world point, normal from b to a */
    bool fixed_b;              /* b is a fixed obstacle (enter gets its pose, at rest) */
    /* The bodies' smooth surfaces (shape "smooth"; NULL: none) and the pair's contact
     * parameters, Borrowed for the pair's life. */
    const SmoothSurface *surface_a, *surface_b;
    const ContactParams *params;
    double t; /* s: when the pair entered */
} EngineReducedPair;

/* The external wrenches on the two bodies (world, about their centres of mass): gravity, their
 * force and torque properties, applied wrenches and contacts with anything outside the pair. */
typedef struct EngineReducedLoads {
    Vec3 force_a, torque_a, force_b, torque_b;
} EngineReducedLoads;

typedef struct EngineReducedModel {
    const char *name;
    int block_size; /* values of the pair's block, <= ENGINE_REDUCED_BLOCK_MAX */
    /* The block from the two bodies' states (b: the obstacle at rest when fixed_b); data
     * (ENGINE_REDUCED_DATA_MAX bytes, zeroed) keeps the pair's constants. false: the pair stays
     * free bodies. */
    bool (*enter)(const EngineReducedPair *pair, void *data, const EngineBodyState *a,
                  const EngineBodyState *b, double *block);
    /* d(block)/dt under the loads. Pure: called at trial states. */
    void (*derivative)(const EngineReducedPair *pair, const void *data, const double *block,
                       const EngineReducedLoads *loads, double *dblock);
    /* The two bodies' states (b untouched when fixed_b). */
    void (*bodies)(const EngineReducedPair *pair, const void *data, const double *block,
                   EngineBodyState *a, EngineBodyState *b);
    /* The contact's normal force on a along the entry normal (N, > 0 pressing) that the block's
     * motion needs under the loads: the pair separates when it turns negative. */
    double (*normal_force)(const EngineReducedPair *pair, const void *data, const double *block,
                           const EngineReducedLoads *loads);
    /* Optional: at the end of each step at time t, what the model decides between steps
     * (friction switching, patch traversal, 002 4.4.4 and 4.5), which may change the block and
     * data. Returns ENGINE_REDUCED_KEEP, _CHANGED (the block jumped: the integrator restarts) or
     * _LEAVE (the pair goes back to free bodies; err says why). A model with this hook decides
     * separation in it (the engine then does not call normal_force at commits). */
    int (*commit)(const EngineReducedPair *pair, void *data, double *block,
                  const EngineReducedLoads *loads, double t, IssimError *err);
    /* true: the model keeps the contact itself, so the pair stays while the collision world
     * still reports it or not (it leaves on a negative normal force or a third body). */
    bool keeps_contact;
} EngineReducedModel;

enum { ENGINE_REDUCED_KEEP, ENGINE_REDUCED_CHANGED, ENGINE_REDUCED_LEAVE };

/* The welded pair: one rigid body of the two (mass, centre and inertia combined; the entry
 * conserves linear and angular momentum), 13 values; against an obstacle the body is held. */
const EngineReducedModel *engine_reduced_welded(void);
/* Kry's contact coordinates (issim/smooth_contact.h) for a smooth body on a smooth obstacle:
 * 10 values (q, q_dot); friction from the pair's friction_kinetic, friction_static,
 * rolling_friction, spinning_friction(_static) and slip_tolerance. The engine takes it for
 * every pair whose two sides have surfaces (shape "smooth") and b is an obstacle; other pairs
 * are welded. */
const EngineReducedModel *engine_reduced_smooth(void);
/* Chooses the model of reduced pairs (Borrowed; NULL: by the pair, as above). Thread: engine. */
void engine_set_reduced_model(Engine *engine, const EngineReducedModel *model);

#endif
