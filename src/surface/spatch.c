/* S-patches (seed 002 5.2.1, after Loop and DeRose, "A multisided generalization of Bezier
 * surfaces", ACM ToG 8(3), 1989): an n-sided patch S = B o L, the embedding L of a regular n-gon
 * into the n-simplex (eq. 5.13-5.16) followed by the degree-4 Bezier simplex map B (eq.
 * 5.10-5.12). Its ten position derivatives by jets (002 5.3.1: forward-mode automatic
 * differentiation, "u and v partial derivatives in all combinations up to order three").
 *
 * How B's derivatives are carried: not by pushing jets through all C(n + 3, 4) Bernstein terms,
 * but by Taylor-expanding B at l0 = L(s, t): with l = l0 + delta (delta a jet without constant
 * term), B(l0 + delta) = sum_k C(4, k) b(l0^(4 - k), delta^k), b the multilinear polar form of
 * B (a homogeneous quartic in l), and delta^4 = 0 at order 3. de Casteljau's algorithm at l0
 * gives the nets of b(l0^(4 - k), ...); the delta terms are contractions of those nets with the
 * vectors of delta's first and second order coefficients (taylor_coefficients), so each control
 * point is touched a few times, not once per jet coefficient. */
#include "surface_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* C(n + d - 1, d): multisets of d sides. */
static int multiset_count(int sides, int degree) {
    long num = 1, den = 1;
    for (int k = 1; k <= degree; k++) {
        num *= sides + k - 1;
        den *= k;
    }
    return (int)(num / den);
}

int spatch_control_count(int sides) {
    return multiset_count(sides, SPATCH_DEGREE);
}

/* Sorted lists of `degree` sides in lexicographic order; returns the count. */
static int list_multisets(int sides, int degree, int (*out)[SPATCH_DEGREE]) {
    int current[SPATCH_DEGREE] = {0}, count = 0;
    if (degree == 0)
        return 1;
    for (;;) {
        memcpy(out[count++], current, sizeof current);
        int k = degree - 1;
        while (k >= 0 && current[k] == sides - 1)
            k--;
        if (k < 0)
            return count;
        current[k]++;
        for (int i = k + 1; i < degree; i++)
            current[i] = current[k];
    }
}

void spatch_multi_indices(int sides, int (*out)[SPATCH_DEGREE]) {
    list_multisets(sides, SPATCH_DEGREE, out);
}

void spatch_domain(int sides, SurfaceDomain *out) {
    /* 002 5.2.1: "a regular n sided polygon centered at the origin and with the first point
     * lying on the positive u axis ... of unit area" */
    double radius = sqrt(2.0 / (sides * sin(2.0 * M_PI / sides)));
    out->count = sides;
    for (int i = 0; i < sides; i++) {
        out->corner[i][0] = radius * cos(2.0 * M_PI * i / sides);
        out->corner[i][1] = radius * sin(2.0 * M_PI * i / sides);
    }
}

/* ===== Tables: where each net point's children are ===== */

enum { SPATCH_MAX_SIDES = SURFACE_DOMAIN_MAX };

/* For the nets of degree d = 0..3: up[d][j * sides + m] is the index in the net of degree d + 1
 * of multiset j plus side m. */
struct SPatchTables {
    int count[SPATCH_DEGREE + 1];
    int *up[SPATCH_DEGREE];
};

/* Rank of a sorted multiset by dense code lookup (code = sum side * sides^position). */
static int multiset_code(const int *m, int degree, int sides) {
    int code = 0;
    for (int k = 0; k < degree; k++)
        code = code * sides + m[k];
    return code;
}

static int compare_int(const void *a, const void *b) {
    return *(const int *)a - *(const int *)b;
}

static void spatch_tables_free(SPatchTables *t) {
    for (int d = 0; d < SPATCH_DEGREE; d++) {
        free(t->up[d]);
    }
}

