/* A closed Loop subdivision surface as a SmoothSurface (seed 002 5.1-5.2): after enough steps of
 * subdivision every face away from the extraordinary vertices is a regular patch, evaluated
 * exactly (Stam's basis, loop_patch_evaluate's patch folded once per face into the power basis of
 * (s, t): loop_patch_power), and the 1-ring of each extraordinary vertex is cut
 * out and replaced by one n-sided S-patch (002 5.2.1) whose control points are blossoms of the
 * regular patches around it (002 5.2.2, eq. 5.19), so that it meets them with the same boundary
 * curves (C0), then raised to degree 6 (7 with 3 sides) and its rows along each edge reset from
 * the patch across it (spatch_g1.c), so that it meets them with the same tangent planes along
 * the whole edge (G1). Patch edges are paired as smooth_surface_neighbour documents (g(u) = 1 - u,
 * 002 eq. 4.48 and 5.17). */
#include "surface_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LOOP_SURFACE_MAX_LEVELS = 6 };
/* S-patches: 002 5.2.2's construction is quartic; the G1 rows need degree 6 (7 with 3 sides:
 * spatch_join_g1) */
enum { REFERENCE_DEGREE = 4, G1_DEGREE = 6, G1_DEGREE_3 = 7 };

/* A directed edge of a face: from = vertex[corner], to = vertex[corner + 1]. */
typedef struct FaceEdge {
    int from, to, face, corner;
} FaceEdge;

typedef struct EdgeTable {
    FaceEdge *edges; /* 3 faces, sorted by (from, to) */
    int count;
} EdgeTable;

static int compare_face_edges(const void *pa, const void *pb) {
    const FaceEdge *a = pa, *b = pb;
    if (a->from != b->from)
        return (a->from > b->from) - (a->from < b->from);
    return (a->to > b->to) - (a->to < b->to);
}

static bool edge_table_build(const LoopMesh *mesh, EdgeTable *table) {
    table->count = 3 * loop_mesh_face_count(mesh);
    table->edges = malloc((size_t)table->count * sizeof *table->edges);
    if (!table->edges)
        return false;
    for (int f = 0; f < loop_mesh_face_count(mesh); f++) {
        int v[3];
        loop_mesh_face(mesh, f, v);
        for (int k = 0; k < 3; k++)
            table->edges[3 * f + k] = (FaceEdge){v[k], v[(k + 1) % 3], f, k};
    }
    qsort(table->edges, (size_t)table->count, sizeof *table->edges, compare_face_edges);
    return true;
}

/* The face edge running from -> to, or NULL (a boundary). */
static const FaceEdge *edge_find(const EdgeTable *table, int from, int to) {
    FaceEdge key = {from, to, 0, 0};
    return bsearch(&key, table->edges, (size_t)table->count, sizeof key, compare_face_edges);
}

static IssimStatus check_closed(const LoopMesh *mesh, const EdgeTable *table, IssimError *err) {
    for (int i = 0; i < table->count; i++)
        if (!edge_find(table, table->edges[i].to, table->edges[i].from))
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "loop mesh '%s': edge %d-%d lies on a boundary (one face "
                                   "only): a Loop surface for contact needs a closed mesh",
                                   loop_mesh_name(mesh), table->edges[i].from + 1,
                                   table->edges[i].to + 1);
    return ISSIM_OK;
}

/* The face edges leaving `vertex`: table->edges[*begin .. *end) (the table is sorted by from), by
 * binary search, so the checks below cost O(E log E) in all, not O(V E) (a mesh of 1e5 faces took
 * 10 s, one of 1e6 faces more than 600 s). */
static void edges_from(const EdgeTable *table, int vertex, int *begin, int *end) {
    int lo = 0, hi = table->count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (table->edges[mid].from < vertex)
            lo = mid + 1;
        else
            hi = mid;
    }
    *begin = lo;
    for (*end = lo; *end < table->count && table->edges[*end].from == vertex;)
        ++*end;
}

