//===- TensorMaps.cpp - Descriptor loads through tensor maps --------------===//
//
// See the pass description in include/tessel/Dialect/TileGPU/Transforms/
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tessel::tilegpu {
#define GEN_PASS_DEF_TILEGPUTENSORMAPS
#include "tessel/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tessel::tilegpu

using namespace mlir;
using namespace tessel;
using namespace tessel::tilegpu;

namespace {

struct TileGPUTensorMaps
    : public tilegpu::impl::TileGPUTensorMapsBase<TileGPUTensorMaps> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    Builder b(ctx);
    SmallVector<Attribute> maps;
    for (auto func : module.getOps<func::FuncOp>()) {
      SmallVector<Operation *> accesses;
      // A descriptor's fill, from its loads (its stores need none).
      llvm::DenseMap<int32_t, bool> nan;
      func.walk([&](Operation *op) {
        if (auto load = dyn_cast<tile::DescriptorLoadOp>(op)) {
          if (!load.getTensorMap())
            return;
          nan[int32_t(*load.getTensorMap())] |= load.getNanPadding();
          accesses.push_back(op);
        } else if (auto store = dyn_cast<tile::DescriptorStoreOp>(op)) {
          if (store.getTensorMap())
            accesses.push_back(op);
        }
      });
      // One map per descriptor argument: its accesses share the block shape.
      llvm::DenseMap<int32_t, BlockArgument> mapArgs;
      for (Operation *op : accesses) {
        auto load = dyn_cast<tile::DescriptorLoadOp>(op);
        auto store = dyn_cast<tile::DescriptorStoreOp>(op);
        int32_t arg = int32_t(load ? *load.getTensorMap() : *store.getTensorMap());
        auto type = cast<RankedTensorType>(load ? load.getType()
                                                : store.getValue().getType());
        BlockArgument &map = mapArgs[arg];
        if (!map) {
          unsigned index = func.getNumArguments();
          auto attrs = b.getDictionaryAttr(
              {b.getNamedAttr(LLVM::LLVMDialect::getByValAttrName(),
                              TypeAttr::get(LLVM::LLVMArrayType::get(
                                  b.getI8Type(), 128))),
               b.getNamedAttr(LLVM::LLVMDialect::getAlignAttrName(),
                              b.getI64IntegerAttr(64))});
          if (failed(func.insertArgument(index, LLVM::LLVMPointerType::get(ctx),
                                         attrs, func.getLoc())))
            return signalPassFailure();
          map = func.getArgument(index);
          maps.push_back(b.getDictionaryAttr(
              {b.getNamedAttr("arg", b.getI32IntegerAttr(arg)),
               b.getNamedAttr("box", b.getDenseI64ArrayAttr(type.getShape())),
               b.getNamedAttr("element", TypeAttr::get(type.getElementType())),
               b.getNamedAttr("nan", b.getBoolAttr(nan.lookup(arg)))}));
        }
        OpBuilder builder(op);
        if (load) {
          auto tma = TmaLoadOp::create(builder, load.getLoc(), type, map,
                                       load.getOffsets());
          load.replaceAllUsesWith(tma.getResult());
        } else {
          TmaStoreOp::create(builder, store.getLoc(), map, store.getOffsets(),
                             store.getValue());
        }
        op->erase();
      }
    }
    if (!maps.empty())
      module->setAttr("tilegpu.tensor_maps", b.getArrayAttr(maps));
  }
};

} // namespace
