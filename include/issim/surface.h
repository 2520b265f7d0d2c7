/* issim surface: smooth parametric surfaces for Kry's contact evolution (seed 002, ch. 4-5).
 *
 * The contact evolution of 002 4.2-4.3 needs, at a contact parameter (s, t) of each surface, the
 * position x(s, t) and its partial derivatives "in all combinations up to order three" (002 5.3:
 * the ten of Table 6.1, counting x itself), and the contact frame built from them (002 eqs.
 * 4.5-4.8, App. A): the unit normal and its first and second partial derivatives (H needs the
 * frame's first derivatives, its time derivative the second). This module evaluates them for
 * bicubic Bezier patches (002 App. B.1) and for the regular patches of Loop subdivision surfaces
 * (002 5.1, App. B.2) and the S-patches that replace a Loop surface's extraordinary vertices
 * (002 5.2, smooth_surface_from_loop), and derives the normal and the curvature from the position
 * derivatives of any surface.
 *
 * How the derivatives are computed: the position derivatives of a Bezier patch in closed form
 * (tensor products of the cubic Bernstein polynomials and their derivatives: exact, and cheaper
 * than carrying derivatives through every operation because the patch is separable); the unit
 * normal and its derivatives by forward-mode automatic differentiation (002 5.3, Fig. 5.11) with
 * a small bivariate truncated-Taylor type ("jets": multivariate dual numbers carrying every mixed
 * partial up to the third order), because the closed forms of the derivatives of
 * (x_s x x_t) / |x_s x x_t| are long and error-prone; the Loop basis by jets too.
 *
 * Thread: any. Every function is pure on caller-owned data; nothing is allocated.
 */
#ifndef ISSIM_SURFACE_H
#define ISSIM_SURFACE_H

#include "issim/core.h"
#include "issim/math.h"

/* ===== Evaluated point ===== */

/* Index of a partial derivative in SurfacePoint.x and .normal: SURFACE_ST is d2/(ds dt) ... */
typedef enum SurfaceDerivative {
    SURFACE_VALUE = 0,
    SURFACE_S,
    SURFACE_T,
    SURFACE_SS,
    SURFACE_ST,
    SURFACE_TT,
    SURFACE_SSS,
    SURFACE_SST,
    SURFACE_STT,
    SURFACE_TTT,
    SURFACE_DERIVATIVES, /* 10: x and its nine partial derivatives up to order three */
} SurfaceDerivative;

/* Derivatives of the unit normal kept: up to second order (SURFACE_VALUE .. SURFACE_TT). */
enum { SURFACE_NORMAL_DERIVATIVES = SURFACE_TT + 1 };

/* A surface evaluated at (s, t): position and partial derivatives, the unit normal
 * n = (x_s x x_t) / |x_s x x_t| and its partial derivatives up to second order. The normal of a
 * closed body's surface points out of the body when the parameterisation is right-handed seen
 * from outside (see bezier_patch_rattleback for the convention this fixes). */
typedef struct SurfacePoint {
    double s, t;
    Vec3 x[SURFACE_DERIVATIVES];             /* by SurfaceDerivative */
    Vec3 normal[SURFACE_NORMAL_DERIVATIVES]; /* n, n_s, n_t, n_ss, n_st, n_tt */
} SurfacePoint;

/* Fills point->normal from point->x (any surface). A degenerate point (x_s x x_t zero relative
 * to |x_s| |x_t|, or not finite) is ISSIM_ERR_NUMERIC naming `surface` and (s, t); the normal is
 * then zero. `surface` names the patch in messages (Nullable). */
IssimStatus surface_point_normal(SurfacePoint *point, const char *surface, IssimError *err);

/* Principal curvatures and directions at an evaluated point, from the first and second
 * fundamental forms (I = [x_s.x_s, x_s.x_t; ., x_t.x_t], II = [x_ss.n, x_st.n; ., x_tt.n]).
 * Sign: a curvature is positive where the surface bends away from its normal, i.e. a surface
 * convex in the direction of n (a sphere with its outward normal: +1/R). `point` must come
 * from a successful evaluation (a regular point: the fundamental form I is invertible). */
