#!/usr/bin/env bash
# Sets up Tessel on a fresh Debian bookworm machine: system packages (LLVM/MLIR
# 22, GoogleTest, ninja, ccache, ROCm's device libraries and HIP headers), a virtual environment at .venv with the
# Python packages, and an incremental build in build/. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

APT_PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools liblld-22-dev
              lld-22 libgtest-dev ninja-build ccache redis-server rocm-device-libs
              libamdhip64-dev)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing system packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -d /usr/lib/llvm-22/lib/cmake/mlir ]; then
  echo "error: MLIR 22 (libmlir-22-dev) is not installed; Tessel needs LLVM/MLIR 22" >&2
  exit 1
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$PY" -m venv .venv
fi
VPY=$ROOT/.venv/bin/python
# torch is pinned: 2.13.0 is the CPU build (a plain `torch` pulls a CUDA build).
# cmake comes from PyPI too, so that every machine configures with the same one;
# scikit-build-core and pybind11 build the package (pyproject.toml).
# triton 3.6.0 is a test-time reference only (its interpreter is the semantic
# oracle of some tests); tessel never imports it.
if ! "$VPY" -c "import numpy, pytest, pybind11, torch, cmake, matplotlib, triton, scikit_build_core" >/dev/null 2>&1; then
  echo "== installing Python packages"
  "$VPY" -m pip install -q --upgrade pip
  "$VPY" -m pip install -q numpy pytest pybind11 cmake matplotlib scikit-build-core "torch==2.13.0" "triton==3.6.0"
fi
# An install of the source tree's python/ written by an earlier setup.
SITE=$("$VPY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
rm -f "$SITE/tessel.pth"

# The package, editable: `pip install -e .` builds in build/ (pyproject.toml), where
# the lit and GoogleTest suites are built too; tessel._C is written next to the
# Python sources, and .venv imports tessel from python/. Later builds are
# incremental (`.venv/bin/cmake --build build`, or this script again).
echo "== building"
export CMAKE_BUILD_PARALLEL_LEVEL=${TESSEL_BUILD_JOBS:-2}
PATH="$ROOT/.venv/bin:$PATH" "$VPY" -m pip install -q --no-build-isolation -e . \
  -Ccmake.define.Python_EXECUTABLE="$VPY"
echo "== setup done: .venv/bin/python imports tessel"
