//===- LinearLayout.cpp - Layouts as linear maps over GF(2) ---------------===//
//
// Internally every operation works on "flat columns": input bits numbered in
// input-dimension order (each dimension's bits low to high), each mapped to an
// output bit mask with output dimensions' bits numbered the same way. A
// layout has at most 64 input and 64 output bits (a tensor of 2^20 elements
// and a grid of hardware indices stay far below that).
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/IR/LinearLayout.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <stdexcept>

namespace tessel::gpu {

namespace {

bool isPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int log2Exact(int64_t v) {
  int l = 0;
  while ((int64_t(1) << l) < v)
    ++l;
  return l;
}

[[noreturn]] void bad(const std::string &why) {
  throw std::invalid_argument("LinearLayout: " + why);
}

/// An XOR basis (row echelon form keyed by leading bit) that remembers which
/// inputs combine into each of its vectors: solves M x = y over GF(2).
struct Solver {
  struct Row {
    uint64_t value, combo;
  };
  std::vector<Row> rows; // sorted by nothing; each has a distinct top bit

  static int top(uint64_t v) { return 63 - __builtin_clzll(v); }

  /// Adds column `col` as input bit `bit`; false when it is dependent on the
  /// columns added before (it adds nothing new).
  bool add(uint64_t col, int bit) {
    uint64_t combo = uint64_t(1) << bit;
    for (;;) {
      if (!col)
        return false;
      int t = top(col);
      auto it = std::find_if(rows.begin(), rows.end(),
                             [&](const Row &r) { return top(r.value) == t; });
      if (it == rows.end()) {
        rows.push_back({col, combo});
        return true;
      }
      col ^= it->value;
      combo ^= it->combo;
    }
  }
  /// The inputs whose columns XOR to `y`, or nothing when y is unreachable.
  std::optional<uint64_t> solve(uint64_t y) const {
    uint64_t combo = 0;
    while (y) {
      int t = top(y);
      auto it = std::find_if(rows.begin(), rows.end(),
                             [&](const Row &r) { return top(r.value) == t; });
      if (it == rows.end())
        return std::nullopt;
      y ^= it->value;
      combo ^= it->combo;
    }
    return combo;
  }
};

} // namespace

std::string dimName(unsigned i) { return "dim" + std::to_string(i); }

LinearLayout::LinearLayout(std::vector<InDim> ins, std::vector<OutDim> outs)
    : ins_(std::move(ins)), outs_(std::move(outs)) {
  for (const OutDim &o : outs_)
    if (!isPow2(o.size))
      bad("output dimension '" + o.name + "' has size " +
          std::to_string(o.size) + ", not a power of two");
  for (const InDim &d : ins_)
    for (const Basis &b : d.bases) {
      if (b.size() != outs_.size())
        bad("a basis of '" + d.name + "' has " + std::to_string(b.size()) +
            " coordinates for " + std::to_string(outs_.size()) + " outputs");
      for (size_t i = 0; i < b.size(); ++i)
        if (b[i] < 0 || b[i] >= outs_[i].size)
          bad("a basis of '" + d.name + "' has coordinate " +
              std::to_string(b[i]) + " outside '" + outs_[i].name + "'");
    }
  if (totalInBits() > 64 || totalOutBits() > 64)
    bad("more than 64 input or output bits");
}

LinearLayout LinearLayout::identity1D(int32_t size, const std::string &in,
                                      const std::string &out) {
  if (!isPow2(size))
    bad("size " + std::to_string(size) + " is not a power of two");
  InDim d{in, {}};
  for (int32_t b = 1; b < size; b <<= 1)
    d.bases.push_back({b});
  return LinearLayout({d}, {{out, size}});
}

LinearLayout LinearLayout::zeros1D(int32_t size, const std::string &in,
                                   const std::string &out, int32_t outSize) {
  if (!isPow2(size))
    bad("size " + std::to_string(size) + " is not a power of two");
  InDim d{in, {}};
  for (int32_t b = 1; b < size; b <<= 1)
    d.bases.push_back({0});
  return LinearLayout({d}, {{out, outSize}});
}

int LinearLayout::inIndex(const std::string &name) const {
  for (size_t i = 0; i < ins_.size(); ++i)
    if (ins_[i].name == name)
      return int(i);
  return -1;
}
int LinearLayout::outIndex(const std::string &name) const {
  for (size_t i = 0; i < outs_.size(); ++i)
    if (outs_[i].name == name)
      return int(i);
  return -1;
}
int LinearLayout::inLog2(const std::string &name) const {
  int i = inIndex(name);
  return i < 0 ? 0 : int(ins_[i].bases.size());
}
int32_t LinearLayout::inSize(const std::string &name) const {
  return int32_t(1) << inLog2(name);
}
int32_t LinearLayout::outSize(const std::string &name) const {
  int i = outIndex(name);
  return i < 0 ? 1 : outs_[i].size;
}
int LinearLayout::totalInBits() const {
  int n = 0;
  for (const InDim &d : ins_)
    n += int(d.bases.size());
  return n;
}
int LinearLayout::totalOutBits() const {
  int n = 0;
  for (const OutDim &o : outs_)
    n += log2Exact(o.size);
  return n;
}
int64_t LinearLayout::totalInSize() const { return int64_t(1) << totalInBits(); }
int64_t LinearLayout::totalOutSize() const {
  return int64_t(1) << totalOutBits();
}

LinearLayout LinearLayout::operator*(const LinearLayout &other) const {
  std::vector<OutDim> outs = outs_;
  std::vector<int32_t> shift(other.outs_.size(), 1); // other's scale per out
  std::vector<int> where(other.outs_.size());
  for (size_t j = 0; j < other.outs_.size(); ++j) {
    int i = outIndex(other.outs_[j].name);
    if (i >= 0) {
      shift[j] = outs[i].size;
      outs[i].size *= other.outs_[j].size;
      where[j] = i;
    } else {
      where[j] = int(outs.size());
      outs.push_back(other.outs_[j]);
    }
  }
  auto widen = [&](const Basis &b) {
    Basis w(outs.size(), 0);
    std::copy(b.begin(), b.end(), w.begin());
    return w;
  };
  auto moved = [&](const Basis &b) {
    Basis w(outs.size(), 0);
    for (size_t j = 0; j < b.size(); ++j)
      w[where[j]] = b[j] * shift[j];
    return w;
  };
  std::vector<InDim> ins;
  for (const InDim &d : ins_) {
    InDim n{d.name, {}};
    for (const Basis &b : d.bases)
      n.bases.push_back(widen(b));
    int k = other.inIndex(d.name);
    if (k >= 0)
      for (const Basis &b : other.ins_[k].bases)
        n.bases.push_back(moved(b));
    ins.push_back(std::move(n));
  }
  for (const InDim &d : other.ins_) {
    if (inIndex(d.name) >= 0)
      continue;
    InDim n{d.name, {}};
    for (const Basis &b : d.bases)
      n.bases.push_back(moved(b));
    ins.push_back(std::move(n));
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

std::vector<uint64_t> LinearLayout::flatColumns() const {
  std::vector<int> outShift(outs_.size());
  int s = 0;
  for (size_t i = 0; i < outs_.size(); ++i) {
    outShift[i] = s;
    s += log2Exact(outs_[i].size);
  }
  std::vector<uint64_t> cols;
  for (const InDim &d : ins_)
    for (const Basis &b : d.bases) {
      uint64_t c = 0;
      for (size_t i = 0; i < b.size(); ++i)
        c |= uint64_t(b[i]) << outShift[i];
      cols.push_back(c);
    }
  return cols;
}

LinearLayout LinearLayout::fromFlatColumns(const std::vector<InDim> &inShape,
                                           const std::vector<OutDim> &outs,
                                           const std::vector<uint64_t> &cols) {
  std::vector<InDim> ins;
  size_t k = 0;
  for (const InDim &d : inShape) {
    InDim n{d.name, {}};
    for (size_t b = 0; b < d.bases.size(); ++b, ++k) {
      uint64_t c = cols[k];
      Basis basis(outs.size());
      for (size_t i = 0; i < outs.size(); ++i) {
        int bits = log2Exact(outs[i].size);
        basis[i] = int32_t(c & ((uint64_t(1) << bits) - 1));
        c >>= bits;
      }
      n.bases.push_back(std::move(basis));
    }
    ins.push_back(std::move(n));
  }
  return LinearLayout(std::move(ins), outs);
}

std::vector<int32_t> LinearLayout::apply(
    const std::vector<std::pair<std::string, int32_t>> &in) const {
  std::vector<int32_t> out(outs_.size(), 0);
  for (const auto &[name, value] : in) {
    int i = inIndex(name);
    if (i < 0) {
      if (value != 0)
        bad("no input dimension '" + name + "'");
      continue;
    }
    const InDim &d = ins_[i];
    if (value < 0 || (d.bases.size() < 31 && value >= (1 << d.bases.size())))
      bad("input " + std::to_string(value) + " outside '" + name + "'");
    for (size_t b = 0; b < d.bases.size(); ++b)
      if (value >> b & 1)
        for (size_t o = 0; o < out.size(); ++o)
          out[o] ^= d.bases[b][o];
  }
  return out;
}

int64_t LinearLayout::applyFlat(int64_t in) const {
  std::vector<uint64_t> cols = flatColumns();
  uint64_t r = 0;
  for (size_t b = 0; b < cols.size(); ++b)
    if (uint64_t(in) >> b & 1)
      r ^= cols[b];
  return int64_t(r);
}

bool LinearLayout::isSurjective() const {
  Solver s;
  int rank = 0;
  std::vector<uint64_t> cols = flatColumns();
  for (size_t b = 0; b < cols.size(); ++b)
    rank += s.add(cols[b], int(b));
  return rank == totalOutBits();
}

bool LinearLayout::isInjective() const {
  Solver s;
  std::vector<uint64_t> cols = flatColumns();
  for (size_t b = 0; b < cols.size(); ++b)
    if (!s.add(cols[b], int(b)))
      return false;
  return true;
}

LinearLayout LinearLayout::compose(const LinearLayout &outer) const {
  if (outer.ins_.size() != outs_.size())
    bad("compose: the outer layout's inputs are not this layout's outputs");
  // Where each of this layout's output bits lands among outer's input bits.
  std::vector<uint64_t> outerCols = outer.flatColumns();
  std::vector<int> outerStart(outer.ins_.size());
  int s = 0;
  for (size_t i = 0; i < outer.ins_.size(); ++i) {
    outerStart[i] = s;
    s += int(outer.ins_[i].bases.size());
  }
  std::vector<uint64_t> image; // image of each of this layout's output bits
  for (const OutDim &o : outs_) {
    int k = outer.inIndex(o.name);
    if (k < 0 || outer.inSize(o.name) != o.size)
      bad("compose: output '" + o.name + "' of size " + std::to_string(o.size) +
          " is not an input of the outer layout of the same size");
    for (int b = 0; b < log2Exact(o.size); ++b)
      image.push_back(outerCols[outerStart[k] + b]);
  }
  std::vector<uint64_t> cols;
  for (uint64_t c : flatColumns()) {
    uint64_t r = 0;
    for (size_t b = 0; b < image.size(); ++b)
      if (c >> b & 1)
        r ^= image[b];
    cols.push_back(r);
  }
  return fromFlatColumns(ins_, outer.outs_, cols);
}

LinearLayout LinearLayout::pseudoinvert() const {
  Solver s;
  std::vector<uint64_t> cols = flatColumns();
  for (size_t b = 0; b < cols.size(); ++b)
    s.add(cols[b], int(b));
  std::vector<uint64_t> inv;
  for (int b = 0; b < totalOutBits(); ++b) {
    std::optional<uint64_t> x = s.solve(uint64_t(1) << b);
    if (!x)
      bad("pseudoinvert: the layout is not surjective\n" + str());
    inv.push_back(*x);
  }
  // The inverse's inputs are this layout's outputs and the other way round.
  std::vector<InDim> invIns;
  for (const OutDim &o : outs_)
    invIns.push_back({o.name, std::vector<Basis>(log2Exact(o.size))});
  std::vector<OutDim> invOuts;
  for (const InDim &d : ins_)
    invOuts.push_back({d.name, int32_t(1) << d.bases.size()});
  return fromFlatColumns(invIns, invOuts, inv);
}

LinearLayout LinearLayout::invert() const {
  if (!isInvertible())
    bad("invert: the layout is not a bijection\n" + str());
  return pseudoinvert();
}

LinearLayout LinearLayout::invertAndCompose(const LinearLayout &other) const {
  LinearLayout inv = other.pseudoinvert();
  // Match this layout's output order to the inverse's input order.
  std::vector<std::string> order;
  for (const InDim &d : inv.ins_)
    order.push_back(d.name);
  return transposeOuts(order).compose(inv);
}

LinearLayout
LinearLayout::transposeOuts(const std::vector<std::string> &order) const {
  if (order.size() != outs_.size())
    bad("transposeOuts: not a permutation of the outputs");
  std::vector<int> from;
  std::vector<OutDim> outs;
  for (const std::string &n : order) {
    int i = outIndex(n);
    if (i < 0 || std::find(from.begin(), from.end(), i) != from.end())
      bad("transposeOuts: not a permutation of the outputs");
    from.push_back(i);
    outs.push_back(outs_[i]);
  }
  std::vector<InDim> ins = ins_;
  for (InDim &d : ins)
    for (Basis &b : d.bases) {
      Basis n;
      for (int i : from)
        n.push_back(b[i]);
      b = std::move(n);
    }
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout
LinearLayout::sublayout(const std::vector<std::string> &inNames) const {
  std::vector<InDim> ins;
  for (const InDim &d : ins_)
    if (std::find(inNames.begin(), inNames.end(), d.name) != inNames.end())
      ins.push_back(d);
  return LinearLayout(std::move(ins), outs_);
}

LinearLayout LinearLayout::dropOut(const std::string &name) const {
  int k = outIndex(name);
  if (k < 0)
    bad("dropOut: no output '" + name + "'");
  std::vector<OutDim> outs = outs_;
  outs.erase(outs.begin() + k);
  std::vector<InDim> ins = ins_;
  for (InDim &d : ins)
    for (Basis &b : d.bases)
      b.erase(b.begin() + k);
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout LinearLayout::flattenOuts(const std::string &name) const {
  return fromFlatColumns(ins_, {{name, int32_t(totalOutSize())}},
                         flatColumns());
}

LinearLayout LinearLayout::reshapeOuts(const std::vector<OutDim> &dims) const {
  int64_t total = 1;
  for (const OutDim &d : dims)
    total *= d.size;
  if (outs_.size() != 1 || total != totalOutSize())
    bad("reshapeOuts: needs one output dimension of the same total size");
  return fromFlatColumns(ins_, dims, flatColumns());
}

int32_t LinearLayout::contiguousRun(const std::string &in,
                                    const std::string &out) const {
  int i = inIndex(in), o = outIndex(out);
  if (i < 0 || o < 0)
    return 1;
  int32_t run = 1;
  for (size_t b = 0; b < ins_[i].bases.size(); ++b) {
    const Basis &basis = ins_[i].bases[b];
    for (size_t k = 0; k < basis.size(); ++k)
      if (basis[k] != (int(k) == o ? (int32_t(1) << b) : 0))
        return run;
    run <<= 1;
  }
  return run;
}

uint32_t LinearLayout::freeBits(const std::string &in) const {
  int i = inIndex(in);
  uint32_t m = 0;
  if (i < 0)
    return 0;
  for (size_t b = 0; b < ins_[i].bases.size(); ++b)
    if (std::all_of(ins_[i].bases[b].begin(), ins_[i].bases[b].end(),
                    [](int32_t v) { return v == 0; }))
      m |= 1u << b;
  return m;
}

bool LinearLayout::operator==(const LinearLayout &o) const {
  if (outs_.size() != o.outs_.size())
    return false;
  for (size_t i = 0; i < outs_.size(); ++i)
    if (outs_[i].name != o.outs_[i].name || outs_[i].size != o.outs_[i].size)
      return false;
  // The same map: every input dimension of either has the same bases in the
  // other (an absent dimension is one of size 1, with no bases), in order.
  std::vector<std::string> names, otherNames;
  for (const InDim &d : ins_)
    if (!d.bases.empty())
      names.push_back(d.name);
  for (const InDim &d : o.ins_)
    if (!d.bases.empty())
      otherNames.push_back(d.name);
  if (names != otherNames)
    return false;
  for (const std::string &n : names)
    if (ins_[inIndex(n)].bases != o.ins_[o.inIndex(n)].bases)
      return false;
  return true;
}

std::string LinearLayout::str() const {
  std::ostringstream os;
  for (const InDim &d : ins_) {
    os << d.name << ":";
    for (const Basis &b : d.bases) {
      os << " (";
      for (size_t i = 0; i < b.size(); ++i)
        os << (i ? "," : "") << b[i];
      os << ")";
    }
    os << "\n";
  }
  os << "->";
  for (const OutDim &o : outs_)
    os << " " << o.name << "[" << o.size << "]";
  return os.str();
}

//===----------------------------------------------------------------------===//
// Layout kinds
//===----------------------------------------------------------------------===//

namespace {

/// A layout whose output dims are dim0..dim{r-1} (in any order), possibly
/// larger than `shape`, restricted to `shape`: coordinates wrap (bits at or
/// above the shape's size become 0, i.e. broadcast), then the outputs are put
/// in dim0..dim{r-1} order. Dimensions missing from `layout` get size 1.
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

/// Repeats `layout` in registers (dims in `order`) until it covers `shape`.
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

void checkRank(const std::vector<int32_t> &v, size_t rank, const char *what) {
  if (v.size() != rank)
    bad(std::string(what) + " has " + std::to_string(v.size()) +
        " entries for rank " + std::to_string(rank));
  for (int32_t x : v)
    if (!isPow2(x))
      bad(std::string(what) + " entry " + std::to_string(x) +
          " is not a power of two");
}

} // namespace

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

LinearLayout mmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                  const std::vector<int32_t> &warpsPerCTA) {
  checkRank(shape, 2, "shape");
  checkRank(warpsPerCTA, 2, "warpsPerCTA");
  // One warp's 16x8 tile (PTX ISA, "Matrix Fragments for mma.m16n8k16",
  // accumulator D): c0,c1 are row groupID, columns 2*threadID_in_group + {0,1};
  // c2,c3 the same 8 rows below.
  std::string m = dimName(0), n = dimName(1);
  LinearLayout tile(
      {{kRegister, {{0, 1}, {8, 0}}},
       {kLane, {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}}},
      {{m, 16}, {n, 8}});
  LinearLayout warps =
      LinearLayout::identity1D(warpsPerCTA[1], kWarp, n) *
      LinearLayout::identity1D(warpsPerCTA[0], kWarp, m);
  LinearLayout layout = (tile * warps).transposeOuts({m, n});
  return fitToShape(repeatToShape(layout, shape, {1, 0}), shape);
}

std::optional<std::vector<int32_t>>
mmaAccumulatorWarps(const LinearLayout &layout,
                    const std::vector<int32_t> &shape) {
  if (shape.size() != 2 || shape[0] % 16 || shape[1] % 8)
    return std::nullopt;
  int32_t warps = layout.inSize(kWarp);
  for (int32_t wm = 1; wm <= warps; wm *= 2)
    if (layout == mmaAccumulatorLayout(shape, {wm, warps / wm}))
      return std::vector<int32_t>{wm, warps / wm};
  return std::nullopt;
}

LinearLayout mmaOperandLayout(unsigned operand, const std::vector<int32_t> &shape,
                              const std::vector<int32_t> &warpsPerCTA,
                              int32_t elementBits) {
  checkRank(shape, 2, "shape");
  checkRank(warpsPerCTA, 2, "warpsPerCTA");
  if (operand > 1)
    bad("an mma operand is 0 (A) or 1 (B)");
  if (elementBits != 8 && elementBits != 16 && elementBits != 32)
    bad("mma.sync operands have 8-, 16- or 32-bit elements, not " +
        std::to_string(elementBits));
  int32_t perRegister = 32 / elementBits, instrK = 8 * perRegister;
  int32_t k = shape[operand == 0 ? 1 : 0];
  if (k % instrK)
    bad("K = " + std::to_string(k) + " is not a multiple of the mma.sync K (" +
        std::to_string(instrK) + ") for " + std::to_string(elementBits) +
        "-bit elements");
  // One instruction's fragment, as (mn, k) with mn A's row or B's column: a
  // register's elements are consecutive along K; then, for A, the same
  // columns 8 rows below; then the second half of K. threadID_in_group
  // (lane bits 0-1) picks a register's worth of K, groupID (bits 2-4) the
  // row or column.
  std::vector<std::pair<int32_t, int32_t>> regs, lanes;
  for (int32_t e = 1; e < perRegister; e *= 2)
    regs.push_back({0, e});
  if (operand == 0)
    regs.push_back({8, 0});
  regs.push_back({0, 4 * perRegister});
  lanes = {{0, perRegister}, {0, 2 * perRegister}, {1, 0}, {2, 0}, {4, 0}};
  auto bases = [&](const std::vector<std::pair<int32_t, int32_t>> &mnk) {
    std::vector<LinearLayout::Basis> out;
    for (auto [mn, kk] : mnk)
      out.push_back(operand == 0 ? LinearLayout::Basis{mn, kk}
                                 : LinearLayout::Basis{kk, mn});
    return out;
  };
  std::string d0 = dimName(0), d1 = dimName(1);
  int32_t tileMN = operand == 0 ? 16 : 8;
  LinearLayout tile({{kRegister, bases(regs)}, {kLane, bases(lanes)}},
                    operand == 0 ? std::vector<LinearLayout::OutDim>{{d0, tileMN}, {d1, instrK}}
                                 : std::vector<LinearLayout::OutDim>{{d0, instrK}, {d1, tileMN}});
  // The accumulator's warp bits: N first, then M. The operand follows its own
  // dimension and repeats along the other.
  LinearLayout warps =
      operand == 0
          ? LinearLayout::zeros1D(warpsPerCTA[1], kWarp, d0) *
                LinearLayout::identity1D(warpsPerCTA[0], kWarp, d0)
          : LinearLayout::identity1D(warpsPerCTA[1], kWarp, d1) *
                LinearLayout::zeros1D(warpsPerCTA[0], kWarp, d1);
  LinearLayout layout = (tile * warps).transposeOuts({d0, d1});
  std::vector<unsigned> kFirst =
      operand == 0 ? std::vector<unsigned>{1, 0} : std::vector<unsigned>{0, 1};
  return fitToShape(repeatToShape(layout, shape, kFirst), shape);
}

int32_t wgmmaInstrN(const std::vector<int32_t> &shape,
                    const std::vector<int32_t> &warpsPerCTA) {
  checkRank(shape, 2, "shape");
  checkRank(warpsPerCTA, 2, "warpsPerCTA");
  return std::min(256, shape[1] / warpsPerCTA[1]);
}

LinearLayout wgmmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                    const std::vector<int32_t> &warpsPerCTA) {
  int32_t instrN = wgmmaInstrN(shape, warpsPerCTA);
  if (warpsPerCTA[0] % 4)
    bad("wgmma needs whole warpgroups along M (warps a multiple of 4)");
  if (instrN < 8 || shape[0] < 16 * warpsPerCTA[0])
    bad("the block is smaller than its warpgroups' wgmma tiles");
  std::string m = dimName(0), n = dimName(1);
  // One warp's 16 rows of the instruction (PTX ISA, wgmma .m64nNk16
  // accumulator D): d0,d1 at row groupID, columns 2*threadID_in_group +
  // {0,1}; d2,d3 the same 8 rows below; d4.. the next 8 columns, and so on
  // for N/8 column groups.
  LinearLayout fragment(
      {{kRegister, {{0, 1}, {8, 0}}},
       {kLane, {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}}},
      {{m, 16}, {n, 8}});
  LinearLayout tile =
      fragment * LinearLayout::identity1D(instrN / 8, kRegister, n);
  // Warps along M first: warp 4g+w of warpgroup g owns its rows 16w..16w+15.
  LinearLayout warps =
      LinearLayout::identity1D(warpsPerCTA[0], kWarp, m) *
      LinearLayout::identity1D(warpsPerCTA[1], kWarp, n);
  LinearLayout layout = (tile * warps).transposeOuts({m, n});
  return fitToShape(repeatToShape(layout, shape, {1, 0}), shape);
}

int32_t wgmmaSwizzleBytes(int32_t k, int32_t elementBytes) {
  int32_t rowBytes = k * elementBytes;
  if (rowBytes < 32)
    return 0;
  return std::min(128, rowBytes);
}

LinearLayout wgmmaOperandLayout(int32_t rows, int32_t k, int32_t elementBytes,
                                int32_t swizzleBytes) {
  if (swizzleBytes != 32 && swizzleBytes != 64 && swizzleBytes != 128)
    bad("wgmma swizzles span 32, 64 or 128 bytes");
  if (!isPow2(elementBytes) || elementBytes > 16)
    bad("element size must be a power of two up to 16 bytes");
  int32_t atomK = swizzleBytes / elementBytes;
  if (k % atomK || rows % 8)
    bad("a wgmma operand is whole swizzle atoms: rows a multiple of 8, K of " +
        std::to_string(atomK));
  // A row's 16-byte chunks XOR with address bits 7.. : for a span of S bytes
  // that is row / (128 / S), over S / 16 chunks.
  LinearLayout atom = swizzledSharedLayout(rows, atomK, 16 / elementBytes,
                                           128 / swizzleBytes, swizzleBytes / 16);
  return atom * LinearLayout::identity1D(k / atomK, kOffset, dimName(1));
}

LinearLayout wgmmaMNMajorOperandLayout(int32_t k, int32_t mn,
                                       int32_t elementBytes,
                                       int32_t swizzleBytes) {
  if (swizzleBytes != 32 && swizzleBytes != 64 && swizzleBytes != 128)
    bad("wgmma swizzles span 32, 64 or 128 bytes");
  if (!isPow2(elementBytes) || elementBytes > 16)
    bad("element size must be a power of two up to 16 bytes");
  int32_t atomMN = swizzleBytes / elementBytes;
  if (mn % atomMN || k % 8)
    bad("an MN-major wgmma operand is whole swizzle atoms: K a multiple of "
        "8, MN of " + std::to_string(atomMN));
  // The same swizzle as K-major with the roles of the two dimensions
  // swapped: a row of the atom is one k, its chunks hold consecutive mn.
  // Every row of K of one atom column, then the next column (a box of the
  // copy engine each).
  LinearLayout atom = swizzledSharedLayout(8, atomMN, 16 / elementBytes,
                                           128 / swizzleBytes, swizzleBytes / 16);
  return atom * LinearLayout::identity1D(k / 8, kOffset, dimName(0)) *
         LinearLayout::identity1D(mn / atomMN, kOffset, dimName(1));
}

LinearLayout gatherOperandLayout(int32_t k, int32_t columns,
                                 int32_t elementBytes, int32_t windowBytes) {
  if (elementBytes != 1 && elementBytes != 4)
    bad("gather layouts hold 8-bit or 32-bit elements");
  int32_t perWord = 4 / elementBytes;
  if (!isPow2(k) || !isPow2(columns) || k < 4 * perWord ||
      windowBytes != std::min(128, columns * elementBytes) || windowBytes < 32)
    bad("a gather layout is whole row windows of at least 32 bytes");
  // A warp's read reaches rows k0 + perWord * t (t = 0..3): those rows go
  // next to each other (the two row bits of t lowest), and where rows
  // narrower than the 128 bytes of the banks leave fewer than 4 of them in
  // one window, the chunks of each next window are XORed by its index.
  int32_t chunk = std::max(16, 8 * elementBytes) / elementBytes;
  int32_t perWindow = 128 / windowBytes; // rows in one 128-byte window
  int32_t phases = std::max(1, 4 / perWindow);
  int tBit = log2Exact(perWord); // k's lowest bit of t
  auto logicalBit = [&](int r) { // stored row bit r is k's bit
    if (tBit == 0 || r >= tBit + 2)
      return r;
    return r < 2 ? r + tBit : r - 2;
  };
  std::vector<LinearLayout::Basis> bases;
  for (int32_t c = 1; c < columns; c <<= 1)
    bases.push_back({0, c});
  int phaseShift = log2Exact(perWindow);
  for (int r = 0; (int32_t(1) << r) < k; ++r) {
    int32_t colXor = 0;
    if (r >= phaseShift && (int32_t(1) << (r - phaseShift)) < phases)
      colXor = chunk << (r - phaseShift);
    bases.push_back({int32_t(1) << logicalBit(r), colXor});
  }
  return LinearLayout({{kOffset, bases}},
                      {{dimName(0), k}, {dimName(1), columns}});
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
  spt[axis] = shape[axis];
  // Fastest first: the other dimensions from the last, then the axis, which
  // takes the threads left over (copies: its elements are all in registers).
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
