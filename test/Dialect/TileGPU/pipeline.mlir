// RUN: tessel-opt %s -split-input-file -tilegpu-pipeline="num-stages=3" | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tilegpu-pipeline="num-stages=3 shared-limit=12000" | FileCheck %s --check-prefix=LIMIT
// RUN: tessel-opt %s -split-input-file -tilegpu-pipeline="num-stages=3 shared-limit=8000" | FileCheck %s --check-prefix=NOFIT

// A K loop of an mma.sync dot (accumulator in the mma.sync layout, 4 warps
// along M) whose operands are loaded through loop-carried pointers: A and B
// get 3-slot buffers (A K-major with the 32-byte swizzle of its 16 columns,
// B N-major with the 64-byte swizzle of its 32), the prologue issues
// iterations 0 and 1 (masked by lb + j*step < ub) into slots 0 and 1, each
// iteration waits for its own group, a barrier, then issues iteration i+2
// into the slot read in i-1, commits and reads its slot. The pointers are
// carried two iterations ahead in their own iter_args (nothing else reads
// them); after the loop every copy is waited for.
// Three stages take 3 x 3 KiB plus 4 KiB of scratch for the dot: with
// 12000 bytes of shared memory two stages fit, with 8000 none.
#acc = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 8], [0, 16]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]], block = []>
#a = #tilegpu.linear<register = [[0, 1], [0, 2], [32, 0]], lane = [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]], block = []>
#b = #tilegpu.linear<register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]], block = []>
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[A:.*]] = tilegpu.local_alloc : !tilegpu.shared<3x64x16xf16, k_major, swizzle = 32>
// CHECK-DAG: %[[B:.*]] = tilegpu.local_alloc : !tilegpu.shared<3x16x32xf16, mn_major, swizzle = 64>
// CHECK: arith.cmpi slt
// CHECK: tilegpu.async_copy %{{.*}} to %[[A]][%c0_i32{{.*}}] mask
// CHECK-SAME: {tilegpu.vector = array<i32: 1, 8>}
// CHECK: tilegpu.async_copy %{{.*}} to %[[B]][%c0_i32{{.*}}] mask
// CHECK: tilegpu.async_commit
// CHECK: tilegpu.async_copy %{{.*}} to %[[A]][%c1_i32{{.*}}] mask
// CHECK: tilegpu.async_copy %{{.*}} to %[[B]][%c1_i32{{.*}}] mask
// CHECK: tilegpu.async_commit
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[PA:.*]] = %{{.*}}, %[[PB:.*]] = %{{.*}}, %[[READ:.*]] = %c0_i32{{.*}}, %[[FILL:.*]] = %c2_i32)
// CHECK-NEXT: tilegpu.async_wait {pending = 1 : i32}
// CHECK-NEXT: tilegpu.barrier
// CHECK: tilegpu.async_copy %[[PA]] to %[[A]][%[[FILL]]] mask
// CHECK: tilegpu.async_copy %[[PB]] to %[[B]][%[[FILL]]] mask
// CHECK: tilegpu.async_commit
// CHECK: %[[LA:.*]] = tilegpu.local_load %[[A]][%[[READ]]]
// CHECK: %[[LB:.*]] = tilegpu.local_load %[[B]][%[[READ]]]
// CHECK-NOT: tile.load
// CHECK: tile.dot %[[LA]], %[[LB]], %[[ACC]]
// CHECK: scf.yield
// CHECK: tilegpu.async_wait {pending = 0 : i32}
// LIMIT: tilegpu.local_alloc : !tilegpu.shared<2x64x16xf16
// LIMIT: tilegpu.async_wait {pending = 0 : i32}
// NOFIT-LABEL: func.func @matmul
// NOFIT-NOT: tilegpu.local_alloc
// NOFIT: tile.load
func.func @matmul(%pa: !tile.ptr<f16> {tile.noalias}, %pb: !tile.ptr<f16> {tile.noalias}, %k: i32, %sa: tensor<64x16xi32, #a>, %sb: tensor<16x32xi32, #b>) -> tensor<64x32xf32, #acc> {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.0> : tensor<64x32xf32, #acc>
  %za = arith.constant dense<0.0> : tensor<64x16xf16, #a>
  %a0 = tile.splat %pa : tensor<64x16x!tile.ptr<f16>, #a>
  %a1 = tile.addptr %a0, %sa : tensor<64x16x!tile.ptr<f16>, #a>, tensor<64x16xi32, #a>
  %b0 = tile.splat %pb : tensor<16x32x!tile.ptr<f16>, #b>
  %b1 = tile.addptr %b0, %sb : tensor<16x32x!tile.ptr<f16>, #b>, tensor<16x32xi32, #b>
  %da = arith.constant dense<16> : tensor<64x16xi32, #a>
  %db = arith.constant dense<512> : tensor<16x32xi32, #b>
  %ks = tile.splat %k : tensor<64x16xi32, #a>
  %r:3 = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %zero, %p = %a1, %q = %b1) -> (tensor<64x32xf32, #acc>, tensor<64x16x!tile.ptr<f16>, #a>, tensor<16x32x!tile.ptr<f16>, #b>) : i32 {
    %is = tile.splat %i : tensor<64x16xi32, #a>
    %m = arith.cmpi slt, %is, %ks : tensor<64x16xi32, #a>
    %x = tile.load %p mask %m : tensor<64x16xi1, #a> other %za : tensor<64x16xf16, #a> {tilegpu.vector = array<i32: 1, 8>} : tensor<64x16x!tile.ptr<f16>, #a> -> tensor<64x16xf16, #a>
    %y = tile.load %q {tilegpu.vector = array<i32: 1, 8>} : tensor<16x32x!tile.ptr<f16>, #b> -> tensor<16x32xf16, #b>
    %d = tile.dot %x, %y, %acc : tensor<64x16xf16, #a>, tensor<16x32xf16, #b> -> tensor<64x32xf32, #acc>
    %p2 = tile.addptr %p, %da : tensor<64x16x!tile.ptr<f16>, #a>, tensor<64x16xi32, #a>
    %q2 = tile.addptr %q, %db : tensor<16x32x!tile.ptr<f16>, #b>, tensor<16x32xi32, #b>
    scf.yield %d, %p2, %q2 : tensor<64x32xf32, #acc>, tensor<64x16x!tile.ptr<f16>, #a>, tensor<16x32x!tile.ptr<f16>, #b>
  }
  return %r#0 : tensor<64x32xf32, #acc>
}

