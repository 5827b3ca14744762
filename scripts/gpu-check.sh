#!/usr/bin/env bash
# Tessel on a machine with an NVIDIA GPU: its kernels (vector add, softmax, layer norm, fp16/bf16 matmul,
# attention forward) run on the GPU against numpy, then timed beside OpenAI Triton 3.6 compiling the same source and
# torch's own operations (cuBLAS for the matmuls); a table last (bench/gpu_check.py). Never part of CI.
#
#   bash scripts/gpu-check.sh                 # on the GPU machine
#   bash scripts/gpu-check.sh --bundle-only   # on a machine with Tessel built: only make the bundle
#
# GPU machines usually have no LLVM/MLIR 22, so Tessel's compiler does not run there. The kernels then come from
# a bundle compiled ahead of time where Tessel is built (cubins and C launchers that need only the CUDA driver):
# build/gpu-bundle-<arch>, which travels with the working tree. Where Tessel imports on the GPU machine itself,
# the bundle is made there first.
#
# Needs on the GPU machine: the NVIDIA driver, cuda.h (CUDA_HOME, default /usr/local/cuda), a C compiler, Python
# with numpy, and torch with CUDA plus Triton 3.6 for the timings. ARCH=80|86|89|90a overrides the architecture
# read from nvidia-smi (default for --bundle-only: 90a).
set -euo pipefail
cd "$(dirname "$0")/.."

BUNDLE_ONLY=0
[ "${1:-}" = "--bundle-only" ] && BUNDLE_ONLY=1

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=.venv/bin/python
HAVE_TESSEL=0
"$PY" -c "import tessel._C" >/dev/null 2>&1 && HAVE_TESSEL=1

ARCH=${ARCH:-}
if [ -z "$ARCH" ]; then
  if command -v nvidia-smi >/dev/null 2>&1; then
    CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
    # Hopper's tensor-core instructions (wgmma) need the arch-specific target.
    if [ "$CAP" = "90" ]; then ARCH=90a; else ARCH=$CAP; fi
  elif [ "$BUNDLE_ONLY" = 1 ]; then
    ARCH=90a
  else
    echo "error: no nvidia-smi: this machine has no NVIDIA GPU (use --bundle-only to make a bundle)" >&2
    exit 1
  fi
fi
BUNDLE=build/gpu-bundle-$ARCH

if [ "$HAVE_TESSEL" = 1 ]; then
  echo "== compiling the kernels for cuda:$ARCH into $BUNDLE"
  rm -rf "$BUNDLE"
  "$PY" -m bench.gpu_check bundle --arch "$ARCH" --out "$BUNDLE"
elif [ ! -f "$BUNDLE/bundle.json" ]; then
  echo "error: Tessel's compiler does not run here and there is no $BUNDLE: run" >&2
  echo "  ARCH=$ARCH bash scripts/gpu-check.sh --bundle-only" >&2
  echo "on a machine with Tessel built (scripts/setup.sh) and bring $BUNDLE along" >&2
  exit 1
fi
[ "$BUNDLE_ONLY" = 1 ] && { echo "== bundle ready: $BUNDLE"; exit 0; }

echo "== GPU: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | head -1)"
"$PY" -m bench.gpu_check run --bundle "$BUNDLE"
