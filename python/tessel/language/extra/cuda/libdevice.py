"""`tl.extra.cuda.libdevice`: the same functions as tessel.language.extra.libdevice."""
from ..libdevice import *  # noqa: F401,F403
from ..libdevice import __all__, __getattr__  # noqa: F401
