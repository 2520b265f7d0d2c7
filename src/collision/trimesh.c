/* Static triangle meshes: a copy of the vertices and triangles, a bounding-volume tree of the
 * triangles' boxes, the class of every edge for internal-edge handling (mesh_collide.c), and
 * Wavefront .obj loading.
 *
 * The tree (Ericson, Real-Time Collision Detection, 2005, 6.1-6.2) is built top-down: a node's
 * triangles are split at the median of their centroids along the longest axis of the centroids'
 * bounds, down to leaves of at most TRIMESH_LEAF triangles, so it is balanced (depth about
 * log2(n / 4)) whatever the triangle sizes. Queries walk it with a fixed stack.
 *
 * Edge classes. Each triangle edge is matched with the other triangle using it in the opposite
 * direction (edges sorted by their vertex pair). With one such neighbour the edge is flat when
 * the two normals agree within TRIMESH_FLAT_COS, concave when the neighbour's far corner lies
 * in front of the triangle (the two faces make a valley), and convex otherwise; an edge with no
 * neighbour, or shared by more than two triangles, is a border: sharp, like a convex one.
 *
 * Costs: creation O(n log^2 n) time, O(n) memory, all allocated at creation; a query costs
 * O(log n + k). Thread: the mesh is immutable after creation; queries from any thread. */
#include "issim/collision.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/arena.h"
#include "collision_internal.h"

#define TRIMESH_LEAF 4
/* Neighbours within about 0.08 degrees are coplanar. */
#define TRIMESH_FLAT_COS (1.0 - 1e-6)
#define TRIMESH_STACK 96

typedef struct BvhNode {
    Aabb box;
    int left, right; /* children (inner node) */
    int first;       /* leaf: first index into order */
    int count;       /* leaf: triangles; 0 for an inner node */
} BvhNode;

struct TriMesh {
    int vertex_count;
    Vec3 *vertices;
    int triangle_count;
    int (*triangles)[3];
    unsigned char *edge_flags; /* triangle_count */
    Aabb bounds;
    int node_count;
    BvhNode *nodes;
    int *order; /* triangle_count: triangle indices in leaf order */
};

