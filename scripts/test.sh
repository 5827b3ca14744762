#!/usr/bin/env bash
# Sets up (if needed) and runs every test: lit (IR), GoogleTest (C++ units,
# through ctest), pytest (kernels against numpy) on the source tree, and the
# package as a user installs it (scripts/wheel-check.sh: a wheel in a new
# virtual environment). Exits non-zero if any suite fails; each runner prints
# its own summary.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1

status=0
echo "== lit"
/usr/lib/llvm-22/bin/lit -sv build/test || status=1
echo "== GoogleTest"
.venv/bin/ctest --test-dir build --output-on-failure || status=1
echo "== pytest"
.venv/bin/python -m pytest python/test -q -p no:cacheprovider "$@" || status=1
echo "== wheel"
bash scripts/wheel-check.sh || status=1
exit $status
