//===- TilePipeline.h - What every target runs first ------------*- C++ -*-===//
#ifndef TESSEL_TARGET_TILEPIPELINE_H
#define TESSEL_TARGET_TILEPIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace tessel::target {

/// What a target keeps for its own lowering.
struct TilePipelineOptions {
  /// Dots and fp32/fp16 conversions of 8-bit floats (NVIDIA sm_89+).
  bool nativeFP8 = false;
  /// The 8-bit floats an AMD chip's dots multiply (tile-expand-fp8's `mfma`:
  /// "fnuz", "ocp" or none).
  std::string mfmaFP8;
  /// Integers to bf16 in one rounding (NVIDIA sm_90+).
  bool nativeIntToBF16 = false;
  /// Loads of host-made tensor descriptors, for a tensor copy engine
  /// (NVIDIA sm_90+), except dot operands in loops when `numStages` > 1;
  /// those too where `pipelinedTensorMaps` (NVIDIA sm_90a's warpgroup MMA,
  /// whose pipeline slots the copy engine fills) and they are K-major.
  bool tensorMaps = false;
  bool pipelinedTensorMaps = false;
  int numStages = 1;
  /// The CTAs that run one program (NVIDIA sm_90+ thread block clusters):
  /// above 1, tile-split-program gives each a part of the blocks.
  int numCtas = 1;
  /// Loop-carried pointer blocks advanced by a constant become offsets too
  /// (tile-carried-pointers-to-offsets' `constant-steps`; the CPU).
  bool constantPointerSteps = false;
};

/// The target-independent tile-level passes every target runs before its own
/// lowering: calls inlined (for clusters only), tensor descriptor accesses made pointer accesses, 8-bit floats
/// expanded, canonicalization, CSE, loop-invariant code motion and
/// loop-carried pointers turned into offsets.
void buildTilePipeline(mlir::OpPassManager &pm,
                       const TilePipelineOptions &options = {});

} // namespace tessel::target

#endif // TESSEL_TARGET_TILEPIPELINE_H
