/* Loop subdivision surfaces (seed 002 5.1, App. B.2): closed triangle meshes read from .obj,
 * evaluated exactly on regular patches. A face whose three corners have valence 6 is, in the
 * limit, a patch of the quartic three-direction box spline over its 12-vertex neighbourhood
 * (002 5.1.1, after Stam's "Evaluation of Loop subdivision surfaces", SIGGRAPH 1998, whose basis
 * functions are LOOP_BASIS below); its derivatives come from jets (002 5.3). Faces at
 * extraordinary vertices (valence other than 6) are refused: 002 replaces their neighbourhoods
 * by S-patches (5.2: smooth_surface_from_loop in loop_surface.c, whose blossoms and limit points
 * come from the functions at the end of this file). */
#include "surface_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/collision.h"

typedef struct HalfEdge {
    int from, to, third; /* the face (from, to, third), counter-clockwise */
} HalfEdge;

struct LoopMesh {
    char name[128];
    TriMesh *triangles; /* Owned: vertices and faces as read (002 App. B.2's .obj) */
    int face_count;
    HalfEdge *edges; /* 3 face_count, sorted by (from, to) */
    int *valence;    /* faces around each vertex */
};

/* Stam's basis: 12 N_i = sum over the quartic monomials u^a v^b w^c (LOOP_MONOMIALS) of
 * LOOP_BASIS[i] times the monomial; (u, v, w) barycentric on the face, u at its first corner.
 * Checked (sympy): a partition of unity, linear precision, the valence-6 limit mask (1/2 at the
 * corner, 1/12 at each neighbour) at the corners, and invariance under the triangle's six
 * symmetries. */
static const int LOOP_MONOMIALS[15][3] = {{4, 0, 0}, {3, 1, 0}, {3, 0, 1}, {2, 2, 0}, {2, 1, 1},
                                          {2, 0, 2}, {1, 3, 0}, {1, 2, 1}, {1, 1, 2}, {1, 0, 3},
                                          {0, 4, 0}, {0, 3, 1}, {0, 2, 2}, {0, 1, 3}, {0, 0, 4}};
static const double LOOP_BASIS[LOOP_PATCH_VERTICES][15] = {
    {1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {1, 6, 2, 12, 6, 0, 6, 6, 0, 0, 1, 2, 0, 0, 0},
    {6, 24, 24, 24, 60, 24, 8, 36, 36, 8, 1, 6, 12, 6, 1},
    {1, 2, 6, 0, 6, 12, 0, 0, 6, 6, 0, 0, 0, 2, 1},
    {0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0},
    {1, 8, 6, 24, 36, 12, 24, 60, 36, 6, 6, 24, 24, 8, 1},
    {1, 6, 8, 12, 36, 24, 6, 36, 60, 24, 1, 8, 24, 24, 6},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0},
    {0, 0, 0, 0, 0, 0, 2, 6, 6, 2, 1, 6, 12, 6, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1},
};

static int compare_half_edges(const void *pa, const void *pb) {
    const HalfEdge *a = pa, *b = pb;
    if (a->from != b->from)
        return (a->from > b->from) - (a->from < b->from);
    return (a->to > b->to) - (a->to < b->to);
}

/* Index in mesh->edges of the directed edge from -> to, or -1 (a boundary). */
static int half_edge_index(const LoopMesh *mesh, int from, int to) {
    HalfEdge key = {from, to, 0};
    const HalfEdge *e = bsearch(&key, mesh->edges, (size_t)(3 * mesh->face_count),
                                sizeof *mesh->edges, compare_half_edges);
    return e ? (int)(e - mesh->edges) : -1;
}

/* The third vertex of the face holding the directed edge from -> to, or -1 (a boundary). */
static int third_vertex(const LoopMesh *mesh, int from, int to) {
    int i = half_edge_index(mesh, from, to);
    return i >= 0 ? mesh->edges[i].third : -1;
}

