#ifndef TESSEL_TILEGPU_TRANSFORMS_PASSES
#define TESSEL_TILEGPU_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TileGPUMemoryBarriers
    : Pass<"tilegpu-memory-barriers", "mlir::func::FuncOp"> {
  let summary = "Keep a block's loads and stores in program order across threads";
  let description = [{
    In tile IR a load reads the whole block before the next statement runs,
    and a store writes the whole block: `x[::-1] = x` reverses in place. On a
    GPU the elements are spread over threads, so a store by one thread can
    land before another thread's earlier load of the same address. This
    pass puts a `tilegpu.barrier` before each access that may touch memory an
    access since the last barrier touched, where one of the two writes:
    accesses through arguments that may alias (the same argument, or two
    arguments of which neither is `tile.noalias`, or a pointer whose
    argument cannot be seen). Loops are walked twice, so accesses of one
    iteration are ordered against the next. Two accesses through the same
    block of pointers in a layout without copies need no barrier (each
    thread touches only its own elements), unless they are in different
    iterations of a loop the pointers vary in; there too, none is needed when
    the block moves each iteration by more than it spans (offsets that are
    the induction variable times a constant plus ranges and constants, as in
    a loop over a row in blocks), since the iterations' addresses never meet.
    Atomics are writes that also order other memory: one with acquire
    semantics (acquire, acq_rel) gets a barrier before the next access of any
    memory, one with release semantics (release, acq_rel) a barrier after
    any pending write, so a lock taken by one thread guards the whole
    program's accesses (Triton leaves that to `tl.debug_barrier()`). An
    atomic whose old values go to other threads through shared memory ends
    with a barrier of its own (tilegpu::atomicResultCrossesThreads): nothing
    is pending after it. A call of a function that touches memory (itself or
    through its calls) is ordered after every pending access and before
    every later one; the function orders its own accesses.
  }];
  let dependentDialects = ["::tessel::tilegpu::TileGPUDialect"];
}

def TileGPURemoveLayoutConversions
    : Pass<"tilegpu-remove-layout-conversions", "mlir::func::FuncOp"> {
  let summary = "Recompute cheap values in the layout a conversion asks for";
  let description = [{
    A `tilegpu.convert_layout` whose source is computed by pure, cheap ops
    (make_range, splat, splat constants, element-wise arith and math,
    addptr, expand_dims, broadcast, other conversions) is replaced by those
    ops recomputed in the target layout, operands first: index and pointer
    arithmetic is computed where it is used instead of moving through shared
    memory. Trees over 48 ops, and anything reading memory, keep their
    conversion. A value an `scf.for` carries, converted to one layout on
    entry to the body and back before the yield (an accumulator), is carried
    in that layout, with the conversions outside the loop. A conversion of a
    dot's result (from its tensor-core layout) moves forward instead: the
    element-wise ops, reductions, expand_dims and broadcasts using the result
    run in the dot's layout (their other operands recomputed there, or
    converted when smaller), a later dot takes its operand in that layout,
    and values go back only where stores, loads, yields or regions need their
    old layout; done when what is converted then is smaller, in bytes, than
    the block the conversion moved (attention's scores; a matmul's fp32
    accumulator converted after its truncation to fp16). Conversions of a
    reduction's result move forward the same way, and a loop-carried value
    whose next value comes from the new layout counts as free: the loop
    step then carries it in that layout (attention's row maximum and sum),
    its uses in renamings of that layout's registers included. Run canonicalization after it
    to drop what is left unused.
  }];
  let dependentDialects = ["::tessel::tilegpu::TileGPUDialect",
                           "mlir::arith::ArithDialect"];
}

