//===- ProgramExit.cpp - Returns where a CPU program stops ----------------===//
//
// See the pass's description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/Passes.h"

#include "tessel/Conversion/TileToLoops/CPURuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessel::cpu {
#define GEN_PASS_DEF_PROGRAMEXIT
#include "tessel/Target/CPU/Passes.h.inc"
} // namespace tessel::cpu

using namespace mlir;

namespace {

struct ProgramExit : public tessel::cpu::impl::ProgramExitBase<ProgramExit> {
  void runOnOperation() override {
    SmallVector<func::CallOp> exits;
    getOperation()->walk([&](func::CallOp call) {
      if (call.getCallee() == tessel::kCPUExitProgram)
        exits.push_back(call);
    });
    for (func::CallOp call : exits) {
      auto fn = call->getParentOfType<func::FuncOp>();
      if (!fn || fn.getNumResults() != 0 ||
          !isa<func::FuncOp>(call->getParentOp())) {
        call.emitError("a program can only return from a function whose "
                       "control flow is a CFG and that returns nothing");
        return signalPassFailure();
      }
      Block *block = call->getBlock();
      // Everything after the call moves to a block nothing branches to.
      block->splitBlock(std::next(call->getIterator()));
      OpBuilder b(call);
      func::ReturnOp::create(b, call.getLoc());
      call.erase();
    }
    getOperation()->walk([](func::FuncOp fn) {
      if (fn.getName() == tessel::kCPUExitProgram && fn.isDeclaration())
        fn.erase();
    });
  }
};

} // namespace
