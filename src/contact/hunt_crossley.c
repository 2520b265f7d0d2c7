/* Hunt and Crossley's nonlinear damped contact (seed 000, 2.4.4, eqs. 2.15-2.17):
 *     f = lambda g^m dg/dt + k g^n,   m = n,   lambda = 3/2 alpha k
 * chosen so that the restitution follows e = 1 - alpha v_i (eq. 2.16) for small alpha v_i. The
 * damping grows with the penetration, so the force starts and ends at zero whatever the speed
 * (no jump at onset, the harmonic penalty model's drawback of 2.4.3). n = 3/2 is the Hertzian
 * choice, n = 1 a linear spring with depth-proportional damping.
 *
 * The force is clamped at zero: with dg/dt < -2/(3 alpha) the damping term would pull, which a
 * contact cannot do; it matters only for fast separations of very lossy contacts.
 */
#include <math.h>

#include "contact_internal.h"

static double hunt_crossley_normal(const ContactParams *p, const ContactKinematics *k) {
    double spring = contact_power_force(p->stiffness, p->exponent, k->depth);
    double f = spring * (1.0 + 1.5 * p->hc_alpha * k->depth_rate); /* k g^n + lambda g^n g' */
    return f > 0.0 ? f : 0.0;
}

static ContactForce hunt_crossley_force(const ContactParams *p, const ContactHistory *h,
                                        const ContactKinematics *k) {
    return contact_force_with_friction(p, h, k, hunt_crossley_normal(p, k));
}

static void hunt_crossley_begin(const ContactParams *p, ContactHistory *h,
                                const ContactKinematics *k) {
    (void)p;
    contact_begin_common(h, k);
}

static int hunt_crossley_commit(const ContactParams *p, ContactHistory *h,
                                const ContactKinematics *k) {
    if (k->depth > h->depth_max)
        h->depth_max = k->depth;
    contact_friction_commit(p, h, k, hunt_crossley_normal(p, k));
    return CONTACT_EVENT_NONE;
}

/* sqrt(m/k): exact for n = 1; for n = 3/2 the local stiffness 3/2 k g^(1/2) is below k for
 * depths under 0.44 m, so this errs on the short side. */
static double hunt_crossley_time_scale(const ContactParams *p, double effective_mass) {
    return sqrt(effective_mass / p->stiffness);
}

static double hunt_crossley_potential(const ContactParams *p, const ContactHistory *h,
                                      const ContactKinematics *k) {
    (void)h;
    return contact_power_energy(p->stiffness, p->exponent, k->depth);
}

static const ContactParamDecl param_alpha = CONTACT_REAL_PARAM(
    "alpha", "s/m", "Hunt-Crossley alpha of e = 1 - alpha v (lambda = 3/2 alpha k)", 0.0, 100.0,
    false, 0.2, hc_alpha);
static const ContactParamDecl *const hunt_crossley_params[] = {&contact_param_exponent,
                                                               &param_alpha};

const ContactModelClass contact_hunt_crossley_class = {
    .name = "hunt_crossley",
    .description = "Hunt-Crossley f = lambda g^n dg/dt + k g^n, lambda = 3/2 alpha k "
                   "(e = 1 - alpha v)",
    .source = "000 2.4.4 eqs. 2.15-2.17",
    .params = hunt_crossley_params,
    .param_count = 2,
    .force = hunt_crossley_force,
    .begin = hunt_crossley_begin,
    .commit = hunt_crossley_commit,
    .fixed_step = contact_no_fixed_step,
    .time_scale = hunt_crossley_time_scale,
    .force_ignores_effective_mass = true,
    .ignores_effective_mass = true,
    .potential = hunt_crossley_potential,
};
