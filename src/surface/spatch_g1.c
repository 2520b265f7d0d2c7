/* S-patches tangent-plane continuous along their whole edges (seed 002 5.2: "replacing the
 * neighbourhoods of extraordinary vertices with tangent-plane continuity"; 002 5.2.2's blossoms
 * give it at the corners only, docs/smooth-contact.md).
 *
 * The condition enforced. On edge j of an S-patch S = B o L of degree d (002 eq. 5.10-5.17) only
 * l_j and l_(j+1) are nonzero, l = (1 - a) e_j + a e_(j+1), and any derivative of S across the edge
 * is D S = d sum_m (D l_m) C_m(a) with C_m(a) = b(l^(d-1), e_m), the polar form with one argument
 * e_m: a polynomial of degree d - 1 in a whose Bezier ordinates are the control points
 * V(j^(d-1-k) (j+1)^k m), k = 0 .. d - 1 (the edge's "second row"). As sum_m l_m = 1, sum_m D l_m
 * = 0 and
 *     D S = d [D l_(j+1) (C_(j+1) - C_j) + sum_(m != j, j+1) D l_m (C_m - C_j)],
 * C_(j+1) - C_j being the boundary curve's derivative / d. The neighbour across the edge, a
 * quartic box-spline patch F, has along it the tangent E(a) (the boundary's derivative / 4) and a
 * transversal derivative W(a), both cubic. We set, for every m != j, j + 1,
 *     C_m(a) - C_j(a) = p_m(a) E(a) + q_m(a) W(a)                                       (G1)
 * with p_m, q_m scalar polynomials of degree d - 4 (Bezier ordinates p_i, q_i): then every term
 * of D S lies in span(E(a), W(a)), F's tangent plane, at every a, and S's normal is F's along the
 * whole edge (exactly, up to rounding) wherever S is regular. In ordinates, k = 0 .. d - 1:
 *     V(j^(d-1-k) (j+1)^k m) = V(j^(d-k) (j+1)^k)
 *                              + sum_(i + l = k) C(d-4, i) C(3, l) / C(d-1, k) (p_i E_l + q_i W_l).
 *
 * Where the rows of two edges share a point (only at a corner c: V(c^(d-1) m) for every m, and the
 * twist V((c-1) c^(d-2) (c+1))) both edges' equations must hold:
 * - V(c^(d-1) m) fixes p_0, q_0 of edge c and p_(d-4), q_(d-4) of edge c - 1: it must lie in the
 *   tangent plane at corner c, where both neighbours already agree (for m = c +- 1 it is a
 *   boundary point; the others are projected onto the plane).
 * - The twist fixes p_1, q_1 of edge c (m = c - 1) and p_(d-5), q_(d-5) of edge c - 1 (m = c + 1);
 *   each edge alone puts it on a plane parallel to the tangent plane (the other ordinates of its
 *   row are known from the corners), and the two planes coincide because the neighbours meeting
 *   at c are C2 to each other there: a patch G1 along edge c has at corner c the normal component
 *   of its twist given by the second fundamental form of the neighbour (d/du of x_v . n = 0 along
 *   the edge), and that form is the same from both sides of a C2 join (measured: the two planes
 *   within 1e-14 of the patch's size on the bowl, the marble and the plate; the edge normals
 *   test it, docs/smooth-contact.md).
 * So the twist needs a free ordinate p_1 per row (d >= 6) that is not also fixed at the other
 * corner: with 3 sides the row m = j + 2 = j - 1 meets a twist at both ends, hence d >= 7 there.
 * The ordinates left free (with d = 6 the inner one of each row that meets no twist, which
 * happens from 5 sides on; none with 3 sides and d = 7) are fitted by least squares to the row
 * of the patch as given (the degree-elevated 002 5.2.2 construction, within 0.017 rad of G1 on
 * the bowl), so the shape stays close to it. */
#include "surface_internal.h"

#include <math.h>
#include <string.h>

enum { MAX_SIDES = SURFACE_DOMAIN_MAX, MAX_ORDINATES = SPATCH_MAX_DEGREE - 3 };

/* The polynomials p_m, q_m of (G1) for one edge and one m. */
typedef struct G1Row {
    double p[MAX_ORDINATES], q[MAX_ORDINATES];
    bool fixed[MAX_ORDINATES];
} G1Row;

typedef struct G1Edges {
    SPatch *patch;
    const Vec3 (*tangent)[4], (*cross)[4];
    G1Row row[MAX_SIDES][MAX_SIDES]; /* [edge][m] */
} G1Edges;

static double binomial(int n, int k) {
    double out = 1.0;
    for (int i = 1; i <= k; i++)
        out = out * (n - k + i) / i;
    return out;
}

