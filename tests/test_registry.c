/* Single-threaded tests of the state registry: frames, history, rewind, slots, contacts, the
 * edit queue and variables. The multi-threaded contract is in test_registry_threads.c. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/registry.h"

static Registry *make_registry(int frames, int nvars) {
    RegistryDesc d = registry_desc_default();
    d.history_frames = frames;
    d.max_contacts = 4;
    d.edit_capacity = 4;
    IssimError err = {0};
    Registry *reg = registry_create(&d, &err);
    assert_non_null(reg);
    for (int i = 0; i < nvars; i++) {
        char name[32];
        snprintf(name, sizeof name, "v%d", i);
        assert_int_equal(registry_add_var(reg, name, "m", &err), i);
    }
    return reg;
}

/* Publishes frame at time t with values t * 10^i. */
static void publish3(Registry *reg, double t) {
    double v[3] = {t, t * 10, t * 100};
    registry_publish(reg, t, v);
}

static void test_create_rejects_bad_desc(void **state) {
    (void)state;
    RegistryDesc d = registry_desc_default();
    assert_int_equal(d.history_frames, 8192);
    assert_int_equal(d.edit_capacity, 256);
    d.history_frames = 1;
    IssimError err = {0};
    assert_null(registry_create(&d, &err));
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "history_frames"));
    d = registry_desc_default();
    d.edit_capacity = 0;
    assert_null(registry_create(&d, &err));
    assert_non_null(strstr(err.message, "edit_capacity"));
    Registry *reg = registry_create(NULL, &err); /* defaults */
    assert_non_null(reg);
    registry_destroy(reg);
}

static void test_publish_read_latest(void **state) {
    (void)state;
    Registry *reg = make_registry(16, 3);
    double buf[3] = {-1, -1, -1};
    RegistryFrame f = {.values = buf};
    assert_false(registry_read_latest(reg, &f));
    assert_true(isnan(registry_state_time(reg)));
    assert_true(isnan(registry_history_start(reg)));

    publish3(reg, 0.5);
    assert_true(registry_read_latest(reg, &f));
    assert_near(f.t, 0.5, 0);
    assert_int_equal(f.index, 0);
    assert_near(buf[0], 0.5, 0);
    assert_near(buf[1], 5.0, 0);
    assert_near(buf[2], 50.0, 0);

    publish3(reg, 0.75);
    assert_true(registry_read_latest(reg, &f));
    assert_near(f.t, 0.75, 0);
    assert_int_equal(f.index, 1);
    assert_near(buf[2], 75.0, 0);
    assert_near(registry_state_time(reg), 0.75, 0);
    assert_near(registry_history_start(reg), 0.5, 0);

    /* values == NULL in the frame copies only t and index */
    RegistryFrame g = {.values = NULL};
    assert_true(registry_read_latest(reg, &g));
    assert_int_equal(g.index, 1);
    registry_destroy(reg);
}

static void test_publish_rejects_non_increasing_time(void **state) {
    (void)state;
    testlog_capture();
    Registry *reg = make_registry(16, 3);
    publish3(reg, 1.0);
    publish3(reg, 1.0); /* not after */
    publish3(reg, 0.5); /* before */
    publish3(reg, NAN);
    publish3(reg, -1.0);
    assert_near(registry_state_time(reg), 1.0, 0);
    assert_int_equal(registry_history(reg, 0, -INFINITY, INFINITY, NULL, NULL, 100), 1);
    /* logged on the 1st, 2nd and 4th rejection */
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "not after the newest frame"), 3);
    testlog_release();
    registry_destroy(reg);
}

