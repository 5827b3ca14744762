// RUN: tessel-opt %s -tessel-test-axis-info -split-input-file -verify-diagnostics -o /dev/null
// Expected facts are derived by hand from the values each op computes.

// The vector-add address: pid * 128 + arange(0, 128) from a 16-byte aligned
// argument.
func.func @vector_add(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [1], constant = ?}}
  %pid = tile.get_program_id 0
  // expected-remark @+1 {{result: divisibility = [128], contiguity = [1], constancy = [1], constant = 128}}
  %c128 = arith.constant 128 : i32
  // expected-remark @+1 {{result: divisibility = [128], contiguity = [1], constancy = [1], constant = ?}}
  %start = arith.muli %pid, %c128 : i32
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [128], constancy = [1], constant = ?}}
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  // expected-remark @+1 {{result: divisibility = [128], contiguity = [1], constancy = [128], constant = ?}}
  %s = tile.splat %start : tensor<128xi32>
  // expected-remark @+1 {{result: divisibility = [128], contiguity = [128], constancy = [1], constant = ?}}
  %offs = arith.addi %s, %r : tensor<128xi32>
  // expected-remark @+1 {{result: divisibility = [16], contiguity = [1], constancy = [128], constant = ?}}
  %ps = tile.splat %p : tensor<128x!tile.ptr<f32>>
  // Runs of 128 floats whose first address is a multiple of 16 bytes.
  // expected-remark @+1 {{result: divisibility = [16], contiguity = [128], constancy = [1], constant = ?}}
  %ptrs = tile.addptr %ps, %offs : tensor<128x!tile.ptr<f32>>, tensor<128xi32>
  // Offsets 1..128: runs still, but their first element is odd.
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [1], constant = 1}}
  %c1 = arith.constant 1 : i32
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [128], constant = 1}}
  %ones = tile.splat %c1 : tensor<128xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [128], constancy = [1], constant = ?}}
  %shifted = arith.addi %offs, %ones : tensor<128xi32>
  return
}

// -----

