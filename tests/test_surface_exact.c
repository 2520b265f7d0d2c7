/* Tests for the exact evaluation of Loop surfaces at extraordinary vertices (Stam 1998,
 * smooth_surface_from_loop's SURFACE_EXTRAORDINARY_EXACT, src/surface/loop_exact.c): on the
 * bipyramids of 3 to 8 sides (apexes of that valence, equator of valence 4) and 002 App. B.2's
 * bowl, every face at an extraordinary vertex (EV)
 *  - agrees with the regular patch of the mesh subdivided further (loop_mesh_evaluate, an
 *    independent route) in position and normal;
 *  - has every position and normal derivative equal to central differences at random points from
 *    the face's size down to 2^-30 of it (the step scaled with the level);
 *  - meets its neighbours across every edge with C0, C1 and C2 (the derivatives related by the
 *    lattice's affine map) and equal normals, down to 2^-30 from the EV, and is C2 across its own
 *    level boundaries;
 *  - at the EV itself gives the limit point (loop_mesh_limit_point) with a finite normal, and
 *    |x_s x x_t| shrinks (or grows) per level by (2 lambda)^2, lambda = 3/8 + cos(2 pi / n) / 4
 *    Loop's subdominant eigenvalue. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/surface/surface_internal.h" /* loop_mesh_face, loop_mesh_name */
#include "issim/surface.h"
#include "surface_fd.h"

static TestRng rng;

enum { FINER_LEVELS = 4, DEEPEST_LEVEL = 30, MAX_EV_PATCHES = 160 };

typedef struct Case {
    char name[64];
    SmoothSurface *surface;
    LoopMesh *fine[FINER_LEVELS + 1]; /* the surface's mesh (2 levels), then subdivided further */
    int ev_count;
    int patch[MAX_EV_PATCHES], face[MAX_EV_PATCHES], corner[3][MAX_EV_PATCHES]; /* ev, r0, r1 */
} Case;

/* The vertex of `mesh` whose limit point is `x` (-1: none). */
static int vertex_at(const LoopMesh *mesh, Vec3 x) {
    for (int v = 0; v < loop_mesh_vertex_count(mesh); v++)
        if (vec3_norm(vec3_sub(loop_mesh_limit_point(mesh, v), x)) < 1e-12)
            return v;
    return -1;
}

static int face_with(const LoopMesh *mesh, const int v[3]) {
    for (int f = 0; f < loop_mesh_face_count(mesh); f++) {
        int w[3];
        loop_mesh_face(mesh, f, w);
        for (int k = 0; k < 3; k++)
            if (w[k] == v[0] && w[(k + 1) % 3] == v[1] && w[(k + 2) % 3] == v[2])
                return f;
    }
    return -1;
}

/* The exact surface of `mesh` after 2 levels, its meshes, and its EV patches found by their
 * corners' limit points (the patch order is the surface's business). Destroys `mesh`. */
static void case_make(Case *c, LoopMesh *mesh, int finer) {
    IssimError err = {0};
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", loop_mesh_name(mesh));
    c->surface = smooth_surface_from_loop(mesh, 2, SURFACE_EXTRAORDINARY_EXACT, &err);
    if (!c->surface)
        fail_msg("%s", err.message);
    LoopMesh *once = loop_mesh_subdivide(mesh, &err);
    c->fine[0] = once ? loop_mesh_subdivide(once, &err) : NULL;
    loop_mesh_destroy(once);
    loop_mesh_destroy(mesh);
    for (int k = 1; k <= finer && c->fine[k - 1]; k++)
        c->fine[k] = loop_mesh_subdivide(c->fine[k - 1], &err);
    assert_non_null(c->fine[finer]);
    for (int p = 0; p < smooth_surface_patch_count(c->surface); p++) {
        int v[3];
        const double corners[3][2] = {{0, 0}, {1, 0}, {0, 1}};
        for (int k = 0; k < 3; k++)
            v[k] = vertex_at(
                c->fine[0],
                surface_point_at(c->surface, p, corners[k][0], corners[k][1]).x[SURFACE_VALUE]);
        if (v[0] < 0 || loop_mesh_valence(c->fine[0], v[0]) == 6)
            continue;
        assert_true(c->ev_count < MAX_EV_PATCHES);
        c->patch[c->ev_count] = p;
        c->face[c->ev_count] = face_with(c->fine[0], v);
        assert_true(c->face[c->ev_count] >= 0);
        for (int k = 0; k < 3; k++)
            c->corner[k][c->ev_count] = v[k];
        c->ev_count++;
    }
}

