/* Triangle meshes (src/collision/trimesh.c) and mesh contacts (mesh_collide.c): the tree query
 * against brute force, .obj loading and its errors, edge classes, and contacts of spheres,
 * boxes and capsules with a flat floor (no ghost contacts at internal edges), a tessellated grid
 * (distances against exact values) and a plate with a chamfered hole built here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/collision.h"
#include "testutil.h"

#include "../src/collision/collision_internal.h"

static Pose at(double x, double y, double z) {
    return (Pose){{x, y, z}, {1, 0, 0, 0}};
}

/* A flat n x n grid over [-half, half]^2 at z = 0, normal +z (2 n^2 triangles). */
static TriMesh *grid_mesh(int n, double half) {
    int nv = (n + 1) * (n + 1);
    Vec3 *v = malloc((size_t)nv * sizeof *v);
    int(*t)[3] = malloc((size_t)(2 * n * n) * sizeof *t);
    for (int j = 0; j <= n; j++)
        for (int i = 0; i <= n; i++)
            v[j * (n + 1) + i] = vec3(-half + 2 * half * i / n, -half + 2 * half * j / n, 0);
    int k = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            int a = j * (n + 1) + i, b = a + 1, c = a + n + 2, d = a + n + 1;
            t[k][0] = a, t[k][1] = b, t[k][2] = c, k++;
            t[k][0] = a, t[k][1] = c, t[k][2] = d, k++;
        }
    IssimError err;
    TriMesh *m = trimesh_create(v, nv, (const int(*)[3])t, k, &err);
    assert_non_null(m);
    free(v);
    free(t);
    return m;
}

/* Exact distance from a point to a triangle: the plane distance when the projection is inside,
 * else the nearest edge. */
static double point_segment_distance(Vec3 x, Vec3 a, Vec3 b) {
    Vec3 ab = vec3_sub(b, a);
    double t = vec3_dot(vec3_sub(x, a), ab) / vec3_dot(ab, ab);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return vec3_norm(vec3_sub(x, vec3_mad(a, t, ab)));
}

static double point_triangle_distance(Vec3 x, const Vec3 p[3]) {
    Vec3 n = vec3_normalize(vec3_cross(vec3_sub(p[1], p[0]), vec3_sub(p[2], p[0])));
    double h = vec3_dot(n, vec3_sub(x, p[0]));
    Vec3 q = vec3_mad(x, -h, n);
    bool inside = true;
    for (int k = 0; k < 3; k++)
        if (vec3_dot(vec3_cross(vec3_sub(p[(k + 1) % 3], p[k]), vec3_sub(q, p[k])), n) < 0)
            inside = false;
    if (inside)
        return fabs(h);
    return fmin(point_segment_distance(x, p[0], p[1]),
                fmin(point_segment_distance(x, p[1], p[2]), point_segment_distance(x, p[2], p[0])));
}

static double point_mesh_distance(const TriMesh *m, Vec3 x) {
    double best = INFINITY;
    for (int t = 0; t < trimesh_triangle_count(m); t++) {
        Vec3 p[3];
        trimesh_triangle(m, t, p);
        best = fmin(best, point_triangle_distance(x, p));
    }
    return best;
}

static void check_consistent(const Manifold *m) {
    assert_near(vec3_norm(m->normal), 1.0, 1e-12);
    for (int i = 0; i < m->count; i++) {
        const ContactPoint *c = &m->points[i];
        Vec3 n = manifold_point_normal(m, i); /* each face's points along its own normal */
        assert_near(vec3_norm(n), 1.0, 1e-12);
        assert_near(vec3_dot(vec3_sub(c->point_a, c->point_b), n), c->distance, 1e-9);
        for (int j = 0; j < i; j++) {
            assert_true(vec3_norm(vec3_sub(c->point_b, m->points[j].point_b)) > 1e-9);
            assert_true(c->feature != m->points[j].feature);
        }
    }
}

/* ===== Tree and loading ===== */

