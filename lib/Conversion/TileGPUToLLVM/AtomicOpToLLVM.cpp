//===- AtomicOpToLLVM.cpp - Atomics on global memory ---------------------===//
//
// tile.atomic_rmw and tile.atomic_cas per thread. Each element is applied
// once: by the thread that owns it (a layout may hold an element in several
// threads, or a register twice; a scalar is the program's first thread's),
// where its mask is set. Where the program uses the old values, the owners
// write them to the op's scratch and every thread reads back those of the
// elements it holds, between barriers.
//
// Float max/min are Triton's pair of integer atomics (a signed max of the
// bits where the value is not negative, an unsigned min where it is; min
// the other way round); a 16-bit float add the target has no instruction
// for is a loop of compare-and-swaps.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "SharedAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

Value bitcast(OpBuilder &b, Location loc, Value v, Type t) {
  if (v.getType() == t)
    return v;
  return b.create<arith::BitcastOp>(loc, t, v);
}

/// fp16/bf16 `val` added at `ptr` where `pred` holds by compare-and-swap of
/// the bits, the sum computed in fp32 and rounded once (the exact sum of
/// two 16-bit floats rounds alike from fp32). Returns the old value.
Value halfAddByCAS(OpBuilder &b, Location loc, const gpu::GPUTargetInfo &target,
                   Value ptr, Value val, Value pred, tile::MemSemantic sem,
                   tile::MemSyncScope scope) {
  Type half = val.getType(), i16 = b.getI16Type(), f32 = b.getF32Type();
  auto guarded = b.create<scf::IfOp>(loc, TypeRange{i16}, pred,
                                     /*withElseRegion=*/true);
  {
    OpBuilder tb = guarded.getThenBodyBuilder();
    Value addend = tb.create<arith::ExtFOp>(loc, f32, val);
    // A first guess; the swap tells the value it found.
    Value first = tb.create<LLVM::LoadOp>(loc, i16, ptr, /*alignment=*/2,
                                          /*isVolatile=*/true);
    Value yes = tb.create<arith::ConstantIntOp>(loc, tb.getI1Type(), 1);
    auto loop = tb.create<scf::WhileOp>(
        loc, TypeRange{i16}, ValueRange{first},
        [&](OpBuilder &ob, Location l, ValueRange args) {
          Value old = args[0];
          Value sum = ob.create<arith::AddFOp>(
              l, ob.create<arith::ExtFOp>(l, f32, bitcast(ob, l, old, half)),
              addend);
          Value next =
              bitcast(ob, l, ob.create<arith::TruncFOp>(l, half, sum), i16);
          Value seen =
              target.atomicCAS(ob, l, ptr, old, next, yes, sem, scope);
          Value again = ob.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne,
                                                 seen, old);
          ob.create<scf::ConditionOp>(l, again, ValueRange{seen});
        },
        [&](OpBuilder &ob, Location l, ValueRange args) {
          ob.create<scf::YieldOp>(l, args);
        });
    tb.create<scf::YieldOp>(loc, loop.getResult(0));
    OpBuilder eb = guarded.getElseBodyBuilder();
    eb.create<scf::YieldOp>(
        loc, ValueRange{eb.create<arith::ConstantIntOp>(loc, i16, 0)});
  }
  return bitcast(b, loc, guarded.getResult(0), half);
}

/// One element of tile.atomic_rmw where `pred` holds; its old value (zero
/// elsewhere).
Value rmwElement(OpBuilder &b, Location loc, const gpu::GPUTargetInfo &target,
                 tile::AtomicRMWKind kind, Value ptr, Value val, Value pred,
                 tile::MemSemantic sem, tile::MemSyncScope scope) {
  using Kind = tile::AtomicRMWKind;
  Type t = val.getType();
  Type word = b.getIntegerType(t.getIntOrFloatBitWidth());
  switch (kind) {
  case Kind::fmax:
  case Kind::fmin: {
    // Both instructions, each where its half of the values goes (as
    // Triton's code does).
    bool isMax = kind == Kind::fmax;
    Value bits = bitcast(b, loc, val, word);
    Value negative = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::slt, bits,
        b.create<arith::ConstantIntOp>(loc, word, 0));
    Value positive = b.create<arith::XOrIOp>(
        loc, negative, b.create<arith::ConstantIntOp>(loc, b.getI1Type(), 1));
    Value whenPositive = target.atomicRMW(
        b, loc, isMax ? Kind::max : Kind::min, ptr, bits,
        b.create<arith::AndIOp>(loc, pred, positive), sem, scope);
    Value whenNegative = target.atomicRMW(
        b, loc, isMax ? Kind::umin : Kind::umax, ptr, bits,
        b.create<arith::AndIOp>(loc, pred, negative), sem, scope);
    return bitcast(b, loc,
                   b.create<arith::SelectOp>(loc, negative, whenNegative,
                                             whenPositive),
                   t);
  }
  case Kind::bit_and:
  case Kind::bit_or:
  case Kind::bit_xor:
  case Kind::xchg:
    return bitcast(b, loc,
                   target.atomicRMW(b, loc, kind, ptr,
                                    bitcast(b, loc, val, word), pred, sem,
                                    scope),
                   t);
  default:
    break;
  }
  if (Value old = target.atomicRMW(b, loc, kind, ptr, val, pred, sem, scope))
    return old;
  return halfAddByCAS(b, loc, target, ptr, val, pred, sem, scope);
}

