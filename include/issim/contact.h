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
 * Each model declares the parameters it reads (ContactModelClass.params: name, unit, range,
 * default, description), besides the ones every pair has (contact_common_params). The
 * declarations become properties of the contact-pair thing (contact_pair_add_props), so the scene
 * schema, validation, the property editor and docs/scene-format.md's table follow them;
 * contact_params_from_thing() reads them into a ContactParams struct once per (re)build; the
 * engine passes that struct to the model.
 *
 * Threading: models are pure code plus caller-owned parameter and history structs; the engine
 * thread calls them. Nothing here is shared.
 */
#ifndef ISSIM_CONTACT_H
#define ISSIM_CONTACT_H

#include "issim/contactmap.h"
#include "issim/core.h"
#include "issim/math.h"
#include "issim/thing.h"

typedef enum ContactModelKind {
    CONTACT_MODEL_SPRING_DAMPER,
    CONTACT_MODEL_HUNT_CROSSLEY,
    CONTACT_MODEL_HERTZ,
    CONTACT_MODEL_BILINEAR,
    CONTACT_MODEL_BILINEAR_ORIGIN,
    CONTACT_MODEL_INTERNAL_FRICTION,
    CONTACT_MODEL_INTERNAL_FRICTION_C0,
    CONTACT_MODEL_CONTACT_MAP, /* 000 ch. 3: convolution with the bodies' contact-response maps */
    CONTACT_MODEL_COUNT
} ContactModelKind;

/* The three kinds of contact resolution (ARCHITECTURE.md). A contact pair names the one that
 * resolves its contacts; the engine resolves each island (bodies joined by active contacts) by
 * the resolver its pairs name (docs/architecture.md, "the staged step"). */
typedef enum ContactResolverKind {
    CONTACT_RESOLVER_FORCE_LAW,       /* per-contact force laws inside CVODE / RK4 (this header) */
    CONTACT_RESOLVER_COMPLEMENTARITY, /* a time-stepping solver over the island's M and J (001) */
    CONTACT_RESOLVER_REDUCED,         /* a pair of bodies in contact coordinates (002) */
    CONTACT_RESOLVER_COUNT
} ContactResolverKind;

/* "force_law", "complementarity", "reduced" (thing.h, "Vocabularies"). */
extern const char *const contact_resolver_names[];
const char *contact_resolver_name(ContactResolverKind kind);

/* Which solver resolves a complementarity island (the pair's "solver" property, live): auto
 * takes a direct solver for small islands and PGS above (engine_complementarity_for,
 * engine_resolver.h). A solver joins by one entry here, its name in contact_vocabulary.c and its
 * row in the engine's table (engine_complementarity.c); a name not listed is refused by the
 * property. */
typedef enum ContactSolverKind {
    CONTACT_SOLVER_AUTO,
    CONTACT_SOLVER_PGS,       /* projected Gauss-Seidel with friction (engine_pgs.c) */
    CONTACT_SOLVER_REFERENCE, /* the frictionless reference PGS */
    CONTACT_SOLVER_LEMKE,     /* 001 2.2: Lemke in the fixpoint iteration, polyhedral friction */
    CONTACT_SOLVER_FISCHER_NEWTON, /* 001 2.1: the NCP by Fischer-Newton, frictionless */
    CONTACT_SOLVER_COUNT
} ContactSolverKind;

/* "auto", "pgs", "reference", "lemke", "fischer_newton". */
extern const char *const contact_solver_names[];
const char *contact_solver_name(ContactSolverKind kind);

/* A pair's "damping_from": where the normal damping b comes from. */
typedef enum ContactDampingFrom {
    CONTACT_DAMPING_FROM_RESTITUTION, /* derived from the restitution (per model) */
    CONTACT_DAMPING_FROM_VALUE,       /* the pair's damping property */
    CONTACT_DAMPING_FROM_COUNT
} ContactDampingFrom;
extern const char *const contact_damping_from_names[];
const char *contact_damping_from_name(ContactDampingFrom from);

/* A pair's "smooth_friction": the smooth contact's friction law (002 4.4). */
typedef enum ContactSmoothFriction {
    CONTACT_SMOOTH_FRICTION_STICK_SLIP, /* sticks under slip_tolerance */
    CONTACT_SMOOTH_FRICTION_SLIDING,    /* 002 4.4.1's dynamic friction only */
    CONTACT_SMOOTH_FRICTION_COUNT
} ContactSmoothFriction;
extern const char *const contact_smooth_friction_names[];
const char *contact_smooth_friction_name(ContactSmoothFriction friction);

