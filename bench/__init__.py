"""Tessel benchmarks: `python -m bench` (see __main__.py)."""
