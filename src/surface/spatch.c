/* S-patches (seed 002 5.2.1, after Loop and DeRose, "A multisided generalization of Bezier
 * surfaces", ACM ToG 8(3), 1989): an n-sided patch S = B o L, the embedding L of a regular n-gon
 * into the n-simplex (eq. 5.13-5.16) followed by a Bezier simplex map B of degree d (eq.
 * 5.10-5.12; d = 4 as 002 builds it, raised to 6 or 7 for G1 joins: spatch_g1.c). Its ten position
 * derivatives by jets (002 5.3.1: forward-mode automatic differentiation, "u and v partial
 * derivatives in all combinations up to order three").
 *
 * How B's derivatives are carried: not by pushing jets through all C(n + d - 1, d) Bernstein
 * terms, but by Taylor-expanding B at l0 = L(s, t): with l = l0 + delta (delta a jet without
 * constant term), B(l0 + delta) = sum_k C(d, k) b(l0^(d - k), delta^k), b the multilinear polar
 * form of B (homogeneous of degree d in l), and delta^4 = 0 at order 3. de Casteljau's algorithm
 * at l0 gives the nets of b(l0^(d - k), ...); the delta terms are contractions of those nets with
 * the vectors of delta's first and second order coefficients (taylor_coefficients), so each control
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

int spatch_control_count(int sides, int degree) {
    return multiset_count(sides, degree);
}

/* Sorted lists of `degree` sides in lexicographic order; returns the count. */
static int list_multisets(int sides, int degree, int (*out)[SPATCH_MAX_DEGREE]) {
    int current[SPATCH_MAX_DEGREE] = {0}, count = 0;
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

void spatch_multi_indices(int sides, int degree, int (*out)[SPATCH_MAX_DEGREE]) {
    list_multisets(sides, degree, out);
}

/* Rank in list_multisets order: the lists before it are, position by position, those with a
 * smaller side there and anything not below it after (multisets of the remaining length over
 * the sides from that one up). */
int spatch_rank(int sides, int degree, const int *sorted) {
    int rank = 0, low = 0;
    for (int k = 0; k < degree; k++) {
        for (int u = low; u < sorted[k]; u++)
            rank += multiset_count(sides - u, degree - k - 1);
        low = sorted[k];
    }
    return rank;
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

/* For the nets of degree d = 0 .. degree - 1: up[d][j * sides + m] is the index in the net of
 * degree d + 1 of multiset j plus side m. */
struct SPatchTables {
    int count[SPATCH_MAX_DEGREE + 1];
    int *up[SPATCH_MAX_DEGREE];
};

static int compare_int(const void *a, const void *b) {
    return *(const int *)a - *(const int *)b;
}

static void spatch_tables_free(SPatchTables *t) {
    for (int d = 0; d < SPATCH_MAX_DEGREE; d++) {
        free(t->up[d]);
    }
}

static bool spatch_tables_build(int sides, int degree, SPatchTables *t) {
    memset(t, 0, sizeof *t);
    int(*below)[SPATCH_MAX_DEGREE] =
        malloc((size_t)multiset_count(sides, degree - 1) * sizeof *below);
    bool ok = below != NULL;
    for (int d = 0; d <= degree; d++)
        t->count[d] = multiset_count(sides, d);
    for (int d = 0; d < degree && ok; d++) {
        t->up[d] = malloc((size_t)t->count[d] * sides * sizeof *t->up[d]);
        if (!(ok = t->up[d] != NULL))
            break;
        list_multisets(sides, d, below);
        for (int j = 0; j < t->count[d]; j++)
            for (int side = 0; side < sides; side++) {
                int child[SPATCH_MAX_DEGREE];
                memcpy(child, below[j], sizeof(int) * (size_t)d);
                child[d] = side;
                qsort(child, (size_t)d + 1, sizeof *child, compare_int);
                t->up[d][j * sides + side] = spatch_rank(sides, d + 1, child);
            }
    }
    free(below);
    if (!ok)
        spatch_tables_free(t);
    return ok;
}

SPatch *spatch_create(int sides, int degree) {
    SPatch *patch = calloc(1, sizeof *patch);
    if (!patch)
        return NULL;
    patch->sides = sides;
    patch->degree = degree;
    spatch_domain(sides, &patch->domain);
    patch->control = calloc((size_t)spatch_control_count(sides, degree), sizeof *patch->control);
    patch->tables = malloc(sizeof *patch->tables);
    if (!patch->control || !patch->tables || !spatch_tables_build(sides, degree, patch->tables)) {
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

/* Degree elevation of a Bezier simplex (Loop and DeRose 1989, sec. 4): the same map of one degree
 * more, V'_(K + e_m) = sum over K, m of (K_m + 1) / (d + 1) V_K. */
SPatch *spatch_elevate(const SPatch *from) {
    int n = from->sides, d = from->degree;
    SPatch *to = spatch_create(n, d + 1);
    int(*lists)[SPATCH_MAX_DEGREE] = malloc((size_t)from->tables->count[d] * sizeof *lists);
    if (!to || !lists) {
        free(lists);
        spatch_destroy(to);
        return NULL;
    }
    list_multisets(n, d, lists);
    for (int j = 0; j < from->tables->count[d]; j++) {
        int occurrences[SPATCH_MAX_SIDES] = {0};
        for (int k = 0; k < d; k++)
            occurrences[lists[j][k]]++;
        for (int m = 0; m < n; m++) {
            Vec3 *child = &to->control[to->tables->up[d][j * n + m]];
            *child =
                vec3_add(*child, vec3_scale(from->control[j], (occurrences[m] + 1.0) / (d + 1.0)));
        }
    }
    free(lists);
    return to;
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
enum { NET_STACK = 512 };               /* larger intermediate nets go to the heap */

/* b(l0^(d - 3), .): de Casteljau's algorithm at l0 from the control net down to degree 3. False:
 * out of memory. */
static bool net_of_degree_3(const SPatch *patch, const double *l0, Vec3 net3[NET3_MAX]) {
    int n = patch->sides, d = patch->degree;
    const SPatchTables *tb = patch->tables;
    if (d == 4) {
        contract(tb, n, 3, l0, patch->control, net3);
        return true;
    }
    Vec3 stack[2][NET_STACK], *heap = NULL, *buffer[2] = {stack[0], stack[1]};
    if (tb->count[d - 1] > NET_STACK) {
        heap = malloc(2 * (size_t)tb->count[d - 1] * sizeof *heap);
        if (!heap)
            return false;
        buffer[0] = heap;
        buffer[1] = heap + tb->count[d - 1];
    }
    const Vec3 *from = patch->control;
    for (int degree = d - 1; degree > 3; degree--) {
        Vec3 *to = buffer[degree % 2];
        contract(tb, n, degree, l0, from, to);
        from = to;
    }
    contract(tb, n, 3, l0, from, net3);
    free(heap);
    return true;
}

/* The Taylor coefficients of x = B(l0 + delta) (SurfaceDerivative order) from the embedding's
 * jets l = l0 + delta, B of degree d. delta = D1 + D2 + D3 by order, D1 = P ds + Q dt, D2 = R ds^2
 * + S ds dt + U dt^2 (P .. U vectors of the n simplex coordinates). Up to order 3:
 *   d b(l0^(d-1), delta)          every order of delta against the degree-1 net;
 *   C(d, 2) b(l0^(d-2), delta^2) = C(d, 2) (b(l0^(d-2), D1, D1) + 2 b(l0^(d-2), D1, D2));
 *   C(d, 3) b(l0^(d-3), delta^3) = C(d, 3) b(l0^(d-3), D1, D1, D1);
 * each b a contraction of the de Casteljau nets with P, Q, R, S, U. False: out of memory. */
static bool taylor_coefficients(const SPatch *patch, const Jet *l, Vec3 x[SURFACE_DERIVATIVES]) {
    int n = patch->sides, deg = patch->degree;
    double c1 = deg, c2 = deg * (deg - 1) / 2.0, c3 = deg * (deg - 1) * (deg - 2) / 6.0;
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
    if (!net_of_degree_3(patch, l0, net3))
        return false;
    contract(tb, n, 2, l0, net3, net2);
    contract(tb, n, 1, l0, net2, net1);
    x[SURFACE_VALUE] = dot(l0, net1, n);
    for (int k = 1; k < SURFACE_DERIVATIVES; k++)
        x[k] = vec3_scale(dot(d[k], net1, n), c1);
    Vec3 n2p[SPATCH_MAX_SIDES], n2q[SPATCH_MAX_SIDES]; /* b(l0^(d-2), P, .), b(l0^(d-2), Q, .) */
    contract(tb, n, 1, P, net2, n2p);
    contract(tb, n, 1, Q, net2, n2q);
    Vec3 n3p[NET2_MAX], n3q[NET2_MAX], n3pp[SPATCH_MAX_SIDES], n3pq[SPATCH_MAX_SIDES],
        n3qq[SPATCH_MAX_SIDES];
    contract(tb, n, 2, P, net3, n3p);
    contract(tb, n, 2, Q, net3, n3q);
    contract(tb, n, 1, P, n3p, n3pp);
    contract(tb, n, 1, Q, n3p, n3pq);
    contract(tb, n, 1, Q, n3q, n3qq);
    /* order 2: C(d, 2) b(l0^(d-2), D1, D1) */
    x[SURFACE_SS] = vec3_add(x[SURFACE_SS], vec3_scale(dot(P, n2p, n), c2));
    x[SURFACE_ST] = vec3_add(x[SURFACE_ST], vec3_scale(dot(Q, n2p, n), 2.0 * c2));
    x[SURFACE_TT] = vec3_add(x[SURFACE_TT], vec3_scale(dot(Q, n2q, n), c2));
    /* order 3: 2 C(d, 2) b(l0^(d-2), D1, D2) + C(d, 3) b(l0^(d-3), D1, D1, D1) */
    Vec3 rp = dot(R, n2p, n), sp = dot(S, n2p, n), up = dot(U, n2p, n);
    Vec3 rq = dot(R, n2q, n), sq = dot(S, n2q, n), uq = dot(U, n2q, n);
    Vec3 third[4] = {
        vec3_add(vec3_scale(rp, 2.0 * c2), vec3_scale(dot(P, n3pp, n), c3)),
        vec3_add(vec3_scale(vec3_add(sp, rq), 2.0 * c2), vec3_scale(dot(Q, n3pp, n), 3.0 * c3)),
        vec3_add(vec3_scale(vec3_add(up, sq), 2.0 * c2), vec3_scale(dot(Q, n3pq, n), 3.0 * c3)),
        vec3_add(vec3_scale(uq, 2.0 * c2), vec3_scale(dot(Q, n3qq, n), c3))};
    for (int k = 0; k < 4; k++)
        x[SURFACE_SSS + k] = vec3_add(x[SURFACE_SSS + k], third[k]);
    return true;
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
    if (!taylor_coefficients(patch, l, taylor))
        return issim_error_set(err, ISSIM_ERR_NOMEM, "s-patch '%s': out of memory",
                               name ? name : "?");
    /* partial derivatives from Taylor coefficients: times a! b! */
    static const double FACTORIALS[SURFACE_DERIVATIVES] = {1, 1, 1, 2, 1, 2, 6, 2, 2, 6};
    out->s = s;
    out->t = t;
    for (int k = 0; k < SURFACE_DERIVATIVES; k++)
        out->x[k] = vec3_scale(taylor[k], FACTORIALS[k]);
    return surface_point_normal(out, name, err);
}
