"""Triton kernels whose PTX the simulator tests run, and a command that compiles one of them to PTX for sm_80 (or,
with "capability": 90, sm_90a; with "chip": "gfx942", the AMDGCN for that AMD chip) without a GPU. It runs in a child process (see test_gpusim_triton.compile_ptx): other test modules use Triton's interpreter,
a process-wide mode of Triton's that its compiler cannot share a process with.

    python triton_ptx_kernels.py '{"kernel": ..., "signature": {...}, "constexprs": {...}, "num_warps": 4,
                                   "num_stages": 3, "divisible_by_16": [argument names], "capability": 80,
                                   "debug": false}'
prints {"ptx": ..., "num_warps": ..., "shared": ..., "tensordesc_meta": ..., "global_scratch_size": ...} as JSON
(tensordesc_meta: what Triton's launcher needs to build the tensor maps of host-side tensor descriptors).
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


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Triton's tutorial 03 matmul (grouped ordering, masked edges); c gets c_ptr's element type.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    # int8 sums in int32, floats in fp32.
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32 if a_ptr.dtype.element_ty == tl.int8 else tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=acc.dtype)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Triton's tutorial 06 forward pass, simplified: no causal stage, [batch*heads, N_CTX, HEAD_DIM] contiguous
    # tensors, N_CTX a multiple of both blocks; the same online softmax in base 2 and the same two dots.
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz.to(tl.int64) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * HEAD_DIM + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(Out.type.element_ty))


@triton.jit
def matmul_tma_host(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr):
    # Host-side tensor descriptors (triton.tools.tensor_descriptor.TensorDescriptor): TMA loads and store.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k])
        b = b_desc.load([k, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))


@triton.jit
def matmul_tma_device(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    # Device-side tensor descriptors: built in shared memory with tensormap.replace, copied to the global scratch
    # buffer, then used by TMA; the box edges of M, N and K not multiples of the blocks are zero-filled/clipped.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k])
        b = b_desc.load([k, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))


@triton.jit
def half_ops(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # fp16/bf16 element-wise arithmetic: Triton keeps it in 16 bits (fma.rn.f16, max.f16, abs.f16, ...).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    r = x * y + x
    r = tl.maximum(r, y) - tl.abs(x)
    tl.store(out_ptr + offs, r, mask=mask)


@triton.jit
def fp8_roundtrip(x_ptr, out_ptr, q_ptr, n, BLOCK: tl.constexpr):
    # f32 -> float8e4nv (sm_89: cvt to e4m3x2) -> f32.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    q = tl.load(x_ptr + offs, mask=mask).to(tl.float8e4nv)
    tl.store(q_ptr + offs, q, mask=mask)
    tl.store(out_ptr + offs, q.to(tl.float32), mask=mask)


@triton.jit
def attn_fwd_tma(desc_q, desc_k, desc_v, desc_o, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    # attn_fwd through host-side tensor descriptors over [batch*heads*N_CTX, HEAD_DIM] tensors, as tutorial 06
    # does on Hopper: TMA loads of Q, K and V, a TMA store of the output.
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset_y = off_hz * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    q = desc_q.load([qo_offset_y, 0])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = desc_k.load([offset_y + start_n, 0]).T
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = desc_v.load([offset_y + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    desc_o.store([qo_offset_y, 0], acc.to(tl.float16))


@triton.jit
def atomics_kernel(x_ptr, idx_ptr, hist_ptr, fsum_ptr, mx_ptr, h16_ptr, n, BLOCK: tl.constexpr):
    # Scattered atomics: a histogram, per-bin f32 and f16 sums and an int32 maximum.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    i = tl.load(idx_ptr + offs, mask=mask)
    tl.atomic_add(hist_ptr + i, 1, mask=mask)
    tl.atomic_add(fsum_ptr + i, x, mask=mask)
    tl.atomic_max(mx_ptr + i, (x * 1000).to(tl.int32), mask=mask)
    tl.atomic_add(h16_ptr + i, x.to(tl.float16), mask=mask)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PRECISION: tl.constexpr):
    # One tile: C = A @ B for int8 (int32 out) or fp32 (tf32 tensor cores with PRECISION="tf32").
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, K)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c)


@triton.jit
def matmul_tma_persistent(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    # Tutorial 09's persistent TMA matmul, simplified: NUM_SMS programs loop over the output tiles (one flattened
    # pipelined loop, so mbarrier phases carry over from tile to tile); B is given as [N, K].
    start_pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = tl.cdiv(M, BLOCK_M) * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, ki * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))


@triton.jit
def dot_tile(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, INT: tl.constexpr):
    # One M x N tile of a row-major A (M x K) times B (K x N) with the accumulator type of the output: fp16
    # accumulation for a *fp16 c_ptr, int32 for INT (8-bit integer inputs).
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, K)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
    if INT:
        c = tl.dot(a, b, out_dtype=tl.int32)
    else:
        c = tl.dot(a, b, out_dtype=c_ptr.dtype.element_ty)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c)


@triton.jit
def print_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.device_print("x", x)
    tl.device_print("xy ", x, y, hex=True)
    tl.device_print("fp", y.to(tl.float32) * 0.25)


@triton.jit
def assert_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x < n, "x below n")
    tl.store(x_ptr + offs, x + 1)


@triton.jit
def print_4d_kernel(x_ptr, PREFIX: tl.constexpr):
    # A [2, 2, 2, 16] block printed with a long prefix: each line has eight arguments (pid, four indices, the value)
    # and a format string longer than one hostcall packet carries.
    i = (tl.arange(0, 2)[:, None, None, None] * 64 + tl.arange(0, 2)[None, :, None, None] * 32
         + tl.arange(0, 2)[None, None, :, None] * 16 + tl.arange(0, 16)[None, None, None, :])
    tl.device_print(PREFIX, tl.load(x_ptr + tl.program_id(0) * 128 + i))


@triton.jit
def e4b15_kernel(byte_ptr, half_ptr, up_ptr, down_ptr, down32_ptr, N: tl.constexpr, SM70: tl.constexpr):
    # Triton's fp8e4b15 conversions (tl.extra.cuda.convert_custom_float8_sm80/_sm70): bytes up to fp16 and fp32,
    # fp16 and fp32 down to bytes.
    offs = tl.program_id(0) * N + tl.arange(0, N)
    b = tl.load(byte_ptr + offs).to(tl.float8e4b15, bitcast=True)
    h = tl.load(half_ptr + offs)
    f = h.to(tl.float32) * 1.0009765625
    if SM70:
        tl.store(up_ptr + offs, tl.extra.cuda.convert_custom_float8_sm70(b, tl.float32))
        d = tl.extra.cuda.convert_custom_float8_sm70(h, tl.float8e4b15)
        d32 = tl.extra.cuda.convert_custom_float8_sm70(f, tl.float8e4b15)
    else:
        tl.store(up_ptr + offs, tl.extra.cuda.convert_custom_float8_sm80(b, tl.float32))
        d = tl.extra.cuda.convert_custom_float8_sm80(h, tl.float8e4b15)
        d32 = tl.extra.cuda.convert_custom_float8_sm80(f, tl.float8e4b15)
    tl.store(down_ptr + offs, d.to(tl.uint8, bitcast=True))
    tl.store(down32_ptr + offs, d32.to(tl.uint8, bitcast=True))


def main() -> None:
    request = json.loads(sys.argv[1])
    fn = globals()[request["kernel"]]
    # "divisible_by_16": arguments to compile as multiples of 16 (pointers 16-byte aligned), as Triton's launcher
    # specializes them; that is what lets it pipeline loads with cp.async.
    attrs = {(fn.arg_names.index(name),): [["tt.divisibility", 16]] for name in request.get("divisible_by_16", [])}
    src = triton.compiler.ASTSource(fn=fn, signature=request["signature"], constexprs=request["constexprs"],
                                    attrs=attrs)
    options = {"num_warps": request["num_warps"], "num_stages": request.get("num_stages", 3)}
    if request.get("debug"):
        options["debug"] = True  # device assertions
    if "chip" in request:  # AMD: the AMDGCN assembly for a CDNA chip
        kernel = triton.compile(src, target=GPUTarget("hip", request["chip"], 64), options=options)
        print(json.dumps({"amdgcn": kernel.asm["amdgcn"], "num_warps": kernel.metadata.num_warps,
                          "shared": kernel.metadata.shared, "name": kernel.metadata.name}))
        return
    kernel = triton.compile(src, target=GPUTarget("cuda", request.get("capability", 80), 32), options=options)
    print(json.dumps({"ptx": kernel.asm["ptx"], "num_warps": kernel.metadata.num_warps,
                      "shared": kernel.metadata.shared,
                      "tensordesc_meta": getattr(kernel.metadata, "tensordesc_meta", None) or [],
                      "global_scratch_size": kernel.metadata.global_scratch_size}))


if __name__ == "__main__":
    main()
