//===- TilePipeline.h - What every target runs first ------------*- C++ -*-===//
#ifndef TESSEL_TARGET_TILEPIPELINE_H
#define TESSEL_TARGET_TILEPIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace tessel::target {

/// The target-independent tile-level passes every target runs before its own
/// lowering: 8-bit floats expanded (their dots kept where `nativeFP8Dots`),
/// canonicalization, CSE, loop-invariant code motion and loop-carried
/// pointers turned into offsets.
void buildTilePipeline(mlir::OpPassManager &pm, bool nativeFP8Dots = false);

} // namespace tessel::target

#endif // TESSEL_TARGET_TILEPIPELINE_H
