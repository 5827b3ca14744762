// RUN: tessel-opt %s -split-input-file  -convert-tile-to-loops -canonicalize -cse | FileCheck %s

// Element-wise chains, address arithmetic and masked loads fuse into the
// store's loop: one loop, loads guarded by the mask, no buffer (the arrays
// overlap no other argument's: the store cannot change what is loaded).
// The mask `start + arange < n` is all true when its last element is below
// n and start + 1023 does not wrap: then the loop runs without it.
// CHECK-LABEL: func.func private @vector_add
// CHECK-SAME: (%[[X:arg[0-9]+]]: !llvm.ptr {llvm.noalias}, %[[Y:arg[0-9]+]]: !llvm.ptr {llvm.noalias}, %[[O:arg[0-9]+]]: !llvm.ptr {llvm.noalias}, %[[N:arg[0-9]+]]: i32
// CHECK-NOT: memref.alloca
// CHECK: %[[START:[0-9]+]] = arith.muli
// CHECK: %[[LAST:[0-9]+]] = arith.addi %[[START]], %c1023_i32
// CHECK: %[[NOWRAP:[0-9]+]] = arith.cmpi sle, %[[START]], %[[LAST]]
// CHECK: %[[BELOW:[0-9]+]] = arith.cmpi slt, %[[LAST]], %[[N]]
// CHECK: %[[ALL:[0-9]+]] = arith.andi %[[NOWRAP]], %[[BELOW]]
// CHECK: scf.if %[[ALL]] {
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c1
// CHECK-NOT: scf.if
// CHECK: llvm.store
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c1
// CHECK: %[[OFF:[0-9]+]] = arith.addi
// CHECK: %[[M:[0-9]+]] = arith.cmpi slt, %[[OFF]], %[[N]]
// CHECK: scf.if %[[M]]
// CHECK: llvm.getelementptr %[[X]][%[[OFF]]]
// CHECK: llvm.load
// CHECK: llvm.getelementptr %[[Y]][%[[OFF]]]
// CHECK: llvm.load
// CHECK: arith.addf
// CHECK: llvm.store
// CHECK-NOT: scf.for
// CHECK: func.func @vector_add_tessel_entry(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32)
// CHECK: func.call @vector_add
func.func @vector_add(%x: !tile.ptr<f32> {tile.noalias}, %y: !tile.ptr<f32> {tile.noalias}, %o: !tile.ptr<f32> {tile.noalias}, %n: i32) attributes {tile.kernel} {
  %pid = tile.get_program_id 0
  %c1024 = arith.constant 1024 : i32
  %start = arith.muli %pid, %c1024 : i32
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %s = tile.splat %start : tensor<1024xi32>
  %offs = arith.addi %s, %r : tensor<1024xi32>
  %ns = tile.splat %n : tensor<1024xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
  %xp = tile.splat %x : tensor<1024x!tile.ptr<f32>>
  %xa = tile.addptr %xp, %offs : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %yp = tile.splat %y : tensor<1024x!tile.ptr<f32>>
  %ya = tile.addptr %yp, %offs : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %op = tile.splat %o : tensor<1024x!tile.ptr<f32>>
  %oa = tile.addptr %op, %offs : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %xv = tile.load %xa mask %mask : tensor<1024xi1> : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %yv = tile.load %ya mask %mask : tensor<1024xi1> : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %sum = arith.addf %xv, %yv : tensor<1024xf32>
  tile.store %oa, %sum mask %mask : tensor<1024xi1> : tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>
  return
}

// -----

