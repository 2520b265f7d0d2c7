/* Tests for issim/surface.h: the ten position derivatives and the normal's derivatives of bicubic
 * Bezier patches against central finite differences on seeded random control nets; the jets
 * (002 5.3's automatic differentiation) against the closed-form Bernstein derivatives; a flat
 * patch; a paraboloid cap with closed-form curvatures; the rattleback cap of 002 App. B.1; and
 * the degenerate normal reported with the patch and the parameter. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/surface/surface_internal.h"
#include "issim/surface.h"
#include "surface_fd.h"

enum { RANDOM_NETS = 20, POINTS_PER_NET = 10 };

/* Central differences (support/surface_fd.h) agree to this. */
#define FD_RELATIVE_TOLERANCE 1e-7

/* Seeded random numbers (testutil's xorshift64*). */
static TestRng rng;

static double rng_uniform(double lo, double hi) {
    return test_rng_range(&rng, lo, hi);
}

/* A unit grid in the plane, moved by up to 0.2 in the plane (so the parameterisation stays
 * regular: x_s . e_x >= 1.8 > |x_s . e_y|) and up to 1 out of it (strongly curved). */
static void random_net(BezierPatch *patch, int index) {
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            patch->control[i][j] = vec3(i - 1.5 + rng_uniform(-0.2, 0.2),
                                        j - 1.5 + rng_uniform(-0.2, 0.2), rng_uniform(-1.0, 1.0));
    snprintf(patch->name, sizeof patch->name, "random net %d", index);
}

