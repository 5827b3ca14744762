// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 threads-per-warp=64 compute-capability=0 mfma=true" -canonicalize -tilegpu-remove-layout-conversions -canonicalize -tilegpu-pipeline="num-stages=2 register-copies=true" -canonicalize | FileCheck %s
// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 threads-per-warp=64 compute-capability=0 mfma=true" -canonicalize -tilegpu-remove-layout-conversions -canonicalize -tilegpu-pipeline="num-stages=2 register-copies=true" -canonicalize -convert-tilegpu-to-rocdl -canonicalize -cse | FileCheck %s --check-prefix=ROCDL
// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 threads-per-warp=64 compute-capability=0 mfma=true" -canonicalize -tilegpu-remove-layout-conversions -canonicalize -tilegpu-pipeline="num-stages=3 register-copies=true" -canonicalize | FileCheck %s --check-prefix=S3
// RUN: tessel-opt %s -convert-tile-to-tilegpu="num-warps=4 threads-per-warp=64 compute-capability=0 mfma=true mfma-half-wide-k-width=8" -canonicalize -tilegpu-remove-layout-conversions -canonicalize -tilegpu-pipeline="num-stages=3 register-copies=true transposed-reads=true" -canonicalize -convert-tilegpu-to-rocdl="chip=gfx950" -canonicalize -cse | FileCheck %s --check-prefix=GFX950

