// RUN: tessel-opt %s -canonicalize -cse -loop-invariant-code-motion | FileCheck %s
// Hint attributes live on the op that defines the hinted value: the CPU
// pipeline's cleanups (canonicalize, CSE, LICM) keep them, CSE does not
// merge a hinted op with an unhinted twin, and tile.assume stays.

// CHECK-LABEL: func.func @kept
func.func @kept(%p: !tile.ptr<f32>, %n: i32, %q32: !tile.ptr<i32>) {
  %pid = tile.get_program_id 0
  %c64 = arith.constant 64 : i32
  // CHECK: arith.muli %{{.*}}, %{{.*}} {tile.divisibility = array<i32: 64>} : i32
  %start = arith.muli %pid, %c64 {tile.divisibility = array<i32: 64>} : i32
  // CHECK: arith.muli %{{.*}}, %{{.*}} : i32
  %twin = arith.muli %pid, %c64 : i32
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %s = tile.splat %start : tensor<64xi32>
  // CHECK: arith.addi %{{.*}}, %{{.*}} {tile.contiguity = array<i32: 64>, tile.divisibility = array<i32: 64>} : tensor<64xi32>
  %offs = arith.addi %s, %r {tile.contiguity = array<i32: 64>, tile.divisibility = array<i32: 64>} : tensor<64xi32>
  %ps = tile.splat %p : tensor<64x!tile.ptr<f32>>
  %ptrs = tile.addptr %ps, %offs : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  %x = tile.load %ptrs : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %c1 = arith.constant 1 : i32
  // CHECK: tile.assume
  %rem = arith.remsi %n, %c16 : i32
  %ok = arith.cmpi eq, %rem, %c0 : i32
  tile.assume %ok
  // Hoisted out of the loop with its hint.
  // CHECK: arith.addi %{{.*}}, %{{.*}} {tile.divisibility = array<i32: 64>} : i32
  // CHECK-NEXT: tile.addptr
  // CHECK-NEXT: scf.for
  scf.for %i = %c0 to %n step %c1 : i32 {
    %inv = arith.addi %start, %c64 {tile.divisibility = array<i32: 64>} : i32
    %q = tile.addptr %q32, %inv : !tile.ptr<i32>, i32
    tile.store %q, %i : !tile.ptr<i32>, i32
  }
  tile.store %ptrs, %x : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  %tp = tile.addptr %q32, %twin : !tile.ptr<i32>, i32
  tile.store %tp, %n : !tile.ptr<i32>, i32
  return
}
