/* V12 (VALIDATION.md; seed 001, Hotz et al.): the complementarity resolvers through the engine.
 * After every step of the fixpoint/Lemke scheme (001 2.2) and of the Fischer-Newton scheme
 * (001 2.1) the contact distances are >= 0 to the solver tolerance, the normal forces >= 0 and
 * force x distance = 0 at each contact; the LCP matrix N^T J^T M^-1 J N is symmetric PSD; a box
 * resting on a plane carries its weight in total; a four-legged chair's leg forces are not unique
 * but sum to its weight. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_resolver.h"
#include "issim/io.h"
#include "issim/math.h"

#define G 9.81

/* ===== A solver that checks every solve of the one it wraps ===== */

typedef struct Checker {
    const EngineComplementaritySolver *inner;
    long solves;
    double worst_distance;  /* most negative distance after the step (m) */
    double worst_impulse;   /* most negative impulse */
    double worst_product;   /* max |lambda_i d_i|, N s m */
    double worst_asymmetry; /* max |A - A^T| / max |A| */
    double lowest_eigen;    /* min over solves of lambda_min(A) / lambda_max(A) */
} Checker;

/* A = Jn M^-1 Jn^T, d = delta(s+) for u+ = u + M^-1 (h f + Jn^T lambda + Jt^T lambda_t). */
static void check_solve(Checker *c, const EngineIslandSystem *sys, const double *lambda,
                        const double *lambda_t) {
    int n = sys->dim, m = sys->contacts;
    double *minv_jt = calloc((size_t)n * m, sizeof(double)), *a = calloc((size_t)m * m, 8);
    double *u = calloc((size_t)n, sizeof(double)), *ev = calloc((size_t)m, sizeof(double));
    double *g = calloc((size_t)n, sizeof(double));
    for (int r = 0; r < n; r++) {
        g[r] = sys->h * sys->force[r];
        for (int i = 0; i < m; i++)
            g[r] += sys->jn[i + m * r] * lambda[i] + sys->jt[2 * i + 2 * m * r] * lambda_t[2 * i] +
                    sys->jt[2 * i + 1 + 2 * m * r] * lambda_t[2 * i + 1];
    }
    for (int r = 0; r < n; r++) {
        u[r] = sys->velocity[r];
        for (int k = 0; k < n; k++) {
            u[r] += sys->inv_mass[r + n * k] * g[k];
            for (int i = 0; i < m; i++)
                minv_jt[r + n * i] += sys->inv_mass[r + n * k] * sys->jn[i + m * k];
        }
    }
    double amax = 0.0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            for (int r = 0; r < n; r++)
                a[i + m * j] += sys->jn[i + m * r] * minv_jt[r + n * j];
            amax = fmax(amax, fabs(a[i + m * j]));
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            c->worst_asymmetry = fmax(c->worst_asymmetry, fabs(a[i + m * j] - a[j + m * i]) / amax);
    assert_int_equal(linalg_symmetric_eigen(m, a, ev, false), 0);
    c->lowest_eigen = fmin(c->lowest_eigen, ev[0] / ev[m - 1]);
    /* the distances after the step: the pass's gaps moved by the engine's delta(s') */
    double *moved = calloc((size_t)m, sizeof(double)), *still = calloc((size_t)m, sizeof(double));
    sys->gap_after(sys->ctx, u, moved);
    memset(g, 0, sizeof(double) * (size_t)n);
    sys->gap_after(sys->ctx, g, still);
    for (int i = 0; i < m; i++) {
        double d = sys->gap[i] + moved[i] - still[i];
        c->worst_distance = fmin(c->worst_distance, d);
        c->worst_impulse = fmin(c->worst_impulse, lambda[i]);
        c->worst_product = fmax(c->worst_product, fabs(lambda[i] * d));
    }
    free(moved);
    free(still);
    free(minv_jt);
    free(a);
    free(u);
    free(ev);
    free(g);
}

static IssimStatus checked_solve(void *user, const EngineIslandSystem *sys,
                                 EngineIslandSolution *out, IssimError *err) {
    Checker *c = user;
    IssimStatus s = c->inner->solve(NULL, sys, out, err);
    if (s == ISSIM_OK) {
        c->solves++;
        check_solve(c, sys, out->lambda_n, out->lambda_t);
    }
    return s;
}

