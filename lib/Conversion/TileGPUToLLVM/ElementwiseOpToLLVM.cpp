//===- ElementwiseOpToLLVM.cpp - Element-wise ops and constants ---------------===//
//
// Element-wise ops repeat per register; addptr and pointer casts per
// register; constants splat per register.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"
#include "Utility.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

struct AddPtrLowering : TileGPUPattern<tile::AddPtrOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::AddPtrOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto ptrTy = cast<tile::PointerType>(getElementTypeOrSelf(op.getType()));
    Type elt = memoryType(getTypeConverter()->convertType(ptrTy.getPointeeType()));
    Type llvmPtr = getTypeConverter()->convertType(ptrTy);
    SmallVector<Value> values;
    ValueRange ptrs = adaptor.getPtr(), offs = adaptor.getOffset();
    for (size_t i = 0; i < ptrs.size(); ++i)
      values.push_back(rw.create<LLVM::GEPOp>(loc, llvmPtr, elt, ptrs[i],
                                              ValueRange{offs[i]}));
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

/// Pointer casts, once per register: LLVM's pointers carry no element type.
template <typename Op>
struct PointerCastLowering : TileGPUPattern<Op> {
  using TileGPUPattern<Op>::TileGPUPattern;
  LogicalResult
  matchAndRewrite(Op op, typename TileGPUPattern<Op>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type to = this->getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getType()));
    SmallVector<Value> values;
    for (Value v : adaptor.getSrc()) {
      if constexpr (std::is_same_v<Op, tile::IntToPtrOp>)
        values.push_back(rw.create<LLVM::IntToPtrOp>(loc, to, v));
      else if constexpr (std::is_same_v<Op, tile::PtrToIntOp>)
        values.push_back(rw.create<LLVM::PtrToIntOp>(loc, to, v));
      else
        values.push_back(v);
    }
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

struct ConstantLowering : public OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    auto tensor = dyn_cast<RankedTensorType>(op.getType());
    if (!tensor) {
      // 8-bit floats (the type converter's i8): their bits.
      auto f = dyn_cast<FloatAttr>(op.getValue());
      Type converted = getTypeConverter()->convertType(op.getType());
      if (!f || converted == op.getType())
        return failure();
      rw.replaceOpWithNewOp<arith::ConstantOp>(
          op, rw.getIntegerAttr(converted, f.getValue().bitcastToAPInt()));
      return success();
    }
    auto dense = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!dense)
      return op.emitError("GPU backends take only splat tensor constants");
    TypedAttr splat = cast<TypedAttr>(dense.getSplatValue<Attribute>());
    Type elt = getTypeConverter()->convertType(splat.getType());
    if (auto f = dyn_cast<FloatAttr>(splat); f && elt != splat.getType())
      splat = rw.getIntegerAttr(elt, f.getValue().bitcastToAPInt());
    Value scalar = rw.create<arith::ConstantOp>(op.getLoc(), splat);
    int n = layoutOf(tensor).inSize(gpu::kRegister);
    rw.replaceOpWithMultiple(op, {SmallVector<Value>(n, scalar)});
    return success();
  }
};

/// Element-wise arith and math ops on tensors: the op once per register.
struct ElementwiseLowering : public ConversionPattern {
  ElementwiseLowering(const TypeConverter &tc, MLIRContext *ctx,
                      const gpu::GPUTargetInfo &target)
      : ConversionPattern(tc, MatchAnyOpTypeTag(), 1, ctx), target(target) {}
  const gpu::GPUTargetInfo &target;