static IssimStatus build_topology(LoopMesh *mesh, IssimError *err) {
    int n = mesh->face_count, vertices = trimesh_vertex_count(mesh->triangles);
    mesh->edges = malloc((size_t)(3 * n) * sizeof *mesh->edges);
    mesh->valence = calloc((size_t)vertices, sizeof *mesh->valence);
    if (!mesh->edges || !mesh->valence)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "loop mesh '%s': out of memory", mesh->name);
    for (int f = 0; f < n; f++) {
        int v[3];
        trimesh_triangle_indices(mesh->triangles, f, v);
        for (int k = 0; k < 3; k++) {
            mesh->edges[3 * f + k] = (HalfEdge){v[k], v[(k + 1) % 3], v[(k + 2) % 3]};
            mesh->valence[v[k]]++;
        }
    }
    qsort(mesh->edges, (size_t)(3 * n), sizeof *mesh->edges, compare_half_edges);
    for (int i = 1; i < 3 * n; i++)
        if (compare_half_edges(&mesh->edges[i - 1], &mesh->edges[i]) == 0)
            return issim_error_set(
                err, ISSIM_ERR_INVALID,
                "loop mesh '%s': edge %d-%d is used twice in the same direction (faces of "
                "opposite orientation, or more than two faces on one edge): not an oriented "
                "2-manifold",
                mesh->name, mesh->edges[i].from + 1, mesh->edges[i].to + 1);
    return ISSIM_OK;
}

static LoopMesh *loop_mesh_wrap(TriMesh *triangles, const char *name, IssimError *err) {
    if (!triangles)
        return NULL;
    LoopMesh *mesh = calloc(1, sizeof *mesh);
    if (!mesh) {
        trimesh_destroy(triangles);
        issim_error_set(err, ISSIM_ERR_NOMEM, "loop mesh '%s': out of memory", name);
        return NULL;
    }
    issim_strlcpy(mesh->name, name, sizeof mesh->name);
    mesh->triangles = triangles;
    mesh->face_count = trimesh_triangle_count(triangles);
    if (build_topology(mesh, err) != ISSIM_OK) {
        loop_mesh_destroy(mesh);
        return NULL;
    }
    return mesh;
}

LoopMesh *loop_mesh_create(const char *name, const Vec3 *vertices, int vertex_count,
                           const int (*faces)[3], int face_count, IssimError *err) {
    IssimError sub = {0};
    TriMesh *triangles = trimesh_create(vertices, vertex_count, faces, face_count, &sub);
    if (!triangles)
        issim_error_set(err, sub.status, "loop mesh '%s': %s", name, sub.message);
    return loop_mesh_wrap(triangles, name, err);
}

LoopMesh *loop_mesh_load(const char *path, IssimError *err) {
    return loop_mesh_wrap(trimesh_load_obj(path, err), path, err);
}

void loop_mesh_destroy(LoopMesh *mesh) {
    if (!mesh)
        return;
    trimesh_destroy(mesh->triangles);
    free(mesh->edges);
    free(mesh->valence);
    free(mesh);
}

int loop_mesh_face_count(const LoopMesh *mesh) {
    return mesh->face_count;
}

int loop_mesh_vertex_count(const LoopMesh *mesh) {
    return trimesh_vertex_count(mesh->triangles);
}

Vec3 loop_mesh_vertex(const LoopMesh *mesh, int vertex) {
    return trimesh_vertex(mesh->triangles, vertex);
}

int loop_mesh_valence(const LoopMesh *mesh, int vertex) {
    return mesh->valence[vertex];
}

bool loop_mesh_is_closed(const LoopMesh *mesh) {
    for (int i = 0; i < 3 * mesh->face_count; i++)
        if (third_vertex(mesh, mesh->edges[i].to, mesh->edges[i].from) < 0)
            return false;
    return true;
}

int loop_mesh_third(const void *mesh, int from, int to) {
    return third_vertex(mesh, from, to);
}

/* {target, from, to}: p[target] = third vertex of the face holding p[from] -> p[to], in the
 * layout of LOOP_BASIS (1-based; the face is (4, 7, 8)) */
static const int REGULAR_WALK[9][3] = {{3, 7, 4}, {5, 4, 8},  {11, 8, 7},  {2, 4, 5}, {1, 4, 2},
                                       {6, 7, 3}, {10, 7, 6}, {12, 8, 11}, {9, 8, 12}};

