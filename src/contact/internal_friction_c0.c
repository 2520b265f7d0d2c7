/* The C0 internal friction model for haptic devices (seed 004, App. D, eqs. D.159-D.170,
 * Fig. D.23).
 *
 * Internal friction (internal_friction.c) jumps from (1+f) F(g) to (1-f) F(g) at the deepest
 * point g_max. Here the jump is replaced by a line tilted over a width e = h g_max: from
 * (g_max, (1+f) F(g_max)) down to (g_max - e, (1-f) F(g_max - e)), and the restoring force
 * follows (1-f) F(g) below that. The force is then a function of g and of the deepest point so
 * far only, continuous and monotonic in g (a position-only law a haptic device can render):
 *     g >= g_max:            (1+f) F(g)            (compression, g_max grows with g)
 *     g_max - e <= g < g_max: the tilted line
 *     g < g_max - e:          (1-f) F(g)
 * Unloading and reloading below g_max follow the same curve, so they store and return energy
 * without loss; only compression to a new depth dissipates. The restitution energy is
 * E_r = a ((1-f) + 2 h f) with a = the integral of F to g_max (D.167, exact for F = k g), so the
 * single-contact restitution r keeps r^2 = E_r / E_c with
 *     f = (1 - r^2) / (1 + r^2 - 2h)                                      (D.170)
 * which needs h < r^2 (f < 1); h -> 0 gives back eq. 4.83.
 */
#include <math.h>

#include "contact_internal.h"

typedef struct TiltedCurve {
    double g_max;  /* deepest point so far, including this instant */
    double g_knee; /* g_max - e, where the tilted line meets (1-f) F */
    double f_top;  /* (1+f) F(g_max) */
    double f_knee; /* (1-f) F(g_knee) */
} TiltedCurve;

static TiltedCurve tilted_curve(const ContactParams *p, const ContactHistory *h, double g) {
    TiltedCurve c;
    c.g_max = g > h->depth_max ? g : h->depth_max;
    c.g_knee = c.g_max * (1.0 - p->tilt);
    c.f_top = (1.0 + p->if_factor) * contact_power_force(p->stiffness, p->exponent, c.g_max);
    c.f_knee = (1.0 - p->if_factor) * contact_power_force(p->stiffness, p->exponent, c.g_knee);
    return c;
}

static double c0_normal(const ContactParams *p, const ContactHistory *h, double g) {
    if (g <= 0.0)
        return 0.0;
    TiltedCurve c = tilted_curve(p, h, g);
    if (g >= c.g_max)
        return c.f_top;
    if (g > c.g_knee && c.g_max > c.g_knee)
        return c.f_knee + (g - c.g_knee) / (c.g_max - c.g_knee) * (c.f_top - c.f_knee);
    return (1.0 - p->if_factor) * contact_power_force(p->stiffness, p->exponent, g);
}

static ContactForce c0_force(const ContactParams *p, const ContactHistory *h,
                             const ContactKinematics *k) {
    return contact_force_with_friction(p, h, k, c0_normal(p, h, k->depth));
}

static void c0_begin(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    (void)p;
    contact_begin_common(h, k);
}

static int c0_commit(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    if (k->depth > h->depth_max)
        h->depth_max = k->depth;
    contact_friction_commit(p, h, k, c0_normal(p, h, k->depth));
    return CONTACT_EVENT_NONE;
}

/* The tilted line is the stiffest part: slope about k ((1-f) + 2f/h) for F = k g. */
static double c0_time_scale(const ContactParams *p, double effective_mass) {
    double h = p->tilt > 1e-3 ? p->tilt : 1e-3;
    double slope = p->stiffness * ((1.0 - p->if_factor) + 2.0 * p->if_factor / h);
    return sqrt(effective_mass / slope);
}

/* The energy the contact gives back if it unloads from here: the integral of the unloading
 * curve from 0 to g. It drops below the work done only when g_max grows (the dissipation). */
static double c0_potential(const ContactParams *p, const ContactHistory *h,
                           const ContactKinematics *k) {
    double g = k->depth;
    if (g <= 0.0)
        return 0.0;
    TiltedCurve c = tilted_curve(p, h, g);
    double below = g < c.g_knee ? g : c.g_knee;
    double e = (1.0 - p->if_factor) * contact_power_energy(p->stiffness, p->exponent, below);
    if (g > c.g_knee)
        e += 0.5 * (g - c.g_knee) * (c.f_knee + c0_normal(p, h, g));
    return e;
}

static const ContactParamDecl param_tilt = CONTACT_REAL_PARAM(
    "tilt", "", "internal_friction_c0: width h of the tilted line, in g_max (< r^2)", 0.0, 1.0,
    false, 0.1, tilt);
static const ContactParamDecl *const c0_params[] = {&contact_param_exponent, &param_tilt};

const ContactModelClass contact_internal_friction_c0_class = {
    .name = "internal_friction_c0",
    .description = "Siira internal friction with C0 continuity for haptics: tilted "
                   "compression-to-restitution line of width h g_max",
    .source = "004 App. D eqs. D.159-D.170",
    .params = c0_params,
    .param_count = 2,
    .force = c0_force,
    .begin = c0_begin,
    .commit = c0_commit,
    .fixed_step = contact_no_fixed_step,
    .time_scale = c0_time_scale,
    .force_ignores_effective_mass = true,
    .ignores_effective_mass = true,
    .potential = c0_potential,
};