// A load whose value is used after a store to memory is read into a buffer
// before the store.
// CHECK-LABEL: func.func private @load_then_store
// CHECK: %[[BUF:[a-z0-9_]+]] = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK: scf.for
// CHECK: llvm.load
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: scf.for
// CHECK: memref.load %[[BUF]]
// CHECK: llvm.store
// CHECK: scf.for
// CHECK: memref.load %[[BUF]]
// CHECK: llvm.store
func.func @load_then_store(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %ps = tile.splat %p : tensor<16x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %qs = tile.splat %q : tensor<16x!tile.ptr<f32>>
  %qa = tile.addptr %qs, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %x = tile.load %pa : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  %one = arith.constant dense<1.0> : tensor<16xf32>
  %x1 = arith.addf %x, %one : tensor<16xf32>
  tile.store %pa, %x1 : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  tile.store %qa, %x : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  return
}

// -----

// A reduction along a contiguous axis keeps 16 partial accumulators and folds
// them at the end; a 1-D reduction gives a scalar. The range offsets the
// pointer by its position as i64, no i32 round trip (LLVM sees consecutive
// loads).
// CHECK-LABEL: func.func private @row_sum
// CHECK: %[[ACC:[a-z0-9_]+]] = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c16
// CHECK: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: scf.for %{{.*}} = %c1 to %c8
// CHECK: scf.for %[[L:arg[0-9]+]] = %c0 to %c16
// CHECK: memref.load %[[ACC]][%[[L]]]
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[ACC]][%[[L]]]
// CHECK-COUNT-15: arith.addf
// CHECK: llvm.store
func.func @row_sum(%p: !tile.ptr<f32>, %o: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %ps = tile.splat %p : tensor<128x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<128x!tile.ptr<f32>>, tensor<128xi32>
  %x = tile.load %pa : tensor<128x!tile.ptr<f32>> -> tensor<128xf32>
  %s = tile.reduce %x {axis = 0 : i32} : tensor<128xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tile.reduce.return %t : f32
  }
  tile.store %o, %s : !tile.ptr<f32>, f32
  return
}

// -----

// A long row (256 elements up) keeps four groups of 16 accumulators: each
// chunk of 64 elements combines into the four side by side, so no chunk
// waits on the one before it; the groups fold pairwise, then the lanes.
// CHECK-LABEL: func.func private @long_row_max
// CHECK-COUNT-4: memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK: scf.for %{{.*}} = %c1 to %c16
// CHECK-COUNT-4: arith.maximumf
// CHECK: }
// CHECK-COUNT-3: arith.maximumf
// CHECK-COUNT-15: arith.maximumf
// CHECK: llvm.store
func.func @long_row_max(%p: !tile.ptr<f32>, %o: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %ps = tile.splat %p : tensor<1024x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %x = tile.load %pa : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %s = tile.reduce %x {axis = 0 : i32} : tensor<1024xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maximumf %a, %b : f32
    tile.reduce.return %t : f32
  }
  tile.store %o, %s : !tile.ptr<f32>, f32
  return
}

// -----

// A loop-carried block lives in a buffer written in place each iteration;
// the loop keeps only scalar iteration arguments.
// CHECK-LABEL: func.func private @carried
// CHECK: %[[ACC:[a-z0-9_]+]] = memref.alloca() {alignment = 64 : i64} : memref<32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c32
// CHECK: memref.store %{{.*}}, %[[ACC]]
// CHECK: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %c1_i32  : i32 {
// CHECK: scf.for %[[J:arg[0-9]+]] = %c0 to %c32
// CHECK: memref.load %[[ACC]][%[[J]]]
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[ACC]][%[[J]]]
func.func @carried(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %zero = arith.constant dense<0.0> : tensor<32xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %ps = tile.splat %p : tensor<32x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<32x!tile.ptr<f32>>, tensor<32xi32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<32xf32>) : i32 {
    %x = tile.load %pa : tensor<32x!tile.ptr<f32>> -> tensor<32xf32>
    %s = arith.addf %a, %x : tensor<32xf32>
    scf.yield %s : tensor<32xf32>
  }
  tile.store %pa, %acc : tensor<32x!tile.ptr<f32>>, tensor<32xf32>
  return
}

// -----

