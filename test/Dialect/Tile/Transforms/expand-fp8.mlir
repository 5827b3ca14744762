// RUN: tessel-opt %s -split-input-file -tile-expand-fp8 | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tile-expand-fp8="native=true" | FileCheck %s --check-prefix=NATIVE
// RUN: tessel-opt %s -split-input-file -tile-expand-fp8="mfma=fnuz" | FileCheck %s --check-prefix=FNUZ
// RUN: tessel-opt %s -split-input-file -tile-expand-fp8="mfma=ocp" | FileCheck %s --check-prefix=OCP

// Arithmetic on 8-bit floats runs on their fp32 values (decoded from the
// bits: the exponent field scales the significand) and rounds the result
// back (quantum, round to even by adding 2^23, saturation, NaN code 0x7F).
// CHECK-LABEL: func.func @add
// CHECK: arith.bitcast %{{.*}} : tensor<16xf8E4M3FN> to tensor<16xi8>
// CHECK: arith.extui %{{.*}} : tensor<16xi8> to tensor<16xi32>
// CHECK: arith.sitofp %{{.*}} : tensor<16xi32> to tensor<16xf32>
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf oge, %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: %[[MAGIC:.*]] = arith.constant dense<0x4B000000> : tensor<16xf32>
// CHECK: arith.addf %{{.*}}, %[[MAGIC]]
// CHECK: arith.subf %{{.*}}, %[[MAGIC]]
// CHECK: arith.fptosi %{{.*}} : tensor<16xf32> to tensor<16xi32>
// CHECK: arith.constant dense<126> : tensor<16xi32>
// CHECK: arith.constant dense<127> : tensor<16xi32>
// CHECK: arith.trunci %{{.*}} : tensor<16xi32> to tensor<16xi8>
// CHECK: %[[R:.*]] = arith.bitcast %{{.*}} : tensor<16xi8> to tensor<16xf8E4M3FN>
// CHECK: return %[[R]]
// CHECK-NOT: arith.addf %{{.*}} : tensor<16xf8E4M3FN>
// With native conversions (sm_89 and newer) the operands widen through fp16
// and the result rounds from fp32 by the target's own cvt.
// NATIVE-LABEL: func.func @add
// NATIVE: %[[A:.*]] = arith.extf %{{.*}} : tensor<16xf8E4M3FN> to tensor<16xf16>
// NATIVE: arith.extf %[[A]] : tensor<16xf16> to tensor<16xf32>
// NATIVE: %[[S:.*]] = arith.addf %{{.*}}, %{{.*}} : tensor<16xf32>
// NATIVE: arith.truncf %[[S]] : tensor<16xf32> to tensor<16xf8E4M3FN>
func.func @add(%a: tensor<16xf8E4M3FN>, %b: tensor<16xf8E4M3FN>) -> tensor<16xf8E4M3FN> {
  %s = arith.addf %a, %b : tensor<16xf8E4M3FN>
  return %s : tensor<16xf8E4M3FN>
}

// -----

// Constants become their bits; fp64 rounds to e5m2 from fp64 itself (i64
// arithmetic, 2^52), e5m2 saturates at code 0x7B.
// CHECK-LABEL: func.func @constant_and_f64
// CHECK: %[[BITS:.*]] = arith.constant dense<60> : tensor<16xi8>
// CHECK: arith.bitcast %[[BITS]] : tensor<16xi8> to tensor<16xf8E5M2>
// CHECK: arith.bitcast %{{.*}} : tensor<16xf64> to tensor<16xi64>
// CHECK: arith.constant dense<0x4330000000000000> : tensor<16xf64>
// CHECK: arith.constant dense<123> : tensor<16xi64>
// CHECK-NOT: arith.truncf
func.func @constant_and_f64(%x: tensor<16xf64>) -> (tensor<16xf8E5M2>, tensor<16xf8E5M2>) {
  %one = arith.constant dense<1.0> : tensor<16xf8E5M2>
  %q = arith.truncf %x : tensor<16xf64> to tensor<16xf8E5M2>
  return %one, %q : tensor<16xf8E5M2>, tensor<16xf8E5M2>
}

// -----

// Without native dots (the CPU, sm_80), a dot of 8-bit floats multiplies
// them as fp16; with them (sm_89 and newer) it stays, unless it accumulates
// in fp16.
// CHECK-LABEL: func.func @dot
// CHECK: %[[A:.*]] = arith.truncf %{{.*}} : tensor<16x32xf32> to tensor<16x32xf16>
// CHECK: %[[B:.*]] = arith.truncf %{{.*}} : tensor<32x16xf32> to tensor<32x16xf16>
// CHECK: tile.dot %[[A]], %[[B]], %{{.*}} : tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf32>
// NATIVE-LABEL: func.func @dot
// NATIVE: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E5M2> -> tensor<16x16xf32>
// NATIVE: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf16>
func.func @dot(%a: tensor<16x32xf8E4M3FN>, %b: tensor<32x16xf8E5M2>, %c: tensor<16x16xf32>, %h: tensor<16x16xf16>) -> (tensor<16x16xf32>, tensor<16x16xf16>) {
  %d = tile.dot %a, %b, %c : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E5M2> -> tensor<16x16xf32>
  %e = tile.dot %a, %b, %h : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E5M2> -> tensor<16x16xf16>
  return %d, %e : tensor<16x16xf32>, tensor<16x16xf16>
}

// -----

