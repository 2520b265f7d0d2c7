/* Contact-model registry, contact-pair properties, the derived parameters, and the closed forms
 * the models and their tests share: restitution relations of the linear spring/damper (004 eqs.
 * 4.89-4.93; VALIDATION.md V1-V2), the internal friction factors (004 eq. 4.83, D.170) and
 * Hertz's effective modulus, radius and impact duration (000 2.1.1). */
#include "issim/contact.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "contact_internal.h"

static const ContactModelClass *model_classes[CONTACT_MODEL_MAX] = {
    [CONTACT_MODEL_SPRING_DAMPER] = &contact_spring_damper_class,
    [CONTACT_MODEL_HUNT_CROSSLEY] = &contact_hunt_crossley_class,
    [CONTACT_MODEL_HERTZ] = &contact_hertz_class,
    [CONTACT_MODEL_BILINEAR] = &contact_bilinear_class,
    [CONTACT_MODEL_BILINEAR_ORIGIN] = &contact_bilinear_origin_class,
    [CONTACT_MODEL_INTERNAL_FRICTION] = &contact_internal_friction_class,
    [CONTACT_MODEL_INTERNAL_FRICTION_C0] = &contact_internal_friction_c0_class,
    [CONTACT_MODEL_CONTACT_MAP] = &contact_map_class,
};

static const char *model_names[CONTACT_MODEL_MAX];
/* Built-in classes first, registered ones after. Written at set-up only (before threads). */
static int model_class_count = CONTACT_MODEL_COUNT;

const ContactModelClass *contact_model_class(ContactModelKind kind) {
    if ((int)kind < 0 || (int)kind >= model_class_count)
        return NULL;
    return model_classes[kind];
}

int contact_model_count(void) {
    return model_class_count;
}

IssimStatus contact_model_register(const ContactModelClass *cls, ContactModelKind *kind,
                                   IssimError *err) {
    if (!cls || !cls->name || !cls->force || !cls->begin || !cls->commit || !cls->fixed_step ||
        !cls->time_scale || !cls->potential)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "contact model %s: name, force, begin, commit, fixed_step, "
                               "time_scale and potential are required",
                               cls && cls->name ? cls->name : "(unnamed)");
    for (int i = 0; i < model_class_count; i++) {
        if (model_classes[i] == cls) {
            *kind = (ContactModelKind)i;
            return ISSIM_OK;
        }
        if (strcmp(model_classes[i]->name, cls->name) == 0)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "contact model name '%s' is already taken", cls->name);
    }
    if (model_class_count >= CONTACT_MODEL_MAX)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "cannot register contact model %s: the table holds %d models",
                               cls->name, CONTACT_MODEL_MAX);
    model_classes[model_class_count] = cls;
    *kind = (ContactModelKind)model_class_count++;
    return ISSIM_OK;
}

bool contact_model_parse(const char *name, ContactModelKind *out) {
    for (int i = 0; i < model_class_count; i++) {
        if (strcmp(model_classes[i]->name, name) == 0) {
            *out = (ContactModelKind)i;
            return true;
        }
    }
    return false;
}

static void fill_model_names(void) {
    for (int i = 0; i < model_class_count; i++)
        model_names[i] = model_classes[i]->name;
}

const char *const *contact_model_names(int *count) {
    /* Filled from the class table so a new model needs one line above, not two; once, because
     * scene loaders run concurrently (`issim sweep --threads`: ThreadSanitizer saw the same
     * pointers written by two workers, a data race however idempotent). */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill_model_names);
    *count = model_class_count;
    return model_names;
}

#define REAL_PROP(NAME, UNIT, DESC, MIN, MAX, MIN_EXCL, DEFAULT)                                   \
    {                                                                                              \
        .name = NAME, .type = PROP_REAL, .unit = UNIT, .description = DESC, .min = MIN,            \
        .max = MAX, .min_exclusive = MIN_EXCL, .mutability = PROP_LIVE,                            \
        .default_value = prop_real(DEFAULT)                                                        \
    }