// A while loop carrying a block: header and body each see a buffer; the
// condition copies the header's block into the body's buffer.
// CHECK-LABEL: func.func private @while_block
// CHECK: memref.store %{{.*}}, %[[HEAD:alloca[_0-9]*]][
// CHECK: scf.while (%{{.*}} = %{{.*}}) : (i32) -> i32 {
// CHECK: memref.load %[[HEAD]]
// CHECK: memref.store %{{.*}}, %[[BODY:alloca[_0-9]*]][
// CHECK: scf.condition
// CHECK: } do {
// CHECK: memref.load %[[BODY]]
// CHECK: memref.store %{{.*}}, %[[HEAD]]
// CHECK: scf.yield
func.func @while_block(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 8 : i32} : tensor<8xi32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %res:2 = scf.while (%x = %r, %i = %n) : (tensor<8xi32>, i32) -> (tensor<8xi32>, i32) {
    %go = arith.cmpi sgt, %i, %c0 : i32
    scf.condition(%go) %x, %i : tensor<8xi32>, i32
  } do {
  ^bb0(%x: tensor<8xi32>, %i: i32):
    %x2 = arith.addi %x, %x : tensor<8xi32>
    %i2 = arith.subi %i, %c1 : i32
    scf.yield %x2, %i2 : tensor<8xi32>, i32
  }
  %ps = tile.splat %p : tensor<8x!tile.ptr<i32>>
  %pa = tile.addptr %ps, %r : tensor<8x!tile.ptr<i32>>, tensor<8xi32>
  tile.store %pa, %res#0 : tensor<8x!tile.ptr<i32>>, tensor<8xi32>
  return
}

// -----

// dot: operands go to buffers of their own type, a linalg.matmul
// accumulates into C (the CPU target's micro-kernels lower it, widening fp16
// there), and a loop-carried accumulator used only by the dot is updated in
// place (no copy back at the yield).
// CHECK-LABEL: func.func private @dot_loop
// CHECK: %[[ACC:[a-z0-9_]+]] = memref.alloca() {alignment = 64 : i64} : memref<32x64xf32>
// CHECK: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %c1_i32  : i32 {
// CHECK-NOT: arith.extf
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x16xf16>, memref<16x64xf16>) outs(%[[ACC]] : memref<32x64xf32>)
// CHECK-NOT: memref.store %{{.*}}, %[[ACC]]
// CHECK: memref.load %[[ACC]]
// CHECK: llvm.store
func.func @dot_loop(%pa: !tile.ptr<f16>, %pb: !tile.ptr<f16>, %pc: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %zero = arith.constant dense<0.0> : tensor<32x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = tile.splat %pa : tensor<32x16x!tile.ptr<f16>>
  %b = tile.splat %pb : tensor<16x64x!tile.ptr<f16>>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (tensor<32x64xf32>) : i32 {
    %av = tile.load %a : tensor<32x16x!tile.ptr<f16>> -> tensor<32x16xf16>
    %bv = tile.load %b : tensor<16x64x!tile.ptr<f16>> -> tensor<16x64xf16>
    %d = tile.dot %av, %bv, %s : tensor<32x16xf16>, tensor<16x64xf16> -> tensor<32x64xf32>
    scf.yield %d : tensor<32x64xf32>
  }
  %c = tile.splat %pc : tensor<32x64x!tile.ptr<f32>>
  tile.store %c, %acc : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xf32>
  return
}

// -----

// Integer division never traps: a zero divisor becomes 1, and a signed
// division by -1 is a negation (INT_MIN / -1 would trap on x86).
// CHECK-LABEL: func.func private @safe_division
// CHECK: %[[Z:.*]] = arith.cmpi eq, %[[D:.*]], %c0_i32
// CHECK: %[[M1:.*]] = arith.cmpi eq, %[[D]], %c-1_i32
// CHECK: %[[BAD:.*]] = arith.ori %[[Z]], %[[M1]]
// CHECK: %[[SAFE:.*]] = arith.select %[[BAD]], %c1_i32, %[[D]]
// CHECK: %[[Q:.*]] = arith.divsi %{{.*}}, %[[SAFE]]
// CHECK: %[[NEG:.*]] = arith.subi %c0_i32, %{{.*}}
// CHECK: arith.select %[[M1]], %[[NEG]], %[[Q]]
func.func @safe_division(%p: !tile.ptr<i32>, %x: i32, %d: i32) attributes {tile.kernel} {
  %q = arith.divsi %x, %d : i32
  tile.store %p, %q : !tile.ptr<i32>, i32
  return
}


