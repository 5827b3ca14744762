//===- GPUSimTest.cpp - PTX simulator: decoding, reconvergence, semantics --===//
//
// Values are derived by hand from the PTX ISA (bit patterns, lane maps) or from
// first principles (sectors, bank conflicts); the Python tests cover the
// instruction set against numpy and Triton's PTX end to end.
//
//===----------------------------------------------------------------------===//
#include "tessel/GPUSim/Counters.h"
#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Launch.h"
#include "tessel/GPUSim/Program.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace tessel::gpusim;

namespace {

const char *kHeader = ".version 8.7\n.target sm_80\n.address_size 64\n";

/// Runs `body` on one warp; each lane stores %d (b32) to out[lane].
std::vector<uint32_t> runLanes(const std::string &body) {
  std::string ptx = std::string(kHeader) +
                    ".visible .entry k(.param .u64 out)\n{\n"
                    " .reg .pred %p<4>;\n .reg .b32 %r<16>;\n .reg .b32 %d;\n"
                    " .reg .b16 %h<4>;\n .reg .b64 %rd<8>;\n"
                    " mov.u32 %r0, %tid.x;\n" +
                    body +
                    "\n ld.param.u64 %rd1, [out];\n mul.wide.u32 %rd2, %r0, 4;\n"
                    " add.s64 %rd3, %rd1, %rd2;\n st.global.b32 [%rd3], %d;\n ret;\n}\n";
  Module m = parsePTX(ptx);
  std::vector<uint32_t> out(32, 0xdeadbeef);
  std::vector<LaunchArg> args(1);
  args[0].kind = LaunchArg::Buffer;
  args[0].host = out.data();
  args[0].bytes = out.size() * 4;
  args[0].writeBack = true;
  LaunchConfig cfg;
  cfg.block[0] = 32;
  launch(m, "k", cfg, args);
  return out;
}

TEST(GPUSimCountersTest, SectorsFromFirstPrinciples) {
  uint64_t addrs[32];
  for (int i = 0; i < 32; ++i)
    addrs[i] = 0x1000 + 4 * i; // 128 contiguous bytes, aligned
  EXPECT_EQ(countSectors(addrs, 32, 4), 4u);
  for (int i = 0; i < 32; ++i)
    addrs[i] = 0x1004 + 4 * i; // shifted by 4: spills into a 5th sector
  EXPECT_EQ(countSectors(addrs, 32, 4), 5u);
  for (int i = 0; i < 32; ++i)
    addrs[i] = 0x1000 + 128 * i; // one sector per lane
  EXPECT_EQ(countSectors(addrs, 32, 4), 32u);
  for (int i = 0; i < 32; ++i)
    addrs[i] = 0x1000; // all lanes, one word
  EXPECT_EQ(countSectors(addrs, 32, 4), 1u);
  for (int i = 0; i < 32; ++i)
    addrs[i] = 0x1000 + 16 * i; // 16-byte vectors: 512 bytes
  EXPECT_EQ(countSectors(addrs, 32, 16), 16u);
}

TEST(GPUSimCountersTest, BankConflictWavefronts) {
  uint32_t lanes[32], addrs[32];
  for (uint32_t i = 0; i < 32; ++i)
    lanes[i] = i;
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 4 * i;
  EXPECT_EQ(countWavefronts(lanes, addrs, 32, 4), 1u);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 8 * i; // 2-way conflict: lanes i and i+16 share a bank
  EXPECT_EQ(countWavefronts(lanes, addrs, 32, 4), 2u);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 128 * i; // all in bank 0
  EXPECT_EQ(countWavefronts(lanes, addrs, 32, 4), 32u);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 128 * (i % 2); // two distinct words in bank 0, broadcast
  EXPECT_EQ(countWavefronts(lanes, addrs, 32, 4), 2u);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 16 * i; // 16-byte vectors, contiguous: 4 phases of 8 lanes
  EXPECT_EQ(countWavefronts(lanes, addrs, 32, 16), 4u);
  // XOR swizzle of a 32x32 word tile read by column: conflict free.
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 4 * (i * 32 + (5 ^ i));
  EXPECT_EQ(countWavefronts(lanes, addrs, 32, 4), 1u);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 4 * (i * 32 + 5); // the same column unswizzled: 32-way
  EXPECT_EQ(countWavefronts(lanes, addrs, 32, 4), 32u);
}

TEST(GPUSimParserTest, ParamsRegistersAndReconvergence) {
  std::string ptx = std::string(kHeader) +
                    ".visible .entry k(.param .u32 a, .param .u64 b, .param .f32 c)\n"
                    ".reqntid 64\n{\n .reg .pred %p<2>;\n .reg .b32 %r<5>;\n"
                    " mov.u32 %r1, %tid.x;\n"        // 0
                    " setp.lt.u32 %p1, %r1, 3;\n"    // 1
                    " @%p1 bra ELSE;\n"              // 2
                    " add.u32 %r2, %r1, 1;\n"        // 3
                    " bra JOIN;\n"                   // 4
                    "ELSE:\n add.u32 %r2, %r1, 2;\n" // 5
                    "JOIN:\n ret;\n}\n";             // 6
  Module m = parsePTX(ptx);
  ASSERT_EQ(m.kernels.size(), 1u);
  const Kernel &k = m.kernels[0];
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[0].offset, 0u);
  EXPECT_EQ(k.params[1].offset, 8u); // aligned to 8
  EXPECT_EQ(k.params[2].offset, 16u);
  EXPECT_EQ(k.paramBytes, 20u);
  EXPECT_EQ(k.regs.size(), 7u);
  EXPECT_EQ(k.reqntid[0], 64u);
  ASSERT_EQ(k.insts.size(), 7u);
  EXPECT_EQ(k.insts[2].op, Op::Bra);
  EXPECT_EQ(k.insts[2].target, 5u);
  EXPECT_EQ(k.insts[2].reconverge, 6u); // the join point
  EXPECT_EQ(k.insts[6].line, 17u); // `ret` after the JOIN label
}

