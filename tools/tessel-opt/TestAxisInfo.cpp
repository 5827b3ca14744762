//===- TestAxisInfo.cpp - Reports AxisInfo as remarks for lit tests -------===//
#include "TestPasses.h"

#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessel::test {
#define GEN_PASS_DEF_TESTAXISINFO
#include "TestPasses.h.inc"
} // namespace tessel::test

using namespace mlir;

namespace {

bool isReported(Type type) {
  Type elt = getElementTypeOrSelf(type);
  return elt.isIntOrIndex() || isa<tessel::tile::PointerType>(elt);
}

struct TestAxisInfo
    : public tessel::test::impl::TestAxisInfoBase<TestAxisInfo> {
  void runOnOperation() override {
    tessel::AxisInfoResult result(getOperation());
    getOperation()->walk([&](Operation *op) {
      auto report = [&](Value v, StringRef what) {
        if (!isReported(v.getType()))
          return;
        InFlightDiagnostic remark = op->emitRemark();
        remark << what << ": ";
        if (const tessel::AxisInfo *info = result.lookup(v)) {
          std::string text;
          llvm::raw_string_ostream os(text);
          info->print(os);
          remark << text;
        } else {
          remark << "unknown";
        }
      };
      if (auto forOp = dyn_cast<scf::ForOp>(op))
        report(forOp.getInductionVar(), "induction variable");
      if (op->getNumResults() == 1)
        report(op->getResult(0), "result");
    });
  }
};

} // namespace

void tessel::test::registerTestPasses() { registerTestAxisInfo(); }
