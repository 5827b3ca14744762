"""`autotune`, `Config` and `heuristics`: choosing a kernel's meta-parameters at launch, by measuring the candidates
on the real arguments or by a rule over them. The API and behaviour follow Triton's `triton.autotune`."""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
import tempfile
import time
import warnings
from typing import Any, Callable, Sequence

from .. import _C
from ..knobs import knobs
from . import errors
from .jit import LAUNCH_OPTIONS, JITFunction

# What every benchmark reports, Triton's choice: the median ranks the configs, the 20th and 80th percentiles show the
# spread.
_QUANTILES = (0.5, 0.2, 0.8)


class AutotunerError(errors.AutotunerError, RuntimeError):
    """Autotuning could not produce a config: every candidate failed to compile, or pruning left none. Triton's
    AutotunerError (a TritonError); a RuntimeError as well, as it was."""


class Config:
    """One candidate of an autotuned kernel: meta-parameters passed as keyword arguments, and launch options.

    `num_warps`, `num_stages`, `num_ctas` and `maxnreg` tune GPU code; the CPU backend accepts and ignores them.
    `pre_hook(args)` runs before every launch with this config (args: every argument by name, the config's
    included)."""

    def __init__(self, kwargs: dict[str, Any], num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg: int | None = None, pre_hook: Callable[[dict[str, Any]], Any] | None = None) -> None:
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict[str, Any]:
        """The meta-parameters and the launch options that are set, as keyword arguments of a launch."""
        options = {name: getattr(self, name) for name in LAUNCH_OPTIONS}
        return {**self.kwargs, **{name: value for name, value in options.items() if value is not None}}

    def _identity(self) -> tuple:
        return (*self.all_kwargs().items(), self.pre_hook)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Config):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __str__(self) -> str:
        parts = [f"{name}: {value}" for name, value in self.kwargs.items()]
        parts += [f"{name}: {getattr(self, name)}" for name in LAUNCH_OPTIONS]
        return ", ".join(parts)

    def __repr__(self) -> str:
        options = "".join(f", {name}={getattr(self, name)!r}" for name in LAUNCH_OPTIONS)
        # The hook by name, not by address: this repr keys the on-disk autotuning cache, shared across processes.
        hook = ""
        if self.pre_hook is not None:
            name = getattr(self.pre_hook, "__qualname__", type(self.pre_hook).__qualname__)
            hook = f", pre_hook={getattr(self.pre_hook, '__module__', '')}.{name}"
        return f"Config({self.kwargs!r}{options}{hook})"


def _base_jit_function(fn: Any) -> JITFunction:
    """The JITFunction under any stack of autotune/heuristics wrappers."""
    while not isinstance(fn, JITFunction):
        fn = fn.fn
    return fn


def _zero(array: Any) -> None:
    array[...] = 0  # numpy arrays and torch tensors alike


def _copy(array: Any) -> Any:
    return array.clone() if hasattr(array, "clone") else array.copy()


def _median_ms(result: Any) -> float:
    """A benchmark's ranking time: the median of `do_bench(..., quantiles=(0.5, 0.2, 0.8))`, or the single number that
    a user-supplied benchmark function may return instead."""
    return float(result[0]) if isinstance(result, (list, tuple)) else float(result)


def _one_line(error: BaseException) -> str:
    # Compilation errors start with the location and source line and end with the message: keep the message.
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[-1]}" if lines else type(error).__name__


class _KernelWrapper:
    """What Autotuner and Heuristics share with a JITFunction: launching with `wrapper[grid](...)` (through their
    `run`) and the name of the kernel they wrap (`fn`)."""

    fn: Any

    @property
    def __name__(self) -> str:
        return _base_jit_function(self.fn).__name__

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        # Subclasses define run(*args, grid=, warmup=, **kwargs) as JITFunction does.
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)  # type: ignore[attr-defined]


