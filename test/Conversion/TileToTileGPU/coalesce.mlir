// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4" -canonicalize | FileCheck %s

// Loads and stores of 2-byte elements along a contiguous last dimension give
// their tensors 8 consecutive elements per thread (16-byte accesses) instead
// of the default 4; so do the element-wise ops between them.
// CHECK: #[[V8:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[1], [2], [4], [1024]], lane = {{\[}}[8], [16], [32], [64], [128]], warp = {{\[}}[256], [512]], block = []>
// CHECK-LABEL: func.func @copy_f16
// CHECK: tile.load {{.*}}tilegpu.vector = array<i32: 8>{{.*}} -> tensor<2048xf16, #[[V8]]>
// CHECK: arith.addf {{.*}} : tensor<2048xf16, #[[V8]]>
// CHECK: tile.store {{.*}}tilegpu.vector = array<i32: 8>{{.*}}, tensor<2048xf16, #[[V8]]>
func.func @copy_f16(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %xp = tile.splat %x : tensor<2048x!tile.ptr<f16>>
  %xa = tile.addptr %xp, %r : tensor<2048x!tile.ptr<f16>>, tensor<2048xi32>
  %op = tile.splat %o : tensor<2048x!tile.ptr<f16>>
  %oa = tile.addptr %op, %r : tensor<2048x!tile.ptr<f16>>, tensor<2048xi32>
  %v = tile.load %xa : tensor<2048x!tile.ptr<f16>> -> tensor<2048xf16>
  %w = arith.addf %v, %v : tensor<2048xf16>
  tile.store %oa, %w : tensor<2048x!tile.ptr<f16>>, tensor<2048xf16>
  return
}

// -----

// A group of values takes the narrowest width its memory ops want: an fp16
// load whose value an fp32 store writes keeps the default 4 per thread.
// CHECK: #[[V4:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[1], [2], [512], [1024]], lane = {{\[}}[4], [8], [16], [32], [64]], warp = {{\[}}[128], [256]], block = []>
// CHECK-LABEL: func.func @widen
// CHECK: tile.load {{.*}} -> tensor<2048xf16, #[[V4]]>
// CHECK: tile.store {{.*}}, tensor<2048xf32, #[[V4]]>
func.func @widen(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %xp = tile.splat %x : tensor<2048x!tile.ptr<f16>>
  %xa = tile.addptr %xp, %r : tensor<2048x!tile.ptr<f16>>, tensor<2048xi32>
  %op = tile.splat %o : tensor<2048x!tile.ptr<f32>>
  %oa = tile.addptr %op, %r : tensor<2048x!tile.ptr<f32>>, tensor<2048xi32>
  %v = tile.load %xa : tensor<2048x!tile.ptr<f16>> -> tensor<2048xf16>
  %w = arith.extf %v : tensor<2048xf16> to tensor<2048xf32>
  tile.store %oa, %w : tensor<2048x!tile.ptr<f32>>, tensor<2048xf32>
  return
}

// -----

