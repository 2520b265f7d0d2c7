/* Tests for issim/math.h: identities on seeded random samples, hand-computed cases, and the
 * LAPACKE wrappers. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "issim/math.h"

enum { SAMPLES = 1000 };

/* ===== Seeded random numbers (splitmix64) ===== */

static uint64_t rng_state;

static void rng_seed(uint64_t seed) {
    rng_state = seed;
}

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static double rng_uniform(double lo, double hi) {
    return lo + (hi - lo) * (double)(rng_next() >> 11) * 0x1.0p-53;
}

static Vec3 rng_vec3(double scale) {
    return vec3(rng_uniform(-scale, scale), rng_uniform(-scale, scale), rng_uniform(-scale, scale));
}

static Vec3 rng_unit_vec3(void) {
    for (;;) {
        Vec3 v = rng_vec3(1.0);
        double n = vec3_norm(v);
        if (n > 0.1 && n <= 1.0)
            return vec3_scale(v, 1.0 / n);
    }
}

static Quat rng_unit_quat(void) {
    for (;;) {
        Quat q = {rng_uniform(-1, 1), rng_uniform(-1, 1), rng_uniform(-1, 1), rng_uniform(-1, 1)};
        double n = quat_norm(q);
        if (n > 0.1 && n <= 1.0)
            return quat_normalize(q);
    }
}

/* ===== Comparison helpers ===== */

static double vec3_dist(Vec3 a, Vec3 b) {
    return vec3_norm(vec3_sub(a, b));
}

static double quat_dist(Quat a, Quat b) {
    return quat_norm((Quat){a.w - b.w, a.x - b.x, a.y - b.y, a.z - b.z});
}

static double mat3_dist(Mat3 a, Mat3 b) {
    double worst = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            worst = fmax(worst, fabs(a.m[i][j] - b.m[i][j]));
    return worst;
}

#define assert_vec3_near(a, b, tol)                                                                \
    do {                                                                                           \
        Vec3 va_ = (a), vb_ = (b);                                                                 \
        if (!(vec3_dist(va_, vb_) <= (tol)))                                                       \
            fail_msg("%s = (%.17g, %.17g, %.17g), expected (%.17g, %.17g, %.17g)", #a, va_.x,      \
                     va_.y, va_.z, vb_.x, vb_.y, vb_.z);                                           \
    } while (0)

/* ===== Quaternions ===== */

static void test_rotate_inverse(void **state) {
    (void)state;
    rng_seed(1);
    for (int i = 0; i < SAMPLES; i++) {
        Quat q = rng_unit_quat();
        Vec3 v = rng_vec3(10.0);
        assert_vec3_near(quat_rotate_inv(q, quat_rotate(q, v)), v, 1e-13 * 10.0);
        assert_vec3_near(quat_rotate(q, quat_rotate_inv(q, v)), v, 1e-13 * 10.0);
        assert_near(vec3_norm(quat_rotate(q, v)), vec3_norm(v), 1e-13 * 10.0);
    }
}

static void test_rotate_matches_sandwich_product(void **state) {
    (void)state;
    rng_seed(2);
    for (int i = 0; i < SAMPLES; i++) {
        Quat q = rng_unit_quat();
        Vec3 v = rng_vec3(1.0);
        Quat p = quat_mul(quat_mul(q, (Quat){0, v.x, v.y, v.z}), quat_conj(q));
        assert_near(p.w, 0.0, 1e-15);
        assert_vec3_near(quat_rotate(q, v), vec3(p.x, p.y, p.z), 1e-14);
    }
}

static void test_quat_to_mat3(void **state) {
    (void)state;
    rng_seed(3);
    for (int i = 0; i < SAMPLES; i++) {
        Quat q = rng_unit_quat();
        Mat3 r = quat_to_mat3(q);
        assert_true(mat3_dist(mat3_mul(r, mat3_transpose(r)), mat3_identity()) < 1e-14);
        assert_near(mat3_det(r), 1.0, 1e-14);
        Vec3 v = rng_vec3(1.0);
        assert_vec3_near(mat3_mul_vec(r, v), quat_rotate(q, v), 1e-14);
        /* q and -q are the same rotation. */
        Mat3 rn = quat_to_mat3((Quat){-q.w, -q.x, -q.y, -q.z});
        assert_true(mat3_dist(r, rn) < 1e-15);
    }
}

