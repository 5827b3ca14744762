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

    With `scalef` (CPUs with AVX-512, whose vscalefps LLVM makes of
    `llvm.ldexp`), exp's 2^n is one ldexp instead of two multiplies by
    powers of two built from the bits; elsewhere ldexp would be a call to
    libm per element.
  }];
  let options = [
    Option<"scalef", "scalef", "bool", "false",
           "Scale by 2^n with llvm.ldexp (AVX-512's vscalefps)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
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

def DotMicroKernels : Pass<"tessel-cpu-dot-micro-kernels"> {
  let summary = "Lower the CPU's linalg.matmul to register-blocked vector loops";
  let description = [{
    The CPU lowering of `tile.dot` is a `linalg.matmul` on stack buffers of
    the accumulator's type (C += A B, row-major, static shapes). This pass is
    where dots meet the CPU's registers: each matmul becomes loops over
    MR x (NV * VL) blocks of C, held in NV vectors of VL lanes for each of MR
    rows while k runs. Each k step loads NV vectors of a row of B, broadcasts
    MR elements of a column of A and multiplies and adds (fused for floats).
    VL is the widest vector (512, 256 or 128 bits) whose lanes divide N, NV
    is 2 where two vectors divide it, MR is 8, 4, 2 or 1. A block no vector
    divides becomes i-k-j loops, the innermost along rows of B and C.

    Operands narrower than C are widened to C's type first (into stack
    buffers), except where the CPU multiplies them as they are, 16 lanes of
    C at a time:
    - `bf16-dot-product` (AVX512-BF16): bf16 x bf16 into fp32 on vdpbf16ps,
      a pair of K a step. B is packed with pairs of K side by side, a pair of
      a row of A is broadcast. The instruction flushes subnormal inputs and
      results to zero, as oneDNN's bf16 matmuls on this hardware do.
    - `int8-dot-product` (AVX512-VNNI): int8 x int8 into int32 on vpdpbusd
      (unsigned x signed bytes), four K a step. B is packed in groups of four
      K with its sign bit flipped (B + 128, unsigned); a group of a row of A
      is broadcast, and 128 times the row's sum comes off C at the end.
      Exact, wrapping as int32 arithmetic does.
  }];
  let options = [
    Option<"bf16DotProduct", "bf16-dot-product", "bool", /*default=*/"false",
           "bf16 dots on AVX512-BF16's vdpbf16ps">,
    Option<"int8DotProduct", "int8-dot-product", "bool", /*default=*/"false",
           "int8 dots on AVX512-VNNI's vpdpbusd">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::math::MathDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def ProgramExit : Pass<"tessel-cpu-program-exit"> {
  let summary = "Return from the program where the CPU lowering says so";
  let description = [{
    The CPU lowering of a failed `tile.assert` reports the failure and then
    calls `tessel.exit_program` (a private function without a body): the
    program must stop there, but structured control flow cannot return from
    inside a loop. Once scf has become a CFG, this pass ends the block at each
    such call with a return from its function (kernel functions return
    nothing) and drops the declaration; what followed the call is left
    unreachable.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // TESSEL_TARGET_CPU_PASSES
