#!/usr/bin/env bash
# `make run`: the GUI on the default scene when a display is available; without one, the
# default scene headless with its summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scene=${1:-scenes/point_drop.lua}
if [[ -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ]]; then
  exec build/issim run "$scene"
else
  echo "make run: no display; running $scene headless (the GUI needs \$DISPLAY or \$WAYLAND_DISPLAY)"
  exec build/issim run "$scene" --headless --until 4
fi
