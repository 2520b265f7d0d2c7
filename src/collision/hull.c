/* Convex hulls: 3D quickhull (Barber, Dobkin and Huhdanpaa, "The Quickhull Algorithm for
 * Convex Hulls", ACM TOMS 22(4), 1996) with coplanar triangles merged into polygon faces, and
 * the vertices of a Wavefront .obj file as input.
 *
 * Construction. The start is the tetrahedron of extreme points. Every other point goes to the
 * outside set of the face it lies farthest above. Barber's thick planes: only points more than
 * eps (HULL_EPS_REL of the coordinates' size) above a plane are outside; the others are on the
 * hull within rounding and are dropped. Each step takes the farthest point of an outside set
 * (the eye) and collects the faces it sees by a depth-first walk from that face, whose order
 * gives the horizon as one loop; it joins the eye to the horizon and hands the outside points
 * of the removed faces to the new faces. A face counts as seen when the eye is above its plane
 * by more than rounding (HULL_VISIBLE_REL), not eps: a face the eye is slightly above but left
 * in place would make a concave edge, which later thin faces amplify far beyond eps. Should
 * rounding ever make the seen region not a disc (the horizon not one simple loop) or a cone
 * face flat, the eye is dropped instead.
 *
 * Merging. Triangles are grouped greedily, largest first: a group takes an adjacent triangle
 * when all its corners lie within HULL_PLANAR_TOL (relative to the bounding box's diagonal) of
 * the group's seed plane, measured against the seed so no drift accumulates. A group becomes
 * one polygon, the loop of its boundary edges, counter-clockwise seen from outside (a group
 * whose boundary is not one loop is split back into triangles). A point shared by fewer than
 * three faces is not a corner (it lies inside a face, or on an edge between two faces) and is
 * removed. A face's normal is the Newell normal of its polygon (taken relative to a corner, so
 * hulls far from the origin keep their precision), its offset the highest of its group's
 * corners (those merged away included). The centroid is the volume centroid (tetrahedra from
 * the vertex average to each face's fan).
 *
 * Costs: O(n log n) expected; allocation at creation only; a Hull is one block. Thread: any
 * (no state). */
#include "issim/collision.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision_internal.h"

/* Points within this fraction of the hull's size of a plane are on it (dropped while building,
 * merged into one face afterwards). Rounding in a plane distance is about 1e-16 of the size. */
#define HULL_EPS_REL 1e-11
/* A face is seen from the eye when the eye is above its plane by more than rounding: about
 * 1e-16 of the size per operation, so 1e-13 (exact coplanarity must not count as seen). */
#define HULL_VISIBLE_REL 1e-13
/* Coplanarity of merged faces: a single .obj written with six decimals is flat to 1e-6. */
#define HULL_PLANAR_TOL 1e-6
/* Fewer than four points farther apart than this fraction of the size: no volume. */
#define HULL_FLAT_TOL 1e-9

typedef struct QhFace {
    int v[3];
    int adj[3]; /* face across edge k (v[k] to v[k+1]) */
    Vec3 n;
    double offset;
    int outside; /* head of the outside-set list (-1: empty) */
    int mark;    /* iteration stamp: seen from the current eye */
    bool alive;
} QhFace;

typedef struct Qh {
    const Vec3 *p;
    int n;
    double eps, eps_visible;
    QhFace *faces;
    int face_count, face_cap;
    int *next; /* n: outside-set links */
    int *slot; /* n: scratch per point, -1 */
    int *visible, visible_count;
    int *stack_face, *stack_entry, *stack_step;
    int *hface, *hedge, hcount;
    int scratch_cap; /* capacity of visible, stack_* and horizon arrays */
    bool nomem;
} Qh;

static double qh_dist(const Qh *q, int f, int i) {
    return vec3_dot(q->faces[f].n, q->p[i]) - q->faces[f].offset;
}

static bool qh_reserve(Qh *q, int faces) {
    if (faces > q->face_cap) {
        int cap = q->face_cap * 2 > faces ? q->face_cap * 2 : faces;
        QhFace *nf = realloc(q->faces, (size_t)cap * sizeof *nf);
        if (!nf)
            return false;
        q->faces = nf;
        q->face_cap = cap;
    }
    if (faces > q->scratch_cap) {
        int cap = q->scratch_cap * 2 > faces ? q->scratch_cap * 2 : faces;
        int **arrays[] = {&q->visible,    &q->stack_face, &q->stack_entry,
                          &q->stack_step, &q->hface,      &q->hedge};
        for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
            int *a = realloc(*arrays[k], (size_t)cap * sizeof(int));
            if (!a)
                return false;
            *arrays[k] = a;
        }
        q->scratch_cap = cap;
    }
    return true;
}