/* A pair's "map_node": which map nodes give a contact's response (contact_map_choose). */
typedef enum ContactMapNodeChoice {
    CONTACT_MAP_NODE_NEAREST,
    CONTACT_MAP_NODE_INTERPOLATE, /* blends the two nearest */
    CONTACT_MAP_NODE_COUNT
} ContactMapNodeChoice;
extern const char *const contact_map_node_choice_names[];
const char *contact_map_node_choice_name(ContactMapNodeChoice choice);

/* Room for the declared parameters of a registered model (ContactParams.model_values). */
#define CONTACT_MODEL_VALUES_MAX 4

/* Parameters of every built-in model: the members the declarations (ContactParamDecl.offset)
 * name, filled by contact_params_from_thing; a registered model's own are in model_values.
 * Derived values (the last group) are computed by contact_params_derive() from the others.
 * Written by contact_params_from_thing (the engine, at a build or an edit) and, for damping and
 * the maps, by the engine per contact; read by the models. */
typedef struct ContactParams {
    ContactModelKind model;
    ContactResolverKind resolver; /* the pair's "resolver" property */
    ContactSolverKind solver;     /* the pair's "solver" property (complementarity islands) */
    double stiffness;             /* k, N/m (N/m^n for exponent n != 1); bilinear: loading k1 */
    double damping;               /* b, N s/m (already derived from restitution when asked) */
    double restitution;           /* r, target single-contact coefficient of restitution */
    bool damping_from_restitution;
    bool clamp_attraction; /* never pull: f = max(0, f) */
    double exponent;       /* n of F(g) = k g^n (internal friction, Hunt-Crossley m = n) */
    double hc_alpha;       /* alpha of Hunt-Crossley's e = 1 - alpha v, s/m */
    /* Hertz: the two materials' Young's moduli (Pa), Poisson ratios and radii of curvature
     * at the contact (m; 0 = flat). */
    double youngs_a, poisson_a, radius_a;
    double youngs_b, poisson_b, radius_b;
    double tilt;                     /* h of the C0 internal-friction variant (004 App. D) */
    double velocity_tolerance;       /* m/s: equilibrium test of internal friction (004 4.8.5); 0:
                                        derived per contact from its band (contact_equilibrium_speed) */
    double phase_ramp_time;          /* s: internal friction's phase switch spread over this time
                                        (0: the jump of eq. 4.77-4.78; internal_friction.c) */
    double friction_static;          /* mu_s (0: no friction) */
    double friction_kinetic;         /* mu_k <= mu_s */
    double rolling_friction;         /* m: smooth contact's mu_r (002 eq. 4.27-4.28) */
    double spinning_friction;        /* m: its mu_s (002 eq. 4.29) */
    double spinning_friction_static; /* m: static spin friction (002 eq. 4.46) */
    double slip_tolerance;           /* m/s: smooth contact's stick / regularisation speed */
    bool smooth_sliding_only; /* smooth contact: 002 4.4.1's dynamic friction, never sticks */
    double tangent_stiffness; /* N/m: Goyal's tangential penalty spring (000 eq. 5.19) */
    double tangent_damping;   /* N s/m: its viscous part */
    /* contact_map (000 ch. 3, docs/contact-models.md): the maps of the contact's two bodies,
     * Borrowed, set per contact by the engine from the bodies' contact_map property; NULL: that
     * side is a flat map of `stiffness` (000 6.5's foundation). The quadrature of the
     * convolution and whether the response interpolates between the two nearest nodes. */
    const ContactMap *map_a, *map_b;
    ContactMapRule map_rule;
    ContactMapConvolution map_convolution;
    bool map_interpolate;
    /* The declared real parameters of a model registered outside this module (a plug-in, a
     * test), which has no member here: its declaration's model_value index (ContactParamDecl),
     * filled for the pair's own model only. */
    double model_values[CONTACT_MODEL_VALUES_MAX];
    /* Derived */
    double if_factor;   /* internal friction dissipation factor f (004 eq. 4.83 / D.170) */
    double hc_lambda;   /* Hunt-Crossley lambda = 3/2 alpha k (000 eq. 2.17) */
    double hertz_coeff; /* 4/3 E* R^(1/2), N/m^(3/2) (000 2.1.1) */
    double restitution_stiffness; /* bilinear k2 = k1 / e^2, or k1 e^2 through the origin */
} ContactParams;

