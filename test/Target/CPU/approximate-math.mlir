// RUN: tessel-opt %s -tessel-cpu-approximate-math | FileCheck %s
// RUN: tessel-opt %s -tessel-cpu-approximate-math=scalef=true | FileCheck %s --check-prefix=SCALEF

// The libm declaration erf64 below needs (inserted first in the module).
// CHECK: func.func private @erf(f64) -> f64

// exp becomes polynomial arithmetic (no math.exp, no libm call) that the loop
// vectorizer can handle; sqrt is left to LLVM's native instruction.
// CHECK-LABEL: func.func @exp
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: return
func.func @exp(%x: f32) -> f32 {
  %y = math.exp %x : f32
  return %y : f32
}

// Results below 2^-126 stay subnormals: 2^n is applied in two normal halves
// (n >> 1 and n - (n >> 1)), one rounding at the last multiply.
// CHECK-LABEL: func.func @exp_subnormal
// CHECK: %[[K:.*]] = arith.fptosi %{{.*}} : f32 to i32
// CHECK: %[[K1:.*]] = arith.shrsi %[[K]], %{{.*}} : i32
// CHECK: arith.subi %[[K]], %[[K1]] : i32
// CHECK: %[[HALF:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.mulf %[[HALF]], %{{.*}} : f32
// With AVX-512 (scalef), 2^n is one llvm.ldexp, LLVM's vscalefps: it rounds
// once too.
// SCALEF-LABEL: func.func @exp_subnormal
// SCALEF: %[[K:.*]] = arith.fptosi %{{.*}} : f32 to i32
// SCALEF-NOT: arith.shrsi
// SCALEF: llvm.intr.ldexp(%{{.*}}, %[[K]]) : (f32, i32) -> f32
func.func @exp_subnormal(%x: f32) -> f32 {
  %y = math.exp %x : f32
  return %y : f32
}

// log of a subnormal: the operand times 2^24, the result minus 24 ln 2.
// CHECK-LABEL: func.func @log_subnormal
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: %[[ARG:.*]] = arith.select %[[SMALL]]
// CHECK-NOT: math.log
// CHECK: arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[SMALL]]
func.func @log_subnormal(%x: f32) -> f32 {
  %y = math.log %x : f32
  return %y : f32
}

// CHECK-LABEL: func.func @sqrt
// CHECK: math.sqrt
func.func @sqrt(%x: f32) -> f32 {
  %y = math.sqrt %x : f32
  return %y : f32
}

// erf on f64 calls libm (no polynomial here, no LLVM intrinsic).
// CHECK-LABEL: func.func @erf64
// CHECK: call @erf(%{{.*}}) : (f64) -> f64
func.func @erf64(%x: f64) -> f64 {
  %y = math.erf %x : f64
  return %y : f64
}

// sin and cos stay as they are (calls to libm later): the polynomials lose
// accuracy as the argument grows.
// CHECK-LABEL: func.func @sin_cos
// CHECK: math.sin
// CHECK: math.cos
func.func @sin_cos(%x: f32) -> f32 {
  %s = math.sin %x : f32
  %c = math.cos %x : f32
  %y = arith.addf %s, %c : f32
  return %y : f32
}
