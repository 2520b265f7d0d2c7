/* issim-bench contact: force-law evaluations per second for each contact model, without and
 * with Coulomb friction (Goyal's algorithm), through the model class's force() as the engine's
 * right-hand side calls it. 4096 contact states (depths, rates, sliding velocities, histories)
 * are cycled so the branches are exercised as in a simulation; each figure is the median of 7
 * runs of 2^22 evaluations. Target (issue 3): one evaluation, friction included, below 50 ns.
 * Usage: issim-bench contact. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#include "issim/contact.h"

#define BC_STATES 4096
#define BC_EVALS (1 << 22)
#define BC_RUNS 7
#define BC_TARGET_NS 50.0

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ContactParams bench_params(ContactModelKind model, bool friction) {
    ContactParams p = {.model = model,
                       .stiffness = 1e8,
                       .damping = 2000.0,
                       .restitution = 0.8,
                       .exponent = model == CONTACT_MODEL_HUNT_CROSSLEY ? 1.5 : 1.0,
                       .hc_alpha = 0.2,
                       .youngs_a = 2e11,
                       .poisson_a = 0.3,
                       .radius_a = 0.01,
                       .youngs_b = 2e11,
                       .poisson_b = 0.3,
                       .tilt = 0.1,
                       .velocity_tolerance = 1e-5,
                       .friction_static = friction ? 0.5 : 0.0,
                       .friction_kinetic = friction ? 0.3 : 0.0,
                       .tangent_stiffness = 1e5,
                       .tangent_damping = 100.0};
    IssimError err = {0};
    contact_params_derive(&p, &err);
    return p;
}

static void fill_states(ContactKinematics *k, ContactHistory *h) {
    unsigned s = 12345u;
    for (int i = 0; i < BC_STATES; i++) {
        s = s * 1664525u + 1013904223u;
        double u = (double)(s >> 8) / 16777216.0;
        double depth = 1e-5 * u;
        k[i] = (ContactKinematics){.depth = depth,
                                   .depth_rate = (i & 1 ? 1.0 : -1.0) * 0.3 * u,
                                   .normal = {0, 0, 1},
                                   .tangent_velocity = {0.1 * u * (i & 2 ? 1 : -1), 0.0, 0.0},
                                   .effective_mass = 1.0,
                                   .t = 1e-3,
                                   .load = 9.81};
        h[i] = (ContactHistory){.depth_max = 1.2e-5 * u,
                                .friction_spring = {1e-5 * u, 0, 0},
                                .friction_t = 1e-3 - 1e-5,
                                .sliding = (i & 4) != 0};
    }
}

static double ns_per_eval(const ContactModelClass *m, const ContactParams *p,
                          const ContactKinematics *k, const ContactHistory *h) {
    double runs[BC_RUNS];
    volatile double sink = 0.0;
    for (int r = 0; r < BC_RUNS; r++) {
        double acc = 0.0, start = now_s();
        for (int i = 0; i < BC_EVALS; i++) {
            int j = i & (BC_STATES - 1);
            ContactForce f = m->force(p, &h[j], &k[j]);
            acc += f.normal + f.tangent.x;
        }
        runs[r] = 1e9 * (now_s() - start) / BC_EVALS;
        sink += acc;
    }
    (void)sink;
    return bench_quantile(runs, BC_RUNS, 0.5);
}

int bench_contact(int argc, char **argv) {
    (void)argc;
    (void)argv;
    static ContactKinematics k[BC_STATES];
    static ContactHistory h[BC_STATES];
    fill_states(k, h);
    printf("\n## contact: force-law evaluations (median of %d runs of %d; target < %.0f ns with "
           "friction)\n",
           BC_RUNS, BC_EVALS, BC_TARGET_NS);
    printf("%-22s %12s %14s %12s %14s %s\n", "model", "ns/eval", "Mevals/s", "ns friction",
           "Mevals/s fr.", "target");
    int failures = 0;
    for (int i = 0; i < CONTACT_MODEL_COUNT; i++) {
        const ContactModelClass *m = contact_model_class((ContactModelKind)i);
        ContactParams plain = bench_params((ContactModelKind)i, false);
        ContactParams fric = bench_params((ContactModelKind)i, true);
        double a = ns_per_eval(m, &plain, k, h), b = ns_per_eval(m, &fric, k, h);
        bool ok = b < BC_TARGET_NS;
        failures += !ok;
        printf("%-22s %12.2f %14.1f %12.2f %14.1f %s\n", m->name, a, 1e3 / a, b, 1e3 / b,
               ok ? "met" : "MISSED");
    }
    return failures ? 1 : 0;
}
