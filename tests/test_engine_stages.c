/* The engine's extension points (docs/architecture.md, "the staged step"): a registered model
 * with a long memory (model-owned state) and a fixed step, its state checkpointed and restored
 * bit-identically on a rewind, fixed steps only while such a contact is active, and the
 * complementarity resolver beside the force laws in one scene. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/engine_resolver.h"
#include "issim/io.h"
#include "testutil.h"

/* ===== A model with memory: f = k g + (k / 2) * mean of the last MEMORY_SAMPLES depths =====
 *
 * The mean over a window of MEMORY_SAMPLES committed depths makes the force depend on the whole
 * recent history (a crude convolution, the shape of the contact map's), so a rewind that lost
 * the history would change the trajectory. The state carries a tag checked at every commit: a
 * block handed to two contacts, or moved without its bytes, is caught. */

enum { MEMORY_SAMPLES = 2048 };
#define MEMORY_STEP 1e-5

typedef struct MemoryState {
    double tag; /* the onset time, written at begin */
    int count, cursor;
    double sum;
    double samples[];
} MemoryState;

static int tag_failures;

static double memory_normal(const ContactParams *p, const ContactHistory *h,
                            const ContactKinematics *k) {
    const MemoryState *m = h->state;
    double mean = m && m->count > 0 ? m->sum / m->count : 0.0;
    return p->stiffness * k->depth + 0.5 * p->stiffness * mean + p->damping * k->depth_rate;
}

static ContactForce memory_force(const ContactParams *p, const ContactHistory *h,
                                 const ContactKinematics *k) {
    return (ContactForce){.normal = memory_normal(p, h, k)};
}

static size_t memory_size(const ContactParams *p, const ContactKinematics *k) {
    (void)p;
    (void)k;
    return sizeof(MemoryState) + sizeof(double) * MEMORY_SAMPLES;
}

static void memory_begin(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    (void)p;
    h->t_begin = k->t;
    MemoryState *m = h->state;
    assert_non_null(m);
    assert_true(h->state_bytes >= memory_size(p, k));
    assert_int_equal(m->count, 0); /* handed over zeroed */
    m->tag = k->t;
}

static int memory_commit(const ContactParams *p, ContactHistory *h, const ContactKinematics *k) {
    (void)p;
    MemoryState *m = h->state;
    if (m->tag != h->t_begin)
        tag_failures++;
    if (m->count == MEMORY_SAMPLES)
        m->sum -= m->samples[m->cursor];
    else
        m->count++;
    m->samples[m->cursor] = k->depth;
    m->sum += k->depth;
    m->cursor = (m->cursor + 1) % MEMORY_SAMPLES;
    /* The force ends when it would pull: the model ends the contact (000 3.6.1's rule). */
    return memory_normal(p, h, k) < 0.0 ? CONTACT_EVENT_SEPARATION : CONTACT_EVENT_NONE;
}

static double memory_fixed_step(const ContactParams *p) {
    (void)p;
    return MEMORY_STEP;
}

static double memory_time_scale(const ContactParams *p, double m) {
    return sqrt(m / p->stiffness);
}

static double memory_potential(const ContactParams *p, const ContactHistory *h,
                               const ContactKinematics *k) {
    (void)h;
    return k->depth > 0.0 ? 0.5 * p->stiffness * k->depth * k->depth : 0.0;
}

static const ContactModelClass memory_class = {
    .name = "test_memory",
    .description = "spring plus the mean of the last 2048 depths (test of model-owned state)",
    .source = "tests/test_engine_stages.c",
    .force = memory_force,
    .begin = memory_begin,
    .commit = memory_commit,
    .fixed_step = memory_fixed_step,
    .time_scale = memory_time_scale,
    .potential = memory_potential,
    .state_size = memory_size,
};

static int register_memory_model(void **state) {
    (void)state;
    ContactModelKind kind;
    IssimError err = {0};
    assert_int_equal(contact_model_register(&memory_class, &kind, &err), ISSIM_OK);
    assert_true(kind >= CONTACT_MODEL_COUNT);
    return 0;
}

/* A point mass (one contact vertex) dropped 5 cm onto a plane with the memory model. */
static const char *point_drop_source(const char *integrator) {
    static char text[2048];
    snprintf(text, sizeof text,
             "return { name = 'memory_drop',\n"
             "  universe = { gravity = {0, 0, -9.81}, planar = true, integrator = '%s',\n"
             "               dt = 1e-3, rtol = 1e-10, atol = 1e-12 },\n"
             "  things = {\n"
             "    { name = 'ball', kind = 'body', mass = 1, inertia = {1e-3, 1e-3, 1e-3},\n"
             "      pos = {0, 0, 0.05}, vertices = {{0, 0, 0}}, material = 'ball' },\n"
             "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},\n"
             "      offset = 0, material = 'floor' } },\n"
             "  contacts = { { name = 'ball_floor', materials = {'ball', 'floor'},\n"
             "    model = 'test_memory', stiffness = 1e5, damping_from = 'value',\n"
             "    damping = 20 } } }\n",
             integrator);
    return text;
}

static Engine *engine_from_source(const char *source) {
    EngineOptions o = engine_options_default();
    /* the stages are checked on every advance: a settled complementarity island would sleep
     * (test_complementarity_sleep) */
    o.sleep_disabled = true;
    return test_engine_from_source_with("stages.lua", source, &o);
}

/* ===== Fixed steps only while the contact is active ===== */