/* Appends a face with its plane; the caller links it. Returns -1 when memory runs out. */
static int qh_face(Qh *q, int a, int b, int c) {
    if (!qh_reserve(q, q->face_count + 1)) {
        q->nomem = true;
        return -1;
    }
    int f = q->face_count++;
    QhFace *face = &q->faces[f];
    face->v[0] = a;
    face->v[1] = b;
    face->v[2] = c;
    Vec3 n = vec3_cross(vec3_sub(q->p[b], q->p[a]), vec3_sub(q->p[c], q->p[a]));
    face->n = vec3_normalize(n);
    face->offset =
        (vec3_dot(face->n, q->p[a]) + vec3_dot(face->n, q->p[b]) + vec3_dot(face->n, q->p[c])) /
        3.0;
    face->outside = -1;
    face->mark = -1;
    face->alive = true;
    face->adj[0] = face->adj[1] = face->adj[2] = -1;
    return f;
}

/* Puts point i in the outside set of the face among faces[first..last) it is farthest above;
 * returns false when it is above none (inside). */
static bool qh_assign(Qh *q, int i, int first, int last) {
    int best = -1;
    double best_d = q->eps;
    for (int f = first; f < last; f++) {
        if (!q->faces[f].alive)
            continue;
        double d = qh_dist(q, f, i);
        if (d > best_d) {
            best_d = d;
            best = f;
        }
    }
    if (best < 0)
        return false;
    q->next[i] = q->faces[best].outside;
    q->faces[best].outside = i;
    return true;
}

static int qh_edge_to(const QhFace *g, int from, int to) {
    for (int j = 0; j < 3; j++)
        if (g->v[j] == from && g->v[(j + 1) % 3] == to)
            return j;
    return -1;
}

/* Faces seen from point eye, from face f0 (which sees it), and the horizon edges (visible face,
 * edge) in loop order. Returns false when the horizon is not one simple loop. */
static bool qh_horizon(Qh *q, int f0, int eye, int stamp) {
    q->visible_count = 0;
    q->hcount = 0;
    int sp = 0;
    q->faces[f0].mark = stamp;
    q->visible[q->visible_count++] = f0;
    q->stack_face[sp] = f0;
    q->stack_entry[sp] = -1;
    q->stack_step[sp] = 0;
    sp++;
    while (sp > 0) {
        int top = sp - 1;
        int f = q->stack_face[top], entry = q->stack_entry[top];
        int edges = entry < 0 ? 3 : 2;
        if (q->stack_step[top] == edges) {
            sp--;
            continue;
        }
        int k = entry < 0 ? q->stack_step[top] : (entry + 1 + q->stack_step[top]) % 3;
        q->stack_step[top]++;
        int g = q->faces[f].adj[k];
        if (q->faces[g].mark == stamp)
            continue;
        if (qh_dist(q, g, eye) > q->eps_visible) {
            if (!qh_reserve(q, q->visible_count + 1)) {
                q->nomem = true;
                return false;
            }
            q->faces[g].mark = stamp;
            q->visible[q->visible_count++] = g;
            q->stack_face[sp] = g;
            q->stack_entry[sp] =
                qh_edge_to(&q->faces[g], q->faces[f].v[(k + 1) % 3], q->faces[f].v[k]);
            q->stack_step[sp] = 0;
            if (q->stack_entry[sp] < 0)
                return false;
            sp++;
        } else {
            if (!qh_reserve(q, q->hcount + 1)) {
                q->nomem = true;
                return false;
            }
            q->hface[q->hcount] = f;
            q->hedge[q->hcount] = k;
            q->hcount++;
        }
    }
    /* One simple loop: every start vertex once, each end the start of another, one cycle;
     * and no cone face without area (the eye on the line of a horizon edge). */
    bool ok = q->hcount >= 3;
    for (int k = 0; k < q->hcount && ok; k++) {
        const QhFace *f = &q->faces[q->hface[k]];
        Vec3 a = q->p[f->v[q->hedge[k]]], b = q->p[f->v[(q->hedge[k] + 1) % 3]];
        Vec3 ab = vec3_sub(b, a), ae = vec3_sub(q->p[eye], a);
        if (!(vec3_norm(vec3_cross(ab, ae)) > 1e-14 * vec3_norm(ab) * vec3_norm(ae)))
            ok = false;
    }
    int set = 0;
    for (int k = 0; k < q->hcount && ok; k++) {
        int a = q->faces[q->hface[k]].v[q->hedge[k]];
        if (q->slot[a] >= 0)
            ok = false;
        else {
            q->slot[a] = k;
            set = k + 1;
        }
    }
    if (ok) {
        int k = 0, steps = 0;
        do {
            const QhFace *f = &q->faces[q->hface[k]];
            k = q->slot[f->v[(q->hedge[k] + 1) % 3]];
            steps++;
        } while (k > 0 && steps <= q->hcount);
        ok = k == 0 && steps == q->hcount;
    }
    for (int k = 0; k < set; k++)
        q->slot[q->faces[q->hface[k]].v[q->hedge[k]]] = -1;
    return ok;
}