static void test_read_at(void **state) {
    (void)state;
    Registry *reg = make_registry(16, 3);
    double buf[3];
    RegistryFrame f = {.values = buf};
    assert_false(registry_read_at(reg, 1.0, &f)); /* empty */
    for (int k = 1; k <= 5; k++)
        publish3(reg, k);
    assert_false(registry_read_at(reg, 0.999, &f)); /* before the first frame */
    assert_false(registry_read_at(reg, NAN, &f));
    assert_true(registry_read_at(reg, 1.0, &f)); /* exactly on a frame */
    assert_near(f.t, 1.0, 0);
    assert_int_equal(f.index, 0);
    assert_true(registry_read_at(reg, 2.5, &f)); /* between frames: the earlier */
    assert_near(f.t, 2.0, 0);
    assert_int_equal(f.index, 1);
    assert_near(buf[1], 20.0, 0);
    assert_true(registry_read_at(reg, 4.9999, &f));
    assert_near(f.t, 4.0, 0);
    assert_near(buf[2], 400.0, 0);
    assert_true(registry_read_at(reg, 1e9, &f)); /* after the last: the newest */
    assert_near(f.t, 5.0, 0);
    assert_int_equal(f.index, 4);
    /* every frame is found by its own time */
    for (int k = 1; k <= 5; k++) {
        assert_true(registry_read_at(reg, k, &f));
        assert_int_equal(f.index, k - 1);
    }
    registry_destroy(reg);
}

static void test_history(void **state) {
    (void)state;
    Registry *reg = make_registry(32, 3);
    for (int k = 0; k < 10; k++)
        publish3(reg, k);
    double times[16], values[16];
    int n = registry_history(reg, 1, 2.5, 6.0, times, values, 16);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_near(times[i], 3 + i, 0); /* oldest first, both ends inclusive */
        assert_near(values[i], (3 + i) * 10.0, 0);
    }
    /* max limits from the oldest end */
    n = registry_history(reg, 2, 0.0, 9.0, times, values, 3);
    assert_int_equal(n, 3);
    assert_near(times[0], 0, 0);
    assert_near(times[2], 2, 0);
    assert_near(values[2], 200.0, 0);
    /* either array may be NULL */
    assert_int_equal(registry_history(reg, 0, -INFINITY, INFINITY, NULL, NULL, 100), 10);
    n = registry_history(reg, 0, 8.0, 100.0, NULL, values, 16);
    assert_int_equal(n, 2);
    assert_near(values[1], 9.0, 0);
    /* empty ranges and bad arguments */
    assert_int_equal(registry_history(reg, 0, 9.5, 20.0, times, values, 16), 0);
    assert_int_equal(registry_history(reg, 0, -5.0, -1.0, times, values, 16), 0);
    assert_int_equal(registry_history(reg, 0, 6.0, 2.0, times, values, 16), 0);
    assert_int_equal(registry_history(reg, 3, 0.0, 9.0, times, values, 16), 0);
    assert_int_equal(registry_history(reg, -1, 0.0, 9.0, times, values, 16), 0);
    registry_destroy(reg);
}

static void test_ring_wrap(void **state) {
    (void)state;
    Registry *reg = make_registry(4, 3);
    double buf[3];
    RegistryFrame f = {.values = buf};
    for (int k = 0; k < 10; k++) {
        publish3(reg, k);
        int held = k + 1 < 4 ? k + 1 : 4;
        assert_near(registry_history_start(reg), k + 1 - held, 0);
        assert_int_equal(registry_history(reg, 0, -INFINITY, INFINITY, NULL, NULL, 100), held);
    }
    assert_near(registry_history_start(reg), 6.0, 0);
    assert_near(registry_state_time(reg), 9.0, 0);
    assert_false(registry_read_at(reg, 5.5, &f)); /* frame 5 was overwritten */
    assert_true(registry_read_at(reg, 6.5, &f));
    assert_near(f.t, 6.0, 0);
    assert_int_equal(f.index, 6);
    assert_near(buf[1], 60.0, 0);
    assert_true(registry_read_latest(reg, &f));
    assert_int_equal(f.index, 9);
    assert_near(buf[2], 900.0, 0);
    double times[8];
    assert_int_equal(registry_history(reg, 0, 0.0, 100.0, times, NULL, 8), 4);
    for (int i = 0; i < 4; i++)
        assert_near(times[i], 6 + i, 0);
    registry_destroy(reg);
}

