//===- NVIDIATargetInfo.cpp - NVVM for the per-thread lowering -----------===//
#include "tessel/NVIDIA/NVIDIATargetInfo.h"

#include "tessel/NVIDIA/ApproxMath.h"

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

SmallVector<Value> NVIDIATargetInfo::mmaSync(OpBuilder &b, Location loc,
                                            tessel::tilegpu::MmaInputs inputs,
                                            ValueRange a, ValueRange bv,
                                            ValueRange c) const {
  MLIRContext *ctx = b.getContext();
  bool tf32 = inputs == tessel::tilegpu::MmaInputs::TF32;
  Type acc = tf32 ? b.getF32Type() : Type(b.getI32Type());
  auto resultType = LLVM::LLVMStructType::getLiteral(ctx, {acc, acc, acc, acc});
  NVVM::MMATypes ab = tf32 ? NVVM::MMATypes::tf32 : NVVM::MMATypes::s8;
  // int8 sums wrap, as the FMA loop's and the CPU backend's do.
  std::optional<NVVM::MMAIntOverflow> overflow;
  if (!tf32)
    overflow = NVVM::MMAIntOverflow::wrapped;
  auto mma = b.create<NVVM::MmaOp>(
      loc, resultType, a, bv, c,
      ArrayRef<int64_t>{16, 8, tessel::tilegpu::mmaSyncK(inputs)},
      std::optional<NVVM::MMAB1Op>(), overflow,
      std::array<NVVM::MMATypes, 2>{ab, ab},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(b.create<LLVM::ExtractValueOp>(loc, mma, i));
  return d;
}

Value NVIDIATargetInfo::roundToTF32(OpBuilder &b, Location loc,
                                    Value v) const {
  return b.create<NVVM::ConvertFloatToTF32Op>(
      loc, b.getI32Type(), v, NVVM::FPRoundingMode::RNA,
      NVVM::SaturationMode::NONE, /*relu=*/false);
}

Value NVIDIATargetInfo::warpgroupMmaDescriptor(OpBuilder &b, Location loc,
                                               Value sharedAddress,
                                               int64_t leadingBytes,
                                               int64_t strideBytes,
                                               int swizzleBytes) const {
  // PTX ISA "Matrix Descriptor Format": bits 0-13 the start address >> 4,
  // 16-29 the leading byte offset >> 4, 32-45 the stride byte offset >> 4,
  // 49-51 the base offset (0: tiles start at a multiple of the swizzle's
  // repeat), 62-63 the swizzle (1: 128B, 2: 64B, 3: 32B).
  int64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : 3;
  int64_t fixed = (((leadingBytes >> 4) & 0x3fff) << 16) |
                  (((strideBytes >> 4) & 0x3fff) << 32) | (mode << 62);
  auto i64 = b.getI64Type();
  Value start = b.create<arith::AndIOp>(
      loc,
      b.create<arith::ShRUIOp>(loc, b.create<arith::ExtUIOp>(loc, i64, sharedAddress),
                               b.create<arith::ConstantIntOp>(loc, i64, 4)),
      b.create<arith::ConstantIntOp>(loc, i64, 0x3fff));
  return b.create<arith::OrIOp>(loc, start,
                                b.create<arith::ConstantIntOp>(loc, i64, fixed));
}

void NVIDIATargetInfo::fenceSharedForWarpgroupMma(OpBuilder &b,
                                                  Location loc) const {
  b.create<NVVM::FenceProxyOp>(
      loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

void NVIDIATargetInfo::warpgroupMmaFence(OpBuilder &b, Location loc) const {
  b.create<NVVM::WgmmaFenceAlignedOp>(loc);
}

SmallVector<Value> NVIDIATargetInfo::warpgroupMma(OpBuilder &b, Location loc,
                                                 Value descA, Value descB,
                                                 ValueRange acc, int n,
                                                 bool bf16, bool aMNMajor,
                                                 bool bMNMajor) const {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> fields(acc.size(), b.getF32Type());
  auto structTy = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value inout = b.create<LLVM::PoisonOp>(loc, structTy);
  for (auto [i, v] : llvm::enumerate(acc))
    inout = b.create<LLVM::InsertValueOp>(loc, inout, v, int64_t(i));
  NVVM::WGMMATypes ab = bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  // A row-major is K-major; column-major is M-major. B column-major is
  // K-major; row-major is N-major. The instruction reads an MN-major
  // operand with its transpose flag (imm-trans-a, imm-trans-b).
  auto mma = b.create<NVVM::WgmmaMmaAsyncOp>(
      loc, structTy, inout, descA, descB,
      NVVM::MMAShapeAttr::get(ctx, 64, n, 16), ab, ab, NVVM::WGMMATypes::f32,
      NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
      NVVM::WGMMAScaleIn::one,
      aMNMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      bMNMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
      NVVM::MMAIntOverflowAttr());
  SmallVector<Value> d;
  for (size_t i = 0; i < acc.size(); ++i)
    d.push_back(b.create<LLVM::ExtractValueOp>(loc, mma, int64_t(i)));
  return d;
}

SmallVector<Value> NVIDIATargetInfo::warpgroupMmaRegisterA(
    OpBuilder &b, Location loc, ValueRange aRegs, Value descB, ValueRange acc,
    int n, bool bf16, bool bMNMajor) const {
  // The nvvm op takes A only through a descriptor: inline PTX, the
  // accumulators tied in and out, scale-d a true predicate (accumulate).
  MLIRContext *ctx = b.getContext();
  size_t count = acc.size();
  std::string type = bf16 ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + type + "." + type + " {";
  for (size_t i = 0; i < count; ++i)
    text += "$" + std::to_string(i) + (i + 1 < count ? ", " : "}, {");
  // Operands: the outputs, the tied accumulators, then A and B.
  for (size_t i = 0; i < 4; ++i)
    text += "$" + std::to_string(2 * count + i) + (i < 3 ? ", " : "}, ");
  text += "$" + std::to_string(2 * count + 4) + ", p, 1, 1, " +
          (bMNMajor ? "1" : "0") + ";\n}";
  std::string constraints;
  for (size_t i = 0; i < count; ++i)
    constraints += "=f,";
  for (size_t i = 0; i < count; ++i)
    constraints += std::to_string(i) + ",";
  constraints += "r,r,r,r,l";
  SmallVector<Value> operands(acc.begin(), acc.end());
  operands.append(aRegs.begin(), aRegs.end());
  operands.push_back(descB);
  SmallVector<Type> fields(count, b.getF32Type());
  auto structTy = LLVM::LLVMStructType::getLiteral(ctx, fields);
  auto mma = b.create<LLVM::InlineAsmOp>(
      loc, structTy, operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
      /*operand_attrs=*/ArrayAttr());
  SmallVector<Value> d;
  for (size_t i = 0; i < count; ++i)
    d.push_back(b.create<LLVM::ExtractValueOp>(loc, mma.getRes(), int64_t(i)));
  return d;
}

SmallVector<Value> NVIDIATargetInfo::warpgroupMmaWait(OpBuilder &b,
                                                     Location loc,
                                                     ValueRange values) const {
  b.create<NVVM::WgmmaGroupSyncAlignedOp>(loc);
  b.create<NVVM::WgmmaWaitGroupSyncOp>(loc, 0);
  // The wait defines no value, so LLVM could move a use of an accumulator
  // above it. Each accumulator passes through an empty asm with side effects
  // after the wait (asm statements keep their order), in pieces of at most
  // 64 values.
  MLIRContext *ctx = b.getContext();
  SmallVector<Value> out;
  for (size_t first = 0; first < values.size(); first += 64) {
    size_t count = std::min<size_t>(64, values.size() - first);
    ValueRange piece = values.slice(first, count);
    std::string constraints;
    for (size_t i = 0; i < count; ++i)
      constraints += "=f,";
    for (size_t i = 0; i < count; ++i)
      constraints += std::to_string(i) + (i + 1 < count ? "," : "");
    SmallVector<Type> fields(count, b.getF32Type());
    auto structTy = LLVM::LLVMStructType::getLiteral(ctx, fields);
    auto tie = b.create<LLVM::InlineAsmOp>(
        loc, structTy, piece, /*asm_string=*/"", constraints,
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
        /*operand_attrs=*/ArrayAttr());
    for (size_t i = 0; i < count; ++i)
      out.push_back(b.create<LLVM::ExtractValueOp>(loc, tie.getRes(), int64_t(i)));
  }
  return out;
}

void NVIDIATargetInfo::asyncCopy(OpBuilder &b, Location loc, Value sharedPtr,
                                 Value globalPtr, int bytes,
                                 Value srcBytes) const {
  // 16-byte copies bypass L1 (.cg), as the operands are read once per
  // program; smaller ones can only go through it (.ca).
  auto modifier = bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                              : NVVM::LoadCacheModifierKind::CA;
  b.create<NVVM::CpAsyncOp>(
      loc, sharedPtr, globalPtr, b.getI32IntegerAttr(bytes),
      NVVM::LoadCacheModifierKindAttr::get(b.getContext(), modifier),
      srcBytes);
}

Value NVIDIATargetInfo::predicatedLoad(OpBuilder &b, Location loc, Type type,
                                       Value ptr, Value pred, Value other,
                                       bool isVolatile) const {
  // `@p ld.global` into registers that hold `other` beforehand (tied
  // operands), as 32-bit words or one 16-bit one.
  auto vt = dyn_cast<VectorType>(type);
  Type elt = vt ? vt.getElementType() : type;
  if (!elt.isIntOrFloat())
    return {};
  int64_t bits = elt.getIntOrFloatBitWidth() * (vt ? vt.getNumElements() : 1);
  if (bits != 16 && bits != 32 && bits != 64 && bits != 128)
    return {};
  bool half = bits == 16;
  int64_t words = half ? 1 : bits / 32;
  Type word = half ? b.getI16Type() : b.getI32Type();
  auto wordsTy = VectorType::get({words}, word);
  SmallVector<Value> operands{pred, ptr};
  if (words == 1) {
    operands.push_back(b.create<LLVM::BitcastOp>(loc, word, other));
  } else {
    Value packed = b.create<LLVM::BitcastOp>(loc, wordsTy, other);
    for (int64_t w = 0; w < words; ++w)
      operands.push_back(b.create<LLVM::ExtractElementOp>(
          loc, packed, b.create<LLVM::ConstantOp>(loc, b.getI32Type(), w)));
  }
  std::string dst;
  for (int64_t w = 0; w < words; ++w)
    dst += "$" + std::to_string(w) + (w + 1 < words ? ", " : "");
  std::string text =
      "@$" + std::to_string(words) + " ld" + (isVolatile ? ".volatile" : "") +
      ".global" + (words > 1 ? ".v" + std::to_string(words) : "") +
      (half ? ".b16 " : ".b32 ") + (words > 1 ? "{ " + dst + " }" : dst) +
      ", [ $" + std::to_string(words + 1) + " + 0 ];";
  std::string constraints;
  for (int64_t w = 0; w < words; ++w)
    constraints += half ? "=h," : "=r,";
  constraints += "b,l";
  for (int64_t w = 0; w < words; ++w)
    constraints += "," + std::to_string(w);
  Type resultTy =
      words == 1 ? word
                 : LLVM::LLVMStructType::getLiteral(
                       b.getContext(), SmallVector<Type>(words, word));
  auto load = b.create<LLVM::InlineAsmOp>(
      loc, resultTy, operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
      /*operand_attrs=*/ArrayAttr());
  Value result = load.getRes();
  if (words > 1) {
    Value packed = b.create<LLVM::PoisonOp>(loc, wordsTy);
    for (int64_t w = 0; w < words; ++w)
      packed = b.create<LLVM::InsertElementOp>(
          loc, packed, b.create<LLVM::ExtractValueOp>(loc, result, w),
          b.create<LLVM::ConstantOp>(loc, b.getI32Type(), w));
    result = packed;
  }
  return b.create<LLVM::BitcastOp>(loc, type, result);
}

bool NVIDIATargetInfo::predicatedStore(OpBuilder &b, Location loc, Value ptr,
                                       Value value, Value pred) const {
  // `@p st.global` (no NVVM op has a guard), the value in 32-bit words or
  // one 16-bit one.
  Type t = value.getType();
  auto vt = dyn_cast<VectorType>(t);
  Type elt = vt ? vt.getElementType() : t;
  if (!elt.isIntOrFloat())
    return false;
  int64_t bits = elt.getIntOrFloatBitWidth() * (vt ? vt.getNumElements() : 1);
  if (bits == 16) {
    Value half = b.create<LLVM::BitcastOp>(loc, b.getI16Type(), value);
    b.create<LLVM::InlineAsmOp>(
        loc, TypeRange(), ValueRange{pred, ptr, half},
        "@$0 st.global.b16 [ $1 + 0 ], $2;", "b,l,h",
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
        /*operand_attrs=*/ArrayAttr());
    return true;
  }
  if (bits != 32 && bits != 64 && bits != 128)
    return false;
  int64_t words = bits / 32;
  Type i32 = b.getI32Type();
  SmallVector<Value> operands{pred, ptr};
  if (words == 1) {
    operands.push_back(b.create<LLVM::BitcastOp>(loc, i32, value));
  } else {
    Value packed = b.create<LLVM::BitcastOp>(
        loc, VectorType::get({words}, i32), value);
    for (int64_t w = 0; w < words; ++w)
      operands.push_back(b.create<LLVM::ExtractElementOp>(
          loc, packed, b.create<LLVM::ConstantOp>(loc, i32, w)));
  }
  std::string asmText = "@$0 st.global";
  asmText += words == 1 ? ".b32 [ $1 + 0 ], $2;"
                        : ".v" + std::to_string(words) + ".b32 [ $1 + 0 ], { ";
  if (words > 1) {
    for (int64_t w = 0; w < words; ++w)
      asmText += "$" + std::to_string(w + 2) + (w + 1 < words ? ", " : " };");
  }
  std::string constraints = "b,l";
  for (int64_t w = 0; w < words; ++w)
    constraints += ",r";
  b.create<LLVM::InlineAsmOp>(
      loc, TypeRange(), operands, asmText, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr(),
      /*operand_attrs=*/ArrayAttr());
  return true;
}

void NVIDIATargetInfo::asyncCommit(OpBuilder &b, Location loc) const {
  b.create<NVVM::CpAsyncCommitGroupOp>(loc);
}

void NVIDIATargetInfo::asyncWait(OpBuilder &b, Location loc,
                                 int pending) const {
  b.create<NVVM::CpAsyncWaitGroupOp>(loc, b.getI32IntegerAttr(pending));
}

SmallVector<Value> NVIDIATargetInfo::loadMatrix(OpBuilder &b, Location loc,
                                               Value sharedPtr, int count,
                                               bool transpose) const {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Type result = count == 1 ? i32
                           : LLVM::LLVMStructType::getLiteral(
                                 ctx, SmallVector<Type>(count, i32));
  Value m = b.create<NVVM::LdMatrixOp>(
      loc, result, sharedPtr, count,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8), NVVM::LdStMatrixEltType::B16);
  if (count == 1)
    return {m};
  SmallVector<Value> out;
  for (int i = 0; i < count; ++i)
    out.push_back(b.create<LLVM::ExtractValueOp>(loc, m, int64_t(i)));
  return out;
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
  populateApproxMathPatterns(converter, patterns, /*benefit=*/20);
}