bool loop_walk_regular(LoopThirdVertex third, const void *mesh, const int face[3],
                       int out[LOOP_PATCH_VERTICES], int boundary[2]) {
    int p[LOOP_PATCH_VERTICES + 1]; /* 1-based, as the layout */
    p[4] = face[0], p[7] = face[1], p[8] = face[2];
    for (int k = 0; k < 9; k++) {
        p[REGULAR_WALK[k][0]] = third(mesh, p[REGULAR_WALK[k][1]], p[REGULAR_WALK[k][2]]);
        if (p[REGULAR_WALK[k][0]] < 0) {
            boundary[0] = p[REGULAR_WALK[k][2]];
            boundary[1] = p[REGULAR_WALK[k][1]];
            return false;
        }
    }
    memcpy(out, p + 1, sizeof(int) * LOOP_PATCH_VERTICES);
    return true;
}

/* Around ev counter-clockwise: ring[i + 1] closes the face (ev, ring[i], ring[i + 1]); then the
 * five second-ring vertices of LOOP_EXACT_NET's layout, each closing a face with r0 or r1. */
bool loop_walk_extraordinary(LoopThirdVertex third, const void *mesh, int ev, int r0, int r1,
                             int valence, int *out) {
    out[0] = ev, out[1] = r0, out[2] = r1;
    for (int i = 2; i < valence; i++)
        out[i + 1] = third(mesh, ev, out[i]);
    int *extra = out + 1 + valence; /* p, q, a, s, u */
    extra[2] = third(mesh, r1, r0);
    extra[1] = extra[2] < 0 ? -1 : third(mesh, extra[2], r0);
    extra[0] = extra[1] < 0 ? -1 : third(mesh, extra[1], r0);
    extra[3] = extra[2] < 0 ? -1 : third(mesh, r1, extra[2]);
    extra[4] = extra[3] < 0 ? -1 : third(mesh, r1, extra[3]);
    for (int i = 0; i < valence + 6; i++)
        if (out[i] < 0)
            return false;
    return third(mesh, ev, out[valence]) == r0; /* the ring closes: ev has that valence */
}

/* The neighbourhood of face (a, b, c) in the layout of LOOP_BASIS (a = 4, b = 7, c = 8 there,
 * 1-based as in the header). */
static IssimStatus regular_neighbourhood(const LoopMesh *mesh, int face,
                                         int out[LOOP_PATCH_VERTICES], IssimError *err) {
    int v[3], boundary[2];
    trimesh_triangle_indices(mesh->triangles, face, v);
    for (int k = 0; k < 3; k++)
        if (mesh->valence[v[k]] != 6)
            return issim_error_set(
                err, ISSIM_ERR_INVALID,
                "loop mesh '%s': face %d (vertices %d %d %d): vertex %d has valence %d; exact "
                "evaluation needs valence 6 at all three corners (extraordinary vertices: "
                "smooth_surface_from_loop, Stam's subdivision or S-patches)",
                mesh->name, face + 1, v[0] + 1, v[1] + 1, v[2] + 1, v[k] + 1, mesh->valence[v[k]]);
    if (!loop_walk_regular(loop_mesh_third, mesh, v, out, boundary))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "loop mesh '%s': face %d: edge %d-%d lies on a boundary (the "
                               "mesh is not closed around the face)",
                               mesh->name, face + 1, boundary[0] + 1, boundary[1] + 1);
    return ISSIM_OK;
}

/* ===== One step of Loop subdivision (002 5.1, Fig. 5.1) ===== */

/* Loop's vertex weight: a vertex of valence n moves to (1 - n beta) v + beta sum(neighbours). */
static double loop_beta(int valence) {
    double c = 0.375 + 0.25 * cos(2.0 * M_PI / valence);
    return (0.625 - c * c) / valence;
}

/* New vertex positions: the old vertices moved (indices kept), then one per edge. edge_of[i]
 * is the new index of half-edge i's edge. */
