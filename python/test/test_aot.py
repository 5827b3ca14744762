"""The ahead-of-time compiler (`python -m tessel.tools.compile`): kernels compiled by the tool, linked into a C
program with the generated launcher, run and compared with numpy; and the command-line errors."""
import hashlib
import importlib.util
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tessel
from tessel.tools import compile as aot

# The kernels the tool compiles, from a file of their own as a user would have them.
KERNELS = '''
import tessel
import tessel.language as tl


@tessel.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tessel.jit
def scale_2d(x_ptr, out_ptr, bias_ptr, M, N, alpha, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out = alpha * x + row index (+ bias[col]): both program ids and both scalars reach the result.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    y = alpha * tl.load(x_ptr + offs, mask=mask) + rows[:, None]
    if bias_ptr is not None:
        y += tl.load(bias_ptr + cols[None, :], mask=mask)
    tl.store(out_ptr + offs, y, mask=mask)


@tessel.jit
def gather(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride, mask=offs < n), mask=offs < n)


@tessel.jit
def transpose_blocks(x_desc, y_desc, BM: tl.constexpr, BN: tl.constexpr):
    # y = x.T through two host-made tensor descriptors: block (i, j) of x lands as block (j, i) of y.
    i, j = tl.program_id(0), tl.program_id(1)
    y_desc.store([j * BN, i * BM], x_desc.load([i * BM, j * BN]).T)


@tessel.autotune(configs=[tessel.Config({"BLOCK": 64}), tessel.Config({"BLOCK": 128})], key=["n"])
@tessel.jit
def copy_tuned(x_ptr, out_ptr, n, DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n).to(DTYPE), mask=offs < n)
'''

# Deterministic inputs both the C program and numpy compute: small multiples of 1/4, exact in fp32.
C_INPUTS = "for (int i = 0; i < {n}; ++i) {{ {x}[i] = (i % 37) * 0.25f - 3; {y}[i] = (i % 11) * 2 - 7; }}"


def inputs(n):
    i = np.arange(n)
    return (i % 37 * 0.25 - 3).astype(np.float32), (i % 11 * 2 - 7).astype(np.float32)


CC = next((cc for cc in ("gcc", "cc", "clang") if shutil.which(cc)), None)
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (gcc, cc or clang) on PATH")


@pytest.fixture(scope="module")
def kernel_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("kernels") / "aot_kernels.py"
    path.write_text(KERNELS)
    return path


# The tool runs as users run it, in a fresh interpreter, which must import the tessel under test.
TOOL_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [str(pathlib.Path(tessel.__file__).parents[1])] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                       if p]))


def run_tool(kernel_file, out_dir, kernel, signature, grid, *options):
    result = subprocess.run(
        [sys.executable, "-m", "tessel.tools.compile", str(kernel_file), "--kernel-name", kernel, "--signature",
         signature, "--grid", grid, "--num-warps", "4", "--target", "cpu", "--out-dir", str(out_dir), *options],
        capture_output=True, text=True, env=TOOL_ENV)
    assert result.returncode == 0, result.stderr


def build_and_run(out_dir, main_c, names, *flags):
    (out_dir / "main.c").write_text(main_c)
    program = out_dir / "prog"
    sources = [f"{name}{suffix}" for name in names for suffix in (".c", ".o")]
    subprocess.run([CC, "-O1", "-Wall", "-Werror", *flags, "main.c", *sources, "-lm", "-o", str(program)],
                   cwd=out_dir, check=True, capture_output=True, text=True)
    result = subprocess.run([str(program)], capture_output=True, text=True, check=True)
    return [np.array(line.split(), dtype=np.float64) for line in result.stdout.splitlines()]