// -----

// A pointer argument marked divisible by 16 is 16-byte aligned for LLVM.
// CHECK-LABEL: func.func private @aligned
// CHECK-SAME: (%{{.*}}: !llvm.ptr {llvm.align = 16 : i64}, %{{.*}}: i32,
func.func @aligned(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %c = arith.constant 1.0 : f32
  tile.store %p, %c : !tile.ptr<f32>, f32
  return
}

// -----

// A dot operand already in a buffer of the accumulator's type (here loaded
// once before the loop) is read in place: no copy inside the loop.
// CHECK-LABEL: func.func private @invariant_operand
// CHECK: %[[A:[a-z0-9_]+]] = memref.alloca() {alignment = 64 : i64} : memref<16x16xf32>
// CHECK: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %c1_i32  : i32 {
// CHECK-NOT: memref.store %{{.*}}, %[[A]]
// CHECK: linalg.matmul ins(%[[A]], %{{.*}} : memref<16x16xf32>, memref<16x32xf32>)
func.func @invariant_operand(%pa: !tile.ptr<f32>, %pc: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %zero = arith.constant dense<0.0> : tensor<16x32xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = tile.splat %pa : tensor<16x16x!tile.ptr<f32>>
  %av = tile.load %a : tensor<16x16x!tile.ptr<f32>> -> tensor<16x16xf32>
  %b = tile.splat %pa : tensor<16x32x!tile.ptr<f32>>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (tensor<16x32xf32>) : i32 {
    %bv = tile.load %b : tensor<16x32x!tile.ptr<f32>> -> tensor<16x32xf32>
    %d = tile.dot %av, %bv, %s : tensor<16x16xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
    scf.yield %d : tensor<16x32xf32>
  }
  %c = tile.splat %pc : tensor<16x32x!tile.ptr<f32>>
  tile.store %c, %acc : tensor<16x32x!tile.ptr<f32>>, tensor<16x32xf32>
  return
}

// -----

// Float max/min are compares and selects (a NaN operand yields the other
// operand), not llvm.maxnum/minnum: LLVM 22's loop vectorizer miscompiles
// loops carrying several maxnum reductions.
// CHECK-LABEL: func.func private @float_max
// CHECK-NOT: arith.maxnumf
// CHECK: arith.cmpf uno
// CHECK: arith.select
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK-NOT: arith.maxnumf
func.func @float_max(%x: !tile.ptr<f32>, %a: f32, %b: f32) attributes {tile.kernel} {
  %m = arith.maxnumf %a, %b : f32
  tile.store %x, %m : !tile.ptr<f32>, f32
  return
}

// -----

