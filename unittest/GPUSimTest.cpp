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
std::vector<uint32_t> runLanes(const std::string &body,
                               void (*init)(std::vector<uint32_t> &) = nullptr) {
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
  if (init)
    init(out);
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
  // Wavefronts and bank conflicts (wavefronts beyond one per phase).
  auto expect = [&](unsigned n, unsigned size, unsigned wavefronts,
                    unsigned conflicts) {
    SharedWavefronts w = countWavefronts(lanes, addrs, n, size);
    EXPECT_EQ(w.wavefronts, wavefronts);
    EXPECT_EQ(w.conflicts(), conflicts);
  };
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 4 * i;
  expect(32, 4, 1, 0);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 8 * i; // 2-way conflict: lanes i and i+16 share a bank
  expect(32, 4, 2, 1);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 128 * i; // all in bank 0
  expect(32, 4, 32, 31);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 128 * (i % 2); // two distinct words in bank 0, broadcast
  expect(32, 4, 2, 1);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 16 * i; // 16-byte vectors, contiguous: 4 phases of 8 lanes
  expect(32, 16, 4, 0);
  expect(8, 16, 1, 0); // one phase active
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 32 * i; // 16-byte vectors 32 bytes apart: 2 per phase
  expect(32, 16, 8, 4);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 8 * i; // 8-byte vectors, contiguous: 2 phases of 16 lanes
  expect(32, 8, 2, 0);
  // XOR swizzle of a 32x32 word tile read by column: conflict free.
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 4 * (i * 32 + (5 ^ i));
  expect(32, 4, 1, 0);
  for (uint32_t i = 0; i < 32; ++i)
    addrs[i] = 4 * (i * 32 + 5); // the same column unswizzled: 32-way
  expect(32, 4, 32, 31);
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

TEST(GPUSimParserTest, CallsAreInlinedOrNamedErrors) {
  auto message = [](const std::string &ptx) {
    try {
      parsePTX(std::string(kHeader) + ptx);
    } catch (const SimError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string inc = ".func (.param .b32 r) inc(.param .b32 x)\n{\n .reg .b32 %v;\n"
                          " ld.param.b32 %v, [x];\n add.u32 %v, %v, 1;\n st.param.b32 [r], %v;\n ret;\n}\n";
  const std::string call = " { .param .b32 a;\n .param .b32 b;\n st.param.b32 [a], %r1;\n"
                           " call.uni (b), inc, (a);\n ld.param.b32 %r1, [b]; }\n";
  // Two calls: each inlined (3 instructions and a branch for ret), the
  // parameters in local memory, 4 bytes each, one pair per call site.
  Module m = parsePTX(std::string(kHeader) + inc +
                      ".visible .entry k()\n{\n .reg .b32 %r<2>;\n mov.u32 %r1, 5;\n" + call + call +
                      " ret;\n}\n");
  const Kernel &k = m.kernels[0];
  ASSERT_EQ(k.insts.size(), 1u + 2 * (1 + 4 + 1) + 1);
  EXPECT_EQ(k.localBytes, 16u);
  EXPECT_EQ(k.insts[5].op, Op::Bra);
  EXPECT_EQ(k.insts[5].target, 6u);
  EXPECT_NE(message(".func (.param .b32 r) f(.param .b32 x)\n{\n { .param .b32 a;\n .param .b32 b;\n"
                    " call.uni (b), f, (a); }\n ret;\n}\n"
                    ".visible .entry k()\n{\n { .param .b32 a;\n .param .b32 b;\n"
                    " call.uni (b), f, (a); }\n ret;\n}\n")
                .find("recursive call to 'f' is not simulated"),
            std::string::npos);
  EXPECT_NE(message(".extern .func g();\n.visible .entry k()\n{\n call.uni g, ();\n ret;\n}\n")
                .find("PTX line 7: call to 'g', a function whose body is not in this module"),
            std::string::npos);
  EXPECT_NE(message(inc + ".visible .entry k()\n{\n .reg .b64 %rd;\n { .param .b32 a;\n .param .b32 b;\n"
                          " call.uni (b), %rd, (a), proto; }\n ret;\n}\n")
                .find("indirect calls are not simulated"),
            std::string::npos);
  EXPECT_NE(message(inc + ".visible .entry k()\n{\n { .param .b32 a;\n .param .b32 b;\n"
                          " call.uni (b), inc, (a, b); }\n ret;\n}\n")
                .find("it declares 1 and 1"),
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

TEST(GPUSimSemanticsTest, ExtendedPrecisionCarryFlag) {
  // 0xffffffff + 1 = 0 carry 1; then 5 + 6 + CF = 12 (PTX ISA: addc adds CC.CF).
  auto r = runLanes(" add.cc.u32 %r1, 0xffffffff, 1;\n addc.u32 %r2, 5, 6;\n add.u32 %d, %r1, %r2;");
  EXPECT_EQ(r[0], 12u);
  // No carry: 0x7fffffff + 1 = 0x80000000, then 5 + 6 + 0.
  r = runLanes(" add.cc.s32 %r1, 0x7fffffff, 1;\n addc.s32 %d, 5, 6;");
  EXPECT_EQ(r[0], 11u);
  // sub.cc: 0 - 1 borrows; subc: 10 - (3 + 1) = 6.
  r = runLanes(" sub.cc.u32 %r1, 0, 1;\n subc.u32 %d, 10, 3;");
  EXPECT_EQ(r[7], 6u);
  // subc.cc chain: 5 - 5 with no borrow leaves none; subc 0, 0 is 0 - CF = 0.
  r = runLanes(" sub.cc.u32 %r1, 5, 5;\n subc.cc.u32 %r2, 7, 7;\n subc.u32 %d, 0, 0;");
  EXPECT_EQ(r[3], 0u);
  // 0 - 0 - 1 borrows again: the chain ends in all ones.
  r = runLanes(" sub.cc.u32 %r1, 0, 1;\n subc.cc.u32 %r2, 0, 0;\n subc.u32 %d, 0, 0;");
  EXPECT_EQ(r[3], 0xffffffffu);
  // mad.lo.cc: 0x10000 * 0x10000 = 2^32, low half 0, + 0xffffffff: no carry;
  // madc.hi: high half 1 + 2 + 0 = 3.
  r = runLanes(" mad.lo.cc.u32 %r1, 0x10000, 0x10000, 0xffffffff;\n madc.hi.u32 %d, 0x10000, 0x10000, 2;");
  EXPECT_EQ(r[0], 3u);
  // mad.hi.cc: high half of 0xffffffff^2 is 0xfffffffe; + 2 = 0 carry 1;
  // madc.lo.cc: low half 1 + 0 + 1 = 2.
  r = runLanes(" mad.hi.cc.u32 %r1, 0xffffffff, 0xffffffff, 2;\n madc.lo.u32 %d, 0xffffffff, 0xffffffff, 0;");
  EXPECT_EQ(r[0], 2u);
  // Signed high half: -1 * -1 = 1, high half 0; + 0xffffffff = 0xffffffff, no carry.
  r = runLanes(" mad.hi.cc.s32 %r1, -1, -1, -1;\n addc.u32 %d, %r1, 0;");
  EXPECT_EQ(r[0], 0xffffffffu);
  // The flag is per thread: odd lanes carry, even lanes do not.
  r = runLanes(" and.b32 %r1, %r0, 1;\n neg.s32 %r1, %r1;\n add.cc.u32 %r2, %r1, %r1;\n addc.u32 %d, 0, 0;");
  EXPECT_EQ(r[4], 0u);
  EXPECT_EQ(r[5], 1u);
  // 64-bit: 2^64 - 1 + 1 carries.
  r = runLanes(" add.cc.u64 %rd1, 0xffffffffffffffff, 1;\n addc.u32 %d, 0, 0;");
  EXPECT_EQ(r[0], 1u);
}

TEST(GPUSimParserTest, NegativeAddressOffsets) {
  std::string ptx = std::string(kHeader) +
                    ".visible .entry k(.param .u64 a)\n{\n .reg .b32 %r<3>;\n .reg .b64 %rd<2>;\n"
                    " ld.global.b32 %r1, [%rd1+-4];\n"
                    " ld.global.b32 %r1, [%rd1+-0x10];\n"
                    " ld.global.b32 %r1, [%rd1-8];\n"
                    " ld.global.b32 %r1, [%rd1+16];\n ret;\n}\n";
  Module m = parsePTX(ptx);
  const Kernel &k = m.kernels[0];
  ASSERT_EQ(k.insts.size(), 5u);
  EXPECT_EQ(int64_t(k.insts[0].ops[1].imm), -4);
  EXPECT_EQ(int64_t(k.insts[1].ops[1].imm), -16);
  EXPECT_EQ(int64_t(k.insts[2].ops[1].imm), -8);
  EXPECT_EQ(int64_t(k.insts[3].ops[1].imm), 16);
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

TEST(GPUSimSemanticsTest, MmaM16n8k8F16FragmentsByHand) {
  // A = all ones (16x8), B(k, n) = k + 1 (8x8): every D(m, n) = 1 + 2 + ... +
  // 8 = 36 plus C. Lane l holds C/D(g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)
  // with g = l/4, t = l%4 (PTX ISA, m16n8k8 accumulators); C is 0.5 * lane.
  // B's b0, b1 are (k = 2t, n = g), (2t+1, g): the values 2t+1, 2t+2 in f16.
  auto r = runLanes(
      " mov.b32 %r1, 0x3C003C00;\n" // a0..a3 = 1.0 (f16x2)
      " and.b32 %r2, %r0, 3;\n shl.b32 %r2, %r2, 1;\n"
      " add.u32 %r3, %r2, 1;\n cvt.rn.f16.u32 %h0, %r3;\n"
      " add.u32 %r3, %r2, 2;\n cvt.rn.f16.u32 %h1, %r3;\n"
      " mov.b32 %r4, {%h0, %h1};\n"
      " cvt.rn.f32.u32 %r5, %r0;\n mul.f32 %r5, %r5, 0f3F000000;\n"
      " mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r6, %r7, %r8, %r9}, {%r1, %r1}, {%r4},"
      " {%r5, %r5, %r5, %r5};\n"
      " add.f32 %r10, %r6, %r9;\n mov.b32 %d, %r10;");
  for (int lane = 0; lane < 32; ++lane) {
    float want = 2 * (36.0f + 0.5f * float(lane)), got;
    std::memcpy(&got, &r[lane], 4);
    EXPECT_EQ(got, want) << "lane " << lane;
  }
}

TEST(GPUSimSemanticsTest, CpAsyncDataLandsAtTheWait) {
  // Each lane copies 4 bytes (the host filled out[lane] with 1000 + lane)
  // into shared memory that holds 7; before the wait a read still sees 7.
  auto r = runLanes(
      " .shared .align 4 .b8 s[128];\n"
      " mov.u32 %r1, s;\n mad.lo.u32 %r1, %r0, 4, %r1;\n st.shared.u32 [%r1], 7;\n"
      " ld.param.u64 %rd4, [out];\n mul.wide.u32 %rd5, %r0, 4;\n add.s64 %rd4, %rd4, %rd5;\n"
      " cp.async.ca.shared.global [%r1], [%rd4], 4;\n cp.async.commit_group;\n"
      " ld.shared.u32 %r2, [%r1];\n cp.async.wait_group 0;\n ld.shared.u32 %r3, [%r1];\n"
      " mad.lo.u32 %d, %r2, 100000, %r3;",
      [](std::vector<uint32_t> &out) {
        for (uint32_t i = 0; i < 32; ++i)
          out[i] = 1000 + i;
      });
  for (uint32_t lane = 0; lane < 32; ++lane)
    EXPECT_EQ(r[lane], 7u * 100000 + 1000 + lane) << "lane " << lane;
}

TEST(GPUSimLaunchTest, LowestFailingCTAWhateverTheThreads) {
  // CTAs 5 and up store past the end of a 5-CTA buffer.
  std::string ptx = std::string(kHeader) +
                    ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
                    " mov.u32 %r0, %tid.x;\n mov.u32 %r1, %ctaid.x;\n mad.lo.u32 %r2, %r1, 32, %r0;\n"
                    " ld.param.u64 %rd0, [out];\n mul.wide.u32 %rd1, %r2, 4;\n add.s64 %rd2, %rd0, %rd1;\n"
                    " st.global.u32 [%rd2], %r2;\n ret;\n}\n";
  Module m = parsePTX(ptx);
  for (unsigned threads : {1u, 2u, 5u}) {
    std::vector<uint32_t> out(5 * 32, 0);
    std::vector<LaunchArg> args(1);
    args[0].kind = LaunchArg::Buffer;
    args[0].host = out.data();
    args[0].bytes = out.size() * 4;
    args[0].writeBack = true;
    LaunchConfig cfg;
    cfg.block[0] = 32;
    cfg.grid[0] = 12;
    cfg.threads = threads;
    try {
      launch(m, "k", cfg, args);
      ADD_FAILURE() << "no error";
    } catch (const SimError &e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("CTA (5,0,0), thread (0,0,0)"), std::string::npos) << msg;
    }
    cfg.grid[0] = 5;
    LaunchResult res = launch(m, "k", cfg, args);
    EXPECT_EQ(res.counters.ctas, 5u);
    EXPECT_EQ(res.counters.globalStoreRequests, 5u);
    for (uint32_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(out[i], i);
  }
}

} // namespace
