//===- NVIDIATargetInfo.cpp - NVVM for the per-thread lowering -----------===//
#include "tessel/NVIDIA/NVIDIATargetInfo.h"

#include "tessel/NVIDIA/ApproxMath.h"
#include "tessel/Conversion/TileGPUToLLVM/ModuleSymbols.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace tessel::nvidia;
using tessel::gpu::externFunction;
using tessel::gpu::globalString;

namespace {

/// Inline PTX with side effects (kept in order and never removed), whose
/// results come back as `results` values of type `type`.
SmallVector<Value> inlinePtx(OpBuilder &b, Location loc, Type type,
                             unsigned results, ValueRange operands,
                             StringRef text, StringRef constraints) {
  Type resultTy = type;
  if (results > 1)
    resultTy = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(results, type));
  auto op = b.create<LLVM::InlineAsmOp>(
      loc, results ? TypeRange(resultTy) : TypeRange(), operands, text,
      constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
      /*operand_attrs=*/ArrayAttr());
  if (results == 1)
    return {op.getRes()};
  SmallVector<Value> out;
  for (unsigned i = 0; i < results; ++i)
    out.push_back(b.create<LLVM::ExtractValueOp>(loc, op.getRes(), int64_t(i)));
  return out;
}

/// "$first, ..., $(first + n - 1)".
std::string operandList(size_t first, size_t n) {
  std::string list;
  for (size_t i = 0; i < n; ++i)
    list += (i ? ", $" : "$") + std::to_string(first + i);
  return list;
}

/// How inline PTX moves `bits` bits of numbers: one 16-bit register, or
/// 32-bit ones; nothing for other sizes.
struct PtxWords {
  Type word;
  int64_t count;
  char constraint;
  const char *suffix; // the ld/st type and vector width
};
std::optional<PtxWords> ptxWords(OpBuilder &b, Type type) {
  auto vt = dyn_cast<VectorType>(type);
  Type elt = vt ? vt.getElementType() : type;
  if (!elt.isIntOrFloat())
    return std::nullopt;
  switch (elt.getIntOrFloatBitWidth() * (vt ? vt.getNumElements() : 1)) {
  case 16: return PtxWords{b.getI16Type(), 1, 'h', ".b16"};
  case 32: return PtxWords{b.getI32Type(), 1, 'r', ".b32"};
  case 64: return PtxWords{b.getI32Type(), 2, 'r', ".v2.b32"};
  case 128: return PtxWords{b.getI32Type(), 4, 'r', ".v4.b32"};
  default: return std::nullopt;
  }
}

/// `value` split into its words, and words put back together as `type`.
SmallVector<Value> toWords(OpBuilder &b, Location loc, Value value,
                           const PtxWords &w) {
  if (w.count == 1)
    return {b.create<LLVM::BitcastOp>(loc, w.word, value)};
  Value packed = b.create<LLVM::BitcastOp>(
      loc, VectorType::get({w.count}, w.word), value);
  SmallVector<Value> words;
  for (int64_t i = 0; i < w.count; ++i)
    words.push_back(b.create<LLVM::ExtractElementOp>(
        loc, packed, b.create<LLVM::ConstantOp>(loc, b.getI32Type(), i)));
  return words;
}
Value fromWords(OpBuilder &b, Location loc, ValueRange words, Type type,
                const PtxWords &w) {
  if (w.count == 1)
    return b.create<LLVM::BitcastOp>(loc, type, words[0]);
  auto packedTy = VectorType::get({w.count}, w.word);
  Value packed = b.create<LLVM::PoisonOp>(loc, packedTy);
  for (int64_t i = 0; i < w.count; ++i)
    packed = b.create<LLVM::InsertElementOp>(
        loc, packed, words[i], b.create<LLVM::ConstantOp>(loc, b.getI32Type(), i));
  return b.create<LLVM::BitcastOp>(loc, type, packed);
}

} // namespace

Value NVIDIATargetInfo::threadId(OpBuilder &b, Location loc) const {
  return b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type());
}

