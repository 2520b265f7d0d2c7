/* Haptic surface models: Siira's stochastic texture (seed 004 ch. 3, eqs. 3.29-3.43, App. B.4)
 * and the local PD wall with Coulomb friction (004 3.4: "normal constraint forces ... can be
 * generated using a PD control approach").
 *
 * Texture: F_texture ~ u Normal(mu, Sigma) (eq. 3.30) with u = 0 while the lateral speed is
 * below epsilon (eq. 3.31). The statistics live in surface space (tangent, normal); R = [t n]
 * maps them to the world (eqs. 3.32-3.35, written here with R from surface to world, the
 * transpose of the thesis' convention) and J^T to joint space (eqs. 3.36-3.43):
 * Sigma_tau = J^T Sigma_w J, mu_tau = J^T mu_w. Correlated deviates use a Cholesky factor L_s of
 * the surface covariance (App. B.4.2, method 1 is a triangular factor; LAPACKE_dpotrf computes
 * it once when the texture is prepared): a joint-space draw is mu_tau + (J^T R L_s) n with n
 * standard normal, whose covariance is exactly J^T R L_s L_s^T R^T J = Sigma_tau. No matrix is
 * factorised in the servo period. The diagonal option drops the covariance's off-diagonal
 * terms (004 3.6 found no perceptible difference). The optional rate modulation draws a pulse
 * with probability min(1, v / rate_speed_ref) per period, so the pulse rate grows with the
 * sliding speed (004 ch. 6, future work there).
 *
 * The hard surface is the PD spring/damper on the penetration, not the internal-friction C0
 * variant of 004 App. D (that model lives in src/contact, branch models); friction is Coulomb
 * on the PD normal force with a linear ramp below friction_speed so the handle does not chatter
 * at rest.
 */
#include <lapacke.h>
#include <math.h>

#include "issim/haptics_render.h"

IssimStatus haptic_texture_prepare(HapticTexture *tex, IssimError *err) {
    const double *c = tex->cov;
    for (int i = 0; i < 4; i++)
        if (!isfinite(c[i]) || !isfinite(tex->mean[i / 2]))
            return issim_error_set(err, ISSIM_ERR_RANGE, "texture statistics must be finite");
    if (c[0] < 0.0 || c[3] < 0.0)
        return issim_error_set(err, ISSIM_ERR_RANGE, "texture variances (%g, %g) must be >= 0",
                               c[0], c[3]);
    if (!(tex->epsilon >= 0.0) || !(tex->rate_speed_ref >= 0.0))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "texture epsilon and rate_speed_ref must be >= 0");
    double off = tex->diagonal ? 0.0 : 0.5 * (c[1] + c[2]);
    if (off == 0.0) {
        tex->chol[0] = sqrt(c[0]);
        tex->chol[1] = tex->chol[2] = 0.0;
        tex->chol[3] = sqrt(c[3]);
    } else {
        double a[4] = {c[0], off, off, c[3]};
        lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', 2, a, 2);
        if (info != 0)
            return issim_error_set(err, ISSIM_ERR_RANGE,
                                   "texture covariance [%g %g; %g %g] is not positive definite",
                                   c[0], off, off, c[3]);
        tex->chol[0] = a[0];
        tex->chol[1] = 0.0;
        tex->chol[2] = a[2];
        tex->chol[3] = a[3];
    }
    tex->prepared = true;
    return ISSIM_OK;
}

static void rotation(HapticVec2 t, double r[4]) {
    double n = hypot(t.x, t.y);
    double tx = n > 0 ? t.x / n : 1.0, ty = n > 0 ? t.y / n : 0.0;
    r[0] = tx; /* columns: tangent, left normal */
    r[1] = -ty;
    r[2] = ty;
    r[3] = tx;
}

static void mat2_mul(const double a[4], const double b[4], double out[4]) {
    double o[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                   a[2] * b[1] + a[3] * b[3]};
    for (int i = 0; i < 4; i++)
        out[i] = o[i];
}

static void mat2_transpose(const double a[4], double out[4]) {
    double o[4] = {a[0], a[2], a[1], a[3]};
    for (int i = 0; i < 4; i++)
        out[i] = o[i];
}

void haptic_texture_world_stats(const HapticTexture *tex, HapticVec2 tangent, double mean_w[2],
                                double cov_w[4]) {
    double r[4], rt[4], c[4] = {tex->cov[0], tex->cov[1], tex->cov[2], tex->cov[3]};
    if (tex->diagonal)
        c[1] = c[2] = 0.0;
    rotation(tangent, r);
    mat2_transpose(r, rt);
    mean_w[0] = r[0] * tex->mean[0] + r[1] * tex->mean[1]; /* eq. 3.35 */
    mean_w[1] = r[2] * tex->mean[0] + r[3] * tex->mean[1];
    mat2_mul(r, c, cov_w); /* eq. 3.34 */
    mat2_mul(cov_w, rt, cov_w);
}

void haptic_texture_joint_stats(const double j[4], const double mean_w[2], const double cov_w[4],
                                double mean_tau[2], double cov_tau[4]) {
    double jt[4];
    mat2_transpose(j, jt);
    mean_tau[0] = jt[0] * mean_w[0] + jt[1] * mean_w[1]; /* eq. 3.43 */
    mean_tau[1] = jt[2] * mean_w[0] + jt[3] * mean_w[1];
    mat2_mul(jt, cov_w, cov_tau); /* eq. 3.41 */
    mat2_mul(cov_tau, j, cov_tau);
}