static void subdivided_vertices(const LoopMesh *mesh, const int *edge_of, Vec3 *out) {
    int vertices = loop_mesh_vertex_count(mesh);
    Vec3 *ring = out; /* neighbour sums first, then the moved vertices in place */
    for (int v = 0; v < vertices; v++)
        ring[v] = vec3(0, 0, 0);
    for (int i = 0; i < 3 * mesh->face_count; i++) {
        const HalfEdge *e = &mesh->edges[i];
        ring[e->from] = vec3_add(ring[e->from], loop_mesh_vertex(mesh, e->to));
        if (e->from < e->to) { /* each edge once: 3/8 of its ends, 1/8 of the two opposite */
            Vec3 ends = vec3_add(loop_mesh_vertex(mesh, e->from), loop_mesh_vertex(mesh, e->to));
            Vec3 sides = vec3_add(loop_mesh_vertex(mesh, e->third),
                                  loop_mesh_vertex(mesh, third_vertex(mesh, e->to, e->from)));
            out[edge_of[i]] = vec3_add(vec3_scale(ends, 0.375), vec3_scale(sides, 0.125));
        }
    }
    for (int v = 0; v < vertices; v++) {
        int n = mesh->valence[v];
        double beta = loop_beta(n);
        ring[v] = vec3_add(vec3_scale(loop_mesh_vertex(mesh, v), 1.0 - n * beta),
                           vec3_scale(ring[v], beta));
    }
}

LoopMesh *loop_mesh_subdivide(const LoopMesh *mesh, IssimError *err) {
    for (int i = 0; i < 3 * mesh->face_count; i++)
        if (third_vertex(mesh, mesh->edges[i].to, mesh->edges[i].from) < 0) {
            issim_error_set(err, ISSIM_ERR_INVALID,
                            "loop mesh '%s': edge %d-%d lies on a boundary: subdivision needs a "
                            "closed mesh",
                            mesh->name, mesh->edges[i].from + 1, mesh->edges[i].to + 1);
            return NULL;
        }
    int vertices = loop_mesh_vertex_count(mesh), half_edges = 3 * mesh->face_count;
    int new_vertices = vertices + half_edges / 2, new_faces = 4 * mesh->face_count;
    int *edge_of = malloc((size_t)half_edges * sizeof *edge_of);
    Vec3 *positions = malloc((size_t)new_vertices * sizeof *positions);
    int(*faces)[3] = malloc((size_t)new_faces * sizeof *faces);
    LoopMesh *fine = NULL;
    if (!edge_of || !positions || !faces) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "loop mesh '%s': out of memory", mesh->name);
        goto done;
    }
    for (int i = 0, next = vertices; i < half_edges; i++)
        if (mesh->edges[i].from < mesh->edges[i].to) {
            edge_of[i] = next;
            edge_of[half_edge_index(mesh, mesh->edges[i].to, mesh->edges[i].from)] = next++;
        }
    subdivided_vertices(mesh, edge_of, positions);
    /* face (a, b, c) -> (a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca): 4 f + k */
    for (int f = 0; f < mesh->face_count; f++) {
        int v[3], mid[3];
        trimesh_triangle_indices(mesh->triangles, f, v);
        for (int k = 0; k < 3; k++)
            mid[k] = edge_of[half_edge_index(mesh, v[k], v[(k + 1) % 3])];
        const int children[4][3] = {{v[0], mid[0], mid[2]},
                                    {mid[0], v[1], mid[1]},
                                    {mid[2], mid[1], v[2]},
                                    {mid[0], mid[1], mid[2]}};
        memcpy(faces[4 * f], children, sizeof children);
    }
    char name[sizeof mesh->name];
    snprintf(name, sizeof name, "%.100s, subdivided", mesh->name);
    fine = loop_mesh_create(name, positions, new_vertices, (const int(*)[3])faces, new_faces, err);
done:
    free(edge_of);
    free(positions);
    free(faces);
    return fine;
}

