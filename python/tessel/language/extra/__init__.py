"""`tl.extra`: Triton's vendor namespaces. `libdevice` (and `cuda.libdevice`, `hip.libdevice`) name the math
functions of NVIDIA's and AMD's device libraries; in Tessel they are tl.math's functions, on every target."""
from . import cuda, hip, libdevice

__all__ = ["cuda", "hip", "libdevice"]
