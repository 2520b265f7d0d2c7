/* Tests for smooth_surface_from_loop (seed 002 5.2: S-patches replacing the 1-rings of
 * extraordinary vertices of Loop surfaces): the S-patches' position and normal derivatives (jets,
 * 002 5.3.1) against central differences on seeded random perturbations of the bowl of 002
 * App. B.2 and on bipyramids (loop_mesh_bipyramid) of 3 to 8 sides; every shared edge of the bowl,
 * the marble and the plate (positions at fractions a and 1 - a, normals); neighbour of neighbour is
 * self; the S-patch's centre against its extraordinary vertex's limit point; the blossom (002
 * eq. 5.18) on the diagonal; the refusal messages. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/surface/surface_internal.h"
#include "issim/surface.h"
#include "surface_fd.h"

static TestRng rng;

/* Central differences (support/surface_fd.h) agree to this (the S-patch domains are about 1
 * across, their derivatives up to ~10x the model size). */
#define FD_RELATIVE_TOLERANCE 1e-6

/* Positions at shared edges: relative to the model's size (002's bowl: about 4 across). */
#define EDGE_POSITION_TOLERANCE 1e-12
/* Normals across an edge between two regular patches (C2: equal up to rounding), and across an
 * S-patch's edge (tangent-plane continuous, spatch_g1.c: equal up to rounding along the whole
 * edge; the degree-4 construction of 002 5.2.2 alone was 0.017 rad off on the bowl). */
#define REGULAR_NORMAL_TOLERANCE 1e-12
#define SPATCH_NORMAL_TOLERANCE 1e-10 /* radians; measured 8e-14 */

static SmoothSurface *surface_from(const char *asset, int levels) {
    IssimError err = {0};
    LoopMesh *mesh = loop_mesh_load(test_source_path(asset), &err);
    if (!mesh)
        fail_msg("%s", err.message);
    SmoothSurface *surface =
        smooth_surface_from_loop(mesh, levels, SURFACE_EXTRAORDINARY_SPATCH, &err);
    if (!surface)
        fail_msg("%s", err.message);
    loop_mesh_destroy(mesh);
    return surface;
}

/* Whether a patch is an S-patch: its domain is centred at the origin (a regular patch's is the
 * triangle (0, 0), (1, 0), (0, 1)). */
static bool is_spatch(const SmoothSurface *surface, int patch) {
    const SurfaceDomain *d = smooth_surface_domain(surface, patch);
    double cs = 0.0, ct = 0.0;
    for (int c = 0; c < d->count; c++) {
        cs += d->corner[c][0];
        ct += d->corner[c][1];
    }
    return fabs(cs) < 1e-12 && fabs(ct) < 1e-12;
}

/* A random point of the domain: a random convex combination of the centre and an edge. */
static void random_domain_point(const SurfaceDomain *d, double *s, double *t) {
    int e = (int)(test_rng_uniform(&rng) * d->count) % d->count;
    double a = test_rng_range(&rng, 0.02, 0.98), b = test_rng_range(&rng, 0.0, 1.0);
    const double *p = d->corner[e], *q = d->corner[(e + 1) % d->count];
    double cs = 0.0, ct = 0.0;
    for (int c = 0; c < d->count; c++) {
        cs += d->corner[c][0] / d->count;
        ct += d->corner[c][1] / d->count;
    }
    double es = p[0] + b * (q[0] - p[0]), et = p[1] + b * (q[1] - p[1]);
    *s = cs + a * (es - cs);
    *t = ct + a * (et - ct);
}

/* ===== Derivatives against central differences ===== */

typedef struct FdPatch {
    const SmoothSurface *surface;
    int patch;
} FdPatch;

static SurfacePoint fd_evaluate(const void *context, double s, double t) {
    const FdPatch *p = context;
    return surface_point_at(p->surface, p->patch, s, t);
}

