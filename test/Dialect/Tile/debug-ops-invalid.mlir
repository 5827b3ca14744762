// RUN: tessel-opt %s -split-input-file -verify-diagnostics

func.func @print_signedness(%x: tensor<8xi32>) {
  // expected-error @+1 {{has 1 operands but 2 entries of isSigned}}
  tile.print " x: " signed [1, 0] %x : tensor<8xi32>
  return
}

// -----

func.func @print_fp8(%x: tensor<8xf8E4M3FN>) {
  // expected-error @+1 {{cannot print 8-bit floats}}
  tile.print " x: " signed [0] %x : tensor<8xf8E4M3FN>
  return
}

// -----

func.func @asm_shapes(%x: tensor<8xi32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape}}
  %r = tile.elementwise_inline_asm "add.s32 $0, $1, $2;", "=r,r,r" %x, %y : tensor<8xi32>, tensor<4xi32> {pure = true, packed_element = 1 : i32} -> tensor<8xi32>
  return
}

// -----

func.func @asm_scalar_and_block(%x: tensor<8xi32>, %y: i32) {
  // expected-error @+1 {{operands and results must be all blocks or all scalars}}
  %r = tile.elementwise_inline_asm "add.s32 $0, $1, $2;", "=r,r,r" %x, %y : tensor<8xi32>, i32 {pure = true, packed_element = 1 : i32} -> tensor<8xi32>
  return
}

// -----

func.func @asm_no_result(%x: i32) {
  // expected-error @+1 {{must have at least one result}}
  "tile.elementwise_inline_asm"(%x) {asm_string = "trap;", constraints = "r", pure = false, packed_element = 1 : i32} : (i32) -> ()
  return
}

// -----

func.func @asm_pack(%x: tensor<8xi32>) {
  // expected-error @+1 {{attribute 'packed_element' failed to satisfy constraint}}
  %r = tile.elementwise_inline_asm "mov.b32 $0, $1;", "=r,r" %x : tensor<8xi32> {pure = true, packed_element = 0 : i32} -> tensor<8xi32>
  return
}

// -----

func.func @extern_shapes(%x: tensor<8xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape}}
  %r = tile.extern_elementwise "__nv_expf"(%x) {libname = "", libpath = "", pure = true} : (tensor<8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @extern_symbol(%x: f32) {
  // expected-error @+1 {{needs a symbol}}
  %r = tile.extern_elementwise ""(%x) {libname = "", libpath = "", pure = true} : (f32) -> f32
  return
}
