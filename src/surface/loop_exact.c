/* Exact evaluation of a Loop surface on the faces at an extraordinary vertex (Stam, "Evaluation
 * of Loop subdivision surfaces", SIGGRAPH 1998, after his "Exact evaluation of Catmull-Clark
 * subdivision surfaces at arbitrary parameter values", 1998; seed 002 5.1-5.1.2 for Loop's rules,
 * 4.5 for the patch adjacency it keeps regular).
 *
 * Loop's scheme is C2 everywhere but at the extraordinary vertex (EV) itself. A face (ev, r0, r1)
 * subdivided k times has one child at ev and three regular ones; so the point (s, t) with
 * 2^-(k+1) < s + t <= 2^-k lies in a regular sub-triangle of level k + 1, evaluated exactly by
 * the regular patch (002 5.1.1) over its 12 control points. Those come from the face's net of
 * N + 6 vertices (LOOP_EXACT_NET) subdivided: net_(k+1) = A net_k (Stam's K x K subdivision
 * matrix, K = N + 6) and the 12 points of sub-triangle c of level k + 1 = B_c net_k (his extended
 * matrix followed by his picking matrices P_c). A and B_c are found here once per valence by
 * subdividing the net symbolically (each new vertex a weighted sum of the net's vertices: Loop's
 * vertex and edge rules, 002 Fig. 5.1), and the regular patches of every level are folded into the
 * power basis once per face (loop_patch_power), so an evaluation costs a regular patch's plus the
 * chain rule: sub-triangle c of level k + 1 is (s', t') = sigma (2^(k+1) (s, t) - o_c), so a
 * derivative of order p is sigma^p 2^(p (k+1)) times the sub-patch's.
 *
 * Precision: the nets are kept relative to ev's limit point (subdivision is affine invariant and
 * fixes it), so their coordinates shrink with the level like lambda^k and keep their relative
 * precision: the sub-patch at level 40 is as accurate relative to its size as at level 1. */
#include "surface_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    NET_MAX = LOOP_EXACT_NET(SURFACE_DOMAIN_MAX),
    LOCAL_VERTICES = 96,
    LOCAL_FACES = 4 * (SURFACE_DOMAIN_MAX + 7),
};

struct LoopExactRule {
    int valence, size;                             /* N, K = N + 6 */
    double next[NET_MAX][NET_MAX];                 /* A: net_(k+1) = A net_k */
    double child[3][LOOP_PATCH_VERTICES][NET_MAX]; /* B_c */
};

/* A piece of triangle mesh whose vertices are weighted sums of the net's (stencils). */
typedef struct LocalMesh {
    int vertex_count, face_count;
    int valence[LOCAL_VERTICES];
    int face[LOCAL_FACES][3];
    double stencil[LOCAL_VERTICES][NET_MAX];
} LocalMesh;

static int local_third(const void *mesh, int from, int to) {
    const LocalMesh *m = mesh;
    for (int f = 0; f < m->face_count; f++)
        for (int k = 0; k < 3; k++)
            if (m->face[f][k] == from && m->face[f][(k + 1) % 3] == to)
                return m->face[f][(k + 2) % 3];
    return -1;
}

static void local_add_face(LocalMesh *m, int a, int b, int c) {
    memcpy(m->face[m->face_count++], (int[3]){a, b, c}, sizeof(int[3]));
}

/* The net itself: vertex i is net point i; its faces as LOOP_EXACT_NET lists them. */
static void net_mesh(int valence, LocalMesh *m) {
    memset(m, 0, sizeof *m);
    int n = valence, p = n + 1, q = n + 2, a = n + 3, s = n + 4, u = n + 5;
    m->vertex_count = LOOP_EXACT_NET(n);
    for (int i = 0; i < m->vertex_count; i++) {
        m->valence[i] = i == 0 ? n : 6;
        m->stencil[i][i] = 1.0;
    }
    for (int i = 0; i < n; i++)
        local_add_face(m, 0, 1 + i, 1 + (i + 1) % n);
    local_add_face(m, 1, n, p);
    local_add_face(m, 1, p, q);
    local_add_face(m, 1, q, a);
    local_add_face(m, 1, a, 2);
    local_add_face(m, 2, a, s);
    local_add_face(m, 2, s, u);
    local_add_face(m, 2, u, 3);
}

static void stencil_add(double *to, const double *from, double weight, int size) {
    for (int i = 0; i < size; i++)
        to[i] += weight * from[i];
}

/* 002 5.1: a vertex of valence n moves to (1 - n beta) v + beta sum(neighbours). */
static double vertex_beta(int valence) {
    double c = 0.375 + 0.25 * cos(2.0 * M_PI / valence);
    return (0.625 - c * c) / valence;
}

