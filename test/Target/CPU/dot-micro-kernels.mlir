// RUN: tessel-opt %s -split-input-file -tessel-cpu-dot-micro-kernels -canonicalize -cse | FileCheck %s

// fp32, N = 64: 8 rows by two 16-lane vectors of C stay in registers while k
// runs; each k step loads two vectors of a row of B and broadcasts eight
// elements of a column of A into 16 fused multiply-adds.
// CHECK-LABEL: func.func @fp32
// CHECK-SAME: (%[[A:.*]]: memref<32x16xf32>, %[[B:.*]]: memref<16x64xf32>, %[[C:.*]]: memref<32x64xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: scf.for %[[I:.*]] = %c0 to %c32 step %c8
// CHECK: scf.for %[[J:.*]] = %c0 to %c64 step %c32
// CHECK-COUNT-16: vector.load %[[C]]{{.*}} : memref<32x64xf32>, vector<16xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c16 step %c1 iter_args
// CHECK-COUNT-2: vector.load %[[B]][%[[K]], {{.*}} : memref<16x64xf32>, vector<16xf32>
// CHECK: memref.load %[[A]][%[[I]], %[[K]]]
// CHECK: vector.broadcast
// CHECK-COUNT-16: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-16: vector.store {{.*}}, %[[C]]
func.func @fp32(%a: memref<32x16xf32>, %b: memref<16x64xf32>, %c: memref<32x64xf32>) {
  linalg.matmul ins(%a, %b : memref<32x16xf32>, memref<16x64xf32>) outs(%c : memref<32x64xf32>)
  return
}

// -----

// int32 (an int8 dot's accumulator type), N = 8: one 256-bit vector a row,
// four rows (M = 12), multiplied and added (the one-trip column loop folds).
// CHECK-LABEL: func.func @int32
// CHECK: scf.for %{{.*}} = %c0 to %c12 step %c4
// CHECK-COUNT-4: vector.load {{.*}} : memref<12x8xi32>, vector<8xi32>
// CHECK: scf.for {{.*}} iter_args
// CHECK-COUNT-4: arith.muli {{.*}} : vector<8xi32>
// CHECK-NOT: vector.fma
func.func @int32(%a: memref<12x4xi32>, %b: memref<4x8xi32>, %c: memref<12x8xi32>) {
  linalg.matmul ins(%a, %b : memref<12x4xi32>, memref<4x8xi32>) outs(%c : memref<12x8xi32>)
  return
}

// -----

// N = 3: no vector divides a row, so i-k-j loops over scalars.
// CHECK-LABEL: func.func @ragged
// CHECK: scf.for %[[I:.*]] = %c0 to %c5 step %c1
// CHECK: scf.for %[[K:.*]] = %c0 to %c7 step %c1
// CHECK: memref.load %{{.*}}[%[[I]], %[[K]]]
// CHECK: scf.for %[[J:.*]] = %c0 to %c3 step %c1
// CHECK: math.fma
// CHECK: memref.store %{{.*}}[%[[I]], %[[J]]]
// CHECK-NOT: vector
func.func @ragged(%a: memref<5x7xf64>, %b: memref<7x3xf64>, %c: memref<5x3xf64>) {
  linalg.matmul ins(%a, %b : memref<5x7xf64>, memref<7x3xf64>) outs(%c : memref<5x3xf64>)
  return
}

// -----

// fp16 operands are widened to fp32 buffers at the function's start, then
// multiplied as fp32.
// CHECK-LABEL: func.func @widened
// CHECK-DAG: %[[WA:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x16xf32>
// CHECK-DAG: %[[WB:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: memref.load %[[WA]]
// CHECK-COUNT-16: vector.fma
func.func @widened(%a: memref<16x16xf16>, %b: memref<16x32xf16>, %c: memref<16x32xf32>) {
  linalg.matmul ins(%a, %b : memref<16x16xf16>, memref<16x32xf16>) outs(%c : memref<16x32xf32>)
  return
}