static void test_quat_mul_associative(void **state) {
    (void)state;
    rng_seed(4);
    for (int i = 0; i < SAMPLES; i++) {
        Quat a = rng_unit_quat(), b = rng_unit_quat(), c = rng_unit_quat();
        Quat left = quat_mul(quat_mul(a, b), c);
        Quat right = quat_mul(a, quat_mul(b, c));
        assert_true(quat_dist(left, right) < 1e-14);
        /* Composition: rotating by a b is rotating by b, then by a. */
        Vec3 v = rng_vec3(1.0);
        assert_vec3_near(quat_rotate(quat_mul(a, b), v), quat_rotate(a, quat_rotate(b, v)), 1e-14);
        assert_true(quat_dist(quat_mul(a, quat_identity()), a) == 0.0);
        assert_true(quat_dist(quat_mul(a, quat_conj(a)), quat_identity()) < 1e-15);
    }
}

static void test_axis_angle(void **state) {
    (void)state;
    /* Right-handed: +90 degrees about z takes x to y. */
    Quat qz = quat_from_axis_angle(vec3(0, 0, 2), M_PI / 2);
    assert_vec3_near(quat_rotate(qz, vec3(1, 0, 0)), vec3(0, 1, 0), 1e-15);
    assert_vec3_near(quat_rotate(qz, vec3(0, 0, 1)), vec3(0, 0, 1), 1e-15);
    /* Degenerate axis: identity. */
    assert_true(quat_dist(quat_from_axis_angle(vec3(0, 0, 0), 1.0), quat_identity()) == 0.0);

    rng_seed(5);
    for (int i = 0; i < SAMPLES; i++) {
        Vec3 axis = rng_unit_vec3();
        double a = rng_uniform(-M_PI, M_PI), b = rng_uniform(-M_PI, M_PI);
        Quat qa = quat_from_axis_angle(axis, a), qb = quat_from_axis_angle(axis, b);
        Quat qab = quat_from_axis_angle(axis, a + b);
        assert_true(quat_dist(quat_mul(qa, qb), qab) < 1e-14);
        assert_near(quat_norm(qa), 1.0, 1e-15);
        /* The axis is fixed; a perpendicular vector turns by the angle. */
        assert_vec3_near(quat_rotate(qa, axis), axis, 1e-14);
        Vec3 t1, t2;
        vec3_tangent_basis(axis, &t1, &t2);
        Vec3 expected = vec3_add(vec3_scale(t1, cos(a)), vec3_scale(t2, sin(a)));
        assert_vec3_near(quat_rotate(qa, t1), expected, 1e-14);
    }
}

static void test_quat_normalize(void **state) {
    (void)state;
    Quat q = quat_normalize((Quat){2, 0, 0, 0});
    assert_true(quat_dist(q, quat_identity()) == 0.0);
    q = quat_normalize((Quat){0, 0, 0, 0});
    assert_true(quat_dist(q, quat_identity()) == 0.0);
    q = quat_normalize((Quat){1, 2, 3, 4});
    assert_near(quat_norm(q), 1.0, 1e-15);
    assert_near(q.y / q.x, 1.5, 1e-15);
}

/* q(t) = exp(t w) q0 for constant world angular velocity w; dq/dt at t must match
 * quat_derivative(q(t), w). Central differences: error O(h^2). */
static void test_quat_derivative(void **state) {
    (void)state;
    rng_seed(6);
    const double h = 1e-5;
    for (int i = 0; i < SAMPLES; i++) {
        Quat q0 = rng_unit_quat();
        Vec3 w = rng_vec3(5.0);
        double t = rng_uniform(0.0, 1.0);
        double speed = vec3_norm(w);
        Quat qp = quat_mul(quat_from_axis_angle(w, speed * (t + h)), q0);
        Quat qm = quat_mul(quat_from_axis_angle(w, speed * (t - h)), q0);
        Quat qt = quat_mul(quat_from_axis_angle(w, speed * t), q0);
        Quat fd = {(qp.w - qm.w) / (2 * h), (qp.x - qm.x) / (2 * h), (qp.y - qm.y) / (2 * h),
                   (qp.z - qm.z) / (2 * h)};
        Quat d = quat_derivative(qt, w);
        assert_true(quat_dist(d, fd) < 1e-8 * (1.0 + speed * speed * speed));
        /* A unit quaternion's derivative is tangent to the sphere. */
        assert_near(d.w * qt.w + d.x * qt.x + d.y * qt.y + d.z * qt.z, 0.0, 1e-14);
    }
}

