// RUN: tessel-opt %s -tessel-cpu-dot-micro-kernels -verify-diagnostics

// Operands of two types, or floats into integers, are not what the CPU
// lowering makes: an error, not a crash.
func.func @mixed(%a: memref<8x8xf16>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{the CPU's dot micro-kernels take a matmul of static row-major buffers, A and B of one type and C of that kind}}
  linalg.matmul ins(%a, %b : memref<8x8xf16>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}