typedef struct SurfaceCurvature {
    double principal[2]; /* principal[0] <= principal[1] */
    Vec3 direction[2];   /* unit tangents of the principal directions (orthogonal) */
    double gaussian, mean;
} SurfaceCurvature;
void surface_curvature(const SurfacePoint *point, SurfaceCurvature *out);

/* ===== Bicubic Bezier patch (002 App. B.1) ===== */

typedef struct BezierPatch {
    Vec3 control[4][4]; /* control[i][j]: i along s, j along t; x(s, t) = sum B_i(s) B_j(t) P_ij */
    char name[64];      /* names the patch in error messages */
} BezierPatch;

/* Evaluates position, its nine partial derivatives, the unit normal and its derivatives at
 * (s, t). The polynomial extends beyond [0, 1]^2 and is evaluated there too (boundary traversal,
 * 002 4.5.1, locates crossings by evaluating just outside). Errors: a non-finite parameter
 * (ISSIM_ERR_INVALID); a degenerate normal (ISSIM_ERR_NUMERIC, naming the patch and (s, t); the
 * position derivatives are still filled). */
IssimStatus bezier_patch_evaluate(const BezierPatch *patch, double s, double t, SurfacePoint *out,
                                  IssimError *err);

/* The rattleback cap of 002 App. B.1 in its body frame (centre of mass at the origin): the
 * listed control net, scaled by (0.6, 0.2, 0.2), rotated by -0.174 rad about z, offset by
 * (0, 0, 0.2), in that order; control[i][j] is the (i * 4 + j)-th point of the listing (x constant
 * along j, so s runs along the cap's length and t across it).
 *
 * Sign convention: with this order n = x_s x x_t is +z at the cap's lowest-curvature point
 * (s, t) = (0.5, 0.5), which lies at (0, 0, 0.1): the normal points away from the centre of mass
 * and the cap bends away from it (both principal curvatures positive in surface_curvature's
 * sign), so the cap is convex in the direction of +z in the body frame. Resting on the floor, the
 * contact frames align n with the floor's -normal: the body's +z points down, and the cap is
 * convex toward the floor. Swapping s and t would flip n and make the cap concave toward the
 * floor (the centre of mass outside the body). */
void bezier_patch_rattleback(BezierPatch *out);

/* The flat floor patch of 002 App. B.1: the square [-1.5, 1.5]^2 at z = 0, n = +z. */
void bezier_patch_rattleback_floor(BezierPatch *out);

/* ===== Loop subdivision surfaces (002 5.1, App. B.2) ===== */

/* A closed triangle mesh whose limit under Loop subdivision is the surface. Faces are
 * counter-clockwise seen from outside (n = x_s x x_t then points out). */
typedef struct LoopMesh LoopMesh;

enum { LOOP_PATCH_VERTICES = 12 };

/* Reads an .obj file (002 App. B.2: "v x y z" and "f i j k" lines; the collision module's reader,
 * which fans polygons into triangles). Errors: the reader's (file:line), and a mesh that is not
 * an oriented 2-manifold (an edge used twice in one direction), naming the edge. The mesh may
 * have boundaries (loop_mesh_is_closed); evaluation needs a closed neighbourhood. */
LoopMesh *loop_mesh_load(const char *path, IssimError *err);
/* The same from arrays (copied); `name` names the mesh in messages. */
LoopMesh *loop_mesh_create(const char *name, const Vec3 *vertices, int vertex_count,
                           const int (*faces)[3], int face_count, IssimError *err);
void loop_mesh_destroy(LoopMesh *mesh); /* NULL: no-op */
int loop_mesh_face_count(const LoopMesh *mesh);
int loop_mesh_vertex_count(const LoopMesh *mesh);
/* Faces around a vertex, 0 <= vertex < loop_mesh_vertex_count (0-based). */
int loop_mesh_valence(const LoopMesh *mesh, int vertex);
Vec3 loop_mesh_vertex(const LoopMesh *mesh, int vertex); /* the control vertex (0-based) */
bool loop_mesh_is_closed(const LoopMesh *mesh);