IssimStatus loop_patch_evaluate(const Vec3 control[LOOP_PATCH_VERTICES], double s, double t,
                                const char *name, SurfacePoint *out, IssimError *err) {
    if (!isfinite(s) || !isfinite(t))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "loop patch '%s': parameter (s, t) = (%g, %g) is not finite",
                               name ? name : "?", s, t);
    /* u = 1 - s - t, v = s, w = t as jets; their powers 0..4 */
    Jet powers[3][5] = {{{{1.0 - s - t, -1.0, -1.0}}}, {{{s, 1.0}}}, {{{t, 0.0, 1.0}}}};
    for (int k = 0; k < 3; k++) {
        powers[k][1] = powers[k][0];
        powers[k][0] = (Jet){{1.0}};
        for (int e = 2; e <= 4; e++)
            powers[k][e] = jet_mul(&powers[k][e - 1], &powers[k][1], JET_ORDER);
    }
    Jet monomials[15];
    for (int m = 0; m < 15; m++) {
        const int *e = LOOP_MONOMIALS[m];
        Jet uv = jet_mul(&powers[0][e[0]], &powers[1][e[1]], JET_ORDER);
        monomials[m] = jet_mul(&uv, &powers[2][e[2]], JET_ORDER);
    }
    /* x = sum_m monomial_m (sum_i LOOP_BASIS[i][m] / 12 P_i): the control points folded into
     * the monomial coefficients first, so the jets are summed 15 times, not 12 x 15 */
    JetVec3 x = {{{0}}, {{0}}, {{0}}};
    for (int m = 0; m < 15; m++) {
        Vec3 coefficient = vec3(0, 0, 0);
        for (int i = 0; i < LOOP_PATCH_VERTICES; i++)
            coefficient = vec3_add(coefficient, vec3_scale(control[i], LOOP_BASIS[i][m] / 12.0));
        for (int k = 0; k < SURFACE_DERIVATIVES; k++) {
            x.x.c[k] += monomials[m].c[k] * coefficient.x;
            x.y.c[k] += monomials[m].c[k] * coefficient.y;
            x.z.c[k] += monomials[m].c[k] * coefficient.z;
        }
    }
    double dx[SURFACE_DERIVATIVES], dy[SURFACE_DERIVATIVES], dz[SURFACE_DERIVATIVES];
    jet_to_derivatives(&x.x, dx);
    jet_to_derivatives(&x.y, dy);
    jet_to_derivatives(&x.z, dz);
    out->s = s;
    out->t = t;
    for (int k = 0; k < SURFACE_DERIVATIVES; k++)
        out->x[k] = vec3(dx[k], dy[k], dz[k]);
    return surface_point_normal(out, name, err);
}

IssimStatus loop_mesh_patch(const LoopMesh *mesh, int face, int control[LOOP_PATCH_VERTICES],
                            IssimError *err) {
    if (face < 0 || face >= mesh->face_count)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "loop mesh '%s': face %d out of range (%d faces)", mesh->name,
                               face + 1, mesh->face_count);
    return regular_neighbourhood(mesh, face, control, err);
}

IssimStatus loop_mesh_evaluate(const LoopMesh *mesh, int face, double s, double t,
                               SurfacePoint *out, IssimError *err) {
    int index[LOOP_PATCH_VERTICES];
    IssimStatus status = loop_mesh_patch(mesh, face, index, err);
    if (status != ISSIM_OK)
        return status;
    Vec3 control[LOOP_PATCH_VERTICES];
    for (int i = 0; i < LOOP_PATCH_VERTICES; i++)
        control[i] = trimesh_vertex(mesh->triangles, index[i]);
    char name[160];
    snprintf(name, sizeof name, "%s face %d", mesh->name, face + 1);
    return loop_patch_evaluate(control, s, t, name, out, err);
}

/* ===== For S-patch replacement (002 5.2.2) ===== */

void loop_mesh_face(const LoopMesh *mesh, int face, int vertices[3]) {
    trimesh_triangle_indices(mesh->triangles, face, vertices);
}

const char *loop_mesh_name(const LoopMesh *mesh) {
    return mesh->name;
}

/* 002 5.1: the limit position of a vertex of valence n, (1 - n chi) v + chi sum(neighbours),
 * chi = 1 / (3 / (8 beta) + n) (the eigenvector of Loop's vertex rule for eigenvalue 1). */
Vec3 loop_mesh_limit_point(const LoopMesh *mesh, int vertex) {
    int n = mesh->valence[vertex];
    double chi = 1.0 / (3.0 / (8.0 * loop_beta(n)) + n);
    Vec3 ring = vec3(0, 0, 0);
    for (int i = 0; i < 3 * mesh->face_count; i++)
        if (mesh->edges[i].from == vertex)
            ring = vec3_add(ring, loop_mesh_vertex(mesh, mesh->edges[i].to));
    return vec3_add(vec3_scale(loop_mesh_vertex(mesh, vertex), 1.0 - n * chi),
                    vec3_scale(ring, chi));
}

