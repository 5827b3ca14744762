// RUN: tessel-opt %s -tessel-cpu-program-exit | FileCheck %s

// The exit marker ends its block with a return; what followed it is left in
// a block nothing reaches, and the marker's declaration goes.
// CHECK-NOT: tessel.exit_program
// CHECK-LABEL: func.func @kernel
// CHECK: cf.cond_br %{{.*}}, ^[[FAIL:.*]], ^[[GO:.*]]
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: llvm.call @report
// CHECK-NEXT: return
// CHECK: ^{{.*}}:
// CHECK-NEXT: cf.br ^[[GO]]
// CHECK: ^[[GO]]:
// CHECK-NEXT: llvm.call @work
// CHECK-NEXT: return
// CHECK-NOT: tessel.exit_program
module {
  func.func private @tessel.exit_program()
  llvm.func @report()
  llvm.func @work()
  func.func @kernel(%failed: i1) {
    cf.cond_br %failed, ^fail, ^go
  ^fail:
    llvm.call @report() : () -> ()
    func.call @tessel.exit_program() : () -> ()
    cf.br ^go
  ^go:
    llvm.call @work() : () -> ()
    return
  }
}
