/* Simulated P2 pantograph physics.
 *
 * Dynamics in the base-joint coordinates q = (q1, q5): each base joint carries the rotor and
 * proximal-link inertia I, and a point mass m sits at the handle (the distal links lumped into
 * it), so M(q) = I Id + m J^T J with J the closed-chain Jacobian (004 eqs. 2.25-2.26). The
 * effective mass seen at the handle, (J M^-1 J^T)^-1 = m Id + I (J J^T)^-1, depends on the
 * direction and the posture. 004 2.4 measured 120-260 g over directions at the workspace centre;
 * with the default link lengths (chosen for the 16 cm x 10 cm workspace; the seed does not give
 * the P2's) this model is nearly isotropic at the centre, so simpanto_init picks I and m to
 * span 120-260 g over directions and the whole workspace instead (docs/haptics.md). Centripetal
 * terms are neglected as in 004 2.4. Motors: the 12-bit D/A value maps linearly to torque (offset
 * binary, full scale max_joint_torque), so saturation is the D/A's. Encoders quantise with floor().
 * The hand is a spring/damper from a scripted target to the handle. The device watchdog zeroes the
 * motors and clears the enable when no valid command arrived for watchdog_s.
 */
#include <math.h>

#include "pantosim_model.h"

static void jjt_inverse_eigen(const double j[4], double *lo, double *hi) {
    /* (J J^T)^-1 eigenvalues: 1 / singular values^2 */
    double a = j[0] * j[0] + j[1] * j[1], b = j[0] * j[2] + j[1] * j[3],
           d = j[2] * j[2] + j[3] * j[3];
    double tr = a + d, det = a * d - b * b, disc = sqrt(fmax(tr * tr / 4 - det, 0.0));
    double s_hi = tr / 2 + disc, s_lo = tr / 2 - disc; /* eigenvalues of J J^T */
    *lo = 1.0 / s_hi;
    *hi = 1.0 / s_lo;
}

void simpanto_effective_mass(const SimPantograph *s, double *mass_min, double *mass_max) {
    double j[4], lo, hi;
    pantograph_jacobian(&s->config, &s->q, j);
    jjt_inverse_eigen(j, &lo, &hi);
    *mass_min = s->handle_mass + s->rotor_inertia * lo;
    *mass_max = s->handle_mass + s->rotor_inertia * hi;
}

/* Extremes of the eigenvalues of (J J^T)^-1 over a grid on the workspace. */
static bool workspace_eigen_range(const PantographConfig *c, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = 0.0;
    for (int i = 0; i <= 8; i++)
        for (int k = 0; k <= 8; k++) {
            HapticVec2 p = {c->workspace_min_x + i * (c->workspace_max_x - c->workspace_min_x) / 8,
                            c->workspace_min_y + k * (c->workspace_max_y - c->workspace_min_y) / 8};
            PantographJoints q;
            double j[4], a, b;
            if (!pantograph_inverse(c, p, &q) || !pantograph_jacobian(c, &q, j))
                return false;
            jjt_inverse_eigen(j, &a, &b);
            *lo = fmin(*lo, a);
            *hi = fmax(*hi, b);
        }
    return true;
}

bool simpanto_init(SimPantograph *s, const PantographConfig *config, double mass_min,
                   double mass_max, HapticVec2 start) {
    *s = (SimPantograph){.config = *config, .joint_damping = 2e-4, .watchdog_s = 0.05};
    s->dac[0] = s->dac[1] = (uint16_t)(1u << (config->dac_bits - 1));
    double lo, hi;
    if (!workspace_eigen_range(config, &lo, &hi))
        return false;
    s->rotor_inertia = (mass_max - mass_min) / (hi - lo);
    s->handle_mass = mass_min - s->rotor_inertia * lo;
    if (!(s->handle_mass > 0.0) || !(s->rotor_inertia > 0.0))
        return false;
    if (!pantograph_inverse(config, start, &s->q))
        return false;
    s->handle = start;
    return true;
}

void simpanto_command(SimPantograph *s, const HapticCommand *cmd, double t) {
    s->last_command_t = t;
    s->last_command_seq = cmd->seq;
    s->watchdog_tripped = false;
    s->enabled = cmd->enable;
    int full = (1 << s->config.dac_bits) - 1;
    s->saturated = false;
    for (int i = 0; i < 2; i++) {
        s->dac[i] = cmd->dac[i];
        if (cmd->enable && (cmd->dac[i] == 0 || cmd->dac[i] >= full))
            s->saturated = true;
    }
}

