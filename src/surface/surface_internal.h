/* Private to src/surface: bivariate jets (truncated Taylor series in (ds, dt) of total order 3),
 * the forward-mode automatic differentiation of 002 5.3 (Fig. 5.11 propagates each partial
 * derivative through every assignment; a jet carries all of them at once). */
#ifndef ISSIM_SURFACE_INTERNAL_H
#define ISSIM_SURFACE_INTERNAL_H

#include "issim/surface.h"

/* f(s0 + ds, t0 + dt) = sum c[k] ds^a dt^b over the monomials of SurfaceDerivative order
 * (1, ds, dt, ds^2, ds dt, dt^2, ds^3, ds^2 dt, ds dt^2, dt^3): c[k] is the partial derivative
 * of index k divided by a! b!. A coefficient of order k of any result depends only on the
 * coefficients of order <= k of the operands, so a jet known to order 2 gives results correct to
 * order 2. Products and functions take the order to truncate at (0..3): coefficients above it are
 * left zero, which saves the work of orders nobody reads. */
#define JET_ORDER 3
typedef struct Jet {
    double c[SURFACE_DERIVATIVES];
} Jet;

typedef struct JetVec3 {
    Jet x, y, z;
} JetVec3;

/* The product's terms: {result, left, right} coefficient indices with the exponents of left and
 * right adding to those of result, sorted by the result's order, so a product truncated at order
 * k uses the first JET_PRODUCT_TERMS[k] rows. */
static const unsigned char JET_PRODUCT[35][3] = {
    {0, 0, 0}, {1, 0, 1}, {1, 1, 0}, {2, 0, 2}, {2, 2, 0}, {3, 0, 3}, {3, 1, 1},
    {3, 3, 0}, {4, 0, 4}, {4, 1, 2}, {4, 2, 1}, {4, 4, 0}, {5, 0, 5}, {5, 2, 2},
    {5, 5, 0}, {6, 0, 6}, {6, 1, 3}, {6, 3, 1}, {6, 6, 0}, {7, 0, 7}, {7, 1, 4},
    {7, 2, 3}, {7, 3, 2}, {7, 4, 1}, {7, 7, 0}, {8, 0, 8}, {8, 1, 5}, {8, 2, 4},
    {8, 4, 2}, {8, 5, 1}, {8, 8, 0}, {9, 0, 9}, {9, 2, 5}, {9, 5, 2}, {9, 9, 0}};
static const int JET_PRODUCT_TERMS[4] = {1, 5, 15, 35};
/* Inline so that a constant order unrolls the loop into straight-line products. */
static inline Jet jet_mul(const Jet *a, const Jet *b, int order) {
    Jet out = {{0}};
#pragma GCC unroll 35
    for (int k = 0; k < JET_PRODUCT_TERMS[order]; k++)
        out.c[JET_PRODUCT[k][0]] += a->c[JET_PRODUCT[k][1]] * b->c[JET_PRODUCT[k][2]];
    return out;
}

Jet jet_add(const Jet *a, const Jet *b);
Jet jet_scale(const Jet *a, double k);
/* 1 / sqrt(a); a->c[0] must be positive. */
Jet jet_rsqrt(const Jet *a, int order);

/* Partial derivatives from Taylor coefficients (multiplies by a! b!). */
void jet_to_derivatives(const Jet *a, double d[SURFACE_DERIVATIVES]);

/* Vector jets, inline for the same reason as jet_mul. */
static inline JetVec3 jetvec3_cross(const JetVec3 *a, const JetVec3 *b, int order) {
    Jet yz = jet_mul(&a->y, &b->z, order), zy = jet_mul(&a->z, &b->y, order);
    Jet zx = jet_mul(&a->z, &b->x, order), xz = jet_mul(&a->x, &b->z, order);
    Jet xy = jet_mul(&a->x, &b->y, order), yx = jet_mul(&a->y, &b->x, order);
    Jet nzy = jet_scale(&zy, -1.0), nxz = jet_scale(&xz, -1.0), nyx = jet_scale(&yx, -1.0);
    return (JetVec3){jet_add(&yz, &nzy), jet_add(&zx, &nxz), jet_add(&xy, &nyx)};
}

static inline Jet jetvec3_dot(const JetVec3 *a, const JetVec3 *b, int order) {
    Jet xx = jet_mul(&a->x, &b->x, order), yy = jet_mul(&a->y, &b->y, order);
    Jet zz = jet_mul(&a->z, &b->z, order);
    Jet sum = jet_add(&xx, &yy);
    return jet_add(&sum, &zz);
}

static inline JetVec3 jetvec3_scale(const JetVec3 *a, const Jet *k, int order) {
    return (JetVec3){jet_mul(&a->x, k, order), jet_mul(&a->y, k, order), jet_mul(&a->z, k, order)};
}

/* ===== SmoothSurface (surface.h) from any kind of patch =====
 * A kind fills domains, neighbours and its evaluator; smooth_surface.c does the rest (domain
 * tests, closest point, tessellation) for every kind. */