/* Worst errors over `points` random points of every S-patch, folded into worst[2]. */
static int fd_check_spatches(const SmoothSurface *surface, int points, double worst[2]) {
    int checked = 0;
    for (int p = 0; p < smooth_surface_patch_count(surface); p++) {
        if (!is_spatch(surface, p))
            continue;
        checked++;
        for (int k = 0; k < points; k++) {
            double s, t;
            random_domain_point(smooth_surface_domain(surface, p), &s, &t);
            surface_fd_check(fd_evaluate, &(FdPatch){surface, p}, s, t, worst);
        }
    }
    return checked;
}

/* The bowl of 002 App. B.2 with every vertex moved by up to `jitter` (seeded). */
static LoopMesh *jittered_bowl(double jitter) {
    IssimError err = {0};
    LoopMesh *bowl = loop_mesh_load(test_source_path("assets/loop_bowl.obj"), &err);
    if (!bowl)
        fail_msg("%s", err.message);
    int nv = loop_mesh_vertex_count(bowl), nf = loop_mesh_face_count(bowl);
    Vec3 vertices[16];
    int faces[32][3];
    assert_true(nv <= 16 && nf <= 32);
    for (int v = 0; v < nv; v++)
        vertices[v] =
            vec3_add(loop_mesh_vertex(bowl, v), vec3(test_rng_range(&rng, -jitter, jitter),
                                                     test_rng_range(&rng, -jitter, jitter),
                                                     test_rng_range(&rng, -jitter, jitter)));
    for (int f = 0; f < nf; f++)
        loop_mesh_face(bowl, f, faces[f]);
    loop_mesh_destroy(bowl);
    LoopMesh *mesh =
        loop_mesh_create("jittered bowl", vertices, nv, (const int(*)[3])faces, nf, &err);
    if (!mesh)
        fail_msg("%s", err.message);
    return mesh;
}

/* fd_check_spatches on the surface of `mesh` after 2 levels; destroys the mesh. */
static int fd_check_mesh(LoopMesh *mesh, int points, double worst[2]) {
    IssimError err = {0};
    if (!mesh)
        fail_msg("no mesh");
    SmoothSurface *surface = smooth_surface_from_loop(mesh, 2, SURFACE_EXTRAORDINARY_SPATCH, &err);
    if (!surface)
        fail_msg("%s", err.message);
    int checked = fd_check_spatches(surface, points, worst);
    smooth_surface_destroy(surface);
    loop_mesh_destroy(mesh);
    return checked;
}

static void test_spatch_derivatives_match_finite_differences(void **state) {
    (void)state;
    rng.s = 1602;
    double worst[2] = {0.0, 0.0};
    int spatches = 0;
    for (int trial = 0; trial < 3; trial++)
        spatches += fd_check_mesh(jittered_bowl(0.15), 4, worst);
    for (int sides = 3; sides <= 8; sides++)
        spatches += fd_check_mesh(loop_mesh_bipyramid(sides, NULL), 3, worst);
    printf("# %d S-patches: worst relative error against central differences %.2e (position), "
           "%.2e (normal)\n",
           spatches, worst[0], worst[1]);
    /* the bowl: 6 of valence 4; a bipyramid: its n equator vertices, and its apexes unless n = 6 */
    assert_int_equal(spatches, 3 * 6 + (3 + 4 + 5 + 6 + 7 + 8) + 2 * 5);
    assert_true(worst[0] < FD_RELATIVE_TOLERANCE);
    assert_true(worst[1] < FD_RELATIVE_TOLERANCE);
}

/* ===== Shared edges ===== */

static void edge_point(const SurfaceDomain *d, int edge, double a, double *s, double *t) {
    const double *p = d->corner[edge], *q = d->corner[(edge + 1) % d->count];
    *s = p[0] + a * (q[0] - p[0]);
    *t = p[1] + a * (q[1] - p[1]);
}