static bool spatch_tables_build(int sides, SPatchTables *t) {
    memset(t, 0, sizeof *t);
    int dense = 1;
    for (int k = 0; k < SPATCH_DEGREE; k++)
        dense *= sides;
    int *rank = malloc((size_t)dense * sizeof *rank);
    int(*below)[SPATCH_DEGREE] = malloc((size_t)multiset_count(sides, 4) * sizeof *below);
    int(*above)[SPATCH_DEGREE] = malloc((size_t)multiset_count(sides, 4) * sizeof *above);
    bool ok = rank && below && above;
    for (int d = 0; d <= SPATCH_DEGREE; d++)
        t->count[d] = multiset_count(sides, d);
    for (int d = 0; d < SPATCH_DEGREE && ok; d++) {
        t->up[d] = malloc((size_t)t->count[d] * sides * sizeof *t->up[d]);
        if (!(ok = t->up[d] != NULL))
            break;
        list_multisets(sides, d, below);
        int count = list_multisets(sides, d + 1, above);
        for (int i = 0; i < count; i++)
            rank[multiset_code(above[i], d + 1, sides)] = i;
        for (int j = 0; j < t->count[d]; j++)
            for (int side = 0; side < sides; side++) {
                int child[SPATCH_DEGREE];
                memcpy(child, below[j], sizeof(int) * (size_t)d);
                child[d] = side;
                qsort(child, (size_t)d + 1, sizeof *child, compare_int);
                t->up[d][j * sides + side] = rank[multiset_code(child, d + 1, sides)];
            }
    }
    free(rank);
    free(below);
    free(above);
    if (!ok)
        spatch_tables_free(t);
    return ok;
}

SPatch *spatch_create(int sides) {
    SPatch *patch = calloc(1, sizeof *patch);
    if (!patch)
        return NULL;
    patch->sides = sides;
    spatch_domain(sides, &patch->domain);
    patch->control = calloc((size_t)spatch_control_count(sides), sizeof *patch->control);
    patch->tables = malloc(sizeof *patch->tables);
    if (!patch->control || !patch->tables || !spatch_tables_build(sides, patch->tables)) {
        free(patch->tables);
        patch->tables = NULL;
        spatch_destroy(patch);
        return NULL;
    }
    return patch;
}

void spatch_destroy(SPatch *patch) {
    if (!patch)
        return;
    if (patch->tables)
        spatch_tables_free(patch->tables);
    free(patch->tables);
    free(patch->control);
    free(patch);
}

/* ===== Evaluation ===== */

/* 1 / a = (1 / a0) (1 - e + e^2 - e^3), e = (a - a0) / a0. */
static Jet jet_reciprocal(const Jet *a) {
    Jet e;
    for (int i = 0; i < SURFACE_DERIVATIVES; i++)
        e.c[i] = a->c[i] / a->c[0];
    e.c[0] = 0.0;
    Jet e2 = jet_mul(&e, &e, JET_ORDER), e3 = jet_mul(&e2, &e, JET_ORDER);
    Jet out;
    for (int i = 0; i < SURFACE_DERIVATIVES; i++)
        out.c[i] = (-e.c[i] + e2.c[i] - e3.c[i]) / a->c[0];
    out.c[0] = 1.0 / a->c[0];
    return out;
}

/* The embedding L (002 eq. 5.13-5.15) as jets: alpha_j, linear, vanishes on edge j (corner j to
 * corner j + 1) and is positive inside; pi_i is the product of all alpha but the two of the
 * edges meeting at corner i; l_i = pi_i / sum pi. False where sum pi vanishes (far outside). */
