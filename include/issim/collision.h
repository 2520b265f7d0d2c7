/* issim collision: shapes, broad and narrow phase, the signed minimum translation distance,
 * contact manifolds with persistent identity (000 3.6 and App. B.4.3; 004 4.2.2).
 *
 * Conventions. A shape lives in its body's frame; a Pose (p, q) maps body to world. For a pair
 * (A, B) every contact normal points from B to A: the direction in which A must move to
 * separate. The signed minimum translation distance (MTD, 000 3.6 Definition 1) is positive
 * while the shapes are apart (their Euclidean distance) and negative while they overlap (minus
 * the penetration depth: the shortest translation that makes them just touch).
 *
 * Geometry kinds: sphere, capsule (the seeds' rounded bar is a capsule: shape_bar), box,
 * half-space (plane), convex hull (from points or an .obj), planar convex polygon (2D scenes:
 * a polygon in the body's x-z plane, colliding in that plane), static triangle mesh
 * (environments). Analytic routines handle the pairs that have them; GJK + EPA handle the other
 * convex pairs; meshes are tested triangle by triangle below a bounding-volume tree.
 *
 * Threading: shapes, hulls and meshes are immutable after creation and may be read from any
 * thread. A CollisionWorld is used by one thread at a time (the collision-manager thread, or
 * the engine in lock-step mode).
 */
#ifndef ISSIM_COLLISION_H
#define ISSIM_COLLISION_H

#include "issim/core.h"
#include "issim/math.h"

typedef struct Pose {
    Vec3 p;
    Quat q;
} Pose;

static inline Pose pose_identity(void) {
    return (Pose){{0, 0, 0}, {1, 0, 0, 0}};
}
static inline Vec3 pose_apply(Pose pose, Vec3 v) {
    return vec3_add(pose.p, quat_rotate(pose.q, v));
}
static inline Vec3 pose_apply_inv(Pose pose, Vec3 v) {
    return quat_rotate_inv(pose.q, vec3_sub(v, pose.p));
}

typedef struct Aabb {
    Vec3 min, max;
} Aabb;

/* ===== Convex hulls and triangle meshes (Owned by their creator, immutable) ===== */

typedef struct HullFace {
    Vec3 normal;   /* outward, unit */
    double offset; /* normal . x = offset on the face plane */
    int first;     /* index into face_vertices */
    int count;     /* vertices of the face, counter-clockwise seen from outside */
} HullFace;

typedef struct Hull {
    int vertex_count;
    Vec3 *vertices;
    int face_count;
    HullFace *faces;
    int *face_vertices;
    Vec3 centroid;
    Vec3 box_center, box_half; /* the vertices' bounds in the hull's frame */
} Hull;

/* Convex hull of points (quickhull; coplanar faces merged). NULL with err for fewer than 4
 * non-coplanar points. */
Hull *hull_create(const Vec3 *points, int count, IssimError *err);
/* Hull of the vertices of a Wavefront .obj file ("v x y z" lines; faces ignored). */
Hull *hull_load_obj(const char *path, IssimError *err);
void hull_destroy(Hull *hull);

typedef struct TriMesh TriMesh;

/* A static triangle mesh with its bounding-volume tree. Triangles are counter-clockwise seen
 * from the side the normal points to. */
TriMesh *trimesh_create(const Vec3 *vertices, int vertex_count, const int (*triangles)[3],
                        int triangle_count, IssimError *err);
/* Vertices and faces of an .obj file (polygons are fanned into triangles). */
TriMesh *trimesh_load_obj(const char *path, IssimError *err);
void trimesh_destroy(TriMesh *mesh);
int trimesh_triangle_count(const TriMesh *mesh);
/* The three corners of triangle i (mesh frame). */
void trimesh_triangle(const TriMesh *mesh, int i, Vec3 corners[3]);
/* The vertex indices of triangle i, in the order read (counter-clockwise seen from outside). */
void trimesh_triangle_indices(const TriMesh *mesh, int i, int indices[3]);
int trimesh_vertex_count(const TriMesh *mesh);
Vec3 trimesh_vertex(const TriMesh *mesh, int i);
/* Indices of triangles whose bounds overlap box (body frame); returns the total count, writes
 * up to max. */
int trimesh_query(const TriMesh *mesh, Aabb box, int *out, int max);

/* ===== Shapes ===== */

