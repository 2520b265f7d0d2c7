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
 * The model is memoryless: history is untouched.
 */
#include <math.h>

#include "contact_internal.h"

static ContactForce spring_damper_force(const ContactParams *p, const ContactHistory *h,
                                        const ContactKinematics *k) {
    (void)h;
    double f = p->stiffness * k->depth + p->damping * k->depth_rate;
    if (p->clamp_attraction && f < 0.0)
        f = 0.0;
    return (ContactForce){.normal = f, .tangent = {0, 0, 0}};
}

static void spring_damper_begin(const ContactParams *p, ContactHistory *h,
                                const ContactKinematics *k) {
    (void)p;
    h->t_begin = k->t;
    h->depth_max = k->depth;
}

static int spring_damper_commit(const ContactParams *p, ContactHistory *h,
                                const ContactKinematics *k) {
    (void)p;
    if (k->depth > h->depth_max)
        h->depth_max = k->depth;
    return CONTACT_EVENT_NONE;
}

static double spring_damper_fixed_step(const ContactParams *p) {
    (void)p;
    return 0.0;
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

const ContactModelClass contact_spring_damper_class = {
    .name = "spring_damper",
    .description = "linear spring/damper f = k g + b dg/dt while penetrating",
    .source = "004 4.4.2, 4.8 eqs. 4.89-4.93",
    .force = spring_damper_force,
    .begin = spring_damper_begin,
    .commit = spring_damper_commit,
    .fixed_step = spring_damper_fixed_step,
    .time_scale = spring_damper_time_scale,
    .potential = spring_damper_potential,
};
