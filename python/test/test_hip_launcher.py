"""The HIP launcher (hip targets) on a machine without an AMD GPU: the real launch path through a fake runtime.
build/lib/libtessel-fake-hip.so (test/FakeHip) stands in for libamdhip64.so (TESSEL_LIBHIP_PATH). It runs nothing,
but it does what the HIP runtime does with a launch: it loads the code object (refusing what is not one for AMDGPU),
finds the kernel, and lays the kernelParams out as the kernel's HSA metadata says (offset and size of each explicit
argument), and it logs that buffer with the grid, the block, the LDS and the stream. The test checks the buffer
against the metadata LLVM wrote in the kernel's AMDGCN and the values passed. Each scenario runs in a child process
(the runtime is loaded once per process, from the environment); this file is also that child's program."""
from __future__ import annotations

import os
import pathlib
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FAKE_RUNTIME = pathlib.Path(os.environ.get("TESSEL_BUILD_DIR", ROOT / "build")) / "lib" / "libtessel-fake-hip.so"


@pytest.fixture
def target():
    """Overrides the suite's per-target fixture: each scenario picks its own target in its child process."""
    return "hip"


def run_scenario(name: str, tmp_path: pathlib.Path, devices: int = 1) -> tuple[str, list[str]]:
    assert FAKE_RUNTIME.exists(), f"{FAKE_RUNTIME} is missing: build the project (scripts/setup.sh)"
    log = tmp_path / "launches.log"
    env = dict(os.environ, TESSEL_LIBHIP_PATH=str(FAKE_RUNTIME), TESSEL_FAKE_HIP_LOG=str(log),
               TESSEL_FAKE_HIP_DEVICES=str(devices), TESSEL_CACHE_DIR=str(tmp_path / "cache"),
               TESSEL_TARGET="hip:gfx942")
    env.pop("TESSEL_CACHE_REMOTE", None)
    result = subprocess.run([sys.executable, __file__, name], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.endswith("ok\n"), \
        f"scenario {name} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout, log.read_text().splitlines() if log.exists() else []


def explicit_args(amdgcn: str) -> list[tuple[int, int, str]]:
    """(offset, size, value_kind) of each explicit argument, from the kernel's metadata in its AMDGCN."""
    block = amdgcn[amdgcn.index("    .args:"):amdgcn.index(".group_segment_fixed_size")]
    args = []
    for item in re.split(r"\n      - ", block)[1:]:
        fields = dict(re.findall(r"\.(\w+):\s+(\S+)", item))
        if not fields["value_kind"].startswith("hidden_"):
            args.append((int(fields["offset"]), int(fields["size"]), fields["value_kind"]))
    return args


def parse_launch(line: str) -> dict:
    name, *fields = line.split()
    out = dict(field.split("=", 1) for field in fields)
    out["name"] = name
    return out


def test_arguments_are_laid_out_as_the_kernel_metadata_says(tmp_path):
    stdout, launches = run_scenario("arguments", tmp_path)
    expected = stdout.splitlines()[:-1]
    assert len(launches) == len(expected) == 2
    for launch, want in zip(launches, expected):
        got = parse_launch(launch)
        want = parse_launch(want)
        assert got == want


def test_no_gpu_is_an_error_at_launch(tmp_path):
    run_scenario("no_gpu", tmp_path, devices=0)


# ---------------------------------------------------------------------------------------------------------------
# The child process.

import tessel  # noqa: E402  (after the fixtures: the child imports this file as its program)
import tessel.language as tl  # noqa: E402


@tessel.jit
def _scalars(out_ptr, a, b, c, d, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = a + b + c.to(tl.int64) + d.to(tl.int64) + flag.to(tl.int64)
    tl.store(out_ptr + offs, tl.full([BLOCK], 0, tl.int64) + v)


class _DeviceArray:
    """An array offering only __cuda_array_interface__ (as GPU arrays of ROCm's CuPy do): the fake runtime's "device
    memory" is host memory."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = {"shape": array.shape, "typestr": array.dtype.str,
                                         "data": (array.ctypes.data, False), "version": 3}


def _expected_line(kernel, grid, values) -> str:
    """What the fake runtime should log for `kernel` launched on `grid` with `values` (one per explicit argument,
    as bytes), laid out at the metadata's offsets."""
    args = explicit_args(kernel.asm["amdgcn"])
    assert len(args) == len(values)
    size = max(offset + n for offset, n, _ in args)
    buffer = bytearray(size)
    for (offset, n, _), value in zip(args, values):
        assert len(value) == n, (offset, n, value)
        buffer[offset:offset + n] = value
    threads = 64 * kernel.metadata.num_warps
    return (f"{kernel.name} grid={grid[0]},{grid[1]},{grid[2]} block={threads},1,1 shared={kernel.metadata.shared}"
            f" stream=(nil) kernarg={buffer.hex()}")


def scenario_arguments():
    out = _DeviceArray(np.zeros(64, np.int64))
    x = _DeviceArray(np.zeros(1000, np.float32))
    lines = []
    kernel = _scalars.warmup(out, 7, 2**40, 2.5, -3, True, BLOCK=64, grid=(1,))
    _scalars[(3, 2)](out, 7, 2**40, 2.5, -3, True, BLOCK=64)
    ptr = struct.pack("<Q", out.array.ctypes.data)
    # a: i32, b: i64, c: fp32 (a Python float), d: i32, flag: i1 (a byte)
    lines.append(_expected_line(kernel, (3, 2, 1), [ptr, struct.pack("<i", 7), struct.pack("<q", 2**40),
                                                    struct.pack("<f", 2.5), struct.pack("<i", -3), b"\x01"]))
    sys.path.insert(0, str(ROOT))
    from bench import gpu_static_kernels as kernels
    add = kernels.add_kernel.warmup(x, x, x, 1000, BLOCK=256, grid=(1,))
    kernels.add_kernel[(4,)](x, x, x, 1000, BLOCK=256)
    xp = struct.pack("<Q", x.array.ctypes.data)
    lines.append(_expected_line(add, (4, 1, 1), [xp, xp, xp, struct.pack("<i", 1000)]))
    print("\n".join(lines))


def scenario_no_gpu():
    out = _DeviceArray(np.zeros(64, np.int64))
    try:
        _scalars[(1,)](out, 7, 2**40, 2.5, -3, True, BLOCK=64)
    except Exception as e:  # noqa: BLE001
        assert "the HIP runtime sees no AMD GPU" in str(e), e
        return
    raise AssertionError("launched without a GPU")


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[1]]()
    print("ok")