static void case_free(Case *c) {
    smooth_surface_destroy(c->surface);
    for (int k = 0; k <= FINER_LEVELS; k++)
        loop_mesh_destroy(c->fine[k]);
}

static void case_bipyramid(Case *c, int sides, int finer) {
    IssimError err = {0};
    LoopMesh *mesh = loop_mesh_bipyramid(sides, &err);
    if (!mesh)
        fail_msg("%s", err.message);
    case_make(c, mesh, finer);
}

static void case_bowl(Case *c, int finer) {
    IssimError err = {0};
    LoopMesh *mesh = loop_mesh_load(test_source_path("assets/loop_bowl.obj"), &err);
    if (!mesh)
        fail_msg("%s", err.message);
    case_make(c, mesh, finer);
}

/* Cases 3 .. 8: the bipyramids of that many sides; 9: the bowl. */
static void case_numbered(Case *c, int number) {
    if (number < 9)
        case_bipyramid(c, number, 0);
    else
        case_bowl(c, 0);
}

/* A random point of the domain triangle with s + t in 2^-level [1/2, 1]. */
static void random_point_at_level(int level, double *s, double *t) {
    double r = ldexp(test_rng_range(&rng, 0.5, 1.0), -level), a = test_rng_range(&rng, 0, 1);
    *s = r * a;
    *t = r * (1.0 - a);
}

/* ===== Against the mesh subdivided further ===== */

/* The point of face `face` of c->fine[0] at barycentric w (on its vertices' order) evaluated on
 * the regular face of a finer mesh holding it (loop_mesh_subdivide's children). */
static SurfacePoint finer_evaluate(const Case *c, int face, double w[3]) {
    for (int d = 0; d <= FINER_LEVELS; d++) {
        int v[3];
        loop_mesh_face(c->fine[d], face, v);
        if (loop_mesh_valence(c->fine[d], v[0]) == 6 && loop_mesh_valence(c->fine[d], v[1]) == 6 &&
            loop_mesh_valence(c->fine[d], v[2]) == 6) {
            SurfacePoint p;
            IssimError err = {0};
            if (loop_mesh_evaluate(c->fine[d], face, w[1], w[2], &p, &err) != ISSIM_OK)
                fail_msg("%s", err.message);
            return p;
        }
        double a = w[0], b = w[1], e = w[2];
        int child = a >= 0.5 ? 0 : b >= 0.5 ? 1 : e >= 0.5 ? 2 : 3;
        const double next[4][3] = {{a - b - e, 2 * b, 2 * e},
                                   {2 * a, b - a - e, 2 * e},
                                   {2 * a, 2 * b, e - a - b},
                                   {1 - 2 * e, 1 - 2 * a, 1 - 2 * b}};
        memcpy(w, next[child], sizeof next[child]);
        face = 4 * face + child;
    }
    fail_msg("point not in a regular face after %d levels", FINER_LEVELS);
    return (SurfacePoint){0};
}

static void test_exact_agrees_with_finer_subdivision(void **state) {
    (void)state;
    for (int sides = 3; sides <= 8; sides += 1) {
        Case c;
        case_bipyramid(&c, sides, FINER_LEVELS);
        double position = 0.0, normal = 0.0;
        for (int i = 0; i < c.ev_count; i++)
            for (int level = 0; level < FINER_LEVELS; level++) {
                double s, t, w[3];
                random_point_at_level(level, &s, &t);
                int v[3];
                loop_mesh_face(c.fine[0], c.face[i], v);
                for (int k = 0; k < 3; k++) /* the face's vertex k is the patch's corner j */
                    for (int j = 0; j < 3; j++)
                        if (v[k] == c.corner[j][i])
                            w[k] = j == 0 ? 1.0 - s - t : j == 1 ? s : t;
                SurfacePoint exact = surface_point_at(c.surface, c.patch[i], s, t);
                SurfacePoint finer = finer_evaluate(&c, c.face[i], w);
                position = fmax(
                    position, vec3_norm(vec3_sub(exact.x[SURFACE_VALUE], finer.x[SURFACE_VALUE])));
                normal = fmax(normal, vec3_norm(vec3_sub(exact.normal[SURFACE_VALUE],
                                                         finer.normal[SURFACE_VALUE])));
            }
        print_message("%s: %d EV faces against the mesh subdivided up to %d more: position %.1e, "
                      "normal %.1e\n",
                      c.name, c.ev_count, FINER_LEVELS, position, normal);
        assert_true(c.ev_count > 0);
        assert_true(position < 1e-13);
        assert_true(normal < 1e-12);
        case_free(&c);
    }
}