IssimStatus contact_pair_add_props(ThingDb *db, ThingId pair, IssimError *err) {
    int model_count = 0;
    const char *const *names = contact_model_names(&model_count);
    const PropDef defs[] = {
        {.name = "model",
         .type = PROP_ENUM,
         .unit = "",
         .description = "contact force law between the two materials (docs/contact-models.md)",
         .mutability = PROP_LIVE,
         .enum_names = names,
         .enum_count = model_count,
         .default_value = prop_enum(CONTACT_MODEL_SPRING_DAMPER)},
        {.name = "resolver",
         .type = PROP_ENUM,
         .unit = "",
         .description = "how contacts of this pair are resolved: force_law (the model, inside "
                        "the integrator), complementarity (a solver over the island), reduced "
                        "(the pair in contact coordinates)",
         .mutability = PROP_LIVE,
         .enum_names = contact_resolver_names,
         .enum_count = CONTACT_RESOLVER_COUNT,
         .default_value = prop_enum(CONTACT_RESOLVER_FORCE_LAW)},
        {.name = "solver",
         .type = PROP_ENUM,
         .unit = "",
         .description = "solver of complementarity islands: auto (lemke up to 24 contacts, 4 "
                        "with friction, pgs above), pgs (projected Gauss-Seidel, exact friction "
                        "cone), reference "
                        "(frictionless PGS), lemke (001 2.2, 8-sided friction cone), "
                        "fischer_newton (001 2.1, frictionless)",
         .mutability = PROP_LIVE,
         .enum_names = contact_solver_names,
         .enum_count = CONTACT_SOLVER_COUNT,
         .default_value = prop_enum(CONTACT_SOLVER_AUTO)},
        {.name = "stiffness",
         .type = PROP_REAL,
         .unit = "N/m",
         .description = "normal stiffness k (bilinear: loading k1; with exponent n: N/m^n)",
         .min = 1e-3, /* a stiffness below a mN/m holds nothing up: the contact is never resolved */
         .max = 1e13,
         .mutability = PROP_LIVE,
         .default_value = prop_real(1e5)},
        {.name = "damping_from",
         .type = PROP_ENUM,
         .unit = "",
         .description = "derive the damping from the restitution, or use the damping value",
         .mutability = PROP_LIVE,
         .enum_names = contact_damping_from_names,
         .enum_count = CONTACT_DAMPING_FROM_COUNT,
         .default_value = prop_enum(CONTACT_DAMPING_FROM_RESTITUTION)},
        {.name = "restitution",
         .type = PROP_REAL,
         .unit = "",
         .description = "coefficient of restitution r (spring/damper damping, internal friction "
                        "f, bilinear k2)",
         .min = 0,
         .max = 1,
         .min_exclusive = true,
         .mutability = PROP_LIVE,
         .default_value = prop_real(0.8)},
        {.name = "damping",
         .type = PROP_REAL,
         .unit = "N s/m",
         .description = "normal damping b (used when damping_from = \"value\")",
         .min = 0,
         .max = 1e13,
         .mutability = PROP_LIVE,
         .default_value = prop_real(0)},
        {.name = "clamp_attraction",
         .type = PROP_BOOL,
         .unit = "",
         .description = "never let the contact pull the bodies together: f = max(0, k g + b dg/dt)",
         .mutability = PROP_LIVE,
         .default_value = prop_bool(false)},
        REAL_PROP("exponent", "", "exponent n of F(g) = k g^n (internal friction, Hunt-Crossley)",
                  0.5, 3.0, false, 1.0),
        REAL_PROP("alpha", "s/m", "Hunt-Crossley alpha of e = 1 - alpha v (lambda = 3/2 alpha k)",
                  0.0, 100.0, false, 0.2),
        REAL_PROP("youngs_modulus_a", "Pa", "Hertz: Young's modulus of the first material", 0.0,
                  1e13, true, 2e11),
        REAL_PROP("poisson_ratio_a", "", "Hertz: Poisson's ratio of the first material", 0.0, 0.5,
                  false, 0.3),
        REAL_PROP("radius_a", "m", "Hertz: radius of curvature of the first body (0: flat)", 0.0,
                  1e3, false, 0.01),
        REAL_PROP("youngs_modulus_b", "Pa", "Hertz: Young's modulus of the second material", 0.0,
                  1e13, true, 2e11),
        REAL_PROP("poisson_ratio_b", "", "Hertz: Poisson's ratio of the second material", 0.0, 0.5,
                  false, 0.3),
        REAL_PROP("radius_b", "m", "Hertz: radius of curvature of the second body (0: flat)", 0.0,
                  1e3, false, 0.0),
        REAL_PROP("tilt", "", "internal_friction_c0: width h of the tilted line, in g_max (< r^2)",
                  0.0, 1.0, false, 0.1),
        REAL_PROP("velocity_tolerance", "m/s",
                  "internal friction: speed dg/dt below which a held contact is in equilibrium "
                  "(0: derived per contact from its equilibrium band, 004 4.8.5)",
                  0.0, 1e3, false, 1e-5),
        REAL_PROP("phase_ramp_time", "s",
                  "internal friction: time over which the phase switch at dg/dt = 0 is spread "
                  "(0: the jump; with RK4 a few of its steps, docs/contact-models.md)",
                  0.0, 1.0, false, 0.0),
        REAL_PROP("friction_static", "", "Coulomb static coefficient mu_s (0: frictionless)", 0.0,
                  10.0, false, 0.0),
        REAL_PROP("friction_kinetic", "", "Coulomb kinetic coefficient mu_k (<= mu_s)", 0.0, 10.0,
                  false, 0.0),
        REAL_PROP("rolling_friction", "m",
                  "smooth contact: rolling friction mu_r, torque per newton of normal force "
                  "(002 eq. 4.27-4.28)",
                  0.0, 1.0, false, 0.0),
        REAL_PROP("spinning_friction", "m",
                  "smooth contact: spinning friction mu_s, torque per newton of normal force "
                  "(002 eq. 4.29)",
                  0.0, 1.0, false, 0.0),
        REAL_PROP("spinning_friction_static", "m",
                  "smooth contact: static spinning friction (002 eq. 4.46; 0: never stops "
                  "spinning)",
                  0.0, 1.0, false, 0.0),
        {.name = "smooth_friction",
         .type = PROP_ENUM,
         .unit = "",
         .description = "smooth contact: stick_slip (sliding with friction_kinetic until the slip "
                        "drops below slip_tolerance, then rolling without slip while the force "
                        "stays inside friction_static's cone, 002 4.4.4) or sliding (002 4.4.1's "
                        "dynamic friction only, as the seed's own runs)",
         .mutability = PROP_LIVE,
         .enum_names = contact_smooth_friction_names,
         .enum_count = CONTACT_SMOOTH_FRICTION_COUNT,
         .default_value = prop_enum(CONTACT_SMOOTH_FRICTION_STICK_SLIP)},
        REAL_PROP("slip_tolerance", "m/s",
                  "smooth contact: slip below which friction_static holds the contact "
                  "(no-slip, 002 4.4.4), or without it the Coulomb law is scaled down linearly; "
                  "the same in rad/s for spinning and rolling",
                  1e-9, 10.0, false, 0.01),
        {.name = "start_coords",
         .type = PROP_STRING,
         .unit = "",
         .description = "smooth contact: start in contact at \"s t u v psi\" (or \"pa s t pb u v "
                        "psi\" with patch indices): (s, t) on the first material's body, (u, v) "
                        "on the second's (002 App. B.1's coords); empty: the collision manager "
                        "finds the contact",
         .mutability = PROP_FIXED_DURING_RUN,
         .default_value = {.type = PROP_STRING}},
        {.name = "start_rates",
         .type = PROP_STRING,
         .unit = "",
         .description = "smooth contact: their rates \"s' t' u' v' psi'\" at the start (002 App. "
                        "B.1's dcoords; 1/s)",
         .mutability = PROP_FIXED_DURING_RUN,
         .default_value = {.type = PROP_STRING}},
        REAL_PROP("tangent_stiffness", "N/m", "friction: tangential penalty spring kt (Goyal)",
                  1e-3, 1e13, false, 1e5),
        REAL_PROP("tangent_damping", "N s/m", "friction: tangential penalty damper ct (Goyal)", 0.0,
                  1e13, false, 0.0),
        {.name = "map_quadrature",
         .type = PROP_ENUM,
         .unit = "",
         .description = "contact_map: quadrature of the convolution, trapezoid (second order, "
                        "a flat map is exactly a spring) or endpoint (000 eq. 3.20 with the "
                        "force held over each step, first order)",
         .mutability = PROP_LIVE,
         .enum_names = contact_map_rule_names,
         .enum_count = CONTACT_MAP_RULE_COUNT,
         .default_value = prop_enum(CONTACT_MAP_TRAPEZOID)},
        {.name = "map_node",
         .type = PROP_ENUM,
         .unit = "",
         .description = "contact_map: the response of the node nearest the contact, or "
                        "interpolated between the two nearest (000 4.4)",
         .mutability = PROP_LIVE,
         .enum_names = contact_map_node_choice_names,
         .enum_count = CONTACT_MAP_NODE_COUNT,
         .default_value = prop_enum(CONTACT_MAP_NODE_NEAREST)},
        {.name = "map_convolution",
         .type = PROP_ENUM,
         .unit = "",
         .description = "contact_map: how the convolution sum is computed: direct (O(N) per "
                        "step), fft (partitioned FFT: about 0.2-0.3 us per step from N = 64 to "
                        "65,536) or auto (fft for maps longer "
                        "than 256 samples); the same force to rounding",
         .mutability = PROP_LIVE,
         .enum_names = contact_map_convolution_names,
         .enum_count = CONTACT_MAP_CONV_COUNT,
         .default_value = prop_enum(CONTACT_MAP_CONV_AUTO)},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        IssimStatus s = thing_add_prop(db, pair, &defs[i], err);
        if (s != ISSIM_OK)
            return s;
    }
    return ISSIM_OK;
}

