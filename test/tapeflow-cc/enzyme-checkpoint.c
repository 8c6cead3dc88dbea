// Enzyme's checkpointed and fixed-point loops (<enzyme/checkpoint.h>, <enzyme/fixed_point.h>,
// TapeFlow's own headers) are the loops of step calls they stand for: __enzyme_checkpoint_for
// an scf.for from start to start + n, __enzyme_checkpoint_while and __enzyme_fixed_point an
// scf.while that steps until the step returns 0, __enzyme_set_fixed_point nothing. The
// markers and their operands are not translated, a scheme's host objects (its
// configuration) are no IR argument, and each loop gets a remark: TapeFlow streams the tape
// of every step, so the gradient is the loop's, as Enzyme's is whatever the scheme.
// REQUIRES: libclang
// RUN: tapeflow-cc %s 2>%t.remarks | filecheck %s
// RUN: filecheck %s --check-prefix=REMARK < %t.remarks
// The gradients through the checkpointed loop and the plain one are bit-identical:
// RUN: tapeflow-cc %s 2>/dev/null | tapeflow-opt -p tapeflow-autodiff,tapeflow-lower-tape -o %t.mlir
// RUN: python -c "import numpy as n; n.save('%t.u.npy', [0.5, 1.5]); n.save('%t.z.npy', [0.0, 0.0])"
// RUN: tapeflow-run %t.mlir --entry plain_grad --args 3 1.0 --inputs u=%t.u.npy --inputs d_u=%t.z.npy > %t.plain
// RUN: tapeflow-run %t.mlir --entry ckpt_grad --args 3 1.0 --inputs u=%t.u.npy --inputs d_u=%t.z.npy > %t.ckpt
// RUN: diff %t.plain %t.ckpt
// RUN: not tapeflow-cc %s -D SCHEDULE 2>&1 | filecheck %s --check-prefix=SCHEDULE
// RUN: not tapeflow-cc %s -D ARITY 2>&1 | filecheck %s --check-prefix=ARITY
// RUN: not tapeflow-cc %s -D LATE_MARKER 2>&1 | filecheck %s --check-prefix=LATE
// RUN: not tapeflow-cc %s -D ADDRESS 2>&1 | filecheck %s --check-prefix=ADDRESS
// RUN: not tapeflow-cc %s -D DUP_CONFIG 2>&1 | filecheck %s --check-prefix=DUPCONFIG
// RUN: not tapeflow-cc %s -D VOID_STEP 2>&1 | filecheck %s --check-prefix=VOID
// RUN: not tapeflow-cc %s -D FP_MARKER 2>&1 | filecheck %s --check-prefix=FPMARKER
#include <enzyme/checkpoint.h>
#include <enzyme/fixed_point.h>
#include <math.h>

extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);

static void step(int64_t i, double *u) {
  for (int k = 0; k < 2; k++)
    u[k] = u[k] + 0.1 * sin(u[1 - k] + 0.01 * (double)i);
}

static int grow(int64_t i, double *u, double *limit) {
  step(i, u);
  return u[0] < *limit;
}

double plain(double *u, long n) {
  for (int64_t i = 2; i < 2 + n; i++)
    step(i, u);
  return u[0] * u[1];
}

double ckpt(double *u, long n, EnzymeCkptConfig *config) {
  __enzyme_checkpoint_for((void *)step, 2, n, enzyme_scheme, &EnzymeCkptRevolve, config,
                          enzyme_checkpoint_region, u, (int64_t)(2 * sizeof(double)), u);
  return u[0] * u[1];
}

double ckpt_while(double *u, double *limit) {
  __enzyme_checkpoint_while((void *)grow, enzyme_scheme, &EnzymeCkptStoreAll, (void *)0, u,
                            limit);
  return u[0] * u[1];
}

/* Tapenade's control protocol: Enzyme's runtime calls it, the function never does, so it
   is not translated (`*cumul` would be refused). */
static int control(double *cumul, double *reduction) { return *cumul < 0; }

double fixed(double *u, double *limit) {
  __enzyme_fixed_point((void *)grow, enzyme_fp_state, u, (int64_t)(2 * sizeof(double)),
                       enzyme_fp_reduction, 1e-30, enzyme_fp_control, control, u, limit);
  return u[0] * u[1];
}

double marked(double *u, long n) {
  for (long i = 0; i < n; i++) {
    __enzyme_set_fixed_point(1e-30, (int64_t)-1, (void *)0, u, (int64_t)sizeof(double));
    step(i, u);
  }
  return u[0];
}

/* Enzyme's loop annotation: a schedule, never a gradient. */
double annotated(double *u, long n) {
  [[enzyme_checkpointing_enable("binomial", 2)]] for (long i = 0; i < n; i++) step(i, u);
  return u[0];
}

#ifdef SCHEDULE
double bad(double *u, long n) {
  for (long i = 0; i < enzyme_ckpt_isqrt(n); i++)
    step(i, u);
  return u[0];
}
#endif
#ifdef ARITY
double bad(double *u, long n) {
  __enzyme_checkpoint_for((void *)step, 0, n, u, u);
  return u[0];
}
#endif
#ifdef LATE_MARKER
double bad(double *u, long n) {
  __enzyme_checkpoint_for((void *)step, 0, n, u, enzyme_checkpoint_region, u, 16);
  return u[0];
}
#endif
#ifdef ADDRESS
static void scalar_step(int64_t i, double *s) { *s = *s * 0.5; }
double bad(double x, long n) {
  __enzyme_checkpoint_for((void *)scalar_step, 0, n, &x);
  return x;
}
#endif
#ifdef VOID_STEP
double bad(double *u, long n) {
  __enzyme_checkpoint_while((void *)step, u);
  return u[0];
}
#endif
#ifdef FP_MARKER
double bad(double *u, long n) {
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_fp_reduction, 1e-3, u);
  return u[0];
}
#endif

