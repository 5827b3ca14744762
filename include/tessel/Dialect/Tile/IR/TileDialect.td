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

    Hints (`tl.multiple_of`, `tl.max_contiguous`, `tl.max_constancy`) are
    discardable attributes on the op that defines the hinted value, arrays
    of i32 with one entry per dimension (one for a scalar):
    `tile.divisibility` (the first element of every contiguous group along
    the dimension is a multiple of it), `tile.contiguity` (the values run in
    groups of that many consecutive integers) and `tile.constancy` (in groups
    of that many equal values). A kernel argument carries
    `tile.divisibility` as an integer argument attribute.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect",
  ];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

#endif // TESSEL_TILE_DIALECT