Value NVIDIATargetInfo::programId(OpBuilder &b, Location loc,
                                  unsigned axis) const {
  Type i32 = b.getI32Type();
  if (numCtas > 1) {
    if (axis == 0)
      return b.create<NVVM::ClusterIdXOp>(loc, i32);
    if (axis == 1)
      return b.create<NVVM::ClusterIdYOp>(loc, i32);
    return b.create<NVVM::ClusterIdZOp>(loc, i32);
  }
  if (axis == 0)
    return b.create<NVVM::BlockIdXOp>(loc, i32);
  if (axis == 1)
    return b.create<NVVM::BlockIdYOp>(loc, i32);
  return b.create<NVVM::BlockIdZOp>(loc, i32);
}

Value NVIDIATargetInfo::numPrograms(OpBuilder &b, Location loc,
                                    unsigned axis) const {
  Type i32 = b.getI32Type();
  if (numCtas > 1) {
    if (axis == 0)
      return b.create<NVVM::ClusterDimXOp>(loc, i32);
    if (axis == 1)
      return b.create<NVVM::ClusterDimYOp>(loc, i32);
    return b.create<NVVM::ClusterDimZOp>(loc, i32);
  }
  if (axis == 0)
    return b.create<NVVM::GridDimXOp>(loc, i32);
  if (axis == 1)
    return b.create<NVVM::GridDimYOp>(loc, i32);
  return b.create<NVVM::GridDimZOp>(loc, i32);
}

Value NVIDIATargetInfo::ctaRank(OpBuilder &b, Location loc) const {
  if (numCtas == 1)
    return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), 0);
  return b.create<NVVM::ClusterId>(loc, b.getI32Type()); // %cluster_ctarank
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