static void test_query_brute_force(void **state) {
    TestRng r = {2024};
    int nt = 600, nv = 3 * nt;
    Vec3 *v = malloc((size_t)nv * sizeof *v);
    int(*t)[3] = malloc((size_t)nt * sizeof *t);
    for (int i = 0; i < nt; i++) { /* a soup of triangles of mixed sizes */
        Vec3 c =
            vec3(test_rng_range(&r, -5, 5), test_rng_range(&r, -5, 5), test_rng_range(&r, -1, 1));
        double s = i % 10 == 0 ? 2.0 : 0.2;
        for (int k = 0; k < 3; k++) {
            v[3 * i + k] = vec3_add(c, vec3(test_rng_range(&r, -s, s), test_rng_range(&r, -s, s),
                                            test_rng_range(&r, -s, s)));
            t[i][k] = 3 * i + k;
        }
    }
    IssimError err;
    TriMesh *m = trimesh_create(v, nv, (const int(*)[3])t, nt, &err);
    assert_non_null(m);
    assert_int_equal(trimesh_triangle_count(m), nt);
    Aabb b = trimesh_bounds(m);
    assert_true(b.min.x <= -5 && b.max.x >= 5);
    int out[600];
    long matched = 0;
    for (int q = 0; q < 500; q++) {
        Vec3 c = vec3(test_rng_range(&r, -6, 6), test_rng_range(&r, -6, 6),
                      test_rng_range(&r, -1.5, 1.5));
        Vec3 h = vec3(test_rng_range(&r, 0, 2), test_rng_range(&r, 0, 2), test_rng_range(&r, 0, 1));
        Aabb box = {vec3_sub(c, h), vec3_add(c, h)};
        int n = trimesh_query(m, box, out, nt);
        int expect = 0;
        for (int i = 0; i < nt; i++) {
            Vec3 p[3];
            trimesh_triangle(m, i, p);
            bool overlap = true;
            for (int a = 0; a < 3; a++) {
                double lo = INFINITY, hi = -INFINITY;
                for (int k = 0; k < 3; k++) {
                    double x = a == 0 ? p[k].x : a == 1 ? p[k].y : p[k].z;
                    lo = fmin(lo, x);
                    hi = fmax(hi, x);
                }
                double bl = a == 0 ? box.min.x : a == 1 ? box.min.y : box.min.z;
                double bh = a == 0 ? box.max.x : a == 1 ? box.max.y : box.max.z;
                overlap = overlap && lo <= bh && bl <= hi;
            }
            if (overlap) {
                expect++;
                int found = 0;
                for (int j = 0; j < n; j++)
                    found += out[j] == i;
                assert_int_equal(found, 1);
            }
        }
        assert_int_equal(n, expect);
        matched += n;
        /* A short buffer gets the total and no overflow. */
        int small[3] = {-7, -7, -7};
        assert_int_equal(trimesh_query(m, box, small, 2), expect);
        assert_int_equal(small[2], -7);
    }
    print_message("query: 500 random boxes over 600 triangles, %ld hits, all equal to brute "
                  "force\n",
                  matched);
    assert_true(matched > 1000);
    trimesh_destroy(m);
    free(v);
    free(t);
    /* Bad input. */
    Vec3 tri[3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    int bad[1][3] = {{0, 1, 3}};
    assert_null(trimesh_create(tri, 3, (const int(*)[3])bad, 1, &err));
    assert_int_equal(err.status, ISSIM_ERR_RANGE);
    int neg[1][3] = {{0, -1, 2}};
    assert_null(trimesh_create(tri, 3, (const int(*)[3])neg, 1, &err));
}

static void test_obj_loading(void **state) {
    const char *path = test_temp_path(".obj");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# a quad, a triangle with texture/normal indices, relative indices\n"
               "o thing\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\n"
               "f 1 2 3 4\n"
               "f 1/1/1 2/1/1 3/1/1\n"
               "f 1//1 3//1 4//1\n"
               "v 0 0 1\n"
               "f -1 -5 -4\n");
    fclose(f);
    IssimError err;
    TriMesh *m = trimesh_load_obj(path, &err);
    assert_non_null(m);
    assert_int_equal(trimesh_triangle_count(m), 5);
    Vec3 p[3];
    trimesh_triangle(m, 1, p); /* the quad's second fan triangle: 1 3 4 */
    assert_near(p[1].x, 1, 0);
    assert_near(p[1].y, 1, 0);
    assert_near(p[2].x, 0, 0);
    trimesh_triangle(m, 4, p); /* -1 -5 -4 = vertices 5 1 2 */
    assert_near(p[0].z, 1, 0);
    assert_near(p[1].x, 0, 0);
    assert_near(p[2].x, 1, 0);
    trimesh_destroy(m);

    struct {
        const char *text;
        int line;
    } bad[] = {
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", 4},     /* out of range */
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 0\n", 5},   /* zero */
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n", 4},     /* not a number */
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", 4},       /* two corners */
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n", 4},  /* relative before the first */
        {"v 0 0 0\nv 1 0 zero\nv 0 1 0\nf 1 2 3\n", 2},  /* malformed vertex */
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/2/x 2 3\n", 4}, /* malformed corner */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(path, "w");
        fputs(bad[i].text, f);
        fclose(f);
        assert_null(trimesh_load_obj(path, &err));
        char expect[300];
        snprintf(expect, sizeof expect, "%s:%d:", path, bad[i].line);
        if (!strstr(err.message, expect))
            fail_msg("case %zu: \"%s\" does not name %s", i, err.message, expect);
    }
    f = fopen(path, "w");
    fputs("v 0 0 0\nv 1 0 0\n", f);
    fclose(f);
    assert_null(trimesh_load_obj(path, &err)); /* no faces */
    assert_non_null(strstr(err.message, path));
    remove(path);
    assert_null(trimesh_load_obj("/nonexistent/issim/mesh.obj", &err));
    assert_int_equal(err.status, ISSIM_ERR_IO);
    assert_non_null(strstr(err.message, "/nonexistent/issim/mesh.obj"));
}

