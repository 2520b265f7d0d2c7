/* Contact-model registry, the derived parameters, and the closed forms
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

/* A registered model's parameters: its own (real model values in free slots, with a default in
 * range and a name no other declaration has) or declarations it shares with the built-ins. */
static IssimStatus check_declaration(const ContactModelClass *cls, const ContactParamDecl *d,
                                     IssimError *err) {
    if (!d || !d->prop.name || !d->prop.name[0])
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "contact model %s: a parameter declaration without a name",
                               cls->name);
    const ContactParamDecl *known = contact_param_decl(d->prop.name);
    if (known == d)
        return ISSIM_OK;
    if (known)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "contact model %s: parameter '%s' is already declared (list that "
                               "declaration to share it)",
                               cls->name, d->prop.name);
    if (d->store != CONTACT_PARAM_MODEL_VALUE || d->prop.type != PROP_REAL || d->index < 0 ||
        d->index >= CONTACT_MODEL_VALUES_MAX)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "contact model %s: parameter '%s' must be a real stored in "
                               "model_values[0..%d]",
                               cls->name, d->prop.name, CONTACT_MODEL_VALUES_MAX - 1);
    IssimError why = {0};
    if (prop_validate(&d->prop, &d->prop.default_value, &why) != ISSIM_OK)
        return issim_error_set(err, ISSIM_ERR_INVALID, "contact model %s: parameter %s: %s",
                               cls->name, d->prop.name, why.message);
    return ISSIM_OK;
}

static IssimStatus check_declarations(const ContactModelClass *cls, IssimError *err) {
    if (cls->param_count < 0 || (cls->param_count > 0 && !cls->params))
        return issim_error_set(err, ISSIM_ERR_INVALID, "contact model %s: %d parameters, no list",
                               cls->name, cls->param_count);
    for (int i = 0; i < cls->param_count; i++) {
        IssimStatus s = check_declaration(cls, cls->params[i], err);
        if (s != ISSIM_OK)
            return s;
    }
    return ISSIM_OK;
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
    IssimStatus declared = check_declarations(cls, err);
    if (declared != ISSIM_OK)
        return declared;
    if (model_class_count >= CONTACT_MODEL_MAX)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "cannot register contact model %s: the table holds %d models",
                               cls->name, CONTACT_MODEL_MAX);
    int count;
    contact_model_names(&count); /* the built-ins' names first (once) */
    model_names[model_class_count] = cls->name;
    model_classes[model_class_count] = cls;
    *kind = (ContactModelKind)model_class_count++;
    return ISSIM_OK;
}

bool contact_model_parse(const char *name, ContactModelKind *out) {
    int count;
    const char *const *names = contact_model_names(&count);
    int i = vocabulary_parse(names, count, name);
    if (i >= 0)
        *out = (ContactModelKind)i;
    return i >= 0;
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
