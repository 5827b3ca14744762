#!/usr/bin/env bash
# Tessel as a Python package, as a user installs it: `pip wheel .` makes a wheel
# (an incremental build in build/, after scripts/setup.sh), a new virtual
# environment installs it with numpy, and from outside the source tree it runs
# tutorial 01, reports the same version through tessel.__version__ and
# importlib.metadata, runs the packaged tools, and passes part of the test suite
# against the installed package. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VPY=$ROOT/.venv/bin/python
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "== pip wheel ."
PATH="$ROOT/.venv/bin:$PATH" CMAKE_BUILD_PARALLEL_LEVEL=${TESSEL_BUILD_JOBS:-2} \
  "$VPY" -m pip wheel -q --no-build-isolation --no-deps . -w "$WORK/dist" \
  -Ccmake.define.Python_EXECUTABLE="$VPY"
WHEEL=$(ls "$WORK"/dist/tessel-*.whl)
echo "built $(basename "$WHEEL")"

echo "== a new virtual environment: the wheel and numpy"
"$VPY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q "$WHEEL"

cp tutorials/01-vector-add.py "$WORK/"
cd "$WORK"
WPY=$WORK/venv/bin/python
"$WPY" - <<'PY'
import importlib.metadata as metadata
import pathlib
import tessel
where = pathlib.Path(tessel.__file__).resolve()
assert "site-packages" in where.parts, f"tessel imported from {where}, not the installed wheel"
assert metadata.version("tessel") == tessel.__version__, (metadata.version("tessel"), tessel.__version__)
print("tessel", tessel.__version__, "from", where.parent)
PY
"$WPY" 01-vector-add.py
"$WORK/venv/bin/tessel-opt" --version > tool.txt
grep -q "LLVM version 22" tool.txt
# Without arguments the simulator says how to call it (and exits non-zero).
"$WORK/venv/bin/tessel-gpusim" > tool.txt 2>&1 || true
grep -q "usage: tessel-gpusim" tool.txt
echo "tessel-opt and tessel-gpusim run"

echo "== tests against the installed package"
"$WPY" -m pip install -q pytest
# Kernels on the CPU backend (dots, the backend's own tests, specialization), the kernel cache and the package
# (metadata, cache key, tools), run by the
# wheel's tessel (the source tree's python/ is not on the path).
TESSEL_TARGET=cpu "$WPY" -m pytest -q -p no:cacheprovider "$ROOT/python/test/test_dot.py" \
  "$ROOT/python/test/test_cpu_backend.py" "$ROOT/python/test/test_specialization.py" \
  "$ROOT/python/test/test_cache.py" "$ROOT/python/test/test_package.py"