/* ===== Derivatives against central differences ===== */

static const int ORDER[SURFACE_DERIVATIVES] = {0, 1, 1, 2, 2, 2, 3, 3, 3, 3};

/* Largest norm among the derivatives of order `order` (the scale to compare one against). */
static double order_scale(const Vec3 *d, int order, int count) {
    double m = 0.0;
    for (int k = 0; k < count; k++)
        if (ORDER[k] == order)
            m = fmax(m, vec3_norm(d[k]));
    return m;
}

/* Worst relative error of the cases at (s, t), step h; the rounding of the differenced values
 * (1e-16 of them over h) is allowed for by the scale's floor. */
static double fd_error(const SmoothSurface *surface, int patch, double s, double t, double h,
                       const SurfaceFdCase *cases, int count, bool normal) {
    SurfacePoint at = surface_point_at(surface, patch, s, t);
    const Vec3 *values = normal ? at.normal : at.x;
    double worst = 0.0;
    for (int c = 0; c < count; c++) {
        double ds = cases[c].along_t ? 0.0 : h, dt = cases[c].along_t ? h : 0.0;
        SurfacePoint plus = surface_point_at(surface, patch, s + ds, t + dt);
        SurfacePoint minus = surface_point_at(surface, patch, s - ds, t - dt);
        const Vec3 *hi = normal ? plus.normal : plus.x, *lo = normal ? minus.normal : minus.x;
        Vec3 fd = vec3_scale(vec3_sub(hi[cases[c].of], lo[cases[c].of]), 0.5 / h);
        int order = ORDER[cases[c].derivative];
        double scale = fmax(
            order_scale(values, order, normal ? SURFACE_NORMAL_DERIVATIVES : SURFACE_DERIVATIVES),
            1e-9 * vec3_norm(values[cases[c].of]) / h);
        worst = fmax(worst, vec3_norm(vec3_sub(values[cases[c].derivative], fd)) / scale);
    }
    return worst;
}

/* Deepest level at which the normal's second derivatives are checked: beyond it the normal
 * components of the third position derivatives sink below the rounding of their tangential
 * ones (the parameterisation stretches like lambda^k, the curvature terms shrink faster), so
 * n_ss loses about a digit per level (measured: worst[2]). */
#define NORMAL_SECOND_DEEPEST 9

static void fd_check_case(const Case *c, double worst[3]) {
    const SurfaceFdCase *POSITION = SURFACE_FD_POSITION;
    for (int i = 0; i < c->ev_count; i++)
        for (int level = 0; level <= DEEPEST_LEVEL; level += 3) {
            double s, t;
            random_point_at_level(level, &s, &t);
            double h = ldexp(1e-5, -level);
            const SmoothSurface *surface = c->surface;
            int patch = c->patch[i];
            worst[0] = fmax(worst[0], fd_error(surface, patch, s, t, h, POSITION, 12, false));
            worst[1] = fmax(worst[1], fd_error(surface, patch, s, t, h, POSITION, 2, true));
            double second = fd_error(surface, patch, s, t, h, POSITION + 2, 4, true);
            if (level <= NORMAL_SECOND_DEEPEST)
                worst[1] = fmax(worst[1], second);
            else
                worst[2] = fmax(worst[2], second);
        }
}

static void test_exact_derivatives_match_central_differences(void **state) {
    (void)state;
    double all[3] = {0, 0, 0};
    for (int sides = 3; sides <= 9; sides++) {
        Case c;
        case_numbered(&c, sides);
        double worst[3] = {0, 0, 0};
        fd_check_case(&c, worst);
        print_message("%s: %d EV faces, levels 0 .. %d: position derivatives %.1e, normal "
                      "derivatives %.1e (n_ss to level %d; beyond: %.1e) (relative)\n",
                      c.name, c.ev_count, DEEPEST_LEVEL, worst[0], worst[1], NORMAL_SECOND_DEEPEST,
                      worst[2]);
        for (int k = 0; k < 3; k++)
            all[k] = fmax(all[k], worst[k]);
        case_free(&c);
    }
    assert_true(all[0] < 1e-6);
    assert_true(all[1] < 1e-6);
}