static void test_fixed_step_only_during_contact(void **state) {
    (void)state;
    Engine *e = engine_from_source(point_drop_source("bdf"));
    IssimError err = {0};
    /* Flight: 0.1 s to fall 5 cm. BDF takes a few hundred steps at most. */
    while (engine_time(e) < 0.09)
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
    EngineStats flight = engine_stats(e);
    assert_int_equal(flight.fixed_steps, 0);
    assert_true(flight.steps < 500);
    /* Through the impact the contact asks for 1e-5 s steps; after it, BDF again. */
    double t_contact = -1.0, t_end = -1.0;
    while (engine_time(e) < 0.3) {
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
        bool touching = engine_active_contact_count(e) > 0;
        if (touching && t_contact < 0)
            t_contact = engine_time(e);
        if (!touching && t_contact >= 0 && t_end < 0)
            t_end = engine_time(e);
    }
    EngineStats after = engine_stats(e);
    assert_true(t_contact > 0 && t_end > t_contact);
    /* The contact lasts about pi sqrt(m/k) = 10 ms: about 1,000 fixed steps. */
    double fixed_expected = (t_end - t_contact) / MEMORY_STEP;
    printf("memory drop: contact %.4f-%.4f s, %llu fixed steps (about %.0f expected), %llu "
           "steps in all\n",
           t_contact, t_end, (unsigned long long)after.fixed_steps, fixed_expected,
           (unsigned long long)after.steps);
    assert_true(after.fixed_steps > 0.5 * fixed_expected);
    assert_true(after.fixed_steps < 1.5 * fixed_expected + 2000);
    /* RK4 at 1e-5 s over the whole 0.3 s would take 30,000 steps. */
    assert_true(after.steps < 0.5 * 0.3 / MEMORY_STEP);
    assert_int_equal(tag_failures, 0);
    engine_destroy(e);
}

/* ===== Rewind mid-impact: bit-identical with the checkpoint, different without ===== */

typedef struct Trajectory {
    int count;
    double t[4096];
    double z[4096], vz[4096];
} Trajectory;

static void record(Engine *e, Trajectory *tr) {
    EngineBodyState s = engine_body_state(e, engine_body_id(e, 0));
    tr->t[tr->count] = engine_time(e);
    tr->z[tr->count] = s.pos.z;
    tr->vz[tr->count] = s.vel.z;
    tr->count++;
}

/* Steps to `until`, checkpointing every frame as the interactive engine does. */
static void run_frames(Engine *e, Trajectory *tr, double until) {
    IssimError err = {0};
    while (engine_time(e) < until - 1e-12) {
        if (engine_step(e, &err) != ISSIM_OK)
            fail_msg("step: %s", err.message);
        engine_checkpoint(e);
        record(e, tr);
    }
}

/* Key checkpoints every this many frames in rewind_and_compare (0: the engine's choice). */
static int rewind_keys;

/* Runs e to `until` checkpointing every frame into straight, then restores the frame `late`
 * steps after the first whose height falls below `below` and runs again into rewound (the frames
 * up to it copied). restart_first: the checkpoints are dropped before the restore (checkpoints
 * off and on again). Returns how many frames differ bitwise. */
static int rewind_and_compare(Engine *e, double until, double below, int late, bool restart_first,
                              Trajectory *straight, Trajectory *rewound, double *t_restored) {
    IssimError err = {0};
    int keys = e ? 0 : 0;
    (void)keys;
    assert_int_equal(engine_enable_checkpoints(e, 4096, 64 << 20, &err), ISSIM_OK);
    engine_set_checkpoint_keys(e, rewind_keys);
    straight->count = rewound->count = 0;
    engine_checkpoint(e);
    record(e, straight);
    run_frames(e, straight, until);
    int k = 0;
    while (k < straight->count && !(straight->z[k] < below))
        k++;
    k += late;
    assert_true(k < straight->count);
    if (restart_first) /* an empty ring: the restore restarts the histories */
        assert_int_equal(engine_enable_checkpoints(e, 4096, 64 << 20, &err), ISSIM_OK);
    else
        assert_true(engine_has_checkpoint(e, straight->t[k]));
    /* The frame's values as the registry holds them (used when no checkpoint exists). */
    double *values = calloc((size_t)engine_var_count(e), sizeof(double));
    double row[13] = {0, 0, straight->z[k], 1, 0, 0, 0, 0, 0, straight->vz[k], 0, 0, 0};
    memcpy(values, row, sizeof row);
    assert_int_equal(engine_restore_vars(e, straight->t[k], values, &err), ISSIM_OK);
    free(values);
    for (int i = 0; i <= k; i++) {
        rewound->t[rewound->count] = straight->t[i];
        rewound->z[rewound->count] = straight->z[i];
        rewound->vz[rewound->count++] = straight->vz[i];
    }
    run_frames(e, rewound, until);
    assert_int_equal(rewound->count, straight->count);
    int differing = 0;
    for (int i = 0; i < straight->count; i++)
        differing += memcmp(&straight->z[i], &rewound->z[i], sizeof(double)) != 0 ||
                     memcmp(&straight->vz[i], &rewound->vz[i], sizeof(double)) != 0;
    *t_restored = straight->t[k];
    return differing;
}

