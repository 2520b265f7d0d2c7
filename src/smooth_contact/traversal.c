/* Patch boundary traversal, seed 002 4.5: the contact leaves a patch's domain at the end of a
 * step; it is moved to the adjacent patch at the crossing and the rest of the step is integrated
 * there.
 *
 * 4.5.1: the crossing is found on the segment between the contact's parameters at the start and
 * the end of the step (eq. 4.50-4.51's linear estimate), then refined by integrating from the
 * step's start to the time the contact meets the edge (4.5.1's other option). 4.5.2: on the
 * adjacent patch the point at fraction a along the edge is at 1 - a (eq. 4.52 with g(u) = 1 - u,
 * smooth_surface_neighbour); psi gains the signed angle between the two patches' contact-frame x
 * axes at that point (eq. 4.53, with atan2 instead of acos and a sign test). 4.5.3: the new rates
 * reproduce the relative spatial velocity (eq. 4.54; solved in the kinetic-energy metric, which is
 * exact when the two patches share the tangent plane). 4.5.4: corners by repeating, taking the
 * first edge the path crosses. 4.5.5: a contact within `margin` outside the domain stays.
 * Inside a patch, a step is also cut where the contact crosses a line on which the surface is
 * only C2 (smooth_surface_first_break: the sub-triangles of Loop faces at extraordinary
 * vertices), by the same search as an edge, and the rest of the step goes on with the piece
 * across the line (SmoothContactState.piece_*), so no RK4 step, and no stage of one, mixes two
 * polynomials: q'' jumps across the line with the surface's third derivatives, and a part of a
 * step whose last stage landed past the line took an error in q' of its length / 6 times that
 * jump (the V13 bowl on such a face drifted 1.6e-3 m in 10 s; with pieces 6.2e-8 m,
 * docs/smooth-contact.md). */
#include "smooth_internal.h"

#include <math.h>
#include <string.h>

enum { TRAVERSE_MAX = 8, BREAKS_MAX = 32 };
static const double TRAVERSE_MARGIN = 1e-9; /* 4.5.5's epsilon, in parameter units */

/* Signed distance of (s, t) outside edge e of d (> 0 outside). */
static double outside(const SurfaceDomain *d, int e, double s, double t) {
    const double *p = d->corner[e], *q = d->corner[(e + 1) % d->count];
    double ex = q[0] - p[0], ey = q[1] - p[1];
    return ((s - p[0]) * ey - (t - p[1]) * ex) / hypot(ex, ey);
}

/* The first edge the segment (s0, t0) -> (s1, t1) crosses: its index, the segment's fraction
 * beta at the crossing and the edge's fraction alpha. -1 when none. */
static int first_crossing(const SurfaceDomain *d, double s0, double t0, double s1, double t1,
                          double *beta, double *alpha) {
    int best = -1;
    *beta = 2.0;
    for (int e = 0; e < d->count; e++) {
        double g0 = outside(d, e, s0, t0), g1 = outside(d, e, s1, t1);
        if (!(g1 > TRAVERSE_MARGIN) || g0 >= g1)
            continue;
        double b = g0 > 0.0 ? 0.0 : g0 / (g0 - g1);
        double s = s0 + b * (s1 - s0), t = t0 + b * (t1 - t0);
        const double *p = d->corner[e], *q = d->corner[(e + 1) % d->count];
        double ex = q[0] - p[0], ey = q[1] - p[1];
        double a = ((s - p[0]) * ex + (t - p[1]) * ey) / (ex * ex + ey * ey);
        if (a < -1e-9 || a > 1.0 + 1e-9)
            continue; /* crosses the edge's line beyond the corner: another edge first */
        /* 4.5.4: of two edges crossed at one corner, the one that ends there */
        if (b < *beta - 1e-12 || (fabs(b - *beta) <= 1e-12 && a > *alpha)) {
            best = e;
            *beta = b;
            *alpha = a < 0.0 ? 0.0 : a > 1.0 ? 1.0 : a;
        }
    }
    return best;
}

/* The fraction along edge e of the point nearest (s, t), in [0, 1]. */
static double edge_fraction(const SurfaceDomain *d, int e, double s, double t) {
    const double *p = d->corner[e], *q = d->corner[(e + 1) % d->count];
    double ex = q[0] - p[0], ey = q[1] - p[1];
    double a = ((s - p[0]) * ex + (t - p[1]) * ey) / (ex * ex + ey * ey);
    return a < 0.0 ? 0.0 : a > 1.0 ? 1.0 : a;
}

/* Integrates from `start` (inside) for the time tau (in [0, span]) at which side `which` meets
 * edge `edge` (the seed's first option in 4.5.1, "integrate with smaller time steps until the
 * contact position ... is sufficiently close to the boundary"): a bracketed secant (Illinois)
 * search on the contact's signed distance past the edge, each trial one RK4 step from the start,
 * so the crossing state carries RK4's accuracy instead of the linear interpolation's O(h^2). */