Value NVIDIATargetInfo::shuffleIdx(OpBuilder &b, Location loc, Value v,
                                   Value srcLane) const {
  auto i32 = b.getI32Type();
  Value all = b.create<arith::ConstantIntOp>(loc, i32, -1);
  Value clamp = b.create<arith::ConstantIntOp>(loc, i32, 0x1f);
  return b.create<NVVM::ShflOp>(loc, i32, all, v, srcLane, clamp,
                                NVVM::ShflKind::idx, UnitAttr());
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
                                            ValueRange c,
                                            TypeRange fp8Types) const {
  MLIRContext *ctx = b.getContext();
  if (inputs == tessel::tilegpu::MmaInputs::FP8) {
    // The nvvm op does not take 8-bit floats yet (LLVM 22): its intrinsic,
    // named by D, A, B and C's types.
    auto name = [](Type t) { return isa<Float8E5M2Type>(t) ? "e5m2" : "e4m3"; };
    std::string intrinsic = std::string("llvm.nvvm.mma.m16n8k32.row.col.f32.") +
                            name(fp8Types[0]) + "." + name(fp8Types[1]) + ".f32";
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    SmallVector<Value> args(a.begin(), a.end());
    args.append(bv.begin(), bv.end());
    args.append(c.begin(), c.end());
    Value mma = LLVM::CallIntrinsicOp::create(b, loc, resultType,
                                              b.getStringAttr(intrinsic), args)
                    .getResult(0);
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(b.create<LLVM::ExtractValueOp>(loc, mma, i));
    return d;
  }
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

/// An i32 constant, as vector element indices are.
static Value index(OpBuilder &b, Location loc, int32_t i) {
  return LLVM::ConstantOp::create(b, loc, b.getI32IntegerAttr(i));
}

std::pair<Value, Value>
NVIDIATargetInfo::roundToFP8x2(OpBuilder &b, Location loc, Value x0, Value x1,
                               Type fp8Type) const {
  // cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b: b in the low byte, as
  // element 0 of the <2 x i8> result.
  auto pair = VectorType::get({2}, b.getI8Type());
  Value d = NVVM::ConvertF32x2ToF8x2Op::create(
      b, loc, pair, x1, x0, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, fp8Type);
  return {LLVM::ExtractElementOp::create(b, loc, d, index(b, loc, 0)),
          LLVM::ExtractElementOp::create(b, loc, d, index(b, loc, 1))};
}

std::pair<Value, Value>
NVIDIATargetInfo::widenFP8x2(OpBuilder &b, Location loc, Value x0, Value x1,
                             Type fp8Type) const {
  // cvt.rn.f16x2.{e4m3x2,e5m2x2}: exact.
  Value pair = LLVM::PoisonOp::create(b, loc, VectorType::get({2}, b.getI8Type()));
  pair = LLVM::InsertElementOp::create(b, loc, pair, x0, index(b, loc, 0));
  pair = LLVM::InsertElementOp::create(b, loc, pair, x1, index(b, loc, 1));
  Value h = NVVM::ConvertF8x2ToF16x2Op::create(
      b, loc, VectorType::get({2}, b.getF16Type()), pair, /*relu=*/false,
      fp8Type);
  return {LLVM::ExtractElementOp::create(b, loc, h, index(b, loc, 0)),
          LLVM::ExtractElementOp::create(b, loc, h, index(b, loc, 1))};
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

/// The wgmma type of a tile element type: fp16, bf16, e4m3, e5m2 or (tile's
/// i8, signed) s8.
static NVVM::WGMMATypes wgmmaType(Type t) {
  if (t.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  if (isa<Float8E5M2Type>(t))
    return NVVM::WGMMATypes::e5m2;
  if (t.isInteger(8))
    return NVVM::WGMMATypes::s8;
  return NVVM::WGMMATypes::f16;
}

SmallVector<Value> NVIDIATargetInfo::warpgroupMma(OpBuilder &b, Location loc,
                                                 Value descA, Value descB,
                                                 ValueRange acc, int n,
                                                 Type aType, Type bType,
                                                 bool aMNMajor,
                                                 bool bMNMajor) const {
  MLIRContext *ctx = b.getContext();
  Type accType = acc.front().getType();
  SmallVector<Type> fields(acc.size(), accType);
  auto structTy = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value inout = b.create<LLVM::PoisonOp>(loc, structTy);
  for (auto [i, v] : llvm::enumerate(acc))
    inout = b.create<LLVM::InsertValueOp>(loc, inout, v, int64_t(i));
  // K is 32 bytes of each operand's rows.
  int k = 256 / aType.getIntOrFloatBitWidth();
  // A row-major is K-major; column-major is M-major. B column-major is
  // K-major; row-major is N-major. The instruction reads an MN-major
  // operand with its transpose flag (imm-trans-a, imm-trans-b).
  auto mma = b.create<NVVM::WgmmaMmaAsyncOp>(
      loc, structTy, inout, descA, descB,
      NVVM::MMAShapeAttr::get(ctx, 64, n, k), wgmmaType(aType),
      wgmmaType(bType),
      accType.isInteger(32) ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32,
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
  // Operands: the outputs, the tied accumulators, then A and B.
  size_t count = acc.size();
  std::string type = bf16 ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + type + "." + type +
                     " {" + operandList(0, count) + "}, {" +
                     operandList(2 * count, 4) + "}, $" +
                     std::to_string(2 * count + 4) + ", p, 1, 1, " +
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
  return inlinePtx(b, loc, b.getF32Type(), count, operands, text, constraints);
}

void NVIDIATargetInfo::warpgroupMmaCommit(OpBuilder &b, Location loc) const {
  b.create<NVVM::WgmmaGroupSyncAlignedOp>(loc);
}

SmallVector<Value> NVIDIATargetInfo::warpgroupMmaWait(OpBuilder &b,
                                                     Location loc,
                                                     ValueRange values,
                                                     int pending) const {
  b.create<NVVM::WgmmaWaitGroupSyncOp>(loc, pending);
  // The wait defines no value, so LLVM could move a use of an accumulator
  // above it. Each accumulator passes through an empty asm with side effects
  // after the wait (asm statements keep their order), in pieces of at most
  // 64 values.
  SmallVector<Value> out;
  for (size_t first = 0; first < values.size(); first += 64) {
    size_t count = std::min<size_t>(64, values.size() - first);
    ValueRange piece = values.slice(first, count);
    Type type = piece.front().getType();
    std::string constraints;
    for (size_t i = 0; i < count; ++i)
      constraints += type.isF32() ? "=f," : "=r,";
    for (size_t i = 0; i < count; ++i)
      constraints += std::to_string(i) + (i + 1 < count ? "," : "");
    llvm::append_range(out, inlinePtx(b, loc, type, count, piece,
                                      /*text=*/"", constraints));
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
  // operands): the outputs, then the guard, the address and `other`.
  std::optional<PtxWords> w = ptxWords(b, type);
  if (!w)
    return {};
  SmallVector<Value> operands{pred, ptr};
  llvm::append_range(operands, toWords(b, loc, other, *w));
  std::string dst = operandList(0, w->count);
  std::string text = "@$" + std::to_string(w->count) + " ld" +
                     (isVolatile ? ".volatile" : "") + ".global" + w->suffix +
                     " " + (w->count > 1 ? "{ " + dst + " }" : dst) + ", [ $" +
                     std::to_string(w->count + 1) + " + 0 ];";
  std::string constraints;
  for (int64_t i = 0; i < w->count; ++i)
    constraints += std::string("=") + w->constraint + ",";
  constraints += "b,l";
  for (int64_t i = 0; i < w->count; ++i)
    constraints += "," + std::to_string(i);
  return fromWords(b, loc,
                   inlinePtx(b, loc, w->word, w->count, operands, text,
                             constraints),
                   type, *w);
}

bool NVIDIATargetInfo::predicatedStore(OpBuilder &b, Location loc, Value ptr,
                                       Value value, Value pred) const {
  // `@p st.global` (no NVVM op has a guard): the guard, the address, then
  // the words.
  std::optional<PtxWords> w = ptxWords(b, value.getType());
  if (!w)
    return false;
  SmallVector<Value> operands{pred, ptr};
  llvm::append_range(operands, toWords(b, loc, value, *w));
  std::string src = operandList(2, w->count);
  std::string text = std::string("@$0 st.global") + w->suffix + " [ $1 + 0 ], " +
                     (w->count > 1 ? "{ " + src + " }" : src) + ";";
  std::string constraints = "b,l";
  for (int64_t i = 0; i < w->count; ++i)
    constraints += std::string(",") + w->constraint;
  inlinePtx(b, loc, Type(), 0, operands, text, constraints);
  return true;
}

namespace {

/// PTX's qualifiers of an atomic's ordering and scope: `.sem.scope`.
std::string atomicQualifiers(tessel::tile::MemSemantic sem,
                             tessel::tile::MemSyncScope scope) {
  std::string text = ".";
  text += tessel::tile::stringifyMemSemantic(sem);
  text += ".";
  text += tessel::tile::stringifyMemSyncScope(scope);
  return text;
}

/// The guarded atom: `d` zero, then `@p atom... d, [a], operands`. The
/// operands are integers of the width `type` gives (16, 32 or 64 bits).
Value guardedAtom(OpBuilder &b, Location loc, const std::string &op,
                  Type type, Value ptr, ValueRange operands, Value pred) {
  unsigned bits = type.getIntOrFloatBitWidth();
  std::string reg = bits == 16 ? "h" : bits == 32 ? "r" : "l";
  std::string text = "mov.u" + std::to_string(bits) + " $0, 0x0;\n@$1 atom" +
                     op + " $0, [ $2 + 0 ]";
  std::string constraints = "=" + reg + ",b,l";
  SmallVector<Value> all{pred, ptr};
  for (auto [i, v] : llvm::enumerate(operands)) {
    text += ", $" + std::to_string(3 + i);
    constraints += "," + reg;
    all.push_back(v);
  }
  text += ";";
  return inlinePtx(b, loc, type, 1, all, text, constraints)[0];
}

} // namespace

Value NVIDIATargetInfo::atomicRMW(OpBuilder &b, Location loc,
                                  tile::AtomicRMWKind kind, Value ptr,
                                  Value val, Value pred, tile::MemSemantic sem,
                                  tile::MemSyncScope scope) const {
  Type t = val.getType();
  unsigned bits = t.getIntOrFloatBitWidth();
  std::string width = std::to_string(bits);
  std::string op;
  using Kind = tile::AtomicRMWKind;
  switch (kind) {
  case Kind::add: op = ".add.u" + width; break;
  case Kind::fadd:
    if (bits == 16) {
      // bf16 adds came with sm_90; fp16 ones with sm_70.
      if (t.isBF16() && computeCapability < 90)
        return {};
      op = t.isBF16() ? ".add.noftz.bf16" : ".add.noftz.f16";
    } else {
      op = ".add.f" + width;
    }
    break;
  case Kind::bit_and: op = ".and.b" + width; break;
  case Kind::bit_or: op = ".or.b" + width; break;
  case Kind::bit_xor: op = ".xor.b" + width; break;
  case Kind::xchg: op = ".exch.b" + width; break;
  case Kind::max: op = ".max.s" + width; break;
  case Kind::umax: op = ".max.u" + width; break;
  case Kind::min: op = ".min.s" + width; break;
  case Kind::umin: op = ".min.u" + width; break;
  case Kind::fmax:
  case Kind::fmin:
    return {};
  }
  Type word = b.getIntegerType(bits);
  Value operand = t == word ? val : b.create<LLVM::BitcastOp>(loc, word, val);
  Value old = guardedAtom(b, loc, atomicQualifiers(sem, scope) + ".global" + op,
                          word, ptr, operand, pred);
  return t == word ? old : b.create<LLVM::BitcastOp>(loc, t, old);
}

Value NVIDIATargetInfo::atomicCAS(OpBuilder &b, Location loc, Value ptr,
                                  Value cmp, Value val, Value pred,
                                  tile::MemSemantic sem,
                                  tile::MemSyncScope scope) const {
  Type t = val.getType();
  std::string op = atomicQualifiers(sem, scope) + ".global.cas.b" +
                   std::to_string(t.getIntOrFloatBitWidth());
  return guardedAtom(b, loc, op, t, ptr, {cmp, val}, pred);
}

void NVIDIATargetInfo::mbarrierInit(OpBuilder &b, Location loc, Value barrier,
                                    Value pred, int32_t arrivals) const {
  Value count = b.create<LLVM::ConstantOp>(loc, b.getI32Type(),
                                           b.getI32IntegerAttr(arrivals));
  b.create<NVVM::MBarrierInitOp>(loc, barrier, count, pred);
  // The initialization is visible to the copy engine's completions.
  b.create<NVVM::FenceMbarrierInitOp>(loc);
}

void NVIDIATargetInfo::mbarrierInval(OpBuilder &b, Location loc, Value barrier,
                                     Value pred) const {
  // nvvm.mbarrier.inval has no guard.
  Value address = b.create<LLVM::PtrToIntOp>(loc, b.getI32Type(), barrier);
  inlinePtx(b, loc, Type(), 0, {pred, address},
            "@$0 mbarrier.inval.shared::cta.b64 [$1];", "b,r");
}

void NVIDIATargetInfo::tensorMapLoad(OpBuilder &b, Location loc, Value dst,
                                     Value map, ValueRange coords,
                                     Value barrier, int64_t bytes,
                                     Value pred) const {
  Value count = b.create<LLVM::ConstantOp>(loc, b.getI32Type(),
                                           b.getI32IntegerAttr(int32_t(bytes)));
  b.create<NVVM::MBarrierArriveExpectTxOp>(loc, Type(), barrier, count,
                                           NVVM::MemScopeKind::CTA,
                                           /*relaxed=*/false, pred);
  b.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
      loc, dst, map, coords, barrier, /*im2colOffsets=*/ValueRange(),
      /*multicastMask=*/Value(), /*l2CacheHint=*/Value(),
      NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
      /*group=*/NVVM::CTAGroupKindAttr(), pred);
}

void NVIDIATargetInfo::fenceAsyncProxy(OpBuilder &b, Location loc) const {
  // fence.proxy.async: every state space (stores to the global array a tensor
  // map then reads, earlier users of the copy's shared memory).
  b.create<NVVM::FenceProxyOp>(loc, NVVM::ProxyKind::async,
                               NVVM::SharedSpaceAttr());
}

void NVIDIATargetInfo::tensorMapStore(OpBuilder &b, Location loc, Value map,
                                      ValueRange coords, Value src,
                                      Value pred) const {
  b.create<NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp>(
      loc, map, src, coords, /*l2CacheHint=*/Value(), NVVM::TMAStoreMode::TILE,
      pred);
  // Every thread commits and waits: the others' groups are empty.
  b.create<NVVM::CpAsyncBulkCommitGroupOp>(loc);
  b.create<NVVM::CpAsyncBulkWaitGroupOp>(loc, 0, /*read=*/UnitAttr());
}

void NVIDIATargetInfo::mbarrierWait(OpBuilder &b, Location loc, Value barrier,
                                    Value phase) const {
  // A loop of try_wait (suspending up to 10 ms at a time) until it holds.
  b.create<NVVM::MBarrierTryWaitParityOp>(
      loc, barrier, phase,
      b.create<LLVM::ConstantOp>(loc, b.getI32Type(),
                                 b.getI32IntegerAttr(10000000)));
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

void NVIDIATargetInfo::storeMatrix(OpBuilder &b, Location loc, Value sharedPtr,
                                   ValueRange words) const {
  MLIRContext *ctx = b.getContext();
  b.create<NVVM::StMatrixOp>(loc, sharedPtr, words, NVVM::MMALayout::row,
                             NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
                             NVVM::LdStMatrixEltType::B16);
}

/// CUDA's printf: vprintf(format, buffer), the arguments in a buffer of this
/// thread's local memory laid out as a struct of them (each aligned to its
/// size), which lives for the whole kernel (an alloca in its entry block).
void NVIDIATargetInfo::printf(OpBuilder &b, Location loc, StringRef format,
                              ValueRange args) const {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto fn = externFunction(b, loc, "vprintf",
                           LLVM::LLVMFunctionType::get(b.getI32Type(),
                                                       {ptr, ptr}));
  Value buffer;
  if (args.empty()) {
    buffer = b.create<LLVM::ZeroOp>(loc, ptr);
  } else {
    SmallVector<Type> types(args.getTypes());
    auto structType = LLVM::LLVMStructType::getLiteral(ctx, types);
    Block &entry = b.getInsertionBlock()
                       ->getParentOp()
                       ->getParentOfType<FunctionOpInterface>()
                       .getFunctionBody()
                       .front();
    {
      OpBuilder top(&entry, entry.begin());
      Value one = top.create<LLVM::ConstantOp>(loc, b.getI32Type(), 1);
      buffer = top.create<LLVM::AllocaOp>(loc, ptr, structType, one,
                                          /*alignment=*/8);
    }
    for (auto [i, arg] : llvm::enumerate(args)) {
      Value field = b.create<LLVM::GEPOp>(
          loc, ptr, structType, buffer,
          ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
      b.create<LLVM::StoreOp>(loc, arg, field);
    }
  }
  b.create<LLVM::CallOp>(loc, fn,
                         ValueRange{globalString(b, loc, format), buffer});
}

/// CUDA's __assertfail(message, file, line, function, charSize): the thread
/// traps; the launch fails with CUDA_ERROR_ASSERT.
void NVIDIATargetInfo::assertFail(OpBuilder &b, Location loc,
                                  StringRef message, StringRef file, int line,
                                  StringRef function) const {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto fn = externFunction(
      b, loc, "__assertfail",
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                  {ptr, ptr, b.getI32Type(), ptr,
                                   b.getI64Type()}));
  Value args[] = {globalString(b, loc, message), globalString(b, loc, file),
                  b.create<LLVM::ConstantOp>(loc, b.getI32Type(), line),
                  globalString(b, loc, function),
                  b.create<LLVM::ConstantOp>(loc, b.getI64Type(), 1)};
  b.create<LLVM::CallOp>(loc, fn, args);
}

void NVIDIATargetInfo::markKernel(Operation *func, int numThreads) const {
  Builder b(func->getContext());
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // Arguments passed by value (tensor maps) are read in place, through
  // their generic address: __grid_constant__.
  if (auto fn = dyn_cast<FunctionOpInterface>(func))
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (fn.getArgAttr(i, LLVM::LLVMDialect::getByValAttrName()))
        fn.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                      b.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                b.getDenseI32ArrayAttr({numThreads, 1, 1}));
  // A program's CTAs are one cluster (.explicitcluster, .reqnctapercluster):
  // a launch of numCtas times the programs along x makes the clusters.
  if (numCtas > 1)
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  b.getDenseI32ArrayAttr({numCtas, 1, 1}));
}

void NVIDIATargetInfo::addLegalDialects(ConversionTarget &target) const {
  target.addLegalDialect<NVVM::NVVMDialect>();
}

void NVIDIATargetInfo::populateMathPatterns(
    LLVMTypeConverter &converter, RewritePatternSet &patterns) const {
  populateLibDeviceConversionPatterns(converter, patterns, /*benefit=*/10);
  populateApproxMathPatterns(converter, patterns, /*benefit=*/20);
}
