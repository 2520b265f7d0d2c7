/* Siira's internal friction contact model (seed 004, 4.6, eqs. 4.75-4.87; equilibrium 4.8.1
 * eq. 4.91, Fig. 4.15, and 4.8.5).
 *
 * The conservative part F(g) = k g^n (eqs. 4.86-4.87) is scaled by (1 + f) while the contact
 * compresses (dg/dt > 0 in our sign, penetration positive) and by (1 - f) while it restores
 * (eqs. 4.77-4.78, 4.84-4.85). With f = (1 - r^2)/(1 + r^2) (eq. 4.83) the energies of the two
 * phases are in the ratio r^2 whatever the impact speed and whatever the number of vertices
 * that touch: each vertex uses the same factor f (4.8.3), which is what the spring/damper
 * cannot do (VALIDATION.md V2-V3).
 *
 * The phase is read from the sign of dg/dt at the instant, so force() stays a pure function of
 * the kinematics: the force has a jump at the turning point (the cusp of Fig. 4.11), which the
 * variable-step integrators resolve by shortening the step. A turning point at dg/dt = 0 is
 * restitution, as in Fig. 4.15.
 *
 * A fixed-step RK4 cannot resolve that jump: a stage on the other side of dg/dt = 0 errs by
 * about 2 f F v dt per switch, of either sign, which made resting piles tremble and their
 * energy rise (docs/performance.md, issue 11). With phase_ramp_time tau > 0 the factor +-f is
 * f tanh(v / w), w = 2 f F(g) tau / m_eff: the jump 2 f F spread over the speed it gives the
 * contact's effective mass in tau. Near v = 0 that is a damper of rate 1 / (2 tau) per contact,
 * so RK4 needs tau of a few steps when several contacts press one body; the dissipated power f F(g)
 * v tanh(v / w) is never negative, so the smoothed law is still passive, and the band of eq. 4.91
 * is its limit (1 -+ f) F(g) for |v| >> w. A body at rest settles at F(g) = W instead of anywhere
 * in the band. An impact at speed v0 loses about 1.6 f (w / v0)^2 of r^2 (the turning point's
 * share), so tau must stay well under the contact's period.
 *
 * Equilibrium (4.8.1, 4.8.5): a contact whose share W of the external load lies between the
 * restitution and the compression forces, (1 - f) F(g) <= W <= (1 + f) F(g), can hold the body
 * still in either phase: for F = k g this is eq. 4.91, W / (k (1 + f)) <= g <= W / (k (1 - f)).
 * commit() reports CONTACT_EVENT_EQUILIBRIUM at the first accepted step where that holds and
 * |dg/dt| is below the velocity tolerance, and not again until the contact leaves that state.
 */
#include <math.h>

#include "contact_internal.h"

/* s in [-1, 1] of (1 + s f) F(g): the sign of dg/dt, or its ramp (see the top). */
static double phase_sign(const ContactParams *p, const ContactKinematics *k, double F) {
    if (p->phase_ramp_time > 0.0 && k->effective_mass > 0.0 && p->if_factor > 0.0 && F > 0.0) {
        double width = 2.0 * p->if_factor * F * p->phase_ramp_time / k->effective_mass;
        return tanh(k->depth_rate / width);
    }
    return k->depth_rate > 0.0 ? 1.0 : -1.0;
}

static double internal_friction_normal(const ContactParams *p, const ContactKinematics *k) {
    double F = contact_power_force(p->stiffness, p->exponent, k->depth);
    return (1.0 + phase_sign(p, k, F) * p->if_factor) * F;
}

static ContactForce internal_friction_force(const ContactParams *p, const ContactHistory *h,
                                            const ContactKinematics *k) {
    return contact_force_with_friction(p, h, k, internal_friction_normal(p, k));
}

static void internal_friction_begin(const ContactParams *p, ContactHistory *h,
                                    const ContactKinematics *k) {
    (void)p;
    contact_begin_common(h, k);
    h->in_equilibrium = false;
}

/* Eq. 4.91 in force form, so that it holds for F = k g^n as well as for k g. */
static bool internal_friction_holds_load(const ContactParams *p, const ContactKinematics *k) {
    if (!(k->load > 0.0) || k->depth <= 0.0)
        return false;
    if (fabs(k->depth_rate) >= contact_equilibrium_speed(p, k->load, k->effective_mass))
        return false;
    double F = contact_power_force(p->stiffness, p->exponent, k->depth);
    return (1.0 - p->if_factor) * F <= k->load && k->load <= (1.0 + p->if_factor) * F;
}