/* Stable merge sort of idx[0..n) by key[idx[.]] (tmp: n ints). */
static void sort_by_key(int *idx, int n, const double *key, int *tmp) {
    if (n < 2)
        return;
    int h = n / 2;
    sort_by_key(idx, h, key, tmp);
    sort_by_key(idx + h, n - h, key, tmp);
    int i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = key[idx[j]] < key[idx[i]] ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

static Aabb triangle_box(const TriMesh *m, int t) {
    const int *v = m->triangles[t];
    Vec3 a = m->vertices[v[0]], b = m->vertices[v[1]], c = m->vertices[v[2]];
    return (Aabb){
        {fmin(a.x, fmin(b.x, c.x)), fmin(a.y, fmin(b.y, c.y)), fmin(a.z, fmin(b.z, c.z))},
        {fmax(a.x, fmax(b.x, c.x)), fmax(a.y, fmax(b.y, c.y)), fmax(a.z, fmax(b.z, c.z))}};
}

static Aabb box_union(Aabb a, Aabb b) {
    return (Aabb){{fmin(a.min.x, b.min.x), fmin(a.min.y, b.min.y), fmin(a.min.z, b.min.z)},
                  {fmax(a.max.x, b.max.x), fmax(a.max.y, b.max.y), fmax(a.max.z, b.max.z)}};
}

static bool box_overlap(Aabb a, Aabb b) {
    return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
           a.min.z <= b.max.z && b.min.z <= a.max.z;
}

typedef struct BvhBuild {
    TriMesh *m;
    Vec3 *centroid;
    double *key;
    int *tmp;
} BvhBuild;

static int bvh_build(BvhBuild *b, int first, int count) {
    TriMesh *m = b->m;
    int node = m->node_count++;
    Aabb box = triangle_box(m, m->order[first]);
    Aabb cbox = {b->centroid[m->order[first]], b->centroid[m->order[first]]};
    for (int i = first + 1; i < first + count; i++) {
        int t = m->order[i];
        box = box_union(box, triangle_box(m, t));
        cbox = box_union(cbox, (Aabb){b->centroid[t], b->centroid[t]});
    }
    m->nodes[node].box = box;
    if (count <= TRIMESH_LEAF) {
        m->nodes[node].first = first;
        m->nodes[node].count = count;
        m->nodes[node].left = m->nodes[node].right = -1;
        return node;
    }
    Vec3 ext = vec3_sub(cbox.max, cbox.min);
    int axis = ext.x >= ext.y && ext.x >= ext.z ? 0 : ext.y >= ext.z ? 1 : 2;
    for (int i = first; i < first + count; i++) {
        Vec3 c = b->centroid[m->order[i]];
        b->key[m->order[i]] = axis == 0 ? c.x : axis == 1 ? c.y : c.z;
    }
    sort_by_key(m->order + first, count, b->key, b->tmp);
    int half = count / 2;
    m->nodes[node].count = 0;
    m->nodes[node].first = -1;
    int left = bvh_build(b, first, half);
    int right = bvh_build(b, first + half, count - half);
    m->nodes[node].left = left;
    m->nodes[node].right = right;
    return node;
}

/* Edge classes from matched opposite half-edges. */
static void classify_edges(TriMesh *m, long long *keys, int *idx, int *tmp, double *dkeys) {
    int n3 = 3 * m->triangle_count;
    /* Sort half-edges by (min vertex, max vertex); the key fits a double exactly for meshes
     * below 2^26 vertices, which trimesh_create enforces. */
    for (int h = 0; h < n3; h++) {
        int t = h / 3, j = h % 3;
        int u = m->triangles[t][j], v = m->triangles[t][(j + 1) % 3];
        int lo = u < v ? u : v, hi = u < v ? v : u;
        keys[h] = (long long)lo * m->vertex_count + hi;
        dkeys[h] = (double)keys[h];
        idx[h] = h;
    }
    sort_by_key(idx, n3, dkeys, tmp);
    for (int t = 0; t < m->triangle_count; t++)
        m->edge_flags[t] = 0;
    for (int s = 0; s < n3;) {
        int e = s + 1;
        while (e < n3 && keys[idx[e]] == keys[idx[s]])
            e++;
        if (e - s == 2) {
            int h1 = idx[s], h2 = idx[s + 1];
            int t1 = h1 / 3, j1 = h1 % 3, t2 = h2 / 3, j2 = h2 % 3;
            if (m->triangles[t1][j1] == m->triangles[t2][(j2 + 1) % 3]) { /* opposite */
                for (int pass = 0; pass < 2; pass++) {
                    int ta = pass ? t2 : t1, ja = pass ? j2 : j1, tb = pass ? t1 : t2;
                    int jb = pass ? j1 : j2;
                    const int *A = m->triangles[ta], *B = m->triangles[tb];
                    Vec3 a0 = m->vertices[A[0]];
                    Vec3 na = vec3_cross(vec3_sub(m->vertices[A[1]], a0),
                                         vec3_sub(m->vertices[A[2]], a0));
                    Vec3 b0 = m->vertices[B[0]];
                    Vec3 nb = vec3_cross(vec3_sub(m->vertices[B[1]], b0),
                                         vec3_sub(m->vertices[B[2]], b0));
                    double la = vec3_norm(na), lb = vec3_norm(nb);
                    if (!(la > 0.0) || !(lb > 0.0))
                        continue; /* degenerate: sharp */
                    na = vec3_scale(na, 1.0 / la);
                    nb = vec3_scale(nb, 1.0 / lb);
                    Vec3 far = m->vertices[B[(jb + 2) % 3]];
                    unsigned cls = 0;
                    if (vec3_dot(na, nb) >= TRIMESH_FLAT_COS)
                        cls = TRIMESH_EDGE_FLAT;
                    else if (vec3_dot(na, vec3_sub(far, m->vertices[A[ja]])) > 0.0)
                        cls = TRIMESH_EDGE_CONCAVE;
                    m->edge_flags[ta] |= (unsigned char)(cls << (2 * ja));
                }
            }
        }
        s = e;
    }
}

TriMesh *trimesh_create(const Vec3 *vertices, int vertex_count, const int (*triangles)[3],
                        int triangle_count, IssimError *err) {
    if (!vertices || !triangles || vertex_count < 3 || triangle_count < 1) {
        issim_error_set(err, ISSIM_ERR_INVALID, "mesh: %d vertices and %d triangles", vertex_count,
                        triangle_count);
        return NULL;
    }
    if (vertex_count >= (1 << 26) || triangle_count >= (1 << 26)) {
        issim_error_set(err, ISSIM_ERR_RANGE, "mesh: too large (%d vertices, %d triangles)",
                        vertex_count, triangle_count);
        return NULL;
    }
    for (int i = 0; i < vertex_count; i++) {
        Vec3 v = vertices[i];
        if (!isfinite(v.x) || !isfinite(v.y) || !isfinite(v.z)) {
            issim_error_set(err, ISSIM_ERR_INVALID,
                            "mesh: vertex %d (counting from 1, as .obj files do) is not finite",
                            i + 1);
            return NULL;
        }
    }
    for (int t = 0; t < triangle_count; t++)
        for (int k = 0; k < 3; k++)
            if (triangles[t][k] < 0 || triangles[t][k] >= vertex_count) {
                issim_error_set(err, ISSIM_ERR_RANGE,
                                "mesh: triangle %d uses vertex %d (there are %d; counting from 1, "
                                "as .obj files do)",
                                t + 1, triangles[t][k] + 1, vertex_count);
                return NULL;
            }
    TriMesh *m = calloc(1, sizeof *m);
    int n3 = 3 * triangle_count;
    BvhBuild b = {m, NULL, NULL, NULL};
    long long *keys = NULL;
    int *idx = NULL;
    double *dkeys = NULL;
    if (m) {
        m->vertices = malloc((size_t)vertex_count * sizeof *m->vertices);
        m->triangles = malloc((size_t)triangle_count * sizeof *m->triangles);
        m->edge_flags = malloc((size_t)triangle_count);
        m->nodes = malloc((size_t)(2 * triangle_count) * sizeof *m->nodes);
        m->order = malloc((size_t)triangle_count * sizeof *m->order);
        b.centroid = malloc((size_t)triangle_count * sizeof *b.centroid);
        b.key = malloc((size_t)triangle_count * sizeof *b.key);
        b.tmp = malloc((size_t)n3 * sizeof *b.tmp);
        keys = malloc((size_t)n3 * sizeof *keys);
        idx = malloc((size_t)n3 * sizeof *idx);
        dkeys = malloc((size_t)n3 * sizeof *dkeys);
    }
    if (!m || !m->vertices || !m->triangles || !m->edge_flags || !m->nodes || !m->order ||
        !b.centroid || !b.key || !b.tmp || !keys || !idx || !dkeys) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "mesh: out of memory");
        trimesh_destroy(m);
        m = NULL;
        goto done;
    }
    m->vertex_count = vertex_count;
    m->triangle_count = triangle_count;
    memcpy(m->vertices, vertices, (size_t)vertex_count * sizeof *m->vertices);
    memcpy(m->triangles, triangles, (size_t)triangle_count * sizeof *m->triangles);
    m->bounds = (Aabb){vertices[0], vertices[0]};
    for (int i = 1; i < vertex_count; i++)
        m->bounds = box_union(m->bounds, (Aabb){vertices[i], vertices[i]});
    for (int t = 0; t < triangle_count; t++) {
        const int *v = triangles[t];
        m->order[t] = t;
        b.centroid[t] = vec3_scale(
            vec3_add(vec3_add(vertices[v[0]], vertices[v[1]]), vertices[v[2]]), 1.0 / 3.0);
    }
    bvh_build(&b, 0, triangle_count);
    classify_edges(m, keys, idx, b.tmp, dkeys);
