/* GJK distance and EPA penetration depth between two convex shapes: the signed minimum
 * translation distance (MTD, 000 3.6 Definition 1), positive while apart, minus the penetration
 * depth while overlapping, with the closest (or deepest) points and the unit normal from B to A.
 *
 * GJK (Gilbert, Johnson and Keerthi, "A fast procedure for computing the distance between
 * complex objects in three-dimensional space", IEEE J. Robotics and Automation 4(2), 1988)
 * walks simplices of the configuration-space obstacle A - B towards the origin. The sub-simplex
 * search is the region test of Ericson (Real-Time Collision Detection, 2005, 5.1.5 and 9.5), the
 * termination test the relative one of van den Bergen (Collision Detection in Interactive 3D
 * Environments, 2003, 4.3): |v|^2 - v.w <= eps |v|^2 bounds the relative error of |v|.
 *
 * Rounded shapes. A sphere is a point swept by a ball and a capsule a segment swept by a ball,
 * so GJK runs on those cores and the radii are subtracted afterwards: distances of spheres and
 * capsules are exact, not iterated on curved surfaces. The same holds inside: the Minkowski
 * difference of two swept cores is (core A - core B) swept by the sum of the radii, whose
 * penetration depth is the cores' depth plus the radii. So EPA (van den Bergen 2003, 4.3.4;
 * Ericson 9.5.4) only ever expands polytopes (points, segments, boxes, hulls, polygons,
 * triangles), and converges exactly on one of their faces.
 *
 * EPA. The start polytope is GJK's final simplex, blown up to a tetrahedron by support points
 * along search directions when it has fewer than four points (the origin then lies on its
 * boundary: touching contact). When no direction gives volume the difference is flat (a sphere
 * centred on a polygon, two crossing capsule axes): the depth is zero along the flat normal.
 * Faces keep their neighbours; a new support point removes the connected set of faces it sees
 * (depth-first from the nearest face, which yields the horizon as one loop) and is joined to
 * the horizon. The nearest face is found by a linear scan over at most EPA_MAX_FACES live faces;
 * the arrays live on the stack, so neither GJK nor EPA allocates. Whenever a step would make a
 * degenerate face or overflow the arrays, EPA stops with the best face so far, whose distance is
 * a lower bound of the depth.
 *
 * Accuracy: distances of polytopes to about 1e-13 of the configuration's size when apart, EPA
 * depths to 1e-11 of it; tests/test_collision_gjk.c checks both against brute force. Thread:
 * any (no state). */
#include "issim/collision.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "collision_internal.h"

/* Relative termination of GJK (van den Bergen's eps). */
#define GJK_REL_TOL 1e-13
/* |v| below this fraction of the configuration's size counts as touching: EPA takes over. */
#define GJK_TOUCH_TOL 1e-11
#define GJK_MAX_ITERATIONS 128
/* EPA stops when the support point is within this fraction of the size of the nearest face. */
#define EPA_TOL 1e-11
/* A face is seen by a support point more than this fraction of the size above its plane. */
#define EPA_VISIBLE_TOL 1e-13
/* A configuration-space difference thinner than this fraction of its size is flat. */
#define EPA_FLAT_TOL 1e-10
#define EPA_MAX_VERTICES 128
#define EPA_MAX_FACES 256

ConvexCore convex_core(const Shape *s, Pose pose) {
    ConvexCore c;
    memset(&c, 0, sizeof c);
    c.pose = pose;
    switch (s->kind) {
    case SHAPE_SPHERE:
        c.point_count = 1;
        c.points[0] = pose.p;
        c.radius = s->radius;
        break;
    case SHAPE_CAPSULE: {
        Vec3 axis = quat_rotate(pose.q, vec3(0, 0, s->half_length));
        c.point_count = 2;
        c.points[0] = vec3_sub(pose.p, axis);
        c.points[1] = vec3_add(pose.p, axis);
        c.radius = s->radius;
        break;
    }
    case SHAPE_BOX:
    case SHAPE_HULL:
    case SHAPE_POLYGON:
        c.shape = s;
        c.rotation = quat_to_mat3(pose.q);
        break;
    default:
        issim_fatal("convex_core: a %s is not convex", shape_kind_name(s->kind));
    }
    return c;
}