@needs_cc
def test_vector_add_two_specializations_in_one_program(kernel_file, tmp_path):
    run_tool(kernel_file, tmp_path, "add", "*fp32:16, *fp32:16, *fp32:16, i32, 256", "(n + 255) / 256, 1, 1")
    # Another specialization under its own name: its entry and launch functions must not clash with the first.
    # (Its arrays are distinct: ":noalias" says so, as the launcher would.)
    run_tool(kernel_file, tmp_path, "add", "*i32:noalias, *i32:noalias, *i32:noalias, i32, 64",
             "(n + BLOCK - 1) / BLOCK", "--out-name", "add_i32")
    n = 1000  # not a multiple of either block: the mask matters
    main_c = f"""
#include <stdio.h>
#include <stdlib.h>
#include "add.h"
#include "add_i32.h"

int main(void) {{
  /* malloc's 16-byte alignment is what the :16 marks promise. */
  float *x = malloc({n} * sizeof(float)), *y = malloc({n} * sizeof(float));
  float *out = calloc({n} + 1, sizeof(float)), *out_grid = calloc({n}, sizeof(float));
  int32_t *xi = malloc({n} * sizeof(int32_t)), *yi = malloc({n} * sizeof(int32_t));
  int32_t *outi = calloc({n}, sizeof(int32_t));
  {C_INPUTS.format(n=n, x="x", y="y")}
  for (int i = 0; i < {n}; ++i) {{ xi[i] = 3 * i - 500; yi[i] = i * i; }}
  out[{n}] = 42; /* past the end: the mask keeps it */
  add_launch(x, y, out, {n});
  add_launch_grid(({n} + 255) / 256, 1, 1, x, y, out_grid, {n});
  add_i32_launch(xi, yi, outi, {n});
  for (int i = 0; i <= {n}; ++i) printf("%.9g ", out[i]);
  printf("\\n");
  for (int i = 0; i < {n}; ++i) printf("%.9g ", out_grid[i]);
  printf("\\n");
  for (int i = 0; i < {n}; ++i) printf("%d ", outi[i]);
  printf("\\n");
  return 0;
}}
"""
    out, out_grid, outi = build_and_run(tmp_path, main_c, ["add", "add_i32"])
    x, y = inputs(n)
    np.testing.assert_array_equal(out[:n], x + y)
    assert out[n] == 42
    np.testing.assert_array_equal(out_grid, x + y)
    i = np.arange(n)
    np.testing.assert_array_equal(outi, 3 * i - 500 + i * i)

    meta = json.loads((tmp_path / "add.json").read_text())
    assert meta["entry"] == "add_tessel_entry" and meta["kernel_name"] == "add"
    assert meta["signature"] == ["*fp32:16", "*fp32:16", "*fp32:16", "i32", "256"]
    assert meta["arg_names"] == ["x_ptr", "y_ptr", "out_ptr", "n"] and meta["constexprs"] == {"BLOCK": 256}
    assert meta["grid"] == ["(n + 255) / 256", "1", "1"] and meta["num_warps"] == 4
    assert meta["object_sha256"] == hashlib.sha256((tmp_path / "add.o").read_bytes()).hexdigest()
    assert meta["target"]["backend"] == "cpu" and platform.machine() in meta["target"]["triple"]
    assert meta["tessel_version"] == tessel.__version__
    assert json.loads((tmp_path / "add_i32.json").read_text())["entry"] == "add_i32_tessel_entry"


@needs_cc
def test_2d_grid_with_scalar_arguments(kernel_file, tmp_path):
    # bias_ptr is None: compiled out, and absent from the launch functions.
    run_tool(kernel_file, tmp_path, "scale_2d", "*fp32, *fp32, None, i32, i32, fp32, 16, 32",
             "(M + BLOCK_M - 1) / BLOCK_M, (N + BLOCK_N - 1) / BLOCK_N, 1")
    m, n, alpha = 37, 70, 1.5  # neither a multiple of its block: masks on both axes
    main_c = f"""
#include <stdio.h>
#include <stdlib.h>
#include "scale_2d.h"

int main(void) {{
  float *x = malloc({m * n} * sizeof(float)), *unused = malloc({m * n} * sizeof(float));
  float *out = calloc({m * n}, sizeof(float));
  {C_INPUTS.format(n=m * n, x="x", y="unused")}
  scale_2d_launch(x, out, {m}, {n}, {alpha}f);
  for (int i = 0; i < {m * n}; ++i) printf("%.9g ", out[i]);
  printf("\\n");
  return 0;
}}
"""
    x, _ = inputs(m * n)
    expected = np.float32(alpha) * x.reshape(m, n) + np.arange(m, dtype=np.float32)[:, None]
    # The same program serially and with the grid split over threads.
    for flags in ([], ["-DTESSEL_AOT_THREADS", "-pthread"]):
        (out,) = build_and_run(tmp_path, main_c, ["scale_2d"], *flags)
        np.testing.assert_array_equal(out.reshape(m, n), expected, err_msg=" ".join(flags))


