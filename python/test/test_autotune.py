"""Autotuning (`autotune`, `Config`, `heuristics`): the fastest config wins and is cached per key, in memory and on
disk; arrays updated in place are tuned without corrupting them; configs that do not compile are skipped; pruning,
hooks, grids and launch options behave as in Triton.

No test depends on a time threshold: where speed matters, one config does about 50 times the work of the other, and
the test asserts which config won."""
import json

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl
from tessel.knobs import knobs
from tessel.runtime.autotuner import AutotunerError

f32 = np.float32


def counting_bench(calls):
    """A do_bench for the autotuner that counts its calls and keeps each measurement short."""
    def bench(kernel_call, quantiles):
        calls.append(1)
        return triton.testing.do_bench(kernel_call, warmup=1, rep=5, quantiles=quantiles)
    return bench


@triton.jit
def _sin_sum_kernel(x_ptr, out_ptr, n, REPEAT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(REPEAT):
        acc += tl.sin(x + i)
    tl.store(out_ptr + offs, acc, mask=mask)


def test_the_fastest_config_wins_and_runs(rand):
    calls = []
    configs = [triton.Config({"REPEAT": 50}), triton.Config({"REPEAT": 1}), triton.Config({"REPEAT": 25})]
    tuned = triton.autotune(configs, key=["n"], do_bench=counting_bench(calls))(_sin_sum_kernel)
    n = 1 << 14
    x = rand(n, f32)
    out = np.zeros(n, f32)
    tuned[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, BLOCK=1024)
    assert len(calls) == 3
    assert tuned.best_config.kwargs == {"REPEAT": 1}
    assert tuned.configs == configs
    assert list(tuned.cache.values()) == [tuned.best_config]
    # The launch after tuning ran the winner.
    np.testing.assert_allclose(out, np.sin(x), rtol=1e-5, atol=1e-5)


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * FACTOR, mask=mask)


BLOCK_CONFIGS = [triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128}, num_warps=8),
                 triton.Config({"BLOCK": 256}, num_stages=2)]


def block_grid(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


def test_winner_is_cached_per_key_and_dtype(rand):
    calls = []
    tuned = triton.autotune(BLOCK_CONFIGS, key=["n"], do_bench=counting_bench(calls))(_scale_kernel)
    for n, dtype, tuned_so_far in [(500, f32, 1), (500, f32, 1), (700, f32, 2), (500, np.int32, 3),
                                   (700, f32, 3)]:
        x = rand(n, dtype)
        out = np.zeros(n, dtype)
        tuned[block_grid](x, out, n, FACTOR=3)
        assert len(calls) == len(BLOCK_CONFIGS) * tuned_so_far, f"n={n} {np.dtype(dtype)}"
        np.testing.assert_array_equal(out, x * dtype(3))
    assert set(tuned.cache) == {(500, "float32", "float32"), (700, "float32", "float32"),
                                (500, "int32", "int32")}


def test_grid_callable_sees_the_config(rand):
    n = 1000
    x = rand(n, f32)
    out = np.zeros(n, f32)
    seen = []

    def grid(meta):
        seen.append(meta["BLOCK"])
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)

    tuned = triton.autotune(BLOCK_CONFIGS, key=["n"], do_bench=counting_bench([]))(_scale_kernel)
    tuned[grid](x, out, n, FACTOR=2)
    np.testing.assert_array_equal(out, x * 2)
    assert set(seen) == {64, 128, 256}
    assert seen[-1] == tuned.best_config.kwargs["BLOCK"]


def test_single_config_runs_without_tuning(rand):
    calls = []
    tuned = triton.autotune([triton.Config({"BLOCK": 128})], key=["n"], do_bench=counting_bench(calls))(
        _scale_kernel)
    x = rand(300, f32)
    out = np.zeros(300, f32)
    tuned[block_grid](x, out, 300, FACTOR=5)
    assert calls == [] and tuned.best_config.kwargs == {"BLOCK": 128}
    np.testing.assert_array_equal(out, x * 5)


@triton.jit
def _accumulate_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(acc_ptr + offs, mask=mask)
    tl.store(acc_ptr + offs, acc + tl.load(x_ptr + offs, mask=mask), mask=mask)