/* ----- random source: xoshiro256** (Blackman and Vigna), polar Gaussian ----- */

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void haptic_rng_seed(HapticRng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&seed);
    r->have_spare = false;
}

static uint64_t next(HapticRng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double haptic_rng_uniform(HapticRng *r) {
    return (double)(next(r) >> 11) * 0x1.0p-53;
}

double haptic_rng_gauss(HapticRng *r) {
    if (r->have_spare) {
        r->have_spare = false;
        return r->spare;
    }
    double u, v, s;
    do {
        u = 2.0 * haptic_rng_uniform(r) - 1.0;
        v = 2.0 * haptic_rng_uniform(r) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double m = sqrt(-2.0 * log(s) / s);
    r->spare = v * m;
    r->have_spare = true;
    return u * m;
}

/* u of eq. 3.31 and the optional rate modulation. */
static bool texture_active(const HapticTexture *tex, HapticRng *rng, double lateral_speed) {
    double v = fabs(lateral_speed);
    if (!tex->prepared || v < tex->epsilon)
        return false;
    if (tex->rate_speed_ref > 0.0 && haptic_rng_uniform(rng) >= v / tex->rate_speed_ref)
        return false;
    return true;
}

static void world_draw(const HapticTexture *tex, HapticRng *rng, HapticVec2 tangent, double f[2]) {
    double r[4], rl[4];
    rotation(tangent, r);
    mat2_mul(r, tex->chol, rl);
    double n0 = haptic_rng_gauss(rng), n1 = haptic_rng_gauss(rng);
    double mean_w[2] = {r[0] * tex->mean[0] + r[1] * tex->mean[1],
                        r[2] * tex->mean[0] + r[3] * tex->mean[1]};
    f[0] = mean_w[0] + rl[0] * n0 + rl[1] * n1;
    f[1] = mean_w[1] + rl[2] * n0 + rl[3] * n1;
}

void haptic_texture_sample_world(const HapticTexture *tex, HapticRng *rng, HapticVec2 tangent,
                                 double lateral_speed, double f[2]) {
    f[0] = f[1] = 0.0;
    if (texture_active(tex, rng, lateral_speed))
        world_draw(tex, rng, tangent, f);
}

void haptic_texture_sample_joint(const HapticTexture *tex, HapticRng *rng, HapticVec2 tangent,
                                 double lateral_speed, const double j[4], double tau[2]) {
    tau[0] = tau[1] = 0.0;
    if (!texture_active(tex, rng, lateral_speed))
        return;
    /* J^T (mu_w + R L_s n) = mu_tau + (J^T R L_s) n: the joint-space statistics of eqs.
     * 3.41-3.43, drawn without forming Sigma_tau */
    double f[2];
    world_draw(tex, rng, tangent, f);
    tau[0] = j[0] * f[0] + j[2] * f[1];
    tau[1] = j[1] * f[0] + j[3] * f[1];
}

double haptic_surface_depth(const HapticSurface *s, HapticVec2 pos) {
    if (s->kind != HAPTIC_SURFACE_WALL)
        return NAN;
    return (s->point.x - pos.x) * s->normal.x + (s->point.y - pos.y) * s->normal.y;
}

static double wall_force(const HapticSurface *s, const HapticKinematics *k, HapticRng *rng,
                         double force[2], double tau[2]) {
    double depth = haptic_surface_depth(s, k->pos);
    if (depth <= 0.0)
        return 0.0;
    double depth_rate = -(k->vel.x * s->normal.x + k->vel.y * s->normal.y);
    double fn = fmax(s->stiffness * depth + s->damping * depth_rate, 0.0);
    HapticVec2 t = {s->normal.y, -s->normal.x};
    double vt = k->vel.x * t.x + k->vel.y * t.y;
    double ramp = s->friction_speed > 0.0 ? fmin(fmax(vt / s->friction_speed, -1.0), 1.0)
                                          : (vt > 0) - (vt < 0);
    double ft = -s->friction * fn * ramp;
    force[0] += fn * s->normal.x + ft * t.x;
    force[1] += fn * s->normal.y + ft * t.y;
    if (s->has_texture) {
        double tt[2];
        haptic_texture_sample_joint(&s->texture, rng, t, vt, k->jacobian, tt);
        tau[0] += tt[0];
        tau[1] += tt[1];
    }
    return fn;
}

static void region_force(const HapticSurface *s, const HapticKinematics *k, HapticRng *rng,
                         double tau[2]) {
    if (!s->has_texture || k->pos.x < s->min.x || k->pos.x > s->max.x || k->pos.y < s->min.y ||
        k->pos.y > s->max.y)
        return;
    /* sliding on the table: the lateral direction is the direction of motion */
    double speed = hypot(k->vel.x, k->vel.y);
    HapticVec2 t =
        speed > 0.0 ? (HapticVec2){k->vel.x / speed, k->vel.y / speed} : (HapticVec2){1.0, 0.0};
    double tt[2];
    haptic_texture_sample_joint(&s->texture, rng, t, speed, k->jacobian, tt);
    tau[0] += tt[0];
    tau[1] += tt[1];
}

double haptic_surface_force(const HapticSurface *s, const HapticKinematics *k, HapticRng *rng,
                            double force[2], double tau[2]) {
    if (s->kind == HAPTIC_SURFACE_WALL)
        return wall_force(s, k, rng, force, tau);
    region_force(s, k, rng, tau);
    return 0.0;
}
