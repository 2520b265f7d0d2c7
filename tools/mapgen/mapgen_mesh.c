/* Geometry descriptions, their checks, and meshing with Gmsh's C API (linear triangles).
 *
 * The seeds' bar (000 4.4, Fig. 4.4; 003 section 4): tip-to-tip length L, diameter d,
 * hemispherical ends, axis x, centred at the origin. Its right cap gets a geometric point at
 * every requested impact angle, so a mesh node lies exactly where 000's map node would (the
 * node whose outward normal makes angle 90 - theta with the axis answers impact angle theta).
 * The outline's nodes come from the triangles (edges used by one triangle), in order around
 * it, with edge-averaged outward normals: the map's nodes are picked among them.
 */
#include "mapgen.h"

#include <gmshc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAPGEN_POLYGON_MAX_BYTES (16LL << 20)
#define MAPGEN_MAX_VERTICES 100000

static int gmsh_started;

static double polygon_signed_area(const double *v, int n) {
    double a = 0.0;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        a += v[2 * i] * v[2 * j + 1] - v[2 * j] * v[2 * i + 1];
    }
    return 0.5 * a;
}

static double polygon_perimeter(const double *v, int n) {
    double p = 0.0;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        p += hypot(v[2 * j] - v[2 * i], v[2 * j + 1] - v[2 * i + 1]);
    }
    return p;
}

static double cross2(double ax, double ay, double bx, double by) {
    return ax * by - ay * bx;
}

/* Proper or touching intersection of segments p1p2 and p3p4. */
static bool segments_cross(const double *p1, const double *p2, const double *p3, const double *p4) {
    double d1 = cross2(p4[0] - p3[0], p4[1] - p3[1], p1[0] - p3[0], p1[1] - p3[1]);
    double d2 = cross2(p4[0] - p3[0], p4[1] - p3[1], p2[0] - p3[0], p2[1] - p3[1]);
    double d3 = cross2(p2[0] - p1[0], p2[1] - p1[1], p3[0] - p1[0], p3[1] - p1[1]);
    double d4 = cross2(p2[0] - p1[0], p2[1] - p1[1], p4[0] - p1[0], p4[1] - p1[1]);
    return ((d1 > 0) != (d2 > 0)) && ((d3 > 0) != (d4 > 0)) && d1 != 0 && d2 != 0 && d3 != 0 &&
           d4 != 0;
}

/* A polygon description lists its closing vertex again: the outline must close. */
static IssimStatus polygon_check(const double *v, int count, IssimError *err) {
    if (count < 4)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "polygon: %d vertices; an outline needs at least 3 distinct "
                               "vertices and the first repeated at the end to close it",
                               count);
    int n = count - 1;
    double scale = 0.0;
    for (int i = 0; i < count; i++)
        scale = fmax(scale, fmax(fabs(v[2 * i]), fabs(v[2 * i + 1])));
    double tol = 1e-12 * fmax(scale, 1.0);
    if (fabs(v[2 * n] - v[0]) > tol || fabs(v[2 * n + 1] - v[1]) > tol)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "polygon: the outline does not close: the last vertex (%g, %g) "
                               "must repeat the first (%g, %g)",
                               v[2 * n], v[2 * n + 1], v[0], v[1]);
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        if (hypot(v[2 * j] - v[2 * i], v[2 * j + 1] - v[2 * i + 1]) <= tol)
            return issim_error_set(err, ISSIM_ERR_INVALID,
                                   "polygon: vertices %d and %d coincide at (%g, %g)", i, j,
                                   v[2 * i], v[2 * i + 1]);
        for (int k = i + 2; k < n; k++) {
            if (i == 0 && k == n - 1)
                continue; /* adjacent through the closing edge */
            int l = (k + 1) % n;
            if (segments_cross(v + 2 * i, v + 2 * j, v + 2 * k, v + 2 * l))
                return issim_error_set(err, ISSIM_ERR_INVALID,
                                       "polygon: edges %d-%d and %d-%d cross: the outline must "
                                       "be a simple closed curve",
                                       i, j, k, l);
        }
    }
    return ISSIM_OK;
}