static bool embedding(const SPatch *patch, double s, double t, Jet l[SPATCH_MAX_SIDES]) {
    int n = patch->sides;
    Jet alpha[SPATCH_MAX_SIDES];
    for (int j = 0; j < n; j++) {
        const double *p = patch->domain.corner[j], *q = patch->domain.corner[(j + 1) % n];
        double ex = q[0] - p[0], ey = q[1] - p[1];
        alpha[j] = (Jet){{ex * (t - p[1]) - ey * (s - p[0]), -ey, ex}};
    }
    /* pi_i = (alpha_0 .. alpha_(i-2)) (alpha_(i+1) .. alpha_(n-1)) from prefix and suffix
     * products, pi_0 = alpha_1 .. alpha_(n-2): 4n - 9 jet products, not n (n - 2) */
    Jet prefix[SPATCH_MAX_SIDES + 1], suffix[SPATCH_MAX_SIDES + 1];
    prefix[0] = suffix[n] = (Jet){{1.0}};
    prefix[1] = alpha[0];
    suffix[n - 1] = alpha[n - 1];
    for (int k = 2; k <= n - 2; k++)
        prefix[k] = jet_mul(&prefix[k - 1], &alpha[k - 1], JET_ORDER);
    for (int k = n - 2; k >= 2; k--)
        suffix[k] = jet_mul(&suffix[k + 1], &alpha[k], JET_ORDER);
    l[0] = alpha[1];
    for (int k = 2; k <= n - 2; k++)
        l[0] = jet_mul(&l[0], &alpha[k], JET_ORDER);
    l[1] = suffix[2];
    l[n - 1] = prefix[n - 2];
    for (int i = 2; i <= n - 2; i++)
        l[i] = jet_mul(&prefix[i - 1], &suffix[i + 1], JET_ORDER);
    Jet sum = {{0}};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < SURFACE_DERIVATIVES; k++)
            sum.c[k] += l[i].c[k];
    if (!(fabs(sum.c[0]) > 1e-300))
        return false;
    Jet inverse = jet_reciprocal(&sum);
    for (int i = 0; i < n; i++)
        l[i] = jet_mul(&l[i], &inverse, JET_ORDER);
    return true;
}

/* The contraction of a net of degree d + 1 with a vector y of the simplex's n coordinates:
 * to[j] = sum_m y_m from[j + e_m], the polar form with one argument fixed to y. With y = l0 it is
 * one step of de Casteljau's algorithm. */
static void contract(const SPatchTables *t, int sides, int degree, const double *y,
                     const Vec3 *from, Vec3 *to) {
    const int *up = t->up[degree];
    for (int j = 0; j < t->count[degree]; j++) {
        Vec3 sum = vec3(0, 0, 0);
        for (int m = 0; m < sides; m++)
            sum = vec3_add(sum, vec3_scale(from[up[j * sides + m]], y[m]));
        to[j] = sum;
    }
}

static Vec3 dot(const double *y, const Vec3 *net1, int sides) {
    Vec3 sum = vec3(0, 0, 0);
    for (int m = 0; m < sides; m++)
        sum = vec3_add(sum, vec3_scale(net1[m], y[m]));
    return sum;
}

enum { NET3_MAX = 364, NET2_MAX = 78 }; /* C(14, 3), C(13, 2): twelve sides */

/* The Taylor coefficients of x = B(l0 + delta) (SurfaceDerivative order) from the embedding's
 * jets l = l0 + delta. delta = D1 + D2 + D3 by order, D1 = P ds + Q dt, D2 = R ds^2 + S ds dt
 * + U dt^2 (P .. U vectors of the n simplex coordinates). Up to order 3:
 *   4 b(l0^3, delta)      every order of delta against the degree-1 net;
 *   6 b(l0^2, delta^2) = 6 b(l0^2, D1, D1) + 12 b(l0^2, D1, D2);
 *   4 b(l0, delta^3)   = 4 b(l0, D1, D1, D1);
 * each b a contraction of the de Casteljau nets with P, Q, R, S, U. */
