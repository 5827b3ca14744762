//===- DotMicroKernels.cpp - linalg.matmul as register-blocked loops -------===//
//
// See the pass's description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <functional>

namespace tessel::cpu {
#define GEN_PASS_DEF_DOTMICROKERNELS
#include "tessel/Target/CPU/Passes.h.inc"
} // namespace tessel::cpu

using namespace mlir;

namespace {

/// The register tile of a micro-kernel: `rows` rows of C by `vectors`
/// vectors of `lanes` elements each.
struct RegisterTile {
  int64_t rows = 0, lanes = 0, vectors = 0;
};

/// The register tile for an m x n block of `elt` (0 rows where none fits):
/// the widest vector (512, 256 or 128 bits) whose lanes divide n, two of them
/// side by side where they divide n too, and 8, 4, 2 or 1 rows. At most 16
/// accumulators, half of AVX-512's registers.
RegisterTile registerTile(int64_t m, int64_t n, Type elt) {
  RegisterTile tile;
  unsigned bits = elt.getIntOrFloatBitWidth();
  if (!(isa<FloatType>(elt) || isa<IntegerType>(elt)) || bits < 8 || bits > 64)
    return tile;
  for (unsigned width : {512u, 256u, 128u}) {
    int64_t lanes = width / bits;
    if (lanes >= 2 && n % lanes == 0) {
      tile.lanes = lanes;
      break;
    }
  }
  if (!tile.lanes)
    return tile;
  tile.vectors = n % (2 * tile.lanes) == 0 ? 2 : 1;
  for (int64_t rows : {8, 4, 2, 1})
    if (m % rows == 0) {
      tile.rows = rows;
      break;
    }
  return tile;
}

bool staticIdentity(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getRank() == 2 &&
         type.getLayout().isIdentity();
}

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A loop over [lb, ub) by `step`, the builder inside it before the
/// terminator; returns the induction variable.
Value beginLoop(OpBuilder &b, Location loc, int64_t lb, int64_t ub,
                int64_t step = 1) {
  auto loop = scf::ForOp::create(b, loc, index(b, loc, lb), index(b, loc, ub),
                                 index(b, loc, step));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  return loop.getInductionVar();
}

Value add(OpBuilder &b, Location loc, Value i, int64_t c) {
  return c ? Value(arith::AddIOp::create(b, loc, i, index(b, loc, c))) : i;
}

/// acc + x * y, fused for floats.
Value multiplyAdd(OpBuilder &b, Location loc, Value x, Value y, Value acc) {
  if (isa<FloatType>(getElementTypeOrSelf(acc.getType())))
    return isa<VectorType>(acc.getType())
               ? Value(vector::FMAOp::create(b, loc, x, y, acc))
               : Value(math::FmaOp::create(b, loc, x, y, acc));
  return arith::AddIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, x, y));
}

/// A stack buffer at the start of `op`'s function (not in the loops around
/// it, where each iteration would grow the stack).
Value stackBuffer(Operation *op, ArrayRef<int64_t> shape, Type elt) {
  auto fn = op->getParentOfType<FunctionOpInterface>();
  OpBuilder b(op->getContext());
  b.setInsertionPointToStart(&fn.getFunctionBody().front());
  return memref::AllocaOp::create(b, op->getLoc(), MemRefType::get(shape, elt),
                                  ValueRange{}, b.getI64IntegerAttr(64));
}

/// `v` (a buffer) widened to `elt` in a buffer of its own; `v` itself where it
/// has that type already.
Value widened(OpBuilder &b, Operation *op, Value v, Type elt) {
  auto type = cast<MemRefType>(v.getType());
  if (type.getElementType() == elt)
    return v;
  Location loc = op->getLoc();
  Value buf = stackBuffer(op, type.getShape(), elt);
  OpBuilder::InsertionGuard guard(b);
  Value i = beginLoop(b, loc, 0, type.getDimSize(0));
  Value j = beginLoop(b, loc, 0, type.getDimSize(1));
  Value x = memref::LoadOp::create(b, loc, v, ValueRange{i, j});
  x = isa<FloatType>(elt) ? Value(arith::ExtFOp::create(b, loc, elt, x))
                          : Value(arith::ExtSIOp::create(b, loc, elt, x));
  memref::StoreOp::create(b, loc, x, buf, ValueRange{i, j});
  return buf;
}