/* ===== Continuity ===== */

/* The affine map from the neighbour's domain to the patch's: corners e' -> e + 1, e' + 1 -> e,
 * e' + 2 -> the lattice point across edge e (corner e + corner e + 1 - corner e + 2). */
static void neighbour_map(const SurfaceDomain *mine, int e, const SurfaceDomain *other, int oe,
                          double jacobian[2][2], double offset[2]) {
    const double *p = mine->corner[e], *q = mine->corner[(e + 1) % 3],
                 *r = mine->corner[(e + 2) % 3];
    double to[3][2] = {{q[0], q[1]}, {p[0], p[1]}, {p[0] + q[0] - r[0], p[1] + q[1] - r[1]}};
    const double *o0 = other->corner[oe], *o1 = other->corner[(oe + 1) % 3],
                 *o2 = other->corner[(oe + 2) % 3];
    /* other domain: o = o0 + a (o1 - o0) + b (o2 - o0) -> to0 + a (to1 - to0) + b (to2 - to0) */
    double m[2][2] = {{o1[0] - o0[0], o2[0] - o0[0]}, {o1[1] - o0[1], o2[1] - o0[1]}};
    double det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    double inv[2][2] = {{m[1][1] / det, -m[0][1] / det}, {-m[1][0] / det, m[0][0] / det}};
    double n[2][2] = {{to[1][0] - to[0][0], to[2][0] - to[0][0]},
                      {to[1][1] - to[0][1], to[2][1] - to[0][1]}};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            jacobian[i][j] = n[i][0] * inv[0][j] + n[i][1] * inv[1][j];
    for (int i = 0; i < 2; i++)
        offset[i] = to[0][i] - jacobian[i][0] * o0[0] - jacobian[i][1] * o0[1];
}

/* The derivatives of x(J o + c) with respect to o up to order 2 from x's (chain rule). */
static void chain(const Vec3 *x, double J[2][2], Vec3 out[6]) {
    out[0] = x[SURFACE_VALUE];
    for (int j = 0; j < 2; j++)
        out[1 + j] = vec3_add(vec3_scale(x[SURFACE_S], J[0][j]), vec3_scale(x[SURFACE_T], J[1][j]));
    const int pairs[3][2] = {{0, 0}, {0, 1}, {1, 1}};
    for (int k = 0; k < 3; k++) {
        int a = pairs[k][0], b = pairs[k][1];
        Vec3 v = vec3_scale(x[SURFACE_SS], J[0][a] * J[0][b]);
        v = vec3_add(v, vec3_scale(x[SURFACE_ST], J[0][a] * J[1][b] + J[1][a] * J[0][b]));
        out[3 + k] = vec3_add(v, vec3_scale(x[SURFACE_TT], J[1][a] * J[1][b]));
    }
}

/* Worst differences of C0 .. C2 (relative to each order's scale) and of the normals at `a`
 * along edge e of `patch`. */
static void edge_check(const SmoothSurface *surface, int patch, int e, double a, double worst[2]) {
    int other, oe;
    assert_true(smooth_surface_neighbour(surface, patch, e, &other, &oe));
    const SurfaceDomain *d = smooth_surface_domain(surface, patch);
    const SurfaceDomain *od = smooth_surface_domain(surface, other);
    const double *p = d->corner[e], *q = d->corner[(e + 1) % 3];
    const double *op = od->corner[oe], *oq = od->corner[(oe + 1) % 3];
    SurfacePoint mine =
        surface_point_at(surface, patch, p[0] + a * (q[0] - p[0]), p[1] + a * (q[1] - p[1]));
    SurfacePoint theirs = surface_point_at(surface, other, op[0] + (1 - a) * (oq[0] - op[0]),
                                           op[1] + (1 - a) * (oq[1] - op[1]));
    double J[2][2], c[2];
    neighbour_map(d, e, od, oe, J, c);
    Vec3 mapped[6];
    chain(mine.x, J, mapped);
    for (int k = 0; k < 6; k++) {
        double scale = fmax(order_scale(theirs.x, ORDER[k], 6), 1e-300);
        worst[0] = fmax(worst[0], vec3_norm(vec3_sub(mapped[k], theirs.x[k])) / scale);
    }
    worst[1] = fmax(worst[1], vec3_norm(vec3_sub(mine.normal[0], theirs.normal[0])));
}

