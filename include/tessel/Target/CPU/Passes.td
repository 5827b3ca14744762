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

def NarrowFloats : Pass<"tessel-cpu-narrow-floats"> {
  let summary = "bf16 arithmetic in fp32, narrow conversions rounded once";
  let description = [{
    LLVM's x86 code for bf16 arithmetic rounds its fp32 results with
    VCVTNEPS2BF16 where the CPU has AVX512-BF16, which flushes subnormal
    inputs and results to zero, and calls __truncsfbf2 elsewhere, which the
    kernel loader does not have; fp64 to fp16/bf16 calls routines it does not
    have either. After this pass LLVM only moves bf16 values:
    - arith and math ops on bf16 compute on fp32 values (exact for +, -, *,
      /, sqrt: fp32 holds more than twice bf16's precision, so rounding twice
      is rounding once);
    - fma on fp16/bf16, which would round twice, is exact in fp64 (two-sum
      for the sum) and rounded to odd into fp32, then to nearest even;
    - bf16 <-> fp32 conversions are integer arithmetic (subnormals kept,
      NaNs keep their sign), and fp64 to fp16/bf16 goes through fp32 rounded
      to odd.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

#endif // TESSEL_TARGET_CPU_PASSES
