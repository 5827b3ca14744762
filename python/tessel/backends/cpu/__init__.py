"""The CPU backend as the Python side sees it: arrays live in host memory, the device is the CPU, and the target of
this machine is "cpu" (its model and features are read by the C++ target)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DeviceTarget:
    """What `driver.active.get_current_target()` returns, as Triton's GPUTarget: backend, arch, warp size."""
    backend: str
    arch: str
    warp_size: int


class CPUBackend:
    name = "cpu"
    device_memory = False  # arrays live in host memory

    def device_target(self, target: str | None = None) -> DeviceTarget:
        return DeviceTarget("cpu", "", 1)

    def active_torch_device(self) -> Any:
        import torch  # only when asked: tessel does not depend on torch
        return torch.device("cpu")

    def device_properties(self, device: Any = None) -> dict[str, int]:
        """Triton's `utils.get_device_properties` keys, for the CPU: a "multiprocessor" is a thread of the pool.
        Kernels that size their grid from these (persistent kernels) run unchanged."""
        from ... import _C
        threads = _C.num_threads()
        return {"multiprocessor_count": threads, "max_shared_mem": 1 << 22, "max_num_regs": 1 << 16,
                "warpSize": 1, "sm_clock_rate": 0, "mem_clock_rate": 0, "mem_bus_width": 0,
                "cpu_count": os.cpu_count() or threads}
