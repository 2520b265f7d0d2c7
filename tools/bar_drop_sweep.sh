#!/bin/sh
# Prints the rigid bar-drop sweep of 000 ch. 6 (7 impact angles x 3 speeds, Table 6.1's
# foundation and friction) and the critical angle per speed, from scenes/bar_drop_angle.lua.
# Usage: tools/bar_drop_sweep.sh [BUILD_DIR]   (default build, the release preset)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$here/build"}
ISSIM_SOURCE_DIR="$here" exec "$build/issim-bench" dynamics table