class Autotuner(_KernelWrapper):
    """A kernel launched like a JITFunction (`tuned[grid](*args, **kwargs)`) that runs the best of its configs for
    the values of its key arguments, measuring every config the first time a key is seen."""

    def __init__(self, fn: Any, arg_names: Sequence[str], configs: Sequence[Config], key: Sequence[str],
                 prune_configs_by: dict[str, Any] | None = None, reset_to_zero: Sequence[str] | None = None,
                 restore_value: Sequence[str] | None = None,
                 pre_hook: Callable[..., Any] | None = None, post_hook: Callable[..., Any] | None = None,
                 warmup: float | None = None, rep: float | None = None,
                 do_bench: Callable[..., Any] | None = None, cache_results: bool = False) -> None:
        self.fn = fn
        self.arg_names = list(arg_names)
        self.configs = list(configs) or [Config({})]
        self.keys = list(key)
        # The best config by target (knobs.target), then by key.
        self.caches: dict[str, dict[tuple, Config]] = {}
        self.cache_results = cache_results
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, Any] = {}
        self.bench_time = 0.0
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        for option, names in (("reset_to_zero", self.reset_to_zero), ("restore_value", self.restore_value)):
            unknown = [name for name in names if name not in self.arg_names]
            if unknown:
                raise ValueError(f"autotune {option}: {', '.join(unknown)} not among the arguments of "
                                 f"{self.__name__} ({', '.join(self.arg_names)})")
        unknown_keys = [name for name in self.keys if name not in self.arg_names]
        if unknown_keys:
            # Triton ignores such names silently; a key that is never seen is most likely a typo.
            warnings.warn(f"autotune key: {', '.join(unknown_keys)} not among the arguments of {self.__name__}, "
                          "ignored", stacklevel=3)
        # The hooks that bracket every benchmarked launch; user hooks replace the ones that zero and restore arrays.
        self.pre_hook = pre_hook or self._zero_and_save
        self.post_hook = post_hook or self._restore
        self._saved: dict[str, Any] = {}
        prune_configs_by = prune_configs_by or {}
        self.early_config_prune = prune_configs_by.get("early_config_prune")
        self.perf_model = prune_configs_by.get("perf_model")
        self.configs_top_k = prune_configs_by.get("top_k", 1.0)
        self.num_warmups = warmup
        self.num_reps = rep
        self.do_bench = do_bench or self._default_do_bench

    def __repr__(self) -> str:
        return f"Autotuner({self.fn!r}, {len(self.configs)} configs, key={self.keys})"

    def _default_do_bench(self, kernel_call: Callable[[], Any], quantiles: Sequence[float]) -> Any:
        from ..testing import do_bench
        return do_bench(kernel_call, warmup=25 if self.num_warmups is None else self.num_warmups,
                        rep=100 if self.num_reps is None else self.num_reps, quantiles=quantiles)

    def _zero_and_save(self, args: dict[str, Any], reset_only: bool = False) -> None:
        for name in self.reset_to_zero:
            if args.get(name) is not None:
                _zero(args[name])
        if not reset_only:
            self._saved = {name: _copy(args[name]) for name in self.restore_value if args.get(name) is not None}

    def _restore(self, args: dict[str, Any], exception: BaseException | None) -> None:
        for name, saved in self._saved.items():
            args[name][...] = saved
        self._saved = {}

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        """Picks the config for these arguments (tuning on a new key) and launches the kernel with it."""
        if len(self.configs) > 1:
            key = self._tuning_key(args, kwargs)
            config = self.cache.get(key)
            if config is None:
                config = self._tune(key, args, kwargs, grid)
        else:
            config = self.configs[0]
        self.best_config = config
        launch = self._merge(kwargs, config)
        if config.pre_hook is not None:
            config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config.all_kwargs()})
        return self.fn.run(*args, grid=grid, warmup=warmup, **launch)

    def warmup(self, *args: Any, **kwargs: Any) -> list[Any]:
        """Compiles every (pruned) config for these arguments without running; returns the compiled kernels."""
        return [self.fn.warmup(*args, **self._merge(kwargs, config)) for config in self.prune_configs(args, kwargs)]

    def _merge(self, kwargs: dict[str, Any], config: Config) -> dict[str, Any]:
        conflicts = kwargs.keys() & config.all_kwargs().keys()
        if conflicts:
            raise ValueError(f"{self.__name__}: {', '.join(sorted(conflicts))} passed at launch but also set by the "
                             "autotuner's configs; do not pass autotuned meta-parameters")
        return {**kwargs, **config.all_kwargs()}

    def _tuning_key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple:
        """Triton's key: the values of the key arguments, then the element type of every array argument (a kernel
        tuned for fp32 data is not assumed best for fp16)."""
        passed = {name: value for name, value in (*zip(self.arg_names, args), *kwargs.items())
                  if name in self.arg_names}
        key: list[Any] = [passed[name] for name in self.keys if name in passed]
        key += [str(value.dtype) for value in passed.values() if hasattr(value, "dtype")]
        return tuple(key)

    def prune_configs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Config]:
        """The configs worth measuring: `early_config_prune`'s choice, then the `top_k` best by `perf_model`."""
        named_args = dict(zip(self.arg_names, args))
        configs = self.configs
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(configs, named_args, **kwargs))
            if not configs:
                raise AutotunerError(f"{self.__name__}: early_config_prune left no config; it must return at least "
                                     "one")
        if self.perf_model is not None:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(self.configs) * top_k)  # a fraction of all configs, as Triton counts it
            elif not isinstance(top_k, int):
                raise TypeError(f"autotune top_k must be an int or a float <= 1.0, got {top_k!r}")
            if len(configs) > top_k:
                estimates = [self.perf_model(**named_args, **kwargs, **config.all_kwargs()) for config in configs]
                ranked = sorted(range(len(configs)), key=estimates.__getitem__)
                configs = [configs[i] for i in ranked[:top_k]]
        return configs

    def _tune(self, key: tuple, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any) -> Config:
        configs = self.prune_configs(args, kwargs)
        cache_file = self._cache_file(key, configs) if self.cache_results else None
        if cache_file is not None:
            config = self._load(cache_file, key, configs)
            if config is not None:
                self.cache[key] = config
                if knobs.print_autotuning or knobs.autotuning.print:
                    print(f"autotuning {self.__name__} for key {key}: best config {config} (from {cache_file})")
                return config
        start = time.perf_counter()
        timings: list[Any] = []  # per config: do_bench's result, or the exception that stopped it compiling
        for i, config in enumerate(configs, 1):
            print(f"autotuning {self.__name__} for key {key}: config {i}/{len(configs)} ({config})",
                  file=sys.stderr, flush=True)
            timings.append(self._bench(args, kwargs, grid, config))
        self.bench_time = time.perf_counter() - start
        measured = [i for i, t in enumerate(timings) if not isinstance(t, BaseException)]
        if not measured:
            reasons = "\n".join(f"  {config}: {_one_line(error)}" for config, error in zip(configs, timings))
            raise AutotunerError(f"autotuning {self.__name__} for key {key}: no config compiled\n{reasons}") \
                from timings[-1]
        best = min(measured, key=lambda i: _median_ms(timings[i]))
        config = configs[best]
        self.cache[key] = config
        self.configs_timings = {configs[i]: timings[i] for i in measured}
        # The winner's launch comes next: arrays that accumulate start from zero, as they did for every benchmark.
        self.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config.all_kwargs()}, reset_only=True)
        if knobs.print_autotuning or knobs.autotuning.print:
            print(f"autotuning {self.__name__} for key {key}: best config {config} "
                  f"({_median_ms(timings[best]):.4f} ms; {len(configs)} configs measured in {self.bench_time:.2f} s)")
        if cache_file is not None:
            self._store(cache_file, key, configs, timings, best)
        return config

    def _bench(self, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any, config: Config) -> Any:
        """do_bench's result for one config, or the exception that kept it from compiling."""
        launch = self._merge(kwargs, config)
        hook_args = {**dict(zip(self.arg_names, args)), **kwargs, **config.all_kwargs()}
        # Compiling first, apart from running, tells a config that cannot be built (skipped) from a kernel that fails
        # when it runs (an error to report).
        try:
            self.fn.run(*args, grid=grid, warmup=True, **launch)
        except Exception as e:
            print(f"autotuning {self.__name__}: skipping config ({config}): {_one_line(e)}", file=sys.stderr,
                  flush=True)
            return e

        def kernel_call() -> None:
            if config.pre_hook is not None:
                config.pre_hook(hook_args)
            self.pre_hook(hook_args)
            try:
                self.fn.run(*args, grid=grid, warmup=False, **launch)
            except Exception as e:
                self.post_hook(hook_args, e)
                raise
            self.post_hook(hook_args, None)

        return self.do_bench(kernel_call, quantiles=_QUANTILES)

    @property
    def cache(self) -> dict[tuple, Config]:
        """The best config found for each key, on the current target."""
        return self.caches.setdefault(knobs.target, {})

    def _cache_file(self, key: tuple, configs: Sequence[Config]) -> pathlib.Path:
        """Where the result for this key is kept: named by a hash of everything that decides it (the compiler
        version and build, the target (its code-changing description) and the thread count, the sources of the kernel and of the @jit functions it calls, the key
        and the configs)."""
        jit_fn = _base_jit_function(self.fn)
        from tessel import __version__
        parts = (__version__, _C.build_id(), _C.parse_target(knobs.target), _C.target_description(knobs.target),
                 str(_C.num_threads()),
                 *jit_fn._dependencies().sources, repr(key), *(repr(config) for config in configs))
        digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]
        return pathlib.Path(knobs.cache_dir) / "autotune" / f"{jit_fn.__name__[:100]}-{digest}.json"

    def _load(self, path: pathlib.Path, key: tuple, configs: Sequence[Config]) -> Config | None:
        """The config stored for this key, or None (no file, or one that does not describe these configs: it is
        rebuilt)."""
        try:
            data = json.loads(path.read_text())
            best = data["best"]
            if data["key"] == repr(key) and type(best) is int and 0 <= best < len(configs) and \
                    data["best_config"] == repr(configs[best]):
                return configs[best]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            pass
        print(f"autotuning {self.__name__}: ignoring unreadable or stale cache file {path}", file=sys.stderr)
        return None

    def _store(self, path: pathlib.Path, key: tuple, configs: Sequence[Config], timings: Sequence[Any],
               best: int) -> None:
        results = [{"config": repr(config), "error": _one_line(t)} if isinstance(t, BaseException) else
                   {"config": repr(config), "ms": t} for config, t in zip(configs, timings)]
        data = {"kernel": self.__name__, "key": repr(key), "best": best, "best_config": repr(configs[best]),
                "results": results}
        try:
            # Private directories, as the kernel cache (which shares cache_dir) requires of its own.
            path.parent.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            path.parent.mkdir(mode=0o700, exist_ok=True)
            # Written aside and renamed over: a concurrent reader sees the old file or the new one, never a part.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump(data, f, indent=1, default=str)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as e:
            # The tuned config is still used; only the next process has to tune again.
            print(f"autotuning {self.__name__}: could not write {path}: {e}", file=sys.stderr)