  /// Ops on OCP 8-bit floats where the target converts them (tile-expand-fp8
  /// left fp32 to them and them to fp16; folding may have merged those with
  /// neighbours: fp16 -> fp32 -> fp8, int -> fp32 -> fp8): operands widened to
  /// fp16 and fp32, results rounded from fp32, two registers at a time (a
  /// scalar's once).
  LogicalResult convertFP8(Operation *op, ArrayRef<ValueRange> operands,
                           ConversionPatternRewriter &rw) const {
    Type result = getElementTypeOrSelf(op->getResult(0).getType());
    bool anyInput = llvm::any_of(op->getOperandTypes(), tile::isOCPFP8Type);
    if ((!tile::isOCPFP8Type(result) && !anyInput) ||
        isa<arith::BitcastOp, arith::SelectOp>(op))
      return failure();
    Location loc = op->getLoc();
    Type f16 = rw.getF16Type(), f32 = rw.getF32Type();
    // Pairs of registers through the target's two-at-a-time conversions.
    auto pairwise = [&](ArrayRef<Value> x, auto convert) {
      SmallVector<Value> out;
      int n = x.size();
      for (int i = 0; i < n; i += 2) {
        auto [y0, y1] = convert(x[i], x[std::min(i + 1, n - 1)]);
        out.push_back(y0);
        if (i + 1 < n)
          out.push_back(y1);
      }
      return out;
    };
    auto extend = [&](ArrayRef<Value> x, Type to) {
      SmallVector<Value> out;
      for (Value v : x)
        out.push_back(v.getType() == to
                          ? v
                          : rw.create<arith::ExtFOp>(loc, to, v).getResult());
      return out;
    };
    SmallVector<SmallVector<Value>> inputs;
    for (auto [value, regs] : llvm::zip(op->getOperands(), operands)) {
      SmallVector<Value> x(regs.begin(), regs.end());
      if (tile::isOCPFP8Type(value.getType())) {
        Type kind = getElementTypeOrSelf(value.getType());
        x = pairwise(x, [&](Value a, Value b) {
          return target.nvidia()->widenFP8x2(rw, loc, a, b, kind);
        });
      }
      inputs.push_back(std::move(x));
    }
    SmallVector<Value> values;
    if (isa<arith::ExtFOp, arith::TruncFOp>(op) && !tile::isOCPFP8Type(result)) {
      values = inputs[0]; // fp16 now: extended further if asked
      if (result != f16)
        values = extend(values, result);
    } else {
      SmallVector<Value> wide;
      if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
        wide = extend(inputs[0], f32); // fp16, bf16 or fp32 to fp8
      } else {
        size_t n = 1;
        for (auto &x : inputs)
          n = std::max(n, x.size());
        for (size_t i = 0; i < n; ++i) {
          OperationState state(loc, op->getName());
          for (auto [value, x] : llvm::zip(op->getOperands(), inputs)) {
            Value v = x.size() == 1 ? x[0] : x[i];
            bool widen =
                tile::isOCPFP8Type(value.getType()) && !v.getType().isF32();
            state.addOperands(
                widen ? rw.create<arith::ExtFOp>(loc, f32, v).getResult() : v);
          }
          state.addTypes(tile::isOCPFP8Type(result)
                             ? f32
                             : getTypeConverter()->convertType(result));
          state.addAttributes(op->getAttrs());
          wide.push_back(rw.create(state)->getResult(0));
        }
      }
      values = tile::isOCPFP8Type(result) ? pairwise(wide, [&](Value a, Value b) {
        return target.nvidia()->roundToFP8x2(rw, loc, a, b, result);
      })
                             : wide;
    }
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<ValueRange> operands,
                  ConversionPatternRewriter &rw) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        op->getNumRegions() != 0 || isa<arith::ConstantOp>(op))
      return failure();
    if (op->getNumResults() != 1)
      return failure();
    if (succeeded(convertFP8(op, operands, rw)))
      return success();
    if (!hasLayout(op->getResult(0).getType())) {
      // A scalar op whose types convert (8-bit floats as i8): the same op
      // on the converted types.
      Type result = getTypeConverter()->convertType(op->getResult(0).getType());
      if (isa<ShapedType>(op->getResult(0).getType()) || !result ||
          getTypeConverter()->isLegal(op))
        return failure();
      OperationState state(op->getLoc(), op->getName());
      for (ValueRange v : operands)
        state.addOperands(v);
      state.addTypes(result);
      state.addAttributes(op->getAttrs());
      rw.replaceOp(op, rw.create(state)->getResults());
      return success();
    }
    int n = layoutOf(op->getResult(0).getType()).inSize(gpu::kRegister);
    Type elt = getTypeConverter()->convertType(
        getElementTypeOrSelf(op->getResult(0).getType()));
    SmallVector<Value> values;
    // fp32 rounded to fp16/bf16 two registers at a time: one instruction
    // (cvt.rn.f16x2.f32) per pair, already packed as MMA operands and 4-byte
    // stores take them.
    if (auto trunc = dyn_cast<arith::TruncFOp>(op);
        trunc && n % 2 == 0 && operands[0].size() == size_t(n) &&
        operands[0][0].getType().isF32() && (elt.isF16() || elt.isBF16())) {
      Location loc = op->getLoc();
      auto from = VectorType::get({2}, operands[0][0].getType());
      auto to = VectorType::get({2}, elt);
      for (int i = 0; i < n; i += 2) {
        Value v = rw.create<LLVM::PoisonOp>(loc, from);
        for (int j = 0; j < 2; ++j)
          v = rw.create<LLVM::InsertElementOp>(loc, v, operands[0][i + j],
                                               i32Const(rw, loc, j));
        OperationState state(loc, op->getName());
        state.addOperands(v);
        state.addTypes(to);
        state.addAttributes(op->getAttrs());
        Value t = rw.create(state)->getResult(0);
        for (int j = 0; j < 2; ++j)
          values.push_back(rw.create<LLVM::ExtractElementOp>(
              loc, t, i32Const(rw, loc, j)));
      }
      rw.replaceOpWithMultiple(op, {values});
      return success();
    }
    for (int i = 0; i < n; ++i) {
      OperationState state(op->getLoc(), op->getName());
      for (ValueRange v : operands)
        state.addOperands(v.size() == 1 ? v[0] : v[i]);
      state.addTypes(elt);
      state.addAttributes(op->getAttrs());
      values.push_back(rw.create(state)->getResult(0));
    }
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

} // namespace

void gpu::lowering::populateElementwiseOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<AddPtrLowering, PointerCastLowering<tile::IntToPtrOp>,
               PointerCastLowering<tile::PtrToIntOp>,
               PointerCastLowering<tile::PtrCastOp>>(tc, patterns.getContext(),
                                                     target);
  patterns.add<ConstantLowering>(tc, patterns.getContext());
  patterns.add<ElementwiseLowering>(tc, patterns.getContext(), target);
}
