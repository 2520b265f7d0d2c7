/* Tests for smooth_surface_from_loop (seed 002 5.2: S-patches replacing the 1-rings of
 * extraordinary vertices of Loop surfaces): the S-patches' position and normal derivatives (jets,
 * 002 5.3.1) against central differences on seeded random perturbations of the bowl of 002
 * App. B.2 and on bipyramids of 3 to 8 sides; every shared edge of the bowl, the marble and the
 * plate (positions at fractions a and 1 - a, normals); neighbour of neighbour is self; the
 * S-patch's centre against its extraordinary vertex's limit point; the blossom (002 eq. 5.18)
 * on the diagonal; the refusal messages. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/surface/surface_internal.h"
#include "issim/surface.h"

static TestRng rng;

/* Central differences as tests/test_surface.c: step 1e-5 in the parameter, relative tolerance
 * 1e-6 (the S-patch domains are about 1 across, its derivatives up to ~10x the model size). */
#define FD_STEP 1e-5
#define FD_RELATIVE_TOLERANCE 1e-6
#define FD_FLOOR 1e-2

/* Positions at shared edges: relative to the model's size (002's bowl: about 4 across). */
#define EDGE_POSITION_TOLERANCE 1e-12
/* Normals across an edge between two regular patches (C2: equal up to rounding), and across an
 * S-patch's edge (equal at its corners, close along it: the gap measured by the test). */
#define REGULAR_NORMAL_TOLERANCE 1e-12
#define SPATCH_NORMAL_TOLERANCE 0.03 /* radians; measured 0.017 on the bowl */