/* C2 across the level boundary s + t = 2^-level: the points just inside and outside it. */
static void level_check(const SmoothSurface *surface, int patch, int level, double a,
                        double worst[2]) {
    double r = ldexp(1.0, -level), delta = 1e-13;
    SurfacePoint in =
        surface_point_at(surface, patch, a * r * (1 - delta), (1 - a) * r * (1 - delta));
    SurfacePoint out =
        surface_point_at(surface, patch, a * r * (1 + delta), (1 - a) * r * (1 + delta));
    for (int k = 0; k < 6; k++) {
        double scale = order_scale(in.x, ORDER[k], 6);
        worst[0] = fmax(worst[0], vec3_norm(vec3_sub(in.x[k], out.x[k])) / scale);
    }
    worst[1] = fmax(worst[1], vec3_norm(vec3_sub(in.normal[0], out.normal[0])));
}

static void test_exact_faces_meet_with_c2(void **state) {
    (void)state;
    double edges[2] = {0, 0}, levels[2] = {0, 0};
    int checked = 0;
    for (int sides = 3; sides <= 9; sides++) {
        Case c;
        case_numbered(&c, sides);
        for (int i = 0; i < c.ev_count; i++) {
            for (int e = 0; e < 3; e++)
                for (int level = 0; level <= DEEPEST_LEVEL; level += 2) {
                    /* edges 0 and 2 run from and to the EV: fractions toward it, of 4
                     * significant bits so that 1 - a and the neighbour's point are exact */
                    double a = ldexp(floor(test_rng_range(&rng, 8, 16)) / 16, -level);
                    edge_check(c.surface, c.patch[i], e,
                               e == 0   ? a
                               : e == 2 ? 1 - a
                                        : 1 - a,
                               edges);
                    checked++;
                }
            for (int level = 1; level <= DEEPEST_LEVEL; level++)
                level_check(c.surface, c.patch[i], level, test_rng_range(&rng, 0.05, 0.95), levels);
        }
        case_free(&c);
    }
    print_message("%d edge points (EV faces to their neighbours, down to 2^-%d from the EV): "
                  "C0..C2 %.1e relative, normals %.1e; level boundaries 1 .. %d: C0..C2 %.1e "
                  "relative, normals %.1e\n",
                  checked, DEEPEST_LEVEL, edges[0], edges[1], DEEPEST_LEVEL, levels[0], levels[1]);
    assert_true(edges[0] < 1e-9);
    assert_true(edges[1] < 1e-12);
    assert_true(levels[0] < 1e-9);
    assert_true(levels[1] < 1e-12);
}

/* ===== At the extraordinary vertex ===== */

static void test_exact_at_the_vertex(void **state) {
    (void)state;
    for (int sides = 3; sides <= 8; sides++) {
        Case c;
        case_bipyramid(&c, sides, 0);
        double worst = 0.0, ratio_error = 0.0, jacobian_deep = 0.0;
        for (int i = 0; i < c.ev_count; i++) {
            SurfacePoint at = surface_point_at(c.surface, c.patch[i], 0.0, 0.0);
            Vec3 limit = loop_mesh_limit_point(c.fine[0], c.corner[0][i]);
            worst = fmax(worst, vec3_norm(vec3_sub(at.x[SURFACE_VALUE], limit)));
            assert_true(fabs(vec3_norm(at.normal[SURFACE_VALUE]) - 1.0) < 1e-12);
            /* the Jacobian along the diagonal, level by level */
            int n = loop_mesh_valence(c.fine[0], c.corner[0][i]);
            double lambda = 0.375 + 0.25 * cos(2.0 * M_PI / n), previous = 0.0;
            for (int level = 0; level <= 46; level++) {
                double r = ldexp(0.75, -level);
                SurfacePoint p = surface_point_at(c.surface, c.patch[i], 0.5 * r, 0.5 * r);
                double j = vec3_norm(vec3_cross(p.x[SURFACE_S], p.x[SURFACE_T]));
                assert_true(isfinite(j) && j > 0.0);
                if (level >= 20)
                    ratio_error =
                        fmax(ratio_error, fabs(j / previous / (4 * lambda * lambda) - 1.0));
                previous = j;
                jacobian_deep = j;
            }
        }
        print_message("%s: limit points %.1e; |x_s x x_t| per level / (2 lambda)^2 - 1 beyond "
                      "level 20: %.1e; at level 46: %.2e\n",
                      c.name, worst, ratio_error, jacobian_deep);
        assert_true(worst < 1e-14);
        assert_true(ratio_error < 1e-6);
        case_free(&c);
    }
}

