/* libFuzzer harness: the property/edit parser (thingdb_set_text -> thingdb_resolve, prop_parse,
 * thing_set), the --set and edit-queue path. The input is lines of "path=value", each split at
 * its first '='; a line starting with '!' is applied as while running (fixed properties
 * refused). They go to a small database built here: a universe, a body in a group, an obstacle
 * and a contact pair with its model properties. Afterwards every stored value must pass
 * prop_validate and (except strings) format and parse back to itself. Seeds:
 * tools/fuzz/corpus/thing (hand-written lines). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/thing.h"

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "fuzz_thing: %s: %s\n", what, detail);
    abort();
}

static ThingId add(ThingDb *db, const char *name, ThingKind kind, ThingId parent) {
    IssimError err = {0};
    ThingId id = thingdb_add(db, name, kind, parent, &err);
    if (thing_id_is_null(id))
        fail("thingdb_add", err.message);
    return id;
}

static ThingDb *build(void) {
    ThingDb *db = thingdb_create();
    if (!db)
        fail("thingdb_create", "out of memory");
    add(db, "universe", THING_UNIVERSE, thing_id_null());
    ThingId arm = add(db, "arm", THING_GROUP, thing_id_null());
    add(db, "bar", THING_RIGID_BODY, arm);
    add(db, "floor", THING_FIXED_OBSTACLE, thing_id_null());
    ThingId pair = add(db, "bar_floor", THING_CONTACT_PAIR, thing_id_null());
    IssimError err = {0};
    if (contact_pair_add_props(db, pair, &err) != ISSIM_OK)
        fail("contact_pair_add_props", err.message);
    return db;
}

static void check(const ThingDb *db) {
    char text[8192], path[256];
    for (int i = 0; i < thingdb_count(db); i++) {
        ThingId id = thingdb_at(db, i);
        thing_path(db, id, path, sizeof path);
        for (int p = 0; p < thing_prop_count(db, id); p++) {
            const PropDef *def = thing_prop_def(db, id, p);
            const PropValue *v = thing_prop_value(db, id, p);
            IssimError err = {0};
            if (prop_validate(def, v, &err) != ISSIM_OK)
                fail("a stored value fails validation", err.message);
            if (def->type == PROP_STRING)
                continue;
            prop_format(def, v, false, text, sizeof text);
            static PropValue back; /* large; overwritten by every parse */
            if (prop_parse(def, text, &back, &err) != ISSIM_OK)
                fail("a formatted value does not parse back", text);
            if (!prop_value_equal(v, &back))
                fail("a formatted value parses back to another value", text);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    ThingDb *db = build();
    for (char *line = text; line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        bool running = line[0] == '!';
        char *path = line + running;
        char *eq = strchr(path, '=');
        if (eq) {
            *eq = '\0';
            IssimError err = {0};
            thingdb_set_text(db, path, eq + 1, running, &err);
        }
        line = next;
    }
    check(db);
    ThingDb *copy = thingdb_clone(db);
    if (copy) {
        check(copy);
        thingdb_destroy(copy);
    }
    thingdb_destroy(db);
    free(text);
    return 0;
}
