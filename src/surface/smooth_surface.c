/* Piecewise smooth surfaces (seed 002 4.5): patches with convex polygon domains and the
 * adjacency that boundary traversal needs (002 4.5.2, eq. 4.48-4.49 with g(u) = 1 - u), plus
 * what every kind of patch shares: the domain test of 4.5.1 ("if the point is on the right of
 * any edge of the convex domain, then it is outside", with the epsilon band of 4.5.5), the
 * closest point that starts a contact from the collision manager's point, and a tessellation for
 * drawing and collision. */
#include "surface_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SmoothSurface *smooth_surface_alloc(const char *name, int patch_count, IssimError *err) {
    SmoothSurface *surface = calloc(1, sizeof *surface);
    if (surface && patch_count > 0) {
        surface->domains = calloc((size_t)patch_count, sizeof *surface->domains);
        surface->neighbours = malloc((size_t)patch_count * sizeof *surface->neighbours);
    }
    if (!surface || patch_count <= 0 || !surface->domains || !surface->neighbours) {
        smooth_surface_destroy(surface);
        issim_error_set(err, patch_count <= 0 ? ISSIM_ERR_INVALID : ISSIM_ERR_NOMEM,
                        "surface '%s': %d patches", name ? name : "?", patch_count);
        return NULL;
    }
    snprintf(surface->name, sizeof surface->name, "%s", name ? name : "surface");
    surface->patch_count = patch_count;
    memset(surface->neighbours, 0xff, (size_t)patch_count * sizeof *surface->neighbours);
    return surface;
}

void smooth_surface_destroy(SmoothSurface *surface) {
    if (!surface)
        return;
    if (surface->destroy_impl)
        surface->destroy_impl(surface->impl);
    free(surface->domains);
    free(surface->neighbours);
    free(surface);
}

bool smooth_surface_first_break(const SmoothSurface *surface, int patch, const double from[2],
                                const double to[2], double line[3], double *beta) {
    return surface->first_break && patch >= 0 && patch < surface->patch_count &&
           surface->first_break(surface, patch, from, to, line, beta);
}

int smooth_surface_piece(const SmoothSurface *surface, int patch, double s, double t, double ds,
                         double dt) {
    if (!surface->piece || patch < 0 || patch >= surface->patch_count)
        return 0;
    /* a point on a line between pieces belongs to the one the direction leads into: a step
     * relative to the point's distance from the domain's origin (the lines crowd toward an
     * extraordinary vertex there), far above the rounding of a point found on the line */
    double length = hypot(ds, dt), step = 1e-9 * fmax(fabs(s) + fabs(t), 1e-300);
    if (length > 0.0 && isfinite(length)) {
        s += step * ds / length;
        t += step * dt / length;
    }
    return surface->piece(surface, patch, s, t);
}

IssimStatus smooth_surface_evaluate_piece(const SmoothSurface *surface, int patch, int piece,
                                          double s, double t, SurfacePoint *out, IssimError *err) {
    if (piece == 0 || !surface->evaluate_piece)
        return smooth_surface_evaluate(surface, patch, s, t, out, err);
    if (patch < 0 || patch >= surface->patch_count)
        return issim_error_set(err, ISSIM_ERR_INVALID, "surface '%s': no patch %d (it has %d)",
                               surface->name, patch, surface->patch_count);
    return surface->evaluate_piece(surface, patch, piece, s, t, out, err);
}

const char *smooth_surface_name(const SmoothSurface *surface) {
    return surface->name;
}

int smooth_surface_patch_count(const SmoothSurface *surface) {
    return surface->patch_count;
}

const SurfaceDomain *smooth_surface_domain(const SmoothSurface *surface, int patch) {
    return &surface->domains[patch];
}

IssimStatus smooth_surface_evaluate(const SmoothSurface *surface, int patch, double s, double t,
                                    SurfacePoint *out, IssimError *err) {
    if (patch < 0 || patch >= surface->patch_count)
        return issim_error_set(err, ISSIM_ERR_INVALID, "surface '%s': no patch %d (it has %d)",
                               surface->name, patch, surface->patch_count);
    return surface->evaluate(surface, patch, s, t, out, err);
}

bool smooth_surface_neighbour(const SmoothSurface *surface, int patch, int edge, int *other_patch,
                              int *other_edge) {
    *other_patch = surface->neighbours[patch][edge][0];
    *other_edge = surface->neighbours[patch][edge][1];
    return *other_patch >= 0;
}

/* Signed distance of (s, t) outside edge e (positive: on the edge's right, outside). */
static double outside_edge(const SurfaceDomain *d, int e, double s, double t) {
    const double *p = d->corner[e], *q = d->corner[(e + 1) % d->count];
    double ex = q[0] - p[0], ey = q[1] - p[1], len = hypot(ex, ey);
    return ((s - p[0]) * ey - (t - p[1]) * ex) / len;
}

