// RUN: tessel-opt %s -convert-tilegpu-to-rocdl -canonicalize -cse | FileCheck %s

#l = #tilegpu.linear<register = [[1], [2]], lane = [[4], [8], [16], [32], [64], [128]], warp = [], block = []>
#l1 = #tilegpu.linear<register = [], lane = [[1], [2], [4], [8], [16], [32]], warp = [], block = []>

// One V# per base (2^31 - 2 bytes, CDNA's raw-buffer flags 0x27000), one
// 16-byte access per 4 registers at byte offset 4 * offset, moved to
// 0x80000000 (past the range: zeros, no write) where the mask is off; `other`
// (not zero) selected after the load; no branch.
// CHECK-LABEL: llvm.func @row
// CHECK-DAG: %[[RANGE:.*]] = llvm.mlir.constant(2147483646 : i64) : i64
// CHECK-DAG: %[[FLAGS:.*]] = llvm.mlir.constant(159744 : i32) : i32
// CHECK-DAG: %[[OOB:.*]] = llvm.mlir.constant(-2147483648 : i32) : i32
// CHECK: %[[X:.*]] = rocdl.make.buffer.rsrc %arg0, %{{.*}}, %[[RANGE]], %[[FLAGS]] : <1> to <8>
// CHECK: %[[OFF:.*]] = llvm.select %{{.*}}, %{{.*}}, %[[OOB]] : i1, i32
// CHECK: %[[RAW:.*]] = rocdl.raw.ptr.buffer.load %[[X]], %[[OFF]], %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: %[[V:.*]] = llvm.bitcast %[[RAW]] : vector<4xi32> to vector<4xf32>
// CHECK: llvm.select %{{.*}}, %[[V]], %{{.*}} : i1, vector<4xf32>
// CHECK: %[[Y:.*]] = rocdl.make.buffer.rsrc %arg1, %{{.*}}, %[[RANGE]], %[[FLAGS]] : <1> to <8>
// CHECK: rocdl.raw.ptr.buffer.store %{{.*}}, %[[Y]], %[[OFF]], %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.return
module attributes {tilegpu.threads_per_warp = 64 : i32} {
func.func @row(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tilegpu.num_warps = 1 : i32} {
  %cst = arith.constant dense<1.0> : tensor<256xf32, #l>
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #l>
  %ns = tile.splat %n : tensor<256xi32, #l>
  %m = arith.cmpi slt, %r, %ns : tensor<256xi32, #l>
  %v = tilegpu.buffer_load %x[%r] mask %m : tensor<256xi1, #l> other %cst : tensor<256xf32, #l> {tilegpu.vector = array<i32: 4>} : !tile.ptr<f32>, tensor<256xi32, #l> -> tensor<256xf32, #l>
  tilegpu.buffer_store %v, %y[%r] mask %m : tensor<256xi1, #l> {tilegpu.vector = array<i32: 4>} : tensor<256xf32, #l>, !tile.ptr<f32>, tensor<256xi32, #l>
  return
}
}

// Byte and short loads are frozen before use: LLVM 22 folds a sign extension
// of an unfrozen one into a new load outside the memory order.
// CHECK-LABEL: llvm.func @shorts
// CHECK: %[[S:.*]] = rocdl.raw.ptr.buffer.load %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i16
// CHECK: llvm.freeze %[[S]] : i16
// CHECK: llvm.sext
module attributes {tilegpu.threads_per_warp = 64 : i32} {
func.func @shorts(%x: !tile.ptr<i16>, %y: !tile.ptr<i32>) attributes {tile.kernel, tilegpu.num_warps = 1 : i32} {
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #l1>
  %v = tilegpu.buffer_load %x[%r] : !tile.ptr<i16>, tensor<64xi32, #l1> -> tensor<64xi16, #l1>
  %w = arith.extsi %v : tensor<64xi16, #l1> to tensor<64xi32, #l1>
  tilegpu.buffer_store %w, %y[%r] : tensor<64xi32, #l1>, !tile.ptr<i32>, tensor<64xi32, #l1>
  return
}
}
