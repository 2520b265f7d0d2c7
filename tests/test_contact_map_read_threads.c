/* Map files read by several threads (contact_map_read_threads, include/issim/contactmap.h): the
 * same map as the serial reader, bit for bit (its step responses and the FFT convolution of
 * 000 eq. 3.20 its kernel spectra feed), and the serial reader's messages for broken files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contactmap.h"
#include "testutil.h"

static ContactMap *read_with(int threads, const char *path, IssimStatus expected, char *message) {
    contact_map_read_threads(threads);
    ContactMap *map = NULL;
    IssimError err = {0};
    assert_int_equal(contact_map_read(path, &map, &err), expected);
    contact_map_read_threads(1);
    if (message)
        strcpy(message, err.message);
    return map;
}

/* The convolution of node `node` (blended with `second`) over `count` samples of a random input. */
static double *convolve(const ContactMap *map, int node, int second, int count) {
    size_t doubles = contact_map_conv_doubles(map, CONTACT_MAP_CONV_FFT);
    double *state = malloc(sizeof(double) * doubles), *out = malloc(sizeof(double) * count);
    assert_non_null(state);
    assert_non_null(out);
    contact_map_conv_init(map, CONTACT_MAP_CONV_FFT, state);
    ContactMapSource src = {.map = map, .node = node, .second = second, .weight = 0.3};
    TestRng rng = {.s = 99};
    for (int n = 0; n < count; n++)
        out[n] = contact_map_conv_push(&src, CONTACT_MAP_CONV_FFT, state,
                                       test_rng_range(&rng, 0.0, 1e-6));
    free(state);
    return out;
}

static void assert_same_map(const ContactMap *a, const ContactMap *b) {
    int nodes = contact_map_node_count(a), samples = contact_map_samples(a);
    assert_int_equal(contact_map_node_count(b), nodes);
    assert_int_equal(contact_map_samples(b), samples);
    for (int j = 0; j < nodes; j++) {
        assert_memory_equal(contact_map_node(a, j), contact_map_node(b, j), sizeof(ContactMapNode));
        assert_memory_equal(contact_map_step(a, j), contact_map_step(b, j),
                            sizeof(double) * (size_t)samples);
    }
    int count = 3 * samples, last = nodes - 1;
    double *ya = convolve(a, last, last / 2, count), *yb = convolve(b, last, last / 2, count);
    assert_memory_equal(ya, yb, sizeof(double) * (size_t)count);
    double peak = 0.0; /* and the convolution did something */
    for (int n = 0; n < count; n++)
        peak = ya[n] > peak ? ya[n] : peak;
    assert_true(peak > 0.0);
    free(ya);
    free(yb);
}

/* The shipped FEM map (26 nodes x 1000 samples) on 1, 2 and 3 threads. */
static void test_shipped_map_same_on_threads(void **state) {
    (void)state;
    const char *path = test_source_path("assets/maps/steel_bar.map");
    ContactMap *serial = read_with(1, path, ISSIM_OK, NULL);
    for (int threads = 2; threads <= 3; threads++) {
        ContactMap *shared = read_with(threads, path, ISSIM_OK, NULL);
        assert_same_map(serial, shared);
        contact_map_release(shared);
    }
    contact_map_release(serial);
}