MapgenGeometry mapgen_geometry_steel_bar(int dimension, double element_size, const double *angles,
                                         int angle_count) {
    return (MapgenGeometry){.dimension = dimension,
                            .shape = MAPGEN_SHAPE_BAR,
                            .length = 0.2,
                            .diameter = 0.0125,
                            .element_size = element_size,
                            .angles = angles,
                            .angle_count = angle_count};
}

/* Area and perimeter (2D), or volume and surface area (3D). */
static void body_area_perimeter(const MapgenGeometry *g, double *area, double *perimeter) {
    if (g->dimension == 3) {
        double r = g->shape == MAPGEN_SHAPE_BAR ? 0.5 * g->diameter : g->radius;
        double straight = g->shape == MAPGEN_SHAPE_BAR ? g->length - g->diameter : 0.0;
        *area = M_PI * r * r * straight + 4.0 / 3.0 * M_PI * r * r * r;
        *perimeter = 2.0 * M_PI * r * straight + 4.0 * M_PI * r * r;
    } else if (g->shape == MAPGEN_SHAPE_BAR) {
        double r = 0.5 * g->diameter, straight = g->length - g->diameter;
        *area = M_PI * r * r + straight * g->diameter;
        *perimeter = 2.0 * M_PI * r + 2.0 * straight;
    } else if (g->shape == MAPGEN_SHAPE_CIRCLE) {
        *area = M_PI * g->radius * g->radius;
        *perimeter = 2.0 * M_PI * g->radius;
    } else {
        *area = fabs(polygon_signed_area(g->vertices, g->vertex_count - 1));
        *perimeter = polygon_perimeter(g->vertices, g->vertex_count - 1);
    }
}

/* The body's largest extent and the farthest any of it lies from the origin (m). */
static void body_extent(const MapgenGeometry *g, double *extent, double *reach) {
    if (g->shape == MAPGEN_SHAPE_BAR) {
        *extent = *reach = g->length;
        *reach *= 0.5;
        return;
    }
    if (g->shape == MAPGEN_SHAPE_CIRCLE) {
        *extent = 2.0 * g->radius;
        *reach = g->radius;
        return;
    }
    double low[2] = {INFINITY, INFINITY}, high[2] = {-INFINITY, -INFINITY};
    *reach = 0.0;
    for (int i = 0; i < g->vertex_count; i++)
        for (int a = 0; a < 2; a++) {
            double x = g->vertices[2 * i + a];
            low[a] = fmin(low[a], x);
            high[a] = fmax(high[a], x);
            *reach = fmax(*reach, fabs(x));
        }
    *extent = fmax(high[0] - low[0], high[1] - low[1]);
}

