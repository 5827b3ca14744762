// RUN: tessel-opt %s -tessel-cpu-pipeline | FileCheck %s

// The whole CPU pipeline ends in the LLVM dialect only.
// CHECK-LABEL: llvm.func internal @scale(
// CHECK-NOT: tile.
// CHECK-NOT: scf.
// CHECK-NOT: memref.
// CHECK: llvm.func @scale_tessel_entry(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32)
func.func @scale(%p: !tile.ptr<f32>, %f: f32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %ps = tile.splat %p : tensor<64x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  %x = tile.load %pa : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  %fs = tile.splat %f : tensor<64xf32>
  %y = arith.mulf %x, %fs : tensor<64xf32>
  %e = math.exp %y : tensor<64xf32>
  tile.store %pa, %e : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  return
}
