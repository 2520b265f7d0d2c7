/* Ids at the registry's edge: variable ids (RegistryVarId) valid for the registry that issued
 * them only, and the slots' id words, which carry packed object ids beside the values under the
 * same latch (one write is read whole, never ids of one write with values of another). The last
 * test runs a writer and a reader thread (label "threads": run under ThreadSanitizer). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "issim/registry.h"
#include "testutil.h"

static Registry *registry_with(const char *const *names, int n) {
    RegistryDesc d = registry_desc_default();
    d.history_frames = 16;
    IssimError err = {0};
    Registry *reg = registry_create(&d, &err);
    assert_non_null(reg);
    for (int i = 0; i < n; i++)
        assert_int_equal(registry_add_var(reg, names[i], "m", &err), i);
    return reg;
}

static const char *const box_vars[3] = {"box.pos.x", "box.pos.y", "box.pos.z"};

static void test_a_var_id_names_its_variable(void **state) {
    Registry *reg = registry_with(box_vars, 3);
    RegistryVarId y = registry_var_id(reg, "box.pos.y");
    assert_false(registry_var_id_is_null(y));
    assert_int_equal(y.index, 1);
    assert_true(registry_var_valid(reg, y));
    assert_int_equal(registry_var_check(reg, y, NULL), ISSIM_OK);
    RegistryVarId at = registry_var_id_at(reg, 1);
    assert_true(at.index == y.index && at.generation == y.generation);
    double values[3] = {1, 2, 3};
    registry_publish(reg, 0.5, values);
    double copy[3];
    RegistryFrame frame = {.values = copy};
    assert_true(registry_read_latest(reg, &frame));
    assert_near(registry_frame_value(reg, &frame, y), 2.0, 0.0);
    /* what is not there is the null id */
    assert_true(registry_var_id_is_null(registry_var_id(reg, "box.pos.w")));
    assert_true(registry_var_id_is_null(registry_var_id(reg, NULL)));
    assert_true(registry_var_id_is_null(registry_var_id_at(reg, 3)));
    assert_true(registry_var_id_is_null(registry_var_id_at(reg, -1)));
    registry_destroy(reg);
}

static void test_the_null_and_forged_var_ids_are_refused(void **state) {
    Registry *reg = registry_with(box_vars, 3);
    double values[3] = {1, 2, 3};
    RegistryFrame frame = {.values = values};
    RegistryVarId null = {0};
    IssimError err = {0};
    assert_false(registry_var_valid(reg, null));
    assert_int_equal(registry_var_check(reg, null, &err), ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "null variable id"));
    assert_true(isnan(registry_frame_value(reg, &frame, null)));
    RegistryVarId forged = registry_var_id(reg, "box.pos.z");
    forged.index = 3;
    assert_int_equal(registry_var_check(reg, forged, &err), ISSIM_ERR_RANGE);
    assert_non_null(strstr(err.message, "has 3 variables"));
    assert_true(isnan(registry_frame_value(reg, &frame, forged)));
    registry_destroy(reg);
}

/* The scene-change case: an id kept from the previous scene's registry, whose successor has the
 * same variables in the same order. An index would silently read the new registry's variable. */
static void test_a_var_id_from_another_registry_is_stale(void **state) {
    Registry *old = registry_with(box_vars, 3);
    RegistryVarId kept = registry_var_id(old, "box.pos.z");
    registry_destroy(old);
    Registry *reg = registry_with(box_vars, 3);
    assert_int_equal(kept.index, registry_var_id(reg, "box.pos.z").index);
    assert_false(registry_var_valid(reg, kept));
    IssimError err = {0};
    assert_int_equal(registry_var_check(reg, kept, &err), ISSIM_ERR_STALE);
    print_message("refused: %s\n", err.message);
    assert_non_null(strstr(err.message, "stale"));
    assert_non_null(strstr(err.message, "another registry"));
    double values[3] = {1, 2, 3};
    RegistryFrame frame = {.values = values};
    assert_true(isnan(registry_frame_value(reg, &frame, kept)));
    Registry *other = registry_with(box_vars, 3);
    assert_int_equal(registry_var_check(reg, registry_var_id(other, "box.pos.x"), NULL),
                     ISSIM_ERR_STALE);
    registry_destroy(other);
    registry_destroy(reg);
}