def test_reset_to_zero_keeps_an_accumulating_kernel_correct(rand):
    calls = []
    tuned = triton.autotune(BLOCK_CONFIGS, key=["n"], reset_to_zero=["acc_ptr"], do_bench=counting_bench(calls))(
        _accumulate_kernel)
    n = 1000
    x = rand(n, f32)
    acc = rand(n, f32)  # garbage: the tuning zeroes it before each run and before the real launch
    tuned[block_grid](x, acc, n)
    assert len(calls) == len(BLOCK_CONFIGS)
    np.testing.assert_array_equal(acc, x)


@triton.jit
def _in_place_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2 + 1, mask=mask)


def test_restore_value_keeps_an_in_place_kernel_correct(rand):
    calls = []
    tuned = triton.autotune(BLOCK_CONFIGS, key=["n"], restore_value=["x_ptr"], do_bench=counting_bench(calls))(
        _in_place_kernel)
    n = 1000
    x = rand(n, f32)
    expected = x * 2 + 1
    tuned[block_grid](x, n)
    assert len(calls) == len(BLOCK_CONFIGS)
    np.testing.assert_array_equal(x, expected)


def test_user_hooks_replace_reset_and_restore(rand):
    events = []
    tuned = triton.autotune(BLOCK_CONFIGS[:2], key=["n"], restore_value=["x_ptr"], do_bench=counting_bench([]),
                            pre_hook=lambda args, reset_only=False: events.append(("pre", reset_only)),
                            post_hook=lambda args, exception: events.append(("post", exception)))(
        _in_place_kernel)
    x = np.zeros(64, f32)
    tuned[block_grid](x, 64)
    # Every benchmarked launch is bracketed by the hooks, and the winner's launch is announced with reset_only.
    assert events[-1] == ("pre", True)
    assert events.count(("pre", False)) == events.count(("post", None)) > 2
    assert (x != 0).all()  # nothing restored: the user's hooks replaced that


@triton.jit
def _asserting_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= 256, "BLOCK must be at most 256")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.exp(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def test_configs_that_do_not_compile_are_skipped(rand, capsys):
    calls = []
    configs = [triton.Config({"BLOCK": 4096}), triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 512})]
    tuned = triton.autotune(configs, key=["n"], do_bench=counting_bench(calls))(_asserting_kernel)
    n = 1000
    x = rand(n, f32, -2, 2)
    out = np.zeros(n, f32)
    tuned[block_grid](x, out, n)
    assert len(calls) == 1 and tuned.best_config.kwargs == {"BLOCK": 128}
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
    err = capsys.readouterr().err
    assert "skipping config (BLOCK: 4096" in err and "BLOCK must be at most 256" in err


@triton.jit
def _big_block_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n)
    w = tl.exp(v)
    tl.store(x_ptr + offs, w * w + v, mask=offs < n)


def test_a_config_too_big_for_the_backend_is_skipped(capsys):
    configs = [triton.Config({"BLOCK": 2**20}), triton.Config({"BLOCK": 1024})]
    tuned = triton.autotune(configs, key=["n"], restore_value=["x_ptr"], do_bench=counting_bench([]))(
        _big_block_kernel)
    x = np.zeros(1024, f32)
    tuned[(1,)](x, 1024)
    assert tuned.best_config.kwargs == {"BLOCK": 1024}
    np.testing.assert_array_equal(x, np.ones(1024, f32))
    assert "use smaller blocks" in capsys.readouterr().err


def test_no_config_compiles_lists_every_reason(rand):
    configs = [triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 1024})]
    tuned = triton.autotune(configs, key=["n"], do_bench=counting_bench([]))(_asserting_kernel)
    x = rand(100, f32)
    with pytest.raises(AutotunerError) as info:
        tuned[block_grid](x, np.zeros_like(x), 100)
    message = str(info.value)
    assert "BLOCK: 512" in message and "BLOCK: 1024" in message
    assert message.count("BLOCK must be at most 256") == 2


def _tuned_scale(calls):
    """A fresh autotuner over a fresh JITFunction: nothing in memory from earlier launches."""
    return triton.autotune(BLOCK_CONFIGS, key=["n"], do_bench=counting_bench(calls), cache_results=True)(
        triton.jit(_scale_kernel.fn))