static double past_line(const double line[3], const double *q) {
    return line[0] * q[0] + line[1] * q[1] - line[2];
}

static IssimStatus state_at_line(const SmoothContactSystem *sys, const SmoothContactState *start,
                                 int which, const double line[3], double span, Vec3 force,
                                 Vec3 torque, double *tau, SmoothContactState *at,
                                 IssimError *err) {
    double lo = 0.0, hi = span;
    double g_lo = past_line(line, start->q + 2 * which), g_hi = 0.0;
    SmoothContactState trial = *start;
    IssimStatus status = smooth_contact_rk4(sys, &trial, hi, force, torque, err);
    if (status != ISSIM_OK)
        return status;
    g_hi = past_line(line, trial.q + 2 * which);
    if (!(g_lo <= 0.0 && g_hi > 0.0)) { /* no bracket: take the linear guess as 4.5.1 does */
        *at = *start;
        double f = *tau / (span > 0.0 ? span : 1.0);
        for (int i = 0; i < SMOOTH_COORDINATES; i++) {
            at->q[i] += f * (trial.q[i] - start->q[i]);
            at->rate[i] += f * (trial.rate[i] - start->rate[i]);
        }
        return ISSIM_OK;
    }
    int side = 0;
    double t = *tau > lo && *tau < hi ? *tau : 0.5 * (lo + hi);
    for (int iteration = 0; iteration < 40; iteration++) {
        trial = *start;
        status = smooth_contact_rk4(sys, &trial, t, force, torque, err);
        if (status != ISSIM_OK)
            return status;
        double g = past_line(line, trial.q + 2 * which);
        if (fabs(g) < 1e-14 || hi - lo < 1e-15 * span)
            break;
        if (g > 0.0) {
            hi = t;
            g_hi = g;
            if (side == 1)
                g_lo *= 0.5;
            side = 1;
        } else {
            lo = t;
            g_lo = g;
            if (side == -1)
                g_hi *= 0.5;
            side = -1;
        }
        t = lo + (hi - lo) * (-g_lo) / (g_hi - g_lo);
    }
    *tau = t;
    *at = trial;
    return ISSIM_OK;
}

/* Edge e of d as the line a s + b t = c, positive outside (outside()'s distance). */
static void edge_line(const SurfaceDomain *d, int e, double line[3]) {
    const double *p = d->corner[e], *q = d->corner[(e + 1) % d->count];
    double ex = q[0] - p[0], ey = q[1] - p[1], len = hypot(ex, ey);
    line[0] = ey / len;
    line[1] = -ex / len;
    line[2] = (p[0] * ey - p[1] * ex) / len;
}

static void edge_point(const SurfaceDomain *d, int e, double a, double *s, double *t) {
    const double *p = d->corner[e], *q = d->corner[(e + 1) % d->count];
    *s = p[0] + a * (q[0] - p[0]);
    *t = p[1] + a * (q[1] - p[1]);
}

/* Moves side `which` (0: a's (s, t), 1: b's (u, v)) of the crossing state `st` from its patch
 * across `edge` at fraction alpha; rates from the relative spatial velocity (eq. 4.54). */
static IssimStatus cross_edge(const SmoothContactSystem *sys, SmoothContactState *st, int which,
                              int edge, double alpha, IssimError *err) {
    const SmoothSurface *surface = which == 0 ? sys->surface_a : sys->surface_b;
    int *patch = which == 0 ? &st->patch_a : &st->patch_b;
    int *piece = which == 0 ? &st->piece_a : &st->piece_b;
    double *param = st->q + 2 * which;
    int other, other_edge;
    if (!smooth_surface_neighbour(surface, *patch, edge, &other, &other_edge))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "smooth contact: the contact left surface '%s' across the open "
                               "edge %d of patch %d",
                               smooth_surface_name(surface), edge, *patch);
    SmoothKinematics before;
    edge_point(smooth_surface_domain(surface, *patch), edge, alpha, &param[0], &param[1]);
    IssimStatus status = smooth_kinematics(sys, st, &before, err);
    if (status != ISSIM_OK)
        return status;
    Vec3 x_old = before.side[which].axis[0], normal = before.side[which].axis[2];
    *patch = other;
    const SurfaceDomain *domain = smooth_surface_domain(surface, other);
    edge_point(domain, other_edge, 1.0 - alpha, &param[0], &param[1]);
    /* the piece just inside the edge (its inward normal: the edge runs counter-clockwise) */
    double line[3];
    edge_line(domain, other_edge, line);
    *piece = smooth_surface_piece(surface, other, param[0], param[1], -line[0], -line[1]);
    ContactSide side;
    status = contact_side_evaluate(surface, other, *piece, param[0], param[1], &side, err);
    if (status != ISSIM_OK)
        return status;
    /* eq. 4.53: with R = R2 Rpsi R1^T fixed, a frame turned by theta about its own normal on
     * either side turns psi by +theta */
    st->q[4] +=
        atan2(vec3_dot(vec3_cross(x_old, side.axis[0]), normal), vec3_dot(x_old, side.axis[0]));
    SmoothKinematics after;
    status = smooth_kinematics(sys, st, &after, err);
    if (status != ISSIM_OK)
        return status;
    if (!smooth_project_rates(sys, &after, before.omega, before.vel, NULL, 0, st->rate))
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "smooth contact: singular contact equations on patch %d of '%s'",
                               other, smooth_surface_name(surface));
    return ISSIM_OK;
}