/* Replaces the visible faces by the cone from eye to the horizon and redistributes their
 * outside points. */
static bool qh_add_point(Qh *q, int eye) {
    int first = q->face_count;
    if (!qh_reserve(q, q->face_count + q->hcount))
        return false;
    for (int k = 0; k < q->hcount; k++) {
        int f = q->hface[k], e = q->hedge[k];
        int a = q->faces[f].v[e], b = q->faces[f].v[(e + 1) % 3];
        int g = q->faces[f].adj[e];
        int nf = qh_face(q, a, b, eye);
        q->faces[nf].adj[0] = g;
        int j = qh_edge_to(&q->faces[g], b, a);
        q->faces[g].adj[j] = nf;
        q->slot[a] = nf;
    }
    for (int nf = first; nf < q->face_count; nf++) {
        QhFace *face = &q->faces[nf];
        int right = q->slot[face->v[1]]; /* the cone face starting at this one's end */
        face->adj[1] = right;
        q->faces[right].adj[2] = nf;
    }
    for (int nf = first; nf < q->face_count; nf++)
        q->slot[q->faces[nf].v[0]] = -1;
    for (int k = 0; k < q->visible_count; k++)
        q->faces[q->visible[k]].alive = false;
    for (int k = 0; k < q->visible_count; k++) {
        QhFace *f = &q->faces[q->visible[k]];
        for (int i = f->outside; i >= 0;) {
            int next = q->next[i];
            if (i != eye)
                qh_assign(q, i, first, q->face_count);
            i = next;
        }
        f->outside = -1;
    }
    return true;
}

