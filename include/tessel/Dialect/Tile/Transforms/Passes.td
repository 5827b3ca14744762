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
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect",
                           "::tessel::tile::TileDialect"];
}

#endif // TESSEL_TILE_TRANSFORMS_PASSES