/* One step of Loop subdivision (002 5.1, Fig. 5.1): the same limit surface with four times the
 * faces. Old vertices keep their indices (moved by Loop's vertex rule), edge vertices follow;
 * face f = (a, b, c) becomes faces 4f .. 4f + 3 = (a, ab, ca), (ab, b, bc), (ca, bc, c),
 * (ab, bc, ca), so face f at (s, t) is face 4f at (2s, 2t) for s + t <= 1/2. Every face not
 * touching an extraordinary vertex is regular, so subdividing k times evaluates exactly all but
 * the 2^-k neighbourhoods of the extraordinary vertices. A mesh with a boundary is refused
 * (ISSIM_ERR_INVALID naming the edge). */
LoopMesh *loop_mesh_subdivide(const LoopMesh *mesh, IssimError *err);

/* The 12 control vertices of face `face`'s regular patch, in the layout of Stam's basis:
 *
 *        1   2
 *      3   4   5
 *    6   7   8   9          face = (4, 7, 8), counter-clockwise
 *     10  11  12
 *
 * Errors (ISSIM_ERR_INVALID, naming the mesh, the face and the vertex, 1-based as in the file):
 * a corner of valence other than 6 (an extraordinary vertex: 002 5.1.2; smooth_surface_from_loop
 * replaces its 1-ring by an S-patch, 5.2), a boundary edge in the neighbourhood. */
IssimStatus loop_mesh_patch(const LoopMesh *mesh, int face, int control[LOOP_PATCH_VERTICES],
                            IssimError *err);

/* The limit surface of a regular patch at (s, t), s, t >= 0, s + t <= 1: barycentric
 * (u, v, w) = (1 - s - t, s, t) on the face (4, 7, 8), so (0, 0) is vertex 4's limit point, x_s
 * points toward 7 and x_t toward 8. Position and the ten derivatives by jets through the quartic
 * box-spline basis; outside the triangle the polynomial extends (it is no longer the limit
 * surface there). Errors as bezier_patch_evaluate. */
IssimStatus loop_patch_evaluate(const Vec3 control[LOOP_PATCH_VERTICES], double s, double t,
                                const char *name, SurfacePoint *out, IssimError *err);
/* loop_mesh_patch then loop_patch_evaluate; messages name the mesh and the face. */
IssimStatus loop_mesh_evaluate(const LoopMesh *mesh, int face, double s, double t,
                               SurfacePoint *out, IssimError *err);

/* A test shape: the bipyramid over the regular `sides`-gon of radius 1 in the xy plane with
 * apexes at z = +-1, named "bipyramid <sides>": apexes of valence `sides` (3 .. 12), equator
 * vertices of valence 4. */
LoopMesh *loop_mesh_bipyramid(int sides, IssimError *err);

/* The limit position of a control vertex (0-based) under Loop subdivision (002 5.1's limit
 * mask): where the surface passes near it; subdividing keeps it. */
Vec3 loop_mesh_limit_point(const LoopMesh *mesh, int vertex);

/* ===== Piecewise smooth surfaces (002 4.5): a body's boundary as patches with polygon domains
 * =====
 *
 * What the contact evolution walks on. Each patch has a convex polygon domain (counter-clockwise
 * corners in the (s, t) plane: the unit square of a Bezier patch, the triangle s, t >= 0,
 * s + t <= 1 of a Loop patch, the n-gon of an S-patch) and an evaluator. Edge e of a patch runs
 * from corner e to corner e + 1 (mod count); its neighbour across that edge is a patch and an edge
 * of it that map to the same curve in space, traversed the other way (002 eq. 4.48-4.49 with
 * g(u) = 1 - u): the point at fraction a along edge e is the point at fraction 1 - a along the
 * neighbour's edge. Neighbouring patches must be tangent-plane continuous (002 4.5). */

enum { SURFACE_DOMAIN_MAX = 12 }; /* polygon corners of a domain (an S-patch of that many sides) */

typedef struct SurfaceDomain {
    int count;                            /* 3 .. SURFACE_DOMAIN_MAX */
    double corner[SURFACE_DOMAIN_MAX][2]; /* (s, t), counter-clockwise, convex */
} SurfaceDomain;

typedef struct SmoothSurface SmoothSurface;

/* How a Loop surface is evaluated at its extraordinary vertices (the scene property
 * surface_extraordinary). */