static int qh_build(Qh *q, IssimError *err) {
    const Vec3 *p = q->p;
    int n = q->n;
    /* Extreme points along the axes; the farthest pair starts the simplex. */
    int ext[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 1; i < n; i++) {
        if (p[i].x < p[ext[0]].x)
            ext[0] = i;
        if (p[i].x > p[ext[1]].x)
            ext[1] = i;
        if (p[i].y < p[ext[2]].y)
            ext[2] = i;
        if (p[i].y > p[ext[3]].y)
            ext[3] = i;
        if (p[i].z < p[ext[4]].z)
            ext[4] = i;
        if (p[i].z > p[ext[5]].z)
            ext[5] = i;
    }
    double size = 0.0;
    int i0 = 0, i1 = 0;
    for (int a = 0; a < 6; a++) {
        for (int b = a + 1; b < 6; b++) {
            double d = vec3_norm(vec3_sub(p[ext[a]], p[ext[b]]));
            if (d > size) {
                size = d;
                i0 = ext[a];
                i1 = ext[b];
            }
        }
    }
    double flat = HULL_FLAT_TOL * size;
    Vec3 axis = vec3_normalize(vec3_sub(p[i1], p[i0]));
    int i2 = -1;
    double best = flat;
    for (int i = 0; i < n; i++) {
        double d = vec3_norm(vec3_cross(vec3_sub(p[i], p[i0]), axis));
        if (d > best) {
            best = d;
            i2 = i;
        }
    }
    if (i2 < 0) {
        issim_error_set(err, ISSIM_ERR_INVALID, "hull: the %d points are collinear", n);
        return -1;
    }
    Vec3 pn = vec3_normalize(vec3_cross(vec3_sub(p[i1], p[i0]), vec3_sub(p[i2], p[i0])));
    int i3 = -1;
    best = flat;
    for (int i = 0; i < n; i++) {
        double d = fabs(vec3_dot(vec3_sub(p[i], p[i0]), pn));
        if (d > best) {
            best = d;
            i3 = i;
        }
    }
    if (i3 < 0) {
        issim_error_set(err, ISSIM_ERR_INVALID,
                        "hull: the %d points are coplanar (fewer than 4 non-coplanar points)", n);
        return -1;
    }
    if (vec3_dot(vec3_sub(p[i3], p[i0]), pn) > 0.0) { /* (i0, i1, i2) must face away from i3 */
        int t = i1;
        i1 = i2;
        i2 = t;
    }
    int tv[4] = {i0, i1, i2, i3};
    static const int tri[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
    for (int f = 0; f < 4; f++)
        if (qh_face(q, tv[tri[f][0]], tv[tri[f][1]], tv[tri[f][2]]) < 0)
            return -1;
    for (int f = 0; f < 4; f++)
        for (int k = 0; k < 3; k++)
            for (int g = 0; g < 4; g++) {
                int j = qh_edge_to(&q->faces[g], q->faces[f].v[(k + 1) % 3], q->faces[f].v[k]);
                if (j >= 0 && g != f)
                    q->faces[f].adj[k] = g;
            }
    for (int i = 0; i < n; i++)
        if (i != i0 && i != i1 && i != i2 && i != i3)
            qh_assign(q, i, 0, 4);
    int stamp = 0, cursor = 0;
    for (;;) {
        while (cursor < q->face_count && (!q->faces[cursor].alive || q->faces[cursor].outside < 0))
            cursor++;
        if (cursor == q->face_count) {
            cursor = 0; /* new faces sit at the end; one more pass to be sure none is left */
            while (cursor < q->face_count &&
                   (!q->faces[cursor].alive || q->faces[cursor].outside < 0))
                cursor++;
            if (cursor == q->face_count)
                break;
        }
        int f0 = cursor;
        int eye = -1, prev = -1, eye_prev = -1;
        double far = -INFINITY;
        for (int i = q->faces[f0].outside; i >= 0; prev = i, i = q->next[i]) {
            double d = qh_dist(q, f0, i);
            if (d > far) {
                far = d;
                eye = i;
                eye_prev = prev;
            }
        }
        if (!qh_horizon(q, f0, eye, stamp++)) {
            if (q->nomem)
                return -1;
            /* Rounding: the seen region is not a disc. The eye is within rounding of the hull;
             * leave it out. */
            if (eye_prev < 0)
                q->faces[f0].outside = q->next[eye];
            else
                q->next[eye_prev] = q->next[eye];
            for (int k = 0; k < q->visible_count; k++)
                q->faces[q->visible[k]].mark = -1;
            continue;
        }
        if (!qh_add_point(q, eye)) {
            q->nomem = true;
            return -1;
        }
    }
    return 0;
}

/* ===== Merging triangles into polygon faces ===== */

typedef struct HullMerge {
    int tcount;
    int (*tv)[3];   /* tcount: corners (point indices) */
    int (*tadj)[3]; /* tcount: neighbours (triangle indices) */
    Vec3 *tn;       /* tcount: unit normals */
    double *toff;
    double *tarea;
    int *group; /* tcount */
    int group_count;
} HullMerge;

/* Stable merge sort of idx[0..n) by decreasing key[idx[.]] (tmp: n ints); no global state. */
static void sort_by_key_desc(int *idx, int n, const double *key, int *tmp) {
    if (n < 2)
        return;
    int h = n / 2;
    sort_by_key_desc(idx, h, key, tmp);
    sort_by_key_desc(idx + h, n - h, key, tmp);
    int i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = key[idx[j]] > key[idx[i]] ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

/* Is group g's boundary one loop? start[] is per point scratch (-1), restored on return. */
static bool group_is_disc(const HullMerge *m, int g, const int *members, int member_count,
                          int *start) {
    int boundary = 0, first = -1;
    bool ok = true;
    for (int i = 0; i < member_count && ok; i++) {
        int t = members[i];
        for (int k = 0; k < 3; k++) {
            if (m->group[m->tadj[t][k]] == g)
                continue;
            int a = m->tv[t][k];
            if (start[a] >= 0)
                ok = false;
            else
                start[a] = t * 3 + k;
            if (first < 0)
                first = a;
            boundary++;
        }
    }
    if (ok && boundary >= 3) {
        int a = first, steps = 0;
        do {
            int he = start[a];
            if (he < 0)
                break;
            a = m->tv[he / 3][(he % 3 + 1) % 3];
            steps++;
        } while (a != first && steps <= boundary);
        ok = a == first && steps == boundary;
    } else {
        ok = false;
    }
    for (int i = 0; i < member_count; i++)
        for (int k = 0; k < 3; k++)
            start[m->tv[members[i]][k]] = -1;
    return ok;
}

static void merge_groups(HullMerge *m, const Vec3 *p, double tol, int *order, int *queue,
                         int *start) {
    int tc = m->tcount;
    for (int t = 0; t < tc; t++) {
        order[t] = t;
        m->group[t] = -1;
    }
    sort_by_key_desc(order, tc, m->tarea, queue); /* queue is free scratch here */
    m->group_count = 0;
    for (int oi = 0; oi < tc; oi++) {
        int seed = order[oi];
        if (m->group[seed] >= 0)
            continue;
        int g = m->group_count++;
        Vec3 n = m->tn[seed];
        double off = m->toff[seed];
        int head = 0, tail = 0;
        queue[tail++] = seed;
        m->group[seed] = g;
        while (head < tail) {
            int t = queue[head++];
            for (int k = 0; k < 3; k++) {
                int u = m->tadj[t][k];
                if (m->group[u] >= 0 || vec3_dot(m->tn[u], n) <= 0.0)
                    continue;
                bool planar = true;
                for (int c = 0; c < 3; c++)
                    if (fabs(vec3_dot(n, p[m->tv[u][c]]) - off) > tol)
                        planar = false;
                if (planar) {
                    m->group[u] = g;
                    queue[tail++] = u;
                }
            }
        }
        if (tail > 1 && !group_is_disc(m, g, queue, tail, start)) {
            for (int i = 1; i < tail; i++)
                m->group[queue[i]] = m->group_count++;
        }
    }
}

static Hull *hull_from_triangles(const Qh *q, IssimError *err) {
    const Vec3 *p = q->p;
    int n = q->n;
    HullMerge m = {0};
    int *remap = malloc((size_t)q->face_count * sizeof *remap);
    int tc = 0;
    for (int f = 0; f < q->face_count; f++)
        tc += q->faces[f].alive;
    m.tcount = tc;
    m.tv = malloc((size_t)tc * sizeof *m.tv);
    m.tadj = malloc((size_t)tc * sizeof *m.tadj);
    m.tn = malloc((size_t)tc * sizeof *m.tn);
    m.toff = malloc((size_t)tc * sizeof *m.toff);
    m.tarea = malloc((size_t)tc * sizeof *m.tarea);
    m.group = malloc((size_t)tc * sizeof *m.group);
    int *order = malloc((size_t)tc * sizeof *order);
    int *queue = malloc((size_t)tc * sizeof *queue);
    int *start = malloc((size_t)n * sizeof *start);
    int *vstate = malloc((size_t)n * 3 * sizeof *vstate);
    int *final_index = malloc((size_t)n * sizeof *final_index);
    int *gfirst = malloc((size_t)(tc + 1) * sizeof *gfirst);
    Hull *hull = NULL;
    if (!remap || !m.tv || !m.tadj || !m.tn || !m.toff || !m.tarea || !m.group || !order ||
        !queue || !start || !vstate || !final_index || !gfirst) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "hull: out of memory");
        goto done;
    }
    tc = 0;
    for (int f = 0; f < q->face_count; f++)
        remap[f] = q->faces[f].alive ? tc++ : -1;
    Vec3 lo = p[0], hi = p[0];
    for (int i = 1; i < n; i++) {
        lo = vec3(fmin(lo.x, p[i].x), fmin(lo.y, p[i].y), fmin(lo.z, p[i].z));
        hi = vec3(fmax(hi.x, p[i].x), fmax(hi.y, p[i].y), fmax(hi.z, p[i].z));
    }
    double size = vec3_norm(vec3_sub(hi, lo));
    for (int f = 0; f < q->face_count; f++) {
        const QhFace *face = &q->faces[f];
        if (!face->alive)
            continue;
        int t = remap[f];
        Vec3 cr = vec3_cross(vec3_sub(p[face->v[1]], p[face->v[0]]),
                             vec3_sub(p[face->v[2]], p[face->v[0]]));
        for (int k = 0; k < 3; k++) {
            m.tv[t][k] = face->v[k];
            m.tadj[t][k] = remap[face->adj[k]];
        }
        m.tn[t] = face->n;
        m.toff[t] = face->offset;
        m.tarea[t] = 0.5 * vec3_norm(cr);
    }
    /* Every live triangle must have three live neighbours; a point set at the edge of double
     * precision (found by fuzzing: an octahedron with a far outlier) left one pointing at a
     * deleted face, which the merge below would read out of bounds. */
    for (int t = 0; t < tc; t++)
        for (int k = 0; k < 3; k++)
            if (m.tadj[t][k] < 0) {
                issim_error_set(err, ISSIM_ERR_INVALID,
                                "hull: the points are degenerate at double precision (the hull's "
                                "triangles do not close; coordinates spanning too many orders of "
                                "magnitude, or nearly coincident points?)");
                goto done;
            }
    for (int i = 0; i < n; i++)
        start[i] = -1;
    merge_groups(&m, p, HULL_PLANAR_TOL * size, order, queue, start);

    /* Corners: points in three or more groups. vstate: first group, second group, count. */
    bool merged_ok = true;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            vstate[3 * i] = vstate[3 * i + 1] = -1;
            vstate[3 * i + 2] = 0;
        }
        for (int t = 0; t < tc; t++) {
            for (int k = 0; k < 3; k++) {
                int *s = &vstate[3 * m.tv[t][k]];
                int g = m.group[t];
                if (s[2] == 0) {
                    s[0] = g;
                    s[2] = 1;
                } else if (s[2] == 1 && s[0] != g) {
                    s[1] = g;
                    s[2] = 2;
                } else if (s[2] == 2 && s[0] != g && s[1] != g) {
                    s[2] = 3;
                }
            }
        }
        /* Every polygon needs three corners; otherwise keep the triangles as they are. */
        merged_ok = true;
        int *corners = order; /* reuse: corners per group */
        for (int g = 0; g < m.group_count; g++)
            corners[g] = 0;
        for (int t = 0; t < tc; t++)
            for (int k = 0; k < 3; k++) {
                int a = m.tv[t][k];
                if (m.group[m.tadj[t][k]] != m.group[t] && vstate[3 * a + 2] >= 3)
                    corners[m.group[t]]++;
            }
        for (int g = 0; g < m.group_count; g++)
            if (corners[g] < 3)
                merged_ok = false;
        if (merged_ok)
            break;
        for (int t = 0; t < tc; t++) /* undo every merge */
            m.group[t] = t;
        m.group_count = tc;
    }

    /* Final vertices in input order. */
    int vcount = 0;
    for (int i = 0; i < n; i++)
        final_index[i] = vstate[3 * i + 2] >= 3 ? vcount++ : -1;
    /* Boundary loops: per group, walk from its first boundary edge. */
    int fv_total = 0;
    for (int t = 0; t < tc; t++)
        for (int k = 0; k < 3; k++)
            if (m.group[m.tadj[t][k]] != m.group[t] && final_index[m.tv[t][k]] >= 0)
                fv_total++;
    int fcount = m.group_count;
    size_t bytes = sizeof(Hull) + (size_t)vcount * sizeof(Vec3) +
                   (size_t)fcount * sizeof(HullFace) + (size_t)fv_total * sizeof(int);
    hull = calloc(1, bytes);
    if (!hull) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "hull: out of memory");
        goto done;
    }
    hull->vertex_count = vcount;
    hull->vertices = (Vec3 *)(hull + 1);
    hull->face_count = fcount;
    hull->faces = (HullFace *)(hull->vertices + vcount);
    hull->face_vertices = (int *)(hull->faces + fcount);
    for (int i = 0; i < n; i++)
        if (final_index[i] >= 0)
            hull->vertices[final_index[i]] = p[i];
    /* Triangles bucketed by group (counting sort: gfirst[g] .. gfirst[g + 1] in order[]). */
    for (int g = 0; g <= fcount; g++)
        gfirst[g] = 0;
    for (int t = 0; t < tc; t++)
        gfirst[m.group[t] + 1]++;
    for (int g = 0; g < fcount; g++)
        gfirst[g + 1] += gfirst[g];
    for (int t = 0; t < tc; t++) /* queue: the next free slot per group */
        queue[t] = 0;
    for (int t = 0; t < tc; t++) {
        int g = m.group[t];
        order[gfirst[g] + queue[g]++] = t;
    }
    int fv = 0;
    for (int g = 0; g < fcount; g++) {
        /* start[a]: the boundary half-edge leaving point a; the walk begins at the first. */
        int he0 = -1;
        for (int i = gfirst[g]; i < gfirst[g + 1]; i++) {
            int t = order[i];
            for (int k = 0; k < 3; k++)
                if (m.group[m.tadj[t][k]] != g) {
                    start[m.tv[t][k]] = 3 * t + k;
                    if (he0 < 0)
                        he0 = 3 * t + k;
                }
        }
        HullFace *face = &hull->faces[g];
        face->first = fv;
        int he = he0;
        do {
            int a = m.tv[he / 3][he % 3];
            if (final_index[a] >= 0)
                hull->face_vertices[fv++] = final_index[a];
            int b = m.tv[he / 3][(he % 3 + 1) % 3];
            he = start[b];
        } while (he != he0);
        face->count = fv - face->first;
        /* Newell normal. The offset is the highest of the group's corners, those merged away
         * included, so every hull point is on or below the plane (points dropped while
         * building lie within HULL_EPS_REL of some plane). */
        Vec3 nn = {0, 0, 0}, origin = hull->vertices[hull->face_vertices[face->first]];
        for (int k = 0; k < face->count; k++) { /* relative to a corner: no cancellation */
            Vec3 u = vec3_sub(hull->vertices[hull->face_vertices[face->first + k]], origin);
            Vec3 w = vec3_sub(
                hull->vertices[hull->face_vertices[face->first + (k + 1) % face->count]], origin);
            nn.x += (u.y - w.y) * (u.z + w.z);
            nn.y += (u.z - w.z) * (u.x + w.x);
            nn.z += (u.x - w.x) * (u.y + w.y);
        }
        face->normal = vec3_normalize(nn);
        double off = -INFINITY;
        for (int i = gfirst[g]; i < gfirst[g + 1]; i++)
            for (int k = 0; k < 3; k++) {
                int a = m.tv[order[i]][k];
                off = fmax(off, vec3_dot(face->normal, p[a]));
                start[a] = -1;
            }
        face->offset = off;
    }
    /* A merged face whose corners were all dropped as collinear but two (coordinates that span
     * many orders of magnitude, found by fuzzing) is no polygon: refuse the point set. */
    for (int g = 0; g < fcount; g++)
        if (hull->faces[g].count < 3) {
            issim_error_set(err, ISSIM_ERR_INVALID,
                            "hull: the points are degenerate at double precision (a face of the "
                            "hull has %d corners; coordinates spanning too many orders of "
                            "magnitude?)",
                            hull->faces[g].count);
            free(hull);
            hull = NULL;
            goto done;
        }
    /* Volume centroid. */
    Vec3 c0 = {0, 0, 0};
    for (int i = 0; i < vcount; i++)
        c0 = vec3_add(c0, hull->vertices[i]);
    c0 = vec3_scale(c0, 1.0 / vcount);
    double volume = 0.0;
    Vec3 moment = {0, 0, 0};
    for (int g = 0; g < fcount; g++) {
        const HullFace *face = &hull->faces[g];
        Vec3 a = vec3_sub(hull->vertices[hull->face_vertices[face->first]], c0);
        for (int k = 1; k + 1 < face->count; k++) {
            Vec3 b = vec3_sub(hull->vertices[hull->face_vertices[face->first + k]], c0);
            Vec3 c = vec3_sub(hull->vertices[hull->face_vertices[face->first + k + 1]], c0);
            double v = vec3_dot(a, vec3_cross(b, c)) / 6.0;
            volume += v;
            moment = vec3_mad(moment, v * 0.25, vec3_add(vec3_add(a, b), c));
        }
    }
    hull->centroid = volume > 0.0 ? vec3_add(c0, vec3_scale(moment, 1.0 / volume)) : c0;
    Vec3 box_lo = hull->vertices[0], box_hi = hull->vertices[0];
    for (int i = 1; i < vcount; i++) {
        Vec3 v = hull->vertices[i];
        box_lo = vec3(fmin(box_lo.x, v.x), fmin(box_lo.y, v.y), fmin(box_lo.z, v.z));
        box_hi = vec3(fmax(box_hi.x, v.x), fmax(box_hi.y, v.y), fmax(box_hi.z, v.z));
    }
    hull->box_center = vec3_scale(vec3_add(box_lo, box_hi), 0.5);
    hull->box_half = vec3_scale(vec3_sub(box_hi, box_lo), 0.5);
