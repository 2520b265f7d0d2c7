/* Hand-written haptic surfaces as local models (issue 30 item 1, docs/haptics.md "Local
 * models"): the scene's PD walls and texture regions are evaluated by the servo's one model loop
 * beside the engine-published contacts, and the user feels exactly what they felt before.
 *
 * - the forces are unchanged: the servo runs in lockstep against the simulated pantograph (the
 *   physics of issim-pantosim, tools/pantosim/pantosim_zwidth.h) while the scripted hand drives
 *   the handle round a circle that crosses pantograph_edge.lua's wall (PD, Coulomb friction,
 *   correlated texture) and a texture region; every period's D/A values and handle force are
 *   compared with tests/data/haptics_surfaces_path.csv, recorded by the servo before surfaces
 *   became local models (ISSIM_WRITE_GOLDEN=1 rewrites it: only when the forces are meant to
 *   change);
 * - the surfaces go through the local models' statistics: the models evaluated, the ones in
 *   contact, and the traced model's depth and normal force, which the engine-published
 *   contacts report the same way.
 * Simulated time only: nothing depends on the wall clock. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/registry.h"
#include "pantosim_zwidth.h"
#include "testutil.h"

#define GOLDEN "tests/data/haptics_surfaces_path.csv"
#define RATE_HZ 1000.0
#define PERIODS 3000

/* pantograph_edge.lua's wall and the coarse quadrant of pantograph_textures.lua. */
static HapticServoDesc edge_and_region(void) {
    HapticServoDesc d = haptic_servo_desc_default();
    d.rate_hz = RATE_HZ;
    d.realtime = false;
    d.surface_count = 2;
    d.surfaces[0] = (HapticSurface){
        .kind = HAPTIC_SURFACE_WALL,
        .point = {0.02, 0.15},
        .normal = {0, 1},
        .stiffness = 1500,
        .damping = 3,
        .friction = 0.3,
        .friction_speed = 0.01,
        .has_texture = true,
        .texture = {.cov = {0.0625, 0.012, 0.012, 0.0144}, .epsilon = 0.005},
    };
    d.surfaces[1] = (HapticSurface){
        .kind = HAPTIC_SURFACE_REGION,
        .min = {0.03, 0.16},
        .max = {0.10, 0.205},
        .has_texture = true,
        .texture = {.cov = {0.49, 0, 0, 0.49}, .epsilon = 0.005},
    };
    return d;
}

typedef struct PathSample {
    int dac[2];
    double force[2];
} PathSample;

/* The servo along the scripted path; samples[PERIODS]. Returns the servo's statistics. */
static HapticServoStats run_path(PathSample *samples, int *in_contact_periods) {
    PantographConfig c = pantograph_config_default();
    HapticVec2 centre = pantograph_workspace_centre(&c);
    SimPantograph sim;
    assert_true(simpanto_init(&sim, &c, 0.12, 0.26, centre));
    /* a hand circling 3 cm round the centre: 2.5 cm past the wall at the bottom, through the
       region at the top right */
    sim.hand = (SimHand){.kind = HAND_CIRCLE,
                         .point = centre,
                         .radius = 0.03,
                         .period = 1.0,
                         .ramp = 0.3,
                         .stiffness = 200,
                         .damping = 2};
    HapticServoDesc d = edge_and_region();
    IssimError err;
    HapticServo *servo =
        haptic_servo_create(simpanto_lockstep_open(&sim, 1.0 / RATE_HZ, &err), &c, &d, NULL, &err);
    assert_non_null(servo);
    haptic_servo_enable(servo, true);
    *in_contact_periods = 0;
    for (int i = 0; i < PERIODS; i++) {
        assert_true(haptic_servo_period(servo, i / RATE_HZ));
        HapticVec2 f = haptic_servo_force(servo);
        samples[i] = (PathSample){{sim.dac[0], sim.dac[1]}, {f.x, f.y}};
        *in_contact_periods += sim.handle.y < 0.15;
    }
    HapticServoStats st = haptic_servo_stats(servo);
    haptic_servo_destroy(servo);
    return st;
}

static void write_golden(const PathSample *s) {
    FILE *f = fopen(GOLDEN, "w");
    assert_non_null(f);
    fprintf(f, "period,dac1,dac5,fx,fy\n");
    for (int i = 0; i < PERIODS; i++)
        fprintf(f, "%d,%d,%d,%.17g,%.17g\n", i, s[i].dac[0], s[i].dac[1], s[i].force[0],
                s[i].force[1]);
    fclose(f);
    print_message("wrote %s\n", GOLDEN);
}