static void test_planar_angle_y(void **state) {
    (void)state;
    for (double theta = -3.1; theta <= 3.1; theta += 0.05) {
        Quat q = quat_from_axis_angle(vec3(0, 1, 0), theta);
        assert_near(quat_planar_angle_y(q), theta, 1e-14);
    }
    /* Beyond pi the half-angle cosine is negative: theta is still recovered exactly. */
    Quat q = quat_from_axis_angle(vec3(0, 1, 0), 4.0);
    assert_near(quat_planar_angle_y(q), 4.0, 1e-14);
    /* Sign: +90 degrees about y takes z to x. */
    q = quat_from_axis_angle(vec3(0, 1, 0), M_PI / 2);
    assert_vec3_near(quat_rotate(q, vec3(0, 0, 1)), vec3(1, 0, 0), 1e-15);
    assert_near(quat_planar_angle_y(q), M_PI / 2, 1e-15);
}

/* ===== Mat3 ===== */

static void test_mat3_basics(void **state) {
    (void)state;
    Mat3 a = {{{1, 2, 3}, {4, 5, 6}, {7, 8, 10}}};
    assert_near(mat3_det(a), -3.0, 1e-14);
    assert_near(mat3_det(mat3_diag(vec3(2, 3, 4))), 24.0, 0.0);
    assert_true(mat3_dist(mat3_mul(a, mat3_identity()), a) == 0.0);
    assert_vec3_near(mat3_mul_vec(a, vec3(1, 0, -1)), vec3(-2, -2, -3), 0.0);
    Mat3 at = mat3_transpose(a);
    assert_true(at.m[0][2] == 7 && at.m[2][0] == 3);
}

static void test_mat3_inverse(void **state) {
    (void)state;
    rng_seed(7);
    for (int i = 0; i < SAMPLES; i++) {
        Mat3 a;
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                a.m[r][c] = rng_uniform(-1, 1) + (r == c ? 3.0 : 0.0);
        Mat3 inv;
        assert_true(mat3_inverse(a, &inv));
        assert_true(mat3_dist(mat3_mul(inv, a), mat3_identity()) < 1e-14);
        assert_true(mat3_dist(mat3_mul(a, inv), mat3_identity()) < 1e-14);
    }
    /* Singular: false, and *out untouched. */
    Mat3 singular = {{{1, 2, 3}, {2, 4, 6}, {0, 1, 1}}};
    Mat3 out = mat3_diag(vec3(7, 7, 7));
    assert_false(mat3_inverse(singular, &out));
    assert_true(mat3_dist(out, mat3_diag(vec3(7, 7, 7))) == 0.0);
    Mat3 zero = {{{0}}};
    assert_false(mat3_inverse(zero, &out));
}

static void test_mat3_skew(void **state) {
    (void)state;
    rng_seed(8);
    for (int i = 0; i < SAMPLES; i++) {
        Vec3 v = rng_vec3(3.0), w = rng_vec3(3.0);
        Mat3 s = mat3_skew(v);
        assert_vec3_near(mat3_mul_vec(s, w), vec3_cross(v, w), 1e-14);
        assert_true(mat3_dist(mat3_transpose(s),
                              (Mat3){{{0, v.z, -v.y}, {-v.z, 0, v.x}, {v.y, -v.x, 0}}}) == 0.0);
    }
}

static void test_world_inertia(void **state) {
    (void)state;
    rng_seed(9);
    for (int i = 0; i < SAMPLES; i++) {
        Quat q = rng_unit_quat();
        Vec3 principal = vec3(rng_uniform(0.1, 2), rng_uniform(0.1, 2), rng_uniform(0.1, 2));
        Mat3 iw = mat3_world_inertia(q, principal);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                assert_true(iw.m[r][c] == iw.m[c][r]); /* exactly symmetric */
        Mat3 rot = quat_to_mat3(q);
        Mat3 reference = mat3_mul(mat3_mul(rot, mat3_diag(principal)), mat3_transpose(rot));
        assert_true(mat3_dist(iw, reference) < 1e-14);
        /* Body x axis in world is an eigenvector with eigenvalue principal.x. */
        Vec3 ex = quat_rotate(q, vec3(1, 0, 0));
        assert_vec3_near(mat3_mul_vec(iw, ex), vec3_scale(ex, principal.x), 1e-14);
        /* Inverse of the world inertia is the world inertia of the inverse moments. */
        Mat3 inv;
        assert_true(mat3_inverse(iw, &inv));
        Mat3 iwinv =
            mat3_world_inertia(q, vec3(1.0 / principal.x, 1.0 / principal.y, 1.0 / principal.z));
        assert_true(mat3_dist(inv, iwinv) < 1e-12);
    }
}

