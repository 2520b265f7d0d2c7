/* Collision world: the collision manager's two modes (000 App. B.4.3: "wide mode", which pairs
 * to check, and "narrow mode", the distances of those pairs) and the persistent identity of
 * contacts across updates, after the contact manager of Box2D (Catto, "Contact Manifolds",
 * GDC 2007: a point is matched to the previous step's by its feature pair).
 *
 * Bodies keep a copy of their shape, a pose, a static flag and a broad-phase proxy (dynamic AABB
 * tree, broadphase.c). An update refreshes the proxies of the bodies whose pose was set since
 * the last update (a static body's only when it is explicitly set; normally at add), takes the
 * broad-phase pairs in (body_a, body_b) order, drops static-static pairs, and runs
 * collide_shapes(A, B) on the rest, so normals point from B to A as the API promises. A body's
 * box is its shape bounds grown by the contact margin: two bodies closer than the margin have
 * overlapping boxes, so no near-contact is lost. The broad phase reports fat-box overlaps (in a
 * dense pile of small bodies the fat margin reaches the neighbours' neighbours), so each pair's
 * current boxes are compared first and the narrow phase sees only pairs that can touch.
 *
 * Identity. A new point takes the id of the previous update's contact of the same body pair with
 * the same feature id (age + 1); otherwise it gets the next value of a 32-bit counter that only
 * increases (ids are not reused before it wraps, after 2^32 - 1 contacts; 0 is never an id).
 * Previous contacts left unmatched end, and their ids are listed once. The previous contacts are
 * sorted by (body_a, body_b, id) and the pairs arrive sorted by (body_a, body_b), so a pair's
 * previous contacts are found by one cursor walking the previous array in step with the pairs (a
 * merge join): no hashing, linear time, and every ended contact is met in sorted order. The contact
 * arrays are double-buffered and swapped each update; all buffers only grow, so once capacities
 * settle an update allocates nothing. Everything is in a fixed order, so the same poses give the
 * same contacts, ids and order.
 *
 * Temporal coherence (CollisionDesc.coherence_tolerance; Catto's and Bullet's persistent
 * manifolds keep body-local anchors the same way). Every full narrow test stores, per contact,
 * its anchors in the bodies' frames: A's and B's core points (a sphere's centre, a capsule's axis
 * point, any other shape's surface point: the material points the engine anchors its contact
 * at, engine_collide.c) and the normal in the frame of the body whose face it is (or B's), and per
 * pair the relative pose of its smaller body in the other's frame. A later update whose relative
 * pose moved every anchor (within the smaller body's bounding radius plus the margin, plus the
 * other's core radius, of its origin) by at most the tolerance rebuilds the contacts from those
 * anchors: the same ids and material points, the normal turned with its body, each distance the
 * exact separation of the two material points along it. That distance moves by at most the motion
 * since the full test (the anchor on the other body moves that much against the fixed face), and
 * the pair's true depth (the signed MTD, 1-Lipschitz in the motion) too, so the pair's depth is
 * within twice the tolerance of a full test's; a vertex or round core on a face it keeps is exact.
 * A point absent at the full test was at least the margin away, so none closer than margin -
 * tolerance can be missed. Round-round and round-plane pairs cost less in full than refreshed and
 * are always tested in full (they keep no frame and no anchors).
 *
 * The refresh decision reads history: the tested pairs' frames, the contacts' anchors and the
 * bodies' rest poses (which decide carrying). collision_world_save_coherence writes exactly that
 * into a byte buffer and collision_world_restore_coherence puts it back after
 * collision_world_restore_identity, so an engine rewound to a checkpoint refreshes the pairs the
 * original run refreshed and replays the same bits (tests/test_collision_coherence.c,
 * tests/test_coherence_rewind.c).
 *
 * Threading: one thread at a time (the collision manager, or the engine in lock-step mode). */
#include "issim/arena.h"
#include "issim/collision.h"
#include "issim/task_pool.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* match_pair writes contacts field by field without clearing them first: no padding bytes may
 * be left undefined. */
_Static_assert(sizeof(CollisionContact) ==
                   2 * sizeof(int) + 3 * sizeof(Vec3) + sizeof(ContactPoint) + 2 * sizeof(uint32_t),
               "CollisionContact has padding");
_Static_assert(sizeof(ContactPoint) == 2 * sizeof(Vec3) + sizeof(double) + sizeof(uint64_t),
               "ContactPoint has padding");

typedef struct WorldPair {
    int a, b;
} WorldPair;

/* Body-fixed anchors of a contact (coherence_tolerance): core points in A's and B's frames, the
 * normal in its owner's frame. */
typedef struct ContactAnchor {
    Vec3 core_a, core_b, normal;
    bool normal_on_a;
} ContactAnchor;

/* Pose of a pair's smaller body (bounding radius; A on a tie) in the other body's frame at the
 * pair's last full narrow test. */
typedef struct PairFrame {
    Vec3 t;
    Quat q;
    bool valid;
} PairFrame;

/* Per body (body_count, capacity body_cap). */
typedef struct WorldBodies {
    int body_count, body_cap;
    Shape *shapes;    /* body_count */
    Pose *poses;      /* body_count */
    Mat3 *rotations;  /* body_count: the poses' rotation matrices (refreshes use them) */
    int *proxies;     /* body_count */
    bool *statics;    /* body_count */
    bool *moved;      /* body_count: pose set since the last update */
    Aabb *boxes;      /* body_count: shape bounds grown by the margin, at the current pose */
    double *ahead;    /* body_count: how far the body may move before the next update, m */
    double *radii;    /* body_count: bounding-sphere radius about the shape origin */
    Pose *rest_poses; /* body_count: pose at the body's last narrow test (rest_tolerance) */
    bool *rest_valid; /* body_count */
    bool *restless;   /* body_count: moved beyond rest_tolerance since rest_poses */
} WorldBodies;

/* The broad phase's pairs this update and the narrow phase's of the last one. */
typedef struct WorldPairs {
    WorldPair *pairs; /* pair_count: the pairs for the narrow phase */
    int pair_count, pair_cap;
    WorldPair *tested; /* tested_count: last update's narrow-phase pairs, same order */
    int tested_count, tested_cap;
    PairFrame *frames; /* pair_count (capacity frame_cap): each pair's last full test */
    int frame_cap;
    PairFrame *tested_frames; /* tested_count: the last update's frames */
    int tested_frame_cap;
    int held[COLLISION_HELD_PAIRS_MAX][2]; /* pairs whose contacts are carried, not tested */
    int held_count;
    int fat_pairs; /* broad pairs this update, static-static dropped */
} WorldPairs;

