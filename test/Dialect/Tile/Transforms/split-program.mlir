// RUN: tessel-opt %s -split-input-file -tile-split-program=num-ctas=2 | FileCheck %s

// Element-wise: each CTA takes half of the range, moved by its rank; the
// store of its half needs no guard.
// CHECK-LABEL: func.func @add
// CHECK: %[[RANK:.*]] = tile.get_cta_rank
// CHECK: %[[BASE:.*]] = tile.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
// CHECK: %[[HALF:.*]] = arith.constant 512 : i32
// CHECK: %[[SHIFT:.*]] = arith.muli %[[RANK]], %[[HALF]] : i32
// CHECK: %[[SPLAT:.*]] = tile.splat %[[SHIFT]] : tensor<512xi32>
// CHECK: %[[R:.*]] = arith.addi %[[BASE]], %[[SPLAT]] : tensor<512xi32>
// CHECK: tile.load %{{.*}} : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
// CHECK-NOT: scf.if
// CHECK: tile.store %{{.*}}, %{{.*}} : tensor<512x!tile.ptr<f32>>, tensor<512xf32>
func.func @add(%x: !tile.ptr<f32>, %o: !tile.ptr<f32>) {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %xs = tile.splat %x : tensor<1024x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %v = tile.load %xp : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %two = arith.constant dense<2.0> : tensor<1024xf32>
  %w = arith.mulf %v, %two : tensor<1024xf32>
  %os = tile.splat %o : tensor<1024x!tile.ptr<f32>>
  %op = tile.addptr %os, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  tile.store %op, %w : tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>
  return
}

// -----