Vec3 convex_core_support(const ConvexCore *c, Vec3 d) {
    if (c->shape) {
        /* shape_support with the rotation as a matrix: two products per call instead of two
         * quaternion rotations (GJK and EPA call this for every support point). */
        if (d.x == 0.0 && d.y == 0.0 && d.z == 0.0)
            d = vec3(1, 0, 0);
        const double(*r)[3] = c->rotation.m;
        Vec3 dl = {r[0][0] * d.x + r[1][0] * d.y + r[2][0] * d.z,
                   r[0][1] * d.x + r[1][1] * d.y + r[2][1] * d.z,
                   r[0][2] * d.x + r[1][2] * d.y + r[2][2] * d.z};
        Vec3 v = shape_support_local(c->shape, dl), p = c->pose.p;
        return (Vec3){p.x + r[0][0] * v.x + r[0][1] * v.y + r[0][2] * v.z,
                      p.y + r[1][0] * v.x + r[1][1] * v.y + r[1][2] * v.z,
                      p.z + r[2][0] * v.x + r[2][1] * v.y + r[2][2] * v.z};
    }
    int best = 0;
    double best_dot = vec3_dot(c->points[0], d);
    for (int i = 1; i < c->point_count; i++) {
        double t = vec3_dot(c->points[i], d);
        if (t > best_dot) {
            best_dot = t;
            best = i;
        }
    }
    return c->points[best];
}

static Vec3 core_center(const ConvexCore *c) {
    if (c->shape)
        return c->pose.p;
    Vec3 s = {0, 0, 0};
    for (int i = 0; i < c->point_count; i++)
        s = vec3_add(s, c->points[i]);
    return vec3_scale(s, 1.0 / c->point_count);
}

/* A point of the difference A - B with the points of A and B it comes from. */
typedef struct SupportPoint {
    Vec3 w, a, b;
} SupportPoint;

static SupportPoint cso_support(const ConvexCore *a, const ConvexCore *b, Vec3 d) {
    SupportPoint s;
    s.a = convex_core_support(a, d);
    s.b = convex_core_support(b, vec3_neg(d));
    s.w = vec3_sub(s.a, s.b);
    return s;
}

/* ===== GJK ===== */

typedef struct Simplex {
    int n;
    SupportPoint p[4];
    double lambda[4]; /* barycentric weights of the closest point */
} Simplex;

/* Closest point to the origin of a sub-simplex: the vertices (indices into the simplex) that
 * support it and their weights. */
typedef struct SubResult {
    int n;
    int idx[4];
    double lambda[4];
    Vec3 v;
} SubResult;

static void sub_vertex(SubResult *r, const Simplex *s, int i) {
    r->n = 1;
    r->idx[0] = i;
    r->lambda[0] = 1.0;
    r->v = s->p[i].w;
}

static void sub_edge(SubResult *r, const Simplex *s, int i, int j, double t) {
    r->n = 2;
    r->idx[0] = i;
    r->idx[1] = j;
    r->lambda[0] = 1.0 - t;
    r->lambda[1] = t;
    r->v = vec3_add(vec3_scale(s->p[i].w, 1.0 - t), vec3_scale(s->p[j].w, t));
}

static void closest_segment(const Simplex *s, int i, int j, SubResult *r) {
    Vec3 a = s->p[i].w, ab = vec3_sub(s->p[j].w, a);
    double len2 = vec3_dot(ab, ab);
    double t = len2 > 0.0 ? -vec3_dot(a, ab) / len2 : 0.0;
    if (t <= 0.0)
        sub_vertex(r, s, i);
    else if (t >= 1.0)
        sub_vertex(r, s, j);
    else
        sub_edge(r, s, i, j, t);
}

