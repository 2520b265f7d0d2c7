/* The penalty pile's accuracy against its time step (issue 15): one impact per shape of
 * scenes/pile.lua, through the engine with the pile's own contact pairs (spring/damper, k = 1e4
 * N/m, restitution 0.3, Goyal friction mu 0.5/0.4), RK4 at each step asked for, against RK4 at
 * 1e-5 s. No gravity; each body tilted so that it lands on an edge or a point, the way pile
 * bodies land, at TILTS tilts. Printed per impact: the range of the restitution r (rebound over
 * approach of the centres' normal velocity, once every contact has ended) at 1e-5 s, and at each
 * step the median and the largest relative error of r over the tilts.
 *
 * `issim-bench dynamics restitution [DT ...]` (default 2e-4 5e-4 1e-3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "issim/engine.h"
#include "issim/io.h"

typedef struct Impact {
    const char *name;
    const char *shape; /* Lua fields of the body after its name: shape, size, mass, inertia */
    bool pair;         /* two of them head-on (0.5 m/s each), else onto the floor at 1 m/s */
} Impact;

/* The pile's four bodies (scenes/pile.lua: r = 0.025 m, 1000 kg/m^3), their masses and
 * inertias computed there. */
#define SPHERE_FIELDS                                                                              \
    "shape = 'sphere', radius = 0.025, mass = 0.06545, inertia = {1.6362e-5, 1.6362e-5, "          \
    "1.6362e-5}"
#define BOX_FIELDS                                                                                 \
    "shape = 'box', half_extents = {0.025, 0.02, 0.015}, mass = 0.06, "                            \
    "inertia = {1.22e-5, 1.7e-5, 2.0820e-5}"
#define CAPSULE_FIELDS                                                                             \
    "shape = 'capsule', radius = 0.015, half_length = 0.025, mass = 0.049477, "                    \
    "inertia = {2.6089e-5, 2.6089e-5, 5.5662e-6}"
#define OCTA_FIELDS                                                                                \
    "shape = 'hull', hull_file = 'assets/octahedron_small.obj', mass = 0.036, "                    \
    "inertia = {6.48e-6, 6.48e-6, 6.48e-6}"

static const Impact impacts[] = {
    {"sphere on floor", SPHERE_FIELDS, false},    {"box on floor", BOX_FIELDS, false},
    {"capsule on floor", CAPSULE_FIELDS, false},  {"octahedron on floor", OCTA_FIELDS, false},
    {"sphere on sphere", SPHERE_FIELDS, true},    {"box on box", BOX_FIELDS, true},
    {"capsule on capsule", CAPSULE_FIELDS, true}, {"octahedron on octahedron", OCTA_FIELDS, true},
};
enum { IMPACTS = sizeof impacts / sizeof impacts[0] };

static const char *pairs_text =
    "contacts = {\n"
    "  { name = 'pile_pile', materials = {'pile', 'pile'}, model = 'spring_damper',\n"
    "    stiffness = 1e4, restitution = 0.3, clamp_attraction = true,\n"
    "    friction_static = 0.5, friction_kinetic = 0.4, tangent_stiffness = 1e4 },\n"
    "  { name = 'pile_wall', materials = {'pile', 'wall'}, model = 'spring_damper',\n"
    "    stiffness = 1e4, restitution = 0.3, clamp_attraction = true,\n"
    "    friction_static = 0.5, friction_kinetic = 0.4, tangent_stiffness = 1e4 },\n"
    "}\n";

/* The tilts each impact is run at: a rocking landing (a box on a corner, then an edge) is
 * sensitive to the smallest change, so one tilt says little; the median over several does. */
enum { TILTS = 7 };

/* Tilt k of TILTS, a unit quaternion (w, x, y, z) spread over the rotations by a fixed rule. */
static void tilt_quat(int k, int which, double q[4]) {
    double a = 0.7 + 0.9 * k + 1.3 * which, b = 0.4 + 1.7 * k + 0.5 * which, c = 2.1 * k;
    double n = sqrt(1.0 + sin(a) * sin(a) + cos(b) * cos(b) + sin(c) * sin(c));
    q[0] = 1.0 / n;
    q[1] = sin(a) / n;
    q[2] = cos(b) / n;
    q[3] = sin(c) / n;
}

/* The scene of one impact at step dt: bodies 0.08 m apart at centre (pair, along x) or 0.045 m
 * above the floor (clear of it: the largest reach is the capsule's 0.04 m), tilted by tilt k. */