/* ===== Floors ===== */

/* Feature ids name the triangle in 30 bits: on a 20,000-triangle floor a sphere over triangle
 * 4 and one over triangle 16,388 (= 4 + 2^14, which a 14-bit index would alias) get their own
 * triangles in their ids. */
static void test_large_mesh_feature_ids(void **state) {
    int n = 100; /* 100 x 100 cells of 0.02 m, two triangles each */
    TriMesh *mesh = grid_mesh(n, 1.0);
    assert_int_equal(trimesh_triangle_count(mesh), 2 * n * n);
    Shape ms = shape_mesh(mesh);
    Shape s = shape_sphere(0.005);
    int triangles[2] = {4, 4 + (1 << 14)};
    for (int k = 0; k < 2; k++) {
        int cell = triangles[k] / 2, i = cell % n, j = cell / n;
        /* Triangle 2 cell is (a, b, c), even: below the cell's diagonal, x - x0 > y - y0. */
        double x0 = -1.0 + 0.02 * i, y0 = -1.0 + 0.02 * j;
        Manifold m;
        assert_int_equal(collide_mesh(&ms, pose_identity(), &s,
                                      at(x0 + 0.014, y0 + 0.006, 0.005 - 1e-5), 1e-3, &m),
                         1);
        uint32_t mesh_half = (uint32_t)(m.points[0].feature >> 32);
        assert_int_equal(mesh_half >> 30, 2); /* a face */
        assert_int_equal(mesh_half & 0x3FFFFFFFu, triangles[k]);
    }
    trimesh_destroy(mesh);
}