def test_cache_results_persists_across_processes_and_rebuilds_a_corrupt_file(rand, tmp_path, monkeypatch):
    monkeypatch.setattr(knobs, "cache_dir", tmp_path)
    n = 1000
    x = rand(n, f32)

    def launch(tuned):
        out = np.zeros(n, f32)
        tuned[block_grid](x, out, n, FACTOR=4)
        np.testing.assert_array_equal(out, x * 4)

    calls = []
    launch(_tuned_scale(calls))
    assert len(calls) == len(BLOCK_CONFIGS)
    [path] = (tmp_path / "autotune").iterdir()
    assert path.suffix == ".json"
    assert (tmp_path / "autotune").stat().st_mode & 0o077 == 0  # private, like the kernel cache
    # Make the stored choice one that measuring would not necessarily give: the next tuner must take it from disk.
    data = json.loads(path.read_text())
    data["best"] = 2
    data["best_config"] = repr(BLOCK_CONFIGS[2])
    path.write_text(json.dumps(data))
    calls = []
    tuned = _tuned_scale(calls)
    launch(tuned)
    assert calls == [] and tuned.best_config == BLOCK_CONFIGS[2]

    path.write_text('{"best": 1, "key": ')  # truncated
    calls = []
    launch(_tuned_scale(calls))
    assert len(calls) == len(BLOCK_CONFIGS)
    assert json.loads(path.read_text())["key"] == repr((n, "float32", "float32"))
    assert [p.name for p in (tmp_path / "autotune").iterdir()] == [path.name]  # no temporary file left


def test_cache_file_depends_on_the_key(rand, tmp_path, monkeypatch):
    monkeypatch.setattr(knobs, "cache_dir", tmp_path)
    tuned = _tuned_scale([])
    for n in (100, 200):
        x = rand(n, f32)
        tuned[block_grid](x, np.zeros_like(x), n, FACTOR=1)
    assert len(list((tmp_path / "autotune").iterdir())) == 2


def test_cache_results_with_config_pre_hooks(rand, tmp_path, monkeypatch):
    # Hooks are named in the cache key by their qualified name, not their address: a new process (here, new hook
    # objects and a new JITFunction) finds the stored result.
    monkeypatch.setattr(knobs, "cache_dir", tmp_path)
    x = rand(100, f32)
    for expected_calls in (2, 0):
        calls = []
        configs = [triton.Config({"BLOCK": b}, pre_hook=lambda args: None) for b in (64, 128)]
        tuned = triton.autotune(configs, key=["n"], do_bench=counting_bench(calls), cache_results=True)(
            triton.jit(_scale_kernel.fn))
        tuned[block_grid](x, np.zeros_like(x), 100, FACTOR=1)
        assert len(calls) == expected_calls


