// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4 compute-capability=80" -canonicalize | FileCheck %s

// Chained dots (attention: the second takes the first's result as A) put
// every warp along M, 16 rows each, so that whole rows sit in one warp; a
// lone dot splits its warps 2x2.
// CHECK-DAG: #[[S:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [8, 0], [0, 8], [0, 16]], lane = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[}}[16, 0], [32, 0]], block = []>
// CHECK-DAG: #[[O:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[}}[16, 0], [32, 0]], block = []>
// CHECK-LABEL: func.func @chained
// CHECK: tile.dot {{.*}} -> tensor<64x32xf32, #[[S]]>
// CHECK: tile.dot {{.*}} -> tensor<64x64xf32, #[[O]]>
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

// -----

// CHECK: #[[L:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [8, 0], [0, 16], [0, 32], [32, 0]], lane = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[}}[0, 8], [16, 0]], block = []>
// CHECK-LABEL: func.func @lone
// CHECK: tile.dot {{.*}} -> tensor<64x64xf32, #[[L]]>
func.func @lone(%s: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<64x32xf16>
  %b = tile.splat %s : tensor<32x64xf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %a, %b, %z : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
