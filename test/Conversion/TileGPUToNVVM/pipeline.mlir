// RUN: tessel-opt %s -tilegpu-pipeline="num-stages=3" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// A pipelined mma.sync K loop lowered: the buffers take 3 x (2 KiB of A +
// 1 KiB of B) after the (empty) scratch, the shared array 1024-byte aligned;
// each thread copies its runs of 4 fp16 with cp.async of 8 bytes (zero-fill
// through the source size where masked): A and B of two iterations in the
// prologue and one in the loop, each group committed; the loop waits for all
// but one group, a barrier, and the dot reads its slot with ldmatrix: A's
// 64x16 tile of this warp as one .x4, B's 32 columns as two .x4.trans
// (two 8-column tiles each), no register staging (no st.shared) and no
// barrier of the dot's own; all groups are waited for after the loop.
// CHECK: module attributes {tilegpu.shared = 9216 : i32
// CHECK: llvm.mlir.global external @tessel_shared() {addr_space = 3 : i32, alignment = 1024 : i64}
// CHECK-COUNT-6: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache =  ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.barrier0
// CHECK-COUNT-3: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: llvm.store
// CHECK-NOT: nvvm.barrier0
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: nvvm.cp.async.wait.group 0

#acc = #tilegpu.linear<register = [[0, 1], [8, 0], [0, 8], [0, 16]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]], block = []>
#a = #tilegpu.linear<register = [[0, 1], [0, 2], [32, 0]], lane = [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]], block = []>
#b = #tilegpu.linear<register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]], block = []>
func.func @matmul(%pa: !tile.ptr<f16> {tile.noalias}, %pb: !tile.ptr<f16> {tile.noalias}, %k: i32, %sa: tensor<64x16xi32, #a>, %sb: tensor<16x32xi32, #b>, %c: tensor<64x32x!tile.ptr<f32>, #acc>) attributes {tile.kernel} {
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
  tile.store %c, %r#0 : tensor<64x32x!tile.ptr<f32>, #acc>, tensor<64x32xf32, #acc>
  return
}

