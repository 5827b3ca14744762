//===- AmdLayouts.h - AMD's matrix-core layouts -----------------*- C++ -*-===//
//
// The register layouts of AMD's MFMA instructions (CDNA2-4, wave64) as
// LinearLayouts: which (row, column) a lane's register holds, as AMD's matrix
// instruction calculator tabulates them.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TILEGPU_IR_AMDLAYOUTS_H
#define TESSEL_DIALECT_TILEGPU_IR_AMDLAYOUTS_H

#include "tessel/Dialect/TileGPU/IR/LinearLayout.h"

#include <optional>

namespace tessel::gpu {

/// The accumulator (C and D) layout of v_mfma_f32_32x32x8{f16,bf16_1k} for a
/// `shape` (multiples of 32) on `warpsPerCTA` [M, N] waves: in one wave's
/// 32x32 tile, lane l holds column l % 32 and, in its 16 registers r, row
/// 8 (r / 4) + 4 (l / 32) + r % 4. Warp bits take N first, then M; tiles
/// left over repeat in registers along N, then M.
///
/// `transposed`: the layout of the same instruction computing D^T = B^T A^T
/// (the operands' registers swapped): lane l holds row l % 32 and, in
/// register r, column 8 (r / 4) + 4 (l / 32) + r % 4. A row then lies in one
/// lane pair (row reductions stay in registers), and its K-blocks of 8 are
/// the A operand's registers of the next dot (mfmaOperandLayout): chained
/// dots pass the scores in registers.
///
/// `instr` 16: the 16x16 instructions' layout, the same with four groups of
/// 16 lanes: lane l holds column l % 16 and, in its 4 registers r, row
/// 4 (l / 16) + r (transposed: row l % 16, column 4 (l / 16) + r).
///
/// `doubles` (instr 16 only): v_mfma_f64_16x16x4_f64's 64-bit results, one
/// row per register (pair) where 32-bit ones take four: lane l holds column
/// l % 16 and, in register r, row 4 r + l / 16 (transposed: row l % 16,
/// column 4 r + l / 16).
LinearLayout mfmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                   const std::vector<int32_t> &warpsPerCTA,
                                   bool transposed = false,
                                   int32_t instr = 32, bool doubles = false);
/// The waves [M, N] of `layout` if it is an mfmaAccumulatorLayout of
/// `shape` (transposed or not, 64-bit or not, as asked).
std::optional<std::vector<int32_t>>
mfmaAccumulatorWarps(const LinearLayout &layout,
                     const std::vector<int32_t> &shape,
                     bool transposed = false, int32_t instr = 32,
                     bool doubles = false);

/// The operand layout of a 32x32 MFMA instruction taking `kWidth` elements
/// of K per lane (K 2 kWidth per instruction: 4 for v_mfma_f32_32x32x8
/// f16/bf16, 1 for v_mfma_f32_32x32x2f32, 4 or 8 for the int8 ones): A
/// (operand 0, M x K) has row l % 32 in lane l and K kWidth (l / 32) + j in
/// its register j (j < kWidth); B (operand 1, K x N) column l % 32 and the
/// same K. K steps repeat in registers; the operand follows the
/// accumulator's waves along its own dimension and is broadcast along the
/// other. With `instr` 16 (16x16 instructions, K 4 kWidth per instruction)
/// the lanes' four groups of 16 take K kWidth (l / 16) on.
LinearLayout mfmaOperandLayout(unsigned operand,
                               const std::vector<int32_t> &shape,
                               const std::vector<int32_t> &warpsPerCTA,
                               int32_t kWidth = 4, int32_t instr = 32);

} // namespace tessel::gpu

#endif // TESSEL_DIALECT_TILEGPU_IR_AMDLAYOUTS_H
