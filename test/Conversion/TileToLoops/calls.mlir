// RUN: tessel-opt %s -convert-tile-to-loops | FileCheck %s

// A @jit(noinline=True) function stays a function on the CPU, kept out of
// line (llvm.no_inline, made LLVM's noinline by the CPU compiler): its block
// parameter and its results are buffers the caller owns (a scalar result a
// one-element buffer), then the program ids and the grid. The caller reads
// the loaded block into a buffer for the call and the results out of theirs.

// CHECK-LABEL: func.func private @twice_0
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>, %{{.*}}: f32, %[[Y:.*]]: memref<16xf32>, %[[M:.*]]: memref<1xf32>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32) attributes {llvm.no_inline}
// CHECK: memref.load %[[X]]
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: memref.store %{{.*}}, %[[M]]
// CHECK: return
// CHECK-LABEL: func.func private @kernel
// CHECK-DAG: %[[MB:.*]] = memref.alloca() {{.*}} : memref<1xf32>
// CHECK-DAG: %[[YB:.*]] = memref.alloca() {{.*}} : memref<16xf32>
// CHECK-DAG: %[[XB:.*]] = memref.alloca() {{.*}} : memref<16xf32>
// CHECK: llvm.load
// CHECK: memref.store %{{.*}}, %[[XB]]
// CHECK: call @twice_0(%[[XB]], %{{.*}}, %[[YB]], %[[MB]], %arg2, %arg3, %arg4, %arg5, %arg6, %arg7)
// CHECK: memref.load %[[MB]]
// CHECK: memref.load %[[YB]]
// CHECK: llvm.store
func.func private @twice_0(%x: tensor<16xf32>, %s: f32) -> (tensor<16xf32>, f32) {
  %c = tile.splat %s : tensor<16xf32>
  %y = arith.mulf %x, %c : tensor<16xf32>
  %m = tile.reduce %y {axis = 0 : i32} : tensor<16xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maximumf %a, %b : f32
    tile.reduce.return %t : f32
  }
  return %y, %m : tensor<16xf32>, f32
}

func.func @kernel(%in: !tile.ptr<f32>, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %ps = tile.splat %in : tensor<16x!tile.ptr<f32>>
  %p = tile.addptr %ps, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %x = tile.load %p : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  %two = arith.constant 2.0 : f32
  %y:2 = call @twice_0(%x, %two) : (tensor<16xf32>, f32) -> (tensor<16xf32>, f32)
  %os = tile.splat %out : tensor<16x!tile.ptr<f32>>
  %o = tile.addptr %os, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  tile.store %o, %y#0 : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  tile.store %out, %y#1 : !tile.ptr<f32>, f32
  return
}
