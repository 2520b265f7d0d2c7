/* Shapes: constructors, bounds, support mappings and mass properties.
 *
 * Support mappings are the farthest-point functions GJK needs (Ericson, Real-Time Collision
 * Detection, 9.5.1): a sphere or capsule is its core (point, segment) plus the radius along the
 * unit direction; a box takes the sign of the direction on each axis; hulls and polygons scan
 * their vertices. A zero direction is taken as +x so the result is always a surface point.
 *
 * Mass properties for a uniform density rho, about the centre of mass, in body axes:
 *   sphere   m = rho 4/3 pi r^3, I = 2/5 m r^2;
 *   capsule  a cylinder (radius r, length 2h, along z) plus two hemispheres: with
 *            m_c = rho pi r^2 2h and m_s = rho 4/3 pi r^3, I_zz = m_c r^2/2 + 2/5 m_s r^2 and
 *            I_xx = I_yy = m_c (r^2/4 + h^2/3) + m_s (2/5 r^2 + h^2 + 3/4 h r) (each hemisphere's
 *            centre of mass sits 3r/8 from its base; parallel-axis theorem);
 *   box      m = rho 8 hx hy hz, I_xx = m/3 (hy^2 + hz^2) and so on;
 *   hull     tetrahedra from hull->centroid to every face triangle (faces fanned from their
 *            first vertex): volume det/6 each, second moment C = V/20 (sum_i v_i v_i^T +
 *            (sum_i v_i)(sum_i v_i)^T) over the three face corners relative to the apex
 *            (Tonon 2004, "Explicit exact formulas for the 3-D tetrahedron inertia tensor"),
 *            I = tr(C) 1 - C. The moments are about hull->centroid, the hull's centre of mass
 *            by the API's definition;
 *   polygon  a prism of unit thickness (1 m) across its plane, y in [-1/2, 1/2]:
 *            m = rho area, I_yy = rho int (x^2 + z^2) dA, I_xx = rho (area/12 + int z^2 dA),
 *            I_zz = rho (area/12 + int x^2 dA), about the local origin (the API puts a
 *            polygon's centre of mass there: give the vertices about the area centroid).
 * shape_mass_properties returns the diagonal of the tensor: principal moments whenever the
 * body axes are principal (spheres, capsules, boxes, symmetric hulls; a polygon's y axis
 * always is). The products of inertia of an asymmetric hull or polygon are only available
 * through shape_inertia_tensor (collision_internal.h).
 */
#include <math.h>
#include <string.h>

#include "collision_internal.h"

static const char *const shape_kind_names[] = {
    [SHAPE_SPHERE] = "sphere", [SHAPE_CAPSULE] = "capsule", [SHAPE_BOX] = "box",
    [SHAPE_PLANE] = "plane",   [SHAPE_HULL] = "hull",       [SHAPE_POLYGON] = "polygon",
    [SHAPE_MESH] = "mesh",
};
_Static_assert(sizeof shape_kind_names / sizeof shape_kind_names[0] == SHAPE_KIND_COUNT,
               "a name for every ShapeKind");

const char *shape_kind_name(ShapeKind kind) {
    if ((int)kind < 0 || kind >= SHAPE_KIND_COUNT)
        return "unknown";
    return shape_kind_names[kind];
}

/* ===== Constructors ===== */

Shape shape_sphere(double radius) {
    return (Shape){.kind = SHAPE_SPHERE, .radius = radius};
}

Shape shape_capsule(double radius, double half_length) {
    return (Shape){.kind = SHAPE_CAPSULE, .radius = radius, .half_length = half_length};
}

Shape shape_bar(double length, double diameter) {
    double half_length = 0.5 * (length - diameter);
    if (half_length < 0.0) {
        issim_log(ISSIM_LOG_WARN,
                  "shape_bar: length %g below diameter %g; using a sphere-like "
                  "capsule (half length 0)",
                  length, diameter);
        half_length = 0.0;
    }
    return shape_capsule(0.5 * diameter, half_length);
}

Shape shape_box(Vec3 half_extents) {
    return (Shape){.kind = SHAPE_BOX, .half_extents = half_extents};
}

/* n . x = offset with a non-unit n is the same plane as (n/|n|) . x = offset/|n|. */
Shape shape_plane(Vec3 normal, double offset) {
    double len = vec3_norm(normal);
    if (!(len > 0.0) || !isfinite(len)) {
        issim_log(ISSIM_LOG_WARN, "shape_plane: zero or invalid normal; using +z");
        return (Shape){.kind = SHAPE_PLANE, .normal = {0, 0, 1}, .offset = offset};
    }
    return (Shape){
        .kind = SHAPE_PLANE, .normal = vec3_scale(normal, 1.0 / len), .offset = offset / len};
}

