/* The rigid bar drop of seed 000, chapter 6 (6.3-6.4, Table 6.1): a planar rigid bar falls
 * without spin onto a massive foundation and strikes it with one tip, the set-up of
 * Stoianovici and Hurmuzlu that 000 compares against (VALIDATION.md V11, rigid part).
 *
 * Equations (000 eq. 6.2-6.9): centre of mass (x, y), angle theta from the foundation,
 *   m x'' = f_x,  m y'' = f_y,  I theta'' = torque of (f_x, f_y) at the lower tip,
 * with the lower tip at (x - L/2 cos theta, y - L/2 sin theta), so its velocity is
 *   x_tip' = x' + L/2 sin(theta) theta',  y_tip' = y' - L/2 cos(theta) theta'
 * (000 measures theta the other way round, which flips the signs of the sin and cos terms of
 * eq. 6.8-6.9 and 6.7; the motion is the mirror image). Like eq. 6.3-6.5, no gravity acts during
 * the impact (it would change a 1.5 m/s approach by 1.5 mm/s over the ~0.15 ms contact).
 *
 * Foundation: Hunt and Crossley (000 eq. 6.10), penetration delta = -y_tip,
 *   f_y = (K + B delta') delta  for delta > 0, never pulling (f_y >= 0),
 * the standard sign convention of VALIDATION.md V11. Friction (000 6.3): Coulomb at the tip with
 * static mu_s and kinetic mu_k. Sliding (|x_tip'| above the stick speed): f_x = -mu_k f_y
 * sign(x_tip'). Otherwise the tangential force that keeps the tip from accelerating along the
 * foundation is computed from the equations above; if it lies inside the static cone
 * |f_x| <= mu_s f_y the tip sticks with it, else it starts to slide with mu_k in that force's
 * direction (the planar form of the stick-then-slip order of 000 5.7).
 *
 * Engine-free: its own small integrator (classical RK4 at a fixed step far below the contact's
 * time scale). It was written before the contact-model branch had Hunt-Crossley and Goyal's
 * friction; the engine with those models (scenes/bar_drop_angle.lua) now gives the same impact
 * to 1e-3 m/s, which tests/test_validation_v11_bar_drop.c checks. It stays because a sweep of 21
 * impacts takes milliseconds here and because it states eq. 6.2-6.10 in one place.
 */
#include <math.h>
#include <string.h>

#include "issim/bar_drop.h"
#include "issim/contact.h"

/* The bar of VALIDATION.md V10 (0.2 m, 12.5 mm diameter, 7876.74 kg/m^3): 000 Table 6.1 gives
 * only L; its mass is that of the same steel rod. */
#define BAR_DROP_DIAMETER 0.0125
#define BAR_DROP_DENSITY 7876.74

BarDropParams bar_drop_params_default(void) {
    double length = 0.2;
    double mass = BAR_DROP_DENSITY * M_PI * 0.25 * BAR_DROP_DIAMETER * BAR_DROP_DIAMETER * length;
    return (BarDropParams){.length = length,
                           .mass = mass,
                           .inertia = mass * length * length / 12.0,
                           .stiffness = 5.5e7,
                           .damping = 2.2e7,
                           .mu_static = 0.1,
                           .mu_kinetic = 0.075,
                           .angle = M_PI / 3.0,
                           .speed = 1.0,
                           .dt = 1e-7,
                           .stick_speed = 1e-6};
}

typedef struct BarState {
    double x, y, theta, vx, vy, omega;
} BarState;

typedef struct TipKinematics {
    double depth, depth_rate; /* delta, delta' */
    double slip;              /* x_tip' */
    double c, s;              /* cos and sin of theta */
} TipKinematics;

static TipKinematics tip_kinematics(const BarDropParams *p, const BarState *st) {
    double h = 0.5 * p->length;
    TipKinematics k = {.c = cos(st->theta), .s = sin(st->theta)};
    double y_tip = st->y - h * k.s;
    double vy_tip = st->vy - h * k.c * st->omega;
    k.depth = -y_tip;
    k.depth_rate = -vy_tip;
    k.slip = st->vx + h * k.s * st->omega;
    return k;
}

/* Tangential force that holds the tip still along the foundation, from
 * d/dt x_tip' = f_x / m + h (c omega^2 + s alpha) = 0 with I alpha = -h c f_y + h s f_x. */
static double sticking_force(const BarDropParams *p, const BarState *st, const TipKinematics *k,
                             double fy) {
    double h = 0.5 * p->length;
    double a = 1.0 / p->mass + h * h * k->s * k->s / p->inertia;
    double rhs = -h * k->c * st->omega * st->omega + h * h * k->s * k->c * fy / p->inertia;
    return rhs / a;
}

