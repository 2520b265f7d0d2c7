/* P2 pantograph kinematics (seed 004 ch. 2, after Wang).
 *
 * Chain 1: base joint at the origin, angles q1 (base) and q2 (distal, relative), end
 * x1 = F1(q1, q2) (eq. 2.1). Chain 2: base joint at (d5, 0), angles q5 and q4, end x2 = F2(q5, q4)
 * (eq. 2.2). Forward kinematics solves the loop closure x1 = x2 for qc = (q2, q4) by Newton's
 * method qc = qc' - Jc^-1 dx (eq. 2.8), warm-started from the previous period; the closed-form
 * intersection of the two distal-link circles is the fallback and the cross-check. Distal rates
 * follow eqs. 2.9-2.10 (derived again here: dot the differentiated closure with the distal link
 * directions), chain Jacobians eqs. 2.18-2.19, and the closed-chain Jacobian eqs. 2.25-2.26:
 * J^-1 has as rows the first rows of J1^-1 and J2^-1, which reduce to
 * e12 / (d1 sin q2) and e45 / (d4 sin q4) (eij the unit distal directions).
 *
 * Singularities: det J1 = d1 d2 sin q2 (chain 1 straight), det J2 = d4 d3 sin q4, and
 * det J^-1 = sin(q45 - q12) / (d1 d4 sin q2 sin q4) (distal links collinear: no force along
 * their normal). The force fades to zero as min |sin| of the three goes from singular_limit to
 * half of it. The velocity estimate is the encoder difference over the device-timestamp
 * interval through a first-order low-pass (velocity_cutoff_hz, 30 Hz by default: one encoder
 * count of chain 1 is ~0.4 mm, which at 1 kHz is 0.4 m/s of raw difference noise; the filter
 * cuts it ~5x while keeping the phase lag at 10 Hz hand motion below 20 degrees).
 */
#include <math.h>

#include "issim/haptics_pantograph.h"

PantographConfig pantograph_config_default(void) {
    return (PantographConfig){
        .d1 = 0.10,
        .d2 = 0.15,
        .d3 = 0.15,
        .d4 = 0.10,
        .d5 = 0.04,
        .counts_per_rev = 2000,
        .q1_zero = 0.0,
        .q5_zero = 0.0,
        .dac_bits = 12,
        .max_joint_torque = 0.5,
        .max_force = 6.0,
        .workspace_min_x = -0.06,
        .workspace_max_x = 0.10,
        .workspace_min_y = 0.105,
        .workspace_max_y = 0.205,
        .workspace_margin = 0.01,
        .singular_limit = 0.25,
        .velocity_cutoff_hz = 30.0,
        .newton_max_iter = 8,
        .newton_tol = 1e-10,
    };
}

HapticVec2 pantograph_workspace_centre(const PantographConfig *c) {
    return (HapticVec2){0.5 * (c->workspace_min_x + c->workspace_max_x),
                        0.5 * (c->workspace_min_y + c->workspace_max_y)};
}

IssimStatus pantograph_config_check(const PantographConfig *c, IssimError *err) {
    const double lengths[5] = {c->d1, c->d2, c->d3, c->d4, c->d5};
    for (int i = 0; i < 5; i++)
        if (!(lengths[i] > 0.0) || !isfinite(lengths[i]))
            return issim_error_set(err, ISSIM_ERR_RANGE,
                                   "pantograph link d%d = %g m must be positive", i + 1,
                                   lengths[i]);
    if (c->counts_per_rev < 4)
        return issim_error_set(err, ISSIM_ERR_RANGE, "encoder counts per revolution %d < 4",
                               c->counts_per_rev);
    if (c->dac_bits < 2 || c->dac_bits > 16)
        return issim_error_set(err, ISSIM_ERR_RANGE, "D/A bits %d outside 2..16", c->dac_bits);
    if (!(c->max_joint_torque > 0.0) || !(c->max_force > 0.0))
        return issim_error_set(err, ISSIM_ERR_RANGE, "torque and force limits must be positive");
    if (!(c->velocity_cutoff_hz > 0.0))
        return issim_error_set(err, ISSIM_ERR_RANGE, "velocity cutoff %g Hz must be positive",
                               c->velocity_cutoff_hz);
    PantographJoints q;
    HapticVec2 corners[4] = {{c->workspace_min_x, c->workspace_min_y},
                             {c->workspace_max_x, c->workspace_min_y},
                             {c->workspace_min_x, c->workspace_max_y},
                             {c->workspace_max_x, c->workspace_max_y}};
    for (int i = 0; i < 4; i++)
        if (!pantograph_inverse(c, corners[i], &q))
            return issim_error_set(err, ISSIM_ERR_RANGE,
                                   "workspace corner (%g, %g) m is out of the linkage's reach",
                                   corners[i].x, corners[i].y);
    return ISSIM_OK;
}

