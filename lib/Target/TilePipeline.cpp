//===- TilePipeline.cpp - What every target runs first --------------------===//
#include "tessel/Target/TilePipeline.h"

#include "tessel/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tessel::target::buildTilePipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLoopInvariantCodeMotionPass());
  pm.addNestedPass<func::FuncOp>(tile::createTileCarriedPointersToOffsets());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}