/* Ericson 5.1.5 with the query point at the origin. */
static void closest_triangle(const Simplex *s, int ia, int ib, int ic, SubResult *r) {
    Vec3 a = s->p[ia].w, b = s->p[ib].w, c = s->p[ic].w;
    Vec3 ab = vec3_sub(b, a), ac = vec3_sub(c, a);
    double d1 = -vec3_dot(ab, a), d2 = -vec3_dot(ac, a);
    if (d1 <= 0.0 && d2 <= 0.0) {
        sub_vertex(r, s, ia);
        return;
    }
    double d3 = -vec3_dot(ab, b), d4 = -vec3_dot(ac, b);
    if (d3 >= 0.0 && d4 <= d3) {
        sub_vertex(r, s, ib);
        return;
    }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        if (d1 - d3 > 0.0)
            sub_edge(r, s, ia, ib, d1 / (d1 - d3));
        else
            sub_vertex(r, s, ia);
        return;
    }
    double d5 = -vec3_dot(ab, c), d6 = -vec3_dot(ac, c);
    if (d6 >= 0.0 && d5 <= d6) {
        sub_vertex(r, s, ic);
        return;
    }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        if (d2 - d6 > 0.0)
            sub_edge(r, s, ia, ic, d2 / (d2 - d6));
        else
            sub_vertex(r, s, ia);
        return;
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        double den = (d4 - d3) + (d5 - d6);
        if (den > 0.0)
            sub_edge(r, s, ib, ic, (d4 - d3) / den);
        else
            sub_vertex(r, s, ib);
        return;
    }
    double den = va + vb + vc;
    if (!(den > 0.0)) { /* collinear corners: the best of the three edges */
        SubResult e[3];
        closest_segment(s, ia, ib, &e[0]);
        closest_segment(s, ib, ic, &e[1]);
        closest_segment(s, ia, ic, &e[2]);
        int best = 0;
        for (int k = 1; k < 3; k++)
            if (vec3_dot(e[k].v, e[k].v) < vec3_dot(e[best].v, e[best].v))
                best = k;
        *r = e[best];
        return;
    }
    r->n = 3;
    r->idx[0] = ia;
    r->idx[1] = ib;
    r->idx[2] = ic;
    r->lambda[0] = va / den;
    r->lambda[1] = vb / den;
    r->lambda[2] = vc / den;
    /* The foot of the perpendicular on the plane: more accurate than the weighted sum when the
     * triangle is far from the origin compared with the distance. */
    Vec3 n = vec3_cross(ab, ac);
    r->v = vec3_scale(n, vec3_dot(n, a) / vec3_dot(n, n));
}

/* Ericson 5.1.6: the origin is tested against each face plane; a flat tetrahedron has no inside
 * and all its faces are searched. Returns with n = 4 when the origin is inside. */
