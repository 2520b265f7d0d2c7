/* The collision manager on its own thread (000 App. B.4.3), under ThreadSanitizer:
 * - a producer publishes moving sphere poses through a real registry, the manager thread reads
 *   them and publishes reports, a consumer takes reports: every report is internally consistent
 *   (its contacts are what collide_shapes gives for its own poses), sequences increase, no
 *   report is torn; the consumer waits as the engine does (collision_manager_wait_published)
 *   and the producer pokes the manager after each publish;
 * - the waits' contract: nothing published, false; published and poked, true;
 * - the interactive session runs box_on_plane with the engine and the collision manager on
 *   separate threads: the box comes to rest on four contacts at the height a spring stack gives. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/collision.h"
#include "issim/registry.h"
#include "issim/sim.h"
#include "testutil.h"

enum { SPHERES = 24 };
/* The producer publishes until the consumer has taken what the test needs (or this many frames:
 * only a hang gets there): on a loaded machine the consumer may see few of the frames, so the
 * count of frames is not what makes the threads overlap. */
enum { MAX_FRAMES = 50000000 };
#define SPHERE_RADIUS 0.05 /* neighbours 0.09 apart: they overlap by about 1 cm */

typedef struct Shared {
    Registry *reg;
    CollisionManager *manager; /* poked after each publish, as the engine does */
    atomic_bool enough;        /* the consumer has seen enough: stop publishing */
    atomic_bool done;
} Shared;

static void nap_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static Vec3 sphere_position(int i, double t) {
    double a = 0.7 * i + 3.0 * t;
    return vec3(0.09 * (i % 6) + 0.01 * sin(a), 0.09 * (i / 6) + 0.01 * cos(a), 0.0);
}

static void *producer(void *arg) {
    Shared *sh = arg;
    double values[SPHERES * 3];
    for (int f = 1; f <= MAX_FRAMES && !atomic_load(&sh->enough); f++) {
        double t = 1e-3 * f;
        for (int i = 0; i < SPHERES; i++) {
            Vec3 p = sphere_position(i, t);
            values[3 * i] = p.x;
            values[3 * i + 1] = p.y;
            values[3 * i + 2] = p.z;
        }
        registry_publish(sh->reg, t, values);
        collision_manager_notify(sh->manager);
        if (f % 16 == 0)
            nap_us(50);
    }
    atomic_store(&sh->done, true);
    return NULL;
}

typedef struct SourceCtx {
    Registry *reg;
    double values[SPHERES * 3];
} SourceCtx;

static bool registry_source(void *ctx, double *t, Pose *poses, double *reach_ahead, int count) {
    (void)reach_ahead; /* 0: these bodies move a few mm per update, within the margin */
    SourceCtx *sc = ctx;
    RegistryFrame frame = {.values = sc->values};
    if (!registry_read_latest(sc->reg, &frame) || !(frame.t > *t))
        return false;
    for (int i = 0; i < count && i < SPHERES; i++)
        poses[i] =
            (Pose){vec3(frame.values[3 * i], frame.values[3 * i + 1], frame.values[3 * i + 2]),
                   quat_identity()};
    *t = frame.t;
    return true;
}

/* What a test starts, in the cmocka state: the teardown stops the producer and the manager
 * before freeing what they read, so a failed assertion leaves no thread running. */
typedef struct Fixture {
    Shared sh;
    pthread_t producer;
    bool producer_started;
    CollisionManager *m;
    SourceCtx *sc;
    Registry *reg;
    TestRun *run;
} Fixture;

static int setup(void **state) {
    Fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    atomic_init(&fx->sh.enough, false);
    atomic_init(&fx->sh.done, false);
    *state = fx;
    return 0;
}

static void stop_producer(Fixture *fx) {
    atomic_store(&fx->sh.enough, true);
    if (fx->producer_started)
        pthread_join(fx->producer, NULL);
    fx->producer_started = false;
}

static int teardown(void **state) {
    Fixture *fx = *state;
    stop_producer(fx);
    if (fx->m) {
        collision_manager_stop(fx->m);
        collision_manager_destroy(fx->m);
    }
    free(fx->sc);
    registry_destroy(fx->reg);
    test_run_free(fx->run);
    free(fx);
    return 0;
}

/* The spheres' registry (s<i>.pos.x|y|z), their collision world at t = 0 and a manager reading
 * the registry: the fixture of the tests below (freed by the teardown). */
static CollisionManager *sphere_manager(Fixture *fx) {
    IssimError err = {0};
    Registry *reg = fx->reg = registry_create(NULL, &err);
    assert_non_null(reg);
    char name[32];
    for (int i = 0; i < SPHERES; i++)
        for (int c = 0; c < 3; c++) {
            snprintf(name, sizeof name, "s%d.pos.%c", i, "xyz"[c]);
            assert_true(registry_add_var(reg, name, "m", &err) >= 0);
        }
    CollisionWorld *world = collision_world_create(NULL, &err);
    assert_non_null(world);
    Shape sphere = shape_sphere(SPHERE_RADIUS);
    for (int i = 0; i < SPHERES; i++)
        collision_world_add(world, &sphere, (Pose){sphere_position(i, 0), quat_identity()}, false);
    SourceCtx *sc = fx->sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    sc->reg = reg;
    CollisionManager *m = fx->m = collision_manager_create(world, registry_source, sc, &err);
    assert_non_null(m);
    return m;
}

