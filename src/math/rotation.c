/* Rotations: quaternions (w, x, y, z) mapping body to world, and the contact tangent basis.
 *
 * Quaternion products follow Hamilton's convention (quat_mul in math.h), so for a unit q the
 * rotation is v_w = q (0, v) q* (quat_rotate, inline in math.h).
 */
#include "issim/math.h"

Quat quat_from_axis_angle(Vec3 axis, double angle) {
    Vec3 u = vec3_normalize(axis);
    if (u.x == 0.0 && u.y == 0.0 && u.z == 0.0)
        return quat_identity();
    double s = sin(0.5 * angle);
    return (Quat){cos(0.5 * angle), u.x * s, u.y * s, u.z * s};
}

Mat3 quat_to_mat3(Quat q) {
    double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
    double xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
    double wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
    return (Mat3){{
        {1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy)},
        {2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx)},
        {2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy)},
    }};
}

/* Shepperd's method: the largest of the four squared components is taken from the trace
 * combination that is largest, so the square root never sees cancellation. */
Quat quat_from_mat3(Mat3 r) {
    const double(*m)[3] = r.m;
    double trace = m[0][0] + m[1][1] + m[2][2];
    Quat q;
    if (trace >= m[0][0] && trace >= m[1][1] && trace >= m[2][2]) {
        double k = 2.0 * sqrt(1.0 + trace);
        q = (Quat){0.25 * k, (m[2][1] - m[1][2]) / k, (m[0][2] - m[2][0]) / k,
                   (m[1][0] - m[0][1]) / k};
    } else if (m[0][0] >= m[1][1] && m[0][0] >= m[2][2]) {
        double k = 2.0 * sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]);
        q = (Quat){(m[2][1] - m[1][2]) / k, 0.25 * k, (m[0][1] + m[1][0]) / k,
                   (m[0][2] + m[2][0]) / k};
    } else if (m[1][1] >= m[2][2]) {
        double k = 2.0 * sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]);
        q = (Quat){(m[0][2] - m[2][0]) / k, (m[0][1] + m[1][0]) / k, 0.25 * k,
                   (m[1][2] + m[2][1]) / k};
    } else {
        double k = 2.0 * sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]);
        q = (Quat){(m[1][0] - m[0][1]) / k, (m[0][2] + m[2][0]) / k, (m[1][2] + m[2][1]) / k,
                   0.25 * k};
    }
    if (q.w < 0.0)
        q = (Quat){-q.w, -q.x, -q.y, -q.z};
    return quat_normalize(q);
}

/* q(t) maps body to world and w is expressed in the world frame, so the world-side product
 * applies: dq/dt = 0.5 (0, w) q. */
Quat quat_derivative(Quat q, Vec3 w_world) {
    Quat d = quat_mul((Quat){0.0, w_world.x, w_world.y, w_world.z}, q);
    return (Quat){0.5 * d.w, 0.5 * d.x, 0.5 * d.y, 0.5 * d.z};
}

/* The angle theta with q = (cos theta/2, 0, sin theta/2, 0), so theta lies in (-2 pi, 2 pi]:
 * q and -q give angles 2 pi apart (the same rotation). Components x and z, zero for a planar
 * attitude, are ignored. */
double quat_planar_angle_y(Quat q) {
    return 2.0 * atan2(q.y, q.w);
}

/* The basis is the image of (x, y) under the shortest-arc rotation taking z to n (Frisvad
 * 2012, "Building an orthonormal basis from a 3D unit vector without normalization"):
 *   t1 = (1 - x^2 / (1 + z), -x y / (1 + z), -x),  t2 = (-x y / (1 + z), 1 - y^2 / (1 + z), -y).
 * Frisvad's form divides by 1 + z, which loses every digit near n = -z (Nelson Max 2017: the
 * basis stops being orthonormal well before the singular point). Duff et al. 2017 ("Building
 * an orthonormal basis, revisited") fix that by flipping the construction at z = 0, which makes
 * the basis jump across the whole equator. Here we keep Frisvad's (continuous) basis and
 * evaluate it robustly instead: with r = |(x, y)|, c = x / r, s = y / r and a unit n,
 * x^2 / (1 + z) = c^2 (1 - z) and x y / (1 + z) = c s (1 - z), neither of which cancels. The
 * result is orthogonal to n for any n and unit to rounding when n is unit, continuous except
 * at n = -z itself (where the shortest arc is not unique), and right-handed (t1 x t2 = n) since
 * it is a rotation of (x, y, z). For n = -z exactly we take the limit along +x:
 * t1 = (-1, 0, 0), t2 = (0, 1, 0). */
void vec3_tangent_basis(Vec3 n, Vec3 *t1, Vec3 *t2) {
    double r2 = n.x * n.x + n.y * n.y;
    double c = 1.0, s = 0.0;
    if (r2 > 1e-280) {
        double inv = 1.0 / sqrt(r2);
        c = n.x * inv;
        s = n.y * inv;
    } else if (n.x != 0.0 || n.y != 0.0) {
        double r = hypot(n.x, n.y); /* squares underflow: scale-safe path */
        c = n.x / r;
        s = n.y / r;
    }
    double k = 1.0 - n.z;
    double cs = -c * s * k;
    *t1 = (Vec3){1.0 - c * c * k, cs, -n.x};
    *t2 = (Vec3){cs, 1.0 - s * s * k, -n.y};
}