template <class OpTy>
struct AtomicLowering : TileGPUPattern<OpTy> {
  using TileGPUPattern<OpTy>::TileGPUPattern;
  using OneToNOpAdaptor = typename OpTy::template GenericAdaptor<
      ArrayRef<ValueRange>>;

  LogicalResult
  matchAndRewrite(OpTy op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    const gpu::GPUTargetInfo &target = this->target;
    Location loc = op.getLoc();
    std::optional<LinearLayout> layout =
        tilegpu::getLayout(op.getPtr().getType());
    for (Value v : op->getOperands())
      if (tilegpu::getLayout(v.getType()) != layout)
        return op.emitOpError("operands in different layouts (a bug of the "
                              "layout passes)");
    ThreadIds ids = threadIds(rw, loc, target);
    Value own;
    if (layout) {
      own = isOwner(rw, loc, *layout, ids);
    } else { // a scalar: the program's first thread
      Value tid = target.threadId(rw, loc);
      own = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid,
                                     i32Const(rw, loc, 0));
    }
    ValueRange ptrs = adaptor.getPtr();
    SmallVector<Value> olds(ptrs.size());
    for (size_t i = 0; i < ptrs.size(); ++i) {
      if (layout && isCopyRegister(*layout, i)) {
        olds[i] = olds[i & ~layout->freeBits(gpu::kRegister)];
        continue;
      }
      olds[i] = element(rw, loc, op, adaptor, i, own);
    }
    Value result = op->getResult(0);
    if (tilegpu::atomicResultCrossesThreads(op)) {
      // The owners' old values to the threads that hold copies.
      unsigned space = target.sharedAddressSpace();
      Type elt = olds[0].getType();
      target.barrier(rw, loc);
      if (layout) {
        std::vector<int32_t> shape = shapeOf(result.getType());
        writeTensorToShared(rw, loc, target, *layout, shape, olds, 0);
        target.barrier(rw, loc);
        olds = readTensorFromShared(rw, loc, target, *layout, shape, elt, 0);
      } else {
        Value zero = i32Const(rw, loc, 0), old = olds[0];
        ifThen(rw, loc, own, [&](OpBuilder &ib) {
          storeShared(ib, loc, space, old, 0, zero);
        });
        target.barrier(rw, loc);
        olds[0] = loadShared(rw, loc, space, elt, 0, zero);
      }
    }
    rw.replaceOpWithMultiple(op, {olds});
    return success();
  }

  /// Register `i`'s element, made by its owner where its mask is set.
  Value element(OpBuilder &b, Location loc, tile::AtomicRMWOp op,
                OneToNOpAdaptor adaptor, size_t i, Value own) const {
    Value pred = own;
    if (op.getMask())
      pred = b.create<arith::AndIOp>(loc, pred, adaptor.getMask()[i]);
    return rmwElement(b, loc, this->target, op.getKind(), adaptor.getPtr()[i],
                      adaptor.getVal()[i], pred, op.getSem(), op.getScope());
  }
  Value element(OpBuilder &b, Location loc, tile::AtomicCASOp op,
                OneToNOpAdaptor adaptor, size_t i, Value own) const {
    Value val = adaptor.getVal()[i];
    Type word = b.getIntegerType(val.getType().getIntOrFloatBitWidth());
    Value old = this->target.atomicCAS(
        b, loc, adaptor.getPtr()[i], bitcast(b, loc, adaptor.getCmp()[i], word),
        bitcast(b, loc, val, word), own, op.getSem(), op.getScope());
    return bitcast(b, loc, old, val.getType());
  }
};

} // namespace

void gpu::lowering::populateAtomicOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<AtomicLowering<tile::AtomicRMWOp>,
               AtomicLowering<tile::AtomicCASOp>>(tc, patterns.getContext(),
                                                  target);
}
