/* Private declarations of the collision module, one section per source file (or family).
 *
 * Manifold convention (collision.h): for a pair (A, B) the normal points from B to A, point_a
 * lies on A's surface, point_b on B's, and distance is (point_a - point_b) . normal: negative
 * while overlapping. Every routine below follows it for the argument order it is given.
 */
#ifndef ISSIM_COLLISION_INTERNAL_H
#define ISSIM_COLLISION_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "issim/collision.h"

/* ===== Feature ids (narrow.c) =====
 *
 * A contact's feature id names the pair of features that produce it: 16 bits for A (high half)
 * and 16 for B (low half), each 2 bits of kind and 14 bits of index (indices are taken modulo
 * 2^14, so only meshes of more than 16384 triangles can alias two triangles). Rounded shapes
 * use the features of their core: a sphere is vertex 0; a capsule has vertex 0 (the -z end),
 * vertex 1 (the +z end) and edge 0 (the segment); a plane is face 0. Boxes number vertex v by
 * its sign bits (bit k set: +half_extent along axis k), edge k*4 + b1 + 2 b2 for the edge along
 * axis k whose other coordinates have sign bits b1 (axis (k+1)%3) and b2 (axis (k+2)%3), and
 * face 2k (-axis k) or 2k+1 (+axis k). Hulls number vertices and faces as in Hull; polygons
 * number vertex i as stored and edge i from vertex i to vertex i+1; meshes use the triangle
 * index as a face index. */

typedef enum FeatureKind {
    FEATURE_VERTEX = 0,
    FEATURE_EDGE = 1,
    FEATURE_FACE = 2,
} FeatureKind;

/* One body's half of a feature id: the kind in the top two bits, the index (vertex, edge, face
 * or mesh triangle) in the low 30, so meshes of up to 2^30 triangles never alias. */
typedef uint32_t FeatureHalf;

#define FEATURE_INDEX_MASK 0x3FFFFFFFu

static inline FeatureHalf feature_half(FeatureKind kind, int index) {
    return ((FeatureHalf)kind << 30) | ((FeatureHalf)index & FEATURE_INDEX_MASK);
}
static inline uint64_t feature_pair(FeatureHalf a, FeatureHalf b) {
    return ((uint64_t)a << 32) | b;
}
static inline uint64_t feature_id(FeatureKind kind_a, int index_a, FeatureKind kind_b,
                                  int index_b) {
    return feature_pair(feature_half(kind_a, index_a), feature_half(kind_b, index_b));
}
/* The id of the same contact with A and B exchanged. */
static inline uint64_t feature_swap(uint64_t f) {
    return (f >> 32) | (f << 32);
}
static inline FeatureKind feature_half_kind(FeatureHalf h) {
    return (FeatureKind)(h >> 30);
}
static inline int feature_half_index(FeatureHalf h) {
    return (int)(h & FEATURE_INDEX_MASK);
}

/* ===== Manifold helpers (narrow.c) ===== */

/* Exchanges the roles of A and B: negates the normal, swaps the points and the feature halves. */
void manifold_flip(Manifold *m);
/* Candidate i of a contact set: fills *out and returns true, or returns false when i is not a
 * candidate (too far). Called several times per index. */
typedef bool (*ContactCandidateFn)(const void *ctx, int i, ContactPoint *out);
/* Chooses at most max_keep (<= MANIFOLD_MAX_POINTS) of the candidates into out and returns how
 * many: all of them in index order when they fit; otherwise the deepest first, then the one
 * farthest from it across the normal, then the ones adding the most area to the kept polygon
 * (Gregorius, "Robust Contact Creation for Physics Simulations", GDC 2015). Ties go to the
 * lower index, so the choice is deterministic. Allocation-free for any count. */
int contact_points_select(int count, ContactCandidateFn get, const void *ctx, Vec3 normal,
                          int max_keep, ContactPoint *out);
/* The same over an array, in place; returns the new count. */
int contact_points_reduce(ContactPoint *points, int count, Vec3 normal, int max_keep);

/* Unit vector nearest to d in the normal cone of a segment with unit axis at parameter t in
 * [0, 1] (t = 0 and t = 1 are the ends): the outward directions a capsule's surface point may
 * take from its core point. Zero d gives a direction perpendicular to the axis. */