bool smooth_surface_domain_contains(const SmoothSurface *surface, int patch, double s, double t,
                                    double margin, int *edge) {
    const SurfaceDomain *d = &surface->domains[patch];
    for (int e = 0; e < d->count; e++)
        if (outside_edge(d, e, s, t) > margin) {
            if (edge)
                *edge = e;
            return false;
        }
    return true;
}

/* The nearest point of the closed domain polygon to (s, t) (unchanged inside). */
static void clamp_to_domain(const SurfaceDomain *d, double *s, double *t) {
    bool inside = true;
    for (int e = 0; e < d->count && inside; e++)
        inside = outside_edge(d, e, *s, *t) <= 0.0;
    if (inside)
        return;
    double best = DBL_MAX, bs = *s, bt = *t;
    for (int e = 0; e < d->count; e++) {
        const double *p = d->corner[e], *q = d->corner[(e + 1) % d->count];
        double ex = q[0] - p[0], ey = q[1] - p[1];
        double a = ((*s - p[0]) * ex + (*t - p[1]) * ey) / (ex * ex + ey * ey);
        a = a < 0.0 ? 0.0 : a > 1.0 ? 1.0 : a;
        double cs = p[0] + a * ex, ct = p[1] + a * ey;
        double dist = hypot(*s - cs, *t - ct);
        if (dist < best) {
            best = dist;
            bs = cs;
            bt = ct;
        }
    }
    *s = bs;
    *t = bt;
}

/* Point (i, j) of a k x k triangular grid on the triangle (centroid, corner e, corner e + 1)
 * of the domain's fan, i + j <= k. */
static void fan_point(const SurfaceDomain *d, int e, int k, int i, int j, double *s, double *t) {
    double cs = 0.0, ct = 0.0;
    for (int c = 0; c < d->count; c++) {
        cs += d->corner[c][0] / d->count;
        ct += d->corner[c][1] / d->count;
    }
    const double *p = d->corner[e], *q = d->corner[(e + 1) % d->count];
    double a = (double)i / k, b = (double)j / k;
    *s = cs + a * (p[0] - cs) + b * (q[0] - cs);
    *t = ct + a * (p[1] - ct) + b * (q[1] - ct);
}

/* Minimises |x(s, t) - point|^2 by Newton's method inside the patch's closed domain. */
static IssimStatus refine_closest(const SmoothSurface *surface, int patch, Vec3 point, double *s,
                                  double *t, IssimError *err) {
    const SurfaceDomain *d = &surface->domains[patch];
    for (int iteration = 0; iteration < 30; iteration++) {
        SurfacePoint sp;
        IssimStatus status = smooth_surface_evaluate(surface, patch, *s, *t, &sp, err);
        if (status != ISSIM_OK)
            return status;
        Vec3 r = vec3_sub(sp.x[SURFACE_VALUE], point);
        double gs = vec3_dot(r, sp.x[SURFACE_S]), gt = vec3_dot(r, sp.x[SURFACE_T]);
        double hss = vec3_dot(sp.x[SURFACE_S], sp.x[SURFACE_S]) + vec3_dot(r, sp.x[SURFACE_SS]);
        double hst = vec3_dot(sp.x[SURFACE_S], sp.x[SURFACE_T]) + vec3_dot(r, sp.x[SURFACE_ST]);
        double htt = vec3_dot(sp.x[SURFACE_T], sp.x[SURFACE_T]) + vec3_dot(r, sp.x[SURFACE_TT]);
        double det = hss * htt - hst * hst;
        double ds, dt;
        if (det > 0.0 && hss > 0.0) {
            ds = -(htt * gs - hst * gt) / det;
            dt = -(hss * gt - hst * gs) / det;
        } else { /* not convex here: a gradient step scaled by the first fundamental form */
            ds = -gs / (hss > 0.0 ? hss : vec3_dot(sp.x[SURFACE_S], sp.x[SURFACE_S]));
            dt = -gt / (htt > 0.0 ? htt : vec3_dot(sp.x[SURFACE_T], sp.x[SURFACE_T]));
        }
        double s0 = *s, t0 = *t;
        *s += ds;
        *t += dt;
        clamp_to_domain(d, s, t);
        if (fabs(*s - s0) + fabs(*t - t0) < 1e-15)
            break;
    }
    return ISSIM_OK;
}