static int scene_text(const Impact *im, int k, double dt, char *out, size_t size) {
    const char *floor = "{ name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},"
                        " offset = 0, material = 'wall' },\n";
    double qa[4], qb[4];
    tilt_quat(k, 0, qa);
    tilt_quat(k, 1, qb);
    char bodies[2048];
    if (im->pair)
        snprintf(bodies, sizeof bodies,
                 "{ name = 'a', kind = 'body', material = 'pile', pos = {-0.04, 0, 0}, "
                 "vel = {0.5, 0, 0}, orient = {%.17g, %.17g, %.17g, %.17g}, %s },\n"
                 "{ name = 'b', kind = 'body', material = 'pile', pos = {0.04, 0.003, 0.002}, "
                 "vel = {-0.5, 0, 0}, orient = {%.17g, %.17g, %.17g, %.17g}, %s },\n",
                 qa[0], qa[1], qa[2], qa[3], im->shape, qb[0], qb[1], qb[2], qb[3], im->shape);
    else
        snprintf(bodies, sizeof bodies,
                 "%s{ name = 'a', kind = 'body', material = 'pile', pos = {0, 0, 0.045}, "
                 "vel = {0, 0, -1}, orient = {%.17g, %.17g, %.17g, %.17g}, %s },\n",
                 floor, qa[0], qa[1], qa[2], qa[3], im->shape);
    int n = snprintf(out, size,
                     "return { name = 'impact', universe = { gravity = {0, 0, 0}, integrator = "
                     "'rk4', dt = %.17g },\n things = {\n%s },\n %s}\n",
                     dt, bodies, pairs_text);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

typedef struct ImpactResult {
    double restitution, duration;
    bool ok;
} ImpactResult;

/* The relative normal velocity of the centres: along x for a pair (b's minus a's, so approach
 * is negative), along z for a body on the floor. */
static double normal_velocity(const Engine *e, bool pair) {
    EngineBodyState a = engine_body_state(e, engine_body_id(e, 0));
    if (!pair)
        return a.vel.z;
    EngineBodyState b = engine_body_state(e, engine_body_id(e, 1));
    return b.vel.x - a.vel.x;
}

typedef struct ContactClock {
    double first_begin, last_end;
    int active;
} ContactClock;

static void on_event(const EngineEvent *ev, void *user) {
    ContactClock *clock = user;
    if (ev->kind == ENGINE_EVENT_CONTACT_BEGIN) {
        if (clock->first_begin < 0.0)
            clock->first_begin = ev->t;
        clock->active++;
    } else if (ev->kind == ENGINE_EVENT_CONTACT_END) {
        clock->active--;
        clock->last_end = ev->t;
    }
}

static ImpactResult run_impact(const Impact *im, int tilt, double dt) {
    ImpactResult r = {0};
    char text[8192];
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_text(im, tilt, dt, text, sizeof text) != 0 ||
        scene_load_string(im->name, text, strlen(text), NULL, &db, &err) != ISSIM_OK) {
        fprintf(stderr, "bench restitution: %s: %s\n", im->name, err.message);
        return r;
    }
    EngineOptions o = engine_options_default();
    const char *root = getenv("ISSIM_SOURCE_DIR");
    char assets[1024];
    snprintf(assets, sizeof assets, "%s/scenes/", root ? root : ".");
    o.asset_dir = assets;
    o.sleep_disabled = true;
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    if (!e) {
        fprintf(stderr, "bench restitution: %s: %s\n", im->name, err.message);
        return r;
    }
    ContactClock clock = {.first_begin = -1.0, .last_end = -1.0};
    engine_set_event_callback(e, on_event, &clock);
    double approach = normal_velocity(e, im->pair);
    /* 0.3 s: the slowest (the capsules' rocking) ends within 0.1 s; then well apart */
    while (engine_time(e) < 0.3 - 1e-12)
        if (engine_step(e, &err) != ISSIM_OK) {
            fprintf(stderr, "bench restitution: %s at dt %g: %s\n", im->name, dt, err.message);
            engine_destroy(e);
            return r;
        }
    r.restitution = -normal_velocity(e, im->pair) / approach;
    r.duration = clock.last_end - clock.first_begin;
    r.ok = clock.first_begin >= 0.0 && clock.active == 0;
    if (!r.ok)
        fprintf(stderr, "bench restitution: %s at dt %g: %s\n", im->name, dt,
                clock.first_begin < 0.0 ? "never touched" : "still touching at 0.3 s");
    engine_destroy(e);
    return r;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int bench_restitution(int argc, char **argv) {
    enum { MAX_STEPS = 8 };
    double steps[MAX_STEPS] = {2e-4, 5e-4, 1e-3};
    int count = 3;
    if (argc > 0) {
        count = argc < MAX_STEPS ? argc : MAX_STEPS;
        for (int i = 0; i < count; i++)
            steps[i] = atof(argv[i]);
    }
    printf("dynamics  restitution of the pile's impacts (r 0.3, k 1e4 N/m, Goyal friction), RK4, "
           "%d tilts each, against dt = 1e-5 s: median |error| (largest)\n",
           TILTS);
    double all[MAX_STEPS][IMPACTS * TILTS];
    for (int i = 0; i < IMPACTS; i++) {
        double ref_r[TILTS], errors[MAX_STEPS][TILTS];
        for (int k = 0; k < TILTS; k++) {
            ImpactResult ref = run_impact(&impacts[i], k, 1e-5);
            if (!ref.ok)
                return 1;
            ref_r[k] = ref.restitution;
            for (int s = 0; s < count; s++) {
                ImpactResult r = run_impact(&impacts[i], k, steps[s]);
                errors[s][k] = r.ok ? 100.0 * fabs(r.restitution / ref.restitution - 1.0) : NAN;
                all[s][i * TILTS + k] = errors[s][k];
            }
        }
        qsort(ref_r, TILTS, sizeof *ref_r, by_value);
        printf("dynamics  restitution %-25s r %.3f-%.3f at 1e-5 |", impacts[i].name, ref_r[0],
               ref_r[TILTS - 1]);
        for (int s = 0; s < count; s++) {
            qsort(errors[s], TILTS, sizeof *errors[s], by_value);
            printf(" %g: %.1f%% (%.1f%%)", steps[s], errors[s][TILTS / 2], errors[s][TILTS - 1]);
        }
        printf("\n");
    }
    printf("dynamics  restitution all %d impacts          |", IMPACTS * TILTS);
    for (int s = 0; s < count; s++) {
        qsort(all[s], IMPACTS * TILTS, sizeof *all[s], by_value);
        printf(" %g: %.1f%% (%.1f%%)", steps[s], all[s][IMPACTS * TILTS / 2],
               all[s][IMPACTS * TILTS - 1]);
    }
    printf("\n");
    return 0;
}
