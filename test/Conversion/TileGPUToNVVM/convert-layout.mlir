// RUN: tessel-opt %s -split-input-file -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// A conversion of a 64x64 fp32 mma.sync accumulator to the blocked layout of
// 4 consecutive elements per thread goes through a swizzled shared buffer in
// vectors: each thread writes its 32 elements as 16 pairs (8 bytes, the
// accumulator's consecutive columns) and reads 8 vectors of 4 (16 bytes),
// between two barriers.
// CHECK-LABEL: llvm.func @acc_to_blocked
// CHECK: nvvm.barrier0
// CHECK-COUNT-16: llvm.store {{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-8: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
#mma = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 8], [16, 0]], block = []>
#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]], block = []>
module {
  func.func @acc_to_blocked(%x: f32, %out: !tile.ptr<f32>) attributes {tile.kernel, tilegpu.num_warps = 4 : i32} {
    %v = tile.splat %x : tensor<64x64xf32, #mma>
    %c = tilegpu.convert_layout %v : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    %p = tile.splat %out : tensor<64x64x!tile.ptr<f32>, #blocked>
    tile.store %p, %c : tensor<64x64x!tile.ptr<f32>, #blocked>, tensor<64x64xf32, #blocked>
    return
  }
}

// -----

// Bools move element by element (as bytes), row-major.
// CHECK-LABEL: llvm.func @bools
// CHECK: nvvm.barrier0
// CHECK-COUNT-32: llvm.store {{.*}} : i8, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-32: llvm.load {{.*}} : !llvm.ptr<3> -> i8
#mma = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 8], [16, 0]], block = []>
#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]], block = []>
module {
  func.func @bools(%x: i1, %y: f32, %out: !tile.ptr<f32>) attributes {tile.kernel, tilegpu.num_warps = 4 : i32} {
    %v = tile.splat %x : tensor<64x64xi1, #mma>
    %m = tilegpu.convert_layout %v : tensor<64x64xi1, #mma> -> tensor<64x64xi1, #blocked>
    %s = tile.splat %y : tensor<64x64xf32, #blocked>
    %p = tile.splat %out : tensor<64x64x!tile.ptr<f32>, #blocked>
    tile.store %p, %s mask %m : tensor<64x64xi1, #blocked> : tensor<64x64x!tile.ptr<f32>, #blocked>, tensor<64x64xf32, #blocked>
    return
  }
}