IssimStatus mapgen_geometry_check(const MapgenGeometry *g, IssimError *err) {
    if (g->dimension != 2 && g->dimension != 3)
        return issim_error_set(err, ISSIM_ERR_RANGE, "dimension %d: must be 2 or 3", g->dimension);
    if (g->dimension == 3 && g->shape == MAPGEN_SHAPE_POLYGON)
        return issim_error_set(err, ISSIM_ERR_INVALID,
                               "a polygon is an outline: dimension 3 takes the bar or the sphere");
    if (g->shape == MAPGEN_SHAPE_BAR) {
        if (!(g->diameter > 0.0) || !isfinite(g->diameter))
            return issim_error_set(err, ISSIM_ERR_RANGE,
                                   "bar diameter %g m: must be a positive length", g->diameter);
        if (!(g->length > g->diameter) || !isfinite(g->length))
            return issim_error_set(err, ISSIM_ERR_RANGE,
                                   "bar length %g m: must exceed the diameter %g m (the two "
                                   "hemispherical ends)",
                                   g->length, g->diameter);
    } else if (g->shape == MAPGEN_SHAPE_CIRCLE) {
        if (!(g->radius > 0.0) || !isfinite(g->radius))
            return issim_error_set(err, ISSIM_ERR_RANGE,
                                   "circle radius %g m: must be a positive length", g->radius);
    } else {
        if (g->vertex_count > MAPGEN_MAX_VERTICES)
            return issim_error_set(err, ISSIM_ERR_RANGE, "polygon: %d vertices, at most %d allowed",
                                   g->vertex_count, MAPGEN_MAX_VERTICES);
        IssimStatus st = polygon_check(g->vertices, g->vertex_count, err);
        if (st != ISSIM_OK)
            return st;
    }
    /* Outside this range a body is no contact body (a typo in units, or a polygon in a
     * survey's coordinates) and its mesh at any sensible element size would not fit the
     * machine; the positions are the body frame's, which the engine puts at the body. */
    double extent, reach;
    body_extent(g, &extent, &reach);
    if (!(extent >= MAPGEN_MIN_EXTENT && extent <= MAPGEN_MAX_EXTENT))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "body extent %g m (its largest dimension): must be in [%g, %g] m",
                               extent, MAPGEN_MIN_EXTENT, MAPGEN_MAX_EXTENT);
    if (!(reach <= MAPGEN_MAX_EXTENT))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "polygon: a vertex lies %g m from the origin: coordinates must be "
                               "within %g m of it (the body's own frame)",
                               reach, MAPGEN_MAX_EXTENT);
    double area, perimeter;
    body_area_perimeter(g, &area, &perimeter);
    double limit = g->dimension * area / perimeter;
    const char *measure = g->dimension == 3 ? "3 x volume / surface area" : "2 x area / perimeter";
    if (!(g->element_size > 0.0) || !isfinite(g->element_size))
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "element size %g m: must be in (0, %g] m (%s of the body)",
                               g->element_size, limit, measure);
    if (g->element_size > limit)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "element size %g m is larger than the body: it must be in (0, "
                               "%g] m (%s, about half the body's width)",
                               g->element_size, limit, measure);
    if (g->angle_count > MAPGEN_MAX_ANGLES)
        return issim_error_set(err, ISSIM_ERR_RANGE, "%d angles: at most %d", g->angle_count,
                               MAPGEN_MAX_ANGLES);
    for (int i = 0; i < g->angle_count; i++)
        if (!(g->angles[i] > 0.0 && g->angles[i] <= 90.0))
            return issim_error_set(err, ISSIM_ERR_RANGE,
                                   "angle %g degrees: impact angles on the bar's rounded end "
                                   "must be in (0, 90]",
                                   g->angles[i]);
    return ISSIM_OK;
}

/* Calibrated on the release build (docs/contact-map-generator.md, Scale): Gmsh's nodes per
 * area or volume at a target edge length h, the stable step as a fraction of h / c1, the
 * resident memory of meshing and assembly per node, and the CPU time per mesh node of a time
 * step and of the setup (meshing, assembly, the step's power iteration). */
void mapgen_estimate(const MapgenGeometry *g, const MapgenMaterial *m, MapgenEstimate *e) {
    double area, perimeter, h = g->element_size;
    body_area_perimeter(g, &area, &perimeter);
    bool solid = g->dimension == 3;
    /* Equilateral triangles of side h have area sqrt(3)/4 h^2, two per node; tetrahedra fill
     * about h^3 per node; the boundary adds a layer of nodes. */
    e->boundary_nodes = solid ? 1.15 * perimeter / (h * h) : perimeter / h;
    e->mesh_nodes = solid ? area / (h * h * h) + 0.25 * e->boundary_nodes
                          : 2.0 * area / (sqrt(3.0) * h * h) + e->boundary_nodes;
    e->dt_cfl = (solid ? 0.45 : 0.6) * h / mapgen_c1(m);
    e->bytes = (solid ? 80e6 : 60e6) + e->mesh_nodes * (solid ? 3.2e3 : 1.6e3);
    e->setup_seconds = e->mesh_nodes * (solid ? 3e-4 : 1e-4);
    e->node_step_seconds = e->mesh_nodes * (solid ? 7e-8 : 1.4e-8);
}