/* The neighbours of `vertex` counter-clockwise seen from outside: ring[j], ring[j + 1] and the
 * vertex make a face (vertex, ring[j], ring[j + 1]). A vertex whose faces do not form one fan
 * (two cones touching at a point) is not a 2-manifold vertex. Returns the count, or -1. */
static int vertex_ring(const LoopMesh *mesh, const EdgeTable *table, int vertex,
                       int ring[SURFACE_DOMAIN_MAX + 1]) {
    int valence = loop_mesh_valence(mesh, vertex), begin, end;
    edges_from(table, vertex, &begin, &end);
    if (begin == end)
        return -1;
    const FaceEdge *first = &table->edges[begin];
    int count = 0, current = first->to;
    do {
        if (count > SURFACE_DOMAIN_MAX)
            return count;
        ring[count++] = current;
        const FaceEdge *e = edge_find(table, vertex, current);
        int v[3];
        loop_mesh_face(mesh, e->face, v);
        current = v[(e->corner + 2) % 3];
    } while (current != first->to);
    return count == valence ? count : -1;
}

/* ===== Separation of the extraordinary vertices ===== */

static bool extraordinary(const LoopMesh *mesh, int vertex) {
    return loop_mesh_valence(mesh, vertex) != 6;
}

/* An extraordinary vertex within two edges of `vertex` (-1: none). Two edges apart, their
 * 1-rings would share a face or the S-patches' outer faces would not be regular. */
static int extraordinary_within_two(const LoopMesh *mesh, const EdgeTable *table, int vertex) {
    int begin, end;
    edges_from(table, vertex, &begin, &end);
    for (int i = begin; i < end; i++) {
        int near = table->edges[i].to, near_begin, near_end;
        if (extraordinary(mesh, near))
            return near;
        edges_from(table, near, &near_begin, &near_end);
        for (int k = near_begin; k < near_end; k++)
            if (table->edges[k].to != vertex && extraordinary(mesh, table->edges[k].to))
                return table->edges[k].to;
    }
    return -1;
}

/* Loop subdivision doubles the edge distance between old vertices and adds only valence-6 ones:
 * distance 1 needs two steps to reach 4 >= 3, distance 2 one step. */
static IssimStatus check_separation(const LoopMesh *mesh, const EdgeTable *table, int levels,
                                    IssimError *err) {
    for (int v = 0; v < loop_mesh_vertex_count(mesh); v++) {
        if (!extraordinary(mesh, v))
            continue;
        int other = extraordinary_within_two(mesh, table, v);
        if (other < 0)
            continue;
        bool adjacent = edge_find(table, v, other) != NULL;
        int minimum = adjacent ? 2 : 1;
        if (levels < minimum)
            return issim_error_set(
                err, ISSIM_ERR_INVALID,
                "loop mesh '%s': extraordinary vertices %d and %d (valences %d and %d) are %d "
                "edge%s apart; S-patch replacement needs them 3 apart: subdivide at least %d "
                "levels (asked: %d)",
                loop_mesh_name(mesh), v + 1, other + 1, loop_mesh_valence(mesh, v),
                loop_mesh_valence(mesh, other), adjacent ? 1 : 2, adjacent ? "" : "s", minimum,
                levels);
    }
    return ISSIM_OK;
}

static IssimStatus check_vertices(const LoopMesh *mesh, const EdgeTable *table, IssimError *err) {
    for (int v = 0; v < loop_mesh_vertex_count(mesh); v++) {
        int ring[SURFACE_DOMAIN_MAX + 1], valence = loop_mesh_valence(mesh, v);
        if (valence == 0)
            continue; /* an unused vertex: not on the surface */
        int count = vertex_ring(mesh, table, v, ring);
        if (valence > SURFACE_DOMAIN_MAX || valence < 3)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "loop mesh '%s': vertex %d has valence %d; S-patches have "
                                   "3 to %d sides",
                                   loop_mesh_name(mesh), v + 1, valence, SURFACE_DOMAIN_MAX);
        if (count < 0)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "loop mesh '%s': the faces at vertex %d do not form one fan "
                                   "(cones touching at the vertex): not a 2-manifold",
                                   loop_mesh_name(mesh), v + 1);
    }
    return ISSIM_OK;
}