/* One step of Loop subdivision of the part of `coarse` whose stencils are complete: a vertex
 * whose faces are all present, an edge with both its faces. vertex_of[v] and edge_of[a][b] are
 * the new indices (-1: not computable). */
static void local_subdivide(const LocalMesh *coarse, int size, LocalMesh *fine, int *vertex_of,
                            int (*edge_of)[LOCAL_VERTICES]) {
    memset(fine, 0, sizeof *fine);
    for (int v = 0; v < coarse->vertex_count; v++) {
        int faces = 0;
        double *row = fine->stencil[fine->vertex_count];
        double beta = vertex_beta(coarse->valence[v]);
        for (int f = 0; f < coarse->face_count; f++)
            for (int k = 0; k < 3; k++)
                if (coarse->face[f][k] == v) {
                    faces++;
                    stencil_add(row, coarse->stencil[coarse->face[f][(k + 1) % 3]], beta, size);
                }
        vertex_of[v] = -1;
        if (faces != coarse->valence[v]) {
            memset(row, 0, sizeof fine->stencil[0]);
            continue;
        }
        stencil_add(row, coarse->stencil[v], 1.0 - faces * beta, size);
        fine->valence[fine->vertex_count] = coarse->valence[v];
        vertex_of[v] = fine->vertex_count++;
    }
    for (int a = 0; a < coarse->vertex_count; a++)
        for (int b = 0; b < coarse->vertex_count; b++)
            edge_of[a][b] = -1;
    for (int a = 0; a < coarse->vertex_count; a++)
        for (int b = a + 1; b < coarse->vertex_count; b++) {
            int c = local_third(coarse, a, b), d = local_third(coarse, b, a);
            if (c < 0 || d < 0)
                continue;
            double *row = fine->stencil[fine->vertex_count];
            stencil_add(row, coarse->stencil[a], 0.375, size);
            stencil_add(row, coarse->stencil[b], 0.375, size);
            stencil_add(row, coarse->stencil[c], 0.125, size);
            stencil_add(row, coarse->stencil[d], 0.125, size);
            fine->valence[fine->vertex_count] = 6;
            edge_of[a][b] = edge_of[b][a] = fine->vertex_count++;
        }
    /* face (a, b, c) -> (a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca), as
     * loop_mesh_subdivide */
    for (int f = 0; f < coarse->face_count; f++) {
        const int *v = coarse->face[f];
        int a = vertex_of[v[0]], b = vertex_of[v[1]], c = vertex_of[v[2]];
        int ab = edge_of[v[0]][v[1]], bc = edge_of[v[1]][v[2]], ca = edge_of[v[2]][v[0]];
        const int children[4][3] = {{a, ab, ca}, {ab, b, bc}, {ca, bc, c}, {ab, bc, ca}};
        for (int k = 0; k < 4; k++)
            if (children[k][0] >= 0 && children[k][1] >= 0 && children[k][2] >= 0)
                local_add_face(fine, children[k][0], children[k][1], children[k][2]);
    }
}

static bool rule_build(LoopExactRule *rule, LocalMesh *coarse, LocalMesh *fine) {
    int n = rule->valence, size = rule->size;
    int vertex_of[LOCAL_VERTICES], edge_of[LOCAL_VERTICES][LOCAL_VERTICES];
    net_mesh(n, coarse);
    local_subdivide(coarse, size, fine, vertex_of, edge_of);
    int ev = vertex_of[0], m0 = edge_of[0][1], m1 = edge_of[0][2], e01 = edge_of[1][2];
    int r0 = vertex_of[1], r1 = vertex_of[2], net[NET_MAX];
    if (!loop_walk_extraordinary(local_third, fine, ev, m0, m1, n, net))
        return false;
    for (int i = 0; i < size; i++)
        memcpy(rule->next[i], fine->stencil[net[i]], sizeof rule->next[i]);
    /* the three regular children of (ev, r0, r1) = (a, b, c): (ab, b, bc), (ca, bc, c), and the
     * middle one from its corner bc, (bc, ca, ab), so its map to the parent is a point
     * reflection */
    const int children[3][3] = {{m0, r0, e01}, {m1, e01, r1}, {e01, m1, m0}};
    for (int c = 0; c < 3; c++) {
        int patch[LOOP_PATCH_VERTICES], boundary[2];
        if (!loop_walk_regular(local_third, fine, children[c], patch, boundary))
            return false;
        for (int i = 0; i < LOOP_PATCH_VERTICES; i++)
            memcpy(rule->child[c][i], fine->stencil[patch[i]], sizeof rule->child[c][i]);
    }
    return true;
}