// -----

// What stays as it is: a load whose `other` is not zero, one whose mask is
// computed from the dot's result (not computable ahead), one of 2-byte runs
// (narrower than cp.async's 4 bytes), a loop that stores through a pointer
// that may alias the loads, and an fp32 "ieee" dot (off the tensor cores).
#acc = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 8], [0, 16]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]], block = []>
#a = #tilegpu.linear<register = [[0, 1], [0, 2], [32, 0]], lane = [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]], block = []>
#b = #tilegpu.linear<register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]], block = []>
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tilegpu.local_alloc
// CHECK-NOT: tilegpu.async_copy
// CHECK: return
func.func @left_alone(%pa: !tile.ptr<f16>, %pb: !tile.ptr<f16>, %pc: !tile.ptr<f32>, %k: i32, %a: tensor<64x16x!tile.ptr<f16>, #a>, %b: tensor<16x32x!tile.ptr<f16>, #b>, %fa: tensor<64x16x!tile.ptr<f32>, #a>, %fb: tensor<16x32x!tile.ptr<f32>, #b>, %c: tensor<64x32x!tile.ptr<f32>, #acc>, %pk: !tile.ptr<i32>) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.0> : tensor<64x32xf32, #acc>
  %one = arith.constant dense<1.0> : tensor<64x16xf16, #a>
  %r = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %zero) -> (tensor<64x32xf32, #acc>) : i32 {
    %t = arith.constant dense<true> : tensor<64x16xi1, #a>
    %x = tile.load %a mask %t : tensor<64x16xi1, #a> other %one : tensor<64x16xf16, #a> {tilegpu.vector = array<i32: 1, 8>} : tensor<64x16x!tile.ptr<f16>, #a> -> tensor<64x16xf16, #a>
    %y = tile.load %b : tensor<16x32x!tile.ptr<f16>, #b> -> tensor<16x32xf16, #b>
    %d = tile.dot %x, %y, %acc : tensor<64x16xf16, #a>, tensor<16x32xf16, #b> -> tensor<64x32xf32, #acc>
    scf.yield %d : tensor<64x32xf32, #acc>
  }
  %r2 = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %zero) -> (tensor<64x32xf32, #acc>) : i32 {
    %x = tile.load %a {tilegpu.vector = array<i32: 1, 8>} : tensor<64x16x!tile.ptr<f16>, #a> -> tensor<64x16xf16, #a>
    %y = tile.load %b {tilegpu.vector = array<i32: 1, 8>} : tensor<16x32x!tile.ptr<f16>, #b> -> tensor<16x32xf16, #b>
    %d = tile.dot %x, %y, %acc : tensor<64x16xf16, #a>, tensor<16x32xf16, #b> -> tensor<64x32xf32, #acc>
    tile.store %c, %d : tensor<64x32x!tile.ptr<f32>, #acc>, tensor<64x32xf32, #acc>
    scf.yield %d : tensor<64x32xf32, #acc>
  }
  %r3 = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %r2) -> (tensor<64x32xf32, #acc>) : i32 {
    %x = tile.load %fa {tilegpu.vector = array<i32: 1, 4>} : tensor<64x16x!tile.ptr<f32>, #a> -> tensor<64x16xf32, #a>
    %y = tile.load %fb {tilegpu.vector = array<i32: 1, 4>} : tensor<16x32x!tile.ptr<f32>, #b> -> tensor<16x32xf32, #b>
    %d = tile.dot %x, %y, %acc input_precision = ieee : tensor<64x16xf32, #a>, tensor<16x32xf32, #b> -> tensor<64x32xf32, #acc>
    scf.yield %d : tensor<64x32xf32, #acc>
  }
  %r4:2 = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %r3, %lim = %k) -> (tensor<64x32xf32, #acc>, i32) : i32 {
    %ls = tile.splat %lim : tensor<64x16xi32, #a>
    %is = tile.splat %i : tensor<64x16xi32, #a>
    %m = arith.cmpi slt, %is, %ls : tensor<64x16xi32, #a>
    %x = tile.load %a mask %m : tensor<64x16xi1, #a> {tilegpu.vector = array<i32: 1, 8>} : tensor<64x16x!tile.ptr<f16>, #a> -> tensor<64x16xf16, #a>
    %y = tile.load %b {tilegpu.vector = array<i32: 1, 1>} : tensor<16x32x!tile.ptr<f16>, #b> -> tensor<16x32xf16, #b>
    %d = tile.dot %x, %y, %acc : tensor<64x16xf16, #a>, tensor<16x32xf16, #b> -> tensor<64x32xf32, #acc>
    %next = tile.load %pk : !tile.ptr<i32> -> i32
    scf.yield %d, %next : tensor<64x32xf32, #acc>, i32
  }
  tile.store %c, %r4#0 : tensor<64x32x!tile.ptr<f32>, #acc>, tensor<64x32xf32, #acc>
  return
}

