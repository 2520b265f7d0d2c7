/* Triangle meshes of the collision shapes (collision.h), as unindexed triangle lists with
 * per-vertex normals: spheres and boxes once per scene (scaled per instance), capsules per
 * radius/length pair, hulls, polygons, triangle meshes and smooth surfaces per shape. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "display_internal.h"

typedef struct MeshBuilder {
    MeshData *m;
    int capacity;
    bool failed;
} MeshBuilder;

static void push_vertex(MeshBuilder *b, Vec3 p, Vec3 n) {
    MeshData *m = b->m;
    if (b->failed)
        return;
    if (m->vertex_count == b->capacity) {
        int cap = b->capacity ? 2 * b->capacity : 256;
        float *p2 = realloc(m->positions, (size_t)cap * 3 * sizeof(float));
        if (!p2) {
            b->failed = true;
            return;
        }
        m->positions = p2;
        float *n2 = realloc(m->normals, (size_t)cap * 3 * sizeof(float));
        if (!n2) {
            b->failed = true;
            return;
        }
        m->normals = n2;
        b->capacity = cap;
    }
    float *pp = m->positions + 3 * m->vertex_count, *nn = m->normals + 3 * m->vertex_count;
    pp[0] = (float)p.x, pp[1] = (float)p.y, pp[2] = (float)p.z;
    nn[0] = (float)n.x, nn[1] = (float)n.y, nn[2] = (float)n.z;
    m->vertex_count++;
}

static void push_flat_triangle(MeshBuilder *b, Vec3 a, Vec3 c1, Vec3 c2) {
    Vec3 n = vec3_normalize(vec3_cross(vec3_sub(c1, a), vec3_sub(c2, a)));
    push_vertex(b, a, n);
    push_vertex(b, c1, n);
    push_vertex(b, c2, n);
}

static MeshBuilder builder_start(MeshData *m) {
    *m = (MeshData){0};
    return (MeshBuilder){.m = m};
}

static bool builder_finish(MeshBuilder *b) {
    if (b->failed)
        mesh_data_free(b->m);
    return !b->failed;
}

void mesh_data_free(MeshData *m) {
    free(m->positions);
    free(m->normals);
    free(m->indices);
    *m = (MeshData){0};
}

/* A surface of revolution about z, indexed: rings[k] = (z, radius, normal z, normal radial),
 * slices + 1 vertices per ring (the seam is duplicated). */
static bool lathe(MeshData *m, const double (*rings)[4], int ring_count, int slices) {
    *m = (MeshData){0};
    int nv = ring_count * (slices + 1), ni = (ring_count - 1) * slices * 6;
    m->positions = malloc((size_t)nv * 3 * sizeof(float));
    m->normals = malloc((size_t)nv * 3 * sizeof(float));
    m->indices = malloc((size_t)ni * sizeof(unsigned));
    if (!m->positions || !m->normals || !m->indices) {
        mesh_data_free(m);
        return false;
    }
    for (int k = 0; k < ring_count; k++) {
        for (int j = 0; j <= slices; j++) {
            double phi = 2 * M_PI * j / slices, c = cos(phi), sn = sin(phi);
            float *p = m->positions + 3 * (k * (slices + 1) + j);
            float *n = m->normals + 3 * (k * (slices + 1) + j);
            p[0] = (float)(rings[k][1] * c), p[1] = (float)(rings[k][1] * sn);
            p[2] = (float)rings[k][0];
            n[0] = (float)(rings[k][3] * c), n[1] = (float)(rings[k][3] * sn);
            n[2] = (float)rings[k][2];
        }
    }
    for (int k = 0; k + 1 < ring_count; k++) {
        for (int j = 0; j < slices; j++) {
            unsigned a = (unsigned)(k * (slices + 1) + j), b = a + (unsigned)(slices + 1);
            unsigned quad[6] = {a, b, b + 1, a, b + 1, a + 1};
            memcpy(m->indices + m->index_count, quad, sizeof quad);
            m->index_count += 6;
        }
    }
    m->vertex_count = nv;
    return true;
}

bool mesh_unit_sphere(MeshData *m, int slices, int stacks) {
    double rings[65][4];
    stacks = stacks > 64 ? 64 : stacks;
    for (int k = 0; k <= stacks; k++) {
        double theta = M_PI * k / stacks;
        rings[k][0] = cos(theta), rings[k][1] = sin(theta);
        rings[k][2] = cos(theta), rings[k][3] = sin(theta);
    }
    return lathe(m, (const double(*)[4])rings, stacks + 1, slices);
}

bool mesh_unit_box(MeshData *m) {
    MeshBuilder b = builder_start(m);
    for (int axis = 0; axis < 3; axis++) {
        for (int sign = -1; sign <= 1; sign += 2) {
            double n[3] = {0, 0, 0}, u[3] = {0, 0, 0}, v[3] = {0, 0, 0};
            n[axis] = sign;
            u[(axis + 1) % 3] = 1;
            v[(axis + 2) % 3] = 1;
            Vec3 nn = {n[0], n[1], n[2]}, uu = {u[0], u[1], u[2]}, vv = {v[0], v[1], v[2]};
            Vec3 c[4];
            double su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
            for (int k = 0; k < 4; k++)
                c[k] = vec3_add(nn, vec3_add(vec3_scale(uu, su[k]), vec3_scale(vv, sv[k])));
            /* Counter-clockwise seen from outside: flip the winding on the negative side. */
            int order[2][3] = {{0, 1, 2}, {0, 2, 3}};
            for (int t = 0; t < 2; t++) {
                for (int k = 0; k < 3; k++) {
                    int idx = sign > 0 ? order[t][k] : order[t][2 - k];
                    push_vertex(&b, c[idx], nn);
                }
            }
        }
    }
    return builder_finish(&b);
}

