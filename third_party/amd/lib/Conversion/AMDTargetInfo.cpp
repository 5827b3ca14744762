//===- AMDTargetInfo.cpp - ROCDL for the per-thread lowering -------------===//
#include "tessel/AMD/AMDTargetInfo.h"

#include "tessel/Conversion/TileGPUToLLVM/ModuleSymbols.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/MathToROCDL/MathToROCDL.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::amd;
using gpu::externFunction;
using gpu::globalString;

namespace {

Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), v);
}
Value i64Const(OpBuilder &b, Location loc, int64_t v) {
  return b.create<LLVM::ConstantOp>(loc, b.getI64Type(), v);
}

/// The LLVM ordering of an atomic of ordering `sem`.
LLVM::AtomicOrdering ordering(tile::MemSemantic sem) {
  switch (sem) {
  case tile::MemSemantic::relaxed: return LLVM::AtomicOrdering::monotonic;
  case tile::MemSemantic::acquire: return LLVM::AtomicOrdering::acquire;
  case tile::MemSemantic::release: return LLVM::AtomicOrdering::release;
  case tile::MemSemantic::acq_rel: return LLVM::AtomicOrdering::acq_rel;
  }
  return LLVM::AtomicOrdering::acq_rel;
}

/// AMDGPU's synchronization scope of an atomic among the threads of `scope`
/// (the empty scope is the whole system).
StringRef syncScope(tile::MemSyncScope scope) {
  switch (scope) {
  case tile::MemSyncScope::gpu: return "agent";
  case tile::MemSyncScope::cta: return "workgroup";
  case tile::MemSyncScope::sys: return "";
  }
  return "agent";
}

/// `make()`'s value where `pred` holds, zero (of type `type`) elsewhere; the
/// atomic inside runs only where it holds.
Value guarded(OpBuilder &b, Location loc, Type type, Value pred,
              llvm::function_ref<Value(OpBuilder &)> make) {
  auto ifOp = b.create<scf::IfOp>(loc, TypeRange{type}, pred,
                                  /*withElseRegion=*/true);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  tb.create<scf::YieldOp>(loc, make(tb));
  OpBuilder eb = ifOp.getElseBodyBuilder();
  eb.create<scf::YieldOp>(loc,
                          eb.create<LLVM::ZeroOp>(loc, type).getResult());
  return ifOp.getResult(0);
}

/// fp32 exp(x) as Triton computes it on AMD GPUs: 2^(x * log2(e)), one
/// multiply and LLVM's exp2 (v_exp_f32, subnormal results kept), instead of
/// OCML's exp with its own range reduction.
struct Exp2Exp : ConvertOpToLLVMPattern<math::ExpOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(math::ExpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Type f32 = rw.getF32Type();
    if (adaptor.getOperand().getType() != f32)
      return failure();
    Location loc = op.getLoc();
    Value log2e = LLVM::ConstantOp::create(
        rw, loc, f32, rw.getF32FloatAttr(1.4426950408889634f));
    Value scaled = LLVM::FMulOp::create(rw, loc, adaptor.getOperand(), log2e);
    rw.replaceOpWithNewOp<LLVM::Exp2Op>(op, f32, scaled);
    return success();
  }
};

/// Math that LLVM's AMDGPU backend computes inaccurately or not at all, as
/// OCML computes it: fp32 sin, cos and tan (LLVM's llvm.sin.f32 is v_sin_f32
/// of x / 2pi, whose error grows with |x|: 6e-6 at 100, 7e-4 at 10^4) and
/// the fp64 exp, exp2, log, log2, sin, cos and tan, for which it has no
/// instruction and no library to call (found by running the suite and the
/// fuzzer on sim:gfx942).
template <typename MathOp>
struct OcmlCall : ConvertOpToLLVMPattern<MathOp> {
  OcmlCall(LLVMTypeConverter &converter, const char *f32Symbol,
           const char *f64Symbol)
      : ConvertOpToLLVMPattern<MathOp>(converter, /*benefit=*/20),
        f32Symbol(f32Symbol), f64Symbol(f64Symbol) {}

  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Type type = adaptor.getOperand().getType();
    const char *symbol = type.isF32() ? f32Symbol : type.isF64() ? f64Symbol : nullptr;
    if (!symbol)
      return failure();
    auto module = op->template getParentOfType<ModuleOp>();
    auto callee = module.template lookupSymbol<LLVM::LLVMFuncOp>(symbol);
    if (!callee) {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(module.getBody());
      callee = LLVM::LLVMFuncOp::create(
          rw, op.getLoc(), symbol, LLVM::LLVMFunctionType::get(type, {type}));
    }
    rw.template replaceOpWithNewOp<LLVM::CallOp>(op, callee,
                                                 adaptor.getOperand());
    return success();
  }

  const char *f32Symbol, *f64Symbol;
};

