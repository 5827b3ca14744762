//===- TileGPUToLLVM.cpp - Per-thread code from layouts ------------------===//
//
// One thread's view of a kernel whose tensors carry tilegpu layouts: a
// tensor becomes the values of the thread's registers (a 1:N type
// conversion), element-wise ops repeat per register, and the element a
// register holds is computed from the layout (make_range, addresses).
// Ops that move values between threads go through warp shuffles (reductions
// within a warp) or the program's shared memory (reductions across warps,
// layout conversions), between barriers. The patterns live in one file per
// kind of op (PatternTileGPUToLLVM.h); this file drives them.
//
// Then scf, arith, math (vendor math library calls where the target has
// them) and func lower to the LLVM dialect with MLIR's own patterns.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "tessel/Conversion/TileGPUToLLVM/AmdTargetHooks.h"
#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

using namespace mlir;
using namespace tessel;

gpu::GPUTargetInfo::~GPUTargetInfo() = default;
gpu::NvidiaTargetHooks::~NvidiaTargetHooks() = default;
gpu::AmdTargetHooks::~AmdTargetHooks() = default;

/// Float to an 8- or 16-bit integer goes through int64 and wraps, as
/// Triton's semantics (and the CPU backend) have it; PTX's cvt to a narrow
/// integer would saturate instead.
static void widenNarrowFloatToInt(ModuleOp module) {
  SmallVector<Operation *> casts;
  module.walk([&](Operation *op) {
    if (isa<arith::FPToSIOp, arith::FPToUIOp>(op) &&
        getElementTypeOrSelf(op->getResult(0).getType()).getIntOrFloatBitWidth() < 32)
      casts.push_back(op);
  });
  for (Operation *op : casts) {
    OpBuilder b(op);
    Type result = op->getResult(0).getType();
    Type wide = tile::getTypeWithShapeOf(b.getI64Type(), result);
    Value x = op->getOperand(0);
    Value w = isa<arith::FPToSIOp>(op)
                  ? b.create<arith::FPToSIOp>(op->getLoc(), wide, x).getResult()
                  : b.create<arith::FPToUIOp>(op->getLoc(), wide, x).getResult();
    op->getResult(0).replaceAllUsesWith(
        b.create<arith::TruncIOp>(op->getLoc(), result, w));
    op->erase();
  }
}