/* The weight of p_i E_l in ordinate k = i + l of (G1). */
static double product_weight(int degree, int i, int l) {
    return binomial(degree - 4, i) * binomial(3, l) / binomial(degree - 1, i + l);
}

/* The control point of multi-index a^na b^nb c^nc. */
static Vec3 *control(const SPatch *patch, int a, int na, int b, int nb, int c, int nc) {
    int sorted[SPATCH_MAX_DEGREE], count = 0;
    const int side[3] = {a, b, c}, times[3] = {na, nb, nc};
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < times[s]; k++)
            sorted[count++] = side[s];
    for (int i = 1; i < count; i++) /* insertion sort */
        for (int k = i; k > 0 && sorted[k - 1] > sorted[k]; k--) {
            int swap = sorted[k];
            sorted[k] = sorted[k - 1];
            sorted[k - 1] = swap;
        }
    return &patch->control[spatch_rank(patch->sides, patch->degree, sorted)];
}

/* Ordinate k of edge j's row m: V(j^(d-1-k) (j+1)^k m), and its base V(j^(d-k) (j+1)^k). */
static Vec3 *row_point(const G1Edges *g, int j, int m, int k) {
    int d = g->patch->degree, next = (j + 1) % g->patch->sides;
    return control(g->patch, j, d - 1 - k, next, k, m, 1);
}

static Vec3 row_base(const G1Edges *g, int j, int k) {
    int d = g->patch->degree, next = (j + 1) % g->patch->sides;
    return *control(g->patch, j, d - k, next, k, 0, 0);
}

/* The right side of (G1) at ordinate k, from the row's ordinates i in [from, to]. */
static Vec3 row_sum(const G1Edges *g, int j, const G1Row *row, int k, int from, int to) {
    int d = g->patch->degree;
    Vec3 sum = vec3(0, 0, 0);
    for (int i = from; i <= to; i++) {
        int l = k - i;
        if (l < 0 || l > 3 || i > d - 4)
            continue;
        double w = product_weight(d, i, l);
        sum = vec3_add(sum, vec3_scale(g->tangent[j][l], w * row->p[i]));
        sum = vec3_add(sum, vec3_scale(g->cross[j][l], w * row->q[i]));
    }
    return sum;
}

/* (p, q) with v = p e + q w (least squares: v lies in their plane up to rounding). */
static void plane_coordinates(Vec3 v, Vec3 e, Vec3 w, double *p, double *q) {
    double ee = vec3_dot(e, e), ew = vec3_dot(e, w), ww = vec3_dot(w, w);
    double ev = vec3_dot(e, v), wv = vec3_dot(w, v), det = ee * ww - ew * ew;
    *p = (ev * ww - wv * ew) / det;
    *q = (ee * wv - ew * ev) / det;
}

static Vec3 corner_normal(const G1Edges *g, int c) {
    Vec3 n = vec3_cross(g->tangent[c][0], g->cross[c][0]);
    return vec3_scale(n, 1.0 / vec3_norm(n));
}

static Vec3 onto_plane(Vec3 x, Vec3 origin, Vec3 normal) {
    return vec3_sub(x, vec3_scale(normal, vec3_dot(vec3_sub(x, origin), normal)));
}

/* V(c^(d-1) m) in the tangent plane at corner c; the end ordinates of the rows it belongs to. */
static void join_corner(G1Edges *g, int c) {
    int n = g->patch->sides, d = g->patch->degree, before = (c + n - 1) % n, after = (c + 1) % n;
    Vec3 origin = *control(g->patch, c, d, 0, 0, 0, 0), normal = corner_normal(g, c);
    Vec3 end = row_base(g, before, d - 1); /* V((c-1) c^(d-1)) */
    for (int m = 0; m < n; m++) {
        if (m == c)
            continue;
        Vec3 *x = control(g->patch, c, d - 1, m, 1, 0, 0);
        if (m != before && m != after)
            *x = onto_plane(*x, origin, normal);
        G1Row *first = &g->row[c][m], *last = &g->row[before][m];
        if (m != after) {
            plane_coordinates(vec3_sub(*x, origin), g->tangent[c][0], g->cross[c][0], &first->p[0],
                              &first->q[0]);
            first->fixed[0] = true;
        }
        if (m != before) {
            plane_coordinates(vec3_sub(*x, end), g->tangent[before][3], g->cross[before][3],
                              &last->p[d - 4], &last->q[d - 4]);
            last->fixed[d - 4] = true;
        }
    }
}

/* The twist V((c-1) c^(d-2) (c+1)): ordinate 1 of edge c's row c - 1 and ordinate d - 2 of edge
 * c - 1's row c + 1, on the plane edge c puts it on (edge c - 1's: the same, see above). */
