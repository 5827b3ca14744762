// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4" -tilegpu-memory-barriers -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4" -tilegpu-memory-barriers -canonicalize -convert-tilegpu-to-nvvm="compute-capability=90" -canonicalize -cse | FileCheck %s --check-prefixes=CHECK,SM90

// 64 elements on 128 threads: warps 2 and 3 hold copies of warps 0 and 1's.
// Only the owners (warp bit 1 clear) make the atomic, where the mask is set
// (a guarded atom, zero elsewhere, with the op's ordering and scope); the
// old values go through shared memory to the copies, between barriers.
// CHECK-LABEL: llvm.func @block_copies
// CHECK: %[[OWN:.*]] = llvm.icmp "eq" %{{.*}}, %{{.*}} : i32
// CHECK: %[[PRED:.*]] = llvm.and %[[OWN]], %{{.*}} : i1
// CHECK: %[[OLD:.*]] = llvm.inline_asm has_side_effects "mov.u32 $0, 0x0;\0A@$1 atom.relaxed.cta.global.add.u32 $0, [ $2 + 0 ], $3;", "=r,b,l,r" %[[PRED]]
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.cond_br %[[OWN]]
// CHECK: llvm.store %[[OLD]], %{{.*}} : i32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: %[[BACK:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: st.global.b32 {{.*}} %[[BACK]]
func.func @block_copies(%p: !tile.ptr<i32> {tile.noalias}, %o: !tile.ptr<i32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %c32 = arith.constant dense<32> : tensor<64xi32>
  %m = arith.cmpi slt, %r, %c32 : tensor<64xi32>
  %ps = tile.splat %p : tensor<64x!tile.ptr<i32>>
  %pa = tile.addptr %ps, %r : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  %old = tile.atomic_rmw add, relaxed, cta, %pa, %r mask %m : tensor<64xi1> : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  %os = tile.splat %o : tensor<64x!tile.ptr<i32>>
  %oa = tile.addptr %os, %r : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  tile.store %oa, %old : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  return
}

// -----

// 256 elements on 128 threads, each held once: every thread makes its two
// atomics and keeps their old values (no shared memory, no barrier).
// CHECK-LABEL: llvm.func @owned_once
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-2: atom.relaxed.sys.global.exch.b64
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
func.func @owned_once(%p: !tile.ptr<i64> {tile.noalias}, %o: !tile.ptr<i64> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %v = arith.extsi %r : tensor<256xi32> to tensor<256xi64>
  %ps = tile.splat %p : tensor<256x!tile.ptr<i64>>
  %pa = tile.addptr %ps, %r : tensor<256x!tile.ptr<i64>>, tensor<256xi32>
  %old = tile.atomic_rmw xchg, relaxed, sys, %pa, %v : tensor<256x!tile.ptr<i64>>, tensor<256xi64>
  %os = tile.splat %o : tensor<256x!tile.ptr<i64>>
  %oa = tile.addptr %os, %r : tensor<256x!tile.ptr<i64>>, tensor<256xi32>
  tile.store %oa, %old : tensor<256x!tile.ptr<i64>>, tensor<256xi64>
  return
}

// -----

// A scalar: the first thread's compare-and-swap, its old value through
// shared memory to every thread.
// CHECK-LABEL: llvm.func @scalar_cas
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[FIRST:.*]] = llvm.icmp "eq" %[[TID]], %{{.*}} : i32
// CHECK: %[[OLD:.*]] = llvm.inline_asm has_side_effects "mov.u32 $0, 0x0;\0A@$1 atom.acq_rel.gpu.global.cas.b32 $0, [ $2 + 0 ], $3, $4;", "=r,b,l,r,r" %[[FIRST]]
// CHECK: nvvm.barrier0
// CHECK: llvm.store %[[OLD]], %{{.*}} : i32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
func.func @scalar_cas(%p: !tile.ptr<i32> {tile.noalias}, %o: !tile.ptr<i32> {tile.noalias}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %old = tile.atomic_cas acq_rel, gpu, %p, %c0, %c1 : !tile.ptr<i32>, i32
  tile.store %o, %old : !tile.ptr<i32>, i32
  return
}

// -----

// Float max as Triton makes it: a signed max of the bits where the value is
// not negative, an unsigned min where it is, each guarded by its half.
// CHECK-LABEL: llvm.func @float_max
// CHECK: %[[BITS:.*]] = llvm.bitcast %{{.*}} : f32 to i32
// CHECK: %[[NEG:.*]] = llvm.icmp "slt" %[[BITS]], %{{.*}} : i32
// CHECK: %[[POS:.*]] = llvm.xor %[[NEG]], %{{.*}} : i1
// CHECK: %[[WHENPOS:.*]] = llvm.inline_asm has_side_effects "{{.*}}atom.acquire.gpu.global.max.s32 {{.*}}" {{.*}}, %[[BITS]]
// CHECK: %[[WHENNEG:.*]] = llvm.inline_asm has_side_effects "{{.*}}atom.acquire.gpu.global.min.u32 {{.*}}" {{.*}}, %[[BITS]]
// CHECK: %[[SEL:.*]] = llvm.select %[[NEG]], %[[WHENNEG]], %[[WHENPOS]] : i1, i32
// CHECK: llvm.bitcast %[[SEL]] : i32 to f32
func.func @float_max(%p: !tile.ptr<f32> {tile.noalias}, %o: !tile.ptr<f32> {tile.noalias}, %v: f32) attributes {tile.kernel} {
  %old = tile.atomic_rmw fmax, acquire, gpu, %p, %v : !tile.ptr<f32>, f32
  tile.store %o, %old : !tile.ptr<f32>, f32
  return
}

// -----

// bf16 adds: atom.add.noftz.bf16 on sm_90; on sm_80, which has none, a loop
// of 16-bit compare-and-swaps on the bits, the sum in fp32. An fp16 add is
// atom.add.noftz.f16 on both; logic on fp64 acts on the bits.
// CHECK-LABEL: llvm.func @half_adds
// SM80: llvm.load volatile %{{.*}} : !llvm.ptr<1> -> i16
// SM80: llvm.fadd %{{.*}} : f32
// SM80: llvm.fptrunc %{{.*}} : f32 to bf16
// SM80: atom.acq_rel.gpu.global.cas.b16 $0, [ $2 + 0 ], $3, $4;", "=h,b,l,h,h"
// SM80: llvm.icmp "ne"
// SM90: atom.acq_rel.gpu.global.add.noftz.bf16 $0, [ $2 + 0 ], $3;", "=h,b,l,h"
// CHECK: atom.acq_rel.gpu.global.add.noftz.f16 $0, [ $2 + 0 ], $3;", "=h,b,l,h"
// CHECK: atom.acq_rel.gpu.global.and.b64 $0, [ $2 + 0 ], $3;", "=l,b,l,l"
func.func @half_adds(%p: !tile.ptr<bf16> {tile.noalias}, %q: !tile.ptr<f16> {tile.noalias}, %d: !tile.ptr<f64> {tile.noalias}, %v: bf16, %w: f16, %x: f64) attributes {tile.kernel} {
  %a = tile.atomic_rmw fadd, acq_rel, gpu, %p, %v : !tile.ptr<bf16>, bf16
  %b = tile.atomic_rmw fadd, acq_rel, gpu, %q, %w : !tile.ptr<f16>, f16
  %c = tile.atomic_rmw and, acq_rel, gpu, %d, %x : !tile.ptr<f64>, f64
  return
}