static void closest_tetrahedron(const Simplex *s, SubResult *r) {
    static const int faces[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
    double best = INFINITY;
    bool any = false;
    for (int f = 0; f < 4; f++) {
        Vec3 a = s->p[faces[f][0]].w, b = s->p[faces[f][1]].w, c = s->p[faces[f][2]].w;
        Vec3 d = s->p[faces[f][3]].w;
        Vec3 ad = vec3_sub(d, a);
        Vec3 n = vec3_cross(vec3_sub(b, a), vec3_sub(c, a));
        double side_origin = -vec3_dot(a, n), side_d = vec3_dot(ad, n);
        bool flat = fabs(side_d) <= 1e-10 * vec3_norm(n) * vec3_norm(ad);
        if (!flat && side_origin * side_d >= 0.0)
            continue;
        SubResult t;
        closest_triangle(s, faces[f][0], faces[f][1], faces[f][2], &t);
        double d2 = vec3_dot(t.v, t.v);
        if (d2 < best) {
            best = d2;
            *r = t;
        }
        any = true;
    }
    if (!any) {
        r->n = 4;
        for (int i = 0; i < 4; i++)
            r->idx[i] = i;
        r->v = (Vec3){0, 0, 0};
    }
}

static void simplex_reduce(Simplex *s, const SubResult *r) {
    Simplex t;
    t.n = r->n;
    for (int i = 0; i < r->n; i++) {
        t.p[i] = s->p[r->idx[i]];
        t.lambda[i] = r->n == 4 ? 0.25 : r->lambda[i];
    }
    *s = t;
}

typedef struct GjkResult {
    bool touching; /* |v| below the touch tolerance, or the origin inside the simplex */
    bool beyond;   /* stopped early: an axis separates the cores by at least the limit */
    double bound;  /* beyond: that separation */
    Simplex simplex;
    Vec3 v;       /* closest point of the difference to the origin */
    double scale; /* largest |w| met: the size of the configuration */
} GjkResult;

/* GJK on the cores; with a finite limit it stops as soon as the support point w along -v shows
 * every point x of the difference has x . v >= w . v > limit |v|: the cores are then farther
 * apart than limit (van den Bergen 2003, 4.3.2, the separating-axis early out of GJK's
 * intersection test). */
static void gjk(const ConvexCore *a, const ConvexCore *b, double limit, GjkResult *g) {
    Vec3 d = vec3_sub(core_center(a), core_center(b));
    if (!(vec3_dot(d, d) > 0.0))
        d = vec3(1, 0, 0);
    Simplex *s = &g->simplex;
    s->n = 1;
    s->p[0] = cso_support(a, b, vec3_neg(d));
    s->lambda[0] = 1.0;
    g->v = s->p[0].w;
    g->scale = fmax(vec3_norm(g->v), DBL_MIN);
    g->touching = false;
    g->beyond = false;
    for (int iter = 0; iter < GJK_MAX_ITERATIONS; iter++) {
        double vv = vec3_dot(g->v, g->v);
        double touch = GJK_TOUCH_TOL * g->scale;
        if (vv <= touch * touch) {
            g->touching = true;
            return;
        }
        SupportPoint w = cso_support(a, b, vec3_neg(g->v));
        double vw = vec3_dot(g->v, w.w);
        if (vw > 0.0 && vw * vw > limit * limit * vv) {
            g->beyond = true;
            g->bound = vw / sqrt(vv);
            return;
        }
        g->scale = fmax(g->scale, vec3_norm(w.w));
        if (vv - vw <= GJK_REL_TOL * vv)
            return;
        for (int i = 0; i < s->n; i++)
            if (s->p[i].w.x == w.w.x && s->p[i].w.y == w.w.y && s->p[i].w.z == w.w.z)
                return; /* no new point: converged as far as rounding allows */
        Simplex previous = *s;
        Vec3 previous_v = g->v;
        s->p[s->n++] = w;
        SubResult r;
        switch (s->n) {
        case 2:
            closest_segment(s, 0, 1, &r);
            break;
        case 3:
            closest_triangle(s, 0, 1, 2, &r);
            break;
        default:
            closest_tetrahedron(s, &r);
            break;
        }
        simplex_reduce(s, &r);
        g->v = r.v;
        if (s->n == 4) {
            g->touching = true;
            return;
        }
        if (vec3_dot(g->v, g->v) >= vv) { /* rounding: no progress, keep the previous answer */
            *s = previous;
            g->v = previous_v;
            return;
        }
    }
}

static void simplex_witness(const Simplex *s, Vec3 *pa, Vec3 *pb) {
    Vec3 a = {0, 0, 0}, b = {0, 0, 0};
    for (int i = 0; i < s->n; i++) {
        a = vec3_mad(a, s->lambda[i], s->p[i].a);
        b = vec3_mad(b, s->lambda[i], s->p[i].b);
    }
    *pa = a;
    *pb = b;
}

/* ===== EPA ===== */

typedef struct EpaFace {
    int v[3];        /* counter-clockwise seen from outside */
    int adj[3];      /* face across edge k (v[k] to v[k+1]) */
    int adj_edge[3]; /* that edge's index in the neighbour */
    Vec3 n;          /* outward unit normal */
    double dist;     /* n . v: distance of the plane from the origin (< 0: origin outside) */
    bool alive;
} EpaFace;

typedef struct Epa {
    const ConvexCore *a, *b;
    double scale;
    int vertex_count;
    SupportPoint vertices[EPA_MAX_VERTICES];
    int face_count; /* slots used, alive or not */
    EpaFace faces[EPA_MAX_FACES];
    int free_count;
    int free_faces[EPA_MAX_FACES];
    int horizon_count;
    int horizon_face[EPA_MAX_FACES];
    int horizon_edge[EPA_MAX_FACES];
} Epa;

/* A new face with plane, or -1 when it is degenerate or no slot is left. */
static int epa_face(Epa *e, int i0, int i1, int i2) {
    Vec3 a = e->vertices[i0].w, b = e->vertices[i1].w, c = e->vertices[i2].w;
    Vec3 n = vec3_cross(vec3_sub(b, a), vec3_sub(c, a));
    double len = vec3_norm(n);
    if (!(len > 1e-12 * e->scale * e->scale))
        return -1;
    int f;
    if (e->free_count > 0)
        f = e->free_faces[--e->free_count];
    else if (e->face_count < EPA_MAX_FACES)
        f = e->face_count++;
    else
        return -1;
    EpaFace *face = &e->faces[f];
    face->v[0] = i0;
    face->v[1] = i1;
    face->v[2] = i2;
    face->n = vec3_scale(n, 1.0 / len);
    face->dist = (vec3_dot(face->n, a) + vec3_dot(face->n, b) + vec3_dot(face->n, c)) / 3.0;
    face->alive = true;
    return f;
}

static bool epa_sees(const Epa *e, int f, Vec3 w) {
    const EpaFace *face = &e->faces[f];
    return vec3_dot(face->n, w) - face->dist > EPA_VISIBLE_TOL * e->scale;
}

/* Van den Bergen's silhouette walk: face f was entered across its edge `edge` from a face that
 * the new point sees. */
static void epa_silhouette(Epa *e, int f, int edge, Vec3 w) {
    EpaFace *face = &e->faces[f];
    if (!face->alive)
        return;
    if (!epa_sees(e, f, w)) {
        e->horizon_face[e->horizon_count] = f;
        e->horizon_edge[e->horizon_count] = edge;
        e->horizon_count++;
        return;
    }
    face->alive = false;
    e->free_faces[e->free_count++] = f;
    for (int k = 1; k <= 2; k++) {
        int j = (edge + k) % 3;
        epa_silhouette(e, face->adj[j], face->adj_edge[j], w);
    }
}

/* Joins vertex w to the horizon; false when the cone would be degenerate or does not close. */
static bool epa_cone(Epa *e, int w) {
    int h = e->horizon_count;
    int made[EPA_MAX_FACES];
    for (int k = 0; k < h; k++) {
        EpaFace *hf = &e->faces[e->horizon_face[k]];
        int edge = e->horizon_edge[k];
        int p = hf->v[(edge + 1) % 3], q = hf->v[edge];
        int f = epa_face(e, p, q, w);
        if (f < 0)
            return false;
        made[k] = f;
        e->faces[f].adj[0] = e->horizon_face[k];
        e->faces[f].adj_edge[0] = edge;
        hf->adj[edge] = f;
        hf->adj_edge[edge] = 0;
    }
    /* Edge 1 of a cone face (q to w) is edge 2 (w to p) of the cone face starting where it
     * ends. */
    for (int k = 0; k < h; k++) {
        EpaFace *fk = &e->faces[made[k]];
        int found = -1;
        for (int j = 0; j < h; j++) {
            if (e->faces[made[j]].v[0] == fk->v[1]) {
                if (found >= 0)
                    return false;
                found = j;
            }
        }
        if (found < 0 || found == k)
            return false;
        fk->adj[1] = made[found];
        fk->adj_edge[1] = 2;
        e->faces[made[found]].adj[2] = made[k];
        e->faces[made[found]].adj_edge[2] = 1;
    }
    return true;
}

static int epa_add_vertex(Epa *e, SupportPoint p) {
    if (e->vertex_count >= EPA_MAX_VERTICES)
        return -1;
    e->vertices[e->vertex_count] = p;
    return e->vertex_count++;
}

/* The tetrahedron of vertices 0..3, oriented outwards from its centroid, with neighbours. */
static bool epa_tetrahedron(Epa *e) {
    static const int tri[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
    Vec3 d1 = vec3_sub(e->vertices[1].w, e->vertices[0].w);
    Vec3 d2 = vec3_sub(e->vertices[2].w, e->vertices[0].w);
    Vec3 d3 = vec3_sub(e->vertices[3].w, e->vertices[0].w);
    if (vec3_dot(vec3_cross(d1, d2), d3) > 0.0) { /* make (0, 1, 2) face away from vertex 3 */
        SupportPoint t = e->vertices[1];
        e->vertices[1] = e->vertices[2];
        e->vertices[2] = t;
    }
    for (int f = 0; f < 4; f++)
        if (epa_face(e, tri[f][0], tri[f][1], tri[f][2]) != f)
            return false;
    for (int f = 0; f < 4; f++) {
        for (int k = 0; k < 3; k++) {
            int u = e->faces[f].v[k], v = e->faces[f].v[(k + 1) % 3];
            for (int g = 0; g < 4; g++) {
                for (int j = 0; j < 3; j++) {
                    if (e->faces[g].v[j] == v && e->faces[g].v[(j + 1) % 3] == u) {
                        e->faces[f].adj[k] = g;
                        e->faces[f].adj_edge[k] = j;
                    }
                }
            }
        }
    }
    return true;
}

/* Completes GJK's final simplex to a tetrahedron. Returns false when the difference is flat
 * (contained in a plane, a line or a point): its depth is then zero along *flat_normal. */
static bool epa_start(Epa *e, const Simplex *s, Vec3 *flat_normal) {
    double tol = EPA_FLAT_TOL * e->scale;
    e->vertex_count = 0;
    for (int i = 0; i < s->n; i++)
        epa_add_vertex(e, s->p[i]);
    if (e->vertex_count == 1) {
        static const Vec3 axes[6] = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},
                                     {0, -1, 0}, {0, 0, 1},  {0, 0, -1}};
        for (int k = 0; k < 6 && e->vertex_count == 1; k++) {
            SupportPoint p = cso_support(e->a, e->b, axes[k]);
            if (vec3_norm(vec3_sub(p.w, e->vertices[0].w)) > tol)
                epa_add_vertex(e, p);
        }
        if (e->vertex_count == 1) {
            *flat_normal = vec3(0, 0, 1);
            return false;
        }
    }
    if (e->vertex_count == 2) {
        Vec3 axis = vec3_normalize(vec3_sub(e->vertices[1].w, e->vertices[0].w));
        Vec3 t1, t2;
        vec3_tangent_basis(axis, &t1, &t2);
        SupportPoint best = e->vertices[0];
        double best_off = -1.0;
        for (int k = 0; k < 6; k++) {
            double angle = M_PI / 3.0 * k;
            Vec3 d = vec3_add(vec3_scale(t1, cos(angle)), vec3_scale(t2, sin(angle)));
            SupportPoint p = cso_support(e->a, e->b, d);
            double off = vec3_norm(vec3_cross(vec3_sub(p.w, e->vertices[0].w), axis));
            if (off > best_off) {
                best_off = off;
                best = p;
            }
        }
        if (!(best_off > tol)) {
            *flat_normal = t1;
            return false;
        }
        epa_add_vertex(e, best);
    }
    if (e->vertex_count == 3) {
        Vec3 o = e->vertices[0].w;
        Vec3 n = vec3_normalize(
            vec3_cross(vec3_sub(e->vertices[1].w, o), vec3_sub(e->vertices[2].w, o)));
        SupportPoint up = cso_support(e->a, e->b, n);
        SupportPoint down = cso_support(e->a, e->b, vec3_neg(n));
        double h_up = vec3_dot(vec3_sub(up.w, o), n), h_down = -vec3_dot(vec3_sub(down.w, o), n);
        *flat_normal = n; /* also the answer should the tetrahedron be too thin for faces */
        if (!(fmax(h_up, h_down) > tol))
            return false;
        epa_add_vertex(e, h_up >= h_down ? up : down);
        return true;
    }
    Vec3 o = e->vertices[0].w;
    *flat_normal =
        vec3_normalize(vec3_cross(vec3_sub(e->vertices[1].w, o), vec3_sub(e->vertices[2].w, o)));
    return true;
}

