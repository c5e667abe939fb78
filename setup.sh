#!/usr/bin/env bash
# Installs what devshim needs, idempotently, then configures and builds it.
#
#   ./setup.sh            # the developer's: everything ./test.sh needs (tests, lints, browser)
#   ./setup.sh --product  # the user's (run.sh): what the runner, devshim-probe and the shim need
#
# Each step first checks whether its work is already done, so on a ready machine it takes a few
# seconds; what the developer's set-up installed serves the product's too, and --product on a
# build folder made by the developer's builds only the product's targets. Environment:
#   DEVSHIM_BUILD_DIR   build folder (default: build; build-asan with DEVSHIM_SANITIZE=1)
#   DEVSHIM_SANITIZE    1: the sanitizer build instead (ASan + UBSan, -O0 -g1; test.sh's second
#                       build, docs/architecture.md#sanitizer-build)
#   DEVSHIM_VENV        Python virtual environment (default: .venv)
#   DEVSHIM_E2E_VENV    the end-to-end tests' interpreter, without torch (default: .venv-e2e;
#                       tests/e2e/requirements.txt says why)
#   DEVSHIM_PYTHON      interpreter that creates the venv (default: python3)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mode=dev
case "${1:-}" in
  "") ;;
  --product) mode=product ;;
  *) echo "setup.sh: unknown argument '$1' (--product, or nothing)" >&2; exit 2 ;;
esac
sanitize="${DEVSHIM_SANITIZE:-0}"
if [ "$sanitize" = 1 ]; then
  build_dir="${DEVSHIM_BUILD_DIR:-$root/build-asan}"
else
  build_dir="${DEVSHIM_BUILD_DIR:-$root/build}"
fi
venv="${DEVSHIM_VENV:-$root/.venv}"
e2e_venv="${DEVSHIM_E2E_VENV:-$root/.venv-e2e}"
base_python="${DEVSHIM_PYTHON:-python3}"

log() { printf 'setup: %s\n' "$*" >&2; }
# Debian 12 and macOS (Homebrew) differ in these two tools' names.
cores() { nproc 2>/dev/null || sysctl -n hw.ncpu; }
sha256() { if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi; }

# Debian packages, one line per reason (docs/architecture.md says why each is there).
apt_packages=(
  build-essential cmake ninja-build pkg-config git
  libboost1.81-dev libboost-filesystem1.81-dev  # Boost.Process v2 + Asio: processes, timers, signals
  nlohmann-json3-dev          # suite.json and report.json
  libsqlite3-dev sqlite3      # the results store (sqlite3 CLI for people and docs)
  libcli11-dev                # runner's command line
  libfmt-dev                  # formatting of messages and progress lines
  libpugixml-dev              # pytest's JUnit XML
)
if [ "$mode" = dev ]; then
  apt_packages+=(
    libgtest-dev libgmock-dev   # C++ unit and end-to-end tests
    clang-format                # the checked-in .clang-format, checked by ctest
    clang-tidy                  # the checked-in .clang-tidy, checked by ctest (new code)
    chromium                    # report.html is tested in real headless Chromium
    strace                      # the installed wheel's test: which files the runner opens
    shellcheck                  # the workflows' scripts, through actionlint (ctest)
  )
fi

# macOS: Homebrew's formulae for the same libraries (docs/install.md#macos). Python 3.11: the
# version torch 2.13.0 and the wheel are built for here. boost@1.85: Boost.Process v2's launcher
# hooks are checked for 1.81 up to 1.89 (runner/engine/process_start.cpp). No clang-format or
# clang-tidy: the lints are Linux's (their checked-in configuration is clang 14's), and ctest
# registers them only where it finds the tools.
brew_packages=(cmake ninja pkg-config boost@1.85 fmt nlohmann-json sqlite cli11 pugixml node
               python@3.11)
[ "$mode" = dev ] && brew_packages+=(googletest)

install_brew_packages() {
  command -v brew >/dev/null || { log "macOS needs Homebrew (https://brew.sh) to install: ${brew_packages[*]}"; exit 1; }
  local missing=() pkg
  for pkg in "${brew_packages[@]}"; do
    brew list --versions "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "installing Homebrew packages: ${missing[*]}"
  brew install "${missing[@]}"
}

install_system_packages() {
  if [ "$(uname -s)" = Darwin ]; then
    install_brew_packages
    # Keg-only formulae: CMake finds them through the environment's CMAKE_PREFIX_PATH (which it
    # searches besides the -D one), the tools through PATH.
    local prefix
    prefix="$(brew --prefix)"
    export CMAKE_PREFIX_PATH="$prefix/opt/boost@1.85${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export PATH="$prefix/opt/python@3.11/bin:$PATH"
    [ -n "${DEVSHIM_PYTHON:-}" ] || base_python=python3.11
  else
    install_apt_packages
  fi
}

install_apt_packages() {
  local missing=()
  local pkg
  for pkg in "${apt_packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
      missing+=("$pkg")
    fi
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root (or sudo) to install: ${missing[*]}"; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The developer's venv: requirements-dev.txt. The product's: torch (pinned there) and what the
# bundled suite imports (suites/cuda-idioms/requirements.txt). A stamp per set says it is in.
install_venv() {
  local stamp="$venv/.devshim-requirements" product_stamp="$venv/.devshim-product"
  local want product_want
  want="$(sha256 < "$root/requirements-dev.txt" | cut -d' ' -f1)"
  product_want="$(cat "$root/requirements-dev.txt" "$root/suites/cuda-idioms/requirements.txt" |
                  sha256 | cut -d' ' -f1)"
  if [ -x "$venv/bin/python" ]; then
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
    [ "$mode" = product ] && [ -f "$product_stamp" ] &&
      [ "$(cat "$product_stamp")" = "$product_want" ] && return 0
  fi
  [ -x "$venv/bin/python" ] || "$base_python" -m venv "$venv"
  local pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
  if [ "$mode" = product ]; then
    local torch
    torch="$(grep -E '^torch==' "$root/requirements-dev.txt")"
    log "installing into $venv: $torch (CPU wheel) and the bundled suite's requirements"
    "${pip[@]}" "$torch" -r "$root/suites/cuda-idioms/requirements.txt"
    printf '%s\n' "$product_want" > "$product_stamp"
  else
    log "installing requirements-dev.txt into $venv (torch==2.13.0, CPU wheel)"
    "${pip[@]}" -r "$root/requirements-dev.txt"
    printf '%s\n' "$want" > "$stamp"
  fi
}