static void test_rewind(void **state) {
    (void)state;
    Registry *reg = make_registry(8, 3);
    double buf[3];
    RegistryFrame f = {.values = buf};
    for (int k = 1; k <= 5; k++)
        publish3(reg, k);
    registry_rewind(reg, 9.0); /* nothing newer: no change */
    assert_near(registry_state_time(reg), 5.0, 0);

    registry_rewind(reg, 3.5);
    assert_near(registry_state_time(reg), 3.0, 0);
    assert_true(registry_read_latest(reg, &f));
    assert_near(f.t, 3.0, 0);
    assert_int_equal(f.index, 2);
    assert_true(registry_read_at(reg, 100.0, &f)); /* the future is gone */
    assert_near(f.t, 3.0, 0);
    assert_int_equal(registry_history(reg, 0, 0.0, 100.0, NULL, NULL, 100), 3);

    /* publishing continues after the kept frame, reusing indices */
    publish3(reg, 3.25);
    assert_true(registry_read_latest(reg, &f));
    assert_near(f.t, 3.25, 0);
    assert_int_equal(f.index, 3);
    assert_near(buf[1], 32.5, 0);
    assert_true(registry_read_at(reg, 4.5, &f));
    assert_near(f.t, 3.25, 0);
    double times[8];
    assert_int_equal(registry_history(reg, 0, 0.0, 100.0, times, NULL, 8), 4);
    assert_near(times[3], 3.25, 0);

    /* rewinding exactly onto a frame keeps it */
    registry_rewind(reg, 2.0);
    assert_near(registry_state_time(reg), 2.0, 0);

    /* rewinding before the first frame empties the ring */
    registry_rewind(reg, 0.5);
    assert_false(registry_read_latest(reg, &f));
    assert_true(isnan(registry_history_start(reg)));
    publish3(reg, 0.75); /* any time after the rewind time */
    assert_near(registry_state_time(reg), 0.75, 0);
    assert_near(registry_history_start(reg), 0.75, 0);

    /* rewind after the ring wrapped keeps the held frames only */
    for (int k = 1; k <= 20; k++)
        publish3(reg, k);
    assert_near(registry_history_start(reg), 13.0, 0);
    registry_rewind(reg, 15.5);
    assert_near(registry_state_time(reg), 15.0, 0);
    assert_int_equal(registry_history(reg, 0, 0.0, 100.0, NULL, NULL, 100), 3);
    publish3(reg, 16.5);
    assert_true(registry_read_at(reg, 16.0, &f));
    assert_near(f.t, 15.0, 0);
    assert_true(registry_read_at(reg, 17.0, &f));
    assert_near(f.t, 16.5, 0);
    assert_near(buf[2], 1650.0, 0);

    registry_clear(reg);
    assert_false(registry_read_latest(reg, &f));
    assert_false(registry_read_at(reg, 100.0, &f));
    assert_true(isnan(registry_state_time(reg)));
    assert_int_equal(registry_history(reg, 0, 0.0, 100.0, NULL, NULL, 100), 0);
    publish3(reg, 0.1); /* after a clear any time is accepted */
    assert_near(registry_state_time(reg), 0.1, 0);
    registry_destroy(reg);
}

