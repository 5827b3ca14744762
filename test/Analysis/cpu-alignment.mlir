// RUN: tessel-opt %s -split-input-file -convert-tile-to-loops | FileCheck %s
// The CPU lowering gives every element access the alignment AxisInfo proves
// for all elements of the pointer block, keeps volatile loads volatile and
// lowers tile.assume to llvm.intr.assume.

// CHECK-LABEL: func.func private @aligned
func.func @aligned(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32, tile.noalias}, %q: !tile.ptr<f32> {tile.noalias}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32, tile.noalias}, %n: i32) attributes {tile.kernel} {
  // A scalar through a 16-byte aligned argument.
  // CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> f32
  %a = tile.load %p : !tile.ptr<f32> -> f32
  // Without the launcher's mark: the element size only.
  // CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
  %b = tile.load %q : !tile.ptr<f32> -> f32
  // Every fourth float from a 16-byte aligned base: each 16-byte aligned.
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %c4 = arith.constant dense<4> : tensor<64xi32>
  %strided = arith.muli %r, %c4 : tensor<64xi32>
  %ps = tile.splat %p : tensor<64x!tile.ptr<f32>>
  %sp = tile.addptr %ps, %strided : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  // CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> f32
  %x = tile.load %sp : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  // Consecutive floats: only the first of each run is 16-byte aligned.
  %os = tile.splat %o : tensor<64x!tile.ptr<f32>>
  %op = tile.addptr %os, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  // CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
  tile.store %op, %x : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  %s = arith.addf %a, %b : f32
  // CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : f32, !llvm.ptr
  tile.store %o, %s : !tile.ptr<f32>, f32
  return
}

// -----

// CHECK-LABEL: func.func private @volatile_and_assume
func.func @volatile_and_assume(%p: !tile.ptr<i32> {tile.noalias}, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c8 = arith.constant 8 : i32
  %rem = arith.remsi %n, %c8 : i32
  %ok = arith.cmpi eq, %rem, %c0 : i32
  // CHECK: arith.remsi %arg1
  // CHECK: %[[OK:[0-9]+]] = arith.cmpi eq, %{{[0-9]+}}, %c0_i32 : i32
  // CHECK-NEXT: llvm.intr.assume %[[OK]] : i1
  tile.assume %ok
  // n is a multiple of 8 elements: 32 bytes past a 4-byte aligned base.
  %q = tile.addptr %p, %n : !tile.ptr<i32>, i32
  // CHECK: llvm.load volatile %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> i32
  %v = tile.load %q volatile : !tile.ptr<i32> -> i32
  // Hinted offsets: multiples of 16 elements (64 bytes), given a 4-byte base.
  %m = arith.muli %v, %c8 {tile.divisibility = array<i32: 16>} : i32
  %h = tile.addptr %p, %m : !tile.ptr<i32>, i32
  // CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> i32
  %w = tile.load %h : !tile.ptr<i32> -> i32
  tile.store %p, %w : !tile.ptr<i32>, i32
  return
}

// -----

// CHECK-LABEL: func.func private @hinted_base
func.func @hinted_base(%p: !tile.ptr<f64> {tile.divisibility = 64 : i32, tile.noalias}, %k: i32) attributes {tile.kernel} {
  // A hinted multiple of 16 elements from a 64-byte base: 64-byte aligned.
  %m = arith.addi %k, %k {tile.divisibility = array<i32: 16>} : i32
  %h = tile.addptr %p, %m : !tile.ptr<f64>, i32
  // CHECK: llvm.load %{{.*}} {alignment = 64 : i64} : !llvm.ptr -> f64
  %w = tile.load %h : !tile.ptr<f64> -> f64
  tile.store %p, %w : !tile.ptr<f64>, f64
  return
}
