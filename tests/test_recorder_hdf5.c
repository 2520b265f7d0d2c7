/* HDF5 recordings (src/io/recorder_hdf5.c): the same doubles as the CSV of the same run, the
 * units and the run's description, live edits. kill -9: test_recorder_hdf5_crash. */
#include "testutil.h"

#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "issim/io.h"

static char g_dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/issim-h5-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    /* The library's own error printing stays off: the tests report what fails. */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp_path(const char *name) {
    static char buf[4][128];
    static int slot;
    char *p = buf[slot++ & 3];
    snprintf(p, sizeof buf[0], "%s/%s", g_dir, name);
    return p;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    if (text)
        text[n] = '\0';
    fclose(f);
    return text;
}

/* A scalar or one element of a string attribute (variable length), malloc'd. */
static char *read_string_attr(hid_t obj, const char *name, hsize_t index) {
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0)
        return NULL;
    hid_t space = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    char **v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    char *out = NULL;
    if (n > 0 && (hsize_t)n > index && H5Aread(a, type, v) >= 0) {
        out = strdup(v[index]);
        H5Dvlen_reclaim(type, space, H5P_DEFAULT, v);
    }
    free(v);
    H5Tclose(type);
    H5Sclose(space);
    H5Aclose(a);
    return out;
}

/* The whole 1-D float64 dataset (malloc'd), its length in *n; NULL when unreadable. */
static double *read_doubles(hid_t file, const char *name, size_t *n) {
    *n = 0;
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0)
        return NULL;
    hid_t space = H5Dget_space(d);
    hssize_t count = H5Sget_simple_extent_npoints(space);
    double *v = count >= 0 ? malloc(((size_t)count + 1) * sizeof *v) : NULL;
    if (v && count > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
        free(v);
        v = NULL;
    }
    H5Sclose(space);
    H5Dclose(d);
    if (v)
        *n = (size_t)count;
    return v;
}

/* A CSV recording: column names and rows (t first), as the recorder writes them. */
typedef struct Csv {
    char *names[64];
    int columns; /* with t */
    double *values;
    size_t rows;
} Csv;

static void csv_read(const char *path, Csv *csv) {
    memset(csv, 0, sizeof *csv);
    char *text = slurp(path);
    assert_non_null(text);
    size_t cap = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        if (csv->columns == 0) {
            char *s2 = NULL;
            for (char *f = strtok_r(line, ",", &s2); f && csv->columns < 64;
                 f = strtok_r(NULL, ",", &s2))
                csv->names[csv->columns++] = strdup(f);
            continue;
        }
        if ((csv->rows + 1) * (size_t)csv->columns > cap) {
            cap = cap ? 2 * cap : 4096;
            csv->values = realloc(csv->values, cap * sizeof *csv->values);
            assert_non_null(csv->values);
        }
        char *p = line;
        for (int c = 0; c < csv->columns; c++) {
            char *end;
            csv->values[csv->rows * (size_t)csv->columns + (size_t)c] = strtod(p, &end);
            assert_true(end != p);
            p = *end == ',' ? end + 1 : end;
        }
        csv->rows++;
    }
    free(text);
}

static void csv_free(Csv *csv) {
    for (int i = 0; i < csv->columns; i++)
        free(csv->names[i]);
    free(csv->values);
}

