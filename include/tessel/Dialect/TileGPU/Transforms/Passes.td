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
    block of pointers in a layout without copies need no barrier: each
    thread touches only its own elements.
  }];
  let dependentDialects = ["::tessel::tilegpu::TileGPUDialect"];
}

#endif // TESSEL_TILEGPU_TRANSFORMS_PASSES