/* This update's contacts, the last one's, and the ids that ended. */
typedef struct WorldContacts {
    CollisionContact *contacts; /* contact_count, sorted by (body_a, body_b, id) */
    ContactAnchor *anchors;     /* contact_count (capacity contact_cap): contacts' anchors */
    int contact_count, contact_cap;
    CollisionContact *previous; /* previous_count: the last update's, same order */
    ContactAnchor *previous_anchors;
    int previous_count, previous_cap;
    uint32_t *ended; /* ended_count */
    int ended_count, ended_cap;
    uint32_t next_id;
} WorldContacts;

/* The narrow phase on several threads (desc.threads > 1): pairs needing a full test are
 * listed in `full` and tested in parallel, each into its own slot of `manifolds` (indexed by
 * pair, with its collide_shapes result in `found`); the serial walk then consumes them in
 * pair order, so the contacts and ids are the serial walk's bit for bit. Written by the pool's
 * threads in parallel_narrow only, read by the updating thread after it returns. */
typedef struct WorldParallel {
    /* The narrow phase on several threads (desc.threads > 1): pairs needing a full test are
     * listed in `full` and tested in parallel, each into its own slot of `manifolds` (indexed by
     * pair, with its collide_shapes result in `found`); the serial walk then consumes them in
     * pair order, so the contacts and ids are the serial walk's bit for bit. Written by the pool's
     * threads in parallel_narrow only, read by the updating thread after it returns. */
    TaskPool *pool;
    Manifold *manifolds; /* pair_count (capacity manifold_cap) */
    int *found;          /* pair_count: collide_shapes' result, or NOT_PRECOMPUTED */
    int *full;           /* full_count: pairs tested in parallel */
    int manifold_cap, found_cap, full_cap, full_count;
} WorldParallel;

struct CollisionWorld {
    CollisionDesc desc;
    BroadPhase *bp;
    bool updated; /* one full update done (its pairs and contacts can be carried) */
    CollisionStats stats;
    WorldBodies per_body;
    WorldPairs pairing;
    WorldContacts output;
    WorldParallel parallel;
};

enum { NOT_PRECOMPUTED = INT_MIN };
/* Below this many full tests, handing them to another thread costs more than it saves (a wake-up
 * is tens of microseconds; a box pair a few). */
enum { PARALLEL_MIN_PAIRS = 48, PARALLEL_GRAIN = 8 };

/* Grows the contact array and its anchors together to hold need contacts. */
static bool reserve_contacts(CollisionWorld *w, int need) {
    int cap = w->output.contact_cap, anchor_cap = w->output.contact_cap;
    if (!issim_array_reserve((void **)&w->output.contacts, &cap, need,
                             sizeof *w->output.contacts) ||
        !issim_array_reserve((void **)&w->output.anchors, &anchor_cap, need,
                             sizeof *w->output.anchors))
        return false;
    w->output.contact_cap = cap; /* both doubled from the same capacity to the same size */
    return true;
}

/* Update-time growth has no error path (the API's update cannot fail), and an incomplete
 * contact set would be silently wrong physics, so running out of memory there is fatal. */
static void grow_or_die(void **array, int *cap, int need, size_t item) {
    if (!issim_array_reserve(array, cap, need, item))
        issim_fatal("collision world: out of memory (%d items of %zu bytes)", need, item);
}

static void reserve_contacts_or_die(CollisionWorld *w, int need) {
    if (!reserve_contacts(w, need))
        issim_fatal("collision world: out of memory (%d contacts)", need);
}

CollisionDesc collision_desc_default(void) {
    return (CollisionDesc){.margin = 1e-3,
                           .fat_margin = 0.01,
                           .rest_tolerance = 0.0,
                           .coherence_tolerance = 0.0,
                           .threads = 1};
}

CollisionWorld *collision_world_create(const CollisionDesc *desc, IssimError *err) {
    CollisionDesc d = desc ? *desc : collision_desc_default();
    if (!(d.margin >= 0.0) || !isfinite(d.margin)) {
        issim_error_set(err, ISSIM_ERR_RANGE, "collision world: margin %g must be finite and >= 0",
                        d.margin);
        return NULL;
    }
    if (!(d.coherence_tolerance >= 0.0) ||
        (d.coherence_tolerance > 0.0 && !(d.coherence_tolerance < d.margin))) {
        issim_error_set(err, ISSIM_ERR_RANGE,
                        "collision world: coherence_tolerance %g must be >= 0 and below the "
                        "margin %g",
                        d.coherence_tolerance, d.margin);
        return NULL;
    }
    CollisionWorld *w = calloc(1, sizeof *w);
    if (!w) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "collision world: out of memory");
        return NULL;
    }
    w->desc = d;
    w->bp = broadphase_create(d.fat_margin, err);
    if (!w->bp) {
        free(w);
        return NULL;
    }
    if (d.threads > 1 && !(w->parallel.pool = task_pool_create(d.threads, err))) {
        collision_world_destroy(w);
        return NULL;
    }
    w->output.next_id = 1;
    return w;
}

void collision_world_destroy(CollisionWorld *w) {
    if (!w)
        return;
    broadphase_destroy(w->bp);
    free(w->per_body.shapes);
    free(w->per_body.poses);
    free(w->per_body.rotations);
    free(w->per_body.proxies);
    free(w->per_body.statics);
    free(w->per_body.moved);
    free(w->per_body.boxes);
    free(w->per_body.radii);
    free(w->per_body.ahead);
    free(w->per_body.rest_poses);
    free(w->per_body.rest_valid);
    free(w->per_body.restless);
    free(w->pairing.tested);
    free(w->pairing.frames);
    free(w->pairing.tested_frames);
    free(w->pairing.pairs);
    free(w->output.contacts);
    free(w->output.anchors);
    free(w->output.previous);
    free(w->output.previous_anchors);
    free(w->output.ended);
    task_pool_destroy(w->parallel.pool);
    free(w->parallel.manifolds);
    free(w->parallel.found);
    free(w->parallel.full);
    free(w);
}

/* The margin of a body's pair: the world's, plus how far each body may move before the next
 * update, so a fast body's contact is reported before it touches (a speculative contact). */
static double pair_margin(const CollisionWorld *w, int a, int b) {
    return w->desc.margin + w->per_body.ahead[a] + w->per_body.ahead[b];
}

static Aabb proxy_box(const CollisionWorld *w, int body) {
    Aabb box = shape_aabb(&w->per_body.shapes[body], w->per_body.poses[body]);
    double m = w->desc.margin + w->per_body.ahead[body];
    return (Aabb){{box.min.x - m, box.min.y - m, box.min.z - m},
                  {box.max.x + m, box.max.y + m, box.max.z + m}};
}

