// RUN: tessel-opt %s -split-input-file -amd-buffer-accesses | FileCheck %s

#l = #tilegpu.linear<register = [], lane = [[1], [2], [4], [8], [16], [32]], warp = [], block = []>

// A row of 64 from a scalar pointer: offsets in [0, 63] become a buffer
// load and store with the mask, `other` and vector width kept; the pointers
// they replace are gone.
// CHECK-LABEL: func.func @row
// CHECK: %[[R:.*]] = tile.make_range
// CHECK: %[[V:.*]] = tilegpu.buffer_load %[[X:.*]][%[[R]]] mask %[[M:.*]] : tensor<64xi1, #linear> other %{{.*}} : tensor<64xf32, #linear> {tilegpu.vector = array<i32: 4>}
// CHECK: tilegpu.buffer_store %[[V]], %{{.*}}[%[[R]]] mask %[[M]]
// CHECK-NOT: tile.addptr
// CHECK-NOT: tile.load
func.func @row(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %cst = arith.constant dense<1.0> : tensor<64xf32, #l>
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #l>
  %xs = tile.splat %x : tensor<64x!tile.ptr<f32>, #l>
  %xp = tile.addptr %xs, %r : tensor<64x!tile.ptr<f32>, #l>, tensor<64xi32, #l>
  %ns = tile.splat %n : tensor<64xi32, #l>
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32, #l>
  %v = tile.load %xp mask %m : tensor<64xi1, #l> other %cst : tensor<64xf32, #l> {tilegpu.vector = array<i32: 4>} : tensor<64x!tile.ptr<f32>, #l> -> tensor<64xf32, #l>
  %ys = tile.splat %y : tensor<64x!tile.ptr<f32>, #l>
  %yp = tile.addptr %ys, %r : tensor<64x!tile.ptr<f32>, #l>, tensor<64xi32, #l>
  tile.store %yp, %v mask %m : tensor<64xi1, #l> {tilegpu.vector = array<i32: 4>} : tensor<64x!tile.ptr<f32>, #l>, tensor<64xf32, #l>
  return
}

// -----

#l = #tilegpu.linear<register = [], lane = [[1], [2], [4], [8], [16], [32]], warp = [], block = []>

// Two addptrs: the offsets are summed ([0, 63] + [100, 100]), in range.
// CHECK-LABEL: func.func @summed
// CHECK: %[[S:.*]] = arith.addi
// CHECK: tilegpu.buffer_load %{{.*}}[%[[S]]]
func.func @summed(%x: !tile.ptr<f16>, %y: !tile.ptr<f16>) attributes {tile.kernel} {
  %c = arith.constant dense<100> : tensor<64xi32, #l>
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #l>
  %xs = tile.splat %x : tensor<64x!tile.ptr<f16>, #l>
  %xp = tile.addptr %xs, %c : tensor<64x!tile.ptr<f16>, #l>, tensor<64xi32, #l>
  %xq = tile.addptr %xp, %r : tensor<64x!tile.ptr<f16>, #l>, tensor<64xi32, #l>
  %v = tile.load %xq : tensor<64x!tile.ptr<f16>, #l> -> tensor<64xf16, #l>
  %ys = tile.splat %y : tensor<64x!tile.ptr<f16>, #l>
  %yp = tile.addptr %ys, %r : tensor<64x!tile.ptr<f16>, #l>, tensor<64xi32, #l>
  tile.store %yp, %v : tensor<64x!tile.ptr<f16>, #l>, tensor<64xf16, #l>
  return
}

// -----

#l = #tilegpu.linear<register = [], lane = [[1], [2], [4], [8], [16], [32]], warp = [], block = []>

// Offsets the analysis cannot bound stay global accesses: a program's block
// (program ids up to 2^31 - 1, times 64, may overflow), a kernel argument
// (any i32), one that may be negative (-1 + [0, 63]), and offsets past the
// range (2^30 + [0, 63] fp32 elements: 4 GiB); volatile loads stay too.
// CHECK-LABEL: func.func @unbounded
// CHECK-NOT: tilegpu.buffer_
// CHECK: return
func.func @unbounded(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %k: i32) attributes {tile.kernel} {
  %pid = tile.get_program_id 0
  %c64 = arith.constant 64 : i32
  %base = arith.muli %pid, %c64 : i32
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #l>
  %b = tile.splat %base : tensor<64xi32, #l>
  %o = arith.addi %b, %r : tensor<64xi32, #l>
  %xs = tile.splat %x : tensor<64x!tile.ptr<f32>, #l>
  %p1 = tile.addptr %xs, %o : tensor<64x!tile.ptr<f32>, #l>, tensor<64xi32, #l>
  %v1 = tile.load %p1 : tensor<64x!tile.ptr<f32>, #l> -> tensor<64xf32, #l>
  %ks = tile.splat %k : tensor<64xi32, #l>
  %p2 = tile.addptr %xs, %ks : tensor<64x!tile.ptr<f32>, #l>, tensor<64xi32, #l>
  %v2 = tile.load %p2 : tensor<64x!tile.ptr<f32>, #l> -> tensor<64xf32, #l>
  %m1 = arith.constant dense<-1> : tensor<64xi32, #l>
  %neg = arith.addi %r, %m1 : tensor<64xi32, #l>
  %p3 = tile.addptr %xs, %neg : tensor<64x!tile.ptr<f32>, #l>, tensor<64xi32, #l>
  %v3 = tile.load %p3 : tensor<64x!tile.ptr<f32>, #l> -> tensor<64xf32, #l>
  %big = arith.constant dense<1073741824> : tensor<64xi32, #l>
  %far = arith.addi %r, %big : tensor<64xi32, #l>
  %p4 = tile.addptr %xs, %far : tensor<64x!tile.ptr<f32>, #l>, tensor<64xi32, #l>
  %v4 = tile.load %p4 : tensor<64x!tile.ptr<f32>, #l> -> tensor<64xf32, #l>
  %p5 = tile.addptr %xs, %r : tensor<64x!tile.ptr<f32>, #l>, tensor<64xi32, #l>
  %v5 = tile.load %p5 volatile : tensor<64x!tile.ptr<f32>, #l> -> tensor<64xf32, #l>
  %s1 = arith.addf %v1, %v2 : tensor<64xf32, #l>
  %s2 = arith.addf %v3, %v4 : tensor<64xf32, #l>
  %s3 = arith.addf %s1, %s2 : tensor<64xf32, #l>
  %s4 = arith.addf %s3, %v5 : tensor<64xf32, #l>
  %ys = tile.splat %y : tensor<64x!tile.ptr<f32>, #l>
  %yp = tile.addptr %ys, %o : tensor<64x!tile.ptr<f32>, #l>, tensor<64xi32, #l>
  tile.store %yp, %s4 : tensor<64x!tile.ptr<f32>, #l>, tensor<64xf32, #l>
  return
}