void mapgen_bar_cap_point(const MapgenGeometry *g, double theta, double point[2],
                          double normal[2]) {
    double r = 0.5 * g->diameter, centre = 0.5 * g->length - r;
    double phi = (90.0 - theta) * M_PI / 180.0; /* from the axis, counter-clockwise */
    normal[0] = cos(phi);
    normal[1] = sin(phi);
    point[0] = centre + r * normal[0];
    point[1] = r * normal[1];
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The bar in Gmsh's built-in kernel, counter-clockwise: bottom line, right cap through the
 * angle points, top line, left cap. */
static int bar_outline(const MapgenGeometry *g, int *curves, int *ierr) {
    double r = 0.5 * g->diameter, a = 0.5 * g->length - r, s = g->element_size;
    double phis[MAPGEN_MAX_ANGLES + 3];
    int n = 0;
    phis[n++] = -90.0;
    phis[n++] = 0.0;
    phis[n++] = 90.0;
    for (int i = 0; i < g->angle_count; i++)
        phis[n++] = 90.0 - g->angles[i];
    qsort(phis, (size_t)n, sizeof *phis, compare_double);
    int c = 0;
    int right_centre = gmshModelGeoAddPoint(a, 0, 0, s, -1, ierr);
    int left_centre = gmshModelGeoAddPoint(-a, 0, 0, s, -1, ierr);
    int bottom_left = gmshModelGeoAddPoint(-a, -r, 0, s, -1, ierr);
    int previous = gmshModelGeoAddPoint(a, -r, 0, s, -1, ierr);
    curves[c++] = gmshModelGeoAddLine(bottom_left, previous, -1, ierr);
    for (int i = 1; i < n; i++) {
        if (phis[i] - phis[i - 1] < 1e-9)
            continue;
        double phi = phis[i] * M_PI / 180.0;
        int p = gmshModelGeoAddPoint(a + r * cos(phi), r * sin(phi), 0, s, -1, ierr);
        curves[c++] = gmshModelGeoAddCircleArc(previous, right_centre, p, -1, 0, 0, 1, ierr);
        previous = p;
    }
    int top_left = gmshModelGeoAddPoint(-a, r, 0, s, -1, ierr);
    int west = gmshModelGeoAddPoint(-a - r, 0, 0, s, -1, ierr);
    curves[c++] = gmshModelGeoAddLine(previous, top_left, -1, ierr);
    curves[c++] = gmshModelGeoAddCircleArc(top_left, left_centre, west, -1, 0, 0, 1, ierr);
    curves[c++] = gmshModelGeoAddCircleArc(west, left_centre, bottom_left, -1, 0, 0, 1, ierr);
    return c;
}

static int circle_outline(const MapgenGeometry *g, int *curves, int *ierr) {
    double r = g->radius, s = g->element_size;
    int centre = gmshModelGeoAddPoint(0, 0, 0, s, -1, ierr);
    int p[4];
    for (int i = 0; i < 4; i++)
        p[i] = gmshModelGeoAddPoint(r * cos(i * M_PI / 2), r * sin(i * M_PI / 2), 0, s, -1, ierr);
    for (int i = 0; i < 4; i++)
        curves[i] = gmshModelGeoAddCircleArc(p[i], centre, p[(i + 1) % 4], -1, 0, 0, 1, ierr);
    return 4;
}

static int polygon_outline(const MapgenGeometry *g, int *curves, int *ierr) {
    int n = g->vertex_count - 1;
    int *p = malloc((size_t)n * sizeof *p);
    if (!p)
        return -1;
    for (int i = 0; i < n; i++)
        p[i] = gmshModelGeoAddPoint(g->vertices[2 * i], g->vertices[2 * i + 1], 0, g->element_size,
                                    -1, ierr);
    for (int i = 0; i < n; i++)
        curves[i] = gmshModelGeoAddLine(p[i], p[(i + 1) % n], -1, ierr);
    free(p);
    return n;
}

static IssimStatus gmsh_failed(const char *what, IssimError *err) {
    char *message = NULL;
    int ierr = 0;
    gmshLoggerGetLastError(&message, &ierr);
    IssimStatus st = issim_error_set(err, ISSIM_ERR_NUMERIC, "gmsh: %s failed: %s", what,
                                     message && message[0] ? message : "(no message)");
    gmshFree(message);
    return st;
}

/* Asks Gmsh for the simplices of the current model (triangles: Gmsh element type 2,
 * tetrahedra: type 4) and compacts the nodes they use. */
static IssimStatus mesh_extract(MapgenMesh *mesh, IssimError *err) {
    int d = mesh->dimension, corners = d + 1;
    int ierr = 0;
    size_t *tags = NULL, ntags = 0, npar = 0, *etags = NULL, netags = 0, *enodes = NULL,
           nenodes = 0, ncoord = 0;
    double *coord = NULL, *par = NULL;
    gmshModelMeshGetNodes(&tags, &ntags, &coord, &ncoord, &par, &npar, -1, -1, 0, 0, &ierr);
    if (ierr == 0)
        gmshModelMeshGetElementsByType(d == 3 ? 4 : 2, &etags, &netags, &enodes, &nenodes, -1, 0, 1,
                                       &ierr);
    IssimStatus st = ISSIM_OK;
    size_t max_tag = 0;
    for (size_t i = 0; i < ntags; i++)
        max_tag = tags[i] > max_tag ? tags[i] : max_tag;
    int *index = ierr == 0 ? malloc((max_tag + 1) * sizeof *index) : NULL;
    mesh->cell_count = (int)netags;
    mesh->cells = malloc((netags + 1) * (size_t)corners * sizeof *mesh->cells);
    mesh->points = malloc((ntags + 1) * (size_t)d * sizeof *mesh->points);
    if (ierr != 0) {
        st = gmsh_failed("reading the mesh", err);
    } else if (!index || !mesh->cells || !mesh->points) {
        st = issim_error_set(err, ISSIM_ERR_NOMEM, "mesh of %zu nodes: out of memory", ntags);
    } else if (netags == 0) {
        st = issim_error_set(err, ISSIM_ERR_NUMERIC, "gmsh made no %s",
                             d == 3 ? "tetrahedra" : "triangles");
    } else {
        size_t *position = malloc((max_tag + 1) * sizeof *position);
        for (size_t t = 0; position && t <= max_tag; t++)
            index[t] = -1;
        for (size_t i = 0; position && i < ntags; i++)
            position[tags[i]] = i;
        int count = 0;
        for (size_t e = 0; position && e < (size_t)corners * netags; e++) {
            size_t tag = enodes[e];
            if (index[tag] < 0) {
                index[tag] = count;
                for (int k = 0; k < d; k++)
                    mesh->points[d * count + k] = coord[3 * position[tag] + k];
                count++;
            }
            mesh->cells[e] = index[tag];
        }
        mesh->node_count = count;
        if (!position)
            st = issim_error_set(err, ISSIM_ERR_NOMEM, "mesh: out of memory");
        free(position);
    }
    free(index);
    gmshFree(tags);
    gmshFree(coord);
    gmshFree(par);
    gmshFree(etags);
    gmshFree(enodes);
    return st;
}

typedef struct DirectedEdge {
    int from, to;
} DirectedEdge;

static int compare_edge(const void *a, const void *b) {
    const DirectedEdge *x = a, *y = b;
    int xa = x->from < x->to ? x->from : x->to, xb = x->from ^ x->to ^ xa;
    int ya = y->from < y->to ? y->from : y->to, yb = y->from ^ y->to ^ ya;
    if (xa != ya)
        return (xa > ya) - (xa < ya);
    return (xb > yb) - (xb < yb);
}

/* Orients triangles counter-clockwise, sums the area, and walks the outline:
 * boundary edges are those one triangle uses; with counter-clockwise triangles they run
 * counter-clockwise around the body. */
static IssimStatus outline_boundary(MapgenMesh *mesh, IssimError *err) {
    int nt = mesh->cell_count;
    DirectedEdge *edges = malloc((size_t)nt * 3 * sizeof *edges);
    int *next = malloc((size_t)mesh->node_count * sizeof *next);
    if (!edges || !next) {
        free(edges);
        free(next);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "mesh: out of memory");
    }
    for (int t = 0; t < nt; t++) {
        int *v = mesh->cells + 3 * t;
        const double *a = mesh->points + 2 * v[0], *b = mesh->points + 2 * v[1],
                     *c = mesh->points + 2 * v[2];
        double area2 = cross2(b[0] - a[0], b[1] - a[1], c[0] - a[0], c[1] - a[1]);
        if (area2 < 0) {
            int swap = v[1];
            v[1] = v[2];
            v[2] = swap;
            area2 = -area2;
        }
        mesh->measure += 0.5 * area2;
        for (int k = 0; k < 3; k++)
            edges[3 * t + k] = (DirectedEdge){v[k], v[(k + 1) % 3]};
    }
    qsort(edges, (size_t)nt * 3, sizeof *edges, compare_edge);
    for (int i = 0; i < mesh->node_count; i++)
        next[i] = -1;
    int boundary_edges = 0, first = -1;
    for (int i = 0; i < 3 * nt;) {
        int j = i + 1;
        while (j < 3 * nt && compare_edge(edges + i, edges + j) == 0)
            j++;
        if (j - i == 1) {
            next[edges[i].from] = edges[i].to;
            first = first < 0 || edges[i].from < first ? edges[i].from : first;
            boundary_edges++;
        }
        i = j;
    }
    free(edges);
    mesh->boundary = malloc((size_t)(boundary_edges + 1) * sizeof *mesh->boundary);
    mesh->normals = malloc((size_t)(boundary_edges + 1) * 2 * sizeof *mesh->normals);
    mesh->arclength = malloc((size_t)(boundary_edges + 1) * sizeof *mesh->arclength);
    int count = 0;
    for (int n = first; mesh->boundary && n >= 0 && count <= boundary_edges; n = next[n]) {
        if (count > 0 && n == first)
            break;
        mesh->boundary[count++] = n;
    }
    free(next);
    if (!mesh->boundary || !mesh->normals || !mesh->arclength)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "mesh: out of memory");
    if (count != boundary_edges)
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "mesh: the outline is not one closed loop (%d of %d boundary "
                               "edges walked): holes and separate pieces are not supported",
                               count, boundary_edges);
    mesh->boundary_count = count;
    double s = 0.0;
    for (int i = 0; i < count; i++) {
        const double *p = mesh->points + 2 * mesh->boundary[(i + count - 1) % count];
        const double *q = mesh->points + 2 * mesh->boundary[i];
        const double *r = mesh->points + 2 * mesh->boundary[(i + 1) % count];
        double l1 = hypot(q[0] - p[0], q[1] - p[1]), l2 = hypot(r[0] - q[0], r[1] - q[1]);
        double nx = (q[1] - p[1]) / l1 + (r[1] - q[1]) / l2;
        double ny = -(q[0] - p[0]) / l1 - (r[0] - q[0]) / l2;
        double len = hypot(nx, ny);
        mesh->normals[2 * i] = nx / len;
        mesh->normals[2 * i + 1] = ny / len;
        mesh->arclength[i] = s;
        s += l2;
    }
    mesh->perimeter = s;
    return ISSIM_OK;
}