static void test_sphere_on_square(void **state) {
    TriMesh *mesh = grid_mesh(1, 1.0); /* two triangles, diagonal (-1,-1)-(1,1) */
    Shape ms = shape_mesh(mesh);
    /* Triangle 0 is (-1,-1) (1,-1) (1,1): edges 0 and 1 are borders, edge 2 the diagonal. */
    assert_int_equal(trimesh_edge_class(trimesh_edge_flags(mesh, 0), 2), TRIMESH_EDGE_FLAT);
    assert_int_equal(trimesh_edge_class(trimesh_edge_flags(mesh, 0), 0), 0);
    assert_int_equal(trimesh_edge_class(trimesh_edge_flags(mesh, 0), 1), 0);
    Shape s = shape_sphere(0.1);
    Manifold m;
    double xs[] = {0.3, 0.0, -0.5, 0.95};
    double ys[] = {-0.2, 0.0, -0.5, 0.1};
    for (int k = 0; k < 4; k++) { /* interior, on the diagonal's middle, on it, near a border */
        Pose p = at(xs[k], ys[k], 0.1 - 1e-4);
        assert_int_equal(collide_mesh(&ms, pose_identity(), &s, p, 1e-3, &m), 1);
        assert_near(m.normal.z, -1.0, 1e-12); /* from the sphere to the mesh */
        assert_near(m.points[0].distance, -1e-4, 1e-12);
        assert_near(m.points[0].point_a.z, 0.0, 1e-12);
        assert_near(m.points[0].point_a.x, xs[k], 1e-12);
        assert_near(m.points[0].point_b.z, -1e-4, 1e-12);
        check_consistent(&m);
    }
    /* Above the margin: nothing; with an infinite margin: the distance. */
    assert_int_equal(collide_mesh(&ms, pose_identity(), &s, at(0.2, 0.2, 0.3), 1e-3, &m), 0);
    assert_int_equal(collide_mesh(&ms, pose_identity(), &s, at(0.2, 0.2, 0.3), INFINITY, &m), 1);
    assert_near(m.points[0].distance, 0.2, 1e-12);
    /* Beyond the border edge (sharp): the contact is on the edge, normal towards the centre. */
    Pose out = at(1.0 + 0.06, 0.3, 0.06);
    assert_int_equal(collide_mesh(&ms, pose_identity(), &s, out, 1e-3, &m), 1);
    assert_near(m.points[0].distance, 0.06 * sqrt(2.0) - 0.1, 1e-12);
    assert_near(m.normal.x, -sqrt(0.5), 1e-9);
    assert_near(m.normal.z, -sqrt(0.5), 1e-9);
    /* Centre below the plane (behind the one-sided floor): ignored. */
    assert_int_equal(collide_mesh(&ms, pose_identity(), &s, at(0.2, 0.2, -0.05), 1e-3, &m), 0);
    /* The mesh's own pose is applied: the floor turned upside down and lifted. */
    Pose flipped = {{0, 0, 2}, quat_from_axis_angle(vec3(1, 0, 0), M_PI)};
    assert_int_equal(collide_mesh(&ms, flipped, &s, at(0.1, 0.1, 2 - 0.1 + 1e-4), 1e-3, &m), 1);
    assert_near(m.normal.z, 1.0, 1e-12);
    assert_near(m.points[0].distance, -1e-4, 1e-12);
    trimesh_destroy(mesh);
}

static void test_box_on_square_no_ghosts(void **state) {
    TriMesh *mesh = grid_mesh(1, 1.0);
    Shape ms = shape_mesh(mesh);
    Vec3 h = {0.2, 0.15, 0.1};
    Shape box = shape_box(h);
    Manifold m;
    int poses = 0;
    /* Slide across the diagonal, turned about z: always the four bottom corners, vertical. */
    for (int k = 0; k <= 40; k++) {
        double x = -0.7 + 1.4 * k / 40.0, y = 0.5 - x;
        for (int a = 0; a < 3; a++) {
            double gap = a == 0 ? -1e-4 : a == 1 ? 0.0 : 5e-4;
            Pose p = {{x, y * 0.3, h.z + gap},
                      quat_from_axis_angle(vec3(0, 0, 1), 0.7 * a + 0.1 * k)};
            int n = collide_mesh(&ms, pose_identity(), &box, p, 1e-3, &m);
            assert_int_equal(n, 4);
            assert_near(m.normal.z, -1.0, 1e-12);
            check_consistent(&m);
            for (int i = 0; i < 4; i++) {
                Vec3 l = pose_apply_inv(p, m.points[i].point_b);
                assert_near(fabs(l.x), h.x, 1e-9); /* a corner, never a diagonal point */
                assert_near(fabs(l.y), h.y, 1e-9);
                assert_near(l.z, -h.z, 1e-9);
                assert_near(m.points[i].distance, gap, 1e-12);
                assert_near(m.points[i].point_a.z, 0.0, 1e-12);
            }
            poses++;
        }
    }
    /* Tilted slightly about x: the two low corners in contact, the high ones in the margin. */
    Pose tilt = {{0.1, 0.1, h.z * cos(1e-3) + h.y * sin(1e-3) - 1e-4},
                 quat_from_axis_angle(vec3(1, 0, 0), 1e-3)};
    assert_int_equal(collide_mesh(&ms, pose_identity(), &box, tilt, 1e-3, &m), 4);
    double dmin = INFINITY, dmax = -INFINITY;
    for (int i = 0; i < 4; i++) {
        dmin = fmin(dmin, m.points[i].distance);
        dmax = fmax(dmax, m.points[i].distance);
    }
    assert_near(dmin, -1e-4, 1e-12);
    assert_near(dmax, -1e-4 + 2 * h.y * sin(1e-3), 1e-9);
    /* Half over the border (a sharp edge): two corners inside, two points on the border. */
    Pose over = {{1.0, 0.2, h.z - 1e-4}, quat_identity()};
    assert_int_equal(collide_mesh(&ms, pose_identity(), &box, over, 1e-3, &m), 4);
    assert_near(m.normal.z, -1.0, 1e-12);
    int on_border = 0;
    for (int i = 0; i < 4; i++) {
        assert_near(m.points[i].distance, -1e-4, 1e-12);
        assert_true(m.points[i].point_a.x <= 1.0 + 1e-12);
        on_border += fabs(m.points[i].point_a.x - 1.0) <= 1e-12;
    }
    assert_int_equal(on_border, 2);
    print_message("box on two triangles: %d poses across the diagonal, 4 corner contacts each\n",
                  poses);
    trimesh_destroy(mesh);
}