/* ===== The surface ===== */

typedef struct LoopSurface {
    int regular_count; /* patches 0 .. regular_count - 1: regular faces; then the S-patches or
                        * the faces at extraordinary vertices */
    Vec3 (*power)[LOOP_PATCH_MONOMIALS]; /* per regular patch: loop_patch_power */
    int spatch_count;
    SPatch **spatches;
    int exact_count;
    LoopExactFace *exact;
} LoopSurface;

static void loop_surface_free(void *impl) {
    LoopSurface *ls = impl;
    if (!ls)
        return;
    for (int i = 0; i < ls->spatch_count; i++)
        spatch_destroy(ls->spatches[i]);
    free(ls->spatches);
    for (int i = 0; i < ls->exact_count; i++)
        loop_exact_face_free(&ls->exact[i]);
    free(ls->exact);
    free(ls->power);
    free(ls);
}

static IssimStatus loop_surface_evaluate_piece(const SmoothSurface *surface, int patch, int piece,
                                               double s, double t, SurfacePoint *out,
                                               IssimError *err) {
    const LoopSurface *ls = surface->impl;
    IssimError sub = {0};
    IssimError *inner = err ? &sub : NULL;
    int special = patch - ls->regular_count;
    IssimStatus status =
        special < 0 ? loop_patch_power_evaluate(ls->power[patch], s, t, surface->name, out, inner)
        : ls->exact
            ? loop_exact_face_evaluate(&ls->exact[special], piece, s, t, surface->name, out, inner)
            : spatch_evaluate(ls->spatches[special], s, t, surface->name, out, inner);
    if (status != ISSIM_OK && err)
        issim_error_set(err, status, "patch %d (%s): %s", patch,
                        special < 0 ? "regular"
                        : ls->exact ? "extraordinary"
                                    : "S-patch",
                        sub.message);
    return status;
}

static IssimStatus loop_surface_evaluate(const SmoothSurface *surface, int patch, double s,
                                         double t, SurfacePoint *out, IssimError *err) {
    return loop_surface_evaluate_piece(surface, patch, 0, s, t, out, err);
}

/* The exact faces' pieces are Stam's sub-triangles (loop_exact_piece); every other patch is one
 * polynomial. */
static int loop_surface_piece(const SmoothSurface *surface, int patch, double s, double t) {
    const LoopSurface *ls = surface->impl;
    return ls->exact && patch >= ls->regular_count ? loop_exact_piece(s, t) : 0;
}

static bool loop_surface_first_break(const SmoothSurface *surface, int patch, const double from[2],
                                     const double to[2], double line[3], double *beta) {
    const LoopSurface *ls = surface->impl;
    return ls->exact && patch >= ls->regular_count && loop_exact_first_break(from, to, line, beta);
}

/* Barycentric coordinates of corner `m` of the S-patch's domain with respect to the domain
 * triangle T of the regular patch across edge j (002 5.2.2, Fig. 5.7), in the order of that
 * face's vertices (Loop's (u, v, w)); `corner` is the face corner holding ring[j + 1], so the
 * face is (ring[j + 1], ring[j], apex) from it. 002 takes T equilateral; we take T the mirror
 * image, across edge j, of the triangle (centre, corner j, corner j + 1) that the ring face
 * (vertex, ring[j], ring[j + 1]) occupies, as the mesh's face across that edge mirrors the ring
 * face: the S-patch's normals then follow its neighbours' along its edges 5 to 20 times closer
 * (the gaps are in docs/smooth-contact.md; n = 6 is the regular lattice either way). */