@needs_cc
def test_a_runtime_int_given_as_1_is_compiled_in(kernel_file, tmp_path):
    # As launches specialize an int equal to 1 (a unit stride): it is a constant of the kernel, not a C parameter.
    run_tool(kernel_file, tmp_path, "gather", "*fp32, *fp32, i32, 1, 64", "(n + 63) / 64")
    assert "int gather_launch(float *x_ptr, float *out_ptr, int32_t n);" in (tmp_path / "gather.h").read_text()
    assert json.loads((tmp_path / "gather.json").read_text())["constexprs"] == {"stride": 1, "BLOCK": 64}
    n = 300
    main_c = f"""
#include <stdio.h>
#include <stdlib.h>
#include "gather.h"

int main(void) {{
  float *x = malloc({n} * sizeof(float)), *y = malloc({n} * sizeof(float)), *out = calloc({n}, sizeof(float));
  {C_INPUTS.format(n=n, x="x", y="y")}
  gather_launch(x, out, {n});
  for (int i = 0; i < {n}; ++i) printf("%.9g ", out[i]);
  printf("\\n");
  return 0;
}}
"""
    (out,) = build_and_run(tmp_path, main_c, ["gather"])
    np.testing.assert_array_equal(out, inputs(n)[0])


def test_autotuned_kernel_and_header(kernel_file, tmp_path):
    # The signature picks the values autotuning would; a dtype name is a constexpr value.
    argv = [str(kernel_file), "-n", "copy_tuned", "-s", "*fp16:16, *bf16, i64:16, bf16, 64", "-g", "n / 64",
            "-o", str(tmp_path), "--out-name", "copy_f16_bf16"]
    assert aot.main(argv) == 0
    header = (tmp_path / "copy_f16_bf16.h").read_text()
    assert "int copy_f16_bf16_launch(uint16_t *x_ptr, uint16_t *out_ptr, int64_t n);" in header
    assert ("int copy_f16_bf16_launch_grid(int32_t gx, int32_t gy, int32_t gz, uint16_t *x_ptr, uint16_t *out_ptr, "
            "int64_t n);") in header
    meta = json.loads((tmp_path / "copy_f16_bf16.json").read_text())
    assert meta["constexprs"] == {"DTYPE": "bf16", "BLOCK": 64}
    assert meta["arg_types"] == ["*fp16:16", "*bf16", "i64:16"] and meta["entry"] == "copy_f16_bf16_tessel_entry"


@pytest.mark.parametrize("kernel, signature, grid, target, status, message", [
    ("add", "*fp32, *fp32, *fp32, i32", "1", "cpu", 2, "parameter 'BLOCK' has no entry"),
    ("add", "*fp32, *fp32, *fp32, i32, 256, i32", "1", "cpu", 2, "entry 'i32' has no parameter"),
    ("add", "*fp32, *fp32, *fp32, 1000, 256", "1", "cpu", 2, "parameter 'n' is a run-time argument"),
    ("add", "*fp32, *fp32, *fp32, i32, *fp32", "1", "cpu", 2, "parameter 'BLOCK' is tl.constexpr"),
    ("add", "*fp32, *fp32, *f32, i32, 256", "1", "cpu", 2, "parameter 'out_ptr' has the unknown type '*f32'"),
    ("add", "*fp32:8, *fp32, *fp32, i32, 256", "1", "cpu", 2, "the marks are ':16' (a multiple of 16)"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "(m + 255) / 256", "cpu", 2, "uses 'm', which is not a parameter"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "x_ptr", "cpu", 2, "uses 'x_ptr', a pointer argument"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "n; abort()", "cpu", 2, "--grid entry 'n; abort()'"),
    # Grid entries are checked as Python expressions of the integer scalars and constexprs, and the C is made from
    # what was checked: nothing else reaches the launcher.
    ("add", "*fp32, *fp32, *fp32, i32, 256", "(n + 1", "cpu", 2, "--grid entry '(n + 1' is not an expression"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "(n, 2)", "cpu", 2,
     "--grid entry '(n, 2)' is a tuple: write the dimensions without parentheses, \"n, 2\""),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "n = 0", "cpu", 2, "--grid entry 'n = 0' is not an expression"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "n # */ abort();", "cpu", 2, "'#' and '\\' have no place in a grid"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "1, n == 0", "cpu", 2,
     "--grid entry 'n == 0': 'n == 0' is not allowed in a grid"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "n + abs(n)", "cpu", 2, "'abs(n)' is not allowed in a grid"),
    ("scale_2d", "*fp32, *fp32, None, i32, i32, fp32, 16, 32", "M * alpha", "cpu", 2,
     "--grid entry 'M * alpha' uses 'alpha', a fp32 argument: a grid dimension is an integer"),
    ("add", "*fp32, *fp32, *fp32, i32, 0.5", "n * BLOCK", "cpu", 2,
     "uses the constexpr 'BLOCK', whose value 0.5 is not an integer"),
    # Out of range where the tool can tell: never truncated to int32_t.
    ("add", "*fp32, *fp32, *fp32, i32, 256", "1099511627776", "cpu", 2,
     "--grid entry '1099511627776' is 1099511627776 programs along x, more than a launch can run (2147483647)"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "1, BLOCK << 40", "cpu", 2,
     "--grid entry 'BLOCK << 40' is 281474976710656 programs along y"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "n, 1, 65536", "cuda:80", 2,
     "--grid entry '65536' is 65536 programs along z, more than a launch can run (65535)"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "n + 9223372036854775808", "cpu", 2,
     "the integer 9223372036854775808 does not fit in int64_t"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "(n + 255) / (BLOCK - 256)", "cpu", 2,
     "--grid entry '(n + 255) / (BLOCK - 256)': computing it overflows int64_t, divides by 0"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "n * (BLOCK << 55)", "cpu", 2, "computing it overflows int64_t"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "1", "sim:sm_80", 2, "writes no launcher for the sim backend"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "1", "hip:gfx1100", 2, "not a GPU Tessel compiles for"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "1", "tpu", 2, "unknown target"),
    ("add", "*fp32, *fp32, *fp32, i32, 256", "1", "cpu:not-a-cpu", 1, "unknown CPU 'not-a-cpu'"),
    ("nope", "i32", "1", "cpu", 2, "no @tessel.jit function named 'nope'"),
    # The kernel itself is wrong (arange needs a power of 2): a compile error, located in the kernel's source.
    ("add", "*fp32, *fp32, *fp32, i32, 100", "1", "cpu", 1, "aot_kernels.py:8"),
])
def test_errors(kernel_file, tmp_path, capsys, kernel, signature, grid, target, status, message):
    argv = [str(kernel_file), "--kernel-name", kernel, "--signature", signature, "--grid", grid, "--target", target,
            "--out-dir", str(tmp_path)]
    assert aot.main(argv) == status
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written


