"""Block pointers (tl.make_block_ptr, tl.advance, tl.load/tl.store with boundary_check and padding_option) on every
target, against numpy: matmuls that advance block pointers in their K loop (row- and column-major operands, ragged
shapes), blocks at any offsets with each subset of checked dimensions and each padding, stores that write only inside
the array, block pointers carried by for and while loops and merged by ifs; Triton's interpreter for the padding and
bool cases; Triton's errors for misuse, at the kernel's line."""
import numpy as np
import pytest

from triton_oracle import Both, bits

import tessel
import tessel.language as tl


def block_of(array, offsets, block, fill, checked):
    """numpy's reading of the block of `array` at `offsets`: `fill` where an index of a checked dimension falls
    outside the array (the unchecked ones are inside in these tests)."""
    out = np.full(block, fill, dtype=array.dtype)
    src, dst = [], []
    for d, (offset, size, extent) in enumerate(zip(offsets, block, array.shape)):
        if d not in checked:
            assert 0 <= offset and offset + size <= extent
        lo, hi = max(offset, 0), min(offset + size, extent)
        if lo >= hi:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - offset, hi - offset))
    out[tuple(dst)] = array[tuple(src)]
    return out


# ------------------------------------------------------------------------------------------------------- matmul


@tessel.jit
def matmul_kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, A_ORDER: tl.constexpr,
                  B_ORDER: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_ptr = tl.make_block_ptr(base=A, shape=(M, K), strides=(stride_am, stride_ak), offsets=(pid_m * BM, 0),
                              block_shape=(BM, BK), order=A_ORDER)
    b_ptr = tl.make_block_ptr(base=B, shape=(K, N), strides=(stride_bk, stride_bn), offsets=(0, pid_n * BN),
                              block_shape=(BK, BN), order=B_ORDER)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_ptr, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptr = tl.advance(a_ptr, (0, BK))
        b_ptr = tl.advance(b_ptr, [BK, 0])
    c_ptr = tl.make_block_ptr(C, (M, N), (stride_cm, stride_cn), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_ptr, acc.to(C.dtype.element_ty), boundary_check=(0, 1))


