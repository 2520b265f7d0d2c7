/* Tests for the trajectory recorder (issim/io.h): exact round trips through the CSV file,
 * bounded-buffer accounting, write failures, bad paths, and a process killed mid-recording.
 * The name contains "recorder", so ctest labels it "threads" and the TSan build runs it. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "issim/io.h"

/* ===== Helpers ===== */

static void sleep_seconds(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Waits until every pushed row is accounted for (written or dropped) or the recorder failed,
 * which the recorder thread guarantees; the bound is only against a hang (TEST_WAIT_LIMIT_S).
 * The recorder has no flush call: this polls the counters, which only a test needs. */
static bool settled(void *rec) {
    RecorderStats s = recorder_stats(rec);
    return s.failed || s.rows_written + s.rows_dropped == s.rows_pushed;
}

static RecorderStats wait_settled(Recorder *rec) {
    test_wait_for(settled, rec, "the recorder to account for every row pushed");
    return recorder_stats(rec);
}

static char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *data = malloc(cap + 1);
    for (;;) {
        size_t n = fread(data + len, 1, cap - len, f);
        len += n;
        if (len < cap)
            break;
        cap *= 2;
        data = realloc(data, cap + 1);
    }
    fclose(f);
    data[len] = '\0';
    *size = len;
    return data;
}

/* Splits the text at '\n' in place. Returns the number of complete lines; *tail_len receives
 * the length of an unterminated last line (0 when the text ends with '\n'). */
static size_t split_lines(char *text, size_t size, char ***lines_out, size_t *tail_len) {
    size_t count = 0, cap = 1024;
    char **lines = malloc(cap * sizeof *lines);
    char *start = text;
    for (char *p = text; p < text + size; p++) {
        if (*p != '\n')
            continue;
        *p = '\0';
        if (count == cap) {
            cap *= 2;
            lines = realloc(lines, cap * sizeof *lines);
        }
        lines[count++] = start;
        start = p + 1;
    }
    *tail_len = (size_t)(text + size - start);
    *lines_out = lines;
    return count;
}

/* Parses a data line of exactly n comma-separated numbers. */
static bool parse_row(const char *line, double *out, int n) {
    const char *p = line;
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        out[i] = strtod(p, &end);
        if (end == p)
            return false;
        if (i < n - 1 ? *end != ',' : *end != '\0')
            return false;
        p = end + 1;
    }
    return true;
}