@needs_cc
def test_another_cpu_model(kernel_file, tmp_path):
    # x86-64-v3 (AVX2, no AVX-512): a build for older machines than this one, which still runs here.
    if platform.machine() != "x86_64":
        pytest.skip("the model named here is an x86-64 one")
    run_tool(kernel_file, tmp_path, "add", "*fp32, *fp32, *fp32, i32, 256", "(n + 255) / 256", "--target",
             "cpu:x86-64-v3")
    meta = json.loads((tmp_path / "add.json").read_text())
    assert meta["target"]["cpu"] == "x86-64-v3"
    assert "+avx512f" not in meta["target"]["features"]
    n = 300
    main_c = f"""
#include <stdio.h>
#include <stdlib.h>
#include "add.h"
int main(void) {{
  float *x = malloc({n} * sizeof(float)), *y = malloc({n} * sizeof(float)), *out = calloc({n}, sizeof(float));
  {C_INPUTS.format(n=n, x="x", y="y")}
  add_launch(x, y, out, {n});
  for (int i = 0; i < {n}; ++i) printf("%.9g ", out[i]);
  printf("\\n");
  return 0;
}}
"""
    (out,) = build_and_run(tmp_path, main_c, ["add"])
    x, y = inputs(n)
    np.testing.assert_array_equal(out, x + y)


@needs_cc
def test_tensor_descriptor_parameters(kernel_file, tmp_path):
    # Each descriptor is passed as its base, sizes and strides (but the last); the ragged edges of a 50 x 70 array
    # in 16 x 32 blocks are masked off. The strides are the arrays' own rows, wider than their used columns.
    run_tool(kernel_file, tmp_path, "transpose_blocks", "tensordesc<fp32[16, 32]>, tensordesc<fp32[32, 16]>, 16, 32",
             "(x_desc_shape0 + 15) / 16, (x_desc_shape1 + 31) / 32")
    header = (tmp_path / "transpose_blocks.h").read_text()
    assert ("int transpose_blocks_launch(float *x_desc_base, int32_t x_desc_shape0, int32_t x_desc_shape1, "
            "int64_t x_desc_stride0, float *y_desc_base, int32_t y_desc_shape0, int32_t y_desc_shape1, "
            "int64_t y_desc_stride0)") in header
    meta = json.loads((tmp_path / "transpose_blocks.json").read_text())
    assert meta["arg_types"] == ["*fp32:16", "i32", "i32", "i64"] * 2
    main_c = """
#include <stdio.h>
#include <stdlib.h>
#include "transpose_blocks.h"

int main(void) {
  float *x = aligned_alloc(16, 50 * 72 * sizeof(float)), *y = aligned_alloc(16, 70 * 52 * sizeof(float));
  for (int i = 0; i < 50 * 72; ++i) x[i] = (i % 97) * 0.5f - 20;
  for (int i = 0; i < 70 * 52; ++i) y[i] = -1;
  transpose_blocks_launch(x, 50, 70, 72, y, 70, 50, 52);
  for (int i = 0; i < 70 * 52; ++i) printf("%.9g ", y[i]);
  printf("\\n");
  return 0;
}
"""
    (out,) = build_and_run(tmp_path, main_c, ["transpose_blocks"])
    x = (np.arange(50 * 72) % 97 * 0.5 - 20).reshape(50, 72)
    want = np.full((70, 52), -1.0)
    want[:, :50] = x[:, :70].T
    np.testing.assert_array_equal(out.reshape(70, 52), want)


