//===- WidenByteReductions.cpp - Work around an AMDGPU selection crash ----===//
//
// See include/tessel/AMD/WidenByteReductions.h.
//
//===----------------------------------------------------------------------===//
#include "tessel/AMD/WidenByteReductions.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

void tessel::amd::widenByteReductions(llvm::Module &module) {
  llvm::SmallVector<llvm::IntrinsicInst *> reductions;
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst))
        if (call->getIntrinsicID() == llvm::Intrinsic::vector_reduce_add &&
            call->getType()->isIntegerTy(8))
          reductions.push_back(call);
  for (llvm::IntrinsicInst *call : reductions) {
    llvm::IRBuilder<> b(call);
    llvm::Value *lanes = call->getArgOperand(0);
    auto *vector = llvm::cast<llvm::VectorType>(lanes->getType());
    llvm::Value *wide = b.CreateZExt(
        lanes, llvm::VectorType::get(b.getInt32Ty(), vector->getElementCount()));
    llvm::Value *sum = b.CreateAddReduce(wide);
    call->replaceAllUsesWith(b.CreateTrunc(sum, b.getInt8Ty()));
    call->eraseFromParent();
  }
}