/* ===== Spatial ===== */

/* A slender bar of mass m and length L along x, pushed at its end along z: the contact point
 * r = (L/2, 0, 0), r x n = (0, -L/2, 0) excites rotation about y, so
 * m_eff = 1 / (1/m + (L/2)^2 / I_y). For m = 1, L = 1, I_y = m L^2 / 12: 1 / (1 + 3) = 1/4. */
static void test_effective_mass_bar_end(void **state) {
    (void)state;
    double m = 1.0, len = 1.0;
    double iy = m * len * len / 12.0;
    Vec3 principal_inv = vec3(1.0 / 1e-3, 1.0 / iy, 1.0 / iy);
    Mat3 iinv = mat3_world_inertia(quat_identity(), principal_inv);
    Vec3 r = vec3(len / 2, 0, 0), n = vec3(0, 0, 1);
    double expected = 1.0 / (1.0 / m + (len / 2) * (len / 2) / iy);
    assert_near(expected, 0.25, 1e-15);
    assert_near(spatial_effective_mass(m, iinv, r, n), expected, 1e-15);
    /* Pushing along the bar does not rotate it: the full mass. */
    assert_near(spatial_effective_mass(m, iinv, r, vec3(1, 0, 0)), m, 1e-15);
    /* The same configuration rotated rigidly gives the same effective mass. */
    rng_seed(10);
    for (int i = 0; i < SAMPLES; i++) {
        Quat q = rng_unit_quat();
        Mat3 iinv_w = mat3_world_inertia(q, principal_inv);
        double got = spatial_effective_mass(m, iinv_w, quat_rotate(q, r), quat_rotate(q, n));
        assert_near(got, expected, 1e-13);
    }
    /* An immovable body: infinite mass, zero inverse inertia. */
    Mat3 zero = {{{0}}};
    assert_true(isinf(spatial_effective_mass(INFINITY, zero, r, n)));
}

static void test_point_velocity(void **state) {
    (void)state;
    Vec3 v = spatial_point_velocity(vec3(1, 0, 0), vec3(0, 0, 2), vec3(1, 0, 0));
    assert_vec3_near(v, vec3(1, 2, 0), 0.0);
}

/* ===== Tangent basis ===== */

static void check_basis(Vec3 n) {
    Vec3 t1, t2;
    vec3_tangent_basis(n, &t1, &t2);
    const double tol = 4e-15;
    if (!(fabs(vec3_dot(t1, t1) - 1.0) <= tol && fabs(vec3_dot(t2, t2) - 1.0) <= tol &&
          fabs(vec3_dot(t1, t2)) <= tol && fabs(vec3_dot(t1, n)) <= tol &&
          fabs(vec3_dot(t2, n)) <= tol && vec3_dist(vec3_cross(t1, t2), n) <= tol))
        fail_msg("basis of n = (%.17g, %.17g, %.17g): t1 = (%.17g, %.17g, %.17g), "
                 "t2 = (%.17g, %.17g, %.17g)",
                 n.x, n.y, n.z, t1.x, t1.y, t1.z, t2.x, t2.y, t2.z);
}