static const EngineComplementaritySolver checked = {.name = "checked", .solve = checked_solve};

static Checker checker(const EngineComplementaritySolver *inner) {
    return (Checker){.inner = inner, .lowest_eigen = INFINITY};
}

/* ===== Scenes ===== */

static Engine *engine_from_db(ThingDb *db, IssimError *err) {
    EngineOptions o = engine_options_default();
    /* V12 checks every solve of a second at rest: a settled island would sleep and stop being
     * solved (test_complementarity_sleep checks V12's distances with sleeping on). */
    o.sleep_disabled = true;
    Engine *e = engine_create(db, &o, err);
    thingdb_destroy(db);
    if (!e)
        fail_msg("engine: %s", err->message);
    return e;
}

static Engine *engine_from_source(const char *source) {
    EngineOptions o = engine_options_default();
    o.sleep_disabled = true; /* as engine_from_db */
    return test_engine_from_source_with("v12.lua", source, &o);
}

static Engine *engine_from_file(const char *relative) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_file(test_source_path(relative), NULL, &db, &err) != ISSIM_OK)
        fail_msg("scene: %s", err.message);
    return engine_from_db(db, &err);
}

static const char *box_source = test_v12_box_source; /* testutil.h */

typedef struct RunResult {
    double deepest;       /* largest depth reported after any step, m */
    double lowest_force;  /* most negative reported normal force, N */
    double worst_product; /* max |force x depth| over the reported contacts, N m */
    double load;          /* sum of the normal forces at the end, N */
    double forces[8];     /* the last step's normal forces */
    Vec3 points[8];       /* and their points */
    int contacts;
} RunResult;

/* Runs e to t_end in output steps, checking the reported contacts after each. */
static RunResult run(Engine *e, double t_end) {
    RunResult r = {0};
    IssimError err = {0};
    for (int i = (int)lround(engine_time(e) / 1e-3) + 1; engine_time(e) < t_end - 1e-12; i++) {
        if (engine_advance(e, i * 1e-3, &err) != ISSIM_OK)
            fail_msg("step to %g s: %s", i * 1e-3, err.message);
        ContactReport rep[8];
        int n = engine_contact_reports(e, rep, 8);
        r.load = 0.0;
        r.contacts = n;
        for (int k = 0; k < n && k < 8; k++) {
            r.deepest = fmax(r.deepest, rep[k].depth);
            r.lowest_force = fmin(r.lowest_force, rep[k].normal_force);
            r.worst_product = fmax(r.worst_product, fabs(rep[k].normal_force * rep[k].depth));
            r.load += rep[k].normal_force;
            r.forces[k] = rep[k].normal_force;
            r.points[k] = rep[k].point;
        }
    }
    return r;
}

static void assert_complementary(const Checker *c, const RunResult *r, const char *what) {
    printf("%s: %ld solves; after each: distance >= %.3g m, impulse >= %.3g N s, |impulse x "
           "distance| <= %.3g; A asymmetry %.3g, lambda_min / lambda_max >= %.3g; reported: depth "
           "<= %.3g m, force >= %.3g N, |force x depth| <= %.3g N m\n",
           what, c->solves, c->worst_distance, c->worst_impulse, c->worst_product,
           c->worst_asymmetry, c->lowest_eigen, r->deepest, r->lowest_force, r->worst_product);
    assert_true(c->solves > 100);
    assert_true(c->worst_distance >= -1e-9);
    assert_true(c->worst_impulse >= 0.0);
    assert_true(c->worst_product <= 1e-12);
    assert_true(c->worst_asymmetry <= 1e-12);
    assert_true(c->lowest_eigen >= -1e-12); /* PSD (singular: four coplanar contacts) */
    assert_true(r->deepest <= 1e-9);
    assert_true(r->lowest_force >= 0.0);
    assert_true(r->worst_product <= 1e-9);
}

/* The sum of the forces is m g, their moment about the centre of mass zero; the forces
 * themselves are not unique (four coplanar contacts): Lemke ends on a vertex of the family (two
 * diagonal corners can hold a centred box), Newton inside it. Returns the moment's norm. */
