"""tessel.testing: do_bench's measurements and return forms, assert_close's tolerances and messages, and
perf_report's tables, CSV files and plots."""
import importlib.util
import sys
import time
import types

import numpy as np

import pytest

import tessel as triton
import tessel.language as tl
from tessel import testing

HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
HAS_PANDAS = importlib.util.find_spec("pandas") is not None


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def test_do_bench_times_a_kernel(rand):
    n = 4096
    x, y = rand(n, np.float32), rand(n, np.float32)
    out = np.zeros(n, np.float32)
    ms = testing.do_bench(lambda: _add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024), warmup=2, rep=10)
    assert isinstance(ms, float) and ms > 0
    np.testing.assert_array_equal(out, x + y)


def test_do_bench_repetitions_follow_warmup_and_rep():
    calls = []

    def one_ms():
        calls.append(1)
        time.sleep(0.001)

    # Each call takes at least 1 ms, so the estimate is >= 1 ms: at most 5 warm-up and 20 timed calls, plus the
    # first call and the 5 of the estimate.
    fastest = testing.do_bench(one_ms, warmup=5, rep=20, return_mode="min")
    assert fastest >= 1.0
    assert 1 + 5 + 1 + 1 <= len(calls) <= 1 + 5 + 5 + 20


@pytest.mark.parametrize("mode", ["min", "max", "mean", "median"])
def test_do_bench_return_modes(mode):
    assert testing.do_bench(lambda: sum(range(100)), warmup=1, rep=2, return_mode=mode) > 0


def test_do_bench_all_and_quantiles():
    times = testing.do_bench(lambda: sum(range(100)), warmup=1, rep=2, return_mode="all")
    assert isinstance(times, list) and times and all(t > 0 for t in times)
    median, low, high = testing.do_bench(lambda: sum(range(100)), warmup=1, rep=2, quantiles=[0.5, 0.2, 0.8])
    assert 0 < low <= median <= high
    # One quantile gives a number, as in Triton.
    assert isinstance(testing.do_bench(lambda: None, warmup=1, rep=1, quantiles=[0.5]), float)
    with pytest.raises(ValueError, match="quantiles must be in"):
        testing.do_bench(lambda: None, warmup=1, rep=1, quantiles=[1.5])
    with pytest.raises(ValueError, match="return_mode"):
        testing.do_bench(lambda: None, return_mode="average")


def test_do_bench_grad_to_none():
    tensor = types.SimpleNamespace(grad=np.ones(3))
    testing.do_bench(lambda: None, warmup=1, rep=1, grad_to_none=[tensor])
    assert tensor.grad is None


class _GpuClock:
    """A stand-in for torch on a GPU, as do_bench uses it: a stream whose clock advances 2 ms per kernel call and
    0.5 ms per cache flush; an event records the clock when its turn on the stream comes."""

    def __init__(self):
        self.now, self.flushes, self.synchronized = 0.0, 0, False
        clock = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing
                self.at = None

            def record(self):
                self.at = clock.now

            def elapsed_time(self, end):
                assert clock.synchronized, "events read before synchronizing"
                return end.at - self.at

        class Buffer:
            def zero_(self):
                clock.now += 0.5
                clock.flushes += 1

        self.cuda = types.SimpleNamespace(
            is_available=lambda: True, Event=Event, synchronize=lambda: setattr(self, "synchronized", True))
        self.int8 = "int8"
        self.empty = lambda size, dtype, device: Buffer()

    def kernel(self):
        self.synchronized = False
        self.now += 2.0


def test_do_bench_on_a_gpu_times_each_call_by_events(monkeypatch):
    # On a cuda target launches return at once: each call is timed between its own events, without the L2 flush
    # that precedes it.
    gpu = _GpuClock()
    monkeypatch.setitem(sys.modules, "torch", gpu)
    monkeypatch.setattr(triton.knobs, "target", "cuda:90a")
    times = testing.do_bench(gpu.kernel, warmup=10, rep=20, return_mode="all")
    assert times == [2.0] * len(times) and 5 <= len(times) <= 10
    assert gpu.flushes == 5 + len(times)  # the estimate's calls and each timed call


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_assert_close_default_tolerance(dtype):
    x = np.linspace(-1, 1, 64).astype(dtype)
    testing.assert_close(x, x)
    testing.assert_close(x, x + dtype(0.005))  # Triton's default: atol 1e-2, rtol 0
    with pytest.raises(AssertionError, match="not close"):
        testing.assert_close(x, x + dtype(0.05))


def test_assert_close_message_names_the_worst_element():
    x = np.zeros((4, 5), np.float32)
    y = x.copy()
    y[1, 2] = 0.5
    y[3, 4] = 0.25
    with pytest.raises(AssertionError) as info:
        testing.assert_close(x, y, err_msg="my kernel")
    message = str(info.value)
    assert message.startswith("my kernel: ")
    assert "2 of 20 elements differ" in message and "largest error 0.5 at index (1, 2)" in message


