/* Private: the model classes, one source file each, and what they share. */
#ifndef ISSIM_CONTACT_INTERNAL_H
#define ISSIM_CONTACT_INTERNAL_H

#include <math.h>
#include <stddef.h>

#include "issim/contact.h"

/* A declared parameter (ContactParamDecl) stored in ContactParams.MEMBER: a live real with its
 * range ([MIN, MAX], or (MIN, MAX] when MIN_EXCL) and default; an enum with its names. */
#define CONTACT_REAL_PARAM(NAME, UNIT, DESC, MIN, MAX, MIN_EXCL, DEFAULT, MEMBER)                  \
    {                                                                                              \
        .prop = {.name = NAME,                                                                     \
                 .type = PROP_REAL,                                                                \
                 .unit = UNIT,                                                                     \
                 .description = DESC,                                                              \
                 .min = MIN,                                                                       \
                 .max = MAX,                                                                       \
                 .min_exclusive = MIN_EXCL,                                                        \
                 .mutability = PROP_LIVE,                                                          \
                 .default_value = {.type = PROP_REAL, .real = DEFAULT}},                           \
        .store = CONTACT_PARAM_MEMBER, .offset = offsetof(ContactParams, MEMBER)                   \
    }
#define CONTACT_ENUM_PARAM(NAME, DESC, NAMES, COUNT, DEFAULT, MEMBER)                              \
    {                                                                                              \
        .prop = {.name = NAME,                                                                     \
                 .type = PROP_ENUM,                                                                \
                 .unit = "",                                                                       \
                 .description = DESC,                                                              \
                 .mutability = PROP_LIVE,                                                          \
                 .enum_names = NAMES,                                                              \
                 .enum_count = COUNT,                                                              \
                 .default_value = {.type = PROP_ENUM, .integer = DEFAULT}},                        \
        .store = CONTACT_PARAM_MEMBER, .offset = offsetof(ContactParams, MEMBER)                   \
    }

/* Parameters more than one model reads, declared once (contact_params.c). */
extern const ContactParamDecl contact_param_exponent;
extern const ContactParamDecl contact_param_velocity_tolerance;
extern const ContactParamDecl contact_param_phase_ramp_time;

extern const ContactModelClass contact_spring_damper_class;
extern const ContactModelClass contact_hunt_crossley_class;
extern const ContactModelClass contact_hertz_class;
extern const ContactModelClass contact_bilinear_class;
extern const ContactModelClass contact_bilinear_origin_class;
extern const ContactModelClass contact_internal_friction_class;
extern const ContactModelClass contact_internal_friction_c0_class;
extern const ContactModelClass contact_map_class;

/* The normal force fn with the Coulomb friction of the pair added (none when mu_s = 0 or the
 * contact does not press). */
static inline ContactForce contact_force_with_friction(const ContactParams *p,
                                                       const ContactHistory *h,
                                                       const ContactKinematics *k, double fn) {
    ContactForce f = {.normal = fn, .tangent = {0, 0, 0}};
    if (p->friction_static > 0.0)
        f.tangent = contact_friction_force(p, h, k, fn);
    return f;
}

/* Onset bookkeeping every model shares: onset time, depth so far, friction anchor. */
static inline void contact_begin_common(ContactHistory *h, const ContactKinematics *k) {
    h->t_begin = k->t;
    h->depth_max = k->depth > 0.0 ? k->depth : 0.0;
    contact_friction_begin(h, k);
}

/* F(g) = k g^n, the conservative part of internal friction (004 eqs. 4.86-4.87), and its
 * integral k g^(n+1) / (n+1). n = 1 and the Hertzian n = 3/2 avoid pow() (a third of the cost of
 * a Hunt-Crossley evaluation with friction). */
static inline double contact_power_force(double k, double n, double g) {
    if (g <= 0.0)
        return 0.0;
    if (n == 1.0)
        return k * g;
    if (n == 1.5)
        return k * g * sqrt(g);
    return k * pow(g, n);
}

static inline double contact_power_energy(double k, double n, double g) {
    if (g <= 0.0)
        return 0.0;
    return n == 1.0 ? 0.5 * k * g * g : k * pow(g, n + 1.0) / (n + 1.0);
}

static inline double contact_no_fixed_step(const ContactParams *p) {
    (void)p;
    return 0.0;
}

#endif
