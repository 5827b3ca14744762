//===- MmaInputs.h - The mma.sync instruction of a dot ---------*- C++ -*-===//
//
// NVIDIA's warp-level tensor-core instruction, mma.sync.aligned.m16n8kK
// (sm_80 and up), multiplies fp16, bf16, tf32 and 8-bit integers, and on
// sm_89 and up 8-bit floats; K depends on the element width. Which of them a tile.dot takes is decided once, here,
// for the layout pass and the lowering alike.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TILEGPU_IR_MMAINPUTS_H
#define TESSEL_DIALECT_TILEGPU_IR_MMAINPUTS_H

#include <cstdint>
#include <optional>

namespace tessel::tile {
class DotOp;
} // namespace tessel::tile

namespace tessel::tilegpu {

/// The operand types of an mma.sync instruction. TF32x3 is fp32 split into
/// a tf32 high part and a tf32 remainder, multiplied on three tf32
/// instructions (hi * lo, lo * hi, hi * hi): close to fp32 products. FP8 is
/// e4m3 or e5m2 for each operand (the two may differ).
enum class MmaInputs { F16, BF16, TF32, TF32x3, S8, FP8 };

/// The mma.sync inputs of `dot`: fp16 into fp32 or fp16 (summed in fp32,
/// rounded once), bf16 into fp32 (m16n8k16); fp32
/// into fp32 where input_precision allows tf32 (absent, Triton's default on
/// NVIDIA, or "tf32"; m16n8k8) and "tf32x3" (three of those); int8 into
/// int32 (m16n8k32); 8-bit floats, e4m3 or e5m2 each, into fp32
/// (m16n8k32, sm_89 and up: tile-expand-fp8 leaves such dots only for
/// targets that have it). Nothing for other types and for fp32 dots asking for
/// "ieee", "bf16x3" or "bf16x6", which are computed exactly.
std::optional<MmaInputs> mmaSyncInputs(tile::DotOp dot);

/// The bits of one input element, and the K of one instruction (256 / bits).
int32_t mmaInputBits(MmaInputs inputs);
int32_t mmaSyncK(MmaInputs inputs);

/// Whether sm_90a's warpgroup MMA (wgmma.mma_async m64nNkK) takes `dot`
/// too, with the same K: fp16/bf16 into fp32, fp16 into fp16 (summed in
/// fp32 accumulators and rounded once, as on mma.sync), int8 into int32 and
/// 8-bit floats into fp32 (its tf32 variant is not used).
bool takesWarpgroupMma(tile::DotOp dot);

} // namespace tessel::tilegpu

#endif // TESSEL_DIALECT_TILEGPU_IR_MMAINPUTS_H