/* A finer floor: boxes and capsules anywhere over it have a vertical normal and the exact
 * depth of their lowest point; spheres the exact distance. */
static void test_grid_floor_random(void **state) {
    TriMesh *mesh = grid_mesh(8, 2.0);
    Shape ms = shape_mesh(mesh);
    TestRng r = {81};
    Manifold m;
    int contacts = 0, poses = 1500, multi = 0;
    double worst = 0;
    for (int i = 0; i < poses; i++) {
        Quat q = test_rng_rotation(&r);
        Vec3 c = vec3(test_rng_range(&r, -1.5, 1.5), test_rng_range(&r, -1.5, 1.5), 0);
        Shape s;
        double low; /* lowest point's height relative to c.z */
        if (i % 3 == 0) {
            Vec3 h = vec3(test_rng_range(&r, 0.05, 0.3), test_rng_range(&r, 0.05, 0.3),
                          test_rng_range(&r, 0.05, 0.3));
            s = shape_box(h);
            Vec3 down = quat_rotate_inv(q, vec3(0, 0, -1));
            low = -(fabs(down.x) * h.x + fabs(down.y) * h.y + fabs(down.z) * h.z);
        } else if (i % 3 == 1) {
            double rad = test_rng_range(&r, 0.02, 0.2), half = test_rng_range(&r, 0.01, 0.4);
            s = shape_capsule(rad, half);
            low = -rad - fabs(quat_rotate(q, vec3(0, 0, half)).z);
        } else {
            s = shape_sphere(test_rng_range(&r, 0.02, 0.3));
            low = -s.radius;
        }
        double gap = test_rng_range(&r, -0.01, 0.004);
        c.z = gap - low;
        Pose p = {c, q};
        int n = collide_mesh(&ms, pose_identity(), &s, p, 2e-3, &m);
        if (gap < 2e-3 - 1e-9)
            assert_true(n >= 1);
        if (gap > 2e-3 + 1e-9)
            assert_int_equal(n, 0);
        if (n == 0)
            continue;
        contacts++;
        multi += n > 1;
        check_consistent(&m);
        assert_near(m.normal.z, -1.0, 1e-12); /* never a ghost normal */
        double dmin = INFINITY;
        for (int k = 0; k < n; k++) {
            dmin = fmin(dmin, m.points[k].distance);
            assert_near(m.points[k].point_a.z, 0.0, 1e-12);
        }
        worst = fmax(worst, fabs(dmin - gap));
        assert_near(dmin, gap, 1e-9);
    }
    print_message("grid floor: %d poses, %d with contacts (%d with several), max depth error "
                  "%.2e, every normal vertical\n",
                  poses, contacts, multi, worst);
    assert_true(contacts > poses / 2);
    trimesh_destroy(mesh);
}

/* ===== Plate with a chamfered hole ===== */

/* Square plate [-half, half]^2, top at z = 0, thickness th, round hole of radius rh whose top
 * edge is chamfered at 45 degrees to rc, seg segments (as tools/make_assets.py). */
