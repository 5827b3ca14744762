// RUN: tessel-opt %s -split-input-file -convert-tile-to-tilegpu -tilegpu-memory-barriers | FileCheck %s

// Reversing in place: the store may write what another thread has yet to
// load, so a barrier separates them.
// CHECK-LABEL: func.func @reverse
// CHECK: tile.load
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tile.store
func.func @reverse(%x: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %c255 = arith.constant dense<255> : tensor<256xi32>
  %rev = arith.subi %c255, %r : tensor<256xi32>
  %xs = tile.splat %x : tensor<256x!tile.ptr<f32>>
  %src = tile.addptr %xs, %rev : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %dst = tile.addptr %xs, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %src : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  tile.store %dst, %v : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  return
}

// -----

// An update in place through the same pointers (each thread its own
// elements), and arrays that alias nothing: no barrier.
// CHECK-LABEL: func.func @no_hazard
// CHECK-NOT: tilegpu.barrier
func.func @no_hazard(%x: !tile.ptr<f32> {tile.noalias}, %y: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %xs = tile.splat %x : tensor<256x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %xa : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  %w = arith.addf %v, %v : tensor<256xf32>
  tile.store %xa, %w : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  %ys = tile.splat %y : tensor<256x!tile.ptr<f32>>
  %ya = tile.addptr %ys, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  tile.store %ya, %v : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  return
}

// -----

// Two arguments that may be views of one array, in a loop: the store of one
// iteration is ordered before the load of the next.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK: tilegpu.barrier
// CHECK-NEXT: tile.load
// CHECK: tilegpu.barrier
// CHECK-NEXT: tile.store
func.func @loop(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %xs = tile.splat %x : tensor<256x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %ys = tile.splat %y : tensor<256x!tile.ptr<f32>>
  %ya = tile.addptr %ys, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %v = tile.load %xa : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
    tile.store %ya, %v : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  }
  return
}

// -----

// A store whose addresses move with the loop (offset by the induction
// variable) overlaps the previous iteration's, written by other threads: a
// barrier orders the two, although both go through the same pointer value.
// CHECK-LABEL: func.func @moving_store
// CHECK: scf.for
// CHECK: tilegpu.barrier
// CHECK-NEXT: tile.store
func.func @moving_store(%x: !tile.ptr<i32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c16 = arith.constant 16 : i32
  scf.for %i = %c0 to %c2 step %c1 : i32 {
    %o = arith.muli %i, %c16 : i32
    %os = tile.splat %o : tensor<256xi32>
    %off = arith.addi %r, %os : tensor<256xi32>
    %xs = tile.splat %x : tensor<256x!tile.ptr<i32>>
    %xa = tile.addptr %xs, %off : tensor<256x!tile.ptr<i32>>, tensor<256xi32>
    %val = tile.splat %i : tensor<256xi32>
    tile.store %xa, %val : tensor<256x!tile.ptr<i32>>, tensor<256xi32>
  }
  return
}

// -----

// A store that moves by its whole block each iteration (layer norm's output
// loop) never meets the previous iteration's addresses: no barrier, though
// the store and the loads go through arguments that alias nothing. A store
// that moves by 255 of its 256 elements still overlaps: a barrier.
// CHECK-LABEL: func.func @block_steps
// CHECK: scf.for
// CHECK-NOT: tilegpu.barrier
// CHECK: tile.store
// CHECK: scf.for
// CHECK: tilegpu.barrier
// CHECK-NEXT: tile.store
func.func @block_steps(%x: !tile.ptr<f32> {tile.noalias}, %y: !tile.ptr<f32> {tile.noalias}, %row: i32, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %c0 = arith.constant 0 : i32
  %c255 = arith.constant 255 : i32
  %c256 = arith.constant 256 : i32
  %yrow = tile.addptr %y, %row : !tile.ptr<f32>, i32
  scf.for %off = %c0 to %n step %c256 : i32 {
    %os = tile.splat %off : tensor<256xi32>
    %cols = arith.addi %os, %r : tensor<256xi32>
    %xs = tile.splat %x : tensor<256x!tile.ptr<f32>>
    %xa = tile.addptr %xs, %cols : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
    %v = tile.load %xa : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
    %ys = tile.splat %yrow : tensor<256x!tile.ptr<f32>>
    %ya = tile.addptr %ys, %cols : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
    tile.store %ya, %v : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  }
  scf.for %off = %c0 to %n step %c255 : i32 {
    %os = tile.splat %off : tensor<256xi32>
    %cols = arith.addi %os, %r : tensor<256xi32>
    %ys = tile.splat %y : tensor<256x!tile.ptr<f32>>
    %ya = tile.addptr %ys, %cols : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
    %v = tile.splat %row : tensor<256xi32>
    %f = arith.sitofp %v : tensor<256xi32> to tensor<256xf32>
    tile.store %ya, %f : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  }
  return
}