static SurfacePoint evaluate(const SmoothSurface *surface, int patch, double s, double t) {
    SurfacePoint p;
    IssimError err = {0};
    if (smooth_surface_evaluate(surface, patch, s, t, &p, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    return p;
}

static SmoothSurface *surface_from(const char *asset, int levels) {
    IssimError err = {0};
    LoopMesh *mesh = loop_mesh_load(test_source_path(asset), &err);
    if (!mesh)
        fail_msg("%s", err.message);
    SmoothSurface *surface = smooth_surface_from_loop(mesh, levels, &err);
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

typedef struct FdCase {
    int derivative, of;
    bool along_t;
} FdCase;

static const FdCase POSITION_CASES[] = {
    {SURFACE_S, SURFACE_VALUE, false}, {SURFACE_T, SURFACE_VALUE, true},
    {SURFACE_SS, SURFACE_S, false},    {SURFACE_ST, SURFACE_S, true},
    {SURFACE_ST, SURFACE_T, false},    {SURFACE_TT, SURFACE_T, true},
    {SURFACE_SSS, SURFACE_SS, false},  {SURFACE_SST, SURFACE_SS, true},
    {SURFACE_SST, SURFACE_ST, false},  {SURFACE_STT, SURFACE_ST, true},
    {SURFACE_STT, SURFACE_TT, false},  {SURFACE_TTT, SURFACE_TT, true},
};
static const FdCase NORMAL_CASES[] = {
    {SURFACE_S, SURFACE_VALUE, false}, {SURFACE_T, SURFACE_VALUE, true},
    {SURFACE_SS, SURFACE_S, false},    {SURFACE_ST, SURFACE_S, true},
    {SURFACE_ST, SURFACE_T, false},    {SURFACE_TT, SURFACE_T, true},
};
#define CASES(array) array, (int)(sizeof array / sizeof *array)

/* Largest relative error over the cases at (s, t); normals when `normal`. */
static double fd_max_error(const SmoothSurface *surface, int patch, double s, double t,
                           const FdCase *cases, int count, bool normal) {
    SurfacePoint at = evaluate(surface, patch, s, t);
    double worst = 0.0;
    for (int c = 0; c < count; c++) {
        double ds = cases[c].along_t ? 0.0 : FD_STEP, dt = cases[c].along_t ? FD_STEP : 0.0;
        SurfacePoint plus = evaluate(surface, patch, s + ds, t + dt);
        SurfacePoint minus = evaluate(surface, patch, s - ds, t - dt);
        const Vec3 *hi = normal ? plus.normal : plus.x, *lo = normal ? minus.normal : minus.x;
        const Vec3 *an = normal ? at.normal : at.x;
        Vec3 fd = vec3_scale(vec3_sub(hi[cases[c].of], lo[cases[c].of]), 0.5 / FD_STEP);
        Vec3 analytic = an[cases[c].derivative];
        worst =
            fmax(worst, vec3_norm(vec3_sub(analytic, fd)) / fmax(vec3_norm(analytic), FD_FLOOR));
    }
    return worst;
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
            worst[0] = fmax(worst[0], fd_max_error(surface, p, s, t, CASES(POSITION_CASES), false));
            worst[1] = fmax(worst[1], fd_max_error(surface, p, s, t, CASES(NORMAL_CASES), true));
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

/* A bipyramid: a regular `sides`-gon (radius 1) and two apexes at +-1: apexes of valence
 * `sides`, equator vertices of valence 4. */
static LoopMesh *bipyramid(int sides) {
    Vec3 vertices[SURFACE_DOMAIN_MAX + 2];
    int faces[2 * SURFACE_DOMAIN_MAX][3];
    for (int i = 0; i < sides; i++)
        vertices[i] = vec3(cos(2.0 * M_PI * i / sides), sin(2.0 * M_PI * i / sides), 0.0);
    vertices[sides] = vec3(0, 0, 1);
    vertices[sides + 1] = vec3(0, 0, -1);
    for (int i = 0; i < sides; i++) {
        int j = (i + 1) % sides;
        memcpy(faces[2 * i], (int[3]){i, j, sides}, sizeof(int[3]));
        memcpy(faces[2 * i + 1], (int[3]){j, i, sides + 1}, sizeof(int[3]));
    }
    char name[32];
    snprintf(name, sizeof name, "bipyramid %d", sides);
    IssimError err = {0};
    LoopMesh *mesh =
        loop_mesh_create(name, vertices, sides + 2, (const int(*)[3])faces, 2 * sides, &err);
    if (!mesh)
        fail_msg("%s", err.message);
    return mesh;
}

static void test_spatch_derivatives_match_finite_differences(void **state) {
    (void)state;
    rng.s = 1602;
    double worst[2] = {0.0, 0.0};
    int spatches = 0;
    for (int trial = 0; trial < 3; trial++) {
        LoopMesh *mesh = jittered_bowl(0.15);
        IssimError err = {0};
        SmoothSurface *surface = smooth_surface_from_loop(mesh, 2, &err);
        if (!surface)
            fail_msg("%s", err.message);
        spatches += fd_check_spatches(surface, 4, worst);
        smooth_surface_destroy(surface);
        loop_mesh_destroy(mesh);
    }
    for (int sides = 3; sides <= 8; sides++) {
        LoopMesh *mesh = bipyramid(sides);
        IssimError err = {0};
        SmoothSurface *surface = smooth_surface_from_loop(mesh, 2, &err);
        if (!surface)
            fail_msg("%s", err.message);
        spatches += fd_check_spatches(surface, 3, worst);
        smooth_surface_destroy(surface);
        loop_mesh_destroy(mesh);
    }
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
                SurfacePoint x = evaluate(surface, p, s, t), y = evaluate(surface, q, s2, t2);
                double gap = vec3_norm(vec3_sub(x.x[SURFACE_VALUE], y.x[SURFACE_VALUE])) / size;
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

static void check_edges(const char *asset, int levels, double size) {
    SmoothSurface *surface = surface_from(asset, levels);
    EdgeGaps gaps = edge_gaps(surface, size);
    printf("# %s, %d levels, %d patches: position gap %.1e of the size; normal angle %.1e "
           "(regular | regular), %.1e (S-patch corners), %.1e rad (along S-patch edges)\n",
           asset, levels, smooth_surface_patch_count(surface), gaps.position, gaps.regular,
           gaps.spatch_corner, gaps.spatch_edge);
    assert_true(gaps.position < EDGE_POSITION_TOLERANCE);
    assert_true(gaps.regular < REGULAR_NORMAL_TOLERANCE);
    assert_true(gaps.spatch_corner < REGULAR_NORMAL_TOLERANCE);
    assert_true(gaps.spatch_edge < SPATCH_NORMAL_TOLERANCE);
    smooth_surface_destroy(surface);
}

static void test_bowl_edges_are_shared(void **state) {
    (void)state;
    check_edges("assets/loop_bowl.obj", 2, 4.0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spatch_derivatives_match_finite_differences),
        cmocka_unit_test(test_bowl_edges_are_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