// A row-major [32, 64] tile: rows `stride` apart, stride a multiple of 16
// (the launcher's mark), columns contiguous.
func.func @tile_2d(%p: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %stride: i32 {tile.divisibility = 16 : i32}) {
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [32], constancy = [1], constant = ?}}
  %rm = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [64], constancy = [1], constant = ?}}
  %rn = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // Each element of the new column dimension is an element of %rm: only
  // multiples of 1 in general.
  // expected-remark @+1 {{result: divisibility = [1073741824, 1], contiguity = [32, 1], constancy = [1, 1], constant = ?}}
  %col = tile.expand_dims %rm {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  // expected-remark @+1 {{result: divisibility = [1073741824, 1], contiguity = [32, 1], constancy = [1, 64], constant = ?}}
  %colb = tile.broadcast %col : tensor<32x1xi32> -> tensor<32x64xi32>
  // expected-remark @+1 {{result: divisibility = [16, 16], contiguity = [1, 1], constancy = [32, 64], constant = ?}}
  %st = tile.splat %stride : tensor<32x64xi32>
  // i * stride: every element a multiple of 16, no longer runs.
  // expected-remark @+1 {{result: divisibility = [16, 16], contiguity = [1, 1], constancy = [1, 64], constant = ?}}
  %rowoff = arith.muli %colb, %st : tensor<32x64xi32>
  // expected-remark @+1 {{result: divisibility = [1, 1073741824], contiguity = [1, 64], constancy = [1, 1], constant = ?}}
  %row = tile.expand_dims %rn {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  // expected-remark @+1 {{result: divisibility = [1, 1073741824], contiguity = [1, 64], constancy = [32, 1], constant = ?}}
  %rowb = tile.broadcast %row : tensor<1x64xi32> -> tensor<32x64xi32>
  // Along rows: runs of 64 starting at i * stride (a multiple of 16); along
  // columns every element i * stride + j, a multiple of 1 only.
  // expected-remark @+1 {{result: divisibility = [1, 16], contiguity = [1, 64], constancy = [1, 1], constant = ?}}
  %off = arith.addi %rowoff, %rowb : tensor<32x64xi32>
  // expected-remark @+1 {{result: divisibility = [16, 16], contiguity = [1, 1], constancy = [32, 64], constant = ?}}
  %ps = tile.splat %p : tensor<32x64x!tile.ptr<f16>>
  // 2-byte elements: a multiple of 16 elements is a multiple of 32 bytes;
  // with the 16-byte base, 16 bytes at each row's start, 2 for every element.
  // expected-remark @+1 {{result: divisibility = [2, 16], contiguity = [1, 64], constancy = [1, 1], constant = ?}}
  %ptrs = tile.addptr %ps, %off : tensor<32x64x!tile.ptr<f16>>, tensor<32x64xi32>
  // expected-remark @+1 {{result: divisibility = [16, 2], contiguity = [64, 1], constancy = [1, 1], constant = ?}}
  %t = tile.trans %ptrs {order = array<i32: 1, 0>} : tensor<32x64x!tile.ptr<f16>> -> tensor<64x32x!tile.ptr<f16>>
  return
}

// -----

// Division, remainder and shifts by powers of 2.
func.func @div_rem_shift() {
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [128], constancy = [1], constant = ?}}
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  // expected-remark @+1 {{result: divisibility = [4], contiguity = [1], constancy = [128], constant = 4}}
  %c4 = arith.constant dense<4> : tensor<128xi32>
  // expected-remark @+1 {{result: divisibility = [32], contiguity = [1], constancy = [128], constant = 32}}
  %c32 = arith.constant dense<32> : tensor<128xi32>
  // expected-remark @+1 {{result: divisibility = [2], contiguity = [1], constancy = [128], constant = 2}}
  %c2 = arith.constant dense<2> : tensor<128xi32>
  // 0,0,0,0,1,1,1,1,...: groups of 4 equal values.
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [4], constant = ?}}
  %q = arith.divui %r, %c4 : tensor<128xi32>
  // 0..31,0..31,...: runs of 32 starting at 0.
  // expected-remark @+1 {{result: divisibility = [32], contiguity = [32], constancy = [1], constant = ?}}
  %m = arith.remui %r, %c32 : tensor<128xi32>
  // A signed remainder too, taking the (non-negative) offsets as Triton does.
  // expected-remark @+1 {{result: divisibility = [32], contiguity = [32], constancy = [1], constant = ?}}
  %ms = arith.remsi %r, %c32 : tensor<128xi32>
  // 0,4,8,...: every element a multiple of 4.
  // expected-remark @+1 {{result: divisibility = [4], contiguity = [1], constancy = [1], constant = ?}}
  %l = arith.shli %r, %c2 : tensor<128xi32>
  // (4i) >> 2 = i: a multiple of 1; (i >> 2) groups of 4.
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [4], constant = ?}}
  %h = arith.shrsi %r, %c2 : tensor<128xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [1], constant = ?}}
  %lh = arith.shrui %l, %c2 : tensor<128xi32>
  // Exact division of multiples of 4 by 2: multiples of 2.
  // expected-remark @+1 {{result: divisibility = [2], contiguity = [1], constancy = [1], constant = ?}}
  %ld = arith.divsi %l, %c2 : tensor<128xi32>
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [128], constancy = [1], constant = ?}}
  %e = arith.extsi %r : tensor<128xi32> to tensor<128xi64>
  // expected-remark @+1 {{result: divisibility = [256], contiguity = [128], constancy = [1], constant = ?}}
  %t = arith.trunci %r : tensor<128xi32> to tensor<128xi8>
  return
}

// -----

