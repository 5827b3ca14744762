//===- ProgramOpToLLVM.cpp - Program ids, barriers, assumptions ---------------===//
//
// program_id and num_programs from the target's block indices, a CTA's rank
// in its program, barriers and assumptions.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "Utility.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

struct ProgramIdLowering : TileGPUPattern<tile::GetProgramIdOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::GetProgramIdOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, target.programId(rw, op.getLoc(), op.getAxis()));
    return success();
  }
};

struct NumProgramsLowering : TileGPUPattern<tile::GetNumProgramsOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::GetNumProgramsOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, target.numPrograms(rw, op.getLoc(), op.getAxis()));
    return success();
  }
};

struct CtaRankLowering : TileGPUPattern<tile::GetCtaRankOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::GetCtaRankOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, target.ctaRank(rw, op.getLoc()));
    return success();
  }
};

/// The analysis' barriers (tilegpu.barrier) and the kernel author's
/// (tile.debug_barrier).
template <class BarrierOp>
struct BarrierLowering : TileGPUPattern<BarrierOp> {
  using TileGPUPattern<BarrierOp>::TileGPUPattern;
  LogicalResult
  matchAndRewrite(BarrierOp op, typename BarrierOp::template GenericAdaptor<
                                    ArrayRef<ValueRange>>,
                  ConversionPatternRewriter &rw) const override {
    this->target.barrier(rw, op.getLoc());
    rw.eraseOp(op);
    return success();
  }
};

struct AssumeLowering : TileGPUPattern<tile::AssumeOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::AssumeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    // What the kernel author promises, for LLVM's optimizations.
    rw.create<LLVM::AssumeOp>(op.getLoc(), adaptor.getCond()[0]);
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

void gpu::lowering::populateProgramOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<ProgramIdLowering, NumProgramsLowering, CtaRankLowering,
               BarrierLowering<tilegpu::BarrierOp>,
               BarrierLowering<tile::DebugBarrierOp>, AssumeLowering>(
      tc, patterns.getContext(), target);
}