typedef enum ShapeKind {
    SHAPE_SPHERE,
    SHAPE_CAPSULE, /* segment along local z from -half_length to +half_length, radius */
    SHAPE_BOX,
    SHAPE_PLANE, /* half-space normal . x <= offset (local frame); static only */
    SHAPE_HULL,
    SHAPE_POLYGON, /* convex polygon in the local x-z plane (planar scenes) */
    SHAPE_MESH,    /* static only */
    SHAPE_KIND_COUNT
} ShapeKind;

#define SHAPE_POLYGON_MAX 16

typedef struct Shape {
    ShapeKind kind;
    double radius;      /* sphere, capsule */
    double half_length; /* capsule */
    Vec3 half_extents;  /* box */
    Vec3 normal;        /* plane: unit outward normal (local) */
    double offset;      /* plane: n . x = offset on the surface */
    const Hull *hull;   /* Borrowed: must outlive every use of the shape */
    int polygon_count;  /* polygon: vertices in the local x-z plane (see shape_polygon) */
    Vec3 polygon[SHAPE_POLYGON_MAX];
    const TriMesh *mesh; /* Borrowed */
} Shape;

const char *shape_kind_name(ShapeKind kind);
Shape shape_sphere(double radius);
Shape shape_capsule(double radius, double half_length);
/* The rounded bar of the seeds' experiments: total length (tip to tip) and diameter; the
 * axis is local z. shape_bar(0.2, 0.0125) is the steel bar of 000 Table 4.2. */
Shape shape_bar(double length, double diameter);
Shape shape_box(Vec3 half_extents);
Shape shape_plane(Vec3 normal, double offset);
Shape shape_hull(const Hull *hull);
/* Convex polygon in the local x-z plane (y of the points is ignored); points in order, either
 * orientation (stored counter-clockwise about +y). Polygons collide in the x-z plane only (2D):
 * with polygons, planes, spheres (as circles) and capsules whose axis lies in the plane; other
 * pairs with a polygon give no contact. */
Shape shape_polygon(const Vec3 *points, int count);
Shape shape_mesh(const TriMesh *mesh);

bool shape_is_convex(const Shape *s);
/* World bounds. Planes get huge (1e30) bounds. */
Aabb shape_aabb(const Shape *s, Pose pose);
/* Farthest point of a convex shape in world direction d (need not be unit). */
Vec3 shape_support(const Shape *s, Pose pose, Vec3 d);
/* Mass and principal inertia about the centre of mass for a uniform density (planes and meshes:
 * zero). The centre of mass of boxes, spheres, capsules and polygons is the local origin; a
 * hull's is hull->centroid. */
void shape_mass_properties(const Shape *s, double density, double *mass, Vec3 *inertia);

/* ===== Narrow phase ===== */

/* Four per face; a body against a mesh may touch up to MESH_MAX_FACES faces at once (a bolt on
 * a hole's floor and against its wall), each with its own normal. */
#define MANIFOLD_FACE_POINTS 4
#define MANIFOLD_MAX_POINTS 16

typedef struct ContactPoint {
    Vec3 point_a;     /* world, on A's surface */
    Vec3 point_b;     /* world, on B's surface */
    double distance;  /* signed MTD along the normal at this point: < 0 overlapping */
    uint64_t feature; /* identifies the pair of features (vertex/edge/face of A and of B)
                         producing the point; stable while those features stay in contact. A's
                         half in the high 32 bits, B's in the low: kind (0 vertex, 1 edge, 2
                         face) in each half's top two bits, the index in the low 30 */
} ContactPoint;

/* Which body the manifold's normal is fixed to: a face normal of A or of B turns with that
 * body; a free normal (round cores, edge on edge) turns with neither. The collision world's
 * coherent refresh (CollisionDesc.coherence_tolerance) turns the normal with its owner. */
typedef enum ManifoldNormalOwner {
    MANIFOLD_NORMAL_FREE = 0,
    MANIFOLD_NORMAL_OF_A,
    MANIFOLD_NORMAL_OF_B,
} ManifoldNormalOwner;

typedef struct Manifold {
    Vec3 normal; /* world, unit, from B to A; the deepest point's when the normals are mixed */
    int count;   /* 0 .. MANIFOLD_MAX_POINTS */
    ManifoldNormalOwner normal_owner;
    ContactPoint points[MANIFOLD_MAX_POINTS];
    /* A mesh's manifold may hold points of several faces: then each point has its own normal
     * (the face's), and a point's distance is measured along it. Read with
     * manifold_point_normal. */
    bool mixed_normals;
    Vec3 point_normals[MANIFOLD_MAX_POINTS];
} Manifold;

