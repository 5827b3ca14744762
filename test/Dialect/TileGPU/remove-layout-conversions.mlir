// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu -canonicalize -tilegpu-remove-layout-conversions -canonicalize -cse | FileCheck %s

// 2-D addresses from 1-D ranges: expand_dims wants each range in a slice of
// the 2-D layout, which the ranges (and the index arithmetic on them) are
// recomputed in; no conversion is left, and the loaded block is untouched.
// CHECK-LABEL: func.func @copy_2d
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.load
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.store
func.func @copy_2d(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %stride: i32) attributes {tile.kernel} {
  %rm = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %rn = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %s = tile.splat %stride : tensor<32xi32>
  %rows = arith.muli %rm, %s : tensor<32xi32>
  %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %c2 = tile.expand_dims %rn {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tile.broadcast %r2 : tensor<32x1xi32> -> tensor<32x64xi32>
  %cb = tile.broadcast %c2 : tensor<1x64xi32> -> tensor<32x64xi32>
  %off = arith.addi %rb, %cb : tensor<32x64xi32>
  %xs = tile.splat %x : tensor<32x64x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %off : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>
  %v = tile.load %xa : tensor<32x64x!tile.ptr<f32>> -> tensor<32x64xf32>
  %ys = tile.splat %y : tensor<32x64x!tile.ptr<f32>>
  %ya = tile.addptr %ys, %off : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>
  tile.store %ya, %v : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xf32>
  return
}

// -----

// The accumulator of a dot in a loop stays in the mma.sync layout across
// iterations (its zero start is made in that layout); converted once, after.
// CHECK-LABEL: func.func @accumulate
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.for {{.*}} -> (tensor<32x32xf32, #[[MMA:linear[0-9]*]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.dot {{.*}} -> tensor<32x32xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.yield
// CHECK: tilegpu.convert_layout {{.*}} : tensor<32x32xf32, #[[MMA]]> -> tensor<32x32xf32,
func.func @accumulate(%a: !tile.ptr<f16>, %out: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %i = tile.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
  %as = tile.splat %a : tensor<32x32x!tile.ptr<f16>>
  %aa = tile.addptr %as, %i : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zero) -> (tensor<32x32xf32>) : i32 {
    %x = tile.load %aa : tensor<32x32x!tile.ptr<f16>> -> tensor<32x32xf16>
    %d = tile.dot %x, %x, %c : tensor<32x32xf16>, tensor<32x32xf16> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %os = tile.splat %out : tensor<32x32x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i : tensor<32x32x!tile.ptr<f32>>, tensor<32x32xi32>
  tile.store %oa, %acc : tensor<32x32x!tile.ptr<f32>>, tensor<32x32xf32>
  return
}

// -----

// A K loop's accumulator stored as fp16 converts after its truncation: half
// the bytes through shared memory.
// CHECK-LABEL: func.func @accumulate_to_f16
// CHECK: %[[ACC:.*]] = scf.for {{.*}} -> (tensor<32x32xf32, #[[MMA:linear[0-9]*]]>)
// CHECK: scf.yield
// CHECK-NOT: tilegpu.convert_layout {{.*}}xf32
// CHECK: %[[H:.*]] = arith.truncf %[[ACC]] : tensor<32x32xf32, #[[MMA]]> to tensor<32x32xf16, #[[MMA]]>
// CHECK: tilegpu.convert_layout %[[H]] : tensor<32x32xf16, #[[MMA]]> -> tensor<32x32xf16,
func.func @accumulate_to_f16(%a: !tile.ptr<f16>, %out: !tile.ptr<f16>, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %i = tile.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
  %as = tile.splat %a : tensor<32x32x!tile.ptr<f16>>
  %aa = tile.addptr %as, %i : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zero) -> (tensor<32x32xf32>) : i32 {
    %x = tile.load %aa : tensor<32x32x!tile.ptr<f16>> -> tensor<32x32xf16>
    %d = tile.dot %x, %x, %c : tensor<32x32xf16>, tensor<32x32xf16> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %h = arith.truncf %acc : tensor<32x32xf32> to tensor<32x32xf16>
  %os = tile.splat %out : tensor<32x32x!tile.ptr<f16>>
  %oa = tile.addptr %os, %i : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  tile.store %oa, %h : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xf16>
  return
}

// -----

// Attention's scores stay in the dot's mma.sync layout: the scaling, the row
// maximum and sum (reductions in that layout), the exponentials, and the
// second dot's A operand; only 64-element row vectors change layout (to be
// stored), never the 64x32 block.
// CHECK-LABEL: func.func @scores
// CHECK: %[[QK:.*]] = tile.dot {{.*}} -> tensor<64x32xf32, #[[MMA:linear[0-9]*]]>
// CHECK-NOT: tilegpu.convert_layout {{.*}} : tensor<64x32xf32
// CHECK: tile.reduce %{{.*}} {axis = 1 : i32} : tensor<64x32xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout {{.*}} : tensor<64x32xf32
// CHECK: math.exp2 {{.*}} : tensor<64x32xf32, #[[MMA]]>
// CHECK: tile.reduce %{{.*}} {axis = 1 : i32} : tensor<64x32xf32, #[[MMA]]>
// CHECK: arith.truncf {{.*}} to tensor<64x32xf16, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout {{.*}} : tensor<64x32x
// CHECK: tile.dot %{{.*}} : tensor<64x32xf16, #[[MMA]]>, tensor<32x64xf16, #{{.*}}> -> tensor<64x64xf32
func.func @scores(%q: !tile.ptr<f16>, %k: !tile.ptr<f16>, %v: !tile.ptr<f16>, %o: !tile.ptr<f32>, %l: !tile.ptr<f32>) attributes {tile.kernel} {
  %r4096 = tile.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
  %i64x64 = tile.reshape %r4096 : tensor<4096xi32> -> tensor<64x64xi32>
  %r2048 = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %i64x32 = tile.reshape %r2048 : tensor<2048xi32> -> tensor<64x32xi32>
  %i32x64 = tile.reshape %r2048 : tensor<2048xi32> -> tensor<32x64xi32>
  %qs = tile.splat %q : tensor<64x64x!tile.ptr<f16>>
  %qa = tile.addptr %qs, %i64x64 : tensor<64x64x!tile.ptr<f16>>, tensor<64x64xi32>
  %qv = tile.load %qa : tensor<64x64x!tile.ptr<f16>> -> tensor<64x64xf16>
  %ks = tile.splat %k : tensor<64x32x!tile.ptr<f16>>
  %ka = tile.addptr %ks, %i64x32 : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %kv = tile.load %ka : tensor<64x32x!tile.ptr<f16>> -> tensor<64x32xf16>
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %qk = tile.dot %qv, %kv, %zero : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
  %scale = arith.constant dense<0.125> : tensor<64x32xf32>
  %s = arith.mulf %qk, %scale : tensor<64x32xf32>
  %m = tile.reduce %s {axis = 1 : i32} : tensor<64x32xf32> -> tensor<64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %mx = arith.maxnumf %a0, %a1 : f32
    tile.reduce.return %mx : f32
  }
  %m2 = tile.expand_dims %m {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %mb = tile.broadcast %m2 : tensor<64x1xf32> -> tensor<64x32xf32>
  %d = arith.subf %s, %mb : tensor<64x32xf32>
  %p = math.exp2 %d : tensor<64x32xf32>
  %sum = tile.reduce %p {axis = 1 : i32} : tensor<64x32xf32> -> tensor<64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %ad = arith.addf %a0, %a1 : f32
    tile.reduce.return %ad : f32
  }
  %r64 = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %ls = tile.splat %l : tensor<64x!tile.ptr<f32>>
  %la = tile.addptr %ls, %r64 : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  tile.store %la, %sum : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  %ph = arith.truncf %p : tensor<64x32xf32> to tensor<64x32xf16>
  %vs = tile.splat %v : tensor<32x64x!tile.ptr<f16>>
  %va = tile.addptr %vs, %i32x64 : tensor<32x64x!tile.ptr<f16>>, tensor<32x64xi32>
  %vv = tile.load %va : tensor<32x64x!tile.ptr<f16>> -> tensor<32x64xf16>
  %zero2 = arith.constant dense<0.0> : tensor<64x64xf32>
  %out = tile.dot %ph, %vv, %zero2 : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %os = tile.splat %o : tensor<64x64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %i64x64 : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %oa, %out : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

// -----

// A row statistic a loop carries (attention's running maximum) is carried in
// its reduction's layout: the reduction's conversion moves forward to the
// yield and the loop step takes the conversions out of the loop (its -inf
// start, a constant, is made in that layout).
// CHECK-LABEL: func.func @running_max
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[INIT:.*]] = arith.constant dense<0xFF800000>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.for {{.*}} iter_args(%[[MI:.*]] = %[[INIT]]) -> (tensor<64xf32, #[[ROW:linear[0-9]*]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[RM:.*]] = tile.reduce {{.*}} -> tensor<64xf32, #[[ROW]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[NEXT:.*]] = arith.maxnumf %[[MI]], %[[RM]] : tensor<64xf32, #[[ROW]]>
// CHECK-NEXT: scf.yield %[[NEXT]]
// CHECK: tilegpu.convert_layout {{.*}} : tensor<64xf32, #[[ROW]]> -> tensor<64xf32,
func.func @running_max(%q: !tile.ptr<f16>, %k: !tile.ptr<f16>, %o: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %r2048 = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %i64x32 = tile.reshape %r2048 : tensor<2048xi32> -> tensor<64x32xi32>
  %i32x32 = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %i32 = tile.reshape %i32x32 : tensor<1024xi32> -> tensor<32x32xi32>
  %qs = tile.splat %q : tensor<64x32x!tile.ptr<f16>>
  %qa = tile.addptr %qs, %i64x32 : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %qv = tile.load %qa : tensor<64x32x!tile.ptr<f16>> -> tensor<64x32xf16>
  %ks = tile.splat %k : tensor<32x32x!tile.ptr<f16>>
  %ka = tile.addptr %ks, %i32 : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %m = scf.for %j = %c0 to %n step %c1 iter_args(%mi = %ninf) -> (tensor<64xf32>) : i32 {
    %kv = tile.load %ka : tensor<32x32x!tile.ptr<f16>> -> tensor<32x32xf16>
    %qk = tile.dot %qv, %kv, %zero : tensor<64x32xf16>, tensor<32x32xf16> -> tensor<64x32xf32>
    %rm = tile.reduce %qk {axis = 1 : i32} : tensor<64x32xf32> -> tensor<64xf32> {
    ^bb0(%a0: f32, %a1: f32):
      %mx = arith.maxnumf %a0, %a1 : f32
      tile.reduce.return %mx : f32
    }
    %mij = arith.maxnumf %mi, %rm : tensor<64xf32>
    scf.yield %mij : tensor<64xf32>
  }
  %r64 = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %os = tile.splat %o : tensor<64x!tile.ptr<f32>>
  %oa = tile.addptr %os, %r64 : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  tile.store %oa, %m : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  return
}

// -----

// Attention's accumulator, rescaled by a row vector before each dot, is
// carried in the mma.sync layout only once the row vector is: the loop step
// moves the accumulator's conversion out of the loop after the forward
// propagation. That conversion propagates in turn: the epilogue's division
// by the carried row sums and the truncation run in the mma.sync layout and
// the conversion moves 16-bit elements, not 32-bit ones. The zero and one
// starts are constants made in the carried layouts, not conversions.
// CHECK-LABEL: func.func @rescaled_accumulate
// CHECK: %[[ACC:.*]]:2 = scf.for {{.*}} -> (tensor<64x32xf32, #[[MMA:linear[0-9]*]]>, tensor<64xf32, #{{linear[0-9]*}}>)
// CHECK: scf.yield
// CHECK-NOT: tilegpu.convert_layout {{.*}}x32xf32
// CHECK: %[[Q:.*]] = arith.divf %[[ACC]]#0, {{.*}} : tensor<64x32xf32, #[[MMA]]>
// CHECK-NEXT: %[[H:.*]] = arith.truncf %[[Q]] : tensor<64x32xf32, #[[MMA]]> to tensor<64x32xf16, #[[MMA]]>
// CHECK: tilegpu.convert_layout %[[H]] : tensor<64x32xf16, #[[MMA]]> -> tensor<64x32xf16,
func.func @rescaled_accumulate(%q: !tile.ptr<f16>, %k: !tile.ptr<f16>, %o: !tile.ptr<f16>, %n: i32) attributes {tile.kernel} {
  %r2048 = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %i64x32 = tile.reshape %r2048 : tensor<2048xi32> -> tensor<64x32xi32>
  %i32x32 = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %i32 = tile.reshape %i32x32 : tensor<1024xi32> -> tensor<32x32xi32>
  %qs = tile.splat %q : tensor<64x32x!tile.ptr<f16>>
  %qa = tile.addptr %qs, %i64x32 : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %qv = tile.load %qa : tensor<64x32x!tile.ptr<f16>> -> tensor<64x32xf16>
  %ks = tile.splat %k : tensor<32x32x!tile.ptr<f16>>
  %ka = tile.addptr %ks, %i32 : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %one = arith.constant dense<1.0> : tensor<64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %res:2 = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero, %l = %one) -> (tensor<64x32xf32>, tensor<64xf32>) : i32 {
    %kv = tile.load %ka : tensor<32x32x!tile.ptr<f16>> -> tensor<32x32xf16>
    %qk = tile.dot %qv, %kv, %zero : tensor<64x32xf16>, tensor<32x32xf16> -> tensor<64x32xf32>
    %rm = tile.reduce %qk {axis = 1 : i32} : tensor<64x32xf32> -> tensor<64xf32> {
    ^bb0(%a0: f32, %a1: f32):
      %mx = arith.maxnumf %a0, %a1 : f32
      tile.reduce.return %mx : f32
    }
    %alpha = math.exp2 %rm : tensor<64xf32>
    %ae = tile.expand_dims %alpha {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
    %ab = tile.broadcast %ae : tensor<64x1xf32> -> tensor<64x32xf32>
    %scaled = arith.mulf %acc, %ab : tensor<64x32xf32>
    %p = arith.truncf %qk : tensor<64x32xf32> to tensor<64x32xf16>
    %next = tile.dot %p, %kv, %scaled : tensor<64x32xf16>, tensor<32x32xf16> -> tensor<64x32xf32>
    %l2 = arith.addf %l, %alpha : tensor<64xf32>
    scf.yield %next, %l2 : tensor<64x32xf32>, tensor<64xf32>
  }
  %le = tile.expand_dims %res#1 {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %lb = tile.broadcast %le : tensor<64x1xf32> -> tensor<64x32xf32>
  %out = arith.divf %res#0, %lb : tensor<64x32xf32>
  %h = arith.truncf %out : tensor<64x32xf32> to tensor<64x32xf16>
  %os = tile.splat %o : tensor<64x32x!tile.ptr<f16>>
  %oa = tile.addptr %os, %i64x32 : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  tile.store %oa, %h : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xf16>
  return
}

// -----

// A block loaded through transposed pointers (a tensor descriptor's block
// read as B^T): the load takes the layout coalescing gives the transposed
// addresses, and the pointers are recomputed in the layout the transpose
// takes to it, not converted (eight bytes each through shared memory).
// CHECK-LABEL: func.func @transposed_pointers
// CHECK-NOT: tilegpu.convert_layout {{.*}}!tile.ptr
// CHECK: tile.trans {{.*}} -> tensor<64x32x!tile.ptr<f16>
// CHECK-NOT: tilegpu.convert_layout {{.*}}!tile.ptr
// CHECK: tile.load
func.func @transposed_pointers(%x: !tile.ptr<f16>, %y: !tile.ptr<f16>) attributes {tile.kernel} {
  %rm = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %rn = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %c64 = arith.constant dense<64> : tensor<32xi32>
  %rows = arith.muli %rm, %c64 : tensor<32xi32>
  %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %c2 = tile.expand_dims %rn {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tile.broadcast %r2 : tensor<32x1xi32> -> tensor<32x64xi32>
  %cb = tile.broadcast %c2 : tensor<1x64xi32> -> tensor<32x64xi32>
  %off = arith.addi %rb, %cb : tensor<32x64xi32>
  %xs = tile.splat %x : tensor<32x64x!tile.ptr<f16>>
  %xa = tile.addptr %xs, %off : tensor<32x64x!tile.ptr<f16>>, tensor<32x64xi32>
  %xt = tile.trans %xa {order = array<i32: 1, 0>} : tensor<32x64x!tile.ptr<f16>> -> tensor<64x32x!tile.ptr<f16>>
  %v = tile.load %xt : tensor<64x32x!tile.ptr<f16>> -> tensor<64x32xf16>
  %r = tile.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  %i = tile.reshape %r : tensor<2048xi32> -> tensor<64x32xi32>
  %ys = tile.splat %y : tensor<64x32x!tile.ptr<f16>>
  %ya = tile.addptr %ys, %i : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  tile.store %ya, %v : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xf16>
  return
}
