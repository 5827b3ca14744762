//===- TensorMapSpecTest.cpp - Tensor maps of NVIDIA kernels --------------===//
#include "tessel/NVIDIA/TensorMapSpec.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::nvidia;
using runtime::LaunchArg;

namespace {

TEST(TensorMapSpec, LaunchStageLinesRoundTrip) {
  TensorMapSpec spec;
  spec.arg = 4;
  spec.element = TensorMapElement::BF16;
  spec.nan = true;
  spec.box = {2, 64, 32};
  spec.swizzle = 64;
  EXPECT_EQ(spec.str(), "tensor_map=4 bf16 1 2x64x32 64");
  auto back = TensorMapSpec::parse(spec.str());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->arg, 4u);
  EXPECT_EQ(back->element, TensorMapElement::BF16);
  EXPECT_TRUE(back->nan);
  EXPECT_EQ(back->box, (std::vector<int64_t>{2, 64, 32}));
  EXPECT_EQ(back->elementBytes(), 2u);
  EXPECT_EQ(back->swizzle, 64);
  // CUtensorMapSwizzle's modes.
  EXPECT_EQ(swizzleMode(0), 0u);
  EXPECT_EQ(swizzleMode(32), 1u);
  EXPECT_EQ(swizzleMode(64), 2u);
  EXPECT_EQ(swizzleMode(128), 3u);
  for (const char *bad :
       {"num_warps=4", "tensor_map=1 f17 0 8 0", "tensor_map=1 f16 2 8 0",
        "tensor_map=1 f16 0 512 0", "tensor_map=1 f16 0 1x1x1x1x1x1 0",
        "tensor_map=x f16 0 8 0", "tensor_map=1 f16 0 8",
        "tensor_map=1 f16 0 8 48", "tensor_map=1 f16 0 8 256"})
    EXPECT_FALSE(TensorMapSpec::parse(bad)) << bad;
}

/// A descriptor's runtime arguments: base, sizes, strides but the last.
std::vector<LaunchArg> descriptorArgs(uint64_t base, std::vector<int64_t> shape,
                                      std::vector<int64_t> strides) {
  std::vector<LaunchArg> args{LaunchArg::integer(7)}; // another argument first
  args.push_back(LaunchArg::pointer("fp16", base));
  args.back().name = "A";
  for (int64_t s : shape)
    args.push_back(LaunchArg::integer(s));
  for (int64_t s : strides)
    args.push_back(LaunchArg::integer(s));
  return args;
}

TEST(TensorMapSpec, ViewIsInnermostFirstWithByteStrides) {
  TensorMapSpec spec;
  spec.arg = 1;
  spec.element = TensorMapElement::F16;
  spec.box = {2, 16, 64};
  auto args = descriptorArgs(0x10000, {3, 40, 100}, {4160, 104});
  auto view = tensorMapView(spec, args);
  ASSERT_TRUE(bool(view)) << llvm::toString(view.takeError());
  EXPECT_EQ(view->address, 0x10000u);
  EXPECT_EQ(view->dims, (std::vector<uint64_t>{100, 40, 3}));
  EXPECT_EQ(view->strides, (std::vector<uint64_t>{208, 8320}));
  EXPECT_EQ(view->box, (std::vector<uint32_t>{64, 16, 2}));
}

TEST(TensorMapSpec, ViewRefusesWhatTheCopyEngineCannotRead) {
  TensorMapSpec spec;
  spec.arg = 1;
  spec.element = TensorMapElement::F16;
  spec.box = {16, 64};
  auto message = [&](std::vector<LaunchArg> args) {
    auto view = tensorMapView(spec, args);
    return view ? std::string() : llvm::toString(view.takeError());
  };
  EXPECT_EQ(message(descriptorArgs(0x10000, {4, 8}, {-64})),
            "tensor descriptor 'A': the copy engine needs strides[0] in (0, "
            "2^40) bytes, a multiple of 16, got -64 elements");
  EXPECT_EQ(message(descriptorArgs(0x10008, {4, 8}, {64})),
            "tensor descriptor 'A': the copy engine needs a 16-byte aligned base");
  EXPECT_EQ(message(descriptorArgs(0x10000, {4, 8}, {})),
            "a tensor map's descriptor is missing from the arguments");
}

} // namespace
