#!/bin/sh
# The 60 s checks of issue 28 (tests/test_contact_geometry.c runs 5 s and 2 s of them): the bolt
# of scenes/bolt_and_hole.lua under each resolver, and a steel ball resting off-centre on the
# hole's fan floor, their geometry measured from the recorded poses (tools/seat_check.py), not
# from the engine's contacts. Usage: tools/seat_check.sh [SECONDS] [ISSIM] (defaults: 60,
# build/issim). Figures: docs/contact-models.md, "Energy at contact changes".
set -e
cd "$(dirname "$0")/.."
until=${1:-60}
issim=${2:-build/issim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
vars=bolt.pos.x,bolt.pos.y,bolt.pos.z,bolt.orient.w,bolt.orient.x,bolt.orient.y,bolt.orient.z
for resolver in force_law complementarity reduced; do
  start=$(date +%s)
  "$issim" run scenes/bolt_and_hole.lua --headless --quiet --until "$until" \
    --set bolt_plate.resolver=$resolver --record "$out/bolt.csv" --vars $vars --every 500 >/dev/null
  printf 'bolt, %-15s %s s (%s s wall): ' $resolver "$until" $(( $(date +%s) - start ))
  python3 tools/seat_check.py "$out/bolt.csv"
done
cat > "$out/ball.lua" <<LUA
local r = 0.008
local m = 7800 * 4 / 3 * math.pi * r ^ 3
return { name = 'ball_in_hole',
  universe = { gravity = {0, 0, -9.81}, integrator = 'rk4', dt = 2e-5 },
  things = {
    { name = 'ball', kind = 'body', shape = 'sphere', radius = r, mass = m,
      inertia = {0.4 * m * r ^ 2, 0.4 * m * r ^ 2, 0.4 * m * r ^ 2},
      pos = {0.002, 0.0007, -0.025 + r + 0.0005}, material = 'steel' },
    { name = 'plate', kind = 'obstacle', shape = 'mesh',
      mesh_file = '$(pwd)/assets/plate_chamfered_hole.obj', material = 'steel' } },
  contacts = { { name = 'ball_plate', materials = {'steel', 'steel'},
    model = 'spring_damper', stiffness = 1e5, restitution = 0.2, clamp_attraction = true } } }
LUA
"$issim" run "$out/ball.lua" --headless --quiet --until "$until" --record "$out/ball.csv" \
  --vars ball.pos.z --every 500 >/dev/null
awk -F, -v until="$until" 'BEGIN { m = 7800 * 4 / 3 * 3.14159265358979 * 0.008 ^ 3;
    rest = -0.025 + 0.008 - m * 9.81 / 1e5 }
  $1 ~ /^[0-9]/ && $1 >= 0.3 { d = $2 - rest; if (d < 0) d = -d; if (d > worst) worst = d }
  END { printf "ball on the fan floor, %s s: height within %.3f um of the static one from 0.3 s on\n",
        until, worst * 1e6 }' "$out/ball.csv"
