"""The on-disk kernel cache from the command line: `python -m tessel.cache list|stats|clear`.

The cache itself is C++ (`tessel._C.KernelCache`): one directory per kernel specialization under
`tessel.knobs.cache_dir` (TESSEL_CACHE_DIR, default ~/.cache/tessel) with the binary, every stage's IR and a
checksummed metadata file.
"""
from __future__ import annotations

import argparse
import datetime
import sys

from . import _C
from .knobs import knobs


def open_cache() -> _C.KernelCache:
    return _C.KernelCache(str(knobs.cache_dir))


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tessel.cache", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["list", "stats", "clear"])
    args = parser.parse_args(argv)
    cache = open_cache()
    try:
        cache.check()
    except _C.CacheError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    entries = sorted(cache.entries(), key=lambda e: e["last_use"], reverse=True)
    if args.command == "list":
        for e in entries:
            when = datetime.datetime.fromtimestamp(e["last_use"] / 1e9).isoformat(sep=" ", timespec="seconds")
            print(f"{e['key']}  {_human(e['bytes']):>10}  {when}  {e['name']}")
    elif args.command == "stats":
        total = sum(e["bytes"] for e in entries)
        limit = _human(knobs.cache_max_bytes) if knobs.cache_max_bytes else "none"
        print(f"directory: {cache.directory}\nkernels:   {len(entries)}\nsize:      {_human(total)}\n"
              f"limit:     {limit}")
    else:
        cache.clear()
        print(f"removed {len(entries)} kernels from {cache.directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
