"""CTAs on the simulator's thread pool: results, counters and errors do not depend on the number of threads."""
import numpy as np
import pytest

from tessel import gpusim

PTX = """.version 8.7
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
 .reg .b32 %t, %c, %i, %n, %v;
 .reg .b64 %rd<4>;
 .reg .pred %p;
 mov.u32 %t, %tid.x;
 mov.u32 %c, %ctaid.x;
 ld.param.u32 %n, [n];
 mad.lo.u32 %i, %c, 64, %t;
 // A little work per thread, so that CTAs overlap in time.
 mov.u32 %v, %i;
$loop:
 mad.lo.u32 %v, %v, 1664525, 1013904223;
 add.u32 %n, %n, -1;
 setp.ne.u32 %p, %n, 0;
 @%p bra $loop;
 ld.param.u64 %rd0, [out];
 mul.wide.u32 %rd1, %i, 4;
 add.s64 %rd2, %rd0, %rd1;
 st.global.u32 [%rd2], %v;
 ret;
}
"""


def reference(ctas, n):
    v = np.arange(ctas * 64, dtype=np.uint64)
    for _ in range(n):
        v = (v * 1664525 + 1013904223) % 2 ** 32
    return v.astype(np.uint32)


def test_same_results_and_counters_on_any_number_of_threads():
    ctas, n = 40, 50
    results = {}
    for threads in (1, 2, 3, 8):
        out = np.zeros(ctas * 64, np.uint32)
        c = gpusim.launch(PTX, "k", ctas, num_warps=2, args=[out, n], threads=threads)
        np.testing.assert_array_equal(out, reference(ctas, n))
        c.pop("seconds")
        results[threads] = c
    assert all(r == results[1] for r in results.values())
    assert results[1]["ctas"] == ctas and results[1]["warps"] == 2 * ctas


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_the_lowest_failing_cta_is_reported(threads):
    # The array holds 37.5 CTAs' worth of results: CTAs 37, 38 and 39 store out of bounds; CTA 37 is reported.
    out = np.zeros(37 * 64 + 32, np.uint32)
    with pytest.raises(gpusim.SimulatorError, match=r"out-of-bounds store") as e:
        gpusim.launch(PTX, "k", 40, num_warps=2, args=[out, 20], threads=threads)
    assert "CTA (37,0,0), thread (32,0,0)" in str(e.value)
    assert (out == 0).all()  # nothing is copied back after an error


def test_threads_must_be_a_count():
    with pytest.raises(gpusim.SimulatorError, match="threads must be a non-negative int"):
        gpusim.launch(PTX, "k", 1, args=[np.zeros(64, np.uint32), 1], threads=-1)