static void rewind_case(const char *integrator, bool keep_checkpoint, int keys) {
    rewind_keys = keys;
    Engine *e = engine_from_source(point_drop_source(integrator));
    static Trajectory straight, rewound;
    double t_restored;
    /* The frame 3 ms into the impact. */
    int differing =
        rewind_and_compare(e, 0.2, 0.0, 3, !keep_checkpoint, &straight, &rewound, &t_restored);
    EngineStats st = engine_stats(e);
    assert_int_equal(st.restores, keep_checkpoint ? 1 : 0);
    assert_int_equal(st.restarts, keep_checkpoint ? 0 : 1);
    printf("rewind %s (%s, keys every %d): %d of %d frames differ after restoring t = %.4f s "
           "(%llu frames replayed)\n",
           integrator, keep_checkpoint ? "checkpoint" : "no checkpoint", keys, differing,
           straight.count, t_restored, (unsigned long long)st.replayed_frames);
    if (keys > 1 && keep_checkpoint)
        assert_true(st.replayed_frames > 0); /* the frame was between keys */
    if (keep_checkpoint)
        assert_int_equal(differing, 0);
    else
        assert_true(differing > 0); /* the lost history shows: the test can fail */
    assert_int_equal(tag_failures, 0);
    engine_destroy(e);
}

static void test_rewind_mid_impact_bit_identical_rk4(void **state) {
    (void)state;
    rewind_case("rk4", true, 1);
}

static void test_rewind_between_keys_replays_bit_identical(void **state) {
    (void)state;
    rewind_case("rk4", true, 10); /* restored from the key before and replayed */
}

/* A rewind across an edit to a frame between keys (what undoing a branch's edit does): the
 * frames after the key were stepped under the old gravity, so a replay under the edited one would
 * give a state never published; the restore must give the frame as published (exactly, from the
 * key's replay under its own model, or restarted from the frame's values). */
static void test_rewind_across_an_edit_restores_the_published_frame(void **state) {
    (void)state;
    Engine *e = engine_from_source(point_drop_source("rk4"));
    IssimError err = {0};
    assert_int_equal(engine_enable_checkpoints(e, 4096, 64 << 20, &err), ISSIM_OK);
    engine_set_checkpoint_keys(e, 4);
    int n = engine_var_count(e), z = engine_var_find(e, "ball.pos.z");
    assert_true(z >= 0);
    enum { FRAMES = 12, TARGET = 6, EDIT_AT = 10 }; /* keys at 0, 4, 8: frame 6 replays */
    double t[FRAMES], published[FRAMES][64];
    assert_true(n <= 64);
    for (int i = 0; i < FRAMES; i++) {
        if (i == EDIT_AT)
            assert_int_equal(engine_apply_edit(e, "universe.gravity", "0 0 -100", &err), ISSIM_OK);
        assert_int_equal(engine_step(e, &err), ISSIM_OK);
        engine_checkpoint(e);
        t[i] = engine_time(e);
        engine_write_vars(e, published[i]);
    }
    assert_int_equal(engine_restore_vars(e, t[TARGET], published[TARGET], &err), ISSIM_OK);
    double now[64];
    engine_write_vars(e, now);
    assert_true(engine_time(e) == t[TARGET]);
    /* one frame of -100 m/s^2 instead of -9.81 would move it by 0.5 * 90 * (1e-3)^2 = 45 um */
    assert_near(now[z], published[TARGET][z], 1e-12);
    engine_destroy(e);
}

static void test_rewind_mid_impact_bit_identical_bdf(void **state) {
    (void)state;
    /* Mid-impact the fixed steps run; CVODE restarts at the contact's end in both runs. A replay
     * through BDF flight would restart CVODE where the original did not (equal to its tolerance,
     * not bitwise): keys every frame here. */
    rewind_case("bdf", true, 1);
}

static void test_rewind_without_checkpoint_restarts_history(void **state) {
    (void)state;
    rewind_case("rk4", false, 1);
}

/* ===== Shaped bodies: a sphere with friction sliding into a plane, rewound mid-contact ===== */

static const char *sphere_slide_source =
    "return { name = 'sphere_slide',\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'rk4', dt = 2e-4 },\n"
    "  things = {\n"
    "    { name = 'ball', kind = 'body', shape = 'sphere', radius = 0.05, mass = 1,\n"
    "      inertia = {1e-3, 1e-3, 1e-3}, pos = {0, 0, 0.07}, vel = {1, 0, 0},\n"
    "      material = 'ball' },\n"
    "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},\n"
    "      offset = 0, material = 'floor' } },\n"
    "  contacts = { { name = 'ball_floor', materials = {'ball', 'floor'},\n"
    "    model = 'test_memory', stiffness = 1e5, damping_from = 'value', damping = 50,\n"
    "    friction_static = 0.5, friction_kinetic = 0.4 } } }\n";

static void test_rewind_shaped_contact_keeps_ids_and_memory(void **state) {
    (void)state;
    rewind_keys = 7; /* restored from a key and replayed through the sliding contact */
    Engine *e = engine_from_source(sphere_slide_source);
    static Trajectory a, b;
    double t_restored;
    /* 5 frames after the ball's centre drops below its radius: mid-contact, sliding. */
    int differing = rewind_and_compare(e, 0.15, 0.05, 5, false, &a, &b, &t_restored);
    printf("shaped rewind (keys every 7): %d of %d frames differ after restoring t = %.4f s "
           "(%llu frames replayed)\n",
           differing, a.count, t_restored, (unsigned long long)engine_stats(e).replayed_frames);
    assert_int_equal(engine_stats(e).restores, 1);
    assert_int_equal(differing, 0);
    assert_int_equal(tag_failures, 0);
    engine_destroy(e);
}

/* ===== Complementarity beside force laws ===== */

