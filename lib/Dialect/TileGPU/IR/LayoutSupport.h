//===- LayoutSupport.h - What the layout builders share ---------*- C++ -*-===//
//
// Checks and shape fitting used by the LinearLayout algebra and by the
// builders of each target's layouts (Layouts.cpp, NvidiaLayouts.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_DIALECT_TILEGPU_IR_LAYOUTSUPPORT_H
#define TESSEL_LIB_DIALECT_TILEGPU_IR_LAYOUTSUPPORT_H

#include "tessel/Dialect/TileGPU/IR/LinearLayout.h"

#include <functional>
#include <optional>

#include <stdexcept>
#include <string>

namespace tessel::gpu {

inline bool isPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

inline int log2Exact(int64_t v) {
  int l = 0;
  while ((int64_t(1) << l) < v)
    ++l;
  return l;
}

[[noreturn]] inline void bad(const std::string &why) {
  throw std::invalid_argument("LinearLayout: " + why);
}

/// A layout whose output dims are dim0..dim{r-1} (in any order), possibly
/// larger than `shape`, restricted to `shape`: coordinates wrap (bits at or
/// above the shape's size become 0, i.e. broadcast), then the outputs are put
/// in dim0..dim{r-1} order. Dimensions missing from `layout` get size 1.
LinearLayout fitToShape(const LinearLayout &layout,
                        const std::vector<int32_t> &shape);
/// Repeats `layout` in registers (dims in `order`) until it covers `shape`.
LinearLayout repeatToShape(LinearLayout layout,
                           const std::vector<int32_t> &shape,
                           const std::vector<unsigned> &order);
/// The split [M, N] of `layout`'s warps for which `build` gives `layout`
/// (an accumulator layout of some matrix unit), if there is one.
std::optional<std::vector<int32_t>> warpSplitOf(
    const LinearLayout &layout,
    const std::function<LinearLayout(const std::vector<int32_t> &)> &build);
/// Throws unless `v` has `rank` entries, each a power of two.
void checkRank(const std::vector<int32_t> &v, size_t rank, const char *what);

} // namespace tessel::gpu

#endif // TESSEL_LIB_DIALECT_TILEGPU_IR_LAYOUTSUPPORT_H