/// The shape of a micro-kernel: the register tile, and what one k step does
/// to it given the step's k.
struct MicroKernel {
  RegisterTile tile;
  /// K steps of `kStep` elements each.
  int64_t kSteps = 0;
  /// The next accumulators of a k step from the current ones (`acc`, row
  /// major over the tile).
  std::function<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange,
                                   ArrayRef<Value>, ArrayRef<Value>)>
      step;
  /// Applied to each accumulator of a row (its index given) after the k
  /// loop; may be null.
  std::function<Value(OpBuilder &, Location, Value, Value)> finishRow;
};

/// C += A B with an MR x (NV * VL) block of C in vector registers while k
/// runs.
void emitRegisterBlocked(OpBuilder &b, Location loc, Value c, int64_t m,
                         int64_t n, const MicroKernel &kernel) {
  RegisterTile tile = kernel.tile;
  Type elt = cast<MemRefType>(c.getType()).getElementType();
  auto vecType = VectorType::get({tile.lanes}, elt);
  int64_t mr = tile.rows, nv = tile.vectors, vl = tile.lanes;
  OpBuilder::InsertionGuard guard(b);
  Value i0 = beginLoop(b, loc, 0, m, mr);
  Value j0 = beginLoop(b, loc, 0, n, nv * vl);
  SmallVector<Value> rowIdx, colIdx;
  for (int64_t r = 0; r < mr; ++r)
    rowIdx.push_back(add(b, loc, i0, r));
  for (int64_t v = 0; v < nv; ++v)
    colIdx.push_back(add(b, loc, j0, v * vl));
  SmallVector<Value> accs;
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t v = 0; v < nv; ++v)
      accs.push_back(vector::LoadOp::create(b, loc, vecType, c,
                                            ValueRange{rowIdx[r], colIdx[v]}));
  auto kLoop = scf::ForOp::create(
      b, loc, index(b, loc, 0), index(b, loc, kernel.kSteps), index(b, loc, 1),
      accs, [&](OpBuilder &kb, Location l, Value kk, ValueRange acc) {
        scf::YieldOp::create(kb, l, kernel.step(kb, l, kk, acc, rowIdx, colIdx));
      });
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t v = 0; v < nv; ++v) {
      Value acc = kLoop.getResult(r * nv + v);
      if (kernel.finishRow)
        acc = kernel.finishRow(b, loc, acc, rowIdx[r]);
      vector::StoreOp::create(b, loc, acc, c, ValueRange{rowIdx[r], colIdx[v]});
    }
}

/// Each k step loads NV vectors of a row of B and broadcasts MR elements of a
/// column of A into MR x NV multiply-adds. A and B have C's element type.
MicroKernel multiplyAddKernel(Value a, Value bm, int64_t k, RegisterTile tile) {
  MicroKernel kernel;
  kernel.tile = tile;
  kernel.kSteps = k;
  kernel.step = [=](OpBuilder &b, Location l, Value kk, ValueRange acc,
                    ArrayRef<Value> rows, ArrayRef<Value> cols) {
    auto vecType = VectorType::get(
        {tile.lanes}, cast<MemRefType>(bm.getType()).getElementType());
    SmallVector<Value> bRow;
    for (Value col : cols)
      bRow.push_back(
          vector::LoadOp::create(b, l, vecType, bm, ValueRange{kk, col}));
    SmallVector<Value> next;
    for (auto [r, row] : llvm::enumerate(rows)) {
      Value aik = memref::LoadOp::create(b, l, a, ValueRange{row, kk});
      Value splat = vector::BroadcastOp::create(b, l, vecType, aik);
      for (auto [v, bv] : llvm::enumerate(bRow))
        next.push_back(multiplyAdd(b, l, splat, bv, acc[r * bRow.size() + v]));
    }
    return next;
  };
  return kernel;
}

/// `group` consecutive K elements of a row of A, starting at `kk * group`, as
/// one 32-bit integer broadcast to `lanes` lanes and seen as `type`.
Value broadcastGroup(OpBuilder &b, Location l, Value a, Value row, Value kk,
                     int64_t group, int64_t lanes, VectorType type) {
  Type elt = cast<MemRefType>(a.getType()).getElementType();
  Value k0 = arith::MulIOp::create(b, l, kk, index(b, l, group));
  Value run = vector::LoadOp::create(b, l, VectorType::get({group}, elt), a,
                                     ValueRange{row, k0});
  Value word = vector::ExtractOp::create(
      b, l,
      vector::BitCastOp::create(b, l, VectorType::get({1}, b.getI32Type()),
                                run),
      ArrayRef<int64_t>{0});
  Value splat = vector::BroadcastOp::create(
      b, l, VectorType::get({lanes}, b.getI32Type()), word);
  return vector::BitCastOp::create(b, l, type, splat);
}

