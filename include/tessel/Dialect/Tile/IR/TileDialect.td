#ifndef TESSEL_TILE_DIALECT
#define TESSEL_TILE_DIALECT

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::tessel::tile";
  let summary = "Target-independent block-level (tile) IR of Tessel kernels";
  let description = [{
    The tile dialect describes one program of a kernel grid working on blocks:
    statically shaped tensors of scalars or of pointers. It adds only what
    upstream dialects cannot say (pointers, program ids, masked memory access,
    reductions with a combine region, dot); element-wise arithmetic uses
    `arith` and `math` directly on tensors, control flow uses `scf`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect",
  ];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

#endif // TESSEL_TILE_DIALECT
