//===- TensorMap.cpp - The simulator's tensor-map encoding ----------------===//
#include "tessel/GPUSim/TensorMap.h"

#include <cstring>

void tessel::gpusim::encodeTensorMap(uint8_t out[kTensorMapBytes],
                                     uint64_t address, unsigned elemType,
                                     unsigned swizzle, bool nanFill,
                                     const std::vector<uint64_t> &dims,
                                     const std::vector<uint64_t> &strides,
                                     const std::vector<uint32_t> &box,
                                     const std::vector<uint32_t> &elementStrides) {
  std::memset(out, 0, kTensorMapBytes);
  auto put = [&](unsigned offset, uint64_t value, unsigned bytes) {
    std::memcpy(out + offset, &value, bytes); // little-endian
  };
  put(tensormap::Address, address, 8);
  put(tensormap::Magic, kTensorMapMagic, 4);
  put(tensormap::Rank, dims.size(), 1);
  put(tensormap::ElemType, elemType, 1);
  put(tensormap::Swizzle, swizzle, 1);
  put(tensormap::Fill, nanFill ? 1 : 0, 1);
  for (size_t d = 0; d < dims.size() && d < 5; ++d) {
    put(tensormap::GlobalDim + 4 * d, dims[d], 4);
    put(tensormap::BoxDim + 4 * d, d < box.size() ? box[d] : 1, 4);
    put(tensormap::ElementStride + 4 * d,
        d < elementStrides.size() ? elementStrides[d] : 1, 4);
  }
  for (size_t d = 0; d < strides.size() && d < 4; ++d)
    put(tensormap::GlobalStride + 8 * d, strides[d], 8);
}
