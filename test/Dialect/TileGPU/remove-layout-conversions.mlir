// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu -canonicalize -tilegpu-remove-layout-conversions -canonicalize -cse | FileCheck %s

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

// -----

// The accumulator of a dot in a loop stays in the mma.sync layout across
// iterations (its zero start is made in that layout); converted once, after.
// CHECK-LABEL: func.func @accumulate
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.for {{.*}} -> (tensor<32x32xf32, #[[MMA:linear[0-9]*]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.dot {{.*}} -> tensor<32x32xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.yield
// CHECK: tilegpu.convert_layout {{.*}} : tensor<32x32xf32, #[[MMA]]> -> tensor<32x32xf32,
func.func @accumulate(%a: !tile.ptr<f16>, %out: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %i = tile.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
  %as = tile.splat %a : tensor<32x32x!tile.ptr<f16>>
  %aa = tile.addptr %as, %i : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zero) -> (tensor<32x32xf32>) : i32 {
    %x = tile.load %aa : tensor<32x32x!tile.ptr<f16>> -> tensor<32x32xf16>
    %d = tile.dot %x, %x, %c : tensor<32x32xf16>, tensor<32x32xf16> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %os = tile.splat %out : tensor<32x32x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<32x32x!tile.ptr<f32>>, tensor<32x32xi32>
  tile.store %oa, %acc : tensor<32x32x!tile.ptr<f32>>, tensor<32x32xf32>
  return
}