void gradients(double *u, double *du, long n, double *limit, EnzymeCkptConfig *c) {
  __enzyme_autodiff((void *)plain, enzyme_dup, u, du, enzyme_const, n);
#ifdef DUP_CONFIG
  __enzyme_autodiff((void *)ckpt, enzyme_dup, u, du, enzyme_const, n, c);
#else
  __enzyme_autodiff((void *)ckpt, enzyme_dup, u, du, enzyme_const, n, enzyme_const, c);
#endif
  __enzyme_autodiff((void *)ckpt_while, enzyme_dup, u, du, enzyme_const, limit);
  __enzyme_autodiff((void *)fixed, enzyme_dup, u, du, enzyme_const, limit);
  __enzyme_autodiff((void *)marked, enzyme_dup, u, du, enzyme_const, n);
  __enzyme_autodiff((void *)annotated, enzyme_dup, u, du, enzyme_const, n);
#if defined(SCHEDULE) || defined(ARITY) || defined(VOID_STEP) || defined(LATE_MARKER) || defined(FP_MARKER)
  __enzyme_autodiff((void *)bad, enzyme_dup, u, du, enzyme_const, n);
#endif
#ifdef ADDRESS
  __enzyme_autodiff((void *)bad, 1.0, n);
#endif
}

// CHECK:      func.func @step(
// CHECK:      func.func @grow(
// CHECK:      func.func @plain(
// The configuration is no argument; the markers and their operands are not translated.
// CHECK:      func.func @ckpt(%u: memref<?xf64> {{.*}}, %n: index {{.*}}) -> f64 attributes {tapeflow.autodiff} {
// CHECK:        %[[END:.*]] = arith.addi %n, %[[START:.*]] : index
// CHECK-NEXT:   scf.for %i = %[[START]] to %[[END]] step %{{.*}} {
// CHECK-NEXT:     func.call @step(%i, %u) : (index, memref<?xf64>) -> ()
// CHECK-NEXT:   }
// CHECK-NOT:    EnzymeCkpt
// CHECK:      func.func @ckpt_while(%u: memref<?xf64> {{.*}}, %limit: memref<?xf64> {{.*}}) -> f64 {
// CHECK:        %{{.*}} = scf.while (%i = %[[ZERO:.*]]) : (index) -> index {
// CHECK-NEXT:     %[[MORE:.*]] = func.call @grow(%i, %u, %limit)
// CHECK-NEXT:     %[[GO:.*]] = arith.cmpi ne, %[[MORE]], %[[ZERO]] : index
// CHECK-NEXT:     %[[NEXT:.*]] = arith.addi %i, %{{.*}} : index
// CHECK-NEXT:     scf.condition(%[[GO]]) %[[NEXT]] : index
// CHECK-NOT:  func.func @control
// CHECK:      func.func @fixed(
// CHECK:          scf.while
// CHECK:            func.call @grow(
// CHECK:      func.func @marked(
// CHECK:        scf.for
// CHECK-NEXT:     func.call @step(
// CHECK-NEXT:   }
// CHECK:      func.func @annotated(
// CHECK:        scf.for
// CHECK-NEXT:     func.call @step(

// The annotation's remark comes first: attributes are read when the file is parsed.
// REMARK: remark: {{.*}}enzyme-checkpoint.c:{{[0-9]+}}:5: the checkpointing annotation 'enzyme_checkpointing_enable' is not used: TapeFlow streams the tape of every step of the loop
// REMARK: remark: {{.*}}enzyme-checkpoint.c:{{[0-9]+}}:3: __enzyme_checkpoint_for: the loop of 'step' is differentiated as written (its scheme and snapshot regions are not used): TapeFlow streams the tape of every step
// REMARK: remark: {{.*}}:3: __enzyme_checkpoint_while: the loop of 'grow' is differentiated as written
// REMARK: remark: {{.*}}:3: __enzyme_fixed_point: the loop of 'grow' is differentiated through every iteration
// REMARK: remark: {{.*}}:5: __enzyme_set_fixed_point: the loop around it is differentiated through every iteration

// SCHEDULE:  error: {{.*}}enzyme-checkpoint.c:{{[0-9]+}}:24: unsupported C: 'enzyme_ckpt_isqrt' of <enzyme/checkpoint_schedule.h> (TapeFlow runs no checkpointing schedule: a driver may call it, translated code not)
// ARITY:     error: {{.*}}enzyme-checkpoint.c:{{[0-9]+}}:3: __enzyme_checkpoint_for: 'step' has 2 parameters, the call gives it 3 (the step number and 2 arguments)
// ARITY-NOT: Traceback
// LATE:      error: {{.*}}enzyme-checkpoint.c:{{[0-9]+}}:50: unsupported C: 'enzyme_checkpoint_region' after the step's arguments in __enzyme_checkpoint_for (the markers come first)
// ADDRESS:   error: {{.*}}enzyme-checkpoint.c:{{[0-9]+}}:54: unsupported C: '&x' as a step argument of __enzyme_checkpoint_for (the step may write it)
// DUPCONFIG: error: {{.*}}enzyme-checkpoint.c:{{[0-9]+}}:71: __enzyme_autodiff: argument 'config' of 'ckpt' is a checkpointing scheme's object: it is enzyme_const
// VOID:      error: {{.*}}enzyme-checkpoint.c:{{[0-9]+}}:3: __enzyme_checkpoint_while: the step function 'step' returns nothing (it returns whether to go on)
// FPMARKER:  error: {{.*}}enzyme-checkpoint.c:{{[0-9]+}}:47: unsupported C: the Enzyme marker 'enzyme_fp_reduction' in __enzyme_checkpoint_for
