// RUN: tessel-opt %s -split-input-file -canonicalize | FileCheck %s

// A splat constant is the same in every layout: its conversion folds to the
// constant in the new layout (a loop's zero accumulator, a row vector of
// -inf), so nothing moves through shared memory.
// CHECK-LABEL: func.func @splat_constant
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #[[MMA:linear[0-9]*]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.store {{.*}}, %[[Z]] : tensor<64x64x!tile.ptr<f32>, #[[MMA]]>, tensor<64x64xf32, #[[MMA]]>
#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]], block = []>
#mma = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 8], [16, 0]], block = []>
func.func @splat_constant(%out: !tile.ptr<f32>) attributes {tile.kernel, tilegpu.num_warps = 4 : i32} {
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #blocked>
  %c = tilegpu.convert_layout %z : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #mma>
  %p = tile.splat %out : tensor<64x64x!tile.ptr<f32>, #mma>
  tile.store %p, %c : tensor<64x64x!tile.ptr<f32>, #mma>, tensor<64x64xf32, #mma>
  return
}

// -----

// Other constants keep their conversion: their elements differ by position.
// CHECK-LABEL: func.func @dense_constant
// CHECK: tilegpu.convert_layout
#blocked1 = #tilegpu.linear<register = [], lane = [[1], [2], [4], [8], [16]], warp = [], block = []>
#rows = #tilegpu.linear<register = [[1], [2]], lane = [[4], [8], [16], [0], [0]], warp = [], block = []>
func.func @dense_constant(%out: !tile.ptr<i32>) attributes {tile.kernel, tilegpu.num_warps = 1 : i32} {
  %z = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]> : tensor<32xi32, #blocked1>
  %c = tilegpu.convert_layout %z : tensor<32xi32, #blocked1> -> tensor<32xi32, #rows>
  %p = tile.splat %out : tensor<32x!tile.ptr<i32>, #rows>
  tile.store %p, %c : tensor<32x!tile.ptr<i32>, #rows>, tensor<32xi32, #rows>
  return
}