Shape shape_hull(const Hull *hull) {
    return (Shape){.kind = SHAPE_HULL, .hull = hull};
}

Shape shape_mesh(const TriMesh *mesh) {
    return (Shape){.kind = SHAPE_MESH, .mesh = mesh};
}

/* (z_i x_j - x_i z_j): the +y component of p_i x p_j, positive for a counter-clockwise turn
 * about +y. */
static double cross_y(Vec3 a, Vec3 b) {
    return a.z * b.x - a.x * b.z;
}

Shape shape_polygon(const Vec3 *points, int count) {
    Shape s = {.kind = SHAPE_POLYGON};
    if (count > SHAPE_POLYGON_MAX) {
        issim_log(ISSIM_LOG_WARN, "shape_polygon: %d points, keeping the first %d", count,
                  SHAPE_POLYGON_MAX);
        count = SHAPE_POLYGON_MAX;
    }
    if (count < 0)
        count = 0;
    for (int i = 0; i < count; i++)
        s.polygon[i] = vec3(points[i].x, 0.0, points[i].z);
    s.polygon_count = count;
    if (count < 3) {
        issim_log(ISSIM_LOG_WARN, "shape_polygon: %d points do not make a polygon", count);
        return s;
    }
    double area2 = 0.0;
    for (int i = 0; i < count; i++)
        area2 += cross_y(s.polygon[i], s.polygon[(i + 1) % count]);
    if (area2 < 0.0) {
        for (int i = 0, j = count - 1; i < j; i++, j--) {
            Vec3 t = s.polygon[i];
            s.polygon[i] = s.polygon[j];
            s.polygon[j] = t;
        }
    }
    bool convex = area2 != 0.0;
    for (int i = 0; i < count && convex; i++) {
        Vec3 p = s.polygon[i], q = s.polygon[(i + 1) % count], r = s.polygon[(i + 2) % count];
        if (cross_y(vec3_sub(q, p), vec3_sub(r, q)) < 0.0)
            convex = false;
    }
    if (!convex)
        issim_log(ISSIM_LOG_WARN,
                  "shape_polygon: the %d points are not a convex polygon; "
                  "contacts will be wrong",
                  count);
    return s;
}

bool shape_is_convex(const Shape *s) {
    switch (s->kind) {
    case SHAPE_SPHERE:
    case SHAPE_CAPSULE:
    case SHAPE_BOX:
    case SHAPE_HULL:
    case SHAPE_POLYGON:
        return true;
    default:
        return false;
    }
}

/* ===== Bounds ===== */

static void aabb_add(Aabb *box, Vec3 p) {
    box->min = vec3(fmin(box->min.x, p.x), fmin(box->min.y, p.y), fmin(box->min.z, p.z));
    box->max = vec3(fmax(box->max.x, p.x), fmax(box->max.y, p.y), fmax(box->max.z, p.z));
}

static Aabb aabb_point(Vec3 p) {
    return (Aabb){p, p};
}

static Aabb aabb_inflate(Aabb box, double r) {
    Vec3 d = vec3(r, r, r);
    return (Aabb){vec3_sub(box.min, d), vec3_add(box.max, d)};
}

/* The world bounds of a box of half widths h centred at local point c: half widths |R| h,
 * exact for the box. */
static Aabb rotated_box(Pose pose, Vec3 c, Vec3 h) {
    Mat3 r = quat_to_mat3(pose.q);
    Vec3 e;
    e.x = fabs(r.m[0][0]) * h.x + fabs(r.m[0][1]) * h.y + fabs(r.m[0][2]) * h.z;
    e.y = fabs(r.m[1][0]) * h.x + fabs(r.m[1][1]) * h.y + fabs(r.m[1][2]) * h.z;
    e.z = fabs(r.m[2][0]) * h.x + fabs(r.m[2][1]) * h.y + fabs(r.m[2][2]) * h.z;
    Vec3 center = pose_apply(pose, c);
    return (Aabb){vec3_sub(center, e), vec3_add(center, e)};
}

/* Hulls with more vertices get their bounds from their local box (see shape_aabb). */
enum { HULL_EXACT_BOUNDS_MAX = 64 };