static void tip_forces(const BarDropParams *p, const BarState *st, double *fx, double *fy) {
    TipKinematics k = tip_kinematics(p, st);
    *fx = *fy = 0.0;
    if (k.depth <= 0.0)
        return;
    *fy = fmax(0.0, (p->stiffness + p->damping * k.depth_rate) * k.depth);
    if (fabs(k.slip) > p->stick_speed) {
        *fx = -copysign(p->mu_kinetic * *fy, k.slip);
        return;
    }
    double hold = sticking_force(p, st, &k, *fy);
    *fx = fabs(hold) <= p->mu_static * *fy ? hold : copysign(p->mu_kinetic * *fy, hold);
}

static BarState derivative(const BarDropParams *p, const BarState *st) {
    double fx, fy;
    tip_forces(p, st, &fx, &fy);
    double h = 0.5 * p->length;
    double c = cos(st->theta), s = sin(st->theta);
    /* torque about the centre of the force at r = (-h c, -h s): r_x f_y - r_y f_x */
    double torque = -h * c * fy + h * s * fx;
    return (BarState){st->vx, st->vy, st->omega, fx / p->mass, fy / p->mass, torque / p->inertia};
}

static BarState axpy(const BarState *y, double a, const BarState *d) {
    return (BarState){y->x + a * d->x,   y->y + a * d->y,   y->theta + a * d->theta,
                      y->vx + a * d->vx, y->vy + a * d->vy, y->omega + a * d->omega};
}

static BarState rk4(const BarDropParams *p, const BarState *y, double h) {
    BarState k1 = derivative(p, y);
    BarState t = axpy(y, 0.5 * h, &k1);
    BarState k2 = derivative(p, &t);
    t = axpy(y, 0.5 * h, &k2);
    BarState k3 = derivative(p, &t);
    t = axpy(y, h, &k3);
    BarState k4 = derivative(p, &t);
    BarState out = *y;
    double w = h / 6.0;
    out.x += w * (k1.x + 2 * k2.x + 2 * k3.x + k4.x);
    out.y += w * (k1.y + 2 * k2.y + 2 * k3.y + k4.y);
    out.theta += w * (k1.theta + 2 * k2.theta + 2 * k3.theta + k4.theta);
    out.vx += w * (k1.vx + 2 * k2.vx + 2 * k3.vx + k4.vx);
    out.vy += w * (k1.vy + 2 * k2.vy + 2 * k3.vy + k4.vy);
    out.omega += w * (k1.omega + 2 * k2.omega + 2 * k3.omega + k4.omega);
    return out;
}

static double kinetic_energy(const BarDropParams *p, const BarState *st) {
    return 0.5 * p->mass * (st->vx * st->vx + st->vy * st->vy) +
           0.5 * p->inertia * st->omega * st->omega;
}

static IssimStatus check_params(const BarDropParams *p, IssimError *err) {
    if (!(p->length > 0) || !(p->mass > 0) || !(p->inertia > 0) || !(p->stiffness > 0))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "bar drop: length, mass, inertia and stiffness must be > 0");
    if (!(p->damping >= 0) || !(p->mu_static >= 0) || !(p->mu_kinetic >= 0))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "bar drop: damping and friction coefficients must be >= 0");
    if (!(p->angle > 0 && p->angle <= 0.5 * M_PI + 1e-12))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "bar drop: impact angle %g rad is outside (0, pi/2]", p->angle);
    if (!(p->speed > 0) || !(p->dt > 0) || !isfinite(p->speed))
        return issim_error_set(err, ISSIM_ERR_INVALID, "bar drop: speed and dt must be > 0");
    return ISSIM_OK;
}