// Hints on the defining op and assumptions about scalars.
func.func @hints(%p: !tile.ptr<i32>, %n: i32, %idx: !tile.ptr<i32>) {
  // A kernel argument with an assumption n % 32 == 0.
  // expected-remark @+1 {{result: divisibility = [32], contiguity = [1], constancy = [1], constant = 32}}
  %c32 = arith.constant 32 : i32
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [1], constancy = [1], constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @+1 {{result: divisibility = [32], contiguity = [1], constancy = [1], constant = ?}}
  %rem = arith.remsi %n, %c32 : i32
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [1], constant = ?}}
  %ok = arith.cmpi eq, %rem, %c0 : i32
  tile.assume %ok
  // %n is a multiple of 32, so n + 0..63 has runs of 64 starting at it.
  // expected-remark @+1 {{result: divisibility = [32], contiguity = [1], constancy = [64], constant = ?}}
  %ns = tile.splat %n : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [64], constancy = [1], constant = ?}}
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [32], contiguity = [64], constancy = [1], constant = ?}}
  %o = arith.addi %ns, %r : tensor<64xi32>
  // Offsets read from memory: nothing known but what the hints say.
  // expected-remark @+1 {{result: divisibility = [4], contiguity = [1], constancy = [64], constant = ?}}
  %is = tile.splat %idx : tensor<64x!tile.ptr<i32>>
  // expected-remark @+1 {{result: divisibility = [4], contiguity = [64], constancy = [1], constant = ?}}
  %ip = tile.addptr %is, %r : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [16], contiguity = [8], constancy = [1], constant = ?}}
  %off = tile.load %ip {tile.divisibility = array<i32: 16>, tile.contiguity = array<i32: 8>} : tensor<64x!tile.ptr<i32>> -> tensor<64xi32>
  // A hint counts as its largest power-of-2 divisor (groups of 96 equal
  // values are groups of 32), at most the block's size.
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [32], constant = ?}}
  %k = tile.load %ip {tile.constancy = array<i32: 96>} : tensor<64x!tile.ptr<i32>> -> tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [4], contiguity = [1], constancy = [64], constant = ?}}
  %ps = tile.splat %p : tensor<64x!tile.ptr<i32>>
  // expected-remark @+1 {{result: divisibility = [4], contiguity = [8], constancy = [1], constant = ?}}
  %ptrs = tile.addptr %ps, %off : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  // Nothing is proved about a program id; the hint 12 says a multiple of 4.
  // expected-remark @+1 {{result: divisibility = [4], contiguity = [1], constancy = [1], constant = ?}}
  %m = tile.get_program_id 0 {tile.divisibility = array<i32: 12>}
  // A hint never lowers what is proved: 32 * n is a multiple of 1024.
  // expected-remark @+1 {{result: divisibility = [1024], contiguity = [1], constancy = [1], constant = ?}}
  %m2 = arith.muli %n, %c32 {tile.divisibility = array<i32: 2>} : i32
  return
}

// -----

// Loops: the induction variable of 0, 32, 64, ... and a carried value that
// stays a multiple of 32.
func.func @loop(%n: i32) {
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [1], constancy = [1], constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @+1 {{result: divisibility = [32], contiguity = [1], constancy = [1], constant = 32}}
  %c32 = arith.constant 32 : i32
  // expected-remark @+1 {{result: divisibility = [64], contiguity = [1], constancy = [1], constant = 64}}
  %c64 = arith.constant 64 : i32
  // expected-remark @+2 {{induction variable: divisibility = [32], contiguity = [1], constancy = [1], constant = ?}}
  // expected-remark @+1 {{result: divisibility = [64], contiguity = [1], constancy = [1], constant = ?}}
  %acc = scf.for %i = %c0 to %n step %c32 iter_args(%a = %c0) -> (i32) : i32 {
    // expected-remark @+1 {{result: divisibility = [64], contiguity = [1], constancy = [1], constant = ?}}
    %next = arith.addi %a, %c64 : i32
    scf.yield %next : i32
  }
  return
}

// -----

