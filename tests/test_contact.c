/* Contact models: the spring/damper force law, its clamp option, its potential, the restitution
 * relations of 004 eqs. 4.89-4.93, the model table, the contact-pair properties, and
 * docs/contact-models.md's parameter tables against the models' declarations. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/io.h"
#include "testutil.h"

static ContactParams spring(double k, double b, bool clamp) {
    return (ContactParams){.model = CONTACT_MODEL_SPRING_DAMPER,
                           .stiffness = k,
                           .damping = b,
                           .clamp_attraction = clamp};
}

static void test_spring_damper_force(void **state) {
    const ContactModelClass *m = contact_model_class(CONTACT_MODEL_SPRING_DAMPER);
    assert_non_null(m);
    assert_string_equal(m->name, "spring_damper");
    ContactParams p = spring(1e5, 40.0, false);
    ContactHistory h = {0};
    ContactKinematics k = {.depth = 1e-3, .depth_rate = 0.5, .normal = {0, 0, 1}};
    assert_near(m->force(&p, &h, &k).normal, 1e5 * 1e-3 + 40.0 * 0.5, 1e-12);
    /* Leaving fast near the surface: the damper pulls (V1 applies it unclamped)... */
    k.depth = 1e-5;
    k.depth_rate = -2.0;
    assert_near(m->force(&p, &h, &k).normal, 1.0 - 80.0, 1e-12);
    /* ...and the clamp makes it zero instead. */
    p.clamp_attraction = true;
    assert_near(m->force(&p, &h, &k).normal, 0.0, 0.0);
    assert_near(m->potential(&p, &h, &k), 0.5 * 1e5 * 1e-10, 1e-20);
    assert_near(m->fixed_step(&p), 0.0, 0.0);
    assert_near(m->time_scale(&p, 4.0), sqrt(4.0 / 1e5), 1e-15);
}

/* b(r) and r(b) are inverse, and the closed forms match eq. 4.93 for n in parallel. */
static void test_restitution_relations(void **state) {
    for (double r = 0.05; r < 1.0; r += 0.05) {
        double b = contact_damping_for_restitution(1e6, 2.5, r);
        assert_true(b > 0);
        assert_near(contact_restitution_of(1e6, b, 2.5), r, 1e-12);
    }
    assert_near(contact_damping_for_restitution(1e6, 1.0, 1.0), 0.0, 0.0);
    double b = contact_damping_for_restitution(1e5, 1.0, 0.8);
    /* VALIDATION.md V2: two in parallel give 0.729 */
    assert_near(contact_restitution_of(2e5, 2 * b, 1.0), 0.7288, 1e-4);
    /* Undamped: half a period pi sqrt(m/k) */
    assert_near(contact_duration_of(1e4, 0.0, 1.0), M_PI / 100.0, 1e-15);
    /* Over-damped: no rebound, no finite half period */
    assert_near(contact_restitution_of(1e4, 1e3, 1.0), 0.0, 0.0);
    assert_true(isinf(contact_duration_of(1e4, 1e3, 1.0)));
}

static void test_model_table(void **state) {
    int count = 0;
    const char *const *names = contact_model_names(&count);
    assert_int_equal(count, CONTACT_MODEL_COUNT);
    for (int i = 0; i < count; i++) {
        ContactModelKind kind;
        assert_true(contact_model_parse(names[i], &kind));
        assert_int_equal(kind, i);
        const ContactModelClass *m = contact_model_class(kind);
        assert_non_null(m->force);
        assert_non_null(m->begin);
        assert_non_null(m->commit);
        assert_non_null(m->fixed_step);
        assert_non_null(m->time_scale);
        assert_non_null(m->potential);
        /* every model cites its seed: 000 (Ullrich) or 004 (Siira) */
        assert_true(strstr(m->source, "004") != NULL || strstr(m->source, "000") != NULL);
    }
    ContactModelKind kind;
    assert_false(contact_model_parse("hertzz", &kind));
    assert_null(contact_model_class(CONTACT_MODEL_COUNT));
}

