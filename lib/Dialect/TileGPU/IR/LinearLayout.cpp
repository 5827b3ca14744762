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

#include "LayoutSupport.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <stdexcept>

namespace tessel::gpu {

namespace {

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

} // namespace tessel::gpu