IssimStatus contact_params_from_thing(const ThingDb *db, ThingId pair, double reduced_mass,
                                      ContactParams *out, IssimError *err) {
    memset(out, 0, sizeof *out);
    out->model = (ContactModelKind)thing_enum(db, pair, "model");
    out->resolver = (ContactResolverKind)thing_enum(db, pair, "resolver");
    out->solver = (ContactSolverKind)thing_enum(db, pair, "solver");
    out->stiffness = thing_real(db, pair, "stiffness");
    out->restitution = thing_real(db, pair, "restitution");
    out->damping_from_restitution =
        thing_enum(db, pair, "damping_from") == CONTACT_DAMPING_FROM_RESTITUTION;
    out->clamp_attraction = thing_bool(db, pair, "clamp_attraction");
    out->exponent = thing_real(db, pair, "exponent");
    out->hc_alpha = thing_real(db, pair, "alpha");
    out->youngs_a = thing_real(db, pair, "youngs_modulus_a");
    out->poisson_a = thing_real(db, pair, "poisson_ratio_a");
    out->radius_a = thing_real(db, pair, "radius_a");
    out->youngs_b = thing_real(db, pair, "youngs_modulus_b");
    out->poisson_b = thing_real(db, pair, "poisson_ratio_b");
    out->radius_b = thing_real(db, pair, "radius_b");
    out->tilt = thing_real(db, pair, "tilt");
    out->velocity_tolerance = thing_real(db, pair, "velocity_tolerance");
    out->phase_ramp_time = thing_real(db, pair, "phase_ramp_time");
    out->friction_static = thing_real(db, pair, "friction_static");
    out->friction_kinetic = thing_real(db, pair, "friction_kinetic");
    out->rolling_friction = thing_real(db, pair, "rolling_friction");
    out->spinning_friction = thing_real(db, pair, "spinning_friction");
    out->spinning_friction_static = thing_real(db, pair, "spinning_friction_static");
    out->slip_tolerance = thing_real(db, pair, "slip_tolerance");
    out->smooth_sliding_only =
        thing_enum(db, pair, "smooth_friction") == CONTACT_SMOOTH_FRICTION_SLIDING;
    out->tangent_stiffness = thing_real(db, pair, "tangent_stiffness");
    out->tangent_damping = thing_real(db, pair, "tangent_damping");
    out->map_rule = (ContactMapRule)thing_enum(db, pair, "map_quadrature");
    out->map_interpolate = thing_enum(db, pair, "map_node") == CONTACT_MAP_NODE_INTERPOLATE;
    out->map_convolution = (ContactMapConvolution)thing_enum(db, pair, "map_convolution");
    IssimError why = {0};
    IssimStatus derived = contact_params_derive(out, &why);
    if (derived != ISSIM_OK)
        return issim_error_set(err, derived, "%s: %s", thing_name(db, pair), why.message);
    if (out->damping_from_restitution) {
        if (!(reduced_mass > 0.0) || !isfinite(reduced_mass))
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "%s: cannot derive damping from restitution without a "
                                   "positive mass",
                                   thing_name(db, pair));
        out->damping =
            contact_damping_for_restitution(out->stiffness, reduced_mass, out->restitution);
    } else {
        out->damping = thing_real(db, pair, "damping");
    }
    return ISSIM_OK;
}

