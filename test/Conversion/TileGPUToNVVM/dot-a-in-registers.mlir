// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 compute-capability=80" -canonicalize -tilegpu-remove-layout-conversions -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// The second of two chained dots takes its A (the first's result, rounded
// to fp16, in the accumulator layout with every warp along M) straight from
// registers: only the first dot's A is read with ldmatrix (4 K steps of 16
// rows per warp), the second's fragments are pairs of its own registers.
// CHECK-LABEL: llvm.func @chained
// CHECK-COUNT-4: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4
// CHECK-NOT: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK: llvm.fptrunc
// CHECK: llvm.insertelement {{.*}} : vector<2xf16>
// CHECK-NOT: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK: nvvm.mma.sync
func.func @chained(%s: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %q = tile.splat %s : tensor<64x64xf16>
  %k = tile.splat %s : tensor<64x32xf16>
  %v = tile.splat %s : tensor<32x64xf16>
  %z1 = arith.constant dense<0.0> : tensor<64x32xf32>
  %z2 = arith.constant dense<0.0> : tensor<64x64xf32>
  %qk = tile.dot %q, %k, %z1 : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
  %p = arith.truncf %qk : tensor<64x32xf32> to tensor<64x32xf16>
  %o = tile.dot %p, %v, %z2 : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %o : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