/* Returns -1 when out of memory (the world is unchanged). */
/* Radius of a sphere about the shape's origin that contains it; infinite for planes and meshes. */
static double bounding_radius(const Shape *s) {
    double r = 0.0;
    switch (s->kind) {
    case SHAPE_SPHERE:
        return s->radius;
    case SHAPE_CAPSULE:
        return s->half_length + s->radius;
    case SHAPE_BOX:
        return vec3_norm(s->half_extents);
    case SHAPE_HULL:
        for (int i = 0; s->hull && i < s->hull->vertex_count; i++)
            r = fmax(r, vec3_norm(s->hull->vertices[i]));
        return r;
    case SHAPE_POLYGON:
        for (int i = 0; i < s->polygon_count; i++)
            r = fmax(r, vec3_norm(s->polygon[i]));
        return r;
    default:
        return INFINITY;
    }
}

int collision_world_add(CollisionWorld *w, const Shape *shape, Pose pose, bool is_static) {
    int n = w->per_body.body_count;
    int cap = w->per_body.body_cap;
    /* Every array grows to the same capacity; body_cap is committed only when all did. */
    if (!issim_array_reserve((void **)&w->per_body.shapes, &cap, n + 1, sizeof *w->per_body.shapes))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.poses, &cap, n + 1, sizeof *w->per_body.poses))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.rotations, &cap, n + 1,
                             sizeof *w->per_body.rotations))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.proxies, &cap, n + 1,
                             sizeof *w->per_body.proxies))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.statics, &cap, n + 1,
                             sizeof *w->per_body.statics))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.moved, &cap, n + 1, sizeof *w->per_body.moved))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.boxes, &cap, n + 1, sizeof *w->per_body.boxes))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.radii, &cap, n + 1, sizeof *w->per_body.radii))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.rest_poses, &cap, n + 1,
                             sizeof *w->per_body.rest_poses))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.rest_valid, &cap, n + 1,
                             sizeof *w->per_body.rest_valid))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.restless, &cap, n + 1,
                             sizeof *w->per_body.restless))
        return -1;
    cap = w->per_body.body_cap;
    if (!issim_array_reserve((void **)&w->per_body.ahead, &cap, n + 1, sizeof *w->per_body.ahead))
        return -1;
    w->per_body.ahead[n] = 0.0;
    w->per_body.shapes[n] = *shape;
    w->per_body.poses[n] = pose;
    w->per_body.rotations[n] = quat_to_mat3(pose.q);
    w->per_body.statics[n] = is_static;
    w->per_body.moved[n] = false;
    w->per_body.boxes[n] = proxy_box(w, n);
    w->per_body.radii[n] = bounding_radius(shape);
    w->per_body.rest_valid[n] = false;
    w->per_body.restless[n] = true;
    int proxy = broadphase_add(w->bp, w->per_body.boxes[n], n);
    if (proxy < 0)
        return -1;
    w->per_body.proxies[n] = proxy;
    w->per_body.body_cap = cap;
    w->per_body.body_count = n + 1;
    return n;
}

int collision_world_body_count(const CollisionWorld *w) {
    return w->per_body.body_count;
}

const Shape *collision_world_shape(const CollisionWorld *w, int body) {
    ISSIM_ASSERT(body >= 0 && body < w->per_body.body_count);
    return &w->per_body.shapes[body];
}

Pose collision_world_pose(const CollisionWorld *w, int body) {
    ISSIM_ASSERT(body >= 0 && body < w->per_body.body_count);
    return w->per_body.poses[body];
}

void collision_world_set_pose(CollisionWorld *w, int body, Pose pose) {
    ISSIM_ASSERT(body >= 0 && body < w->per_body.body_count);
    w->per_body.poses[body] = pose;
    w->per_body.moved[body] = true;
}

void collision_world_set_reach_ahead(CollisionWorld *w, int body, double distance) {
    ISSIM_ASSERT(body >= 0 && body < w->per_body.body_count);
    double d = isfinite(distance) && distance > 0.0 ? distance : 0.0;
    if (d != w->per_body.ahead[body])
        w->per_body.moved[body] = true; /* its box grows or shrinks */
    w->per_body.ahead[body] = d;
}

static inline bool boxes_overlap(Aabb a, Aabb b) {
    return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
           a.min.z <= b.max.z && b.min.z <= a.max.z;
}

static void collect_pair(int a, int b, void *ctx) {
    CollisionWorld *w = ctx;
    if (w->per_body.statics[a] && w->per_body.statics[b])
        return;
    w->pairing.fat_pairs++;
    if (!boxes_overlap(w->per_body.boxes[a], w->per_body.boxes[b]))
        return; /* fat boxes overlap, the bodies' own do not: no contact possible */
    /* Bounding spheres about the shapes' origins: diagonal neighbours in a pile have
     * overlapping boxes but cannot touch; this test is far cheaper than the narrow phase. */
    double reach = w->per_body.radii[a] + w->per_body.radii[b] + pair_margin(w, a, b);
    Vec3 d = vec3_sub(w->per_body.poses[a].p, w->per_body.poses[b].p);
    if (vec3_dot(d, d) > reach * reach)
        return;
    grow_or_die((void **)&w->pairing.pairs, &w->pairing.pair_cap, w->pairing.pair_count + 1,
                sizeof *w->pairing.pairs);
    w->pairing.pairs[w->pairing.pair_count++] = (WorldPair){a, b};
}