/* The outline in Gmsh's built-in kernel, meshed with triangles. */
static IssimStatus mesh_outline(const MapgenGeometry *g, MapgenMesh *mesh, IssimError *err) {
    int ierr = 0;
    int capacity = g->shape == MAPGEN_SHAPE_POLYGON ? g->vertex_count : MAPGEN_MAX_ANGLES + 8;
    int *curves = malloc((size_t)capacity * sizeof *curves);
    int n = !curves                           ? -1
            : g->shape == MAPGEN_SHAPE_BAR    ? bar_outline(g, curves, &ierr)
            : g->shape == MAPGEN_SHAPE_CIRCLE ? circle_outline(g, curves, &ierr)
                                              : polygon_outline(g, curves, &ierr);
    if (n < 0) {
        free(curves);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "geometry: out of memory");
    }
    int loop = gmshModelGeoAddCurveLoop(curves, (size_t)n, -1, 1, &ierr);
    free(curves);
    if (ierr == 0)
        gmshModelGeoAddPlaneSurface(&loop, 1, -1, &ierr);
    if (ierr == 0)
        gmshModelGeoSynchronize(&ierr);
    if (ierr == 0)
        gmshModelMeshGenerate(2, &ierr);
    IssimStatus st = ierr != 0 ? gmsh_failed("meshing the outline", err) : mesh_extract(mesh, err);
    return st == ISSIM_OK ? outline_boundary(mesh, err) : st;
}

