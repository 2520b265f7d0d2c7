/* docs/scene-format.md lists the contact module's pair properties (contact_pair_add_props) in
 * the same row format as the standard schema rows tests/test_thing.c checks: every property
 * added to a contact pair has its row, unit, range, default and description there. With
 * ISSIM_PRINT_DOC_ROWS=1 in the environment the expected rows are printed (to regenerate the
 * table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/contact.h"
#include "testutil.h"

/* "%g" without the exponent's plus sign and leading zero: 1e+09 -> 1e9 (as test_thing.c). */
static const char *doc_number(double x, char *buf, size_t size) {
    snprintf(buf, size, "%g", x);
    char *e = strchr(buf, 'e');
    if (e && e[1] == '+')
        memmove(e + 1, e + 2, strlen(e + 2) + 1);
    if (e && e[1] == '-' && e[2] == '0')
        memmove(e + 2, e + 3, strlen(e + 3) + 1);
    else if (e && e[1] == '0')
        memmove(e + 1, e + 2, strlen(e + 2) + 1);
    return buf;
}

static void doc_row(const PropDef *d, char *row, size_t size) {
    static const char *const types[] = {"real",   "int",  "bool", "enum",
                                        "string", "vec3", "quat", "points"};
    char type[512], range[128], def[512], lo[32], hi[32];
    if (d->type == PROP_ENUM) {
        size_t used = (size_t)snprintf(type, sizeof type, "enum: ");
        for (int k = 0; k < d->enum_count; k++)
            used += (size_t)snprintf(type + used, sizeof type - used, "%s`%s`", k ? ", " : "",
                                     d->enum_names[k]);
    } else {
        snprintf(type, sizeof type, "%s", types[d->type]);
    }
    if (d->min < d->max)
        snprintf(range, sizeof range, "%s%s, %s]", d->min_exclusive ? "(" : "[",
                 doc_number(d->min, lo, sizeof lo), doc_number(d->max, hi, sizeof hi));
    else
        snprintf(range, sizeof range, "—");
    prop_format(d, &d->default_value, true, def, sizeof def);
    snprintf(row, size, "| `%s` | %s | %s | %s | `%s` | %s | %s |", d->name, type,
             d->unit[0] ? d->unit : "—", range, def, d->mutability == PROP_LIVE ? "live" : "fixed",
             d->description);
}

static void test_pair_rows_documented(void **state) {
    ThingDb *db = thingdb_create();
    IssimError err = {0};
    ThingId pair = thingdb_add(db, "pair", THING_CONTACT_PAIR, thing_id_null(), &err);
    assert_int_equal(contact_pair_add_props(db, pair, &err), ISSIM_OK);
    const char *path = test_source_path("docs/scene-format.md");
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    bool print = getenv("ISSIM_PRINT_DOC_ROWS") != NULL;
    int checked = 0;
    for (int i = 0; i < thing_prop_count(db, pair); i++) {
        const PropDef *d = thing_prop_def(db, pair, i);
        if (strcmp(d->name, "material_a") == 0 || strcmp(d->name, "material_b") == 0)
            continue; /* the standard schema's rows, checked by test_thing */
        char row[1536];
        doc_row(d, row, sizeof row);
        if (print)
            printf("%s\n", row);
        else if (!strstr(text, row))
            fail_msg("docs/scene-format.md lacks the row of contact.%s; expected:\n%s", d->name,
                     row);
        checked++;
    }
    assert_true(checked >= 20);
    thingdb_destroy(db);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair_rows_documented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
