/* issim contact models: the per-contact force laws (first kind of contact resolution in
 * ARCHITECTURE.md).
 *
 * A model computes the contact force from the contact's kinematics and its own per-contact
 * history. The engine calls
 *   - force():  inside the integrator's right-hand side, possibly many times at trial states
 *               that are later rejected; it must be a pure function of (params, history,
 *               kinematics) and must not change history;
 *   - begin():  once when the contact starts (onset located by root finding);
 *   - commit(): once after every accepted step while the contact lasts; it may update history
 *               (hysteresis phase, convolution buffers) and report events (equilibrium).
 * A model declares whether it needs a fixed step (contact maps: the map's sampling period) and
 * a time scale, so the engine can warn when a fixed step is too coarse.
 *
 * Parameters live in the thing database as properties of the contact-pair thing (physical units:
 * N/m, N s/m, ...). contact_params_from_thing() reads them into a ContactParams struct once per
 * (re)build; the engine passes that struct to the model.
 *
 * Threading: models are pure code plus caller-owned parameter and history structs; the engine
 * thread calls them. Nothing here is shared.
 */
#ifndef ISSIM_CONTACT_H
#define ISSIM_CONTACT_H

#include "issim/core.h"
#include "issim/math.h"
#include "issim/thing.h"

typedef enum ContactModelKind { CONTACT_MODEL_SPRING_DAMPER, CONTACT_MODEL_COUNT } ContactModelKind;

/* Parameters of every model (the union of the contact-pair properties). */
typedef struct ContactParams {
    ContactModelKind model;
    double stiffness;   /* k, N/m */
    double damping;     /* b, N s/m (already derived from restitution when asked) */
    double restitution; /* r, target single-contact coefficient of restitution */
    bool damping_from_restitution;
    bool clamp_attraction; /* never pull: f = max(0, f) */
} ContactParams;

/* The kinematics of one contact at one instant. Penetration depth > 0 when the bodies overlap
 * (the seeds' g for spring/damper, 004 4.8; the sign is ours: positive = interpenetrating). */
typedef struct ContactKinematics {
    double depth;          /* m */
    double depth_rate;     /* m/s, d(depth)/dt */
    Vec3 normal;           /* unit, world, pointing from b into a */
    Vec3 tangent_velocity; /* m/s, relative sliding velocity of a on b in the tangent plane */
    double effective_mass; /* kg, along the normal (1 / n^T M^-1 n at the point) */
    double t;              /* s */
} ContactKinematics;

/* Per-contact history: opaque to the engine, sized for every model. */
typedef struct ContactHistory {
    double t_begin;   /* onset time */
    double depth_max; /* greatest depth so far */
    double x[6];      /* model-defined */
    int phase;        /* model-defined (compression / restitution ...) */
} ContactHistory;

typedef struct ContactForce {
    double normal; /* N, along kinematics.normal, on body a (> 0 pushes apart) */
    Vec3 tangent;  /* N, friction on body a, world */
} ContactForce;

enum {
    CONTACT_EVENT_NONE = 0,
    CONTACT_EVENT_SEPARATION = 1 << 0,  /* the model ends the contact although the depth is still
                                           positive (it begins again at the next onset) */
    CONTACT_EVENT_EQUILIBRIUM = 1 << 1, /* the body may sleep (004 4.8.5) */
};

typedef struct ContactModelClass {
    const char *name; /* enum name in scenes: "spring_damper" */
    const char *description;
    const char *source; /* seed section and equations */
    ContactForce (*force)(const ContactParams *p, const ContactHistory *h,
                          const ContactKinematics *k);
    void (*begin)(const ContactParams *p, ContactHistory *h, const ContactKinematics *k);
    int (*commit)(const ContactParams *p, ContactHistory *h, const ContactKinematics *k);
    /* > 0: the model needs this fixed step (s); 0: any integrator. */
    double (*fixed_step)(const ContactParams *p);
    /* Shortest time scale of the contact for effective mass m (s); used to warn when a fixed
     * step is too coarse. */
    double (*time_scale)(const ContactParams *p, double effective_mass);
    /* Energy stored in the contact's conservative part at this depth (J): the engine's
     * elastic energy, and the reference the no-energy-gain tests compare against. */
    double (*potential)(const ContactParams *p, const ContactHistory *h,
                        const ContactKinematics *k);
} ContactModelClass;

/* Borrowed static table entry. */
const ContactModelClass *contact_model_class(ContactModelKind kind);
/* Parses a model name. false if unknown. */
bool contact_model_parse(const char *name, ContactModelKind *out);
/* Names of all models, for the "model" enum property (static storage). */
const char *const *contact_model_names(int *count);

/* Adds the contact-pair properties (model and every model's parameters, with units, ranges,
 * defaults) to a THING_CONTACT_PAIR thing. Scene loading calls it before setting values. */
IssimStatus contact_pair_add_props(ThingDb *db, ThingId pair, IssimError *err);
/* Reads a pair's properties. reduced_mass is the pair's reduced mass (kg), used to derive the
 * damping from the restitution when damping_from = "restitution". */
IssimStatus contact_params_from_thing(const ThingDb *db, ThingId pair, double reduced_mass,
                                      ContactParams *out, IssimError *err);

/* Damping b for which a linear spring/damper of stiffness k on mass m has single-contact
 * restitution r: b = -2 ln(r) sqrt(k m) / sqrt(pi^2 + ln^2 r)  (004 eq. 4.89-4.90,
 * VALIDATION.md V1). r in (0, 1]. */
double contact_damping_for_restitution(double k, double m, double r);
/* Inverse: restitution of a linear spring/damper (k, b) on mass m (under-damped), from
 * r = exp(-zeta pi / sqrt(1 - zeta^2)), zeta = b / (2 sqrt(k m)) (004 eq. 4.92-4.93). 0 when
 * over-damped. */
double contact_restitution_of(double k, double b, double m);
/* Contact duration pi / omega_d of the linear spring/damper (no gravity). */
double contact_duration_of(double k, double b, double m);

#endif