bool mesh_capsule(MeshData *m, double radius, double half_length, int slices, int stacks) {
    /* Upper hemisphere around +half_length, lower around -half_length; the band between the
     * two equators is the cylinder. */
    double rings[2 * 33][4];
    stacks = stacks > 32 ? 32 : stacks;
    int n = 0;
    for (int half = 0; half < 2; half++) {
        for (int k = 0; k <= stacks; k++) {
            double theta = M_PI / 2 * (half + (double)k / stacks);
            double zc = half == 0 ? half_length : -half_length;
            rings[n][0] = zc + radius * cos(theta), rings[n][1] = radius * sin(theta);
            rings[n][2] = cos(theta), rings[n][3] = sin(theta);
            n++;
        }
    }
    return lathe(m, (const double(*)[4])rings, n, slices);
}

bool mesh_hull(MeshData *m, const Hull *hull) {
    MeshBuilder b = builder_start(m);
    for (int f = 0; f < hull->face_count; f++) {
        const HullFace *face = &hull->faces[f];
        Vec3 v0 = hull->vertices[hull->face_vertices[face->first]];
        for (int k = 1; k + 1 < face->count; k++) {
            push_vertex(&b, v0, face->normal);
            push_vertex(&b, hull->vertices[hull->face_vertices[face->first + k]], face->normal);
            push_vertex(&b, hull->vertices[hull->face_vertices[face->first + k + 1]], face->normal);
        }
    }
    return builder_finish(&b);
}

bool mesh_trimesh(MeshData *m, const TriMesh *mesh) {
    MeshBuilder b = builder_start(m);
    int n = trimesh_triangle_count(mesh);
    for (int i = 0; i < n; i++) {
        Vec3 c[3];
        trimesh_triangle(mesh, i, c);
        push_flat_triangle(&b, c[0], c[1], c[2]);
    }
    return builder_finish(&b);
}

bool mesh_polygon_prism(MeshData *m, const Vec3 *points, int count, double half_width) {
    MeshBuilder b = builder_start(m);
    if (count < 3) {
        mesh_data_free(m);
        return false;
    }
    /* The polygon lies in the body's x-z plane; the prism extends +-half_width along y so a
     * planar scene is visible from any angle. Both windings are emitted (no culling). */
    for (int side = -1; side <= 1; side += 2) {
        Vec3 n = {0, side, 0};
        for (int k = 1; k + 1 < count; k++) {
            Vec3 a = {points[0].x, side * half_width, points[0].z};
            Vec3 c = {points[k].x, side * half_width, points[k].z};
            Vec3 d = {points[k + 1].x, side * half_width, points[k + 1].z};
            push_vertex(&b, a, n);
            push_vertex(&b, c, n);
            push_vertex(&b, d, n);
        }
    }
    for (int k = 0; k < count; k++) {
        Vec3 p = points[k], q = points[(k + 1) % count];
        Vec3 a = {p.x, -half_width, p.z}, c = {q.x, -half_width, q.z};
        Vec3 d = {q.x, half_width, q.z}, e = {p.x, half_width, p.z};
        push_flat_triangle(&b, a, c, d);
        push_flat_triangle(&b, a, d, e);
    }
    return builder_finish(&b);
}

bool mesh_unit_quad(MeshData *m) {
    MeshBuilder b = builder_start(m);
    Vec3 n = {0, 0, 1};
    Vec3 c[4] = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}};
    int order[6] = {0, 1, 2, 0, 2, 3};
    for (int k = 0; k < 6; k++)
        push_vertex(&b, c[order[k]], n);
    return builder_finish(&b);
}

bool mesh_smooth_surface(MeshData *m, const SurfaceTessellation *t) {
    *m = (MeshData){0};
    m->positions = malloc((size_t)t->vertex_count * 3 * sizeof(float));
    m->normals = malloc((size_t)t->vertex_count * 3 * sizeof(float));
    m->indices = malloc((size_t)t->triangle_count * 3 * sizeof(unsigned));
    if (!m->positions || !m->normals || !m->indices) {
        mesh_data_free(m);
        return false;
    }
    for (int i = 0; i < t->vertex_count; i++) {
        Vec3 p = t->vertices[i], n = t->normals[i];
        float *pp = m->positions + 3 * i, *nn = m->normals + 3 * i;
        pp[0] = (float)p.x, pp[1] = (float)p.y, pp[2] = (float)p.z;
        nn[0] = (float)n.x, nn[1] = (float)n.y, nn[2] = (float)n.z;
    }
    for (int k = 0; k < 3 * t->triangle_count; k++)
        m->indices[k] = (unsigned)t->triangles[k / 3][k % 3];
    m->vertex_count = t->vertex_count;
    m->index_count = 3 * t->triangle_count;
    return true;
}
