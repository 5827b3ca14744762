// RUN: tessel-opt %s -split-input-file -convert-tile-to-loops -verify-diagnostics

// What the CPU cannot run is an error at the op: inline assembly, and
// external functions it does not know or knows with other types.
func.func @inline_asm(%x: i32) attributes {tile.kernel} {
  // expected-error @+1 {{the cpu target cannot run inline assembly}}
  %r = tile.elementwise_inline_asm "mov.b32 $0, $1;", "=r,r" %x : i32 {pure = false, packed_element = 1 : i32} -> i32
  return
}

// -----

func.func @unknown(%x: f32) attributes {tile.kernel} {
  // expected-error @+1 {{the cpu target has no function '__nv_nosuchf'}}
  %r = tile.extern_elementwise "__nv_nosuchf"(%x) {libname = "", libpath = "", pure = false} : (f32) -> f32
  return
}

// -----

func.func @types(%x: f32) attributes {tile.kernel} {
  // expected-error @+1 {{__nv_sin takes (fp64) -> fp64 on the cpu target, not (fp32) -> fp32}}
  %r = tile.extern_elementwise "__nv_sin"(%x) {libname = "", libpath = "", pure = false} : (f32) -> f32
  return
}
