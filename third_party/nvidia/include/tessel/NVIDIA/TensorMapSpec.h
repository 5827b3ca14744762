//===- TensorMapSpec.h - The tensor maps a kernel takes ---------*- C++ -*-===//
//
// A kernel whose descriptor loads run on TMA (tilegpu-tensor-maps) takes,
// after its runtime arguments, one 128-byte tensor map per host-made
// descriptor. The compiler records what each describes (which descriptor,
// the element type, the box, the fill); a launcher encodes it from the
// descriptor's runtime arguments (base, shape, strides) in its own way: the
// CUDA driver's cuTensorMapEncodeTiled, or the simulator's encoding.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NVIDIA_TENSORMAPSPEC_H
#define TESSEL_NVIDIA_TENSORMAPSPEC_H

#include "tessel/Runtime/LaunchArgs.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::nvidia {

/// The element types of tensor maps (the tile element types they hold).
enum class TensorMapElement { U8, U16, S32, S64, F16, BF16, F32, F64 };

struct TensorMapSpec {
  /// The descriptor's first runtime argument: its base, then its rank sizes
  /// and rank - 1 strides (elements; the last stride is 1).
  unsigned arg = 0;
  TensorMapElement element = TensorMapElement::U8;
  /// Out-of-bounds elements read NaN instead of zero.
  bool nan = false;
  /// The block one copy moves, outermost dimension first.
  std::vector<int64_t> box;
  /// The bytes of the swizzle the box lands in shared memory with: 0 (none,
  /// row-major), 32, 64 or 128.
  int32_t swizzle = 0;

  unsigned elementBytes() const;
  /// The launch stage's line ("tensor_map=3 f16 0 64x32 0") and back.
  std::string str() const;
  static std::optional<TensorMapSpec> parse(llvm::StringRef line);
};

/// The swizzle mode of CUtensorMapSwizzle (and of the simulator's maps) of
/// a swizzle of `bytes`: 0 none, 1 32B, 2 64B, 3 128B.
unsigned swizzleMode(int32_t bytes);

/// What a tensor map describes at a launch, innermost dimension first: the
/// base address, the sizes (elements), the strides of dimensions 1.. (bytes),
/// the box.
struct TensorMapView {
  uint64_t address = 0;
  std::vector<uint64_t> dims, strides;
  std::vector<uint32_t> box;
};

/// The view of `spec` from the launch's runtime arguments; an error names
/// the argument when they do not fit a tensor map.
llvm::Expected<TensorMapView>
tensorMapView(const TensorMapSpec &spec,
              llvm::ArrayRef<runtime::LaunchArg> args);

} // namespace tessel::nvidia

#endif // TESSEL_NVIDIA_TENSORMAPSPEC_H
