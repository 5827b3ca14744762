//===- TilePipeline.h - What every target runs first ------------*- C++ -*-===//
#ifndef TESSEL_TARGET_TILEPIPELINE_H
#define TESSEL_TARGET_TILEPIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace tessel::target {

/// The target-independent tile-level passes every target runs before its own
/// lowering: 8-bit floats expanded (their dots and fp32/fp16 conversions kept
/// where `nativeFP8`),
/// canonicalization, CSE, loop-invariant code motion and loop-carried
/// pointers turned into offsets.
void buildTilePipeline(mlir::OpPassManager &pm, bool nativeFP8 = false);

} // namespace tessel::target

#endif // TESSEL_TARGET_TILEPIPELINE_H
