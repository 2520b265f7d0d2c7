/* The contact pair's declared parameters: the ones every pair has, and the generic reading of
 * every declaration (common and each model's, ContactModelClass.params) into pair properties
 * and into ContactParams. A model's own parameters are declared in its file; nothing here names
 * them. */
#include <math.h>
#include <string.h>

#include "contact_internal.h"

/* The enum members ContactParams stores are read as int (store_member). */
_Static_assert(sizeof(ContactModelKind) == sizeof(int) &&
                   sizeof(ContactResolverKind) == sizeof(int) &&
                   sizeof(ContactSolverKind) == sizeof(int) &&
                   sizeof(ContactMapRule) == sizeof(int) &&
                   sizeof(ContactMapConvolution) == sizeof(int),
               "ContactParams' enum members are int-sized");

/* The "model" property's names are the registered classes' (contact_model_names), filled in
 * when a pair gets its properties. */
static const ContactParamDecl param_model =
    CONTACT_ENUM_PARAM("model",
                       "contact force law between the two materials "
                       "(docs/contact-models.md)",
                       NULL, 0, CONTACT_MODEL_SPRING_DAMPER, model);
static const ContactParamDecl param_resolver = CONTACT_ENUM_PARAM(
    "resolver",
    "how contacts of this pair are resolved: force_law (the model, inside the integrator), "
    "complementarity (a solver over the island), reduced (the pair in contact coordinates)",
    contact_resolver_names, CONTACT_RESOLVER_COUNT, CONTACT_RESOLVER_FORCE_LAW, resolver);
static const ContactParamDecl param_solver = CONTACT_ENUM_PARAM(
    "solver",
    "solver of complementarity islands: auto (lemke up to 24 contacts, 4 with friction, pgs "
    "above), pgs (projected Gauss-Seidel, exact friction cone), reference (frictionless PGS), "
    "lemke (001 2.2, 8-sided friction cone), fischer_newton (001 2.1, frictionless)",
    contact_solver_names, CONTACT_SOLVER_COUNT, CONTACT_SOLVER_AUTO, solver);
/* A stiffness below a mN/m holds nothing up: the contact is never resolved. */
static const ContactParamDecl param_stiffness = CONTACT_REAL_PARAM(
    "stiffness", "N/m", "normal stiffness k (bilinear: loading k1; with exponent n: N/m^n)", 1e-3,
    1e13, false, 1e5, stiffness);
static const ContactParamDecl param_damping_from = {
    .prop = {.name = "damping_from",
             .type = PROP_ENUM,
             .unit = "",
             .description = "derive the damping from the restitution, or use the damping value",
             .mutability = PROP_LIVE,
             .enum_names = contact_damping_from_names,
             .enum_count = CONTACT_DAMPING_FROM_COUNT,
             .default_value = {.type = PROP_ENUM, .integer = CONTACT_DAMPING_FROM_RESTITUTION}},
    .store = CONTACT_PARAM_FLAG,
    .offset = offsetof(ContactParams, damping_from_restitution),
    .index = CONTACT_DAMPING_FROM_RESTITUTION};
static const ContactParamDecl param_restitution =
    CONTACT_REAL_PARAM("restitution", "",
                       "coefficient of restitution r (spring/damper damping, internal friction "
                       "f, bilinear k2)",
                       0, 1, true, 0.8, restitution);
/* Overwritten by the derived damping when damping_from = "restitution"
 * (contact_params_from_thing, and per contact by the engine). */
static const ContactParamDecl param_damping =
    CONTACT_REAL_PARAM("damping", "N s/m", "normal damping b (used when damping_from = \"value\")",
                       0, 1e13, false, 0, damping);

static const ContactParamDecl param_friction_static =
    CONTACT_REAL_PARAM("friction_static", "", "Coulomb static coefficient mu_s (0: frictionless)",
                       0.0, 10.0, false, 0.0, friction_static);
static const ContactParamDecl param_friction_kinetic =
    CONTACT_REAL_PARAM("friction_kinetic", "", "Coulomb kinetic coefficient mu_k (<= mu_s)", 0.0,
                       10.0, false, 0.0, friction_kinetic);
static const ContactParamDecl param_rolling_friction =
    CONTACT_REAL_PARAM("rolling_friction", "m",
                       "smooth contact: rolling friction mu_r, torque per newton of normal force "
                       "(002 eq. 4.27-4.28)",
                       0.0, 1.0, false, 0.0, rolling_friction);