/* A box on the plane through the complementarity resolver, and a sphere through a penalty law,
 * in one scene. */
static const char *mixed_source =
    "return { name = 'mixed',\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'bdf', dt = 1e-3,\n"
    "               rtol = 1e-8, atol = 1e-10 },\n"
    "  things = {\n"
    "    { name = 'box', kind = 'body', shape = 'box', half_extents = {0.05, 0.05, 0.05},\n"
    "      mass = 2, inertia = {3.333e-3, 3.333e-3, 3.333e-3}, pos = {0, 0, 0.06},\n"
    "      material = 'box' },\n"
    "    { name = 'ball', kind = 'body', shape = 'sphere', radius = 0.05, mass = 1,\n"
    "      inertia = {1e-3, 1e-3, 1e-3}, pos = {1, 0, 0.3}, material = 'ball' },\n"
    "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},\n"
    "      offset = 0, material = 'floor' } },\n"
    "  contacts = {\n"
    "    { name = 'box_floor', materials = {'box', 'floor'}, resolver = 'complementarity' },\n"
    "    { name = 'ball_floor', materials = {'ball', 'floor'}, model = 'spring_damper',\n"
    "      stiffness = 1e5, restitution = 0.5 } } }\n";

/* The RESOLVE stage takes its scratch from the per-step arena: once the box rests on the floor
 * (the island no longer grows) no step takes memory, however many steps run. */
static void test_resolve_scratch_settles(void **state) {
    (void)state;
    Engine *e = engine_from_source(mixed_source);
    IssimError err = {0};
    for (int i = 1; i <= 300; i++) /* lands within 50 ms; its four corners are rows by then */
        assert_int_equal(engine_advance(e, i * 1e-3, &err), ISSIM_OK);
    EngineStats warm = engine_stats(e);
    assert_true(warm.scratch_grows >= 1);
    for (int i = 301; i <= 1000; i++)
        assert_int_equal(engine_advance(e, i * 1e-3, &err), ISSIM_OK);
    EngineStats st = engine_stats(e);
    assert_true(st.complementarity_steps >= warm.complementarity_steps + 700);
    assert_int_equal(st.scratch_grows, warm.scratch_grows);
    engine_destroy(e);
}

static void test_mixed_resolvers_reach_the_same_instants(void **state) {
    (void)state;
    Engine *e = engine_from_source(mixed_source);
    IssimError err = {0};
    double ball_lowest = 1.0, box_lowest_gap = 1.0;
    for (int i = 1; i <= 1500; i++) {
        double target = i * 1e-3;
        assert_int_equal(engine_advance(e, target, &err), ISSIM_OK);
        assert_true(engine_time(e) == target); /* both kinds reach the same output instant */
        EngineBodyState box = engine_body_state(e, engine_body_id(e, 0)),
                        ball = engine_body_state(e, engine_body_id(e, 1));
        /* the lowest corner of the (unrotated) box */
        box_lowest_gap = fmin(box_lowest_gap, box.pos.z - 0.05);
        ball_lowest = fmin(ball_lowest, ball.pos.z - 0.05);
    }
    EngineStats st = engine_stats(e);
    assert_true(st.complementarity_steps >= 1000);
    assert_int_equal(st.islands_by_resolver[CONTACT_RESOLVER_COMPLEMENTARITY], 1);
    /* The box rests on its four corners, never deeper than round-off; the reported normal
     * forces hold its weight. */
    EngineBodyState box = engine_body_state(e, engine_body_id(e, 0));
    ContactReport r[16];
    int n = engine_contact_reports(e, r, 16);
    double box_load = 0.0;
    for (int i = 0; i < n; i++)
        if (r[i].body_a == engine_body_id_pack(engine_body_id(e, 0)))
            box_load += r[i].normal_force;
    printf("mixed: box z %.9f (lowest gap %.3g m), load %.9f N for m g = %.9f N; ball lowest "
           "gap %.3g m (penalty)\n",
           box.pos.z, box_lowest_gap, box_load, 2 * 9.81, ball_lowest);
    assert_true(box_lowest_gap > -1e-9);
    assert_near(box.pos.z, 0.05, 1e-6);
    assert_near(vec3_norm(box.vel), 0.0, 1e-9);
    assert_near(box_load, 2 * 9.81, 1e-6 * 2 * 9.81);
    for (int i = 0; i < n; i++)
        if (r[i].body_a == engine_body_id_pack(engine_body_id(e, 0)))
            assert_true(r[i].normal_force >= 0.0);
    /* The penalty ball penetrated (a force law needs depth) and bounced back up. */
    assert_true(ball_lowest < -1e-5);
    engine_destroy(e);
}

static IssimStatus failing_solve(void *user, const EngineIslandSystem *sys,
                                 EngineIslandSolution *out, IssimError *err) {
    (void)user;
    (void)sys;
    (void)out;
    return issim_error_set(err, ISSIM_ERR_NUMERIC, "ray termination (test)");
}

static void test_solver_failure_keeps_last_good_state(void **state) {
    (void)state;
    Engine *e = engine_from_source(mixed_source);
    IssimError err = {0};
    for (int i = 1; i <= 200; i++)
        assert_int_equal(engine_advance(e, i * 1e-3, &err), ISSIM_OK);
    static const EngineComplementaritySolver failing = {.name = "failing", .solve = failing_solve};
    engine_set_complementarity_solver(e, &failing, NULL);
    EngineBodyState before = engine_body_state(e, engine_body_id(e, 0));
    double t = engine_time(e);
    assert_int_equal(engine_advance(e, t + 1e-3, &err), ISSIM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "failing"));
    assert_non_null(strstr(err.message, "box"));
    assert_non_null(strstr(err.message, "ray termination"));
    EngineBodyState after = engine_body_state(e, engine_body_id(e, 0));
    assert_true(engine_time(e) == t);
    assert_memory_equal(&before, &after, sizeof before);
    engine_set_complementarity_solver(e, NULL, NULL);
    assert_int_equal(engine_advance(e, t + 1e-3, &err), ISSIM_OK);
    engine_destroy(e);
}

