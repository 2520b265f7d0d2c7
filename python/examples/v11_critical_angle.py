"""V11 from Python: the rigid bar drop's critical angle against impact speed (000 ch. 6).

The 0.2 m steel bar of scenes/bar_drop_angle.lua strikes Table 6.1's Hunt-Crossley foundation
with friction at an angle. Below the critical angle its centre of mass still falls after the
impact (the first impact's v_out < 0); above it, it rises. A sweep on every core finds the sign
change on a 1-degree grid at each speed, then bisection with single runs narrows it to 0.01
degree. Prints the table and, with matplotlib, writes v11_critical_angle.png (docs/python.md).

    python3 python/examples/v11_critical_angle.py [OUT.png]
"""
import sys

import numpy as np

import issim

UNTIL = 3e-4  # s: the impact lasts 0.1-0.2 ms
SPEEDS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]  # m/s


def v_out(angle, speed):
    """The centre of mass's normal velocity after the first impact, m/s."""
    sim = issim.open("bar_drop_angle", params={"angle_deg": angle, "speed": speed})
    sim.run(until=UNTIL)
    return sim.impacts[0]["v_out"]


def critical_angle(rows, speed, tolerance=0.01):
    """Bisection between the two grid angles where v_out changes sign."""
    k = np.nonzero(np.diff(np.sign(rows["v_out"])))[0][0]
    lo, hi = rows["angle_deg"][k], rows["angle_deg"][k + 1]
    while hi - lo > tolerance:
        mid = 0.5 * (lo + hi)
        if v_out(mid, speed) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def plot(table, critical, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (apt-get install python3-matplotlib): no plot")
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for speed in SPEEDS:
        rows = table[table["speed"] == speed]
        left.plot(rows["angle_deg"], rows["v_out"], label=f"{speed:g} m/s")
    left.axhline(0, color="black", linewidth=0.6)
    left.set(xlabel="impact angle, degrees", ylabel="centre of mass v_out, m/s",
             title="after the impact (000 Fig. 6.5)")
    left.legend(fontsize=8)
    right.plot(SPEEDS, critical, "o-")
    right.axhspan(60, 65, alpha=0.15, label="V11: 60-65 degrees at 2-4 m/s")
    right.axhline(64.3, linestyle="--", color="gray", label="Stoianovici & Hurmuzlu: 64.3")
    right.set(xlabel="impact speed, m/s", ylabel="critical angle, degrees",
              title="critical angle against speed")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("wrote", path)


def main():
    grid = {"speed": SPEEDS, "angle_deg": "40:80:41"}
    table = issim.sweep("bar_drop_angle", grid=grid, until=UNTIL)
    assert table["ok"].all(), table["status"][~table["ok"]]
    critical = [critical_angle(table[table["speed"] == s], s) for s in SPEEDS]
    print("speed, m/s      " + " ".join(f"{s:6.1f}" for s in SPEEDS))
    print("critical, deg   " + " ".join(f"{a:6.2f}" for a in critical))
    plot(table, critical, sys.argv[1] if len(sys.argv) > 1 else "v11_critical_angle.png")


if __name__ == "__main__":
    main()
