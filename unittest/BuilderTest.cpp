//===- BuilderTest.cpp - The language's typing rules in the builder -------===//
#include "tessel/Builder/TileBuilder.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {
class BuilderTest : public ::testing::Test {
protected:
  TileBuilder b;
  std::vector<TValue> args;
  void SetUp() override {
    args = b.createFunction("k", {"*fp32", "*fp16", "i32", "u32", "*i8"});
  }
  TValue block(const std::string &dtype, int64_t n = 16) {
    return b.full({n}, int64_t(1), dtype);
  }
};
} // namespace

TEST_F(BuilderTest, IntegerPromotion) {
  EXPECT_EQ(b.binary("add", block("i8"), block("i32")).dtype.str(), "i32");
  EXPECT_EQ(b.binary("add", block("u32"), block("i32")).dtype.str(), "u32");
  EXPECT_EQ(b.binary("add", block("u8"), block("i32")).dtype.str(), "i32");
  EXPECT_EQ(b.binary("add", block("i1"), block("i16")).dtype.str(), "i16");
}

TEST_F(BuilderTest, FloatPromotion) {
  EXPECT_EQ(b.binary("add", block("fp16"), block("fp32")).dtype.str(), "fp32");
  EXPECT_EQ(b.binary("mul", block("fp16"), block("fp16")).dtype.str(), "fp16");
  EXPECT_EQ(b.binary("truediv", block("fp16"), block("fp16")).dtype.str(), "fp32");
  EXPECT_EQ(b.binary("add", block("bf16"), block("fp16")).dtype.str(), "fp16");
  EXPECT_EQ(b.binary("add", block("bf16"), block("i32")).dtype.str(), "fp32");
  EXPECT_EQ(b.binary("truediv", block("i32"), block("i32")).dtype.str(), "fp32");
  // Half-precision division by a literal still happens in fp32.
  EXPECT_EQ(b.binary("truediv", block("fp16"), int64_t(2)).dtype.str(), "fp32");
  EXPECT_EQ(b.binary("mod", block("bf16"), 2.0).dtype.str(), "fp32");
}

TEST_F(BuilderTest, LiteralsDoNotWidenTensors) {
  EXPECT_EQ(b.binary("add", block("fp16"), 1.5).dtype.str(), "fp16");
  EXPECT_EQ(b.binary("mul", block("i8"), int64_t(3)).dtype.str(), "i8");
  EXPECT_EQ(b.binary("add", block("i32"), 2.0).dtype.str(), "fp32");
  EXPECT_EQ(b.binary("add", int64_t(1), block("u16")).dtype.str(), "u16");
}

TEST_F(BuilderTest, ComparisonsGiveBool) {
  TValue r = b.binary("lt", block("fp32"), int64_t(0));
  EXPECT_EQ(r.dtype.str(), "i1");
  EXPECT_EQ(r.shape().vec(), std::vector<int64_t>{16});
}

TEST_F(BuilderTest, Broadcasting) {
  TValue row = b.expandDims(b.arange(0, 8), 0);  // [1, 8]
  TValue col = b.expandDims(b.arange(0, 4), 1);  // [4, 1]
  TValue sum = b.binary("add", row, col);
  EXPECT_EQ(sum.shape().vec(), (std::vector<int64_t>{4, 8}));
  TValue withVector = b.binary("add", sum, b.arange(0, 8));  // [4,8] + [8]
  EXPECT_EQ(withVector.shape().vec(), (std::vector<int64_t>{4, 8}));
  EXPECT_THROW(b.binary("add", b.arange(0, 8), b.arange(0, 4)), CompileError);
}

TEST_F(BuilderTest, PointerArithmetic) {
  TValue p = b.binary("add", args[0], b.arange(0, 16));
  EXPECT_EQ(p.dtype.str(), "*fp32");
  EXPECT_EQ(p.shape().vec(), std::vector<int64_t>{16});
  EXPECT_THROW(b.binary("add", args[0], args[0]), CompileError);
  EXPECT_THROW(b.binary("add", args[0], 1.5), CompileError);
  EXPECT_THROW(b.binary("mul", args[0], int64_t(2)), CompileError);
}

TEST_F(BuilderTest, ErrorsNameTypesAndShapes) {
  try {
    b.binary("add", args[0], args[1]);
    FAIL() << "expected an error";
  } catch (const CompileError &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("*fp32"), std::string::npos) << msg;
    EXPECT_NE(msg.find("*fp16"), std::string::npos) << msg;
  }
  TValue ptrs = b.binary("add", args[4], b.arange(0, 128));
  try {
    b.store(ptrs, b.full({64}, 1.0, "fp32"), std::nullopt);
    FAIL() << "expected an error";
  } catch (const CompileError &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("[64]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[128]"), std::string::npos) << msg;
  }
}

TEST_F(BuilderTest, LoadChecksMasks) {
  TValue ptrs = b.binary("add", args[0], b.arange(0, 16));
  EXPECT_THROW(b.load(ptrs, Operand(b.arange(0, 16)), std::nullopt), CompileError);
  TValue mask = b.binary("lt", b.arange(0, 16), args[2]);
  EXPECT_EQ(b.load(ptrs, Operand(mask), Operand(0.0)).dtype.str(), "fp32");
}