static double balance(const Engine *e, const RunResult *r, double weight, const char *what) {
    EngineBodyState body = engine_body_state(e, engine_body_id(e, 0));
    Vec3 moment = vec3(0.0, 0.0, 0.0);
    for (int k = 0; k < r->contacts; k++)
        moment = vec3_add(
            moment, vec3_cross(vec3_sub(r->points[k], body.pos), vec3(0.0, 0.0, r->forces[k])));
    printf("%s: at rest on %d contacts, forces %.6f %.6f %.6f %.6f N, sum %.9f N for m g = %.9f "
           "N, moment about the centre of mass %.3g N m, speed %.3g m/s\n",
           what, r->contacts, r->forces[0], r->forces[1], r->forces[2], r->forces[3], r->load,
           weight, vec3_norm(moment), vec3_norm(body.vel));
    assert_near(r->load, weight, 1e-6 * weight);
    assert_near(vec3_norm(body.vel), 0.0, 1e-6);
    return vec3_norm(moment);
}

/* Runs e for 1 s with solver, every solve checked, and checks the rest: at least min_contacts
 * carry the weight, the centre of mass at height z_rest. */
static void rests_carrying_weight(Engine *e, const EngineComplementaritySolver *solver,
                                  double weight, int min_contacts, double z_rest) {
    Checker c = checker(solver);
    engine_set_complementarity_solver(e, &checked, &c);
    RunResult r = run(e, 1.0);
    assert_complementary(&c, &r, solver->name);
    assert_true(r.contacts >= min_contacts);
    assert_true(balance(e, &r, weight, solver->name) <= 1e-6);
    assert_near(engine_body_state(e, engine_body_id(e, 0)).pos.z, z_rest, 1e-6);
    engine_destroy(e);
}

/* The box: any two diagonal corners can hold it. */
static void test_box_lemke(void **state) {
    (void)state;
    rests_carrying_weight(engine_from_source(box_source), engine_complementarity_lemke(), 2 * G, 2,
                          0.05);
}

static void test_box_fischer_newton(void **state) {
    (void)state;
    rests_carrying_weight(engine_from_source(box_source), engine_complementarity_fischer_newton(),
                          2 * G, 2, 0.05);
}

/* The chair: four legs, three equations; the forces may differ by solver, never their sum, and
 * each set balances the weight's moment about the centre of mass. Its centre of mass is off the
 * middle: no two legs hold it. */
static void test_chair_lemke(void **state) {
    (void)state;
    rests_carrying_weight(engine_from_file("scenes/chair.lua"), engine_complementarity_lemke(),
                          5 * G, 3, 0.45);
}

static void test_chair_fischer_newton(void **state) {
    (void)state;
    rests_carrying_weight(engine_from_file("scenes/chair.lua"),
                          engine_complementarity_fischer_newton(), 5 * G, 3, 0.45);
}

static void test_chair_reference(void **state) {
    (void)state;
    rests_carrying_weight(engine_from_file("scenes/chair.lua"), engine_complementarity_reference(),
                          5 * G, 3, 0.45);
}

/* ===== Friction (Lemke's polyhedral cone) ===== */

/* A 1 kg, 10 cm cube at rest on a plane inclined by `degrees` about x, mu_s 0.5, mu_k 0.4. */
static Engine *incline(double degrees) {
    double th = degrees * 3.14159265358979323846 / 180.0;
    Vec3 n = vec3(0.0, -sin(th), cos(th));
    char source[2048];
    snprintf(
        source, sizeof source,
        "return { name = 'incline',\n"
        "  universe = { gravity = {0, 0, -9.81}, integrator = 'bdf', dt = 1e-3 },\n"
        "  things = {\n"
        "    { name = 'box', kind = 'body', shape = 'box', half_extents = {0.05, 0.05, 0.05},\n"
        "      mass = 1, inertia = {1.667e-3, 1.667e-3, 1.667e-3},\n"
        "      pos = {%.17g, %.17g, %.17g}, orient = {%.17g, %.17g, 0, 0}, material = 'box' },\n"
        "    { name = 'slope', kind = 'obstacle', shape = 'plane', normal = {%.17g, %.17g, "
        "%.17g},\n"
        "      offset = 0, material = 'slope' } },\n"
        "  contacts = {\n"
        "    { name = 'box_slope', materials = {'box', 'slope'}, resolver = 'complementarity',\n"
        "      friction_static = 0.5, friction_kinetic = 0.4 } } }\n",
        0.05 * n.x, 0.05 * n.y, 0.05 * n.z, cos(0.5 * th), sin(0.5 * th), n.x, n.y, n.z);
    Engine *e = engine_from_source(source);
    engine_set_complementarity_solver(e, engine_complementarity_lemke(), NULL);
    return e;
}

