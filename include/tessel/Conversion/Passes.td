#ifndef TESSEL_CONVERSION_PASSES
#define TESSEL_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTileToLoops : Pass<"convert-tile-to-loops", "mlir::ModuleOp"> {
  let summary = "Lower tile IR to fused loop nests over scalars and memrefs (CPU)";
  let description = [{
    Each kernel `func.func` marked `tile.kernel` becomes a private function
    over scalars, `!llvm.ptr` pointers and stack `memref`s, taking the program
    ids and grid size as trailing i32 arguments, plus a public entry
    `<name>_tessel_entry(argv, begin, end, gx, gy, gz)` that runs the linear
    program ids [begin, end). A private function with a body (a
    @jit(noinline=True) function the kernel calls) becomes a function of its
    own, kept out of line: each block parameter and result is a buffer the
    caller owns (memref), each scalar result a one-element buffer, then the
    program ids and the grid; a call materializes its block arguments.

    Block values are evaluated lazily at the index where a consumer needs
    them, so chains of element-wise operations, address computations and
    loads fuse into the consumer's loop nest (a store, a reduction, a dot, a
    loop-carried value). A value is materialized in a stack buffer at its
    definition when it is expensive and used more than once or in another
    region, when it is a load that a later store could change before its use,
    or when it crosses control flow. Masked-off lanes never access memory.
    Reductions keep 16 partial accumulators along a contiguous axis (the
    combine function is treated as associative, as on GPUs), so that the
    loops vectorize.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::math::MathDialect",
    "mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
    "mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect",
    "mlir::vector::VectorDialect", "mlir::linalg::LinalgDialect",
  ];
}

def ConvertTileToTileGPU : Pass<"convert-tile-to-tilegpu", "mlir::ModuleOp"> {
  let summary = "Give every tensor of a kernel a GPU register layout";
  let description = [{
    Every tensor value gets the default blocked layout of its shape for
    `num-warps` warps of `threads-per-warp` threads (the target's warp or
    wavefront, which the module records as `tilegpu.threads_per_warp` for
    the passes after it; gpu::defaultBlockedLayout), as its type's
    `#tilegpu.linear` encoding. Values whose loads and stores are proved
    contiguous along another dimension than the last get a blocked layout
    with that dimension fastest (lanes and per-thread vectors along it), and
    values whose loads and stores move elements narrower than 4 bytes along
    a contiguous last dimension hold more than the default 4 consecutive
    elements per thread: 16 bytes (8 fp16, 16 int8), no more than the proved
    contiguity. Every value that element-wise ops, addptr, loads, stores and
    loop-carried values tie together gets one layout: the dimension its
    memory ops agree on (each prefers the one its addresses are most
    contiguous along, the last on ties; the last when they disagree), and
    the narrowest width any of them wants (a tensor constant gets a copy per
    user first, so that a zero two loads share as `other` ties nothing). Ops
    that move elements between threads get
    the layouts their lowering needs, with `tilegpu.convert_layout` between:
    the operand of `expand_dims` is the slice of its result's layout, the
    operand of `broadcast` sits in its result's registers, the results of
    `reduce`, `trans` and `reshape` keep their operand's registers. A `dot`
    of fp16 or bf16 blocks with an fp32 accumulator on compute capability 80
    and up produces (and takes its accumulator in) the mma.sync accumulator
    layout, its warps split between rows and columns. On compute capability
    90 (arch-specific: sm_90a) with whole warpgroups (num-warps a multiple
    of 4), such a dot whose warpgroups cover 64 rows each and at least 8
    columns gets the wgmma accumulator layout instead, warpgroups along M
    first, and `tilegpu.wgmma`: the lowering issues wgmma.mma_async with
    operands read from shared memory through matrix descriptors. (With one
    warpgroup along N the two layouts are the same map, so the attribute,
    not the layout, says which instruction runs.) The kernel gets
    `tilegpu.num_warps`. Loads and stores whose addresses the axis-info
    analysis proves contiguous and aligned along some dimension (and whose
    mask and `other` are constant over the group) get `tilegpu.vector =
    array<i32: n0, n1, ...>`: one access may move n_d consecutive elements
    along dimension d (at most 16 bytes); the lowering uses the width along
    the dimension a thread's consecutive registers run along.
  }];
  let options = [
    Option<"numWarps", "num-warps", "int", /*default=*/"4",
           "Warps per program (a power of two, at most 1024 threads)">,
    Option<"threadsPerWarp", "threads-per-warp", "int", /*default=*/"32",
           "Threads per warp: the target's (32 on NVIDIA, 64 on AMD CDNA)">,
    Option<"computeCapability", "compute-capability", "int", /*default=*/"80",
           "NVIDIA compute capability (80 and up: mma.sync for fp16/bf16 dots; "
           "90: wgmma where the target is arch-specific)">,
    Option<"archSpecific", "arch-specific", "bool", /*default=*/"true",
           "The target is the arch-specific variant of the compute capability "
           "(sm_90a), whose instructions (wgmma) do not run on later GPUs; "
           "Tessel, like Triton, compiles capability 90 as sm_90a">,
    Option<"mfma", "mfma", "bool", /*default=*/"false",
           "AMD CDNA matrix cores: fp16/bf16, fp32 and int8 dots of whole "
           "32x32 (or else 16x16) blocks and whole instructions along K get "
           "the MFMA accumulator layout">,
    Option<"mfmaInt8KWidth", "mfma-int8-k-width", "int", /*default=*/"8",
           "Elements of K per lane of the chip's 32x32 int8 MFMA (4: gfx90a's "
           "v_mfma_i32_32x32x8i8; 8: v_mfma_i32_32x32x16_i8 from CDNA3 on)">,
    Option<"mfmaFP8WideKWidth", "mfma-fp8-wide-k-width", "int", /*default=*/"0",
           "Elements of K per lane of the chip's wider 8-bit float MFMA, tried "
           "before the 8 of 32x32x16 where K allows (32: gfx950's f8f6f4; 0: "
           "none)">,
    Option<"mfmaHalfWideKWidth", "mfma-half-wide-k-width", "int",
           /*default=*/"0",
           "Elements of K per lane of the chip's double-K fp16/bf16 MFMA, "
           "tried before the 4 of 32x32x8 where K allows (8: gfx950's "
           "32x32x16; 0: none)">,
    Option<"mfmaInt8WideKWidth", "mfma-int8-wide-k-width", "int",
           /*default=*/"0",
           "Elements of K per lane of the chip's double-K int8 MFMA, tried "
           "before mfma-int8-k-width where K allows (16: gfx950's 32x32x32; "
           "0: none)">,
  ];
  let dependentDialects = ["::tessel::tilegpu::TileGPUDialect"];
}

#endif // TESSEL_CONVERSION_PASSES
