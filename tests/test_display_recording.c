/* The walk the GUI's recorder makes through the registry (registry_read_after, added for it):
 * every frame after a time, in order, once; a rewind replaces only frames after the rewind time,
 * so a walk that stopped at or before it continues on the new frames without a gap or a
 * repeat; a time before the history start gives the oldest frame held. No display needed. */
#include <math.h>

#include "issim/registry.h"
#include "testutil.h"

static Registry *make_registry(int frames) {
    RegistryDesc d = registry_desc_default();
    d.history_frames = frames;
    Registry *reg = registry_create(&d, NULL);
    assert_non_null(reg);
    assert_int_equal(registry_add_var(reg, "x", "m", NULL), 0);
    return reg;
}

static void test_walk_sees_every_frame_once(void **state) {
    (void)state;
    Registry *reg = make_registry(64);
    for (int i = 0; i < 10; i++) {
        double x = 100.0 + i;
        registry_publish(reg, 0.001 * i, &x);
    }
    double v;
    RegistryFrame f = {.values = &v};
    double t = -INFINITY;
    int n = 0;
    while (registry_read_after(reg, t, &f)) {
        assert_near(f.t, 0.001 * n, 1e-15);
        assert_near(v, 100.0 + n, 0);
        t = f.t;
        n++;
    }
    assert_int_equal(n, 10);
    /* Exactly at a frame's time: the next one, not that one. */
    assert_true(registry_read_after(reg, 0.001 * 4, &f));
    assert_near(f.t, 0.005, 1e-15);
    assert_false(registry_read_after(reg, 0.001 * 9, &f));
    registry_destroy(reg);
}

static void test_walk_continues_across_a_rewind(void **state) {
    (void)state;
    Registry *reg = make_registry(64);
    for (int i = 0; i < 10; i++) {
        double x = i;
        registry_publish(reg, 0.001 * i, &x);
    }
    double v;
    RegistryFrame f = {.values = &v};
    /* The recorder has written up to 0.004 (the display time); an edit rewinds to 0.004 and
     * the engine publishes a different future. */
    registry_rewind(reg, 0.001 * 4);
    for (int i = 5; i < 8; i++) {
        double x = -i;
        registry_publish(reg, 0.001 * i, &x);
    }
    double t = 0.001 * 4;
    int n = 0;
    while (registry_read_after(reg, t, &f)) {
        assert_near(f.t, 0.001 * (5 + n), 1e-15);
        assert_near(v, -(5.0 + n), 0); /* the new future, never the discarded one */
        t = f.t;
        n++;
    }
    assert_int_equal(n, 3);
    registry_destroy(reg);
}

static void test_walk_from_before_the_history(void **state) {
    (void)state;
    Registry *reg = make_registry(4); /* the ring keeps the newest 4 frames */
    for (int i = 0; i < 10; i++) {
        double x = i;
        registry_publish(reg, 0.001 * i, &x);
    }
    double v;
    RegistryFrame f = {.values = &v};
    assert_true(registry_read_after(reg, 0.0, &f));
    assert_near(f.t, registry_history_start(reg), 0);
    assert_true(f.t > 0.0);
    registry_destroy(reg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_sees_every_frame_once),
        cmocka_unit_test(test_walk_continues_across_a_rewind),
        cmocka_unit_test(test_walk_from_before_the_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