static bool same_bits(double a, double b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

/* splitmix64: reproducible values. */
static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Row i, column c: a mix of awkward doubles (every exponent, signed zero, subnormals, limits,
 * infinities); NaN is left out because its payload does not survive text. */
static double awkward_value(uint64_t i, int c) {
    uint64_t bits = mix(i * 7919 + (uint64_t)c);
    switch (bits % 16) {
    case 0:
        return -0.0;
    case 1:
        return 4.9406564584124654e-324;
    case 2:
        return -1.7976931348623157e308;
    case 3:
        return INFINITY;
    case 4:
        return 0.1;
    case 5:
        return (double)(int64_t)(bits >> 20) * 1e-3;
    default: {
        double v;
        uint64_t b = mix(bits);
        memcpy(&v, &b, sizeof v);
        return isnan(v) ? 1.0 / 3.0 : v;
    }
    }
}

static const char *const kColumns[] = {"bar.pos.x", "bar.pos.z", "bar.force.z"};
static const char *const kUnits[] = {"m", "m", "N"};
static const char *const kMetadata[] = {"issim 0.1.0 test", "scene: two\nlines"};

static RecorderDesc test_desc(const char *path) {
    RecorderDesc d = recorder_desc_default();
    d.path = path;
    d.column_count = 3;
    d.columns = kColumns;
    d.units = kUnits;
    d.metadata = kMetadata;
    d.metadata_count = 2;
    return d;
}

static const char *const kHeader[] = {"# issim 0.1.0 test", "# scene: two", "# lines",
                                      "t,bar.pos.x,bar.pos.z,bar.force.z", "# units: s,m,m,N"};
enum { HEADER_LINES = 5 };

static void check_header(char **lines, size_t count) {
    assert_true(count >= HEADER_LINES);
    for (int i = 0; i < HEADER_LINES; i++)
        assert_string_equal(lines[i], kHeader[i]);
}

/* An observer polling stats from another thread while the producer pushes (exercised under
 * TSan): counters only grow and never disagree with each other. */
typedef struct Observer {
    Recorder *rec;
    atomic_bool stop;
    bool consistent;
    int samples;
} Observer;

static void *observer_main(void *arg) {
    Observer *o = arg;
    RecorderStats last = {0};
    o->consistent = true;
    while (!atomic_load(&o->stop)) {
        RecorderStats s = recorder_stats(o->rec);
        if (s.rows_written < last.rows_written || s.bytes_written < last.bytes_written ||
            s.rows_pushed < last.rows_pushed)
            o->consistent = false;
        /* rows_written is read after rows_pushed, so it may be ahead of that snapshot, but
         * never ahead of the pushes counted in a later load. */
        if (s.rows_written > recorder_stats(o->rec).rows_pushed)
            o->consistent = false;
        if (recorder_failed(o->rec, NULL))
            o->consistent = false;
        last = s;
        o->samples++;
        sleep_seconds(0.0005);
    }
    return NULL;
}

/* ===== Tests ===== */

/* What a test starts, in the cmocka state: the teardown stops the observer and closes the
 * recorder (joining its thread), so a failed assertion leaves no thread behind. */
typedef struct Fixture {
    Recorder *rec; /* NULL once the test closed it */
    Observer obs;
    pthread_t observer;
    bool observer_started;
} Fixture;

static int setup(void **state) {
    Fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    atomic_init(&fx->obs.stop, false);
    *state = fx;
    return 0;
}

static void stop_observer(Fixture *fx) {
    atomic_store(&fx->obs.stop, true);
    if (fx->observer_started)
        pthread_join(fx->observer, NULL);
    fx->observer_started = false;
}

static int teardown(void **state) {
    Fixture *fx = *state;
    stop_observer(fx);
    if (fx->rec)
        recorder_close(fx->rec, NULL);
    testlog_release();
    free(fx);
    return 0;
}

/* The recorder the test closes now: the teardown must not close it again. */
static Recorder *closing(Fixture *fx) {
    Recorder *rec = fx->rec;
    fx->rec = NULL;
    return rec;
}

/* The file at path holds its header and at least one whole row. */
static bool has_a_row(void *path) {
    size_t size, tail;
    char *text = read_file(path, &size);
    if (!text)
        return false;
    char **lines;
    size_t count = split_lines(text, size, &lines, &tail);
    free(lines);
    free(text);
    return count > HEADER_LINES;
}

/* A child process records until SIGKILL; every line it left must be whole. Runs first, while
 * this process has no other thread (see main). */
static void test_killed_process_leaves_whole_rows(void **state) {
    (void)state;
    const char *path = test_temp_path(".csv");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        RecorderDesc d = test_desc(path);
        d.flush_interval = 0.01;
        d.buffer_rows = 256;
        Recorder *rec = recorder_open(&d, NULL);
        if (!rec)
            _exit(3);
        /* About 10,000 rows a second, so each 10 ms flush is a few kilobytes. Linux may stop
         * a write(2) at a page boundary when SIGKILL lands inside it (see recorder.c), so a
         * high data rate would make this test flaky without testing anything more. */
        for (uint64_t i = 0;; i++) {
            double v[3] = {(double)i, 0.5 * (double)i, -(double)i};
            if (recorder_push(rec, (double)i * 1e-3, v, true) != ISSIM_OK)
                _exit(4);
            if (i % 10 == 9)
                sleep_seconds(0.001);
        }
    }
    /* killed once it has flushed a row (at load 12 the child may not have run within a fixed
       0.3 s), wherever it is then */
    if (!test_wait_until(has_a_row, (void *)path)) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("the recording child wrote no row to %s", path);
    }
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status))
        fail_msg("child exited with status %d before the kill", WEXITSTATUS(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);

    size_t size, tail;
    char *text = read_file(path, &size);
    assert_non_null(text);
    char **lines;
    size_t count = split_lines(text, size, &lines, &tail);
    assert_int_equal(tail, 0); /* ends with '\n': no partial row */
    check_header(lines, count);
    size_t rows = count - HEADER_LINES;
    assert_true(rows >= 1);
    for (size_t r = 0; r < rows; r++) {
        double row[4];
        if (!parse_row(lines[HEADER_LINES + r], row, 4))
            fail_msg("line %zu is not a whole row: '%s'", HEADER_LINES + r + 1,
                     lines[HEADER_LINES + r]);
        /* Rows are consecutive from 0: nothing lost or reordered before the last flush. */
        assert_true(same_bits(row[0], (double)r * 1e-3));
        assert_true(same_bits(row[1], (double)r));
        assert_true(same_bits(row[3], -(double)r));
    }
    free(lines);
    free(text);
    unlink(path);
}