/* The speed under which an internal-friction contact carrying `load` (N) with `effective_mass`
 * (kg) counts as still (004 4.8.5): velocity_tolerance when it is given (> 0), else derived from
 * the equilibrium band of eq. 4.91: the speed at the resting depth F(g) = load whose kinetic
 * energy the band absorbs before the contact leaves it (internal_friction.c). 0 when the load
 * or the mass is unknown (never still). */
double contact_equilibrium_speed(const ContactParams *p, double load, double effective_mass);

/* The kinematics of one contact at one instant. Penetration depth > 0 when the bodies overlap
 * (the seeds' g for spring/damper, 004 4.8; the sign is ours: positive = interpenetrating). */
typedef struct ContactKinematics {
    double depth;          /* m */
    double depth_rate;     /* m/s, d(depth)/dt */
    Vec3 normal;           /* unit, world, pointing from b into a */
    Vec3 tangent_velocity; /* m/s, relative sliding velocity of a on b in the tangent plane */
    double effective_mass; /* kg, along the normal (1 / n^T M^-1 n at the point) */
    double t;              /* s */
    /* N: the share of the external (non-contact) load pressing body a into this contact,
     * f_ext / n_v of 004 4.8.1 (n_v: the body's contacts that share it). 0 when the engine
     * does not know it; the internal-friction equilibrium test then never fires. */
    double load;
    /* The contact point and the outward normal of each body in that body's frame (b: the
     * obstacle's frame), filled for begin() only (unset in other calls): the contact map picks
     * its node from them. */
    Vec3 point_in_a, normal_in_a, point_in_b, normal_in_b;
    /* Friction (friction.c): the world point on a where the force acts (the engine pins the
     * friction spring's material points there at each commit), and, when has_slip is set, the
     * separation X_a - X_b (world, m) of the two material points pinned at the last commit:
     * the tangential spring stretches by exactly what the bodies moved. Without it (has_slip
     * false: a contact built outside the engine) the spring stretches by dt v_t, the backward
     * Euler of 000 eq. 5.22. */
    Vec3 contact_point;
    Vec3 slip;
    bool has_slip;
} ContactKinematics;

/* Per-contact history. The fixed part below is shared by every model; a model with more memory
 * (a convolution buffer) declares it with ContactModelClass.state_size and finds it at `state`.
 * The engine owns that memory (a pool, no allocation inside a step), copies it into every
 * checkpoint and restores it on a rewind (docs/architecture.md, "contact state"). */
