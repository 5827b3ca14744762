//===- Utility.h - Per-thread helpers of the lowering ----------*- C++ -*-===//
//
// What the TileGPU-to-LLVM patterns share: one thread's view of a tensor
// under a linear layout (its lane and warp, the coordinates its registers
// hold, whether it owns them), memory types, shuffles, and the base class
// of the patterns. Everything here lives in tessel::gpu::lowering.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_UTILITY_H
#define TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_UTILITY_H

#include "tessel/Conversion/TileGPUToLLVM/TileGPUToLLVM.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tessel::gpu::lowering {

using mlir::ArrayRef;
using mlir::Location;
using mlir::OpBuilder;
using mlir::SmallVector;
using mlir::Type;
using mlir::Value;

/// The program's dynamic shared array (one per module).
constexpr const char *kSharedName = "tessel_shared";

Value i32Const(OpBuilder &b, Location loc, int64_t v);

/// The layout of a tensor type the layout passes gave one.
LinearLayout layoutOf(Type t);
bool hasLayout(Type t);

/// Bytes an element takes in memory (bools as bytes, pointers as 8).
unsigned storageBytes(Type t);

/// The hardware indices of the current thread.
struct ThreadIds {
  Value lane, warp;
};
ThreadIds threadIds(OpBuilder &b, Location loc, const GPUTargetInfo &target);

/// XOR of the bases of the set bits of `index` (i32) for input dimension
/// `in`, added (XOR) to `acc`: one i32 per output dimension.
SmallVector<Value> hardwarePart(OpBuilder &b, Location loc,
                                const LinearLayout &layout, const char *in,
                                Value index, SmallVector<Value> acc);

/// The coordinates of the element each register of this thread holds:
/// coords[register][dim] (i32).
SmallVector<SmallVector<Value>> elementCoords(OpBuilder &b, Location loc,
                                              const LinearLayout &layout,
                                              const ThreadIds &ids);

/// Row-major flat index of coordinates in `shape`.
Value flatIndex(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                ArrayRef<int32_t> shape);

/// Whether this thread owns (is the first copy of) its registers' elements:
/// lanes and warps whose bits only make copies are not owners. Warp bits in
/// `distinctWarps` count as distinct even where the layout copies along them
/// (a reduction's partials, one per warp along the axis).
Value isOwner(OpBuilder &b, Location loc, const LinearLayout &layout,
              const ThreadIds &ids, uint32_t distinctWarps = 0);

/// Registers that hold a copy of a lower register's element.
bool isCopyRegister(const LinearLayout &layout, int reg);

/// Memory type of a register value (bools as i8, pointers as pointers), and
/// a value converted to and from it.
Type memoryType(Type t);
Value toMemory(OpBuilder &b, Location loc, Value v);
Value fromMemory(OpBuilder &b, Location loc, Value v, Type t);
/// `values` (one access: consecutive elements) as memory holds them: one
/// element, or a vector of `mem`.
Value toMemoryAccess(OpBuilder &b, Location loc, mlir::ValueRange values,
                     Type mem);
/// One access as read from memory, back as `vec` elements of type `elt`.
SmallVector<Value> fromMemoryAccess(OpBuilder &b, Location loc, Value v,
                                    int vec, Type elt);

/// Clones `body` (a region's single block) at `b` with its arguments bound
/// to `args`; returns the values its terminator yields.
SmallVector<Value> inlineBlock(OpBuilder &b, mlir::Block &body,
                               mlir::ValueRange args);

/// Runs `body` only where `cond` holds.
void ifThen(OpBuilder &b, Location loc, Value cond,
            llvm::function_ref<void(OpBuilder &)> body);

/// A value of any register type (moved across lanes as i32 pieces): lane
/// (lane ^ laneMask)'s; lane `srcLane`'s (i32, each lane's own).
Value shuffleXor(OpBuilder &b, Location loc, const GPUTargetInfo &target,
                 Value v, int laneMask);
Value shuffleIdx(OpBuilder &b, Location loc, const GPUTargetInfo &target,
                 Value v, Value srcLane);

/// Registers per access of a load, store or async copy through `ptr`: the
/// vector width the layout pass proved for its addresses along the
/// dimension the thread's consecutive registers run along
/// (tilegpu::accessWidth).
int accessWidth(mlir::Operation *op, Value ptr);

/// The static shape of a ranked tensor type.
std::vector<int32_t> shapeOf(Type t);

/// Base of the patterns that need the target.
template <class Op>
struct TileGPUPattern : public mlir::OpConversionPattern<Op> {
  TileGPUPattern(const mlir::TypeConverter &tc, mlir::MLIRContext *ctx,
                 const GPUTargetInfo &target)
      : mlir::OpConversionPattern<Op>(tc, ctx), target(target) {}
  const GPUTargetInfo &target;
};

} // namespace tessel::gpu::lowering

#endif // TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_UTILITY_H
