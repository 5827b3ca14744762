// RUN: tessel-opt %s -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// The pipeline's copy engine ops. mbarrier_alloc: thread 0 initializes each
// of the 3 barriers (8 bytes apart, after the 3 slots of 64 x 128 bf16:
// 16 KiB each) for 2 arrivals, then a proxy fence and a barrier. An
// async_tma_copy of a 64 x 128 bf16 block into a 128-byte swizzled k_major
// slot takes two boxes of 64 x 64 (8192 bytes each): thread 0, where the
// copy is in range, arrives on the slot's barrier expecting each box's
// bytes and starts its copy into the box's atom (8192 bytes on), the second
// 64 columns on. mbarrier_wait waits for the slot's barrier at the given
// parity; mbarrier_inval has thread 0 invalidate the barriers after a
// barrier.
// CHECK-LABEL: llvm.func @pipeline
// CHECK-SAME: %[[ROW:[^:]*]]: i32, %[[COL:[^:]*]]: i32, %[[SLOT:[^:]*]]: i32, %[[IN:[^:]*]]: i1, %[[PHASE:[^:]*]]: i32, %[[MAP:[^:]*]]: !llvm.ptr
// CHECK-DAG: %[[TWO:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-DAG: %[[BYTES:.*]] = llvm.mlir.constant(8192 : i32) : i32
// CHECK: %[[BARS:.*]] = llvm.getelementptr %{{.*}}[49152] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: %[[LEADER:.*]] = llvm.and %{{.*}}, %{{.*}} : i1
// CHECK: mbarrier.init.shared.b64 [$0], $1;", "r,n,b" %[[BARS]], %[[TWO]], %[[LEADER]] :
// CHECK-COUNT-2: mbarrier.init.shared.b64 [$0], $1;", "r,n,b" %{{[^,]*}}, %[[TWO]], %[[LEADER]] :
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async>}
// CHECK-NEXT: nvvm.barrier0
// CHECK: %[[BAR:.*]] = llvm.getelementptr %[[BARS]][%[[SLOT]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK: %[[PRED:.*]] = llvm.and %[[LEADER]], %[[IN]]
// CHECK: mbarrier.arrive.expect_tx.shared.b64 _, [$0], $1;", "r,n,b" %[[BAR]], %[[BYTES]], %[[PRED]]
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2,$3} ], [$4];", "r,l,r,r,r,b" %{{[^,]*}}, %[[MAP]], %[[COL]], %[[ROW]], %[[BAR]], %[[PRED]]
// CHECK: %[[NEXT:.*]] = llvm.add %[[COL]], %{{.*}} : i32
// CHECK: mbarrier.arrive.expect_tx.shared.b64 _, [$0], $1;", "r,n,b" %[[BAR]], %[[BYTES]], %[[PRED]]
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2,$3} ], [$4];", "r,l,r,r,r,b" %{{[^,]*}}, %[[MAP]], %[[NEXT]], %[[ROW]], %[[BAR]], %[[PRED]]
// CHECK: mbarrier.try_wait.parity.shared.b64 P1, [$0], $1, $2;{{.*}} %[[BAR]], %[[PHASE]]
// CHECK: nvvm.barrier0
// CHECK-COUNT-3: mbarrier.inval.shared::cta.b64 [$1];", "b,r" %[[LEADER]],
func.func @pipeline(%row: i32, %col: i32, %slot: i32, %in: i1, %phase: i32,
                    %map: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>}) attributes {tile.kernel, tilegpu.num_warps = 4 : i32} {
  %buf = tilegpu.local_alloc : !tilegpu.shared<3x64x128xbf16, k_major, swizzle = 128>
  %bars = tilegpu.mbarrier_alloc {arrivals = 2 : i32} : !tilegpu.mbarriers<3>
  tilegpu.async_tma_copy %map[%row, %col] to %buf[%slot], %bars if %in : !llvm.ptr, !tilegpu.shared<3x64x128xbf16, k_major, swizzle = 128>, !tilegpu.mbarriers<3>
  tilegpu.mbarrier_wait %bars[%slot], %phase : !tilegpu.mbarriers<3>
  tilegpu.mbarrier_inval %bars : !tilegpu.mbarriers<3>
  return
}