LoopExactRule *loop_exact_rule_create(int valence) {
    LoopExactRule *rule = calloc(1, sizeof *rule);
    LocalMesh *meshes = malloc(2 * sizeof *meshes);
    bool ok = rule && meshes && valence >= 3 && valence <= SURFACE_DOMAIN_MAX;
    if (ok) {
        rule->valence = valence;
        rule->size = LOOP_EXACT_NET(valence);
        ok = rule_build(rule, &meshes[0], &meshes[1]);
    }
    free(meshes);
    if (!ok) {
        free(rule);
        return NULL;
    }
    return rule;
}

void loop_exact_rule_destroy(LoopExactRule *rule) {
    free(rule);
}

static void apply(const double (*matrix)[NET_MAX], int rows, int size, const Vec3 *in, Vec3 *out) {
    for (int i = 0; i < rows; i++) {
        Vec3 sum = vec3(0, 0, 0);
        for (int j = 0; j < size; j++)
            sum = vec3_add(sum, vec3_scale(in[j], matrix[i][j]));
        out[i] = sum;
    }
}

bool loop_exact_face_init(LoopExactFace *face, const LoopExactRule *rule, const Vec3 *net) {
    int n = rule->valence, size = rule->size;
    face->valence = n;
    face->power = malloc(LOOP_EXACT_LEVELS * sizeof *face->power);
    if (!face->power)
        return false;
    /* 002 5.1's limit mask: (1 - n chi) v + chi sum(ring), chi = 1 / (3 / (8 beta) + n) */
    double chi = 1.0 / (3.0 / (8.0 * vertex_beta(n)) + n);
    Vec3 ring = vec3(0, 0, 0);
    for (int i = 1; i <= n; i++)
        ring = vec3_add(ring, net[i]);
    face->limit = vec3_add(vec3_scale(net[0], 1.0 - n * chi), vec3_scale(ring, chi));
    /* the net relative to origin + limit, the origin moved to its first point at every level so
     * that the rounding of each subdivision step stays relative to the net's shrinking size */
    Vec3 current[NET_MAX], next[NET_MAX], origin = vec3_sub(net[0], face->limit);
    for (int i = 0; i < size; i++)
        current[i] = vec3_sub(net[i], net[0]);
    for (int level = 0; level < LOOP_EXACT_LEVELS; level++) {
        for (int c = 0; c < 3; c++) {
            Vec3 control[LOOP_PATCH_VERTICES];
            apply((const double(*)[NET_MAX])rule->child[c], LOOP_PATCH_VERTICES, size, current,
                  control);
            /* folded relative to one of them, for the same reason */
            Vec3 patch_origin = control[3];
            for (int i = 0; i < LOOP_PATCH_VERTICES; i++)
                control[i] = vec3_sub(control[i], patch_origin);
            loop_patch_power(control, face->power[level][c]);
            face->power[level][c][0] =
                vec3_add(face->power[level][c][0], vec3_add(origin, patch_origin));
        }
        apply((const double(*)[NET_MAX])rule->next, size, size, current, next);
        origin = vec3_add(origin, next[0]);
        for (int i = 0; i < size; i++)
            current[i] = vec3_sub(next[i], next[0]);
    }
    return true;
}

void loop_exact_face_free(LoopExactFace *face) {
    free(face->power);
    face->power = NULL;
}

/* Derivative orders of each SurfaceDerivative (s + t). */
static const int DERIVATIVE_ORDER[SURFACE_DERIVATIVES] = {0, 1, 1, 2, 2, 2, 3, 3, 3, 3};

/* The sub-triangle holding (s, t) (past an edge: the one at the nearest point of the domain, so
 * extended) as its level k + 1 and index c; *at_vertex when it lies within 2^-LOOP_EXACT_LEVELS
 * of the vertex, where the deepest level is used on the same ray. */
static void locate(double s, double t, int *k, int *c, bool *at_vertex) {
    double sc = fmax(s, 0.0), tc = fmax(t, 0.0);
    double nearest = ldexp(1.0, -LOOP_EXACT_LEVELS);
    *at_vertex = sc + tc < nearest;
    if (*at_vertex) {
        double r = sc + tc;
        sc = r > 0.0 ? sc * nearest / r : 0.5 * nearest;
        tc = r > 0.0 ? tc * nearest / r : 0.5 * nearest;
    }
    int exponent;
    frexp(sc + tc, &exponent); /* s + t in [2^(e-1), 2^e): level k = -e */
    int level = exponent < 0 ? -exponent : 0;
    *k = level < LOOP_EXACT_LEVELS ? level : LOOP_EXACT_LEVELS - 1;
    *c = ldexp(sc, *k) >= 0.5 ? 0 : ldexp(tc, *k) >= 0.5 ? 1 : 2;
}

