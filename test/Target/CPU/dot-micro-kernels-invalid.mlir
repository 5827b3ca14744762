// RUN: tessel-opt %s -tessel-cpu-dot-micro-kernels -verify-diagnostics

// Mixed element types are not what the CPU lowering makes: an error, not a
// crash.
func.func @mixed(%a: memref<8x8xf16>, %b: memref<8x8xf16>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{the CPU's dot micro-kernels take a matmul of static row-major buffers of one element type}}
  linalg.matmul ins(%a, %b : memref<8x8xf16>, memref<8x8xf16>) outs(%c : memref<8x8xf32>)
  return
}