static void corner_in_neighbour(const SurfaceDomain *d, int j, int corner, int m, double out[3]) {
    int n = d->count;
    const double *b = d->corner[j], *a = d->corner[(j + 1) % n];
    double ex = a[0] - b[0], ey = a[1] - b[1];
    /* outside a counter-clockwise edge is its right: (ey, -ex) */
    double height = 0.5 / tan(M_PI / n); /* the apothem, in edge lengths */
    double apex[2] = {0.5 * (a[0] + b[0]) + height * ey, 0.5 * (a[1] + b[1]) - height * ex};
    double ux = b[0] - a[0], uy = b[1] - a[1], vx = apex[0] - a[0], vy = apex[1] - a[1];
    double px = d->corner[m][0] - a[0], py = d->corner[m][1] - a[1];
    double det = ux * vy - uy * vx;
    double lb = (px * vy - py * vx) / det, lc = (ux * py - uy * px) / det;
    out[corner] = 1.0 - lb - lc;
    out[(corner + 1) % 3] = lb;
    out[(corner + 2) % 3] = lc;
}

/* 002 5.2.2: every control point (multi-index i) is the blossom (eq. 5.19) of the regular patch
 * across the edge j nearest to it (largest i_j + i_(j+1): the points on an edge come from the
 * patch across it, which keeps the boundary curves exact). Where two edges are equally near, 002
 * takes the first ("first come first serve") and notes that averaging "may also be a reasonable
 * thing to do": averaging halves the normal gap along the edges of 3- and 4-sided patches. */
static bool set_spatch_control(SPatch *patch, const Vec3 (*nets)[LOOP_PATCH_MONOMIALS],
                               const int *corners) {
    int n = patch->sides, count = spatch_control_count(n, REFERENCE_DEGREE);
    int(*indices)[SPATCH_MAX_DEGREE] = malloc((size_t)count * sizeof *indices);
    if (!indices)
        return false;
    spatch_multi_indices(n, REFERENCE_DEGREE, indices);
    for (int c = 0; c < count; c++) {
        int occurrences[SURFACE_DOMAIN_MAX] = {0};
        for (int k = 0; k < REFERENCE_DEGREE; k++)
            occurrences[indices[c][k]]++;
        int top = 0, ties = 0;
        for (int j = 0; j < n; j++)
            if (occurrences[j] + occurrences[(j + 1) % n] > top)
                top = occurrences[j] + occurrences[(j + 1) % n];
        Vec3 sum = vec3(0, 0, 0);
        for (int j = 0; j < n; j++) {
            if (occurrences[j] + occurrences[(j + 1) % n] != top)
                continue;
            double args[REFERENCE_DEGREE][3];
            for (int k = 0; k < REFERENCE_DEGREE; k++)
                corner_in_neighbour(&patch->domain, j, corners[j], indices[c][k], args[k]);
            sum = vec3_add(sum, loop_patch_blossom(nets[j], (const double(*)[3])args));
            ties++;
        }
        patch->control[c] = vec3_scale(sum, 1.0 / ties);
    }
    free(indices);
    return true;
}

/* What the construction keeps about the subdivided mesh: each extraordinary vertex's ring and
 * which S-patch (or none: -1) each face's area belongs to. */
typedef struct Rings {
    int count;
    int (*ring)[SURFACE_DOMAIN_MAX + 1];
    int *sides;
    int *owner;         /* per face: the S-patch replacing it, or -1 (a regular patch) */
    int *patch_of_face; /* per face with a patch of its own: its index, else -1 */
    int *rotation;      /* per face: the face corner at its patch's (0, 0) (the extraordinary
                         * vertex's in exact mode) */
} Rings;

static void rings_free(Rings *r) {
    free(r->ring);
    free(r->sides);
    free(r->owner);
    free(r->patch_of_face);
    free(r->rotation);
}