typedef struct EpaResult {
    Vec3 n;       /* outward normal of the difference at the nearest face */
    double depth; /* distance of that face from the origin */
    Vec3 pa, pb;  /* points of the cores */
} EpaResult;

static void epa_face_result(const Epa *e, int f, EpaResult *r) {
    const EpaFace *face = &e->faces[f];
    const SupportPoint *v0 = &e->vertices[face->v[0]], *v1 = &e->vertices[face->v[1]],
                       *v2 = &e->vertices[face->v[2]];
    Vec3 p = vec3_scale(face->n, face->dist);
    Vec3 a = vec3_sub(v0->w, p), b = vec3_sub(v1->w, p), c = vec3_sub(v2->w, p);
    double l0 = fmax(vec3_dot(vec3_cross(b, c), face->n), 0.0);
    double l1 = fmax(vec3_dot(vec3_cross(c, a), face->n), 0.0);
    double l2 = fmax(vec3_dot(vec3_cross(a, b), face->n), 0.0);
    double sum = l0 + l1 + l2;
    if (!(sum > 0.0)) {
        l0 = l1 = l2 = 1.0;
        sum = 3.0;
    }
    l0 /= sum;
    l1 /= sum;
    l2 /= sum;
    r->n = face->n;
    r->depth = face->dist;
    r->pa = vec3_add(vec3_add(vec3_scale(v0->a, l0), vec3_scale(v1->a, l1)), vec3_scale(v2->a, l2));
    r->pb = vec3_add(vec3_add(vec3_scale(v0->b, l0), vec3_scale(v1->b, l1)), vec3_scale(v2->b, l2));
}