static void test_stage_profile_names(void **state) {
    (void)state;
    assert_string_equal(engine_stage_name(ENGINE_STAGE_COLLIDE), "collide");
    assert_string_equal(engine_stage_name(ENGINE_STAGE_COMMIT), "commit");
    /* every stage named, no two alike: the profile's columns say which stage they are */
    for (int a = 0; a < ENGINE_STAGE_COUNT; a++) {
        assert_string_not_equal(engine_stage_name((EngineStage)a), "?");
        for (int b = a + 1; b < ENGINE_STAGE_COUNT; b++)
            assert_string_not_equal(engine_stage_name((EngineStage)a),
                                    engine_stage_name((EngineStage)b));
    }
    assert_string_equal(engine_stage_name(ENGINE_STAGE_REDUCE), "reduce");
    ThingDb *db = NULL;
    IssimError err = {0};
    assert_int_equal(
        scene_load_string("m.lua", mixed_source, strlen(mixed_source), NULL, &db, &err), ISSIM_OK);
    EngineOptions o = engine_options_default();
    o.profile_stages = true;
    Engine *e = engine_create(db, &o, &err);
    thingdb_destroy(db);
    assert_non_null(e);
    for (int i = 1; i <= 50; i++)
        assert_int_equal(engine_advance(e, i * 1e-3, &err), ISSIM_OK);
    EngineStats st = engine_stats(e);
    for (int s = 0; s < ENGINE_STAGE_COUNT; s++)
        assert_true(st.stage_seconds[s] >= 0.0);
    assert_true(st.stage_seconds[ENGINE_STAGE_RESOLVE] > 0.0);
    assert_true(st.stage_seconds[ENGINE_STAGE_INTEGRATE] > 0.0);
    engine_destroy(e);
}

static void test_register_rejects_bad_classes(void **state) {
    (void)state;
    ContactModelKind kind;
    IssimError err = {0};
    ContactModelClass broken = memory_class;
    broken.force = NULL;
    assert_int_equal(contact_model_register(&broken, &kind, &err), ISSIM_ERR_INVALID);
    ContactModelClass clash = memory_class;
    clash.name = "spring_damper";
    assert_int_equal(contact_model_register(&clash, &kind, &err), ISSIM_ERR_INVALID);
    assert_non_null(strstr(err.message, "spring_damper"));
    /* the same class again: its kind */
    ContactModelKind again;
    assert_int_equal(contact_model_register(&memory_class, &again, &err), ISSIM_OK);
    assert_string_equal(contact_model_class(again)->name, "test_memory");
}

/* ===== Reduced pairs: the welded reference model ===== */

/* A box settles on the floor through the force law; once still it enters the reduced form (held
 * by the obstacle), stays exactly put, and leaves when a force pulls it off. */
static const char *held_box_source =
    "return { name = 'held_box',\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'bdf', dt = 1e-3,\n"
    "               rtol = 1e-9, atol = 1e-11 },\n"
    "  things = {\n"
    "    { name = 'box', kind = 'body', shape = 'box', half_extents = {0.05, 0.05, 0.05},\n"
    "      mass = 1, inertia = {1.667e-3, 1.667e-3, 1.667e-3}, pos = {0, 0, 0.052},\n"
    "      material = 'box' },\n"
    "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},\n"
    "      offset = 0, material = 'floor' } },\n"
    "  contacts = { { name = 'box_floor', materials = {'box', 'floor'}, resolver = 'reduced',\n"
    "    model = 'spring_damper', stiffness = 1e5, restitution = 0.2,\n"
    "    velocity_tolerance = 1e-3 } } }\n";

static void test_reduced_pair_holds_and_releases(void **state) {
    (void)state;
    Engine *e = engine_from_source(held_box_source);
    IssimError err = {0};
    EngineBodyId box = engine_body_id(e, 0);
    int i = 0;
    while (engine_stats(e).reduced_entries == 0 && i < 3000)
        assert_int_equal(engine_advance(e, ++i * 1e-3, &err), ISSIM_OK);
    assert_int_equal(engine_stats(e).reduced_entries, 1);
    assert_int_equal(engine_reduced_pair_count(e), 1);
    double t_entry = engine_time(e);
    EngineBodyState held = engine_body_state(e, box);
    for (int k = 0; k < 500; k++) {
        assert_int_equal(engine_advance(e, ++i * 1e-3, &err), ISSIM_OK);
        EngineBodyState now = engine_body_state(e, box);
        assert_memory_equal(&now.pos, &held.pos, sizeof held.pos); /* exactly held */
    }
    /* 30 N up on 1 kg: the floor would have to pull, so the pair separates. */
    assert_int_equal(engine_apply_edit(e, "box.force", "0 0 30", &err), ISSIM_OK);
    assert_int_equal(engine_advance(e, ++i * 1e-3, &err), ISSIM_OK);
    assert_int_equal(engine_stats(e).reduced_exits, 1);
    assert_int_equal(engine_reduced_pair_count(e), 0);
    for (int k = 0; k < 100; k++)
        assert_int_equal(engine_advance(e, ++i * 1e-3, &err), ISSIM_OK);
    EngineBodyState up = engine_body_state(e, box);
    printf("held box: entered at t = %.3f s, held for 0.5 s at z = %.9f; released, z = %.6f "
           "after 0.1 s (free: %.6f)\n",
           t_entry, held.pos.z, up.pos.z, held.pos.z + 0.5 * (30 - 9.81) * 0.1 * 0.1);
    /* Released from rest with a = 20.19 m/s^2: 0.101 m in 0.1 s (the contact lets go within a
     * step, so to 2 mm). */
    assert_near(up.pos.z - held.pos.z, 0.5 * (30 - 9.81) * 0.01, 2e-3);
    engine_destroy(e);
}