static inline Vec3 manifold_point_normal(const Manifold *m, int k) {
    return m->mixed_normals ? m->point_normals[k] : m->normal;
}

/* Contacts between two shapes whose signed distance is below margin (margin >= 0 reports
 * near-contacts too, so the engine sees them coming). Face contact gives up to four points (a
 * box resting flat has four). Returns the count (also in out->count). Any kind pair is
 * accepted; pairs of two static kinds (plane, mesh) give 0. */
int collide_shapes(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin, Manifold *out);
/* Signed minimum translation distance between two shapes (at least one convex, or a convex
 * against a plane or mesh), with the closest points (apart) or the deepest points (overlapping)
 * and the unit normal from B to A. */
double shape_distance(const Shape *a, Pose pa, const Shape *b, Pose pb, Vec3 *point_a,
                      Vec3 *point_b, Vec3 *normal);

/* GJK distance and EPA penetration for two convex shapes, exposed for tests and for pairs
 * without an analytic routine. Same contract as shape_distance. */
double gjk_epa_distance(const Shape *a, Pose pa, const Shape *b, Pose pb, Vec3 *point_a,
                        Vec3 *point_b, Vec3 *normal);

/* ===== Broad phase: dynamic AABB tree with fattened boxes ===== */

typedef struct BroadPhase BroadPhase;

/* fat_margin: how much each stored box is enlarged, so small motions do not touch the tree. */
BroadPhase *broadphase_create(double fat_margin, IssimError *err);
void broadphase_destroy(BroadPhase *bp);
/* Returns a proxy id (>= 0). user is returned in pairs. */
int broadphase_add(BroadPhase *bp, Aabb box, int user);
void broadphase_remove(BroadPhase *bp, int proxy);
/* Updates a proxy's box; the tree changes only when box leaves the proxy's fat box. Returns
 * true when the proxy moved in the tree. */
bool broadphase_move(BroadPhase *bp, int proxy, Aabb box);
/* Calls fn(user_a, user_b, ctx) once for every pair of proxies whose fat boxes overlap, with
 * user_a < user_b. Cost: proportional to the number of proxies times the log of their count
 * plus the number of pairs. */
void broadphase_pairs(BroadPhase *bp, void (*fn)(int user_a, int user_b, void *ctx), void *ctx);
/* True when broadphase_pairs would report exactly the pairs of its last call (no proxy added,
 * removed or reinserted since). */
bool broadphase_pairs_unchanged(const BroadPhase *bp);
int broadphase_proxy_count(const BroadPhase *bp);
/* Height of the tree (balance check). */
int broadphase_height(const BroadPhase *bp);

/* ===== Collision world: persistent contacts ===== */

typedef struct CollisionContact {
    int body_a, body_b;      /* body_a < body_b */
    Vec3 normal;             /* from B to A */
    Vec3 tangent1, tangent2; /* contact frame: (tangent1, tangent2, normal) right-handed */
    ContactPoint point;
    uint32_t id;  /* persistent while the contact lasts; never reused */
    uint32_t age; /* updates this contact has existed (0 = new in this update) */
} CollisionContact;

typedef struct CollisionDesc {
    double margin;     /* report contacts closer than this (m); default 1e-3 */
    double fat_margin; /* broad-phase box enlargement (m); default 0.01: a body moves 1 cm before
                        * its leaf is reinserted, and a resting pile of 5 cm bodies replays 11 pairs
                        * per body, not 43 as with 5 cm */
    /* Contacts of a pair whose two bodies both stayed within this distance (m, any point of
     * the body) of the poses the pair was last tested at are carried over without a narrow
     * phase: a resting pile costs only its broad phase. Carried points and distances are then
     * stale by at most about twice this. Default 0: only pairs of bodies whose poses are
     * exactly unchanged (sleeping or fixed) are carried, which is exact; every other pair is
     * tested every update. */
    double rest_tolerance;
    /* Temporal coherence (m): a pair whose relative pose moved less than this (any point of the
     * smaller body, relative to the other, since the pair's last full narrow test) keeps that
     * test's contacts (the same ids, the same material points on both bodies, the normal turning
     * with the body whose face it is) and only refreshes their points and distances from the
     * body-fixed anchors: each distance is the exact separation, along the normal, of the two
     * material points the last full test found. Against a full test at the same poses the
     * pair's depth (its smallest distance) differs by at most 2 * coherence_tolerance per update,
     * each refreshed distance is within coherence_tolerance of its value at the last full test,
     * and a vertex or a round core on the face carrying the normal is exact while its features
     * persist (tests/test_collision_coherence.c); a point that would newly come
     * within margin - coherence_tolerance is never missed (the pair is tested in full once it
     * moved farther), and a refreshed point that leaves the margin makes the pair tested in
     * full. Must be below margin. Default 0: every moving pair is tested in full each update
     * (exact). The refresh depends on history (when each pair was last tested in full): a
     * rewound run gives back the same contacts bit for bit only with that history restored
     * (collision_world_save_coherence / collision_world_restore_coherence). */
    double coherence_tolerance;
    /* Threads of the narrow phase (>= 1; default 1: the updating thread alone). With more, the
     * pairs tested in full that involve a box, hull, polygon or mesh are shared among a task
     * pool's threads when there are enough of them (world.c); the contacts, ids and order stay
     * the same bits for any thread count. */
    int threads;
} CollisionDesc;

