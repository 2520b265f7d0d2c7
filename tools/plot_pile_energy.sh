#!/bin/sh
# Energy plots of the piles (issue 11; docs/performance.md, "Piles that never gain energy"):
# kinetic energy (log scale), and the total energy after the pour (from T1 s on, default 1, minus
# its value at T1: it must only fall), against time up to XMAX s (default: all), for each
# CSV given (an `issim run --record ... --vars universe.energy.kinetic,...,universe.energy.total`
# recording, or the CSV of `issim-bench dynamics energy SCENE DT SECONDS CSV`: both have t in
# the first column, kinetic in the second and total in the fifth).
# Usage: tools/plot_pile_energy.sh OUT.png TITLE LABEL1 CSV1 [LABEL2 CSV2 ...]
set -e
T1=${T1:-1.0}
XMAX=${XMAX:-*}
out=$1
title=$2
shift 2
kinetic=""
total=""
while [ $# -ge 2 ]; do
  data=$(mktemp)
  grep -v '^[#a-z]' "$2" | grep -v '^t,' > "$data"
  e1=$(awk -F, -v t1="$T1" '$1 >= t1 { print $5; exit }' "$data")
  kinetic="$kinetic${kinetic:+, }'$data' using 1:2 with lines title '$1'"
  total="$total${total:+, }'$data' using 1:(\$1 >= $T1 ? \$5 - $e1 : NaN) with lines title '$1'"
  shift 2
done
gnuplot <<GP
set terminal pngcairo size 1100,420 font ",10"
set output '$out'
set termoption noenhanced
set xrange [0:$XMAX]
set datafile separator ','
set multiplot layout 1,2 title '$title'
set xlabel 't [s]'
set ylabel 'kinetic energy [J]'
set logscale y
set format y '%.0e'
plot $kinetic
unset logscale y
set format y '%g'
set ylabel 'total energy - its value at $T1 s [J]'
plot $total
unset multiplot
GP