double contact_damping_for_restitution(double k, double m, double r) {
    double ln_r = log(r);
    return -2.0 * ln_r * sqrt(k * m) / sqrt(M_PI * M_PI + ln_r * ln_r);
}

double contact_restitution_of(double k, double b, double m) {
    double zeta = b / (2.0 * sqrt(k * m));
    if (zeta >= 1.0)
        return 0.0;
    return exp(-zeta * M_PI / sqrt(1.0 - zeta * zeta));
}

double contact_duration_of(double k, double b, double m) {
    double omega_n = sqrt(k / m);
    double zeta = b / (2.0 * sqrt(k * m));
    if (zeta >= 1.0)
        return INFINITY;
    return M_PI / (omega_n * sqrt(1.0 - zeta * zeta));
}

double contact_internal_friction_factor(double r) {
    return (1.0 - r * r) / (1.0 + r * r);
}

double contact_internal_friction_c0_factor(double r, double h) {
    return (1.0 - r * r) / (1.0 + r * r - 2.0 * h);
}

double contact_hertz_modulus(double ea, double nua, double eb, double nub) {
    return 1.0 / ((1.0 - nua * nua) / ea + (1.0 - nub * nub) / eb);
}

double contact_hertz_radius(double ra, double rb) {
    double inv = (ra > 0.0 ? 1.0 / ra : 0.0) + (rb > 0.0 ? 1.0 / rb : 0.0);
    return inv > 0.0 ? 1.0 / inv : INFINITY;
}

