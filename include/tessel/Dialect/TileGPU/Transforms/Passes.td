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
    iterations of a loop the pointers vary in.
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
    in that layout, with the conversions outside the loop. Run
    canonicalization after it to drop what is left unused.
  }];
  let dependentDialects = ["::tessel::tilegpu::TileGPUDialect",
                           "mlir::arith::ArithDialect"];
}

#endif // TESSEL_TILEGPU_TRANSFORMS_PASSES
