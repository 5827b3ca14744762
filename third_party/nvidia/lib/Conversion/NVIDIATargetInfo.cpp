//===- NVIDIATargetInfo.cpp - NVVM for the per-thread lowering -----------===//
#include "tessel/NVIDIA/NVIDIATargetInfo.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace tessel::nvidia;

Value NVIDIATargetInfo::threadId(OpBuilder &b, Location loc) const {
  return b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type());
}

Value NVIDIATargetInfo::programId(OpBuilder &b, Location loc,
                                  unsigned axis) const {
  Type i32 = b.getI32Type();
  if (axis == 0)
    return b.create<NVVM::BlockIdXOp>(loc, i32);
  if (axis == 1)
    return b.create<NVVM::BlockIdYOp>(loc, i32);
  return b.create<NVVM::BlockIdZOp>(loc, i32);
}

Value NVIDIATargetInfo::numPrograms(OpBuilder &b, Location loc,
                                    unsigned axis) const {
  Type i32 = b.getI32Type();
  if (axis == 0)
    return b.create<NVVM::GridDimXOp>(loc, i32);
  if (axis == 1)
    return b.create<NVVM::GridDimYOp>(loc, i32);
  return b.create<NVVM::GridDimZOp>(loc, i32);
}

void NVIDIATargetInfo::barrier(OpBuilder &b, Location loc) const {
  b.create<NVVM::Barrier0Op>(loc);
}

Value NVIDIATargetInfo::shuffleXor(OpBuilder &b, Location loc, Value v,
                                   int laneMask) const {
  auto i32 = b.getI32Type();
  Value all = b.create<arith::ConstantIntOp>(loc, i32, -1);
  Value offset = b.create<arith::ConstantIntOp>(loc, i32, laneMask);
  Value clamp = b.create<arith::ConstantIntOp>(loc, i32, 0x1f);
  return b.create<NVVM::ShflOp>(loc, i32, all, v, offset, clamp,
                                NVVM::ShflKind::bfly, UnitAttr());
}

SmallVector<Value> NVIDIATargetInfo::mma16816(OpBuilder &b, Location loc,
                                             ValueRange a, ValueRange bv,
                                             ValueRange c, bool bf16) const {
  MLIRContext *ctx = b.getContext();
  // fp16 pairs are vector<2xf16>; bf16 pairs stay i32 with their PTX type.
  auto operand = [&](Value v) -> Value {
    if (bf16)
      return v;
    return b.create<LLVM::BitcastOp>(
        loc, VectorType::get({2}, b.getF16Type()), v);
  };
  SmallVector<Value> as, bs;
  for (Value v : a)
    as.push_back(operand(v));
  for (Value v : bv)
    bs.push_back(operand(v));
  Type f32 = b.getF32Type();
  auto resultType =
      LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  std::optional<std::array<NVVM::MMATypes, 2>> ptxTypes;
  if (bf16)
    ptxTypes = std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                             NVVM::MMATypes::bf16};
  auto mma = b.create<NVVM::MmaOp>(
      loc, resultType, as, bs, c, ArrayRef<int64_t>{16, 8, 16},
      std::optional<NVVM::MMAB1Op>(), std::optional<NVVM::MMAIntOverflow>(),
      ptxTypes,
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(b.create<LLVM::ExtractValueOp>(loc, mma, i));
  return d;
}

void NVIDIATargetInfo::markKernel(Operation *func, int numThreads) const {
  Builder b(func->getContext());
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                b.getDenseI32ArrayAttr({numThreads, 1, 1}));
}

void NVIDIATargetInfo::populateMathPatterns(
    LLVMTypeConverter &converter, RewritePatternSet &patterns) const {
  populateLibDeviceConversionPatterns(converter, patterns, /*benefit=*/10);
}
