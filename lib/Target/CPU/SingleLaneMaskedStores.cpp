//===- SingleLaneMaskedStores.cpp - A workaround for x86 code generation --===//
//
// LLVM 22's x86 back end turns a masked store whose constant mask has one
// lane set into a scalar store, and when the stored vector is a truncation
// (trunc <8 x i64> to <8 x i16>, a VPMOVQW store) it stores the untruncated
// element: 8 bytes instead of 2, writing lanes the mask had turned off. The
// loop vectorizer makes such stores from masked tail stores whose bounds are
// constants. Before code generation they become what that fold should have
// produced: the one element, stored alone.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/SingleLaneMaskedStores.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

using namespace llvm;

unsigned tessel::cpu::splitSingleLaneMaskedStores(Module &module) {
  SmallVector<IntrinsicInst *> stores;
  for (Function &fn : module)
    for (Instruction &inst : instructions(fn))
      if (auto *call = dyn_cast<IntrinsicInst>(&inst))
        if (call->getIntrinsicID() == Intrinsic::masked_store)
          stores.push_back(call);
  unsigned rewritten = 0;
  for (IntrinsicInst *store : stores) {
    // llvm.masked.store(value, ptr, mask); the alignment is on the pointer.
    Value *value = store->getArgOperand(0), *ptr = store->getArgOperand(1);
    auto *mask = dyn_cast<Constant>(store->getArgOperand(2));
    auto *type = dyn_cast<FixedVectorType>(value->getType());
    if (!mask || !type)
      continue;
    int lane = -1;
    bool single = true;
    for (unsigned i = 0; i < type->getNumElements() && single; ++i) {
      Constant *bit = mask->getAggregateElement(i);
      if (!bit || isa<UndefValue>(bit))
        single = false;
      else if (bit->isOneValue())
        single = lane < 0 ? (lane = int(i), true) : false;
    }
    if (!single || lane < 0)
      continue;
    IRBuilder<> b(store);
    Type *elt = type->getElementType();
    Value *element = b.CreateExtractElement(value, uint64_t(lane));
    Value *address = b.CreateConstInBoundsGEP1_64(elt, ptr, lane);
    Align align = store->getParamAlign(1).valueOrOne();
    Align eltAlign = commonAlignment(
        align, uint64_t(lane) * module.getDataLayout().getTypeStoreSize(elt));
    StoreInst *scalar = b.CreateAlignedStore(element, address, eltAlign);
    scalar->copyMetadata(*store);
    store->eraseFromParent();
    ++rewritten;
  }
  return rewritten;
}