TEST_F(BuilderTest, ArangeNeedsPowerOfTwo) {
  EXPECT_THROW(b.arange(0, 12), CompileError);
  EXPECT_THROW(b.arange(4, 4), CompileError);
  EXPECT_NO_THROW(b.arange(8, 16));
}

TEST_F(BuilderTest, DotShapesAndTypes) {
  TValue a = b.full({32, 16}, 1.0, "fp16"), bb = b.full({16, 64}, 1.0, "fp16");
  TValue d = b.dot(a, bb, std::nullopt, std::nullopt);
  EXPECT_EQ(d.dtype.str(), "fp32");
  EXPECT_EQ(d.shape().vec(), (std::vector<int64_t>{32, 64}));
  EXPECT_THROW(b.dot(a, a, std::nullopt, std::nullopt), CompileError);
  TValue small = b.full({8, 16}, 1.0, "fp16");
  EXPECT_THROW(b.dot(small, bb, std::nullopt, std::nullopt), CompileError);
}

TEST_F(BuilderTest, LoopCarriedTypesMustNotChange) {
  TValue acc = b.full({16}, 0.0, "fp32");
  auto [iv, carried] = b.beginFor(int64_t(0), args[2], int64_t(1), {acc});
  EXPECT_EQ(iv.dtype.str(), "i32");
  TValue next = b.cast(carried[0], "fp16", false);
  EXPECT_THROW(b.endFor({next}), CompileError);
}

TEST_F(BuilderTest, DivisionMayUseTheReciprocalButDivRnMayNot) {
  b.binary("truediv", block("fp32"), block("fp32"));
  b.binary("div_rn", block("fp32"), block("fp32"));
  b.finishFunction();
  std::string ir = b.moduleString();
  auto first = ir.find("arith.divf");
  ASSERT_NE(first, std::string::npos) << ir;
  auto second = ir.find("arith.divf", first + 1);
  ASSERT_NE(second, std::string::npos) << ir;
  EXPECT_NE(ir.substr(first, ir.find('\n', first) - first).find("fastmath<arcp>"),
            std::string::npos) << ir;
  EXPECT_EQ(ir.substr(second, ir.find('\n', second) - second).find("fastmath"),
            std::string::npos) << ir;
}

TEST_F(BuilderTest, SignedValueShiftsArithmeticallyByAnUnsignedAmount) {
  // i8 >> u8 promotes to u8, but the shifted value is signed: shrsi.
  TValue r = b.binary("rshift", block("i8"), block("u8"));
  EXPECT_EQ(r.dtype.str(), "u8");
  b.binary("rshift", block("u8"), block("i16"));  // unsigned value: shrui
  b.finishFunction();
  std::string ir = b.moduleString();
  auto signedShift = ir.find("arith.shrsi");
  auto unsignedShift = ir.find("arith.shrui");
  ASSERT_NE(signedShift, std::string::npos) << ir;
  ASSERT_NE(unsignedShift, std::string::npos) << ir;
  EXPECT_LT(signedShift, unsignedShift) << ir;
}

TEST_F(BuilderTest, IntegerDotReturnsInt32WhateverOutDType) {
  TValue a = b.full({16, 16}, int64_t(3), "i8");
  EXPECT_EQ(b.dot(a, a, std::nullopt, std::string("i8")).dtype.str(), "i32");
  EXPECT_EQ(b.dot(a, a, std::nullopt, std::nullopt).dtype.str(), "i32");
  TValue acc8 = b.full({16, 16}, int64_t(0), "i8");
  EXPECT_THROW(b.dot(a, a, acc8, std::string("i8")), CompileError);
  TValue u = b.full({16, 16}, int64_t(3), "u8");
  EXPECT_THROW(b.dot(u, u, std::nullopt, std::nullopt), CompileError);
  TValue f = b.full({16, 16}, 1.0, "fp32");
  EXPECT_EQ(b.dot(f, f, std::nullopt, std::string("fp16")).dtype.str(), "fp32");
  EXPECT_THROW(b.dot(f, f, std::nullopt, std::string("bf16")), CompileError);
}

TEST_F(BuilderTest, BlocksHoldAtMostMaxBlockElements) {
  EXPECT_EQ(kMaxBlockElements, int64_t(1) << 20);
  EXPECT_NO_THROW(b.arange(0, kMaxBlockElements));
  EXPECT_THROW(b.arange(0, 2 * kMaxBlockElements), CompileError);
  EXPECT_THROW(b.full({2048, 1024}, 0.0, "fp32"), CompileError);
  EXPECT_THROW(b.full({1 << 30, 1 << 30, 1 << 30}, 0.0, "fp32"), CompileError);
  TValue row = b.expandDims(b.arange(0, 1024), 0);
  EXPECT_THROW(b.broadcastTo(row, {2048, 1024}), CompileError);
  EXPECT_THROW(b.binary("add", row, b.expandDims(b.arange(0, 2048), 1)),
               CompileError);
  EXPECT_THROW(b.reshape(b.constant(int64_t(1), "i32"), {2 * kMaxBlockElements}),
               CompileError);
  try {
    b.arange(0, int64_t(1) << 30);
    FAIL() << "arange(0, 2^30) was accepted";
  } catch (const CompileError &e) {
    EXPECT_NE(std::string(e.what()).find("arange(0, 1073741824)"),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1048576"), std::string::npos)
        << e.what();
  }
}