static void test_slots(void **state) {
    (void)state;
    Registry *reg = make_registry(4, 0);
    RegistrySlot s;
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &s);
    assert_int_equal(s.count, 0);
    assert_near(s.t, 0.0, 0);

    double v[REGISTRY_SLOT_VALUES + 8];
    for (int i = 0; i < REGISTRY_SLOT_VALUES + 8; i++)
        v[i] = 1.5 * (i + 1);
    registry_slot_write(reg, REGISTRY_SLOT_HANDLE, 0.25, v, 3);
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &s);
    assert_int_equal(s.count, 1);
    assert_near(s.t, 0.25, 0);
    assert_near(s.v[0], 1.5, 0);
    assert_near(s.v[2], 4.5, 0);
    assert_near(s.v[3], 0.0, 0); /* beyond n: zero */

    registry_slot_write(reg, REGISTRY_SLOT_HANDLE, 0.5, v, REGISTRY_SLOT_VALUES + 8);
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &s);
    assert_int_equal(s.count, 2);
    assert_near(s.t, 0.5, 0);
    assert_near(s.v[REGISTRY_SLOT_VALUES - 1], 1.5 * REGISTRY_SLOT_VALUES, 0);

    /* a third write lands in the first copy again */
    v[0] = -7.0;
    registry_slot_write(reg, REGISTRY_SLOT_HANDLE, 0.75, v, 1);
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &s);
    assert_int_equal(s.count, 3);
    assert_near(s.v[0], -7.0, 0);
    assert_near(s.v[1], 0.0, 0);

    /* slots are independent */
    double stats[2] = {42, 1.25};
    registry_slot_write(reg, REGISTRY_SLOT_ENGINE_STATS, 1.25, stats, 2);
    registry_slot_read(reg, REGISTRY_SLOT_ENGINE_STATS, &s);
    assert_int_equal(s.count, 1);
    assert_near(s.v[0], 42, 0);
    assert_near(s.v[1], 1.25, 0);
    registry_slot_read(reg, REGISTRY_SLOT_POINTER, &s);
    assert_int_equal(s.count, 0);
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &s);
    assert_int_equal(s.count, 3);
    registry_destroy(reg);
}

static ContactReport make_contact(int k) {
    return (ContactReport){
        .id = (uint32_t)(100 + k),
        .body_a = k,
        .body_b = k % 2 ? -1 : k + 1,
        .obstacle = k % 2 ? 7 : -1,
        .point = {k, 2.0 * k, 3.0 * k},
        .normal = {0, 0, 1},
        .depth = 1e-3 * k,
        .depth_rate = -0.5 * k,
        .normal_force = 10.0 * k,
        .force = {0.1 * k, 0.2 * k, 10.0 * k},
    };
}

static void test_contacts(void **state) {
    (void)state;
    testlog_capture();
    Registry *reg = make_registry(4, 0); /* max_contacts 4 */
    ContactReport in[6], out[8];
    for (int k = 0; k < 6; k++)
        in[k] = make_contact(k);
    double t = 0;
    assert_int_equal(registry_read_contacts(reg, &t, out, 8), 0);
    assert_true(isnan(t));

    registry_publish_contacts(reg, 0.5, in, 3);
    assert_int_equal(registry_read_contacts(reg, &t, out, 8), 3);
    assert_near(t, 0.5, 0);
    assert_memory_equal(out, in, 3 * sizeof in[0]);
    assert_int_equal(out[1].body_b, -1);
    assert_near(out[2].force.z, 20.0, 0);

    /* reading fewer than published */
    memset(out, 0, sizeof out);
    assert_int_equal(registry_read_contacts(reg, NULL, out, 2), 2);
    assert_int_equal(out[1].id, 101);
    assert_int_equal(out[2].id, 0);

    /* more than max_contacts: truncated, reported once */
    registry_publish_contacts(reg, 0.75, in, 6);
    assert_int_equal(registry_read_contacts(reg, &t, out, 8), 4);
    assert_near(t, 0.75, 0);
    assert_memory_equal(out, in, 4 * sizeof in[0]);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "max_contacts"), 1);
    registry_publish_contacts(reg, 1.0, in, 5);
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "max_contacts"), 1);

    /* zero contacts is a publication too */
    registry_publish_contacts(reg, 1.25, NULL, 0);
    assert_int_equal(registry_read_contacts(reg, &t, out, 8), 0);
    assert_near(t, 1.25, 0);
    testlog_release();
    registry_destroy(reg);
}

