// RUN: tessel-opt %s -split-input-file -tile-lower-descriptors="tensor-maps=1" -convert-tile-to-tilegpu="num-warps=4 compute-capability=90" -tilegpu-tensor-maps -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// A block of a tensor map (a 16 x 32 fp32 block: 2048 bytes; rows of 128
// bytes, so it lands swizzled as a k_major slot) read with TMA:
// the map is a by-value __grid_constant__ argument; after a proxy fence (of
// every state space: earlier stores may be to the array the map reads) and a
// barrier (earlier users of the scratch are done), thread 0 initializes the
// mbarrier behind the block, arrives expecting 2048 bytes and starts the copy
// (coordinates innermost first); after a barrier every thread waits for the
// phase, reads its elements from shared memory (a thread's 4 consecutive
// elements one 16-byte chunk of the swizzled block: one vector load), and
// once all have, thread 0 invalidates the mbarrier.
// CHECK-LABEL: llvm.func @tma
// CHECK-SAME: %[[O0:[^:]*]]: i32, %[[O1:[^:]*]]: i32, %[[MAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async>}
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.inline_asm has_side_effects {{.*}} "@$2 mbarrier.init.shared.b64 [$0], $1;", "r,n,b" %[[BAR:[^,]*]], %{{[^,]*}}, %[[LEADER:[^ ]*]] :
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: llvm.inline_asm has_side_effects {{.*}} "@$2 mbarrier.arrive.expect_tx.shared.b64 _, [$0], $1;", "r,n,b" %[[BAR]], %[[BYTES:[^,]*]], %[[LEADER]] :
// CHECK-NEXT: llvm.inline_asm has_side_effects {{.*}} "@$5 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2,$3} ], [$4];", "r,l,r,r,r,b" %{{[^,]*}}, %[[MAP]], %[[O1]], %[[O0]], %[[BAR]], %[[LEADER]] :
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared.b64 P1, [$0], $1, $2;{{.*}} %[[BAR]],
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK: nvvm.barrier0
// CHECK-NEXT: llvm.ptrtoint %[[BAR]]
// CHECK-NEXT: llvm.inline_asm has_side_effects "@$0 mbarrier.inval.shared::cta.b64 [$1];", "b,r" %[[LEADER]],
func.func @tma(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %m: i32, %n: i32, %s: i64, %o0: i32, %o1: i32) attributes {tile.kernel} {
  %a = tile.descriptor_load %x[%o0, %o1] shape [%m, %n] strides [%s] {tensor_map = 0 : i32} : !tile.ptr<f32> -> tensor<16x32xf32>
  tile.descriptor_store %out[%o0, %o1], %a shape [%m, %n] strides [%s] : !tile.ptr<f32>, tensor<16x32xf32>
  return
}

// -----

// A block stored with TMA: every thread writes its elements to the scratch
// (16 x 32 fp32: rows of 128 bytes, swizzled as a k_major slot; a thread's 4
// consecutive elements stay one 16-byte chunk, a vector store to the
// swizzled chunk: its lane and warp bits XORed into the offset), a proxy
// fence for shared memory and a barrier publish them to
// the copy engine, thread 0 starts the store (coordinates innermost first;
// elements outside the array are not written), every thread commits its
// (empty but for thread 0's) bulk group and waits for it, and a barrier frees
// the scratch.
// CHECK-LABEL: llvm.func @tma_store
// CHECK-SAME: %[[O0:[^:]*]]: i32, %[[O1:[^:]*]]: i32, %[[V:[^:]*]]: f32, %[[MAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK: nvvm.barrier0
// CHECK: llvm.insertelement %[[V]]
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier0
// CHECK: llvm.inline_asm has_side_effects {{.*}} "@$4 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$2, $3} ], [$1];", "l,r,r,r,b" %[[MAP]], %{{[^,]*}}, %[[O1]], %[[O0]], %{{[^ ]*}} :
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.return
func.func @tma_store(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %m: i32, %n: i32, %s: i64, %o0: i32, %o1: i32, %v: f32) attributes {tile.kernel} {
  %b = tile.splat %v : tensor<16x32xf32>
  tile.descriptor_store %x[%o0, %o1], %b shape [%m, %n] strides [%s] {tensor_map = 0 : i32} : !tile.ptr<f32>, tensor<16x32xf32>
  return
}