typedef IssimStatus (*SurfacePatchEvaluator)(const SmoothSurface *surface, int patch, double s,
                                             double t, SurfacePoint *out, IssimError *err);
struct SmoothSurface {
    char name[128];
    int patch_count;
    SurfaceDomain *domains;                   /* patch_count */
    int (*neighbours)[SURFACE_DOMAIN_MAX][2]; /* [patch][edge] = {patch, edge}, -1: open */
    SurfacePatchEvaluator evaluate;
    /* smooth_surface_first_break for this kind; NULL: no patch has breaks */
    bool (*first_break)(const SmoothSurface *surface, int patch, const double from[2],
                        const double to[2], double line[3], double *beta);
    /* smooth_surface_piece and smooth_surface_evaluate_piece for this kind; NULL: every patch
     * is one piece */
    int (*piece)(const SmoothSurface *surface, int patch, double s, double t);
    IssimStatus (*evaluate_piece)(const SmoothSurface *surface, int patch, int piece, double s,
                                  double t, SurfacePoint *out, IssimError *err);
    void (*destroy_impl)(void *impl); /* Nullable */
    void *impl;                       /* the kind's data */
};
/* A surface of patch_count patches with every edge open and no evaluator yet. */
SmoothSurface *smooth_surface_alloc(const char *name, int patch_count, IssimError *err);

/* ===== Loop meshes for S-patch replacement (loop.c, 002 5.2.2) ===== */
enum { LOOP_PATCH_MONOMIALS = 15 }; /* quartic: u^a v^b w^c, a + b + c = 4 */
void loop_mesh_face(const LoopMesh *mesh, int face, int vertices[3]);
const char *loop_mesh_name(const LoopMesh *mesh);
/* The regular patch as a quartic triangular Bezier net (ordinates of u^a v^b w^c, a descending
 * then b descending; (u, v, w) = (1 - s - t, s, t)), and its blossom at four barycentric
 * arguments (002 eq. 5.18-5.19). */
void loop_patch_bezier(const Vec3 control[LOOP_PATCH_VERTICES], Vec3 net[LOOP_PATCH_MONOMIALS]);
Vec3 loop_patch_blossom(const Vec3 net[LOOP_PATCH_MONOMIALS], const double args[4][3]);
/* The same patch in the power basis of (s, t) (coefficient of s^a t^b at (a + b)(a + b + 1)/2
 * + b), and its evaluation: loop_patch_evaluate's outputs in closed form, about three times
 * cheaper (the basis is folded once per face, not per call). */
void loop_patch_power(const Vec3 control[LOOP_PATCH_VERTICES],
                      Vec3 coefficient[LOOP_PATCH_MONOMIALS]);
IssimStatus loop_patch_power_evaluate(const Vec3 coefficient[LOOP_PATCH_MONOMIALS], double s,
                                      double t, const char *name, SurfacePoint *out,
                                      IssimError *err);

/* loop_patch_power_evaluate's position derivatives alone (no normal). */
void loop_patch_power_derivatives(const Vec3 coefficient[LOOP_PATCH_MONOMIALS], double s, double t,
                                  Vec3 x[SURFACE_DERIVATIVES]);

/* Walks over any triangle mesh given by its third-vertex function (the vertex closing the face
 * that holds the directed edge from -> to, -1 on a boundary): a LoopMesh (loop_mesh_third) or
 * loop_exact.c's local nets. */
typedef int (*LoopThirdVertex)(const void *mesh, int from, int to);
int loop_mesh_third(const void *mesh, int from, int to);
/* The 12 vertices of face[0..2]'s regular patch in loop_mesh_patch's layout; false on a
 * boundary, the edge in boundary[0..1]. */
bool loop_walk_regular(LoopThirdVertex third, const void *mesh, const int face[3],
                       int out[LOOP_PATCH_VERTICES], int boundary[2]);
/* The LOOP_EXACT_NET of face (ev, r0, r1) at an extraordinary vertex ev of `valence`
 * (valence + 6 vertices); false on a boundary or when ev's ring does not close. */
bool loop_walk_extraordinary(LoopThirdVertex third, const void *mesh, int ev, int r0, int r1,
                             int valence, int *out);

/* ===== Exact evaluation at extraordinary vertices (loop_exact.c, Stam 1998) =====
 * A face (ev, r0, r1) whose first corner has valence N != 6 and whose other vertices within two
 * edges of ev have valence 6. Its net, LOOP_EXACT_NET(N) = N + 6 vertices: ev, its ring r0 ..
 * r_(N-1) counter-clockwise, then p, q, a, s, u: a across the edge r0-r1, and the faces (r0,
 * r_(N-1), p), (r0, p, q), (r0, q, a), (r0, a, r1), (r1, a, s), (r1, s, u), (r1, u, r2). */