/* m x'' = -c x^(3/2): delta_max = (5 m v^2 / (4 c))^(2/5), and the duration is
 * 2 (delta_max / v) int_0^1 dx / sqrt(1 - x^(5/2)) = 2.9432 delta_max / v. With c = 4/3 E* R^(1/2)
 * this is the (15 m / (16 E* sqrt R))^(2/5) form of the header. */
double contact_hertz_duration(double coeff, double m, double v) {
    double delta_max = pow(1.25 * m * v * v / coeff, 0.4);
    return 2.9432 * delta_max / v;
}

IssimStatus contact_params_derive(ContactParams *p, IssimError *err) {
    if (p->friction_kinetic > p->friction_static)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "friction_kinetic %g exceeds friction_static %g",
                               p->friction_kinetic, p->friction_static);
    double r = p->restitution;
    if (p->model == CONTACT_MODEL_INTERNAL_FRICTION_C0) {
        if (!(p->tilt < r * r))
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "tilt %g must be below restitution^2 = %g (004 eq. D.170)",
                                   p->tilt, r * r);
        p->if_factor = contact_internal_friction_c0_factor(r, p->tilt);
    } else {
        p->if_factor = contact_internal_friction_factor(r);
    }
    p->hc_lambda = 1.5 * p->hc_alpha * p->stiffness;
    double radius = contact_hertz_radius(p->radius_a, p->radius_b);
    if (p->model == CONTACT_MODEL_HERTZ && !isfinite(radius))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "Hertz needs a curved body: radius_a and radius_b are both 0");
    double modulus = contact_hertz_modulus(p->youngs_a, p->poisson_a, p->youngs_b, p->poisson_b);
    p->hertz_coeff = isfinite(radius) ? 4.0 / 3.0 * modulus * sqrt(radius) : 0.0;
    if (p->model == CONTACT_MODEL_BILINEAR_ORIGIN)
        p->restitution_stiffness = p->stiffness * r * r;
    else
        p->restitution_stiffness = p->stiffness / (r * r);
    return ISSIM_OK;
}
