// RUN: tessel-opt %s -tessel-cpu-approximate-math | FileCheck %s

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

// CHECK-LABEL: func.func @sqrt
// CHECK: math.sqrt
func.func @sqrt(%x: f32) -> f32 {
  %y = math.sqrt %x : f32
  return %y : f32
}