Aabb shape_aabb(const Shape *s, Pose pose) {
    switch (s->kind) {
    case SHAPE_SPHERE:
        return aabb_inflate(aabb_point(pose.p), s->radius);
    case SHAPE_CAPSULE: {
        Vec3 axis = quat_rotate(pose.q, vec3(0, 0, s->half_length));
        Aabb box = aabb_point(vec3_add(pose.p, axis));
        aabb_add(&box, vec3_sub(pose.p, axis));
        return aabb_inflate(box, s->radius);
    }
    case SHAPE_BOX:
        return rotated_box(pose, vec3(0, 0, 0), s->half_extents);
    case SHAPE_HULL: {
        const Hull *h = s->hull;
        if (!h || h->vertex_count == 0)
            return aabb_point(pose.p);
        /* Many vertices (a tessellated smooth surface): the bounds of its local box, a little
         * looser and independent of the vertex count. */
        if (h->vertex_count > HULL_EXACT_BOUNDS_MAX)
            return rotated_box(pose, h->box_center, h->box_half);
        Aabb box = aabb_point(pose_apply(pose, h->vertices[0]));
        for (int i = 1; i < h->vertex_count; i++)
            aabb_add(&box, pose_apply(pose, h->vertices[i]));
        return box;
    }
    case SHAPE_POLYGON: {
        Aabb box = aabb_point(pose.p);
        for (int i = 0; i < s->polygon_count; i++) {
            Vec3 w = pose_apply(pose, s->polygon[i]);
            if (i == 0)
                box = aabb_point(w);
            else
                aabb_add(&box, w);
        }
        return box;
    }
    case SHAPE_MESH: {
        if (!s->mesh)
            return aabb_point(pose.p);
        if (pose.q.w == 1.0 && pose.q.x == 0.0 && pose.q.y == 0.0 && pose.q.z == 0.0) {
            /* unrotated (the usual static environment): the stored bounds, shifted */
            Aabb local = trimesh_bounds(s->mesh);
            return (Aabb){vec3_add(local.min, pose.p), vec3_add(local.max, pose.p)};
        }
        int n = trimesh_triangle_count(s->mesh);
        Aabb box = aabb_point(pose.p);
        for (int i = 0; i < n; i++) {
            Vec3 c[3];
            trimesh_triangle(s->mesh, i, c);
            for (int k = 0; k < 3; k++) {
                Vec3 w = pose_apply(pose, c[k]);
                if (i == 0 && k == 0)
                    box = aabb_point(w);
                else
                    aabb_add(&box, w);
            }
        }
        return box;
    }
    case SHAPE_PLANE: {
        /* The half-space n.x <= offset is unbounded, except along an axis the normal is
         * parallel to: there it ends at the surface. A floor's box then stops at the floor, so
         * the broad phase pairs it only with bodies near the floor, not with every body. */
        Aabb box = {{-1e30, -1e30, -1e30}, {1e30, 1e30, 1e30}};
        Vec3 n = quat_rotate(pose.q, s->normal);
        double offset = s->offset + vec3_dot(n, pose.p);
        double *lo = &box.min.x, *hi = &box.max.x;
        const double nk[3] = {n.x, n.y, n.z};
        for (int k = 0; k < 3; k++) {
            if (nk[k] > 1.0 - 1e-12)
                hi[k] = offset;
            else if (nk[k] < -1.0 + 1e-12)
                lo[k] = -offset;
        }
        return box;
    }
    default:
        return (Aabb){{-1e30, -1e30, -1e30}, {1e30, 1e30, 1e30}};
    }
}

/* ===== Support mapping ===== */

Vec3 shape_support(const Shape *s, Pose pose, Vec3 d) {
    if (d.x == 0.0 && d.y == 0.0 && d.z == 0.0)
        d = vec3(1, 0, 0);
    return pose_apply(pose, shape_support_local(s, quat_rotate_inv(pose.q, d)));
}

/* ===== Mass properties ===== */

static Mat3 mat3_zero(void) {
    return (Mat3){{{0}}};
}

/* Inertia tensor of a second-moment matrix C = int x x^T dm: tr(C) 1 - C. */
static Mat3 inertia_of_second_moment(Mat3 c) {
    double tr = c.m[0][0] + c.m[1][1] + c.m[2][2];
    Mat3 i;
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            i.m[r][k] = (r == k ? tr : 0.0) - c.m[r][k];
    return i;
}