typedef enum SurfaceExtraordinary {
    SURFACE_EXTRAORDINARY_EXACT = 0, /* Stam's exact evaluation of the limit surface: C2 but at the
                                      * vertex itself (smooth_surface_from_loop) */
    SURFACE_EXTRAORDINARY_SPATCH,    /* 002 5.2's S-patches replacing the 1-rings: G1 at their
                                      * corners only */
    SURFACE_EXTRAORDINARY_COUNT
} SurfaceExtraordinary;
/* "exact", "spatch": the property's names (thing.h, "Vocabularies"). */
extern const char *const surface_extraordinary_names[];
const char *surface_extraordinary_name(SurfaceExtraordinary kind);

/* One bicubic Bezier patch (copied) as a surface of one patch with open edges (no neighbours).
 * The patch's name names the surface. */
SmoothSurface *smooth_surface_from_bezier(const BezierPatch *patch, IssimError *err);
/* The surface a scene describes (the surface_* properties, docs/scene-format.md): a bicubic
 * Bezier net of 16 points (control[i][j] = points[4 i + j]), or, with no points, the Loop
 * surface of the .obj control mesh at `loop_file` subdivided `levels` times, its extraordinary
 * vertices as `extraordinary` says; every control point p becomes scale * p + offset first
 * (Bezier and Loop surfaces are affine invariant). Errors name `name` and the property at
 * fault. */
SmoothSurface *smooth_surface_create(const char *name, const Vec3 *points, int point_count,
                                     const char *loop_file, Vec3 scale, Vec3 offset, int levels,
                                     SurfaceExtraordinary extraordinary, IssimError *err);
/* A closed Loop surface (002 5.1-5.2): `mesh` subdivided `levels` times (the mesh is not kept);
 * patches 0 .. R - 1 are the subdivided mesh's faces without an extraordinary corner, in face
 * order, each the exact regular patch (loop_patch_evaluate's (s, t) on the domain triangle
 * (0, 0), (1, 0), (0, 1); edge e from face vertex e to e + 1).
 *
 * SURFACE_EXTRAORDINARY_EXACT: then the faces at the extraordinary vertices (valence other than
 * 6), for each such vertex v in increasing vertex order its n faces (v, r_j, r_(j+1)) with r_j
 * its ring counter-clockwise from the first neighbour in the mesh's edge order, j = 0 .. n - 1;
 * each on the same domain triangle with v at (0, 0), r_j at (1, 0), r_(j+1) at (0, 1) (edge e
 * from local corner e to e + 1), evaluated exactly by Stam's method (the face subdivided until
 * the point lies in a regular sub-triangle: docs/smooth-contact.md). Every patch meets its
 * neighbours with C2 except at v itself, where the parameterisation is singular (x_s x x_t ->
 * 0 for valence 3 to 5, -> infinity above 6); within 2^-48 of v (s + t) the position is v's limit
 * point and the derivatives those at 2^-48 on the same ray.
 *
 * SURFACE_EXTRAORDINARY_SPATCH: then one S-patch (degree 6, 7 with 3 sides) per
 * extraordinary vertex (valence other than 6) in increasing vertex order (the subdivision keeps
 * the control mesh's vertex numbers first), replacing that vertex's 1-ring: its domain the
 * regular n-gon of unit area centred at (0, 0), corner 0 on the +s axis, edge j the ring's outer
 * edge from its j-th to its (j + 1)-th neighbour counter-clockwise (002 5.2.1); its control
 * points blossoms of the regular patches across its edges (002 5.2.2), its rows along each edge
 * then reset from the patch across it. Every edge has a neighbour. Regular patches meet with C2;
 * an S-patch meets its neighbours with the same boundary curve and the same tangent planes
 * along the whole edge (G1; the curvature jumps: docs/smooth-contact.md). Errors (ISSIM_ERR_INVALID
 * naming the mesh and the edge or vertex, 1-based as in the file): a boundary edge, a vertex whose
 * faces do not form one fan, a valence outside 3 .. SURFACE_DOMAIN_MAX, and `levels` too low to put
 * the extraordinary vertices 3 edges apart (the message gives the minimum: 2 when two are adjacent,
 * 1 when two edges apart; either mode needs it); ISSIM_ERR_RANGE for levels outside 0 .. 6. */
SmoothSurface *smooth_surface_from_loop(const LoopMesh *mesh, int levels,
                                        SurfaceExtraordinary extraordinary, IssimError *err);
