/* Triangle meshes of the collision shapes (collision.h), as unindexed triangle lists with
 * per-vertex normals: spheres and boxes once per scene (scaled per instance), capsules per
 * radius/length pair, hulls, polygons and triangle meshes per shape. */
#include <math.h>
#include <stdlib.h>

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
    *m = (MeshData){0};
}

/* A point of a sphere of radius r centred at (0, 0, z0): polar angle theta from +z. */
static Vec3 sphere_point(double theta, double phi) {
    return (Vec3){sin(theta) * cos(phi), sin(theta) * sin(phi), cos(theta)};
}

/* Latitude band [theta0, theta1] of a sphere of radius r centred at z = zc. */
static void sphere_band(MeshBuilder *b, double r, double zc, double theta0, double theta1,
                        int slices, int stacks) {
    for (int i = 0; i < stacks; i++) {
        double t0 = theta0 + (theta1 - theta0) * i / stacks;
        double t1 = theta0 + (theta1 - theta0) * (i + 1) / stacks;
        for (int j = 0; j < slices; j++) {
            double p0 = 2 * M_PI * j / slices, p1 = 2 * M_PI * (j + 1) / slices;
            Vec3 n[4] = {sphere_point(t0, p0), sphere_point(t1, p0), sphere_point(t1, p1),
                         sphere_point(t0, p1)};
            Vec3 v[4];
            for (int k = 0; k < 4; k++)
                v[k] = (Vec3){r * n[k].x, r * n[k].y, zc + r * n[k].z};
            int tri[2][3] = {{0, 1, 2}, {0, 2, 3}};
            for (int t = 0; t < 2; t++)
                for (int k = 0; k < 3; k++)
                    push_vertex(b, v[tri[t][k]], n[tri[t][k]]);
        }
    }
}

bool mesh_unit_sphere(MeshData *m, int slices, int stacks) {
    MeshBuilder b = builder_start(m);
    sphere_band(&b, 1.0, 0.0, 0.0, M_PI, slices, stacks);
    return builder_finish(&b);
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
    MeshBuilder b = builder_start(m);
    sphere_band(&b, radius, half_length, 0.0, M_PI / 2, slices, stacks);
    sphere_band(&b, radius, -half_length, M_PI / 2, M_PI, slices, stacks);
    for (int j = 0; j < slices; j++) {
        double p0 = 2 * M_PI * j / slices, p1 = 2 * M_PI * (j + 1) / slices;
        Vec3 n0 = {cos(p0), sin(p0), 0}, n1 = {cos(p1), sin(p1), 0};
        Vec3 a = {radius * n0.x, radius * n0.y, half_length};
        Vec3 c = {radius * n0.x, radius * n0.y, -half_length};
        Vec3 d = {radius * n1.x, radius * n1.y, -half_length};
        Vec3 e = {radius * n1.x, radius * n1.y, half_length};
        push_vertex(&b, a, n0);
        push_vertex(&b, c, n0);
        push_vertex(&b, d, n1);
        push_vertex(&b, a, n0);
        push_vertex(&b, d, n1);
        push_vertex(&b, e, n1);
    }
    return builder_finish(&b);
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