static void hull_inertia(const Hull *h, double density, double *mass, Mat3 *inertia) {
    Vec3 o = h->centroid;
    double volume = 0.0;
    Mat3 c = mat3_zero();
    for (int f = 0; f < h->face_count; f++) {
        const HullFace *face = &h->faces[f];
        Vec3 a = vec3_sub(h->vertices[h->face_vertices[face->first]], o);
        for (int k = 1; k + 1 < face->count; k++) {
            Vec3 b = vec3_sub(h->vertices[h->face_vertices[face->first + k]], o);
            Vec3 d = vec3_sub(h->vertices[h->face_vertices[face->first + k + 1]], o);
            double v = vec3_dot(a, vec3_cross(b, d)) / 6.0;
            volume += v;
            Vec3 sum = vec3_add(vec3_add(a, b), d);
            double va[3] = {a.x, a.y, a.z}, vb[3] = {b.x, b.y, b.z}, vd[3] = {d.x, d.y, d.z};
            double vs[3] = {sum.x, sum.y, sum.z};
            for (int r = 0; r < 3; r++)
                for (int q = 0; q < 3; q++)
                    c.m[r][q] +=
                        v / 20.0 * (va[r] * va[q] + vb[r] * vb[q] + vd[r] * vd[q] + vs[r] * vs[q]);
        }
    }
    *mass = density * volume;
    Mat3 i = inertia_of_second_moment(c);
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
            i.m[r][q] *= density;
    *inertia = i;
}

/* Triangles (0, p_i, p_i+1) fan the polygon from the origin; with (u, v) = (z, x) each has
 * signed area (u_i v_j - u_j v_i)/2 (positive for the counter-clockwise storage) and
 *   int x^2 dA = A/6 (x_i^2 + x_i x_j + x_j^2),
 *   int x z dA = A/12 (2 x_i z_i + x_i z_j + x_j z_i + 2 x_j z_j). */
static void polygon_inertia(const Shape *s, double density, double *mass, Mat3 *inertia) {
    double area = 0.0, xx = 0.0, zz = 0.0, xz = 0.0;
    int n = s->polygon_count;
    for (int i = 0; i < n; i++) {
        Vec3 p = s->polygon[i], q = s->polygon[(i + 1) % n];
        double a = 0.5 * cross_y(p, q);
        area += a;
        xx += a / 6.0 * (p.x * p.x + p.x * q.x + q.x * q.x);
        zz += a / 6.0 * (p.z * p.z + p.z * q.z + q.z * q.z);
        xz += a / 12.0 * (2.0 * p.x * p.z + p.x * q.z + q.x * p.z + 2.0 * q.x * q.z);
    }
    *mass = density * area;
    *inertia = (Mat3){{
        {density * (area / 12.0 + zz), 0.0, -density * xz},
        {0.0, density * (xx + zz), 0.0},
        {-density * xz, 0.0, density * (area / 12.0 + xx)},
    }};
}

void shape_inertia_tensor(const Shape *s, double density, double *mass, Vec3 *com, Mat3 *inertia) {
    double m = 0.0;
    Vec3 d = {0, 0, 0};
    Vec3 c = {0, 0, 0};
    Mat3 full = mat3_zero();
    bool diagonal = true;
    switch (s->kind) {
    case SHAPE_SPHERE: {
        double r = s->radius;
        m = density * 4.0 / 3.0 * M_PI * r * r * r;
        double i = 0.4 * m * r * r;
        d = vec3(i, i, i);
        break;
    }
    case SHAPE_CAPSULE: {
        double r = s->radius, h = s->half_length;
        double mc = density * M_PI * r * r * 2.0 * h;
        double ms = density * 4.0 / 3.0 * M_PI * r * r * r;
        m = mc + ms;
        double ia = mc * r * r / 2.0 + 0.4 * ms * r * r;
        double it = mc * (r * r / 4.0 + h * h / 3.0) + ms * (0.4 * r * r + h * h + 0.75 * h * r);
        d = vec3(it, it, ia);
        break;
    }
    case SHAPE_BOX: {
        Vec3 h = s->half_extents;
        m = density * 8.0 * h.x * h.y * h.z;
        d = vec3(m / 3.0 * (h.y * h.y + h.z * h.z), m / 3.0 * (h.x * h.x + h.z * h.z),
                 m / 3.0 * (h.x * h.x + h.y * h.y));
        break;
    }
    case SHAPE_HULL:
        if (s->hull) {
            hull_inertia(s->hull, density, &m, &full);
            c = s->hull->centroid;
            diagonal = false;
        }
        break;
    case SHAPE_POLYGON:
        polygon_inertia(s, density, &m, &full);
        diagonal = false;
        break;
    default: /* planes and meshes are static: no mass */
        break;
    }
    if (diagonal)
        full = mat3_diag(d);
    if (mass)
        *mass = m;
    if (com)
        *com = c;
    if (inertia)
        *inertia = full;
}

void shape_mass_properties(const Shape *s, double density, double *mass, Vec3 *inertia) {
    Mat3 full;
    shape_inertia_tensor(s, density, mass, NULL, &full);
    if (inertia)
        *inertia = vec3(full.m[0][0], full.m[1][1], full.m[2][2]);
}