static void test_slot_id_words_round_trip(void **state) {
    Registry *reg = registry_with(box_vars, 0);
    RegistrySlot s;
    registry_slot_read(reg, REGISTRY_SLOT_POINTER, &s);
    for (int i = 0; i < REGISTRY_SLOT_IDS; i++)
        assert_int_equal(s.ids[i], 0); /* never written */
    double v[2] = {1.5, -2.5};
    uint64_t ids[REGISTRY_SLOT_IDS + 2];
    for (int i = 0; i < REGISTRY_SLOT_IDS + 2; i++)
        ids[i] = 0xfedcba9876543210ull - (uint64_t)i; /* every bit pattern a double would lose */
    registry_slot_write_ids(reg, REGISTRY_SLOT_POINTER, 3.0, v, 2, ids, 2);
    registry_slot_read(reg, REGISTRY_SLOT_POINTER, &s);
    assert_int_equal(s.count, 1);
    assert_near(s.v[1], -2.5, 0.0);
    assert_int_equal(s.ids[0], ids[0]);
    assert_int_equal(s.ids[1], ids[1]);
    assert_int_equal(s.ids[2], 0); /* beyond n_ids: zero */
    /* more than the slot holds: clamped, never past the end */
    registry_slot_write_ids(reg, REGISTRY_SLOT_POINTER, 4.0, v, 2, ids, REGISTRY_SLOT_IDS + 2);
    registry_slot_read(reg, REGISTRY_SLOT_POINTER, &s);
    for (int i = 0; i < REGISTRY_SLOT_IDS; i++)
        assert_int_equal(s.ids[i], ids[i]);
    /* a write without ids clears them: ids always belong to the values beside them */
    registry_slot_write(reg, REGISTRY_SLOT_POINTER, 5.0, v, 2);
    registry_slot_read(reg, REGISTRY_SLOT_POINTER, &s);
    assert_int_equal(s.count, 3);
    for (int i = 0; i < REGISTRY_SLOT_IDS; i++)
        assert_int_equal(s.ids[i], 0);
    /* other slots are untouched */
    registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &s);
    assert_int_equal(s.count, 0);
    registry_destroy(reg);
}

/* Write k of the concurrent test: every value and every id word derived from k. */
#define SLOT_WRITES 20000
static uint64_t id_of(uint64_t k, int i) {
    return (k << 32) | (uint64_t)(i + 1);
}

typedef struct SlotRace {
    Registry *reg;
    atomic_bool done;
    int torn;      /* reads whose ids and values came from different writes */
    uint64_t seen; /* reads of a written slot */
} SlotRace;

static void *slot_writer(void *arg) {
    SlotRace *race = arg;
    for (uint64_t k = 1; k <= SLOT_WRITES; k++) {
        double v[REGISTRY_SLOT_VALUES];
        uint64_t ids[REGISTRY_SLOT_IDS];
        for (int i = 0; i < REGISTRY_SLOT_VALUES; i++)
            v[i] = (double)k;
        for (int i = 0; i < REGISTRY_SLOT_IDS; i++)
            ids[i] = id_of(k, i);
        registry_slot_write_ids(race->reg, REGISTRY_SLOT_HANDLE, (double)k, v, REGISTRY_SLOT_VALUES,
                                ids, REGISTRY_SLOT_IDS);
    }
    atomic_store(&race->done, true);
    return NULL;
}

static void *slot_reader(void *arg) {
    SlotRace *race = arg;
    while (!atomic_load(&race->done)) {
        RegistrySlot s;
        registry_slot_read(race->reg, REGISTRY_SLOT_HANDLE, &s);
        if (s.count == 0)
            continue;
        race->seen++;
        uint64_t k = (uint64_t)s.t;
        bool whole = s.count == k;
        for (int i = 0; i < REGISTRY_SLOT_VALUES; i++)
            whole = whole && s.v[i] == (double)k;
        for (int i = 0; i < REGISTRY_SLOT_IDS; i++)
            whole = whole && s.ids[i] == id_of(k, i);
        race->torn += !whole;
    }
    return NULL;
}

static void test_slot_ids_and_values_are_read_together(void **state) {
    SlotRace race = {.reg = registry_with(box_vars, 0)};
    atomic_init(&race.done, false);
    pthread_t writer, reader;
    assert_int_equal(pthread_create(&reader, NULL, slot_reader, &race), 0);
    assert_int_equal(pthread_create(&writer, NULL, slot_writer, &race), 0);
    pthread_join(writer, NULL);
    pthread_join(reader, NULL);
    print_message("%llu reads during %d writes, %d torn\n", (unsigned long long)race.seen,
                  SLOT_WRITES, race.torn);
    assert_int_equal(race.torn, 0);
    RegistrySlot s;
    registry_slot_read(race.reg, REGISTRY_SLOT_HANDLE, &s);
    assert_int_equal(s.ids[REGISTRY_SLOT_IDS - 1], id_of(SLOT_WRITES, REGISTRY_SLOT_IDS - 1));
    registry_destroy(race.reg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_var_id_names_its_variable),
        cmocka_unit_test(test_the_null_and_forged_var_ids_are_refused),
        cmocka_unit_test(test_a_var_id_from_another_registry_is_stale),
        cmocka_unit_test(test_slot_id_words_round_trip),
        cmocka_unit_test(test_slot_ids_and_values_are_read_together),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
