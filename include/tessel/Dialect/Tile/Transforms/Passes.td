#ifndef TESSEL_TILE_TRANSFORMS_PASSES
#define TESSEL_TILE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TileCarriedPointersToOffsets
    : Pass<"tile-carried-pointers-to-offsets", "mlir::func::FuncOp"> {
  let summary = "Carry a scalar offset instead of a block of pointers that a "
                "loop advances uniformly";
  let description = [{
    Kernels advance blocks of pointers inside loops (`a_ptrs += BK * stride`).
    When a `scf.for` carries a pointer block whose next value is the block
    plus a loop-invariant scalar (a splat), the loop carries an i64 offset
    instead (starting at 0, advancing by that scalar), and the pointers are
    rebuilt from the loop-invariant initial block: `addptr(init, offset)`.
    The addresses stay affine in the loop, so backends see contiguous
    accesses instead of a block of opaque pointers in memory or registers.

    With `constant-steps`, a constant block of one value (`a_ptrs += BK`
    once the stride is specialized to 1) is such a step too. The CPU asks for
    it: there a block of pointers lives in memory, and every iteration would
    reload, advance and store it. GPU targets keep such blocks in registers
    and do not.
  }];
  let options = [
    Option<"constantSteps", "constant-steps", "bool", /*default=*/"false",
           "Also carry offsets for pointer blocks advanced by a splat "
           "constant">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect",
                           "::tessel::tile::TileDialect"];
}