static void test_blocking_round_trip_is_exact(void **state) {
    enum { ROWS = 100000 };
    const char *path = test_temp_path(".csv");
    RecorderDesc d = test_desc(path);
    d.buffer_rows = 64;
    IssimError err;
    Fixture *fx = *state;
    Recorder *rec = fx->rec = recorder_open(&d, &err);
    if (!rec)
        fail_msg("%s", err.message);

    fx->obs.rec = rec;
    assert_int_equal(pthread_create(&fx->observer, NULL, observer_main, &fx->obs), 0);
    fx->observer_started = true;

    for (uint64_t i = 0; i < ROWS; i++) {
        double v[3] = {awkward_value(i, 0), awkward_value(i, 1), awkward_value(i, 2)};
        assert_int_equal(recorder_push(rec, (double)i * 1e-3, v, true), ISSIM_OK);
    }
    RecorderStats s = wait_settled(rec);
    stop_observer(fx);
    assert_true(fx->obs.consistent);
    assert_true(fx->obs.samples > 0);
    assert_int_equal(s.rows_pushed, ROWS);
    assert_int_equal(s.rows_written, ROWS);
    assert_int_equal(s.rows_dropped, 0);
    assert_false(s.failed);
    assert_int_equal(recorder_close(closing(fx), &err), ISSIM_OK);

    size_t size, tail;
    char *text = read_file(path, &size);
    assert_non_null(text);
    assert_int_equal(s.bytes_written, size); /* everything was handed over before close */
    char **lines;
    size_t count = split_lines(text, size, &lines, &tail);
    assert_int_equal(tail, 0);
    check_header(lines, count);
    assert_int_equal(count - HEADER_LINES, ROWS);
    for (uint64_t i = 0; i < ROWS; i++) {
        double row[4];
        if (!parse_row(lines[HEADER_LINES + i], row, 4))
            fail_msg("row %llu does not parse: '%s'", (unsigned long long)i,
                     lines[HEADER_LINES + i]);
        if (!same_bits(row[0], (double)i * 1e-3))
            fail_msg("row %llu: t = %.17g", (unsigned long long)i, row[0]);
        for (int c = 0; c < 3; c++)
            if (!same_bits(row[1 + c], awkward_value(i, c)))
                fail_msg("row %llu column %d: wrote %.17g, read %.17g", (unsigned long long)i, c,
                         awkward_value(i, c), row[1 + c]);
    }
    free(lines);
    free(text);
    unlink(path);
}

/* Non-blocking pushes into a two-row buffer: some rows are dropped (how many depends on the
 * scheduler), but the counters must account for every push and the file must hold exactly the
 * accepted rows, in order. */
static void test_nonblocking_accounting(void **state) {
    Fixture *fx = *state;
    enum { ROWS = 200000 };
    const char *path = test_temp_path(".csv");
    RecorderDesc d = test_desc(path);
    d.buffer_rows = 2;
    d.flush_interval = 0.01;
    IssimError err;
    Recorder *rec = fx->rec = recorder_open(&d, &err);
    if (!rec)
        fail_msg("%s", err.message);
    bool *accepted = calloc(ROWS, sizeof *accepted);
    uint64_t ok = 0, full = 0;
    for (uint64_t i = 0; i < ROWS; i++) {
        double v[3] = {(double)i, 1.0, 2.0};
        IssimStatus st = recorder_push(rec, (double)i, v, false);
        assert_true(st == ISSIM_OK || st == ISSIM_ERR_FULL);
        accepted[i] = st == ISSIM_OK;
        if (st == ISSIM_OK)
            ok++;
        else
            full++;
    }
    RecorderStats s = wait_settled(rec);
    assert_int_equal(s.rows_pushed, ROWS);
    assert_int_equal(s.rows_pushed, s.rows_written + s.rows_dropped);
    assert_int_equal(s.rows_dropped, full);
    assert_int_equal(s.rows_written, ok);
    assert_int_equal(recorder_close(closing(fx), &err), ISSIM_OK);
    print_message("non-blocking: %llu of %d rows dropped\n", (unsigned long long)full, ROWS);

    size_t size, tail;
    char *text = read_file(path, &size);
    char **lines;
    size_t count = split_lines(text, size, &lines, &tail);
    assert_int_equal(tail, 0);
    check_header(lines, count);
    assert_int_equal(count - HEADER_LINES, s.rows_written);
    size_t line = HEADER_LINES;
    for (uint64_t i = 0; i < ROWS; i++) {
        if (!accepted[i])
            continue;
        double row[4];
        assert_true(parse_row(lines[line++], row, 4));
        assert_true(same_bits(row[0], (double)i));
    }
    free(accepted);
    free(lines);
    free(text);
    unlink(path);
}