TEST(GPUSimParserTest, UnknownThingsAreErrorsWithTheLine) {
  auto message = [](const std::string &body) {
    try {
      parsePTX(std::string(kHeader) + ".visible .entry k()\n{\n .reg .b32 %r<4>;\n" +
               body + "\n}\n");
    } catch (const SimError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(" wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r0,%r1}, [%r0];")
                .find("PTX line 7: unknown instruction 'wmma'"),
            std::string::npos);
  EXPECT_NE(message(" add.u32.xyz %r1, %r2, %r3;").find("modifier '.xyz'"), std::string::npos);
  EXPECT_NE(message(" add.u32 %r1, %r2;").find("expected 3 operands"), std::string::npos);
  EXPECT_NE(message(" movmatrix.sync.aligned.m8n8.trans.b16 %r0, %r1;")
                .find("unknown instruction 'movmatrix'"),
            std::string::npos);
  // Known instructions with a form that is not simulated still name the line.
  EXPECT_NE(message(" ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r0}, [%r0];")
                .find("PTX line 7: ldmatrix: only the .m8n8 shape"),
            std::string::npos);
}

TEST(GPUSimSemanticsTest, HandDerivedBitPatterns) {
  // 1/3 in f16: 0x3555 (0.333251953125, round to nearest).
  auto r = runLanes(" mov.f32 %r1, 0f3EAAAAAB;\n cvt.rn.f16.f32 %h1, %r1;\n cvt.u32.u16 %d, %h1;");
  EXPECT_EQ(r[0], 0x3555u);
  // 2^0.5 rounded to f32 is 0x3FB504F3.
  r = runLanes(" mov.f32 %r1, 0f3F000000;\n ex2.approx.f32 %d, %r1;");
  EXPECT_EQ(r[0], 0x3FB504F3u);
  // prmt: selector 0x0123 reverses the bytes of a; 0x8888 replicates sign bits.
  r = runLanes(" prmt.b32 %d, 0x33221100, 0x77665544, 0x0123;");
  EXPECT_EQ(r[0], 0x00112233u);
  r = runLanes(" prmt.b32 %d, 0x00800001, 0, 0x8A98;");
  // nibbles (low first): 8 -> byte0 0x01 sign 0; 9 -> byte1 0x00 sign 0;
  // A -> byte2 0x80 sign 1; 8 -> byte0 sign 0.
  EXPECT_EQ(r[0], 0x00ff0000u);
  // bfe.s32 of 0x00000f00 at 8, length 4: field 0xf, sign bit 1 -> -1.
  r = runLanes(" bfe.s32 %d, 0x00000f00, 8, 4;");
  EXPECT_EQ(r[0], 0xffffffffu);
  // shfl.sync.up by 1 with c = 0: lane 0 keeps its own value.
  r = runLanes(" shfl.sync.up.b32 %d, %r0, 1, 0, -1;");
  EXPECT_EQ(r[0], 0u);
  EXPECT_EQ(r[5], 4u);
  // shfl.sync.idx with segment mask 0x18 (c = 0x181f): groups of 8 lanes,
  // each reading lane 2 of its group.
  r = runLanes(" shfl.sync.idx.b32 %d, %r0, 2, 0x181f, -1;");
  EXPECT_EQ(r[13], 10u);
  EXPECT_EQ(r[31], 26u);
}

TEST(GPUSimSemanticsTest, DivergentBranchesReconverge) {
  // Lanes below 3 take the else side; all meet at JOIN, where activemask
  // must be full again.
  auto r = runLanes(" setp.lt.u32 %p1, %r0, 3;\n @%p1 bra ELSE;\n add.u32 %r2, %r0, 100;\n"
                    " bra JOIN;\nELSE:\n add.u32 %r2, %r0, 200;\nJOIN:\n"
                    " activemask.b32 %r3;\n xor.b32 %d, %r3, %r2;");
  EXPECT_EQ(r[0], ~0u ^ 200u);
  EXPECT_EQ(r[2], ~0u ^ 202u);
  EXPECT_EQ(r[3], ~0u ^ 103u);
}

TEST(GPUSimSemanticsTest, OutOfBoundsNamesThreadAndLine) {
  try {
    runLanes(" ld.param.u64 %rd4, [out];\n ld.global.b32 %r5, [%rd4+128];");
    FAIL() << "no error";
  } catch (const SimError &e) {
    std::string m = e.what();
    EXPECT_NE(m.find("out-of-bounds load of 4 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("thread (0,0,0)"), std::string::npos) << m;
    EXPECT_NE(m.find("PTX line 13: 'ld.global.b32 %r5, [%rd4+128];'"), std::string::npos) << m;
  }
}

} // namespace