def TileGPUHoistDotOperands
    : Pass<"tilegpu-hoist-dot-operands", "mlir::func::FuncOp"> {
  let summary = "Stage a loop's invariant dot operands in shared memory once";
  let description = [{
    A `tile.dot` on tensor cores (mma.sync or wgmma) inside an `scf.for`
    whose A or B operand is defined outside the loop in registers
    (attention's Q block) would stage that operand in shared memory in every
    iteration. It is written once instead, before the loop, into a buffer of
    one slot in the layout the dot reads in place (`local_alloc`,
    `local_store`, fenced for the async proxy when the dot runs on wgmma, a
    barrier), and the dot reads the slot (`local_load`: ldmatrix or wgmma
    descriptors). A value used by several dots is staged
    once per layout.

    `shared-limit` (bytes, 0: none): a buffer that would take the function's
    buffers plus the largest scratch past the limit is not made.
  }];
  let options = [
    Option<"sharedLimit", "shared-limit", "int64_t", "0",
           "Bytes of shared memory a program may use (0: no limit)">,
    Option<"registerCopies", "register-copies", "bool", "false",
           "Copy through registers (a load, then a local_store at the end of "
           "the iteration) instead of cp.async">,
  ];
  let dependentDialects = ["::tessel::tilegpu::TileGPUDialect",
                           "mlir::arith::ArithDialect"];
}

def TileGPUTensorMaps : Pass<"tilegpu-tensor-maps", "mlir::ModuleOp"> {
  let summary = "Move host-made tensor descriptors' blocks through tensor maps";
  let description = [{
    A `tile.descriptor_load` / `tile.descriptor_store` left with a
    `tensor_map` (the kernel argument its host-made descriptor came in)
    becomes a `tilegpu.tma_load` / `tilegpu.tma_store` of a tensor map: a
    128-byte kernel argument passed by value (`!llvm.ptr` with `llvm.byval`
    and 64-byte `llvm.align`), appended to the kernel's arguments, one per
    descriptor and block shape (and swizzle: tilegpu-pipeline adds swizzled
    ones). Each map's `tilegpu.tensor_map` argument attribute says what it
    describes (`arg`: the descriptor's first kernel argument, its base;
    `box`: the block shape; `element`: the element type; `nan`: NaN padding,
    that of the descriptor's loads; `swizzle`: 0 here, the block lands
    row-major) for the launcher, which encodes each from the descriptor's
    base, shape and strides.
  }];
  let dependentDialects = ["::tessel::tilegpu::TileGPUDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def TileGPUPipeline : Pass<"tilegpu-pipeline", "mlir::func::FuncOp"> {
  let summary = "Prefetch a loop's dot operands into shared-memory slots";
  let description = [{
    In an `scf.for` whose body loads (`tile.load`, `other` zero or absent)
    the A or B operand of a `tile.dot` on tensor cores (mma.sync or wgmma),
    the loads of iteration i + S - 1 are issued as `tilegpu.async_copy` into
    one of S slots of a swizzled shared buffer while iteration i computes
    (S = num-stages): a prologue issues iterations 0 .. S-2; each iteration
    waits for its own group (`async_wait {pending = S-2}`), a barrier
    publishes every thread's copies and orders the previous iteration's
    reads of the slot about to be refilled, the copies for iteration
    i + S - 1 are issued and committed, and the dot reads its slot
    (`local_load`, which the lowering turns into ldmatrix or wgmma
    descriptors). Copies for iterations past the end are masked off. A load
    whose threads hold runs along dimension 0 (A contiguous along M, B along
    K: column-major operands) fills a slot that holds the tile transposed
    (`mn_major, transposed` for A, `k_major, transposed` for B), so that the
    runs land whole.

    Only loads whose pointers and mask can be computed S - 1 iterations
    ahead are pipelined: from values defined outside the loop, the
    induction variable, and loop-carried values whose updates are computed
    the same way (pointer increments). Loads of 16-bit elements whose
    per-thread runs are narrower than 4 bytes (cp.async's smallest copy),
    loops that store to memory the loads may read, loops compared unsigned,
    and dots off the tensor cores stay as they are.

    A host-made descriptor's block (`tile.descriptor_load` with a
    `tensor_map`, possibly transposed by a `tile.trans`) that a dot on
    warpgroup MMA reads from a `k_major` or `mn_major` slot is copied by the
    copy engine instead: `tilegpu.async_tma_copy` of a tensor map one
    swizzle atom wide with the slot's swizzle (a parameter added as
    tilegpu-tensor-maps adds them), arriving on the slot's barrier of an
    `mbarrier_alloc` (one barrier per slot); only in-range iterations copy.
    Each iteration waits for its slot's phase (`mbarrier_wait`, its parity
    carried by the loop and flipped as the read slot wraps) after the
    barrier and the next copies, and `mbarrier_inval` follows the loop.
    Loops may mix both kinds (8-bit operands contiguous along M or N, which
    wgmma reads K-major only, stay cp.async copies).

    Where every dot of the loop runs on warpgroup MMA with both operands in
    slots, accumulating (fp32 or int32) into a loop-carried value that only
    it reads and whose result only goes back to it, its MMAs stay in flight
    into the next iteration (`tilegpu.in_flight`): the refill moves to the
    end of the iteration, after `tilegpu.warpgroup_mma_wait {pending = 1}`
    (the previous iteration's MMAs, the readers of that slot, are done) and
    a barrier, and a `warpgroup_mma_wait {pending = 0}` after the loop
    retires the last ones before anything reads the sums or the slots.

    With `register-copies` (targets without async copies: AMD), a copy is a
    `tile.load` of iteration i + S - 1 at the start of iteration i and a
    `tilegpu.local_store` of its registers into the slot at the end of the
    iteration, after the dot has read its own slot: the loads' latency
    overlaps the dot. From 3 stages on the registers hold one iteration's
    blocks, so S - 1 slots do: an iteration refills the slot it read, after
    a barrier at its end (every thread is done reading it; the same barrier
    publishes the previous iteration's stores, and one after the prologue
    its stores). With 2 stages there are 2 slots and the barrier opens the
    iteration. The dots are MFMA dots, which read `k_major` and `mn_major`
    slots in place (dotOperandSharedEncoding); loads narrower than 4 bytes
    qualify too.

    A loop's `tile.num_stages` attribute (`tl.range(num_stages=...)`) takes
    the place of `num-stages` for that loop.

    `shared-limit` (bytes, 0: none): stages are dropped, down to 2, until the
    function's buffers (their slots) plus the largest scratch a conversion
    or dot inside the loop stages through fit (the allocator lets scratch
    outside the loop reuse the slots' bytes); a loop whose 2 stages do not
    fit is left as it is.
  }];
  let options = [
    Option<"numStages", "num-stages", "int", "3",
           "Slots per operand (1: no pipelining)">,
    Option<"sharedLimit", "shared-limit", "int64_t", "0",
           "Bytes of shared memory a program may use (0: no limit)">,
    Option<"registerCopies", "register-copies", "bool", "false",
           "Copy through registers (a load, then a local_store at the end of "
           "the iteration) instead of cp.async">,
    Option<"transposedReads", "transposed-reads", "bool", "false",
           "MFMA slot rows along M or N are read with transposed LDS reads "
           "(gfx950): 16-bit ones padded by 32 bytes after each 128, as the "
           "reads take 4 rows of 32 bytes at once">,
  ];
  let dependentDialects = ["::tessel::tilegpu::TileGPUDialect",
                           "::tessel::tile::TileDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::scf::SCFDialect"];
}

#endif // TESSEL_TILEGPU_TRANSFORMS_PASSES
