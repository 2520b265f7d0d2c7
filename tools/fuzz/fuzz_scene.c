/* libFuzzer harness: the scene loader (scene_load_string) on arbitrary text, with small limits
 * (1e6 VM instructions, 16 MiB) so no input can run long or grow memory. A scene that loads is
 * saved (scene_save_string) and loaded back: the saved text must load again, to the same number
 * of things (scene_save_file's contract). Seeds: tools/fuzz/corpus/scene (the scenes/ files). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    SceneLimits limits = scene_limits_default();
    limits.max_instructions = 1000000;
    limits.max_memory = 16u << 20;

    ThingDb *db = NULL;
    IssimError err = {0};
    if (scene_load_string("fuzz.lua", (const char *)data, size, &limits, &db, &err) != ISSIM_OK) {
        if (db) {
            fprintf(stderr, "scene_load_string failed but returned a database\n");
            abort();
        }
        return 0;
    }

    char *saved = scene_save_string(db);
    if (saved) {
        ThingDb *again = NULL;
        IssimError err2 = {0};
        SceneLimits reload = scene_limits_default();
        reload.max_memory = 64u << 20;
        if (scene_load_string("saved.lua", saved, strlen(saved), &reload, &again, &err2) !=
            ISSIM_OK) {
            fprintf(stderr, "a saved scene does not load back: %s\n--- saved text:\n%s\n",
                    err2.message, saved);
            abort();
        }
        if (thingdb_count(again) != thingdb_count(db)) {
            fprintf(stderr, "a saved scene loads back with %d things instead of %d\n",
                    thingdb_count(again), thingdb_count(db));
            abort();
        }
        thingdb_destroy(again);
        free(saved);
    }
    thingdb_destroy(db);
    return 0;
}