static bool rings_build(const LoopMesh *mesh, const EdgeTable *table, bool exact, Rings *r,
                        int *regular_count) {
    int faces = loop_mesh_face_count(mesh), vertices = loop_mesh_vertex_count(mesh);
    memset(r, 0, sizeof *r);
    r->ring = malloc((size_t)(vertices + 1) * sizeof *r->ring);
    r->sides = malloc((size_t)(vertices + 1) * sizeof *r->sides);
    r->owner = malloc((size_t)faces * sizeof *r->owner);
    r->patch_of_face = malloc((size_t)faces * sizeof *r->patch_of_face);
    r->rotation = calloc((size_t)faces, sizeof *r->rotation);
    if (!r->ring || !r->sides || !r->owner || !r->patch_of_face || !r->rotation)
        return false;
    for (int f = 0; f < faces; f++)
        r->owner[f] = -1;
    for (int v = 0; v < vertices; v++) {
        if (!extraordinary(mesh, v) || loop_mesh_valence(mesh, v) == 0)
            continue;
        int e = r->count++;
        r->sides[e] = vertex_ring(mesh, table, v, r->ring[e]);
        r->ring[e][r->sides[e]] = v; /* the centre after the ring */
        for (int j = 0; j < r->sides[e]; j++)
            r->owner[edge_find(table, v, r->ring[e][j])->face] = e;
    }
    *regular_count = 0;
    for (int f = 0; f < faces; f++)
        r->patch_of_face[f] = r->owner[f] < 0 ? (*regular_count)++ : -1;
    /* exact mode: then each extraordinary vertex's faces, (v, ring[j], ring[j + 1]) in j order */
    for (int e = 0, next = *regular_count; exact && e < r->count; e++)
        for (int j = 0; j < r->sides[e]; j++) {
            const FaceEdge *edge = edge_find(table, r->ring[e][r->sides[e]], r->ring[e][j]);
            r->patch_of_face[edge->face] = next++;
            r->rotation[edge->face] = edge->corner;
        }
    return true;
}

/* The patch and edge across face edge from -> to (seen from the face holding it). */
static void neighbour_across(const EdgeTable *table, const Rings *r, int regular_count, int from,
                             int to, int out[2]) {
    const FaceEdge *other = edge_find(table, to, from);
    int e = r->owner[other->face];
    if (r->patch_of_face[other->face] >= 0) { /* edges counted from the patch's (0, 0) */
        out[0] = r->patch_of_face[other->face];
        out[1] = (other->corner - r->rotation[other->face] + 3) % 3;
        return;
    }
    int n = r->sides[e];
    for (int j = 0; j < n; j++)
        if (r->ring[e][j] == to && r->ring[e][(j + 1) % n] == from) {
            out[0] = regular_count + e;
            out[1] = j;
        }
}

static void regular_control(const LoopMesh *mesh, int face, Vec3 control[LOOP_PATCH_VERTICES]) {
    int index[LOOP_PATCH_VERTICES];
    loop_mesh_patch(mesh, face, index, NULL); /* corners are valence 6: rings_build's split */
    for (int i = 0; i < LOOP_PATCH_VERTICES; i++)
        control[i] = loop_mesh_vertex(mesh, index[i]);
}

/* Edge j's cubics for spatch_join_g1, from the regular patch across it (its net, `corner` as in
 * corner_in_neighbour): the boundary's derivative / 4, b(x^3, x_(j+1) - x_j), and the derivative
 * towards the face's third vertex / 4, b(x^3, apex - x_j), x = (1 - a) x_j + a x_(j+1) (002 eq.
 * 5.18: the blossom is linear in each argument). */
static void edge_cubics(const SurfaceDomain *d, int j, int corner,
                        const Vec3 net[LOOP_PATCH_MONOMIALS], Vec3 tangent[4], Vec3 cross[4]) {
    double from[3], to[3], along[3], across[3];
    corner_in_neighbour(d, j, corner, j, from);
    corner_in_neighbour(d, j, corner, (j + 1) % d->count, to);
    for (int i = 0; i < 3; i++) {
        along[i] = to[i] - from[i];
        across[i] = (i == (corner + 2) % 3) - from[i];
    }
    for (int l = 0; l < 4; l++) {
        double args[4][3];
        for (int k = 0; k < 3; k++)
            memcpy(args[k], k < 3 - l ? from : to, sizeof from);
        memcpy(args[3], along, sizeof along);
        tangent[l] = loop_patch_blossom(net, (const double(*)[3])args);
        memcpy(args[3], across, sizeof across);
        cross[l] = loop_patch_blossom(net, (const double(*)[3])args);
    }
}