// A load whose value is stored through a pointer that may alias it is read
// into a buffer first: the store's loop would otherwise read elements it has
// already written (here each row's first element, through a broadcast).
// CHECK-LABEL: func.func private @store_after_load_same_array
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK: scf.for
// CHECK: llvm.load
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[BUF]]
// CHECK: llvm.store
func.func @store_after_load_same_array(%z: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %c4 = arith.constant dense<4> : tensor<4xi32>
  %r = tile.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
  %rows = arith.muli %r, %c4 : tensor<4xi32>
  %zs = tile.splat %z : tensor<4x!tile.ptr<f32>>
  %firsts = tile.addptr %zs, %rows : tensor<4x!tile.ptr<f32>>, tensor<4xi32>
  %first = tile.load %firsts : tensor<4x!tile.ptr<f32>> -> tensor<4xf32>
  %fc = tile.expand_dims %first {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  %fb = tile.broadcast %fc : tensor<4x1xf32> -> tensor<4x4xf32>
  %rc = tile.expand_dims %rows {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %rb = tile.broadcast %rc : tensor<4x1xi32> -> tensor<4x4xi32>
  %cr = tile.expand_dims %r {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %cb = tile.broadcast %cr : tensor<1x4xi32> -> tensor<4x4xi32>
  %offs = arith.addi %rb, %cb : tensor<4x4xi32>
  %zs2 = tile.splat %z : tensor<4x4x!tile.ptr<f32>>
  %ptrs = tile.addptr %zs2, %offs : tensor<4x4x!tile.ptr<f32>>, tensor<4x4xi32>
  %v = tile.load %ptrs : tensor<4x4x!tile.ptr<f32>> -> tensor<4x4xf32>
  %sum = arith.addf %v, %fb : tensor<4x4xf32>
  tile.store %ptrs, %sum : tensor<4x4x!tile.ptr<f32>>, tensor<4x4xf32>
  return
}

// -----

// Two arguments not marked noalias may be views of one array: the load is
// read into a buffer before the store. Marked noalias, it fuses.
// CHECK-LABEL: func.func private @copy_may_alias
// CHECK: memref.alloca
// CHECK-LABEL: func.func private @copy_noalias
// CHECK-NOT: memref.alloca
// CHECK: func.func @copy_noalias_tessel_entry
func.func @copy_may_alias(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %xs = tile.splat %x : tensor<16x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %ys = tile.splat %y : tensor<16x!tile.ptr<f32>>
  %yp = tile.addptr %ys, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %v = tile.load %xp : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  tile.store %yp, %v : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  return
}
func.func @copy_noalias(%x: !tile.ptr<f32> {tile.noalias}, %y: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %xs = tile.splat %x : tensor<16x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %ys = tile.splat %y : tensor<16x!tile.ptr<f32>>
  %yp = tile.addptr %ys, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %v = tile.load %xp : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  tile.store %yp, %v : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  return
}

// -----

// The entry's loop over programs is never vectorized (each iteration runs the
// whole kernel; LLVM's vectorizer spent minutes on such bodies).
// CHECK: #[[V:.*]] = #llvm.loop_vectorize<disable = true>
// CHECK: #[[A:.*]] = #llvm.loop_annotation<vectorize = #[[V]]>
// CHECK-LABEL: func.func @store_one_tessel_entry
// CHECK: scf.for
// CHECK: func.call @store_one
// CHECK: } {llvm.loop_annotation = #[[A]]}
func.func @store_one(%x: !tile.ptr<f32>, %a: f32) attributes {tile.kernel} {
  tile.store %x, %a : !tile.ptr<f32>, f32
  return
}

// -----

// Narrowing conversions are cloned as they are (the CPU target's
// tessel-cpu-narrow-floats rounds them later).
// CHECK-LABEL: func.func private @narrow
// CHECK: arith.truncf %{{.*}} : f64 to f16
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @narrow(%h: !tile.ptr<f16>, %bf: !tile.ptr<bf16>, %x: f64, %y: f32) attributes {tile.kernel} {
  %a = arith.truncf %x : f64 to f16
  tile.store %h, %a : !tile.ptr<f16>, f16
  %b = arith.truncf %y : f32 to bf16
  tile.store %bf, %b : !tile.ptr<bf16>, bf16
  return
}

// -----

// A reshape that regroups dimensions reads its source's buffer as a flat
// row-major sequence (no division or remainder per index); one that only
// adds a unit dimension maps indices directly.
// CHECK-LABEL: func.func private @reshape
// CHECK-NOT: arith.remui
// CHECK: %[[T:.*]] = memref.alloca() {{.*}} : memref<4x8xi32>
// CHECK-NOT: arith.remui
// CHECK: memref.store %{{.*}}, %[[T]]
// CHECK-NOT: arith.remui
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[T]] to offset: [0], sizes: [32], strides: [1]
// CHECK-NEXT: memref.load %[[FLAT]]
// CHECK-NOT: arith.remui
// CHECK: func.func @reshape_tessel_entry
func.func @reshape(%x: !tile.ptr<i32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %c3 = arith.constant dense<3> : tensor<32xi32>
  %m = arith.muli %r, %c3 : tensor<32xi32>
  %g = tile.reshape %m : tensor<32xi32> -> tensor<8x4xi32>
  %t = tile.trans %g {order = array<i32: 1, 0>} : tensor<8x4xi32> -> tensor<4x8xi32>
  %f = tile.reshape %t : tensor<4x8xi32> -> tensor<32xi32>
  %u = tile.reshape %f : tensor<32xi32> -> tensor<32x1xi32>
  %xs = tile.splat %x : tensor<32x1x!tile.ptr<i32>>
  %rr = tile.reshape %r : tensor<32xi32> -> tensor<32x1xi32>
  %p = tile.addptr %xs, %rr : tensor<32x1x!tile.ptr<i32>>, tensor<32x1xi32>
  tile.store %p, %u : tensor<32x1x!tile.ptr<i32>>, tensor<32x1xi32>
  return
}

// -----

// uint64 to float never reaches LLVM as uitofp (LLVM 22 narrows uitofp of a
// sign-extended value to the narrow value's, losing the sign extension).
// CHECK-LABEL: func.func private @u64_to_f32
// CHECK-NOT: arith.uitofp
// CHECK: arith.sitofp
// CHECK: arith.select
// CHECK-NOT: arith.uitofp
func.func @u64_to_f32(%o: !tile.ptr<f32>, %x: i64) attributes {tile.kernel} {
  %f = arith.uitofp %x : i64 to f32
  tile.store %o, %f : !tile.ptr<f32>, f32
  return
}

// -----

// A volatile load is read once per element, into a buffer, even when its one
// use (a broadcast to 8 rows) evaluates it once per row; a plain load there
// stays lazy, read in the 8 x 4 nest.
// CHECK-LABEL: func.func private @volatile_once
// CHECK: %[[BUF:.*]] = memref.alloca() {{.*}} : memref<4xf32>
// CHECK: scf.for
// CHECK: llvm.load volatile
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[BUF]]
// CHECK-NOT: llvm.load volatile
// CHECK-LABEL: func.func @volatile_once_tessel_entry
func.func @volatile_once(%p: !tile.ptr<f32> {tile.noalias}, %q: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
  %ps = tile.splat %p : tensor<4x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<4x!tile.ptr<f32>>, tensor<4xi32>
  %v = tile.load %pa volatile : tensor<4x!tile.ptr<f32>> -> tensor<4xf32>
  %e = tile.expand_dims %v {axis = 0 : i32} : tensor<4xf32> -> tensor<1x4xf32>
  %b = tile.broadcast %e : tensor<1x4xf32> -> tensor<8x4xf32>
  %r8 = tile.make_range {start = 0 : i32, end = 8 : i32} : tensor<8xi32>
  %rc = tile.expand_dims %r8 {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %rb = tile.broadcast %rc : tensor<8x1xi32> -> tensor<8x4xi32>
  %c4 = arith.constant 4 : i32
  %c4s = tile.splat %c4 : tensor<8x4xi32>
  %rows = arith.muli %rb, %c4s : tensor<8x4xi32>
  %cr = tile.expand_dims %r {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %cb = tile.broadcast %cr : tensor<1x4xi32> -> tensor<8x4xi32>
  %off = arith.addi %rows, %cb : tensor<8x4xi32>
  %qs = tile.splat %q : tensor<8x4x!tile.ptr<f32>>
  %qa = tile.addptr %qs, %off : tensor<8x4x!tile.ptr<f32>>, tensor<8x4xi32>
  tile.store %qa, %b : tensor<8x4x!tile.ptr<f32>>, tensor<8x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func private @plain_lazy
// CHECK-NOT: memref.alloca
// CHECK: scf.for
// CHECK: scf.for
// CHECK: llvm.load %
func.func @plain_lazy(%p: !tile.ptr<f32> {tile.noalias}, %q: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
  %ps = tile.splat %p : tensor<4x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<4x!tile.ptr<f32>>, tensor<4xi32>
  %v = tile.load %pa : tensor<4x!tile.ptr<f32>> -> tensor<4xf32>
  %e = tile.expand_dims %v {axis = 0 : i32} : tensor<4xf32> -> tensor<1x4xf32>
  %b = tile.broadcast %e : tensor<1x4xf32> -> tensor<8x4xf32>
  %r8 = tile.make_range {start = 0 : i32, end = 8 : i32} : tensor<8xi32>
  %rc = tile.expand_dims %r8 {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %rb = tile.broadcast %rc : tensor<8x1xi32> -> tensor<8x4xi32>
  %c4 = arith.constant 4 : i32
  %c4s = tile.splat %c4 : tensor<8x4xi32>
  %rows = arith.muli %rb, %c4s : tensor<8x4xi32>
  %cr = tile.expand_dims %r {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %cb = tile.broadcast %cr : tensor<1x4xi32> -> tensor<8x4xi32>
  %off = arith.addi %rows, %cb : tensor<8x4xi32>
  %qs = tile.splat %q : tensor<8x4x!tile.ptr<f32>>
  %qa = tile.addptr %qs, %off : tensor<8x4x!tile.ptr<f32>>, tensor<8x4xi32>
  tile.store %qa, %b : tensor<8x4x!tile.ptr<f32>>, tensor<8x4xf32>
  return
}

// -----

// Addresses as pointers: int_to_ptr and ptr_to_int become LLVM's, a pointer
// cast keeps the pointer. Pointers made from integers may point into any
// array: no argument is noalias for LLVM then.
// CHECK-LABEL: func.func private @addresses
// CHECK-SAME: (%[[X:arg[0-9]+]]: !llvm.ptr, %[[Y:arg[0-9]+]]: !llvm.ptr,
// CHECK-NOT: llvm.noalias
// CHECK: llvm.ptrtoint %[[X]] : !llvm.ptr to i64
// CHECK: scf.for
// CHECK: %[[P:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: llvm.load %[[P]] {{.*}} : !llvm.ptr -> i32
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr
func.func @addresses(%x: !tile.ptr<f32> {tile.noalias}, %y: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %base = tile.ptr_to_int %x : !tile.ptr<f32> -> i64
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %r64 = arith.extsi %r : tensor<16xi32> to tensor<16xi64>
  %c4 = arith.constant dense<4> : tensor<16xi64>
  %bytes = arith.muli %r64, %c4 : tensor<16xi64>
  %bs = tile.splat %base : tensor<16xi64>
  %addrs = arith.addi %bs, %bytes : tensor<16xi64>
  %p = tile.int_to_ptr %addrs : tensor<16xi64> -> tensor<16x!tile.ptr<i32>>
  %v = tile.load %p : tensor<16x!tile.ptr<i32>> -> tensor<16xi32>
  %ys = tile.splat %y : tensor<16x!tile.ptr<f32>>
  %ya = tile.addptr %ys, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %yi = tile.ptr_cast %ya : tensor<16x!tile.ptr<f32>> -> tensor<16x!tile.ptr<i32>>
  tile.store %yi, %v : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
  return
}

// -----

// A reversed scan: the last element along the axis is itself, then each
// position from the end combines the carry after it with its own element;
// the position loop is outermost, rows inside it.
// CHECK-LABEL: func.func private @reverse_scan
// CHECK: %[[OUT:.*]] = memref.alloca() {{.*}} : memref<4x8xi32>
// CHECK: memref.store %{{.*}}, %[[OUT]][%{{.*}}, %c7]
// CHECK: scf.for %[[K:[a-z0-9_]*]] = %c1 to %c8
// CHECK: %[[POS:.*]] = arith.subi %c7, %[[K]]
// CHECK: %[[PREV:.*]] = arith.subi %c8, %[[K]]
// CHECK: scf.for %[[R:[a-z0-9_]*]] =
// CHECK: %[[CARRY:.*]] = memref.load %[[OUT]][%[[R]], %[[PREV]]]
// CHECK: arith.addi %[[CARRY]], %{{.*}} : i32
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[R]], %[[POS]]]
func.func @reverse_scan(%p: !tile.ptr<i32> {tile.noalias}, %q: !tile.ptr<i32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %i = tile.reshape %r : tensor<32xi32> -> tensor<4x8xi32>
  %ps = tile.splat %p : tensor<4x8x!tile.ptr<i32>>
  %pa = tile.addptr %ps, %i : tensor<4x8x!tile.ptr<i32>>, tensor<4x8xi32>
  %x = tile.load %pa : tensor<4x8x!tile.ptr<i32>> -> tensor<4x8xi32>
  %s = tile.scan %x {axis = 1 : i32, reverse} : tensor<4x8xi32> -> tensor<4x8xi32> {
  ^bb0(%a: i32, %b: i32):
    %t = arith.addi %a, %b : i32
    tile.scan.return %t : i32
  }
  %qs = tile.splat %q : tensor<4x8x!tile.ptr<i32>>
  %qa = tile.addptr %qs, %i : tensor<4x8x!tile.ptr<i32>>, tensor<4x8xi32>
  tile.store %qa, %s : tensor<4x8x!tile.ptr<i32>>, tensor<4x8xi32>
  return
}

// -----

// A softmax row: the masked load is read by a reduction (max) and by the
// element-wise exp chain (materialized: the sum and the division read it).
// The row is read from the array again at both instead of being copied to
// the stack first (no 256-element buffer of it; only the exponentials get
// one), and each read is versioned on the mask being all true (n >= 256):
// unmasked loads in one branch, masked ones in the other.
// CHECK-LABEL: func.func private @softmax_row
// CHECK-COUNT-1: memref.alloca() {alignment = 64 : i64} : memref<256xf32>
// CHECK-NOT: memref<256xf32>
// CHECK: %[[ALL:.*]] = arith.cmpi sgt, %{{.*}}, %c255_i32
// CHECK: scf.if %[[ALL]] {
// CHECK: llvm.load
// CHECK-NOT: scf.if
// CHECK: arith.maximumf
// CHECK: } else {
// CHECK: scf.if
// CHECK: scf.if %[[ALL]] {
// CHECK: math.exp
func.func @softmax_row(%p: !tile.ptr<f32> {tile.noalias}, %o: !tile.ptr<f32> {tile.noalias}, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %ns = tile.splat %n : tensor<256xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<256xi32>
  %ninf = arith.constant dense<0xFF800000> : tensor<256xf32>
  %ps = tile.splat %p : tensor<256x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %x = tile.load %pa mask %m : tensor<256xi1> other %ninf : tensor<256xf32> : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  %mx = tile.reduce %x {axis = 0 : i32} : tensor<256xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maximumf %a, %b : f32
    tile.reduce.return %t : f32
  }
  %mxs = tile.splat %mx : tensor<256xf32>
  %d = arith.subf %x, %mxs : tensor<256xf32>
  %e = math.exp %d : tensor<256xf32>
  %s = tile.reduce %e {axis = 0 : i32} : tensor<256xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tile.reduce.return %t : f32
  }
  %ss = tile.splat %s : tensor<256xf32>
  %y = arith.divf %e, %ss : tensor<256xf32>
  %os = tile.splat %o : tensor<256x!tile.ptr<f32>>
  %oa = tile.addptr %os, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  tile.store %oa, %y mask %m : tensor<256xi1> : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  return
}