/* ===== Pieces (the sub-triangles a contact step keeps) ===== */

/* On every line between two sub-triangles of the bowl's EV faces (s + t = 2^-k, k >= 1, and
 * s = 2^-(k+1) and t = 2^-(k+1) inside the band below it), the pieces on its two sides differ; each
 * is the piece of the points inside it, where its evaluation is the surface's to the bit; on the
 * line the two polynomials meet with C2 and their third derivatives differ (why a step keeps one).
 */
static void expect_same_point(const SurfacePoint *a, const SurfacePoint *b) {
    for (int k = 0; k < SURFACE_DERIVATIVES; k++)
        assert_memory_equal(&a->x[k], &b->x[k], sizeof(Vec3));
}

static void test_pieces_extend_their_sub_triangles(void **state) {
    (void)state;
    Case c;
    case_bowl(&c, 0);
    double c2 = 0.0, third_min = INFINITY;
    int lines = 0;
    for (int i = 0; i < c.ev_count; i++)
        for (int level = 0; level <= 20; level++) {
            double r = ldexp(1.0, -level), h = ldexp(1.0, -level - 1),
                   a = test_rng_range(&rng, 0.05, 0.95);
            /* a point on each line and the line's normal: {s + t = r}, {s = h}, {t = h} */
            const double on[3][2] = {{a * r, (1 - a) * r}, {h, a * h}, {a * h, h}};
            const double normal[3][2] = {{1, 1}, {1, 0}, {0, 1}};
            for (int l = level == 0 ? 1 : 0; l < 3; l++) { /* s + t = 1: the face's edge */
                double s = on[l][0], t = on[l][1], ns = normal[l][0], nt = normal[l][1];
                int piece[2];
                SurfacePoint at[2];
                for (int side = 0; side < 2; side++) {
                    double sign = side ? 1.0 : -1.0, inside = 1e-3 * r * sign;
                    piece[side] =
                        smooth_surface_piece(c.surface, c.patch[i], s, t, sign * ns, sign * nt);
                    double si = s + inside * ns, ti = t + inside * nt;
                    assert_int_equal(piece[side],
                                     smooth_surface_piece(c.surface, c.patch[i], si, ti, 0, 0));
                    SurfacePoint by_piece,
                        by_location = surface_point_at(c.surface, c.patch[i], si, ti);
                    IssimError err = {0};
                    assert_int_equal(smooth_surface_evaluate_piece(c.surface, c.patch[i],
                                                                   piece[side], si, ti, &by_piece,
                                                                   &err),
                                     ISSIM_OK);
                    expect_same_point(&by_piece, &by_location);
                    assert_int_equal(smooth_surface_evaluate_piece(
                                         c.surface, c.patch[i], piece[side], s, t, &at[side], &err),
                                     ISSIM_OK);
                }
                assert_int_not_equal(piece[0], piece[1]);
                for (int k = 0; k < 6; k++)
                    c2 = fmax(c2, vec3_norm(vec3_sub(at[0].x[k], at[1].x[k])) /
                                      order_scale(at[0].x, ORDER[k], 6));
                double third = 0.0;
                for (int k = 6; k < SURFACE_DERIVATIVES; k++)
                    third = fmax(third, vec3_norm(vec3_sub(at[0].x[k], at[1].x[k])) /
                                            order_scale(at[0].x, 3, SURFACE_DERIVATIVES));
                third_min = fmin(third_min, third);
                lines++;
            }
        }
    print_message("%d points on the bowl's sub-triangle lines, levels 0 .. 20: the two pieces "
                  "meet with C0..C2 to %.1e relative; their third derivatives differ by >= %.2f "
                  "relative\n",
                  lines, c2, third_min);
    assert_true(c2 < 1e-9);
    assert_true(third_min > 1e-3);
    case_free(&c);
}

int main(void) {
    rng.s = 16;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_agrees_with_finer_subdivision),
        cmocka_unit_test(test_exact_derivatives_match_central_differences),
        cmocka_unit_test(test_exact_faces_meet_with_c2),
        cmocka_unit_test(test_exact_at_the_vertex),
        cmocka_unit_test(test_pieces_extend_their_sub_triangles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