def test_tensor_descriptors_on_the_copy_engine(kernel_file, tmp_path):
    # On cuda:90a both descriptors go through TMA: the launcher encodes their tensor maps at each launch from the
    # same arguments (sizes and strides innermost first, strides in bytes) and passes them after the others.
    run_tool(kernel_file, tmp_path, "transpose_blocks", "tensordesc<fp32[16, 32]>, tensordesc<fp32[32, 16]>, 16, 32",
             "(x_desc_shape0 + 15) / 16, (x_desc_shape1 + 31) / 32", "--target", "cuda:90a")
    source = (tmp_path / "transpose_blocks.c").read_text()
    assert source.count("cuTensorMapEncodeTiled(") == 2
    assert "const cuuint64_t dims[] = {(cuuint64_t)x_desc_shape1, (cuuint64_t)x_desc_shape0}, " \
           "strides[] = {(cuuint64_t)x_desc_stride0 * 4};" in source
    assert "const cuuint32_t box[] = {32, 16}" in source and "const cuuint32_t box[] = {16, 32}" in source
    assert "&y_desc_stride0, &tessel_map0, &tessel_map1};" in source
    subprocess.run([CC, "-std=c11", "-O1", "-Wall", "-Werror", "-c", "-I/usr/local/cuda/include",
                    "transpose_blocks.c"], cwd=tmp_path, check=True, capture_output=True, text=True)


@pytest.mark.parametrize("entry,message", [
    ("tensordesc<fp32>", "'tensordesc<fp32>' is not a tensor descriptor type"),
    ("tensordesc<f32[16, 32]>", "is not a tensor descriptor type"),
    ("tensordesc<fp32[16, 24]>", "needs 1 to 5 block dimensions, each a power of 2"),
])
def test_bad_tensor_descriptor_entries(kernel_file, tmp_path, entry, message):
    result = subprocess.run(
        [sys.executable, "-m", "tessel.tools.compile", str(kernel_file), "-n", "transpose_blocks", "-s",
         f"{entry}, tensordesc<fp32[32, 16]>, 16, 32", "-g", "1", "-o", str(tmp_path)],
        capture_output=True, text=True, env=TOOL_ENV)
    assert result.returncode == 2 and message in result.stderr, result.stderr


@pytest.mark.parametrize("grid", ["(n + 1", "(n, 2)", "n = 0", "1099511627776"])
def test_bad_grid_exit_status_of_the_command(kernel_file, tmp_path, grid):
    result = subprocess.run(
        [sys.executable, "-m", "tessel.tools.compile", str(kernel_file), "-n", "add", "-s",
         "*fp32, *fp32, *fp32, i32, 256", "-g", grid, "-o", str(tmp_path)], capture_output=True, text=True,
        env=TOOL_ENV)
    assert result.returncode == 2, result.stderr
    assert f"--grid entry {grid!r}" in result.stderr and "Traceback" not in result.stderr
    assert not list(tmp_path.iterdir())


