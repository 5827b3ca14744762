//===- Layouts.cpp - The register and shared layouts every GPU has --------===//
//
// Blocked layouts, XOR-swizzled shared memory, and how tile ops move a
// layout (expand_dims, broadcast, trans, reshape, scan, reduce): built on
// the LinearLayout algebra for any warp width. Each vendor's matrix-unit
// layouts live beside it (NvidiaLayouts.cpp).
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/IR/LinearLayout.h"

#include "LayoutSupport.h"

#include <algorithm>
#include <functional>

namespace tessel::gpu {

LinearLayout fitToShape(const LinearLayout &layout,
                        const std::vector<int32_t> &shape) {
  std::vector<LinearLayout::OutDim> outs;
  std::vector<int> from;
  for (unsigned d = 0; d < shape.size(); ++d) {
    if (!isPow2(shape[d]))
      bad("shape dimension " + std::to_string(shape[d]) +
          " is not a power of two");
    outs.push_back({dimName(d), shape[d]});
    from.push_back(layout.outIndex(dimName(d)));
  }
  std::vector<LinearLayout::InDim> ins = layout.ins();
  for (auto &in : ins)
    for (auto &b : in.bases) {
      LinearLayout::Basis n;
      for (unsigned d = 0; d < shape.size(); ++d)
        n.push_back(from[d] < 0 ? 0 : (b[from[d]] & (shape[d] - 1)));
      b = std::move(n);
    }
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout repeatToShape(LinearLayout layout,
                           const std::vector<int32_t> &shape,
                           const std::vector<unsigned> &order) {
  for (unsigned d : order) {
    int32_t have = layout.outSize(dimName(d));
    if (have < shape[d])
      layout = layout * LinearLayout::identity1D(shape[d] / have, kRegister,
                                                 dimName(d));
  }
  return layout;
}

std::optional<std::vector<int32_t>> warpSplitOf(
    const LinearLayout &layout,
    const std::function<LinearLayout(const std::vector<int32_t> &)> &build) {
  int32_t warps = layout.inSize(kWarp);
  for (int32_t wm = 1; wm <= warps; wm *= 2)
    if (layout == build({wm, warps / wm}))
      return std::vector<int32_t>{wm, warps / wm};
  return std::nullopt;
}

void checkRank(const std::vector<int32_t> &v, size_t rank, const char *what) {
  if (v.size() != rank)
    bad(std::string(what) + " has " + std::to_string(v.size()) +
        " entries for rank " + std::to_string(rank));
  for (int32_t x : v)
    if (!isPow2(x))
      bad(std::string(what) + " entry " + std::to_string(x) +
          " is not a power of two");
}

LinearLayout blockedLayout(const std::vector<int32_t> &shape,
                           const std::vector<int32_t> &sizePerThread,
                           const std::vector<int32_t> &threadsPerWarp,
                           const std::vector<int32_t> &warpsPerCTA,
                           const std::vector<unsigned> &order) {
  size_t rank = shape.size();
  checkRank(shape, rank, "shape");
  checkRank(sizePerThread, rank, "sizePerThread");
  checkRank(threadsPerWarp, rank, "threadsPerWarp");
  checkRank(warpsPerCTA, rank, "warpsPerCTA");
  if (order.size() != rank)
    bad("order has the wrong rank");
  LinearLayout regs, lanes, warps;
  for (unsigned d : order) {
    if (d >= rank)
      bad("order names a dimension outside the rank");
    regs = regs * LinearLayout::identity1D(sizePerThread[d], kRegister,
                                           dimName(d));
    lanes = lanes * LinearLayout::identity1D(threadsPerWarp[d], kLane,
                                             dimName(d));
    warps = warps * LinearLayout::identity1D(warpsPerCTA[d], kWarp,
                                             dimName(d));
  }
  LinearLayout tile = regs * lanes * warps;
  return fitToShape(repeatToShape(tile, shape, order), shape);
}

LinearLayout swizzledSharedLayout(int32_t rows, int32_t cols, int32_t vec,
                                  int32_t perPhase, int32_t maxPhase) {
  for (int32_t v : {rows, cols, vec, perPhase, maxPhase})
    if (!isPow2(v))
      bad("swizzled shared layout parameters must be powers of two");
  if (vec * maxPhase > cols)
    bad("swizzle phase exceeds the row width");
  // Row bit phaseShift + i flips chunk bit i.
  int phaseShift = log2Exact(perPhase), phaseBits = log2Exact(maxPhase);
  std::vector<int32_t> colXor;
  for (int r = 0; (int32_t(1) << r) < rows; ++r)
    colXor.push_back(r >= phaseShift && r < phaseShift + phaseBits
                         ? vec << (r - phaseShift)
                         : 0);
  return xorSwizzledLayout(rows, cols, colXor);
}

LinearLayout xorSwizzledLayout(int32_t rows, int32_t cols,
                               const std::vector<int32_t> &colXor) {
  std::vector<LinearLayout::Basis> bases;
  for (int32_t c = 1; c < cols; c <<= 1)
    bases.push_back({0, c});
  for (size_t r = 0; (int32_t(1) << r) < rows; ++r)
    bases.push_back({int32_t(1) << r, r < colXor.size() ? colXor[r] : 0});
  return LinearLayout({{kOffset, bases}},
                      {{dimName(0), rows}, {dimName(1), cols}});
}

} // namespace tessel::gpu

//===----------------------------------------------------------------------===//
// How tile ops move layouts
//===----------------------------------------------------------------------===//

namespace tessel::gpu {

LinearLayout defaultBlockedLayout(const std::vector<int32_t> &shape,
                                  int numWarps, int threadsPerWarp,
                                  int32_t vector,
                                  std::optional<unsigned> fastest,
                                  int32_t atLeast) {
  size_t rank = shape.size();
  if (rank == 0)
    bad("a layout needs a rank of at least 1");
  unsigned first = fastest.value_or(unsigned(rank - 1));
  if (first >= rank)
    bad("the fastest dimension is outside the rank");
  int64_t numel = 1;
  for (int32_t s : shape)
    numel *= s;
  // Dimensions from the fastest to the slowest.
  std::vector<unsigned> order{first};
  for (size_t i = rank; i-- > 0;)
    if (i != first)
      order.push_back(unsigned(i));
  std::vector<int32_t> spt(rank, 1), tpw(rank, 1), wpc(rank, 1);
  int64_t perThread = numel / (threadsPerWarp * int64_t(numWarps));
  spt[first] = std::max(
      atLeast, int32_t(std::clamp<int64_t>(
                   std::min<int64_t>(perThread, shape[first]), 1,
                   std::max(1, vector))));
  int32_t lanesLeft = threadsPerWarp;
  for (unsigned d : order) {
    int32_t room = std::max(1, shape[d] / spt[d]);
    tpw[d] = std::min(lanesLeft, room);
    lanesLeft /= tpw[d];
  }
  tpw[order.back()] *= lanesLeft; // a tensor smaller than a warp: copies
  int32_t warpsLeft = numWarps;
  for (auto d = order.rbegin(); d != order.rend(); ++d) {
    int32_t room = std::max(1, shape[*d] / (spt[*d] * tpw[*d]));
    wpc[*d] = std::min(warpsLeft, room);
    warpsLeft /= wpc[*d];
  }
  wpc[order.back()] *= warpsLeft;
  return blockedLayout(shape, spt, tpw, wpc, order);
}

namespace {
/// Rebuilds `layout` over new output dims, with basis coordinates computed
/// per old basis.
LinearLayout remapOuts(
    const LinearLayout &layout, const std::vector<int32_t> &shape,
    const std::function<LinearLayout::Basis(const LinearLayout::Basis &)> &f) {
  std::vector<LinearLayout::OutDim> outs;
  for (size_t d = 0; d < shape.size(); ++d)
    outs.push_back({dimName(d), shape[d]});
  std::vector<LinearLayout::InDim> ins = layout.ins();
  for (auto &in : ins)
    for (auto &b : in.bases)
      b = f(b);
  return LinearLayout(std::move(ins), std::move(outs));
}

std::vector<int32_t> shapeOf(const LinearLayout &layout) {
  std::vector<int32_t> shape;
  for (const auto &o : layout.outs())
    shape.push_back(o.size);
  return shape;
}
} // namespace

LinearLayout dropDim(const LinearLayout &layout, unsigned axis) {
  std::vector<int32_t> shape = shapeOf(layout);
  shape.erase(shape.begin() + axis);
  return remapOuts(layout, shape, [&](const LinearLayout::Basis &b) {
    LinearLayout::Basis n = b;
    n.erase(n.begin() + axis);
    return n;
  });
}

LinearLayout insertDim(const LinearLayout &layout, unsigned axis) {
  std::vector<int32_t> shape = shapeOf(layout);
  shape.insert(shape.begin() + axis, 1);
  return remapOuts(layout, shape, [&](const LinearLayout::Basis &b) {
    LinearLayout::Basis n = b;
    n.insert(n.begin() + axis, 0);
    return n;
  });
}

LinearLayout broadcastSource(const LinearLayout &layout,
                             const std::vector<int32_t> &srcShape) {
  return remapOuts(layout, srcShape, [&](const LinearLayout::Basis &b) {
    LinearLayout::Basis n = b;
    for (size_t d = 0; d < n.size(); ++d)
      n[d] &= srcShape[d] - 1;
    return n;
  });
}

LinearLayout transposeLayout(const LinearLayout &layout,
                             const std::vector<int32_t> &perm) {
  std::vector<int32_t> shape = shapeOf(layout), newShape;
  for (int32_t p : perm)
    newShape.push_back(shape[p]);
  return remapOuts(layout, newShape, [&](const LinearLayout::Basis &b) {
    LinearLayout::Basis n;
    for (int32_t p : perm)
      n.push_back(b[p]);
    return n;
  });
}

LinearLayout reshapeLayout(const LinearLayout &layout,
                           const std::vector<int32_t> &shape) {
  // Row-major: the last dimension is the fastest.
  std::vector<std::string> minorFirst;
  for (size_t d = layout.outs().size(); d-- > 0;)
    minorFirst.push_back(dimName(d));
  LinearLayout flat = layout.transposeOuts(minorFirst).flattenOuts("flat");
  std::vector<LinearLayout::OutDim> dims;
  std::vector<std::string> order;
  for (size_t d = shape.size(); d-- > 0;)
    dims.push_back({dimName(d), shape[d]});
  for (size_t d = 0; d < shape.size(); ++d)
    order.push_back(dimName(d));
  return flat.reshapeOuts(dims).transposeOuts(order);
}

LinearLayout scanLayout(const std::vector<int32_t> &shape, unsigned axis,
                        int numWarps, int threadsPerWarp) {
  size_t rank = shape.size();
  if (axis >= rank)
    bad("scanLayout: the axis is outside the rank");
  std::vector<int32_t> spt(rank, 1), tpw(rank, 1), wpc(rank, 1);
  // Fastest first: the other dimensions from the last, then the axis, which
  // takes the lanes left over (its consecutive elements in each thread's
  // registers, then across those lanes) and the warps left over (copies:
  // the axis is whole within a warp).
  std::vector<unsigned> order;
  for (size_t d = rank; d-- > 0;)
    if (d != axis)
      order.push_back(unsigned(d));
  order.push_back(axis);
  int32_t lanesLeft = threadsPerWarp, warpsLeft = numWarps;
  for (unsigned d : order) {
    if (d == axis)
      continue;
    tpw[d] = std::min(lanesLeft, std::max(1, shape[d]));
    lanesLeft /= tpw[d];
  }
  tpw[axis] = lanesLeft;
  spt[axis] = std::max(1, shape[axis] / tpw[axis]);
  for (auto d = order.rbegin(); d != order.rend(); ++d) {
    if (*d == axis)
      continue;
    wpc[*d] = std::min(warpsLeft, std::max(1, shape[*d] / tpw[*d]));
    warpsLeft /= wpc[*d];
  }
  wpc[axis] = warpsLeft;
  return blockedLayout(shape, spt, tpw, wpc, order);
}

bool canReduceAlong(const LinearLayout &layout, unsigned axis) {
  for (const auto &in : layout.ins())
    for (const auto &b : in.bases)
      if (b[axis] != 0)
        for (size_t d = 0; d < b.size(); ++d)
          if (d != axis && b[d] != 0)
            return false;
  return true;
}

LinearLayout reduceLayout(const LinearLayout &layout, unsigned axis) {
  if (!canReduceAlong(layout, axis))
    bad("reduceLayout: bases mix the axis with other dimensions");
  std::vector<LinearLayout::InDim> ins;
  for (const auto &in : layout.ins()) {
    LinearLayout::InDim n{in.name, {}};
    for (const auto &b : in.bases) {
      bool alongAxis = b[axis] != 0;
      if (alongAxis && in.name == kRegister)
        continue; // combined within the thread
      LinearLayout::Basis nb = b;
      nb.erase(nb.begin() + axis);
      if (alongAxis)
        std::fill(nb.begin(), nb.end(), 0); // combined across: copies
      n.bases.push_back(std::move(nb));
    }
    ins.push_back(std::move(n));
  }
  std::vector<int32_t> shape = shapeOf(layout);
  shape.erase(shape.begin() + axis);
  std::vector<LinearLayout::OutDim> outs;
  for (size_t d = 0; d < shape.size(); ++d)
    outs.push_back({dimName(d), shape[d]});
  return LinearLayout(std::move(ins), std::move(outs));
}

} // namespace tessel::gpu
