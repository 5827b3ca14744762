"""tl.debug_barrier (threads of a program exchanging values through global memory) and tl.broadcast, on every
target, against numpy."""
import re

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _exchange(x_ptr, buf_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(buf_ptr + offs, tl.load(x_ptr + offs) * 2)
    tl.debug_barrier()
    # Each element written by another thread of the program (on a GPU), read after the barrier.
    tl.store(out_ptr + offs, tl.load(buf_ptr + (N - 1 - offs)))


@pytest.mark.parametrize("N", [32, 1024])
def test_debug_barrier_orders_a_programs_threads(rng, N, target):
    x = rng.standard_normal(N).astype(np.float32)
    buf, out = np.zeros(N, np.float32), np.zeros(N, np.float32)
    kernel = _exchange[(1,)](x, buf, out, N)
    np.testing.assert_array_equal(out, (x * 2)[::-1])
    if target.startswith("sim:sm"):
        ptx = kernel.asm["ptx"]
        store = ptx.index("st.global")
        assert "bar.sync" in ptx[store:ptx.rindex("ld.global")]
    elif target.startswith("sim:gfx"):
        amdgcn = kernel.asm["amdgcn"]
        store = re.search(r"(global|buffer)_store", amdgcn).start()
        load = max(m.start() for m in re.finditer(r"(global|buffer)_load", amdgcn))
        assert "s_barrier" in amdgcn[store:load]


@triton.jit
def _broadcast(a_ptr, b_ptr, oa_ptr, ob_ptr, M: tl.constexpr, N: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, N))[None, :]  # [1, N]
    b = tl.load(b_ptr + tl.arange(0, M))[:, None]  # [M, 1]
    x, y = tl.broadcast(a, b)
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(oa_ptr + offs, x)
    tl.store(ob_ptr + offs, y)


def test_broadcast(rng):
    a, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    oa, ob = np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32)
    _broadcast[(1,)](a, b, oa, ob, 8, 16)
    np.testing.assert_array_equal(oa, np.broadcast_to(a, (8, 16)))
    np.testing.assert_array_equal(ob, np.broadcast_to(b[:, None], (8, 16)))


@triton.jit
def _broadcast_bad(a_ptr):
    x, y = tl.broadcast(tl.load(a_ptr + tl.arange(0, 8)), tl.load(a_ptr + tl.arange(0, 4)))
    tl.store(a_ptr + tl.arange(0, 8), x)


def test_incompatible_shapes():
    with pytest.raises(triton.CompilationError) as info:
        _broadcast_bad[(1,)](np.zeros(8, np.float32))
    assert "incompatible dimensions at index 0: 8 and 4" in str(info.value)