static const ContactParamDecl param_spinning_friction =
    CONTACT_REAL_PARAM("spinning_friction", "m",
                       "smooth contact: spinning friction mu_s, torque per newton of normal force "
                       "(002 eq. 4.29)",
                       0.0, 1.0, false, 0.0, spinning_friction);
static const ContactParamDecl param_spinning_friction_static =
    CONTACT_REAL_PARAM("spinning_friction_static", "m",
                       "smooth contact: static spinning friction (002 eq. 4.46; 0: never stops "
                       "spinning)",
                       0.0, 1.0, false, 0.0, spinning_friction_static);
static const ContactParamDecl param_smooth_friction = {
    .prop = {.name = "smooth_friction",
             .type = PROP_ENUM,
             .unit = "",
             .description = "smooth contact: stick_slip (sliding with friction_kinetic until the "
                            "slip drops below slip_tolerance, then rolling without slip while the "
                            "force stays inside friction_static's cone, 002 4.4.4) or sliding "
                            "(002 4.4.1's dynamic friction only, as the seed's own runs)",
             .mutability = PROP_LIVE,
             .enum_names = contact_smooth_friction_names,
             .enum_count = CONTACT_SMOOTH_FRICTION_COUNT,
             .default_value = {.type = PROP_ENUM, .integer = CONTACT_SMOOTH_FRICTION_STICK_SLIP}},
    .store = CONTACT_PARAM_FLAG,
    .offset = offsetof(ContactParams, smooth_sliding_only),
    .index = CONTACT_SMOOTH_FRICTION_SLIDING};
static const ContactParamDecl param_slip_tolerance = CONTACT_REAL_PARAM(
    "slip_tolerance", "m/s",
    "smooth contact: slip below which friction_static holds the contact (no-slip, 002 4.4.4), or "
    "without it the Coulomb law is scaled down linearly; the same in rad/s for spinning and "
    "rolling",
    1e-9, 10.0, false, 0.01, slip_tolerance);
/* Read by the engine's smooth contact from the pair thing (engine_smooth.c). */
static const ContactParamDecl param_start_coords = {
    .prop = {.name = "start_coords",
             .type = PROP_STRING,
             .unit = "",
             .description = "smooth contact: start in contact at \"s t u v psi\" (or \"pa s t pb "
                            "u v psi\" with patch indices): (s, t) on the first material's body, "
                            "(u, v) on the second's (002 App. B.1's coords); empty: the collision "
                            "manager finds the contact",
             .mutability = PROP_FIXED_DURING_RUN,
             .default_value = {.type = PROP_STRING}},
    .store = CONTACT_PARAM_UNSTORED};
static const ContactParamDecl param_start_rates = {
    .prop = {.name = "start_rates",
             .type = PROP_STRING,
             .unit = "",
             .description = "smooth contact: their rates \"s' t' u' v' psi'\" at the start (002 "
                            "App. B.1's dcoords; 1/s)",
             .mutability = PROP_FIXED_DURING_RUN,
             .default_value = {.type = PROP_STRING}},
    .store = CONTACT_PARAM_UNSTORED};
static const ContactParamDecl param_tangent_stiffness =
    CONTACT_REAL_PARAM("tangent_stiffness", "N/m", "friction: tangential penalty spring kt (Goyal)",
                       1e-3, 1e13, false, 1e5, tangent_stiffness);
static const ContactParamDecl param_tangent_damping =
    CONTACT_REAL_PARAM("tangent_damping", "N s/m", "friction: tangential penalty damper ct (Goyal)",
                       0.0, 1e13, false, 0.0, tangent_damping);

/* The common parameters in property order: COMMON_HEAD_COUNT before the models' own, the rest
 * after them. */
static const ContactParamDecl *const common_params[] = {
    &param_model,
    &param_resolver,
    &param_solver,
    &param_stiffness,
    &param_damping_from,
    &param_restitution,
    &param_damping,
    /* after the models' */
    &param_friction_static,
    &param_friction_kinetic,
    &param_rolling_friction,
    &param_spinning_friction,
    &param_spinning_friction_static,
    &param_smooth_friction,
    &param_slip_tolerance,
    &param_start_coords,
    &param_start_rates,
    &param_tangent_stiffness,
    &param_tangent_damping,
};
enum {
    COMMON_COUNT = sizeof common_params / sizeof common_params[0],
    COMMON_HEAD_COUNT = 7,
};

const ContactParamDecl *const *contact_common_params(int *head_count, int *tail_count) {
    *head_count = COMMON_HEAD_COUNT;
    *tail_count = COMMON_COUNT - COMMON_HEAD_COUNT;
    return common_params;
}

