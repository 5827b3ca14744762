"""Resources of the benchmark kernels (bench/gpu_static_kernels.py: the tutorials' vector add, softmax and layer
norm, a tiled matmul, attention forward) as ptxas reports them for sm_80 and sm_90a: no spills to local memory, and
16-byte global accesses where the data is contiguous. Nothing runs here; test_gpu_backend.py runs these kernels in
the simulator against numpy."""
import re
import sys
import pathlib

import numpy as np
import pytest

from tessel import knobs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from bench import gpu_static_kernels as kernels  # noqa: E402

F32, F16 = np.dtype(np.float32), np.dtype(np.float16)

KERNELS = {
    "vector_add": lambda: kernels.add_kernel.warmup(F32, F32, F32, 1 << 16, BLOCK=1024, grid=(1,)),
    "softmax": lambda: kernels.softmax_kernel.warmup(F32, F32, 1024, 1024, 1024, BLOCK=1024, grid=(1,)),
    "layer_norm": lambda: kernels.layer_norm_fwd.warmup(F32, F32, F32, F32, F32, F32, 1024, 1024, 1e-5,
                                                         BLOCK_SIZE=1024, grid=(1,)),
    "matmul": lambda: kernels.matmul_kernel.warmup(F16, F16, F16, 256, 256, 256, 256, 1, 256, 1, 256, 1,
                                                   BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, grid=(1,)),
    "attention": lambda: kernels.attn_fwd.warmup(F16, F16, F16, F16, 0.125, 128, HEAD_DIM=64, BLOCK_M=64,
                                                 BLOCK_N=32, grid=(1,)),
}
# Kernels that still spill on a target (a known gap; none now).
SPILLS_LEFT: set[tuple[str, str]] = set()


@pytest.fixture(params=["cuda:80", "cuda:90a"])
def target(request, monkeypatch):
    """Overrides the suite's per-target fixture: compiled for each GPU (ptxas), whatever the suite's targets."""
    monkeypatch.setattr(knobs, "target", request.param)
    return request.param


@pytest.mark.parametrize("name", KERNELS)
def test_no_spills(target, name):
    report = KERNELS[name]().asm["ptxas"]
    stores, loads = map(int, re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report).groups())
    if (name, target) in SPILLS_LEFT:
        assert stores + loads > 0, f"{name} on {target} no longer spills: drop it from SPILLS_LEFT"
    else:
        assert stores == loads == 0, report


# tl.dot's B given K-contiguous: the matmul of a column-major B (stride_bk 1).
COLUMN_MAJOR_B = lambda: kernels.matmul_kernel.warmup(F16, F16, F16, 256, 256, 256, 256, 1, 1, 256, 256, 1,  # noqa: E731
                                                      BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, grid=(1,))


@pytest.mark.parametrize("name", ["attention", "column_major_b"])
def test_k_contiguous_b_is_copied_16_bytes_at_a_time(target, name):
    # Attention's K block is loaded as [HEAD_DIM, BLOCK_N] (addresses contiguous along dimension 0), the matmul's B
    # from a column-major matrix: lanes run down the contiguous dimension, and the pipeline copies both operands
    # with 16-byte cp.async (two per thread and operand, at the prologue's two iterations and in the loop) into
    # slots that hold B transposed, K-major, as Triton does (its 12 LDGSTS).
    kernel = COLUMN_MAJOR_B() if name == "column_major_b" else KERNELS[name]()
    ptx = kernel.asm["ptx"]
    copies = re.findall(r"cp\.async\.c[ag]\.shared\.global[^;]*", ptx)
    assert len(copies) == 12 and all(re.search(r", 16(, %r\d+)?$", c) for c in copies), copies
    assert not re.search(r"ld\.global(\.nc)?\.(b16|u16)", ptx), "a 2-byte load of a contiguous operand"
    if target == "cuda:80" and name == "column_major_b":
        # mma.sync reads both operands K-major: ldmatrix without .trans.
        assert "ldmatrix.sync.aligned" in ptx and ".trans" not in ptx


