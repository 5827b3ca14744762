//===- NvidiaLayouts.h - NVIDIA's matrix-unit layouts ----------*- C++ -*-===//
//
// The register and shared-memory layouts of NVIDIA's tensor-core
// instructions (mma.sync, wgmma), as LinearLayouts.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TILEGPU_IR_NVIDIALAYOUTS_H
#define TESSEL_DIALECT_TILEGPU_IR_NVIDIALAYOUTS_H

#include "tessel/Dialect/TileGPU/IR/LinearLayout.h"

namespace tessel::gpu {

/// The accumulator (C/D) layout of mma.sync m16n8 (PTX ISA "Matrix
/// Fragments for mma.m16n8k*"), tiled over warpsPerCTA [M, N] warps and
/// repeated in registers to cover shape [M, N].
LinearLayout mmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                  const std::vector<int32_t> &warpsPerCTA);
/// The warps [M, N] whose mmaAccumulatorLayout for `shape` [M, N] is
/// `layout`, or nothing where it is no mma.sync accumulator (or M, N are not
/// whole 16x8 tiles).
std::optional<std::vector<int32_t>>
mmaAccumulatorWarps(const LinearLayout &layout,
                    const std::vector<int32_t> &shape);

/// The layout of an mma.sync operand, `operand` 0 (A, shape [M, K]) or 1 (B,
/// shape [K, N]), as the instruction for `elementBits`-bit elements reads it
/// (PTX ISA "Matrix Fragments for mma.m16n8k8" for 32-bit tf32,
/// "mma.m16n8k16" for 16-bit, "mma.m16n8k32" for 8-bit elements): each
/// 32-bit register holds 32 / elementBits consecutive elements along K, the
/// first in the low bits. An instruction covers K = 256 / elementBits; its
/// registers come first, then the instructions along K, then along M (A) or
/// N (B). warpsPerCTA [M, N] is the accumulator's split
/// (mmaAccumulatorLayout): A's warps along N, and B's along M, hold copies.
/// Throws std::invalid_argument for other widths or a K that is not a
/// multiple of the instruction's.
LinearLayout mmaOperandLayout(unsigned operand, const std::vector<int32_t> &shape,
                              const std::vector<int32_t> &warpsPerCTA,
                              int32_t elementBits);

/// The accumulator (D) layout of warpgroup MMA, wgmma.mma_async m64nNk16
/// (PTX ISA "Register Fragments and Shared Memory Matrix Layouts"): the four
/// warps of a warpgroup cover 64 rows, 16 each, and every thread holds the
/// mma.sync 16x8 fragment repeated along the instruction's N columns.
/// warpsPerCTA [M, N] counts warps: M a multiple of 4 (warps along M come
/// first, so each group of four consecutive warps is a warpgroup), N
/// warpgroups side by side. The instruction's N is wgmmaInstrN(shape,
/// warpsPerCTA); instructions repeat in registers, along N first, to cover
/// shape [M, N].
LinearLayout wgmmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                    const std::vector<int32_t> &warpsPerCTA);
/// The N of the wgmma instruction for a block of `shape` on warpsPerCTA
/// [M, N] warps: a warpgroup's columns, at most 256.
int32_t wgmmaInstrN(const std::vector<int32_t> &shape,
                    const std::vector<int32_t> &warpsPerCTA);

/// The span in bytes of the swizzle a K-major wgmma operand with `k`
/// elements of `elementBytes` per row uses: 128, or 64 or 32 when a row is
/// that short.
int32_t wgmmaSwizzleBytes(int32_t k, int32_t elementBytes);

/// A K-major wgmma operand (A as M x K, B as N x K) in shared memory, as a
/// matrix descriptor with `swizzleBytes` (32, 64 or 128) swizzle reads it:
/// "offset" (elements) maps to [dim0 = row, dim1 = k]. The tile is cut along
/// K into swizzle atoms of swizzleBytes / elementBytes columns, each atom
/// rows x that many elements stored row after row (stride offset 8 rows),
/// the atoms one after another; within an atom the 16-byte chunks of a row
/// are XORed with the address bits above the row's span, as the hardware
/// does when the tile starts at a multiple of 8 * swizzleBytes.
LinearLayout wgmmaOperandLayout(int32_t rows, int32_t k, int32_t elementBytes,
                                int32_t swizzleBytes);
/// An MN-major wgmma operand (B as K x N, its N contiguous) in shared
/// memory, as a descriptor with `swizzleBytes` swizzle and the transpose
/// flag reads it: "offset" (elements) maps to [dim0 = k, dim1 = mn]. A
/// swizzle atom is 8 rows of K, each swizzleBytes / elementBytes
/// consecutive MN elements (16-byte chunks XORed as in wgmmaOperandLayout);
/// atoms follow each other along K (the stride offset, 8 * swizzleBytes),
/// then along MN (the leading offset, k * swizzleBytes): each column of
/// atoms is k rows of swizzleBytes, what one box of the copy engine with
/// that swizzle lands.
LinearLayout wgmmaMNMajorOperandLayout(int32_t k, int32_t mn,
                                       int32_t elementBytes,
                                       int32_t swizzleBytes);

/// An mma.sync operand whose K is not contiguous (B as K x N, N contiguous,
/// or A as K x M) for fragment registers read a 32-bit word at a time,
/// each word `perWord` = 4 / elementBytes elements consecutive along K
/// (tf32: 1; 8-bit: 4, gathered a byte at a time), the warp's lanes reading
/// 8 consecutive columns of rows k0 + perWord * t, t = 0..3: rows of K,
/// row-major in 16-byte (8-bit) or 32-byte (tf32) chunks, the row bits of
/// t lowest, and where `windowBytes` (the row's bytes, at most 128) leaves
/// fewer than 4 rows in 128 bytes, the chunks of each next group of rows
/// XORed by its index: the 4 rows' reads fall on different banks.
/// "offset" (elements) maps to [dim0 = k, dim1 = column].
LinearLayout gatherOperandLayout(int32_t k, int32_t columns,
                                 int32_t elementBytes, int32_t windowBytes);

} // namespace tessel::gpu

#endif // TESSEL_DIALECT_TILEGPU_IR_NVIDIALAYOUTS_H