Vec3 segment_cone_direction(Vec3 axis, double t, Vec3 d);
/* Closest points of segments p0-p1 and q0-q1 (Ericson, Real-Time Collision Detection, 5.1.9):
 * parameters *s, *t in [0, 1]. */
void segment_closest_points(Vec3 p0, Vec3 p1, Vec3 q0, Vec3 q1, double *s, double *t);
/* Parameter in [0, 1] of the point of segment p0-p1 closest to x (Ericson 5.1.2). */
double segment_closest_parameter(Vec3 p0, Vec3 p1, Vec3 x);

/* ===== Analytic pair routines (narrow_round.c, narrow_box.c, narrow_polygon.c) =====
 *
 * Same contract as collide_shapes for their kinds in this order: they fill out (count, normal,
 * points with distance < margin) and return the count. margin may be +INFINITY: then at least
 * one point is returned and the smallest distance is the signed MTD (shape_distance uses
 * that). */

int collide_sphere_sphere(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                          Manifold *out);
int collide_sphere_capsule(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                           Manifold *out);
int collide_capsule_capsule(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                            Manifold *out);
int collide_sphere_box(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                       Manifold *out);
int collide_sphere_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                         Manifold *out);
int collide_capsule_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                          Manifold *out);
int collide_box_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                      Manifold *out);
int collide_hull_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                       Manifold *out);
int collide_box_box(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin, Manifold *out);
/* How much deeper than their signed minimum translation distance (overlap, m, > 0) the deepest
 * point of an overlapping box pair's manifold may lie: an edge axis near a face normal gives way
 * to the face within this much (narrow_box.c, BOX_EDGE_COS); shape_distance stays exact. */
double box_box_face_allowance(Vec3 half_a, Vec3 half_b, double overlap);
/* Planar pairs (narrow_polygon.c): computed in the world x-z plane; the normal has y = 0 and
 * each point keeps its own body's world height. A capsule collides through its axis projected
 * onto the plane, a sphere as the circle of its centre's section. */
int collide_polygon_polygon(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                            Manifold *out);
int collide_polygon_sphere(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                           Manifold *out);
int collide_polygon_capsule(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                            Manifold *out);
int collide_polygon_plane(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                          Manifold *out);

/* ===== Shapes (shape.c) ===== */

/* Mass, centre of mass (body frame) and the full inertia tensor about it (body axes) for a
 * uniform density; shape_mass_properties returns the diagonal of this tensor. */
void shape_inertia_tensor(const Shape *s, double density, double *mass, Vec3 *com, Mat3 *inertia);

/* ===== Convex pairs without an analytic manifold (gjk_manifold.c) ===== */

/* Contact manifold of two convex shapes (capsule-box, capsule-hull, sphere-hull, box-hull,
 * hull-hull) from GJK/EPA: same contract as collide_shapes (normal from B to A, points with
 * distance < margin, at most MANIFOLD_MAX_POINTS, feature ids as above). */
int collide_convex_generic(const Shape *a, Pose pa, const Shape *b, Pose pb, double margin,
                           Manifold *out);

/* ===== Triangle meshes against convex shapes (mesh collision, GJK engineer) ===== */

/* Contacts between a static mesh (A = mesh, at pose pm) and a convex shape (B = other: sphere,
 * capsule, box or hull from collide_shapes; shape_distance also passes polygons, at pose po): the
 * normal points from the other shape to the mesh (B to A), point_a lies on a mesh triangle, point_b
 * on the other shape, distance < margin; feature halves: A = the triangle (face, vertex or edge of
 * it), B = the other shape's feature. margin may be +INFINITY (shape_distance): then every triangle
 * is considered and the smallest distance is the signed distance to the mesh. Returns the count
 * (also in out->count). */
int collide_mesh(const Shape *mesh, Pose pm, const Shape *other, Pose po, double margin,
                 Manifold *out);