typedef struct CollisionStats {
    int bodies;
    int broad_pairs;     /* pairs whose fat boxes overlap */
    int touching_pairs;  /* pairs with at least one contact */
    int carried_pairs;   /* pairs carried over at rest (rest_tolerance) */
    int refreshed_pairs; /* pairs refreshed from their anchors (coherence_tolerance) */
    int parallel_pairs;  /* pairs tested on the task pool's threads (CollisionDesc.threads) */
    int contacts;
    int began, ended; /* contacts created and removed by the last update */
    double broad_seconds, narrow_seconds;
} CollisionStats;

typedef struct CollisionWorld CollisionWorld;

CollisionDesc collision_desc_default(void);
CollisionWorld *collision_world_create(const CollisionDesc *desc, IssimError *err);
void collision_world_destroy(CollisionWorld *world);
/* Adds a body with its shape (copied; a hull or mesh it points to is Borrowed). Static bodies
 * never move and never collide with each other. Returns the body index (dense, from 0). */
int collision_world_add(CollisionWorld *world, const Shape *shape, Pose pose, bool is_static);
int collision_world_body_count(const CollisionWorld *world);
const Shape *collision_world_shape(const CollisionWorld *world, int body);
Pose collision_world_pose(const CollisionWorld *world, int body);
void collision_world_set_pose(CollisionWorld *world, int body, Pose pose);
/* How far any point of the body may move before the contacts of the next update are in use (m,
 * >= 0; 0 at creation): its pairs are tested with the margin grown by both bodies' distances, so
 * a fast body's contact is reported, at a positive distance, before the body reaches it
 * (speculative contacts; Catto, "Speculative Contacts", 2013). */
void collision_world_set_reach_ahead(CollisionWorld *world, int body, double distance);
/* Broad phase, narrow phase and contact matching. A contact keeps its id while the same
 * feature pair of the same body pair stays within the margin; a new feature pair gets a new id.
 * Deterministic: the same poses in the same order give the same contacts, ids and order. */
void collision_world_update(CollisionWorld *world);
/* The narrow phase's threads (CollisionDesc.threads). */
int collision_world_threads(const CollisionWorld *world);
/* Pairs whose contacts the next updates carry over unchanged instead of testing them (a pair a
 * reduced contact model keeps in contact itself: their shapes' contacts would only be thrown
 * away), until the next call; at most COLLISION_HELD_PAIRS_MAX. Thread: the one that updates. */
#define COLLISION_HELD_PAIRS_MAX 8
void collision_world_hold_pairs(CollisionWorld *world, const int (*pairs)[2], int count);
/* Transient: valid until the next update. Sorted by (body_a, body_b, id). */
const CollisionContact *collision_world_contacts(const CollisionWorld *world, int *count);
/* The id the next new contact will get (the world's counter). */
uint32_t collision_world_next_id(const CollisionWorld *world);
/* Makes contacts (count, sorted as collision_world_contacts returns them: a report kept from an
 * earlier update) the last update's contacts and next_id the counter, so the next update
 * matches its points against them and issues the ids it issued then: the engine's rewind to a
 * checkpoint, after which contacts keep their ids and their models' memory. The next update
 * runs every narrow phase (nothing is carried over). Not while the manager thread runs.
 * ISSIM_ERR_NOMEM when the contacts cannot be stored (the world is unchanged). */
IssimStatus collision_world_restore_identity(CollisionWorld *world,
                                             const CollisionContact *contacts, int count,
                                             uint32_t next_id, IssimError *err);
