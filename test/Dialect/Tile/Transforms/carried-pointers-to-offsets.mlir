// RUN: tessel-opt %s -split-input-file -tile-carried-pointers-to-offsets | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tile-carried-pointers-to-offsets="constant-steps=true" | FileCheck %s --check-prefix=CONST

// A pointer block advanced by a loop-invariant scalar becomes an i64 offset;
// the pointers inside the loop and after it are rebuilt from the initial block.
// The loop's hints (tl.range's num_stages) stay with it.
// CHECK-LABEL: func.func @advance
// CHECK-SAME: (%[[P:.*]]: tensor<16x!tile.ptr<f32>>, %[[S:.*]]: i32, %[[N:.*]]: i32)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[OFF:.*]] = %[[ZERO]]) -> (tensor<16xf32>, i64)
// CHECK: %[[SPLAT:.*]] = tile.splat %[[OFF]] : tensor<16xi64>
// CHECK: %[[PTRS:.*]] = tile.addptr %[[P]], %[[SPLAT]]
// CHECK: tile.load %[[PTRS]]
// CHECK: %[[S64:.*]] = arith.extsi %[[S]] : i32 to i64
// CHECK: %[[NEXT:.*]] = arith.addi %[[OFF]], %[[S64]] : i64
// CHECK: scf.yield %{{.*}}, %[[NEXT]] : tensor<16xf32>, i64
// CHECK-NEXT: } {tile.num_stages = 4 : i32}
// CHECK: %[[FINAL:.*]] = tile.splat %[[R]]#1 : tensor<16xi64>
// CHECK: tile.addptr %[[P]], %[[FINAL]]
func.func @advance(%p: tensor<16x!tile.ptr<f32>>, %s: i32, %n: i32) -> (tensor<16xf32>, tensor<16x!tile.ptr<f32>>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %ss = tile.splat %s : tensor<16xi32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %ptrs = %p) -> (tensor<16xf32>, tensor<16x!tile.ptr<f32>>) : i32 {
    %x = tile.load %ptrs : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
    %a = arith.addf %acc, %x : tensor<16xf32>
    %next = tile.addptr %ptrs, %ss : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
    scf.yield %a, %next : tensor<16xf32>, tensor<16x!tile.ptr<f32>>
  } {tile.num_stages = 4 : i32}
  return %r#0, %r#1 : tensor<16xf32>, tensor<16x!tile.ptr<f32>>
}

// -----

// A step that is not uniform (a block of different offsets) or that changes
// inside the loop is left alone.
// CHECK-LABEL: func.func @not_uniform
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x!tile.ptr<f32>>)
func.func @not_uniform(%p: tensor<16x!tile.ptr<f32>>, %n: i32) -> tensor<16x!tile.ptr<f32>> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %q = scf.for %i = %c0 to %n step %c1 iter_args(%ptrs = %p) -> (tensor<16x!tile.ptr<f32>>) : i32 {
    %next = tile.addptr %ptrs, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
    scf.yield %next : tensor<16x!tile.ptr<f32>>
  }
  return %q : tensor<16x!tile.ptr<f32>>
}

// -----

// CHECK-LABEL: func.func @step_from_loop
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x!tile.ptr<f32>>)
func.func @step_from_loop(%p: tensor<16x!tile.ptr<f32>>, %n: i32) -> tensor<16x!tile.ptr<f32>> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %q = scf.for %i = %c0 to %n step %c1 iter_args(%ptrs = %p) -> (tensor<16x!tile.ptr<f32>>) : i32 {
    %s = tile.splat %i : tensor<16xi32>
    %next = tile.addptr %ptrs, %s : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
    scf.yield %next : tensor<16x!tile.ptr<f32>>
  }
  return %q : tensor<16x!tile.ptr<f32>>
}

// -----

// A constant step of one value (a stride specialized to 1) is a uniform step
// with constant-steps, and left alone without it.
// CHECK-LABEL: func.func @constant_step
// CONST-LABEL: func.func @constant_step
// CONST: %[[STEP:.*]] = arith.constant 32 : i32
// CONST: scf.for {{.*}} iter_args(%[[OFF:.*]] = %{{.*}}) -> (i64)
// CONST: %[[S64:.*]] = arith.extsi %[[STEP]] : i32 to i64
// CONST: arith.addi %[[OFF]], %[[S64]] : i64
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x!tile.ptr<f32>>)
func.func @constant_step(%p: tensor<16x!tile.ptr<f32>>, %n: i32) -> tensor<16x!tile.ptr<f32>> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant dense<32> : tensor<16xi32>
  %q = scf.for %i = %c0 to %n step %c1 iter_args(%ptrs = %p) -> (tensor<16x!tile.ptr<f32>>) : i32 {
    %next = tile.addptr %ptrs, %c32 : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
    scf.yield %next : tensor<16x!tile.ptr<f32>>
  }
  return %q : tensor<16x!tile.ptr<f32>>
}

// -----

// A constant block of different offsets is no uniform step.
// CONST-LABEL: func.func @constant_not_uniform
// CONST: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x!tile.ptr<f32>>)
func.func @constant_not_uniform(%p: tensor<2x!tile.ptr<f32>>, %n: i32) -> tensor<2x!tile.ptr<f32>> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %steps = arith.constant dense<[1, 2]> : tensor<2xi32>
  %q = scf.for %i = %c0 to %n step %c1 iter_args(%ptrs = %p) -> (tensor<2x!tile.ptr<f32>>) : i32 {
    %next = tile.addptr %ptrs, %steps : tensor<2x!tile.ptr<f32>>, tensor<2xi32>
    scf.yield %next : tensor<2x!tile.ptr<f32>>
  }
  return %q : tensor<2x!tile.ptr<f32>>
}