/* ===== GJK/EPA cores, polytope views, clipping, meshes (gjk.c, gjk_manifold.c, trimesh.c,
 * mesh_collide.c) =====
 *
 * Feature indices not fixed above: a hull's edge is numbered by its half-edge, the position in
 * face_vertices of its first vertex within the face that owns it (so each edge has two numbers,
 * one per adjacent face; a point keeps the number of the face it was clipped against or from).
 * A mesh triangle t is face t; its edge j (corner j to corner j+1) is edge 3 t + j; its corner
 * is the mesh vertex index. */

/* Farthest point of a sphere, capsule, box, hull or polygon in body-frame direction dl (not
 * zero), in the body frame; the origin for planes and meshes. Inline: GJK calls it for every
 * support point. */
static inline Vec3 shape_support_local(const Shape *s, Vec3 dl) {
    const Vec3 *v = NULL;
    int count = 0;
    switch (s->kind) {
    case SHAPE_SPHERE:
        return vec3_scale(vec3_normalize(dl), s->radius);
    case SHAPE_CAPSULE:
        return vec3_mad(vec3(0, 0, dl.z >= 0.0 ? s->half_length : -s->half_length), s->radius,
                        vec3_normalize(dl));
    case SHAPE_BOX: {
        Vec3 h = s->half_extents;
        return vec3(dl.x >= 0.0 ? h.x : -h.x, dl.y >= 0.0 ? h.y : -h.y, dl.z >= 0.0 ? h.z : -h.z);
    }
    case SHAPE_HULL:
        v = s->hull ? s->hull->vertices : NULL;
        count = s->hull ? s->hull->vertex_count : 0;
        break;
    case SHAPE_POLYGON:
        v = s->polygon;
        count = s->polygon_count;
        break;
    default: /* planes and meshes have no support mapping */
        return vec3(0, 0, 0);
    }
    Vec3 local = vec3(0, 0, 0);
    double best = -INFINITY;
    for (int i = 0; i < count; i++) {
        double t = vec3_dot(v[i], dl);
        if (t > best) {
            best = t;
            local = v[i];
        }
    }
    return local;
}

/* A convex set as GJK and EPA see it: a polytope core swept by a ball of radius `radius`
 * (sphere: a point; capsule: a segment; box, hull, polygon: the shape itself, radius 0; a mesh
 * triangle: three points). Distances of rounded shapes are therefore exact, not iterated. */
typedef struct ConvexCore {
    const Shape
        *shape;      /* Borrowed; box, hull or polygon (support by shape_support_local), or NULL */
    Pose pose;       /* of shape */
    Mat3 rotation;   /* shape: pose.q as a matrix, computed once for all the support calls */
    int point_count; /* shape NULL: 1 to 3 points (world), their convex hull is the core */
    Vec3 points[3];
    double radius;
} ConvexCore;

/* The core of a convex shape (sphere, capsule, box, hull, polygon) at pose. */
ConvexCore convex_core(const Shape *s, Pose pose);
/* Farthest point of the core (radius not included) in direction d. */
Vec3 convex_core_support(const ConvexCore *c, Vec3 d);
/* gjk_epa_distance on cores: signed MTD of the swept sets, their closest or deepest points and
 * the unit normal from B to A. */
double gjk_epa_core(const ConvexCore *a, const ConvexCore *b, Vec3 *point_a, Vec3 *point_b,
                    Vec3 *normal);
/* gjk_epa_core for callers that only need distances below limit: as soon as GJK finds an axis
 * separating the shapes by at least limit it stops and returns that axis's separation (a lower
 * bound of the distance, >= limit) with the normal along it and the current closest points of
 * its simplex. Below limit the answer is gjk_epa_core's, bit for bit. */
double gjk_epa_core_within(const ConvexCore *a, const ConvexCore *b, double limit, Vec3 *point_a,
                           Vec3 *point_b, Vec3 *normal);

/* A box or hull as a polytope in its local frame. The box arrays live inside the view, so a
 * view must not be copied (use it through the pointer polytope_view filled). */
typedef struct PolytopeView {
    bool box;
    int vertex_count;
    const Vec3 *vertices;
    int face_count;
    const HullFace *faces;
    const int *face_vertices;
    Vec3 box_vertices[8];
    HullFace box_faces[6];
} PolytopeView;