static void test_tangent_basis(void **state) {
    (void)state;
    rng_seed(11);
    for (int i = 0; i < SAMPLES; i++)
        check_basis(rng_unit_vec3());
    /* Axes, the poles and the neighbourhood of -z, where 1 + z cancels. */
    const Vec3 special[] = {
        {0, 0, 1},     {0, 0, -1},          {1, 0, 0},       {-1, 0, 0},       {0, 1, 0},
        {0, -1, 0},    {-0.0, -0.0, -1},    {-0.0, 0.0, 1},  {1e-9, 2e-9, -1}, {-3e-8, 1e-8, -1},
        {1e-5, 0, -1}, {0, 1e-5, -1},       {1e-170, 0, -1}, {0, -1e-300, -1}, {4.9e-324, 0, -1},
        {1e-9, 0, 1},  {1e-300, 1e-300, 1},
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        check_basis(vec3_normalize(special[i]));
    for (int k = 1; k <= 16; k++) {
        double e = pow(10.0, -k);
        check_basis(vec3_normalize(vec3(e, -0.5 * e, -1.0)));
        check_basis(vec3(e, 0.0, -sqrt(1.0 - e * e)));
    }
    /* n = +z gives the world axes. */
    Vec3 t1, t2;
    vec3_tangent_basis(vec3(0, 0, 1), &t1, &t2);
    assert_vec3_near(t1, vec3(1, 0, 0), 0.0);
    assert_vec3_near(t2, vec3(0, 1, 0), 0.0);
}

/* The basis follows n continuously away from -z (contact warm starting relies on tangent
 * directions not jumping frame to frame), including across the equator z = 0. */
static void test_tangent_basis_continuous(void **state) {
    (void)state;
    rng_seed(12);
    for (int i = 0; i < SAMPLES; i++) {
        Vec3 n = rng_unit_vec3();
        if (i % 4 == 0)
            n = vec3_normalize(vec3(n.x, n.y, 1e-12 * n.z)); /* on the equator */
        if (n.z < -0.9)
            continue;
        Vec3 m = vec3_normalize(vec3_mad(n, 1e-7, rng_unit_vec3()));
        Vec3 a1, a2, b1, b2;
        vec3_tangent_basis(n, &a1, &a2);
        vec3_tangent_basis(m, &b1, &b2);
        assert_true(vec3_dist(a1, b1) < 1e-5 && vec3_dist(a2, b2) < 1e-5);
    }
}

/* ===== Linear algebra ===== */

static double residual_inf(int n, const double *a, const double *x, const double *b) {
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        double r = -b[i];
        for (int j = 0; j < n; j++)
            r += a[i + j * n] * x[j]; /* column-major */
        worst = fmax(worst, fabs(r));
    }
    return worst;
}

static void test_linalg_solve(void **state) {
    (void)state;
    linalg_init();
    linalg_init(); /* idempotent */
    enum { N = 6 };
    rng_seed(13);
    for (int trial = 0; trial < 100; trial++) {
        double a[N * N], lu[N * N], b[N], x[N];
        int ipiv[N];
        for (int i = 0; i < N * N; i++)
            a[i] = rng_uniform(-1, 1);
        for (int i = 0; i < N; i++)
            b[i] = rng_uniform(-1, 1);
        memcpy(lu, a, sizeof a);
        memcpy(x, b, sizeof b);
        assert_int_equal(linalg_solve(N, 1, lu, ipiv, x), 0);
        double xmax = 0.0;
        for (int i = 0; i < N; i++)
            xmax = fmax(xmax, fabs(x[i]));
        /* Backward stable: residual ~ n eps |A| |x|. */
        assert_true(residual_inf(N, a, x, b) < 1e-12 * fmax(1.0, xmax));
    }
    /* Several right-hand sides: B is n x nrhs, column-major. */
    double a2[4] = {4, 1, 2, 3}; /* [[4, 2], [1, 3]] */
    double b2[4] = {6, 4, 2, 1}; /* columns (6, 4) and (2, 1) */
    int ipiv2[2];
    assert_int_equal(linalg_solve(2, 2, a2, ipiv2, b2), 0);
    assert_near(b2[0], 1.0, 1e-15);
    assert_near(b2[1], 1.0, 1e-15);
    assert_near(b2[2], 0.4, 1e-15);
    assert_near(b2[3], 0.2, 1e-15);
}

static void test_linalg_singular(void **state) {
    (void)state;
    enum { N = 6 };
    rng_seed(14);
    double a[N * N], b[N];
    int ipiv[N];
    /* A zero column: U(j, j) = 0 exactly, reported as info = j + 1. */
    for (int i = 0; i < N * N; i++)
        a[i] = rng_uniform(-1, 1);
    for (int i = 0; i < N; i++) {
        a[i + 3 * N] = 0.0;
        b[i] = 1.0;
    }
    int info = linalg_solve(N, 1, a, ipiv, b);
    assert_true(info > 0);
    /* A row that is twice another: scaling by 2 commutes with rounding, so elimination cancels
     * it exactly. */
    for (int i = 0; i < N * N; i++)
        a[i] = rng_uniform(-1, 1);
    for (int j = 0; j < N; j++)
        a[5 + j * N] = 2.0 * a[1 + j * N];
    for (int i = 0; i < N; i++)
        b[i] = 1.0;
    info = linalg_solve(N, 1, a, ipiv, b);
    assert_true(info > 0);
}

