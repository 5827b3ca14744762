// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=4 threads-per-warp=64 compute-capability=0 mfma=true" -canonicalize -convert-tilegpu-to-rocdl -canonicalize -cse | FileCheck %s

// Wave64: 256 elements on 4 waves of 64 are one register per work-item, the
// element computed from workitem.id.x (its lane: the low 6 bits) and the
// workgroup id; masked loads and stores branch around a plain access (the
// masked lanes are off in exec); the kernel is a rocdl.kernel whose
// workgroup is the program's 256 work-items.
// CHECK-LABEL: llvm.func @copy(
// CHECK-SAME: !llvm.ptr<1>
// CHECK-SAME: rocdl.flat_work_group_size = "256,256", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 256, 1, 1>
// CHECK-DAG: rocdl.workgroup.id.x
// CHECK-DAG: %[[TID:.*]] = rocdl.workitem.id.x
// CHECK-DAG: llvm.and %[[TID]], %{{.*}} : i32
// CHECK: llvm.cond_br
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> f32
// CHECK: llvm.cond_br
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
// CHECK-NOT: nvvm
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

// A sum over 512 elements on 4 waves: within a work-item, then 6 exchanges
// over the lane bits: lane ^ 1 and ^ 2 by DPP quad_perm moves ([1,0,3,2] is
// 0xb1, [2,3,0,1] 0x4e), ^ 4, 8, 16 by ds_swizzle in bitmask mode (and-mask
// 0x1f, the xor-mask in bits 10-14), ^ 32 by ds_bpermute (byte addresses:
// the lane shifted by 2), then the waves' partials through LDS between s_barriers fenced at
// workgroup scope, each with an empty asm clobbering memory (LLVM's machine
// sinking would move LDS loads past it); erf is OCML's; the programs along y are the HSA dispatch
// packet's grid size (bytes 16..19) over its workgroup size (bytes 6..7).
// CHECK-LABEL: llvm.func @total(
// CHECK-DAG: %[[X4:.*]] = llvm.mlir.constant(4127 : i32)
// CHECK-DAG: %[[X8:.*]] = llvm.mlir.constant(8223 : i32)
// CHECK-DAG: %[[X16:.*]] = llvm.mlir.constant(16415 : i32)
// CHECK: rocdl.update.dpp {{.*}} with 177, 15, 15, false
// CHECK: rocdl.update.dpp {{.*}} with 78, 15, 15, false
// CHECK: rocdl.ds_swizzle %{{.*}}, %[[X4]]
// CHECK: rocdl.ds_swizzle %{{.*}}, %[[X8]]
// CHECK: rocdl.ds_swizzle %{{.*}}, %[[X16]]
// CHECK: rocdl.ds_bpermute
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "", "~{memory}"
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: llvm.call @__ocml_erf_f32
// CHECK: %[[PACKET:.*]] = llvm.call_intrinsic "llvm.amdgcn.dispatch.ptr"() : () -> !llvm.ptr<4>
// CHECK: llvm.getelementptr %[[PACKET]][16]
// CHECK: llvm.getelementptr %[[PACKET]][6]
// CHECK: llvm.udiv
func.func @total(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32>
  %xs = tile.splat %x : tensor<512x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %v = tile.load %xa : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
  %s = "tile.reduce"(%v) ({
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tile.reduce.return %t : f32
  }) {axis = 0 : i32} : (tensor<512xf32>) -> f32
  %e = math.erf %s : f32
  %np = tile.get_num_programs 1
  %f = arith.sitofp %np : i32 to f32
  %g = arith.addf %e, %f : f32
  tile.store %y, %g : !tile.ptr<f32>, f32
  return
}


// -----

// Atomics are LLVM's, with AMDGPU's sync scope for the op's (gpu: agent)
// and its ordering, made only where the mask holds and by the owners of
// each element (wave bit 1 clear: waves 2 and 3 hold copies).
// CHECK-LABEL: llvm.func @atomics(
// CHECK: llvm.cond_br
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("agent") acq_rel : !llvm.ptr<1>, i32
// CHECK: rocdl.s.barrier
func.func @atomics(%p: !tile.ptr<i32> {tile.noalias}, %o: !tile.ptr<i32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %c32 = arith.constant dense<32> : tensor<64xi32>
  %m = arith.cmpi slt, %r, %c32 : tensor<64xi32>
  %ps = tile.splat %p : tensor<64x!tile.ptr<i32>>
  %pa = tile.addptr %ps, %r : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  %old = tile.atomic_rmw add, acq_rel, gpu, %pa, %r mask %m : tensor<64xi1> : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  %os = tile.splat %o : tensor<64x!tile.ptr<i32>>
  %oa = tile.addptr %os, %r : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  tile.store %oa, %old : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  return
}