// A dot: its columns are cut (B's and the accumulator's, carried by the
// loop); A is loaded whole by both CTAs.
// CHECK-LABEL: func.func @matmul
// CHECK: tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
// CHECK: scf.for {{.*}} -> (tensor<64x32xf32>)
// CHECK: tile.load %{{.*}} : tensor<64x16x!tile.ptr<f16>> -> tensor<64x16xf16>
// CHECK: tile.load %{{.*}} : tensor<16x32x!tile.ptr<f16>> -> tensor<16x32xf16>
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x16xf16>, tensor<16x32xf16> -> tensor<64x32xf32>
// CHECK-NOT: scf.if
// CHECK: tile.store %{{.*}}, %{{.*}} : tensor<64x32x!tile.ptr<f32>>, tensor<64x32xf32>
func.func @matmul(%a: tensor<64x16x!tile.ptr<f16>>, %b: tensor<16x1x!tile.ptr<f16>>, %c: tensor<64x1x!tile.ptr<f32>>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %cols = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %row = tile.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rowb = tile.broadcast %row : tensor<1x64xi32> -> tensor<16x64xi32>
  %bb = tile.broadcast %b : tensor<16x1x!tile.ptr<f16>> -> tensor<16x64x!tile.ptr<f16>>
  %bp = tile.addptr %bb, %rowb : tensor<16x64x!tile.ptr<f16>>, tensor<16x64xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (tensor<64x64xf32>) : i32 {
    %x = tile.load %a : tensor<64x16x!tile.ptr<f16>> -> tensor<64x16xf16>
    %y = tile.load %bp : tensor<16x64x!tile.ptr<f16>> -> tensor<16x64xf16>
    %d = tile.dot %x, %y, %s : tensor<64x16xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %rowc = tile.broadcast %row : tensor<1x64xi32> -> tensor<64x64xi32>
  %cb = tile.broadcast %c : tensor<64x1x!tile.ptr<f32>> -> tensor<64x64x!tile.ptr<f32>>
  %cp = tile.addptr %cb, %rowc : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %cp, %acc : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

// -----

// A reduction over rows: the rows are cut, not the reduced columns.
// Arguments come whole: a block computed from one is not cut.
// CHECK-LABEL: func.func @row_sums
// CHECK: tile.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
// CHECK: tile.reduce %{{.*}} {axis = 1 : i32} : tensor<16x64xf32> -> tensor<16xf32>
// CHECK-NOT: scf.if
// CHECK: tile.store %{{.*}}, %{{.*}} : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
// CHECK: scf.if
// CHECK-NEXT: tile.store %{{.*}}, %{{.*}} : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
func.func @row_sums(%x: !tile.ptr<f32>, %o: !tile.ptr<f32>, %cols: tensor<64x!tile.ptr<f32>>) {
  %rows = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %r = tile.expand_dims %rows {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %rb = tile.broadcast %r : tensor<32x1xi32> -> tensor<32x64xi32>
  %xs = tile.splat %x : tensor<32x64x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %rb : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>
  %v = tile.load %xp : tensor<32x64x!tile.ptr<f32>> -> tensor<32x64xf32>
  %s = tile.reduce %v {axis = 1 : i32} : tensor<32x64xf32> -> tensor<32xf32> {
  ^bb0(%p: f32, %q: f32):
    %t = arith.addf %p, %q : f32
    tile.reduce.return %t : f32
  }
  %os = tile.splat %o : tensor<32x!tile.ptr<f32>>
  %op = tile.addptr %os, %rows : tensor<32x!tile.ptr<f32>>, tensor<32xi32>
  tile.store %op, %s : tensor<32x!tile.ptr<f32>>, tensor<32xf32>
  %c = tile.load %cols : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  tile.store %cols, %c : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  return
}

// -----

// Nothing to cut (a sum of the whole block): every CTA computes it, CTA 0
// stores it.
// CHECK-LABEL: func.func @total
// CHECK: %[[RANK:.*]] = tile.get_cta_rank
// CHECK: tile.reduce %{{.*}} {axis = 0 : i32} : tensor<128xf32> -> f32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[RANK]], %{{.*}} : i32
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: tile.store %{{.*}}, %{{.*}} : !tile.ptr<f32>, f32
func.func @total(%x: tensor<128x!tile.ptr<f32>>, %o: !tile.ptr<f32>) {
  %v = tile.load %x : tensor<128x!tile.ptr<f32>> -> tensor<128xf32>
  %s = tile.reduce %v {axis = 0 : i32} : tensor<128xf32> -> f32 {
  ^bb0(%p: f32, %q: f32):
    %t = arith.addf %p, %q : f32
    tile.reduce.return %t : f32
  }
  tile.store %o, %s : !tile.ptr<f32>, f32
  return
}

// -----

// Descriptor blocks: the cut dimension's offset (the outer one, of equals)
// moves by the rank times the part; a block that is not cut is stored by
// CTA 0.
// CHECK-LABEL: func.func @descriptors
// CHECK: %[[RANK:.*]] = tile.get_cta_rank
// CHECK: %[[PART:.*]] = arith.constant 16 : i32
// CHECK: %[[SHIFT:.*]] = arith.muli %[[RANK]], %[[PART]] : i32
// CHECK: %[[OFF:.*]] = arith.addi %{{.*}}, %[[SHIFT]] : i32
// CHECK: tile.descriptor_load %{{.*}}[%[[OFF]], %{{.*}}] {{.*}} -> tensor<16x64xf16>
// CHECK: tile.descriptor_store %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} {{.*}} : !tile.ptr<f16>, tensor<16x64xf16>
// CHECK: scf.if
// CHECK-NEXT: tile.descriptor_store %{{.*}} : !tile.ptr<f16>, tensor<64xf16>
func.func @descriptors(%base: !tile.ptr<f16>, %m: i32, %n: i32, %s: i64, %om: i32, %on: i32) {
  %x = tile.descriptor_load %base[%om, %on] shape [%m, %n] strides [%s] : !tile.ptr<f16> -> tensor<32x64xf16>
  tile.descriptor_store %base[%om, %on], %x shape [%m, %n] strides [%s] : !tile.ptr<f16>, tensor<32x64xf16>
  %y = tile.descriptor_load %base[%om] shape [%n] strides [] : !tile.ptr<f16> -> tensor<64xf16>
  %z = tile.reduce %y {axis = 0 : i32} : tensor<64xf16> -> f16 {
  ^bb0(%p: f16, %q: f16):
    %t = arith.addf %p, %q : f16
    tile.reduce.return %t : f16
  }
  tile.descriptor_store %base[%om], %y shape [%n] strides [] : !tile.ptr<f16>, tensor<64xf16>
  return
}

// -----

// Atomics are cut with their class like stores: each CTA makes its half and
// gets its half's old values. A scalar atomic nobody reads is made by CTA 0.
// CHECK-LABEL: func.func @atomics
// CHECK: %[[RANK:.*]] = tile.get_cta_rank
// CHECK: tile.atomic_rmw add, acq_rel, gpu, %{{.*}}, %{{.*}} : tensor<512x!tile.ptr<i32>>, tensor<512xi32>
// CHECK: tile.store %{{.*}}, %{{.*}} : tensor<512x!tile.ptr<i32>>, tensor<512xi32>
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[RANK]], %{{.*}} : i32
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: tile.atomic_rmw add, relaxed, gpu
func.func @atomics(%p: !tile.ptr<i32>, %o: !tile.ptr<i32>, %counter: !tile.ptr<i32>) {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %ps = tile.splat %p : tensor<1024x!tile.ptr<i32>>
  %pa = tile.addptr %ps, %r : tensor<1024x!tile.ptr<i32>>, tensor<1024xi32>
  %old = tile.atomic_rmw add, acq_rel, gpu, %pa, %r : tensor<1024x!tile.ptr<i32>>, tensor<1024xi32>
  %os = tile.splat %o : tensor<1024x!tile.ptr<i32>>
  %oa = tile.addptr %os, %r : tensor<1024x!tile.ptr<i32>>, tensor<1024xi32>
  tile.store %oa, %old : tensor<1024x!tile.ptr<i32>>, tensor<1024xi32>
  %c1 = arith.constant 1 : i32
  %n = tile.atomic_rmw add, relaxed, gpu, %counter, %c1 : !tile.ptr<i32>, i32
  return
}

// -----

// A lock's compare-and-swap: one CTA takes it, and the others could not
// learn its old value. The whole program runs on CTA 0, uncut.
// CHECK-LABEL: func.func @locked
// CHECK: %[[RANK:.*]] = tile.get_cta_rank
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[RANK]], %{{.*}} : i32
// CHECK: scf.if %[[FIRST]] {
// CHECK: scf.while
// CHECK: tile.atomic_cas
// CHECK: tile.load %{{.*}} : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
// CHECK: tile.store %{{.*}}, %{{.*}} : tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>
// CHECK: tile.atomic_rmw xchg
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @locked(%lock: !tile.ptr<i32>, %x: !tile.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.while : () -> () {
    %old = tile.atomic_cas acq_rel, gpu, %lock, %c0, %c1 : !tile.ptr<i32>, i32
    %held = arith.cmpi eq, %old, %c1 : i32
    scf.condition(%held)
  } do {
    scf.yield
  }
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %xs = tile.splat %x : tensor<1024x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %v = tile.load %xa : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %w = arith.addf %v, %v : tensor<1024xf32>
  tile.store %xa, %w : tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>
  %unlocked = tile.atomic_rmw xchg, release, gpu, %lock, %c0 : !tile.ptr<i32>, i32
  return
}