static HapticVec2 hand_target(const SimHand *h, double t) {
    if (h->kind == HAND_CIRCLE) {
        /* the angular speed rises linearly over the ramp: a hand starting a fast circle from
           rest, rather than a target that leaves at full speed and yanks the handle after it */
        double w = 2 * M_PI / h->period;
        double phase = t < h->ramp ? 0.5 * w * t * t / h->ramp : w * (t - 0.5 * h->ramp);
        return (HapticVec2){h->point.x + h->radius * cos(phase),
                            h->point.y + h->radius * sin(phase)};
    }
    return h->point;
}

static void substep(SimPantograph *s, double t, double h) {
    double j[4];
    if (!pantograph_jacobian(&s->config, &s->q, j)) {
        s->q1_dot = s->q5_dot = 0.0; /* at a singularity the linkage locks: stop */
        return;
    }
    HapticVec2 vel = {j[0] * s->q1_dot + j[1] * s->q5_dot, j[2] * s->q1_dot + j[3] * s->q5_dot};
    double fx = 0.0, fy = 0.0;
    if (s->hand.kind != HAND_FREE) {
        HapticVec2 target = hand_target(&s->hand, t);
        fx = s->hand.stiffness * (target.x - s->handle.x) - s->hand.damping * vel.x;
        fy = s->hand.stiffness * (target.y - s->handle.y) - s->hand.damping * vel.y;
    }
    double tau[2] = {s->torque[0] + j[0] * fx + j[2] * fy - s->joint_damping * s->q1_dot,
                     s->torque[1] + j[1] * fx + j[3] * fy - s->joint_damping * s->q5_dot};
    /* M = I Id + m J^T J */
    double m = s->handle_mass, in = s->rotor_inertia;
    double a = in + m * (j[0] * j[0] + j[2] * j[2]), b = m * (j[0] * j[1] + j[2] * j[3]),
           d = in + m * (j[1] * j[1] + j[3] * j[3]);
    double det = a * d - b * b;
    double acc1 = (d * tau[0] - b * tau[1]) / det, acc5 = (-b * tau[0] + a * tau[1]) / det;
    PantographJoints before = s->q;
    s->q1_dot += h * acc1;
    s->q5_dot += h * acc5;
    s->q.q1 += h * s->q1_dot;
    s->q.q5 += h * s->q5_dot;
    HapticVec2 p;
    if (!pantograph_forward_closed(&s->config, s->q.q1, s->q.q5, &p, &s->q) ||
        pantograph_singularity(&s->q) < 0.05) {
        s->q = before; /* the mechanism's end stops */
        s->q1_dot = s->q5_dot = 0.0;
        return;
    }
    s->handle = p;
}

void simpanto_advance(SimPantograph *s, double t, double dt) {
    if (s->enabled && t - s->last_command_t > s->watchdog_s) {
        s->enabled = false;
        s->watchdog_tripped = true;
        s->watchdog_trips++;
    }
    for (int i = 0; i < 2; i++) {
        s->torque[i] = s->enabled ? pantograph_dac_to_torque(&s->config, s->dac[i]) : 0.0;
        s->max_torque[i] = fmax(s->max_torque[i], fabs(s->torque[i]));
    }
    int n = (int)ceil(dt / 5e-5);
    for (int i = 0; i < n; i++)
        substep(s, t + i * dt / n, dt / n);
}

HapticState simpanto_state(const SimPantograph *s, uint16_t seq, double t) {
    uint16_t status = 0;
    if (s->enabled)
        status |= HAPTIC_STATUS_ENABLED;
    if (s->watchdog_tripped)
        status |= HAPTIC_STATUS_WATCHDOG;
    if (s->saturated)
        status |= HAPTIC_STATUS_SATURATED;
    return (HapticState){.seq = seq,
                         .timestamp_us = (uint32_t)llround(t * 1e6),
                         .counts = {pantograph_angle_to_counts(&s->config, s->q.q1, false),
                                    pantograph_angle_to_counts(&s->config, s->q.q5, true)},
                         .status = status,
                         .last_command_seq = s->last_command_seq};
}
