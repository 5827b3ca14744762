"""
Tutorial 6: fused attention, forward and backward
=================================================

softmax(Q K^T * scale) V for every batch and head, causal or not, without ever writing the N_CTX x N_CTX score
matrix to memory (FlashAttention's idea, in its second version's work split).

Forward. A program owns BLOCK_M rows of queries. It walks the keys and values in blocks of BLOCK_N, computes the
block of scores with one ``tl.dot``, and keeps for each row a running maximum ``m``, a running sum of
exponentials ``l`` and an output accumulator: when a new block raises a row's maximum, what was accumulated is
rescaled by ``exp(old - new)``. At the end the accumulator divided by ``l`` is the output; ``m + log(l)``, the
log-sum-exp of each row, is kept for the backward pass. Exponentials are ``exp2`` of scores pre-multiplied by
log2(e), which is what GPUs compute natively.

Backward. With P = softmax(S) recomputed block by block from the saved log-sum-exp, and D = rowsum(dO * O):
dV = P^T dO, dP = dO V^T, dS = P * (dP - D), dQ = dS K * scale, dK = dS^T Q * scale. One kernel owns a block of
keys and accumulates its dK and dV over all the queries; another owns a block of queries and accumulates its dQ
over all the keys, so no two programs write the same output and no atomics are needed.

Causal attention masks every key after its query: the forward stops at the diagonal block and masks inside it.

New here: several kernels working together, a running (online) softmax, ``tl.trans`` operands of ``tl.dot``,
``exp2``, and a 4-D tensor passed with its strides.

Run: ``python tutorials/06-fused-attention.py``
"""
import math

import numpy as np