/* Speed down the slope. */
static double downhill_speed(const Engine *e, double degrees) {
    double th = degrees * 3.14159265358979323846 / 180.0;
    Vec3 down = vec3(0.0, -cos(th), -sin(th));
    return vec3_dot(engine_body_state(e, engine_body_id(e, 0)).vel, down);
}

static void test_incline_sticks_below_friction_angle(void **state) {
    (void)state;
    /* between atan(mu_k) = 21.8 and atan(mu_s) = 26.6 degrees: the static coefficient holds */
    Engine *e = incline(24.0);
    Checker c = checker(engine_complementarity_lemke());
    engine_set_complementarity_solver(e, &checked, &c);
    Vec3 start = engine_body_state(e, engine_body_id(e, 0)).pos;
    RunResult r = run(e, 0.5);
    Vec3 end = engine_body_state(e, engine_body_id(e, 0)).pos;
    double moved = vec3_norm(vec3_sub(end, start));
    printf("incline 24 deg: moved %.3g m in 0.5 s, speed %.3g m/s, load %.6f N (m g cos = %.6f)\n",
           moved, downhill_speed(e, 24.0), r.load, G * cos(24.0 * 3.14159265358979 / 180.0));
    assert_complementary(&c, &r, "lemke with friction, sticking");
    assert_true(moved < 1e-6);
    assert_near(r.load, G * cos(24.0 * 3.14159265358979 / 180.0), 1e-6);
    engine_destroy(e);
}

static void test_incline_slides_above_friction_angle(void **state) {
    (void)state;
    const double degrees = 35.0, th = degrees * 3.14159265358979323846 / 180.0;
    Engine *e = incline(degrees);
    Checker c = checker(engine_complementarity_lemke());
    engine_set_complementarity_solver(e, &checked, &c);
    RunResult r = run(e, 0.25);
    double v1 = downhill_speed(e, degrees);
    r = run(e, 0.5);
    double v2 = downhill_speed(e, degrees);
    double a = (v2 - v1) / 0.25, expected = G * (sin(th) - 0.4 * cos(th));
    printf("incline 35 deg: acceleration %.6f m/s^2, g (sin - mu_k cos) = %.6f m/s^2\n", a,
           expected);
    assert_complementary(&c, &r, "lemke with friction, sliding");
    assert_near(a, expected, 1e-5 * expected);
    engine_destroy(e);
}

/* ===== The bolt and the chamfered hole (001's assembly demo) ===== */

/* scenes/bolt_and_hole.lua with its pair switched to the complementarity resolver: the bolt,
 * dropped 4 mm off the hole's axis, lands on the chamfer and slides into the hole to its floor
 * (25 mm deep; the bolt's tip is 30 mm below its centre). */
/* Height of the capsule's lowest point: its segment (half 20 mm along body z) plus 10 mm. */
static double bolt_tip(EngineBodyState b) {
    Vec3 axis = quat_rotate(b.orient, vec3(0.0, 0.0, 1.0));
    return b.pos.z - 0.02 * fabs(axis.z) - 0.01;
}

static void bolt_enters_hole(const EngineComplementaritySolver *solver) {
    Engine *e = engine_from_file("scenes/bolt_and_hole.lua");
    IssimError err = {0};
    assert_int_equal(engine_apply_edit(e, "bolt_plate.resolver", "complementarity", &err),
                     ISSIM_OK);
    Checker c = checker(solver);
    engine_set_complementarity_solver(e, &checked, &c);
    double lowest = 1.0;
    for (int i = 1; i <= 300; i++) {
        if (engine_advance(e, i * 1e-3, &err) != ISSIM_OK)
            fail_msg("step to %g s: %s", i * 1e-3, err.message);
        lowest = fmin(lowest, bolt_tip(engine_body_state(e, engine_body_id(e, 0))));
    }
    EngineBodyState bolt = engine_body_state(e, engine_body_id(e, 0));
    printf("%s: after 0.3 s the bolt's centre is %.6f m off the axis, its tip at z = %.6f m "
           "(lowest %.6f; the hole's floor at -0.025 m); %ld solves, distance after each >= %.3g "
           "m, impulse >= %.3g N s\n",
           solver->name, hypot(bolt.pos.x, bolt.pos.y), bolt_tip(bolt), lowest, c.solves,
           c.worst_distance, c.worst_impulse);
    assert_near(bolt_tip(bolt), -0.025, 2e-4);          /* seated on the floor */
    assert_true(hypot(bolt.pos.x, bolt.pos.y) < 0.011); /* inside the 11 mm hole */
    /* Landing in the hole the tip goes 0.6 mm through the floor for a moment while every solve's
     * distances are >= -1e-13 m: the overlap is at a contact the island did not have at the start
     * of that step (found late by the collision side, then pushed out by the position pass), not
     * a solver error. Bounded here; left to the collision manager. */
    assert_true(lowest > -0.025 - 1e-3);
    assert_true(c.worst_distance >= -1e-9);
    assert_true(c.worst_impulse >= 0.0);
    engine_destroy(e);
}