/* The S-patch of degree 4 of 002 5.2.2 (set_spatch_control), elevated to G1_DEGREE (3 sides:
 * G1_DEGREE_3) and made tangent-plane continuous along its edges (spatch_join_g1). NULL: out of
 * memory. */
static SPatch *g1_spatch(int n, const Vec3 (*nets)[LOOP_PATCH_MONOMIALS], const int *corners) {
    SPatch *sp = spatch_create(n, REFERENCE_DEGREE);
    if (!sp || !set_spatch_control(sp, nets, corners)) {
        spatch_destroy(sp);
        return NULL;
    }
    while (sp && sp->degree < (n == 3 ? G1_DEGREE_3 : G1_DEGREE)) {
        SPatch *up = spatch_elevate(sp);
        spatch_destroy(sp);
        sp = up;
    }
    if (!sp)
        return NULL;
    Vec3 tangent[SURFACE_DOMAIN_MAX][4], cross[SURFACE_DOMAIN_MAX][4];
    for (int j = 0; j < n; j++)
        edge_cubics(&sp->domain, j, corners[j], nets[j], tangent[j], cross[j]);
    spatch_join_g1(sp, (const Vec3(*)[4])tangent, (const Vec3(*)[4])cross);
    return sp;
}

static bool build_spatch(const LoopMesh *mesh, const EdgeTable *table, const Rings *r, int e,
                         SmoothSurface *surface, LoopSurface *ls) {
    int n = r->sides[e], patch = ls->regular_count + e;
    Vec3 nets[SURFACE_DOMAIN_MAX][LOOP_PATCH_MONOMIALS];
    int corners[SURFACE_DOMAIN_MAX];
    for (int j = 0; j < n; j++) {
        const FaceEdge *outer = edge_find(table, r->ring[e][(j + 1) % n], r->ring[e][j]);
        Vec3 control[LOOP_PATCH_VERTICES];
        regular_control(mesh, outer->face, control);
        loop_patch_bezier(control, nets[j]);
        corners[j] = outer->corner;
        surface->neighbours[patch][j][0] = r->patch_of_face[outer->face];
        surface->neighbours[patch][j][1] = outer->corner;
    }
    SPatch *sp = ls->spatches[e] = g1_spatch(n, (const Vec3(*)[LOOP_PATCH_MONOMIALS])nets, corners);
    if (sp)
        surface->domains[patch] = sp->domain;
    return sp != NULL;
}

/* Exact mode: each face at an extraordinary vertex with its net subdivided (loop_exact.c, one
 * rule per valence). */
static bool build_exact(const LoopMesh *mesh, const Rings *r, LoopSurface *ls) {
    LoopExactRule *rules[SURFACE_DOMAIN_MAX + 1] = {0};
    bool ok = true;
    for (int f = 0; ok && f < loop_mesh_face_count(mesh); f++) {
        int special = r->patch_of_face[f] - ls->regular_count, v[3];
        if (special < 0)
            continue;
        loop_mesh_face(mesh, f, v);
        int turn = r->rotation[f], n = loop_mesh_valence(mesh, v[turn]);
        int index[LOOP_EXACT_NET(SURFACE_DOMAIN_MAX)];
        Vec3 net[LOOP_EXACT_NET(SURFACE_DOMAIN_MAX)];
        if (!rules[n])
            rules[n] = loop_exact_rule_create(n);
        ok = rules[n] && loop_walk_extraordinary(loop_mesh_third, mesh, v[turn], v[(turn + 1) % 3],
                                                 v[(turn + 2) % 3], n, index);
        for (int i = 0; ok && i < LOOP_EXACT_NET(n); i++)
            net[i] = loop_mesh_vertex(mesh, index[i]);
        ok = ok && loop_exact_face_init(&ls->exact[special], rules[n], net);
    }
    for (int n = 0; n <= SURFACE_DOMAIN_MAX; n++)
        loop_exact_rule_destroy(rules[n]);
    return ok;
}