static void test_edit_queue_fifo_and_full(void **state) {
    (void)state;
    RegistryDesc d = registry_desc_default();
    d.edit_capacity = 3; /* rounded up to 4 */
    IssimError err = {0};
    Registry *reg = registry_create(&d, &err);
    assert_non_null(reg);
    RegistryEdit e;
    assert_false(registry_edit_pop(reg, &e));
    assert_int_equal(registry_edit_pending(reg), 0);

    double before = issim_wall_time();
    for (int i = 0; i < 4; i++) {
        char path[32], value[32];
        snprintf(path, sizeof path, "bar%d.mass", i);
        snprintf(value, sizeof value, "%d.5", i);
        assert_int_equal(registry_edit_submit(reg, path, value, &err), (uint64_t)(i + 1));
    }
    assert_int_equal(registry_edit_pending(reg), 4);
    assert_int_equal(registry_edit_submit(reg, "bar9.mass", "1", &err), 0);
    assert_int_equal(err.status, ISSIM_ERR_FULL);
    assert_non_null(strstr(err.message, "full"));
    assert_non_null(strstr(err.message, "bar9.mass"));

    assert_true(registry_edit_pop(reg, &e));
    assert_int_equal(e.id, 1);
    assert_string_equal(e.path, "bar0.mass");
    assert_string_equal(e.value, "0.5");
    assert_true(e.wall_submit >= before && e.wall_submit <= issim_wall_time());
    assert_int_equal(registry_edit_pending(reg), 3);

    /* a freed cell takes the next id, after the refused one consumed none */
    assert_int_equal(registry_edit_submit(reg, "ball.radius", "0.1", &err), 5);
    for (int i = 1; i < 4; i++) {
        assert_true(registry_edit_pop(reg, &e));
        assert_int_equal(e.id, (uint64_t)(i + 1));
        char path[32];
        snprintf(path, sizeof path, "bar%d.mass", i);
        assert_string_equal(e.path, path);
    }
    assert_true(registry_edit_pop(reg, &e));
    assert_int_equal(e.id, 5);
    assert_string_equal(e.path, "ball.radius");
    assert_string_equal(e.value, "0.1");
    assert_false(registry_edit_pop(reg, &e));
    assert_int_equal(registry_edit_pending(reg), 0);

    /* many laps around the ring */
    for (int i = 0; i < 40; i++) {
        char value[16];
        snprintf(value, sizeof value, "%d", i);
        assert_int_equal(registry_edit_submit(reg, "lap", value, &err), (uint64_t)(6 + i));
        assert_true(registry_edit_pop(reg, &e));
        assert_int_equal(e.id, (uint64_t)(6 + i));
        assert_string_equal(e.value, value);
    }
    registry_destroy(reg);
}

static void test_edit_refuses_long_strings(void **state) {
    (void)state;
    Registry *reg = make_registry(4, 0);
    IssimError err = {0};
    char path[REGISTRY_EDIT_PATH_MAX + 1];
    memset(path, 'p', sizeof path - 1);
    path[REGISTRY_EDIT_PATH_MAX] = '\0'; /* one too long */
    assert_int_equal(registry_edit_submit(reg, path, "1", &err), 0);
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "path too long"));
    path[REGISTRY_EDIT_PATH_MAX - 1] = '\0'; /* longest allowed */
    assert_int_equal(registry_edit_submit(reg, path, "1", &err), 1);

    char value[REGISTRY_EDIT_VALUE_MAX + 1];
    memset(value, 'v', sizeof value - 1);
    value[REGISTRY_EDIT_VALUE_MAX] = '\0';
    assert_int_equal(registry_edit_submit(reg, "x", value, &err), 0);
    assert_non_null(strstr(err.message, "value too long"));
    assert_int_equal(registry_edit_submit(reg, "", "1", &err), 0);
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    assert_int_equal(registry_edit_pending(reg), 1);

    RegistryEdit e;
    assert_true(registry_edit_pop(reg, &e));
    assert_int_equal(strlen(e.path), REGISTRY_EDIT_PATH_MAX - 1);
    registry_destroy(reg);
}

