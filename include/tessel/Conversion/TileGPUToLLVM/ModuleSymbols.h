//===- ModuleSymbols.h - Globals and declarations a lowering adds -*- C++ -*-===//
//
// What a target's printf and assert add to the module being lowered: constant
// strings and declarations of the runtime functions they call, each made
// once per module.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_TILEGPUTOLLVM_MODULESYMBOLS_H
#define TESSEL_CONVERSION_TILEGPUTOLLVM_MODULESYMBOLS_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace tessel::gpu {

/// The generic address of a NUL-terminated copy of `text`: a constant in
/// global memory (one per text and module).
mlir::Value globalString(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::StringRef text);

/// The declaration of the external function `name`, made once.
mlir::LLVM::LLVMFuncOp externFunction(mlir::OpBuilder &b, mlir::Location loc,
                                      llvm::StringRef name,
                                      mlir::LLVM::LLVMFunctionType type);

} // namespace tessel::gpu

#endif // TESSEL_CONVERSION_TILEGPUTOLLVM_MODULESYMBOLS_H
