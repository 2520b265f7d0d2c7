#!/bin/sh
# The figure of docs/contact-models.md, "The steel bar drop with maps" (V11's map part, seed 000
# Figs. 6.6-6.8): the fraction of the kinetic energy lost against the impact angle at 3 m/s for
# the deformation maps (assets/maps/steel_bar.map), the same without friction, the free body's
# maps (steel_bar_free.map) and the rigid bar on its Hunt-Crossley foundation
# (scenes/bar_drop_angle.lua). Four `issim sweep` runs of 7 drops each, then gnuplot.
# Usage (from the repository root): tools/mapgen/plot_bar_drop_energy.sh [ISSIM] [OUT.png]
set -e
issim=${1:-build/issim}
out=${2:-docs/figures/bar_drop_map_energy.png}
work=$(mktemp -d)
sweep() { # scene, csv, --set arguments...
  scene=$1
  csv=$2
  shift 2
  "$issim" sweep "scenes/$scene" --grid angle_deg=18:90:7 --grid speed=3 --until 5e-4 \
    --out "$work/$csv" --quiet "$@" >/dev/null
}
sweep bar_drop_map.lua maps.csv
sweep bar_drop_map.lua frictionless.csv --set bar_foundation.friction_static=0 \
  --set bar_foundation.friction_kinetic=0
sweep bar_drop_map.lua free.csv --set bar.contact_map=assets/maps/steel_bar_free.map
sweep bar_drop_angle.lua rigid.csv
# Columns: angle_deg is the 2nd; kinetic_end found by name. E_in = m v^2 / 2 of the 0.2 m rod.
for name in maps frictionless free rigid; do
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "kinetic_end") k = i; next }
           { m = 7876.74 * 3.14159265358979 * 0.0125 ^ 2 / 4 * 0.2
             printf "%s %.6f\n", $2, 1 - $k / (0.5 * m * 9) }' "$work/$name.csv" > "$work/$name.dat"
done
gnuplot <<GP
set terminal pngcairo size 900,600 font ",10"
set output '$out'
set termoption noenhanced
set title 'Steel bar dropped at 3 m/s: contact maps (issim-mapgen) against the rigid Hunt-Crossley model'
set xlabel 'impact angle (degrees)'
set ylabel 'fraction of the kinetic energy lost'
set xrange [10:95]
set yrange [0:1]
set grid
set key outside bottom center vertical
plot '$work/maps.dat' with linespoints lw 2 pt 7 title 'deformation maps (--deformation-only) + flat 5.5e7 N/m foundation, friction 0.1/0.075', \
     '$work/frictionless.dat' with linespoints dt 2 pt 6 title 'the same without friction (elastic waves only)', \
     '$work/free.dat' with linespoints pt 1 title 'free-body maps (steel_bar_free.map): the rigid recoil counted twice', \
     '$work/rigid.dat' with linespoints pt 2 title 'rigid bar, Hunt-Crossley foundation (bar_drop_angle.lua)'
GP
cat "$work"/maps.dat
rm -rf "$work"
echo "wrote $out"
