"""The AMD backend as the Python side sees it.

"hip:<gfx>" (gfx90a, gfx942, gfx950) compiles for AMD's CDNA GPUs: AMDGCN and an hsaco linked in process, with the
ROCm device libraries for math. Kernels run through the HIP runtime (libamdhip64.so, loaded when a kernel first runs):
arrays live in GPU memory (ROCm torch tensors, anything with `__cuda_array_interface__` or DLPack), launches go to
torch's current stream. Without a runtime and a GPU such kernels are compiled ahead of time only.
"""
from __future__ import annotations

import os
from typing import Any

from ..cpu import DeviceTarget

# Compute units and LDS per workgroup of the GPUs each chip names (MI250X, MI300X, MI355X).
_CU_COUNT = {"gfx90a": 110, "gfx942": 304, "gfx950": 256}
_MAX_SHARED = {"gfx90a": 64 * 1024, "gfx942": 64 * 1024, "gfx950": 160 * 1024}


def _chip(target: str) -> str:
    return target.split(":", 1)[1] if ":" in target else "gfx942"


class HipBackend:
    """hip:gfx90a, hip:gfx942, hip:gfx950: GPU code for AMD GPUs, whose arrays would live in GPU memory."""
    name = "hip"
    device_memory = True

    def device_target(self, target: str | None = None) -> DeviceTarget:
        """`target`'s (knobs.target when None), as Triton's GPUTarget("hip", "gfx942", 64)."""
        from ... import knobs
        return DeviceTarget("hip", _chip(target or knobs.target), 64)

    def device_properties(self, device: Any = None) -> dict[str, int]:
        from ... import knobs
        chip = _chip(knobs.target)
        return {"multiprocessor_count": _CU_COUNT.get(chip, 304), "max_shared_mem": _MAX_SHARED.get(chip, 65536),
                "max_num_regs": 512 * 64, "warpSize": 64, "sm_clock_rate": 0, "mem_clock_rate": 0,
                "mem_bus_width": 0, "cpu_count": os.cpu_count() or 1}

    def active_torch_device(self) -> Any:
        import torch
        return torch.device("cuda")  # ROCm builds of torch name their GPUs "cuda"


class HipSimBackend(HipBackend):
    """sim:gfx90a, sim:gfx942, sim:gfx950: the hip target's code object, run by the simulator's AMDGCN front end; the
    arrays are the host's."""
    name = "sim"
    device_memory = False

    def active_torch_device(self) -> Any:
        import torch
        return torch.device("cpu")