static SurfacePoint evaluate(const BezierPatch *patch, double s, double t) {
    SurfacePoint p;
    IssimError err = {0};
    if (bezier_patch_evaluate(patch, s, t, &p, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    return p;
}

/* ===== Finite differences ===== */

/* A surface to differentiate: a Bezier patch, or a face of a Loop mesh. */
typedef struct FdSurface {
    const BezierPatch *patch;
    const LoopMesh *mesh;
    int face;
} FdSurface;

static SurfacePoint evaluate_loop(const LoopMesh *mesh, int face, double s, double t);

static SurfacePoint fd_evaluate(const void *context, double s, double t) {
    const FdSurface *surface = context;
    return surface->patch ? evaluate(surface->patch, s, t)
                          : evaluate_loop(surface->mesh, surface->face, s, t);
}

/* Worst errors of position and normal derivatives at (s, t), folded into worst[2]. */
static void fd_check_point(const FdSurface *surface, double s, double t, double worst[2]) {
    surface_fd_check(fd_evaluate, surface, s, t, worst);
}

static void test_derivatives_match_finite_differences(void **state) {
    (void)state;
    rng.s = 16;
    double worst[2] = {0.0, 0.0};
    for (int n = 0; n < RANDOM_NETS; n++) {
        BezierPatch patch;
        random_net(&patch, n);
        for (int k = 0; k < POINTS_PER_NET; k++) {
            double s = rng_uniform(0.0, 1.0), t = rng_uniform(0.0, 1.0);
            fd_check_point(&(FdSurface){.patch = &patch}, s, t, worst);
            /* the normal itself: unit, orthogonal to both tangents, along x_s x x_t */
            SurfacePoint p = evaluate(&patch, s, t);
            Vec3 n0 = p.normal[SURFACE_VALUE];
            assert_near(vec3_norm(n0), 1.0, 1e-14);
            assert_near(vec3_dot(n0, p.x[SURFACE_S]), 0.0, 1e-13);
            assert_near(vec3_dot(n0, p.x[SURFACE_T]), 0.0, 1e-13);
            assert_true(vec3_dot(n0, vec3_cross(p.x[SURFACE_S], p.x[SURFACE_T])) > 0.0);
        }
    }
    printf("# finite differences: worst relative error %.2e (position), %.2e (normal)\n", worst[0],
           worst[1]);
    assert_true(worst[0] < FD_RELATIVE_TOLERANCE);
    assert_true(worst[1] < FD_RELATIVE_TOLERANCE);
}

/* ===== Jets against the closed forms ===== */

/* The jet of u0 + du (du along s or t). */
static Jet variable_jet(double u0, bool along_t) {
    Jet j = {{0}};
    j.c[SURFACE_VALUE] = u0;
    j.c[along_t ? SURFACE_T : SURFACE_S] = 1.0;
    return j;
}

/* Cubic Bernstein polynomials of a jet: an independent route to the ten derivatives (the
 * automatic differentiation of 002 5.3 applied to the whole patch). */
static void bernstein_jets(const Jet *u, Jet b[4]) {
    Jet one = {{1.0}};
    Jet minus_u = jet_scale(u, -1.0);
    Jet v = jet_add(&one, &minus_u);
    Jet uu = jet_mul(u, u, JET_ORDER), vv = jet_mul(&v, &v, JET_ORDER);
    Jet b0 = jet_mul(&vv, &v, JET_ORDER), b1 = jet_mul(u, &vv, JET_ORDER),
        b2 = jet_mul(&uu, &v, JET_ORDER), b3 = jet_mul(&uu, u, JET_ORDER);
    b[0] = b0;
    b[1] = jet_scale(&b1, 3.0);
    b[2] = jet_scale(&b2, 3.0);
    b[3] = b3;
}

static void test_jets_match_closed_form_derivatives(void **state) {
    (void)state;
    rng.s = 1616;
    for (int n = 0; n < RANDOM_NETS; n++) {
        BezierPatch patch;
        random_net(&patch, n);
        double s = rng_uniform(0.0, 1.0), t = rng_uniform(0.0, 1.0);
        Jet js = variable_jet(s, false), jt = variable_jet(t, true), bs[4], bt[4];
        bernstein_jets(&js, bs);
        bernstein_jets(&jt, bt);
        Jet x = {{0}}, y = {{0}}, z = {{0}};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                Jet w = jet_mul(&bs[i], &bt[j], JET_ORDER);
                Vec3 p = patch.control[i][j];
                Jet wx = jet_scale(&w, p.x), wy = jet_scale(&w, p.y), wz = jet_scale(&w, p.z);
                x = jet_add(&x, &wx);
                y = jet_add(&y, &wy);
                z = jet_add(&z, &wz);
            }
        double dx[SURFACE_DERIVATIVES], dy[SURFACE_DERIVATIVES], dz[SURFACE_DERIVATIVES];
        jet_to_derivatives(&x, dx);
        jet_to_derivatives(&y, dy);
        jet_to_derivatives(&z, dz);
        SurfacePoint p = evaluate(&patch, s, t);
        for (int k = 0; k < SURFACE_DERIVATIVES; k++) {
            double scale = fmax(vec3_norm(p.x[k]), 1.0);
            assert_near(dx[k], p.x[k].x, 1e-13 * scale);
            assert_near(dy[k], p.x[k].y, 1e-13 * scale);
            assert_near(dz[k], p.x[k].z, 1e-13 * scale);
        }
    }
}

/* 1/sqrt of a jet: r^2 a = 1 to every order (a random jet with a positive value). */
static void test_jet_rsqrt_identity(void **state) {
    (void)state;
    rng.s = 3;
    for (int n = 0; n < RANDOM_NETS; n++) {
        Jet a;
        for (int k = 0; k < SURFACE_DERIVATIVES; k++)
            a.c[k] = rng_uniform(-1.0, 1.0);
        a.c[SURFACE_VALUE] = rng_uniform(0.5, 2.0);
        for (int order = 2; order <= JET_ORDER; order++) {
            Jet r = jet_rsqrt(&a, order);
            Jet r2 = jet_mul(&r, &r, order);
            Jet one = jet_mul(&r2, &a, order);
            assert_near(one.c[SURFACE_VALUE], 1.0, 1e-14);
            for (int k = 1; k < SURFACE_DERIVATIVES; k++)
                assert_near(one.c[k], 0.0, 1e-13);
        }
    }
}

/* ===== Known shapes ===== */

/* A flat patch with an irregular in-plane net: the normal is +z everywhere, its derivatives and
 * the curvatures vanish; the floor of 002 App. B.1 has constant tangents (3, 0, 0), (0, 3, 0). */
static void test_flat_patch(void **state) {
    (void)state;
    BezierPatch floor_patch;
    bezier_patch_rattleback_floor(&floor_patch);
    SurfacePoint f = evaluate(&floor_patch, 0.3, 0.8);
    assert_near(f.x[SURFACE_VALUE].x, -1.5 + 3.0 * 0.3, 1e-15);
    assert_near(f.x[SURFACE_VALUE].y, -1.5 + 3.0 * 0.8, 1e-15);
    assert_near(f.x[SURFACE_S].x, 3.0, 1e-15);
    assert_near(f.x[SURFACE_T].y, 3.0, 1e-15);
    for (int k = SURFACE_SS; k < SURFACE_DERIVATIVES; k++)
        assert_near(vec3_norm(f.x[k]), 0.0, 1e-14);
    assert_near(f.normal[SURFACE_VALUE].z, 1.0, 1e-15);

    rng.s = 7;
    BezierPatch patch;
    random_net(&patch, 0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            patch.control[i][j].z = 0.25;
    for (int k = 0; k < POINTS_PER_NET; k++) {
        SurfacePoint p = evaluate(&patch, rng_uniform(0, 1), rng_uniform(0, 1));
        assert_near(p.normal[SURFACE_VALUE].z, 1.0, 1e-15);
        for (int d = SURFACE_S; d < SURFACE_NORMAL_DERIVATIVES; d++)
            assert_near(vec3_norm(p.normal[d]), 0.0, 1e-14);
        SurfaceCurvature c;
        surface_curvature(&p, &c);
        assert_near(c.principal[0], 0.0, 1e-14);
        assert_near(c.principal[1], 0.0, 1e-14);
    }
}

/* The dome z = -(x^2 + y^2) / (2R) over [-1, 1]^2 as a bicubic patch (z is quadratic in s and t:
 * its Bernstein coefficients are the blossom of x(s)^2, (w^2, -w^2/3, -w^2/3, w^2) for
 * x(s) = w (2s - 1)). It osculates the sphere of radius R at its apex, and as a surface of
 * revolution with slope p = r/R its principal curvatures are (1/R) / (1 + p^2)^(3/2) along the
 * meridian and (1/R) / (1 + p^2)^(1/2) along the parallel. */
static void test_paraboloid_cap_curvature(void **state) {
    (void)state;
    const double radius = 0.5, w = 1.0;
    const double square_blossom[4] = {w * w, -w * w / 3.0, -w * w / 3.0, w * w};
    const double linear[4] = {-w, -w / 3.0, w / 3.0, w};
    BezierPatch dome;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            dome.control[i][j] = vec3(linear[i], linear[j],
                                      -(square_blossom[i] + square_blossom[j]) / (2.0 * radius));
    snprintf(dome.name, sizeof dome.name, "dome");

    SurfacePoint apex = evaluate(&dome, 0.5, 0.5);
    assert_near(vec3_norm(apex.x[SURFACE_VALUE]), 0.0, 1e-15);
    assert_near(apex.normal[SURFACE_VALUE].z, 1.0, 1e-15);
    SurfaceCurvature c;
    surface_curvature(&apex, &c);
    assert_near(c.principal[0], 1.0 / radius, 1e-12);
    assert_near(c.principal[1], 1.0 / radius, 1e-12);

    rng.s = 99;
    for (int k = 0; k < POINTS_PER_NET; k++) {
        SurfacePoint p = evaluate(&dome, rng_uniform(0, 1), rng_uniform(0, 1));
        Vec3 at = p.x[SURFACE_VALUE];
        double r = hypot(at.x, at.y), slope2 = (r / radius) * (r / radius);
        assert_near(at.z, -r * r / (2.0 * radius), 1e-14);
        surface_curvature(&p, &c);
        double meridian = 1.0 / (radius * pow(1.0 + slope2, 1.5));
        double parallel = 1.0 / (radius * sqrt(1.0 + slope2));
        assert_near(c.principal[0], meridian, 1e-12);
        assert_near(c.principal[1], parallel, 1e-12);
        assert_near(c.gaussian, meridian * parallel, 1e-12);
        /* the meridian direction is radial: no component along the parallel (-y, x) */
        if (r > 1e-3)
            assert_near(vec3_dot(c.direction[0], vec3(-at.y / r, at.x / r, 0.0)), 0.0, 1e-10);
    }
}

/* 002 App. B.1's cap: each row of the z net is 1 - 3u + 3u^2 in Bernstein form, so the cap is
 * z = 0.2 - 0.2 (f(s) + f(t)) with f'' = 6 over x = 0.6 (3s - 1.5), y = 0.2 (3t - 1.5) before the
 * rotation: at the bottom point (s, t) = (0.5, 0.5), (0, 0, 0.1), the principal curvatures are
 * 1.2 / 1.8^2 = 1/2.7 along the length and 1.2 / 0.6^2 = 1/0.3 across, the length along
 * -0.174 rad from x (002 6.4: "longest in a direction 10 degrees off of the x axis and its width
 * is one third of the length"). The seed gives no curvature figures; these follow from its net. */
static void test_rattleback_cap(void **state) {
    (void)state;
    BezierPatch cap;
    bezier_patch_rattleback(&cap);
    SurfacePoint bottom = evaluate(&cap, 0.5, 0.5);
    assert_near(bottom.x[SURFACE_VALUE].x, 0.0, 1e-15);
    assert_near(bottom.x[SURFACE_VALUE].y, 0.0, 1e-15);
    assert_near(bottom.x[SURFACE_VALUE].z, 0.1, 1e-15);
    /* the normal points away from the centre of mass (the origin): convex toward the floor
     * once the contact frames turn the body's +z down */
    assert_near(bottom.normal[SURFACE_VALUE].z, 1.0, 1e-15);
    SurfaceCurvature c;
    surface_curvature(&bottom, &c);
    assert_near(c.principal[0], 1.0 / 2.7, 1e-12);
    assert_near(c.principal[1], 1.0 / 0.3, 1e-12);
    /* long axis 10 degrees (0.174 rad) off x, clockwise seen from +z */
    Vec3 long_axis = vec3(cos(-0.174), sin(-0.174), 0.0);
    assert_near(fabs(vec3_dot(c.direction[0], long_axis)), 1.0, 1e-12);
    assert_near(fabs(c.direction[1].z), 0.0, 1e-12);
    /* width one third of the length: the corner-to-corner extents along both axes */
    SurfacePoint ends[2] = {evaluate(&cap, 0.0, 0.5), evaluate(&cap, 1.0, 0.5)};
    SurfacePoint sides[2] = {evaluate(&cap, 0.5, 0.0), evaluate(&cap, 0.5, 1.0)};
    double length = vec3_norm(vec3_sub(ends[1].x[SURFACE_VALUE], ends[0].x[SURFACE_VALUE]));
    double width = vec3_norm(vec3_sub(sides[1].x[SURFACE_VALUE], sides[0].x[SURFACE_VALUE]));
    assert_near(width / length, 1.0 / 3.0, 1e-12);
    /* resting on the bottom point is stable both ways: the centre of mass (0.1 from the contact)
     * lies inside both centres of curvature (2.7 and 0.3) */
    assert_true(0.1 < 1.0 / c.principal[1] && 0.1 < 1.0 / c.principal[0]);
}

/* ===== Loop subdivision surfaces ===== */

enum { TORUS_AROUND = 8, TORUS_ACROSS = 6 };

/* A torus of TORUS_AROUND x TORUS_ACROSS vertices (major radius 2, minor 0.7, each vertex moved
 * by up to `jitter`), every quad split along the same diagonal: every vertex has valence 6, so
 * every face is a regular patch. Faces counter-clockwise seen from outside. */
static LoopMesh *torus_mesh(double jitter) {
    Vec3 vertices[TORUS_AROUND * TORUS_ACROSS];
    int faces[2 * TORUS_AROUND * TORUS_ACROSS][3];
    for (int i = 0; i < TORUS_AROUND; i++)
        for (int j = 0; j < TORUS_ACROSS; j++) {
            double theta = 2.0 * M_PI * i / TORUS_AROUND, phi = 2.0 * M_PI * j / TORUS_ACROSS;
            double ring = 2.0 + 0.7 * cos(phi);
            vertices[i * TORUS_ACROSS + j] = vec3(ring * cos(theta) + rng_uniform(-jitter, jitter),
                                                  ring * sin(theta) + rng_uniform(-jitter, jitter),
                                                  0.7 * sin(phi) + rng_uniform(-jitter, jitter));
        }
    for (int i = 0; i < TORUS_AROUND; i++)
        for (int j = 0; j < TORUS_ACROSS; j++) {
            int i1 = (i + 1) % TORUS_AROUND, j1 = (j + 1) % TORUS_ACROSS;
            int v00 = i * TORUS_ACROSS + j, v10 = i1 * TORUS_ACROSS + j;
            int v11 = i1 * TORUS_ACROSS + j1, v01 = i * TORUS_ACROSS + j1;
            int f = 2 * (i * TORUS_ACROSS + j);
            memcpy(faces[f], (int[3]){v00, v10, v11}, sizeof faces[f]);
            memcpy(faces[f + 1], (int[3]){v00, v11, v01}, sizeof faces[f + 1]);
        }
    IssimError err = {0};
    LoopMesh *mesh =
        loop_mesh_create("torus", vertices, TORUS_AROUND * TORUS_ACROSS, (const int(*)[3])faces,
                         2 * TORUS_AROUND * TORUS_ACROSS, &err);
    if (!mesh)
        fail_msg("%s", err.message);
    return mesh;
}

static SurfacePoint evaluate_loop(const LoopMesh *mesh, int face, double s, double t) {
    SurfacePoint p;
    IssimError err = {0};
    if (loop_mesh_evaluate(mesh, face, s, t, &p, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    return p;
}

static void test_loop_regular_derivatives_match_finite_differences(void **state) {
    (void)state;
    rng.s = 2000;
    LoopMesh *mesh = torus_mesh(0.1);
    assert_true(loop_mesh_is_closed(mesh));
    double worst[2] = {0.0, 0.0};
    for (int k = 0; k < RANDOM_NETS * POINTS_PER_NET / 4; k++) {
        int face = (int)rng_uniform(0.0, loop_mesh_face_count(mesh));
        double s = rng_uniform(0.0, 1.0), t = rng_uniform(0.0, 1.0 - s);
        fd_check_point(&(FdSurface){.mesh = mesh, .face = face}, s, t, worst);
    }
    printf("# loop finite differences: worst relative error %.2e (position), %.2e (normal)\n",
           worst[0], worst[1]);
    assert_true(worst[0] < FD_RELATIVE_TOLERANCE);
    assert_true(worst[1] < FD_RELATIVE_TOLERANCE);
    loop_mesh_destroy(mesh);
}

/* At a corner the patch passes through Loop's limit point of the vertex: for valence 6,
 * 1/2 of the vertex and 1/12 of each of its six neighbours (002 5.1; Loop's limit mask). */
static void test_loop_corner_is_the_limit_point(void **state) {
    (void)state;
    rng.s = 2001;
    LoopMesh *mesh = torus_mesh(0.2);
    IssimError err = {0};
    for (int face = 0; face < loop_mesh_face_count(mesh); face += 5) {
        int c[LOOP_PATCH_VERTICES];
        assert_int_equal(loop_mesh_patch(mesh, face, c, &err), ISSIM_OK);
        /* vertex 4 (index 3) and its ring 1, 2, 3, 5, 7, 8 */
        Vec3 limit = vec3_scale(loop_mesh_vertex(mesh, c[3]), 0.5);
        const int ring[6] = {0, 1, 2, 4, 6, 7};
        for (int k = 0; k < 6; k++)
            limit = vec3_add(limit, vec3_scale(loop_mesh_vertex(mesh, c[ring[k]]), 1.0 / 12.0));
        SurfacePoint p = evaluate_loop(mesh, face, 0.0, 0.0);
        assert_near(vec3_norm(vec3_sub(p.x[SURFACE_VALUE], limit)), 0.0, 1e-14);
    }
    loop_mesh_destroy(mesh);
}

/* (s, t) of the point at fraction `along` of edge k (corner k to corner k + 1) of a face. */
static void edge_parameter(int k, double along, double *s, double *t) {
    const double corner[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    const double *from = corner[k], *to = corner[(k + 1) % 3];
    *s = from[0] + along * (to[0] - from[0]);
    *t = from[1] + along * (to[1] - from[1]);
}

/* The box spline is C2: position, normal and both curvatures agree across every shared edge. */
static void test_loop_patches_join_with_continuous_curvature(void **state) {
    (void)state;
    rng.s = 2002;
    LoopMesh *mesh = torus_mesh(0.15);
    IssimError err = {0};
    int faces = loop_mesh_face_count(mesh);
    int edges_checked = 0;
    for (int f = 0; f < faces; f++) {
        int fv[LOOP_PATCH_VERTICES];
        assert_int_equal(loop_mesh_patch(mesh, f, fv, &err), ISSIM_OK);
        int corners_f[3] = {fv[3], fv[6], fv[7]};
        for (int g = 0; g < faces; g++) {
            int gv[LOOP_PATCH_VERTICES];
            assert_int_equal(loop_mesh_patch(mesh, g, gv, &err), ISSIM_OK);
            int corners_g[3] = {gv[3], gv[6], gv[7]};
            for (int k = 0; k < 3; k++)
                for (int m = 0; m < 3; m++) {
                    if (corners_f[k] != corners_g[(m + 1) % 3] ||
                        corners_f[(k + 1) % 3] != corners_g[m])
                        continue;
                    for (double along = 0.2; along < 0.9; along += 0.3) {
                        double sf, tf, sg, tg;
                        edge_parameter(k, along, &sf, &tf);
                        edge_parameter(m, 1.0 - along, &sg, &tg);
                        SurfacePoint a = evaluate_loop(mesh, f, sf, tf);
                        SurfacePoint b = evaluate_loop(mesh, g, sg, tg);
                        SurfaceCurvature ca, cb;
                        surface_curvature(&a, &ca);
                        surface_curvature(&b, &cb);
                        assert_near(vec3_norm(vec3_sub(a.x[SURFACE_VALUE], b.x[SURFACE_VALUE])),
                                    0.0, 1e-13);
                        assert_near(
                            vec3_norm(vec3_sub(a.normal[SURFACE_VALUE], b.normal[SURFACE_VALUE])),
                            0.0, 1e-12);
                        assert_near(ca.gaussian, cb.gaussian, 1e-10);
                        assert_near(ca.mean, cb.mean, 1e-10);
                    }
                    edges_checked++;
                }
        }
    }
    assert_int_equal(edges_checked, 3 * faces); /* every face's three edges: closed */
    loop_mesh_destroy(mesh);
}

/* Subdividing keeps the limit surface: at the same points (coarse face f at (s, t) is fine face
 * 4f at (2s, 2t)) position and normal agree and the tangents halve; the coarse corners and edge
 * midpoints are the fine corners. This checks Loop's rules against the box-spline basis. */
static void test_loop_subdivision_keeps_the_limit_surface(void **state) {
    (void)state;
    rng.s = 2003;
    LoopMesh *coarse = torus_mesh(0.15);
    IssimError err = {0};
    LoopMesh *fine = loop_mesh_subdivide(coarse, &err);
    if (!fine)
        fail_msg("%s", err.message);
    assert_int_equal(loop_mesh_face_count(fine), 4 * loop_mesh_face_count(coarse));
    for (int f = 0; f < loop_mesh_face_count(coarse); f++) {
        const double at[3][2] = {{0.0, 0.0}, {0.5, 0.0}, {0.2, 0.1}};
        for (int k = 0; k < 3; k++) {
            SurfacePoint a = evaluate_loop(coarse, f, at[k][0], at[k][1]);
            SurfacePoint b = evaluate_loop(fine, 4 * f, 2.0 * at[k][0], 2.0 * at[k][1]);
            assert_near(vec3_norm(vec3_sub(a.x[SURFACE_VALUE], b.x[SURFACE_VALUE])), 0.0, 1e-13);
            assert_near(vec3_norm(vec3_sub(a.normal[SURFACE_VALUE], b.normal[SURFACE_VALUE])), 0.0,
                        1e-12);
            assert_near(vec3_norm(vec3_sub(a.x[SURFACE_S], vec3_scale(b.x[SURFACE_S], 2.0))), 0.0,
                        1e-12);
        }
    }
    loop_mesh_destroy(fine);
    loop_mesh_destroy(coarse);
}

/* 002 App. B.2's bowl: read, closed, every vertex of valence 4 or 6; a face at a valence-4
 * vertex is refused with the mesh, the face and the vertex named. */
static void test_loop_bowl_of_the_seed(void **state) {
    (void)state;
    IssimError err = {0};
    LoopMesh *bowl = loop_mesh_load(test_source_path("assets/loop_bowl.obj"), &err);
    if (!bowl)
        fail_msg("%s", err.message);
    assert_int_equal(loop_mesh_face_count(bowl), 14);
    assert_int_equal(loop_mesh_vertex_count(bowl), 9);
    assert_true(loop_mesh_is_closed(bowl));
    assert_int_equal(loop_mesh_valence(bowl, 0), 6);
    assert_int_equal(loop_mesh_valence(bowl, 3), 4);
    SurfacePoint p;
    assert_int_equal(loop_mesh_evaluate(bowl, 1, 0.2, 0.2, &p, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "loop_bowl.obj"));
    assert_non_null(strstr(err.message, "face 2 (vertices 4 5 6): vertex 4 has valence 4"));

    /* subdivided, every face away from the six valence-4 vertices (4 faces each) is regular,
     * and a level-1 regular face agrees with its level-2 child: exact evaluation of the bowl */
    LoopMesh *once = loop_mesh_subdivide(bowl, &err);
    LoopMesh *twice = once ? loop_mesh_subdivide(once, &err) : NULL;
    if (!twice)
        fail_msg("%s", err.message);
    int regular[2] = {0, 0};
    const LoopMesh *levels[2] = {once, twice};
    for (int level = 0; level < 2; level++)
        for (int f = 0; f < loop_mesh_face_count(levels[level]); f++) {
            int c[LOOP_PATCH_VERTICES];
            regular[level] += loop_mesh_patch(levels[level], f, c, NULL) == ISSIM_OK;
        }
    assert_int_equal(regular[0], 56 - 24);
    assert_int_equal(regular[1], 224 - 24);
    for (int f = 0; f < loop_mesh_face_count(once); f++) {
        int c[LOOP_PATCH_VERTICES];
        if (loop_mesh_patch(once, f, c, NULL) != ISSIM_OK)
            continue;
        SurfacePoint a = evaluate_loop(once, f, 0.1, 0.3);
        SurfacePoint b = evaluate_loop(twice, 4 * f, 0.2, 0.6);
        assert_near(vec3_norm(vec3_sub(a.x[SURFACE_VALUE], b.x[SURFACE_VALUE])), 0.0, 1e-13);
    }
    assert_int_equal(loop_mesh_evaluate(twice, 0, 0.1, 0.1, &p, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "loop_bowl.obj, subdivided, subdivided': face 1"));
    loop_mesh_destroy(twice);
    loop_mesh_destroy(once);
    loop_mesh_destroy(bowl);
}

/* A mesh whose faces disagree in orientation is refused, naming the edge; a parameter that is
 * not finite or a face that does not exist is refused naming the face; a single triangle is not
 * closed. */
static void test_loop_mesh_not_a_manifold(void **state) {
    (void)state;
    const Vec3 square[4] = {vec3(0, 0, 0), vec3(1, 0, 0), vec3(1, 1, 0), vec3(0, 1, 0)};
    const int flipped[2][3] = {{0, 1, 2}, {0, 1, 3}}; /* edge 1-2 used twice as 1 -> 2 */
    IssimError err = {0};
    assert_null(loop_mesh_create("flipped", square, 4, flipped, 2, &err));
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "'flipped': edge 1-2 is used twice"));

    LoopMesh *torus = torus_mesh(0.0);
    SurfacePoint p;
    assert_int_equal(loop_mesh_evaluate(torus, 4, INFINITY, 0.1, &p, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "'torus face 5'"));
    assert_int_equal(loop_mesh_evaluate(torus, 96, 0.1, 0.1, &p, &err), ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "face 97 out of range (96 faces)"));
    loop_mesh_destroy(torus);

    const int open[1][3] = {{0, 1, 2}};
    LoopMesh *mesh = loop_mesh_create("open", square, 4, open, 1, &err);
    assert_non_null(mesh);
    assert_false(loop_mesh_is_closed(mesh));
    loop_mesh_destroy(mesh);
}

/* ===== Bad input ===== */

static void test_degenerate_normal_reported(void **state) {
    (void)state;
    BezierPatch patch;
    bezier_patch_rattleback_floor(&patch);
    snprintf(patch.name, sizeof patch.name, "collapsed edge");
    for (int j = 0; j < 4; j++)
        patch.control[0][j] = vec3(-1.5, 0.0, 0.0); /* the s = 0 edge is a point: x_t = 0 */
    SurfacePoint p;
    IssimError err = {0};
    assert_int_equal(bezier_patch_evaluate(&patch, 0.0, 0.25, &p, &err), ISSIM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "collapsed edge"));
    assert_non_null(strstr(err.message, "(s, t) = (0, 0.25)"));
    assert_near(vec3_norm(p.normal[SURFACE_VALUE]), 0.0, 0.0);
    /* the position derivatives are still there: x_s at the collapsed edge is not zero */
    assert_true(vec3_norm(p.x[SURFACE_S]) > 1.0);
    /* away from the edge the patch is regular */
    assert_int_equal(bezier_patch_evaluate(&patch, 0.5, 0.25, &p, &err), ISSIM_OK);

    issim_error_clear(&err);
    assert_int_equal(bezier_patch_evaluate(&patch, NAN, 0.25, &p, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "collapsed edge"));
    assert_non_null(strstr(err.message, "not finite"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_derivatives_match_finite_differences),
        cmocka_unit_test(test_jets_match_closed_form_derivatives),
        cmocka_unit_test(test_jet_rsqrt_identity),
        cmocka_unit_test(test_flat_patch),
        cmocka_unit_test(test_paraboloid_cap_curvature),
        cmocka_unit_test(test_rattleback_cap),
        cmocka_unit_test(test_degenerate_normal_reported),
        cmocka_unit_test(test_loop_regular_derivatives_match_finite_differences),
        cmocka_unit_test(test_loop_corner_is_the_limit_point),
        cmocka_unit_test(test_loop_patches_join_with_continuous_curvature),
        cmocka_unit_test(test_loop_subdivision_keeps_the_limit_surface),
        cmocka_unit_test(test_loop_bowl_of_the_seed),
        cmocka_unit_test(test_loop_mesh_not_a_manifold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