void smooth_surface_destroy(SmoothSurface *surface); /* NULL: no-op */
const char *smooth_surface_name(const SmoothSurface *surface);
int smooth_surface_patch_count(const SmoothSurface *surface);
const SurfaceDomain *smooth_surface_domain(const SmoothSurface *surface, int patch);
/* Evaluates patch `patch` at (s, t) (errors as bezier_patch_evaluate, naming the surface, the
 * patch and (s, t)). Points outside the domain are evaluated by the patch's polynomial extended
 * (boundary traversal locates crossings by evaluating just past them). */
IssimStatus smooth_surface_evaluate(const SmoothSurface *surface, int patch, double s, double t,
                                    SurfacePoint *out, IssimError *err);
/* The neighbour across edge `edge` of `patch`; false on an open edge (the surface ends). */
bool smooth_surface_neighbour(const SmoothSurface *surface, int patch, int edge, int *other_patch,
                              int *other_edge);
/* Lines inside a patch's domain where the surface is C2 but not C3: the edges of Stam's
 * sub-triangles on a Loop face at an extraordinary vertex (exact mode). A contact integrator
 * stops its steps there (002 4.5's traversal, applied inside the patch) and goes on with the
 * piece across (below): a step, or one stage of it, that evaluates two pieces makes an error in
 * the contact's rates of order h times the jump of their acceleration there. True
 * when the segment from -> to crosses one: line {a, b, c} (a s + b t - c < 0 at from) of the
 * first, and the segment's fraction *beta there. */
bool smooth_surface_first_break(const SmoothSurface *surface, int patch, const double from[2],
                                const double to[2], double line[3], double *beta);
/* A patch with breaks is made of pieces, one polynomial each (Stam's sub-triangles). A contact
 * integrator keeps the piece a step starts on for the whole step (evaluated past its lines, the
 * polynomial extended), so that no step mixes two polynomials (the derivative of the contact's
 * equations jumps across a break), and moves to the next piece where the contact crosses a
 * break, as it moves to the next patch at an edge. smooth_surface_piece: the piece holding
 * (s, t), or for a point on a break the one the direction (ds, dt) leads into ((0, 0): either);
 * 0 on a patch without pieces. smooth_surface_evaluate_piece: smooth_surface_evaluate with
 * `piece`'s polynomial (0: the piece holding (s, t), as smooth_surface_evaluate). */
int smooth_surface_piece(const SmoothSurface *surface, int patch, double s, double t, double ds,
                         double dt);
IssimStatus smooth_surface_evaluate_piece(const SmoothSurface *surface, int patch, int piece,
                                          double s, double t, SurfacePoint *out, IssimError *err);
/* Whether (s, t) lies in the patch's domain grown by `margin` (distance in the parameter plane
 * past an edge; 0: the closed polygon). When outside, *edge (Nullable) is the first edge, in
 * order, whose outside half-plane holds the point. */
bool smooth_surface_domain_contains(const SmoothSurface *surface, int patch, double s, double t,
                                    double margin, int *edge);

/* The surface point nearest to `point` (surface frame): its patch and (s, t) in that patch's
 * domain, and the distance. A global search over a sampling of every patch, refined by Newton's
 * method inside the nearest patch (kept in its closed domain). Cost: a few hundred evaluations;
 * for starting a contact, not for every step. */
IssimStatus smooth_surface_closest(const SmoothSurface *surface, Vec3 point, int *patch, double *s,
                                   double *t, double *distance, IssimError *err);

/* Triangles approximating the surface (for drawing and for the collision module), each patch
 * cut into triangles of about 1/segments of its domain's size. Arrays are malloc'd and owned by
 * the caller (free them); patch_of_triangle gives the patch each triangle lies in (Nullable). */
typedef struct SurfaceTessellation {
    int vertex_count, triangle_count;
    Vec3 *vertices, *normals;
    int (*triangles)[3]; /* counter-clockwise seen from the side the normals point to */
    int *patch_of_triangle;
} SurfaceTessellation;
IssimStatus smooth_surface_tessellate(const SmoothSurface *surface, int segments,
                                      SurfaceTessellation *out, IssimError *err);
void surface_tessellation_free(SurfaceTessellation *t);

#endif
