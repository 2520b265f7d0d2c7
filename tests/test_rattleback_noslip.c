/* The rattleback's timing checked by a solver that shares nothing with issim's smooth contact
 * (issue 28 item 7b; docs/smooth-contact.md, "The second reversal: 113 s, not 40 s").
 *
 * 002 App. B.1's cap is exactly an elliptic paraboloid: its net's x and y rows are evenly spaced
 * (linear in s, t) and its z rows are a + b with a = (-1, 0, 0, -1), so after the scale
 * (0.6, 0.2, 0.2) and the offset 0.2 the cap is z = H - x'^2 / (2 R1) - y'^2 / (2 R2), H = 0.1 m,
 * R1 = 2.7 m, R2 = 0.3 m, in axes (x', y') turned by -0.174 rad about the body z. Here that
 * paraboloid rolls without slip on the plane z = 0: world-frame Newton-Euler with the constraint
 * v = -w x r (r from the centre of mass to the contact point, where the outward normal points
 * down), differentiated once, RK4 at 1 ms. The engine runs scenes/rattleback.lua with the no-slip
 * contact (smooth_friction stick_slip, 002 4.4.2-4.4.4), started from the same state (the scene's
 * spin start, read from the engine). Both must turn clockwise at the same time (28.15 s) with the
 * same spin on the way. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/io.h"
#include "issim/sim.h"

enum { SAMPLES_PER_SECOND = 100 };
#define RUN_TIME 30.0
#define DT 1e-3

typedef struct P3 {
    double x, y, z;
} P3;

static P3 p3(double x, double y, double z) {
    return (P3){x, y, z};
}
static P3 add(P3 a, P3 b) {
    return p3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static P3 scale(P3 a, double s) {
    return p3(a.x * s, a.y * s, a.z * s);
}
static P3 cross(P3 a, P3 b) {
    return p3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static double dot(P3 a, P3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static P3 turn_z(P3 a, double angle) {
    double c = cos(angle), s = sin(angle);
    return p3(c * a.x - s * a.y, s * a.x + c * a.y, a.z);
}

typedef struct Top {
    double mass, inertia[3], g;
    double h, r1, r2, angle; /* the paraboloid: H, R1, R2 and the turn of its axes */
} Top;

typedef struct TopState {
    double q[4]; /* body to world, (w, x, y, z) */
    P3 w;        /* world angular velocity */
} TopState;

static void rotation(const double q[4], double m[3][3]) {
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    memcpy(m, r, sizeof r);
}

static P3 apply(double m[3][3], P3 a, bool transpose) {
    double v[3] = {a.x, a.y, a.z}, o[3];
    for (int i = 0; i < 3; i++)
        o[i] = transpose ? m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2]
                         : m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
    return p3(o[0], o[1], o[2]);
}

/* The contact point (body frame) where the outward normal is n, and its rate for n' = dn. */
static void contact_point(const Top *top, P3 n, P3 dn, P3 *r, P3 *dr) {
    P3 nc = turn_z(n, -top->angle), dnc = turn_z(dn, -top->angle);
    double a = nc.x / nc.z, b = nc.y / nc.z;
    double da = (dnc.x * nc.z - nc.x * dnc.z) / (nc.z * nc.z);
    double db = (dnc.y * nc.z - nc.y * dnc.z) / (nc.z * nc.z);
    *r = turn_z(p3(top->r1 * a, top->r2 * b, top->h - 0.5 * (top->r1 * a * a + top->r2 * b * b)),
                top->angle);
    *dr =
        turn_z(p3(top->r1 * da, top->r2 * db, -(top->r1 * a * da + top->r2 * b * db)), top->angle);
}