static void test_edit_results(void **state) {
    (void)state;
    testlog_capture();
    Registry *reg = make_registry(4, 0); /* edit_capacity 4 */
    IssimError err = {0};
    RegistryEditResult r;
    assert_int_equal(registry_edit_result(reg, 0, &r), REGISTRY_EDIT_UNKNOWN);
    assert_int_equal(registry_edit_result(reg, 1, &r), REGISTRY_EDIT_UNKNOWN); /* not issued */

    uint64_t a = registry_edit_submit(reg, "bar.mass", "2", &err);
    uint64_t b = registry_edit_submit(reg, "bar.mass", "-1", &err);
    assert_int_equal(registry_edit_result(reg, a, &r), REGISTRY_EDIT_PENDING);
    assert_int_equal(r.state, REGISTRY_EDIT_PENDING);
    assert_int_equal(registry_edit_result(reg, b + 1, &r), REGISTRY_EDIT_UNKNOWN);

    RegistryEdit e;
    assert_true(registry_edit_pop(reg, &e));
    assert_int_equal(registry_edit_result(reg, a, NULL), REGISTRY_EDIT_PENDING); /* popped */
    double before = issim_wall_time();
    registry_edit_resolve(reg, a, true, 1.5, NULL);
    assert_int_equal(registry_edit_result(reg, a, &r), REGISTRY_EDIT_ACCEPTED);
    assert_int_equal(r.id, a);
    assert_int_equal(r.state, REGISTRY_EDIT_ACCEPTED);
    assert_near(r.sim_time, 1.5, 0);
    assert_true(r.wall_apply >= before && r.wall_apply <= issim_wall_time());
    assert_string_equal(r.reason, "");
    assert_int_equal(registry_edit_result(reg, b, &r), REGISTRY_EDIT_PENDING);

    assert_true(registry_edit_pop(reg, &e));
    registry_edit_resolve(reg, b, false, 1.5, "bar.mass: -1 is outside (0, inf)");
    assert_int_equal(registry_edit_result(reg, b, &r), REGISTRY_EDIT_REJECTED);
    assert_string_equal(r.reason, "bar.mass: -1 is outside (0, inf)");
    assert_int_equal(registry_edit_result(reg, a, &r), REGISTRY_EDIT_ACCEPTED);

    /* a reason longer than the field is truncated, terminated */
    char longreason[400];
    memset(longreason, 'r', sizeof longreason - 1);
    longreason[sizeof longreason - 1] = '\0';
    uint64_t c = registry_edit_submit(reg, "x", "1", &err);
    assert_true(registry_edit_pop(reg, &e));
    registry_edit_resolve(reg, c, false, 2.0, longreason);
    assert_int_equal(registry_edit_result(reg, c, &r), REGISTRY_EDIT_REJECTED);
    assert_int_equal(strlen(r.reason), sizeof r.reason - 1);

    /* the last 4 results are kept; older ones become unknown */
    uint64_t last = c;
    for (int i = 0; i < 4; i++) {
        last = registry_edit_submit(reg, "x", "1", &err);
        assert_true(registry_edit_pop(reg, &e));
        registry_edit_resolve(reg, last, true, 3.0 + i, NULL);
    }
    assert_int_equal(registry_edit_result(reg, a, &r), REGISTRY_EDIT_UNKNOWN);
    assert_int_equal(registry_edit_result(reg, b, &r), REGISTRY_EDIT_UNKNOWN);
    assert_int_equal(registry_edit_result(reg, c, &r), REGISTRY_EDIT_UNKNOWN);
    assert_int_equal(registry_edit_result(reg, last, &r), REGISTRY_EDIT_ACCEPTED);
    assert_near(r.sim_time, 6.0, 0);
    assert_int_equal(registry_edit_result(reg, last - 3, &r), REGISTRY_EDIT_ACCEPTED);
    assert_near(r.sim_time, 3.0, 0);
    /* a newer queued edit is still pending */
    uint64_t d = registry_edit_submit(reg, "x", "2", &err);
    assert_int_equal(registry_edit_result(reg, d, &r), REGISTRY_EDIT_PENDING);

    /* resolving an id never issued is refused and logged */
    registry_edit_resolve(reg, 999, true, 0.0, NULL);
    assert_int_equal(registry_edit_result(reg, 999, &r), REGISTRY_EDIT_UNKNOWN);
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "never issued"), 1);
    assert_int_equal(registry_edit_result(reg, d, &r), REGISTRY_EDIT_PENDING);
    testlog_release();
    registry_destroy(reg);
}