static void taylor_coefficients(const SPatch *patch, const Jet *l, Vec3 x[SURFACE_DERIVATIVES]) {
    int n = patch->sides;
    const SPatchTables *tb = patch->tables;
    double l0[SPATCH_MAX_SIDES] = {0}, d[SURFACE_DERIVATIVES][SPATCH_MAX_SIDES] = {{0}};
    for (int m = 0; m < n; m++) {
        l0[m] = l[m].c[0];
        for (int k = 1; k < SURFACE_DERIVATIVES; k++)
            d[k][m] = l[m].c[k];
    }
    const double *P = d[SURFACE_S], *Q = d[SURFACE_T];
    const double *R = d[SURFACE_SS], *S = d[SURFACE_ST], *U = d[SURFACE_TT];
    Vec3 net3[NET3_MAX], net2[NET2_MAX], net1[SPATCH_MAX_SIDES];
    contract(tb, n, 3, l0, patch->control, net3);
    contract(tb, n, 2, l0, net3, net2);
    contract(tb, n, 1, l0, net2, net1);
    x[SURFACE_VALUE] = dot(l0, net1, n);
    for (int k = 1; k < SURFACE_DERIVATIVES; k++)
        x[k] = vec3_scale(dot(d[k], net1, n), 4.0);
    Vec3 n2p[SPATCH_MAX_SIDES], n2q[SPATCH_MAX_SIDES]; /* b(l0^2, P, .), b(l0^2, Q, .) */
    contract(tb, n, 1, P, net2, n2p);
    contract(tb, n, 1, Q, net2, n2q);
    Vec3 n3p[NET2_MAX], n3q[NET2_MAX], n3pp[SPATCH_MAX_SIDES], n3pq[SPATCH_MAX_SIDES],
        n3qq[SPATCH_MAX_SIDES];
    contract(tb, n, 2, P, net3, n3p);
    contract(tb, n, 2, Q, net3, n3q);
    contract(tb, n, 1, P, n3p, n3pp);
    contract(tb, n, 1, Q, n3p, n3pq);
    contract(tb, n, 1, Q, n3q, n3qq);
    /* order 2: 6 b(l0^2, D1, D1) */
    x[SURFACE_SS] = vec3_add(x[SURFACE_SS], vec3_scale(dot(P, n2p, n), 6.0));
    x[SURFACE_ST] = vec3_add(x[SURFACE_ST], vec3_scale(dot(Q, n2p, n), 12.0));
    x[SURFACE_TT] = vec3_add(x[SURFACE_TT], vec3_scale(dot(Q, n2q, n), 6.0));
    /* order 3: 12 b(l0^2, D1, D2) + 4 b(l0, D1, D1, D1) */
    Vec3 rp = dot(R, n2p, n), sp = dot(S, n2p, n), up = dot(U, n2p, n);
    Vec3 rq = dot(R, n2q, n), sq = dot(S, n2q, n), uq = dot(U, n2q, n);
    Vec3 third[4] = {
        vec3_add(vec3_scale(rp, 12.0), vec3_scale(dot(P, n3pp, n), 4.0)),
        vec3_add(vec3_scale(vec3_add(sp, rq), 12.0), vec3_scale(dot(Q, n3pp, n), 12.0)),
        vec3_add(vec3_scale(vec3_add(up, sq), 12.0), vec3_scale(dot(Q, n3pq, n), 12.0)),
        vec3_add(vec3_scale(uq, 12.0), vec3_scale(dot(Q, n3qq, n), 4.0))};
    for (int k = 0; k < 4; k++)
        x[SURFACE_SSS + k] = vec3_add(x[SURFACE_SSS + k], third[k]);
}

IssimStatus spatch_evaluate(const SPatch *patch, double s, double t, const char *name,
                            SurfacePoint *out, IssimError *err) {
    if (!isfinite(s) || !isfinite(t))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "s-patch '%s': parameter (s, t) = (%g, %g) is not finite",
                               name ? name : "?", s, t);
    Jet l[SPATCH_MAX_SIDES];
    if (!embedding(patch, s, t, l))
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "s-patch '%s': (s, t) = (%g, %g) is too far outside the domain "
                               "(the embedding's denominator vanishes)",
                               name ? name : "?", s, t);
    Vec3 taylor[SURFACE_DERIVATIVES];
    taylor_coefficients(patch, l, taylor);
    /* partial derivatives from Taylor coefficients: times a! b! */
    static const double FACTORIALS[SURFACE_DERIVATIVES] = {1, 1, 1, 2, 1, 2, 6, 2, 2, 6};
    out->s = s;
    out->t = t;
    for (int k = 0; k < SURFACE_DERIVATIVES; k++)
        out->x[k] = vec3_scale(taylor[k], FACTORIALS[k]);
    return surface_point_normal(out, name, err);
}
