"""The CUDA launcher (cuda targets) on a machine without a GPU: the real launch path through a fake driver.

build/lib/libtessel-fake-cuda.so (test/FakeCuda) stands in for libcuda.so.1 (TESSEL_LIBCUDA_PATH): its "device
memory" is host memory it allocated, and it runs a module's PTX in Tessel's PTX simulator at cuLaunchKernel. So the
launcher's driver loading, contexts, modules, shared-memory opt-in, argument passing, streams and errors all run
for real, and every result is checked against numpy. Each scenario runs in a child process (the driver is loaded
once per process, from the environment); this file is also that child's program.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FAKE_DRIVER = pathlib.Path(os.environ.get("TESSEL_BUILD_DIR", ROOT / "build")) / "lib" / "libtessel-fake-cuda.so"


@pytest.fixture
def target():
    """Overrides the suite's per-target fixture: each scenario picks its own target in its child process."""
    return "cuda"


def run_scenario(name: str, tmp_path: pathlib.Path, capability: int = 80, ptx: bool = True,
                 target: str = "cuda:80") -> str:
    assert FAKE_DRIVER.exists(), f"{FAKE_DRIVER} is missing: build the project (scripts/setup.sh)"
    env = dict(os.environ, TESSEL_LIBCUDA_PATH=str(FAKE_DRIVER), TESSEL_FAKE_CUDA_CAPABILITY=str(capability),
               TESSEL_CACHE_DIR=str(tmp_path / "cache"), TESSEL_TARGET=target)
    env.pop("TESSEL_CACHE_REMOTE", None)
    if ptx:  # no ptxas: the kernel's binary is its PTX, which the (fake) driver compiles, here: simulates
        env["TESSEL_PTXAS_PATH"] = str(tmp_path / "no-ptxas")
    result = subprocess.run([sys.executable, __file__, name], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.endswith("ok\n"), \
        f"scenario {name} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_vector_add_on_cuda_array_interface_arrays(tmp_path):
    run_scenario("vector_add", tmp_path)


def test_torch_like_cuda_tensors_and_the_stream(tmp_path):
    run_scenario("tensors_and_stream", tmp_path)


def test_host_arrays_are_refused_naming_the_argument(tmp_path):
    run_scenario("host_array", tmp_path)


def test_more_than_48k_of_shared_memory(tmp_path):
    run_scenario("big_shared", tmp_path)


def test_shared_memory_over_the_gpus_limit(tmp_path):
    run_scenario("shared_over_limit", tmp_path, capability=86)


def test_code_for_another_architecture_is_refused(tmp_path):
    run_scenario("wrong_arch", tmp_path)


def test_cubins_are_loaded(tmp_path):
    run_scenario("cubin", tmp_path, ptx=False)


def test_grids_and_errors_during_the_launch(tmp_path):
    run_scenario("grids_and_faults", tmp_path)


def test_dlpack_device_arrays(tmp_path):
    run_scenario("dlpack", tmp_path)


def test_host_tensor_descriptors_of_device_arrays(tmp_path):
    run_scenario("descriptors", tmp_path)


def test_tensor_maps_encoded_by_the_driver(tmp_path):
    # On sm_90a the descriptor loads run on TMA: the launcher encodes each tensor map with cuTensorMapEncodeTiled
    # and passes it after the runtime arguments.
    run_scenario("descriptors", tmp_path, capability=90, target="cuda:90a")


def test_programs_of_several_ctas_launch_clusters(tmp_path):
    # num_ctas=2 on sm_90a: each program is a cluster of 2 CTAs, so the launcher starts twice the programs along x.
    run_scenario("clusters", tmp_path, capability=90, target="cuda:90a")


def test_device_properties_come_from_the_driver(tmp_path):
    run_scenario("properties", tmp_path, capability=90)


def test_dlpack_arrays(rng, monkeypatch):
    """DLPack producers (numpy here) on the CPU target; a DLPack array on a GPU is refused there."""
    from tessel import knobs
    monkeypatch.setattr(knobs, "target", "cpu")
    x, y = rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32)
    out = np.zeros(300, np.float32)
    _add[(3,)](_DLPackOnly(x), _DLPackOnly(y), _DLPackOnly(out), 300, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)
    with pytest.raises(RuntimeError, match="argument 'y_ptr' is in GPU memory"):
        _add[(3,)](x, _DLPackOnly(y, device=(2, 0)), out, 300, BLOCK=128)


