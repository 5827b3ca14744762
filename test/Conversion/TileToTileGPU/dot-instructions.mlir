// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -canonicalize | FileCheck %s --check-prefixes=CHECK,WG4
// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=8 compute-capability=90" -canonicalize | FileCheck %s --check-prefixes=CHECK,WG8
// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4 compute-capability=90 arch-specific=false" -canonicalize | FileCheck %s --check-prefixes=CHECK,SYNC
// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4 compute-capability=80" -canonicalize | FileCheck %s --check-prefixes=CHECK,SYNC

// Which tensor-core instruction an fp16 dot into fp32 gets. On sm_90a
// (capability 90, arch-specific) with whole warpgroups, a block of 64 rows
// per warpgroup runs on wgmma: the dot is marked tilegpu.wgmma and its
// accumulator takes the wgmma layout. Four warps: one warpgroup, the
// instruction 64 columns wide (registers 2-4 step along N by 8, 16, 32).
// Eight warps: 64 rows leave the second warpgroup beside the first, along
// N (warp bit 2 moves 32 columns; instructions are 32 wide). Elsewhere the
// dot stays on mma.sync, unmarked.
// WG4: #[[WG:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[}}[16, 0], [32, 0]], block = []>
// WG8: #[[WG:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [8, 0], [0, 8], [0, 16]], lane = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[}}[16, 0], [32, 0], [0, 32]], block = []>
// CHECK-LABEL: func.func @rows64
// WG4: tile.dot {{.*}} {tilegpu.wgmma} : {{.*}} -> tensor<64x64xf32, #[[WG]]>
// WG8: tile.dot {{.*}} {tilegpu.wgmma} : {{.*}} -> tensor<64x64xf32, #[[WG]]>
// SYNC-NOT: tilegpu.wgmma
// SYNC: tile.dot {{.*}} -> tensor<64x64xf32,
func.func @rows64(%s: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<64x32xf16>
  %b = tile.splat %s : tensor<32x64xf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %a, %b, %zero : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

// -----

// 32 rows are half a warpgroup's: mma.sync on every target.
// CHECK-LABEL: func.func @rows32
// CHECK-NOT: tilegpu.wgmma
// CHECK: tile.dot
// CHECK-NOT: tilegpu.wgmma
func.func @rows32(%s: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<32x32xf16>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %d = tile.dot %a, %a, %zero : tensor<32x32xf16>, tensor<32x32xf16> -> tensor<32x32xf32>
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %i = tile.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
  %os = tile.splat %out : tensor<32x32x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<32x32x!tile.ptr<f32>>, tensor<32x32xi32>
  tile.store %oa, %d : tensor<32x32x!tile.ptr<f32>>, tensor<32x32xf32>
  return
}

// -----

// fp32 operands run on mma.sync as tf32 (the default precision, as in
// Triton on NVIDIA GPUs), never on wgmma here: the accumulator of the first
// dot takes the mma.sync layout (its lanes: the 16x8 tile's). With
// input_precision = ieee the per-thread FMA loop keeps the default layout.
// CHECK: #[[MMA:linear[0-9]*]] = #tilegpu.linear<register = {{.*}}, lane = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp
// CHECK-LABEL: func.func @fp32
// CHECK-NOT: tilegpu.wgmma
// CHECK: tile.splat %{{.*}} : tensor<64x64xf32, #[[BLOCKED:linear[0-9]*]]>
// CHECK: tile.dot {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// CHECK: tile.dot {{.*}} input_precision = ieee : {{.*}} -> tensor<64x64xf32, #[[BLOCKED]]>
// CHECK-NOT: tilegpu.wgmma
func.func @fp32(%s: f32, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<64x64xf32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %a, %a, %zero : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %e = tile.dot %a, %a, %d input_precision = ieee : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %e : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

// -----

// int8 into int32 runs on wgmma (m64nNk32) on sm_90a with whole
// warpgroups, as fp16 does, and on mma.sync (m16n8k32) elsewhere, its
// accumulator in that instruction's layout.
// SYNC: #[[MMA8:linear[0-9]*]] = #tilegpu.linear<register = {{.*}}, lane = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp
// CHECK-LABEL: func.func @int8
// WG4: tile.dot {{.*}} {tilegpu.wgmma} : {{.*}} -> tensor<64x64xi32,
// WG8: tile.dot {{.*}} {tilegpu.wgmma} : {{.*}} -> tensor<64x64xi32,
// SYNC-NOT: tilegpu.wgmma
// SYNC: tile.dot {{.*}} -> tensor<64x64xi32, #[[MMA8]]>
// SYNC-NOT: tilegpu.wgmma
func.func @int8(%s: i8, %out: !tile.ptr<i32>) attributes {tile.kernel} {
  %a = tile.splat %s : tensor<64x64xi8>
  %zero = arith.constant dense<0> : tensor<64x64xi32>
  %d = tile.dot %a, %a, %zero : tensor<64x64xi8>, tensor<64x64xi8> -> tensor<64x64xi32>
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %os = tile.splat %out : tensor<64x64x!tile.ptr<i32>>
  %oa = tile.addptr %os, %i : tensor<64x64x!tile.ptr<i32>>, tensor<64x64xi32>
  tile.store %oa, %d : tensor<64x64x!tile.ptr<i32>>, tensor<64x64xi32>
  return
}