/// A copy of A (M x K, of 8- or 16-bit elements) whose rows are padded with
/// zeros to a multiple of `group` elements; A itself where K is one already.
Value paddedRows(OpBuilder &b, Operation *op, Value a, int64_t group) {
  auto type = cast<MemRefType>(a.getType());
  int64_t m = type.getDimSize(0), k = type.getDimSize(1);
  if (k % group == 0)
    return a;
  Location loc = op->getLoc();
  int64_t padded = llvm::alignTo(k, group);
  Type elt = type.getElementType();
  Value buf = stackBuffer(op, {m, padded}, elt);
  OpBuilder::InsertionGuard guard(b);
  Value i = beginLoop(b, loc, 0, m);
  {
    OpBuilder::InsertionGuard inner(b);
    Value j = beginLoop(b, loc, 0, k);
    memref::StoreOp::create(b, loc, memref::LoadOp::create(b, loc, a, ValueRange{i, j}),
                            buf, ValueRange{i, j});
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  for (int64_t j = k; j < padded; ++j)
    memref::StoreOp::create(b, loc, zero, buf, ValueRange{i, index(b, loc, j)});
  return buf;
}

/// B (K x N) packed for dot-product instructions: row kk of the result holds
/// `group` consecutive K elements of each column in turn (B[kk*g + t][j] at
/// [kk][j*g + t]), K padded with zero rows; each element then XOR `flip`
/// (bit patterns of B's element type, 0 for none).
Value packGroups(OpBuilder &b, Operation *op, Value bm, int64_t group,
                 int64_t lanes, int64_t flip) {
  auto type = cast<MemRefType>(bm.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  int64_t steps = llvm::divideCeil(k, group);
  Type elt = type.getElementType();
  unsigned bits = elt.getIntOrFloatBitWidth();
  Location loc = op->getLoc();
  Value packed = stackBuffer(op, {steps, n * group}, elt);
  auto intType = b.getIntegerType(bits);
  auto rowType = VectorType::get({lanes}, elt);
  OpBuilder::InsertionGuard guard(b);
  Value j = beginLoop(b, loc, 0, n, lanes);
  for (int64_t kk = 0; kk < steps; ++kk) {
    // `group` rows of `lanes` elements, as integers, zero past K.
    SmallVector<Value> rows;
    for (int64_t t = 0; t < group; ++t) {
      auto ints = VectorType::get({lanes}, intType);
      if (kk * group + t < k)
        rows.push_back(vector::BitCastOp::create(
            b, loc, ints,
            vector::LoadOp::create(b, loc, rowType, bm,
                                   ValueRange{index(b, loc, kk * group + t), j})));
      else
        rows.push_back(arith::ConstantOp::create(
            b, loc, ints, DenseElementsAttr::get(ints, b.getZeroAttr(intType))));
    }
    // Interleave pairwise, doubling the run each round: runs of one element
    // of rows (0, 1), (2, 3) first, then runs of two of those results.
    int64_t run = 1;
    while (rows.size() > 1) {
      SmallVector<Value> next;
      for (size_t p = 0; p < rows.size(); p += 2) {
        int64_t len = cast<VectorType>(rows[p].getType()).getNumElements();
        SmallVector<int64_t> mask;
        for (int64_t c = 0; c < len / run; ++c)
          for (int64_t side = 0; side < 2; ++side)
            for (int64_t e = 0; e < run; ++e)
              mask.push_back(side * len + c * run + e);
        next.push_back(vector::ShuffleOp::create(b, loc, rows[p], rows[p + 1], mask));
      }
      rows = next;
      run *= 2;
    }
    Value all = rows.front();
    if (flip) {
      auto allType = cast<VectorType>(all.getType());
      all = arith::XOrIOp::create(
          b, loc, all,
          arith::ConstantOp::create(
              b, loc, allType,
              DenseElementsAttr::get(allType, b.getIntegerAttr(intType, flip))));
    }
    all = vector::BitCastOp::create(
        b, loc, VectorType::get({lanes * group}, elt), all);
    Value col = arith::MulIOp::create(b, loc, j, index(b, loc, group));
    vector::StoreOp::create(b, loc, all, packed,
                            ValueRange{index(b, loc, kk), col});
  }
  return packed;
}

/// A k step on a dot-product instruction `intrinsic`(C, B, A) that takes
/// `group` K at once: NV vectors of B packed so (`packGroups`) and, for each
/// row, a group of that row of A broadcast (`broadcastGroup`), both loaded as
/// `operandType` and given to the instruction through `asOperand` (if any).
MicroKernel dotProductKernel(RegisterTile tile, int64_t k, Value aGroups,
                             Value bGroups, int64_t group,
                             VectorType operandType, StringRef intrinsic,
                             std::function<Value(OpBuilder &, Location, Value)>
                                 asOperand = nullptr) {
  MicroKernel kernel;
  kernel.tile = tile;
  kernel.kSteps = llvm::divideCeil(k, group);
  kernel.step = [=](OpBuilder &b, Location l, Value kk, ValueRange acc,
                    ArrayRef<Value> rows, ArrayRef<Value> cols) {
    auto operand = [&](Value v) { return asOperand ? asOperand(b, l, v) : v; };
    SmallVector<Value> bRow;
    for (Value col : cols)
      bRow.push_back(operand(vector::LoadOp::create(
          b, l, operandType, bGroups,
          ValueRange{kk, arith::MulIOp::create(b, l, col, index(b, l, group))})));
    SmallVector<Value> next;
    for (auto [r, row] : llvm::enumerate(rows)) {
      Value aGroup = operand(broadcastGroup(b, l, aGroups, row, kk, group,
                                            tile.lanes, operandType));
      for (auto [v, bv] : llvm::enumerate(bRow)) {
        Value sum = acc[r * bRow.size() + v];
        next.push_back(LLVM::CallIntrinsicOp::create(
                           b, l, sum.getType(), b.getStringAttr(intrinsic),
                           ValueRange{sum, bv, aGroup})
                           .getResult(0));
      }
    }
    return next;
  };
  return kernel;
}

/// bf16 x bf16 into fp32 on AVX512-BF16's vdpbf16ps: each k step takes a pair
/// of K, one 32-bit pair of a row of A broadcast against 16 columns of B
/// packed as pairs.
MicroKernel bf16DotKernel(OpBuilder &b, Operation *op, Value a, Value bm,
                          int64_t k, RegisterTile tile) {
  auto pairsType = VectorType::get({32}, b.getBF16Type());
  // As bf16 for LLVM, through i16 (tessel-cpu-narrow-floats keeps other bf16
  // values as their bits).
  auto asBF16 = [pairsType](OpBuilder &b, Location l, Value v) -> Value {
    auto bits = VectorType::get({32}, b.getI16Type());
    return LLVM::BitcastOp::create(b, l, pairsType,
                                   vector::BitCastOp::create(b, l, bits, v));
  };
  return dotProductKernel(tile, k, paddedRows(b, op, a, 2),
                          packGroups(b, op, bm, 2, 16, 0), 2, pairsType,
                          "llvm.x86.avx512bf16.dpbf16ps.512", asBF16);
}

/// int8 x int8 into int32 on AVX512-VNNI's vpdpbusd (unsigned x signed bytes,
/// four products a lane): B is packed in groups of four K with its sign bit
/// flipped (B + 128 as unsigned), a group of four of a row of A is broadcast,
/// and 128 times the row's sum is taken off C at the end.
MicroKernel int8DotKernel(OpBuilder &b, Operation *op, Value a, Value bm,
                          int64_t m, int64_t k, RegisterTile tile) {
  Location loc = op->getLoc();
  Value aGroups = paddedRows(b, op, a, 4);
  Value bGroups = packGroups(b, op, bm, 4, 16, 0x80);
  // 128 times each row of A's sum.
  Value rowSums = stackBuffer(op, {m}, b.getI32Type());
  {
    OpBuilder::InsertionGuard guard(b);
    Value i = beginLoop(b, loc, 0, m);
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
    auto sum = scf::ForOp::create(
        b, loc, index(b, loc, 0), index(b, loc, k), index(b, loc, 1),
        ValueRange{zero}, [&](OpBuilder &sb, Location l, Value j, ValueRange s) {
          Value x = arith::ExtSIOp::create(
              sb, l, sb.getI32Type(),
              memref::LoadOp::create(sb, l, a, ValueRange{i, j}));
          scf::YieldOp::create(sb, l, ValueRange{arith::AddIOp::create(sb, l, s[0], x)});
        });
    Value scaled = arith::ShLIOp::create(b, loc, sum.getResult(0),
                                         arith::ConstantIntOp::create(b, loc, 7, 32));
    memref::StoreOp::create(b, loc, scaled, rowSums, ValueRange{i});
  }
  MicroKernel kernel = dotProductKernel(
      tile, k, aGroups, bGroups, 4, VectorType::get({64}, b.getI8Type()),
      "llvm.x86.avx512.vpdpbusd.512");
  kernel.finishRow = [=](OpBuilder &b, Location l, Value acc, Value row) {
    Value s = memref::LoadOp::create(b, l, rowSums, ValueRange{row});
    return arith::SubIOp::create(b, l, acc,
                                 vector::BroadcastOp::create(b, l, acc.getType(), s));
  };
  return kernel;
}

/// C += A B as i-k-j loops, the innermost along contiguous rows of B and C.
void emitScalarLoops(OpBuilder &b, Location loc, Value a, Value bm, Value c,
                     int64_t m, int64_t n, int64_t k) {
  OpBuilder::InsertionGuard guard(b);
  Value i = beginLoop(b, loc, 0, m), kk = beginLoop(b, loc, 0, k);
  Value aik = memref::LoadOp::create(b, loc, a, ValueRange{i, kk});
  Value j = beginLoop(b, loc, 0, n);
  Value bkj = memref::LoadOp::create(b, loc, bm, ValueRange{kk, j});
  Value acc = memref::LoadOp::create(b, loc, c, ValueRange{i, j});
  memref::StoreOp::create(b, loc, multiplyAdd(b, loc, aik, bkj, acc), c,
                          ValueRange{i, j});
}

bool isType(Value v, Type t) { return getElementTypeOrSelf(v.getType()) == t; }

struct DotMicroKernels
    : public tessel::cpu::impl::DotMicroKernelsBase<DotMicroKernels> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation()->walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
    for (linalg::MatmulOp op : matmuls)
      if (failed(lower(op)))
        return signalPassFailure();
  }

  LogicalResult lower(linalg::MatmulOp op) {
    Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1],
          c = op.getDpsInits()[0];
    Type elt = getElementTypeOrSelf(c.getType());
    if (!staticIdentity(a) || !staticIdentity(bm) || !staticIdentity(c) ||
        !op.hasPureBufferSemantics() ||
        op.getIndexingMapsArray() !=
            linalg::MatmulOp::getDefaultIndexingMaps(op.getContext()) ||
        !(isa<FloatType>(elt) || isa<IntegerType>(elt)) ||
        getElementTypeOrSelf(a.getType()) != getElementTypeOrSelf(bm.getType()) ||
        isa<FloatType>(elt) != isa<FloatType>(getElementTypeOrSelf(a.getType())))
      return op.emitOpError("the CPU's dot micro-kernels take a matmul of "
                            "static row-major buffers, A and B of one type "
                            "and C of that kind");
    auto cType = cast<MemRefType>(c.getType());
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1);
    int64_t k = cast<MemRefType>(a.getType()).getDimSize(1);
    OpBuilder b(op);
    Location loc = op.getLoc();
    RegisterTile tile = registerTile(m, n, elt);
    // 16 lanes of fp32/int32 results: the dot-product instructions' width.
    bool zmm = tile.rows && tile.lanes == 16 && k > 0;
    MicroKernel kernel;
    if (zmm && bf16DotProduct && isType(a, b.getBF16Type()) && elt.isF32())
      kernel = bf16DotKernel(b, op, a, bm, k, tile);
    else if (zmm && int8DotProduct && isType(a, b.getI8Type()) &&
             elt.isInteger(32))
      kernel = int8DotKernel(b, op, a, bm, m, k, tile);
    Value wideA, wideB;
    if (!kernel.step) {
      wideA = widened(b, op, a, elt);
      wideB = widened(b, op, bm, elt);
      if (tile.rows)
        kernel = multiplyAddKernel(wideA, wideB, k, tile);
    }
    if (kernel.step)
      emitRegisterBlocked(b, loc, c, m, n, kernel);
    else
      emitScalarLoops(b, loc, wideA, wideB, c, m, n, k);
    op.erase();
    return success();
  }
};

} // namespace
