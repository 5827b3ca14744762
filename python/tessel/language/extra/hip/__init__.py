"""`tl.extra.hip`: AMD's namespace (its libdevice, on every target)."""
from . import libdevice

__all__ = ["libdevice"]
