//===- tessel-opt.cpp - Runs Tessel's and MLIR's passes on .mlir files ----===//
#include "TestPasses.h"
#include "tessel/AMD/Passes.h"
#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"
#include "tessel/NVIDIA/Passes.h"
#include "tessel/Dialect/Tile/Transforms/Passes.h"
#include "tessel/Target/CPU/CPUCompiler.h"
#include "tessel/Target/CPU/Passes.h"
#include "tessel/Target/TilePipeline.h"

#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  tessel::registerTesselConversionPasses();
  tessel::tile::registerTesselTilePasses();
  tessel::cpu::registerTesselCPUPasses();
  tessel::nvidia::registerTesselNVIDIAPasses();
  tessel::amd::registerTesselAMDPasses();
  tessel::tilegpu::registerTesselTileGPUPasses();
  tessel::test::registerTestPasses();
  mlir::PassPipelineRegistration<>(
      "tessel-cpu-pipeline",
      "The CPU backend from tile IR to the LLVM dialect",
      [](mlir::OpPassManager &pm) {
        tessel::target::buildTilePipeline(pm);
        tessel::cpu::buildTileToLoopsPipeline(pm);
        tessel::cpu::buildLoopsToLLVMPipeline(pm);
      });

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::func::registerInlinerExtension(registry);
  tessel::cpu::registerCPUCompilerDialects(registry);
  registry.insert<tessel::tilegpu::TileGPUDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tessel optimizer driver\n", registry));
}