# The end-to-end tests' interpreter (developer's set-up only): tests/e2e/requirements.txt, with
# requirements-dev.txt's pins as constraints, so that its pytest is .venv's. A stamp says it is in.
install_e2e_venv() {
  local stamp="$e2e_venv/.devshim-requirements" want
  want="$(cat "$root/tests/e2e/requirements.txt" "$root/requirements-dev.txt" | sha256 |
          cut -d' ' -f1)"
  [ -x "$e2e_venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
  [ -x "$e2e_venv/bin/python" ] || "$base_python" -m venv "$e2e_venv"
  log "installing tests/e2e/requirements.txt into $e2e_venv (no torch)"
  "$e2e_venv/bin/python" -m pip install -q --disable-pip-version-check \
    -c "$root/requirements-dev.txt" -r "$root/tests/e2e/requirements.txt"
  printf '%s\n' "$want" > "$stamp"
}

# Front-end packages from npm (package.json, package-lock.json): uPlot, which the build inlines
# into `runner site`'s pages, and playwright-core, which drives Chromium in the site's tests.
# The product needs uPlot alone (npm ci --omit=dev); the developer's set-up playwright-core too.
install_npm_packages() {
  local stamp="$root/node_modules/.devshim-lock"
  local want
  want="$(sha256 < "$root/package-lock.json" | cut -d' ' -f1)"
  if [ -f "$stamp" ]; then
    [ "$(cat "$stamp")" = "$want dev" ] && return 0
    [ "$mode" = product ] && [ "$(cat "$stamp")" = "$want product" ] && return 0
  fi
  if ! command -v npm >/dev/null; then
    log "installing Node.js and npm (Debian packages nodejs npm)"
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends nodejs npm
  fi
  local omit=()
  [ "$mode" = product ] && omit=(--omit=dev)
  log "installing npm packages (package-lock.json) into node_modules ${omit[*]}"
  (cd "$root" && npm ci --no-audit --no-fund --loglevel=error "${omit[@]}")
  printf '%s %s\n' "$want" "$mode" > "$stamp"
}

configure_and_build() {
  local generator=() build_type=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEVSHIM_SANITIZE=OFF)
  command -v ninja >/dev/null && generator=(-G Ninja)
  # The product alone builds without debug information: a quarter less time to the first report.
  [ "$mode" = product ] && build_type=(-DCMAKE_BUILD_TYPE=Release -DDEVSHIM_SANITIZE=OFF)
  # The sanitizer build: -O0 compiles in about 60% of the time -O1 takes, and the tests it runs
  # wait on Python more than on devshim's code; -g1 is the line tables the reports' stacks need.
  [ "$sanitize" = 1 ] && build_type=(-DCMAKE_BUILD_TYPE= "-DCMAKE_CXX_FLAGS=-O0 -g1"
                                     -DDEVSHIM_SANITIZE=ON)
  if [ -f "$build_dir/CMakeCache.txt" ]; then
    local cached=0
    grep -q '^DEVSHIM_SANITIZE:BOOL=ON$' "$build_dir/CMakeCache.txt" && cached=1
    if [ "$cached" != "$sanitize" ]; then
      log "$build_dir is configured with DEVSHIM_SANITIZE=$cached, not $sanitize: remove it or" \
          "choose another DEVSHIM_BUILD_DIR"
      exit 1
    fi
    # A folder configured for the product alone gets the tests when the developer's set-up runs.
    if [ "$mode" = dev ] && grep -q '^DEVSHIM_TESTS:BOOL=OFF$' "$build_dir/CMakeCache.txt"; then
      log "adding the tests to $build_dir (DEVSHIM_TESTS=ON, the developer's build type)"
      cmake "$build_dir" -DDEVSHIM_TESTS=ON "${build_type[@]}" >/dev/null
    fi
  else
    log "configuring $build_dir"
    # LibTorch (shim/cpp, suites/libtorch-idioms) is the one inside the venv's torch wheel.
    local torch_prefix tests=ON
    torch_prefix="$("$venv/bin/python" -c 'import torch;print(torch.utils.cmake_prefix_path)')"
    [ "$mode" = product ] && tests=OFF
    cmake -S "$root" -B "$build_dir" "${generator[@]}" "${build_type[@]}" \
      -DDEVSHIM_PYTHON="$venv/bin/python" -DDEVSHIM_E2E_PYTHON="$e2e_venv/bin/python" \
      -DCMAKE_PREFIX_PATH="$torch_prefix" \
      -DDEVSHIM_TESTS="$tests" >/dev/null
  fi
  local targets=()
  [ "$mode" = product ] && targets=(--target runner devshim_probe shim_bytecode)
  cmake --build "$build_dir" --parallel "$(cores)" "${targets[@]}"
}

install_system_packages
install_venv
[ "$mode" = dev ] && install_e2e_venv
install_npm_packages
configure_and_build
