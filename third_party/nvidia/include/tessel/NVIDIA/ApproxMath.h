//===- ApproxMath.h - Triton's fast fp32 math on NVIDIA GPUs ----*- C++ -*-===//
//
// `tl.exp` on fp32 is exp2(x * log2(e)) on the SFU (`ex2.approx.f32`), as
// Triton computes it on NVIDIA GPUs: two instructions instead of libdevice's
// dozen, with a relative error of a few ulp that grows with |x|
// (`tl.math.exp` needs no more in softmax and attention). fp64 and the other
// functions keep libdevice.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NVIDIA_APPROXMATH_H
#define TESSEL_NVIDIA_APPROXMATH_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
class LLVMTypeConverter;
} // namespace mlir

namespace tessel::nvidia {

/// Patterns lowering fp32 math.exp to ex2.approx; `benefit` must beat the
/// libdevice patterns'.
void populateApproxMathPatterns(mlir::LLVMTypeConverter &converter,
                                mlir::RewritePatternSet &patterns,
                                mlir::PatternBenefit benefit);

} // namespace tessel::nvidia

#endif // TESSEL_NVIDIA_APPROXMATH_H
