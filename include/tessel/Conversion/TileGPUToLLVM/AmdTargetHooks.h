//===- AmdTargetHooks.h - AMD's matrix cores for the lowering ---*- C++ -*-===//
//
// What the per-thread lowering asks only of AMD's GPUs: the MFMA
// instructions. GPUTargetInfo::amd() returns these hooks on AMD targets and
// null elsewhere.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_TILEGPUTOLLVM_AMDTARGETHOOKS_H
#define TESSEL_CONVERSION_TILEGPUTOLLVM_AMDTARGETHOOKS_H

#include "mlir/IR/Builders.h"

namespace tessel::gpu {

class AmdTargetHooks {
public:
  virtual ~AmdTargetHooks();
  /// One v_mfma_f32_32x32x8 of the wave: `acc` (vector<16xf32>, this lane's
  /// part of the 32x32 accumulator tile) plus A (32 x 8) times B (8 x 32),
  /// of which `a` and `b` are this lane's four 16-bit elements along K
  /// (vector<4xi16>: fp16, or bf16 with `bf16`). Returns the new `acc`.
  virtual mlir::Value mfma32x32x8(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value a, mlir::Value bv,
                                  mlir::Value acc, bool bf16) const = 0;
};

} // namespace tessel::gpu

#endif // TESSEL_CONVERSION_TILEGPUTOLLVM_AMDTARGETHOOKS_H