static void test_the_hand_feels_what_it_felt_before(void **state) {
    static PathSample now[PERIODS];
    int contact;
    run_path(now, &contact);
    print_message("%d of %d periods with the handle past the wall\n", contact, PERIODS);
    assert_true(contact > PERIODS / 10); /* the path does press into the wall */
    if (getenv("ISSIM_WRITE_GOLDEN")) {
        write_golden(now);
        return;
    }
    FILE *f = fopen(GOLDEN, "r");
    assert_non_null(f);
    char line[256];
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    int n = 0, dac_diff = 0, textured = 0;
    double worst = 0.0;
    PathSample was;
    int i;
    while (fscanf(f, "%d,%d,%d,%lf,%lf", &i, &was.dac[0], &was.dac[1], &was.force[0],
                  &was.force[1]) == 5) {
        assert_int_equal(i, n);
        assert_true(n < PERIODS);
        dac_diff += was.dac[0] != now[n].dac[0] || was.dac[1] != now[n].dac[1];
        worst = fmax(worst, hypot(was.force[0] - now[n].force[0], was.force[1] - now[n].force[1]));
        textured += was.dac[0] != 2048;
        n++;
    }
    fclose(f);
    print_message(
        "%d periods compared: %d with other D/A values, largest force difference %.3g N\n", n,
        dac_diff, worst);
    assert_int_equal(n, PERIODS);
    assert_true(textured > PERIODS / 2);
    assert_int_equal(dac_diff, 0);
    assert_true(worst <= 1e-12);
}

/* The hand holds the handle 5 mm past the wall: at rest, the wall is the traced model (its depth
 * and PD force k g in the HANDLE slot), counted among the models evaluated and in contact, its
 * loop timed, like an engine-published contact. */
static void test_surfaces_are_counted_and_traced_as_local_models(void **state) {
    PantographConfig c = pantograph_config_default();
    HapticVec2 centre = pantograph_workspace_centre(&c);
    SimPantograph sim;
    assert_true(simpanto_init(&sim, &c, 0.12, 0.26, centre));
    sim.hand = (SimHand){.kind = HAND_HOLD, .point = {0.0, 0.145}, .stiffness = 200, .damping = 2};
    HapticServoDesc d = edge_and_region();
    d.surfaces[0].has_texture = false; /* a steady force to compare with k g */
    RegistryDesc rd = registry_desc_default();
    rd.history_frames = 16;
    Registry *reg = registry_create(&rd, NULL);
    assert_non_null(reg);
    IssimError err;
    HapticServo *servo =
        haptic_servo_create(simpanto_lockstep_open(&sim, 1.0 / RATE_HZ, &err), &c, &d, reg, &err);
    assert_non_null(servo);
    haptic_servo_enable(servo, true);
    for (int i = 0; i < 1500; i++)
        assert_true(haptic_servo_period(servo, i / RATE_HZ));
    RegistrySlot slot;
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &slot);
    HapticHandleState h = haptic_handle_unpack(&slot);
    HapticServoStats st = haptic_servo_stats(servo);
    double depth = 0.15 - h.pos.y;
    print_message("handle %.3f mm into the wall: traced depth %.4f mm, force %.4f N (k g %.4f N); "
                  "models %d, touching %d, loop %.3f us mean, %.3f us max\n",
                  1e3 * depth, 1e3 * h.traced_depth, h.traced_force, 1500 * depth, st.models,
                  st.models_touching, st.models_compute_mean_us, st.models_compute_max_us);
    assert_true(depth > 1e-4); /* pressed in: 200 N/m x 5 mm against 1500 N/m, about 0.6 mm */
    assert_near(h.traced_depth, depth, 1e-12);
    /* at rest the damper adds nothing beyond the filtered velocity's last count's decay */
    assert_near(h.traced_force, 1500 * depth, 0.05);
    assert_int_equal(st.models, 2);
    assert_int_equal(st.models_touching, 1);
    assert_true(st.models_compute_max_us >= st.models_compute_mean_us);
    assert_true(st.models_compute_mean_us > 0.0);
    /* motors off: nothing is rendered, nothing traced as force */
    haptic_servo_enable(servo, false);
    assert_true(haptic_servo_period(servo, 1500 / RATE_HZ));
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &slot);
    assert_true(haptic_handle_unpack(&slot).traced_force == 0.0);
    haptic_servo_destroy(servo);
    registry_destroy(reg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_hand_feels_what_it_felt_before),
        cmocka_unit_test(test_surfaces_are_counted_and_traced_as_local_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
