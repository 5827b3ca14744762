//===- TilePipeline.cpp - What every target runs first --------------------===//
#include "tessel/Target/TilePipeline.h"

#include "tessel/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tessel::target::buildTilePipeline(OpPassManager &pm,
                                       const TilePipelineOptions &options) {
  // @jit(noinline=True) functions stay functions, called, on every target,
  // except where a program's CTAs split every block of the program, its
  // calls' too: there they are inlined first.
  if (options.numCtas > 1)
    pm.addPass(createInlinerPass());
  // First: the rest of the pipeline sees each CTA's part of the blocks.
  if (options.numCtas > 1) {
    tile::TileSplitProgramOptions split;
    split.numCtas = options.numCtas;
    pm.addNestedPass<func::FuncOp>(tile::createTileSplitProgram(split));
  }
  tile::TileLowerDescriptorsOptions descriptors;
  descriptors.tensorMaps = options.tensorMaps;
  descriptors.numStages = options.numStages;
  descriptors.pipelinedTensorMaps = options.pipelinedTensorMaps;
  pm.addNestedPass<func::FuncOp>(tile::createTileLowerDescriptors(descriptors));
  // Before folding: folding must not see 8-bit float casts (APFloat does not
  // saturate).
  tile::TileExpandFP8Options fp8;
  fp8.native = options.nativeFP8;
  fp8.mfma = options.mfmaFP8;
  pm.addNestedPass<func::FuncOp>(tile::createTileExpandFP8(fp8));
  tile::TileExactIntToBF16Options intToBF16;
  intToBF16.native = options.nativeIntToBF16;
  pm.addNestedPass<func::FuncOp>(tile::createTileExactIntToBF16(intToBF16));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLoopInvariantCodeMotionPass());
  tile::TileCarriedPointersToOffsetsOptions offsets;
  offsets.constantSteps = options.constantPointerSteps;
  pm.addNestedPass<func::FuncOp>(
      tile::createTileCarriedPointersToOffsets(offsets));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}