static void test_manager_thread_reports_are_consistent(void **state) {
    Fixture *fx = *state;
    IssimError err = {0};
    CollisionManager *m = sphere_manager(fx);
    Shape sphere = shape_sphere(SPHERE_RADIUS);
    fx->sh.reg = fx->reg;
    fx->sh.manager = m;
    assert_int_equal(collision_manager_start(m, &err), ISSIM_OK);
    assert_int_equal(pthread_create(&fx->producer, NULL, producer, &fx->sh), 0);
    fx->producer_started = true;
    uint64_t last_sequence = 0;
    double last_t = -1;
    int taken = 0, checked_contacts = 0;
    double give_up = issim_wall_time() + TEST_WAIT_LIMIT_S; /* a hang, not a slow machine */
    while (!atomic_load(&fx->sh.done)) {
        if (taken > 10 && checked_contacts > 100)
            atomic_store(&fx->sh.enough, true); /* then take what is left until it stops */
        if (issim_wall_time() > give_up)
            fail_msg("waited %.0f s for 10 reports: %d taken", TEST_WAIT_LIMIT_S, taken);
        CollisionReport r;
        uint64_t seen = collision_manager_published(m);
        if (!collision_manager_take(m, &r)) {
            collision_manager_wait_published(m, seen, 1e-3); /* the engine's wait */
            continue;
        }
        taken++;
        assert_true(r.sequence > last_sequence);
        assert_true(r.t >= last_t);
        last_sequence = r.sequence;
        last_t = r.t;
        for (int i = 0; i < r.body_count; i++)
            assert_near(r.poses[i].p.x, sphere_position(i, r.t).x, 1e-12);
        for (int c = 0; c < r.contact_count; c++) {
            const CollisionContact *cc = &r.contacts[c];
            Manifold mf;
            int n = collide_shapes(&sphere, r.poses[cc->body_a], &sphere, r.poses[cc->body_b], 1e-3,
                                   &mf);
            assert_int_equal(n, 1);
            assert_near(cc->point.distance, mf.points[0].distance, 1e-12);
            checked_contacts++;
        }
    }
    stop_producer(fx);
    collision_manager_stop(m);
    print_message("reports taken %d of %llu published, %d contacts checked\n", taken,
                  (unsigned long long)collision_manager_published(m), checked_contacts);
    assert_true(taken > 10);
    assert_true(checked_contacts > 100);
}

/* The waits' contract, without timing: a wait with nothing published returns false; after a
 * state is published and the manager poked, the wait returns true and the report is that
 * state's. */
static void test_wait_published_and_notify(void **state) {
    Fixture *fx = *state;
    IssimError err = {0};
    CollisionManager *m = sphere_manager(fx);
    assert_int_equal(collision_manager_start(m, &err), ISSIM_OK);
    uint64_t seen = collision_manager_published(m);
    assert_false(collision_manager_wait_published(m, seen, 0.02)); /* no state yet */
    CollisionReport r;
    assert_false(collision_manager_take(m, &r));
    double values[SPHERES * 3];
    for (int i = 0; i < SPHERES; i++) {
        Vec3 p = sphere_position(i, 0.5);
        values[3 * i] = p.x;
        values[3 * i + 1] = p.y;
        values[3 * i + 2] = p.z;
    }
    registry_publish(fx->reg, 0.5, values);
    collision_manager_notify(m);
    bool published = false;
    double give_up = issim_wall_time() + TEST_WAIT_LIMIT_S; /* a hang, not a slow machine */
    while (!published && issim_wall_time() < give_up)
        published = collision_manager_wait_published(m, seen, 1e-3);
    assert_true(published);
    assert_true(collision_manager_take(m, &r));
    assert_near(r.t, 0.5, 0.0);
    assert_near(r.poses[3].p.x, sphere_position(3, 0.5).x, 1e-12);
    collision_manager_stop(m);
    collision_manager_notify(m); /* after the stop: nothing to wake, nothing breaks */
}

typedef struct ContactsWait {
    Registry *reg;
    double t;
    ContactReport reports[16];
    int n;
} ContactsWait;

static bool contacts_past(void *arg) {
    ContactsWait *w = arg;
    w->n = registry_read_contacts(w->reg, &w->t, w->reports, 16);
    return w->t >= 1.5;
}

static void test_interactive_box_rests_on_four_contacts(void **state) {
    Fixture *fx = *state;
    /* its own thread although the scene is small (auto would collide on the engine's) */
    const char *sets[] = {"universe.horizon=0.1", "universe.collision_thread=on"};
    fx->run =
        test_load_scene("scenes/box_on_plane.lua", &(TestRunOptions){.sets = sets, .set_count = 2});
    Sim *sim = fx->run->sim;
    IssimError err = {0};
    sim_set_speed(sim, 4.0);
    assert_int_equal(sim_start(sim, &err), ISSIM_OK);
    assert_true(engine_collision_threaded(sim_engine(sim)));
    /* Until the engine has computed past 1.5 s (the display clock alone says nothing about a
     * loaded engine: under ThreadSanitizer on two busy cores it lags far behind). */
    Registry *reg = sim_registry(sim);
    ContactsWait w = {.reg = reg};
    test_wait_for(contacts_past, &w, "the contacts of t = 1.5 s");
    double values[64];
    assert_true(registry_var_count(reg) <= 64);
    RegistryFrame frame = {.values = values};
    assert_true(registry_read_latest(reg, &frame));
    double z = frame.values[registry_var_find(reg, "box.pos.z")];
    sim_stop(sim);
    /* At rest: four springs of 1e5 N/m carry m g = 9.81 N: each sinks m g / (4 k). */
    assert_int_equal(w.n, 4);
    assert_near(z, 0.05 - 9.81 / 4e5, 2e-5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_manager_thread_reports_are_consistent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wait_published_and_notify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interactive_box_rests_on_four_contacts, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