/* Worst mismatches over every edge of a surface: position (relative to `size`), normal angle
 * between two regular patches, between an S-patch and a regular patch at the S-patch's corners
 * and along its edges. */
typedef struct EdgeGaps {
    double position, regular, spatch_corner, spatch_edge;
} EdgeGaps;

/* Boundary traversal (002 4.5.1) evaluates just past an edge: the polynomial extends there. */
static void check_just_outside(const SmoothSurface *surface, int patch, int edge, double s,
                               double t) {
    const SurfaceDomain *d = smooth_surface_domain(surface, patch);
    const double *p = d->corner[edge], *q = d->corner[(edge + 1) % d->count];
    double ex = q[0] - p[0], ey = q[1] - p[1], len = hypot(ex, ey);
    double os = s + 1e-3 * ey / len, ot = t - 1e-3 * ex / len; /* outward: the edge's right */
    int outside = -1;
    assert_false(smooth_surface_domain_contains(surface, patch, os, ot, 0.0, &outside));
    assert_int_equal(outside, edge);
    SurfacePoint at = surface_point_at(surface, patch, os, ot);
    assert_true(vec3_norm(at.normal[SURFACE_VALUE]) > 0.99);
}

static EdgeGaps edge_gaps(const SmoothSurface *surface, double size) {
    enum { FRACTIONS = 16 };
    EdgeGaps gaps = {0};
    for (int p = 0; p < smooth_surface_patch_count(surface); p++) {
        const SurfaceDomain *d = smooth_surface_domain(surface, p);
        for (int e = 0; e < d->count; e++) {
            int q, f, back_patch, back_edge;
            assert_true(smooth_surface_neighbour(surface, p, e, &q, &f));
            assert_true(smooth_surface_neighbour(surface, q, f, &back_patch, &back_edge));
            assert_int_equal(back_patch, p);
            assert_int_equal(back_edge, e);
            bool spatch = is_spatch(surface, p) || is_spatch(surface, q);
            for (int k = 0; k <= FRACTIONS; k++) {
                double a = (double)k / FRACTIONS, s, t, s2, t2;
                edge_point(d, e, a, &s, &t);
                edge_point(smooth_surface_domain(surface, q), f, 1.0 - a, &s2, &t2);
                SurfacePoint x = surface_point_at(surface, p, s, t),
                             y = surface_point_at(surface, q, s2, t2);
                double gap = vec3_norm(vec3_sub(x.x[SURFACE_VALUE], y.x[SURFACE_VALUE])) / size;
                if (k > 0 && k < FRACTIONS)
                    check_just_outside(surface, p, e, s, t);
                Vec3 n = x.normal[SURFACE_VALUE], m = y.normal[SURFACE_VALUE];
                double angle = atan2(vec3_norm(vec3_cross(n, m)), vec3_dot(n, m));
                gaps.position = fmax(gaps.position, gap);
                if (!spatch)
                    gaps.regular = fmax(gaps.regular, angle);
                else if (k == 0 || k == FRACTIONS)
                    gaps.spatch_corner = fmax(gaps.spatch_corner, angle);
                else
                    gaps.spatch_edge = fmax(gaps.spatch_edge, angle);
            }
        }
    }
    return gaps;
}

/* regular_tolerance: for the joins of two regular patches (REGULAR_NORMAL_TOLERANCE, or looser
 * where a jittered net rounds worse). */
static void check_surface_edges(SmoothSurface *surface, const char *label, int levels, double size,
                                double regular_tolerance) {
    EdgeGaps gaps = edge_gaps(surface, size);
    printf("# %s, %d levels, %d patches: position gap %.1e of the size; normal angle %.1e "
           "(regular | regular), %.1e (S-patch corners), %.1e rad (along S-patch edges)\n",
           label, levels, smooth_surface_patch_count(surface), gaps.position, gaps.regular,
           gaps.spatch_corner, gaps.spatch_edge);
    assert_true(gaps.position < EDGE_POSITION_TOLERANCE);
    assert_true(gaps.regular < regular_tolerance);
    assert_true(gaps.spatch_corner < REGULAR_NORMAL_TOLERANCE);
    assert_true(gaps.spatch_edge < SPATCH_NORMAL_TOLERANCE);
    smooth_surface_destroy(surface);
}