def autotune(configs: Sequence[Config], key: Sequence[str], prune_configs_by: dict[str, Any] | None = None,
             reset_to_zero: Sequence[str] | None = None, restore_value: Sequence[str] | None = None,
             pre_hook: Callable[..., Any] | None = None, post_hook: Callable[..., Any] | None = None,
             warmup: float | None = None, rep: float | None = None, do_bench: Callable[..., Any] | None = None,
             cache_results: bool = False) -> Callable[[Any], Autotuner]:
    """Decorator over a @jit function (or a @heuristics one): launches run the fastest of `configs`, measured on the
    real arguments the first time each value of the `key` arguments (and each set of array element types) is seen.

    - `prune_configs_by`: {"early_config_prune": f(configs, named_args, **kwargs) -> configs, "perf_model":
      f(**args, **config_kwargs) -> estimated time, "top_k": how many of the best estimates to measure (int, or a
      fraction of all configs)}.
    - `reset_to_zero` / `restore_value`: arguments zeroed before / restored after each measured launch, so that
      kernels that accumulate or update in place are tuned without corrupting their data. `pre_hook(args,
      reset_only=False)` and `post_hook(args, exception)` replace that behaviour.
    - `warmup`, `rep`: milliseconds of warm-up and of measurement per config for the default benchmark (25 and 100);
      `do_bench(kernel_call, quantiles)` replaces it.
    - `cache_results`: also keep the choice on disk, under `knobs.cache_dir / "autotune"`.
    """
    def decorator(fn: Any) -> Autotuner:
        return Autotuner(fn, fn.arg_names, configs, key, prune_configs_by=prune_configs_by,
                         reset_to_zero=reset_to_zero, restore_value=restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, warmup=warmup, rep=rep, do_bench=do_bench, cache_results=cache_results)
    return decorator