/* F^-1: the depth at which F(g) = force. */
static double power_depth(const ContactParams *p, double force) {
    return pow(force / p->stiffness, 1.0 / p->exponent);
}

/* Derived tolerance (004 4.8.5, eq. 4.91): from the resting depth g_w, F(g_w) = W, a contact
 * moving out restores with (1 - f) F(g) < W, so the load decelerates it; it stays in the band
 * while it stops above g_lo, (1 + f) F(g_lo) = W, i.e. while its kinetic energy is under
 * W (g_w - g_lo) - (1 - f) (E(g_w) - E(g_lo)), E the integral of F. Moving in, it would have
 * to climb to (1 - f) F(g_hi) = W, which takes more (the narrower side decides). For F = k g
 * this is v = (W f / (1 + f)) sqrt((3 + f) / (k m)). */
double contact_equilibrium_speed(const ContactParams *p, double load, double effective_mass) {
    if (p->velocity_tolerance > 0.0)
        return p->velocity_tolerance;
    if (!(load > 0.0) || !(effective_mass > 0.0) || !(p->if_factor > 0.0) || !(p->stiffness > 0.0))
        return 0.0;
    double g_rest = power_depth(p, load);
    double g_lo = power_depth(p, load / (1.0 + p->if_factor));
    double stored = contact_power_energy(p->stiffness, p->exponent, g_rest) -
                    contact_power_energy(p->stiffness, p->exponent, g_lo);
    double absorbed = load * (g_rest - g_lo) - (1.0 - p->if_factor) * stored;
    return absorbed > 0.0 ? sqrt(2.0 * absorbed / effective_mass) : 0.0;
}

static int internal_friction_commit(const ContactParams *p, ContactHistory *h,
                                    const ContactKinematics *k) {
    if (k->depth > h->depth_max)
        h->depth_max = k->depth;
    contact_friction_commit(p, h, k, internal_friction_normal(p, k));
    bool holds = internal_friction_holds_load(p, k);
    int events = CONTACT_EVENT_NONE;
    if (holds && !h->in_equilibrium)
        events |= CONTACT_EVENT_EQUILIBRIUM;
    h->in_equilibrium = holds;
    return events;
}

/* 1 / omega of the stiffer (compression) spring; for n != 1 the linear k stands in for the
 * local stiffness, which is what the coarse-step warning needs. */
static double internal_friction_time_scale(const ContactParams *p, double effective_mass) {
    return sqrt(effective_mass / ((1.0 + p->if_factor) * p->stiffness));
}

static double internal_friction_potential(const ContactParams *p, const ContactHistory *h,
                                          const ContactKinematics *k) {
    (void)h;
    return contact_power_energy(p->stiffness, p->exponent, k->depth);
}

const ContactParamDecl contact_param_exponent = CONTACT_REAL_PARAM(
    "exponent", "", "exponent n of F(g) = k g^n (internal friction, Hunt-Crossley)", 0.5, 3.0,
    false, 1.0, exponent);
/* Also the reduced resolver's and the sleep test's speed for every model (engine_sleep.c). */
const ContactParamDecl contact_param_velocity_tolerance =
    CONTACT_REAL_PARAM("velocity_tolerance", "m/s",
                       "internal friction: speed dg/dt below which a held contact is in "
                       "equilibrium (0: derived per contact from its equilibrium band, 004 4.8.5)",
                       0.0, 1e3, false, 1e-5, velocity_tolerance);
const ContactParamDecl contact_param_phase_ramp_time =
    CONTACT_REAL_PARAM("phase_ramp_time", "s",
                       "internal friction: time over which the phase switch at dg/dt = 0 is spread "
                       "(0: the jump; with RK4 a few of its steps, docs/contact-models.md)",
                       0.0, 1.0, false, 0.0, phase_ramp_time);
static const ContactParamDecl *const internal_friction_params[] = {
    &contact_param_exponent, &contact_param_velocity_tolerance, &contact_param_phase_ramp_time};

const ContactModelClass contact_internal_friction_class = {
    .name = "internal_friction",
    .description = "Siira internal friction: (1+f) F(g) compressing, (1-f) F(g) restoring, "
                   "F = k g^n, f = (1-r^2)/(1+r^2)",
    .source = "004 4.6 eqs. 4.75-4.87, 4.8.1 eq. 4.91, 4.8.5",
    .params = internal_friction_params,
    .param_count = 3,
    .force = internal_friction_force,
    .begin = internal_friction_begin,
    .commit = internal_friction_commit,
    .fixed_step = contact_no_fixed_step,
    .time_scale = internal_friction_time_scale,
    .tests_equilibrium = true,
    .potential = internal_friction_potential,
};
