// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4" -canonicalize | FileCheck %s

// Element-wise chains share their shape's default layout: 1024 elements on
// 4 warps are 4 consecutive elements per thread (registers 1, 2), lanes then
// warps along the block, twice (register 512); no conversions.
// CHECK: #[[B:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[1], [2], [512]], lane = {{\[}}[4], [8], [16], [32], [64]], warp = {{\[}}[128], [256]], block = []>
// CHECK-LABEL: func.func @vector_add
// CHECK-SAME: tilegpu.num_warps = 4 : i32
// CHECK: tile.make_range {{.*}} : tensor<1024xi32, #[[B]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: arith.addf {{.*}} : tensor<1024xf32, #[[B]]>
func.func @vector_add(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %o: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %xp = tile.splat %x : tensor<1024x!tile.ptr<f32>>
  %xa = tile.addptr %xp, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %yp = tile.splat %y : tensor<1024x!tile.ptr<f32>>
  %ya = tile.addptr %yp, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %op = tile.splat %o : tensor<1024x!tile.ptr<f32>>
  %oa = tile.addptr %op, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %xv = tile.load %xa : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %yv = tile.load %ya : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %sum = arith.addf %xv, %yv : tensor<1024xf32>
  tile.store %oa, %sum : tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>
  return
}

// -----

// A row reduction keeps each row's registers; its result (a slice of the
// 2-D layout, lanes along the rows holding copies) converts to the 1-D
// default. expand_dims and broadcast take the layouts that keep elements in
// place.
// CHECK-DAG: #[[RED:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[8]], lane = {{\[}}[0], [0], [0], [0], [1]], warp = {{\[}}[2], [4]], block = []>
// CHECK-LABEL: func.func @row_sums
// CHECK: %[[S:.*]] = tile.reduce {{.*}} -> tensor<16xf32, #[[RED]]>
// CHECK: tilegpu.convert_layout %[[S]] : tensor<16xf32, #[[RED]]> -> tensor<16xf32, #[[D1:linear[0-9]*]]>
// CHECK: tile.expand_dims {{.*}} : tensor<16xf32, #{{linear[0-9]*}}> -> tensor<16x1xf32,
// CHECK: tile.broadcast
func.func @row_sums(%p: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %i = tile.reshape %r : tensor<1024xi32> -> tensor<16x64xi32>
  %ps = tile.splat %p : tensor<16x64x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %i : tensor<16x64x!tile.ptr<f32>>, tensor<16x64xi32>
  %x = tile.load %pa : tensor<16x64x!tile.ptr<f32>> -> tensor<16x64xf32>
  %s = "tile.reduce"(%x) ({
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tile.reduce.return %t : f32
  }) {axis = 1 : i32} : (tensor<16x64xf32>) -> tensor<16xf32>
  %e = tile.expand_dims %s {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
  %b = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
  %d = arith.subf %x, %b : tensor<16x64xf32>
  tile.store %pa, %d : tensor<16x64x!tile.ptr<f32>>, tensor<16x64xf32>
  return
}

// -----

// A scan along the rows runs in the scan layout: lanes over the 16 rows,
// the 2 lanes left over along the axis, each holding 32 consecutive elements
// of a row in registers; the warps, with nothing left to cover, hold copies.
// The load converts into it.
// CHECK-DAG: #[[SCAN:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], lane = {{\[}}[1, 0], [2, 0], [4, 0], [8, 0], [0, 32]], warp = {{\[}}[0, 0], [0, 0]], block = []>
// CHECK-LABEL: func.func @row_cumsum
// CHECK: %[[X:.*]] = tilegpu.convert_layout %{{.*}} -> tensor<16x64xf32, #[[SCAN]]>
// CHECK: tile.scan %[[X]] {axis = 1 : i32} : tensor<16x64xf32, #[[SCAN]]> -> tensor<16x64xf32, #[[SCAN]]>
func.func @row_cumsum(%p: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %i = tile.reshape %r : tensor<1024xi32> -> tensor<16x64xi32>
  %ps = tile.splat %p : tensor<16x64x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %i : tensor<16x64x!tile.ptr<f32>>, tensor<16x64xi32>
  %x = tile.load %pa : tensor<16x64x!tile.ptr<f32>> -> tensor<16x64xf32>
  %s = tile.scan %x {axis = 1 : i32} : tensor<16x64xf32> -> tensor<16x64xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tile.scan.return %t : f32
  }
  tile.store %pa, %s : tensor<16x64x!tile.ptr<f32>>, tensor<16x64xf32>
  return
}
