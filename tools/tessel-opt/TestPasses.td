//===- TestPasses.td - Passes that expose analyses to lit tests ------------===//
#ifndef TESSEL_OPT_TEST_PASSES
#define TESSEL_OPT_TEST_PASSES

include "mlir/Pass/PassBase.td"

def TestAxisInfo : Pass<"tessel-test-axis-info", "::mlir::ModuleOp"> {
  let summary = "Reports the axis info of every integer and pointer value (test only)";
  let description = [{
    Runs the AxisInfo analysis over the module and attaches a remark to every
    op with an integer or pointer result (and to every scf.for, for its
    induction variable): divisibility, contiguity and constancy per
    dimension, and the constant value if there is one.
  }];
}

#endif // TESSEL_OPT_TEST_PASSES
