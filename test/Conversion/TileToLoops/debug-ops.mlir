// RUN: tessel-opt %s -split-input-file -convert-tile-to-loops -canonicalize -cse | FileCheck %s

// A print: each operand's elements in row-major order, one call of the
// runtime's printf-like function per element, with Triton's line format (the
// index as wide as the largest: one digit for 4 elements), the program ids,
// the element's index and the value as C's varargs take it (an i16 signed:
// sign-extended; an f32: f64).
// CHECK-DAG: llvm.mlir.global internal constant @[[FMT0:.*]]("pid (%u, %u, %u) idx (%1u) x: (operand 0) %i\0A\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[FMT1:.*]]("pid (%u, %u, %u) idx () x: (operand 1) %f\0A\00")
// CHECK-DAG: llvm.func @tessel_cpu_print(!llvm.ptr, ...)
// CHECK-LABEL: func.func private @print
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr, %[[F:.*]]: f32, %[[P0:[^:]*]]: i32, %[[P1:[^:]*]]: i32, %[[P2:[^:]*]]: i32,
// CHECK: scf.for %[[I:.*]] = %c0 to %c4 step %c1
// CHECK: %[[I32:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK: %[[V:.*]] = llvm.load
// CHECK: %[[W:.*]] = arith.extsi %[[V]] : i16 to i32
// CHECK: llvm.call @tessel_cpu_print(%{{.*}}, %[[P0]], %[[P1]], %[[P2]], %[[I32]], %[[W]]) vararg
// CHECK: }
// CHECK: %[[D:.*]] = arith.extf %[[F]] : f32 to f64
// CHECK: llvm.call @tessel_cpu_print(%{{.*}}, %[[P0]], %[[P1]], %[[P2]], %[[D]]) vararg
func.func @print(%x: !tile.ptr<i16>, %f: f32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
  %xs = tile.splat %x : tensor<4x!tile.ptr<i16>>
  %xa = tile.addptr %xs, %r : tensor<4x!tile.ptr<i16>>, tensor<4xi32>
  %v = tile.load %xa : tensor<4x!tile.ptr<i16>> -> tensor<4xi16>
  tile.print " x: " signed [1, 0] %v, %f : tensor<4xi16>, f32
  return
}

// -----

// A hexadecimal print of fp16 values: their bits, four digits.
// CHECK: llvm.mlir.global internal constant @{{.*}}("pid (%u, %u, %u) idx (%1u, %1u) h: 0x%04x\0A\00")
// CHECK-LABEL: func.func private @print_hex
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.bitcast %{{.*}} : f16 to i16
// CHECK: arith.extui %{{.*}} : i16 to i32
// CHECK: llvm.call @tessel_cpu_print
func.func @print_hex(%s: f16) attributes {tile.kernel} {
  %h = tile.splat %s : tensor<2x4xf16>
  tile.print " h: " hex signed [0] %h : tensor<2x4xf16>
  return
}

// -----

// An assertion: the elements in order, the first false one reported with
// its index (rank 1, the index); the program then returns (the exit marker,
// which tessel-cpu-program-exit makes a return) before the store after it.
// CHECK-DAG: func.func private @tessel.exit_program()
// CHECK-DAG: llvm.mlir.global internal constant @[[MSG:.*]]("r < n\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[FILE:.*]]("k.py\00")
// CHECK-DAG: llvm.func @tessel_cpu_assert_fail(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32, i32, i32, i32, i32, i32, ...)
// CHECK-LABEL: func.func private @assert
// CHECK: %[[FLAG:.*]] = memref.alloca() {{.*}} : memref<1xi8>
// CHECK: memref.store %c0_i8, %[[FLAG]]
// CHECK: scf.for %[[I:.*]] = %c0 to %c4 step %c1
// CHECK: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[I32:.*]] = arith.trunci %[[I64]] overflow<nsw, nuw> : i64 to i32
// CHECK: %[[BAD:.*]] = arith.cmpi sge, %[[I32]], %{{.*}} : i32
// CHECK: %[[FIRST:.*]] = arith.andi %[[BAD]]
// CHECK: scf.if %[[FIRST]]
// CHECK: llvm.call @tessel_cpu_assert_fail(%{{.*}}, %{{.*}}, %c7_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1_i32, %{{.*}}) vararg
// CHECK: memref.store %c1_i8, %[[FLAG]]
// CHECK: %[[SEEN:.*]] = memref.load %[[FLAG]]
// CHECK: %[[FAILED:.*]] = arith.trunci %[[SEEN]]
// CHECK: scf.if %[[FAILED]]
// CHECK-NEXT: func.call @tessel.exit_program()
// CHECK: scf.for
// CHECK: llvm.store
func.func @assert(%x: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
  %ns = tile.splat %n : tensor<4xi32>
  %c = arith.cmpi slt, %r, %ns : tensor<4xi32>
  tile.assert %c, "r < n" at "k.py" : 7 in "assert" : tensor<4xi1>
  %xs = tile.splat %x : tensor<4x!tile.ptr<i32>>
  %xa = tile.addptr %xs, %r : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
  tile.store %xa, %r : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
  return
}

// -----

// libdevice functions the CPU knows: its own math ops (exp), C library
// calls of the same meaning (atan2f), integer arithmetic (umulhi), computed
// element by element where they are used.
// CHECK: func.func private @atan2f(f32, f32) -> f32
// CHECK-LABEL: func.func private @extern
// CHECK: scf.for
// CHECK: math.exp %{{.*}} : f32
// CHECK: func.call @atan2f(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: arith.mului_extended
// CHECK: llvm.store
func.func @extern(%x: !tile.ptr<f32>, %y: !tile.ptr<i32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
  %xs = tile.splat %x : tensor<4x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<4x!tile.ptr<f32>>, tensor<4xi32>
  %v = tile.load %xa : tensor<4x!tile.ptr<f32>> -> tensor<4xf32>
  %e = tile.extern_elementwise "__nv_expf"(%v) {libname = "", libpath = "", pure = true} : (tensor<4xf32>) -> tensor<4xf32>
  %a = tile.extern_elementwise "__nv_atan2f"(%e, %v) {libname = "", libpath = "", pure = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  tile.store %xa, %a : tensor<4x!tile.ptr<f32>>, tensor<4xf32>
  %h = tile.extern_elementwise "__nv_umulhi"(%r, %r) {libname = "", libpath = "", pure = true} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %ys = tile.splat %y : tensor<4x!tile.ptr<i32>>
  %ya = tile.addptr %ys, %r : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
  tile.store %ya, %h : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
  return
}
