//===- GPUSimSm90Test.cpp - PTX simulator: sm_90a parsing and launching ---===//
//
// What the sm_90a kernels need from the parser and the launch (the Python
// tests check wgmma, mbarrier and TMA semantics against numpy): by-value .b8
// array parameters declared `.param .align 64 .b8 p[128]`, tensor-copy
// address operands `[map, {c0, c1}]`, labels local to { } blocks, %-less
// register names, and LaunchArg::Bytes arguments carrying a tensor map whose
// address field is patched to the array's allocation. The tensor-map layout
// is the one documented in TensorMap.h.
//
//===----------------------------------------------------------------------===//
#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Launch.h"
#include "tessel/GPUSim/Program.h"
#include "tessel/GPUSim/TensorMap.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace tessel::gpusim;

namespace {

const char *kHeader = ".version 8.7\n.target sm_90a\n.address_size 64\n";

std::string errorOf(const std::string &ptx) {
  try {
    parsePTX(std::string(kHeader) + ptx);
  } catch (const SimError &e) {
    return e.what();
  }
  return "no error";
}

TEST(GPUSimSm90Test, AlignedByteArrayParamsAndTensorOperands) {
  Module m = parsePTX(std::string(kHeader) +
                      ".visible .entry k(.param .u32 n, .param .align 64 .b8 map[128], .param .u64 p)\n"
                      "{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n .shared .align 8 .b64 bar;\n"
                      " .shared .align 128 .b8 buf[256];\n"
                      " mov.b64 %rd1, map;\n cvta.param.u64 %rd2, %rd1;\n mov.u32 %r1, buf;\n"
                      " mov.u32 %r2, bar;\n"
                      " cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                      " [%r1], [%rd2, {%r0, %r3}], [%r2];\n ret;\n}\n");
  const Kernel &k = m.kernels[0];
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[1].offset, 64u); // .align 64 before the type
  EXPECT_EQ(k.params[1].size, 128u);
  EXPECT_EQ(k.params[2].offset, 192u);
  const Inst &tma = k.insts[4];
  EXPECT_EQ(tma.cls, InstClass::AsyncCopy);
  ASSERT_EQ(tma.nops, 3u);
  EXPECT_EQ(tma.ops[1].kind, OpKind::Addr);
  ASSERT_EQ(tma.ops[1].vecLen, 2u);
  EXPECT_EQ(k.regs[tma.ops[1].vec[0]].name, "%r0");
  EXPECT_EQ(k.regs[tma.ops[1].vec[1]].name, "%r3");
  // Coordinates belong to tensor copies only.
  EXPECT_NE(errorOf(".visible .entry k()\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n"
                    " ld.global.b32 %r1, [%rd1, {%r2}];\n ret;\n}\n")
                .find("PTX line 8: tensor coordinates in an address operand are only allowed in "
                      "cp.async.bulk.tensor"),
            std::string::npos);
}

TEST(GPUSimSm90Test, LabelsAreLocalToTheirBlock) {
  // Two inline-asm wait loops with the same label and a %-less predicate, as
  // Triton emits them; each branch goes to the label of its own block.
  Module m = parsePTX(std::string(kHeader) +
                      ".visible .entry k()\n{\n .reg .b32 %r<4>;\n .shared .align 8 .b64 bar;\n"
                      " mov.u32 %r1, bar;\n"                                                // 0
                      " mbarrier.init.shared::cta.b64 [%r1], 1;\n"                         // 1
                      " mbarrier.arrive.shared::cta.b64 _, [%r1];\n"                       // 2
                      " {\n .reg .pred complete;\n waitLoop:\n"
                      " mbarrier.try_wait.parity.shared::cta.b64 complete, [%r1], 0;\n"    // 3
                      " @!complete bra.uni waitLoop;\n }\n"                                // 4
                      " {\n .reg .pred complete;\n waitLoop:\n"
                      " mbarrier.try_wait.parity.shared::cta.b64 complete, [%r1], 0;\n"    // 5
                      " @!complete bra.uni waitLoop;\n }\n"                                // 6
                      " ret;\n}\n");
  const Kernel &k = m.kernels[0];
  ASSERT_EQ(k.insts.size(), 8u);
  EXPECT_EQ(k.insts[4].target, 3u);
  EXPECT_EQ(k.insts[6].target, 5u);
  EXPECT_EQ(k.regs[k.insts[3].ops[0].reg].name, "complete");
  EXPECT_NE(k.insts[3].ops[0].reg, k.insts[5].ops[0].reg); // each block's own register
  std::vector<LaunchArg> args;
  LaunchConfig cfg;
  cfg.block[0] = 1;
  EXPECT_NO_THROW(launch(m, "k", cfg, args));
  // The same label twice in one block is still an error.
  EXPECT_NE(errorOf(".visible .entry k()\n{\n { \n L:\n ret;\n L:\n ret;\n }\n}\n")
                .find("label 'L' defined twice"),
            std::string::npos);
}

