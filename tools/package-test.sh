#!/usr/bin/env bash
# The Debian package end to end (issue 32): builds it (cpack in a release build without tests,
# build-package/), installs it with apt-get, runs the installed issim from a directory outside
# the source tree (headless, from Python's `import issim`, then a GUI screenshot under Xvfb),
# reads its man page, removes the package and checks the program went with it. Needs root or
# sudo; run by .ci/run after `make test`. ISSIM_PACKAGE_BUILD=DIR builds elsewhere;
# ISSIM_PACKAGE_KEEP=1 leaves the package installed.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=${ISSIM_PACKAGE_BUILD:-$src/build-package}
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

step() { printf 'package-test: %s\n' "$*"; }
fail() {
  printf 'package-test: FAILED: %s\n' "$*" >&2
  exit 1
}

# Only what the package holds is built: libissim, the executables, the display module (the
# tests and benchmarks would triple the time). Release flags without -g: a smaller package.
step "building the package in $build"
mkdir -p "$build"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DISSIM_TESTS=OFF \
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >"$build/build.log" 2>&1 || { cat "$build/build.log"; fail "configure"; }
cmake --build "$build" -j"${JOBS:-2}" --target issim issimdisplay issim-mapgen issim-pantosim issim_python \
  >>"$build/build.log" 2>&1 || { tail -n 30 "$build/build.log"; fail "build"; }
rm -f "$build"/issim_*.deb
(cd "$build" && cpack -G DEB >>"$build/build.log" 2>&1) || { tail -n 30 "$build/build.log"; fail "cpack"; }
deb=$(ls "$build"/issim_*.deb)
step "$(basename "$deb"): $(du -h "$deb" | cut -f1)"
dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/^ */  depends: /'
dpkg-deb -c "$deb" >"$build/contents.txt"
grep -q ' ./usr/share/issim/scenes/point_drop.lua$' "$build/contents.txt" || fail "no scenes in $deb"
grep -Eq ' ./usr/lib/python3/dist-packages/issim\.cpython-[0-9]+-.*\.so$' "$build/contents.txt" ||
  fail "no Python module in $deb"

step "installing"
$sudo apt-get install -y --no-install-recommends "$deb" >"$build/apt-install.log" 2>&1 ||
  { tail -n 20 "$build/apt-install.log"; fail "apt-get install"; }
[[ -x /usr/bin/issim ]] || fail "/usr/bin/issim not installed"

work=$(mktemp -d /tmp/issim-package-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

step "issim run point_drop --headless --until 0.5 (in $work)"
issim run point_drop --headless --until 0.5 --quiet >run.out 2>&1 || { cat run.out; fail "headless run"; }
cat run.out
grep -q '^scene      /usr/share/issim/scenes/point_drop.lua$' run.out ||
  fail "the run did not use the installed scene"
grep -Eq '^ +1 +bar .* 0\.799[0-9]+ ' run.out || fail "no impact of restitution 0.8 in 0.5 s (at 0.32 s)"

# Debian's interpreter, whatever python3 comes first on PATH (a pyenv or venv one has neither
# /usr/lib/python3/dist-packages nor python3-numpy).
step "python3: import issim, the installed point_drop from Python"
/usr/bin/python3 -c "
import issim
sim = issim.open('point_drop')
sim.run(until=0.5)
assert sim.scene == '/usr/share/issim/scenes/point_drop.lua', sim.scene
assert abs(sim.impacts[0]['restitution'] - 0.8) < 1e-3, sim.impacts
assert sim.bodies.shape == (1, 13)
table = issim.sweep('point_drop', grid={'drop_height': [0.1, 0.6]}, until=0.5, threads=1)
assert len(table) == 2 and table['ok'].all(), table
print('issim', issim.__version__, 'from', issim.__file__, ': r =', sim.impacts[0]['restitution'])
" >python.out 2>&1 || { cat python.out; fail "the Python module"; }
cat python.out

step "GUI screenshot under Xvfb"
# Leave the window to Xvfb's GLX (Mesa's llvmpipe): no GPU in CI.
xvfb-run -a -s "-screen 0 1280x720x24" issim run point_drop --screenshot "$work/x.png" \
  >gui.out 2>&1 || { cat gui.out; fail "GUI run"; }
[[ -s x.png ]] || fail "no screenshot"
[[ $(head -c 8 x.png | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "x.png is not a PNG"
step "x.png: $(stat -c %s x.png) bytes"

step "man page, desktop entry, metainfo"
page=/usr/share/man/man1/issim.1
if [[ ! -f $page ]] && grep -qs 'path-exclude.*/usr/share/man' /etc/dpkg/dpkg.cfg.d/*; then
  # Minimal Debian images tell dpkg to drop every man page: read the package's own.
  step "dpkg leaves out /usr/share/man here: reading issim.1 from the package"
  dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/man/man1/issim.1 >issim.1
  page=$work/issim.1
fi
man_out=$(MANPAGER=cat MANWIDTH=80 man -l "$page" 2>&1) || fail "man -l $page"
grep -q 'issim run' <<<"$man_out" || fail "the man page does not read: $man_out"
appstreamcli validate --no-net /usr/share/metainfo/org.issim.issim.metainfo.xml >/dev/null ||
  fail "appstreamcli validate"
desktop-file-validate /usr/share/applications/org.issim.issim.desktop || fail "desktop-file-validate"

cd /
if [[ ${ISSIM_PACKAGE_KEEP:-0} == 1 ]]; then
  step "kept installed (ISSIM_PACKAGE_KEEP=1)"
  exit 0
fi
step "removing"
$sudo apt-get remove -y issim >"$build/apt-remove.log" 2>&1 ||
  { tail -n 20 "$build/apt-remove.log"; fail "apt-get remove"; }
[[ ! -e /usr/bin/issim ]] || fail "/usr/bin/issim is still there"
[[ ! -e /usr/share/issim/scenes ]] || fail "/usr/share/issim/scenes is still there"
! ls /usr/lib/python3/dist-packages/issim.*.so >/dev/null 2>&1 || fail "the Python module is still there"
step "ok"
