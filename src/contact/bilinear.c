/* Stronge's bilinear contact and Chatterjee's through-the-origin variant (seed 000, 2.4.2,
 * Fig. 2.2): penalty realisations of the energetic coefficient of restitution (eq. 2.10).
 *
 * Stronge: loading with k1 g while the penetration reaches new depths; unloading along a line
 * of slope k2 = k1 / e^2 from the deepest point (g_max, k1 g_max) down to zero force at
 * g_r = g_max (1 - e^2); the contact carries no force below g_r (the permanent set). The
 * energies of the two phases are k1 g_max^2 / 2 and e^2 of it. Reloading before separation
 * goes back up the same unloading line (elastic) until g_max. Steep k2 for small e is the
 * model's numerical weakness noted in 2.4.2.
 *
 * Chatterjee: both lines pass through the origin; at the deepest point the force jumps down
 * from k1 g_max to k2 g_max with k2 = e^2 k1 < k1, and unloading (and reloading below g_max)
 * follows k2 g.
 *
 * g_max is the committed deepest point (history) or the current depth if deeper; a contact
 * that has started to separate (dg/dt < 0) is unloading even before the step that passed the
 * deepest point is committed.
 */
#include <math.h>

#include "contact_internal.h"

static bool bilinear_loading(const ContactHistory *h, const ContactKinematics *k) {
    return k->depth >= h->depth_max && k->depth_rate >= 0.0;
}

static double deepest(const ContactHistory *h, double g) {
    return g > h->depth_max ? g : h->depth_max;
}

static double stronge_normal(const ContactParams *p, const ContactHistory *h,
                             const ContactKinematics *k) {
    double g = k->depth;
    if (g <= 0.0)
        return 0.0;
    if (bilinear_loading(h, k))
        return p->stiffness * g;
    double g_max = deepest(h, g);
    double g_r = g_max * (1.0 - p->stiffness / p->restitution_stiffness);
    return g > g_r ? p->restitution_stiffness * (g - g_r) : 0.0;
}

static double origin_normal(const ContactParams *p, const ContactHistory *h,
                            const ContactKinematics *k) {
    double g = k->depth;
    if (g <= 0.0)
        return 0.0;
    return (bilinear_loading(h, k) ? p->stiffness : p->restitution_stiffness) * g;
}

static ContactForce stronge_force(const ContactParams *p, const ContactHistory *h,
                                  const ContactKinematics *k) {
    return contact_force_with_friction(p, h, k, stronge_normal(p, h, k));
}

static ContactForce origin_force(const ContactParams *p, const ContactHistory *h,
                                 const ContactKinematics *k) {
    return contact_force_with_friction(p, h, k, origin_normal(p, h, k));
}

static void bilinear_begin(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    (void)p;
    contact_begin_common(h, k);
}

static int stronge_commit(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    double normal = stronge_normal(p, h, k);
    if (k->depth > h->depth_max)
        h->depth_max = k->depth;
    contact_friction_commit(p, h, k, normal);
    return CONTACT_EVENT_NONE;
}

static int origin_commit(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    double normal = origin_normal(p, h, k);
    if (k->depth > h->depth_max)
        h->depth_max = k->depth;
    contact_friction_commit(p, h, k, normal);
    return CONTACT_EVENT_NONE;
}

/* The stiffer of the two lines sets the time scale. */
static double bilinear_time_scale(const ContactParams *p, double effective_mass) {
    double k = p->stiffness > p->restitution_stiffness ? p->stiffness : p->restitution_stiffness;
    return sqrt(effective_mass / k);
}

/* Recoverable energy: the area under the line the contact would unload along. */
static double stronge_potential(const ContactParams *p, const ContactHistory *h,
                                const ContactKinematics *k) {
    double g = k->depth;
    if (g <= 0.0)
        return 0.0;
    if (bilinear_loading(h, k))
        return 0.5 * p->stiffness * g * g * p->stiffness / p->restitution_stiffness;
    double g_max = deepest(h, g);
    double g_r = g_max * (1.0 - p->stiffness / p->restitution_stiffness);
    return g > g_r ? 0.5 * p->restitution_stiffness * (g - g_r) * (g - g_r) : 0.0;
}

static double origin_potential(const ContactParams *p, const ContactHistory *h,
                               const ContactKinematics *k) {
    (void)h;
    double g = k->depth;
    return g > 0.0 ? 0.5 * p->restitution_stiffness * g * g : 0.0;
}

const ContactModelClass contact_bilinear_class = {
    .name = "bilinear",
    .description = "Stronge bilinear: k1 g loading, slope k2 = k1/e^2 unloading to a permanent "
                   "set",
    .source = "000 2.4.2 (Stronge), Fig. 2.2",
    .force = stronge_force,
    .begin = bilinear_begin,
    .commit = stronge_commit,
    .fixed_step = contact_no_fixed_step,
    .time_scale = bilinear_time_scale,
    .force_ignores_effective_mass = true,
    .ignores_effective_mass = true,
    .potential = stronge_potential,
};

const ContactModelClass contact_bilinear_origin_class = {
    .name = "bilinear_origin",
    .description = "Chatterjee bilinear through the origin: k1 g loading, k2 g = e^2 k1 g "
                   "unloading",
    .source = "000 2.4.2 (Chatterjee)",
    .force = origin_force,
    .begin = bilinear_begin,
    .commit = origin_commit,
    .fixed_step = contact_no_fixed_step,
    .time_scale = bilinear_time_scale,
    .force_ignores_effective_mass = true,
    .ignores_effective_mass = true,
    .potential = origin_potential,
};