/// The lane of this thread in its wave (programs are 1-D: a wave is 64
/// consecutive work-items).
Value laneId(OpBuilder &b, Location loc, Value threadId) {
  return b.create<LLVM::AndOp>(loc, threadId, i32Const(b, loc, 63));
}

} // namespace

Value AMDTargetInfo::threadId(OpBuilder &b, Location loc) const {
  return b.create<ROCDL::ThreadIdXOp>(loc, b.getI32Type());
}

Value AMDTargetInfo::programId(OpBuilder &b, Location loc,
                               unsigned axis) const {
  Type i32 = b.getI32Type();
  if (axis == 0)
    return b.create<ROCDL::BlockIdXOp>(loc, i32);
  if (axis == 1)
    return b.create<ROCDL::BlockIdYOp>(loc, i32);
  return b.create<ROCDL::BlockIdZOp>(loc, i32);
}

Value AMDTargetInfo::numPrograms(OpBuilder &b, Location loc,
                                 unsigned axis) const {
  // The HSA dispatch packet holds the grid's size in work-items (u32 at
  // byte 12 + 4 * axis) and the workgroup's (u16 at byte 4 + 2 * axis); a
  // launch makes the grid a whole number of workgroups.
  MLIRContext *ctx = b.getContext();
  auto constant = LLVM::LLVMPointerType::get(ctx, 4);
  Value packet =
      b.create<LLVM::CallIntrinsicOp>(
           loc, Type(constant), b.getStringAttr("llvm.amdgcn.dispatch.ptr"),
           ValueRange{})
          .getResult(0);
  Type i8 = b.getI8Type();
  auto field = [&](int64_t offset, Type type, unsigned align) -> Value {
    Value at = b.create<LLVM::GEPOp>(loc, constant, i8, packet,
                                     ArrayRef<LLVM::GEPArg>{offset});
    return b.create<LLVM::LoadOp>(loc, type, at, align, /*isVolatile=*/false,
                                  /*isNonTemporal=*/false,
                                  /*isInvariant=*/true);
  };
  Value grid = field(12 + 4 * axis, b.getI32Type(), 4);
  Value group = b.create<LLVM::ZExtOp>(
      loc, b.getI32Type(), field(4 + 2 * axis, b.getI16Type(), 2));
  return b.create<LLVM::UDivOp>(loc, grid, group);
}

Value AMDTargetInfo::ctaRank(OpBuilder &b, Location loc) const {
  return i32Const(b, loc, 0); // a program is one workgroup
}

