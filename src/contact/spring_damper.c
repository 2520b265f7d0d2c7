/* Linear spring/damper contact: f = k g + b dg/dt while the penetration g > 0.
 *
 * Source: 004 (Siira) 4.4.2 "Spring-Damper" and 4.8 eqs. 4.89-4.93 (restitution of a unit mass on
 * a spring/damper, and of n in parallel); VALIDATION.md V1-V2. The force is applied for g > 0
 * without clamping by default, exactly as V1 states: then the contact ends after half a damped
 * period and the restitution is r = exp(-zeta pi / sqrt(1 - zeta^2)) whatever the impact
 * speed. Near separation the damper term pulls (f < 0) because dg/dt < 0 while g -> 0; the
 * clamp_attraction option sets f = max(0, f) instead, which is physically nicer (no sticky
 * pull) but changes the restitution away from the closed form.
 *
 * The model is memoryless apart from the deepest point and the friction state.
 *
 * Also the restitution helper of the harmonic penalty model (000 2.4.3, the same law):
 * Chatterjee's e = 1 / (1 + 2.5 beta + 4 beta^2), beta = c / (2 sqrt(k m)) (000 eq. 2.14).
 */
#include <math.h>

#include "contact_internal.h"

static double spring_damper_normal(const ContactParams *p, const ContactKinematics *k) {
    double f = p->stiffness * k->depth + p->damping * k->depth_rate;
    if (p->clamp_attraction && f < 0.0)
        f = 0.0;
    return f;
}

static ContactForce spring_damper_force(const ContactParams *p, const ContactHistory *h,
                                        const ContactKinematics *k) {
    return contact_force_with_friction(p, h, k, spring_damper_normal(p, k));
}

static void spring_damper_begin(const ContactParams *p, ContactHistory *h,
                                const ContactKinematics *k) {
    (void)p;
    contact_begin_common(h, k);
}

static int spring_damper_commit(const ContactParams *p, ContactHistory *h,
                                const ContactKinematics *k) {
    if (k->depth > h->depth_max)
        h->depth_max = k->depth;
    contact_friction_commit(p, h, k, spring_damper_normal(p, k));
    return CONTACT_EVENT_NONE;
}

/* The shortest time scale is the undamped period fraction 1/omega_n = sqrt(m/k). */
static double spring_damper_time_scale(const ContactParams *p, double effective_mass) {
    return sqrt(effective_mass / p->stiffness);
}

static double spring_damper_potential(const ContactParams *p, const ContactHistory *h,
                                      const ContactKinematics *k) {
    (void)h;
    return k->depth > 0.0 ? 0.5 * p->stiffness * k->depth * k->depth : 0.0;
}

static const ContactParamDecl param_clamp_attraction = {
    .prop = {.name = "clamp_attraction",
             .type = PROP_BOOL,
             .unit = "",
             .description =
                 "never let the contact pull the bodies together: f = max(0, k g + b dg/dt)",
             .mutability = PROP_LIVE,
             .default_value = {.type = PROP_BOOL, .boolean = false}},
    .store = CONTACT_PARAM_MEMBER,
    .offset = offsetof(ContactParams, clamp_attraction)};
static const ContactParamDecl *const spring_damper_params[] = {&param_clamp_attraction};

const ContactModelClass contact_spring_damper_class = {
    .name = "spring_damper",
    .description = "linear spring/damper f = k g + b dg/dt while penetrating",
    .source = "004 4.4.2, 4.8 eqs. 4.89-4.93",
    .params = spring_damper_params,
    .param_count = 1,
    .force = spring_damper_force,
    .begin = spring_damper_begin,
    .commit = spring_damper_commit,
    .fixed_step = contact_no_fixed_step,
    .time_scale = spring_damper_time_scale,
    .force_ignores_effective_mass = true,
    .ignores_effective_mass = true,
    .potential = spring_damper_potential,
};

double contact_harmonic_restitution(double beta) {
    return 1.0 / (1.0 + 2.5 * beta + 4.0 * beta * beta);
}
