/* issim smooth_contact: Kry's contact evolution (seed 002 ch. 4), one continuous contact between
 * two smooth surfaces integrated in reduced contact coordinates q = (s, t, u, v, psi) (002 eq.
 * 4.8): (s, t) on body a's surface, (u, v) on body b's, psi the angle between their contact
 * frames. Body b is fixed (002 4.3: "body 1 free to move in contact with body 2 which is
 * fixed"); its frame has a world pose. The body's pose and velocity are functions of (q, q_dot),
 * so the contact never drifts off the surfaces and needs no stabilisation.
 *
 * What is here: the contact frames and the contact matrix H (002 4.2.3, App. A), the reduced
 * Newton-Euler equations (4.3, eq. 4.15-4.23) solved with the contact wrench for q_ddot, dynamic
 * Coulomb friction with rolling and spinning terms (4.4.1, eq. 4.24-4.29), no-slip and no-spin
 * (4.4.2-4.4.3) as extra velocity constraints, the switching between them (4.4.4), patch
 * boundary traversal (4.5), and the entry from the free bodies' states. The engine plugs it in as
 * a reduced-pair model (engine_reduced_smooth, issim/engine_resolver.h).
 *
 * Thread: any; every function is pure on caller-owned data.
 */
#ifndef ISSIM_SMOOTH_CONTACT_H
#define ISSIM_SMOOTH_CONTACT_H

#include "issim/core.h"
#include "issim/math.h"
#include "issim/surface.h"

enum { SMOOTH_COORDINATES = 5 }; /* s, t, u, v, psi */

/* How friction acts now (002 4.4): sliding (dynamic Coulomb, 4.4.1), rolling without slip
 * (4.4.2), rolling without slip or spin (4.4.3). */
typedef enum SmoothFrictionMode {
    SMOOTH_SLIDING,
    SMOOTH_NO_SLIP,
    SMOOTH_NO_SLIP_NO_SPIN,
} SmoothFrictionMode;

typedef struct SmoothFriction {
    double kinetic;        /* mu of sliding (4.24) */
    double static_slip;    /* mu_static of 4.45: > 0 lets a slow slip stick (no-slip mode) */
    double rolling;        /* mu_r of 4.27-4.28, m (torque per newton of normal force) */
    double spinning;       /* mu_s of 4.29, m */
    double static_spin;    /* mu_spin-static of 4.46, m: > 0 lets a slow spin stick */
    double slip_tolerance; /* m/s: sliding slower than this sticks (static_slip > 0) or, without
                              static friction, has its friction scaled down linearly */
    double spin_tolerance; /* rad/s: the same for spinning and rolling friction torques */
} SmoothFriction;

/* The pair: body a moving on fixed body b. */
typedef struct SmoothContactSystem {
    const SmoothSurface *surface_a, *surface_b; /* Borrowed; body frames (a: centre of mass
                                                   at the origin, principal axes) */
    double mass;                                /* body a, kg */
    Vec3 inertia;                               /* body a's principal moments, kg m^2 */
    Vec3 pos_b;                                 /* world pose of b's frame */
    Quat orient_b;
    SmoothFriction friction;
} SmoothContactSystem;

typedef struct SmoothContactState {
    int patch_a, patch_b;
    /* The piece of each patch the contact is on (smooth_surface_piece; 0: the one holding the
     * point), kept for a whole step and changed where the contact crosses a break, as the
     * patch is at an edge (smooth_contact_traverse). */
    int piece_a, piece_b;
    double q[SMOOTH_COORDINATES];    /* s, t, u, v, psi */
    double rate[SMOOTH_COORDINATES]; /* their time derivatives */
    SmoothFrictionMode mode;
} SmoothContactState;

/* Body a's world motion. */
typedef struct SmoothBodyMotion {
    Vec3 pos;
    Quat orient;
    Vec3 vel, angvel; /* world */
} SmoothBodyMotion;

/* What one evaluation gives. Wrench parts in body a's contact frame (x along c_s, z its outward
 * normal): the force of b on a is (friction_force.x, friction_force.y, -normal_force). */
