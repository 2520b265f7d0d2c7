/* ContactModelClass.ignores_effective_mass: a model that sets it promises that none of its hooks
 * reads k->effective_mass, and the engine then hands its merge ledger, energies and step-end
 * passes kinematics with the mass left NaN. Each built-in model that sets it is driven through
 * an onset, a loading and an unloading twice, once with the mass NaN and once with 0.37 kg:
 * every force, commit event, history and potential must be the same bits. Internal friction
 * with a phase ramp reads the mass (its ramp's width): it must not set the flag, and the same
 * drive tells its two runs apart, which shows the comparison can fail. */
#include <math.h>
#include <string.h>

#include "issim/contact.h"
#include "testutil.h"

enum { STEPS = 40 };

static ContactParams params_for(ContactModelKind kind) {
    ContactParams p = {.model = kind,
                       .stiffness = 1e5,
                       .restitution = 0.5,
                       .damping = 40.0,
                       .exponent = 1.5,
                       .hc_alpha = 0.2,
                       .youngs_a = 2e9,
                       .poisson_a = 0.3,
                       .radius_a = 0.02,
                       .youngs_b = 2e9,
                       .poisson_b = 0.3,
                       .tilt = 0.1,
                       .phase_ramp_time = 1e-3,
                       .friction_static = 0.5,
                       .friction_kinetic = 0.4,
                       .tangent_stiffness = 1e5,
                       .tangent_damping = 10.0};
    IssimError err = {0};
    assert_int_equal(contact_params_derive(&p, &err), ISSIM_OK);
    return p;
}

/* One drive of the model: depth up to 1 mm and back, sliding, with the given mass; returns a
 * fingerprint of everything the model produced (forces, events, history, potential). */
static double drive(const ContactModelClass *m, const ContactParams *p, double mass,
                    double *trace) {
    ContactHistory h = {0};
    ContactKinematics k = {.normal = {0, 0, 1}, .effective_mass = mass, .load = 0.2};
    k.depth = 1e-5;
    k.depth_rate = 0.1;
    m->begin(p, &h, &k);
    int n = 0;
    for (int i = 0; i < STEPS; i++) {
        double phase = (double)i / STEPS;
        k.t = 1e-4 * (i + 1);
        k.depth = 1e-3 * sin(M_PI * phase) + 1e-6;
        k.depth_rate = 1e-3 * M_PI * cos(M_PI * phase) / (1e-4 * STEPS);
        k.tangent_velocity = vec3(0.05 * cos(phase), 0.02, 0.0);
        k.contact_point = vec3(1e-3 * phase, 0, 0);
        ContactForce f = m->force(p, &h, &k);
        int events = m->commit(p, &h, &k);
        trace[n++] = f.normal;
        trace[n++] = f.tangent.x + 2.0 * f.tangent.y + 3.0 * f.tangent.z;
        trace[n++] = events;
        trace[n++] = m->potential(p, &h, &k);
        trace[n++] = h.friction_spring.x + h.friction_spring.y + h.depth_max;
    }
    return (double)n;
}

static bool same_bits(const double *a, const double *b, int n) {
    return memcmp(a, b, sizeof *a * (size_t)n) == 0;
}

static void test_flagged_models_never_read_the_mass(void **state) {
    (void)state;
    int flagged = 0;
    for (int kind = 0; kind < CONTACT_MODEL_COUNT; kind++) {
        const ContactModelClass *m = contact_model_class((ContactModelKind)kind);
        if (!m->ignores_effective_mass)
            continue;
        /* a model whose hooks ignore the mass ignores it in its force too */
        assert_true(m->force_ignores_effective_mass);
        if (m->state_size) /* the contact map: its state needs the bodies' maps (engine tests) */
            continue;
        ContactParams p = params_for((ContactModelKind)kind);
        double with_nan[5 * STEPS], with_mass[5 * STEPS];
        int n = (int)drive(m, &p, NAN, with_nan);
        assert_int_equal((int)drive(m, &p, 0.37, with_mass), n);
        if (!same_bits(with_nan, with_mass, n))
            fail_msg("%s sets ignores_effective_mass but its results change with the mass",
                     m->name);
        flagged++;
    }
    /* spring/damper, Hunt-Crossley, Hertz, both bilinear laws, the C0 variant */
    assert_int_equal(flagged, 6);
}

static void test_a_model_reading_the_mass_is_told_apart(void **state) {
    (void)state;
    const ContactModelClass *m = contact_model_class(CONTACT_MODEL_INTERNAL_FRICTION);
    assert_false(m->ignores_effective_mass);
    ContactParams p = params_for(CONTACT_MODEL_INTERNAL_FRICTION);
    double with_nan[5 * STEPS], with_mass[5 * STEPS];
    int n = (int)drive(m, &p, NAN, with_nan);
    drive(m, &p, 0.37, with_mass);
    assert_false(same_bits(with_nan, with_mass, n));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flagged_models_never_read_the_mass),
        cmocka_unit_test(test_a_model_reading_the_mass_is_told_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