done:
    free(remap);
    free(m.tv);
    free(m.tadj);
    free(m.tn);
    free(m.toff);
    free(m.tarea);
    free(m.group);
    free(order);
    free(queue);
    free(start);
    free(vstate);
    free(final_index);
    free(gfirst);
    return hull;
}

Hull *hull_create(const Vec3 *points, int count, IssimError *err) {
    if (!points || count < 4) {
        issim_error_set(err, ISSIM_ERR_INVALID, "hull: %d points (at least 4 are needed)", count);
        return NULL;
    }
    double scale = 0.0;
    for (int i = 0; i < count; i++) {
        Vec3 v = points[i];
        if (!isfinite(v.x) || !isfinite(v.y) || !isfinite(v.z)) {
            issim_error_set(err, ISSIM_ERR_INVALID, "hull: point %d is not finite", i);
            return NULL;
        }
        scale = fmax(scale, fabs(v.x) + fabs(v.y) + fabs(v.z));
    }
    Qh q = {.p = points,
            .n = count,
            .eps = HULL_EPS_REL * scale,
            .eps_visible = HULL_VISIBLE_REL * scale};
    q.next = malloc((size_t)count * sizeof *q.next);
    q.slot = malloc((size_t)count * sizeof *q.slot);
    Hull *hull = NULL;
    if (!q.next || !q.slot || !qh_reserve(&q, 64)) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "hull: out of memory");
        goto done;
    }
    for (int i = 0; i < count; i++)
        q.slot[i] = -1;
    if (qh_build(&q, err) < 0) {
        if (q.nomem)
            issim_error_set(err, ISSIM_ERR_NOMEM, "hull: out of memory");
        goto done;
    }
    hull = hull_from_triangles(&q, err);