def TileSplitProgram : Pass<"tile-split-program", "mlir::func::FuncOp"> {
  let summary = "Run each program on num-ctas cooperating CTAs, each with a "
                "part of every block";
  let description = [{
    A kernel launched with `num_ctas` = C > 1 runs each program on C CTAs
    (an NVIDIA thread block cluster). The pass picks one dimension class of
    the kernel's blocks, dimensions that must be cut alike (an element-wise
    op's operands and result, a dot's rows with its A's rows, its columns
    with B's, loop-carried values with what the loop yields), and gives
    each CTA 1/C of it: `tile.get_cta_rank` r picks the part, a `make_range`
    [s, e) becomes [s, s + (e - s) / C) + r * (e - s) / C, and a descriptor
    access moves its offset by as much. Classes that cannot be cut are
    those along which a reduction, a dot's K, a reshape or an op the pass
    does not know combines elements, or whose sizes C does not divide; of
    the rest the pass cuts the one whose loaded blocks and dot results hold
    the most elements (what is not cut, each CTA loads and computes whole).
    Blocks outside the class (a dot's shared operand, scalars) are computed
    by every CTA, and their stores are made by CTA 0 alone, so each element
    is written once, as by one CTA. With no class to cut, every CTA runs
    the whole program and CTA 0 stores. Atomics are stores that read: cut
    with their class, else made by CTA 0; where the program uses the old
    values of an atomic outside the cut (a lock's compare-and-swap), the
    other CTAs could not learn them, and the whole program runs on CTA 0.
  }];
  let options = [
    Option<"numCtas", "num-ctas", "int", /*default=*/"1",
           "The CTAs that run one program (a power of two)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect",
                           "::tessel::tile::TileDialect"];
}

def TileLowerDescriptors
    : Pass<"tile-lower-descriptors", "mlir::func::FuncOp"> {
  let summary = "Tensor descriptor accesses as masked pointer accesses";
  let description = [{
    `tile.descriptor_load` and `tile.descriptor_store` become a masked
    `tile.load` / `tile.store` of the pointers base + sum over d of
    index_d * stride_d (the last stride 1), index_d = offsets[d] + [0,
    block_d), in int64 for the strided dimensions; the mask keeps the indices
    inside [0, shape[d]); masked-off elements load zero (NaN with
    `nan_padding`). Each dimension's terms are computed on its own axis and
    broadcast where they combine, so that a thread computes each row's and
    each column's part once.

    With `tensor-maps` (targets with a tensor copy engine, NVIDIA sm_90+),
    loads and stores of host-made descriptors (`tensor_map`) whose block
    dimensions are at most 256 are left for it (tilegpu-tensor-maps),
    except, with more than one stage (the loop's `tile.num_stages`, else
    `num-stages`), loads whose one use is an operand of a dot in a loop,
    which the cp.async pipeline prefetches. With
    `pipelined-tensor-maps` too (the copy engine fills the pipeline's slots
    of warpgroup MMA, NVIDIA sm_90a), those stay whose dot has at least 64
    rows (a warpgroup's) and whose rows span at least 32 bytes (the
    narrowest swizzle): 8-bit or 16-bit elements contiguous along K (A as
    it is loaded, B loaded N x K and transposed: `b.T`) or 16-bit ones
    contiguous along M or N (A loaded K x M and transposed, B as it is).
  }];
  let options = [
    Option<"tensorMaps", "tensor-maps", "bool", /*default=*/"false",
           "Leave loads of host-made descriptors to the tensor copy engine">,
    Option<"numStages", "num-stages", "int", /*default=*/"1",
           "The software pipeline's stages (dot operands in loops stay "
           "pointer loads when > 1)">,
    Option<"pipelinedTensorMaps", "pipelined-tensor-maps", "bool",
           /*default=*/"false",
           "With num-stages > 1, leave K-major dot operands in loops to the "
           "copy engine too (tilegpu-pipeline fills its slots with them)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "::tessel::tile::TileDialect"];
}

def TileExactIntToBF16 : Pass<"tile-exact-int-to-bf16", "mlir::func::FuncOp"> {
  let summary = "Integers to bf16 rounded once, through fp64 rounded to odd";
  let description = [{
    `arith.sitofp` / `arith.uitofp` to bf16 become a conversion to fp64
    (exact up to 32 bits; 64 bits as the two-sum of their halves, rounded to
    odd), rounded to odd into fp32, and `arith.truncf` from fp32 to bf16:
    one rounding in all. Otherwise LLVM converts through fp32 to nearest and
    rounds twice (2^24 + 2^16 + 1, just above a bf16 tie, became 2^24, not
    2^24 + 2^17). `native`
    leaves them alone where the target converts in one step (cvt.rn.bf16.s32
    and .s64 on NVIDIA sm_90 and newer).
  }];
  let options = [
    Option<"native", "native", "bool", /*default=*/"false",
           "The target converts integers to bf16 in one rounding"
           " (sm_90 and newer)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def TileExpandFP8 : Pass<"tile-expand-fp8", "mlir::func::FuncOp"> {
  let summary = "Compute with 8-bit floats in fp32 and convert them in "
                "integer arithmetic";
  let description = [{
    No target computes with 8-bit float values directly, and LLVM has no
    8-bit float types. The formats: fp8e4nv (e4m3: no infinities, S.1111.111
    NaN), fp8e5 (e5m2, IEEE-like), fp8e4b8 and fp8e5b16 (e4m3fnuz and
    e5m2fnuz: biases 8 and 16, no infinities, no negative zero, 0x80 NaN)
    and fp8e4b15 (Triton's e4m3 with bias 15, carried by f8E4M3B11FNUZ:
    every code finite, 1.875 at most). After this pass 8-bit floats are only
    moved: loaded, stored, selected, reshaped, bitcast; and, where `native`
    says the target has the instructions (NVIDIA sm_89 and newer), OCP ones
    (e4m3, e5m2) are multiplied by dots into fp32 whose K is a multiple of
    the instructions' 32, rounded from fp32 (`arith.truncf`) and widened to
    fp16 (`arith.extf`), which decode and round as below.

    - An arith or math op on 8-bit floats runs on their fp32 values and its
      8-bit results are rounded back, as each op of the language rounds.
    - `arith.extf` from an 8-bit float decodes the bits in integer
      arithmetic (every 8-bit float value is an fp32 exactly).
    - `arith.truncf` to an 8-bit float rounds to nearest even and saturates
      to the largest finite value (PTX's cvt.rn.satfinite: infinities too).
      NaN becomes the format's NaN (0x7F; 0x80 for fnuz) or, in fp8e4b15,
      which has none, its largest value 0x7F. A zero result of an fnuz
      format is 0x00 whatever its sign. fp64 sources round from fp64
      directly.
    - 8-bit float constants become i8 constants of their bits (fp8e4b15's
      rounded from their value: the carrier's semantics are not its own).
    - Dots of 8-bit floats without `native` (or of fnuz or fp8e4b15
      operands, or accumulating in fp16, or with K not a multiple of 32)
      multiply the operands extended to fp16, which holds them exactly.
    - With `mfma` (AMD), dots into fp32 whose operands are both of the
      chip's family (fnuz or OCP, e4m3 or e5m2 each) stay 8-bit where the
      shape takes whole MFMA instructions (32x32x16 or 16x16x32).
  }];
  let options = [
    Option<"native", "native", "bool", /*default=*/"false",
           "The target multiplies 8-bit floats into fp32, rounds fp32 to "
           "them and widens them to fp16 itself (sm_89 and newer)">,
    Option<"mfma", "mfma", "std::string", /*default=*/"\"\"",
           "The 8-bit floats an AMD chip's matrix cores multiply into fp32: "
           "fnuz (gfx942), ocp (gfx950) or none">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

#endif // TESSEL_TILE_TRANSFORMS_PASSES
