//===- LaunchArgsTest.cpp - Specialization, aliasing, checks, packing ------===//
#include "tessel/Runtime/LaunchArgs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace tessel::runtime;

namespace {

/// The error's message, or "" for success.
std::string message(llvm::Error err) {
  return err ? llvm::toString(std::move(err)) : "";
}

LaunchArg array(uint64_t address, uint64_t lo, uint64_t hi) {
  LaunchArg a = LaunchArg::pointer("fp32", address);
  a.lo = lo;
  a.hi = hi;
  a.extentKnown = true;
  return a;
}

void noExtent(size_t, LaunchArg &) {}

std::vector<bool> noalias(llvm::ArrayRef<LaunchArg> args) {
  std::vector<bool> marks;
  for (const LaunchArg &a : args)
    marks.push_back(a.noalias);
  return marks;
}

TEST(LaunchArgs, Classification) {
  EXPECT_EQ(LaunchArg::boolean(true).type, "i1");
  EXPECT_EQ(LaunchArg::boolean(true).bits, 1u);
  EXPECT_EQ(LaunchArg::integer(2147483647).type, "i32");
  EXPECT_EQ(LaunchArg::integer(-2147483648LL).type, "i32");
  EXPECT_EQ(LaunchArg::integer(2147483648LL).type, "i64");
  EXPECT_EQ(LaunchArg::integer(-2147483649LL).type, "i64");
  EXPECT_EQ(LaunchArg::integer(-1).bits, 0xffffffffffffffffu);
  EXPECT_EQ(LaunchArg::floating(0.5).type, "fp32");
  EXPECT_EQ(LaunchArg::floating(0.5).real, 0.5);
  LaunchArg p = LaunchArg::pointer("fp16", 0x1000);
  EXPECT_EQ(p.type, "*fp16");
  EXPECT_TRUE(p.isPointer());
  EXPECT_EQ(p.bits, 0x1000u);
  EXPECT_FALSE(p.extentKnown);
}

TEST(LaunchArgs, IntsEqualToOneAreCompiledInUnlessDisabled) {
  LaunchArg one = LaunchArg::integer(1);
  specialize(one, /*byValue=*/true, /*byAlignment=*/true);
  EXPECT_TRUE(one.isConstOne);
  EXPECT_FALSE(one.mark16);

  LaunchArg kept = LaunchArg::integer(1);
  specialize(kept, /*byValue=*/false, /*byAlignment=*/true);
  EXPECT_FALSE(kept.isConstOne);
  EXPECT_FALSE(kept.mark16); // 1 is no multiple of 16

  // A pointer at address 1 is an address, not a value to compile in.
  LaunchArg pointer = LaunchArg::pointer("i8", 1);
  specialize(pointer, true, true);
  EXPECT_FALSE(pointer.isConstOne);
  // Nor is a bool that is true.
  LaunchArg flag = LaunchArg::boolean(true);
  specialize(flag, true, true);
  EXPECT_FALSE(flag.isConstOne);
}

TEST(LaunchArgs, MultiplesOf16AreMarked) {
  struct Case {
    LaunchArg arg;
    bool byAlignment, marked;
  };
  LaunchArg u64 = LaunchArg::integer(0);
  u64.type = "u64";
  u64.bits = 0x8000000000000000u; // 2^63
  Case cases[] = {
      {LaunchArg::integer(16), true, true},
      {LaunchArg::integer(48), true, true},
      {LaunchArg::integer(0), true, true},
      {LaunchArg::integer(-32), true, true},
      {LaunchArg::integer(24), true, false},
      {LaunchArg::integer(4294967296LL), true, true}, // i64, 2^32
      {u64, true, true},
      {LaunchArg::integer(16), false, false},
      {LaunchArg::pointer("fp32", 0x7f0000001000), true, true},
      {LaunchArg::pointer("fp32", 0x7f0000001008), true, false},
      {LaunchArg::pointer("fp32", 0x7f0000001000), false, false},
      {LaunchArg::boolean(false), true, false},
      {LaunchArg::floating(16.0), true, false},
      {LaunchArg::floating(0.0), true, false},
  };
  for (Case &c : cases) {
    specialize(c.arg, /*byValue=*/true, c.byAlignment);
    EXPECT_EQ(c.arg.mark16, c.marked) << c.arg.type << " " << c.arg.bits;
    EXPECT_FALSE(c.arg.isConstOne);
  }
  // A float type from the driver (bits 0) stays unmarked too.
  LaunchArg half = LaunchArg::floating(1.0);
  half.type = "bf16";
  specialize(half, true, true);
  EXPECT_FALSE(half.mark16);
}

TEST(LaunchArgs, ExtentOfContiguousAndStridedArrays) {
  LaunchArg a = LaunchArg::pointer("fp32", 1000);
  // 10 floats: bytes [1000, 1040).
  setExtent(a, {10}, {4}, 4);
  EXPECT_TRUE(a.extentKnown);
  EXPECT_EQ(a.lo, 1000u);
  EXPECT_EQ(a.hi, 1040u);
  // 3x4 doubles, row-major: last element at 2*32 + 3*8 = 88, ends at 96.
  setExtent(a, {3, 4}, {32, 8}, 8);
  EXPECT_EQ(a.lo, 1000u);
  EXPECT_EQ(a.hi, 1096u);
  // Every other float of 5: last at 4*8 = 32, ends at 36.
  setExtent(a, {5}, {8}, 4);
  EXPECT_EQ(a.hi, 1036u);
  // One element.
  setExtent(a, {1, 1}, {400, 4}, 4);
  EXPECT_EQ(a.lo, 1000u);
  EXPECT_EQ(a.hi, 1004u);
}

TEST(LaunchArgs, ExtentWithNegativeAndZeroStrides) {
  LaunchArg a = LaunchArg::pointer("fp32", 1000);
  // A reversed view of 10 floats starting at its last element: the first
  // element is 9*4 = 36 bytes below.
  setExtent(a, {10}, {-4}, 4);
  EXPECT_EQ(a.lo, 964u);
  EXPECT_EQ(a.hi, 1004u);
  // Rows reversed (stride -16), columns forward (stride 4), 3x4 floats:
  // rows reach 32 below, columns 12 above plus the element.
  setExtent(a, {3, 4}, {-16, 4}, 4);
  EXPECT_EQ(a.lo, 968u);
  EXPECT_EQ(a.hi, 1016u);
  // A broadcast (stride 0) over 100 rows of 4 floats spans one row.
  setExtent(a, {100, 4}, {0, 4}, 4);
  EXPECT_EQ(a.lo, 1000u);
  EXPECT_EQ(a.hi, 1016u);
}

TEST(LaunchArgs, EmptyArraysSpanNothing) {
  LaunchArg a = LaunchArg::pointer("fp32", 1000);
  setExtent(a, {4, 0, 3}, {48, 12, 4}, 4);
  EXPECT_TRUE(a.extentKnown);
  EXPECT_EQ(a.lo, a.hi);
  // And overlap nothing, not even an array around them.
  EXPECT_FALSE(overlap(a, array(900, 900, 1100)));
  EXPECT_FALSE(overlap(array(900, 900, 1100), a));
}

TEST(LaunchArgs, Overlap) {
  EXPECT_FALSE(overlap(array(0, 0, 100), array(100, 100, 200))); // touching
  EXPECT_TRUE(overlap(array(0, 0, 101), array(100, 100, 200)));
  EXPECT_TRUE(overlap(array(0, 0, 300), array(100, 100, 200))); // inside
  EXPECT_TRUE(overlap(array(100, 100, 200), array(0, 0, 300)));
  EXPECT_FALSE(overlap(array(300, 300, 400), array(0, 0, 300)));
}

TEST(LaunchArgs, DisjointArraysAreNoalias) {
  std::vector<LaunchArg> args = {array(0, 0, 100), LaunchArg::integer(7),
                                 array(100, 100, 200), array(500, 400, 504)};
  markNoalias(args, noExtent);
  EXPECT_EQ(noalias(args), (std::vector<bool>{true, false, true, true}));
}

TEST(LaunchArgs, OverlappingArraysAreNot) {
  // The third is a view into the first; the second stands apart.
  std::vector<LaunchArg> args = {array(0, 0, 100), array(200, 200, 300),
                                 array(40, 40, 60)};
  markNoalias(args, noExtent);
  EXPECT_EQ(noalias(args), (std::vector<bool>{false, true, false}));
  // The same array passed twice.
  std::vector<LaunchArg> twice = {array(0, 0, 100), array(0, 0, 100)};
  markNoalias(twice, noExtent);
  EXPECT_EQ(noalias(twice), (std::vector<bool>{false, false}));
}

TEST(LaunchArgs, ALonePointerIsNoaliasWithoutItsExtent) {
  std::vector<LaunchArg> args = {LaunchArg::integer(3),
                                 LaunchArg::pointer("fp32", 0x1000)};
  bool asked = false;
  markNoalias(args, [&](size_t, LaunchArg &) { asked = true; });
  EXPECT_FALSE(asked);
  EXPECT_EQ(noalias(args), (std::vector<bool>{false, true}));
}

TEST(LaunchArgs, UnknownExtentMakesEveryoneMayAliasButNullPointers) {
  std::vector<LaunchArg> args = {array(0, 0, 100), array(200, 200, 300),
                                 LaunchArg::pointer("fp32", 0x10000),
                                 LaunchArg::pointer("fp32", 0)};
  std::vector<size_t> asked;
  markNoalias(args, [&](size_t index, LaunchArg &) { asked.push_back(index); });
  // Asked about the two of unknown extent, neither of which it learns.
  EXPECT_EQ(asked, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(noalias(args), (std::vector<bool>{false, false, false, false}));

  // Without the unknown one, the null pointer (a dtype-only warmup array)
  // aliases nothing.
  std::vector<LaunchArg> known = {array(0, 0, 100),
                                  LaunchArg::pointer("fp32", 0)};
  markNoalias(known, noExtent);
  EXPECT_EQ(noalias(known), (std::vector<bool>{true, true}));
}

TEST(LaunchArgs, ExtentsReadOnlyWhenAsked) {
  // A tensor whose layout is read only now: 8 floats at 0x2000.
  std::vector<LaunchArg> args = {array(0x1000, 0x1000, 0x1020),
                                 LaunchArg::pointer("fp32", 0x2000)};
  markNoalias(args, [](size_t index, LaunchArg &a) {
    EXPECT_EQ(index, 1u);
    setExtent(a, {8}, {4}, 4);
  });
  EXPECT_EQ(args[1].hi, 0x2020u);
  EXPECT_EQ(noalias(args), (std::vector<bool>{true, true}));
}

TEST(LaunchArgs, TypeTags) {
  LaunchArg p = LaunchArg::pointer("fp32", 0);
  EXPECT_EQ(typeTag(p), "*fp32");
  p.mark16 = true;
  EXPECT_EQ(typeTag(p), "*fp32:16");
  p.noalias = true;
  EXPECT_EQ(typeTag(p), "*fp32:16:noalias");
  p.mark16 = false;
  EXPECT_EQ(typeTag(p), "*fp32:noalias");
  LaunchArg n = LaunchArg::integer(32);
  specialize(n, true, true);
  EXPECT_EQ(typeTag(n), "i32:16");
  LaunchArg one = LaunchArg::integer(1);
  specialize(one, true, true);
  EXPECT_EQ(typeTag(one), "=1");
  EXPECT_EQ(typeTag(LaunchArg::floating(2.0)), "fp32");
  EXPECT_EQ(typeTag(LaunchArg::boolean(false)), "i1");
}

TEST(LaunchArgs, ReadOnlyArraysRefusedWhereTheKernelStores) {
  LaunchArg x = LaunchArg::pointer("fp32", 0x1000), out = x;
  x.name = "x";
  out.name = "out";
  out.readonly = true;
  std::vector<LaunchArg> args = {x, out};
  EXPECT_EQ(message(checkWritable(args, {0}, "add")), "");
  EXPECT_EQ(message(checkWritable(args, {0, 1}, "add")),
            "add: argument 'out' is a read-only array, but the kernel may "
            "store to it (pass a writeable array, e.g. a copy)");
  args[1].readonly = false;
  args[0].readonly = true;
  EXPECT_EQ(message(checkWritable(args, {1}, "add")), "");
  EXPECT_NE(message(checkWritable(args, {1, 0}, "add")), "");
}

TEST(LaunchArgs, Grid) {
  auto text = [] { return std::string("G"); };
  auto dims = gridDims({4}, text);
  ASSERT_TRUE(bool(dims));
  EXPECT_EQ(*dims, (std::array<int64_t, 3>{4, 1, 1}));
  dims = gridDims({2, 0, 2147483647}, text);
  ASSERT_TRUE(bool(dims));
  EXPECT_EQ(*dims, (std::array<int64_t, 3>{2, 0, 2147483647}));

  EXPECT_EQ(message(gridDims({}, text).takeError()),
            "grid must have 1 to 3 dimensions, got G");
  EXPECT_EQ(message(gridDims({1, 1, 1, 1}, text).takeError()),
            "grid must have 1 to 3 dimensions, got G");
  EXPECT_EQ(message(gridDims({1, -1}, text).takeError()),
            "grid dimensions must be >= 0, got G");
  EXPECT_EQ(message(gridDims({2147483648LL}, text).takeError()),
            "grid dimensions must fit in int32, got G");

  EXPECT_EQ(message(checkGridRank(3, text)), "");
  EXPECT_EQ(message(checkGridRank(0, text)),
            "grid must have 1 to 3 dimensions, got G");
  // The grid is described only for an error.
  int described = 0;
  auto counting = [&] { ++described; return std::string("G"); };
  EXPECT_TRUE(bool(gridDims({1, 2, 3}, counting)));
  EXPECT_EQ(described, 0);
}

TEST(LaunchArgs, Packing) {
  LaunchArg f32 = LaunchArg::floating(0.1), f64 = LaunchArg::floating(0.1);
  LaunchArg flag = LaunchArg::boolean(true);
  LaunchArg i32 = LaunchArg::integer(-2), i64 = LaunchArg::integer(-5000000000LL);
  LaunchArg u64 = LaunchArg::integer(0);
  u64.type = "u64";
  u64.bits = 0xfedcba9876543210u;
  LaunchArg p = LaunchArg::pointer("fp32", 0x7f00deadbee0);
  std::vector<LaunchArg> args = {f32, f64, flag, i32, i64, u64, p};
  std::vector<std::string> signature = {"fp32", "fp64", "i1", "i32",
                                        "i64",  "u64",  "*fp32"};
  std::vector<uint64_t> slots(args.size(), 0xaaaaaaaaaaaaaaaau);
  ASSERT_EQ(message(packArgs(args, signature, "k", slots)), "");

  // 0.1 as a float is 0x3dcccccd; as a double 0x3fb999999999999a.
  EXPECT_EQ(slots[0], 0x3dcccccdu);
  EXPECT_EQ(slots[1], 0x3fb999999999999au);
  // One byte 1, the rest of the slot zero.
  EXPECT_EQ(slots[2], 1u);
  // -2 as 32 bits in the low half (the kernel reads 4 bytes: 0xfffffffe).
  uint32_t low;
  std::memcpy(&low, &slots[3], sizeof low);
  EXPECT_EQ(low, 0xfffffffeu);
  // -5e9 = -(0x12a05f200) = 0xfffffffed5fa0e00.
  EXPECT_EQ(slots[4], 0xfffffffed5fa0e00u);
  EXPECT_EQ(slots[5], 0xfedcba9876543210u);
  EXPECT_EQ(slots[6], 0x7f00deadbee0u);

  // A float passed for an fp64 parameter keeps its double precision; a bool
  // slot holds 0 for false.
  std::vector<LaunchArg> two = {LaunchArg::floating(1.0 / 3),
                                LaunchArg::boolean(false)};
  std::vector<uint64_t> twoSlots(2, ~0ull);
  ASSERT_EQ(message(packArgs(two, {"fp64", "i1"}, "k", twoSlots)), "");
  double third;
  std::memcpy(&third, &twoSlots[0], sizeof third);
  EXPECT_EQ(third, 1.0 / 3);
  EXPECT_EQ(twoSlots[1], 0u);
}

TEST(LaunchArgs, PackingChecksTheArgumentCount) {
  std::vector<LaunchArg> args = {LaunchArg::integer(3)};
  std::vector<uint64_t> slots(1);
  EXPECT_EQ(message(packArgs(args, {"i32", "i32"}, "kern", slots)),
            "kern takes 2 runtime arguments, got 1");
}

TensorDescriptorArg descriptor(llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<int64_t> strides,
                               llvm::ArrayRef<int64_t> block) {
  TensorDescriptorArg desc;
  desc.base = LaunchArg::pointer("fp16", 0x10000);
  desc.base.name = "A";
  desc.elementBytes = 2;
  desc.shape.assign(shape.begin(), shape.end());
  desc.strides.assign(strides.begin(), strides.end());
  desc.block.assign(block.begin(), block.end());
  return desc;
}

TEST(LaunchArgs, DescriptorsArePassedAsBaseShapeAndStrides) {
  // A 3-d fp16 descriptor: base, three i32 sizes, the two outer i64 strides
  // (the last, 1, is compiled in), sizes specialized like ints.
  TensorDescriptorArg desc = descriptor({5, 48, 100}, {4800, 104, 1}, {2, 16, 64});
  std::vector<LaunchArg> parts;
  ASSERT_EQ(message(expandDescriptor(desc, /*byAlignment=*/true, parts)), "");
  ASSERT_EQ(parts.size(), 6u);
  std::vector<std::string> types;
  std::vector<uint64_t> values;
  for (const LaunchArg &part : parts) {
    types.push_back(part.type);
    values.push_back(part.bits);
    EXPECT_EQ(part.name, "A");
  }
  EXPECT_EQ(types, (std::vector<std::string>{"*fp16", "i32", "i32", "i32", "i64", "i64"}));
  EXPECT_EQ(values, (std::vector<uint64_t>{0x10000, 5, 48, 100, 4800, 104}));
  // 4800 is a multiple of 16 elements; 104 only of the 8 fp16s in 16 bytes,
  // which the descriptor's rule guarantees.
  EXPECT_EQ(descriptorTag(desc, parts),
            "tensordesc<fp16[2,16,64]>(*fp16:16,i32,i32:16,i32,i64:16,i64:8)");
  parts[0].noalias = true;
  desc.nanPadding = true;
  EXPECT_EQ(descriptorTag(desc, parts),
            "tensordesc<fp16[2,16,64],nan>(*fp16:16:noalias,i32,i32:16,i32,i64:16,i64:8)");

  // Without alignment specialization only what the rules imply is marked.
  std::vector<LaunchArg> plain;
  ASSERT_EQ(message(expandDescriptor(desc, /*byAlignment=*/false, plain)), "");
  EXPECT_EQ(descriptorTag(desc, plain),
            "tensordesc<fp16[2,16,64],nan>(*fp16:16,i32,i32,i32,i64:8,i64:8)");
}

TEST(LaunchArgs, BadDescriptorsAreRefused) {
  auto refusal = [](TensorDescriptorArg desc) {
    std::vector<LaunchArg> parts;
    std::string text = message(expandDescriptor(desc, true, parts));
    EXPECT_TRUE(parts.empty()); // nothing appended on an error
    return text;
  };
  const std::string prefix = "tensor descriptor 'A': ";
  EXPECT_EQ(refusal(descriptor({}, {}, {})),
            prefix + "a descriptor has 1 to 5 dimensions, got 0");
  EXPECT_EQ(refusal(descriptor({1, 1, 1, 1, 1, 8}, {8, 8, 8, 8, 8, 1}, {1, 1, 1, 1, 1, 8})),
            prefix + "a descriptor has 1 to 5 dimensions, got 6");
  EXPECT_EQ(refusal(descriptor({4, 8}, {8}, {4, 8})),
            prefix + "2 dimensions in shape, but 1 strides and 2 block dimensions");
  TensorDescriptorArg misaligned = descriptor({4, 8}, {8, 1}, {4, 8});
  misaligned.base.bits += 2;
  EXPECT_EQ(refusal(misaligned),
            prefix + "the base array's address must be a multiple of 16 bytes");
  EXPECT_EQ(refusal(descriptor({0, 8}, {8, 1}, {4, 8})),
            prefix + "shape[0] must be in [1, 2^31), got 0");
  EXPECT_EQ(refusal(descriptor({4, int64_t(1) << 31}, {1 << 30, 1}, {4, 8})),
            prefix + "shape[1] must be in [1, 2^31), got 2147483648");
  EXPECT_EQ(refusal(descriptor({4, 8}, {12, 1}, {4, 8})),
            prefix + "strides[0] must be a multiple of 16 bytes, got 12 "
                     "elements of 2 bytes");
  EXPECT_EQ(refusal(descriptor({4, 8}, {8, 2}, {4, 8})),
            prefix + "the last dimension must be contiguous (stride 1), got 2");
  EXPECT_EQ(refusal(descriptor({4, 8}, {8, 1}, {3, 8})),
            prefix + "block dimension 0 must be a power of 2, got 3");
  EXPECT_EQ(refusal(descriptor({4, 8}, {8, 1}, {4, 4})),
            prefix + "the block's last dimension must span at least 16 bytes, "
                     "got 4 x 2");
  TensorDescriptorArg ints = descriptor({4, 8}, {8, 1}, {4, 8});
  ints.base = LaunchArg::pointer("i16", 0x10000);
  ints.base.name = "A";
  ints.nanPadding = true;
  EXPECT_EQ(refusal(ints),
            prefix + "padding 'nan' needs a floating-point array, got i16");
}

} // namespace
