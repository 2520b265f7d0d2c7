/* Hertz's elastic contact of two curved bodies (seed 000, 2.1.1):
 *     P = 4/3 E* R^(1/2) delta^(3/2)
 * with 1/E* = (1 - nu_a^2)/E_a + (1 - nu_b^2)/E_b from the two materials' Young's moduli and
 * Poisson ratios, and 1/R = 1/R_a + 1/R_b from their radii of curvature at the contact (a flat
 * body: radius 0, no term). Purely elastic: an impact returns all its energy (restitution 1)
 * and lasts 2.9432 (15 m / (16 E* sqrt(R)))^(2/5) v^(-1/5) (contact_hertz_duration). Damping
 * comes with Hunt-Crossley (exponent 3/2 and the same stiffness), not here.
 */
#include <math.h>

#include "contact_internal.h"

static double hertz_normal(const ContactParams *p, double g) {
    return g > 0.0 ? p->hertz_coeff * g * sqrt(g) : 0.0;
}

static ContactForce hertz_force(const ContactParams *p, const ContactHistory *h,
                                const ContactKinematics *k) {
    return contact_force_with_friction(p, h, k, hertz_normal(p, k->depth));
}

static void hertz_begin(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    (void)p;
    contact_begin_common(h, k);
}

static int hertz_commit(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    if (k->depth > h->depth_max)
        h->depth_max = k->depth;
    contact_friction_commit(p, h, k, hertz_normal(p, k->depth));
    return CONTACT_EVENT_NONE;
}

/* The contact has no fixed stiffness: the duration of a 1 m/s impact over pi stands in for
 * 1/omega (slower impacts last longer, faster ones shorter: v^(-1/5)). */
static double hertz_time_scale(const ContactParams *p, double effective_mass) {
    return contact_hertz_duration(p->hertz_coeff, effective_mass, 1.0) / M_PI;
}

static double hertz_potential(const ContactParams *p, const ContactHistory *h,
                              const ContactKinematics *k) {
    (void)h;
    double g = k->depth;
    return g > 0.0 ? 0.4 * p->hertz_coeff * g * g * sqrt(g) : 0.0;
}

static const ContactParamDecl hertz_param_decls[] = {
    CONTACT_REAL_PARAM("youngs_modulus_a", "Pa", "Hertz: Young's modulus of the first material",
                       0.0, 1e13, true, 2e11, youngs_a),
    CONTACT_REAL_PARAM("poisson_ratio_a", "", "Hertz: Poisson's ratio of the first material", 0.0,
                       0.5, false, 0.3, poisson_a),
    CONTACT_REAL_PARAM("radius_a", "m", "Hertz: radius of curvature of the first body (0: flat)",
                       0.0, 1e3, false, 0.01, radius_a),
    CONTACT_REAL_PARAM("youngs_modulus_b", "Pa", "Hertz: Young's modulus of the second material",
                       0.0, 1e13, true, 2e11, youngs_b),
    CONTACT_REAL_PARAM("poisson_ratio_b", "", "Hertz: Poisson's ratio of the second material", 0.0,
                       0.5, false, 0.3, poisson_b),
    CONTACT_REAL_PARAM("radius_b", "m", "Hertz: radius of curvature of the second body (0: flat)",
                       0.0, 1e3, false, 0.0, radius_b),
};
static const ContactParamDecl *const hertz_params[] = {
    &hertz_param_decls[0], &hertz_param_decls[1], &hertz_param_decls[2],
    &hertz_param_decls[3], &hertz_param_decls[4], &hertz_param_decls[5],
};

const ContactModelClass contact_hertz_class = {
    .name = "hertz",
    .description = "Hertz P = 4/3 E* R^(1/2) delta^(3/2) from the materials' moduli, Poisson "
                   "ratios and radii (elastic)",
    .source = "000 2.1.1",
    .params = hertz_params,
    .param_count = 6,
    .force = hertz_force,
    .begin = hertz_begin,
    .commit = hertz_commit,
    .fixed_step = contact_no_fixed_step,
    .time_scale = hertz_time_scale,
    .force_ignores_effective_mass = true,
    .ignores_effective_mass = true,
    .potential = hertz_potential,
};