HapticVec2 pantograph_chain1_end(const PantographConfig *c, double q1, double q2) {
    return (HapticVec2){c->d1 * cos(q1) + c->d2 * cos(q1 + q2),
                        c->d1 * sin(q1) + c->d2 * sin(q1 + q2)};
}

HapticVec2 pantograph_chain2_end(const PantographConfig *c, double q5, double q4) {
    return (HapticVec2){c->d5 + c->d4 * cos(q5) + c->d3 * cos(q4 + q5),
                        c->d4 * sin(q5) + c->d3 * sin(q4 + q5)};
}

int pantograph_forward_newton(const PantographConfig *c, PantographJoints *q) {
    double q2 = q->q2, q4 = q->q4;
    for (int it = 0; it <= c->newton_max_iter; it++) {
        HapticVec2 a = pantograph_chain1_end(c, q->q1, q2);
        HapticVec2 b = pantograph_chain2_end(c, q->q5, q4);
        double dx = a.x - b.x, dy = a.y - b.y;
        if (hypot(dx, dy) <= c->newton_tol) {
            q->q2 = q2;
            q->q4 = q4;
            return it;
        }
        if (it == c->newton_max_iter)
            break;
        /* Jc = d(dx)/d(q2, q4) (the matrix before eq. 2.8) */
        double q12 = q->q1 + q2, q45 = q->q5 + q4;
        double j11 = -c->d2 * sin(q12), j12 = c->d3 * sin(q45);
        double j21 = c->d2 * cos(q12), j22 = -c->d3 * cos(q45);
        double det = j11 * j22 - j12 * j21;
        if (fabs(det) < 1e-12)
            return -1;
        q2 -= (j22 * dx - j12 * dy) / det;
        q4 -= (-j21 * dx + j11 * dy) / det;
    }
    return -1;
}

bool pantograph_forward_closed(const PantographConfig *c, double q1, double q5, HapticVec2 *handle,
                               PantographJoints *joints) {
    HapticVec2 e1 = {c->d1 * cos(q1), c->d1 * sin(q1)};
    HapticVec2 e2 = {c->d5 + c->d4 * cos(q5), c->d4 * sin(q5)};
    double ux = e2.x - e1.x, uy = e2.y - e1.y;
    double dist = hypot(ux, uy);
    if (!(dist > 1e-12) || dist > c->d2 + c->d3 || dist < fabs(c->d2 - c->d3))
        return false;
    double a = (c->d2 * c->d2 - c->d3 * c->d3 + dist * dist) / (2.0 * dist);
    double h = sqrt(fmax(c->d2 * c->d2 - a * a, 0.0));
    ux /= dist;
    uy /= dist;
    /* the branch on the left of elbow1 -> elbow2: above the elbows for the outward posture */
    HapticVec2 p = {e1.x + a * ux - h * uy, e1.y + a * uy + h * ux};
    if (handle)
        *handle = p;
    if (joints) {
        joints->q1 = q1;
        joints->q5 = q5;
        joints->q2 = atan2(p.y - e1.y, p.x - e1.x) - q1;
        joints->q4 = atan2(p.y - e2.y, p.x - e2.x) - q5;
    }
    return true;
}

static bool law_of_cosines(double adjacent, double opposite, double r, double *angle) {
    if (!(r > 1e-12))
        return false;
    double cosine = (adjacent * adjacent + r * r - opposite * opposite) / (2.0 * adjacent * r);
    if (cosine > 1.0 || cosine < -1.0)
        return false;
    *angle = acos(cosine);
    return true;
}

