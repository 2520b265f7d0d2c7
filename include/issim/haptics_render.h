/* issim haptics, rendering: the force models the servo renders on the handle (seed 004 3.4,
 * 3.5, 4.9, App. D): local surfaces (a PD wall with Coulomb friction, texture regions), Siira's
 * stochastic texture (004 eqs. 3.29-3.43) with its random source, and the description of the
 * virtual coupling to an engine proxy body (the coupling's servo side lives in the servo,
 * haptics_servo.h, because it reads the registry).
 *
 * Threading: the functions are pure apart from the HapticRng they are given (thread: any). A
 * servo owns its surfaces, textures and random source while it runs; nothing here is shared.
 */
#ifndef ISSIM_HAPTICS_RENDER_H
#define ISSIM_HAPTICS_RENDER_H

#include <stdbool.h>
#include <stdint.h>

#include "issim/core.h"
#include "issim/haptics_pantograph.h"
#include "issim/math.h"

/* ===== Force models (004 3.4, 3.5, 4.9, App. D) ===== */

/* Siira's stochastic texture (004 eqs. 3.29-3.43): F_texture ~ u Normal(mu, Sigma) with u = 0
 * while the lateral speed is below epsilon. Statistics are given in surface space (tangent,
 * normal), mapped to world by R and to joint space by J^T. */
typedef struct HapticTexture {
    double mean[2];        /* surface space (tangent, normal), N */
    double cov[4];         /* surface-space covariance, row-major, N^2 */
    bool diagonal;         /* ignore the off-diagonal terms (004 3.6: not perceptibly different) */
    double epsilon;        /* m/s: dead band on the lateral speed (eq. 3.31) */
    double rate_speed_ref; /* m/s; > 0: pulses are drawn with probability min(1, v / ref) per
                              period (rate modulation by sliding speed, 004 ch. 6); 0: every
                              period */
    /* derived by haptic_texture_prepare: */
    double chol[4]; /* lower Cholesky factor of the (diagonal or full) covariance */
    bool prepared;
} HapticTexture;

/* Factorises the covariance (LAPACKE_dpotrf). ISSIM_ERR_RANGE when it is not positive
 * semi-definite (a zero covariance is allowed: deterministic texture). */
IssimStatus haptic_texture_prepare(HapticTexture *tex, IssimError *err);
/* World statistics for a surface whose tangent is t (unit, world): R = [t n] with n the left
 * normal (eqs. 3.32-3.35). */
void haptic_texture_world_stats(const HapticTexture *tex, HapticVec2 tangent, double mean_w[2],
                                double cov_w[4]);
/* Joint statistics: mu_tau = J^T mu_w, Sigma_tau = J^T Sigma_w J (eqs. 3.36-3.43). */
void haptic_texture_joint_stats(const double jacobian[4], const double mean_w[2],
                                const double cov_w[4], double mean_tau[2], double cov_tau[4]);

/* The servo's random source (xoshiro256**; Gaussian by the polar method). */
typedef struct HapticRng {
    uint64_t s[4];
    bool have_spare;
    double spare;
} HapticRng;
void haptic_rng_seed(HapticRng *r, uint64_t seed);
double haptic_rng_uniform(HapticRng *r); /* [0, 1) */
double haptic_rng_gauss(HapticRng *r);   /* standard normal */

/* One texture draw in joint space: zero inside the dead band (|lateral speed| < epsilon) or
 * when the rate modulation skips this period; else mu_tau + L_tau n with L_tau = J^T R L_s. */
void haptic_texture_sample_joint(const HapticTexture *tex, HapticRng *rng, HapticVec2 tangent,
                                 double lateral_speed, const double jacobian[4], double tau[2]);
/* The same draw in world space (mu_w + R L_s n), for tests and world-space users. */
void haptic_texture_sample_world(const HapticTexture *tex, HapticRng *rng, HapticVec2 tangent,
                                 double lateral_speed, double f[2]);

/* A local surface the servo renders itself (no engine round trip). */
typedef enum HapticSurfaceKind {
    HAPTIC_SURFACE_WALL,   /* half-plane: inside where (x - point) . normal < 0 */
    HAPTIC_SURFACE_REGION, /* texture region (axis-aligned rectangle, no wall): the handle
                              slides on the device's table (004 3.6, four quadrants) */
} HapticSurfaceKind;

typedef struct HapticSurface {
    HapticSurfaceKind kind;
    HapticVec2 point, normal; /* WALL: a point on the surface and its outward unit normal */
    HapticVec2 min, max;      /* REGION: rectangle */
    double stiffness;         /* N/m, PD spring (004 3.4: PD control for the constraint) */
    double damping;           /* N s/m, on the penetration rate only */
    double friction;          /* Coulomb coefficient on the PD normal force */
    double friction_speed;    /* m/s: friction ramps linearly up to this sliding speed */
    bool has_texture;
    HapticTexture texture;
} HapticSurface;

/* Forces of one surface on the handle (world/device frame, N) are added to force, its
 * joint-space texture torques to tau; returns a wall's normal force (N, >= 0; 0 for a region).
 * The servo evaluates surfaces as local models (haptic_models_evaluate, haptics_local.h). */
double haptic_surface_force(const HapticSurface *s, const HapticKinematics *k, HapticRng *rng,
                            double force[2], double tau[2]);
/* A wall's penetration at pos, m (> 0 inside); NAN for a region, which has no normal. */
double haptic_surface_depth(const HapticSurface *s, HapticVec2 pos);

/* ===== Virtual coupling to an engine proxy body ===== */

/* The device plane maps to the world plane z = origin.z: world = origin + scale (x - centre)
 * along world x and y. Forces scale back by 1 / force_scale (world N -> handle N). The coupling
 * is on when it names both its proxy's variables (proxy) and its body (proxy_body); a session
 * binds both from the scene's haptics table (haptic_session_open). */
typedef struct HapticCoupling {
    char proxy[64];         /* the proxy body's name (thing path), or "": no coupling. The servo
                               reads its pose and velocity from the registry variables
                               "<proxy>.pos.x", ".pos.y", ".vel.x", ".vel.y", found by name when
                               it is created: no order of the engine's variables is assumed */
    uint64_t proxy_body;    /* the proxy's packed EngineBodyId (engine.h, engine_body_id_pack),
                               which the servo publishes for the engine thread; 0: none */
    Vec3 origin;            /* world point under the workspace centre */
    double position_scale;  /* world m per device m */
    double force_scale;     /* world N per handle N */
    double stiffness;       /* world N/m */
    double damping;         /* world N s/m */
    double stall_timeout_s; /* no new engine frame for this long: the engine stalled */
    double fade_s;          /* then the coupling force ramps to zero over this time */
    double engage_s;        /* when the motors come on the gains ramp from 0 to full over this
                               time, so a handle away from its proxy does not snap it (a full
                               2000 N/m spring at once knocked the pushed box away) */
} HapticCoupling;

HapticCoupling haptic_coupling_default(void);

#endif