static inline uint64_t pair_key(int a, int b) {
    return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

static void end_contact(CollisionWorld *w, uint32_t id) {
    grow_or_die((void **)&w->output.ended, &w->output.ended_cap, w->output.ended_count + 1,
                sizeof *w->output.ended);
    w->output.ended[w->output.ended_count++] = id;
}

/* The untaken previous contact of the same pair whose points both lie within reach of c's, the
 * nearest; -1 if none. Feature ids name a contact while the same features touch, but where two
 * choices tie (equal boxes edge on edge, whose reference face flips under a tremble of 1e-5 m)
 * the features change while the touching region stays put: such a point keeps the identity of
 * the previous contact at the same place, as Bullet's persistent manifold matches by distance,
 * so models with memory keep their state. */
static int nearest_previous(const CollisionContact *c, const CollisionContact *prev, int prev_count,
                            const bool *taken, double reach) {
    int best = -1;
    double best_d2 = reach * reach;
    for (int j = 0; j < prev_count; j++) {
        if (taken[j])
            continue;
        Vec3 da = vec3_sub(c->point.point_a, prev[j].point.point_a);
        Vec3 db = vec3_sub(c->point.point_b, prev[j].point.point_b);
        double d2 = fmax(vec3_dot(da, da), vec3_dot(db, db));
        if (d2 <= best_d2) {
            best_d2 = d2;
            best = j;
        }
    }
    return best;
}

/* Radius of a shape's round core (sphere, capsule): its contact anchor is the core point. */
static double core_radius(const Shape *s) {
    return s->kind == SHAPE_SPHERE || s->kind == SHAPE_CAPSULE ? s->radius : 0.0;
}

static inline Vec3 rotate(const Mat3 *r, Vec3 v) {
    return (Vec3){r->m[0][0] * v.x + r->m[0][1] * v.y + r->m[0][2] * v.z,
                  r->m[1][0] * v.x + r->m[1][1] * v.y + r->m[1][2] * v.z,
                  r->m[2][0] * v.x + r->m[2][1] * v.y + r->m[2][2] * v.z};
}

static inline Vec3 rotate_inv(const Mat3 *r, Vec3 v) {
    return (Vec3){r->m[0][0] * v.x + r->m[1][0] * v.y + r->m[2][0] * v.z,
                  r->m[0][1] * v.x + r->m[1][1] * v.y + r->m[2][1] * v.z,
                  r->m[0][2] * v.x + r->m[1][2] * v.y + r->m[2][2] * v.z};
}

/* The body-fixed anchors of a full test's contacts c[0..count) of pair (a, b). */
static void store_anchors(const CollisionWorld *w, int a, int b, bool normal_on_a,
                          const CollisionContact *c, ContactAnchor *out, int count) {
    Pose pa = w->per_body.poses[a], pb = w->per_body.poses[b];
    double ra = core_radius(&w->per_body.shapes[a]), rb = core_radius(&w->per_body.shapes[b]);
    for (int k = 0; k < count; k++) {
        Vec3 n = c[k].normal;
        out[k] = (ContactAnchor){
            .core_a = pose_apply_inv(pa, vec3_mad(c[k].point.point_a, ra, n)),
            .core_b = pose_apply_inv(pb, vec3_mad(c[k].point.point_b, -rb, n)),
            .normal = quat_rotate_inv(normal_on_a ? pa.q : pb.q, n),
            .normal_on_a = normal_on_a,
        };
    }
}

/* Pose of pair (a, b)'s smaller body in the other's frame, and the reach of the pair's anchors
 * from the smaller body's origin: its bounding radius plus the margin holds every contact
 * point, and the other body's round core lies up to its radius beyond. */
static PairFrame pair_frame(const CollisionWorld *w, int a, int b, double *reach) {
    int small = w->per_body.radii[a] <= w->per_body.radii[b] ? a : b, other = small == a ? b : a;
    Pose ps = w->per_body.poses[small], po = w->per_body.poses[other];
    *reach =
        w->per_body.radii[small] + pair_margin(w, a, b) + core_radius(&w->per_body.shapes[other]);
    return (PairFrame){.t = rotate_inv(&w->per_body.rotations[other], vec3_sub(ps.p, po.p)),
                       .q = quat_mul(quat_conj(po.q), ps.q),
                       .valid = true};
}

/* Bound on the displacement, relative to the other body, of a point within reach of the
 * smaller body's origin between frames then and now: the translation plus the turn times the
 * reach, the turn 2 atan(s / |w|) of the quaternion between them bounded by 2 s / |w|. */
static double frame_motion(PairFrame then, PairFrame now, double reach) {
    Quat dq = quat_mul(quat_conj(then.q), now.q);
    double s = sqrt(dq.x * dq.x + dq.y * dq.y + dq.z * dq.z);
    return vec3_norm(vec3_sub(now.t, then.t)) + 2.0 * s / fabs(dq.w) * reach;
}

/* Pairs whose full test costs more than a refresh: any involving a box, hull, polygon or mesh
 * (two round shapes, or a round shape and a plane, are a few dot products either way). */
static bool refresh_pays(const CollisionWorld *w, int a, int b) {
    ShapeKind ka = w->per_body.shapes[a].kind, kb = w->per_body.shapes[b].kind;
    bool round_a = ka == SHAPE_SPHERE || ka == SHAPE_CAPSULE || ka == SHAPE_PLANE;
    bool round_b = kb == SHAPE_SPHERE || kb == SHAPE_CAPSULE || kb == SHAPE_PLANE;
    return !(round_a && round_b);
}

/* Appends pair (a, b)'s previous contacts prev[0..count) rebuilt from their anchors at the
 * current poses (file comment), when the pair moved at most coherence_tolerance since frame
 * `then` and every rebuilt point stays within the margin; otherwise appends nothing and returns
 * false: the pair needs a full test. */
static bool refresh_pair(CollisionWorld *w, int a, int b, PairFrame then,
                         const CollisionContact *prev, const ContactAnchor *anchors, int count) {
    double reach;
    PairFrame now = pair_frame(w, a, b, &reach);
    if (!(frame_motion(then, now, reach) <= w->desc.coherence_tolerance))
        return false;
    if (count == 0)
        return true;
    reserve_contacts_or_die(w, w->output.contact_count + count);
    Vec3 ca = w->per_body.poses[a].p, cb = w->per_body.poses[b].p;
    const Mat3 *rot_a = &w->per_body.rotations[a], *rot_b = &w->per_body.rotations[b];
    double ra = core_radius(&w->per_body.shapes[a]), rb = core_radius(&w->per_body.shapes[b]);
    CollisionContact *out = &w->output.contacts[w->output.contact_count];
    Vec3 n = {0, 0, 0}, t1 = {0, 0, 0}, t2 = {0, 0, 0};
    for (int k = 0; k < count; k++) {
        /* a mesh's manifold may hold several faces: each anchor keeps its own normal */
        Vec3 nk = rotate(anchors[k].normal_on_a ? rot_a : rot_b, anchors[k].normal);
        if (k == 0 || memcmp(&anchors[k].normal, &anchors[k - 1].normal, sizeof(Vec3)) != 0) {
            n = nk;
            vec3_tangent_basis(n, &t1, &t2);
        }
        Vec3 qa = vec3_mad(vec3_add(ca, rotate(rot_a, anchors[k].core_a)), -ra, n);
        Vec3 qb = vec3_mad(vec3_add(cb, rotate(rot_b, anchors[k].core_b)), rb, n);
        double d = vec3_dot(vec3_sub(qa, qb), n);
        if (!(d < pair_margin(w, a, b)))
            return false; /* leaving the margin: the full test decides what remains */
        out[k] = prev[k];
        out[k].normal = n;
        out[k].tangent1 = t1;
        out[k].tangent2 = t2;
        out[k].point.point_a = qa;
        out[k].point.point_b = qb;
        out[k].point.distance = d;
        out[k].age++;
    }
    memcpy(&w->output.anchors[w->output.contact_count], anchors, sizeof *anchors * (size_t)count);
    w->output.contact_count += count;
    return true;
}

/* Appends pair (a, b)'s contacts from manifold m, matched against prev[0..prev_count): by feature
 * first, then by position (nearest_previous). */
static void match_pair(CollisionWorld *w, int a, int b, const Manifold *m,
                       const CollisionContact *prev, int prev_count, bool anchor) {
    ISSIM_ASSERT(prev_count <= MANIFOLD_MAX_POINTS && m->count <= MANIFOLD_MAX_POINTS);
    bool taken[MANIFOLD_MAX_POINTS] = {false};
    CollisionContact *out = m->count > 0 ? &w->output.contacts[w->output.contact_count] : NULL;
    Vec3 t1 = {0, 0, 0}, t2 = {0, 0, 0};
    if (m->count > 0)
        vec3_tangent_basis(m->normal, &t1, &t2); /* one frame per manifold face */
    for (int k = 0; k < m->count; k++) {
        CollisionContact *c = &out[k];
        /* Every field is written (age below), and the struct has no padding (asserted at the
         * top), so contact arrays of two runs compare equal bytewise without a memset. */
        c->body_a = a;
        c->body_b = b;
        c->normal = manifold_point_normal(m, k);
        if (m->mixed_normals)
            vec3_tangent_basis(c->normal, &t1, &t2);
        c->tangent1 = t1;
        c->tangent2 = t2;
        c->point.point_a = m->points[k].point_a;
        c->point.point_b = m->points[k].point_b;
        c->point.distance = m->points[k].distance;
        c->point.feature = m->points[k].feature;
        int j = 0;
        while (j < prev_count && (taken[j] || prev[j].point.feature != m->points[k].feature))
            j++;
        if (j < prev_count) {
            taken[j] = true;
            c->id = prev[j].id;
            c->age = prev[j].age + 1;
        } else {
            c->id = 0; /* matched by position below, or new */
            c->age = 0;
        }
    }
    for (int k = 0; k < m->count; k++) {
        CollisionContact *c = &out[k];
        if (c->id != 0)
            continue;
        int j = nearest_previous(c, prev, prev_count, taken, w->desc.margin);
        if (j >= 0) {
            taken[j] = true;
            c->id = prev[j].id;
            c->age = prev[j].age + 1;
        } else {
            c->id = w->output.next_id++;
            if (w->output.next_id == 0) /* after 2^32 - 1 contacts; 0 is never an id */
                w->output.next_id = 1;
            c->age = 0;
            w->stats.began++;
        }
    }
    for (int k = 1; k < m->count; k++) { /* by id: at most MANIFOLD_MAX_POINTS */
        CollisionContact x = out[k];
        int j = k - 1;
        while (j >= 0 && out[j].id > x.id) {
            out[j + 1] = out[j];
            j--;
        }
        out[j + 1] = x;
    }
    if (anchor) /* only a pair that can be refreshed reads them */
        store_anchors(w, a, b, m->normal_owner == MANIFOLD_NORMAL_OF_A, out,
                      &w->output.anchors[w->output.contact_count], m->count);
    w->output.contact_count += m->count;
    for (int j = 0; j < prev_count; j++) {
        if (!taken[j])
            end_contact(w, prev[j].id);
    }
}

static bool pose_unchanged(Pose a, Pose b) {
    return a.p.x == b.p.x && a.p.y == b.p.y && a.p.z == b.p.z && a.q.w == b.q.w && a.q.x == b.q.x &&
           a.q.y == b.q.y && a.q.z == b.q.z;
}

/* A body is restless when it moved farther than rest_tolerance (any of its points) from the pose
 * its contacts were last computed at. With rest_tolerance 0 only a body whose pose is exactly
 * the same is at rest (a sleeping body): carrying its pairs' contacts is then exact. */
static void mark_restless(CollisionWorld *w) {
    double tol = w->desc.rest_tolerance;
    for (int i = 0; i < w->per_body.body_count; i++) {
        Pose now = w->per_body.poses[i], rest = w->per_body.rest_poses[i];
        if (!w->per_body.rest_valid[i]) {
            w->per_body.restless[i] = true;
            continue;
        }
        if (!(tol > 0.0)) {
            w->per_body.restless[i] = !pose_unchanged(now, rest);
            continue;
        }
        double shift = vec3_norm(vec3_sub(now.p, rest.p));
        double dot =
            fabs(now.q.w * rest.q.w + now.q.x * rest.q.x + now.q.y * rest.q.y + now.q.z * rest.q.z);
        double angle = 2.0 * acos(fmin(1.0, dot));
        if (angle > 0.0)
            shift += angle * w->per_body.radii[i]; /* infinite radius: any turn of a plane counts */
        w->per_body.restless[i] = !(shift <= tol);
    }
}

/* Appends a pair's previous contacts (and their anchors) unchanged but one update older. */
static void carry_pair(CollisionWorld *w, const CollisionContact *prev,
                       const ContactAnchor *anchors, int count) {
    if (count == 0)
        return;
    reserve_contacts_or_die(w, w->output.contact_count + count);
    if (w->desc.coherence_tolerance > 0.0)
        memcpy(&w->output.anchors[w->output.contact_count], anchors,
               sizeof *anchors * (size_t)count);
    for (int k = 0; k < count; k++) {
        w->output.contacts[w->output.contact_count] = prev[k];
        w->output.contacts[w->output.contact_count].age++;
        w->output.contact_count++;
    }
}

/* Every body exactly where the last update saw it (rest tolerance 0) and the broad phase's pairs
 * unchanged: the pairs, and so every contact, are the last update's (a sleeping pile). */
static bool world_unchanged(const CollisionWorld *w) {
    if (w->desc.rest_tolerance > 0.0 || !w->updated || !broadphase_pairs_unchanged(w->bp))
        return false;
    for (int i = 0; i < w->per_body.body_count; i++)
        if (!w->per_body.rest_valid[i] ||
            !pose_unchanged(w->per_body.poses[i], w->per_body.rest_poses[i]))
            return false;
    return true;
}

/* The last update's contacts stay, one update older; nothing began or ended. */
static void carry_everything(CollisionWorld *w, double t0) {
    for (int k = 0; k < w->output.contact_count; k++)
        w->output.contacts[k].age++;
    w->output.ended_count = 0;
    w->stats.began = 0;
    w->stats.ended = 0;
    w->stats.carried_pairs = w->pairing.pair_count;
    w->stats.refreshed_pairs = 0;
    w->stats.parallel_pairs = 0;
    w->stats.broad_seconds = issim_wall_time() - t0;
    w->stats.narrow_seconds = 0.0;
}

static bool is_held(const CollisionWorld *w, int a, int b) {
    for (int i = 0; i < w->pairing.held_count; i++)
        if ((w->pairing.held[i][0] == a && w->pairing.held[i][1] == b) ||
            (w->pairing.held[i][0] == b && w->pairing.held[i][1] == a))
            return true;
    return false;
}

void collision_world_hold_pairs(CollisionWorld *w, const int (*pairs)[2], int count) {
    w->pairing.held_count = count < COLLISION_HELD_PAIRS_MAX ? count : COLLISION_HELD_PAIRS_MAX;
    if (w->pairing.held_count > 0)
        memcpy(w->pairing.held, pairs, sizeof(int[2]) * (size_t)w->pairing.held_count);
}

static void test_listed_pairs(void *ctx, int begin, int end) {
    CollisionWorld *w = ctx;
    for (int k = begin; k < end; k++) {
        int i = w->parallel.full[k], a = w->pairing.pairs[i].a, b = w->pairing.pairs[i].b;
        w->parallel.found[i] =
            collide_shapes(&w->per_body.shapes[a], w->per_body.poses[a], &w->per_body.shapes[b],
                           w->per_body.poses[b], pair_margin(w, a, b), &w->parallel.manifolds[i]);
    }
}

/* Tests in parallel the pairs the serial walk of collision_world_update will test in full: those
 * neither carried nor refresh candidates (a refresh candidate that fails is tested in the walk).
 * The walk's decisions are made here with the same cursor over the last update's pairs. Only
 * pairs with a box, hull, polygon or mesh are worth a slot: two round shapes cost a few dot
 * products, less than writing and reading back their manifold, so the walk tests them. */
static void parallel_narrow(CollisionWorld *w, bool coherent) {
    w->parallel.full_count = 0;
    if (!w->parallel.pool || w->pairing.pair_count < PARALLEL_MIN_PAIRS)
        return;
    grow_or_die((void **)&w->parallel.found, &w->parallel.found_cap, w->pairing.pair_count,
                sizeof *w->parallel.found);
    grow_or_die((void **)&w->parallel.full, &w->parallel.full_cap, w->pairing.pair_count,
                sizeof *w->parallel.full);
    int tested_cursor = 0;
    for (int i = 0; i < w->pairing.pair_count; i++) {
        int a = w->pairing.pairs[i].a, b = w->pairing.pairs[i].b;
        uint64_t key = pair_key(a, b);
        w->parallel.found[i] = NOT_PRECOMPUTED;
        while (tested_cursor < w->pairing.tested_count &&
               pair_key(w->pairing.tested[tested_cursor].a, w->pairing.tested[tested_cursor].b) <
                   key)
            tested_cursor++;
        bool was_tested =
            tested_cursor < w->pairing.tested_count &&
            pair_key(w->pairing.tested[tested_cursor].a, w->pairing.tested[tested_cursor].b) == key;
        if (was_tested &&
            ((!w->per_body.restless[a] && !w->per_body.restless[b]) || is_held(w, a, b)))
            continue;
        if (!refresh_pays(w, a, b))
            continue; /* round shapes: cheaper tested in the walk */
        if (coherent && was_tested && w->pairing.tested_frames[tested_cursor].valid)
            continue;
        w->parallel.full[w->parallel.full_count++] = i;
    }
    if (w->parallel.full_count < PARALLEL_MIN_PAIRS)
        return; /* found[] stays NOT_PRECOMPUTED: the walk tests them */
    grow_or_die((void **)&w->parallel.manifolds, &w->parallel.manifold_cap, w->pairing.pair_count,
                sizeof *w->parallel.manifolds);
    task_pool_for(w->parallel.pool, w->parallel.full_count, PARALLEL_GRAIN, test_listed_pairs, w);
}

void collision_world_update(CollisionWorld *w) {
    double t0 = issim_wall_time();
    for (int i = 0; i < w->per_body.body_count; i++) {
        if (w->per_body.moved[i]) {
            w->per_body.rotations[i] = quat_to_mat3(w->per_body.poses[i].q);
            w->per_body.boxes[i] = proxy_box(w, i);
            broadphase_move(w->bp, w->per_body.proxies[i], w->per_body.boxes[i]);
            w->per_body.moved[i] = false;
        }
    }
    if (world_unchanged(w)) {
        carry_everything(w, t0);
        return;
    }
    w->pairing.pair_count = 0;
    w->pairing.fat_pairs = 0;
    broadphase_pairs(w->bp, collect_pair, w);
    double t1 = issim_wall_time();

    /* The last update's contacts become the previous ones; the other buffer is refilled. */
    CollisionContact *tmp = w->output.previous;
    ContactAnchor *tmp_anchors = w->output.previous_anchors;
    int tmp_cap = w->output.previous_cap;
    w->output.previous = w->output.contacts;
    w->output.previous_anchors = w->output.anchors;
    w->output.previous_cap = w->output.contact_cap;
    w->output.previous_count = w->output.contact_count;
    w->output.contacts = tmp;
    w->output.anchors = tmp_anchors;
    w->output.contact_cap = tmp_cap;
    w->output.contact_count = 0;
    w->output.ended_count = 0;
    w->stats.began = 0;
    int touching = 0;
    const CollisionContact *prev = w->output.previous;
    const ContactAnchor *prev_anchors = w->output.previous_anchors;
    int np = w->output.previous_count, cursor = 0, tested_cursor = 0, carried = 0, refreshed = 0;
    /* Anchors and frames are kept only with coherence on (nothing else reads them); they are
     * used from the second update on. */
    bool anchored = w->desc.coherence_tolerance > 0.0, coherent = anchored && w->updated;
    grow_or_die((void **)&w->pairing.frames, &w->pairing.frame_cap, w->pairing.pair_count + 1,
                sizeof *w->pairing.frames);
    mark_restless(w);
    parallel_narrow(w, coherent);
    bool precomputed = w->parallel.full_count >= PARALLEL_MIN_PAIRS;
    for (int i = 0; i < w->pairing.pair_count; i++) {
        int a = w->pairing.pairs[i].a, b = w->pairing.pairs[i].b;
        uint64_t key = pair_key(a, b);
        /* Previous contacts of pairs before this one: their pair has left the broad phase. */
        while (cursor < np && pair_key(prev[cursor].body_a, prev[cursor].body_b) < key)
            end_contact(w, prev[cursor++].id);
        int first = cursor;
        while (cursor < np && pair_key(prev[cursor].body_a, prev[cursor].body_b) == key)
            cursor++;
        while (tested_cursor < w->pairing.tested_count &&
               pair_key(w->pairing.tested[tested_cursor].a, w->pairing.tested[tested_cursor].b) <
                   key)
            tested_cursor++;
        bool was_tested =
            tested_cursor < w->pairing.tested_count &&
            pair_key(w->pairing.tested[tested_cursor].a, w->pairing.tested[tested_cursor].b) == key;
        if (was_tested &&
            ((!w->per_body.restless[a] && !w->per_body.restless[b]) || is_held(w, a, b))) {
            /* Both bodies within rest_tolerance of the poses their contacts were computed at:
             * the contacts carry over unchanged (a resting pile costs no narrow phase). */
            carry_pair(w, &prev[first], &prev_anchors[first], cursor - first);
            if (anchored)
                w->pairing.frames[i] = w->pairing.tested_frames[tested_cursor];
            touching += cursor > first;
            carried++;
            continue;
        }
        if (coherent && was_tested && w->pairing.tested_frames[tested_cursor].valid &&
            refresh_pays(w, a, b) &&
            refresh_pair(w, a, b, w->pairing.tested_frames[tested_cursor], &prev[first],
                         &prev_anchors[first], cursor - first)) {
            w->pairing.frames[i] =
                w->pairing.tested_frames[tested_cursor]; /* still the full test's */
            touching += cursor > first;
            refreshed++;
            continue;
        }
        /* Round-round and round-plane pairs are always tested in full: no frame, no anchors. */
        bool anchor = anchored && refresh_pays(w, a, b);
        double reach;
        w->pairing.frames[i].valid = false;
        if (anchor)
            w->pairing.frames[i] = pair_frame(w, a, b, &reach);
        Manifold local;
        Manifold *mp = &local;
        int n;
        if (precomputed && w->parallel.found[i] != NOT_PRECOMPUTED) {
            mp = &w->parallel.manifolds[i];
            n = w->parallel.found[i];
        } else {
            n = collide_shapes(&w->per_body.shapes[a], w->per_body.poses[a], &w->per_body.shapes[b],
                               w->per_body.poses[b], pair_margin(w, a, b), mp);
        }
        if (n <= 0) {
            mp->count = 0;
        } else {
            touching++;
            reserve_contacts_or_die(w, w->output.contact_count + n);
        }
        match_pair(w, a, b, mp, cursor > first ? &prev[first] : NULL, cursor - first, anchor);
    }
    while (cursor < np)
        end_contact(w, prev[cursor++].id);
    /* The pairs tested now (or carried) are the reference for the next update; bodies that
     * moved get new rest poses. */
    grow_or_die((void **)&w->pairing.tested, &w->pairing.tested_cap, w->pairing.pair_count + 1,
                sizeof *w->pairing.tested);
    if (w->pairing.pair_count > 0)
        memcpy(w->pairing.tested, w->pairing.pairs,
               sizeof *w->pairing.pairs * (size_t)w->pairing.pair_count);
    w->pairing.tested_count = w->pairing.pair_count;
    PairFrame *frames = w->pairing.tested_frames; /* the frames are swapped, not copied */
    int frame_cap = w->pairing.tested_frame_cap;
    w->pairing.tested_frames = w->pairing.frames;
    w->pairing.tested_frame_cap = w->pairing.frame_cap;
    w->pairing.frames = frames;
    w->pairing.frame_cap = frame_cap;
    for (int i = 0; i < w->per_body.body_count; i++) {
        if (w->per_body.restless[i]) {
            w->per_body.rest_poses[i] = w->per_body.poses[i];
            w->per_body.rest_valid[i] = true;
        }
    }
    w->stats.carried_pairs = carried;
    w->stats.refreshed_pairs = refreshed;
    w->stats.parallel_pairs = precomputed ? w->parallel.full_count : 0;
    double t2 = issim_wall_time();

    w->stats.bodies = w->per_body.body_count;
    w->stats.broad_pairs = w->pairing.fat_pairs;
    w->stats.touching_pairs = touching;
    w->stats.contacts = w->output.contact_count;
    w->stats.ended = w->output.ended_count;
    w->stats.broad_seconds = t1 - t0;
    w->stats.narrow_seconds = t2 - t1;
    w->updated = true;
}

int collision_world_threads(const CollisionWorld *w) {
    return task_pool_threads(w->parallel.pool);
}

const CollisionContact *collision_world_contacts(const CollisionWorld *w, int *count) {
    *count = w->output.contact_count;
    return w->output.contacts;
}

const uint32_t *collision_world_ended(const CollisionWorld *w, int *count) {
    *count = w->output.ended_count;
    return w->output.ended;
}

uint32_t collision_world_next_id(const CollisionWorld *w) {
    return w->output.next_id;
}

IssimStatus collision_world_restore_identity(CollisionWorld *w, const CollisionContact *contacts,
                                             int count, uint32_t next_id, IssimError *err) {
    if (count < 0 || (count > 0 && !contacts))
        return issim_error_set(err, ISSIM_ERR_INVALID, "collision world: bad identity (%d)", count);
    if (!reserve_contacts(w, count + 1))
        return issim_error_set(err, ISSIM_ERR_NOMEM,
                               "collision world: out of memory restoring %d contacts", count);
    if (count > 0)
        memcpy(w->output.contacts, contacts, sizeof *contacts * (size_t)count);
    /* No anchors or frames come with a report: a held pair carries its contacts without them,
     * and no pair is refreshed before its next full test. */
    memset(w->output.anchors, 0, sizeof *w->output.anchors * (size_t)(count + 1));
    for (int i = 0; i < w->pairing.tested_count; i++)
        w->pairing.tested_frames[i].valid = false;
    w->output.contact_count = count;
    w->output.next_id = next_id != 0 ? next_id : 1;
    w->output.ended_count = 0;
    /* The carried-over shortcuts compare with the poses of the last narrow phase, which belong
     * to the discarded future: the next update tests every pair. */
    w->updated = false;
    for (int i = 0; i < w->per_body.body_count; i++)
        w->per_body.rest_valid[i] = false;
    return ISSIM_OK;
}

CollisionStats collision_world_stats(const CollisionWorld *w) {
    CollisionStats s = w->stats;
    s.bodies = w->per_body.body_count;
    return s;
}

/* The coherence state's bytes (collision_world_save_coherence): a header, then the bodies' rest
 * poses and flags, the tested pairs and their frames, the contacts' anchors, each part 16-byte
 * aligned so the arrays can be copied in place. */
typedef struct CoherenceHeader {
    uint32_t magic;
    int body_count, contact_count, tested_count;
    bool updated;
} CoherenceHeader;

#define COHERENCE_MAGIC 0x636f6831u /* "coh1" */

static size_t align16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

static size_t coherence_bytes(int bodies, int contacts, int tested) {
    return align16(sizeof(CoherenceHeader)) + align16(sizeof(Pose) * (size_t)bodies) +
           align16(sizeof(bool) * (size_t)bodies) + align16(sizeof(WorldPair) * (size_t)tested) +
           align16(sizeof(PairFrame) * (size_t)tested) +
           align16(sizeof(ContactAnchor) * (size_t)contacts);
}

size_t collision_world_coherence_size(const CollisionWorld *w) {
    if (!(w->desc.coherence_tolerance > 0.0))
        return 0;
    return coherence_bytes(w->per_body.body_count, w->output.contact_count,
                           w->pairing.tested_count);
}

static unsigned char *put_bytes(unsigned char *at, const void *src, size_t bytes) {
    if (bytes > 0)
        memcpy(at, src, bytes);
    return at + align16(bytes);
}

static const unsigned char *get_bytes(void *dst, const unsigned char *at, size_t bytes) {
    if (bytes > 0)
        memcpy(dst, at, bytes);
    return at + align16(bytes);
}

IssimStatus collision_world_save_coherence(const CollisionWorld *w, void *buf, size_t size,
                                           IssimError *err) {
    size_t need = collision_world_coherence_size(w);
    if (size < need || (need > 0 && !buf))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "collision world: the coherence state needs %zu bytes, got %zu",
                               need, size);
    if (need == 0)
        return ISSIM_OK;
    CoherenceHeader h = {.magic = COHERENCE_MAGIC,
                         .body_count = w->per_body.body_count,
                         .contact_count = w->output.contact_count,
                         .tested_count = w->pairing.tested_count,
                         .updated = w->updated};
    unsigned char *p = put_bytes(buf, &h, sizeof h);
    p = put_bytes(p, w->per_body.rest_poses, sizeof(Pose) * (size_t)w->per_body.body_count);
    p = put_bytes(p, w->per_body.rest_valid, sizeof(bool) * (size_t)w->per_body.body_count);
    p = put_bytes(p, w->pairing.tested, sizeof(WorldPair) * (size_t)w->pairing.tested_count);
    p = put_bytes(p, w->pairing.tested_frames, sizeof(PairFrame) * (size_t)w->pairing.tested_count);
    put_bytes(p, w->output.anchors, sizeof(ContactAnchor) * (size_t)w->output.contact_count);
    return ISSIM_OK;
}