/* A regular patch is a quartic triangular Bezier patch: its ordinate of u^a v^b w^c is the
 * monomial coefficient divided by the multinomial 4! / (a! b! c!). */
void loop_patch_bezier(const Vec3 control[LOOP_PATCH_VERTICES], Vec3 net[LOOP_PATCH_MONOMIALS]) {
    static const double FACTORIAL[5] = {1, 1, 2, 6, 24};
    for (int m = 0; m < LOOP_PATCH_MONOMIALS; m++) {
        const int *e = LOOP_MONOMIALS[m];
        double multinomial = 24.0 / (FACTORIAL[e[0]] * FACTORIAL[e[1]] * FACTORIAL[e[2]]);
        Vec3 sum = vec3(0, 0, 0);
        for (int i = 0; i < LOOP_PATCH_VERTICES; i++)
            sum = vec3_add(sum, vec3_scale(control[i], LOOP_BASIS[i][m] / 12.0));
        net[m] = vec3_scale(sum, 1.0 / multinomial);
    }
}

/* Index in LOOP_MONOMIALS order of the exponents (a, b, c), a + b + c = degree of the
 * de Casteljau level: the rows of the layout are sorted by a descending, then b descending. */
static int monomial_index(int degree, int b, int c) {
    int a = degree - b - c, before = 0;
    for (int k = degree; k > a; k--)
        before += degree - k + 1; /* the rows with first exponent k hold degree - k + 1 entries */
    return before + (degree - a - b);
}

/* 002 5.2.2, eq. 5.18-5.19: the blossom f*(y1, y2, y3, y4) of the quartic by de Casteljau's
 * algorithm with a different argument at each level (barycentric (u, v, w), affine, any
 * position: the arguments of 5.19 lie outside the triangle). */
Vec3 loop_patch_blossom(const Vec3 net[LOOP_PATCH_MONOMIALS], const double args[4][3]) {
    Vec3 level[2][LOOP_PATCH_MONOMIALS];
    memcpy(level[0], net, sizeof level[0]);
    for (int degree = 4; degree > 0; degree--) {
        const double *y = args[4 - degree];
        const Vec3 *from = level[degree % 2];
        Vec3 *to = level[(degree + 1) % 2];
        for (int b = 0; b < degree; b++)
            for (int c = 0; b + c < degree; c++) {
                Vec3 p = vec3_scale(from[monomial_index(degree, b, c)], y[0]);
                p = vec3_add(p, vec3_scale(from[monomial_index(degree, b + 1, c)], y[1]));
                p = vec3_add(p, vec3_scale(from[monomial_index(degree, b, c + 1)], y[2]));
                to[monomial_index(degree - 1, b, c)] = p;
            }
    }
    return level[0][0];
}

/* ===== A regular patch in the power basis, for repeated evaluation ===== */

/* (a, b) of each power-basis coefficient: x(s, t) = sum c_k s^a t^b, a + b <= 4. */
static const int POWER_EXPONENTS[LOOP_PATCH_MONOMIALS][2] = {
    {0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 1}, {0, 2}, {3, 0}, {2, 1},
    {1, 2}, {0, 3}, {4, 0}, {3, 1}, {2, 2}, {1, 3}, {0, 4}};

static int power_index(int a, int b) {
    int order = a + b;
    return order * (order + 1) / 2 + b;
}

/* u^e0 v^e1 w^e2 with u = 1 - s - t, v = s, w = t expanded: (1 - s - t)^e0 by the multinomial
 * theorem, each term times s^e1 t^e2. */
