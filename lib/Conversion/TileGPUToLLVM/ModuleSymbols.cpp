//===- ModuleSymbols.cpp - Globals and declarations a lowering adds -------===//
#include "tessel/Conversion/TileGPUToLLVM/ModuleSymbols.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace tessel;

/// The generic address of a NUL-terminated copy of `text`: a constant in
/// global memory (one per text and module).
Value gpu::globalString(OpBuilder &b, Location loc, StringRef text) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  std::string data = text.str();
  data.push_back('\0');
  auto arrayType = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
  LLVM::GlobalOp global;
  for (auto g : module.getOps<LLVM::GlobalOp>())
    if (g.getConstant() && g.getAddrSpace() == 1 && g.getType() == arrayType &&
        g.getValueAttr() == b.getStringAttr(data) &&
        g.getSymName().starts_with("tessel_string_"))
      global = g;
  if (!global) {
    std::string name;
    for (unsigned n = 0;; ++n) {
      name = "tessel_string_" + std::to_string(n);
      if (!module.lookupSymbol(name))
        break;
    }
    OpBuilder top(module.getBodyRegion());
    global = top.create<LLVM::GlobalOp>(
        loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Internal, name,
        top.getStringAttr(data), /*alignment=*/1, /*addrSpace=*/1);
  }
  Value address = b.create<LLVM::AddressOfOp>(loc, global);
  return b.create<LLVM::AddrSpaceCastOp>(
      loc, LLVM::LLVMPointerType::get(b.getContext()), address);
}

/// The declaration of the external function `name`, made once.
LLVM::LLVMFuncOp gpu::externFunction(OpBuilder &b, Location loc,
                                      StringRef name,
                                      LLVM::LLVMFunctionType type) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder top(module.getBodyRegion());
  return top.create<LLVM::LLVMFuncOp>(loc, name, type);
}
