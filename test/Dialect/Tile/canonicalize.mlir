// RUN: tessel-opt %s -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @fold_splat_constant
// CHECK: %[[C:.*]] = arith.constant dense<3.000000e+00> : tensor<16xf32>
// CHECK: return %[[C]]
func.func @fold_splat_constant() -> tensor<16xf32> {
  %c = arith.constant 3.0 : f32
  %s = tile.splat %c : tensor<16xf32>
  return %s : tensor<16xf32>
}

// CHECK-LABEL: func.func @fold_addptr_zero
// CHECK-SAME: (%[[P:.*]]: tensor<8x!tile.ptr<f32>>)
// CHECK-NOT: tile.addptr
// CHECK: return %[[P]]
func.func @fold_addptr_zero(%p: tensor<8x!tile.ptr<f32>>) -> tensor<8x!tile.ptr<f32>> {
  %z = arith.constant dense<0> : tensor<8xi32>
  %q = tile.addptr %p, %z : tensor<8x!tile.ptr<f32>>, tensor<8xi32>
  return %q : tensor<8x!tile.ptr<f32>>
}

// CHECK-LABEL: func.func @fold_identity_views
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @fold_identity_views(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %b = tile.broadcast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %r = tile.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %b, %r : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @fold_broadcast_of_splat
// CHECK: arith.constant dense<1> : tensor<4x8xi32>
// CHECK-NOT: tile.broadcast
func.func @fold_broadcast_of_splat() -> tensor<4x8xi32> {
  %c = arith.constant dense<1> : tensor<4x1xi32>
  %b = tile.broadcast %c : tensor<4x1xi32> -> tensor<4x8xi32>
  return %b : tensor<4x8xi32>
}

// A store has a write effect: canonicalization must keep it.
// CHECK-LABEL: func.func @keep_store
// CHECK: tile.store
func.func @keep_store(%p: !tile.ptr<f32>, %v: f32) {
  tile.store %p, %v : !tile.ptr<f32>, f32
  return
}