static void join_twist(G1Edges *g, int c) {
    int n = g->patch->sides, d = g->patch->degree, before = (c + n - 1) % n, after = (c + 1) % n;
    G1Row *first = &g->row[c][before], *last = &g->row[before][after];
    Vec3 normal = corner_normal(g, c);
    Vec3 a = vec3_add(row_base(g, c, 1), row_sum(g, c, first, 1, 0, 0));
    Vec3 b = vec3_add(row_base(g, before, d - 2), row_sum(g, before, last, d - 2, d - 4, d - 4));
    Vec3 *twist = row_point(g, c, before, 1);
    *twist = onto_plane(*twist, a, normal);
    plane_coordinates(vec3_scale(vec3_sub(*twist, a), 1.0 / product_weight(d, 1, 0)),
                      g->tangent[c][0], g->cross[c][0], &first->p[1], &first->q[1]);
    plane_coordinates(vec3_scale(vec3_sub(*twist, b), 1.0 / product_weight(d, d - 5, 3)),
                      g->tangent[before][3], g->cross[before][3], &last->p[d - 5], &last->q[d - 5]);
    first->fixed[1] = last->fixed[d - 5] = true;
}

/* Solves the symmetric positive definite system a x = b of size n in place (Gauss). */
static void solve_small(int n, double a[2 * MAX_ORDINATES][2 * MAX_ORDINATES], double *b) {
    for (int i = 0; i < n; i++)
        for (int r = i + 1; r < n; r++) {
            double f = a[r][i] / a[i][i];
            for (int c = i; c < n; c++)
                a[r][c] -= f * a[i][c];
            b[r] -= f * b[i];
        }
    for (int i = n - 1; i >= 0; i--) {
        for (int c = i + 1; c < n; c++)
            b[i] -= a[i][c] * b[c];
        b[i] /= a[i][i];
    }
}

/* The row's free ordinates by least squares against its points as given (ordinates 1 .. d - 2),
 * then those points from (G1), the twists (set by join_twist) left as they are. */
static void fit_row(G1Edges *g, int j, int m) {
    int n = g->patch->sides, d = g->patch->degree, free[MAX_ORDINATES], count = 0;
    G1Row *row = &g->row[j][m];
    for (int i = 1; i < d - 4; i++)
        if (!row->fixed[i])
            free[count++] = i;
    if (count > 0) {
        double a[2 * MAX_ORDINATES][2 * MAX_ORDINATES] = {{0}}, b[2 * MAX_ORDINATES] = {0};
        for (int k = 1; k <= d - 2; k++) {
            Vec3 columns[2 * MAX_ORDINATES];
            Vec3 known = vec3_add(row_base(g, j, k), row_sum(g, j, row, k, 0, d - 4));
            for (int f = 0; f < count; f++) { /* row_sum counted free ordinates: zero so far */
                int l = k - free[f];
                double w = l >= 0 && l <= 3 ? product_weight(d, free[f], l) : 0.0;
                columns[2 * f] = vec3_scale(g->tangent[j][l < 0 || l > 3 ? 0 : l], w);
                columns[2 * f + 1] = vec3_scale(g->cross[j][l < 0 || l > 3 ? 0 : l], w);
            }
            Vec3 residual = vec3_sub(*row_point(g, j, m, k), known);
            for (int r = 0; r < 2 * count; r++) {
                b[r] += vec3_dot(columns[r], residual);
                for (int c = 0; c < 2 * count; c++)
                    a[r][c] += vec3_dot(columns[r], columns[c]);
            }
        }
        solve_small(2 * count, a, b);
        for (int f = 0; f < count; f++) {
            row->p[free[f]] = b[2 * f];
            row->q[free[f]] = b[2 * f + 1];
        }
    }
    for (int k = 1; k <= d - 2; k++) {
        bool twist = (k == 1 && m == (j + n - 1) % n) || (k == d - 2 && m == (j + 2) % n);
        if (!twist)
            *row_point(g, j, m, k) = vec3_add(row_base(g, j, k), row_sum(g, j, row, k, 0, d - 4));
    }
}

void spatch_join_g1(SPatch *patch, const Vec3 (*tangent)[4], const Vec3 (*cross)[4]) {
    G1Edges g;
    memset(&g, 0, sizeof g);
    g.patch = patch;
    g.tangent = tangent;
    g.cross = cross;
    int n = patch->sides;
    if (patch->degree < 6 || (n == 3 && patch->degree < 7))
        return; /* no inner ordinate for the twists (see above): the caller's degree is wrong */
    for (int c = 0; c < n; c++)
        join_corner(&g, c);
    for (int c = 0; c < n; c++)
        join_twist(&g, c);
    for (int j = 0; j < n; j++)
        for (int m = 0; m < n; m++)
            if (m != j && m != (j + 1) % n)
                fit_row(&g, j, m);
}