void AMDTargetInfo::barrier(OpBuilder &b, Location loc) const {
  // HIP's __syncthreads: LDS writes released before the barrier, acquired
  // after it. LLVM's s.barrier touches no memory, and its machine sinking
  // moves LDS loads past the fences into the blocks that use them, past the
  // barrier and after other waves' writes (a reduction's partial sums read
  // after its results overwrote them, found by the AMDGCN simulator): an
  // empty asm that clobbers memory keeps every load and store on its side.
  b.create<LLVM::FenceOp>(loc, LLVM::AtomicOrdering::release, "workgroup");
  b.create<ROCDL::SBarrierOp>(loc);
  b.create<LLVM::InlineAsmOp>(
      loc, /*res=*/Type(), ValueRange(), /*asm_string=*/"",
      /*constraints=*/"~{memory}", /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  b.create<LLVM::FenceOp>(loc, LLVM::AtomicOrdering::acquire, "workgroup");
}

Value AMDTargetInfo::shuffleXor(OpBuilder &b, Location loc, Value v,
                                int laneMask) const {
  // Within a quad: one DPP move (quad_perm), which LLVM may fold into the
  // instruction that uses it.
  if (laneMask >= 1 && laneMask <= 3) {
    int32_t perm = 0;
    for (int i = 0; i < 4; ++i)
      perm |= (i ^ laneMask) << (2 * i);
    Value old = b.create<LLVM::PoisonOp>(loc, v.getType());
    return b.create<ROCDL::DPPUpdateOp>(loc, v.getType(), old, v, perm,
                                        /*rowMask=*/0xf, /*bankMask=*/0xf,
                                        /*boundCtrl=*/false);
  }
  // Within 32 lanes: ds_swizzle_b32 in bitmask mode (lane ^ xor_mask, the
  // and-mask keeping all five bits), no address to compute.
  if (laneMask >= 4 && laneMask < 32)
    return b.create<ROCDL::DsSwizzleOp>(loc, b.getI32Type(), v,
                                        i32Const(b, loc, 0x1f | laneMask << 10));
  Value lane = laneId(b, loc, threadId(b, loc));
  Value src = b.create<LLVM::XOrOp>(loc, lane, i32Const(b, loc, laneMask));
  return shuffleIdx(b, loc, v, src);
}

Value AMDTargetInfo::shuffleIdx(OpBuilder &b, Location loc, Value v,
                                Value srcLane) const {
  // ds_bpermute_b32 reads lane (address / 4) of the wave.
  Value address = b.create<LLVM::ShlOp>(loc, srcLane, i32Const(b, loc, 2));
  return b.create<ROCDL::DsBpermuteOp>(loc, b.getI32Type(), address, v);
}

Value AMDTargetInfo::bufferResource(OpBuilder &b, Location loc, Value base,
                                    int64_t range) const {
  // CDNA's word 3 of a raw buffer's V#: DATA_FORMAT 32 (an invalid format
  // would make every access out of range), NUM_FORMAT float; no swizzle,
  // no index stride: offsets are bytes, checked against num_records.
  constexpr int32_t kCdnaRawBufferFlags = (7 << 12) | (4 << 15);
  return b.create<ROCDL::MakeBufferRsrcOp>(
      loc, LLVM::LLVMPointerType::get(b.getContext(), 8), base,
      b.create<LLVM::ConstantOp>(loc, b.getI16Type(), 0), i64Const(b, loc, range),
      i32Const(b, loc, kCdnaRawBufferFlags));
}

namespace {
/// The type a buffer access of `type` moves: integers of its size (i8,
/// i16, i32, then vectors of i32), which every buffer instruction takes.
Type bufferAccessType(Type type) {
  MLIRContext *ctx = type.getContext();
  unsigned bits = 0;
  if (auto v = dyn_cast<VectorType>(type))
    bits = v.getNumElements() * v.getElementType().getIntOrFloatBitWidth();
  else
    bits = type.getIntOrFloatBitWidth();
  if (bits <= 32)
    return IntegerType::get(ctx, bits);
  return VectorType::get({int64_t(bits / 32)}, IntegerType::get(ctx, 32));
}
} // namespace

Value AMDTargetInfo::bufferLoad(OpBuilder &b, Location loc, Type type,
                                Value rsrc, Value offset) const {
  Type raw = bufferAccessType(type);
  Value v = b.create<ROCDL::RawPtrBufferLoadOp>(
      loc, raw, rsrc, offset, i32Const(b, loc, 0), i32Const(b, loc, 0),
      ArrayAttr(), ArrayAttr(), ArrayAttr());
  // LLVM 22's AMDGPU back end folds a sign extension of a byte or short
  // buffer load into a new sbyte/sshort load that keeps the input chain
  // only: nothing orders it before the fences, barriers and stores that
  // follow the old load, and the scheduler may put it after them (a load
  // read another wave's store past the barrier between them, fuzz seed
  // 1933224617 kernel 66). A freeze keeps the fold out; the extension
  // becomes a v_bfe_i32 after the ordered ubyte/ushort load.
  if (auto it = dyn_cast<IntegerType>(raw); it && it.getWidth() < 32)
    v = b.create<LLVM::FreezeOp>(loc, v);
  return raw == type ? v : b.create<LLVM::BitcastOp>(loc, type, v).getResult();
}

void AMDTargetInfo::bufferStore(OpBuilder &b, Location loc, Value value,
                                Value rsrc, Value offset) const {
  Type raw = bufferAccessType(value.getType());
  if (raw != value.getType())
    value = b.create<LLVM::BitcastOp>(loc, raw, value);
  b.create<ROCDL::RawPtrBufferStoreOp>(loc, value, rsrc, offset,
                                       i32Const(b, loc, 0), i32Const(b, loc, 0),
                                       ArrayAttr(), ArrayAttr(), ArrayAttr());
}

Value AMDTargetInfo::transposedLdsRead(OpBuilder &b, Location loc, Value ptr,
                                       unsigned bits) const {
  if (!hasTransposedLdsReads())
    return {};
  if (bits == 16)
    return b.create<ROCDL::ds_read_tr16_b64>(
        loc, VectorType::get({4}, b.getI16Type()), ptr);
  if (bits == 8) {
    Value v = b.create<ROCDL::ds_read_tr8_b64>(
        loc, VectorType::get({2}, b.getI32Type()), ptr);
    return b.create<LLVM::BitcastOp>(loc, VectorType::get({8}, b.getI8Type()),
                                     v);
  }
  return {};
}

Value AMDTargetInfo::predicatedLoad(OpBuilder &, Location, Type, Value, Value,
                                    Value, bool) const {
  return {}; // a branch around the load: the guarded lanes skip it (exec)
}

bool AMDTargetInfo::predicatedStore(OpBuilder &, Location, Value, Value,
                                    Value) const {
  return false;
}

Value AMDTargetInfo::atomicRMW(OpBuilder &b, Location loc,
                               tile::AtomicRMWKind kind, Value ptr, Value val,
                               Value pred, tile::MemSemantic sem,
                               tile::MemSyncScope scope) const {
  using Kind = tile::AtomicRMWKind;
  using Bin = LLVM::AtomicBinOp;
  Bin bin;
  switch (kind) {
  case Kind::add: bin = Bin::add; break;
  case Kind::fadd:
    // 16-bit float adds: the caller's compare-and-swap loop (fp32 sums
    // rounded once), as every chip computes them alike.
    if (val.getType().getIntOrFloatBitWidth() == 16)
      return {};
    bin = Bin::fadd;
    break;
  case Kind::bit_and: bin = Bin::_and; break;
  case Kind::bit_or: bin = Bin::_or; break;
  case Kind::bit_xor: bin = Bin::_xor; break;
  case Kind::xchg: bin = Bin::xchg; break;
  case Kind::max: bin = Bin::max; break;
  case Kind::umax: bin = Bin::umax; break;
  case Kind::min: bin = Bin::min; break;
  case Kind::umin: bin = Bin::umin; break;
  case Kind::fmax:
  case Kind::fmin:
    return {};
  }
  return guarded(b, loc, val.getType(), pred, [&](OpBuilder &tb) -> Value {
    return tb.create<LLVM::AtomicRMWOp>(loc, bin, ptr, val, ordering(sem),
                                        syncScope(scope));
  });
}

Value AMDTargetInfo::atomicCAS(OpBuilder &b, Location loc, Value ptr,
                               Value cmp, Value val, Value pred,
                               tile::MemSemantic sem,
                               tile::MemSyncScope scope) const {
  return guarded(b, loc, val.getType(), pred, [&](OpBuilder &tb) -> Value {
    // A failed exchange orders as the successful one may, without release.
    LLVM::AtomicOrdering success = ordering(sem);
    LLVM::AtomicOrdering failure =
        success == LLVM::AtomicOrdering::release
            ? LLVM::AtomicOrdering::monotonic
        : success == LLVM::AtomicOrdering::acq_rel
            ? LLVM::AtomicOrdering::acquire
            : success;
    auto op = tb.create<LLVM::AtomicCmpXchgOp>(loc, ptr, cmp, val, success,
                                               failure, syncScope(scope));
    return tb.create<LLVM::ExtractValueOp>(loc, op.getRes(), int64_t(0));
  });
}

int AMDTargetInfo::mfmaKWidth(gpu::MfmaInputs inputs) const {
  switch (inputs) {
  case gpu::MfmaInputs::F16:
  case gpu::MfmaInputs::BF16:
    return 4; // v_mfma_f32_{32x32x8,16x16x16}{f16,bf16_1k}
  case gpu::MfmaInputs::F32:
    return 1; // v_mfma_f32_{32x32x2,16x16x4}f32
  case gpu::MfmaInputs::I8:
    // gfx90a's v_mfma_i32_{32x32x8,16x16x16}i8; CDNA3 on:
    // v_mfma_i32_{32x32x16,16x16x32}_i8.
    return chip == "gfx90a" ? 4 : 8;
  case gpu::MfmaInputs::FP8_FP8:
  case gpu::MfmaInputs::FP8_BF8:
  case gpu::MfmaInputs::BF8_FP8:
  case gpu::MfmaInputs::BF8_BF8:
    return 8; // v_mfma_f32_{32x32x16,16x16x32}_{fp8,bf8}_{fp8,bf8}
  case gpu::MfmaInputs::F64:
    return 1; // v_mfma_f64_16x16x4f64
  }
  return 0;
}

int AMDTargetInfo::mfmaWideKWidth(gpu::MfmaInputs inputs) const {
  bool fp8 = inputs == gpu::MfmaInputs::FP8_FP8 ||
             inputs == gpu::MfmaInputs::FP8_BF8 ||
             inputs == gpu::MfmaInputs::BF8_FP8 ||
             inputs == gpu::MfmaInputs::BF8_BF8;
  if (chip != "gfx950")
    return 0;
  if (fp8)
    return 32; // v_mfma_f32_{32x32x64,16x16x128}_f8f6f4
  if (inputs == gpu::MfmaInputs::F16 || inputs == gpu::MfmaInputs::BF16)
    return 8; // v_mfma_f32_{32x32x16,16x16x32}_{f16,bf16}
  if (inputs == gpu::MfmaInputs::I8)
    return 16; // v_mfma_i32_{32x32x32,16x16x64}_i8
  return 0;
}

Value AMDTargetInfo::mfma(OpBuilder &b, Location loc, gpu::MfmaInputs inputs,
                          int instr, Value a, Value bv, Value acc) const {
  // cbsz, abid, blgp: no broadcast or lane swizzle.
  Value zero = i32Const(b, loc, 0);
  Type accTy = acc.getType();
  auto as = [&](Type t) {
    a = b.create<LLVM::BitcastOp>(loc, t, a);
    bv = b.create<LLVM::BitcastOp>(loc, t, bv);
  };
  auto make = [&](auto tag) -> Value {
    using Op = decltype(tag);
    return b.create<Op>(loc, accTy, ValueRange{a, bv, acc, zero, zero, zero});
  };
  bool big = instr == 32;
  // Elements a lane: gfx950's double-K forms take 8 16-bit ones or 16
  // bytes, its f8f6f4 32 8-bit floats.
  int64_t perLane = cast<VectorType>(a.getType()).getNumElements();
  if (perLane == 32) {
    // gfx950's f8f6f4 on 32 8-bit floats a lane: cbsz and blgp name A's and
    // B's formats (0 e4m3, 1 e5m2); zero scales select the unscaled form.
    as(VectorType::get({8}, b.getI32Type()));
    bool aE5 = inputs == gpu::MfmaInputs::BF8_FP8 ||
               inputs == gpu::MfmaInputs::BF8_BF8;
    bool bE5 = inputs == gpu::MfmaInputs::FP8_BF8 ||
               inputs == gpu::MfmaInputs::BF8_BF8;
    SmallVector<Value> args{a,    bv,   acc,  i32Const(b, loc, aE5),
                            i32Const(b, loc, bE5), zero, zero, zero, zero};
    if (big)
      return b.create<ROCDL::mfma_scale_f32_32x32x64_f8f6f4>(loc, accTy, args);
    return b.create<ROCDL::mfma_scale_f32_16x16x128_f8f6f4>(loc, accTy, args);
  }
  switch (inputs) {
  case gpu::MfmaInputs::F64:
    as(b.getF64Type());
    return make(ROCDL::mfma_f64_16x16x4f64()); // no 32x32 form
  case gpu::MfmaInputs::BF16:
    if (perLane == 8) {
      as(VectorType::get({8}, b.getBF16Type()));
      return big ? make(ROCDL::mfma_f32_32x32x16_bf16())
                 : make(ROCDL::mfma_f32_16x16x32_bf16());
    }
    return big ? make(ROCDL::mfma_f32_32x32x8bf16_1k())
               : make(ROCDL::mfma_f32_16x16x16bf16_1k());
  case gpu::MfmaInputs::F16:
    if (perLane == 8) {
      as(VectorType::get({8}, b.getF16Type()));
      return big ? make(ROCDL::mfma_f32_32x32x16_f16())
                 : make(ROCDL::mfma_f32_16x16x32_f16());
    }
    as(VectorType::get({4}, b.getF16Type()));
    return big ? make(ROCDL::mfma_f32_32x32x8f16())
               : make(ROCDL::mfma_f32_16x16x16f16());
  case gpu::MfmaInputs::F32:
    as(b.getF32Type());
    return big ? make(ROCDL::mfma_f32_32x32x2f32())
               : make(ROCDL::mfma_f32_16x16x4f32());
  case gpu::MfmaInputs::I8:
    if (perLane == 16) {
      as(VectorType::get({4}, b.getI32Type()));
      return big ? make(ROCDL::mfma_i32_32x32x32_i8())
                 : make(ROCDL::mfma_i32_16x16x64_i8());
    }
    if (chip == "gfx90a") {
      as(b.getI32Type());
      return big ? make(ROCDL::mfma_i32_32x32x8i8())
                 : make(ROCDL::mfma_i32_16x16x16i8());
    }
    as(b.getI64Type());
    return big ? make(ROCDL::mfma_i32_32x32x16_i8())
               : make(ROCDL::mfma_i32_16x16x32_i8());
  case gpu::MfmaInputs::FP8_FP8:
    as(b.getI64Type());
    return big ? make(ROCDL::mfma_f32_32x32x16_fp8_fp8())
               : make(ROCDL::mfma_f32_16x16x32_fp8_fp8());
  case gpu::MfmaInputs::FP8_BF8:
    as(b.getI64Type());
    return big ? make(ROCDL::mfma_f32_32x32x16_fp8_bf8())
               : make(ROCDL::mfma_f32_16x16x32_fp8_bf8());
  case gpu::MfmaInputs::BF8_FP8:
    as(b.getI64Type());
    return big ? make(ROCDL::mfma_f32_32x32x16_bf8_fp8())
               : make(ROCDL::mfma_f32_16x16x32_bf8_fp8());
  case gpu::MfmaInputs::BF8_BF8:
    as(b.getI64Type());
    return big ? make(ROCDL::mfma_f32_32x32x16_bf8_bf8())
               : make(ROCDL::mfma_f32_16x16x32_bf8_bf8());
  }
  return {};
}

void AMDTargetInfo::markKernel(Operation *func, int numThreads) const {
  Builder b(func->getContext());
  func->setAttr(ROCDL::ROCDLDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func->setAttr(ROCDL::ROCDLDialect::getFlatWorkGroupSizeAttrName(),
                b.getStringAttr(std::to_string(numThreads) + "," +
                                std::to_string(numThreads)));
  func->setAttr(ROCDL::ROCDLDialect::getReqdWorkGroupSizeAttrName(),
                b.getDenseI32ArrayAttr({numThreads, 1, 1}));
}

/// HIP's printf: OCKL's hostcall buffer, the format string first, then the
/// arguments, seven at a time, each as 64 bits (integers widened, doubles
/// and pointers as their bits).
void AMDTargetInfo::printf(OpBuilder &b, Location loc, StringRef format,
                           ValueRange args) const {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto begin = externFunction(b, loc, "__ockl_printf_begin",
                              LLVM::LLVMFunctionType::get(i64, {i64}));
  auto appendString = externFunction(
      b, loc, "__ockl_printf_append_string_n",
      LLVM::LLVMFunctionType::get(i64, {i64, ptr, i64, i32}));
  SmallVector<Type> argTypes{i64, i32};
  argTypes.append(7, i64);
  argTypes.push_back(i32);
  auto appendArgs = externFunction(b, loc, "__ockl_printf_append_args",
                                   LLVM::LLVMFunctionType::get(i64, argTypes));
  Value message =
      b.create<LLVM::CallOp>(loc, begin, ValueRange{i64Const(b, loc, 0)})
          .getResult();
  message = b.create<LLVM::CallOp>(
                 loc, appendString,
                 ValueRange{message, globalString(b, loc, format),
                            i64Const(b, loc, int64_t(format.size()) + 1),
                            i32Const(b, loc, args.empty() ? 1 : 0)})
                .getResult();
  for (size_t first = 0; first < args.size(); first += 7) {
    size_t n = std::min<size_t>(7, args.size() - first);
    SmallVector<Value> operands{message, i32Const(b, loc, int64_t(n))};
    for (size_t i = 0; i < 7; ++i) {
      if (i >= n) {
        operands.push_back(i64Const(b, loc, 0));
        continue;
      }
      Value v = args[first + i];
      Type t = v.getType();
      if (isa<LLVM::LLVMPointerType>(t))
        v = b.create<LLVM::PtrToIntOp>(loc, i64, v);
      else if (t.isF64())
        v = b.create<LLVM::BitcastOp>(loc, i64, v);
      else if (t.getIntOrFloatBitWidth() < 64)
        v = b.create<LLVM::SExtOp>(loc, i64, v);
      operands.push_back(v);
    }
    operands.push_back(
        i32Const(b, loc, first + n == args.size() ? 1 : 0));
    message = b.create<LLVM::CallOp>(loc, appendArgs, operands).getResult();
  }
}

/// HIP's __assert_fail: the message printed, then the wave traps (the
/// launch fails).
void AMDTargetInfo::assertFail(OpBuilder &b, Location loc, StringRef message,
                               StringRef file, int line,
                               StringRef function) const {
  std::string text = file.str() + ":" + std::to_string(line) + ": " +
                     function.str() + ": Device-side assertion `" +
                     message.str() + "' failed.\n";
  std::string escaped;
  for (char c : text) {
    escaped.push_back(c);
    if (c == '%')
      escaped.push_back('%');
  }
  printf(b, loc, escaped, {});
  b.create<LLVM::Trap>(loc);
}

void AMDTargetInfo::populateMathPatterns(LLVMTypeConverter &converter,
                                         RewritePatternSet &patterns) const {
  FailureOr<amdgpu::Chipset> chipset = amdgpu::Chipset::parse(chip);
  populateMathToROCDLConversionPatterns(
      converter, patterns,
      succeeded(chipset) ? std::optional<amdgpu::Chipset>(*chipset)
                         : std::nullopt);
  patterns.add<Exp2Exp>(converter, /*benefit=*/20);
  patterns.add<OcmlCall<math::SinOp>>(converter, "__ocml_sin_f32", "__ocml_sin_f64");
  patterns.add<OcmlCall<math::CosOp>>(converter, "__ocml_cos_f32", "__ocml_cos_f64");
  patterns.add<OcmlCall<math::TanOp>>(converter, "__ocml_tan_f32", "__ocml_tan_f64");
  patterns.add<OcmlCall<math::ExpOp>>(converter, nullptr, "__ocml_exp_f64");
  patterns.add<OcmlCall<math::Exp2Op>>(converter, nullptr, "__ocml_exp2_f64");
  patterns.add<OcmlCall<math::LogOp>>(converter, nullptr, "__ocml_log_f64");
  patterns.add<OcmlCall<math::Log2Op>>(converter, nullptr, "__ocml_log2_f64");
}

void AMDTargetInfo::addLegalDialects(ConversionTarget &target) const {
  target.addLegalDialect<ROCDL::ROCDLDialect>();
}