@pytest.mark.parametrize("M,N,K", [(64, 64, 64), (70, 45, 100), (17, 33, 19)], ids=["whole", "ragged", "small"])
@pytest.mark.parametrize("layout", ["row-row", "col-row", "row-col"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_matmul_advances_block_pointers_in_its_k_loop(rng, M, N, K, layout, dtype):
    a = rng.uniform(-1, 1, (M, K)).astype(dtype)
    b = rng.uniform(-1, 1, (K, N)).astype(dtype)
    # A column-major operand is the transpose of a row-major array: its strides swap and its order is (0, 1).
    a_mem = np.asfortranarray(a) if layout.startswith("col") else a
    b_mem = np.asfortranarray(b) if layout.endswith("col") else b
    a_order = (0, 1) if layout.startswith("col") else (1, 0)
    b_order = (0, 1) if layout.endswith("col") else (1, 0)
    c = np.full((M, N), -7, np.float32)
    item = a.itemsize
    BM, BN, BK = 32, 32, 16
    matmul_kernel[(tessel.cdiv(M, BM), tessel.cdiv(N, BN))](
        a_mem, b_mem, c, M, N, K, a_mem.strides[0] // item, a_mem.strides[1] // item, b_mem.strides[0] // item,
        b_mem.strides[1] // item, N, 1, BM=BM, BN=BN, BK=BK, A_ORDER=a_order, B_ORDER=b_order)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * K)


@tessel.jit
def attention_forward(Q, K, V, Out, sm_scale, N_CTX, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    # The shape of the published block-pointer flash attention: K read transposed through order (0, 1), K and V
    # advanced each iteration, an online softmax.
    start_m = tl.program_id(0)
    q_ptr = tl.make_block_ptr(Q, (N_CTX, D), (D, 1), (start_m * BM, 0), (BM, D), (1, 0))
    kt_ptr = tl.make_block_ptr(K, (D, N_CTX), (1, D), (0, 0), (D, BN), (0, 1))
    v_ptr = tl.make_block_ptr(V, (N_CTX, D), (D, 1), (0, 0), (BN, D), (1, 0))
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    q = tl.load(q_ptr, boundary_check=(0,), padding_option="zero")
    for start_n in range(0, N_CTX, BN):
        kt = tl.load(kt_ptr, boundary_check=(1,), padding_option="zero")
        qk = tl.dot(q, kt, input_precision="ieee") * sm_scale
        qk = tl.where((start_n + tl.arange(0, BN))[None, :] < N_CTX, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        v = tl.load(v_ptr, boundary_check=(0,), padding_option="zero")
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new
        kt_ptr = tl.advance(kt_ptr, (0, BN))
        v_ptr = tl.advance(v_ptr, (BN, 0))
    o_ptr = tl.make_block_ptr(Out, (N_CTX, D), (D, 1), (start_m * BM, 0), (BM, D), (1, 0))
    tl.store(o_ptr, acc / l_i[:, None], boundary_check=(0,))


@pytest.mark.parametrize("n_ctx", [64, 100])
def test_flash_attention_with_block_pointers(rng, n_ctx):
    D, BM, BN = 32, 32, 32
    q, k, v = (rng.standard_normal((n_ctx, D)).astype(np.float32) for _ in range(3))
    out = np.zeros_like(q)
    scale = 1 / np.sqrt(D)
    attention_forward[(tessel.cdiv(n_ctx, BM),)](q, k, v, out, scale, n_ctx, D=D, BM=BM, BN=BN)
    scores = (q.astype(np.float64) @ k.T.astype(np.float64)) * scale
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    want = (weights / weights.sum(axis=1, keepdims=True)) @ v
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------------------------ loads at any offsets


@tessel.jit
def read_block_2d(X, Out, M, N, stride_m, stride_n, om, on, BM: tl.constexpr, BN: tl.constexpr,
                  CHECK: tl.constexpr, PADDING: tl.constexpr):
    ptr = tl.make_block_ptr(X, (M, N), (stride_m, stride_n), (om, on), (BM, BN), (1, 0))
    block = tl.load(ptr, boundary_check=CHECK, padding_option=PADDING)
    tl.store(Out + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], block)


CASES_2D = [
    ((0, 0), (0, 1)), ((-5, 3), (0, 1)), ((20, 30), (0, 1)), ((-20, -20), (0, 1)),  # inside, before, after, outside
    ((-3, 0), (0,)), ((20, 0), (0,)),  # rows checked only (the columns inside)
    ((0, 30), (1,)), ((4, -9), (1,)),  # columns checked only
    ((2, 5), ()),  # nothing checked, inside
]


@pytest.mark.parametrize("offsets,check", CASES_2D)
@pytest.mark.parametrize("padding", ["zero", "nan"])
def test_loads_pad_the_checked_dimensions(rng, offsets, check, padding):
    M, N, BM, BN = 24, 40, 16, 16
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.full((BM, BN), 7.0, np.float32)
    read_block_2d[(1,)](x, out, M, N, N, 1, *offsets, BM=BM, BN=BN, CHECK=check, PADDING=padding)
    fill = 0.0 if padding == "zero" else np.nan
    np.testing.assert_array_equal(out, block_of(x, offsets, (BM, BN), fill, check))


def test_a_load_without_padding_reads_the_elements_inside(rng):
    # Triton leaves the padding undefined without padding_option: only the elements inside are compared.
    M, N, BM, BN = 24, 40, 16, 16
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.zeros((BM, BN), np.float32)
    read_block_2d[(1,)](x, out, M, N, N, 1, 20, -3, BM=BM, BN=BN, CHECK=(0, 1), PADDING="")
    np.testing.assert_array_equal(out[:4, 3:], x[20:, :13])


def test_strided_and_transposed_views(rng):
    # Every other column of a wider array, read through its transpose's strides (order (0, 1)).
    M, N, BM, BN = 12, 20, 16, 8
    wide = rng.standard_normal((N, 2 * M)).astype(np.float32)
    x = wide[:, ::2].T  # M x N, strides (2, 2 M) elements
    out = np.zeros((BM, BN), np.float32)
    read_block_2d[(1,)](wide, out, M, N, 2, 2 * M, -2, 14, BM=BM, BN=BN, CHECK=(0, 1), PADDING="zero")
    np.testing.assert_array_equal(out, block_of(np.ascontiguousarray(x), (-2, 14), (BM, BN), 0.0, (0, 1)))


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "float16", "float64"])
def test_loads_of_other_element_types(rng, dtype):
    M, N, BM, BN = 10, 9, 16, 16
    x = (rng.standard_normal((M, N)) * 50).astype(dtype)
    out = np.full((BM, BN), 3, dtype)
    read_block_2d[(1,)](x, out, M, N, N, 1, -2, 1, BM=BM, BN=BN, CHECK=(0, 1), PADDING="zero")
    np.testing.assert_array_equal(out, block_of(x, (-2, 1), (BM, BN), 0, (0, 1)))


@tessel.jit
def read_block_1d(X, Out, N, stride, offset, B: tl.constexpr):
    ptr = tl.make_block_ptr(X, shape=[N], strides=[stride], offsets=[offset], block_shape=[B], order=[0])
    tl.store(Out + tl.arange(0, B), tl.load(ptr, boundary_check=[0], padding_option="nan"))


@pytest.mark.parametrize("offset", [0, -10, 25, 100])
def test_one_dimensional_block_pointers(rng, offset):
    x = rng.standard_normal(40).astype(np.float32)
    out = np.zeros(32, np.float32)
    read_block_1d[(1,)](x, out, 40, 1, offset, B=32)
    np.testing.assert_array_equal(out, block_of(x, (offset,), (32,), np.nan, (0,)))


@tessel.jit
def copy_block_3d(X, Y, D0, D1, D2, s0, s1, o0, o1, o2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    src = tl.make_block_ptr(X, (D0, D1, D2), (s0, s1, 1), (o0, o1, o2), (B0, B1, B2), (2, 1, 0))
    dst = tl.make_block_ptr(Y, (D0, D1, D2), (s0, s1, 1), (o0, o1, o2), (B0, B1, B2), (2, 1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1, 2), padding_option="zero") + 1, boundary_check=(0, 1, 2))


def test_three_dimensional_blocks_read_and_write_inside(rng):
    shape = (5, 6, 7)
    x = rng.standard_normal(shape).astype(np.float32)
    y = np.zeros(shape, np.float32)
    offsets = (-1, 2, 3)
    copy_block_3d[(1,)](x, y, *shape, 42, 7, *offsets, B0=4, B1=8, B2=4)
    want = np.zeros(shape, np.float32)
    want[0:3, 2:6, 3:7] = x[0:3, 2:6, 3:7] + 1
    np.testing.assert_array_equal(y, want)


# ---------------------------------------------------------------------------------------------------- stores


@tessel.jit
def write_block(Y, M, N, om, on, BM: tl.constexpr, BN: tl.constexpr, CHECK: tl.constexpr):
    ptr = tl.make_block_ptr(Y, (M, N), (N, 1), (om, on), (BM, BN), (1, 0))
    value = (tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]).to(tl.float32)
    tl.store(ptr, value, boundary_check=CHECK)


@pytest.mark.parametrize("offsets,check", [((0, 0), (0, 1)), ((-5, 30), (0, 1)), ((20, 2), (0,)),
                                           ((3, -6), (1,)), ((4, 8), ())])
def test_stores_write_only_inside_the_checked_dimensions(offsets, check):
    M, N, BM, BN = 24, 40, 16, 16
    # The array sits inside a larger buffer: a store past its rows would land in the guard rows.
    buffer = np.full((M + 2 * BM, N), -1.0, np.float32)
    y = buffer[BM:BM + M]
    write_block[(1,)](y, M, N, *offsets, BM=BM, BN=BN, CHECK=check)
    want = np.full_like(buffer, -1.0)
    values = np.arange(BM * BN, dtype=np.float32).reshape(BM, BN)
    for i in range(BM):
        for j in range(BN):
            r, c = offsets[0] + i, offsets[1] + j
            if 0 <= r < M and 0 <= c < N:
                want[BM + r, c] = values[i, j]
    np.testing.assert_array_equal(buffer, want)


@tessel.jit
def fill_block(Y, M, N, VALUE: tl.constexpr, B: tl.constexpr):
    ptr = tl.make_block_ptr(Y, (M, N), (N, 1), (0, 0), (B, B), (1, 0))
    tl.store(ptr, VALUE, boundary_check=(0, 1))


def test_a_scalar_is_stored_to_the_whole_block():
    y = np.zeros((5, 6), np.float32)
    fill_block[(1,)](y, 5, 6, VALUE=2.5, B=8)
    np.testing.assert_array_equal(y, np.full((5, 6), 2.5, np.float32))


# ------------------------------------------------------------------------------------- block pointers as values


@tessel.jit
def column_sums(X, Out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # A while loop and an if each carry a block pointer; the step is a run-time value.
    pid = tl.program_id(0)
    ptr = tl.make_block_ptr(X, (M, N), (N, 1), (0, pid * BN), (BM, BN), (1, 0))
    acc = tl.zeros((BN,), tl.float32)
    row = 0
    step = BM + M * 0
    while row < M:
        acc += tl.sum(tl.load(ptr, boundary_check=(0, 1), padding_option="zero"), axis=0)
        if row % (2 * BM) == 0:
            ptr = ptr.advance((step, 0))
        else:
            ptr = tl.advance(ptr, (BM, 0))
        row += BM
    out = tl.make_block_ptr(Out, (N,), (1,), (pid * BN,), (BN,), (0,))
    tl.store(out, acc, boundary_check=(0,))


def test_block_pointers_are_carried_by_while_loops_and_ifs(rng):
    M, N = 75, 50
    x = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    out = np.zeros(N, np.float32)
    column_sums[(tessel.cdiv(N, 16),)](x, out, M, N, BM=16, BN=16)
    np.testing.assert_allclose(out, x.sum(axis=0), rtol=1e-5, atol=1e-5)


@tessel.jit
def reverse_row_blocks(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # Reads blocks of rows from the last to the first (negative advances), writes them from the first on.
    src = tl.make_block_ptr(X, (M, N), (N, 1), (M - BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(Y, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    for _ in range(M // BM):
        tl.store(dst, tl.load(src))
        src = tl.advance(src, (-BM, 0))
        dst = tl.advance(dst, (BM, 0))


def test_negative_advances(rng):
    M, N, BM, BN = 40, 16, 8, 16
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.zeros_like(x)
    reverse_row_blocks[(1,)](x, y, M, N, BM=BM, BN=BN)
    np.testing.assert_array_equal(y, x.reshape(5, BM, N)[::-1].reshape(M, N))


# ----------------------------------------------------------------------------------------- against Triton


def _padded_read(X, Out, M, N, om, on, BM: tl.constexpr, BN: tl.constexpr, PADDING: tl.constexpr):
    ptr = tl.make_block_ptr(X, (M, N), (N, 1), (om, on), (BM, BN), (1, 0))
    ptr = tl.advance(ptr, (1, -1))
    block = tl.load(ptr, boundary_check=(0, 1), padding_option=PADDING)
    out = tl.make_block_ptr(Out, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(out, block)


PADDED_READ = Both(_padded_read)


@pytest.mark.parametrize("offsets", [(0, 0), (-7, 5), (10, 30)])
@pytest.mark.parametrize("padding", ["zero", "nan"])
def test_padded_reads_match_triton(rng, offsets, padding):
    M, N, BM, BN = 20, 36, 16, 16
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.zeros((BM, BN), np.float32)
    want, got = PADDED_READ.last((1,), x, out, M, N, *offsets, BM=BM, BN=BN, PADDING=padding)
    np.testing.assert_array_equal(bits(got), bits(want))


def _bool_blocks(X, Out, N, B: tl.constexpr):
    ptr = tl.make_block_ptr(X, (N,), (1,), (0,), (B,), (0,))
    values = tl.load(ptr, boundary_check=(0,), padding_option="zero")
    tl.static_assert(values.dtype == tl.int8, "a bool block pointer reads int8")
    tl.store(Out + tl.arange(0, B), values + 1)


BOOL_BLOCKS = Both(_bool_blocks)


def test_bool_arrays_read_as_int8_as_in_triton():
    x = np.array([True, False, True, True, False] * 4)
    out = np.zeros(32, np.int8)
    want, got = BOOL_BLOCKS.last((1,), x, out, 20, B=32)
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------------------------------------ errors


@tessel.jit
def misuse(X, M, N, CASE: tl.constexpr):
    ptr = tl.make_block_ptr(X, (M, N), (N, 1), (0, 0), (16, 16), (1, 0))
    if CASE == "mask":
        tl.load(ptr, mask=tl.arange(0, 16)[:, None] < M)
    elif CASE == "other":
        tl.load(ptr, boundary_check=(0,), other=1.0)
    elif CASE == "padding":
        tl.load(ptr, boundary_check=(0,), padding_option="one")
    elif CASE == "dim":
        tl.load(ptr, boundary_check=(0, 2))
    elif CASE == "duplicate":
        tl.load(ptr, boundary_check=(1, 1))
    elif CASE == "store mask":
        tl.store(ptr, tl.zeros((16, 16), tl.float32), mask=tl.arange(0, 16)[:, None] < M)
    elif CASE == "store shape":
        tl.store(ptr, tl.zeros((16, 8), tl.float32))
    elif CASE == "store type":
        tl.store(ptr, tl.zeros((16, 16), tl.float16))
    elif CASE == "advance unused":
        tl.advance(ptr, (0, 16))
    elif CASE == "advance rank":
        ptr = tl.advance(ptr, (0, 16, 1))
    elif CASE == "advance int64":
        ptr = tl.advance(ptr, (M.to(tl.int64), 0))
    elif CASE == "pointer check":
        tl.load(X + tl.arange(0, 16), boundary_check=(0,))
    elif CASE == "pointer store check":
        tl.store(X + tl.arange(0, 16), 1.0, boundary_check=(0,))
    elif CASE == "loop type":
        for i in range(3):
            ptr = tl.make_block_ptr(X, (M, N), (N, 1), (0, 0), (16, 8), (1, 0))


MISUSES = [
    ("mask", "`mask` and `other` arguments cannot be specified for loading block pointers",
     "tl.load(ptr, mask=tl.arange(0, 16)[:, None] < M)"),
    ("other", "`mask` and `other` arguments cannot be specified", "tl.load(ptr, boundary_check=(0,), other=1.0)"),
    ("padding", "Padding option one not supported", 'padding_option="one"'),
    ("dim", r"boundary_check: int 2 is not a dimension of the block \(0 to 1\)", "boundary_check=(0, 2)"),
    ("duplicate", r"Duplicate dimension in `boundary_check`: \(1, 1\)", "boundary_check=(1, 1)"),
    ("store mask", "`mask` cannot be specified for storing to block pointers", "tl.store(ptr, tl.zeros((16, 16)"),
    ("store shape", r"Block shape\(\[16, 16\]\) and value shape\(\[16, 8\]\) mismatch",
     "tl.store(ptr, tl.zeros((16, 8)"),
    ("store type", r"Block element type\(fp32\) and value element type\(fp16\) mismatch",
     "tl.store(ptr, tl.zeros((16, 16), tl.float16))"),
    ("advance unused", "The result of tl.advance is not being used. Note that tl.advance does not have any side "
     "effects", "tl.advance(ptr, (0, 16))"),
    ("advance rank", r"tl.advance\(\): 3 offsets for a block pointer of 2 dimensions", "(0, 16, 1)"),
    ("advance int64", "Block pointers only support 32 bit `offsets/block_shape`, add a `.to\\(tl.int32\\)`",
     "M.to(tl.int64)"),
    ("pointer check", "`padding_option` and `boundary_check` are only for block pointers",
     "tl.load(X + tl.arange(0, 16), boundary_check=(0,))"),
    ("pointer store check", "`boundary_check` is only for block pointers",
     "tl.store(X + tl.arange(0, 16), 1.0, boundary_check=(0,))"),
    ("loop type", "loop-carried variable 'ptr' changes structure in the loop",
     "for i in range(3):"),
]


@pytest.mark.parametrize("case,message,line", MISUSES, ids=[m[0] for m in MISUSES])
def test_misuse_is_a_compilation_error_at_the_line(case, message, line):
    x = np.zeros((16, 16), np.float32)
    with pytest.raises(tessel.CompilationError, match=message) as info:
        misuse[(1,)](x, 16, 16, CASE=case)
    assert line in str(info.value)


@tessel.jit
def bad_make(X, N, CASE: tl.constexpr):
    if CASE == "base":
        tl.make_block_ptr(N, (N,), (1,), (0,), (16,), (0,))
    elif CASE == "block":
        tl.make_block_ptr(X, (N,), (1,), (0,), (N,), (0,))
    elif CASE == "power of 2":
        tl.make_block_ptr(X, (N, N), (N, 1), (0, 0), (16, 12), (1, 0))
    elif CASE == "order":
        tl.make_block_ptr(X, (N, N), (N, 1), (0, 0), (16, 16), (1, 1))
    elif CASE == "lengths":
        tl.make_block_ptr(X, (N, N), (N, 1), (0,), (16, 16), (1, 0))
    elif CASE == "offset range":
        tl.make_block_ptr(X, (N,), (1,), (2**31,), (16,), (0,))
    elif CASE == "shape range":
        tl.make_block_ptr(X, (2**63,), (1,), (0,), (16,), (0,))
    elif CASE == "shape float":
        tl.make_block_ptr(X, (N * 1.0,), (1,), (0,), (16,), (0,))
    elif CASE == "block offsets":
        tl.make_block_ptr(X, (N,), (1,), (tl.arange(0, 16),), (16,), (0,))


BAD_MAKES = [
    ("base", "Expected `base` to be a pointer type", "tl.make_block_ptr(N, (N,), (1,), (0,), (16,), (0,))"),
    ("block", r"Expected a list of constant integers \(`int32_t` range\) in `block_shape`",
     "tl.make_block_ptr(X, (N,), (1,), (0,), (N,), (0,))"),
    ("power of 2", r"Shape element 1 must be a power of 2", "(16, 12)"),
    ("order", r"Expected a permutation of \(0, 1, ..., len\(order\)-1\) in order, got \(1, 1\)", "(1, 1)"),
    ("lengths", "Expected shape/strides/offsets/block_shape to have the same length", "(0,), (16, 16)"),
    ("offset range", "Block pointers only support 32 bit `offsets/block_shape`, got a value 2147483648 which is out "
     "of the range", "(2**31,)"),
    ("shape range", "Block pointers only support 64 bit `shape/strides`, got a value 9223372036854775808",
     "(2**63,)"),
    ("shape float", "Expected an integer scalar type in shape/strides/offsets", "(N * 1.0,)"),
    ("block offsets", "Expected a scalar in shape/strides/offsets", "(tl.arange(0, 16),)"),
]


@pytest.mark.parametrize("case,message,line", BAD_MAKES, ids=[m[0] for m in BAD_MAKES])
def test_bad_block_pointers_are_compilation_errors(case, message, line):
    with pytest.raises(tessel.CompilationError, match=message) as info:
        bad_make[(1,)](np.zeros(16, np.float32), 16, CASE=case)
    assert line in str(info.value)


@tessel.jit
def nan_padded_ints(X, N):
    ptr = tl.make_block_ptr(X, (N,), (1,), (0,), (16,), (0,))
    tl.load(ptr, boundary_check=(0,), padding_option="nan")


def test_nan_padding_of_integers_is_an_error():
    with pytest.raises(tessel.CompilationError, match="Padding option `nan` is not supported for integer block "
                       "pointers") as info:
        nan_padded_ints[(1,)](np.zeros(16, np.int32), 16)
    assert 'tl.load(ptr, boundary_check=(0,), padding_option="nan")' in str(info.value)