static void check_edges(const char *asset, int levels, double size) {
    check_surface_edges(surface_from(asset, levels), asset, levels, size, REGULAR_NORMAL_TOLERANCE);
}

/* The bowl, then jittered (no symmetry to hide a wrong twist, spatch_g1.c). */
static void test_bowl_edges_are_shared(void **state) {
    (void)state;
    check_edges("assets/loop_bowl.obj", 2, 4.0);
    rng.s = 1623;
    for (int trial = 0; trial < 3; trial++) {
        IssimError err = {0};
        LoopMesh *mesh = jittered_bowl(0.15);
        SmoothSurface *surface =
            smooth_surface_from_loop(mesh, 2, SURFACE_EXTRAORDINARY_SPATCH, &err);
        if (!surface)
            fail_msg("%s", err.message);
        check_surface_edges(surface, "jittered bowl", 2, 4.0, 1e-11); /* measured 1.6e-12 */
        loop_mesh_destroy(mesh);
    }
}

static void test_marble_and_plate_edges_are_shared(void **state) {
    (void)state;
    check_edges("assets/loop_marble.obj", 2, 1.0);
    check_edges("assets/loop_plate.obj", 1, 8.0);
}

/* S-patches of 3 to 8 sides (a bipyramid's equator vertices have valence 4, its apexes n; degree
 * 7 for 3 sides, 6 otherwise). */
static void test_bipyramid_edges_are_shared(void **state) {
    (void)state;
    for (int sides = 3; sides <= 8; sides++) {
        IssimError err = {0};
        LoopMesh *mesh = loop_mesh_bipyramid(sides, &err);
        if (!mesh)
            fail_msg("%s", err.message);
        SmoothSurface *surface =
            smooth_surface_from_loop(mesh, 2, SURFACE_EXTRAORDINARY_SPATCH, &err);
        if (!surface)
            fail_msg("%s", err.message);
        char label[64];
        snprintf(label, sizeof label, "bipyramid of %d sides", sides);
        check_surface_edges(surface, label, 2, 2.0, REGULAR_NORMAL_TOLERANCE);
        loop_mesh_destroy(mesh);
    }
}

/* ===== The S-patch against its extraordinary vertex ===== */

/* The centre of each S-patch against the limit point of its vertex (002 5.2 replaces the
 * surface there, so the two differ: measured, bounded relative to the ring's size). */
static void test_spatch_centre_near_limit_point(void **state) {
    (void)state;
    static const char *const ASSETS[] = {"assets/loop_bowl.obj", "assets/loop_marble.obj",
                                         "assets/loop_plate.obj"};
    for (int a = 0; a < 3; a++) {
        IssimError err = {0};
        LoopMesh *mesh = loop_mesh_load(test_source_path(ASSETS[a]), &err);
        assert_non_null(mesh);
        SmoothSurface *surface =
            smooth_surface_from_loop(mesh, 2, SURFACE_EXTRAORDINARY_SPATCH, &err);
        assert_non_null(surface);
        int patch = 0, count = 0;
        double worst = 0.0, ring = 0.0;
        for (int v = 0; v < loop_mesh_vertex_count(mesh); v++) {
            if (loop_mesh_valence(mesh, v) == 6)
                continue;
            while (!is_spatch(surface, patch))
                patch++;
            SurfacePoint centre = surface_point_at(surface, patch, 0.0, 0.0);
            /* the ring's size: the S-patch's corner 0 against its centre */
            const SurfaceDomain *d = smooth_surface_domain(surface, patch);
            SurfacePoint corner =
                surface_point_at(surface, patch, d->corner[0][0], d->corner[0][1]);
            ring =
                fmax(ring, vec3_norm(vec3_sub(corner.x[SURFACE_VALUE], centre.x[SURFACE_VALUE])));
            worst =
                fmax(worst,
                     vec3_norm(vec3_sub(centre.x[SURFACE_VALUE], loop_mesh_limit_point(mesh, v))));
            patch++;
            count++;
        }
        printf("# %s: %d S-patches; centre to limit point at most %.2e (ring radius up to "
               "%.2e)\n",
               ASSETS[a], count, worst, ring);
        assert_true(count > 0);
        assert_true(worst < 0.05 * ring);
        smooth_surface_destroy(surface);
        loop_mesh_destroy(mesh);
    }
}