def test_assert_close_tolerances():
    testing.assert_close(np.float32(100.0), 101.0, atol=0, rtol=0.02)
    with pytest.raises(AssertionError):
        testing.assert_close(100.0, 103.0, atol=0, rtol=0.02)
    # Tolerances may be functions of x's dtype.
    testing.assert_close(np.ones(3, np.float16), np.ones(3) * 1.1,
                         atol=lambda dtype: 0.2 if dtype == np.float16 else 0.0)
    testing.assert_close(np.arange(5), [0, 1, 2, 3, 4])
    with pytest.raises(AssertionError, match="1 of 5 elements differ"):
        testing.assert_close(np.arange(5), np.array([0, 1, 2, 3, 5]))


def test_assert_close_nan_inf_and_shapes():
    testing.assert_close(np.array([1.0, np.nan, np.inf]), np.array([1.0, np.nan, np.inf]))
    with pytest.raises(AssertionError, match="largest error inf at index \\(1,\\)"):
        testing.assert_close(np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    with pytest.raises(AssertionError, match="shapes differ"):
        testing.assert_close(np.zeros(3), np.zeros(4))
    testing.assert_close(np.zeros((2, 3)), 0.0)  # a scalar is compared with every element


def test_assert_close_torch_tensors():
    torch = pytest.importorskip("torch")
    x = torch.linspace(-1, 1, 16, dtype=torch.bfloat16)
    testing.assert_close(x, x.float().numpy() + 0.005)
    with pytest.raises(AssertionError):
        testing.assert_close(x, x + 0.25)


def _bench_fn(size, provider, scale):
    # A deterministic "measurement", so that the table's values are known.
    value = float(size * scale * (2 if provider == "fast" else 1))
    return value, value - 1, value + 1


BENCH = testing.Benchmark(x_names=["size"], x_vals=[128, 1024], line_arg="provider", line_vals=["fast", "slow"],
                          line_names=["Fast", "Slow"], plot_name="tiny-bench", args={"scale": 3}, ylabel="GB/s",
                          styles=[("blue", "-"), ("green", "--")])


def test_perf_report_prints_the_table_and_writes_csv(tmp_path, capsys):
    report = testing.perf_report(BENCH)(_bench_fn)
    assert report.run(print_data=True, save_path=str(tmp_path)) is None
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "tiny-bench:"
    assert out[1].split() == ["size", "Fast", "(GB/s)", "Slow", "(GB/s)"]
    assert out[2].split() == ["128", "768", "384"] and out[3].split() == ["1024", "6144", "3072"]
    assert (tmp_path / "tiny-bench.csv").read_text().splitlines() == [
        "size,Fast (GB/s),Slow (GB/s)", "128,768.0,384.0", "1024,6144.0,3072.0"]


def test_perf_report_several_x_names_and_benchmarks(capsys):
    benches = [testing.Benchmark(x_names=["M", "N"], x_vals=[(1, 2), 3], line_arg="op", line_vals=["add", "mul"],
                                 line_names=["add", "mul"], plot_name=name, args={})
               for name in ("first", "second")]

    @testing.perf_report(benches)
    def bench(M, N, op):
        return M + N if op == "add" else M * N

    bench.run(print_data=True)
    out = capsys.readouterr().out
    assert out.count("M  N  add  mul") == 2
    assert "1  2    3    2" in out and "3  3    6    9" in out
    with pytest.raises(ValueError, match="does not give one value for each of"):
        testing.perf_report(testing.Benchmark(["M", "N"], [(1, 2, 3)], "op", ["add"], ["add"], "bad", {}))(
            bench.fn).run()


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="matplotlib is not installed (scripts/setup.sh installs it)")
def test_perf_report_saves_a_plot(tmp_path):
    testing.perf_report(BENCH)(_bench_fn).run(save_path=str(tmp_path))
    assert (tmp_path / "tiny-bench.png").read_bytes().startswith(b"\x89PNG")


def test_perf_report_without_matplotlib_notes_the_missing_plot(tmp_path, capsys, monkeypatch):
    # A None entry in sys.modules makes `import matplotlib` fail, as where it is not installed.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    testing.perf_report(BENCH)(_bench_fn).run(save_path=str(tmp_path))
    assert "matplotlib is not installed" in capsys.readouterr().err
    assert (tmp_path / "tiny-bench.csv").exists() and not (tmp_path / "tiny-bench.png").exists()


def test_perf_report_return_df():
    report = testing.perf_report(BENCH)(_bench_fn)
    if not HAS_PANDAS:
        with pytest.raises(ImportError, match="needs pandas"):
            report.run(return_df=True)
        return
    df = report.run(return_df=True)
    assert list(df.columns) == ["size", "Fast (GB/s)", "Slow (GB/s)"] and df["Fast (GB/s)"].tolist() == [768, 6144]
