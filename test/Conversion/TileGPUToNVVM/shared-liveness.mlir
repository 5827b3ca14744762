// RUN: tessel-opt %s -split-input-file -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// Shared memory by liveness: buffers (2 slots of 2048 bytes each) and the
// scratch of conversions (from offset 0) share bytes when they are not live
// at the same time.

// Two loops, one buffer each: the second buffer takes the first one's bytes
// (slot 1 at 2048 in both loops), after a barrier that follows the wait for
// the first buffer's copies.
// CHECK: module attributes {tilegpu.shared = 4096 : i32
// CHECK-LABEL: llvm.func @disjoint
// CHECK: llvm.getelementptr %{{.*}}[2048]
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK: llvm.getelementptr %{{.*}}[2048]
#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
module {
  func.func @disjoint(%p: !tile.ptr<f16>, %out: !tile.ptr<f16>, %n: i32) attributes {tile.kernel, tilegpu.num_warps = 4 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %src = tile.splat %p : tensor<64x16x!tile.ptr<f16>, #blocked>
    %dst = tile.splat %out : tensor<64x16x!tile.ptr<f16>, #blocked>
    %a = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
    %b = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
    scf.for %i = %c0 to %n step %c1 : i32 {
      tilegpu.async_copy %src to %a[%c1] : tensor<64x16x!tile.ptr<f16>, #blocked>, !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
      tilegpu.async_commit
      tilegpu.async_wait {pending = 0 : i32}
      tilegpu.barrier
      %v = tilegpu.local_load %a[%c1] : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf16, #blocked>
      tile.store %dst, %v : tensor<64x16x!tile.ptr<f16>, #blocked>, tensor<64x16xf16, #blocked>
    }
    tilegpu.async_wait {pending = 0 : i32}
    scf.for %i = %c0 to %n step %c1 : i32 {
      tilegpu.async_copy %src to %b[%c1] : tensor<64x16x!tile.ptr<f16>, #blocked>, !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
      tilegpu.async_commit
      tilegpu.async_wait {pending = 0 : i32}
      tilegpu.barrier
      %v = tilegpu.local_load %b[%c1] : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf16, #blocked>
      tile.store %dst, %v : tensor<64x16x!tile.ptr<f16>, #blocked>, tensor<64x16xf16, #blocked>
    }
    tilegpu.async_wait {pending = 0 : i32}
    return
  }
}

// -----

// Both buffers in one loop: 4096 bytes each, the second from 4096.
// CHECK: module attributes {tilegpu.shared = 8192 : i32
// CHECK-LABEL: llvm.func @overlapping
// CHECK: llvm.getelementptr %{{.*}}[4096]
#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
module {
  func.func @overlapping(%p: !tile.ptr<f16>, %out: !tile.ptr<f16>, %n: i32) attributes {tile.kernel, tilegpu.num_warps = 4 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %src = tile.splat %p : tensor<64x16x!tile.ptr<f16>, #blocked>
    %dst = tile.splat %out : tensor<64x16x!tile.ptr<f16>, #blocked>
    %a = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
    %b = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
    scf.for %i = %c0 to %n step %c1 : i32 {
      tilegpu.async_copy %src to %a[%c1] : tensor<64x16x!tile.ptr<f16>, #blocked>, !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
      tilegpu.async_copy %src to %b[%c1] : tensor<64x16x!tile.ptr<f16>, #blocked>, !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
      tilegpu.async_commit
      tilegpu.async_wait {pending = 0 : i32}
      tilegpu.barrier
      %v = tilegpu.local_load %a[%c1] : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf16, #blocked>
      %w = tilegpu.local_load %b[%c1] : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf16, #blocked>
      %s = arith.addf %v, %w : tensor<64x16xf16, #blocked>
      tile.store %dst, %s : tensor<64x16x!tile.ptr<f16>, #blocked>, tensor<64x16xf16, #blocked>
    }
    tilegpu.async_wait {pending = 0 : i32}
    return
  }
}

