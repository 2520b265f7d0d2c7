#!/usr/bin/env python3
"""Geometry from the poses of a recorded bolt_and_hole.lua run (issue 28): how deep the bolt's
capsule (radius 10 mm, segment 40 mm) lies inside the plate's hole (assets/plate_chamfered_hole.obj:
32-gon of radius 11 mm, 25 mm deep, 45-degree chamfer to 16 mm), measured as the largest signed
overlap of the capsule's sampled axis points with the hole's profile, and where its lowest point
is against the floor. Independent of the engine's contacts. Usage: seat_check.py CSV [T0]
(CSV: t, bolt.pos.x/y/z, bolt.orient.w/x/y/z; rows from T0 s on, default 0.3)."""
import csv
import math
import sys

C = math.cos(math.pi / 32)  # the 32-gon's walls lie this much inside the nominal circle
PROFILE = [(0.0, -0.025), (0.011 * C, -0.025), (0.011 * C, -0.005), (0.016 * C, 0.0), (1.0, 0.0)]


def segment_distance(p, a, b):
    dx, dz = b[0] - a[0], b[1] - a[1]
    t = max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dz) / (dx * dx + dz * dz)))
    return math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dz)


def in_air(rho, z):
    if z >= 0.0:
        return True
    if z < -0.025:
        return False
    if z < -0.005:
        return rho < 0.011 * C
    return rho < (0.011 + (z + 0.005)) * C


def signed_distance(rho, z):
    d = min(segment_distance((rho, z), PROFILE[i], PROFILE[i + 1]) for i in range(len(PROFILE) - 1))
    return d if in_air(rho, z) else -d


def main():
    t0 = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
    rows = [r for r in csv.reader(open(sys.argv[1])) if r and not r[0].startswith("#")][2:]
    worst, worst_t, below = 0.0, 0.0, 0.0
    for r in rows:
        t, x, y, z, w, qx, qy, qz = map(float, r[:8])
        if t < t0:
            continue
        ax, ay = 2 * (qx * qz + w * qy), 2 * (qy * qz - w * qx)
        az = 1 - 2 * (qx * qx + qy * qy)
        for i in range(41):
            s = -0.02 + 0.04 * i / 40
            p = (x + s * ax, y + s * ay, z + s * az)
            overlap = 0.010 - signed_distance(math.hypot(p[0], p[1]), p[2])
            if overlap > worst:
                worst, worst_t = overlap, t
        below = max(below, -0.025 - (z - 0.02 * abs(az) - 0.010))
    print("from %.1f s to %.1f s: deepest overlap %.4f mm (t = %.2f s), lowest point at most "
          "%.4f mm below the floor; at the end centre (%.3f, %.3f, %.3f) mm"
          % (t0, t, 1e3 * worst, worst_t, 1e3 * below, 1e3 * x, 1e3 * y, 1e3 * z))


main()