/* ===== The blossom, the assets' shapes ===== */

/* On the diagonal the blossom (002 eq. 5.18) is the patch: f*(y, y, y, y) = f(y); the power
 * basis form the surface evaluates gives loop_patch_evaluate's ten derivatives. */
static void test_blossom_and_power_basis_are_the_patch(void **state) {
    (void)state;
    rng.s = 518;
    Vec3 control[LOOP_PATCH_VERTICES], net[LOOP_PATCH_MONOMIALS];
    for (int i = 0; i < LOOP_PATCH_VERTICES; i++)
        control[i] = vec3(test_rng_range(&rng, -1, 1), test_rng_range(&rng, -1, 1),
                          test_rng_range(&rng, -1, 1));
    loop_patch_bezier(control, net);
    Vec3 power[LOOP_PATCH_MONOMIALS];
    loop_patch_power(control, power);
    for (int k = 0; k < 20; k++) {
        double s = test_rng_range(&rng, -0.5, 1.0), t = test_rng_range(&rng, -0.5, 1.0);
        double args[4][3];
        for (int j = 0; j < 4; j++) {
            args[j][0] = 1.0 - s - t;
            args[j][1] = s;
            args[j][2] = t;
        }
        SurfacePoint p;
        assert_int_equal(loop_patch_evaluate(control, s, t, "random", &p, NULL), ISSIM_OK);
        Vec3 b = loop_patch_blossom(net, (const double(*)[3])args);
        assert_true(vec3_norm(vec3_sub(b, p.x[SURFACE_VALUE])) < 1e-13);
        SurfacePoint q;
        assert_int_equal(loop_patch_power_evaluate(power, s, t, "random", &q, NULL), ISSIM_OK);
        for (int d = 0; d < SURFACE_DERIVATIVES; d++)
            assert_true(vec3_norm(vec3_sub(q.x[d], p.x[d])) < 1e-12 * fmax(1.0, vec3_norm(p.x[d])));
        for (int d = 0; d < SURFACE_NORMAL_DERIVATIVES; d++)
            assert_true(vec3_norm(vec3_sub(q.normal[d], p.normal[d])) <
                        1e-11 * fmax(1.0, vec3_norm(p.normal[d])));
    }
}

/* Signed volume of a tessellation (positive: normals out) and its bounds. */
static double tessellated_volume(const SmoothSurface *surface, Vec3 *lo, Vec3 *hi) {
    SurfaceTessellation mesh;
    IssimError err = {0};
    assert_int_equal(smooth_surface_tessellate(surface, 4, &mesh, &err), ISSIM_OK);
    double volume = 0.0;
    for (int i = 0; i < mesh.triangle_count; i++) {
        Vec3 a = mesh.vertices[mesh.triangles[i][0]], b = mesh.vertices[mesh.triangles[i][1]];
        Vec3 c = mesh.vertices[mesh.triangles[i][2]];
        volume += vec3_dot(a, vec3_cross(b, c)) / 6.0;
    }
    *lo = *hi = mesh.vertices[0];
    for (int i = 0; i < mesh.vertex_count; i++) {
        Vec3 v = mesh.vertices[i];
        *lo = vec3(fmin(lo->x, v.x), fmin(lo->y, v.y), fmin(lo->z, v.z));
        *hi = vec3(fmax(hi->x, v.x), fmax(hi->y, v.y), fmax(hi->z, v.z));
    }
    surface_tessellation_free(&mesh);
    return volume;
}