/* Fills view for a box or hull; returns false for other kinds. */
bool polytope_view(const Shape *s, PolytopeView *view);
/* Face whose outward normal is most aligned with local direction d (ties: lowest index). */
int polytope_best_face(const PolytopeView *view, Vec3 d);
/* Incident face for local direction d: of the faces around the vertex farthest along d, the
 * one most aligned with d (so the deepest vertex is on it). */
int polytope_incident_face(const PolytopeView *view, Vec3 d);
/* Feature (half of a feature id) of the polytope supporting local direction d: a vertex, an
 * edge (two vertices within rel_tol times the polytope's radius of the maximum), or a face
 * (three or more). */
FeatureHalf polytope_support_feature(const PolytopeView *view, Vec3 d, double rel_tol);
/* Feature number of edge local_edge (vertex local_edge to local_edge + 1) of face `face`: the
 * half-edge for a hull, the box numbering above for a box. */
int polytope_edge_feature(const PolytopeView *view, int face, int local_edge);

/* One vertex of a polygon being clipped (Sutherland-Hodgman) against the side planes of a
 * reference polygon. inc and ref are the feature halves of the incident and reference shape
 * that produce the point; side0/side1 name the reference sides that cut it (-1 when none: an
 * incident vertex has both -1, a point on one side has side0 = that side, a reference corner has
 * both). out_kind/out_id describe the edge from this vertex to the next: 0 = an incident edge
 * whose feature half is out_id, 1 = lying on reference side out_id. */
typedef struct ClipVertex {
    Vec3 p;
    FeatureHalf inc, ref;
    int side0, side1;
    int out_kind, out_id;
} ClipVertex;

#define CLIP_MAX 128

/* Clips poly (count vertices, capacity CLIP_MAX) against the side planes of the reference
 * polygon ref (ref_count points, counter-clockwise about the unit normal n). ref_edge[k] is the
 * feature half of side k (ref[k] to ref[k+1]), ref_vertex[k] that of corner k, inc_face the
 * incident face's feature half (for points cut out of a reference corner). Returns the new
 * count (in poly). */
int clip_polygon(ClipVertex *poly, int count, const Vec3 *ref, int ref_count, Vec3 n,
                 const FeatureHalf *ref_edge, const FeatureHalf *ref_vertex, FeatureHalf inc_face);

/* ---- Triangle meshes (trimesh.c) ---- */

/* Edge classes of a mesh triangle's edge j (bits 2 j and 2 j + 1 of trimesh_edge_flags): flat
 * (the neighbour across it is coplanar) or concave (the neighbour bends to the front side).
 * Neither: convex, a border or a non-manifold edge: a sharp feature that may push sideways. */
#define TRIMESH_EDGE_FLAT 1u
#define TRIMESH_EDGE_CONCAVE 2u

static inline unsigned trimesh_edge_class(unsigned flags, int j) {
    return (flags >> (2 * j)) & 3u;
}

/* Bounds of all vertices (mesh frame). */
Aabb trimesh_bounds(const TriMesh *mesh);
/* Edge classes of triangle i, two bits per edge as above. */
unsigned trimesh_edge_flags(const TriMesh *mesh, int i);

/* ===== Shared clipping (gjk_manifold.c) ===== */

bool clip_segment_to_polygon(const Vec3 *corners, int count, Vec3 n, Vec3 p0, Vec3 p1, double *t0,
                             double *t1, int *side0, int *side1);

/* Largest hull or mesh .obj file read (64 MiB): far beyond any collision geometry the engine
 * handles at interactive rates, small enough that a mistaken path cannot exhaust memory. */
#define OBJ_FILE_MAX_BYTES (64 << 20)

/* An .obj asset read whole into memory, as a stream for line parsing. */
typedef struct ObjFile {
    FILE *f;
    char *text;
} ObjFile;

/* Opens path if it is a regular file of at most OBJ_FILE_MAX_BYTES (never blocking on FIFOs or
 * reading endless devices) and reads it; false with a message naming path otherwise. Close with
 * obj_file_close. */
bool obj_file_open(const char *path, ObjFile *file, IssimError *err);
void obj_file_close(ObjFile *file);

#endif