done:
    free(b.centroid);
    free(b.key);
    free(b.tmp);
    free(keys);
    free(idx);
    free(dkeys);
    return m;
}

void trimesh_destroy(TriMesh *mesh) {
    if (!mesh)
        return;
    free(mesh->vertices);
    free(mesh->triangles);
    free(mesh->edge_flags);
    free(mesh->nodes);
    free(mesh->order);
    free(mesh);
}

int trimesh_triangle_count(const TriMesh *mesh) {
    return mesh->triangle_count;
}

void trimesh_triangle(const TriMesh *mesh, int i, Vec3 corners[3]) {
    for (int k = 0; k < 3; k++)
        corners[k] = mesh->vertices[mesh->triangles[i][k]];
}

void trimesh_triangle_indices(const TriMesh *mesh, int i, int indices[3]) {
    for (int k = 0; k < 3; k++)
        indices[k] = mesh->triangles[i][k];
}

int trimesh_vertex_count(const TriMesh *mesh) {
    return mesh->vertex_count;
}

Vec3 trimesh_vertex(const TriMesh *mesh, int i) {
    return mesh->vertices[i];
}

unsigned trimesh_edge_flags(const TriMesh *mesh, int i) {
    return mesh->edge_flags[i];
}

Aabb trimesh_bounds(const TriMesh *mesh) {
    return mesh->bounds;
}

