"""The Python side of `issim-bench python` (tools/bench/bench_python.c runs it after its C loop).

Times are CPU times of the thread (or process) doing the work, with wall times beside them: the
2-core VM is shared, and at a load of 7 a wall-clock step of the same computation varied by
50 % from one loop to the next while its CPU time did not.

(a) scenes/pile.lua, 240 bodies: every output step sim.step(), then the bodies' states read
    into a numpy history (history[k] = sim.bodies: the view of the published frame, copied
    once); the step and the read timed apart, as the C loop does.
(b) RUNS short runs of bar_drop_angle (3e-4 s, the impact): RUNS / 4 angles from 18 to 90
    degrees (an axis holds at most 4,096 values) at 4 speeds, a Python loop of issim.open / run /
    the first impact's v_out, against `issim sweep --threads 1` over the same grid.
"""
import argparse
import os
import resource
import subprocess
import time

import numpy as np

import issim

UNTIL = 3e-4
SPEEDS = [2.0, 2.5, 3.0, 3.5]


def pile(steps, c_step_us):
    sim = issim.open("pile")
    # Faulted in first (as the C loop's): the read measured is the copy, not the kernel's
    # first touch of fresh pages.
    history = np.ones((steps,) + sim.bodies.shape)
    stepping = reading = 0.0
    clock = time.thread_time  # the engine runs on this thread, without the GIL
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
    """The sweep's runs in its order (the last axis, speed, fastest): (cpu, wall) s, v_out."""
    wall, cpu = time.perf_counter(), time.process_time()
    v_out = np.empty((len(angles), len(SPEEDS)))
    for i, angle in enumerate(angles):
        for j, speed in enumerate(SPEEDS):
            sim = issim.open("bar_drop_angle", params={"angle_deg": angle, "speed": speed})
            sim.run(until=UNTIL)
            v_out[i, j] = sim.impacts[0]["v_out"]
    return (time.process_time() - cpu, time.perf_counter() - wall), v_out


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_sweep(count):
    """`issim sweep --threads 1` over the same grid, process start included: (cpu, wall) s."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    wall, cpu = time.perf_counter(), children_cpu()
    subprocess.run([os.environ["ISSIM_BINARY"], "sweep", "bar_drop_angle", "--grid",
                    f"angle_deg=18:90:{count}", "--grid", "speed=" + ",".join(map(str, SPEEDS)),
                    "--until", str(UNTIL), "--threads", "1", "--quiet", "--out", "/dev/null"],
                   check=True, env=env, stdout=subprocess.DEVNULL,
                   cwd=os.environ.get("ISSIM_SOURCE_DIR", "."))
    return children_cpu() - cpu, time.perf_counter() - wall


def short_runs(runs):
    count = max(runs // len(SPEEDS), 2)
    runs = count * len(SPEEDS)
    # The angles as the sweep writes them (%.12g), so both sides run the same scenes.
    angles = np.array([float(f"{a:.12g}") for a in np.linspace(18, 90, count)])
    loop, v_out = python_loop(angles)
    sweep = cli_sweep(count)
    print(f"python (b) {runs} runs of bar_drop_angle to {UNTIL} s, CPU: Python loop "
          f"{loop[0]:.2f} s ({1e3 * loop[0] / runs:.3f} ms a run), issim sweep --threads 1 "
          f"{sweep[0]:.2f} s ({1e3 * sweep[0] / runs:.3f} ms a run): {loop[0] / sweep[0]:.3f}x "
          f"(target <= 1.3x); wall {loop[1]:.2f} s against {sweep[1]:.2f} s: "
          f"{loop[1] / sweep[1]:.3f}x")
    for j, speed in enumerate(SPEEDS):
        k = np.nonzero(np.diff(np.sign(v_out[:, j])))[0][0]
        print(f"python (b) at {speed} m/s v_out changes sign between {angles[k]:.3f} and "
              f"{angles[k + 1]:.3f} degrees (the critical angle, V11)")


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