static TriMesh *chamfered_plate(double half, double th, double rh, double rc, int seg) {
    Vec3 *v = malloc((size_t)(5 * seg) * sizeof *v);
    int(*t)[3] = malloc((size_t)(10 * seg) * sizeof *t);
    int rim = 0, cb = seg, hb = 2 * seg, ts = 3 * seg, bs = 4 * seg;
    for (int i = 0; i < seg; i++) {
        double a = 2 * M_PI * i / seg, c = cos(a), s = sin(a);
        double sq = half / fmax(fabs(c), fabs(s));
        v[rim + i] = vec3(rc * c, rc * s, 0);
        v[cb + i] = vec3(rh * c, rh * s, -(rc - rh));
        v[hb + i] = vec3(rh * c, rh * s, -th);
        v[ts + i] = vec3(sq * c, sq * s, 0);
        v[bs + i] = vec3(sq * c, sq * s, -th);
    }
    int k = 0;
#define QUAD(a, b, c, d)                                                                           \
    do {                                                                                           \
        t[k][0] = a, t[k][1] = b, t[k][2] = c, k++;                                                \
        t[k][0] = a, t[k][1] = c, t[k][2] = d, k++;                                                \
    } while (0)
    for (int i = 0; i < seg; i++) {
        int j = (i + 1) % seg;
        QUAD(rim + i, ts + i, ts + j, rim + j); /* top */
        QUAD(cb + i, rim + i, rim + j, cb + j); /* chamfer */
        QUAD(hb + i, cb + i, cb + j, hb + j);   /* hole wall */
        QUAD(bs + i, hb + i, hb + j, bs + j);   /* bottom */
        QUAD(ts + i, bs + i, bs + j, ts + j);   /* outer wall */
    }
#undef QUAD
    IssimError err;
    TriMesh *m = trimesh_create(v, 5 * seg, (const int(*)[3])t, k, &err);
    assert_non_null(m);
    free(v);
    free(t);
    return m;
}

