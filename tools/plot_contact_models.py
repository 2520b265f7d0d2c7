#!/usr/bin/env python3
"""Processing for tools/plot_contact_models.sh (no third-party modules).

loop CSV:   the first impact of a point_drop recording as "penetration force" rows, the
            force m (dv/dt + g) from central differences of bar.vel.z (unit mass, g = 9.81),
            the penetration 0.1 m - bar.pos.z; rows while the tip is above the floor are left
            out (the loop starts and ends at g = 0).
bounce CSV: "t tip_height" rows (bar.pos.z - 0.1 m).
"""
import csv
import sys

TIP = 0.1
MASS = 1.0
GRAVITY = 9.81


def rows(path):
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    reader = csv.DictReader(lines)
    return [(float(r["t"]), float(r["bar.pos.z"]), float(r["bar.vel.z"])) for r in reader]


def loop(path):
    data = rows(path)
    started = False
    for i in range(1, len(data) - 1):
        t0, _, v0 = data[i - 1]
        t, z, _ = data[i]
        t2, _, v2 = data[i + 1]
        g = TIP - z
        if g <= 0.0:
            if started:
                break  # the first impact is over
            continue
        started = True
        force = MASS * ((v2 - v0) / (t2 - t0) + GRAVITY)
        print(f"{g:.9e} {force:.6e}")


def bounce(path):
    for t, z, _ in rows(path):
        print(f"{t:.6f} {z - TIP:.9e}")


if __name__ == "__main__":
    {"loop": loop, "bounce": bounce}[sys.argv[1]](sys.argv[2])