/* The solid in Gmsh's OpenCASCADE kernel, meshed with tetrahedra: a sphere, or the bar as a
 * cylinder fused with a ball at each end. */
static IssimStatus mesh_solid(const MapgenGeometry *g, MapgenMesh *mesh, IssimError *err) {
    int ierr = 0;
    if (g->shape == MAPGEN_SHAPE_CIRCLE) {
        gmshModelOccAddSphere(0, 0, 0, g->radius, -1, -M_PI / 2, M_PI / 2, 2 * M_PI, &ierr);
    } else {
        double r = 0.5 * g->diameter, a = 0.5 * g->length - r;
        int cylinder = gmshModelOccAddCylinder(-a, 0, 0, 2 * a, 0, 0, r, -1, 2 * M_PI, &ierr);
        int ends[4] = {3, 0, 3, 0};
        ends[1] = gmshModelOccAddSphere(-a, 0, 0, r, -1, -M_PI / 2, M_PI / 2, 2 * M_PI, &ierr);
        ends[3] = gmshModelOccAddSphere(a, 0, 0, r, -1, -M_PI / 2, M_PI / 2, 2 * M_PI, &ierr);
        int object[2] = {3, cylinder}, *out = NULL, **map = NULL;
        size_t out_n = 0, *map_n = NULL, map_nn = 0;
        if (ierr == 0)
            gmshModelOccFuse(object, 2, ends, 4, &out, &out_n, &map, &map_n, &map_nn, -1, 1, 1,
                             &ierr);
        for (size_t i = 0; i < map_nn; i++)
            gmshFree(map[i]);
        gmshFree(map);
        gmshFree(map_n);
        gmshFree(out);
    }
    if (ierr == 0)
        gmshModelOccSynchronize(&ierr);
    if (ierr == 0)
        gmshModelMeshGenerate(3, &ierr);
    IssimStatus st = ierr != 0 ? gmsh_failed("meshing the solid", err) : mesh_extract(mesh, err);
    return st == ISSIM_OK ? mapgen_surface_boundary(mesh, err) : st;
}