LogicalResult gpu::lowerTileGPUToLLVM(ModuleOp module,
                                      const GPUTargetInfo &target) {
  MLIRContext *ctx = module.getContext();
  widenNarrowFloatToInt(module);
  gpu::lowering::allocateSharedMemory(module, target);

  // Phase 1: tensors become per-thread registers.
  TypeConverter tc;
  tc.addConversion([](Type t) { return t; });
  tc.addConversion([ctx](tile::PointerType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, 1);
  });
  // 8-bit floats (LLVM has no such types; tile-expand-fp8 left only moves
  // and dots of them) are their bits.
  tc.addConversion([ctx](FloatType t) -> std::optional<Type> {
    if (tile::isFP8Type(t))
      return IntegerType::get(ctx, 8);
    return std::nullopt;
  });
  tc.addConversion([ctx, &target](tilegpu::SharedBufferType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, target.sharedAddressSpace());
  });
  tc.addConversion([ctx, &target](tilegpu::MBarriersType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, target.sharedAddressSpace());
  });
  tc.addConversion([ctx](RankedTensorType t, SmallVectorImpl<Type> &out)
                       -> std::optional<LogicalResult> {
    auto layout = tilegpu::getLayout(t);
    if (!layout)
      return std::nullopt;
    Type elt = t.getElementType();
    if (isa<tile::PointerType>(elt))
      elt = LLVM::LLVMPointerType::get(ctx, 1);
    else if (tile::isFP8Type(elt))
      elt = IntegerType::get(ctx, 8);
    out.append(layout->inSize(gpu::kRegister), elt);
    return success();
  });
  auto cast = [](OpBuilder &b, TypeRange types, ValueRange inputs,
                 Location loc) -> SmallVector<Value> {
    return SmallVector<Value>(
        b.create<UnrealizedConversionCastOp>(loc, types, inputs).getResults());
  };
  tc.addSourceMaterialization([cast](OpBuilder &b, Type t, ValueRange inputs,
                                     Location loc) -> Value {
    return cast(b, t, inputs, loc)[0];
  });
  tc.addTargetMaterialization(
      [cast](OpBuilder &b, TypeRange types, ValueRange inputs, Location loc) {
        return cast(b, types, inputs, loc);
      });

  ConversionTarget convTarget(*ctx);
  convTarget.addIllegalDialect<tile::TileDialect, tilegpu::TileGPUDialect>();
  convTarget.markUnknownOpDynamicallyLegal(
      [&](Operation *op) { return tc.isLegal(op); });
  convTarget.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
    return tc.isSignatureLegal(f.getFunctionType());
  });
  convTarget.addLegalOp<ModuleOp, LLVM::GlobalOp>();
  RewritePatternSet patterns(ctx);
  gpu::lowering::populateProgramOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateViewOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateElementwiseOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateLoadStoreOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateAtomicOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateDotOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateBufferOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateBufferAccessOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateConvertLayoutOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateReduceOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateScanOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateGatherOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateMapElementwiseOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateTmaOpsToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateDebugOpToLLVMPatterns(tc, patterns, target);
  gpu::lowering::populateExternOpToLLVMPatterns(tc, patterns, target);
  scf::populateSCFStructuralTypeConversionsAndLegality(tc, patterns,
                                                       convTarget);
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, tc);
  // Calls of @jit(noinline=True) functions pass each tensor as its
  // registers.
  populateCallOpTypeConversionPattern(patterns, tc);
  populateReturnOpTypeConversionPattern(patterns, tc);
  if (failed(applyPartialConversion(module, convTarget, std::move(patterns))))
    return failure();

  // Phase 2: scalars, scf and func to the LLVM dialect.
  {
    RewritePatternSet scfPatterns(ctx);
    populateSCFToControlFlowConversionPatterns(scfPatterns);
    ConversionTarget t(*ctx);
    t.addIllegalDialect<scf::SCFDialect>();
    t.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, t, std::move(scfPatterns))))
      return failure();
  }
  SmallVector<StringAttr> called;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto warps = func->getAttrOfType<IntegerAttr>("tilegpu.num_warps");
    bool kernel = func->hasAttr("tile.kernel");
    // The tile-level attributes have served; LLVM gets the target's (and
    // keeps its own: tensor maps are passed by value).
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      SmallVector<NamedAttribute> kept;
      if (DictionaryAttr attrs = func.getArgAttrDict(i))
        for (NamedAttribute attr : attrs)
          if (attr.getName().strref().starts_with("llvm."))
            kept.push_back(attr);
      func.setArgAttrs(i, DictionaryAttr::get(ctx, kept));
    }
    for (NamedAttribute attr : llvm::to_vector(func->getDiscardableAttrs()))
      func->removeAttr(attr.getName());
    if (kernel)
      target.markKernel(func, tilegpu::threadsPerWarp(func) *
                                  (warps ? warps.getInt() : 4));
    else if (!func.isExternal())
      called.push_back(func.getSymNameAttr());
  }
  LowerToLLVMOptions options(ctx);
  LLVMTypeConverter llvmTc(ctx, options);
  llvmTc.addConversion([ctx](tile::PointerType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, 1);
  });
  RewritePatternSet llvmPatterns(ctx);
  arith::populateArithToLLVMConversionPatterns(llvmTc, llvmPatterns);
  target.populateMathPatterns(llvmTc, llvmPatterns);
  populateMathToLLVMConversionPatterns(llvmTc, llvmPatterns);
  cf::populateControlFlowToLLVMConversionPatterns(llvmTc, llvmPatterns);
  populateFuncToLLVMConversionPatterns(llvmTc, llvmPatterns);
  LLVMConversionTarget llvmTarget(*ctx);
  llvmTarget.addLegalOp<ModuleOp>();
  target.addLegalDialects(llvmTarget);
  if (failed(applyFullConversion(module, llvmTarget, std::move(llvmPatterns))))
    return failure();
  // The noinline functions stay functions of their own, called. Every
  // thread of the program runs each call (their shuffles and barriers need
  // them all): convergent, so that LLVM never moves a call under a branch
  // some threads skip.
  for (StringAttr name : called)
    if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name)) {
      fn.setLinkage(LLVM::Linkage::Internal);
      fn.setNoInline(true);
      fn.setConvergent(true);
    }
  module.walk([&](LLVM::CallOp call) {
    if (auto callee = call.getCallee();
        callee && llvm::is_contained(called, StringAttr::get(ctx, *callee)))
      call.setConvergent(true);
  });
  return success();
}