static SmoothSurface *build_surface(const LoopMesh *mesh, const EdgeTable *table, const char *name,
                                    bool exact, IssimError *err) {
    Rings r;
    int regular = 0, special = 0;
    SmoothSurface *surface = NULL;
    LoopSurface *ls = NULL;
    bool rings_ok = rings_build(mesh, table, exact, &r, &regular), ok = rings_ok;
    for (int e = 0; ok && e < r.count; e++)
        special += exact ? r.sides[e] : 1;
    if (ok)
        surface = smooth_surface_alloc(name, regular + special, err);
    if (surface) {
        ls = calloc(1, sizeof *ls);
        surface->impl = ls;
        surface->destroy_impl = loop_surface_free;
        surface->evaluate = loop_surface_evaluate;
        surface->first_break = loop_surface_first_break;
        surface->piece = loop_surface_piece;
        surface->evaluate_piece = loop_surface_evaluate_piece;
    }
    if (ls) {
        ls->regular_count = regular;
        ls->power = malloc((size_t)(regular ? regular : 1) * sizeof *ls->power);
        if (exact) {
            ls->exact = calloc((size_t)(special ? special : 1), sizeof *ls->exact);
            ls->exact_count = special;
        } else {
            ls->spatches = calloc((size_t)(r.count ? r.count : 1), sizeof *ls->spatches);
            ls->spatch_count = r.count;
        }
    }
    ok = ls && ls->power && (ls->spatches || ls->exact);
    static const double TRIANGLE[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    for (int f = 0; ok && f < loop_mesh_face_count(mesh); f++) {
        int patch = r.patch_of_face[f], v[3];
        if (patch < 0)
            continue;
        loop_mesh_face(mesh, f, v);
        if (patch < regular) {
            Vec3 control[LOOP_PATCH_VERTICES];
            regular_control(mesh, f, control);
            loop_patch_power(control, ls->power[patch]);
        }
        surface->domains[patch].count = 3;
        memcpy(surface->domains[patch].corner, TRIANGLE, sizeof TRIANGLE);
        for (int k = 0, turn = r.rotation[f]; k < 3; k++)
            neighbour_across(table, &r, regular, v[(turn + k) % 3], v[(turn + k + 1) % 3],
                             surface->neighbours[patch][k]);
    }
    if (ok && exact)
        ok = build_exact(mesh, &r, ls);
    for (int e = 0; ok && !exact && e < r.count; e++)
        ok = build_spatch(mesh, table, &r, e, surface, ls);
    rings_free(&r);
    if (!ok) {
        if (surface || !rings_ok) /* else smooth_surface_alloc said why */
            issim_error_set(err, ISSIM_ERR_NOMEM, "loop surface '%s': out of memory", name);
        smooth_surface_destroy(surface);
        return NULL;
    }
    return surface;
}

/* Each level multiplies the faces by 4; the surface keeps a quartic patch (15 control points,
 * 360 bytes) per face and the subdivision meshes about as much again. Estimated before any of it
 * is built, so a mesh that would exhaust the memory is refused with the figure instead. */
enum { LOOP_SURFACE_MAX_FACES = 2000000 };

static IssimStatus check_size(const LoopMesh *mesh, int levels, IssimError *err) {
    double faces = loop_mesh_face_count(mesh) * pow(4.0, levels);
    if (faces <= LOOP_SURFACE_MAX_FACES)
        return ISSIM_OK;
    return issim_error_set(err, ISSIM_ERR_RANGE,
                           "loop mesh '%s': %d faces subdivided %d levels make %.3g faces (about "
                           "%.1f GB); at most %d: use fewer levels",
                           loop_mesh_name(mesh), loop_mesh_face_count(mesh), levels, faces,
                           faces * 900.0 / 1e9, LOOP_SURFACE_MAX_FACES);
}

/* A closed mesh's faces must turn their counter-clockwise side outwards (the normals of contact
 * point out of the body): the volume they enclose, sum of v0 . (v1 x v2) / 6, is then positive. */
static IssimStatus check_outward(const LoopMesh *mesh, IssimError *err) {
    double volume = 0.0;
    for (int f = 0; f < loop_mesh_face_count(mesh); f++) {
        int v[3];
        loop_mesh_face(mesh, f, v);
        Vec3 a = loop_mesh_vertex(mesh, v[0]), b = loop_mesh_vertex(mesh, v[1]);
        volume += vec3_dot(a, vec3_cross(b, loop_mesh_vertex(mesh, v[2]))) / 6.0;
    }
    if (volume > 0.0)
        return ISSIM_OK;
    return issim_error_set(err, ISSIM_ERR_INVALID,
                           "loop mesh '%s': its faces turn inwards (they enclose a volume of "
                           "%.3g): list each face's corners counter-clockwise seen from outside "
                           "(swap two corners of every face)",
                           loop_mesh_name(mesh), volume);
}

/* Checks the control mesh, then subdivides `levels` times (*out NULL for 0 levels). */
static IssimStatus subdivided(const LoopMesh *mesh, int levels, LoopMesh **out, IssimError *err) {
    EdgeTable table;
    *out = NULL;
    if (!edge_table_build(mesh, &table))
        return issim_error_set(err, ISSIM_ERR_NOMEM, "loop mesh '%s': out of memory",
                               loop_mesh_name(mesh));
    IssimStatus status = check_size(mesh, levels, err);
    if (status == ISSIM_OK)
        status = check_closed(mesh, &table, err);
    if (status == ISSIM_OK)
        status = check_vertices(mesh, &table, err);
    if (status == ISSIM_OK)
        status = check_outward(mesh, err);
    if (status == ISSIM_OK)
        status = check_separation(mesh, &table, levels, err);
    free(table.edges);
    for (int level = 0; status == ISSIM_OK && level < levels; level++) {
        LoopMesh *next = loop_mesh_subdivide(*out ? *out : mesh, err);
        loop_mesh_destroy(*out);
        *out = next;
        if (!next)
            status = err ? err->status : ISSIM_ERR_NOMEM;
    }
    return status;
}

SmoothSurface *smooth_surface_from_loop(const LoopMesh *mesh, int levels,
                                        SurfaceExtraordinary extraordinary, IssimError *err) {
    if (levels < 0 || levels > LOOP_SURFACE_MAX_LEVELS) {
        issim_error_set(err, ISSIM_ERR_RANGE,
                        "loop mesh '%s': %d subdivision levels (0 .. %d: each multiplies the "
                        "faces by 4)",
                        loop_mesh_name(mesh), levels, LOOP_SURFACE_MAX_LEVELS);
        return NULL;
    }
    LoopMesh *fine = NULL;
    if (subdivided(mesh, levels, &fine, err) != ISSIM_OK)
        return NULL;
    const LoopMesh *used = fine ? fine : mesh;
    EdgeTable table;
    SmoothSurface *surface = NULL;
    char name[128];
    snprintf(name, sizeof name, "%.90s (Loop, %d levels)", loop_mesh_name(mesh), levels);
    if (!edge_table_build(used, &table))
        issim_error_set(err, ISSIM_ERR_NOMEM, "loop surface '%s': out of memory", name);
    else if (check_separation(used, &table, 0, err) == ISSIM_OK)
        surface =
            build_surface(used, &table, name, extraordinary != SURFACE_EXTRAORDINARY_SPATCH, err);
    free(table.edges);
    loop_mesh_destroy(fine);
    return surface;
}
