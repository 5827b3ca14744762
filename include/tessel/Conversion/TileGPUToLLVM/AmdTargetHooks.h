//===- AmdTargetHooks.h - AMD's matrix cores for the lowering ---*- C++ -*-===//
//
// What the per-thread lowering asks only of AMD's GPUs: the MFMA
// instructions and buffer accesses. GPUTargetInfo::amd() returns these hooks on AMD targets and
// null elsewhere.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_TILEGPUTOLLVM_AMDTARGETHOOKS_H
#define TESSEL_CONVERSION_TILEGPUTOLLVM_AMDTARGETHOOKS_H

#include "mlir/IR/Builders.h"

namespace tessel::gpu {

/// The inputs of an MFMA instruction: fp16 or bf16 (into fp32), fp32
/// (into fp32, products exact), int8 (into int32), and 8-bit floats into
/// fp32 (CDNA3 on), A's format then B's: fp8 is e4m3, bf8 e5m2, of the
/// chip's family (gfx942: fnuz; gfx950: OCP); fp64 into fp64 (16x16 only,
/// one row per register: mfmaAccumulatorLayout's `doubles`).
enum class MfmaInputs {
  F16, BF16, F32, I8, FP8_FP8, FP8_BF8, BF8_FP8, BF8_BF8, F64
};

class AmdTargetHooks {
public:
  virtual ~AmdTargetHooks();
  /// Elements of K one lane holds of each operand of this chip's MFMA for
  /// `inputs`, 32x32 and 16x16 alike (the instructions take two and four
  /// times as many along K).
  virtual int mfmaKWidth(MfmaInputs inputs) const = 0;
  /// A wider K per lane that a second MFMA of the chip takes for `inputs`,
  /// tried first where K allows (gfx950's f8f6f4 for 8-bit floats: 32, its
  /// 32x32x64 and 16x16x128); 0 where there is none.
  virtual int mfmaWideKWidth(MfmaInputs inputs) const { return 0; }
  /// One MFMA of the wave on an `instr` x `instr` block (32 or 16): `acc`
  /// (vector<instr^2 / 64 x f32>, i32 for int8, f64 for fp64: this lane's part of the
  /// accumulator block) plus A (instr x K) times B (K x instr), of which `a`
  /// and `b` are this lane's mfmaKWidth (or mfmaWideKWidth) elements along
  /// K as integers of
  /// their width (vector<P x i16>, vector<P x i32> for fp32, vector<P x
  /// i8> for 8-bit inputs, vector<1 x i64> for fp64). Returns the new `acc`.
  virtual mlir::Value mfma(mlir::OpBuilder &b, mlir::Location loc,
                           MfmaInputs inputs, int instr, mlir::Value a,
                           mlir::Value bv, mlir::Value acc) const = 0;
  /// A buffer resource (V#, `!llvm.ptr<8>`) for the `range` bytes of global
  /// memory from `base` (`!llvm.ptr<1>`, the same in every lane): no
  /// stride, range-checked, so that accesses past `range` read zeros and
  /// write nothing.
  virtual mlir::Value bufferResource(mlir::OpBuilder &b, mlir::Location loc,
                                     mlir::Value base, int64_t range) const = 0;
  /// Reads a `type` (1, 2, 4, 8 or 16 bytes: a scalar or a vector) at byte
  /// `offset` (i32) of the resource `rsrc`.
  virtual mlir::Value bufferLoad(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Type type, mlir::Value rsrc,
                                 mlir::Value offset) const = 0;
  /// Writes `value` (1, 2, 4, 8 or 16 bytes) at byte `offset` (i32) of the
  /// resource `rsrc`.
  virtual void bufferStore(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value value, mlir::Value rsrc,
                           mlir::Value offset) const = 0;
  /// A transposed LDS read of `bits`-bit elements (8 or 16) where the chip
  /// has one (gfx950's ds_read_b64_tr_b8/b16), else null: each lane reads 8
  /// bytes at `ptr` (`!llvm.ptr<3>`); in each group of 16 lanes, lane i
  /// gets element i % n (n = 64 / bits) of the reads of lanes (16 / n) k +
  /// i / n for k = 0 .. n - 1, as vector<n x i`bits`>.
  virtual mlir::Value transposedLdsRead(mlir::OpBuilder &b, mlir::Location loc,
                                        mlir::Value ptr, unsigned bits) const {
    return {};
  }
  /// Whether transposedLdsRead has the chip's instructions.
  virtual bool hasTransposedLdsReads() const { return false; }
};

} // namespace tessel::gpu

#endif // TESSEL_CONVERSION_TILEGPUTOLLVM_AMDTARGETHOOKS_H
