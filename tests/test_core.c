/* core: error records, the swappable log handler, the fatal handler, hashing, strlcpy, nearest
 * names. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

static void test_error_records(void **state) {
    IssimError err;
    assert_int_equal(issim_error_set(&err, ISSIM_ERR_RANGE, "x = %d", 3), ISSIM_ERR_RANGE);
    assert_int_equal(err.status, ISSIM_ERR_RANGE);
    assert_string_equal(err.message, "x = 3");
    assert_int_equal(issim_error_set(NULL, ISSIM_ERR_IO, "ignored"), ISSIM_ERR_IO);
    issim_error_clear(&err);
    assert_int_equal(err.status, ISSIM_OK);
    assert_string_equal(err.message, "");
    assert_string_equal(issim_status_name(ISSIM_ERR_READONLY), "read-only");
}

static void test_log_capture(void **state) {
    testlog_capture();
    issim_log(ISSIM_LOG_WARN, "step %g too coarse", 1e-3);
    issim_log(ISSIM_LOG_DEBUG, "noise");
    assert_int_equal(testlog_count(ISSIM_LOG_WARN, "too coarse"), 1);
    assert_int_equal(testlog_count(ISSIM_LOG_DEBUG, NULL), 2);
    testlog_release();
}

static jmp_buf fatal_jump;
static char fatal_message[256];

static void fatal_to_test(const char *message) {
    snprintf(fatal_message, sizeof fatal_message, "%s", message);
    longjmp(fatal_jump, 1);
}

static void test_fatal_handler(void **state) {
    testlog_capture();
    IssimFatalHandler old = issim_set_fatal_handler(fatal_to_test);
    if (setjmp(fatal_jump) == 0) {
        ISSIM_ASSERT(1 + 1 == 3);
        fail_msg("ISSIM_ASSERT did not fire");
    }
    assert_non_null(strstr(fatal_message, "assertion failed: 1 + 1 == 3"));
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "assertion failed"), 1);
    ISSIM_ASSERT(2 > 1); /* a true assertion is silent */
    issim_set_fatal_handler(old);
    testlog_release();
}

static void test_hashes(void **state) {
    double a[3] = {1.0, 2.0, 3.0}, b[3] = {1.0, 2.0, nextafter(3.0, 4.0)};
    uint64_t ha = issim_hash_doubles(ISSIM_HASH_INIT, a, 3);
    assert_true(ha == issim_hash_doubles(ISSIM_HASH_INIT, a, 3));
    assert_true(ha != issim_hash_doubles(ISSIM_HASH_INIT, b, 3)); /* one ulp differs */
    double swapped[3] = {2.0, 1.0, 3.0};
    assert_true(ha != issim_hash_doubles(ISSIM_HASH_INIT, swapped, 3)); /* order matters */
    /* FNV-1a of "a" is the published test vector. */
    assert_true(issim_hash_bytes(ISSIM_HASH_INIT, "a", 1) == 0xaf63dc4c8601ec8cull);
}

static void test_strlcpy(void **state) {
    char buf[4];
    assert_int_equal(issim_strlcpy(buf, "abcdef", sizeof buf), 6);
    assert_string_equal(buf, "abc");
    assert_int_equal(issim_strlcpy(buf, "ab", sizeof buf), 2);
    assert_string_equal(buf, "ab");
}

static void test_nearest_names(void **state) {
    assert_int_equal(issim_edit_distance("", ""), 0);
    assert_int_equal(issim_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(issim_edit_distance("--untl", "--until"), 1);
    assert_int_equal(issim_edit_distance("abc", ""), 3);
    const char *table[] = {"pause", "paste", "play", "pace", "past", "step", "screenshot"};
    IssimNearest n = issim_nearest_start("pase");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        issim_nearest_offer(&n, table[i]);
    char text[64];
    /* Four names at 1 edit: the first three in table order; play (3) and step (4) are farther. */
    assert_int_equal(issim_nearest_format(&n, text, sizeof text), 3);
    assert_string_equal(text, "pause, paste or pace");
    n = issim_nearest_start("sep");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        issim_nearest_offer(&n, table[i]);
    assert_int_equal(issim_nearest_format(&n, text, sizeof text), 1); /* step, 1 insertion */
    assert_string_equal(text, "step");
    n = issim_nearest_start("frobnicate");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        issim_nearest_offer(&n, table[i]);
    assert_int_equal(issim_nearest_format(&n, text, sizeof text), 0);
    assert_string_equal(text, "");
    n = issim_nearest_start("screnshot"); /* a long word tolerates len / 3 edits */
    issim_nearest_offer(&n, "screenshot");
    issim_nearest_offer(&n, "screenshots"); /* 2 edits: a nearer one is known */
    issim_nearest_offer(&n, "step");
    assert_int_equal(issim_nearest_format(&n, text, 8), 1);
    assert_string_equal(text, "screens"); /* truncated, terminated */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_records), cmocka_unit_test(test_log_capture),
        cmocka_unit_test(test_fatal_handler), cmocka_unit_test(test_hashes),
        cmocka_unit_test(test_strlcpy),       cmocka_unit_test(test_nearest_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