static void test_same_doubles_as_csv(void **state) {
    (void)state;
    char args[512], out[8192];
    const char *csv_path = tmp_path("drop.csv"), *h5_path = tmp_path("drop.h5");
    snprintf(args, sizeof args,
             "run scenes/point_drop.lua --headless --until 2 --set bar.mass=2 --record %s",
             csv_path);
    assert_int_equal(test_run_issim(args, out, sizeof out), 0);
    snprintf(args, sizeof args,
             "run scenes/point_drop.lua --headless --until 2 --set bar.mass=2 --record %s",
             h5_path);
    assert_int_equal(test_run_issim(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "recorded   2001 rows"));

    Csv csv;
    csv_read(csv_path, &csv);
    assert_int_equal(csv.rows, 2001);
    assert_true(csv.columns >= 2);
    hid_t f = H5Fopen(h5_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    for (int c = 0; c < csv.columns; c++) {
        size_t n;
        double *v = read_doubles(f, csv.names[c], &n);
        assert_non_null(v);
        assert_int_equal(n, csv.rows);
        /* Bit for bit: %.17g reads back exactly, and HDF5 stores the double itself. */
        for (size_t r = 0; r < n; r++) {
            double expected = csv.values[r * (size_t)csv.columns + (size_t)c];
            if (memcmp(&v[r], &expected, sizeof expected) != 0)
                fail_msg("%s row %zu: HDF5 %.17g, CSV %.17g", csv.names[c], r, v[r], expected);
        }
        free(v);
        hid_t d = H5Dopen2(f, csv.names[c], H5P_DEFAULT);
        char *units = read_string_attr(d, "units", 0);
        assert_non_null(units);
        if (c == 0)
            assert_string_equal(units, "s");
        if (strcmp(csv.names[c], "bar.pos.z") == 0)
            assert_string_equal(units, "m");
        free(units);
        /* Chunked and compressed: shuffle then deflate. */
        hid_t dcpl = H5Dget_create_plist(d);
        assert_int_equal(H5Pget_layout(dcpl), H5D_CHUNKED);
        assert_int_equal(H5Pget_nfilters(dcpl), 2);
        assert_int_equal(H5Pget_filter2(dcpl, 0, NULL, NULL, NULL, 0, NULL, NULL),
                         H5Z_FILTER_SHUFFLE);
        assert_int_equal(H5Pget_filter2(dcpl, 1, NULL, NULL, NULL, 0, NULL, NULL),
                         H5Z_FILTER_DEFLATE);
        H5Pclose(dcpl);
        H5Dclose(d);
        if (c > 0) {
            char *column = read_string_attr(f, "columns", (hsize_t)(c - 1));
            assert_non_null(column);
            assert_string_equal(column, csv.names[c]);
            free(column);
        }
    }
    char *scene = read_string_attr(f, "scene", 0);
    char *file = slurp(test_source_path("scenes/point_drop.lua"));
    assert_non_null(scene);
    assert_non_null(file);
    assert_string_equal(scene, file);
    free(scene);
    free(file);
    char *path = read_string_attr(f, "scene_path", 0);
    assert_string_equal(path, "scenes/point_drop.lua");
    free(path);
    char *set = read_string_attr(f, "sets", 0);
    assert_string_equal(set, "bar.mass=2");
    free(set);
    char *version = read_string_attr(f, "issim_version", 0);
    assert_string_equal(version, ISSIM_VERSION);
    free(version);
    char *command = read_string_attr(f, "command_line", 0);
    assert_non_null(command);
    assert_non_null(strstr(command, "--record"));
    free(command);
    H5Fclose(f);
    csv_free(&csv);
}

/* Through the library: edits land in /edits with their instants; a CSV ignores them. */
static void test_edits_and_paths(void **state) {
    (void)state;
    const char *columns[] = {"a.x", "a.v"}, *units[] = {"m", "m/s"};
    RecorderDesc d = recorder_desc_default();
    d.path = tmp_path("edits.HDF5");
    d.column_count = 2;
    d.columns = columns;
    d.units = units;
    d.scene_text = "return {}";
    IssimError err = {0};
    assert_true(recorder_path_is_hdf5(d.path));
    assert_false(recorder_path_is_hdf5("out.csv"));
    assert_false(recorder_path_is_hdf5("h5"));
    Recorder *rec = recorder_open(&d, &err);
    assert_non_null(rec);
    for (int i = 0; i < 1000; i++) {
        double row[2] = {0.5 * i, -i};
        assert_int_equal(recorder_push(rec, 1e-3 * i, row, true), ISSIM_OK);
        if (i == 300)
            assert_int_equal(recorder_note_edit(rec, 0.3, "a.mass", "2"), ISSIM_OK);
        if (i == 700)
            assert_int_equal(recorder_note_edit(rec, 0.7, "universe.gravity", "0 0 -1.62"),
                             ISSIM_OK);
    }
    RecorderStats st;
    assert_int_equal(recorder_close_with_stats(rec, &st, &err), ISSIM_OK);
    assert_int_equal(st.rows_written, 1000);
    struct stat sb;
    assert_int_equal(stat(d.path, &sb), 0);
    assert_int_equal(st.bytes_written, (uint64_t)sb.st_size);

    hid_t f = H5Fopen(d.path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    size_t n;
    double *t = read_doubles(f, "edits/t", &n);
    assert_int_equal(n, 2);
    assert_true(t[0] == 0.3 && t[1] == 0.7);
    free(t);
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    const char *paths[] = {"edits/path", "edits/value"};
    const char *expected[2][2] = {{"a.mass", "universe.gravity"}, {"2", "0 0 -1.62"}};
    for (int k = 0; k < 2; k++) {
        hid_t ds = H5Dopen2(f, paths[k], H5P_DEFAULT);
        char *v[2] = {0};
        assert_true(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        assert_string_equal(v[0], expected[k][0]);
        assert_string_equal(v[1], expected[k][1]);
        hid_t space = H5Dget_space(ds);
        H5Dvlen_reclaim(type, space, H5P_DEFAULT, v);
        H5Sclose(space);
        H5Dclose(ds);
    }
    H5Tclose(type);
    double *x = read_doubles(f, "a.x", &n);
    assert_int_equal(n, 1000);
    assert_true(x[999] == 0.5 * 999);
    free(x);
    H5Fclose(f);

    /* A CSV takes the call and keeps its format. */
    d.path = tmp_path("edits.csv");
    rec = recorder_open(&d, &err);
    assert_non_null(rec);
    assert_int_equal(recorder_note_edit(rec, 0.1, "a.mass", "3"), ISSIM_OK);
    assert_int_equal(recorder_close(rec, &err), ISSIM_OK);
    char *text = slurp(d.path);
    assert_null(strstr(text, "a.mass"));
    free(text);

    /* A link and a device are refused, as for every output. */
    assert_int_equal(symlink(tmp_path("edits.HDF5"), tmp_path("link.h5")), 0);
    d.path = tmp_path("link.h5");
    assert_null(recorder_open(&d, &err));
    assert_non_null(strstr(err.message, "symbolic link"));
    assert_int_equal(symlink("/dev/null", tmp_path("null.h5")), 0);
    d.path = tmp_path("null.h5");
    assert_null(recorder_open(&d, &err));
    assert_non_null(strstr(err.message, "regular file"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_doubles_as_csv),
        cmocka_unit_test(test_edits_and_paths),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
