// RUN: tessel-opt %s -split-input-file -tessel-cpu-dot-micro-kernels="bf16-dot-product=true int8-dot-product=true" -canonicalize -cse | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-cpu-dot-micro-kernels | FileCheck %s --check-prefix=WIDEN

// bf16 on vdpbf16ps: K in pairs (K = 7 padded to 8 with a zero column of A),
// B packed as pairs of rows interleaved, a pair of a row of A broadcast as
// one 32-bit word; 8 rows x 2 vectors of 16 fp32 accumulators.
// CHECK-LABEL: func.func @bf16
// CHECK-DAG: %[[AP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x8xbf16>
// CHECK-DAG: %[[BP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x64xbf16>
// CHECK: vector.interleave {{.*}} : vector<16xi16> -> vector<32xi16>
// CHECK: scf.for {{.*}} = %c0 to %c4 step %c1 iter_args
// CHECK: vector.load %[[BP]]{{.*}} : memref<4x64xbf16>, vector<32xbf16>
// CHECK: vector.load %[[AP]]{{.*}} : memref<16x8xbf16>, vector<2xbf16>
// CHECK: vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// WIDEN-LABEL: func.func @bf16
// WIDEN-NOT: llvm.call_intrinsic
// WIDEN: arith.extf {{.*}} : bf16 to f32
// WIDEN: vector.fma
func.func @bf16(%a: memref<16x7xbf16>, %b: memref<7x32xbf16>, %c: memref<16x32xf32>) {
  linalg.matmul ins(%a, %b : memref<16x7xbf16>, memref<7x32xbf16>) outs(%c : memref<16x32xf32>)
  return
}

// -----

// int8 on vpdpbusd: K in groups of four, B packed so and its sign bit flipped
// (B + 128 unsigned), 128 times each row of A's sum taken off C at the end.
// CHECK-LABEL: func.func @int8
// CHECK-DAG: %[[BP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<8x64xi8>
// CHECK-DAG: %[[SUMS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16xi32>
// CHECK: vector.interleave {{.*}} : vector<16xi8> -> vector<32xi8>
// CHECK: arith.xori {{.*}} : vector<64xi8>
// CHECK: arith.shli %{{.*}}, %c7_i32
// CHECK: scf.for {{.*}} = %c0 to %c8 step %c1 iter_args
// CHECK: vector.load %[[BP]]{{.*}} : memref<8x64xi8>, vector<64xi8>
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: memref.load %[[SUMS]]
// CHECK: arith.subi {{.*}} : vector<16xi32>
// WIDEN-LABEL: func.func @int8
// WIDEN-NOT: llvm.call_intrinsic
// WIDEN: arith.extsi {{.*}} : i8 to i32
// WIDEN: arith.muli {{.*}} : vector<16xi32>
func.func @int8(%a: memref<16x32xi8>, %b: memref<32x16xi8>, %c: memref<16x16xi32>) {
  linalg.matmul ins(%a, %b : memref<16x32xi8>, memref<32x16xi8>) outs(%c : memref<16x16xi32>)
  return
}
