// RUN: tessel-opt %s -split-input-file -convert-tile-to-loops -canonicalize -cse | FileCheck %s

// A block's atomics run once per element where they are, in their own loop
// (never lazily, never again at a use): the old values go to a buffer, zero
// where the mask is off, which the store reads.
// CHECK-LABEL: func.func private @block_add
// CHECK: %[[BUF:.*]] = memref.alloca() {{.*}} : memref<64xi32>
// CHECK: scf.for %[[I:.*]] =
// CHECK: %[[OLD:.*]] = scf.if
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} acq_rel {alignment = 4 : i64} : !llvm.ptr, i32
// CHECK: } else {
// CHECK: scf.yield %c0_i32
// CHECK: memref.store %[[OLD]], %[[BUF]][%[[I]]]
// CHECK: scf.for %[[J:.*]] =
// CHECK-NOT: llvm.atomicrmw
// CHECK: memref.load %[[BUF]][%[[J]]]
// CHECK: llvm.store
// CHECK-LABEL: func.func @block_add_tessel_entry
func.func @block_add(%p: !tile.ptr<i32> {tile.noalias}, %o: !tile.ptr<i32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %c32 = arith.constant dense<32> : tensor<64xi32>
  %m = arith.cmpi slt, %r, %c32 : tensor<64xi32>
  %ps = tile.splat %p : tensor<64x!tile.ptr<i32>>
  %pa = tile.addptr %ps, %r : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  %old = tile.atomic_rmw add, acq_rel, gpu, %pa, %r mask %m : tensor<64xi1> : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  %os = tile.splat %o : tensor<64x!tile.ptr<i32>>
  %oa = tile.addptr %os, %r : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  tile.store %oa, %old : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  return
}

// -----

// A load of memory an atomic then changes, used after it: read into a
// buffer before the atomic (evaluated lazily at the store, it would see the
// atomic's writes).
// CHECK-LABEL: func.func private @load_before_atomic
// CHECK: %[[BUF:.*]] = memref.alloca() {{.*}} : memref<16xf32>
// CHECK: scf.for
// CHECK: llvm.load
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: scf.for
// CHECK: llvm.atomicrmw xchg %{{.*}}, %{{.*}} monotonic
// CHECK: scf.for
// CHECK: memref.load %[[BUF]]
// CHECK: llvm.store
func.func @load_before_atomic(%p: !tile.ptr<f32> {tile.noalias}, %o: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %ps = tile.splat %p : tensor<16x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %v = tile.load %pa : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %old = tile.atomic_rmw xchg, relaxed, gpu, %pa, %zero : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  %os = tile.splat %o : tensor<16x!tile.ptr<f32>>
  %oa = tile.addptr %os, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  tile.store %oa, %v : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  return
}

// -----

// Float max: Triton's integer atomics on the bits, an unsigned min where the
// value is negative, a signed max elsewhere. A scalar's old value is the
// scalar.
// CHECK-LABEL: func.func private @float_max
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[BITS]], %c0_i32
// CHECK: %[[OLD:.*]] = scf.if %[[NEG]] -> (i32)
// CHECK: llvm.atomicrmw umin %{{.*}}, %[[BITS]] acquire
// CHECK: } else {
// CHECK: llvm.atomicrmw max %{{.*}}, %[[BITS]] acquire
// CHECK: %[[F:.*]] = arith.bitcast %[[OLD]] : i32 to f32
// CHECK: llvm.store %[[F]]
func.func @float_max(%p: !tile.ptr<f32> {tile.noalias}, %o: !tile.ptr<f32> {tile.noalias}, %v: f32) attributes {tile.kernel} {
  %old = tile.atomic_rmw fmax, acquire, gpu, %p, %v : !tile.ptr<f32>, f32
  tile.store %o, %old : !tile.ptr<f32>, f32
  return
}

// -----

// An fp16 add: a compare-and-swap loop on the bits, the sum in fp32.
// CHECK-LABEL: func.func private @half_add
// CHECK: %[[FIRST:.*]] = llvm.load %{{.*}} atomic monotonic {alignment = 2 : i64} : !llvm.ptr -> i16
// CHECK: scf.while (%[[OLD:.*]] = %[[FIRST]]) : (i16) -> i16
// CHECK: arith.extf
// CHECK: arith.addf
// CHECK: arith.truncf
// CHECK: llvm.cmpxchg %{{.*}}, %[[OLD]], %{{.*}} release monotonic {alignment = 2 : i64} : !llvm.ptr, i16
// CHECK: scf.condition
func.func @half_add(%p: !tile.ptr<f16> {tile.noalias}, %v: f16) attributes {tile.kernel} {
  %old = tile.atomic_rmw fadd, release, gpu, %p, %v : !tile.ptr<f16>, f16
  return
}

// -----

// Compare-and-swap of floats: cmpxchg of the bits.
// CHECK-LABEL: func.func private @cas
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} acq_rel acquire {alignment = 8 : i64} : !llvm.ptr, i64
// CHECK: llvm.extractvalue %{{.*}}[0] : !llvm.struct<(i64, i1)>
// CHECK: arith.bitcast %{{.*}} : i64 to f64
func.func @cas(%p: !tile.ptr<f64> {tile.noalias}, %o: !tile.ptr<f64> {tile.noalias}, %c: f64, %v: f64) attributes {tile.kernel} {
  %old = tile.atomic_cas acq_rel, gpu, %p, %c, %v : !tile.ptr<f64>, f64
  tile.store %o, %old : !tile.ptr<f64>, f64
  return
}
