// RUN: tessel-opt %s -split-input-file -tessel-cpu-narrow-floats | FileCheck %s

// bf16 arithmetic computes on fp32 values: the operands' bits moved up, the
// result rounded in integer arithmetic; no bf16 value is left (i16 bits).
// CHECK-LABEL: func.func @mul(%{{.*}}: i16, %{{.*}}: i16) -> i16
// CHECK-NOT: bf16
// CHECK: arith.shli %{{.*}}, %c16_i32
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.addi %{{.*}}, %c32767_i32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK-NOT: bf16
func.func @mul(%a: bf16, %b: bf16) -> bf16 {
  %m = arith.mulf %a, %b : bf16
  return %m : bf16
}

// -----

// Comparisons and math ops on bf16 too; constants become their bits.
// CHECK-LABEL: func.func @cmp_sqrt(%{{.*}}: i16) -> (i1, i16)
// CHECK-DAG: arith.constant 16256 : i16
// CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK: math.sqrt %{{.*}} : f32
// CHECK-NOT: bf16
func.func @cmp_sqrt(%a: bf16) -> (i1, bf16) {
  %one = arith.constant 1.0 : bf16
  %c = arith.cmpf ogt, %a, %one : bf16
  %s = math.sqrt %a : bf16
  %r = arith.select %c, %s, %one : bf16
  return %c, %r : i1, bf16
}

// -----

// A bf16 value that crosses a branch, kept in memory buffers, is its bits.
// CHECK-LABEL: func.func @carried
// CHECK: memref.alloca() : memref<4xi16>
// CHECK: scf.if %{{.*}} -> (i16)
// CHECK-NOT: bf16
func.func @carried(%p: !llvm.ptr, %m: i1) {
  %buf = memref.alloca() : memref<4xbf16>
  %v = scf.if %m -> (bf16) {
    %l = llvm.load %p : !llvm.ptr -> bf16
    scf.yield %l : bf16
  } else {
    %z = arith.constant 0.0 : bf16
    scf.yield %z : bf16
  }
  %c0 = arith.constant 0 : index
  memref.store %v, %buf[%c0] : memref<4xbf16>
  return
}

// -----

// fma on fp16: the exact fp64 product, a two-sum rounded to odd, fp32
// rounded to odd, then fp16 (one rounding in all).
// CHECK-LABEL: func.func @fma16
// CHECK: arith.extf %{{.*}} : f16 to f64
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK: arith.addf %[[P]], %{{.*}} : f64
// CHECK: arith.ori
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: math.fma
func.func @fma16(%a: f16, %b: f16, %c: f16) -> f16 {
  %r = math.fma %a, %b, %c : f16
  return %r : f16
}

// -----

// fp64 to fp16 through fp32 rounded to odd (no __truncdfhf2); fp16 and fp32
// arithmetic is left alone.
// CHECK-LABEL: func.func @f64_to_f16
// CHECK: %[[F:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.ori %{{.*}}, %c1_i32
// CHECK: %[[ODD:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.truncf %[[ODD]] : f32 to f16
// CHECK: arith.addf %{{.*}}, %{{.*}} : f16
func.func @f64_to_f16(%x: f64, %h: f16) -> f16 {
  %a = arith.truncf %x : f64 to f16
  %s = arith.addf %a, %h : f16
  return %s : f16
}
