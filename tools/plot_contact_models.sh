#!/bin/sh
# Figures of docs/contact-models.md, one per contact model: force against penetration over the
# first impact of the vertical bar of scenes/point_drop.lua (unit mass, one vertex) at 0.5, 1
# and 2 m/s, and the height of its tip over 1.5 s of bouncing after a 0.5 m drop. Everything
# comes from `issim run --record` CSV files (bar.pos.z, bar.vel.z every 10 us); the contact
# force is m (dv/dt + g) by central differences (tools/plot_contact_models.py), the penetration
# 0.1 m - z. Soft contacts (k = 1e5 N/m, contact about 10 ms) so the loops have many samples.
# Usage: tools/plot_contact_models.sh [build dir, default build]   (needs gnuplot, python3)
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/docs/figures"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

params() {
    case $1 in
    spring_damper) echo "--set bar_floor.stiffness=1e5 --set bar_floor.restitution=0.8" ;;
    hunt_crossley) echo "--set bar_floor.stiffness=3e6 --set bar_floor.exponent=1.5 --set bar_floor.alpha=0.2" ;;
    hertz) echo "--set bar_floor.youngs_modulus_a=3e8 --set bar_floor.youngs_modulus_b=3e8 --set bar_floor.radius_a=0.01" ;;
    bilinear | bilinear_origin) echo "--set bar_floor.stiffness=1e5 --set bar_floor.restitution=0.8" ;;
    internal_friction) echo "--set bar_floor.stiffness=1e5 --set bar_floor.restitution=0.8" ;;
    internal_friction_c0) echo "--set bar_floor.stiffness=1e5 --set bar_floor.restitution=0.8 --set bar_floor.tilt=0.2" ;;
    esac
}

title() {
    case $1 in
    spring_damper) echo "spring/damper, k = 1e5 N/m, r = 0.8" ;;
    hunt_crossley) echo "Hunt-Crossley, k = 3e6 N/m^1.5, n = 1.5, alpha = 0.2 s/m" ;;
    hertz) echo "Hertz, E = 3e8 Pa (both), nu = 0.3, R = 10 mm" ;;
    bilinear) echo "bilinear (Stronge), k1 = 1e5 N/m, e = 0.8" ;;
    bilinear_origin) echo "bilinear through the origin (Chatterjee), k1 = 1e5 N/m, e = 0.8" ;;
    internal_friction) echo "internal friction, k = 1e5 N/m, r = 0.8" ;;
    internal_friction_c0) echo "internal friction C0, k = 1e5 N/m, r = 0.8, h = 0.2" ;;
    esac
}

for model in spring_damper hunt_crossley hertz bilinear bilinear_origin internal_friction \
    internal_friction_c0; do
    for v in 0.5 1 2; do
        h=$(python3 -c "print($v * $v / (2 * 9.81))")
        until=$(python3 -c "print(($v / 9.81) + 0.03)")
        # shellcheck disable=SC2046
        "$build/issim" run "$here/scenes/point_drop.lua" --headless --quiet --until "$until" \
            --dt 1e-5 --vars bar.pos.z,bar.vel.z --record "$work/$model-$v.csv" \
            --set bar_floor.model=$model $(params $model) \
            --set "bar.pos=0 0 $(python3 -c "print(0.1 + $h + 1e-4)")" >/dev/null
        python3 "$here/tools/plot_contact_models.py" loop "$work/$model-$v.csv" \
            >"$work/$model-$v.dat"
    done
    # shellcheck disable=SC2046
    "$build/issim" run "$here/scenes/point_drop.lua" --headless --quiet --until 1.5 --dt 1e-4 \
        --vars bar.pos.z,bar.vel.z --record "$work/$model-bounce.csv" \
        --set bar_floor.model=$model $(params $model) >/dev/null
    python3 "$here/tools/plot_contact_models.py" bounce "$work/$model-bounce.csv" \
        >"$work/$model-bounce.dat"
    gnuplot <<GNUPLOT
set terminal pngcairo size 1100,420 font "sans,10"
set output "$out/contact_$model.png"
set multiplot layout 1,2 title "$(title $model)"
set xlabel "penetration g (mm)"
set ylabel "contact force (N)"
set key top left
set grid
plot "$work/$model-0.5.dat" using (\$1*1e3):2 with lines lw 2 title "0.5 m/s", \
     "$work/$model-1.dat" using (\$1*1e3):2 with lines lw 2 title "1 m/s", \
     "$work/$model-2.dat" using (\$1*1e3):2 with lines lw 2 title "2 m/s"
set xlabel "time (s)"
set ylabel "tip height (m)"
set key top right
plot "$work/$model-bounce.dat" using 1:2 with lines lw 1.5 title "0.5 m drop"
unset multiplot
GNUPLOT
    echo "docs/figures/contact_$model.png"
done