// -----

// A conversion (16 KiB of scratch) after the loop reuses the buffer's bytes;
// its own barriers separate it from the loop's reads.
// CHECK: module attributes {tilegpu.shared = 16384 : i32
// CHECK-LABEL: llvm.func @conversion_after
// CHECK: llvm.getelementptr %{{.*}}[2048]
#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
#mma = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 8], [16, 0]], block = []>
#wide = #tilegpu.linear<register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]], block = []>
module {
  func.func @conversion_after(%p: !tile.ptr<f16>, %out: !tile.ptr<f16>, %x: f32, %outf: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tilegpu.num_warps = 4 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %src = tile.splat %p : tensor<64x16x!tile.ptr<f16>, #blocked>
    %dst = tile.splat %out : tensor<64x16x!tile.ptr<f16>, #blocked>
    %a = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
    scf.for %i = %c0 to %n step %c1 : i32 {
      tilegpu.async_copy %src to %a[%c1] : tensor<64x16x!tile.ptr<f16>, #blocked>, !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
      tilegpu.async_commit
      tilegpu.async_wait {pending = 0 : i32}
      tilegpu.barrier
      %v = tilegpu.local_load %a[%c1] : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf16, #blocked>
      tile.store %dst, %v : tensor<64x16x!tile.ptr<f16>, #blocked>, tensor<64x16xf16, #blocked>
    }
    tilegpu.async_wait {pending = 0 : i32}
    %m = tile.splat %x : tensor<64x64xf32, #mma>
    %c = tilegpu.convert_layout %m : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #wide>
    %q = tile.splat %outf : tensor<64x64x!tile.ptr<f32>, #wide>
    tile.store %q, %c : tensor<64x64x!tile.ptr<f32>, #wide>, tensor<64x64xf32, #wide>
    return
  }
}

// -----

// The same conversion inside the loop: the buffer goes after its scratch
// (slot 1 at 16384 + 2048).
// CHECK: module attributes {tilegpu.shared = 20480 : i32
// CHECK-LABEL: llvm.func @conversion_inside
// CHECK: %[[BUF:.*]] = llvm.getelementptr %{{.*}}[16384]
// CHECK: llvm.getelementptr %[[BUF]][2048]
#blocked = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
#mma = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 8], [16, 0]], block = []>
#wide = #tilegpu.linear<register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]], block = []>
module {
  func.func @conversion_inside(%p: !tile.ptr<f16>, %out: !tile.ptr<f16>, %x: f32, %outf: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tilegpu.num_warps = 4 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %src = tile.splat %p : tensor<64x16x!tile.ptr<f16>, #blocked>
    %dst = tile.splat %out : tensor<64x16x!tile.ptr<f16>, #blocked>
    %a = tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
    scf.for %i = %c0 to %n step %c1 : i32 {
      tilegpu.async_copy %src to %a[%c1] : tensor<64x16x!tile.ptr<f16>, #blocked>, !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32>
      tilegpu.async_commit
      tilegpu.async_wait {pending = 0 : i32}
      tilegpu.barrier
      %v = tilegpu.local_load %a[%c1] : !tilegpu.shared<2x64x16xf16, k_major, swizzle = 32> -> tensor<64x16xf16, #blocked>
      tile.store %dst, %v : tensor<64x16x!tile.ptr<f16>, #blocked>, tensor<64x16xf16, #blocked>
      %m = tile.splat %x : tensor<64x64xf32, #mma>
      %c = tilegpu.convert_layout %m : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #wide>
      %q = tile.splat %outf : tensor<64x64x!tile.ptr<f32>, #wide>
      tile.store %q, %c : tensor<64x64x!tile.ptr<f32>, #wide>, tensor<64x64xf32, #wide>
    }
    tilegpu.async_wait {pending = 0 : i32}
    return
  }
}