def test_heuristics_compute_constexprs(rand):
    seen = []

    def grid(meta):
        seen.append((meta["BLOCK"], meta["FACTOR"]))
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)

    # Each rule sees the arguments and the values of the rules before it.
    kernel = triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"]) // 4,
                                "FACTOR": lambda args: args["BLOCK"] // 16})(_scale_kernel)
    for n in (100, 1000):
        x = rand(n, f32)
        out = np.zeros(n, f32)
        kernel[grid](x, out, n)
        block = triton.next_power_of_2(n) // 4
        assert seen[-1] == (block, block // 16)
        np.testing.assert_array_equal(out, x * f32(block // 16))


def test_autotune_over_heuristics(rand):
    configs = [triton.Config({"FACTOR": 2}), triton.Config({"FACTOR": 4})]
    tuned = triton.autotune(configs, key=["n"], do_bench=counting_bench([]))(
        triton.heuristics({"BLOCK": lambda args: 64 * args["FACTOR"]})(_scale_kernel))
    n = 500
    x = rand(n, f32)
    out = np.zeros(n, f32)
    tuned[block_grid](x, out, n)
    factor = tuned.best_config.kwargs["FACTOR"]
    np.testing.assert_array_equal(out, x * f32(factor))
    assert len(tuned.warmup(x, out, n)) == 2  # one compiled kernel per config


def test_prune_configs_by(rand):
    configs = [triton.Config({"BLOCK": b}) for b in (32, 64, 128, 256, 512)]
    pruned_calls = []
    tuned = triton.autotune(configs, key=["n"], do_bench=counting_bench(pruned_calls), prune_configs_by={
        "early_config_prune": lambda configs, named_args, **kwargs:
            [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]],
        "perf_model": lambda n, BLOCK, **kwargs: abs(BLOCK - 100),
        "top_k": 2})(_scale_kernel)
    x = rand(200, f32)
    out = np.zeros(200, f32)
    tuned[block_grid](x, out, 200, FACTOR=1)
    # Early pruning leaves 32, 64 and 128; the model ranks 128 and 64 first.
    assert len(pruned_calls) == 2 and tuned.best_config.kwargs["BLOCK"] in (64, 128)
    assert tuned.prune_configs((x, out, 200), {}) == [configs[2], configs[1]]

    tuned = triton.autotune(configs, key=["n"], prune_configs_by={"early_config_prune": lambda *a, **k: []})(
        _scale_kernel)
    with pytest.raises(AutotunerError, match="no config"):
        tuned[block_grid](x, out, 200, FACTOR=1)


def test_config_pre_hook_and_launch_options(rand):
    touched = []
    configs = [triton.Config({"BLOCK": 64}, num_warps=2, num_stages=1, num_ctas=1, maxnreg=128,
                             pre_hook=lambda args: touched.append(args["BLOCK"])),
               triton.Config({"BLOCK": 128}, num_warps=8, maxnreg=64, pre_hook=lambda args: touched.append(128))]
    tuned = triton.autotune(configs, key=["n"], do_bench=counting_bench([]))(_scale_kernel)
    x = rand(300, f32)
    out = np.zeros(300, f32)
    tuned[block_grid](x, out, 300, FACTOR=2)
    np.testing.assert_array_equal(out, x * 2)
    assert set(touched) == {64, 128} and touched[-1] == tuned.best_config.kwargs["BLOCK"]


def test_config_api():
    config = triton.Config({"BLOCK": 128, "GROUP": 8}, num_warps=8, num_stages=2)
    assert config.all_kwargs() == {"BLOCK": 128, "GROUP": 8, "num_warps": 8, "num_ctas": 1, "num_stages": 2}
    assert str(config) == "BLOCK: 128, GROUP: 8, num_warps: 8, num_ctas: 1, num_stages: 2, maxnreg: None"
    assert config == triton.Config({"BLOCK": 128, "GROUP": 8}, num_warps=8, num_stages=2)
    assert config != triton.Config({"BLOCK": 128, "GROUP": 8}, num_warps=4, num_stages=2)
    assert len({config, triton.Config({"BLOCK": 128, "GROUP": 8}, num_warps=8, num_stages=2)}) == 1
    assert triton.Config({}, maxnreg=64).all_kwargs()["maxnreg"] == 64


def test_tuned_meta_parameters_cannot_also_be_passed(rand):
    tuned = triton.autotune(BLOCK_CONFIGS, key=["n"])(_scale_kernel)
    x = rand(100, f32)
    with pytest.raises(ValueError, match="BLOCK passed at launch but also set by the autotuner"):
        tuned[block_grid](x, np.zeros_like(x), 100, FACTOR=1, BLOCK=64)


def test_unknown_argument_names_are_reported():
    with pytest.raises(ValueError, match="reset_to_zero: out not among the arguments"):
        triton.autotune(BLOCK_CONFIGS, key=["n"], reset_to_zero=["out"])(_scale_kernel)
    with pytest.warns(UserWarning, match="autotune key: size not among the arguments"):
        triton.autotune(BLOCK_CONFIGS, key=["size"])(_scale_kernel)


def test_progress_and_print_autotuning(rand, capsys, monkeypatch):
    monkeypatch.setattr(knobs, "print_autotuning", True)
    tuned = triton.autotune(BLOCK_CONFIGS, key=["n"], warmup=1, rep=2)(_scale_kernel)
    x = rand(100, f32)
    tuned[block_grid](x, np.zeros_like(x), 100, FACTOR=1)
    captured = capsys.readouterr()
    for i in (1, 2, 3):
        assert f"autotuning _scale_kernel for key (100, 'float32', 'float32'): config {i}/3" in captured.err
    assert f"best config {tuned.best_config} (" in captured.out and " ms;" in captured.out
