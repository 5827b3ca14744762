// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// A print on the GPU: 64 elements on 128 threads (one register each) are
// held twice, by warps 0-1 and 2-3: only the first copy prints (warp bit 1
// clear). Each line is vprintf with Triton's format (a constant in global
// memory) and the arguments in a buffer of the thread's local memory,
// allocated once in the entry block. A scalar prints from thread 0 alone.
// CHECK-DAG: llvm.mlir.global internal constant @[[FMT0:.*]]("pid (%u, %u, %u) idx (%2u) v: (operand 0) %f\0A\00") {addr_space = 1 : i32
// CHECK-DAG: llvm.mlir.global internal constant @[[FMT1:.*]]("pid (%u, %u, %u) idx () v: (operand 1) %i\0A\00") {addr_space = 1 : i32
// CHECK-DAG: llvm.func @vprintf(!llvm.ptr, !llvm.ptr) -> i32
// CHECK-LABEL: llvm.func @print(
// CHECK-DAG: %[[SCALAR_ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(i32, i32, i32, i32)>
// CHECK-DAG: %[[ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(i32, i32, i32, i32, f64)>
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[WARP:.*]] = llvm.lshr %[[TID]], %{{.*}}
// CHECK: %[[V:.*]] = llvm.load
// CHECK: %[[FIRST:.*]] = llvm.icmp "eq" %[[TID]]
// CHECK: %[[COPY_BIT:.*]] = llvm.and %[[WARP]], %{{.*}}
// CHECK: %[[OWNER:.*]] = llvm.icmp "eq" %[[COPY_BIT]]
// CHECK: llvm.cond_br %{{.*}}, ^[[PRINT:.*]], ^[[NEXT:.*]]
// CHECK: ^[[PRINT]]:
// CHECK: %[[D:.*]] = llvm.fpext %[[V]] : f32 to f64
// CHECK: llvm.store %[[D]], %{{.*}} : f64, !llvm.ptr
// CHECK: %[[FMT:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr<1> to !llvm.ptr
// CHECK: llvm.call @vprintf(%[[FMT]], %[[ARGS]])
// CHECK: ^[[NEXT]]:
// CHECK: llvm.cond_br %{{.*}}, ^[[SCALAR:.*]], ^
// CHECK: ^[[SCALAR]]:
// CHECK: llvm.call @vprintf(%{{.*}}, %[[SCALAR_ARGS]])
// CHECK-NOT: vprintf
func.func @print(%x: !tile.ptr<f32>, %s: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %xs = tile.splat %x : tensor<64x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  %v = tile.load %xa : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  tile.print " v: " signed [0, 1] %v, %s : tensor<64xf32>, i32
  return
}

// -----

// Inline assembly as Triton packs it: 4 elements per instance, the four i8
// operands in one 32-bit register (an i32: AMD's constraints take no i8
// vectors), the f32 ones each in its own; the
// results come back as a struct of 4 + 4 registers. External functions are
// calls (libdevice's, linked later), one per register. An assertion checks
// the thread's elements, calls __assertfail where one is false, and ends
// with a barrier.
// CHECK-DAG: llvm.func @__assertfail(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i64)
// CHECK-DAG: llvm.func @__nv_expf(f32) -> f32
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("k.py\00")
// CHECK-LABEL: llvm.func @asm_and_calls(
// CHECK-COUNT-4: llvm.insertelement %{{.*}} : vector<4xi8>
// CHECK: llvm.bitcast %{{.*}} : vector<4xi8> to i32
// CHECK: llvm.inline_asm asm_dialect = att "asm", "=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r" %{{.*}} : (i32, f32, f32, f32, f32) -> !llvm.struct<(i32, i32, i32, i32, f32, f32, f32, f32)>
// CHECK-COUNT-4: llvm.call @__nv_expf(%{{.*}}) : (f32) -> f32
// CHECK: llvm.cond_br %{{.*}}, ^[[FAIL:.*]], ^[[OK:.*]]
// CHECK: ^[[FAIL]]:
// CHECK: llvm.call @__assertfail(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i64) -> ()
// CHECK: ^[[OK]]:
// CHECK-NEXT: nvvm.barrier0
func.func @asm_and_calls(%x: !tile.ptr<i8>, %y: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32>
  %xs = tile.splat %x : tensor<512x!tile.ptr<i8>>
  %xa = tile.addptr %xs, %r : tensor<512x!tile.ptr<i8>>, tensor<512xi32>
  %v = tile.load %xa : tensor<512x!tile.ptr<i8>> -> tensor<512xi8>
  %ys = tile.splat %y : tensor<512x!tile.ptr<f32>>
  %ya = tile.addptr %ys, %r : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %w = tile.load %ya : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
  %o:2 = tile.elementwise_inline_asm "asm", "=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r" %v, %w : tensor<512xi8>, tensor<512xf32> {pure = true, packed_element = 4 : i32} -> tensor<512xi32>, tensor<512xf32>
  %e = tile.extern_elementwise "__nv_expf"(%o#1) {libname = "", libpath = "", pure = true} : (tensor<512xf32>) -> tensor<512xf32>
  tile.store %ya, %e : tensor<512x!tile.ptr<f32>>, tensor<512xf32>
  %c0 = arith.constant dense<0> : tensor<512xi32>
  %ok = arith.cmpi sge, %o#0, %c0 : tensor<512xi32>
  tile.assert %ok, "ok" at "k.py" : 9 in "asm" : tensor<512xi1>
  return
}
