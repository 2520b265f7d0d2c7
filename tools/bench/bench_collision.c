/* issim-bench collision: the cost of a full collision_world_update (broad phase, narrow phase,
 * contact matching) on a settled pile, and how it grows with the body count.
 *
 * No dynamics: N bodies (spheres of radius 0.05 m alternating with boxes of half extent
 * 0.05 m on a checkerboard, or spheres only when the narrow phase has no box-box routine yet;
 * the run says which) sit on a square grid in a container (a static floor and four static
 * walls, all half-spaces), layer on layer, every neighbour, the floor and the walls overlapping
 * by 1e-4 m, each body offset by a random jitter of up to 2e-5 m per axis. Between updates
 * every dynamic body is set to its rest pose plus a fresh jitter of up to 1e-5 m per axis, as
 * the bodies of a resting pile tremble (or, asleep, to exactly its rest pose). For N = 100, 1000
 * and 10000 it prints the median wall time of an update (after a warm-up) with the medians of its
 * broad and narrow phases, the contacts and broad pairs (and the cost of the first update, when
 * every contact begins and the broad phase builds its pair list from scratch), then the growth of
 * the median from 1000 to 10000 bodies against n log n (x13.3) and the target of 1 ms for 1000
 * bodies on one core. Usage: issim-bench collision [--updates K] [--fat-margin M] [--rest-tolerance
 * R] (K >= 20, default 30; M: the broad phase's fat margin in m, default collision_desc_default's;
 * R: the rest tolerance of the third run, default 5e-5 m) [--coherence C] (the coherence tolerance
 * of the fourth run, default 1e-4 m) [--bodies N] (only that pile size, for profiling one size). */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/collision.h"

#define BC_SIZE 0.05    /* sphere radius and box half extent, m */
#define BC_OVERLAP 1e-4 /* between neighbours, and with the floor and walls, m */
#define BC_PLACE 2e-5   /* initial jitter per axis, m */
#define BC_TREMBLE 1e-5 /* jitter per axis between updates, m */
#define BC_WARMUP 5
#define BC_TARGET_MS 1.0 /* 1000 bodies */

typedef struct BcRng {
    uint64_t s;
} BcRng;

