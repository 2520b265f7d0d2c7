"""The Python side of `issim-bench python` (tools/bench/bench_python.c runs it after its C loop).

(a) scenes/pile.lua, 240 bodies: every output step sim.step(), then the bodies' states read
    into a numpy history (history[k] = sim.bodies: the view of the published frame, copied
    once); the step and the read timed apart, as the C loop does.
(b) RUNS short runs of bar_drop_angle (3e-4 s, the impact) at RUNS angles from 18 to 90
    degrees: a Python loop of issim.open / run / the first impact's v_out, against
    `issim sweep --threads 1` over the same grid.
"""
import argparse
import os
import subprocess
import time

import numpy as np

import issim

UNTIL = 3e-4


def pile(steps, c_step_us):
    sim = issim.open("pile")
    history = np.empty((steps,) + sim.bodies.shape)
    stepping = reading = 0.0
    clock = time.perf_counter
    for k in range(steps):
        t0 = clock()
        sim.step()
        t1 = clock()
        history[k] = sim.bodies
        reading += clock() - t1
        stepping += t1 - t0
    step_us, read_us = 1e6 * stepping / steps, 1e6 * reading / steps
    print(f"python (a) Python loop: {history.shape[1]} bodies, {steps} steps: step "
          f"{step_us:.1f} us, read {read_us:.2f} us ({100 * read_us / step_us:.3f} % of the "
          f"step; target < 10 %)")
    print(f"python (a) the Python loop's step against the C loop's: {step_us:.1f} / "
          f"{c_step_us:.1f} us = {step_us / c_step_us:.3f}")
    assert np.isfinite(history).all()


def python_loop(angles):
    t0 = time.perf_counter()
    v_out = np.empty(len(angles))
    for i, angle in enumerate(angles):
        sim = issim.open("bar_drop_angle", params={"angle_deg": angle})
        sim.run(until=UNTIL)
        v_out[i] = sim.impacts[0]["v_out"]
    return time.perf_counter() - t0, v_out


def cli_sweep(runs):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    t0 = time.perf_counter()
    subprocess.run([os.environ["ISSIM_BINARY"], "sweep", "bar_drop_angle", "--grid",
                    f"angle_deg=18:90:{runs}", "--until", str(UNTIL), "--threads", "1",
                    "--quiet", "--out", "/dev/null"], check=True, env=env,
                   cwd=os.environ.get("ISSIM_SOURCE_DIR", "."))
    return time.perf_counter() - t0


def short_runs(runs):
    angles = np.array([float(f"{a:.12g}") for a in np.linspace(18, 90, runs)])
    loop, v_out = python_loop(angles)
    sweep = cli_sweep(runs)
    print(f"python (b) {runs} runs of bar_drop_angle to {UNTIL} s: Python loop {loop:.2f} s "
          f"({1e3 * loop / runs:.3f} ms a run), issim sweep --threads 1 {sweep:.2f} s "
          f"({1e3 * sweep / runs:.3f} ms a run): {loop / sweep:.3f}x (target <= 1.3x)")
    crossing = np.nonzero(np.diff(np.sign(v_out)))[0]
    if len(crossing):
        print(f"python (b) v_out changes sign near {angles[crossing[0]]:.2f} degrees at 3 m/s "
              f"(the critical angle, V11)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--c-step-us", type=float, default=float("nan"))
    args = parser.parse_args()
    pile(args.steps, args.c_step_us)
    short_runs(args.runs)


if __name__ == "__main__":
    main()