void loop_patch_power(const Vec3 control[LOOP_PATCH_VERTICES],
                      Vec3 coefficient[LOOP_PATCH_MONOMIALS]) {
    static const double FACTORIAL[5] = {1, 1, 2, 6, 24};
    for (int k = 0; k < LOOP_PATCH_MONOMIALS; k++)
        coefficient[k] = vec3(0, 0, 0);
    for (int m = 0; m < LOOP_PATCH_MONOMIALS; m++) {
        const int *e = LOOP_MONOMIALS[m];
        Vec3 k_m = vec3(0, 0, 0);
        for (int i = 0; i < LOOP_PATCH_VERTICES; i++)
            k_m = vec3_add(k_m, vec3_scale(control[i], LOOP_BASIS[i][m] / 12.0));
        for (int j = 0; j <= e[0]; j++)
            for (int k = 0; j + k <= e[0]; k++) {
                double w = FACTORIAL[e[0]] /
                           (FACTORIAL[e[0] - j - k] * FACTORIAL[j] * FACTORIAL[k]) *
                           ((j + k) % 2 ? -1.0 : 1.0);
                int index = power_index(j + e[1], k + e[2]);
                coefficient[index] = vec3_add(coefficient[index], vec3_scale(k_m, w));
            }
    }
}

/* Derivative orders (in s, in t) of each SurfaceDerivative. */
static const int DERIVATIVE_S[SURFACE_DERIVATIVES] = {0, 1, 0, 2, 1, 0, 3, 2, 1, 0};
static const int DERIVATIVE_T[SURFACE_DERIVATIVES] = {0, 0, 1, 0, 1, 2, 0, 1, 2, 3};

void loop_patch_power_derivatives(const Vec3 coefficient[LOOP_PATCH_MONOMIALS], double s, double t,
                                  Vec3 x[SURFACE_DERIVATIVES]) {
    /* d^p/ds^p s^a = a! / (a - p)! s^(a - p): falling[a][p] s_power[a - p] */
    static const double FALLING[5][4] = {
        {1, 0, 0, 0}, {1, 1, 0, 0}, {1, 2, 2, 0}, {1, 3, 6, 6}, {1, 4, 12, 24}};
    double sp[5] = {1, s, s * s, s * s * s, s * s * s * s};
    double tp[5] = {1, t, t * t, t * t * t, t * t * t * t};
    for (int d = 0; d < SURFACE_DERIVATIVES; d++) {
        int p = DERIVATIVE_S[d], q = DERIVATIVE_T[d];
        Vec3 sum = vec3(0, 0, 0);
        for (int k = 0; k < LOOP_PATCH_MONOMIALS; k++) {
            int a = POWER_EXPONENTS[k][0], b = POWER_EXPONENTS[k][1];
            if (a < p || b < q)
                continue;
            double w = FALLING[a][p] * FALLING[b][q] * sp[a - p] * tp[b - q];
            sum = vec3_add(sum, vec3_scale(coefficient[k], w));
        }
        x[d] = sum;
    }
}

IssimStatus loop_patch_power_evaluate(const Vec3 coefficient[LOOP_PATCH_MONOMIALS], double s,
                                      double t, const char *name, SurfacePoint *out,
                                      IssimError *err) {
    if (!isfinite(s) || !isfinite(t))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "loop patch '%s': parameter (s, t) = (%g, %g) is not finite",
                               name ? name : "?", s, t);
    loop_patch_power_derivatives(coefficient, s, t, out->x);
    out->s = s;
    out->t = t;
    return surface_point_normal(out, name, err);
}

LoopMesh *loop_mesh_bipyramid(int sides, IssimError *err) {
    if (sides < 3 || sides > SURFACE_DOMAIN_MAX) {
        issim_error_set(err, ISSIM_ERR_RANGE, "bipyramid: %d sides (3 .. %d)", sides,
                        SURFACE_DOMAIN_MAX);
        return NULL;
    }
    Vec3 vertices[SURFACE_DOMAIN_MAX + 2];
    int faces[2 * SURFACE_DOMAIN_MAX][3];
    for (int i = 0; i < sides; i++) {
        int j = (i + 1) % sides;
        vertices[i] = vec3(cos(2.0 * M_PI * i / sides), sin(2.0 * M_PI * i / sides), 0.0);
        memcpy(faces[2 * i], (int[3]){i, j, sides}, sizeof(int[3]));
        memcpy(faces[2 * i + 1], (int[3]){j, i, sides + 1}, sizeof(int[3]));
    }
    vertices[sides] = vec3(0, 0, 1);
    vertices[sides + 1] = vec3(0, 0, -1);
    char name[32];
    snprintf(name, sizeof name, "bipyramid %d", sides);
    return loop_mesh_create(name, vertices, sides + 2, (const int(*)[3])faces, 2 * sides, err);
}
