/* The surface of a tetrahedral mesh (the 3D counterpart of the outline walk in mapgen_mesh.c):
 * faces used by one tetrahedron, oriented outward, and each surface node's outward normal as
 * the area-weighted mean of its faces' normals. The map nodes and the traction-free boundary
 * of 000 eq. 3.12 live there. */
#include "mapgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Face {
    int key[3];    /* sorted corners: equal for the two sides of an interior face */
    int corner[3]; /* outward order */
} Face;

static int compare_face(const void *a, const void *b) {
    const Face *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x->key[k] != y->key[k])
            return (x->key[k] > y->key[k]) - (x->key[k] < y->key[k]);
    return 0;
}

static void sub3(const double *a, const double *b, double *out) {
    for (int k = 0; k < 3; k++)
        out[k] = a[k] - b[k];
}

static void cross3(const double *a, const double *b, double *out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static void sort3(int *v) {
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2 - i; j++)
            if (v[j] > v[j + 1]) {
                int t = v[j];
                v[j] = v[j + 1];
                v[j + 1] = t;
            }
}

/* Positive orientation ((b - a) x (c - a)) . (d - a) > 0 makes faces (1 2 3), (0 3 2), (0 1 3)
 * and (0 2 1) point outward. */
static const int FACES[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

IssimStatus mapgen_surface_boundary(MapgenMesh *mesh, IssimError *err) {
    int nt = mesh->cell_count;
    Face *faces = malloc((size_t)nt * 4 * sizeof *faces);
    int *slot = malloc((size_t)mesh->node_count * sizeof *slot);
    double *normal = calloc((size_t)mesh->node_count * 3, sizeof *normal);
    if (!faces || !slot || !normal) {
        free(faces);
        free(slot);
        free(normal);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "mesh: out of memory");
    }
    for (int t = 0; t < nt; t++) {
        int *v = mesh->cells + 4 * t;
        double e1[3], e2[3], e3[3], c[3];
        sub3(mesh->points + 3 * v[1], mesh->points + 3 * v[0], e1);
        sub3(mesh->points + 3 * v[2], mesh->points + 3 * v[0], e2);
        sub3(mesh->points + 3 * v[3], mesh->points + 3 * v[0], e3);
        cross3(e1, e2, c);
        double volume6 = c[0] * e3[0] + c[1] * e3[1] + c[2] * e3[2];
        if (volume6 < 0) {
            int swap = v[1];
            v[1] = v[2];
            v[2] = swap;
            volume6 = -volume6;
        }
        mesh->measure += volume6 / 6.0;
        for (int f = 0; f < 4; f++) {
            Face *face = faces + 4 * t + f;
            for (int k = 0; k < 3; k++)
                face->corner[k] = face->key[k] = v[FACES[f][k]];
            sort3(face->key);
        }
    }
    qsort(faces, (size_t)nt * 4, sizeof *faces, compare_face);
    for (int i = 0; i < mesh->node_count; i++)
        slot[i] = -1;
    int count = 0;
    mesh->perimeter = 0.0;
    for (int i = 0; i < 4 * nt;) {
        int j = i + 1;
        while (j < 4 * nt && compare_face(faces + i, faces + j) == 0)
            j++;
        if (j - i == 1) {
            const int *v = faces[i].corner;
            double e1[3], e2[3], n[3];
            sub3(mesh->points + 3 * v[1], mesh->points + 3 * v[0], e1);
            sub3(mesh->points + 3 * v[2], mesh->points + 3 * v[0], e2);
            cross3(e1, e2, n); /* twice the area, outward */
            mesh->perimeter += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            for (int k = 0; k < 3; k++) {
                if (slot[v[k]] < 0)
                    slot[v[k]] = count++;
                for (int a = 0; a < 3; a++)
                    normal[3 * v[k] + a] += n[a];
            }
        }
        i = j;
    }
    free(faces);
    mesh->boundary = malloc((size_t)(count + 1) * sizeof *mesh->boundary);
    mesh->normals = malloc((size_t)(count + 1) * 3 * sizeof *mesh->normals);
    if (!mesh->boundary || !mesh->normals) {
        free(slot);
        free(normal);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "mesh: out of memory");
    }
    int b = 0;
    for (int i = 0; i < mesh->node_count; i++) {
        if (slot[i] < 0)
            continue;
        const double *n = normal + 3 * i;
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        mesh->boundary[b] = i;
        for (int a = 0; a < 3; a++)
            mesh->normals[3 * b + a] = n[a] / len;
        b++;
    }
    mesh->boundary_count = b;
    free(slot);
    free(normal);
    return ISSIM_OK;
}
