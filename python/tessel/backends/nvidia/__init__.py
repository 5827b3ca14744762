"""The NVIDIA backends as the Python side sees them.

"cuda:<arch>" compiles for a GPU (PTX and, where ptxas is found, a cubin) and runs it through the CUDA driver
(libcuda.so.1, loaded when a kernel first runs): arrays live in GPU memory (CUDA tensors, anything with
`__cuda_array_interface__` or DLPack), launches go to torch's current stream. Without a driver such kernels are
compiled ahead of time only. "sim:sm_<arch>" compiles exactly the same PTX and runs it in Tessel's PTX simulator on
the CPU: arrays live in host memory (numpy arrays, CPU torch tensors) and are copied into the simulated GPU's memory
for each launch.
"""
from __future__ import annotations

import os
from typing import Any

from ..cpu import DeviceTarget

# Streaming multiprocessors and shared memory per program of the GPUs each architecture names (T4, A100, A10, Jetson
# Orin, L40, H100, B200, RTX 5080).
_SM_COUNT = {75: 40, 80: 108, 86: 84, 87: 16, 89: 128, 90: 132, 100: 148, 120: 84}
_MAX_SHARED = {75: 64 * 1024, 80: 163 * 1024, 86: 99 * 1024, 87: 163 * 1024, 89: 99 * 1024, 90: 227 * 1024,
               100: 227 * 1024, 120: 99 * 1024}


def _current_target() -> str:
    from ... import knobs
    return knobs.target


def _capability(target: str) -> int:
    arch = target.split(":", 1)[1] if ":" in target else "80"
    digits = "".join(c for c in arch if c.isdigit())
    return int(digits or 80)


class _NVIDIABackend:
    name = ""
    device_memory = False

    def device_target(self, target: str | None = None) -> DeviceTarget:
        """`target`'s (knobs.target when None)."""
        from ... import knobs
        return DeviceTarget("cuda", _capability(target or knobs.target), 32)

    def device_properties(self, device: Any = None) -> dict[str, int]:
        from ... import knobs
        cap = _capability(knobs.target)
        return {"multiprocessor_count": _SM_COUNT.get(cap, 108), "max_shared_mem": _MAX_SHARED.get(cap, 99 * 1024),
                "max_num_regs": 65536, "warpSize": 32, "sm_clock_rate": 0, "mem_clock_rate": 0,
                "mem_bus_width": 0, "cpu_count": os.cpu_count() or 1}


class SimBackend(_NVIDIABackend):
    """sim:sm_80, sim:sm_90a: GPU code run by the simulator; the arrays are the host's."""
    name = "sim"

    def active_torch_device(self) -> Any:
        import torch
        return torch.device("cpu")


class CudaBackend(_NVIDIABackend):
    """cuda:80, cuda:90a: GPU code for a real GPU."""
    name = "cuda"
    device_memory = True

    def device_properties(self, device: Any = None) -> dict[str, int]:
        """The GPU's, from the driver; without one, those of the GPU the target names (as the simulator)."""
        from ... import _C
        if not _C.target_can_run(_C.parse_target(_current_target())):
            return super().device_properties(device)
        index = getattr(device, "index", device)
        properties = _C.cuda_device_properties(int(index or 0))
        properties.pop("capability")
        properties["cpu_count"] = os.cpu_count() or 1
        return properties

    def active_torch_device(self) -> Any:
        import torch
        return torch.device("cuda")