@needs_cc
def test_grid_floor_division_and_shifts(kernel_file, tmp_path):
    # -(-n // BLOCK) rounds up with Python's floor division (C's / would round -1000 / 256 toward 0, one program
    # short); a shift's > is not a bracket that would keep ", 1" in its entry.
    run_tool(kernel_file, tmp_path, "add", "*fp32, *fp32, *fp32, i32, 256", "-(-n // BLOCK)")
    run_tool(kernel_file, tmp_path, "add", "*fp32, *fp32, *fp32, i32, 256", "(n + 255) >> 8, 1", "--out-name",
             "add_shift")
    assert json.loads((tmp_path / "add_shift.json").read_text())["grid"] == ["(n + 255) >> 8", "1", "1"]
    n = 1000
    main_c = f"""
#include <stdio.h>
#include <stdlib.h>
#include "add.h"
#include "add_shift.h"

int main(void) {{
  float *x = malloc({n} * sizeof(float)), *y = malloc({n} * sizeof(float));
  float *out = calloc({n}, sizeof(float)), *out_shift = calloc({n}, sizeof(float));
  {C_INPUTS.format(n=n, x="x", y="y")}
  if (add_launch(x, y, out, {n}) != 0 || add_shift_launch(x, y, out_shift, {n}) != 0)
    return 1;
  for (int i = 0; i < {n}; ++i) printf("%.9g ", out[i]);
  printf("\\n");
  for (int i = 0; i < {n}; ++i) printf("%.9g ", out_shift[i]);
  printf("\\n");
  return 0;
}}
"""
    out, out_shift = build_and_run(tmp_path, main_c, ["add", "add_shift"])
    x, y = inputs(n)
    np.testing.assert_array_equal(out, x + y)
    np.testing.assert_array_equal(out_shift, x + y)


@needs_cc
def test_a_grid_out_of_range_at_run_time_is_refused(kernel_file, tmp_path):
    # n is an int64_t: (n + 255) / 256 may be more programs than an int32_t holds, and n * n may overflow int64_t.
    # Refused, nothing run, rather than truncated (2^32 + 3 programs would have been 3).
    run_tool(kernel_file, tmp_path, "add", "*fp32, *fp32, *fp32, i64, 256", "(n + 255) / 256")
    run_tool(kernel_file, tmp_path, "add", "*fp32, *fp32, *fp32, i64, 256", "n * n / 256", "--out-name", "add_square")
    assert "int add_launch(float *x_ptr, float *y_ptr, float *out_ptr, int64_t n);" in (tmp_path / "add.h").read_text()
    (tmp_path / "main.c").write_text("""
#include <stdio.h>
#include <stdlib.h>
#include "add.h"
#include "add_square.h"

static float sum(const float *out) {
  float total = 0;
  for (int i = 0; i < 768; ++i) total += out[i];
  return total;
}

int main(void) {
  float *x = malloc(768 * sizeof(float)), *y = malloc(768 * sizeof(float)), *out = calloc(768, sizeof(float));
  for (int i = 0; i < 768; ++i) { x[i] = i; y[i] = 1; }
  int status = add_launch(x, y, out, INT64_C(256) * ((INT64_C(1) << 32) + 3));
  printf("%d %g\\n", status, sum(out));
  status = add_square_launch(x, y, out, INT64_C(1) << 32);
  printf("%d %g\\n", status, sum(out));
  /* More programs than int64_t ids number. */
  status = add_launch_grid(2147483647, 2147483647, 3, x, y, out, 768);
  printf("%d %g\\n", status, sum(out));
  /* An empty grid, however negative, runs nothing and is no error (as int32_t, -2^32 + 3 programs are 3). */
  status = add_launch(x, y, out, -INT64_C(256) * ((INT64_C(1) << 32) - 3) - 255);
  printf("%d %g\\n", status, sum(out));
  status = add_launch(x, y, out, 768);
  printf("%d %g\\n", status, sum(out));
  return 0;
}
""")
    sources = ["main.c", "add.c", "add.o", "add_square.c", "add_square.o"]
    subprocess.run([CC, "-O1", "-Wall", "-Werror", *sources, "-lm", "-o", "prog"], cwd=tmp_path, check=True,
                   capture_output=True, text=True)
    result = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["-1 0", "-1 0", "-1 0", "0 0", f"0 {sum(range(1, 769))}"]
    assert result.stderr.splitlines() == [
        "add_launch: the grid ((n + 255) / 256, 1, 1) is (4294967299, 1, 1) programs, over the limit of 2147483647 "
        "per dimension; nothing ran",
        "add_square_launch: computing the grid (n * n / 256, 1, 1) overflows int64_t, divides by 0 or shifts out of "
        "range; nothing ran",
        "add_launch_grid: a grid of 2147483647 x 2147483647 x 3 programs has more than 2^63 - 1 of them; nothing ran",
    ]


def test_error_exit_status_of_the_command(kernel_file, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "tessel.tools.compile", str(kernel_file), "-n", "add", "-s", "*fp32, i32", "-g", "1",
         "-o", str(tmp_path)], capture_output=True, text=True, env=TOOL_ENV)
    assert result.returncode == 2
    assert "parameter 'out_ptr' has no entry" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("target,arch", [("cuda:80", "sm_80"), ("cuda:90a", "sm_90a")])
