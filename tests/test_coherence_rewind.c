/* A pile with the collision world's temporal coherence on (universe.collision_coherence,
 * docs/architecture.md "collision manager"), rewound mid-settling: the key checkpoints carry the
 * world's coherence state (engine_checkpoint.c, collision_world_save_coherence), so the replay
 * from the key and the run after the restored frame refresh the pairs the original refreshed and
 * give back every frame bit for bit. Not vacuous: the same pile with coherence off runs
 * differently (pairs really are refreshed), and the rewound run is compared frame by frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/engine.h"
#include "issim/engine_stats.h"
#include "issim/sim.h"
#include "testutil.h"

#define RW_FRAMES 1200  /* 0.24 s at 2e-4 s: the pile lands and settles into contact */
#define RW_RESTORE 1000 /* the frame rewound to: mid-settling, between keys */
#define RW_KEY_EVERY 7  /* a key every 7 frames: the restore replays from the key before */
#define RW_COHERENCE 1e-4

/* 32 boxes, octahedra, capsules and spheres on a 4 x 4 grid, two layers, a few mm above the
 * floor and each other, in a 0.3 m box: they land and press on each other within the run. */
static char *pile_source(double coherence) {
    static char text[16384];
    int n = snprintf(text, sizeof text,
                     "local things = {\n"
                     "  { name = 'floor', kind = 'obstacle', shape = 'plane', normal = {0, 0, 1},\n"
                     "    offset = 0, material = 'wall' },\n"
                     "  { name = 'wx', kind = 'obstacle', shape = 'plane', normal = {-1, 0, 0},\n"
                     "    offset = -0.15, material = 'wall' },\n"
                     "  { name = 'wy', kind = 'obstacle', shape = 'plane', normal = {0, -1, 0},\n"
                     "    offset = -0.15, material = 'wall' } }\n"
                     "for n = 0, 31 do\n"
                     "  local k, layer = n %% 16, n // 16\n"
                     "  local b = { name = 'b' .. n, kind = 'body', material = 'pile',\n"
                     "    pos = {-0.105 + 0.07 * (k %% 4) + 0.003 * math.sin(n),\n"
                     "           -0.105 + 0.07 * (k // 4) + 0.003 * math.cos(n),\n"
                     "           0.042 + 0.085 * layer},\n"
                     "    orient = {math.cos(n), math.sin(n) * 0.6, math.sin(n) * 0.8, 0},\n"
                     "    mass = 0.1, inertia = {4e-5, 4e-5, 4e-5} }\n"
                     "  local kind = n %% 4\n"
                     "  if kind == 0 then b.shape, b.half_extents = 'box', {0.025, 0.02, 0.015}\n"
                     "  elseif kind == 1 then b.shape, b.hull_file = 'hull', "
                     "'assets/octahedron_small.obj'\n"
                     "  elseif kind == 2 then b.shape, b.radius, b.half_length = 'capsule', "
                     "0.015, 0.025\n"
                     "  else b.shape, b.radius = 'sphere', 0.025 end\n"
                     "  things[#things + 1] = b\n"
                     "end\n"
                     "return { name = 'coherent_pile',\n"
                     "  universe = { gravity = {0, 0, -9.81}, integrator = 'rk4', dt = 2e-4,\n"
                     "               collision_coherence = %.17g },\n"
                     "  things = things,\n"
                     "  contacts = {\n"
                     "    { name = 'pp', materials = {'pile', 'pile'}, model = 'spring_damper',\n"
                     "      stiffness = 1e4, restitution = 0.3, clamp_attraction = true },\n"
                     "    { name = 'pw', materials = {'pile', 'wall'}, model = 'spring_damper',\n"
                     "      stiffness = 1e4, restitution = 0.3, clamp_attraction = true } } }\n",
                     coherence);
    assert_true(n > 0 && n < (int)sizeof text);
    return text;
}

typedef struct Frames {
    int count, vars;
    double t[RW_FRAMES + 1];
    double *values; /* count x vars, engine_write_vars */
} Frames;

