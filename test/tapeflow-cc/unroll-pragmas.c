// The unroll pragmas (Clang's forms) become `tapeflow.unroll` on the loop's scf.for:
// a factor, "full", or 1 (never); a count naming a macro is evaluated by Clang. With -O0
// the attribute is left for `tapeflow-unroll`; by default the C path applies it.
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s -DUC=32 | filecheck %s
// RUN: tapeflow-cc %s -DUC=32 | filecheck %s --check-prefix=OPT
// RUN: not tapeflow-cc -O0 %S/Inputs/unroll-zero.c 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not tapeflow-cc -O0 %S/Inputs/unroll-not-constant.c 2>&1 | filecheck %s --check-prefix=NONCONST

double f(double *x, int n) {
  double s = 0.0;
#pragma nounroll
  for (int i = 0; i < n; i++)
    s += x[i];
#pragma unroll 4
  for (int i = 0; i < n; i++)
    s += x[i];
#pragma unroll(2)
  for (int i = 0; i < n; i++)
    s += x[i];
#pragma unroll
  for (int i = 0; i < 3; i++)
    s += x[i];
#pragma GCC unroll 8
  for (int i = 0; i < n; i++)
    s += x[i];
#pragma clang loop unroll_count(UC / 2)
  for (int i = 0; i < n; i++)
    s += x[i];
  _Pragma("clang loop unroll(full)")
  for (int i = 0; i < 2; i++)
    s += x[i];
#pragma clang loop vectorize(disable) unroll(disable)
  for (int i = 0; i < n; i++)
    s += x[i];
#pragma clang loop unroll(enable)
  for (int i = 0; i < n; i++)
    s += x[i];
  for (int i = 0; i < n; i++)
#pragma unroll 2
    for (int j = 0; j < n; j++)
      s += x[j];
  int k = 0;
#pragma unroll 4
  while (k < n) {
    s += x[k];
    k++;
  }
  return s;
}

// CHECK-LABEL: func.func @f
// CHECK:       scf.for
// CHECK:       } {tapeflow.unroll = 1 : i64}
// CHECK:       scf.for
// CHECK:       } {tapeflow.unroll = 4 : i64}
// CHECK:       scf.for
// CHECK:       } {tapeflow.unroll = 2 : i64}
// CHECK:       scf.for
// CHECK:       } {tapeflow.unroll = "full"}
// CHECK:       scf.for
// CHECK:       } {tapeflow.unroll = 8 : i64}
// CHECK:       scf.for
// CHECK:       } {tapeflow.unroll = 16 : i64}
// CHECK:       scf.for
// CHECK:       } {tapeflow.unroll = "full"}
// CHECK:       scf.for
// CHECK:       } {tapeflow.unroll = 1 : i64}
// CHECK:       scf.for
// CHECK-NOT:   tapeflow.unroll
// CHECK:       scf.for
// CHECK:         scf.for
// CHECK:         } {tapeflow.unroll = 2 : i64}
// CHECK-NEXT:    scf.yield
// CHECK-NEXT:  }
// CHECK-NOT:   tapeflow.unroll
// CHECK:       scf.while
// CHECK-NOT:   tapeflow.unroll

// Applied: no attribute is left; the two full loops (3 and 2 iterations) are gone, a
// factor's loop is a main loop and a remainder (n unknown): 1+2+2+2+2+1+1+(1+2) loops.
// OPT-LABEL: func.func @f
// OPT-NOT:   tapeflow.unroll
// OPT-COUNT-14: scf.for
// OPT-NOT:   scf.for
// OPT:       scf.while

// Clang checks the count itself.
// ZERO: unroll-zero.c:3:20: invalid value '0'; must be positive
// NONCONST: unroll-not-constant.c:3:20: expression is not an integer constant expression