/* Rows reach the file within the flush interval, without close. */
static void test_flush_interval(void **state) {
    Fixture *fx = *state;
    const char *path = test_temp_path(".csv");
    RecorderDesc d = test_desc(path);
    d.flush_interval = 0.05;
    IssimError err;
    Recorder *rec = fx->rec = recorder_open(&d, &err);
    if (!rec)
        fail_msg("%s", err.message);
    double v[3] = {1, 2, 3};
    for (int i = 0; i < 10; i++)
        assert_int_equal(recorder_push(rec, i, v, true), ISSIM_OK);
    RecorderStats s = wait_settled(rec);
    assert_int_equal(s.rows_written, 10);

    size_t size, tail;
    char *text = read_file(path, &size);
    char **lines;
    size_t count = split_lines(text, size, &lines, &tail);
    assert_int_equal(count, HEADER_LINES + 10);
    assert_string_equal(lines[HEADER_LINES + 9], "9,1,2,3");
    free(lines);
    free(text);
    assert_int_equal(recorder_close(closing(fx), &err), ISSIM_OK);
    unlink(path);
}

/* /dev/full accepts open(2) and fails every write with ENOSPC. The header is written at open,
 * so open reports it; a recorder that deferred the header would fail on the first flush. */
static void test_dev_full(void **state) {
    Fixture *fx = *state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    testlog_capture();
    RecorderDesc d = test_desc("/dev/full");
    IssimError err;
    issim_error_clear(&err);
    Recorder *rec = fx->rec = recorder_open(&d, &err);
    if (rec) {
        double v[3] = {0};
        IssimStatus st = ISSIM_OK;
        for (int i = 0; i < 100000 && st == ISSIM_OK; i++)
            st = recorder_push(rec, i, v, true);
        RecorderStats s = wait_settled(rec);
        assert_true(s.failed);
        assert_int_equal(recorder_push(rec, 0, v, true), ISSIM_ERR_IO);
        assert_int_equal(recorder_push(rec, 0, v, false), ISSIM_ERR_IO);
        assert_int_equal(recorder_close(closing(fx), &err), ISSIM_ERR_IO);
    }
    assert_int_equal(err.status, ISSIM_ERR_IO);
    assert_non_null(strstr(err.message, "No space left on device"));
    assert_non_null(strstr(err.message, "/dev/full"));
    testlog_release();
}

/* A write error after open: the path is a pipe whose reader goes away. Pushes must stop
 * blocking and return ISSIM_ERR_IO, the error is logged once and close returns it. */