static void test_pair_properties(void **state) {
    ThingDb *db = thingdb_create();
    IssimError err = {0};
    ThingId pair = thingdb_add(db, "bar_floor", THING_CONTACT_PAIR, thing_id_null(), &err);
    assert_int_equal(contact_pair_add_props(db, pair, &err), ISSIM_OK);
    assert_int_equal(thingdb_set_text(db, "bar_floor.stiffness", "2e5", false, &err), ISSIM_OK);
    assert_int_not_equal(thingdb_set_text(db, "bar_floor.stiffness", "-1", false, &err), ISSIM_OK);
    assert_non_null(strstr(err.message, "N/m"));
    /* A stiffness that holds nothing up is refused with the range (issue 12). */
    assert_int_not_equal(thingdb_set_text(db, "bar_floor.stiffness", "1e-300", true, &err),
                         ISSIM_OK);
    assert_non_null(strstr(err.message, "must be >= 0.001"));
    assert_int_not_equal(thingdb_set_text(db, "bar_floor.model", "hertzz", false, &err), ISSIM_OK);
    ContactParams p;
    assert_int_equal(contact_params_from_thing(db, pair, 2.0, &p, &err), ISSIM_OK);
    assert_near(p.stiffness, 2e5, 0.0);
    assert_near(p.damping, contact_damping_for_restitution(2e5, 2.0, 0.8), 1e-12);
    assert_int_equal(thingdb_set_text(db, "bar_floor.damping_from", "value", false, &err),
                     ISSIM_OK);
    assert_int_equal(thingdb_set_text(db, "bar_floor.damping", "12.5", false, &err), ISSIM_OK);
    assert_int_equal(contact_params_from_thing(db, pair, 2.0, &p, &err), ISSIM_OK);
    assert_near(p.damping, 12.5, 0.0);
    /* Adding the properties twice is refused (names are unique on a thing). */
    assert_int_not_equal(contact_pair_add_props(db, pair, &err), ISSIM_OK);
    thingdb_destroy(db);
}

/* The model is a live property: switched before the impact, the drop bounces with the new law;
 * an edit that makes no sense (tilt >= r^2 for the C0 variant) is refused with a message and
 * the last good value stays. */
static void test_live_model_switch(void **state) {
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_equal(scene_load_file(test_source_path("scenes/point_drop.lua"), NULL, &db, &err),
                     ISSIM_OK);
    EngineOptions o = engine_options_default();
    Engine *e = engine_create(db, &o, &err);
    assert_non_null(e);
    assert_int_equal(engine_advance(e, 0.1, &err), ISSIM_OK);
    assert_int_equal(engine_apply_edit(e, "bar_floor.model", "internal_friction_c0", &err),
                     ISSIM_OK);
    assert_int_equal(engine_apply_edit(e, "bar_floor.tilt", "0.7", &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "tilt"));
    assert_near(thing_real(engine_thingdb(e), thingdb_find(engine_thingdb(e), "bar_floor"), "tilt"),
                0.1, 0.0);
    assert_int_equal(engine_apply_edit(e, "bar_floor.model", "internal_friction", &err), ISSIM_OK);
    /* 0.5 m drop: impact at 0.319 s at 3.13 m/s; after it, the bar rises at r v */
    assert_int_equal(engine_advance(e, 0.33, &err), ISSIM_OK);
    double v_out = engine_body_state(e, engine_body_id(e, 0)).vel.z + 9.81 * (0.33 - 0.3193);
    double v_in = sqrt(2 * 9.81 * 0.5);
    assert_near(v_out / v_in, 0.8, 2e-3);
    engine_destroy(e);
    thingdb_destroy(db);
}

