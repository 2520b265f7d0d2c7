#!/usr/bin/env bash
# `make run`: the GUI on the default scene when a display is available; without one, the
# default scene headless with its summary. (The GUI arrives with the display module; until
# then both paths run headless.)
set -euo pipefail
cd "$(dirname "$0")/.."
scene=${1:-scenes/point_drop.lua}
if [[ -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ]]; then
  exec build/issim run "$scene" --until 4
else
  echo "make run: no display; running $scene headless"
  exec build/issim run "$scene" --headless --until 4
fi
