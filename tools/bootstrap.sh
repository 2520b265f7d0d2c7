#!/usr/bin/env bash
# Installs the Debian 12 packages issim needs. Idempotent and silent when everything is
# present; prints what it installs otherwise; exits non-zero with a clear message when apt
# fails. Run by `make run`, `make test` and `make build`.
set -u
packages=(
  build-essential cmake pkg-config clang-format
  libsundials-dev liblapacke-dev libopenblas-dev liblua5.4-dev libcmocka-dev
  clang libclang-rt-14-dev
  libusb-1.0-0-dev libsdl2-dev libglew-dev libfftw3-dev libimgui-dev libstb-dev
  gnuplot-nox xvfb xauth libgl1-mesa-dri ffmpeg
  libopenmpi-dev openmpi-bin libgsl-dev libgmsh-dev
  libsiconos-numerics-dev
  libode-dev  # benchmark only: tools/bench/bench_pile.c compares against ODE QuickStep
  man-db appstream desktop-file-utils  # tools/package-test.sh: man page, metainfo, desktop entry
  libhdf5-dev python3-h5py  # HDF5 recordings (src/io/recorder_hdf5.c); h5py for their test
  python3-dev python3-numpy python3-pytest  # the Python module (python/) and its tests
  umockdev libumockdev-dev  # tests/test_haptics_usb.c: the libusb back-end on an emulated USB device
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "bootstrap: installing ${#missing[@]} Debian package(s): ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    sudo="sudo"
  else
    echo "bootstrap: error: not root and sudo is not available; install as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
log=$(mktemp /tmp/issim-apt.XXXXXX)
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get update >"$log" 2>&1; then
  echo "bootstrap: error: 'apt-get update' failed (network or sources?); last lines of $log:" >&2
  tail -n 5 "$log" >&2
  exit 1
fi
if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
  echo "bootstrap: error: 'apt-get install' failed for: ${missing[*]}; last lines of $log:" >&2
  tail -n 10 "$log" >&2
  exit 1
fi
echo "bootstrap: done (log in $log)"
