//===- TensorMap.h - The simulator's 128-byte tensor map ---------*- C++ -*-===//
//
// A CUtensorMap is opaque: the driver builds it (cuTensorMapEncodeTiled) and
// only the TMA unit reads it. The simulator has its own encoding of the same
// fields; tessel.gpusim.TensorMap (Python) writes it for host-side
// descriptors and tensormap.replace writes it for device-side ones (Triton's
// tl.make_tensor_descriptor fills a zeroed 128-byte object in shared memory
// field by field). cp.async.bulk.tensor reads it. Little-endian layout:
//
//   offset  size  field
//        0     8  global address (must lie in a simulated allocation)
//        8     4  magic 0x4d545354 ("TSTM"): written by every writer
//       12     1  rank, 1..5
//       13     1  element type, PTX tensormap.replace .elemtype numbering:
//                 0 u8, 1 u16, 2 u32, 3 s32, 4 u64, 5 s64, 6 f16, 7 f32,
//                 8 f32.ftz, 9 f64, 10 bf16, 11 tf32, 12 tf32.ftz
//       14     1  interleave layout (only 0, none, is simulated)
//       15     1  swizzle mode: 0 none, 1 32B, 2 64B, 3 128B
//       16     1  fill mode: 0 zeros, 1 NaN (floating-point OOB requests)
//       20  4x5   global dimensions, innermost first (elements)
//       40  8x4   global strides of dimensions 1..4 (bytes; dimension 0 is
//                 contiguous)
//       72  4x5   box dimensions, innermost first (elements)
//       92  4x5   element (traversal) strides, innermost first
//      112    16  zero
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_GPUSIM_TENSORMAP_H
#define TESSEL_GPUSIM_TENSORMAP_H

#include <cstdint>
#include <vector>

namespace tessel::gpusim {

constexpr uint32_t kTensorMapBytes = 128;
constexpr uint32_t kTensorMapMagic = 0x4d545354;

namespace tensormap {
constexpr unsigned Address = 0, Magic = 8, Rank = 12, ElemType = 13,
                   Interleave = 14, Swizzle = 15, Fill = 16, GlobalDim = 20,
                   GlobalStride = 40, BoxDim = 72, ElementStride = 92;
/// Bytes of an element of a .elemtype code; 0 for unknown codes.
inline unsigned elementBytes(unsigned code) {
  static const unsigned bytes[13] = {1, 2, 4, 4, 8, 8, 2, 4, 4, 8, 2, 4, 4};
  return code < 13 ? bytes[code] : 0;
}
} // namespace tensormap

/// The simulator's 128-byte encoding of a tiled tensor map (no interleave):
/// `elemType` in tensormap.replace's numbering, `swizzle` 0 (none) to 3
/// (128B); dimensions innermost first, `strides` those of dimensions 1.. in
/// bytes, `elementStrides` 1 where empty.
void encodeTensorMap(uint8_t out[kTensorMapBytes], uint64_t address,
                     unsigned elemType, unsigned swizzle, bool nanFill,
                     const std::vector<uint64_t> &dims,
                     const std::vector<uint64_t> &strides,
                     const std::vector<uint32_t> &box,
                     const std::vector<uint32_t> &elementStrides = {});

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_TENSORMAP_H