int loop_exact_piece(double s, double t) {
    int k, c;
    bool at_vertex;
    locate(s, t, &k, &c, &at_vertex);
    return 1 + 3 * k + c;
}

IssimStatus loop_exact_face_evaluate(const LoopExactFace *face, int piece, double s, double t,
                                     const char *name, SurfacePoint *out, IssimError *err) {
    if (!isfinite(s) || !isfinite(t))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "loop patch '%s': parameter (s, t) = (%g, %g) is not finite",
                               name ? name : "?", s, t);
    int k, c;
    bool at_vertex;
    locate(s, t, &k, &c, &at_vertex);
    double es = s, et = t;
    if (at_vertex) {
        double sc = fmax(s, 0.0), tc = fmax(t, 0.0), r = sc + tc;
        double nearest = ldexp(1.0, -LOOP_EXACT_LEVELS);
        es = r > 0.0 ? sc * nearest / r : 0.5 * nearest;
        et = r > 0.0 ? tc * nearest / r : 0.5 * nearest;
    } else if (piece > 0 && piece <= 3 * LOOP_EXACT_LEVELS) {
        /* the piece asked for, its polynomial extended past its own sub-triangle */
        k = (piece - 1) / 3;
        c = (piece - 1) % 3;
    }
    double S = ldexp(es, k), T = ldexp(et, k), u, v, sigma = 1.0;
    if (c == 0)
        u = 2.0 * S - 1.0, v = 2.0 * T;
    else if (c == 1)
        u = 2.0 * S, v = 2.0 * T - 1.0;
    else
        u = 1.0 - 2.0 * S, v = 1.0 - 2.0 * T, sigma = -1.0;
    loop_patch_power_derivatives(face->power[k][c], u, v, out->x);
    double factor[4] = {1.0, sigma * ldexp(1.0, k + 1)};
    factor[2] = factor[1] * factor[1];
    factor[3] = factor[2] * factor[1];
    for (int d = 1; d < SURFACE_DERIVATIVES; d++)
        out->x[d] = vec3_scale(out->x[d], factor[DERIVATIVE_ORDER[d]]);
    out->x[SURFACE_VALUE] = at_vertex ? face->limit : vec3_add(face->limit, out->x[SURFACE_VALUE]);
    out->s = s;
    out->t = t;
    return surface_point_normal(out, name, err);
}

/* Keeps the line if the segment crosses it (strictly past the start) earlier than *beta, where
 * `valid` says the crossing point lies on the part of the line that is a break. */
static void consider(double a, double b, double c, const double from[2], const double to[2],
                     double bound, double line[3], double *beta) {
    double g0 = a * from[0] + b * from[1] - c, g1 = a * to[0] + b * to[1] - c;
    if (!((g0 < 0.0 && g1 > 0.0) || (g0 > 0.0 && g1 < 0.0)))
        return;
    double f = g0 / (g0 - g1);
    if (!(f > 1e-12) || f >= *beta)
        return;
    double s = from[0] + f * (to[0] - from[0]), t = from[1] + f * (to[1] - from[1]);
    /* s = 2^-j and t = 2^-j are breaks only in the band below s + t = 2^-(j - 1) */
    if (bound > 0.0 && (a > 0.0 ? t : s) > bound)
        return;
    double sign = g0 < 0.0 ? 1.0 : -1.0;
    line[0] = sign * a;
    line[1] = sign * b;
    line[2] = sign * c;
    *beta = f;
}

bool loop_exact_first_break(const double from[2], const double to[2], double line[3],
                            double *beta) {
    *beta = 2.0;
    double lo = fmin(from[0] + from[1], to[0] + to[1]), hi = fmax(from[0] + from[1], to[0] + to[1]);
    double smax = fmax(from[0], to[0]), tmax = fmax(from[1], to[1]);
    for (int j = 1; j <= LOOP_EXACT_LEVELS; j++) {
        double level = ldexp(1.0, -j);
        if (level < 0.25 * lo)
            break; /* finer lines lie nearer the vertex than the segment */
        if (level > 2.0 * hi && level > smax && level > tmax)
            continue;
        consider(1.0, 1.0, level, from, to, 0.0, line, beta);
        consider(1.0, 0.0, level, from, to, level, line, beta);
        consider(0.0, 1.0, level, from, to, level, line, beta);
    }
    return *beta <= 1.0;
}