class Heuristics(_KernelWrapper):
    """A kernel whose meta-parameters are computed from the other arguments at every launch."""

    def __init__(self, fn: Any, arg_names: Sequence[str], values: dict[str, Callable[[dict[str, Any]], Any]]) -> None:
        self.fn = fn
        self.arg_names = list(arg_names)
        self.values = dict(values)

    def __repr__(self) -> str:
        return f"Heuristics({self.fn!r}, {sorted(self.values)})"

    def _with_values(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        named = {**dict(zip(self.arg_names, args)), **kwargs}
        for name, rule in self.values.items():
            # In order: a rule sees the values computed before it.
            named[name] = kwargs[name] = rule(named)
        return kwargs

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        return self.fn.run(*args, grid=grid, warmup=warmup, **self._with_values(args, kwargs))

    def warmup(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn.warmup(*args, **self._with_values(args, kwargs))


def heuristics(values: dict[str, Callable[[dict[str, Any]], Any]]) -> Callable[[Any], Heuristics]:
    """Decorator over a @jit function (or an autotuned one): `values` maps a meta-parameter's name to a function of
    the dict of the launch's arguments (by name) that computes it, e.g. {"BLOCK": lambda args:
    tessel.next_power_of_2(args["n"])}."""
    def decorator(fn: Any) -> Heuristics:
        return Heuristics(fn, fn.arg_names, values)
    return decorator
