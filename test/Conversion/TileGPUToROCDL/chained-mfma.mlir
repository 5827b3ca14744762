// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 threads-per-warp=64 compute-capability=0 mfma=true" -canonicalize -tilegpu-remove-layout-conversions -canonicalize -convert-tilegpu-to-rocdl -canonicalize -cse | FileCheck %s

// Chained MFMA dots (attention's two) take the transposed accumulator
// layout: a lane holds a row of the scores. The first dot stages both
// operands: Q in rows along K (K = 16: each half of the lanes reads its 8
// of K in one 16-byte load, four per instruction), K (whose registers run
// along N) in rows along N, read a half at a time; it issues each
// instruction with its operands' registers swapped (B's fragment first: it
// computes D^T = B^T A^T). Its result, rounded to fp16, is the second dot's
// A operand in place: that dot stages only V (one pair of barriers) and
// builds A's fragments from the lane's own registers, four halves per K step
// of 8.
// CHECK-LABEL: llvm.func @chained(
// CHECK: rocdl.s.barrier
// CHECK: rocdl.s.barrier
// CHECK: %[[Q:.*]] = llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xi16>
// CHECK: %[[Q0:.*]] = llvm.shufflevector %[[Q]], %[[Q]] [0, 1, 2, 3]
// CHECK-COUNT-3: llvm.load {{.*}} {alignment = 2 : i64} : !llvm.ptr<3> -> i16
// CHECK: llvm.load {{.*}} {alignment = 2 : i64} : !llvm.ptr<3> -> i16
// CHECK-NEXT: %[[K0:.*]] = llvm.insertelement
// CHECK-NEXT: %[[KH:.*]] = llvm.bitcast %[[K0]] : vector<4xi16> to vector<4xf16>
// CHECK-NEXT: %[[QH:.*]] = llvm.bitcast %[[Q0]] : vector<4xi16> to vector<4xf16>
// CHECK-NEXT: rocdl.mfma.f32.32x32x8f16 %[[KH]], %[[QH]],
// CHECK: llvm.shufflevector %[[Q]], %[[Q]] [4, 5, 6, 7]
// CHECK: rocdl.mfma.f32.32x32x8f16
// CHECK: rocdl.s.barrier
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK-COUNT-3: llvm.insertelement {{.*}} : vector<4xi16>
// CHECK: %[[P:.*]] = llvm.insertelement {{.*}} : vector<4xi16>
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> i16
// CHECK: %[[VH:.*]] = llvm.bitcast %{{.*}} : vector<4xi16> to vector<4xf16>
// CHECK-NEXT: %[[PH:.*]] = llvm.bitcast %[[P]] : vector<4xi16> to vector<4xf16>
// CHECK-NEXT: rocdl.mfma.f32.32x32x8f16 %[[VH]], %[[PH]],
// CHECK-COUNT-3: rocdl.mfma.f32.32x32x8f16
// CHECK-NOT: rocdl.mfma
func.func @chained(%s: f16, %t: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %q = tile.splat %s : tensor<64x16xf16>
  %k = tile.splat %t : tensor<16x32xf16>
  %v = tile.splat %s : tensor<32x64xf16>
  %z1 = arith.constant dense<0.0> : tensor<64x32xf32>
  %z2 = arith.constant dense<0.0> : tensor<64x64xf32>
  %qk = tile.dot %q, %k, %z1 : tensor<64x16xf16>, tensor<16x32xf16> -> tensor<64x32xf32>
  %p = arith.truncf %qk : tensor<64x32xf32> to tensor<64x32xf16>
  %o = tile.dot %p, %v, %z2 : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  tile.store %os, %o : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