enum { LOOP_EXACT_LEVELS = 48 }; /* sub-triangle levels cached; nearer the vertex: its limit */
#define LOOP_EXACT_NET(valence) ((valence) + 6)
typedef struct LoopExactRule LoopExactRule; /* Stam's subdivision matrices for one valence */
LoopExactRule *loop_exact_rule_create(int valence); /* NULL: out of memory */
void loop_exact_rule_destroy(LoopExactRule *rule);  /* NULL: no-op */
typedef struct LoopExactFace {
    int valence;
    Vec3 limit;                             /* ev's limit point */
    Vec3 (*power)[3][LOOP_PATCH_MONOMIALS]; /* [level][sub-triangle], minus limit */
} LoopExactFace;
/* Subdivides the net (LOOP_EXACT_NET(rule's valence) points) LOOP_EXACT_LEVELS times; false:
 * out of memory. */
bool loop_exact_face_init(LoopExactFace *face, const LoopExactRule *rule, const Vec3 *net);
void loop_exact_face_free(LoopExactFace *face);
/* The limit surface on the face's domain triangle (0, 0) = ev, (1, 0) = r0, (0, 1) = r1, with
 * loop_patch_evaluate's outputs and errors (outside the triangle: the polynomial of the nearest
 * regular sub-triangle extended). Within 2^-LOOP_EXACT_LEVELS of ev (s + t), the position is the
 * limit point and the derivatives those at that distance on the same ray (the diagonal at ev):
 * the parameterisation is singular at ev (|x_s x x_t| ~ (2 lambda)^(2k)). */
/* The first line where the face's sub-triangles meet (s + t = 2^-j; s = 2^-j with t <= 2^-j;
 * t = 2^-j with s <= 2^-j; j = 1 .. LOOP_EXACT_LEVELS) that the segment from -> to crosses:
 * line {a, b, c} with a s + b t - c < 0 at from, and the segment's fraction *beta there. */
bool loop_exact_first_break(const double from[2], const double to[2], double line[3], double *beta);
/* Piece 1 + 3 k + c is sub-triangle c of level k + 1 (loop_exact_piece: the one holding (s, t));
 * loop_exact_face_evaluate with piece > 0 evaluates that one's polynomial, extended past its
 * sub-triangle (within 2^-LOOP_EXACT_LEVELS of ev as above); with 0 the one holding (s, t). */
int loop_exact_piece(double s, double t);
IssimStatus loop_exact_face_evaluate(const LoopExactFace *face, int piece, double s, double t,
                                     const char *name, SurfacePoint *out, IssimError *err);

/* ===== S-patches (spatch.c, 002 5.2.1, 5.3.1; spatch_g1.c) ===== */
enum { SPATCH_MAX_DEGREE = 7 };
/* An n-sided S-patch of degree d over the regular n-gon of unit area (spatch_domain): control
 * points by multi-index, in spatch_multi_indices order (the caller sets them), and the index
 * tables of its de Casteljau nets. */
typedef struct SPatchTables SPatchTables;
typedef struct SPatch {
    int sides, degree;
    Vec3 *control;        /* spatch_control_count(sides, degree) */
    SurfaceDomain domain; /* spatch_domain(sides) */
    SPatchTables *tables;
} SPatch;
/* 3 <= sides <= SURFACE_DOMAIN_MAX, 4 <= degree <= SPATCH_MAX_DEGREE; control points zero.
 * NULL: out of memory. */
SPatch *spatch_create(int sides, int degree);
void spatch_destroy(SPatch *patch); /* NULL: no-op */
/* The same map as a patch of one degree more (degree elevation); NULL: out of memory. */
SPatch *spatch_elevate(const SPatch *from);
/* Number of multi-indices of a degree over n sides: C(n + d - 1, d). */
int spatch_control_count(int sides, int degree);
/* The multi-indices as sorted side lists (a <= b <= ...), in control order; `out` holds
 * spatch_control_count(sides, degree) rows. */
void spatch_multi_indices(int sides, int degree, int (*out)[SPATCH_MAX_DEGREE]);
/* The control index of a sorted side list of `degree` entries. */
int spatch_rank(int sides, int degree, const int *sorted);
/* The regular n-gon of unit area centred at the origin, corner 0 on the positive s axis. */
void spatch_domain(int sides, SurfaceDomain *out);
/* Position, its nine derivatives (jets, 002 5.3.1) and the normal; errors as
 * bezier_patch_evaluate, naming `name`. */
IssimStatus spatch_evaluate(const SPatch *patch, double s, double t, const char *name,
                            SurfacePoint *out, IssimError *err);
/* Makes a patch of degree >= 6 (>= 7 for 3 sides) tangent-plane continuous along every edge with
 * the surface across it (spatch_g1.c): resets the two control rows along each edge so that the
 * patch's cross-boundary derivatives lie in the planes spanned by tangent[j] and cross[j] at
 * every point of edge j. tangent[j] and cross[j] are cubics in the edge fraction a (Bezier
 * ordinates): the boundary curve's derivative and a transversal derivative of the neighbour;
 * the boundary rows and, at each corner, the tangent plane must already agree with them (the
 * neighbours meeting at a corner C2 to each other, which makes the two edges' conditions on the
 * corner's twist point agree). */
void spatch_join_g1(SPatch *patch, const Vec3 (*tangent)[4], const Vec3 (*cross)[4]);

#endif