@pytest.mark.parametrize("name", ["vector_add", "softmax", "layer_norm"])
def test_contiguous_accesses_are_16_bytes(target, name):
    ptx = KERNELS[name]().asm["ptx"]
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx
    assert not re.search(r"ld\.global\.b32", ptx), "a scalar global load in a kernel whose accesses are contiguous"



def test_matmul_shared_addresses_take_constants_as_immediates(target):
    # The swizzled offsets of the matmul's slots are the thread's part XOR a constant per copy, tile or K step; the
    # constant's bits the thread's part cannot have are an immediate of the address. In the K loop, the cp.async of
    # each operand share one address register, and on mma.sync the ldmatrix take one per K step for A (its row tiles
    # 32 rows apart) and one per column tile for B (its K steps 16 rows apart), as in Triton's code, instead of one
    # register per matrix, kept live across the loop. wgmma (sm_90a) reads the slots through descriptors.
    ptx = KERNELS["matmul"]().asm["ptx"]
    start, end = (re.search(rf"cp\.async\.wait_group\s+{n};", ptx) for n in (1, 0))
    loop = ptx[start.end():end.start()]
    copies = re.findall(r"cp\.async\.cg\.shared\.global \[(%r\d+)", loop)
    assert len(copies) == 4 and len(set(copies)) == 2, copies
    ldmatrix = re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x\d(\.trans)?\.shared\.b16 \{[^}]*\}, \[(%r\d+)", loop)
    a = {reg for trans, reg in ldmatrix if not trans}
    b = {reg for trans, reg in ldmatrix if trans}
    want = {"cuda:80": (12, 2, 4), "cuda:90a": (0, 0, 0)}[target]
    assert (len(ldmatrix), len(a), len(b)) == want, ldmatrix


TRUNCATING_SCRIPT = """
import resource
import signal
import numpy as np
import tessel
import tessel.language as tl


@tessel.jit
def copy(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs))


# Every file from now on stops at 2500 bytes: the PTX (about 1 KB) fits, the cubin (over 3 KB) does not, and
# ptxas reports success all the same.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (2500, 2500))
x = np.zeros(128, np.float32)
try:
    copy.warmup(x, x, BLOCK=128, grid=(1,))
except Exception as e:
    print("error", type(e).__name__, e)
"""


def test_a_cubin_ptxas_could_not_write_whole_is_an_error(target, tmp_path):
    import os
    import subprocess
    script = tmp_path / "truncating.py"
    script.write_text(TRUNCATING_SCRIPT)
    env = dict(os.environ, TESSEL_TARGET=target, TESSEL_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(sys.path), PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("error BackendError ptxas wrote an incomplete cubin (2500 bytes of "), p.stdout
    assert "is the disk full?" in p.stdout


@pytest.mark.parametrize("name", ["matmul", "column_major_b", "attention"])
def test_warpgroup_mmas_stay_in_flight(target, name):
    # On sm_90a a K loop whose wgmma accumulates straight into its loop-carried sums keeps one group of MMAs in
    # flight (wgmma.wait_group 1, the last ones retired after the loop), as Triton does; attention reads its sums
    # in the loop (the online softmax rescales them), so it waits for each dot. ptxas finds nothing reading the
    # accumulators early: no wait it had to inject, no MMAs it had to serialize.
    kernel = COLUMN_MAJOR_B() if name == "column_major_b" else KERNELS[name]()
    ptx, report = kernel.asm["ptx"], kernel.asm["ptxas"]
    waits = re.findall(r"wgmma\.wait_group\.sync\.aligned\s+(\d+);", ptx)
    if target == "cuda:80":
        assert not waits and "mma.sync.aligned" in ptx
    elif name == "attention":
        assert waits == ["0", "0"], waits
    else:
        assert waits == ["1", "0"], waits
    assert "injected" not in report and "serialized" not in report, report
