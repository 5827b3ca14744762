"""A compiled kernel as Triton's programs use it (triton.compiler.CompiledKernel): `metadata`, `n_regs`, `n_spills`,
`hash`, `_init_handles()` and `kernel[grid](*args)`.

The compiled kernel is the C++ `_C.Kernel` held by the launcher's cache (so that launches stay in C++); this module
gives that class these attributes, read from what the compiler recorded with the kernel: its compile options, the
"launch" stage (shared memory, registers) and, for NVIDIA targets, ptxas's report.

What the numbers are, per target:

* NVIDIA (cuda:*, sim:*): `n_regs` is the registers per thread ptxas allocated; `n_spills` is the thread's local
  memory (ptxas's stack frame, spills included) in 4-byte words, as Triton reads it from the driver;
  `metadata.shared` is the bytes of shared memory one program uses (dynamic and static). Without ptxas (PTX handed
  to the driver) registers and local memory are unknown and read 0.
* AMD (hip:*, sim:gfx*): `n_regs` is the kernel's VGPRs per lane (the code object's .vgpr_count); `n_spills` its
  scratch per lane (private segment) in 4-byte words; `metadata.shared` the LDS one workgroup uses (the code
  object's static LDS and the launch's dynamic part).
* CPU: one program runs at a time on each worker thread and keeps its thread's registers to itself; `n_regs` is
  that whole register budget (the device's `max_num_regs`, shared by `warpSize * num_warps` = `num_warps` "threads"),
  so that Triton's occupancy formula `max_num_regs // (n_regs * warpSize * num_warps)` gives the one program per
  thread the CPU runs. `metadata.shared` is the bytes of the block buffers one program keeps on its thread's stack
  (the CPU's "launch" stage). `n_spills` is 0: LLVM's spills on the CPU are not counted.
"""
from __future__ import annotations

import collections
import re
import weakref
from typing import Any, Callable

from .. import _C
from . import errors

# Triton's KernelMetadata fields that mean something here.
KernelMetadata = collections.namedtuple("KernelMetadata", [
    "name", "hash", "target", "backend_name", "num_warps", "num_ctas", "num_stages", "maxnreg", "debug",
    "enable_fp_fusion", "shared"])

# Kernels compiled for a @jit function: kernel -> (the function, the launch context, the launch options given,
# the kernel's cache key). `kernel[grid](...)` launches through the function's launcher with those options.
_owners: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()


def register(kernel: Any, fn: Any, context: tuple, options: dict[str, Any], key: str) -> None:
    _owners[kernel] = (weakref.ref(fn), context, dict(options), key)


def _parse_pairs(text: str, separator: str) -> dict[str, str]:
    pairs = {}
    for item in text.split(separator):
        name, equals, value = item.strip().partition("=")
        if equals:
            pairs[name] = value
    return pairs


def _value(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        return text


def _options(kernel: Any) -> dict[str, Any]:
    return {name: _value(value) for name, value in _parse_pairs(kernel.options, ",").items()}


def _launch_stage(kernel: Any) -> dict[str, Any]:
    return {name: _value(value) for name, value in _parse_pairs(kernel.asm.get("launch", ""), "\n").items()}


def _ptxas_number(kernel: Any, pattern: str) -> int:
    found = re.search(pattern, kernel.asm.get("ptxas", ""))
    return int(found.group(1)) if found else 0


def _is_cpu(kernel: Any) -> bool:
    return kernel.target.split(":")[0] == "cpu"


def _is_amd(kernel: Any) -> bool:
    return kernel.target.startswith(("hip:", "sim:gfx"))


def _device_target(target: str) -> Any:
    from ..backends.cpu import DeviceTarget
    backend, _, arch = target.partition(":")
    if backend == "cpu":
        return DeviceTarget("cpu", arch, 1)
    if backend == "hip" or arch.startswith("gfx"):
        return DeviceTarget("hip", arch, 64)
    digits = "".join(c for c in arch if c.isdigit())
    return DeviceTarget("cuda", int(digits or 0), 32)


def _device_properties(kernel: Any) -> dict[str, int]:
    from .. import backends
    return backends.for_target(kernel.target).device_properties()


def _shared(kernel: Any) -> int:
    shared = int(_launch_stage(kernel).get("shared", 0))
    if _is_amd(kernel):
        return shared + int(_launch_stage(kernel).get("static_shared", 0))
    # ptxas reports the shared memory the PTX declares statically; the launch stage the dynamic part.
    return shared + _ptxas_number(kernel, r"(\d+) bytes smem")


def metadata(kernel: Any) -> KernelMetadata:
    options = _options(kernel)
    owner = _owners.get(kernel)
    return KernelMetadata(
        name=kernel.name, hash=owner[3] if owner else None, target=_device_target(kernel.target),
        backend_name=_device_target(kernel.target).backend, num_warps=options.get("num_warps", 4),
        num_ctas=options.get("num_ctas", 1), num_stages=options.get("num_stages", 3),
        maxnreg=options.get("maxnreg") or None, debug=options.get("debug", False),
        enable_fp_fusion=options.get("enable_fp_fusion", True), shared=_shared(kernel))


def n_regs(kernel: Any) -> int:
    if _is_cpu(kernel):
        properties = _device_properties(kernel)
        threads = properties["warpSize"] * _options(kernel).get("num_warps", 4)
        return max(1, properties["max_num_regs"] // threads)
    if _is_amd(kernel):
        return int(_launch_stage(kernel).get("vgprs", 0))
    return int(_launch_stage(kernel).get("registers", 0))


def n_spills(kernel: Any) -> int:
    if _is_cpu(kernel):
        return 0
    if _is_amd(kernel):
        return int(_launch_stage(kernel).get("scratch", 0)) // 4
    return _ptxas_number(kernel, r"(\d+) bytes stack frame") // 4


def kernel_hash(kernel: Any) -> str | None:
    owner = _owners.get(kernel)
    return owner[3] if owner else None


def init_handles(kernel: Any) -> None:
    """Triton loads a kernel's binary here; Tessel loaded it when it was compiled. What remains is Triton's check:
    a kernel that needs more shared memory than the device has is OutOfResources."""
    shared = _shared(kernel)
    limit = _device_properties(kernel)["max_shared_mem"]
    if shared > limit:
        raise errors.OutOfResources(shared, limit, "shared memory")


def getitem(kernel: Any, grid: Any) -> Callable[..., None]:
    """`kernel[grid](*args)`: launches this kernel's @jit function with the options it was compiled with. The
    arguments are the function's, all of them (constexprs included, as Triton's compiled kernels take them)."""
    owner = _owners.get(kernel)
    fn = owner[0]() if owner else None
    if fn is None:
        raise RuntimeError(f"kernel {kernel.name} was not compiled by a launch of its @jit function in this process "
                           "(e.g. ahead of time): launch it through the function")
    _, context, options, _ = owner
    launch = fn._get_launcher(context).launch

    def runner(*args: Any, stream: Any = None) -> None:
        launch(grid, False, *args, **options)
    return runner


def install(cls: Any) -> None:
    cls.metadata = property(metadata, doc="Triton's KernelMetadata: name, target, options, shared memory.")
    cls.n_regs = property(n_regs, doc="Registers per thread (see tessel.runtime.compiled_kernel for the CPU's).")
    cls.n_spills = property(n_spills, doc="Local memory (NVIDIA) or scratch (AMD) per thread in 4-byte words; 0 on "
                                          "the CPU.")
    cls.hash = property(kernel_hash, doc="The kernel's cache key.")
    cls._init_handles = init_handles
    cls.__getitem__ = getitem


install(_C.Kernel)
