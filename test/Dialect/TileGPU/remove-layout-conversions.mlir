// RUN: tessel-opt %s -convert-tile-to-tilegpu -canonicalize -tilegpu-remove-layout-conversions -canonicalize -cse | FileCheck %s

// 2-D addresses from 1-D ranges: expand_dims wants each range in a slice of
// the 2-D layout, which the ranges (and the index arithmetic on them) are
// recomputed in; no conversion is left, and the loaded block is untouched.
// CHECK-LABEL: func.func @copy_2d
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.load
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.store
func.func @copy_2d(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %stride: i32) attributes {tile.kernel} {
  %rm = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %rn = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %s = tile.splat %stride : tensor<32xi32>
  %rows = arith.muli %rm, %s : tensor<32xi32>
  %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %c2 = tile.expand_dims %rn {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tile.broadcast %r2 : tensor<32x1xi32> -> tensor<32x64xi32>
  %cb = tile.broadcast %c2 : tensor<1x64xi32> -> tensor<32x64xi32>
  %off = arith.addi %rb, %cb : tensor<32x64xi32>
  %xs = tile.splat %x : tensor<32x64x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %off : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>
  %v = tile.load %xa : tensor<32x64x!tile.ptr<f32>> -> tensor<32x64xf32>
  %ys = tile.splat %y : tensor<32x64x!tile.ptr<f32>>
  %ya = tile.addptr %ys, %off : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>
  tile.store %ya, %v : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xf32>
  return
}
