/* Contact-model registry, contact-pair properties and the restitution relations of the linear
 * spring/damper (004 eqs. 4.89-4.93; VALIDATION.md V1-V2). */
#include "issim/contact.h"

#include <math.h>
#include <string.h>

#include "contact_internal.h"

static const ContactModelClass *const model_classes[CONTACT_MODEL_COUNT] = {
    [CONTACT_MODEL_SPRING_DAMPER] = &contact_spring_damper_class,
};

static const char *model_names[CONTACT_MODEL_COUNT];

const ContactModelClass *contact_model_class(ContactModelKind kind) {
    if ((int)kind < 0 || kind >= CONTACT_MODEL_COUNT)
        return NULL;
    return model_classes[kind];
}

bool contact_model_parse(const char *name, ContactModelKind *out) {
    for (int i = 0; i < CONTACT_MODEL_COUNT; i++) {
        if (strcmp(model_classes[i]->name, name) == 0) {
            *out = (ContactModelKind)i;
            return true;
        }
    }
    return false;
}

const char *const *contact_model_names(int *count) {
    /* Filled from the class table so a new model needs one line above, not two. The writes
     * are idempotent (same pointers every time), so concurrent first calls are harmless in
     * practice; callers are set-up code anyway. */
    for (int i = 0; i < CONTACT_MODEL_COUNT; i++)
        model_names[i] = model_classes[i]->name;
    *count = CONTACT_MODEL_COUNT;
    return model_names;
}

static const char *const damping_from_names[] = {"restitution", "value"};

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
        {.name = "stiffness",
         .type = PROP_REAL,
         .unit = "N/m",
         .description = "normal stiffness k of the contact spring",
         .min = 0,
         .max = 1e13,
         .min_exclusive = true,
         .mutability = PROP_LIVE,
         .default_value = prop_real(1e5)},
        {.name = "damping_from",
         .type = PROP_ENUM,
         .unit = "",
         .description = "derive the damping from the restitution, or use the damping value",
         .mutability = PROP_LIVE,
         .enum_names = damping_from_names,
         .enum_count = 2,
         .default_value = prop_enum(0)},
        {.name = "restitution",
         .type = PROP_REAL,
         .unit = "",
         .description = "single-contact coefficient of restitution r the damping is chosen for",
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
    out->stiffness = thing_real(db, pair, "stiffness");
    out->restitution = thing_real(db, pair, "restitution");
    out->damping_from_restitution = thing_enum(db, pair, "damping_from") == 0;
    out->clamp_attraction = thing_bool(db, pair, "clamp_attraction");
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
