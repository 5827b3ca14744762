// RUN: tessel-opt %s -tilegpu-pipeline="num-stages=3" | FileCheck %s --check-prefix=SLOTS
// RUN: tessel-opt %s -tilegpu-pipeline="num-stages=3" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// The K loop of an mma.sync dot whose operands come from column-major
// matrices: A (64 x 16) contiguous along M, B (16 x 32) contiguous along K,
// each thread holding its runs down the columns (8 elements of A, 4 of B).
// The pipeline copies them into slots that hold the tiles transposed, so
// the runs stay whole: A M-major (mn_major, the 128-byte swizzle of its 64
// rows), B K-major (k_major, the 32-byte swizzle of its 16 rows of K).
// SLOTS-DAG: %[[A:.*]] = tilegpu.local_alloc : !tilegpu.shared<3x64x16xf16, mn_major, transposed, swizzle = 128>
// SLOTS-DAG: %[[B:.*]] = tilegpu.local_alloc : !tilegpu.shared<3x16x32xf16, k_major, transposed, swizzle = 32>
// SLOTS: tilegpu.async_copy %{{.*}} to %[[A]][%c0_i32{{.*}}] mask %{{.*}} {tilegpu.vector = array<i32: 8, 1>}
// SLOTS: tilegpu.async_copy %{{.*}} to %[[B]][%c0_i32{{.*}}] mask %{{.*}} {tilegpu.vector = array<i32: 4, 1>}
// SLOTS: scf.for
// SLOTS: tilegpu.local_load %[[A]]
// SLOTS: tilegpu.local_load %[[B]]
// SLOTS: tile.dot

// Lowered: A's runs of 8 fp16 move with 16-byte cp.async, B's of 4 with
// 8-byte ones, in the prologue's two iterations and the loop's; the dot
// reads its slots in place, without staging: A's 16 x 16 fragment of this
// warp as one ldmatrix .x4.trans (K rows of 8 M-contiguous elements), B's
// two pairs of 8-column tiles as .x4 without .trans (N rows of 8
// K-contiguous elements).
// CHECK-COUNT-2: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache =  ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: llvm.store
// CHECK-NOT: nvvm.barrier0
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: nvvm.cp.async.wait.group 0

#acc = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 8], [0, 16]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]], block = []>
#a = #tilegpu.linear<register = [[1, 0], [2, 0], [4, 0]], lane = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warp = [[0, 4], [0, 8]], block = []>
#b = #tilegpu.linear<register = [[1, 0], [2, 0]], lane = [[4, 0], [8, 0], [0, 1], [0, 2], [0, 4]], warp = [[0, 8], [0, 16]], block = []>
func.func @matmul(%pa: !tile.ptr<f16> {tile.noalias}, %pb: !tile.ptr<f16> {tile.noalias}, %k: i32, %sa: tensor<64x16xi32, #a>, %sb: tensor<16x32xi32, #b>, %c: tensor<64x32x!tile.ptr<f32>, #acc>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.0> : tensor<64x32xf32, #acc>
  %za = arith.constant dense<0.0> : tensor<64x16xf16, #a>
  %a0 = tile.splat %pa : tensor<64x16x!tile.ptr<f16>, #a>
  %a1 = tile.addptr %a0, %sa : tensor<64x16x!tile.ptr<f16>, #a>, tensor<64x16xi32, #a>
  %b0 = tile.splat %pb : tensor<16x32x!tile.ptr<f16>, #b>
  %b1 = tile.addptr %b0, %sb : tensor<16x32x!tile.ptr<f16>, #b>, tensor<16x32xi32, #b>
  %da = arith.constant dense<1024> : tensor<64x16xi32, #a>
  %db = arith.constant dense<16> : tensor<16x32xi32, #b>
  %ks = tile.splat %k : tensor<64x16xi32, #a>
  %r:3 = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %zero, %p = %a1, %q = %b1) -> (tensor<64x32xf32, #acc>, tensor<64x16x!tile.ptr<f16>, #a>, tensor<16x32x!tile.ptr<f16>, #b>) : i32 {
    %is = tile.splat %i : tensor<64x16xi32, #a>
    %m = arith.cmpi slt, %is, %ks : tensor<64x16xi32, #a>
    %x = tile.load %p mask %m : tensor<64x16xi1, #a> other %za : tensor<64x16xf16, #a> {tilegpu.vector = array<i32: 8, 1>} : tensor<64x16x!tile.ptr<f16>, #a> -> tensor<64x16xf16, #a>
    %y = tile.load %q {tilegpu.vector = array<i32: 4, 1>} : tensor<16x32x!tile.ptr<f16>, #b> -> tensor<16x32xf16, #b>
    %d = tile.dot %x, %y, %acc : tensor<64x16xf16, #a>, tensor<16x32xf16, #b> -> tensor<64x32xf32, #acc>
    %p2 = tile.addptr %p, %da : tensor<64x16x!tile.ptr<f16>, #a>, tensor<64x16xi32, #a>
    %q2 = tile.addptr %q, %db : tensor<16x32x!tile.ptr<f16>, #b>, tensor<16x32xi32, #b>
    scf.yield %d, %p2, %q2 : tensor<64x32xf32, #acc>, tensor<64x16x!tile.ptr<f16>, #a>, tensor<16x32x!tile.ptr<f16>, #b>
  }
  tile.store %c, %r#0 : tensor<64x32x!tile.ptr<f32>, #acc>, tensor<64x32xf32, #acc>
  return
}