/* Box A welded onto box B, B on the floor through a force law: the composite conserves momentum
 * at the entry, rests on the floor as one body, and A leaves when pulled up harder than its
 * weight (the internal force would have to pull). */
static const char *stack_source =
    "return { name = 'stack',\n"
    "  universe = { gravity = {0, 0, -9.81}, integrator = 'bdf', dt = 1e-3,\n"
    "               rtol = 1e-9, atol = 1e-11 },\n"
    "  things = {\n"
    "    { name = 'top', kind = 'body', shape = 'box', half_extents = {0.04, 0.04, 0.04},\n"
    "      mass = 0.5, inertia = {5.33e-4, 5.33e-4, 5.33e-4}, pos = {0.01, 0, 0.141},\n"
    "      material = 'top' },\n"
    "    { name = 'bottom', kind = 'body', shape = 'box', half_extents = {0.05, 0.05, 0.05},\n"
    "      mass = 1, inertia = {1.667e-3, 1.667e-3, 1.667e-3}, pos = {0, 0, 0.0501},\n"
    "      material = 'bottom' },\n"
    "    { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},\n"
    "      offset = 0, material = 'floor' } },\n"
    "  contacts = {\n"
    "    { name = 'weld', materials = {'top', 'bottom'}, resolver = 'reduced',\n"
    "      model = 'spring_damper', stiffness = 1e5, restitution = 0.2,\n"
    "      velocity_tolerance = 2e-3 },\n"
    "    { name = 'ground', materials = {'bottom', 'floor'}, model = 'spring_damper',\n"
    "      stiffness = 1e5, restitution = 0.2 } } }\n";

static double momentum_z(Engine *e) {
    double p = 0.0;
    for (int b = 0; b < 2; b++)
        p += engine_body_mass(e, engine_body_id(e, b)) *
             engine_body_state(e, engine_body_id(e, b)).vel.z;
    return p;
}

static void test_reduced_pair_of_two_bodies(void **state) {
    (void)state;
    Engine *e = engine_from_source(stack_source);
    IssimError err = {0};
    int i = 0;
    double before = 0.0;
    while (engine_stats(e).reduced_entries == 0 && i < 3000) {
        before = momentum_z(e);
        assert_int_equal(engine_advance(e, ++i * 1e-3, &err), ISSIM_OK);
    }
    assert_int_equal(engine_stats(e).reduced_entries, 1);
    /* The entry conserves momentum (up to the one output step of gravity and floor force). */
    double after = momentum_z(e);
    double t_weld = engine_time(e);
    (void)t_weld;
    EngineBodyState top0 = engine_body_state(e, engine_body_id(e, 0));
    EngineBodyState bottom0 = engine_body_state(e, engine_body_id(e, 1));
    Vec3 offset0 = vec3_sub(top0.pos, bottom0.pos);
    for (int k = 0; k < 500; k++)
        assert_int_equal(engine_advance(e, ++i * 1e-3, &err), ISSIM_OK);
    EngineBodyState top = engine_body_state(e, engine_body_id(e, 0));
    EngineBodyState bottom = engine_body_state(e, engine_body_id(e, 1));
    Vec3 offset = vec3_sub(top.pos, bottom.pos);
    /* Rigidly joined: the top's place and attitude in the bottom's frame do not change. */
    double drift = vec3_norm(
        vec3_sub(quat_rotate_inv(bottom.orient, offset), quat_rotate_inv(bottom0.orient, offset0)));
    Quat rel0 = quat_mul(quat_conj(bottom0.orient), top0.orient);
    Quat rel = quat_mul(quat_conj(bottom.orient), top.orient);
    double turn = fabs(fabs(rel.w * rel0.w + rel.x * rel0.x + rel.y * rel0.y + rel.z * rel0.z) - 1);
    printf("stack: welded at t = %.3f s (momentum %.3g -> %.3g N s over the step), drift in the "
           "bottom's frame %.3g m, attitude %.3g, bottom z %.6f\n",
           engine_time(e) - 0.5, before, after, drift, turn, bottom.pos.z);
    assert_int_equal(engine_reduced_pair_count(e), 1);
    assert_true(drift < 1e-12);
    assert_true(turn < 1e-12);
    assert_near(bottom.pos.z, 0.05 - 1.5 * 9.81 / 4e5, 2e-5); /* resting on four springs */
    /* 3 N up on the 0.5 kg top (weight 4.9 N): still pressed. 8 N: it must let go. */
    assert_int_equal(engine_apply_edit(e, "top.force", "0 0 3", &err), ISSIM_OK);
    for (int k = 0; k < 50; k++)
        assert_int_equal(engine_advance(e, ++i * 1e-3, &err), ISSIM_OK);
    assert_int_equal(engine_reduced_pair_count(e), 1);
    assert_int_equal(engine_apply_edit(e, "top.force", "0 0 8", &err), ISSIM_OK);
    for (int k = 0; k < 50; k++)
        if (engine_advance(e, ++i * 1e-3, &err) != ISSIM_OK)
            fail_msg("advance after the pull: %s", err.message);
    assert_int_equal(engine_reduced_pair_count(e), 0);
    assert_int_equal(engine_stats(e).reduced_exits, 1);
    EngineBodyState lifted = engine_body_state(e, engine_body_id(e, 0));
    assert_true(lifted.pos.z > top.pos.z + 1e-3); /* it rises off the bottom box */
    engine_destroy(e);
}