static void test_vars(void **state) {
    (void)state;
    RegistryDesc d = registry_desc_default();
    d.max_vars = 40;
    IssimError err = {0};
    Registry *reg = registry_create(&d, &err);
    assert_non_null(reg);
    assert_int_equal(registry_var_count(reg), 0);
    assert_int_equal(registry_var_find(reg, "bar.pos.z"), -1);

    char name[32] = "bar.pos.z", unit[8] = "m";
    assert_int_equal(registry_add_var(reg, name, unit, &err), 0);
    strcpy(name, "changed"); /* the registry keeps its own copies */
    strcpy(unit, "s");
    assert_string_equal(registry_var_name(reg, 0), "bar.pos.z");
    assert_string_equal(registry_var_unit(reg, 0), "m");
    assert_int_equal(registry_add_var(reg, "bar.vel.z", NULL, &err), 1);
    assert_string_equal(registry_var_unit(reg, 1), "");
    assert_int_equal(registry_var_find(reg, "bar.vel.z"), 1);
    assert_int_equal(registry_var_find(reg, "bar.pos.z"), 0);
    assert_int_equal(registry_var_find(reg, "bar.pos"), -1);
    assert_null(registry_var_name(reg, 2));
    assert_null(registry_var_name(reg, -1));

    err.status = ISSIM_OK;
    assert_int_equal(registry_add_var(reg, "bar.pos.z", "m", &err), -1);
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "duplicate"));
    assert_non_null(strstr(err.message, "bar.pos.z"));
    assert_int_equal(registry_add_var(reg, "", "m", &err), -1);
    assert_int_equal(registry_var_count(reg), 2);

    /* grow past the first value block up to max_vars, then refuse */
    for (int i = 2; i < 40; i++) {
        char n[32];
        snprintf(n, sizeof n, "x%d", i);
        assert_int_equal(registry_add_var(reg, n, "m", &err), i);
    }
    assert_int_equal(registry_add_var(reg, "one.too.many", "m", &err), -1);
    assert_int_equal(err.status, ISSIM_ERR_FULL);
    assert_int_equal(registry_var_count(reg), 40);
    assert_int_equal(registry_var_find(reg, "x39"), 39);

    /* all 40 values travel through a frame */
    double v[40], back[40];
    for (int i = 0; i < 40; i++)
        v[i] = i * 0.5;
    registry_publish(reg, 0.0, v);
    RegistryFrame f = {.values = back};
    assert_true(registry_read_latest(reg, &f));
    assert_memory_equal(back, v, sizeof v);

    /* variables are frozen once frames exist */
    assert_int_equal(registry_add_var(reg, "late", "m", &err), -1);
    registry_destroy(reg);
    reg = registry_create(&d, &err);
    assert_int_equal(registry_add_var(reg, "a", "m", &err), 0);
    registry_publish(reg, 0.0, v);
    assert_int_equal(registry_add_var(reg, "late", "m", &err), -1);
    assert_int_equal(err.status, ISSIM_ERR_STATE);
    assert_int_equal(registry_var_count(reg), 1);
    registry_destroy(reg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_rejects_bad_desc),
        cmocka_unit_test(test_publish_read_latest),
        cmocka_unit_test(test_publish_rejects_non_increasing_time),
        cmocka_unit_test(test_read_at),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_ring_wrap),
        cmocka_unit_test(test_rewind),
        cmocka_unit_test(test_slots),
        cmocka_unit_test(test_contacts),
        cmocka_unit_test(test_edit_queue_fifo_and_full),
        cmocka_unit_test(test_edit_refuses_long_strings),
        cmocka_unit_test(test_edit_results),
        cmocka_unit_test(test_vars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
