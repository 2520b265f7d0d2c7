/* S-patches (seed 002 5.2.1, after Loop and DeRose, "A multisided generalization of Bezier
 * surfaces", ACM ToG 8(3), 1989): an n-sided patch S = B o L, the embedding L of a regular n-gon
 * into the n-simplex (eq. 5.13-5.16) followed by the degree-4 Bezier simplex map B (eq.
 * 5.10-5.12). Its ten position derivatives by jets (002 5.3.1: forward-mode automatic
 * differentiation, "u and v partial derivatives in all combinations up to order three").
 *
 * How B's derivatives are carried: not by pushing jets through all C(n + 3, 4) Bernstein terms,
 * but by Taylor-expanding B at l0 = L(s, t): with l = l0 + delta (delta a jet without constant
 * term), B(l0 + delta) = sum_k C(4, k) b(l0^(4 - k), delta^k), b the multilinear polar form of
 * B (a homogeneous quartic in l). de Casteljau's algorithm at l0 gives every b(l0^(4 - k), e_..)
 * as its intermediate nets, so the jets touch only the n + C(n + 1, 2) + C(n + 2, 3) points of
 * the nets of degree 1 to 3, and delta^4 vanishes at order 3. */
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
 * of multiset j plus side m; multiplicity[d][j] = d! / (j_1! ... j_n!), the ordered tuples the
 * multiset stands for. */
struct SPatchTables {
    int count[SPATCH_DEGREE + 1];
    int *up[SPATCH_DEGREE];
    double *multiplicity[SPATCH_DEGREE];
    int (*sides_of[SPATCH_DEGREE])[SPATCH_DEGREE]; /* the multisets of degree d */
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
        free(t->multiplicity[d]);
        free(t->sides_of[d]);
    }
}

static bool spatch_tables_build(int sides, SPatchTables *t) {
    memset(t, 0, sizeof *t);
    int dense = 1;
    for (int k = 0; k < SPATCH_DEGREE; k++)
        dense *= sides;
    int *rank = malloc((size_t)dense * sizeof *rank);
    int(*next)[SPATCH_DEGREE] = malloc((size_t)multiset_count(sides, 4) * sizeof *next);
    bool ok = rank && next;
    for (int d = 0; d <= SPATCH_DEGREE; d++)
        t->count[d] = multiset_count(sides, d);
    for (int d = 0; d < SPATCH_DEGREE && ok; d++) {
        t->up[d] = malloc((size_t)t->count[d] * sides * sizeof *t->up[d]);
        t->multiplicity[d] = malloc((size_t)t->count[d] * sizeof *t->multiplicity[d]);
        t->sides_of[d] = malloc((size_t)t->count[d] * sizeof *t->sides_of[d]);
        ok = t->up[d] && t->multiplicity[d] && t->sides_of[d];
        if (!ok)
            break;
        list_multisets(sides, d, t->sides_of[d]);
        int above = list_multisets(sides, d + 1, next);
        for (int i = 0; i < above; i++)
            rank[multiset_code(next[i], d + 1, sides)] = i;
        static const double FACTORIAL[5] = {1, 1, 2, 6, 24};
        for (int j = 0; j < t->count[d]; j++) {
            const int *m = t->sides_of[d][j];
            int occurrences[SPATCH_MAX_SIDES] = {0};
            for (int k = 0; k < d; k++)
                occurrences[m[k]]++;
            double denominator = 1.0;
            for (int side = 0; side < sides; side++)
                denominator *= FACTORIAL[occurrences[side]];
            t->multiplicity[d][j] = FACTORIAL[d] / denominator;
            for (int side = 0; side < sides; side++) {
                int child[SPATCH_DEGREE];
                memcpy(child, m, sizeof(int) * (size_t)d);
                child[d] = side;
                qsort(child, (size_t)d + 1, sizeof *child, compare_int);
                t->up[d][j * sides + side] = rank[multiset_code(child, d + 1, sides)];
            }
        }
    }
    free(rank);
    free(next);
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
    Jet sum = {{0}};
    for (int i = 0; i < n; i++) {
        Jet product = {{1.0}};
        for (int j = 0; j < n; j++)
            if (j != i && j != (i + n - 1) % n)
                product = jet_mul(&product, &alpha[j], JET_ORDER);
        l[i] = product;
        for (int k = 0; k < SURFACE_DERIVATIVES; k++)
            sum.c[k] += product.c[k];
    }
    if (!(fabs(sum.c[0]) > 1e-300))
        return false;
    Jet inverse = jet_reciprocal(&sum);
    for (int i = 0; i < n; i++)
        l[i] = jet_mul(&l[i], &inverse, JET_ORDER);
    return true;
}

/* One de Casteljau step: net of degree d + 1 to degree d at l0. */
static void casteljau_step(const SPatchTables *t, int sides, int degree, const double *l0,
                           const Vec3 *from, Vec3 *to) {
    const int *up = t->up[degree];
    for (int j = 0; j < t->count[degree]; j++) {
        Vec3 sum = vec3(0, 0, 0);
        for (int m = 0; m < sides; m++)
            sum = vec3_add(sum, vec3_scale(from[up[j * sides + m]], l0[m]));
        to[j] = sum;
    }
}

