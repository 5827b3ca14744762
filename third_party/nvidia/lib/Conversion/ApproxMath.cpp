//===- ApproxMath.cpp - Triton's fast fp32 math on NVIDIA GPUs -----------===//
#include "tessel/NVIDIA/ApproxMath.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace {

/// exp(x) = 2^(x * log2(e)): one multiply and ex2.approx.f32.
struct ApproxExp : ConvertOpToLLVMPattern<math::ExpOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(math::ExpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Type f32 = rw.getF32Type();
    if (adaptor.getOperand().getType() != f32)
      return failure();
    Location loc = op.getLoc();
    Value log2e = LLVM::ConstantOp::create(rw, loc, f32,
                                           rw.getF32FloatAttr(1.4426950408889634f));
    Value scaled = LLVM::FMulOp::create(rw, loc, adaptor.getOperand(), log2e);
    auto ex2 = LLVM::CallIntrinsicOp::create(
        rw, loc, f32, rw.getStringAttr("llvm.nvvm.ex2.approx.f32"),
        ValueRange{scaled});
    rw.replaceOp(op, ex2.getResults());
    return success();
  }
};

} // namespace

void tessel::nvidia::populateApproxMathPatterns(LLVMTypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                PatternBenefit benefit) {
  patterns.add<ApproxExp>(converter, benefit);
}
