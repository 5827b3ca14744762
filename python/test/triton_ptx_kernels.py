"""Triton kernels whose PTX the simulator tests run, and a command that compiles one of them to PTX for sm_80 without
a GPU. It runs in a child process (see test_gpusim_triton.compile_ptx): other test modules use Triton's interpreter,
a process-wide mode of Triton's that its compiler cannot share a process with.

    python triton_ptx_kernels.py '{"kernel": ..., "signature": {...}, "constexprs": {...}, "num_warps": 4}'
prints {"ptx": ..., "num_warps": ..., "shared": ...} as JSON.
"""
import json
import os
import sys

os.environ.pop("TRITON_INTERPRET", None)
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_stride + offs, mask=offs < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, num / den, mask=offs < n_cols)


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    # Triton's tutorial 05 forward pass.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def strided_load(x_ptr, out_ptr, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * STRIDE))


def main() -> None:
    request = json.loads(sys.argv[1])
    src = triton.compiler.ASTSource(fn=globals()[request["kernel"]], signature=request["signature"],
                                    constexprs=request["constexprs"])
    kernel = triton.compile(src, target=GPUTarget("cuda", 80, 32), options={"num_warps": request["num_warps"]})
    print(json.dumps({"ptx": kernel.asm["ptx"], "num_warps": kernel.metadata.num_warps,
                      "shared": kernel.metadata.shared}))


if __name__ == "__main__":
    main()