TEST(GPUSimSm90Test, ImmediateZerosInVectorOperands) {
  // Triton zero-fills shared memory with `st.shared.v4.b32 [a], {0, 0, 0, 0}`.
  std::string body =
      ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n"
      " .shared .align 16 .b8 buf[16];\n mov.u32 %r1, buf;\n mov.u32 %r2, -1;\n"
      " st.shared.v4.b32 [%r1], {%r2, %r2, %r2, %r2};\n"
      " st.shared.v4.b32 [%r1], {0, 0f00000000, %r2, 0x0};\n"
      " ld.shared.v4.b32 {%r3, %r4, %r5, %r6}, [%r1];\n ld.param.u64 %rd1, [out];\n"
      " st.global.v4.b32 [%rd1], {%r3, %r4, %r5, %r6};\n ret;\n}\n";
  Module m = parsePTX(std::string(kHeader) + body);
  uint32_t out[4] = {7, 7, 7, 7};
  std::vector<LaunchArg> args(1);
  args[0].kind = LaunchArg::Buffer;
  args[0].host = out;
  args[0].bytes = 16;
  args[0].writeBack = true;
  LaunchConfig cfg;
  cfg.block[0] = 1;
  launch(m, "k", cfg, args);
  EXPECT_EQ(out[0], 0u);
  EXPECT_EQ(out[1], 0u);
  EXPECT_EQ(out[2], 0xffffffffu);
  EXPECT_EQ(out[3], 0u);
  std::string bad = body;
  bad.replace(bad.find("{0, 0f"), 2, "{1.5");
  EXPECT_NE(errorOf(bad).find("PTX line 12: a decimal floating-point immediate inside a vector operand"),
            std::string::npos);
}

TEST(GPUSimSm90Test, NonZeroImmediatesInVectorOperands) {
  // LLVM fills a block with a constant as `st.shared.v2.b32 [a], {0f3F800000,
  // 0f3F800000}`: each element is the immediate's bits (1.0f is 0x3F800000);
  // an integer element keeps the low bits of the element type (-1 as .b16 is
  // 0xffff), a 0d literal its 64 bits.
  std::string body =
      ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n"
      " .shared .align 16 .b8 buf[32];\n mov.u32 %r1, buf;\n mov.u32 %r2, 5;\n"
      " st.shared.v4.b32 [%r1], {0f3F800000, %r2, -2, 0x12345678};\n"
      " st.shared.v2.b16 [%r1+16], {-1, 7};\n"
      " st.shared.v2.b16 [%r1+20], { - 0x2, +3 };\n"
      " st.shared.b64 [%r1+24], 0;\n st.shared.v2.b64 [%r1+16], {%rd0, 0d3FF8000000000000};\n"
      " ld.param.u64 %rd1, [out];\n"
      " ld.shared.v4.b32 {%r3, %r4, %r5, %r6}, [%r1];\n st.global.v4.b32 [%rd1], {%r3, %r4, %r5, %r6};\n"
      " ld.shared.v4.b32 {%r3, %r4, %r5, %r6}, [%r1+16];\n st.global.v4.b32 [%rd1+16], {%r3, %r4, %r5, %r6};\n"
      " mov.b64 %rd2, {0xffffffff, 0f40000000};\n st.global.b64 [%rd1+32], %rd2;\n ret;\n}\n";
  Module m = parsePTX(std::string(kHeader) + body);
  uint32_t out[10] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  std::vector<LaunchArg> args(1);
  args[0].kind = LaunchArg::Buffer;
  args[0].host = out;
  args[0].bytes = sizeof(out);
  args[0].writeBack = true;
  LaunchConfig cfg;
  cfg.block[0] = 1;
  launch(m, "k", cfg, args);
  EXPECT_EQ(out[0], 0x3F800000u);
  EXPECT_EQ(out[1], 5u);
  EXPECT_EQ(out[2], 0xfffffffeu);
  EXPECT_EQ(out[3], 0x12345678u);
  // The .v2.b64 store overwrote bytes 16..31: %rd0 (never written: 0), then
  // 1.5 as f64, 0x3FF8000000000000 (little-endian halves).
  EXPECT_EQ(out[4], 0u);
  EXPECT_EQ(out[5], 0u);
  EXPECT_EQ(out[6], 0u);
  EXPECT_EQ(out[7], 0x3FF80000u);
  EXPECT_EQ(out[8], 0xffffffffu);
  EXPECT_EQ(out[9], 0x40000000u);
  // Without the .v2.b64 store, the .b16 pairs: {-1, 7} and {-2, 3}.
  std::string halves = body;
  halves.replace(halves.find(" st.shared.v2.b64"), std::string(" st.shared.v2.b64 [%r1+16], {%rd0, 0d3FF8000000000000};\n").size(), "");
  m = parsePTX(std::string(kHeader) + halves);
  launch(m, "k", cfg, args);
  EXPECT_EQ(out[4], 0x0007ffffu);
  EXPECT_EQ(out[5], 0x0003fffeu);
  EXPECT_EQ(out[6], 0u);
  EXPECT_EQ(out[7], 0u);
}

