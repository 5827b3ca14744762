"""Arguments the launcher must refuse rather than misuse: read-only arrays the kernel stores to, big-endian arrays,
grids that are not integers. Each is a clear Python exception naming the argument; nothing crashes or is written."""
import mmap
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _scaled_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=m) * 2, mask=m)


@triton.jit
def _sum_into_first(x_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(x_ptr, tl.sum(tl.load(x_ptr + o), 0))


def test_read_only_input_is_accepted(rand):
    src = rand(64, np.float32)
    x = np.frombuffer(src.tobytes(), dtype=np.float32)  # over an immutable bytes object
    assert not x.flags.writeable
    y = np.zeros(64, np.float32)
    _scaled_copy[(1,)](x, y, 64, BLOCK=64)
    np.testing.assert_array_equal(y, src * 2)


def test_read_only_output_is_refused(rand):
    data = rand(64, np.float32).tobytes()
    y = np.frombuffer(data, dtype=np.float32)
    with pytest.raises(ValueError, match="argument 'y_ptr' is a read-only array"):
        _scaled_copy[(1,)](rand(64, np.float32), y, 64, BLOCK=64)
    assert bytes(y.tobytes()) == data  # nothing was written into the bytes object


def test_read_only_array_written_through_the_same_argument(rand):
    x = rand(16, np.float32)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'x_ptr' is a read-only array"):
        _sum_into_first[(1,)](x, N=16)


def test_read_only_mmap_output_is_refused(tmp_path):
    # Writing to a read-only mapping would kill the process (SIGSEGV): it must be an exception instead. Run in a
    # child so that a crash fails this test rather than the whole run.
    path = tmp_path / "data.bin"
    path.write_bytes(np.arange(64, dtype=np.float32).tobytes())
    script = textwrap.dedent(f"""
        import numpy as np, mmap, sys
        sys.path.insert(0, {str(__import__('pathlib').Path(__file__).parent)!r})
        from test_launch_args import _scaled_copy
        with open({str(path)!r}, "rb") as f:
            mem = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            y = np.frombuffer(mem, dtype=np.float32)
            try:
                _scaled_copy[(1,)](np.ones(64, np.float32), y, 64, BLOCK=64)
            except ValueError as e:
                print("refused:", e)
            del y
            mem.close()
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "refused: _scaled_copy: argument 'y_ptr' is a read-only array" in result.stdout
    assert path.read_bytes() == np.arange(64, dtype=np.float32).tobytes()


@pytest.mark.parametrize("dtype", [">f4", ">i4", ">f8", ">i2"])
def test_big_endian_arrays_are_refused(dtype):
    x = np.arange(64).astype(dtype)
    y = np.zeros(64, np.float32)
    with pytest.raises(TypeError, match=r"argument 'x_ptr': big-endian arrays .* native byte order"):
        _scaled_copy[(1,)](x, y, 64, BLOCK=64)
    assert not y.any()


def test_native_order_spelled_explicitly_is_accepted():
    x = np.arange(64).astype("<f4")
    y = np.zeros(64, np.float32)
    _scaled_copy[(1,)](x, y, 64, BLOCK=64)
    np.testing.assert_array_equal(y, np.arange(64) * 2)


@pytest.mark.parametrize("grid", [(2.7,), ("3",), 2.0, (1, 1.0), (None,)])
def test_grid_must_be_integers(grid):
    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    with pytest.raises(TypeError, match="grid dimensions must be integers"):
        _scaled_copy[grid](x, y, 64, BLOCK=16)
    assert not y.any()


@pytest.mark.parametrize("grid", [(2**64,), (1, 2**64), (2**31,), 2**100, (np.uint64(2**64 - 1),)])
def test_grids_past_int32_are_a_value_error(grid):
    """Not pybind11's 'Unable to cast': a ValueError that names the grid."""
    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    with pytest.raises(ValueError, match=r"grid dimensions must fit in int32, got .*" + str(int(
            (grid if isinstance(grid, int) else max(int(g) for g in grid))))):
        _scaled_copy[grid](x, y, 64, BLOCK=16)
    assert not y.any()


@pytest.mark.parametrize("grid", [(4,), 4, (np.int64(4),), (np.int32(4), 1), [4, 1, 1], (triton.language.constexpr(4),),
                                  lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)])
def test_integer_grids(grid):
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    _scaled_copy[grid](x, y, 64, BLOCK=16)
    np.testing.assert_array_equal(y, x * 2)