IssimStatus mapgen_mesh_build(const MapgenGeometry *g, MapgenMesh *mesh, IssimError *err) {
    memset(mesh, 0, sizeof *mesh);
    IssimStatus st = mapgen_geometry_check(g, err);
    if (st != ISSIM_OK)
        return st;
    int ierr = 0;
    if (!gmsh_started) {
        gmshInitialize(0, NULL, 0, &ierr);
        gmsh_started = 1;
    }
    gmshOptionSetNumber("General.Terminal", 0, &ierr);
    gmshOptionSetNumber("General.Verbosity", 1, &ierr);
    gmshOptionSetNumber("Mesh.MeshSizeMax", g->element_size, &ierr);
    gmshModelAdd("issim-mapgen", &ierr);
    mesh->dimension = g->dimension;
    mesh->element_size = g->element_size;
    st = g->dimension == 3 ? mesh_solid(g, mesh, err) : mesh_outline(g, mesh, err);
    gmshModelRemove(&ierr);
    if (st != ISSIM_OK)
        mapgen_mesh_free(mesh);
    return st;
}

void mapgen_mesh_shutdown(void) {
    if (gmsh_started) {
        int ierr = 0;
        gmshFinalize(&ierr);
        gmsh_started = 0;
    }
}

void mapgen_mesh_free(MapgenMesh *mesh) {
    free(mesh->points);
    free(mesh->cells);
    free(mesh->boundary);
    free(mesh->normals);
    free(mesh->arclength);
    memset(mesh, 0, sizeof *mesh);
}