/* 001's VR assembly demo by hand: the bolt stands upright on the plate 25 mm from the hole's
 * axis (beyond the 16 mm chamfer), the pair in complementarity mode with friction (mu 0.1), its
 * solver chosen by the pair (auto). A hand holds it as one holds a bolt: the GUI's drag spring on
 * the centre of mass (3 Hz for the body's mass, critically damped, toward the axis, as
 * app_input.c's DRAG_OMEGA), 2 N down, and a 20 Hz critically damped attitude spring keeping it
 * upright (the grasp: the GUI's drag with Alt, app_input.c). Set as the applied wrench before
 * each step, as the display does; it slides onto the chamfer and down into the hole. Without
 * the hand it stays where it stands.
 * Why the attitude spring: a capsule standing on its round end has its centre of mass 20 mm
 * above the end's centre of curvature, so it balances unstably; a force on its centre of mass
 * alone tips it over (it ends lying across the hole, with any solver), as a pencil pushed at its
 * middle would. The hold must beat the pushed weight's tipping stiffness, (m g + 2 N) x 0.02 m
 * = 0.066 N m/rad: at 20 Hz it is 0.33 N m/rad (at 10 Hz, 0.08, the bolt still leans 29 deg). */
static double pushed_bolt(bool push) {
    Engine *e = engine_from_file("scenes/bolt_and_hole.lua");
    IssimError err = {0};
    const char *edits[][2] = {{"bolt_plate.resolver", "complementarity"},
                              {"bolt_plate.friction_static", "0.1"},
                              {"bolt_plate.friction_kinetic", "0.1"},
                              {"bolt.pos", "0.025 0 0.0301"}};
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++)
        if (engine_apply_edit(e, edits[i][0], edits[i][1], &err) != ISSIM_OK)
            fail_msg("%s", err.message);
    EngineBodyId bolt = engine_body_id(e, 0);
    const double mass = 0.13069, inertia = 2.0693e-5; /* the scene's bolt: kg, kg m^2 (tilt) */
    const double drag_omega = 2.0 * M_PI * 3.0, hold_omega = 2.0 * M_PI * 20.0;
    const double k = mass * drag_omega * drag_omega, c = 2.0 * mass * drag_omega;
    const double kr = inertia * hold_omega * hold_omega, cr = 2.0 * inertia * hold_omega;
    for (int i = 1; i <= 600; i++) {
        EngineBodyState b = engine_body_state(e, bolt);
        Vec3 f = vec3(0, 0, 0), torque = vec3(0, 0, 0);
        if (push) {
            f = vec3(-k * b.pos.x - c * b.vel.x, -k * b.pos.y - c * b.vel.y, -2.0);
            Vec3 axis = quat_rotate(b.orient, vec3(0.0, 0.0, 1.0)); /* turn it back to +z */
            torque =
                vec3_sub(vec3_scale(vec3_cross(axis, vec3(0, 0, 1)), kr), vec3_scale(b.angvel, cr));
        }
        assert_int_equal(engine_set_applied_wrench(e, bolt, f, torque, &err), ISSIM_OK);
        if (engine_advance(e, i * 1e-3, &err) != ISSIM_OK)
            fail_msg("step to %g s: %s", i * 1e-3, err.message);
    }
    EngineBodyState b = engine_body_state(e, bolt);
    printf("bolt %s: after 0.6 s %.4f m off the axis, tip at z = %.5f m\n",
           push ? "held and pushed toward the hole" : "left alone", hypot(b.pos.x, b.pos.y),
           bolt_tip(b));
    engine_destroy(e);
    return bolt_tip(b);
}

