/* libFuzzer harness: fit's data reader (fit_data_read, docs/studies.md) on arbitrary bytes,
 * through an in-memory regular file (memfd) as in fuzz_obj.c. Data that loads keeps the
 * reader's promises: 1 to FIT_MAX_ROWS rows, 1 to FIT_MAX_COLUMNS columns, NUL-terminated
 * column names, finite values. Seeds: tools/fuzz/corpus/fit. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "issim/study.h"

static void check(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_fit: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("fuzz.csv", MFD_CLOEXEC);
    if (fd < 0) {
        perror("memfd_create");
        abort();
    }
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            perror("write");
            abort();
        }
        done += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    FitData fit;
    memset(&fit, 0, sizeof fit);
    IssimError err = {0};
    if (fit_data_read(path, &fit, &err) == ISSIM_OK) {
        check(fit.rows >= 1 && fit.rows <= FIT_MAX_ROWS, "row count");
        check(fit.cols >= 1 && fit.cols <= FIT_MAX_COLUMNS, "column count");
        for (int c = 0; c < fit.cols; c++)
            check(memchr(fit.names[c], '\0', sizeof fit.names[c]) != NULL, "name unterminated");
        for (int r = 0; r < fit.rows; r++)
            for (int c = 0; c < fit.cols; c++)
                check(isfinite(fit.values[(size_t)r * FIT_MAX_COLUMNS + (size_t)c]),
                      "non-finite value");
    } else {
        check(memchr(err.message, '\0', sizeof err.message) != NULL, "message unterminated");
    }
    fit_data_free(&fit);
    close(fd);
    return 0;
}
