// RUN: tessel-opt %s -split-input-file -tile-lower-descriptors | FileCheck %s

// A 2-d block: each dimension's index (offset + range) on its own axis,
// compared with the size there; the row index widened to i64 and scaled by
// the stride; both broadcast only where they combine. Masked-off elements
// load zero.
// CHECK-LABEL: func.func @load_2d
// CHECK-SAME: (%[[BASE:.*]]: !tile.ptr<f16>, %[[M:.*]]: i32, %[[N:.*]]: i32, %[[S:.*]]: i64, %[[OM:.*]]: i32, %[[ON:.*]]: i32)
// CHECK: %[[R0:.*]] = tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
// CHECK: %[[OM_S:.*]] = tile.splat %[[OM]] : tensor<32xi32>
// CHECK: %[[I0:.*]] = arith.addi %[[R0]], %[[OM_S]] : tensor<32xi32>
// CHECK: %[[I0E:.*]] = tile.expand_dims %[[I0]] {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
// CHECK: %[[Z0:.*]] = arith.constant dense<0> : tensor<32x1xi32>
// CHECK: %[[GE0:.*]] = arith.cmpi sge, %[[I0E]], %[[Z0]] : tensor<32x1xi32>
// CHECK: %[[M_S:.*]] = tile.splat %[[M]] : tensor<32x1xi32>
// CHECK: %[[LT0:.*]] = arith.cmpi slt, %[[I0E]], %[[M_S]] : tensor<32x1xi32>
// CHECK: %[[IN0:.*]] = arith.andi %[[GE0]], %[[LT0]] : tensor<32x1xi1>
// CHECK: %[[W0:.*]] = arith.extsi %[[I0E]] : tensor<32x1xi32> to tensor<32x1xi64>
// CHECK: %[[S_S:.*]] = tile.splat %[[S]] : tensor<32x1xi64>
// CHECK: %[[ROW:.*]] = arith.muli %[[W0]], %[[S_S]] : tensor<32x1xi64>
// CHECK: %[[P0:.*]] = tile.splat %[[BASE]] : tensor<32x1x!tile.ptr<f16>>
// CHECK: %[[PTR0:.*]] = tile.addptr %[[P0]], %[[ROW]] : tensor<32x1x!tile.ptr<f16>>, tensor<32x1xi64>
// CHECK: %[[R1:.*]] = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
// CHECK: %[[I1:.*]] = arith.addi %[[R1]], %{{.*}} : tensor<64xi32>
// CHECK: %[[I1E:.*]] = tile.expand_dims %[[I1]] {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
// CHECK: %[[IN1:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<1x64xi1>
// CHECK: %[[MASK0:.*]] = tile.broadcast %[[IN0]] : tensor<32x1xi1> -> tensor<32x64xi1>
// CHECK: %[[MASK1:.*]] = tile.broadcast %[[IN1]] : tensor<1x64xi1> -> tensor<32x64xi1>
// CHECK: %[[MASK:.*]] = arith.andi %[[MASK0]], %[[MASK1]] : tensor<32x64xi1>
// CHECK-NOT: arith.extsi
// CHECK: %[[PB:.*]] = tile.broadcast %[[PTR0]] : tensor<32x1x!tile.ptr<f16>> -> tensor<32x64x!tile.ptr<f16>>
// CHECK: %[[COL:.*]] = tile.broadcast %[[I1E]] : tensor<1x64xi32> -> tensor<32x64xi32>
// CHECK: %[[PTRS:.*]] = tile.addptr %[[PB]], %[[COL]] : tensor<32x64x!tile.ptr<f16>>, tensor<32x64xi32>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
// CHECK: %[[X:.*]] = tile.load %[[PTRS]] mask %[[MASK]] : tensor<32x64xi1> other %[[ZERO]] : tensor<32x64xf16>
// CHECK-NOT: tile.descriptor_load
// CHECK: return %[[X]]
func.func @load_2d(%base: !tile.ptr<f16>, %m: i32, %n: i32, %s: i64, %om: i32, %on: i32) -> tensor<32x64xf16> {
  %x = tile.descriptor_load %base[%om, %on] shape [%m, %n] strides [%s] : !tile.ptr<f16> -> tensor<32x64xf16>
  return %x : tensor<32x64xf16>
}

// -----

// NaN padding; a 1-d block has no strides and no expanded axes.
// CHECK-LABEL: func.func @load_1d_nan
// CHECK: %[[R:.*]] = tile.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
// CHECK-NOT: tile.expand_dims
// CHECK-NOT: arith.extsi
// CHECK: %[[PTRS:.*]] = tile.addptr %{{.*}}, %{{.*}} : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
// CHECK: %[[NAN:.*]] = arith.constant dense<0x7FC00000> : tensor<16xf32>
// CHECK: tile.load %[[PTRS]] mask %{{.*}} : tensor<16xi1> other %[[NAN]] : tensor<16xf32>
func.func @load_1d_nan(%base: !tile.ptr<f32>, %n: i32, %o: i32) -> tensor<16xf32> {
  %x = tile.descriptor_load %base[%o] shape [%n] strides [] nan_padding {tensor_map = 0 : i32} : !tile.ptr<f32> -> tensor<16xf32>
  return %x : tensor<16xf32>
}

// -----

// A 3-d store: two strided dimensions, the middle index expanded on both
// sides; the value is stored where the mask holds.
// CHECK-LABEL: func.func @store_3d
// CHECK-SAME: %[[V:[^:]*]]: tensor<2x4x16xi8>
// CHECK: tile.expand_dims %{{.*}} {axis = 1 : i32} : tensor<2xi32> -> tensor<2x1xi32>
// CHECK: tile.expand_dims %{{.*}} {axis = 2 : i32} : tensor<2x1xi32> -> tensor<2x1x1xi32>
// CHECK: tile.expand_dims %{{.*}} {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
// CHECK: tile.expand_dims %{{.*}} {axis = 2 : i32} : tensor<1x4xi32> -> tensor<1x4x1xi32>
// CHECK: arith.muli %{{.*}}, %{{.*}} : tensor<1x4x1xi64>
// CHECK: tile.expand_dims %{{.*}} {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
// CHECK: tile.expand_dims %{{.*}} {axis = 1 : i32} : tensor<1x16xi32> -> tensor<1x1x16xi32>
// CHECK: %[[PTRS:.*]] = tile.addptr %{{.*}}, %{{.*}} : tensor<2x4x16x!tile.ptr<i8>>, tensor<2x4x16xi32>
// CHECK: tile.store %[[PTRS]], %[[V]] mask %{{.*}} : tensor<2x4x16xi1> : tensor<2x4x16x!tile.ptr<i8>>, tensor<2x4x16xi8>
// CHECK-NOT: tile.descriptor_store
func.func @store_3d(%base: !tile.ptr<i8>, %a: i32, %b: i32, %c: i32, %s0: i64, %s1: i64, %o0: i32, %o1: i32, %o2: i32, %v: tensor<2x4x16xi8>) {
  tile.descriptor_store %base[%o0, %o1, %o2], %v shape [%a, %b, %c] strides [%s0, %s1] : !tile.ptr<i8>, tensor<2x4x16xi8>
  return
}