bool pantograph_inverse(const PantographConfig *c, HapticVec2 p, PantographJoints *q) {
    double r1 = hypot(p.x, p.y), r2 = hypot(p.x - c->d5, p.y);
    double a1, a2;
    if (!law_of_cosines(c->d1, c->d2, r1, &a1) || !law_of_cosines(c->d4, c->d3, r2, &a2))
        return false;
    q->q1 = atan2(p.y, p.x) + a1;         /* elbow 1 to the left */
    q->q5 = atan2(p.y, p.x - c->d5) - a2; /* elbow 2 to the right */
    q->q2 = atan2(p.y - c->d1 * sin(q->q1), p.x - c->d1 * cos(q->q1)) - q->q1;
    q->q4 = atan2(p.y - c->d4 * sin(q->q5), p.x - c->d5 - c->d4 * cos(q->q5)) - q->q5;
    return true;
}

void pantograph_distal_rates(const PantographConfig *c, const PantographJoints *q, double q1_dot,
                             double q5_dot, double *q2_dot, double *q4_dot) {
    double q12 = q->q1 + q->q2, q45 = q->q5 + q->q4;
    double s = sin(q45 - q12);
    /* eq. 2.9 */
    *q2_dot = (c->d1 * sin(q->q1 - q45) / (c->d2 * s) - 1.0) * q1_dot +
              (c->d4 * sin(q->q4) / (c->d2 * s)) * q5_dot;
    /* eq. 2.10 */
    *q4_dot = (c->d4 * sin(q12 - q->q5) / (c->d3 * s) - 1.0) * q5_dot -
              (c->d1 * sin(q->q2) / (c->d3 * s)) * q1_dot;
}

void pantograph_jacobian_chain1(const PantographConfig *c, const PantographJoints *q, double j[4]) {
    double q12 = q->q1 + q->q2; /* eq. 2.18 */
    j[0] = -c->d1 * sin(q->q1) - c->d2 * sin(q12);
    j[1] = -c->d2 * sin(q12);
    j[2] = c->d1 * cos(q->q1) + c->d2 * cos(q12);
    j[3] = c->d2 * cos(q12);
}

void pantograph_jacobian_chain2(const PantographConfig *c, const PantographJoints *q, double j[4]) {
    double q45 = q->q5 + q->q4; /* eq. 2.19 */
    j[0] = -c->d4 * sin(q->q5) - c->d3 * sin(q45);
    j[1] = -c->d3 * sin(q45);
    j[2] = c->d4 * cos(q->q5) + c->d3 * cos(q45);
    j[3] = c->d3 * cos(q45);
}

bool pantograph_jacobian(const PantographConfig *c, const PantographJoints *q, double j[4]) {
    double s2 = sin(q->q2), s4 = sin(q->q4);
    if (fabs(s2) < 1e-9 || fabs(s4) < 1e-9)
        return false;
    double q12 = q->q1 + q->q2, q45 = q->q5 + q->q4;
    /* J^-1 rows: first rows of J1^-1 and J2^-1 (eq. 2.26) */
    double a = cos(q12) / (c->d1 * s2), b = sin(q12) / (c->d1 * s2);
    double cc = cos(q45) / (c->d4 * s4), d = sin(q45) / (c->d4 * s4);
    double det = a * d - b * cc;
    if (fabs(det) < 1e-9)
        return false;
    j[0] = d / det;
    j[1] = -b / det;
    j[2] = -cc / det;
    j[3] = a / det;
    return true;
}

double pantograph_singularity(const PantographJoints *q) {
    double s = fmin(fabs(sin(q->q2)), fabs(sin(q->q4)));
    return fmin(s, fabs(sin(q->q5 + q->q4 - q->q1 - q->q2)));
}

/* Quantisation: the device reports floor(); decoding at the middle of the count removes the
 * half-count bias. */
double pantograph_counts_to_angle(const PantographConfig *c, int32_t counts, bool joint5) {
    double zero = joint5 ? c->q5_zero : c->q1_zero;
    return zero + 2.0 * M_PI * ((double)counts + 0.5) / c->counts_per_rev;
}

int32_t pantograph_angle_to_counts(const PantographConfig *c, double angle, bool joint5) {
    double zero = joint5 ? c->q5_zero : c->q1_zero;
    return (int32_t)floor((angle - zero) * c->counts_per_rev / (2.0 * M_PI));
}