IssimStatus smooth_contact_traverse(const SmoothContactSystem *sys,
                                    const SmoothContactState *before, SmoothContactState *st,
                                    double h, Vec3 force, Vec3 torque, int *crossed,
                                    IssimError *err) {
    *crossed = 0;
    SmoothContactState start = *before;
    double remaining = h;
    int breaks = 0;
    for (int round = 0; round < TRAVERSE_MAX;) {
        int which = -1, edge = -1;
        double beta = 2.0, alpha = 0.0, line[3];
        for (int side = 0; side < 2; side++) {
            const SmoothSurface *surface = side == 0 ? sys->surface_a : sys->surface_b;
            int patch = side == 0 ? st->patch_a : st->patch_b;
            const double *p0 = start.q + 2 * side, *p1 = st->q + 2 * side;
            double b = 2.0, a = 0.0, at_break[3];
            int e = first_crossing(smooth_surface_domain(surface, patch), p0[0], p0[1], p1[0],
                                   p1[1], &b, &a);
            if (e >= 0 && b < beta) {
                which = side;
                edge = e;
                beta = b;
                alpha = a;
                edge_line(smooth_surface_domain(surface, patch), e, line);
            }
            if (breaks < BREAKS_MAX &&
                smooth_surface_first_break(surface, patch, p0, p1, at_break, &b) && b < beta) {
                which = side;
                edge = -1;
                beta = b;
                memcpy(line, at_break, sizeof line);
            }
        }
        if (which < 0)
            return ISSIM_OK;
        /* the state at the crossing: eq. 4.50-4.51's linear guess, refined by integrating
         * from the step's start to the time the contact meets the edge (or the break) */
        SmoothContactState at;
        double tau = beta * remaining;
        IssimStatus status =
            state_at_line(sys, &start, which, line, remaining, force, torque, &tau, &at, err);
        if (status != ISSIM_OK)
            return status;
        if (edge < 0) {
            /* a break inside the patch (a line where the surface is only C2): the step goes on
             * from there on the same patch with the piece across the line (the line is
             * positive on the side the path goes to), so no RK4 step mixes two pieces */
            breaks++;
            const SmoothSurface *surface = which == 0 ? sys->surface_a : sys->surface_b;
            int *piece = which == 0 ? &at.piece_a : &at.piece_b;
            *piece = smooth_surface_piece(surface, which == 0 ? at.patch_a : at.patch_b,
                                          at.q[2 * which], at.q[2 * which + 1], line[0], line[1]);
            start = at;
            *st = at;
            remaining *= 1.0 - (remaining > 0.0 ? tau / remaining : 0.0);
            if (remaining > 0.0) {
                status = smooth_contact_rk4(sys, st, remaining, force, torque, err);
                if (status != ISSIM_OK)
                    return status;
            }
            continue;
        }
        round++;
        const SurfaceDomain *domain = smooth_surface_domain(
            which == 0 ? sys->surface_a : sys->surface_b, which == 0 ? at.patch_a : at.patch_b);
        alpha = edge_fraction(domain, edge, at.q[2 * which], at.q[2 * which + 1]);
        beta = remaining > 0.0 ? tau / remaining : 0.0;
        status = cross_edge(sys, &at, which, edge, alpha, err);
        if (status != ISSIM_OK)
            return status;
        (*crossed)++;
        start = at;
        *st = at;
        remaining *= 1.0 - beta;
        if (remaining > 0.0) {
            status = smooth_contact_rk4(sys, st, remaining, force, torque, err);
            if (status != ISSIM_OK)
                return status;
        }
    }
    return issim_error_set(err, ISSIM_ERR_NUMERIC,
                           "smooth contact: more than %d patch crossings in one step of %g s on "
                           "'%s' / '%s' (a smaller step is needed)",
                           TRAVERSE_MAX, h, smooth_surface_name(sys->surface_a),
                           smooth_surface_name(sys->surface_b));
}
