//===- TensorMapArguments.cpp - A kernel's tensor-map parameters ----------===//
#include "tessel/Dialect/TileGPU/Transforms/TensorMapArguments.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

DictionaryAttr tessel::tilegpu::tensorMapOf(func::FuncOp func,
                                            unsigned index) {
  return func.getArgAttrOfType<DictionaryAttr>(index, kTensorMapAttr);
}

BlockArgument tessel::tilegpu::tensorMapArgument(func::FuncOp func,
                                                 const TensorMapKey &key) {
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  auto describe = [&](bool nan) {
    return b.getDictionaryAttr(
        {b.getNamedAttr("arg", b.getI32IntegerAttr(key.arg)),
         b.getNamedAttr("box", b.getDenseI64ArrayAttr(key.box)),
         b.getNamedAttr("element", TypeAttr::get(key.element)),
         b.getNamedAttr("nan", b.getBoolAttr(nan)),
         b.getNamedAttr("swizzle", b.getI32IntegerAttr(key.swizzle))});
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    DictionaryAttr map = tensorMapOf(func, i);
    if (!map || cast<IntegerAttr>(map.get("arg")).getInt() != key.arg ||
        cast<DenseI64ArrayAttr>(map.get("box")).asArrayRef() !=
            ArrayRef<int64_t>(key.box) ||
        cast<IntegerAttr>(map.get("swizzle")).getInt() != key.swizzle)
      continue;
    if (key.nan && !cast<BoolAttr>(map.get("nan")).getValue())
      func.setArgAttr(i, kTensorMapAttr, describe(true));
    return func.getArgument(i);
  }
  unsigned index = func.getNumArguments();
  auto attrs = b.getDictionaryAttr(
      {b.getNamedAttr(LLVM::LLVMDialect::getByValAttrName(),
                      TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(),
                                                             128))),
       b.getNamedAttr(LLVM::LLVMDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(64)),
       b.getNamedAttr(kTensorMapAttr, describe(key.nan))});
  if (failed(func.insertArgument(index, LLVM::LLVMPointerType::get(ctx), attrs,
                                 func.getLoc())))
    return {};
  return func.getArgument(index);
}