const ContactParamDecl *contact_param_decl(const char *name) {
    for (int i = 0; i < COMMON_COUNT; i++)
        if (strcmp(common_params[i]->prop.name, name) == 0)
            return common_params[i];
    for (int m = 0; m < contact_model_count(); m++) {
        const ContactModelClass *cls = contact_model_class((ContactModelKind)m);
        for (int i = 0; i < cls->param_count; i++)
            if (strcmp(cls->params[i]->prop.name, name) == 0)
                return cls->params[i];
    }
    return NULL;
}

/* Whether model m's parameter i is one an earlier model also reads (added with that one). */
static bool listed_before(int m, int i) {
    const ContactParamDecl *d = contact_model_class((ContactModelKind)m)->params[i];
    for (int n = 0; n <= m; n++) {
        const ContactModelClass *cls = contact_model_class((ContactModelKind)n);
        for (int j = 0; j < (n < m ? cls->param_count : i); j++)
            if (cls->params[j] == d)
                return true;
    }
    return false;
}

static IssimStatus add_param(ThingDb *db, ThingId pair, const ContactParamDecl *d,
                             IssimError *err) {
    if (d != &param_model)
        return thing_add_prop(db, pair, &d->prop, err);
    PropDef model = d->prop;
    model.enum_names = contact_model_names(&model.enum_count);
    return thing_add_prop(db, pair, &model, err);
}

IssimStatus contact_pair_add_props(ThingDb *db, ThingId pair, IssimError *err) {
    IssimStatus s = ISSIM_OK;
    for (int i = 0; s == ISSIM_OK && i < COMMON_HEAD_COUNT; i++)
        s = add_param(db, pair, common_params[i], err);
    for (int m = 0; s == ISSIM_OK && m < contact_model_count(); m++) {
        const ContactModelClass *cls = contact_model_class((ContactModelKind)m);
        for (int i = 0; s == ISSIM_OK && i < cls->param_count; i++)
            if (!listed_before(m, i))
                s = add_param(db, pair, cls->params[i], err);
    }
    for (int i = COMMON_HEAD_COUNT; s == ISSIM_OK && i < COMMON_COUNT; i++)
        s = add_param(db, pair, common_params[i], err);
    return s;
}

/* Stores a pair's value of d where the declaration says. */
static void store_param(const ContactParamDecl *d, const ThingDb *db, ThingId pair,
                        ContactParams *out) {
    char *member = (char *)out + d->offset;
    switch (d->store) {
    case CONTACT_PARAM_MEMBER:
        if (d->prop.type == PROP_REAL) {
            double v = thing_real(db, pair, d->prop.name);
            memcpy(member, &v, sizeof v);
        } else if (d->prop.type == PROP_BOOL) {
            bool v = thing_bool(db, pair, d->prop.name);
            memcpy(member, &v, sizeof v);
        } else if (d->prop.type == PROP_ENUM) {
            int v = thing_enum(db, pair, d->prop.name);
            memcpy(member, &v, sizeof v);
        }
        return;
    case CONTACT_PARAM_FLAG: {
        bool v = thing_enum(db, pair, d->prop.name) == d->index;
        memcpy(member, &v, sizeof v);
        return;
    }
    case CONTACT_PARAM_MODEL_VALUE:
        out->model_values[d->index] = thing_real(db, pair, d->prop.name);
        return;
    case CONTACT_PARAM_UNSTORED:
        return;
    }
}

/* Every declared parameter into out: the common ones, every built-in model's (the engine reads
 * some whatever the model: velocity_tolerance for sleep), and the model values of the pair's
 * own model only (two registered models may use the same slot). */
static void store_params(const ThingDb *db, ThingId pair, ContactParams *out) {
    for (int i = 0; i < COMMON_COUNT; i++)
        store_param(common_params[i], db, pair, out);
    for (int m = 0; m < contact_model_count(); m++) {
        const ContactModelClass *cls = contact_model_class((ContactModelKind)m);
        for (int i = 0; i < cls->param_count; i++) {
            const ContactParamDecl *d = cls->params[i];
            if (d->store != CONTACT_PARAM_MODEL_VALUE || (int)out->model == m)
                store_param(d, db, pair, out);
        }
    }
}

IssimStatus contact_params_from_thing(const ThingDb *db, ThingId pair, double reduced_mass,
                                      ContactParams *out, IssimError *err) {
    memset(out, 0, sizeof *out);
    store_params(db, pair, out);
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
    }
    return ISSIM_OK;
}