// -----

// An fp32 dot with tf32 inputs (the default) runs on mma.sync m16n8k8: its
// operands are pipelined like fp16 ones, into fp32 slots which the dot reads
// in place a word at a time: A K-major (64-byte rows swizzled), B, whose N
// is contiguous, in a `gather` slot: rows of K whose 32-byte chunks are
// XORed by the row, so the 4 rows of K one fragment read reaches fall on
// different banks.
#acc = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 8], [0, 16]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]], block = []>
#a = #tilegpu.linear<register = [[0, 1], [0, 2], [32, 0]], lane = [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]], block = []>
#b = #tilegpu.linear<register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]], block = []>
// CHECK-LABEL: func.func @tf32
// CHECK-DAG: tilegpu.local_alloc : !tilegpu.shared<3x64x16xf32, k_major, swizzle = 64>
// CHECK-DAG: tilegpu.local_alloc : !tilegpu.shared<3x16x32xf32, gather, swizzle = 128>
// CHECK: scf.for
// CHECK: tilegpu.async_copy
// CHECK: tilegpu.async_copy
// CHECK: tile.dot
func.func @tf32(%fa: tensor<64x16x!tile.ptr<f32>, #a>, %fb: tensor<16x32x!tile.ptr<f32>, #b>, %c: tensor<64x32x!tile.ptr<f32>, #acc>, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.0> : tensor<64x32xf32, #acc>
  %r = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %zero) -> (tensor<64x32xf32, #acc>) : i32 {
    %x = tile.load %fa {tilegpu.vector = array<i32: 1, 4>} : tensor<64x16x!tile.ptr<f32>, #a> -> tensor<64x16xf32, #a>
    %y = tile.load %fb {tilegpu.vector = array<i32: 1, 4>} : tensor<16x32x!tile.ptr<f32>, #b> -> tensor<16x32xf32, #b>
    %d = tile.dot %x, %y, %acc : tensor<64x16xf32, #a>, tensor<16x32xf32, #b> -> tensor<64x32xf32, #acc>
    scf.yield %d : tensor<64x32xf32, #acc>
  }
  tile.store %c, %r : tensor<64x32x!tile.ptr<f32>, #acc>, tensor<64x32xf32, #acc>
  return
}

