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
    program ids [begin, end).

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
    "mlir::vector::VectorDialect",
  ];
}

#endif // TESSEL_CONVERSION_PASSES