uint16_t pantograph_torque_to_dac(const PantographConfig *c, double torque, bool *saturated) {
    int full = (1 << c->dac_bits) - 1, mid = 1 << (c->dac_bits - 1);
    double v = isfinite(torque) ? mid + torque / c->max_joint_torque * (mid - 1) : mid;
    bool clip = v < 0.0 || v > full;
    if (saturated)
        *saturated = clip;
    v = fmin(fmax(v, 0.0), (double)full);
    return (uint16_t)lround(v);
}

double pantograph_dac_to_torque(const PantographConfig *c, uint16_t dac) {
    int mid = 1 << (c->dac_bits - 1);
    return ((double)dac - mid) / (mid - 1) * c->max_joint_torque;
}

void haptic_kinematics_init(HapticKinematics *k, const PantographConfig *config) {
    *k = (HapticKinematics){.config = *config, .force_scale = 0.0};
    pantograph_inverse(config, pantograph_workspace_centre(config), &k->joints);
}

static double fade(double value, double limit) {
    /* 1 above limit, 0 below limit / 2, linear between */
    return fmin(fmax((value - 0.5 * limit) / (0.5 * limit), 0.0), 1.0);
}

static void update_limits(HapticKinematics *k) {
    const PantographConfig *c = &k->config;
    k->flags &= ~(unsigned)(HAPTIC_LIMIT_WORKSPACE | HAPTIC_LIMIT_SINGULAR);
    k->singularity = pantograph_singularity(&k->joints);
    double scale =
        k->singularity < c->singular_limit ? fade(k->singularity, c->singular_limit) : 1.0;
    if (scale < 1.0)
        k->flags |= HAPTIC_LIMIT_SINGULAR;
    double ox = fmax(fmax(c->workspace_min_x - k->pos.x, k->pos.x - c->workspace_max_x), 0.0);
    double oy = fmax(fmax(c->workspace_min_y - k->pos.y, k->pos.y - c->workspace_max_y), 0.0);
    double outside = hypot(ox, oy);
    if (outside > 0.0) {
        k->flags |= HAPTIC_LIMIT_WORKSPACE;
        scale *= c->workspace_margin > 0.0 ? fmax(1.0 - outside / c->workspace_margin, 0.0) : 0.0;
    }
    k->force_scale = scale;
}

static bool solve_position(HapticKinematics *k, double q1, double q5) {
    PantographJoints q = k->joints;
    q.q1 = q1;
    q.q5 = q5;
    HapticVec2 closed;
    PantographJoints closed_joints;
    bool have_closed = pantograph_forward_closed(&k->config, q1, q5, &closed, &closed_joints);
    if (!k->have_previous && have_closed)
        q = closed_joints; /* cold start */
    k->newton_iterations = pantograph_forward_newton(&k->config, &q);
    if (k->newton_iterations < 0) {
        k->newton_failures++;
        if (!have_closed)
            return false;
        q = closed_joints;
    }
    k->joints = q;
    k->pos = pantograph_chain1_end(&k->config, q.q1, q.q2);
    k->closed_form_error = have_closed ? hypot(k->pos.x - closed.x, k->pos.y - closed.y) : NAN;
    return true;
}

/* One period of the observer (HapticObserver) over dt s to the counts' middles q1, q5, its
 * model's mass matrix at the last posture `at` (j_at: J there when the caller has it, else
 * NULL: computed here). */