static void test_capsule_in_chamfered_hole(void **state) {
    int seg = 32;
    double rh = 0.011, rc = 0.016, chamfer = rc - rh;
    TriMesh *mesh = chamfered_plate(0.1, 0.02, rh, rc, seg);
    Shape ms = shape_mesh(mesh);
    /* Edge classes: top ring flat inside each quad, chamfer facets meet in concave edges
     * (valleys seen from the hole), the rim where top meets chamfer is convex. */
    int flat = 0, concave = 0, sharp = 0;
    for (int i = 0; i < trimesh_triangle_count(mesh); i++)
        for (int j = 0; j < 3; j++) {
            unsigned c = trimesh_edge_class(trimesh_edge_flags(mesh, i), j);
            flat += c == TRIMESH_EDGE_FLAT;
            concave += c == TRIMESH_EDGE_CONCAVE;
            sharp += c == 0;
        }
    /* Flat, counted from both sides: the 5 seg quads' diagonals, the seg edges between top
     * quads and between bottom quads, and the outer wall's edges except the square's corners. */
    assert_int_equal(flat, 2 * (5 * seg + seg + seg + (seg - 4)));
    assert_true(concave >= 2 * 2 * seg); /* chamfer-chamfer and wall-wall valleys */
    assert_true(sharp > 0);
    /* The chamfer facet i = 3 between angles 3 and 4 segments: its plane from its corners. */
    int i = 3;
    double a0 = 2 * M_PI * i / seg, a1 = 2 * M_PI * (i + 1) / seg;
    Vec3 p0 = vec3(rh * cos(a0), rh * sin(a0), -chamfer), p1 = vec3(rc * cos(a0), rc * sin(a0), 0);
    Vec3 p2 = vec3(rc * cos(a1), rc * sin(a1), 0), p3 = vec3(rh * cos(a1), rh * sin(a1), -chamfer);
    Vec3 nf = vec3_normalize(vec3_cross(vec3_sub(p1, p0), vec3_sub(p2, p0))); /* out of solid */
    assert_true(nf.z > 0.5);
    Vec3 mid = vec3_scale(vec3_add(vec3_add(p0, p1), vec3_add(p2, p3)), 0.25);
    /* A bolt (capsule, radius 8 mm) standing in the hole, its lower end 0.1 mm into the facet's
     * middle. */
    double r = 0.008, half = 0.03, depth = 1e-4;
    Shape bolt = shape_capsule(r, half);
    Vec3 end = vec3_mad(mid, r - depth, nf);
    Pose pose = {vec3_add(end, vec3(0, 0, half)), quat_identity()};
    /* The exact depth: the end sphere's distance to the mesh. */
    assert_near(point_mesh_distance(mesh, end), r - depth, 1e-12);
    Manifold m;
    int n = collide_mesh(&ms, pose_identity(), &bolt, pose, 1e-3, &m);
    assert_true(n >= 1 && n <= 4);
    check_consistent(&m);
    assert_near(vec3_dot(m.normal, nf), -1.0, 1e-9); /* from the bolt into the facet */
    double dmin = INFINITY;
    for (int k = 0; k < n; k++) {
        const ContactPoint *c = &m.points[k];
        dmin = fmin(dmin, c->distance);
        /* On the mesh and on the capsule. */
        assert_true(point_mesh_distance(mesh, c->point_a) <= 1e-9);
        Vec3 lp = pose_apply_inv(pose, c->point_b);
        double zc = fmin(fmax(lp.z, -half), half);
        assert_near(vec3_norm(vec3_sub(lp, vec3(0, 0, zc))), r, 1e-9);
    }
    assert_near(dmin, -depth, 1e-9);
    int bolt_count = n;
    double bolt_dot = -vec3_dot(m.normal, nf);
    /* A thin pin (radius 1 mm) lying along the facet, across its diagonal: two points, its
     * two ends, from the facet's two triangles (nothing on the diagonal). The margin is below
     * the neighbouring facets' clearance. */
    Vec3 along = vec3_normalize(vec3_sub(p2, p1));
    double pin_r = 0.001, pin_half = 0.2 * vec3_norm(vec3_sub(p2, p1));
    Shape pin = shape_capsule(pin_r, pin_half);
    Quat q = quat_from_axis_angle(vec3_cross(vec3(0, 0, 1), along),
                                  acos(fmin(1.0, vec3_dot(vec3(0, 0, 1), along))));
    Pose lying = {vec3_mad(mid, pin_r - depth, nf), q};
    n = collide_mesh(&ms, pose_identity(), &pin, lying, 5e-5, &m);
    print_message("bolt in chamfered hole: %d contacts, normal . facet = %.15f; "
                  "pin along the facet: %d contacts at depths %.6e %.6e\n",
                  bolt_count, bolt_dot, n, n > 0 ? m.points[0].distance : 0.0,
                  n > 1 ? m.points[1].distance : 0.0);
    assert_int_equal(n, 2);
    check_consistent(&m);
    assert_near(vec3_dot(m.normal, nf), -1.0, 1e-9);
    for (int k = 0; k < 2; k++)
        assert_near(m.points[k].distance, -depth, 1e-9);
    assert_near(vec3_norm(vec3_sub(m.points[0].point_b, m.points[1].point_b)), 2 * pin_half, 1e-9);
    /* Centred high in the hole, clear of everything: nothing. */
    assert_int_equal(collide_mesh(&ms, pose_identity(), &bolt, at(0, 0, 0.0), 1e-3, &m), 0);
    /* Against the hole's wall (concave): the wall's normal, horizontal. */
    Pose wall = at(rh - r + 1e-4, 0, -0.012 - half + 0.0);
    wall.p.z = -0.012; /* the segment from -0.042 to 0.018: crosses the wall's height */
    n = collide_mesh(&ms, pose_identity(), &bolt, wall, 1e-3, &m);
    assert_true(n >= 1);
    check_consistent(&m);
    dmin = INFINITY;
    for (int k = 0; k < n; k++)
        dmin = fmin(dmin, m.points[k].distance);
    /* Deepest against the two wall facets either side of angle 0 (apothems at +-pi/seg). */
    double apothem = rh * cos(M_PI / seg);
    assert_near(dmin, apothem - wall.p.x * cos(M_PI / seg) - r, 1e-12);
    assert_true(m.normal.x > 0.99 && fabs(m.normal.z) < 1e-9);
    trimesh_destroy(mesh);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_brute_force),         cmocka_unit_test(test_obj_loading),
        cmocka_unit_test(test_large_mesh_feature_ids),    cmocka_unit_test(test_sphere_on_square),
        cmocka_unit_test(test_box_on_square_no_ghosts),   cmocka_unit_test(test_grid_floor_random),
        cmocka_unit_test(test_capsule_in_chamfered_hole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