IssimStatus smooth_surface_closest(const SmoothSurface *surface, Vec3 point, int *patch, double *s,
                                   double *t, double *distance, IssimError *err) {
    enum { SAMPLES = 6 };
    double best = DBL_MAX;
    *patch = -1;
    for (int p = 0; p < surface->patch_count; p++) {
        const SurfaceDomain *d = &surface->domains[p];
        for (int e = 0; e < d->count; e++)
            for (int i = 0; i <= SAMPLES; i++)
                for (int j = 0; i + j <= SAMPLES; j++) {
                    double ss, tt;
                    fan_point(d, e, SAMPLES, i, j, &ss, &tt);
                    SurfacePoint sp;
                    if (smooth_surface_evaluate(surface, p, ss, tt, &sp, NULL) != ISSIM_OK)
                        continue;
                    double dist = vec3_norm(vec3_sub(sp.x[SURFACE_VALUE], point));
                    if (dist < best) {
                        best = dist;
                        *patch = p;
                        *s = ss;
                        *t = tt;
                    }
                }
    }
    if (*patch < 0)
        return issim_error_set(err, ISSIM_ERR_NUMERIC,
                               "surface '%s': no regular point to measure a distance from",
                               surface->name);
    IssimStatus status = refine_closest(surface, *patch, point, s, t, err);
    if (status != ISSIM_OK)
        return status;
    SurfacePoint sp;
    status = smooth_surface_evaluate(surface, *patch, *s, *t, &sp, err);
    *distance = vec3_norm(vec3_sub(sp.x[SURFACE_VALUE], point));
    return status;
}

void surface_tessellation_free(SurfaceTessellation *t) {
    free(t->vertices);
    free(t->normals);
    free(t->triangles);
    free(t->patch_of_triangle);
    memset(t, 0, sizeof *t);
}

/* Index of fan grid point (i, j) (i + j <= k) within its fan triangle. */
static int grid_index(int k, int i, int j) {
    return i * (k + 1) - i * (i - 1) / 2 + j;
}

IssimStatus smooth_surface_tessellate(const SmoothSurface *surface, int segments,
                                      SurfaceTessellation *out, IssimError *err) {
    memset(out, 0, sizeof *out);
    int k = segments < 1 ? 1 : segments;
    int per_grid = (k + 1) * (k + 2) / 2, fans = 0;
    for (int p = 0; p < surface->patch_count; p++)
        fans += surface->domains[p].count;
    out->vertices = malloc((size_t)fans * per_grid * sizeof *out->vertices);
    out->normals = malloc((size_t)fans * per_grid * sizeof *out->normals);
    out->triangles = malloc((size_t)fans * k * k * sizeof *out->triangles);
    out->patch_of_triangle = malloc((size_t)fans * k * k * sizeof *out->patch_of_triangle);
    if (!out->vertices || !out->normals || !out->triangles || !out->patch_of_triangle) {
        surface_tessellation_free(out);
        return issim_error_set(err, ISSIM_ERR_NOMEM, "surface '%s': tessellation of %d patches",
                               surface->name, surface->patch_count);
    }
    for (int p = 0; p < surface->patch_count; p++) {
        const SurfaceDomain *d = &surface->domains[p];
        for (int e = 0; e < d->count; e++) {
            int base = out->vertex_count;
            for (int i = 0; i <= k; i++)
                for (int j = 0; i + j <= k; j++) {
                    double s, t;
                    fan_point(d, e, k, i, j, &s, &t);
                    SurfacePoint sp;
                    IssimStatus status = smooth_surface_evaluate(surface, p, s, t, &sp, err);
                    if (status != ISSIM_OK) {
                        surface_tessellation_free(out);
                        return status;
                    }
                    out->vertices[out->vertex_count] = sp.x[SURFACE_VALUE];
                    out->normals[out->vertex_count++] = sp.normal[SURFACE_VALUE];
                }
            /* (centroid, corner e, corner e + 1) is counter-clockwise in the domain */
            for (int i = 0; i < k; i++)
                for (int j = 0; i + j < k; j++) {
                    int a = base + grid_index(k, i, j), b = base + grid_index(k, i + 1, j);
                    int c = base + grid_index(k, i, j + 1);
                    out->patch_of_triangle[out->triangle_count] = p;
                    memcpy(out->triangles[out->triangle_count++], (int[3]){a, b, c},
                           sizeof(int[3]));
                    if (i + j + 1 < k) {
                        int dd = base + grid_index(k, i + 1, j + 1);
                        out->patch_of_triangle[out->triangle_count] = p;
                        memcpy(out->triangles[out->triangle_count++], (int[3]){b, dd, c},
                               sizeof(int[3]));
                    }
                }
        }
    }
    return ISSIM_OK;
}

/* ===== Bezier patches ===== */

static IssimStatus bezier_evaluate(const SmoothSurface *surface, int patch, double s, double t,
                                   SurfacePoint *out, IssimError *err) {
    (void)patch;
    return bezier_patch_evaluate(surface->impl, s, t, out, err);
}