done:
    free(q.faces);
    free(q.next);
    free(q.slot);
    free(q.visible);
    free(q.stack_face);
    free(q.stack_entry);
    free(q.stack_step);
    free(q.hface);
    free(q.hedge);
    return hull;
}

void hull_destroy(Hull *hull) {
    free(hull);
}

/* ===== .obj ===== */

/* Parses up to max numbers after the keyword; returns how many, or -1 on a malformed token. */
static int parse_numbers(const char *s, double *out, int max) {
    int count = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (*s == '\0' || *s == '#')
            return count;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno == ERANGE || !isfinite(v) ||
            (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n'))
            return -1;
        if (count < max)
            out[count] = v;
        count++;
        s = end;
    }
}

Hull *hull_load_obj(const char *path, IssimError *err) {
    ObjFile file;
    if (!obj_file_open(path, &file, err))
        return NULL;
    FILE *f = file.f;
    Vec3 *pts = NULL;
    int count = 0, cap = 0, line_no = 0;
    char *line = NULL;
    size_t line_cap = 0;
    Hull *hull = NULL;
    while (getline(&line, &line_cap, f) >= 0) {
        line_no++;
        const char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (s[0] != 'v' || (s[1] != ' ' && s[1] != '\t'))
            continue; /* faces, normals, texture coordinates, comments */
        double xyz[4];
        int k = parse_numbers(s + 1, xyz, 4);
        if (k < 3 || k > 4) {
            issim_error_set(err, ISSIM_ERR_INVALID,
                            "%s:%d: malformed vertex (expected \"v x y z\")", path, line_no);
            goto done;
        }
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            Vec3 *np = realloc(pts, (size_t)cap * sizeof *np);
            if (!np) {
                issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory", path);
                goto done;
            }
            pts = np;
        }
        pts[count++] = vec3(xyz[0], xyz[1], xyz[2]);
    }
    if (ferror(f)) {
        issim_error_set(err, ISSIM_ERR_IO, "%s: read error", path);
        goto done;
    }
    IssimError sub = {0};
    hull = hull_create(pts, count, &sub);
    if (!hull)
        issim_error_set(err, sub.status, "%s: %s", path, sub.message);
done:
    free(line);
    free(pts);
    obj_file_close(&file);
    return hull;
}