import tessel as triton
import tessel.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def attention_forward(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, scale, n_ctx,
                      stride_b, stride_h, stride_n, n_heads,
                      HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    base = (bh // n_heads) * stride_b + (bh % n_heads) * stride_h
    rows = start_m + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + rows[:, None] * stride_n + dims[None, :], mask=rows[:, None] < n_ctx, other=0.0)
    qk_scale = scale * 1.4426950408889634  # scores in base 2: exp(x) = exp2(x * log2(e))

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    # Causal: the keys after the block's last query never count.
    end_n = tl.minimum(start_m + BLOCK_M, n_ctx) if CAUSAL else n_ctx
    for start_n in range(0, end_n, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + cols[:, None] * stride_n + dims[None, :], mask=cols[:, None] < n_ctx, other=0.0)
        v = tl.load(v_ptr + base + cols[:, None] * stride_n + dims[None, :], mask=cols[:, None] < n_ctx, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        keep = cols[None, :] < n_ctx
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        # A row with every key masked so far keeps -inf: exp2(-inf - -inf) would be NaN.
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.exp2(s - m_safe[:, None])
        alpha = tl.exp2(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + rows[:, None] * stride_n + dims[None, :], out.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < n_ctx)
    # Log-sum-exp of each row's scaled scores, in base 2 (as the backward pass recomputes them).
    tl.store(lse_ptr + bh * n_ctx + rows, m_i + tl.log2(l_i), mask=rows < n_ctx)


@triton.jit
def attention_backward_delta(o_ptr, do_ptr, delta_ptr, n_ctx, stride_b, stride_h, stride_n, n_heads,
                             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    bh = tl.program_id(1)
    base = (bh // n_heads) * stride_b + (bh % n_heads) * stride_h
    offs = base + rows[:, None] * stride_n + tl.arange(0, HEAD_DIM)[None, :]
    o = tl.load(o_ptr + offs, mask=rows[:, None] < n_ctx, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offs, mask=rows[:, None] < n_ctx, other=0.0).to(tl.float32)
    tl.store(delta_ptr + bh * n_ctx + rows, tl.sum(o * do, 1), mask=rows < n_ctx)


@triton.jit
def attention_backward_dkdv(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, scale, n_ctx,
                            stride_b, stride_h, stride_n, n_heads,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            CAUSAL: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1)
    base = (bh // n_heads) * stride_b + (bh % n_heads) * stride_h
    cols = start_n + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    kv_offs = base + cols[:, None] * stride_n + dims[None, :]
    k = tl.load(k_ptr + kv_offs, mask=cols[:, None] < n_ctx, other=0.0)
    v = tl.load(v_ptr + kv_offs, mask=cols[:, None] < n_ctx, other=0.0)
    qk_scale = scale * 1.4426950408889634
    dk = tl.zeros((BLOCK_N, HEAD_DIM), tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), tl.float32)
    # Causal: only the queries at or after the block's first key see it.
    start_m0 = (start_n // BLOCK_M) * BLOCK_M if CAUSAL else 0
    for start_m in range(start_m0, n_ctx, BLOCK_M):
        rows = start_m + tl.arange(0, BLOCK_M)
        q_offs = base + rows[:, None] * stride_n + dims[None, :]
        q = tl.load(q_ptr + q_offs, mask=rows[:, None] < n_ctx, other=0.0)
        do = tl.load(do_ptr + q_offs, mask=rows[:, None] < n_ctx, other=0.0)
        lse = tl.load(lse_ptr + bh * n_ctx + rows, mask=rows < n_ctx, other=0.0)
        delta = tl.load(delta_ptr + bh * n_ctx + rows, mask=rows < n_ctx, other=0.0)
        # P^T, keys by queries.
        st = tl.dot(k, tl.trans(q)) * qk_scale
        keep = (rows[None, :] < n_ctx) & (cols[:, None] < n_ctx)
        if CAUSAL:
            keep = keep & (cols[:, None] <= rows[None, :])
        pt = tl.where(keep, tl.exp2(st - lse[None, :]), 0.0)
        dv += tl.dot(pt.to(do.dtype), do)
        dpt = tl.dot(v, tl.trans(do))
        dst = pt * (dpt - delta[None, :])
        dk += tl.dot(dst.to(q.dtype), q)
    tl.store(dk_ptr + kv_offs, (dk * scale).to(dk_ptr.dtype.element_ty), mask=cols[:, None] < n_ctx)
    tl.store(dv_ptr + kv_offs, dv.to(dv_ptr.dtype.element_ty), mask=cols[:, None] < n_ctx)


@triton.jit
def attention_backward_dq(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, scale, n_ctx,
                          stride_b, stride_h, stride_n, n_heads,
                          HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    base = (bh // n_heads) * stride_b + (bh % n_heads) * stride_h
    rows = start_m + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_offs = base + rows[:, None] * stride_n + dims[None, :]
    q = tl.load(q_ptr + q_offs, mask=rows[:, None] < n_ctx, other=0.0)
    do = tl.load(do_ptr + q_offs, mask=rows[:, None] < n_ctx, other=0.0)
    lse = tl.load(lse_ptr + bh * n_ctx + rows, mask=rows < n_ctx, other=0.0)
    delta = tl.load(delta_ptr + bh * n_ctx + rows, mask=rows < n_ctx, other=0.0)
    qk_scale = scale * 1.4426950408889634
    dq = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    end_n = tl.minimum(start_m + BLOCK_M, n_ctx) if CAUSAL else n_ctx
    for start_n in range(0, end_n, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        kv_offs = base + cols[:, None] * stride_n + dims[None, :]
        k = tl.load(k_ptr + kv_offs, mask=cols[:, None] < n_ctx, other=0.0)
        v = tl.load(v_ptr + kv_offs, mask=cols[:, None] < n_ctx, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        keep = (cols[None, :] < n_ctx) & (rows[:, None] < n_ctx)
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None])
        p = tl.where(keep, tl.exp2(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)
    tl.store(dq_ptr + q_offs, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < n_ctx)


def _blocks():
    # Small blocks on a simulated GPU keep its runs short; the CPU and real GPUs prefer larger ones.
    return (32, 32) if triton.knobs.target.startswith("sim") else (64, 64)


def attention(q, k, v, causal: bool, scale: float):
    """Forward: (O, lse) for q, k, v of shape [batch, heads, n_ctx, head_dim] (contiguous, one dtype)."""
    Z, H, N, D = q.shape
    o = np.empty_like(q)
    lse = np.empty((Z * H, N), np.float32)
    block_m, block_n = _blocks()
    strides = [s // q.itemsize for s in q.strides[:3]]
    attention_forward[(triton.cdiv(N, block_m), Z * H)](q, k, v, o, lse, scale, N, *strides, H, HEAD_DIM=D,
                                                        BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal)
    return o, lse


def attention_backward(q, k, v, o, lse, do, causal: bool, scale: float):
    """Backward: (dQ, dK, dV) for the forward's inputs, output and log-sum-exp, and the output's gradient do."""
    Z, H, N, D = q.shape
    block_m, block_n = _blocks()
    strides = [s // q.itemsize for s in q.strides[:3]]
    delta = np.empty((Z * H, N), np.float32)
    attention_backward_delta[(triton.cdiv(N, block_m), Z * H)](o, do, delta, N, *strides, H, HEAD_DIM=D,
                                                               BLOCK_M=block_m)
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    attention_backward_dkdv[(triton.cdiv(N, block_n), Z * H)](q, k, v, do, lse, delta, dk, dv, scale, N, *strides,
                                                              H, HEAD_DIM=D, BLOCK_M=block_m, BLOCK_N=block_n,
                                                              CAUSAL=causal)
    attention_backward_dq[(triton.cdiv(N, block_m), Z * H)](q, k, v, do, lse, delta, dq, scale, N, *strides, H,
                                                            HEAD_DIM=D, BLOCK_M=block_m, BLOCK_N=block_n,
                                                            CAUSAL=causal)
    return dq, dk, dv


def numpy_attention(q, k, v, do, causal: bool, scale: float):
    """Reference forward and backward in float64: (O, dQ, dK, dV)."""
    q, k, v, do = (x.astype(np.float64) for x in (q, k, v, do))
    s = np.einsum("zhmd,zhnd->zhmn", q, k) * scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = p @ v
    dv = np.einsum("zhmn,zhmd->zhnd", p, do)
    dp = do @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    dq = ds @ k * scale
    dk = np.einsum("zhmn,zhmd->zhnd", ds, q) * scale
    return o, dq, dk, dv


# %%
# Correctness: causal and not, a context length that is not a multiple of the blocks, fp16 inputs; the forward
# output and the three gradients against numpy in float64.

def check() -> None:
    rng = np.random.default_rng(0)
    sim = triton.knobs.target.startswith("sim")
    shapes = [(1, 2, 80, 32)] if sim else [(2, 3, 200, 64)]
    for Z, H, N, D in shapes:
        for causal in (False, True):
            q, k, v, do = (rng.standard_normal((Z, H, N, D)).astype(np.float16) for _ in range(4))
            scale = 1.0 / math.sqrt(D)
            o, lse = attention(q, k, v, causal, scale)
            dq, dk, dv = attention_backward(q, k, v, o, lse, do, causal, scale)
            ref = numpy_attention(q, k, v, do, causal, scale)
            for name, got, want in zip(("O", "dQ", "dK", "dV"), (o, dq, dk, dv), ref):
                np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-2, atol=2e-2,
                                           err_msg=f"{name}, causal={causal}, {Z}x{H}x{N}x{D}")
    print("OK")


# %%
# Speed: the forward pass in TFLOP/s-style units (4 n_ctx^2 head_dim flops per batch and head, half of it for
# causal attention) against a numpy implementation of the same formula.

def benchmark() -> None:
    rng = np.random.default_rng(1)
    print("\nfp16 attention forward; GFLOP/s = 4 N^2 D Z H / median time (halved when causal)")
    print(f"{'Z H N D':>16}  {'causal':>6}  {'Tessel':>8}  {'numpy':>8}  {'Tessel/numpy':>12}")
    for Z, H, N, D in [(1, 4, 512, 64), (1, 4, 1024, 64)]:
        q, k, v = (rng.standard_normal((Z, H, N, D)).astype(np.float16) for _ in range(3))
        q32, k32, v32 = (x.astype(np.float32) for x in (q, k, v))
        for causal in (False, True):
            flops = 4 * N * N * D * Z * H * (0.5 if causal else 1.0)
            ms = triton.testing.do_bench(lambda: attention(q, k, v, causal, 0.125), warmup=3, rep=100,
                                         return_mode="median")

            def numpy_forward():
                s = q32 @ np.swapaxes(k32, -1, -2) * 0.125
                if causal:
                    s = np.where(np.tril(np.ones((N, N), bool)), s, -np.inf)
                p = np.exp(s - s.max(-1, keepdims=True))
                return (p / p.sum(-1, keepdims=True)) @ v32

            ms_np = triton.testing.do_bench(numpy_forward, warmup=3, rep=100, return_mode="median")
            print(f"{f'{Z} {H} {N} {D}':>16}  {str(causal):>6}  {flops / ms / 1e6:>8.1f}  {flops / ms_np / 1e6:>8.1f}"
                  f"  {ms_np / ms:>11.2f}x")


def main() -> None:
    check()
    benchmark()


if __name__ == "__main__":
    main()