/* Cramer's rule for the 3 x 3 system a x = b. */
static double det3(double a[3][3]) {
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
           a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

static P3 solve3(double a[3][3], P3 b) {
    double rhs[3] = {b.x, b.y, b.z}, x[3], d = det3(a);
    for (int k = 0; k < 3; k++) {
        double m[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                m[i][j] = j == k ? rhs[i] : a[i][j];
        x[k] = det3(m) / d;
    }
    return p3(x[0], x[1], x[2]);
}

/* (q', w') of the rolling top; the energy when asked. */
static TopState rates(const Top *top, const TopState *s, double *energy) {
    double rot[3][3];
    rotation(s->q, rot);
    P3 wb = apply(rot, s->w, true), nb = apply(rot, p3(0, 0, -1), true);
    P3 rb, drb;
    contact_point(top, nb, scale(cross(wb, nb), -1.0), &rb, &drb);
    P3 r = apply(rot, rb, false);
    P3 r_rate = add(cross(s->w, r), apply(rot, drb, false));
    double inertia[3][3], a[3][3], rr[3] = {r.x, r.y, r.z};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            inertia[i][j] = 0.0;
            for (int k = 0; k < 3; k++)
                inertia[i][j] += rot[i][k] * top->inertia[k] * rot[j][k];
        }
    /* m v' = F + m g with v' = -(w' x r + w x r') (rolling), I w' + w x I w = r x F: */
    /* (I + m (|r|^2 1 - r r^T)) w' = -w x I w - m r x (w x r') - m r x g */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            a[i][j] = inertia[i][j] + top->mass * ((i == j) * dot(r, r) - rr[i] * rr[j]);
    P3 iw = apply(inertia, s->w, false);
    P3 rhs =
        add(scale(cross(s->w, iw), -1.0),
            scale(add(cross(r, cross(s->w, r_rate)), cross(r, p3(0, 0, -top->g))), -top->mass));
    TopState d;
    d.w = solve3(a, rhs);
    const double *q = s->q;
    P3 w = s->w;
    d.q[0] = -0.5 * (w.x * q[1] + w.y * q[2] + w.z * q[3]);
    d.q[1] = 0.5 * (w.x * q[0] + w.y * q[3] - w.z * q[2]);
    d.q[2] = 0.5 * (-w.x * q[3] + w.y * q[0] + w.z * q[1]);
    d.q[3] = 0.5 * (w.x * q[2] - w.y * q[1] + w.z * q[0]);
    if (energy) {
        P3 v = scale(cross(s->w, r), -1.0);
        *energy = 0.5 * top->mass * dot(v, v) + 0.5 * dot(s->w, iw) - top->mass * top->g * r.z;
    }
    return d;
}

static TopState stage(const TopState *s, const TopState *d, double h) {
    TopState o;
    for (int i = 0; i < 4; i++)
        o.q[i] = s->q[i] + h * d->q[i];
    o.w = add(s->w, scale(d->w, h));
    return o;
}

static void rk4(const Top *top, TopState *s, double h) {
    TopState k1 = rates(top, s, NULL), s2 = stage(s, &k1, h / 2);
    TopState k2 = rates(top, &s2, NULL), s3 = stage(s, &k2, h / 2);
    TopState k3 = rates(top, &s3, NULL), s4 = stage(s, &k3, h);
    TopState k4 = rates(top, &s4, NULL);
    double norm = 0.0;
    for (int i = 0; i < 4; i++) {
        s->q[i] += h / 6 * (k1.q[i] + 2 * k2.q[i] + 2 * k3.q[i] + k4.q[i]);
        norm += s->q[i] * s->q[i];
    }
    for (int i = 0; i < 4; i++)
        s->q[i] /= sqrt(norm);
    s->w = add(s->w, scale(add(add(k1.w, scale(k2.w, 2)), add(scale(k3.w, 2), k4.w)), h / 6));
}

/* The time w_z last crossed zero before it first reached `spin` the other way (0: never). */
typedef struct Reversal {
    double last_zero, time;
} Reversal;

static void watch(Reversal *rev, double t, double prev, double now, double spin) {
    if (rev->time > 0.0)
        return;
    if ((prev > 0.0) != (now > 0.0))
        rev->last_zero = t;
    if (now < -spin)
        rev->time = rev->last_zero;
}

static void test_rolling_rattleback_reverses_when_an_independent_solver_does(void **state) {
    (void)state;
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_file(test_source_path("scenes/rattleback.lua"), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s", err.message);
    const char *sets[][2] = {{"rattleback_floor.smooth_friction", "stick_slip"},
                             {"rattleback_floor.slip_tolerance", "0.001"}};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (thingdb_set_text(db, sets[i][0], sets[i][1], false, &err) != ISSIM_OK)
            fail_msg("%s: %s", sets[i][0], err.message);
    EngineOptions o = engine_options_default();
    o.asset_dir = test_source_path("scenes");
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("%s", err.message);
    EngineBodyId body = engine_body_id(e, 0);
    Vec3 inertia = engine_body_inertia(e, body);
    Top top = {.mass = engine_body_mass(e, body),
               .inertia = {inertia.x, inertia.y, inertia.z},
               .g = 9.81,
               .h = 0.1,
               .r1 = 2.7,
               .r2 = 0.3,
               .angle = -0.174};
    /* App. B.1's mass and inertia, so the geometry above is the scene's top */
    assert_true(top.mass == 5.0 && inertia.x == 1.0 && inertia.y == 10.0 && inertia.z == 10.0);
    EngineBodyState start = engine_body_state(e, body);
    TopState s = {.q = {start.orient.w, start.orient.x, start.orient.y, start.orient.z},
                  .w = p3(start.angvel.x, start.angvel.y, start.angvel.z)};
    double energy_start, energy;
    rates(&top, &s, &energy_start);
    double engine_energy_start = engine_energy(e).total;

    Reversal ours = {0}, theirs = {0};
    double worst = 0.0, prev_ours = start.angvel.z, prev_theirs = s.w.z;
    int steps_per_sample = (int)lround(1.0 / (DT * SAMPLES_PER_SECOND));
    for (int i = 1; i <= (int)lround(RUN_TIME * SAMPLES_PER_SECOND); i++) {
        double t = (double)i / SAMPLES_PER_SECOND;
        if (engine_advance(e, t, &err) != ISSIM_OK)
            fail_msg("%s", err.message);
        for (int k = 0; k < steps_per_sample; k++)
            rk4(&top, &s, DT);
        double spin = engine_body_state(e, body).angvel.z;
        worst = fmax(worst, fabs(spin - s.w.z));
        watch(&ours, t, prev_ours, spin, 0.3);
        watch(&theirs, t, prev_theirs, s.w.z, 0.3);
        prev_ours = spin;
        prev_theirs = s.w.z;
    }
    rates(&top, &s, &energy);
    print_message("rolling without slip, %.0f s: clockwise at %.2f s (engine) and %.2f s "
                  "(independent solver); spin differs by at most %.1e rad/s; energy %.9f J "
                  "(engine %.9f J) -> %.9f J\n",
                  RUN_TIME, ours.time, theirs.time, worst, energy_start, engine_energy_start,
                  energy);
    assert_true(fabs(energy_start - engine_energy_start) < 1e-9 * energy_start);
    assert_true(fabs(energy - energy_start) < 1e-8 * energy_start);
    assert_true(theirs.time > 27.0 && theirs.time < 29.0); /* 28.15 s */
    assert_true(fabs(ours.time - theirs.time) < 0.015);
    assert_true(worst < 1e-5); /* 1.3e-7 measured */
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rolling_rattleback_reverses_when_an_independent_solver_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