IssimStatus bar_drop_run(const BarDropParams *p, BarDropResult *out, IssimError *err) {
    IssimStatus s = check_params(p, err);
    if (s != ISSIM_OK)
        return s;
    /* Tip touching the foundation, falling without spin. */
    BarState st = {.theta = p->angle, .vy = -p->speed};
    st.y = 0.5 * p->length * sin(p->angle);
    double energy_before = kinetic_energy(p, &st);
    /* A contact lasts a few times pi sqrt(m/K); 1000 of them is a stuck integration. */
    int max_steps = (int)(1000.0 * M_PI * sqrt(p->mass / p->stiffness) / p->dt) + 1000;
    memset(out, 0, sizeof *out);
    double t = 0.0, peak = 0.0;
    int step = 0;
    for (; step < max_steps; step++) {
        st = rk4(p, &st, p->dt);
        t += p->dt;
        double fx, fy;
        tip_forces(p, &st, &fx, &fy);
        peak = fmax(peak, fy);
        if (tip_kinematics(p, &st).depth <= 0.0)
            break;
    }
    if (step == max_steps || !isfinite(st.vy))
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "bar drop at %.1f deg, %g m/s: the tip did not leave the "
                               "foundation within %d steps",
                               p->angle * 180.0 / M_PI, p->speed, max_steps);
    TipKinematics k = tip_kinematics(p, &st);
    out->duration = t;
    out->tip_normal_velocity = -k.depth_rate;
    out->tip_tangential_velocity = k.slip;
    out->com_normal_velocity = st.vy;
    out->com_tangential_velocity = st.vx;
    out->angular_velocity = st.omega;
    out->energy_ratio = kinetic_energy(p, &st) / energy_before;
    out->tip_restitution = out->tip_normal_velocity / p->speed;
    /* Tangential over normal impulse, from the centre's velocity change (before: (0, -speed)).
     * 000 eq. 6.1 writes it with tip velocities, which for a bar that starts to spin also count
     * the rotation's share; the impulses are what Coulomb's law bounds. */
    out->impulse_ratio = out->com_tangential_velocity / (out->com_normal_velocity + p->speed);
    out->peak_normal_force = peak;
    out->steps = step + 1;
    return ISSIM_OK;
}

IssimStatus bar_drop_critical_angle(const BarDropParams *p, double lo, double hi, double tolerance,
                                    double *angle, IssimError *err) {
    /* Below the critical angle the centre of mass still falls after the impact (000 6.4). */
    BarDropParams q = *p;
    BarDropResult r;
    double f_lo, f_hi;
    q.angle = lo;
    IssimStatus s = bar_drop_run(&q, &r, err);
    f_lo = r.com_normal_velocity;
    q.angle = hi;
    s = s == ISSIM_OK ? bar_drop_run(&q, &r, err) : s;
    f_hi = r.com_normal_velocity;
    if (s != ISSIM_OK)
        return s;
    if (!(f_lo < 0.0 && f_hi > 0.0))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "no critical angle between %.2f and %.2f deg at %g m/s (centre "
                               "of mass leaves at %.4g and %.4g m/s)",
                               lo * 180 / M_PI, hi * 180 / M_PI, p->speed, f_lo, f_hi);
    while (hi - lo > tolerance) {
        q.angle = 0.5 * (lo + hi);
        s = bar_drop_run(&q, &r, err);
        if (s != ISSIM_OK)
            return s;
        if (r.com_normal_velocity < 0.0)
            lo = q.angle;
        else
            hi = q.angle;
    }
    *angle = 0.5 * (lo + hi);
    return ISSIM_OK;
}

IssimStatus bar_drop_params_from_scene(const ThingDb *db, BarDropParams *out, IssimError *err) {
    *out = bar_drop_params_default();
    ThingId bar = thingdb_find(db, "bar");
    if (thing_id_is_null(bar) || thing_kind(db, bar) != THING_RIGID_BODY)
        return issim_error_set(err, ISSIM_ERR_INVALID, "the bar-drop scene needs a body 'bar'");
    const PropValue *v = thing_get(db, bar, "vertices");
    if (v->point_count != 2)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "bar.vertices must be the bar's two ends, not %d points",
                               v->point_count);
    out->length = vec3_norm(vec3_sub(v->points[1], v->points[0]));
    out->mass = thing_real(db, bar, "mass");
    out->inertia = thing_vec3(db, bar, "inertia").y; /* about the planar rotation axis */
    /* The bar lies along x in its own frame; its orientation turns it about y by the impact
     * angle, lower end first. */
    double angle = fabs(quat_planar_angle_y(thing_quat(db, bar, "orient")));
    out->angle = angle > M_PI ? 2 * M_PI - angle : angle;
    if (out->angle > 0.5 * M_PI)
        out->angle = M_PI - out->angle;
    out->speed = vec3_norm(thing_vec3(db, bar, "vel"));
    /* The foundation from the pair, when the scene has one with Hunt-Crossley's law. */
    ThingId pair = thingdb_find(db, "bar_foundation");
    if (!thing_id_is_null(pair) && thing_kind(db, pair) == THING_CONTACT_PAIR) {
        ContactParams cp;
        IssimStatus s = contact_params_from_thing(db, pair, out->mass, &cp, err);
        if (s != ISSIM_OK)
            return s;
        if (cp.model != CONTACT_MODEL_HUNT_CROSSLEY || cp.exponent != 1.0)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "bar_foundation must be hunt_crossley with exponent 1 "
                                   "(000 eq. 6.10)");
        out->stiffness = cp.stiffness;
        out->damping = cp.hc_lambda;
        out->mu_static = cp.friction_static;
        out->mu_kinetic = cp.friction_kinetic;
    }
    return check_params(out, err);
}