// -----

// An int8 dot runs on mma.sync m16n8k32, whose fragment registers hold 4
// elements consecutive along K: A's are contiguous in its K-major slot, B's
// (N contiguous as it comes) are gathered a byte at a time from a `gather`
// slot, its 16-byte chunks swizzled against rows 4 apart.
#acc = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 8], [0, 16]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]], block = []>
#a = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4], [0, 8]], lane = [[0, 16], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]], block = []>
#b = #tilegpu.linear<register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]], block = []>
// CHECK-LABEL: func.func @int8
// CHECK-DAG: tilegpu.local_alloc : !tilegpu.shared<3x64x32xi8, k_major, swizzle = 32>
// CHECK-DAG: tilegpu.local_alloc : !tilegpu.shared<3x32x32xi8, gather, swizzle = 32>
// CHECK: scf.for
// CHECK: tilegpu.async_copy
// CHECK: tilegpu.async_copy
// CHECK: tile.dot
func.func @int8(%pa: tensor<64x32x!tile.ptr<i8>, #a>, %pb: tensor<32x32x!tile.ptr<i8>, #b>, %c: tensor<64x32x!tile.ptr<i32>, #acc>, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0> : tensor<64x32xi32, #acc>
  %r = scf.for %i = %c0 to %k step %c32 iter_args(%acc = %zero) -> (tensor<64x32xi32, #acc>) : i32 {
    %x = tile.load %pa {tilegpu.vector = array<i32: 1, 16>} : tensor<64x32x!tile.ptr<i8>, #a> -> tensor<64x32xi8, #a>
    %y = tile.load %pb {tilegpu.vector = array<i32: 1, 8>} : tensor<32x32x!tile.ptr<i8>, #b> -> tensor<32x32xi8, #b>
    %d = tile.dot %x, %y, %acc : tensor<64x32xi8, #a>, tensor<32x32xi8, #b> -> tensor<64x32xi32, #acc>
    scf.yield %d : tensor<64x32xi32, #acc>
  }
  tile.store %c, %r : tensor<64x32x!tile.ptr<i32>, #acc>, tensor<64x32xi32, #acc>
  return
}