static double bc_uniform(BcRng *r) { /* xorshift64*, [-1, 1) */
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return 2.0 * (double)((r->s * 2685821657736338717ull) >> 11) * 0x1.0p-53 - 1.0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* True when the narrow phase has box routines (box-box, box-sphere, box-plane): two boxes,
 * a box and a sphere, a box and a floor, each overlapping, must all give contacts. */
static bool boxes_available(void) {
    Shape box = shape_box(vec3(BC_SIZE, BC_SIZE, BC_SIZE));
    Shape sphere = shape_sphere(BC_SIZE);
    Shape floor = shape_plane(vec3(0, 0, 1), 0.0);
    Pose lo = {{0, 0, BC_SIZE - BC_OVERLAP}, {1, 0, 0, 0}};
    Pose hi = {{0, 0, 3 * BC_SIZE - 2 * BC_OVERLAP}, {1, 0, 0, 0}};
    Manifold m;
    return collide_shapes(&box, hi, &box, lo, 1e-3, &m) > 0 &&
           collide_shapes(&sphere, hi, &box, lo, 1e-3, &m) > 0 &&
           collide_shapes(&box, lo, &floor, pose_identity(), 1e-3, &m) > 0;
}

typedef struct Pile {
    CollisionWorld *world;
    int first_dynamic, count;
    Pose *rest; /* count */
} Pile;

static bool pile_build(Pile *pile, int n, bool boxes, const CollisionDesc *desc, BcRng *rng) {
    IssimError err;
    pile->world = collision_world_create(desc, &err);
    pile->rest = malloc((size_t)(n + 5) * sizeof *pile->rest);
    if (!pile->world || !pile->rest) {
        fprintf(stderr, "bench collision: %s\n", pile->world ? "out of memory" : err.message);
        return false;
    }
    int side = (int)ceil(cbrt((double)n));
    double pitch = 2.0 * BC_SIZE - BC_OVERLAP;
    double inner = (double)(side - 1) * pitch + 2.0 * (BC_SIZE - BC_OVERLAP); /* wall to wall */
    double lo = -(BC_SIZE - BC_OVERLAP), hi = lo + inner;
    /* The container: floor z >= 0, walls x, y in [lo, hi]. */
    const Shape planes[5] = {
        shape_plane(vec3(0, 0, 1), 0.0),  shape_plane(vec3(1, 0, 0), lo),
        shape_plane(vec3(-1, 0, 0), -hi), shape_plane(vec3(0, 1, 0), lo),
        shape_plane(vec3(0, -1, 0), -hi),
    };
    for (int i = 0; i < 5; i++) {
        pile->rest[i] = pose_identity();
        collision_world_add(pile->world, &planes[i], pile->rest[i], true);
    }
    pile->first_dynamic = 5;
    Shape sphere = shape_sphere(BC_SIZE);
    Shape box = shape_box(vec3(BC_SIZE, BC_SIZE, BC_SIZE));
    for (int k = 0; k < n; k++) {
        int ix = k % side, iy = (k / side) % side, layer = k / (side * side);
        Pose p = {{(double)ix * pitch + BC_PLACE * bc_uniform(rng),
                   (double)iy * pitch + BC_PLACE * bc_uniform(rng),
                   BC_SIZE - BC_OVERLAP + (double)layer * pitch + BC_PLACE * bc_uniform(rng)},
                  {1, 0, 0, 0}};
        const Shape *s = boxes && (ix + iy + layer) % 2 == 1 ? &box : &sphere;
        pile->rest[5 + k] = p;
        if (collision_world_add(pile->world, s, p, false) < 0) {
            fprintf(stderr, "bench collision: out of memory\n");
            return false;
        }
    }
    pile->count = 5 + n;
    return true;
}

/* Sets every dynamic body's pose for the next update: its rest pose plus a fresh tremble, or
 * exactly its rest pose (a sleeping pile; still set, as an engine would, so the broad phase's
 * per-body work is counted). */
static void pile_tremble(Pile *pile, BcRng *rng, bool still) {
    for (int i = pile->first_dynamic; i < pile->count; i++) {
        Pose p = pile->rest[i];
        if (!still) {
            p.p.x += BC_TREMBLE * bc_uniform(rng);
            p.p.y += BC_TREMBLE * bc_uniform(rng);
            p.p.z += BC_TREMBLE * bc_uniform(rng);
        }
        collision_world_set_pose(pile->world, i, p);
    }
}

/* Returns the median update time in ms, or a negative value on failure. */
static double bench_pile(int n, bool boxes, bool still, const CollisionDesc *desc, int updates) {
    BcRng rng = {0x2545f4914f6cdd1dull ^ (uint64_t)n};
    Pile pile = {0};
    if (!pile_build(&pile, n, boxes, desc, &rng)) {
        collision_world_destroy(pile.world);
        free(pile.rest);
        return -1.0;
    }
    double *total = malloc((size_t)updates * sizeof *total);
    double *broad = malloc((size_t)updates * sizeof *broad);
    double *narrow = malloc((size_t)updates * sizeof *narrow);
    if (!total || !broad || !narrow) {
        fprintf(stderr, "bench collision: out of memory\n");
        free(total);
        free(broad);
        free(narrow);
        collision_world_destroy(pile.world);
        free(pile.rest);
        return -1.0;
    }
    double t_first = now_s();
    collision_world_update(pile.world); /* everything begins; the broad phase builds its pairs */
    t_first = (now_s() - t_first) * 1e3;
    int first_contacts = collision_world_stats(pile.world).contacts;
    for (int k = 0; k < BC_WARMUP; k++) {
        pile_tremble(&pile, &rng, still);
        collision_world_update(pile.world);
    }
    int began = 0, ended = 0, refreshed = 0;
    for (int k = 0; k < updates; k++) {
        pile_tremble(&pile, &rng, still);
        double t0 = now_s();
        collision_world_update(pile.world);
        total[k] = (now_s() - t0) * 1e3;
        CollisionStats st = collision_world_stats(pile.world);
        broad[k] = st.broad_seconds * 1e3;
        narrow[k] = st.narrow_seconds * 1e3;
        began += st.began;
        ended += st.ended;
        refreshed += st.refreshed_pairs;
    }
    CollisionStats st = collision_world_stats(pile.world);
    double median = bench_quantile(total, updates, 0.5);
    printf("  %6d bodies: update %8.3f ms (broad %7.3f, narrow %7.3f; p90 %8.3f; first %8.3f)  "
           "contacts %6d (first %d)  broad pairs %7d  touching %6d  began/ended %d/%d  refreshed "
           "pairs %.0f per update\n",
           n, median, bench_quantile(broad, updates, 0.5), bench_quantile(narrow, updates, 0.5),
           bench_quantile(total, updates, 0.9), t_first, st.contacts, first_contacts,
           st.broad_pairs, st.touching_pairs, began, ended, (double)refreshed / updates);
    free(total);
    free(broad);
    free(narrow);
    collision_world_destroy(pile.world);
    free(pile.rest);
    return median;
}

/* One configuration: the three pile sizes, growth and target verdicts. */
static int bench_configuration(const char *label, bool boxes, bool still, const CollisionDesc *desc,
                               int updates, int only) {
    printf("collision: %s: settled pile in a container (floor + 4 walls), %s, size %.2f m, "
           "overlaps %.0e m, tremble %.0e m; margin %.0e m, fat margin %.3g m, rest tolerance "
           "%.0e m, coherence tolerance %.0e m; median of %d updates after %d\n",
           label,
           boxes ? "spheres and boxes on a checkerboard"
                 : "spheres only (no box routines in the narrow phase yet)",
           BC_SIZE, BC_OVERLAP, still ? 0.0 : BC_TREMBLE, desc->margin, desc->fat_margin,
           desc->rest_tolerance, desc->coherence_tolerance, updates, BC_WARMUP);
    const int sizes[3] = {100, 1000, 10000};
    double ms[3];
    if (only > 0)
        return bench_pile(only, boxes, still, desc, updates) < 0.0;
    for (int i = 0; i < 3; i++) {
        ms[i] = bench_pile(sizes[i], boxes, still, desc, updates);
        if (ms[i] < 0.0)
            return 1;
    }
    double growth = ms[2] / ms[1];
    double nlogn = (10000.0 * log(10000.0)) / (1000.0 * log(1000.0));
    printf("  growth x%.1f (n log n: x%.1f): %s\n", growth, nlogn,
           growth <= nlogn ? "met" : "not met");
    printf("  1000 bodies: %.3f ms per update (target < %.0f ms): %s\n", ms[1], BC_TARGET_MS,
           ms[1] < BC_TARGET_MS ? "met" : "not met");
    return 0;
}

int bench_collision(int argc, char **argv) {
    int updates = 30, only = 0;
    CollisionDesc desc = collision_desc_default();
    double rest = 5e-5;              /* covers the tremble: two trembles of 1e-5 per axis apart */
    double coherence = 1e-4;         /* covers two bodies' trembles: up to 6.9e-5 m apart */
    for (int i = 1; i < argc; i++) { /* others' options ("all" passes them all) are ignored */
        if (strcmp(argv[i], "--updates") == 0 && i + 1 < argc)
            updates = atoi(argv[++i]);
        else if (strcmp(argv[i], "--fat-margin") == 0 && i + 1 < argc)
            desc.fat_margin = atof(argv[++i]);
        else if (strcmp(argv[i], "--rest-tolerance") == 0 && i + 1 < argc)
            rest = atof(argv[++i]);
        else if (strcmp(argv[i], "--coherence") == 0 && i + 1 < argc)
            coherence = atof(argv[++i]);
        else if (strcmp(argv[i], "--bodies") == 0 && i + 1 < argc)
            only = atoi(argv[++i]);
    }
    if (updates < 20)
        updates = 20;
    bool boxes = boxes_available();
    /* A trembling pile with every pair through the narrow phase every update (the engine's
     * setting; spring/damper contacts never come to a standstill); the same pile asleep (poses
     * exactly unchanged: the engine's sleeping bodies, carried exactly at the engine's rest
     * tolerance 0); the trembling pile with the world's approximate rest mode. */
    desc.rest_tolerance = 0.0;
    int rc =
        bench_configuration("trembling, every pair tested", boxes, false, &desc, updates, only);
    rc |= bench_configuration("asleep (poses unchanged), exact", boxes, true, &desc, updates, only);
    desc.rest_tolerance = rest;
    rc |= bench_configuration("trembling, bodies within the rest tolerance carried", boxes, false,
                              &desc, updates, only);
    /* The trembling pile with temporal coherence: pairs that moved less than the tolerance since
     * their last full test rebuilt from their anchors (collision.h, coherence_tolerance). */
    desc.rest_tolerance = 0.0;
    desc.coherence_tolerance = coherence;
    rc |= bench_configuration("trembling, coherent refresh of pairs within the tolerance", boxes,
                              false, &desc, updates, only);
    return rc;
}