static void test_write_error_after_open(void **state) {
    Fixture *fx = *state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[1]);
    testlog_capture();
    RecorderDesc d = test_desc(path);
    d.buffer_rows = 8;
    IssimError err;
    Recorder *rec = fx->rec = recorder_open(&d, &err);
    if (!rec)
        fail_msg("%s", err.message);
    close(fds[1]); /* the recorder has its own descriptor */
    char header[4096];
    ssize_t header_len = read(fds[0], header, sizeof header);
    assert_true(header_len > 0);
    close(fds[0]); /* reader gone: writes now fail with EPIPE */

    double v[3] = {1, 2, 3};
    IssimStatus st = ISSIM_OK;
    long pushes = 0;
    while (st == ISSIM_OK && pushes < 10000000) {
        st = recorder_push(rec, (double)pushes, v, true);
        pushes++;
    }
    assert_int_equal(st, ISSIM_ERR_IO);
    /* Further pushes fail at once, blocking or not. */
    for (int i = 0; i < 100; i++) {
        assert_int_equal(recorder_push(rec, 0, v, true), ISSIM_ERR_IO);
        assert_int_equal(recorder_push(rec, 0, v, false), ISSIM_ERR_IO);
    }
    RecorderStats s = recorder_stats(rec);
    assert_true(s.failed);
    assert_int_equal(s.rows_written, 0);
    assert_int_equal(s.bytes_written, (uint64_t)header_len);
    assert_int_equal(s.rows_pushed, (uint64_t)pushes + 200);
    IssimError ferr;
    assert_true(recorder_failed(rec, &ferr));
    assert_int_equal(ferr.status, ISSIM_ERR_IO);
    char expected[256];
    snprintf(expected, sizeof expected, "recording to '%s' failed after %zd bytes: Broken pipe",
             path, header_len);
    assert_string_equal(ferr.message, expected);

    assert_int_equal(recorder_close(closing(fx), &err), ISSIM_ERR_IO);
    assert_string_equal(err.message, expected);
    assert_int_equal(testlog_count(ISSIM_LOG_ERROR, "Broken pipe"), 1);
    assert_int_equal(testlog_count(ISSIM_LOG_DEBUG, NULL), 1);
    testlog_release();
}

static void test_open_errors(void **state) {
    (void)state;
    IssimError err;
    RecorderDesc d = test_desc("/nonexistent-dir/x.csv");
    assert_null(recorder_open(&d, &err));
    assert_int_equal(err.status, ISSIM_ERR_IO);
    assert_string_equal(
        err.message, "cannot open '/nonexistent-dir/x.csv' for writing: No such file or directory");

    d.path = "/tmp";
    assert_null(recorder_open(&d, &err));
    assert_non_null(strstr(err.message, "'/tmp'"));
    assert_non_null(strstr(err.message, "Is a directory"));

    d.path = NULL;
    assert_null(recorder_open(&d, &err));
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    d.path = "";
    assert_null(recorder_open(&d, &err));
    assert_int_equal(err.status, ISSIM_ERR_INVALID);

    if (geteuid() != 0) { /* root writes anywhere */
        const char *dir = test_temp_path("-ro");
        assert_int_equal(mkdir(dir, 0500), 0);
        char path[512];
        snprintf(path, sizeof path, "%s/out.csv", dir);
        d.path = path;
        assert_null(recorder_open(&d, &err));
        assert_non_null(strstr(err.message, "Permission denied"));
        assert_non_null(strstr(err.message, path));
        rmdir(dir);
    }

    const char *path = test_temp_path(".csv");
    d = test_desc(path);
    d.buffer_rows = 0;
    assert_null(recorder_open(&d, &err));
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    d = test_desc(path);
    d.flush_interval = NAN;
    assert_null(recorder_open(&d, &err));
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    static const char *const bad_columns[] = {"a", "b,c", "d"};
    d = test_desc(path);
    d.columns = bad_columns;
    assert_null(recorder_open(&d, &err));
    assert_int_equal(err.status, ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "'b,c'"));
    assert_int_equal(access(path, F_OK), -1); /* nothing created for an invalid description */
}

/* No value columns, no units line, no metadata: just "t". */
static void test_minimal_header(void **state) {
    Fixture *fx = *state;
    const char *path = test_temp_path(".csv");
    RecorderDesc d = recorder_desc_default();
    d.path = path;
    IssimError err;
    Recorder *rec = fx->rec = recorder_open(&d, &err);
    if (!rec)
        fail_msg("%s", err.message);
    assert_int_equal(recorder_push(rec, 0.25, NULL, true), ISSIM_OK);
    assert_int_equal(recorder_push(rec, 0.1, NULL, false), ISSIM_OK);
    assert_int_equal(recorder_close(closing(fx), &err), ISSIM_OK);
    size_t size;
    char *text = read_file(path, &size);
    assert_string_equal(text, "t\n0.25\n0.10000000000000001\n");
    free(text);
    unlink(path);
}

int main(void) {
    /* The fork test runs first: forking is only safe (and TSan-clean) while this process has
     * no other thread, and every later test joins the threads it starts. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_killed_process_leaves_whole_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocking_round_trip_is_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nonblocking_accounting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_interval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dev_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_error_after_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_minimal_header, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
