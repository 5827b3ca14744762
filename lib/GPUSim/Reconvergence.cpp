//===- Reconvergence.cpp - Immediate post-dominators of branches ----------===//
//
// Basic blocks start at instruction 0, at every branch target and after every
// branch, ret and exit. Post-dominator sets are computed by the iterative
// dataflow over bit sets with a virtual exit block; the immediate
// post-dominator of a block is its strict post-dominator with the largest
// set (the closest one).
//
//===----------------------------------------------------------------------===//
#include "Reconvergence.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessel::gpusim {

void computeReconvergence(Kernel &k) {
  const size_t n = k.insts.size();
  if (n == 0)
    return;
  std::vector<char> leader(n + 1, 0);
  leader[0] = 1;
  for (size_t i = 0; i < n; ++i) {
    const Inst &in = k.insts[i];
    if (in.op == Op::Bra) {
      leader[in.target] = 1;
      leader[i + 1] = 1;
    } else if (in.op == Op::Ret || in.op == Op::Exit) {
      leader[i + 1] = 1;
    }
  }
  std::vector<uint32_t> blockOf(n), start;
  for (size_t i = 0; i < n; ++i) {
    if (leader[i])
      start.push_back(uint32_t(i));
    blockOf[i] = uint32_t(start.size() - 1);
  }
  const size_t nb = start.size();
  const size_t exitB = nb; // virtual exit
  std::vector<std::vector<uint32_t>> succ(nb);
  for (size_t b = 0; b < nb; ++b) {
    size_t last = (b + 1 < nb ? start[b + 1] : n) - 1;
    const Inst &in = k.insts[last];
    auto fall = [&] {
      succ[b].push_back(last + 1 < n ? blockOf[last + 1] : uint32_t(exitB));
    };
    if (in.op == Op::Bra) {
      succ[b].push_back(blockOf[in.target]);
      if (in.hasGuard)
        fall();
    } else if (in.op == Op::Ret || in.op == Op::Exit) {
      succ[b].push_back(uint32_t(exitB));
      if (in.hasGuard)
        fall();
    } else {
      fall();
    }
  }
  const size_t words = (nb + 1 + 63) / 64;
  std::vector<uint64_t> pdom((nb + 1) * words, ~0ull);
  auto set = [&](size_t b) { return &pdom[b * words]; };
  std::fill(set(exitB), set(exitB) + words, 0);
  set(exitB)[exitB / 64] |= 1ull << (exitB % 64);
  bool changed = true;
  std::vector<uint64_t> tmp(words);
  while (changed) {
    changed = false;
    for (size_t bb = nb; bb-- > 0;) {
      std::fill(tmp.begin(), tmp.end(), ~0ull);
      for (uint32_t s : succ[bb])
        for (size_t w = 0; w < words; ++w)
          tmp[w] &= set(s)[w];
      tmp[bb / 64] |= 1ull << (bb % 64);
      if (!std::equal(tmp.begin(), tmp.end(), set(bb))) {
        std::copy(tmp.begin(), tmp.end(), set(bb));
        changed = true;
      }
    }
  }
  auto count = [&](size_t b) {
    size_t c = 0;
    for (size_t w = 0; w < words; ++w)
      c += __builtin_popcountll(set(b)[w]);
    return c;
  };
  for (size_t i = 0; i < n; ++i) {
    Inst &in = k.insts[i];
    if (in.op != Op::Bra)
      continue;
    size_t b = blockOf[i];
    size_t best = exitB, bestCount = 0;
    for (size_t d = 0; d <= nb; ++d) {
      if (d == b || !(set(b)[d / 64] >> (d % 64) & 1))
        continue;
      size_t c = count(d);
      if (c > bestCount) {
        best = d;
        bestCount = c;
      }
    }
    in.reconverge = best == exitB ? uint32_t(n) : start[best];
  }
}

} // namespace tessel::gpusim