typedef struct SmoothContactDynamics {
    double accel[SMOOTH_COORDINATES]; /* q_ddot */
    double normal_force;              /* N, > 0 pressing (separation when it turns negative) */
    Vec3 friction_force;              /* N, contact frame of a (z 0) */
    Vec3 friction_torque;             /* N m, contact frame of a */
    Vec3 slip;                        /* a's material point relative to b, contact frame, m/s */
    Vec3 spin;                        /* a's angular velocity relative to b, contact frame */
    Vec3 point;                       /* the contact point, world */
    Vec3 normal;                      /* b's outward normal there, world */
    Vec3 force;                       /* the contact force on a (normal and friction), world */
} SmoothContactDynamics;

/* The contact kinematics (002 4.2, App. A) at a state: H's columns, body coordinates of a
 * (angular part first, then the linear velocity of a's centre of mass), so that a's spatial
 * velocity relative to b is H q_dot (eq. 4.14, 4.16). Errors: a degenerate surface point
 * (naming the surface, the patch and (s, t)). */
IssimStatus smooth_contact_matrix(const SmoothContactSystem *sys, const SmoothContactState *st,
                                  double h[6][SMOOTH_COORDINATES], IssimError *err);

/* q_ddot and the contact wrench under the world force and torque on a (about its centre of
 * mass), in st->mode (002 eq. 4.23 frictionless, 4.34 sliding; the no-slip and no-spin
 * constraints of 4.35-4.44 as acceleration-level rows). */
IssimStatus smooth_contact_dynamics(const SmoothContactSystem *sys, const SmoothContactState *st,
                                    Vec3 force, Vec3 torque, SmoothContactDynamics *out,
                                    IssimError *err);

/* Body a's world pose and velocity (002 eq. 4.9, 4.14). */
IssimStatus smooth_contact_motion(const SmoothContactSystem *sys, const SmoothContactState *st,
                                  SmoothBodyMotion *out, IssimError *err);

/* The state whose configuration is nearest a's motion: the contact point on each surface
 * nearest `point` (world), psi from the two contact frames, and q_dot by the projection of a's
 * spatial velocity onto the contact's motions in the kinetic-energy metric (so entering never
 * adds kinetic energy: the normal approach speed is removed). Errors (ISSIM_ERR_RANGE): a point
 * farther than `tolerance` (m) from either surface ("a contact started off the surfaces", naming
 * which), or coordinates whose configuration is more than `tolerance` or 0.02 rad from a's. */
IssimStatus smooth_contact_enter(const SmoothContactSystem *sys, const SmoothBodyMotion *a,
                                 Vec3 point, double tolerance, SmoothContactState *out,
                                 IssimError *err);

/* Friction switching at the end of a step (002 4.4.4): sliding slower than slip_tolerance with
 * static friction enters no-slip (q_dot projected onto the rolling motions in the kinetic-energy
 * metric: kinetic energy never rises); no-slip whose friction leaves the static cone slides;
 * the same for spin. Returns true when the mode or q_dot changed. */
bool smooth_contact_switch_friction(const SmoothContactSystem *sys, SmoothContactState *st,
                                    const SmoothContactDynamics *now);

/* Patch boundary traversal at the end of a step (002 4.5): `before` is the state at the start of
 * the step (the same patches), `st` at its end, h the step. When the contact left a domain
 * (grown by 4.5.5's margin), the crossing is located on the segment between them (eq. 4.50-4.51),
 * the contact moved to the adjacent patch (4.52, psi corrected by 4.53, q_dot by 4.54) and the
 * rest of the step integrated on it (RK4 under the same force and torque), corners by
 * repetition (4.5.4). Returns ISSIM_OK with *crossed set; ISSIM_ERR_RANGE when the contact
 * leaves an open edge of a surface (the surface ends: the caller lets go of the contact). */
IssimStatus smooth_contact_traverse(const SmoothContactSystem *sys,
                                    const SmoothContactState *before, SmoothContactState *st,
                                    double h, Vec3 force, Vec3 torque, int *crossed,
                                    IssimError *err);

/* Sets each side's piece to the one holding its contact point, on a break the one its rate
 * leads into (a state made from coordinates: smooth_contact_enter does it). */
void smooth_contact_locate_pieces(const SmoothContactSystem *sys, SmoothContactState *st);

/* One classical RK4 step of (q, q_dot) under a constant world force and torque on a. */
IssimStatus smooth_contact_rk4(const SmoothContactSystem *sys, SmoothContactState *st, double h,
                               Vec3 force, Vec3 torque, IssimError *err);

/* Kinetic energy of a (J) and its height-independent potential is the caller's. */
double smooth_contact_kinetic_energy(const SmoothContactSystem *sys, const SmoothBodyMotion *a);

#endif