def test_cuda_cubin_and_driver_launcher(kernel_file, tmp_path, target, arch):
    # No GPU here: the cubin is checked as ptxas made it and the launcher as C that compiles against cuda.h; the
    # PTX it holds runs in the simulator (test_gpu_backend.py).
    run_tool(kernel_file, tmp_path, "add", "*fp32:16, *fp32:16, *fp32:16, i32, 256", "(n + 255) / 256, 1, 1",
             "--target", target, "--num-warps", "2")
    cubin = (tmp_path / "add.cubin").read_bytes()
    assert cubin.startswith(b"\x7fELF") and b"add" in cubin
    meta = json.loads((tmp_path / "add.json").read_text())
    assert meta["target"]["name"] == target and meta["num_warps"] == 2
    assert meta["object_sha256"] == hashlib.sha256(cubin).hexdigest()
    header = (tmp_path / "add.h").read_text()
    assert "CUresult add_launch(CUstream stream, float *x_ptr" in header
    source = (tmp_path / "add.c").read_text()
    assert "cuLaunchKernel(tessel_function, (unsigned)gx, (unsigned)gy, (unsigned)gz, 64, 1, 1" in source
    (tmp_path / "main.c").write_text(
        '#include "add.h"\n'
        "int main(void) { return add_launch(0, 0, 0, 0, 1000) == CUDA_SUCCESS ? 0 : 1; }\n")
    cuda_include = pathlib.Path("/usr/local/cuda/include")
    assert (cuda_include / "cuda.h").exists(), "the CUDA toolkit's headers are part of the toolchain"
    for src in ("add.c", "main.c"):
        subprocess.run([CC, "-std=c11", "-O1", "-Wall", "-Werror", "-c", f"-I{cuda_include}", src],
                       cwd=tmp_path, check=True, capture_output=True, text=True)
    # The image in the launcher is the cubin, byte for byte.
    first = ", ".join(str(b) for b in cubin[:24])
    assert first in source


@needs_cc
def test_hip_hsaco_and_runtime_launcher(kernel_file, tmp_path):
    # No AMD GPU here: the hsaco is checked as a code object for the chip, the launcher compiles against HIP's
    # header, and a program linked with it launches through the fake HIP runtime (test/FakeHip), which lays the
    # arguments out from the hsaco's own metadata and logs them.
    run_tool(kernel_file, tmp_path, "add", "*fp32:16, *fp32:16, *fp32:16, i32, 256", "(n + 255) / 256, 1, 1",
             "--target", "hip:gfx942", "--num-warps", "2")
    hsaco = (tmp_path / "add.hsaco").read_bytes()
    assert hsaco[:4] == b"\x7fELF" and int.from_bytes(hsaco[18:20], "little") == 224  # EM_AMDGPU
    meta = json.loads((tmp_path / "add.json").read_text())
    assert meta["target"]["name"] == "hip:gfx942" and meta["object_sha256"] == hashlib.sha256(hsaco).hexdigest()
    assert "hipError_t add_launch(hipStream_t stream, float *x_ptr" in (tmp_path / "add.h").read_text()
    source = (tmp_path / "add.c").read_text()
    assert "hipModuleLaunchKernel(tessel_function, (unsigned)gx, (unsigned)gy, (unsigned)gz, 128, 1, 1" in source
    assert ", ".join(str(b) for b in hsaco[:24]) in source  # the image is the hsaco, byte for byte
    (tmp_path / "main.c").write_text(
        '#include "add.h"\n'
        "static float x[1000], y[1000], out[1000];\n"
        "int main(void) { return add_launch(0, x, y, out, 1000) == hipSuccess ? 0 : 1; }\n")
    root = pathlib.Path(__file__).resolve().parents[2]
    fake = pathlib.Path(os.environ.get("TESSEL_BUILD_DIR", root / "build")) / "lib"
    assert (fake / "libtessel-fake-hip.so").exists(), "build the project first"
    subprocess.run([CC, "-std=c11", "-O1", "-Wall", "-Werror", "main.c", "add.c", "-o", "main", f"-L{fake}",
                    "-ltessel-fake-hip", f"-Wl,-rpath,{fake}"], cwd=tmp_path, check=True, capture_output=True,
                   text=True)
    log = tmp_path / "launches.log"
    subprocess.run(["./main"], cwd=tmp_path, check=True, env=dict(os.environ, TESSEL_FAKE_HIP_LOG=str(log)))
    name, grid, block, shared, _stream, kernarg = log.read_text().split()
    assert (name, grid, block, shared) == ("add", "grid=4,1,1", "block=128,1,1", "shared=0")
    words = bytes.fromhex(kernarg.removeprefix("kernarg="))
    assert words[24:28] == (1000).to_bytes(4, "little") and len(words) == 28


