// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4 threads-per-warp=64 compute-capability=0 mfma=true" -canonicalize | FileCheck %s

// MFMA accumulators: chained dots (attention's two) take the transposed
// layout, a row in the lanes (lane bits along M, registers along N); a lone
// dot keeps the instruction's own, a column in the lanes.
// CHECK-DAG: #[[T:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [0, 2], [0, 8], [0, 16]], lane = {{\[}}[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = {{\[}}[0, 0], [32, 0]], block = []>
// CHECK-DAG: #[[L:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[1, 0], [2, 0], [8, 0], [16, 0]], lane = {{\[}}[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = {{\[}}[0, 32], [32, 0]], block = []>
// CHECK-LABEL: func.func @chained
// CHECK: tile.dot {{.*}} -> tensor<64x32xf32, #[[T]]>
// CHECK-LABEL: func.func @lone
// CHECK: tile.dot {{.*}} -> tensor<64x64xf32, #[[L]]>
func.func @chained(%s: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %q = tile.splat %s : tensor<64x64xf16>
  %k = tile.splat %s : tensor<64x32xf16>
  %v = tile.splat %s : tensor<32x64xf16>
  %z1 = arith.constant dense<0.0> : tensor<64x32xf32>
  %z2 = arith.constant dense<0.0> : tensor<64x64xf32>
  %qk = tile.dot %q, %k, %z1 : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
  %p = arith.truncf %qk : tensor<64x32xf32> to tensor<64x32xf16>
  %o = tile.dot %p, %v, %z2 : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  tile.store %os, %o : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

func.func @lone(%s: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<64x32xf16>
  %b = tile.splat %s : tensor<32x64xf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %a, %b, %z : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  tile.store %os, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

// -----

// An operand the loop does not change is converted to the instruction's
// operand layout (lane l: row l % 32, K 4 (l / 32) + register) once, before
// the loop; the one loaded in the loop keeps its own layout (the dot stages
// it).
// CHECK-DAG: #[[A:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [0, 2], [0, 8], [0, 16]], lane = {{\[}}[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = {{\[}}[0, 0], [32, 0]], block = []>
// CHECK-LABEL: func.func @invariant
// CHECK: %[[Q:.*]] = tilegpu.convert_layout %{{.*}} -> tensor<64x32xf16, #[[A]]>
// CHECK: scf.for
// CHECK-NOT: tilegpu.convert_layout {{.*}} #[[A]]>
// CHECK: tile.dot %[[Q]], %{{.*}}
func.func @invariant(%s: f16, %k: !tile.ptr<f16>, %out: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %q = tile.splat %s : tensor<64x32xf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32>) : i32 {
    %kp = tile.addptr %k, %i : !tile.ptr<f16>, i32
    %ks = tile.splat %kp : tensor<32x64x!tile.ptr<f16>>
    %kv = tile.load %ks : tensor<32x64x!tile.ptr<f16>> -> tensor<32x64xf16>
    %d = tile.dot %q, %kv, %acc : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  tile.store %os, %r : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
