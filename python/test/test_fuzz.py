"""A fixed-seed slice of the differential fuzzer (python -m tessel.tools.fuzz): random kernels checked against the
fuzzer's own numpy model of Triton's semantics.

Every sixth kernel is a focused one (float max/min over 16x16, 16x32, 128 and 256 elements; loads and stores that
alias in one program; int8 dot; signed >> unsigned; argmax over [32, 1]), so the slice always contains them. A failure
names the seed, the index and the kernel's source; `python -m tessel.tools.fuzz --seed 0 --index I --minimize` shrinks
it.
"""
import pytest

from tessel.tools import fuzz

SEED = 0
CHUNK = 50
COUNT = 600


@pytest.mark.parametrize("start", range(0, COUNT, CHUNK), ids=lambda s: f"kernels{s}-{s + CHUNK - 1}")
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