/* Penetration of the cores from GJK's touching simplex. */
static void epa(const ConvexCore *a, const ConvexCore *b, const GjkResult *g, EpaResult *r) {
    Epa e;
    e.a = a;
    e.b = b;
    e.scale = g->scale;
    e.face_count = 0;
    e.free_count = 0;
    Vec3 flat;
    if (!epa_start(&e, &g->simplex, &flat) || !epa_tetrahedron(&e)) {
        /* Flat difference (or a start too thin for a tetrahedron): zero depth. */
        r->n = vec3_normalize(flat);
        r->depth = 0.0;
        simplex_witness(&g->simplex, &r->pa, &r->pb);
        return;
    }
    for (int iter = 0; iter < EPA_MAX_VERTICES; iter++) {
        int best = -1;
        for (int f = 0; f < e.face_count; f++)
            if (e.faces[f].alive && (best < 0 || e.faces[f].dist < e.faces[best].dist))
                best = f;
        epa_face_result(&e, best, r);
        EpaFace *face = &e.faces[best];
        SupportPoint w = cso_support(a, b, face->n);
        e.scale = fmax(e.scale, vec3_norm(w.w));
        if (vec3_dot(face->n, w.w) - face->dist <= EPA_TOL * e.scale)
            return;
        int wi = epa_add_vertex(&e, w);
        if (wi < 0)
            return;
        face->alive = false;
        e.free_faces[e.free_count++] = best;
        e.horizon_count = 0;
        for (int k = 0; k < 3; k++)
            epa_silhouette(&e, face->adj[k], face->adj_edge[k], w.w);
        if (e.horizon_count < 3 || !epa_cone(&e, wi))
            return; /* r holds the best face before this step */
    }
}