static void test_linalg_solve_spd(void **state) {
    (void)state;
    enum { N = 6 };
    rng_seed(15);
    for (int trial = 0; trial < 100; trial++) {
        double m[N * N], a[N * N], chol[N * N], b[N], x[N];
        for (int i = 0; i < N * N; i++)
            m[i] = rng_uniform(-1, 1);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                double s = i == j ? 0.5 : 0.0; /* A = M^T M + I/2 */
                for (int k = 0; k < N; k++)
                    s += m[k + i * N] * m[k + j * N];
                a[i + j * N] = s;
            }
        for (int i = 0; i < N; i++)
            b[i] = rng_uniform(-1, 1);
        memcpy(chol, a, sizeof a);
        memcpy(x, b, sizeof b);
        assert_int_equal(linalg_solve_spd(N, 1, chol, x), 0);
        assert_true(residual_inf(N, a, x, b) < 1e-12);
    }
    /* Indefinite: the Cholesky factorisation fails with info > 0. */
    double indefinite[4] = {1, 2, 2, 1};
    double rhs[2] = {1, 1};
    assert_true(linalg_solve_spd(2, 1, indefinite, rhs) > 0);
}

static void test_linalg_symmetric_eigen(void **state) {
    (void)state;
    /* [[2, 1, 0], [1, 2, 0], [0, 0, 5]]: eigenvalues 1, 3, 5 with vectors (1, -1, 0)/sqrt 2,
     * (1, 1, 0)/sqrt 2 and (0, 0, 1), up to sign. */
    const double known[9] = {2, 1, 0, 1, 2, 0, 0, 0, 5};
    double a[9], w[3];
    memcpy(a, known, sizeof a);
    assert_int_equal(linalg_symmetric_eigen(3, a, w, true), 0);
    assert_near(w[0], 1.0, 1e-14);
    assert_near(w[1], 3.0, 1e-14);
    assert_near(w[2], 5.0, 1e-14);
    const double s = sqrt(0.5);
    const double expected[3][3] = {{s, -s, 0}, {s, s, 0}, {0, 0, 1}};
    for (int k = 0; k < 3; k++) {
        double sign = a[0 + k * 3] * expected[k][0] + a[1 + k * 3] * expected[k][1] +
                                  a[2 + k * 3] * expected[k][2] <
                              0
                          ? -1.0
                          : 1.0;
        for (int i = 0; i < 3; i++)
            assert_near(sign * a[i + k * 3], expected[k][i], 1e-14);
    }
    memcpy(a, known, sizeof a);
    assert_int_equal(linalg_symmetric_eigen(3, a, w, false), 0);
    assert_near(w[0], 1.0, 1e-14);
    assert_near(w[2], 5.0, 1e-14);

    /* Above the stack-workspace size: A v = lambda v for every pair, ascending. */
    enum { N = 40 };
    static double big[N * N], vecs[N * N], lambda[N];
    rng_seed(16);
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++)
            big[i + j * N] = big[j + i * N] = rng_uniform(-1, 1);
    memcpy(vecs, big, sizeof big);
    assert_int_equal(linalg_symmetric_eigen(N, vecs, lambda, true), 0);
    for (int k = 0; k < N; k++) {
        if (k > 0)
            assert_true(lambda[k] >= lambda[k - 1]);
        for (int i = 0; i < N; i++) {
            double av = 0.0;
            for (int j = 0; j < N; j++)
                av += big[i + j * N] * vecs[j + k * N];
            assert_near(av, lambda[k] * vecs[i + k * N], 1e-12);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rotate_inverse),
        cmocka_unit_test(test_rotate_matches_sandwich_product),
        cmocka_unit_test(test_quat_to_mat3),
        cmocka_unit_test(test_quat_mul_associative),
        cmocka_unit_test(test_axis_angle),
        cmocka_unit_test(test_quat_normalize),
        cmocka_unit_test(test_quat_derivative),
        cmocka_unit_test(test_planar_angle_y),
        cmocka_unit_test(test_mat3_basics),
        cmocka_unit_test(test_mat3_inverse),
        cmocka_unit_test(test_mat3_skew),
        cmocka_unit_test(test_world_inertia),
        cmocka_unit_test(test_effective_mass_bar_end),
        cmocka_unit_test(test_point_velocity),
        cmocka_unit_test(test_tangent_basis),
        cmocka_unit_test(test_tangent_basis_continuous),
        cmocka_unit_test(test_linalg_solve),
        cmocka_unit_test(test_linalg_singular),
        cmocka_unit_test(test_linalg_solve_spd),
        cmocka_unit_test(test_linalg_symmetric_eigen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
