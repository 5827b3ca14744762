// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4" -canonicalize -convert-tilegpu-to-nvvm -canonicalize -cse | FileCheck %s

// One thread's view: 256 elements on 128 threads are 2 registers each; the
// element of register r is computed from tid.x by the layout; masked loads
// and stores are predicated (`@p ld.global` into a register holding the
// `other` value, zero here; `@p st.global`), with no branch; the kernel gets
// nvvm.kernel and its thread count.
// CHECK-LABEL: llvm.func @copy(
// CHECK-SAME: !llvm.ptr<1>
// CHECK-SAME: attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>}
// CHECK-DAG: nvvm.read.ptx.sreg.tid.x
// CHECK-DAG: nvvm.read.ptx.sreg.ctaid.x
// CHECK-NOT: llvm.cond_br
// CHECK-COUNT-2: llvm.inline_asm has_side_effects "@$1 ld.global.b32 $0, [ $2 + 0 ];", "=r,b,l,0" {{.*}} : (i1, !llvm.ptr<1>, i32) -> i32
// CHECK-NOT: llvm.cond_br
// CHECK-NOT: llvm.store
// CHECK-COUNT-2: llvm.inline_asm has_side_effects "@$0 st.global.b32 [ $1 + 0 ], $2;", "b,l,r" {{.*}} : (i1, !llvm.ptr<1>, i32) -> ()
// CHECK-NOT: llvm.store
// CHECK-NOT: nvvm.barrier0
func.func @copy(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %pid = tile.get_program_id 0
  %c256 = arith.constant 256 : i32
  %base = arith.muli %pid, %c256 : i32
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %b = tile.splat %base : tensor<256xi32>
  %o = arith.addi %b, %r : tensor<256xi32>
  %ns = tile.splat %n : tensor<256xi32>
  %m = arith.cmpi slt, %o, %ns : tensor<256xi32>
  %xs = tile.splat %x : tensor<256x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %o : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %xa mask %m : tensor<256xi1> : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  %ys = tile.splat %y : tensor<256x!tile.ptr<f32>>
  %ya = tile.addptr %ys, %o : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  tile.store %ya, %v mask %m : tensor<256xi1> : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  return
}

// -----

// A sum over 512 elements on 4 warps: within a thread, then butterfly
// shuffles over the 5 lane bits, then the 4 warps' partials through shared
// memory between barriers; the scalar is stored by thread 0 only.
// CHECK: module attributes {tilegpu.shared = 16 : i32
// CHECK: llvm.mlir.global external @tessel_shared() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @total(
// CHECK-COUNT-5: nvvm.shfl.sync bfly
// CHECK: nvvm.barrier0
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[FIRST:.*]] = llvm.icmp "eq"
// CHECK: llvm.inline_asm has_side_effects "@$0 st.global.b32 [ $1 + 0 ], $2;", "b,l,r" %[[FIRST]], %arg1
func.func @total(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32>
  %xs = tile.splat %x : tensor<512x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %v = tile.load %xa : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
  %s = "tile.reduce"(%v) ({
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tile.reduce.return %t : f32
  }) {axis = 0 : i32} : (tensor<512xf32>) -> f32
  tile.store %out, %s : !tile.ptr<f32>, f32
  return
}

// -----

// fp32 rounds to fp16 two registers at a time (cvt.rn.f16x2.f32 on sm_80);
// the 16-bit stores of one copy of each element are predicated too.
// CHECK-LABEL: llvm.func @round_pairs
// CHECK-COUNT-4: llvm.fptrunc {{.*}} : vector<2xf32> to vector<2xf16>
// CHECK-NOT: llvm.fptrunc
// CHECK-NOT: llvm.cond_br
// CHECK-COUNT-8: llvm.inline_asm has_side_effects "@$0 st.global.b16 [ $1 + 0 ], $2;", "b,l,h" {{.*}} : (i1, !llvm.ptr<1>, i16) -> ()
func.func @round_pairs(%x: !tile.ptr<f32>, %o: !tile.ptr<f16>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %xp = tile.splat %x : tensor<1024x!tile.ptr<f32>>
  %xa = tile.addptr %xp, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %op = tile.splat %o : tensor<1024x!tile.ptr<f16>>
  %oa = tile.addptr %op, %r : tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>
  %v = tile.load %xa : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %h = arith.truncf %v : tensor<1024xf32> to tensor<1024xf16>
  tile.store %oa, %h : tensor<1024x!tile.ptr<f16>>, tensor<1024xf16>
  return
}