// A K loop of an MFMA dot (AMD: 64-lane waves, no async copies) whose
// operands are loaded through loop-carried pointers: each gets a 2-slot
// buffer of the padded rows the dot stages operands in (A 64 x 32 along K,
// B 32 x 64 along N; 16 bytes of padding after every 128 bytes of rows, as
// the dot reads K 16 bytes at a time with both operands in slots). The
// prologue loads iteration 0 and stores it into slot 0. Each iteration
// starts with a barrier (the stores of the iteration before are visible,
// and every wave is done reading the slot about to be refilled), loads
// iteration i + 1 into registers (masked off past the end), reads its own
// slot in place, and only after its dot stores the loaded blocks into the
// other slot: the loads' latency overlaps the dot. No async copies, waits
// or commits.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[A:.*]] = tilegpu.local_alloc : !tilegpu.shared<2x64x32xf16, padded, pad = 16>
// CHECK-DAG: %[[B:.*]] = tilegpu.local_alloc : !tilegpu.shared<2x32x64xf16, padded, pad = 16>
// CHECK: %[[X0:.*]] = tile.load
// CHECK: tilegpu.local_store %[[X0]], %[[A]][%c0_i32]
// CHECK: %[[Y0:.*]] = tile.load
// CHECK: tilegpu.local_store %[[Y0]], %[[B]][%c0_i32]
// CHECK: scf.for {{.*}} iter_args(%[[ACC:[^ ]*]] = %{{.*}}, %[[PA:[^ ]*]] = %{{.*}}, %[[PB:[^ ]*]] = %{{.*}}, %[[READ:[^ ]*]] = %c0_i32, %[[FILL:[^ ]*]] = %c1_i32)
// CHECK-NEXT: tilegpu.barrier
// CHECK: %[[NEXT:.*]] = arith.addi %{{.*}}, %c32_i32
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[NEXT]], %{{.*}}
// CHECK: %[[X:.*]] = tile.load %[[PA]] mask
// CHECK: %[[Y:.*]] = tile.load %[[PB]] mask
// CHECK: %[[LA:.*]] = tilegpu.local_load %[[A]][%[[READ]]]
// CHECK: %[[LB:.*]] = tilegpu.local_load %[[B]][%[[READ]]]
// CHECK: tile.dot %[[LA]], %[[LB]], %[[ACC]]
// CHECK-NEXT: tilegpu.local_store %[[X]], %[[A]][%[[FILL]]]
// CHECK-NEXT: tilegpu.local_store %[[Y]], %[[B]][%[[FILL]]]
// CHECK-NEXT: scf.yield
// CHECK-NOT: async
// Lowered, the slots take 2 x 2 x 4608 bytes (4096 of tile, 512 of padding)
// and the dot needs no scratch of its own: one barrier starts each
// iteration, then each K step reads A's 16-byte run of K (both halves of
// the wave's K: two steps) and B's four elements down K straight from the
// slots into its MFMA, no barrier between them.
// ROCDL: module attributes {tilegpu.shared = 18432 : i32
// ROCDL-LABEL: llvm.func @matmul
// ROCDL: rocdl.s.barrier
// ROCDL-NOT: rocdl.s.barrier
// ROCDL: llvm.load {{.*}} : !llvm.ptr<3> -> vector<8xi16>
// ROCDL-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> i16
// ROCDL-NOT: rocdl.s.barrier
// ROCDL: rocdl.mfma.f32.32x32x8f16
// ROCDL-NOT: rocdl.s.barrier
// ROCDL: rocdl.mfma.f32.32x32x8f16
// ROCDL-NOT: rocdl.s.barrier
// ROCDL: rocdl.mfma.f32.32x32x8f16
// ROCDL-NOT: rocdl.s.barrier
// ROCDL: rocdl.mfma.f32.32x32x8f16
// With 3 stages the registers hold iteration i + 2's blocks from the top of
// iteration i to its end, so 2 slots do: the prologue fills both (iterations
// 0 and 1), then a barrier; each iteration reads slot i % 2 and, after its
// dot and a barrier (every wave is done reading it), refills that slot. One
// slot counter, no barrier at the top of the body.
// S3-LABEL: func.func @matmul
// S3-DAG: %[[A:.*]] = tilegpu.local_alloc : !tilegpu.shared<2x64x32xf16, padded, pad = 16>
// S3-DAG: %[[B:.*]] = tilegpu.local_alloc : !tilegpu.shared<2x32x64xf16, padded, pad = 16>
// S3: tilegpu.local_store %{{.*}}, %[[A]][%c0_i32]
// S3: tilegpu.local_store %{{.*}}, %[[B]][%c0_i32]
// S3: tilegpu.local_store %{{.*}}, %[[A]][%c1_i32]
// S3: tilegpu.local_store %{{.*}}, %[[B]][%c1_i32]
// S3: tilegpu.barrier
// S3-NEXT: scf.for {{.*}} iter_args(%[[ACC:[^ ]*]] = %{{.*}}, %[[PA:[^ ]*]] = %{{.*}}, %[[PB:[^ ]*]] = %{{.*}}, %[[SLOT:[^ ]*]] = %c0_i32) ->
// S3-NOT: tilegpu.barrier
// S3: %[[X:.*]] = tile.load %[[PA]] mask
// S3: %[[Y:.*]] = tile.load %[[PB]] mask
// S3: %[[LA:.*]] = tilegpu.local_load %[[A]][%[[SLOT]]]
// S3: %[[LB:.*]] = tilegpu.local_load %[[B]][%[[SLOT]]]
// S3-NOT: tilegpu.barrier
// S3: tile.dot %[[LA]], %[[LB]], %[[ACC]]
// S3-NEXT: tilegpu.barrier
// S3-NEXT: tilegpu.local_store %[[X]], %[[A]][%[[SLOT]]]
// S3-NEXT: tilegpu.local_store %[[Y]], %[[B]][%[[SLOT]]]
// S3-NEXT: scf.yield
// gfx950: the double-K MFMA (8 of K a lane), A's run of K in one 16-byte
// read, and B's slot (rows along N, padded by 32 bytes for the transposed
// reads' 4 rows of 32 bytes: 2 slots of 4608 + 2 x (32 x 128 + 32 x 32)
// bytes) read with two transposed reads of 4 rows each.
// GFX950: module attributes {tilegpu.shared = 19456 : i32
// GFX950-LABEL: llvm.func @matmul
// GFX950: llvm.load {{.*}} : !llvm.ptr<3> -> vector<8xi16>
// GFX950: rocdl.ds.read.tr16.b64 {{.*}} : <3> -> vector<4xi16>
// GFX950: rocdl.ds.read.tr16.b64 {{.*}} : <3> -> vector<4xi16>
// GFX950: rocdl.mfma.f32.32x32x16.f16 {{.*}} : (vector<8xf16>, vector<8xf16>, vector<16xf32>
// GFX950-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> i16
func.func @matmul(%pa: !tile.ptr<f16> {tile.noalias}, %pb: !tile.ptr<f16> {tile.noalias}, %pc: !tile.ptr<f32> {tile.noalias}, %k: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %za = arith.constant dense<0.0> : tensor<64x32xf16>
  %zb = arith.constant dense<0.0> : tensor<32x64xf16>
  %rm = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %rk = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %rm2 = tile.expand_dims %rm {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rk2 = tile.expand_dims %rk {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %c32t = arith.constant dense<32> : tensor<64x1xi32>
  %rowa = arith.muli %rm2, %c32t : tensor<64x1xi32>
  %rowab = tile.broadcast %rowa : tensor<64x1xi32> -> tensor<64x32xi32>
  %rkab = tile.broadcast %rk2 : tensor<1x32xi32> -> tensor<64x32xi32>
  %offa = arith.addi %rowab, %rkab : tensor<64x32xi32>
  %a0 = tile.splat %pa : tensor<64x32x!tile.ptr<f16>>
  %a1 = tile.addptr %a0, %offa : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  %rkb = tile.expand_dims %rk {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %c64t = arith.constant dense<64> : tensor<32x1xi32>
  %rowb = arith.muli %rkb, %c64t : tensor<32x1xi32>
  %rowbb = tile.broadcast %rowb : tensor<32x1xi32> -> tensor<32x64xi32>
  %rn2 = tile.expand_dims %rm {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rnb = tile.broadcast %rn2 : tensor<1x64xi32> -> tensor<32x64xi32>
  %offb = arith.addi %rowbb, %rnb : tensor<32x64xi32>
  %b0 = tile.splat %pb : tensor<32x64x!tile.ptr<f16>>
  %b1 = tile.addptr %b0, %offb : tensor<32x64x!tile.ptr<f16>>, tensor<32x64xi32>
  %da = arith.constant dense<32> : tensor<64x32xi32>
  %db = arith.constant dense<2048> : tensor<32x64xi32>
  %ka = tile.splat %k : tensor<1x32xi32>
  %kb = tile.splat %k : tensor<32x1xi32>
  %r:3 = scf.for %i = %c0 to %k step %c32 iter_args(%acc = %zero, %p = %a1, %q = %b1) -> (tensor<64x64xf32>, tensor<64x32x!tile.ptr<f16>>, tensor<32x64x!tile.ptr<f16>>) : i32 {
    %is = tile.splat %i : tensor<1x32xi32>
    %kk = arith.addi %rk2, %is : tensor<1x32xi32>
    %ma = arith.cmpi slt, %kk, %ka : tensor<1x32xi32>
    %mab = tile.broadcast %ma : tensor<1x32xi1> -> tensor<64x32xi1>
    %isb = tile.splat %i : tensor<32x1xi32>
    %kkb = arith.addi %rkb, %isb : tensor<32x1xi32>
    %mb = arith.cmpi slt, %kkb, %kb : tensor<32x1xi32>
    %mbb = tile.broadcast %mb : tensor<32x1xi1> -> tensor<32x64xi1>
    %x = tile.load %p mask %mab : tensor<64x32xi1> other %za : tensor<64x32xf16> : tensor<64x32x!tile.ptr<f16>> -> tensor<64x32xf16>
    %y = tile.load %q mask %mbb : tensor<32x64xi1> other %zb : tensor<32x64xf16> : tensor<32x64x!tile.ptr<f16>> -> tensor<32x64xf16>
    %d = tile.dot %x, %y, %acc : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    %p2 = tile.addptr %p, %da : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
    %q2 = tile.addptr %q, %db : tensor<32x64x!tile.ptr<f16>>, tensor<32x64xi32>
    scf.yield %d, %p2, %q2 : tensor<64x64xf32>, tensor<64x32x!tile.ptr<f16>>, tensor<32x64x!tile.ptr<f16>>
  }
  %c64s = arith.constant dense<64> : tensor<64x1xi32>
  %rowc = arith.muli %rm2, %c64s : tensor<64x1xi32>
  %rowcb = tile.broadcast %rowc : tensor<64x1xi32> -> tensor<64x64xi32>
  %rncb = tile.broadcast %rn2 : tensor<1x64xi32> -> tensor<64x64xi32>
  %offc = arith.addi %rowcb, %rncb : tensor<64x64xi32>
  %c0p = tile.splat %pc : tensor<64x64x!tile.ptr<f32>>
  %c1p = tile.addptr %c0p, %offc : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %c1p, %r#0 : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  return
}