class _DLPackOnly:
    """An array that offers only DLPack (its capsule from numpy)."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.device


# ---------------------------------------------------------------------------------------------------------------
# The child process: kernels, device arrays through the fake driver's memory API, and the scenarios.

import tessel  # noqa: E402  (after the fixtures: the child imports this file as its program)
import tessel.language as tl  # noqa: E402

sys.path.insert(0, str(ROOT))
from bench.gpu_check import Driver  # noqa: E402


@tessel.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tessel.jit
def _transpose(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + cols[:, None] * M + rows[None, :], tl.trans(x))


@tessel.jit
def _scale_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0) * 4 + tl.program_id(1) * 2 + tl.program_id(2)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + cols, v * (row + 1), mask=cols < n_cols)


@tessel.jit
def _unmasked_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


class _Driver(Driver):
    """The fake driver through the GPU check's ctypes wrapper of the driver API, and the fake's own record of the
    launches."""

    def __init__(self):
        super().__init__(os.environ["TESSEL_LIBCUDA_PATH"])
        self.lib.tesselFakeCudaLastStream.restype = ctypes.c_uint64

    def launches(self) -> int:
        return self.lib.tesselFakeCudaLaunchCount()

    def last_dims(self) -> list[int]:
        dims = (ctypes.c_uint * 6)()
        self.lib.tesselFakeCudaLastDims(dims)
        return list(dims)


class DeviceArray:
    """A GPU array as CuPy or Numba presents one: `__cuda_array_interface__`, memory from cuMemAlloc."""

    def __init__(self, driver: _Driver, host: np.ndarray):
        self.driver, self.shape, self.dtype = driver, host.shape, host.dtype
        self.pointer = driver.to_device(host)
        self.__cuda_array_interface__ = {"shape": host.shape, "typestr": host.dtype.str,
                                         "data": (self.pointer, False), "version": 3, "strides": None}

    def numpy(self) -> np.ndarray:
        return self.driver.to_host(self.pointer, np.empty(self.shape, self.dtype))


class TorchLikeTensor(DeviceArray):
    """A CUDA tensor as torch presents one to a launcher: data_ptr(), dtype, is_cuda, shape and stride()."""
    is_cuda, is_cpu = True, False

    def __init__(self, driver, host):
        super().__init__(driver, host)
        del self.__cuda_array_interface__

    def data_ptr(self) -> int:
        return self.pointer

    def stride(self):
        return tuple(s // self.dtype.itemsize for s in np.empty(self.shape, self.dtype).strides)


class DLPackDeviceArray:
    """A GPU array offering only DLPack: a DLManagedTensor (dlpack.h's layout, built here with ctypes) in a
    "dltensor" capsule whose DLTensor points into fake GPU memory, kDLCUDA."""

    class _Tensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                    ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64),
                    ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

    def __init__(self, driver, host, offset_elements=0):
        self.device = DeviceArray(driver, host)
        n = host.size - offset_elements
        self.shape = (ctypes.c_int64 * 1)(n)
        code = {"f": 2, "i": 0, "u": 1}[host.dtype.kind]
        self.tensor = self._Tensor(self.device.pointer, 2, 0, 1, code, host.dtype.itemsize * 8, 1, self.shape, None,
                                   offset_elements * host.dtype.itemsize, None, None)

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, GPU 0

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.tensor), b"dltensor", None)


def _rng():
    return np.random.default_rng(1234)


def scenario_vector_add():
    driver = _Driver()
    x, y = _rng().standard_normal(1000).astype(np.float32), _rng().standard_normal(1000).astype(np.float32) * 3
    dx, dy, dout = DeviceArray(driver, x), DeviceArray(driver, y), DeviceArray(driver, np.zeros(1000, np.float32))
    kernel = _add[(8,)](dx, dy, dout, 1000, BLOCK=128)
    assert kernel.target == "cuda:80"
    np.testing.assert_array_equal(dout.numpy(), x + y)
    assert driver.launches() == 1 and driver.last_dims() == [8, 1, 1, 128, 1, 1]
    _add[(4,)](dx, dy, dout, 1000, BLOCK=256, num_warps=2)  # another specialization: 64 threads
    assert driver.launches() == 2 and driver.last_dims() == [4, 1, 1, 64, 1, 1]
    np.testing.assert_array_equal(dout.numpy(), x + y)


def scenario_tensors_and_stream():
    from tessel.runtime import driver as tessel_driver
    assert tessel_driver.current_stream() == 0  # torch has not started CUDA (here it cannot)
    tessel_driver.current_stream = lambda: 0x5EED  # the stream a CUDA torch would give
    driver = _Driver()
    x = _rng().integers(-100, 100, 500).astype(np.int32)
    dx, dout = TorchLikeTensor(driver, x), TorchLikeTensor(driver, np.zeros(500, np.int32))
    for _ in range(2):  # the second launch reads the tensors without calling Python
        _add[(2,)](dx, dx, dout, 500, BLOCK=256)
        np.testing.assert_array_equal(dout.numpy(), 2 * x)
        assert driver.lib.tesselFakeCudaLastStream() == 0x5EED
    assert driver.launches() == 2


@tessel.jit
def _descriptor_copy(X, Y, BM: tl.constexpr, BN: tl.constexpr):
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    Y.store([om, on], X.load([om, on]) + 1)


@tessel.jit
def _descriptor_matmul(A, B, C, K, BK: tl.constexpr):
    acc = tl.zeros([64, 64], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(A.load([0, k * BK]), B.load([0, k * BK]).T, acc)
    C.store([0, 0], acc)


def scenario_descriptors():
    # Host-side descriptors over device arrays: a torch-like tensor (data_ptr) and a __cuda_array_interface__
    # array, describing a 30 x 50 view of 32 x 64 arrays. Then a matmul whose K-major operands, on sm_90a, the copy
    # engine pipelines through tensor maps with a 128-byte swizzle (encoded by the driver with it).
    from tessel.tools.tensor_descriptor import TensorDescriptor
    driver = _Driver()
    x = _rng().standard_normal((32, 64)).astype(np.float32)
    dx, dout = TorchLikeTensor(driver, x), DeviceArray(driver, np.zeros((32, 64), np.float32))
    kernel = _descriptor_copy[(2, 2)](TensorDescriptor(dx, [30, 50], [64, 1], [16, 32]),
                                      TensorDescriptor(dout, [30, 50], [64, 1], [16, 32]), BM=16, BN=32)
    want = np.zeros_like(x)
    want[:30, :50] = x[:30, :50] + 1
    np.testing.assert_array_equal(dout.numpy(), want)
    assert ("cp.async.bulk.tensor" in kernel.asm["ptx"]) == (kernel.target == "cuda:90a")
    a = _rng().integers(-3, 4, (64, 256)).astype(np.float16)
    b = _rng().integers(-3, 4, (64, 256)).astype(np.float16)
    da, db = DeviceArray(driver, a), DeviceArray(driver, b)
    dc = DeviceArray(driver, np.zeros((64, 64), np.float32))
    kernel = _descriptor_matmul[(1,)](TensorDescriptor(da, [64, 256], [256, 1], [64, 64]),
                                      TensorDescriptor(db, [64, 256], [256, 1], [64, 64]),
                                      TensorDescriptor(dc, [64, 64], [64, 1], [64, 64]), 256, BK=64, num_stages=3)
    np.testing.assert_array_equal(dc.numpy(), a.astype(np.float64) @ b.astype(np.float64).T)
    swizzled = [line for line in kernel.asm["launch"].splitlines() if line.endswith(" 64x64 128")]
    assert len(swizzled) == (2 if kernel.target == "cuda:90a" else 0)


def scenario_host_array():
    driver = _Driver()
    x = np.ones(64, np.float32)
    dout = DeviceArray(driver, np.zeros(64, np.float32))
    try:
        _add[(1,)](DeviceArray(driver, x), x, dout, 64, BLOCK=64)
    except RuntimeError as e:
        assert "argument 'y_ptr' is not memory the GPU can address" in str(e), e
        assert "_add" in str(e), e
    else:
        raise AssertionError("a host array reached the GPU")
    assert driver.launches() == 0


def scenario_big_shared():
    # A 128x128 fp32 transpose goes through 64 KiB of shared memory: more than the 48 KiB a kernel gets without
    # opting in (the fake driver, like the real one, refuses the launch otherwise).
    driver = _Driver()
    x = _rng().standard_normal((128, 128)).astype(np.float32)
    dx, dout = DeviceArray(driver, x), DeviceArray(driver, np.zeros((128, 128), np.float32))
    kernel = _transpose[(1,)](dx, dout, M=128, N=128, num_warps=8)
    shared = int(kernel.asm["launch"].split("shared=")[1].split()[0])
    assert shared > 48 * 1024 and driver.lib.tesselFakeCudaLastShared() == shared
    np.testing.assert_array_equal(dout.numpy(), x.T)


def scenario_shared_over_limit():
    # Compiled for sm_80 (163 KiB per program), run on an sm_86 GPU (99 KiB): refused when loaded there.
    driver = _Driver()
    x = np.zeros((256, 128), np.float32)
    dx, dout = DeviceArray(driver, x), DeviceArray(driver, x)
    try:
        _transpose[(1,)](dx, dout, M=256, N=128, num_warps=8)
    except RuntimeError as e:
        assert "bytes of shared memory per program, more than this sm_86 GPU allows" in str(e), e
    else:
        raise AssertionError("the launch went through")


def scenario_wrong_arch():
    from tessel import knobs
    knobs.target = "cuda:90a"
    driver = _Driver()
    x = DeviceArray(driver, np.ones(16, np.float32))
    try:
        _add[(1,)](x, x, x, 16, BLOCK=16)
    except RuntimeError as e:
        assert "compiled for cuda:90a and cannot run on this sm_80 GPU: compile it for cuda:80" in str(e), e
    else:
        raise AssertionError("sm_90a code ran on sm_80")


def scenario_cubin():
    # ptxas made a cubin: the driver loads it and finds the kernel in it; the fake cannot run SASS, and says so.
    driver = _Driver()
    x = DeviceArray(driver, np.ones(16, np.float32))
    kernel = _add.warmup(x, x, x, 16, BLOCK=16, grid=(1,))
    assert "ptxas" in kernel.asm
    try:
        _add[(1,)](x, x, x, 16, BLOCK=16)
    except RuntimeError as e:
        assert "cuLaunchKernel: CUDA_ERROR_NOT_SUPPORTED (operation not supported (the fake driver runs PTX only))" \
            in str(e), e
    else:
        raise AssertionError("the fake driver ran a cubin")


def scenario_grids_and_faults():
    driver = _Driver()
    x = _rng().standard_normal((8, 40)).astype(np.float32)
    dx, dout = DeviceArray(driver, x), DeviceArray(driver, np.zeros((8, 40), np.float32))
    _scale_rows[(2, 2, 2)](dx, dout, 40, BLOCK=64)  # a 3-D grid
    np.testing.assert_allclose(dout.numpy(), x * np.arange(1, 9, dtype=np.float32)[:, None], rtol=1e-6)
    assert driver.last_dims()[:3] == [2, 2, 2]
    count = driver.launches()
    _scale_rows[(0, 2, 2)](dx, dout, 40, BLOCK=64)  # an empty grid launches nothing
    assert driver.launches() == count
    try:
        _scale_rows[(1, 70000, 1)](dx, dout, 40, BLOCK=64)
    except RuntimeError as e:
        assert "exceeds what CUDA launches" in str(e), e
    else:
        raise AssertionError("a grid of 70000 along axis 1 was launched")
    small = DeviceArray(driver, np.ones(16, np.float32))
    try:  # reads and writes 64 elements of 16-element arrays: the simulated GPU faults
        _unmasked_copy[(1,)](small, small, BLOCK=64)
    except RuntimeError as e:
        assert "kernel _unmasked_copy: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED" in str(e), e
    else:
        raise AssertionError("the out-of-bounds access went unnoticed")


def scenario_clusters():
    driver = _Driver()
    x, y = _rng().standard_normal(1000).astype(np.float32), _rng().standard_normal(1000).astype(np.float32) * 3
    dx, dy, dout = DeviceArray(driver, x), DeviceArray(driver, y), DeviceArray(driver, np.zeros(1000, np.float32))
    kernel = _add[(4,)](dx, dy, dout, 1000, BLOCK=256, num_ctas=2)
    assert ".reqnctapercluster 2, 1, 1" in kernel.asm["ptx"]
    np.testing.assert_array_equal(dout.numpy(), x + y)
    assert driver.launches() == 1 and driver.last_dims() == [8, 1, 1, 128, 1, 1]


def scenario_dlpack():
    # The second array's data starts 3 elements into its allocation (DLPack's byte_offset).
    driver = _Driver()
    x = _rng().standard_normal(200).astype(np.float32)
    y = _rng().standard_normal(203).astype(np.float32)
    out = DeviceArray(driver, np.zeros(200, np.float32))
    _add[(2,)](DLPackDeviceArray(driver, x), DLPackDeviceArray(driver, y, offset_elements=3), out, 200, BLOCK=128)
    np.testing.assert_array_equal(out.numpy(), x + y[3:])
    assert driver.launches() == 1


def scenario_properties():
    import tessel
    from tessel import knobs
    knobs.target = "cuda:90a"
    props = tessel.runtime.driver.active.utils.get_device_properties(0)
    assert props["multiprocessor_count"] == 132 and props["max_shared_mem"] == 227 * 1024, props
    assert props["warpSize"] == 32 and props["max_num_regs"] == 65536, props
    assert tessel.runtime.driver.active.get_current_target().arch == 90


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[1]]()
    print("ok")