@needs_cc
def test_cuda_launcher_refuses_a_grid_out_of_range(kernel_file, tmp_path):
    # No GPU needed: the program defines the four driver functions the launcher calls, and records the launches.
    # Programs are clusters of 2 CTAs: 2^31 - 1 CTAs along x are (2^31 - 1) / 2 programs.
    run_tool(kernel_file, tmp_path, "add", "*fp32:16, *fp32:16, *fp32:16, i64, 256", "(n + 255) / 256, 1, 1",
             "--target", "cuda:90a", "--num-ctas", "2")
    assert "65535" in (tmp_path / "add.h").read_text()
    (tmp_path / "main.c").write_text("""
#include <stdio.h>
#include "add.h"

static int launches;
static unsigned grid[3];

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  *module = (CUmodule)&launches;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  *function = (CUfunction)&launches;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared, CUstream stream, void **params, void **extra) {
  ++launches;
  grid[0] = gx, grid[1] = gy, grid[2] = gz;
  return CUDA_SUCCESS;
}

int main(void) {
  int ok = add_launch(0, NULL, NULL, NULL, 1000) == CUDA_SUCCESS;
  printf("%d %d %u %u %u\\n", ok, launches, grid[0], grid[1], grid[2]);
  /* As int32_t, 2^32 + 3 programs would have been 3. */
  ok = add_launch(0, NULL, NULL, NULL, INT64_C(256) * ((INT64_C(1) << 32) + 3)) == CUDA_ERROR_INVALID_VALUE;
  printf("%d %d\\n", ok, launches);
  /* 2^30 programs are 2^31 CTAs, one too many: times 2 as an unsigned, 2^31 programs would have been 0 CTAs. */
  ok = add_launch(0, NULL, NULL, NULL, INT64_C(256) << 30) == CUDA_ERROR_INVALID_VALUE &&
       add_launch_grid(0, 1073741824, 1, 1, NULL, NULL, NULL, 0) == CUDA_ERROR_INVALID_VALUE &&
       add_launch_grid(0, 1, 65536, 1, NULL, NULL, NULL, 0) == CUDA_ERROR_INVALID_VALUE;
  printf("%d %d\\n", ok, launches);
  ok = add_launch(0, NULL, NULL, NULL, INT64_C(256) * 1073741823) == CUDA_SUCCESS;
  printf("%d %d %u %u %u\\n", ok, launches, grid[0], grid[1], grid[2]);
  return 0;
}
""")
    subprocess.run([CC, "-std=c11", "-O1", "-Wall", "-Werror", "-I/usr/local/cuda/include", "main.c", "add.c", "-o",
                    "prog"], cwd=tmp_path, check=True, capture_output=True, text=True)
    result = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["1 1 8 1 1", "1 1", "1 1", "1 2 2147483646 1 1"]


def test_cuda_launcher_of_a_cluster_program(kernel_file, tmp_path):
    # --num-ctas 2: each program is a cluster of 2 CTAs, so the launcher starts twice the programs along x.
    run_tool(kernel_file, tmp_path, "add", "*fp32:16, *fp32:16, *fp32:16, i32, 256", "(n + 255) / 256, 1, 1",
             "--target", "cuda:90a", "--num-ctas", "2")
    assert json.loads((tmp_path / "add.json").read_text())["num_ctas"] == 2
    source = (tmp_path / "add.c").read_text()
    assert "cuLaunchKernel(tessel_function, (unsigned)gx * 2u, (unsigned)gy, (unsigned)gz, 128, 1, 1" in source
    subprocess.run([CC, "-std=c11", "-O1", "-Wall", "-Werror", "-c", "-I/usr/local/cuda/include", "add.c"],
                   cwd=tmp_path, check=True, capture_output=True, text=True)
    # The cubin asks the driver for clusters of 2 CTAs (cuobjdump ships in Triton's wheel).
    cuobjdump = pathlib.Path(importlib.util.find_spec("triton").origin).parent / "backends/nvidia/bin/cuobjdump"
    elf = subprocess.run([str(cuobjdump), "-elf", str(tmp_path / "add.cubin")], capture_output=True, text=True,
                         check=True).stdout
    assert re.search(r"EIATTR_CTA_PER_CLUSTER\s+Format:\s+EIFMT_SVAL\s+Value:\s+0x2 0x1 0x1", elf)