static void test_user_pushes_the_bolt_into_the_hole(void **state) {
    (void)state;
    assert_true(pushed_bolt(false) > -1e-3);      /* stays on the plate */
    assert_near(pushed_bolt(true), -0.025, 1e-3); /* in the hole, on its floor */
}

static void test_bolt_lemke(void **state) {
    (void)state;
    bolt_enters_hole(engine_complementarity_lemke());
}

static void test_bolt_fischer_newton(void **state) {
    (void)state;
    bolt_enters_hole(engine_complementarity_fischer_newton());
}

/* ===== Bad input straight to the solvers ===== */

/* A unit point mass (3 velocity unknowns) 1 mm above a floor, falling at 2 m/s, h = 1 ms; the
 * distance after the step is linear in u. */
typedef struct PointSystem {
    double mass[9], inv_mass[9], force[3], velocity[3], jn[3], jt[6], gap[1], mu[1], mu_s[1];
} PointSystem;

static void point_gap_after(void *ctx, const double *u, double *gap) {
    const PointSystem *p = ctx;
    gap[0] = p->gap[0] + 1e-3 * u[2];
}

static EngineIslandSystem point_system(PointSystem *p) {
    *p = (PointSystem){.mass = {1, 0, 0, 0, 1, 0, 0, 0, 1},
                       .inv_mass = {1, 0, 0, 0, 1, 0, 0, 0, 1},
                       .force = {0, 0, -G},
                       .velocity = {0, 0, -2},
                       .jn = {0, 0, 1},
                       .jt = {1, 0, 0, 1, 0, 0},
                       .gap = {1e-3}};
    return (EngineIslandSystem){.h = 1e-3,
                                .dim = 3,
                                .contacts = 1,
                                .mass = p->mass,
                                .inv_mass = p->inv_mass,
                                .force = p->force,
                                .velocity = p->velocity,
                                .jn = p->jn,
                                .jt = p->jt,
                                .gap = p->gap,
                                .mu = p->mu,
                                .mu_static = p->mu_s,
                                .gap_after = point_gap_after,
                                .ctx = p};
}

static void test_solvers_on_a_point_and_on_nan(void **state) {
    (void)state;
    const EngineComplementaritySolver *solvers[2] = {engine_complementarity_lemke(),
                                                     engine_complementarity_fischer_newton()};
    for (int k = 0; k < 2; k++) {
        PointSystem p;
        EngineIslandSystem sys = point_system(&p);
        double ln[1] = {0}, lt[2] = {0};
        EngineIslandSolution out = {.lambda_n = ln, .lambda_t = lt};
        IssimError err = {0};
        assert_int_equal(solvers[k]->solve(NULL, &sys, &out, &err), ISSIM_OK);
        /* lands exactly: h (v + h (-g) + lambda) = -gap, lambda = 2 + h g - gap / h (Newton's
         * Tikhonov term moves it by 1e-9 relative) */
        assert_near(ln[0], 2.0 + 1e-3 * G - 1.0, 1e-8);
        p.velocity[2] = NAN; /* a NaN velocity (or normal) reaches the solver */
        ln[0] = 0.0;
        IssimStatus s = solvers[k]->solve(NULL, &sys, &out, &err);
        printf("%s on NaN: %s\n", solvers[k]->name, err.message);
        assert_int_not_equal(s, ISSIM_OK);
        assert_true(strlen(err.message) > 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_lemke),
        cmocka_unit_test(test_box_fischer_newton),
        cmocka_unit_test(test_chair_lemke),
        cmocka_unit_test(test_chair_fischer_newton),
        cmocka_unit_test(test_chair_reference),
        cmocka_unit_test(test_incline_sticks_below_friction_angle),
        cmocka_unit_test(test_incline_slides_above_friction_angle),
        cmocka_unit_test(test_bolt_lemke),
        cmocka_unit_test(test_user_pushes_the_bolt_into_the_hole),
        cmocka_unit_test(test_bolt_fischer_newton),
        cmocka_unit_test(test_solvers_on_a_point_and_on_nan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