// A loop without iter_args (layer norm's last loop): its induction variable is
// still a multiple of the step.
func.func @loop_without_results(%n: i32) {
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [1], constancy = [1], constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @+1 {{result: divisibility = [1024], contiguity = [1], constancy = [1], constant = 1024}}
  %c1024 = arith.constant 1024 : i32
  // expected-remark @+1 {{induction variable: divisibility = [1024], contiguity = [1], constancy = [1], constant = ?}}
  scf.for %i = %c0 to %n step %c1024 : i32 {
    // expected-remark @+1 {{result: divisibility = [1024], contiguity = [1], constancy = [1], constant = ?}}
    %j = arith.addi %i, %c1024 : i32
  }
  return
}

// -----

// The matmul tutorial's wrapped offsets: (pid * 64 + arange) % n with n a
// multiple of 16 runs through 16 consecutive values from a multiple of 16;
// a remainder by values that change along the run proves no run.
func.func @wrapped_offsets(%n: i32 {tile.divisibility = 16 : i32}, %v: tensor<64xi32>) {
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [1], constant = ?}}
  %pid = tile.get_program_id 0
  // expected-remark @+1 {{result: divisibility = [64], contiguity = [1], constancy = [1], constant = 64}}
  %c64 = arith.constant 64 : i32
  // expected-remark @+1 {{result: divisibility = [64], contiguity = [1], constancy = [1], constant = ?}}
  %start = arith.muli %pid, %c64 : i32
  // expected-remark @+1 {{result: divisibility = [64], contiguity = [1], constancy = [64], constant = ?}}
  %s = tile.splat %start : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [64], constancy = [1], constant = ?}}
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [64], contiguity = [64], constancy = [1], constant = ?}}
  %offs = arith.addi %s, %r : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [16], contiguity = [1], constancy = [64], constant = ?}}
  %ns = tile.splat %n : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [16], contiguity = [16], constancy = [1], constant = ?}}
  %wrapped = arith.remsi %offs, %ns : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [1], constant = ?}}
  %varying = arith.remsi %offs, %v : tensor<64xi32>
  return
}

// -----

// Selects keep what both sides share; a comparison keeps constancy.
func.func @select(%c: i1, %x: i32 {tile.divisibility = 16 : i32}) {
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [16], constancy = [1], constant = ?}}
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  // expected-remark @+1 {{result: divisibility = [16], contiguity = [1], constancy = [16], constant = ?}}
  %xs = tile.splat %x : tensor<16xi32>
  // expected-remark @+1 {{result: divisibility = [16], contiguity = [16], constancy = [1], constant = ?}}
  %a = arith.addi %xs, %r : tensor<16xi32>
  // expected-remark @+1 {{result: divisibility = [16], contiguity = [16], constancy = [1], constant = ?}}
  %s = arith.select %c, %a, %r : tensor<16xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [16], constant = ?}}
  %lt = arith.cmpi slt, %xs, %xs : tensor<16xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [1], constant = ?}}
  %s2 = arith.select %lt, %xs, %r : tensor<16xi1>, tensor<16xi32>
  return
}

// -----

// A bounds mask: offsets in aligned runs against a bound that is a multiple
// of 16 change only at a run of 16's start (constancy 16); against a bound
// known to be only even, pairs (constancy 2); an odd bound, single lanes.
func.func @bounds_mask(%n: i32 {tile.divisibility = 16 : i32}, %e: i32 {tile.divisibility = 2 : i32}, %o: i32) {
  // expected-remark @+1 {{result: divisibility = [1073741824], contiguity = [64], constancy = [1], constant = ?}}
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [16], contiguity = [1], constancy = [64], constant = ?}}
  %ns = tile.splat %n : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [16], constant = ?}}
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [16], constant = ?}}
  %m2 = arith.cmpi sgt, %ns, %r : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [2], contiguity = [1], constancy = [64], constant = ?}}
  %es = tile.splat %e : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [2], constant = ?}}
  %me = arith.cmpi slt, %r, %es : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [64], constant = ?}}
  %os = tile.splat %o : tensor<64xi32>
  // expected-remark @+1 {{result: divisibility = [1], contiguity = [1], constancy = [1], constant = ?}}
  %mo = arith.cmpi slt, %r, %os : tensor<64xi32>
  return
}
