"""The console scripts `tessel-opt` and `tessel-gpusim`: they run the tool of that name that ships with the package
(tessel/bin in an installed wheel), or the build's (build/bin) in a source checkout or an editable install."""
from __future__ import annotations

import os
import pathlib
import sys

_PACKAGE = pathlib.Path(__file__).resolve().parents[1]


def tool_path(name: str) -> pathlib.Path:
    """Where the executable `name` is: in the package, else in the source tree's build directory."""
    for candidate in (_PACKAGE / "bin" / name, _PACKAGE.parents[1] / "build" / "bin" / name):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(f"{name} is not in this installation of tessel ({_PACKAGE}): install the package "
                            "(pip install .) or build the source tree (bash scripts/setup.sh)")


def _run(name: str) -> None:
    try:
        path = tool_path(name)
    except FileNotFoundError as e:
        sys.exit(f"error: {e}")
    os.execv(path, [name, *sys.argv[1:]])


def tessel_opt() -> None:
    _run("tessel-opt")


def tessel_gpusim() -> None:
    _run("tessel-gpusim")
