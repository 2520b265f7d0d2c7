/* libFuzzer harness: the sweep's grid and probe syntax (study_add_axis, study_add_probe,
 * docs/studies.md) and fit's parameter syntax (fit_param_parse), on arbitrary lines: each line
 * of the input is one --grid, --at or --free argument (chosen by its first byte). A study that
 * parses must keep its promises: every axis has 1 to STUDY_MAX_VALUES values, each a
 * NUL-terminated string; the run count is at least 1 (or LONG_MAX when the product overflows);
 * run values of the first and last run are NUL-terminated. A parsed fit parameter has lo <= hi.
 * Seeds: tools/fuzz/corpus/grid. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/study.h"

static void check(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_grid: %s\n", what);
        abort();
    }
}

static void check_terminated(const char *s, size_t size, const char *what) {
    check(memchr(s, '\0', size) != NULL, what);
}

static void check_study(const Study *study) {
    for (int a = 0; a < study->axis_count; a++) {
        const StudyAxis *axis = &study->axes[a];
        check(axis->count >= 0 && axis->count <= STUDY_MAX_VALUES, "axis value count");
        for (int v = 0; v < axis->count; v++)
            check_terminated(axis->values[v], STUDY_VALUE_MAX, "axis value unterminated");
    }
    long runs = study_run_count(study);
    check(runs >= 1, "run count below 1");
    char(*values)[STUDY_VALUE_MAX] = calloc(STUDY_MAX_AXES, STUDY_VALUE_MAX);
    check(values != NULL, "out of memory");
    long last = runs == LONG_MAX ? 0 : runs - 1;
    long indices[2] = {0, last};
    for (int i = 0; i < 2; i++) {
        study_run_values(study, indices[i], values);
        for (int a = 0; a < study->axis_count; a++)
            check_terminated(values[a], STUDY_VALUE_MAX, "run value unterminated");
    }
    free(values);
    for (int p = 0; p < study->probe_count; p++)
        check_terminated(study->probes[p].var, sizeof study->probes[p].var, "probe unterminated");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    Study study;
    memset(&study, 0, sizeof study);
    IssimError err = {0};
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char kind = line[0];
        const char *spec = line[0] ? line + 1 : line;
        if (kind == 'g') {
            study_add_axis(&study, spec, &err);
        } else if (kind == 'a') {
            study_add_probe(&study, spec, &err);
        } else if (kind == 'f') {
            FitParam p;
            memset(&p, 0, sizeof p);
            if (fit_param_parse(spec, &p, &err) == ISSIM_OK)
                check(!(p.lo > p.hi), "fit parameter with lo > hi");
        }
        check_terminated(err.message, sizeof err.message, "message unterminated");
    }
    check_study(&study);
    study_free(&study);
    free(text);
    return 0;
}