// -----

// A lock around a read-modify-write of an array that aliases nothing (the
// layer-norm-backward pattern). The compare-and-swap acquires: the loads
// after it wait for it (its old value, which the loop uses, already passes
// a barrier of its own, so none is added after the swap in the loop). The
// release waits for every thread's stores.
// CHECK-LABEL: func.func @lock
// CHECK: scf.while
// CHECK: tile.atomic_cas
// CHECK-NOT: tilegpu.barrier
// CHECK: scf.condition
// CHECK: tile.load
// CHECK: tile.store
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tile.atomic_rmw xchg
func.func @lock(%lock: !tile.ptr<i32> {tile.noalias}, %x: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.while : () -> () {
    %old = tile.atomic_cas acq_rel, gpu, %lock, %c0, %c1 : !tile.ptr<i32>, i32
    %held = arith.cmpi eq, %old, %c1 : i32
    scf.condition(%held)
  } do {
    scf.yield
  }
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %xs = tile.splat %x : tensor<256x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %xa : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  %w = arith.addf %v, %v : tensor<256xf32>
  tile.store %xa, %w : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  %unlocked = tile.atomic_rmw xchg, release, gpu, %lock, %c0 : !tile.ptr<i32>, i32
  return
}

// -----

// An acquiring atomic whose old values nobody reads makes the next access
// of any memory wait; a relaxed one orders nothing but its own array.
// CHECK-LABEL: func.func @acquire_orders
// CHECK: tile.atomic_rmw add, acquire
// CHECK: tilegpu.barrier
// CHECK-NEXT: tile.load
// CHECK: tile.atomic_rmw add, relaxed
// CHECK-NOT: tilegpu.barrier
// CHECK: tile.load
// CHECK-NOT: tilegpu.barrier
// CHECK: return
func.func @acquire_orders(%c: !tile.ptr<i32> {tile.noalias}, %x: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %a = tile.atomic_rmw add, acquire, gpu, %c, %c1 : !tile.ptr<i32>, i32
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %xs = tile.splat %x : tensor<256x!tile.ptr<f32>>
  %xa = tile.addptr %xs, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %xa : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  %b = tile.atomic_rmw add, relaxed, gpu, %c, %c1 : !tile.ptr<i32>, i32
  %u = tile.load %xa : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  return
}

// -----

// A call of a function that loads comes after the pending store (another
// thread's element); a call of one that touches no memory waits for nothing.
// CHECK-LABEL: func.func @calls
// CHECK: tile.store
// CHECK-NEXT: call @pure
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: call @loads
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tile.store
func.func @calls(%x: !tile.ptr<f32> {tile.noalias}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %base = tile.splat %x : tensor<256x!tile.ptr<f32>>
  %p = tile.addptr %base, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %one = arith.constant dense<1.0> : tensor<256xf32>
  tile.store %p, %one : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  %two = call @pure(%one) : (tensor<256xf32>) -> tensor<256xf32>
  %v = call @loads(%p) : (tensor<256x!tile.ptr<f32>>) -> tensor<256xf32>
  tile.store %p, %v : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  return
}

func.func private @pure(%v: tensor<256xf32>) -> tensor<256xf32> {
  %w = arith.addf %v, %v : tensor<256xf32>
  return %w : tensor<256xf32>
}

func.func private @loads(%p: tensor<256x!tile.ptr<f32>>) -> tensor<256xf32> {
  %v = tile.load %p : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  return %v : tensor<256xf32>
}
