// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 threads-per-warp=64" -canonicalize | FileCheck %s
// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4" -canonicalize | FileCheck %s --check-prefix=WARP32
// RUN: not tessel-opt %s -convert-tile-to-tilegpu="num-warps=32 threads-per-warp=64" 2>&1 | FileCheck %s --check-prefix=TOO-MANY

// The warp's width is the target's: on wavefronts of 64 a block of 1024
// elements on 4 warps takes 4 consecutive elements per thread and 6 lane
// bits; on NVIDIA's warps of 32, 8 (two runs of 4) and 5. The module
// records the width for the lowering (lane and warp ids, the kernel's
// thread count).
// CHECK: #[[L:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[1], [2]], lane = {{\[}}[4], [8], [16], [32], [64], [128]], warp = {{\[}}[256], [512]], block = []>
// CHECK: module attributes {tilegpu.threads_per_warp = 64 : i32}
// CHECK: tile.make_range {{.*}} : tensor<1024xi32, #[[L]]>
// WARP32: #[[L:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[1], [2], [512]], lane = {{\[}}[4], [8], [16], [32], [64]], warp = {{\[}}[128], [256]], block = []>
// WARP32: module attributes {tilegpu.threads_per_warp = 32 : i32}
// 32 wavefronts of 64 are 2048 threads, more than a program may have.
// TOO-MANY: num_warps must be a power of two from 1 to 16 (1024 threads of 64 per warp), got 32
func.func @copy(%in: !tile.ptr<f32>, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %is = tile.splat %in : tensor<1024x!tile.ptr<f32>>
  %ia = tile.addptr %is, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %x = tile.load %ia : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %os = tile.splat %out : tensor<1024x!tile.ptr<f32>>
  %oa = tile.addptr %os, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  tile.store %oa, %x : tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>
  return
}