static void record_frame(Engine *e, Frames *f) {
    f->t[f->count] = engine_time(e);
    engine_write_vars(e, f->values + (size_t)f->count * (size_t)f->vars);
    f->count++;
}

/* Steps to frame `until`, checkpointing every frame as the interactive engine does. */
static void run_frames(Engine *e, Frames *f, int until) {
    IssimError err = {0};
    while (f->count < until) {
        if (engine_step(e, &err) != ISSIM_OK)
            fail_msg("step: %s", err.message);
        engine_checkpoint(e);
        record_frame(e, f);
    }
}

static TestRun *start_pile(double coherence, Frames *f) {
    TestRunOptions o = {.until = 2e-4, .lockstep = true}; /* one step: the session is built */
    TestRun *run = test_run_source("coherent_pile.lua", pile_source(coherence), &o);
    Engine *e = sim_engine(run->sim);
    IssimError err = {0};
    assert_int_equal(engine_enable_checkpoints(e, 4096, 256 << 20, &err), ISSIM_OK);
    engine_set_checkpoint_keys(e, RW_KEY_EVERY);
    f->vars = engine_var_count(e);
    f->count = 0;
    f->values = calloc((size_t)(RW_FRAMES + 1) * (size_t)f->vars, sizeof(double));
    engine_checkpoint(e);
    record_frame(e, f);
    return run;
}

static int differing_frames(const Frames *a, const Frames *b) {
    int differ = 0;
    size_t row = sizeof(double) * (size_t)a->vars;
    for (int i = 0; i < a->count && i < b->count; i++)
        differ +=
            memcmp(a->values + (size_t)i * a->vars, b->values + (size_t)i * b->vars, row) != 0;
    return differ + abs(a->count - b->count);
}

static void test_coherent_pile_rewinds_bit_identical(void **state) {
    (void)state;
    static Frames straight, rewound, off;
    TestRun *run = start_pile(RW_COHERENCE, &straight);
    Engine *e = sim_engine(run->sim);
    run_frames(e, &straight, RW_FRAMES);
    size_t ring_bytes = engine_checkpoint_bytes(e);
    assert_true(engine_has_checkpoint(e, straight.t[RW_RESTORE]));

    /* Rewind to frame RW_RESTORE (its values are used only when no checkpoint holds it). */
    IssimError err = {0};
    size_t row = sizeof(double) * (size_t)straight.vars;
    assert_int_equal(engine_restore_vars(e, straight.t[RW_RESTORE],
                                         straight.values + (size_t)RW_RESTORE * straight.vars,
                                         &err),
                     ISSIM_OK);
    rewound.vars = straight.vars;
    rewound.values = malloc(row * (RW_FRAMES + 1));
    rewound.count = RW_RESTORE + 1; /* the frames up to the restored one, as the registry has */
    memcpy(rewound.values, straight.values, row * (size_t)rewound.count);
    memcpy(rewound.t, straight.t, sizeof(double) * (size_t)rewound.count);
    run_frames(e, &rewound, straight.count);
    EngineStats st = engine_stats(e);
    int differ = differing_frames(&straight, &rewound);
    test_run_free(run);

    /* The same pile with coherence off: different bits, so the refreshes really ran. */
    run = start_pile(0.0, &off);
    run_frames(sim_engine(run->sim), &off, RW_FRAMES);
    int differ_off = differing_frames(&straight, &off);
    test_run_free(run);
    printf("coherent pile rewound to t = %.4f s (%llu frames replayed, %zu bytes of checkpoints): "
           "%d of %d frames differ; coherence off: %d frames differ from on\n",
           straight.t[RW_RESTORE], (unsigned long long)st.replayed_frames, ring_bytes, differ,
           straight.count, differ_off);
    assert_int_equal(st.restores, 1);
    assert_int_equal(st.restarts, 0);
    assert_true(st.replayed_frames > 0); /* the frame lay between keys */
    assert_int_equal(differ, 0);
    assert_true(differ_off > 0);
    free(straight.values);
    free(rewound.values);
    free(off.values);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coherent_pile_rewinds_bit_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