IssimStatus mapgen_boundary_nearest(const MapgenMesh *mesh, const double *p, const char *what,
                                    int *index, IssimError *err) {
    int best = -1, d = mesh->dimension;
    double best_d = INFINITY;
    for (int i = 0; i < mesh->boundary_count; i++) {
        const double *q = mesh->points + d * mesh->boundary[i];
        double dist = 0.0;
        for (int k = 0; k < d; k++)
            dist += (q[k] - p[k]) * (q[k] - p[k]);
        dist = sqrt(dist);
        if (dist < best_d) {
            best_d = dist;
            best = i;
        }
    }
    char at[96];
    if (d == 3)
        snprintf(at, sizeof at, "(%g, %g, %g)", p[0], p[1], p[2]);
    else
        snprintf(at, sizeof at, "(%g, %g)", p[0], p[1]);
    if (best < 0 || best_d > 0.5 * mesh->element_size)
        return issim_error_set(err, ISSIM_ERR_RANGE,
                               "%s %s is not on the boundary: the nearest boundary node is %g m "
                               "away; a map node must lie within half an element (%g m) of the %s",
                               what, at, best_d, 0.5 * mesh->element_size,
                               d == 3 ? "surface" : "outline");
    *index = best;
    return ISSIM_OK;
}

IssimStatus mapgen_polygon_read(const char *path, double **vertices, int *count, IssimError *err) {
    char *text = NULL;
    size_t size = 0;
    IssimStatus st =
        issim_read_file(path, MAPGEN_POLYGON_MAX_BYTES, "polygon file", &text, &size, err);
    if (st != ISSIM_OK)
        return st;
    int capacity = 64, n = 0;
    double *v = malloc((size_t)capacity * 2 * sizeof *v);
    int line = 0;
    for (char *cursor = text; v && cursor && *cursor; line++) {
        char *end = strchr(cursor, '\n');
        if (end)
            *end = '\0';
        char *hash = strchr(cursor, '#');
        if (hash)
            *hash = '\0';
        double x, y;
        char extra;
        int got = sscanf(cursor, "%lf %lf %c", &x, &y, &extra);
        bool blank = strspn(cursor, " \t\r") == strlen(cursor);
        if (!blank && (got != 2 || !isfinite(x) || !isfinite(y))) {
            st = issim_error_set(err, ISSIM_ERR_INVALID,
                                 "%s:%d: expected two finite numbers \"x y\" (m)", path, line + 1);
            break;
        }
        if (!blank) {
            if (n == MAPGEN_MAX_VERTICES) {
                st = issim_error_set(err, ISSIM_ERR_RANGE, "%s: more than %d vertices", path,
                                     MAPGEN_MAX_VERTICES);
                break;
            }
            if (n == capacity) {
                capacity *= 2;
                double *grown = realloc(v, (size_t)capacity * 2 * sizeof *v);
                if (!grown) {
                    free(v);
                    v = NULL;
                    break;
                }
                v = grown;
            }
            v[2 * n] = x;
            v[2 * n + 1] = y;
            n++;
        }
        cursor = end ? end + 1 : NULL;
    }
    free(text);
    if (!v)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "%s: out of memory", path);
    if (st != ISSIM_OK) {
        free(v);
        return st;
    }
    *vertices = v;
    *count = n;
    return ISSIM_OK;
}
