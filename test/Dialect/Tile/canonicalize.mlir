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

// A transposed load that is a dot's operand reads the transposed block
// directly: its pointers, mask and `other` are transposed instead (so that a
// dot's b.T is a load).
// CHECK-LABEL: func.func @load_transposed
// CHECK-SAME: (%[[P:[^:]*]]: tensor<16x32x!tile.ptr<f16>>, %[[M:[^:]*]]: tensor<16x32xi1>, %[[O:[^:]*]]: tensor<16x32xf16>, %[[A:[^:]*]]: tensor<16x32xf16>)
// CHECK: %[[PT:.*]] = tile.trans %[[P]] {order = array<i32: 1, 0>} : tensor<16x32x!tile.ptr<f16>> -> tensor<32x16x!tile.ptr<f16>>
// CHECK-NEXT: %[[MT:.*]] = tile.trans %[[M]] {order = array<i32: 1, 0>} : tensor<16x32xi1> -> tensor<32x16xi1>
// CHECK-NEXT: %[[OT:.*]] = tile.trans %[[O]] {order = array<i32: 1, 0>} : tensor<16x32xf16> -> tensor<32x16xf16>
// CHECK-NEXT: %[[X:.*]] = tile.load %[[PT]] mask %[[MT]] : tensor<32x16xi1> other %[[OT]] : tensor<32x16xf16> cache = cg : tensor<32x16x!tile.ptr<f16>> -> tensor<32x16xf16>
// CHECK-NEXT: tile.dot %[[A]], %[[X]]
func.func @load_transposed(%p: tensor<16x32x!tile.ptr<f16>>, %m: tensor<16x32xi1>, %o: tensor<16x32xf16>, %a: tensor<16x32xf16>) -> tensor<16x16xf32> {
  %x = tile.load %p mask %m : tensor<16x32xi1> other %o : tensor<16x32xf16> cache = cg : tensor<16x32x!tile.ptr<f16>> -> tensor<16x32xf16>
  %t = tile.trans %x {order = array<i32: 1, 0>} : tensor<16x32xf16> -> tensor<32x16xf16>
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = tile.dot %a, %t, %zero : tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// A load with another use, a volatile one, or a transpose that is not a dot's
// operand (a transposing copy reads along rows) stays.
// CHECK-LABEL: func.func @load_transposed_kept
// CHECK: %[[X:.*]] = tile.load
// CHECK: tile.trans %[[X]]
// CHECK: %[[V:.*]] = tile.load {{.*}} volatile
// CHECK: tile.trans %[[V]]
// CHECK: %[[C:.*]] = tile.load
// CHECK: tile.trans %[[C]]
func.func @load_transposed_kept(%p: tensor<16x32x!tile.ptr<f16>>, %a: tensor<16x32xf16>) -> (tensor<16x32xf16>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<32x16xf16>) {
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %x = tile.load %p : tensor<16x32x!tile.ptr<f16>> -> tensor<16x32xf16>
  %t = tile.trans %x {order = array<i32: 1, 0>} : tensor<16x32xf16> -> tensor<32x16xf16>
  %d = tile.dot %a, %t, %zero : tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf32>
  %v = tile.load %p volatile : tensor<16x32x!tile.ptr<f16>> -> tensor<16x32xf16>
  %u = tile.trans %v {order = array<i32: 1, 0>} : tensor<16x32xf16> -> tensor<32x16xf16>
  %e = tile.dot %a, %u, %zero : tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf32>
  %c = tile.load %p : tensor<16x32x!tile.ptr<f16>> -> tensor<16x32xf16>
  %w = tile.trans %c {order = array<i32: 1, 0>} : tensor<16x32xf16> -> tensor<32x16xf16>
  return %x, %d, %e, %w : tensor<16x32xf16>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<32x16xf16>
}

// CHECK-LABEL: func.func @fold_trans_splat
// CHECK: %[[C:.*]] = arith.constant dense<0.000000e+00> : tensor<32x16xf16>
// CHECK: return %[[C]]
func.func @fold_trans_splat() -> tensor<32x16xf16> {
  %c = arith.constant dense<0.0> : tensor<16x32xf16>
  %t = tile.trans %c {order = array<i32: 1, 0>} : tensor<16x32xf16> -> tensor<32x16xf16>
  return %t : tensor<32x16xf16>
}

// -----

// A sum with a dot that starts from zero accumulates into the dot, either
// operand order, floats and integers; not when the dot starts elsewhere or
// its result is read again.
// CHECK-LABEL: func.func @accumulate_into_dot
// CHECK-SAME: (%[[A:[^:]*]]: tensor<16x16xf16>, %[[B:[^:]*]]: tensor<16x16xf16>, %[[ACC:[^:]*]]: tensor<16x16xf32>, %[[IA:[^:]*]]: tensor<16x16xi8>, %[[IACC:[^:]*]]: tensor<16x16xi32>)
// CHECK: %[[D1:.*]] = tile.dot %[[A]], %[[B]], %[[ACC]] : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
// CHECK: %[[D2:.*]] = tile.dot %[[A]], %[[B]], %[[D1]] input_precision = tf32
// CHECK: %[[I:.*]] = tile.dot %[[IA]], %[[IA]], %[[IACC]] : tensor<16x16xi8>, tensor<16x16xi8> -> tensor<16x16xi32>
// CHECK: %[[KEPT:.*]] = tile.dot %[[A]], %[[B]], %[[ACC]]
// CHECK: %[[SUM:.*]] = arith.addf %[[KEPT]], %[[D2]]
// CHECK: %[[TWICE:.*]] = tile.dot %[[A]], %[[B]], %{{.*}} :
// CHECK: %[[S2:.*]] = arith.addf %[[TWICE]], %[[ACC]]
// CHECK: %[[S3:.*]] = arith.addf %[[S2]], %[[TWICE]]
// CHECK: return %[[D2]], %[[I]], %[[SUM]], %[[S3]]
func.func @accumulate_into_dot(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %acc: tensor<16x16xf32>,
                               %ia: tensor<16x16xi8>, %iacc: tensor<16x16xi32>)
    -> (tensor<16x16xf32>, tensor<16x16xi32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %izero = arith.constant dense<0> : tensor<16x16xi32>
  %d1 = tile.dot %a, %b, %zero : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %s1 = arith.addf %acc, %d1 : tensor<16x16xf32>
  %d2 = tile.dot %a, %b, %zero input_precision = tf32 : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %s2 = arith.addf %d2, %s1 : tensor<16x16xf32>
  %i = tile.dot %ia, %ia, %izero : tensor<16x16xi8>, tensor<16x16xi8> -> tensor<16x16xi32>
  %si = arith.addi %i, %iacc : tensor<16x16xi32>
  %kept = tile.dot %a, %b, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %sum = arith.addf %kept, %s2 : tensor<16x16xf32>
  %twice = tile.dot %a, %b, %zero : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %t1 = arith.addf %twice, %acc : tensor<16x16xf32>
  %t2 = arith.addf %t1, %twice : tensor<16x16xf32>
  return %s2, %si, %sum, %t2 : tensor<16x16xf32>, tensor<16x16xi32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// A pointer cast to the same type is its operand; a cast of a cast casts the
// first pointers once.
// CHECK-LABEL: func.func @fold_ptr_casts
// CHECK-SAME: (%[[P:.*]]: !tile.ptr<f32>)
// CHECK: %[[C:.*]] = tile.ptr_cast %[[P]] : !tile.ptr<f32> -> !tile.ptr<i8>
// CHECK: return %[[P]], %[[C]]
func.func @fold_ptr_casts(%p: !tile.ptr<f32>) -> (!tile.ptr<f32>, !tile.ptr<i8>) {
  %a = tile.ptr_cast %p : !tile.ptr<f32> -> !tile.ptr<i32>
  %b = tile.ptr_cast %a : !tile.ptr<i32> -> !tile.ptr<f32>
  %c = tile.ptr_cast %a : !tile.ptr<i32> -> !tile.ptr<i8>
  return %b, %c : !tile.ptr<f32>, !tile.ptr<i8>
}
