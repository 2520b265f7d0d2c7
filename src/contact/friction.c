/* Coulomb friction with static and kinetic coefficients for penalty contacts, by Goyal's
 * algorithm (seed 000, 5.7, eqs. 5.19-5.26), shared by every normal force law.
 *
 * The tangential part of the 3D penalty law (5.19) is a spring kt and a damper ct between the
 * contact point of body a and an anchor q on body b: f = -(kt s + ct ds/dt), s the point's
 * tangential displacement from the anchor (the surface strain q - p of 5.19, kept in the
 * history as a world vector and projected on the current tangent plane). Over the time dt since
 * the last accepted step the anchor is advanced by the first-order (backward Euler) update of
 * eq. 5.22, which turns 5.19 into the linear system (A + lambda P) f = a of eq. 5.23 with, in
 * the tangent plane, A = I and a = f*, the stick force:
 *     f* = -(kt (s + dt v_t) + ct v_t)                              (lambda = 0, stick)
 * If f* satisfies the Coulomb cone (5.20), |f*| <= mu N, the contact sticks (5.24). Otherwise
 * it slips, the anchor moving along the force as in 5.21 (ds/dt = v_t + lambda f), and
 *     f = f* / (1 + c lambda),  c = kt dt + ct                       (5.23, 5.26)
 * with lambda* the positive root of the cone condition (5.25), |f| = mu_k N:
 *     lambda* = (|f*| / (mu_k N) - 1) / c.
 * Our tangent block of A is isotropic (one kt, one ct), which is why (5.25) has this closed
 * form instead of a quartic.
 *
 * Static and kinetic coefficients (000 5.7 has one mu): a sticking contact breaks away when
 * |f*| > mu_s N; a sliding one keeps sliding until its stick force falls inside mu_k N (the
 * sliding velocity stops or reverses). Using mu_s for the stick test of a sliding contact would
 * make the friction saw-tooth between mu_k N and mu_s N while it slides.
 */
#include <math.h>

#include "contact_internal.h"

typedef struct FrictionSolve {
    Vec3 force;  /* on body a, tangent plane */
    Vec3 spring; /* the spring extension after the step */
    bool sliding;
} FrictionSolve;

static Vec3 tangential(Vec3 v, Vec3 n) {
    return vec3_mad(v, -vec3_dot(v, n), n);
}

static FrictionSolve friction_solve(const ContactParams *p, const ContactHistory *h,
                                    const ContactKinematics *k, double normal) {
    FrictionSolve out = {.force = {0, 0, 0}, .spring = {0, 0, 0}, .sliding = false};
    if (!(normal > 0.0))
        return out; /* no pressure, no friction; a fresh stick begins when it presses again */
    double dt = k->t - h->friction_t;
    if (dt < 0.0)
        dt = 0.0;
    Vec3 v_t = tangential(k->tangent_velocity, k->normal);
    /* What the contact slid since the last commit: the pinned material points' separation
     * when the engine tracks them (the bodies' motion, to the integrator's order), else dt v_t
     * (eq. 5.22's backward Euler: first order in the step, the error that grew with the step
     * in the penalty pile's restitution, docs/performance.md). */
    Vec3 moved = k->has_slip ? k->slip : vec3_scale(v_t, dt);
    Vec3 s_trial = tangential(vec3_add(h->friction_spring, moved), k->normal);
    Vec3 f_star =
        vec3_neg(vec3_mad(vec3_scale(s_trial, p->tangent_stiffness), p->tangent_damping, v_t));
    double f_star_norm = vec3_norm(f_star);
    double mu_stick = h->sliding ? p->friction_kinetic : p->friction_static;
    if (f_star_norm <= mu_stick * normal) {
        out.force = f_star; /* eq. 5.24 */
        out.spring = s_trial;
        return out;
    }
    double limit = p->friction_kinetic * normal;
    out.sliding = true;
    out.force = vec3_scale(f_star, limit / f_star_norm); /* eq. 5.26 */
    double c = p->tangent_stiffness * dt + p->tangent_damping;
    double lambda = c > 0.0 && limit > 0.0 ? (f_star_norm / limit - 1.0) / c : 0.0;
    /* The anchor's new place from 5.19 at the new force: kt s = -f - ct (v_t + lambda f). */
    Vec3 rate = vec3_mad(v_t, lambda, out.force);
    out.spring =
        vec3_scale(vec3_mad(out.force, p->tangent_damping, rate), -1.0 / p->tangent_stiffness);
    return out;
}

Vec3 contact_friction_force(const ContactParams *p, const ContactHistory *h,
                            const ContactKinematics *k, double normal) {
    return friction_solve(p, h, k, normal).force;
}

double contact_friction_potential(const ContactParams *p, const ContactHistory *h) {
    if (!(p->friction_static > 0.0))
        return 0.0;
    return 0.5 * p->tangent_stiffness * vec3_dot(h->friction_spring, h->friction_spring);
}

void contact_friction_begin(ContactHistory *h, const ContactKinematics *k) {
    h->friction_spring = vec3(0, 0, 0);
    h->friction_t = k->t;
    h->sliding = false;
}

void contact_friction_commit(const ContactParams *p, ContactHistory *h, const ContactKinematics *k,
                             double normal) {
    if (p->friction_static > 0.0) {
        FrictionSolve s = friction_solve(p, h, k, normal);
        h->friction_spring = s.spring;
        h->sliding = s.sliding;
    }
    h->friction_t = k->t;
}