SmoothSurface *smooth_surface_from_bezier(const BezierPatch *patch, IssimError *err) {
    SmoothSurface *surface = smooth_surface_alloc(patch->name, 1, err);
    BezierPatch *copy = surface ? malloc(sizeof *copy) : NULL;
    if (!copy) {
        smooth_surface_destroy(surface);
        if (surface)
            issim_error_set(err, ISSIM_ERR_NOMEM, "surface '%s'", patch->name);
        return NULL;
    }
    *copy = *patch;
    surface->impl = copy;
    surface->destroy_impl = free;
    surface->evaluate = bezier_evaluate;
    static const double square[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    surface->domains[0].count = 4;
    memcpy(surface->domains[0].corner, square, sizeof square);
    return surface;
}

/* ===== From a scene's description ===== */

const char *const surface_extraordinary_names[] = {
    [SURFACE_EXTRAORDINARY_EXACT] = "exact",
    [SURFACE_EXTRAORDINARY_SPATCH] = "spatch",
};
_Static_assert(sizeof surface_extraordinary_names / sizeof surface_extraordinary_names[0] ==
                   SURFACE_EXTRAORDINARY_COUNT,
               "a name for every SurfaceExtraordinary");

const char *surface_extraordinary_name(SurfaceExtraordinary kind) {
    return vocabulary_name(surface_extraordinary_names, SURFACE_EXTRAORDINARY_COUNT, (int)kind);
}

static Vec3 affine(Vec3 p, Vec3 scale, Vec3 offset) {
    return vec3_add(vec3_hadamard(p, scale), offset);
}

/* The control mesh read, moved by the affine map (Loop subdivision commutes with it), then
 * surfaced. */
static SmoothSurface *loop_surface(const char *name, const char *file, Vec3 scale, Vec3 offset,
                                   int levels, SurfaceExtraordinary extraordinary,
                                   IssimError *err) {
    IssimError sub = {0};
    LoopMesh *read = loop_mesh_load(file, &sub);
    if (!read) {
        issim_error_set(err, ISSIM_ERR_INVALID, "%s.surface_file: %s", name, sub.message);
        return NULL;
    }
    int nv = loop_mesh_vertex_count(read), nf = loop_mesh_face_count(read);
    Vec3 *vertices = malloc(sizeof *vertices * (size_t)(nv > 0 ? nv : 1));
    int(*faces)[3] = malloc(sizeof *faces * (size_t)(nf > 0 ? nf : 1));
    LoopMesh *mesh = NULL;
    if (vertices && faces) {
        for (int i = 0; i < nv; i++)
            vertices[i] = affine(loop_mesh_vertex(read, i), scale, offset);
        for (int f = 0; f < nf; f++)
            loop_mesh_face(read, f, faces[f]);
        mesh = loop_mesh_create(name, vertices, nv, (const int(*)[3])faces, nf, &sub);
    }
    free(vertices);
    free(faces);
    loop_mesh_destroy(read);
    SmoothSurface *surface =
        mesh ? smooth_surface_from_loop(mesh, levels, extraordinary, &sub) : NULL;
    loop_mesh_destroy(mesh);
    if (!surface)
        issim_error_set(err, ISSIM_ERR_INVALID, "%s.surface_file: %s", name,
                        sub.message[0] ? sub.message : "out of memory");
    return surface;
}

SmoothSurface *smooth_surface_create(const char *name, const Vec3 *points, int point_count,
                                     const char *loop_file, Vec3 scale, Vec3 offset, int levels,
                                     SurfaceExtraordinary extraordinary, IssimError *err) {
    if (point_count == 0 && loop_file && loop_file[0])
        return loop_surface(name, loop_file, scale, offset, levels, extraordinary, err);
    if (point_count != 16) {
        issim_error_set(err, ISSIM_ERR_INVALID,
                        "%s.surface_points: a bicubic Bezier patch needs 16 control points, not "
                        "%d (or give surface_file, a Loop control mesh)",
                        name, point_count);
        return NULL;
    }
    BezierPatch patch;
    for (int i = 0; i < 16; i++)
        patch.control[i / 4][i % 4] = affine(points[i], scale, offset);
    snprintf(patch.name, sizeof patch.name, "%s", name);
    SmoothSurface *surface = smooth_surface_from_bezier(&patch, err);
    if (!surface)
        return NULL;
    /* refuse a net with a degenerate point now, not in the middle of a run */
    for (int i = 0; i <= 4; i++)
        for (int j = 0; j <= 4; j++) {
            SurfacePoint sp;
            IssimError sub = {0};
            if (bezier_patch_evaluate(&patch, i / 4.0, j / 4.0, &sp, &sub) != ISSIM_OK) {
                issim_error_set(err, ISSIM_ERR_INVALID, "%s.surface_points: %s", name, sub.message);
                smooth_surface_destroy(surface);
                return NULL;
            }
        }
    return surface;
}