/* ===== Public ===== */

double gjk_epa_core_within(const ConvexCore *a, const ConvexCore *b, double limit, Vec3 *point_a,
                           Vec3 *point_b, Vec3 *normal) {
    GjkResult g;
    gjk(a, b, limit + a->radius + b->radius, &g);
    Vec3 pa, pb, n;
    double core_distance;
    if (g.beyond) {
        core_distance = g.bound;
        n = vec3_normalize(g.v);
        simplex_witness(&g.simplex, &pa, &pb);
    } else if (!g.touching) {
        core_distance = vec3_norm(g.v);
        n = vec3_scale(g.v, 1.0 / core_distance);
        const Simplex *s = &g.simplex;
        if (s->n == 3) {
            /* Closest point inside a face of the difference: the face's own normal is exact,
             * where v's direction degrades as |v| shrinks. Slivers keep v. */
            Vec3 e1 = vec3_sub(s->p[1].w, s->p[0].w), e2 = vec3_sub(s->p[2].w, s->p[0].w);
            Vec3 fn = vec3_cross(e1, e2);
            double len = vec3_norm(fn);
            if (len > 1e-6 * vec3_norm(e1) * vec3_norm(e2)) {
                fn = vec3_scale(fn, 1.0 / len);
                if (vec3_dot(fn, n) < 0.0)
                    fn = vec3_neg(fn);
                n = fn;
                core_distance =
                    (vec3_dot(fn, s->p[0].w) + vec3_dot(fn, s->p[1].w) + vec3_dot(fn, s->p[2].w)) /
                    3.0;
            }
        }
        simplex_witness(s, &pa, &pb);
    } else {
        EpaResult r;
        epa(a, b, &g, &r);
        core_distance = -r.depth;
        n = vec3_neg(r.n);
        pa = r.pa;
        pb = r.pb;
    }
    if (point_a)
        *point_a = vec3_mad(pa, -a->radius, n);
    if (point_b)
        *point_b = vec3_mad(pb, b->radius, n);
    if (normal)
        *normal = n;
    return core_distance - a->radius - b->radius;
}

double gjk_epa_core(const ConvexCore *a, const ConvexCore *b, Vec3 *point_a, Vec3 *point_b,
                    Vec3 *normal) {
    return gjk_epa_core_within(a, b, INFINITY, point_a, point_b, normal);
}

double gjk_epa_distance(const Shape *a, Pose pa, const Shape *b, Pose pb, Vec3 *point_a,
                        Vec3 *point_b, Vec3 *normal) {
    ConvexCore ca = convex_core(a, pa), cb = convex_core(b, pb);
    return gjk_epa_core(&ca, &cb, point_a, point_b, normal);
}