// A loop-carried pointer takes its load's width in the loop and on entry:
// the 64x32 fp16 operand of a dot, 8 elements of a row per thread (4 lanes
// per row), no conversion of the pointers in the loop.
// CHECK: #[[A:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [0, 2], [0, 4], [32, 0]], lane = {{\[}}[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = {{\[}}[8, 0], [16, 0]], block = []>
// CHECK-LABEL: func.func @k_loop
// CHECK: %[[P0:.*]] = tile.addptr {{.*}} : tensor<64x32x!tile.ptr<f16>, #[[A]]>
// CHECK: scf.for {{.*}} iter_args(%[[P:.*]] = %[[P0]], {{.*}}) -> (tensor<64x32x!tile.ptr<f16>, #[[A]]>,
// CHECK: tile.load %[[P]] {tilegpu.vector = array<i32: 1, 8>} : tensor<64x32x!tile.ptr<f16>, #[[A]]> -> tensor<64x32xf16, #[[A]]>
// CHECK-NOT: tilegpu.convert_layout %[[P]]
// CHECK: tile.addptr %[[P]], {{.*}} : tensor<64x32x!tile.ptr<f16>, #[[A]]>
func.func @k_loop(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32, %o: !tile.ptr<f32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %step = arith.constant dense<32> : tensor<64x32xi32>
  %rows = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %cols = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %c2 = tile.expand_dims %cols {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %s64 = arith.constant dense<64> : tensor<64x1xi32>
  %rs = arith.muli %r2, %s64 : tensor<64x1xi32>
  %rb = tile.broadcast %rs : tensor<64x1xi32> -> tensor<64x32xi32>
  %cb = tile.broadcast %c2 : tensor<1x32xi32> -> tensor<64x32xi32>
  %off = arith.addi %rb, %cb : tensor<64x32xi32>
  %ap = tile.splat %a : tensor<64x32x!tile.ptr<f16>>
  %p0 = tile.addptr %ap, %off : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %b = arith.constant dense<1.0> : tensor<32x64xf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %res:2 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %p0, %acc = %zero) -> (tensor<64x32x!tile.ptr<f16>>, tensor<64x64xf32>) : i32 {
    %x = tile.load %p : tensor<64x32x!tile.ptr<f16>> -> tensor<64x32xf16>
    %d = tile.dot %x, %b, %acc : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    %q = tile.addptr %p, %step : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
    scf.yield %q, %d : tensor<64x32x!tile.ptr<f16>>, tensor<64x64xf32>
  }
  %r = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i2 = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %os = tile.splat %o : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i2 : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %res#1 : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

// -----

// Addresses not proved contiguous (a gather) keep the default layout, and
// so does the store that shares their offsets' group with a 4-byte load.
// CHECK: #[[D:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[1], [2], [512], [1024]], lane = {{\[}}[4], [8], [16], [32], [64]], warp = {{\[}}[128], [256]], block = []>
// CHECK-LABEL: func.func @gather
// CHECK: tile.load {{.*}} -> tensor<2048xf16, #[[D]]>
// CHECK: tile.store {{.*}}, tensor<2048xf16, #[[D]]>
func.func @gather(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %idx: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %ip = tile.splat %idx : tensor<2048x!tile.ptr<i32>>
  %ia = tile.addptr %ip, %r : tensor<2048x!tile.ptr<i32>>, tensor<2048xi32>
  %i = tile.load %ia : tensor<2048x!tile.ptr<i32>> -> tensor<2048xi32>
  %xp = tile.splat %x : tensor<2048x!tile.ptr<f16>>
  %xa = tile.addptr %xp, %i : tensor<2048x!tile.ptr<f16>>, tensor<2048xi32>
  %op = tile.splat %o : tensor<2048x!tile.ptr<f16>>
  %oa = tile.addptr %op, %r : tensor<2048x!tile.ptr<f16>>, tensor<2048xi32>
  %v = tile.load %xa : tensor<2048x!tile.ptr<f16>> -> tensor<2048xf16>
  tile.store %oa, %v : tensor<2048x!tile.ptr<f16>>, tensor<2048xf16>
  return
}

// -----

// Addresses contiguous along dimension 0 (a [64, 32] block of a
// column-major fp16 matrix): lanes run down the columns, 8 consecutive rows
// per thread (16-byte accesses), warps across the columns. The proved
// widths are per dimension.
// CHECK: #[[COL:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[1, 0], [2, 0], [4, 0], [0, 16]], lane = {{\[}}[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warp = {{\[}}[0, 4], [0, 8]], block = []>
// CHECK-LABEL: func.func @column_major
// CHECK: tile.load {{.*}}tilegpu.vector = array<i32: 8, 1>{{.*}} -> tensor<64x32xf16, #[[COL]]>
// CHECK: tile.store {{.*}}tilegpu.vector = array<i32: 8, 1>{{.*}}, tensor<64x32xf16, #[[COL]]>
func.func @column_major(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %rows = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %cols = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %c2 = tile.expand_dims %cols {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %s64 = arith.constant dense<64> : tensor<1x32xi32>
  %cs = arith.muli %c2, %s64 : tensor<1x32xi32>
  %rb = tile.broadcast %r2 : tensor<64x1xi32> -> tensor<64x32xi32>
  %cb = tile.broadcast %cs : tensor<1x32xi32> -> tensor<64x32xi32>
  %off = arith.addi %rb, %cb : tensor<64x32xi32>
  %xp = tile.splat %x : tensor<64x32x!tile.ptr<f16>>
  %xa = tile.addptr %xp, %off : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %op = tile.splat %o : tensor<64x32x!tile.ptr<f16>>
  %oa = tile.addptr %op, %off : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %v = tile.load %xa : tensor<64x32x!tile.ptr<f16>> -> tensor<64x32xf16>
  tile.store %oa, %v : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xf16>
  return
}

// -----

// A load contiguous along dimension 0 whose value a store contiguous along
// dimension 1 writes (a transposing copy): the group's memory ops disagree,
// so it keeps the last dimension, and the narrowest width along it (the
// load's 1): the default layout.
// CHECK: #[[ROW:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[0, 1], [0, 2], [16, 0], [32, 0]], lane = {{\[}}[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = {{\[}}[4, 0], [8, 0]], block = []>
// CHECK-LABEL: func.func @transposing_copy
// CHECK: tile.load {{.*}}tilegpu.vector = array<i32: 8, 1>{{.*}} -> tensor<64x32xf16, #[[ROW]]>
// CHECK: tile.store {{.*}}tilegpu.vector = array<i32: 1, 8>{{.*}}, tensor<64x32xf16, #[[ROW]]>
func.func @transposing_copy(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %rows = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %cols = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %c2 = tile.expand_dims %cols {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %s64 = arith.constant dense<64> : tensor<1x32xi32>
  %s32 = arith.constant dense<32> : tensor<64x1xi32>
  %cs = arith.muli %c2, %s64 : tensor<1x32xi32>
  %rs = arith.muli %r2, %s32 : tensor<64x1xi32>
  %rb = tile.broadcast %r2 : tensor<64x1xi32> -> tensor<64x32xi32>
  %cb = tile.broadcast %cs : tensor<1x32xi32> -> tensor<64x32xi32>
  %in = arith.addi %rb, %cb : tensor<64x32xi32>
  %rsb = tile.broadcast %rs : tensor<64x1xi32> -> tensor<64x32xi32>
  %cb1 = tile.broadcast %c2 : tensor<1x32xi32> -> tensor<64x32xi32>
  %out = arith.addi %rsb, %cb1 : tensor<64x32xi32>
  %xp = tile.splat %x : tensor<64x32x!tile.ptr<f16>>
  %xa = tile.addptr %xp, %in : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %op = tile.splat %o : tensor<64x32x!tile.ptr<f16>>
  %oa = tile.addptr %op, %out : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %v = tile.load %xa : tensor<64x32x!tile.ptr<f16>> -> tensor<64x32xf16>
  tile.store %oa, %v : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xf16>
  return
}

// -----

// One zero constant (as CSE leaves it) is the `other` of a row-major load and
// of a column-major one, whose values go nowhere together: each load keeps its
// own contiguous dimension (runs of 8 along rows, then down columns), with a
// zero of its own layout.
// CHECK-DAG: #[[ROWS:linear[0-9]*]] = #tilegpu.linear<register = {{\[\[}}0, 1], [0, 2], [0, 4]], lane = {{\[\[}}0, 8]
// CHECK-DAG: #[[COLS:linear[0-9]*]] = #tilegpu.linear<register = {{\[\[}}1, 0], [2, 0], [4, 0]], lane = {{\[\[}}8, 0]
// CHECK-LABEL: func.func @shared_other
// CHECK-DAG: %[[ZR:.*]] = arith.constant dense<0.000000e+00> : tensor<32x32xf16, #[[ROWS]]>
// CHECK-DAG: %[[ZC:.*]] = arith.constant dense<0.000000e+00> : tensor<32x32xf16, #[[COLS]]>
// CHECK-DAG: tile.load %{{.*}} mask %{{.*}} other %[[ZR]] : tensor<32x32xf16, #[[ROWS]]>
// CHECK-DAG: tile.load %{{.*}} mask %{{.*}} other %[[ZC]] : tensor<32x32xf16, #[[COLS]]>
func.func @shared_other(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32) {
  %zero = arith.constant dense<0.0> : tensor<32x32xf16>
  %r = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %row = tile.expand_dims %r {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %col = tile.expand_dims %r {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %c32r = arith.constant dense<32> : tensor<32x1xi32>
  %c32c = arith.constant dense<32> : tensor<1x32xi32>
  %rows32 = arith.muli %row, %c32r : tensor<32x1xi32>
  %cols32 = arith.muli %col, %c32c : tensor<1x32xi32>
  %rowsb = tile.broadcast %rows32 : tensor<32x1xi32> -> tensor<32x32xi32>
  %colb = tile.broadcast %col : tensor<1x32xi32> -> tensor<32x32xi32>
  %rowb = tile.broadcast %row : tensor<32x1xi32> -> tensor<32x32xi32>
  %colsb = tile.broadcast %cols32 : tensor<1x32xi32> -> tensor<32x32xi32>
  %rm = arith.addi %rowsb, %colb : tensor<32x32xi32>
  %cm = arith.addi %rowb, %colsb : tensor<32x32xi32>
  %na = tile.splat %n : tensor<32x32xi32>
  %nb = tile.splat %n : tensor<32x32xi32>
  %amask = arith.cmpi slt, %rm, %na : tensor<32x32xi32>
  %bmask = arith.cmpi slt, %cm, %nb : tensor<32x32xi32>
  %as = tile.splat %a : tensor<32x32x!tile.ptr<f16>>
  %bs = tile.splat %b : tensor<32x32x!tile.ptr<f16>>
  %ap = tile.addptr %as, %rm : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  %bp = tile.addptr %bs, %cm : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  %x = tile.load %ap mask %amask : tensor<32x32xi1> other %zero : tensor<32x32xf16> : tensor<32x32x!tile.ptr<f16>> -> tensor<32x32xf16>
  %y = tile.load %bp mask %bmask : tensor<32x32xi1> other %zero : tensor<32x32xf16> : tensor<32x32x!tile.ptr<f16>> -> tensor<32x32xf16>
  %osx = tile.splat %out : tensor<32x32x!tile.ptr<f16>>
  %osy = tile.splat %out : tensor<32x32x!tile.ptr<f16>>
  %ox = tile.addptr %osx, %rm : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  %oy = tile.addptr %osy, %cm : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  tile.store %ox, %x : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xf16>
  tile.store %oy, %y : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xf16>
  return
}

// -----

// An atomic ties its pointers, value and old values into one group and
// takes whatever layout the group's loads and stores want: here the fp16
// loads' 8 consecutive elements per thread, with no conversion.
// CHECK: #[[V8:linear[0-9]*]] = #tilegpu.linear<register = {{\[}}[1], [2], [4], [1024]], lane = {{\[}}[8], [16], [32], [64], [128]], warp = {{\[}}[256], [512]], block = []>
// CHECK-LABEL: func.func @atomic_in_group
// CHECK: tile.load {{.*}}tilegpu.vector = array<i32: 8>{{.*}} -> tensor<2048xf16, #[[V8]]>
// CHECK: tile.atomic_rmw fadd, {{.*}} : tensor<2048x!tile.ptr<f16>, #[[V8]]>, tensor<2048xf16, #[[V8]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.store {{.*}}tilegpu.vector = array<i32: 8>{{.*}}, tensor<2048xf16, #[[V8]]>
func.func @atomic_in_group(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %xp = tile.splat %x : tensor<2048x!tile.ptr<f16>>
  %xa = tile.addptr %xp, %r : tensor<2048x!tile.ptr<f16>>, tensor<2048xi32>
  %op = tile.splat %o : tensor<2048x!tile.ptr<f16>>
  %oa = tile.addptr %op, %r : tensor<2048x!tile.ptr<f16>>, tensor<2048xi32>
  %v = tile.load %xa : tensor<2048x!tile.ptr<f16>> -> tensor<2048xf16>
  %old = tile.atomic_rmw fadd, acq_rel, gpu, %oa, %v : tensor<2048x!tile.ptr<f16>>, tensor<2048xf16>
  tile.store %xa, %old : tensor<2048x!tile.ptr<f16>>, tensor<2048xf16>
  return
}