// K = 16 is half of the 8-bit MMAs' K: even with native dots it multiplies
// the operands extended to fp16 (m16n8k16 takes it).
// NATIVE-LABEL: func.func @dot_k16
// NATIVE: %[[A:.*]] = arith.extf %{{.*}} : tensor<16x16xf8E4M3FN> to tensor<16x16xf16>
// NATIVE: %[[B:.*]] = arith.extf %{{.*}} : tensor<16x16xf8E5M2> to tensor<16x16xf16>
// NATIVE: tile.dot %[[A]], %[[B]], %{{.*}} : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
func.func @dot_k16(%a: tensor<16x16xf8E4M3FN>, %b: tensor<16x16xf8E5M2>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %d = tile.dot %a, %b, %c : tensor<16x16xf8E4M3FN>, tensor<16x16xf8E5M2> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// -----

// The fnuz formats and fp8e4b15 have no native conversions or MMAs even
// where the OCP ones do: decoded and rounded in integer arithmetic, their
// dots multiplied as fp16. fnuz: 0x80 is NaN, the code NaN rounds to,
// and a zero result never gets the sign bit; fp8e4b15 saturates NaN to 0x7F.
// NATIVE-LABEL: func.func @fnuz_and_b15
// NATIVE-NOT: arith.extf %{{.*}} : tensor<16xf8E4M3FNUZ>
// NATIVE: arith.constant dense<128> : tensor<16xi32>
// NATIVE: arith.addf %{{.*}}, %{{.*}} : tensor<16xf32>
// NATIVE: arith.bitcast %{{.*}} : tensor<16xi8> to tensor<16xf8E4M3FNUZ>
// NATIVE-NOT: arith.truncf %{{.*}} to tensor<16xf8E5M2FNUZ>
// NATIVE: arith.bitcast %{{.*}} : tensor<16xi8> to tensor<16xf8E5M2FNUZ>
// NATIVE: arith.bitcast %{{.*}} : tensor<16xi8> to tensor<16xf8E4M3B11FNUZ>
// NATIVE: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf32>
func.func @fnuz_and_b15(%a: tensor<16xf8E4M3FNUZ>, %x: tensor<16xf32>, %p: tensor<16x32xf8E4M3B11FNUZ>, %q: tensor<32x16xf8E4M3B11FNUZ>, %c: tensor<16x16xf32>) -> (tensor<16xf8E4M3FNUZ>, tensor<16xf8E5M2FNUZ>, tensor<16xf8E4M3B11FNUZ>, tensor<16x16xf32>) {
  %s = arith.addf %a, %a : tensor<16xf8E4M3FNUZ>
  %t = arith.truncf %x : tensor<16xf32> to tensor<16xf8E5M2FNUZ>
  %u = arith.truncf %x : tensor<16xf32> to tensor<16xf8E4M3B11FNUZ>
  %d = tile.dot %p, %q, %c : tensor<16x32xf8E4M3B11FNUZ>, tensor<32x16xf8E4M3B11FNUZ> -> tensor<16x16xf32>
  return %s, %t, %u, %d : tensor<16xf8E4M3FNUZ>, tensor<16xf8E5M2FNUZ>, tensor<16xf8E4M3B11FNUZ>, tensor<16x16xf32>
}

// -----

// AMD's matrix cores (mfma=fnuz: gfx942) multiply fnuz pairs into fp32 in
// whole 32x32x16 or 16x16x32 instructions: those dots keep their operands;
// OCP ones, an fp16 accumulator and a K of 8 widen to fp16. With mfma=ocp
// (gfx950) it is the other way round.
// CHECK-LABEL: func.func @mfma
// FNUZ-LABEL: func.func @mfma
// FNUZ: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x16xf8E5M2FNUZ>, tensor<16x32xf8E4M3FNUZ> -> tensor<32x32xf32>
// FNUZ: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x16xf16>, tensor<16x32xf16> -> tensor<32x32xf32>
// FNUZ: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x16xf16>, tensor<16x32xf16> -> tensor<32x32xf16>
// FNUZ: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x8xf16>, tensor<8x32xf16> -> tensor<32x32xf32>
// OCP-LABEL: func.func @mfma
// OCP: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x16xf16>, tensor<16x32xf16> -> tensor<32x32xf32>
// OCP: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x16xf8E4M3FN>, tensor<16x32xf8E5M2> -> tensor<32x32xf32>
func.func @mfma(%a: tensor<32x16xf8E5M2FNUZ>, %b: tensor<16x32xf8E4M3FNUZ>, %p: tensor<32x16xf8E4M3FN>, %q: tensor<16x32xf8E5M2>, %s: tensor<32x8xf8E4M3FNUZ>, %t: tensor<8x32xf8E4M3FNUZ>, %c: tensor<32x32xf32>, %h: tensor<32x32xf16>) -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf16>, tensor<32x32xf32>) {
  %d = tile.dot %a, %b, %c : tensor<32x16xf8E5M2FNUZ>, tensor<16x32xf8E4M3FNUZ> -> tensor<32x32xf32>
  %e = tile.dot %p, %q, %c : tensor<32x16xf8E4M3FN>, tensor<16x32xf8E5M2> -> tensor<32x32xf32>
  %f = tile.dot %a, %b, %h : tensor<32x16xf8E5M2FNUZ>, tensor<16x32xf8E4M3FNUZ> -> tensor<32x32xf16>
  %g = tile.dot %s, %t, %c : tensor<32x8xf8E4M3FNUZ>, tensor<8x32xf8E4M3FNUZ> -> tensor<32x32xf32>
  return %d, %e, %f, %g : tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf16>, tensor<32x32xf32>
}