// -----

// 16-byte accesses: the four words of each vector in one predicated
// ld.global.v4 (its registers holding `other` beforehand, tied operands)
// and one predicated st.global.v4 (layer norm's loops).
// CHECK-LABEL: llvm.func @vectors
// CHECK-NOT: llvm.cond_br
// CHECK-COUNT-2: llvm.inline_asm has_side_effects "@$4 ld.global.v4.b32 { $0, $1, $2, $3 }, [ $5 + 0 ];", "=r,=r,=r,=r,b,l,0,1,2,3" {{.*}} : (i1, !llvm.ptr<1>, i32, i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NOT: llvm.cond_br
// CHECK-COUNT-2: llvm.inline_asm has_side_effects "@$0 st.global.v4.b32 [ $1 + 0 ], { $2, $3, $4, $5 };", "b,l,r,r,r,r" {{.*}} : (i1, !llvm.ptr<1>, i32, i32, i32, i32) -> ()
// CHECK-NOT: llvm.store
func.func @vectors(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %ns = tile.splat %n : tensor<1024xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<1024xi32>
  %xs = tile.splat %x : tensor<1024x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %one = arith.constant dense<1.0> : tensor<1024xf32>
  %l = tile.load %xa mask %m : tensor<1024xi1> other %one : tensor<1024xf32> : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %v = arith.addf %l, %one : tensor<1024xf32>
  tile.store %xa, %v mask %m : tensor<1024xi1> : tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>
  return
}

// -----

// Pointer casts once per register: inttoptr / ptrtoint to and from global
// pointers, and nothing for a pointer cast (LLVM's pointers are untyped).
// CHECK-LABEL: llvm.func @addresses
// CHECK: llvm.ptrtoint %{{.*}} : !llvm.ptr<1> to i64
// CHECK-COUNT-2: llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK-NOT: llvm.inttoptr
func.func @addresses(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) attributes {tile.kernel} {
  %base = tile.ptr_to_int %x : !tile.ptr<f32> -> i64
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %r64 = arith.extsi %r : tensor<256xi32> to tensor<256xi64>
  %c4 = arith.constant dense<4> : tensor<256xi64>
  %bytes = arith.muli %r64, %c4 : tensor<256xi64>
  %bs = tile.splat %base : tensor<256xi64>
  %addrs = arith.addi %bs, %bytes : tensor<256xi64>
  %p = tile.int_to_ptr %addrs : tensor<256xi64> -> tensor<256x!tile.ptr<i32>>
  %v = tile.load %p : tensor<256x!tile.ptr<i32>> -> tensor<256xi32>
  %ys = tile.splat %y : tensor<256x!tile.ptr<f32>>
  %ya = tile.addptr %ys, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %yi = tile.ptr_cast %ya : tensor<256x!tile.ptr<f32>> -> tensor<256x!tile.ptr<i32>>
  tile.store %yi, %v : tensor<256x!tile.ptr<i32>>, tensor<256xi32>
  return
}

// -----

// A scan of 256 elements on 4 warps of 32 lanes: each thread scans its 8
// consecutive elements, then each of the 5 lane bits adds the total of the
// other half's last lane (shfl.sync idx) to the upper half's values; the
// warps hold copies (the store's layout then comes through shared memory).
// CHECK-LABEL: llvm.func @cumsum(
// CHECK-COUNT-5: nvvm.shfl.sync idx
// CHECK-NOT: nvvm.shfl.sync
// CHECK: llvm.return
func.func @cumsum(%p: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %ps = tile.splat %p : tensor<256x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %x = tile.load %pa : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  %s = "tile.scan"(%x) ({
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    tile.scan.return %c : f32
  }) {axis = 0 : i32} : (tensor<256xf32>) -> tensor<256xf32>
  tile.store %pa, %s : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  return
}
