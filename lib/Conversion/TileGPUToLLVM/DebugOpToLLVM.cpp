//===- DebugOpToLLVM.cpp - tile.print and tile.assert per thread ----------===//
//
// Each thread prints the elements it owns: the first copy of an element
// replicated across registers, lanes or warps prints, the others do not; a
// scalar prints from thread 0 (of the cluster's first CTA, which holds whole
// blocks: tile-split-program cuts no block a print reads). Lines use the
// target's printf with the format every target prints (tile::printFormat).
// An assertion checks the thread's elements and calls the target's
// assertion failure where one is false; a barrier after a block's assertion
// keeps other threads from running ahead of it (into the access it guards).
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

Value i1Const(OpBuilder &b, Location loc, bool v) {
  return b.create<arith::ConstantIntOp>(loc, b.getI1Type(), v);
}

struct PrintLowering : TileGPUPattern<tile::PrintOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::PrintOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    SmallVector<Value> pids;
    for (unsigned axis = 0; axis < 3; ++axis)
      pids.push_back(target.programId(rw, loc, axis));
    Value firstCta = rw.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, target.ctaRank(rw, loc),
        i32Const(rw, loc, 0));
    Value threadZero = rw.create<arith::AndIOp>(
        loc, firstCta,
        rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                 target.threadId(rw, loc),
                                 i32Const(rw, loc, 0)));
    auto value = [&](OpBuilder &b, Value v, bool isSigned) {
      if (isa<LLVM::LLVMPointerType>(v.getType()))
        v = b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), v);
      return tile::printfArgument(b, loc, v, isSigned, op.getHex());
    };
    if (op.getArgs().empty()) {
      std::string format = tile::printFormat(op, 0);
      ifThen(rw, loc, threadZero,
             [&](OpBuilder &b) { target.printf(b, loc, format, pids); });
      rw.eraseOp(op);
      return success();
    }
    ThreadIds ids = threadIds(rw, loc, target);
    for (auto [i, arg] : llvm::enumerate(op.getArgs())) {
      std::string format = tile::printFormat(op, i);
      bool isSigned = op.getIsSigned()[i] != 0;
      ValueRange regs = adaptor.getArgs()[i];
      if (!hasLayout(arg.getType())) {
        ifThen(rw, loc, threadZero, [&](OpBuilder &b) {
          SmallVector<Value> args(pids);
          args.push_back(value(b, regs[0], isSigned));
          target.printf(b, loc, format, args);
        });
        continue;
      }
      LinearLayout layout = layoutOf(arg.getType());
      SmallVector<SmallVector<Value>> coords =
          elementCoords(rw, loc, layout, ids);
      Value owner = rw.create<arith::AndIOp>(
          loc, firstCta, isOwner(rw, loc, layout, ids));
      ifThen(rw, loc, owner, [&](OpBuilder &b) {
        for (int r = 0; r < layout.inSize(gpu::kRegister); ++r) {
          if (isCopyRegister(layout, r))
            continue;
          SmallVector<Value> args(pids);
          args.append(coords[r].begin(), coords[r].end());
          args.push_back(value(b, regs[r], isSigned));
          target.printf(b, loc, format, args);
        }
      });
    }
    rw.eraseOp(op);
    return success();
  }
};

struct AssertLowering : TileGPUPattern<tile::AssertOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::AssertOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value failed = i1Const(rw, loc, false);
    for (Value ok : adaptor.getCondition())
      failed = rw.create<arith::OrIOp>(
          loc, failed,
          rw.create<arith::XOrIOp>(loc, ok, i1Const(rw, loc, true)));
    ifThen(rw, loc, failed, [&](OpBuilder &b) {
      target.assertFail(b, loc, op.getMessage(), op.getFile(), op.getLine(),
                        op.getFunction());
    });
    if (hasLayout(op.getCondition().getType()))
      target.barrier(rw, loc);
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

void gpu::lowering::populateDebugOpToLLVMPatterns(TypeConverter &tc,
                                                  RewritePatternSet &patterns,
                                                  const GPUTargetInfo &target) {
  patterns.add<PrintLowering, AssertLowering>(tc, patterns.getContext(),
                                              target);
}