/* x += k * point, a jet times a constant vector, over the coefficients first .. last - 1 (the
 * others of k are zero: a product of j jets without constant terms starts at order j). */
static void accumulate(JetVec3 *x, const Jet *k, double weight, Vec3 point, int first) {
    point = vec3_scale(point, weight);
    for (int i = first; i < SURFACE_DERIVATIVES; i++) {
        x->x.c[i] += k->c[i] * point.x;
        x->y.c[i] += k->c[i] * point.y;
        x->z.c[i] += k->c[i] * point.z;
    }
}

enum { NET3_MAX = 364, NET2_MAX = 78 }; /* C(14, 3), C(13, 2): twelve sides */
enum { ORDER1 = SURFACE_S, ORDER2 = SURFACE_SS, ORDER3 = SURFACE_SSS }; /* first coefficients */

/* a * b for jets without constant terms: only the orders 2 and 3 of jet_mul's terms remain. */
static Jet jet_mul_no_constants(const double *a, const double *b) {
    Jet out;
    out.c[0] = out.c[1] = out.c[2] = 0.0;
    out.c[3] = a[1] * b[1];
    out.c[4] = a[1] * b[2] + a[2] * b[1];
    out.c[5] = a[2] * b[2];
    out.c[6] = a[1] * b[3] + a[3] * b[1];
    out.c[7] = a[1] * b[4] + a[2] * b[3] + a[3] * b[2] + a[4] * b[1];
    out.c[8] = a[1] * b[5] + a[2] * b[4] + a[4] * b[2] + a[5] * b[1];
    out.c[9] = a[2] * b[5] + a[5] * b[2];
    return out;
}

IssimStatus spatch_evaluate(const SPatch *patch, double s, double t, const char *name,
                            SurfacePoint *out, IssimError *err) {
    if (!isfinite(s) || !isfinite(t))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "s-patch '%s': parameter (s, t) = (%g, %g) is not finite",
                               name ? name : "?", s, t);
    int n = patch->sides;
    Jet l[SPATCH_MAX_SIDES];
    if (!embedding(patch, s, t, l))
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "s-patch '%s': (s, t) = (%g, %g) is too far outside the domain "
                               "(the embedding's denominator vanishes)",
                               name ? name : "?", s, t);
    double l0[SPATCH_MAX_SIDES];
    Jet delta[SPATCH_MAX_SIDES];
    for (int m = 0; m < n; m++) {
        l0[m] = l[m].c[0];
        delta[m] = l[m];
        delta[m].c[0] = 0.0;
    }
    const SPatchTables *tb = patch->tables;
    Vec3 net3[NET3_MAX], net2[NET2_MAX], net1[SPATCH_MAX_SIDES], net0;
    casteljau_step(tb, n, 3, l0, patch->control, net3);
    casteljau_step(tb, n, 2, l0, net3, net2);
    casteljau_step(tb, n, 1, l0, net2, net1);
    casteljau_step(tb, n, 0, l0, net1, &net0);
    /* B(l0 + delta) = b(l0^4) + 4 b(l0^3, delta) + 6 b(l0^2, delta^2) + 4 b(l0, delta^3) */
    JetVec3 x = {{{net0.x}}, {{net0.y}}, {{net0.z}}};
    for (int m = 0; m < n; m++) {
        accumulate(&x, &delta[m], 4.0, net1[m], ORDER1);
    }
    for (int j = 0; j < tb->count[2]; j++) {
        const int *m = tb->sides_of[2][j];
        Jet k = jet_mul_no_constants(delta[m[0]].c, delta[m[1]].c);
        accumulate(&x, &k, 6.0 * tb->multiplicity[2][j], net2[j], ORDER2);
    }
    for (int j = 0; j < tb->count[3]; j++) {
        /* a product of three jets without constant terms: only its order-3 part */
        const double *a = delta[tb->sides_of[3][j][0]].c, *b = delta[tb->sides_of[3][j][1]].c;
        const double *c = delta[tb->sides_of[3][j][2]].c;
        Jet k;
        k.c[SURFACE_SSS] = a[1] * b[1] * c[1];
        k.c[SURFACE_SST] = a[1] * b[1] * c[2] + a[1] * b[2] * c[1] + a[2] * b[1] * c[1];
        k.c[SURFACE_STT] = a[1] * b[2] * c[2] + a[2] * b[1] * c[2] + a[2] * b[2] * c[1];
        k.c[SURFACE_TTT] = a[2] * b[2] * c[2];
        accumulate(&x, &k, 4.0 * tb->multiplicity[3][j], net3[j], ORDER3);
    }
    double dx[SURFACE_DERIVATIVES], dy[SURFACE_DERIVATIVES], dz[SURFACE_DERIVATIVES];
    jet_to_derivatives(&x.x, dx);
    jet_to_derivatives(&x.y, dy);
    jet_to_derivatives(&x.z, dz);
    out->s = s;
    out->t = t;
    for (int k = 0; k < SURFACE_DERIVATIVES; k++)
        out->x[k] = vec3(dx[k], dy[k], dz[k]);
    return surface_point_normal(out, name, err);
}