/* A 12-node map of random step responses, written; returns its text (free it). */
static char *random_map_text(const char *path) {
    enum { NODES = 12, SAMPLES = 700 };
    static ContactMapNode nodes[NODES];
    static double step[NODES * SAMPLES];
    TestRng rng = {.s = 7};
    for (int j = 0; j < NODES; j++) {
        nodes[j] = (ContactMapNode){.position = {0.01 * j, 0.0, 0.0}, .normal = {0.0, 0.0, -1.0}};
        for (int k = 0; k < SAMPLES; k++)
            step[j * SAMPLES + k] = test_rng_range(&rng, 1e5, 2e5);
    }
    ContactMapSpec spec = {
        .body = "bar",
        .dimension = 2,
        .period = 1e-6,
        .samples = SAMPLES,
        .node_count = NODES,
        .nodes = nodes,
        .step = step,
        .provenance = {
            .youngs = NAN, .poisson = NAN, .density = NAN, .mesh_size = NAN, .thickness = NAN}};
    ContactMap *map = NULL;
    IssimError err = {0};
    assert_int_equal(contact_map_create(&spec, "random", &map, &err), ISSIM_OK);
    assert_int_equal(contact_map_write(map, path, &err), ISSIM_OK);
    contact_map_release(map);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *text = calloc(1 << 20, 1);
    assert_non_null(text);
    assert_true(fread(text, 1, (1 << 20) - 1, f) > 0);
    fclose(f);
    return text;
}

/* text with the first `find` after `after` replaced by `replace`, written to a new file (its
 * path: free it). */
static char *edited(const char *text, const char *after, const char *find, const char *replace) {
    const char *from = strstr(text, after);
    assert_non_null(from);
    const char *at = strstr(from, find);
    assert_non_null(at);
    char *path = strdup(test_temp_path(".map")); /* the helper's buffers rotate */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%.*s%s%s", (int)(at - text), text, replace, at + strlen(find));
    fclose(f);
    return path;
}

static void test_random_map_same_on_threads(void **state) {
    (void)state;
    const char *path = test_temp_path(".map");
    char *text = random_map_text(path);
    ContactMap *serial = read_with(1, path, ISSIM_OK, NULL);
    ContactMap *shared = read_with(2, path, ISSIM_OK, NULL);
    assert_same_map(serial, shared);
    contact_map_release(shared);
    /* Node 5's record on node 4's last line: no longer where the threads look for records; the
     * serial reader's map all the same. */
    char *joined = edited(text, "node 4 ", "\nnode 5 ", " node 5 ");
    shared = read_with(2, joined, ISSIM_OK, NULL);
    assert_same_map(serial, shared);
    contact_map_release(shared);
    contact_map_release(serial);
    free(joined);
    free(text);
}

/* Broken files: the same status and message on 1 and 4 threads, naming line and node. */
static void test_broken_maps_same_message_on_threads(void **state) {
    (void)state;
    const char *path = test_temp_path(".map");
    char *text = random_map_text(path);
    char *broken[] = {
        edited(text, "node 7 ", "\n  ", "\n  1.5x "),               /* a bad sample in node 7 */
        edited(text, "node 11 ", "\n  ", "\n  "),                   /* (unchanged: a control) */
        edited(text, "nodes 12", "nodes 12", "nodes 11"),           /* a record too many */
        edited(text, "nodes 12", "nodes 12", "nodes 13"),           /* a record missing */
        edited(text, "samples 700", "samples 700", "samples 699"),  /* records too long */
        edited(text, "node 3 ", "node 3 ", "node 2 "),              /* out of order */
        edited(text, "node 9 ", "\n  ", "\n  # a comment\n  nan "), /* not finite */
    };
    IssimStatus expected[] = {ISSIM_ERR_INVALID, ISSIM_OK,          ISSIM_ERR_INVALID,
                              ISSIM_ERR_INVALID, ISSIM_ERR_INVALID, ISSIM_ERR_INVALID,
                              ISSIM_ERR_INVALID};
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        char serial[512], shared[512];
        ContactMap *a = read_with(1, broken[i], expected[i], serial);
        ContactMap *b = read_with(4, broken[i], expected[i], shared);
        printf("%zu: %s\n", i, serial);
        assert_string_equal(serial, shared);
        if (expected[i] != ISSIM_OK)
            assert_non_null(strstr(serial, broken[i])); /* the file named */
        contact_map_release(a);
        contact_map_release(b);
        free(broken[i]);
    }
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_map_same_on_threads),
        cmocka_unit_test(test_random_map_same_on_threads),
        cmocka_unit_test(test_broken_maps_same_message_on_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
