// RUN: tessel-opt %s -split-input-file | tessel-opt -split-input-file | FileCheck %s
// RUN: tessel-opt %s -split-input-file -canonicalize | FileCheck %s --check-prefix=CANON

// The debugging and extension ops print and parse back.
// CHECK-LABEL: func.func @debug
// CHECK: tile.print " x: " signed [1] %{{.*}} : tensor<8xi32>
// CHECK: tile.print " v: " hex signed [0, 0] %{{.*}}, %{{.*}} : f32, !tile.ptr<f32>
// CHECK: tile.print " hello" signed []
// CHECK: tile.assert %{{.*}}, "x < 4" at "k.py" : 12 in "kernel" : tensor<8xi1>
// CHECK: tile.elementwise_inline_asm "mov.b32 $0, $2; mov.b32 $1, $2;", "=r,=r,r" %{{.*}} : tensor<8xi32> {packed_element = 1 : i32, pure = true} -> tensor<8xi32>, tensor<8xf32>
// CHECK: tile.extern_elementwise "__nv_expf"(%{{.*}}) {libname = "", libpath = "", pure = true} : (f32) -> f32
func.func @debug(%x: tensor<8xi32>, %f: f32, %p: !tile.ptr<f32>, %c: tensor<8xi1>) -> (tensor<8xi32>, tensor<8xf32>, f32) {
  tile.print " x: " signed [1] %x : tensor<8xi32>
  tile.print " v: " hex signed [0, 0] %f, %p : f32, !tile.ptr<f32>
  tile.print " hello" signed []
  tile.assert %c, "x < 4" at "k.py" : 12 in "kernel" : tensor<8xi1>
  %r:2 = tile.elementwise_inline_asm "mov.b32 $0, $2; mov.b32 $1, $2;", "=r,=r,r" %x : tensor<8xi32> {pure = true, packed_element = 1 : i32} -> tensor<8xi32>, tensor<8xf32>
  %e = tile.extern_elementwise "__nv_expf"(%f) {libname = "", libpath = "", pure = true} : (f32) -> f32
  return %r#0, %r#1, %e : tensor<8xi32>, tensor<8xf32>, f32
}

// -----

// Prints and assertions are never dead; pure assembly and pure external
// calls whose results are unused are, the others are not.
// CANON-LABEL: func.func @effects
// CANON: tile.print
// CANON: tile.assert
// CANON-NOT: "pure"
// CANON: tile.elementwise_inline_asm "nanosleep.u32 1;", "=r,r"
// CANON-SAME: pure = false
// CANON-NOT: tile.elementwise_inline_asm
// CANON: tile.extern_elementwise "__nv_impure"
// CANON-NOT: tile.extern_elementwise
// CANON: return
func.func @effects(%x: tensor<8xi32>, %f: f32, %c: i1) {
  tile.print " x: " signed [1] %x : tensor<8xi32>
  tile.assert %c, "" at "k.py" : 3 in "kernel" : i1
  %a = tile.elementwise_inline_asm "mov.b32 $0, $1;", "=r,r" %x : tensor<8xi32> {pure = true, packed_element = 1 : i32} -> tensor<8xi32>
  %b = tile.elementwise_inline_asm "nanosleep.u32 1;", "=r,r" %x : tensor<8xi32> {pure = false, packed_element = 1 : i32} -> tensor<8xi32>
  %e = tile.extern_elementwise "__nv_expf"(%f) {libname = "", libpath = "", pure = true} : (f32) -> f32
  %g = tile.extern_elementwise "__nv_impure"(%f) {libname = "", libpath = "", pure = false} : (f32) -> f32
  return
}
