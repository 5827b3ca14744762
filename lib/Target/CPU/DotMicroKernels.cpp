//===- DotMicroKernels.cpp - linalg.matmul as register-blocked loops -------===//
//
// See the pass's description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

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

/// acc + x * y, fused for floats.
Value multiplyAdd(OpBuilder &b, Location loc, Value x, Value y, Value acc) {
  if (isa<FloatType>(getElementTypeOrSelf(acc.getType())))
    return isa<VectorType>(acc.getType())
               ? Value(vector::FMAOp::create(b, loc, x, y, acc))
               : Value(math::FmaOp::create(b, loc, x, y, acc));
  return arith::AddIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, x, y));
}

/// C += A B with an MR x (NV * VL) block of C in vector registers while k
/// runs: each step loads NV vectors of a row of B and broadcasts MR elements
/// of a column of A.
void emitRegisterBlocked(OpBuilder &b, Location loc, Value a, Value bm, Value c,
                         int64_t m, int64_t n, int64_t k, RegisterTile tile) {
  Type elt = cast<MemRefType>(c.getType()).getElementType();
  auto vecType = VectorType::get({tile.lanes}, elt);
  int64_t mr = tile.rows, nv = tile.vectors, vl = tile.lanes;
  auto rows = scf::ForOp::create(b, loc, index(b, loc, 0), index(b, loc, m),
                                 index(b, loc, mr));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(rows.getBody()->getTerminator());
  Value i0 = rows.getInductionVar();
  auto cols = scf::ForOp::create(b, loc, index(b, loc, 0), index(b, loc, n),
                                 index(b, loc, nv * vl));
  b.setInsertionPoint(cols.getBody()->getTerminator());
  Value j0 = cols.getInductionVar();
  SmallVector<Value> rowIdx, colIdx;
  for (int64_t r = 0; r < mr; ++r)
    rowIdx.push_back(arith::AddIOp::create(b, loc, i0, index(b, loc, r)));
  for (int64_t v = 0; v < nv; ++v)
    colIdx.push_back(arith::AddIOp::create(b, loc, j0, index(b, loc, v * vl)));
  SmallVector<Value> accs;
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t v = 0; v < nv; ++v)
      accs.push_back(vector::LoadOp::create(b, loc, vecType, c,
                                            ValueRange{rowIdx[r], colIdx[v]}));
  auto kLoop = scf::ForOp::create(
      b, loc, index(b, loc, 0), index(b, loc, k), index(b, loc, 1), accs,
      [&](OpBuilder &kb, Location l, Value kk, ValueRange acc) {
        SmallVector<Value> bRow;
        for (int64_t v = 0; v < nv; ++v)
          bRow.push_back(vector::LoadOp::create(kb, l, vecType, bm,
                                                ValueRange{kk, colIdx[v]}));
        SmallVector<Value> next;
        for (int64_t r = 0; r < mr; ++r) {
          Value aik = memref::LoadOp::create(kb, l, a, ValueRange{rowIdx[r], kk});
          Value splat = vector::BroadcastOp::create(kb, l, vecType, aik);
          for (int64_t v = 0; v < nv; ++v)
            next.push_back(multiplyAdd(kb, l, splat, bRow[v], acc[r * nv + v]));
        }
        scf::YieldOp::create(kb, l, next);
      });
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t v = 0; v < nv; ++v)
      vector::StoreOp::create(b, loc, kLoop.getResult(r * nv + v), c,
                              ValueRange{rowIdx[r], colIdx[v]});
}

/// C += A B as i-k-j loops, the innermost along contiguous rows of B and C.
void emitScalarLoops(OpBuilder &b, Location loc, Value a, Value bm, Value c,
                     int64_t m, int64_t n, int64_t k) {
  auto loop = [&](int64_t bound) {
    auto l = scf::ForOp::create(b, loc, index(b, loc, 0), index(b, loc, bound),
                                index(b, loc, 1));
    b.setInsertionPoint(l.getBody()->getTerminator());
    return l.getInductionVar();
  };
  OpBuilder::InsertionGuard guard(b);
  Value i = loop(m), kk = loop(k);
  Value aik = memref::LoadOp::create(b, loc, a, ValueRange{i, kk});
  Value j = loop(n);
  Value bkj = memref::LoadOp::create(b, loc, bm, ValueRange{kk, j});
  Value acc = memref::LoadOp::create(b, loc, c, ValueRange{i, j});
  memref::StoreOp::create(b, loc, multiplyAdd(b, loc, aik, bkj, acc), c,
                          ValueRange{i, j});
}

struct DotMicroKernels
    : public tessel::cpu::impl::DotMicroKernelsBase<DotMicroKernels> {
  void runOnOperation() override {
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation()->walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
    for (linalg::MatmulOp op : matmuls) {
      Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1],
            c = op.getDpsInits()[0];
      Type elt = getElementTypeOrSelf(c.getType());
      if (!staticIdentity(a) || !staticIdentity(bm) || !staticIdentity(c) ||
          getElementTypeOrSelf(a.getType()) != elt ||
          getElementTypeOrSelf(bm.getType()) != elt || !op.hasPureBufferSemantics() ||
          op.getIndexingMapsArray() !=
              linalg::MatmulOp::getDefaultIndexingMaps(op.getContext())) {
        op.emitOpError("the CPU's dot micro-kernels take a matmul of static "
                       "row-major buffers of one element type");
        return signalPassFailure();
      }
      auto cType = cast<MemRefType>(c.getType());
      int64_t m = cType.getDimSize(0), n = cType.getDimSize(1);
      int64_t k = cast<MemRefType>(a.getType()).getDimSize(1);
      OpBuilder b(op);
      RegisterTile tile = registerTile(m, n, elt);
      if (tile.rows)
        emitRegisterBlocked(b, op.getLoc(), a, bm, c, m, n, k, tile);
      else
        emitScalarLoops(b, op.getLoc(), a, bm, c, m, n, k);
      op.erase();
    }
  }
};

} // namespace
