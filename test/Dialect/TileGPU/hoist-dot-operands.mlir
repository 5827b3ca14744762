// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 compute-capability=80" -canonicalize -tilegpu-hoist-dot-operands | FileCheck %s

// A dot's A operand loaded before its loop (attention's Q) is written once
// into a one-slot buffer in the layout the dot reads in place (K-major,
// 128-byte swizzle for 64 fp16 of K), a barrier after it; in the loop the dot
// reads the slot. B, loaded in the loop, stays as it is.
// CHECK-LABEL: func.func @invariant_a
// CHECK: %[[Q:.*]] = tile.load
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc : !tilegpu.shared<1x64x64xf16, k_major, swizzle = 128>
// CHECK: tilegpu.local_store %[[Q]], %[[BUF]][%{{.*}}] :
// CHECK-NEXT: tilegpu.barrier
// CHECK: scf.for
// CHECK: %[[B:.*]] = tile.load
// CHECK: %[[A:.*]] = tilegpu.local_load %[[BUF]][%{{.*}}]
// CHECK: tile.dot %[[A]], %[[B]],
// CHECK-NOT: tilegpu.local_store
func.func @invariant_a(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %ia = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %as = tile.splat %a : tensor<64x64x!tile.ptr<f16>>
  %aa = tile.addptr %as, %ia : tensor<64x64x!tile.ptr<f16>>, tensor<64x64xi32>
  %bs = tile.splat %b : tensor<64x64x!tile.ptr<f16>>
  %ba = tile.addptr %bs, %ia : tensor<64x64x!tile.ptr<f16>>, tensor<64x64xi32>
  %q = tile.load %aa : tensor<64x64x!tile.ptr<f16>> -> tensor<64x64xf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zero) -> (tensor<64x64xf32>) : i32 {
    %y = tile.load %ba : tensor<64x64x!tile.ptr<f16>> -> tensor<64x64xf16>
    %d = tile.dot %q, %y, %c : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %ia : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %acc : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