/// The tensor map of a rows x cols f32 array (TensorMap.h), box 4 x 4.
std::vector<uint8_t> tensorMap(uint32_t rows, uint32_t cols) {
  std::vector<uint8_t> m(kTensorMapBytes, 0);
  uint32_t magic = kTensorMapMagic, dims[2] = {cols, rows}, box[2] = {4, 4}, es[2] = {1, 1};
  uint64_t stride = uint64_t(cols) * 4;
  std::memcpy(&m[tensormap::Magic], &magic, 4);
  m[tensormap::Rank] = 2;
  m[tensormap::ElemType] = 7; // f32
  std::memcpy(&m[tensormap::GlobalDim], dims, 8);
  std::memcpy(&m[tensormap::GlobalStride], &stride, 8);
  std::memcpy(&m[tensormap::BoxDim], box, 8);
  std::memcpy(&m[tensormap::ElementStride], es, 8);
  return m;
}

TEST(GPUSimSm90Test, TensorMapArgumentsShareTheArraysAllocation) {
  // TMA loads the 4x4 box at (x=2, y=1) of `in` and stores it at (0, 0) of
  // `out`; `out` is passed both as a plain pointer (read back by the kernel
  // after the store, through the same allocation) and inside a tensor map.
  std::string ptx = std::string(kHeader) +
      ".visible .entry k(.param .align 64 .b8 in[128], .param .u64 outp, .param .align 64 .b8 out[128],"
      " .param .u64 copy)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n .reg .pred %p<2>;\n"
      " .shared .align 128 .b8 buf[64];\n .shared .align 8 .b64 bar;\n"
      " mov.b64 %rd1, in;\n cvta.param.u64 %rd1, %rd1;\n mov.b64 %rd2, out;\n cvta.param.u64 %rd2, %rd2;\n"
      " mov.u32 %r1, buf;\n mov.u32 %r2, bar;\n mov.u32 %r3, 2;\n mov.u32 %r4, 1;\n mov.u32 %r5, 0;\n"
      " mbarrier.init.shared::cta.b64 [%r2], 1;\n"
      " mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 64;\n"
      " cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4}], [%r2];\n"
      "W:\n mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0;\n @!%p1 bra W;\n"
      " cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd2, {%r5, %r5}], [%r1];\n"
      " cp.async.bulk.commit_group;\n cp.async.bulk.wait_group.read 0;\n"
      " ld.param.u64 %rd3, [outp];\n ld.global.b32 %r6, [%rd3+36];\n"
      " ld.param.u64 %rd4, [copy];\n st.global.b32 [%rd4], %r6;\n ret;\n}\n";
  Module m = parsePTX(ptx);
  std::vector<float> in(6 * 8), out(5 * 8, -1.0f);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i);
  float copy = 0;
  std::vector<LaunchArg> args(4);
  args[0].kind = LaunchArg::Bytes;
  args[0].value = tensorMap(6, 8);
  args[0].host = in.data();
  args[0].bytes = in.size() * 4;
  args[1].kind = LaunchArg::Buffer;
  args[1].host = out.data();
  args[1].bytes = out.size() * 4;
  args[1].writeBack = true;
  args[2].kind = LaunchArg::Bytes;
  args[2].value = tensorMap(5, 8);
  args[2].host = out.data();
  args[2].bytes = out.size() * 4;
  args[2].writeBack = true;
  args[3].kind = LaunchArg::Buffer;
  args[3].host = &copy;
  args[3].bytes = 4;
  args[3].writeBack = true;
  LaunchConfig cfg;
  cfg.block[0] = 1;
  LaunchResult r = launch(m, "k", cfg, args);
  EXPECT_EQ(r.counters.asyncCopyBytes, 64u);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 8; ++x)
      EXPECT_EQ(out[y * 8 + x], y < 4 && x < 4 ? in[(y + 1) * 8 + x + 2] : -1.0f) << y << "," << x;
  EXPECT_EQ(copy, in[2 * 8 + 3]); // out[1][1], read through the plain pointer
  // A tensor map needs a .b8 parameter of its size.
  args[1] = args[0];
  EXPECT_THROW(launch(m, "k", cfg, args), SimError);
}

} // namespace