int trimesh_query(const TriMesh *mesh, Aabb box, int *out, int max) {
    int stack[TRIMESH_STACK];
    int sp = 0, total = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const BvhNode *n = &mesh->nodes[stack[--sp]];
        if (!box_overlap(n->box, box))
            continue;
        if (n->count > 0) {
            for (int i = n->first; i < n->first + n->count; i++) {
                int t = mesh->order[i];
                if (box_overlap(triangle_box(mesh, t), box)) {
                    if (total < max)
                        out[total] = t;
                    total++;
                }
            }
        } else {
            /* Depth is about log2(n / 4) < TRIMESH_STACK for any mesh that fits in memory. */
            ISSIM_ASSERT(sp + 2 <= TRIMESH_STACK);
            stack[sp++] = n->right;
            stack[sp++] = n->left;
        }
    }
    return total;
}

/* ===== .obj ===== */

typedef struct ObjFace {
    int v[3];
    int line;
} ObjFace;

/* Parses a face corner ("7", "7/2", "7/2/5", "7//5", negative relative); returns false when
 * malformed. */
static bool parse_corner(const char **s, long *index) {
    char *end;
    errno = 0;
    long v = strtol(*s, &end, 10);
    if (end == *s || errno == ERANGE)
        return false;
    const char *p = end;
    for (int k = 0; k < 2 && *p == '/'; k++) {
        p++;
        if (*p == '/' || *p == ' ' || *p == '\t' || *p == '\0' || *p == '\r' || *p == '\n')
            continue;
        strtol(p, &end, 10);
        if (end == p)
            return false;
        p = end;
    }
    if (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
        return false;
    *index = v;
    *s = p;
    return true;
}

TriMesh *trimesh_load_obj(const char *path, IssimError *err) {
    ObjFile file;
    if (!obj_file_open(path, &file, err))
        return NULL;
    FILE *f = file.f;
    Vec3 *verts = NULL;
    ObjFace *faces = NULL;
    int(*tris)[3] = NULL;
    long *corner = NULL;
    int vcount = 0, vcap = 0, fcount = 0, fcap = 0, ccap = 0, line_no = 0;
    char *line = NULL;
    size_t line_cap = 0;
    TriMesh *mesh = NULL;
    while (getline(&line, &line_cap, f) >= 0) {
        line_no++;
        const char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        bool is_v = s[0] == 'v' && (s[1] == ' ' || s[1] == '\t');
        bool is_f = s[0] == 'f' && (s[1] == ' ' || s[1] == '\t');
        if (is_v) {
            double xyz[3];
            int k = 0;
            const char *p = s + 1;
            bool ok = true;
            for (;;) {
                while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
                    p++;
                if (*p == '\0' || *p == '#')
                    break;
                char *end;
                errno = 0;
                double v = strtod(p, &end);
                if (end == p || errno == ERANGE || !isfinite(v) ||
                    (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n')) {
                    ok = false;
                    break;
                }
                if (k < 3)
                    xyz[k] = v;
                k++;
                p = end;
            }
            if (!ok || k < 3 || k > 4) {
                issim_error_set(err, ISSIM_ERR_INVALID,
                                "%s:%d: malformed vertex (expected \"v x y z\")", path, line_no);
                goto done;
            }
            if (!issim_array_reserve((void **)&verts, &vcap, vcount + 1, sizeof *verts))
                goto nomem;
            verts[vcount++] = vec3(xyz[0], xyz[1], xyz[2]);
        } else if (is_f) {
            int n = 0;
            const char *p = s + 1;
            for (;;) {
                while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
                    p++;
                if (*p == '\0' || *p == '#')
                    break;
                long idx;
                if (!parse_corner(&p, &idx)) {
                    issim_error_set(err, ISSIM_ERR_INVALID,
                                    "%s:%d: malformed face corner (expected \"f i j k\" with "
                                    "optional /texture/normal indices)",
                                    path, line_no);
                    goto done;
                }
                /* Relative indices count back from the last vertex read so far. */
                long resolved = idx < 0 ? vcount + idx : idx - 1;
                if (idx == 0 || resolved < 0 || resolved >= (1L << 30)) {
                    issim_error_set(err, ISSIM_ERR_RANGE, "%s:%d: vertex index %ld out of range",
                                    path, line_no, idx);
                    goto done;
                }
                if (!issim_array_reserve((void **)&corner, &ccap, n + 1, sizeof *corner))
                    goto nomem;
                corner[n++] = resolved;
            }
            if (n < 3) {
                issim_error_set(err, ISSIM_ERR_INVALID,
                                "%s:%d: a face needs at least 3 vertices (has %d)", path, line_no,
                                n);
                goto done;
            }
            for (int k = 1; k + 1 < n; k++) { /* fan */
                if (!issim_array_reserve((void **)&faces, &fcap, fcount + 1, sizeof *faces))
                    goto nomem;
                faces[fcount++] =
                    (ObjFace){{(int)corner[0], (int)corner[k], (int)corner[k + 1]}, line_no};
            }
        }
    }
    if (ferror(f)) {
        issim_error_set(err, ISSIM_ERR_IO, "%s: read error", path);
        goto done;
    }
    if (fcount == 0) {
        issim_error_set(err, ISSIM_ERR_INVALID, "%s: no faces", path);
        goto done;
    }
    tris = malloc((size_t)fcount * sizeof *tris);
    if (!tris)
        goto nomem;
    for (int i = 0; i < fcount; i++) {
        for (int k = 0; k < 3; k++) {
            if (faces[i].v[k] >= vcount) { /* forward references are checked at the end */
                issim_error_set(err, ISSIM_ERR_RANGE,
                                "%s:%d: vertex index %d out of range (%d vertices)", path,
                                faces[i].line, faces[i].v[k] + 1, vcount);
                goto done;
            }
            tris[i][k] = faces[i].v[k];
        }
    }
    IssimError sub = {0};
    mesh = trimesh_create(verts, vcount, (const int(*)[3])tris, fcount, &sub);
    if (!mesh)
        issim_error_set(err, sub.status, "%s: %s", path, sub.message);
    goto done;
nomem:
    issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory", path);
done:
    free(line);
    free(verts);
    free(faces);
    free(tris);
    free(corner);
    obj_file_close(&file);
    return mesh;
}