// -----

// With `mfma`, a 64x64 fp16 dot on 4 waves gets the MFMA accumulator layout,
// one 32x32 tile per wave; the operands are staged in LDS (A as M x K, B as
// N x K, rows of K padded by 16 bytes: 32 halves apart) between barriers,
// and each K step of 8 is one v_mfma_f32_32x32x8f16 per wave whose operands
// are 4 halves per lane: each half of the lanes reads its 8 of K (from 0 or
// K / 2) in one 16-byte LDS load. bf16 takes the bf16_1k instruction; fp32
// v_mfma_f32_32x32x2f32, one fp32 per lane and K step of 2; int8 (into
// int32) v_mfma_i32_32x32x16_i8, 8 bytes per lane.
// CHECK-LABEL: llvm.func @mfma(
// CHECK: rocdl.s.barrier
// CHECK: rocdl.s.barrier
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xi16>
// CHECK-COUNT-2: rocdl.mfma.f32.32x32x8f16 {{.*}} : (vector<4xf16>, vector<4xf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK-NOT: rocdl.mfma
// CHECK-LABEL: llvm.func @mfma_f32(
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-COUNT-8: rocdl.mfma.f32.32x32x2f32 {{.*}} : (f32, f32, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK-NOT: rocdl.mfma
// CHECK-LABEL: llvm.func @mfma_i8(
// CHECK-COUNT-2: rocdl.mfma.i32.32x32x16.i8 {{.*}} : (i64, i64, vector<16xi32>, i32, i32, i32) -> vector<16xi32>
// CHECK-NOT: rocdl.mfma
// A block of 16 rows takes the 16x16 instructions: 4 accumulators per lane,
// K 16 per instruction (4 halves per lane, the lanes' four groups of 16
// taking K 0, 4, 8, 12 on, or their own quarter of K when staged).
// CHECK-LABEL: llvm.func @mfma_16(
// CHECK-COUNT-2: rocdl.mfma.f32.16x16x16f16 {{.*}} : (vector<4xf16>, vector<4xf16>, vector<4xf32>, i32, i32, i32) -> vector<4xf32>
// CHECK-NOT: rocdl.mfma
// CHECK-LABEL: llvm.func @mfma_bf16(
// CHECK-COUNT-4: rocdl.mfma.f32.32x32x8bf16.1k {{.*}} : (vector<4xi16>, vector<4xi16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
func.func @mfma(%x: f16, %y: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<64x16xf16>
  %b = tile.splat %y : tensor<16x64xf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %a, %b, %z : tensor<64x16xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
  %p = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  tile.store %p, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

func.func @mfma_f32(%x: f32, %y: f32, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<64x16xf32>
  %b = tile.splat %y : tensor<16x64xf32>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %a, %b, %z : tensor<64x16xf32>, tensor<16x64xf32> -> tensor<64x64xf32>
  %p = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  tile.store %p, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}

func.func @mfma_i8(%x: i8, %y: i8, %out: !tile.ptr<i32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<64x32xi8>
  %b = tile.splat %y : tensor<32x64xi8>
  %z = arith.constant dense<0> : tensor<64x64xi32>
  %d = tile.dot %a, %b, %z : tensor<64x32xi8>, tensor<32x64xi8> -> tensor<64x64xi32>
  %p = tile.splat %out : tensor<64x64x!tile.ptr<i32>>
  tile.store %p, %d : tensor<64x64x!tile.ptr<i32>>, tensor<64x64xi32>
  return
}

func.func @mfma_16(%x: f16, %y: f16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<16x32xf16>
  %b = tile.splat %y : tensor<32x64xf16>
  %z = arith.constant dense<0.0> : tensor<16x64xf32>
  %d = tile.dot %a, %b, %z : tensor<16x32xf16>, tensor<32x64xf16> -> tensor<16x64xf32>
  %p = tile.splat %out : tensor<16x64x!tile.ptr<f32>>
  tile.store %p, %d : tensor<16x64x!tile.ptr<f32>>, tensor<16x64xf32>
  return
}

func.func @mfma_bf16(%x: bf16, %y: bf16, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<64x32xbf16>
  %b = tile.splat %y : tensor<32x64xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %a, %b, %z : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
  %p = tile.splat %out : tensor<64x64x!tile.ptr<f32>>
  tile.store %p, %d : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
