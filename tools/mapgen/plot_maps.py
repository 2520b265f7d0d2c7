#!/usr/bin/env python3
"""Figures of docs/contact-map-generator.md from a contact-map file (docs/contact-map-format.md),
like seed 000 Figs. 4.5-4.12: one impulse map g(kT) = (h(kT) - h((k-1)T)) / T per node (eq.
3.16) and all step responses h(kT) in one plot. Values are per unit thickness (the stored N/m
divided by the provenance `thickness`), in Pa, so they compare with the modulus.

Usage: tools/mapgen/plot_maps.py MAP OUT_PREFIX [T_END_US]   (needs gnuplot; no other modules)
Writes OUT_PREFIX_angle_NN.png per node and OUT_PREFIX_steps.png.
       tools/mapgen/plot_maps.py --compare OUT.png MAP... : every map's nodes, each step response
divided by its first sample h(T), in one plot (maps of different dimension or thickness).
"""
import os
import subprocess
import sys
import tempfile


def read_map(path):
    header, tokens = {}, []
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if tokens or (words and words[0] == "node"):
                tokens.extend(words)
            elif words:
                header[words[0]] = words[1:]
    nodes, i = [], 0
    samples = int(header["samples"][0])
    while i < len(tokens):
        j, angle = i + 2, None  # "node INDEX", then keyed fields, then the samples
        while tokens[j] in ("position", "normal", "angle"):
            if tokens[j] == "angle":
                angle = float(tokens[j + 1])
            j += 2 if tokens[j] == "angle" else 4
        nodes.append((angle, [float(x) for x in tokens[j:j + samples]]))
        i = j + samples
    return header, nodes


def compare(out, paths):
    work = tempfile.mkdtemp()
    plots = []
    for m, path in enumerate(paths):
        header, nodes = read_map(path)
        period = float(header["period"][0])
        dim = header["dimension"][0]
        for j, (angle, h) in enumerate(nodes):
            data = os.path.join(work, "m%d_%d.dat" % (m, j))
            with open(data, "w") as f:
                for k, value in enumerate(h):
                    f.write("%.9g %.9g\n" % ((k + 1) * period * 1e6, value / h[0]))
            label = "%sD, %s" % (dim, "%.0f deg" % angle if angle is not None else "node %d" % j)
            plots.append("'%s' using 1:2 with lines lw 1.5 title '%s'" % (data, label))
    script = ["set terminal pngcairo size 900,500 font ',11'", "set grid",
              "set xlabel 'time after the step (us)'", "set ylabel 'h(kT) / h(T)'",
              "set title 'Step responses, 2D plane strain against the 3D solid'",
              "set output '%s'" % out, "plot " + ", ".join(plots)]
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)


def main():
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3:])
        return
    path, prefix = sys.argv[1], sys.argv[2]
    t_end = float(sys.argv[3]) if len(sys.argv) > 3 else None
    header, nodes = read_map(path)
    period = float(header["period"][0])
    thickness = float(header.get("thickness", ["1"])[0])
    work = tempfile.mkdtemp()
    data = os.path.join(work, "maps.dat")
    with open(data, "w") as f:
        n = len(nodes[0][1])
        for k in range(n):
            row = [(k + 1) * period * 1e6]
            for _, h in nodes:
                previous = h[k - 1] if k > 0 else 0.0
                row += [h[k] / thickness, (h[k] - previous) / period / thickness]
            f.write(" ".join("%.9g" % x for x in row) + "\n")
    xrange = "set xrange [0:%g]\n" % t_end if t_end else ""
    script = ["set terminal pngcairo size 900,500 font ',11'", "set grid", xrange,
              "set xlabel 'time after the step (us)'"]
    for j, (angle, _) in enumerate(nodes):
        name = "angle_%02d" % round(angle) if angle is not None else "node_%02d" % j
        label = "%g deg. impact" % angle if angle is not None else "node %d" % j
        script += ["set output '%s_%s.png'" % (prefix, name),
                   "set ylabel 'g(kT) (Pa/s per unit thickness)'",
                   "set title 'Derived impulse map (000 eq. 3.16), %s, T = %g us'" %
                   (label, period * 1e6),
                   "plot '%s' using 1:%d with lines lw 1 title 'g'" % (data, 3 + 2 * j)]
    plots = ", ".join("'%s' using 1:%d with lines lw 1.5 title '%s'" %
                      (data, 2 + 2 * j, "%g deg" % a if a is not None else "node %d" % j)
                      for j, (a, _) in enumerate(nodes))
    script += ["set output '%s_steps.png'" % prefix,
               "set ylabel 'h(kT) (Pa per unit thickness)'",
               "set title 'Step responses at each angle (cf. 000 Fig. 4.12), T = %g us'" %
               (period * 1e6),
               "plot " + plots]
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)


if __name__ == "__main__":
    main()