/* docs/contact-models.md, whole (static storage). */
static const char *contact_models_text(void) {
    const char *path = test_source_path("docs/contact-models.md");
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    static char text[1 << 18];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* The "## " section whose heading names `model` in backquotes, up to the next one. */
static const char *model_section(const char *text, const char *model, size_t *length) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "`%s`", model);
    for (const char *at = strstr(text, "\n## "); at; at = strstr(at + 1, "\n## ")) {
        const char *eol = strchr(at + 1, '\n');
        const char *hit = strstr(at, quoted);
        if (hit && eol && hit < eol) {
            const char *next = strstr(eol, "\n## ");
            *length = next ? (size_t)(next - at) : strlen(at);
            return at;
        }
    }
    fail_msg("docs/contact-models.md has no section headed with %s", quoted);
    return NULL;
}

typedef struct DocParam {
    char name[64];
    char unit[32];
} DocParam;

/* The parameters of a section's "| parameter | unit |" table: every backquoted name of a row's
 * first cell ("`radius_a`, `_b`" is radius_a and radius_b) with the row's unit ("—": none). */
static int doc_params(const char *section, size_t length, DocParam *out, int max) {
    const char *table = strstr(section, "| parameter | unit |");
    if (!table || table >= section + length)
        return 0;
    int n = 0;
    for (const char *row = strchr(table, '\n') + 1; *row == '|'; row = strchr(row, '\n') + 1) {
        const char *cell_end = strchr(row + 1, '|');
        const char *unit_end = strchr(cell_end + 1, '|');
        char unit[32];
        snprintf(unit, sizeof unit, "%.*s", (int)(unit_end - cell_end - 1), cell_end + 1);
        char *u = unit;
        while (*u == ' ')
            u++;
        u[strcspn(u, " ")] = '\0';
        char previous[64] = "";
        for (const char *q = strchr(row, '`'); q && q < cell_end; q = strchr(q + 1, '`')) {
            const char *close = strchr(q + 1, '`');
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(close - q - 1), q + 1);
            if (name[0] == '_') { /* "_b" after "radius_a" */
                char *tail = strrchr(previous, '_');
                if (tail)
                    snprintf(tail, sizeof previous - (size_t)(tail - previous), "%s", name);
                snprintf(name, sizeof name, "%s", previous);
            }
            assert_true(n < max);
            snprintf(out[n].name, sizeof out[n].name, "%s", name);
            snprintf(out[n].unit, sizeof out[n].unit, "%s", strcmp(u, "—") == 0 ? "" : u);
            snprintf(previous, sizeof previous, "%s", name);
            n++;
            q = close;
        }
    }
    return n;
}

/* Each built-in model's section of docs/contact-models.md lists the parameters it declares, with
 * their units, and names no parameter that is not declared (the model's own or the common ones). */
static void test_docs_model_tables(void **state) {
    (void)state;
    const char *text = contact_models_text();
    for (int m = 0; m < CONTACT_MODEL_COUNT; m++) {
        const ContactModelClass *cls = contact_model_class((ContactModelKind)m);
        size_t length = 0;
        const char *section = model_section(text, cls->name, &length);
        DocParam listed[32];
        int n = doc_params(section, length, listed, 32);
        for (int i = 0; i < n; i++) {
            const ContactParamDecl *d = contact_param_decl(listed[i].name);
            if (!d)
                fail_msg("docs/contact-models.md, %s: `%s` is not a declared parameter", cls->name,
                         listed[i].name);
            for (int j = 0; j < cls->param_count; j++)
                if (cls->params[j] == d && strcmp(d->prop.unit, listed[i].unit) != 0)
                    fail_msg("docs/contact-models.md, %s: `%s` in '%s', declared in '%s'",
                             cls->name, listed[i].name, listed[i].unit, d->prop.unit);
        }
        for (int j = 0; j < cls->param_count; j++) {
            bool found = false;
            for (int i = 0; i < n; i++)
                found = found || strcmp(listed[i].name, cls->params[j]->prop.name) == 0;
            if (!found)
                fail_msg("docs/contact-models.md, %s: its parameter `%s` has no row", cls->name,
                         cls->params[j]->prop.name);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spring_damper_force), cmocka_unit_test(test_restitution_relations),
        cmocka_unit_test(test_model_table),         cmocka_unit_test(test_pair_properties),
        cmocka_unit_test(test_live_model_switch),   cmocka_unit_test(test_docs_model_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
