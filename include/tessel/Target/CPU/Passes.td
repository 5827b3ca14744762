#ifndef TESSEL_TARGET_CPU_PASSES
#define TESSEL_TARGET_CPU_PASSES

include "mlir/Pass/PassBase.td"

def ApproximateMath : Pass<"tessel-cpu-approximate-math"> {
  let summary = "Replace transcendental math ops by polynomial approximations";
  let description = [{
    exp, log, tanh, erf and friends on f32 (and f16/bf16 through f32) become
    arithmetic that vectorizes, instead of libm calls. sin and cos stay libm
    calls (the polynomials lose accuracy as the argument grows). erf on f64,
    which neither this nor LLVM's intrinsics cover, becomes a call to libm.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

#endif // TESSEL_TARGET_CPU_PASSES