/* The marble: about 1 across, centred near the origin; the plate: a dish several marbles wide,
 * concave up (its top surface higher at half the radius than at the centre). */
static void test_marble_and_plate_shapes(void **state) {
    (void)state;
    Vec3 lo, hi;
    SmoothSurface *marble = surface_from("assets/loop_marble.obj", 2);
    double volume = tessellated_volume(marble, &lo, &hi);
    printf("# marble: volume %.3f, bounds (%.2f %.2f %.2f) .. (%.2f %.2f %.2f)\n", volume, lo.x,
           lo.y, lo.z, hi.x, hi.y, hi.z);
    assert_true(volume > 0.0);
    assert_true(hi.x - lo.x > 0.7 && hi.x - lo.x < 1.3 && hi.z - lo.z > 0.7 && hi.z - lo.z < 1.3);
    assert_true(fabs(lo.x + hi.x) < 0.2 && fabs(lo.y + hi.y) < 0.2 && fabs(lo.z + hi.z) < 0.2);
    smooth_surface_destroy(marble);

    SmoothSurface *plate = surface_from("assets/loop_plate.obj", 1);
    volume = tessellated_volume(plate, &lo, &hi);
    printf("# plate: volume %.3f, bounds (%.2f %.2f %.2f) .. (%.2f %.2f %.2f)\n", volume, lo.x,
           lo.y, lo.z, hi.x, hi.y, hi.z);
    assert_true(volume > 0.0);
    assert_true(hi.x - lo.x > 5.0 && hi.y - lo.y > 5.0 && hi.z - lo.z < 1.0);
    int patch;
    double s, t, centre, half;
    IssimError err = {0};
    assert_int_equal(smooth_surface_closest(plate, vec3(0, 0, 2), &patch, &s, &t, &centre, &err),
                     ISSIM_OK);
    assert_int_equal(smooth_surface_closest(plate, vec3(1.5, 0, 2), &patch, &s, &t, &half, &err),
                     ISSIM_OK);
    SurfacePoint p = surface_point_at(plate, patch, s, t);
    printf("# plate: top surface %.3f below z = 2 at the centre, %.3f at r = 1.5 (normal z %.3f)\n",
           centre, half, p.normal[SURFACE_VALUE].z);
    assert_true(half < centre - 0.02);
    assert_true(p.normal[SURFACE_VALUE].z > 0.9);
    smooth_surface_destroy(plate);
}

/* ===== Refusals ===== */

static void expect_refusal(const LoopMesh *mesh, int levels, const char *const *parts) {
    IssimError err = {0};
    SmoothSurface *surface =
        smooth_surface_from_loop(mesh, levels, SURFACE_EXTRAORDINARY_SPATCH, &err);
    assert_null(surface);
    printf("# refused: %s\n", err.message);
    for (int i = 0; parts[i]; i++)
        if (!strstr(err.message, parts[i]))
            fail_msg("'%s' lacks '%s'", err.message, parts[i]);
}