static void observe_joints(HapticObserver *o, const PantographConfig *c, const PantographJoints *at,
                           const double *j_at, double q1, double q5, double dt) {
    double meas[2] = {q1, q5};
    if (!o->have || !(dt > 0.0) || dt > 0.05) { /* a start, or a gap: the counts' middles */
        for (int i = 0; i < 2; i++)
            o->angle[i] = meas[i], o->rate[i] = o->disturbance[i] = 0.0;
        o->have = true;
        return;
    }
    /* the commanded torques' acceleration: M^-1 tau, M = I Id + m J^T J at the last posture */
    double own[4], acc[2] = {0, 0};
    const double *j = j_at ? j_at : pantograph_jacobian(c, at, own) ? own : NULL;
    if (j) {
        double m00 = o->rotor_inertia + o->handle_mass * (j[0] * j[0] + j[2] * j[2]);
        double m01 = o->handle_mass * (j[0] * j[1] + j[2] * j[3]);
        double m11 = o->rotor_inertia + o->handle_mass * (j[1] * j[1] + j[3] * j[3]);
        double det = m00 * m11 - m01 * m01;
        if (fabs(det) > 0.0) {
            acc[0] = (m11 * o->tau[0] - m01 * o->tau[1]) / det;
            acc[1] = (m00 * o->tau[1] - m01 * o->tau[0]) / det;
        }
    }
    double th = o->theta;
    double alpha = 1.0 - th * th * th, beta = 1.5 * (1.0 - th) * (1.0 - th) * (1.0 + th),
           gamma = 0.5 * (1.0 - th) * (1.0 - th) * (1.0 - th);
    for (int i = 0; i < 2; i++) {
        double a = acc[i] + o->disturbance[i];
        double predicted = o->angle[i] + dt * o->rate[i] + 0.5 * dt * dt * a;
        double rate = o->rate[i] + dt * a;
        double e = meas[i] - predicted;
        o->angle[i] = predicted + alpha * e;
        o->rate[i] = rate + beta * e / dt;
        o->disturbance[i] += 2.0 * gamma * e / (dt * dt);
    }
}

bool haptic_kinematics_update(HapticKinematics *k, int32_t count1, int32_t count5, double t) {
    const PantographConfig *c = &k->config;
    double q1 = pantograph_counts_to_angle(c, count1, false);
    double q5 = pantograph_counts_to_angle(c, count5, true);
    if (k->subcount) {
        /* the last update's J is at these joints: not computed twice */
        observe_joints(&k->observer, c, &k->joints, k->jacobian_current ? k->jacobian : NULL, q1,
                       q5, k->have_previous ? t - k->t : 0.0);
        q1 = k->observer.angle[0] + k->observer.lead_s * k->observer.rate[0];
        q5 = k->observer.angle[1] + k->observer.lead_s * k->observer.rate[1];
    }
    double q1_prev = k->joints.q1, q5_prev = k->joints.q5;
    if (!solve_position(k, q1, q5)) {
        k->flags |= HAPTIC_LIMIT_NO_SOLUTION;
        k->force_scale = 0.0;
        return false;
    }
    k->flags &= ~(unsigned)HAPTIC_LIMIT_NO_SOLUTION;
    k->jacobian_current = false; /* new joints, until J is computed at them below */
    double dt = t - k->t;
    if (k->subcount) {
        k->q1_dot = k->observer.rate[0];
        k->q5_dot = k->observer.rate[1];
    } else if (k->have_previous && dt > 0.0) {
        double alpha = 1.0 - exp(-2.0 * M_PI * c->velocity_cutoff_hz * dt);
        k->q1_dot += alpha * ((q1 - q1_prev) / dt - k->q1_dot);
        k->q5_dot += alpha * ((q5 - q5_prev) / dt - k->q5_dot);
    } else if (!k->have_previous) {
        k->q1_dot = k->q5_dot = 0.0;
    }
    if (dt > 0.0 || !k->have_previous)
        k->t = t;
    k->have_previous = true;
    if (!pantograph_jacobian(c, &k->joints, k->jacobian)) {
        k->flags |= HAPTIC_LIMIT_SINGULAR;
        k->force_scale = 0.0;
        k->vel = (HapticVec2){0, 0};
        k->measured = k->pos;
        return true;
    }
    k->jacobian_current = true;
    k->vel.x = k->jacobian[0] * k->q1_dot + k->jacobian[1] * k->q5_dot;
    k->vel.y = k->jacobian[2] * k->q1_dot + k->jacobian[3] * k->q5_dot;
    k->measured = k->pos;
    if (k->subcount) { /* within a count of pos: the linearisation's error is below 1 % of it */
        double d1 = pantograph_counts_to_angle(c, count1, false) - q1,
               d5 = pantograph_counts_to_angle(c, count5, true) - q5;
        k->measured.x += k->jacobian[0] * d1 + k->jacobian[1] * d5;
        k->measured.y += k->jacobian[2] * d1 + k->jacobian[3] * d5;
    }
    update_limits(k);
    return true;
}