/* The welded model alone: entering conserves linear and angular momentum, and the bodies it
 * gives back move as one rigid body. */
static void test_welded_model_conserves_momentum(void **state) {
    (void)state;
    TestRng rng = {0x9e3779b97f4a7c15ull};
    const EngineReducedModel *m = engine_reduced_welded();
    for (int trial = 0; trial < 100; trial++) {
        EngineReducedPair pair = {
            .mass_a = test_rng_range(&rng, 0.1, 5),
            .mass_b = test_rng_range(&rng, 0.1, 5),
            .inertia_a = vec3(test_rng_range(&rng, 1e-3, 1e-2), test_rng_range(&rng, 1e-3, 1e-2),
                              test_rng_range(&rng, 1e-3, 1e-2)),
            .inertia_b = vec3(test_rng_range(&rng, 1e-3, 1e-2), test_rng_range(&rng, 1e-3, 1e-2),
                              test_rng_range(&rng, 1e-3, 1e-2)),
            .normal = vec3(0, 0, 1)};
        EngineBodyState a = {.pos = vec3(test_rng_range(&rng, -1, 1), 0, 0.1),
                             .orient = test_rng_rotation(&rng),
                             .vel = vec3(test_rng_range(&rng, -1, 1), 0.2, 0.1),
                             .angvel = vec3(0.5, test_rng_range(&rng, -2, 2), 0)};
        EngineBodyState b = {.pos = vec3(0, test_rng_range(&rng, -1, 1), 0),
                             .orient = test_rng_rotation(&rng),
                             .vel = vec3(0.3, test_rng_range(&rng, -1, 1), 0),
                             .angvel = vec3(0, 1, test_rng_range(&rng, -2, 2))};
        _Alignas(16) unsigned char data[ENGINE_REDUCED_DATA_MAX] = {0};
        double block[ENGINE_REDUCED_BLOCK_MAX];
        assert_true(m->enter(&pair, data, &a, &b, block));
        EngineBodyState a2, b2;
        m->bodies(&pair, data, block, &a2, &b2);
        Vec3 p0 = vec3_add(vec3_scale(a.vel, pair.mass_a), vec3_scale(b.vel, pair.mass_b));
        Vec3 p1 = vec3_add(vec3_scale(a2.vel, pair.mass_a), vec3_scale(b2.vel, pair.mass_b));
        assert_true(vec3_norm(vec3_sub(p0, p1)) < 1e-12);
        /* angular momentum about the origin, before and after */
        Vec3 l0 =
            vec3_add(vec3_add(mat3_mul_vec(mat3_world_inertia(a.orient, pair.inertia_a), a.angvel),
                              vec3_scale(vec3_cross(a.pos, a.vel), pair.mass_a)),
                     vec3_add(mat3_mul_vec(mat3_world_inertia(b.orient, pair.inertia_b), b.angvel),
                              vec3_scale(vec3_cross(b.pos, b.vel), pair.mass_b)));
        Vec3 l1 = vec3_add(
            vec3_add(mat3_mul_vec(mat3_world_inertia(a2.orient, pair.inertia_a), a2.angvel),
                     vec3_scale(vec3_cross(a2.pos, a2.vel), pair.mass_a)),
            vec3_add(mat3_mul_vec(mat3_world_inertia(b2.orient, pair.inertia_b), b2.angvel),
                     vec3_scale(vec3_cross(b2.pos, b2.vel), pair.mass_b)));
        assert_true(vec3_norm(vec3_sub(l0, l1)) < 1e-10 * (1 + vec3_norm(l0)));
        /* positions unchanged, one angular velocity, rigid point velocities */
        assert_true(vec3_norm(vec3_sub(a.pos, a2.pos)) < 1e-12);
        assert_true(vec3_norm(vec3_sub(b.pos, b2.pos)) < 1e-12);
        assert_true(vec3_norm(vec3_sub(a2.angvel, b2.angvel)) < 1e-15);
        Vec3 rel =
            vec3_sub(b2.vel, vec3_add(a2.vel, vec3_cross(a2.angvel, vec3_sub(b2.pos, a2.pos))));
        assert_true(vec3_norm(rel) < 1e-12);
    }
}

/* The shipped scene, as a user opens it: the complementarity box lands without bouncing (a
 * contact found late, 1.2 mm deep at 2.2 m/s, used to launch it at 0.52 m/s), the penalty ball
 * bounces with its restitution, and the small box welds onto the big one. */
