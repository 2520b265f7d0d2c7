/* issim bar drop: the rigid bar drop of seed 000 ch. 6 (eq. 6.2-6.10, Table 6.1), an engine-free
 * planar model. The bar falls without spin and strikes a Hunt-Crossley foundation
 * (f = (K + B d(delta)/dt) delta, never pulling) with Coulomb friction at its tip; a fixed-step
 * RK4 of its own (src/engine/bar_drop.c) integrates one impact (VALIDATION.md V11, rigid part).
 * The engine reproduces it with scenes/bar_drop_angle.lua; this model is the reference.
 *
 * Threading: pure functions on caller-owned parameters and results (thread: any); nothing is
 * retained between calls.
 */
#ifndef ISSIM_BAR_DROP_H
#define ISSIM_BAR_DROP_H

#include "issim/core.h"
#include "issim/thing.h"

typedef struct BarDropParams {
    double length;      /* L, m (Table 6.1: 0.2) */
    double mass;        /* kg (the V10 steel rod: 0.193) */
    double inertia;     /* about the centre, kg m^2 (uniform bar: m L^2 / 12) */
    double stiffness;   /* K, N/m (5.5e7) */
    double damping;     /* B, N s/m^2: f = (K + B delta') delta (2.2e7) */
    double mu_static;   /* 0.1 */
    double mu_kinetic;  /* 0.075 */
    double angle;       /* impact angle between the bar and the foundation, rad, (0, pi/2] */
    double speed;       /* falling speed at impact, m/s (> 0), no spin */
    double dt;          /* RK4 step, s (1e-7: about 1,500 steps per contact) */
    double stick_speed; /* tip sliding speed below which the tip may stick, m/s */
} BarDropParams;

BarDropParams bar_drop_params_default(void);

typedef struct BarDropResult {
    double duration;                /* s, contact onset to separation */
    double tip_normal_velocity;     /* m/s after, > 0 leaving */
    double tip_tangential_velocity; /* m/s after */
    double com_normal_velocity;     /* m/s after: < 0 below the critical angle (000 6.4) */
    double com_tangential_velocity; /* m/s after */
    double angular_velocity;        /* rad/s after */
    double energy_ratio;            /* kinetic energy after / before */
    double tip_restitution;         /* tip_normal_velocity / speed */
    double impulse_ratio;           /* tangential / normal impulse (000 eq. 6.1) */
    double peak_normal_force;       /* N */
    int steps;
} BarDropResult;

/* One impact, from the tip touching to the tip leaving. ISSIM_ERR_INVALID for bad parameters,
 * ISSIM_ERR_NUMERIC if the tip never leaves. */
IssimStatus bar_drop_run(const BarDropParams *params, BarDropResult *out, IssimError *err);
/* The critical angle (rad) within [lo, hi] by bisection to tolerance: below it the centre of
 * mass still falls after the impact. ISSIM_ERR_RANGE if the sign does not change in [lo, hi]. */
IssimStatus bar_drop_critical_angle(const BarDropParams *params, double lo, double hi,
                                    double tolerance, double *angle, IssimError *err);
/* Bar length, mass, inertia (inertia.y), impact angle (bar.orient about y) and speed (|bar.vel|)
 * from a scene with a planar body "bar" of two vertices (scenes/bar_drop_angle.lua); K, B
 * (lambda), mu_s and mu_k from its pair "bar_foundation" if it has one (it must then be
 * hunt_crossley with exponent 1), else Table 6.1's. */
IssimStatus bar_drop_params_from_scene(const ThingDb *db, BarDropParams *out, IssimError *err);

#endif
