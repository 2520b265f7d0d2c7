/* A contact that switches at RK4's step ends costs the other contacts no energy (issue 11;
 * 000 eq. 5.22: the friction spring's anchor advances over every accepted step; 004 4.6:
 * internal friction).
 *
 * With more than 64 contact candidates the RK4 integrator stops locating onsets and ends as
 * events and switches contacts at the end of the step instead (engine_rk4.c), as in a crowded
 * pile's landing, where some contact begins or ends at most step ends. Here a box of the pile's
 * shape (scenes/pile_internal_friction.lua: its internal-friction and Goyal friction
 * parameters, its step of 2e-4 s), made heavy so its friction springs hold more, lands flat
 * with a slow slide and sticks, rocking on its springs; four clouds of 32 contact vertices
 * (a points body holds at most 32) fall through the plane on a contact of negligible
 * stiffness, one vertex crossing it every two steps or so: the onsets of a crowded scene, far
 * from the box. The total energy (kinetic + potential + elastic, the friction springs
 * included) is read after every step and may not rise by more than 1e-6 J in one (the issue's
 * target for the piles).
 *
 * The step-end path once skipped the contacts' commit: the box's friction springs were
 * carried over the event steps, their energy counted only at the next plain step, which rose by
 * the spring work of the skipped steps (5.5e-6 to 7.6e-6 J here; 1.0e-4 J in one step
 * of the pile's landing). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/io.h"
#include "testutil.h"

#define STEP 2e-4
#define STEPS 600           /* 0.12 s: the landing and the clouds' crossing */
#define RISE_TOLERANCE 1e-6 /* J per step */
#define DRAWS 3

/* The box of the pile (5 x 4 x 3 cm) at 2 kg, its faces 1 um above the plane, sliding at
 * 2-3 cm/s in a random direction (slow enough to stick: mu g / omega = 3.5 cm/s). */
static const char *scene_source(TestRng *rng) {
    static char src[4096];
    double speed = test_rng_range(rng, 0.02, 0.03), heading = test_rng_range(rng, 0.0, 2 * M_PI);
    snprintf(src, sizeof src,
             "local m = 2\n"
             "local things = {\n"
             "{ name = \"floor\", kind = \"obstacle\", shape = \"plane\", normal = {0, 0, 1},"
             " offset = 0, material = \"wall\" },\n"
             "{ name = \"box\", kind = \"body\", shape = \"box\","
             " half_extents = {0.025, 0.02, 0.015}, mass = m,"
             " inertia = {m * 2.5e-3 / 12, m * 3.4e-3 / 12, m * 4.1e-3 / 12},"
             " pos = {0, 0, 0.015 + 1e-6}, vel = {%.17g, %.17g, 0}, material = \"pile\" } }\n"
             "for c = 1, 4 do\n"
             "  local cloud = {}\n"
             "  for i = 1, 32 do cloud[i] = {0.05 * math.cos(i), 0.05 * math.sin(i),"
             " 8e-4 * (i - 1)} end\n"
             "  things[#things + 1] = { name = \"cloud\" .. c, kind = \"body\","
             " shape = \"points\", vertices = cloud, mass = 0.1, inertia = {1e-4, 1e-4, 1e-4},"
             " pos = {c, 0, 0.01 + 32 * 8e-4 * (c - 1)}, vel = {0, 0, -2}, material = \"far\" }\n"
             "end\n"
             "return { name = \"step_end\", universe = { gravity = {0, 0, -9.81},"
             " integrator = \"rk4\", dt = %g },\n"
             "things = things,\n"
             "contacts = {\n"
             "{ name = \"pile_wall\", materials = {\"pile\", \"wall\"},"
             " model = \"internal_friction\", stiffness = 1e4, restitution = 0.3,"
             " friction_static = 0.5, friction_kinetic = 0.4, tangent_stiffness = 1e4,"
             " tangent_damping = 10, velocity_tolerance = 0, phase_ramp_time = 2e-4 },\n"
             "{ name = \"far_wall\", materials = {\"far\", \"wall\"}, stiffness = 1e-3,"
             " restitution = 1 } } }\n",
             speed * cos(heading), speed * sin(heading), STEP);
    return src;
}

typedef struct Landing {
    double worst_rise, worst_t;
    int contacts_begun;
} Landing;

static void on_event(const EngineEvent *ev, void *user) {
    if (ev->kind == ENGINE_EVENT_CONTACT_BEGIN)
        ((Landing *)user)->contacts_begun++;
}

static Landing land(const char *src) {
    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string("landing", src, strlen(src), NULL, &db, &err) != ISSIM_OK)
        fail_msg("%s\n%s", err.message, src);
    Engine *e = engine_create(db, NULL, &err);
    if (!e)
        fail_msg("%s", err.message);
    Landing out = {.worst_rise = -INFINITY};
    engine_set_event_callback(e, on_event, &out);
    double before = engine_energy(e).total;
    for (int i = 0; i < STEPS; i++) {
        if (engine_step(e, &err) != ISSIM_OK)
            fail_msg("%s\n%s", err.message, src);
        double now = engine_energy(e).total;
        if (now - before > out.worst_rise) {
            out.worst_rise = now - before;
            out.worst_t = engine_time(e);
        }
        before = now;
    }
    EngineStats stats = engine_stats(e);
    /* the 128 crossings are events at step ends */
    assert_true(stats.root_events > 100);
    engine_destroy(e);
    thingdb_destroy(db);
    return out;
}

static void test_step_end_switching_costs_no_energy(void **state) {
    (void)state;
    TestRng rng = {.s = 20261123u};
    double worst = -INFINITY;
    for (int d = 0; d < DRAWS; d++) {
        const char *src = scene_source(&rng);
        Landing out = land(src);
        printf("draw %d: %d contacts begun, largest rise in one step %.3g J (t = %.4f s)\n", d,
               out.contacts_begun, out.worst_rise, out.worst_t);
        assert_true(out.contacts_begun >= 4 + 100); /* the box landed, the clouds crossed */
        worst = fmax(worst, out.worst_rise);
    }
    if (worst > RISE_TOLERANCE)
        fail_msg("the total energy rose by %.3g J in one step (at most %g J)", worst,
                 RISE_TOLERANCE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_end_switching_costs_no_energy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
