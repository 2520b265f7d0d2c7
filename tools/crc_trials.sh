#!/bin/sh
# Corrupt-frame trials of the pantograph protocol (docs/pantograph-protocol.md, "Integrity"):
# random one-bit, one-byte, scattered and burst corruptions of valid protocol-2 frames fed to
# the decoder (none may be accepted), with protocol 1's CRC-16 given the same corruptions for
# comparison. The ctest run does 1,000,000 trials; this runs TRIALS (default 10 million).
# usage: tools/crc_trials.sh [TRIALS] [BUILD_DIR]
set -eu
trials=${1:-10000000}
build=${2:-build}
exe="$build/test_haptics_codec"
[ -x "$exe" ] || { echo "no $exe: build first (cmake --build --preset release)" >&2; exit 1; }
ISSIM_CRC_TRIALS=$trials CMOCKA_TEST_ABORT=0 "$exe" 2>&1 | grep -E "corrupted frames|PASSED|FAILED"
