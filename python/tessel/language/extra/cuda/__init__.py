"""`tl.extra.cuda`: NVIDIA's namespace (its libdevice, on every target)."""
from . import libdevice

__all__ = ["libdevice"]
