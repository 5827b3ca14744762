"""A slice of the differential fuzzer (python -m tessel.tools.fuzz): random kernels checked against the fuzzer's own
numpy model of Triton's semantics, on every target of the run.

The seed rotates: each run draws a new one (TESSEL_FUZZ_SEED=S replays a run), so the suite covers new kernels every
time; it is in every test's id. Every sixth kernel is a focused one (float max/min over 16x16, 16x32, 128 and 256
elements; loads and stores that alias in one program; int8 dot; signed >> unsigned; argmax over [32, 1]), so the slice
always contains them, and subnormal data and results appear throughout. A failure names the seed, the index, the
kernel's source and the one-line command that replays and shrinks it.
"""
import os
import random

import pytest

from tessel.tools import fuzz

SEED = int(os.environ.get("TESSEL_FUZZ_SEED", "") or random.SystemRandom().randrange(2**31))
CHUNK = 50
COUNT = 600


@pytest.mark.parametrize("start", range(0, COUNT, CHUNK), ids=lambda s: f"seed{SEED}-kernels{s}-{s + CHUNK - 1}")
def test_fuzz_slice(start, target):
    logs = []
    # On a simulated GPU (ptxas for each kernel, warps simulated) every fourth kernel of the chunk.
    indices = range(start, start + CHUNK, 1 if target.startswith("cpu") else 4)
    failures = fuzz.run_batch(SEED, indices, timeout=60.0, log=logs.append)
    if failures:
        pytest.fail(f"{len(failures)} fuzzed kernel(s) of seed {SEED} disagree with the model of Triton:\n\n"
                    + "\n\n".join(fuzz.report(SEED, i, prog, res) for i, prog, res in failures), pytrace=False)


def test_model_catches_a_wrong_result():
    """The checker is not vacuous: a buffer changed after the model ran is reported."""
    from tessel.tools.fuzz_gen import generate
    prog, model = generate(SEED, 1)
    got = [m.reshape(-1).copy() for m in model.mem]
    assert fuzz.compare(prog, model, got) == []
    b = next(i for i, (dt, _) in enumerate(prog.buffers) if dt != "i1")
    got[b][0] = got[b][0] + 1
    assert fuzz.compare(prog, model, got)


def test_model_catches_a_flushed_subnormal():
    """Kernels of every seed hold subnormal results, and one flushed to zero is reported."""
    import numpy as np
    from tessel.tools.fuzz_gen import generate
    from tessel.tools.fuzz_ir import EMIN, TINY
    for index in range(200):
        prog, model = generate(SEED, index)
        for b, (dt, _) in enumerate(prog.buffers):
            if dt not in TINY:
                continue
            v = model.mem[b].reshape(-1).astype(np.float64)
            err = model.memerr[b].reshape(-1)
            sub = np.flatnonzero((v != 0) & (np.abs(v) < 2.0**EMIN[dt]) & (np.abs(v) > 8 * (TINY[dt] + err)))
            if sub.size:
                got = [m.reshape(-1).copy() for m in model.mem]
                assert fuzz.compare(prog, model, got) == []
                got[b][sub[0]] = 0
                assert fuzz.compare(prog, model, got)
                return
    pytest.fail(f"no subnormal result in the first 200 kernels of seed {SEED}")