typedef struct ContactHistory {
    double t_begin;   /* onset time */
    double depth_max; /* greatest depth so far */
    int phase;        /* model-defined (compression / restitution ...) */
    /* Coulomb friction (contact_friction.c, shared by every model): the tangential penalty
     * spring's extension (world, m) as of friction_t, and whether the contact sticks. */
    Vec3 friction_spring;
    double friction_t;
    bool sliding;
    /* The material points of a and b that coincided at the contact point at friction_t, each in
     * its body's frame (an obstacle's: world), pinned by the engine (friction_pinned). */
    Vec3 friction_pin_a, friction_pin_b;
    bool friction_pinned;
    bool in_equilibrium; /* internal friction: reported, not reported again until it moves */
    /* Model-owned state: state_bytes bytes (ContactModelClass.state_size at begin), aligned for
     * doubles; NULL and 0 for models that declare none. Borrowed: the engine keeps it valid
     * while the contact lasts and moves it only between calls (pool growth, restore). force()
     * must only read it; begin() and commit() may write it. */
    void *state;
    size_t state_bytes;
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

/* Where a declared parameter's value goes when contact_params_from_thing reads a pair. */
typedef enum ContactParamStore {
    CONTACT_PARAM_MEMBER,      /* the real, bool or enum at `offset` in ContactParams */
    CONTACT_PARAM_FLAG,        /* the bool at `offset`: the enum's value equals `index` */
    CONTACT_PARAM_MODEL_VALUE, /* real: ContactParams.model_values[index], read only when the
                                  pair's model is the declaring class (registered models) */
    CONTACT_PARAM_UNSTORED,    /* read from the pair thing by its user (smooth start coords) */
} ContactParamStore;

/* One parameter a contact model declares (as mjpPlugin declares its attributes): the pair
 * property it becomes (name, type, unit, range, default, description, mutability: the schema,
 * validation, the property editor and docs/scene-format.md's table all read this) and where
 * contact_params_from_thing stores its value. Declarations are static and shared: two models
 * reading one parameter list the same declaration. */
typedef struct ContactParamDecl {
    PropDef prop;
    ContactParamStore store;
    size_t offset; /* MEMBER, FLAG: offsetof(ContactParams, member) */
    int index;     /* FLAG: the enum value meaning true; MODEL_VALUE: the model_values slot */
} ContactParamDecl;

typedef struct ContactModelClass {
    const char *name; /* enum name in scenes: "spring_damper" */
    const char *description;
    const char *source; /* seed section and equations */
    /* The parameters the model reads beyond the pair's common ones (contact_common_params),
     * Borrowed, static; each becomes a property of every contact pair. */
    const ContactParamDecl *const *params;
    int param_count;
    ContactForce (*force)(const ContactParams *p, const ContactHistory *h,
                          const ContactKinematics *k);
    void (*begin)(const ContactParams *p, ContactHistory *h, const ContactKinematics *k);
    int (*commit)(const ContactParams *p, ContactHistory *h, const ContactKinematics *k);
    /* > 0: the model needs this fixed step (s); 0: any integrator. */
    double (*fixed_step)(const ContactParams *p);
    /* Shortest time scale of the contact for effective mass m (s); used to warn when a fixed
     * step is too coarse. */
    double (*time_scale)(const ContactParams *p, double effective_mass);
    /* true: commit() reports CONTACT_EVENT_EQUILIBRIUM when the contact holds its load still
     * (internal friction, 004 4.8.5 eq. 4.91). false (the default): the model has no such test,
     * and the engine judges a body on such contacts by stillness alone (engine_sleep.c). */
    bool tests_equilibrium;
    /* true: force() never reads k->effective_mass, so the engine's right-hand side leaves it
     * unset (NaN) instead of computing it for every contact at every evaluation. */
    bool force_ignores_effective_mass;
    /* true: no hook of the model (force, begin, commit, potential, state_size, ...) reads
     * k->effective_mass, so the engine's step-end passes, energy and collision-update ledger
     * leave it NaN too (a model that sets this sets force_ignores_effective_mass as well).
     * false (the default, safe for any model): it is computed wherever kinematics are. */
    bool ignores_effective_mass;
    /* Energy stored in the contact's conservative part at this depth (J): the engine's
     * elastic energy, and the reference the no-energy-gain tests compare against. */
    double (*potential)(const ContactParams *p, const ContactHistory *h,
                        const ContactKinematics *k);
    /* ----- Model-owned per-contact state (MuJoCo's plug-in state: nstate, init, copy, reset).
     * All optional: NULL means "none" / the default. ----- */
    /* Bytes of state a contact beginning at k needs (a convolution buffer sized by the map and
     * the node chosen at onset). Called once per onset, before begin(), which is the init hook:
     * it finds the state zeroed at h->state. */
    size_t (*state_size)(const ContactParams *p, const ContactKinematics *k);
    /* Copies a contact's state into a checkpoint and back (NULL: memcpy). For states that hold
     * offsets or ring positions that must be rebased; the state must not hold pointers. */
    void (*copy)(const ContactParams *p, void *dst, const void *src, size_t bytes);
    /* Restarts a contact's state at k when no checkpoint can restore it (a rewind past the
     * checkpoint budget, a position edit): NULL zeroes the state and calls begin() again. */
    void (*reset)(const ContactParams *p, ContactHistory *h, const ContactKinematics *k);
} ContactModelClass;

/* The built-in models have the kinds above; contact_model_register adds more, up to
 * CONTACT_MODEL_MAX in all. */
#define CONTACT_MODEL_MAX 32

/* Borrowed table entry (built-in or registered), NULL for an unknown kind. */
const ContactModelClass *contact_model_class(ContactModelKind kind);
/* Registers a model class (the extension point for models outside this module: plug-ins,
 * tests) and returns its kind in *kind. The class must stay valid for the process's lifetime
 * (Borrowed). Its name becomes a value of every contact pair's "model" property, and its
 * declared parameters properties of every pair, created afterwards. ISSIM_ERR_INVALID for a
 * missing hook (force, begin, commit, fixed_step, time_scale, potential), a name already taken,
 * or a parameter declaration that is unusable (no name, a default outside its range, a store
 * other than MODEL_VALUE, a slot past CONTACT_MODEL_VALUES_MAX, a name another declaration
 * has); ISSIM_ERR_RANGE when the table is full. Registering the same class again returns its kind.
 * Thread: set-up only, before any scene is loaded or thread started. */
IssimStatus contact_model_register(const ContactModelClass *cls, ContactModelKind *kind,
                                   IssimError *err);
/* Number of kinds (built-in and registered). */
int contact_model_count(void);
/* Parses a model name. false if unknown. */
bool contact_model_parse(const char *name, ContactModelKind *out);
/* Names of all models, for the "model" enum property (static storage). */
const char *const *contact_model_names(int *count);

/* The parameters every pair has whatever its model (model, resolver, solver, stiffness,
 * restitution, damping, friction, smooth-contact settings): the ones before the models' own
 * (*head_count) and after them (*tail_count), in property order. Static storage. */
const ContactParamDecl *const *contact_common_params(int *head_count, int *tail_count);
/* The declaration behind a pair property named `name` (common or any model's), or NULL. */
const ContactParamDecl *contact_param_decl(const char *name);

/* Adds the contact-pair properties to a THING_CONTACT_PAIR thing, from the declarations: the
 * common head, every model's own parameters (each once, in model order), the common tail.
 * Scene loading calls it before setting values. */
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

/* Chatterjee's approximation of the restitution of the harmonic penalty (linear spring/damper)
 * model, e = 1 / (1 + 2.5 beta + 4 beta^2), beta = c / (2 sqrt(k m)) (000 eq. 2.14; maximum
 * relative error about 0.06 against the exact contact_restitution_of). */
double contact_harmonic_restitution(double beta);

/* Fills the derived members of p (internal-friction factor, Hunt-Crossley lambda, Hertz
 * coefficient, bilinear restitution stiffness). ISSIM_ERR_INVALID with a message naming the
 * parameter when the combination has no meaning (tilt h >= r^2, mu_k > mu_s, ...). */
IssimStatus contact_params_derive(ContactParams *p, IssimError *err);

/* Internal friction dissipation factor f = (1 - r^2) / (1 + r^2) (004 eq. 4.83), and the C0
 * variant's f = (1 - r^2) / (1 + r^2 - 2h) (004 eq. D.170). */
double contact_internal_friction_factor(double r);
double contact_internal_friction_c0_factor(double r, double h);

/* Hertz: effective modulus E* from 1/E* = (1 - nu_a^2)/E_a + (1 - nu_b^2)/E_b, effective
 * radius from 1/R = 1/R_a + 1/R_b (radius 0: flat), and the duration of an elastic impact of
 * mass m at speed v: 2.9432 (15 m / (16 E* sqrt(R)))^(2/5) v^(-1/5) (000 2.1.1; Johnson,
 * Contact Mechanics, 11.2). */
double contact_hertz_modulus(double ea, double nua, double eb, double nub);
double contact_hertz_radius(double ra, double rb);
double contact_hertz_duration(double coeff, double m, double v);

/* Coulomb friction with static and kinetic coefficients by Goyal's algorithm (000 5.7,
 * eqs. 5.19-5.26), shared by every model: the tangential force on body a for the normal force
 * `normal` (N), from the history's spring state and the kinematics. Pure. */
Vec3 contact_friction_force(const ContactParams *p, const ContactHistory *h,
                            const ContactKinematics *k, double normal);
/* The energy the tangential spring holds as of the last commit, 1/2 kt |s|^2 (J; 0 without
 * friction): part of the contact's elastic energy (000 5.7, eq. 5.19). */
double contact_friction_potential(const ContactParams *p, const ContactHistory *h);
/* Starts the friction state at the contact's onset (every model's begin() calls it). */
void contact_friction_begin(ContactHistory *h, const ContactKinematics *k);
/* Advances the friction state to k->t after an accepted step (stick: the spring keeps its
 * anchor; slip: the anchor follows with the positive root lambda*). */
void contact_friction_commit(const ContactParams *p, ContactHistory *h, const ContactKinematics *k,
                             double normal);

#endif