/* The coherence state (coherence_tolerance > 0): what the next update's choice between carrying,
 * refreshing and testing a pair in full reads besides the contacts (each pair's relative pose at
 * its last full test, the contacts' body-fixed anchors, the bodies' poses at their last narrow
 * test). Its size in bytes now: 0 when coherence is off (nothing to keep: every moving pair is
 * tested in full, which needs no history). Saved after an update, restored after
 * collision_world_restore_identity with the contacts of that same update, the next updates refresh
 * exactly the pairs they refreshed then and give back the same bits. */
size_t collision_world_coherence_size(const CollisionWorld *world);
/* Writes the coherence state into buf (size bytes, at least collision_world_coherence_size).
 * ISSIM_ERR_RANGE when buf is too small (nothing written). */
IssimStatus collision_world_save_coherence(const CollisionWorld *world, void *buf, size_t size,
                                           IssimError *err);
/* Restores a state written by collision_world_save_coherence (size bytes) into a world built with
 * the same bodies, after collision_world_restore_identity restored that update's contacts. A
 * state of 0 bytes restores nothing (the next update tests every pair in full). ISSIM_ERR_INVALID
 * when the bytes do not fit this world (their bodies or contacts differ; the world keeps the
 * restore_identity state), ISSIM_ERR_NOMEM when out of memory. Not while the manager thread runs.
 */
IssimStatus collision_world_restore_coherence(CollisionWorld *world, const void *buf, size_t size,
                                              IssimError *err);
/* Ids of the contacts that ended in the last update. Transient. */
const uint32_t *collision_world_ended(const CollisionWorld *world, int *count);
CollisionStats collision_world_stats(const CollisionWorld *world);

/* ===== Collision manager thread (000 App. B.4.3: a relationship manager) ===== */

/* Fills the poses of the world's bodies (only dynamic ones need to be written) with the newest
 * state and its time, and reach_ahead with how far each may move before the contacts are used
 * (collision_world_set_reach_ahead; 0 where unknown). Returns false when no new state exists
 * since *t. Called on the manager thread (threaded) or the caller's thread (synchronous); it
 * must not block (read the registry's snapshot functions). */
typedef bool (*CollisionPoseSource)(void *ctx, double *t, Pose *poses, double *reach_ahead,
                                    int body_count);

/* One published result of the manager. Transient: valid until the consumer's next take. */
typedef struct CollisionReport {
    double t;          /* time of the state the contacts were computed from */
    uint64_t sequence; /* increases by one per published report */
    int body_count;
    const Pose *poses; /* the poses used (body_count) */
    int contact_count;
    const CollisionContact *contacts; /* as collision_world_contacts */
    uint32_t next_id;                 /* collision_world_next_id after the update */
    double update_seconds;            /* wall time of the update */
} CollisionReport;

typedef struct CollisionManager CollisionManager;

/* Takes ownership of world (destroyed with the manager). */
CollisionManager *collision_manager_create(CollisionWorld *world, CollisionPoseSource source,
                                           void *ctx, IssimError *err);
void collision_manager_destroy(CollisionManager *manager);
/* Starts the manager thread: it updates whenever the source has a newer state and publishes
 * each result through a lock-free triple buffer. */
IssimStatus collision_manager_start(CollisionManager *manager, IssimError *err);
/* Stops and joins the thread. Idempotent. */
void collision_manager_stop(CollisionManager *manager);
/* Lock-step: one update on the caller's thread, published as the thread would. Returns false
 * when the source had no new state. Not while the thread runs. */
bool collision_manager_step(CollisionManager *manager);
/* Newest report not taken yet. Returns false when there is none. Thread: the single consumer
 * (the engine); never blocks. */
bool collision_manager_take(CollisionManager *manager, CollisionReport *out);
/* Reports published so far. Thread: any. */
uint64_t collision_manager_published(const CollisionManager *manager);
/* Tells a running manager that its source has a newer state: wakes it if it waits idle.
 * Thread: the producer of the source's states (the engine), after publishing one. */
void collision_manager_notify(CollisionManager *manager);
/* How long the manager's thread polls for the producer's next state before it sleeps on a
 * condition variable (0, the default: it sleeps at once). Polling spends the thread's core while
 * it waits; the collision pipeline (EngineOptions.pipeline_collision), which pokes it every step,
 * saves the wake-up's system calls with it. Thread: the owner, while the thread is stopped. */
void collision_manager_set_spin(CollisionManager *manager, double seconds);
/* Waits until more than `seen` reports are published (seen: collision_manager_published read
 * before the last take), at most max_seconds; returns whether one was. Thread: the consumer. */
bool collision_manager_wait_published(CollisionManager *manager, uint64_t seen, double max_seconds);

#endif