static void test_refusals_name_the_mesh_and_the_edge(void **state) {
    (void)state;
    IssimError err = {0};
    LoopMesh *bowl = loop_mesh_load(test_source_path("assets/loop_bowl.obj"), &err);
    assert_non_null(bowl);
    /* its valence-4 vertices 4 and 5 are adjacent: two levels at least */
    expect_refusal(bowl, 1,
                   (const char *const[]){"loop_bowl.obj", "vertices 4 and 5", "at least 2", NULL});
    expect_refusal(bowl, 0, (const char *const[]){"at least 2", NULL});
    expect_refusal(bowl, 9, (const char *const[]){"loop_bowl.obj", "9 subdivision levels", NULL});
    SmoothSurface *ok = smooth_surface_from_loop(bowl, 2, SURFACE_EXTRAORDINARY_SPATCH, &err);
    assert_non_null(ok);
    smooth_surface_destroy(ok);
    loop_mesh_destroy(bowl);

    /* an octahedron without its last face: edges 6-5, 5-4 ... on the boundary */
    static const Vec3 V[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    static const int F[8][3] = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                                {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
    LoopMesh *open = loop_mesh_create("open octahedron", V, 6, F, 7, &err);
    assert_non_null(open);
    expect_refusal(open, 2, (const char *const[]){"open octahedron", "edge 1-6", "boundary", NULL});
    loop_mesh_destroy(open);

    /* two tetrahedra sharing vertex 1 only: not a 2-manifold there */
    static const Vec3 W[7] = {{0, 0, 0},  {1, 0, 0},  {0, 1, 0}, {0, 0, 1},
                              {-1, 0, 0}, {0, -1, 0}, {0, 0, -1}};
    static const int G[8][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3},
                                {0, 5, 4}, {0, 4, 6}, {0, 6, 5}, {4, 5, 6}};
    LoopMesh *pinched = loop_mesh_create("pinched", W, 7, G, 8, &err);
    assert_non_null(pinched);
    expect_refusal(pinched, 2,
                   (const char *const[]){"pinched", "vertex 1", "not a 2-manifold", NULL});
    loop_mesh_destroy(pinched);

    /* the octahedron with every face listed clockwise from outside: its normals would point into
     * the body; refused by the sign of the volume it encloses (accepted before issue 34) */
    int reversed[8][3];
    for (int f = 0; f < 8; f++) {
        reversed[f][0] = F[f][0];
        reversed[f][1] = F[f][2];
        reversed[f][2] = F[f][1];
    }
    LoopMesh *inward = loop_mesh_create("inward octahedron", V, 6, reversed, 8, &err);
    assert_non_null(inward);
    expect_refusal(inward, 2,
                   (const char *const[]){"inward octahedron", "turn inwards", "-1.33", NULL});
    loop_mesh_destroy(inward);

    /* 512 faces (the octahedron subdivided three times) asked for 6 more levels: 2.1e6 faces,
     * refused with the estimate before anything is subdivided (a 316 KB mesh at 6 levels took
     * 6 GB before) */
    LoopMesh *fine = loop_mesh_create("octahedron", V, 6, F, 8, &err);
    for (int level = 0; level < 3 && fine; level++) {
        LoopMesh *next = loop_mesh_subdivide(fine, &err);
        loop_mesh_destroy(fine);
        fine = next;
    }
    assert_non_null(fine);
    assert_int_equal(loop_mesh_face_count(fine), 512);
    expect_refusal(
        fine, 6,
        (const char *const[]){"512 faces", "6 levels", "2.1e+06", "GB", "fewer levels", NULL});
    loop_mesh_destroy(fine);

    /* an edge with three faces (two in one direction) cannot become a LoopMesh at all */
    static const int H[3][3] = {{0, 1, 2}, {1, 0, 3}, {0, 1, 4}};
    assert_null(loop_mesh_create("fin", W, 7, H, 3, &err));
    printf("# refused: %s\n", err.message);
    assert_non_null(strstr(err.message, "'fin'"));
    assert_non_null(strstr(err.message, "edge 1-2"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spatch_derivatives_match_finite_differences),
        cmocka_unit_test(test_bowl_edges_are_shared),
        cmocka_unit_test(test_marble_and_plate_edges_are_shared),
        cmocka_unit_test(test_bipyramid_edges_are_shared),
        cmocka_unit_test(test_spatch_centre_near_limit_point),
        cmocka_unit_test(test_blossom_and_power_basis_are_the_patch),
        cmocka_unit_test(test_marble_and_plate_shapes),
        cmocka_unit_test(test_refusals_name_the_mesh_and_the_edge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