/* The saved pairs name bodies of this world, in the (body_a, body_b) order the update walks. */
static bool pairs_fit(const WorldPair *pairs, int count, int bodies) {
    for (int i = 0; i < count; i++) {
        if (pairs[i].a < 0 || pairs[i].a >= bodies || pairs[i].b < 0 || pairs[i].b >= bodies)
            return false;
        if (i > 0 && pair_key(pairs[i - 1].a, pairs[i - 1].b) >= pair_key(pairs[i].a, pairs[i].b))
            return false;
    }
    return true;
}

IssimStatus collision_world_restore_coherence(CollisionWorld *w, const void *buf, size_t size,
                                              IssimError *err) {
    if (size == 0)
        return ISSIM_OK;
    CoherenceHeader h;
    if (!buf || size < sizeof h)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "collision world: a coherence state of %zu bytes is truncated",
                               size);
    memcpy(&h, buf, sizeof h);
    if (h.magic != COHERENCE_MAGIC || h.body_count != w->per_body.body_count ||
        h.contact_count != w->output.contact_count || h.tested_count < 0 ||
        size != coherence_bytes(h.body_count, h.contact_count, h.tested_count) ||
        !(w->desc.coherence_tolerance > 0.0))
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "collision world: the coherence state (%d bodies, %d contacts, %zu "
                               "bytes) does not fit this world (%d bodies, %d contacts, coherence "
                               "tolerance %g)",
                               h.body_count, h.contact_count, size, w->per_body.body_count,
                               w->output.contact_count, w->desc.coherence_tolerance);
    int need = h.tested_count + 1;
    if (!issim_array_reserve((void **)&w->pairing.tested, &w->pairing.tested_cap, need,
                             sizeof *w->pairing.tested) ||
        !issim_array_reserve((void **)&w->pairing.tested_frames, &w->pairing.tested_frame_cap, need,
                             sizeof *w->pairing.tested_frames) ||
        !issim_array_reserve((void **)&w->pairing.pairs, &w->pairing.pair_cap, need,
                             sizeof *w->pairing.pairs))
        return issim_error_set(err, ISSIM_ERR_NOMEM,
                               "collision world: out of memory restoring %d pairs", h.tested_count);
    const unsigned char *p = (const unsigned char *)buf + align16(sizeof h);
    const unsigned char *pairs = p + align16(sizeof(Pose) * (size_t)h.body_count) +
                                 align16(sizeof(bool) * (size_t)h.body_count);
    get_bytes(w->pairing.tested, pairs,
              sizeof(WorldPair) * (size_t)h.tested_count); /* buf: any alignment */
    if (!pairs_fit(w->pairing.tested, h.tested_count, w->per_body.body_count)) {
        w->pairing.tested_count = 0; /* as restore_identity left it: every pair tested in full */
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "collision world: the coherence state names pairs outside the %d "
                               "bodies or out of order",
                               w->per_body.body_count);
    }
    p = get_bytes(w->per_body.rest_poses, p, sizeof(Pose) * (size_t)h.body_count);
    p = get_bytes(w->per_body.rest_valid, p, sizeof(bool) * (size_t)h.body_count);
    p += align16(sizeof(WorldPair) * (size_t)h.tested_count);
    p = get_bytes(w->pairing.tested_frames, p, sizeof(PairFrame) * (size_t)h.tested_count);
    get_bytes(w->output.anchors, p, sizeof(ContactAnchor) * (size_t)h.contact_count);
    w->pairing.tested_count = h.tested_count;
    /* The pair list of the saved update (only carry_everything's statistics read it). */
    memcpy(w->pairing.pairs, w->pairing.tested, sizeof *w->pairing.pairs * (size_t)h.tested_count);
    w->pairing.pair_count = h.tested_count;
    w->updated = h.updated;
    return ISSIM_OK;
}