static void test_three_resolvers_scene(void **state) {
    (void)state;
    TestRun *run = test_run_scene("scenes/three_resolvers.lua",
                                  &(TestRunOptions){.until = 2.0, .lockstep = true});
    Engine *e = sim_engine(run->sim);
    EngineStats st = engine_stats(e);
    const SimSummary *sum = &run->summary;
    int box_impacts = 0, ball_bounces = 0;
    for (int i = 0; i < sum->impact_count; i++) {
        const SimImpact *im = &sum->impacts[i];
        if (strcmp(engine_body_name(e, engine_body_id(e, im->body)), "box") == 0) {
            box_impacts++;
            assert_true(isnan(im->v_out) || im->v_out < 1e-3); /* it stays down */
        }
        if (strcmp(engine_body_name(e, engine_body_id(e, im->body)), "ball") == 0 &&
            isfinite(im->restitution) && im->v_in < -0.5) {
            assert_near(im->restitution, 0.6, 0.05);
            ball_bounces++;
        }
    }
    EngineBodyState box = engine_body_state(e, engine_body_find(e, "box"));
    printf("three resolvers: %d box impacts, %d ball bounces, box z %.9f, %llu complementarity "
           "steps, %llu reduced entries\n",
           box_impacts, ball_bounces, box.pos.z, (unsigned long long)st.complementarity_steps,
           (unsigned long long)st.reduced_entries);
    assert_int_equal(box_impacts, 1);
    assert_true(ball_bounces >= 3);
    assert_near(box.pos.z, 0.05, 1e-6); /* resting, not sunk */
    /* the box's island is stepped until it has been still for the settle time (20 ms, 20
     * steps), then sleeps (test_complementarity_sleep) */
    assert_true(st.complementarity_steps >= 20);
    assert_true(engine_body_asleep(e, engine_body_find(e, "box").index));
    assert_true(st.reduced_entries >= 1);
    assert_int_equal(engine_reduced_pair_count(e), 1);
    test_run_free(run);
}

/* ===== The progress guard ===== */

/* Two boxes settling on the floor with internal friction under BDF: the law switches with the
 * sign of dg/dt, CVODE's steps collapse to 1e-12 s, and the run used to go on for ever at
 * t = 0.008 s (the shipped equilibrium_lists.lua with --integrator bdf). */
static const char *chattering_source =
    "local function box(name, x, h, m)\n"
    "  local i = m * (2 * h[1]) ^ 2 / 6\n"
    "  return { name = name, kind = 'body', shape = 'box', half_extents = h, mass = m,\n"
    "           inertia = {i, i, i}, pos = {x, 0, h[3] + 1e-4}, material = 'body' }\n"
    "end\n"
    "return { universe = { gravity = {0, 0, -9.81}, integrator = 'bdf', dt = 1e-4 },\n"
    "  things = { box('C', 0, {0.3, 0.1, 0.02}, 2), box('D', 0.8, {0.05, 0.05, 0.05}, 1),\n"
    "    { name = 'G', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1}, offset = 0,\n"
    "      material = 'floor' } },\n"
    "  contacts = { { name = 'floor_contact', materials = {'body', 'floor'},\n"
    "    model = 'internal_friction', stiffness = 1e5, restitution = 0.5,\n"
    "    velocity_tolerance = 0.01 } } }\n";

static void test_progress_guard_stops_a_stalled_run(void **state) {
    (void)state;
    Engine *e = engine_from_source(chattering_source);
    IssimError err = {0};
    IssimStatus s = ISSIM_OK;
    EngineBodyState before = {0};
    double t_before = 0.0;
    double w0 = issim_wall_time();
    for (int i = 1; i <= 500 && s == ISSIM_OK; i++) {
        before = engine_body_state(e, engine_body_id(e, 0));
        t_before = engine_time(e);
        s = engine_advance(e, i * 1e-4, &err);
    }
    double wall = issim_wall_time() - w0;
    printf("guard: %s after %.2f s wall: %s\n", s == ISSIM_OK ? "no stop" : "stopped", wall,
           err.message);
    assert_int_equal(s, ISSIM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "no progress"));
    assert_non_null(strstr(err.message, "floor_contact"));
    assert_non_null(strstr(err.message, "C on G"));
    /* the last good state is kept */
    assert_true(engine_time(e) == t_before);
    EngineBodyState after = engine_body_state(e, engine_body_id(e, 0));
    assert_memory_equal(&before, &after, sizeof before);
    engine_destroy(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_step_only_during_contact),
        cmocka_unit_test(test_rewind_mid_impact_bit_identical_rk4),
        cmocka_unit_test(test_rewind_mid_impact_bit_identical_bdf),
        cmocka_unit_test(test_rewind_between_keys_replays_bit_identical),
        cmocka_unit_test(test_rewind_across_an_edit_restores_the_published_frame),
        cmocka_unit_test(test_rewind_without_checkpoint_restarts_history),
        cmocka_unit_test(test_rewind_shaped_contact_keeps_ids_and_memory),
        cmocka_unit_test(test_resolve_scratch_settles),
        cmocka_unit_test(test_mixed_resolvers_reach_the_same_instants),
        cmocka_unit_test(test_solver_failure_keeps_last_good_state),
        cmocka_unit_test(test_stage_profile_names),
        cmocka_unit_test(test_register_rejects_bad_classes),
        cmocka_unit_test(test_reduced_pair_holds_and_releases),
        cmocka_unit_test(test_reduced_pair_of_two_bodies),
        cmocka_unit_test(test_welded_model_conserves_momentum),
        cmocka_unit_test(test_three_resolvers_scene),
        cmocka_unit_test(test_progress_guard_stops_a_stalled_run),
    };
    return cmocka_run_group_tests(tests, register_memory_model, NULL);
}
