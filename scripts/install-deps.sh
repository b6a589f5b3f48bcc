#!/usr/bin/env bash
# Installs the Debian 12 packages tsaot needs to build and test, only if some
# are missing: `apt-get update` once, then one `apt-get install`. Safe to rerun.
# Uses sudo when not run as root.
#
# Not installed here: python3-torch and python3-torchvision. Only
# tests/fixtures/make_fixtures.py (regenerating the committed fixtures) needs
# them; building and testing tsaot does not.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  llvm-16-dev      # LLVMConfig.cmake, libLLVM-16.so, llvm-c/ headers
  llvm-16-tools    # FileCheck, not, count, split-file, lit.py
  clang-16
  libclang-rt-16-dev  # libFuzzer and the sanitizer runtimes (scripts/fuzz.sh)
  libzip-dev libopenblas-dev libdlpack-dev
  python3          # /usr/bin/python3 runs lit
  python3-numpy    # ../shared/tools/conformance
  qemu-user        # qemu-x86_64 -cpu Nehalem/Haswell: ctest portable.nehalem (skipped without it)
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  if [ "$status" != "installed" ]; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; install these Debian 12 packages: ${missing[*]}" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: not root and no sudo; as root run: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  sudo=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
